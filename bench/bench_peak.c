/* hgr_bench_peak: the float32 FMA peak of an OpenCL device, the ceiling that
 * bench/conv_layers.sh measures the conv layers against. It runs bench/peak.cl's
 * hgr_peak_fma4, 8 and 16 (8 independent fma chains on float4s, float8s, float16s)
 * over enough work-items for every compute unit, `repeats` times each, and prints
 * the fastest width's median GFLOP/s (wall time from enqueue to completion of each
 * run), on one line:
 *   peak <device> <GFLOP/s> GFLOP/s (median of R; best ...; per CPU-second ...; floatW
 *   vectors, the fastest of float4 ..., float8 ..., float16 ...)
 * With -i a second line gives the rate of 8-bit products accumulated in 32 bits
 * (hgr_peak_imad4, 8 and 16: an integer GEMM's inner loop), in the same form, with
 * the float peak's FMAs per second beside it (issue 38: what int8 can gain):
 *   int8 products <device> <G/s> G products/s (...; intW vectors, the fastest of ...;
 *   against <G/s> G FMA/s of float32)
 * The CPU-second figure means something for CPU drivers only (PoCL pthread), whose
 * threads are the process's.
 *
 *   hgr_bench_peak [-d device] [-r repeats] [-i]    (defaults pocl:0, 7)
 *
 * Only the OpenCL API (bench/raw_cl.c), no hgr code: it measures the driver and
 * the machine. */
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bench_util.h"
#include "raw_cl.h"

#ifndef HGR_BENCH_PEAK_FILE
#error "HGR_BENCH_PEAK_FILE must name bench/peak.cl"
#endif

/* CPU time of the whole process (the driver's threads included) in nanoseconds. */
static double process_cpu_ns(void) {
  struct timespec t;
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
  return (double)t.tv_sec * 1e9 + (double)t.tv_nsec;
}

/* What a peak kernel computes: its name's prefix (the width follows), the
 * operations per iteration per vector lane (8 chains: an fma is 2 FLOP, a product
 * added is counted as 1), and whether it reads a table of 64 charW (argument 1). */
typedef struct peak_kind_t {
  const char* prefix;
  int ops_per_lane;
  bool table;
} peak_kind_t;

static const peak_kind_t fma_kind = {"hgr_peak_fma", 2 * 8, false};
static const peak_kind_t imad_kind = {"hgr_peak_imad", 8, true};

/* One width's figures: median and best wall G operations/s over the repeats,
 * operations per CPU-second, and the iterations a run took. */
typedef struct width_run_t {
  int width, iterations;
  double median, best, per_cpu;
} width_run_t;

/* Runs kind's kernel at width over items work-items: a first run compiles it (PoCL
 * builds its work-group function at the first enqueue); then the iteration count
 * grows until one run takes 100 ms; then `repeats` timed runs. */
static width_run_t run_width(cl_context context, cl_command_queue queue, cl_program program,
                             const peak_kind_t* kind, int width, size_t items, int repeats, double* rates) {
  char name[32];
  snprintf(name, sizeof(name), "%s%d", kind->prefix, width);
  cl_int error;
  cl_kernel kernel = clCreateKernel(program, name, &error);
  RAW_CHECK(error);
  cl_mem out = clCreateBuffer(context, CL_MEM_WRITE_ONLY, items * sizeof(float), NULL, &error);
  RAW_CHECK(error);
  cl_mem table = NULL;
  int arg = 0;
  RAW_CHECK(clSetKernelArg(kernel, arg++, sizeof(out), &out));
  if (kind->table) {
    signed char values[64 * 16];
    for (size_t i = 0; i < sizeof(values); ++i) values[i] = (signed char)(i * 37 + 11);
    table = clCreateBuffer(context, CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR, (size_t)64 * width, values, &error);
    RAW_CHECK(error);
    RAW_CHECK(clSetKernelArg(kernel, arg++, sizeof(table), &table));
  }
  int iterations_arg = arg++;
  if (kind->table) {
    int seed = 1;
    RAW_CHECK(clSetKernelArg(kernel, arg, sizeof(seed), &seed));
  } else {
    float seed = 1.0f;
    RAW_CHECK(clSetKernelArg(kernel, arg, sizeof(seed), &seed));
  }
  int iterations = 16;
  for (int first = 1;; first = 0) {
    RAW_CHECK(clSetKernelArg(kernel, (cl_uint)iterations_arg, sizeof(iterations), &iterations));
    cl_event done;
    double start = bench_now_ns();
    RAW_CHECK(clEnqueueNDRangeKernel(queue, kernel, 1, NULL, &items, NULL, 0, NULL, &done));
    raw_wait_release(done);
    double seconds = (bench_now_ns() - start) * 1e-9;
    if (!first && (seconds >= 0.1 || iterations > (1 << 24))) break;
    if (!first) iterations *= 2;
  }
  double ops = (double)kind->ops_per_lane * width * (double)iterations * (double)items;
  double cpu_start = process_cpu_ns();
  for (int r = 0; r < repeats; ++r) {
    cl_event done;
    double start = bench_now_ns();
    RAW_CHECK(clEnqueueNDRangeKernel(queue, kernel, 1, NULL, &items, NULL, 0, NULL, &done));
    raw_wait_release(done);
    rates[r] = ops / (bench_now_ns() - start);
  }
  /* A CPU driver's threads belong to this process: operations per CPU-second times
   * the compute units is the peak of a quiet machine, which other load on a shared
   * one disturbs far less than wall time. */
  width_run_t run = {width, iterations, bench_median(rates, (size_t)repeats), 0,
                     ops * repeats / (process_cpu_ns() - cpu_start)};
  for (int r = 0; r < repeats; ++r) run.best = rates[r] > run.best ? rates[r] : run.best;
  if (table) clReleaseMemObject(table);
  clReleaseMemObject(out);
  clReleaseKernel(kernel);
  return run;
}

