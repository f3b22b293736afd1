/* The progress thread and the transport (hgr/transport.h) over MPI.
 *
 * send and receive run on any thread, OpenCL driver callback threads included, so
 * they never call MPI: they validate, queue a transfer under the mutex and wake the
 * progress thread. That thread alone posts MPI_Isend/MPI_Irecv (in queue order, so
 * the transfers of one (peer, tag) keep the order they were started in: MPI's
 * non-overtaking rule does the rest), tests every outstanding request with
 * MPI_Testsome, and calls each transfer's done without holding the mutex, so done
 * may start further transfers. How it waits while requests are outstanding:
 *   - for 200 us after a pass that posted or completed a transfer, it only yields
 *     the core between passes (the other half of an exchange usually follows within
 *     that; yielding, not spinning, lets a driver thread on the same core run);
 *   - up to 10 ms after that pass, it goes on yielding while its yields come back
 *     at once (under 10 us): nothing else wants the core, so polling costs nobody
 *     anything and sees a large message's arrival or acknowledgement when it comes;
 *   - otherwise it sleeps between passes, 20 us doubling to 100 us, with a timer
 *     slack of 1 us where Linux allows setting it (the default 50 us made a 20 us
 *     sleep 70 us), and after each sleep yields once to learn whether the core has
 *     become free;
 *   - with nothing outstanding, it waits on the condition variable.
 * Measured on 2 shared cores (bench/notes.md, "Across ranks"): a 4 KiB copy's
 * round between two ranks fell from 0.23 to 0.07 ms, while two pipelined stages
 * kept their throughput; spinning without yielding, or sleeping a fixed 20 us with
 * the small slack, cost those stages a third to a half of it. Polling on while the
 * core is free took a 4 MiB copy from 0.53 to 0.80 of raw MPI's speed: sleeping, the
 * sender saw the receiver's acknowledgement up to 200 us late.
 *
 * The wire format, per transfer of `bytes` bytes on (peer, tag):
 *   bytes > 0   ceil(bytes / 2^30) messages of up to 2^30 bytes (MPI counts are
 *               ints); a send that carries `failed` sends each of them with zero
 *               bytes instead, and the receiver, which expects full chunks, sees a
 *               short count and fails.
 *   bytes == 0  one 1-byte message: 0 for a value, 1 for `failed`.
 * Timeouts: a transfer still outstanding timeout_s after it was started is
 * cancelled (MPI_Cancel) and its done is called with failed set once MPI reports
 * the request complete; a receive that MPI had already matched completes normally.
 * Open MPI cannot cancel a send, so a send whose cancel has not taken effect 0.5 s
 * later is given up (MPI_Request_free) and done(…, 1) called: MPI may still read
 * its data if the peer posts the receive later, but after a timeout the program is
 * meant to end (hgr/mpi.h). */
#include <errno.h>
#include <limits.h>
#include <sched.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#ifdef __linux__
#include <sys/prctl.h>
#endif

#include "mpi_internal.h"

#define CHUNK_BYTES ((size_t)1 << 30)
#define SEND_CANCEL_GRACE_S 0.5
/* The progress thread's waits (above). */
#define BUSY_S 0.0002
#define POLL_SLEEP_NS 20000L
#define POLL_SLEEP_MAX_NS 100000L
#define POLL_SLACK_NS 1000L
#define ALONE_POLL_S 0.01   /* polling on while the core is free, this long after activity */
#define YIELD_ALONE_S 10e-6 /* a yield that came back sooner found the core free */
/* How often the progress thread looks for transfers past their timeout. */
#define TIMEOUT_CHECK_S 0.001
/* At release, how long cancelled requests get to complete before they are freed. */
#define RELEASE_CANCEL_S 1.0

typedef struct transfer_t {
  struct transfer_t* next; /* in the queue */
  hgr_mpi_transport_t* transport;
  int is_send;
  int peer;
  int tag;
  unsigned char* data;
  size_t bytes;
  int send_failed;     /* a send that tells the receiver the value could not be produced */
  unsigned char flag;  /* the 1-byte payload of a zero-byte transfer */
  hgr_transport_done_fn done;
  void* done_user;
  double started;      /* when queued (hgr__mpi_now) */
  double cancelled_at; /* 0: not timed out */
  int pending;         /* its MPI requests not completed yet */
  int failed;
} transfer_t;

