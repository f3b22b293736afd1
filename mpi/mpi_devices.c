/* Every rank's devices on rank 0 (hgr_mpi_devices_write) and the cost of the link
 * between ranks (hgr_mpi_measure_link).
 *
 * Devices travel as text, one record a line, fields separated by tabs (tabs and
 * newlines inside names become spaces):
 *   D  spec  platform  name  type  global bytes  max alloc bytes  CUs  major  minor
 *   S  platform  reason                     (a skipped platform)
 *   P  class class ...                      (one row of the local pair matrix)
 * gathered to rank 0 (hgr_mpi_gather_texts). */
#include <float.h>
#include <inttypes.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mpi_internal.h"

/* ---- growing text ---- */

typedef struct text_t {
  char* data;
  size_t length;
  size_t capacity;
  int failed; /* out of memory */
} text_t;

static void text_append(text_t* text, const char* piece) {
  size_t add = strlen(piece);
  if (text->failed) return;
  if (text->length + add + 1 > text->capacity) {
    size_t capacity = text->capacity ? text->capacity : 1024;
    while (capacity < text->length + add + 1) capacity *= 2;
    char* data = realloc(text->data, capacity);
    if (!data) {
      text->failed = 1;
      return;
    }
    text->data = data;
    text->capacity = capacity;
  }
  memcpy(text->data + text->length, piece, add + 1);
  text->length += add;
}

/* A field: tabs and newlines would break the record, so they become spaces. */
static void text_field(text_t* text, const char* field) {
  char piece[512];
  snprintf(piece, sizeof(piece), "\t%s", field ? field : "");
  for (char* at = piece + 1; *at; ++at)
    if (*at == '\t' || *at == '\n' || *at == '\r') *at = ' ';
  text_append(text, piece);
}

static void text_number(text_t* text, uint64_t number) {
  char piece[32];
  snprintf(piece, sizeof(piece), "\t%" PRIu64, number);
  text_append(text, piece);
}

static void describe_local(const hgr_instance_t* local, text_t* text) {
  size_t count = hgr_instance_device_count(local);
  for (size_t i = 0; i < count; ++i) {
    const hgr_device_info_t* device = hgr_instance_device(local, i);
    text_append(text, "D");
    text_field(text, device->spec);
    text_field(text, device->platform_name);
    text_field(text, device->name);
    text_field(text, hgr_device_type_name(device->type));
    text_number(text, device->global_mem_bytes);
    text_number(text, device->max_alloc_bytes);
    text_number(text, device->compute_units);
    text_number(text, (uint64_t)(device->opencl_major < 0 ? 0 : device->opencl_major));
    text_number(text, (uint64_t)(device->opencl_minor < 0 ? 0 : device->opencl_minor));
    text_append(text, "\n");
  }
  size_t skipped = hgr_instance_skipped_platform_count(local);
  for (size_t i = 0; i < skipped; ++i) {
    const hgr_skipped_platform_t* platform = hgr_instance_skipped_platform(local, i);
    text_append(text, "S");
    text_field(text, platform->name);
    text_field(text, platform->reason);
    text_append(text, "\n");
  }
  for (size_t a = 0; a < count; ++a) {
    text_append(text, "P");
    for (size_t b = 0; b < count; ++b) text_number(text, (uint64_t)hgr_instance_pair_class(local, a, b));
    text_append(text, "\n");
  }
}

/* ---- rank 0's table ---- */

typedef struct device_row_t {
  int rank;
  char* fields[10]; /* as in the record, fields[0] being "D" */
} device_row_t;

typedef struct rank_devices_t {
  size_t first; /* its first device among all */
  size_t count;
  size_t pair_rows;
  char** pairs; /* count rows of count classes, as text */
} rank_devices_t;

/* Splits a line in place at tabs; returns the field count (at most max). */
static size_t split_fields(char* line, char** fields, size_t max) {
  size_t count = 0;
  while (count < max) {
    fields[count++] = line;
    char* tab = strchr(line, '\t');
    if (!tab) break;
    *tab = '\0';
    line = tab + 1;
  }
  return count;
}

static const char* format_bytes(uint64_t bytes, char* buffer, size_t capacity) {
  const char* units[] = {"B", "KiB", "MiB", "GiB", "TiB"};
  double value = (double)bytes;
  size_t unit = 0;
  while (value >= 1024.0 && unit + 1 < sizeof(units) / sizeof(units[0])) {
    value /= 1024.0;
    unit++;
  }
  if (unit == 0) snprintf(buffer, capacity, "%" PRIu64 " B", bytes);
  else snprintf(buffer, capacity, "%.1f %s", value, units[unit]);
  return buffer;
}

