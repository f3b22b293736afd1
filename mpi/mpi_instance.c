/* The MPI instance, agreement between ranks, and executors over MPI (hgr/mpi.h).
 *
 * Every collective here is non-blocking and polled against a deadline (the
 * instance's timeout), so a rank that never arrives is an error, not a hang. A
 * collective that passed its deadline stays pending inside MPI: the buffers it may
 * still write are kept until the instance is released (hgr__mpi_abandon). These
 * calls run on the caller's thread while the progress thread works on the
 * executors' communicators: MPI_THREAD_MULTIPLE. */
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "mpi_internal.h"

#define DEFAULT_TIMEOUT_S 60.0
/* Polling a collective: from 1 us, doubling up to 1 ms. */
#define POLL_MIN_NS 1000L
#define POLL_MAX_NS 1000000L

char* hgr__mpi_format(const char* format, ...) {
  va_list args;
  va_start(args, format);
  va_list copy;
  va_copy(copy, args);
  char probe[1];
  int length = vsnprintf(probe, sizeof(probe), format, copy);
  va_end(copy);
  char* text = length >= 0 ? malloc((size_t)length + 1) : NULL;
  if (text) vsnprintf(text, (size_t)length + 1, format, args);
  va_end(args);
  return text;
}

hgr_status_t hgr__mpi_call_status(int mpi_error, const char* file, int line, const char* format, ...) {
  char where[256];
  va_list args;
  va_start(args, format);
  vsnprintf(where, sizeof(where), format, args);
  va_end(args);
  char text[MPI_MAX_ERROR_STRING];
  int length = 0;
  if (MPI_Error_string(mpi_error, text, &length) != MPI_SUCCESS) snprintf(text, sizeof(text), "MPI error %d", mpi_error);
  return hgr_status_make(HGR_STATUS_UNAVAILABLE, file, line, "%s failed: %s", where, text);
}

double hgr__mpi_now(void) {
  struct timespec now;
  clock_gettime(CLOCK_MONOTONIC, &now);
  return (double)now.tv_sec + (double)now.tv_nsec * 1e-9;
}

void hgr__mpi_abandon(hgr_mpi_instance_t* instance, void* block) {
  if (!block) return;
  hgr_mpi_abandoned_t* entry = malloc(sizeof(*entry));
  if (!entry) return; /* leaked: MPI may still write it, so it must not be freed */
  entry->block = block;
  entry->next = instance->abandoned;
  instance->abandoned = entry;
}

hgr_status_t hgr__mpi_wait(hgr_mpi_instance_t* instance, MPI_Request* request, double deadline, const char* what,
                           int* out_timed_out) {
  *out_timed_out = 0;
  long pause_ns = POLL_MIN_NS;
  for (;;) {
    int done = 0;
    int error = MPI_Test(request, &done, MPI_STATUS_IGNORE);
    if (error != MPI_SUCCESS) return HGR_MPI_STATUS(error, "rank %d: %s: MPI_Test", instance->rank, what);
    if (done) return HGR_OK;
    if (hgr__mpi_now() > deadline) {
      *out_timed_out = 1;
      return HGR_STATUS(HGR_STATUS_UNAVAILABLE, "rank %d: %s: not every rank answered within %g s", instance->rank,
                        what, instance->timeout_s);
    }
    struct timespec pause = {0, pause_ns};
    nanosleep(&pause, NULL);
    if (pause_ns < POLL_MAX_NS) pause_ns *= 2;
  }
}

/* Duplicates comm with a deadline; the duplicate returns errors instead of aborting. */
static hgr_status_t duplicate(hgr_mpi_instance_t* instance, MPI_Comm comm, const char* what, MPI_Comm* out_comm) {
  *out_comm = MPI_COMM_NULL;
  /* MPI writes the new handle when the duplication completes: after a timeout that
   * may be later, so the handle lives on the heap. */
  MPI_Comm* cell = malloc(sizeof(*cell));
  if (!cell) return HGR_STATUS(HGR_STATUS_RESOURCE_EXHAUSTED, "rank %d: %s: out of host memory", instance->rank, what);
  MPI_Request request = MPI_REQUEST_NULL;
  int error = MPI_Comm_idup(comm, cell, &request);
  if (error != MPI_SUCCESS) {
    free(cell);
    return HGR_MPI_STATUS(error, "rank %d: %s: MPI_Comm_idup", instance->rank, what);
  }
  int timed_out = 0;
  hgr_status_t status = hgr__mpi_wait(instance, &request, hgr__mpi_now() + instance->timeout_s, what, &timed_out);
  if (timed_out) {
    hgr__mpi_abandon(instance, cell);
    return status;
  }
  if (!status) {
    *out_comm = *cell;
    MPI_Comm_set_errhandler(*out_comm, MPI_ERRORS_RETURN);
  }
  free(cell);
  return status;
}

