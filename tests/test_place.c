/* Placement (hgr/place.h) on the test bed (pocl:0, pocl:1, rusticl:0; oclgrind:0
 * for a few random graphs, skipped without it): what fake devices can run, rules of
 * each kind and their order, FIRST and the default device, fallback for a user op
 * that only PoCL has a binary for, stages:2 and auto, the examples re-placed by
 * range rules and random graphs placed by random rules, each run and compared with
 * its expected outputs, and the plan verifier on hand-broken plans. Every plan
 * hgr_place returns has passed the verifier; the tests run it again on the placed
 * graph. Memory per device (planned, lower bound, storage bound, no reuse) is
 * printed for every plan and checked (report_memory). */
#define CL_TARGET_OPENCL_VERSION 120
#include <CL/cl.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "graph_check.h"
#include "graph_internal.h"
#include "graphgen.h"
#include "place_internal.h"
#include "reference.h"
#include "testlib.h"

static hgr_instance_t* instance;
static const char* const testbed[] = {"pocl:0", "pocl:1", "rusticl:0"};
static double worst_ratio;

/* ---- helpers ------------------------------------------------------------------------ */

static hgr_graph_t* load(const char* json) {
  hgr_graph_t* graph = NULL;
  ASSERT_OK(hgr_graph_load_json(json, strlen(json), &graph));
  return graph;
}

static hgr_placement_t* place(hgr_graph_t* graph, hgr_place_options_t* options) {
  hgr_placement_t* placement = NULL;
  ASSERT_OK(hgr_place(instance, graph, options, &placement));
  ASSERT_OK(hgr__place_verify(hgr_placement_graph(placement), options->kernels));
  return placement;
}

static const char* spec_of(size_t device_index) { return hgr_instance_device(instance, device_index)->spec; }

/* Prints memory per device and checks bound <= planned <= no reuse. The target is
 * planned <= 1.10 x the byte bound (the most bytes alive at one step). With one
 * buffer per storage id (TVM's format has no offsets) a plan cannot always reach
 * it, so the storage bound (what any such plan needs, memory_plan.c) is printed
 * too: the examples must meet the target; every plan must be within 1.10 of the
 * storage bound, and a miss of the byte target is printed as such and counted. */
static uint32_t target_misses;

static void report_memory(const char* label, const hgr_placement_t* placement, const hgr_kernel_library_t* kernels,
                          bool must_meet_target) {
  hgr__memory_plan_t plan;
  ASSERT_OK(hgr__memory_plan(hgr_placement_graph(placement), kernels, &plan));
  for (size_t d = 0; d < hgr_placement_device_count(placement); ++d) {
    hgr_placement_device_t device;
    ASSERT_OK(hgr_placement_device(placement, d, &device));
    uint64_t storage_bound = 0;
    for (size_t k = 0; k < plan.device_count; ++k)
      if (plan.devices[k].key == device.key) {
        storage_bound = plan.devices[k].storage_bound_bytes;
        assert_int_equal(plan.devices[k].planned_bytes, device.planned_bytes);
        assert_int_equal(plan.devices[k].storage_bound_bytes, device.storage_bound_bytes);
      }
    double ratio = device.lower_bound_bytes ? (double)device.planned_bytes / (double)device.lower_bound_bytes : 1.0;
    double storage_ratio = storage_bound ? (double)device.planned_bytes / (double)storage_bound : 1.0;
    printf("memory %-22s %-10s planned %9llu  bound %9llu  no-reuse %9llu  planned/bound %.3f  "
           "(storage bound %9llu, planned/storage bound %.3f)%s\n",
           label, spec_of(device.device_index), (unsigned long long)device.planned_bytes,
           (unsigned long long)device.lower_bound_bytes, (unsigned long long)device.no_reuse_bytes, ratio,
           (unsigned long long)storage_bound, storage_ratio, ratio > 1.10 ? "  TARGET 1.10 MISSED" : "");
    if (ratio > worst_ratio) worst_ratio = ratio;
    assert_true(device.lower_bound_bytes <= storage_bound);
    assert_true(storage_bound <= device.planned_bytes);
    assert_true(device.planned_bytes <= device.no_reuse_bytes);
    if (ratio > 1.10) {
      target_misses++;
      if (must_meet_target)
        fail_msg("%s on %s: planned/bound %.3f misses the 1.10 target", label, spec_of(device.device_index), ratio);
    }
    if (storage_ratio > 1.10)
      fail_msg("%s on %s: planned/storage bound %.3f is above 1.10", label, spec_of(device.device_index), storage_ratio);
  }
  hgr__memory_plan_free(&plan);
}

static hgr_executor_t* create_executor(hgr_graph_t* graph, hgr_kernel_library_t* kernels) {
  hgr_executor_options_t options;
  hgr_executor_options_init(&options);
  options.kernels = kernels;
  hgr_executor_t* executor = NULL;
  ASSERT_OK(hgr_executor_create(instance, graph, &options, &executor));
  return executor;
}

