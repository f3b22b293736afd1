/* libFuzzer target: placement after "which device can run what", over fake devices
 * (no OpenCL): a random graph built with hgr__graph_edit_* (elementwise ops,
 * reshapes, __nop aliases, inputs anywhere, several heads), 1 to 4 fake devices with
 * random limits and features, some (node, device) pairs made impossible, random
 * range and op rules; then rules, FIRST with fallback, copy insertion, the memory
 * plan and the placed graph again with the planned storage ids. Whenever the
 * pipeline accepts, the plan verifier must pass and the memory numbers must be
 * ordered: lower bound <= storage bound <= planned <= no reuse.
 *
 * The input is read as bytes, one decision each (an exhausted input reads zeros). */
#include <stdbool.h>

#include "fuzz.h"
#include "graph_internal.h"
#include "ops.h"
#include "place_internal.h"

typedef struct reader_t {
  const uint8_t* data;
  size_t size, at;
} reader_t;

static uint8_t next(reader_t* reader) { return reader->at < reader->size ? reader->data[reader->at++] : 0; }

/* Shapes: [4], [2, 2], [16], [4, 4]; a reshape moves between the two of a count. */
static const int32_t shape_ndim[4] = {1, 2, 1, 2};
static const int64_t shapes[4][2] = {{4, 0}, {2, 2}, {16, 0}, {4, 4}};
static const char* const newshape[4] = {"[4]", "[2, 2]", "[16]", "[4, 4]"};
static const char* const unary[4] = {"relu", "sigmoid", "tanh", "negative"};
static const char* const binary[4] = {"add", "multiply", "maximum", "subtract"};

#define MAX_VALUES 64

typedef struct value_t {
  hgr__entry_ref_t ref;
  int shape;
  uint32_t storage_id;
} value_t;

static hgr__entry_t entry_of(int shape, uint32_t storage_id) {
  hgr__entry_t entry;
  memset(&entry, 0, sizeof(entry));
  entry.dtype = (hgr_dtype_t){HGR_DTYPE_FLOAT, 32, 1};
  entry.ndim = shape_ndim[shape];
  for (int d = 0; d < entry.ndim; ++d) entry.shape[d] = shapes[shape][d];
  entry.storage_id = storage_id;
  entry.device_key = -1;
  return entry;
}

/* Builds the graph the input describes; NULL when the editor refuses (a failure it
 * must report properly). */
static hgr_graph_t* build_graph(reader_t* reader) {
  hgr_graph_t* graph = NULL;
  if (fuzz_consume_status(hgr__graph_edit_new(hgr_allocator_system(), &graph))) return NULL;
  value_t values[MAX_VALUES];
  uint32_t value_count = 0, storage = 0, node_count = 2 + next(reader) % 40;
  char name[32];
  hgr_status_t status = HGR_OK;
  for (uint32_t n = 0; n < node_count && !status && value_count < MAX_VALUES; ++n) {
    uint8_t kind = next(reader) % 8;
    snprintf(name, sizeof(name), "n%u", n);
    uint32_t node_id = 0;
    if (value_count == 0 || kind == 0) { /* an input */
      int shape = next(reader) % 4;
      hgr__entry_t output = entry_of(shape, storage++);
      status = hgr__graph_edit_append(graph, name, NULL, NULL, 0, NULL, 0, &output, 1, &node_id);
      values[value_count++] = (value_t){{node_id, 0}, shape, output.storage_id};
      continue;
    }
    const value_t* in = &values[next(reader) % value_count];
    int shape = in->shape;
    hgr__entry_t output = entry_of(shape, storage++);
    if (kind <= 3) { /* unary */
      status = hgr__graph_edit_append(graph, name, unary[next(reader) % 4], &in->ref, 1, NULL, 0, &output, 1,
                                      &node_id);
    } else if (kind <= 5) { /* binary, with a value of the same shape (or itself) */
      const value_t* other = in;
      uint32_t start = next(reader) % value_count;
      for (uint32_t v = 0; v < value_count; ++v)
        if (values[(start + v) % value_count].shape == shape) {
          other = &values[(start + v) % value_count];
          break;
        }
      hgr__entry_ref_t inputs[2] = {in->ref, other->ref};
      status = hgr__graph_edit_append(graph, name, binary[next(reader) % 4], inputs, 2, NULL, 0, &output, 1, &node_id);
    } else if (kind == 6) { /* reshape to the other shape of the count */
      shape ^= 1;
      output = entry_of(shape, output.storage_id);
      hgr__attr_t attr = {"newshape", (char*)newshape[shape]};
      status = hgr__graph_edit_append(graph, name, "reshape", &in->ref, 1, &attr, 1, &output, 1, &node_id);
    } else { /* __nop: an alias in the input's storage */
      output.storage_id = in->storage_id;
      status = hgr__graph_edit_append(graph, name, "__nop", &in->ref, 1, NULL, 0, &output, 1, &node_id);
    }
    values[value_count++] = (value_t){{node_id, 0}, shape, output.storage_id};
  }
  uint32_t heads = 1 + next(reader) % 3;
  if (!status) status = hgr__graph_edit_add_head(graph, values[value_count - 1].ref);
  for (uint32_t h = 1; h < heads && !status; ++h)
    status = hgr__graph_edit_add_head(graph, values[next(reader) % value_count].ref);
  if (!status) status = hgr__graph_edit_finish(graph);
  if (fuzz_consume_status(status)) {
    hgr_graph_release(graph);
    return NULL;
  }
  return graph;
}

