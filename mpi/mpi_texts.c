/* Texts between ranks (mpi_internal.h): every rank's text to rank 0 (MPI_Igather of
 * the lengths, then MPI_Igatherv) and rank 0's text to every rank (MPI_Ibcast of the
 * length, then of the text in pieces of at most 1 GiB), each within the instance's
 * timeout and agreed. Buffers MPI may still write after a timeout are abandoned to
 * the instance. */
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "mpi_internal.h"

#define PIECE_BYTES ((size_t)1 << 30)

/* What a gather writes; on the heap because a timeout leaves it pending. */
typedef struct gather_block_t {
  int length;
  char* mine;
  hgr__mpi_gathered_t gathered; /* rank 0 */
} gather_block_t;

void hgr__mpi_gathered_free(hgr__mpi_gathered_t* gathered) {
  free(gathered->all);
  free(gathered->lengths);
  free(gathered->offsets);
  memset(gathered, 0, sizeof(*gathered));
}

static void gather_block_abandon(hgr_mpi_instance_t* instance, gather_block_t* block) {
  hgr__mpi_abandon(instance, block->gathered.lengths);
  hgr__mpi_abandon(instance, block->gathered.offsets);
  hgr__mpi_abandon(instance, block->gathered.all);
  hgr__mpi_abandon(instance, block->mine);
  hgr__mpi_abandon(instance, block);
}

hgr_status_t hgr__mpi_gather(hgr_mpi_instance_t* instance, hgr_status_t local, const char* text, size_t length,
                             const char* what, hgr__mpi_gathered_t* out_gathered) {
  memset(out_gathered, 0, sizeof(*out_gathered));
  hgr_status_t status = local;
  int timed_out = 0;
  MPI_Request request = MPI_REQUEST_NULL;
  gather_block_t* block = status ? NULL : calloc(1, sizeof(*block));
  if (!status && length > INT_MAX)
    status = HGR_STATUS(HGR_STATUS_RESOURCE_EXHAUSTED, "%zu bytes to gather", length);
  else if (!status && (!block || !(block->mine = malloc(length + 1))))
    status = HGR_STATUS(HGR_STATUS_RESOURCE_EXHAUSTED, "out of host memory");
  if (!status) {
    memcpy(block->mine, text, length);
    block->length = (int)length;
    if (instance->rank == 0) {
      block->gathered.lengths = calloc((size_t)instance->rank_count, sizeof(int));
      block->gathered.offsets = calloc((size_t)instance->rank_count, sizeof(int));
      if (!block->gathered.lengths || !block->gathered.offsets)
        status = HGR_STATUS(HGR_STATUS_RESOURCE_EXHAUSTED, "out of host memory for %d ranks' texts",
                            instance->rank_count);
    }
  }
  if ((status = hgr_mpi_agree(instance, status, what))) goto cleanup;

  double deadline = hgr__mpi_now() + instance->timeout_s;
  int error = MPI_Igather(&block->length, 1, MPI_INT, block->gathered.lengths, 1, MPI_INT, 0, instance->comm, &request);
  if (error != MPI_SUCCESS) status = HGR_MPI_STATUS(error, "rank %d: %s: MPI_Igather", instance->rank, what);
  else status = hgr__mpi_wait(instance, &request, deadline, what, &timed_out);
  if (timed_out) goto cleanup;
  /* Every rank takes part in the second gather unless the first failed on it. */
  if (!status && instance->rank == 0) {
    size_t total = 0;
    for (int r = 0; r < instance->rank_count; ++r) {
      block->gathered.offsets[r] = (int)total;
      total += (size_t)block->gathered.lengths[r];
    }
    if (total > INT_MAX)
      status = HGR_STATUS(HGR_STATUS_RESOURCE_EXHAUSTED, "the texts take %zu bytes", total);
    else if (!(block->gathered.all = malloc(total + 1)))
      status = HGR_STATUS(HGR_STATUS_RESOURCE_EXHAUSTED, "out of host memory for every rank's text");
  }
  if ((status = hgr_mpi_agree(instance, status, what))) goto cleanup;
  error = MPI_Igatherv(block->mine, block->length, MPI_CHAR, block->gathered.all, block->gathered.lengths,
                       block->gathered.offsets, MPI_CHAR, 0, instance->comm, &request);
  if (error != MPI_SUCCESS) status = HGR_MPI_STATUS(error, "rank %d: %s: MPI_Igatherv", instance->rank, what);
  else status = hgr__mpi_wait(instance, &request, deadline, what, &timed_out);
  if (timed_out) goto cleanup;
  if ((status = hgr_mpi_agree(instance, status, what))) goto cleanup;
  *out_gathered = block->gathered;
  memset(&block->gathered, 0, sizeof(block->gathered));

cleanup:
  if (block && timed_out) {
    gather_block_abandon(instance, block);
  } else if (block) {
    hgr__mpi_gathered_free(&block->gathered);
    free(block->mine);
    free(block);
  }
  return status;
}

