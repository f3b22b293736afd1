/* The hgr program's ranks: under an MPI launcher (mpirun), every rank runs the same
 * command and the commands reach each other through libhgr_mpi (hgr/mpi.h); without
 * one, or in a build without MPI, there is one rank and these calls are the plain
 * ones (docs/distributed.md). */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

/* One rank's gather (hgr_cli_gather_text): a copy of its own text. */
static hgr_status_t copy_text(const char* text, size_t length, char*** out_texts, int* out_count) {
  char** texts = calloc(1, sizeof(*texts));
  if (texts) texts[0] = malloc(length + 1);
  if (!texts || !texts[0]) {
    free(texts);
    return HGR_STATUS(HGR_STATUS_RESOURCE_EXHAUSTED, "out of host memory");
  }
  memcpy(texts[0], text, length);
  texts[0][length] = '\0';
  *out_texts = texts;
  *out_count = 1;
  return HGR_OK;
}

/* One process's placement: hgr_place and its graph. */
static hgr_status_t place_here(hgr_instance_t* instance, hgr_graph_t* graph, const hgr_place_options_t* options,
                               hgr_graph_t** out_graph, hgr_placement_t** out_placement) {
  HGR_RETURN_IF_ERROR_CLI(hgr_place(instance, graph, options, out_placement));
  *out_graph = hgr_graph_retain(hgr_placement_graph(*out_placement));
  return HGR_OK;
}

#ifdef HGR_CLI_MPI
#include "hgr/mpi.h"

/* Set by hgr_cli_ranks_start when a launcher started this process. */
static bool launched;
static int rank;
static double timeout_s;
static hgr_mpi_instance_t* mpi_instance;

