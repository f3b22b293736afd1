/* libhgr_mpi's transport (hgr/transport.h over MPI), on 2 or more ranks: data of
 * every size arrives intact both ways, in order on one tag, from several threads at
 * once; a send's failure flag fails the receive; a receive with no sender times out
 * naming the peer; bad tags and ranks are refused. With --above-int-max: one
 * transfer of more than INT_MAX bytes (several MPI messages). */
#include <limits.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>

#include "mpi_check.h"
#include "mpi_internal.h"

static hgr_mpi_instance_t* instance;       /* timeout 60 s */
static hgr_mpi_instance_t* quick_instance; /* timeout 0.5 s */
static int rank, rank_count;

typedef struct tracker_t {
  atomic_int done;
  atomic_int failed;
} tracker_t;

static void on_done(void* user, int failed) {
  tracker_t* tracker = user;
  if (failed) atomic_fetch_add(&tracker->failed, 1);
  atomic_fetch_add(&tracker->done, 1);
}

static void wait_for(tracker_t* tracker, int count) {
  double deadline = check_now() + 60;
  while (atomic_load(&tracker->done) < count) {
    CHECK(check_now() < deadline);
    check_pause();
  }
}

static const hgr_transport_t* new_transport(hgr_mpi_instance_t* owner) {
  hgr_mpi_transport_t* transport = NULL;
  CHECK_OK(hgr__mpi_instance_transport(owner, &transport));
  const hgr_transport_t* view = hgr__mpi_transport(transport);
  CHECK(view->rank == rank && view->rank_count == rank_count);
  return view;
}

static unsigned char pattern(size_t i, int seed) { return (unsigned char)(i * 131u + (unsigned)seed * 7u + 1u); }

static void fill(unsigned char* data, size_t bytes, int seed) {
  for (size_t i = 0; i < bytes; ++i) data[i] = pattern(i, seed);
}

static int matches(const unsigned char* data, size_t bytes, int seed) {
  for (size_t i = 0; i < bytes; ++i)
    if (data[i] != pattern(i, seed)) return 0;
  return 1;
}

static void transport_carries_every_size_both_ways(void) {
  const hgr_transport_t* t = new_transport(instance);
  static const size_t sizes[] = {0, 1, 4095, 4096, 65536, (4u << 20) + 3};
  enum { SIZE_COUNT = sizeof(sizes) / sizeof(sizes[0]) };
  for (int peer = 1; peer < rank_count; ++peer) {
    if (rank != 0 && rank != peer) continue;
    int other = rank == 0 ? peer : 0;
    unsigned char* out[SIZE_COUNT];
    unsigned char* in[SIZE_COUNT];
    tracker_t sent = {0}, received = {0};
    for (int s = 0; s < SIZE_COUNT; ++s) {
      out[s] = malloc(sizes[s] + 1);
      in[s] = calloc(1, sizes[s] + 1);
      CHECK(out[s] && in[s]);
      fill(out[s], sizes[s], rank * 100 + s);
      /* Tags: the direction and the size, so each message has its own. */
      CHECK(t->receive(t->user, other, (uint32_t)(other * 100 + s), in[s], sizes[s], on_done, &received) == 0);
      CHECK(t->send(t->user, other, (uint32_t)(rank * 100 + s), out[s], sizes[s], 0, on_done, &sent) == 0);
    }
    wait_for(&sent, SIZE_COUNT);
    wait_for(&received, SIZE_COUNT);
    CHECK(atomic_load(&sent.failed) == 0);
    CHECK(atomic_load(&received.failed) == 0);
    for (int s = 0; s < SIZE_COUNT; ++s) {
      CHECK(matches(in[s], sizes[s], other * 100 + s));
      free(out[s]);
      free(in[s]);
    }
  }
  CHECK(t->failure(t->user) == NULL);
}

static void messages_on_one_tag_arrive_in_order(void) {
  enum { COUNT = 200, BYTES = 64 };
  const hgr_transport_t* t = new_transport(instance);
  int peer = rank == 0 ? 1 : 0;
  if (rank > 1) return;
  static unsigned char out[COUNT][BYTES], in[COUNT][BYTES];
  memset(in, 0, sizeof(in));
  tracker_t sent = {0}, received = {0};
  /* Rank 0 posts its receives first and sends after; rank 1 the other way round. */
  for (int pass = 0; pass < 2; ++pass) {
    int receiving = (pass == 0) == (rank == 0);
    for (int k = 0; k < COUNT; ++k) {
      if (receiving) {
        CHECK(t->receive(t->user, peer, 7, in[k], BYTES, on_done, &received) == 0);
      } else {
        fill(out[k], BYTES, k);
        CHECK(t->send(t->user, peer, 7, out[k], BYTES, 0, on_done, &sent) == 0);
      }
    }
  }
  wait_for(&sent, COUNT);
  wait_for(&received, COUNT);
  CHECK(atomic_load(&received.failed) == 0 && atomic_load(&sent.failed) == 0);
  for (int k = 0; k < COUNT; ++k) CHECK(matches(in[k], BYTES, k));
}

