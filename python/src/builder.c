/* hgr._hgr.Builder: an hgr_builder_t (hgr/builder.h), a graph built node by node
 * from Python. hgr.GraphBuilder (python/hgr/builder.py) is the public class over
 * it; here a value is the pair (node, index) of the C API's hgr_value_t, and a
 * node's attrs are a dict turned into hgr_attrs_set_* calls by the type of each
 * value: bool and int -> set_int, float -> set_float, str -> set_string, a list or
 * tuple of ints -> set_ints, of numbers with a float among them -> set_floats. */
#include "hgrpy.h"

typedef struct hgrpy_builder_t {
  PyObject_HEAD
  hgr_builder_t* builder; /* owned */
} hgrpy_builder_t;

static PyTypeObject hgrpy_builder_type;

static PyObject* builder_new(PyTypeObject* type, PyObject* args, PyObject* kwargs) {
  static char* keywords[] = {NULL};
  if (!PyArg_ParseTupleAndKeywords(args, kwargs, "", keywords)) return NULL;
  hgrpy_builder_t* self = (hgrpy_builder_t*)type->tp_alloc(type, 0);
  if (!self) return NULL;
  hgr_status_t status = hgr_builder_create(NULL, &self->builder);
  if (status) {
    Py_DECREF(self);
    return hgrpy_raise(status);
  }
  return (PyObject*)self;
}

static void builder_dealloc(hgrpy_builder_t* self) {
  hgr_builder_release(self->builder);
  Py_TYPE(self)->tp_free((PyObject*)self);
}

static PyObject* value_tuple(hgr_value_t value) {
  return Py_BuildValue("(II)", (unsigned)value.node, (unsigned)value.index);
}

/* A value from a (node, index) pair; what names it in messages ("input 2"). */
static int parse_value(PyObject* object, const char* what, hgr_value_t* out_value) {
  unsigned long node = 0, index = 0;
  PyObject* pair = PySequence_Check(object) && !PyUnicode_Check(object) ? PySequence_Tuple(object) : NULL;
  if (pair && PyTuple_GET_SIZE(pair) == 2) {
    node = PyLong_AsUnsignedLong(PyTuple_GET_ITEM(pair, 0));
    if (!PyErr_Occurred()) index = PyLong_AsUnsignedLong(PyTuple_GET_ITEM(pair, 1));
  }
  bool ok = pair && PyTuple_GET_SIZE(pair) == 2 && !PyErr_Occurred() && node <= UINT32_MAX && index <= UINT32_MAX;
  Py_XDECREF(pair);
  if (!ok) {
    PyErr_Clear();
    hgrpy_raise_code(HGR_STATUS_INVALID_ARGUMENT, "%s is a %s, not a builder value", what, Py_TYPE(object)->tp_name);
    return -1;
  }
  *out_value = (hgr_value_t){(uint32_t)node, (uint32_t)index};
  return 0;
}

/* A shape from a sequence of ints into shape[HGR_MAX_DIMS]. */
static int parse_shape(PyObject* object, const char* name, int64_t* shape, int32_t* out_ndim) {
  PyObject* sequence = PySequence_Check(object) && !PyUnicode_Check(object) ? PySequence_Fast(object, "") : NULL;
  if (!sequence) {
    PyErr_Clear();
    hgrpy_raise_code(HGR_STATUS_INVALID_ARGUMENT, "input '%s': the shape is a %s, not a sequence of ints", name,
                     Py_TYPE(object)->tp_name);
    return -1;
  }
  Py_ssize_t ndim = PySequence_Fast_GET_SIZE(sequence);
  if (ndim > HGR_MAX_DIMS) {
    Py_DECREF(sequence);
    hgrpy_raise_code(HGR_STATUS_INVALID_ARGUMENT, "input '%s': the shape has %zd dims; hgr takes at most %d", name,
                     ndim, HGR_MAX_DIMS);
    return -1;
  }
  for (Py_ssize_t d = 0; d < ndim; ++d) {
    PyObject* extent = PySequence_Fast_GET_ITEM(sequence, d);
    shape[d] = PyLong_Check(extent) ? PyLong_AsLongLong(extent) : -1;
    if (!PyLong_Check(extent) || PyErr_Occurred()) {
      PyErr_Clear();
      Py_DECREF(sequence);
      hgrpy_raise_code(HGR_STATUS_INVALID_ARGUMENT, "input '%s': shape[%zd] is not an int", name, d);
      return -1;
    }
  }
  Py_DECREF(sequence);
  *out_ndim = (int32_t)ndim;
  return 0;
}

