/* libFuzzer target: op planning (hgr__op_plan) as executor creation does it, but
 * without devices: two sets of device limits stand in for them (a typical GPU and
 * one given by the input). Covers each op's attr, dtype and shape checks and its
 * launch builder, and user-kernel ops from a manifest written at start-up.
 *
 * The input describes one op node in lines, so that mutations change the op rather
 * than break the JSON around it; the harness writes the graph JSON with cJSON and
 * loads it through hgr_graph_load_json:
 *
 *   op add                      func_name; "@N" is op N (modulo the count) of the
 *                               built-in registry, so every op is reachable
 *   in float32 4 1 3            an input: dtype and dimensions (repeatable)
 *   out float32 4 5 3           an output (repeatable)
 *   attr axis=-1                a node attr (repeatable)
 *   alias                       output 0 shares input 0's storage id
 *   limits 64 64 64 64 4096     max work-group, max work-items per dimension, local
 *                               memory bytes of the second device
 *
 * Inference and planning must agree (hgr__op_infer): a node that plans has exactly
 * the outputs its op infers, and a node whose inference fails does not plan (user
 * ops without "shapes" have no inference and are exempt). When planning fails and
 * inference gives other outputs than the graph's, the harness gives the entries
 * the inferred dtypes and shapes and plans again, so that the fuzzer need not
 * guess shapes to get past the checks. */
#include <stdbool.h>
#include <unistd.h>

#include "json.h"

#include "fuzz.h"
#include "graph_internal.h"
#include "ops.h"
#include "ops_families.h"

static const hgr__op_t* const families[] = {
#define HGR__FAMILY(name) hgr__ops_##name,
    HGR__OP_FAMILIES
#undef HGR__FAMILY
};
static const char* registry[512];
static size_t registry_count;
static hgr_kernel_library_t* library;

/* Two user ops: one with every argument kind on an "elements" NDRange, one with an
 * "attrs" NDRange (global_size and local_size). */
static const char manifest[] =
    "{\"ops\": ["
    "{\"func_name\": \"user_elements\", \"kernel\": \"k\", \"source\": \"k.cl\", \"inputs\": 2,"
    " \"outputs\": 1, \"args\": [\"input 0\", \"input 1\", \"output 0\", \"elements output 0\","
    " \"elements input 1\", \"dim input 0 -1\", \"dim output 0 0\", \"attr alpha float\","
    " \"attr n int\", \"attr m uint\"], \"ndrange\": \"elements\"},"
    "{\"func_name\": \"user_nd\", \"kernel\": \"k\", \"source\": \"k.cl\", \"inputs\": 1,"
    " \"outputs\": 2, \"args\": [\"input 0\", \"output 1\", \"dim output 0 -2\"],"
    " \"ndrange\": \"attrs\"}]}";

static void write_file(const char* path, const char* text) {
  FILE* file = fopen(path, "wb");
  FUZZ_CHECK(file);
  FUZZ_CHECK(fwrite(text, 1, strlen(text), file) == strlen(text));
  FUZZ_CHECK(fclose(file) == 0);
}

int LLVMFuzzerInitialize(int* argc, char*** argv);
int LLVMFuzzerInitialize(int* argc, char*** argv) {
  (void)argc;
  (void)argv;
  for (size_t f = 0; f < sizeof(families) / sizeof(families[0]); ++f)
    for (const hgr__op_t* op = families[f]; op->name; ++op)
      if (registry_count < sizeof(registry) / sizeof(registry[0])) registry[registry_count++] = op->name;
  char dir[512];
  fuzz_make_dir("op-plan", dir, sizeof(dir));
  char manifest_path[sizeof(dir) + 16], source_path[sizeof(dir) + 16];
  snprintf(manifest_path, sizeof(manifest_path), "%s/ops.json", dir);
  snprintf(source_path, sizeof(source_path), "%s/k.cl", dir);
  write_file(manifest_path, manifest);
  write_file(source_path, "__kernel void k(void) {}\n");
  hgr_status_t status = hgr_kernel_library_load_file(manifest_path, &library);
  if (status) {
    char* text = hgr_status_to_string(status);
    fprintf(stderr, "the op-plan fuzzer's manifest does not load: %s\n", text);
    abort();
  }
  /* The library holds the files' contents now. */
  remove(manifest_path);
  remove(source_path);
  rmdir(dir);
  return 0;
}

/* ---- the input -> graph JSON ------------------------------------------------------ */

#define MAX_INPUTS 16
#define MAX_OUTPUTS 4

