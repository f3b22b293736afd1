/* Pattern fusion (passes.h): subgraphs that exporters write out op by op, matched
 * from their last node backwards and replaced by the one op that computes them.
 *
 * Each matcher (the table `patterns`) looks at one candidate last node (the root)
 * and collects the members it would replace, the fused node's inputs and attrs. A
 * match stands only when every member but the root is read by members alone and is
 * no graph output (the values inside disappear). Roots are tried from the graph's
 * end backwards, so a node already taken by a later match is never taken twice.
 * The fused node goes at the root's place, named like it: every input it reads was
 * read by a member, so it is there already, and the order stays topological.
 *
 * Constants are scalar params (one float32 element), compared with a relative
 * tolerance (exporters print sqrt(2) as 1.4142135 or 1.41421356...). Every member's
 * shape is compared with the pattern's input's, never with a number, so whether a
 * pattern matches does not depend on the extents a model is imported at. */
#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "alloc.h"
#include "ops.h"
#include "passes.h"

#define NONE HGR__PASS_NONE
#define PASS "fusing written-out patterns"
#define MAX_MEMBERS 16
#define MAX_INPUTS 3
#define MAX_ATTRS 4
#define RELATIVE_TOLERANCE 1e-4

/* A match: the members it replaces (root first) and the node that replaces them. */
typedef struct match_t {
  uint32_t members[MAX_MEMBERS];
  uint32_t member_count;
  const char* func_name;
  hgr__entry_ref_t inputs[MAX_INPUTS];
  uint32_t input_count;
  const char* keys[MAX_ATTRS];
  char values[MAX_ATTRS][32];
  uint32_t attr_count;
} match_t;

typedef struct finder_t {
  hgr_allocator_t allocator; /* the graph's: the pass's tables */
  const hgr_graph_t* graph;
  const hgr_params_t* params; /* may be NULL: then no constant is known and nothing matches */
  uint32_t* uses;             /* per entry: input references, plus 1 per graph output */
  bool* head;                 /* per entry: a graph output */
  uint32_t* taken;            /* per node: the root of the match that replaces it, or NONE */
  match_t** match;            /* per node (a root): its match */
  bool* dropped;              /* per node: a param only members read (a constant of a pattern) */
} finder_t;

/* ---- what the matchers share ------------------------------------------------------ */

static const hgr__entry_t* entry_of(const finder_t* f, hgr__entry_ref_t ref) {
  return &f->graph->entries[hgr__graph_entry_id(f->graph, ref)];
}

static bool same_ref(const finder_t* f, hgr__entry_ref_t a, hgr__entry_ref_t b) {
  return hgr__graph_entry_id(f->graph, a) == hgr__graph_entry_id(f->graph, b);
}

/* Whether node n is a float32 op `func` of `operands` inputs and one output, not
 * taken yet, with no attrs but those listed in `attrs` (space-separated; "hash"
 * always passes). */
static bool is_op(const finder_t* f, uint32_t n, const char* func, uint32_t operands, const char* attrs) {
  const hgr__node_t* node = &f->graph->nodes[n];
  if (!node->is_op || strcmp(node->func_name, func) || node->num_outputs != 1 || node->input_count != operands ||
      f->taken[n] != NONE || !hgr__pass_all_float32(f->graph, n))
    return false;
  for (uint32_t a = 0; a < node->attr_count; ++a) {
    const char* key = node->attrs[a].key;
    size_t length = strlen(key);
    const char* at = attrs;
    bool known = !strcmp(key, "hash");
    while (!known && (at = strstr(at, key)) != NULL) {
      known = (at == attrs || at[-1] == ' ') && (at[length] == ' ' || at[length] == '\0');
      at += length;
    }
    if (!known) return false;
  }
  return true;
}

/* The node that produces ref, when it is op `func` (is_op) of `operands` inputs. */
static uint32_t producer(const finder_t* f, hgr__entry_ref_t ref, const char* func, uint32_t operands) {
  return is_op(f, ref.node_id, func, operands, "") ? ref.node_id : NONE;
}

