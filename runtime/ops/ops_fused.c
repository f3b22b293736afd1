/* fused_elementwise: a chain of float32 elementwise ops computed by one generated
 * kernel (the fusion pass, build/fuse.c, makes these nodes at load time).
 *
 * The node's attr "expr" is a small SSA program over its inputs: statements
 * separated by ';', each an op name and its operands, where an operand is i<k>
 * (input k), v<k> (the value of statement k, an earlier one) or a float literal
 * ("0.01", "-inf"); the last statement is the output. "add i0 i1; relu v0" is
 * relu(i0 + i1). The ops are those of hgr__fusable_op, computed with the
 * expressions kernels/elementwise.cl uses, so a fused chain gives what its nodes
 * give one by one (up to the compiler's contraction of a * b + c).
 *
 * Attr "axes" (optional, one int per input) places inputs that do not align to
 * the right: -1 is NumPy's alignment, k >= 0 puts the input's first dimension at
 * the output's dimension k (batch_norm's [C] parameters along axis 1 of [N, C, H,
 * W] are axis 1: as if shaped [C, 1, 1]).
 *
 * The output is the NumPy broadcast of all inputs (so aligned). The plan generates one kernel,
 * one work-item per FUSED_WIDTH output elements (in two dimensions, innermost and
 * rows, when an input is strided), in which each input is read as one of three
 * kinds: full (the output's element count: element i), scalar (element 0) or
 * strided (any other broadcast: its offset from the output's coordinates through
 * the meta buffer {ndim, extent[ndim], stride[ndim] per strided input}, after
 * dropping extent-1 dimensions and merging neighbours), in straight-line code for
 * that rank. The source depends on the expression, the input kinds and, with
 * strided inputs, the collapsed rank and the dimensions each strided input spans,
 * not on the extents, so nodes of one expression and broadcast pattern share one
 * program; its name is "fused_<FNV-1a of the text>", and the
 * program cache keys it by its text like a kernels/<name>.cl program. */
#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "alloc.h"
#include "ops.h"
#include "text.h"

/* A: the first value operand, B: the second; P, Q: the float params. Each is a
 * variable in the generated code, so a template may name one twice. */
static const hgr__fusable_t fusable_ops[] = {
    {"add", 2, {NULL, NULL}, {0, 0}, "(A + B)"},
    {"subtract", 2, {NULL, NULL}, {0, 0}, "(A - B)"},
    {"multiply", 2, {NULL, NULL}, {0, 0}, "(A * B)"},
    {"divide", 2, {NULL, NULL}, {0, 0}, "(A / B)"},
    {"maximum", 2, {NULL, NULL}, {0, 0}, "fmax(A, B)"},
    {"minimum", 2, {NULL, NULL}, {0, 0}, "fmin(A, B)"},
    {"power", 2, {NULL, NULL}, {0, 0}, "(B == 2.0f ? A * A : pow(A, B))"},
    {"relu", 1, {NULL, NULL}, {0, 0}, "fmax(A, 0.0f)"},
    {"sigmoid", 1, {NULL, NULL}, {0, 0}, "(1.0f / (1.0f + exp(-A)))"},
    {"tanh", 1, {NULL, NULL}, {0, 0}, "tanh(A)"},
    {"exp", 1, {NULL, NULL}, {0, 0}, "exp(A)"},
    {"log", 1, {NULL, NULL}, {0, 0}, "log(A)"},
    {"sqrt", 1, {NULL, NULL}, {0, 0}, "sqrt(A)"},
    {"rsqrt", 1, {NULL, NULL}, {0, 0}, "rsqrt(A)"},
    {"abs", 1, {NULL, NULL}, {0, 0}, "fabs(A)"},
    {"negative", 1, {NULL, NULL}, {0, 0}, "(-A)"},
    {"erf", 1, {NULL, NULL}, {0, 0}, "erf(A)"},
    {"gelu", 1, {NULL, NULL}, {0, 0}, "hgr_gelu_@(A)"},
    {"gelu_tanh", 1, {NULL, NULL}, {0, 0}, "(A / (1.0f + exp(-1.5957691216057308f * (A + 0.044715f * A * A * A))))"},
    {"softplus", 1, {NULL, NULL}, {0, 0}, "(fmax(A, 0.0f) + log1p(exp(-fabs(A))))"},
    {"softsign", 1, {NULL, NULL}, {0, 0}, "(A / (1.0f + fabs(A)))"},
    {"reciprocal", 1, {NULL, NULL}, {0, 0}, "(1.0f / A)"},
    {"floor", 1, {NULL, NULL}, {0, 0}, "floor(A)"},
    {"ceil", 1, {NULL, NULL}, {0, 0}, "ceil(A)"},
    {"round", 1, {NULL, NULL}, {0, 0}, "rint(A)"},
    {"hard_swish", 1, {NULL, NULL}, {0, 0}, "(A * fmax(fmin(A / 6.0f + 0.5f, 1.0f), 0.0f))"},
    /* no op of its own: the conv epilogue pass's name for a sigmoid and the multiply
     * of its input by it (the GEMM and conv kernels' activation "silu") */
    {"silu", 1, {NULL, NULL}, {0, 0}, "(A * (1.0f / (1.0f + exp(-A))))"},
    {"leaky_relu", 1, {"alpha", NULL}, {0.01, 0}, "(A > 0.0f ? A : A * P)"},
    {"clip", 1, {"a_min", "a_max"}, {NAN, NAN}, "fmax(fmin(A, Q), P)"},
    {"elu", 1, {"alpha", NULL}, {1.0, 0}, "(A < 0.0f ? P * expm1(A) : A)"},
    {"hard_sigmoid", 1, {"alpha", "beta"}, {0.2, 0.5}, "(isnan(P * A + Q) ? P * A + Q : fmax(fmin(P * A + Q, 1.0f), 0.0f))"},
};
#define FUSABLE_COUNT (sizeof(fusable_ops) / sizeof(fusable_ops[0]))

