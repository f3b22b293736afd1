/* hgr/model.h's runs (docs/onnx.md, "Models at any shape" and "Decisions at run
 * time"): the first stage's specialization, its inputs set or bound, its run; then,
 * for a model that decides at run time, each later stage: the decision read on the
 * host, the specialization of the stage after it (model.c), its inputs bound on the
 * device to the last stage's carried values and payloads, its run. A run ends as
 * the last stage's fence and specialization. */
#include <stdio.h>
#include <string.h>

#include "alloc.h"
#include "hgr/opencl.h"
#include "internal.h"
#include "model_internal.h"

struct hgr_model_run_s {
  hgr_allocator_t allocator; /* the model's */
  hgr_specialization_t* specialization;
  hgr_fence_t* fence;
  char** output_names; /* the model's, copied: a run may outlive its model */
  size_t output_count;
};


/* ---- stages -------------------------------------------------------------------------------- */

/* The decisions of s and the one its run (fence) took, read on the host: the run's
 * wait there. */
static hgr_status_t take_decision(hgr_model_t* model, const hgr_specialization_t* s, hgr_fence_t* fence,
                                  hgr__decision_t** out_decisions) {
  hgr_allocator_t allocator = hgr__model_allocator(model);
  const hgr__stage_end_t* end = hgr__specialization_end(s);
  size_t count = 0;
  const hgr__decision_t* before = hgr__specialization_decisions(s, &count);
  hgr__decision_t* decisions = hgr__calloc(allocator, count + 1, sizeof(*decisions));
  if (!decisions) return HGR_STATUS(HGR_STATUS_RESOURCE_EXHAUSTED, "out of host memory");
  hgr_status_t status = HGR_OK;
  for (size_t i = 0; !status && i <= count; ++i) {
    hgr__decision_t* d = &decisions[i];
    hgr_tensor_info_t info;
    if (i < count) {
      *d = before[i];
      d->data = NULL;
    } else {
      status = hgr_executor_output_info(hgr_specialization_executor(s), end->carried, &info);
      if (!status) {
        d->dtype = info.dtype;
        d->ndim = info.ndim;
        memcpy(d->shape, info.shape, sizeof(int64_t) * (size_t)info.ndim);
        d->bytes = (size_t)info.bytes;
      }
    }
    if (!status && !(d->data = hgr__alloc(allocator, d->bytes ? d->bytes : 1)))
      status = HGR_STATUS(HGR_STATUS_RESOURCE_EXHAUSTED, "out of host memory");
    if (!status && i < count) memcpy(d->data, before[i].data, d->bytes);
  }
  if (!status) {
    status = hgr_fence_get_output(fence, end->carried, decisions[count].data,
                                  decisions[count].bytes);
    hgr__model_count_stage(model, 1, 0);
  }
  if (status) {
    hgr__decisions_free(allocator, decisions, count + 1);
    return hgr_status_annotate(status, "the decision at %s", end->label);
  }
  *out_decisions = decisions;
  return HGR_OK;
}

/* Whether an input of executor is bound to the caller's memory (the first stage's,
 * which start binds where they lie): as its storage itself (zero_copy), or either
 * way. */
static bool binds_host_memory(hgr_executor_t* executor, bool zero_copy) {
  for (size_t i = 0; i < hgr_executor_input_count(executor); ++i) {
    hgr_binding_kind_t kind = hgr_executor_binding_kind(executor, HGR_INPUT, i);
    if (kind == HGR_BINDING_HOST_ZERO_COPY || (!zero_copy && kind == HGR_BINDING_HOST_COPY)) return true;
  }
  return false;
}

/* Ends s's use of the caller's memory: waits for its run (fence; its decision was
 * read, so it is mostly done; NULL where the run failed to start: the executor) and
 * returns each input bound to host memory to the executor's own buffer, so that
 * nothing holds the caller's pointer once hgr_model_run returned. */
static hgr_status_t end_host_inputs(hgr_specialization_t* s, hgr_fence_t* fence) {
  hgr_executor_t* executor = hgr_specialization_executor(s);
  if (!binds_host_memory(executor, false)) return HGR_OK;
  hgr_status_t status = fence ? hgr_fence_wait(fence) : hgr_executor_wait(executor);
  for (size_t i = 0; i < hgr_executor_input_count(executor); ++i) {
    hgr_binding_kind_t kind = hgr_executor_binding_kind(executor, HGR_INPUT, i);
    if (kind != HGR_BINDING_HOST_ZERO_COPY && kind != HGR_BINDING_HOST_COPY) continue;
    hgr_status_t unbound = hgr_executor_unbind(executor, HGR_INPUT, i);
    if (!status) status = unbound;
    else hgr_status_free(unbound);
  }
  return status;
}

