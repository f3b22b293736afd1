/* hgr — devices on other hosts through MPI (libhgr_mpi; docs/distributed.md).
 *
 * Built when CMake finds MPI (HGR_MPI); link hgr::hgr_mpi (find_package(hgr_mpi)). Every rank of a communicator creates an
 * hgr_mpi_instance_t over it: its own OpenCL instance (the devices of its host) and
 * the MPI side that carries cross-host copies (hgr/transport.h). Executors are then
 * created on every rank with the same graph and bindings, whose specs name ranks
 * ("r1/pocl:0"), through hgr_mpi_executor_create; each rank runs the nodes placed on
 * its devices and the copies between ranks go through MPI, ordered by OpenCL events.
 *
 * One progress thread per MPI instance drives every MPI transfer (non-blocking sends
 * and receives, tested in turn); the driver threads that complete OpenCL commands only
 * queue work for it. MPI must be initialized with MPI_THREAD_MULTIPLE (the calling
 * thread and the progress thread both call MPI).
 *
 * Collective calls (every rank of the communicator calls them, in the same order):
 * hgr_mpi_instance_create, hgr_mpi_instance_release, hgr_mpi_executor_create,
 * hgr_mpi_agree, hgr_mpi_gather_texts, hgr_mpi_broadcast_text, hgr_mpi_devices_write,
 * hgr_mpi_measure_link, hgr_mpi_place, hgr_mpi_executor_wait. Each
 * gives every rank the same result: an error on one rank is an error on every rank
 * naming that rank ("rank 1: ..."), and a collective that not every rank joins within
 * the instance's timeout is UNAVAILABLE ("rank 0: ...: not every rank answered within
 * 60 s"), never a hang; MPI's state is then undefined and the program should end
 * (MPI_Abort). (hgr has no DEADLINE_EXCEEDED code; UNAVAILABLE is the nearest.)
 *
 * The transport's transfers (hgr/transport.h) time out too: a receive with no data
 * within the timeout, or a send its peer has not taken, is cancelled and its done
 * called with failed set; the transport's failure() then says "rank 0: no data from
 * rank 1 (tag 42) within 60 s". Open MPI cannot cancel a send: such a send is given
 * up after a further 0.5 s, and MPI may still read its data if the peer receives it
 * later, another reason to end the program after a timeout. Tags must not exceed
 * MPI_TAG_UB (a send or receive with a larger tag is refused, failure() says why).
 * On the wire, a transfer of n > 0 bytes is ceil(n / 2^30) messages on its tag (so
 * sizes past INT_MAX work); a send with failed set sends them empty, which fails the
 * receive. A transfer of 0 bytes is one 1-byte message carrying the failed flag.
 *
 * Thread safety: an MPI instance is thread-compatible (one thread at a time calls
 * it); its progress thread is its own business. */
#ifndef HGR_MPI_H_
#define HGR_MPI_H_

#include <mpi.h>
#include <stdio.h>

#include "hgr/device.h"
#include "hgr/executor.h"
#include "hgr/export.h"
#include "hgr/place.h"
#include "hgr/status.h"
#include "hgr/transport.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct hgr_mpi_instance_s hgr_mpi_instance_t;

typedef struct hgr_mpi_options_t {
  /* Seconds a rank waits for another (a transfer, a collective) before failing
   * (UNAVAILABLE; a transfer's done gets failed). 0 or less: 60 seconds. */
  double timeout_s;
  hgr_instance_options_t instance; /* the local OpenCL instance's options */
} hgr_mpi_options_t;

/* Fills options with defaults: a 60 s timeout, the local instance's defaults. */
HGR_API void hgr_mpi_options_init(hgr_mpi_options_t* options);

/* Collective over comm (duplicated; the caller keeps comm). Creates the local
 * instance and starts the progress thread; options may be NULL for defaults.
 * *out_instance is set to NULL first and written only on success, on every rank or
 * on none. FAILED_PRECONDITION (on the calling rank, without any communication) when
 * MPI is not initialized, is finalized or does not provide MPI_THREAD_MULTIPLE;
 * otherwise a rank's failure to create its local instance fails every rank, naming
 * it. */
HGR_API hgr_status_t hgr_mpi_instance_create(MPI_Comm comm, const hgr_mpi_options_t* options,
                                             hgr_mpi_instance_t** out_instance);
/* Collective. Every executor created on it must have been released first (transfers
 * still outstanding are cancelled without calling their done). Frees the
 * communicators of every transport it gave out. NULL is a no-op (on every rank). */
HGR_API void hgr_mpi_instance_release(hgr_mpi_instance_t* instance);

/* The local OpenCL instance (borrowed, lives as long as instance), this process's
 * rank in the instance's communicator, and the number of ranks. */
HGR_API hgr_instance_t* hgr_mpi_instance_local(const hgr_mpi_instance_t* instance);
HGR_API int hgr_mpi_rank(const hgr_mpi_instance_t* instance);
HGR_API int hgr_mpi_rank_count(const hgr_mpi_instance_t* instance);

