/* libhgr_mpi's collectives on 2 or more ranks: agreement (every rank learns the
 * lowest failing rank's error), every rank's devices written on rank 0, and the
 * link measurement. */
#include <math.h>

#include "mpi_check.h"
#include "hgr/mpi.h"

static hgr_mpi_instance_t* instance;
static int rank, rank_count;

static void agree_passes_when_every_rank_passes(void) {
  CHECK_OK(hgr_mpi_agree(instance, HGR_OK, "nothing"));
  CHECK_OK(hgr_mpi_agree(instance, HGR_OK, NULL));
}

static void agree_gives_every_rank_the_failure_of_rank_1(void) {
  hgr_status_t local = rank == 1 ? HGR_STATUS(HGR_STATUS_NOT_FOUND, "input 'x' was not found") : HGR_OK;
  hgr_status_t status = hgr_mpi_agree(instance, local, "loading");
  CHECK(hgr_status_code(status) == HGR_STATUS_NOT_FOUND);
  CHECK(!strcmp(hgr_status_message(status), "rank 1: loading: input 'x' was not found"));
  hgr_status_free(status);
}

static void agree_names_the_lowest_failing_rank_and_keeps_the_own_failure(void) {
  hgr_status_t local = rank >= 1 ? HGR_STATUS(HGR_STATUS_OUT_OF_RANGE, "index %d too large", rank) : HGR_OK;
  hgr_status_t status = hgr_mpi_agree(instance, local, NULL);
  CHECK(hgr_status_code(status) == HGR_STATUS_OUT_OF_RANGE);
  CHECK_CONTAINS(hgr_status_message(status), "rank 1: ");
  CHECK_CONTAINS(hgr_status_message(status), "index 1 too large");
  char* text = hgr_status_to_string(status);
  if (rank >= 2) {
    char own[64];
    snprintf(own, sizeof(own), "rank %d: index %d too large", rank, rank);
    CHECK(strstr(text, own) != NULL); /* joined after rank 1's */
  }
  free(text);
  hgr_status_free(status);
}

static void devices_are_written_on_rank_0_with_their_rank(void) {
  char* text = NULL;
  size_t length = 0;
  FILE* out = rank == 0 ? open_memstream(&text, &length) : NULL;
  CHECK_OK(hgr_mpi_devices_write(instance, out));
  int devices_on_1 = (int)hgr_instance_device_count(hgr_mpi_instance_local(instance));
  MPI_Bcast(&devices_on_1, 1, MPI_INT, 1, MPI_COMM_WORLD);
  if (rank == 0) {
    fclose(out);
    if (devices_on_1) {
      CHECK_CONTAINS(text, "r1/");
      CHECK_CONTAINS(text, "SPEC");
      if (hgr_instance_device_count(hgr_mpi_instance_local(instance)))
        CHECK_CONTAINS(text, "cross-host");
    } else {
      CHECK_CONTAINS(text, "r1");
    }
    free(text);
  }
}

static void devices_write_needs_out_on_rank_0(void) {
  hgr_status_t status = hgr_mpi_devices_write(instance, NULL);
  CHECK(hgr_status_code(status) == HGR_STATUS_INVALID_ARGUMENT);
  CHECK_CONTAINS(hgr_status_message(status), "rank 0: ");
  hgr_status_free(status);
}

static void link_measurement_is_positive_and_the_same_everywhere(void) {
  double latency_ms = -1, ms_per_byte = -1;
  CHECK_OK(hgr_mpi_measure_link(instance, &latency_ms, &ms_per_byte));
  CHECK(isfinite(latency_ms) && latency_ms > 0);
  CHECK(isfinite(ms_per_byte) && ms_per_byte > 0);
  double lowest[2], highest[2], mine[2] = {latency_ms, ms_per_byte};
  MPI_Allreduce(mine, lowest, 2, MPI_DOUBLE, MPI_MIN, MPI_COMM_WORLD);
  MPI_Allreduce(mine, highest, 2, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
  CHECK(lowest[0] == highest[0] && lowest[1] == highest[1]);
}

int main(int argc, char** argv) {
  check_mpi_init(&argc, &argv, &rank, &rank_count);
  hgr_mpi_options_t options;
  hgr_mpi_options_init(&options);
  options.timeout_s = 30;
  CHECK_OK(hgr_mpi_instance_create(MPI_COMM_WORLD, &options, &instance));
  RUN_TEST(agree_passes_when_every_rank_passes);
  RUN_TEST(agree_gives_every_rank_the_failure_of_rank_1);
  RUN_TEST(agree_names_the_lowest_failing_rank_and_keeps_the_own_failure);
  RUN_TEST(devices_are_written_on_rank_0_with_their_rank);
  RUN_TEST(devices_write_needs_out_on_rank_0);
  RUN_TEST(link_measurement_is_positive_and_the_same_everywhere);
  hgr_mpi_instance_release(instance);
  MPI_Finalize();
  return 0;
}
