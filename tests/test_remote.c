/* Copies between ranks (hgr/transport.h) through the executor's real path, with the
 * ranks as executors of one process joined by an in-memory transport (a "hub" with
 * its own delivery thread, as an MPI progress thread would be), so no MPI is needed:
 *   - the duplex example split over two ranks gives its expected output; inputs and
 *     outputs of the other rank are refused with a message naming it;
 *   - random graphs over three ranks (pocl:0, pocl:1 and rusticl:0 when present),
 *     with tensors large enough to travel in several chunks, several runs in flight,
 *     match the plain-C reference;
 *   - a transfer that fails is reported by the receiving rank naming the node and the
 *     peer rank, and no rank hangs;
 *   - bindings that name ranks are checked: none without a transport, none past the
 *     ranks taking part, a malformed prefix.
 * tests/mpi/ runs the same path over MPI between processes. */
#include <pthread.h>
#include <string.h>

#include "graphgen.h"
#include "hgr/npy.h"
#include "reference.h"
#include "testlib.h"

#define RANKS 3

/* ---- the in-memory transport ---------------------------------------------------------- */

typedef struct message_t {
  int from, to;
  uint32_t tag;
  void* data;
  size_t bytes;
  int failed;
  struct message_t* next;
} message_t;

typedef struct wanted_t {
  int from, to;
  uint32_t tag;
  void* data;
  size_t bytes;
  hgr_transport_done_fn done;
  void* done_user;
  struct wanted_t* next;
} wanted_t;

typedef struct completion_t {
  hgr_transport_done_fn done;
  void* done_user;
  int failed;
  struct completion_t* next;
} completion_t;

typedef struct hub_t {
  pthread_mutex_t lock;
  pthread_cond_t wake;
  pthread_t thread;
  bool stop;
  message_t* messages;       /* sent, not yet received, oldest first */
  wanted_t* receives;        /* posted, not yet matched, oldest first */
  completion_t* completions; /* to call from the hub's thread, oldest first */
  int fail_sends;            /* the next fail_sends sends arrive as failed */
  uint64_t sent_bytes;
  char failure[128];
  hgr_transport_t transports[RANKS];
} hub_t;

#define APPEND(head, item)                              \
  do {                                                  \
    __typeof__(head)* at_ = &(head);                    \
    while (*at_) at_ = &(*at_)->next;                   \
    *at_ = (item);                                      \
  } while (0)

static void complete(hub_t* hub, hgr_transport_done_fn done, void* done_user, int failed) {
  completion_t* completion = calloc(1, sizeof(*completion));
  assert_non_null(completion);
  *completion = (completion_t){done, done_user, failed, NULL};
  APPEND(hub->completions, completion);
  pthread_cond_signal(&hub->wake);
}

/* Delivers message into wanted (the lock is held). */
static void deliver(hub_t* hub, message_t* message, wanted_t* wanted) {
  bool failed = message->failed || message->bytes != wanted->bytes;
  if (!failed) memcpy(wanted->data, message->data, message->bytes);
  if (message->bytes != wanted->bytes)
    snprintf(hub->failure, sizeof(hub->failure), "hub: %zu bytes sent, %zu expected", message->bytes, wanted->bytes);
  complete(hub, wanted->done, wanted->done_user, failed);
  free(message->data);
  free(message);
  free(wanted);
}

static int hub_send(void* user, int to, uint32_t tag, const void* data, size_t bytes, int failed,
                    hgr_transport_done_fn done, void* done_user) {
  hgr_transport_t* transport = user;
  hub_t* hub = (hub_t*)((char*)transport - offsetof(hub_t, transports) - (size_t)transport->rank * sizeof(*transport));
  message_t* message = calloc(1, sizeof(*message));
  assert_non_null(message);
  *message = (message_t){transport->rank, to, tag, malloc(bytes ? bytes : 1), bytes, failed, NULL};
  assert_non_null(message->data);
  memcpy(message->data, data, bytes);
  pthread_mutex_lock(&hub->lock);
  if (hub->fail_sends > 0) {
    hub->fail_sends--;
    message->failed = 1;
    snprintf(hub->failure, sizeof(hub->failure), "hub: a send from rank %d failed (injected)", transport->rank);
  }
  hub->sent_bytes += bytes;
  complete(hub, done, done_user, 0); /* the data was copied */
  wanted_t** at = &hub->receives;
  while (*at && !((*at)->from == message->from && (*at)->to == to && (*at)->tag == tag)) at = &(*at)->next;
  if (*at) {
    wanted_t* wanted = *at;
    *at = wanted->next;
    deliver(hub, message, wanted);
  } else {
    APPEND(hub->messages, message);
  }
  pthread_mutex_unlock(&hub->lock);
  return 0;
}

