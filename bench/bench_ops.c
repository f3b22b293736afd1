/* Op benchmarks: hgr_bench_ops [--device SPEC] [--size N] [--repeat R] [--op NAME]...
 *
 * Times a one-node graph through the executor (run + wait, inputs set once, after
 * one warm-up run that also compiles) against a naive raw OpenCL kernel, one
 * work-item per output element, on the same device in the same process,
 * alternating the two run by run. The naive kernel runs with the fastest of the
 * driver's work-group size, 16x16, 8x8 and 64x1 (timed once each after a warm-up). Prints a markdown
 * row per op (median ms, GFLOP/s of each, the ratio) and a readable line, and
 * checks hgr's result against the naive one: max |hgr - naive| must stay within
 * 2e-5 * K * max|a| * max|b| (each float32 sum of K products is within about
 * 1e-5 * sum |a_il b_lj| of the exact value; a wrong kernel misses by O(1)).
 *
 * Ops: matmul (M = N = K = size, B row-major [K, N]) and dense (weight [units, in],
 * i.e. B transposed). Default: matmul on pocl:0, size 512, 10 repeats. */
#include "bench_ops.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "ops.h"

/* ---- helpers (declared in bench_ops.h) -------------------------------------------------- */

hgr_status_t bench_cl_status(cl_int error, const char* call, const char* spec) {
  return HGR_STATUS(HGR_STATUS_UNAVAILABLE, "%s on %s failed: OpenCL error %d", call, spec, (int)error);
}

hgr_status_t bench_raw_open(hgr_instance_t* instance, const char* spec, bench_raw_t* out_raw) {
  memset(out_raw, 0, sizeof(*out_raw));
  size_t index;
  HGR_RETURN_IF_ERROR(hgr_instance_find_device(instance, spec, &index));
  const hgr_device_info_t* info = hgr_instance_device(instance, index);
  out_raw->info = info;
  /* hgr numbers platforms and devices in the ICD loader's order */
  cl_uint platform_count = 0;
  cl_platform_id platforms[32];
  cl_int error = clGetPlatformIDs(32, platforms, &platform_count);
  if (error != CL_SUCCESS) return bench_cl_status(error, "clGetPlatformIDs", spec);
  if (info->platform_index >= platform_count)
    return HGR_STATUS(HGR_STATUS_INTERNAL, "%s: platform %zu not found", spec, info->platform_index);
  cl_uint device_count = 0;
  cl_device_id devices[64];
  error = clGetDeviceIDs(platforms[info->platform_index], CL_DEVICE_TYPE_ALL, 64, devices, &device_count);
  if (error != CL_SUCCESS) return bench_cl_status(error, "clGetDeviceIDs", spec);
  if (info->index_in_platform >= device_count)
    return HGR_STATUS(HGR_STATUS_INTERNAL, "%s: device %zu not found", spec, info->index_in_platform);
  out_raw->device = devices[info->index_in_platform];
  out_raw->context = clCreateContext(NULL, 1, &out_raw->device, NULL, NULL, &error);
  if (error != CL_SUCCESS) return bench_cl_status(error, "clCreateContext", spec);
  /* OpenCL 1.2 call: Oclgrind 21.10 has no clCreateCommandQueueWithProperties */
  out_raw->queue = clCreateCommandQueue(out_raw->context, out_raw->device, 0, &error);
  if (error != CL_SUCCESS) {
    bench_raw_close(out_raw);
    return bench_cl_status(error, "clCreateCommandQueue", spec);
  }
  return HGR_OK;
}

void bench_raw_close(bench_raw_t* raw) {
  if (raw->queue) clReleaseCommandQueue(raw->queue);
  if (raw->context) clReleaseContext(raw->context);
  memset(raw, 0, sizeof(*raw));
}

hgr_status_t bench_raw_kernel(const bench_raw_t* raw, const char* source, const char* name, cl_program* out_program,
                              cl_kernel* out_kernel) {
  *out_program = NULL;
  *out_kernel = NULL;
  cl_int error;
  cl_program program = clCreateProgramWithSource(raw->context, 1, &source, NULL, &error);
  if (error != CL_SUCCESS) return bench_cl_status(error, "clCreateProgramWithSource", raw->info->spec);
  error = clBuildProgram(program, 1, &raw->device, "", NULL, NULL);
  if (error != CL_SUCCESS) {
    char log[1024] = "";
    clGetProgramBuildInfo(program, raw->device, CL_PROGRAM_BUILD_LOG, sizeof(log) - 1, log, NULL);
    clReleaseProgram(program);
    return HGR_STATUS(HGR_STATUS_INTERNAL, "clBuildProgram(%s) on %s failed (%d): %s", name, raw->info->spec,
                      (int)error, log);
  }
  cl_kernel kernel = clCreateKernel(program, name, &error);
  if (error != CL_SUCCESS) {
    clReleaseProgram(program);
    return bench_cl_status(error, "clCreateKernel", raw->info->spec);
  }
  *out_program = program;
  *out_kernel = kernel;
  return HGR_OK;
}

