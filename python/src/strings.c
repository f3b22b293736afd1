/* A Python str or sequence of str as C strings (device specs, placement rules); the
 * graph passes' counts added to a report dict. */
#include "hgrpy.h"

#include <stdlib.h>

int hgrpy_string_list(PyObject* object, const char* what, PyObject** out_list, const char*** out_strings,
                      size_t* out_count) {
  *out_list = NULL, *out_strings = NULL, *out_count = 0;
  if (object == Py_None) return 0;
  PyObject* list = PyUnicode_Check(object) ? Py_BuildValue("[O]", object) : PySequence_List(object);
  if (!list) return -1;
  Py_ssize_t count = PyList_GET_SIZE(list);
  const char** strings = calloc((size_t)count + 1, sizeof(*strings));
  if (!strings) {
    Py_DECREF(list);
    PyErr_NoMemory();
    return -1;
  }
  for (Py_ssize_t i = 0; i < count; ++i) {
    PyObject* item = PyList_GET_ITEM(list, i);
    strings[i] = PyUnicode_Check(item) ? PyUnicode_AsUTF8(item) : NULL;
    if (!strings[i]) {
      PyErr_Clear();
      free(strings);
      Py_DECREF(list);
      hgrpy_raise_code(HGR_STATUS_INVALID_ARGUMENT, "%s: item %zd is a %s, not a str", what, i,
                       Py_TYPE(item)->tp_name);
      return -1;
    }
  }
  *out_list = list, *out_strings = strings, *out_count = (size_t)count;
  return 0;
}

/* Sets input shapes from a dict name -> sequence of ints. */

PyObject* hgrpy_add_pass_counts(PyObject* dict, const hgr_passes_report_t* report) {
  hgr_passes_count_t counts[HGR_PASSES_COUNT_MAX];
  size_t count = dict ? hgr_passes_report_counts(report, counts) : 0;
  for (size_t k = 0; k < count; ++k) {
    PyObject* value = PyLong_FromUnsignedLong(counts[k].made);
    if (!value || PyDict_SetItemString(dict, counts[k].key, value)) {
      Py_XDECREF(value);
      Py_DECREF(dict);
      return NULL;
    }
    Py_DECREF(value);
  }
  return dict;
}
