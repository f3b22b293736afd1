/* hgr._hgr — the C extension's internal header, included by every file of it.
 *
 * The extension is a thin layer over the C API (include/hgr/): each file owns one
 * part of the Python API and adds it to the module with hgrpy_add_<part>(module),
 * called once from module.c. This header declares what the parts share:
 *   - errors: hgrpy_raise turns an hgr_status_t into the matching hgr.Error
 *     subclass (errors.c);
 *   - the process's one hgr_instance_t, created lazily (instance.c);
 *   - dtypes between hgr and NumPy / buffer-protocol format strings, input views
 *     over any C-contiguous buffer, and new NumPy output arrays (data.c);
 *   - the Graph, Params, Executor, Fence and DeviceBuffer objects (graph.c,
 *     params_type.c, executor.c, fence.c, device_buffer.c).
 *
 * Threads: every call into hgr that may wait or run (creating an executor, runs,
 * waits, output reads) releases the GIL. An executor is thread-compatible in C, so
 * each Executor object has a lock that every call on it or on its fences takes
 * (hgrpy_executor_lock) — taken with the GIL released, so a thread waiting for it
 * does not block the others. */
#ifndef HGRPY_H_
#define HGRPY_H_

#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <pythread.h>

#include <stdbool.h>
#include <stdint.h>

#include "hgr/hgr.h"
#include "hgr/opencl.h"

/* Casts a METH_VARARGS | METH_KEYWORDS function for a PyMethodDef. */
#define HGRPY_KW(fn) ((PyCFunction)(void (*)(void))(fn))

/* ---- module parts (module.c calls each once; 0 on success, -1 with an exception) ---- */
int hgrpy_add_errors(PyObject* module);
int hgrpy_add_instance(PyObject* module);
int hgrpy_add_data(PyObject* module);
int hgrpy_add_graph(PyObject* module);
int hgrpy_add_params_type(PyObject* module);
int hgrpy_add_executor(PyObject* module);
int hgrpy_add_fence(PyObject* module);
int hgrpy_add_device_buffer(PyObject* module);
int hgrpy_add_onnx(PyObject* module);
int hgrpy_add_params(PyObject* module);
int hgrpy_add_builder(PyObject* module);
int hgrpy_add_place(PyObject* module);
int hgrpy_add_model(PyObject* module);

/* ---- errors (errors.c) ---- */

/* Sets the hgr.Error subclass matching status's code (hgr.InvalidArgumentError for
 * HGR_STATUS_INVALID_ARGUMENT, ...) with the status's whole text (code name,
 * message, joined follow-ups) and its code as the exception's `code` attribute;
 * frees status; returns NULL so that `return hgrpy_raise(status);` reads well.
 * status must not be HGR_OK. */
PyObject* hgrpy_raise(hgr_status_t status);
/* Raises the class for code with a formatted message (for errors the extension
 * finds itself, such as a wrong dtype in a feed). Returns NULL. */
PyObject* hgrpy_raise_code(hgr_status_code_t code, const char* format, ...);
/* The exception class of a code (borrowed), hgr.Error for an unknown one. */
PyObject* hgrpy_error_class(hgr_status_code_t code);

/* ---- report dicts (strings.c) ---- */

/* Adds report's per-pattern counts (hgr_passes_report_counts) to dict as
 * key -> nodes made ("layer_norms": 2, "gelus": 1, ...) and returns dict; NULL
 * (dict released, an exception set) when dict is NULL or an item fails. */
PyObject* hgrpy_add_pass_counts(PyObject* dict, const hgr_passes_report_t* report);

/* ---- the instance (instance.c) ---- */

/* The process's instance (borrowed; it lives until the process ends), created on
 * first use with the GIL released and a lock held, so that concurrent first calls
 * create one. NULL with an hgr.Error set when creation fails. */
hgr_instance_t* hgrpy_instance(void);

/* ---- dtypes and data (data.c) ---- */