/* A scalar param's value (*out) when ref is one (one float32 element); else false. */
static bool constant_value(const finder_t* f, hgr__entry_ref_t ref, float* out) {
  const void* data = hgr__pass_param_data(f->graph, f->params, ref.node_id, HGR__DTYPE_F32, sizeof(float));
  if (data) memcpy(out, data, sizeof(*out));
  return data != NULL;
}

/* Whether ref is a scalar param within the relative tolerance of want (not 0). */
static bool constant_near(const finder_t* f, hgr__entry_ref_t ref, double want) {
  float value = 0;
  return constant_value(f, ref, &value) && fabs(value - want) <= RELATIVE_TOLERANCE * fabs(want);
}

/* For binary node n: when one operand is a scalar param near `want`, *out_other
 * gets the other operand. */
static bool operand_with_constant(const finder_t* f, uint32_t n, double want, hgr__entry_ref_t* out_other) {
  const hgr__node_t* node = &f->graph->nodes[n];
  for (uint32_t k = 0; k < 2; ++k)
    if (constant_near(f, node->inputs[k], want)) {
      *out_other = node->inputs[1 - k];
      return true;
    }
  return false;
}

static bool add_member(match_t* m, uint32_t n) {
  if (m->member_count == MAX_MEMBERS) return false;
  for (uint32_t k = 0; k < m->member_count; ++k)
    if (m->members[k] == n) return true;
  m->members[m->member_count++] = n;
  return true;
}

static void add_attr(match_t* m, const char* key, const char* format, double value) {
  m->keys[m->attr_count] = key;
  snprintf(m->values[m->attr_count], sizeof(m->values[0]), format, value);
  m->attr_count++;
}

/* Whether every member but the root is read by members only and is no graph output. */
static bool consumed_inside(const finder_t* f, const match_t* m) {
  for (uint32_t k = 1; k < m->member_count; ++k) {
    uint32_t e = f->graph->node_row_ptr[m->members[k]], references = 0;
    if (f->head[e]) return false;
    for (uint32_t j = 0; j < m->member_count; ++j) {
      const hgr__node_t* node = &f->graph->nodes[m->members[j]];
      for (uint32_t i = 0; i < node->input_count; ++i)
        references += hgr__graph_entry_id(f->graph, node->inputs[i]) == e;
    }
    if (references != f->uses[e]) return false;
  }
  return true;
}

/* ---- layer normalization -------------------------------------------------------- */

/* Whether node n is a mean of x over its last axis only, keeping it (extent 1). */
static bool last_axis_mean(const finder_t* f, uint32_t n, hgr__entry_ref_t x) {
  const hgr__node_t* node = &f->graph->nodes[n];
  if (!is_op(f, n, "mean", 1, "axis keepdims exclude") || !same_ref(f, node->inputs[0], x)) return false;
  int32_t rank = entry_of(f, x)->ndim;
  hgr__op_ctx_t ctx;
  int64_t axes[2] = {0, 0};
  uint32_t count = 0;
  bool present = false, keepdims = false, exclude = true;
  hgr_status_t status = hgr__op_inspect(f->graph, n, &ctx);
  if (!status) status = hgr__attr_ints(&ctx, "axis", axes, 2, &count, &present);
  if (!status) status = hgr__attr_bool(&ctx, "keepdims", false, &keepdims);
  if (!status) status = hgr__attr_bool(&ctx, "exclude", false, &exclude);
  hgr__op_ctx_free(&ctx);
  bool ok = !status && present && count == 1 && keepdims && !exclude && rank >= 1 &&
            (axes[0] == rank - 1 || axes[0] == -1);
  hgr_status_free(status);
  return ok;
}

/* From n = divide(d, sqrt(add(var, eps))), multiply(d, reciprocal(sqrt(...))) or
 * multiply(d, rsqrt(add(var, eps))) (operands either way, eps on either side),
 * var = mean(power(d, 2)) or mean(multiply(d, d)) and d = x - mean(x), both means
 * over the last axis, keeping it: x and epsilon. */