/* x, y -> add -> relu -> sigmoid -> tanh (head), and relu also a head. */
static const char chain_json[] =
    "{\"nodes\": [{\"op\": \"null\", \"name\": \"x\", \"inputs\": []}, {\"op\": \"null\", \"name\": \"y\", \"inputs\": []},"
    " {\"op\": \"tvm_op\", \"name\": \"add_2\", \"attrs\": {\"func_name\": \"add\", \"num_inputs\": \"2\", \"num_outputs\": \"1\", \"flatten_data\": \"0\"}, \"inputs\": [[0, 0, 0], [1, 0, 0]]},"
    " {\"op\": \"tvm_op\", \"name\": \"relu_3\", \"attrs\": {\"func_name\": \"relu\", \"num_inputs\": \"1\", \"num_outputs\": \"1\", \"flatten_data\": \"0\"}, \"inputs\": [[2, 0, 0]]},"
    " {\"op\": \"tvm_op\", \"name\": \"sigmoid_4\", \"attrs\": {\"func_name\": \"sigmoid\", \"num_inputs\": \"1\", \"num_outputs\": \"1\", \"flatten_data\": \"0\"}, \"inputs\": [[3, 0, 0]]},"
    " {\"op\": \"tvm_op\", \"name\": \"tanh_5\", \"attrs\": {\"func_name\": \"tanh\", \"num_inputs\": \"1\", \"num_outputs\": \"1\", \"flatten_data\": \"0\"}, \"inputs\": [[4, 0, 0]]}],"
    " \"arg_nodes\": [0, 1], \"node_row_ptr\": [0, 1, 2, 3, 4, 5, 6], \"heads\": [[5, 0, 0], [3, 0, 0]],"
    " \"attrs\": {\"storage_id\": [\"list_int\", [0, 1, 2, 3, 4, 5]],"
    " \"shape\": [\"list_shape\", [[6, 7], [6, 7], [6, 7], [6, 7], [6, 7], [6, 7]]],"
    " \"dltype\": [\"list_str\", [\"float32\", \"float32\", \"float32\", \"float32\", \"float32\", \"float32\"]]}}";

/* Runs graph (placed) with random inputs and checks it against the reference. */
static void run_against_reference(hgr_graph_t* graph, hgr_kernel_library_t* kernels, uint64_t seed, const char* label) {
  hgr_executor_t* executor = create_executor(graph, kernels);
  size_t input_count = hgr_graph_input_count(graph);
  float** inputs = calloc(input_count + 1, sizeof(*inputs));
  assert_non_null(inputs);
  hgr_test_reference_t reference = {0};
  ASSERT_OK(hgr_test_set_random_inputs(graph, executor, seed, inputs, &reference));
  ASSERT_OK(hgr_executor_run(executor));
  ASSERT_OK(hgr_executor_wait(executor));
  char message[400];
  if (!hgr_test_check_outputs(executor, graph, &reference, false, message, sizeof(message)))
    fail_msg("%s: %s", label, message);
  hgr_test_reference_free(&reference);
  for (size_t i = 0; i < input_count; ++i) free(inputs[i]);
  free(inputs);
  hgr_executor_release(executor);
}

/* ---- rules and FIRST ------------------------------------------------------------------ */

static void rules_of_each_kind_place_nodes_and_later_rules_win(void** state) {
  (void)state;
  hgr_graph_t* graph = load(chain_json);
  hgr_place_options_t options;
  hgr_place_options_init(&options);
  options.devices = testbed;
  options.device_count = 3;
  ASSERT_OK(hgr_place_options_parse(&options, "op:relu=pocl:1"));
  ASSERT_OK(hgr_place_options_parse(&options, "node:tanh_*=rusticl:0"));
  ASSERT_OK(hgr_place_options_parse(&options, "range:4-4=pocl:1"));
  ASSERT_OK(hgr_place_options_parse(&options, "node:sig*=rusticl:0")); /* wins over the range */
  hgr_placement_t* placement = place(graph, &options);
  const char* want[6] = {"pocl:0", "pocl:0", "pocl:0", "pocl:1", "rusticl:0", "rusticl:0"};
  hgr_place_reason_t reasons[6] = {HGR_PLACE_BY_INPUT, HGR_PLACE_BY_INPUT, HGR_PLACE_BY_POLICY,
                                   HGR_PLACE_BY_RULE, HGR_PLACE_BY_RULE, HGR_PLACE_BY_RULE};
  size_t rules[6] = {0, 0, 0, 0, 3, 1};
  for (uint32_t n = 0; n < 6; ++n) {
    hgr_node_placement_t node = hgr_test_placed_node(placement, n, NULL);
    assert_string_equal(spec_of(node.device_index), want[n]);
    assert_int_equal(node.reason, reasons[n]);
    if (node.reason == HGR_PLACE_BY_RULE) assert_int_equal(node.rule_index, rules[n]);
  }
  /* add -> relu crosses pocl:0 -> pocl:1, relu -> sigmoid pocl:1 -> rusticl:0. */
  hgr_graph_t* placed = hgr_placement_graph(placement);
  assert_int_equal(hgr_graph_node_count(placed), 8);
  char* text = NULL;
  size_t length = 0;
  FILE* out = open_memstream(&text, &length);
  ASSERT_OK(hgr_placement_write_summary(placement, out));
  fclose(out);
  printf("%s", text);
  assert_non_null(strstr(text, "rule 4 (node:sig*=rusticl:0)"));
  assert_non_null(strstr(text, "same-context 1"));
  assert_non_null(strstr(text, "cross-platform 1"));
  free(text);
  report_memory("chain by rules", placement, NULL, true);
  run_against_reference(placed, NULL, 7, "chain by rules");
  hgr_placement_release(placement);
  hgr_graph_release(graph);
}

static void first_places_everything_on_the_first_device_without_copies(void** state) {
  (void)state;
  hgr_graph_t* graph = load(chain_json);
  const char* devices[] = {"pocl:1", "pocl:0"};
  hgr_place_options_t options;
  hgr_place_options_init(&options);
  options.devices = devices;
  options.device_count = 2;
  ASSERT_OK(hgr_place_options_parse(&options, "first"));
  hgr_placement_t* placement = place(graph, &options);
  hgr_graph_t* placed = hgr_placement_graph(placement);
  assert_int_equal(hgr_graph_node_count(placed), 6);
  assert_int_equal(hgr_placement_device_count(placement), 1);
  hgr_placement_device_t device;
  ASSERT_OK(hgr_placement_device(placement, 0, &device));
  assert_string_equal(spec_of(device.device_index), "pocl:1");
  assert_int_equal(device.key, 1);
  assert_int_equal(device.node_count, 4);
  /* relu is a head, so sigmoid cannot overwrite it; tanh (a head) has its own. */
  report_memory("chain first", placement, NULL, true);
  run_against_reference(placed, NULL, 11, "chain first");
  hgr_placement_release(placement);
  /* No devices listed: the executor's choice for key 1, a CPU other than Oclgrind. */
  hgr_place_options_init(&options);
  placement = place(graph, &options);
  assert_int_equal(hgr_placement_device_count(placement), 1);
  ASSERT_OK(hgr_placement_device(placement, 0, &device));
  const hgr_device_info_t* info = hgr_instance_device(instance, device.device_index);
  printf("default device: %s\n", info->spec);
  assert_int_equal(info->type, HGR_DEVICE_TYPE_CPU);
  assert_string_not_equal(info->platform_short, "oclgrind");
  hgr_placement_release(placement);
  hgr_graph_release(graph);
}