#define MAX_DEVICES 4

int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  reader_t reader = {data, size, 0};
  hgr_graph_t* original = build_graph(&reader);
  if (!original) return 0;
  hgr_graph_t *unplaced = NULL, *first = NULL, *placed = NULL;
  uint32_t *unplaced_source = NULL, *first_source = NULL, *placed_source = NULL;
  hgr__node_choice_t* choices = NULL;
  hgr__memory_plan_t plan = {0}, again = {0};
  hgr__place_problem_t problem;
  memset(&problem, 0, sizeof(problem));
  hgr_status_t status = hgr__place_unplace(original, &unplaced, &unplaced_source);
  FUZZ_CHECK(!status); /* a valid graph always unplaces */

  /* Fake devices. */
  size_t device_count = 1 + next(&reader) % MAX_DEVICES, slots[MAX_DEVICES];
  hgr_device_info_t infos[MAX_DEVICES];
  const hgr_device_info_t* info_list[MAX_DEVICES];
  const char* specs[MAX_DEVICES] = {"fake:0", "fake:1", "fake:2", "fake:3"};
  for (size_t d = 0; d < device_count; ++d) {
    memset(&infos[d], 0, sizeof(infos[d]));
    uint8_t features = next(&reader);
    infos[d].spec = specs[d];
    infos[d].index = d;
    infos[d].platform_short = "fake";
    infos[d].compiler_available = (features & 7) != 0;
    infos[d].fp16 = features & 8;
    infos[d].fp64 = features & 16;
    infos[d].max_work_group_size = (size_t)1 << (next(&reader) % 11);
    for (int k = 0; k < 3; ++k) infos[d].max_work_item_sizes[k] = infos[d].max_work_group_size;
    infos[d].local_mem_bytes = 32768;
    info_list[d] = &infos[d];
    slots[d] = d;
  }
  problem.graph = unplaced;
  problem.device_count = device_count;
  problem.devices = slots;
  problem.infos = info_list;
  status = hgr__place_problem_fill(&problem);
  FUZZ_CHECK(!status);
  /* Some pairs made impossible, as a binary-only device would be. */
  uint32_t impossible = next(&reader) % 8;
  for (uint32_t i = 0; i < impossible && unplaced->node_count; ++i) {
    uint32_t node = next(&reader) % unplaced->node_count, slot = next(&reader) % (uint32_t)device_count;
    size_t at = (size_t)node * device_count + slot;
    if (!unplaced->nodes[node].is_op || !problem.can_run[at]) continue;
    problem.can_run[at] = false;
    problem.cannot_reason[at] = hgr__format_in(hgr_allocator_system(), "%s: made impossible by the fuzzer", specs[slot]);
    FUZZ_CHECK(problem.cannot_reason[at]);
  }
  /* Rules. */
  hgr_place_rule_t rules[8];
  uint32_t rule_slots[8], rule_count = next(&reader) % 5;
  for (uint32_t r = 0; r < rule_count; ++r) {
    memset(&rules[r], 0, sizeof(rules[r]));
    rule_slots[r] = next(&reader) % (uint32_t)device_count;
    snprintf(rules[r].spec, sizeof(rules[r].spec), "%s", specs[rule_slots[r]]);
    if (next(&reader) % 3 == 0) {
      rules[r].kind = HGR_PLACE_RULE_OP;
      snprintf(rules[r].pattern, sizeof(rules[r].pattern), "%s", binary[next(&reader) % 4]);
    } else {
      rules[r].kind = HGR_PLACE_RULE_RANGE;
      rules[r].first = next(&reader) % 48;
      rules[r].last = rules[r].first + next(&reader) % 16;
    }
  }
  uint32_t* policy_slot = NULL;
  uint32_t policy_storage[MAX_VALUES + 8];
  if (next(&reader) % 2 && unplaced->node_count <= MAX_VALUES + 8) { /* a policy's choices, some missing */
    for (uint32_t n = 0; n < unplaced->node_count; ++n) {
      uint8_t pick = next(&reader);
      policy_storage[n] = pick % 5 == 4 ? HGR__NO_DEVICE : pick % (uint32_t)device_count;
    }
    policy_slot = policy_storage;
  }
  choices = calloc((size_t)unplaced->node_count + 1, sizeof(*choices));
  FUZZ_CHECK(choices);
  status = hgr__place_apply_rules(&problem, rules, rule_slots, rule_count, choices);
  if (!status) {
    if (policy_slot)
      for (uint32_t n = 0; n < unplaced->node_count; ++n)
        if (problem.fixed[n] != HGR__NO_DEVICE) policy_slot[n] = problem.fixed[n];
    status = hgr__place_complete(&problem, policy_slot, choices);
  }
  if (fuzz_consume_status(status)) goto cleanup;
  for (uint32_t n = 0; n < unplaced->node_count; ++n) {
    FUZZ_CHECK(choices[n].slot < device_count);
    if (unplaced->nodes[n].is_op) FUZZ_CHECK(hgr__place_can_run(&problem, n, choices[n].slot));
  }
  FUZZ_CHECK(!hgr__place_emit(&problem, choices, specs, NULL, &first, &first_source));
  FUZZ_CHECK(!hgr__memory_plan(first, NULL, &plan));
  FUZZ_CHECK(!hgr__place_emit(&problem, choices, specs, plan.storage_ids, &placed, &placed_source));
  FUZZ_CHECK(placed->node_count == first->node_count && placed->entry_count == first->entry_count);
  status = hgr__place_verify(placed, NULL);
  if (status) {
    char* text = hgr_status_to_string(status);
    fprintf(stderr, "verifier: %s\n", text);
    free(text);
  }
  FUZZ_CHECK(!status);
  /* The plan of the placed graph is the same plan. */
  FUZZ_CHECK(!hgr__memory_plan(placed, NULL, &again));
  FUZZ_CHECK(again.device_count == plan.device_count);
  for (size_t d = 0; d < plan.device_count; ++d) {
    const hgr__memory_device_t* device = &plan.devices[d];
    FUZZ_CHECK(device->lower_bound_bytes <= device->storage_bound_bytes);
    FUZZ_CHECK(device->storage_bound_bytes <= device->planned_bytes);
    FUZZ_CHECK(device->planned_bytes <= device->no_reuse_bytes);
    FUZZ_CHECK(again.devices[d].planned_bytes == device->planned_bytes);
  }

cleanup:
  hgr__memory_plan_free(&plan);
  hgr__memory_plan_free(&again);
  if (unplaced) hgr__place_choices_free(hgr_allocator_system(), choices, unplaced->node_count);
  hgr__place_problem_free(&problem);
  hgr_graph_release(placed);
  hgr_graph_release(first);
  hgr_graph_release(unplaced);
  hgr_graph_release(original);
  free(unplaced_source);
  free(first_source);
  free(placed_source);
  return 0;
}
