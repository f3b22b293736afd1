/* hgr/place.h's reports: the summary (`hgr run`, `hgr check`) and the JSON
 * (`hgr check --json`, `--place-report`), written from the placement's accessors. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "alloc.h"
#include "json.h"

#include "place_internal.h"

#define INVALID(...) HGR_STATUS(HGR_STATUS_INVALID_ARGUMENT, __VA_ARGS__)

static const char* reason_name(hgr_place_reason_t reason) {
  switch (reason) {
    case HGR_PLACE_BY_RULE:
      return "rule";
    case HGR_PLACE_BY_POLICY:
      return "policy";
    case HGR_PLACE_BY_FALLBACK:
      return "fallback";
    case HGR_PLACE_BY_INPUT:
      return "input";
    case HGR_PLACE_BY_COPY:
      return "copy";
  }
  return "unknown";
}

/* "1.5 MiB" */
static const char* format_bytes(uint64_t bytes, char* buffer, size_t capacity) {
  if (bytes >= (1u << 20))
    snprintf(buffer, capacity, "%.2f MiB", (double)bytes / (1 << 20));
  else if (bytes >= (1u << 10))
    snprintf(buffer, capacity, "%.1f KiB", (double)bytes / (1 << 10));
  else
    snprintf(buffer, capacity, "%llu B", (unsigned long long)bytes);
  return buffer;
}

/* Why, as the summary says it: "rule 2 (op:conv2d=pocl:1)", "policy first". */
static const char* why(const hgr_placement_t* placement, const hgr_node_placement_t* node, char* buffer,
                       size_t capacity) {
  char text[256], policy[32];
  const hgr_place_rule_t* rule = hgr__placement_rule(placement, node->rule_index);
  if (node->reason == HGR_PLACE_BY_RULE && rule)
    snprintf(buffer, capacity, "rule %zu (%s)", node->rule_index + 1, hgr__place_rule_format(rule, text, sizeof(text)));
  else if (node->reason == HGR_PLACE_BY_POLICY)
    snprintf(buffer, capacity, "policy %s", hgr__placement_policy(placement, policy, sizeof(policy)));
  else
    snprintf(buffer, capacity, "%s", reason_name(node->reason));
  return buffer;
}

/* One line per (op, why) on a device: counted by a linear scan, since a device has
 * few distinct pairs. */
typedef struct op_count_t {
  const char* op;
  char why[300];
  uint32_t count;
} op_count_t;

/* The (op, why) counts of device's nodes, from the placed graph's allocator. */
static hgr_status_t count_ops(const hgr_placement_t* placement, const hgr_placement_device_t* device,
                              op_count_t** out_counts, size_t* out_count) {
  const hgr_graph_t* graph = hgr_placement_graph(placement);
  size_t node_count = hgr_graph_node_count(graph), count = 0;
  op_count_t* counts = hgr__calloc(hgr__graph_allocator(graph), node_count + 1, sizeof(*counts));
  if (!counts) return HGR_STATUS(HGR_STATUS_RESOURCE_EXHAUSTED, "out of host memory");
  for (uint32_t n = 0; n < node_count; ++n) {
    hgr_node_placement_t node;
    hgr_node_info_t info;
    hgr_status_t status = hgr_placement_node(placement, n, &node);
    if (!status) status = hgr_graph_node_info(graph, n, &info);
    if (status) {
      hgr__free(hgr__graph_allocator(graph), counts);
      return status;
    }
    if (node.device_index != device->device_index || node.rank != device->rank) continue;
    const char* op = info.func_name ? info.func_name : "(input)";
    char text[300];
    why(placement, &node, text, sizeof(text));
    size_t at = 0;
    while (at < count && (strcmp(counts[at].op, op) || strcmp(counts[at].why, text))) ++at;
    if (at == count) {
      counts[count].op = op;
      snprintf(counts[count].why, sizeof(counts[count].why), "%s", text);
      count++;
    }
    counts[at].count++;
  }
  *out_counts = counts;
  *out_count = count;
  return HGR_OK;
}

