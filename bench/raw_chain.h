/* The chain benchmark's raw OpenCL baseline: executes a chain_plan_t command by
 * command with the OpenCL API only, the way a careful hand-written host program
 * would (see raw_chain.c for the exact calls). */
#ifndef HGR_BENCH_RAW_CHAIN_H_
#define HGR_BENCH_RAW_CHAIN_H_

#include "chain_plan.h"

typedef struct raw_chain_s raw_chain_t;

/* Sets up the plan on the devices named by specs (one per plan device): contexts,
 * one in-order queue per device, buffers, and kernels built from kernel_file (hgr's
 * kernels/elementwise.cl) with their arguments set once: one cl_kernel per distinct
 * (op, input, output), or with kernel_per_node one per node, as a graph runtime
 * holds them. Exits on an OpenCL error. */
raw_chain_t* raw_chain_create(const chain_plan_t* plan, const char* const* specs, const char* kernel_file,
                              bool kernel_per_node);

/* Writes x and the constants (blocking). */
void raw_chain_set_inputs(raw_chain_t* chain, const float* x, const float* const* constants);

/* Enqueues one run of the plan; cross-platform copies block on their read. */
void raw_chain_enqueue(raw_chain_t* chain);

/* Waits for the run's last command. */
void raw_chain_wait(raw_chain_t* chain);

/* Reads the final value (elements floats). */
void raw_chain_read_result(raw_chain_t* chain, float* out);

void raw_chain_release(raw_chain_t* chain);

#endif /* HGR_BENCH_RAW_CHAIN_H_ */