static void options_parse_rules_and_policies_and_refuse_the_rest(void** state) {
  (void)state;
  hgr_place_options_t options;
  hgr_place_options_init(&options);
  ASSERT_OK(hgr_place_options_parse(&options, "stages:3"));
  assert_int_equal(options.policy, HGR_PLACE_STAGES);
  assert_int_equal(options.stages, 3);
  ASSERT_OK(hgr_place_options_parse(&options, "auto"));
  assert_int_equal(options.policy, HGR_PLACE_AUTO);
  ASSERT_OK(hgr_place_options_parse(&options, "range:3-17=pocl:1"));
  assert_int_equal(options.rules[0].kind, HGR_PLACE_RULE_RANGE);
  assert_int_equal(options.rules[0].first, 3);
  assert_int_equal(options.rules[0].last, 17);
  assert_string_equal(options.rules[0].spec, "pocl:1");
  ASSERT_STATUS(hgr_place_options_parse(&options, "fastest"), HGR_STATUS_INVALID_ARGUMENT, "'fastest'", "op:NAME=SPEC");
  ASSERT_STATUS(hgr_place_options_parse(&options, "stages:0"), HGR_STATUS_INVALID_ARGUMENT, "at least 1");
  ASSERT_STATUS(hgr_place_options_parse(&options, "range:9-3=pocl:0"), HGR_STATUS_INVALID_ARGUMENT, "after its end");
  ASSERT_STATUS(hgr_place_options_parse(&options, "range:a-3=pocl:0"), HGR_STATUS_INVALID_ARGUMENT, "two node ids");
  ASSERT_STATUS(hgr_place_options_parse(&options, "op:relu="), HGR_STATUS_INVALID_ARGUMENT, "names no device");
  ASSERT_STATUS(hgr_place_options_parse(&options, "layer:relu=pocl:0"), HGR_STATUS_INVALID_ARGUMENT, "layer:relu");
  assert_int_equal(options.rule_count, 1);
  /* A spec naming no device, and the same device listed twice. */
  hgr_graph_t* graph = load(chain_json);
  hgr_placement_t* placement = NULL;
  hgr_place_options_init(&options);
  ASSERT_OK(hgr_place_options_parse(&options, "op:relu=nosuch:0"));
  ASSERT_STATUS(hgr_place(instance, graph, &options, &placement), HGR_STATUS_NOT_FOUND, "rule 1 'op:relu=nosuch:0'");
  size_t pocl0 = 0;
  ASSERT_OK(hgr_instance_find_device(instance, "pocl:0", &pocl0));
  char numeric[32];
  snprintf(numeric, sizeof(numeric), "%zu.%zu", hgr_instance_device(instance, pocl0)->platform_index,
           hgr_instance_device(instance, pocl0)->index_in_platform);
  const char* twice[] = {"pocl:0", numeric};
  hgr_place_options_init(&options);
  options.devices = twice;
  options.device_count = 2;
  ASSERT_STATUS(hgr_place(instance, graph, &options, &placement), HGR_STATUS_INVALID_ARGUMENT,
                "placement devices 1 and 2", "are the same device, pocl:0");
  assert_null(placement);
  hgr_graph_release(graph);
}

/* ---- what a device can run, on fake devices ------------------------------------------------ */

static void capability_says_which_device_cannot_run_what_and_why(void** state) {
  (void)state;
  hgr_graph_t* graph = load(chain_json);
  hgr_device_info_t fake = {0};
  fake.spec = "fake:0";
  fake.compiler_available = true;
  fake.max_work_group_size = 256;
  fake.max_work_item_sizes[0] = fake.max_work_item_sizes[1] = fake.max_work_item_sizes[2] = 256;
  fake.local_mem_bytes = 32768;
  char* reason = NULL;
  ASSERT_OK(hgr__place_device_can_run(graph, 3, NULL, &fake, &reason));
  assert_null(reason);
  ASSERT_OK(hgr__place_device_can_run(graph, 0, NULL, &fake, &reason)); /* an input runs anywhere */
  assert_null(reason);
  fake.compiler_available = false; /* a binary-only device runs no built-in op */
  ASSERT_OK(hgr__place_device_can_run(graph, 3, NULL, &fake, &reason));
  assert_non_null(reason);
  assert_string_equal(reason, "fake:0: op 'relu' is built in (compiled from source), and the device has no compiler");
  free(reason);
  hgr_graph_release(graph);

  /* hgr's own ops hold float16 without cl_khr_fp16 (vload_half): the op's own checks
   * decide, with the extension or without. */
  char json[sizeof(chain_json) + 64];
  snprintf(json, sizeof(json), "%s", chain_json);
  char* dtypes = strstr(json, "\"dltype\"");
  for (char* at = strstr(dtypes, "float32"); at; at = strstr(at, "float32")) memcpy(at, "float16", 7);
  graph = load(json);
  fake.compiler_available = true;
  for (int fp16 = 0; fp16 < 2; ++fp16) {
    fake.fp16 = fp16;
    ASSERT_OK(hgr__place_device_can_run(graph, 3, NULL, &fake, &reason));
    assert_non_null(reason);
    assert_non_null(strstr(reason, "fake:0: node 3 'relu_3' (relu)"));
    free(reason);
  }
  hgr_graph_release(graph);
}