/* Driver callback threads, simulated: each sends and receives its own messages. */
enum { THREADS = 4, MESSAGES_PER_THREAD = 50, MESSAGE_BYTES = 3000 };

typedef struct worker_t {
  const hgr_transport_t* transport;
  int peer;
  int index;
  unsigned char out[MESSAGES_PER_THREAD][MESSAGE_BYTES];
  unsigned char in[MESSAGES_PER_THREAD][MESSAGE_BYTES];
  tracker_t sent, received;
  int start_failures;
} worker_t;

static void* worker_main(void* argument) {
  worker_t* worker = argument;
  const hgr_transport_t* t = worker->transport;
  for (int k = 0; k < MESSAGES_PER_THREAD; ++k) {
    uint32_t tag = (uint32_t)(1000 + worker->index);
    fill(worker->out[k], MESSAGE_BYTES, worker->index * 1000 + k);
    if (t->receive(t->user, worker->peer, tag, worker->in[k], MESSAGE_BYTES, on_done, &worker->received))
      worker->start_failures++;
    if (t->send(t->user, worker->peer, tag, worker->out[k], MESSAGE_BYTES, 0, on_done, &worker->sent))
      worker->start_failures++;
  }
  return NULL;
}

static void sends_from_several_threads_all_arrive(void) {
  const hgr_transport_t* t = new_transport(instance);
  if (rank > 1) return;
  worker_t* workers = calloc(THREADS, sizeof(*workers));
  pthread_t threads[THREADS];
  CHECK(workers);
  for (int i = 0; i < THREADS; ++i) {
    workers[i].transport = t;
    workers[i].peer = rank == 0 ? 1 : 0;
    workers[i].index = i;
    CHECK(pthread_create(&threads[i], NULL, worker_main, &workers[i]) == 0);
  }
  for (int i = 0; i < THREADS; ++i) {
    CHECK(pthread_join(threads[i], NULL) == 0);
    CHECK(workers[i].start_failures == 0);
    wait_for(&workers[i].sent, MESSAGES_PER_THREAD);
    wait_for(&workers[i].received, MESSAGES_PER_THREAD);
    CHECK(atomic_load(&workers[i].received.failed) == 0);
    for (int k = 0; k < MESSAGES_PER_THREAD; ++k) CHECK(matches(workers[i].in[k], MESSAGE_BYTES, i * 1000 + k));
  }
  free(workers);
}

static void failed_send_fails_the_receive(void) {
  const hgr_transport_t* t = new_transport(instance);
  if (rank > 1) return;
  static const size_t sizes[] = {0, 1000, (2u << 20)};
  enum { SIZE_COUNT = sizeof(sizes) / sizeof(sizes[0]) };
  unsigned char* data = calloc(1, 2u << 20);
  CHECK(data);
  tracker_t tracker = {0};
  for (int s = 0; s < SIZE_COUNT; ++s) {
    if (rank == 0)
      CHECK(t->send(t->user, 1, (uint32_t)(50 + s), data, sizes[s], 1, on_done, &tracker) == 0);
    else
      CHECK(t->receive(t->user, 0, (uint32_t)(50 + s), data, sizes[s], on_done, &tracker) == 0);
  }
  wait_for(&tracker, SIZE_COUNT);
  if (rank == 0) {
    CHECK(atomic_load(&tracker.failed) == 0); /* the send itself went through */
    CHECK(t->failure(t->user) == NULL);
  } else {
    CHECK(atomic_load(&tracker.failed) == SIZE_COUNT);
    CHECK_CONTAINS(t->failure(t->user), "rank 1: rank 0 reported that it could not produce the value for tag 50");
  }
  /* The transport still carries values after a failure. */
  tracker_t after = {0};
  unsigned char value[16];
  fill(value, sizeof(value), 3);
  if (rank == 0) CHECK(t->send(t->user, 1, 60, value, sizeof(value), 0, on_done, &after) == 0);
  else {
    memset(value, 0, sizeof(value));
    CHECK(t->receive(t->user, 0, 60, value, sizeof(value), on_done, &after) == 0);
  }
  wait_for(&after, 1);
  CHECK(atomic_load(&after.failed) == 0);
  CHECK(matches(value, sizeof(value), 3));
  free(data);
}

