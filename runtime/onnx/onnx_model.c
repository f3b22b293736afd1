/* The parsed model (onnx_model.h): the ModelProto unpacked once after the nesting
 * check, its initializers decoded once, its inputs and outputs with their declared
 * dims, and the folds that depend on no graph input, kept for every later import.
 * The import itself is onnx_load.c's. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "alloc.h"
#include "file.h"
#include "onnx_internal.h"
#include "onnx_model.h"
#include "text.h"

/* A model file larger than this is refused before parsing (protobuf's own limit is
 * 2 GiB; larger weights travel as external data). */
#define MAX_MODEL_BYTES ((size_t)INT32_MAX)

const Onnx__TypeProto__Tensor* hgr__onnx_tensor_type(const Onnx__ValueInfoProto* info) {
  if (!info->type || info->type->value_case != ONNX__TYPE_PROTO__VALUE_TENSOR_TYPE) return NULL;
  return info->type->tensor_type;
}

static hgr_status_t find_inputs(hgr__onnx_model_t* model) {
  const Onnx__GraphProto* g = model->proto->graph;
  model->inputs = hgr__calloc(model->allocator, g->n_input + 1, sizeof(*model->inputs));
  if (!model->inputs) return HGR_STATUS(HGR_STATUS_RESOURCE_EXHAUSTED, "out of host memory");
  for (size_t i = 0; i < g->n_input; ++i) {
    if (!g->input[i]->name || !g->input[i]->name[0])
      return HGR_STATUS(HGR_STATUS_INVALID_ARGUMENT, "graph input %zu has no name", i);
    bool initialized = false;
    for (size_t k = 0; k < g->n_initializer && !initialized; ++k)
      initialized = g->initializer[k]->name && !strcmp(g->initializer[k]->name, g->input[i]->name);
    if (!initialized) model->inputs[model->input_count++] = (uint32_t)i;
  }
  return HGR_OK;
}

static hgr_status_t parse_model(hgr__onnx_model_t* model, const void* bytes, size_t size) {
  if (size > MAX_MODEL_BYTES)
    return HGR_STATUS(HGR_STATUS_INVALID_ARGUMENT, "the model has %zu bytes; protobuf messages hold at most 2 GiB "
                      "(larger weights go in external data)", size);
  HGR_RETURN_IF_ERROR(hgr__onnx_wire_check(bytes, size, &onnx__model_proto__descriptor));
  model->proto = onnx__model_proto__unpack(&model->protobuf.base, size, bytes);
  if (!model->proto && model->protobuf.failed)
    return HGR_STATUS(HGR_STATUS_RESOURCE_EXHAUSTED, "out of host memory parsing the model's %zu bytes", size);
  if (!model->proto)
    return HGR_STATUS(HGR_STATUS_INVALID_ARGUMENT, "not a valid ONNX model: its %zu bytes do not parse as a "
                      "ModelProto (truncated, corrupt, or another format)", size);
  const Onnx__GraphProto* g = model->proto->graph;
  if (!g) return HGR_STATUS(HGR_STATUS_INVALID_ARGUMENT, "the model has no graph");
  if (!g->n_output) return HGR_STATUS(HGR_STATUS_INVALID_ARGUMENT, "the model's graph has no outputs");
  HGR_RETURN_IF_ERROR(find_inputs(model));
  model->initializers = hgr__calloc(model->allocator, g->n_initializer + 1, sizeof(*model->initializers));
  if (!model->initializers) return HGR_STATUS(HGR_STATUS_RESOURCE_EXHAUSTED, "out of host memory");
  hgr__onnx_external_t external = {.base_directory = model->base_directory};
  for (size_t i = 0; i < g->n_initializer; ++i) {
    Onnx__TensorProto* t = g->initializer[i];
    if (!t->name || !t->name[0]) return HGR_STATUS(HGR_STATUS_INVALID_ARGUMENT, "initializer %zu has no name", i);
    char where[320];
    snprintf(where, sizeof(where), "initializer '%.256s'", t->name);
    HGR_RETURN_IF_ERROR(
        hgr__onnx_tensor_decode_taking(model->allocator, t, &external, where, &model->initializers[i]));
  }
  return HGR_OK;
}

