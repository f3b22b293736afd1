/* Another rank's devices, as that rank found and measured them (place_internal.h,
 * hgr_place_measure_rank in hgr/place.h): across hosts whose devices differ, the
 * placing rank cannot find "r1/gpu:0" among its own devices, so rank 1 finds it,
 * calibrates the cost model over its listed devices, and sends this text.
 *
 * The text is JSON: {"format": "hgr-rank-measure-1", "rank", "cores", "graph" (the
 * unplaced graph's node count and a hash of its node names and ops, so that a rank
 * that loaded another graph is refused), "positions" (per listed spec, options'
 * devices then the rules': the rank's device index, or null for another rank's
 * spec), "devices" (their hgr_device_info_t fields), "pair_class" (names,
 * [a][b]), and for AUTO and STAGES "node_ms" ([device][node], null where it cannot
 * run), "copy_latency_ms" and "copy_ms_per_byte" ([a][b])}. */
#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "alloc.h"
#include "json.h"
#include "place_internal.h"

#define FORMAT "hgr-rank-measure-1"
#define INVALID(...) HGR_STATUS(HGR_STATUS_INVALID_ARGUMENT, __VA_ARGS__)
#define OUT_OF_MEMORY() HGR_STATUS(HGR_STATUS_RESOURCE_EXHAUSTED, "out of host memory")

/* ---- the device record's fields, one table for writing and reading ------------------- */

typedef enum { FIELD_TEXT, FIELD_SIZE, FIELD_U32, FIELD_U64, FIELD_INT, FIELD_BOOL, FIELD_TYPE } field_kind_t;

static const struct {
  const char* name;
  size_t offset;
  field_kind_t kind;
} fields[] = {
#define FIELD(member, kind) {#member, offsetof(hgr_device_info_t, member), kind}
    FIELD(spec, FIELD_TEXT),
    FIELD(index, FIELD_SIZE),
    FIELD(platform_index, FIELD_SIZE),
    FIELD(index_in_platform, FIELD_SIZE),
    FIELD(platform_short, FIELD_TEXT),
    FIELD(platform_name, FIELD_TEXT),
    FIELD(platform_vendor, FIELD_TEXT),
    FIELD(platform_version, FIELD_TEXT),
    FIELD(name, FIELD_TEXT),
    FIELD(vendor, FIELD_TEXT),
    FIELD(type, FIELD_TYPE),
    FIELD(version, FIELD_TEXT),
    FIELD(driver_version, FIELD_TEXT),
    FIELD(opencl_major, FIELD_INT),
    FIELD(opencl_minor, FIELD_INT),
    FIELD(compute_units, FIELD_U32),
    FIELD(global_mem_bytes, FIELD_U64),
    FIELD(local_mem_bytes, FIELD_U64),
    FIELD(max_alloc_bytes, FIELD_U64),
    FIELD(base_address_align_bits, FIELD_U32),
    FIELD(max_work_group_size, FIELD_SIZE),
    {"max_work_item_size_0", offsetof(hgr_device_info_t, max_work_item_sizes), FIELD_SIZE},
    {"max_work_item_size_1", offsetof(hgr_device_info_t, max_work_item_sizes) + sizeof(size_t), FIELD_SIZE},
    {"max_work_item_size_2", offsetof(hgr_device_info_t, max_work_item_sizes) + 2 * sizeof(size_t), FIELD_SIZE},
    FIELD(fp16, FIELD_BOOL),
    FIELD(fp64, FIELD_BOOL),
    FIELD(unified_memory, FIELD_BOOL),
    FIELD(timer_resolution_ns, FIELD_U64),
    FIELD(compiler_available, FIELD_BOOL),
#undef FIELD
};
#define FIELD_COUNT (sizeof(fields) / sizeof(*fields))

/* Integers travel as JSON numbers (doubles): exact up to 2^53. */
#define EXACT_LIMIT 9007199254740992.0