/* add_input(name, shape, dtype) -> (node, index) */
static PyObject* builder_add_input(hgrpy_builder_t* self, PyObject* args) {
  const char *name = NULL, *dtype_text = NULL;
  PyObject* shape_object = NULL;
  if (!PyArg_ParseTuple(args, "sOs", &name, &shape_object, &dtype_text)) return NULL;
  int64_t shape[HGR_MAX_DIMS];
  int32_t ndim = 0;
  if (parse_shape(shape_object, name, shape, &ndim) < 0) return NULL;
  hgr_dtype_t dtype;
  hgr_status_t status = hgr_dtype_parse(dtype_text, &dtype);
  hgr_value_t value;
  if (!status) status = hgr_builder_add_input(self->builder, name, dtype, shape, ndim, &value);
  if (status) return hgrpy_raise(status);
  return value_tuple(value);
}

/* add_constant(name, array) -> (node, index): the array's dtype, shape and bytes. */
static PyObject* builder_add_constant(hgrpy_builder_t* self, PyObject* args) {
  const char* name = NULL;
  PyObject* array = NULL;
  if (!PyArg_ParseTuple(args, "sO", &name, &array)) return NULL;
  char what[320];
  snprintf(what, sizeof(what), "constant '%s'", name);
  hgrpy_input_view_t view;
  if (hgrpy_input_view_get(array, what, false, &view) < 0) return NULL;
  hgr_value_t value;
  hgr_status_t status =
      hgr_builder_add_constant(self->builder, name, view.dtype, view.shape, view.ndim, view.data, view.bytes, &value);
  hgrpy_input_view_release(&view);
  if (status) return hgrpy_raise(status);
  return value_tuple(value);
}

/* One attr by its Python type. Lists: ints, or numbers with a float among them. */
static hgr_status_t set_attr(hgr_attrs_t* attrs, const char* key, PyObject* value) {
  if (PyBool_Check(value) || PyLong_Check(value)) {
    long long number = PyLong_AsLongLong(value);
    if (number == -1 && PyErr_Occurred()) {
      PyErr_Clear();
      return HGR_STATUS(HGR_STATUS_INVALID_ARGUMENT, "attr '%s': the int does not fit 64 bits", key);
    }
    return hgr_attrs_set_int(attrs, key, number);
  }
  if (PyFloat_Check(value)) return hgr_attrs_set_float(attrs, key, PyFloat_AS_DOUBLE(value));
  if (PyUnicode_Check(value)) {
    const char* text = PyUnicode_AsUTF8(value);
    if (!text) {
      PyErr_Clear();
      return HGR_STATUS(HGR_STATUS_INVALID_ARGUMENT, "attr '%s': the str is not valid UTF-8", key);
    }
    return hgr_attrs_set_string(attrs, key, text);
  }
  if (!PyList_Check(value) && !PyTuple_Check(value))
    return HGR_STATUS(HGR_STATUS_INVALID_ARGUMENT,
                      "attr '%s': a %s is none of int, float, str or a list of ints or floats", key,
                      Py_TYPE(value)->tp_name);
  Py_ssize_t count = PySequence_Fast_GET_SIZE(value);
  int64_t* ints = PyMem_Calloc((size_t)count + 1, sizeof(int64_t));
  double* floats = PyMem_Calloc((size_t)count + 1, sizeof(double));
  hgr_status_t status = HGR_OK;
  bool any_float = false;
  if (!ints || !floats) status = HGR_STATUS(HGR_STATUS_RESOURCE_EXHAUSTED, "attr '%s': out of host memory", key);
  for (Py_ssize_t i = 0; !status && i < count; ++i) {
    PyObject* item = PySequence_Fast_GET_ITEM(value, i);
    if (PyFloat_Check(item)) {
      any_float = true;
      floats[i] = PyFloat_AS_DOUBLE(item);
    } else if (PyLong_Check(item)) {
      ints[i] = PyLong_AsLongLong(item);
      floats[i] = (double)ints[i];
      if (ints[i] == -1 && PyErr_Occurred()) {
        PyErr_Clear();
        status = HGR_STATUS(HGR_STATUS_INVALID_ARGUMENT, "attr '%s': item %zd does not fit 64 bits", key, i);
      }
    } else {
      status = HGR_STATUS(HGR_STATUS_INVALID_ARGUMENT, "attr '%s': item %zd is a %s, not an int or a float", key, i,
                          Py_TYPE(item)->tp_name);
    }
  }
  if (!status)
    status = any_float ? hgr_attrs_set_floats(attrs, key, floats, (size_t)count)
                       : hgr_attrs_set_ints(attrs, key, ints, (size_t)count);
  PyMem_Free(ints);
  PyMem_Free(floats);
  return status;
}