const hgr__fusable_t* hgr__fusable_op(const char* name) {
  for (size_t k = 0; k < FUSABLE_COUNT; ++k)
    if (!strcmp(fusable_ops[k].name, name)) return &fusable_ops[k];
  return NULL;
}

/* ---- the expression ------------------------------------------------------------------- */

typedef enum operand_kind_t { OPERAND_INPUT, OPERAND_VALUE, OPERAND_LITERAL } operand_kind_t;

typedef struct operand_t {
  operand_kind_t kind;
  uint32_t index; /* input or statement */
  float literal;
} operand_t;

typedef struct statement_t {
  const hgr__fusable_t* op;
  operand_t operands[HGR__FUSED_MAX_OPERANDS];
  uint32_t operand_count;
} statement_t;

typedef struct program_t {
  statement_t statements[HGR__FUSED_MAX_STATEMENTS];
  uint32_t count;
} program_t;

/* Parses one operand (a token of length `length`) of statement s. */
static hgr_status_t parse_operand(const hgr__op_ctx_t* ctx, const char* token, size_t length, uint32_t s,
                                  uint32_t input_count, operand_t* out) {
  char text[64];
  if (length >= sizeof(text))
    return HGR__OP_ERROR(ctx, "attr 'expr': statement %u: operand '%.*s...' is too long", s, 32, token);
  memcpy(text, token, length);
  text[length] = 0;
  char* end = NULL;
  if ((text[0] == 'i' || text[0] == 'v') && text[1] >= '0' && text[1] <= '9') {
    unsigned long index = strtoul(text + 1, &end, 10);
    if (*end) return HGR__OP_ERROR(ctx, "attr 'expr': statement %u: operand '%s' is not i<k>, v<k> or a number", s, text);
    out->kind = text[0] == 'i' ? OPERAND_INPUT : OPERAND_VALUE;
    out->index = (uint32_t)(index > UINT32_MAX ? UINT32_MAX : index);
    if (out->kind == OPERAND_INPUT && index >= input_count)
      return HGR__OP_ERROR(ctx, "attr 'expr': statement %u: operand '%s' names input %lu; the node has %u", s, text,
                           index, input_count);
    if (out->kind == OPERAND_VALUE && index >= s)
      return HGR__OP_ERROR(ctx, "attr 'expr': statement %u: operand '%s' names statement %lu, not an earlier one", s,
                           text, index);
    return HGR_OK;
  }
  double value = strtod(text, &end);
  if (end == text || *end)
    return HGR__OP_ERROR(ctx, "attr 'expr': statement %u: operand '%s' is not i<k>, v<k> or a number", s, text);
  out->kind = OPERAND_LITERAL;
  out->literal = isnan(value) ? NAN : value > FLT_MAX ? INFINITY : value < -FLT_MAX ? -INFINITY : (float)value;
  return HGR_OK;
}