struct hgr_mpi_transport_s {
  hgr_mpi_transport_t* next;
  hgr_mpi_progress_t* progress;
  MPI_Comm comm;
  hgr_transport_t transport;
  hgr_executor_t* executor;
  char* failure; /* the first failure: set once under progress->mutex, then never changed */
};

/* One outstanding MPI request: requests[i] belongs to slots[i]. */
typedef struct request_slot_t {
  transfer_t* owner; /* NULL: completed or freed (compacted away) */
  int expected;      /* bytes a receive expects */
} request_slot_t;

struct hgr_mpi_progress_s {
  int rank;
  int tag_ub;
  double timeout_s;
  pthread_mutex_t mutex;
  pthread_cond_t wake;
  pthread_t thread;
  int thread_started;
  int stopping; /* under mutex */
  transfer_t* queue_head; /* under mutex */
  transfer_t** queue_tail;
  hgr_mpi_transport_t* transports; /* newest first; under mutex */
  /* The progress thread's own (and release's, once the thread has ended). */
  MPI_Request* requests;
  request_slot_t* slots;
  int* indices;
  MPI_Status* statuses;
  size_t request_count;
  size_t request_capacity;
  double last_timeout_check;
};

static void record_failure(hgr_mpi_transport_t* transport, const char* format, ...) HGR_PRINTF(2, 3);

/* Keeps the first failure only: later ones are usually its consequences. */
static void record_failure(hgr_mpi_transport_t* transport, const char* format, ...) {
  hgr_mpi_progress_t* progress = transport->progress;
  pthread_mutex_lock(&progress->mutex);
  if (!transport->failure) {
    va_list args;
    va_start(args, format);
    char probe[1];
    va_list copy;
    va_copy(copy, args);
    int length = vsnprintf(probe, sizeof(probe), format, copy);
    va_end(copy);
    char* text = length >= 0 ? malloc((size_t)length + 1) : NULL;
    if (text) vsnprintf(text, (size_t)length + 1, format, args);
    va_end(args);
    /* A static text when even that fails: failure() must still say something. */
    transport->failure = text ? text : (char*)"out of host memory while recording a transfer failure";
  }
  pthread_mutex_unlock(&progress->mutex);
}

static int is_static_failure(const char* failure) {
  return failure && !strcmp(failure, "out of host memory while recording a transfer failure");
}

static const char* mpi_error_text(int error, char* buffer) {
  int length = 0;
  if (MPI_Error_string(error, buffer, &length) != MPI_SUCCESS) snprintf(buffer, MPI_MAX_ERROR_STRING, "MPI error %d", error);
  return buffer;
}

/* ---- called from any thread ---- */

static int start_transfer(hgr_mpi_transport_t* transport, int is_send, int peer, uint32_t tag, const void* data,
                          size_t bytes, int failed, hgr_transport_done_fn done, void* done_user) {
  hgr_mpi_progress_t* progress = transport->progress;
  const char* verb = is_send ? "send to" : "receive from";
  if (peer < 0 || peer >= transport->transport.rank_count) {
    record_failure(transport, "rank %d: %s rank %d (tag %u), but there are %d ranks", progress->rank, verb, peer,
                   tag, transport->transport.rank_count);
    return 1;
  }
  if (tag > (uint32_t)progress->tag_ub) {
    record_failure(transport, "rank %d: %s rank %d: tag %u is above MPI_TAG_UB (%d)", progress->rank, verb, peer,
                   tag, progress->tag_ub);
    return 1;
  }
  if (bytes && !data) {
    record_failure(transport, "rank %d: %s rank %d (tag %u): %zu bytes at NULL", progress->rank, verb, peer, tag,
                   bytes);
    return 1;
  }
  transfer_t* transfer = calloc(1, sizeof(*transfer));
  if (!transfer) {
    record_failure(transport, "rank %d: %s rank %d (tag %u): out of host memory", progress->rank, verb, peer, tag);
    return 1;
  }
  transfer->transport = transport;
  transfer->is_send = is_send;
  transfer->peer = peer;
  transfer->tag = (int)tag;
  transfer->data = (unsigned char*)data;
  transfer->bytes = bytes;
  transfer->send_failed = is_send && failed;
  transfer->flag = (unsigned char)(is_send && failed ? 1 : 0);
  transfer->done = done;
  transfer->done_user = done_user;
  transfer->started = hgr__mpi_now();
  pthread_mutex_lock(&progress->mutex);
  int stopping = progress->stopping;
  if (!stopping) {
    *progress->queue_tail = transfer;
    progress->queue_tail = &transfer->next;
    pthread_cond_signal(&progress->wake);
  }
  pthread_mutex_unlock(&progress->mutex);
  if (stopping) {
    free(transfer);
    record_failure(transport, "rank %d: %s rank %d (tag %u): the MPI instance is being released", progress->rank,
                   verb, peer, tag);
    return 1;
  }
  return 0;
}

