/* Pipelined throughput: runs of one graph kept K in flight through fences (K = 1,
 * 2, 4) against run-and-wait (hgr_executor_run + hgr_executor_wait per run), in one
 * process, rounds interleaved so every mode sees the same machine.
 *
 *   hgr_bench_pipeline GRAPH.json [--params FILE] [--device KEY=SPEC]... [--queues N]
 *                      [--runs R] [--rounds M]
 *
 * Inputs the params do not give get random float32 values (other dtypes: zeros).
 * Prints one markdown row per mode: median runs per second over the rounds and the
 * ratio to run-and-wait. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench_example.h"
#include "bench_util.h"
#include "hgr/hgr.h"

static void check(hgr_status_t status, const char* what) {
  if (!status) return;
  char* text = hgr_status_to_string(status);
  fprintf(stderr, "hgr_bench_pipeline: %s: %s\n", what, text);
  free(text);
  hgr_status_free(status);
  exit(1);
}

/* Seconds for `runs` runs with `depth` in flight (0: run and wait). */
static double timed_runs(hgr_executor_t* executor, int runs, int depth) {
  hgr_fence_t* fences[8] = {NULL};
  double start = bench_now_ns();
  for (int r = 0; r < runs; ++r) {
    if (!depth) {
      check(hgr_executor_run(executor), "run");
      check(hgr_executor_wait(executor), "wait");
      continue;
    }
    hgr_fence_t** slot = &fences[r % depth];
    if (*slot) {
      check(hgr_fence_wait(*slot), "fence wait");
      hgr_fence_release(*slot);
    }
    check(hgr_executor_run_async(executor, slot), "run_async");
  }
  for (int r = runs; r < runs + depth; ++r) {
    hgr_fence_t** slot = &fences[r % depth];
    if (!*slot) continue;
    check(hgr_fence_wait(*slot), "fence wait");
    hgr_fence_release(*slot);
    *slot = NULL;
  }
  return (bench_now_ns() - start) / 1e9;
}

int main(int argc, char** argv) {
  if (argc < 2) {
    fprintf(stderr, "usage: %s GRAPH.json [--params FILE] [--device KEY=SPEC]... [--queues N] [--runs R] "
                    "[--rounds M]\n", argv[0]);
    return 2;
  }
  const char* graph_path = argv[1];
  const char* params_path = NULL;
  hgr_device_binding_t bindings[8];
  size_t binding_count = 0;
  int runs = 40, rounds = 7;
  uint32_t queues = 1;
  for (int i = 2; i + 1 < argc; i += 2) {
    if (!strcmp(argv[i], "--params")) params_path = argv[i + 1];
    else if (!strcmp(argv[i], "--runs")) runs = atoi(argv[i + 1]);
    else if (!strcmp(argv[i], "--rounds")) rounds = atoi(argv[i + 1]);
    else if (!strcmp(argv[i], "--queues")) queues = (uint32_t)atoi(argv[i + 1]);
    else if (!strcmp(argv[i], "--device") && binding_count < 8) {
      if (!bench_example_parse_binding(argv[i + 1], &bindings[binding_count++])) return 2;
    } else {
      fprintf(stderr, "hgr_bench_pipeline: unknown option %s\n", argv[i]);
      return 2;
    }
  }
  if (runs < 1 || rounds < 1) return 2;

  hgr_instance_t* instance = NULL;
  hgr_graph_t* graph = NULL;
  hgr_params_t* params = NULL;
  hgr_executor_t* executor = NULL;
  hgr_instance_options_t instance_options;
  hgr_instance_options_init(&instance_options);
  check(hgr_instance_create(&instance_options, &instance), "instance");
  check(hgr_graph_load_file(graph_path, &graph), graph_path);
  if (params_path) check(hgr_params_load_file(params_path, &params), params_path);
  hgr_executor_options_t options;
  hgr_executor_options_init(&options);
  options.bindings = bindings;
  options.binding_count = binding_count;
  options.params = params;
  options.compute_queues = queues;
  check(hgr_executor_create(instance, graph, &options, &executor), "executor");
  check(bench_example_set_inputs(executor, params), "setting the inputs");

  static const int depths[] = {0, 1, 2, 4};
  enum { MODES = sizeof(depths) / sizeof(depths[0]) };
  double* rates[MODES];
  for (int m = 0; m < MODES; ++m) {
    rates[m] = calloc((size_t)rounds, sizeof(double));
    timed_runs(executor, runs < 4 ? runs : 4, depths[m]); /* warm-up */
  }
  for (int round = 0; round < rounds; ++round)
    for (int m = 0; m < MODES; ++m) rates[m][round] = runs / timed_runs(executor, runs, depths[m]);
  check(hgr_executor_wait(executor), "wait");

  printf("| %s, %d runs per round, median of %d rounds | runs/s | vs run-and-wait |\n", graph_path, runs, rounds);
  printf("|---|---|---|\n");
  double base = bench_median(rates[0], (size_t)rounds);
  for (int m = 0; m < MODES; ++m) {
    double rate = bench_median(rates[m], (size_t)rounds);
    if (depths[m]) printf("| pipelined, K = %d in flight | %.1f | %.2fx |\n", depths[m], rate, rate / base);
    else printf("| run and wait | %.1f | 1.00x |\n", rate);
    free(rates[m]);
  }
  hgr_executor_release(executor);
  hgr_params_release(params);
  hgr_graph_release(graph);
  hgr_instance_release(instance);
  return 0;
}
