/* Copy benchmark: one __copy node between two devices, from 4 KiB to 256 MiB, hgr
 * against raw OpenCL and memcpy, measured interleaved in one process.
 *
 * usage: hgr_bench_copy --from SPEC --to SPEC [--min-bytes B] [--max-bytes B]
 *                       [--factor F] [--seconds S] [--label TEXT] [--header]
 *                       [--targets FILE] [--target-ratio X]
 *
 * Per size (min-bytes, times factor, up to max-bytes; default 4 KiB to 256 MiB by 4):
 *   hgr       a graph x (key 1) -> __copy -> output (key 4), keys bound to from and
 *             to; x is set once, and a run is hgr_executor_run + hgr_executor_wait;
 *   raw       raw_copy.c: clEnqueueCopyBuffer when both devices share a context;
 *             otherwise host staging (read, then write), write from the mapped
 *             source, and read into the mapped destination, the last two also in
 *             16 MiB commands for copies larger than that;
 *   memcpy    the same bytes between two host buffers: the ceiling, since every
 *             copy on these CPU drivers is a memcpy.
 * Per size and raw path, a pass interleaves hgr, that path and memcpy: each round
 * runs the three once, in rotating order; a figure is the median over the rounds (as
 * many as fit in --seconds per size, split over the passes, 7 to 201). Passes are
 * separate because one raw path can slow the next command on the same driver, which
 * would bias a single interleaving of everything. GB/s are 1e9 bytes per second.
 * "hgr / best raw" is the median over the rounds of raw time / hgr time in the pass of
 * the raw path with the lowest median at that size; hgr's GB/s, enqueue time (in
 * hgr_executor_run) and memcpy's come from that pass too. The raw buffers are made
 * per size, as hgr's are. Every variant's result is checked once per size.
 *
 * Prints markdown table rows (the header too with --header). --targets appends one
 * row to FILE: the smallest "hgr / best raw" over the sizes against --target-ratio. */
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench_util.h"
#include "hgr/hgr.h"
#include "raw_copy.h"

enum {
  HGR,
  MEMCPY,
  RAW_DIRECT,
  RAW_STAGED,
  RAW_MAP_SOURCE,
  RAW_MAP_DESTINATION,
  RAW_MAP_SOURCE_CHUNKED,
  RAW_MAP_DESTINATION_CHUNKED,
  VARIANTS
};
static const char* const variant_names[VARIANTS] = {"hgr",
                                                    "memcpy",
                                                    "raw copy",
                                                    "raw staged",
                                                    "raw map source",
                                                    "raw map destination",
                                                    "raw map source, chunked",
                                                    "raw map destination, chunked"};
/* The raw map paths are also measured with their transfer split into commands of
 * this size, for copies larger than it (see raw_copy.h). */
#define RAW_CHUNK_BYTES ((size_t)16 << 20)

static void check(hgr_status_t status, const char* what) {
  if (!status) return;
  char* text = hgr_status_to_string(status);
  fprintf(stderr, "hgr_bench_copy: %s: %s\n", what, text ? text : "out of memory");
  free(text);
  hgr_status_free(status);
  exit(1);
}

static void usage(void) {
  fprintf(stderr,
          "usage: hgr_bench_copy --from SPEC --to SPEC [--min-bytes B] [--max-bytes B] [--factor F]\n"
          "                      [--seconds S] [--label TEXT] [--header] [--targets FILE] [--target-ratio X]\n");
  exit(2);
}

static char* copy_graph_json(size_t bytes) {
  bench_text_t text = {0};
  bench_text_append(&text,
                    "{\n  \"nodes\": [\n    {\"op\": \"null\", \"name\": \"x\", \"inputs\": []},\n"
                    "    {\"op\": \"tvm_op\", \"name\": \"copy_1\", \"attrs\": {\"func_name\": \"__copy\", "
                    "\"num_inputs\": \"1\", \"num_outputs\": \"1\", \"flatten_data\": \"0\"},\n"
                    "     \"inputs\": [[0, 0, 0]]}\n"
                    "  ],\n  \"arg_nodes\": [0],\n  \"node_row_ptr\": [0, 1, 2],\n  \"heads\": [[1, 0, 0]],\n"
                    "  \"attrs\": {\n    \"storage_id\": [\"list_int\", [0, 1]],\n"
                    "    \"device_index\": [\"list_int\", [1, 4]],\n"
                    "    \"dltype\": [\"list_str\", [\"float32\", \"float32\"]],\n"
                    "    \"shape\": [\"list_shape\", [[%zu], [%zu]]]\n  }\n}\n",
                    bytes / 4, bytes / 4);
  return text.data;
}

