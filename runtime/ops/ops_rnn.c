/* The recurrences of ONNX's LSTM, GRU and RNN (kernels/rnn.cl): lstm_recurrence,
 * gru_recurrence and rnn_recurrence run every step of every sequence in one launch,
 * one work-group per (direction, batch row), the state kept in the work-group
 * between steps. The input projection X W^T + Wb for every step and direction is
 * not theirs: it comes in as input 0, computed beforehand by one matrix product
 * (the ONNX importer's `dense`), so that only H_{t-1} R^T and the cell remain
 * sequential.
 *
 * Inputs (T steps, B batch rows, D directions, H = hidden units, G gates: LSTM 4
 * in ONNX's order i, o, f, c; GRU 3: z, r, h; RNN 1):
 *   0 gates_x  float32 [T, B, D G H] (layout 0) or [B, T, D G H] (layout 1)
 *   1 r        float32 [D, G H, H]; with r_transposed, R^T [D, H, S], S >= G H (a
 *              row's floats past G H unused: the importer pads them, see below)
 *   then, in this order, each present when its attr says so:
 *     bias           [D, G H]    the recurrent bias Rb      (with_bias)
 *     sequence_lens  int32 [B]                               (with_sequence_lens)
 *     initial_h      [D, B, H] (layout 1: [B, D, H])        (with_initial_h)
 *     initial_c      as initial_h, LSTM only                (with_initial_c)
 *     peepholes      [D, 3 H], LSTM only (i, o, f)          (with_peepholes)
 * Outputs: Y [T, D, B, H] (layout 1: [B, T, D, H]), Y_h (as initial_h), and for
 * LSTM Y_c (as initial_h).
 * Attrs, ONNX's: hidden_size (optional, checked against r), direction (forward,
 * reverse, bidirectional), layout (0, 1), activations (a list of ONNX's names,
 * case-insensitive: one per activation of the cell and direction, forward first),
 * activation_alpha and activation_beta (consumed in order by the activations that
 * take them, as ONNX Runtime reads them; an activation left without a value takes
 * the default of the ONNX op of its name), clip (> 0; absent: none), input_forget
 * (LSTM), linear_before_reset (GRU); and hgr's steps_per_launch (0: every step in
 * one launch; k: one launch per k steps, for devices that stop long kernels) and
 * r_transposed (input 1 is R^T: the ONNX importer transposes a constant R at load,
 * so that the layouts that read R^T need no copy of it per run).
 *
 * The kernels keep the state in local memory; between launches (steps_per_launch)
 * it waits in the node's scratch rather than in Y_h and Y_c: Oclgrind 21.10 takes
 * an output storage that a later launch reads back for uninitialized once its
 * buffer ID was an earlier executor's partly host-written buffer
 * (tests/CMakeLists.txt), and the scratch is written whole at creation. How R is
 * read is the plan's tile choice (key "rnn:<op>:<D>x<B>x<H>", candidates rows,
 * columns, rows4, packed and columns16; see plan_rnn): the gate-row kernels
 * (hgr_*_sequence, a work-item per gate row), where H % 4 == 0 the units4 kernels
 * (hgr_*_units4, a work-item per 4 units, all their gates and their cell), or,
 * where H % 16 == 0, the units16 kernels (hgr_*_units16, the same per 16 units
 * from R^T). */
#include <ctype.h>
#include <float.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "ops.h"

enum { LSTM, GRU, RNN };

/* Optional inputs, in their order after gates_x and r. */
enum { OPT_BIAS, OPT_LENS, OPT_INITIAL_H, OPT_INITIAL_C, OPT_PEEPHOLES, OPT_COUNT };
static const char* const optional_attrs[OPT_COUNT] = {"with_bias", "with_sequence_lens", "with_initial_h",
                                                      "with_initial_c", "with_peepholes"};
static const char* const optional_names[OPT_COUNT] = {"bias", "sequence_lens", "initial_h", "initial_c",
                                                      "peepholes"};

/* kernels/rnn.cl's flags. */
#define RNN_REVERSE 1u
#define RNN_LAYOUT_BATCH 2u
#define RNN_BIAS 4u
#define RNN_LENS 8u
#define RNN_INITIAL_H 16u
#define RNN_INITIAL_C 32u
#define RNN_PEEPHOLES 64u
#define RNN_CLIP 128u
#define RNN_INPUT_FORGET 256u
#define RNN_LINEAR_BEFORE_RESET 512u
#define RNN_R_COLUMNS 1024u
#define RNN_R_PACKED 2048u
#define RNN_R_COPIED 4096u

