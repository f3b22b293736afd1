/* Chain benchmark: hgr against raw OpenCL on a chain of small dependent elementwise
 * nodes (chain_plan.h), measured interleaved in one process.
 *
 * usage: hgr_bench_chain --devices SPEC[,SPEC] [--nodes N] [--switch-every K]
 *                        [--elements E] [--rounds R] [--warmup W] [--label TEXT]
 *                        [--header] [--targets FILE] [--target-ratio X]
 *                        [--target-host-us Y] [--write-graph FILE] [--only VARIANT]
 *
 * One device: node k is value + c or value * c on it. Two devices (SPEC,SPEC): the
 * nodes alternate between them every K nodes (default 1) with a __copy node (hgr)
 * or a hand-made copy (raw) at every switch; the same platform gives one context
 * (direct copies), two platforms give host-staged copies.
 *
 * Three variants run the same plan:
 *   hgr       the graph JSON generated here, loaded and an executor created once; a
 *             run is hgr_executor_run + hgr_executor_wait;
 *   raw       raw_chain.c with one cl_kernel per distinct (op, input, output): what a
 *             hand-written program would hold (3 kernels for the one-device chain);
 *   raw/node  the same with one cl_kernel per node, as a graph runtime holds them
 *             (hgr does, since kernel arguments are not thread-safe to set): it shows
 *             what the many kernel objects alone cost the driver.
 * Each round runs every variant once, in rotating order, so all see the same machine
 * state; every figure is the median over the rounds, and a ratio is the median of
 * the rounds' ratios. "Host" is the calling thread's CPU time (CLOCK_THREAD_CPUTIME_ID),
 * which preemption by other processes does not inflate. The results are checked
 * against a host reference at the end.
 *
 * Prints one markdown table row (the header too with --header). --targets appends a
 * row "| target | measured | needed | PASS/MISS |" to FILE for --target-ratio (hgr
 * time per run at most X times raw) and --target-host-us (hgr adds at most Y us of
 * host time per node over raw); --write-graph GRAPH.json saves the generated graph
 * and its inputs as GRAPH_x.npy, GRAPH_c0.npy (, GRAPH_c1.npy), for `hgr run
 * --profile`; --only runs one variant (hgr, raw or raw/node) and prints its times
 * (for perf). */
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench_util.h"
#include "chain_plan.h"
#include "hgr/hgr.h"
#include "raw_chain.h"

#ifndef HGR_BENCH_KERNEL_FILE
#error "HGR_BENCH_KERNEL_FILE must name kernels/elementwise.cl"
#endif

enum { HGR, RAW, RAW_PER_NODE, VARIANTS };
static const char* const variant_names[VARIANTS] = {"hgr", "raw", "raw/node"};

static void check(hgr_status_t status, const char* what) {
  if (!status) return;
  char* text = hgr_status_to_string(status);
  fprintf(stderr, "hgr_bench_chain: %s: %s\n", what, text ? text : "out of memory");
  free(text);
  hgr_status_free(status);
  exit(1);
}

static void usage(void) {
  fprintf(stderr,
          "usage: hgr_bench_chain --devices SPEC[,SPEC] [--nodes N] [--switch-every K] [--elements E]\n"
          "                       [--rounds R] [--warmup W] [--label TEXT] [--header] [--targets FILE]\n"
          "                       [--target-ratio X] [--target-host-us Y] [--write-graph FILE]\n"
          "                       [--only hgr|raw|raw/node]\n");
  exit(2);
}

/* Deterministic values in [low, high). */
static void fill(float* values, int count, uint64_t seed, float low, float high) {
  for (int i = 0; i < count; ++i) {
    seed = seed * 6364136223846793005ull + 1442695040888963407ull;
    values[i] = low + (high - low) * (float)(seed >> 40) / (float)(1ull << 24);
  }
}

static bool matches(const float* a, const float* b, int count, double* out_largest) {
  bool within = true;
  *out_largest = 0;
  for (int i = 0; i < count; ++i) {
    double d = fabs((double)a[i] - (double)b[i]);
    if (d > *out_largest) *out_largest = d;
    if (!(d <= 1e-5 + 1e-5 * fabs((double)b[i]))) within = false;
  }
  return within;
}