/* ---- AUTO and STAGES (the cost model calibrates what it lacks) ---------------------------- */

static void stages_are_contiguous_and_auto_is_no_slower_than_one_device(void** state) {
  (void)state;
  hgr_graph_t* graph = load(chain_json);
  const char* devices[] = {"pocl:0", "pocl:1"};
  hgr_place_options_t options;
  hgr_place_options_init(&options);
  options.devices = devices;
  options.device_count = 2;
  options.cost_cache_directory = hgr_test_tmp_path("place-costs");
  ASSERT_OK(hgr_place_options_parse(&options, "stages:2"));
  hgr_placement_t* placement = place(graph, &options);
  /* Op nodes 2 to 5 in graph order: pocl:0's stage, then pocl:1's. */
  size_t previous = 0;
  for (uint32_t n = 2; n < 6; ++n) {
    hgr_node_placement_t node = hgr_test_placed_node(placement, n, NULL);
    size_t stage = strcmp(spec_of(node.device_index), "pocl:0") ? 1 : 0;
    assert_true(stage >= previous);
    previous = stage;
  }
  assert_true(hgr_placement_predicted_ms(placement) >= 0);
  report_memory("chain stages:2", placement, NULL, true);
  run_against_reference(hgr_placement_graph(placement), NULL, 5, "chain stages:2");
  hgr_placement_release(placement);

  ASSERT_OK(hgr_place_options_parse(&options, "auto"));
  placement = place(graph, &options);
  size_t single_device = SIZE_MAX;
  double single = hgr_placement_best_single_ms(placement, &single_device);
  double predicted = hgr_placement_predicted_ms(placement);
  printf("auto: predicted %.4f ms, best single device %s %.4f ms\n", predicted,
         single_device == SIZE_MAX ? "(none)" : spec_of(single_device), single);
  assert_true(predicted >= 0);
  assert_true(single_device != SIZE_MAX);
  assert_true(predicted <= single * 1.000001 + 1e-9);
  char* text = NULL;
  size_t length = 0;
  FILE* out = open_memstream(&text, &length);
  ASSERT_OK(hgr_placement_write_json(placement, out));
  fclose(out);
  assert_non_null(strstr(text, "\"best_single_device\""));
  assert_null(strstr(text, "\"predicted_ms\":\tnull"));
  free(text);
  run_against_reference(hgr_placement_graph(placement), NULL, 6, "chain auto");
  hgr_placement_release(placement);
  hgr_graph_release(graph);
}

/* ---- fallback: a user op with only a PoCL binary ---------------------------------------- */

static const char kernel_source[] =
    "__kernel void scale_add(__global const float* a, __global const float* b, __global float* y, uint n,\n"
    "                        float alpha) {\n"
    "  size_t i = get_global_id(0);\n"
    "  if (i < n) y[i] = alpha * a[i] + b[i];\n"
    "}\n";

static char manifest_path[512], binary_path[512];

static void write_file(const char* path, const void* data, size_t length) {
  FILE* file = fopen(path, "wb");
  assert_non_null(file);
  assert_int_equal(fwrite(data, 1, length, file), length);
  assert_int_equal(fclose(file), 0);
}

/* Builds scale_add with PoCL and writes a manifest that has only that binary. */
static hgr_kernel_library_t* pocl_only_library(void) {
  snprintf(manifest_path, sizeof(manifest_path), "%s", hgr_test_tmp_path("place-kernels.json"));
  snprintf(binary_path, sizeof(binary_path), "%s", hgr_test_tmp_path("place-scale-add.pocl.bin"));
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
  assert_int_equal(error, CL_SUCCESS);
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
  char manifest[2048];
  snprintf(manifest, sizeof(manifest),
           "{\"ops\": [{\"func_name\": \"scale_add\", \"kernel\": \"scale_add\",\n"
           "  \"binaries\": [{\"device\": \"pocl\", \"file\": \"%s\"}], \"inputs\": 2, \"outputs\": 1,\n"
           "  \"args\": [\"input 0\", \"input 1\", \"output 0\", \"elements output 0\", \"attr alpha float\"],\n"
           "  \"ndrange\": \"elements\"}]}\n",
           strrchr(binary_path, '/') + 1);
  write_file(manifest_path, manifest, strlen(manifest));
  hgr_kernel_library_t* library = NULL;
  ASSERT_OK(hgr_kernel_library_load_file(manifest_path, &library));
  return library;
}

/* a, b -> scale_add (user op) -> relu; two scale_adds so that two nodes fall back. */
static const char user_json[] =
    "{\"nodes\": [{\"op\": \"null\", \"name\": \"a\", \"inputs\": []}, {\"op\": \"null\", \"name\": \"b\", \"inputs\": []},"
    " {\"op\": \"tvm_op\", \"name\": \"sa1\", \"attrs\": {\"func_name\": \"scale_add\", \"num_inputs\": \"2\", \"num_outputs\": \"1\", \"flatten_data\": \"0\", \"alpha\": \"1.5\"}, \"inputs\": [[0, 0, 0], [1, 0, 0]]},"
    " {\"op\": \"tvm_op\", \"name\": \"re\", \"attrs\": {\"func_name\": \"relu\", \"num_inputs\": \"1\", \"num_outputs\": \"1\", \"flatten_data\": \"0\"}, \"inputs\": [[2, 0, 0]]},"
    " {\"op\": \"tvm_op\", \"name\": \"sa2\", \"attrs\": {\"func_name\": \"scale_add\", \"num_inputs\": \"2\", \"num_outputs\": \"1\", \"flatten_data\": \"0\", \"alpha\": \"-2\"}, \"inputs\": [[3, 0, 0], [1, 0, 0]]}],"
    " \"arg_nodes\": [0, 1], \"node_row_ptr\": [0, 1, 2, 3, 4, 5], \"heads\": [[4, 0, 0]],"
    " \"attrs\": {\"storage_id\": [\"list_int\", [0, 1, 2, 3, 4]],"
    " \"shape\": [\"list_shape\", [[5, 13], [5, 13], [5, 13], [5, 13], [5, 13]]],"
    " \"dltype\": [\"list_str\", [\"float32\", \"float32\", \"float32\", \"float32\", \"float32\"]]}}";

