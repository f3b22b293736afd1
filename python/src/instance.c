/* The process's one hgr instance (created on first use, never released: executors
 * and device buffers may live until the interpreter ends) and hgr.devices(). */
#include "hgrpy.h"

#include <stdatomic.h>

static _Atomic(hgr_instance_t*) shared_instance;
static PyThread_type_lock create_lock;

hgr_instance_t* hgrpy_instance(void) {
  hgr_instance_t* instance = atomic_load(&shared_instance);
  if (instance) return instance;
  hgr_status_t status = HGR_OK;
  Py_BEGIN_ALLOW_THREADS;
  PyThread_acquire_lock(create_lock, WAIT_LOCK);
  instance = atomic_load(&shared_instance);
  if (!instance) {
    status = hgr_instance_create(NULL, &instance);
    if (!status) atomic_store(&shared_instance, instance);
  }
  PyThread_release_lock(create_lock);
  Py_END_ALLOW_THREADS;
  if (status) return (hgr_instance_t*)hgrpy_raise(status);
  return instance;
}

static int set_item(PyObject* dict, const char* key, PyObject* value) {
  if (!value) return -1;
  int result = PyDict_SetItemString(dict, key, value);
  Py_DECREF(value);
  return result;
}

static PyObject* device_dict(const hgr_device_info_t* info) {
  PyObject* dict = PyDict_New();
  if (!dict) return NULL;
  char opencl_version[32];
  snprintf(opencl_version, sizeof(opencl_version), "%d.%d", info->opencl_major, info->opencl_minor);
  if (set_item(dict, "spec", PyUnicode_FromString(info->spec)) < 0 ||
      set_item(dict, "index", PyLong_FromSize_t(info->index)) < 0 ||
      set_item(dict, "platform", PyUnicode_FromString(info->platform_short)) < 0 ||
      set_item(dict, "platform_name", PyUnicode_FromString(info->platform_name)) < 0 ||
      set_item(dict, "platform_version", PyUnicode_FromString(info->platform_version)) < 0 ||
      set_item(dict, "type", PyUnicode_FromString(hgr_device_type_name(info->type))) < 0 ||
      set_item(dict, "name", PyUnicode_FromString(info->name)) < 0 ||
      set_item(dict, "vendor", PyUnicode_FromString(info->vendor)) < 0 ||
      set_item(dict, "version", PyUnicode_FromString(info->version)) < 0 ||
      set_item(dict, "driver_version", PyUnicode_FromString(info->driver_version)) < 0 ||
      set_item(dict, "opencl_version", PyUnicode_FromString(opencl_version)) < 0 ||
      set_item(dict, "compute_units", PyLong_FromUnsignedLong(info->compute_units)) < 0 ||
      set_item(dict, "memory_bytes", PyLong_FromUnsignedLongLong(info->global_mem_bytes)) < 0 ||
      set_item(dict, "local_memory_bytes", PyLong_FromUnsignedLongLong(info->local_mem_bytes)) < 0 ||
      set_item(dict, "max_alloc_bytes", PyLong_FromUnsignedLongLong(info->max_alloc_bytes)) < 0 ||
      set_item(dict, "unified_memory", PyBool_FromLong(info->unified_memory)) < 0 ||
      set_item(dict, "base_address_align_bytes", PyLong_FromUnsignedLong(info->base_address_align_bits / 8)) < 0 ||
      set_item(dict, "fp16", PyBool_FromLong(info->fp16)) < 0 ||
      set_item(dict, "fp64", PyBool_FromLong(info->fp64)) < 0 ||
      set_item(dict, "compiler_available", PyBool_FromLong(info->compiler_available)) < 0) {
    Py_DECREF(dict);
    return NULL;
  }
  return dict;
}

static PyObject* devices(PyObject* module, PyObject* unused) {
  (void)module, (void)unused;
  hgr_instance_t* instance = hgrpy_instance();
  if (!instance) return NULL;
  size_t count = hgr_instance_device_count(instance);
  PyObject* list = PyList_New((Py_ssize_t)count);
  for (size_t i = 0; list && i < count; ++i) {
    PyObject* dict = device_dict(hgr_instance_device(instance, i));
    if (!dict) Py_CLEAR(list);
    else PyList_SET_ITEM(list, (Py_ssize_t)i, dict);
  }
  return list;
}

static PyObject* skipped_platforms(PyObject* module, PyObject* unused) {
  (void)module, (void)unused;
  hgr_instance_t* instance = hgrpy_instance();
  if (!instance) return NULL;
  size_t count = hgr_instance_skipped_platform_count(instance);
  PyObject* list = PyList_New((Py_ssize_t)count);
  for (size_t i = 0; list && i < count; ++i) {
    const hgr_skipped_platform_t* skipped = hgr_instance_skipped_platform(instance, i);
    PyObject* item = Py_BuildValue("{s:s,s:s}", "name", skipped->name, "reason", skipped->reason);
    if (!item) Py_CLEAR(list);
    else PyList_SET_ITEM(list, (Py_ssize_t)i, item);
  }
  return list;
}

static PyObject* find_device(PyObject* module, PyObject* args) {
  (void)module;
  const char* spec = NULL;
  if (!PyArg_ParseTuple(args, "s", &spec)) return NULL;
  hgr_instance_t* instance = hgrpy_instance();
  if (!instance) return NULL;
  size_t index = 0;
  hgr_status_t status = hgr_instance_find_device(instance, spec, &index);
  if (status) return hgrpy_raise(status);
  return device_dict(hgr_instance_device(instance, index));
}

static PyMethodDef instance_methods[] = {
    {"devices", devices, METH_NOARGS,
     "devices() -> list[dict]\n\nEvery OpenCL device hgr found, in instance order: spec ('pocl:0'), index, "
     "platform ('pocl'), platform_name, platform_version, type ('cpu', 'gpu', ...), name, vendor, version, "
     "driver_version, opencl_version ('3.0'), compute_units, memory_bytes, local_memory_bytes, max_alloc_bytes, "
     "unified_memory, base_address_align_bytes, fp16, fp64, compiler_available."},
    {"skipped_platforms", skipped_platforms, METH_NOARGS,
     "skipped_platforms() -> list[dict]\n\nPlatforms discovery skipped, each {name, reason}."},
    {"find_device", find_device, METH_VARARGS,
     "find_device(spec) -> dict\n\nThe device a spec string names (as in devices()); hgr.NotFoundError listing "
     "the devices when none matches."},
    {NULL, NULL, 0, NULL},
};

int hgrpy_add_instance(PyObject* module) {
  create_lock = PyThread_allocate_lock();
  if (!create_lock) {
    PyErr_NoMemory();
    return -1;
  }
  return PyModule_AddFunctions(module, instance_methods);
}
