/* hgr._hgr.Graph: a loaded, immutable hgr graph (TVM graph-executor JSON, or what
 * the ONNX loader, the builder or placement made). Shared freely; executors
 * retain it. */
#include "hgrpy.h"

#include <stdio.h>
#include <stdlib.h>

PyObject* hgrpy_graph_wrap(hgr_graph_t* graph) {
  hgrpy_graph_t* self = PyObject_New(hgrpy_graph_t, &hgrpy_graph_type);
  if (!self) {
    hgr_graph_release(graph);
    return NULL;
  }
  self->graph = graph;
  return (PyObject*)self;
}

static void graph_dealloc(hgrpy_graph_t* self) {
  hgr_graph_release(self->graph);
  PyObject_Free(self);
}

static PyObject* graph_from_json(PyObject* cls, PyObject* args) {
  (void)cls;
  const char* json = NULL;
  Py_ssize_t length = 0;
  if (!PyArg_ParseTuple(args, "s#", &json, &length)) return NULL;
  hgr_graph_t* graph = NULL;
  hgr_status_t status = hgr_graph_load_json(json, (size_t)length, &graph);
  if (status) return hgrpy_raise(status);
  return hgrpy_graph_wrap(graph);
}

static PyObject* graph_to_json(hgrpy_graph_t* self, PyObject* unused) {
  (void)unused;
  char* text = NULL;
  size_t length = 0;
  FILE* out = open_memstream(&text, &length);
  if (!out) return PyErr_NoMemory();
  hgr_status_t status = hgr_graph_write_json(self->graph, out);
  fclose(out);
  PyObject* result = status ? hgrpy_raise(status) : PyUnicode_FromStringAndSize(text, (Py_ssize_t)length);
  free(text);
  return result;
}

typedef hgr_status_t (*info_fn)(const hgr_graph_t*, size_t, hgr_tensor_info_t*);

static PyObject* info_list(const hgr_graph_t* graph, size_t count, info_fn info) {
  PyObject* list = PyList_New((Py_ssize_t)count);
  for (size_t i = 0; list && i < count; ++i) {
    hgr_tensor_info_t tensor;
    hgr_status_t status = info(graph, i, &tensor);
    PyObject* item = status ? hgrpy_raise(status) : hgrpy_tensor_info_dict(&tensor);
    if (!item) Py_CLEAR(list);
    else PyList_SET_ITEM(list, (Py_ssize_t)i, item);
  }
  return list;
}

static PyObject* graph_inputs(hgrpy_graph_t* self, PyObject* unused) {
  (void)unused;
  return info_list(self->graph, hgr_graph_input_count(self->graph), hgr_graph_input_info);
}

static PyObject* graph_outputs(hgrpy_graph_t* self, PyObject* unused) {
  (void)unused;
  return info_list(self->graph, hgr_graph_output_count(self->graph), hgr_graph_output_info);
}

static PyObject* graph_node_count(hgrpy_graph_t* self, void* closure) {
  (void)closure;
  return PyLong_FromSize_t(hgr_graph_node_count(self->graph));
}

static PyMethodDef graph_methods[] = {
    {"from_json", graph_from_json, METH_VARARGS | METH_CLASS,
     "Graph.from_json(text) -> Graph\n\nLoads TVM graph-executor JSON; hgr.InvalidArgumentError naming the node, "
     "entry or attrs column at fault."},
    {"to_json", (PyCFunction)graph_to_json, METH_NOARGS,
     "to_json() -> str\n\nThe graph as TVM graph-executor JSON (with hgr's device bindings where placed)."},
    {"inputs", (PyCFunction)graph_inputs, METH_NOARGS,
     "inputs() -> list[dict]\n\nThe graph's inputs in order: {name, dtype, shape, bytes}."},
    {"outputs", (PyCFunction)graph_outputs, METH_NOARGS,
     "outputs() -> list[dict]\n\nThe graph's outputs in order: {name, dtype, shape, bytes}."},
    {NULL, NULL, 0, NULL},
};

static PyGetSetDef graph_getset[] = {
    {"node_count", (getter)graph_node_count, NULL, "Nodes of the graph, inputs included.", NULL},
    {NULL, NULL, NULL, NULL, NULL},
};

PyTypeObject hgrpy_graph_type = {
    PyVarObject_HEAD_INIT(NULL, 0).tp_name = "hgr._hgr.Graph",
    .tp_basicsize = sizeof(hgrpy_graph_t),
    .tp_dealloc = (destructor)graph_dealloc,
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_doc = "An immutable hgr graph (TVM graph-executor JSON semantics). Made by Graph.from_json, "
              "load_onnx, the builder and placement; Executor runs it.",
    .tp_methods = graph_methods,
    .tp_getset = graph_getset,
};

int hgrpy_add_graph(PyObject* module) {
  if (PyType_Ready(&hgrpy_graph_type) < 0) return -1;
  return PyModule_AddObjectRef(module, "Graph", (PyObject*)&hgrpy_graph_type);
}
