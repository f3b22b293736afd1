/* hgr._hgr.Executor: an hgr_executor_t (a graph bound to devices) and its runs.
 * The Python sessions (hgr.InferenceSession, hgr.graph_executor.GraphModule) are
 * thin classes over it. Inputs and outputs can be copied (set_input, get_output)
 * or bound to the caller's buffers (bind_input, bind_output: zero copy where the
 * device shares host memory, executor.h "caller-owned memory"); the Executor keeps
 * what is bound alive, and each Fence keeps what its run was started with. */
#include "hgrpy.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* What a call finds once it holds the lock and another thread closed the executor. */
#define CLOSED HGR_STATUS(HGR_STATUS_FAILED_PRECONDITION, "the executor was closed")

void hgrpy_executor_lock(hgrpy_executor_t* self) {
  if (PyThread_acquire_lock(self->lock, NOWAIT_LOCK)) return;
  Py_BEGIN_ALLOW_THREADS;
  PyThread_acquire_lock(self->lock, WAIT_LOCK);
  Py_END_ALLOW_THREADS;
}

void hgrpy_executor_unlock(hgrpy_executor_t* self) {
  PyThread_release_lock(self->lock);
}

hgr_executor_t* hgrpy_executor_get(hgrpy_executor_t* self) {
  if (!self->executor)
    return (hgr_executor_t*)hgrpy_raise_code(HGR_STATUS_FAILED_PRECONDITION, "the executor was closed");
  return self->executor;
}

static hgrpy_executor_t* executor_alloc(PyObject* graph) {
  hgrpy_executor_t* self = (hgrpy_executor_t*)hgrpy_executor_type.tp_alloc(&hgrpy_executor_type, 0);
  if (!self) return NULL;
  self->lock = PyThread_allocate_lock();
  if (!self->lock) {
    Py_DECREF(self);
    return (hgrpy_executor_t*)PyErr_NoMemory();
  }
  Py_INCREF(graph);
  self->graph = graph;
  return self;
}

/* self with executor (owned, or the specialization's) and a bound list of None. */
static PyObject* executor_adopt(hgrpy_executor_t* self, hgr_executor_t* executor, bool profiling) {
  self->executor = executor;
  self->profiling = profiling;
  size_t slots = hgr_executor_input_count(executor) + hgr_executor_output_count(executor);
  self->bound = PyList_New((Py_ssize_t)slots);
  if (!self->bound) {
    Py_DECREF(self);
    return NULL;
  }
  for (size_t i = 0; i < slots; ++i) {
    Py_INCREF(Py_None);
    PyList_SET_ITEM(self->bound, (Py_ssize_t)i, Py_None);
  }
  return (PyObject*)self;
}

PyObject* hgrpy_executor_create(PyObject* graph, const hgrpy_executor_options_t* options) {
  if (!PyObject_TypeCheck(graph, &hgrpy_graph_type))
    return hgrpy_raise_code(HGR_STATUS_INVALID_ARGUMENT, "graph must be an hgr Graph, not %s", Py_TYPE(graph)->tp_name);
  hgr_instance_t* instance = hgrpy_instance();
  if (!instance) return NULL;
  hgrpy_executor_t* self = executor_alloc(graph);
  if (!self) return NULL;
  hgr_executor_options_t executor_options;
  hgr_executor_options_init(&executor_options);
  executor_options.params = options->params;
  executor_options.bindings = options->bindings;
  executor_options.binding_count = options->binding_count;
  executor_options.profiling = options->profiling;
  hgr_graph_t* hgr_graph = ((hgrpy_graph_t*)graph)->graph;
  hgr_executor_t* executor = NULL;
  hgr_status_t status = HGR_OK;
  Py_BEGIN_ALLOW_THREADS;
  status = hgr_executor_create(instance, hgr_graph, &executor_options, &executor);
  Py_END_ALLOW_THREADS;
  if (status) {
    Py_DECREF(self);
    return hgrpy_raise(status);
  }
  return executor_adopt(self, executor, options->profiling);
}

PyObject* hgrpy_executor_wrap_specialization(hgr_specialization_t* specialization, bool profiling) {
  hgr_executor_t* executor = hgr_specialization_executor(specialization);
  PyObject* graph = hgrpy_graph_wrap(hgr_graph_retain(hgr_executor_graph(executor)));
  hgrpy_executor_t* self = graph ? executor_alloc(graph) : NULL;
  Py_XDECREF(graph);
  if (!self) {
    hgr_specialization_release(specialization);
    return NULL;
  }
  self->specialization = specialization;
  return executor_adopt(self, executor, profiling);
}

/* Executor(graph, params=None, devices=None, profiling=False) */
static PyObject* executor_new(PyTypeObject* type, PyObject* args, PyObject* kwargs) {
  (void)type;
  static char* keywords[] = {"graph", "params", "devices", "profiling", NULL};
  PyObject *graph = NULL, *params = Py_None, *devices = Py_None;
  int profiling = 0;
  if (!PyArg_ParseTupleAndKeywords(args, kwargs, "O!|OOp", keywords, &hgrpy_graph_type, &graph, &params, &devices,
                                   &profiling))
    return NULL;
  hgrpy_executor_options_t options = {.profiling = profiling != 0};
  if (params != Py_None) {
    if (!PyObject_TypeCheck(params, &hgrpy_params_type))
      return hgrpy_raise_code(HGR_STATUS_INVALID_ARGUMENT, "params must be an hgr Params or None, not %s",
                              Py_TYPE(params)->tp_name);
    options.params = ((hgrpy_params_t*)params)->params;
  }
  hgr_device_binding_t* bindings = NULL;
  PyObject* items = NULL;
  if (devices != Py_None) {
    if (!PyDict_Check(devices))
      return hgrpy_raise_code(HGR_STATUS_INVALID_ARGUMENT,
                              "devices must be a dict of device key (int) -> device spec (str), not %s",
                              Py_TYPE(devices)->tp_name);
    items = PyDict_Items(devices);
    if (!items) return NULL;
    Py_ssize_t count = PyList_GET_SIZE(items);
    bindings = calloc((size_t)count + 1, sizeof(*bindings));
    if (!bindings) {
      Py_DECREF(items);
      return PyErr_NoMemory();
    }
    for (Py_ssize_t i = 0; i < count; ++i) {
      PyObject* item = PyList_GET_ITEM(items, i);
      PyObject *key = PyTuple_GET_ITEM(item, 0), *spec = PyTuple_GET_ITEM(item, 1);
      bindings[i].key = (int32_t)PyLong_AsLong(key);
      bindings[i].spec = PyUnicode_Check(spec) ? PyUnicode_AsUTF8(spec) : NULL;
      if ((bindings[i].key == -1 && PyErr_Occurred()) || !bindings[i].spec) {
        PyErr_Clear();
        free(bindings);
        Py_DECREF(items);
        return hgrpy_raise_code(HGR_STATUS_INVALID_ARGUMENT,
                                "devices: entry %zd is not device key (int) -> device spec (str)", i);
      }
    }
    options.bindings = bindings;
    options.binding_count = (size_t)count;
  }
  PyObject* result = hgrpy_executor_create(graph, &options);
  free(bindings);
  Py_XDECREF(items);
  return result;
}

