/* conv2d speed: hgr_bench_conv [--device SPEC] [--repeat N] [--channels C] [--size S] [--batch N]
 *
 * One conv2d node (3x3, C -> C channels, S x S, padding 1, stride 1; default the
 * 64 -> 64, 56 x 56, batch 1 layer) run through the hgr executor, against raw
 * OpenCL running a naive kernel (one work-item per output, below) on the same
 * device in the same process. Inputs are set once; each timed hgr run is
 * hgr_executor_run + hgr_executor_wait, each naive run clEnqueueNDRangeKernel +
 * clFinish, alternating, after one untimed warm-up run each (program build,
 * first-launch code generation). Prints the median of N runs (default 10) as a markdown row and a
 * readable line, with the tile the plan chose for the device's limits, and checks
 * that both results agree (max abs diff), so a wrong fast kernel cannot pass:
 * exit 1 when they do not. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <CL/cl.h>

#include "bench_util.h"
#include "hgr/hgr.h"
#include "ops.h"

static const char naive_source[] =
    "__kernel void naive_conv2d(__global const float* x, __global const float* w, __global float* y,\n"
    "                           int C, int H, int W, int K, int OH, int OW, int KH, int KW, int pad) {\n"
    "  int ow = get_global_id(0), oh = get_global_id(1), nk = get_global_id(2);\n"
    "  if (ow >= OW || oh >= OH) return;\n"
    "  int n = nk / K, k = nk - n * K;\n"
    "  float acc = 0.0f;\n"
    "  for (int c = 0; c < C; ++c)\n"
    "    for (int r = 0; r < KH; ++r) {\n"
    "      int ih = oh - pad + r;\n"
    "      if (ih < 0 || ih >= H) continue;\n"
    "      for (int s = 0; s < KW; ++s) {\n"
    "        int iw = ow - pad + s;\n"
    "        if (iw >= 0 && iw < W) acc += x[((n * C + c) * H + ih) * W + iw] * w[((k * C + c) * KH + r) * KW + s];\n"
    "      }\n"
    "    }\n"
    "  y[((n * K + k) * OH + oh) * OW + ow] = acc;\n"
    "}\n";

static int fail_status(hgr_status_t status) {
  char* text = hgr_status_to_string(status);
  fprintf(stderr, "hgr_bench_conv: %s\n", text ? text : "out of memory");
  free(text);
  hgr_status_free(status);
  return 1;
}

#define CL_CHECK(call, what)                                                     \
  do {                                                                           \
    cl_int error_ = (call);                                                      \
    if (error_ != CL_SUCCESS) {                                                  \
      fprintf(stderr, "hgr_bench_conv: %s failed: OpenCL error %d\n", what, error_); \
      goto cleanup;                                                              \
    }                                                                            \
  } while (0)

typedef struct naive_t {
  cl_context context;
  cl_command_queue queue;
  cl_program program;
  cl_kernel kernel;
  cl_mem x, w, y;
  size_t global[3];
  size_t y_bytes;
} naive_t;

static void naive_release(naive_t* n) {
  if (n->x) clReleaseMemObject(n->x);
  if (n->w) clReleaseMemObject(n->w);
  if (n->y) clReleaseMemObject(n->y);
  if (n->kernel) clReleaseKernel(n->kernel);
  if (n->program) clReleaseProgram(n->program);
  if (n->queue) clReleaseCommandQueue(n->queue);
  if (n->context) clReleaseContext(n->context);
  memset(n, 0, sizeof(*n));
}

/* Builds the naive kernel in a context of its own on the device hgr knows as info,
 * with x and w uploaded; dims = N, C, H, W, K, OH, OW. 0 on success. */