/* The NumPy dtype string of an hgr dtype ("float32", "int64", "bool", ...) into
 * buffer (capacity >= 24). -1 with hgr.UnimplementedError for a dtype NumPy has no
 * type for (bfloat16, vectors, sub-byte ints other than bool). */
int hgrpy_dtype_to_numpy(hgr_dtype_t dtype, char* buffer, size_t capacity);
/* The hgr dtype of a buffer-protocol format string ("f", "<f4", "q", "?", ...)
 * and item size. -1 with hgr.InvalidArgumentError naming format otherwise. */
int hgrpy_dtype_from_format(const char* format, Py_ssize_t itemsize, hgr_dtype_t* out_dtype);

/* A read view of a C-contiguous object for an input: the buffer-protocol view
 * (numpy arrays, bytes, memoryview, array.array, ...), or for an object that only
 * has __dlpack__, numpy.from_dlpack's array (zero copy on the CPU). */
typedef struct hgrpy_input_view_t {
  PyObject* owner;         /* a memoryview holding the buffer export (or NULL) */
  const void* data;
  size_t bytes;
  hgr_dtype_t dtype;
  int32_t ndim;
  int64_t shape[HGR_MAX_DIMS];
} hgrpy_input_view_t;
/* Fills *out_view from object: its buffer (numpy arrays, bytes, memoryview,
 * array.array, ...) or, for an object with only __dlpack__, numpy.from_dlpack's
 * array (zero copy on the CPU). writable asks for a writable buffer (outputs).
 * out_view->owner keeps the export alive: keep a reference to it as long as the
 * data is used. A non-contiguous or read-only (when writable) buffer is
 * hgr.InvalidArgumentError naming `what` (e.g. "input 'x'"). -1 with an exception
 * on failure, nothing to release. */
int hgrpy_input_view_get(PyObject* object, const char* what, bool writable, hgrpy_input_view_t* out_view);
void hgrpy_input_view_release(hgrpy_input_view_t* view);

/* A new NumPy array of dtype and shape, uninitialised, whose data address is a
 * multiple of alignment bytes (a power of two; 0 or 1 for NumPy's own). *out_data
 * receives that address. New reference, or NULL with an exception. */
PyObject* hgrpy_array_empty(hgr_dtype_t dtype, int32_t ndim, const int64_t* shape, size_t alignment,
                            void** out_data);
/* A NumPy array over owner's writable buffer (owner must expose bytes exactly:
 * dtype x shape), which the array keeps alive through its base. New reference. */
PyObject* hgrpy_array_from_buffer(PyObject* owner, hgr_dtype_t dtype, int32_t ndim, const int64_t* shape);
/* A shape as a Python list of ints. New reference. */
PyObject* hgrpy_shape_list(int32_t ndim, const int64_t* shape);
/* object (None, one str, or a sequence of str) as a calloc'd, NULL-terminated array
 * of C strings (free it) borrowing the UTF-8 of *out_list, a new list of the items,
 * so that they outlive a change to the caller's sequence while the GIL is released
 * (release it after use). None gives no list, no array and a count of 0. On error
 * (a non-str item: InvalidArgumentError naming what and the item) -1 with nothing
 * to free. */
int hgrpy_string_list(PyObject* object, const char* what, PyObject** out_list, const char*** out_strings,
                      size_t* out_count);

/* Placement options (include/hgr/place.h) for device specs in priority order (none:
 * the default device) and rules and policies in `hgr run --place` syntax; the
 * options borrow specs. The status of the first rule that does not parse. */
hgr_status_t hgrpy_place_options(hgr_place_options_t* options, const char* const* specs, size_t device_count,
                                 const char* const* rule_texts, size_t rule_count);

/* A tensor info as a dict {name, dtype (hgr's string), shape (list), bytes}. New reference. */
PyObject* hgrpy_tensor_info_dict(const hgr_tensor_info_t* info);