/* A specialization's executor stays with its model: what this object bound is
 * unbound, after the runs in flight, before its buffers go. */
static void executor_give_back(hgrpy_executor_t* self, hgr_executor_t* executor) {
  size_t inputs = hgr_executor_input_count(executor);
  bool bound = false;
  for (Py_ssize_t slot = 0; self->bound && slot < PyList_GET_SIZE(self->bound); ++slot)
    bound = bound || PyList_GET_ITEM(self->bound, slot) != Py_None;
  if (bound) { /* runs in flight may read or write what this object bound */
    Py_BEGIN_ALLOW_THREADS;
    hgr_status_free(hgr_executor_wait(executor));
    Py_END_ALLOW_THREADS;
  }
  for (Py_ssize_t slot = 0; bound && slot < PyList_GET_SIZE(self->bound); ++slot) {
    if (PyList_GET_ITEM(self->bound, slot) == Py_None) continue;
    bool input = (size_t)slot < inputs;
    hgr_status_free(hgr_executor_unbind(executor, input ? HGR_INPUT : HGR_OUTPUT,
                                        input ? (size_t)slot : (size_t)slot - inputs));
  }
  hgr_specialization_release(self->specialization);
  self->specialization = NULL;
}

static void executor_close_now(hgrpy_executor_t* self) {
  hgr_executor_t* executor = self->executor;
  self->executor = NULL;
  if (executor && self->specialization) {
    executor_give_back(self, executor);
  } else if (executor) {
    Py_BEGIN_ALLOW_THREADS;
    hgr_executor_release(executor); /* waits for the runs in flight */
    Py_END_ALLOW_THREADS;
  }
  Py_CLEAR(self->bound);
  Py_CLEAR(self->staging);
}

static void executor_dealloc(hgrpy_executor_t* self) {
  PyObject_GC_UnTrack(self);
  if (self->weakrefs) PyObject_ClearWeakRefs((PyObject*)self);
  executor_close_now(self);
  Py_CLEAR(self->graph);
  if (self->lock) PyThread_free_lock(self->lock);
  Py_TYPE(self)->tp_free((PyObject*)self);
}

static int executor_traverse(hgrpy_executor_t* self, visitproc visit, void* arg) {
  Py_VISIT(self->graph);
  Py_VISIT(self->bound);
  Py_VISIT(self->staging);
  return 0;
}

static int executor_clear(hgrpy_executor_t* self) {
  Py_CLEAR(self->bound);
  Py_CLEAR(self->staging);
  return 0;
}

static PyObject* executor_close(hgrpy_executor_t* self, PyObject* unused) {
  (void)unused;
  hgrpy_executor_lock(self);
  executor_close_now(self);
  hgrpy_executor_unlock(self);
  Py_RETURN_NONE;
}

static PyObject* executor_enter(PyObject* self, PyObject* unused) {
  (void)unused;
  Py_INCREF(self);
  return self;
}

static PyObject* executor_exit(hgrpy_executor_t* self, PyObject* args) {
  (void)args;
  return executor_close(self, NULL);
}

/* An input or output position from an int or, for inputs, a name. */
static int io_index(hgrpy_executor_t* self, hgr_io_t io, PyObject* key, size_t* out_index) {
  hgr_executor_t* executor = hgrpy_executor_get(self);
  if (!executor) return -1;
  size_t count = io == HGR_INPUT ? hgr_executor_input_count(executor) : hgr_executor_output_count(executor);
  const char* what = io == HGR_INPUT ? "input" : "output";
  if (PyUnicode_Check(key)) {
    const char* name = PyUnicode_AsUTF8(key);
    if (!name) return -1;
    for (size_t i = 0; i < count; ++i) {
      hgr_tensor_info_t info;
      hgr_status_t status = io == HGR_INPUT ? hgr_executor_input_info(executor, i, &info)
                                            : hgr_executor_output_info(executor, i, &info);
      if (status) return hgrpy_raise(status), -1;
      if (info.name && strcmp(info.name, name) == 0) {
        *out_index = i;
        return 0;
      }
    }
    if (io == HGR_INPUT) { /* the C API's message lists the inputs */
      hgr_status_t status = hgr_executor_input_index(executor, name, out_index);
      if (status) return hgrpy_raise(status), -1;
      return 0;
    }
    hgrpy_raise_code(HGR_STATUS_NOT_FOUND, "the graph has no output '%s'", name);
    return -1;
  }
  Py_ssize_t index = PyNumber_AsSsize_t(key, PyExc_OverflowError);
  if (index == -1 && PyErr_Occurred()) return -1;
  if (index < 0 || (size_t)index >= count) {
    hgrpy_raise_code(HGR_STATUS_OUT_OF_RANGE, "%s %zd: the graph has %zu %ss", what, index, count, what);
    return -1;
  }
  *out_index = (size_t)index;
  return 0;
}

static int parse_io(const char* text, hgr_io_t* out_io) {
  if (strcmp(text, "input") == 0) *out_io = HGR_INPUT;
  else if (strcmp(text, "output") == 0) *out_io = HGR_OUTPUT;
  else return hgrpy_raise_code(HGR_STATUS_INVALID_ARGUMENT, "'%s' is neither 'input' nor 'output'", text), -1;
  return 0;
}