/* The pair class of devices a and b (indices among all): cross-host between ranks,
 * else what that rank's instance said. */
static const char* pair_name(const device_row_t* rows, const rank_devices_t* ranks, size_t a, size_t b) {
  if (rows[a].rank != rows[b].rank) return hgr_pair_class_name(HGR_PAIR_CROSS_HOST);
  const rank_devices_t* owner = &ranks[rows[a].rank];
  size_t row = a - owner->first, column = b - owner->first;
  if (row >= owner->pair_rows) return "?";
  const char* at = owner->pairs[row] + 1; /* past "P" */
  long value = -1;
  for (size_t i = 0; i <= column && *at == '\t'; ++i) {
    char* end = NULL;
    value = strtol(at + 1, &end, 10);
    at = end;
    if (i < column) value = -1;
  }
  if (value < 0 || value >= HGR_PAIR_CLASS_COUNT) return "?";
  return hgr_pair_class_name((hgr_pair_class_t)value);
}

static hgr_status_t write_table(FILE* out, char** texts, int rank_count) {
  hgr_status_t status = HGR_OK;
  size_t device_capacity = 16, device_count = 0;
  device_row_t* rows = malloc(device_capacity * sizeof(*rows));
  rank_devices_t* ranks = calloc((size_t)rank_count, sizeof(*ranks));
  char** skipped = NULL;
  int* skipped_rank = NULL;
  size_t skipped_count = 0;
  if (!rows || !ranks) {
    status = HGR_STATUS(HGR_STATUS_RESOURCE_EXHAUSTED, "rank 0: out of host memory for the device table");
    goto cleanup;
  }
  /* Parse every rank's records in place. */
  size_t total_lines = 0;
  for (int r = 0; r < rank_count; ++r)
    for (const char* c = texts[r]; *c; ++c) total_lines += *c == '\n';
  skipped = malloc((total_lines + 1) * sizeof(*skipped));
  skipped_rank = malloc((total_lines + 1) * sizeof(*skipped_rank));
  for (int r = 0; r < rank_count && skipped && skipped_rank; ++r) {
    ranks[r].first = device_count;
    size_t length = strlen(texts[r]);
    ranks[r].pairs = malloc((length + 1) * sizeof(char*));
    if (!ranks[r].pairs) break;
    char* line = texts[r];
    char* end = line + length;
    while (line < end) {
      char* newline = memchr(line, '\n', (size_t)(end - line));
      if (!newline) break;
      *newline = '\0';
      if (line[0] == 'D') {
        if (device_count == device_capacity) {
          device_row_t* grown = realloc(rows, 2 * device_capacity * sizeof(*rows));
          if (!grown) break;
          rows = grown;
          device_capacity *= 2;
        }
        device_row_t* row = &rows[device_count];
        memset(row, 0, sizeof(*row));
        row->rank = r;
        if (split_fields(line, row->fields, 10) == 10) {
          device_count++;
          ranks[r].count++;
        }
      } else if (line[0] == 'S') {
        skipped[skipped_count] = line;
        skipped_rank[skipped_count++] = r;
      } else if (line[0] == 'P') {
        ranks[r].pairs[ranks[r].pair_rows++] = line;
      }
      line = newline + 1;
    }
  }
  if (!skipped || !skipped_rank) {
    status = HGR_STATUS(HGR_STATUS_RESOURCE_EXHAUSTED, "rank 0: out of host memory for the device table");
    goto cleanup;
  }
  for (int r = 0; r < rank_count; ++r)
    if (!ranks[r].pairs) {
      status = HGR_STATUS(HGR_STATUS_RESOURCE_EXHAUSTED, "rank 0: out of host memory for the device table");
      goto cleanup;
    }

  if (device_count == 0) {
    fprintf(out, "No OpenCL devices found on any of the %d ranks.\n", rank_count);
  } else {
    fprintf(out, "%-16s %-28s %-34s %-5s %10s %10s %4s  %s\n", "SPEC", "PLATFORM", "DEVICE", "TYPE", "MEMORY",
            "MAX ALLOC", "CUs", "OPENCL");
    for (size_t i = 0; i < device_count; ++i) {
      char** f = rows[i].fields;
      char spec[64], memory[32], alloc[32];
      snprintf(spec, sizeof(spec), "r%d/%s", rows[i].rank, f[1]);
      fprintf(out, "%-16s %-28.28s %-34.34s %-5s %10s %10s %4s  %s.%s\n", spec, f[2], f[3], f[4],
              format_bytes(strtoull(f[5], NULL, 10), memory, sizeof(memory)),
              format_bytes(strtoull(f[6], NULL, 10), alloc, sizeof(alloc)), f[7], f[8], f[9]);
    }
  }
  for (int r = 0; r < rank_count; ++r)
    if (!ranks[r].count && device_count) fprintf(out, "r%d: no OpenCL devices\n", r);
  if (skipped_count) {
    fprintf(out, "\nSkipped platforms:\n");
    for (size_t i = 0; i < skipped_count; ++i) {
      char* fields[3] = {"", "", ""};
      split_fields(skipped[i], fields, 3);
      char name[160];
      snprintf(name, sizeof(name), "r%d/%s", skipped_rank[i], fields[1]);
      fprintf(out, "  %-32s %s\n", name, fields[2]);
    }
  }
  if (device_count > 1) {
    fprintf(out, "\nDevice pairs (how a copy from ROW to COLUMN is made):\n%-16s", "");
    char spec[64];
    for (size_t b = 0; b < device_count; ++b) {
      snprintf(spec, sizeof(spec), "r%d/%s", rows[b].rank, rows[b].fields[1]);
      fprintf(out, " %-15s", spec);
    }
    fprintf(out, "\n");
    for (size_t a = 0; a < device_count; ++a) {
      snprintf(spec, sizeof(spec), "r%d/%s", rows[a].rank, rows[a].fields[1]);
      fprintf(out, "%-16s", spec);
      for (size_t b = 0; b < device_count; ++b) fprintf(out, " %-15s", pair_name(rows, ranks, a, b));
      fprintf(out, "\n");
    }
  }
  if (fflush(out) != 0 || ferror(out))
    status = HGR_STATUS(HGR_STATUS_UNAVAILABLE, "rank 0: writing the device table failed");

cleanup:
  if (ranks)
    for (int r = 0; r < rank_count; ++r) free(ranks[r].pairs);
  free(ranks);
  free(rows);
  free(skipped);
  free(skipped_rank);
  return status;
}

