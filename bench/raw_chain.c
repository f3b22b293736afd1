/* The chain's raw OpenCL baseline (raw_chain.h), the simplest correct way to run it
 * by hand:
 *   - one in-order queue per device, no profiling; kernels with their arguments set
 *     once (one cl_kernel per distinct op/input/output, or per node), the same
 *     NDRange as hgr (the element count rounded up to work-groups of 64);
 *   - a command asks for an event only when the next one runs on the other device
 *     (and the run's last command); a command after a device switch waits on that
 *     event, after the other queue was flushed. Since the chain is serial, that
 *     orders everything, including the write-after-read hazards of buffer reuse;
 *   - copies within one context (two devices of one platform): clEnqueueCopyBuffer
 *     on the consumer's queue, like hgr;
 *   - copies across platforms: a blocking clEnqueueReadBuffer into host staging on
 *     the producer's queue (in order after the producer), then a non-blocking
 *     clEnqueueWriteBuffer on the consumer's queue. The chain is serial, so the host
 *     waiting on the read costs nothing that an event callback would save.
 *   - the run ends with clWaitForEvents on the last command's event. */
#include "raw_chain.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "raw_cl.h"

typedef struct raw_kernel_t {
  chain_op_t op;
  int device, in, out;
  cl_kernel kernel;
} raw_kernel_t;

struct raw_chain_s {
  const chain_plan_t* plan;
  raw_device_t devices[CHAIN_MAX_DEVICES];
  cl_context contexts[CHAIN_MAX_DEVICES]; /* the same context twice for one platform */
  cl_command_queue queues[CHAIN_MAX_DEVICES];
  cl_program programs[CHAIN_MAX_DEVICES];
  bool one_context;
  cl_mem* buffers;
  raw_kernel_t* kernels;
  int kernel_count;
  int* command_kernel; /* kernel per command (-1 for copies) */
  void* staging[CHAIN_MAX_DEVICES]; /* per destination device */
  size_t bytes;
  cl_event last;
};

raw_chain_t* raw_chain_create(const chain_plan_t* plan, const char* const* specs, const char* kernel_file,
                              bool kernel_per_node) {
  raw_chain_t* chain = calloc(1, sizeof(*chain));
  if (!chain) exit(1);
  chain->plan = plan;
  chain->bytes = (size_t)plan->elements * sizeof(float);
  for (int d = 0; d < plan->device_count; ++d) chain->devices[d] = raw_find_device(specs[d]);
  chain->one_context = plan->device_count == 1 || raw_same_platform(&chain->devices[0], &chain->devices[1]);
  if (chain->one_context) {
    chain->contexts[0] = raw_create_context(chain->devices, (cl_uint)plan->device_count);
    if (plan->device_count > 1) {
      chain->contexts[1] = chain->contexts[0];
      RAW_CHECK(clRetainContext(chain->contexts[0]));
    }
  } else {
    for (int d = 0; d < plan->device_count; ++d) chain->contexts[d] = raw_create_context(&chain->devices[d], 1);
  }
  for (int d = 0; d < plan->device_count; ++d) {
    chain->queues[d] = raw_create_queue(chain->contexts[d], &chain->devices[d]);
    chain->programs[d] = raw_build_file(chain->contexts[d], &chain->devices[d], kernel_file);
    chain->staging[d] = aligned_alloc(64, (chain->bytes + 63) / 64 * 64);
    if (!chain->staging[d]) exit(1);
  }
  chain->buffers = calloc((size_t)plan->buffer_count, sizeof(cl_mem));
  chain->kernels = calloc((size_t)plan->command_count, sizeof(raw_kernel_t));
  chain->command_kernel = calloc((size_t)plan->command_count, sizeof(int));
  if (!chain->buffers || !chain->kernels || !chain->command_kernel) exit(1);
  for (int b = 0; b < plan->buffer_count; ++b) {
    cl_int error = CL_SUCCESS;
    chain->buffers[b] = clCreateBuffer(chain->contexts[plan->buffer_device[b]], CL_MEM_READ_WRITE, chain->bytes, NULL,
                                       &error);
    RAW_CHECK(error);
  }
  cl_uint n = (cl_uint)plan->elements;
  for (int c = 0; c < plan->command_count; ++c) {
    const chain_command_t* command = &plan->commands[c];
    chain->command_kernel[c] = -1;
    if (command->copy) continue;
    int k = kernel_per_node ? chain->kernel_count : 0;
    while (k < chain->kernel_count &&
           !(chain->kernels[k].op == command->op && chain->kernels[k].device == command->device &&
             chain->kernels[k].in == command->in && chain->kernels[k].out == command->out))
      ++k;
    if (k == chain->kernel_count) {
      raw_kernel_t* kernel = &chain->kernels[chain->kernel_count++];
      *kernel = (raw_kernel_t){command->op, command->device, command->in, command->out, NULL};
      cl_int error = CL_SUCCESS;
      kernel->kernel = clCreateKernel(chain->programs[command->device],
                                      command->op == CHAIN_ADD ? "hgr_add_f32" : "hgr_multiply_f32", &error);
      RAW_CHECK(error);
      RAW_CHECK(clSetKernelArg(kernel->kernel, 0, sizeof(cl_mem), &chain->buffers[command->in]));
      RAW_CHECK(clSetKernelArg(kernel->kernel, 1, sizeof(cl_mem), &chain->buffers[plan->constant[command->device]]));
      RAW_CHECK(clSetKernelArg(kernel->kernel, 2, sizeof(cl_mem), &chain->buffers[command->out]));
      RAW_CHECK(clSetKernelArg(kernel->kernel, 3, sizeof(cl_uint), &n));
    }
    chain->command_kernel[c] = k;
  }
  return chain;
}