static int naive_setup(const hgr_device_info_t* info, const float* x, const float* w, const int dims[7], naive_t* n) {
  cl_platform_id platforms[64];
  cl_uint platform_count = 0;
  cl_device_id devices[64];
  cl_uint device_count = 0;
  cl_int error = CL_SUCCESS;
  CL_CHECK(clGetPlatformIDs(64, platforms, &platform_count), "clGetPlatformIDs");
  if (info->platform_index >= platform_count) {
    fprintf(stderr, "hgr_bench_conv: platform %zu of %s is gone\n", info->platform_index, info->spec);
    goto cleanup;
  }
  CL_CHECK(clGetDeviceIDs(platforms[info->platform_index], CL_DEVICE_TYPE_ALL, 64, devices, &device_count),
           "clGetDeviceIDs");
  if (info->index_in_platform >= device_count) {
    fprintf(stderr, "hgr_bench_conv: device %zu of %s is gone\n", info->index_in_platform, info->spec);
    goto cleanup;
  }
  cl_device_id device = devices[info->index_in_platform];
  n->context = clCreateContext(NULL, 1, &device, NULL, NULL, &error);
  CL_CHECK(error, "clCreateContext");
  n->queue = clCreateCommandQueue(n->context, device, 0, &error);
  CL_CHECK(error, "clCreateCommandQueue");
  const char* source = naive_source;
  n->program = clCreateProgramWithSource(n->context, 1, &source, NULL, &error);
  CL_CHECK(error, "clCreateProgramWithSource");
  CL_CHECK(clBuildProgram(n->program, 1, &device, "", NULL, NULL), "clBuildProgram(naive_conv2d)");
  n->kernel = clCreateKernel(n->program, "naive_conv2d", &error);
  CL_CHECK(error, "clCreateKernel(naive_conv2d)");
  const int batch = dims[0], c = dims[1], h = dims[2], wd = dims[3], k = dims[4], oh = dims[5], ow = dims[6];
  size_t x_bytes = (size_t)batch * c * h * wd * sizeof(float), w_bytes = (size_t)k * c * 9 * sizeof(float);
  n->y_bytes = (size_t)batch * k * oh * ow * sizeof(float);
  n->x = clCreateBuffer(n->context, CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR, x_bytes, (void*)x, &error);
  CL_CHECK(error, "clCreateBuffer(x)");
  n->w = clCreateBuffer(n->context, CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR, w_bytes, (void*)w, &error);
  CL_CHECK(error, "clCreateBuffer(w)");
  n->y = clCreateBuffer(n->context, CL_MEM_WRITE_ONLY, n->y_bytes, NULL, &error);
  CL_CHECK(error, "clCreateBuffer(y)");
  CL_CHECK(clSetKernelArg(n->kernel, 0, sizeof(cl_mem), &n->x), "clSetKernelArg");
  CL_CHECK(clSetKernelArg(n->kernel, 1, sizeof(cl_mem), &n->w), "clSetKernelArg");
  CL_CHECK(clSetKernelArg(n->kernel, 2, sizeof(cl_mem), &n->y), "clSetKernelArg");
  const int args[9] = {c, h, wd, k, oh, ow, 3, 3, 1};
  for (int a = 0; a < 9; ++a)
    CL_CHECK(clSetKernelArg(n->kernel, 3 + (cl_uint)a, sizeof(int), &args[a]), "clSetKernelArg");
  n->global[0] = (size_t)ow;
  n->global[1] = (size_t)oh;
  n->global[2] = (size_t)batch * k;
  return 0;
cleanup:
  naive_release(n);
  return 1;
}

/* One naive run: enqueue + clFinish. 0 on success. */
static int naive_run(naive_t* n) {
  CL_CHECK(clEnqueueNDRangeKernel(n->queue, n->kernel, 3, NULL, n->global, NULL, 0, NULL, NULL),
           "clEnqueueNDRangeKernel(naive_conv2d)");
  CL_CHECK(clFinish(n->queue), "clFinish");
  return 0;
cleanup:
  return 1;
}

static int naive_read(naive_t* n, float* y) {
  CL_CHECK(clEnqueueReadBuffer(n->queue, n->y, CL_TRUE, 0, n->y_bytes, y, 0, NULL, NULL), "clEnqueueReadBuffer(y)");
  return 0;
cleanup:
  return 1;
}

/* The tile the plan chooses for the device's limits (what the executor plans). */
static void describe_plan(const hgr_graph_t* graph, const hgr_device_info_t* info, char* text, size_t capacity) {
  hgr__limits_t limits = {info->max_work_group_size,
                          {info->max_work_item_sizes[0], info->max_work_item_sizes[1], info->max_work_item_sizes[2]},
                          info->local_mem_bytes, info->native_float_width};
  hgr__op_ctx_t ctx;
  hgr_status_t status = hgr__op_plan(hgr_allocator_system(), graph, 2, NULL, &limits, &ctx);
  if (status) {
    hgr_status_free(status);
    snprintf(text, capacity, "?");
    return;
  }
  const hgr__launch_plan_t* l = &ctx.launches[0];
  if (l->launch.work_dim == 3)
    snprintf(text, capacity, "%s, work-group %zux%zux%zu, %d input channels per chunk", l->kernel, l->launch.local[0],
             l->launch.local[1], l->launch.local[2], l->meta_count > 17 ? l->meta[17] : 0);
  else snprintf(text, capacity, "%s", l->kernel);
  hgr__op_ctx_free(&ctx);
}

