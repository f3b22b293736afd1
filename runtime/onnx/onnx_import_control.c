/* ONNX's control flow, imported as plain graph nodes at load (docs/onnx.md, "Control
 * flow"): an If whose condition is known when the model is specialized becomes the
 * branch it takes; a Loop whose trip count and condition are known, and a Scan,
 * whose length follows from its inputs' shapes, become one copy of their body per
 * iteration, loop-carried values threaded from copy to copy and scan outputs
 * stacked (on the host when they are constants, else a reshape per iteration and a
 * concatenate). Each subgraph is imported by the loader itself
 * (hgr__onnx_subgraph_import, onnx_load.c), in a scope of its own that sees the
 * enclosing graphs' values by name.
 *
 * An If's condition, a Loop's trip count and conditions, computed from the model's
 * data at run time are decisions (onnx_stage.c): the model object runs the model up
 * to the node (or through the Loop's iteration), reads the value and goes on with
 * the branch or the iterations it says; a condition the body computes is read once
 * per iteration, the Loop's carried values and scan outputs so far carried from each
 * stage to the next. Where no stage can decide an If (inside a subgraph, or a model
 * taken as one graph), both branches are imported and a `where` selects each output,
 * when the branches agree in types and shapes. Anything else of these inside a
 * subgraph is refused, naming the node and the value, after noting the graph inputs
 * it derives from as deciding, so that the model object specializes on their values
 * where that makes it known.
 *
 * This file sits above onnx_load.c (scripts/layers.py): the loader calls it through
 * the op table only, and it calls the loader to import its subgraphs. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "alloc.h"
#include "onnx_internal.h"

/* UNIMPLEMENTED for a value a control op needs at load that depends on the model's
 * data at run time (what: "condition", "trip count"); the graph inputs it derives
 * from are noted as deciding first. */
static hgr_status_t refuse_run_time(hgr__onnx_node_t* node, const char* op, const char* what,
                                    const hgr__onnx_value_t* v, const char* detail) {
  HGR_RETURN_IF_ERROR(hgr__onnx_note_deciding(node->loader, v));
  bool graph_input = v->producer < 0 && !v->scoped && !node->loader->parent;
  return HGR__ONNX_UNSUPPORTED(node, "its %s '%s'%s depends on the model's data at run time; hgr runs %s only when "
                               "the %s is known when the model is specialized (a constant, a value computed from "
                               "shapes, or a graph input the model object specializes on%s)%s",
                               what, v->name, detail, op, what,
                               graph_input ? "; one load can fix it: hgr_onnx_options_set_input_value, hgr run "
                                             "--fix-input" : "",
                               node->loader->parent
                                   ? "; inside a subgraph hgr does not decide it at run time"
                                   : "; the model object (hgr_model_run, the Python session) decides it at run time, "
                                     "in stages");
}

/* The one element of a condition known at load, as a flag. */
static hgr_status_t known_flag(hgr__onnx_node_t* node, const char* op, const char* what, const hgr__onnx_value_t* v,
                               const char* detail, bool* out_flag) {
  if (!v->constant) return refuse_run_time(node, op, what, v, detail);
  if (v->constant->count != 1)
    return HGR__ONNX_INVALID(node, "its %s '%s' holds %llu values; %s takes one", what, v->name,
                             (unsigned long long)v->constant->count, op);
  *out_flag = hgr__onnx_tensor_f64(v->constant, 0) != 0;
  return HGR_OK;
}

/* Output k of node: the subgraph's value copied out (its constant moves). */
static hgr_status_t set_output(hgr__onnx_node_t* node, uint32_t k, hgr__onnx_value_t* copy) {
  if (!copy->constant) return hgr__onnx_set_alias(node, k, copy);
  hgr__onnx_tensor_t* tensor = copy->constant;
  copy->constant = NULL;
  return hgr__onnx_set_constant(node, k, tensor);
}

/* Whether output k of node is used (omitted outputs are not). */
static bool output_used(const hgr__onnx_node_t* node, uint32_t k) {
  const hgr__onnx_value_t* v = k < node->output_count ? node->outputs[k] : NULL;
  return v && v->uses;
}

/* A copy of v (its constant copied), for a value threaded through iterations. */
static hgr_status_t copy_value(const hgr__onnx_node_t* node, const hgr__onnx_value_t* v, hgr__onnx_value_t* out) {
  *out = *v;
  out->constant = NULL;
  out->borrowed = false;
  out->scoped = true;
  if (v->constant) HGR_RETURN_IF_ERROR(hgr__onnx_tensor_copy(node->loader->allocator, v->constant, &out->constant));
  return HGR_OK;
}