typedef struct node_desc_t {
  const char* func_name;
  cJSON* shapes[MAX_INPUTS + MAX_OUTPUTS]; /* inputs, then outputs */
  const char* dtypes[MAX_INPUTS + MAX_OUTPUTS];
  uint32_t inputs, outputs;
  bool alias;
} node_desc_t;

/* "float32 4 1 3" -> dtype and a JSON array of dimensions; NULL when malformed. */
static cJSON* parse_entry(char* text, const char** out_dtype) {
  char* save = NULL;
  char* dtype = strtok_r(text, " ", &save);
  if (!dtype) return NULL;
  *out_dtype = dtype;
  cJSON* shape = cJSON_CreateArray();
  FUZZ_CHECK(shape);
  for (char* word; (word = strtok_r(NULL, " ", &save));)
    cJSON_AddItemToArray(shape, cJSON_CreateNumber((double)strtoll(word, NULL, 10)));
  return shape;
}

/* The graph JSON for the described node (malloc'd), or NULL when the input does
 * not describe one. */
static char* build_json(char* text, hgr__limits_t* limits) {
  node_desc_t node;
  memset(&node, 0, sizeof(node));
  cJSON* attrs = cJSON_CreateObject();
  FUZZ_CHECK(attrs);
  const char* out_dtypes[MAX_OUTPUTS];
  cJSON* out_shapes[MAX_OUTPUTS];
  char* save = NULL;
  for (char* line = strtok_r(text, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
    if (!strncmp(line, "op ", 3)) {
      node.func_name = line + 3;
    } else if (!strncmp(line, "in ", 3) && node.inputs < MAX_INPUTS) {
      cJSON* shape = parse_entry(line + 3, &node.dtypes[node.inputs]);
      if (shape) node.shapes[node.inputs++] = shape;
    } else if (!strncmp(line, "out ", 4) && node.outputs < MAX_OUTPUTS) {
      cJSON* shape = parse_entry(line + 4, &out_dtypes[node.outputs]);
      if (shape) out_shapes[node.outputs++] = shape;
    } else if (!strncmp(line, "attr ", 5)) {
      char* equals = strchr(line + 5, '=');
      if (equals) {
        *equals = 0;
        cJSON_DeleteItemFromObjectCaseSensitive(attrs, line + 5);
        cJSON_AddStringToObject(attrs, line + 5, equals + 1);
      }
    } else if (!strcmp(line, "alias")) {
      node.alias = true;
    } else if (!strncmp(line, "limits ", 7)) {
      unsigned long long v[5] = {1, 1, 1, 1, 0};
      if (sscanf(line + 7, "%llu %llu %llu %llu %llu", &v[0], &v[1], &v[2], &v[3], &v[4]) == 5)
        *limits = (hgr__limits_t){v[0] ? v[0] : 1, {v[1] ? v[1] : 1, v[2] ? v[2] : 1, v[3] ? v[3] : 1}, v[4], 0};
    }
  }
  char* json = NULL;
  if (node.func_name && node.func_name[0] && node.outputs > 0) {
    for (uint32_t k = 0; k < node.outputs; ++k) { /* node owns them now */
      node.shapes[node.inputs + k] = out_shapes[k];
      node.dtypes[node.inputs + k] = out_dtypes[k];
    }
    cJSON* root = cJSON_CreateObject();
    cJSON* nodes = cJSON_AddArrayToObject(root, "nodes");
    cJSON* arg_nodes = cJSON_AddArrayToObject(root, "arg_nodes");
    cJSON* row_ptr = cJSON_AddArrayToObject(root, "node_row_ptr");
    cJSON* heads = cJSON_AddArrayToObject(root, "heads");
    cJSON* columns = cJSON_AddObjectToObject(root, "attrs");
    FUZZ_CHECK(root && nodes && arg_nodes && row_ptr && heads && columns);
    cJSON* op_inputs = cJSON_CreateArray();
    for (uint32_t i = 0; i < node.inputs; ++i) {
      char name[16];
      snprintf(name, sizeof(name), "x%u", i);
      cJSON* input = cJSON_CreateObject();
      cJSON_AddStringToObject(input, "op", "null");
      cJSON_AddStringToObject(input, "name", name);
      cJSON_AddArrayToObject(input, "inputs");
      cJSON_AddItemToArray(nodes, input);
      cJSON_AddItemToArray(arg_nodes, cJSON_CreateNumber(i));
      cJSON_AddItemToArray(row_ptr, cJSON_CreateNumber(i));
      cJSON* ref = cJSON_CreateArray();
      cJSON_AddItemToArray(ref, cJSON_CreateNumber(i));
      cJSON_AddItemToArray(ref, cJSON_CreateNumber(0));
      cJSON_AddItemToArray(op_inputs, ref);
    }
    char count[16];
    cJSON* op = cJSON_CreateObject();
    cJSON_AddStringToObject(op, "op", "tvm_op");
    cJSON_AddStringToObject(op, "name", "node");
    cJSON_AddStringToObject(attrs, "func_name", node.func_name);
    snprintf(count, sizeof(count), "%u", node.inputs);
    cJSON_AddStringToObject(attrs, "num_inputs", count);
    snprintf(count, sizeof(count), "%u", node.outputs);
    cJSON_AddStringToObject(attrs, "num_outputs", count);
    cJSON_AddStringToObject(attrs, "flatten_data", "0");
    cJSON_AddItemToObject(op, "attrs", attrs);
    attrs = NULL;
    cJSON_AddItemToObject(op, "inputs", op_inputs);
    cJSON_AddItemToArray(nodes, op);
    cJSON_AddItemToArray(row_ptr, cJSON_CreateNumber(node.inputs));
    cJSON_AddItemToArray(row_ptr, cJSON_CreateNumber(node.inputs + node.outputs));
    cJSON* head = cJSON_CreateArray();
    cJSON_AddItemToArray(head, cJSON_CreateNumber(node.inputs));
    cJSON_AddItemToArray(head, cJSON_CreateNumber(0));
    cJSON_AddItemToArray(heads, head);
    cJSON *storage = cJSON_CreateArray(), *shapes = cJSON_CreateArray(), *dtypes = cJSON_CreateArray();
    for (uint32_t e = 0; e < node.inputs + node.outputs; ++e) {
      uint32_t storage_id = node.alias && node.inputs > 0 && e == node.inputs ? 0 : e;
      cJSON_AddItemToArray(storage, cJSON_CreateNumber(storage_id));
      cJSON_AddItemToArray(shapes, node.shapes[e]);
      node.shapes[e] = NULL;
      cJSON_AddItemToArray(dtypes, cJSON_CreateString(node.dtypes[e]));
    }
    cJSON* column = cJSON_AddArrayToObject(columns, "storage_id");
    cJSON_AddItemToArray(column, cJSON_CreateString("list_int"));
    cJSON_AddItemToArray(column, storage);
    column = cJSON_AddArrayToObject(columns, "shape");
    cJSON_AddItemToArray(column, cJSON_CreateString("list_shape"));
    cJSON_AddItemToArray(column, shapes);
    column = cJSON_AddArrayToObject(columns, "dltype");
    cJSON_AddItemToArray(column, cJSON_CreateString("list_str"));
    cJSON_AddItemToArray(column, dtypes);
    json = cJSON_PrintUnformatted(root);
    FUZZ_CHECK(json);
    cJSON_Delete(root);
  } else {
    for (uint32_t k = 0; k < node.outputs; ++k) cJSON_Delete(out_shapes[k]);
  }
  for (uint32_t e = 0; e < MAX_INPUTS + MAX_OUTPUTS; ++e) cJSON_Delete(node.shapes[e]);
  cJSON_Delete(attrs);
  return json;
}

/* ---- planning --------------------------------------------------------------------- */

/* What runtime/exec/plan.c relies on when it turns a plan into kernels and arguments. */
static void check_plan(const hgr__op_ctx_t* ctx, const hgr__limits_t* limits) {
  FUZZ_CHECK(ctx->error == NULL);
  FUZZ_CHECK(ctx->launch_count > 0 || ctx->op->in_place == HGR__IN_PLACE_ALIAS);
  for (uint32_t k = 0; k < ctx->launch_count; ++k) {
    const hgr__launch_plan_t* l = &ctx->launches[k];
    FUZZ_CHECK(l->kernel[0] && memchr(l->kernel, 0, sizeof(l->kernel)));
    FUZZ_CHECK(l->arg_count <= HGR__MAX_ARGS);
    FUZZ_CHECK(l->meta_count <= l->meta_capacity);
    FUZZ_CHECK(l->meta_count == 0 || l->meta);
    for (uint32_t a = 0; a < l->arg_count; ++a) {
      const hgr__arg_t* arg = &l->args[a];
      if (arg->kind == HGR__ARG_INPUT) FUZZ_CHECK(arg->index < ctx->node->input_count);
      if (arg->kind == HGR__ARG_OUTPUT) FUZZ_CHECK(arg->index < ctx->node->num_outputs);
      if (arg->kind == HGR__ARG_LOCAL) FUZZ_CHECK(arg->local_bytes > 0);
    }
    const hgr__launch_t* launch = &l->launch;
    FUZZ_CHECK(launch->work_dim >= 1 && launch->work_dim <= 3);
    size_t items = 1;
    for (cl_uint d = 0; d < launch->work_dim; ++d) {
      FUZZ_CHECK(launch->global[d] > 0);
      if (launch->use_local) {
        FUZZ_CHECK(launch->local[d] > 0 && launch->global[d] % launch->local[d] == 0);
        FUZZ_CHECK(launch->local[d] <= limits->max_work_item[d]);
        items *= launch->local[d];
      }
    }
    if (launch->use_local) FUZZ_CHECK(items <= limits->max_work_group);
  }
}

/* Runs hgr__op_infer on the node and checks that it agrees with planning's outcome
 * (planned: hgr__op_plan succeeded). When planning failed and inference gives
 * other outputs than the graph's, gives the entries those and returns true. */
static bool check_inference(hgr_graph_t* graph, uint32_t node_id, bool planned) {
  const hgr__node_t* node = &graph->nodes[node_id];
  const hgr__op_t* op = hgr__op_lookup(node->func_name, library);
  hgr__entry_t inferred[MAX_OUTPUTS];
  FUZZ_CHECK(node->num_outputs <= MAX_OUTPUTS);
  hgr_status_t status = hgr__op_infer(graph, node_id, library, inferred);
  if (status) {
    FUZZ_CHECK(hgr_status_code(status) == HGR_STATUS_INVALID_ARGUMENT);
    FUZZ_CHECK(!planned || (op && !op->infer));
    fuzz_consume_status(status);
    return false;
  }
  FUZZ_CHECK(op && op->infer);
  bool changed = false;
  for (uint32_t k = 0; k < node->num_outputs; ++k) {
    hgr__entry_t* entry = &graph->entries[graph->node_row_ptr[node_id] + k];
    const hgr__entry_t* want = &inferred[k];
    FUZZ_CHECK(want->ndim >= 0 && want->ndim <= HGR_MAX_DIMS);
    bool same = hgr__dtype_same(entry->dtype, want->dtype) && entry->ndim == want->ndim;
    for (int32_t d = 0; same && d < want->ndim; ++d) same = entry->shape[d] == want->shape[d];
    FUZZ_CHECK(same || !planned);
    if (same) continue;
    entry->dtype = want->dtype;
    entry->ndim = want->ndim;
    memcpy(entry->shape, want->shape, sizeof(want->shape[0]) * (size_t)want->ndim);
    entry->element_count = want->element_count;
    entry->bytes = want->bytes;
    changed = true;
  }
  return changed;
}

int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  char* text = fuzz_string(data, size);
  hgr__limits_t limit_sets[2] = {{256, {1024, 1024, 64}, 65536, 0}, {1, {1, 1, 1}, 1024, 0}};
  char* json = build_json(text, &limit_sets[1]);
  free(text);
  if (!json) return 0;
  hgr_graph_t* graph = NULL;
  hgr_status_t status = hgr_graph_load_json(json, strlen(json), &graph);
  free(json);
  if (fuzz_consume_status(status)) return 0;
  uint32_t node_id = graph->node_count - 1;
  hgr__node_t* node = &graph->nodes[node_id];
  if (node->func_name[0] == '@' && registry_count) {
    const char* name = registry[strtoul(node->func_name + 1, NULL, 10) % registry_count];
    char* copy = NULL;
    FUZZ_CHECK(hgr__strdup(hgr_allocator_system(), name, &copy) == HGR_OK);
    free(node->func_name); /* the harness owns this graph */
    node->func_name = copy;
  }
  if (strcmp(node->func_name, "__copy") && strcmp(node->func_name, "__nop")) {
    for (size_t s = 0; s < 2; ++s) {
      for (int attempt = 0; attempt < 4; ++attempt) {
        hgr__op_ctx_t ctx;
        status = hgr__op_plan(hgr_allocator_system(), graph, node_id, library, &limit_sets[s], &ctx);
        if (!status) {
          check_plan(&ctx, &limit_sets[s]);
          hgr__op_ctx_free(&ctx);
          check_inference(graph, node_id, true);
          break;
        }
        FUZZ_CHECK(hgr_status_code(status) == HGR_STATUS_INVALID_ARGUMENT);
        FUZZ_CHECK(ctx.launches == NULL && ctx.error == NULL);
        fuzz_consume_status(status);
        if (!check_inference(graph, node_id, false)) break;
      }
    }
  }
  hgr_graph_release(graph);
  return 0;
}
