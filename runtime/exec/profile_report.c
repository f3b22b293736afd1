/* Reports of the last run (hgr/profile.h): the summary table, the same as JSON,
 * and a Chrome trace-event timeline, from OpenCL profiling events summarized per
 * node, op and device. Device timestamps are put on the host's CLOCK_MONOTONIC
 * with hgr_executor_clock_offset, so commands of different devices line up.
 *
 * This file sits above the executor: it reads only the public getters of the
 * executor, the graph and the instance, and nothing calls into it from below. The
 * output is the one `hgr run --profile / --profile-json / --trace` printed when the
 * code lived in tools/; the CLI tests and tests/check_trace.cmake read it, so its
 * format changes only on purpose. The JSON is printed rather than built with
 * cJSON to keep that format (number precision, key order, layout). */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "alloc.h"
#include "device_internal.h" /* hgr__instance_allocator: the executor's */
#include "hgr/hgr.h"

typedef struct device_clock_t {
  size_t device_index;
  const char* spec;
  bool timed; /* the driver gives timestamps */
  hgr_clock_offset_t clock;
  uint32_t commands;
  uint64_t busy_ns;
} device_clock_t;

typedef struct command_t {
  hgr_command_profile_t p;
  size_t device_index;
  bool timed;
  uint64_t start, end; /* host clock (ns); the host enqueue time when untimed */
} command_t;

typedef struct node_stat_t {
  uint32_t node_id;
  hgr_node_info_t info;
  size_t device_index;
  const char* spec; /* of device_index */
  uint32_t commands, timed_commands;
  uint64_t busy_ns; /* sum of its commands' durations */
  uint64_t first_start, last_end;
  uint64_t host_begin, host_end;
  bool is_copy;
  hgr_copy_info_t copy;
  uint32_t first_command, last_command; /* indexes into commands */
} node_stat_t;

typedef struct profile_t {
  hgr_allocator_t allocator; /* the executor's: the tables here and the writers' */
  command_t* commands;
  size_t command_count;
  node_stat_t* nodes; /* op nodes that enqueued something, in run order */
  size_t node_count;
  device_clock_t* devices;
  size_t device_count;
  uint64_t busy_ns;              /* all nodes */
  uint64_t span_begin, span_end; /* first start to last end, host clock */
  uint64_t host_enqueue_ns;
} profile_t;

static void profile_free(profile_t* p) {
  hgr__free(p->allocator, p->commands);
  hgr__free(p->allocator, p->nodes);
  hgr__free(p->allocator, p->devices);
  hgr_allocator_t allocator = p->allocator;
  memset(p, 0, sizeof(*p));
  p->allocator = allocator;
}

static device_clock_t* device_of(profile_t* p, size_t device_index) {
  for (size_t d = 0; d < p->device_count; ++d)
    if (p->devices[d].device_index == device_index) return &p->devices[d];
  return NULL;
}

/* The spec of instance device device_index, which the executor uses. */
static hgr_status_t device_spec(const hgr_instance_t* instance, size_t device_index, const char** out_spec) {
  const hgr_device_info_t* device = hgr_instance_device(instance, device_index);
  if (!device)
    return HGR_STATUS(HGR_STATUS_INTERNAL, "the executor uses instance device %zu, but its instance has %zu devices",
                      device_index, hgr_instance_device_count(instance));
  *out_spec = device->spec;
  return HGR_OK;
}

static hgr_status_t out_of_memory(void) { return HGR_STATUS(HGR_STATUS_RESOURCE_EXHAUSTED, "out of host memory"); }

/* Checks a writer's arguments, then reads the last run's commands into p: per
 * command its device and its place on the host clock, per node and per device their
 * sums. */