/* R's layout and the kernels that read it, the tile candidates of plan_rnn. */
enum { LAYOUT_ROWS, LAYOUT_COLUMNS, LAYOUT_ROWS4, LAYOUT_PACKED, LAYOUT_COLUMNS16, LAYOUT_COUNT };
static const char* const layout_names[LAYOUT_COUNT] = {"rows", "columns", "rows4", "packed", "columns16"};

/* Wider groups add nothing for the hidden sizes of real models on CPUs, and GPUs
 * take 256 everywhere. */
#define GROUP_MAX 256

typedef struct cell_t {
  const char* kernel;
  uint32_t gates;       /* G */
  uint32_t activations; /* per direction */
  uint32_t optional;    /* how many of the optional inputs the cell has */
  const char* defaults[3];
} cell_t;

static const cell_t cells[] = {
    [LSTM] = {"hgr_lstm_sequence", 4, 3, 5, {"Sigmoid", "Tanh", "Tanh"}},
    [GRU] = {"hgr_gru_sequence", 3, 2, 3, {"Sigmoid", "Tanh"}},
    [RNN] = {"hgr_rnn_sequence", 1, 1, 3, {"Tanh"}},
};

/* ONNX's activations, in the order of kernels/rnn.cl's codes, with the defaults of
 * the ONNX ops of the same name (Affine and ScaledTanh: the experimental ops'). */
typedef struct activation_t {
  const char* name;
  bool takes_alpha, takes_beta;
  double alpha, beta;
} activation_t;

static const activation_t activation_table[] = {
    {"Relu", false, false, 0, 0},          {"Tanh", false, false, 0, 0},
    {"Sigmoid", false, false, 0, 0},       {"Affine", true, true, 1.0, 0.0},
    {"LeakyRelu", true, false, 0.01, 0},   {"ThresholdedRelu", true, false, 1.0, 0},
    {"ScaledTanh", true, true, 1.0, 1.0},  {"HardSigmoid", true, true, 0.2, 0.5},
    {"Elu", true, false, 1.0, 0},          {"Softsign", false, false, 0, 0},
    {"Softplus", false, false, 0, 0},
};
#define ACTIVATION_COUNT (sizeof(activation_table) / sizeof(activation_table[0]))

#define MAX_ACTIVATIONS 6 /* 3 per direction, 2 directions */

typedef struct rnn_t {
  const cell_t* cell;
  int kind;
  uint32_t steps, batch, directions, hidden;
  bool batch_first;
  bool r_transposed;  /* input 1 is R^T */
  uint32_t r_stride;  /* R^T's row stride (S) when r_transposed */
  int32_t inputs[OPT_COUNT]; /* each optional input's index, or -1 */
  uint32_t flags;
  float clip;
  uint32_t steps_per_launch; /* 0: all */
  int32_t code[MAX_ACTIVATIONS]; /* per direction d and activation a: [d * activations + a] */
  float alpha[MAX_ACTIVATIONS], beta[MAX_ACTIVATIONS];
} rnn_t;

/* The names of the attr "activations": ONNX's names, case-insensitive, in a list
 * whose brackets, quotes and commas are optional ("[Sigmoid, Tanh]",
 * "['Sigmoid', 'Tanh']", "Sigmoid Tanh"). */
static hgr_status_t parse_activation_names(const hgr__op_ctx_t* ctx, int32_t* codes, uint32_t* out_count) {
  const char* value = hgr__attr_string(ctx, "activations", "");
  uint32_t count = 0;
  for (const char* s = value; *s;) {
    if (strchr(" \t\n,[]()'\"", *s)) {
      ++s;
      continue;
    }
    size_t length = 0;
    while (isalpha((unsigned char)s[length])) ++length;
    if (!length)
      return HGR__OP_ERROR(ctx, "attr 'activations' = \"%s\" is not a list of activation names (at '%c')", value, *s);
    int32_t code = -1;
    for (size_t k = 0; k < ACTIVATION_COUNT && code < 0; ++k)
      if (strlen(activation_table[k].name) == length && !strncasecmp(activation_table[k].name, s, length))
        code = (int32_t)k;
    if (code < 0)
      return HGR__OP_ERROR(ctx, "attr 'activations' = \"%s\": '%.*s' is not an activation hgr knows (Relu, Tanh, "
                                "Sigmoid, Affine, LeakyRelu, ThresholdedRelu, ScaledTanh, HardSigmoid, Elu, "
                                "Softsign, Softplus)", value, (int)length, s);
    if (count == MAX_ACTIVATIONS)
      return HGR__OP_ERROR(ctx, "attr 'activations' = \"%s\" has more than %d names", value, MAX_ACTIVATIONS);
    codes[count++] = code;
    s += length;
  }
  *out_count = count;
  return HGR_OK;
}

