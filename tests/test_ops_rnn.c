/* lstm_recurrence, gru_recurrence and rnn_recurrence (runtime/ops/ops_rnn.c,
 * kernels/rnn.cl) against the references in tests/ref_rnn.c on random data
 * (argument: a device spec). The op takes the input projection X W^T + Wb, which
 * the test computes on the host (hgr_ref_rnn_gates_x) as the ONNX importer's dense
 * does on the device; the expected outputs are the reference's LSTM, GRU or RNN of
 * X, W, R and the optional inputs.
 *
 * Cases: every direction x layout x sequence_lens present or not, for each cell,
 * with the other options drawn at random (Rb, initial_h, initial_c, peepholes,
 * clip, input_forget, linear_before_reset, the activation lists with alpha and
 * beta, steps_per_launch, R given as R^T with padded rows (r_transposed, as the
 * ONNX importer passes a constant R), R's layout (the tile candidates rows,
 * columns, rows4, packed, columns16) cycled; every activation in every position;
 * lengths of 0 and of T with both directions; work-groups smaller than the hidden
 * units (and than their tiles of 4 and 16).
 *
 * Tolerance: rtol 1e-4, atol 2e-5. Each gate is a float32 sum of I + H + 2 products
 * (a few u = 2^-24 relative to the sum of their magnitudes, here under 8), then the
 * cell's float32 activations (a few ulp each); the state carries these errors into
 * the next step, where the weights (|R| <= 0.5 / sqrt(H) per element) and the
 * squashing activations shrink them, and the non-squashing ones (Relu, Affine,
 * Elu, ...) grow them at most by their slope (<= 1.5) over T <= 6 steps: a few
 * 1e-6 absolute at worst, against the reference's double. */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ops.h"
#include "optest.h"
#include "ref_rnn.h"

static const char* const cell_ops[3] = {"lstm_recurrence", "gru_recurrence", "rnn_recurrence"};
static const char* const direction_names[3] = {"forward", "reverse", "bidirectional"};

typedef struct rnn_case_t {
  hgr_ref_cell_t cell;
  int64_t steps, batch, input_size, hidden;
  int direction; /* index into directions */
  bool batch_first;
  bool bias, lens, initial_h, initial_c, peepholes;
  bool clip;
  double clip_value;
  bool input_forget, linear_before_reset;
  int activation_count; /* 0: the defaults (no attr) */
  hgr_ref_activation_t activations[6];
  int alpha_count, beta_count;
  double alphas[6], betas[6];
  int steps_per_launch;
  const int32_t* fixed_lens; /* NULL: random lengths in [0, T] */
  int layout;                /* the tile candidate (layout_names) */
  bool r_transposed;         /* r as R^T [D, H, G H + r_pad], the padding NaN (never read) */
  int r_pad;
} rnn_case_t;

/* runtime/ops/ops_rnn.c's tile candidates, in their order: rows4 and packed fit a
 * hidden size that is a multiple of 4, columns16 one of 16 (else the rule's runs). */
enum { ROWS, COLUMNS, ROWS4, PACKED, COLUMNS16, LAYOUTS };
static const char* const layout_names[LAYOUTS] = {"rows", "columns", "rows4", "packed", "columns16"};

/* The hidden size rounded up to what the layout takes. */
static int64_t fit_hidden(int layout, int64_t hidden) {
  int64_t multiple = layout == COLUMNS16 ? 16 : layout >= ROWS4 ? 4 : 1;
  return (hidden + multiple - 1) / multiple * multiple;
}

static void describe(const rnn_case_t* k, char* text, size_t capacity) {
  snprintf(text, capacity,
           "%s T %lld B %lld I %lld H %lld %s layout %d bias %d lens %d h0 %d c0 %d P %d clip %d (%g) forget %d "
           "lbr %d activations %d steps_per_launch %d R %s%s",
           cell_ops[k->cell], (long long)k->steps, (long long)k->batch, (long long)k->input_size,
           (long long)k->hidden, direction_names[k->direction], k->batch_first, k->bias, k->lens, k->initial_h,
           k->initial_c, k->peepholes, k->clip, k->clip_value, k->input_forget, k->linear_before_reset,
           k->activation_count, k->steps_per_launch, layout_names[k->layout],
           k->r_transposed ? " (given as R^T)" : "");
}

static void append(char* text, size_t capacity, const char* format, ...) HGR_PRINTF(3, 4);
static void append(char* text, size_t capacity, const char* format, ...) {
  size_t used = strlen(text);
  va_list args;
  va_start(args, format);
  vsnprintf(text + used, capacity - used, format, args);
  va_end(args);
}

