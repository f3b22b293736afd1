/* hgr/place.h: the options, the flow of hgr_place (devices and their ranks, the
 * unplaced graph, what each device can run, rules, the policy and fallback, copies,
 * the memory plan, the verifier) and the placement's accessors. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "alloc.h"
#include "device_keys.h"
#include "place_internal.h"

struct hgr_placement_s {
  hgr_allocator_t allocator;        /* the placed graph's: everything here is from it */
  hgr_graph_t* graph;               /* the placed graph */
  hgr_node_placement_t* nodes;      /* per placed node */
  char** fallbacks;                 /* per placed node, owned (NULL where none) */
  hgr_placement_device_t* devices;  /* the devices used, in slot order */
  size_t device_count;
  char** device_specs;              /* per devices[] */
  uint32_t copies[HGR_PAIR_CLASS_COUNT];
  double predicted_ms, best_single_ms;
  double best_split_ms; /* AUTO: the fastest split over several devices it found; < 0: none */
  size_t best_single_device;
  int best_single_rank;
  hgr_place_rule_t rules[HGR_PLACE_MAX_RULES];
  size_t rule_count;
  hgr_place_policy_t policy;
  uint32_t stages;
};

#define INVALID(...) HGR_STATUS(HGR_STATUS_INVALID_ARGUMENT, __VA_ARGS__)

/* ---- options -------------------------------------------------------------------- */

void hgr_place_options_init(hgr_place_options_t* options) {
  if (!options) return;
  memset(options, 0, sizeof(*options));
  options->policy = HGR_PLACE_FIRST;
  options->stages = 1;
}

static const char* const usage =
    "expected a policy (first, auto, stages:N) or a rule (op:NAME=SPEC, node:GLOB=SPEC, range:A-B=SPEC)";

static bool parse_u32(const char* text, size_t length, uint32_t* out) {
  if (length == 0 || length > 10) return false;
  uint64_t value = 0;
  for (size_t i = 0; i < length; ++i) {
    if (text[i] < '0' || text[i] > '9') return false;
    value = value * 10 + (uint64_t)(text[i] - '0');
  }
  if (value > UINT32_MAX) return false;
  *out = (uint32_t)value;
  return true;
}

hgr_status_t hgr_place_options_parse(hgr_place_options_t* options, const char* text) {
  if (!options || !text) return INVALID("hgr_place_options_parse: options and text must not be NULL");
  if (!strcmp(text, "first") || !strcmp(text, "auto")) {
    options->policy = text[0] == 'f' ? HGR_PLACE_FIRST : HGR_PLACE_AUTO;
    return HGR_OK;
  }
  if (!strncmp(text, "stages:", 7)) {
    uint32_t stages = 0;
    if (!parse_u32(text + 7, strlen(text + 7), &stages) || stages == 0)
      return INVALID("--place '%s': stages:N takes a number of stages of at least 1", text);
    options->policy = HGR_PLACE_STAGES;
    options->stages = stages;
    return HGR_OK;
  }
  hgr_place_rule_t rule;
  memset(&rule, 0, sizeof(rule));
  const char* colon = strchr(text, ':');
  const char* equals = strrchr(text, '=');
  if (!colon || !equals || equals < colon) return INVALID("--place '%s': %s", text, usage);
  size_t kind_length = (size_t)(colon - text);
  const char* pattern = colon + 1;
  size_t pattern_length = (size_t)(equals - pattern);
  const char* spec = equals + 1;
  if (kind_length == 2 && !strncmp(text, "op", 2))
    rule.kind = HGR_PLACE_RULE_OP;
  else if (kind_length == 4 && !strncmp(text, "node", 4))
    rule.kind = HGR_PLACE_RULE_NODE;
  else if (kind_length == 5 && !strncmp(text, "range", 5))
    rule.kind = HGR_PLACE_RULE_RANGE;
  else
    return INVALID("--place '%s': %s", text, usage);
  if (!spec[0]) return INVALID("--place '%s': the rule names no device after '='", text);
  if (strlen(spec) >= sizeof(rule.spec))
    return INVALID("--place '%s': the device spec is longer than %zu characters", text, sizeof(rule.spec) - 1);
  if (pattern_length == 0) return INVALID("--place '%s': the rule has nothing between ':' and '='", text);
  if (rule.kind == HGR_PLACE_RULE_RANGE) {
    const char* dash = memchr(pattern, '-', pattern_length);
    if (!dash || !parse_u32(pattern, (size_t)(dash - pattern), &rule.first) ||
        !parse_u32(dash + 1, pattern_length - (size_t)(dash - pattern) - 1, &rule.last))
      return INVALID("--place '%s': range:A-B=SPEC takes two node ids A and B", text);
    if (rule.first > rule.last)
      return INVALID("--place '%s': the range starts at node %u, after its end %u", text, rule.first, rule.last);
  } else {
    if (pattern_length >= sizeof(rule.pattern))
      return INVALID("--place '%s': the pattern is longer than %zu characters", text, sizeof(rule.pattern) - 1);
    memcpy(rule.pattern, pattern, pattern_length);
  }
  memcpy(rule.spec, spec, strlen(spec));
  if (options->rule_count >= HGR_PLACE_MAX_RULES)
    return INVALID("--place '%s': there are already %d rules, the most there can be", text, HGR_PLACE_MAX_RULES);
  options->rules[options->rule_count++] = rule;
  return HGR_OK;
}