static int hub_receive(void* user, int from, uint32_t tag, void* data, size_t bytes, hgr_transport_done_fn done,
                       void* done_user) {
  hgr_transport_t* transport = user;
  hub_t* hub = (hub_t*)((char*)transport - offsetof(hub_t, transports) - (size_t)transport->rank * sizeof(*transport));
  wanted_t* wanted = calloc(1, sizeof(*wanted));
  assert_non_null(wanted);
  *wanted = (wanted_t){from, transport->rank, tag, data, bytes, done, done_user, NULL};
  pthread_mutex_lock(&hub->lock);
  message_t** at = &hub->messages;
  while (*at && !((*at)->from == from && (*at)->to == transport->rank && (*at)->tag == tag)) at = &(*at)->next;
  if (*at) {
    message_t* message = *at;
    *at = message->next;
    deliver(hub, message, wanted);
  } else {
    APPEND(hub->receives, wanted);
  }
  pthread_mutex_unlock(&hub->lock);
  return 0;
}

static const char* hub_failure(void* user) {
  hgr_transport_t* transport = user;
  hub_t* hub = (hub_t*)((char*)transport - offsetof(hub_t, transports) - (size_t)transport->rank * sizeof(*transport));
  return hub->failure[0] ? hub->failure : NULL;
}

static void* hub_thread(void* user) {
  hub_t* hub = user;
  pthread_mutex_lock(&hub->lock);
  for (;;) {
    while (!hub->completions && !hub->stop) pthread_cond_wait(&hub->wake, &hub->lock);
    if (!hub->completions) break;
    completion_t* completion = hub->completions;
    hub->completions = completion->next;
    pthread_mutex_unlock(&hub->lock);
    completion->done(completion->done_user, completion->failed);
    free(completion);
    pthread_mutex_lock(&hub->lock);
  }
  pthread_mutex_unlock(&hub->lock);
  return NULL;
}

static hub_t* hub_start(int ranks) {
  hub_t* hub = calloc(1, sizeof(*hub));
  assert_non_null(hub);
  pthread_mutex_init(&hub->lock, NULL);
  pthread_cond_init(&hub->wake, NULL);
  for (int r = 0; r < RANKS; ++r) {
    hgr_transport_t* transport = &hub->transports[r];
    *transport = (hgr_transport_t){r, ranks, transport, hub_send, hub_receive, hub_failure};
  }
  assert_int_equal(pthread_create(&hub->thread, NULL, hub_thread, hub), 0);
  return hub;
}

/* Every executor using the hub must have been released. */
static void hub_stop(hub_t* hub) {
  pthread_mutex_lock(&hub->lock);
  hub->stop = true;
  pthread_cond_signal(&hub->wake);
  pthread_mutex_unlock(&hub->lock);
  pthread_join(hub->thread, NULL);
  assert_null(hub->completions);
  /* Nothing may be left unmatched: every send had its receive. */
  assert_null(hub->messages);
  assert_null(hub->receives);
  pthread_mutex_destroy(&hub->lock);
  pthread_cond_destroy(&hub->wake);
  free(hub);
}

/* ---- the ranks ------------------------------------------------------------------------ */

static hgr_instance_t* instance;
static const char* rank_device[RANKS]; /* each rank's device (all in this process) */

static int setup(void** state) {
  (void)state;
  ASSERT_OK(hgr_instance_create(NULL, &instance));
  const char* needed[] = {"pocl:0", "pocl:1"};
  hgr_test_require_devices(instance, needed, 2);
  size_t index;
  hgr_status_t status = hgr_instance_find_device(instance, "rusticl:0", &index);
  rank_device[0] = "pocl:0";
  rank_device[1] = "pocl:1";
  rank_device[2] = status ? "pocl:0" : "rusticl:0";
  hgr_status_free(status);
  return 0;
}

static int teardown(void** state) {
  (void)state;
  hgr_instance_release(instance);
  return 0;
}