/* Every direction's activations with their alpha and beta. */
static hgr_status_t parse_activations(const hgr__op_ctx_t* ctx, rnn_t* p) {
  uint32_t per = p->cell->activations, count = 0;
  int32_t given[MAX_ACTIVATIONS];
  HGR_RETURN_IF_ERROR(parse_activation_names(ctx, given, &count));
  if (!count) { /* the cell's defaults, in each direction */
    for (uint32_t i = 0; i < per * p->directions; ++i)
      for (size_t k = 0; k < ACTIVATION_COUNT; ++k)
        if (!strcmp(activation_table[k].name, p->cell->defaults[i % per])) given[i] = (int32_t)k;
    count = per * p->directions;
  }
  if (count != per * p->directions)
    return HGR__OP_ERROR(ctx, "attr 'activations' = \"%s\" has %u names; the op takes %u (one per activation%s)",
                         hgr__attr_string(ctx, "activations", ""), count, per * p->directions,
                         p->directions == 2 ? " and direction" : "");
  double alphas[MAX_ACTIVATIONS], betas[MAX_ACTIVATIONS];
  uint32_t alpha_count = 0, beta_count = 0;
  HGR_RETURN_IF_ERROR(hgr__attr_floats(ctx, "activation_alpha", alphas, MAX_ACTIVATIONS, &alpha_count, NULL));
  HGR_RETURN_IF_ERROR(hgr__attr_floats(ctx, "activation_beta", betas, MAX_ACTIVATIONS, &beta_count, NULL));
  /* The values are consumed in order by the activations that take them (ONNX
   * Runtime's reading); values left over are ignored, as there. */
  uint32_t next_alpha = 0, next_beta = 0;
  for (uint32_t i = 0; i < count; ++i) {
    const activation_t* act = &activation_table[given[i]];
    double alpha = act->alpha, beta = act->beta;
    if (act->takes_alpha && next_alpha < alpha_count) alpha = alphas[next_alpha++];
    if (act->takes_beta && next_beta < beta_count) beta = betas[next_beta++];
    if (!(fabs(alpha) <= FLT_MAX) || !(fabs(beta) <= FLT_MAX))
      return HGR__OP_ERROR(ctx, "activation %u (%s): alpha %g and beta %g must be finite float32 values", i,
                           act->name, alpha, beta);
    p->code[i] = given[i];
    p->alpha[i] = (float)alpha;
    p->beta[i] = (float)beta;
  }
  return HGR_OK;
}

/* Input index's shape must be shape (ndim values). */
static hgr_status_t check_input_shape(const hgr__op_ctx_t* ctx, uint32_t index, const char* name,
                                      const int64_t* shape, int32_t ndim) {
  char what[64];
  snprintf(what, sizeof(what), "input %u '%s'", index, name);
  return hgr__op_check_shape(ctx, hgr__op_input(ctx, index), what, shape, ndim);
}

/* The state's shape: [D, B, H], or [B, D, H] batch first. */
static void state_shape(const rnn_t* p, int64_t* shape) {
  shape[0] = p->batch_first ? p->batch : p->directions;
  shape[1] = p->batch_first ? p->directions : p->batch;
  shape[2] = p->hidden;
}

