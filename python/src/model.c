/* hgr._hgr.Model: an hgr_model_t (hgr/model.h), an ONNX model loaded once and run at
 * any input shape. hgr.InferenceSession is a thin class over it: it asks the Model
 * for the Executor of each feed's shapes (specialize), binds the feed and runs. A
 * Model is made from the model's bytes, or from a bundle directory (open_bundle:
 * hgr_model_create_bundle), and writes one (write_bundle: hgr_model_write_bundle). */
#include "hgrpy.h"

#include <stdlib.h>
#include <string.h>

typedef struct hgrpy_model_t {
  PyObject_HEAD
  hgr_model_t* model;           /* owned; NULL once closed */
  hgr_place_options_t place;    /* borrowed by the model: strings kept by the lists below */
  PyObject* device_list;        /* keeps the device specs' UTF-8 alive */
  PyObject* place_list;
  const char** device_specs;
  const char** place_texts;
  bool profiling;
} hgrpy_model_t;

static hgr_model_t* model_get(hgrpy_model_t* self) {
  if (!self->model) return (hgr_model_t*)hgrpy_raise_code(HGR_STATUS_FAILED_PRECONDITION, "the model was closed");
  return self->model;
}

static void model_close_now(hgrpy_model_t* self) {
  hgr_model_t* model = self->model;
  self->model = NULL;
  if (model) {
    Py_BEGIN_ALLOW_THREADS;
    hgr_model_release(model); /* Executors handed out keep their specializations */
    Py_END_ALLOW_THREADS;
  }
}

static void model_dealloc(hgrpy_model_t* self) {
  model_close_now(self);
  free(self->device_specs);
  free(self->place_texts);
  Py_CLEAR(self->device_list);
  Py_CLEAR(self->place_list);
  Py_TYPE(self)->tp_free((PyObject*)self);
}

/* A Model object not yet holding a model, and the options every creation shares:
 * devices (specs in priority order) and place (rules and policy) placing each
 * specialization, kept alive by the object's lists. NULL with an exception. */
static hgrpy_model_t* model_alloc(PyTypeObject* type, PyObject* devices, PyObject* place, int profiling,
                                  unsigned int max_specializations, unsigned long long max_device_bytes,
                                  hgr_model_options_t* out_options) {
  hgr_instance_t* instance = hgrpy_instance();
  hgrpy_model_t* self = instance ? (hgrpy_model_t*)type->tp_alloc(type, 0) : NULL;
  size_t device_count = 0, place_count = 0;
  if (!self || hgrpy_string_list(devices, "devices", &self->device_list, &self->device_specs, &device_count) < 0 ||
      hgrpy_string_list(place, "place", &self->place_list, &self->place_texts, &place_count) < 0) {
    Py_XDECREF(self);
    return NULL;
  }
  self->profiling = profiling != 0;
  hgr_model_options_init(out_options);
  out_options->executor.profiling = self->profiling;
  out_options->max_specializations = max_specializations;
  out_options->max_device_bytes = max_device_bytes;
  hgr_status_t status = hgrpy_place_options(&self->place, self->device_specs, device_count, self->place_texts,
                                            place_count);
  if (status) {
    Py_DECREF(self);
    return (hgrpy_model_t*)hgrpy_raise(status);
  }
  if (device_count || place_count) out_options->place = &self->place;
  return self;
}

/* Model(model, devices=None, place=None, base_directory=None, profiling=False,
 *       max_specializations=0, max_device_bytes=0) */
