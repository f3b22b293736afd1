/* Which device each node runs on (place_internal.h): rules first (a later rule
 * wins), then the policy's choice, then fallback to the next listed device that can
 * run the node; inputs follow their first consumer (across ranks, rank 0 reads the
 * inputs that are not weights). Works on the problem's can_run table alone. */
#include <fnmatch.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "alloc.h"
#include "place_internal.h"

const char* hgr__place_rule_format(const hgr_place_rule_t* rule, char* buffer, size_t capacity) {
  switch (rule->kind) {
    case HGR_PLACE_RULE_OP:
      snprintf(buffer, capacity, "op:%s=%s", rule->pattern, rule->spec);
      break;
    case HGR_PLACE_RULE_NODE:
      snprintf(buffer, capacity, "node:%s=%s", rule->pattern, rule->spec);
      break;
    case HGR_PLACE_RULE_RANGE:
      snprintf(buffer, capacity, "range:%u-%u=%s", rule->first, rule->last, rule->spec);
      break;
    default:
      snprintf(buffer, capacity, "(rule of kind %d)", (int)rule->kind);
  }
  return buffer;
}

static bool rule_matches(const hgr_place_rule_t* rule, const hgr_graph_t* graph, uint32_t node_id) {
  const hgr__node_t* node = &graph->nodes[node_id];
  switch (rule->kind) {
    case HGR_PLACE_RULE_OP:
      return !strcmp(node->func_name, rule->pattern);
    case HGR_PLACE_RULE_NODE:
      return fnmatch(rule->pattern, node->name, 0) == 0;
    case HGR_PLACE_RULE_RANGE:
      return node_id >= rule->first && node_id <= rule->last;
  }
  return false;
}

hgr_status_t hgr__place_apply_rules(hgr__place_problem_t* problem, const hgr_place_rule_t* rules,
                                    const uint32_t* rule_slots, size_t rule_count, hgr__node_choice_t* choices) {
  const hgr_graph_t* graph = problem->graph;
  for (size_t r = 0; r < rule_count; ++r) {
    if (rule_slots[r] >= problem->device_count)
      return HGR_STATUS(HGR_STATUS_INTERNAL, "rule %zu has slot %u of %zu", r, rule_slots[r], problem->device_count);
    for (uint32_t node_id = 0; node_id < graph->node_count; ++node_id) {
      if (!graph->nodes[node_id].is_op || !rule_matches(&rules[r], graph, node_id)) continue;
      if (!hgr__place_can_run(problem, node_id, rule_slots[r])) {
        char text[256], label[HGR__LABEL_CAPACITY];
        return HGR_STATUS(HGR_STATUS_INVALID_ARGUMENT, "rule %zu '%s' places %s on %s, which cannot run it: %s", r + 1,
                          hgr__place_rule_format(&rules[r], text, sizeof(text)),
                          hgr__graph_node_label(graph, node_id, label, sizeof(label)), rules[r].spec,
                          problem->cannot_reason[(size_t)node_id * problem->device_count + rule_slots[r]]);
      }
      problem->fixed[node_id] = rule_slots[r];
      choices[node_id].slot = rule_slots[r];
      choices[node_id].reason = HGR_PLACE_BY_RULE;
      choices[node_id].rule_index = r;
    }
  }
  return HGR_OK;
}

/* Every device's reason, "; "-joined, for the devices from `from` in listing order
 * (wrapping) up to but not including `to` (== from: all of them). */
static char* join_reasons(const hgr__place_problem_t* problem, uint32_t node_id, size_t from, size_t to) {
  size_t length = 1, count = problem->device_count;
  char* const* reasons = &problem->cannot_reason[(size_t)node_id * count];
  size_t slot = from;
  do {
    if (reasons[slot]) length += strlen(reasons[slot]) + 2;
    slot = (slot + 1) % count;
  } while (slot != to);
  char* text = hgr__alloc(problem->allocator, length);
  if (!text) return NULL;
  text[0] = 0;
  slot = from;
  do {
    if (reasons[slot]) {
      if (text[0]) strcat(text, "; ");
      strcat(text, reasons[slot]);
    }
    slot = (slot + 1) % count;
  } while (slot != to);
  return text;
}

