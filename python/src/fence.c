/* hgr._hgr.Fence: one run started by Executor.run_async. It keeps the buffers
 * bound when the run started alive until the run is known complete, and every
 * call on it takes its executor's lock (a fence counts as a call on its executor,
 * hgr/fence.h). */
#include "hgrpy.h"

typedef struct hgrpy_fence_t {
  PyObject_HEAD
  hgr_fence_t* fence;          /* owned; NULL once released */
  hgrpy_executor_t* executor;  /* strong reference */
  PyObject* keep;              /* what the run reads and writes; cleared once complete */
} hgrpy_fence_t;

static PyTypeObject fence_type;

PyObject* hgrpy_fence_wrap(hgrpy_executor_t* executor, hgr_fence_t* fence, PyObject* keep) {
  hgrpy_fence_t* self = PyObject_GC_New(hgrpy_fence_t, &fence_type);
  if (!self) {
    hgrpy_executor_lock(executor);
    hgr_fence_release(fence);
    hgrpy_executor_unlock(executor);
    return NULL;
  }
  self->fence = fence;
  Py_INCREF(executor);
  self->executor = executor;
  Py_XINCREF(keep);
  self->keep = keep;
  PyObject_GC_Track(self);
  return (PyObject*)self;
}

static void fence_release_now(hgrpy_fence_t* self) {
  if (self->fence && self->executor) {
    hgrpy_executor_lock(self->executor);
    hgr_fence_release(self->fence);
    hgrpy_executor_unlock(self->executor);
  }
  self->fence = NULL;
}

static void fence_dealloc(hgrpy_fence_t* self) {
  PyObject_GC_UnTrack(self);
  fence_release_now(self);
  /* A run that may still use kept buffers: the executor's release (or a later
   * wait) finishes it; keep them until then by handing them to nobody but
   * waiting here. */
  if (self->keep && self->executor && self->executor->executor) {
    hgrpy_executor_lock(self->executor);
    if (self->executor->executor) {
      Py_BEGIN_ALLOW_THREADS;
      hgr_status_free(hgr_executor_wait(self->executor->executor));
      Py_END_ALLOW_THREADS;
    }
    hgrpy_executor_unlock(self->executor);
  }
  Py_CLEAR(self->keep);
  Py_CLEAR(self->executor);
  PyObject_GC_Del(self);
}

static int fence_traverse(hgrpy_fence_t* self, visitproc visit, void* arg) {
  Py_VISIT(self->executor);
  Py_VISIT(self->keep);
  return 0;
}

static hgr_fence_t* fence_get(hgrpy_fence_t* self) {
  if (!self->fence) return (hgr_fence_t*)hgrpy_raise_code(HGR_STATUS_FAILED_PRECONDITION, "the fence was released");
  return self->fence;
}

static PyObject* fence_wait(hgrpy_fence_t* self, PyObject* unused) {
  (void)unused;
  if (!fence_get(self)) return NULL;
  hgr_status_t status = HGR_OK;
  hgrpy_executor_lock(self->executor);
  Py_BEGIN_ALLOW_THREADS;
  status = hgr_fence_wait(self->fence);
  Py_END_ALLOW_THREADS;
  hgrpy_executor_unlock(self->executor);
  if (status) return hgrpy_raise(status);
  Py_CLEAR(self->keep); /* complete: nothing uses the buffers any more */
  Py_RETURN_NONE;
}

static PyObject* fence_done(hgrpy_fence_t* self, PyObject* unused) {
  (void)unused;
  if (!fence_get(self)) return NULL;
  bool complete = false;
  hgr_status_t status = HGR_OK;
  hgrpy_executor_lock(self->executor);
  Py_BEGIN_ALLOW_THREADS;
  status = hgr_fence_query(self->fence, &complete);
  Py_END_ALLOW_THREADS;
  hgrpy_executor_unlock(self->executor);
  if (status) return hgrpy_raise(status);
  if (complete) Py_CLEAR(self->keep);
  return PyBool_FromLong(complete);
}