/* ---- hgr_place --------------------------------------------------------------------- */

/* What one call works with, freed in one place; from problem.allocator (the
 * caller's graph's). */
typedef struct place_run_t {
  hgr__place_problem_t problem;
  hgr_graph_t* unplaced;
  uint32_t* unplaced_source;     /* per problem node: its node id in the caller's graph */
  size_t* devices;               /* instance device per slot (a measured slot's: its rank's) */
  int* ranks;                    /* per slot: its rank, 0 without a prefix */
  hgr__rank_measure_t* measures; /* per rank below measure_count: options.rank_measures read */
  size_t measure_count;
  const hgr__rank_measure_t** measured; /* per slot: its rank's measure, or NULL */
  int* record_ranks;             /* per slot: hgr_node_placement_t's rank */
  bool* weight;                  /* per problem node, across ranks with params */
  const hgr_device_info_t** infos;
  const char** specs;
  char** own_specs;              /* per slot: the rank-prefixed spec, where there is one */
  uint32_t* rule_slots;
  hgr__node_choice_t* choices;
  uint32_t* policy_slot;
  hgr__cost_model_t model;
  bool have_model;
  double* node_ms;               /* per problem node */
  double* busy_ms;               /* per slot */
  hgr_graph_t* placed;
  uint32_t* placed_source;       /* per placed node: its problem node */
  hgr__memory_plan_t memory;
} place_run_t;

static void place_run_free(place_run_t* run) {
  hgr__place_problem_free(&run->problem);
  hgr_allocator_t allocator = run->problem.allocator;
  if (run->unplaced) hgr__place_choices_free(allocator, run->choices, run->unplaced->node_count);
  hgr_graph_release(run->unplaced);
  hgr__free(allocator, run->unplaced_source);
  hgr__free(allocator, run->devices);
  hgr__free(allocator, run->ranks);
  for (size_t r = 0; run->measures && r < run->measure_count; ++r) hgr__rank_measure_free(&run->measures[r]);
  hgr__free(allocator, run->measures);
  hgr__free(allocator, run->measured);
  hgr__free(allocator, run->record_ranks);
  hgr__free(allocator, run->weight);
  hgr__free(allocator, run->infos);
  hgr__free(allocator, run->specs);
  for (size_t s = 0; run->own_specs && s < run->problem.device_count; ++s) hgr__free(allocator, run->own_specs[s]);
  hgr__free(allocator, run->own_specs);
  hgr__free(allocator, run->rule_slots);
  hgr__free(allocator, run->policy_slot);
  if (run->have_model) hgr__cost_model_release(&run->model);
  hgr__free(allocator, run->node_ms);
  hgr__free(allocator, run->busy_ms);
  hgr_graph_release(run->placed);
  hgr__free(allocator, run->placed_source);
  hgr__memory_plan_free(&run->memory);
}

/* A listed device is a slot: (rank, instance device), the rank 0 for a spec without
 * one. The slot of (rank, device), appended when not yet listed. */
static uint32_t slot_of(place_run_t* run, size_t* count, int rank, size_t device, int given_rank) {
  for (size_t s = 0; s < *count; ++s)
    if (run->devices[s] == device && run->ranks[s] == rank) return (uint32_t)s;
  run->devices[*count] = device;
  run->ranks[*count] = rank;
  run->record_ranks[*count] = given_rank;
  return (uint32_t)(*count)++;
}