/* The node's attrs, as the ONNX importer writes them. */
static void node_attrs(const rnn_case_t* k, char* attrs, size_t capacity) {
  attrs[0] = 0;
  append(attrs, capacity, "\"hidden_size\": \"%lld\", \"direction\": \"%s\", \"layout\": \"%d\"", (long long)k->hidden,
         direction_names[k->direction], k->batch_first);
  if (k->activation_count) {
    append(attrs, capacity, ", \"activations\": \"[");
    for (int i = 0; i < k->activation_count; ++i)
      append(attrs, capacity, "%s%s", i ? ", " : "", hgr_ref_activation_name(k->activations[i]));
    append(attrs, capacity, "]\"");
  }
  const char* keys[2] = {"activation_alpha", "activation_beta"};
  const double* lists[2] = {k->alphas, k->betas};
  int counts[2] = {k->alpha_count, k->beta_count};
  for (int l = 0; l < 2; ++l) {
    if (!counts[l]) continue;
    append(attrs, capacity, ", \"%s\": \"[", keys[l]);
    for (int i = 0; i < counts[l]; ++i) append(attrs, capacity, "%s%.9g", i ? ", " : "", lists[l][i]);
    append(attrs, capacity, "]\"");
  }
  if (k->clip) append(attrs, capacity, ", \"clip\": \"%.9g\"", k->clip_value);
  if (k->cell == HGR_REF_LSTM) append(attrs, capacity, ", \"input_forget\": \"%d\"", k->input_forget);
  if (k->cell == HGR_REF_GRU) append(attrs, capacity, ", \"linear_before_reset\": \"%d\"", k->linear_before_reset);
  append(attrs, capacity, ", \"with_bias\": \"%d\", \"with_sequence_lens\": \"%d\", \"with_initial_h\": \"%d\"",
         k->bias, k->lens, k->initial_h);
  if (k->cell == HGR_REF_LSTM)
    append(attrs, capacity, ", \"with_initial_c\": \"%d\", \"with_peepholes\": \"%d\"", k->initial_c, k->peepholes);
  if (k->steps_per_launch) append(attrs, capacity, ", \"steps_per_launch\": \"%d\"", k->steps_per_launch);
  if (k->r_transposed) append(attrs, capacity, ", \"r_transposed\": \"1\"");
}

static float* random_floats(hgr_test_rng_t* rng, int64_t count, float lo, float hi) {
  float* data = calloc((size_t)count + 1, sizeof(float));
  assert_non_null(data);
  for (int64_t i = 0; i < count; ++i) data[i] = hgr_test_rng_float(rng, lo, hi);
  return data;
}