void hgr_mpi_options_init(hgr_mpi_options_t* options) {
  memset(options, 0, sizeof(*options));
  options->timeout_s = DEFAULT_TIMEOUT_S;
  hgr_instance_options_init(&options->instance);
}

static void instance_free(hgr_mpi_instance_t* instance) {
  hgr__mpi_progress_release(instance->progress);
  hgr_instance_release(instance->local);
  if (instance->comm != MPI_COMM_NULL) MPI_Comm_free(&instance->comm);
  while (instance->abandoned) {
    hgr_mpi_abandoned_t* next = instance->abandoned->next;
    free(instance->abandoned->block);
    free(instance->abandoned);
    instance->abandoned = next;
  }
  free(instance);
}

hgr_status_t hgr_mpi_instance_create(MPI_Comm comm, const hgr_mpi_options_t* options,
                                     hgr_mpi_instance_t** out_instance) {
  if (!out_instance) return HGR_STATUS(HGR_STATUS_INVALID_ARGUMENT, "hgr_mpi_instance_create: out_instance is NULL");
  *out_instance = NULL;
  int initialized = 0, finalized = 0;
  MPI_Initialized(&initialized);
  MPI_Finalized(&finalized);
  if (!initialized || finalized)
    return HGR_STATUS(HGR_STATUS_FAILED_PRECONDITION,
                      "hgr_mpi_instance_create: MPI is %s (call MPI_Init_thread with MPI_THREAD_MULTIPLE first)",
                      finalized ? "already finalized" : "not initialized");
  int provided = MPI_THREAD_SINGLE;
  MPI_Query_thread(&provided);
  if (provided != MPI_THREAD_MULTIPLE) {
    const char* level = provided == MPI_THREAD_SINGLE       ? "MPI_THREAD_SINGLE"
                        : provided == MPI_THREAD_FUNNELED   ? "MPI_THREAD_FUNNELED"
                        : provided == MPI_THREAD_SERIALIZED ? "MPI_THREAD_SERIALIZED"
                                                            : "an unknown thread level";
    return HGR_STATUS(HGR_STATUS_FAILED_PRECONDITION,
                      "hgr_mpi_instance_create: MPI provides %s, but hgr_mpi needs MPI_THREAD_MULTIPLE (its progress "
                      "thread calls MPI beside the calling thread): initialize MPI with MPI_Init_thread(..., "
                      "MPI_THREAD_MULTIPLE, ...)",
                      level);
  }
  if (comm == MPI_COMM_NULL)
    return HGR_STATUS(HGR_STATUS_INVALID_ARGUMENT, "hgr_mpi_instance_create: comm is MPI_COMM_NULL");
  hgr_mpi_options_t defaults;
  if (!options) {
    hgr_mpi_options_init(&defaults);
    options = &defaults;
  }
  hgr_mpi_instance_t* instance = calloc(1, sizeof(*instance));
  if (!instance) return HGR_STATUS(HGR_STATUS_RESOURCE_EXHAUSTED, "hgr_mpi_instance_create: out of host memory");
  instance->comm = MPI_COMM_NULL;
  instance->timeout_s = options->timeout_s > 0 && isfinite(options->timeout_s) ? options->timeout_s : DEFAULT_TIMEOUT_S;
  MPI_Comm_rank(comm, &instance->rank);
  MPI_Comm_size(comm, &instance->rank_count);
  hgr_status_t status = duplicate(instance, comm, "hgr_mpi_instance_create", &instance->comm);
  if (status) {
    /* No communicator to agree over: every rank got the same from the collective. */
    instance_free(instance);
    return status;
  }
  int* tag_ub = NULL;
  int found = 0;
  MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_TAG_UB, &tag_ub, &found);
  instance->tag_ub = found && tag_ub ? *tag_ub : 32767; /* the least MPI promises */
  status = hgr_status_annotate(hgr_instance_create(&options->instance, &instance->local), "creating the local instance");
  if (!status)
    status = hgr__mpi_progress_create(instance->rank, instance->tag_ub, instance->timeout_s, &instance->progress);
  status = hgr_mpi_agree(instance, status, "hgr_mpi_instance_create");
  if (status) {
    instance_free(instance);
    return status;
  }
  *out_instance = instance;
  return HGR_OK;
}