static PyObject* model_new(PyTypeObject* type, PyObject* args, PyObject* kwargs) {
  static char* keywords[] = {"model", "devices", "place", "base_directory", "profiling", "max_specializations",
                             "max_device_bytes", NULL};
  PyObject *model = NULL, *devices = Py_None, *place = Py_None;
  const char* base_directory = NULL;
  int profiling = 0;
  unsigned int max_specializations = 0;
  unsigned long long max_device_bytes = 0;
  if (!PyArg_ParseTupleAndKeywords(args, kwargs, "O|OOzpIK", keywords, &model, &devices, &place, &base_directory,
                                   &profiling, &max_specializations, &max_device_bytes))
    return NULL;
  Py_buffer bytes = {0};
  if (PyObject_GetBuffer(model, &bytes, PyBUF_SIMPLE) < 0) {
    PyErr_Clear();
    return hgrpy_raise_code(HGR_STATUS_INVALID_ARGUMENT, "model must be the model's bytes, not %s",
                            Py_TYPE(model)->tp_name);
  }
  hgr_model_options_t options;
  hgrpy_model_t* self =
      model_alloc(type, devices, place, profiling, max_specializations, max_device_bytes, &options);
  if (!self) {
    PyBuffer_Release(&bytes);
    return NULL;
  }
  hgr_instance_t* instance = hgrpy_instance();
  hgr_status_t status;
  Py_BEGIN_ALLOW_THREADS;
  status = hgr_model_create_onnx_memory(instance, bytes.buf, (size_t)bytes.len, base_directory, &options,
                                        &self->model);
  Py_END_ALLOW_THREADS;
  PyBuffer_Release(&bytes);
  if (status) {
    Py_DECREF(self);
    return hgrpy_raise(status);
  }
  return (PyObject*)self;
}

/* Model.open_bundle(directory, devices=None, place=None, profiling=False,
 *                   max_specializations=0, max_device_bytes=0): hgr_model_create_bundle. */
static PyObject* model_open_bundle(PyObject* type, PyObject* args, PyObject* kwargs) {
  static char* keywords[] = {"directory", "devices", "place", "profiling", "max_specializations", "max_device_bytes",
                             NULL};
  PyObject *directory = NULL, *devices = Py_None, *place = Py_None;
  int profiling = 0;
  unsigned int max_specializations = 0;
  unsigned long long max_device_bytes = 0;
  if (!PyArg_ParseTupleAndKeywords(args, kwargs, "O&|OOpIK", keywords, PyUnicode_FSConverter, &directory, &devices,
                                   &place, &profiling, &max_specializations, &max_device_bytes))
    return NULL;
  hgr_model_options_t options;
  hgrpy_model_t* self = model_alloc((PyTypeObject*)type, devices, place, profiling, max_specializations,
                                    max_device_bytes, &options);
  if (!self) {
    Py_DECREF(directory);
    return NULL;
  }
  hgr_instance_t* instance = hgrpy_instance();
  const char* path = PyBytes_AS_STRING(directory);
  hgr_status_t status;
  Py_BEGIN_ALLOW_THREADS;
  status = hgr_model_create_bundle(instance, path, &options, &self->model);
  Py_END_ALLOW_THREADS;
  Py_DECREF(directory);
  if (status) {
    Py_DECREF(self);
    return hgrpy_raise(status);
  }
  return (PyObject*)self;
}

/* write_bundle(model_path, directory): hgr_model_write_bundle. */
static PyObject* model_write_bundle(hgrpy_model_t* self, PyObject* args) {
  PyObject *model_path = NULL, *directory = NULL;
  if (!PyArg_ParseTuple(args, "O&O&", PyUnicode_FSConverter, &model_path, PyUnicode_FSConverter, &directory)) {
    Py_XDECREF(model_path);
    return NULL;
  }
  hgr_model_t* model = model_get(self);
  hgr_status_t status = HGR_OK;
  if (model) {
    const char* source = PyBytes_AS_STRING(model_path);
    const char* target = PyBytes_AS_STRING(directory);
    Py_BEGIN_ALLOW_THREADS;
    status = hgr_model_write_bundle(model, source, target);
    Py_END_ALLOW_THREADS;
  }
  Py_DECREF(model_path);
  Py_DECREF(directory);
  if (!model) return NULL;
  if (status) return hgrpy_raise(status);
  Py_RETURN_NONE;
}

/* {name, dtype, shape: [int | str | None], decides_shapes} of an input or output;
 * shape None when the model declares none. */
