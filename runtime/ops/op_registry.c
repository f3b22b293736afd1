/* The op registry (ops.h): func_name -> op, over the built-in ops (ops_builtin.c)
 * and the user's kernel library, and the checks every op gets before its plan
 * (input and output counts, known attrs, in-place use, output entries against the
 * op's inference), shared by planning and inference. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "alloc.h"
#include "ops.h"

static bool listed(const char* list, const char* key) {
  size_t length = strlen(key);
  for (const char* s = list; s && *s;) {
    while (*s == ' ') ++s;
    const char* end = s;
    while (*end && *end != ' ') ++end;
    if ((size_t)(end - s) == length && !strncmp(s, key, length)) return true;
    s = end;
  }
  return false;
}

static hgr_status_t check_attrs(const hgr__op_ctx_t* ctx) {
  for (uint32_t a = 0; a < ctx->node->attr_count; ++a) {
    const hgr__attr_t* attr = &ctx->node->attrs[a];
    if (listed(ctx->op->attrs, attr->key) || !strcmp(attr->key, "hash")) continue;
    if (strstr(attr->key, "layout") && !attr->value[0]) continue;
    return HGR__OP_ERROR(ctx, "unknown attr '%s' (= \"%s\"); %s%s", attr->key, attr->value,
                         ctx->op->attrs && ctx->op->attrs[0] ? "the op knows: " : "the op takes no attrs",
                         ctx->op->attrs ? ctx->op->attrs : "");
  }
  return HGR_OK;
}

/* ---- planning ------------------------------------------------------------------------ */

static hgr_status_t unknown_op(const hgr__op_ctx_t* ctx, const hgr_kernel_library_t* library) {
  char known[4096] = "";
  size_t used = 0;
  size_t family_count = 0;
  const hgr__op_t* const* families = hgr__op_families(&family_count);
  for (size_t f = 0; f < family_count; ++f)
    for (const hgr__op_t* op = families[f]; op->name && used < sizeof(known); ++op)
      used += (size_t)snprintf(known + used, sizeof(known) - used, "%s, ", op->name);
  for (size_t i = 0; library && i < hgr_kernel_library_op_count(library) && used < sizeof(known); ++i)
    used += (size_t)snprintf(known + used, sizeof(known) - used, "%s, ", hgr_kernel_library_op_name(library, i));
  return HGR_STATUS(HGR_STATUS_INVALID_ARGUMENT, "%s: unknown func_name '%s'; known: %s__nop, __copy",
                    ctx->label, ctx->node->func_name, known);
}

static hgr_status_t check_count(const hgr__op_ctx_t* ctx, const char* what, uint32_t count, uint32_t min,
                                uint32_t max) {
  if (count >= min && count <= max) return HGR_OK;
  char range[64];
  if (min == max) snprintf(range, sizeof(range), "%u", min);
  else if (max == UINT32_MAX) snprintf(range, sizeof(range), "%u or more", min);
  else snprintf(range, sizeof(range), "%u to %u", min, max);
  return HGR__OP_ERROR(ctx, "takes %s %s, the node has %u", range, what, count);
}

/* TVM's in-place ops: an output that shares an input's storage id. Only what the
 * op's in_place allows (see hgr__in_place_t); anything else would compute from
 * values the kernel already overwrote. */
static hgr_status_t check_in_place(const hgr__op_ctx_t* ctx) {
  for (uint32_t k = 0; k < ctx->node->num_outputs; ++k) {
    const hgr__entry_t* out = hgr__op_output(ctx, k);
    uint32_t out_entry = (uint32_t)(out - ctx->graph->entries);
    for (uint32_t i = 0; i < ctx->node->input_count; ++i) {
      const hgr__entry_t* in = hgr__op_input(ctx, i);
      if (in->storage_slot != out->storage_slot) continue;
      if (ctx->op->in_place == HGR__IN_PLACE_ALIAS && k == 0 && i == 0) continue;
      uint32_t in_entry = (uint32_t)(in - ctx->graph->entries);
      if (ctx->op->in_place != HGR__IN_PLACE_ELEMENTWISE)
        return HGR__OP_ERROR(ctx, "output %u (entry %u) shares storage %u with input %u (entry %u); the op cannot run "
                             "in place",
                             k, out_entry, out->storage_id, i, in_entry);
      uint64_t in_size = hgr_dtype_element_bytes(in->dtype), out_size = hgr_dtype_element_bytes(out->dtype);
      if (in->element_count == out->element_count && in_size == out_size) continue;
      return HGR__OP_ERROR(ctx, "output %u (entry %u) shares storage %u with input %u (entry %u); the op cannot run "
                           "in place on an input of another element count or element size (input %u: %llu "
                           "element%s of %llu byte%s, output %u: %llu element%s of %llu byte%s)",
                           k, out_entry, out->storage_id, i, in_entry, i,
                           (unsigned long long)in->element_count,
                           in->element_count == 1 ? "" : "s", (unsigned long long)in_size, in_size == 1 ? "" : "s", k,
                           (unsigned long long)out->element_count, out->element_count == 1 ? "" : "s",
                           (unsigned long long)out_size, out_size == 1 ? "" : "s");
    }
  }
  return HGR_OK;
}