void raw_chain_set_inputs(raw_chain_t* chain, const float* x, const float* const* constants) {
  const chain_plan_t* plan = chain->plan;
  RAW_CHECK(clEnqueueWriteBuffer(chain->queues[0], chain->buffers[plan->input], CL_TRUE, 0, chain->bytes, x, 0, NULL,
                                 NULL));
  for (int d = 0; d < plan->device_count; ++d)
    RAW_CHECK(clEnqueueWriteBuffer(chain->queues[d], chain->buffers[plan->constant[d]], CL_TRUE, 0, chain->bytes,
                                   constants[d], 0, NULL, NULL));
}

void raw_chain_enqueue(raw_chain_t* chain) {
  const chain_plan_t* plan = chain->plan;
  size_t local = 64, global = ((size_t)plan->elements + local - 1) / local * local;
  cl_event previous = NULL; /* the last command's event, when the device switches after it */
  for (int c = 0; c < plan->command_count; ++c) {
    const chain_command_t* command = &plan->commands[c];
    cl_command_queue queue = chain->queues[command->device];
    bool last = c == plan->command_count - 1;
    bool switch_after = !last && plan->commands[c + 1].device != command->device;
    cl_event* event = last || (switch_after && chain->one_context) ? &chain->last : NULL;
    cl_uint wait_count = previous ? 1 : 0;
    cl_event* wait = previous ? &previous : NULL;
    if (command->copy && chain->one_context) {
      RAW_CHECK(clEnqueueCopyBuffer(queue, chain->buffers[command->in], chain->buffers[command->out], 0, 0,
                                    chain->bytes, wait_count, wait, event));
    } else if (command->copy) {
      /* The producer's queue orders the read after the producer; the host holds the
       * data when the blocking read returns, so the write needs no event. */
      int source = plan->buffer_device[command->in];
      RAW_CHECK(clEnqueueReadBuffer(chain->queues[source], chain->buffers[command->in], CL_TRUE, 0, chain->bytes,
                                    chain->staging[command->device], 0, NULL, NULL));
      RAW_CHECK(clEnqueueWriteBuffer(queue, chain->buffers[command->out], CL_FALSE, 0, chain->bytes,
                                     chain->staging[command->device], 0, NULL, event));
    } else {
      RAW_CHECK(clEnqueueNDRangeKernel(queue, chain->kernels[chain->command_kernel[c]].kernel, 1, NULL, &global, &local,
                                       wait_count, wait, event));
    }
    if (previous) RAW_CHECK(clReleaseEvent(previous));
    previous = NULL;
    if (switch_after && chain->one_context) {
      /* The other queue will wait on it: it must be submitted. */
      RAW_CHECK(clFlush(queue));
      previous = chain->last;
      chain->last = NULL;
    }
  }
}

void raw_chain_wait(raw_chain_t* chain) {
  raw_wait_release(chain->last);
  chain->last = NULL;
}

void raw_chain_read_result(raw_chain_t* chain, float* out) {
  const chain_plan_t* plan = chain->plan;
  RAW_CHECK(clEnqueueReadBuffer(chain->queues[plan->buffer_device[plan->result]], chain->buffers[plan->result], CL_TRUE,
                                0, chain->bytes, out, 0, NULL, NULL));
}

void raw_chain_release(raw_chain_t* chain) {
  if (!chain) return;
  const chain_plan_t* plan = chain->plan;
  for (int d = 0; d < plan->device_count; ++d) RAW_CHECK(clFinish(chain->queues[d]));
  for (int k = 0; k < chain->kernel_count; ++k) clReleaseKernel(chain->kernels[k].kernel);
  for (int b = 0; b < plan->buffer_count; ++b) clReleaseMemObject(chain->buffers[b]);
  for (int d = 0; d < plan->device_count; ++d) {
    clReleaseProgram(chain->programs[d]);
    clReleaseCommandQueue(chain->queues[d]);
    clReleaseContext(chain->contexts[d]);
    free(chain->staging[d]);
  }
  free(chain->buffers);
  free(chain->kernels);
  free(chain->command_kernel);
  free(chain);
}
