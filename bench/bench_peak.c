/* hgr_bench_peak: the float32 FMA peak of an OpenCL device, the ceiling that
 * bench/conv_layers.sh measures the conv layers against. It runs bench/peak.cl's
 * hgr_peak_fma4, 8 and 16 (8 independent fma chains on float4s, float8s, float16s)
 * over enough work-items for every compute unit, `repeats` times each, and prints
 * the fastest width's median GFLOP/s (wall time from enqueue to completion of each
 * run), on one line:
 *   peak <device> <GFLOP/s> GFLOP/s (median of R; best ...; per CPU-second ...; floatW
 *   vectors, the fastest of float4 ..., float8 ..., float16 ...)
 * The CPU-second figure means something for CPU drivers only (PoCL pthread), whose
 * threads are the process's.
 *
 *   hgr_bench_peak [-d device] [-r repeats]    (defaults pocl:0, 7)
 *
 * Only the OpenCL API (bench/raw_cl.c), no hgr code: it measures the driver and
 * the machine. */
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

/* One width's figures: median and best wall GFLOP/s over the repeats, FLOP per
 * CPU-second, and the iterations a run took. */
typedef struct width_run_t {
  int width, iterations;
  double median, best, per_cpu;
} width_run_t;

/* Runs hgr_peak_fma<width> over items work-items: a first run compiles it (PoCL
 * builds its work-group function at the first enqueue); then the iteration count
 * grows until one run takes 100 ms; then `repeats` timed runs. */
static width_run_t run_width(cl_context context, cl_command_queue queue, cl_program program, int width,
                             size_t items, int repeats, double* gflops) {
  char name[32];
  snprintf(name, sizeof(name), "hgr_peak_fma%d", width);
  cl_int error;
  cl_kernel kernel = clCreateKernel(program, name, &error);
  RAW_CHECK(error);
  cl_mem out = clCreateBuffer(context, CL_MEM_WRITE_ONLY, items * sizeof(float), NULL, &error);
  RAW_CHECK(error);
  float seed = 1.0f;
  RAW_CHECK(clSetKernelArg(kernel, 0, sizeof(out), &out));
  RAW_CHECK(clSetKernelArg(kernel, 2, sizeof(seed), &seed));
  int iterations = 16;
  for (int first = 1;; first = 0) {
    RAW_CHECK(clSetKernelArg(kernel, 1, sizeof(iterations), &iterations));
    cl_event done;
    double start = bench_now_ns();
    RAW_CHECK(clEnqueueNDRangeKernel(queue, kernel, 1, NULL, &items, NULL, 0, NULL, &done));
    raw_wait_release(done);
    double seconds = (bench_now_ns() - start) * 1e-9;
    if (!first && (seconds >= 0.1 || iterations > (1 << 24))) break;
    if (!first) iterations *= 2;
  }
  double flop = 2.0 * width * 8 * (double)iterations * (double)items; /* 8 chains (peak.cl) */
  double cpu_start = process_cpu_ns();
  for (int r = 0; r < repeats; ++r) {
    cl_event done;
    double start = bench_now_ns();
    RAW_CHECK(clEnqueueNDRangeKernel(queue, kernel, 1, NULL, &items, NULL, 0, NULL, &done));
    raw_wait_release(done);
    gflops[r] = flop / (bench_now_ns() - start);
  }
  /* A CPU driver's threads belong to this process: FLOP per CPU-second times the
   * compute units is the peak of a quiet machine, which other load on a shared one
   * disturbs far less than wall time. */
  width_run_t run = {width, iterations, bench_median(gflops, (size_t)repeats), 0,
                     flop * repeats / (process_cpu_ns() - cpu_start)};
  for (int r = 0; r < repeats; ++r) run.best = gflops[r] > run.best ? gflops[r] : run.best;
  clReleaseMemObject(out);
  clReleaseKernel(kernel);
  return run;
}

int main(int argc, char** argv) {
  const char* spec = "pocl:0";
  int repeats = 7, option;
  while ((option = getopt(argc, argv, "d:r:")) != -1) {
    if (option == 'd') spec = optarg;
    else if (option == 'r') repeats = atoi(optarg);
    else {
      fprintf(stderr, "usage: %s [-d device] [-r repeats]\n", argv[0]);
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
  static const int widths[] = {4, 8, 16};
  width_run_t fastest = {0};
  char others[128] = "";
  for (size_t w = 0; w < sizeof(widths) / sizeof(widths[0]); ++w) {
    width_run_t run = run_width(context, queue, program, widths[w], items, repeats, gflops);
    size_t used = strlen(others);
    snprintf(others + used, sizeof(others) - used, "%sfloat%d %.1f", used ? ", " : "", run.width, run.median);
    if (run.median > fastest.median) fastest = run;
  }
  printf("peak %s %.1f GFLOP/s (median of %d; best %.1f; %.1f per CPU-second x %u compute units = %.1f; %zu "
         "work-items, %d iterations; float%d vectors, the fastest of %s)\n",
         spec, fastest.median, repeats, fastest.best, fastest.per_cpu, units, fastest.per_cpu * units, items,
         fastest.iterations, fastest.width, others);
  free(gflops);
  clReleaseProgram(program);
  clReleaseCommandQueue(queue);
  clReleaseContext(context);
  return 0;
}
