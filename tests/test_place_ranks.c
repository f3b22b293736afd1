/* Placement across ranks (hgr/place.h, docs/placement.md "Across ranks"): device
 * specs with a rank prefix ("r1/pocl:0") over one process, since placement needs no
 * MPI: every rank computes the same placement from the same inputs. The ranks'
 * devices are all the local pocl:0 (calibrated once, in a temporary cost cache).
 * stages:2 and stages:3 give contiguous stages on ranks 0, 1, 2 with cross-host
 * copies between them and rank-prefixed recorded bindings; a rank-1 rule with FIRST;
 * rank 0 reads the data inputs (a copy to rank 1) while a weight named in the params
 * stays with its rank-1 consumer; an output produced on rank 1 is copied to rank 0;
 * the same (rank, device) twice and devices without rank 0 are rejected; AUTO keeps
 * everything on rank 0 when a cross-host copy is dear and splits branches across
 * ranks when it is cheap. A rank's own measure (hgr_place_measure_rank) places as
 * its local namesake does, lets a device only that rank has be placed (a GPU of
 * rank 1's, made from the measure of pocl:0), and is refused when it does not fit.
 * Skipped without PoCL.
 *
 *   test_place_ranks */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "json.h"
#include "place_internal.h"
#include "testlib.h"

static hgr_instance_t* instance;
static const hgr_dtype_t F32 = {HGR_DTYPE_FLOAT, 32, 1};

/* ---- the graph ------------------------------------------------------------------------ *
 * Builder node ids (what range rules count):
 *   0 x (input)   1 y (input)   2 w (constant: a weight)
 *   3 n0 = relu(x)   4 n1 = negative(n0)   5 n2 = abs(n1)
 *   6 n3 = add(n2, y)   7 n4 = multiply(n3, w)   8 n5 = relu(n4)   output: n5 */
enum { X = 0, Y = 1, W = 2, N0 = 3, N5 = 8, CHAIN_NODES = 9 };

static hgr_graph_t* chain(hgr_params_t** out_params) {
  hgr_builder_t* b = NULL;
  ASSERT_OK(hgr_builder_create(NULL, &b));
  int64_t shape[1] = {1024};
  float weights[1024];
  for (int i = 0; i < 1024; ++i) weights[i] = 0.5f + (float)i / 1024.0f;
  hgr_value_t x, y, w, v;
  ASSERT_OK(hgr_builder_add_input(b, "x", F32, shape, 1, &x));
  ASSERT_OK(hgr_builder_add_input(b, "y", F32, shape, 1, &y));
  ASSERT_OK(hgr_builder_add_constant(b, "w", F32, shape, 1, weights, sizeof(weights), &w));
  ASSERT_OK(hgr_builder_add_op(b, "n0", "relu", &x, 1, NULL, 1, &v));
  ASSERT_OK(hgr_builder_add_op(b, "n1", "negative", &v, 1, NULL, 1, &v));
  ASSERT_OK(hgr_builder_add_op(b, "n2", "abs", &v, 1, NULL, 1, &v));
  hgr_value_t add_in[2] = {v, y};
  ASSERT_OK(hgr_builder_add_op(b, "n3", "add", add_in, 2, NULL, 1, &v));
  hgr_value_t mul_in[2] = {v, w};
  ASSERT_OK(hgr_builder_add_op(b, "n4", "multiply", mul_in, 2, NULL, 1, &v));
  ASSERT_OK(hgr_builder_add_op(b, "n5", "relu", &v, 1, NULL, 1, &v));
  ASSERT_OK(hgr_builder_mark_output(b, v));
  hgr_graph_t* graph = NULL;
  ASSERT_OK(hgr_builder_finish(b, &graph, out_params));
  hgr_builder_release(b);
  assert_int_equal(hgr_graph_node_count(graph), CHAIN_NODES);
  return graph;
}

