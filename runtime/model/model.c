/* hgr/model.h: a model loaded once and run at any input shape. The ONNX model is
 * parsed once (onnx/onnx_model.h); each key (input shapes, and the values of inputs
 * that decide shapes) gets a specialization: import at those shapes, placement, an
 * executor sharing the weights already on the device. Specializations are cached,
 * bounded and evicted least recently used. A model that needs values its data
 * computes (an If's condition, NonZero's count) runs in stages: each stage a
 * specialization keyed by the one before and the decision it read on the host. */
#include "alloc.h"
#include "hgr/model.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "device_internal.h"
#include "executor_internal.h"
#include "hgr/config.h"
#include "hgr/passes.h"
#include "internal.h"
#include "model_internal.h"
#include "shape.h"
#include "text.h"
#if HGR_HAS_ONNX
#include "onnx_model.h"
#else /* a graph model only: ONNX models are UNIMPLEMENTED */
typedef struct hgr__onnx_model_s hgr__onnx_model_t;
#endif

struct hgr_specialization_s {
  hgr_allocator_t allocator; /* the model's (a specialization may outlive it) */
  uint32_t refs; /* the model's cache (while cached) and each holder */
  uint8_t* key;
  size_t key_bytes;
  hgr_graph_t* graph;
  hgr_executor_t* executor;
  uint64_t device_bytes; /* activations: storage and scratch bytes, shared weights not counted */
  uint64_t last_used;
  /* The params whose buffers hold the model's weights (equal to the first
   * specialization's), sorted: what a later specialization may share from this one. */
  char** weight_names;
  size_t weight_name_count;
  /* A model that decides at run time runs in stages (docs/onnx.md, "Decisions at run
   * time"): the decisions this stage was made with, and where it ends. */
  hgr__decision_t* decisions;
  size_t decision_count;
  hgr__stage_end_t end;
};

typedef struct model_input_t {
  hgr_model_io_t io;
  size_t source_index; /* its index among the ONNX model's inputs (hgr__onnx_model_input) or the graph's */
} model_input_t;

struct hgr_model_s {
  hgr_allocator_t allocator;        /* the instance's (the system's without one): all the model holds */
  hgr_instance_t* instance;
  hgr_model_options_t options;
  hgr_onnx_options_t* onnx_options; /* the caller's, copied; specializations add shapes to copies */
  hgr__onnx_model_t* onnx;          /* NULL for a graph model */
  hgr_graph_t* graph;               /* a graph model's graph; NULL for ONNX */
  hgr_params_t* params;             /* a graph model's params (may be NULL) */
  model_input_t* inputs;
  size_t input_count;
  hgr_model_io_t* outputs;
  size_t output_count;
  hgr_params_t* weights;            /* the first specialization's params: later ones share what equals them */
  hgr_program_pool_t* programs;     /* every specialization's programs, built once */
  hgr_specialization_t** cache;
  size_t cache_count, cache_capacity;
  uint64_t clock;
  hgr_model_report_t report;
  hgr_device_binding_t default_binding; /* hgr__model_bind_default's */
};

void hgr_model_options_init(hgr_model_options_t* options) {
  memset(options, 0, sizeof(*options));
  hgr_executor_options_init(&options->executor);
}

/* ---- inputs and outputs ------------------------------------------------------------- */

#if HGR_HAS_ONNX
/* io's name, rank, dims and their names, and dtype, as the parsed model gives them. */
static void describe_io(hgr_model_io_t* io, const hgr__onnx_io_t* from) {
  io->name = from->name;
  io->dtype = from->dtype; /* zeroed for a type hgr does not take at the edge */
  io->ndim = from->ndim;
  memcpy(io->dims, from->dims, sizeof(from->dims));
  memcpy(io->dim_names, from->dim_names, sizeof(from->dim_names));
}

static hgr_status_t describe_onnx(hgr_model_t* model) {
  size_t count = hgr__onnx_model_input_count(model->onnx);
  model->inputs = hgr__calloc(model->allocator, count + 1, sizeof(*model->inputs));
  model->output_count = hgr__onnx_model_output_count(model->onnx);
  model->outputs = hgr__calloc(model->allocator, model->output_count + 1, sizeof(*model->outputs));
  if (!model->inputs || !model->outputs) return HGR_STATUS(HGR_STATUS_RESOURCE_EXHAUSTED, "out of host memory");
  for (size_t i = 0; i < count; ++i) {
    hgr__onnx_io_t io;
    HGR_RETURN_IF_ERROR(hgr__onnx_model_input(model->onnx, i, &io));
    if (hgr__onnx_options_fixes(model->onnx_options, io.name)) continue; /* a constant from now on */
    model_input_t* in = &model->inputs[model->input_count++];
    in->source_index = i;
    describe_io(&in->io, &io);
    if (!io.dtype.bits && !io.type_name)
      return HGR_STATUS(HGR_STATUS_UNIMPLEMENTED, "graph input '%s' is not a tensor with an element type; hgr takes "
                        "tensors", io.name);
    if (!io.dtype.bits)
      return HGR_STATUS(HGR_STATUS_UNIMPLEMENTED, "graph input '%s' is %s; hgr takes float, float16, bfloat16, "
                        "int8, uint8, int16, uint16, int32, int64 and bool inputs", io.name, io.type_name);
  }
  for (size_t i = 0; i < model->output_count; ++i) {
    hgr__onnx_io_t io;
    HGR_RETURN_IF_ERROR(hgr__onnx_model_output(model->onnx, i, &io));
    describe_io(&model->outputs[i], &io);
  }
  return HGR_OK;
}

#endif