/* A scalar constant of onnx_type holding value, as a subgraph input called name. */
static hgr_status_t scalar_input(const hgr__onnx_node_t* node, const char* name, int32_t onnx_type, int64_t value,
                                 hgr__onnx_value_t* out) {
  memset(out, 0, sizeof(*out));
  HGR_RETURN_IF_ERROR(hgr__onnx_tensor_new(node->loader->allocator, onnx_type, NULL, 0, node->label, &out->constant));
  hgr__onnx_tensor_set_i64(out->constant, 0, value);
  out->name = name;
  out->onnx_type = onnx_type;
  out->ndim = 0;
  out->defined = true;
  out->producer = -1;
  out->consumer = -1;
  out->scoped = true;
  return HGR_OK;
}

/* Stacks items (count copies of one type and shape, in iteration order; reversed
 * when reverse) along a new axis axis_attr of the result, as output k of node: on
 * the host when every item is a constant, else each reshaped and concatenated. */
static hgr_status_t stack_output(hgr__onnx_node_t* node, uint32_t k, hgr__onnx_value_t* items, size_t count,
                                 int64_t axis_attr, bool reverse) {
  const hgr__onnx_value_t* first = &items[0];
  if (first->ndim + 1 > HGR_MAX_DIMS)
    return HGR__ONNX_UNSUPPORTED(node, "output %u stacks values of rank %d; hgr holds at most %d dims", k,
                                 (int)first->ndim, HGR_MAX_DIMS);
  bool constant = true;
  for (size_t t = 0; t < count; ++t) {
    const hgr__onnx_value_t* item = &items[t];
    bool same = item->onnx_type == first->onnx_type && item->ndim == first->ndim;
    for (int32_t d = 0; same && d < first->ndim; ++d) same = item->shape[d] == first->shape[d];
    if (!same)
      return HGR__ONNX_INVALID(node, "output %u: iteration %zu gives '%s' of another type or shape than iteration 0; "
                               "the iterations of a scan output must agree", k, t, item->name);
    constant = constant && item->constant;
  }
  int32_t axis;
  HGR_RETURN_IF_ERROR(hgr__onnx_axis(node, "the scan output axis", axis_attr, first->ndim + 1, &axis));
  int64_t shape[HGR_MAX_DIMS], one[HGR_MAX_DIMS];
  for (int32_t d = 0, s = 0; d <= first->ndim; ++d) {
    shape[d] = d == axis ? (int64_t)count : first->shape[s];
    one[d] = d == axis ? 1 : first->shape[s];
    if (d != axis) ++s;
  }
  if (constant) {
    hgr__onnx_tensor_t* out = NULL;
    HGR_RETURN_IF_ERROR(hgr__onnx_tensor_new(node->loader->allocator, first->onnx_type, shape, first->ndim + 1,
                                             node->label, &out));
    uint64_t outer = 1, inner = hgr__onnx_type_bytes(first->onnx_type);
    for (int32_t d = 0; d < axis; ++d) outer *= (uint64_t)first->shape[d];
    for (int32_t d = axis; d < first->ndim; ++d) inner *= (uint64_t)first->shape[d];
    for (uint64_t o = 0; o < outer; ++o)
      for (size_t t = 0; t < count; ++t) {
        const hgr__onnx_tensor_t* item = items[reverse ? count - 1 - t : t].constant;
        memcpy((char*)out->data + (o * count + t) * inner, (const char*)item->data + o * inner, (size_t)inner);
      }
    return hgr__onnx_set_constant(node, k, out);
  }
  hgr_value_t* parts = hgr__calloc(node->loader->allocator, count, sizeof(*parts));
  if (!parts) return HGR_STATUS(HGR_STATUS_RESOURCE_EXHAUSTED, "out of host memory");
  hgr_status_t status = HGR_OK;
  for (size_t t = 0; !status && t < count; ++t) {
    status = hgr__onnx_runtime(node, &items[reverse ? count - 1 - t : t], &parts[t]);
    if (!status) status = hgr__onnx_add_reshape(node, parts[t], one, first->ndim + 1, &parts[t]);
  }
  hgr_value_t out = parts[0];
  hgr_attrs_t* attrs = NULL;
  if (!status && count > 1) {
    status = hgr_attrs_create(&attrs);
    if (!status) status = hgr_attrs_set_int(attrs, "axis", axis);
    if (!status) status = hgr__onnx_add_op(node, "concatenate", parts, (uint32_t)count, attrs, 1, &out);
    hgr_attrs_release(attrs);
  }
  hgr__free(node->loader->allocator, parts);
  HGR_RETURN_IF_ERROR(status);
  return hgr__onnx_set_runtime(node, k, out, first->onnx_type);
}

/* A growing list of one scan output's values, one per iteration. */
typedef struct scan_items_t {
  hgr__onnx_value_t* items;
  size_t count, capacity;
} scan_items_t;

static hgr_status_t scan_append(const hgr__onnx_node_t* node, scan_items_t* list, hgr__onnx_value_t* item) {
  if (list->count == list->capacity) {
    size_t capacity = list->capacity ? 2 * list->capacity : 8;
    hgr__onnx_value_t* grown = hgr__realloc_array(node->loader->allocator, list->items, capacity, sizeof(*grown));
    if (!grown) return HGR_STATUS(HGR_STATUS_RESOURCE_EXHAUSTED, "out of host memory");
    list->items = grown;
    list->capacity = capacity;
  }
  list->items[list->count++] = *item; /* moves its constant */
  memset(item, 0, sizeof(*item));
  return HGR_OK;
}

