#include "reference.h"

#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "graph_internal.h"

typedef enum op_t {
  OP_ADD, OP_SUBTRACT, OP_MULTIPLY, OP_DIVIDE, OP_MAXIMUM, OP_MINIMUM,
  OP_NEGATIVE, OP_RELU, OP_EXP, OP_SIGMOID, OP_TANH, OP_COPY, OP_NOP,
} op_t;

static const struct {
  const char* name;
  uint32_t arity;
  bool inexact;
} op_table[] = {
    [OP_ADD] = {"add", 2, false},         [OP_SUBTRACT] = {"subtract", 2, false},
    [OP_MULTIPLY] = {"multiply", 2, false}, [OP_DIVIDE] = {"divide", 2, true},
    [OP_MAXIMUM] = {"maximum", 2, false}, [OP_MINIMUM] = {"minimum", 2, false},
    [OP_NEGATIVE] = {"negative", 1, false}, [OP_RELU] = {"relu", 1, false},
    [OP_EXP] = {"exp", 1, true},          [OP_SIGMOID] = {"sigmoid", 1, true},
    [OP_TANH] = {"tanh", 1, true},        [OP_COPY] = {"__copy", 1, false},
    [OP_NOP] = {"__nop", 1, false},
};
#define OP_COUNT (sizeof(op_table) / sizeof(op_table[0]))

static int find_op(const char* func_name) {
  for (size_t i = 0; i < OP_COUNT; ++i)
    if (func_name && !strcmp(op_table[i].name, func_name)) return (int)i;
  return -1;
}

hgr_test_tolerance_t hgr_test_op_tolerance(const char* func_name, bool* out_known) {
  int op = find_op(func_name);
  if (out_known) *out_known = op >= 0;
  if (op >= 0 && op_table[op].inexact) return (hgr_test_tolerance_t){1e-5, 1e-7};
  return (hgr_test_tolerance_t){0, 0};
}

static float apply(op_t op, float a, float b) {
  switch (op) {
    case OP_ADD: return a + b;
    case OP_SUBTRACT: return a - b;
    case OP_MULTIPLY: return a * b;
    case OP_DIVIDE: return a / b;
    case OP_MAXIMUM: return fmaxf(a, b);
    case OP_MINIMUM: return fminf(a, b);
    case OP_NEGATIVE: return -a;
    case OP_RELU: return fmaxf(a, 0.0f);
    case OP_EXP: return expf(a);
    case OP_SIGMOID: return 1.0f / (1.0f + expf(-a));
    case OP_TANH: return tanhf(a);
    case OP_COPY:
    case OP_NOP: return a;
  }
  return NAN;
}

/* How far the op's result may move when its inputs are off by up to ea and eb
 * (first-order bounds made safe for large errors; infinity when nothing is known). */
static double propagate(op_t op, double a, double b, double ea, double eb, double out) {
  if (ea == 0 && eb == 0) return 0;
  switch (op) {
    case OP_ADD:
    case OP_SUBTRACT: return ea + eb;
    case OP_MULTIPLY: return (fabs(b) + eb) * ea + fabs(a) * eb;
    case OP_DIVIDE: return eb >= fabs(b) ? INFINITY : (ea + fabs(out) * eb) / (fabs(b) - eb);
    case OP_MAXIMUM:
    case OP_MINIMUM: return fmax(ea, eb);
    case OP_EXP: return fabs(out) * expm1(ea);
    case OP_SIGMOID: return fmin(0.25 * ea, 1.0);
    case OP_TANH: return fmin(ea, 2.0);
    case OP_NEGATIVE:
    case OP_RELU:
    case OP_COPY:
    case OP_NOP: return ea;
  }
  return INFINITY;
}

typedef struct entry_data_t {
  float* value;
  float* bound; /* NULL: exact */
} entry_data_t;