static void user_ops_fall_back_to_the_device_with_their_binary(void** state) {
  (void)state;
  hgr_kernel_library_t* library = pocl_only_library();
  hgr_graph_t* graph = load(user_json);
  const char* devices[] = {"rusticl:0", "pocl:0"};
  hgr_place_options_t options;
  hgr_place_options_init(&options);
  options.devices = devices;
  options.device_count = 2;
  options.kernels = library;
  hgr_placement_t* placement = place(graph, &options);
  report_memory("user ops fallback", placement, library, true);
  const char* want[5] = {"pocl:0", "pocl:0", "pocl:0", "rusticl:0", "pocl:0"};
  for (uint32_t n = 0; n < 5; ++n) {
    hgr_node_placement_t node = hgr_test_placed_node(placement, n, NULL);
    assert_string_equal(spec_of(node.device_index), want[n]);
    if (n == 2 || n == 4) {
      assert_int_equal(node.reason, HGR_PLACE_BY_FALLBACK);
      assert_non_null(strstr(node.fallback, "rusticl:0: op 'scale_add' has no kernel for this device"));
    }
  }
  char* text = NULL;
  size_t length = 0;
  FILE* out = open_memstream(&text, &length);
  ASSERT_OK(hgr_placement_write_summary(placement, out));
  fclose(out);
  printf("%s", text);
  assert_non_null(strstr(text, "fallbacks:"));
  assert_non_null(strstr(text, "node 2 'sa1' (scale_add) -> pocl:0: rusticl:0: op 'scale_add' has no kernel"));
  assert_non_null(strstr(text, "cross-platform 2"));
  free(text);
  out = open_memstream(&text, &length);
  ASSERT_OK(hgr_placement_write_json(placement, out));
  fclose(out);
  assert_non_null(strstr(text, "\"fallbacks\""));
  assert_non_null(strstr(text, "\"planned_bytes\""));
  assert_non_null(strstr(text, "\"storage_bound_bytes\""));
  assert_non_null(strstr(text, "\"reason\":\t\"fallback\""));
  free(text);

  /* y = -2 * relu(1.5 a + b) + b */
  hgr_graph_t* placed = hgr_placement_graph(placement);
  hgr_executor_t* executor = create_executor(placed, library);
  float a[65], b[65], y[65];
  for (int i = 0; i < 65; ++i) {
    a[i] = (float)(i % 11) - 5.0f;
    b[i] = (float)(i % 7) * 0.5f;
  }
  ASSERT_OK(hgr_executor_set_input_by_name(executor, "a", a, sizeof(a)));
  ASSERT_OK(hgr_executor_set_input_by_name(executor, "b", b, sizeof(b)));
  ASSERT_OK(hgr_executor_run(executor));
  ASSERT_OK(hgr_executor_wait(executor));
  ASSERT_OK(hgr_executor_get_output(executor, 0, y, sizeof(y)));
  for (int i = 0; i < 65; ++i) assert_true(y[i] == -2.0f * fmaxf(0.0f, 1.5f * a[i] + b[i]) + b[i]);
  hgr_executor_release(executor);
  hgr_placement_release(placement);

  /* A rule that puts scale_add on rusticl:0 names the rule, the node and why. */
  hgr_place_options_init(&options);
  options.devices = devices;
  options.device_count = 2;
  options.kernels = library;
  ASSERT_OK(hgr_place_options_parse(&options, "node:sa*=rusticl:0"));
  placement = NULL;
  ASSERT_STATUS(hgr_place(instance, graph, &options, &placement), HGR_STATUS_INVALID_ARGUMENT,
                "rule 1 'node:sa*=rusticl:0' places node 2 'sa1' on rusticl:0",
                "rusticl:0: op 'scale_add' has no kernel for this device");
  assert_null(placement);
  /* With rusticl:0 alone, nothing can run scale_add: each device's reason. */
  hgr_place_options_init(&options);
  options.devices = devices;
  options.device_count = 1;
  options.kernels = library;
  ASSERT_STATUS(hgr_place(instance, graph, &options, &placement), HGR_STATUS_INVALID_ARGUMENT,
                "no listed device can run node 2 'sa1'", "rusticl:0: op 'scale_add' has no kernel");
  hgr_graph_release(graph);
  hgr_kernel_library_release(library);
  remove(manifest_path);
  remove(binary_path);
}

/* ---- the examples, re-placed ------------------------------------------------------------- */

static bool file_exists(const char* path) { return access(path, R_OK) == 0; }