/* Two branches of three elementwise ops on 1 Mi floats from one input, added. */
static hgr_graph_t* branches(void) {
  hgr_builder_t* b = NULL;
  ASSERT_OK(hgr_builder_create(NULL, &b));
  int64_t shape[1] = {1 << 20};
  hgr_value_t x, ends[2];
  ASSERT_OK(hgr_builder_add_input(b, "x", F32, shape, 1, &x));
  static const char* const ops[] = {"relu", "negative", "abs"};
  for (int branch = 0; branch < 2; ++branch) {
    hgr_value_t v = x;
    for (int k = 0; k < 3; ++k) {
      char name[16];
      snprintf(name, sizeof(name), "b%d_%d", branch, k);
      ASSERT_OK(hgr_builder_add_op(b, name, ops[k], &v, 1, NULL, 1, &v));
    }
    ends[branch] = v;
  }
  hgr_value_t sum;
  ASSERT_OK(hgr_builder_add_op(b, "sum", "add", ends, 2, NULL, 1, &sum));
  ASSERT_OK(hgr_builder_mark_output(b, sum));
  hgr_graph_t* graph = NULL;
  ASSERT_OK(hgr_builder_finish(b, &graph, NULL));
  hgr_builder_release(b);
  return graph;
}

/* ---- helpers ------------------------------------------------------------------------ */

/* Calibration's progress lines: how many, and how many measured a copy. */
static unsigned calibrated, calibrated_copies;

static void count_log(void* user, const char* message) {
  (void)user;
  printf("%s\n", message);
  if (strncmp(message, "calibrating ", 12)) return;
  calibrated++;
  if (strstr(message, ": copy ")) calibrated_copies++;
}

static void options_for(hgr_place_options_t* options, const char* const* devices, size_t count, const char* policy) {
  hgr_place_options_init(options);
  options->devices = devices;
  options->device_count = count;
  options->cost_cache_directory = hgr_test_tmp_path("ranks-cost-cache");
  options->log = count_log;
  if (policy) ASSERT_OK(hgr_place_options_parse(options, policy));
}

static hgr_placement_t* place(hgr_graph_t* graph, const hgr_place_options_t* options) {
  hgr_placement_t* placement = NULL;
  ASSERT_OK(hgr_place(instance, graph, options, &placement));
  ASSERT_OK(hgr__place_verify(hgr_placement_graph(placement), options->kernels));
  return placement;
}

static int rank_of(const hgr_placement_t* placement, uint32_t source_node) {
  return hgr_test_placed_node(placement, source_node, NULL).rank;
}

/* The summary and the JSON, as text (malloc'd). */
static char* summary_of(const hgr_placement_t* placement, bool json) {
  char* text = NULL;
  size_t length = 0;
  FILE* out = open_memstream(&text, &length);
  assert_non_null(out);
  ASSERT_OK(json ? hgr_placement_write_json(placement, out) : hgr_placement_write_summary(placement, out));
  fclose(out);
  return text;
}

/* The recorded binding of key `key`, or NULL. */
static const char* binding_of(const hgr_placement_t* placement, int32_t key) {
  const hgr_graph_t* graph = hgr_placement_graph(placement);
  for (size_t i = 0; i < hgr_graph_binding_count(graph); ++i) {
    int32_t at = 0;
    const char* spec = NULL;
    ASSERT_OK(hgr_graph_binding(graph, i, &at, &spec));
    if (at == key) return spec;
  }
  return NULL;
}

/* The placed node graph output 0 reads, and its record. */
static hgr_node_placement_t output_producer(const hgr_placement_t* placement, uint32_t* out_id,
                                            hgr_node_info_t* out_info) {
  const hgr_graph_t* graph = hgr_placement_graph(placement);
  hgr_tensor_info_t output;
  ASSERT_OK(hgr_graph_output_info(graph, 0, &output));
  /* "<node name>:<i>" */
  const char* colon = strrchr(output.name, ':');
  assert_non_null(colon);
  size_t length = (size_t)(colon - output.name);
  for (uint32_t n = 0; n < hgr_graph_node_count(graph); ++n) {
    ASSERT_OK(hgr_graph_node_info(graph, n, out_info));
    if (strlen(out_info->name) == length && !strncmp(out_info->name, output.name, length)) {
      hgr_node_placement_t node;
      ASSERT_OK(hgr_placement_node(placement, n, &node));
      *out_id = n;
      return node;
    }
  }
  fail_msg("no node produces output 0 '%s'", output.name);
  hgr_node_placement_t none = {0};
  return none;
}

/* Copies whose input lives on rank `from` and which run on rank `to`. */
static uint32_t copies_between(const hgr_placement_t* placement, int from, int to) {
  const hgr_graph_t* graph = hgr_placement_graph(placement);
  uint32_t count = 0;
  for (uint32_t n = 0; n < hgr_graph_node_count(graph); ++n) {
    hgr_node_placement_t node, source;
    ASSERT_OK(hgr_placement_node(placement, n, &node));
    if (node.reason != HGR_PLACE_BY_COPY) continue;
    uint32_t input = 0, index = 0;
    ASSERT_OK(hgr_graph_node_input(graph, n, 0, &input, &index));
    ASSERT_OK(hgr_placement_node(placement, input, &source));
    if (source.rank == from && node.rank == to) count++;
  }
  return count;
}

