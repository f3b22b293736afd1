/* hgr_bench_rnn: the recurrence of ONNX's LSTM, GRU and RNN (runtime/ops/ops_rnn.c,
 * kernels/rnn.cl) run as one launch for the whole sequence against one launch per
 * step (the op's steps_per_launch = 1: the same kernel, the state handed from launch
 * to launch through the node's scratch), through the executor on one device, the
 * two executors run alternately so both see the same machine state. Each timed run
 * is hgr_executor_run + hgr_executor_wait of the one-node graph (the input
 * projection, a dense before it in an ONNX model, is not part of it).
 *
 *   hgr_bench_rnn [DEVICE] [CELL] [T] [B] [H] [DIRECTIONS] [REPEAT] [LAYOUT] [R]
 *     defaults: pocl:0 lstm 64 4 128 1 21 rule r
 *
 * LAYOUT is how the kernels read R (the op's tile choice, runtime/ops/ops_rnn.c):
 * rule (the plan's), rows, columns, rows4, packed or columns16 (forced as the
 * tuning candidate). R is the form the op gets R in: r (ONNX's R) or rt (R^T with
 * rows padded by 16 floats, r_transposed: what the ONNX importer passes for a
 * constant R of a hidden size that is a multiple of 16). The rule takes columns16
 * on PoCL's CPU drivers where the hidden size is a multiple of 16, else rows4 there
 * where it is one of 4, else rows; a layout that reads the other form copies R
 * every run. Prints the median milliseconds of each form, per step, and their
 * ratio. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench_util.h"
#include "hgr/hgr.h"

#define R_T_PAD 16 /* R^T's padding per row, the ONNX importer's */

static void check(hgr_status_t status, const char* what) {
  if (!status) return;
  char* text = hgr_status_to_string(status);
  fprintf(stderr, "hgr_bench_rnn: %s: %s\n", what, text);
  free(text);
  hgr_status_free(status);
  exit(1);
}

/* The one-node graph: gates_x [T, B, D G H] and r [D, G H, H] in, Y, Y_h (, Y_c) out. */
static char* graph_json(const char* op, int outputs, long t, long b, long h, long d, long gates, int per_launch,
                        int transposed) {
  bench_text_t text = {0};
  const char* direction = d == 2 ? "bidirectional" : "forward";
  bench_text_append(&text,
                    "{\"nodes\": [{\"op\": \"null\", \"name\": \"gates_x\", \"inputs\": []}, "
                    "{\"op\": \"null\", \"name\": \"r\", \"inputs\": []}, "
                    "{\"op\": \"tvm_op\", \"name\": \"recurrence\", \"attrs\": {\"func_name\": \"%s\", "
                    "\"num_inputs\": \"2\", \"num_outputs\": \"%d\", \"flatten_data\": \"0\", \"hidden_size\": "
                    "\"%ld\", \"direction\": \"%s\", \"steps_per_launch\": \"%d\", \"r_transposed\": \"%d\"}, "
                    "\"inputs\": [[0, 0, 0], [1, 0, 0]]}], \"arg_nodes\": [0, 1], \"node_row_ptr\": [0, 1, 2, %d], "
                    "\"heads\": [",
                    op, outputs, h, direction, per_launch, transposed, 2 + outputs);
  for (int k = 0; k < outputs; ++k) bench_text_append(&text, "%s[2, %d, 0]", k ? ", " : "", k);
  bench_text_append(&text, "], \"attrs\": {\"storage_id\": [\"list_int\", [");
  for (int k = 0; k < 2 + outputs; ++k) bench_text_append(&text, "%s%d", k ? ", " : "", k);
  bench_text_append(&text, "]], \"shape\": [\"list_shape\", [[%ld, %ld, %ld], [%ld, %ld, %ld], [%ld, %ld, %ld, %ld]",
                    t, b, d * gates * h, d, transposed ? h : gates * h, transposed ? gates * h + R_T_PAD : h, t, d, b,
                    h);
  for (int k = 1; k < outputs; ++k) bench_text_append(&text, ", [%ld, %ld, %ld]", d, b, h);
  bench_text_append(&text, "]], \"dltype\": [\"list_str\", [");
  for (int k = 0; k < 2 + outputs; ++k) bench_text_append(&text, "%s\"float32\"", k ? ", " : "");
  bench_text_append(&text, "]]}}");
  return text.data;
}

typedef struct form_t {
  hgr_graph_t* graph;
  hgr_executor_t* executor;
  double* ms;
} form_t;

static void form_open(hgr_instance_t* instance, const char* device, const char* json, int candidate,
                      const float* gates_x, size_t gates_bytes, const float* r, size_t r_bytes, int repeat,
                      form_t* form) {
  check(hgr_graph_load_json(json, strlen(json), &form->graph), "the graph");
  hgr_device_binding_t binding = {0, device};
  hgr_executor_options_t options;
  hgr_executor_options_init(&options);
  options.bindings = &binding;
  options.binding_count = 1;
  if (candidate >= 0) {
    options.tuning = HGR_TUNING_CANDIDATE;
    options.tuning_candidate = (uint32_t)candidate;
  }
  check(hgr_executor_create(instance, form->graph, &options, &form->executor), "the executor");
  check(hgr_executor_set_input(form->executor, 0, gates_x, gates_bytes), "input gates_x");
  check(hgr_executor_set_input(form->executor, 1, r, r_bytes), "input r");
  form->ms = calloc((size_t)repeat, sizeof(double));
  if (!form->ms) exit(1);
}