/* Rank r's executor of graph, key keys[k] on rank ranks_of[k]'s device. */
static hgr_executor_t* create_rank(hub_t* hub, int r, int rank_count, hgr_graph_t* graph, const int32_t* keys,
                                   const int* ranks_of, size_t key_count) {
  char specs[8][64];
  hgr_device_binding_t bindings[8];
  for (size_t k = 0; k < key_count; ++k) {
    snprintf(specs[k], sizeof(specs[k]), "r%d/%s", ranks_of[k], rank_device[ranks_of[k]]);
    bindings[k] = (hgr_device_binding_t){keys[k], specs[k]};
  }
  hgr_executor_options_t options;
  hgr_executor_options_init(&options);
  options.bindings = bindings;
  options.binding_count = key_count;
  hub->transports[r].rank_count = rank_count;
  options.transport = &hub->transports[r];
  hgr_executor_t* executor = NULL;
  ASSERT_OK(hgr_executor_create(instance, graph, &options, &executor));
  return executor;
}

static void load_npy(const char* name, hgr_npy_array_t* out) {
  char path[4096];
  snprintf(path, sizeof(path), "%s/examples/%s", getenv("HGR_SOURCE_DIR"), name);
  ASSERT_OK(hgr_npy_load_file(path, out));
}

static hgr_graph_t* load_duplex(void) {
  char path[4096];
  snprintf(path, sizeof(path), "%s/examples/duplex.json", getenv("HGR_SOURCE_DIR"));
  hgr_graph_t* graph = NULL;
  ASSERT_OK(hgr_graph_load_file(path, &graph));
  return graph;
}

/* The duplex example's two ranks: key 4 on rank 0, key 1 on rank 1. */
static void create_duplex_ranks(hub_t* hub, hgr_graph_t* graph, hgr_executor_t** ranks) {
  const int32_t keys[] = {4, 1};
  const int ranks_of[] = {0, 1};
  for (int r = 0; r < 2; ++r) ranks[r] = create_rank(hub, r, 2, graph, keys, ranks_of, 2);
}

/* Whether the duplex example's input `name` lives on rank 1 (C and E) or 0. */
static int duplex_owner(const char* name) { return name[0] == 'C' || name[0] == 'E' ? 1 : 0; }

/* The duplex example: A, B, D and the adds on key 4 (rank 0); C, E, the
 * subtractions and the output on key 1 (rank 1); three copies between them. */
static void duplex_splits_over_two_ranks(void** state) {
  (void)state;
  hgr_graph_t* graph = load_duplex();
  hub_t* hub = hub_start(2);
  hgr_executor_t* ranks[2];
  create_duplex_ranks(hub, graph, ranks);
  for (int r = 0; r < 2; ++r) {
    hgr_copy_summary_t copies = hgr_executor_copy_summary(ranks[r]);
    assert_int_equal(copies.count[HGR_PAIR_CROSS_HOST], 3); /* this rank's half of each */
  }
  const char* names[] = {"A", "B", "C", "D", "E"};
  for (int i = 0; i < 5; ++i) {
    char file[64];
    snprintf(file, sizeof(file), "duplex_%s.npy", names[i]);
    hgr_npy_array_t array;
    load_npy(file, &array);
    int owner = duplex_owner(names[i]);
    ASSERT_OK(hgr_executor_set_input_by_name(ranks[owner], names[i], array.data, (size_t)array.bytes));
    ASSERT_STATUS(hgr_executor_set_input_by_name(ranks[1 - owner], names[i], array.data, (size_t)array.bytes),
                  HGR_STATUS_FAILED_PRECONDITION, "lives on r", "only rank");
    hgr_npy_array_free(&array);
  }
  hgr_npy_array_t expected;
  load_npy("duplex_expected_0.npy", &expected);
  float got[256];
  assert_true(expected.bytes <= sizeof(got));
  for (int run = 0; run < 3; ++run) {
    for (int r = 0; r < 2; ++r) ASSERT_OK(hgr_executor_run(ranks[r]));
  }
  for (int r = 0; r < 2; ++r) ASSERT_OK(hgr_executor_wait(ranks[r]));
  ASSERT_OK(hgr_executor_get_output(ranks[1], 0, got, (size_t)expected.bytes));
  assert_memory_equal(got, expected.data, (size_t)expected.bytes);
  /* rank 0 does not hold the output: the message names where it lives */
  ASSERT_STATUS(hgr_executor_get_output(ranks[0], 0, got, (size_t)expected.bytes), HGR_STATUS_FAILED_PRECONDITION,
                "output 0", "lives on r1/pocl:1", "only rank 1 reads it");
  hgr_npy_array_free(&expected);
  for (int r = 0; r < 2; ++r) hgr_executor_release(ranks[r]);
  hub_stop(hub);
  hgr_graph_release(graph);
}

