/* Graph JSON (TVM's graph-executor format) -> hgr_graph_t.
 *
 * Accepts what TVM v0.18's graph executor accepts (reference/tvm-graph-format.md,
 * section 1.6) and checks the JSON form as it reads: keys, value types, node attrs,
 * node_row_ptr against num_outputs, column tags and lengths, per-entry values.
 * graph.c then checks what ties nodes and entries together. Where TVM's behaviour is
 * undefined or silently wrong (duplicate keys, inputs on null nodes) hgr refuses.
 * The public loaders (hgr_graph_load_json, hgr_graph_load_file) are here: parse, then
 * validate. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* cJSON's CMake package puts <prefix>/include on the path, its pkg-config file
 * <prefix>/include/cjson. */
#include "alloc.h"
#include "json.h"

#include "file.h"
#include "graph_internal.h"
#include "internal.h"

#define INVALID(...) HGR_STATUS(HGR_STATUS_INVALID_ARGUMENT, __VA_ARGS__)
#define OUT_OF_MEMORY(what) \
  HGR_STATUS(HGR_STATUS_RESOURCE_EXHAUSTED, "out of host memory for %s", what)

/* JSON numbers are doubles, exact for integers up to 2^53; every id, count and
 * dimension read here is bounded by that. */
#define JSON_INTEGER_LIMIT ((int64_t)1 << 53)

/* ---- JSON values --------------------------------------------------------------- */

static const char* json_type_name(const cJSON* item) {
  if (!item) return "nothing";
  if (cJSON_IsString(item)) return "a string";
  if (cJSON_IsNumber(item)) return "a number";
  if (cJSON_IsArray(item)) return "an array";
  if (cJSON_IsObject(item)) return "an object";
  if (cJSON_IsBool(item)) return "a boolean";
  if (cJSON_IsNull(item)) return "null";
  return "an invalid value";
}

/* The value itself for numbers and short strings, else its type: for messages. */
static const char* json_describe(const cJSON* item, char* buffer, size_t capacity) {
  if (cJSON_IsNumber(item))
    snprintf(buffer, capacity, "%.17g", item->valuedouble);
  else if (cJSON_IsString(item))
    snprintf(buffer, capacity, "\"%.40s\"", item->valuestring);
  else
    snprintf(buffer, capacity, "%s", json_type_name(item));
  return buffer;
}

static bool json_integer(const cJSON* item, int64_t min, int64_t max, int64_t* out_value) {
  if (!cJSON_IsNumber(item)) return false;
  double value = item->valuedouble;
  if (!(value >= (double)min && value <= (double)max)) return false; /* also NaN */
  int64_t integer = (int64_t)value;
  if ((double)integer != value) return false;
  *out_value = integer;
  return true;
}

static bool json_u32(const cJSON* item, uint32_t* out_value) {
  int64_t value;
  if (!json_integer(item, 0, UINT32_MAX, &value)) return false;
  *out_value = (uint32_t)value;
  return true;
}

/* Node attrs are strings that TVM reads with strtoul; hgr wants plain decimal digits
 * that fit 32 bits, so that "2x" or "-1" is an error instead of a surprise. */
static bool parse_decimal_u32(const char* text, uint32_t* out_value) {
  uint64_t value = 0;
  if (!*text) return false;
  for (const char* p = text; *p; ++p) {
    if (*p < '0' || *p > '9') return false;
    value = value * 10 + (uint64_t)(*p - '0');
    if (value > UINT32_MAX) return false;
  }
  *out_value = (uint32_t)value;
  return true;
}

/* [node_id, index] or [node_id, index, version]; returns NULL or what is wrong. */
static const char* parse_entry_ref(const cJSON* item, hgr__entry_ref_t* out_ref) {
  if (!cJSON_IsArray(item)) return "is not an array";
  int size = cJSON_GetArraySize(item);
  if (size < 2) return "has fewer than 2 fields";
  if (size > 3) return "has more than 3 fields";
  const cJSON* field = item->child;
  if (!json_u32(field, &out_ref->node_id))
    return "has a node id that is not a 32-bit unsigned integer";
  if (!json_u32(field->next, &out_ref->index))
    return "has an output index that is not a 32-bit unsigned integer";
  int64_t version;
  if (size == 3 && !json_integer(field->next->next, 0, UINT32_MAX, &version))
    return "has a version that is not a 32-bit unsigned integer";
  return NULL;
}