/* A graph model: its inputs not given by params, at the graph's shapes; its outputs. */
static hgr_status_t describe_graph(hgr_model_t* model) {
  size_t count = hgr_graph_input_count(model->graph);
  model->output_count = hgr_graph_output_count(model->graph);
  model->inputs = hgr__calloc(model->allocator, count + 1, sizeof(*model->inputs));
  model->outputs = hgr__calloc(model->allocator, model->output_count + 1, sizeof(*model->outputs));
  if (!model->inputs || !model->outputs) return HGR_STATUS(HGR_STATUS_RESOURCE_EXHAUSTED, "out of host memory");
  for (size_t i = 0; i < count; ++i) {
    hgr_tensor_info_t info;
    HGR_RETURN_IF_ERROR(hgr_graph_input_info(model->graph, i, &info));
    size_t found;
    hgr_status_t missing = model->params ? hgr_params_find(model->params, info.name, &found) : HGR_OK;
    if (model->params && !missing) continue; /* a weight */
    hgr_status_free(missing);
    model_input_t* in = &model->inputs[model->input_count++];
    in->source_index = i;
    in->io.name = info.name;
    in->io.dtype = info.dtype;
    in->io.ndim = info.ndim;
    for (int32_t d = 0; d < info.ndim; ++d) in->io.dims[d] = info.shape[d];
  }
  for (size_t i = 0; i < model->output_count; ++i) {
    hgr_tensor_info_t info;
    HGR_RETURN_IF_ERROR(hgr_graph_output_info(model->graph, i, &info));
    hgr_model_io_t* out = &model->outputs[i];
    out->name = info.name;
    out->dtype = info.dtype;
    out->ndim = info.ndim;
    for (int32_t d = 0; d < info.ndim; ++d) out->dims[d] = info.shape[d];
  }
  return HGR_OK;
}

size_t hgr_model_input_count(const hgr_model_t* model) { return model ? model->input_count : 0; }

size_t hgr_model_output_count(const hgr_model_t* model) { return model ? model->output_count : 0; }

hgr_status_t hgr_model_input(const hgr_model_t* model, size_t index, hgr_model_io_t* out_io) {
  if (!model || !out_io) return HGR_STATUS(HGR_STATUS_INVALID_ARGUMENT, "hgr_model_input: NULL argument");
  if (index >= model->input_count)
    return HGR_STATUS(HGR_STATUS_OUT_OF_RANGE, "input %zu: the model has %zu inputs", index, model->input_count);
  *out_io = model->inputs[index].io;
  return HGR_OK;
}

hgr_status_t hgr_model_output(const hgr_model_t* model, size_t index, hgr_model_io_t* out_io) {
  if (!model || !out_io) return HGR_STATUS(HGR_STATUS_INVALID_ARGUMENT, "hgr_model_output: NULL argument");
  if (index >= model->output_count)
    return HGR_STATUS(HGR_STATUS_OUT_OF_RANGE, "output %zu: the model has %zu outputs", index, model->output_count);
  *out_io = model->outputs[index];
  return HGR_OK;
}

hgr_status_t hgr_model_input_index(const hgr_model_t* model, const char* name, size_t* out_index) {
  if (!model || !name || !out_index)
    return HGR_STATUS(HGR_STATUS_INVALID_ARGUMENT, "hgr_model_input_index: NULL argument");
  for (size_t i = 0; i < model->input_count; ++i)
    if (!strcmp(model->inputs[i].io.name, name)) {
      *out_index = i;
      return HGR_OK;
    }
  hgr__text_t list = {0}; /* the system's: for the status message, as statuses are */
  for (size_t i = 0; i < model->input_count; ++i)
    hgr__text_appendf(&list, "%s'%s'", i ? ", " : "", model->inputs[i].io.name);
  char* names = hgr__text_take(&list);
  hgr_status_t status = HGR_STATUS(HGR_STATUS_NOT_FOUND, "the model has no input '%s'; its inputs are %s", name,
                                   names && names[0] ? names : "none");
  hgr__free(hgr_allocator_system(), names);
  return status;
}

/* ---- checking a run's inputs ------------------------------------------------------------ */

