/* TVM params bytes and dicts <-> hgr._hgr.Params (params_type.c): the C library's
 * reader and writer (hgr/params.h) behind hgr.load_param_dict and
 * hgr.save_param_dict, so that the bytes are the C library's, bit for bit.
 *   params_load(bytes) -> Params         hgr_params_load_memory
 *   params_save(Params) -> bytes         hgr_params_save_memory
 *   params_from_dict(mapping) -> Params  hgr_params_add per item, in the mapping's order
 *   params_to_dict(Params) -> dict       name -> a new NumPy array (a copy) */
#include "hgrpy.h"

#include <stdlib.h>
#include <string.h>

static PyObject* params_load(PyObject* module, PyObject* data) {
  (void)module;
  Py_buffer view;
  if (PyObject_GetBuffer(data, &view, PyBUF_SIMPLE) < 0) {
    PyErr_Clear();
    return hgrpy_raise_code(HGR_STATUS_INVALID_ARGUMENT, "params must be TVM params bytes, not %s",
                            Py_TYPE(data)->tp_name);
  }
  hgr_params_t* params = NULL;
  hgr_status_t status = HGR_OK;
  Py_BEGIN_ALLOW_THREADS;
  status = hgr_params_load_memory(view.buf, (size_t)view.len, &params);
  Py_END_ALLOW_THREADS;
  PyBuffer_Release(&view);
  if (status) return hgrpy_raise(status);
  return hgrpy_params_wrap(params);
}

static PyObject* params_save(PyObject* module, PyObject* params) {
  (void)module;
  if (!PyObject_TypeCheck(params, &hgrpy_params_type))
    return hgrpy_raise_code(HGR_STATUS_INVALID_ARGUMENT, "params must be an hgr Params, not %s",
                            Py_TYPE(params)->tp_name);
  void* data = NULL;
  size_t length = 0;
  hgr_status_t status = hgr_params_save_memory(((hgrpy_params_t*)params)->params, &data, &length);
  if (status) return hgrpy_raise(status);
  PyObject* bytes = PyBytes_FromStringAndSize(data, (Py_ssize_t)length);
  free(data);
  return bytes;
}

/* Adds value (any C-contiguous buffer or __dlpack__ object) under name. */
static int add_value(hgr_params_t* params, PyObject* key, PyObject* value) {
  const char* name = PyUnicode_Check(key) ? PyUnicode_AsUTF8(key) : NULL;
  if (!name) {
    PyErr_Clear();
    hgrpy_raise_code(HGR_STATUS_INVALID_ARGUMENT, "params: a key is a %s, not a str", Py_TYPE(key)->tp_name);
    return -1;
  }
  char what[320];
  snprintf(what, sizeof(what), "param '%s'", name);
  hgrpy_input_view_t view;
  if (hgrpy_input_view_get(value, what, false, &view) < 0) return -1;
  hgr_status_t status = hgr_params_add(params, name, view.dtype, view.ndim, view.shape, view.data, view.bytes);
  hgrpy_input_view_release(&view);
  if (status) return hgrpy_raise(status), -1;
  return 0;
}

static PyObject* params_from_dict(PyObject* module, PyObject* mapping) {
  (void)module;
  PyObject* items = PyMapping_Check(mapping) && !PyUnicode_Check(mapping) ? PyMapping_Items(mapping) : NULL;
  if (!items) {
    PyErr_Clear();
    return hgrpy_raise_code(HGR_STATUS_INVALID_ARGUMENT, "params must be a dict of name -> array, not %s",
                            Py_TYPE(mapping)->tp_name);
  }
  hgr_params_t* params = NULL;
  hgr_status_t status = hgr_params_create(&params);
  if (status) {
    Py_DECREF(items);
    return hgrpy_raise(status);
  }
  for (Py_ssize_t i = 0; i < PyList_GET_SIZE(items); ++i) {
    PyObject* item = PyList_GET_ITEM(items, i);
    if (!PyTuple_Check(item) || PyTuple_GET_SIZE(item) != 2 ||
        add_value(params, PyTuple_GET_ITEM(item, 0), PyTuple_GET_ITEM(item, 1)) < 0) {
      if (!PyErr_Occurred()) hgrpy_raise_code(HGR_STATUS_INVALID_ARGUMENT, "params: item %zd is not (name, array)", i);
      hgr_params_release(params);
      Py_DECREF(items);
      return NULL;
    }
  }
  Py_DECREF(items);
  return hgrpy_params_wrap(params);
}

static PyObject* params_to_dict(PyObject* module, PyObject* params_object) {
  (void)module;
  if (!PyObject_TypeCheck(params_object, &hgrpy_params_type))
    return hgrpy_raise_code(HGR_STATUS_INVALID_ARGUMENT, "params must be an hgr Params, not %s",
                            Py_TYPE(params_object)->tp_name);
  const hgr_params_t* params = ((hgrpy_params_t*)params_object)->params;
  PyObject* dict = PyDict_New();
  for (size_t i = 0; dict && i < hgr_params_count(params); ++i) {
    hgr_tensor_info_t info;
    const void* data = NULL;
    hgr_status_t status = hgr_params_get(params, i, &info, &data);
    if (status) {
      Py_CLEAR(dict);
      return hgrpy_raise(status);
    }
    void* copy = NULL;
    PyObject* array = hgrpy_array_empty(info.dtype, info.ndim, info.shape, 0, &copy);
    if (array && info.bytes) memcpy(copy, data, (size_t)info.bytes);
    if (!array || PyDict_SetItemString(dict, info.name, array) < 0) Py_CLEAR(dict);
    Py_XDECREF(array);
  }
  return dict;
}

static PyMethodDef params_methods[] = {
    {"params_load", params_load, METH_O,
     "params_load(data) -> Params\n\nParses TVM params bytes (save_param_dict's format); hgr.DataLossError naming "
     "the byte offset and the param for truncated or corrupt bytes."},
    {"params_save", params_save, METH_O,
     "params_save(params) -> bytes\n\nParams as TVM params bytes, written by the C library."},
    {"params_from_dict", params_from_dict, METH_O,
     "params_from_dict(mapping) -> Params\n\nParams from name -> C-contiguous array (any buffer or __dlpack__ "
     "object), in the mapping's order; hgr.InvalidArgumentError naming the param at fault."},
    {"params_to_dict", params_to_dict, METH_O,
     "params_to_dict(params) -> dict[str, numpy.ndarray]\n\nEach param as a new NumPy array, in order."},
    {NULL, NULL, 0, NULL},
};

int hgrpy_add_params(PyObject* module) {
  return PyModule_AddFunctions(module, params_methods);
}
