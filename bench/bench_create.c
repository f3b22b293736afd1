/* Executor creation time for graphs: hgr_bench_create [--repeat N] GRAPH.json [--device KEY=SPEC]...
 *
 * Loads the graph once, then creates and releases an executor N times (default 5)
 * and prints the min and median creation time. The first creation also builds the
 * kernel programs (the drivers' own caches may serve later ones); both are shown. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "bench_util.h"
#include "hgr/hgr.h"

static int fail(hgr_status_t status) {
  char* text = hgr_status_to_string(status);
  fprintf(stderr, "hgr_bench_create: %s\n", text ? text : "out of memory");
  free(text);
  hgr_status_free(status);
  return 1;
}

int main(int argc, char** argv) {
  const char* graph_path = NULL;
  int repeat = 5;
  hgr_device_binding_t bindings[16];
  size_t binding_count = 0;
  for (int i = 1; i < argc; ++i) {
    if (!strcmp(argv[i], "--repeat") && i + 1 < argc) {
      repeat = atoi(argv[++i]);
    } else if (!strcmp(argv[i], "--device") && i + 1 < argc && binding_count < 16) {
      char* eq = strchr(argv[++i], '=');
      if (!eq) {
        fprintf(stderr, "hgr_bench_create: --device takes KEY=SPEC\n");
        return 2;
      }
      *eq = 0;
      bindings[binding_count++] = (hgr_device_binding_t){atoi(argv[i]), eq + 1};
    } else if (argv[i][0] != '-' && !graph_path) {
      graph_path = argv[i];
    } else {
      fprintf(stderr, "usage: hgr_bench_create [--repeat N] GRAPH.json [--device KEY=SPEC]...\n");
      return 2;
    }
  }
  if (!graph_path || repeat < 1) {
    fprintf(stderr, "usage: hgr_bench_create [--repeat N] GRAPH.json [--device KEY=SPEC]...\n");
    return 2;
  }
  hgr_instance_t* instance = NULL;
  hgr_graph_t* graph = NULL;
  hgr_status_t status = hgr_instance_create(NULL, &instance);
  if (!status) status = hgr_graph_load_file(graph_path, &graph);
  double* times = calloc((size_t)repeat, sizeof(double));
  if (!status && !times) status = HGR_STATUS(HGR_STATUS_RESOURCE_EXHAUSTED, "out of host memory");
  hgr_executor_options_t options;
  hgr_executor_options_init(&options);
  options.bindings = bindings;
  options.binding_count = binding_count;
  for (int r = 0; r < repeat && !status; ++r) {
    hgr_executor_t* executor = NULL;
    double start = (bench_now_ns() / 1e6);
    status = hgr_executor_create(instance, graph, &options, &executor);
    times[r] = (bench_now_ns() / 1e6) - start;
    hgr_executor_release(executor);
  }
  if (!status) {
    double first = times[0];
    qsort(times, (size_t)repeat, sizeof(double), bench_compare_doubles);
    printf("| graph | nodes | first create (ms) | min (ms) | median (ms) | runs |\n|---|---:|---:|---:|---:|---:|\n");
    printf("| %s | %zu | %.2f | %.2f | %.2f | %d |\n", graph_path, hgr_graph_node_count(graph), first, times[0],
           times[repeat / 2], repeat);
  }
  free(times);
  hgr_graph_release(graph);
  hgr_instance_release(instance);
  return status ? fail(status) : 0;
}