static PyObject* info_of(hgrpy_executor_t* self, hgr_io_t io, PyObject* key) {
  size_t index = 0;
  if (io_index(self, io, key, &index) < 0) return NULL;
  hgr_tensor_info_t info;
  hgr_status_t status = io == HGR_INPUT ? hgr_executor_input_info(self->executor, index, &info)
                                        : hgr_executor_output_info(self->executor, index, &info);
  if (status) return hgrpy_raise(status);
  return hgrpy_tensor_info_dict(&info);
}

static PyObject* executor_input_info(hgrpy_executor_t* self, PyObject* key) {
  return info_of(self, HGR_INPUT, key);
}

static PyObject* executor_output_info(hgrpy_executor_t* self, PyObject* key) {
  return info_of(self, HGR_OUTPUT, key);
}

static PyObject* executor_input_index(hgrpy_executor_t* self, PyObject* key) {
  size_t index = 0;
  if (io_index(self, HGR_INPUT, key, &index) < 0) return NULL;
  return PyLong_FromSize_t(index);
}

/* Checks that view matches tensor info (dtype, then bytes and shape), naming the input. */
static int check_view(const hgr_tensor_info_t* info, const char* what, const hgrpy_input_view_t* view) {
  char want[24], got[24];
  if (!hgr_dtype_equal(info->dtype, view->dtype)) {
    hgrpy_raise_code(HGR_STATUS_INVALID_ARGUMENT, "%s '%s' is %s; %s was given", what, info->name,
                     hgr_dtype_format(info->dtype, want, sizeof(want)), hgr_dtype_format(view->dtype, got, sizeof(got)));
    return -1;
  }
  bool same_shape = view->ndim == info->ndim;
  for (int32_t d = 0; same_shape && d < info->ndim; ++d) same_shape = view->shape[d] == info->shape[d];
  if (!same_shape && view->bytes != info->bytes) {
    char want_shape[256] = "", got_shape[256] = "";
    size_t n = 0;
    for (int32_t d = 0; d < info->ndim && n < sizeof(want_shape); ++d)
      n += (size_t)snprintf(want_shape + n, sizeof(want_shape) - n, "%s%lld", d ? ", " : "", (long long)info->shape[d]);
    n = 0;
    for (int32_t d = 0; d < view->ndim && n < sizeof(got_shape); ++d)
      n += (size_t)snprintf(got_shape + n, sizeof(got_shape) - n, "%s%lld", d ? ", " : "", (long long)view->shape[d]);
    hgrpy_raise_code(HGR_STATUS_INVALID_ARGUMENT, "%s '%s' has shape (%s); shape (%s) was given", what, info->name,
                     want_shape, got_shape);
    return -1;
  }
  return 0;
}

/* set_input(key, value): copies value into input key (an index or a name). */
static PyObject* executor_set_input(hgrpy_executor_t* self, PyObject* args) {
  PyObject *key = NULL, *value = NULL;
  if (!PyArg_ParseTuple(args, "OO", &key, &value)) return NULL;
  size_t index = 0;
  if (io_index(self, HGR_INPUT, key, &index) < 0) return NULL;
  hgr_tensor_info_t info;
  hgr_status_t status = hgr_executor_input_info(self->executor, index, &info);
  if (status) return hgrpy_raise(status);
  hgrpy_input_view_t view;
  if (hgrpy_input_view_get(value, info.name, false, &view) < 0) return NULL;
  if (check_view(&info, "input", &view) < 0) {
    hgrpy_input_view_release(&view);
    return NULL;
  }
  hgrpy_executor_lock(self);
  if (!self->executor) status = CLOSED;
  else {
    Py_BEGIN_ALLOW_THREADS;
    status = hgr_executor_set_input(self->executor, index, view.data, view.bytes);
    Py_END_ALLOW_THREADS;
  }
  hgrpy_executor_unlock(self);
  hgrpy_input_view_release(&view);
  if (status) return hgrpy_raise(status);
  Py_RETURN_NONE;
}

static const char* kind_name(hgr_binding_kind_t kind) {
  switch (kind) {
    case HGR_BINDING_NONE: return "none";
    case HGR_BINDING_BUFFER: return "buffer";
    case HGR_BINDING_HOST_ZERO_COPY: return "host_zero_copy";
    case HGR_BINDING_HOST_COPY: return "host_copy";
    case HGR_BINDING_DEVICE_COPY: return "device_copy";
    case HGR_BINDING_STAGED_COPY: return "staged_copy";
  }
  return "none";
}

/* Binds value's memory to input or output index; the binding's kind, or -1 with an
 * exception. */
static int bind_index(hgrpy_executor_t* self, hgr_io_t io, size_t index, PyObject* value,
                      hgr_binding_kind_t* out_kind) {
  hgr_tensor_info_t info;
  hgr_status_t status = io == HGR_INPUT ? hgr_executor_input_info(self->executor, index, &info)
                                        : hgr_executor_output_info(self->executor, index, &info);
  if (status) {
    hgrpy_raise(status);
    return -1;
  }
  const char* what = io == HGR_INPUT ? "input" : "output";
  hgrpy_input_view_t view;
  if (hgrpy_input_view_get(value, info.name, io == HGR_OUTPUT, &view) < 0) return -1;
  if (check_view(&info, what, &view) < 0) {
    hgrpy_input_view_release(&view);
    return -1;
  }
  *out_kind = HGR_BINDING_NONE;
  hgrpy_executor_lock(self);
  if (!self->executor) status = CLOSED;
  else {
    status = hgr_executor_bind_host(self->executor, io, index, (void*)view.data, view.bytes);
    if (!status) *out_kind = hgr_executor_binding_kind(self->executor, io, index);
  }
  hgrpy_executor_unlock(self);
  if (status) {
    hgrpy_input_view_release(&view);
    hgrpy_raise(status);
    return -1;
  }
  size_t slot = io == HGR_INPUT ? index : hgr_executor_input_count(self->executor) + index;
  PyList_SetItem(self->bound, (Py_ssize_t)slot, view.owner); /* steals the view's reference */
  return 0;
}