void hgr_mpi_instance_release(hgr_mpi_instance_t* instance) {
  if (instance) instance_free(instance);
}

hgr_instance_t* hgr_mpi_instance_local(const hgr_mpi_instance_t* instance) {
  return instance ? instance->local : NULL;
}

int hgr_mpi_rank(const hgr_mpi_instance_t* instance) { return instance ? instance->rank : -1; }

int hgr_mpi_rank_count(const hgr_mpi_instance_t* instance) { return instance ? instance->rank_count : 0; }

/* The messages of status and its follow-ups, for another rank (which has its own
 * file and line). NULL when memory is exhausted. */
static char* status_text(hgr_status_t status) {
  size_t length = 0;
  for (hgr_status_t at = status; at; at = hgr_status_next(at)) length += strlen(hgr_status_message(at)) + 8;
  char* text = malloc(length + 1);
  if (!text) return NULL;
  text[0] = '\0';
  for (hgr_status_t at = status; at; at = hgr_status_next(at)) {
    if (at != status) strcat(text, "; also: ");
    strcat(text, hgr_status_message(at));
  }
  return text;
}

/* Room for the failing rank's text; a longer one is cut (with "...").
 * Fixed, so that every rank knows the size of the broadcast beforehand. */
#define AGREE_TEXT_BYTES 4096

/* What the collectives of hgr_mpi_agree write: on the heap, since a rank that
 * times out leaves them pending. */
typedef struct agree_block_t {
  int mine;   /* this rank when it failed, else INT_MAX */
  int lowest; /* the lowest failing rank */
  struct {
    int code;
    char text[AGREE_TEXT_BYTES];
  } failure;  /* broadcast by the lowest failing rank */
} agree_block_t;

hgr_status_t hgr_mpi_agree(hgr_mpi_instance_t* instance, hgr_status_t local, const char* what) {
  if (!instance)
    return hgr_status_join(HGR_STATUS(HGR_STATUS_INVALID_ARGUMENT, "hgr_mpi_agree: instance is NULL"), local);
  if (!what) what = "hgr_mpi_agree";
  double deadline = hgr__mpi_now() + instance->timeout_s;
  agree_block_t* block = calloc(1, sizeof(*block));
  if (!block)
    return hgr_status_join(HGR_STATUS(HGR_STATUS_RESOURCE_EXHAUSTED, "rank %d: %s: out of host memory",
                                      instance->rank, what),
                           local);
  block->mine = local ? instance->rank : INT_MAX;
  MPI_Request request = MPI_REQUEST_NULL;
  int timed_out = 0;
  hgr_status_t status = HGR_OK;
  int error = MPI_Iallreduce(&block->mine, &block->lowest, 1, MPI_INT, MPI_MIN, instance->comm, &request);
  if (error != MPI_SUCCESS) {
    status = HGR_MPI_STATUS(error, "rank %d: %s: MPI_Iallreduce", instance->rank, what);
    goto cleanup;
  }
  if ((status = hgr__mpi_wait(instance, &request, deadline, what, &timed_out))) goto cleanup;
  if (block->lowest == INT_MAX) goto cleanup; /* every rank passed; local is HGR_OK */

  /* The lowest failing rank tells the others its code and text. */
  if (instance->rank == block->lowest) {
    char* text = status_text(local);
    block->failure.code = (int)hgr_status_code(local);
    snprintf(block->failure.text, sizeof(block->failure.text), "%s", text ? text : hgr_status_message(local));
    if (text && strlen(text) >= sizeof(block->failure.text))
      memcpy(block->failure.text + sizeof(block->failure.text) - 4, "...", 4);
    free(text);
  }
  error = MPI_Ibcast(&block->failure, (int)sizeof(block->failure), MPI_BYTE, block->lowest, instance->comm,
                     &request);
  if (error != MPI_SUCCESS) {
    status = HGR_MPI_STATUS(error, "rank %d: %s: MPI_Ibcast from rank %d", instance->rank, what, block->lowest);
    goto cleanup;
  }
  if ((status = hgr__mpi_wait(instance, &request, deadline, what, &timed_out))) goto cleanup;
  if (instance->rank == block->lowest) {
    status = hgr_status_annotate(local, "rank %d: %s", block->lowest, what);
  } else {
    hgr_status_code_t code = (hgr_status_code_t)block->failure.code;
    if (code == HGR_STATUS_OK) code = HGR_STATUS_INTERNAL;
    block->failure.text[sizeof(block->failure.text) - 1] = '\0';
    status = HGR_STATUS(code, "rank %d: %s: %s", block->lowest, what, block->failure.text);
    /* This rank's own failure, if any, follows: never dropped. */
    if (local) status = hgr_status_join(status, hgr_status_annotate(local, "rank %d", instance->rank));
  }
  local = HGR_OK;

cleanup:
  if (timed_out) hgr__mpi_abandon(instance, block);
  else free(block);
  /* A failure of the agreement itself comes first, this rank's own status after it. */
  return hgr_status_join(status, local);
}