static int transport_send(void* user, int to, uint32_t tag, const void* data, size_t bytes, int failed,
                          hgr_transport_done_fn done, void* done_user) {
  return start_transfer(user, 1, to, tag, data, bytes, failed, done, done_user);
}

static int transport_receive(void* user, int from, uint32_t tag, void* data, size_t bytes,
                             hgr_transport_done_fn done, void* done_user) {
  return start_transfer(user, 0, from, tag, data, bytes, 0, done, done_user);
}

static const char* transport_failure(void* user) {
  hgr_mpi_transport_t* transport = user;
  pthread_mutex_lock(&transport->progress->mutex);
  const char* failure = transport->failure;
  pthread_mutex_unlock(&transport->progress->mutex);
  return failure;
}

/* ---- the progress thread ---- */

static void finish(transfer_t* transfer) {
  if (transfer->done) transfer->done(transfer->done_user, transfer->failed ? 1 : 0);
  free(transfer);
}

static int reserve_requests(hgr_mpi_progress_t* progress, size_t more) {
  if (progress->request_count + more <= progress->request_capacity) return 1;
  size_t capacity = progress->request_capacity ? progress->request_capacity : 64;
  while (capacity < progress->request_count + more) capacity *= 2;
  if (capacity > INT_MAX) return 0; /* MPI_Testsome takes an int count */
  MPI_Request* requests = realloc(progress->requests, capacity * sizeof(*requests));
  if (requests) progress->requests = requests;
  request_slot_t* slots = realloc(progress->slots, capacity * sizeof(*slots));
  if (slots) progress->slots = slots;
  int* indices = realloc(progress->indices, capacity * sizeof(*indices));
  if (indices) progress->indices = indices;
  MPI_Status* statuses = realloc(progress->statuses, capacity * sizeof(*statuses));
  if (statuses) progress->statuses = statuses;
  if (!requests || !slots || !indices || !statuses) return 0;
  progress->request_capacity = capacity;
  return 1;
}

static void post(hgr_mpi_progress_t* progress, transfer_t* transfer) {
  hgr_mpi_transport_t* transport = transfer->transport;
  size_t chunks = transfer->bytes ? (transfer->bytes - 1) / CHUNK_BYTES + 1 : 1;
  if (!reserve_requests(progress, chunks)) {
    record_failure(transport, "rank %d: %s rank %d (tag %d): out of host memory", progress->rank,
                   transfer->is_send ? "send to" : "receive from", transfer->peer, transfer->tag);
    transfer->failed = 1;
    finish(transfer);
    return;
  }
  for (size_t chunk = 0; chunk < chunks; ++chunk) {
    void* at = &transfer->flag;
    int count = 1;
    if (transfer->bytes) {
      size_t offset = chunk * CHUNK_BYTES;
      size_t length = transfer->bytes - offset < CHUNK_BYTES ? transfer->bytes - offset : CHUNK_BYTES;
      at = transfer->data + offset;
      count = (int)length;
    }
    int expected = count;
    if (transfer->is_send && transfer->send_failed && transfer->bytes) count = 0;
    MPI_Request request = MPI_REQUEST_NULL;
    int error = transfer->is_send
                    ? MPI_Isend(at, count, MPI_BYTE, transfer->peer, transfer->tag, transport->comm, &request)
                    : MPI_Irecv(at, count, MPI_BYTE, transfer->peer, transfer->tag, transport->comm, &request);
    if (error != MPI_SUCCESS) {
      char text[MPI_MAX_ERROR_STRING];
      record_failure(transport, "rank %d: %s of %d bytes %s rank %d (tag %d) failed: %s", progress->rank,
                     transfer->is_send ? "MPI_Isend" : "MPI_Irecv", count, transfer->is_send ? "to" : "from",
                     transfer->peer, transfer->tag, mpi_error_text(error, text));
      transfer->failed = 1;
      break; /* the chunks already posted complete (or time out) as usual */
    }
    progress->requests[progress->request_count] = request;
    progress->slots[progress->request_count] = (request_slot_t){transfer, expected};
    progress->request_count++;
    transfer->pending++;
  }
  if (!transfer->pending) finish(transfer);
}

