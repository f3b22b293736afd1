/* hgr_bench_gemm: GEMM tile variants of kernels/linalg.cl against each other on one
 * shape, launched directly (no executor), interleaved run by run so that every
 * variant sees the same machine:
 *
 *   hgr_bench_gemm [-d device] [-r repeats] [-t | -p] [-c copies] M N K VARIANT...
 *
 * VARIANT is a kernel name without "hgr_gemm_" (8x16_4x16_k32, 1x16_4x4_k1_dot,
 * 1x16_6x16_k1_pack: the names `hgr tune` prints; 1x8_8x32_k1_rows: a direct
 * variant's rows-first order); its work-group and NDRange follow from the name as
 * the plan computes them (runtime/ops/ops_linalg.c). C [M, N] = A [M, K] x B^T + bias,
 * with B stored [N, K] (dense's weights, K contiguous), or with -t stored [K, N]
 * (matmul's), or with -p in panels of 32 columns, [ceil(N / 32), K, 32] (matmul's
 * b_panel, as the weight packing pass stores constant weights). With -c, each
 * round runs the variant on `copies` copies of B in turn and times one run: B then
 * comes from memory, not from the cache, as a model's weights do (a model reads
 * each layer's once per run); the time is the mean over the copies. Each variant runs once untimed (PoCL compiles its work-group function
 * at the first launch) and is checked against a double-precision reference
 * (max |error| within 1e-5 * K of values in [-0.5, 0.5]); then `repeats` rounds
 * (default 21) each time every variant once, enqueue to completion. Prints one line
 * per variant: median and best wall time, GFLOP/s, and the median CPU time of the
 * process per run with GFLOP per CPU-second (what PoCL's pthread threads spend,
 * which other load on the machine disturbs far less than wall time).
 * Device specs as the raw baselines' (bench/raw_cl.h: pocl:0, rusticl:0); only the
 * kernel source comes from hgr. bench/gemm_dot.sh runs the shapes of docs/ops.md's
 * table. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bench_util.h"
#include "ops.h"
#include "raw_cl.h"

/* CPU time of the whole process (the driver's threads included) in nanoseconds. */
static double process_cpu_ns(void) {
  struct timespec t;
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
  return (double)t.tv_sec * 1e9 + (double)t.tv_nsec;
}

static void fail_cl(cl_int error, const char* what) {
  if (error != CL_SUCCESS) raw_check(error, what, __FILE__, __LINE__);
}

typedef struct variant_t {
  const char* name;
  cl_kernel kernel;
  size_t global[3], local[3];
  double* wall_us;
  double* cpu_us;
} variant_t;

static double uniform(unsigned* state) {
  *state = *state * 1103515245u + 12345u;
  return (double)(*state >> 8 & 0xffff) / 65536.0 - 0.5;
}