/* buffers: NULL, or per input a device value's buffer (NULL for host data). */
hgr_status_t hgr__model_check_inputs(const hgr_model_t* model, const hgr_model_input_t* inputs, size_t count,
                                 const hgr_device_buffer_t* const* buffers) {
  if (count != model->input_count || (count && !inputs))
    return HGR_STATUS(HGR_STATUS_INVALID_ARGUMENT, "%zu inputs given; the model takes %zu", count,
                      model->input_count);
  for (size_t i = 0; i < count; ++i) {
    const hgr_model_io_t* io = &model->inputs[i].io;
    const hgr_model_input_t* in = &inputs[i];
    char want[32], got[32];
    if (!hgr_dtype_equal(in->dtype, io->dtype))
      return HGR_STATUS(HGR_STATUS_INVALID_ARGUMENT, "input '%s' is %s; %s was given", io->name,
                        hgr_dtype_format(io->dtype, want, sizeof(want)), hgr_dtype_format(in->dtype, got, sizeof(got)));
    if (in->ndim < 0 || in->ndim > HGR_MAX_DIMS || (in->ndim && !in->shape))
      return HGR_STATUS(HGR_STATUS_INVALID_ARGUMENT, "input '%s': %d dimensions given; hgr holds 0 to %d", io->name,
                        (int)in->ndim, HGR_MAX_DIMS);
    if (io->ndim >= 0 && in->ndim != io->ndim)
      return HGR_STATUS(HGR_STATUS_INVALID_ARGUMENT, "input '%s' has rank %d in the model; the input given has rank %d",
                        io->name, (int)io->ndim, (int)in->ndim);
    for (int32_t d = 0; d < in->ndim; ++d) {
      if (in->shape[d] < 0)
        return HGR_STATUS(HGR_STATUS_INVALID_ARGUMENT, "input '%s': dimension %d is %lld", io->name, (int)d,
                          (long long)in->shape[d]);
      if (io->ndim >= 0 && io->dims[d] >= 0 && in->shape[d] != io->dims[d])
        return HGR_STATUS(HGR_STATUS_INVALID_ARGUMENT, "input '%s': dimension %d is %lld in the model; the input "
                          "given has %lld", io->name, (int)d, (long long)io->dims[d], (long long)in->shape[d]);
      if (io->ndim < 0 || !io->dim_names[d]) continue;
      for (size_t j = 0; j <= i; ++j) { /* a named dim takes one value across the inputs */
        const hgr_model_io_t* other = &model->inputs[j].io;
        for (int32_t e = 0; e < (j == i ? d : other->ndim); ++e)
          if (other->dim_names[e] && !strcmp(other->dim_names[e], io->dim_names[d]) &&
              inputs[j].shape[e] != in->shape[d])
            return HGR_STATUS(HGR_STATUS_INVALID_ARGUMENT, "input '%s': dimension %d ('%s') is %lld, but input '%s' "
                              "dimension %d, of the same name, is %lld", io->name, (int)d, io->dim_names[d],
                              (long long)in->shape[d], other->name, (int)e, (long long)inputs[j].shape[e]);
      }
    }
    uint64_t want_bytes = 0;
    if (!hgr__shape_size(in->shape, in->ndim, hgr_dtype_element_bytes(in->dtype), NULL, &want_bytes))
      return HGR_STATUS(HGR_STATUS_INVALID_ARGUMENT, "input '%s': the shape's element count exceeds 2^63 - 1",
                        io->name);
    const hgr_device_buffer_t* buffer = buffers ? buffers[i] : NULL;
    if (buffer && buffer->bytes != want_bytes)
      return HGR_STATUS(HGR_STATUS_INVALID_ARGUMENT, "input '%s': a device buffer of %zu bytes given for a shape of "
                        "%llu bytes", io->name, buffer->bytes, (unsigned long long)want_bytes);
    if (buffer && io->decides_shapes)
      return HGR_STATUS(HGR_STATUS_INVALID_ARGUMENT, "input '%s' decides shapes: give its values as host data, not "
                        "as a device buffer", io->name);
    if (!buffer && in->data && in->bytes != want_bytes)
      return HGR_STATUS(HGR_STATUS_INVALID_ARGUMENT, "input '%s': %zu bytes given for a shape of %llu bytes",
                        io->name, in->bytes, (unsigned long long)want_bytes);
  }
  return HGR_OK;
}

/* ---- keys ---------------------------------------------------------------------------- */

/* The key of inputs: per input its shape, and the bytes of those that decide shapes. */
static hgr_status_t make_key(const hgr_model_t* model, const hgr_model_input_t* inputs, uint8_t** out_key,
                             size_t* out_bytes) {
  size_t bytes = 0;
  for (size_t i = 0; i < model->input_count; ++i) {
    bytes += sizeof(int32_t) + (size_t)inputs[i].ndim * sizeof(int64_t);
    if (model->inputs[i].io.decides_shapes) {
      if (!inputs[i].data)
        return HGR_STATUS(HGR_STATUS_INVALID_ARGUMENT, "input '%s' decides shapes: its data is needed to specialize "
                          "(on the host)", model->inputs[i].io.name);
      bytes += inputs[i].bytes;
    }
  }
  uint8_t* key = hgr__alloc(model->allocator, bytes ? bytes : 1);
  if (!key) return HGR_STATUS(HGR_STATUS_RESOURCE_EXHAUSTED, "out of host memory");
  size_t at = 0;
  for (size_t i = 0; i < model->input_count; ++i) {
    memcpy(key + at, &inputs[i].ndim, sizeof(int32_t));
    at += sizeof(int32_t);
    if (inputs[i].ndim) memcpy(key + at, inputs[i].shape, (size_t)inputs[i].ndim * sizeof(int64_t));
    at += (size_t)inputs[i].ndim * sizeof(int64_t);
    if (model->inputs[i].io.decides_shapes && inputs[i].bytes) {
      memcpy(key + at, inputs[i].data, inputs[i].bytes);
      at += inputs[i].bytes;
    }
  }
  *out_key = key;
  *out_bytes = bytes;
  return HGR_OK;
}

/* ---- specializations --------------------------------------------------------------------- */

static void free_names(hgr_allocator_t allocator, char** names, size_t count) {
  for (size_t i = 0; names && i < count; ++i) hgr__free(allocator, names[i]);
  hgr__free(allocator, names);
}

void hgr__decisions_free(hgr_allocator_t allocator, hgr__decision_t* decisions, size_t count) {
  for (size_t i = 0; decisions && i < count; ++i) hgr__free(allocator, decisions[i].data);
  hgr__free(allocator, decisions);
}

static void specialization_free(hgr_specialization_t* s) {
  free_names(s->allocator, s->weight_names, s->weight_name_count);
  hgr__decisions_free(s->allocator, s->decisions, s->decision_count);
  hgr_executor_release(s->executor);
  hgr_graph_release(s->graph);
  hgr__free(s->allocator, s->key);
  hgr__free(s->allocator, s);
}

void hgr_specialization_release(hgr_specialization_t* specialization) {
  if (specialization && --specialization->refs == 0) specialization_free(specialization);
}

hgr_executor_t* hgr_specialization_executor(const hgr_specialization_t* specialization) {
  return specialization ? specialization->executor : NULL;
}

static void drop(hgr_model_t* model, size_t index) {
  hgr_specialization_t* s = model->cache[index];
  model->report.device_bytes -= s->device_bytes;
  model->cache[index] = model->cache[--model->cache_count];
  ++model->report.evicted;
  hgr_specialization_release(s);
}

/* Evicts the least recently used specializations no one holds until the cache is
 * within its bounds (keep stays). */
