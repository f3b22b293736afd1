/* libFuzzer target: user kernel manifests (hgr_kernel_library_load_file). The
 * input is written to manifest.json in a temporary directory that also holds a
 * source (k.cl) and a binary (k.bin) a manifest may name; the library that loads is
 * then used as the executor uses it: op lookup, the program for a device, and
 * planning each op for a node with the op's counts, float32 [4, 4] tensors and
 * every attr it reads set (ints "1", global_size "[4]", local_size "[2]"). A
 * manifest that loads must plan or fail with INVALID_ARGUMENT, never INTERNAL, and
 * its ops infer float32 [4, 4] outputs exactly when they declare "shapes". */
#include <unistd.h>

#include "json.h"

#include "fuzz.h"
#include "graph_internal.h"
#include "ops.h"

static char dir[512];
static char manifest_path[sizeof(dir) + 32];

static void write_file(const char* path, const void* bytes, size_t length) {
  FILE* file = fopen(path, "wb");
  FUZZ_CHECK(file);
  FUZZ_CHECK(fwrite(bytes, 1, length, file) == length);
  FUZZ_CHECK(fclose(file) == 0);
}

static void remove_files(void) {
  static const char* const names[] = {"manifest.json", "k.cl", "k.bin"};
  char path[sizeof(dir) + 32];
  for (size_t i = 0; i < 3; ++i) {
    snprintf(path, sizeof(path), "%s/%s", dir, names[i]);
    remove(path);
  }
  rmdir(dir);
}

int LLVMFuzzerInitialize(int* argc, char*** argv);
int LLVMFuzzerInitialize(int* argc, char*** argv) {
  (void)argc;
  (void)argv;
  fuzz_make_dir("manifest", dir, sizeof(dir));
  atexit(remove_files);
  char path[sizeof(dir) + 32];
  snprintf(path, sizeof(path), "%s/k.cl", dir);
  static const char source[] = "__kernel void k(__global float* x) { x[get_global_id(0)] = 0; }\n";
  write_file(path, source, sizeof(source) - 1);
  snprintf(path, sizeof(path), "%s/k.bin", dir);
  static const unsigned char binary[] = {0x7f, 'E', 'L', 'F', 0, 1, 2, 3};
  write_file(path, binary, sizeof(binary));
  snprintf(manifest_path, sizeof(manifest_path), "%s/manifest.json", dir);
  return 0;
}

static void add_ref(cJSON* list, uint32_t node_id) {
  cJSON* ref = cJSON_CreateArray();
  cJSON_AddItemToArray(ref, cJSON_CreateNumber(node_id));
  cJSON_AddItemToArray(ref, cJSON_CreateNumber(0));
  cJSON_AddItemToArray(list, ref);
}

static void add_column(cJSON* columns, const char* name, const char* tag, cJSON* values) {
  cJSON* column = cJSON_AddArrayToObject(columns, name);
  cJSON_AddItemToArray(column, cJSON_CreateString(tag));
  cJSON_AddItemToArray(column, values);
}

/* A graph of op's input count of null nodes and one node of op, its last. */
static hgr_graph_t* graph_for(const hgr__op_t* op) {
  uint32_t inputs = op->min_inputs, outputs = op->min_outputs;
  cJSON* root = cJSON_CreateObject();
  cJSON* nodes = cJSON_AddArrayToObject(root, "nodes");
  cJSON* arg_nodes = cJSON_AddArrayToObject(root, "arg_nodes");
  cJSON* row_ptr = cJSON_AddArrayToObject(root, "node_row_ptr");
  cJSON* heads = cJSON_AddArrayToObject(root, "heads");
  cJSON* columns = cJSON_AddObjectToObject(root, "attrs");
  cJSON* op_inputs = cJSON_CreateArray();
  for (uint32_t i = 0; i < inputs; ++i) {
    cJSON* input = cJSON_CreateObject();
    char name[16];
    snprintf(name, sizeof(name), "x%u", i);
    cJSON_AddStringToObject(input, "op", "null");
    cJSON_AddStringToObject(input, "name", name);
    cJSON_AddArrayToObject(input, "inputs");
    cJSON_AddItemToArray(nodes, input);
    cJSON_AddItemToArray(arg_nodes, cJSON_CreateNumber(i));
    cJSON_AddItemToArray(row_ptr, cJSON_CreateNumber(i));
    add_ref(op_inputs, i);
  }
  cJSON* attrs = cJSON_CreateObject();
  char count[16];
  cJSON_AddStringToObject(attrs, "func_name", op->name);
  snprintf(count, sizeof(count), "%u", inputs);
  cJSON_AddStringToObject(attrs, "num_inputs", count);
  snprintf(count, sizeof(count), "%u", outputs);
  cJSON_AddStringToObject(attrs, "num_outputs", count);
  cJSON_AddStringToObject(attrs, "flatten_data", "0");
  char* names = fuzz_string((const uint8_t*)op->attrs, strlen(op->attrs));
  char* save = NULL;
  for (char* name = strtok_r(names, " ", &save); name; name = strtok_r(NULL, " ", &save)) {
    const char* value = !strcmp(name, "global_size") ? "[4]" : !strcmp(name, "local_size") ? "[2]" : "1";
    if (!cJSON_GetObjectItemCaseSensitive(attrs, name)) cJSON_AddStringToObject(attrs, name, value);
  }
  free(names);
  cJSON* node = cJSON_CreateObject();
  cJSON_AddStringToObject(node, "op", "tvm_op");
  cJSON_AddStringToObject(node, "name", "node");
  cJSON_AddItemToObject(node, "attrs", attrs);
  cJSON_AddItemToObject(node, "inputs", op_inputs);
  cJSON_AddItemToArray(nodes, node);
  cJSON_AddItemToArray(row_ptr, cJSON_CreateNumber(inputs));
  cJSON_AddItemToArray(row_ptr, cJSON_CreateNumber(inputs + outputs));
  add_ref(heads, inputs);
  cJSON *storage = cJSON_CreateArray(), *shapes = cJSON_CreateArray(), *dtypes = cJSON_CreateArray();
  for (uint32_t e = 0; e < inputs + outputs; ++e) {
    cJSON_AddItemToArray(storage, cJSON_CreateNumber(e));
    cJSON* shape = cJSON_CreateArray();
    cJSON_AddItemToArray(shape, cJSON_CreateNumber(4));
    cJSON_AddItemToArray(shape, cJSON_CreateNumber(4));
    cJSON_AddItemToArray(shapes, shape);
    cJSON_AddItemToArray(dtypes, cJSON_CreateString("float32"));
  }
  add_column(columns, "storage_id", "list_int", storage);
  add_column(columns, "shape", "list_shape", shapes);
  add_column(columns, "dltype", "list_str", dtypes);
  char* json = cJSON_PrintUnformatted(root);
  FUZZ_CHECK(json);
  cJSON_Delete(root);
  hgr_graph_t* graph = NULL;
  hgr_status_t status = hgr_graph_load_json(json, strlen(json), &graph);
  if (status) {
    char* text = hgr_status_to_string(status);
    fprintf(stderr, "the graph for op '%s' does not load: %s\n%s\n", op->name, text, json);
    abort();
  }
  free(json);
  return graph;
}