hgr_status_t bench_raw_buffer(const bench_raw_t* raw, const float* values, size_t count, cl_mem* out_mem) {
  cl_int error;
  *out_mem = clCreateBuffer(raw->context, CL_MEM_READ_WRITE | (values ? CL_MEM_COPY_HOST_PTR : 0),
                            (count ? count : 1) * sizeof(float), (void*)values, &error);
  if (error != CL_SUCCESS) {
    *out_mem = NULL;
    return bench_cl_status(error, "clCreateBuffer", raw->info->spec);
  }
  return HGR_OK;
}

hgr_status_t bench_time_raw(const bench_raw_t* raw, cl_kernel kernel, cl_uint dims, const size_t* global,
                            const size_t* local, double* out_ms) {
  double start = (bench_now_ns() / 1e6);
  cl_int error = clEnqueueNDRangeKernel(raw->queue, kernel, dims, NULL, global, local, 0, NULL, NULL);
  if (error == CL_SUCCESS) error = clFinish(raw->queue);
  *out_ms = (bench_now_ns() / 1e6) - start;
  return error == CL_SUCCESS ? HGR_OK : bench_cl_status(error, "clEnqueueNDRangeKernel + clFinish", raw->info->spec);
}

hgr_status_t bench_graph_open(hgr_instance_t* instance, const char* json, const char* spec, bench_graph_t* out) {
  memset(out, 0, sizeof(*out));
  HGR_RETURN_IF_ERROR(hgr_graph_load_json(json, strlen(json), &out->graph));
  hgr_device_binding_t binding = {0, spec};
  hgr_executor_options_t options;
  hgr_executor_options_init(&options);
  options.bindings = &binding;
  options.binding_count = 1;
  hgr_status_t status = hgr_executor_create(instance, out->graph, &options, &out->executor);
  /* The kernel the last node plans with the device's limits (what the executor did,
   * unless the kernel's own work-group limit made it plan again). */
  size_t index = 0;
  if (!status) status = hgr_instance_find_device(instance, spec, &index);
  if (!status) {
    const hgr_device_info_t* info = hgr_instance_device(instance, index);
    hgr__limits_t limits = {info->max_work_group_size,
                            {info->max_work_item_sizes[0], info->max_work_item_sizes[1], info->max_work_item_sizes[2]},
                            info->local_mem_bytes, info->native_float_width};
    hgr__op_ctx_t ctx;
    status = hgr__op_plan(hgr_allocator_system(), out->graph, (uint32_t)hgr_graph_node_count(out->graph) - 1, NULL,
                          &limits, &ctx);
    if (!status) {
      snprintf(out->kernel, sizeof(out->kernel), "%s", ctx.launches[0].kernel);
      hgr__op_ctx_free(&ctx);
    }
  }
  if (status) bench_graph_close(out);
  return status;
}

void bench_graph_close(bench_graph_t* bench) {
  hgr_executor_release(bench->executor);
  hgr_graph_release(bench->graph);
  memset(bench, 0, sizeof(*bench));
}

hgr_status_t bench_time_hgr(bench_graph_t* bench, double* out_ms) {
  double start = (bench_now_ns() / 1e6);
  hgr_status_t status = hgr_executor_run(bench->executor);
  if (!status) status = hgr_executor_wait(bench->executor);
  *out_ms = (bench_now_ns() / 1e6) - start;
  return status;
}

/* ---- matmul and dense ------------------------------------------------------------------- */

/* C[i, j] = sum_l A[i, l] * B[l, j] with B[l, j] = b[l * b_depth + j * b_col]. */
static const char* const naive_gemm_source =
    "__kernel void naive_gemm(__global const float* a, __global const float* b, __global float* c,\n"
    "                         int m, int n, int k, int b_depth, int b_col) {\n"
    "  int j = get_global_id(0), i = get_global_id(1);\n"
    "  if (i >= m || j >= n) return;\n"
    "  float sum = 0.0f;\n"
    "  for (int l = 0; l < k; ++l) sum += a[i * k + l] * b[l * b_depth + j * b_col];\n"
    "  c[i * n + j] = sum;\n"
    "}\n";

