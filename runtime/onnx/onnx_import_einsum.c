/* ONNX's Einsum for the matmul-like equations. The equation is parsed into a label
 * per dim of each operand and of the output (`...` stands for dims labelled after the
 * letters, right-aligned across operands). One operand: `sum` over the labels the
 * output drops, then a transpose. Two operands: each first sums the labels found in
 * it alone that the output drops; the rest are batch labels (both operands and the
 * output), contracted labels (both operands, not the output) and each side's free
 * labels, so A becomes [batch, M, K] and B [batch, K, N] by transpose and reshape,
 * batch_matmul (matmul without batch labels) multiplies them, and a reshape and a
 * transpose give the output's order. Refused: a label repeated within one operand
 * or the output (diagonals), more than two operands, ellipsis dims that broadcast. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "onnx_internal.h"

#define LETTERS 52              /* a-z, A-Z */
#define LABELS (LETTERS + HGR_MAX_DIMS) /* then the ellipsis dims, right-aligned */

typedef struct term_t {
  int32_t ndim;
  int32_t label[HGR_MAX_DIMS];
  int64_t shape[HGR_MAX_DIMS];
} term_t;

typedef struct equation_t {
  char text[256];
  uint32_t operands;
  term_t in[2];
  term_t out;
  int64_t extent[LABELS]; /* -1: unseen */
} equation_t;

static int32_t letter_label(char c) {
  if (c >= 'a' && c <= 'z') return c - 'a';
  if (c >= 'A' && c <= 'Z') return 26 + (c - 'A');
  return -1;
}

/* Labels of one term s[0..length) for a value of rank `rank` (rank -1: the output,
 * whose ellipsis takes ellipsis_rank dims). */
static hgr_status_t parse_term(const hgr__onnx_node_t* node, const equation_t* e, const char* s, size_t length,
                               int32_t rank, int32_t ellipsis_rank, term_t* t) {
  int32_t letters = 0;
  bool ellipsis = false;
  for (size_t i = 0; i < length; ++i) {
    if (s[i] == '.') {
      if (ellipsis || i + 2 >= length || s[i + 1] != '.' || s[i + 2] != '.')
        return HGR__ONNX_INVALID(node, "equation '%s': a malformed '...'", e->text);
      ellipsis = true;
      i += 2;
    } else if (letter_label(s[i]) < 0) {
      return HGR__ONNX_INVALID(node, "equation '%s': unexpected character '%c'", e->text, s[i]);
    } else {
      ++letters;
    }
  }
  int32_t span = rank < 0 ? (ellipsis ? ellipsis_rank : 0) : rank - letters;
  if (span < 0 || (!ellipsis && span != 0))
    return HGR__ONNX_INVALID(node, "equation '%s': term '%.*s' does not match rank %d", e->text, (int)length, s,
                             (int)rank);
  if (letters + span > HGR_MAX_DIMS) return HGR__ONNX_INVALID(node, "equation '%s': too many dims", e->text);
  t->ndim = 0;
  for (size_t i = 0; i < length; ++i) {
    if (s[i] == '.') {
      for (int32_t j = 0; j < span; ++j) t->label[t->ndim++] = LETTERS + (HGR_MAX_DIMS - span + j);
      i += 2;
    } else {
      t->label[t->ndim++] = letter_label(s[i]);
    }
  }
  for (int32_t d = 0; d < t->ndim; ++d)
    for (int32_t k = 0; k < d; ++k)
      if (t->label[k] == t->label[d])
        return HGR__ONNX_UNSUPPORTED(node, "equation '%s': a label repeated in one term (a diagonal)", e->text);
  return HGR_OK;
}

