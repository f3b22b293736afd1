/* What the graph-pass tests share: float32 constants of random values in a builder
 * graph, and a graph run once on one device (its input 0 set, its output 0 read),
 * so that each pass's test compares its rewritten graph with the original. */
#ifndef HGR_TEST_PASS_CHECK_H
#define HGR_TEST_PASS_CHECK_H

#include "hgr/builder.h"
#include "hgr/executor.h"
#include "testlib.h"

/* A float32 constant `name` of shape (ndim dims) with values uniform in [-1, 1). */
hgr_value_t hgr_test_random_constant(hgr_builder_t* builder, const char* name, const int64_t* shape, int32_t ndim,
                                     hgr_test_rng_t* rng);

/* A copy of params (the passes edit the params they are given: a test keeps the
 * original to run the graph it started from). */
hgr_params_t* hgr_test_params_copy(const hgr_params_t* params);

/* Whether params holds a param named name. */
bool hgr_test_has_param(const hgr_params_t* params, const char* name);

/* Runs graph once on device spec of instance with params and input 0 = x (its bytes
 * as the graph gives them); returns output 0 (malloc'd; the caller frees it). */
float* hgr_test_run_graph(hgr_instance_t* instance, const char* spec, const hgr_graph_t* graph,
                          const hgr_params_t* params, const float* x);
/* The same, returning output k. */
float* hgr_test_run_graph_output(hgr_instance_t* instance, const char* spec, const hgr_graph_t* graph,
                                 const hgr_params_t* params, const float* x, uint32_t k);

#endif
