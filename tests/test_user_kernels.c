/* User kernels from a manifest: from source on two platforms, with an NDRange from
 * node attrs, from a PoCL binary whose source is gone, in place where the manifest
 * allows it, and the errors of bad manifests and nodes.
 *
 *   test_user_kernels SPEC_A SPEC_B   SPEC_A must be a PoCL device (the binary test) */
#define CL_TARGET_OPENCL_VERSION 120
#include <CL/cl.h>
#include <math.h>
#include <string.h>
#include <unistd.h>

#include "testlib.h"

static const char* specs[2];
static hgr_instance_t* instance;

static const char kernel_source[] =
    "__kernel void scale_add(__global const float* a, __global const float* b, __global float* y, uint n,\n"
    "                        float alpha) {\n"
    "  size_t i = get_global_id(0);\n"
    "  if (i < n) y[i] = alpha * a[i] + b[i];\n"
    "}\n"
    "__kernel void transpose2d(__global const float* x, __global float* y, int rows, int cols) {\n"
    "  int c = (int)get_global_id(0), r = (int)get_global_id(1);\n"
    "  if (r < rows && c < cols) y[c * rows + r] = x[r * cols + c];\n"
    "}\n";

static void write_file(const char* path, const void* data, size_t length) {
  FILE* file = fopen(path, "wb");
  assert_non_null(file);
  assert_int_equal(fwrite(data, 1, length, file), length);
  assert_int_equal(fclose(file), 0);
}

static char manifest_path[512], source_path[512], binary_path[512];

static void paths(void) {
  snprintf(manifest_path, sizeof(manifest_path), "%s", hgr_test_tmp_path("kernels.json"));
  snprintf(source_path, sizeof(source_path), "%s", hgr_test_tmp_path("user.cl"));
  snprintf(binary_path, sizeof(binary_path), "%s", hgr_test_tmp_path("user.pocl.bin"));
}

static const char* base(const char* path) { return strrchr(path, '/') + 1; }

/* The manifest: program from source and/or binary (file names relative to it). */
static void write_manifest(bool with_source, bool with_binary) {
  char text[4096], origin[1024] = "";
  if (with_source) snprintf(origin, sizeof(origin), "\"source\": \"%s\"", base(source_path));
  if (with_binary)
    snprintf(origin + strlen(origin), sizeof(origin) - strlen(origin), "%s\"binaries\": [{\"device\": \"pocl\", \"file\": \"%s\"}]",
             with_source ? ", " : "", base(binary_path));
  snprintf(text, sizeof(text),
           "{\"ops\": [\n"
           " {\"func_name\": \"scale_add\", \"kernel\": \"scale_add\", %s, \"inputs\": 2, \"outputs\": 1,\n"
           "  \"args\": [\"input 0\", \"input 1\", \"output 0\", \"elements output 0\", \"attr alpha float\"],\n"
           "  \"ndrange\": \"elements\"},\n"
           " {\"func_name\": \"transpose2d\", \"kernel\": \"transpose2d\", %s, \"inputs\": 1, \"outputs\": 1,\n"
           "  \"args\": [\"input 0\", \"output 0\", \"dim input 0 0\", \"dim input 0 -1\"], \"ndrange\": \"attrs\"}]}\n",
           origin, origin);
  write_file(manifest_path, text, strlen(text));
}