/* bind(io, key, value): value's memory becomes the input's or output's. */
static PyObject* bind(hgrpy_executor_t* self, hgr_io_t io, PyObject* key, PyObject* value) {
  size_t index = 0;
  hgr_binding_kind_t kind;
  if (io_index(self, io, key, &index) < 0 || bind_index(self, io, index, value, &kind) < 0) return NULL;
  return PyUnicode_FromString(kind_name(kind));
}

static PyObject* executor_bind_input(hgrpy_executor_t* self, PyObject* args) {
  PyObject *key = NULL, *value = NULL;
  if (!PyArg_ParseTuple(args, "OO", &key, &value)) return NULL;
  return bind(self, HGR_INPUT, key, value);
}

static PyObject* executor_bind_output(hgrpy_executor_t* self, PyObject* args) {
  PyObject *key = NULL, *value = NULL;
  if (!PyArg_ParseTuple(args, "OO", &key, &value)) return NULL;
  return bind(self, HGR_OUTPUT, key, value);
}

/* bind_device_buffer(key, buffer): input key takes a DeviceBuffer's values, the
 * run waiting for its ready event on the device (hgr_executor_bind_device_buffer). */
static PyObject* executor_bind_device_buffer(hgrpy_executor_t* self, PyObject* args) {
  PyObject *key = NULL, *value = NULL;
  if (!PyArg_ParseTuple(args, "OO", &key, &value)) return NULL;
  size_t index = 0;
  if (io_index(self, HGR_INPUT, key, &index) < 0) return NULL;
  const hgr_device_buffer_t* buffer = hgrpy_device_buffer_get(value);
  if (!buffer) return NULL;
  hgr_binding_kind_t kind = HGR_BINDING_NONE;
  hgrpy_executor_lock(self);
  hgr_status_t status = self->executor ? hgr_executor_bind_device_buffer(self->executor, index, buffer) : CLOSED;
  if (!status) kind = hgr_executor_binding_kind(self->executor, HGR_INPUT, index);
  hgrpy_executor_unlock(self);
  if (status) return hgrpy_raise(status);
  Py_INCREF(value);
  PyList_SetItem(self->bound, (Py_ssize_t)index, value); /* steals the new reference */
  return PyUnicode_FromString(kind_name(kind));
}

/* The (io, key) arguments of io_traffic, binding_kind and unbind: "input" or
 * "output", and an index or name. -1 with an exception. */
static int io_args(hgrpy_executor_t* self, PyObject* args, hgr_io_t* out_io, size_t* out_index) {
  const char* io_text = NULL;
  PyObject* key = NULL;
  if (!PyArg_ParseTuple(args, "sO", &io_text, &key) || parse_io(io_text, out_io) < 0 ||
      io_index(self, *out_io, key, out_index) < 0)
    return -1;
  return 0;
}

/* io_traffic(io, key) -> dict: hgr_executor_io_traffic. */
static PyObject* executor_io_traffic(hgrpy_executor_t* self, PyObject* args) {
  hgr_io_t io;
  size_t index = 0;
  if (io_args(self, args, &io, &index) < 0) return NULL;
  hgr_io_traffic_t t;
  hgrpy_executor_lock(self);
  hgr_status_t status = self->executor ? hgr_executor_io_traffic(self->executor, io, index, &t) : CLOSED;
  hgrpy_executor_unlock(self);
  if (status) return hgrpy_raise(status);
  return Py_BuildValue("{s:K,s:K,s:K,s:K,s:K,s:K}", "host_copies", (unsigned long long)t.host_copies, "host_bytes",
                       (unsigned long long)t.host_bytes, "host_maps", (unsigned long long)t.host_maps,
                       "device_copies", (unsigned long long)t.device_copies, "device_buffers",
                       (unsigned long long)t.device_buffers, "device_waits", (unsigned long long)t.device_waits);
}

static PyObject* executor_binding_kind(hgrpy_executor_t* self, PyObject* args) {
  hgr_io_t io;
  size_t index = 0;
  if (io_args(self, args, &io, &index) < 0) return NULL;
  return PyUnicode_FromString(kind_name(hgr_executor_binding_kind(self->executor, io, index)));
}

static PyObject* executor_unbind(hgrpy_executor_t* self, PyObject* args) {
  hgr_io_t io;
  size_t index = 0;
  if (io_args(self, args, &io, &index) < 0) return NULL;
  hgrpy_executor_lock(self);
  hgr_status_t status = self->executor ? hgr_executor_unbind(self->executor, io, index) : CLOSED;
  hgrpy_executor_unlock(self);
  if (status) return hgrpy_raise(status);
  /* Runs in flight keep their buffers through their fences; run() waits. */
  size_t slot = io == HGR_INPUT ? index : hgr_executor_input_count(self->executor) + index;
  Py_INCREF(Py_None);
  PyList_SetItem(self->bound, (Py_ssize_t)slot, Py_None);
  Py_RETURN_NONE;
}

static PyObject* executor_load_params(hgrpy_executor_t* self, PyObject* params) {
  if (!PyObject_TypeCheck(params, &hgrpy_params_type))
    return hgrpy_raise_code(HGR_STATUS_INVALID_ARGUMENT, "params must be an hgr Params, not %s",
                            Py_TYPE(params)->tp_name);
  if (!hgrpy_executor_get(self)) return NULL;
  size_t unused_count = 0;
  hgr_status_t status = HGR_OK;
  hgrpy_executor_lock(self);
  if (!self->executor) status = CLOSED;
  else {
    Py_BEGIN_ALLOW_THREADS;
    status = hgr_executor_load_params(self->executor, ((hgrpy_params_t*)params)->params, &unused_count);
    Py_END_ALLOW_THREADS;
  }
  PyObject* unused = status ? NULL : PyList_New((Py_ssize_t)unused_count);
  for (size_t i = 0; unused && i < unused_count; ++i) {
    PyObject* name = PyUnicode_FromString(hgr_executor_unused_param(self->executor, i));
    if (!name) Py_CLEAR(unused);
    else PyList_SET_ITEM(unused, (Py_ssize_t)i, name);
  }
  hgrpy_executor_unlock(self);
  if (status) return hgrpy_raise(status);
  return unused;
}