/* ---- tests ---------------------------------------------------------------------------- */

static void stages_2_split_the_chain_over_two_ranks(void** state) {
  (void)state;
  hgr_params_t* params = NULL;
  hgr_graph_t* graph = chain(&params);
  static const char* const devices[] = {"r0/pocl:0", "r1/pocl:0"};
  hgr_place_options_t options;
  options_for(&options, devices, 2, "stages:2");
  options.params = params;
  calibrated = calibrated_copies = 0;
  hgr_placement_t* placement = place(graph, &options);
  /* Both slots are the local pocl:0: its nodes were measured once (5 signatures and
   * the launch overhead), and no copy between the ranks was measured locally. */
  assert_int_equal(calibrated, 6);
  assert_int_equal(calibrated_copies, 0);
  char* summary = summary_of(placement, false);
  printf("%s", summary);

  /* Contiguous stages, the first on rank 0, the last node on rank 1. */
  int previous = 0;
  for (uint32_t n = N0; n <= N5; ++n) {
    int rank = rank_of(placement, n);
    assert_true(rank == 0 || rank == 1);
    assert_true(rank >= previous);
    previous = rank;
  }
  assert_int_equal(rank_of(placement, N0), 0);
  assert_int_equal(rank_of(placement, N5), 1);
  /* One device, two slots: both records name pocl:0 locally. */
  size_t pocl = 0;
  ASSERT_OK(hgr_instance_find_device(instance, "pocl:0", &pocl));
  assert_int_equal(hgr_test_placed_node(placement, N0, NULL).device_index, pocl);
  assert_int_equal(hgr_test_placed_node(placement, N5, NULL).device_index, pocl);
  assert_int_equal(hgr_placement_device_count(placement), 2);
  for (size_t d = 0; d < 2; ++d) {
    hgr_placement_device_t device;
    ASSERT_OK(hgr_placement_device(placement, d, &device));
    assert_int_equal(device.device_index, pocl);
    assert_int_equal(device.rank, (int)d);
    assert_int_equal(device.key, (int32_t)d + 1);
  }
  /* The cut crosses once forward; the output comes back to rank 0. */
  assert_true(copies_between(placement, 0, 1) >= 1);
  assert_string_equal(binding_of(placement, 1), "r0/pocl:0");
  assert_string_equal(binding_of(placement, 2), "r1/pocl:0");
  assert_int_equal(hgr_graph_binding_count(hgr_placement_graph(placement)), 2);
  uint32_t copies = copies_between(placement, 0, 1) + copies_between(placement, 1, 0);
  char expected[64];
  snprintf(expected, sizeof(expected), "cross-host %u", copies);
  assert_non_null(strstr(summary, expected));
  assert_non_null(strstr(summary, "r1/pocl:0 (key 2)"));
  char* json = summary_of(placement, true);
  snprintf(expected, sizeof(expected), "\"cross-host\":\t%u", copies);
  assert_non_null(strstr(json, expected));
  assert_non_null(strstr(json, "\"device\":\t\"r1/pocl:0\""));
  free(json);
  free(summary);
  hgr_placement_release(placement);
  hgr_params_release(params);
  hgr_graph_release(graph);
}

static void stages_3_give_ranks_0_1_2_in_order(void** state) {
  (void)state;
  hgr_params_t* params = NULL;
  hgr_graph_t* graph = chain(&params);
  static const char* const devices[] = {"r0/pocl:0", "r1/pocl:0", "r2/pocl:0"};
  hgr_place_options_t options;
  options_for(&options, devices, 3, "stages:3");
  options.params = params;
  hgr_placement_t* placement = place(graph, &options);
  bool seen[3] = {false, false, false};
  int previous = 0;
  for (uint32_t n = N0; n <= N5; ++n) {
    int rank = rank_of(placement, n);
    assert_true(rank >= previous && rank <= 2);
    seen[rank] = true;
    previous = rank;
  }
  assert_true(seen[0] && seen[1] && seen[2]);
  assert_true(copies_between(placement, 0, 1) >= 1);
  assert_true(copies_between(placement, 1, 2) >= 1);
  assert_int_equal(copies_between(placement, 2, 0), 1); /* the output */
  assert_string_equal(binding_of(placement, 3), "r2/pocl:0");
  hgr_placement_release(placement);
  hgr_params_release(params);
  hgr_graph_release(graph);
}

