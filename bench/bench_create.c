/* Startup of a graph in one process: executor creation and the first run.
 *
 *   hgr_bench_create [--repeat N] [--params FILE] [--no-program-cache] [--caches TEXT]
 *                    [--header] GRAPH.json [--device KEY=SPEC]...
 *
 * Times, in this order: hgr_instance_create (the OpenCL drivers load); the first
 * hgr_executor_create (kernel programs built, or loaded from hgr's program cache and
 * the drivers' caches); the first run (hgr_executor_run + hgr_executor_wait, after
 * hgr_executor_set_input, untimed: PoCL compiles each kernel's work-group function
 * at its first launch); a second run; then N - 1 more creations (each released
 * before the next), whose median shows what the drivers' in-process caches leave.
 * Inputs the params do not give get fixed float32 values. --no-program-cache turns
 * hgr's program cache off (HGR_PROGRAM_CACHE_OFF); otherwise it keeps its files in
 * $HGR_CACHE_DIR (or the default directory). The drivers' own caches follow their
 * environment (POCL_KERNEL_CACHE, POCL_CACHE_DIR, MESA_SHADER_CACHE_DISABLE,
 * MESA_SHADER_CACHE_DIR): the caller sets it, and --caches TEXT names that state in
 * the row. Prints one markdown row (the header too with --header); a process is one
 * measurement, since the drivers keep what they built until the process ends. */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench_example.h"
#include "bench_util.h"
#include "hgr/hgr.h"

enum { MAX_BINDINGS = 16 };

static int usage(void) {
  fprintf(stderr, "usage: hgr_bench_create [--repeat N] [--params FILE] [--no-program-cache] [--caches TEXT] "
                  "[--header] GRAPH.json [--device KEY=SPEC]...\n");
  return 2;
}

/* Milliseconds for one hgr_executor_run + hgr_executor_wait. */
static hgr_status_t timed_run(hgr_executor_t* executor, double* out_ms) {
  double start = bench_now_ns();
  hgr_status_t status = hgr_executor_run(executor);
  if (!status) status = hgr_executor_wait(executor);
  *out_ms = (bench_now_ns() - start) / 1e6;
  return status;
}

int main(int argc, char** argv) {
  const char* graph_path = NULL;
  const char* params_path = NULL;
  const char* caches = "as the environment leaves them";
  int repeat = 1;
  bool header = false, program_cache = true;
  hgr_device_binding_t bindings[MAX_BINDINGS];
  size_t binding_count = 0;
  char devices[256] = "";
  for (int i = 1; i < argc; ++i) {
    bool has_value = i + 1 < argc;
    if (!strcmp(argv[i], "--repeat") && has_value) {
      repeat = atoi(argv[++i]);
    } else if (!strcmp(argv[i], "--params") && has_value) {
      params_path = argv[++i];
    } else if (!strcmp(argv[i], "--caches") && has_value) {
      caches = argv[++i];
    } else if (!strcmp(argv[i], "--no-program-cache")) {
      program_cache = false;
    } else if (!strcmp(argv[i], "--header")) {
      header = true;
    } else if (!strcmp(argv[i], "--device") && has_value && binding_count < MAX_BINDINGS) {
      hgr_device_binding_t* binding = &bindings[binding_count++];
      if (!bench_example_parse_binding(argv[++i], binding)) return usage();
      if (!strstr(devices, binding->spec)) /* the distinct devices, for the row */
        snprintf(devices + strlen(devices), sizeof(devices) - strlen(devices), "%s%s", devices[0] ? ", " : "",
                 binding->spec);
    } else if (argv[i][0] != '-' && !graph_path) {
      graph_path = argv[i];
    } else {
      return usage();
    }
  }
  if (!graph_path || repeat < 1) return usage();

  hgr_instance_t* instance = NULL;
  hgr_graph_t* graph = NULL;
  hgr_params_t* params = NULL;
  hgr_executor_t* executor = NULL;
  double instance_ms = 0, create_ms = 0, first_run_ms = 0, second_run_ms = 0;
  double* later_ms = calloc((size_t)repeat, sizeof(double));
  hgr_status_t status = later_ms ? HGR_OK : HGR_STATUS(HGR_STATUS_RESOURCE_EXHAUSTED, "out of host memory");

  double start = bench_now_ns();
  if (!status) status = hgr_instance_create(NULL, &instance);
  instance_ms = (bench_now_ns() - start) / 1e6;
  if (!status) status = hgr_graph_load_file(graph_path, &graph);
  if (!status && params_path) status = hgr_params_load_file(params_path, &params);
  hgr_executor_options_t options;
  hgr_executor_options_init(&options);
  options.bindings = bindings;
  options.binding_count = binding_count;
  options.params = params;
  if (!program_cache) options.program_cache.mode = HGR_PROGRAM_CACHE_OFF;

  start = bench_now_ns();
  if (!status) status = hgr_executor_create(instance, graph, &options, &executor);
  create_ms = (bench_now_ns() - start) / 1e6;
  if (!status) status = bench_example_set_inputs(executor, params);
  if (!status) status = timed_run(executor, &first_run_ms);
  if (!status) status = timed_run(executor, &second_run_ms);
  hgr_executor_release(executor);
  for (int r = 1; r < repeat && !status; ++r) {
    executor = NULL;
    start = bench_now_ns();
    status = hgr_executor_create(instance, graph, &options, &executor);
    later_ms[r - 1] = (bench_now_ns() - start) / 1e6;
    hgr_executor_release(executor);
  }

  if (!status) {
    if (header)
      printf("| graph | devices | caches | instance (ms) | create (ms) | first run (ms) | create + first run (ms) "
             "| second run (ms) | later creates, median (ms) |\n"
             "|---|---|---|---:|---:|---:|---:|---:|---:|\n");
    char later[32] = "–";
    if (repeat > 1) snprintf(later, sizeof(later), "%.2f (%d)", bench_median(later_ms, (size_t)repeat - 1), repeat - 1);
    printf("| %s | %s | %s | %.2f | %.2f | %.2f | %.2f | %.2f | %s |\n", graph_path, devices[0] ? devices : "default",
           caches, instance_ms, create_ms, first_run_ms, create_ms + first_run_ms, second_run_ms, later);
  }
  free(later_ms);
  hgr_params_release(params);
  hgr_graph_release(graph);
  hgr_instance_release(instance);
  if (!status) return 0;
  char* text = hgr_status_to_string(status);
  fprintf(stderr, "hgr_bench_create: %s: %s\n", graph_path, text ? text : "out of memory");
  free(text);
  hgr_status_free(status);
  return 1;
}
