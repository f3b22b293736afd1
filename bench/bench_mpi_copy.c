/* A copy between two ranks through hgr (ordered by events: below 1 MiB a device read
 * into staging, MPI, a device write; from 1 MiB on PoCL, MPI straight between the
 * mapped buffers) against a raw MPI ping-pong of the same bytes between host buffers, in one
 * mpirun, interleaved size by size and pass by pass (N passes, default 4: the
 * machine's memory bandwidth drifts over seconds) so both see the same machine.
 * Run it under
 *   mpirun -np 2 hgr_bench_mpi_copy [--device SPEC] [--min-bytes B] [--max-bytes B]
 *                                   [--seconds S] [--passes N]
 * Rank 0 holds the source on its SPEC (default pocl:0), rank 1 the destination on its
 * own SPEC. Each iteration is one transfer from rank 0 to rank 1 followed by a one-byte
 * answer back (so both sides time the same round): hgr runs the graph on both ranks
 * and waits (rank 0's wait ends when MPI is done with its staging, rank 1's when the
 * value is in device memory); raw MPI sends from and receives into host memory. The
 * ratio is raw time / hgr time: 1.0 means the device copies on either side cost
 * nothing beside the network (the target is >= 0.9). Rank 0 prints the table. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "hgr/hgr.h"
#include "hgr/mpi.h"

static double now_s(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

static void check(hgr_status_t status, const char* what) {
  if (!status) return;
  char* text = hgr_status_to_string(status);
  fprintf(stderr, "hgr_bench_mpi_copy: %s: %s\n", what, text ? text : "?");
  free(text);
  hgr_status_free(status);
  MPI_Abort(MPI_COMM_WORLD, 1);
}

/* X on key 1 (rank 0), its copy on key 2 (rank 1), which is the output. */
static hgr_graph_t* copy_graph(unsigned long long bytes) {
  char json[2048];
  unsigned long long count = bytes / 4;
  snprintf(json, sizeof(json),
           "{\"nodes\": [{\"op\": \"null\", \"name\": \"x\", \"inputs\": []}, {\"op\": \"tvm_op\", \"name\": "
           "\"copy\", \"attrs\": {\"func_name\": \"__copy\", \"num_inputs\": \"1\", \"num_outputs\": \"1\", "
           "\"flatten_data\": \"0\"}, \"inputs\": [[0, 0, 0]]}], \"arg_nodes\": [0], \"node_row_ptr\": [0, 1, 2], "
           "\"heads\": [[1, 0, 0]], \"attrs\": {\"storage_id\": [\"list_int\", [0, 1]], \"shape\": [\"list_shape\", "
           "[[%llu], [%llu]]], \"device_index\": [\"list_int\", [1, 2]], \"dltype\": [\"list_str\", [\"float32\", "
           "\"float32\"]]}}",
           count, count);
  hgr_graph_t* graph = NULL;
  check(hgr_graph_load_json(json, strlen(json), &graph), "the copy graph");
  return graph;
}

static int compare(const void* a, const void* b) {
  double x = *(const double*)a, y = *(const double*)b;
  return x < y ? -1 : x > y;
}

/* Median seconds of one round, over as many rounds as fit in `seconds` (at least 5),
 * every rank doing the same count (rank 0 decides). */
static double time_rounds(int rank, double seconds, void (*round)(void*), void* user) {
  round(user); /* warm */
  double start = now_s();
  round(user);
  double once = now_s() - start;
  int rounds = once > 0 ? (int)(seconds / once) : 1000;
  if (rounds < 5) rounds = 5;
  if (rounds > 2000) rounds = 2000;
  MPI_Bcast(&rounds, 1, MPI_INT, 0, MPI_COMM_WORLD);
  double* times = malloc((size_t)rounds * sizeof(double));
  for (int r = 0; r < rounds; ++r) {
    double t0 = now_s();
    round(user);
    times[r] = now_s() - t0;
  }
  qsort(times, (size_t)rounds, sizeof(double), compare);
  double median = times[rounds / 2];
  free(times);
  (void)rank;
  return median;
}

typedef struct raw_t {
  int rank;
  char* buffer;
  int bytes;
} raw_t;

