/* Whole files: reading one into memory, and writing one atomically (a temporary
 * file, then rename) so that concurrent readers never see half a file. */
#include <errno.h>
#include <stdatomic.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "file.h"
#include "internal.h"

hgr_status_t hgr__file_read(const char* path, void** out_data, size_t* out_length) {
  *out_data = NULL;
  *out_length = 0;
  FILE* file = fopen(path, "rb");
  if (!file)
    return HGR_STATUS(errno == ENOENT ? HGR_STATUS_NOT_FOUND : HGR_STATUS_UNAVAILABLE,
                      "cannot open '%s': %s", path, strerror(errno));
  hgr_status_t status = HGR_OK;
  size_t length = 0, capacity = 0;
  uint8_t* data = NULL;
  /* Read in growing chunks rather than trusting a seek: pipes have no size. */
  for (;;) {
    if (length == capacity) {
      size_t grown_capacity = capacity ? capacity * 2 : 65536;
      uint8_t* grown = grown_capacity > capacity ? realloc(data, grown_capacity) : NULL;
      if (!grown) {
        status = HGR_STATUS(HGR_STATUS_RESOURCE_EXHAUSTED, "out of host memory reading '%s'", path);
        goto cleanup;
      }
      data = grown;
      capacity = grown_capacity;
    }
    size_t got = fread(data + length, 1, capacity - length, file);
    length += got;
    if (got == 0) break;
  }
  if (ferror(file)) {
    status = HGR_STATUS(HGR_STATUS_UNAVAILABLE, "cannot read '%s': %s", path, strerror(errno));
    goto cleanup;
  }
cleanup:
  fclose(file);
  if (status) {
    free(data);
  } else {
    *out_data = data;
    *out_length = length;
  }
  return status;
}

hgr_status_t hgr__file_write_atomic(const char* path, const void* head, size_t head_length,
                                    const void* body, size_t body_length) {
  size_t capacity = strlen(path) + 32;
  char* temporary = malloc(capacity);
  if (!temporary) return HGR_STATUS(HGR_STATUS_RESOURCE_EXHAUSTED, "out of host memory");
  /* Unique per process and call, so concurrent writers never share a temporary. */
  static atomic_uint counter;
  snprintf(temporary, capacity, "%s.tmp.%ld.%u", path, (long)getpid(), atomic_fetch_add(&counter, 1));
  hgr_status_t status = HGR_OK;
  FILE* file = fopen(temporary, "wb");
  if (!file) {
    status =
        HGR_STATUS(HGR_STATUS_UNAVAILABLE, "cannot create '%s': %s", temporary, strerror(errno));
    goto cleanup;
  }
  /* Flushed to disk before the rename, so that a crash leaves the old file or the new
   * one, never a renamed empty one. */
  bool ok = fwrite(head, 1, head_length, file) == head_length &&
            (!body_length || fwrite(body, 1, body_length, file) == body_length) &&
            fflush(file) == 0 && fsync(fileno(file)) == 0;
  int error = errno;
  if (fclose(file) != 0 && ok) {
    ok = false;
    error = errno;
  }
  if (!ok) {
    status =
        HGR_STATUS(HGR_STATUS_UNAVAILABLE, "cannot write '%s': %s", temporary, strerror(error));
    remove(temporary);
  } else if (rename(temporary, path) != 0) {
    status = HGR_STATUS(HGR_STATUS_UNAVAILABLE, "cannot rename '%s' to '%s': %s", temporary, path,
                        strerror(errno));
    remove(temporary);
  }
cleanup:
  free(temporary);
  return status;
}
