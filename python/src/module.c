/* hgr._hgr — module init: one hgrpy_add_<part> call per file of the extension,
 * and the version from the C library's HGR_VERSION_* macros (include/hgr/hgr.h),
 * the one place it is kept. */
#include "hgrpy.h"

#define HGRPY_STR_(x) #x
#define HGRPY_STR(x) HGRPY_STR_(x)

static struct PyModuleDef hgrpy_module = {
    PyModuleDef_HEAD_INIT,
    .m_name = "hgr._hgr",
    .m_doc = "The C extension behind the hgr package: thin wrappers over the hgr C API.",
    .m_size = -1,
};

PyMODINIT_FUNC PyInit__hgr(void);
PyMODINIT_FUNC PyInit__hgr(void) {
  PyObject* module = PyModule_Create(&hgrpy_module);
  if (!module) return NULL;
  typedef int (*add_fn)(PyObject*);
  static const add_fn parts[] = {
      hgrpy_add_errors, hgrpy_add_instance, hgrpy_add_data,  hgrpy_add_graph,         hgrpy_add_params_type,
      hgrpy_add_executor, hgrpy_add_fence, hgrpy_add_device_buffer, hgrpy_add_onnx,
      hgrpy_add_params, hgrpy_add_builder, hgrpy_add_place, hgrpy_add_model,
  };
  for (size_t i = 0; i < sizeof(parts) / sizeof(parts[0]); ++i) {
    if (parts[i](module) < 0) {
      Py_DECREF(module);
      return NULL;
    }
  }
  if (PyModule_AddStringConstant(module, "__version__",
                                 HGRPY_STR(HGR_VERSION_MAJOR) "." HGRPY_STR(HGR_VERSION_MINOR) "." HGRPY_STR(
                                     HGR_VERSION_PATCH)) < 0 ||
      PyModule_AddIntConstant(module, "HAS_ONNX", HGR_HAS_ONNX) < 0) {
    Py_DECREF(module);
    return NULL;
  }
  return module;
}
