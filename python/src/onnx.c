/* hgr._hgr.load_onnx: an ONNX model (a path or bytes) through the C loader
 * (hgr/onnx.h) into a Graph and its Params, placed on devices in priority order
 * with rules and a policy when asked (hgr/place.h: the syntax of `hgr run
 * --place`). */
#include "hgrpy.h"

#include <stdlib.h>
#include <string.h>

#if HGR_HAS_ONNX

static PyObject* report_dict(const hgr_onnx_report_t* report) {
  PyObject* dict = Py_BuildValue("{s:L,s:L,s:I,s:I,s:I,s:I,s:I,s:I,s:I,s:K}", "ir_version", (long long)report->ir_version,
                       "opset", (long long)report->opset, "onnx_nodes", report->onnx_nodes, "folded", report->folded,
                       "removed", report->removed, "fused", report->fused, "graph_nodes", report->graph_nodes,
                       "elementwise_fused", report->elementwise_fused, "elementwise_groups",
                       report->elementwise_groups, "loader_peak_bytes",
                       (unsigned long long)report->loader_peak_bytes);
  return hgrpy_add_pass_counts(dict, &report->passes);
}

static hgr_status_t set_input_shapes(hgr_onnx_options_t* options, PyObject* shapes) {
  if (shapes == Py_None) return HGR_OK;
  if (!PyDict_Check(shapes))
    return HGR_STATUS(HGR_STATUS_INVALID_ARGUMENT, "input_shapes must be a dict of input name -> shape");
  PyObject *key, *value;
  Py_ssize_t position = 0;
  while (PyDict_Next(shapes, &position, &key, &value)) {
    const char* name = PyUnicode_Check(key) ? PyUnicode_AsUTF8(key) : NULL;
    PyObject* sequence = name ? PySequence_Fast(value, "a shape is a sequence of ints") : NULL;
    if (!sequence) {
      PyErr_Clear();
      return HGR_STATUS(HGR_STATUS_INVALID_ARGUMENT, "input_shapes: each entry is name (str) -> shape (ints)");
    }
    Py_ssize_t ndim = PySequence_Fast_GET_SIZE(sequence);
    int64_t shape[HGR_MAX_DIMS];
    hgr_status_t status = HGR_OK;
    if (ndim > HGR_MAX_DIMS) status = HGR_STATUS(HGR_STATUS_INVALID_ARGUMENT, "input_shapes['%s'] has too many dims", name);
    for (Py_ssize_t d = 0; !status && d < ndim; ++d) {
      shape[d] = PyLong_AsLongLong(PySequence_Fast_GET_ITEM(sequence, d));
      if (shape[d] == -1 && PyErr_Occurred()) {
        PyErr_Clear();
        status = HGR_STATUS(HGR_STATUS_INVALID_ARGUMENT, "input_shapes['%s'][%zd] is not an int", name, d);
      }
    }
    Py_DECREF(sequence);
    if (!status) status = hgr_onnx_options_set_input_shape(options, name, shape, (int32_t)ndim);
    if (status) return status;
  }
  return HGR_OK;
}