static PyObject* fence_get_output(hgrpy_fence_t* self, PyObject* index_object) {
  if (!fence_get(self)) return NULL;
  Py_ssize_t index = PyNumber_AsSsize_t(index_object, PyExc_OverflowError);
  if (index == -1 && PyErr_Occurred()) return NULL;
  hgr_executor_t* executor = hgrpy_executor_get(self->executor);
  if (!executor) return NULL;
  hgr_tensor_info_t info;
  hgr_status_t status = index < 0 ? HGR_STATUS(HGR_STATUS_OUT_OF_RANGE, "output %zd", index)
                                  : hgr_executor_output_info(executor, (size_t)index, &info);
  if (status) return hgrpy_raise(status);
  void* data = NULL;
  PyObject* array = hgrpy_array_empty(info.dtype, info.ndim, info.shape, 0, &data);
  if (!array) return NULL;
  hgrpy_executor_lock(self->executor);
  Py_BEGIN_ALLOW_THREADS;
  status = hgr_fence_get_output(self->fence, (size_t)index, data, info.bytes);
  Py_END_ALLOW_THREADS;
  hgrpy_executor_unlock(self->executor);
  if (status) {
    Py_DECREF(array);
    return hgrpy_raise(status);
  }
  return array;
}

static PyObject* fence_output_buffer(hgrpy_fence_t* self, PyObject* index_object) {
  if (!fence_get(self)) return NULL;
  Py_ssize_t index = PyNumber_AsSsize_t(index_object, PyExc_OverflowError);
  if (index == -1 && PyErr_Occurred()) return NULL;
  if (index < 0) return hgrpy_raise_code(HGR_STATUS_OUT_OF_RANGE, "output %zd", index);
  hgr_device_buffer_t buffer;
  hgrpy_executor_lock(self->executor);
  hgr_status_t status = hgr_fence_output_buffer(self->fence, (size_t)index, &buffer);
  hgrpy_executor_unlock(self->executor);
  if (status) return hgrpy_raise(status);
  return hgrpy_device_buffer_wrap(&buffer);
}

static PyObject* fence_release(hgrpy_fence_t* self, PyObject* unused) {
  (void)unused;
  fence_release_now(self);
  Py_RETURN_NONE;
}

static PyObject* fence_get_run(hgrpy_fence_t* self, void* closure) {
  (void)closure;
  return PyLong_FromUnsignedLongLong(hgr_fence_run(self->fence));
}

static PyMethodDef fence_methods[] = {
    {"wait", (PyCFunction)fence_wait, METH_NOARGS,
     "wait()\n\nWaits for the run (the GIL released); hgr.DeviceFailureError names a failed node."},
    {"done", (PyCFunction)fence_done, METH_NOARGS, "done() -> bool\n\nWhether the run completed, without waiting."},
    {"get_output", (PyCFunction)fence_get_output, METH_O,
     "get_output(index) -> numpy.ndarray\n\nA copy of this run's output index, whatever ran since."},
    {"output_buffer", (PyCFunction)fence_output_buffer, METH_O,
     "output_buffer(index) -> DeviceBuffer\n\nThis run's output index in an OpenCL buffer nothing writes again."},
    {"release", (PyCFunction)fence_release, METH_NOARGS,
     "release()\n\nGives the fence back (the run goes on); later calls raise hgr.FailedPreconditionError."},
    {NULL, NULL, 0, NULL},
};

static PyGetSetDef fence_getset[] = {
    {"run", (getter)fence_get_run, NULL, "Which run it is: 1 for the executor's first; 0 once released.", NULL},
    {NULL, NULL, NULL, NULL, NULL},
};

static PyTypeObject fence_type = {
    PyVarObject_HEAD_INIT(NULL, 0).tp_name = "hgr._hgr.Fence",
    .tp_basicsize = sizeof(hgrpy_fence_t),
    .tp_dealloc = (destructor)fence_dealloc,
    .tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_GC,
    .tp_doc = "One run of an Executor (hgr_fence_t), from Executor.run_async.",
    .tp_traverse = (traverseproc)fence_traverse,
    .tp_methods = fence_methods,
    .tp_getset = fence_getset,
};

int hgrpy_add_fence(PyObject* module) {
  if (PyType_Ready(&fence_type) < 0) return -1;
  return PyModule_AddObjectRef(module, "Fence", (PyObject*)&fence_type);
}