static double form_run(form_t* form) {
  double start = bench_now_ns();
  check(hgr_executor_run(form->executor), "a run");
  check(hgr_executor_wait(form->executor), "a wait");
  return (bench_now_ns() - start) / 1e6;
}

int main(int argc, char** argv) {
  const char* device = argc > 1 ? argv[1] : "pocl:0";
  const char* cell = argc > 2 ? argv[2] : "lstm";
  long t = argc > 3 ? atol(argv[3]) : 64, b = argc > 4 ? atol(argv[4]) : 4, h = argc > 5 ? atol(argv[5]) : 128;
  long d = argc > 6 ? atol(argv[6]) : 1;
  int repeat = argc > 7 ? atoi(argv[7]) : 21;
  const char* layout = argc > 8 ? argv[8] : "rule";
  const char* form = argc > 9 ? argv[9] : "r";
  /* the candidates' order */
  static const char* const layouts[5] = {"rows", "columns", "rows4", "packed", "columns16"};
  int candidate = -1;
  for (int i = 0; i < 5; ++i)
    if (!strcmp(layout, layouts[i])) candidate = i;
  int transposed = !strcmp(form, "rt");
  long gates = !strcmp(cell, "lstm") ? 4 : !strcmp(cell, "gru") ? 3 : 1;
  int outputs = gates == 4 ? 3 : 2;
  char op[32];
  snprintf(op, sizeof(op), "%s_recurrence", cell);
  if (t < 1 || b < 1 || h < 1 || (d != 1 && d != 2) || repeat < 1 ||
      (strcmp(cell, "lstm") && strcmp(cell, "gru") && strcmp(cell, "rnn")) ||
      (candidate < 0 && strcmp(layout, "rule")) || (!transposed && strcmp(form, "r"))) {
    fprintf(stderr, "usage: hgr_bench_rnn [DEVICE] [lstm|gru|rnn] [T] [B] [H] [1|2] [REPEAT] "
                    "[rule|rows|columns|rows4|packed|columns16] [r|rt]\n");
    return 2;
  }
  size_t gates_count = (size_t)(t * b * d * gates * h);
  size_t r_count = (size_t)(d * h * (transposed ? gates * h + R_T_PAD : gates * h));
  float* gates_x = malloc(gates_count * sizeof(float));
  float* r = malloc(r_count * sizeof(float));
  if (!gates_x || !r) return 1;
  uint64_t seed = 12345;
  for (size_t i = 0; i < gates_count; ++i) {
    seed = seed * 6364136223846793005ull + 1442695040888963407ull;
    gates_x[i] = (float)((double)(seed >> 40) / (double)(1ull << 24) * 2 - 1);
  }
  for (size_t i = 0; i < r_count; ++i) { /* R or R^T alike: random values */
    seed = seed * 6364136223846793005ull + 1442695040888963407ull;
    r[i] = (float)(((double)(seed >> 40) / (double)(1ull << 24) * 2 - 1) * 0.5 / (double)h);
  }
  hgr_instance_t* instance;
  check(hgr_instance_create(NULL, &instance), "the instance");
  form_t forms[2];
  for (int f = 0; f < 2; ++f) {
    char* json = graph_json(op, outputs, t, b, h, d, gates, f, transposed); /* steps_per_launch 0 (all), 1 */
    form_open(instance, device, json, candidate, gates_x, gates_count * sizeof(float), r, r_count * sizeof(float),
              repeat, &forms[f]);
    free(json);
    form_run(&forms[f]); /* the first run compiles what warm-up left */
  }
  for (int i = 0; i < repeat; ++i)
    for (int f = 0; f < 2; ++f) forms[f].ms[i] = form_run(&forms[f]);
  double one = bench_median(forms[0].ms, (size_t)repeat), per_step = bench_median(forms[1].ms, (size_t)repeat);
  printf("%s on %s, T %ld, B %ld, H %ld, %ld direction%s, R layout %s (R given as %s), median of %d runs:\n", op,
         device, t, b, h, d, d == 2 ? "s" : "", layout, transposed ? "R^T" : "R", repeat);
  printf("  one launch for the sequence: %8.3f ms (%.4f ms per step)\n", one, one / (double)t);
  printf("  one launch per step:         %8.3f ms (%.4f ms per step)\n", per_step, per_step / (double)t);
  printf("  per-step / one launch:       %8.2fx\n", per_step / one);
  for (int f = 0; f < 2; ++f) {
    hgr_executor_release(forms[f].executor);
    hgr_graph_release(forms[f].graph);
    free(forms[f].ms);
  }
  hgr_instance_release(instance);
  free(gates_x);
  free(r);
  return 0;
}