static void evict(hgr_model_t* model, const hgr_specialization_t* keep) {
  uint32_t max_count = model->options.max_specializations ? model->options.max_specializations
                                                          : HGR_MODEL_DEFAULT_MAX_SPECIALIZATIONS;
  uint64_t max_bytes = model->options.max_device_bytes ? model->options.max_device_bytes
                                                       : HGR_MODEL_DEFAULT_MAX_DEVICE_BYTES;
  while (model->cache_count > max_count || model->report.device_bytes > max_bytes) {
    size_t victim = SIZE_MAX;
    for (size_t i = 0; i < model->cache_count; ++i) {
      const hgr_specialization_t* s = model->cache[i];
      if (s == keep || s->refs > 1) continue; /* held: a pending run or a caller uses it */
      if (victim == SIZE_MAX || s->last_used < model->cache[victim]->last_used) victim = i;
    }
    if (victim == SIZE_MAX) return;
    drop(model, victim);
  }
}

static int compare_names(const void* a, const void* b) {
  return strcmp(*(const char* const*)a, *(const char* const*)b);
}

/* Whether param i of params equals the model's weight of its name (dtype, shape,
 * bytes and contents); *out_name and *out_bytes describe it. */
static bool equals_weight(const hgr_model_t* model, const hgr_params_t* params, size_t i, const char** out_name,
                          uint64_t* out_bytes) {
  hgr_tensor_info_t mine, theirs;
  const void *my_data, *their_data;
  size_t at;
  if (hgr_params_get(params, i, &mine, &my_data)) return false;
  *out_name = mine.name;
  *out_bytes = mine.bytes;
  if (!model->weights) return true; /* the first specialization's params are the weights */
  hgr_status_t status = hgr_params_find(model->weights, mine.name, &at);
  if (status) {
    hgr_status_free(status);
    return false;
  }
  return !hgr_params_get(model->weights, at, &theirs, &their_data) && hgr_dtype_equal(mine.dtype, theirs.dtype) &&
         mine.ndim == theirs.ndim && mine.bytes == theirs.bytes &&
         !memcmp(mine.shape, theirs.shape, (size_t)mine.ndim * sizeof(int64_t)) &&
         !memcmp(my_data, their_data, (size_t)mine.bytes);
}

/* Of params, the names whose contents equal the model's weights (*out_weights,
 * copies, sorted: the new specialization's weight_names) and, of those, the ones
 * source also holds as weights (*out_shared, borrowed from params: what the new
 * executor shares from source's buffers; source may be NULL). */
static hgr_status_t weight_names(const hgr_model_t* model, const hgr_params_t* params,
                                 const hgr_specialization_t* source, char*** out_weights, size_t* out_weight_count,
                                 const char*** out_shared, size_t* out_shared_count, uint64_t* out_shared_bytes) {
  size_t count = params ? hgr_params_count(params) : 0;
  char** weights = hgr__calloc(model->allocator, count + 1, sizeof(*weights));
  const char** shared = hgr__calloc(model->allocator, count + 1, sizeof(*shared));
  size_t weight_count = 0, shared_count = 0;
  uint64_t shared_bytes = 0;
  hgr_status_t status = weights && shared ? HGR_OK : HGR_STATUS(HGR_STATUS_RESOURCE_EXHAUSTED, "out of host memory");
  for (size_t i = 0; !status && i < count; ++i) {
    const char* name = NULL;
    uint64_t bytes = 0;
    if (!equals_weight(model, params, i, &name, &bytes)) continue;
    status = hgr__strdup(model->allocator, name, &weights[weight_count]);
    if (status) break;
    ++weight_count;
    if (source && bsearch(&name, source->weight_names, source->weight_name_count, sizeof(char*), compare_names)) {
      shared[shared_count++] = name;
      shared_bytes += bytes;
    }
  }
  if (status) {
    free_names(model->allocator, weights, weight_count);
    hgr__free(model->allocator, shared);
    return status;
  }
  qsort(weights, weight_count, sizeof(*weights), compare_names);
  *out_weights = weights;
  *out_weight_count = weight_count;
  *out_shared = shared;
  *out_shared_count = shared_count;
  *out_shared_bytes = shared_bytes;
  return HGR_OK;
}

/* The most recently used cached specialization: the source of shared weights. */
static hgr_specialization_t* latest(const hgr_model_t* model) {
  hgr_specialization_t* best = NULL;
  for (size_t i = 0; i < model->cache_count; ++i)
    if (!best || model->cache[i]->last_used > best->last_used) best = model->cache[i];
  return best;
}

static double since_ms(uint64_t start_ns) { return (double)(hgr__monotonic_ns() - start_ns) / 1e6; }

#if HGR_HAS_ONNX
/* The graph and params of an ONNX model at these inputs; *out_retry when the import
 * found inputs that decide shapes not yet known as such (then the caller keys again).
 * out_end NULL: the whole model in one graph (a decision at run time is refused);
 * else the stage after `before` (NULL: the first), made with decisions (count), and
 * where it ends. */