/* y = transpose2d(scale_add(a, b) on key 1) -> __copy to key 4 -> relu (built-in). */
static const char graph_json[] =
    "{\"nodes\": [{\"op\": \"null\", \"name\": \"a\", \"inputs\": []}, {\"op\": \"null\", \"name\": \"b\", \"inputs\": []},"
    " {\"op\": \"tvm_op\", \"name\": \"sa\", \"attrs\": {\"func_name\": \"scale_add\", \"num_inputs\": \"2\", \"num_outputs\": \"1\", \"flatten_data\": \"0\", \"alpha\": \"%s\"}, \"inputs\": [[0, 0, 0], [1, 0, 0]]},"
    " {\"op\": \"tvm_op\", \"name\": \"tr\", \"attrs\": {\"func_name\": \"transpose2d\", \"num_inputs\": \"1\", \"num_outputs\": \"1\", \"flatten_data\": \"0\", \"global_size\": \"[16, 8]\", \"local_size\": \"[%s]\"}, \"inputs\": [[2, 0, 0]]},"
    " {\"op\": \"tvm_op\", \"name\": \"cp\", \"attrs\": {\"func_name\": \"__copy\", \"num_inputs\": \"1\", \"num_outputs\": \"1\", \"flatten_data\": \"0\"}, \"inputs\": [[3, 0, 0]]},"
    " {\"op\": \"tvm_op\", \"name\": \"re\", \"attrs\": {\"func_name\": \"relu\", \"num_inputs\": \"1\", \"num_outputs\": \"1\", \"flatten_data\": \"0\"}, \"inputs\": [[4, 0, 0]]}],"
    " \"arg_nodes\": [0, 1], \"node_row_ptr\": [0, 1, 2, 3, 4, 5, 6], \"heads\": [[5, 0, 0]],"
    " \"attrs\": {\"storage_id\": [\"list_int\", [0, 1, 2, 3, 4, 5]], \"device_index\": [\"list_int\", [1, 1, 1, 1, 4, 4]],"
    " \"shape\": [\"list_shape\", [[5, 13], [5, 13], [5, 13], [13, 5], [13, 5], [13, 5]]],"
    " \"dltype\": [\"list_str\", [\"float32\", \"float32\", \"float32\", \"float32\", \"float32\", \"float32\"]]}}";

static hgr_status_t create(const char* alpha, const char* local, const char* key1, hgr_graph_t** out_graph,
                           hgr_executor_t** out_executor) {
  char json[4096];
  snprintf(json, sizeof(json), graph_json, alpha, local);
  *out_executor = NULL;
  ASSERT_OK(hgr_graph_load_json(json, strlen(json), out_graph));
  hgr_kernel_library_t* library = NULL;
  hgr_status_t status = hgr_kernel_library_load_file(manifest_path, &library);
  if (status) return status;
  hgr_device_binding_t bindings[2] = {{1, key1}, {4, specs[1]}};
  hgr_executor_options_t options;
  hgr_executor_options_init(&options);
  options.bindings = bindings;
  options.binding_count = 2;
  options.kernels = library;
  status = hgr_executor_create(instance, *out_graph, &options, out_executor);
  hgr_kernel_library_release(library); /* the executor keeps its own reference */
  return status;
}

static void run_and_check(hgr_graph_t* graph, hgr_executor_t* executor) {
  float a[65], b[65], y[65];
  for (int i = 0; i < 65; ++i) {
    a[i] = (float)(i % 11) - 5.0f;
    b[i] = (float)(i % 7) * 0.5f;
  }
  ASSERT_OK(hgr_executor_set_input(executor, 0, a, sizeof(a)));
  ASSERT_OK(hgr_executor_set_input(executor, 1, b, sizeof(b)));
  ASSERT_OK(hgr_executor_run(executor));
  ASSERT_OK(hgr_executor_wait(executor));
  ASSERT_OK(hgr_executor_get_output(executor, 0, y, sizeof(y)));
  for (int r = 0; r < 5; ++r)
    for (int c = 0; c < 13; ++c) {
      float want = fmaxf(0.0f, 1.5f * a[r * 13 + c] + b[r * 13 + c]);
      assert_true(y[c * 5 + r] == want);
    }
  hgr_executor_release(executor);
  hgr_graph_release(graph);
}

static void kernels_from_source_run_beside_built_in_ops(void** state) {
  (void)state;
  write_file(source_path, kernel_source, strlen(kernel_source));
  write_manifest(true, false);
  hgr_graph_t* graph;
  hgr_executor_t* executor;
  ASSERT_OK(create("1.5", "4, 4", specs[0], &graph, &executor));
  run_and_check(graph, executor);
}

