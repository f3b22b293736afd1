/* Data between Python and hgr: dtypes as NumPy names and buffer-protocol format
 * strings, read and write views over the caller's buffers (no copy), and new
 * NumPy arrays (aligned, for zero-copy output bindings). NumPy is used through
 * its Python API, so the extension builds without NumPy's headers. */
#include "hgrpy.h"

#include <string.h>

static PyObject* numpy_module;

static PyObject* numpy(void) {
  if (!numpy_module) numpy_module = PyImport_ImportModule("numpy");
  return numpy_module;
}

int hgrpy_dtype_to_numpy(hgr_dtype_t dtype, char* buffer, size_t capacity) {
  const char* name = NULL;
  if (dtype.lanes == 1) {
    if (dtype.code == HGR_DTYPE_UINT && dtype.bits == 1) name = "bool";
    else if ((dtype.code == HGR_DTYPE_INT || dtype.code == HGR_DTYPE_UINT) &&
             (dtype.bits == 8 || dtype.bits == 16 || dtype.bits == 32 || dtype.bits == 64))
      name = dtype.code == HGR_DTYPE_INT ? "int" : "uint";
    else if (dtype.code == HGR_DTYPE_FLOAT && (dtype.bits == 16 || dtype.bits == 32 || dtype.bits == 64))
      name = "float";
  }
  if (!name) {
    char text[24];
    hgrpy_raise_code(HGR_STATUS_UNIMPLEMENTED, "dtype %s has no NumPy type",
                     hgr_dtype_format(dtype, text, sizeof(text)));
    return -1;
  }
  if (strcmp(name, "bool") == 0) snprintf(buffer, capacity, "bool");
  else snprintf(buffer, capacity, "%s%u", name, (unsigned)dtype.bits);
  return 0;
}

int hgrpy_dtype_from_format(const char* format, Py_ssize_t itemsize, hgr_dtype_t* out_dtype) {
  const char* f = format ? format : "B";
  const char* given = f;
  bool big_endian_host = false;
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
  big_endian_host = true;
#endif
  if (*f == '@' || *f == '=') ++f;
  else if (*f == '<' || *f == '>' || *f == '!') {
    if ((*f == '<') == big_endian_host) goto refuse; /* non-native byte order */
    ++f;
  }
  if (!f[0] || f[1]) goto refuse;
  hgr_dtype_t dtype = {HGR_DTYPE_INT, (uint8_t)(itemsize * 8), 1};
  switch (f[0]) {
    case 'b': case 'h': case 'i': case 'l': case 'q': case 'n': dtype.code = HGR_DTYPE_INT; break;
    case 'B': case 'H': case 'I': case 'L': case 'Q': case 'N': dtype.code = HGR_DTYPE_UINT; break;
    case 'e': case 'f': case 'd': dtype.code = HGR_DTYPE_FLOAT; break;
    case '?': dtype.code = HGR_DTYPE_UINT, dtype.bits = 1; break;
    default: goto refuse;
  }
  if (f[0] != '?' && itemsize != 1 && itemsize != 2 && itemsize != 4 && itemsize != 8) goto refuse;
  *out_dtype = dtype;
  return 0;
refuse:
  hgrpy_raise_code(HGR_STATUS_INVALID_ARGUMENT,
                   "buffer format '%s' (item size %zd) is not a native-order number type hgr can hold", given,
                   itemsize);
  return -1;
}