static hgr_status_t import_onnx(hgr_model_t* model, const hgr_model_input_t* inputs, const hgr__stage_end_t* before,
                                const hgr__decision_t* decisions, size_t decision_count, hgr__stage_end_t* out_end,
                                hgr_graph_t** out_graph, hgr_params_t** out_params, bool* out_retry) {
  *out_retry = false;
  hgr_onnx_options_t* options = NULL;
  HGR_RETURN_IF_ERROR(hgr__onnx_options_clone(model->allocator, model->onnx_options, &options));
  hgr_status_t status = HGR_OK;
  for (size_t i = 0; !status && i < model->input_count; ++i) {
    const hgr_model_io_t* io = &model->inputs[i].io;
    const hgr_model_input_t* in = &inputs[i];
    status = io->decides_shapes
                 ? hgr_onnx_options_set_input_value(options, io->name, in->dtype, in->shape, in->ndim, in->data,
                                                    in->bytes)
                 : hgr_onnx_options_set_input_shape(options, io->name, in->shape, in->ndim);
  }
  size_t onnx_inputs = hgr__onnx_model_input_count(model->onnx);
  bool* deciding = hgr__calloc(model->allocator, onnx_inputs + 1, sizeof(*deciding));
  if (!status && !deciding) status = HGR_STATUS(HGR_STATUS_RESOURCE_EXHAUSTED, "out of host memory");
  hgr__onnx_stage_t stage;
  memset(&stage, 0, sizeof(stage));
  hgr__onnx_decision_t* taken = hgr__calloc(model->allocator, decision_count + 1, sizeof(*taken));
  if (!status && !taken) status = HGR_STATUS(HGR_STATUS_RESOURCE_EXHAUSTED, "out of host memory");
  for (size_t i = 0; !status && i < decision_count; ++i)
    taken[i] = (hgr__onnx_decision_t){decisions[i].dtype, decisions[i].ndim, {0}, decisions[i].data,
                                      decisions[i].bytes};
  for (size_t i = 0; !status && i < decision_count; ++i)
    memcpy(taken[i].shape, decisions[i].shape, sizeof(taken[i].shape));
  stage.decisions = taken;
  stage.decision_count = decision_count;
  if (before) {
    stage.resume = before->at;
    stage.resume_after = before->after;
    stage.resume_asked = before->at_asked;
    stage.resume_in_loop = before->in_loop;
  }
  if (!status)
    status = hgr__onnx_model_import_stage(model->onnx, options, out_end ? &stage : NULL, out_graph, out_params,
                                          &model->report.onnx, deciding);
  hgr__free(model->allocator, taken);
  if (!status && out_end) {
    *out_end = (hgr__stage_end_t){stage.cut, stage.at, stage.after, stage.at_asked, stage.in_loop, stage.carried,
                             stage.payloads, ""};
    memcpy(out_end->label, stage.label, sizeof(out_end->label));
  }
  if (status && hgr_status_code(status) == HGR_STATUS_UNIMPLEMENTED) {
    for (size_t i = 0; i < model->input_count; ++i)
      if (deciding[model->inputs[i].source_index] && !model->inputs[i].io.decides_shapes) {
        model->inputs[i].io.decides_shapes = true;
        *out_retry = true;
      }
  }
  hgr__free(model->allocator, deciding);
  hgr_onnx_options_release(options);
  return status;
}

#else
static hgr_status_t import_onnx(hgr_model_t* model, const hgr_model_input_t* inputs, const hgr__stage_end_t* before,
                                const hgr__decision_t* decisions, size_t decision_count, hgr__stage_end_t* out_end,
                                hgr_graph_t** out_graph, hgr_params_t** out_params, bool* out_retry) {
  (void)model, (void)inputs, (void)before, (void)decisions, (void)decision_count, (void)out_end, (void)out_graph,
      (void)out_params;
  *out_retry = false;
  return HGR_STATUS(HGR_STATUS_UNIMPLEMENTED, "this hgr is built without ONNX (HGR_ONNX off)");
}
#endif

static hgr_status_t place(hgr_model_t* model, hgr_graph_t** inout_graph) {
  if (!model->options.place) return HGR_OK;
  hgr_placement_t* placement = NULL;
  HGR_RETURN_IF_ERROR(hgr_place(model->instance, *inout_graph, model->options.place, &placement));
  hgr_graph_t* placed = hgr_graph_retain(hgr_placement_graph(placement));
  hgr_placement_release(placement);
  hgr_graph_release(*inout_graph);
  *inout_graph = placed;
  return HGR_OK;
}

/* Whether the model's specializations can differ in shape: an input with a dim not
 * fixed (or no shape), or one that decides shapes. */
static bool shapes_vary(const hgr_model_t* model) {
  for (size_t i = 0; i < model->input_count; ++i) {
    const hgr_model_io_t* io = &model->inputs[i].io;
    if (io->decides_shapes || io->ndim < 0) return true;
    for (int32_t d = 0; d < io->ndim; ++d)
      if (io->dims[d] < 0) return true;
  }
  return false;
}

/* An executor of graph with params, sharing from the latest specialization the
 * buffers of the params equal to the model's weights that it holds as weights too
 * (the same name alone is not enough: a shape-dependent constant may differ); the
 * names of params equal to the weights go to s. */
static hgr_status_t make_executor(hgr_model_t* model, hgr_graph_t* graph, hgr_params_t* params,
                                  hgr_specialization_t* s, hgr_executor_t** out_executor) {
  hgr_executor_options_t options = model->options.executor;
  options.params = params;
  options.program_pool = model->programs;
  /* its programs then hold the kernels ops pick at other shapes too */
  hgr__program_pool_set_siblings(model->programs, shapes_vary(model));
  options.share_params_from = NULL;
  options.share_param_names = NULL;
  options.share_param_name_count = 0;
  hgr_specialization_t* source = latest(model);
  const char** shared = NULL;
  size_t shared_count = 0;
  model->report.shared_weight_bytes = 0;
  if (model->onnx)
    HGR_RETURN_IF_ERROR(weight_names(model, params, source, &s->weight_names, &s->weight_name_count, &shared,
                                     &shared_count, &model->report.shared_weight_bytes));
  if (source && shared_count) {
    options.share_params_from = source->executor;
    options.share_param_names = shared;
    options.share_param_name_count = shared_count;
  }
  hgr_status_t status = hgr_executor_create(model->instance, graph, &options, out_executor);
  hgr__free(model->allocator, shared);
  return status;
}

static uint64_t activation_bytes(const hgr_executor_t* executor) {
  uint64_t bytes = 0;
  for (size_t d = 0; d < hgr_executor_device_count(executor); ++d) {
    hgr_device_usage_t usage = hgr_executor_device_usage(executor, d);
    bytes += usage.storage_bytes + usage.scratch_bytes;
  }
  return bytes;
}

