/* Placement across ranks whose devices differ (hgr_mpi_place, hgr/mpi.h): the link's
 * costs, every other rank's measure of its own listed devices taken in turn (ranks
 * sharing a host would disturb each other's calibration), rank 0's placement with
 * them, and its placed graph, as graph JSON, to every rank. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mpi_internal.h"

/* Every rank but 0 measures its devices, one after another; rank 0 gets every
 * rank's text in *out_measures ("" where a rank has no listed device; free it). */
static hgr_status_t measure_ranks(hgr_mpi_instance_t* instance, hgr_graph_t* graph, const hgr_place_options_t* options,
                                  char*** out_measures) {
  char* text = NULL;
  for (int turn = 1; turn < instance->rank_count; ++turn) {
    char what[64];
    snprintf(what, sizeof(what), "measuring rank %d's devices", turn);
    hgr_status_t mine =
        instance->rank == turn ? hgr_place_measure_rank(instance->local, graph, options, turn, &text) : HGR_OK;
    hgr_status_t status = hgr_mpi_agree(instance, mine, what);
    if (status) {
      free(text);
      return status;
    }
  }
  hgr_status_t status =
      hgr_mpi_gather_texts(instance, text, text ? strlen(text) : 0, "gathering the measures", out_measures);
  free(text);
  return status;
}

/* Rank 0: places with the measures and writes the placed graph's JSON. */
static hgr_status_t place_on_rank_0(hgr_mpi_instance_t* instance, hgr_graph_t* graph, hgr_place_options_t* options,
                                    char** measures, hgr_placement_t** out_placement, char** out_json,
                                    size_t* out_length) {
  options->rank_measures = (const char* const*)measures;
  options->rank_measure_count = (size_t)instance->rank_count;
  hgr_status_t status = hgr_place(instance->local, graph, options, out_placement);
  if (status) return status;
  FILE* out = open_memstream(out_json, out_length);
  if (!out) return HGR_STATUS(HGR_STATUS_RESOURCE_EXHAUSTED, "out of host memory");
  status = hgr_graph_write_json(hgr_placement_graph(*out_placement), out);
  if (fclose(out) && !status) status = HGR_STATUS(HGR_STATUS_RESOURCE_EXHAUSTED, "out of host memory");
  return status;
}

hgr_status_t hgr_mpi_place(hgr_mpi_instance_t* instance, hgr_graph_t* graph, const hgr_place_options_t* options,
                           hgr_graph_t** out_graph, hgr_placement_t** out_placement) {
  if (out_graph) *out_graph = NULL;
  if (out_placement) *out_placement = NULL;
  if (!instance) return HGR_STATUS(HGR_STATUS_INVALID_ARGUMENT, "hgr_mpi_place: instance is NULL");
  const char* what = "hgr_mpi_place";
  hgr_status_t status = HGR_OK;
  if (!graph || !options || !out_graph)
    status = HGR_STATUS(HGR_STATUS_INVALID_ARGUMENT, "graph, options and out_graph must not be NULL");
  else if (options->rank_measures || options->rank_measure_count)
    status = HGR_STATUS(HGR_STATUS_INVALID_ARGUMENT, "options.rank_measures must be NULL (it is "
                                                     "filled here)");
  if ((status = hgr_mpi_agree(instance, status, what))) return status;
  hgr_place_options_t mine = *options;
  if (mine.cross_host_latency_ms == 0.0 && mine.cross_host_ms_per_byte == 0.0 &&
      (status = hgr_mpi_measure_link(instance, &mine.cross_host_latency_ms, &mine.cross_host_ms_per_byte)))
    return status;
  char** measures = NULL;
  if ((status = measure_ranks(instance, graph, &mine, &measures))) return status;
  hgr_placement_t* placement = NULL;
  char* json = NULL;
  size_t length = 0;
  if (instance->rank == 0) status = place_on_rank_0(instance, graph, &mine, measures, &placement, &json, &length);
  free(measures);
  char* received = NULL;
  if (!(status = hgr_mpi_agree(instance, status, "placing the graph")))
    status = hgr_mpi_broadcast_text(instance, json, length, "sending the placed graph", &received, &length);
  free(json);
  hgr_graph_t* placed = NULL;
  if (!status) {
    if (instance->rank == 0) placed = hgr_graph_retain(hgr_placement_graph(placement));
    else status = hgr_graph_load_json(received, length, &placed);
    status = hgr_mpi_agree(instance, status, "loading rank 0's placed graph");
  }
  free(received);
  if (status) {
    hgr_graph_release(placed);
    hgr_placement_release(placement);
    return status;
  }
  *out_graph = placed;
  if (out_placement) *out_placement = placement;
  else hgr_placement_release(placement);
  return HGR_OK;
}