/* The measure of rank `rank` (options.rank_measures), or NULL. */
static const hgr__rank_measure_t* rank_measure(const place_run_t* run, int rank) {
  return rank >= 0 && (size_t)rank < run->measure_count && run->measures[rank].devices ? &run->measures[rank] : NULL;
}

/* Splits the rank prefix of the spec at listed position `position` (options'
 * devices, then the rules') and finds its device: the one its rank measured, else
 * the local one. *out_rank is -1 without a prefix, *out_local the spec past it. */
static hgr_status_t find_slot_device(const place_run_t* run, hgr_instance_t* instance, const char* spec,
                                     size_t position, int* out_rank, const char** out_local, size_t* out_device) {
  HGR_RETURN_IF_ERROR(hgr__place_split_spec(spec, out_rank, out_local));
  const hgr__rank_measure_t* measure = rank_measure(run, *out_rank < 0 ? 0 : *out_rank);
  if (!measure) return hgr_instance_find_device(instance, *out_local, out_device);
  *out_device = measure->position_device[position];
  return HGR_OK;
}

/* Reads options.rank_measures. */
static hgr_status_t read_measures(place_run_t* run, const hgr_place_options_t* options) {
  if (!options->rank_measure_count) return HGR_OK;
  run->measures = hgr__calloc(run->problem.allocator, options->rank_measure_count, sizeof(*run->measures));
  if (!run->measures) return HGR_STATUS(HGR_STATUS_RESOURCE_EXHAUSTED, "out of host memory");
  run->measure_count = options->rank_measure_count;
  for (size_t r = 0; r < options->rank_measure_count; ++r)
    if (options->rank_measures[r] && options->rank_measures[r][0])
      HGR_RETURN_IF_ERROR(
          hgr__rank_measure_parse(options->rank_measures[r], (int)r, options, run->unplaced, &run->measures[r]));
  return HGR_OK;
}