static hgr_status_t parse_rnn(const hgr__op_ctx_t* ctx, rnn_t* p) {
  memset(p, 0, sizeof(*p));
  p->kind = ctx->op->variant;
  p->cell = &cells[p->kind];
  const hgr__entry_t* gates_x = hgr__op_input(ctx, 0);
  const hgr__entry_t* r = hgr__op_input(ctx, 1);
  HGR_RETURN_IF_ERROR(hgr__op_check_dtype(ctx, 0, -1, false));
  HGR_RETURN_IF_ERROR(hgr__op_check_dtype(ctx, 1, -1, false));
  static const char* const directions[] = {"forward", "reverse", "bidirectional", NULL};
  const char* direction;
  HGR_RETURN_IF_ERROR(hgr__attr_choice(ctx, "direction", "forward", directions, &direction));
  p->directions = strcmp(direction, "bidirectional") ? 1 : 2;
  if (!strcmp(direction, "reverse")) p->flags |= RNN_REVERSE;
  int64_t layout, hidden_size, steps_per_launch;
  HGR_RETURN_IF_ERROR(hgr__attr_int(ctx, "layout", 0, &layout));
  if (layout != 0 && layout != 1)
    return HGR__OP_ERROR(ctx, "attr 'layout' = %lld is not supported; hgr takes 0 (time first) or 1 (batch first)",
                         (long long)layout);
  p->batch_first = layout == 1;
  if (p->batch_first) p->flags |= RNN_LAYOUT_BATCH;
  HGR_RETURN_IF_ERROR(hgr__attr_bool(ctx, "r_transposed", false, &p->r_transposed));
  if (p->r_transposed) { /* R^T [D, H, S], S >= G H */
    if (r->ndim != 3 || r->shape[0] != p->directions || r->shape[1] < 1 ||
        r->shape[2] < (int64_t)p->cell->gates * r->shape[1]) {
      char shape[160];
      return HGR__OP_ERROR(ctx, "input 1 'r' (r_transposed) is shaped %s; it must be [%u, hidden_size, S] with S >= "
                                "%u * hidden_size (%s)", hgr__entry_shape(r, shape, sizeof(shape)), p->directions,
                           p->cell->gates, direction);
    }
  } else if (r->ndim != 3 || r->shape[0] != p->directions || r->shape[2] < 1 ||
             r->shape[1] != (int64_t)p->cell->gates * r->shape[2]) {
    char shape[160];
    return HGR__OP_ERROR(ctx, "input 1 'r' is shaped %s; it must be [%u, %u * hidden_size, hidden_size] (%s)",
                         hgr__entry_shape(r, shape, sizeof(shape)), p->directions, p->cell->gates, direction);
  }
  HGR_RETURN_IF_ERROR(hgr__op_check_range(ctx, "input 1 'r''s element count", r->element_count, INT32_MAX));
  p->hidden = (uint32_t)r->shape[p->r_transposed ? 1 : 2];
  p->r_stride = p->r_transposed ? (uint32_t)r->shape[2] : 0;
  HGR_RETURN_IF_ERROR(hgr__attr_int(ctx, "hidden_size", p->hidden, &hidden_size));
  if (hidden_size != p->hidden)
    return HGR__OP_ERROR(ctx, "attr 'hidden_size' = %lld, but input 1 'r' has %u hidden units",
                         (long long)hidden_size, p->hidden);
  int64_t gh = (int64_t)p->cell->gates * p->hidden;
  if (gates_x->ndim != 3 || gates_x->shape[2] != p->directions * gh) {
    char shape[160];
    return HGR__OP_ERROR(ctx, "input 0 'gates_x' is shaped %s; it must be [%s, %lld] (directions x gates x hidden "
                              "units)", hgr__entry_shape(gates_x, shape, sizeof(shape)),
                         p->batch_first ? "batch, steps" : "steps, batch", (long long)(p->directions * gh));
  }
  HGR_RETURN_IF_ERROR(hgr__op_check_range(ctx, "input 0 'gates_x''s element count", gates_x->element_count,
                                          INT32_MAX));
  p->steps = (uint32_t)gates_x->shape[p->batch_first ? 1 : 0];
  p->batch = (uint32_t)gates_x->shape[p->batch_first ? 0 : 1];
  /* Y's elements, the scratch's (gates and state) and every offset the kernels take are bounded here. */
  uint64_t y_count = hgr__mul_saturating(hgr__mul_saturating((uint64_t)p->steps + 2, p->directions),
                                         hgr__mul_saturating(p->batch, (uint64_t)gh));
  HGR_RETURN_IF_ERROR(hgr__op_check_range(ctx, "(steps + 2) x directions x batch x gates x hidden units", y_count,
                                          INT32_MAX));
  /* the optional inputs */
  uint32_t next = 2;
  for (uint32_t k = 0; k < OPT_COUNT; ++k) {
    bool with = false; /* GRU and RNN have no initial_c and no peepholes */
    if (k < p->cell->optional) HGR_RETURN_IF_ERROR(hgr__attr_bool(ctx, optional_attrs[k], false, &with));
    p->inputs[k] = with ? (int32_t)next++ : -1;
  }
  if (next != hgr__op_input_count(ctx))
    return HGR__OP_ERROR(ctx, "takes 2 inputs (gates_x, r) and one per with_* attr set (%u), the node has %u",
                         next - 2, hgr__op_input_count(ctx));
  static const uint32_t flag_of[OPT_COUNT] = {RNN_BIAS, RNN_LENS, RNN_INITIAL_H, RNN_INITIAL_C, RNN_PEEPHOLES};
  for (uint32_t k = 0; k < OPT_COUNT; ++k) {
    if (p->inputs[k] < 0) continue;
    uint32_t index = (uint32_t)p->inputs[k];
    p->flags |= flag_of[k];
    int64_t shape[3];
    int32_t ndim = 3;
    if (k == OPT_BIAS || k == OPT_PEEPHOLES) {
      shape[0] = p->directions;
      shape[1] = k == OPT_BIAS ? gh : 3 * (int64_t)p->hidden;
      ndim = 2;
    } else if (k == OPT_LENS) {
      shape[0] = p->batch;
      ndim = 1;
    } else {
      state_shape(p, shape);
    }
    if (k == OPT_LENS) {
      const hgr__entry_t* lens = hgr__op_input(ctx, index);
      if (!hgr__dtype_is_i32(lens->dtype)) {
        char text[32];
        return HGR__OP_ERROR(ctx, "input %u 'sequence_lens' is %s; the op takes int32", index,
                             hgr_dtype_format(lens->dtype, text, sizeof(text)));
      }
    } else {
      HGR_RETURN_IF_ERROR(hgr__op_check_dtype(ctx, (int)index, -1, false));
    }
    HGR_RETURN_IF_ERROR(check_input_shape(ctx, index, optional_names[k], shape, ndim));
  }
  /* clip, the cell's flags, the activations */
  if (hgr__attr_string(ctx, "clip", NULL)) {
    double clip;
    HGR_RETURN_IF_ERROR(hgr__attr_float(ctx, "clip", 0, &clip));
    if (!(clip > 0))
      return HGR__OP_ERROR(ctx, "attr 'clip' = %g must be greater than 0", clip);
    p->flags |= RNN_CLIP;
    p->clip = clip > FLT_MAX ? INFINITY : (float)clip;
  }
  int64_t value;
  HGR_RETURN_IF_ERROR(hgr__attr_int(ctx, "input_forget", 0, &value));
  if (value) p->flags |= RNN_INPUT_FORGET;
  HGR_RETURN_IF_ERROR(hgr__attr_int(ctx, "linear_before_reset", 0, &value));
  if (value) p->flags |= RNN_LINEAR_BEFORE_RESET;
  HGR_RETURN_IF_ERROR(hgr__attr_int(ctx, "steps_per_launch", 0, &steps_per_launch));
  if (steps_per_launch < 0 || steps_per_launch > INT32_MAX)
    return HGR__OP_ERROR(ctx, "attr 'steps_per_launch' = %lld must be 0 (all) or a positive count",
                         (long long)steps_per_launch);
  p->steps_per_launch = (uint32_t)steps_per_launch;
  return parse_activations(ctx, p);
}