static void scan_free(const hgr__onnx_node_t* node, scan_items_t* lists, size_t count) {
  for (size_t k = 0; lists && k < count; ++k) {
    for (size_t t = 0; t < lists[k].count; ++t) hgr__onnx_value_release(&lists[k].items[t]);
    hgr__free(node->loader->allocator, lists[k].items);
  }
  hgr__free(node->loader->allocator, lists);
}

static void values_free(const hgr__onnx_node_t* node, hgr__onnx_value_t* values, size_t count) {
  for (size_t i = 0; values && i < count; ++i) hgr__onnx_value_release(&values[i]);
  hgr__free(node->loader->allocator, values);
}

/* ---- If ------------------------------------------------------------------------------ */

/* An If whose condition is computed at run time where no stage can decide it (inside
 * a subgraph, or a whole model in one graph): both branches, and per output a
 * `where` on the condition, when the branches agree in every output's type and
 * shape. *out_selected false (nothing added to the graph but the branches' nodes,
 * which no output then reads) where they do not, for the caller's refusal. */
static hgr_status_t import_if_select(hgr__onnx_node_t* node, hgr__onnx_value_t* cond, bool* out_selected) {
  *out_selected = false;
  hgr__onnx_subgraph_t branches[2];
  memset(branches, 0, sizeof(branches));
  hgr__onnx_value_t* outputs[2] = {NULL, NULL};
  uint32_t n = node->output_count;
  hgr_status_t status = HGR_OK;
  for (int b = 0; !status && b < 2; ++b) {
    status = hgr__onnx_subgraph_open(node, b ? "else_branch" : "then_branch", &branches[b]);
    if (!status && (branches[b].graph->n_input || branches[b].graph->n_output != n))
      status = HGR__ONNX_INVALID(node, "its %s takes %zu inputs and gives %zu outputs; If's branches take none and "
                                 "give the node's %u", branches[b].attr, branches[b].graph->n_input,
                                 branches[b].graph->n_output, n);
    if (!status && !(outputs[b] = hgr__calloc(node->loader->allocator, n + 1, sizeof(*outputs[b]))))
      status = HGR_STATUS(HGR_STATUS_RESOURCE_EXHAUSTED, "out of host memory");
  }
  bool agree = true;
  for (int b = 0; !status && b < 2; ++b) status = hgr__onnx_subgraph_import(&branches[b], -1, NULL, 0, 0, outputs[b]);
  for (uint32_t k = 0; !status && k < n; ++k) {
    const hgr__onnx_value_t *a = &outputs[0][k], *c = &outputs[1][k];
    agree = agree && a->onnx_type == c->onnx_type && a->ndim == c->ndim && a->ndim >= 0 &&
            !memcmp(a->shape, c->shape, sizeof(int64_t) * (size_t)a->ndim);
  }
  hgr_value_t flag;
  if (!status && agree) status = hgr__onnx_runtime(node, cond, &flag);
  if (!status && agree && cond->ndim != 0) status = hgr__onnx_add_reshape(node, flag, NULL, 0, &flag); /* broadcasts */
  for (uint32_t k = 0; !status && agree && k < n; ++k) {
    if (!output_used(node, k)) continue;
    hgr_value_t in[3] = {flag};
    status = hgr__onnx_runtime(node, &outputs[0][k], &in[1]);
    if (!status) status = hgr__onnx_runtime(node, &outputs[1][k], &in[2]);
    if (!status) status = hgr__onnx_finish_op(node, HGR_OK, NULL, "where", in, 3, k, outputs[0][k].onnx_type);
  }
  for (int b = 0; b < 2; ++b) {
    values_free(node, outputs[b], outputs[b] ? n : 0);
    hgr__onnx_subgraph_close(&branches[b]);
  }
  *out_selected = !status && agree;
  return status;
}