static hgr_status_t resolve_devices(place_run_t* run, hgr_instance_t* instance, const hgr_place_options_t* options) {
  size_t capacity = options->device_count + options->rule_count + 1, count = 0;
  hgr_allocator_t allocator = run->problem.allocator;
  run->devices = hgr__calloc(allocator, capacity, sizeof(*run->devices));
  run->ranks = hgr__calloc(allocator, capacity, sizeof(*run->ranks));
  run->record_ranks = hgr__calloc(allocator, capacity, sizeof(*run->record_ranks));
  run->rule_slots = hgr__calloc(allocator, options->rule_count + 1, sizeof(*run->rule_slots));
  const char** locals = hgr__calloc(allocator, capacity, sizeof(*locals)); /* per slot: the spec past its prefix */
  if (!run->devices || !run->ranks || !run->record_ranks || !run->rule_slots || !locals) {
    hgr__free(allocator, locals);
    return HGR_STATUS(HGR_STATUS_RESOURCE_EXHAUSTED, "out of host memory");
  }
  hgr_status_t status = HGR_OK;
  for (size_t d = 0; d < options->device_count && !status; ++d) {
    size_t device = 0;
    int rank = -1;
    const char* spec = options->devices[d];
    const char* local = NULL;
    status = find_slot_device(run, instance, spec ? spec : "", d, &rank, &local, &device);
    if (status) {
      status = hgr_status_annotate(status, "placement device %zu '%s'", d + 1, spec ? spec : "(null)");
      break;
    }
    /* Without a prefix a spec is rank 0's as far as sameness goes ("pocl:0" and
     * "r0/pocl:0" are one device); with one, "r0/pocl:0" and "r1/pocl:0" are two. */
    int compared = rank < 0 ? 0 : rank;
    const hgr__rank_measure_t* measure = rank_measure(run, compared);
    const char* canonical = measure ? measure->devices[hgr__rank_measure_find(measure, device)].spec
                                    : hgr__device_spec(instance, device);
    for (size_t s = 0; s < count && !status; ++s)
      if (run->devices[s] == device && run->ranks[s] == compared)
        status = rank < 0 && run->record_ranks[s] < 0
                     ? INVALID("placement devices %zu and %zu ('%s') are the same device, %s", s + 1, d + 1, spec,
                               canonical)
                     : INVALID("placement devices %zu and %zu ('%s') are the same device, %s of rank %d", s + 1, d + 1,
                               spec, canonical, compared);
    if (status) break;
    locals[count] = local;
    slot_of(run, &count, compared, device, rank);
  }
  if (!status && count == 0) {
    size_t device = 0;
    status = hgr__device_keys_default_device(instance, &device);
    if (!status) slot_of(run, &count, 0, device, -1);
  }
  /* A rule may name a device the list lacks: it joins the list after the others. */
  for (size_t r = 0; r < options->rule_count && !status; ++r) {
    size_t device = 0;
    int rank = -1;
    const char* local = NULL;
    char text[256];
    status = find_slot_device(run, instance, options->rules[r].spec, options->device_count + r, &rank, &local,
                              &device);
    if (status) {
      status = hgr_status_annotate(status, "rule %zu '%s'", r + 1,
                                   hgr__place_rule_format(&options->rules[r], text, sizeof(text)));
      break;
    }
    size_t before = count;
    run->rule_slots[r] = slot_of(run, &count, rank < 0 ? 0 : rank, device, rank);
    if (count > before) locals[before] = local;
  }
  if (status) {
    hgr__free(allocator, locals);
    return status;
  }
  run->problem.device_count = count;
  run->problem.devices = run->devices;
  run->infos = hgr__calloc(allocator, count + 1, sizeof(*run->infos));
  run->measured = hgr__calloc(allocator, count + 1, sizeof(*run->measured));
  run->specs = hgr__calloc(allocator, count + 1, sizeof(*run->specs));
  run->own_specs = hgr__calloc(allocator, count + 1, sizeof(*run->own_specs));
  if (!run->infos || !run->measured || !run->specs || !run->own_specs) {
    hgr__free(allocator, locals);
    return HGR_STATUS(HGR_STATUS_RESOURCE_EXHAUSTED, "out of host memory");
  }
  /* Across ranks (a slot not on rank 0) rank 0 reads the inputs and writes the
   * outputs, on the first listed rank-0 slot. */
  bool distributed = false, prefixed = false;
  uint32_t home = HGR__NO_DEVICE;
  for (size_t s = 0; s < count; ++s) {
    distributed = distributed || run->ranks[s] != 0;
    prefixed = prefixed || run->record_ranks[s] >= 0;
    if (run->ranks[s] == 0 && home == HGR__NO_DEVICE) home = (uint32_t)s;
  }
  if (distributed && home == HGR__NO_DEVICE) {
    hgr__text_t listed = {.allocator = allocator};
    for (size_t s = 0; s < count; ++s)
      hgr__text_appendf(&listed, "%sr%d/%s", s ? ", " : "", run->ranks[s], locals[s] ? locals[s] : "");
    status = INVALID("a placement across ranks needs a device of rank 0 (r0/...) for the graph's inputs and "
                     "outputs; the devices are %s",
                     listed.data && !listed.failed ? listed.data : "(out of memory for the list)");
    hgr__free(allocator, listed.data);
    hgr__free(allocator, locals);
    return status;
  }
  run->problem.ranks = run->ranks;
  run->problem.infos = run->infos;
  run->problem.measured = run->measured;
  run->problem.distributed = distributed;
  run->problem.home_slot = distributed ? home : 0;
  /* The recorded specs: a local device's canonical spec on one rank without
   * prefixes (as before ranks); else "rN/" and the spec as given past its prefix,
   * the same text on every rank (each resolves it against its own devices). */
  for (size_t s = 0; s < count; ++s) {
    run->measured[s] = rank_measure(run, run->ranks[s]);
    run->infos[s] = run->measured[s]
                        ? &run->measured[s]->devices[hgr__rank_measure_find(run->measured[s], run->devices[s])]
                        : hgr_instance_device(instance, run->devices[s]);
    run->specs[s] = run->infos[s]->spec;
    if (!distributed && !prefixed) continue;
    run->record_ranks[s] = run->ranks[s];
    run->own_specs[s] =
        hgr__format_in(allocator, "r%d/%s", run->ranks[s], locals[s] ? locals[s] : run->infos[s]->spec);
    if (!run->own_specs[s]) {
      hgr__free(allocator, locals);
      return HGR_STATUS(HGR_STATUS_RESOURCE_EXHAUSTED, "out of host memory");
    }
    run->specs[s] = run->own_specs[s];
  }
  hgr__free(allocator, locals);
  return HGR_OK;
}