static void place_and_run_example(const char* name) {
  const char* source = getenv("HGR_SOURCE_DIR");
  char path[1024];
  snprintf(path, sizeof(path), "%s/examples/%s.json", source ? source : ".", name);
  hgr_graph_t* graph = NULL;
  ASSERT_OK(hgr_graph_load_file(path, &graph));
  /* Range rules count the nodes left once the example's own copies are gone. */
  uint32_t node_count = 0;
  for (size_t n = 0; n < hgr_graph_node_count(graph); ++n) {
    hgr_node_info_t info;
    ASSERT_OK(hgr_graph_node_info(graph, n, &info));
    node_count += !info.func_name || strcmp(info.func_name, "__copy");
  }
  hgr_place_options_t options;
  hgr_place_options_init(&options);
  options.devices = testbed;
  options.device_count = 3;
  char rule[128];
  uint32_t third = node_count / 3;
  snprintf(rule, sizeof(rule), "range:0-%u=pocl:0", third);
  ASSERT_OK(hgr_place_options_parse(&options, rule));
  snprintf(rule, sizeof(rule), "range:%u-%u=pocl:1", third + 1, 2 * third);
  ASSERT_OK(hgr_place_options_parse(&options, rule));
  snprintf(rule, sizeof(rule), "range:%u-%u=rusticl:0", 2 * third + 1, node_count);
  ASSERT_OK(hgr_place_options_parse(&options, rule));
  hgr_placement_t* placement = place(graph, &options);
  hgr_graph_t* placed = hgr_placement_graph(placement);
  printf("example %s: %u nodes without copies, %zu placed\n", name, node_count, hgr_graph_node_count(placed));
  char label[64];
  snprintf(label, sizeof(label), "example %s", name);
  report_memory(label, placement, NULL, true);
  assert_true(hgr_placement_device_count(placement) >= 2);

  hgr_executor_t* executor = create_executor(placed, NULL);
  snprintf(path, sizeof(path), "%s/examples/%s.params", source ? source : ".", name);
  if (file_exists(path)) {
    hgr_params_t* params = NULL;
    ASSERT_OK(hgr_params_load_file(path, &params));
    ASSERT_OK(hgr_executor_load_params(executor, params, NULL));
    hgr_params_release(params);
  }
  for (size_t i = 0; i < hgr_graph_input_count(placed); ++i) {
    hgr_tensor_info_t info;
    ASSERT_OK(hgr_graph_input_info(placed, i, &info));
    snprintf(path, sizeof(path), "%s/examples/%s_%s.npy", source ? source : ".", name, info.name);
    if (!file_exists(path)) continue;
    hgr_npy_array_t array;
    ASSERT_OK(hgr_npy_load_file(path, &array));
    ASSERT_OK(hgr_executor_set_input(executor, i, array.data, array.bytes));
    hgr_npy_array_free(&array);
  }
  /* Several runs in flight: storages the plan shares must not be reused early. */
  for (int run = 0; run < 4; ++run) ASSERT_OK(hgr_executor_run(executor));
  ASSERT_OK(hgr_executor_wait(executor));
  for (size_t o = 0; o < hgr_graph_output_count(placed); ++o) {
    snprintf(path, sizeof(path), "%s/examples/%s_expected_%zu.npy", source ? source : ".", name, o);
    hgr_npy_array_t want;
    ASSERT_OK(hgr_npy_load_file(path, &want));
    float* got = malloc(want.bytes + 1);
    assert_non_null(got);
    ASSERT_OK(hgr_executor_get_output(executor, o, got, want.bytes));
    const float* expected = want.data;
    for (uint64_t i = 0; i < want.bytes / sizeof(float); ++i) {
      double allowed = 1e-5 + 1e-5 * fabs((double)expected[i]);
      if (fabs((double)got[i] - (double)expected[i]) > allowed)
        fail_msg("example %s output %zu element %llu: got %.9g, expected %.9g", name, o, (unsigned long long)i,
                 got[i], expected[i]);
    }
    printf("example %s output %zu matches %s_expected_%zu.npy\n", name, o, name, o);
    free(got);
    hgr_npy_array_free(&want);
  }
  hgr_executor_release(executor);
  hgr_placement_release(placement);
  hgr_graph_release(graph);
}

static void examples_replaced_by_range_rules_give_their_expected_outputs(void** state) {
  (void)state;
  const char* examples[] = {"simplex", "duplex", "mlp", "cnn", "large"};
  for (size_t e = 0; e < sizeof(examples) / sizeof(*examples); ++e) place_and_run_example(examples[e]);
}

/* ---- random graphs, random rules ---------------------------------------------------------- */

/* graphs random graphs of op_count ops (seeds first_seed...) placed over devices by
 * random range and op rules, run and compared with the reference. */
static void place_random_graphs(const char* const* devices, uint32_t device_count, uint64_t first_seed,
                                uint32_t graphs, uint32_t op_count, const uint64_t* sizes, size_t size_count) {
  static const int32_t keys[] = {1, 4};
  hgr_test_rng_t rng;
  hgr_test_rng_seed(&rng, 14 + first_seed);
  for (uint64_t seed = first_seed; seed < first_seed + graphs; ++seed) {
    hgr_test_graph_options_t generate = {.seed = seed, .op_count = op_count, .sizes = sizes, .size_count = size_count,
                                         .device_keys = keys, .device_key_count = 2};
    char* json = hgr_test_graph_generate(&generate);
    assert_non_null(json);
    hgr_graph_t* graph = load(json);
    free(json);
    hgr_place_options_t options;
    hgr_place_options_init(&options);
    options.devices = devices;
    options.device_count = device_count;
    uint32_t rules = hgr_test_rng_below(&rng, 5);
    char text[128];
    for (uint32_t r = 0; r < rules; ++r) {
      uint32_t first = hgr_test_rng_below(&rng, op_count + 6), last = first + hgr_test_rng_below(&rng, 10);
      snprintf(text, sizeof(text), "range:%u-%u=%s", first, last, devices[hgr_test_rng_below(&rng, device_count)]);
      ASSERT_OK(hgr_place_options_parse(&options, text));
    }
    if (device_count > 3) { /* the last device (Oclgrind) gets some nodes in any case */
      uint32_t first = hgr_test_rng_below(&rng, op_count);
      snprintf(text, sizeof(text), "range:%u-%u=%s", first, first + 4, devices[device_count - 1]);
      ASSERT_OK(hgr_place_options_parse(&options, text));
    }
    if (hgr_test_rng_below(&rng, 2)) {
      snprintf(text, sizeof(text), "op:%s=%s", hgr_test_rng_below(&rng, 2) ? "tanh" : "add",
               devices[hgr_test_rng_below(&rng, device_count)]);
      ASSERT_OK(hgr_place_options_parse(&options, text));
    }
    hgr_placement_t* placement = place(graph, &options);
    char label[64];
    snprintf(label, sizeof(label), "random graph %llu%s", (unsigned long long)seed,
             device_count > 3 ? " (+oclgrind)" : "");
    report_memory(label, placement, NULL, false);
    run_against_reference(hgr_placement_graph(placement), NULL, seed, label);
    hgr_placement_release(placement);
    hgr_graph_release(graph);
  }
}