typedef struct measure_t {
  double* total;   /* wall time of enqueue + wait, ns */
  double* enqueue; /* wall time of the enqueue alone, ns */
  double* host;    /* calling thread's CPU time, ns */
} measure_t;

int main(int argc, char** argv) {
  char devices_arg[256] = "";
  int nodes = 1000, switch_every = 1, elements = 256, rounds = 51, warmup = 3;
  const char* label = "chain";
  const char* targets_path = NULL;
  const char* graph_path = NULL;
  double target_ratio = 0, target_host_us = 0;
  bool header = false;
  int only = -1;
  for (int i = 1; i < argc; ++i) {
    const char* a = argv[i];
    bool has_value = i + 1 < argc;
    if (!strcmp(a, "--devices") && has_value) snprintf(devices_arg, sizeof(devices_arg), "%s", argv[++i]);
    else if (!strcmp(a, "--nodes") && has_value) nodes = atoi(argv[++i]);
    else if (!strcmp(a, "--switch-every") && has_value) switch_every = atoi(argv[++i]);
    else if (!strcmp(a, "--elements") && has_value) elements = atoi(argv[++i]);
    else if (!strcmp(a, "--rounds") && has_value) rounds = atoi(argv[++i]);
    else if (!strcmp(a, "--warmup") && has_value) warmup = atoi(argv[++i]);
    else if (!strcmp(a, "--label") && has_value) label = argv[++i];
    else if (!strcmp(a, "--targets") && has_value) targets_path = argv[++i];
    else if (!strcmp(a, "--target-ratio") && has_value) target_ratio = atof(argv[++i]);
    else if (!strcmp(a, "--target-host-us") && has_value) target_host_us = atof(argv[++i]);
    else if (!strcmp(a, "--write-graph") && has_value) graph_path = argv[++i];
    else if (!strcmp(a, "--header")) header = true;
    else if (!strcmp(a, "--only") && has_value) {
      const char* name = argv[++i];
      for (int v = 0; v < VARIANTS; ++v)
        if (!strcmp(name, variant_names[v])) only = v;
      if (only < 0) usage();
    } else usage();
  }
  const char* specs[CHAIN_MAX_DEVICES] = {devices_arg, NULL};
  int device_count = 1;
  char* comma = strchr(devices_arg, ',');
  if (comma) {
    *comma = 0;
    specs[1] = comma + 1;
    device_count = 2;
  }
  if (!devices_arg[0] || nodes < 1 || switch_every < 1 || elements < 1 || rounds < 1 || warmup < 0) usage();

  chain_plan_t plan;
  chain_plan_make(nodes, device_count, switch_every, elements, &plan);
  static const int keys[CHAIN_MAX_DEVICES] = {1, 4};
  char* json = chain_plan_json(&plan, keys);

  /* Inputs: x in [-1, 1), constants in [0.25, 0.75) so the chain stays bounded. */
  size_t bytes = (size_t)elements * sizeof(float);
  float* x = malloc(bytes);
  float* constants[CHAIN_MAX_DEVICES] = {NULL, NULL};
  float* expected = malloc(bytes);
  float* result = malloc(bytes);
  double* samples = calloc(3 * VARIANTS * (size_t)rounds + 2 * (size_t)rounds, sizeof(double));
  if (!x || !expected || !result || !samples) return 1;
  fill(x, elements, 1, -1.0f, 1.0f);
  for (int d = 0; d < device_count; ++d) {
    constants[d] = malloc(bytes);
    if (!constants[d]) return 1;
    fill(constants[d], elements, 2 + (uint64_t)d, 0.25f, 0.75f);
  }
  chain_plan_reference(&plan, x, (const float* const*)constants, expected);
  if (graph_path) { /* the graph, and its inputs as GRAPH_x.npy, GRAPH_c0.npy ... */
    FILE* file = fopen(graph_path, "w");
    if (!file || fputs(json, file) < 0 || fclose(file)) {
      fprintf(stderr, "hgr_bench_chain: cannot write %s\n", graph_path);
      return 1;
    }
    int64_t shape[1] = {elements};
    const hgr_dtype_t float32 = {HGR_DTYPE_FLOAT, 32, 1};
    for (int i = 0; i <= device_count; ++i) {
      char path[1024], name[16];
      if (i) snprintf(name, sizeof(name), "c%d", i - 1);
      else snprintf(name, sizeof(name), "x");
      snprintf(path, sizeof(path), "%.*s_%s.npy", (int)(strlen(graph_path) - (strstr(graph_path, ".json") ? 5 : 0)),
               graph_path, name);
      check(hgr_npy_save_file(path, float32, 1, shape, i ? constants[i - 1] : x, bytes), "writing an input");
    }
  }

  /* hgr: everything once, up front. */
  hgr_instance_t* instance = NULL;
  hgr_graph_t* graph = NULL;
  hgr_executor_t* executor = NULL;
  check(hgr_instance_create(NULL, &instance), "creating the instance");
  check(hgr_graph_load_json(json, strlen(json), &graph), "loading the generated graph");
  hgr_device_binding_t bindings[CHAIN_MAX_DEVICES];
  for (int d = 0; d < device_count; ++d) bindings[d] = (hgr_device_binding_t){keys[d], specs[d]};
  hgr_executor_options_t options;
  hgr_executor_options_init(&options);
  options.bindings = bindings;
  options.binding_count = (size_t)device_count;
  check(hgr_executor_create(instance, graph, &options, &executor), "creating the executor");
  check(hgr_executor_set_input_by_name(executor, "x", x, bytes), "setting x");
  for (int d = 0; d < device_count; ++d) {
    char name[16];
    snprintf(name, sizeof(name), "c%d", d);
    check(hgr_executor_set_input_by_name(executor, name, constants[d], bytes), "setting a constant");
  }
  raw_chain_t* raw[VARIANTS] = {NULL};
  for (int v = RAW; v <= RAW_PER_NODE; ++v) {
    raw[v] = raw_chain_create(&plan, specs, HGR_BENCH_KERNEL_FILE, v == RAW_PER_NODE);
    raw_chain_set_inputs(raw[v], x, (const float* const*)constants);
  }

  measure_t m[VARIANTS];
  for (int v = 0; v < VARIANTS; ++v)
    m[v] = (measure_t){samples + (3 * (size_t)v) * rounds, samples + (3 * (size_t)v + 1) * rounds,
                       samples + (3 * (size_t)v + 2) * rounds};
  double* ratio = samples + 3 * VARIANTS * (size_t)rounds;         /* hgr / raw, per round */
  double* ratio_per_node = ratio + rounds;                          /* hgr / raw/node */
  for (int r = -warmup; r < rounds; ++r) {
    for (int turn = 0; turn < VARIANTS; ++turn) {
      int v = (turn + (r + warmup)) % VARIANTS; /* rotate who goes first */
      if (only >= 0 && v != only) continue;
      double c0 = bench_thread_cpu_ns(), t0 = bench_now_ns(), t1;
      if (v == HGR) {
        check(hgr_executor_run(executor), "run");
        t1 = bench_now_ns();
        check(hgr_executor_wait(executor), "wait");
      } else {
        raw_chain_enqueue(raw[v]);
        t1 = bench_now_ns();
        raw_chain_wait(raw[v]);
      }
      double t2 = bench_now_ns(), c1 = bench_thread_cpu_ns();
      if (r < 0) continue;
      m[v].total[r] = t2 - t0;
      m[v].enqueue[r] = t1 - t0;
      m[v].host[r] = c1 - c0;
    }
    if (r >= 0 && only < 0) {
      ratio[r] = m[HGR].total[r] / m[RAW].total[r];
      ratio_per_node[r] = m[HGR].total[r] / m[RAW_PER_NODE].total[r];
    }
  }
  int commands = plan.command_count;
  if (only >= 0) {
    printf("%s only: %.3f ms/run, enqueue %.2f us/node, host CPU %.2f us/node\n", variant_names[only],
           bench_median(m[only].total, (size_t)rounds) / 1e6,
           bench_median(m[only].enqueue, (size_t)rounds) / 1e3 / commands,
           bench_median(m[only].host, (size_t)rounds) / 1e3 / commands);
    return 0;
  }

  /* The results, against the host reference. */
  double largest = 0;
  check(hgr_executor_get_output(executor, 0, result, bytes), "reading the output");
  bool ok = matches(result, expected, elements, &largest);
  for (int v = RAW; v <= RAW_PER_NODE && ok; ++v) {
    raw_chain_read_result(raw[v], result);
    ok = matches(result, expected, elements, &largest);
  }
  if (!ok) {
    fprintf(stderr, "hgr_bench_chain: a result differs from the host reference by %g\n", largest);
    return 1;
  }

  double median_ms[VARIANTS], host_us[VARIANTS], enqueue_us[VARIANTS];
  for (int v = 0; v < VARIANTS; ++v) {
    median_ms[v] = bench_median(m[v].total, (size_t)rounds) / 1e6;
    host_us[v] = bench_median(m[v].host, (size_t)rounds) / 1e3 / commands;
    enqueue_us[v] = bench_median(m[v].enqueue, (size_t)rounds) / 1e3 / commands;
  }
  for (int r = 0; r < rounds; ++r) m[RAW].host[r] = m[HGR].host[r] - m[RAW].host[r]; /* reused: host added */
  double added_host_us = bench_median(m[RAW].host, (size_t)rounds) / 1e3 / commands;
  double median_ratio = bench_median(ratio, (size_t)rounds);
  double median_ratio_per_node = bench_median(ratio_per_node, (size_t)rounds);

  char devices_text[300];
  snprintf(devices_text, sizeof(devices_text), "%s%s%s", specs[0], device_count > 1 ? " / " : "",
           device_count > 1 ? specs[1] : "");
  if (header)
    printf("| chain | devices | kernels + copies | hgr ms/run | raw ms/run | **hgr / raw** | host per node, hgr / raw "
           "(us) | host hgr adds per node (us) | enqueue per node, hgr / raw (us) | raw/node ms/run (hgr / it) | "
           "rounds |\n"
           "|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n");
  printf("| %s | %s | %d + %d | %.3f | %.3f | **%.3f** | %.2f / %.2f | %+.2f | %.2f / %.2f | %.3f (%.3f) | %d |\n",
         label, devices_text, plan.nodes, commands - plan.nodes, median_ms[HGR], median_ms[RAW], median_ratio,
         host_us[HGR], host_us[RAW], added_host_us, enqueue_us[HGR], enqueue_us[RAW], median_ms[RAW_PER_NODE],
         median_ratio_per_node, rounds);
  fflush(stdout);

  if (targets_path && (target_ratio > 0 || target_host_us > 0)) {
    FILE* file = fopen(targets_path, "a");
    if (!file) {
      fprintf(stderr, "hgr_bench_chain: cannot append to %s\n", targets_path);
      return 1;
    }
    if (target_ratio > 0)
      fprintf(file, "| %s on %s: hgr time per run / raw OpenCL | %.3f | ≤ %.2f | %s |\n", label, devices_text,
              median_ratio, target_ratio, median_ratio <= target_ratio ? "PASS" : "MISS");
    if (target_host_us > 0)
      fprintf(file, "| %s on %s: host time hgr adds per node over raw OpenCL | %+.2f us | ≤ %.2f us | %s |\n", label,
              devices_text, added_host_us, target_host_us, added_host_us <= target_host_us ? "PASS" : "MISS");
    fclose(file);
  }

  for (int v = RAW; v <= RAW_PER_NODE; ++v) raw_chain_release(raw[v]);
  hgr_executor_release(executor);
  hgr_graph_release(graph);
  hgr_instance_release(instance);
  chain_plan_free(&plan);
  free(json);
  free(x);
  for (int d = 0; d < device_count; ++d) free(constants[d]);
  free(expected);
  free(result);
  free(samples);
  return 0;
}