static void check_case(const rnn_case_t* k, hgr_test_rng_t* rng) {
  int D = k->direction == 2 ? 2 : 1;
  bool lstm = k->cell == HGR_REF_LSTM, with_c = lstm && k->initial_c, with_p = lstm && k->peepholes;
  int64_t T = k->steps, B = k->batch, I = k->input_size, H = k->hidden;
  int64_t gh = hgr_ref_cell_gates(k->cell) * H;
  float w_scale = 1.0f / sqrtf((float)I), r_scale = 0.5f / sqrtf((float)H);
  float* x = random_floats(rng, T * B * I, -1, 1);
  float* w = random_floats(rng, D * gh * I, -w_scale, w_scale);
  float* r = random_floats(rng, D * gh * H, -r_scale, r_scale);
  float* b = random_floats(rng, D * 2 * gh, -0.5f, 0.5f);
  float* h0 = random_floats(rng, D * B * H, -1, 1);
  float* c0 = random_floats(rng, D * B * H, -1, 1);
  float* p = random_floats(rng, D * 3 * H, -0.5f, 0.5f);
  int32_t* lens = calloc((size_t)B + 1, sizeof(int32_t));
  assert_non_null(lens);
  for (int64_t i = 0; i < B; ++i)
    lens[i] = k->fixed_lens ? k->fixed_lens[i] : (int32_t)hgr_test_rng_below(rng, (uint32_t)T + 1);

  hgr_ref_rnn_t c = {.cell = k->cell, .steps = T, .batch = B, .input_size = I, .hidden = H, .directions = D,
                     .reverse = k->direction == 1, .batch_first = k->batch_first, .x = x, .w = w, .r = r,
                     .b = k->bias ? b : NULL, .lens = k->lens ? lens : NULL, .initial_h = k->initial_h ? h0 : NULL,
                     .initial_c = with_c ? c0 : NULL, .p = with_p ? p : NULL, .clip_on = k->clip,
                     .clip = k->clip_value, .input_forget = k->input_forget,
                     .linear_before_reset = k->linear_before_reset};
  hgr_ref_rnn_activations(&c, k->activations, k->activation_count, k->alphas, k->alpha_count, k->betas,
                          k->beta_count);

  char attrs[1024];
  node_attrs(k, attrs, sizeof(attrs));
  hgr_optest_t t;
  hgr_optest_init(&t, cell_ops[k->cell], attrs);
  int64_t gates_shape[3] = {k->batch_first ? B : T, k->batch_first ? T : B, D * gh};
  float* gates_x = hgr_optest_input(&t, "float32", 3, gates_shape);
  /* the projection's bias is Wb alone; Rb is the op's */
  c.b = NULL;
  hgr_ref_rnn_gates_x(&c, gates_x);
  if (k->bias) {
    float* wb_only = calloc((size_t)(D * 2 * gh), sizeof(float));
    assert_non_null(wb_only);
    for (int d = 0; d < D; ++d) memcpy(wb_only + d * 2 * gh, b + d * 2 * gh, (size_t)gh * sizeof(float));
    c.b = wb_only;
    hgr_ref_rnn_gates_x(&c, gates_x);
    free(wb_only);
    c.b = b;
  }
  if (k->r_transposed) {
    int64_t stride = gh + k->r_pad, rt_shape[3] = {D, H, stride};
    float* rt = hgr_optest_input(&t, "float32", 3, rt_shape);
    for (int64_t i = 0; i < D * H * stride; ++i) rt[i] = NAN;
    for (int d = 0; d < D; ++d)
      for (int64_t row = 0; row < gh; ++row)
        for (int64_t j = 0; j < H; ++j) rt[(d * H + j) * stride + row] = r[(d * gh + row) * H + j];
  } else {
    int64_t r_shape[3] = {D, gh, H};
    memcpy(hgr_optest_input(&t, "float32", 3, r_shape), r, (size_t)(D * gh * H) * sizeof(float));
  }
  if (k->bias) {
    int64_t shape[2] = {D, gh};
    float* rb = hgr_optest_input(&t, "float32", 2, shape);
    for (int d = 0; d < D; ++d) memcpy(rb + d * gh, b + d * 2 * gh + gh, (size_t)gh * sizeof(float));
  }
  if (k->lens) memcpy(hgr_optest_input(&t, "int32", 1, &B), lens, (size_t)B * sizeof(int32_t));
  int64_t state[3] = {k->batch_first ? B : D, k->batch_first ? D : B, H};
  if (k->initial_h) memcpy(hgr_optest_input(&t, "float32", 3, state), h0, (size_t)(D * B * H) * sizeof(float));
  if (with_c) memcpy(hgr_optest_input(&t, "float32", 3, state), c0, (size_t)(D * B * H) * sizeof(float));
  if (with_p) {
    int64_t shape[2] = {D, 3 * H};
    memcpy(hgr_optest_input(&t, "float32", 2, shape), p, (size_t)(D * 3 * H) * sizeof(float));
  }
  int64_t y_shape[4] = {k->batch_first ? B : T, k->batch_first ? T : D, k->batch_first ? D : B, H};
  float* y = hgr_optest_output(&t, "float32", 4, y_shape);
  float* y_h = hgr_optest_output(&t, "float32", 3, state);
  float* y_c = k->cell == HGR_REF_LSTM ? hgr_optest_output(&t, "float32", 3, state) : NULL;
  hgr_ref_rnn(&c, y, y_h, y_c);
  hgr_optest_tolerance(&t, 1e-4, 2e-5);
  t.force_candidate = true;
  t.candidate = (uint32_t)k->layout;
  char what[512];
  describe(k, what, sizeof(what));
  print_message("%s\n", what);
  hgr_optest_check(hgr_optest_instance, hgr_optest_device, &t);
  hgr_optest_free(&t);
  free(x), free(w), free(r), free(b), free(h0), free(c0), free(p), free(lens);
}

static bool coin(hgr_test_rng_t* rng) { return hgr_test_rng_below(rng, 2) != 0; }

/* Activations for every direction with alphas and betas drawn where they are
 * taken (and, sometimes, one list short: the rest take their defaults). */
static void random_activations(rnn_case_t* k, hgr_test_rng_t* rng) {
  int per = hgr_ref_cell_activations(k->cell), D = k->direction == 2 ? 2 : 1;
  k->activation_count = per * D;
  for (int i = 0; i < k->activation_count; ++i)
    k->activations[i] = (hgr_ref_activation_t)hgr_test_rng_below(rng, HGR_REF_ACTIVATION_COUNT);
  k->alpha_count = (int)hgr_test_rng_below(rng, (uint32_t)k->activation_count + 1);
  k->beta_count = (int)hgr_test_rng_below(rng, (uint32_t)k->activation_count + 1);
  for (int i = 0; i < 6; ++i) {
    k->alphas[i] = hgr_test_rng_float(rng, 0.1f, 1.5f);
    k->betas[i] = hgr_test_rng_float(rng, -0.5f, 0.5f);
  }
}