static bool normalization(const finder_t* f, uint32_t n, match_t* m, hgr__entry_ref_t* out_x, float* out_epsilon) {
  const hgr__node_t* nodes = f->graph->nodes;
  hgr__entry_ref_t d = {NONE, 0}, stats = {NONE, 0};
  if (is_op(f, n, "divide", 2, "")) {
    uint32_t sd = producer(f, nodes[n].inputs[1], "sqrt", 1);
    if (sd == NONE || !add_member(m, sd)) return false;
    d = nodes[n].inputs[0];
    stats = nodes[sd].inputs[0];
  } else if (is_op(f, n, "multiply", 2, "")) {
    for (uint32_t k = 0; k < 2 && d.node_id == NONE; ++k) {
      hgr__entry_ref_t inverse = nodes[n].inputs[k];
      uint32_t r = producer(f, inverse, "rsqrt", 1), sd = NONE;
      if (r != NONE) {
        if (!add_member(m, r)) return false;
        stats = nodes[r].inputs[0];
      } else if ((r = producer(f, inverse, "reciprocal", 1)) != NONE &&
                 (sd = producer(f, nodes[r].inputs[0], "sqrt", 1)) != NONE) {
        if (!add_member(m, r) || !add_member(m, sd)) return false;
        stats = nodes[sd].inputs[0];
      } else {
        continue;
      }
      d = nodes[n].inputs[1 - k];
    }
  }
  if (d.node_id == NONE || !add_member(m, n)) return false;
  /* stats = add(var, eps) */
  uint32_t shifted = producer(f, stats, "add", 2), var = NONE;
  for (uint32_t k = 0; shifted != NONE && k < 2 && var == NONE; ++k)
    if (constant_value(f, nodes[shifted].inputs[1 - k], out_epsilon) && *out_epsilon >= 0 && *out_epsilon <= FLT_MAX)
      var = nodes[shifted].inputs[k].node_id;
  /* d = subtract(x, mean(x)) */
  uint32_t centered = d.node_id;
  if (var == NONE || !is_op(f, var, "mean", 1, "axis keepdims exclude") || !is_op(f, centered, "subtract", 2, ""))
    return false;
  hgr__entry_ref_t x = nodes[centered].inputs[0];
  uint32_t mean = nodes[centered].inputs[1].node_id;
  /* var = mean(square), square = power(d, 2) or multiply(d, d) */
  hgr__entry_ref_t square = nodes[var].inputs[0];
  uint32_t sq = square.node_id;
  bool squares = (is_op(f, sq, "power", 2, "") && same_ref(f, nodes[sq].inputs[0], d) &&
                  constant_near(f, nodes[sq].inputs[1], 2.0)) ||
                 (is_op(f, sq, "multiply", 2, "") && same_ref(f, nodes[sq].inputs[0], d) &&
                  same_ref(f, nodes[sq].inputs[1], d));
  if (!squares || !last_axis_mean(f, var, square) || !last_axis_mean(f, mean, x)) return false;
  /* the full-size values keep x's shape (no operand broadcast them wider) */
  const hgr__entry_t* xe = entry_of(f, x);
  if (!hgr__pass_same_shape(entry_of(f, d), xe) || !hgr__pass_same_shape(&f->graph->entries[f->graph->node_row_ptr[n]], xe) ||
      !hgr__pass_same_shape(&f->graph->entries[f->graph->node_row_ptr[shifted]], &f->graph->entries[f->graph->node_row_ptr[var]]))
    return false;
  *out_x = x;
  return add_member(m, shifted) && add_member(m, var) && add_member(m, sq) && add_member(m, centered) &&
         add_member(m, mean);
}

/* For binary node n `func` whose output has its other operand's shape: when one
 * operand is a [len] vector along the output's last axis (len > 1, so that the
 * vector broadcasts alike at every shape), *out_vector gets it and *out_other the
 * other operand. */
