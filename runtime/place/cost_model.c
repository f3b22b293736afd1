/* The cost model of AUTO and STAGES (place_internal.h): how long each op node takes
 * on each candidate device, and what a copy between two devices costs, measured by
 * calibration runs and kept in a cost cache on disk.
 *
 * Keys. A node's time depends on its signature (op, input dtypes and shapes, attrs
 * sorted by name without TVM's "hash", output count) and on the device's identity
 * (platform name, device name, device version, driver version: the program cache's
 * discipline), so nodes with equal signatures, and devices with equal identities
 * (pocl:0 and pocl:1), share one measurement. A copy's time depends on both
 * identities, the pair class and the byte count; each ordered pair is measured at
 * two sizes, which give its latency and per-byte time.
 *
 * Ranks. A slot of a rank that measured its own devices (options.rank_measures,
 * hgr_place_measure_rank) takes that rank's node and copy times. Any other slot of
 * another rank ("r1/pocl:0") is measured on the local device of the same spec; its
 * items are keyed by that device's identity, so a local device is measured once
 * however many ranks name it. A copy between slots of two ranks is never measured
 * here: it costs the options' cross-host latency and per-byte time. Timelines join
 * CPU devices of one rank only (each rank has its own host).
 *
 * Calibration. A node: a one-node graph (its distinct input entries as graph
 * inputs, filled with random floats or zero integers) run on the device by an
 * executor with profiling: one warm-up run (which also builds the programs), then a
 * few timed runs; the time is the median over runs of the span of the node's
 * commands (first start to last end). Where the driver gives no usable timestamps
 * (rusticl 22.3 stamps kernels with zeros or end = start + 1 ns, and its clock
 * cannot be put on the host's) or the commands span two devices (a staged copy across
 * contexts, whose clocks differ), the host's wall time of hgr_executor_run +
 * hgr_executor_wait is used instead. A copy: a graph whose input lives on the first
 * device and is copied by a `__copy` node to the second. A device's launch
 * overhead: 16 independent copies of its cheapest node on its in-order queue; the
 * idle time between one's end and the next one's start, which a node's own span
 * leaves out, is added to every node time there (and to direct copies into it);
 * host-timed devices have it in their times already.
 *
 * A node that runs nothing (`__nop`, reshape-likes, which memory planning makes
 * aliases) costs 0; one a device cannot run, INFINITY there.
 *
 * The cache: one text entry of the on-disk store (base/store.h) per device identity
 * ("cost-<hash>.tsv") and one per device pair ("cost-copy-<hash>.tsv"), with lines
 * "key<TAB>ms"; a line that is not that is skipped with a log line; files are
 * rewritten whole and atomically (a reader sees the old or the new file), with the
 * entries another process stored since they were read. */
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>
#include <string.h>

#include "alloc.h"
#include "file.h"
#include "ops.h"
#include "store.h"
#include "text.h"
#include "place_internal.h"

#define SMALL_COPY_BYTES 4096u
#define LARGE_COPY_BYTES (4u << 20)
/* Timed runs after the warm-up, fewer for slow nodes (Oclgrind simulates). */
#define TIMED_RUNS 7
#define TIMED_RUNS_SLOW 3
#define SLOW_MS 20.0
#define VERY_SLOW_MS 200.0
/* Copies of a node in the graph that measures a device's launch overhead. */
#define REPLICAS 16


static void log_line(const hgr_place_options_t* options, const char* format, ...) HGR_PRINTF(2, 3);
static void log_line(const hgr_place_options_t* options, const char* format, ...) {
  if (!options || !options->log) return;
  char line[1024];
  va_list args;
  va_start(args, format);
  vsnprintf(line, sizeof(line), format, args);
  va_end(args);
  options->log(options->log_user, line);
}

/* The text (from text->allocator, owned by the caller), or NULL when a step ran out of memory.
 * Tabs and line breaks become spaces: keys are one field of one line. */
static char* text_take(hgr__text_t* text) {
  char* data = hgr__text_take(text);
  for (char* at = data; at && *at; ++at)
    if (*at == '\t' || *at == '\n' || *at == '\r') *at = ' ';
  return data;
}

/* ---- keys ---------------------------------------------------------------------------------- */

static void add_identity(hgr__text_t* text, const hgr_device_info_t* info) {
  hgr__text_appendf(text, "%s|%s|%s|%s", info->platform_name, info->name, info->version, info->driver_version);
}

static void add_entry(hgr__text_t* text, const hgr__entry_t* entry) {
  char dtype[32], shape[256];
  hgr_dtype_format(entry->dtype, dtype, sizeof(dtype));
  hgr__text_appendf(text, "%s%s", dtype, hgr__entry_shape(entry, shape, sizeof(shape)));
}

static int by_attr_key(const void* a, const void* b) {
  const hgr__attr_t* x = *(const hgr__attr_t* const*)a;
  const hgr__attr_t* y = *(const hgr__attr_t* const*)b;
  return strcmp(x->key, y->key);
}

/* "conv2d|in=float32[1, 3, 32, 32],float32[8, 3, 3, 3]|attrs=padding=...;strides=...|out=1" */
static void add_signature(hgr__text_t* text, const hgr_graph_t* graph, uint32_t node_id) {
  const hgr__node_t* node = &graph->nodes[node_id];
  hgr__text_appendf(text, "%s|in=", node->func_name);
  for (uint32_t k = 0; k < node->input_count; ++k) {
    if (k) hgr__text_appendf(text, ",");
    add_entry(text, &graph->entries[hgr__graph_entry_id(graph, node->inputs[k])]);
  }
  hgr__text_appendf(text, "|attrs=");
  const hgr__attr_t** sorted = hgr__alloc(text->allocator, (node->attr_count + 1) * sizeof(*sorted));
  if (!sorted) {
    text->failed = true;
    return;
  }
  for (uint32_t a = 0; a < node->attr_count; ++a) sorted[a] = &node->attrs[a];
  qsort(sorted, node->attr_count, sizeof(*sorted), by_attr_key);
  bool first = true;
  for (uint32_t a = 0; a < node->attr_count; ++a) {
    if (!strcmp(sorted[a]->key, "hash")) continue; /* TVM's function hash: not a cost */
    hgr__text_appendf(text, "%s%s=%s", first ? "" : ";", sorted[a]->key, sorted[a]->value);
    first = false;
  }
  hgr__free(text->allocator, sorted);
  hgr__text_appendf(text, "|out=%u", node->num_outputs);
}