/* Random graphs over keys 1, 2, 3 on ranks 0, 1, 2; tensors from 4 bytes (staged)
 * to 6 MiB (mapped, one chunk) and 12 MiB (mapped, two chunks of 8 MiB); three runs
 * in flight before the waits. */
static void random_graphs_match_the_reference_across_three_ranks(void** state) {
  (void)state;
  const uint64_t sizes[] = {1, 7, 1000, 65536, 3u << 19, 3u << 20};
  const int32_t keys[] = {1, 2, 3};
  const int ranks_of[] = {0, 1, 2};
  for (uint64_t seed = 1; seed <= 6; ++seed) {
    hgr_test_graph_options_t generate = {seed, 12, sizes, seed <= 2 ? 6 : 4, keys, 3};
    char* json = hgr_test_graph_generate(&generate);
    assert_non_null(json);
    hgr_graph_t* graph = NULL;
    ASSERT_OK(hgr_graph_load_json(json, strlen(json), &graph));
    free(json);
    hub_t* hub = hub_start(RANKS);
    hgr_executor_t* ranks[RANKS];
    for (int r = 0; r < RANKS; ++r) ranks[r] = create_rank(hub, r, RANKS, graph, keys, ranks_of, 3);

    size_t input_count = hgr_graph_input_count(graph);
    float** inputs = calloc(input_count + 1, sizeof(float*));
    assert_non_null(inputs);
    hgr_test_rng_t rng;
    hgr_test_rng_seed(&rng, seed * 7919);
    for (size_t i = 0; i < input_count; ++i) {
      hgr_tensor_info_t info;
      ASSERT_OK(hgr_graph_input_info(graph, i, &info));
      inputs[i] = malloc(info.bytes + 1);
      assert_non_null(inputs[i]);
      for (uint64_t e = 0; e < info.bytes / 4; ++e) inputs[i][e] = hgr_test_rng_float(&rng, -2, 2);
      int set = 0;
      for (int r = 0; r < RANKS; ++r) {
        hgr_status_t status = hgr_executor_set_input(ranks[r], i, inputs[i], (size_t)info.bytes);
        if (!status) set++;
        else ASSERT_STATUS(status, HGR_STATUS_FAILED_PRECONDITION, "lives on");
      }
      assert_int_equal(set, 1); /* exactly its own rank takes it */
    }
    hgr_test_reference_t reference;
    ASSERT_OK(hgr_test_reference_run(graph, (const float* const*)inputs, &reference));
    for (int run = 0; run < 3; ++run)
      for (int r = 0; r < RANKS; ++r) ASSERT_OK(hgr_executor_run(ranks[r]));
    for (int r = 0; r < RANKS; ++r) ASSERT_OK(hgr_executor_wait(ranks[r]));
    for (size_t o = 0; o < reference.output_count; ++o) {
      uint64_t count = reference.element_counts[o];
      float* got = malloc(count * sizeof(float) + 1);
      assert_non_null(got);
      int read = 0;
      for (int r = 0; r < RANKS; ++r) {
        hgr_status_t status = hgr_executor_get_output(ranks[r], o, got, (size_t)count * sizeof(float));
        if (status) {
          ASSERT_STATUS(status, HGR_STATUS_FAILED_PRECONDITION, "lives on");
          continue;
        }
        read++;
        char message[200];
        if (!hgr_test_reference_check(&reference, o, got, message, sizeof(message)))
          fail_msg("seed %llu, output %zu on rank %d: %s", (unsigned long long)seed, o, r, message);
      }
      assert_int_equal(read, 1);
      free(got);
    }
    hgr_test_reference_free(&reference);
    for (size_t i = 0; i < input_count; ++i) free(inputs[i]);
    free(inputs);
    for (int r = 0; r < RANKS; ++r) hgr_executor_release(ranks[r]);
    hub_stop(hub);
    hgr_graph_release(graph);
  }
}