/* Every direction x layout x sequence_lens for one cell, the rest at random. */
static void check_combinations(hgr_ref_cell_t cell, uint64_t seed) {
  bool simulator = hgr_optest_is_simulator(hgr_optest_device);
  for (int direction = 0; direction < 3; ++direction)
    for (int layout = 0; layout < 2; ++layout)
      for (int lens = 0; lens < 2; ++lens) {
        hgr_test_rng_t rng; /* each case its own draws */
        hgr_test_rng_seed(&rng, seed * 100 + (uint64_t)(direction * 4 + layout * 2 + lens));
        rnn_case_t k = {.cell = cell, .direction = direction, .batch_first = layout, .lens = lens};
        k.steps = 1 + hgr_test_rng_below(&rng, simulator ? 4 : 6);
        k.batch = 1 + hgr_test_rng_below(&rng, 3);
        k.input_size = 1 + hgr_test_rng_below(&rng, 4);
        k.hidden = 1 + hgr_test_rng_below(&rng, simulator ? 5 : 9);
        k.bias = coin(&rng);
        k.initial_h = coin(&rng);
        k.initial_c = cell == HGR_REF_LSTM && coin(&rng);
        k.peepholes = cell == HGR_REF_LSTM && coin(&rng);
        k.clip = coin(&rng);
        k.clip_value = hgr_test_rng_float(&rng, 0.2f, 2.0f);
        k.input_forget = cell == HGR_REF_LSTM && coin(&rng);
        k.linear_before_reset = cell == HGR_REF_GRU && coin(&rng);
        if (coin(&rng)) random_activations(&k, &rng);
        k.steps_per_launch = (int)hgr_test_rng_below(&rng, 3);
        k.layout = (direction * 4 + layout * 2 + lens) % LAYOUTS;
        k.hidden = fit_hidden(k.layout, k.hidden);
        k.r_transposed = coin(&rng);
        k.r_pad = (int)hgr_test_rng_below(&rng, 4);
        check_case(&k, &rng);
      }
}

static void lstm_matches_reference_over_attribute_combinations(void** state) {
  (void)state;
  check_combinations(HGR_REF_LSTM, 31);
}

static void gru_matches_reference_over_attribute_combinations(void** state) {
  (void)state;
  check_combinations(HGR_REF_GRU, 32);
}

static void rnn_matches_reference_over_attribute_combinations(void** state) {
  (void)state;
  check_combinations(HGR_REF_RNN, 33);
}

/* Every activation in every position of every cell, with alpha and beta given for
 * each one that takes them, bidirectional. */
static void every_activation_matches_reference(void** state) {
  (void)state;
  hgr_test_rng_t rng;
  hgr_test_rng_seed(&rng, 41);
  for (int cell = 0; cell < 3; ++cell)
    for (int first = 0; first < HGR_REF_ACTIVATION_COUNT; ++first) {
      rnn_case_t k = {.cell = (hgr_ref_cell_t)cell, .steps = 3, .batch = 2, .input_size = 3, .hidden = 4,
                      .direction = 2, .bias = true, .initial_h = true, .initial_c = true};
      k.activation_count = 2 * hgr_ref_cell_activations(k.cell);
      for (int i = 0; i < k.activation_count; ++i)
        k.activations[i] = (hgr_ref_activation_t)((first + 4 * i) % HGR_REF_ACTIVATION_COUNT);
      k.layout = first % LAYOUTS;
      k.hidden = fit_hidden(k.layout, k.hidden);
      k.r_transposed = first % 2;
      k.alpha_count = k.beta_count = 6;
      for (int i = 0; i < 6; ++i) {
        k.alphas[i] = hgr_test_rng_float(&rng, 0.1f, 1.5f);
        k.betas[i] = hgr_test_rng_float(&rng, -0.5f, 0.5f);
      }
      check_case(&k, &rng);
    }
}

/* Lengths of 0 and of T together, in both directions and both layouts: the reverse
 * direction starts at each row's own last step, Y is zero past it, Y_h and Y_c
 * are its state there (zeros for 0). */