static double field_number(const hgr_device_info_t* info, size_t f) {
  const char* at = (const char*)info + fields[f].offset;
  switch (fields[f].kind) {
    case FIELD_SIZE: return (double)*(const size_t*)at;
    case FIELD_U32: return (double)*(const uint32_t*)at;
    case FIELD_U64: return (double)*(const uint64_t*)at;
    case FIELD_INT: return (double)*(const int*)at;
    case FIELD_TYPE: return (double)*(const hgr_device_type_t*)at;
    default: return 0.0;
  }
}

static cJSON* device_json(const hgr_device_info_t* info) {
  cJSON* object = cJSON_CreateObject();
  bool ok = object != NULL;
  for (size_t f = 0; ok && f < FIELD_COUNT; ++f) {
    const char* at = (const char*)info + fields[f].offset;
    if (fields[f].kind == FIELD_TEXT) {
      const char* text = *(const char* const*)at;
      ok = cJSON_AddStringToObject(object, fields[f].name, text ? text : "") != NULL;
    } else if (fields[f].kind == FIELD_BOOL) {
      ok = cJSON_AddBoolToObject(object, fields[f].name, *(const bool*)at) != NULL;
    } else {
      ok = cJSON_AddNumberToObject(object, fields[f].name, field_number(info, f)) != NULL;
    }
  }
  if (ok) return object;
  cJSON_Delete(object);
  return NULL;
}

/* Reads device record d into info (zeroed by the caller; its strings owned, from
 * allocator: device_free frees them). */
static hgr_status_t device_parse(hgr_allocator_t allocator, const cJSON* object, int rank, size_t d,
                                 hgr_device_info_t* info) {
  if (!cJSON_IsObject(object)) return INVALID("rank %d's measure: device %zu is not an object", rank, d);
  for (size_t f = 0; f < FIELD_COUNT; ++f) {
    const cJSON* value = cJSON_GetObjectItemCaseSensitive(object, fields[f].name);
    char* at = (char*)info + fields[f].offset;
    if (fields[f].kind == FIELD_TEXT) {
      if (!cJSON_IsString(value))
        return INVALID("rank %d's measure: device %zu: '%s' is missing or not a string", rank, d, fields[f].name);
      HGR_RETURN_IF_ERROR(hgr__strdup(allocator, value->valuestring, (char**)at));
      continue;
    }
    if (fields[f].kind == FIELD_BOOL) {
      if (!cJSON_IsBool(value))
        return INVALID("rank %d's measure: device %zu: '%s' is missing or not true/false", rank, d, fields[f].name);
      *(bool*)at = cJSON_IsTrue(value);
      continue;
    }
    double number = cJSON_IsNumber(value) ? value->valuedouble : -1.0;
    double limit = fields[f].kind == FIELD_U32    ? (double)UINT32_MAX
                   : fields[f].kind == FIELD_INT  ? (double)INT32_MAX
                   : fields[f].kind == FIELD_TYPE ? (double)HGR_DEVICE_TYPE_CUSTOM
                                                  : EXACT_LIMIT;
    if (!(number >= 0.0 && number <= limit && number == floor(number)))
      return INVALID("rank %d's measure: device %zu: '%s' is missing or not an integer from 0 to %.0f", rank, d,
                     fields[f].name, limit);
    /* a type is one CL_DEVICE_TYPE_* bit */
    if (fields[f].kind == FIELD_TYPE && (number < 1.0 || ((unsigned)number & ((unsigned)number - 1))))
      return INVALID("rank %d's measure: device %zu: 'type' %.0f is not a device type", rank, d, number);
    switch (fields[f].kind) {
      case FIELD_SIZE: *(size_t*)at = (size_t)number; break;
      case FIELD_U32: *(uint32_t*)at = (uint32_t)number; break;
      case FIELD_U64: *(uint64_t*)at = (uint64_t)number; break;
      case FIELD_INT: *(int*)at = (int)number; break;
      case FIELD_TYPE: *(hgr_device_type_t*)at = (hgr_device_type_t)(int)number; break;
      default: break;
    }
  }
  return HGR_OK;
}

