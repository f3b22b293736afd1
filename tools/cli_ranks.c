/* The hgr program's ranks: under an MPI launcher (mpirun), every rank runs the same
 * command and the commands reach each other through libhgr_mpi (hgr/mpi.h); without
 * one, or in a build without MPI, there is one rank and these calls are the plain
 * ones (docs/distributed.md). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

/* One rank's gather (hgr_cli_gather_text): its own text, laid out as
 * hgr_mpi_gather_texts lays every rank's (the pointer, then the characters). */
static hgr_status_t copy_text(const char* text, size_t length, char*** out_texts, int* out_count) {
  char** texts = malloc(sizeof(*texts) + length + 1);
  if (!texts) return HGR_STATUS(HGR_STATUS_RESOURCE_EXHAUSTED, "out of host memory");
  texts[0] = (char*)(texts + 1);
  if (length) memcpy(texts[0], text, length);
  texts[0][length] = '\0';
  *out_texts = texts;
  *out_count = 1;
  return HGR_OK;
}

/* One rank's broadcast (hgr_cli_broadcast_text): a copy of its own text. */
static hgr_status_t copy_own(const char* text, size_t length, char** out_text, size_t* out_length) {
  if (!(*out_text = malloc(length + 1))) return HGR_STATUS(HGR_STATUS_RESOURCE_EXHAUSTED, "out of host memory");
  if (length) memcpy(*out_text, text, length);
  (*out_text)[length] = '\0';
  *out_length = length;
  return HGR_OK;
}

/* One process's placement: hgr_place and its graph. */
static hgr_status_t place_here(hgr_instance_t* instance, hgr_graph_t* graph, const hgr_place_options_t* options,
                               hgr_graph_t** out_graph, hgr_placement_t** out_placement) {
  HGR_RETURN_IF_ERROR_CLI(hgr_place(instance, graph, options, out_placement));
  *out_graph = hgr_graph_retain(hgr_placement_graph(*out_placement));
  return HGR_OK;
}

/* --mpi-timeout's seconds; 0: libhgr_mpi's default */
static double timeout_s;

int hgr_cli_ranks_parse(const char* command, int argc, char** argv, int* i) {
  if (strcmp(argv[*i], "--mpi-timeout")) return -1;
  const char* value = *i + 1 < argc ? argv[*i + 1] : NULL;
  char* end = NULL;
  double seconds = value ? strtod(value, &end) : -1;
  if (!value || end == value || *end || !(seconds > 0 && seconds <= 86400))
    return hgr_cli_usage_error(command, "--mpi-timeout takes seconds, more than 0 and at most 86400");
  timeout_s = seconds;
  ++*i;
  return HGR_CLI_OK;
}

#ifdef HGR_CLI_MPI
#include "hgr/mpi.h"

/* Set by hgr_cli_ranks_start when a launcher started this process. */
static bool launched;
static int rank;
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

hgr_status_t hgr_cli_gather_text(const char* text, size_t length, const char* what, char*** out_texts,
                                 int* out_count) {
  *out_texts = NULL;
  *out_count = 0;
  if (!launched) return copy_text(text, length, out_texts, out_count);
  HGR_RETURN_IF_ERROR_CLI(hgr_mpi_gather_texts(mpi_instance, text, length, what, out_texts));
  *out_count = *out_texts ? hgr_mpi_rank_count(mpi_instance) : 0;
  return HGR_OK;
}

hgr_status_t hgr_cli_broadcast_text(const char* text, size_t length, const char* what, char** out_text,
                                    size_t* out_length) {
  *out_text = NULL;
  *out_length = 0;
  if (!launched) return copy_own(text, length, out_text, out_length);
  return hgr_mpi_broadcast_text(mpi_instance, text, length, what, out_text, out_length);
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

hgr_status_t hgr_cli_gather_text(const char* text, size_t length, const char* what, char*** out_texts,
                                 int* out_count) {
  (void)what;
  *out_texts = NULL;
  *out_count = 0;
  return copy_text(text, length, out_texts, out_count);
}
hgr_status_t hgr_cli_broadcast_text(const char* text, size_t length, const char* what, char** out_text,
                                    size_t* out_length) {
  (void)what;
  return copy_own(text, length, out_text, out_length);
}

#endif
