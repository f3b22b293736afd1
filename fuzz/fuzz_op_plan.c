/* libFuzzer target: op planning (hgr__op_plan) for every op node of a graph that
 * loads, as executor creation does it, but without devices: two sets of device
 * limits (a typical GPU and a device that allows one work-item per group) stand in
 * for them. Covers each op's attr, dtype and shape checks and its launch builder,
 * and user-kernel ops from a manifest written at start-up.
 *
 * A func_name "@N" is replaced with op N (modulo the count) of the built-in
 * registry before planning, so that every op is reachable by mutating one number,
 * including ops added after the seeds were written. */
#include <stdbool.h>
#include <unistd.h>

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

/* What plan.c relies on when it turns a plan into kernels and arguments. */
static void check_plan(const hgr__op_ctx_t* ctx, const hgr__limits_t* limits) {
  FUZZ_CHECK(ctx->error == NULL);
  FUZZ_CHECK(ctx->launch_count > 0 || ctx->op->alias_when_shared);
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

int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  hgr_graph_t* graph = NULL;
  if (fuzz_consume_status(hgr_graph_load_json((const char*)data, size, &graph))) return 0;
  static const hgr__limits_t limit_sets[2] = {{256, {1024, 1024, 64}, 65536}, {1, {1, 1, 1}, 1024}};
  for (uint32_t node_id = 0; node_id < graph->node_count; ++node_id) {
    hgr__node_t* node = &graph->nodes[node_id];
    if (!node->is_op || !strcmp(node->func_name, "__copy") || !strcmp(node->func_name, "__nop")) continue;
    if (node->func_name[0] == '@' && registry_count) {
      const char* name = registry[strtoul(node->func_name + 1, NULL, 10) % registry_count];
      char* copy = NULL;
      FUZZ_CHECK(hgr__strdup(name, &copy) == HGR_OK);
      free(node->func_name); /* the harness owns this graph */
      node->func_name = copy;
    }
    for (size_t s = 0; s < 2; ++s) {
      hgr__op_ctx_t ctx;
      hgr_status_t status = hgr__op_plan(graph, node_id, library, &limit_sets[s], &ctx);
      if (status) {
        FUZZ_CHECK(hgr_status_code(status) == HGR_STATUS_INVALID_ARGUMENT);
        FUZZ_CHECK(ctx.launches == NULL && ctx.error == NULL);
        fuzz_consume_status(status);
        continue;
      }
      check_plan(&ctx, &limit_sets[s]);
      hgr__op_ctx_free(&ctx);
    }
  }
  hgr_graph_release(graph);
  return 0;
}