/* Frees the strings device_parse gave info. */
static void device_free(hgr_allocator_t allocator, hgr_device_info_t* info) {
  for (size_t f = 0; f < FIELD_COUNT; ++f)
    if (fields[f].kind == FIELD_TEXT) hgr__free(allocator, *(char**)((char*)info + fields[f].offset));
  memset(info, 0, sizeof(*info));
}

/* ---- the graph's fingerprint ------------------------------------------------------------ */

/* FNV-1a over every node's name and op, each ended by a zero byte; from graph's
 * allocator. */
static char* graph_fingerprint(const hgr_graph_t* graph) {
  uint64_t hash = 14695981039346656037ull;
  for (uint32_t n = 0; n < graph->node_count; ++n) {
    const char* parts[2] = {graph->nodes[n].name, graph->nodes[n].is_op ? graph->nodes[n].func_name : ""};
    for (int p = 0; p < 2; ++p) {
      for (const char* c = parts[p] ? parts[p] : ""; *c; ++c) hash = (hash ^ (unsigned char)*c) * 1099511628211ull;
      hash *= 1099511628211ull;
    }
  }
  return hgr__format_in(hgr__graph_allocator(graph), "%u nodes, %016llx", graph->node_count,
                        (unsigned long long)hash);
}

/* ---- measuring (on the rank itself) ------------------------------------------------------- */

/* The spec of listed position p (options' devices, then the rules'). */
static const char* position_spec(const hgr_place_options_t* options, size_t p) {
  const char* spec = p < options->device_count ? options->devices[p] : options->rules[p - options->device_count].spec;
  return spec ? spec : "";
}

/* rows x columns values, value [r][c] at values[r * row_step + c * column_step];
 * null for INFINITY. */
static cJSON* matrix_json(const double* values, size_t rows, size_t columns, size_t row_step, size_t column_step) {
  cJSON* matrix = cJSON_CreateArray();
  for (size_t r = 0; matrix && r < rows; ++r) {
    cJSON* row = cJSON_CreateArray();
    for (size_t c = 0; row && c < columns; ++c) {
      double value = values[r * row_step + c * column_step];
      cJSON* cell = isfinite(value) ? cJSON_CreateNumber(value) : cJSON_CreateNull();
      if (!cell || !cJSON_AddItemToArray(row, cell)) {
        cJSON_Delete(cell);
        cJSON_Delete(row);
        row = NULL;
      }
    }
    if (!row || !cJSON_AddItemToArray(matrix, row)) {
      cJSON_Delete(row);
      cJSON_Delete(matrix);
      matrix = NULL;
    }
  }
  return matrix;
}

static bool add_item(cJSON* object, const char* key, cJSON* item) {
  if (item && cJSON_AddItemToObject(object, key, item)) return true;
  cJSON_Delete(item);
  return false;
}

/* The text of a measure: devices (count of them, local indices), the positions'
 * device slots, and the model (may be NULL). */