/* load_onnx(model, devices=None, place=None, input_shapes=None, base_directory=None) */
static PyObject* load_onnx(PyObject* module, PyObject* args, PyObject* kwargs) {
  (void)module;
  static char* keywords[] = {"model", "devices", "place", "input_shapes", "base_directory", NULL};
  PyObject *model = NULL, *devices = Py_None, *place = Py_None, *shapes = Py_None;
  const char* base_directory = NULL; /* for a model given as bytes: where its external data is */
  if (!PyArg_ParseTupleAndKeywords(args, kwargs, "O|OOOz", keywords, &model, &devices, &place, &shapes,
                                   &base_directory))
    return NULL;
  PyObject* path = NULL;
  Py_buffer bytes = {0};
  bool have_bytes = false;
  if (PyUnicode_Check(model) || PyObject_HasAttrString(model, "__fspath__")) {
    if (!PyUnicode_FSConverter(model, &path)) return NULL;
  } else if (PyObject_GetBuffer(model, &bytes, PyBUF_SIMPLE) == 0) {
    have_bytes = true;
  } else {
    PyErr_Clear();
    return hgrpy_raise_code(HGR_STATUS_INVALID_ARGUMENT, "model must be a path or the model's bytes, not %s",
                            Py_TYPE(model)->tp_name);
  }
  PyObject *device_list = NULL, *place_list = NULL;
  const char **device_specs = NULL, **place_texts = NULL;
  size_t device_count = 0, place_count = 0;
  hgr_onnx_options_t* options = NULL;
  hgr_graph_t* graph = NULL;
  hgr_params_t* params = NULL;
  hgr_onnx_report_t report;
  memset(&report, 0, sizeof(report));
  PyObject* result = NULL;
  hgr_status_t status = HGR_OK;
  hgr_instance_t* instance = NULL;
  if (hgrpy_string_list(devices, "devices", &device_list, &device_specs, &device_count) < 0 ||
      hgrpy_string_list(place, "place", &place_list, &place_texts, &place_count) < 0)
    goto cleanup;
  hgr_place_options_t place_options;
  bool placing = device_count > 0 || place_count > 0;
  status = hgrpy_place_options(&place_options, device_specs, device_count, place_texts, place_count);
  if (!status) status = hgr_onnx_options_create(&options);
  if (!status) status = set_input_shapes(options, shapes);
  if (status) {
    hgrpy_raise(status);
    goto cleanup;
  }
  if (placing) {
    instance = hgrpy_instance();
    if (!instance) goto cleanup;
    hgr_onnx_options_set_place(options, instance, &place_options);
  }
  Py_BEGIN_ALLOW_THREADS;
  if (path) status = hgr_onnx_load_file(PyBytes_AS_STRING(path), options, &graph, &params, &report);
  else status = hgr_onnx_load_memory(bytes.buf, (size_t)bytes.len, base_directory, options, &graph, &params, &report);
  Py_END_ALLOW_THREADS;
  if (status) {
    hgrpy_raise(status);
    goto cleanup;
  }
  PyObject* graph_object = hgrpy_graph_wrap(graph);
  PyObject* params_object = hgrpy_params_wrap(params);
  PyObject* report_object = report_dict(&report);
  if (graph_object && params_object && report_object) result = PyTuple_Pack(3, graph_object, params_object, report_object);
  Py_XDECREF(graph_object);
  Py_XDECREF(params_object);
  Py_XDECREF(report_object);
cleanup:
  hgr_onnx_options_release(options);
  free(device_specs);
  free(place_texts);
  Py_XDECREF(device_list);
  Py_XDECREF(place_list);
  Py_XDECREF(path);
  if (have_bytes) PyBuffer_Release(&bytes);
  return result;
}

static PyMethodDef onnx_methods[] = {
    {"load_onnx", HGRPY_KW(load_onnx), METH_VARARGS | METH_KEYWORDS,
     "load_onnx(model, devices=None, place=None, input_shapes=None, base_directory=None) -> (Graph, Params, dict)\n\n"
     "Loads an ONNX model (a path, or its bytes) with hgr's loader. devices: device specs in priority order; "
     "place: placement rules and policy (a str or a list of them, `hgr run --place` syntax: 'auto', "
     "'op:conv2d=pocl:1', ...); with either, the graph is placed. input_shapes: name -> shape for symbolic dims. "
     "base_directory: for a model given as bytes, the folder its external data is read from (None: refused). "
     "Returns the graph, its params and the loader's report. hgr.InvalidArgumentError for a model that is not "
     "valid ONNX, hgr.UnimplementedError for one hgr cannot run, hgr.NotFoundError for a missing file."},
    {NULL, NULL, 0, NULL},
};

int hgrpy_add_onnx(PyObject* module) {
  return PyModule_AddFunctions(module, onnx_methods);
}

#else

int hgrpy_add_onnx(PyObject* module) {
  (void)module;
  return 0;
}

#endif