/* A send that arrives as failed: the receiving rank's wait names the node and the
 * peer and the transport's reason; the sender completes; later runs are refused. */
static void a_failed_transfer_is_reported_by_the_receiver(void** state) {
  (void)state;
  hgr_graph_t* graph = load_duplex();
  hub_t* hub = hub_start(2);
  hgr_executor_t* ranks[2];
  create_duplex_ranks(hub, graph, ranks);
  float values[50] = {1, 2, 3, 4};
  const char* names[] = {"A", "B", "C", "D", "E"};
  for (int i = 0; i < 5; ++i)
    ASSERT_OK(hgr_executor_set_input_by_name(ranks[duplex_owner(names[i])], names[i], values, sizeof(values)));
  hub->fail_sends = 1; /* rank 0's copy to rank 1 */
  for (int r = 0; r < 2; ++r) ASSERT_OK(hgr_executor_run(ranks[r]));
  ASSERT_STATUS(hgr_executor_wait(ranks[1]), HGR_STATUS_DEVICE_FAILURE, "copy_3", "from rank 0",
                "cross-host", "injected");
  ASSERT_STATUS(hgr_executor_run(ranks[1]), HGR_STATUS_FAILED_PRECONDITION, "from rank 0");
  /* Rank 0's half completes: it does not hang. */
  hgr_status_free(hgr_executor_wait(ranks[0]));
  for (int r = 0; r < 2; ++r) hgr_executor_release(ranks[r]);
  hub_stop(hub);
  hgr_graph_release(graph);
}

static void rank_bindings_are_checked(void** state) {
  (void)state;
  hgr_graph_t* graph = load_duplex();
  hgr_executor_options_t options;
  hgr_executor_options_init(&options);
  hgr_executor_t* executor = NULL;
  /* without a transport: rank 0 is this process, another rank is refused */
  hgr_device_binding_t local[] = {{4, "r0/pocl:0"}, {1, "r0/pocl:1"}};
  options.bindings = local;
  options.binding_count = 2;
  ASSERT_OK(hgr_executor_create(instance, graph, &options, &executor));
  hgr_executor_release(executor);
  hgr_device_binding_t other[] = {{4, "pocl:0"}, {1, "r1/pocl:0"}};
  options.bindings = other;
  ASSERT_STATUS(hgr_executor_create(instance, graph, &options, &executor), HGR_STATUS_INVALID_ARGUMENT,
                "1=r1/pocl:0", "no transport");
  /* past the ranks taking part */
  hub_t* hub = hub_start(2);
  options.transport = &hub->transports[0];
  hgr_device_binding_t past[] = {{4, "r0/pocl:0"}, {1, "r2/pocl:0"}};
  options.bindings = past;
  ASSERT_STATUS(hgr_executor_create(instance, graph, &options, &executor), HGR_STATUS_INVALID_ARGUMENT,
                "names rank 2", "only 2 ranks");
  hgr_device_binding_t malformed[] = {{4, "r0/pocl:0"}, {1, "r1pocl:0"}};
  options.bindings = malformed;
  ASSERT_STATUS(hgr_executor_create(instance, graph, &options, &executor), HGR_STATUS_INVALID_ARGUMENT,
                "rank prefix");
  /* a host-driven device cannot take part in a copy between ranks */
  size_t index;
  hgr_status_t find = hgr_instance_find_device(instance, "oclgrind:0", &index);
  if (!find) {
    hgr_device_binding_t simulated[] = {{4, "r0/oclgrind:0"}, {1, "r1/pocl:0"}};
    options.bindings = simulated;
    ASSERT_STATUS(hgr_executor_create(instance, graph, &options, &executor), HGR_STATUS_INVALID_ARGUMENT,
                  "host-driven");
  }
  hgr_status_free(find);
  hub_stop(hub);
  hgr_graph_release(graph);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(duplex_splits_over_two_ranks),
      cmocka_unit_test(random_graphs_match_the_reference_across_three_ranks),
      cmocka_unit_test(a_failed_transfer_is_reported_by_the_receiver),
      cmocka_unit_test(rank_bindings_are_checked),
  };
  return cmocka_run_group_tests(tests, setup, teardown);
}