/* A new specialization for key: import (ONNX) or the model's graph, placement, an
 * executor; for the stage after `before` (NULL: the first), made with decisions
 * (count; the specialization takes them, also on failure). *out_retry as import_onnx. */
static hgr_status_t create(hgr_model_t* model, const hgr_model_input_t* inputs, uint8_t* key, size_t key_bytes,
                           const hgr__stage_end_t* before, hgr__decision_t* decisions, size_t decision_count,
                           hgr_specialization_t** out, bool* out_retry) {
  *out_retry = false;
  hgr_graph_t* graph = NULL;
  hgr_params_t* params = NULL;
  uint64_t start = hgr__monotonic_ns();
  hgr_status_t status = HGR_OK;
  hgr__stage_end_t end;
  memset(&end, 0, sizeof(end));
  if (model->onnx) {
    status = import_onnx(model, inputs, before, decisions, decision_count, &end, &graph, &params, out_retry);
  } else { /* a graph fixes every dim, which check_inputs compared */
    graph = hgr_graph_retain(model->graph);
  }
  model->report.import_ms = since_ms(start);
  start = hgr__monotonic_ns();
  if (!status) status = place(model, &graph);
  model->report.place_ms = since_ms(start);
  start = hgr__monotonic_ns();
  hgr_executor_t* executor = NULL;
  hgr_specialization_t* s = status ? NULL : hgr__calloc(model->allocator, 1, sizeof(*s));
  if (!status && !s) status = HGR_STATUS(HGR_STATUS_RESOURCE_EXHAUSTED, "out of host memory");
  if (!status) status = make_executor(model, graph, model->onnx ? params : model->params, s, &executor);
  model->report.executor_ms = since_ms(start);
  model->report.programs = executor ? hgr_executor_program_stats(executor) : (hgr_program_stats_t){0};
  if (status) {
    if (s) free_names(model->allocator, s->weight_names, s->weight_name_count);
    hgr__decisions_free(model->allocator, decisions, decision_count);
    hgr__free(model->allocator, s);
    hgr_executor_release(executor);
    hgr_graph_release(graph);
    hgr_params_release(params);
    return status;
  }
  if (model->onnx && !model->weights) model->weights = params; /* what later specializations share */
  else hgr_params_release(params);
  s->allocator = model->allocator;
  s->refs = 1;
  s->key = key;
  s->key_bytes = key_bytes;
  s->graph = graph;
  s->executor = executor;
  s->device_bytes = activation_bytes(executor);
  s->decisions = decisions;
  s->decision_count = decision_count;
  s->end = end;
  *out = s;
  return HGR_OK;
}

static hgr_status_t cache_add(hgr_model_t* model, hgr_specialization_t* s) {
  if (model->cache_count == model->cache_capacity) {
    size_t capacity = model->cache_capacity ? 2 * model->cache_capacity : 8;
    hgr_specialization_t** grown = hgr__realloc_array(model->allocator, model->cache, capacity, sizeof(*grown));
    if (!grown) return HGR_STATUS(HGR_STATUS_RESOURCE_EXHAUSTED, "out of host memory");
    model->cache = grown;
    model->cache_capacity = capacity;
  }
  model->cache[model->cache_count++] = s;
  model->report.device_bytes += s->device_bytes;
  return HGR_OK;
}

/* The cached specialization of key, held for the caller (the key is freed), or NULL. */
static hgr_specialization_t* find(hgr_model_t* model, uint8_t* key, size_t key_bytes) {
  for (size_t i = 0; i < model->cache_count; ++i) {
    hgr_specialization_t* s = model->cache[i];
    if (s->key_bytes != key_bytes || memcmp(s->key, key, key_bytes)) continue;
    hgr__free(model->allocator, key);
    s->last_used = ++model->clock;
    ++model->report.hits;
    ++s->refs;
    return s;
  }
  return NULL;
}

/* Caches a new specialization s, held for the caller too. */
static hgr_status_t keep(hgr_model_t* model, hgr_specialization_t* s) {
  s->last_used = ++model->clock;
  hgr_status_t status = cache_add(model, s);
  if (status) {
    specialization_free(s);
    return status;
  }
  ++model->report.created;
  ++s->refs; /* the caller's */
  evict(model, s);
  return HGR_OK;
}

/* hgr_model_specialize for checked inputs (model_internal.h): the first stage's. */
hgr_status_t hgr__model_specialize(hgr_model_t* model, const hgr_model_input_t* inputs,
                               hgr_specialization_t** out_specialization) {
  /* Each round either finds or makes the specialization, or learns of at least one
   * more input that decides shapes, so it ends within input_count + 1 rounds. */
  for (size_t round = 0; round <= model->input_count; ++round) {
    uint8_t* key = NULL;
    size_t key_bytes = 0;
    HGR_RETURN_IF_ERROR(make_key(model, inputs, &key, &key_bytes));
    if ((*out_specialization = find(model, key, key_bytes))) return HGR_OK;
    hgr_specialization_t* s = NULL;
    bool retry = false;
    hgr_status_t status = create(model, inputs, key, key_bytes, NULL, NULL, 0, &s, &retry);
    if (status) {
      hgr__free(model->allocator, key);
      if (retry) {
        hgr_status_free(status);
        continue;
      }
      return status;
    }
    HGR_RETURN_IF_ERROR(keep(model, s));
    *out_specialization = s;
    return HGR_OK;
  }
  return HGR_STATUS(HGR_STATUS_INTERNAL, "specializing found inputs that decide shapes in every round");
}