static hgr_status_t import_if(hgr__onnx_node_t* node) {
  HGR_RETURN_IF_ERROR(hgr__onnx_check_attrs(node, "then_branch else_branch"));
  hgr__onnx_value_t* cond;
  HGR_RETURN_IF_ERROR(hgr__onnx_required(node, 0, &cond));
  bool taken = false, small = false;
  HGR_RETURN_IF_ERROR(hgr__onnx_decide(node, cond));
  if (!cond->constant && cond->has_value) HGR_RETURN_IF_ERROR(hgr__onnx_from_small_inputs(node->loader, cond, &small));
  if (!cond->constant && cond->has_value && !small) {
    bool selected = false;
    HGR_RETURN_IF_ERROR(import_if_select(node, cond, &selected));
    if (selected) return HGR_OK;
  }
  HGR_RETURN_IF_ERROR(known_flag(node, "If", "condition", cond, "", &taken));
  hgr__onnx_subgraph_t branch;
  hgr_status_t status = hgr__onnx_subgraph_open(node, taken ? "then_branch" : "else_branch", &branch);
  const Onnx__GraphProto* g = branch.graph;
  if (!status && g->n_input)
    status = HGR__ONNX_INVALID(node, "its %s declares %zu inputs; If's branches take none", branch.attr, g->n_input);
  if (!status && g->n_output != node->output_count)
    status = HGR__ONNX_INVALID(node, "its %s has %zu outputs; the node has %u", branch.attr, g->n_output,
                               node->output_count);
  hgr__onnx_value_t* outputs = NULL;
  if (!status && !(outputs = hgr__calloc(node->loader->allocator, g->n_output + 1, sizeof(*outputs))))
    status = HGR_STATUS(HGR_STATUS_RESOURCE_EXHAUSTED, "out of host memory");
  /* only the branch taken exists in this specialization: the other may differ in shapes */
  if (!status) status = hgr__onnx_subgraph_import(&branch, -1, NULL, 0, 0, outputs);
  for (uint32_t k = 0; !status && k < node->output_count; ++k) status = set_output(node, k, &outputs[k]);
  values_free(node, outputs, g ? g->n_output : 0);
  hgr__onnx_subgraph_close(&branch);
  return status;
}

/* ---- Loop ------------------------------------------------------------------------------ */

/* What one Loop import holds: the carried values, the body's inputs and outputs of
 * an iteration, the scan outputs so far. */
typedef struct loop_t {
  hgr__onnx_subgraph_t body;
  uint32_t carried_count, scan_count;
  hgr__onnx_value_t* carried; /* carried_count */
  hgr__onnx_value_t* inputs;  /* 2 + carried_count: the iteration, the condition, the carried values (borrowed) */
  hgr__onnx_value_t* outputs; /* the body's outputs */
  scan_items_t* scans;        /* scan_count */
} loop_t;

static hgr_status_t loop_setup(hgr__onnx_node_t* node, loop_t* loop) {
  HGR_RETURN_IF_ERROR(hgr__onnx_subgraph_open(node, "body", &loop->body));
  const Onnx__GraphProto* g = loop->body.graph;
  uint32_t n = loop->carried_count;
  if (g->n_input != 2 + (size_t)n)
    return HGR__ONNX_INVALID(node, "its body takes %zu inputs; a Loop of %u loop-carried values gives it %u (the "
                             "iteration number, the condition and those values)", g->n_input, n, n + 2);
  if (g->n_output < 1 + (size_t)n)
    return HGR__ONNX_INVALID(node, "its body has %zu outputs; a Loop of %u loop-carried values needs at least %u (the "
                             "condition and those values)", g->n_output, n, n + 1);
  loop->scan_count = (uint32_t)(g->n_output - 1 - n);
  if (node->output_count > n + loop->scan_count)
    return HGR__ONNX_INVALID(node, "it has %u outputs; its body gives %u loop-carried values and %u scan outputs",
                             node->output_count, n, loop->scan_count);
  hgr_allocator_t allocator = node->loader->allocator;
  loop->carried = hgr__calloc(allocator, n + 1, sizeof(*loop->carried));
  loop->inputs = hgr__calloc(allocator, n + 2, sizeof(*loop->inputs));
  loop->outputs = hgr__calloc(allocator, g->n_output + 1, sizeof(*loop->outputs));
  loop->scans = hgr__calloc(allocator, loop->scan_count + 1, sizeof(*loop->scans));
  if (!loop->carried || !loop->inputs || !loop->outputs || !loop->scans)
    return HGR_STATUS(HGR_STATUS_RESOURCE_EXHAUSTED, "out of host memory");
  for (uint32_t j = 0; j < n; ++j) {
    hgr__onnx_value_t* initial;
    HGR_RETURN_IF_ERROR(hgr__onnx_required(node, 2 + j, &initial));
    HGR_RETURN_IF_ERROR(copy_value(node, initial, &loop->carried[j]));
  }
  return HGR_OK;
}

static void loop_free(hgr__onnx_node_t* node, loop_t* loop) {
  values_free(node, loop->carried, loop->carried_count);
  values_free(node, loop->inputs, 2); /* the others are the carried values, borrowed */
  values_free(node, loop->outputs, loop->body.graph ? loop->body.graph->n_output : 0);
  scan_free(node, loop->scans, loop->scan_count);
  hgr__onnx_subgraph_close(&loop->body);
}

/* The Loop's values between iterations (its carried values, then its scan outputs so
 * far), which a stage that ends or starts there carries (onnx_stage.c): pointers from
 * the loader's allocator (free them). */
