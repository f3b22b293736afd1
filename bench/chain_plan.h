/* The chain benchmark's work, described once and executed twice: as a TVM graph by
 * hgr (chain_plan_json) and command by command by the raw baseline (raw_chain.c), so
 * both do exactly the same kernels, copies and buffer reuse.
 *
 * The chain: value = x; then for node k = 0..nodes-1, value = value + c (k even) or
 * value * c (k odd), where c is a constant tensor on the node's device. Node k runs
 * on device (k / switch_every) % device_count; when the value lives on another
 * device a copy moves it first. Every device holds the constant and two value
 * buffers that the chain alternates between (as TVM's memory planner would). */
#ifndef HGR_BENCH_CHAIN_PLAN_H_
#define HGR_BENCH_CHAIN_PLAN_H_

#include <stdbool.h>

#include "bench_util.h"

#define CHAIN_MAX_DEVICES 2

typedef enum chain_op_t { CHAIN_ADD, CHAIN_MULTIPLY } chain_op_t;

/* One node: a kernel (out = in op constant[device]) or a copy (out = in, where in
 * lives on another device). Buffers are indices into chain_plan_t's buffers. */
typedef struct chain_command_t {
  bool copy;
  chain_op_t op;
  int device; /* where it runs: the device of out */
  int in, out;
} chain_command_t;

typedef struct chain_plan_t {
  int device_count;
  int elements; /* float32 elements per tensor */
  int nodes;    /* kernel nodes (copies come on top) */
  int buffer_count;
  int buffer_device[3 * CHAIN_MAX_DEVICES + 1];
  int input;                         /* buffer of x (on device 0) */
  int constant[CHAIN_MAX_DEVICES];   /* buffer of c per device */
  int value[CHAIN_MAX_DEVICES][2];   /* the value buffers per device */
  int result;                        /* buffer holding the final value */
  int command_count;
  chain_command_t* commands;
} chain_plan_t;

/* Fills plan (free with chain_plan_free). Exits on out of memory. */
void chain_plan_make(int nodes, int device_count, int switch_every, int elements, chain_plan_t* plan);
void chain_plan_free(chain_plan_t* plan);

/* The copies among the commands. */
int chain_plan_copy_count(const chain_plan_t* plan);

/* The TVM graph-executor JSON of the plan: inputs "x" and "c0" ("c1"), one node per
 * command, storage ids = buffer indices, device keys keys[device]. Caller frees. */
char* chain_plan_json(const chain_plan_t* plan, const int* keys);

/* The final value computed on the host in float32 (same expressions as the kernels). */
void chain_plan_reference(const chain_plan_t* plan, const float* x, const float* const* constants, float* out);

#endif /* HGR_BENCH_CHAIN_PLAN_H_ */