/* Across ranks: which graph inputs are weights (named in options->params). */
static hgr_status_t find_weights(place_run_t* run, const hgr_place_options_t* options) {
  const hgr_graph_t* graph = run->problem.graph;
  if (!run->problem.distributed || !options->params) return HGR_OK;
  run->weight = hgr__calloc(run->problem.allocator, (size_t)graph->node_count + 1, sizeof(*run->weight));
  if (!run->weight) return HGR_STATUS(HGR_STATUS_RESOURCE_EXHAUSTED, "out of host memory");
  for (uint32_t n = 0; n < graph->node_count; ++n) {
    if (graph->nodes[n].is_op) continue;
    size_t index = 0;
    hgr_status_t status = hgr_params_find(options->params, graph->nodes[n].name, &index);
    if (status && hgr_status_code(status) != HGR_STATUS_NOT_FOUND) return status;
    run->weight[n] = !status;
    hgr_status_free(status);
  }
  run->problem.weight = run->weight;
  return HGR_OK;
}

/* AUTO and STAGES: the cost model and the policy's slots. */
static hgr_status_t run_policy(place_run_t* run, const hgr_place_options_t* options, hgr_placement_t* placement) {
  const hgr_graph_t* graph = run->problem.graph;
  if (options->policy == HGR_PLACE_FIRST) return HGR_OK;
  if (options->policy != HGR_PLACE_AUTO && options->policy != HGR_PLACE_STAGES)
    return INVALID("placement policy %d is not one of FIRST, AUTO, STAGES", (int)options->policy);
  run->policy_slot =
      hgr__alloc(run->problem.allocator, ((size_t)graph->node_count + 1) * sizeof(*run->policy_slot));
  if (!run->policy_slot) return HGR_STATUS(HGR_STATUS_RESOURCE_EXHAUSTED, "out of host memory");
  for (uint32_t n = 0; n < graph->node_count; ++n) run->policy_slot[n] = run->problem.fixed[n];
  HGR_RETURN_IF_ERROR(hgr__cost_model_build(&run->problem, options, &run->model));
  run->have_model = true;
  if (options->policy == HGR_PLACE_AUTO) {
    uint32_t best_slot = HGR__NO_DEVICE;
    double best_ms = INFINITY, split_ms = INFINITY;
    HGR_RETURN_IF_ERROR(
        hgr__schedule_auto(&run->problem, &run->model, run->policy_slot, &best_slot, &best_ms, &split_ms));
    if (split_ms < INFINITY) placement->best_split_ms = split_ms;
    if (best_slot != HGR__NO_DEVICE) {
      placement->best_single_device = run->devices[best_slot];
      placement->best_single_rank = run->record_ranks[best_slot];
      placement->best_single_ms = best_ms;
    }
    return HGR_OK;
  }
  if (options->stages == 0) return INVALID("placement policy STAGES needs at least 1 stage");
  return hgr__schedule_stages(&run->problem, &run->model, options->stages, run->policy_slot);
}

static hgr_status_t predict(place_run_t* run, hgr_placement_t* placement) {
  if (!run->have_model) return HGR_OK;
  const hgr_graph_t* graph = run->problem.graph;
  hgr_allocator_t allocator = run->problem.allocator;
  uint32_t* slots = hgr__alloc(allocator, ((size_t)graph->node_count + 1) * sizeof(*slots));
  run->node_ms = hgr__calloc(allocator, (size_t)graph->node_count + 1, sizeof(*run->node_ms));
  run->busy_ms = hgr__calloc(allocator, run->problem.device_count + 1, sizeof(*run->busy_ms));
  if (!slots || !run->node_ms || !run->busy_ms) {
    hgr__free(allocator, slots);
    return HGR_STATUS(HGR_STATUS_RESOURCE_EXHAUSTED, "out of host memory");
  }
  for (uint32_t n = 0; n < graph->node_count; ++n) slots[n] = run->choices[n].slot;
  placement->predicted_ms = hgr__schedule_predict(&run->problem, &run->model, slots, run->busy_ms, run->node_ms);
  hgr__free(allocator, slots);
  /* NAN: the simulation's arrays could not be allocated */
  if (isnan(placement->predicted_ms)) return HGR_STATUS(HGR_STATUS_RESOURCE_EXHAUSTED, "out of host memory");
  return HGR_OK;
}

/* The pair class of a copy between two slots: cross-host between ranks, else as
 * their rank (this process, or the rank that measured them) has it. */