static hgr_status_t in_flight(const hgr__onnx_node_t* node, loop_t* loop, hgr__onnx_value_t*** out_values,
                              size_t* out_count) {
  size_t count = loop->carried_count;
  for (uint32_t k = 0; k < loop->scan_count; ++k) count += loop->scans[k].count;
  hgr__onnx_value_t** values = hgr__calloc(node->loader->allocator, count + 1, sizeof(*values));
  if (!values) return HGR_STATUS(HGR_STATUS_RESOURCE_EXHAUSTED, "out of host memory");
  size_t at = 0;
  for (uint32_t j = 0; j < loop->carried_count; ++j) values[at++] = &loop->carried[j];
  for (uint32_t k = 0; k < loop->scan_count; ++k)
    for (size_t t = 0; t < loop->scans[k].count; ++t) values[at++] = &loop->scans[k].items[t];
  *out_values = values;
  *out_count = count;
  return HGR_OK;
}

/* The Loop's condition after an iteration, cond (the body's output 0), as a flag: a
 * value the body computes from the data is a decision at run time (a stage ends
 * after the iteration, carrying the Loop's values); detail names the iteration. */
static hgr_status_t loop_condition(hgr__onnx_node_t* node, loop_t* loop, hgr__onnx_value_t* cond,
                                   const char* detail, bool* out_running) {
  if (!cond->constant) {
    hgr__onnx_value_t** values = NULL;
    size_t count = 0;
    HGR_RETURN_IF_ERROR(in_flight(node, loop, &values, &count));
    hgr_status_t status = hgr__onnx_decide_in_loop(node, cond, values, count);
    hgr__free(node->loader->allocator, values);
    HGR_RETURN_IF_ERROR(status);
  }
  return known_flag(node, "Loop", "condition", cond, detail, out_running);
}

/* Where the last stage ended after the iteration before this point (the next one, or
 * the Loop's end): this stage starts here. */
static hgr_status_t loop_resume(hgr__onnx_node_t* node, loop_t* loop) {
  if (!hgr__onnx_stage_resumes_in_loop(node)) return HGR_OK;
  hgr__onnx_value_t** values = NULL;
  size_t count = 0;
  HGR_RETURN_IF_ERROR(in_flight(node, loop, &values, &count));
  hgr_status_t status = hgr__onnx_stage_start_in_loop(node, values, count);
  hgr__free(node->loader->allocator, values);
  return status;
}

/* One copy of the body, iteration i; *inout_running becomes its condition when the
 * node has one (conditioned). */
static hgr_status_t loop_iteration(hgr__onnx_node_t* node, loop_t* loop, int64_t i, bool conditioned,
                                   bool* inout_running) {
  uint32_t n = loop->carried_count;
  const Onnx__GraphProto* g = loop->body.graph;
  HGR_RETURN_IF_ERROR(loop_resume(node, loop));
  HGR_RETURN_IF_ERROR(scalar_input(node, g->input[0]->name, HGR__ONNX_INT64, i, &loop->inputs[0]));
  HGR_RETURN_IF_ERROR(scalar_input(node, g->input[1]->name, HGR__ONNX_BOOL, 1, &loop->inputs[1]));
  for (uint32_t j = 0; j < n; ++j) {
    loop->inputs[2 + j] = loop->carried[j];
    loop->inputs[2 + j].borrowed = true;
  }
  HGR_RETURN_IF_ERROR(
      hgr__onnx_subgraph_import(&loop->body, i, loop->inputs, n + 2, conditioned ? 1 : 0, loop->outputs));
  for (uint32_t j = 0; j < 2; ++j) hgr__onnx_value_release(&loop->inputs[j]);
  for (uint32_t j = 0; j < n; ++j) {
    hgr__onnx_value_release(&loop->carried[j]);
    loop->carried[j] = loop->outputs[1 + j];
    memset(&loop->outputs[1 + j], 0, sizeof(loop->outputs[1 + j]));
  }
  for (uint32_t k = 0; k < loop->scan_count; ++k) {
    hgr__onnx_value_t* item = &loop->outputs[1 + n + k];
    if (output_used(node, n + k)) HGR_RETURN_IF_ERROR(scan_append(node, &loop->scans[k], item));
    else hgr__onnx_value_release(item);
  }
  if (conditioned) { /* after the iteration's values moved: a stage ending here carries them */
    char detail[96];
    snprintf(detail, sizeof(detail), " (the body's output 0, at iteration %lld)", (long long)i);
    HGR_RETURN_IF_ERROR(loop_condition(node, loop, &loop->outputs[0], detail, inout_running));
  }
  hgr__onnx_value_release(&loop->outputs[0]);
  return HGR_OK;
}