/* ---- the cache files ------------------------------------------------------------------------ */

typedef struct cache_file_t {
  hgr_allocator_t allocator; /* the calibration's: path, keys and ms are from it */
  char name[HGR__STORE_NAME_MAX]; /* "<prefix><hash of the identity>.tsv": one per device identity or pair */
  char* path;    /* the file in the cache directory; NULL when there is no cache (off,
                    or no directory), and the entries live only in memory */
  char** keys;
  double* ms;
  size_t count, capacity;
  bool dirty;        /* holds entries the file does not */
} cache_file_t;

static bool file_put(cache_file_t* file, const char* key, double ms) {
  for (size_t i = 0; i < file->count; ++i)
    if (!strcmp(file->keys[i], key)) {
      file->ms[i] = ms;
      return true;
    }
  if (file->count == file->capacity) {
    size_t capacity = file->capacity ? 2 * file->capacity : 16;
    char** keys = hgr__realloc(file->allocator, file->keys, capacity * sizeof(char*));
    if (!keys) return false;
    file->keys = keys;
    double* ms_grown = hgr__realloc(file->allocator, file->ms, capacity * sizeof(double));
    if (!ms_grown) return false;
    file->ms = ms_grown;
    file->capacity = capacity;
  }
  char* copy = hgr__copy_text(file->allocator, key);
  if (!copy) return false;
  file->keys[file->count] = copy;
  file->ms[file->count++] = ms;
  return true;
}

static void file_free(cache_file_t* file) {
  for (size_t i = 0; i < file->count; ++i) hgr__free(file->allocator, file->keys[i]);
  hgr__free(file->allocator, file->keys);
  hgr__free(file->allocator, file->ms);
  hgr__free(file->allocator, file->path);
}

static bool file_get(const cache_file_t* file, const char* key, double* out_ms) {
  for (size_t i = 0; i < file->count; ++i)
    if (!strcmp(file->keys[i], key)) {
      *out_ms = file->ms[i];
      return true;
    }
  return false;
}

/* Reads the file's lines; an unreadable file or line is logged (options may be
 * NULL: quietly) and skipped. */
static hgr_status_t file_load(cache_file_t* file, const hgr_place_options_t* options) {
  if (!file->path) return HGR_OK;
  void* data = NULL;
  size_t length = 0;
  hgr_status_t status =
      hgr__store_read_file(file->allocator, file->path, HGR__FILE_MAX_COST_CACHE_BYTES, &data, &length);
  if (status) log_line(options, "cost cache: %s (calibrating anew)", hgr_status_message(status));
  hgr_status_free(status);
  if (!data) return HGR_OK; /* a miss, or unreadable */
  char* text = data;
  size_t line_number = 0;
  for (size_t at = 0; at < length;) {
    size_t end = at;
    while (end < length && text[end] != '\n') ++end;
    ++line_number;
    /* the line is text[at, end) */
    size_t line_length = end - at;
    char* line = hgr__alloc(file->allocator, line_length + 1);
    if (!line) {
      hgr__free(file->allocator, data);
      return HGR_STATUS(HGR_STATUS_RESOURCE_EXHAUSTED, "reading the cost cache %s: out of host memory", file->path);
    }
    memcpy(line, text + at, line_length);
    line[line_length] = 0;
    at = end + 1;
    if (!line_length) {
      hgr__free(file->allocator, line);
      continue;
    }
    char* tab = strchr(line, '\t');
    const char* why = NULL;
    double ms = 0.0;
    if (!tab || tab == line) {
      why = "not \"key<TAB>ms\"";
    } else {
      *tab = 0;
      char* after = NULL;
      errno = 0;
      ms = strtod(tab + 1, &after);
      if (after == tab + 1 || *after || errno || !isfinite(ms) || ms < 0.0)
        why = "its time is not a finite number of milliseconds >= 0";
    }
    if (why)
      log_line(options, "cost cache %s: line %zu skipped: %s", file->path, line_number, why);
    else if (!file_put(file, line, ms)) {
      hgr__free(file->allocator, line);
      hgr__free(file->allocator, data);
      return HGR_STATUS(HGR_STATUS_RESOURCE_EXHAUSTED, "reading the cost cache %s: out of host memory", file->path);
    }
    hgr__free(file->allocator, line);
  }
  hgr__free(file->allocator, data);
  return HGR_OK;
}

/* Writes the file whole, atomically, with the entries another process stored
 * since it was read; a failure is logged, not returned (the cache only saves
 * time). */
static void file_store(cache_file_t* file, const hgr_place_options_t* options) {
  if (!file->path || !file->dirty) return;
  cache_file_t disk;
  memset(&disk, 0, sizeof(disk));
  disk.allocator = file->allocator;
  disk.path = file->path;
  hgr_status_free(file_load(&disk, NULL));
  for (size_t i = 0; i < disk.count; ++i) {
    double ms = 0.0;
    if (!file_get(file, disk.keys[i], &ms) && !file_put(file, disk.keys[i], disk.ms[i])) break;
  }
  disk.path = NULL;
  file_free(&disk);
  hgr__text_t text = {.allocator = file->allocator};
  for (size_t i = 0; i < file->count; ++i) hgr__text_appendf(&text, "%s\t%.9g\n", file->keys[i], file->ms[i]);
  if (text.failed) {
    log_line(options, "cost cache %s: not written: out of host memory", file->path);
  } else {
    hgr_status_t status =
        hgr__store_write_file(file->allocator, file->path, text.data ? text.data : "", text.length, NULL, 0);
    if (status) log_line(options, "cost cache: %s", hgr_status_message(status));
    hgr_status_free(status);
  }
  hgr__free(file->allocator, text.data);
}

