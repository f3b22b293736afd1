/* Helpers for the benchmarks that run a graph file (the examples): the
 * --device KEY=SPEC argument, and inputs for what the params do not give. */
#ifndef HGR_BENCH_EXAMPLE_H_
#define HGR_BENCH_EXAMPLE_H_

#include <stdbool.h>

#include "hgr/hgr.h"

/* Parses KEY=SPEC (as `hgr run --device`) into *out_binding; the spec points into
 * argument, which is changed (the '=' becomes a NUL). false when there is no '='. */
bool bench_example_parse_binding(char* argument, hgr_device_binding_t* out_binding);

/* Sets every input of the executor that params (may be NULL) does not give:
 * float32 inputs get fixed values in [-1, 1], other dtypes zeros. */
hgr_status_t bench_example_set_inputs(hgr_executor_t* executor, const hgr_params_t* params);

#endif /* HGR_BENCH_EXAMPLE_H_ */