static hgr_pair_class_t pair_class(const place_run_t* run, hgr_instance_t* instance, size_t from, size_t to) {
  if (run->ranks[from] != run->ranks[to]) return HGR_PAIR_CROSS_HOST;
  const hgr__rank_measure_t* measure = run->measured[from];
  if (!measure) return hgr_instance_pair_class(instance, run->devices[from], run->devices[to]);
  return measure->pair_class[hgr__rank_measure_find(measure, run->devices[from]) * measure->device_count +
                             hgr__rank_measure_find(measure, run->devices[to])];
}

/* The placement's records from the run, for placement->graph. */
static hgr_status_t describe(place_run_t* run, hgr_instance_t* instance, hgr_placement_t* placement) {
  const hgr_graph_t* placed = placement->graph;
  size_t count = run->problem.device_count;
  hgr_allocator_t allocator = placement->allocator;
  placement->nodes = hgr__calloc(allocator, (size_t)placed->node_count + 1, sizeof(*placement->nodes));
  placement->fallbacks = hgr__calloc(allocator, (size_t)placed->node_count + 1, sizeof(*placement->fallbacks));
  placement->devices = hgr__calloc(allocator, count + 1, sizeof(*placement->devices));
  placement->device_specs = hgr__calloc(allocator, count + 1, sizeof(*placement->device_specs));
  bool* used = hgr__calloc(allocator, count + 1, sizeof(*used)); /* per slot: some node runs there */
  if (!placement->nodes || !placement->fallbacks || !placement->devices || !placement->device_specs ||
      !used) {
    hgr__free(allocator, used);
    return HGR_STATUS(HGR_STATUS_RESOURCE_EXHAUSTED, "out of host memory");
  }
  hgr_status_t status = HGR_OK;
  for (uint32_t n = 0; n < placed->node_count && !status; ++n) {
    uint32_t slot = (uint32_t)(placed->entries[placed->node_row_ptr[n]].device_key - 1);
    uint32_t source = run->placed_source[n];
    hgr_node_placement_t* record = &placement->nodes[n];
    record->device_index = run->devices[slot];
    record->rank = run->record_ranks[slot];
    record->predicted_ms = -1.0;
    if (source == UINT32_MAX) {
      record->reason = HGR_PLACE_BY_COPY;
      record->source_node = UINT32_MAX;
      uint32_t from = (uint32_t)(placed->entries[hgr__graph_entry_id(placed, placed->nodes[n].inputs[0])].device_key - 1);
      placement->copies[pair_class(run, instance, from, slot)]++;
      if (run->have_model)
        record->predicted_ms = hgr__cost_copy_ms(&run->model, from, slot, placed->entries[placed->node_row_ptr[n]].bytes);
    } else {
      const hgr__node_choice_t* choice = &run->choices[source];
      record->reason = choice->reason;
      record->rule_index = choice->rule_index;
      record->source_node = run->unplaced_source[source];
      if (run->node_ms) record->predicted_ms = run->node_ms[source];
      if (choice->fallback && (status = hgr__strdup(allocator, choice->fallback, &placement->fallbacks[n]))) break;
      record->fallback = placement->fallbacks[n];
    }
    used[slot] = true;
  }
  for (size_t s = 0; s < count && !status; ++s) {
    if (!used[s]) continue;
    hgr_placement_device_t* device = &placement->devices[placement->device_count];
    device->device_index = run->devices[s];
    device->rank = run->record_ranks[s];
    device->key = (int32_t)s + 1;
    device->predicted_ms = run->busy_ms ? run->busy_ms[s] : -1.0;
    for (size_t d = 0; d < run->memory.device_count; ++d)
      if (run->memory.devices[d].key == device->key) {
        device->planned_bytes = run->memory.devices[d].planned_bytes;
        device->lower_bound_bytes = run->memory.devices[d].lower_bound_bytes;
        device->no_reuse_bytes = run->memory.devices[d].no_reuse_bytes;
        device->storage_bound_bytes = run->memory.devices[d].storage_bound_bytes;
      }
    for (uint32_t n = 0; n < placed->node_count; ++n)
      if (placed->nodes[n].is_op && placed->entries[placed->node_row_ptr[n]].device_key == device->key)
        device->node_count++;
    status = hgr__strdup(allocator, run->specs[s], &placement->device_specs[placement->device_count]);
    device->spec = placement->device_specs[placement->device_count];
    placement->device_count++;
  }
  hgr__free(allocator, used);
  return status;
}

