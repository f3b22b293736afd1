/* One whole executor lifecycle, for OpenCL fault injection (fault_shim.c is linked
 * in; fault_walk.c makes each of its OpenCL calls fail in turn): instance, graph,
 * executor (programs built from source; with "cache", loaded from the program cache
 * in $HGR_TEST_TMP_DIR/fault-program-cache, which the first run fills),
 * inputs, a run that is waited for, outputs, new inputs, a second run whose outputs
 * are read without waiting, release.
 *
 * The graph puts key 1 on pocl:0, key 2 on pocl:1 (one context with pocl:0) and
 * key 3 on oclgrind:0:
 *   S = A + B          on pocl:0
 *   S' = copy S        pocl:0 -> pocl:1, same context (clEnqueueCopyBuffer)
 *   T = S' + S'        on pocl:1
 *   T' = copy T        pocl:1 -> oclgrind:0, cross-platform, staged (small)
 *   U = T' - C         on oclgrind:0
 *   out0 = copy U      oclgrind:0 -> pocl:0, cross-platform, staged
 *   X' = copy X        pocl:0 -> oclgrind:0, 1.25 MiB: the source is mapped
 *   X'' = copy X'      oclgrind:0 -> pocl:1, 1.25 MiB: the destination is mapped
 *   out1 = X'' + X''   on pocl:1
 *
 * With "device-values", two more runs: the third's out0 (pocl:0) handed on as a
 * device buffer (hgr_fence_output_buffer) and bound as the fourth run's A (pocl:0:
 * the buffer becomes A's storage, the run waits for its ready event) and C
 * (oclgrind:0: another context, staged through host memory after a bridge).
 *
 * Exit status: 0 when every step succeeded and every run's outputs are right; 1 when
 * a step failed, after printing "FAILED <step>: <status>" and releasing everything;
 * 2 when outputs are wrong. Usage: fault_lifecycle [cache] [device-values] */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hgr/hgr.h"
#include "hgr/opencl.h"

#define SMALL 256          /* elements of the small tensors (Oclgrind simulates each) */
#define BIG (320 * 1024)   /* 1.25 MiB of float32: a mapped cross-platform copy */

static char* graph_json(void) {
  static const char format[] =
      "{\"nodes\": ["
      "{\"op\": \"null\", \"name\": \"A\", \"inputs\": []},"
      "{\"op\": \"null\", \"name\": \"B\", \"inputs\": []},"
      "{\"op\": \"tvm_op\", \"name\": \"s\", \"attrs\": {\"func_name\": \"add\", \"num_inputs\": \"2\","
      " \"num_outputs\": \"1\", \"flatten_data\": \"0\"}, \"inputs\": [[0, 0, 0], [1, 0, 0]]},"
      "{\"op\": \"tvm_op\", \"name\": \"s_to_pocl1\", \"attrs\": {\"func_name\": \"__copy\", \"num_inputs\": \"1\","
      " \"num_outputs\": \"1\", \"flatten_data\": \"0\"}, \"inputs\": [[2, 0, 0]]},"
      "{\"op\": \"tvm_op\", \"name\": \"t\", \"attrs\": {\"func_name\": \"add\", \"num_inputs\": \"2\","
      " \"num_outputs\": \"1\", \"flatten_data\": \"0\"}, \"inputs\": [[3, 0, 0], [3, 0, 0]]},"
      "{\"op\": \"tvm_op\", \"name\": \"t_to_oclgrind\", \"attrs\": {\"func_name\": \"__copy\", \"num_inputs\": \"1\","
      " \"num_outputs\": \"1\", \"flatten_data\": \"0\"}, \"inputs\": [[4, 0, 0]]},"
      "{\"op\": \"null\", \"name\": \"C\", \"inputs\": []},"
      "{\"op\": \"tvm_op\", \"name\": \"u\", \"attrs\": {\"func_name\": \"subtract\", \"num_inputs\": \"2\","
      " \"num_outputs\": \"1\", \"flatten_data\": \"0\"}, \"inputs\": [[5, 0, 0], [6, 0, 0]]},"
      "{\"op\": \"tvm_op\", \"name\": \"u_to_pocl0\", \"attrs\": {\"func_name\": \"__copy\", \"num_inputs\": \"1\","
      " \"num_outputs\": \"1\", \"flatten_data\": \"0\"}, \"inputs\": [[7, 0, 0]]},"
      "{\"op\": \"null\", \"name\": \"X\", \"inputs\": []},"
      "{\"op\": \"tvm_op\", \"name\": \"x_to_oclgrind\", \"attrs\": {\"func_name\": \"__copy\", \"num_inputs\": \"1\","
      " \"num_outputs\": \"1\", \"flatten_data\": \"0\"}, \"inputs\": [[9, 0, 0]]},"
      "{\"op\": \"tvm_op\", \"name\": \"x_to_pocl1\", \"attrs\": {\"func_name\": \"__copy\", \"num_inputs\": \"1\","
      " \"num_outputs\": \"1\", \"flatten_data\": \"0\"}, \"inputs\": [[10, 0, 0]]},"
      "{\"op\": \"tvm_op\", \"name\": \"y\", \"attrs\": {\"func_name\": \"add\", \"num_inputs\": \"2\","
      " \"num_outputs\": \"1\", \"flatten_data\": \"0\"}, \"inputs\": [[11, 0, 0], [11, 0, 0]]}],"
      "\"arg_nodes\": [0, 1, 6, 9], \"node_row_ptr\": [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13],"
      "\"heads\": [[8, 0, 0], [12, 0, 0]],"
      "\"attrs\": {\"storage_id\": [\"list_int\", [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12]],"
      "\"shape\": [\"list_shape\", [[%d], [%d], [%d], [%d], [%d], [%d], [%d], [%d], [%d], [%d], [%d], [%d], [%d]]],"
      "\"dltype\": [\"list_str\", [\"float32\", \"float32\", \"float32\", \"float32\", \"float32\", \"float32\","
      " \"float32\", \"float32\", \"float32\", \"float32\", \"float32\", \"float32\", \"float32\"]],"
      "\"device_index\": [\"list_int\", [1, 1, 1, 2, 2, 3, 3, 3, 1, 1, 3, 2, 2]]}}";
  size_t size = sizeof(format) + 13 * 12;
  char* json = malloc(size);
  if (json)
    snprintf(json, size, format, SMALL, SMALL, SMALL, SMALL, SMALL, SMALL, SMALL, SMALL, SMALL, BIG, BIG, BIG, BIG);
  return json;
}