static float next_value(uint64_t* state) {
  *state = *state * 6364136223846793005ull + 1442695040888963407ull;
  return (float)((double)(*state >> 40) / (double)(1ull << 24)) * 2.0f - 1.0f; /* [-1, 1) */
}

/* matmul of [m, k] x [k, n], or dense of data [m, k] and weight [n, k] (transposed_b). */
static hgr_status_t bench_gemm(hgr_instance_t* instance, const bench_options_t* options, const char* op,
                               bool transposed_b, bench_result_t* out_result) {
  int64_t m = options->size, n = options->size, k = options->size;
  size_t a_count = (size_t)(m * k), b_count = (size_t)(k * n), c_count = (size_t)(m * n);
  char json[2048];
  snprintf(json, sizeof(json),
           "{\"nodes\": [{\"op\": \"null\", \"name\": \"a\", \"inputs\": []},"
           " {\"op\": \"null\", \"name\": \"b\", \"inputs\": []},"
           " {\"op\": \"tvm_op\", \"name\": \"%s\", \"attrs\": {\"func_name\": \"%s\", \"num_inputs\": \"2\","
           " \"num_outputs\": \"1\", \"flatten_data\": \"0\"}, \"inputs\": [[0, 0, 0], [1, 0, 0]]}],"
           " \"arg_nodes\": [0, 1], \"node_row_ptr\": [0, 1, 2, 3], \"heads\": [[2, 0, 0]],"
           " \"attrs\": {\"storage_id\": [\"list_int\", [0, 1, 2]],"
           " \"shape\": [\"list_shape\", [[%lld, %lld], [%lld, %lld], [%lld, %lld]]],"
           " \"dltype\": [\"list_str\", [\"float32\", \"float32\", \"float32\"]]}}",
           op, op, (long long)m, (long long)k, (long long)(transposed_b ? n : k), (long long)(transposed_b ? k : n),
           (long long)m, (long long)n);
  float* a = malloc(a_count * sizeof(float));
  float* b = malloc(b_count * sizeof(float));
  float* hgr_c = malloc(c_count * sizeof(float));
  float* naive_c = malloc(c_count * sizeof(float));
  double* hgr_ms = calloc((size_t)options->repeat, sizeof(double));
  double* naive_ms = calloc((size_t)options->repeat, sizeof(double));
  bench_graph_t graph = {0};
  bench_raw_t raw = {0};
  cl_program program = NULL;
  cl_kernel kernel = NULL;
  cl_mem mems[3] = {NULL, NULL, NULL};
  hgr_status_t status = HGR_OK;
  memset(out_result, 0, sizeof(*out_result));
  if (!a || !b || !hgr_c || !naive_c || !hgr_ms || !naive_ms)
    status = HGR_STATUS(HGR_STATUS_RESOURCE_EXHAUSTED, "out of host memory");
  uint64_t seed = 1;
  for (size_t i = 0; !status && i < a_count; ++i) a[i] = next_value(&seed);
  for (size_t i = 0; !status && i < b_count; ++i) b[i] = next_value(&seed);

  if (!status) status = bench_graph_open(instance, json, options->device, &graph);
  if (!status) status = hgr_executor_set_input(graph.executor, 0, a, a_count * sizeof(float));
  if (!status) status = hgr_executor_set_input(graph.executor, 1, b, b_count * sizeof(float));
  if (!status) status = bench_raw_open(instance, options->device, &raw);
  if (!status) status = bench_raw_kernel(&raw, naive_gemm_source, "naive_gemm", &program, &kernel);
  if (!status) status = bench_raw_buffer(&raw, a, a_count, &mems[0]);
  if (!status) status = bench_raw_buffer(&raw, b, b_count, &mems[1]);
  if (!status) status = bench_raw_buffer(&raw, NULL, c_count, &mems[2]);
  cl_int ints[5] = {(cl_int)m, (cl_int)n, (cl_int)k, transposed_b ? 1 : (cl_int)n, transposed_b ? (cl_int)k : 1};
  cl_int error = CL_SUCCESS;
  for (cl_uint i = 0; !status && error == CL_SUCCESS && i < 3; ++i)
    error = clSetKernelArg(kernel, i, sizeof(cl_mem), &mems[i]);
  for (cl_uint i = 0; !status && error == CL_SUCCESS && i < 5; ++i)
    error = clSetKernelArg(kernel, 3 + i, sizeof(cl_int), &ints[i]);
  if (!status && error != CL_SUCCESS) status = bench_cl_status(error, "clSetKernelArg(naive_gemm)", options->device);

  /* The naive kernel takes the fastest of a few work-group sizes (the driver's
   * choice among them), so the ratio does not flatter hgr. The first run of each
   * compiles (PoCL builds a work-group function per local size). */
  static const size_t locals[][2] = {{0, 0}, {16, 16}, {8, 8}, {64, 1}};
  size_t global[2] = {(size_t)n, (size_t)m}, naive_global[2] = {(size_t)n, (size_t)m};
  const size_t* naive_local = NULL;
  double warm_up, best = 0;
  if (!status) status = bench_time_hgr(&graph, &warm_up);
  for (size_t c = 0; !status && c < sizeof(locals) / sizeof(locals[0]); ++c) {
    const size_t* local = locals[c][0] ? locals[c] : NULL;
    if (local && (local[0] * local[1] > raw.info->max_work_group_size || local[0] > raw.info->max_work_item_sizes[0] ||
                  local[1] > raw.info->max_work_item_sizes[1]))
      continue;
    size_t rounded[2] = {global[0], global[1]};
    for (int d = 0; local && d < 2; ++d) rounded[d] = (global[d] + local[d] - 1) / local[d] * local[d];
    status = bench_time_raw(&raw, kernel, 2, rounded, local, &warm_up);
    if (!status) status = bench_time_raw(&raw, kernel, 2, rounded, local, &warm_up);
    if (!status && (!c || warm_up < best)) {
      best = warm_up;
      naive_local = local;
      memcpy(naive_global, rounded, sizeof(rounded));
    }
  }
  for (int r = 0; !status && r < options->repeat; ++r) {
    status = bench_time_hgr(&graph, &hgr_ms[r]);
    if (!status) status = bench_time_raw(&raw, kernel, 2, naive_global, naive_local, &naive_ms[r]);
  }
  if (!status) {
    if (naive_local) snprintf(out_result->naive_local, sizeof(out_result->naive_local), "%zux%zu", naive_local[0],
                              naive_local[1]);
    else snprintf(out_result->naive_local, sizeof(out_result->naive_local), "driver's");
  }
  if (!status) status = hgr_executor_get_output(graph.executor, 0, hgr_c, c_count * sizeof(float));
  if (!status) {
    error = clEnqueueReadBuffer(raw.queue, mems[2], CL_TRUE, 0, c_count * sizeof(float), naive_c, 0, NULL, NULL);
    if (error != CL_SUCCESS) status = bench_cl_status(error, "clEnqueueReadBuffer", options->device);
  }
  if (!status) {
    out_result->op = op;
    snprintf(out_result->shape, sizeof(out_result->shape), "%lldx%lldx%lld", (long long)m, (long long)n,
             (long long)k);
    out_result->device = options->device;
    snprintf(out_result->kernel, sizeof(out_result->kernel), "%s", graph.kernel);
    out_result->flop = 2.0 * (double)m * (double)n * (double)k;
    out_result->hgr_ms = bench_median(hgr_ms, (size_t)options->repeat);
    out_result->naive_ms = bench_median(naive_ms, (size_t)options->repeat);
    double max_a = 0, max_b = 0;
    for (size_t i = 0; i < a_count; ++i) max_a = fmax(max_a, fabs(a[i]));
    for (size_t i = 0; i < b_count; ++i) max_b = fmax(max_b, fabs(b[i]));
    out_result->tolerance = 2e-5 * (double)k * max_a * max_b;
    for (size_t i = 0; i < c_count; ++i) {
      double diff = fabs((double)hgr_c[i] - (double)naive_c[i]);
      if (!(diff <= out_result->max_diff)) out_result->max_diff = diff; /* NaN sticks */
    }
    out_result->repeat = options->repeat;
  }
  for (int i = 0; i < 3; ++i)
    if (mems[i]) clReleaseMemObject(mems[i]);
  if (kernel) clReleaseKernel(kernel);
  if (program) clReleaseProgram(program);
  bench_raw_close(&raw);
  bench_graph_close(&graph);
  free(a);
  free(b);
  free(hgr_c);
  free(naive_c);
  free(hgr_ms);
  free(naive_ms);
  return status;
}