/* Every width of kind; the fastest by median, and the widths' medians as text
 * ("<type>4 X, <type>8 Y, <type>16 Z") in others. */
static width_run_t run_widths(cl_context context, cl_command_queue queue, cl_program program,
                              const peak_kind_t* kind, const char* type, size_t items, int repeats, double* rates,
                              char* others, size_t others_size) {
  static const int widths[] = {4, 8, 16};
  width_run_t fastest = {0};
  others[0] = '\0';
  for (size_t w = 0; w < sizeof(widths) / sizeof(widths[0]); ++w) {
    width_run_t run = run_width(context, queue, program, kind, widths[w], items, repeats, rates);
    size_t used = strlen(others);
    snprintf(others + used, others_size - used, "%s%s%d %.1f", used ? ", " : "", type, run.width, run.median);
    if (run.median > fastest.median) fastest = run;
  }
  return fastest;
}

int main(int argc, char** argv) {
  const char* spec = "pocl:0";
  int repeats = 7, option;
  bool integer = false;
  while ((option = getopt(argc, argv, "d:r:i")) != -1) {
    if (option == 'd') spec = optarg;
    else if (option == 'r') repeats = atoi(optarg);
    else if (option == 'i') integer = true;
    else {
      fprintf(stderr, "usage: %s [-d device] [-r repeats] [-i]\n", argv[0]);
      return 2;
    }
  }
  if (repeats < 1 || repeats > 1000) {
    fprintf(stderr, "%s: repeats must be 1 to 1000\n", argv[0]);
    return 2;
  }
  raw_device_t device = raw_find_device(spec);
  cl_uint units = 1;
  RAW_CHECK(clGetDeviceInfo(device.device, CL_DEVICE_MAX_COMPUTE_UNITS, sizeof(units), &units, NULL));
  cl_context context = raw_create_context(&device, 1);
  cl_command_queue queue = raw_create_queue(context, &device);
  cl_program program = raw_build_file(context, &device, HGR_BENCH_PEAK_FILE);
  double* gflops = malloc((size_t)repeats * sizeof(double));
  if (!gflops) {
    fprintf(stderr, "%s: out of memory\n", argv[0]);
    return 1;
  }
  /* 1024 work-items per compute unit: every unit busy, and a CPU driver's
   * work-group loops long enough that scheduling costs nothing. */
  size_t items = (size_t)units * 1024;
  char others[128];
  width_run_t fastest = run_widths(context, queue, program, &fma_kind, "float", items, repeats, gflops, others,
                                   sizeof(others));
  printf("peak %s %.1f GFLOP/s (median of %d; best %.1f; %.1f per CPU-second x %u compute units = %.1f; %zu "
         "work-items, %d iterations; float%d vectors, the fastest of %s)\n",
         spec, fastest.median, repeats, fastest.best, fastest.per_cpu, units, fastest.per_cpu * units, items,
         fastest.iterations, fastest.width, others);
  if (integer) {
    width_run_t products = run_widths(context, queue, program, &imad_kind, "int", items, repeats, gflops, others,
                                      sizeof(others));
    printf("int8 products %s %.1f G products/s (median of %d; best %.1f; %.1f per CPU-second x %u compute units = "
           "%.1f; %zu work-items, %d iterations; int%d vectors, the fastest of %s; against %.1f G FMA/s of "
           "float32)\n",
           spec, products.median, repeats, products.best, products.per_cpu, units, products.per_cpu * units, items,
           products.iterations, products.width, others, fastest.median / 2);
  }
  free(gflops);
  clReleaseProgram(program);
  clReleaseCommandQueue(queue);
  clReleaseContext(context);
  return 0;
}