static hgr_status_t write_text(hgr_instance_t* instance, const hgr_graph_t* unplaced, int rank,
                               const size_t* position_slot, size_t position_count, const size_t* devices,
                               size_t count, const hgr__cost_model_t* model, char** out_text) {
  cJSON* root = cJSON_CreateObject();
  char* fingerprint = graph_fingerprint(unplaced);
  bool ok = root && fingerprint && cJSON_AddStringToObject(root, "format", FORMAT) &&
            cJSON_AddNumberToObject(root, "rank", rank) &&
            cJSON_AddNumberToObject(root, "cores", (double)sysconf(_SC_NPROCESSORS_ONLN)) &&
            cJSON_AddStringToObject(root, "graph", fingerprint);
  hgr__free(hgr__graph_allocator(unplaced), fingerprint);
  cJSON* positions = ok ? cJSON_AddArrayToObject(root, "positions") : NULL;
  for (size_t p = 0; positions && p < position_count; ++p) {
    cJSON* cell =
        position_slot[p] == SIZE_MAX ? cJSON_CreateNull() : cJSON_CreateNumber((double)devices[position_slot[p]]);
    if (!cell || !cJSON_AddItemToArray(positions, cell)) {
      cJSON_Delete(cell);
      positions = NULL;
    }
  }
  cJSON* list = positions ? cJSON_AddArrayToObject(root, "devices") : NULL;
  for (size_t d = 0; list && d < count; ++d) {
    cJSON* device = device_json(hgr_instance_device(instance, devices[d]));
    if (!device || !cJSON_AddItemToArray(list, device)) {
      cJSON_Delete(device);
      list = NULL;
    }
  }
  cJSON* classes = list ? cJSON_AddArrayToObject(root, "pair_class") : NULL;
  for (size_t a = 0; classes && a < count; ++a) {
    cJSON* row = cJSON_CreateArray();
    for (size_t b = 0; row && b < count; ++b)
      if (!cJSON_AddItemToArray(row, cJSON_CreateString(hgr_pair_class_name(
                                         hgr_instance_pair_class(instance, devices[a], devices[b]))))) {
        cJSON_Delete(row);
        row = NULL;
      }
    if (!row || !cJSON_AddItemToArray(classes, row)) {
      cJSON_Delete(row);
      classes = NULL;
    }
  }
  ok = classes != NULL;
  /* the model's node times are node-major, the text's device-major */
  if (ok && model)
    ok = add_item(root, "node_ms", matrix_json(model->node_ms, count, model->node_count, 1, count)) &&
         add_item(root, "copy_latency_ms", matrix_json(model->copy_latency_ms, count, count, count, 1)) &&
         add_item(root, "copy_ms_per_byte", matrix_json(model->copy_ms_per_byte, count, count, count, 1));
  char* text = ok ? cJSON_PrintUnformatted(root) : NULL;
  cJSON_Delete(root);
  if (!text) return OUT_OF_MEMORY();
  /* cJSON allocates with malloc: hgr never sets its hooks */
  *out_text = text;
  return HGR_OK;
}

hgr_status_t hgr_place_measure_rank(hgr_instance_t* instance, hgr_graph_t* graph, const hgr_place_options_t* options,
                                    int rank, char** out_text) {
  if (!out_text) return INVALID("hgr_place_measure_rank: out_text must not be NULL");
  *out_text = NULL;
  if (!instance || !graph || !options || rank < 0)
    return INVALID("hgr_place_measure_rank: instance, graph and options must not be NULL, rank must be >= 0");
  if (options->device_count && !options->devices)
    return INVALID("hgr_place_measure_rank: %zu devices but the devices array is NULL", options->device_count);
  if (options->rule_count > HGR_PLACE_MAX_RULES)
    return INVALID("hgr_place_measure_rank: %zu rules, more than HGR_PLACE_MAX_RULES (%d)", options->rule_count,
                   HGR_PLACE_MAX_RULES);
  size_t position_count = options->device_count + options->rule_count;
  hgr_allocator_t allocator = hgr__graph_allocator(graph);
  size_t* position_slot = hgr__alloc(allocator, (position_count + 1) * sizeof(*position_slot));
  size_t* devices = hgr__alloc(allocator, (position_count + 1) * sizeof(*devices));
  const hgr_device_info_t** infos = hgr__alloc(allocator, (position_count + 1) * sizeof(*infos));
  hgr_graph_t* unplaced = NULL;
  uint32_t* unplaced_source = NULL;
  hgr__place_problem_t problem;
  memset(&problem, 0, sizeof(problem));
  hgr__cost_model_t model;
  memset(&model, 0, sizeof(model));
  bool have_model = false;
  size_t count = 0;
  hgr_status_t status = position_slot && devices && infos ? HGR_OK : OUT_OF_MEMORY();
  for (size_t p = 0; !status && p < position_count; ++p) {
    const char* spec = position_spec(options, p);
    int spec_rank = -1;
    const char* local = spec;
    position_slot[p] = SIZE_MAX;
    status = hgr__place_split_spec(spec, &spec_rank, &local);
    if (!status && (spec_rank < 0 ? 0 : spec_rank) != rank) continue;
    size_t device = 0;
    if (!status) status = hgr_instance_find_device(instance, local, &device);
    if (status) {
      status = p < options->device_count
                   ? hgr_status_annotate(status, "placement device %zu '%s'", p + 1, spec)
                   : hgr_status_annotate(status, "rule %zu's device '%s'", p - options->device_count + 1, spec);
      break;
    }
    size_t slot = 0;
    while (slot < count && devices[slot] != device) ++slot;
    if (slot == count) {
      devices[count] = device;
      infos[count++] = hgr_instance_device(instance, device);
    }
    position_slot[p] = slot;
  }
  /* The caller free()s the text: the system allocator's (as cJSON's below) */
  if (!status && count == 0) status = hgr__strdup(hgr_allocator_system(), "", out_text);
  else if (!status) {
    status = hgr__place_unplace(graph, &unplaced, &unplaced_source);
    if (!status && (options->policy == HGR_PLACE_AUTO || options->policy == HGR_PLACE_STAGES)) {
      problem.allocator = allocator;
      problem.instance = instance;
      problem.graph = unplaced;
      problem.kernels = options->kernels;
      problem.device_count = count;
      problem.devices = devices;
      problem.infos = infos;
      status = hgr__place_problem_fill(&problem);
      if (!status) status = hgr__cost_model_build(&problem, options, &model);
      have_model = !status;
    }
    if (!status)
      status = write_text(instance, unplaced, rank, position_slot, position_count, devices, count,
                          have_model ? &model : NULL, out_text);
  }
  hgr__cost_model_release(&model);
  hgr__place_problem_free(&problem);
  hgr_graph_release(unplaced);
  hgr__free(allocator, unplaced_source);
  hgr__free(allocator, position_slot);
  hgr__free(allocator, devices);
  hgr__free(allocator, infos);
  return status;
}