static void usage(void) {
  fprintf(stderr, "usage: hgr_bench_conv [--device SPEC] [--repeat N] [--channels C] [--size S] [--batch N]\n");
}

int main(int argc, char** argv) {
  const char* spec = "pocl:0";
  int repeat = 10, channels = 64, size = 56, batch = 1;
  for (int i = 1; i < argc; ++i) {
    if (i + 1 < argc && !strcmp(argv[i], "--device")) spec = argv[++i];
    else if (i + 1 < argc && !strcmp(argv[i], "--repeat")) repeat = atoi(argv[++i]);
    else if (i + 1 < argc && !strcmp(argv[i], "--channels")) channels = atoi(argv[++i]);
    else if (i + 1 < argc && !strcmp(argv[i], "--size")) size = atoi(argv[++i]);
    else if (i + 1 < argc && !strcmp(argv[i], "--batch")) batch = atoi(argv[++i]);
    else {
      usage();
      return 2;
    }
  }
  if (repeat < 1 || channels < 1 || size < 1 || batch < 1 || channels > 4096 || size > 4096 || batch > 256) {
    usage();
    return 2;
  }
  const int c = channels, k = channels, h = size, wd = size, oh = size, ow = size;
  const size_t x_count = (size_t)batch * c * h * wd, w_count = (size_t)k * c * 9, y_count = (size_t)batch * k * oh * ow;
  char json[2048];
  snprintf(json, sizeof(json),
           "{\"nodes\": [{\"op\": \"null\", \"name\": \"x\", \"inputs\": []}, {\"op\": \"null\", \"name\": \"w\", "
           "\"inputs\": []}, {\"op\": \"tvm_op\", \"name\": \"conv\", \"attrs\": {\"func_name\": \"conv2d\", "
           "\"num_inputs\": \"2\", \"num_outputs\": \"1\", \"flatten_data\": \"0\", \"padding\": \"[1, 1]\", "
           "\"kernel_size\": \"[3, 3]\", \"channels\": \"%d\"}, \"inputs\": [[0, 0, 0], [1, 0, 0]]}], "
           "\"arg_nodes\": [0, 1], \"node_row_ptr\": [0, 1, 2, 3], \"heads\": [[2, 0, 0]], \"attrs\": "
           "{\"storage_id\": [\"list_int\", [0, 1, 2]], \"shape\": [\"list_shape\", [[%d, %d, %d, %d], "
           "[%d, %d, 3, 3], [%d, %d, %d, %d]]], \"dltype\": [\"list_str\", [\"float32\", \"float32\", \"float32\"]]}}",
           k, batch, c, h, wd, k, c, batch, k, oh, ow);

  float* x = malloc(x_count * sizeof(float));
  float* w = malloc(w_count * sizeof(float));
  float* y_hgr = malloc(y_count * sizeof(float));
  float* y_naive = malloc(y_count * sizeof(float));
  double* hgr_times = calloc((size_t)repeat, sizeof(double));
  double* naive_times = calloc((size_t)repeat, sizeof(double));
  hgr_instance_t* instance = NULL;
  hgr_graph_t* graph = NULL;
  hgr_executor_t* executor = NULL;
  naive_t naive = {0};
  hgr_status_t status = HGR_OK;
  int result = 1;
  if (!x || !w || !y_hgr || !y_naive || !hgr_times || !naive_times) {
    status = HGR_STATUS(HGR_STATUS_RESOURCE_EXHAUSTED, "out of host memory");
    goto cleanup;
  }
  uint64_t state = 0x9e3779b97f4a7c15ull;
  for (size_t i = 0; i < x_count + w_count; ++i) {
    state ^= state << 13;
    state ^= state >> 7;
    state ^= state << 17;
    float value = (float)((state >> 40) * (1.0 / 16777216.0)) * 2.0f - 1.0f;
    if (i < x_count) x[i] = value;
    else w[i - x_count] = value;
  }

  size_t device_index = 0;
  if ((status = hgr_instance_create(NULL, &instance)) ||
      (status = hgr_instance_find_device(instance, spec, &device_index)) ||
      (status = hgr_graph_load_json(json, strlen(json), &graph)))
    goto cleanup;
  const hgr_device_info_t* info = hgr_instance_device(instance, device_index);
  hgr_device_binding_t binding = {0, spec};
  hgr_executor_options_t options;
  hgr_executor_options_init(&options);
  options.bindings = &binding;
  options.binding_count = 1;
  if ((status = hgr_executor_create(instance, graph, &options, &executor)) ||
      (status = hgr_executor_set_input(executor, 0, x, x_count * sizeof(float))) ||
      (status = hgr_executor_set_input(executor, 1, w, w_count * sizeof(float))))
    goto cleanup;
  const int dims[7] = {batch, c, h, wd, k, oh, ow};
  if (naive_setup(info, x, w, dims, &naive)) goto cleanup;
  /* hgr and naive runs alternate, so both see the same machine (load, clocks). */
  for (int r = -1; r < repeat; ++r) {
    double start = (bench_now_ns() / 1e6);
    if ((status = hgr_executor_run(executor)) || (status = hgr_executor_wait(executor))) goto cleanup;
    double middle = (bench_now_ns() / 1e6);
    if (naive_run(&naive)) goto cleanup;
    if (r >= 0) {
      hgr_times[r] = middle - start;
      naive_times[r] = (bench_now_ns() / 1e6) - middle;
    }
  }
  if ((status = hgr_executor_get_output(executor, 0, y_hgr, y_count * sizeof(float)))) goto cleanup;
  if (naive_read(&naive, y_naive)) goto cleanup;

  double max_diff = 0, max_abs = 0;
  for (size_t i = 0; i < y_count; ++i) {
    double diff = fabs((double)y_hgr[i] - y_naive[i]);
    if (!(diff <= max_diff)) max_diff = diff; /* NaN counts as the largest */
    if (fabs(y_naive[i]) > max_abs) max_abs = fabs(y_naive[i]);
  }
  /* Both sum the same products in float32 in different orders: they differ by a
   * few units in the last place of outputs of magnitude about max_abs. */
  bool agree = max_diff <= 1e-5 * (max_abs > 1 ? max_abs : 1) * sqrt((double)c * 9);
  qsort(hgr_times, (size_t)repeat, sizeof(double), bench_compare_doubles);
  qsort(naive_times, (size_t)repeat, sizeof(double), bench_compare_doubles);
  double hgr_ms = hgr_times[repeat / 2], naive_ms = naive_times[repeat / 2];
  double gflop = 2.0 * (double)y_count * c * 9 / 1e9;
  char plan[256];
  describe_plan(graph, info, plan, sizeof(plan));
  printf("| device | layer | naive (ms) | naive GFLOP/s | hgr (ms) | hgr GFLOP/s | hgr / naive | max abs diff |\n");
  printf("|---|---|---:|---:|---:|---:|---:|---:|\n");
  printf("| %s | conv2d 3x3 %d->%d %dx%d batch %d | %.2f | %.2f | %.2f | %.2f | %.2fx | %.2g |\n", info->spec, c, k, h,
         wd, batch, naive_ms, gflop / (naive_ms / 1e3), hgr_ms, gflop / (hgr_ms / 1e3), naive_ms / hgr_ms, max_diff);
  printf("\n%s (%s): conv2d 3x3 %d -> %d channels, %dx%d, batch %d (%.3f GFLOP), median of %d runs:\n"
         "  hgr   %8.2f ms  %6.2f GFLOP/s  (%s)\n"
         "  naive %8.2f ms  %6.2f GFLOP/s  (raw OpenCL, one work-item per output)\n"
         "  hgr is %.2fx the naive kernel; results %s (max abs diff %.3g, outputs up to %.3g)\n",
         info->spec, info->name, c, k, h, wd, batch, gflop, repeat, hgr_ms, gflop / (hgr_ms / 1e3), plan, naive_ms,
         gflop / (naive_ms / 1e3), naive_ms / hgr_ms, agree ? "agree" : "DIFFER", max_diff, max_abs);
  result = agree ? 0 : 1;

cleanup:
  naive_release(&naive);
  hgr_executor_release(executor);
  hgr_graph_release(graph);
  hgr_instance_release(instance);
  free(x);
  free(w);
  free(y_hgr);
  free(y_naive);
  free(hgr_times);
  free(naive_times);
  if (status) return fail_status(status);
  return result;
}