int main(int argc, char** argv) {
  const char* spec = "pocl:0";
  int repeats = 21, option;
  bool b_rows = false, panels = false; /* -t: B stored [K, N]; -p: in panels of 32 columns */
  int copies = 1;
  while ((option = getopt(argc, argv, "d:r:tpc:")) != -1) {
    if (option == 'd') spec = optarg;
    else if (option == 'r') repeats = atoi(optarg);
    else if (option == 't') b_rows = true;
    else if (option == 'p') panels = b_rows = true;
    else if (option == 'c') copies = atoi(optarg);
    else break;
  }
  if (argc - optind < 4 || repeats < 1 || repeats > 100000 || copies < 1 || copies > 256) {
    fprintf(stderr, "usage: %s [-d device] [-r repeats] [-t | -p] [-c copies (1-256)] M N K VARIANT...\n", argv[0]);
    return 2;
  }
  int m = atoi(argv[optind]), n = atoi(argv[optind + 1]), k = atoi(argv[optind + 2]);
  if (m < 1 || n < 1 || k < 1 || (int64_t)m * k > (1 << 28) || (int64_t)n * k > (1 << 28) ||
      (int64_t)m * n > (1 << 28)) {
    fprintf(stderr, "hgr_bench_gemm: M, N and K must be positive and their products at most 2^28\n");
    return 2;
  }
  int count = argc - optind - 3;
  raw_device_t device = raw_find_device(spec);
  cl_context context = raw_create_context(&device, 1);
  cl_command_queue queue = raw_create_queue(context, &device);
  size_t length;
  const char* source = hgr__kernel_source("linalg", &length);
  cl_int error;
  cl_program program = clCreateProgramWithSource(context, 1, &source, &length, &error);
  fail_cl(error, "clCreateProgramWithSource(linalg)");
  fail_cl(clBuildProgram(program, 1, &device.device, "", NULL, NULL), "clBuildProgram(linalg)");

  size_t a_count = (size_t)m * k, b_count = (size_t)n * k, c_count = (size_t)m * n;
  float* a = malloc(a_count * sizeof(float));
  float* b = malloc(b_count * sizeof(float));
  float* bias = malloc((size_t)n * sizeof(float));
  float* c = malloc(c_count * sizeof(float));
  double* want = malloc(c_count * sizeof(double));
  variant_t* variants = calloc((size_t)count, sizeof(variant_t));
  if (!a || !b || !bias || !c || !want || !variants) {
    fprintf(stderr, "hgr_bench_gemm: out of memory\n");
    return 1;
  }
  unsigned seed = 1;
  for (size_t i = 0; i < a_count; ++i) a[i] = (float)uniform(&seed);
  for (size_t i = 0; i < b_count; ++i) b[i] = (float)uniform(&seed);
  for (int j = 0; j < n; ++j) bias[j] = (float)uniform(&seed);
  for (int i = 0; i < m; ++i)
    for (int j = 0; j < n; ++j) {
      double sum = bias[j];
      for (int l = 0; l < k; ++l)
        sum += (double)a[(size_t)i * k + l] * (b_rows ? b[(size_t)l * n + j] : b[(size_t)j * k + l]);
      want[(size_t)i * n + j] = sum;
    }
  /* with -p, B [K, N] in panels: b_panels[q][l][c] = B[l][q * 32 + c], zeros past n */
  size_t panel_count = (size_t)(n + 31) / 32, stored_b = panels ? panel_count * (size_t)k * 32 : b_count;
  float* b_stored = panels ? calloc(stored_b, sizeof(float)) : b;
  if (!b_stored) {
    fprintf(stderr, "hgr_bench_gemm: out of memory\n");
    return 1;
  }
  for (size_t q = 0; panels && q < panel_count; ++q)
    for (int l = 0; l < k; ++l)
      for (int col = 0; col < 32 && (int)q * 32 + col < n; ++col)
        b_stored[(q * (size_t)k + (size_t)l) * 32 + (size_t)col] = b[(size_t)l * n + q * 32 + (size_t)col];
  cl_mem mems[4], b_copies[256];
  mems[0] = clCreateBuffer(context, CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR, a_count * 4, a, &error);
  fail_cl(error, "clCreateBuffer(a)");
  for (int i = 0; i < copies; ++i) {
    b_copies[i] = clCreateBuffer(context, CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR, stored_b * 4, b_stored, &error);
    fail_cl(error, "clCreateBuffer(b)");
  }
  mems[1] = b_copies[0];
  mems[2] = clCreateBuffer(context, CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR, (size_t)n * 4, bias, &error);
  fail_cl(error, "clCreateBuffer(bias)");
  mems[3] = clCreateBuffer(context, CL_MEM_READ_WRITE, c_count * 4, NULL, &error);
  fail_cl(error, "clCreateBuffer(c)");
  /* the GEMM kernels' ints after the buffers: m n k, A's strides, B's, bias per
   * column, no activation, then b_wrap (n: none) and its stride */
  cl_int ints[11] = {m, n, k, 0, k, 1, 0, panels ? 32 : b_rows ? n : 1, b_rows ? 1 : k, 1, 0};
  cl_int wrap[2] = {panels && n > 32 ? 32 : n, panels && n > 32 ? 32 * k : 0};
  cl_float zero = 0.0f;
  int failed = 0;
  for (int v = 0; v < count; ++v) {
    variant_t* var = &variants[v];
    var->name = argv[optind + 3 + v];
    int tx, ty, rm, rn, bk;
    char kernel_name[96];
    snprintf(kernel_name, sizeof(kernel_name), "hgr_gemm_%s", var->name);
    if (sscanf(var->name, "%dx%d_%dx%d_k%d", &tx, &ty, &rm, &rn, &bk) != 5) {
      fprintf(stderr, "hgr_bench_gemm: '%s' is not a GEMM variant's name (TXxTY_RMxRN_kBK[_dot])\n", var->name);
      return 2;
    }
    var->kernel = clCreateKernel(program, kernel_name, &error);
    fail_cl(error, kernel_name);
    for (cl_uint i = 0; i < 4; ++i) fail_cl(clSetKernelArg(var->kernel, i, sizeof(cl_mem), &mems[i]), "clSetKernelArg");
    for (cl_uint i = 0; i < 11; ++i) fail_cl(clSetKernelArg(var->kernel, 4 + i, sizeof(cl_int), &ints[i]), "clSetKernelArg");
    for (cl_uint i = 0; i < 3; ++i) fail_cl(clSetKernelArg(var->kernel, 15 + i, sizeof(cl_float), &zero), "clSetKernelArg");
    for (cl_uint i = 0; i < 2; ++i) fail_cl(clSetKernelArg(var->kernel, 18 + i, sizeof(cl_int), &wrap[i]), "clSetKernelArg");
    /* C stored as it is: kernels/out_layout.h's 7 ints, all 0 */
    const cl_int plain = 0;
    for (cl_uint i = 0; i < 7; ++i) fail_cl(clSetKernelArg(var->kernel, 20 + i, sizeof(cl_int), &plain), "clSetKernelArg");
    /* one output, no segments: HGR_GEMM_SEG_PARAMS's two buffers (C again) and 9 ints, all 0 */
    for (cl_uint i = 0; i < 2; ++i) fail_cl(clSetKernelArg(var->kernel, 27 + i, sizeof(cl_mem), &mems[3]), "clSetKernelArg");
    for (cl_uint i = 0; i < 9; ++i) fail_cl(clSetKernelArg(var->kernel, 29 + i, sizeof(cl_int), &plain), "clSetKernelArg");
    /* the packed variant's strip of B: k * RN floats of local memory, as the plan's */
    if (strstr(var->name, "_pack"))
      fail_cl(clSetKernelArg(var->kernel, 38, (size_t)k * (size_t)rn * sizeof(float), NULL), "clSetKernelArg(pack)");
    var->global[0] = (size_t)((n + tx * rn - 1) / (tx * rn) * tx);
    var->global[1] = (size_t)((m + ty * rm - 1) / (ty * rm) * ty);
    var->global[2] = 1;
    var->local[0] = (size_t)tx;
    var->local[1] = (size_t)ty;
    var->local[2] = 1;
    if (strstr(var->name, "_rows")) { /* rows first: the rows' blocks along the first dimension, as the plan's */
      size_t columns = var->global[0];
      var->global[0] = var->global[1];
      var->global[1] = columns;
      var->local[0] = (size_t)ty;
      var->local[1] = (size_t)tx;
    }
    var->wall_us = malloc((size_t)repeats * sizeof(double));
    var->cpu_us = malloc((size_t)repeats * sizeof(double));
    if (!var->wall_us || !var->cpu_us) {
      fprintf(stderr, "hgr_bench_gemm: out of memory\n");
      return 1;
    }
    fail_cl(clEnqueueFillBuffer(queue, mems[3], &zero, sizeof(zero), 0, c_count * 4, 0, NULL, NULL),
            "clEnqueueFillBuffer(c)");
    fail_cl(clEnqueueNDRangeKernel(queue, var->kernel, 3, NULL, var->global, var->local, 0, NULL, NULL), var->name);
    fail_cl(clEnqueueReadBuffer(queue, mems[3], CL_TRUE, 0, c_count * 4, c, 0, NULL, NULL), "clEnqueueReadBuffer(c)");
    double max_error = 0;
    for (size_t e = 0; e < c_count; ++e) max_error = fmax(max_error, fabs(c[e] - want[e]));
    if (!(max_error <= 1e-5 * k)) {
      fprintf(stderr, "hgr_bench_gemm: %s on %s: max |error| %g, above %g\n", var->name, spec, max_error, 1e-5 * k);
      failed = 1;
    }
  }
  for (int r = 0; r < repeats; ++r)
    for (int v = 0; v < count; ++v) {
      variant_t* var = &variants[v];
      double wall = bench_now_ns(), cpu = process_cpu_ns();
      for (int i = 0; i < copies; ++i) {
        cl_event done;
        fail_cl(clSetKernelArg(var->kernel, 1, sizeof(cl_mem), &b_copies[i]), "clSetKernelArg(b)");
        fail_cl(clEnqueueNDRangeKernel(queue, var->kernel, 3, NULL, var->global, var->local, 0, NULL, &done),
                var->name);
        fail_cl(clWaitForEvents(1, &done), "clWaitForEvents");
        clReleaseEvent(done);
      }
      var->wall_us[r] = (bench_now_ns() - wall) * 1e-3 / copies;
      var->cpu_us[r] = (process_cpu_ns() - cpu) * 1e-3 / copies;
    }
  double flop = 2.0 * m * n * k;
  printf("gemm %dx%dx%d, B stored %s, on %s, %d rounds%s:\n", m, n, k,
         panels ? "in panels of 32" : b_rows ? "[K, N]" : "[N, K]", spec, repeats,
         copies > 1 ? ", each the mean over copies of B from memory" : "");
  for (int v = 0; v < count; ++v) {
    variant_t* var = &variants[v];
    double wall = bench_median(var->wall_us, (size_t)repeats), cpu = bench_median(var->cpu_us, (size_t)repeats);
    double best = var->wall_us[0];
    for (int r = 1; r < repeats; ++r) best = fmin(best, var->wall_us[r]);
    printf("  %-20s %10.1f us (best %10.1f) %7.1f GFLOP/s   cpu %10.1f us %7.1f GFLOP/cpu-s\n", var->name, wall, best,
           flop / wall * 1e-3, cpu, flop / cpu * 1e-3);
    clReleaseKernel(var->kernel);
    free(var->wall_us);
    free(var->cpu_us);
  }
  for (int i = 0; i < copies; ++i) clReleaseMemObject(b_copies[i]);
  for (int i = 0; i < 4; ++i)
    if (i != 1) clReleaseMemObject(mems[i]);
  if (panels) free(b_stored);
  clReleaseProgram(program);
  clReleaseCommandQueue(queue);
  clReleaseContext(context);
  free(variants);
  free(a);
  free(b);
  free(bias);
  free(c);
  free(want);
  return failed;
}