static void a_binary_only_op_runs_without_its_source(void** state) {
  (void)state;
  /* Build the binary with PoCL, as a vendor flow would, then remove the source. */
  cl_platform_id platforms[8];
  cl_uint platform_count = 0;
  assert_int_equal(clGetPlatformIDs(8, platforms, &platform_count), CL_SUCCESS);
  cl_device_id device = NULL;
  for (cl_uint p = 0; p < platform_count && !device; ++p) {
    char name[256] = "";
    clGetPlatformInfo(platforms[p], CL_PLATFORM_NAME, sizeof(name), name, NULL);
    if (strstr(name, "Portable Computing Language")) clGetDeviceIDs(platforms[p], CL_DEVICE_TYPE_ALL, 1, &device, NULL);
  }
  assert_non_null(device);
  cl_int error = CL_SUCCESS;
  cl_context context = clCreateContext(NULL, 1, &device, NULL, NULL, &error);
  const char* text = kernel_source;
  cl_program program = clCreateProgramWithSource(context, 1, &text, NULL, &error);
  assert_int_equal(clBuildProgram(program, 1, &device, "", NULL, NULL), CL_SUCCESS);
  size_t size = 0;
  assert_int_equal(clGetProgramInfo(program, CL_PROGRAM_BINARY_SIZES, sizeof(size), &size, NULL), CL_SUCCESS);
  unsigned char* binary = malloc(size);
  assert_int_equal(clGetProgramInfo(program, CL_PROGRAM_BINARIES, sizeof(binary), &binary, NULL), CL_SUCCESS);
  write_file(binary_path, binary, size);
  free(binary);
  clReleaseProgram(program);
  clReleaseContext(context);
  remove(source_path);
  write_manifest(false, true);

  hgr_graph_t* graph;
  hgr_executor_t* executor;
  ASSERT_OK(create("1.5", "8, 2", specs[0], &graph, &executor));
  hgr_program_stats_t stats = hgr_executor_program_stats(executor);
  /* relu's program, and one from the user's binary shared by both user ops */
  assert_int_equal(stats.programs, 2);
  assert_int_equal(stats.from_cache + stats.from_source, 1);
  run_and_check(graph, executor);
  /* A device the binary is not for: named clearly. */
  if (strstr(specs[1], "pocl")) return;
  hgr_status_t status = create("1.5", "4, 4", specs[1], &graph, &executor);
  ASSERT_STATUS(status, HGR_STATUS_INVALID_ARGUMENT, "neither a source nor a binary", specs[1]);
  hgr_graph_release(graph);
}

static void bad_nodes_name_the_node_and_attr(void** state) {
  (void)state;
  write_file(source_path, kernel_source, strlen(kernel_source));
  write_manifest(true, false);
  hgr_graph_t* graph;
  hgr_executor_t* executor;
  ASSERT_STATUS(create("fast", "4, 4", specs[0], &graph, &executor), HGR_STATUS_INVALID_ARGUMENT,
                "node 2 'sa' (scale_add): attr 'alpha' = \"fast\" is not a number");
  hgr_graph_release(graph);
  ASSERT_STATUS(create("1", "3, 4", specs[0], &graph, &executor), HGR_STATUS_INVALID_ARGUMENT,
                "node 3 'tr' (transpose2d): global_size[0] = 16 is not a multiple of local_size[0] = 3");
  hgr_graph_release(graph);
}

static void check_manifest(const char* text, const char* expected) {
  write_file(manifest_path, text, strlen(text));
  hgr_kernel_library_t* library = NULL;
  ASSERT_STATUS(hgr_kernel_library_load_file(manifest_path, &library), HGR_STATUS_INVALID_ARGUMENT, expected);
  assert_null(library);
}