static hgr_status_t evaluate_node(const hgr_graph_t* graph, uint32_t node_id, entry_data_t* data) {
  const hgr__node_t* node = &graph->nodes[node_id];
  int op = find_op(node->func_name);
  if (op < 0)
    return HGR_STATUS(HGR_STATUS_INVALID_ARGUMENT, "node %u '%s': the reference has no op '%s'",
                      node_id, node->name, node->func_name);
  if (node->input_count != op_table[op].arity || node->num_outputs != 1)
    return HGR_STATUS(HGR_STATUS_INVALID_ARGUMENT,
                      "node %u '%s': %s takes %u input(s) and 1 output, not %u and %u", node_id,
                      node->name, node->func_name, op_table[op].arity, node->input_count,
                      node->num_outputs);
  uint32_t out_id = graph->node_row_ptr[node_id];
  uint64_t count = graph->entries[out_id].element_count;
  uint32_t in_ids[2];
  for (uint32_t k = 0; k < 2; ++k) {
    in_ids[k] = hgr__graph_entry_id(graph, node->inputs[k < node->input_count ? k : 0]);
    if (graph->entries[in_ids[k]].element_count != count)
      return HGR_STATUS(HGR_STATUS_INVALID_ARGUMENT,
                        "node %u '%s': input %u has %llu elements, the output %llu", node_id,
                        node->name, k, (unsigned long long)graph->entries[in_ids[k]].element_count,
                        (unsigned long long)count);
  }
  const entry_data_t* a = &data[in_ids[0]];
  const entry_data_t* b = &data[in_ids[1]];
  entry_data_t* out = &data[out_id];
  out->value = malloc((count ? count : 1) * sizeof(float));
  if (!out->value) return HGR_STATUS(HGR_STATUS_RESOURCE_EXHAUSTED, "reference: out of memory");
  for (uint64_t i = 0; i < count; ++i) out->value[i] = apply((op_t)op, a->value[i], b->value[i]);
  if (!a->bound && !b->bound && !op_table[op].inexact) return HGR_OK;
  out->bound = malloc((count ? count : 1) * sizeof(float));
  if (!out->bound) return HGR_STATUS(HGR_STATUS_RESOURCE_EXHAUSTED, "reference: out of memory");
  hgr_test_tolerance_t tolerance = hgr_test_op_tolerance(node->func_name, NULL);
  for (uint64_t i = 0; i < count; ++i) {
    double ea = a->bound ? a->bound[i] : 0, eb = b->bound ? b->bound[i] : 0;
    double result = fabs((double)out->value[i]);
    double moved = propagate((op_t)op, a->value[i], b->value[i], ea, eb, result);
    /* Different inputs round differently: one more ulp of the result when moved. */
    double bound = moved + (moved > 0 ? FLT_EPSILON * result : 0) +
                   tolerance.relative * (result + moved) + tolerance.absolute;
    out->bound[i] = isnan(bound) ? INFINITY : (float)(bound * (1 + 1e-6));
  }
  return HGR_OK;
}

/* Evaluates the graph and keeps the values of `count` entries: the heads
 * (every_entry false) or every entry. */
