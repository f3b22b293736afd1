/* libhgr_mpi's internals, shared by its files and its tests (tests/mpi link the
 * static library and reach hgr__mpi_* here; the shared library hides them).
 *
 * An MPI instance owns: the duplicated communicator its collectives use, the local
 * hgr instance, one progress engine (mpi_progress.c) and the transports of its
 * executors, each over its own duplicated communicator. Buffers of a collective
 * that passed its deadline are "abandoned": MPI may still write them, so they live
 * until the instance is released. */
#ifndef HGR_MPI_INTERNAL_H_
#define HGR_MPI_INTERNAL_H_

#include <pthread.h>

#include "hgr/mpi.h"

typedef struct hgr_mpi_progress_s hgr_mpi_progress_t;
typedef struct hgr_mpi_transport_s hgr_mpi_transport_t;

/* One block a timed-out collective may still write. */
typedef struct hgr_mpi_abandoned_t {
  struct hgr_mpi_abandoned_t* next;
  void* block;
} hgr_mpi_abandoned_t;

struct hgr_mpi_instance_s {
  MPI_Comm comm; /* duplicated; collectives and the link measurement */
  int rank;
  int rank_count;
  double timeout_s;
  int tag_ub; /* MPI_TAG_UB */
  hgr_instance_t* local;
  hgr_mpi_progress_t* progress; /* owns the transports */
  hgr_mpi_abandoned_t* abandoned;
};

/* ---- mpi_progress.c ---- */

/* Starts the progress thread. timeout_s: how long a transfer may wait for its peer. */
hgr_status_t hgr__mpi_progress_create(int rank, int tag_ub, double timeout_s, hgr_mpi_progress_t** out_progress);
/* Stops the thread; transfers still outstanding are cancelled without their done
 * (every executor must have been released, and so have waited for its own). Then
 * frees every transport and its communicator. NULL is a no-op. */
void hgr__mpi_progress_release(hgr_mpi_progress_t* progress);

/* A transport over comm (taken: freed with the progress engine) whose transfers this
 * progress thread carries. Borrowed pointer, valid until hgr__mpi_progress_release. */
hgr_status_t hgr__mpi_transport_create(hgr_mpi_progress_t* progress, MPI_Comm comm,
                                       hgr_mpi_transport_t** out_transport);
const hgr_transport_t* hgr__mpi_transport(hgr_mpi_transport_t* transport);
/* The transport's first failure text (a copy the caller frees), or NULL. */
char* hgr__mpi_transport_failure_copy(hgr_mpi_transport_t* transport);
/* Which executor uses it (for hgr_mpi_executor_wait); NULL: none yet. */
void hgr__mpi_transport_set_executor(hgr_mpi_transport_t* transport, hgr_executor_t* executor);
hgr_mpi_transport_t* hgr__mpi_transport_of_executor(hgr_mpi_progress_t* progress, const hgr_executor_t* executor);

/* ---- mpi_instance.c ---- */

/* Collective: a new transport of this instance over its own duplicate of the
 * instance's communicator (what hgr_mpi_executor_create gives an executor). */
hgr_status_t hgr__mpi_instance_transport(hgr_mpi_instance_t* instance, hgr_mpi_transport_t** out_transport);

/* printf into a new heap string; NULL when memory is exhausted. */
char* hgr__mpi_format(const char* format, ...) HGR_PRINTF(1, 2);

/* A status for a failed MPI call: "<where> failed: <MPI's text>" (UNAVAILABLE). */
hgr_status_t hgr__mpi_call_status(int mpi_error, const char* file, int line, const char* format, ...)
    HGR_PRINTF(4, 5);
#define HGR_MPI_STATUS(error, ...) hgr__mpi_call_status((error), __FILE__, __LINE__, __VA_ARGS__)

/* Monotonic seconds. */
double hgr__mpi_now(void);

/* Tests *request until it completes or the deadline (hgr__mpi_now() seconds)
 * passes: then UNAVAILABLE "rank R: <what>: not every rank answered within N s"
 * (hgr has no DEADLINE_EXCEEDED code) and *out_timed_out = 1: the request is left
 * pending, so what it may still write must go to hgr__mpi_abandon. */
hgr_status_t hgr__mpi_wait(hgr_mpi_instance_t* instance, MPI_Request* request, double deadline,
                           const char* what, int* out_timed_out);
/* Keeps block (malloc'd) until the instance is released instead of freeing it now. */
void hgr__mpi_abandon(hgr_mpi_instance_t* instance, void* block);

/* ---- mpi_place.c ---- */

/* The calibration turns of hgr_mpi_place: hosts[r] names rank r's host (count
 * ranks). out_turns[r] is rank r's turn, its index among ranks 1..r of its host
 * (rank 0 has none: -1), so that ranks sharing a host measure one after another and
 * ranks of different hosts at once. Returns the number of turns. */
int hgr__mpi_host_turns(const char* const* hosts, int count, int* out_turns);

#endif /* HGR_MPI_INTERNAL_H_ */
