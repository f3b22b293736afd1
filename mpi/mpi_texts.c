/* Texts between ranks (hgr_mpi_gather_texts, hgr_mpi_broadcast_text in hgr/mpi.h):
 * every rank's text to rank 0 (MPI_Igather of the lengths, then MPI_Igatherv into
 * one block) and rank 0's text to every rank (MPI_Ibcast of the length, then of the
 * text in pieces of at most 1 GiB), each within the instance's timeout and agreed.
 * What MPI may still read or write after a timeout is a copy on the heap, abandoned
 * to the instance; the caller's own buffers are never handed to MPI. */
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "mpi_internal.h"

#define PIECE_BYTES ((size_t)1 << 30)

/* What a gather hands to MPI; on the heap because a timeout leaves it pending. */
typedef struct gather_block_t {
  int length;
  char* mine;   /* a copy of this rank's text */
  int* lengths; /* rank 0: per rank */
  int* offsets; /* rank 0: per rank, in texts' characters */
  char** texts; /* rank 0: the result, pointers then characters in one allocation */
} gather_block_t;

static void gather_block_free(hgr_mpi_instance_t* instance, gather_block_t* block, int timed_out) {
  void* parts[] = {block->mine, block->lengths, block->offsets, block->texts, block};
  for (size_t p = 0; p < sizeof(parts) / sizeof(*parts); ++p) {
    if (timed_out) hgr__mpi_abandon(instance, parts[p]);
    else free(parts[p]);
  }
}

hgr_status_t hgr_mpi_gather_texts(hgr_mpi_instance_t* instance, const char* text, size_t length, const char* what,
                                  char*** out_texts) {
  if (out_texts) *out_texts = NULL;
  if (!instance) return HGR_STATUS(HGR_STATUS_INVALID_ARGUMENT, "hgr_mpi_gather_texts: instance is NULL");
  if (!what) what = "hgr_mpi_gather_texts";
  const int ranks = instance->rank_count;
  hgr_status_t status = HGR_OK;
  gather_block_t* block = NULL;
  if (!out_texts || (!text && length))
    status = HGR_STATUS(HGR_STATUS_INVALID_ARGUMENT, "%s: out_texts is NULL, or text is NULL with %zu bytes", what,
                        length);
  else if (length > INT_MAX)
    status = HGR_STATUS(HGR_STATUS_RESOURCE_EXHAUSTED, "%s: %zu bytes to gather", what, length);
  else if (!(block = calloc(1, sizeof(*block))) || !(block->mine = malloc(length + 1)) ||
           (instance->rank == 0 && (!(block->lengths = calloc((size_t)ranks, sizeof(int))) ||
                                    !(block->offsets = calloc((size_t)ranks, sizeof(int))))))
    status = HGR_STATUS(HGR_STATUS_RESOURCE_EXHAUSTED, "%s: out of host memory", what);
  if (!status) {
    if (length) memcpy(block->mine, text, length);
    block->length = (int)length;
  }
  int timed_out = 0;
  MPI_Request request = MPI_REQUEST_NULL;
  if ((status = hgr_mpi_agree(instance, status, what))) goto cleanup;

  double deadline = hgr__mpi_now() + instance->timeout_s;
  int error = MPI_Igather(&block->length, 1, MPI_INT, block->lengths, 1, MPI_INT, 0, instance->comm, &request);
  if (error != MPI_SUCCESS) status = HGR_MPI_STATUS(error, "rank %d: %s: MPI_Igather", instance->rank, what);
  else status = hgr__mpi_wait(instance, &request, deadline, what, &timed_out);
  if (timed_out) goto cleanup;
  if (!status && instance->rank == 0) {
    /* each text followed by its NUL, after the array of pointers */
    size_t total = 0;
    for (int r = 0; r < ranks; ++r) {
      block->offsets[r] = (int)(total < INT_MAX ? total : 0);
      total += (size_t)block->lengths[r] + 1;
    }
    if (total > INT_MAX)
      status = HGR_STATUS(HGR_STATUS_RESOURCE_EXHAUSTED, "%s: the texts take %zu bytes", what, total);
    else if (!(block->texts = malloc((size_t)ranks * sizeof(char*) + total)))
      status = HGR_STATUS(HGR_STATUS_RESOURCE_EXHAUSTED, "%s: out of host memory for every rank's text", what);
  }
  /* Every rank takes part in the second gather unless the first failed somewhere. */
  if ((status = hgr_mpi_agree(instance, status, what))) goto cleanup;
  char* characters = instance->rank == 0 ? (char*)(block->texts + ranks) : NULL;
  error = MPI_Igatherv(block->mine, block->length, MPI_CHAR, characters, block->lengths, block->offsets, MPI_CHAR, 0,
                       instance->comm, &request);
  if (error != MPI_SUCCESS) status = HGR_MPI_STATUS(error, "rank %d: %s: MPI_Igatherv", instance->rank, what);
  else status = hgr__mpi_wait(instance, &request, deadline, what, &timed_out);
  if (timed_out) goto cleanup;
  if ((status = hgr_mpi_agree(instance, status, what))) goto cleanup;
  for (int r = 0; instance->rank == 0 && r < ranks; ++r) {
    block->texts[r] = characters + block->offsets[r];
    block->texts[r][block->lengths[r]] = '\0';
  }
  *out_texts = block->texts;
  block->texts = NULL;

cleanup:
  if (block) gather_block_free(instance, block, timed_out);
  return status;
}