hgr_status_t hgr__place_complete(const hgr__place_problem_t* problem, const uint32_t* policy_slot,
                                 hgr__node_choice_t* choices) {
  const hgr_graph_t* graph = problem->graph;
  size_t count = problem->device_count;
  if (count == 0) return HGR_STATUS(HGR_STATUS_INVALID_ARGUMENT, "no devices to place the graph on");
  uint32_t previous = 0; /* the last op node's slot: where a node the policy left goes first */
  for (uint32_t node_id = 0; node_id < graph->node_count; ++node_id) {
    const hgr__node_t* node = &graph->nodes[node_id];
    if (!node->is_op) continue;
    if (problem->fixed[node_id] != HGR__NO_DEVICE) {
      previous = problem->fixed[node_id];
      continue;
    }
    uint32_t preferred = policy_slot ? policy_slot[node_id] : 0;
    /* A __nop runs nothing: it stays with its input, so that it adds no copy. */
    if (!strcmp(node->func_name, "__nop") && graph->nodes[node->inputs[0].node_id].is_op)
      preferred = choices[node->inputs[0].node_id].slot;
    if (preferred >= count) preferred = previous;
    uint32_t slot = preferred;
    while (!hgr__place_can_run(problem, node_id, slot)) {
      slot = (uint32_t)((slot + 1) % count);
      if (slot == preferred) {
        char label[HGR__LABEL_CAPACITY];
        char* reasons = join_reasons(problem, node_id, 0, 0);
        hgr_status_t status = HGR_STATUS(HGR_STATUS_INVALID_ARGUMENT, "no listed device can run %s: %s",
                                         hgr__graph_node_label(graph, node_id, label, sizeof(label)),
                                         reasons ? reasons : "(out of memory for the reasons)");
        hgr__free(problem->allocator, reasons);
        return status;
      }
    }
    choices[node_id].slot = slot;
    choices[node_id].reason = slot == preferred ? HGR_PLACE_BY_POLICY : HGR_PLACE_BY_FALLBACK;
    if (slot != preferred && !(choices[node_id].fallback = join_reasons(problem, node_id, preferred, slot)))
      return HGR_STATUS(HGR_STATUS_RESOURCE_EXHAUSTED, "out of host memory");
    previous = slot;
  }

  /* Inputs go where their first consumer runs (across ranks: on rank 0 unless a
   * weight). */
  uint32_t* first_consumer =
      hgr__alloc(problem->allocator, ((size_t)graph->node_count + 1) * sizeof(*first_consumer));
  if (!first_consumer) return HGR_STATUS(HGR_STATUS_RESOURCE_EXHAUSTED, "out of host memory");
  for (uint32_t node_id = 0; node_id < graph->node_count; ++node_id) first_consumer[node_id] = UINT32_MAX;
  for (uint32_t node_id = graph->node_count; node_id-- > 0;)
    for (uint32_t i = 0; i < graph->nodes[node_id].input_count; ++i)
      first_consumer[graph->nodes[node_id].inputs[i].node_id] = node_id;
  for (uint32_t node_id = 0; node_id < graph->node_count; ++node_id) {
    if (graph->nodes[node_id].is_op) continue;
    uint32_t consumer = first_consumer[node_id];
    choices[node_id].slot =
        hgr__place_input_slot(problem, node_id, consumer == UINT32_MAX ? HGR__NO_DEVICE : choices[consumer].slot);
    choices[node_id].reason = HGR_PLACE_BY_INPUT;
  }
  hgr__free(problem->allocator, first_consumer);
  return HGR_OK;
}

void hgr__place_choices_free(hgr_allocator_t allocator, hgr__node_choice_t* choices, uint32_t count) {
  if (!choices) return;
  for (uint32_t n = 0; n < count; ++n) hgr__free(allocator, choices[n].fallback);
  hgr__free(allocator, choices);
}