/* range:5-6=r1/pocl:0 with FIRST over r0/pocl:0: n2 and n3 on rank 1, the rest on
 * rank 0; y, first read by n3 on rank 1, is still read on rank 0 and copied. */
static void rank_1_rule_and_data_input_read_on_rank_0(void** state) {
  (void)state;
  hgr_params_t* params = NULL;
  hgr_graph_t* graph = chain(&params);
  static const char* const devices[] = {"r0/pocl:0"};
  hgr_place_options_t options;
  options_for(&options, devices, 1, "first");
  ASSERT_OK(hgr_place_options_parse(&options, "range:5-6=r1/pocl:0"));
  options.params = params;
  hgr_placement_t* placement = place(graph, &options);
  for (uint32_t n = N0; n <= N5; ++n) {
    hgr_node_placement_t node = hgr_test_placed_node(placement, n, NULL);
    assert_int_equal(node.rank, n == 5 || n == 6 ? 1 : 0);
    assert_int_equal(node.reason, n == 5 || n == 6 ? HGR_PLACE_BY_RULE : HGR_PLACE_BY_POLICY);
  }
  assert_int_equal(rank_of(placement, X), 0);
  assert_int_equal(rank_of(placement, Y), 0);
  /* y goes to rank 1 through a copy that n3 reads */
  uint32_t y_id = 0, n3_id = 0;
  hgr_test_placed_node(placement, Y, &y_id);
  hgr_test_placed_node(placement, 6, &n3_id);
  const hgr_graph_t* placed = hgr_placement_graph(placement);
  uint32_t input = 0, index = 0;
  ASSERT_OK(hgr_graph_node_input(placed, n3_id, 1, &input, &index));
  hgr_node_placement_t copy;
  ASSERT_OK(hgr_placement_node(placement, input, &copy));
  assert_int_equal(copy.reason, HGR_PLACE_BY_COPY);
  assert_int_equal(copy.rank, 1);
  ASSERT_OK(hgr_graph_node_input(placed, input, 0, &input, &index));
  assert_int_equal(input, y_id);
  /* n1 -> n2 and y go to rank 1, n3 comes back */
  assert_int_equal(copies_between(placement, 0, 1), 2);
  assert_int_equal(copies_between(placement, 1, 0), 1);
  assert_string_equal(binding_of(placement, 2), "r1/pocl:0");
  hgr_placement_release(placement);
  hgr_params_release(params);
  hgr_graph_release(graph);
}

/* range:7-8=r1/pocl:0: w (a weight, in the params) stays with n4 on rank 1; without
 * the params it is a data input, read on rank 0 and copied. n5, the output, is
 * produced on rank 1 and copied to rank 0, where the graph's output reads it. */
static void weight_stays_on_rank_1_and_output_comes_to_rank_0(void** state) {
  (void)state;
  hgr_params_t* params = NULL;
  hgr_graph_t* graph = chain(&params);
  static const char* const devices[] = {"r0/pocl:0", "r1/pocl:0"};
  for (int with_params = 1; with_params >= 0; --with_params) {
    hgr_place_options_t options;
    options_for(&options, devices, 2, "first");
    ASSERT_OK(hgr_place_options_parse(&options, "range:7-8=r1/pocl:0"));
    options.params = with_params ? params : NULL;
    hgr_placement_t* placement = place(graph, &options);
    assert_int_equal(rank_of(placement, W), with_params ? 1 : 0);
    assert_int_equal(rank_of(placement, 7), 1);
    assert_int_equal(rank_of(placement, N5), 1);
    /* n3 -> rank 1, n5 -> rank 0, and w -> rank 1 when it is not a weight */
    assert_int_equal(copies_between(placement, 0, 1), with_params ? 1 : 2);
    assert_int_equal(copies_between(placement, 1, 0), 1);
    uint32_t output_id = 0, n5_id = 0, input = 0, index = 0;
    hgr_node_info_t info;
    hgr_node_placement_t output = output_producer(placement, &output_id, &info);
    assert_int_equal(output.reason, HGR_PLACE_BY_COPY);
    assert_int_equal(output.rank, 0);
    assert_string_equal(info.func_name, "__copy");
    hgr_test_placed_node(placement, N5, &n5_id);
    ASSERT_OK(hgr_graph_node_input(hgr_placement_graph(placement), output_id, 0, &input, &index));
    assert_int_equal(input, n5_id);
    hgr_placement_release(placement);
  }
  hgr_params_release(params);
  hgr_graph_release(graph);
}