typedef struct tensors_t {
  float a[SMALL], b[SMALL], c[SMALL], out0[SMALL];
  float* x;
  float* out1;
} tensors_t;

static void fill(tensors_t* t, int run) {
  for (int i = 0; i < SMALL; ++i) {
    t->a[i] = (float)(i + run);
    t->b[i] = (float)(3 * run - i);
    t->c[i] = (float)(i % 7);
  }
  for (int i = 0; i < BIG; ++i) t->x[i] = (float)((i % 1000) - 500 + run);
}

/* True when the outputs are what the graph computes from the inputs. */
static bool outputs_right(const tensors_t* t, int run) {
  for (int i = 0; i < SMALL; ++i) {
    float expected = (t->a[i] + t->b[i]) * 2.0f - t->c[i];
    if (t->out0[i] != expected) {
      fprintf(stderr, "run %d: out0[%d] = %g, expected %g\n", run, i, (double)t->out0[i], (double)expected);
      return false;
    }
  }
  for (int i = 0; i < BIG; ++i)
    if (t->out1[i] != t->x[i] * 2.0f) {
      fprintf(stderr, "run %d: out1[%d] = %g, expected %g\n", run, i, (double)t->out1[i], (double)(t->x[i] * 2.0f));
      return false;
    }
  return true;
}

static hgr_status_t set_inputs(hgr_executor_t* executor, const tensors_t* t) {
  hgr_status_t status = hgr_executor_set_input_by_name(executor, "A", t->a, sizeof(t->a));
  if (!status) status = hgr_executor_set_input_by_name(executor, "B", t->b, sizeof(t->b));
  if (!status) status = hgr_executor_set_input_by_name(executor, "C", t->c, sizeof(t->c));
  if (!status) status = hgr_executor_set_input_by_name(executor, "X", t->x, BIG * sizeof(float));
  return status;
}

static hgr_status_t get_outputs(hgr_executor_t* executor, tensors_t* t) {
  hgr_status_t status = hgr_executor_get_output(executor, 0, t->out0, sizeof(t->out0));
  if (!status) status = hgr_executor_get_output(executor, 1, t->out1, BIG * sizeof(float));
  return status;
}

/* Prints a failed step's status and frees it; true when there was one. */
static bool failed(const char* step, hgr_status_t status) {
  if (!status) return false;
  char* text = hgr_status_to_string(status);
  printf("FAILED %s: %s\n", step, text ? text : hgr_status_message(status));
  fflush(stdout);
  free(text);
  hgr_status_free(status);
  return true;
}

/* Runs 3 and 4 (device-values): out0 of run 3 as A and C of run 4, whose out0 is
 * then (out0 + B) * 2 - out0. */