static hgr_status_t infer_rnn(hgr__op_ctx_t* ctx, hgr__entry_t* outputs) {
  rnn_t p;
  HGR_RETURN_IF_ERROR(parse_rnn(ctx, &p));
  int64_t y[4], state[3];
  if (p.batch_first) {
    y[0] = p.batch, y[1] = p.steps;
  } else {
    y[0] = p.steps, y[1] = p.directions;
  }
  y[2] = p.batch_first ? p.directions : p.batch;
  y[3] = p.hidden;
  state_shape(&p, state);
  hgr__op_set_output(&outputs[0], HGR__DTYPE_F32, y, 4);
  for (uint32_t k = 1; k < hgr__op_output_count(ctx); ++k) hgr__op_set_output(&outputs[k], HGR__DTYPE_F32, state, 3);
  return HGR_OK;
}

/* The work-group size: a power of two for the gate rows, within the device's limits. */
static size_t group_size(const hgr__op_ctx_t* ctx, uint32_t rows) {
  size_t cap = ctx->limits.max_work_group;
  if (ctx->limits.max_work_item[0] && ctx->limits.max_work_item[0] < cap) cap = ctx->limits.max_work_item[0];
  if (cap > GROUP_MAX) cap = GROUP_MAX;
  size_t size = 1;
  while (size * 2 <= cap && size < rows) size *= 2;
  return size;
}

/* The floats of padding after each row of R^T that a copy into the scratch writes,
 * as the ONNX importer pads a constant's (onnx_import_rnn.c): rows of a power of
 * two of floats (G H = 1024 for an LSTM of 256) make the units16 kernels' streams
 * of one tile, a row apart, fall on the same cache sets. */
#define R_T_PAD 16

/* What a first launch writes into the scratch for the kernels, from input 1. */
enum { COPY_NONE, COPY_TRANSPOSE, COPY_PACK };

