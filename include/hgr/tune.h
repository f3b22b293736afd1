/* hgr — tile choices, and the tuning pass that measures them.
 *
 * Some ops offer tile candidates: several kernels that compute the same result
 * with different work-group shapes, register blocks and local memory (the GEMM of
 * dense, matmul, batch_matmul and 1x1 conv2d: 7 tiles, from 128 x 128 down to 4 x
 * 4). For each node of such an op the executor takes one, at creation:
 *
 *   - from the op's own rule over the device's limits (work-group size, work-item
 *     sizes, local memory) and the layer's shape: HGR_TILE_LIMITS;
 *   - or, when the tuning file holds a record for the node's device and layer, the
 *     tile that `hgr tune` (hgr_tune_graph) measured fastest: HGR_TILE_TUNED.
 *
 * The tuning file is `tuning.tsv` in the program cache directory (hgr/executor.h:
 * options.program_cache.directory, else $HGR_CACHE_DIR, else $XDG_CACHE_HOME/hgr,
 * else ~/.cache/hgr). A record is keyed by the device (platform, device name,
 * device version, driver version) and the layer (the op's key: for the GEMM its
 * sizes and strides), so records of other devices and drivers sit side by side
 * and are ignored. A file that does not parse is reported through the executor's
 * log and ignored (every tile then comes from the limits); a record naming a tile
 * the op does not have, or one that does not fit the device, is ignored the same
 * way for its layer. options.tuning turns the file off.
 *
 * Thread safety: hgr_executor_node_tile is a call on the executor (thread-
 * compatible, hgr/executor.h). hgr_tune_graph creates its own executors on the
 * instance and may run beside other users of it; two tuning passes writing the
 * same file at once keep the records of whichever renames its file last. */
#ifndef HGR_TUNE_H_
#define HGR_TUNE_H_

#include <stddef.h>
#include <stdint.h>

#include "hgr/executor.h"
#include "hgr/export.h"
#include "hgr/status.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Where a node's tile came from. */
typedef enum hgr_tile_source_t {
  HGR_TILE_NONE = 0,  /* the node runs no kernel with candidates (tile and key are "") */
  HGR_TILE_LIMITS,    /* the op's rule over the device's limits */
  HGR_TILE_TUNED,     /* a record of the tuning file */
  HGR_TILE_CANDIDATE, /* options.tuning_candidate (HGR_TUNING_CANDIDATE) */
} hgr_tile_source_t;

/* "none", "limits", "tuned", "candidate". */
HGR_API const char* hgr_tile_source_name(hgr_tile_source_t source);

/* A node's tile choice. */
typedef struct hgr_tile_choice_t {
  hgr_tile_source_t source;
  uint32_t candidate;       /* index of the chosen tile among the op's candidates */
  uint32_t candidate_count; /* how many the op offers (0 with HGR_TILE_NONE) */
  size_t device_index;      /* the instance device the node runs on */
  char tile[32];            /* the tile's name, e.g. "8x32_4x16_k32" */
  char key[160];            /* the layer's key in the tuning file */
} hgr_tile_choice_t;

/* The tile node_id runs with. A node that launches no kernel with candidates (an
 * input, a copy, another op, the GEMM's matrix-vector path) gets HGR_TILE_NONE.
 * OUT_OF_RANGE for a node id beyond the graph; INVALID_ARGUMENT for a NULL
 * argument. */
HGR_API hgr_status_t hgr_executor_node_tile(const hgr_executor_t* executor, uint32_t node_id,
                                            hgr_tile_choice_t* out_choice);

/* One line of progress (a candidate pass, a layer's result). */
typedef void (*hgr_tune_progress_fn)(void* user, const char* line);

typedef struct hgr_tune_options_t {
  uint32_t runs;                  /* timed runs per candidate, after one untimed (0 means 5) */
  bool write;                     /* write the winners to the tuning file (the default) */
  hgr_tune_progress_fn progress;  /* may be NULL */
  void* progress_user;
} hgr_tune_options_t;

/* Fills options with defaults: 5 runs, write, no progress. */
HGR_API void hgr_tune_options_init(hgr_tune_options_t* options);

/* What a tuning pass measured. Times are per run of the graph's nodes that have
 * candidates, each node's fastest run, summed: device time from OpenCL profiling, or
 * on a device whose profile has no timestamps (rusticl 22.3) the host time of each
 * node run one at a time (hgr_executor_run_stepwise: its enqueue, run and wait). */
typedef struct hgr_tune_summary_t {
  uint32_t layers;          /* distinct layer keys measured */
  uint32_t nodes;           /* nodes with candidates */
  uint32_t changed;         /* layers whose winner differs from the limits' choice */
  double limits_ms;         /* those nodes with the limits' tiles */
  double tuned_ms;          /* with the winners */
  char path[512];           /* the tuning file written ("" when not written) */
} hgr_tune_summary_t;

/* Measures every tile candidate of every node that has some: creates an executor
 * of graph per candidate (options as executor_options, which may be NULL, with
 * profiling on and options.tuning = HGR_TUNING_CANDIDATE), sets the inputs that
 * executor_options->params does not give to zeros, runs it tune_options->runs
 * times after one untimed run (the candidates' runs interleaved, so that a
 * machine's changing load weighs on all alike), and takes per layer key the tile
 * with the least time over the layer's nodes (each node's fastest run: load on the
 * machine only adds time). With tune_options->write, the winners
 * replace the records of the same device and key in the tuning file (other records
 * are kept; a file that does not parse is replaced, and the progress says so).
 * tune_options may be NULL for the defaults; out_summary may be NULL. Errors: those
 * of hgr_executor_create and of runs, naming the candidate; UNAVAILABLE when the
 * file cannot be written. */
HGR_API hgr_status_t hgr_tune_graph(hgr_instance_t* instance, hgr_graph_t* graph,
                                    const hgr_executor_options_t* executor_options,
                                    const hgr_tune_options_t* tune_options, hgr_tune_summary_t* out_summary);

#ifdef __cplusplus
}
#endif

#endif /* HGR_TUNE_H_ */