hgr_status_t hgr__onnx_model_read_file(hgr_allocator_t allocator, const char* path, hgr__file_bytes_t* out_bytes,
                                       char** out_folder) {
  *out_folder = NULL;
  HGR_RETURN_IF_ERROR(hgr__file_map(allocator, path, MAX_MODEL_BYTES, out_bytes));
  const char* slash = strrchr(path, '/');
  char* folder = slash ? hgr__copy_text_n(allocator, path, (size_t)(slash - path)) : hgr__copy_text(allocator, ".");
  if (folder && !folder[0]) { /* "/model.onnx" */
    hgr__free(allocator, folder);
    folder = hgr__copy_text(allocator, "/");
  }
  if (!folder) {
    hgr__file_unmap(allocator, out_bytes);
    return HGR_STATUS(HGR_STATUS_RESOURCE_EXHAUSTED, "out of host memory");
  }
  *out_folder = folder;
  return HGR_OK;
}

void hgr__onnx_model_free(hgr__onnx_model_t* model) {
  if (!model) return;
  for (size_t i = 0; model->initializers && i < model->proto->graph->n_initializer; ++i)
    hgr__onnx_tensor_free(model->initializers[i]); /* credits model->limits */
  hgr__free(model->allocator, model->initializers);
  for (size_t n = 0; model->folds && n < model->proto->graph->n_node; ++n) {
    for (size_t k = 0; model->folds[n] && k < model->proto->graph->node[n]->n_output; ++k)
      hgr__onnx_tensor_free(model->folds[n][k]);
    hgr__free(model->allocator, model->folds[n]);
  }
  hgr__free(model->allocator, model->folds);
  hgr__free(model->allocator, model->inputs);
  if (model->proto) onnx__model_proto__free_unpacked(model->proto, &model->protobuf.base);
  hgr__free(model->allocator, model->base_directory);
  hgr__free(model->allocator, model);
}

hgr_status_t hgr__onnx_model_parse(hgr_allocator_t allocator, const void* bytes, size_t size,
                                   const char* base_directory, const hgr_onnx_options_t* options,
                                   hgr__onnx_model_t** out_model) {
  *out_model = NULL;
  if (!bytes && size) return HGR_STATUS(HGR_STATUS_INVALID_ARGUMENT, "NULL model bytes");
  hgr__onnx_model_t* model = hgr__calloc(allocator, 1, sizeof(*model));
  if (!model) return HGR_STATUS(HGR_STATUS_RESOURCE_EXHAUSTED, "out of host memory for a model");
  model->allocator = allocator;
  hgr__onnx_protobuf_allocator_init(&model->protobuf, allocator);
  model->limits = (hgr__onnx_limits_t){.max_tensor_bytes = options ? options->max_tensor_bytes : 0,
                                       .max_loader_bytes = options ? options->max_loader_bytes : 0,
                                       .model_bytes = size};
  hgr_status_t status = HGR_OK;
  if (base_directory && !(model->base_directory = hgr__copy_text(allocator, base_directory)))
    status = HGR_STATUS(HGR_STATUS_RESOURCE_EXHAUSTED, "out of host memory");
  hgr__onnx_limits_enter(&model->limits);
  if (!status) status = parse_model(model, bytes, size);
  hgr__onnx_limits_enter(NULL);
  if (status) {
    hgr__onnx_model_free(model);
    return status;
  }
  *out_model = model;
  return HGR_OK;
}

uint64_t hgr__onnx_model_held_bytes(const hgr__onnx_model_t* model) { return model ? model->limits.held : 0; }

size_t hgr__onnx_model_input_count(const hgr__onnx_model_t* model) { return model->input_count; }

size_t hgr__onnx_model_output_count(const hgr__onnx_model_t* model) { return model->proto->graph->n_output; }

/* info's declared type and dims; unknown is true for extents exporters write for
 * unknown (0 on an input). */
