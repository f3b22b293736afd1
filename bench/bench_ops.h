/* hgr_bench_ops: built-in ops timed through the executor against a naive raw
 * OpenCL kernel (one work-item per output element) on the same device, in the same
 * process, interleaved run by run so both see the same machine state (PoCL's
 * pthread driver drifts 2-3x between runs on a shared VM; compare ratios).
 *
 * Each op's bench is a function with the bench_fn_t signature, in its own file
 * (bench_ops.c holds matmul and dense); a new one is added to the table in
 * bench_ops.c and to the executable's sources in bench/CMakeLists.txt, and uses
 * the helpers below. */
#ifndef HGR_BENCH_OPS_H_
#define HGR_BENCH_OPS_H_

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <CL/cl.h>

#include "bench_util.h"
#include "hgr/hgr.h"

typedef struct bench_options_t {
  const char* device; /* hgr device spec, e.g. "pocl:0" */
  int64_t size;       /* the op's main size (matmul: M = N = K) */
  int repeat;         /* timed runs of each side */
} bench_options_t;

/* A context and in-order queue of its own on the device hgr calls `spec`. */
typedef struct bench_raw_t {
  cl_device_id device;
  cl_context context;
  cl_command_queue queue;
  const hgr_device_info_t* info;
} bench_raw_t;

hgr_status_t bench_raw_open(hgr_instance_t* instance, const char* spec, bench_raw_t* out_raw);
void bench_raw_close(bench_raw_t* raw);
/* Builds source and creates its kernel called name. */
hgr_status_t bench_raw_kernel(const bench_raw_t* raw, const char* source, const char* name, cl_program* out_program,
                              cl_kernel* out_kernel);
/* A buffer of count floats, copied from values (may be NULL). */
hgr_status_t bench_raw_buffer(const bench_raw_t* raw, const float* values, size_t count, cl_mem* out_mem);

/* One graph on one device, inputs set once. */
typedef struct bench_graph_t {
  hgr_graph_t* graph;
  hgr_executor_t* executor;
  /* The kernel the op node plans with the device's limits. (The executor plans
   * again, with a smaller variant, where a built kernel allows smaller work-groups
   * than the device, as rusticl's larger ones do.) */
  char kernel[64];
} bench_graph_t;

hgr_status_t bench_graph_open(hgr_instance_t* instance, const char* json, const char* spec, bench_graph_t* out);
void bench_graph_close(bench_graph_t* bench);

/* Milliseconds: one hgr run + wait; one raw launch (local NULL: the driver's
 * work-group size) + clFinish. */
hgr_status_t bench_time_hgr(bench_graph_t* bench, double* out_ms);
hgr_status_t bench_time_raw(const bench_raw_t* raw, cl_kernel kernel, cl_uint dims, const size_t* global,
                            const size_t* local, double* out_ms);

hgr_status_t bench_cl_status(cl_int error, const char* call, const char* spec);

/* One row of the report. */
typedef struct bench_result_t {
  const char* op;
  char shape[64];    /* e.g. "512x512x512" */
  const char* device;
  char kernel[64];   /* hgr's kernel for the node */
  char naive_local[32]; /* the naive kernel's work-group size, e.g. "16x16" */
  double flop;       /* per run */
  double hgr_ms, naive_ms; /* medians */
  double max_diff;   /* max |hgr - naive| */
  double tolerance;  /* what max_diff must stay within */
  int repeat;
} bench_result_t;

/* Measures one op: fills *out_result (main prints it, and fails when max_diff
 * exceeds the tolerance: a fast wrong kernel is not a result). */
typedef hgr_status_t (*bench_fn_t)(hgr_instance_t* instance, const bench_options_t* options,
                                   bench_result_t* out_result);

#endif /* HGR_BENCH_OPS_H_ */