/* ---- what to measure ------------------------------------------------------------------------- */

typedef enum item_kind_t { ITEM_NODE, ITEM_COPY, ITEM_LAUNCH } item_kind_t;

/* One measurement: a node signature on a device identity, a copy of `bytes`
 * between two devices, or a device identity's launch overhead (measured with the
 * cheapest node of the problem there). */
typedef struct item_t {
  item_kind_t kind;
  char* key;
  size_t file;       /* index into the cache files */
  uint32_t node_id;  /* ITEM_NODE: a node with this signature; ITEM_LAUNCH: the node
                        it replicates, chosen when it is calibrated */
  size_t slot;       /* the device it is measured on (ITEM_COPY: from) */
  size_t to_slot;    /* ITEM_COPY */
  uint64_t bytes;    /* ITEM_COPY */
  double ms;
  bool known;
} item_t;

typedef struct calibration_t {
  hgr_allocator_t allocator; /* the problem's: files, items, keys, calibration graphs */
  const hgr__place_problem_t* problem;
  const hgr_place_options_t* options;
  hgr__store_t store; /* without a directory: nothing is read or stored */
  cache_file_t* files;
  size_t file_count, file_capacity;
  item_t* items;
  size_t item_count, item_capacity;
} calibration_t;

static void calibration_free(calibration_t* cal) {
  for (size_t f = 0; f < cal->file_count; ++f) file_free(&cal->files[f]);
  hgr__free(cal->allocator, cal->files);
  for (size_t i = 0; i < cal->item_count; ++i) hgr__free(cal->allocator, cal->items[i].key);
  hgr__free(cal->allocator, cal->items);
  hgr__store_close(&cal->store);
}

#define OUT_OF_MEMORY(what) HGR_STATUS(HGR_STATUS_RESOURCE_EXHAUSTED, "cost model: %s: out of host memory", what)

/* The cache file named "<prefix><hash of name>.tsv", added (and loaded) when new. */
static hgr_status_t find_file(calibration_t* cal, const char* prefix, const char* name, size_t* out_file) {
  /* by name, with or without a cache: the launch overhead's choice of node looks
   * among the items of its own identity's file */
  char file_name[HGR__STORE_NAME_MAX];
  hgr__store_key_name(prefix, name, ".tsv", file_name);
  for (size_t f = 0; f < cal->file_count; ++f)
    if (!strcmp(cal->files[f].name, file_name)) {
      *out_file = f;
      return HGR_OK;
    }
  char* path = NULL;
  if (cal->store.directory) HGR_RETURN_IF_ERROR(hgr__store_path(&cal->store, file_name, &path));
  if (cal->file_count == cal->file_capacity) {
    size_t capacity = cal->file_capacity ? 2 * cal->file_capacity : 4;
    cache_file_t* grown = hgr__realloc(cal->allocator, cal->files, capacity * sizeof(*grown));
    if (!grown) {
      hgr__free(cal->allocator, path);
      return OUT_OF_MEMORY("cache files");
    }
    cal->files = grown;
    cal->file_capacity = capacity;
  }
  cache_file_t* file = &cal->files[cal->file_count++];
  memset(file, 0, sizeof(*file));
  file->allocator = cal->allocator;
  snprintf(file->name, sizeof(file->name), "%s", file_name);
  file->path = path;
  *out_file = cal->file_count - 1;
  return file_load(file, cal->options);
}

/* The item of key (taking key), added when new; its index in *out_item. */
static hgr_status_t find_item(calibration_t* cal, item_t fresh, size_t* out_item) {
  for (size_t i = 0; i < cal->item_count; ++i)
    if (cal->items[i].file == fresh.file && !strcmp(cal->items[i].key, fresh.key)) {
      hgr__free(cal->allocator, fresh.key);
      *out_item = i;
      return HGR_OK;
    }
  if (cal->item_count == cal->item_capacity) {
    size_t capacity = cal->item_capacity ? 2 * cal->item_capacity : 16;
    item_t* grown = hgr__realloc(cal->allocator, cal->items, capacity * sizeof(*grown));
    if (!grown) {
      hgr__free(cal->allocator, fresh.key);
      return OUT_OF_MEMORY("items");
    }
    cal->items = grown;
    cal->item_capacity = capacity;
  }
  fresh.known = file_get(&cal->files[fresh.file], fresh.key, &fresh.ms);
  cal->items[cal->item_count] = fresh;
  *out_item = cal->item_count++;
  return HGR_OK;
}

static const hgr_device_info_t* slot_info(const calibration_t* cal, size_t slot) {
  return cal->problem->infos[slot];
}

/* Finds or adds `item` under key_text, kept in the cache file `<file_prefix><hash of
 * name>.tsv`; takes name and key_text (either may be NULL: out of memory, `what`). */
static hgr_status_t add_item(calibration_t* cal, const char* file_prefix, char* name, char* key_text, const char* what,
                             item_t item, size_t* out_item) {
  hgr_status_t status = !name || !key_text ? OUT_OF_MEMORY(what) : find_file(cal, file_prefix, name, &item.file);
  hgr__free(cal->allocator, name);
  if (status) {
    hgr__free(cal->allocator, key_text);
    return status;
  }
  item.key = key_text;
  return find_item(cal, item, out_item);
}

static char* identity_of(const calibration_t* cal, size_t slot) {
  hgr__text_t identity = {.allocator = cal->allocator};
  add_identity(&identity, slot_info(cal, slot));
  return text_take(&identity);
}