static bool vector_operand(const finder_t* f, uint32_t n, const char* func, hgr__entry_ref_t* out_vector,
                           hgr__entry_ref_t* out_other) {
  if (!is_op(f, n, func, 2, "")) return false;
  const hgr__node_t* node = &f->graph->nodes[n];
  const hgr__entry_t* out = &f->graph->entries[f->graph->node_row_ptr[n]];
  for (uint32_t k = 0; k < 2 && out->ndim >= 1; ++k) {
    const hgr__entry_t* vector = entry_of(f, node->inputs[k]);
    int64_t len = out->shape[out->ndim - 1];
    if (vector->ndim == 1 && vector->shape[0] == len && len > 1 && hgr__pass_same_shape(entry_of(f, node->inputs[1 - k]), out)) {
      *out_vector = node->inputs[k];
      *out_other = node->inputs[1 - k];
      return true;
    }
  }
  return false;
}

/* root = [add(beta,] [multiply(gamma,] normalization [)] [)] (operands either way)
 * -> layer_norm(x, gamma, beta) over the last axis. One of gamma and beta at least:
 * layer_norm takes both as [len] inputs, so a missing one is the other, switched
 * off (attr center or scale 0). */
static bool match_layer_norm(const finder_t* f, uint32_t root, match_t* m) {
  hgr__entry_ref_t beta = {NONE, 0}, gamma = {NONE, 0}, inner = {root, 0}, x = {NONE, 0};
  float epsilon = 0;
  vector_operand(f, root, "add", &beta, &inner); /* else inner stays the root */
  uint32_t at = m->member_count;
  if (!normalization(f, inner.node_id, m, &x, &epsilon)) {
    m->member_count = at;
    uint32_t scaled = inner.node_id;
    if (!vector_operand(f, scaled, "multiply", &gamma, &inner) || !add_member(m, scaled) ||
        !normalization(f, inner.node_id, m, &x, &epsilon))
      return false;
  }
  if (beta.node_id == NONE && gamma.node_id == NONE) return false;
  if (!hgr__pass_same_shape(&f->graph->entries[f->graph->node_row_ptr[root]], entry_of(f, x))) return false;
  m->func_name = "layer_norm";
  m->inputs[0] = x;
  m->inputs[1] = gamma.node_id != NONE ? gamma : beta;
  m->inputs[2] = beta.node_id != NONE ? beta : gamma;
  m->input_count = 3;
  add_attr(m, "axis", "%.0f", -1);
  add_attr(m, "epsilon", "%.9g", epsilon);
  add_attr(m, "center", "%.0f", beta.node_id != NONE);
  add_attr(m, "scale", "%.0f", gamma.node_id != NONE);
  return true;
}

/* ---- GELU ---------------------------------------------------------------------------- */

/* Whether ref is erf(x / sqrt(2)) or erf(x * (1 / sqrt(2))) (operands either way). */
static bool erf_of_scaled(const finder_t* f, hgr__entry_ref_t ref, hgr__entry_ref_t x, match_t* m) {
  const hgr__node_t* nodes = f->graph->nodes;
  uint32_t e = producer(f, ref, "erf", 1);
  if (e == NONE) return false;
  uint32_t s = nodes[e].inputs[0].node_id;
  hgr__entry_ref_t other = {NONE, 0};
  bool scaled = (is_op(f, s, "divide", 2, "") && same_ref(f, nodes[s].inputs[0], x) &&
                 constant_near(f, nodes[s].inputs[1], sqrt(2.0))) ||
                (is_op(f, s, "multiply", 2, "") && operand_with_constant(f, s, sqrt(0.5), &other) &&
                 same_ref(f, other, x));
  return scaled && add_member(m, e) && add_member(m, s);
}

/* Whether ref is 0.044715 * x^3, x^3 as power(x, 3) or x * (x * x) in any order. */
static bool cubic_term(const finder_t* f, hgr__entry_ref_t ref, hgr__entry_ref_t x, match_t* m) {
  const hgr__node_t* nodes = f->graph->nodes;
  uint32_t c = ref.node_id;
  hgr__entry_ref_t cube;
  if (!is_op(f, c, "multiply", 2, "") || !operand_with_constant(f, c, 0.044715, &cube)) return false;
  uint32_t p = cube.node_id;
  if (is_op(f, p, "power", 2, ""))
    return same_ref(f, nodes[p].inputs[0], x) && constant_near(f, nodes[p].inputs[1], 3.0) && add_member(m, c) &&
           add_member(m, p);
  if (!is_op(f, p, "multiply", 2, "")) return false;
  for (uint32_t k = 0; k < 2; ++k) {
    uint32_t q = nodes[p].inputs[1 - k].node_id;
    if (same_ref(f, nodes[p].inputs[k], x) && is_op(f, q, "multiply", 2, "") && same_ref(f, nodes[q].inputs[0], x) &&
        same_ref(f, nodes[q].inputs[1], x))
      return add_member(m, c) && add_member(m, p) && add_member(m, q);
  }
  return false;
}