static hgr_status_t reference_run(const hgr_graph_t* graph, const float* const* inputs, bool every_entry,
                                  hgr_test_reference_t* out) {
  memset(out, 0, sizeof(*out));
  hgr_status_t status = HGR_OK;
  uint32_t count_kept = every_entry ? graph->entry_count : graph->head_count;
  entry_data_t* data = calloc(graph->entry_count ? graph->entry_count : 1, sizeof(*data));
  out->output_count = count_kept;
  out->element_counts = calloc(count_kept + 1, sizeof(uint64_t));
  out->values = calloc(count_kept + 1, sizeof(float*));
  out->error_bounds = calloc(count_kept + 1, sizeof(float*));
  if (!data || !out->element_counts || !out->values || !out->error_bounds) {
    status = HGR_STATUS(HGR_STATUS_RESOURCE_EXHAUSTED, "reference: out of memory");
    goto cleanup;
  }
  for (uint32_t e = 0; e < graph->entry_count && !status; ++e) {
    char dtype[24];
    if (!hgr_dtype_equal(graph->entries[e].dtype, (hgr_dtype_t){HGR_DTYPE_FLOAT, 32, 1}))
      status = HGR_STATUS(HGR_STATUS_INVALID_ARGUMENT,
                          "entry %u: the reference takes float32, not %s", e,
                          hgr_dtype_format(graph->entries[e].dtype, dtype, sizeof(dtype)));
  }
  for (uint32_t i = 0; i < graph->arg_count && !status; ++i) {
    uint32_t entry_id = graph->node_row_ptr[graph->arg_nodes[i]];
    uint64_t count = graph->entries[entry_id].element_count;
    data[entry_id].value = malloc((count ? count : 1) * sizeof(float));
    if (!data[entry_id].value)
      status = HGR_STATUS(HGR_STATUS_RESOURCE_EXHAUSTED, "reference: out of memory");
    else if (!inputs[i])
      status = HGR_STATUS(HGR_STATUS_INVALID_ARGUMENT, "reference: input %u has no data", i);
    else
      memcpy(data[entry_id].value, inputs[i], count * sizeof(float));
  }
  for (uint32_t n = 0; n < graph->node_count && !status; ++n)
    if (graph->nodes[n].is_op) status = evaluate_node(graph, n, data);
  for (uint32_t h = 0; h < count_kept && !status; ++h) {
    uint32_t entry_id = every_entry ? h : hgr__graph_entry_id(graph, graph->heads[h]);
    uint64_t count = graph->entries[entry_id].element_count;
    out->element_counts[h] = count;
    out->values[h] = malloc((count ? count : 1) * sizeof(float));
    if (data[entry_id].bound) out->error_bounds[h] = malloc((count ? count : 1) * sizeof(float));
    if (!out->values[h] || (data[entry_id].bound && !out->error_bounds[h])) {
      status = HGR_STATUS(HGR_STATUS_RESOURCE_EXHAUSTED, "reference: out of memory");
      break;
    }
    memcpy(out->values[h], data[entry_id].value, count * sizeof(float));
    if (data[entry_id].bound)
      memcpy(out->error_bounds[h], data[entry_id].bound, count * sizeof(float));
  }
cleanup:
  for (uint32_t e = 0; data && e < graph->entry_count; ++e) {
    free(data[e].value);
    free(data[e].bound);
  }
  free(data);
  return status;
}

hgr_status_t hgr_test_reference_run(const hgr_graph_t* graph, const float* const* inputs,
                                    hgr_test_reference_t* out) {
  return reference_run(graph, inputs, false, out);
}

hgr_status_t hgr_test_reference_run_entries(const hgr_graph_t* graph, const float* const* inputs,
                                            hgr_test_reference_t* out) {
  return reference_run(graph, inputs, true, out);
}

void hgr_test_reference_free(hgr_test_reference_t* reference) {
  for (size_t h = 0; h < reference->output_count; ++h) {
    if (reference->values) free(reference->values[h]);
    if (reference->error_bounds) free(reference->error_bounds[h]);
  }
  free(reference->values);
  free(reference->error_bounds);
  free(reference->element_counts);
  memset(reference, 0, sizeof(*reference));
}

bool hgr_test_compare(const float* got, const float* expected, const float* bound, uint64_t count,
                      char* message, size_t capacity) {
  for (uint64_t i = 0; i < count; ++i) {
    float g = got[i], e = expected[i], allowed = bound ? bound[i] : 0.0f;
    bool match = (isnan(g) && isnan(e)) || g == e || !isfinite(allowed) ||
                 (isfinite(g) && isfinite(e) && fabs((double)g - e) <= fmax(allowed, FLT_MIN));
    if (!match) {
      snprintf(message, capacity, "element %llu: got %.9g, expected %.9g (allowed error %.3g)",
               (unsigned long long)i, g, e, allowed);
      return false;
    }
  }
  return true;
}

bool hgr_test_reference_check(const hgr_test_reference_t* reference, size_t output,
                              const float* got, char* message, size_t capacity) {
  return hgr_test_compare(got, reference->values[output], reference->error_bounds[output],
                          reference->element_counts[output], message, capacity);
}