/* What a broadcast hands to MPI; on the heap because a timeout leaves it pending. */
typedef struct broadcast_block_t {
  unsigned long long length;
  char* text; /* rank 0: a copy of its text; the others: what they receive */
} broadcast_block_t;

hgr_status_t hgr_mpi_broadcast_text(hgr_mpi_instance_t* instance, const char* text, size_t length, const char* what,
                                    char** out_text, size_t* out_length) {
  if (out_text) *out_text = NULL;
  if (out_length) *out_length = 0;
  if (!instance) return HGR_STATUS(HGR_STATUS_INVALID_ARGUMENT, "hgr_mpi_broadcast_text: instance is NULL");
  if (!what) what = "hgr_mpi_broadcast_text";
  const int root = instance->rank == 0;
  hgr_status_t status = HGR_OK;
  broadcast_block_t* block = NULL;
  if (!out_text || !out_length || (root && !text && length))
    status = HGR_STATUS(HGR_STATUS_INVALID_ARGUMENT, "%s: out_text or out_length is NULL, or rank 0's text is NULL "
                        "with %zu bytes", what, length);
  else if (!(block = calloc(1, sizeof(*block))) || (root && !(block->text = malloc(length + 1))))
    status = HGR_STATUS(HGR_STATUS_RESOURCE_EXHAUSTED, "%s: out of host memory", what);
  if (!status && root) {
    if (length) memcpy(block->text, text, length);
    block->text[length] = '\0';
    block->length = length;
  }
  int timed_out = 0;
  MPI_Request request = MPI_REQUEST_NULL;
  if ((status = hgr_mpi_agree(instance, status, what))) goto cleanup;

  double deadline = hgr__mpi_now() + instance->timeout_s;
  int error = MPI_Ibcast(&block->length, 1, MPI_UNSIGNED_LONG_LONG, 0, instance->comm, &request);
  if (error != MPI_SUCCESS) status = HGR_MPI_STATUS(error, "rank %d: %s: MPI_Ibcast", instance->rank, what);
  else status = hgr__mpi_wait(instance, &request, deadline, what, &timed_out);
  if (timed_out) goto cleanup;
  if (!status && !root && (block->length > SIZE_MAX - 1 || !(block->text = malloc((size_t)block->length + 1))))
    status = HGR_STATUS(HGR_STATUS_RESOURCE_EXHAUSTED, "%s: out of host memory for %llu bytes", what, block->length);
  if ((status = hgr_mpi_agree(instance, status, what))) goto cleanup;
  for (unsigned long long at = 0; !status && at < block->length; at += PIECE_BYTES) {
    int piece = (int)(block->length - at < PIECE_BYTES ? block->length - at : PIECE_BYTES);
    error = MPI_Ibcast(block->text + at, piece, MPI_CHAR, 0, instance->comm, &request);
    if (error != MPI_SUCCESS) status = HGR_MPI_STATUS(error, "rank %d: %s: MPI_Ibcast", instance->rank, what);
    else status = hgr__mpi_wait(instance, &request, deadline, what, &timed_out);
  }
  if (timed_out) goto cleanup;
  if ((status = hgr_mpi_agree(instance, status, what))) goto cleanup;
  block->text[block->length] = '\0';
  *out_text = block->text;
  *out_length = (size_t)block->length;
  block->text = NULL;

cleanup:
  if (block && timed_out) {
    hgr__mpi_abandon(instance, block->text);
    hgr__mpi_abandon(instance, block);
  } else if (block) {
    free(block->text);
    free(block);
  }
  return status;
}