static void sequence_lens_with_both_directions(void** state) {
  (void)state;
  hgr_test_rng_t rng;
  hgr_test_rng_seed(&rng, 51);
  static const int32_t lens[4] = {5, 0, 2, 1};
  for (int cell = 0; cell < 3; ++cell)
    for (int layout = 0; layout < 2; ++layout) {
      rnn_case_t k = {.cell = (hgr_ref_cell_t)cell, .steps = 5, .batch = 4, .input_size = 3, .hidden = 3,
                      .direction = 2, .batch_first = layout, .bias = true, .lens = true, .initial_h = true,
                      .initial_c = cell == HGR_REF_LSTM, .peepholes = cell == HGR_REF_LSTM,
                      .linear_before_reset = layout, .fixed_lens = lens};
      check_case(&k, &rng);
      k.steps_per_launch = 2; /* the state handed from launch to launch through the scratch */
      k.layout = 1;
      check_case(&k, &rng);
      k.hidden = 8; /* the units4 kernels, R as it is and packed */
      k.layout = 2 + layout;
      check_case(&k, &rng);
      k.steps_per_launch = 0;
      k.layout = 3 - layout;
      check_case(&k, &rng);
      k.hidden = 16; /* the units16 kernels, from R^T copied and as given */
      k.layout = COLUMNS16;
      k.r_transposed = layout;
      k.steps_per_launch = 2;
      check_case(&k, &rng);
    }
}

/* More gate rows and hidden units than work-items: each work-item takes several,
 * with the device's limits made small; and a larger hidden size on the device as
 * it is. */
static void hidden_units_beyond_the_work_group(void** state) {
  (void)state;
  hgr_test_rng_t rng;
  hgr_test_rng_seed(&rng, 61);
  hgr_device_info_t* info = hgr_optest_device_info();
  hgr_device_info_t saved = *info;
  info->max_work_group_size = 4;
  for (int d = 0; d < 3; ++d) info->max_work_item_sizes[d] = 3; /* 2 work-items per group */
  for (int cell = 0; cell < 3; ++cell) {
    rnn_case_t k = {.cell = (hgr_ref_cell_t)cell, .steps = 3, .batch = 2, .input_size = 2, .hidden = 9,
                    .direction = 2, .bias = true, .lens = true, .initial_h = true, .initial_c = true,
                    .peepholes = cell == HGR_REF_LSTM};
    for (k.layout = 0; k.layout < 2; ++k.layout) check_case(&k, &rng);
    k.hidden = 12; /* 3 tiles of 4 units on 2 work-items */
    for (k.layout = 2; k.layout < 4; ++k.layout) check_case(&k, &rng);
    k.hidden = 48; /* 3 tiles of 16 (on PoCL's CPU drivers one work-item takes them all) */
    k.layout = COLUMNS16;
    for (int transposed = 0; transposed < 2; ++transposed) {
      k.r_transposed = transposed;
      check_case(&k, &rng);
    }
  }
  *info = saved;
  bool simulator = hgr_optest_is_simulator(hgr_optest_device);
  for (int cell = 0; cell < 3; ++cell) {
    rnn_case_t k = {.cell = (hgr_ref_cell_t)cell, .steps = simulator ? 2 : 4, .batch = 2, .input_size = 5,
                    .hidden = simulator ? 33 : 70, .direction = 0, .bias = true, .initial_h = true};
    for (k.layout = 0; k.layout < 2; ++k.layout) check_case(&k, &rng);
    k.hidden = simulator ? 36 : 72;
    for (k.layout = 2; k.layout < 4; ++k.layout) check_case(&k, &rng);
    k.hidden = simulator ? 32 : 80;
    k.layout = COLUMNS16;
    k.r_transposed = true;
    k.r_pad = 3;
    check_case(&k, &rng);
  }
}

/* llvmpipe ends a work-item's loops past 65535 iterations in all: there the plan runs
 * a sequence in blocks of the steps that fit (31 of an LSTM of 128 units with groups
 * of 32, as rusticl's), and refuses a hidden size one step of which does not fit. An
 * LSTM, a GRU and an RNN over more steps than one launch there takes, on any device. */