static hgr_status_t node_item(calibration_t* cal, uint32_t node_id, size_t slot, size_t* out_item) {
  char* name = identity_of(cal, slot);
  hgr__text_t key = {.allocator = cal->allocator};
  hgr__text_appendf(&key, "hgr-cost-1|%s|", name ? name : "");
  add_signature(&key, cal->problem->graph, node_id);
  return add_item(cal, "cost-", name, text_take(&key), "a node key",
                  (item_t){ITEM_NODE, NULL, 0, node_id, slot, 0, 0, 0.0, false}, out_item);
}

static hgr_status_t copy_item(calibration_t* cal, size_t from, size_t to, uint64_t bytes, size_t* out_item) {
  hgr_pair_class_t pair_class =
      hgr_instance_pair_class(cal->problem->instance, cal->problem->devices[from], cal->problem->devices[to]);
  hgr__text_t pair = {.allocator = cal->allocator}, key = {.allocator = cal->allocator};
  add_identity(&pair, slot_info(cal, from));
  hgr__text_appendf(&pair, "|");
  add_identity(&pair, slot_info(cal, to));
  hgr__text_appendf(&pair, "|%s", hgr_pair_class_name(pair_class));
  char* name = text_take(&pair);
  hgr__text_appendf(&key, "hgr-copy-1|%s|bytes=%llu", name ? name : "", (unsigned long long)bytes);
  return add_item(cal, "cost-copy-", name, text_take(&key), "a copy key",
                  (item_t){ITEM_COPY, NULL, 0, 0, from, to, bytes, 0.0, false}, out_item);
}

static hgr_status_t launch_item(calibration_t* cal, size_t slot, size_t* out_item) {
  char* name = identity_of(cal, slot);
  hgr__text_t key = {.allocator = cal->allocator};
  hgr__text_appendf(&key, "hgr-launch-1|%s", name ? name : "");
  return add_item(cal, "cost-", name, text_take(&key), "a launch key",
                  (item_t){ITEM_LAUNCH, NULL, 0, 0, slot, 0, 0, 0.0, false}, out_item);
}

/* ---- measuring ------------------------------------------------------------------------------ */

static int by_value(const void* a, const void* b) {
  double x = *(const double*)a, y = *(const double*)b;
  return x < y ? -1 : x > y;
}

static double median(double* values, size_t count) {
  qsort(values, count, sizeof(double), by_value);
  return count % 2 ? values[count / 2] : 0.5 * (values[count / 2 - 1] + values[count / 2]);
}

static uint64_t next_random(uint64_t* state) {
  *state ^= *state >> 12;
  *state ^= *state << 25;
  *state ^= *state >> 27;
  return *state * 2685821657736338717ull;
}

/* Random floats in [-1, 1) for float32 and float64 inputs; zeros otherwise (an
 * integer input may be an index). */
static void fill_input(void* data, size_t bytes, hgr_dtype_t dtype, uint64_t* state) {
  memset(data, 0, bytes);
  if (dtype.code != HGR_DTYPE_FLOAT) return;
  if (dtype.bits == 32)
    for (size_t i = 0; i < bytes / sizeof(float); ++i)
      ((float*)data)[i] = (float)((double)(next_random(state) >> 11) / 4503599627370496.0 - 1.0);
  else if (dtype.bits == 64)
    for (size_t i = 0; i < bytes / sizeof(double); ++i)
      ((double*)data)[i] = (double)(next_random(state) >> 11) / 4503599627370496.0 - 1.0;
}

/* The span of the commands of nodes first to first + count - 1 in the last run,
 * first start to last end (*out_span_ms), and the sum of each node's own span
 * (*out_nodes_ms), in ms: false (with *out_why) when they ran on more than one
 * device (their clocks differ) or the device's timestamps are not usable. Like the
 * profile reports (profile_report.c), a device whose clock cannot be put on the
 * host's, or that stamps a kernel with zeros or end <= start + 1 ns (rusticl
 * 22.3), counts as giving none. */
static bool device_spans(hgr_executor_t* executor, uint32_t first, uint32_t count, double* out_span_ms,
                         double* out_nodes_ms, const char** out_why) {
  static const char* const untimed = "host timing: the driver gives no usable profiling timestamps";
  uint64_t begin = UINT64_MAX, end = 0;
  uint64_t node_begin[REPLICAS], node_end[REPLICAS];
  for (uint32_t r = 0; r < count; ++r) node_begin[r] = UINT64_MAX, node_end[r] = 0;
  size_t device = SIZE_MAX;
  size_t commands = 0;
  *out_why = untimed;
  for (size_t c = 0; c < hgr_executor_command_count(executor); ++c) {
    hgr_command_profile_t profile;
    hgr_status_t status = hgr_executor_command_profile(executor, c, &profile);
    if (status) {
      hgr_status_free(status);
      return false;
    }
    if (profile.node_id < first || profile.node_id - first >= count || profile.kind == HGR_COMMAND_MARKER) continue;
    size_t here = hgr_executor_queue_info(executor, profile.queue).device_index;
    if (device != SIZE_MAX && here != device) {
      *out_why = "host timing: its commands run on two devices, whose clocks differ";
      return false;
    }
    device = here;
    if (!hgr_command_profile_has_duration(&profile)) return false;
    uint32_t r = profile.node_id - first;
    if (profile.start_ns < node_begin[r]) node_begin[r] = profile.start_ns;
    if (profile.end_ns > node_end[r]) node_end[r] = profile.end_ns;
    if (profile.start_ns < begin) begin = profile.start_ns;
    if (profile.end_ns > end) end = profile.end_ns;
    ++commands;
  }
  if (!commands) return false;
  for (uint32_t r = 0; r < count; ++r)
    if (!node_end[r]) return false;
  hgr_clock_offset_t offset;
  hgr_status_t status = hgr_executor_clock_offset(executor, device, &offset);
  if (status) {
    hgr_status_free(status);
    return false;
  }
  *out_why = "profiling";
  *out_span_ms = (double)(end - begin) / 1e6;
  *out_nodes_ms = 0.0;
  for (uint32_t r = 0; r < count; ++r) *out_nodes_ms += (double)(node_end[r] - node_begin[r]) / 1e6;
  return true;
}

