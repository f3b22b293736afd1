/* hgr_mpi_instance_create refuses MPI initialized without MPI_THREAD_MULTIPLE:
 * FAILED_PRECONDITION saying what to do, and nothing created. */
#include "mpi_check.h"
#include "hgr/mpi.h"

int main(int argc, char** argv) {
  int provided = -1;
  MPI_Init_thread(&argc, &argv, MPI_THREAD_SINGLE, &provided);
  CHECK(provided == MPI_THREAD_SINGLE);
  hgr_mpi_instance_t* instance = (hgr_mpi_instance_t*)&provided; /* must be set to NULL */
  hgr_status_t status = hgr_mpi_instance_create(MPI_COMM_WORLD, NULL, &instance);
  CHECK(hgr_status_code(status) == HGR_STATUS_FAILED_PRECONDITION);
  CHECK_CONTAINS(hgr_status_message(status), "MPI_THREAD_SINGLE");
  CHECK_CONTAINS(hgr_status_message(status), "needs MPI_THREAD_MULTIPLE");
  CHECK(instance == NULL);
  hgr_status_free(status);
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  if (rank == 0) printf("ok instance_create_refuses_mpi_thread_single\n");
  MPI_Finalize();
  return 0;
}