static hgr_status_t import_loop(hgr__onnx_node_t* node) {
  HGR_RETURN_IF_ERROR(hgr__onnx_check_attrs(node, "body"));
  hgr__onnx_value_t* trip = hgr__onnx_input(node, 0);
  hgr__onnx_value_t* cond = hgr__onnx_input(node, 1);
  if (!trip && !cond)
    return HGR__ONNX_UNSUPPORTED(node, "it has neither a trip count nor a condition (it runs until the model is "
                                 "stopped); hgr unrolls Loops whose end is known at load");
  int64_t trip_count = -1; /* no trip count: until the condition is false */
  if (trip) HGR_RETURN_IF_ERROR(hgr__onnx_decide(node, trip));
  if (cond) HGR_RETURN_IF_ERROR(hgr__onnx_decide(node, cond));
  if (trip && !trip->constant) return refuse_run_time(node, "Loop", "trip count", trip, "");
  if (trip) {
    if (trip->constant->count != 1)
      return HGR__ONNX_INVALID(node, "its trip count '%s' holds %llu values; Loop takes one", trip->name,
                               (unsigned long long)trip->constant->count);
    int64_t m = hgr__onnx_tensor_i64(trip->constant, 0);
    trip_count = m > 0 ? m : 0;
  }
  bool running = true;
  if (cond) HGR_RETURN_IF_ERROR(known_flag(node, "Loop", "condition", cond, "", &running));
  loop_t loop;
  memset(&loop, 0, sizeof(loop));
  loop.carried_count = node->input_count > 2 ? node->input_count - 2 : 0;
  hgr_status_t status = loop_setup(node, &loop);
  if (!status && running && trip_count >= 0) status = hgr__onnx_subgraph_check_unroll(&loop.body, (uint64_t)trip_count);
  /* Without a trip count the iterations are bounded by the nodes they import
   * (hgr__onnx_subgraph_import counts each copy, at least one node). */
  int64_t iterations = 0;
  for (; !status && running && (trip_count < 0 || iterations < trip_count); ++iterations)
    status = loop_iteration(node, &loop, iterations, cond != NULL, &running);
  if (!status) status = loop_resume(node, &loop); /* the last stage ended on the condition that ends the Loop */
  for (uint32_t j = 0; !status && j < loop.carried_count; ++j) status = set_output(node, j, &loop.carried[j]);
  for (uint32_t k = 0; !status && k < loop.scan_count; ++k) {
    if (!output_used(node, loop.carried_count + k)) continue;
    if (!iterations)
      status = HGR__ONNX_UNSUPPORTED(node, "it runs no iteration, so its scan output %u has no shape hgr can give "
                                     "(ONNX leaves it to the body's declared type)", k);
    else
      status = stack_output(node, loop.carried_count + k, loop.scans[k].items, loop.scans[k].count, 0, false);
  }
  loop_free(node, &loop);
  return status;
}

/* ---- Scan ------------------------------------------------------------------------------ */

typedef struct scan_t {
  hgr__onnx_subgraph_t body;
  uint32_t state_count, input_count, output_count; /* N states, M scan inputs, K scan outputs */
  int64_t* input_axes;                             /* M, normalized */
  int64_t* input_directions;                       /* M */
  int64_t* output_axes;                            /* K, as given */
  int64_t* output_directions;                      /* K */
  int64_t length;                                  /* iterations */
  hgr__onnx_value_t* states;                       /* N */
  hgr__onnx_value_t* inputs;                       /* N + M: the states (borrowed) and this iteration's slices */
  hgr__onnx_value_t* outputs;                      /* the body's */
  scan_items_t* scans;                             /* K */
} scan_t;

/* attr name as count ints into out, fallback where the node omits it. */
static hgr_status_t scan_ints(hgr__onnx_node_t* node, const char* name, uint32_t count, int64_t fallback,
                              int64_t* out) {
  uint32_t got = 0;
  bool present = false;
  HGR_RETURN_IF_ERROR(hgr__onnx_attr_ints(node, name, out, count, &got, &present));
  if (present && got != count)
    return HGR__ONNX_INVALID(node, "attr '%s' has %u values; the node has %u of them", name, got, count);
  for (uint32_t i = 0; !present && i < count; ++i) out[i] = fallback;
  return HGR_OK;
}