/* ---- reading (on the placing rank) ----------------------------------------------------------- */

void hgr__rank_measure_free(hgr__rank_measure_t* measure) {
  if (!measure) return;
  hgr_allocator_t allocator = measure->allocator;
  for (size_t d = 0; measure->devices && d < measure->device_count; ++d) device_free(allocator, &measure->devices[d]);
  hgr__free(allocator, measure->devices);
  hgr__free(allocator, measure->position_device);
  hgr__free(allocator, measure->pair_class);
  hgr__free(allocator, measure->node_ms);
  hgr__free(allocator, measure->copy_latency_ms);
  hgr__free(allocator, measure->copy_ms_per_byte);
  memset(measure, 0, sizeof(*measure));
}

/* rows x columns numbers (null: INFINITY) from array `name` of root into *out. */
static hgr_status_t matrix_parse(hgr_allocator_t allocator, const cJSON* root, const char* name, int rank,
                                 size_t rows, size_t columns, double** out) {
  const cJSON* matrix = cJSON_GetObjectItemCaseSensitive(root, name);
  if (!cJSON_IsArray(matrix) || (size_t)cJSON_GetArraySize(matrix) != rows)
    return INVALID("rank %d's measure: '%s' is missing or has not %zu rows", rank, name, rows);
  if (!(*out = hgr__alloc(allocator, (rows * columns + 1) * sizeof(double)))) return OUT_OF_MEMORY();
  size_t r = 0;
  for (const cJSON* row = matrix->child; row; row = row->next, ++r) {
    if (!cJSON_IsArray(row) || (size_t)cJSON_GetArraySize(row) != columns)
      return INVALID("rank %d's measure: '%s' row %zu is not an array of %zu values", rank, name, r, columns);
    size_t c = 0;
    for (const cJSON* cell = row->child; cell; cell = cell->next, ++c) {
      if (cJSON_IsNull(cell)) (*out)[r * columns + c] = INFINITY;
      else if (cJSON_IsNumber(cell) && cell->valuedouble >= 0.0 && isfinite(cell->valuedouble))
        (*out)[r * columns + c] = cell->valuedouble;
      else
        return INVALID("rank %d's measure: '%s' [%zu][%zu] is not a time (a number >= 0, or null)", rank, name, r, c);
    }
  }
  return HGR_OK;
}