static hgr_status_t fill_attrs(hgr_attrs_t* attrs, PyObject* dict) {
  PyObject *key, *value;
  Py_ssize_t position = 0;
  while (PyDict_Next(dict, &position, &key, &value)) {
    const char* name = PyUnicode_Check(key) ? PyUnicode_AsUTF8(key) : NULL;
    if (!name) {
      PyErr_Clear();
      return HGR_STATUS(HGR_STATUS_INVALID_ARGUMENT, "attrs: a key is a %s, not a str", Py_TYPE(key)->tp_name);
    }
    hgr_status_t status = set_attr(attrs, name, value);
    if (status) return status;
  }
  return HGR_OK;
}

/* add_op(op, inputs, name=None, outputs=1, attrs=None) -> list of (node, index) */
static PyObject* builder_add_op(hgrpy_builder_t* self, PyObject* args, PyObject* kwargs) {
  static char* keywords[] = {"op", "inputs", "name", "outputs", "attrs", NULL};
  const char *op = NULL, *name = NULL;
  PyObject *inputs_object = NULL, *attrs_object = Py_None;
  unsigned int output_count = 1;
  if (!PyArg_ParseTupleAndKeywords(args, kwargs, "sO|zIO", keywords, &op, &inputs_object, &name, &output_count,
                                   &attrs_object))
    return NULL;
  if (attrs_object != Py_None && !PyDict_Check(attrs_object))
    return hgrpy_raise_code(HGR_STATUS_INVALID_ARGUMENT, "attrs must be a dict, not %s",
                            Py_TYPE(attrs_object)->tp_name);
  PyObject* sequence = PySequence_Fast(inputs_object, "inputs must be a sequence of builder values");
  if (!sequence) return NULL;
  Py_ssize_t input_count = PySequence_Fast_GET_SIZE(sequence);
  hgr_value_t* inputs = PyMem_Calloc((size_t)input_count + 1, sizeof(*inputs));
  /* Room for the op's minimum when output_count is 0; no op has more than 64. */
  uint32_t capacity = output_count ? output_count : 64;
  hgr_value_t* outputs = PyMem_Calloc(capacity, sizeof(*outputs));
  hgr_attrs_t* attrs = NULL;
  PyObject* result = NULL;
  if (!inputs || !outputs) {
    PyErr_NoMemory();
    goto cleanup;
  }
  for (Py_ssize_t i = 0; i < input_count; ++i) {
    char what[64];
    snprintf(what, sizeof(what), "%s: input %zd", op, i);
    if (parse_value(PySequence_Fast_GET_ITEM(sequence, i), what, &inputs[i]) < 0) goto cleanup;
  }
  hgr_status_t status = HGR_OK;
  if (attrs_object != Py_None && PyDict_GET_SIZE(attrs_object) > 0) {
    status = hgr_attrs_create(&attrs);
    if (!status) status = fill_attrs(attrs, attrs_object);
    if (status) {
      hgr_status_t annotated =
          hgr_status_annotate(status, "node '%s' (op %s)", name ? name : "(unnamed)", op);
      hgrpy_raise(annotated);
      goto cleanup;
    }
  }
  status = hgr_builder_add_op(self->builder, name, op, inputs, (uint32_t)input_count, attrs, output_count, outputs);
  if (status) {
    hgrpy_raise(status);
    goto cleanup;
  }
  uint32_t made = output_count;
  if (!made) { /* the op's minimum: the outputs the new node has */
    hgr_tensor_info_t info;
    for (hgr_status_t probe = HGR_OK; made < capacity && !probe;) {
      probe = hgr_builder_value_info(self->builder, (hgr_value_t){outputs[0].node, made}, &info);
      if (probe) hgr_status_free(probe);
      else ++made;
    }
  }
  result = PyList_New(made);
  for (uint32_t i = 0; result && i < made; ++i) {
    PyObject* value = value_tuple((hgr_value_t){outputs[0].node, i});
    if (!value) Py_CLEAR(result);
    else PyList_SET_ITEM(result, i, value);
  }
cleanup:
  hgr_attrs_release(attrs);
  PyMem_Free(inputs);
  PyMem_Free(outputs);
  Py_DECREF(sequence);
  return result;
}