static void receive_with_no_sender_times_out_naming_the_peer(void) {
  const hgr_transport_t* t = new_transport(quick_instance);
  if (rank == 0) {
    unsigned char data[8];
    tracker_t tracker = {0};
    double started = check_now();
    CHECK(t->receive(t->user, 1, 42, data, sizeof(data), on_done, &tracker) == 0);
    wait_for(&tracker, 1);
    CHECK(check_now() - started >= 0.5);
    CHECK(atomic_load(&tracker.failed) == 1);
    CHECK(t->failure(t->user) != NULL);
    CHECK(!strcmp(t->failure(t->user), "rank 0: no data from rank 1 (tag 42) within 0.5 s"));
  }
}

static void tags_above_mpi_tag_ub_and_unknown_ranks_are_refused(void) {
  const hgr_transport_t* t = new_transport(instance);
  unsigned char data[4] = {0};
  tracker_t tracker = {0};
  CHECK(t->send(t->user, 0, UINT32_MAX, data, sizeof(data), 0, on_done, &tracker) != 0);
  CHECK_CONTAINS(t->failure(t->user), "tag 4294967295 is above MPI_TAG_UB");
  const hgr_transport_t* other = new_transport(instance);
  CHECK(other->receive(other->user, rank_count, 1, data, sizeof(data), on_done, &tracker) != 0);
  CHECK_CONTAINS(other->failure(other->user), "receive from rank");
  CHECK_CONTAINS(other->failure(other->user), "ranks");
  CHECK(atomic_load(&tracker.done) == 0); /* refused: done is never called */
}

static void transfer_above_int_max_bytes_arrives(void) {
  const hgr_transport_t* t = new_transport(instance);
  if (rank > 1) return;
  size_t bytes = (size_t)INT_MAX + 4097;
  unsigned char* data = malloc(bytes);
  CHECK(data);
  tracker_t tracker = {0};
  if (rank == 0) {
    for (size_t i = 0; i < bytes; i += 4096) data[i] = pattern(i / 4096, 9);
    data[bytes - 1] = 0x5a;
    CHECK(t->send(t->user, 1, 5, data, bytes, 0, on_done, &tracker) == 0);
  } else {
    memset(data, 0, bytes);
    CHECK(t->receive(t->user, 0, 5, data, bytes, on_done, &tracker) == 0);
  }
  wait_for(&tracker, 1);
  CHECK(atomic_load(&tracker.failed) == 0);
  if (rank == 1) {
    for (size_t i = 0; i < bytes; i += 4096) CHECK(data[i] == pattern(i / 4096, 9));
    CHECK(data[bytes - 1] == 0x5a);
  }
  free(data);
}

int main(int argc, char** argv) {
  check_mpi_init(&argc, &argv, &rank, &rank_count);
  hgr_mpi_options_t options;
  hgr_mpi_options_init(&options);
  CHECK_OK(hgr_mpi_instance_create(MPI_COMM_WORLD, &options, &instance));
  CHECK(hgr_mpi_rank(instance) == rank && hgr_mpi_rank_count(instance) == rank_count);
  CHECK(hgr_mpi_instance_local(instance) != NULL);
  if (argc > 1 && !strcmp(argv[1], "--above-int-max")) {
    RUN_TEST(transfer_above_int_max_bytes_arrives);
  } else {
    options.timeout_s = 0.5;
    CHECK_OK(hgr_mpi_instance_create(MPI_COMM_WORLD, &options, &quick_instance));
    RUN_TEST(transport_carries_every_size_both_ways);
    RUN_TEST(messages_on_one_tag_arrive_in_order);
    RUN_TEST(sends_from_several_threads_all_arrive);
    RUN_TEST(failed_send_fails_the_receive);
    RUN_TEST(receive_with_no_sender_times_out_naming_the_peer);
    RUN_TEST(tags_above_mpi_tag_ub_and_unknown_ranks_are_refused);
    hgr_mpi_instance_release(quick_instance);
  }
  hgr_mpi_instance_release(instance);
  hgr_mpi_instance_release(NULL);
  MPI_Finalize();
  return 0;
}
