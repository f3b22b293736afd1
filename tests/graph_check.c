/* Graphs run through an executor and checked against the reference (graph_check.h). */
#include "graph_check.h"

#include <stdio.h>
#include <stdlib.h>

#include "graph_internal.h"
#include "testlib.h"

hgr_status_t hgr_test_set_random_inputs(const hgr_graph_t* graph, hgr_executor_t* executor, uint64_t seed,
                                        float** inputs, hgr_test_reference_t* reference) {
  hgr_test_rng_t rng;
  hgr_test_rng_seed(&rng, seed);
  for (uint32_t i = 0; i < graph->arg_count; ++i) {
    uint64_t count = graph->entries[graph->node_row_ptr[graph->arg_nodes[i]]].element_count;
    free(inputs[i]);
    inputs[i] = malloc(count * sizeof(float) + 4);
    if (!inputs[i]) return HGR_STATUS(HGR_STATUS_RESOURCE_EXHAUSTED, "out of host memory");
    for (uint64_t e = 0; e < count; ++e) inputs[i][e] = hgr_test_rng_float(&rng, -2, 2);
    hgr_status_t status = hgr_executor_set_input(executor, i, inputs[i], count * sizeof(float));
    if (status) return status;
  }
  hgr_test_reference_free(reference);
  return hgr_test_reference_run(graph, (const float* const*)inputs, reference);
}

bool hgr_test_output_aliases_an_input(const hgr_graph_t* graph, size_t o) {
  uint32_t storage_slot = graph->entries[hgr__graph_entry_id(graph, graph->heads[o])].storage_slot;
  for (uint32_t i = 0; i < graph->arg_count; ++i)
    if (graph->entries[graph->node_row_ptr[graph->arg_nodes[i]]].storage_slot == storage_slot) return true;
  return false;
}

bool hgr_test_check_outputs(hgr_executor_t* executor, const hgr_graph_t* graph,
                            const hgr_test_reference_t* reference, bool skip_input_aliases, char* message,
                            size_t capacity) {
  for (size_t o = 0; o < reference->output_count; ++o) {
    if (skip_input_aliases && hgr_test_output_aliases_an_input(graph, o)) continue;
    uint64_t count = reference->element_counts[o];
    uint32_t node_id = graph->heads[o].node_id;
    float* got = malloc(count * sizeof(float) + 4);
    hgr_status_t status = got ? hgr_executor_get_output(executor, o, got, count * sizeof(float))
                              : HGR_STATUS(HGR_STATUS_RESOURCE_EXHAUSTED, "out of host memory");
    char detail[200] = "";
    bool ok = !status && hgr_test_reference_check(reference, o, got, detail, sizeof(detail));
    if (status) {
      char* text = hgr_status_to_string(status);
      snprintf(detail, sizeof(detail), "reading it returned %s", text ? text : "(no memory)");
      free(text);
      hgr_status_free(status);
    }
    free(got);
    if (!ok) {
      snprintf(message, capacity, "output %zu (node %u '%s', %llu elements): %s", o, node_id,
               graph->nodes[node_id].name, (unsigned long long)count, detail);
      return false;
    }
  }
  return true;
}