static void same_rank_and_device_twice_is_rejected(void** state) {
  (void)state;
  hgr_graph_t* graph = chain(NULL);
  hgr_placement_t* placement = NULL;
  hgr_place_options_t options;
  static const char* const twice[] = {"r0/pocl:0", "r1/pocl:0", "r1/pocl:0"};
  options_for(&options, twice, 3, NULL);
  ASSERT_STATUS(hgr_place(instance, graph, &options, &placement), HGR_STATUS_INVALID_ARGUMENT,
                "placement devices 2 and 3", "same device", "rank 1");
  assert_null(placement);
  /* Without a prefix a spec is rank 0's when compared with prefixed ones. */
  static const char* const unprefixed[] = {"pocl:0", "r1/pocl:0", "r0/pocl:0"};
  options_for(&options, unprefixed, 3, NULL);
  ASSERT_STATUS(hgr_place(instance, graph, &options, &placement), HGR_STATUS_INVALID_ARGUMENT,
                "placement devices 1 and 3", "same device", "rank 0");
  /* ... and counts as r0 in the recorded bindings. */
  options_for(&options, unprefixed, 2, "stages:2");
  placement = place(graph, &options);
  assert_string_equal(binding_of(placement, 1), "r0/pocl:0");
  assert_int_equal(rank_of(placement, N0), 0);
  hgr_placement_release(placement);
  placement = NULL;
  static const char* const malformed[] = {"r1x/pocl:0"};
  options_for(&options, malformed, 1, NULL);
  ASSERT_STATUS(hgr_place(instance, graph, &options, &placement), HGR_STATUS_INVALID_ARGUMENT, "r1x/pocl:0",
                "malformed rank prefix");
  hgr_graph_release(graph);
}

static void ranks_without_rank_0_are_rejected(void** state) {
  (void)state;
  hgr_graph_t* graph = chain(NULL);
  hgr_placement_t* placement = NULL;
  hgr_place_options_t options;
  static const char* const devices[] = {"r1/pocl:0", "r2/pocl:0"};
  options_for(&options, devices, 2, NULL);
  ASSERT_STATUS(hgr_place(instance, graph, &options, &placement), HGR_STATUS_INVALID_ARGUMENT,
                "a placement across ranks needs a device of rank 0 (r0/...) for the graph's inputs and outputs",
                "r1/pocl:0, r2/pocl:0");
  assert_null(placement);
  options_for(&options, devices, 2, NULL);
  options.cross_host_latency_ms = -1.0;
  ASSERT_STATUS(hgr_place(instance, graph, &options, &placement), HGR_STATUS_INVALID_ARGUMENT, "cross-host");
  hgr_graph_release(graph);
}

/* A placement on one rank without prefixes is what it was before ranks: rank -1,
 * canonical specs, no cross-host copies. */
static void one_rank_without_prefixes_is_unchanged(void** state) {
  (void)state;
  hgr_params_t* params = NULL;
  hgr_graph_t* graph = chain(&params);
  static const char* const devices[] = {"pocl:0"};
  hgr_place_options_t options;
  options_for(&options, devices, 1, "first");
  options.params = params;
  hgr_placement_t* placement = place(graph, &options);
  assert_int_equal(rank_of(placement, N0), -1);
  assert_string_equal(binding_of(placement, 1), "pocl:0");
  char* json = summary_of(placement, true);
  assert_non_null(strstr(json, "\"cross-host\":\t0"));
  free(json);
  hgr_placement_release(placement);
  hgr_params_release(params);
  hgr_graph_release(graph);
}

/* AUTO over r0/pocl:0 and r1/pocl:0 (one local device, two hosts in the model):
 * with a cross-host copy of a second, everything stays on rank 0; with a free one
 * the two branches run on both ranks. */