/* Open MPI, MPICH and the PMI/PMIx launchers say so in the environment. */
static bool under_launcher(void) {
  static const char* const variables[] = {"OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "PMIX_RANK", "MPI_LOCALNRANKS"};
  for (size_t v = 0; v < sizeof(variables) / sizeof(*variables); ++v)
    if (getenv(variables[v])) return true;
  return false;
}

int hgr_cli_ranks_start(int* argc, char*** argv) {
  if (!under_launcher()) return HGR_CLI_OK;
  int provided = MPI_THREAD_SINGLE;
  if (MPI_Init_thread(argc, argv, MPI_THREAD_MULTIPLE, &provided) != MPI_SUCCESS) {
    fprintf(stderr, "hgr: MPI_Init_thread failed\n");
    return HGR_CLI_FAILED;
  }
  launched = true;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  /* One voice: rank 0 prints what the command prints; the others print errors. */
  if (rank != 0 && !freopen("/dev/null", "w", stdout)) {
    fprintf(stderr, "hgr (rank %d): cannot silence standard output\n", rank);
    return HGR_CLI_FAILED;
  }
  return HGR_CLI_OK;
}

void hgr_cli_ranks_finish(void) {
  hgr_mpi_instance_release(mpi_instance);
  mpi_instance = NULL;
  if (launched) MPI_Finalize();
}

bool hgr_cli_ranks_launched(void) { return launched; }
int hgr_cli_rank(void) { return rank; }
void hgr_cli_ranks_set_timeout(double seconds) { timeout_s = seconds; }

hgr_status_t hgr_cli_instance_create(const hgr_instance_options_t* options, hgr_instance_t** out_instance) {
  *out_instance = NULL;
  if (!launched) return hgr_instance_create(options, out_instance);
  if (!mpi_instance) {
    hgr_mpi_options_t mpi_options;
    hgr_mpi_options_init(&mpi_options);
    mpi_options.timeout_s = timeout_s;
    if (options) mpi_options.instance = *options;
    HGR_RETURN_IF_ERROR_CLI(hgr_mpi_instance_create(MPI_COMM_WORLD, &mpi_options, &mpi_instance));
  }
  *out_instance = hgr_mpi_instance_local(mpi_instance);
  return HGR_OK;
}

void hgr_cli_instance_release(hgr_instance_t* instance) {
  if (!launched) hgr_instance_release(instance); /* else the MPI instance's, released at the end */
}

hgr_status_t hgr_cli_agree(hgr_status_t local, const char* what) {
  if (!launched || !mpi_instance) return local;
  return hgr_mpi_agree(mpi_instance, local, what);
}

hgr_status_t hgr_cli_executor_create(hgr_instance_t* instance, hgr_graph_t* graph,
                                     const hgr_executor_options_t* options, hgr_executor_t** out_executor) {
  if (!launched) return hgr_executor_create(instance, graph, options, out_executor);
  return hgr_mpi_executor_create(mpi_instance, graph, options, out_executor);
}

hgr_status_t hgr_cli_executor_wait(hgr_executor_t* executor) {
  if (!launched) return hgr_executor_wait(executor);
  return hgr_mpi_executor_wait(mpi_instance, executor);
}

hgr_status_t hgr_cli_gather_text(const char* text, size_t length, char*** out_texts, int* out_count) {
  *out_texts = NULL;
  *out_count = 0;
  if (!launched) return copy_text(text, length, out_texts, out_count);
  int ranks = 0;
  MPI_Comm_size(MPI_COMM_WORLD, &ranks);
  int* lengths = NULL;
  int* offsets = NULL;
  char* all = NULL;
  char** texts = NULL;
  hgr_status_t status = HGR_OK;
  if (length > INT_MAX) status = HGR_STATUS(HGR_STATUS_INVALID_ARGUMENT, "%zu bytes of text to gather", length);
  else if (rank == 0 && (!(lengths = calloc((size_t)ranks, sizeof(*lengths))) ||
                         !(offsets = calloc((size_t)ranks, sizeof(*offsets))) ||
                         !(texts = calloc((size_t)ranks, sizeof(*texts)))))
    status = HGR_STATUS(HGR_STATUS_RESOURCE_EXHAUSTED, "out of host memory");
  /* Every rank calls each agree; a failure anywhere ends the gather on every rank. */
  status = hgr_cli_agree(status, "gathering every rank's text");
  int mine = (int)length;
  if (!status) {
    MPI_Gather(&mine, 1, MPI_INT, lengths, 1, MPI_INT, 0, MPI_COMM_WORLD);
    long long total = 0;
    for (int r = 0; rank == 0 && r < ranks; ++r) {
      offsets[r] = (int)(total < INT_MAX ? total : 0);
      total += lengths[r];
    }
    if (total > INT_MAX) status = HGR_STATUS(HGR_STATUS_INVALID_ARGUMENT, "%lld bytes of text to gather", total);
    else if (rank == 0 && !(all = malloc((size_t)total + 1)))
      status = HGR_STATUS(HGR_STATUS_RESOURCE_EXHAUSTED, "out of host memory");
    status = hgr_cli_agree(status, "gathering every rank's text");
  }
  if (!status) MPI_Gatherv(text, mine, MPI_CHAR, all, lengths, offsets, MPI_CHAR, 0, MPI_COMM_WORLD);
  for (int r = 0; !status && rank == 0 && r < ranks; ++r) {
    if (!(texts[r] = malloc((size_t)lengths[r] + 1))) {
      status = HGR_STATUS(HGR_STATUS_RESOURCE_EXHAUSTED, "out of host memory");
      break;
    }
    memcpy(texts[r], all + offsets[r], (size_t)lengths[r]);
    texts[r][lengths[r]] = '\0';
  }
  free(all);
  free(lengths);
  free(offsets);
  if (status) {
    for (int r = 0; texts && r < ranks; ++r) free(texts[r]);
    free(texts);
    return status;
  }
  *out_texts = texts;
  *out_count = rank == 0 ? ranks : 0;
  return HGR_OK;
}

hgr_status_t hgr_cli_broadcast_text(char** inout_text, size_t* inout_length) {
  if (!launched) return HGR_OK;
  unsigned long long count = rank == 0 ? *inout_length : 0;
  MPI_Bcast(&count, 1, MPI_UNSIGNED_LONG_LONG, 0, MPI_COMM_WORLD);
  char* text = rank == 0 ? *inout_text : malloc((size_t)count + 1);
  HGR_RETURN_IF_ERROR_CLI(hgr_cli_agree(
      text ? HGR_OK : HGR_STATUS(HGR_STATUS_RESOURCE_EXHAUSTED, "out of host memory"), "receiving rank 0's text"));
  for (unsigned long long at = 0; at < count; at += 1u << 30) {
    int piece = (int)(count - at < (1u << 30) ? count - at : (1u << 30));
    MPI_Bcast(text + at, piece, MPI_CHAR, 0, MPI_COMM_WORLD);
  }
  if (rank != 0) {
    text[count] = '\0';
    *inout_text = text;
    *inout_length = (size_t)count;
  }
  return HGR_OK;
}

hgr_status_t hgr_cli_place_graph(hgr_instance_t* instance, hgr_graph_t* graph, const hgr_place_options_t* options,
                                 hgr_graph_t** out_graph, hgr_placement_t** out_placement) {
  /* collective when the command's instance is the ranks' (hgr_cli_instance_create) */
  if (launched && mpi_instance) return hgr_mpi_place(mpi_instance, graph, options, out_graph, out_placement);
  return place_here(instance, graph, options, out_graph, out_placement);
}

hgr_status_t hgr_cli_devices_write(FILE* out, bool* out_written) {
  *out_written = launched;
  if (!launched) return HGR_OK;
  hgr_instance_t* instance = NULL;
  HGR_RETURN_IF_ERROR_CLI(hgr_cli_instance_create(NULL, &instance));
  return hgr_mpi_devices_write(mpi_instance, out);
}

#else /* one rank */

int hgr_cli_ranks_start(int* argc, char*** argv) {
  (void)argc;
  (void)argv;
  return HGR_CLI_OK;
}
void hgr_cli_ranks_finish(void) {}
bool hgr_cli_ranks_launched(void) { return false; }
int hgr_cli_rank(void) { return 0; }
void hgr_cli_ranks_set_timeout(double seconds) { (void)seconds; }
hgr_status_t hgr_cli_instance_create(const hgr_instance_options_t* options, hgr_instance_t** out_instance) {
  return hgr_instance_create(options, out_instance);
}
void hgr_cli_instance_release(hgr_instance_t* instance) { hgr_instance_release(instance); }
hgr_status_t hgr_cli_agree(hgr_status_t local, const char* what) {
  (void)what;
  return local;
}
hgr_status_t hgr_cli_executor_create(hgr_instance_t* instance, hgr_graph_t* graph,
                                     const hgr_executor_options_t* options, hgr_executor_t** out_executor) {
  return hgr_executor_create(instance, graph, options, out_executor);
}
hgr_status_t hgr_cli_executor_wait(hgr_executor_t* executor) { return hgr_executor_wait(executor); }
hgr_status_t hgr_cli_place_graph(hgr_instance_t* instance, hgr_graph_t* graph, const hgr_place_options_t* options,
                                 hgr_graph_t** out_graph, hgr_placement_t** out_placement) {
  return place_here(instance, graph, options, out_graph, out_placement);
}
hgr_status_t hgr_cli_devices_write(FILE* out, bool* out_written) {
  (void)out;
  *out_written = false;
  return HGR_OK;
}

hgr_status_t hgr_cli_gather_text(const char* text, size_t length, char*** out_texts, int* out_count) {
  *out_texts = NULL;
  *out_count = 0;
  return copy_text(text, length, out_texts, out_count);
}
hgr_status_t hgr_cli_broadcast_text(char** inout_text, size_t* inout_length) {
  (void)inout_text;
  (void)inout_length;
  return HGR_OK;
}

#endif