static hgr_status_t parse_equation(const hgr__onnx_node_t* node, equation_t* e) {
  char raw[256];
  HGR_RETURN_IF_ERROR(hgr__onnx_attr_string(node, "equation", "", raw, sizeof(raw)));
  size_t n = 0;
  for (const char* c = raw; *c; ++c)
    if (*c != ' ') e->text[n++] = *c;
  e->text[n] = '\0';
  if (!n) return HGR__ONNX_INVALID(node, "attr 'equation' is required");
  const char* arrow = strstr(e->text, "->");
  size_t lhs_length = arrow ? (size_t)(arrow - e->text) : n;
  uint32_t commas = 0;
  for (size_t i = 0; i < lhs_length; ++i) commas += e->text[i] == ',';
  e->operands = commas + 1;
  if (e->operands > 2)
    return HGR__ONNX_UNSUPPORTED(node, "equation '%s' has %u operands; hgr maps one or two", e->text, e->operands);
  if (e->operands != node->input_count)
    return HGR__ONNX_INVALID(node, "equation '%s' has %u operands, the node %u inputs", e->text, e->operands,
                             node->input_count);
  for (int32_t l = 0; l < LABELS; ++l) e->extent[l] = -1;
  int32_t ellipsis_rank = 0;
  const char* start = e->text;
  for (uint32_t k = 0; k < e->operands; ++k) {
    const char* end = k + 1 < e->operands ? strchr(start, ',') : e->text + lhs_length;
    const hgr__onnx_value_t* v = node->inputs[k];
    if (!v) return HGR__ONNX_INVALID(node, "input %u is omitted", k);
    HGR_RETURN_IF_ERROR(parse_term(node, e, start, (size_t)(end - start), v->ndim, 0, &e->in[k]));
    for (int32_t d = 0; d < v->ndim; ++d) {
      int32_t l = e->in[k].label[d];
      e->in[k].shape[d] = v->shape[d];
      if (l >= LETTERS && LETTERS + HGR_MAX_DIMS - l > ellipsis_rank) ellipsis_rank = LETTERS + HGR_MAX_DIMS - l;
      if (e->extent[l] >= 0 && e->extent[l] != v->shape[d])
        return HGR__ONNX_UNSUPPORTED(node, "equation '%s': a label spans %lld and %lld elements (broadcast)",
                                     e->text, (long long)e->extent[l], (long long)v->shape[d]);
      e->extent[l] = v->shape[d];
    }
    start = end + 1;
  }
  if (arrow) {
    HGR_RETURN_IF_ERROR(parse_term(node, e, arrow + 2, strlen(arrow + 2), -1, ellipsis_rank, &e->out));
  } else { /* implicit: the ellipsis dims, then the letters seen once, alphabetically */
    e->out.ndim = 0;
    for (int32_t j = 0; j < ellipsis_rank; ++j)
      e->out.label[e->out.ndim++] = LETTERS + HGR_MAX_DIMS - ellipsis_rank + j;
    for (char c = 'A'; c <= 'z'; c = c == 'Z' ? 'a' : (char)(c + 1)) {
      int32_t l = letter_label(c), seen = 0;
      for (uint32_t k = 0; k < e->operands; ++k)
        for (int32_t d = 0; d < e->in[k].ndim; ++d) seen += e->in[k].label[d] == l;
      if (seen == 1) e->out.label[e->out.ndim++] = l;
    }
  }
  for (int32_t d = 0; d < e->out.ndim; ++d) {
    if (e->extent[e->out.label[d]] < 0)
      return HGR__ONNX_INVALID(node, "equation '%s': an output label no operand has", e->text);
    e->out.shape[d] = e->extent[e->out.label[d]];
  }
  return HGR_OK;
}

static bool has_label(const term_t* t, int32_t label) {
  for (int32_t d = 0; d < t->ndim; ++d)
    if (t->label[d] == label) return true;
  return false;
}

/* Sums v (labelled t) over its labels in neither keep_a nor keep_b (may be NULL),
 * updating t. */