static void size_text(size_t bytes, char* out, size_t capacity) {
  if (bytes >= (1u << 20)) snprintf(out, capacity, "%zu MiB", bytes >> 20);
  else snprintf(out, capacity, "%zu KiB", bytes >> 10);
}

/* Runs variant v once; returns its wall time in ns, and for hgr the time spent in
 * hgr_executor_run (enqueueing) in *out_enqueue_ns. */
static double run_variant(int v, hgr_executor_t* executor, raw_copy_t* raw, void* host_a, void* host_b,
                          size_t bytes, double* out_enqueue_ns) {
  double t0 = bench_now_ns();
  switch (v) {
    case HGR:
      check(hgr_executor_run(executor), "run");
      if (out_enqueue_ns) *out_enqueue_ns = bench_now_ns() - t0;
      check(hgr_executor_wait(executor), "wait");
      break;
    case MEMCPY: memcpy(host_b, host_a, bytes); break;
    case RAW_DIRECT: raw_copy_direct(raw, bytes); break;
    case RAW_STAGED: raw_copy_staged(raw, bytes); break;
    case RAW_MAP_SOURCE: raw_copy_map_source(raw, bytes); break;
    case RAW_MAP_DESTINATION: raw_copy_map_destination(raw, bytes); break;
    case RAW_MAP_SOURCE_CHUNKED: raw_copy_map_source_chunked(raw, bytes, RAW_CHUNK_BYTES); break;
    case RAW_MAP_DESTINATION_CHUNKED: raw_copy_map_destination_chunked(raw, bytes, RAW_CHUNK_BYTES); break;
  }
  return bench_now_ns() - t0;
}