static hgr_status_t bench_matmul(hgr_instance_t* instance, const bench_options_t* options, bench_result_t* out) {
  return bench_gemm(instance, options, "matmul", false, out);
}

static hgr_status_t bench_dense(hgr_instance_t* instance, const bench_options_t* options, bench_result_t* out) {
  return bench_gemm(instance, options, "dense", true, out);
}

/* ---- main ------------------------------------------------------------------------------- */

static const struct {
  const char* name;
  bench_fn_t fn;
} benches[] = {
    {"matmul", bench_matmul},
    {"dense", bench_dense},
};
#define BENCH_COUNT (sizeof(benches) / sizeof(benches[0]))

static int usage(void) {
  fprintf(stderr,
          "usage: hgr_bench_ops [--device SPEC] [--size N] [--repeat R] [--op NAME]...\n"
          "  --device SPEC  hgr device spec (default pocl:0)\n"
          "  --size N       M = N = K for matmul and dense (default 512)\n"
          "  --repeat R     timed runs of hgr and of the naive kernel each (default 10)\n"
          "  --op NAME      op to measure, repeatable; 'all' for every one (default matmul):");
  for (size_t i = 0; i < BENCH_COUNT; ++i) fprintf(stderr, " %s", benches[i].name);
  fprintf(stderr, "\n");
  return 2;
}

