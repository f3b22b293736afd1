/* hgr — devices of other processes: the transport an executor's cross-host copies
 * go through.
 *
 * A graph may run across several processes ("ranks"), each with its own instance
 * and devices: a device spec may name a rank, "r1/pocl:0" being rank 1's pocl:0
 * (a spec without one is the local rank's). Every rank creates an executor of the
 * same graph with the same bindings and the same transport layout; each creates only
 * its own devices' storages and runs only the nodes placed on them. A `__copy` node
 * between two ranks becomes a pair of steps: on the producing rank, the value is read
 * into host staging and, from the read's completion callback, handed to the
 * transport's send; on the consuming rank, the transport's receive fills host staging
 * and its completion sets a user event in the consumer's context, which the write into
 * the destination (and so its consumers) waits on. Nothing blocks between nodes.
 *
 * hgr's core knows no network library: libhgr_mpi (hgr/mpi.h) provides a transport
 * over MPI; an embedder may provide another. The messages of one copy are matched by
 * (peer rank, tag), in the order they were started: the transport must deliver them
 * in that order (MPI's non-overtaking rule does).
 *
 * Thread safety: send and receive are called from the thread calling hgr and from
 * OpenCL event callbacks (driver threads), so they must be thread-safe; done may be
 * called from any thread, and at most once per call. */
#ifndef HGR_TRANSPORT_H_
#define HGR_TRANSPORT_H_

#include <stddef.h>
#include <stdint.h>

#include "hgr/export.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Called once a send's data may be reused, or a receive's data has arrived. failed
 * is 0 on success, else the transfer did not complete (the peer reported a failure,
 * the connection failed or a timeout passed; the transport's failure() says why). */
typedef void (*hgr_transport_done_fn)(void* done_user, int failed);

typedef struct hgr_transport_t {
  int rank;        /* this process's rank, 0 <= rank < rank_count */
  int rank_count;  /* ranks taking part */
  void* user;      /* passed to every function below */
  /* Starts sending bytes at data to rank `to` under tag; data stays valid and
   * unchanged until done. failed != 0 tells the receiver that the value could not
   * be produced (a device failure here): the receiver's done is then called with
   * failed set. Returns 0 when started, else the transfer will not happen (done is
   * not called). */
  int (*send)(void* user, int to, uint32_t tag, const void* data, size_t bytes, int failed,
              hgr_transport_done_fn done, void* done_user);
  /* Starts receiving bytes into data from rank `from` under tag. Returns 0 when
   * started, else done is not called. */
  int (*receive)(void* user, int from, uint32_t tag, void* data, size_t bytes, hgr_transport_done_fn done,
                 void* done_user);
  /* Why a transfer failed (the first failure), or NULL when none did: the executor
   * adds it to the error it reports. May be NULL. */
  const char* (*failure)(void* user);
} hgr_transport_t;

#ifdef __cplusplus
}
#endif

#endif /* HGR_TRANSPORT_H_ */