static PyObject* io_dict(const hgr_model_io_t* io) {
  char dtype[32] = "";
  if (io->dtype.bits && hgrpy_dtype_to_numpy(io->dtype, dtype, sizeof(dtype)) < 0) return NULL;
  PyObject* shape = Py_None;
  Py_INCREF(shape);
  if (io->ndim >= 0) {
    Py_DECREF(shape);
    shape = PyList_New(io->ndim);
    for (int32_t d = 0; shape && d < io->ndim; ++d) {
      PyObject* dim = io->dims[d] >= 0 ? PyLong_FromLongLong(io->dims[d])
                      : io->dim_names[d] ? PyUnicode_FromString(io->dim_names[d])
                                         : (Py_INCREF(Py_None), Py_None);
      if (!dim) Py_CLEAR(shape);
      else PyList_SET_ITEM(shape, d, dim);
    }
  }
  if (!shape) return NULL;
  return Py_BuildValue("{s:s,s:s,s:N,s:O}", "name", io->name, "dtype", dtype, "shape", shape, "decides_shapes",
                       io->decides_shapes ? Py_True : Py_False);
}

static PyObject* io_list(hgrpy_model_t* self, bool inputs) {
  hgr_model_t* model = model_get(self);
  if (!model) return NULL;
  size_t count = inputs ? hgr_model_input_count(model) : hgr_model_output_count(model);
  PyObject* list = PyList_New((Py_ssize_t)count);
  for (size_t i = 0; list && i < count; ++i) {
    hgr_model_io_t io;
    hgr_status_t status = inputs ? hgr_model_input(model, i, &io) : hgr_model_output(model, i, &io);
    PyObject* item = status ? hgrpy_raise(status) : io_dict(&io);
    if (!item) Py_CLEAR(list);
    else PyList_SET_ITEM(list, (Py_ssize_t)i, item);
  }
  return list;
}

static PyObject* model_inputs(hgrpy_model_t* self, PyObject* unused) {
  (void)unused;
  return io_list(self, true);
}

static PyObject* model_outputs(hgrpy_model_t* self, PyObject* unused) {
  (void)unused;
  return io_list(self, false);
}

/* The model's inputs viewed from feeds, one buffer per input in the model's order
 * (any C-contiguous buffer or __dlpack__ object of the input's dtype): the views and
 * the inputs over them (calloc'd; release with feeds_release). -1 with an exception. */
typedef struct feeds_t {
  PyObject* sequence;
  hgrpy_input_view_t* views;
  hgr_model_input_t* inputs;
  size_t count, viewed;
} feeds_t;

static void feeds_release(feeds_t* f) {
  for (size_t i = 0; i < f->viewed; ++i) hgrpy_input_view_release(&f->views[i]);
  free(f->views);
  free(f->inputs);
  Py_XDECREF(f->sequence);
}

static int feeds_get(hgr_model_t* model, PyObject* feeds, feeds_t* f) {
  memset(f, 0, sizeof(*f));
  f->sequence = PySequence_Fast(feeds, "feeds must be a sequence of arrays, one per input");
  if (!f->sequence) return -1;
  f->count = (size_t)PySequence_Fast_GET_SIZE(f->sequence);
  f->views = calloc(f->count + 1, sizeof(*f->views));
  f->inputs = calloc(f->count + 1, sizeof(*f->inputs));
  if (!f->views || !f->inputs) {
    PyErr_NoMemory();
    return -1;
  }
  for (; f->viewed < f->count; ++f->viewed) {
    hgr_model_io_t io;
    char what[300];
    bool named = f->viewed < hgr_model_input_count(model) && !hgr_model_input(model, f->viewed, &io);
    snprintf(what, sizeof(what), "input '%.256s'", named ? io.name : "?");
    if (hgrpy_input_view_get(PySequence_Fast_GET_ITEM(f->sequence, (Py_ssize_t)f->viewed), what, false,
                             &f->views[f->viewed]) < 0)
      return -1;
    const hgrpy_input_view_t* v = &f->views[f->viewed];
    f->inputs[f->viewed] = (hgr_model_input_t){v->dtype, v->ndim, v->shape, v->data, v->bytes};
  }
  return 0;
}