/* Whether ref is tanh(sqrt(2 / pi) * (x + 0.044715 * x^3)) (operands either way). */
static bool tanh_of_cubic(const finder_t* f, hgr__entry_ref_t ref, hgr__entry_ref_t x, match_t* m) {
  const hgr__node_t* nodes = f->graph->nodes;
  uint32_t t = producer(f, ref, "tanh", 1);
  if (t == NONE) return false;
  uint32_t scale = nodes[t].inputs[0].node_id;
  hgr__entry_ref_t inner;
  if (!is_op(f, scale, "multiply", 2, "") || !operand_with_constant(f, scale, sqrt(2.0 / M_PI), &inner)) return false;
  uint32_t sum = inner.node_id;
  if (!is_op(f, sum, "add", 2, "")) return false;
  for (uint32_t k = 0; k < 2; ++k)
    if (same_ref(f, nodes[sum].inputs[k], x) && cubic_term(f, nodes[sum].inputs[1 - k], x, m))
      return add_member(m, t) && add_member(m, scale) && add_member(m, sum);
  return false;
}

/* Whether ref is 1 + erf(...) or 1 + tanh(...) of x (erf_of_scaled, tanh_of_cubic);
 * *out_tanh says which. */
static bool one_plus(const finder_t* f, hgr__entry_ref_t ref, hgr__entry_ref_t x, match_t* m, bool* out_tanh) {
  uint32_t a = ref.node_id, at = m->member_count;
  hgr__entry_ref_t term;
  if (!is_op(f, a, "add", 2, "") || !operand_with_constant(f, a, 1.0, &term)) return false;
  *out_tanh = false;
  if (!erf_of_scaled(f, term, x, m)) {
    m->member_count = at;
    *out_tanh = true;
    if (!tanh_of_cubic(f, term, x, m)) return false;
  }
  return add_member(m, a);
}

/* root = a product of x, 0.5 and one_plus(x) as two multiplies in any grouping and
 * order -> gelu (erf) or gelu_tanh (tanh) of x. */
static bool match_gelu(const finder_t* f, uint32_t root, match_t* m) {
  const hgr__node_t* nodes = f->graph->nodes;
  if (!is_op(f, root, "multiply", 2, "")) return false;
  hgr__entry_ref_t x = {NONE, 0};
  bool tanh_form = false;
  for (uint32_t k = 0; k < 2 && x.node_id == NONE; ++k) {
    hgr__entry_ref_t p = nodes[root].inputs[k], q = nodes[root].inputs[1 - k], half_of;
    uint32_t at = m->member_count, inner = q.node_id;
    if (constant_near(f, p, 0.5) && is_op(f, inner, "multiply", 2, "")) { /* 0.5 * (x * (1 + ...)) */
      for (uint32_t j = 0; j < 2 && x.node_id == NONE; ++j) {
        m->member_count = at;
        if (one_plus(f, nodes[inner].inputs[1 - j], nodes[inner].inputs[j], m, &tanh_form) && add_member(m, inner))
          x = nodes[inner].inputs[j];
      }
    } else if (is_op(f, p.node_id, "multiply", 2, "") && operand_with_constant(f, p.node_id, 0.5, &half_of)) {
      /* (0.5 * x) * (1 + ...) or (0.5 * (1 + ...)) * x */
      if (one_plus(f, q, half_of, m, &tanh_form) && add_member(m, p.node_id)) {
        x = half_of;
      } else {
        m->member_count = at;
        if (one_plus(f, half_of, q, m, &tanh_form) && add_member(m, p.node_id)) x = q;
      }
    }
    if (x.node_id == NONE) m->member_count = at;
  }
  if (x.node_id == NONE) return false;
  for (uint32_t k = 0; k < m->member_count; ++k)
    if (!hgr__pass_same_shape(&f->graph->entries[f->graph->node_row_ptr[m->members[k]]], entry_of(f, x))) return false;
  m->func_name = tanh_form ? "gelu_tanh" : "gelu";
  m->inputs[0] = x;
  m->input_count = 1;
  return true;
}