static hgr_status_t parse_devices(const cJSON* root, int rank, hgr__rank_measure_t* measure) {
  const cJSON* list = cJSON_GetObjectItemCaseSensitive(root, "devices");
  if (!cJSON_IsArray(list) || cJSON_GetArraySize(list) < 1)
    return INVALID("rank %d's measure: 'devices' is missing or empty", rank);
  size_t count = (size_t)cJSON_GetArraySize(list);
  if (!(measure->devices = hgr__calloc(measure->allocator, count, sizeof(*measure->devices)))) return OUT_OF_MEMORY();
  measure->device_count = count;
  size_t d = 0;
  for (const cJSON* device = list->child; device; device = device->next, ++d) {
    HGR_RETURN_IF_ERROR(device_parse(measure->allocator, device, rank, d, &measure->devices[d]));
    for (size_t e = 0; e < d; ++e)
      if (measure->devices[e].index == measure->devices[d].index)
        return INVALID("rank %d's measure: devices %zu and %zu are both device %zu", rank, e, d,
                       measure->devices[d].index);
  }
  const cJSON* classes = cJSON_GetObjectItemCaseSensitive(root, "pair_class");
  if (!cJSON_IsArray(classes) || (size_t)cJSON_GetArraySize(classes) != count)
    return INVALID("rank %d's measure: 'pair_class' is missing or has not %zu rows", rank, count);
  if (!(measure->pair_class = hgr__calloc(measure->allocator, count * count, sizeof(*measure->pair_class))))
    return OUT_OF_MEMORY();
  size_t a = 0;
  for (const cJSON* row = classes->child; row; row = row->next, ++a) {
    if (!cJSON_IsArray(row) || (size_t)cJSON_GetArraySize(row) != count)
      return INVALID("rank %d's measure: 'pair_class' row %zu is not an array of %zu names", rank, a, count);
    size_t b = 0;
    for (const cJSON* cell = row->child; cell; cell = cell->next, ++b) {
      int found = -1;
      for (int c = 0; c < HGR_PAIR_CLASS_COUNT && found < 0 && cJSON_IsString(cell); ++c)
        if (!strcmp(cell->valuestring, hgr_pair_class_name((hgr_pair_class_t)c))) found = c;
      if (found < 0) return INVALID("rank %d's measure: 'pair_class' [%zu][%zu] is not a pair class", rank, a, b);
      measure->pair_class[a * count + b] = (hgr_pair_class_t)found;
    }
  }
  return HGR_OK;
}

static hgr_status_t parse_positions(const cJSON* root, int rank, const hgr_place_options_t* options,
                                    hgr__rank_measure_t* measure) {
  size_t expected = options->device_count + options->rule_count;
  const cJSON* positions = cJSON_GetObjectItemCaseSensitive(root, "positions");
  if (!cJSON_IsArray(positions))
    return INVALID("rank %d's measure: 'positions' is missing or not an array", rank);
  if ((size_t)cJSON_GetArraySize(positions) != expected)
    return INVALID("rank %d's measure: it lists %d devices and rules' devices, this placement %zu: every rank must "
                   "be given the same --devices and --place",
                   rank, cJSON_GetArraySize(positions), expected);
  if (!(measure->position_device = hgr__alloc(measure->allocator, (expected + 1) * sizeof(size_t))))
    return OUT_OF_MEMORY();
  measure->position_count = expected;
  size_t p = 0;
  for (const cJSON* cell = positions->child; cell; cell = cell->next, ++p) {
    const char* spec = position_spec(options, p);
    int spec_rank = -1;
    const char* local = spec;
    bool ours = hgr_spec_rank(spec, &spec_rank, &local) && (spec_rank < 0 ? 0 : spec_rank) == rank;
    measure->position_device[p] = SIZE_MAX;
    if (!ours && cJSON_IsNull(cell)) continue;
    if (!ours || !cJSON_IsNumber(cell) || !(cell->valuedouble >= 0.0 && cell->valuedouble <= EXACT_LIMIT) ||
        cell->valuedouble != floor(cell->valuedouble) ||
        hgr__rank_measure_find(measure, (size_t)cell->valuedouble) == SIZE_MAX)
      return INVALID("rank %d's measure: position %zu ('%s') is %s", rank, p + 1, spec,
                     ours ? "not one of its devices" : "given a device, but the spec names another rank");
    measure->position_device[p] = (size_t)cell->valuedouble;
  }
  return HGR_OK;
}