static int device_values(hgr_executor_t* executor, tensors_t* t) {
  hgr_fence_t* fence = NULL;
  hgr_device_buffer_t value = {0};
  size_t a = 0, c = 0;
  int exit_code = 1;
  float previous[SMALL];
  memcpy(previous, t->out0, sizeof(previous)); /* run 3 has run 2's inputs */
  if (failed("run 3", hgr_executor_run_async(executor, &fence)) ||
      failed("output buffer 3", hgr_fence_output_buffer(fence, 0, &value)) ||
      failed("input index", hgr_executor_input_index(executor, "A", &a)) ||
      failed("input index", hgr_executor_input_index(executor, "C", &c)) ||
      failed("bind A", hgr_executor_bind_device_buffer(executor, a, &value)) ||
      failed("bind C", hgr_executor_bind_device_buffer(executor, c, &value)) ||
      failed("run 4", hgr_executor_run(executor)) || failed("outputs 4", get_outputs(executor, t)))
    goto cleanup;
  exit_code = 2;
  for (int i = 0; i < SMALL; ++i)
    if (t->out0[i] != (previous[i] + t->b[i]) * 2.0f - previous[i]) {
      fprintf(stderr, "run 4: out0[%d] = %g, expected %g\n", i, (double)t->out0[i],
              (double)((previous[i] + t->b[i]) * 2.0f - previous[i]));
      goto cleanup;
    }
  exit_code = 0;
cleanup:
  hgr_device_buffer_release(&value);
  hgr_fence_release(fence);
  return exit_code;
}

int main(int argc, char** argv) {
  bool cache = false, device_value_runs = false;
  for (int arg = 1; arg < argc; ++arg) {
    cache |= !strcmp(argv[arg], "cache");
    device_value_runs |= !strcmp(argv[arg], "device-values");
  }
  int exit_code = 1;
  hgr_instance_t* instance = NULL;
  hgr_graph_t* graph = NULL;
  hgr_executor_t* executor = NULL;
  char* json = graph_json();
  tensors_t* t = calloc(1, sizeof(*t));
  if (t) {
    t->x = malloc(BIG * sizeof(float));
    t->out1 = malloc(BIG * sizeof(float));
  }
  if (!json || !t || !t->x || !t->out1) {
    printf("FAILED setup: out of host memory\n");
    goto cleanup;
  }

  if (failed("instance", hgr_instance_create(NULL, &instance))) goto cleanup;
  if (failed("graph", hgr_graph_load_json(json, strlen(json), &graph))) goto cleanup;
  hgr_device_binding_t bindings[] = {{1, "pocl:0"}, {2, "pocl:1"}, {3, "oclgrind:0"}};
  hgr_executor_options_t options;
  hgr_executor_options_init(&options);
  options.bindings = bindings;
  options.binding_count = 3;
  options.program_cache.mode = cache ? HGR_PROGRAM_CACHE_FILES : HGR_PROGRAM_CACHE_OFF;
  char cache_directory[512];
  const char* tmp = getenv("HGR_TEST_TMP_DIR");
  snprintf(cache_directory, sizeof(cache_directory), "%s/fault-program-cache", tmp && *tmp ? tmp : "/tmp");
  options.program_cache.directory = cache_directory;
  if (failed("executor", hgr_executor_create(instance, graph, &options, &executor))) goto cleanup;

  /* First run: waited for, then read. */
  fill(t, 1);
  if (failed("inputs 1", set_inputs(executor, t)) || failed("run 1", hgr_executor_run(executor)) ||
      failed("wait 1", hgr_executor_wait(executor)) || failed("outputs 1", get_outputs(executor, t)))
    goto cleanup;
  if (!outputs_right(t, 1)) {
    exit_code = 2;
    goto cleanup;
  }
  /* Second run with new inputs: reading the outputs is what waits. */
  fill(t, 2);
  if (failed("inputs 2", set_inputs(executor, t)) || failed("run 2", hgr_executor_run(executor)) ||
      failed("outputs 2", get_outputs(executor, t)))
    goto cleanup;
  if (!outputs_right(t, 2)) {
    exit_code = 2;
    goto cleanup;
  }
  if (device_value_runs && (exit_code = device_values(executor, t)) != 0) goto cleanup;
  printf("lifecycle ok\n");
  exit_code = 0;

cleanup:
  hgr_executor_release(executor);
  hgr_graph_release(graph);
  hgr_instance_release(instance);
  if (t) {
    free(t->x);
    free(t->out1);
  }
  free(t);
  free(json);
  fflush(stdout);
  return exit_code;
}
