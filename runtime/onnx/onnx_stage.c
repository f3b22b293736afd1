/* Decisions at run time (docs/onnx.md, "Decisions at run time"; the stages are
 * described in onnx_model.h). An import in stages asks for the values nodes need at
 * load in order; the n-th is the n-th decision of the stages before, or, past them,
 * ends this stage. Every import of a model in stages goes through the same nodes in
 * the same order up to where the last stage ended (an import is deterministic), so
 * that the values carried from one stage to the next are found, named and ordered
 * alike on both sides of the cut.
 *
 * The graph of a later stage starts where the last one ended, in a builder of its
 * own: what the import added before that point is dropped with the builder it went
 * to, and the values carried over become the new builder's inputs. */
#include <stdio.h>
#include <string.h>

#include "alloc.h"
#include "builder_internal.h"
#include "onnx_internal.h"
#include "onnx_model.h"
#include "shape.h"

/* The stage's end: the loader sees loader->stage->cut and finishes the graph. */
static hgr_status_t stage_end_status(const hgr__onnx_node_t* node) {
  return HGR_STATUS(HGR_STATUS_UNAVAILABLE, "%s: the stage ends here (a decision at run time)", node->label);
}

static bool staged(const hgr__onnx_node_t* node) { return node->loader->stage && !node->loader->parent; }

hgr_status_t hgr__onnx_from_small_inputs(hgr__onnx_loader_t* loader, const hgr__onnx_value_t* v, bool* out_small) {
  *out_small = false;
  if (!loader->deciding) return HGR_OK;
  const hgr__onnx_loader_t* model = loader; /* the model's graph's loader: its inputs, and `deciding` of them */
  while (model->parent) model = model->parent;
  size_t inputs = model->graph->n_input;
  bool* before = hgr__alloc(loader->allocator, inputs + 1);
  if (!before) return HGR_STATUS(HGR_STATUS_RESOURCE_EXHAUSTED, "out of host memory");
  memcpy(before, loader->deciding, inputs);
  memset(loader->deciding, 0, inputs);
  hgr_status_t status = hgr__onnx_note_deciding(loader, v);
  bool any = false, small = true;
  for (size_t i = 0; !status && i < inputs; ++i) {
    if (!loader->deciding[i]) continue;
    any = true;
    const hgr__onnx_value_t* in = hgr__onnx_find_local(model, model->graph->input[i]->name);
    uint64_t count = 0;
    if (!in || hgr__onnx_type_is_float(in->onnx_type) || !hgr__shape_size(in->shape, in->ndim, 1, &count, NULL) ||
        count > HGR__ONNX_SMALL_INPUT_ELEMENTS)
      small = false;
  }
  *out_small = !status && any && small;
  for (size_t i = 0; i < inputs; ++i) loader->deciding[i] = before[i] || (*out_small && loader->deciding[i]);
  hgr__free(loader->allocator, before);
  return status;
}

/* v's constant from decision d (as the stage's output held it). */
static hgr_status_t take_decision(const hgr__onnx_node_t* node, hgr__onnx_value_t* v, const hgr__onnx_decision_t* d) {
  uint64_t count = 0;
  if (!hgr__shape_size(v->shape, v->ndim, 1, &count, NULL) || d->bytes != count * hgr_dtype_element_bytes(d->dtype))
    return HGR_STATUS(HGR_STATUS_INTERNAL, "%s: the decision for '%s' holds %zu bytes; the value has %llu elements",
                      node->label, v->name, d->bytes, (unsigned long long)count);
  hgr__onnx_tensor_t* tensor = NULL;
  HGR_RETURN_IF_ERROR(hgr__onnx_tensor_new(node->loader->allocator, v->onnx_type, v->shape, v->ndim, node->label,
                                           &tensor));
  for (uint64_t i = 0; i < count; ++i) {
    if (d->dtype.code == HGR_DTYPE_FLOAT) {
      float f;
      memcpy(&f, (const char*)d->data + 4 * i, 4);
      hgr__onnx_tensor_set_f64(tensor, i, f);
    } else if (hgr_dtype_element_bytes(d->dtype) == 1) { /* bool */
      hgr__onnx_tensor_set_i64(tensor, i, ((const uint8_t*)d->data)[i] != 0);
    } else {
      int32_t x;
      memcpy(&x, (const char*)d->data + 4 * i, 4);
      hgr__onnx_tensor_set_i64(tensor, i, x);
    }
  }
  v->constant = tensor;
  v->borrowed = false;
  v->decided = true;
  return HGR_OK;
}

