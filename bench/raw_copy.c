/* The copy benchmark's raw OpenCL baselines (raw_copy.h). Every path ends on the
 * host knowing the copy is complete: blocking calls, or clWaitForEvents on the last
 * command's event (never clFlush + clFinish, which returns early on rusticl). */
#include "raw_copy.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "raw_cl.h"

struct raw_copy_s {
  raw_device_t from, to;
  cl_context contexts[2]; /* source's, destination's (the same one for one platform) */
  cl_command_queue from_queue, to_queue;
  cl_mem source, destination;
  void* staging;
  size_t max_bytes;
  bool same_context;
};

raw_copy_t* raw_copy_create(const char* from, const char* to, size_t max_bytes) {
  raw_copy_t* copy = calloc(1, sizeof(*copy));
  if (!copy) exit(1);
  copy->from = raw_find_device(from);
  copy->to = raw_find_device(to);
  copy->max_bytes = max_bytes;
  copy->same_context = raw_same_platform(&copy->from, &copy->to);
  if (copy->same_context) {
    raw_device_t both[2] = {copy->from, copy->to};
    copy->contexts[0] = raw_create_context(both, 2);
    copy->contexts[1] = copy->contexts[0];
    RAW_CHECK(clRetainContext(copy->contexts[0]));
  } else {
    copy->contexts[0] = raw_create_context(&copy->from, 1);
    copy->contexts[1] = raw_create_context(&copy->to, 1);
  }
  copy->from_queue = raw_create_queue(copy->contexts[0], &copy->from);
  copy->to_queue = raw_create_queue(copy->contexts[1], &copy->to);
  cl_int error = CL_SUCCESS;
  copy->source = clCreateBuffer(copy->contexts[0], CL_MEM_READ_WRITE, max_bytes, NULL, &error);
  RAW_CHECK(error);
  copy->destination = clCreateBuffer(copy->contexts[1], CL_MEM_READ_WRITE, max_bytes, NULL, &error);
  RAW_CHECK(error);
  copy->staging = aligned_alloc(64, (max_bytes + 63) / 64 * 64);
  if (!copy->staging) exit(1);
  memset(copy->staging, 0, max_bytes); /* touched once, as a long-lived staging buffer is */
  return copy;
}

void raw_copy_release(raw_copy_t* copy) {
  if (!copy) return;
  clReleaseMemObject(copy->source);
  clReleaseMemObject(copy->destination);
  clReleaseCommandQueue(copy->from_queue);
  clReleaseCommandQueue(copy->to_queue);
  clReleaseContext(copy->contexts[0]);
  clReleaseContext(copy->contexts[1]);
  free(copy->staging);
  free(copy);
}

bool raw_copy_same_context(const raw_copy_t* copy) { return copy->same_context; }

void raw_copy_fill_source(raw_copy_t* copy, const void* data, size_t bytes) {
  RAW_CHECK(clEnqueueWriteBuffer(copy->from_queue, copy->source, CL_TRUE, 0, bytes, data, 0, NULL, NULL));
}

void raw_copy_read_destination(raw_copy_t* copy, void* data, size_t bytes) {
  RAW_CHECK(clEnqueueReadBuffer(copy->to_queue, copy->destination, CL_TRUE, 0, bytes, data, 0, NULL, NULL));
}

void raw_copy_clear_destination(raw_copy_t* copy, size_t bytes) {
  memset(copy->staging, 0, bytes);
  RAW_CHECK(clEnqueueWriteBuffer(copy->to_queue, copy->destination, CL_TRUE, 0, bytes, copy->staging, 0, NULL, NULL));
}

void raw_copy_direct(raw_copy_t* copy, size_t bytes) {
  cl_event done = NULL;
  RAW_CHECK(clEnqueueCopyBuffer(copy->to_queue, copy->source, copy->destination, 0, 0, bytes, 0, NULL, &done));
  raw_wait_release(done);
}