static uint32_t param_count(const hgr__fusable_t* op) { return (op->params[0] != NULL) + (op->params[1] != NULL); }

/* Parses attr "expr" into *program, checking every op, operand count and reference. */
static hgr_status_t parse_program(const hgr__op_ctx_t* ctx, program_t* program) {
  const char* text = hgr__attr_string(ctx, "expr", NULL);
  if (!text || !text[0]) return HGR__OP_ERROR(ctx, "attr 'expr' (the fused expression) is required");
  uint32_t input_count = hgr__op_input_count(ctx);
  program->count = 0;
  for (const char* at = text;;) {
    const char* end = strchr(at, ';');
    if (!end) end = at + strlen(at);
    if (program->count == HGR__FUSED_MAX_STATEMENTS)
      return HGR__OP_ERROR(ctx, "attr 'expr' has more than %d statements", HGR__FUSED_MAX_STATEMENTS);
    uint32_t s = program->count;
    statement_t* statement = &program->statements[s];
    memset(statement, 0, sizeof(*statement));
    uint32_t tokens = 0;
    for (const char* t = at; t < end;) {
      while (t < end && *t == ' ') ++t;
      const char* token_end = t;
      while (token_end < end && *token_end != ' ') ++token_end;
      if (token_end == t) break;
      size_t length = (size_t)(token_end - t);
      if (tokens == 0) {
        char name[32];
        snprintf(name, sizeof(name), "%.*s", (int)(length < sizeof(name) ? length : sizeof(name) - 1), t);
        statement->op = hgr__fusable_op(name);
        if (!statement->op || length >= sizeof(name))
          return HGR__OP_ERROR(ctx, "attr 'expr': statement %u: '%.*s' is not an op fused_elementwise computes", s,
                               (int)(length > 40 ? 40 : length), t);
      } else {
        if (statement->operand_count == HGR__FUSED_MAX_OPERANDS)
          return HGR__OP_ERROR(ctx, "attr 'expr': statement %u (%s) has too many operands", s, statement->op->name);
        HGR_RETURN_IF_ERROR(parse_operand(ctx, t, length, s, input_count,
                                          &statement->operands[statement->operand_count++]));
      }
      ++tokens;
      t = token_end;
    }
    if (!statement->op) return HGR__OP_ERROR(ctx, "attr 'expr': statement %u is empty", s);
    uint32_t want = statement->op->operands + param_count(statement->op);
    if (statement->operand_count != want)
      return HGR__OP_ERROR(ctx, "attr 'expr': statement %u (%s) has %u operands; it takes %u", s, statement->op->name,
                           statement->operand_count, want);
    for (uint32_t k = statement->op->operands; k < want; ++k)
      if (statement->operands[k].kind != OPERAND_LITERAL)
        return HGR__OP_ERROR(ctx, "attr 'expr': statement %u (%s): operand %u (%s) must be a number", s,
                             statement->op->name, k, statement->op->params[k - statement->op->operands]);
    ++program->count;
    if (!*end) break;
    at = end + 1;
  }
  return HGR_OK;
}

/* ---- inference ---------------------------------------------------------------------- */

/* Attr "axes": one value per input, each -1 or a dimension (< HGR_MAX_DIMS, and
 * leaving room for the input's own); all -1 when absent. */