/* specialize(feeds) -> Executor (feeds as feeds_get takes them). */
static PyObject* model_specialize(hgrpy_model_t* self, PyObject* feeds) {
  hgr_model_t* model = model_get(self);
  if (!model) return NULL;
  feeds_t f;
  PyObject* result = NULL;
  if (feeds_get(model, feeds, &f) == 0) {
    hgr_specialization_t* specialization = NULL;
    hgr_status_t status;
    Py_BEGIN_ALLOW_THREADS;
    status = hgr_model_specialize(model, f.inputs, f.count, &specialization);
    Py_END_ALLOW_THREADS;
    result = status ? hgrpy_raise(status) : hgrpy_executor_wrap_specialization(specialization, self->profiling);
  }
  feeds_release(&f);
  return result;
}

/* run(feeds) -> list of arrays: one run through hgr_model_run, waited for, every
 * output copied to a new array; for a model that decides at run time (stages). */
static PyObject* model_run(hgrpy_model_t* self, PyObject* feeds) {
  hgr_model_t* model = model_get(self);
  if (!model) return NULL;
  feeds_t f;
  PyObject* result = NULL;
  hgr_model_run_t* run = NULL;
  hgr_status_t status = HGR_OK;
  if (feeds_get(model, feeds, &f) < 0) goto done;
  Py_BEGIN_ALLOW_THREADS;
  status = hgr_model_run(model, f.inputs, f.count, &run);
  if (!status) status = hgr_model_run_wait(run);
  Py_END_ALLOW_THREADS;
  if (status) {
    hgrpy_raise(status);
    goto done;
  }
  size_t outputs = hgr_model_output_count(model);
  result = PyList_New((Py_ssize_t)outputs);
  for (size_t i = 0; result && i < outputs; ++i) {
    hgr_tensor_info_t info;
    void* data = NULL;
    PyObject* array = NULL;
    status = hgr_model_run_output_info(run, i, &info);
    if (!status) array = hgrpy_array_empty(info.dtype, info.ndim, info.shape, 0, &data);
    if (array && !status) {
      Py_BEGIN_ALLOW_THREADS;
      status = hgr_model_run_get_output(run, i, data, (size_t)info.bytes);
      Py_END_ALLOW_THREADS;
    }
    if (status || !array) {
      if (status) hgrpy_raise(status);
      Py_XDECREF(array);
      Py_CLEAR(result);
      break;
    }
    PyList_SET_ITEM(result, (Py_ssize_t)i, array);
  }
done:
  hgr_model_run_release(run);
  feeds_release(&f);
  return result;
}

static PyObject* model_report(hgrpy_model_t* self, PyObject* unused) {
  (void)unused;
  hgr_model_t* model = model_get(self);
  if (!model) return NULL;
  hgr_model_report_t r;
  hgr_model_report(model, &r);
  PyObject* dict = Py_BuildValue("{s:I,s:K,s:K,s:K,s:K,s:K,s:d,s:d,s:d,s:I,s:I,s:I,s:I,s:I,s:I,s:I,s:I,s:I,s:I,s:I,s:I,s:I,s:K,s:K,s:K}",
                       "kept", r.kept,
                       "created", (unsigned long long)r.created, "hits", (unsigned long long)r.hits, "evicted",
                       (unsigned long long)r.evicted, "device_bytes", (unsigned long long)r.device_bytes,
                       "shared_weight_bytes", (unsigned long long)r.shared_weight_bytes, "import_ms", r.import_ms,
                       "place_ms", r.place_ms, "executor_ms", r.executor_ms, "programs", r.programs.programs,
                       "programs_compiled", r.programs.from_source, "programs_from_cache", r.programs.from_cache,
                       "programs_from_pool", r.programs.from_pool, "warm_launches", r.programs.warm_launches,
                       "onnx_nodes", r.onnx.onnx_nodes,
                       "folded", r.onnx.folded, "removed", r.onnx.removed, "fused", r.onnx.fused, "graph_nodes",
                       r.onnx.graph_nodes, "elementwise_fused", r.onnx.elementwise_fused, "elementwise_groups",
                       r.onnx.elementwise_groups, "opset", (unsigned int)r.onnx.opset, "loader_peak_bytes",
                       (unsigned long long)r.onnx.loader_peak_bytes, "decisions",
                       (unsigned long long)r.decisions, "stage_runs", (unsigned long long)r.stage_runs);
  return hgrpy_add_pass_counts(dict, &r.onnx.passes);
}