/* ---- the pass ------------------------------------------------------------------------ */

typedef struct pattern_t {
  const char* name; /* what a fused node is, for messages */
  bool (*match)(const finder_t* f, uint32_t root, match_t* m);
} pattern_t;

/* Tried in this order at each root (hgr__pattern_t). */
static const pattern_t patterns[HGR__PATTERN_COUNT] = {
    [HGR__PATTERN_LAYER_NORM] = {"layer norm", match_layer_norm},
    [HGR__PATTERN_GELU] = {"GELU", match_gelu},
};

static void finder_free(finder_t* f) {
  for (uint32_t n = 0; f->match && n < f->graph->node_count; ++n) hgr__free(f->allocator, f->match[n]);
  hgr__free(f->allocator, f->uses);
  hgr__free(f->allocator, f->head);
  hgr__free(f->allocator, f->taken);
  hgr__free(f->allocator, f->match);
  hgr__free(f->allocator, f->dropped);
}

static hgr_status_t finder_init(finder_t* f, const hgr_graph_t* graph, const hgr_params_t* params) {
  memset(f, 0, sizeof(*f));
  f->allocator = hgr__graph_allocator(graph);
  f->graph = graph;
  f->params = params;
  f->uses = hgr__calloc(f->allocator, graph->entry_count + 1, sizeof(*f->uses));
  f->head = hgr__calloc(f->allocator, graph->entry_count + 1, sizeof(*f->head));
  f->taken = hgr__alloc(f->allocator, (graph->node_count + 1) * sizeof(*f->taken));
  f->match = hgr__calloc(f->allocator, graph->node_count + 1, sizeof(*f->match));
  f->dropped = hgr__calloc(f->allocator, graph->node_count + 1, sizeof(*f->dropped));
  if (!f->uses || !f->head || !f->taken || !f->match || !f->dropped)
    return HGR_STATUS(HGR_STATUS_RESOURCE_EXHAUSTED, PASS ": out of host memory for a graph of %u nodes",
                      graph->node_count);
  for (uint32_t n = 0; n < graph->node_count; ++n) f->taken[n] = NONE;
  hgr__pass_count_uses(graph, f->uses, f->head);
  return HGR_OK;
}

/* Tries the enabled patterns at every node, from the graph's end backwards. */
static hgr_status_t find_matches(finder_t* f, const bool* enabled, hgr__fuse_report_t* report) {
  for (uint32_t n = f->graph->node_count; n-- > 0;) {
    for (uint32_t p = 0; p < HGR__PATTERN_COUNT && f->taken[n] == NONE; ++p) {
      match_t m;
      memset(&m, 0, sizeof(m));
      m.members[m.member_count++] = n; /* the root first */
      if (!enabled[p] || !patterns[p].match(f, n, &m) || !consumed_inside(f, &m)) continue;
      f->match[n] = hgr__alloc(f->allocator, sizeof(m));
      if (!f->match[n]) return HGR_STATUS(HGR_STATUS_RESOURCE_EXHAUSTED, PASS ": out of host memory");
      qsort(m.members, m.member_count, sizeof(m.members[0]), hgr__pass_compare_ids); /* graph order, for the log */
      *f->match[n] = m;
      for (uint32_t k = 0; k < m.member_count; ++k) f->taken[m.members[k]] = n;
      report[p].groups++;
      report[p].fused_nodes += m.member_count;
    }
  }
  return HGR_OK;
}

/* Marks the params that only members read and no fused node does (the patterns'
 * constants): they leave the graph, and hgr_passes_apply drops them from params. */