int main(int argc, char** argv) {
  bench_options_t options = {"pocl:0", 512, 10};
  bool selected[BENCH_COUNT] = {false};
  bool any = false;
  for (int i = 1; i < argc; ++i) {
    if (!strcmp(argv[i], "--device") && i + 1 < argc) {
      options.device = argv[++i];
    } else if (!strcmp(argv[i], "--size") && i + 1 < argc) {
      options.size = atoll(argv[++i]);
    } else if (!strcmp(argv[i], "--repeat") && i + 1 < argc) {
      options.repeat = atoi(argv[++i]);
    } else if (!strcmp(argv[i], "--op") && i + 1 < argc) {
      const char* name = argv[++i];
      bool known = false;
      for (size_t b = 0; b < BENCH_COUNT; ++b)
        if (!strcmp(name, "all") || !strcmp(name, benches[b].name)) selected[b] = known = true;
      if (!known) {
        fprintf(stderr, "hgr_bench_ops: unknown op '%s'\n", name);
        return usage();
      }
      any = true;
    } else {
      return usage();
    }
  }
  if (options.size < 1 || options.size > 16384 || options.repeat < 1) return usage();
  if (!any) selected[0] = true;

  hgr_instance_t* instance = NULL;
  hgr_status_t status = hgr_instance_create(NULL, &instance);
  bench_result_t results[BENCH_COUNT];
  size_t result_count = 0;
  for (size_t b = 0; !status && b < BENCH_COUNT; ++b)
    if (selected[b]) status = benches[b].fn(instance, &options, &results[result_count++]);
  hgr_instance_release(instance);
  if (status) {
    char* text = hgr_status_to_string(status);
    fprintf(stderr, "hgr_bench_ops: %s\n", text ? text : "out of memory");
    free(text);
    hgr_status_free(status);
    return 1;
  }

  bool all_match = true;
  printf("| op | M x N x K | device | hgr kernel | hgr median (ms) | hgr GFLOP/s | naive local size "
         "| naive median (ms) | naive GFLOP/s | hgr / naive | max abs diff | runs |\n");
  printf("|---|---|---|---|---:|---:|---|---:|---:|---:|---:|---:|\n");
  for (size_t i = 0; i < result_count; ++i) {
    const bench_result_t* r = &results[i];
    printf("| %s | %s | %s | %s | %.3f | %.2f | %s | %.3f | %.2f | %.2fx | %.2g | %d |\n", r->op, r->shape,
           r->device, r->kernel, r->hgr_ms, r->flop / r->hgr_ms / 1e6, r->naive_local, r->naive_ms,
           r->flop / r->naive_ms / 1e6, r->naive_ms / r->hgr_ms, r->max_diff, r->repeat);
  }
  printf("\n");
  for (size_t i = 0; i < result_count; ++i) {
    const bench_result_t* r = &results[i];
    bool match = r->max_diff <= r->tolerance;
    all_match = all_match && match;
    printf("%s %s on %s: hgr %.2f GFLOP/s (%s, median %.3f ms) vs naive %.2f GFLOP/s (median %.3f ms): %.2fx; "
           "max |hgr - naive| = %.2g %s %.2g%s\n",
           r->op, r->shape, r->device, r->flop / r->hgr_ms / 1e6, r->kernel, r->hgr_ms, r->flop / r->naive_ms / 1e6,
           r->naive_ms, r->naive_ms / r->hgr_ms, r->max_diff, match ? "<=" : ">", r->tolerance,
           match ? "" : "  RESULTS DIFFER");
  }
  return all_match ? 0 : 1;
}