static hgr_status_t collect(hgr_executor_t* executor, const FILE* out, profile_t* p) {
  memset(p, 0, sizeof(*p));
  if (!executor) return HGR_STATUS(HGR_STATUS_INVALID_ARGUMENT, "executor is NULL");
  if (!out) return HGR_STATUS(HGR_STATUS_INVALID_ARGUMENT, "out is NULL");
  p->allocator = hgr__instance_allocator(hgr_executor_instance(executor));
  const hgr_instance_t* instance = hgr_executor_instance(executor);
  const hgr_graph_t* graph = hgr_executor_graph(executor);
  size_t count = hgr_executor_command_count(executor);
  size_t node_total = hgr_graph_node_count(graph);
  if (count == 0) {
    /* No commands: either the executor has no profile (say why), or the last run
     * enqueued nothing, an empty report. */
    uint64_t begin = 0, end = 0;
    hgr_status_t status = hgr_executor_node_enqueue_time(executor, 0, &begin, &end);
    if (hgr_status_code(status) == HGR_STATUS_FAILED_PRECONDITION) return status;
    hgr_status_free(status);
  }
  size_t usage_count = hgr_executor_device_count(executor);
  p->commands = hgr__calloc(p->allocator, count + 1, sizeof(command_t));
  p->nodes = hgr__calloc(p->allocator, node_total + 1, sizeof(node_stat_t));
  p->devices = hgr__calloc(p->allocator, usage_count + 1, sizeof(device_clock_t));
  size_t* node_slot = hgr__calloc(p->allocator, node_total + 1, sizeof(size_t));
  bool* untimed = hgr__calloc(p->allocator, usage_count + 1, sizeof(bool));
  hgr_status_t status = HGR_OK;
  if (!p->commands || !p->nodes || !p->devices || !node_slot || !untimed) status = out_of_memory();
  for (size_t d = 0; d < usage_count && !status; ++d) {
    device_clock_t* device = &p->devices[p->device_count++];
    device->device_index = hgr_executor_device_usage(executor, d).device_index;
    if ((status = device_spec(instance, device->device_index, &device->spec))) break;
    hgr_status_t offset = hgr_executor_clock_offset(executor, device->device_index, &device->clock);
    device->timed = offset == HGR_OK;
    hgr_status_free(offset); /* no timestamps: its commands are placed at their enqueue time */
  }
  /* A device counts as timed when every kernel it ran has a duration: rusticl 22.3
   * gives its kernels none (hgr_command_profile_has_duration) and its transfers
   * values that do not line up, so none of its timestamps are used. */
  for (size_t i = 0; i < count && !status; ++i) {
    const hgr_command_profile_t* c = &p->commands[i].p;
    if ((status = hgr_executor_command_profile(executor, i, &p->commands[i].p))) break;
    if (c->node_id >= node_total) {
      status =
          HGR_STATUS(HGR_STATUS_INTERNAL, "command %zu of the last run belongs to node %u, but the graph has %zu nodes",
                     i, c->node_id, node_total);
      break;
    }
    device_clock_t* device = device_of(p, hgr_executor_queue_info(executor, c->queue).device_index);
    if (device && c->kind == HGR_COMMAND_KERNEL && !hgr_command_profile_has_duration(c))
      untimed[device - p->devices] = true;
  }
  for (size_t d = 0; d < p->device_count && !status; ++d) p->devices[d].timed &= !untimed[d];
  for (size_t n = 0; n < node_total && !status; ++n) node_slot[n] = SIZE_MAX;
  for (size_t i = 0; i < count && !status; ++i) {
    command_t* c = &p->commands[p->command_count];
    c->device_index = hgr_executor_queue_info(executor, c->p.queue).device_index;
    device_clock_t* device = device_of(p, c->device_index);
    c->timed = device && device->timed && c->p.end_ns >= c->p.start_ns && c->p.start_ns;
    if (c->timed) {
      c->start = (uint64_t)((int64_t)c->p.start_ns + device->clock.offset_ns);
      c->end = (uint64_t)((int64_t)c->p.end_ns + device->clock.offset_ns);
    } else {
      c->start = c->end = c->p.host_enqueue_ns;
    }
    size_t slot = node_slot[c->p.node_id];
    if (slot == SIZE_MAX) {
      slot = node_slot[c->p.node_id] = p->node_count++;
      node_stat_t* node = &p->nodes[slot];
      node->node_id = c->p.node_id;
      node->device_index = c->device_index;
      node->first_command = (uint32_t)p->command_count;
      node->first_start = UINT64_MAX;
      if ((status = device_spec(instance, node->device_index, &node->spec))) break;
      if ((status = hgr_graph_node_info(graph, c->p.node_id, &node->info))) break;
      node->is_copy = node->info.func_name && !strcmp(node->info.func_name, "__copy");
      if (node->is_copy && (status = hgr_executor_copy_info(executor, c->p.node_id, &node->copy))) break;
      if ((status = hgr_executor_node_enqueue_time(executor, c->p.node_id, &node->host_begin, &node->host_end))) break;
      p->host_enqueue_ns += node->host_end - node->host_begin;
    }
    node_stat_t* node = &p->nodes[slot];
    node->commands++;
    node->last_command = (uint32_t)p->command_count;
    if (c->timed) {
      node->timed_commands++;
      node->busy_ns += c->end - c->start;
      if (device) {
        device->commands++;
        device->busy_ns += c->end - c->start;
      }
      p->busy_ns += c->end - c->start;
      if (c->start < node->first_start) node->first_start = c->start;
      if (c->end > node->last_end) node->last_end = c->end;
      if (!p->span_begin || c->start < p->span_begin) p->span_begin = c->start;
      if (c->end > p->span_end) p->span_end = c->end;
    } else if (device) {
      device->commands++;
    }
    p->command_count++;
  }
  hgr__free(p->allocator, untimed);
  hgr__free(p->allocator, node_slot);
  if (status) profile_free(p);
  return status;
}