hgr_status_t hgr_mpi_devices_write(hgr_mpi_instance_t* instance, FILE* out) {
  if (!instance) return HGR_STATUS(HGR_STATUS_INVALID_ARGUMENT, "hgr_mpi_devices_write: instance is NULL");
  const char* what = "hgr_mpi_devices_write";
  hgr_status_t status = HGR_OK;
  if (instance->rank == 0 && !out) status = HGR_STATUS(HGR_STATUS_INVALID_ARGUMENT, "rank 0: out is NULL");
  text_t text = {0};
  if (!status) {
    describe_local(instance->local, &text);
    if (text.failed) status = HGR_STATUS(HGR_STATUS_RESOURCE_EXHAUSTED, "out of host memory describing the devices");
  }
  char** texts = NULL;
  if (!(status = hgr_mpi_agree(instance, status, what)))
    status = hgr_mpi_gather_texts(instance, text.data, text.length, what, &texts);
  free(text.data);
  if (status) return status;
  if (instance->rank == 0) status = write_table(out, texts, instance->rank_count);
  free(texts);
  return hgr_mpi_agree(instance, status, what);
}

/* ---- the link ---- */

#define LINK_SMALL_BYTES ((size_t)4 << 10)
#define LINK_LARGE_BYTES ((size_t)4 << 20)
#define LINK_REPETITIONS 5
#define LINK_TAG 1

/* One message to or from peer with a deadline. On a timeout the request is
 * cancelled and the buffer, which MPI may still use, abandoned (*out_timed_out). */
static hgr_status_t link_message(hgr_mpi_instance_t* instance, int send, int peer, unsigned char* buffer,
                                 size_t bytes, int* out_timed_out) {
  MPI_Request request = MPI_REQUEST_NULL;
  int error = send ? MPI_Isend(buffer, (int)bytes, MPI_BYTE, peer, LINK_TAG, instance->comm, &request)
                   : MPI_Irecv(buffer, (int)bytes, MPI_BYTE, peer, LINK_TAG, instance->comm, &request);
  if (error != MPI_SUCCESS)
    return HGR_MPI_STATUS(error, "rank %d: hgr_mpi_measure_link: %s rank %d", instance->rank,
                          send ? "MPI_Isend to" : "MPI_Irecv from", peer);
  /* Busy: MPI (without its own progress thread) moves a large message only inside
   * MPI_Test, and a sleep between tests would be measured as link time. */
  double deadline = hgr__mpi_now() + instance->timeout_s;
  for (;;) {
    int done = 0;
    error = MPI_Test(&request, &done, MPI_STATUS_IGNORE);
    if (error != MPI_SUCCESS)
      return HGR_MPI_STATUS(error, "rank %d: hgr_mpi_measure_link: MPI_Test", instance->rank);
    if (done) return HGR_OK;
    if (hgr__mpi_now() > deadline) break;
  }
  MPI_Cancel(&request);
  *out_timed_out = 1;
  return HGR_STATUS(HGR_STATUS_UNAVAILABLE, "rank %d: hgr_mpi_measure_link: rank %d did not %s %zu bytes within %g s",
                    instance->rank, peer, send ? "take" : "send", bytes, instance->timeout_s);
}