static void random_graphs_placed_by_random_rules_match_the_reference(void** state) {
  (void)state;
  static const uint64_t sizes[] = {1, 13, 64, 1000, 4096};
  place_random_graphs(testbed, 3, 1, 30, 24, sizes, 5);
}

/* Oclgrind checks every kernel's memory accesses (a report fails the test). */
static void random_graphs_placed_with_oclgrind_match_the_reference(void** state) {
  (void)state;
  static const uint64_t sizes[] = {1, 13, 64};
  const char* devices[] = {"pocl:0", "pocl:1", "rusticl:0", "oclgrind:0"};
  place_random_graphs(devices, 4, 101, 4, 12, sizes, 3);
}

/* A graph of 2000 ops over three devices: placed and verified (not run); memory
 * printed. */
static void a_large_random_graph_is_placed_and_verified(void** state) {
  (void)state;
  static const uint64_t sizes[] = {1, 64, 1000, 4096, 65536};
  static const int32_t keys[] = {1, 4};
  hgr_test_graph_options_t generate = {.seed = 99, .op_count = 2000, .sizes = sizes, .size_count = 5,
                                       .device_keys = keys, .device_key_count = 2};
  char* json = hgr_test_graph_generate(&generate);
  assert_non_null(json);
  hgr_graph_t* graph = load(json);
  free(json);
  hgr_place_options_t options;
  hgr_place_options_init(&options);
  options.devices = testbed;
  options.device_count = 3;
  ASSERT_OK(hgr_place_options_parse(&options, "range:0-700=pocl:1"));
  ASSERT_OK(hgr_place_options_parse(&options, "range:1200-2400=rusticl:0"));
  uint64_t start = hgr__monotonic_ns();
  hgr_placement_t* placement = place(graph, &options);
  printf("2000 ops placed, planned and verified twice in %.0f ms\n", (double)(hgr__monotonic_ns() - start) / 1e6);
  report_memory("random graph of 2000", placement, NULL, false);
  hgr_placement_release(placement);
  hgr_graph_release(graph);
}

/* ---- the verifier -------------------------------------------------------------------------- */

/* x on key 1 -> a = relu(x), b = sigmoid(x) -> c = add(a, b), with storage ids and
 * device keys from the arguments. */
static hgr_status_t verify_json(const char* storage_ids, const char* device_keys, const char* second_op) {
  char json[4096];
  snprintf(json, sizeof(json),
           "{\"nodes\": [{\"op\": \"null\", \"name\": \"x\", \"inputs\": []},"
           " {\"op\": \"tvm_op\", \"name\": \"a\", \"attrs\": {\"func_name\": \"relu\", \"num_inputs\": \"1\", \"num_outputs\": \"1\", \"flatten_data\": \"0\"}, \"inputs\": [[0, 0, 0]]},"
           " {\"op\": \"tvm_op\", \"name\": \"b\", \"attrs\": {\"func_name\": \"sigmoid\", \"num_inputs\": \"1\", \"num_outputs\": \"1\", \"flatten_data\": \"0\"}, \"inputs\": [[%s, 0, 0]]},"
           " {\"op\": \"tvm_op\", \"name\": \"c\", \"attrs\": {\"func_name\": \"add\", \"num_inputs\": \"2\", \"num_outputs\": \"1\", \"flatten_data\": \"0\"}, \"inputs\": [[1, 0, 0], [2, 0, 0]]}],"
           " \"arg_nodes\": [0], \"node_row_ptr\": [0, 1, 2, 3, 4], \"heads\": [[3, 0, 0]],"
           " \"attrs\": {\"storage_id\": [\"list_int\", [%s]], \"device_index\": [\"list_int\", [%s]],"
           " \"shape\": [\"list_shape\", [[4, 4], [4, 4], [4, 4], [4, 4]]],"
           " \"dltype\": [\"list_str\", [\"float32\", \"float32\", \"float32\", \"float32\"]]}}",
           second_op, storage_ids, device_keys);
  hgr_graph_t* graph = load(json);
  hgr_status_t status = hgr__place_verify(graph, NULL);
  hgr_graph_release(graph);
  return status;
}

static void the_verifier_passes_good_plans_and_rejects_broken_ones(void** state) {
  (void)state;
  ASSERT_OK(verify_json("0, 1, 2, 3", "1, 1, 1, 1", "0"));
  /* b = sigmoid(a) may overwrite a only where a dies at b; here c still reads a. */
  ASSERT_STATUS(verify_json("0, 1, 1, 3", "1, 1, 1, 1", "1"), HGR_STATUS_INVALID_ARGUMENT, "storage 1 is shared by",
                "node 1 'a'", "node 2 'b'", "alive at the same time");
  /* Two live values sharing a storage: a and b both live until c. */
  ASSERT_STATUS(verify_json("0, 1, 1, 3", "1, 1, 1, 1", "0"), HGR_STATUS_INVALID_ARGUMENT, "storage 1 is shared by",
                "entry 1 (node 1 'a', output 0)", "entry 2 (node 2 'b', output 0)");
  /* An intermediate in an input's storage. */
  ASSERT_STATUS(verify_json("0, 0, 2, 3", "1, 1, 1, 1", "0"), HGR_STATUS_INVALID_ARGUMENT, "storage 0 is shared by",
                "an input or output");
  /* A consumer on the wrong device: b on key 2 reads x on key 1 without a copy. */
  ASSERT_STATUS(verify_json("0, 1, 2, 3", "1, 1, 2, 2", "0"), HGR_STATUS_INVALID_ARGUMENT,
                "node 2 'b' runs on device key 2 but its input 0, entry 0 (node 0 'x', output 0), is on device key 1",
                "only a __copy");
}