static hgr_status_t find_dropped(finder_t* f) {
  const hgr_graph_t* graph = f->graph;
  uint32_t* left = hgr__alloc(f->allocator, (graph->entry_count + 1) * sizeof(*left));
  if (!left) return HGR_STATUS(HGR_STATUS_RESOURCE_EXHAUSTED, PASS ": out of host memory");
  memcpy(left, f->uses, graph->entry_count * sizeof(*left));
  for (uint32_t n = 0; n < graph->node_count; ++n) {
    for (uint32_t i = 0; f->taken[n] != NONE && i < graph->nodes[n].input_count; ++i)
      left[hgr__graph_entry_id(graph, graph->nodes[n].inputs[i])]--;
    for (uint32_t i = 0; f->match[n] && i < f->match[n]->input_count; ++i)
      left[hgr__graph_entry_id(graph, f->match[n]->inputs[i])]++;
  }
  for (uint32_t n = 0; n < graph->node_count; ++n) {
    uint32_t e = graph->node_row_ptr[n];
    size_t index = 0;
    if (graph->nodes[n].is_op || !f->params || !f->uses[e] || left[e]) continue;
    hgr_status_t status = hgr_params_find(f->params, graph->nodes[n].name, &index);
    f->dropped[n] = !status;
    hgr_status_free(status);
  }
  hgr__free(f->allocator, left);
  return HGR_OK;
}

/* Appends every node of f->graph to r->out, a match as its fused node at its root. */
static hgr_status_t rebuild(const void* pass, const hgr__pass_log_t* log, hgr__pass_rebuild_t* r) {
  const finder_t* f = pass;
  const hgr_graph_t* graph = f->graph;
  hgr_status_t status = HGR_OK;
  for (uint32_t n = 0; !status && n < graph->node_count; ++n) {
    const match_t* m = f->match[n];
    if (f->dropped[n]) continue;
    if (f->taken[n] == NONE) {
      status = hgr__pass_copy_node(r, n, NULL);
    } else if (m) {
      hgr__attr_t attrs[MAX_ATTRS];
      for (uint32_t a = 0; a < m->attr_count; ++a) attrs[a] = (hgr__attr_t){(char*)m->keys[a], (char*)m->values[a]};
      status = hgr__graph_edit_append(r->out, graph->nodes[n].name, m->func_name,
                                      hgr__pass_map_inputs(r, m->inputs, m->input_count), m->input_count, attrs,
                                      m->attr_count, &graph->entries[graph->node_row_ptr[n]], 1, &r->new_id[n]);
      if (!status) status = hgr__pass_check_inferred(r, r->new_id[n], n, PASS);
      if (!status) hgr__pass_log_fused(log, graph, m->func_name, n, m->members, m->member_count);
    } /* else a member the fused node replaces */
  }
  return status;
}

hgr_status_t hgr__fuse_patterns(const hgr_graph_t* graph, const hgr_params_t* params, const bool* enabled,
                                const hgr__pass_log_t* log, hgr_graph_t** out_graph, hgr__fuse_report_t* out_report) {
  hgr__fuse_report_t report[HGR__PATTERN_COUNT];
  memset(report, 0, sizeof(report));
  if (out_report) memcpy(out_report, report, sizeof(report));
  if (!graph || !enabled || !out_graph) return HGR_STATUS(HGR_STATUS_INVALID_ARGUMENT, PASS ": NULL argument");
  *out_graph = NULL;
  HGR_RETURN_IF_ERROR(hgr__pass_check_unplaced(graph, PASS));
  finder_t f;
  hgr_graph_t* fused = NULL;
  hgr_status_t status = finder_init(&f, graph, params);
  if (!status) status = find_matches(&f, enabled, report);
  bool any = false;
  for (uint32_t p = 0; p < HGR__PATTERN_COUNT; ++p) any = any || report[p].groups;
  if (!status && !any) {
    finder_free(&f);
    *out_graph = hgr_graph_retain((hgr_graph_t*)graph);
    return HGR_OK;
  }
  if (!status) status = find_dropped(&f);
  if (!status) status = hgr__pass_rebuild(graph, rebuild, &f, log, &fused);
  finder_free(&f);
  if (status) return status;
  if (out_report) memcpy(out_report, report, sizeof(report));
  *out_graph = fused;
  return HGR_OK;
}
