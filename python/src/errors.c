/* hgr.Error and one subclass per status code (status.h): the names come from
 * hgr_status_code_name ("INVALID_ARGUMENT" -> InvalidArgumentError), the message
 * is the status's whole text. Some also derive from the built-in exception a
 * Python caller would catch for that meaning (ValueError, LookupError, ...). */
#include "hgrpy.h"

#include <ctype.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

#define HGRPY_CODE_COUNT 12 /* HGR_STATUS_OK .. HGR_STATUS_DEVICE_FAILURE */

static PyObject* error_base;
static PyObject* error_classes[HGRPY_CODE_COUNT];

PyObject* hgrpy_error_class(hgr_status_code_t code) {
  if ((int)code > 0 && (int)code < HGRPY_CODE_COUNT && error_classes[code]) return error_classes[code];
  return error_base;
}

static void set_error(hgr_status_code_t code, const char* text) {
  PyObject* type = hgrpy_error_class(code);
  PyObject* value = Py_BuildValue("(s)", text);
  if (!value) return;
  PyObject* exception = PyObject_Call(type, value, NULL);
  Py_DECREF(value);
  if (!exception) return;
  PyObject* code_object = PyLong_FromLong((long)code);
  if (code_object) {
    PyObject_SetAttrString(exception, "code", code_object);
    Py_DECREF(code_object);
  }
  PyErr_SetObject(type, exception);
  Py_DECREF(exception);
}

PyObject* hgrpy_raise(hgr_status_t status) {
  hgr_status_code_t code = hgr_status_code(status);
  char* text = hgr_status_to_string(status);
  set_error(code, text ? text : hgr_status_message(status));
  free(text);
  hgr_status_free(status);
  return NULL;
}

PyObject* hgrpy_raise_code(hgr_status_code_t code, const char* format, ...) {
  char text[1024];
  va_list args;
  va_start(args, format);
  vsnprintf(text, sizeof(text), format, args);
  va_end(args);
  set_error(code, text);
  return NULL;
}

/* "INVALID_ARGUMENT" -> "InvalidArgumentError". */
static void class_name(const char* code_name, char* buffer, size_t capacity) {
  size_t n = 0;
  bool upper = true;
  for (const char* c = code_name; *c && n + 6 < capacity; ++c) {
    if (*c == '_') {
      upper = true;
      continue;
    }
    buffer[n++] = (char)(upper ? toupper((unsigned char)*c) : tolower((unsigned char)*c));
    upper = false;
  }
  snprintf(buffer + n, capacity - n, "Error");
}

/* The built-in class a Python caller expects for a code, besides hgr.Error. */
static PyObject* builtin_base(hgr_status_code_t code) {
  switch (code) {
    case HGR_STATUS_INVALID_ARGUMENT: return PyExc_ValueError;
    case HGR_STATUS_NOT_FOUND: return PyExc_LookupError;
    case HGR_STATUS_OUT_OF_RANGE: return PyExc_IndexError;
    case HGR_STATUS_UNIMPLEMENTED: return PyExc_NotImplementedError;
    default: return NULL;
  }
}

int hgrpy_add_errors(PyObject* module) {
  error_base = PyErr_NewExceptionWithDoc("hgr.Error",
                                         "An hgr call failed. The message is the status's text: its code, what "
                                         "failed and where. `code` is the status code (an int, status.h's "
                                         "hgr_status_code_t). One subclass per code.",
                                         NULL, NULL);
  if (!error_base || PyModule_AddObjectRef(module, "Error", error_base) < 0) return -1;
  for (int code = 1; code < HGRPY_CODE_COUNT; ++code) {
    char name[64], qualified[80], doc[160];
    const char* code_name = hgr_status_code_name((hgr_status_code_t)code);
    class_name(code_name, name, sizeof(name));
    snprintf(qualified, sizeof(qualified), "hgr.%s", name);
    snprintf(doc, sizeof(doc), "hgr.Error for status code %s (%d).", code_name, code);
    PyObject* builtin = builtin_base((hgr_status_code_t)code);
    PyObject* bases = builtin ? PyTuple_Pack(2, error_base, builtin) : PyTuple_Pack(1, error_base);
    if (!bases) return -1;
    error_classes[code] = PyErr_NewExceptionWithDoc(qualified, doc, bases, NULL);
    Py_DECREF(bases);
    if (!error_classes[code] || PyModule_AddObjectRef(module, name, error_classes[code]) < 0) return -1;
  }
  return 0;
}