static void cross_host_cost_decides_auto(void** state) {
  (void)state;
  hgr_graph_t* graph = branches();
  static const char* const devices[] = {"r0/pocl:0", "r1/pocl:0"};
  hgr_place_options_t options;
  options_for(&options, devices, 2, "auto");
  options.cross_host_latency_ms = 1000.0;
  options.cross_host_ms_per_byte = 1e-3;
  hgr_placement_t* placement = place(graph, &options);
  ASSERT_OK(hgr_placement_write_summary(placement, stdout));
  const hgr_graph_t* placed = hgr_placement_graph(placement);
  for (uint32_t n = 0; n < hgr_graph_node_count(placed); ++n) {
    hgr_node_placement_t node;
    ASSERT_OK(hgr_placement_node(placement, n, &node));
    assert_int_equal(node.rank, 0);
  }
  assert_int_equal(hgr_placement_device_count(placement), 1);
  double dear_ms = hgr_placement_predicted_ms(placement);
  hgr_placement_release(placement);

  options_for(&options, devices, 2, "auto");
  options.cross_host_latency_ms = 1e-6;
  options.cross_host_ms_per_byte = 1e-12;
  placement = place(graph, &options);
  ASSERT_OK(hgr_placement_write_summary(placement, stdout));
  assert_int_equal(hgr_placement_device_count(placement), 2);
  assert_true(copies_between(placement, 0, 1) >= 1);
  printf("auto: %.3f ms predicted on rank 0 alone, %.3f ms across ranks 0 and 1\n", dear_ms,
         hgr_placement_predicted_ms(placement));
  assert_true(hgr_placement_predicted_ms(placement) < dear_ms);
  hgr_placement_release(placement);
  hgr_graph_release(graph);
}

/* ---- a rank's own devices, measured there (hgr_place_measure_rank) ---------------------- */

static char* measure(hgr_graph_t* graph, const hgr_place_options_t* options, int rank) {
  char* text = NULL;
  ASSERT_OK(hgr_place_measure_rank(instance, graph, options, rank, &text));
  assert_non_null(text);
  return text;
}

static char* placed_json(const hgr_placement_t* placement) {
  char* text = NULL;
  size_t length = 0;
  FILE* out = open_memstream(&text, &length);
  assert_non_null(out);
  ASSERT_OK(hgr_graph_write_json(hgr_placement_graph(placement), out));
  fclose(out);
  return text;
}

/* Rank 1's measure of the local pocl:0 places as the local namesake does: the same
 * placed graph and prediction for FIRST, STAGES and AUTO; a rank no spec names
 * gives "", which hgr_place reads as no measure, as NULL. */
static void measured_rank_places_like_its_local_namesake(void** state) {
  (void)state;
  hgr_params_t* params = NULL;
  hgr_graph_t* graph = chain(&params);
  static const char* const devices[] = {"r0/pocl:0", "r1/pocl:0"};
  static const char* const policies[] = {"first", "stages:2", "auto"};
  for (size_t p = 0; p < 3; ++p) {
    hgr_place_options_t options;
    options_for(&options, devices, 2, policies[p]);
    options.params = params;
    hgr_placement_t* local = place(graph, &options);
    char* text = measure(graph, &options, 1);
    assert_non_null(strstr(text, "\"format\":\"hgr-rank-measure-1\""));
    assert_true((strstr(text, "\"node_ms\"") != NULL) == (p > 0)); /* times for STAGES and AUTO only */
    char* none = measure(graph, &options, 2);
    assert_string_equal(none, "");
    free(none);
    const char* measures[2] = {p == 0 ? NULL : "", text}; /* rank 0's: none, either way */
    options.rank_measures = measures;
    options.rank_measure_count = 2;
    hgr_placement_t* measured = place(graph, &options);
    char *a = placed_json(local), *b = placed_json(measured);
    assert_string_equal(a, b);
    double predicted = hgr_placement_predicted_ms(local);
    assert_true(fabs(hgr_placement_predicted_ms(measured) - predicted) <= 1e-9 * fabs(predicted));
    hgr_placement_device_t device;
    ASSERT_OK(hgr_placement_device(measured, hgr_placement_device_count(measured) - 1, &device));
    assert_string_equal(device.spec, device.rank ? "r1/pocl:0" : "r0/pocl:0");
    free(a);
    free(b);
    free(text);
    hgr_placement_release(local);
    hgr_placement_release(measured);
  }
  hgr_params_release(params);
  hgr_graph_release(graph);
}

/* text with rank 1's one device turned into a GPU this process lacks: index 42,
 * "gpu:0", `compiler` as given, nodes 10 times faster. Returns a new text. */