static void plan(const hgr_kernel_library_t* library, const hgr__op_t* op) {
  hgr_graph_t* graph = graph_for(op);
  static const hgr__limits_t limits = {256, {256, 256, 256}, 65536, 0};
  hgr__op_ctx_t ctx;
  hgr_status_t status = hgr__op_plan(hgr_allocator_system(), graph, graph->node_count - 1, library, &limits, &ctx);
  if (status) {
    if (hgr_status_code(status) != HGR_STATUS_INVALID_ARGUMENT) {
      char* text = hgr_status_to_string(status);
      fprintf(stderr, "op '%s' from a manifest that loaded does not plan: %s\n", op->name, text);
      abort();
    }
    fuzz_consume_status(status);
  } else {
    FUZZ_CHECK(ctx.launch_count == 1);
    const hgr__launch_plan_t* launch = &ctx.launches[0];
    for (uint32_t a = 0; a < launch->arg_count; ++a) {
      if (launch->args[a].kind == HGR__ARG_INPUT) FUZZ_CHECK(launch->args[a].index < op->min_inputs);
      if (launch->args[a].kind == HGR__ARG_OUTPUT) FUZZ_CHECK(launch->args[a].index < op->min_outputs);
    }
    hgr__op_ctx_free(&ctx);
  }
  hgr__entry_t* inferred = calloc(op->min_outputs, sizeof(*inferred));
  FUZZ_CHECK(inferred);
  status = hgr__op_infer(graph, graph->node_count - 1, library, inferred);
  FUZZ_CHECK(!status == (op->infer != NULL));
  if (status) FUZZ_CHECK(hgr_status_code(status) == HGR_STATUS_INVALID_ARGUMENT);
  fuzz_consume_status(status);
  for (uint32_t k = 0; op->infer && k < op->min_outputs; ++k)
    FUZZ_CHECK(hgr__dtype_is_f32(inferred[k].dtype) && inferred[k].ndim == 2 && inferred[k].shape[0] == 4 &&
               inferred[k].shape[1] == 4 && inferred[k].bytes == 64);
  free(inferred);
  hgr_graph_release(graph);
}

int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  write_file(manifest_path, data, size);
  hgr_kernel_library_t* library = (hgr_kernel_library_t*)&library; /* must become NULL */
  hgr_status_t status = hgr_kernel_library_load_file(manifest_path, &library);
  if (status) {
    hgr_status_code_t code = hgr_status_code(status);
    FUZZ_CHECK(code == HGR_STATUS_INVALID_ARGUMENT || code == HGR_STATUS_NOT_FOUND ||
               code == HGR_STATUS_UNAVAILABLE || code == HGR_STATUS_RESOURCE_EXHAUSTED);
    FUZZ_CHECK(library == NULL);
    fuzz_consume_status(status);
    return 0;
  }
  FUZZ_CHECK(library);
  hgr_device_info_t device;
  memset(&device, 0, sizeof(device));
  device.spec = "pocl:0";
  device.platform_short = "pocl";
  for (size_t i = 0; i < hgr_kernel_library_op_count(library); ++i) {
    const char* name = hgr_kernel_library_op_name(library, i);
    FUZZ_CHECK(name && name[0]);
    FUZZ_CHECK(hgr__op_find(name) == NULL);
    const hgr__op_t* op = hgr__library_op(library, name);
    FUZZ_CHECK(op && !strcmp(op->name, name) && op->plan && op->source && op->attrs);
    FUZZ_CHECK(op->min_outputs >= 1);
    hgr__user_program_t program;
    FUZZ_CHECK(hgr__library_program(library, op->source, &device, &program));
    /* Neither text nor binary: a binary-only op for other devices. */
    FUZZ_CHECK(!(program.text && program.binary));
    if (program.text || program.binary) FUZZ_CHECK(program.origin);
    FUZZ_CHECK(op->min_inputs == op->max_inputs && op->min_outputs == op->max_outputs);
    plan(library, op);
  }
  FUZZ_CHECK(hgr_kernel_library_op_name(library, hgr_kernel_library_op_count(library)) == NULL);
  hgr_kernel_library_t* again = hgr_kernel_library_retain(library);
  hgr_kernel_library_release(library);
  hgr_kernel_library_release(again);
  return 0;
}