static PyObject* model_close(hgrpy_model_t* self, PyObject* unused) {
  (void)unused;
  model_close_now(self);
  Py_RETURN_NONE;
}

static PyMethodDef model_methods[] = {
    {"inputs", (PyCFunction)model_inputs, METH_NOARGS,
     "inputs() -> list of {name, dtype, shape, decides_shapes}: shape lists ints, dim names (str) and None for "
     "unknown dims (None for no shape at all)."},
    {"outputs", (PyCFunction)model_outputs, METH_NOARGS, "outputs() -> list of {name, dtype, shape}, as inputs()."},
    {"specialize", (PyCFunction)model_specialize, METH_O,
     "specialize(feeds) -> Executor\n\nThe executor of the model at the feeds' shapes (and the values of inputs "
     "that decide shapes), made at the first call for them and kept (bounded, least recently used evicted). feeds: "
     "one array per input, in order. Closing the Executor gives it back to the model."},
    {"run", (PyCFunction)model_run, METH_O,
     "run(feeds) -> list of arrays: one run, waited for, outputs copied (a model that decides at run time "
     "runs in stages this way)."},
    {"report", (PyCFunction)model_report, METH_NOARGS,
     "report() -> dict: specializations kept, created, hits, evicted; device bytes; the last new one's host times "
     "(import_ms, place_ms, executor_ms) and its ONNX load counts."},
    {"write_bundle", (PyCFunction)model_write_bundle, METH_VARARGS,
     "write_bundle(model_path, directory)\n\nWrites a bundle (hgr_model_write_bundle): the ONNX model file at "
     "model_path (copied; external data is not) and the programs the model's specializations built so far, as "
     "binaries for their devices, into directory (made if missing). FailedPreconditionError before any "
     "specialization."},
    {"open_bundle", HGRPY_KW(model_open_bundle), METH_CLASS | METH_VARARGS | METH_KEYWORDS,
     "open_bundle(directory, devices=None, place=None, profiling=False, max_specializations=0, "
     "max_device_bytes=0) -> Model\n\nThe model of a bundle (hgr_model_create_bundle), its programs loaded so "
     "that specializations on the bundle's devices compile nothing from source. FailedPreconditionError for a "
     "bundle of another hgr version or for a device this machine lacks; the file at fault named otherwise."},
    {"close", (PyCFunction)model_close, METH_NOARGS, "Frees the model; Executors handed out stay valid."},
    {NULL, NULL, 0, NULL},
};

static PyTypeObject hgrpy_model_type = {
    PyVarObject_HEAD_INIT(NULL, 0).tp_name = "hgr._hgr.Model",
    .tp_basicsize = sizeof(hgrpy_model_t),
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_doc = "Model(model, devices=None, place=None, base_directory=None, profiling=False, max_specializations=0, "
              "max_device_bytes=0)\n\nAn ONNX model (its bytes) loaded once and run at any input shape "
              "(hgr/model.h). devices: specs in priority order; place: rules and policy (`hgr run --place` syntax); "
              "with either, each specialization is placed. Model.open_bundle(directory, ...) loads a bundle "
              "(`hgr compile --bundle`, write_bundle) instead.",
    .tp_new = model_new,
    .tp_dealloc = (destructor)model_dealloc,
    .tp_methods = model_methods,
};

int hgrpy_add_model(PyObject* module) {
  if (PyType_Ready(&hgrpy_model_type) < 0) return -1;
  Py_INCREF(&hgrpy_model_type);
  if (PyModule_AddObject(module, "Model", (PyObject*)&hgrpy_model_type) < 0) {
    Py_DECREF(&hgrpy_model_type);
    return -1;
  }
  return 0;
}