/* Writes text as a JSON string literal (quoted, escaped). */
static void json_string(FILE* out, const char* text) {
  fputc('"', out);
  for (const unsigned char* c = (const unsigned char*)(text ? text : ""); *c; ++c) {
    if (*c == '"' || *c == '\\') fprintf(out, "\\%c", *c);
    else if (*c == '\n') fputs("\\n", out);
    else if (*c < 0x20) fprintf(out, "\\u%04x", *c);
    else fputc(*c, out);
  }
  fputc('"', out);
}

/* The writers check the stream once at the end: fprintf's errors stick to it. */
static hgr_status_t check_written(FILE* out, const char* what) {
  if (fflush(out) != 0 || ferror(out))
    return HGR_STATUS(HGR_STATUS_UNAVAILABLE, "writing the %s failed", what);
  return HGR_OK;
}

static double ms(uint64_t ns) { return (double)ns / 1e6; }
static double share(uint64_t part, uint64_t whole) { return whole ? 100.0 * (double)part / (double)whole : 0; }

static int by_busy_desc(const void* a, const void* b) {
  const node_stat_t *x = a, *y = b;
  return x->busy_ns < y->busy_ns ? 1 : x->busy_ns > y->busy_ns ? -1 : (int)x->node_id - (int)y->node_id;
}

/* Per op: count, total, mean, share. */
typedef struct op_stat_t {
  const char* op;
  uint32_t nodes;
  uint64_t busy_ns;
} op_stat_t;

static int op_by_busy_desc(const void* a, const void* b) {
  const op_stat_t *x = a, *y = b;
  return x->busy_ns < y->busy_ns ? 1 : x->busy_ns > y->busy_ns ? -1 : strcmp(x->op, y->op);
}

static size_t op_stats(const profile_t* p, op_stat_t* ops) {
  size_t count = 0;
  for (size_t n = 0; n < p->node_count; ++n) {
    const char* op = p->nodes[n].info.func_name;
    size_t o = 0;
    while (o < count && strcmp(ops[o].op, op)) ++o;
    if (o == count) ops[count++] = (op_stat_t){op, 0, 0};
    ops[o].nodes++;
    ops[o].busy_ns += p->nodes[n].busy_ns;
  }
  qsort(ops, count, sizeof(*ops), op_by_busy_desc);
  return count;
}

static double gbps(const node_stat_t* node) {
  uint64_t span = node->last_end > node->first_start ? node->last_end - node->first_start : 0;
  return span && node->timed_commands == node->commands ? (double)node->copy.bytes / (double)span : 0;
}