static hgr_status_t read_axes(const hgr__op_ctx_t* ctx, int32_t* axes) {
  uint32_t count = hgr__op_input_count(ctx), given = 0;
  int64_t values[HGR__FUSED_MAX_INPUTS + 1];
  bool present = false;
  HGR_RETURN_IF_ERROR(hgr__attr_ints(ctx, "axes", values, HGR__FUSED_MAX_INPUTS + 1, &given, &present));
  if (present && given != count)
    return HGR__OP_ERROR(ctx, "attr 'axes' has %u values; give one per input (%u)", given, count);
  for (uint32_t i = 0; i < count; ++i) {
    int64_t axis = present ? values[i] : -1;
    if (axis < -1 || axis + hgr__op_input(ctx, i)->ndim > HGR_MAX_DIMS)
      return HGR__OP_ERROR(ctx, "attr 'axes': input %u's axis %lld is neither -1 nor a dimension its %d "
                           "dimensions fit from (at most %d in all)", i, (long long)axis,
                           hgr__op_input(ctx, i)->ndim, HGR_MAX_DIMS);
    axes[i] = (int32_t)axis;
  }
  return HGR_OK;
}

static hgr_status_t infer_fused(hgr__op_ctx_t* ctx, hgr__entry_t* outputs) {
  uint32_t count = hgr__op_input_count(ctx);
  if (count > HGR__FUSED_MAX_INPUTS)
    return HGR__OP_ERROR(ctx, "takes at most %d inputs, the node has %u", HGR__FUSED_MAX_INPUTS, count);
  program_t* program = hgr__alloc(ctx->allocator, sizeof(*program));
  if (!program) return HGR_STATUS(HGR_STATUS_RESOURCE_EXHAUSTED, "%s: out of host memory", ctx->label);
  hgr_status_t status = parse_program(ctx, program);
  hgr__free(ctx->allocator, program);
  HGR_RETURN_IF_ERROR(status);
  int32_t axes[HGR__FUSED_MAX_INPUTS];
  HGR_RETURN_IF_ERROR(read_axes(ctx, axes));
  /* The output's rank first: an input placed at an axis counts from the left of
   * the final output, whichever input comes first. */
  int32_t ndim = 0;
  for (uint32_t i = 0; i < count; ++i) {
    const hgr__entry_t* in = hgr__op_input(ctx, i);
    int32_t in_ndim = axes[i] < 0 ? in->ndim : axes[i] + in->ndim;
    if (in_ndim > ndim) ndim = in_ndim;
  }
  hgr__entry_t out;
  memset(&out, 0, sizeof(out));
  out.ndim = ndim;
  for (int32_t d = 0; d < ndim; ++d) out.shape[d] = 1;
  for (uint32_t i = 0; i < count; ++i) {
    HGR_RETURN_IF_ERROR(hgr__op_check_dtype(ctx, (int)i, -1, false));
    const hgr__entry_t* in = hgr__op_input(ctx, i);
    hgr__entry_t next;
    memset(&next, 0, sizeof(next));
    next.ndim = ndim;
    for (int32_t d = 0; d < ndim; ++d) {
      int64_t a = hgr__broadcast_extent(&out, -1, ndim, d), b = hgr__broadcast_extent(in, axes[i], ndim, d);
      if (a != b && a != 1 && b != 1) {
        char in_text[160], out_text[160], axis_text[32] = "";
        if (axes[i] >= 0) snprintf(axis_text, sizeof(axis_text), " (axis %d)", axes[i]);
        return HGR__OP_ERROR(ctx,
                             "input %u shaped %s%s does not broadcast with the inputs before it (shaped %s "
                             "together): %lld against %lld in dimension %d from the right",
                             i, hgr__entry_shape(in, in_text, sizeof(in_text)), axis_text,
                             hgr__entry_shape(&out, out_text, sizeof(out_text)), (long long)b, (long long)a,
                             ndim - d);
      }
      next.shape[d] = a == 1 ? b : a;
    }
    out = next;
  }
  hgr__op_set_output(&outputs[0], HGR__DTYPE_F32, out.shape, out.ndim);
  return HGR_OK;
}

/* ---- the generated kernel ------------------------------------------------------------- */

typedef enum input_kind_t { INPUT_FULL, INPUT_SCALAR, INPUT_STRIDED } input_kind_t;

/* Elements per work-item along the innermost coordinate: the statements run on
 * floatN values (one AVX2 register for N = 8), and the last work-item of a row
 * runs them on float for the elements left. */
#define FUSED_WIDTH 8