static hgr_status_t scan_setup(hgr__onnx_node_t* node, scan_t* scan) {
  int64_t m = 0;
  HGR_RETURN_IF_ERROR(hgr__onnx_attr_int(node, "num_scan_inputs", 0, &m));
  if (m < 1 || m > node->input_count)
    return HGR__ONNX_INVALID(node, "attr 'num_scan_inputs' is %lld; the node has %u inputs", (long long)m,
                             node->input_count);
  scan->input_count = (uint32_t)m;
  scan->state_count = node->input_count - scan->input_count;
  HGR_RETURN_IF_ERROR(hgr__onnx_subgraph_open(node, "body", &scan->body));
  const Onnx__GraphProto* g = scan->body.graph;
  uint32_t n = scan->state_count;
  if (g->n_input != (size_t)n + scan->input_count)
    return HGR__ONNX_INVALID(node, "its body takes %zu inputs; the node gives it %u states and %u scan inputs",
                             g->n_input, n, scan->input_count);
  if (g->n_output < n)
    return HGR__ONNX_INVALID(node, "its body has %zu outputs; the node's %u states need as many", g->n_output, n);
  scan->output_count = (uint32_t)(g->n_output - n);
  if (node->output_count > n + scan->output_count)
    return HGR__ONNX_INVALID(node, "it has %u outputs; its body gives %u states and %u scan outputs",
                             node->output_count, n, scan->output_count);
  hgr_allocator_t allocator = node->loader->allocator;
  size_t ints = 2 * ((size_t)scan->input_count + scan->output_count) + 1;
  scan->input_axes = hgr__calloc(allocator, ints, sizeof(int64_t));
  scan->states = hgr__calloc(allocator, n + 1, sizeof(*scan->states));
  scan->inputs = hgr__calloc(allocator, g->n_input + 1, sizeof(*scan->inputs));
  scan->outputs = hgr__calloc(allocator, g->n_output + 1, sizeof(*scan->outputs));
  scan->scans = hgr__calloc(allocator, scan->output_count + 1, sizeof(*scan->scans));
  if (!scan->input_axes || !scan->states || !scan->inputs || !scan->outputs || !scan->scans)
    return HGR_STATUS(HGR_STATUS_RESOURCE_EXHAUSTED, "out of host memory");
  scan->input_directions = scan->input_axes + scan->input_count;
  scan->output_axes = scan->input_directions + scan->input_count;
  scan->output_directions = scan->output_axes + scan->output_count;
  HGR_RETURN_IF_ERROR(scan_ints(node, "scan_input_axes", scan->input_count, 0, scan->input_axes));
  HGR_RETURN_IF_ERROR(scan_ints(node, "scan_input_directions", scan->input_count, 0, scan->input_directions));
  HGR_RETURN_IF_ERROR(scan_ints(node, "scan_output_axes", scan->output_count, 0, scan->output_axes));
  HGR_RETURN_IF_ERROR(scan_ints(node, "scan_output_directions", scan->output_count, 0, scan->output_directions));
  for (uint32_t i = 0; i < scan->input_count + scan->output_count; ++i) {
    bool is_input = i < scan->input_count;
    int64_t direction = is_input ? scan->input_directions[i] : scan->output_directions[i - scan->input_count];
    if (direction != 0 && direction != 1)
      return HGR__ONNX_INVALID(node, "attr 'scan_%s_directions' holds %lld; directions are 0 (forward) or 1 "
                               "(reverse)", is_input ? "input" : "output", (long long)direction);
  }
  scan->length = -1;
  for (uint32_t j = 0; j < scan->input_count; ++j) {
    hgr__onnx_value_t* x;
    HGR_RETURN_IF_ERROR(hgr__onnx_required(node, n + j, &x));
    int32_t axis;
    HGR_RETURN_IF_ERROR(hgr__onnx_axis(node, "attr 'scan_input_axes'", scan->input_axes[j], x->ndim, &axis));
    scan->input_axes[j] = axis;
    if (scan->length >= 0 && x->shape[axis] != scan->length)
      return HGR__ONNX_INVALID(node, "scan input %u ('%s') has %lld elements along its axis %d; scan input 0 has "
                               "%lld", j, x->name, (long long)x->shape[axis], (int)axis, (long long)scan->length);
    scan->length = x->shape[axis];
  }
  for (uint32_t j = 0; j < n; ++j) {
    hgr__onnx_value_t* initial;
    HGR_RETURN_IF_ERROR(hgr__onnx_required(node, j, &initial));
    HGR_RETURN_IF_ERROR(copy_value(node, initial, &scan->states[j]));
  }
  return HGR_OK;
}

static void scan_release(hgr__onnx_node_t* node, scan_t* scan) {
  values_free(node, scan->states, scan->state_count);
  if (scan->inputs)
    for (uint32_t j = 0; j < scan->input_count; ++j) hgr__onnx_value_release(&scan->inputs[scan->state_count + j]);
  hgr__free(node->loader->allocator, scan->inputs);
  values_free(node, scan->outputs, scan->body.graph ? scan->body.graph->n_output : 0);
  scan_free(node, scan->scans, scan->output_count);
  hgr__free(node->loader->allocator, scan->input_axes);
  hgr__onnx_subgraph_close(&scan->body);
}

/* x's slice at index along axis, without that axis: on the host for a constant,
 * else a `take` of one index. */