void hgr_profile_summary_options_init(hgr_profile_summary_options_t* options) {
  if (!options) return;
  memset(options, 0, sizeof(*options));
  options->top_nodes = 20;
}

hgr_status_t hgr_profile_write_summary(hgr_executor_t* executor, const hgr_profile_summary_options_t* options,
                                       FILE* out) {
  hgr_profile_summary_options_t defaults;
  hgr_profile_summary_options_init(&defaults);
  if (!options) options = &defaults;
  profile_t p;
  hgr_status_t status = collect(executor, out, &p);
  if (status) return status;
  op_stat_t* ops = hgr__calloc(p.allocator, p.node_count + 1, sizeof(op_stat_t));
  node_stat_t* sorted = hgr__alloc(p.allocator, (p.node_count + 1) * sizeof(node_stat_t));
  if (!ops || !sorted) {
    hgr__free(p.allocator, ops);
    hgr__free(p.allocator, sorted);
    profile_free(&p);
    return out_of_memory();
  }
  fprintf(out, "profile of the last run (OpenCL profiling events, device clocks put on the host's):\n");
  fprintf(out,
          "  %zu commands of %zu nodes; device span %.3f ms; device time %.3f ms; host enqueue %.3f ms (%.2f us per "
          "node)\n",
          p.command_count, p.node_count, ms(p.span_end - p.span_begin), ms(p.busy_ns), ms(p.host_enqueue_ns),
          p.node_count ? (double)p.host_enqueue_ns / 1e3 / (double)p.node_count : 0.0);
  fprintf(out, "by device:\n  %-12s %9s %13s %7s  %s\n", "device", "commands", "device ms", "share", "clock");
  for (size_t d = 0; d < p.device_count; ++d) {
    const device_clock_t* device = &p.devices[d];
    if (device->timed)
      fprintf(out, "  %-12s %9u %13.3f %6.1f%%  %s (+-%.1f us)\n", device->spec, device->commands, ms(device->busy_ns),
              share(device->busy_ns, p.busy_ns), device->clock.method, (double)device->clock.uncertainty_ns / 1e3);
    else
      fprintf(out, "  %-12s %9u %13s %7s  the driver reports no timestamps\n", device->spec, device->commands, "-",
              "-");
  }
  size_t op_count = op_stats(&p, ops);
  fprintf(out, "by op:\n  %-16s %6s %13s %11s %7s\n", "op", "nodes", "device ms", "mean us", "share");
  for (size_t o = 0; o < op_count; ++o)
    fprintf(out, "  %-16s %6u %13.3f %11.2f %6.1f%%\n", ops[o].op, ops[o].nodes, ms(ops[o].busy_ns),
            (double)ops[o].busy_ns / 1e3 / ops[o].nodes, share(ops[o].busy_ns, p.busy_ns));
  memcpy(sorted, p.nodes, p.node_count * sizeof(node_stat_t));
  qsort(sorted, p.node_count, sizeof(node_stat_t), by_busy_desc);
  size_t top = options->top_nodes;
  size_t shown = top && top < p.node_count ? top : p.node_count;
  fprintf(out, "by node (%zu of %zu, most device time first):\n  %-28s %-14s %-12s %4s %11s %11s %7s\n", shown,
          p.node_count, "node", "op", "device", "cmds", "device us", "enqueue us", "share");
  for (size_t n = 0; n < shown; ++n) {
    const node_stat_t* node = &sorted[n];
    fprintf(out, "  %-28.28s %-14.14s %-12s %4u %11.2f %11.2f %6.1f%%\n", node->info.name, node->info.func_name,
            node->spec, node->commands, (double)node->busy_ns / 1e3, (double)(node->host_end - node->host_begin) / 1e3,
            share(node->busy_ns, p.busy_ns));
  }
  bool any_copy = false;
  for (size_t n = 0; n < p.node_count; ++n) any_copy |= p.nodes[n].is_copy;
  if (any_copy) {
    fprintf(out, "copies:\n  %-28s %-20s %6s %12s %11s %8s\n", "node", "path", "chunks", "bytes", "span us", "GB/s");
    for (size_t n = 0; n < p.node_count; ++n) {
      const node_stat_t* node = &p.nodes[n];
      if (!node->is_copy) continue;
      char rate[32] = "-";
      if (gbps(node) > 0) snprintf(rate, sizeof(rate), "%.2f", gbps(node));
      fprintf(out, "  %-28.28s %-20s %6u %12llu %11.2f %8s\n", node->info.name, node->copy.path, node->copy.chunks,
              (unsigned long long)node->copy.bytes,
              node->last_end > node->first_start ? (double)(node->last_end - node->first_start) / 1e3 : 0.0, rate);
    }
  }
  hgr__free(p.allocator, sorted);
  hgr__free(p.allocator, ops);
  profile_free(&p);
  return check_written(out, "profile summary");
}