hgr_status_t hgr_model_specialize(hgr_model_t* model, const hgr_model_input_t* inputs, size_t count,
                                  hgr_specialization_t** out_specialization) {
  if (!model || !out_specialization)
    return HGR_STATUS(HGR_STATUS_INVALID_ARGUMENT, "hgr_model_specialize: NULL argument");
  *out_specialization = NULL;
  if (!model->instance)
    return HGR_STATUS(HGR_STATUS_FAILED_PRECONDITION, "the model was created without an instance: it makes graphs "
                      "(hgr_model_graph), not executors");
  HGR_RETURN_IF_ERROR(hgr__model_check_inputs(model, inputs, count, NULL));
  hgr_specialization_t* s = NULL;
  HGR_RETURN_IF_ERROR(hgr__model_specialize(model, inputs, &s));
  if (s->end.cut) {
    hgr_status_t status = HGR_STATUS(HGR_STATUS_FAILED_PRECONDITION, "the model decides at run time (%s): no one "
                                     "executor runs it; run it with hgr_model_run, which runs it in stages",
                                     s->end.label);
    hgr_specialization_release(s);
    return status;
  }
  *out_specialization = s;
  return HGR_OK;
}

/* ---- stages (the runs: model_run.c) ------------------------------------------------------ */

/* The key of the stage after s with decision d: s's key, then d's shape and bytes. */
static hgr_status_t stage_key(hgr_model_t* model, const hgr_specialization_t* s, const hgr__decision_t* d,
                              uint8_t** out_key, size_t* out_bytes) {
  size_t shape_bytes = sizeof(int32_t) + (size_t)d->ndim * sizeof(int64_t);
  size_t bytes = s->key_bytes + shape_bytes + d->bytes;
  uint8_t* key = hgr__alloc(model->allocator, bytes);
  if (!key) return HGR_STATUS(HGR_STATUS_RESOURCE_EXHAUSTED, "out of host memory");
  memcpy(key, s->key, s->key_bytes);
  memcpy(key + s->key_bytes, &d->ndim, sizeof(int32_t));
  memcpy(key + s->key_bytes + sizeof(int32_t), d->shape, (size_t)d->ndim * sizeof(int64_t));
  memcpy(key + s->key_bytes + shape_bytes, d->data, d->bytes);
  *out_key = key;
  *out_bytes = bytes;
  return HGR_OK;
}

hgr_status_t hgr__model_stage_after(hgr_model_t* model, const hgr_model_input_t* inputs, hgr_specialization_t* s,
                                    hgr__decision_t* decisions, hgr_specialization_t** out_next, bool* out_retry) {
  *out_next = NULL;
  size_t count = s->decision_count + 1;
  uint8_t* key = NULL;
  size_t key_bytes = 0;
  hgr_status_t status = stage_key(model, s, &decisions[count - 1], &key, &key_bytes);
  if (status) {
    hgr__decisions_free(model->allocator, decisions, count);
    return status;
  }
  if ((*out_next = find(model, key, key_bytes))) {
    hgr__decisions_free(model->allocator, decisions, count);
    return HGR_OK;
  }
  hgr_specialization_t* next = NULL;
  status = create(model, inputs, key, key_bytes, &s->end, decisions, count, &next, out_retry);
  if (status) {
    hgr__free(model->allocator, key);
    return status;
  }
  HGR_RETURN_IF_ERROR(keep(model, next));
  *out_next = next;
  return HGR_OK;
}

const hgr__stage_end_t* hgr__specialization_end(const hgr_specialization_t* s) { return &s->end; }

const hgr__decision_t* hgr__specialization_decisions(const hgr_specialization_t* s, size_t* out_count) {
  *out_count = s->decision_count;
  return s->decisions;
}

void hgr__model_count_stage(hgr_model_t* model, uint64_t decisions, uint64_t stage_runs) {
  model->report.decisions += decisions;
  model->report.stage_runs += stage_runs;
}

hgr_status_t hgr_model_graph(hgr_model_t* model, const hgr_model_input_t* inputs, size_t count,
                             hgr_graph_t** out_graph, hgr_params_t** out_params) {
  if (!model || !out_graph || !out_params)
    return HGR_STATUS(HGR_STATUS_INVALID_ARGUMENT, "hgr_model_graph: NULL argument");
  *out_graph = NULL;
  *out_params = NULL;
  HGR_RETURN_IF_ERROR(hgr__model_check_inputs(model, inputs, count, NULL));
  if (!model->onnx) {
    *out_graph = hgr_graph_retain(model->graph);
    hgr_status_t status = model->params ? hgr__params_copy(model->allocator, model->params, out_params)
                                        : hgr__params_create_in(model->allocator, out_params);
    if (status) {
      hgr_graph_release(*out_graph);
      *out_graph = NULL;
    }
    return status;
  }
  for (size_t round = 0; round <= model->input_count; ++round) { /* as hgr_model_specialize */
    for (size_t i = 0; i < model->input_count; ++i)
      if (model->inputs[i].io.decides_shapes && !inputs[i].data)
        return HGR_STATUS(HGR_STATUS_INVALID_ARGUMENT, "input '%s' decides shapes: its data is needed to specialize",
                          model->inputs[i].io.name);
    bool retry = false;
    uint64_t start = hgr__monotonic_ns();
    hgr_status_t status = import_onnx(model, inputs, NULL, NULL, 0, NULL, out_graph, out_params, &retry);
    model->report.import_ms = since_ms(start);
    if (!status || !retry) return status;
    hgr_status_free(status);
  }
  return HGR_STATUS(HGR_STATUS_INTERNAL, "specializing found inputs that decide shapes in every round");
}

/* ---- creation ------------------------------------------------------------------------- */