static void request_done(hgr_mpi_progress_t* progress, request_slot_t slot, MPI_Status* status, int check_error) {
  transfer_t* transfer = slot.owner;
  hgr_mpi_transport_t* transport = transfer->transport;
  int cancelled = 0;
  if (check_error && status->MPI_ERROR != MPI_SUCCESS) {
    char text[MPI_MAX_ERROR_STRING];
    record_failure(transport, "rank %d: %s rank %d (tag %d) failed: %s", progress->rank,
                   transfer->is_send ? "sending to" : "receiving from", transfer->peer, transfer->tag,
                   mpi_error_text(status->MPI_ERROR, text));
    transfer->failed = 1;
  } else if (MPI_Test_cancelled(status, &cancelled) == MPI_SUCCESS && cancelled) {
    transfer->failed = 1; /* the timeout recorded why */
  } else if (!transfer->is_send) {
    int count = -1;
    MPI_Get_count(status, MPI_BYTE, &count);
    if (transfer->bytes == 0 ? count != 1 || transfer->flag : count != slot.expected) {
      if ((transfer->bytes == 0 && count == 1) || count == 0)
        record_failure(transport, "rank %d: rank %d reported that it could not produce the value for tag %d",
                       progress->rank, transfer->peer, transfer->tag);
      else
        record_failure(transport, "rank %d: %d bytes from rank %d (tag %d), expected %d", progress->rank, count,
                       transfer->peer, transfer->tag, slot.expected);
      transfer->failed = 1;
    }
  }
  if (--transfer->pending == 0) finish(transfer);
}

static void compact(hgr_mpi_progress_t* progress) {
  size_t kept = 0;
  for (size_t i = 0; i < progress->request_count; ++i) {
    if (!progress->slots[i].owner) continue;
    progress->requests[kept] = progress->requests[i];
    progress->slots[kept] = progress->slots[i];
    kept++;
  }
  progress->request_count = kept;
}

/* Returns how many requests completed. */
static int test_requests(hgr_mpi_progress_t* progress) {
  if (!progress->request_count) return 0;
  int completed = 0;
  int error = MPI_Testsome((int)progress->request_count, progress->requests, &completed, progress->indices,
                           progress->statuses);
  if (error != MPI_SUCCESS && error != MPI_ERR_IN_STATUS) {
    /* Nothing says which request failed: fail them all rather than spin. */
    char text[MPI_MAX_ERROR_STRING];
    mpi_error_text(error, text);
    for (size_t i = 0; i < progress->request_count; ++i) {
      transfer_t* transfer = progress->slots[i].owner;
      record_failure(transfer->transport, "rank %d: MPI_Testsome failed: %s", progress->rank, text);
      transfer->failed = 1;
      if (progress->requests[i] != MPI_REQUEST_NULL) MPI_Request_free(&progress->requests[i]);
      progress->slots[i].owner = NULL;
      if (--transfer->pending == 0) finish(transfer);
    }
    compact(progress);
    return 1;
  }
  if (completed == MPI_UNDEFINED || completed == 0) return 0;
  for (int k = 0; k < completed; ++k) {
    int i = progress->indices[k];
    request_slot_t slot = progress->slots[i];
    progress->slots[i].owner = NULL;
    request_done(progress, slot, &progress->statuses[k], error == MPI_ERR_IN_STATUS);
  }
  compact(progress);
  return completed;
}