hgr_status_t hgr__mpi_broadcast(hgr_mpi_instance_t* instance, hgr_status_t local, char** inout_text,
                                size_t* inout_length, const char* what) {
  /* the length, then the text, on the heap: a timeout leaves them pending */
  hgr_status_t status = local;
  unsigned long long* length = status ? NULL : malloc(sizeof(*length));
  char* text = NULL;
  int timed_out = 0;
  MPI_Request request = MPI_REQUEST_NULL;
  if (!status && !length) status = HGR_STATUS(HGR_STATUS_RESOURCE_EXHAUSTED, "out of host memory");
  if ((status = hgr_mpi_agree(instance, status, what))) {
    free(length);
    return status;
  }
  *length = instance->rank == 0 ? (unsigned long long)*inout_length : 0;
  double deadline = hgr__mpi_now() + instance->timeout_s;
  int error = MPI_Ibcast(length, 1, MPI_UNSIGNED_LONG_LONG, 0, instance->comm, &request);
  if (error != MPI_SUCCESS) status = HGR_MPI_STATUS(error, "rank %d: %s: MPI_Ibcast", instance->rank, what);
  else status = hgr__mpi_wait(instance, &request, deadline, what, &timed_out);
  if (timed_out) {
    hgr__mpi_abandon(instance, length);
    return status;
  }
  if (!status && instance->rank != 0 && (*length > SIZE_MAX - 1 || !(text = malloc((size_t)*length + 1))))
    status = HGR_STATUS(HGR_STATUS_RESOURCE_EXHAUSTED, "out of host memory for %llu bytes", *length);
  if (instance->rank == 0) text = *inout_text;
  if ((status = hgr_mpi_agree(instance, status, what))) {
    if (instance->rank != 0) free(text);
    free(length);
    return status;
  }
  for (unsigned long long at = 0; !status && at < *length; at += PIECE_BYTES) {
    int piece = (int)(*length - at < PIECE_BYTES ? *length - at : PIECE_BYTES);
    error = MPI_Ibcast(text + at, piece, MPI_CHAR, 0, instance->comm, &request);
    if (error != MPI_SUCCESS) status = HGR_MPI_STATUS(error, "rank %d: %s: MPI_Ibcast", instance->rank, what);
    else status = hgr__mpi_wait(instance, &request, deadline, what, &timed_out);
  }
  if (timed_out) {
    /* rank 0's text is the caller's; MPI may still read it, so keep it */
    if (instance->rank == 0) *inout_text = NULL;
    hgr__mpi_abandon(instance, text);
    hgr__mpi_abandon(instance, length);
    return status;
  }
  if (instance->rank != 0 && !status) {
    text[*length] = '\0';
    *inout_text = text;
    *inout_length = (size_t)*length;
  } else if (instance->rank != 0) {
    free(text);
  }
  free(length);
  return hgr_mpi_agree(instance, status, what);
}