const hgr__op_t* hgr__op_lookup(const char* name, const hgr_kernel_library_t* library) {
  const hgr__op_t* op = hgr__op_find(name);
  return op || !library ? op : hgr__library_op(library, name);
}

/* What planning and inference share before the op's own code: the context, the op,
 * the counts and the attrs. Reads only the node (and, for its label, its name). */
static hgr_status_t begin(hgr_allocator_t allocator, const hgr_graph_t* graph, uint32_t node_id,
                          const hgr_kernel_library_t* library, const hgr__limits_t* limits, hgr__op_ctx_t* ctx) {
  memset(ctx, 0, sizeof(*ctx));
  ctx->allocator = allocator;
  ctx->graph = graph;
  ctx->node_id = node_id;
  ctx->node = &graph->nodes[node_id];
  ctx->limits = *limits;
  hgr__graph_node_label(graph, node_id, ctx->label, sizeof(ctx->label));
  ctx->op = hgr__op_lookup(ctx->node->func_name, library);
  if (!ctx->op) return unknown_op(ctx, library);
  hgr_status_t status = check_count(ctx, "input(s)", ctx->node->input_count, ctx->op->min_inputs, ctx->op->max_inputs);
  if (!status)
    status = check_count(ctx, "output(s)", ctx->node->num_outputs, ctx->op->min_outputs, ctx->op->max_outputs);
  if (!status) status = check_attrs(ctx);
  return status;
}

/* Runs the op's infer into outputs (num_outputs entries, zeroed first) and
 * completes them with element_count and bytes, overflow-checked. */
static hgr_status_t infer_outputs(hgr__op_ctx_t* ctx, hgr__entry_t* outputs) {
  uint32_t count = ctx->node->num_outputs;
  memset(outputs, 0, count * sizeof(*outputs));
  if (!ctx->op->infer)
    return HGR__OP_ERROR(ctx, "the op's output shapes are unknown: its kernel manifest entry has no \"shapes\" key");
  HGR_RETURN_IF_ERROR(ctx->op->infer(ctx, outputs));
  for (uint32_t k = 0; k < count; ++k) {
    hgr__entry_t* out = &outputs[k];
    if (out->ndim < 0 || out->ndim > HGR_MAX_DIMS)
      return HGR_STATUS(HGR_STATUS_INTERNAL, "%s: op '%s' inferred %d dimensions for output %u", ctx->label,
                        ctx->op->name, out->ndim, k);
    for (int32_t d = 0; d < out->ndim; ++d)
      if (out->shape[d] < 0)
        return HGR_STATUS(HGR_STATUS_INTERNAL, "%s: op '%s' inferred extent %lld in dimension %d of output %u",
                          ctx->label, ctx->op->name, (long long)out->shape[d], d, k);
    if (!hgr__shape_size(out->shape, out->ndim, hgr_dtype_element_bytes(out->dtype), &out->element_count,
                         &out->bytes)) {
      char shape[160];
      return HGR__OP_ERROR(ctx, "output %u would be shaped %s, more elements or bytes than 2^63 - 1", k,
                           hgr__entry_shape(out, shape, sizeof(shape)));
    }
  }
  return HGR_OK;
}

/* No device: inference checks shapes, dtypes and attrs, never launch limits. */
static const hgr__limits_t generous_limits = {SIZE_MAX / 2, {SIZE_MAX / 2, SIZE_MAX / 2, SIZE_MAX / 2},
                                              UINT64_MAX / 2, 0};