int main(int argc, char** argv) {
  const char* from = NULL;
  const char* to = NULL;
  const char* label = "copy";
  const char* targets_path = NULL;
  size_t min_bytes = 4096, max_bytes = (size_t)256 << 20, factor = 4;
  double seconds = 0.6, target_ratio = 0;
  bool header = false;
  for (int i = 1; i < argc; ++i) {
    const char* a = argv[i];
    bool has_value = i + 1 < argc;
    if (!strcmp(a, "--from") && has_value) from = argv[++i];
    else if (!strcmp(a, "--to") && has_value) to = argv[++i];
    else if (!strcmp(a, "--min-bytes") && has_value) min_bytes = strtoull(argv[++i], NULL, 0);
    else if (!strcmp(a, "--max-bytes") && has_value) max_bytes = strtoull(argv[++i], NULL, 0);
    else if (!strcmp(a, "--factor") && has_value) factor = strtoull(argv[++i], NULL, 0);
    else if (!strcmp(a, "--seconds") && has_value) seconds = atof(argv[++i]);
    else if (!strcmp(a, "--label") && has_value) label = argv[++i];
    else if (!strcmp(a, "--targets") && has_value) targets_path = argv[++i];
    else if (!strcmp(a, "--target-ratio") && has_value) target_ratio = atof(argv[++i]);
    else if (!strcmp(a, "--header")) header = true;
    else usage();
  }
  if (!from || !to || min_bytes < 4 || min_bytes % 4 || max_bytes < min_bytes || factor < 2 || seconds <= 0) usage();

  hgr_instance_t* instance = NULL;
  check(hgr_instance_create(NULL, &instance), "creating the instance");
  /* The raw buffers are made per size, as hgr's are: a driver may back a large
   * buffer differently (e.g. with huge pages), which would favour one side. */
  raw_copy_t* probe = raw_copy_create(from, to, 4096);
  bool same_context = raw_copy_same_context(probe);
  raw_copy_release(probe);
  bool enabled_any[VARIANTS] = {true, true, same_context, !same_context, !same_context, !same_context,
                                !same_context, !same_context};
  unsigned char* source = malloc(max_bytes);
  unsigned char* host_b = malloc(max_bytes);
  unsigned char* result = malloc(max_bytes);
  double* samples = malloc(5 * 201 * sizeof(double));
  if (!source || !host_b || !result || !samples) {
    fprintf(stderr, "hgr_bench_copy: out of memory\n");
    return 1;
  }
  for (size_t i = 0; i < max_bytes; ++i) source[i] = (unsigned char)(i * 7 + (i >> 12));
  memset(host_b, 0, max_bytes);

  if (header) {
    printf("| %s | size | memcpy GB/s | %s | hgr GB/s | hgr path | hgr enqueue (us) | **hgr / best raw** | rounds |\n",
           "copy", same_context ? "raw clEnqueueCopyBuffer GB/s"
                                : "raw staged / map source / map destination GB/s (the map paths in 16 MiB commands)");
    printf("|---|---:|---:|---:|---:|---|---:|---:|---:|\n");
  }
  double worst_ratio = 1e9;
  char worst_size[32] = "";
  int misses = 0, sizes = 0;
  for (size_t bytes = min_bytes; bytes <= max_bytes; bytes *= factor) {
    bool enabled[VARIANTS];
    for (int v = 0; v < VARIANTS; ++v)
      enabled[v] = enabled_any[v] && (bytes > RAW_CHUNK_BYTES ||
                                      (v != RAW_MAP_SOURCE_CHUNKED && v != RAW_MAP_DESTINATION_CHUNKED));
    char* json = copy_graph_json(bytes);
    hgr_graph_t* graph = NULL;
    hgr_executor_t* executor = NULL;
    check(hgr_graph_load_json(json, strlen(json), &graph), "loading the copy graph");
    free(json);
    hgr_device_binding_t bindings[2] = {{1, from}, {4, to}};
    hgr_executor_options_t options;
    hgr_executor_options_init(&options);
    options.bindings = bindings;
    options.binding_count = 2;
    check(hgr_executor_create(instance, graph, &options, &executor), "creating the executor");
    check(hgr_executor_set_input(executor, 0, source, bytes), "setting x");
    hgr_copy_info_t info;
    check(hgr_executor_copy_info(executor, 1, &info), "copy info");
    raw_copy_t* raw = raw_copy_create(from, to, bytes);
    raw_copy_fill_source(raw, source, bytes);

    /* Check every variant once, then warm up. */
    for (int v = 0; v < VARIANTS; ++v) {
      if (!enabled[v]) continue;
      if (v >= RAW_DIRECT) raw_copy_clear_destination(raw, bytes);
      memset(host_b, 0, bytes);
      run_variant(v, executor, raw, source, host_b, bytes, NULL);
      if (v == HGR) check(hgr_executor_get_output(executor, 0, result, bytes), "reading the output");
      else if (v == MEMCPY) memcpy(result, host_b, bytes);
      else raw_copy_read_destination(raw, result, bytes);
      if (memcmp(result, source, bytes)) {
        fprintf(stderr, "hgr_bench_copy: %s copied %zu bytes wrongly\n", variant_names[v], bytes);
        return 1;
      }
    }
    /* One pass per raw path: hgr, that path and memcpy interleaved. Separate passes,
     * because one raw path can slow the next command on the same driver (rusticl
     * after a write-invalidate map), which would bias a three-way interleaving. */
    typedef struct pass_t {
      double hgr, raw, memcpy, ratio, enqueue;
      int rounds;
    } pass_t;
    pass_t passes[VARIANTS] = {{0}};
    int pass_count = 0, best = -1;
    for (int p = RAW_DIRECT; p < VARIANTS; ++p) pass_count += enabled[p];
    for (int p = RAW_DIRECT; p < VARIANTS; ++p) {
      if (!enabled[p]) continue;
      const int members[3] = {HGR, MEMCPY, p};
      double estimate = 0;
      for (int m = 0; m < 3; ++m) estimate += run_variant(members[m], executor, raw, source, host_b, bytes, NULL);
      int rounds = (int)(seconds / pass_count * 1e9 / estimate);
      rounds = rounds < 7 ? 7 : rounds > 201 ? 201 : rounds;
      double* times[3] = {samples, samples + 201, samples + 2 * 201};
      double* enqueue = samples + 3 * 201;
      double* ratio = samples + 4 * 201;
      for (int r = 0; r < rounds; ++r)
        for (int turn = 0; turn < 3; ++turn) {
          int m = (turn + r) % 3;
          times[m][r] = run_variant(members[m], executor, raw, source, host_b, bytes, &enqueue[r]);
        }
      for (int r = 0; r < rounds; ++r) ratio[r] = times[2][r] / times[0][r];
      passes[p] = (pass_t){bench_median(times[0], (size_t)rounds), bench_median(times[2], (size_t)rounds),
                           bench_median(times[1], (size_t)rounds), bench_median(ratio, (size_t)rounds),
                           bench_median(enqueue, (size_t)rounds), rounds};
      if (best < 0 || passes[p].raw < passes[best].raw) best = p;
    }
    double median_ratio = passes[best].ratio;

    char size[32], raw_text[96], path[64];
    size_text(bytes, size, sizeof(size));
#define GBPS(ns) ((double)bytes / (ns))
    if (same_context) snprintf(raw_text, sizeof(raw_text), "%.2f", GBPS(passes[RAW_DIRECT].raw));
    else if (!enabled[RAW_MAP_SOURCE_CHUNKED])
      snprintf(raw_text, sizeof(raw_text), "%.2f / %.2f / %.2f", GBPS(passes[RAW_STAGED].raw),
               GBPS(passes[RAW_MAP_SOURCE].raw), GBPS(passes[RAW_MAP_DESTINATION].raw));
    else
      snprintf(raw_text, sizeof(raw_text), "%.2f / %.2f / %.2f (%.2f / %.2f)", GBPS(passes[RAW_STAGED].raw),
               GBPS(passes[RAW_MAP_SOURCE].raw), GBPS(passes[RAW_MAP_DESTINATION].raw),
               GBPS(passes[RAW_MAP_SOURCE_CHUNKED].raw), GBPS(passes[RAW_MAP_DESTINATION_CHUNKED].raw));
    if (info.chunks > 1) snprintf(path, sizeof(path), "%s, %u chunks", info.path, info.chunks);
    else snprintf(path, sizeof(path), "%s", info.path);
    printf("| %s | %s | %.2f | %s | %.2f | %s | %.1f | **%.3f** | %d |\n", label, size, GBPS(passes[best].memcpy),
           raw_text, GBPS(passes[best].hgr), path, passes[best].enqueue / 1e3, median_ratio, passes[best].rounds);
#undef GBPS
    fflush(stdout);
    if (median_ratio < worst_ratio) {
      worst_ratio = median_ratio;
      snprintf(worst_size, sizeof(worst_size), "%s", size);
    }
    if (target_ratio > 0 && median_ratio < target_ratio) ++misses;
    ++sizes;
    raw_copy_release(raw);
    hgr_executor_release(executor);
    hgr_graph_release(graph);
    if (bytes > SIZE_MAX / factor) break;
  }

  if (targets_path && target_ratio > 0) {
    FILE* file = fopen(targets_path, "a");
    if (!file) {
      fprintf(stderr, "hgr_bench_copy: cannot append to %s\n", targets_path);
      return 1;
    }
    char verdict[48] = "PASS";
    if (misses) snprintf(verdict, sizeof(verdict), "MISS (%d of %d sizes)", misses, sizes);
    fprintf(file, "| copy %s → %s: hgr / best raw path, worst size (%s) | %.3f | ≥ %.2f at every size | %s |\n", from,
            to, worst_size, worst_ratio, target_ratio, verdict);
    fclose(file);
  }
  hgr_instance_release(instance);
  free(source);
  free(host_b);
  free(result);
  free(samples);
  return 0;
}