static void check_timeouts(hgr_mpi_progress_t* progress) {
  double now = hgr__mpi_now();
  if (now - progress->last_timeout_check < TIMEOUT_CHECK_S) return;
  progress->last_timeout_check = now;
  int freed = 0;
  for (size_t i = 0; i < progress->request_count; ++i) {
    transfer_t* transfer = progress->slots[i].owner;
    if (!transfer) continue;
    if (!transfer->cancelled_at && now - transfer->started > progress->timeout_s) {
      transfer->cancelled_at = now;
      if (transfer->is_send)
        record_failure(transfer->transport, "rank %d: rank %d did not take the data for tag %d within %g s",
                       progress->rank, transfer->peer, transfer->tag, progress->timeout_s);
      else
        record_failure(transfer->transport, "rank %d: no data from rank %d (tag %d) within %g s", progress->rank,
                       transfer->peer, transfer->tag, progress->timeout_s);
      for (size_t j = i; j < progress->request_count; ++j)
        if (progress->slots[j].owner == transfer) MPI_Cancel(&progress->requests[j]);
    } else if (transfer->is_send && transfer->cancelled_at && now - transfer->cancelled_at > SEND_CANCEL_GRACE_S) {
      transfer->failed = 1;
      for (size_t j = i; j < progress->request_count; ++j) {
        if (progress->slots[j].owner != transfer) continue;
        MPI_Request_free(&progress->requests[j]);
        progress->slots[j].owner = NULL;
        transfer->pending--;
      }
      finish(transfer);
      freed = 1;
    }
  }
  if (freed) compact(progress);
}

/* Yields the core; returns whether nothing else ran meanwhile (the yield came back
 * at once), that is whether polling costs nobody anything. */
static int yield_alone(void) {
  double before = hgr__mpi_now();
  sched_yield();
  return hgr__mpi_now() - before < YIELD_ALONE_S;
}

static void* progress_main(void* argument) {
  hgr_mpi_progress_t* progress = argument;
#ifdef PR_SET_TIMERSLACK
  prctl(PR_SET_TIMERSLACK, POLL_SLACK_NS); /* this thread's own; failing only costs latency */
#endif
  double last_activity = 0;
  int alone = 0;
  long sleep_ns = POLL_SLEEP_NS;
  pthread_mutex_lock(&progress->mutex);
  while (!progress->stopping) {
    transfer_t* incoming = progress->queue_head;
    progress->queue_head = NULL;
    progress->queue_tail = &progress->queue_head;
    if (!incoming && !progress->request_count) {
      pthread_cond_wait(&progress->wake, &progress->mutex);
      continue;
    }
    pthread_mutex_unlock(&progress->mutex);
    int active = incoming != NULL;
    while (incoming) {
      transfer_t* next = incoming->next;
      post(progress, incoming);
      incoming = next;
    }
    if (test_requests(progress)) active = 1;
    check_timeouts(progress);
    double now = hgr__mpi_now();
    if (active) {
      last_activity = now;
      sleep_ns = POLL_SLEEP_NS;
    }
    double idle = now - last_activity;
    if (progress->request_count && (idle <= BUSY_S || (alone && idle <= ALONE_POLL_S))) {
      alone = yield_alone();
    } else if (progress->request_count) {
      struct timespec pause = {0, sleep_ns};
      nanosleep(&pause, NULL);
      sleep_ns = sleep_ns * 2 < POLL_SLEEP_MAX_NS ? sleep_ns * 2 : POLL_SLEEP_MAX_NS;
      if (idle <= ALONE_POLL_S) alone = yield_alone();
    }
    pthread_mutex_lock(&progress->mutex);
  }
  pthread_mutex_unlock(&progress->mutex);
  return NULL;
}

/* ---- lifetime ---- */

hgr_status_t hgr__mpi_progress_create(int rank, int tag_ub, double timeout_s, hgr_mpi_progress_t** out_progress) {
  *out_progress = NULL;
  hgr_mpi_progress_t* progress = calloc(1, sizeof(*progress));
  if (!progress) return HGR_STATUS(HGR_STATUS_RESOURCE_EXHAUSTED, "out of host memory for the MPI progress thread");
  progress->rank = rank;
  progress->tag_ub = tag_ub;
  progress->timeout_s = timeout_s;
  progress->queue_tail = &progress->queue_head;
  hgr_status_t status = HGR_OK;
  int error = pthread_mutex_init(&progress->mutex, NULL);
  if (error) {
    free(progress);
    return HGR_STATUS(HGR_STATUS_RESOURCE_EXHAUSTED, "pthread_mutex_init failed: %s", strerror(error));
  }
  if ((error = pthread_cond_init(&progress->wake, NULL))) {
    pthread_mutex_destroy(&progress->mutex);
    free(progress);
    return HGR_STATUS(HGR_STATUS_RESOURCE_EXHAUSTED, "pthread_cond_init failed: %s", strerror(error));
  }
  if ((error = pthread_create(&progress->thread, NULL, progress_main, progress)))
    status = HGR_STATUS(HGR_STATUS_RESOURCE_EXHAUSTED, "starting the MPI progress thread: pthread_create failed: %s",
                        strerror(error));
  else
    progress->thread_started = 1;
  if (status) {
    hgr__mpi_progress_release(progress);
    return status;
  }
  *out_progress = progress;
  return HGR_OK;
}