static void raw_round(void* user) {
  raw_t* raw = user;
  char answer = 0;
  if (raw->rank == 0) {
    MPI_Send(raw->buffer, raw->bytes, MPI_BYTE, 1, 7, MPI_COMM_WORLD);
    MPI_Recv(&answer, 1, MPI_BYTE, 1, 8, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
  } else {
    MPI_Recv(raw->buffer, raw->bytes, MPI_BYTE, 0, 7, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    MPI_Send(&answer, 1, MPI_BYTE, 0, 8, MPI_COMM_WORLD);
  }
}

typedef struct ours_t {
  int rank;
  hgr_executor_t* executor;
} ours_t;

static void hgr_round(void* user) {
  ours_t* ours = user;
  char answer = 0;
  check(hgr_executor_run(ours->executor), "run");
  check(hgr_executor_wait(ours->executor), "wait");
  if (ours->rank == 0) MPI_Recv(&answer, 1, MPI_BYTE, 1, 8, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
  else MPI_Send(&answer, 1, MPI_BYTE, 0, 8, MPI_COMM_WORLD);
}

int main(int argc, char** argv) {
  int provided = 0;
  MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
  int rank = 0, ranks = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &ranks);
  const char* device = "pocl:0";
  unsigned long long min_bytes = 4096, max_bytes = 256ull << 20;
  double seconds = 0.5;
  int passes = 4;
  for (int i = 1; i + 1 < argc; i += 2) {
    if (!strcmp(argv[i], "--device")) device = argv[i + 1];
    else if (!strcmp(argv[i], "--min-bytes")) min_bytes = strtoull(argv[i + 1], NULL, 10);
    else if (!strcmp(argv[i], "--max-bytes")) max_bytes = strtoull(argv[i + 1], NULL, 10);
    else if (!strcmp(argv[i], "--seconds")) seconds = atof(argv[i + 1]);
    else if (!strcmp(argv[i], "--passes")) passes = atoi(argv[i + 1]);
  }
  if (passes < 1) {
    if (rank == 0) fprintf(stderr, "hgr_bench_mpi_copy: --passes takes a count of at least 1\n");
    MPI_Finalize();
    return 2;
  }
  if (ranks != 2) {
    if (rank == 0) fprintf(stderr, "hgr_bench_mpi_copy: run it with mpirun -np 2\n");
    MPI_Finalize();
    return 2;
  }
  hgr_mpi_options_t options;
  hgr_mpi_options_init(&options);
  hgr_mpi_instance_t* instance = NULL;
  check(hgr_mpi_instance_create(MPI_COMM_WORLD, &options, &instance), "hgr_mpi_instance_create");
  if (rank == 0) {
    printf("Copy from r0/%s to r1/%s through hgr (staged below 1 MiB, mapped from 1 MiB where the device\n"
           "maps asynchronously) against raw MPI between host buffers; the best of %d medians of one\n"
           "transfer plus a one-byte answer, taken in turn.\n\n",
           device, device, passes);
    printf("| bytes | raw MPI, ms | hgr, ms | raw MPI, GB/s | hgr, GB/s | raw / hgr |\n|---:|---:|---:|---:|---:|---:|\n");
  }
  char spec0[80], spec1[80];
  snprintf(spec0, sizeof(spec0), "r0/%s", device);
  snprintf(spec1, sizeof(spec1), "r1/%s", device);
  for (unsigned long long bytes = min_bytes; bytes <= max_bytes; bytes *= 4) {
    hgr_graph_t* graph = copy_graph(bytes);
    hgr_device_binding_t bindings[] = {{1, spec0}, {2, spec1}};
    hgr_executor_options_t executor_options;
    hgr_executor_options_init(&executor_options);
    executor_options.bindings = bindings;
    executor_options.binding_count = 2;
    hgr_executor_t* executor = NULL;
    check(hgr_mpi_executor_create(instance, graph, &executor_options, &executor), "hgr_mpi_executor_create");
    /* Written on both ranks, so that raw MPI moves real pages: calloc's untouched
     * pages all map the one zero page, which a copy reads from the cache. */
    char* host = malloc((size_t)bytes);
    if (!host) MPI_Abort(MPI_COMM_WORLD, 1);
    memset(host, 1 + rank, (size_t)bytes);
    if (rank == 0) check(hgr_executor_set_input(executor, 0, host, (size_t)bytes), "set_input");
    raw_t raw = {rank, host, (int)bytes};
    ours_t ours = {rank, executor};
    /* interleaved: raw, hgr, raw, hgr, ...; the best median of each */
    double raw_s = 1e30, ours_s = 1e30;
    for (int pass = 0; pass < passes; ++pass) {
      double r = time_rounds(rank, seconds, raw_round, &raw);
      double h = time_rounds(rank, seconds, hgr_round, &ours);
      if (r < raw_s) raw_s = r;
      if (h < ours_s) ours_s = h;
    }
    if (rank == 0)
      printf("| %llu | %.3f | %.3f | %.2f | %.2f | %.3f |\n", bytes, raw_s * 1e3, ours_s * 1e3, bytes / raw_s / 1e9,
             bytes / ours_s / 1e9, raw_s / ours_s);
    fflush(stdout);
    free(host);
    hgr_executor_release(executor);
    hgr_graph_release(graph);
  }
  hgr_mpi_instance_release(instance);
  MPI_Finalize();
  return 0;
}