/* The next decision of the stages before, or NULL when this import is past them. */
static const hgr__onnx_decision_t* next_decision(hgr__onnx_loader_t* loader) {
  hgr__onnx_stage_t* stage = loader->stage;
  return loader->decisions_asked < stage->decision_count ? &stage->decisions[loader->decisions_asked++] : NULL;
}

/* The run-time values among in_flight (count), as the builder values loader->in_flight
 * holds for the stage's end (the values themselves do not outlive their Loop's import). */
static hgr_status_t keep_in_flight(hgr__onnx_loader_t* loader, hgr__onnx_value_t* const* in_flight, size_t count) {
  loader->in_flight_count = 0;
  if (!count) return HGR_OK;
  loader->in_flight = hgr__realloc_array(loader->allocator, loader->in_flight, count, sizeof(*loader->in_flight));
  if (!loader->in_flight) return HGR_STATUS(HGR_STATUS_RESOURCE_EXHAUSTED, "out of host memory");
  for (size_t i = 0; i < count; ++i)
    if (in_flight[i]->has_value && !in_flight[i]->constant)
      loader->in_flight[loader->in_flight_count++] = in_flight[i]->value;
  return HGR_OK;
}

static hgr_status_t end_stage(const hgr__onnx_node_t* node, bool after, hgr_value_t decision, const hgr_value_t* payloads,
                              uint32_t payload_count, hgr__onnx_value_t* const* in_flight, size_t in_flight_count) {
  hgr__onnx_loader_t* loader = node->loader;
  if (payload_count + 1 > sizeof(loader->cut_values) / sizeof(loader->cut_values[0]))
    return HGR_STATUS(HGR_STATUS_INTERNAL, "%s: %u payloads; a stage ends with at most 7", node->label, payload_count);
  HGR_RETURN_IF_ERROR(keep_in_flight(loader, in_flight, in_flight_count));
  hgr__onnx_stage_t* stage = loader->stage;
  stage->cut = true;
  stage->at = node->index;
  stage->after = after;
  stage->in_loop = in_flight != NULL;
  stage->at_asked = loader->node_asked;
  snprintf(stage->label, sizeof(stage->label), "%.150s", node->label);
  loader->cut_values[0] = decision;
  for (uint32_t k = 0; k < payload_count; ++k) loader->cut_values[k + 1] = payloads[k];
  loader->cut_value_count = payload_count + 1;
  return stage_end_status(node);
}

/* hgr__onnx_decide, where in_flight (count; NULL: none) are a Loop's values carried
 * across a cut inside it. */
static hgr_status_t decide(const hgr__onnx_node_t* node, hgr__onnx_value_t* v, hgr__onnx_value_t* const* in_flight,
                           size_t in_flight_count) {
  if (v->constant || !staged(node)) return HGR_OK;
  hgr__onnx_loader_t* loader = node->loader;
  /* What is never decided is told apart before a decision is taken, so that every
   * import takes the same decisions for the same values. */
  uint64_t count = 0;
  if (!v->has_value || !hgr__shape_size(v->shape, v->ndim, 1, &count, NULL) ||
      count > HGR__ONNX_MAX_DECISION_ELEMENTS)
    return HGR_OK; /* refused by the caller */
  bool small = false;
  HGR_RETURN_IF_ERROR(hgr__onnx_from_small_inputs(loader, v, &small));
  if (small) return HGR_OK; /* refused by the caller: the model object specializes on the inputs */
  const hgr__onnx_decision_t* decided = next_decision(loader);
  if (decided) return take_decision(node, v, decided);
  return end_stage(node, false, v->value, NULL, 0, in_flight, in_flight_count);
}

hgr_status_t hgr__onnx_decide(const hgr__onnx_node_t* node, hgr__onnx_value_t* v) { return decide(node, v, NULL, 0); }

hgr_status_t hgr__onnx_decide_in_loop(const hgr__onnx_node_t* node, hgr__onnx_value_t* v,
                                      hgr__onnx_value_t* const* in_flight, size_t count) {
  static hgr__onnx_value_t* const none[1] = {NULL};
  return decide(node, v, count ? in_flight : none, count);
}