hgr_status_t hgr_profile_write_json(hgr_executor_t* executor, FILE* out) {
  profile_t p;
  hgr_status_t status = collect(executor, out, &p);
  if (status) return status;
  op_stat_t* ops = hgr__calloc(p.allocator, p.node_count + 1, sizeof(op_stat_t));
  if (!ops) {
    profile_free(&p);
    return out_of_memory();
  }
  fprintf(out,
          "{\n  \"run\": {\"commands\": %zu, \"nodes\": %zu, \"device_span_ns\": %" PRIu64 ", \"device_ns\": %" PRIu64
          ", \"host_enqueue_ns\": %" PRIu64 "},\n  \"devices\": [",
          p.command_count, p.node_count, p.span_end - p.span_begin, p.busy_ns, p.host_enqueue_ns);
  for (size_t d = 0; d < p.device_count; ++d) {
    const device_clock_t* device = &p.devices[d];
    fprintf(out, "%s\n    {\"device\": ", d ? "," : "");
    json_string(out, device->spec);
    fprintf(out, ", \"commands\": %u, \"device_ns\": %" PRIu64 ", \"timestamps\": %s", device->commands,
            device->busy_ns, device->timed ? "true" : "false");
    if (device->timed) {
      fprintf(out, ", \"clock\": {\"method\": ");
      json_string(out, device->clock.method);
      fprintf(out, ", \"offset_ns\": %" PRId64 ", \"uncertainty_ns\": %" PRIu64 "}", device->clock.offset_ns,
              device->clock.uncertainty_ns);
    }
    fprintf(out, "}");
  }
  size_t op_count = op_stats(&p, ops);
  fprintf(out, "\n  ],\n  \"ops\": [");
  for (size_t o = 0; o < op_count; ++o) {
    fprintf(out, "%s\n    {\"op\": ", o ? "," : "");
    json_string(out, ops[o].op);
    fprintf(out, ", \"nodes\": %u, \"device_ns\": %" PRIu64 ", \"mean_ns\": %" PRIu64 "}", ops[o].nodes,
            ops[o].busy_ns, ops[o].busy_ns / ops[o].nodes);
  }
  fprintf(out, "\n  ],\n  \"nodes\": [");
  for (size_t n = 0; n < p.node_count; ++n) {
    const node_stat_t* node = &p.nodes[n];
    fprintf(out, "%s\n    {\"node_id\": %u, \"name\": ", n ? "," : "", node->node_id);
    json_string(out, node->info.name);
    fprintf(out, ", \"op\": ");
    json_string(out, node->info.func_name);
    fprintf(out, ", \"device\": ");
    json_string(out, node->spec);
    fprintf(out,
            ", \"commands\": %u, \"timed_commands\": %u, \"device_ns\": %" PRIu64 ", \"host_enqueue_ns\": %" PRIu64,
            node->commands, node->timed_commands, node->busy_ns, node->host_end - node->host_begin);
    if (node->timed_commands)
      fprintf(out, ", \"start_ns\": %" PRIu64 ", \"end_ns\": %" PRIu64, node->first_start - p.span_begin,
              node->last_end - p.span_begin);
    if (node->is_copy) {
      fprintf(out, ", \"copy\": {\"bytes\": %" PRIu64 ", \"path\": ", node->copy.bytes);
      json_string(out, node->copy.path);
      fprintf(out, ", \"chunks\": %u, \"gb_per_s\": %.3f}", node->copy.chunks, gbps(node));
    }
    fprintf(out, "}");
  }
  fprintf(out, "\n  ]\n}\n");
  hgr__free(p.allocator, ops);
  profile_free(&p);
  return check_written(out, "profile JSON");
}