typedef hgr_status_t (*executor_fn)(hgr_executor_t*);

/* Calls fn on the executor with the lock held and the GIL released. */
static PyObject* call_released(hgrpy_executor_t* self, executor_fn fn) {
  if (!hgrpy_executor_get(self)) return NULL;
  hgr_status_t status = HGR_OK;
  hgrpy_executor_lock(self);
  if (!self->executor) status = CLOSED;
  else {
    Py_BEGIN_ALLOW_THREADS;
    status = fn(self->executor);
    Py_END_ALLOW_THREADS;
  }
  hgrpy_executor_unlock(self);
  if (status) return hgrpy_raise(status);
  Py_RETURN_NONE;
}

static PyObject* executor_run(hgrpy_executor_t* self, PyObject* unused) {
  (void)unused;
  return call_released(self, hgr_executor_run);
}

static PyObject* executor_wait(hgrpy_executor_t* self, PyObject* unused) {
  (void)unused;
  return call_released(self, hgr_executor_wait);
}

/* Output o's staging array (made at the first call, aligned to alignment), bound to
 * the output unless it is already; NULL with an exception. Borrowed. */
static PyObject* bound_staging(hgrpy_executor_t* self, size_t o, const hgr_tensor_info_t* info, size_t alignment) {
  if (!self->staging) {
    size_t count = hgr_executor_output_count(self->executor);
    if (!(self->staging = PyList_New((Py_ssize_t)count))) return NULL;
    for (size_t k = 0; k < count; ++k) {
      Py_INCREF(Py_None);
      PyList_SET_ITEM(self->staging, (Py_ssize_t)k, Py_None);
    }
  }
  PyObject* staging = PyList_GET_ITEM(self->staging, (Py_ssize_t)o);
  if (staging == Py_None) {
    if (!(staging = hgrpy_array_empty(info->dtype, info->ndim, info->shape, alignment, NULL))) return NULL;
    PyList_SetItem(self->staging, (Py_ssize_t)o, staging); /* steals it */
  }
  PyObject* bound = PyList_GET_ITEM(self->bound, (Py_ssize_t)(hgr_executor_input_count(self->executor) + o));
  hgr_binding_kind_t kind;
  if ((!PyMemoryView_Check(bound) || PyMemoryView_GET_BASE(bound) != staging) &&
      bind_index(self, HGR_OUTPUT, o, staging, &kind) < 0)
    return NULL;
  return staging;
}

/* A session call's bindings: feeds[i] (a list, one value per model input) bound to
 * the executor's input fed[i] (a tuple; -1: a constant of the specialization, not
 * bound), and to every output a new array, its data aligned to alignment bytes; with
 * staged, an output of fewer than HGR_ZERO_COPY_MIN_BYTES (which a run copies out
 * anyway) gets the executor's staging array instead, and its list item is None (the
 * caller copies the staging array out after the run, copy_staged): a new aligned
 * array at every call (four calls into numpy, and binding new memory) made
 * openWakeWord's timer head take 42-48 against 35-40 us a call on PoCL's basic device
 * (bench/notes.md). The outputs as a new list, or NULL with an exception. */
static PyObject* bind_feed(hgrpy_executor_t* self, PyObject* args, bool staged) {
  PyObject *feeds = NULL, *fed = NULL;
  Py_ssize_t alignment = 0;
  if (!PyArg_ParseTuple(args, "O!O!n", &PyList_Type, &feeds, &PyTuple_Type, &fed, &alignment)) return NULL;
  if (!hgrpy_executor_get(self)) return NULL;
  if (PyTuple_GET_SIZE(fed) != PyList_GET_SIZE(feeds))
    return PyErr_Format(PyExc_ValueError, "fed has %zd entries for %zd feeds", PyTuple_GET_SIZE(fed),
                        PyList_GET_SIZE(feeds));
  hgr_binding_kind_t kind;
  for (Py_ssize_t i = 0; i < PyList_GET_SIZE(feeds); ++i) {
    Py_ssize_t k = PyLong_AsSsize_t(PyTuple_GET_ITEM(fed, i));
    if (k == -1 && PyErr_Occurred()) return NULL;
    if (k < 0) continue;
    if ((size_t)k >= hgr_executor_input_count(self->executor))
      return PyErr_Format(PyExc_IndexError, "fed input %zd is out of range", k);
    if (bind_index(self, HGR_INPUT, (size_t)k, PyList_GET_ITEM(feeds, i), &kind) < 0) return NULL;
  }
  size_t count = hgr_executor_output_count(self->executor);
  PyObject* outputs = PyList_New((Py_ssize_t)count);
  for (size_t o = 0; outputs && o < count; ++o) {
    hgr_tensor_info_t info;
    hgr_status_t status = hgr_executor_output_info(self->executor, o, &info);
    if (status) {
      hgrpy_raise(status);
      Py_CLEAR(outputs);
    } else if (staged && info.bytes < HGR_ZERO_COPY_MIN_BYTES) {
      Py_INCREF(Py_None);
      PyList_SET_ITEM(outputs, (Py_ssize_t)o, Py_None);
      if (!bound_staging(self, o, &info, (size_t)alignment)) Py_CLEAR(outputs);
    } else {
      PyObject* array = hgrpy_array_empty(info.dtype, info.ndim, info.shape, (size_t)alignment, NULL);
      if (array) PyList_SET_ITEM(outputs, (Py_ssize_t)o, array);
      if (!array || bind_index(self, HGR_OUTPUT, o, array, &kind) < 0) Py_CLEAR(outputs);
    }
  }
  return outputs;
}

static PyObject* executor_bind_feed(hgrpy_executor_t* self, PyObject* args) {
  return bind_feed(self, args, false);
}

static hgr_status_t run_and_wait(hgr_executor_t* executor) {
  hgr_status_t status = hgr_executor_run(executor);
  return status ? status : hgr_executor_wait(executor);
}

/* The None items of outputs (run_feed's staged ones) replaced by copies of their
 * staging arrays (numpy's copy: one call, where an aligned array takes four and cost
 * the timer head's call 6 us after a run); -1 with an exception. */