/* The code of an operand: an input's element, a statement's value or a literal
 * (written by its bits, so that it is exact and infinities need no macro, and
 * converted to the statement's type, so that a literal may be any argument). */
static void operand_code(hgr__text_t* code, const operand_t* operand, const char* type) {
  if (operand->kind == OPERAND_INPUT) hgr__text_appendf(code, "x%u", operand->index);
  else if (operand->kind == OPERAND_VALUE) hgr__text_appendf(code, "v%u", operand->index);
  else {
    uint32_t bits;
    memcpy(&bits, &operand->literal, sizeof(bits));
    hgr__text_appendf(code, "((%s)as_float(0x%08xu))", type, bits);
  }
}

/* The functions a template may call, each defined for float and floatN ('@' in a
 * template is the statement's type): the generated source starts with them when a
 * statement calls one (uses_helpers).
 *
 * gelu: 0.5 x erfc(-x / sqrt 2), erfc by the Chebyshev fit of Numerical Recipes'
 * erfcc (fractional error below 1.2e-7 everywhere): t = 1 / (1 + |z| / 2),
 * erfc(|z|) = t exp(-z^2 - 1.26551223 + t P(t)), erfc(-|z|) = 2 - erfc(|z|). PoCL's
 * erfc, scalar per lane, took 4-6 ns an element; this is one exp and one division,
 * vectorized. Its error on [-6, 6], 33 ulp at most (z^2's rounding through exp), is
 * within what test_ops_elementwise allows gelu. kernels/gelu.h computes the same
 * for the gelu op and the GEMM epilogue. */
#define HELPER_GELU(T)                                                                                          \
  "static inline " T " hgr_gelu_" T "(" T " x) {\n"                                                            \
  "  " T " z = M_SQRT1_2_F * fabs(x);\n"                                                                        \
  "  " T " t = 1.0f / (1.0f + 0.5f * z);\n"                                                                     \
  "  " T " p = 1.00002368f + t * (0.37409196f + t * (0.09678418f + t * (-0.18628806f + t * (0.27886807f +\n"    \
  "      t * (-1.13520398f + t * (1.48851587f + t * (-0.82215223f + t * 0.17087277f)))))));\n"                  \
  "  " T " h = 0.5f * x * t * exp(-z * z - 1.26551223f + t * p); /* 0.5 x erfc(|z|) */\n"                       \
  "  return select(x - h, h, x <= 0.0f);\n"                                                                     \
  "}\n"

_Static_assert(FUSED_WIDTH == 8, "the helpers are defined for float8, the vector statements' type");

/* Whether some statement's template calls a helper function. */
static bool uses_helpers(const program_t* program) {
  for (uint32_t s = 0; s < program->count; ++s)
    if (strchr(program->statements[s].op->code, '@')) return true;
  return false;
}

/* Appends statement s's expression: the op's template with A, B, P, Q replaced by
 * its operands' code and @ by its type. The templates take float or floatN alike:
 * a scalar argument of a builtin comes after the vector one (fmax(A, 0.0f)). */
static void statement_code(hgr__text_t* code, const statement_t* statement, const char* type) {
  for (const char* t = statement->op->code; *t; ++t) {
    if (*t == '@') {
      hgr__text_appendf(code, "%s", type);
      continue;
    }
    int k = *t == 'A' ? 0 : *t == 'B' ? 1 : *t == 'P' ? (int)statement->op->operands
                                       : *t == 'Q' ? (int)statement->op->operands + 1 : -1;
    /* Only whole-word A, B, P, Q: not the letters of a function or constant name. */
    bool word = k >= 0 && (t == statement->op->code || !(t[-1] == '_' || (t[-1] >= 'A' && t[-1] <= 'Z') ||
                                                         (t[-1] >= 'a' && t[-1] <= 'z'))) &&
                !(t[1] == '_' || (t[1] >= 'A' && t[1] <= 'Z') || (t[1] >= 'a' && t[1] <= 'z'));
    if (word) operand_code(code, &statement->operands[k], type);
    else hgr__text_appendf(code, "%c", *t);
  }
}

/* The inputs' values, the statements and the store, for FUSED_WIDTH elements from
 * output element i (vector) or for element i + k (vector false). Input j is read
 * at i (full), 0 (scalar) or o<j> (strided; plus the lane when it spans the
 * innermost coordinate, where its stride is 1). */