hgr_status_t hgr_place(hgr_instance_t* instance, hgr_graph_t* graph, const hgr_place_options_t* options,
                       hgr_placement_t** out_placement) {
  if (!out_placement) return INVALID("hgr_place: out_placement must not be NULL");
  *out_placement = NULL;
  if (!instance || !graph) return INVALID("hgr_place: instance and graph must not be NULL");
  hgr_place_options_t defaults;
  if (!options) {
    hgr_place_options_init(&defaults);
    options = &defaults;
  }
  if (options->device_count && !options->devices)
    return INVALID("hgr_place: %zu devices but the devices array is NULL", options->device_count);
  if (options->rule_count > HGR_PLACE_MAX_RULES)
    return INVALID("hgr_place: %zu rules, more than HGR_PLACE_MAX_RULES (%d)", options->rule_count,
                   HGR_PLACE_MAX_RULES);
  if (options->rank_measure_count && !options->rank_measures)
    return INVALID("hgr_place: %zu rank measures but the array is NULL", options->rank_measure_count);
  if (!(options->cross_host_latency_ms >= 0.0 && options->cross_host_latency_ms < INFINITY) ||
      !(options->cross_host_ms_per_byte >= 0.0 && options->cross_host_ms_per_byte < INFINITY))
    return INVALID("hgr_place: the cross-host copy costs (latency %g ms, %g ms per byte) must be finite and >= 0",
                   options->cross_host_latency_ms, options->cross_host_ms_per_byte);
  /* Everything placement makes (the placed graph included) is from the graph's allocator. */
  hgr_allocator_t allocator = hgr__graph_allocator(graph);
  place_run_t run;
  memset(&run, 0, sizeof(run));
  run.problem.allocator = allocator;
  hgr_placement_t* placement = hgr__calloc(allocator, 1, sizeof(*placement));
  hgr_status_t status = HGR_OK;
  if (!placement) return HGR_STATUS(HGR_STATUS_RESOURCE_EXHAUSTED, "out of host memory");
  placement->allocator = allocator;
  placement->predicted_ms = -1.0;
  placement->best_single_ms = -1.0;
  placement->best_split_ms = -1.0;
  placement->best_single_device = SIZE_MAX;
  placement->best_single_rank = -1;
  placement->policy = options->policy;
  placement->stages = options->stages;
  placement->rule_count = options->rule_count;
  memcpy(placement->rules, options->rules, options->rule_count * sizeof(*options->rules));

  if ((status = hgr__place_unplace(graph, &run.unplaced, &run.unplaced_source)) ||
      (status = read_measures(&run, options)) || (status = resolve_devices(&run, instance, options)))
    goto cleanup;
  run.problem.instance = instance;
  run.problem.graph = run.unplaced;
  run.problem.kernels = options->kernels;
  if ((status = find_weights(&run, options))) goto cleanup;
  run.choices = hgr__calloc(allocator, (size_t)run.unplaced->node_count + 1, sizeof(*run.choices));
  if (!run.choices) {
    status = HGR_STATUS(HGR_STATUS_RESOURCE_EXHAUSTED, "out of host memory");
    goto cleanup;
  }
  if ((status = hgr__place_problem_fill(&run.problem)) ||
      (status = hgr__place_apply_rules(&run.problem, options->rules, run.rule_slots, options->rule_count,
                                       run.choices)) ||
      (status = run_policy(&run, options, placement)) ||
      (status = hgr__place_complete(&run.problem, run.policy_slot, run.choices)) || (status = predict(&run, placement)))
    goto cleanup;
  /* Copies first with a storage per value, the memory plan on that graph, then the
   * same graph again with the planned storage ids. */
  hgr_graph_t* first_pass = NULL;
  uint32_t* first_source = NULL;
  if ((status = hgr__place_emit(&run.problem, run.choices, run.specs, NULL, &first_pass, &first_source))) goto cleanup;
  status = hgr__memory_plan(first_pass, options->kernels, &run.memory);
  hgr_graph_release(first_pass);
  hgr__free(allocator, first_source);
  if (status ||
      (status = hgr__place_emit(&run.problem, run.choices, run.specs, run.memory.storage_ids, &run.placed,
                                &run.placed_source)) ||
      (status = hgr__place_verify(run.placed, options->kernels)))
    goto cleanup;
  /* The placement holds the graph before describe fills its records, so that
   * releasing it on a failure frees the fallbacks made so far. */
  placement->graph = run.placed;
  run.placed = NULL;
  if ((status = describe(&run, instance, placement))) goto cleanup;
  *out_placement = placement;
  placement = NULL;

cleanup:
  place_run_free(&run);
  hgr_placement_release(placement);
  return status;
}