void raw_copy_staged(raw_copy_t* copy, size_t bytes) {
  RAW_CHECK(clEnqueueReadBuffer(copy->from_queue, copy->source, CL_TRUE, 0, bytes, copy->staging, 0, NULL, NULL));
  RAW_CHECK(clEnqueueWriteBuffer(copy->to_queue, copy->destination, CL_TRUE, 0, bytes, copy->staging, 0, NULL, NULL));
}

void raw_copy_map_source(raw_copy_t* copy, size_t bytes) {
  cl_int error = CL_SUCCESS;
  void* mapped = clEnqueueMapBuffer(copy->from_queue, copy->source, CL_TRUE, CL_MAP_READ, 0, bytes, 0, NULL, NULL,
                                    &error);
  RAW_CHECK(error);
  RAW_CHECK(clEnqueueWriteBuffer(copy->to_queue, copy->destination, CL_TRUE, 0, bytes, mapped, 0, NULL, NULL));
  cl_event unmapped = NULL;
  RAW_CHECK(clEnqueueUnmapMemObject(copy->from_queue, copy->source, mapped, 0, NULL, &unmapped));
  raw_wait_release(unmapped);
}

void raw_copy_map_destination(raw_copy_t* copy, size_t bytes) {
  cl_int error = CL_SUCCESS;
  void* mapped = clEnqueueMapBuffer(copy->to_queue, copy->destination, CL_TRUE, CL_MAP_WRITE_INVALIDATE_REGION, 0,
                                    bytes, 0, NULL, NULL, &error);
  RAW_CHECK(error);
  RAW_CHECK(clEnqueueReadBuffer(copy->from_queue, copy->source, CL_TRUE, 0, bytes, mapped, 0, NULL, NULL));
  cl_event unmapped = NULL;
  RAW_CHECK(clEnqueueUnmapMemObject(copy->to_queue, copy->destination, mapped, 0, NULL, &unmapped));
  raw_wait_release(unmapped);
}

void raw_copy_map_source_chunked(raw_copy_t* copy, size_t bytes, size_t chunk_bytes) {
  cl_int error = CL_SUCCESS;
  void* mapped = clEnqueueMapBuffer(copy->from_queue, copy->source, CL_TRUE, CL_MAP_READ, 0, bytes, 0, NULL, NULL,
                                    &error);
  RAW_CHECK(error);
  cl_event written = NULL;
  for (size_t offset = 0; offset < bytes; offset += chunk_bytes) {
    size_t length = bytes - offset < chunk_bytes ? bytes - offset : chunk_bytes;
    if (written) RAW_CHECK(clReleaseEvent(written));
    RAW_CHECK(clEnqueueWriteBuffer(copy->to_queue, copy->destination, CL_FALSE, offset, length,
                                   (char*)mapped + offset, 0, NULL, &written));
  }
  raw_wait_release(written); /* in-order queue: the last write completes last */
  cl_event unmapped = NULL;
  RAW_CHECK(clEnqueueUnmapMemObject(copy->from_queue, copy->source, mapped, 0, NULL, &unmapped));
  raw_wait_release(unmapped);
}

void raw_copy_map_destination_chunked(raw_copy_t* copy, size_t bytes, size_t chunk_bytes) {
  cl_int error = CL_SUCCESS;
  void* mapped = clEnqueueMapBuffer(copy->to_queue, copy->destination, CL_TRUE, CL_MAP_WRITE_INVALIDATE_REGION, 0,
                                    bytes, 0, NULL, NULL, &error);
  RAW_CHECK(error);
  cl_event read = NULL;
  for (size_t offset = 0; offset < bytes; offset += chunk_bytes) {
    size_t length = bytes - offset < chunk_bytes ? bytes - offset : chunk_bytes;
    if (read) RAW_CHECK(clReleaseEvent(read));
    RAW_CHECK(clEnqueueReadBuffer(copy->from_queue, copy->source, CL_FALSE, offset, length, (char*)mapped + offset, 0,
                                  NULL, &read));
  }
  raw_wait_release(read); /* in-order queue: the last read completes last */
  cl_event unmapped = NULL;
  RAW_CHECK(clEnqueueUnmapMemObject(copy->to_queue, copy->destination, mapped, 0, NULL, &unmapped));
  raw_wait_release(unmapped);
}