static hgr_status_t model_new(hgr_instance_t* instance, const hgr_model_options_t* options, hgr_model_t** out_model) {
  *out_model = NULL;
  if (options && (options->executor.params || options->executor.share_params_from))
    return HGR_STATUS(HGR_STATUS_INVALID_ARGUMENT, "a model's executor options leave params and share_params_from "
                      "to the model");
  hgr_allocator_t allocator = hgr__instance_allocator(instance);
  hgr_model_t* model = hgr__calloc(allocator, 1, sizeof(*model));
  if (!model) return HGR_STATUS(HGR_STATUS_RESOURCE_EXHAUSTED, "out of host memory for a model");
  model->allocator = allocator;
  model->instance = instance;
  if (options) model->options = *options;
  else hgr_model_options_init(&model->options);
#if HGR_HAS_ONNX
  hgr_status_t status = hgr__onnx_options_clone(allocator, options ? options->onnx : NULL, &model->onnx_options);
  if (status) {
    hgr__free(allocator, model);
    return status;
  }
#endif
  model->options.onnx = NULL; /* the copy is used */
  hgr_status_t pooled = hgr__program_pool_create_in(allocator, &model->programs);
  if (pooled) {
    hgr_model_release(model);
    return pooled;
  }
  *out_model = model;
  return HGR_OK;
}

void hgr_model_release(hgr_model_t* model) {
  if (!model) return;
  while (model->cache_count) drop(model, model->cache_count - 1);
  hgr__free(model->allocator, model->cache);
  hgr_program_pool_release(model->programs);
  hgr_params_release(model->weights);
  hgr_params_release(model->params);
  hgr_graph_release(model->graph);
#if HGR_HAS_ONNX
  hgr__onnx_model_free(model->onnx);
  hgr_onnx_options_release(model->onnx_options);
#endif
  hgr__free(model->allocator, model->inputs);
  hgr__free(model->allocator, model->outputs);
  hgr__free(model->allocator, model);
}

hgr_status_t hgr_model_create_onnx_memory(hgr_instance_t* instance, const void* bytes, size_t size,
                                          const char* base_directory, const hgr_model_options_t* options,
                                          hgr_model_t** out_model) {
  if (!out_model) return HGR_STATUS(HGR_STATUS_INVALID_ARGUMENT, "hgr_model_create_onnx_memory: NULL out_model");
  *out_model = NULL;
  hgr_model_t* model = NULL;
  HGR_RETURN_IF_ERROR(model_new(instance, options, &model));
#if HGR_HAS_ONNX
  hgr_status_t status =
      hgr__onnx_model_parse(model->allocator, bytes, size, base_directory, model->onnx_options, &model->onnx);
  if (!status) status = describe_onnx(model);
  if (!status) status = hgr__onnx_model_check_ops(model->onnx);
#else
  (void)bytes, (void)size, (void)base_directory;
  hgr_status_t status = HGR_STATUS(HGR_STATUS_UNIMPLEMENTED, "this hgr is built without ONNX (HGR_ONNX off)");
#endif
  if (status) {
    hgr_model_release(model);
    return status;
  }
  *out_model = model;
  return HGR_OK;
}

hgr_status_t hgr_model_create_onnx_file(hgr_instance_t* instance, const char* path,
                                        const hgr_model_options_t* options, hgr_model_t** out_model) {
  if (!path || !out_model) return HGR_STATUS(HGR_STATUS_INVALID_ARGUMENT, "hgr_model_create_onnx_file: NULL argument");
  *out_model = NULL;
#if HGR_HAS_ONNX
  hgr__file_bytes_t bytes;
  char* folder = NULL;
  hgr_allocator_t allocator = hgr__instance_allocator(instance); /* the model's */
  hgr_status_t status = hgr__onnx_model_read_file(allocator, path, &bytes, &folder);
  if (!status) status = hgr_model_create_onnx_memory(instance, bytes.data, bytes.length, folder, options, out_model);
  hgr__free(allocator, folder);
  hgr__file_unmap(allocator, &bytes);
  return hgr_status_annotate(status, "%s", path);
#else
  (void)instance, (void)options;
  return HGR_STATUS(HGR_STATUS_UNIMPLEMENTED, "%s: this hgr is built without ONNX (HGR_ONNX off)", path);
#endif
}

hgr_status_t hgr_model_create_graph(hgr_instance_t* instance, hgr_graph_t* graph, const hgr_params_t* params,
                                    const hgr_model_options_t* options, hgr_model_t** out_model) {
  if (!out_model) return HGR_STATUS(HGR_STATUS_INVALID_ARGUMENT, "hgr_model_create_graph: NULL out_model");
  *out_model = NULL;
  if (!graph) return HGR_STATUS(HGR_STATUS_INVALID_ARGUMENT, "hgr_model_create_graph: NULL graph");
  hgr_model_t* model = NULL;
  HGR_RETURN_IF_ERROR(model_new(instance, options, &model));
  hgr_status_t status = HGR_OK;
  if (params) status = hgr__params_copy(model->allocator, params, &model->params);
  /* The graph passes, as an ONNX model's import runs them (a placed graph stays). */
  hgr_passes_options_t passes;
  hgr_passes_options_init(&passes);
  hgr_passes_report_t report;
  if (!status) status = hgr_passes_apply(graph, model->params, &passes, &model->graph, &report);
  if (!status) status = describe_graph(model);
  if (status) {
    hgr_model_release(model);
    return status;
  }
  *out_model = model;
  return HGR_OK;
}

hgr_program_pool_t* hgr__model_programs(const hgr_model_t* model) { return model->programs; }
hgr_instance_t* hgr__model_instance(const hgr_model_t* model) { return model->instance; }
hgr_allocator_t hgr__model_allocator(const hgr_model_t* model) { return model->allocator; }

void hgr__model_bind_default(hgr_model_t* model, const char* spec) {
  if (model->options.executor.binding_count || model->options.place) return;
  model->default_binding = (hgr_device_binding_t){.key = -1, .spec = spec};
  model->options.executor.bindings = &model->default_binding;
  model->options.executor.binding_count = 1;
}

void hgr_model_report(const hgr_model_t* model, hgr_model_report_t* out_report) {
  if (!out_report) return;
  memset(out_report, 0, sizeof(*out_report));
  if (!model) return;
  *out_report = model->report;
  out_report->kept = (uint32_t)model->cache_count;
}