static int copy_staged(hgrpy_executor_t* self, PyObject* outputs) {
  for (Py_ssize_t o = 0; o < PyList_GET_SIZE(outputs); ++o) {
    if (PyList_GET_ITEM(outputs, o) != Py_None) continue;
    PyObject* array = PyObject_CallMethod(PyList_GET_ITEM(self->staging, o), "copy", NULL);
    if (!array) return -1;
    PyList_SetItem(outputs, o, array); /* steals it */
  }
  return 0;
}

/* run_feed(feeds, fed, alignment): bind_feed (its small outputs staged), one run
 * waited for, then the staged outputs copied into new arrays (numpy's, not aligned to
 * alignment: only a zero-copy binding needs that). */
static PyObject* executor_run_feed(hgrpy_executor_t* self, PyObject* args) {
  PyObject* outputs = bind_feed(self, args, true);
  PyObject* done = outputs ? call_released(self, run_and_wait) : NULL;
  if (!done || copy_staged(self, outputs) < 0) Py_CLEAR(outputs);
  Py_XDECREF(done);
  return outputs;
}

/* What a run reads or writes in host memory: the bound memoryviews (device buffers
 * are retained by the C binding itself), or NULL when there is none, so that a
 * Fence dropped before its run completed has nothing to wait for. */
static PyObject* host_memory_bound(hgrpy_executor_t* self, bool* out_failed) {
  *out_failed = false;
  Py_ssize_t count = 0;
  for (Py_ssize_t slot = 0; slot < PyList_GET_SIZE(self->bound); ++slot)
    count += PyMemoryView_Check(PyList_GET_ITEM(self->bound, slot));
  if (!count) return NULL;
  PyObject* keep = PyTuple_New(count);
  if (!keep) {
    *out_failed = true;
    return NULL;
  }
  Py_ssize_t at = 0;
  for (Py_ssize_t slot = 0; slot < PyList_GET_SIZE(self->bound); ++slot) {
    PyObject* item = PyList_GET_ITEM(self->bound, slot);
    if (!PyMemoryView_Check(item)) continue;
    Py_INCREF(item);
    PyTuple_SET_ITEM(keep, at++, item);
  }
  return keep;
}

static PyObject* executor_run_async(hgrpy_executor_t* self, PyObject* unused) {
  (void)unused;
  if (!hgrpy_executor_get(self)) return NULL;
  bool failed = false;
  PyObject* keep = host_memory_bound(self, &failed);
  if (failed) return NULL;
  hgr_fence_t* fence = NULL;
  hgr_status_t status = HGR_OK;
  hgrpy_executor_lock(self);
  if (!self->executor) status = CLOSED;
  else {
    Py_BEGIN_ALLOW_THREADS;
    status = hgr_executor_run_async(self->executor, &fence);
    Py_END_ALLOW_THREADS;
  }
  hgrpy_executor_unlock(self);
  if (status) {
    Py_XDECREF(keep);
    return hgrpy_raise(status);
  }
  PyObject* result = hgrpy_fence_wrap(self, fence, keep);
  Py_XDECREF(keep);
  return result;
}

static PyObject* executor_get_output(hgrpy_executor_t* self, PyObject* key) {
  size_t index = 0;
  if (io_index(self, HGR_OUTPUT, key, &index) < 0) return NULL;
  hgr_tensor_info_t info;
  hgr_status_t status = hgr_executor_output_info(self->executor, index, &info);
  if (status) return hgrpy_raise(status);
  void* data = NULL;
  PyObject* array = hgrpy_array_empty(info.dtype, info.ndim, info.shape, 0, &data);
  if (!array) return NULL;
  hgrpy_executor_lock(self);
  if (!self->executor) status = CLOSED;
  else {
    Py_BEGIN_ALLOW_THREADS;
    status = hgr_executor_get_output(self->executor, index, data, info.bytes);
    Py_END_ALLOW_THREADS;
  }
  hgrpy_executor_unlock(self);
  if (status) {
    Py_DECREF(array);
    return hgrpy_raise(status);
  }
  return array;
}

static PyObject* executor_output_buffer(hgrpy_executor_t* self, PyObject* key) {
  size_t index = 0;
  if (io_index(self, HGR_OUTPUT, key, &index) < 0) return NULL;
  hgr_device_buffer_t buffer;
  hgrpy_executor_lock(self);
  hgr_status_t status = self->executor ? hgr_executor_output_buffer(self->executor, index, &buffer) : CLOSED;
  hgrpy_executor_unlock(self);
  if (status) return hgrpy_raise(status);
  return hgrpy_device_buffer_wrap(&buffer);
}

typedef hgr_status_t (*report_fn)(hgr_executor_t*, FILE*);

/* A report of the last run written into a string. */
static PyObject* report(hgrpy_executor_t* self, report_fn fn) {
  if (!hgrpy_executor_get(self)) return NULL;
  char* text = NULL;
  size_t length = 0;
  FILE* out = open_memstream(&text, &length);
  if (!out) return PyErr_NoMemory();
  hgrpy_executor_lock(self);
  hgr_status_t status = self->executor ? fn(self->executor, out) : CLOSED;
  hgrpy_executor_unlock(self);
  fclose(out);
  PyObject* result = status ? hgrpy_raise(status) : PyUnicode_FromStringAndSize(text, (Py_ssize_t)length);
  free(text);
  return result;
}

static hgr_status_t write_summary(hgr_executor_t* executor, FILE* out) {
  hgr_profile_summary_options_t options;
  hgr_profile_summary_options_init(&options);
  options.top_nodes = 0;
  return hgr_profile_write_summary(executor, &options, out);
}

static PyObject* executor_profile_json(hgrpy_executor_t* self, PyObject* unused) {
  (void)unused;
  return report(self, hgr_profile_write_json);
}

static PyObject* executor_profile_summary(hgrpy_executor_t* self, PyObject* unused) {
  (void)unused;
  return report(self, write_summary);
}

static PyObject* executor_trace_json(hgrpy_executor_t* self, PyObject* unused) {
  (void)unused;
  return report(self, hgr_profile_write_trace);
}