/* Binds next's inputs to the carried values and payloads of s's run (fence) on the
 * device. Where an input's storage is the caller's memory, waits for each copy: a
 * carried value may be a graph input itself. (A wait costs a scheduling round trip,
 * 0.1-1 ms on a busy PoCL: where the run copied its inputs in, nothing waits.) */
static hgr_status_t bind_carried(hgr_specialization_t* s, hgr_fence_t* fence, hgr_specialization_t* next) {
  const hgr__stage_end_t* end = hgr__specialization_end(s);
  hgr_executor_t* executor = hgr_specialization_executor(next);
  bool wait = binds_host_memory(hgr_specialization_executor(s), true);
  hgr_status_t status = HGR_OK;
  for (size_t i = 0; !status && i < end->carried + end->payloads; ++i) {
    size_t from = i < end->carried ? i : i + 1; /* the decision sits between */
    hgr_device_buffer_t buffer;
    hgr_tensor_info_t info;
    status = hgr_executor_input_info(executor, i, &info);
    if (!status) status = hgr_fence_output_buffer(fence, from, &buffer);
    if (status) break;
    if (wait && clWaitForEvents(1, &buffer.ready) != CL_SUCCESS)
      status = HGR_STATUS(HGR_STATUS_INTERNAL, "the copy of the value carried to input %zu failed", i);
    buffer.bytes = (size_t)info.bytes; /* a payload's actual values, at the start of its capacity */
    if (!status) status = hgr_executor_bind_device_buffer(executor, i, &buffer);
    hgr_device_buffer_release(&buffer);
  }
  return status;
}

/* The specialization of the stage after s, whose run (fence) decided it, with its
 * inputs bound to that run's carried values and payloads on the device; s's run
 * done with the caller's memory. *out_retry (with an error) as import_onnx: the
 * stage found inputs that decide shapes, which changes the first stage's key. */
static hgr_status_t next_stage(hgr_model_t* model, const hgr_model_input_t* inputs, hgr_specialization_t* s,
                               hgr_fence_t* fence, hgr_specialization_t** out_next, bool* out_retry) {
  hgr__decision_t* decisions = NULL;
  hgr_specialization_t* next = NULL;
  hgr_status_t status = take_decision(model, s, fence, &decisions);
  if (!status) status = hgr__model_stage_after(model, inputs, s, decisions, &next, out_retry);
  if (!status) status = bind_carried(s, fence, next);
  hgr_status_t ended = end_host_inputs(s, fence);
  if (!status) status = ended;
  else hgr_status_free(ended);
  if (status) {
    hgr_specialization_release(next);
    return status;
  }
  *out_next = next;
  return HGR_OK;
}

/* Runs the stages after s (whose run is *inout_fence), each once the one before
 * decided it; *inout_specialization and *inout_fence become the last stage's.
 * *out_retry as next_stage's. */
static hgr_status_t run_stages(hgr_model_t* model, const hgr_model_input_t* inputs,
                               hgr_specialization_t** inout_specialization, hgr_fence_t** inout_fence,
                               bool* out_retry) {
  *out_retry = false;
  while (hgr__specialization_end(*inout_specialization)->cut) {
    hgr_specialization_t* next = NULL;
    hgr_fence_t* fence = NULL;
    HGR_RETURN_IF_ERROR(next_stage(model, inputs, *inout_specialization, *inout_fence, &next, out_retry));
    hgr_status_t status = hgr_executor_run_async(hgr_specialization_executor(next), &fence);
    if (status) {
      hgr_specialization_release(next);
      return status;
    }
    hgr__model_count_stage(model, 0, 1);
    hgr_fence_release(*inout_fence);
    hgr_specialization_release(*inout_specialization);
    *inout_fence = fence;
    *inout_specialization = next;
  }
  return HGR_OK;
}

/* ---- runs -------------------------------------------------------------------------------- */