void hgr__mpi_progress_release(hgr_mpi_progress_t* progress) {
  if (!progress) return;
  if (progress->thread_started) {
    pthread_mutex_lock(&progress->mutex);
    progress->stopping = 1;
    pthread_cond_signal(&progress->wake);
    pthread_mutex_unlock(&progress->mutex);
    pthread_join(progress->thread, NULL);
  }
  /* The thread has ended: what it left is this thread's. Queued transfers were never
   * posted; outstanding ones are cancelled. Neither calls done (see the header). */
  while (progress->queue_head) {
    transfer_t* next = progress->queue_head->next;
    free(progress->queue_head);
    progress->queue_head = next;
  }
  for (size_t i = 0; i < progress->request_count; ++i) MPI_Cancel(&progress->requests[i]);
  double deadline = hgr__mpi_now() + RELEASE_CANCEL_S;
  while (progress->request_count && hgr__mpi_now() < deadline) {
    for (size_t i = 0; i < progress->request_count; ++i) {
      int done = 0;
      MPI_Test(&progress->requests[i], &done, MPI_STATUS_IGNORE);
      if (!done) continue;
      transfer_t* transfer = progress->slots[i].owner;
      progress->slots[i].owner = NULL;
      if (--transfer->pending == 0) free(transfer);
    }
    compact(progress);
  }
  for (size_t i = 0; i < progress->request_count; ++i) {
    MPI_Request_free(&progress->requests[i]);
    transfer_t* transfer = progress->slots[i].owner;
    if (--transfer->pending == 0) free(transfer);
  }
  while (progress->transports) {
    hgr_mpi_transport_t* next = progress->transports->next;
    MPI_Comm_free(&progress->transports->comm);
    if (!is_static_failure(progress->transports->failure)) free(progress->transports->failure);
    free(progress->transports);
    progress->transports = next;
  }
  free(progress->requests);
  free(progress->slots);
  free(progress->indices);
  free(progress->statuses);
  pthread_cond_destroy(&progress->wake);
  pthread_mutex_destroy(&progress->mutex);
  free(progress);
}

hgr_status_t hgr__mpi_transport_create(hgr_mpi_progress_t* progress, MPI_Comm comm,
                                       hgr_mpi_transport_t** out_transport) {
  *out_transport = NULL;
  hgr_mpi_transport_t* transport = calloc(1, sizeof(*transport));
  if (!transport) {
    MPI_Comm_free(&comm);
    return HGR_STATUS(HGR_STATUS_RESOURCE_EXHAUSTED, "out of host memory for an MPI transport");
  }
  transport->progress = progress;
  transport->comm = comm;
  MPI_Comm_rank(comm, &transport->transport.rank);
  MPI_Comm_size(comm, &transport->transport.rank_count);
  transport->transport.user = transport;
  transport->transport.send = transport_send;
  transport->transport.receive = transport_receive;
  transport->transport.failure = transport_failure;
  pthread_mutex_lock(&progress->mutex);
  transport->next = progress->transports;
  progress->transports = transport;
  pthread_mutex_unlock(&progress->mutex);
  *out_transport = transport;
  return HGR_OK;
}

const hgr_transport_t* hgr__mpi_transport(hgr_mpi_transport_t* transport) { return &transport->transport; }

char* hgr__mpi_transport_failure_copy(hgr_mpi_transport_t* transport) {
  const char* failure = transport_failure(transport);
  return failure ? hgr__mpi_format("%s", failure) : NULL;
}

void hgr__mpi_transport_set_executor(hgr_mpi_transport_t* transport, hgr_executor_t* executor) {
  pthread_mutex_lock(&transport->progress->mutex);
  transport->executor = executor;
  pthread_mutex_unlock(&transport->progress->mutex);
}

hgr_mpi_transport_t* hgr__mpi_transport_of_executor(hgr_mpi_progress_t* progress, const hgr_executor_t* executor) {
  pthread_mutex_lock(&progress->mutex);
  hgr_mpi_transport_t* transport = progress->transports;
  while (transport && transport->executor != executor) transport = transport->next;
  pthread_mutex_unlock(&progress->mutex);
  return transport;
}