static PyObject* executor_get_input_count(hgrpy_executor_t* self, void* closure) {
  (void)closure;
  if (!hgrpy_executor_get(self)) return NULL;
  return PyLong_FromSize_t(hgr_executor_input_count(self->executor));
}

static PyObject* executor_get_output_count(hgrpy_executor_t* self, void* closure) {
  (void)closure;
  if (!hgrpy_executor_get(self)) return NULL;
  return PyLong_FromSize_t(hgr_executor_output_count(self->executor));
}

static PyObject* executor_get_closed(hgrpy_executor_t* self, void* closure) {
  (void)closure;
  return PyBool_FromLong(self->executor == NULL);
}

static PyObject* executor_get_specialization_id(hgrpy_executor_t* self, void* closure) {
  (void)closure;
  if (!self->specialization) Py_RETURN_NONE;
  return PyLong_FromVoidPtr(self->specialization);
}

static PyObject* executor_get_profiling(hgrpy_executor_t* self, void* closure) {
  (void)closure;
  return PyBool_FromLong(self->profiling);
}

static PyObject* executor_get_graph(hgrpy_executor_t* self, void* closure) {
  (void)closure;
  Py_INCREF(self->graph);
  return self->graph;
}

/* The devices the executor uses: [{key, spec}] from its key bindings. */
static PyObject* executor_get_devices(hgrpy_executor_t* self, void* closure) {
  (void)closure;
  if (!hgrpy_executor_get(self)) return NULL;
  size_t count = hgr_executor_key_count(self->executor);
  hgr_instance_t* instance = hgr_executor_instance(self->executor);
  PyObject* dict = PyDict_New();
  for (size_t i = 0; dict && i < count; ++i) {
    hgr_key_binding_t binding = hgr_executor_key_binding(self->executor, i);
    const hgr_device_info_t* device = hgr_instance_device(instance, binding.device_index);
    PyObject* key = PyLong_FromLong(binding.key);
    PyObject* spec = PyUnicode_FromString(device ? device->spec : "?");
    if (!key || !spec || PyDict_SetItem(dict, key, spec) < 0) Py_CLEAR(dict);
    Py_XDECREF(key);
    Py_XDECREF(spec);
  }
  return dict;
}

/* ---- get_input: what an input holds now (for hgr.graph_executor.GraphModule.get_input,
 * TVM's get_input). The C API reads any entry (hgr_executor_read_entry), ordered as
 * get_output's read is; an input is output 0 of its input node. ---- */
static PyObject* executor_get_input(hgrpy_executor_t* self, PyObject* key) {
  size_t index = 0;
  if (io_index(self, HGR_INPUT, key, &index) < 0) return NULL;
  hgr_tensor_info_t info;
  hgr_status_t status = hgr_executor_input_info(self->executor, index, &info);
  if (status) return hgrpy_raise(status);
  const hgr_graph_t* graph = hgr_executor_graph(self->executor);
  size_t node_id = SIZE_MAX;
  for (size_t n = 0; node_id == SIZE_MAX && n < hgr_graph_node_count(graph); ++n) {
    hgr_node_info_t node;
    hgr_status_t lookup = hgr_graph_node_info(graph, n, &node);
    if (lookup) hgr_status_free(lookup);
    else if (!node.func_name && strcmp(node.name, info.name) == 0) node_id = n;
  }
  if (node_id == SIZE_MAX)
    return hgrpy_raise_code(HGR_STATUS_INTERNAL, "input %zu '%s' has no input node", index, info.name);
  void* data = NULL;
  PyObject* array = hgrpy_array_empty(info.dtype, info.ndim, info.shape, 0, &data);
  if (!array) return NULL;
  hgrpy_executor_lock(self);
  if (!self->executor) status = HGR_STATUS(HGR_STATUS_FAILED_PRECONDITION, "the executor was closed");
  else {
    Py_BEGIN_ALLOW_THREADS;
    status = hgr_executor_read_entry(self->executor, (uint32_t)node_id, 0, data, info.bytes);
    Py_END_ALLOW_THREADS;
  }
  hgrpy_executor_unlock(self);
  if (status) {
    Py_DECREF(array);
    return hgrpy_raise(status);
  }
  return array;
}