int hgrpy_input_view_get(PyObject* object, const char* what, bool writable, hgrpy_input_view_t* out_view) {
  memset(out_view, 0, sizeof(*out_view));
  PyObject* source = object;
  PyObject* converted = NULL;
  if (!PyObject_CheckBuffer(object) && PyObject_HasAttrString(object, "__dlpack__")) {
    /* DLPack: numpy.from_dlpack gives an array over the same memory on the CPU. */
    if (!numpy()) return -1;
    converted = PyObject_CallMethod(numpy_module, "from_dlpack", "O", object);
    if (!converted) return -1;
    source = converted;
  }
  if (!PyObject_CheckBuffer(source)) {
    Py_XDECREF(converted);
    hgrpy_raise_code(HGR_STATUS_INVALID_ARGUMENT,
                     "%s: a %s has neither the buffer protocol nor __dlpack__ (give a numpy array)", what,
                     Py_TYPE(object)->tp_name);
    return -1;
  }
  /* The memoryview holds the buffer export (and the converted array) for as long
   * as the data is used. */
  PyObject* owner = PyMemoryView_FromObject(source);
  Py_XDECREF(converted);
  if (!owner) return -1;
  const Py_buffer* view = PyMemoryView_GET_BUFFER(owner);
  const char* problem = NULL;
  if (!PyBuffer_IsContiguous(view, 'C')) problem = "is not C-contiguous (numpy.ascontiguousarray makes it so)";
  else if (writable && view->readonly) problem = "is read-only";
  else if (view->ndim > HGR_MAX_DIMS) problem = "has more dimensions than hgr's 16";
  if (problem) {
    hgrpy_raise_code(HGR_STATUS_INVALID_ARGUMENT, "%s: the %s %s", what, Py_TYPE(object)->tp_name, problem);
    Py_DECREF(owner);
    return -1;
  }
  if (hgrpy_dtype_from_format(view->format, view->itemsize, &out_view->dtype) < 0) {
    PyErr_Clear();
    hgrpy_raise_code(HGR_STATUS_INVALID_ARGUMENT,
                     "%s: the %s's buffer format '%s' (item size %zd) is not a native-order number type hgr can "
                     "hold", what, Py_TYPE(object)->tp_name, view->format ? view->format : "B", view->itemsize);
    Py_DECREF(owner);
    return -1;
  }
  out_view->owner = owner;
  out_view->data = view->buf;
  out_view->bytes = (size_t)view->len;
  out_view->ndim = view->ndim;
  for (int d = 0; d < view->ndim; ++d) out_view->shape[d] = view->shape ? (int64_t)view->shape[d] : (int64_t)view->len;
  return 0;
}

void hgrpy_input_view_release(hgrpy_input_view_t* view) {
  Py_CLEAR(view->owner);
}

PyObject* hgrpy_shape_list(int32_t ndim, const int64_t* shape) {
  PyObject* list = PyList_New(ndim);
  for (int32_t d = 0; list && d < ndim; ++d) {
    PyObject* extent = PyLong_FromLongLong(shape[d]);
    if (!extent) Py_CLEAR(list);
    else PyList_SET_ITEM(list, d, extent);
  }
  return list;
}

PyObject* hgrpy_tensor_info_dict(const hgr_tensor_info_t* info) {
  char dtype[24];
  PyObject* shape = hgrpy_shape_list(info->ndim, info->shape);
  if (!shape) return NULL;
  return Py_BuildValue("{s:s,s:s,s:N,s:K}", "name", info->name ? info->name : "", "dtype",
                       hgr_dtype_format(info->dtype, dtype, sizeof(dtype)), "shape", shape, "bytes",
                       (unsigned long long)info->bytes);
}

/* array.view(dtype).reshape(shape). Steals array. */
static PyObject* view_as(PyObject* array, hgr_dtype_t dtype, int32_t ndim, const int64_t* shape) {
  char name[24];
  if (!array || hgrpy_dtype_to_numpy(dtype, name, sizeof(name)) < 0) {
    Py_XDECREF(array);
    return NULL;
  }
  PyObject* typed = PyObject_CallMethod(array, "view", "s", name);
  Py_DECREF(array);
  if (!typed) return NULL;
  PyObject* shape_tuple = PyTuple_New(ndim);
  for (int32_t d = 0; shape_tuple && d < ndim; ++d) {
    PyObject* extent = PyLong_FromLongLong(shape[d]);
    if (!extent) Py_CLEAR(shape_tuple);
    else PyTuple_SET_ITEM(shape_tuple, d, extent);
  }
  PyObject* shaped = shape_tuple ? PyObject_CallMethod(typed, "reshape", "(O)", shape_tuple) : NULL;
  Py_XDECREF(shape_tuple);
  Py_DECREF(typed);
  return shaped;
}

static int64_t element_count(int32_t ndim, const int64_t* shape) {
  int64_t count = 1;
  for (int32_t d = 0; d < ndim; ++d) count *= shape[d];
  return count;
}