static hgr_status_t sum_out(hgr__onnx_node_t* node, const term_t* keep_a, const term_t* keep_b, term_t* t,
                            hgr_value_t* v) {
  int64_t axes[HGR_MAX_DIMS];
  size_t count = 0;
  term_t kept = {0};
  for (int32_t d = 0; d < t->ndim; ++d) {
    bool keep = has_label(keep_a, t->label[d]) || (keep_b && has_label(keep_b, t->label[d]));
    if (!keep) {
      axes[count++] = d;
      continue;
    }
    kept.label[kept.ndim] = t->label[d];
    kept.shape[kept.ndim++] = t->shape[d];
  }
  if (!count) return HGR_OK;
  hgr_attrs_t* attrs = NULL;
  HGR_RETURN_IF_ERROR(hgr_attrs_create(&attrs));
  hgr_status_t status = hgr_attrs_set_ints(attrs, "axis", axes, count);
  if (!status) status = hgr_attrs_set_int(attrs, "keepdims", 0);
  if (!status) status = hgr__onnx_add_op(node, "sum", v, 1, attrs, 1, v);
  hgr_attrs_release(attrs);
  HGR_RETURN_IF_ERROR(status);
  *t = kept;
  return HGR_OK;
}

/* Transposes v (labelled t) into the label order `order` (a permutation of t's). */
static hgr_status_t permute(hgr__onnx_node_t* node, term_t* t, const int32_t* order, hgr_value_t* v) {
  int64_t axes[HGR_MAX_DIMS];
  bool identity = true;
  term_t moved = {.ndim = t->ndim};
  for (int32_t d = 0; d < t->ndim; ++d) {
    int32_t from = 0;
    while (t->label[from] != order[d]) ++from;
    axes[d] = from;
    identity = identity && from == d;
    moved.label[d] = order[d];
    moved.shape[d] = t->shape[from];
  }
  *t = moved;
  if (identity) return HGR_OK;
  hgr_attrs_t* attrs = NULL;
  HGR_RETURN_IF_ERROR(hgr_attrs_create(&attrs));
  hgr_status_t status = hgr_attrs_set_ints(attrs, "axes", axes, (size_t)t->ndim);
  if (!status) status = hgr__onnx_add_op(node, "transpose", v, 1, attrs, 1, v);
  hgr_attrs_release(attrs);
  return status;
}