/* llvmpipe (rusticl's CPU device) ends a work-item's loops once they have run
 * hgr__op_loop_iteration_limit iterations in all: there a launch takes at most the
 * steps whose loops fit, and the op runs one launch per block of them (as with
 * steps_per_launch). A step of the kernels with a work-group of `group` is bounded by
 * its gate rows (each a loop over H) and its units, each loop counted with one more
 * for its entry, the units kernels' fewer rows by the same bound. Measured on
 * rusticl: an LSTM of 128 units ran 28 steps right and 36 wrong in one launch (2086
 * iterations a step here, 31 steps), a GRU of 128 units 36 and 48 (41), an RNN of
 * 256 units 28 and 36 (31). */
#define LOOP(count, body) ((count) + 1 + (count) * (body))
static hgr_status_t fit_loop_limit(const hgr__op_ctx_t* ctx, const rnn_t* p, uint32_t gh, size_t group,
                                   uint32_t* per_launch) {
  uint64_t limit = hgr__op_loop_iteration_limit(ctx);
  if (!limit) return HGR_OK;
  uint64_t rows = (gh + group - 1) / group, units = (p->hidden + group - 1) / group;
  uint64_t per_step = LOOP(rows, LOOP((uint64_t)p->hidden, 0)) + 2 * LOOP(units, 0) + 2;
  uint64_t fixed = 2 * LOOP(units, 0) + 16; /* the state's load and store, the step loop's entry */
  if (per_step + fixed > limit)
    return HGR__OP_ERROR(ctx,
                         "hidden_size %u: one step takes %llu loop iterations per work-item, more than the device "
                         "runs before it ends them early (%llu, llvmpipe's loop limit)",
                         p->hidden, (unsigned long long)(per_step + fixed), (unsigned long long)limit);
  uint64_t steps = (limit - fixed) / per_step;
  if (steps < *per_launch) *per_launch = (uint32_t)steps;
  return HGR_OK;
}
#undef LOOP

