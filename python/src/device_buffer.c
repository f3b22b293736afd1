/* hgr._hgr.DeviceBuffer: an output as an OpenCL buffer (hgr_device_buffer_t,
 * hgr/opencl.h) for the caller's OpenCL code: the cl_mem, context, device and
 * ready event as ints (their handles), and a pyopencl.Buffer when pyopencl is
 * installed (imported only when asked for). */
#include "hgrpy.h"

typedef struct hgrpy_device_buffer_t {
  PyObject_HEAD
  hgr_device_buffer_t buffer; /* mem and ready retained; cleared once released */
} hgrpy_device_buffer_t;

PyObject* hgrpy_device_buffer_wrap(hgr_device_buffer_t* buffer) {
  hgrpy_device_buffer_t* self = PyObject_New(hgrpy_device_buffer_t, &hgrpy_device_buffer_type);
  if (!self) {
    hgr_device_buffer_release(buffer);
    return NULL;
  }
  self->buffer = *buffer;
  return (PyObject*)self;
}

static void device_buffer_dealloc(hgrpy_device_buffer_t* self) {
  hgr_device_buffer_release(&self->buffer);
  PyObject_Free(self);
}

static int check_open(hgrpy_device_buffer_t* self) {
  if (self->buffer.mem) return 0;
  hgrpy_raise_code(HGR_STATUS_FAILED_PRECONDITION, "the device buffer was released");
  return -1;
}

const hgr_device_buffer_t* hgrpy_device_buffer_get(PyObject* object) {
  if (!PyObject_TypeCheck(object, &hgrpy_device_buffer_type))
    return (const hgr_device_buffer_t*)hgrpy_raise_code(HGR_STATUS_INVALID_ARGUMENT, "a DeviceBuffer is needed, not %s",
                                                        Py_TYPE(object)->tp_name);
  hgrpy_device_buffer_t* self = (hgrpy_device_buffer_t*)object;
  return check_open(self) < 0 ? NULL : &self->buffer;
}

static PyObject* handle(void* pointer) {
  return PyLong_FromVoidPtr(pointer);
}

static PyObject* get_mem(hgrpy_device_buffer_t* self, void* closure) {
  (void)closure;
  return check_open(self) < 0 ? NULL : handle(self->buffer.mem);
}
static PyObject* get_context(hgrpy_device_buffer_t* self, void* closure) {
  (void)closure;
  return check_open(self) < 0 ? NULL : handle(self->buffer.context);
}
static PyObject* get_device(hgrpy_device_buffer_t* self, void* closure) {
  (void)closure;
  return check_open(self) < 0 ? NULL : handle(self->buffer.device);
}
static PyObject* get_ready(hgrpy_device_buffer_t* self, void* closure) {
  (void)closure;
  return check_open(self) < 0 ? NULL : handle(self->buffer.ready);
}
static PyObject* get_bytes(hgrpy_device_buffer_t* self, void* closure) {
  (void)closure;
  return PyLong_FromSize_t(self->buffer.bytes);
}
static PyObject* get_spec(hgrpy_device_buffer_t* self, void* closure) {
  (void)closure;
  hgr_instance_t* instance = hgrpy_instance();
  if (!instance) return NULL;
  const hgr_device_info_t* info = hgr_instance_device(instance, self->buffer.device_index);
  return PyUnicode_FromString(info ? info->spec : "");
}

/* CL_MEM_HOST_PTR: the host memory the buffer was made over (0 for none): for an
 * output bound zero-copy, the array the run writes. */
static PyObject* get_host_ptr(hgrpy_device_buffer_t* self, void* closure) {
  (void)closure;
  if (check_open(self) < 0) return NULL;
  void* host = NULL;
  cl_int error = clGetMemObjectInfo(self->buffer.mem, CL_MEM_HOST_PTR, sizeof(host), &host, NULL);
  if (error != CL_SUCCESS)
    return hgrpy_raise_code(HGR_STATUS_INTERNAL, "clGetMemObjectInfo(CL_MEM_HOST_PTR) failed: %s",
                            hgr_opencl_error_name(error));
  return PyLong_FromVoidPtr(host);
}