hgr_status_t hgr_model_run(hgr_model_t* model, const hgr_model_input_t* inputs, size_t count,
                           hgr_model_run_t** out_run) {
  return hgr_model_run_with_buffers(model, inputs, count, NULL, out_run);
}

/* An int64 input from host memory must fit int32: hgr computes int64 values as
 * int32 (docs/onnx.md, "Dtypes"), and a value past it would otherwise saturate on
 * entry. A device buffer's values are not read here. */
static hgr_status_t check_int64_range(const hgr_model_io_t* io, const hgr_model_input_t* input) {
  if (io->dtype.code != HGR_DTYPE_INT || io->dtype.bits != 64 || !input->data) return HGR_OK;
  size_t count = input->bytes / sizeof(int64_t);
  for (size_t e = 0; e < count; ++e) {
    int64_t value;
    memcpy(&value, (const char*)input->data + e * sizeof(int64_t), sizeof(value));
    if (value < INT32_MIN || value > INT32_MAX)
      return HGR_STATUS(HGR_STATUS_INVALID_ARGUMENT,
                        "element %zu is %lld, outside int32: hgr computes int64 values as int32 (docs/onnx.md, "
                        "\"Dtypes\")", e, (long long)value);
  }
  return HGR_OK;
}

/* Specializes the first stage, sets or binds its inputs and starts its run. */
static hgr_status_t start(hgr_model_t* model, const hgr_model_input_t* inputs,
                          const hgr_device_buffer_t* const* buffers, hgr_specialization_t** out_specialization,
                          hgr_fence_t** out_fence) {
  hgr_specialization_t* s = NULL;
  HGR_RETURN_IF_ERROR(hgr__model_specialize(model, inputs, &s));
  hgr_executor_t* executor = hgr_specialization_executor(s);
  bool staged = hgr__specialization_end(s)->cut;
  hgr_status_t status = HGR_OK;
  for (size_t i = 0; !status && i < hgr_model_input_count(model); ++i) {
    hgr_model_io_t io;
    status = hgr_model_input(model, i, &io);
    if (status || io.decides_shapes) continue; /* a constant of the specialization */
    size_t index = 0;
    status = hgr_executor_input_index(executor, io.name, &index);
    if (!status && !(buffers && buffers[i])) status = check_int64_range(&io, &inputs[i]);
    if (!status && buffers && buffers[i]) {
      status = hgr_executor_bind_device_buffer(executor, index, buffers[i]);
    } else if (!status && staged && inputs[i].bytes) {
      /* The stage's run ends before hgr_model_run returns (next_stage waits for it and
       * unbinds): the caller's data can be read where it lies, without a copy. */
      status = hgr_executor_bind_host(executor, HGR_INPUT, index, (void*)inputs[i].data, inputs[i].bytes);
    } else if (!status) {
      /* An earlier run's device value (or the caller's binding) gives way to the data. */
      if (hgr_executor_binding_kind(executor, HGR_INPUT, index) != HGR_BINDING_NONE)
        status = hgr_executor_unbind(executor, HGR_INPUT, index);
      if (!status) status = hgr_executor_set_input(executor, index, inputs[i].data, inputs[i].bytes);
    }
    if (status) status = hgr_status_annotate(status, "input '%s'", io.name);
  }
  if (!status) status = hgr_executor_run_async(executor, out_fence);
  if (status) {
    if (staged) hgr_status_free(end_host_inputs(s, NULL)); /* no fence: what was enqueued */
    hgr_specialization_release(s);
    return status;
  }
  *out_specialization = s;
  return HGR_OK;
}

