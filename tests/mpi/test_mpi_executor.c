/* Executors over MPI: hgr_mpi_executor_create and hgr_mpi_executor_wait on every
 * rank. TVM's simplex graph ((A + B) on key 4, copied to key 1, minus C) runs on
 * each rank's own PoCL devices and gives the reference; a binding that one rank
 * cannot resolve fails creation on every rank, naming that rank. With --cross-rank
 * the graph spans ranks 0 and 1 (key 4 on r0/pocl:0, key 1 on r1/pocl:0): the copy
 * goes through the transport. Exits 77 (skipped) without two PoCL devices. */
#include "mpi_check.h"
#include "hgr/hgr.h"
#include "hgr/mpi.h"

static hgr_mpi_instance_t* instance;
static int rank, rank_count;

/* Runs the executor once on every rank and checks A + B - C where it has the
 * output. Across ranks, each rank sets the inputs on its devices only: A and B on
 * rank 0 (key 4), C and the output on rank 1 (key 1). */
static void run_and_check(hgr_executor_t* executor, int across_ranks) {
  const float a[4] = {1, 2, 3, 4}, b[4] = {10, 20, 30, 40}, c[4] = {0.5f, 1, 1.5f, 2};
  int has_key_4 = !across_ranks || rank == 0, has_key_1 = !across_ranks || rank == 1;
  if (has_key_4) CHECK_OK(hgr_executor_set_input(executor, 0, a, sizeof(a)));
  if (has_key_4) CHECK_OK(hgr_executor_set_input(executor, 1, b, sizeof(b)));
  if (has_key_1) CHECK_OK(hgr_executor_set_input(executor, 2, c, sizeof(c)));
  CHECK_OK(hgr_executor_run(executor));
  CHECK_OK(hgr_mpi_executor_wait(instance, executor));
  if (!has_key_1) return;
  float out[4] = {0};
  CHECK_OK(hgr_executor_get_output(executor, 0, out, sizeof(out)));
  for (int i = 0; i < 4; ++i) CHECK(out[i] == a[i] + b[i] - c[i]);
}

static void executor_on_each_ranks_own_devices_runs(void) {
  hgr_graph_t* graph = check_load_simplex();
  hgr_executor_options_t options;
  hgr_executor_options_init(&options);
  const hgr_device_binding_t bindings[] = {{4, "pocl:0"}, {1, "pocl:1"}};
  options.bindings = bindings;
  options.binding_count = 2;
  hgr_executor_t* executor = NULL;
  CHECK_OK(hgr_mpi_executor_create(instance, graph, &options, &executor));
  run_and_check(executor, 0);
  hgr_executor_release(executor);
  hgr_graph_release(graph);
}

static void binding_one_rank_cannot_resolve_fails_every_rank(void) {
  hgr_graph_t* graph = check_load_simplex();
  hgr_executor_options_t options;
  hgr_executor_options_init(&options);
  const hgr_device_binding_t good[] = {{4, "pocl:0"}, {1, "pocl:1"}};
  const hgr_device_binding_t bad[] = {{4, "pocl:0"}, {1, "pocl:9"}};
  options.bindings = rank == 1 ? bad : good;
  options.binding_count = 2;
  options.plan_only = true;
  hgr_executor_t* executor = (hgr_executor_t*)&options; /* must become NULL */
  hgr_status_t status = hgr_mpi_executor_create(instance, graph, &options, &executor);
  CHECK(executor == NULL);
  CHECK(hgr_status_code(status) == HGR_STATUS_NOT_FOUND);
  CHECK_CONTAINS(hgr_status_message(status), "rank 1: hgr_mpi_executor_create: ");
  CHECK_CONTAINS(hgr_status_message(status), "pocl:9");
  hgr_status_free(status);
  hgr_graph_release(graph);
}

static void executor_across_ranks_copies_through_the_transport(void) {
  hgr_graph_t* graph = check_load_simplex();
  hgr_executor_options_t options;
  hgr_executor_options_init(&options);
  const hgr_device_binding_t bindings[] = {{4, "r0/pocl:0"}, {1, "r1/pocl:0"}};
  options.bindings = bindings;
  options.binding_count = 2;
  hgr_executor_t* executor = NULL;
  CHECK_OK(hgr_mpi_executor_create(instance, graph, &options, &executor));
  run_and_check(executor, 1);
  run_and_check(executor, 1); /* again: the transport's messages keep their order */
  hgr_executor_release(executor);
  hgr_graph_release(graph);
}

int main(int argc, char** argv) {
  check_mpi_init(&argc, &argv, &rank, &rank_count);
  hgr_mpi_options_t options;
  hgr_mpi_options_init(&options);
  CHECK_OK(hgr_mpi_instance_create(MPI_COMM_WORLD, &options, &instance));
  check_device_everywhere_or_skip(instance, "pocl:1", "not every rank has two PoCL devices");
  if (argc > 1 && !strcmp(argv[1], "--cross-rank")) {
    RUN_TEST(executor_across_ranks_copies_through_the_transport);
  } else {
    RUN_TEST(executor_on_each_ranks_own_devices_runs);
    RUN_TEST(binding_one_rank_cannot_resolve_fails_every_rank);
  }
  hgr_mpi_instance_release(instance);
  MPI_Finalize();
  return 0;
}