/* ---- trace -------------------------------------------------------------------------- */

static double us_since(uint64_t ns, uint64_t base) { return ns >= base ? (double)(ns - base) / 1e3 : 0.0; }

/* The node whose commands produced input i of node (through __nop aliases), or
 * UINT32_MAX for a graph input. */
static uint32_t producer_of(const hgr_graph_t* graph, uint32_t node, uint32_t i) {
  uint32_t from = 0, index = 0;
  if (hgr_graph_node_input(graph, node, i, &from, &index)) return UINT32_MAX;
  hgr_node_info_t info;
  while (!hgr_graph_node_info(graph, from, &info) && info.func_name && !strcmp(info.func_name, "__nop") &&
         info.input_count == 1) {
    if (hgr_graph_node_input(graph, from, 0, &from, &index)) return UINT32_MAX;
  }
  if (hgr_graph_node_info(graph, from, &info) || !info.func_name) return UINT32_MAX;
  return from;
}

hgr_status_t hgr_profile_write_trace(hgr_executor_t* executor, FILE* out) {
  profile_t p;
  hgr_status_t status = collect(executor, out, &p);
  if (status) return status;
  const hgr_instance_t* instance = hgr_executor_instance(executor);
  const hgr_graph_t* graph = hgr_executor_graph(executor);
  size_t* slot = hgr__calloc(p.allocator, hgr_graph_node_count(graph) + 1, sizeof(size_t));
  if (!slot) {
    profile_free(&p);
    return out_of_memory();
  }
  uint64_t base = UINT64_MAX;
  for (size_t c = 0; c < p.command_count; ++c)
    if (p.commands[c].start < base) base = p.commands[c].start;
  for (size_t n = 0; n < p.node_count; ++n)
    if (p.nodes[n].host_begin && p.nodes[n].host_begin < base) base = p.nodes[n].host_begin;
  if (base == UINT64_MAX) base = 0;
  /* pid 0: the host; pid q + 1: executor queue q, one track each */
  fprintf(out, "{\"displayTimeUnit\": \"ms\", \"traceEvents\": [\n");
  fprintf(out, "{\"name\": \"process_name\", \"ph\": \"M\", \"pid\": 0, \"args\": {\"name\": \"host\"}},\n");
  fprintf(out, "{\"name\": \"thread_name\", \"ph\": \"M\", \"pid\": 0, \"tid\": 0, \"args\": {\"name\": \"enqueue\"}}");
  for (size_t q = 0; q < hgr_executor_queue_count(executor); ++q) {
    bool used = false; /* a track for each queue that ran something */
    for (size_t c = 0; c < p.command_count && !used; ++c) used = p.commands[c].p.queue == q;
    if (!used) continue;
    hgr_queue_info_t queue = hgr_executor_queue_info(executor, q);
    const char* spec = NULL;
    if ((status = device_spec(instance, queue.device_index, &spec))) break;
    char name[160];
    snprintf(name, sizeof(name), "%s queue %zu (%s)", spec, q, queue.role);
    fprintf(out, ",\n{\"name\": \"process_name\", \"ph\": \"M\", \"pid\": %zu, \"args\": {\"name\": ", q + 1);
    json_string(out, name);
    fprintf(out,
            "}},\n{\"name\": \"thread_name\", \"ph\": \"M\", \"pid\": %zu, \"tid\": 0, \"args\": {\"name\": ", q + 1);
    json_string(out, name);
    fprintf(out, "}}");
  }
  for (size_t n = 0; n < p.node_count && !status; ++n) {
    const node_stat_t* node = &p.nodes[n];
    slot[node->node_id] = n + 1;
    fprintf(out, ",\n{\"name\": ");
    json_string(out, node->info.name);
    fprintf(out,
            ", \"cat\": \"enqueue\", \"ph\": \"X\", \"pid\": 0, \"tid\": 0, \"ts\": %.3f, \"dur\": %.3f, "
            "\"args\": {\"op\": ",
            us_since(node->host_begin, base), (double)(node->host_end - node->host_begin) / 1e3);
    json_string(out, node->info.func_name);
    fprintf(out, ", \"node\": %u}}", node->node_id);
  }
  for (size_t c = 0; c < p.command_count && !status; ++c) {
    const command_t* command = &p.commands[c];
    const node_stat_t* node = &p.nodes[slot[command->p.node_id] - 1];
    fprintf(out, ",\n{\"name\": ");
    json_string(out, node->info.name);
    fprintf(out, ", \"cat\": ");
    json_string(out, node->info.func_name);
    fprintf(out, ", \"ph\": \"X\", \"pid\": %u, \"tid\": 0, \"ts\": %.3f, \"dur\": %.3f, \"args\": {\"op\": ",
            command->p.queue + 1, us_since(command->start, base), (double)(command->end - command->start) / 1e3);
    json_string(out, node->info.func_name);
    fprintf(out, ", \"node\": %u, \"command\": \"%s\"", node->node_id, hgr_command_kind_name(command->p.kind));
    if (node->is_copy) fprintf(out, ", \"bytes\": %" PRIu64 ", \"path\": \"%s\"", node->copy.bytes, node->copy.path);
    if (!command->timed) fprintf(out, ", \"timestamps\": \"none: placed at its enqueue\"");
    fprintf(out, "}}");
  }
  /* Flow arrows: a node's input produced on another queue (or another context). */
  unsigned flow = 0;
  for (size_t n = 0; n < p.node_count && !status; ++n) {
    const node_stat_t* consumer = &p.nodes[n];
    const command_t* first = &p.commands[consumer->first_command];
    for (uint32_t i = 0; i < consumer->info.input_count; ++i) {
      uint32_t from = producer_of(graph, consumer->node_id, i);
      if (from == UINT32_MAX || !slot[from]) continue;
      const command_t* last = &p.commands[p.nodes[slot[from] - 1].last_command];
      if (last->p.queue == first->p.queue) continue;
      double from_ts = us_since(last->end, base), to_ts = us_since(first->start, base);
      /* the start binds to the producer's slice: a point just inside its end */
      double inside = last->end > last->start ? from_ts - 0.001 : from_ts;
      ++flow;
      fprintf(out,
              ",\n{\"name\": \"dependency\", \"cat\": \"dependency\", \"ph\": \"s\", \"id\": %u, \"pid\": %u, "
              "\"tid\": 0, \"ts\": %.3f}",
              flow, last->p.queue + 1, inside);
      fprintf(out,
              ",\n{\"name\": \"dependency\", \"cat\": \"dependency\", \"ph\": \"f\", \"bp\": \"e\", \"id\": %u, "
              "\"pid\": %u, \"tid\": 0, \"ts\": %.3f}",
              flow, first->p.queue + 1, to_ts > inside ? to_ts : inside);
    }
  }
  if (!status) {
    fprintf(out, "\n], \"otherData\": {\"clock\": \"host CLOCK_MONOTONIC, microseconds since the first event\"");
    for (size_t d = 0; d < p.device_count; ++d) {
      const device_clock_t* device = &p.devices[d];
      fprintf(out, ", ");
      json_string(out, device->spec);
      fprintf(out, ": ");
      char text[160];
      if (device->timed)
        snprintf(text, sizeof(text), "device clock + %" PRId64 " ns (%s, +-%" PRIu64 " ns)", device->clock.offset_ns,
                 device->clock.method, device->clock.uncertainty_ns);
      else
        snprintf(text, sizeof(text), "no device timestamps: commands placed at their host enqueue time");
      json_string(out, text);
    }
    fprintf(out, "}}\n");
  }
  hgr__free(p.allocator, slot);
  profile_free(&p);
  return status ? status : check_written(out, "trace");
}