static PyObject* builder_value_info(hgrpy_builder_t* self, PyObject* value_object) {
  hgr_value_t value;
  if (parse_value(value_object, "value", &value) < 0) return NULL;
  hgr_tensor_info_t info;
  hgr_status_t status = hgr_builder_value_info(self->builder, value, &info);
  if (status) return hgrpy_raise(status);
  return hgrpy_tensor_info_dict(&info);
}

static PyObject* builder_mark_output(hgrpy_builder_t* self, PyObject* value_object) {
  hgr_value_t value;
  if (parse_value(value_object, "output", &value) < 0) return NULL;
  hgr_status_t status = hgr_builder_mark_output(self->builder, value);
  if (status) return hgrpy_raise(status);
  Py_RETURN_NONE;
}

static PyObject* builder_finish(hgrpy_builder_t* self, PyObject* unused) {
  (void)unused;
  hgr_graph_t* graph = NULL;
  hgr_params_t* params = NULL;
  hgr_status_t status = hgr_builder_finish(self->builder, &graph, &params);
  if (status) return hgrpy_raise(status);
  PyObject* graph_object = hgrpy_graph_wrap(graph);
  PyObject* params_object = hgrpy_params_wrap(params);
  PyObject* result = graph_object && params_object ? PyTuple_Pack(2, graph_object, params_object) : NULL;
  Py_XDECREF(graph_object);
  Py_XDECREF(params_object);
  return result;
}

static PyMethodDef builder_methods[] = {
    {"add_input", (PyCFunction)builder_add_input, METH_VARARGS,
     "add_input(name, shape, dtype) -> (node, index)\n\nA graph input of an hgr dtype string ('float32')."},
    {"add_constant", (PyCFunction)builder_add_constant, METH_VARARGS,
     "add_constant(name, array) -> (node, index)\n\nA constant: the array (C-contiguous) is copied into the params "
     "finish() returns."},
    {"add_op", HGRPY_KW(builder_add_op), METH_VARARGS | METH_KEYWORDS,
     "add_op(op, inputs, name=None, outputs=1, attrs=None) -> list[(node, index)]\n\nA node running op on inputs "
     "(values); attrs: name -> int, float, str or a list of ints or floats. outputs=0: the op's minimum. "
     "hgr.InvalidArgumentError naming the node, the op and the input or attr at fault; the node is then not added."},
    {"value_info", (PyCFunction)builder_value_info, METH_O,
     "value_info(value) -> dict\n\nThe value's {name, dtype, shape, bytes}."},
    {"mark_output", (PyCFunction)builder_mark_output, METH_O,
     "mark_output(value)\n\nMakes value the graph's next output."},
    {"finish", (PyCFunction)builder_finish, METH_NOARGS,
     "finish() -> (Graph, Params)\n\nThe graph (unplaced: it runs on one device, or after hgr.place) and its "
     "constants as params. hgr.InvalidArgumentError when no output is marked; FailedPreconditionError when "
     "called twice."},
    {NULL, NULL, 0, NULL},
};

static PyTypeObject hgrpy_builder_type = {
    PyVarObject_HEAD_INIT(NULL, 0).tp_name = "hgr._hgr.Builder",
    .tp_basicsize = sizeof(hgrpy_builder_t),
    .tp_dealloc = (destructor)builder_dealloc,
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_doc = "Builder()\n\nAn hgr_builder_t: a graph made node by node, values as (node, index) pairs. "
              "hgr.GraphBuilder is the public class over it. Thread-compatible (one thread at a time).",
    .tp_methods = builder_methods,
    .tp_new = builder_new,
};

int hgrpy_add_builder(PyObject* module) {
  if (PyType_Ready(&hgrpy_builder_type) < 0) return -1;
  return PyModule_AddObjectRef(module, "Builder", (PyObject*)&hgrpy_builder_type);
}