static void element_code(hgr__text_t* code, const program_t* program, const input_kind_t* kinds, uint32_t count,
                         const hgr__collapsed_t* c, bool vector, const char* indent) {
  char type[16] = "float";
  if (vector) snprintf(type, sizeof(type), "float%d", FUSED_WIDTH);
  for (uint32_t j = 0; j < count; ++j) {
    bool lanes = kinds[j] == INPUT_FULL || (kinds[j] == INPUT_STRIDED && c->full[j][c->ndim - 1]);
    char at[32];
    if (kinds[j] == INPUT_FULL) snprintf(at, sizeof(at), "i");
    else if (kinds[j] == INPUT_SCALAR) snprintf(at, sizeof(at), "0");
    else snprintf(at, sizeof(at), "o%u", j);
    if (vector && lanes) hgr__text_appendf(code, "%s%s x%u = vload%d(0, in%u + %s);\n", indent, type, j, FUSED_WIDTH, j, at);
    else if (vector) hgr__text_appendf(code, "%s%s x%u = (%s)(in%u[%s]);\n", indent, type, j, type, j, at);
    else hgr__text_appendf(code, "%sfloat x%u = in%u[%s%s];\n", indent, j, j, at, lanes ? " + k" : "");
  }
  for (uint32_t s = 0; s < program->count; ++s) {
    hgr__text_appendf(code, "%s%s v%u = ", indent, type, s);
    statement_code(code, &program->statements[s], type);
    hgr__text_appendf(code, ";\n");
  }
  if (vector) hgr__text_appendf(code, "%svstore%d(v%u, 0, out + i);\n", indent, FUSED_WIDTH, program->count - 1);
  else hgr__text_appendf(code, "%sout[i + k] = v%u;\n", indent, program->count - 1);
}

/* The kernel's body (after its name): the parameter list and the code. No
 * `restrict`: the output may share a full input's storage (in place; each
 * work-item reads its elements before it writes them). */
static void kernel_body(hgr__text_t* code, const program_t* program, const input_kind_t* kinds, uint32_t count,
                        const hgr__collapsed_t* c, bool strided) {
  hgr__text_appendf(code, "(");
  for (uint32_t j = 0; j < count; ++j) hgr__text_appendf(code, "__global const float* in%u, ", j);
  hgr__text_appendf(code, "__global float* out, int n%s) {\n", strided ? ", __global const int* meta" : "");
  if (!strided) {
    /* size_t first: the work-items past the end (the global size is rounded up to
     * whole work-groups) would overflow an int near INT32_MAX */
    hgr__text_appendf(code, "  size_t first = get_global_id(0) * %d;\n  if (first >= (size_t)n) return;\n"
                      "  int i = (int)first;\n  int left = n - i;\n", FUSED_WIDTH);
  } else {
    /* Two dimensions: dimension 0 walks the collapsed output's innermost
     * coordinate, FUSED_WIDTH elements per work-item, dimension 1 the rows (every
     * outer coordinate, row-major), so a work-item divides only its row index (an
     * integer division per element, which PoCL cannot vectorize, took a third of
     * a batch_norm + relu's time). Straight-line code for the collapsed rank, and
     * per strided input only the dimensions it is not broadcast along: a loop over
     * a rank read from meta keeps PoCL from vectorizing. The remainder is r - (r /
     * e) * e, as in elementwise.cl (Oclgrind and `%`); the outermost coordinate is
     * what is left. */
    int32_t last = c->ndim - 1;
    hgr__text_appendf(code, "  __global const int* extent = meta + 1;\n");
    hgr__text_appendf(code, "  size_t first = get_global_id(0) * %d;\n  if (first >= (size_t)extent[%d]) return;\n",
                      FUSED_WIDTH, last);
    hgr__text_appendf(code, "  int c%d = (int)first;\n", last);
    hgr__text_appendf(code, "  size_t at = get_global_id(1) * (size_t)extent[%d] + (size_t)c%d;\n  if (at >= (size_t)n) return;\n"
                      "  int row = (int)get_global_id(1);\n  int i = (int)at;\n", last, last);
    hgr__text_appendf(code, "  int left = extent[%d] - c%d;\n", last, last);
    if (last > 0) {
      hgr__text_appendf(code, "  int r = row;\n");
      for (int32_t d = last - 1; d > 0; --d)
        hgr__text_appendf(code, "  int q%d = r / extent[%d];\n  int c%d = r - q%d * extent[%d];\n  r = q%d;\n", d, d, d,
                          d, d, d);
      hgr__text_appendf(code, "  int c0 = r;\n");
    }
    uint32_t ordinal = 0;
    for (uint32_t j = 0; j < count; ++j) {
      if (kinds[j] != INPUT_STRIDED) continue;
      ++ordinal;
      hgr__text_appendf(code, "  int o%u = 0", j);
      for (int32_t d = 0; d < c->ndim; ++d)
        if (c->full[j][d]) hgr__text_appendf(code, " + c%d * meta[%d]", d, 1 + c->ndim * (int32_t)ordinal + d);
      hgr__text_appendf(code, ";\n");
    }
  }
  hgr__text_appendf(code, "  if (left >= %d) {\n", FUSED_WIDTH);
  element_code(code, program, kinds, count, c, true, "    ");
  hgr__text_appendf(code, "    return;\n  }\n  for (int k = 0; k < left; ++k) {\n");
  element_code(code, program, kinds, count, c, false, "    ");
  hgr__text_appendf(code, "  }\n}\n");
}