static hgr_status_t import_einsum(hgr__onnx_node_t* node) {
  HGR_RETURN_IF_ERROR(hgr__onnx_check_attrs(node, "equation"));
  equation_t e;
  HGR_RETURN_IF_ERROR(parse_equation(node, &e));
  for (uint32_t k = 0; k < e.operands; ++k)
    if (node->inputs[k]->onnx_type != HGR__ONNX_FLOAT)
      return HGR__ONNX_UNSUPPORTED(node, "equation '%s': input %u is %s; hgr computes float", e.text, k,
                                   hgr__onnx_type_name(node->inputs[k]->onnx_type));
  hgr_value_t v[2];
  for (uint32_t k = 0; k < e.operands; ++k) HGR_RETURN_IF_ERROR(hgr__onnx_runtime(node, node->inputs[k], &v[k]));
  term_t* a = &e.in[0];
  if (e.operands == 1) {
    HGR_RETURN_IF_ERROR(sum_out(node, &e.out, NULL, a, &v[0]));
    HGR_RETURN_IF_ERROR(permute(node, a, e.out.label, &v[0]));
    return hgr__onnx_set_runtime(node, 0, v[0], HGR__ONNX_FLOAT);
  }
  term_t* b = &e.in[1];
  HGR_RETURN_IF_ERROR(sum_out(node, &e.out, b, a, &v[0]));
  HGR_RETURN_IF_ERROR(sum_out(node, &e.out, a, b, &v[1]));
  /* the classes, in the order the labels appear in A (batch, contracted), A and B */
  int32_t batch[HGR_MAX_DIMS], contracted[HGR_MAX_DIMS], free_a[HGR_MAX_DIMS], free_b[HGR_MAX_DIMS];
  int32_t nbatch = 0, ncontracted = 0, nfree_a = 0, nfree_b = 0;
  int64_t batch_count = 1, m = 1, k = 1, n = 1;
  for (int32_t d = 0; d < e.out.ndim; ++d) { /* batch labels in output order */
    int32_t l = e.out.label[d];
    if (has_label(a, l) && has_label(b, l)) {
      batch[nbatch++] = l;
      batch_count *= e.extent[l];
    }
  }
  for (int32_t d = 0; d < a->ndim; ++d) {
    int32_t l = a->label[d];
    if (!has_label(b, l)) {
      free_a[nfree_a++] = l;
      m *= e.extent[l];
    } else if (!has_label(&e.out, l)) {
      contracted[ncontracted++] = l;
      k *= e.extent[l];
    }
  }
  for (int32_t d = 0; d < b->ndim; ++d)
    if (!has_label(a, b->label[d])) {
      free_b[nfree_b++] = b->label[d];
      n *= e.extent[b->label[d]];
    }
  int32_t order[HGR_MAX_DIMS];
  int32_t count = 0;
  for (int32_t i = 0; i < nbatch; ++i) order[count++] = batch[i];
  for (int32_t i = 0; i < nfree_a; ++i) order[count++] = free_a[i];
  for (int32_t i = 0; i < ncontracted; ++i) order[count++] = contracted[i];
  HGR_RETURN_IF_ERROR(permute(node, a, order, &v[0]));
  count = nbatch;
  for (int32_t i = 0; i < ncontracted; ++i) order[count++] = contracted[i];
  for (int32_t i = 0; i < nfree_b; ++i) order[count++] = free_b[i];
  HGR_RETURN_IF_ERROR(permute(node, b, order, &v[1]));
  hgr_value_t product;
  if (nbatch) {
    int64_t a3[3] = {batch_count, m, k}, b3[3] = {batch_count, k, n};
    HGR_RETURN_IF_ERROR(hgr__onnx_add_reshape(node, v[0], a3, 3, &v[0]));
    HGR_RETURN_IF_ERROR(hgr__onnx_add_reshape(node, v[1], b3, 3, &v[1]));
    hgr_attrs_t* attrs = NULL;
    HGR_RETURN_IF_ERROR(hgr_attrs_create(&attrs));
    hgr_status_t status = hgr_attrs_set_int(attrs, "transpose_b", 0);
    if (!status) status = hgr__onnx_add_op(node, "batch_matmul", v, 2, attrs, 1, &product);
    hgr_attrs_release(attrs);
    HGR_RETURN_IF_ERROR(status);
  } else {
    int64_t a2[2] = {m, k}, b2[2] = {k, n};
    HGR_RETURN_IF_ERROR(hgr__onnx_add_reshape(node, v[0], a2, 2, &v[0]));
    HGR_RETURN_IF_ERROR(hgr__onnx_add_reshape(node, v[1], b2, 2, &v[1]));
    HGR_RETURN_IF_ERROR(hgr__onnx_add_op(node, "matmul", v, 2, NULL, 1, &product));
  }
  /* [batch..., free_a..., free_b...], then the output's order */
  term_t result = {0};
  for (int32_t i = 0; i < nbatch; ++i) result.label[result.ndim++] = batch[i];
  for (int32_t i = 0; i < nfree_a; ++i) result.label[result.ndim++] = free_a[i];
  for (int32_t i = 0; i < nfree_b; ++i) result.label[result.ndim++] = free_b[i];
  for (int32_t d = 0; d < result.ndim; ++d) result.shape[d] = e.extent[result.label[d]];
  HGR_RETURN_IF_ERROR(hgr__onnx_add_reshape(node, product, result.shape, result.ndim, &product));
  HGR_RETURN_IF_ERROR(permute(node, &result, e.out.label, &product));
  return hgr__onnx_set_runtime(node, 0, product, HGR__ONNX_FLOAT);
}

const hgr__onnx_op_t hgr__onnx_ops_einsum[] = {
    {"Einsum", import_einsum, NULL, HGR__ONNX_EVERY_INPUT},
    {.name = NULL},
};
