/* Failures across ranks, under mpirun -np 2, on the simplex graph ((A + B) on key 4,
 * copied to key 1, minus C) with key 4 on r0/pocl:0 and key 1 on r1/pocl:0:
 *   - the add kernel fails on rank 0's device (the fault shim makes its enqueue wait
 *     on a user event set to a negative status, as a real device failure would):
 *     both ranks' hgr_mpi_executor_wait fail with rank 0's error, naming the node;
 *   - rank 1 stops answering (it does not run, and answers rank 0's collective wait
 *     only later): rank 0's wait fails within the instance's timeout (20 s) instead
 *     of hanging.
 * Exits 77 (skipped) without a PoCL device. */
#include <CL/cl.h>
#include <string.h>

#include "mpi_check.h"
#include "hgr/hgr.h"
#include "hgr/mpi.h"
#include "../fault_shim.h"

static hgr_mpi_instance_t* instance;
static int rank, rank_count;

/* The executor of this rank, inputs set where they live. */
static hgr_executor_t* create_split(hgr_graph_t** out_graph) {
  *out_graph = check_load_simplex();
  hgr_executor_options_t options;
  hgr_executor_options_init(&options);
  const hgr_device_binding_t bindings[] = {{4, "r0/pocl:0"}, {1, "r1/pocl:0"}};
  options.bindings = bindings;
  options.binding_count = 2;
  hgr_executor_t* executor = NULL;
  CHECK_OK(hgr_mpi_executor_create(instance, *out_graph, &options, &executor));
  const float values[4] = {1, 2, 3, 4};
  for (size_t i = 0; i < 3; ++i)
    if (hgr_executor_input_rank(executor, i) == rank) CHECK_OK(hgr_executor_set_input(executor, i, values, sizeof(values)));
  return executor;
}

static void a_kernel_failing_on_rank_0_fails_every_rank(void) {
  hgr_graph_t* graph = NULL;
  hgr_executor_t* executor = create_split(&graph);
  if (rank == 0) hgr_fault_shim_fail_kernel("hgr_add_f32", CL_OUT_OF_RESOURCES);
  CHECK_OK(hgr_executor_run(executor));
  hgr_status_t status = hgr_mpi_executor_wait(instance, executor);
  CHECK(status != HGR_OK);
  char* text = hgr_status_to_string(status);
  CHECK_CONTAINS(text, "rank 0: ");
  CHECK_CONTAINS(text, "elemwise_add");
  free(text);
  hgr_status_free(status);
  hgr_fault_shim_fail_kernel(NULL, 0);
  hgr_executor_release(executor);
  hgr_fault_shim_release_failed_events();
  hgr_graph_release(graph);
}

static void a_rank_that_stops_answering_fails_the_others_in_time(void) {
  hgr_graph_t* graph = NULL;
  hgr_executor_t* executor = create_split(&graph);
  if (rank == 0) {
    double start = check_now();
    CHECK_OK(hgr_executor_run(executor));
    hgr_status_t status = hgr_mpi_executor_wait(instance, executor);
    double waited = check_now() - start;
    CHECK(hgr_status_code(status) == HGR_STATUS_UNAVAILABLE);
    char* text = hgr_status_to_string(status);
    CHECK_CONTAINS(text, "not every rank answered within 20 s");
    free(text);
    hgr_status_free(status);
    CHECK(waited < 40);
  } else {
    /* Silent past rank 0's timeout; then it joins the collective rank 0 gave up on
     * (libhgr_mpi keeps it), so that both can end cleanly. */
    struct timespec pause = {25, 0};
    nanosleep(&pause, NULL);
    hgr_status_free(hgr_mpi_agree(instance, HGR_OK, "late"));
  }
  hgr_executor_release(executor);
  hgr_graph_release(graph);
}

int main(int argc, char** argv) {
  check_mpi_init(&argc, &argv, &rank, &rank_count);
  hgr_mpi_options_t options;
  hgr_mpi_options_init(&options);
  /* Long enough for instance and executor creation to agree under the sanitizers on
   * a loaded machine (the slower rank's OpenCL start-up counts against it). */
  options.timeout_s = 20;
  CHECK_OK(hgr_mpi_instance_create(MPI_COMM_WORLD, &options, &instance));
  check_device_everywhere_or_skip(instance, "pocl:0", "a rank has no pocl:0");
  RUN_TEST(a_kernel_failing_on_rank_0_fails_every_rank);
  RUN_TEST(a_rank_that_stops_answering_fails_the_others_in_time);
  hgr_mpi_instance_release(instance);
  MPI_Finalize();
  return 0;
}