void hgr_placement_release(hgr_placement_t* placement) {
  if (!placement) return;
  hgr_allocator_t allocator = placement->allocator;
  if (placement->fallbacks && placement->graph)
    for (uint32_t n = 0; n < placement->graph->node_count; ++n) hgr__free(allocator, placement->fallbacks[n]);
  hgr__free(allocator, placement->fallbacks);
  hgr_graph_release(placement->graph);
  for (size_t d = 0; placement->device_specs && d < placement->device_count; ++d)
    hgr__free(allocator, placement->device_specs[d]);
  hgr__free(allocator, placement->device_specs);
  hgr__free(allocator, placement->nodes);
  hgr__free(allocator, placement->devices);
  hgr__free(allocator, placement);
}

/* ---- accessors ------------------------------------------------------------------------ */

hgr_graph_t* hgr_placement_graph(const hgr_placement_t* placement) { return placement ? placement->graph : NULL; }

hgr_status_t hgr_placement_node(const hgr_placement_t* placement, uint32_t node_id, hgr_node_placement_t* out_node) {
  if (!placement || !out_node) return INVALID("hgr_placement_node: placement and out_node must not be NULL");
  if (node_id >= placement->graph->node_count)
    return HGR_STATUS(HGR_STATUS_OUT_OF_RANGE, "node %u: the placed graph has %u nodes", node_id,
                      placement->graph->node_count);
  *out_node = placement->nodes[node_id];
  return HGR_OK;
}

size_t hgr_placement_device_count(const hgr_placement_t* placement) {
  return placement ? placement->device_count : 0;
}

hgr_status_t hgr_placement_device(const hgr_placement_t* placement, size_t i, hgr_placement_device_t* out_device) {
  if (!placement || !out_device) return INVALID("hgr_placement_device: placement and out_device must not be NULL");
  if (i >= placement->device_count)
    return HGR_STATUS(HGR_STATUS_OUT_OF_RANGE, "device %zu: the placement uses %zu devices", i,
                      placement->device_count);
  *out_device = placement->devices[i];
  return HGR_OK;
}

double hgr_placement_predicted_ms(const hgr_placement_t* placement) {
  return placement ? placement->predicted_ms : -1.0;
}

double hgr_placement_best_single_ms(const hgr_placement_t* placement, size_t* out_device_index) {
  if (out_device_index) *out_device_index = placement ? placement->best_single_device : SIZE_MAX;
  return placement ? placement->best_single_ms : -1.0;
}

/* ---- for place_report.c ----------------------------------------------------------------- */

const char* hgr__placement_device_spec(const hgr_placement_t* placement, size_t device_index, int rank) {
  for (size_t d = 0; d < placement->device_count; ++d)
    if (placement->devices[d].device_index == device_index && placement->devices[d].rank == rank)
      return placement->device_specs[d];
  return "(device not used)";
}

int hgr__placement_best_single_rank(const hgr_placement_t* placement) { return placement->best_single_rank; }
double hgr__placement_best_split_ms(const hgr_placement_t* placement) { return placement->best_split_ms; }

uint32_t hgr__placement_copy_count(const hgr_placement_t* placement, hgr_pair_class_t pair_class) {
  return (unsigned)pair_class < HGR_PAIR_CLASS_COUNT ? placement->copies[pair_class] : 0;
}

const hgr_place_rule_t* hgr__placement_rule(const hgr_placement_t* placement, size_t rule_index) {
  return rule_index < placement->rule_count ? &placement->rules[rule_index] : NULL;
}

const char* hgr__placement_policy(const hgr_placement_t* placement, char* buffer, size_t capacity) {
  switch (placement->policy) {
    case HGR_PLACE_FIRST:
      snprintf(buffer, capacity, "first");
      break;
    case HGR_PLACE_AUTO:
      snprintf(buffer, capacity, "auto");
      break;
    case HGR_PLACE_STAGES:
      snprintf(buffer, capacity, "stages:%u", placement->stages);
      break;
  }
  return buffer;
}