/* ---- the document -------------------------------------------------------------- */

static bool json_space(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r'; }

static hgr_status_t parse_document(const char* json, size_t length, cJSON** out_root) {
  *out_root = NULL;
  if (!json || length == 0) return INVALID("graph JSON is empty");
  const char* end = NULL;
  /* With a length, cJSON never reads past it; NUL termination is not required. */
  cJSON* root = cJSON_ParseWithLengthOpts(json, length, &end, 0);
  size_t offset = end ? (size_t)(end - json) : 0;
  if (offset > length) offset = length;
  if (!root) {
    char near[32];
    size_t n = 0;
    for (size_t i = offset; i < length && n < 24; ++i)
      near[n++] = json[i] >= 0x20 && json[i] < 0x7f ? json[i] : '?';
    near[n] = 0;
    return INVALID("malformed graph JSON at byte %zu of %zu (near '%s')", offset, length, near);
  }
  /* cJSON stops after the first value; TVM's reader refuses anything after it. */
  for (size_t i = offset; i < length; ++i) {
    if (!json_space(json[i])) {
      cJSON_Delete(root);
      return INVALID("graph JSON has unexpected content at byte %zu, after the top-level value", i);
    }
  }
  *out_root = root;
  return HGR_OK;
}

/* ---- nodes --------------------------------------------------------------------- */

static hgr_status_t parse_node_attrs(hgr_allocator_t allocator, hgr__node_t* node, const char* label,
                                     const cJSON* attrs) {
  if (!cJSON_IsObject(attrs))
    return INVALID("%s: '%s' must be an object, found %s", label, attrs->string,
                   json_type_name(attrs));
  int count = cJSON_GetArraySize(attrs);
  node->attrs = hgr__calloc(allocator, (size_t)count + 1, sizeof(*node->attrs));
  if (!node->attrs) return OUT_OF_MEMORY("node attrs");
  static const char* const standard[] = {"func_name", "num_inputs", "num_outputs", "flatten_data"};
  bool seen[4] = {false, false, false, false};
  const cJSON* child;
  cJSON_ArrayForEach(child, attrs) {
    const char* key = child->string;
    char found[64];
    if (!cJSON_IsString(child))
      return INVALID("%s: attr '%s' must be a string (TVM reads every attr as a string), found %s",
                     label, key, json_describe(child, found, sizeof(found)));
    const char* value = child->valuestring;
    size_t k = 0;
    while (k < 4 && strcmp(key, standard[k]) != 0) ++k;
    bool duplicate = k < 4 ? seen[k] : hgr__node_attr(node, key) != NULL;
    if (duplicate) return INVALID("%s: attr '%s' appears twice", label, key);
    uint32_t number = 0;
    if ((k == 1 || k == 2 || k == 3) && !parse_decimal_u32(value, &number))
      return INVALID("%s: attr %s is \"%.40s\", which is not a decimal number below 2^32", label,
                     key, value);
    if (k < 4) seen[k] = true;
    switch (k) {
      case 0:
        HGR_RETURN_IF_ERROR(hgr__strdup(allocator, value, &node->func_name));
        break;
      case 1:
        node->declared_num_inputs = number;
        break;
      case 2:
        node->num_outputs = number;
        break;
      case 3:
        node->flatten_data = number != 0;
        break;
      default: {
        hgr__attr_t* attr = &node->attrs[node->attr_count];
        HGR_RETURN_IF_ERROR(hgr__strdup(allocator, key, &attr->key));
        node->attr_count++; /* counted now so that the release path frees the key */
        HGR_RETURN_IF_ERROR(hgr__strdup(allocator, value, &attr->value));
      }
    }
  }
  for (size_t k = 0; k < 4; ++k)
    if (!seen[k])
      return INVALID(
          "%s: attrs lack '%s' (TVM requires func_name, num_inputs, num_outputs and "
          "flatten_data)",
          label, standard[k]);
  return HGR_OK;
}

static hgr_status_t parse_node(hgr_graph_t* graph, uint32_t node_id, const cJSON* item) {
  hgr__node_t* node = &graph->nodes[node_id];
  char label[HGR__LABEL_CAPACITY];
  if (!cJSON_IsObject(item))
    return INVALID("node %u: expected an object, found %s", node_id, json_type_name(item));
  /* Name the node in every message, even those about keys that come before "name". */
  const cJSON* name_item = cJSON_GetObjectItemCaseSensitive(item, "name");
  if (cJSON_IsString(name_item))
    snprintf(label, sizeof(label), "node %u '%.120s'", node_id, name_item->valuestring);
  else
    snprintf(label, sizeof(label), "node %u", node_id);

  const cJSON *op = NULL, *name = NULL, *inputs = NULL, *attrs = NULL, *control_deps = NULL;
  const cJSON* child;
  cJSON_ArrayForEach(child, item) {
    const char* key = child->string;
    const cJSON** slot = NULL;
    if (strcmp(key, "op") == 0)
      slot = &op;
    else if (strcmp(key, "name") == 0)
      slot = &name;
    else if (strcmp(key, "inputs") == 0)
      slot = &inputs;
    else if (strcmp(key, "attrs") == 0 || strcmp(key, "attr") == 0)
      slot = &attrs;
    else if (strcmp(key, "control_deps") == 0)
      slot = &control_deps;
    else
      return INVALID("%s: unknown key '%s' (a node has op, name, inputs, attrs and control_deps)",
                     label, key);
    if (*slot) return INVALID("%s: key '%s' appears twice", label, key);
    *slot = child;
  }
  const char* missing = NULL;
  if (!inputs) missing = "inputs";
  if (!name) missing = "name";
  if (!op) missing = "op";
  if (missing) return INVALID("%s: lacks the required key '%s'", label, missing);
  if (!cJSON_IsString(name))
    return INVALID("%s: name must be a string, found %s", label, json_type_name(name));
  HGR_RETURN_IF_ERROR(hgr__strdup(graph->allocator, name->valuestring, &node->name));
  if (cJSON_IsString(op) && strcmp(op->valuestring, "tvm_op") == 0) {
    node->is_op = true;
  } else if (!cJSON_IsString(op) || strcmp(op->valuestring, "null") != 0) {
    char found[64];
    return INVALID("%s: op %s is not supported (expected \"null\" or \"tvm_op\")", label,
                   json_describe(op, found, sizeof(found)));
  }
  /* TVM reads control_deps and ignores it. */
  if (control_deps && !cJSON_IsArray(control_deps))
    return INVALID("%s: control_deps must be an array, found %s", label,
                   json_type_name(control_deps));

  if (!cJSON_IsArray(inputs))
    return INVALID("%s: inputs must be an array, found %s", label, json_type_name(inputs));
  int input_count = cJSON_GetArraySize(inputs);
  if (!node->is_op && input_count > 0)
    return INVALID("%s: a null node takes no inputs, but it lists %d", label, input_count);
  node->inputs = hgr__calloc(graph->allocator, (size_t)input_count + 1, sizeof(*node->inputs));
  if (!node->inputs) return OUT_OF_MEMORY("node inputs");
  cJSON_ArrayForEach(child, inputs) {
    const char* problem = parse_entry_ref(child, &node->inputs[node->input_count]);
    if (problem)
      return INVALID("%s: input %u %s; an input is [node_id, index] or [node_id, index, version]",
                     label, node->input_count, problem);
    node->input_count++;
  }

  if (node->is_op && !attrs)
    return INVALID(
        "%s: a tvm_op node needs attrs with func_name, num_inputs, num_outputs and "
        "flatten_data",
        label);
  if (attrs) HGR_RETURN_IF_ERROR(parse_node_attrs(graph->allocator, node, label, attrs));
  /* TVM gives a null node one output whatever its attrs say. */
  if (!node->is_op) node->num_outputs = 1;
  if (node->num_outputs == 0) return INVALID("%s: num_outputs is 0; an op needs an output", label);
  return HGR_OK;
}

static hgr_status_t parse_nodes(hgr_graph_t* graph, const cJSON* nodes) {
  if (!cJSON_IsArray(nodes))
    return INVALID("nodes must be an array, found %s", json_type_name(nodes));
  int count = cJSON_GetArraySize(nodes);
  graph->nodes = hgr__calloc(graph->allocator, (size_t)count + 1, sizeof(*graph->nodes));
  if (!graph->nodes) return OUT_OF_MEMORY("nodes");
  const cJSON* item;
  cJSON_ArrayForEach(item, nodes) {
    /* Count the node first so that the release path frees what it holds. */
    uint32_t node_id = graph->node_count++;
    HGR_RETURN_IF_ERROR(parse_node(graph, node_id, item));
  }
  return HGR_OK;
}

/* node_row_ptr defines the entries, so it is checked here, before any column. */
static hgr_status_t parse_node_row_ptr(hgr_graph_t* graph, const cJSON* item) {
  if (!cJSON_IsArray(item))
    return INVALID("node_row_ptr must be an array, found %s", json_type_name(item));
  int size = cJSON_GetArraySize(item);
  if ((uint64_t)size != (uint64_t)graph->node_count + 1)
    return INVALID("node_row_ptr has %d values, but the graph has %u nodes, so it needs %llu", size,
                   graph->node_count, (unsigned long long)graph->node_count + 1);
  graph->node_row_ptr = hgr__calloc(graph->allocator, (size_t)size, sizeof(*graph->node_row_ptr));
  if (!graph->node_row_ptr) return OUT_OF_MEMORY("node_row_ptr");
  uint32_t i = 0;
  const cJSON* value;
  cJSON_ArrayForEach(value, item) {
    char found[64];
    if (!json_u32(value, &graph->node_row_ptr[i]))
      return INVALID("node_row_ptr[%u] is %s, which is not a 32-bit unsigned integer", i,
                     json_describe(value, found, sizeof(found)));
    ++i;
  }
  if (graph->node_row_ptr[0] != 0)
    return INVALID("node_row_ptr[0] is %u, but it must be 0", graph->node_row_ptr[0]);
  for (uint32_t node_id = 0; node_id < graph->node_count; ++node_id) {
    uint64_t expected = (uint64_t)graph->node_row_ptr[node_id] + graph->nodes[node_id].num_outputs;
    if (graph->node_row_ptr[node_id + 1] != expected) {
      char label[HGR__LABEL_CAPACITY];
      return INVALID(
          "node_row_ptr[%u] is %u, but %s has %u outputs from entry %u, so it must be "
          "%llu",
          node_id + 1, graph->node_row_ptr[node_id + 1],
          hgr__graph_node_label(graph, node_id, label, sizeof(label)),
          graph->nodes[node_id].num_outputs, graph->node_row_ptr[node_id],
          (unsigned long long)expected);
    }
  }
  graph->entry_count = graph->node_row_ptr[graph->node_count];
  return HGR_OK;
}

static hgr_status_t parse_arg_nodes(hgr_graph_t* graph, const cJSON* item) {
  if (!cJSON_IsArray(item))
    return INVALID("arg_nodes must be an array, found %s", json_type_name(item));
  graph->arg_nodes = hgr__calloc(graph->allocator, (size_t)cJSON_GetArraySize(item) + 1, sizeof(*graph->arg_nodes));
  if (!graph->arg_nodes) return OUT_OF_MEMORY("arg_nodes");
  const cJSON* value;
  cJSON_ArrayForEach(value, item) {
    char found[64];
    if (!json_u32(value, &graph->arg_nodes[graph->arg_count]))
      return INVALID("arg_nodes[%u] is %s, which is not a node id", graph->arg_count,
                     json_describe(value, found, sizeof(found)));
    graph->arg_count++;
  }
  return HGR_OK;
}

static hgr_status_t parse_heads(hgr_graph_t* graph, const cJSON* item) {
  if (!cJSON_IsArray(item))
    return INVALID("heads must be an array, found %s", json_type_name(item));
  graph->heads = hgr__calloc(graph->allocator, (size_t)cJSON_GetArraySize(item) + 1, sizeof(*graph->heads));
  if (!graph->heads) return OUT_OF_MEMORY("heads");
  const cJSON* value;
  cJSON_ArrayForEach(value, item) {
    const char* problem = parse_entry_ref(value, &graph->heads[graph->head_count]);
    if (problem)
      return INVALID("head %u %s; a head is [node_id, index] or [node_id, index, version]",
                     graph->head_count, problem);
    graph->head_count++;
  }
  return HGR_OK;
}

/* ---- attrs columns (indexed by entry id) -------------------------------------- */

enum {
  COLUMN_STORAGE_ID,
  COLUMN_SHAPE,
  COLUMN_DLTYPE,
  COLUMN_DEVICE_INDEX,
  COLUMN_STORAGE_SCOPE,
  COLUMN_COUNT
};

static const struct {
  const char* name;
  const char* tag;
  bool required;
} columns[COLUMN_COUNT] = {
    {"storage_id", "list_int", true},     {"shape", "list_shape", true},
    {"dltype", "list_str", true},         {"device_index", "list_int", false},
    {"storage_scope", "list_str", false},
};

/* TVM skips unknown columns tagged list_int (a vector<int>) or size_t (one number),
 * such as the legacy "dtype" column, and refuses every other unknown column. */
static hgr_status_t skip_unknown_column(const char* key, const char* tag, const cJSON* payload) {
  if (strcmp(tag, "size_t") == 0) {
    int64_t value;
    if (!json_integer(payload, 0, JSON_INTEGER_LIMIT, &value))
      return INVALID("attrs column '%s' (size_t) must hold one non-negative integer, found %s", key,
                     json_type_name(payload));
    return HGR_OK;
  }
  if (strcmp(tag, "list_int") != 0)
    return INVALID(
        "attrs column '%s' is unknown and tagged '%s'; only unknown list_int and size_t "
        "columns can be skipped",
        key, tag);
  if (!cJSON_IsArray(payload))
    return INVALID("attrs column '%s' (list_int) must hold an array, found %s", key,
                   json_type_name(payload));
  const cJSON* value;
  cJSON_ArrayForEach(value, payload) {
    int64_t integer;
    if (!json_integer(value, INT32_MIN, INT32_MAX, &integer))
      return INVALID("attrs column '%s' (list_int) holds %s, which is not a 32-bit integer", key,
                     json_type_name(value));
  }
  return HGR_OK;
}

static hgr_status_t parse_entry_value(hgr_graph_t* graph, int column, uint32_t entry_id,
                                      const cJSON* value) {
  hgr__entry_t* entry = &graph->entries[entry_id];
  char label[HGR__LABEL_CAPACITY], found[64];
  int64_t integer;
  switch (column) {
    case COLUMN_STORAGE_ID:
      /* TVM reads list_int into a vector<int>, so 2^31 - 1 is the largest id it can
       * write. Ids may be sparse: graph.c maps them to dense slots, so a large id
       * costs nothing. */
      if (!json_integer(value, 0, INT32_MAX, &integer))
        return INVALID("attrs column 'storage_id': %s: %s is not a storage id (0 to 2147483647)",
                       hgr__graph_entry_label(graph, entry_id, label, sizeof(label)),
                       json_describe(value, found, sizeof(found)));
      entry->storage_id = (uint32_t)integer;
      return HGR_OK;
    case COLUMN_DEVICE_INDEX:
      if (!json_integer(value, 0, INT32_MAX, &integer))
        return INVALID("attrs column 'device_index': %s: %s is not a device key (0 to 2147483647)",
                       hgr__graph_entry_label(graph, entry_id, label, sizeof(label)),
                       json_describe(value, found, sizeof(found)));
      entry->device_key = (int32_t)integer;
      return HGR_OK;
    case COLUMN_DLTYPE:
      if (!cJSON_IsString(value))
        return INVALID("attrs column 'dltype': %s: expected a dtype string, found %s",
                       hgr__graph_entry_label(graph, entry_id, label, sizeof(label)),
                       json_type_name(value));
      return hgr_status_annotate(hgr_dtype_parse(value->valuestring, &entry->dtype),
                                 "attrs column 'dltype': %s",
                                 hgr__graph_entry_label(graph, entry_id, label, sizeof(label)));
    case COLUMN_SHAPE: {
      if (!cJSON_IsArray(value))
        return INVALID("attrs column 'shape': %s: expected an array of dimensions, found %s",
                       hgr__graph_entry_label(graph, entry_id, label, sizeof(label)),
                       json_type_name(value));
      int ndim = cJSON_GetArraySize(value);
      if (ndim > HGR_MAX_DIMS)
        return INVALID("attrs column 'shape': %s: %d dimensions, but hgr supports at most %d",
                       hgr__graph_entry_label(graph, entry_id, label, sizeof(label)), ndim,
                       HGR_MAX_DIMS);
      int dim = 0;
      const cJSON* extent;
      cJSON_ArrayForEach(extent, value) {
        if (!json_integer(extent, 0, JSON_INTEGER_LIMIT, &entry->shape[dim]))
          return INVALID(
              "attrs column 'shape': %s: dimension %d is %s; dimensions are integers "
              "from 0 to 2^53",
              hgr__graph_entry_label(graph, entry_id, label, sizeof(label)), dim,
              json_describe(extent, found, sizeof(found)));
        ++dim;
      }
      entry->ndim = ndim;
      return HGR_OK;
    }
    case COLUMN_STORAGE_SCOPE:
      if (!cJSON_IsString(value))
        return INVALID("attrs column 'storage_scope': %s: expected a string, found %s",
                       hgr__graph_entry_label(graph, entry_id, label, sizeof(label)),
                       json_type_name(value));
      if (strcmp(value->valuestring, "") == 0 || strcmp(value->valuestring, "global") == 0)
        return HGR_OK;
      if (strstr(value->valuestring, "texture"))
        return INVALID(
            "attrs column 'storage_scope': %s: scope '%.60s': texture scopes not "
            "supported yet",
            hgr__graph_entry_label(graph, entry_id, label, sizeof(label)), value->valuestring);
      return INVALID(
          "attrs column 'storage_scope': %s: unknown scope '%.60s' (expected \"\" or "
          "\"global\")",
          hgr__graph_entry_label(graph, entry_id, label, sizeof(label)), value->valuestring);
    default:
      return HGR_STATUS(HGR_STATUS_INTERNAL, "unknown column %d", column);
  }
}

static hgr_status_t parse_attrs(hgr_graph_t* graph, const cJSON* attrs) {
  if (!cJSON_IsObject(attrs))
    return INVALID("attrs must be an object, found %s", json_type_name(attrs));
  const cJSON* payloads[COLUMN_COUNT] = {NULL};
  const cJSON* item;
  cJSON_ArrayForEach(item, attrs) {
    const char* key = item->string;
    if (!cJSON_IsArray(item) || cJSON_GetArraySize(item) != 2 || !cJSON_IsString(item->child))
      return INVALID("attrs column '%s' must be [tag, values] with a string tag", key);
    const char* tag = item->child->valuestring;
    const cJSON* payload = item->child->next;
    int column = 0;
    while (column < COLUMN_COUNT && strcmp(key, columns[column].name) != 0) ++column;
    if (column == COLUMN_COUNT) {
      HGR_RETURN_IF_ERROR(skip_unknown_column(key, tag, payload));
      continue;
    }
    if (payloads[column]) return INVALID("attrs column '%s' appears twice", key);
    if (strcmp(tag, columns[column].tag) != 0)
      return INVALID("attrs column '%s' must be tagged '%s', found '%.40s'", key,
                     columns[column].tag, tag);
    if (!cJSON_IsArray(payload))
      return INVALID("attrs column '%s' must hold an array, found %s", key,
                     json_type_name(payload));
    /* Checked before anything is allocated for the entries, so a huge num_outputs
     * cannot make us allocate what the JSON does not describe. */
    int size = cJSON_GetArraySize(payload);
    if ((uint64_t)size != graph->entry_count)
      return INVALID(
          "attrs column '%s' has %d values, but the graph has %u entries "
          "(node_row_ptr[%u]); columns are indexed by entry id",
          key, size, graph->entry_count, graph->node_count);
    payloads[column] = payload;
  }
  for (int column = 0; column < COLUMN_COUNT; ++column)
    if (columns[column].required && !payloads[column])
      return INVALID("attrs lack the required column '%s'", columns[column].name);

  graph->entries = hgr__calloc(graph->allocator, (size_t)graph->entry_count + 1, sizeof(*graph->entries));
  if (!graph->entries) return OUT_OF_MEMORY("entries");
  for (uint32_t node_id = 0; node_id < graph->node_count; ++node_id)
    for (uint32_t e = graph->node_row_ptr[node_id]; e < graph->node_row_ptr[node_id + 1]; ++e)
      graph->entries[e].node_id = node_id;
  graph->has_device_index = payloads[COLUMN_DEVICE_INDEX] != NULL;
  for (uint32_t e = 0; e < graph->entry_count; ++e) graph->entries[e].device_key = -1;
  for (int column = 0; column < COLUMN_COUNT; ++column) {
    uint32_t entry_id = 0;
    const cJSON* value;
    if (payloads[column]) {
      cJSON_ArrayForEach(value, payloads[column]) {
        HGR_RETURN_IF_ERROR(parse_entry_value(graph, column, entry_id, value));
        ++entry_id;
      }
    }
  }
  return HGR_OK;
}

/* ---- metadata ------------------------------------------------------------------- */

/* TVM's loaders stop at "metadata" and never look inside, so hgr keeps what it
 * records about a graph there: "metadata": {"hgr": {"device_bindings": {"KEY":
 * "SPEC", ...}}}, the device each key ran on when `hgr place` wrote the file. Other
 * metadata, and other keys inside "hgr" (what a later hgr may add), are ignored;
 * what hgr reads must be well formed. */
static hgr_status_t parse_metadata(hgr_graph_t* graph, const cJSON* metadata) {
  if (!cJSON_IsObject(metadata)) return HGR_OK;
  const cJSON* ours = cJSON_GetObjectItemCaseSensitive(metadata, "hgr");
  if (!ours) return HGR_OK;
  if (!cJSON_IsObject(ours)) return INVALID("metadata 'hgr' must be an object, found %s", json_type_name(ours));
  const cJSON* bindings = cJSON_GetObjectItemCaseSensitive(ours, "device_bindings");
  if (!bindings) return HGR_OK;
  if (!cJSON_IsObject(bindings))
    return INVALID("metadata 'hgr' 'device_bindings' must be an object of \"KEY\": \"SPEC\", found %s",
                   json_type_name(bindings));
  const cJSON* binding;
  cJSON_ArrayForEach(binding, bindings) {
    uint32_t key = 0;
    char found[64];
    if (!parse_decimal_u32(binding->string, &key) || key > INT32_MAX)
      return INVALID("metadata 'hgr' 'device_bindings': key \"%.40s\" is not a device key (a decimal number from "
                     "0 to 2147483647)",
                     binding->string);
    if (!cJSON_IsString(binding))
      return INVALID("metadata 'hgr' 'device_bindings': key %u must be bound to a device spec string, found %s",
                     key, json_describe(binding, found, sizeof(found)));
    HGR_RETURN_IF_ERROR(hgr_status_annotate(hgr__graph_edit_add_binding(graph, (int32_t)key, binding->valuestring),
                                            "metadata 'hgr' 'device_bindings'"));
  }
  return HGR_OK;
}

/* ---- top level ----------------------------------------------------------------- */

enum { KEY_NODES, KEY_ARG_NODES, KEY_NODE_ROW_PTR, KEY_HEADS, KEY_ATTRS, KEY_COUNT };
static const char* const top_keys[KEY_COUNT] = {"nodes", "arg_nodes", "node_row_ptr", "heads",
                                                "attrs"};

static hgr_status_t parse_graph(hgr_graph_t* graph, const cJSON* root) {
  if (!cJSON_IsObject(root))
    return INVALID("graph JSON must be an object, found %s", json_type_name(root));
  const cJSON* fields[KEY_COUNT] = {NULL};
  const cJSON* metadata = NULL;
  const cJSON* item;
  cJSON_ArrayForEach(item, root) {
    /* TVM stops reading at "metadata": whatever follows is ignored, even junk. */
    if (strcmp(item->string, "metadata") == 0) {
      metadata = item;
      break;
    }
    int key = 0;
    while (key < KEY_COUNT && strcmp(item->string, top_keys[key]) != 0) ++key;
    if (key == KEY_COUNT)
      return INVALID(
          "unknown top-level key '%.60s' (a graph has nodes, arg_nodes, node_row_ptr, "
          "heads, attrs and metadata)",
          item->string);
    if (fields[key]) return INVALID("top-level key '%s' appears twice", top_keys[key]);
    fields[key] = item;
  }
  for (int key = 0; key < KEY_COUNT; ++key)
    if (!fields[key])
      return INVALID("graph JSON lacks the required key '%s'%s", top_keys[key],
                     metadata ? " (keys after 'metadata' are ignored, as in TVM)" : "");
  HGR_RETURN_IF_ERROR(parse_nodes(graph, fields[KEY_NODES]));
  if (metadata) HGR_RETURN_IF_ERROR(parse_metadata(graph, metadata));
  HGR_RETURN_IF_ERROR(parse_node_row_ptr(graph, fields[KEY_NODE_ROW_PTR]));
  HGR_RETURN_IF_ERROR(parse_arg_nodes(graph, fields[KEY_ARG_NODES]));
  HGR_RETURN_IF_ERROR(parse_heads(graph, fields[KEY_HEADS]));
  return parse_attrs(graph, fields[KEY_ATTRS]);
}

hgr_status_t hgr__graph_parse_json(hgr_allocator_t allocator, const char* json, size_t length,
                                   hgr_graph_t** out_graph) {
  *out_graph = NULL;
  cJSON* root = NULL;
  hgr_graph_t* graph = hgr__calloc(allocator, 1, sizeof(*graph));
  if (!graph) return OUT_OF_MEMORY("a graph");
  atomic_init(&graph->refcount, 1);
  graph->allocator = allocator;
  hgr_status_t status = parse_document(json, length, &root);
  if (status) goto cleanup;
  status = parse_graph(graph, root);
cleanup:
  cJSON_Delete(root);
  if (status)
    hgr_graph_release(graph);
  else
    *out_graph = graph;
  return status;
}

/* ---- loading ------------------------------------------------------------------ */

hgr_status_t hgr_graph_load_json(const char* json, size_t length, hgr_graph_t** out_graph) {
  hgr_graph_t* graph = NULL;
  *out_graph = NULL;
  /* The system's: a public call with no instance (hgr/allocator.h). */
  hgr_status_t status = hgr__graph_parse_json(hgr_allocator_system(), json, length, &graph);
  if (!status) status = hgr__graph_validate(graph);
  if (status)
    hgr_graph_release(graph);
  else
    *out_graph = graph;
  return status;
}

hgr_status_t hgr_graph_load_file(const char* path, hgr_graph_t** out_graph) {
  *out_graph = NULL;
  void* data = NULL;
  size_t length = 0;
  /* The system's, as the graph's: a public call with no instance. */
  hgr_status_t status =
      hgr__file_read(hgr_allocator_system(), path, HGR__FILE_MAX_GRAPH_JSON_BYTES, &data, &length);
  if (!status)
    status =
        hgr_status_annotate(hgr_graph_load_json(data, length, out_graph), "graph file '%s'", path);
  hgr__free(hgr_allocator_system(), data);
  return status;
}
