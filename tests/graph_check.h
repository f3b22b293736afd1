/* Running a graph against the reference (reference.h) through an executor: random
 * inputs set and evaluated, outputs read and compared. Shared by the end-to-end and
 * multi-queue tests. */
#ifndef HGR_TEST_GRAPH_CHECK_H_
#define HGR_TEST_GRAPH_CHECK_H_

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "hgr/executor.h"
#include "reference.h"

/* New random inputs in [-2, 2) drawn from seed: inputs[i] (graph->arg_count
 * entries, reallocated) holds input i, which is set on executor, and *reference
 * is recomputed from them. Returns the first failing call's status. */
hgr_status_t hgr_test_set_random_inputs(const hgr_graph_t* graph, hgr_executor_t* executor, uint64_t seed,
                                        float** inputs, hgr_test_reference_t* reference);

/* True when output o's storage is an input's: setting inputs changes what it reads. */
bool hgr_test_output_aliases_an_input(const hgr_graph_t* graph, size_t o);

/* Reads every output of executor (all, or only those that do not alias an input)
 * and compares it with reference. False at the first read that fails or output
 * that differs, with message "output 2 (node 7 'add3', 1000 elements): element 17:
 * got ..." or the failed read's status. */
bool hgr_test_check_outputs(hgr_executor_t* executor, const hgr_graph_t* graph,
                            const hgr_test_reference_t* reference, bool skip_input_aliases, char* message,
                            size_t capacity);

#endif /* HGR_TEST_GRAPH_CHECK_H_ */
