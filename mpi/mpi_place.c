/* Placement across ranks whose devices differ (hgr_mpi_place, hgr/mpi.h): the link's
 * costs, every other rank's measure of its own listed devices (ranks sharing a host
 * take turns, since they would disturb each other's calibration; ranks of different
 * hosts measure at once), rank 0's placement with them, and its placed graph, as
 * graph JSON, to every rank. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mpi_internal.h"

int hgr__mpi_host_turns(const char* const* hosts, int count, int* out_turns) {
  int turn_count = 0;
  for (int r = 0; r < count; ++r) {
    out_turns[r] = -1;
    if (r == 0) continue; /* rank 0 measures nothing here: hgr_place calibrates its devices */
    int turn = 0;
    for (int before = 1; before < r; ++before) turn += !strcmp(hosts[before], hosts[r]);
    out_turns[r] = turn;
    if (turn + 1 > turn_count) turn_count = turn + 1;
  }
  return turn_count;
}

/* This rank's calibration turn (-1 on rank 0) and how many turns there are: every
 * rank's host (MPI's processor name) to rank 0, which assigns the turns
 * (hgr__mpi_host_turns) and sends them to every rank as "COUNT TURN0 TURN1 ...". */
static hgr_status_t find_turn(hgr_mpi_instance_t* instance, int* out_turn, int* out_turn_count) {
  char host[MPI_MAX_PROCESSOR_NAME + 1] = "";
  int length = 0;
  int error = MPI_Get_processor_name(host, &length);
  hgr_status_t status = HGR_OK;
  if (error != MPI_SUCCESS) status = HGR_MPI_STATUS(error, "rank %d: MPI_Get_processor_name", instance->rank);
  char** hosts = NULL;
  if ((status = hgr_mpi_agree(instance, status, "finding every rank's host")) ||
      (status = hgr_mpi_gather_texts(instance, host, strlen(host), "finding every rank's host", &hosts)))
    return status;
  char* text = NULL;
  size_t text_length = 0;
  if (instance->rank == 0) {
    int* turns = malloc((size_t)instance->rank_count * sizeof(*turns));
    FILE* out = turns ? open_memstream(&text, &text_length) : NULL;
    if (out) {
      fprintf(out, "%d", hgr__mpi_host_turns((const char* const*)hosts, instance->rank_count, turns));
      for (int r = 0; r < instance->rank_count; ++r) fprintf(out, " %d", turns[r]);
      if (fclose(out)) {
        free(text);
        text = NULL;
      }
    }
    free(turns);
    if (!text) status = HGR_STATUS(HGR_STATUS_RESOURCE_EXHAUSTED, "out of host memory");
  }
  free(hosts);
  char* received = NULL;
  if (!(status = hgr_mpi_agree(instance, status, "finding every rank's host")))
    status = hgr_mpi_broadcast_text(instance, text, text_length, "sending the calibration turns", &received,
                                    &text_length);
  free(text);
  if (status) return status;
  /* the count, then rank 0's turn, rank 1's, ... */
  char* at = received;
  *out_turn_count = (int)strtol(at, &at, 10);
  for (int r = 0; r <= instance->rank; ++r) *out_turn = (int)strtol(at, &at, 10);
  free(received);
  return HGR_OK;
}

/* Every rank but 0 measures its devices: ranks sharing a host one after another,
 * ranks of different hosts at once. Rank 0 gets every rank's text in *out_measures
 * ("" where a rank has no listed device; free it). */
static hgr_status_t measure_ranks(hgr_mpi_instance_t* instance, hgr_graph_t* graph, const hgr_place_options_t* options,
                                  char*** out_measures) {
  int my_turn = -1, turn_count = 0;
  hgr_status_t status = find_turn(instance, &my_turn, &turn_count);
  if (status) return status;
  /* where calibration may take a while, say which turn this rank waits for */
  if (my_turn >= 0 && options->log && (options->policy == HGR_PLACE_AUTO || options->policy == HGR_PLACE_STAGES)) {
    char line[128];
    snprintf(line, sizeof(line), "measuring its devices in turn %d of %d (ranks sharing a host take turns)",
             my_turn + 1, turn_count);
    options->log(options->log_user, line);
  }
  char* text = NULL;
  for (int turn = 0; turn < turn_count; ++turn) {
    hgr_status_t mine = my_turn == turn
                            ? hgr_place_measure_rank(instance->local, graph, options, instance->rank, &text)
                            : HGR_OK;
    if ((status = hgr_mpi_agree(instance, mine, "measuring its devices"))) {
      free(text);
      return status;
    }
  }
  status = hgr_mpi_gather_texts(instance, text, text ? strlen(text) : 0, "gathering the measures", out_measures);
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