static hgr_status_t plan_rnn(hgr__op_ctx_t* ctx) {
  rnn_t p;
  HGR_RETURN_IF_ERROR(parse_rnn(ctx, &p));
  uint32_t gh = p.cell->gates * p.hidden;
  /* R's layout, a tile choice:
   * - rows: R, the gate-row kernels, each work-item walking its row's floats;
   * - columns: R^T, the gate-row kernels: neighbouring work-items read neighbouring
   *   floats, as a GPU's coalesced loads like;
   * - rows4: R, the units4 kernels (H % 4 == 0): a work-item takes 4 units, their G
   *   gates as float8 (float4) dot products of 4 rows of R with H_{t-1} (local
   *   memory), then their cell in float4, so that a step has one barrier (GRU two);
   * - packed: as rows4 from R_P (each work-item's rows, k-major, one contiguous
   *   block), a float4 per k;
   * - columns16: R^T, the units16 kernels (H % 16 == 0): as rows4 per 16 units,
   *   each k adding a float16 of R^T's row k times H_{t-1}[k] to each gate, so that
   *   no sum runs across vector lanes.
   * Input 1 is R, or R^T with r_transposed (the importer's form for a constant R
   * of H % 16 == 0); a layout that reads the other form (or R_P) has a first launch
   * write it into the scratch, every run. The rule takes columns16 on PoCL's CPU
   * drivers (hgr__op_loops_work_items: the units4 and units16 kernels vectorize what a
   * work-item writes; rusticl's llvmpipe, a CPU that runs work-items SIMT-wise, ran
   * rows4 1.5-4.7x slower than rows) where it fits, else rows4 there where it fits, else
   * rows. Kernels alone on PoCL (a 2-core EPYC, profiling events): LSTMs of T 63,
   * H 64 (streaming) rows4 93 us, columns16 47 us; T 64, H 256 bidirectional (crnn)
   * rows4 0.90 ms, columns16 0.73 ms (1.26 ms with unpadded rows, see R_T_PAD);
   * earlier rows ran 7x and 20x slower than rows4, packed and columns lost to rows4
   * and rows (bench/notes.md, 2026-11-29). A copy (hgr_rnn_transpose_r) costs 5 us
   * and 0.17 ms there, less than columns16 gains: from R it still beat rows4
   * (hgr_bench_rnn, a run: 0.127 against 0.14 ms; 1.35 against 1.6 ms). On rusticl
   * (llvmpipe) rows4 lost to rows (1.5-4.7x), and rows from R^T (copied) ran as rows
   * on R (32.7 and 32.1 ms for the crnn's LSTM) where columns took 35-45 ms; `hgr
   * tune` recorded columns on an H200 (2.5-4.5x rows, docs/ops.md), where R^T then
   * needs no copy.
   * Local memory: H (LSTM: and C; GRU: and r H); units4's and units16's H twice
   * (H_{t-1} and H_t) and LSTM's C, GRU's r H and z. */
  uint64_t local_bytes[LAYOUT_COUNT];
  local_bytes[LAYOUT_ROWS] = local_bytes[LAYOUT_COLUMNS] =
      (uint64_t)p.hidden * sizeof(float) * (p.kind == RNN ? 1 : 2);
  local_bytes[LAYOUT_ROWS4] = local_bytes[LAYOUT_PACKED] = local_bytes[LAYOUT_COLUMNS16] =
      (uint64_t)p.hidden * sizeof(float) * (p.kind == LSTM ? 3 : p.kind == GRU ? 4 : 2);
  bool fits[LAYOUT_COUNT];
  for (int i = 0; i < LAYOUT_COUNT; ++i)
    fits[i] = local_bytes[i] <= ctx->limits.local_mem_bytes && (i < LAYOUT_ROWS4 || p.hidden % 4 == 0) &&
              (i != LAYOUT_COLUMNS16 || p.hidden % 16 == 0);
  uint32_t rule = LAYOUT_ROWS;
  if (hgr__op_loops_work_items(ctx))
    rule = fits[LAYOUT_COLUMNS16] ? LAYOUT_COLUMNS16 : fits[LAYOUT_ROWS4] ? LAYOUT_ROWS4 : LAYOUT_ROWS;
  if (!fits[rule])
    return HGR__OP_ERROR(ctx, "hidden_size %u needs %llu bytes of local memory for the state, the device has %llu",
                         p.hidden, (unsigned long long)local_bytes[rule],
                         (unsigned long long)ctx->limits.local_mem_bytes);
  char key[96];
  snprintf(key, sizeof(key), "rnn:%s:%ux%ux%u", ctx->op->name, p.directions, p.batch, p.hidden);
  uint32_t layout = hgr__op_choose_tile(ctx, key, layout_names, fits, LAYOUT_COUNT, rule);
  bool units = layout >= LAYOUT_ROWS4, transposed = layout == LAYOUT_COLUMNS || layout == LAYOUT_COLUMNS16;
  int copy = layout == LAYOUT_PACKED ? COPY_PACK : transposed != p.r_transposed ? COPY_TRANSPOSE : COPY_NONE;
  /* the row stride of the R^T the kernels read: input 1's, or a padded copy's */
  uint32_t r_stride = !transposed ? 0 : p.r_transposed ? p.r_stride : gh + R_T_PAD;
  size_t group = group_size(ctx, layout == LAYOUT_COLUMNS16 ? p.hidden / 16 : units ? p.hidden / 4 : gh);
  uint32_t per_launch = p.steps_per_launch && p.steps_per_launch < p.steps ? p.steps_per_launch : p.steps;
  HGR_RETURN_IF_ERROR(fit_loop_limit(ctx, &p, gh, group, &per_launch));
  uint64_t r_count = (uint64_t)p.directions * gh * p.hidden;
  uint64_t state_floats = (uint64_t)p.directions * p.batch * (p.kind == LSTM ? 2 : 1) * p.hidden;
  /* (the copy of R: R^T's rows of r_stride floats, or R's, R_P's count,) the gates
   * of every (direction, batch row) (not the units kernels'), then its state
   * between launches */
  uint64_t copied = !copy ? 0 : transposed ? (uint64_t)p.directions * p.hidden * r_stride : r_count;
  uint64_t scratch_floats = copied + (units ? 0 : (uint64_t)p.directions * p.batch * gh) + state_floats;
  HGR_RETURN_IF_ERROR(hgr__op_check_range(ctx, "the scratch's float count (R's copy, gates, state)", scratch_floats,
                                          INT32_MAX));
  uint64_t scratch = scratch_floats * sizeof(float);
  if (copy) {
    hgr__launch_plan_t* l = hgr__op_launch(ctx, copy == COPY_PACK ? "hgr_rnn_pack_r" : "hgr_rnn_transpose_r");
    hgr__launch_input(ctx, l, 1);
    hgr__launch_scratch(ctx, l, scratch);
    hgr__launch_uint(ctx, l, (uint32_t)r_count);
    if (copy == COPY_PACK) {
      hgr__launch_uint(ctx, l, gh);
      hgr__launch_uint(ctx, l, p.hidden);
      hgr__launch_uint(ctx, l, p.r_stride); /* 0: R */
    } else if (transposed) { /* R [D, GH, H] to R^T [D, H, r_stride] */
      hgr__launch_uint(ctx, l, gh);
      hgr__launch_uint(ctx, l, p.hidden);
      hgr__launch_uint(ctx, l, p.hidden);
      hgr__launch_uint(ctx, l, r_stride);
    } else { /* R^T [D, H, S] to R [D, GH, H] */
      hgr__launch_uint(ctx, l, p.hidden);
      hgr__launch_uint(ctx, l, gh);
      hgr__launch_uint(ctx, l, p.r_stride);
      hgr__launch_uint(ctx, l, p.hidden);
    }
    hgr__launch_1d(ctx, l, copy == COPY_PACK ? r_count : r_count / (transposed ? gh : p.hidden));
  }
  static const char* const units4_kernels[3] = {[LSTM] = "hgr_lstm_units4", [GRU] = "hgr_gru_units4",
                                                [RNN] = "hgr_rnn_units4"};
  static const char* const units16_kernels[3] = {[LSTM] = "hgr_lstm_units16", [GRU] = "hgr_gru_units16",
                                                 [RNN] = "hgr_rnn_units16"};
  const char* kernel = layout == LAYOUT_COLUMNS16 ? units16_kernels[p.kind]
                       : units                    ? units4_kernels[p.kind]
                                                  : p.cell->kernel;
  uint32_t layout_flags = (transposed ? RNN_R_COLUMNS : 0) | (layout == LAYOUT_PACKED ? RNN_R_PACKED : 0) |
                          (copy ? RNN_R_COPIED : 0);
  uint32_t first = 0;
  do {
    hgr__launch_plan_t* l = hgr__op_launch(ctx, kernel);
    hgr__launch_input(ctx, l, 0);
    hgr__launch_input(ctx, l, 1);
    /* an absent input's argument is r's buffer, which the kernel never reads for it */
    for (uint32_t k = 0; k < p.cell->optional; ++k)
      hgr__launch_input(ctx, l, p.inputs[k] < 0 ? 1 : (uint32_t)p.inputs[k]);
    for (uint32_t k = 0; k < hgr__op_output_count(ctx); ++k) hgr__launch_output(ctx, l, k);
    hgr__launch_scratch(ctx, l, scratch ? scratch : sizeof(float));
    hgr__launch_meta_arg(ctx, l);
    for (uint32_t i = 0; i < p.directions * p.cell->activations; ++i) {
      int32_t alpha, beta;
      memcpy(&alpha, &p.alpha[i], sizeof(alpha));
      memcpy(&beta, &p.beta[i], sizeof(beta));
      int32_t entry[3] = {p.code[i], alpha, beta};
      hgr__launch_meta(ctx, l, entry, 3);
    }
    hgr__launch_local(ctx, l, (size_t)local_bytes[layout]);
    hgr__launch_uint(ctx, l, p.steps);
    hgr__launch_uint(ctx, l, p.batch);
    hgr__launch_uint(ctx, l, p.directions);
    hgr__launch_uint(ctx, l, p.hidden);
    hgr__launch_uint(ctx, l, p.flags | layout_flags);
    hgr__launch_float(ctx, l, p.clip);
    hgr__launch_uint(ctx, l, first);
    hgr__launch_uint(ctx, l, per_launch);
    hgr__launch_uint(ctx, l, r_stride);
    size_t global[1] = {(size_t)p.directions * p.batch * group}, local[1] = {group};
    hgr__launch_nd(l, 1, global, local);
    first += per_launch;
  } while (first < p.steps);
  return HGR_OK;
}