hgr_status_t hgr_placement_write_summary(const hgr_placement_t* placement, FILE* out) {
  if (!placement || !out) return INVALID("hgr_placement_write_summary: placement and out must not be NULL");
  const hgr_graph_t* graph = hgr_placement_graph(placement);
  char policy[32], planned[32], bound[32], no_reuse[32];
  fprintf(out, "placement (policy %s):\n", hgr__placement_policy(placement, policy, sizeof(policy)));
  for (size_t d = 0; d < hgr_placement_device_count(placement); ++d) {
    hgr_placement_device_t device;
    HGR_RETURN_IF_ERROR(hgr_placement_device(placement, d, &device));
    fprintf(out, "  %s (key %d): %u node%s", hgr__placement_device_spec(placement, device.device_index, device.rank),
            device.key,
            device.node_count, device.node_count == 1 ? "" : "s");
    if (device.predicted_ms >= 0) fprintf(out, ", predicted busy %.3f ms", device.predicted_ms);
    fprintf(out, "\n");
    op_count_t* counts = NULL;
    size_t count = 0;
    HGR_RETURN_IF_ERROR(count_ops(placement, &device, &counts, &count));
    for (size_t c = 0; c < count; ++c) fprintf(out, "    %-20s %5u  %s\n", counts[c].op, counts[c].count, counts[c].why);
    hgr__free(hgr__graph_allocator(graph), counts);
    fprintf(out, "    memory: planned %s, lower bound %s", format_bytes(device.planned_bytes, planned, sizeof(planned)),
            format_bytes(device.lower_bound_bytes, bound, sizeof(bound)));
    if (device.lower_bound_bytes)
      fprintf(out, " (planned/bound %.3f)", (double)device.planned_bytes / (double)device.lower_bound_bytes);
    fprintf(out, ", no reuse %s", format_bytes(device.no_reuse_bytes, no_reuse, sizeof(no_reuse)));
    if (device.storage_bound_bytes > device.lower_bound_bytes)
      fprintf(out, "; one buffer per storage id needs at least %s",
              format_bytes(device.storage_bound_bytes, bound, sizeof(bound)));
    fprintf(out, "\n");
  }
  fprintf(out, "  copies:");
  uint32_t copies = 0;
  for (int c = 0; c < HGR_PAIR_CLASS_COUNT; ++c) {
    uint32_t n = hgr__placement_copy_count(placement, (hgr_pair_class_t)c);
    if (n) fprintf(out, "%s %s %u", copies ? "," : "", hgr_pair_class_name((hgr_pair_class_t)c), n);
    copies += n;
  }
  fprintf(out, copies ? "\n" : " none\n");
  double predicted = hgr_placement_predicted_ms(placement);
  size_t single_device = SIZE_MAX;
  double single = hgr_placement_best_single_ms(placement, &single_device);
  if (predicted >= 0) fprintf(out, "  predicted %.3f ms per run", predicted);
  if (predicted >= 0 && single >= 0 && single_device != SIZE_MAX)
    fprintf(out, " (best single device %s: %.3f ms)",
            hgr__placement_device_spec(placement, single_device, hgr__placement_best_single_rank(placement)), single);
  if (predicted >= 0) fprintf(out, "\n");
  /* AUTO kept one device: why, plainly */
  double split = hgr__placement_best_split_ms(placement);
  const char* single_spec = single_device == SIZE_MAX ? NULL
                            : hgr__placement_device_spec(placement, single_device,
                                                         hgr__placement_best_single_rank(placement));
  if (predicted >= 0 && single >= 0 && single_spec && predicted <= single && hgr_placement_device_count(placement) > 0) {
    if (split >= 0)
      fprintf(out,
              "  one device: the fastest split over several devices that auto found predicts %.3f ms, not %.0f %% "
              "under %s's %.3f ms alone (a split must win by that much to pay for its copies and waits)\n",
              split, 100.0 * HGR__PLACE_SPLIT_MARGIN, single_spec, single);
    else
      fprintf(out,
              "  one device: every node is predicted to finish earliest on %s, counting the copies another device "
              "would need, so auto split nothing\n",
              single_spec);
  }
  size_t fallbacks = 0;
  for (uint32_t n = 0; n < hgr_graph_node_count(graph); ++n) {
    hgr_node_placement_t node;
    hgr_node_info_t info;
    HGR_RETURN_IF_ERROR(hgr_placement_node(placement, n, &node));
    if (node.reason != HGR_PLACE_BY_FALLBACK) continue;
    HGR_RETURN_IF_ERROR(hgr_graph_node_info(graph, n, &info));
    if (fallbacks++ == 0) fprintf(out, "  fallbacks:\n");
    fprintf(out, "    node %u '%s' (%s) -> %s: %s\n", n, info.name, info.func_name,
            hgr__placement_device_spec(placement, node.device_index, node.rank), node.fallback ? node.fallback : "");
  }
  if (ferror(out)) return HGR_STATUS(HGR_STATUS_UNAVAILABLE, "writing the placement summary failed");
  return HGR_OK;
}

