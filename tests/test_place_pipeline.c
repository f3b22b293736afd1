/* stages:2 with runs in flight (issue 14): the CNN example placed anew in two stages
 * over SPEC_A and SPEC_B (pocl:0 and rusticl:0 in CTest), 100 runs with 2 in flight,
 * the input changing every run (three variants, set while earlier runs are still in
 * flight), and every run's output, read through its fence, equal to what one device
 * gives for that input. A stage that overwrote what an earlier run still reads, or a
 * run that read a later run's input, would show as a mismatch.
 *
 *   test_place_pipeline EXAMPLES_DIR SPEC_A SPEC_B */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "testlib.h"

static const char* examples;
static const char* specs[2];
static hgr_instance_t* instance;

enum { VARIANTS = 3, RUNS = 100, IN_FLIGHT = 2, OUT = 10 };

static const char* path(const char* name) {
  static char buffer[1024];
  snprintf(buffer, sizeof(buffer), "%s/%s", examples, name);
  return buffer;
}

static hgr_placement_t* place(hgr_graph_t* graph, const char* const* devices, size_t count, const char* policy) {
  hgr_place_options_t options;
  hgr_place_options_init(&options);
  options.devices = devices;
  options.device_count = count;
  options.cost_cache_directory = hgr_test_tmp_path("pipeline-cost-cache");
  ASSERT_OK(hgr_place_options_parse(&options, policy));
  hgr_placement_t* placement = NULL;
  ASSERT_OK(hgr_place(instance, graph, &options, &placement));
  return placement;
}

static hgr_executor_t* executor_for(const hgr_placement_t* placement, const hgr_params_t* params) {
  hgr_executor_options_t options;
  hgr_executor_options_init(&options);
  options.params = params;
  hgr_executor_t* executor = NULL;
  ASSERT_OK(hgr_executor_create(instance, hgr_placement_graph(placement), &options, &executor));
  return executor;
}

static void stages_run_pipelined(void** state) {
  (void)state;
  hgr_graph_t* graph = NULL;
  hgr_params_t* params = NULL;
  hgr_npy_array_t x;
  ASSERT_OK(hgr_graph_load_file(path("cnn.json"), &graph));
  ASSERT_OK(hgr_params_load_file(path("cnn.params"), &params));
  ASSERT_OK(hgr_npy_load_file(path("cnn_x.npy"), &x));
  size_t elements = (size_t)(x.bytes / sizeof(float));
  float* inputs = malloc(VARIANTS * x.bytes);
  assert_non_null(inputs);
  for (int v = 0; v < VARIANTS; ++v)
    for (size_t e = 0; e < elements; ++e) inputs[(size_t)v * elements + e] = ((const float*)x.data)[e] * (1.0f + 0.5f * (float)v);

  /* What one device gives for each variant. */
  float want[VARIANTS][OUT];
  hgr_placement_t* single = place(graph, &specs[0], 1, "first");
  hgr_executor_t* reference = executor_for(single, params);
  size_t input_index;
  ASSERT_OK(hgr_executor_input_index(reference, "x", &input_index));
  for (int v = 0; v < VARIANTS; ++v) {
    ASSERT_OK(hgr_executor_set_input(reference, input_index, inputs + (size_t)v * elements, (size_t)x.bytes));
    ASSERT_OK(hgr_executor_run(reference));
    ASSERT_OK(hgr_executor_get_output(reference, 0, want[v], sizeof(want[v])));
  }
  hgr_executor_release(reference);
  hgr_placement_release(single);

  hgr_placement_t* staged = place(graph, specs, 2, "stages:2");
  ASSERT_OK(hgr_placement_write_summary(staged, stdout));
  assert_int_equal(hgr_placement_device_count(staged), 2);
  hgr_executor_t* executor = executor_for(staged, params);
  ASSERT_OK(hgr_executor_input_index(executor, "x", &input_index));
  hgr_fence_t* fences[IN_FLIGHT] = {NULL};
  int checked = 0;
  for (int r = 0; r < RUNS + IN_FLIGHT; ++r) {
    hgr_fence_t** slot = &fences[r % IN_FLIGHT];
    if (*slot) { /* run r - IN_FLIGHT: read its output through its fence */
      int v = (r - IN_FLIGHT) % VARIANTS;
      float got[OUT];
      ASSERT_OK(hgr_fence_get_output(*slot, 0, got, sizeof(got)));
      for (int i = 0; i < OUT; ++i)
        if (!(fabsf(got[i] - want[v][i]) <= 1e-5f + 1e-5f * fabsf(want[v][i]))) {
          print_error("run %d (input variant %d): output[%d] = %.9g, one device gives %.9g\n", r - IN_FLIGHT, v, i,
                      (double)got[i], (double)want[v][i]);
          fail();
        }
      hgr_fence_release(*slot);
      *slot = NULL;
      checked++;
    }
    if (r >= RUNS) continue;
    ASSERT_OK(hgr_executor_set_input(executor, input_index, inputs + (size_t)(r % VARIANTS) * elements,
                                     (size_t)x.bytes));
    ASSERT_OK(hgr_executor_run_async(executor, slot));
  }
  assert_int_equal(checked, RUNS);
  printf("%d pipelined runs (%d in flight) over %s and %s: every output equals one device's\n", RUNS, IN_FLIGHT,
         specs[0], specs[1]);
  hgr_executor_release(executor);
  hgr_placement_release(staged);
  free(inputs);
  hgr_npy_array_free(&x);
  hgr_params_release(params);
  hgr_graph_release(graph);
}

int main(int argc, char** argv) {
  if (argc != 4) {
    fprintf(stderr, "usage: test_place_pipeline EXAMPLES_DIR SPEC_A SPEC_B\n");
    return 2;
  }
  examples = argv[1];
  specs[0] = argv[2];
  specs[1] = argv[3];
  instance = hgr_test_instance_or_exit();
  hgr_test_require_devices(instance, specs, 2);
  const struct CMUnitTest tests[] = {cmocka_unit_test(stages_run_pipelined)};
  int failed = cmocka_run_group_tests(tests, NULL, NULL);
  hgr_instance_release(instance);
  return failed;
}