static void long_sequences_in_blocks_under_a_loop_limit(void** state) {
  (void)state;
  hgr__tuning_t llvmpipe = {NULL, "rusticl|llvmpipe (LLVM 15.0.6, 256 bits)|OpenCL 3.0|23.2.1", HGR_TUNING_OFF, 0};
  hgr__limits_t limits = {32, {32, 32, 32}, 32 * 1024, 0};
  static const struct {
    int64_t steps, hidden;
    uint32_t launches; /* 0: refused */
  } plans[] = {{31, 128, 1}, {40, 128, 2}, {100, 128, 4}, {40, 1024, 0}};
  for (size_t i = 0; i < sizeof(plans) / sizeof(plans[0]); ++i) {
    hgr_optest_t t;
    hgr_optest_init(&t, "lstm_recurrence", NULL);
    int64_t hidden = plans[i].hidden;
    hgr_optest_input(&t, "float32", 3, (int64_t[]){plans[i].steps, 1, 4 * hidden});
    hgr_optest_input(&t, "float32", 3, (int64_t[]){1, 4 * hidden, hidden});
    hgr_optest_output(&t, "float32", 4, (int64_t[]){plans[i].steps, 1, 1, hidden});
    hgr_optest_output(&t, "float32", 3, (int64_t[]){1, 1, hidden});
    hgr_optest_output(&t, "float32", 3, (int64_t[]){1, 1, hidden});
    if (!plans[i].launches) {
      char* json = hgr_optest_graph_json(&t);
      hgr_graph_t* graph = NULL;
      ASSERT_OK(hgr_graph_load_json(json, strlen(json), &graph));
      free(json);
      hgr__op_ctx_t ctx;
      ASSERT_STATUS(hgr__op_plan_tuned(hgr_allocator_system(), graph, 2, NULL, &limits, &llvmpipe, &ctx),
                    HGR_STATUS_INVALID_ARGUMENT,
                    "hidden_size 1024: one step takes 131479 loop iterations per work-item, more than the device "
                    "runs before it ends them early (65535, llvmpipe's loop limit)");
      hgr_graph_release(graph);
    } else {
      hgr__op_ctx_t ctx;
      hgr_optest_plan(&t, &limits, &llvmpipe, &ctx);
      assert_int_equal(ctx.launch_count, plans[i].launches);
      hgr__op_ctx_free(&ctx);
      hgr_optest_plan(&t, &limits, NULL, &ctx); /* no limit: one launch */
      assert_int_equal(ctx.launch_count, 1);
      hgr__op_ctx_free(&ctx);
    }
    hgr_optest_free(&t);
  }
  if (hgr_optest_is_simulator(hgr_optest_device)) return;
  hgr_test_rng_t rng;
  hgr_test_rng_seed(&rng, 62);
  for (int cell = 0; cell < 3; ++cell) {
    rnn_case_t k = {.cell = (hgr_ref_cell_t)cell, .steps = 48, .batch = 1, .input_size = 3, .hidden = 128,
                    .direction = 0, .bias = true, .initial_h = true};
    check_case(&k, &rng);
  }
}

/* R's layout is a tile candidate: the rule takes the units16 kernel (columns16) on
 * PoCL's CPU drivers where the hidden size is a multiple of 16, else the units4
 * kernel (rows4) there where it is one of 4, else the gate-row kernel (rows). A
 * layout that reads another form than input 1's (R, or R^T with r_transposed)
 * copies it into the scratch first (R^T, R, R_P); a tuning record names any of them
 * by the layer's key; a candidate that does not fit (rows4 or packed at H % 4 != 0,
 * columns16 at H % 16 != 0) leaves the rule's. */
static void plan_layout(int64_t hidden, bool transposed, const hgr__tuning_t* tuning, const char* tile,
                        const char* first_kernel, uint32_t launches) {
  hgr_optest_t t;
  hgr_optest_init(&t, "gru_recurrence",
                  transposed ? "\"direction\": \"bidirectional\", \"r_transposed\": \"1\""
                             : "\"direction\": \"bidirectional\"");
  int64_t gates_shape[3] = {5, 3, 2 * 3 * hidden}, r_shape[3] = {2, 3 * hidden, hidden};
  if (transposed) r_shape[1] = hidden, r_shape[2] = 3 * hidden + 16;
  int64_t y_shape[4] = {5, 2, 3, hidden}, state_shape[3] = {2, 3, hidden};
  hgr_optest_input(&t, "float32", 3, gates_shape);
  hgr_optest_input(&t, "float32", 3, r_shape);
  hgr_optest_output(&t, "float32", 4, y_shape);
  hgr_optest_output(&t, "float32", 3, state_shape);
  hgr__limits_t limits = {256, {256, 256, 256}, 32 * 1024, 0};
  hgr__op_ctx_t ctx;
  hgr_optest_plan(&t, &limits, tuning, &ctx);
  char key[64];
  snprintf(key, sizeof(key), "rnn:gru_recurrence:2x3x%lld", (long long)hidden);
  assert_int_equal(ctx.launch_count, launches);
  assert_string_equal(ctx.launches[0].kernel, first_kernel);
  assert_string_equal(ctx.tile.key, key);
  assert_string_equal(ctx.tile.tile, tile);
  hgr__op_ctx_free(&ctx);
  hgr_optest_free(&t);
}