/* ---- JSON --------------------------------------------------------------------------------- */

static cJSON* number_or_null(double value) { return value >= 0 ? cJSON_CreateNumber(value) : cJSON_CreateNull(); }

static hgr_status_t build_json(const hgr_placement_t* placement, cJSON* root) {
  const hgr_graph_t* graph = hgr_placement_graph(placement);
  char text[300];
  bool ok = cJSON_AddStringToObject(root, "policy", hgr__placement_policy(placement, text, sizeof(text))) != NULL;
  ok = ok && cJSON_AddItemToObject(root, "predicted_ms", number_or_null(hgr_placement_predicted_ms(placement)));
  size_t single_device = SIZE_MAX;
  double single = hgr_placement_best_single_ms(placement, &single_device);
  if (ok && single >= 0 && single_device != SIZE_MAX) {
    cJSON* best = cJSON_AddObjectToObject(root, "best_single_device");
    const char* spec = hgr__placement_device_spec(placement, single_device, hgr__placement_best_single_rank(placement));
    ok = best && cJSON_AddStringToObject(best, "device", spec) &&
         cJSON_AddNumberToObject(best, "predicted_ms", single);
  }
  cJSON* devices = ok ? cJSON_AddArrayToObject(root, "devices") : NULL;
  ok = devices != NULL;
  for (size_t d = 0; ok && d < hgr_placement_device_count(placement); ++d) {
    hgr_placement_device_t device;
    HGR_RETURN_IF_ERROR(hgr_placement_device(placement, d, &device));
    cJSON* item = cJSON_CreateObject();
    ok = item && cJSON_AddItemToArray(devices, item);
    ok = ok && cJSON_AddStringToObject(item, "device",
                                       hgr__placement_device_spec(placement, device.device_index, device.rank));
    ok = ok && cJSON_AddNumberToObject(item, "key", device.key);
    ok = ok && cJSON_AddNumberToObject(item, "nodes", device.node_count);
    cJSON* ops = ok ? cJSON_AddArrayToObject(item, "ops") : NULL;
    ok = ops != NULL;
    op_count_t* counts = NULL;
    size_t count = 0;
    if (ok) HGR_RETURN_IF_ERROR(count_ops(placement, &device, &counts, &count));
    for (size_t c = 0; ok && c < count; ++c) {
      cJSON* op = cJSON_CreateObject();
      ok = op && cJSON_AddItemToArray(ops, op) && cJSON_AddStringToObject(op, "op", counts[c].op) &&
           cJSON_AddNumberToObject(op, "count", counts[c].count) && cJSON_AddStringToObject(op, "why", counts[c].why);
    }
    hgr__free(hgr__graph_allocator(graph), counts);
    ok = ok && cJSON_AddNumberToObject(item, "planned_bytes", (double)device.planned_bytes);
    ok = ok && cJSON_AddNumberToObject(item, "lower_bound_bytes", (double)device.lower_bound_bytes);
    ok = ok && cJSON_AddNumberToObject(item, "no_reuse_bytes", (double)device.no_reuse_bytes);
    ok = ok && cJSON_AddNumberToObject(item, "storage_bound_bytes", (double)device.storage_bound_bytes);
    ok = ok && cJSON_AddItemToObject(item, "predicted_ms", number_or_null(device.predicted_ms));
  }
  cJSON* copies = ok ? cJSON_AddObjectToObject(root, "copies") : NULL;
  ok = copies != NULL;
  for (int c = 0; ok && c < HGR_PAIR_CLASS_COUNT; ++c)
    ok = cJSON_AddNumberToObject(copies, hgr_pair_class_name((hgr_pair_class_t)c),
                                 hgr__placement_copy_count(placement, (hgr_pair_class_t)c)) != NULL;
  cJSON* fallbacks = ok ? cJSON_AddArrayToObject(root, "fallbacks") : NULL;
  cJSON* nodes = fallbacks ? cJSON_AddArrayToObject(root, "nodes") : NULL;
  ok = nodes != NULL;
  for (uint32_t n = 0; ok && n < hgr_graph_node_count(graph); ++n) {
    hgr_node_placement_t node;
    hgr_node_info_t info;
    HGR_RETURN_IF_ERROR(hgr_placement_node(placement, n, &node));
    HGR_RETURN_IF_ERROR(hgr_graph_node_info(graph, n, &info));
    const char* spec = hgr__placement_device_spec(placement, node.device_index, node.rank);
    cJSON* item = cJSON_CreateObject();
    ok = item && cJSON_AddItemToArray(nodes, item) && cJSON_AddNumberToObject(item, "id", n) &&
         cJSON_AddStringToObject(item, "name", info.name) &&
         cJSON_AddItemToObject(item, "op", info.func_name ? cJSON_CreateString(info.func_name) : cJSON_CreateNull()) &&
         cJSON_AddStringToObject(item, "device", spec) &&
         cJSON_AddStringToObject(item, "reason", reason_name(node.reason)) &&
         cJSON_AddItemToObject(item, "source_node", node.source_node == UINT32_MAX
                                                        ? cJSON_CreateNull()
                                                        : cJSON_CreateNumber(node.source_node)) &&
         cJSON_AddItemToObject(item, "predicted_ms", number_or_null(node.predicted_ms));
    const hgr_place_rule_t* rule = hgr__placement_rule(placement, node.rule_index);
    if (ok && node.reason == HGR_PLACE_BY_RULE && rule)
      ok = cJSON_AddStringToObject(item, "rule", hgr__place_rule_format(rule, text, sizeof(text))) != NULL;
    if (ok && node.reason == HGR_PLACE_BY_FALLBACK) {
      ok = cJSON_AddStringToObject(item, "fallback", node.fallback ? node.fallback : "") != NULL;
      cJSON* fallback = cJSON_CreateObject();
      ok = ok && fallback && cJSON_AddItemToArray(fallbacks, fallback) && cJSON_AddNumberToObject(fallback, "node", n) &&
           cJSON_AddStringToObject(fallback, "name", info.name) &&
           cJSON_AddStringToObject(fallback, "op", info.func_name ? info.func_name : "") &&
           cJSON_AddStringToObject(fallback, "device", spec) &&
           cJSON_AddStringToObject(fallback, "reason", node.fallback ? node.fallback : "");
    }
  }
  return ok ? HGR_OK : HGR_STATUS(HGR_STATUS_RESOURCE_EXHAUSTED, "out of host memory for the placement JSON");
}

hgr_status_t hgr_placement_write_json(const hgr_placement_t* placement, FILE* out) {
  if (!placement || !out) return INVALID("hgr_placement_write_json: placement and out must not be NULL");
  cJSON* root = cJSON_CreateObject();
  if (!root) return HGR_STATUS(HGR_STATUS_RESOURCE_EXHAUSTED, "out of host memory for the placement JSON");
  hgr_status_t status = build_json(placement, root);
  char* text = status ? NULL : cJSON_Print(root);
  cJSON_Delete(root);
  if (!status && !text) status = HGR_STATUS(HGR_STATUS_RESOURCE_EXHAUSTED, "out of host memory for the placement JSON");
  if (!status && (fputs(text, out) < 0 || fputc('\n', out) == EOF || ferror(out)))
    status = HGR_STATUS(HGR_STATUS_UNAVAILABLE, "writing the placement JSON failed");
  hgr__free(hgr_allocator_system(), text); /* cJSON_Print's: cJSON allocates with malloc */
  return status;
}