static hgr_status_t plan_fused(hgr__op_ctx_t* ctx) {
  const hgr__entry_t* out = hgr__op_output(ctx, 0); /* the broadcast (infer_fused) */
  HGR_RETURN_IF_ERROR(hgr__op_check_range(ctx, "the output's element count", out->element_count, INT32_MAX));
  uint32_t count = hgr__op_input_count(ctx);
  program_t* program = hgr__alloc(ctx->allocator, sizeof(*program));
  hgr__collapsed_t* c = hgr__alloc(ctx->allocator, sizeof(*c));
  hgr__text_t code = {.allocator = ctx->allocator};
  char* body = NULL;
  hgr_status_t status = program && c ? parse_program(ctx, program)
                                     : HGR_STATUS(HGR_STATUS_RESOURCE_EXHAUSTED, "%s: out of host memory", ctx->label);
  if (status) goto cleanup;

  int32_t axes[HGR__FUSED_MAX_INPUTS];
  status = read_axes(ctx, axes);
  if (status) goto cleanup;
  input_kind_t kinds[HGR__FUSED_MAX_INPUTS];
  bool strided = false;
  for (uint32_t j = 0; j < count; ++j) {
    uint64_t elements = hgr__op_input(ctx, j)->element_count;
    kinds[j] = elements == out->element_count ? INPUT_FULL : elements == 1 ? INPUT_SCALAR : INPUT_STRIDED;
    strided = strided || kinds[j] == INPUT_STRIDED;
  }
  if (strided) { /* the full and scalar inputs are indexed apart: only the strided ones matter */
    const hgr__entry_t* inputs[HGR__FUSED_MAX_INPUTS];
    for (uint32_t j = 0; j < count; ++j) inputs[j] = kinds[j] == INPUT_STRIDED ? hgr__op_input(ctx, j) : NULL;
    hgr__collapse_broadcast(inputs, axes, count, out, c);
  }
  kernel_body(&code, program, kinds, count, c, strided);
  size_t code_length = code.length;
  body = hgr__text_take(&code);
  if (!body) {
    status = HGR_STATUS(HGR_STATUS_RESOURCE_EXHAUSTED, "%s: out of host memory for the generated kernel", ctx->label);
    goto cleanup;
  }
  /* "<name>\0<text>": the name the program cache knows it by, then the source. */
  uint64_t hash = hgr__fnv1a(body, code_length, HGR__FNV1A_START);
  char name[32];
  snprintf(name, sizeof(name), "fused_%016llx", (unsigned long long)hash);
  const char* header = uses_helpers(program) ? "/* generated by hgr: fused_elementwise (runtime/ops/ops_fused.c) */\n"
                                              HELPER_GELU("float") HELPER_GELU("float8")
                                              "__kernel void hgr_"
                                            : "/* generated by hgr: fused_elementwise (runtime/ops/ops_fused.c) */\n"
                                              "__kernel void hgr_";
  size_t name_length = strlen(name), header_length = strlen(header);
  char* generated =
      hgr__alloc(ctx->allocator, name_length + 1 + header_length + name_length + code_length + 1);
  if (!generated) {
    status = HGR_STATUS(HGR_STATUS_RESOURCE_EXHAUSTED, "%s: out of host memory for the generated kernel", ctx->label);
    goto cleanup;
  }
  char* text = generated + name_length + 1;
  memcpy(generated, name, name_length + 1);
  memcpy(text, header, header_length);
  memcpy(text + header_length, name, name_length);
  memcpy(text + header_length + name_length, body, code_length + 1);

  char kernel[64];
  snprintf(kernel, sizeof(kernel), "hgr_%s", name);
  hgr__launch_plan_t* l = hgr__op_launch(ctx, kernel);
  l->generated = generated; /* freed with the launch, also when it is discarded */
  l->source = generated;
  for (uint32_t j = 0; j < count; ++j) hgr__launch_input(ctx, l, j);
  hgr__launch_output(ctx, l, 0);
  hgr__launch_int(ctx, l, (int32_t)out->element_count);
  if (strided) {
    int32_t extents[HGR_MAX_DIMS];
    for (int32_t k = 0; k < c->ndim; ++k) extents[k] = (int32_t)c->extent[k];
    hgr__launch_meta_arg(ctx, l);
    hgr__launch_meta1(ctx, l, c->ndim);
    hgr__launch_meta(ctx, l, extents, (uint32_t)c->ndim);
    for (uint32_t j = 0; j < count; ++j) {
      if (kinds[j] != INPUT_STRIDED) continue;
      int32_t strides[HGR_MAX_DIMS];
      int64_t step = 1;
      for (int32_t k = c->ndim - 1; k >= 0; --k) {
        strides[k] = c->full[j][k] ? (int32_t)step : 0;
        if (c->full[j][k]) step *= c->extent[k];
      }
      hgr__launch_meta(ctx, l, strides, (uint32_t)c->ndim);
    }
  }
  /* Work-groups of 8 chunks of a row by 8 rows, whatever the shape: a 2-D range
   * keeps the rows' work-items vectorized (one over the rows' chunks, dividing for
   * its row and chunk, made densenet121's batch norms 2.9x slower on PoCL), and a
   * local size that followed the row length made PoCL compile a work-group
   * function at a new shape. */
  if (strided) {
    size_t most = ctx->limits.max_work_group && ctx->limits.max_work_group < 64 ? ctx->limits.max_work_group : 64;
    size_t local0 = ctx->limits.max_work_item[0] && ctx->limits.max_work_item[0] < 8 ? ctx->limits.max_work_item[0] : 8;
    if (local0 > most) local0 = most;
    size_t local1 = most / local0;
    if (ctx->limits.max_work_item[1] && local1 > ctx->limits.max_work_item[1]) local1 = ctx->limits.max_work_item[1];
    size_t chunks = (size_t)((c->extent[c->ndim - 1] + FUSED_WIDTH - 1) / FUSED_WIDTH);
    size_t global[2] = {chunks, (size_t)(out->element_count / c->extent[c->ndim - 1])};
    size_t local_sizes[2] = {local0, local1 ? local1 : 1};
    hgr__launch_nd(l, 2, global, local_sizes);
  } else {
    hgr__launch_1d(ctx, l, (out->element_count + FUSED_WIDTH - 1) / FUSED_WIDTH);
  }
cleanup:
  hgr__free(ctx->allocator, body);
  hgr__free(ctx->allocator, program);
  hgr__free(ctx->allocator, c);
  return status;
}

/* One launch in which work-item i reads element i of every full input and writes
 * element i of the output: it may run in place on a full input. */
const hgr__op_t hgr__ops_fused[] = {
    {"fused_elementwise", "fused", 1, HGR__FUSED_MAX_INPUTS, 1, 1, "expr axes", plan_fused, 0, HGR__IN_PLACE_ELEMENTWISE,
     infer_fused},
    {.name = NULL},
};
