/* The copy benchmark's raw OpenCL baselines: one buffer copied from a device to
 * another with the OpenCL API only, each way a careful hand-written program would
 * (see raw_copy.c for the exact calls). */
#ifndef HGR_BENCH_RAW_COPY_H_
#define HGR_BENCH_RAW_COPY_H_

#include <stdbool.h>
#include <stddef.h>

typedef struct raw_copy_s raw_copy_t;

/* Buffers of max_bytes on the devices named from and to (one context when they
 * share a platform, as hgr does), an in-order queue on each, and host staging.
 * Exits on an OpenCL error. */
raw_copy_t* raw_copy_create(const char* from, const char* to, size_t max_bytes);
void raw_copy_release(raw_copy_t* copy);

/* True when both devices share one context (clEnqueueCopyBuffer works). */
bool raw_copy_same_context(const raw_copy_t* copy);

/* Writes the first bytes of the source buffer (blocking). */
void raw_copy_fill_source(raw_copy_t* copy, const void* data, size_t bytes);
/* Reads the first bytes of the destination buffer (blocking). */
void raw_copy_read_destination(raw_copy_t* copy, void* data, size_t bytes);
/* Zeroes the first bytes of the destination (so that a check proves a copy ran). */
void raw_copy_clear_destination(raw_copy_t* copy, size_t bytes);

/* Each copies the first bytes of the source into the destination and returns once
 * the copy is complete:
 *   direct          clEnqueueCopyBuffer on the destination's queue (same context);
 *   staged          blocking read into host staging, then blocking write (2 copies);
 *   map_source      blocking map of the source for reading, blocking write from the
 *                   mapped pointer, unmap (1 copy);
 *   map_destination blocking map of the destination (write-invalidate), blocking
 *                   read into the mapped pointer, unmap (1 copy);
 *   map_source_chunked, map_destination_chunked
 *                   the same with the write (read) split into commands of at most
 *                   chunk_bytes, waited for once: on these CPU drivers a single
 *                   command is one memcpy, whose speed depends on its size (glibc
 *                   switches to streaming stores above a threshold, 192 MiB on the
 *                   test machine), so either can be the faster way to move a large
 *                   buffer. */
void raw_copy_direct(raw_copy_t* copy, size_t bytes);
void raw_copy_staged(raw_copy_t* copy, size_t bytes);
void raw_copy_map_source(raw_copy_t* copy, size_t bytes);
void raw_copy_map_destination(raw_copy_t* copy, size_t bytes);
void raw_copy_map_source_chunked(raw_copy_t* copy, size_t bytes, size_t chunk_bytes);
void raw_copy_map_destination_chunked(raw_copy_t* copy, size_t bytes, size_t chunk_bytes);

#endif /* HGR_BENCH_RAW_COPY_H_ */