hgr_status_t hgr__onnx_constant_input(const hgr__onnx_node_t* node, uint32_t i, hgr__onnx_tensor_t** out_tensor) {
  hgr__onnx_value_t* v = hgr__onnx_input(node, i);
  if (v) HGR_RETURN_IF_ERROR(hgr__onnx_decide(node, v));
  *out_tensor = v ? v->constant : NULL;
  if (v && !v->constant) {
    HGR_RETURN_IF_ERROR(hgr__onnx_note_deciding(node->loader, v));
    return HGR__ONNX_UNSUPPORTED(node, "input %u ('%s') must be known at load (a constant or computed from "
                                 "constants); hgr does not take it at run time%s", i, v->name,
                                 v->producer < 0 ? " (a graph input can be fixed at load: hgr_onnx_options_set_input_"
                                                   "value, hgr run --fix-input)" : "");
  }
  return HGR_OK;
}

hgr_status_t hgr__onnx_stage_count(hgr__onnx_node_t* node, int64_t* out_count) {
  *out_count = -1;
  if (!staged(node))
    return HGR__ONNX_UNSUPPORTED(node, "its output's extent depends on its data%s; hgr runs such ops through the "
                                 "model object (hgr_model_run, the Python session), which runs the model in stages",
                                 node->loader->parent ? ", inside a subgraph" : "");
  const hgr__onnx_decision_t* decided = next_decision(node->loader);
  if (!decided) return HGR_OK;
  int32_t count;
  if (decided->bytes != sizeof(count))
    return HGR_STATUS(HGR_STATUS_INTERNAL, "%s: its count holds %zu bytes", node->label, decided->bytes);
  memcpy(&count, decided->data, sizeof(count));
  if (count < 0) return HGR_STATUS(HGR_STATUS_INTERNAL, "%s: its count is %d", node->label, (int)count);
  *out_count = count;
  return HGR_OK;
}

hgr_status_t hgr__onnx_stage_after(hgr__onnx_node_t* node, hgr_value_t count, const hgr_value_t* payloads,
                                   uint32_t payload_count) {
  return end_stage(node, true, count, payloads, payload_count, NULL, 0);
}

hgr_status_t hgr__onnx_stage_payload(hgr__onnx_node_t* node, uint32_t k, hgr_dtype_t dtype, const int64_t* shape,
                                     int32_t ndim, hgr_value_t* out_value) {
  char name[300];
  const hgr__onnx_value_t* out = k < node->output_count ? node->outputs[k] : NULL;
  if (out) snprintf(name, sizeof(name), "%s", out->name);
  else snprintf(name, sizeof(name), "%s:payload%u", node->outputs[0] ? node->outputs[0]->name : "node", k);
  return hgr_builder_add_input(node->loader->builder, name, dtype, shape, ndim, out_value);
}

/* ---- where a stage starts and ends ------------------------------------------------------ */

/* Per value of loader, whether it is carried across a cut before node `at` (after
 * it: `after`): a value of the graph computed at run time (a decided one included:
 * the stage that started before its node carried it) that a live node not imported
 * yet reads, its subgraphs' reads included, or a graph output. */
static hgr_status_t carried_values(const hgr__onnx_loader_t* loader, uint32_t at, bool after, bool** out_carried) {
  const Onnx__GraphProto* g = loader->graph;
  bool* read = hgr__calloc(loader->allocator, loader->value_count + 1, sizeof(*read));
  if (!read) return HGR_STATUS(HGR_STATUS_RESOURCE_EXHAUSTED, "out of host memory");
  for (size_t n = 0; n < g->n_node; ++n) {
    if (!loader->live[n] || loader->fused[n] || loader->done[n] || (after && n == at)) continue;
    const hgr__onnx_names_t* captured = hgr__onnx_captures_of(loader, (uint32_t)n);
    size_t reads = g->node[n]->n_input + (captured ? captured->count : 0);
    for (size_t i = 0; i < reads; ++i) {
      const char* name = i < g->node[n]->n_input ? g->node[n]->input[i] : captured->names[i - g->node[n]->n_input];
      const hgr__onnx_value_t* v = name && name[0] ? hgr__onnx_find_local(loader, name) : NULL;
      if (v) read[v - loader->values] = true;
    }
  }
  for (size_t i = 0; i < loader->value_count; ++i) {
    const hgr__onnx_value_t* v = &loader->values[i];
    /* A decided value was carried to the stage that decided it: on to the next. */
    read[i] = (read[i] || v->graph_output) && v->defined && v->has_value && (!v->constant || v->decided);
  }
  *out_carried = read;
  return HGR_OK;
}