static void r_layout_is_a_tuning_candidate(void** state) {
  (void)state;
  static const char* const first_kernel[2][LAYOUTS] = {
      {"hgr_gru_sequence", "hgr_rnn_transpose_r", "hgr_gru_units4", "hgr_rnn_pack_r", "hgr_rnn_transpose_r"},
      {"hgr_rnn_transpose_r", "hgr_gru_sequence", "hgr_rnn_transpose_r", "hgr_rnn_pack_r", "hgr_gru_units16"}};
  static const uint32_t launches[2][LAYOUTS] = {{1, 2, 1, 2, 2}, {2, 1, 2, 2, 1}};
  for (int transposed = 0; transposed < 2; ++transposed)
    for (uint32_t i = 0; i < LAYOUTS; ++i) {
      hgr__tuning_t tuning = {NULL, NULL, HGR_TUNING_CANDIDATE, i};
      plan_layout(16, transposed, &tuning, layout_names[i], first_kernel[transposed][i], launches[transposed][i]);
    }
  plan_layout(4, false, NULL, "rows", "hgr_gru_sequence", 1); /* a device the rule does not know */
  plan_layout(16, true, NULL, "rows", "hgr_rnn_transpose_r", 2);
  static const char* const devices[4] = {"Portable Computing Language|pthread-skylake-avx512-AMD EPYC|OpenCL 3.0 "
                                         "PoCL 3.1|3.1", "Portable Computing Language|cpu-haswell|3.0|5.0",
                                         "rusticl|llvmpipe (LLVM 15.0.6, 256 bits)|OpenCL 3.0|23.2.1",
                                         "NVIDIA CUDA|NVIDIA H200|OpenCL 3.0 CUDA|560.35"};
  for (int i = 0; i < 4; ++i) {
    hgr__tuning_t rule = {NULL, devices[i], HGR_TUNING_OFF, 0};
    bool pocl = i < 2;
    plan_layout(4, false, &rule, pocl ? "rows4" : "rows", pocl ? "hgr_gru_units4" : "hgr_gru_sequence", 1);
    plan_layout(6, false, &rule, "rows", "hgr_gru_sequence", 1);
    plan_layout(16, true, &rule, pocl ? "columns16" : "rows", pocl ? "hgr_gru_units16" : "hgr_rnn_transpose_r",
                pocl ? 1 : 2);
    plan_layout(16, false, &rule, pocl ? "columns16" : "rows", pocl ? "hgr_rnn_transpose_r" : "hgr_gru_sequence",
                pocl ? 2 : 1);
    plan_layout(12, true, &rule, pocl ? "rows4" : "rows", "hgr_rnn_transpose_r", 2);
  }
  hgr__tuning_t packed = {NULL, devices[0], HGR_TUNING_CANDIDATE, PACKED};
  plan_layout(6, false, &packed, "rows", "hgr_gru_sequence", 1);
  hgr__tuning_t units16 = {NULL, devices[0], HGR_TUNING_CANDIDATE, COLUMNS16};
  plan_layout(8, false, &units16, "rows4", "hgr_gru_units4", 1);
  hgr__tune_record_t record = {"dev", "rnn:gru_recurrence:2x3x4", "columns", 1.0};
  hgr__tune_table_t table = {&record, 1, 1};
  hgr__tuning_t file = {&table, "dev", HGR_TUNING_FILE, 0};
  plan_layout(4, false, &file, "columns", "hgr_rnn_transpose_r", 2);
}

/* A minimal node for the refusals: LSTM forward, T 2, B 1, H 2, gates_x and r. */
static void minimal_node(hgr_optest_t* t, const char* op, int gates, const char* attrs, int directions) {
  hgr_optest_init(t, op, attrs);
  int64_t gates_shape[3] = {2, 1, directions * gates * 2}, r_shape[3] = {directions, gates * 2, 2};
  hgr_optest_input(t, "float32", 3, gates_shape);
  hgr_optest_input(t, "float32", 3, r_shape);
  int64_t y_shape[4] = {2, directions, 1, 2}, state_shape[3] = {directions, 1, 2};
  hgr_optest_output(t, "float32", 4, y_shape);
  hgr_optest_output(t, "float32", 3, state_shape);
  if (gates == 4) hgr_optest_output(t, "float32", 3, state_shape);
}

static void expect_refusal(const char* op, int gates, const char* attrs, int directions, const char* message) {
  hgr_optest_t t;
  minimal_node(&t, op, gates, attrs, directions);
  ASSERT_STATUS(hgr_optest_create(hgr_optest_instance, hgr_optest_device, &t), HGR_STATUS_INVALID_ARGUMENT, message);
  hgr_optest_free(&t);
}