static void bad_manifests_name_the_op_and_field(void** state) {
  (void)state;
  write_file(source_path, kernel_source, strlen(kernel_source));
  char op[512];
  snprintf(op, sizeof(op), "\"kernel\": \"scale_add\", \"source\": \"%s\", \"inputs\": 2, \"outputs\": 1", base(source_path));
  char text[2048];
  snprintf(text, sizeof(text), "{\"ops\": [{\"func_name\": \"add\", %s, \"args\": [], \"ndrange\": \"elements\"}]}", op);
  check_manifest(text, "op 'add': a built-in op already has this func_name");
  snprintf(text, sizeof(text), "{\"ops\": [{\"func_name\": \"x\", %s, \"args\": [\"input 2\"], \"ndrange\": \"elements\"}]}", op);
  check_manifest(text, "op 'x': argument 0 \"input 2\" is not one of");
  snprintf(text, sizeof(text), "{\"ops\": [{\"func_name\": \"x\", %s, \"args\": [], \"ndrange\": \"grid\"}]}", op);
  check_manifest(text, "op 'x': \"ndrange\" must be \"elements\" or \"attrs\"");
  snprintf(text, sizeof(text), "{\"ops\": [{\"func_name\": \"x\", %s, \"args\": [], \"ndrange\": \"elements\", \"extra\": 1}]}", op);
  check_manifest(text, "ops[0]: unknown key \"extra\"");
  snprintf(text, sizeof(text), "{\"ops\": [{\"func_name\": \"x\", %s, \"args\": [\"attr a double\"], \"ndrange\": \"elements\"}]}", op);
  check_manifest(text, "the type must be int, uint or float");
  snprintf(text, sizeof(text), "{\"ops\": [{\"func_name\": \"x\", %s, \"args\": [\"attr num_inputs int\"], \"ndrange\": \"elements\"}]}", op);
  check_manifest(text, "'num_inputs' is a standard node attr");
  check_manifest("{\"ops\": [{\"func_name\": \"x\", \"kernel\": \"k\", \"inputs\": 1, \"outputs\": 1, \"args\": [], \"ndrange\": \"elements\"}]}",
                 "op 'x': needs a \"source\" or \"binaries\"");
  check_manifest("{\"kernels\": []}", "one key, \"ops\"");
  static const char missing[] = "{\"ops\": [{\"func_name\": \"x\", \"kernel\": \"k\", \"source\": \"missing.cl\", "
                                "\"inputs\": 1, \"outputs\": 1, \"args\": [], \"ndrange\": \"elements\"}]}";
  write_file(manifest_path, missing, strlen(missing));
  hgr_kernel_library_t* library = NULL;
  ASSERT_STATUS(hgr_kernel_library_load_file(manifest_path, &library), HGR_STATUS_NOT_FOUND, "missing.cl");
}

/* Found by fuzzing (fuzz/corpus/kernel_manifest/long_kernel_name.json): such a
 * manifest loaded, and planning the op failed with INTERNAL. */
static void a_kernel_name_longer_than_a_launch_holds_is_refused_at_load(void** state) {
  (void)state;
  write_file(source_path, kernel_source, strlen(kernel_source));
  char name[65];
  memset(name, 'k', sizeof(name) - 1);
  name[sizeof(name) - 1] = 0;
  char text[1024];
  snprintf(text, sizeof(text),
           "{\"ops\": [{\"func_name\": \"x\", \"kernel\": \"%s\", \"source\": \"%s\", \"inputs\": 1, "
           "\"outputs\": 1, \"args\": [\"input 0\", \"output 0\"], \"ndrange\": \"elements\"}]}",
           name, base(source_path));
  check_manifest(text, "op 'x': \"kernel\" is 64 characters long; entry points of at most 63 are supported");
  name[63] = 0;
  snprintf(text, sizeof(text),
           "{\"ops\": [{\"func_name\": \"x\", \"kernel\": \"%s\", \"source\": \"%s\", \"inputs\": 1, "
           "\"outputs\": 1, \"args\": [\"input 0\", \"output 0\"], \"ndrange\": \"elements\"}]}",
           name, base(source_path));
  write_file(manifest_path, text, strlen(text));
  hgr_kernel_library_t* library = NULL;
  ASSERT_OK(hgr_kernel_library_load_file(manifest_path, &library));
  hgr_kernel_library_release(library);
}

/* sa = scale_add(a, b) written over a (its storage id), on specs[1]. */
static const char in_place_graph_json[] =
    "{\"nodes\": [{\"op\": \"null\", \"name\": \"a\", \"inputs\": []}, {\"op\": \"null\", \"name\": \"b\", \"inputs\": []},"
    " {\"op\": \"tvm_op\", \"name\": \"sa\", \"attrs\": {\"func_name\": \"scale_add\", \"num_inputs\": \"2\", \"num_outputs\": \"1\", \"flatten_data\": \"0\", \"alpha\": \"2\"}, \"inputs\": [[0, 0, 0], [1, 0, 0]]}],"
    " \"arg_nodes\": [0, 1], \"node_row_ptr\": [0, 1, 2, 3], \"heads\": [[2, 0, 0]],"
    " \"attrs\": {\"storage_id\": [\"list_int\", [0, 1, 0]],"
    " \"shape\": [\"list_shape\", [[5, 13], [5, 13], [5, 13]]],"
    " \"dltype\": [\"list_str\", [\"float32\", \"float32\", \"float32\"]]}}";