/* ---- Graph (graph.c): an immutable hgr_graph_t ---- */
typedef struct hgrpy_graph_t {
  PyObject_HEAD
  hgr_graph_t* graph; /* owned (one reference) */
} hgrpy_graph_t;
extern PyTypeObject hgrpy_graph_type;
/* Wraps graph, taking over the caller's reference (released on failure too). New
 * reference, or NULL with an exception. */
PyObject* hgrpy_graph_wrap(hgr_graph_t* graph);

/* ---- Params (params_type.c): an hgr_params_t (TVM params, by name) ---- */
typedef struct hgrpy_params_t {
  PyObject_HEAD
  hgr_params_t* params; /* owned */
} hgrpy_params_t;
extern PyTypeObject hgrpy_params_type;
/* Wraps params, taking it over (released on failure too). New reference. */
PyObject* hgrpy_params_wrap(hgr_params_t* params);

/* ---- Executor (executor.c): an hgr_executor_t on the process's instance ---- */
typedef struct hgrpy_executor_t {
  PyObject_HEAD
  hgr_executor_t* executor; /* owned (or its specialization's); NULL once closed */
  hgr_specialization_t* specialization; /* held, when the executor is a model's (hgr/model.h) */
  PyObject* graph;          /* the Graph it was created from */
  PyObject* bound;          /* per input then output: what is bound (a memoryview) or None */
  PyObject* staging;        /* per output: run_feed's array that small outputs are read into, or None */
  PyThread_type_lock lock;  /* taken by every call on the executor and its fences */
  bool profiling;
  PyObject* weakrefs;
} hgrpy_executor_t;
extern PyTypeObject hgrpy_executor_type;
/* Options for hgrpy_executor_create beyond the graph: all optional. */
typedef struct hgrpy_executor_options_t {
  const hgr_params_t* params;          /* loaded at creation; borrowed */
  const hgr_device_binding_t* bindings; /* device key -> spec; borrowed */
  size_t binding_count;
  bool profiling;
} hgrpy_executor_options_t;
/* Creates an Executor for graph (a Graph object) with the GIL released. New
 * reference, or NULL with an hgr.Error. */
PyObject* hgrpy_executor_create(PyObject* graph, const hgrpy_executor_options_t* options);
/* An Executor over a model's specialization (its reference taken over, released on
 * failure too): closing it unbinds what it bound and gives the specialization back.
 * New reference, or NULL with an exception. */
PyObject* hgrpy_executor_wrap_specialization(hgr_specialization_t* specialization, bool profiling);
/* The executor of an Executor object that is still open; NULL with
 * hgr.FailedPreconditionError ("closed") otherwise. Borrowed. */
hgr_executor_t* hgrpy_executor_get(hgrpy_executor_t* self);
/* Takes and gives back self's lock; lock releases the GIL while it waits. */
void hgrpy_executor_lock(hgrpy_executor_t* self);
void hgrpy_executor_unlock(hgrpy_executor_t* self);

/* ---- Fence (fence.c): one run in flight ---- */
/* Wraps fence (taken over) of executor, keeping `keep` (a tuple of objects the
 * run reads or writes, e.g. bound inputs and output arrays; may be NULL) alive
 * until the run is waited for or the Fence dies. New reference. */
PyObject* hgrpy_fence_wrap(hgrpy_executor_t* executor, hgr_fence_t* fence, PyObject* keep);

/* ---- DeviceBuffer (device_buffer.c): an output as an OpenCL buffer ---- */
/* Wraps buffer (its mem and event taken over). New reference. */
PyObject* hgrpy_device_buffer_wrap(hgr_device_buffer_t* buffer);
/* The buffer of a DeviceBuffer object (borrowed: valid while object lives and is
 * not released); NULL with hgr.InvalidArgumentError for another object, or
 * hgr.FailedPreconditionError for a released one. */
const hgr_device_buffer_t* hgrpy_device_buffer_get(PyObject* object);
extern PyTypeObject hgrpy_device_buffer_type;

#endif /* HGRPY_H_ */