static hgr_status_t timed_run(hgr_executor_t* executor, double* out_host_ms) {
  uint64_t begin = hgr__monotonic_ns();
  hgr_status_t status = hgr_executor_run(executor);
  if (!status) status = hgr_executor_wait(executor);
  *out_host_ms = (double)(hgr__monotonic_ns() - begin) / 1e6;
  return status;
}

/* Runs graph with bindings and times nodes first to first + replicas - 1 (median
 * over runs): with one, the time of one run of that node; with several (copies of
 * one node, independent, on one in-order queue), the launch overhead: the idle time
 * between one node's end and the next one's start, which profiling events leave out
 * of a node's own span (0 where the device gives no usable timestamps: then its
 * nodes are timed on the host, overhead included). *out_method: "profiling", or
 * why the host's clock was used. */
static hgr_status_t measure(const calibration_t* cal, hgr_graph_t* graph, const hgr_device_binding_t* bindings,
                            size_t binding_count, uint32_t first, uint32_t replicas, double* out_ms,
                            const char** out_method) {
  hgr_executor_options_t options;
  hgr_executor_options_init(&options);
  options.bindings = bindings;
  options.binding_count = binding_count;
  options.profiling = true;
  options.program_cache = cal->options->program_cache;
  options.kernels = cal->options->kernels;
  hgr_executor_t* executor = NULL;
  void* data = NULL;
  hgr_status_t status = hgr_executor_create(cal->problem->instance, graph, &options, &executor);
  uint64_t state = 0x9e3779b97f4a7c15ull;
  for (size_t i = 0; !status && i < hgr_executor_input_count(executor); ++i) {
    hgr_tensor_info_t info;
    status = hgr_executor_input_info(executor, i, &info);
    if (status) break;
    void* grown = hgr__realloc(cal->allocator, data, info.bytes ? info.bytes : 1);
    if (!grown) {
      status = OUT_OF_MEMORY("input data");
      break;
    }
    data = grown;
    fill_input(data, info.bytes, info.dtype, &state);
    status = hgr_executor_set_input(executor, i, data, info.bytes);
  }
  double warm_ms = 0.0;
  if (!status) status = timed_run(executor, &warm_ms);
  int runs = warm_ms > VERY_SLOW_MS ? 1 : warm_ms > SLOW_MS ? TIMED_RUNS_SLOW : TIMED_RUNS;
  double host[TIMED_RUNS], device[TIMED_RUNS];
  bool all_timed = true;
  const char* method = "profiling";
  for (int r = 0; !status && r < runs; ++r) {
    status = timed_run(executor, &host[r]);
    const char* why = NULL;
    double span = 0.0, nodes = 0.0;
    if (status) break;
    if (!device_spans(executor, first, replicas, &span, &nodes, &why)) {
      all_timed = false;
      method = why;
    }
    device[r] = replicas == 1 ? span : span > nodes ? (span - nodes) / (replicas - 1) : 0.0;
  }
  if (!status) {
    *out_method = method;
    *out_ms = all_timed ? median(device, (size_t)runs) : replicas == 1 ? median(host, (size_t)runs) : 0.0;
  }
  hgr__free(cal->allocator, data);
  hgr_executor_release(executor);
  return status;
}

/* A graph of `replicas` copies of node node_id: its distinct input entries become
 * graph inputs, read by every copy; every copy's outputs are graph outputs;
 * everything on one device (no device keys); from source's allocator. *out_node_id:
 * the first copy (the others follow it). */
static hgr_status_t node_graph(const hgr_graph_t* source, uint32_t node_id, uint32_t replicas,
                               hgr_graph_t** out_graph, uint32_t* out_node_id) {
  *out_graph = NULL;
  const hgr__node_t* node = &source->nodes[node_id];
  hgr_graph_t* graph = NULL;
  hgr_allocator_t allocator = hgr__graph_allocator(source);
  uint32_t count = node->input_count ? node->input_count : 1;
  uint32_t* distinct = hgr__alloc(allocator, count * sizeof(uint32_t)); /* source entry ids */
  hgr__entry_ref_t* refs = hgr__alloc(allocator, count * sizeof(hgr__entry_ref_t));
  hgr__entry_t* outputs = hgr__calloc(allocator, node->num_outputs ? node->num_outputs : 1, sizeof(hgr__entry_t));
  hgr_status_t status = HGR_OK;
  if (!distinct || !refs || !outputs) {
    status = OUT_OF_MEMORY("a calibration graph");
    goto cleanup;
  }
  status = hgr__graph_edit_new(allocator, &graph);
  uint32_t inputs = 0;
  for (uint32_t k = 0; !status && k < node->input_count; ++k) {
    uint32_t entry = hgr__graph_entry_id(source, node->inputs[k]);
    uint32_t at = 0;
    while (at < inputs && distinct[at] != entry) ++at;
    if (at == inputs) {
      hgr__entry_t input = source->entries[entry];
      input.storage_id = inputs;
      input.device_key = -1;
      char name[32];
      snprintf(name, sizeof(name), "input%u", inputs);
      uint32_t input_node = 0;
      status = hgr__graph_edit_append(graph, name, NULL, NULL, 0, NULL, 0, &input, 1, &input_node);
      distinct[inputs++] = entry;
      refs[k] = (hgr__entry_ref_t){input_node, 0};
    } else {
      uint32_t j = 0;
      while (hgr__graph_entry_id(source, node->inputs[j]) != entry) ++j;
      refs[k] = refs[j];
    }
  }
  uint32_t first_op = 0;
  for (uint32_t r = 0; !status && r < replicas; ++r) {
    for (uint32_t k = 0; k < node->num_outputs; ++k) {
      outputs[k] = source->entries[source->node_row_ptr[node_id] + k];
      outputs[k].storage_id = inputs + r * node->num_outputs + k;
      outputs[k].device_key = -1;
    }
    char name[160];
    snprintf(name, sizeof(name), "%.120s.%u", node->name, r);
    uint32_t op_node = 0;
    status = hgr__graph_edit_append(graph, r ? name : node->name, node->func_name, refs, node->input_count,
                                    node->attrs, node->attr_count, outputs, node->num_outputs, &op_node);
    if (!r) first_op = op_node;
    for (uint32_t k = 0; !status && k < node->num_outputs; ++k)
      status = hgr__graph_edit_add_head(graph, (hgr__entry_ref_t){op_node, k});
  }
  if (!status) status = hgr__graph_edit_finish(graph);
  if (!status) {
    *out_graph = graph;
    *out_node_id = first_op;
    graph = NULL;
  }
cleanup:
  hgr_graph_release(graph);
  hgr__free(allocator, distinct);
  hgr__free(allocator, refs);
  hgr__free(allocator, outputs);
  return status;
}