static void bad_attrs_and_inputs_are_named(void** state) {
  (void)state;
  expect_refusal("lstm_recurrence", 4, "\"activations\": \"[Sigmoid, Tanhh, Tanh]\"", 1,
                 "(lstm_recurrence): attr 'activations' = \"[Sigmoid, Tanhh, Tanh]\": 'Tanhh' is not an activation "
                 "hgr knows");
  expect_refusal("lstm_recurrence", 4, "\"activations\": \"[Sigmoid, Tanh, Tanh]\", \"direction\": \"bidirectional\"",
                 2, "attr 'activations' = \"[Sigmoid, Tanh, Tanh]\" has 3 names; the op takes 6 (one per activation "
                    "and direction)");
  expect_refusal("gru_recurrence", 3, "\"activations\": \"[Sigmoid; Tanh]\"", 1,
                 "attr 'activations' = \"[Sigmoid; Tanh]\" is not a list of activation names (at ';')");
  expect_refusal("rnn_recurrence", 1, "\"clip\": \"0\"", 1, "(rnn_recurrence): attr 'clip' = 0 must be greater than 0");
  expect_refusal("rnn_recurrence", 1, "\"activation_alpha\": \"[0.5, x]\"", 1,
                 "attr 'activation_alpha' = \"[0.5, x]\" is not a number or a list of numbers");
  expect_refusal("lstm_recurrence", 4, "\"hidden_size\": \"3\"", 1,
                 "attr 'hidden_size' = 3, but input 1 'r' has 2 hidden units");
  expect_refusal("lstm_recurrence", 4, "\"layout\": \"2\"", 1,
                 "attr 'layout' = 2 is not supported; hgr takes 0 (time first) or 1 (batch first)");
  expect_refusal("gru_recurrence", 3, "\"direction\": \"sideways\"", 1,
                 "attr 'direction' = \"sideways\" is not supported; hgr takes \"forward\" or \"reverse\" or "
                 "\"bidirectional\"");
  expect_refusal("lstm_recurrence", 4, "\"with_bias\": \"1\"", 1,
                 "takes 2 inputs (gates_x, r) and one per with_* attr set (1), the node has 2");
  expect_refusal("gru_recurrence", 3, "\"with_peepholes\": \"1\"", 1,
                 "(gru_recurrence): unknown attr 'with_peepholes'");
  expect_refusal("lstm_recurrence", 4, "", 2, "input 1 'r' is shaped [2, 8, 2]; it must be [1, 4 * hidden_size, "
                                              "hidden_size] (forward)");
  expect_refusal("lstm_recurrence", 4, "\"r_transposed\": \"1\"", 1,
                 "input 1 'r' (r_transposed) is shaped [1, 8, 2]; it must be [1, hidden_size, S] with S >= 4 * "
                 "hidden_size (forward)");
  /* a gates_x of the wrong width */
  hgr_optest_t t;
  minimal_node(&t, "rnn_recurrence", 1, "", 1);
  t.inputs[0].shape[2] = 3;
  ASSERT_STATUS(hgr_optest_create(hgr_optest_instance, hgr_optest_device, &t), HGR_STATUS_INVALID_ARGUMENT,
                "input 0 'gates_x' is shaped [2, 1, 3]; it must be [steps, batch, 2]");
  hgr_optest_free(&t);
  /* Y_h's shape follows the layout: [B, D, H] batch first */
  minimal_node(&t, "rnn_recurrence", 1, "\"layout\": \"1\"", 1);
  ASSERT_STATUS(hgr_optest_create(hgr_optest_instance, hgr_optest_device, &t), HGR_STATUS_INVALID_ARGUMENT,
                "output 1 (entry 3) should be shaped [2, 1, 2]");
  hgr_optest_free(&t);
}

int main(int argc, char** argv) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(lstm_matches_reference_over_attribute_combinations),
      cmocka_unit_test(gru_matches_reference_over_attribute_combinations),
      cmocka_unit_test(rnn_matches_reference_over_attribute_combinations),
      cmocka_unit_test(every_activation_matches_reference),
      cmocka_unit_test(sequence_lens_with_both_directions),
      cmocka_unit_test(hidden_units_beyond_the_work_group),
      cmocka_unit_test(r_layout_is_a_tuning_candidate),
      cmocka_unit_test(long_sequences_in_blocks_under_a_loop_limit),
      cmocka_unit_test(bad_attrs_and_inputs_are_named),
  };
  return hgr_optest_main(argc, argv, "ops_rnn", tests, sizeof(tests) / sizeof(tests[0]));
}