/* b = sigmoid(a) over a, with a dying at b: the one in-place case of this chain. */
static void the_verifier_accepts_in_place_over_a_dying_input(void** state) {
  (void)state;
  const char json[] =
      "{\"nodes\": [{\"op\": \"null\", \"name\": \"x\", \"inputs\": []},"
      " {\"op\": \"tvm_op\", \"name\": \"a\", \"attrs\": {\"func_name\": \"relu\", \"num_inputs\": \"1\", \"num_outputs\": \"1\", \"flatten_data\": \"0\"}, \"inputs\": [[0, 0, 0]]},"
      " {\"op\": \"tvm_op\", \"name\": \"b\", \"attrs\": {\"func_name\": \"sigmoid\", \"num_inputs\": \"1\", \"num_outputs\": \"1\", \"flatten_data\": \"0\"}, \"inputs\": [[1, 0, 0]]},"
      " {\"op\": \"tvm_op\", \"name\": \"r\", \"attrs\": {\"func_name\": \"reshape\", \"num_inputs\": \"1\", \"num_outputs\": \"1\", \"flatten_data\": \"0\", \"newshape\": \"[16]\"}, \"inputs\": [[2, 0, 0]]},"
      " {\"op\": \"tvm_op\", \"name\": \"c\", \"attrs\": {\"func_name\": \"tanh\", \"num_inputs\": \"1\", \"num_outputs\": \"1\", \"flatten_data\": \"0\"}, \"inputs\": [[3, 0, 0]]}],"
      " \"arg_nodes\": [0], \"node_row_ptr\": [0, 1, 2, 3, 4, 5], \"heads\": [[4, 0, 0]],"
      " \"attrs\": {\"storage_id\": [\"list_int\", [0, 1, 1, 1, 2]], \"device_index\": [\"list_int\", [1, 1, 1, 1, 1]],"
      " \"shape\": [\"list_shape\", [[4, 4], [4, 4], [4, 4], [16], [16]]],"
      " \"dltype\": [\"list_str\", [\"float32\", \"float32\", \"float32\", \"float32\", \"float32\"]]}}";
  hgr_graph_t* graph = load(json);
  ASSERT_OK(hgr__place_verify(graph, NULL));
  /* The planner finds the same: one storage for a, b and the reshape. */
  hgr__memory_plan_t plan;
  ASSERT_OK(hgr__memory_plan(graph, NULL, &plan));
  assert_int_equal(plan.storage_ids[1], plan.storage_ids[2]);
  assert_int_equal(plan.storage_ids[2], plan.storage_ids[3]);
  assert_int_not_equal(plan.storage_ids[0], plan.storage_ids[1]);
  assert_int_not_equal(plan.storage_ids[4], plan.storage_ids[1]);
  assert_int_equal(plan.device_count, 1);
  assert_int_equal(plan.devices[0].planned_bytes, 3 * 64);
  assert_int_equal(plan.devices[0].lower_bound_bytes, 3 * 64);
  assert_int_equal(plan.devices[0].no_reuse_bytes, 4 * 64);
  hgr__memory_plan_free(&plan);
  hgr_graph_release(graph);
}

int main(int argc, char** argv) {
  /* "unit": what needs no device (fake device records, the plan verifier and the
   * memory planner), so that it also runs where no OpenCL device is (cross builds
   * under qemu-user). */
  if (argc > 1 && !strcmp(argv[1], "unit")) {
    const struct CMUnitTest unit_tests[] = {
        cmocka_unit_test(capability_says_which_device_cannot_run_what_and_why),
        cmocka_unit_test(the_verifier_passes_good_plans_and_rejects_broken_ones),
        cmocka_unit_test(the_verifier_accepts_in_place_over_a_dying_input),
    };
    return cmocka_run_group_tests(unit_tests, NULL, NULL);
  }
  ASSERT_OK(hgr_instance_create(NULL, &instance));
  hgr_test_require_devices(instance, testbed, 3);
  /* The Oclgrind case needs it too: a missing one skips the whole test (cmocka's
   * skip() of one case would read as passed in CTest). */
  hgr_test_require_devices(instance, (const char* const[]){"oclgrind:0"}, 1);
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(options_parse_rules_and_policies_and_refuse_the_rest),
      cmocka_unit_test(rules_of_each_kind_place_nodes_and_later_rules_win),
      cmocka_unit_test(first_places_everything_on_the_first_device_without_copies),
      cmocka_unit_test(user_ops_fall_back_to_the_device_with_their_binary),
      cmocka_unit_test(stages_are_contiguous_and_auto_is_no_slower_than_one_device),
      cmocka_unit_test(examples_replaced_by_range_rules_give_their_expected_outputs),
      cmocka_unit_test(random_graphs_placed_by_random_rules_match_the_reference),
      cmocka_unit_test(random_graphs_placed_with_oclgrind_match_the_reference),
      cmocka_unit_test(a_large_random_graph_is_placed_and_verified),
  };
  int failed = cmocka_run_group_tests(tests, NULL, NULL);
  printf("worst planned/bound over every device of every plan: %.3f (target 1.10, missed on %u device plans)\n",
         worst_ratio, target_misses);
  hgr_instance_release(instance);
  return failed;
}