/* x (key 1) -> __copy (key 2) -> output: `bytes` bytes of float32; from allocator. */
static hgr_status_t copy_graph(hgr_allocator_t allocator, uint64_t bytes, hgr_graph_t** out_graph,
                               uint32_t* out_node_id) {
  *out_graph = NULL;
  hgr_graph_t* graph = NULL;
  hgr__entry_t value;
  memset(&value, 0, sizeof(value));
  hgr_dtype_parse("float32", &value.dtype);
  value.ndim = 1;
  value.shape[0] = (int64_t)(bytes / sizeof(float));
  value.device_key = 1;
  uint32_t input = 0, copy = 0;
  hgr_status_t status = hgr__graph_edit_new(allocator, &graph);
  if (!status) status = hgr__graph_edit_append(graph, "x", NULL, NULL, 0, NULL, 0, &value, 1, &input);
  value.storage_id = 1;
  value.device_key = 2;
  hgr__entry_ref_t ref = {input, 0};
  if (!status) status = hgr__graph_edit_append(graph, "copy", "__copy", &ref, 1, NULL, 0, &value, 1, &copy);
  if (!status) status = hgr__graph_edit_add_head(graph, (hgr__entry_ref_t){copy, 0});
  if (!status) status = hgr__graph_edit_finish(graph);
  if (status) {
    hgr_graph_release(graph);
    return status;
  }
  *out_graph = graph;
  *out_node_id = copy;
  return HGR_OK;
}

/* "conv2d [1, 3, 32, 32] [8, 3, 3, 3] on pocl:0" or "copy 4096 bytes pocl:0 -> rusticl:0" */
static void describe(const calibration_t* cal, const item_t* item, char* buffer, size_t capacity) {
  const hgr__place_problem_t* problem = cal->problem;
  const char* device = hgr__device_spec(problem->instance, problem->devices[item->slot]);
  if (item->kind == ITEM_COPY) {
    snprintf(buffer, capacity, "copy %llu bytes %s -> %s", (unsigned long long)item->bytes, device,
             hgr__device_spec(problem->instance, problem->devices[item->to_slot]));
    return;
  }
  const hgr_graph_t* graph = problem->graph;
  const hgr__node_t* node = &graph->nodes[item->node_id];
  size_t length = (size_t)snprintf(buffer, capacity, "%s%s", item->kind == ITEM_LAUNCH ? "launch overhead: 16 x " : "",
                                   node->func_name);
  for (uint32_t k = 0; k < node->input_count && length < capacity; ++k) {
    char shape[256];
    length += (size_t)snprintf(buffer + length, capacity - length, " %s",
                               hgr__entry_shape(&graph->entries[hgr__graph_entry_id(graph, node->inputs[k])],
                                                shape, sizeof(shape)));
  }
  if (length < capacity) snprintf(buffer + length, capacity - length, " on %s", device);
}

static hgr_status_t calibrate(calibration_t* cal, item_t* item, size_t number, size_t total) {
  const hgr__place_problem_t* problem = cal->problem;
  hgr_graph_t* graph = NULL;
  uint32_t node_id = 0;
  hgr_device_binding_t bindings[2] = {{1, hgr__device_spec(problem->instance, problem->devices[item->slot])},
                                      {2, NULL}};
  size_t binding_count = 1;
  hgr_status_t status;
  uint32_t replicas = 1;
  if (item->kind == ITEM_LAUNCH) {
    /* the cheapest node measured on this identity: the least work besides launching */
    double least = INFINITY;
    for (size_t i = 0; i < cal->item_count; ++i) {
      const item_t* other = &cal->items[i];
      if (other->kind == ITEM_NODE && other->file == item->file && other->known && other->ms < least) {
        least = other->ms;
        item->node_id = other->node_id;
      }
    }
    replicas = REPLICAS;
  }
  if (item->kind != ITEM_COPY) {
    status = node_graph(problem->graph, item->node_id, replicas, &graph, &node_id);
  } else {
    bindings[1].spec = hgr__device_spec(problem->instance, problem->devices[item->to_slot]);
    binding_count = 2;
    status = copy_graph(cal->allocator, item->bytes, &graph, &node_id);
  }
  const char* method = NULL;
  if (!status) status = measure(cal, graph, bindings, binding_count, node_id, replicas, &item->ms, &method);
  hgr_graph_release(graph);
  char what[512];
  describe(cal, item, what, sizeof(what));
  if (status) return hgr_status_annotate(status, "calibrating %s", what);
  item->known = true;
  log_line(cal->options, "calibrating %zu/%zu: %s: %.4g ms (%s%s)", number, total, what, item->ms, method,
           item->kind == ITEM_LAUNCH && strcmp(method, "profiling") ? "; its nodes' host times include it" : "");
  cache_file_t* file = &cal->files[item->file];
  if (!file_put(file, item->key, item->ms)) return OUT_OF_MEMORY("a cache entry");
  file->dirty = true;
  return HGR_OK;
}

/* ---- the model ------------------------------------------------------------------------------- */