hgr_status_t hgr_mpi_measure_link(hgr_mpi_instance_t* instance, double* out_latency_ms, double* out_ms_per_byte) {
  if (!instance) return HGR_STATUS(HGR_STATUS_INVALID_ARGUMENT, "hgr_mpi_measure_link: instance is NULL");
  const char* what = "hgr_mpi_measure_link";
  hgr_status_t status = HGR_OK;
  if (!out_latency_ms || !out_ms_per_byte)
    status = HGR_STATUS(HGR_STATUS_INVALID_ARGUMENT, "out_latency_ms or out_ms_per_byte is NULL");
  unsigned char* buffer = status ? NULL : calloc(1, LINK_LARGE_BYTES);
  double* result = calloc(2, sizeof(double)); /* latency, per byte: broadcast from rank 0 */
  if (!status && (!buffer || !result))
    status = HGR_STATUS(HGR_STATUS_RESOURCE_EXHAUSTED, "out of host memory for the link measurement");
  int timed_out = 0;
  if ((status = hgr_mpi_agree(instance, status, what))) goto cleanup;

  /* Rank 0 with each other rank in turn; the others wait in the agreement. */
  double slowest_large = -1.0;
  const size_t sizes[2] = {LINK_SMALL_BYTES, LINK_LARGE_BYTES};
  for (int peer = 1; peer < instance->rank_count && !status; ++peer) {
    if (instance->rank != 0 && instance->rank != peer) continue;
    double best[2] = {DBL_MAX, DBL_MAX}; /* one-way ms at each size, the fastest repetition */
    for (int s = 0; s < 2 && !status; ++s) {
      /* One more than counted: the first warms the connection up. */
      for (int repetition = 0; repetition <= LINK_REPETITIONS && !status; ++repetition) {
        double started = hgr__mpi_now();
        if (instance->rank == 0) {
          status = link_message(instance, 1, peer, buffer, sizes[s], &timed_out);
          if (!status) status = link_message(instance, 0, peer, buffer, sizes[s], &timed_out);
        } else {
          status = link_message(instance, 0, 0, buffer, sizes[s], &timed_out);
          if (!status) status = link_message(instance, 1, 0, buffer, sizes[s], &timed_out);
        }
        double one_way_ms = (hgr__mpi_now() - started) * 1e3 / 2.0;
        if (!status && repetition > 0 && one_way_ms < best[s]) best[s] = one_way_ms;
      }
    }
    if (status || instance->rank != 0) continue;
    if (best[1] > slowest_large) {
      slowest_large = best[1];
      /* latency + bytes * per_byte through both points; noise can make either
       * non-positive, then each falls back to what one size alone says. */
      double per_byte = (best[1] - best[0]) / (double)(LINK_LARGE_BYTES - LINK_SMALL_BYTES);
      if (!(per_byte > 0)) per_byte = best[1] / (double)LINK_LARGE_BYTES;
      double latency = best[0] - (double)LINK_SMALL_BYTES * per_byte;
      if (!(latency > 0)) latency = best[0];
      result[0] = latency;
      result[1] = per_byte;
    }
  }
  if (timed_out) goto cleanup;
  if ((status = hgr_mpi_agree(instance, status, what))) goto cleanup;
  MPI_Request request = MPI_REQUEST_NULL;
  int error = MPI_Ibcast(result, 2, MPI_DOUBLE, 0, instance->comm, &request);
  if (error != MPI_SUCCESS) status = HGR_MPI_STATUS(error, "rank %d: %s: MPI_Ibcast", instance->rank, what);
  else status = hgr__mpi_wait(instance, &request, hgr__mpi_now() + instance->timeout_s, what, &timed_out);
  if (timed_out) goto cleanup;
  if ((status = hgr_mpi_agree(instance, status, what))) goto cleanup;
  *out_latency_ms = result[0];
  *out_ms_per_byte = result[1];

cleanup:
  if (timed_out) {
    hgr__mpi_abandon(instance, buffer);
    hgr__mpi_abandon(instance, result);
  } else {
    free(buffer);
    free(result);
  }
  return status;
}