static hgr_status_t create_in_place(const char* in_place, hgr_graph_t** out_graph, hgr_executor_t** out_executor) {
  char text[2048];
  snprintf(text, sizeof(text),
           "{\"ops\": [{\"func_name\": \"scale_add\", \"kernel\": \"scale_add\", \"source\": \"%s\", \"inputs\": 2, "
           "\"outputs\": 1, \"args\": [\"input 0\", \"input 1\", \"output 0\", \"elements output 0\", "
           "\"attr alpha float\"], \"ndrange\": \"elements\"%s%s%s}]}",
           base(source_path), in_place ? ", \"in_place\": \"" : "", in_place ? in_place : "", in_place ? "\"" : "");
  write_file(manifest_path, text, strlen(text));
  *out_executor = NULL;
  ASSERT_OK(hgr_graph_load_json(in_place_graph_json, strlen(in_place_graph_json), out_graph));
  hgr_kernel_library_t* library = NULL;
  hgr_status_t status = hgr_kernel_library_load_file(manifest_path, &library);
  if (status) return status;
  hgr_device_binding_t binding = {0, specs[1]};
  hgr_executor_options_t options;
  hgr_executor_options_init(&options);
  options.bindings = &binding;
  options.binding_count = 1;
  options.kernels = library;
  status = hgr_executor_create(instance, *out_graph, &options, out_executor);
  hgr_kernel_library_release(library);
  return status;
}

/* hgr cannot see what a user kernel reads: only the manifest's "in_place":
 * "elementwise" lets a node write its output over an input. */
static void user_ops_run_in_place_only_when_the_manifest_says_so(void** state) {
  (void)state;
  write_file(source_path, kernel_source, strlen(kernel_source));
  hgr_graph_t* graph;
  hgr_executor_t* executor;
  ASSERT_STATUS(create_in_place(NULL, &graph, &executor), HGR_STATUS_INVALID_ARGUMENT,
                "node 2 'sa' (scale_add): output 0 (entry 2) shares storage 0 with input 0 (entry 0); the op cannot "
                "run in place");
  hgr_graph_release(graph);
  ASSERT_STATUS(create_in_place("never", &graph, &executor), HGR_STATUS_INVALID_ARGUMENT, "cannot run in place");
  hgr_graph_release(graph);
  ASSERT_STATUS(create_in_place("always", &graph, &executor), HGR_STATUS_INVALID_ARGUMENT,
                "op 'scale_add': \"in_place\" must be \"elementwise\" or \"never\"");
  hgr_graph_release(graph);
  ASSERT_OK(create_in_place("elementwise", &graph, &executor));
  float a[65], b[65], y[65];
  for (int i = 0; i < 65; ++i) {
    a[i] = (float)(i % 11) - 5.0f;
    b[i] = (float)(i % 7) * 0.5f;
  }
  ASSERT_OK(hgr_executor_set_input(executor, 0, a, sizeof(a)));
  ASSERT_OK(hgr_executor_set_input(executor, 1, b, sizeof(b)));
  ASSERT_OK(hgr_executor_run(executor));
  ASSERT_OK(hgr_executor_get_output(executor, 0, y, sizeof(y)));
  for (int i = 0; i < 65; ++i) assert_true(y[i] == 2.0f * a[i] + b[i]);
  hgr_executor_release(executor);
  hgr_graph_release(graph);
}

int main(int argc, char** argv) {
  if (argc != 3) {
    fprintf(stderr, "usage: test_user_kernels POCL_SPEC SPEC_B\n");
    return 2;
  }
  specs[0] = argv[1];
  specs[1] = argv[2];
  paths();
  hgr_status_t status = hgr_instance_create(NULL, &instance);
  if (status) {
    hgr_status_free(status);
    return 1;
  }
  hgr_test_require_devices(instance, specs, 2);
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(kernels_from_source_run_beside_built_in_ops),
      cmocka_unit_test(a_binary_only_op_runs_without_its_source),
      cmocka_unit_test(bad_nodes_name_the_node_and_attr),
      cmocka_unit_test(user_ops_run_in_place_only_when_the_manifest_says_so),
      cmocka_unit_test(bad_manifests_name_the_op_and_field),
      cmocka_unit_test(a_kernel_name_longer_than_a_launch_holds_is_refused_at_load),
  };
  int failed = cmocka_run_group_tests_name("user_kernels", tests, NULL, NULL);
  remove(manifest_path);
  remove(source_path);
  remove(binary_path);
  hgr_instance_release(instance);
  return failed;
}