void hgr__cost_model_release(hgr__cost_model_t* model) {
  if (!model) return;
  hgr__free(model->allocator, model->node_ms);
  hgr__free(model->allocator, model->copy_latency_ms);
  hgr__free(model->allocator, model->copy_ms_per_byte);
  hgr__free(model->allocator, model->timeline);
  memset(model, 0, sizeof(*model));
}

/* Whether slot d's rank measured its own devices; a slot's times there. */
static bool measured(const hgr__place_problem_t* problem, size_t d) {
  return problem->measured && problem->measured[d];
}

static double measured_node_ms(const hgr__place_problem_t* problem, uint32_t n, size_t d) {
  const hgr__rank_measure_t* measure = problem->measured[d];
  size_t at = hgr__rank_measure_find(measure, problem->devices[d]);
  return at == SIZE_MAX ? INFINITY : measure->node_ms[at * problem->graph->node_count + n];
}

static void measured_copy(const hgr__place_problem_t* problem, size_t from, size_t to, double* out_latency_ms,
                          double* out_ms_per_byte) {
  const hgr__rank_measure_t* measure = problem->measured[from];
  size_t a = hgr__rank_measure_find(measure, problem->devices[from]);
  size_t b = hgr__rank_measure_find(measure, problem->devices[to]);
  size_t at = a * measure->device_count + b;
  *out_latency_ms = a == SIZE_MAX || b == SIZE_MAX ? 0.0 : measure->copy_latency_ms[at];
  *out_ms_per_byte = a == SIZE_MAX || b == SIZE_MAX ? 0.0 : measure->copy_ms_per_byte[at];
}

/* Whether node n runs nothing wherever it goes: a graph input, `__nop`, or a
 * reshape-like op, which memory planning makes an alias of its input. */
static bool runs_nothing(const hgr__place_problem_t* problem, uint32_t n) {
  const hgr__node_t* node = &problem->graph->nodes[n];
  if (!node->is_op || !strcmp(node->func_name, "__nop")) return true;
  /* hgr__op_lookup's order (built-in, then the library's), spelled out so that this
   * file needs only what the op registry had before issue 14 */
  const hgr__op_t* op = hgr__op_find(node->func_name);
  if (!op && problem->kernels) op = hgr__library_op(problem->kernels, node->func_name);
  return op && op->in_place == HGR__IN_PLACE_ALIAS;
}

