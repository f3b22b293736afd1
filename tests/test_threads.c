/* Two executors of one graph on two threads at once, sharing one instance and its
 * devices (contexts are created lazily by whichever thread comes first), each doing
 * many runs with its own inputs across a same-context and a cross-platform copy.
 * Built twice: as a normal test, and against the runtime compiled with
 * -fsanitize=thread (test_threads_tsan), so data races in hgr are reported.
 *
 *   test_threads SPEC_KEY1 SPEC_KEY4 SPEC_KEY5
 *
 * Standalone (no cmocka, no test library): the TSan build links its own copy of
 * the runtime. Oclgrind is not thread-safe and must not be among the devices. */
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hgr/hgr.h"

#define RUNS 40
#define COUNT 4099

static const char graph_json[] =
    "{\"nodes\": [{\"op\": \"null\", \"name\": \"x\", \"inputs\": []},"
    " {\"op\": \"tvm_op\", \"name\": \"e\", \"attrs\": {\"func_name\": \"exp\", \"num_inputs\": \"1\", \"num_outputs\": \"1\", \"flatten_data\": \"0\"}, \"inputs\": [[0, 0, 0]]},"
    " {\"op\": \"tvm_op\", \"name\": \"c1\", \"attrs\": {\"func_name\": \"__copy\", \"num_inputs\": \"1\", \"num_outputs\": \"1\", \"flatten_data\": \"0\"}, \"inputs\": [[1, 0, 0]]},"
    " {\"op\": \"tvm_op\", \"name\": \"t\", \"attrs\": {\"func_name\": \"tanh\", \"num_inputs\": \"1\", \"num_outputs\": \"1\", \"flatten_data\": \"0\"}, \"inputs\": [[2, 0, 0]]},"
    " {\"op\": \"tvm_op\", \"name\": \"c2\", \"attrs\": {\"func_name\": \"__copy\", \"num_inputs\": \"1\", \"num_outputs\": \"1\", \"flatten_data\": \"0\"}, \"inputs\": [[3, 0, 0]]},"
    " {\"op\": \"tvm_op\", \"name\": \"n\", \"attrs\": {\"func_name\": \"negative\", \"num_inputs\": \"1\", \"num_outputs\": \"1\", \"flatten_data\": \"0\"}, \"inputs\": [[4, 0, 0]]}],"
    " \"arg_nodes\": [0], \"node_row_ptr\": [0, 1, 2, 3, 4, 5, 6], \"heads\": [[5, 0, 0]],"
    " \"attrs\": {\"storage_id\": [\"list_int\", [0, 1, 2, 3, 4, 5]], \"device_index\": [\"list_int\", [1, 1, 4, 4, 5, 5]],"
    " \"shape\": [\"list_shape\", [[4099], [4099], [4099], [4099], [4099], [4099]]],"
    " \"dltype\": [\"list_str\", [\"float32\", \"float32\", \"float32\", \"float32\", \"float32\", \"float32\"]]}}";

static const char* specs[3];
static hgr_instance_t* instance;
static hgr_graph_t* graph;

typedef struct worker_t {
  int id;
  char error[1024];
} worker_t;

static bool failed_with(worker_t* w, hgr_status_t status, const char* what) {
  if (!status) return false;
  char* text = hgr_status_to_string(status);
  snprintf(w->error, sizeof(w->error), "thread %d: %s: %s", w->id, what, text ? text : "?");
  free(text);
  hgr_status_free(status);
  return true;
}

static void* work(void* argument) {
  worker_t* w = argument;
  hgr_device_binding_t bindings[3] = {{1, specs[0]}, {4, specs[1]}, {5, specs[2]}};
  hgr_executor_options_t options;
  hgr_executor_options_init(&options);
  options.bindings = bindings;
  options.binding_count = 3;
  options.program_cache.mode = HGR_PROGRAM_CACHE_OFF; /* both threads compile */
  hgr_executor_t* executor = NULL;
  float* x = malloc(COUNT * sizeof(float));
  float* y = malloc(COUNT * sizeof(float));
  if (!x || !y || failed_with(w, hgr_executor_create(instance, graph, &options, &executor), "create")) goto done;
  for (int run = 0; run < RUNS; ++run) {
    for (int i = 0; i < COUNT; ++i) x[i] = (float)((i * 7 + run * 13 + w->id * 101) % 200 - 100) / 50.0f;
    if (failed_with(w, hgr_executor_set_input(executor, 0, x, COUNT * sizeof(float)), "set_input") ||
        failed_with(w, hgr_executor_run(executor), "run") || failed_with(w, hgr_executor_wait(executor), "wait") ||
        failed_with(w, hgr_executor_get_output(executor, 0, y, COUNT * sizeof(float)), "get_output"))
      goto done;
    for (int i = 0; i < COUNT; ++i) {
      float want = -tanhf(expf(x[i]));
      if (!(fabsf(y[i] - want) <= 1e-5f)) {
        snprintf(w->error, sizeof(w->error), "thread %d run %d element %d: got %.9g, expected %.9g", w->id, run, i,
                 y[i], want);
        goto done;
      }
    }
  }
done:
  hgr_executor_release(executor);
  free(x);
  free(y);
  return NULL;
}

int main(int argc, char** argv) {
  if (argc != 4) {
    fprintf(stderr, "usage: test_threads SPEC_KEY1 SPEC_KEY4 SPEC_KEY5\n");
    return 2;
  }
  for (int i = 0; i < 3; ++i) specs[i] = argv[i + 1];
  hgr_status_t status = hgr_instance_create(NULL, &instance);
  if (!status) status = hgr_graph_load_json(graph_json, strlen(graph_json), &graph);
  for (int i = 0; i < 3 && !status; ++i) {
    size_t index;
    if ((status = hgr_instance_find_device(instance, specs[i], &index))) {
      char* text = hgr_status_to_string(status);
      printf("skipped: this test needs device %s: %s\n", specs[i], text);
      free(text);
      hgr_status_free(status);
      hgr_graph_release(graph);
      hgr_instance_release(instance);
      return 77;
    }
  }
  if (status) {
    char* text = hgr_status_to_string(status);
    fprintf(stderr, "%s\n", text);
    free(text);
    hgr_status_free(status);
    return 1;
  }
  pthread_t threads[2];
  worker_t workers[2] = {{0, ""}, {1, ""}};
  for (int t = 0; t < 2; ++t) pthread_create(&threads[t], NULL, work, &workers[t]);
  for (int t = 0; t < 2; ++t) pthread_join(threads[t], NULL);
  int failed = 0;
  for (int t = 0; t < 2; ++t)
    if (workers[t].error[0]) {
      fprintf(stderr, "FAILED: %s\n", workers[t].error);
      failed = 1;
    }
  hgr_graph_release(graph);
  hgr_instance_release(instance);
  if (!failed) printf("2 threads x %d runs on %s, %s, %s: all outputs right\n", RUNS, specs[0], specs[1], specs[2]);
  return failed;
}
