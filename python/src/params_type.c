/* hgr._hgr.Params: an hgr_params_t, the named constant tensors of a graph (TVM
 * params). The loaders return one and Executor loads it; reading and writing TVM
 * params bytes is params.c's. */
#include "hgrpy.h"

PyObject* hgrpy_params_wrap(hgr_params_t* params) {
  hgrpy_params_t* self = PyObject_New(hgrpy_params_t, &hgrpy_params_type);
  if (!self) {
    hgr_params_release(params);
    return NULL;
  }
  self->params = params;
  return (PyObject*)self;
}

static void params_dealloc(hgrpy_params_t* self) {
  hgr_params_release(self->params);
  PyObject_Free(self);
}

static Py_ssize_t params_length(hgrpy_params_t* self) {
  return (Py_ssize_t)hgr_params_count(self->params);
}

static PyObject* params_names(hgrpy_params_t* self, PyObject* unused) {
  (void)unused;
  size_t count = hgr_params_count(self->params);
  PyObject* list = PyList_New((Py_ssize_t)count);
  for (size_t i = 0; list && i < count; ++i) {
    hgr_tensor_info_t info;
    const void* data = NULL;
    hgr_status_t status = hgr_params_get(self->params, i, &info, &data);
    PyObject* name = status ? hgrpy_raise(status) : PyUnicode_FromString(info.name);
    if (!name) Py_CLEAR(list);
    else PyList_SET_ITEM(list, (Py_ssize_t)i, name);
  }
  return list;
}

static PyMethodDef params_methods[] = {
    {"names", (PyCFunction)params_names, METH_NOARGS, "names() -> list[str]\n\nThe params' names in order."},
    {NULL, NULL, 0, NULL},
};

static PySequenceMethods params_sequence = {
    .sq_length = (lenfunc)params_length,
};

PyTypeObject hgrpy_params_type = {
    PyVarObject_HEAD_INIT(NULL, 0).tp_name = "hgr._hgr.Params",
    .tp_basicsize = sizeof(hgrpy_params_t),
    .tp_dealloc = (destructor)params_dealloc,
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_doc = "Named constant tensors of a graph (TVM params), as the loaders return them. len() counts them.",
    .tp_methods = params_methods,
    .tp_as_sequence = &params_sequence,
};

int hgrpy_add_params_type(PyObject* module) {
  if (PyType_Ready(&hgrpy_params_type) < 0) return -1;
  return PyModule_AddObjectRef(module, "Params", (PyObject*)&hgrpy_params_type);
}