hgr_status_t hgr__rank_measure_parse(const char* text, int rank, const hgr_place_options_t* options,
                                     const hgr_graph_t* unplaced, hgr__rank_measure_t* out_measure) {
  memset(out_measure, 0, sizeof(*out_measure));
  out_measure->allocator = hgr__graph_allocator(unplaced);
  out_measure->rank = rank;
  cJSON* root = cJSON_Parse(text);
  if (!root) return INVALID("rank %d's measure is not JSON", rank);
  const cJSON* format = cJSON_GetObjectItemCaseSensitive(root, "format");
  const cJSON* from = cJSON_GetObjectItemCaseSensitive(root, "rank");
  const cJSON* cores = cJSON_GetObjectItemCaseSensitive(root, "cores");
  const cJSON* fingerprint = cJSON_GetObjectItemCaseSensitive(root, "graph");
  hgr_status_t status = HGR_OK;
  if (!cJSON_IsString(format) || strcmp(format->valuestring, FORMAT))
    status = INVALID("rank %d's measure: 'format' is not \"" FORMAT "\" (another hgr version?)", rank);
  else if (!cJSON_IsNumber(from) || from->valuedouble != rank)
    status = INVALID("rank %d's measure: it is rank %g's", rank, cJSON_IsNumber(from) ? from->valuedouble : -1.0);
  else if (!cJSON_IsNumber(cores) || !(cores->valuedouble >= 1.0 && cores->valuedouble <= 1e9))
    status = INVALID("rank %d's measure: 'cores' is missing or not a count", rank);
  else if (!cJSON_IsString(fingerprint))
    status = INVALID("rank %d's measure: 'graph' is missing", rank);
  char* ours = status ? NULL : graph_fingerprint(unplaced);
  if (!status && !ours) status = OUT_OF_MEMORY();
  else if (!status && strcmp(ours, fingerprint->valuestring))
    status = INVALID("rank %d's measure is of another graph (%s; here %s): every rank must load the same graph", rank,
                     fingerprint->valuestring, ours);
  hgr__free(out_measure->allocator, ours);
  if (!status) {
    out_measure->cores = (long)cores->valuedouble;
    status = parse_devices(root, rank, out_measure);
  }
  if (!status) status = parse_positions(root, rank, options, out_measure);
  /* the model, for AUTO and STAGES, of this graph */
  bool costs = cJSON_GetObjectItemCaseSensitive(root, "node_ms") != NULL;
  size_t count = out_measure->device_count;
  if (!status && costs) {
    hgr_allocator_t allocator = out_measure->allocator;
    status = matrix_parse(allocator, root, "node_ms", rank, count, unplaced->node_count, &out_measure->node_ms);
    if (!status)
      status = matrix_parse(allocator, root, "copy_latency_ms", rank, count, count, &out_measure->copy_latency_ms);
    if (!status)
      status = matrix_parse(allocator, root, "copy_ms_per_byte", rank, count, count, &out_measure->copy_ms_per_byte);
  } else if (!status && (options->policy == HGR_PLACE_AUTO || options->policy == HGR_PLACE_STAGES)) {
    status = INVALID("rank %d's measure has no times, which AUTO and STAGES need", rank);
  }
  cJSON_Delete(root);
  if (status) hgr__rank_measure_free(out_measure);
  return status;
}