bool hgr__onnx_stage_starts_at(const hgr__onnx_loader_t* loader, uint32_t index) {
  const hgr__onnx_stage_t* stage = loader->stage;
  return stage && !loader->parent && stage->decision_count && !stage->resume_in_loop && stage->resume == index &&
         loader->decisions_asked == stage->resume_asked;
}

bool hgr__onnx_stage_resumes_in_loop(const hgr__onnx_node_t* node) {
  const hgr__onnx_stage_t* stage = node->loader->stage;
  return staged(node) && stage->decision_count && stage->resume_in_loop && stage->resume == node->index &&
         node->loader->decisions_asked == stage->decision_count;
}

/* v's builder value anew: an input of fresh called name, of its type and shape. */
static hgr_status_t carry_in(hgr__onnx_loader_t* loader, hgr_builder_t* fresh, hgr__onnx_value_t* v,
                             const char* name) {
  hgr_tensor_info_t info;
  HGR_RETURN_IF_ERROR(hgr_builder_value_info(loader->builder, v->value, &info));
  return hgr_builder_add_input(fresh, name, info.dtype, info.shape, info.ndim, &v->value);
}

/* Starts the stage's graph in a new builder whose inputs are the carried values,
 * then those of in_flight (count) computed at run time. */
static hgr_status_t start_stage(hgr__onnx_loader_t* loader, hgr__onnx_value_t* const* in_flight, size_t count) {
  const hgr__onnx_stage_t* stage = loader->stage;
  bool* carried = NULL;
  HGR_RETURN_IF_ERROR(carried_values(loader, stage->resume, stage->resume_after, &carried));
  hgr_builder_t* fresh = NULL;
  hgr_status_t status = hgr__builder_create_in(loader->allocator, NULL, &fresh);
  for (size_t i = 0; !status && i < loader->value_count; ++i) {
    hgr__onnx_value_t* v = &loader->values[i];
    if (!carried[i]) {
      v->has_value = false; /* a constant is made again in the new builder; a runtime value is no longer read */
      continue;
    }
    status = carry_in(loader, fresh, v, v->name);
  }
  for (size_t i = 0; !status && i < count; ++i) {
    hgr__onnx_value_t* v = in_flight[i];
    if (v->constant || !v->has_value) {
      v->has_value = false;
      continue;
    }
    char name[64]; /* a Loop's values may share names (a scan output's of each iteration) */
    snprintf(name, sizeof(name), "in_flight:%zu", i);
    status = carry_in(loader, fresh, v, name);
  }
  hgr__free(loader->allocator, carried);
  if (status) {
    hgr_builder_release(fresh);
    return status;
  }
  hgr_builder_release(loader->builder);
  loader->builder = fresh;
  return HGR_OK;
}

hgr_status_t hgr__onnx_stage_start(hgr__onnx_loader_t* loader) { return start_stage(loader, NULL, 0); }

hgr_status_t hgr__onnx_stage_start_in_loop(hgr__onnx_node_t* node, hgr__onnx_value_t* const* in_flight,
                                           size_t count) {
  return start_stage(node->loader, in_flight, count);
}

hgr_status_t hgr__onnx_stage_end(hgr__onnx_loader_t* loader) {
  hgr__onnx_stage_t* stage = loader->stage;
  bool* carried = NULL;
  HGR_RETURN_IF_ERROR(carried_values(loader, stage->at, stage->after, &carried));
  hgr_status_t status = HGR_OK;
  stage->carried = 0;
  for (size_t i = 0; !status && i < loader->value_count; ++i) {
    if (!carried[i]) continue;
    status = hgr_builder_mark_output(loader->builder, loader->values[i].value);
    ++stage->carried;
  }
  hgr__free(loader->allocator, carried);
  for (size_t i = 0; !status && i < loader->in_flight_count; ++i, ++stage->carried)
    status = hgr_builder_mark_output(loader->builder, loader->in_flight[i]);
  for (uint32_t k = 0; !status && k < loader->cut_value_count; ++k)
    status = hgr_builder_mark_output(loader->builder, loader->cut_values[k]);
  stage->payloads = loader->cut_value_count ? loader->cut_value_count - 1 : 0;
  return status;
}
