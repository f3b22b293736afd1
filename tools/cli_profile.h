/* Profile reports of `hgr run` (cli_profile.c). All need an executor created with
 * profiling whose last run was waited for. */
#ifndef HGR_CLI_PROFILE_H_
#define HGR_CLI_PROFILE_H_

#include <stdio.h>

#include "hgr/hgr.h"

/* Per device, per op, per node (the `top` with most device time; 0: all) and per
 * copy (bytes, path, chunks, GB/s), plus the host time spent enqueuing. */
hgr_status_t hgr_cli_profile_print(FILE* out, hgr_instance_t* instance, const hgr_graph_t* graph,
                                   hgr_executor_t* executor, size_t top);
/* The same as JSON, every node. */
hgr_status_t hgr_cli_profile_write_json(const char* path, hgr_instance_t* instance, const hgr_graph_t* graph,
                                        hgr_executor_t* executor);
/* Chrome trace-event JSON (Perfetto, chrome://tracing): a track per queue and one
 * for the host's enqueueing, a slice per command, flow arrows for dependencies
 * across queues. */
hgr_status_t hgr_cli_trace_write(const char* path, hgr_instance_t* instance, const hgr_graph_t* graph,
                                 hgr_executor_t* executor);

#endif /* HGR_CLI_PROFILE_H_ */