static PyObject* device_buffer_wait(hgrpy_device_buffer_t* self, PyObject* unused) {
  (void)unused;
  if (check_open(self) < 0) return NULL;
  cl_int error = CL_SUCCESS;
  Py_BEGIN_ALLOW_THREADS;
  error = clWaitForEvents(1, &self->buffer.ready);
  Py_END_ALLOW_THREADS;
  if (error != CL_SUCCESS)
    return hgrpy_raise_code(HGR_STATUS_DEVICE_FAILURE, "clWaitForEvents(the output's ready event) failed: %s",
                            hgr_opencl_error_name(error));
  Py_RETURN_NONE;
}

static PyObject* device_buffer_release(hgrpy_device_buffer_t* self, PyObject* unused) {
  (void)unused;
  hgr_device_buffer_release(&self->buffer);
  Py_RETURN_NONE;
}

static PyObject* device_buffer_enter(PyObject* self, PyObject* unused) {
  (void)unused;
  Py_INCREF(self);
  return self;
}

static PyObject* device_buffer_exit(hgrpy_device_buffer_t* self, PyObject* args) {
  (void)args;
  return device_buffer_release(self, NULL);
}

/* pyopencl.Buffer (and Context, Event) over the same objects, retained for pyopencl. */
static PyObject* device_buffer_to_pyopencl(hgrpy_device_buffer_t* self, PyObject* unused) {
  (void)unused;
  if (check_open(self) < 0) return NULL;
  PyObject* cl = PyImport_ImportModule("pyopencl");
  if (!cl) return NULL;
  PyObject* buffer_type = PyObject_GetAttrString(cl, "Buffer");
  Py_DECREF(cl);
  if (!buffer_type) return NULL;
  PyObject* result = PyObject_CallMethod(buffer_type, "from_int_ptr", "NO", handle(self->buffer.mem), Py_True);
  Py_DECREF(buffer_type);
  return result;
}

static PyMethodDef device_buffer_methods[] = {
    {"wait", (PyCFunction)device_buffer_wait, METH_NOARGS,
     "wait()\n\nWaits for the ready event: the values are in the buffer (the GIL is released)."},
    {"release", (PyCFunction)device_buffer_release, METH_NOARGS,
     "release()\n\nReleases the buffer and its event (also on garbage collection)."},
    {"to_pyopencl", (PyCFunction)device_buffer_to_pyopencl, METH_NOARGS,
     "to_pyopencl() -> pyopencl.Buffer\n\nThe buffer as a pyopencl.Buffer (retained for it); ImportError "
     "without pyopencl."},
    {"__enter__", device_buffer_enter, METH_NOARGS, NULL},
    {"__exit__", (PyCFunction)device_buffer_exit, METH_VARARGS, NULL},
    {NULL, NULL, 0, NULL},
};

static PyGetSetDef device_buffer_getset[] = {
    {"mem", (getter)get_mem, NULL, "The cl_mem handle as an int.", NULL},
    {"context", (getter)get_context, NULL, "Its cl_context handle as an int.", NULL},
    {"device", (getter)get_device, NULL, "The cl_device_id that holds it, as an int.", NULL},
    {"ready", (getter)get_ready, NULL, "The cl_event (in its context) complete once the values are there.", NULL},
    {"bytes", (getter)get_bytes, NULL, "The output's bytes, from offset 0.", NULL},
    {"spec", (getter)get_spec, NULL, "The device's spec string.", NULL},
    {"host_ptr", (getter)get_host_ptr, NULL, "CL_MEM_HOST_PTR: the host memory it was made over, or 0.", NULL},
    {NULL, NULL, NULL, NULL, NULL},
};

PyTypeObject hgrpy_device_buffer_type = {
    PyVarObject_HEAD_INIT(NULL, 0).tp_name = "hgr._hgr.DeviceBuffer",
    .tp_basicsize = sizeof(hgrpy_device_buffer_t),
    .tp_dealloc = (destructor)device_buffer_dealloc,
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_doc = "An output as an OpenCL buffer (hgr_device_buffer_t): handles as ints for interop; "
              "Executor.bind_device_buffer takes it as another run's input.",
    .tp_methods = device_buffer_methods,
    .tp_getset = device_buffer_getset,
};

int hgrpy_add_device_buffer(PyObject* module) {
  if (PyType_Ready(&hgrpy_device_buffer_type) < 0) return -1;
  return PyModule_AddObjectRef(module, "DeviceBuffer", (PyObject*)&hgrpy_device_buffer_type);
}
