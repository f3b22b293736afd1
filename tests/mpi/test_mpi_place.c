/* Placement across ranks through the C API (hgr_mpi_place): TVM's simplex graph
 * ((A + B) - C) in two stages over r0/pocl:0 and r1/pocl:1. Every rank gets the same
 * placed graph, rank 0 alone the placement; the graph runs across the ranks and
 * gives A + B - C on rank 0. Under mpirun's MPMD form with rank 0 given one PoCL
 * device and rank 1 two (tests/mpi/CMakeLists.txt), rank 0 has no pocl:1: the
 * placement can only come from rank 1's own measure. A spec rank 1 lacks fails
 * every rank, naming rank 1; rank_measures given by the caller are refused.
 * Exits 77 (skipped) unless rank 1 has two PoCL devices and rank 0 one. */
#include "mpi_check.h"
#include "hgr/hgr.h"
#include "hgr/mpi.h"

static hgr_mpi_instance_t* instance;
static int rank, rank_count;

static void options_for(hgr_place_options_t* options, const char* const* devices, size_t count) {
  hgr_place_options_init(options);
  options->devices = devices;
  options->device_count = count;
  options->cost_cache_off = true;
  CHECK_OK(hgr_place_options_parse(options, "stages:2"));
}

static void stages_over_two_ranks_run_everywhere(void) {
  hgr_graph_t* graph = check_load_simplex();
  static const char* const devices[] = {"r0/pocl:0", "r1/pocl:1"};
  hgr_place_options_t options;
  options_for(&options, devices, 2);
  hgr_graph_t* placed = NULL;
  hgr_placement_t* placement = NULL;
  CHECK_OK(hgr_mpi_place(instance, graph, &options, &placed, &placement));
  CHECK(placed != NULL);
  CHECK((placement != NULL) == (rank == 0));
  /* the same recorded bindings on every rank: key 2 is rank 1's pocl:1 */
  int bound = 0;
  for (size_t i = 0; i < hgr_graph_binding_count(placed); ++i) {
    int32_t key = 0;
    const char* spec = NULL;
    CHECK_OK(hgr_graph_binding(placed, i, &key, &spec));
    if (key == 2) bound = !strcmp(spec, "r1/pocl:1");
  }
  CHECK(bound);
  if (placement) {
    hgr_placement_device_t device;
    CHECK(hgr_placement_device_count(placement) == 2);
    CHECK_OK(hgr_placement_device(placement, 1, &device));
    CHECK(device.rank == 1);
    CHECK(!strcmp(device.spec, "r1/pocl:1"));
  }
  /* inputs on rank 0, the output back on rank 0 */
  hgr_executor_t* executor = NULL;
  CHECK_OK(hgr_mpi_executor_create(instance, placed, NULL, &executor));
  const float a[4] = {1, 2, 3, 4}, b[4] = {10, 20, 30, 40}, c[4] = {0.5f, 1, 1.5f, 2};
  if (rank == 0) {
    CHECK_OK(hgr_executor_set_input(executor, 0, a, sizeof(a)));
    CHECK_OK(hgr_executor_set_input(executor, 1, b, sizeof(b)));
    CHECK_OK(hgr_executor_set_input(executor, 2, c, sizeof(c)));
  }
  CHECK_OK(hgr_executor_run(executor));
  CHECK_OK(hgr_mpi_executor_wait(instance, executor));
  if (rank == 0) {
    float out[4] = {0};
    CHECK_OK(hgr_executor_get_output(executor, 0, out, sizeof(out)));
    for (int i = 0; i < 4; ++i) CHECK(out[i] == a[i] + b[i] - c[i]);
  }
  hgr_executor_release(executor);
  hgr_placement_release(placement);
  hgr_graph_release(placed);
  hgr_graph_release(graph);
}

static void a_spec_rank_1_lacks_fails_every_rank(void) {
  hgr_graph_t* graph = check_load_simplex();
  static const char* const devices[] = {"r0/pocl:0", "r1/pocl:7"};
  hgr_place_options_t options;
  options_for(&options, devices, 2);
  hgr_graph_t* placed = (hgr_graph_t*)&options; /* must become NULL */
  hgr_status_t status = hgr_mpi_place(instance, graph, &options, &placed, NULL);
  CHECK(placed == NULL);
  CHECK(hgr_status_code(status) == HGR_STATUS_NOT_FOUND);
  CHECK_CONTAINS(hgr_status_message(status), "rank 1: measuring its devices: placement device 2 'r1/pocl:7'");
  hgr_status_free(status);
  /* the caller's own measures */
  static const char* const good[] = {"r0/pocl:0", "r1/pocl:1"};
  options_for(&options, good, 2);
  const char* measures[2] = {NULL, "{}"};
  options.rank_measures = measures;
  options.rank_measure_count = 2;
  status = hgr_mpi_place(instance, graph, &options, &placed, NULL);
  CHECK(hgr_status_code(status) == HGR_STATUS_INVALID_ARGUMENT);
  CHECK_CONTAINS(hgr_status_message(status), "rank 0: hgr_mpi_place: options.rank_measures must be NULL");
  hgr_status_free(status);
  hgr_graph_release(graph);
}

int main(int argc, char** argv) {
  check_mpi_init(&argc, &argv, &rank, &rank_count);
  hgr_mpi_options_t options;
  hgr_mpi_options_init(&options);
  CHECK_OK(hgr_mpi_instance_create(MPI_COMM_WORLD, &options, &instance));
  /* rank 0: pocl:0 and no pocl:1; rank 1: pocl:1 (MPMD, POCL_DEVICES per rank) */
  size_t index = 0;
  hgr_instance_t* local = hgr_mpi_instance_local(instance);
  hgr_status_t has_0 = hgr_instance_find_device(local, "pocl:0", &index);
  hgr_status_t has_1 = hgr_instance_find_device(local, "pocl:1", &index);
  int fits = rank == 0 ? has_0 == HGR_OK && has_1 != HGR_OK : rank != 1 || has_1 == HGR_OK, all_fit = 0;
  hgr_status_free(has_0);
  hgr_status_free(has_1);
  MPI_Allreduce(&fits, &all_fit, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
  if (!all_fit) {
    if (rank == 0) printf("skipped: rank 0 needs pocl:0 without pocl:1, rank 1 pocl:1 (POCL_DEVICES per rank)\n");
    hgr_mpi_instance_release(instance);
    MPI_Finalize();
    return 77;
  }
  RUN_TEST(stages_over_two_ranks_run_everywhere);
  RUN_TEST(a_spec_rank_1_lacks_fails_every_rank);
  hgr_mpi_instance_release(instance);
  MPI_Finalize();
  return 0;
}