static char* as_remote_gpu(const char* text, bool compiler) {
  cJSON* root = cJSON_Parse(text);
  assert_non_null(root);
  cJSON* device = cJSON_GetArrayItem(cJSON_GetObjectItem(root, "devices"), 0);
  assert_non_null(device);
  cJSON_ReplaceItemInObject(device, "index", cJSON_CreateNumber(42));
  cJSON_ReplaceItemInObject(device, "spec", cJSON_CreateString("gpu:0"));
  cJSON_ReplaceItemInObject(device, "name", cJSON_CreateString("a GPU of rank 1"));
  cJSON_ReplaceItemInObject(device, "type", cJSON_CreateNumber(HGR_DEVICE_TYPE_GPU));
  cJSON_ReplaceItemInObject(device, "compiler_available", cJSON_CreateBool(compiler));
  cJSON* position = NULL;
  cJSON_ArrayForEach(position, cJSON_GetObjectItem(root, "positions")) {
    if (cJSON_IsNumber(position)) cJSON_SetNumberValue(position, 42);
  }
  cJSON* row = cJSON_GetArrayItem(cJSON_GetObjectItem(root, "node_ms"), 0);
  cJSON* cell = NULL;
  cJSON_ArrayForEach(cell, row) {
    if (cJSON_IsNumber(cell)) cJSON_SetNumberValue(cell, cell->valuedouble / 10);
  }
  char* changed = cJSON_PrintUnformatted(root);
  cJSON_Delete(root);
  assert_non_null(changed);
  return changed;
}

/* Hosts with different devices: rank 1's "gpu:0", which this process has not,
 * placed from rank 1's measure: its records carry rank 1's index and spec, and its
 * capabilities are its own (without a compiler it runs no built-in op). */
static void a_device_only_rank_1_has(void** state) {
  (void)state;
  hgr_params_t* params = NULL;
  hgr_graph_t* graph = chain(&params);
  static const char* const measured_devices[] = {"r0/pocl:0", "r1/pocl:0"};
  static const char* const devices[] = {"r0/pocl:0", "r1/gpu:0"};
  hgr_place_options_t options;
  options_for(&options, measured_devices, 2, "stages:2");
  options.params = params;
  char* text = measure(graph, &options, 1);
  char* gpu = as_remote_gpu(text, true);
  options_for(&options, devices, 2, "stages:2");
  options.params = params;
  hgr_placement_t* placement = NULL;
  ASSERT_STATUS(hgr_place(instance, graph, &options, &placement), HGR_STATUS_NOT_FOUND, "placement device 2 'r1/gpu:0'",
                "no device matches 'gpu:0'");
  const char* measures[2] = {NULL, gpu};
  options.rank_measures = measures;
  options.rank_measure_count = 2;
  placement = place(graph, &options);
  char* summary = summary_of(placement, false);
  printf("%s", summary);
  assert_non_null(strstr(summary, "r1/gpu:0 (key 2)"));
  assert_string_equal(binding_of(placement, 2), "r1/gpu:0");
  hgr_node_placement_t last = hgr_test_placed_node(placement, N5, NULL);
  assert_int_equal(last.rank, 1);
  assert_int_equal(last.device_index, 42);
  hgr_placement_device_t device;
  ASSERT_OK(hgr_placement_device(placement, 1, &device));
  assert_int_equal(device.device_index, 42);
  assert_string_equal(device.spec, "r1/gpu:0");
  free(summary);
  hgr_placement_release(placement);
  placement = NULL;
  free(gpu);
  free(text);

  /* no compiler there: a rule sending relu to it names the device's reason */
  options_for(&options, measured_devices, 1, "first");
  ASSERT_OK(hgr_place_options_parse(&options, "op:relu=r1/pocl:0"));
  text = measure(graph, &options, 1);
  gpu = as_remote_gpu(text, false);
  options_for(&options, devices, 1, "first");
  ASSERT_OK(hgr_place_options_parse(&options, "op:relu=r1/gpu:0"));
  options.rank_measures = measures;
  measures[1] = gpu;
  options.rank_measure_count = 2;
  ASSERT_STATUS(hgr_place(instance, graph, &options, &placement), HGR_STATUS_INVALID_ARGUMENT, "op:relu=r1/gpu:0",
                "gpu:0: op 'relu' is built in (compiled from source), and the device has no compiler");
  free(gpu);
  free(text);
  hgr_params_release(params);
  hgr_graph_release(graph);
}