hgr_status_t hgr__op_infer(const hgr_graph_t* graph, uint32_t node_id, const hgr_kernel_library_t* library,
                           hgr__entry_t* out_outputs) {
  hgr__op_ctx_t ctx;
  hgr_status_t status = begin(hgr__graph_allocator(graph), graph, node_id, library, &generous_limits, &ctx);
  if (!status) status = infer_outputs(&ctx, out_outputs);
  hgr__op_ctx_free(&ctx);
  return status;
}

hgr_status_t hgr__op_inspect(const hgr_graph_t* graph, uint32_t node_id, hgr__op_ctx_t* ctx) {
  hgr_status_t status = begin(hgr__graph_allocator(graph), graph, node_id, NULL, &generous_limits, ctx);
  if (status) hgr__op_ctx_free(ctx);
  return status;
}

/* "float32 [2, 3]" */
static const char* describe_entry(const hgr__entry_t* entry, char* buffer, size_t capacity) {
  char dtype[32], shape[160];
  snprintf(buffer, capacity, "%s %s", hgr_dtype_format(entry->dtype, dtype, sizeof(dtype)),
           hgr__entry_shape(entry, shape, sizeof(shape)));
  return buffer;
}

/* Every output entry of the graph against what the op's infer gives: the one check
 * of outputs, so that what inference gives a builder is what planning accepts. */
static hgr_status_t check_outputs(hgr__op_ctx_t* ctx) {
  uint32_t count = ctx->node->num_outputs;
  hgr__entry_t* inferred = hgr__calloc(ctx->allocator, count ? count : 1, sizeof(*inferred));
  if (!inferred) return HGR_STATUS(HGR_STATUS_RESOURCE_EXHAUSTED, "%s: out of host memory", ctx->label);
  hgr_status_t status = infer_outputs(ctx, inferred);
  for (uint32_t k = 0; !status && k < count; ++k) {
    const hgr__entry_t* out = hgr__op_output(ctx, k);
    const hgr__entry_t* want = &inferred[k];
    bool same = hgr__dtype_same(out->dtype, want->dtype) && out->ndim == want->ndim;
    for (int32_t d = 0; same && d < out->ndim; ++d) same = out->shape[d] == want->shape[d];
    if (same) continue;
    uint32_t entry_id = (uint32_t)(out - ctx->graph->entries);
    char got[200], expected[200];
    /* The shape-only form is what tools parse to adopt the shape (fuzz_op_plan.c). */
    if (hgr__dtype_same(out->dtype, want->dtype))
      status = HGR__OP_ERROR(ctx, "output %u (entry %u) should be shaped %s, the graph says %s", k, entry_id,
                             hgr__entry_shape(want, expected, sizeof(expected)),
                             hgr__entry_shape(out, got, sizeof(got)));
    else
      status = HGR__OP_ERROR(ctx, "output %u (entry %u) should be %s, the graph says %s", k, entry_id,
                             describe_entry(want, expected, sizeof(expected)), describe_entry(out, got, sizeof(got)));
  }
  hgr__free(ctx->allocator, inferred);
  return status;
}

hgr_status_t hgr__op_plan(hgr_allocator_t allocator, const hgr_graph_t* graph, uint32_t node_id,
                          const hgr_kernel_library_t* library, const hgr__limits_t* limits, hgr__op_ctx_t* ctx) {
  return hgr__op_plan_tuned(allocator, graph, node_id, library, limits, NULL, ctx);
}

hgr_status_t hgr__op_plan_tuned(hgr_allocator_t allocator, const hgr_graph_t* graph, uint32_t node_id,
                                const hgr_kernel_library_t* library, const hgr__limits_t* limits,
                                const hgr__tuning_t* tuning, hgr__op_ctx_t* ctx) {
  hgr_status_t status = begin(allocator, graph, node_id, library, limits, ctx);
  ctx->tuning = tuning;
  if (!status) status = check_in_place(ctx);
  /* A user op without "shapes": its outputs are the kernel's business. */
  if (!status && ctx->op->infer) status = check_outputs(ctx);
  if (!status) status = ctx->op->plan(ctx);
  if (!status && ctx->error) {
    status = ctx->error;
    ctx->error = NULL;
  }
  if (!status && ctx->launch_count == 0 && ctx->op->in_place != HGR__IN_PLACE_ALIAS)
    status = HGR_STATUS(HGR_STATUS_INTERNAL, "%s: op '%s' planned no launch", ctx->label, ctx->op->name);
  if (status) hgr__op_ctx_free(ctx);
  return status;
}