#define LSTM_ATTRS                                                                                             \
  "hidden_size direction layout activations activation_alpha activation_beta clip input_forget with_bias " \
  "with_sequence_lens with_initial_h with_initial_c with_peepholes steps_per_launch r_transposed"
#define GRU_ATTRS                                                                                              \
  "hidden_size direction layout activations activation_alpha activation_beta clip linear_before_reset "    \
  "with_bias with_sequence_lens with_initial_h steps_per_launch r_transposed"
#define RNN_ATTRS                                                                                              \
  "hidden_size direction layout activations activation_alpha activation_beta clip with_bias "              \
  "with_sequence_lens with_initial_h steps_per_launch r_transposed"

const hgr__op_t hgr__ops_rnn[] = {
    {"lstm_recurrence", "rnn", 2, 7, 3, 3, LSTM_ATTRS, plan_rnn, LSTM, HGR__IN_PLACE_REFUSED, infer_rnn},
    {"gru_recurrence", "rnn", 2, 5, 2, 2, GRU_ATTRS, plan_rnn, GRU, HGR__IN_PLACE_REFUSED, infer_rnn},
    {"rnn_recurrence", "rnn", 2, 5, 2, 2, RNN_ATTRS, plan_rnn, RNN, HGR__IN_PLACE_REFUSED, infer_rnn},
    {.name = NULL},
};