static hgr_status_t describe_io(const Onnx__ValueInfoProto* info, bool zero_unknown, hgr__onnx_io_t* out_io) {
  memset(out_io, 0, sizeof(*out_io));
  out_io->name = info->name ? info->name : "";
  out_io->ndim = -1;
  const Onnx__TypeProto__Tensor* tt = hgr__onnx_tensor_type(info);
  if (!tt) return HGR_OK;
  if (!tt->has_elem_type) return HGR_OK;
  int32_t type = tt->elem_type;
  out_io->type_name = hgr__onnx_type_name(type);
  hgr_dtype_t held;
  if (hgr__onnx_held_dtype(type, &held)) {
    hgr_status_t status = hgr__onnx_type_dtype(type, &out_io->dtype); /* int64 at the edge */
    if (status) return status;
  }
  if (!tt->shape) return HGR_OK;
  if (tt->shape->n_dim > HGR_MAX_DIMS)
    return HGR_STATUS(HGR_STATUS_INVALID_ARGUMENT, "'%s' has %zu dimensions; hgr holds at most %d", out_io->name,
                      tt->shape->n_dim, HGR_MAX_DIMS);
  out_io->ndim = (int32_t)tt->shape->n_dim;
  for (size_t d = 0; d < tt->shape->n_dim; ++d) {
    const Onnx__TensorShapeProto__Dimension* dim = tt->shape->dim[d];
    bool fixed = dim && dim->value_case == ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_VALUE &&
                 (dim->dim_value > 0 || (dim->dim_value == 0 && !zero_unknown));
    out_io->dims[d] = fixed ? dim->dim_value : -1;
    if (dim && dim->value_case == ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_PARAM && dim->dim_param &&
        dim->dim_param[0])
      out_io->dim_names[d] = dim->dim_param;
  }
  return HGR_OK;
}

hgr_status_t hgr__onnx_model_input(const hgr__onnx_model_t* model, size_t index, hgr__onnx_io_t* out_io) {
  if (index >= model->input_count)
    return HGR_STATUS(HGR_STATUS_INVALID_ARGUMENT, "input %zu: the model has %zu inputs", index, model->input_count);
  return describe_io(model->proto->graph->input[model->inputs[index]], true, out_io);
}

hgr_status_t hgr__onnx_model_output(const hgr__onnx_model_t* model, size_t index, hgr__onnx_io_t* out_io) {
  if (index >= model->proto->graph->n_output)
    return HGR_STATUS(HGR_STATUS_INVALID_ARGUMENT, "output %zu: the model has %zu outputs", index,
                      model->proto->graph->n_output);
  return describe_io(model->proto->graph->output[index], false, out_io);
}

bool hgr__onnx_model_borrow_fold(hgr__onnx_loader_t* loader, hgr__onnx_node_t* node) {
  hgr__onnx_tensor_t** kept = loader->model->folds ? loader->model->folds[node->index] : NULL;
  if (!kept) return false;
  for (uint32_t k = 0; k < node->output_count; ++k) {
    hgr__onnx_value_t* v = node->outputs[k];
    if (!v) continue;
    v->constant = kept[k];
    v->borrowed = true;
    v->onnx_type = kept[k]->onnx_type;
    v->ndim = kept[k]->ndim;
    memcpy(v->shape, kept[k]->shape, sizeof(v->shape));
    v->defined = true;
  }
  return true;
}

void hgr__onnx_model_keep_fold(hgr__onnx_loader_t* loader, hgr__onnx_node_t* node) {
  hgr__onnx_model_t* model = loader->model;
  for (uint32_t k = 0; k < node->output_count; ++k)
    if (node->outputs[k] && (!node->outputs[k]->constant || node->outputs[k]->borrowed)) return;
  if (!model->folds) model->folds = hgr__calloc(model->allocator, loader->graph->n_node + 1, sizeof(*model->folds));
  hgr__onnx_tensor_t** kept =
      model->folds ? hgr__calloc(model->allocator, node->output_count + 1, sizeof(*kept)) : NULL;
  if (!kept) return;
  for (uint32_t k = 0; k < node->output_count; ++k) {
    hgr__onnx_value_t* v = node->outputs[k];
    if (!v) continue;
    kept[k] = v->constant;
    v->borrowed = true;
    hgr__onnx_tensor_recharge(v->constant, &model->limits);
  }
  model->folds[node->index] = kept;
}
