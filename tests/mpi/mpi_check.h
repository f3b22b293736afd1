/* A tiny check harness for the MPI tests: every rank runs the same tests in the
 * same order; a failed check prints where on which rank and ends the whole job
 * with MPI_Abort (mpirun then exits non-zero). Rank 0 prints one line per test. */
#ifndef HGR_TESTS_MPI_CHECK_H_
#define HGR_TESTS_MPI_CHECK_H_

#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "hgr/graph.h"
#include "hgr/mpi.h"
#include "hgr/status.h"

static inline void check_fail(const char* file, int line, const char* what, const char* detail) {
  int rank = -1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  fprintf(stderr, "rank %d: %s:%d: check failed: %s%s%s\n", rank, file, line, what, detail ? ": " : "",
          detail ? detail : "");
  fflush(stderr);
  MPI_Abort(MPI_COMM_WORLD, 1);
}

#define CHECK(condition)                                                  \
  do {                                                                    \
    if (!(condition)) check_fail(__FILE__, __LINE__, #condition, NULL); \
  } while (0)

/* Checks that status is HGR_OK, printing it otherwise. */
#define CHECK_OK(expression)                                            \
  do {                                                                  \
    hgr_status_t check_status_ = (expression);                          \
    if (check_status_) {                                                \
      char* check_text_ = hgr_status_to_string(check_status_);          \
      check_fail(__FILE__, __LINE__, #expression, check_text_);         \
    }                                                                   \
  } while (0)

/* Checks that text contains part, printing text otherwise. */
#define CHECK_CONTAINS(text, part)                                              \
  do {                                                                          \
    const char* check_text_ = (text);                                           \
    if (!check_text_ || !strstr(check_text_, (part)))                           \
      check_fail(__FILE__, __LINE__, "'" #text "' contains '" part "'",         \
                 check_text_ ? check_text_ : "(null)");                         \
  } while (0)

static inline double check_now(void) {
  struct timespec now;
  clock_gettime(CLOCK_MONOTONIC, &now);
  return (double)now.tv_sec + (double)now.tv_nsec * 1e-9;
}

static inline void check_pause(void) {
  struct timespec pause = {0, 100000L};
  nanosleep(&pause, NULL);
}

/* MPI with MPI_THREAD_MULTIPLE (checked), this process's rank and the rank count (at
 * least 2). */
static inline void check_mpi_init(int* argc, char*** argv, int* rank, int* rank_count) {
  int provided = 0;
  MPI_Init_thread(argc, argv, MPI_THREAD_MULTIPLE, &provided);
  CHECK(provided == MPI_THREAD_MULTIPLE);
  MPI_Comm_rank(MPI_COMM_WORLD, rank);
  MPI_Comm_size(MPI_COMM_WORLD, rank_count);
  CHECK(*rank_count >= 2);
}

/* TVM's simplex graph: (A + B) on key 4, copied to key 1, minus C there. */
static const char check_simplex_json[] =
    "{\"nodes\": [{\"op\": \"null\", \"name\": \"A\", \"inputs\": []}, {\"op\": \"null\", \"name\": \"B\", "
    "\"inputs\": []}, {\"op\": \"tvm_op\", \"name\": \"elemwise_add\", \"attrs\": {\"flatten_data\": \"1\", "
    "\"func_name\": \"add\", \"num_inputs\": \"2\", \"num_outputs\": \"1\"}, \"inputs\": [[0, 0, 0], [1, 0, "
    "0]]}, {\"op\": \"tvm_op\", \"name\": \"__copy_add_to_sub\", \"attrs\": {\"flatten_data\": \"0\", \"func_name\": "
    "\"__copy\", \"num_inputs\": \"1\", \"num_outputs\": \"1\"}, \"inputs\": [[2, 0, 0]]}, {\"op\": \"null\", "
    "\"name\": \"C\", \"inputs\": []}, {\"op\": \"tvm_op\", \"name\": \"elemwise_sub\", \"attrs\": {\"flatten_data\": "
    "\"0\", \"func_name\": \"subtract\", \"num_inputs\": \"2\", \"num_outputs\": \"1\"}, \"inputs\": [[3, 0, 0], "
    "[4, 0, 0]]}], \"arg_nodes\": [0, 1, 4], \"node_row_ptr\": [0, 1, 2, 3, 4, 5, 6], \"heads\": [[5, 0, 0]], "
    "\"attrs\": {\"storage_id\": [\"list_int\", [3, 4, 0, 1, 5, 2]], \"shape\": [\"list_shape\", [[4], [4], [4], [4], "
    "[4], [4]]], \"device_index\": [\"list_int\", [4, 4, 4, 1, 1, 1]], \"dtype\": [\"list_int\", [0, 0, 0, 0, 0, 0]], "
    "\"dltype\": [\"list_str\", [\"float32\", \"float32\", \"float32\", \"float32\", \"float32\", \"float32\"]]}}";

static inline hgr_graph_t* check_load_simplex(void) {
  hgr_graph_t* graph = NULL;
  CHECK_OK(hgr_graph_load_json(check_simplex_json, sizeof(check_simplex_json) - 1, &graph));
  return graph;
}

/* Collective: unless every rank has the device spec, rank 0 prints "skipped: why"
 * and every rank releases the instance and exits 77 (the tests' SKIP_RETURN_CODE). */
static inline void check_device_everywhere_or_skip(hgr_mpi_instance_t* instance, const char* spec, const char* why) {
  size_t index = 0;
  hgr_status_t found = hgr_instance_find_device(hgr_mpi_instance_local(instance), spec, &index);
  int have = found == HGR_OK, everywhere = 0;
  hgr_status_free(found);
  MPI_Allreduce(&have, &everywhere, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
  if (everywhere) return;
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  if (rank == 0) printf("skipped: %s\n", why);
  hgr_mpi_instance_release(instance);
  MPI_Finalize();
  exit(77);
}

#define RUN_TEST(test)                                 \
  do {                                                 \
    MPI_Barrier(MPI_COMM_WORLD);                       \
    test();                                            \
    MPI_Barrier(MPI_COMM_WORLD);                       \
    int run_rank_ = 0;                                 \
    MPI_Comm_rank(MPI_COMM_WORLD, &run_rank_);         \
    if (run_rank_ == 0) printf("ok %s\n", #test);      \
    fflush(stdout);                                    \
  } while (0)

#endif /* HGR_TESTS_MPI_CHECK_H_ */
