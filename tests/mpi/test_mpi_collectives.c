/* libhgr_mpi's collectives on 2 or more ranks: agreement (every rank learns the
 * lowest failing rank's error), texts gathered to rank 0 and broadcast from it,
 * every rank's devices written on rank 0, and the link measurement; and
 * hgr_mpi_place's calibration turns for ranks on several hosts. */
#include <math.h>

#include "mpi_check.h"
#include "mpi_internal.h"

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

/* Rank r's text: r lines "rank r" (rank 0's is empty). */
static size_t rank_text(int r, char* text, size_t capacity) {
  size_t length = 0;
  text[0] = '\0';
  for (int line = 0; line < r; ++line) length += (size_t)snprintf(text + length, capacity - length, "rank %d\n", r);
  return length;
}

static void texts_are_gathered_to_rank_0_in_rank_order(void) {
  char text[256];
  size_t length = rank_text(rank, text, sizeof(text));
  char* sentinel = NULL;
  char** texts = &sentinel; /* set to NULL on every rank but 0 */
  CHECK_OK(hgr_mpi_gather_texts(instance, rank == 0 ? NULL : text, length, "gathering", &texts));
  if (rank != 0) {
    CHECK(texts == NULL);
    return;
  }
  CHECK(texts != NULL);
  for (int r = 0; r < rank_count; ++r) {
    char expected[256];
    rank_text(r, expected, sizeof(expected));
    CHECK(!strcmp(texts[r], expected));
  }
  free(texts);
}

static void a_bad_text_on_rank_1_fails_the_gather_on_every_rank(void) {
  char** texts = NULL;
  hgr_status_t status = hgr_mpi_gather_texts(instance, NULL, rank == 1 ? 3 : 0, "gathering", &texts);
  CHECK(hgr_status_code(status) == HGR_STATUS_INVALID_ARGUMENT);
  CHECK_CONTAINS(hgr_status_message(status), "rank 1: gathering: ");
  CHECK(texts == NULL);
  hgr_status_free(status);
}

static void rank_0s_text_reaches_every_rank(void) {
  /* longer than any internal buffer: 1 MiB of a pattern */
  size_t length = (size_t)1 << 20;
  char* text = rank == 0 ? malloc(length) : NULL;
  for (size_t i = 0; text && i < length; ++i) text[i] = (char)('a' + i % 26);
  char* received = NULL;
  size_t received_length = 0;
  CHECK_OK(hgr_mpi_broadcast_text(instance, text, length, "sending", &received, &received_length));
  CHECK(received != NULL && received != text && received_length == length && received[length] == '\0');
  for (size_t i = 0; i < length; ++i)
    CHECK(received[i] == (char)('a' + i % 26));
  free(received);
  free(text);
  CHECK_OK(hgr_mpi_broadcast_text(instance, NULL, 0, NULL, &received, &received_length));
  CHECK(received && !strcmp(received, "") && received_length == 0);
  free(received);
}

/* Ranks sharing a host measure one after another, ranks of different hosts at
 * once; rank 0 measures nothing (hgr_place calibrates it). */
static void ranks_take_calibration_turns_per_host(void) {
  static const char* const hosts[] = {"a", "a", "b", "a", "b", "c", "a"};
  int turns[7];
  CHECK(hgr__mpi_host_turns(hosts, 7, turns) == 3);
  static const int expected[7] = {-1, 0, 0, 1, 1, 0, 2};
  for (int r = 0; r < 7; ++r) CHECK(turns[r] == expected[r]);
  static const char* const one_host[] = {"a", "a", "a"};
  CHECK(hgr__mpi_host_turns(one_host, 3, turns) == 2); /* as before: rank 1, then rank 2 */
  CHECK(turns[0] == -1 && turns[1] == 0 && turns[2] == 1);
  CHECK(hgr__mpi_host_turns(one_host, 1, turns) == 0 && turns[0] == -1);
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
  RUN_TEST(texts_are_gathered_to_rank_0_in_rank_order);
  RUN_TEST(a_bad_text_on_rank_1_fails_the_gather_on_every_rank);
  RUN_TEST(rank_0s_text_reaches_every_rank);
  RUN_TEST(ranks_take_calibration_turns_per_host);
  RUN_TEST(devices_are_written_on_rank_0_with_their_rank);
  RUN_TEST(devices_write_needs_out_on_rank_0);
  RUN_TEST(link_measurement_is_positive_and_the_same_everywhere);
  hgr_mpi_instance_release(instance);
  MPI_Finalize();
  return 0;
}