static PyMethodDef executor_methods[] = {
    {"close", (PyCFunction)executor_close, METH_NOARGS,
     "close()\n\nWaits for the runs in flight and frees the executor's device memory, kernels and queues. "
     "Later calls raise hgr.FailedPreconditionError; closing twice is fine."},
    {"__enter__", executor_enter, METH_NOARGS, NULL},
    {"__exit__", (PyCFunction)executor_exit, METH_VARARGS, NULL},
    {"input_info", (PyCFunction)executor_input_info, METH_O,
     "input_info(key) -> dict\n\nInput key (index or name): {name, dtype, shape, bytes}."},
    {"output_info", (PyCFunction)executor_output_info, METH_O,
     "output_info(key) -> dict\n\nOutput key (index or name): {name, dtype, shape, bytes}."},
    {"input_index", (PyCFunction)executor_input_index, METH_O,
     "input_index(name) -> int\n\nThe index of input name; hgr.NotFoundError listing the inputs."},
    {"set_input", (PyCFunction)executor_set_input, METH_VARARGS,
     "set_input(key, value)\n\nCopies value (any C-contiguous buffer or __dlpack__ object of the input's dtype "
     "and shape) into input key; value may be reused at once."},
    {"bind_input", (PyCFunction)executor_bind_input, METH_VARARGS,
     "bind_input(key, value) -> str\n\nUses value's memory as input key from now on (kept alive by the executor; "
     "do not change it while runs are in flight). Returns the binding kind: 'host_zero_copy' where the device "
     "uses the memory itself (unified memory, aligned data), else 'host_copy' (copied at each run's start)."},
    {"bind_output", (PyCFunction)executor_bind_output, METH_VARARGS,
     "bind_output(key, array) -> str\n\nRuns write output key into array (writable, C-contiguous): directly "
     "('host_zero_copy') or copied at each run's end ('host_copy')."},
    {"bind_device_buffer", (PyCFunction)executor_bind_device_buffer, METH_VARARGS,
     "bind_device_buffer(key, buffer) -> str\n\nInput key (index or name) takes the values of a DeviceBuffer (an "
     "output_buffer of this or another Executor or Fence): the next run waits for its ready event on the device, "
     "not on the host, and the values never pass through host memory within one OpenCL context. Returns the binding "
     "kind: 'buffer' (the buffer is the input's storage), 'device_copy' or 'staged_copy' (another context)."},
    {"io_traffic", (PyCFunction)executor_io_traffic, METH_VARARGS,
     "io_traffic(io, key) -> dict\n\nWhat crossed between host and device for input or output key over the "
     "executor's life (hgr_executor_io_traffic): host_copies, host_bytes, host_maps, device_copies, device_buffers, "
     "device_waits."},
    {"binding_kind", (PyCFunction)executor_binding_kind, METH_VARARGS,
     "binding_kind(io, key) -> str\n\n'none', 'buffer', 'host_zero_copy' or 'host_copy' for io 'input' or "
     "'output'."},
    {"unbind", (PyCFunction)executor_unbind, METH_VARARGS,
     "unbind(io, key)\n\nReturns input or output key to the executor's own buffer."},
    {"load_params", (PyCFunction)executor_load_params, METH_O,
     "load_params(params) -> list[str]\n\nSets every input params names; returns the names that match no input."},
    {"run", (PyCFunction)executor_run, METH_NOARGS,
     "run()\n\nEnqueues one run and returns without waiting (the GIL is released)."},
    {"wait", (PyCFunction)executor_wait, METH_NOARGS,
     "wait()\n\nWaits for every run enqueued; hgr.DeviceFailureError names a failed node."},
    {"bind_feed", (PyCFunction)executor_bind_feed, METH_VARARGS,
     "bind_feed(feeds, fed, alignment) -> list[numpy.ndarray]\n\nInferenceSession's bindings in one call: "
     "feeds[i] (a list, one value per model input) bound to the executor's input fed[i] (a tuple; -1: not "
     "bound), and a new array, its data aligned to alignment bytes, bound to every output; returns the "
     "outputs."},
    {"run_feed", (PyCFunction)executor_run_feed, METH_VARARGS,
     "run_feed(feeds, fed, alignment) -> list[numpy.ndarray]\n\nbind_feed, then one run waited for (the GIL "
     "released): InferenceSession.run's path in one call. Outputs under HGR_ZERO_COPY_MIN_BYTES (64 KiB) are read "
     "into arrays the executor keeps bound and returned as numpy copies."},
    {"run_async", (PyCFunction)executor_run_async, METH_NOARGS,
     "run_async() -> Fence\n\nEnqueues one run and returns its Fence, which keeps the run's bound buffers alive."},
    {"get_output", (PyCFunction)executor_get_output, METH_O,
     "get_output(key) -> numpy.ndarray\n\nA copy of the latest run's output key, waiting only for what it needs."},
    {"get_input", (PyCFunction)executor_get_input, METH_O,
     "get_input(key) -> numpy.ndarray\n\nA copy of what input key (an index or a name) holds now, waiting for the "
     "runs that may write it."},
    {"output_buffer", (PyCFunction)executor_output_buffer, METH_O,
     "output_buffer(key) -> DeviceBuffer\n\nOutput key's storage as an OpenCL buffer (no copy); it holds the "
     "latest run's values until the next run writes it."},
    {"profile_json", (PyCFunction)executor_profile_json, METH_NOARGS,
     "profile_json() -> str\n\nThe last run's profile as JSON (hgr_profile_write_json): needs profiling=True "
     "and the run waited for, else hgr.FailedPreconditionError."},
    {"profile_summary", (PyCFunction)executor_profile_summary, METH_NOARGS,
     "profile_summary() -> str\n\nThe last run's profile as text tables (every node)."},
    {"trace_json", (PyCFunction)executor_trace_json, METH_NOARGS,
     "trace_json() -> str\n\nThe last run as a Chrome trace-event JSON (Perfetto, chrome://tracing)."},
    {NULL, NULL, 0, NULL},
};

static PyGetSetDef executor_getset[] = {
    {"input_count", (getter)executor_get_input_count, NULL, "Number of graph inputs.", NULL},
    {"output_count", (getter)executor_get_output_count, NULL, "Number of graph outputs.", NULL},
    {"closed", (getter)executor_get_closed, NULL, "Whether close() was called.", NULL},
    {"specialization_id", (getter)executor_get_specialization_id, NULL,
     "For a Model's executor, an int naming its specialization (equal for the same shapes while it is kept); "
     "else None.", NULL},
    {"profiling", (getter)executor_get_profiling, NULL, "Whether runs are profiled.", NULL},
    {"graph", (getter)executor_get_graph, NULL, "The Graph it runs.", NULL},
    {"devices", (getter)executor_get_devices, NULL, "Device key -> device spec, as bound.", NULL},
    {NULL, NULL, NULL, NULL, NULL},
};

PyTypeObject hgrpy_executor_type = {
    PyVarObject_HEAD_INIT(NULL, 0).tp_name = "hgr._hgr.Executor",
    .tp_basicsize = sizeof(hgrpy_executor_t),
    .tp_dealloc = (destructor)executor_dealloc,
    .tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_GC,
    .tp_doc = "Executor(graph, params=None, devices=None, profiling=False)\n\n"
              "A graph bound to devices (hgr_executor_t). devices maps device keys (int) to device specs "
              "('pocl:0'); None takes the graph's own bindings or hgr's defaults. Thread-safe through a lock; "
              "the GIL is released while hgr runs or waits. Freed by close(), a with block, or garbage collection.",
    .tp_traverse = (traverseproc)executor_traverse,
    .tp_clear = (inquiry)executor_clear,
    .tp_weaklistoffset = offsetof(hgrpy_executor_t, weakrefs),
    .tp_methods = executor_methods,
    .tp_getset = executor_getset,
    .tp_new = executor_new,
};

int hgrpy_add_executor(PyObject* module) {
  if (PyType_Ready(&hgrpy_executor_type) < 0) return -1;
  return PyModule_AddObjectRef(module, "Executor", (PyObject*)&hgrpy_executor_type);
}