PyObject* hgrpy_array_empty(hgr_dtype_t dtype, int32_t ndim, const int64_t* shape, size_t alignment,
                            void** out_data) {
  if (!numpy()) return NULL;
  if (alignment < 1) alignment = 1;
  size_t bytes = (size_t)element_count(ndim, shape) * (size_t)hgr_dtype_element_bytes(dtype);
  PyObject* raw = PyObject_CallMethod(numpy_module, "empty", "ns", (Py_ssize_t)(bytes + alignment), "uint8");
  if (!raw) return NULL;
  Py_buffer view;
  if (PyObject_GetBuffer(raw, &view, PyBUF_SIMPLE) < 0) {
    Py_DECREF(raw);
    return NULL;
  }
  uintptr_t address = (uintptr_t)view.buf;
  size_t offset = (size_t)((alignment - address % alignment) % alignment);
  PyBuffer_Release(&view);
  PyObject* slice = PySequence_GetSlice(raw, (Py_ssize_t)offset, (Py_ssize_t)(offset + bytes));
  Py_DECREF(raw);
  if (out_data) *out_data = (void*)(address + offset);
  return view_as(slice, dtype, ndim, shape);
}

PyObject* hgrpy_array_from_buffer(PyObject* owner, hgr_dtype_t dtype, int32_t ndim, const int64_t* shape) {
  if (!numpy()) return NULL;
  PyObject* flat = PyObject_CallMethod(numpy_module, "frombuffer", "Os", owner, "uint8");
  return view_as(flat, dtype, ndim, shape);
}

static PyObject* numpy_dtype(PyObject* module, PyObject* args) {
  (void)module;
  const char* text = NULL;
  if (!PyArg_ParseTuple(args, "s", &text)) return NULL;
  hgr_dtype_t dtype;
  hgr_status_t status = hgr_dtype_parse(text, &dtype);
  if (status) return hgrpy_raise(status);
  char name[24];
  if (hgrpy_dtype_to_numpy(dtype, name, sizeof(name)) < 0) return NULL;
  return PyUnicode_FromString(name);
}

/* empty(dtype, shape, alignment=0): an aligned, uninitialised array. */
static PyObject* empty(PyObject* module, PyObject* args, PyObject* kwargs) {
  (void)module;
  static char* keywords[] = {"dtype", "shape", "alignment", NULL};
  const char* text = NULL;
  PyObject* shape_object = NULL;
  Py_ssize_t alignment = 0;
  if (!PyArg_ParseTupleAndKeywords(args, kwargs, "sO|n", keywords, &text, &shape_object, &alignment)) return NULL;
  if (alignment < 0 || (alignment & (alignment - 1)) != 0)
    return hgrpy_raise_code(HGR_STATUS_INVALID_ARGUMENT, "alignment %zd is not a power of two", alignment);
  hgr_dtype_t dtype;
  hgr_status_t status = hgr_dtype_parse(text, &dtype);
  if (status) return hgrpy_raise(status);
  PyObject* sequence = PySequence_Fast(shape_object, "shape must be a sequence of ints");
  if (!sequence) return NULL;
  Py_ssize_t ndim = PySequence_Fast_GET_SIZE(sequence);
  int64_t shape[HGR_MAX_DIMS];
  if (ndim > HGR_MAX_DIMS) {
    Py_DECREF(sequence);
    return hgrpy_raise_code(HGR_STATUS_INVALID_ARGUMENT, "shape has %zd dims; hgr takes at most %d", ndim,
                            HGR_MAX_DIMS);
  }
  for (Py_ssize_t d = 0; d < ndim; ++d) {
    shape[d] = PyLong_AsLongLong(PySequence_Fast_GET_ITEM(sequence, d));
    if (shape[d] < 0) {
      Py_DECREF(sequence);
      if (!PyErr_Occurred())
        hgrpy_raise_code(HGR_STATUS_INVALID_ARGUMENT, "shape[%zd] is negative", d);
      return NULL;
    }
  }
  Py_DECREF(sequence);
  return hgrpy_array_empty(dtype, (int32_t)ndim, shape, (size_t)alignment, NULL);
}

static PyMethodDef data_methods[] = {
    {"empty", HGRPY_KW(empty), METH_VARARGS | METH_KEYWORDS,
     "empty(dtype, shape, alignment=0) -> numpy.ndarray\n\nAn uninitialised array of hgr dtype ('float32') and "
     "shape whose data address is a multiple of alignment bytes (a power of two; 0: NumPy's own), so that a device "
     "can use it as its buffer (bind_output)."},
    {"numpy_dtype", numpy_dtype, METH_VARARGS,
     "numpy_dtype(hgr_dtype) -> str\n\nThe NumPy dtype name of an hgr dtype string ('float32', 'bool' for "
     "'uint1'); hgr.UnimplementedError for one NumPy has no type for."},
    {NULL, NULL, 0, NULL},
};

int hgrpy_add_data(PyObject* module) {
  return PyModule_AddFunctions(module, data_methods);
}