hgr_status_t hgr__mpi_instance_transport(hgr_mpi_instance_t* instance, hgr_mpi_transport_t** out_transport) {
  *out_transport = NULL;
  MPI_Comm comm = MPI_COMM_NULL;
  hgr_status_t status = duplicate(instance, instance->comm, "creating a transport", &comm);
  if (status) return status;
  return hgr__mpi_transport_create(instance->progress, comm, out_transport);
}

hgr_status_t hgr_mpi_executor_create(hgr_mpi_instance_t* instance, hgr_graph_t* graph,
                                     const hgr_executor_options_t* options, hgr_executor_t** out_executor) {
  if (!out_executor)
    return HGR_STATUS(HGR_STATUS_INVALID_ARGUMENT, "hgr_mpi_executor_create: out_executor is NULL");
  *out_executor = NULL;
  if (!instance) return HGR_STATUS(HGR_STATUS_INVALID_ARGUMENT, "hgr_mpi_executor_create: instance is NULL");
  hgr_mpi_transport_t* transport = NULL;
  hgr_executor_t* executor = NULL;
  hgr_status_t status = hgr__mpi_instance_transport(instance, &transport);
  if (!status) {
    hgr_executor_options_t with_transport;
    if (options) with_transport = *options;
    else hgr_executor_options_init(&with_transport);
    with_transport.transport = hgr__mpi_transport(transport);
    status = hgr_executor_create(instance->local, graph, &with_transport, &executor);
  }
  status = hgr_mpi_agree(instance, status, "hgr_mpi_executor_create");
  if (status) {
    hgr_executor_release(executor);
    return status; /* the transport stays with the instance until it is released */
  }
  hgr__mpi_transport_set_executor(transport, executor);
  *out_executor = executor;
  return HGR_OK;
}

hgr_status_t hgr_mpi_executor_wait(hgr_mpi_instance_t* instance, hgr_executor_t* executor) {
  if (!instance) return HGR_STATUS(HGR_STATUS_INVALID_ARGUMENT, "hgr_mpi_executor_wait: instance is NULL");
  hgr_status_t status = hgr_executor_wait(executor);
  hgr_mpi_transport_t* transport = status ? hgr__mpi_transport_of_executor(instance->progress, executor) : NULL;
  char* failure = transport ? hgr__mpi_transport_failure_copy(transport) : NULL;
  if (failure) {
    /* The executor may have added it already (hgr/transport.h): then once is enough. */
    char* text = hgr_status_to_string(status);
    if (!text || !strstr(text, failure))
      status = hgr_status_join(status, HGR_STATUS(HGR_STATUS_UNAVAILABLE, "transport: %s", failure));
    free(text);
    free(failure);
  }
  return hgr_mpi_agree(instance, status, "hgr_mpi_executor_wait");
}