/* A measure that does not fit is refused, naming the rank and what differs. */
static void measures_that_do_not_fit_are_refused(void** state) {
  (void)state;
  hgr_graph_t* graph = chain(NULL);
  hgr_graph_t* other = branches();
  static const char* const devices[] = {"r0/pocl:0", "r1/pocl:0"};
  static const char* const three[] = {"r0/pocl:0", "r1/pocl:0", "r2/pocl:0"};
  hgr_place_options_t options;
  options_for(&options, devices, 2, "first");
  char* first = measure(graph, &options, 1);
  hgr_placement_t* placement = NULL;
  const char* measures[3] = {NULL, "{\"format\": 1", NULL};
  struct {
    const char* const* devices;
    size_t device_count;
    const char* policy;
    hgr_graph_t* graph;
    const char* measure;
    int rank;
    const char* message;
  } cases[] = {
      {devices, 2, "first", graph, "{\"format\": 1", 1, "rank 1's measure is not JSON"},
      {devices, 2, "first", graph, "[]", 1, "'format' is not \"hgr-rank-measure-1\""},
      {three, 3, "first", graph, first, 2, "rank 2's measure: it is rank 1's"},
      {three, 3, "first", graph, first, 1, "every rank must be given the same --devices and --place"},
      {devices, 2, "first", other, first, 1, "rank 1's measure is of another graph"},
      {devices, 2, "stages:2", graph, first, 1, "rank 1's measure has no times, which AUTO and STAGES need"},
  };
  for (size_t c = 0; c < sizeof(cases) / sizeof(*cases); ++c) {
    options_for(&options, cases[c].devices, cases[c].device_count, cases[c].policy);
    measures[0] = measures[1] = measures[2] = NULL;
    measures[cases[c].rank] = cases[c].measure;
    options.rank_measures = measures;
    options.rank_measure_count = 3;
    ASSERT_STATUS(hgr_place(instance, cases[c].graph, &options, &placement), HGR_STATUS_INVALID_ARGUMENT,
                  cases[c].message);
    assert_null(placement);
  }
  /* a spec of rank 0 given a device by rank 1 */
  char* moved = strdup(first);
  char* at = strstr(moved, "\"positions\":[null,");
  assert_non_null(at);
  memcpy(at + strlen("\"positions\":["), "0   ", 4); /* null -> 0 */
  options_for(&options, devices, 2, "first");
  measures[0] = measures[2] = NULL;
  measures[1] = moved;
  options.rank_measures = measures;
  options.rank_measure_count = 2;
  ASSERT_STATUS(hgr_place(instance, graph, &options, &placement), HGR_STATUS_INVALID_ARGUMENT,
                "position 1 ('r0/pocl:0') is given a device, but the spec names another rank");
  free(moved);
  /* measuring: a spec of its own that the rank lacks, and arguments */
  static const char* const missing[] = {"r0/pocl:0", "r1/pocl:9"};
  options_for(&options, missing, 2, "first");
  char* text = NULL;
  ASSERT_STATUS(hgr_place_measure_rank(instance, graph, &options, 1, &text), HGR_STATUS_NOT_FOUND,
                "placement device 2 'r1/pocl:9'", "no device matches 'pocl:9'");
  assert_null(text);
  ASSERT_STATUS(hgr_place_measure_rank(instance, graph, &options, -1, &text), HGR_STATUS_INVALID_ARGUMENT,
                "rank must be >= 0");
  free(first);
  hgr_graph_release(other);
  hgr_graph_release(graph);
}

int main(void) {
  instance = hgr_test_instance_or_exit();
  static const char* const needed[] = {"pocl:0"};
  hgr_test_require_devices(instance, needed, 1);
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(stages_2_split_the_chain_over_two_ranks),
      cmocka_unit_test(stages_3_give_ranks_0_1_2_in_order),
      cmocka_unit_test(rank_1_rule_and_data_input_read_on_rank_0),
      cmocka_unit_test(weight_stays_on_rank_1_and_output_comes_to_rank_0),
      cmocka_unit_test(same_rank_and_device_twice_is_rejected),
      cmocka_unit_test(ranks_without_rank_0_are_rejected),
      cmocka_unit_test(one_rank_without_prefixes_is_unchanged),
      cmocka_unit_test(cross_host_cost_decides_auto),
      cmocka_unit_test(measured_rank_places_like_its_local_namesake),
      cmocka_unit_test(a_device_only_rank_1_has),
      cmocka_unit_test(measures_that_do_not_fit_are_refused),
  };
  int failed = cmocka_run_group_tests(tests, NULL, NULL);
  hgr_instance_release(instance);
  return failed;
}
