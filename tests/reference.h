/* The test oracle: a plain-C evaluator of float32 elementwise graphs.
 *
 * It evaluates a loaded graph node by node on the host with one buffer per entry
 * (never per storage id), so it is independent of the runtime's storage pooling,
 * aliasing and device placement. Ops: add, subtract, multiply, divide, maximum,
 * minimum (binary); negative, relu, exp, sigmoid, tanh (unary); __copy and __nop
 * copy their input.
 *
 * Comparison. OpenCL allows a few ulp on divide, exp, sigmoid and tanh, and an
 * error made early in a graph travels through every later op. So besides the values,
 * the reference keeps for every element a bound on how far a conforming device may
 * be from it: each op adds its own tolerance (hgr_test_op_tolerance) to the error
 * its inputs carry, propagated through the op's derivative. Exact ops on exact
 * inputs get a zero bound, so they are compared bit for bit (up to the sign of
 * zero and flushed denormals). */
#ifndef HGR_TEST_REFERENCE_H_
#define HGR_TEST_REFERENCE_H_

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "hgr/graph.h"
#include "hgr/status.h"

/* What one op may differ by on a device: |got - exact| <= relative * |exact| + absolute. */
typedef struct hgr_test_tolerance_t {
  double relative;
  double absolute;
} hgr_test_tolerance_t;

/* The tolerance of an op by func_name: zero for add, subtract, multiply, maximum,
 * minimum, negative, relu, __copy, __nop; relative 1e-5 plus absolute 1e-7 for
 * divide, exp, sigmoid and tanh. *out_known is false (may be NULL) for other names. */
hgr_test_tolerance_t hgr_test_op_tolerance(const char* func_name, bool* out_known);

/* The expected graph outputs (heads, in order). */
typedef struct hgr_test_reference_t {
  size_t output_count;
  uint64_t* element_counts; /* per output */
  float** values;           /* per output: element_counts[i] floats */
  float** error_bounds;     /* per output: allowed |got - value| per element; NULL when exact */
} hgr_test_reference_t;

/* Evaluates graph with inputs[i] holding input i (arg_nodes[i]; as many floats as
 * its entry has elements). Fills *out, which the caller frees with
 * hgr_test_reference_free (also after a failure). Errors: INVALID_ARGUMENT naming
 * the node for an unknown op, a dtype other than float32, or inputs of the wrong
 * count or size; RESOURCE_EXHAUSTED. */
hgr_status_t hgr_test_reference_run(const hgr_graph_t* graph, const float* const* inputs,
                                    hgr_test_reference_t* out);
/* The same, keeping every entry's value instead of the heads': output i of *out is
 * entry i of the graph. */
hgr_status_t hgr_test_reference_run_entries(const hgr_graph_t* graph, const float* const* inputs,
                                            hgr_test_reference_t* out);
void hgr_test_reference_free(hgr_test_reference_t* reference);

/* Compares count floats: element i matches when |got - expected| <= bound[i]
 * (bound may be NULL: zero everywhere) or FLT_MIN (flushed denormals); NaN matches
 * NaN, an infinity the same infinity, and a bound that is not finite matches
 * anything. Returns true when all match; otherwise writes the first mismatch into
 * message: "element 17: got 1.5, expected 1.25 (allowed error 0)". */
bool hgr_test_compare(const float* got, const float* expected, const float* bound, uint64_t count,
                      char* message, size_t capacity);

/* hgr_test_compare of output `output` of reference against got. */
bool hgr_test_reference_check(const hgr_test_reference_t* reference, size_t output,
                              const float* got, char* message, size_t capacity);

#endif /* HGR_TEST_REFERENCE_H_ */