hgr_status_t hgr_model_run_with_buffers(hgr_model_t* model, const hgr_model_input_t* inputs, size_t count,
                                        const hgr_device_buffer_t* const* buffers, hgr_model_run_t** out_run) {
  if (!model || !out_run) return HGR_STATUS(HGR_STATUS_INVALID_ARGUMENT, "hgr_model_run: NULL argument");
  *out_run = NULL;
  for (size_t i = 0; i < count && inputs; ++i)
    if (!(buffers && buffers[i]) && !inputs[i].data && inputs[i].bytes)
      return HGR_STATUS(HGR_STATUS_INVALID_ARGUMENT, "input %zu: NULL data", i);
  /* The buffers' checks first; hgr_model_specialize checks the rest again. */
  hgr_instance_t* instance = hgr__model_instance(model);
  if (buffers && instance) HGR_RETURN_IF_ERROR(hgr__model_check_inputs(model, inputs, count, buffers));
  if (!instance)
    return HGR_STATUS(HGR_STATUS_FAILED_PRECONDITION, "the model was created without an instance: it makes graphs "
                      "(hgr_model_graph), not runs");
  HGR_RETURN_IF_ERROR(hgr__model_check_inputs(model, inputs, count, NULL));
  hgr_allocator_t allocator = hgr__model_allocator(model);
  hgr_model_run_t* run = hgr__calloc(allocator, 1, sizeof(*run));
  if (!run) return HGR_STATUS(HGR_STATUS_RESOURCE_EXHAUSTED, "out of host memory");
  run->allocator = allocator;
  hgr_status_t status = HGR_OK;
  /* A later stage may find inputs that decide shapes, which keys the first stage
   * anew: the run then starts again (once per input at most). */
  bool retry = true;
  for (size_t round = 0; !status && retry && round <= hgr_model_input_count(model); ++round) {
    hgr_fence_release(run->fence); /* the round before's */
    hgr_specialization_release(run->specialization);
    run->fence = NULL;
    run->specialization = NULL;
    retry = false;
    status = start(model, inputs, buffers, &run->specialization, &run->fence);
    if (!status) status = run_stages(model, inputs, &run->specialization, &run->fence, &retry);
    if (status && retry) {
      hgr_status_free(status);
      status = HGR_OK;
    }
  }
  if (!status && retry)
    status = HGR_STATUS(HGR_STATUS_INTERNAL, "specializing found inputs that decide shapes in every round");
  if (!status) {
    size_t outputs = hgr_model_output_count(model);
    run->output_names = hgr__calloc(allocator, outputs + 1, sizeof(char*));
    run->output_count = outputs;
    if (!run->output_names) status = HGR_STATUS(HGR_STATUS_RESOURCE_EXHAUSTED, "out of host memory");
    for (size_t i = 0; !status && i < outputs; ++i) {
      hgr_model_io_t io;
      status = hgr_model_output(model, i, &io);
      if (!status) status = hgr__strdup(allocator, io.name, &run->output_names[i]);
    }
  }
  if (status) {
    hgr_model_run_release(run);
    return status;
  }
  *out_run = run;
  return HGR_OK;
}

hgr_status_t hgr_model_run_wait(hgr_model_run_t* run) {
  if (!run) return HGR_STATUS(HGR_STATUS_INVALID_ARGUMENT, "hgr_model_run_wait: NULL run");
  return hgr_fence_wait(run->fence);
}

hgr_status_t hgr_model_run_output_info(const hgr_model_run_t* run, size_t index, hgr_tensor_info_t* out_info) {
  if (!run || !out_info) return HGR_STATUS(HGR_STATUS_INVALID_ARGUMENT, "hgr_model_run_output_info: NULL argument");
  HGR_RETURN_IF_ERROR(hgr_executor_output_info(hgr_specialization_executor(run->specialization), index, out_info));
  if (index < run->output_count) out_info->name = run->output_names[index];
  return HGR_OK;
}

hgr_status_t hgr_model_run_get_output(hgr_model_run_t* run, size_t index, void* data, size_t bytes) {
  if (!run) return HGR_STATUS(HGR_STATUS_INVALID_ARGUMENT, "hgr_model_run_get_output: NULL run");
  return hgr_fence_get_output(run->fence, index, data, bytes);
}

hgr_status_t hgr_model_run_output_buffer(hgr_model_run_t* run, size_t index, hgr_device_buffer_t* out_buffer) {
  if (!out_buffer) return HGR_STATUS(HGR_STATUS_INVALID_ARGUMENT, "hgr_model_run_output_buffer: NULL out_buffer");
  memset(out_buffer, 0, sizeof(*out_buffer));
  if (!run) return HGR_STATUS(HGR_STATUS_INVALID_ARGUMENT, "hgr_model_run_output_buffer: NULL run");
  return hgr_fence_output_buffer(run->fence, index, out_buffer);
}

void hgr_model_run_release(hgr_model_run_t* run) {
  if (!run) return;
  hgr_fence_release(run->fence);
  for (size_t i = 0; run->output_names && i < run->output_count; ++i) hgr__free(run->allocator, run->output_names[i]);
  hgr__free(run->allocator, run->output_names);
  hgr_specialization_release(run->specialization);
  hgr__free(run->allocator, run);
}