/* Collective: every rank passes its own status (taken: freed or returned); returns
 * HGR_OK on every rank when all passed HGR_OK, else on every rank the lowest failing
 * rank's error with its code, its message prefixed "rank N: what: " ("rank N: "
 * when what is NULL). The failing rank keeps its own status (file and line); the
 * others get its messages as text (cut at 4 KiB). A rank that failed too keeps its
 * own error joined after the lowest one's. */
HGR_API hgr_status_t hgr_mpi_agree(hgr_mpi_instance_t* instance, hgr_status_t local, const char* what);

/* Collective: every rank's text (length bytes; text may be NULL when length is 0)
 * to rank 0, in rank order. On rank 0 *out_texts is hgr_mpi_rank_count(instance)
 * NUL-terminated texts, rank r's at (*out_texts)[r], in one allocation: free(*out_texts)
 * frees them all; on the other ranks it is NULL. what names the step in errors, as
 * in hgr_mpi_agree (NULL: "hgr_mpi_gather_texts"). The caller's text is copied
 * before MPI sees it. Errors (bad arguments, memory, a text or the total past
 * INT_MAX bytes, a timeout) on every rank, naming the rank. */
HGR_API hgr_status_t hgr_mpi_gather_texts(hgr_mpi_instance_t* instance, const char* text, size_t length,
                                          const char* what, char*** out_texts);

/* Collective: rank 0's text (length bytes; both ignored on the other ranks) to every
 * rank. On every rank, rank 0 included, *out_text is a malloc'd NUL-terminated copy
 * (the caller frees it) and *out_length its length. what as above. Errors on every
 * rank, naming the rank. */
HGR_API hgr_status_t hgr_mpi_broadcast_text(hgr_mpi_instance_t* instance, const char* text, size_t length,
                                            const char* what, char** out_text, size_t* out_length);

/* Collective: hgr_executor_create on every rank with options->transport set to a
 * transport of this instance (its own duplicated communicator, so executors' messages
 * never match each other's), then hgr_mpi_agree on the result. options may be NULL
 * for defaults. The executor is released with hgr_executor_release as usual, before
 * the instance; the transport (and its communicator) stays with the instance until
 * hgr_mpi_instance_release. */
HGR_API hgr_status_t hgr_mpi_executor_create(hgr_mpi_instance_t* instance, hgr_graph_t* graph,
                                             const hgr_executor_options_t* options, hgr_executor_t** out_executor);

/* Collective: hgr_executor_wait, then hgr_mpi_agree: every rank learns whether the
 * runs completed everywhere, and otherwise the failing rank's error (with its
 * transport's failure text joined when the executor's error does not already
 * contain it). */
HGR_API hgr_status_t hgr_mpi_executor_wait(hgr_mpi_instance_t* instance, hgr_executor_t* executor);

/* Collective: rank 0 writes every rank's devices to out as `hgr devices` does for
 * one process, each spec prefixed with its rank ("r1/pocl:0"), every rank's
 * skipped platforms, and the pair matrix over all devices: "cross-host" between
 * ranks, hgr_instance_pair_class within one. Other ranks write nothing; out may be
 * NULL there (NULL on rank 0 is INVALID_ARGUMENT, on every rank). */
HGR_API hgr_status_t hgr_mpi_devices_write(hgr_mpi_instance_t* instance, FILE* out);

/* Collective: ping-pong between rank 0 and every other rank in turn at 4 KiB and
 * 4 MiB (the fastest of 5 round trips each, halved); latency and time per byte are
 * the line through both points. Every rank gets the slowest pair's (the one slowest
 * at 4 MiB) latency (ms) and time per byte (ms), the cross-host cost placement uses;
 * both are positive. With one rank there is no pair: both are 0. The two ranks of
 * the pair being measured poll MPI busily meanwhile. */
HGR_API hgr_status_t hgr_mpi_measure_link(hgr_mpi_instance_t* instance, double* out_latency_ms,
                                          double* out_ms_per_byte);

/* Collective: places graph over the devices of every rank, as `hgr run` does under
 * mpirun (docs/distributed.md), with the same graph and options on every rank
 * (their rank_measures must be NULL: this call fills them). When options' cross-host
 * costs are both 0, hgr_mpi_measure_link measures them. Then every rank but 0
 * finds and measures its own listed devices (hgr_place_measure_rank: for AUTO and
 * STAGES it calibrates them or reads its cost cache, with options->log's progress
 * lines), so the ranks' devices may differ; ranks on one host (MPI_Get_processor_name)
 * take turns, ranks of different hosts measure at once (for AUTO and STAGES each
 * logs its turn first: "measuring its devices in turn 1 of 2 ...");
 * rank 0 places with those measures (hgr_place) and sends the placed graph to every
 * rank. *out_graph: the placed graph on every rank (release it); *out_placement
 * (may be NULL): rank 0's placement, NULL on the other ranks. Errors: as hgr_place's
 * and hgr_place_measure_rank's, on every rank, naming the rank. */
HGR_API hgr_status_t hgr_mpi_place(hgr_mpi_instance_t* instance, hgr_graph_t* graph,
                                   const hgr_place_options_t* options, hgr_graph_t** out_graph,
                                   hgr_placement_t** out_placement);

#ifdef __cplusplus
}
#endif

#endif /* HGR_MPI_H_ */