hgr_status_t hgr__cost_model_build(const hgr__place_problem_t* problem, const hgr_place_options_t* options,
                                   hgr__cost_model_t* out_model) {
  memset(out_model, 0, sizeof(*out_model));
  const hgr_graph_t* graph = problem->graph;
  size_t devices = problem->device_count;
  uint32_t nodes = graph->node_count;
  hgr_allocator_t allocator = problem->allocator;
  calibration_t cal = {.allocator = allocator, .problem = problem, .options = options};
  hgr__cost_model_t model = {allocator, devices, nodes, NULL, NULL, NULL, NULL};
  size_t cells = (size_t)nodes * devices;
  size_t* node_items = NULL; /* [node * devices + slot]: item index, or SIZE_MAX */
  size_t* copy_items = NULL; /* [(from * devices + to) * 2 + size]: item index, or SIZE_MAX */
  size_t* launch_items = NULL; /* [slot]: item index, or SIZE_MAX */
  hgr_status_t status = HGR_OK;
  if (!devices) return HGR_STATUS(HGR_STATUS_INVALID_ARGUMENT, "cost model: no devices listed");
  model.node_ms = hgr__calloc(allocator, cells ? cells : 1, sizeof(double));
  model.copy_latency_ms = hgr__calloc(allocator, devices * devices, sizeof(double));
  model.copy_ms_per_byte = hgr__calloc(allocator, devices * devices, sizeof(double));
  node_items = hgr__alloc(allocator, (cells ? cells : 1) * sizeof(size_t));
  copy_items = hgr__alloc(allocator, devices * devices * 2 * sizeof(size_t));
  launch_items = hgr__alloc(allocator, devices * sizeof(size_t));
  model.timeline = hgr__alloc(allocator, devices * sizeof(uint32_t));
  if (!model.node_ms || !model.copy_latency_ms || !model.copy_ms_per_byte || !node_items || !copy_items ||
      !launch_items || !model.timeline) {
    status = OUT_OF_MEMORY("the model");
    goto cleanup;
  }
  if (!options->cost_cache_off) {
    hgr_status_t store_status =
        hgr__store_open(allocator, options->cost_cache_directory, "cost cache", NULL, &cal.store);
    if (!store_status) store_status = hgr__store_make_directory(&cal.store);
    if (store_status) {
      log_line(options, "cost cache: %s (calibrating without a cache)", hgr_status_message(store_status));
      hgr__store_close(&cal.store);
    }
    hgr_status_free(store_status);
  }

  /* CPU devices run on the host's cores. When their compute units together exceed
   * the cores, their kernels compete for them and they share one timeline: on the
   * test bed (pocl:0 and pocl:1 with 2 compute units each, rusticl with 8, on 2
   * cores), heavy branches split over both PoCL devices measured 212 ms against 206
   * ms on one. When they fit (POCL_MAX_PTHREAD_COUNT=1 gives each PoCL device one
   * core), each keeps its own. */
  /* Each rank has its own host: the count and the timelines are per rank, with the
   * rank's own count of cores when it measured its devices, else this host's. */
  long cores = sysconf(_SC_NPROCESSORS_ONLN);
  for (size_t d = 0; d < devices; ++d) {
    model.timeline[d] = (uint32_t)d;
    if (slot_info(&cal, d)->type != HGR_DEVICE_TYPE_CPU) continue;
    int rank = hgr__place_slot_rank(problem, d);
    long rank_cores = problem->measured && problem->measured[d] ? problem->measured[d]->cores : cores;
    uint64_t cpu_units = 0;
    for (size_t e = 0; e < devices; ++e)
      if (hgr__place_slot_rank(problem, e) == rank && slot_info(&cal, e)->type == HGR_DEVICE_TYPE_CPU)
        cpu_units += slot_info(&cal, e)->compute_units;
    if (rank_cores >= 1 && cpu_units <= (uint64_t)rank_cores) continue;
    for (size_t e = 0; e < d; ++e)
      if (hgr__place_slot_rank(problem, e) == rank && slot_info(&cal, e)->type == HGR_DEVICE_TYPE_CPU) {
        model.timeline[d] = (uint32_t)e;
        break;
      }
  }

  /* What the problem needs: every op node on every device that can run it, every
   * ordered pair of devices of one rank at two sizes, and the launch overhead of
   * every device that runs a node (measured last: it replicates the cheapest node
   * there). Items are keyed by the local device's identity, so slots of several
   * ranks on one local device share them and are measured once. A measured slot's
   * rank gave its times. */
  for (uint32_t n = 0; !status && n < nodes; ++n)
    for (size_t d = 0; !status && d < devices; ++d) {
      size_t cell = (size_t)n * devices + d;
      node_items[cell] = SIZE_MAX;
      if (runs_nothing(problem, n)) model.node_ms[cell] = 0.0;
      else if (!hgr__place_can_run(problem, n, d)) model.node_ms[cell] = INFINITY;
      else if (measured(problem, d)) model.node_ms[cell] = measured_node_ms(problem, n, d);
      else status = node_item(&cal, n, d, &node_items[cell]);
    }
  for (size_t a = 0; !status && a < devices; ++a)
    for (size_t b = 0; !status && b < devices; ++b) {
      size_t* pair = &copy_items[(a * devices + b) * 2];
      pair[0] = pair[1] = SIZE_MAX;
      if (a == b || problem->devices[a] == problem->devices[b] ||
          hgr__place_slot_rank(problem, a) != hgr__place_slot_rank(problem, b) || measured(problem, a))
        continue;
      status = copy_item(&cal, a, b, SMALL_COPY_BYTES, &pair[0]);
      if (!status) status = copy_item(&cal, a, b, LARGE_COPY_BYTES, &pair[1]);
    }
  for (size_t d = 0; !status && d < devices; ++d) {
    launch_items[d] = SIZE_MAX;
    for (uint32_t n = 0; n < nodes && launch_items[d] == SIZE_MAX && !status; ++n)
      if (node_items[(size_t)n * devices + d] != SIZE_MAX) status = launch_item(&cal, d, &launch_items[d]);
  }

  size_t missing = 0, done = 0;
  for (size_t i = 0; i < cal.item_count; ++i) missing += !cal.items[i].known;
  /* Work of other processes on the host's cores inflates every time measured now,
   * and the cost cache keeps those times: say so. */
  double load = 0;
  if (missing && getloadavg(&load, 1) == 1 && cores > 0 && load > 0.5 * (double)cores)
    log_line(options, "load average %.2f on %ld cores: the %zu time(s) measured now may be inflated, and the cost "
             "cache keeps them (delete %s%s to measure again)",
             load, cores, missing, cal.store.directory ? cal.store.directory : "its cost-*.tsv files",
             cal.store.directory ? "/cost-*.tsv" : "");
  for (size_t i = 0; !status && i < cal.item_count; ++i)
    if (!cal.items[i].known) status = calibrate(&cal, &cal.items[i], ++done, missing);
  /* what was measured is kept even when a later item failed */
  for (size_t f = 0; f < cal.file_count; ++f) file_store(&cal.files[f], options);
  if (status) goto cleanup;

  /* A node's time: its own span, plus the device's idle time between two nodes
   * (PoCL's is a few microseconds, more than a small kernel takes). */
  for (size_t cell = 0; cell < cells; ++cell)
    if (node_items[cell] != SIZE_MAX)
      model.node_ms[cell] = cal.items[node_items[cell]].ms + cal.items[launch_items[cell % devices]].ms;
  double cross_latency = 0.0, cross_per_byte = 0.0;
  hgr__place_cross_host_costs(options, &cross_latency, &cross_per_byte);
  for (size_t pair = 0; pair < devices * devices; ++pair) {
    if (hgr__place_slot_rank(problem, pair / devices) != hgr__place_slot_rank(problem, pair % devices)) {
      model.copy_latency_ms[pair] = cross_latency;
      model.copy_ms_per_byte[pair] = cross_per_byte;
      continue;
    }
    if (measured(problem, pair / devices)) {
      measured_copy(problem, pair / devices, pair % devices, &model.copy_latency_ms[pair],
                    &model.copy_ms_per_byte[pair]);
      continue;
    }
    if (copy_items[pair * 2] == SIZE_MAX) continue;
    double small = cal.items[copy_items[pair * 2]].ms, large = cal.items[copy_items[pair * 2 + 1]].ms;
    double per_byte = (large - small) / (double)(LARGE_COPY_BYTES - SMALL_COPY_BYTES);
    if (!(per_byte > 0.0)) per_byte = 0.0;
    double latency = small - (double)SMALL_COPY_BYTES * per_byte;
    /* a direct copy in one context is a command on the consuming side's queue (a
     * staged one was timed on the host, overhead included) */
    size_t to = pair % devices;
    if (launch_items[to] != SIZE_MAX &&
        hgr_instance_pair_class(problem->instance, problem->devices[pair / devices], problem->devices[to]) ==
            HGR_PAIR_SAME_CONTEXT)
      latency += cal.items[launch_items[to]].ms;
    model.copy_latency_ms[pair] = latency > 0.0 ? latency : 0.0;
    model.copy_ms_per_byte[pair] = per_byte;
  }
  *out_model = model;
  memset(&model, 0, sizeof(model));

cleanup:
  hgr__cost_model_release(&model);
  hgr__free(allocator, node_items);
  hgr__free(allocator, copy_items);
  hgr__free(allocator, launch_items);
  calibration_free(&cal);
  return status;
}