static hgr_status_t slice_at(hgr__onnx_node_t* node, hgr__onnx_value_t* x, int32_t axis, int64_t index,
                             hgr__onnx_value_t* out) {
  memset(out, 0, sizeof(*out));
  out->name = x->name;
  out->onnx_type = x->onnx_type;
  out->ndim = x->ndim - 1;
  for (int32_t d = 0, s = 0; d < x->ndim; ++d)
    if (d != axis) out->shape[s++] = x->shape[d];
  out->from_input = x->from_input;
  out->defined = true;
  out->producer = -1;
  out->consumer = -1;
  out->scoped = true;
  if (x->constant) {
    HGR_RETURN_IF_ERROR(hgr__onnx_tensor_new(node->loader->allocator, x->onnx_type, out->shape, out->ndim, node->label,
                                             &out->constant));
    uint64_t outer = 1, inner = hgr__onnx_type_bytes(x->onnx_type), extent = (uint64_t)x->shape[axis];
    for (int32_t d = 0; d < axis; ++d) outer *= (uint64_t)x->shape[d];
    for (int32_t d = axis + 1; d < x->ndim; ++d) inner *= (uint64_t)x->shape[d];
    for (uint64_t o = 0; o < outer; ++o)
      memcpy((char*)out->constant->data + o * inner,
             (const char*)x->constant->data + (o * extent + (uint64_t)index) * inner, (size_t)inner);
    return HGR_OK;
  }
  hgr_value_t in[2];
  HGR_RETURN_IF_ERROR(hgr__onnx_runtime(node, x, &in[0]));
  hgr__onnx_tensor_t* position = NULL;
  HGR_RETURN_IF_ERROR(hgr__onnx_tensor_new(node->loader->allocator, HGR__ONNX_INT32, NULL, 0, node->label, &position));
  hgr__onnx_tensor_set_i64(position, 0, index);
  hgr_status_t status = hgr__onnx_add_constant(node, NULL, position, &in[1]);
  hgr__onnx_tensor_free(position);
  hgr_attrs_t* attrs = NULL;
  if (!status) status = hgr_attrs_create(&attrs);
  if (!status) status = hgr_attrs_set_int(attrs, "axis", axis);
  if (!status) status = hgr_attrs_set_string(attrs, "mode", "clip");
  if (!status) status = hgr__onnx_add_op(node, "take", in, 2, attrs, 1, &out->value);
  hgr_attrs_release(attrs);
  out->has_value = !status;
  return status;
}

/* One copy of the body: iteration t, its slices taken in each scan input's direction. */
static hgr_status_t scan_iteration(hgr__onnx_node_t* node, scan_t* scan, int64_t t) {
  uint32_t n = scan->state_count;
  for (uint32_t j = 0; j < n; ++j) {
    scan->inputs[j] = scan->states[j];
    scan->inputs[j].borrowed = true;
  }
  for (uint32_t j = 0; j < scan->input_count; ++j) {
    hgr__onnx_value_release(&scan->inputs[n + j]);
    int64_t index = scan->input_directions[j] ? scan->length - 1 - t : t;
    HGR_RETURN_IF_ERROR(slice_at(node, node->inputs[n + j], (int32_t)scan->input_axes[j], index, &scan->inputs[n + j]));
  }
  HGR_RETURN_IF_ERROR(
      hgr__onnx_subgraph_import(&scan->body, t, scan->inputs, n + scan->input_count, 0, scan->outputs));
  for (uint32_t j = 0; j < n; ++j) {
    hgr__onnx_value_release(&scan->states[j]);
    scan->states[j] = scan->outputs[j];
    memset(&scan->outputs[j], 0, sizeof(scan->outputs[j]));
  }
  for (uint32_t k = 0; k < scan->output_count; ++k) {
    hgr__onnx_value_t* item = &scan->outputs[n + k];
    if (output_used(node, n + k)) HGR_RETURN_IF_ERROR(scan_append(node, &scan->scans[k], item));
    else hgr__onnx_value_release(item);
  }
  return HGR_OK;
}

static hgr_status_t import_scan(hgr__onnx_node_t* node) {
  if (node->opset < 9)
    return HGR__ONNX_UNSUPPORTED(node, "the batched Scan of opset 8 (sequence_lens and a batch axis) is not "
                                 "supported; hgr runs Scan from opset 9");
  HGR_RETURN_IF_ERROR(hgr__onnx_check_attrs(node, "body num_scan_inputs scan_input_axes scan_input_directions "
                                                  "scan_output_axes scan_output_directions"));
  scan_t scan;
  memset(&scan, 0, sizeof(scan));
  hgr_status_t status = scan_setup(node, &scan);
  if (!status) status = hgr__onnx_subgraph_check_unroll(&scan.body, (uint64_t)scan.length);
  for (int64_t t = 0; !status && t < scan.length; ++t) status = scan_iteration(node, &scan, t);
  for (uint32_t j = 0; !status && j < scan.state_count; ++j) status = set_output(node, j, &scan.states[j]);
  for (uint32_t k = 0; !status && k < scan.output_count; ++k) {
    if (!output_used(node, scan.state_count + k)) continue;
    if (!scan.length)
      status = HGR__ONNX_UNSUPPORTED(node, "its scan inputs are empty, so its scan output %u has no shape hgr can "
                                     "give", k);
    else
      status = stack_output(node, scan.state_count + k, scan.scans[k].items, scan.scans[k].count, scan.output_axes[k],
                            scan.output_directions[k] != 0);
  }
  scan_release(node, &scan);
  return status;
}

/* Inputs: If's condition is required; Loop's trip count and condition may be omitted
 * (""), its carried values not (loop_setup); Scan's are all required (scan_setup). */
const hgr__onnx_op_t hgr__onnx_ops_control[] = {
    {"If", import_if, NULL, 1},
    {"Loop", import_loop, NULL, 0},
    {"Scan", import_scan, NULL, 0},
    {.name = NULL},
};
