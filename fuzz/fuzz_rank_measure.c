/* libFuzzer target: another rank's measure (hgr__rank_measure_parse), the JSON that
 * hgr_place_measure_rank writes on one rank and the placing rank reads, for the
 * devices r0/pocl:0 and r1/gpu:0, a rule's r1/gpu:1, AUTO, over a graph of an input
 * and two relus. A text that reads must describe rank 1: every listed spec of rank 1
 * maps to one of its devices and no other spec to any; its pair classes are classes;
 * its node and copy times are >= 0 (INFINITY where a node cannot run) for every
 * node and device. Seeds: corpus/rank_measure (a measure of this graph). */
#include <math.h>
#include <stdbool.h>

#include "fuzz.h"
#include "graph_internal.h"
#include "place_internal.h"

/* x -> relu0 -> relu1 (the output), float32 [4]. */
static hgr_graph_t* build_graph(void) {
  hgr_graph_t* graph = NULL;
  FUZZ_CHECK(hgr__graph_edit_new(hgr_allocator_system(), &graph) == HGR_OK);
  hgr__entry_t entry;
  memset(&entry, 0, sizeof(entry));
  entry.dtype = (hgr_dtype_t){HGR_DTYPE_FLOAT, 32, 1};
  entry.ndim = 1;
  entry.shape[0] = 4;
  entry.device_key = -1;
  uint32_t node = 0;
  FUZZ_CHECK(hgr__graph_edit_append(graph, "x", NULL, NULL, 0, NULL, 0, &entry, 1, &node) == HGR_OK);
  for (uint32_t k = 0; k < 2; ++k) {
    hgr__entry_ref_t input = {node, 0};
    entry.storage_id = k + 1;
    FUZZ_CHECK(hgr__graph_edit_append(graph, k ? "relu1" : "relu0", "relu", &input, 1, NULL, 0, &entry, 1, &node) ==
               HGR_OK);
  }
  FUZZ_CHECK(hgr__graph_edit_add_head(graph, (hgr__entry_ref_t){node, 0}) == HGR_OK);
  FUZZ_CHECK(hgr__graph_edit_finish(graph) == HGR_OK);
  return graph;
}

int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static hgr_graph_t* graph;
  if (!graph) graph = build_graph();
  char* text = malloc(size + 1);
  FUZZ_CHECK(text);
  memcpy(text, data, size);
  text[size] = '\0';
  static const char* const devices[] = {"r0/pocl:0", "r1/gpu:0"};
  hgr_place_options_t options;
  hgr_place_options_init(&options);
  options.devices = devices;
  options.device_count = 2;
  FUZZ_CHECK(hgr_place_options_parse(&options, "auto") == HGR_OK);
  FUZZ_CHECK(hgr_place_options_parse(&options, "op:relu=r1/gpu:1") == HGR_OK);
  hgr__rank_measure_t measure;
  hgr_status_t status = hgr__rank_measure_parse(text, 1, &options, graph, &measure);
  free(text);
  if (status) {
    FUZZ_CHECK(hgr_status_code(status) == HGR_STATUS_INVALID_ARGUMENT ||
               hgr_status_code(status) == HGR_STATUS_RESOURCE_EXHAUSTED);
    FUZZ_CHECK(measure.devices == NULL && measure.node_ms == NULL && measure.position_device == NULL);
    fuzz_consume_status(status);
    return 0;
  }
  FUZZ_CHECK(measure.rank == 1 && measure.cores >= 1 && measure.device_count >= 1);
  FUZZ_CHECK(measure.position_count == 3);
  FUZZ_CHECK(measure.position_device[0] == SIZE_MAX);
  for (size_t p = 1; p < 3; ++p)
    FUZZ_CHECK(hgr__rank_measure_find(&measure, measure.position_device[p]) != SIZE_MAX);
  size_t count = measure.device_count;
  for (size_t d = 0; d < count; ++d) {
    FUZZ_CHECK(measure.devices[d].spec && measure.devices[d].name && measure.devices[d].platform_name);
    FUZZ_CHECK(hgr__rank_measure_find(&measure, measure.devices[d].index) == d);
  }
  for (size_t at = 0; at < count * count; ++at) {
    FUZZ_CHECK((unsigned)measure.pair_class[at] < HGR_PAIR_CLASS_COUNT);
    FUZZ_CHECK(measure.copy_latency_ms[at] >= 0.0 && measure.copy_ms_per_byte[at] >= 0.0);
  }
  for (size_t at = 0; at < count * graph->node_count; ++at) FUZZ_CHECK(measure.node_ms[at] >= 0.0);
  hgr__rank_measure_free(&measure);
  return 0;
}
