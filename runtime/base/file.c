/* Whole files: reading one into memory under a cap, and writing one atomically (a temporary
 * file, then rename) so that concurrent readers never see half a file. */
#include <errno.h>
#include <fcntl.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "alloc.h"
#include "file.h"
#include "internal.h"

/* A read that a signal interrupted is retried: the caller asked for the file, not
 * for the signal. */
static ssize_t read_some(int fd, void* data, size_t length) {
  ssize_t got;
  do got = read(fd, data, length);
  while (got < 0 && errno == EINTR);
  return got;
}

hgr_status_t hgr__file_read(hgr_allocator_t allocator, const char* path, uint64_t max_bytes, void** out_data, size_t* out_length) {
  *out_data = NULL;
  *out_length = 0;
  /* Opened once: a FIFO opened a second time waits for a second writer. */
  int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY);
  if (fd < 0)
    return HGR_STATUS(errno == ENOENT ? HGR_STATUS_NOT_FOUND : HGR_STATUS_UNAVAILABLE, "cannot open '%s': %s",
                      path, strerror(errno));
  hgr_status_t status = HGR_OK;
  uint8_t* data = NULL;
  size_t length = 0, capacity = 0;
  /* No buffer may exceed the address space, whatever the caller's cap. */
  uint64_t cap = max_bytes < (uint64_t)SIZE_MAX - 1 ? max_bytes : (uint64_t)SIZE_MAX - 1;
  struct stat info;
  if (fstat(fd, &info) != 0) {
    status = HGR_STATUS(HGR_STATUS_UNAVAILABLE, "cannot stat '%s': %s", path, strerror(errno));
    goto cleanup;
  }
  if (S_ISDIR(info.st_mode)) {
    status = HGR_STATUS(HGR_STATUS_INVALID_ARGUMENT, "'%s' is a directory, not a file", path);
    goto cleanup;
  }
  bool regular = S_ISREG(info.st_mode);
  if (regular && (uint64_t)info.st_size > cap) {
    status = HGR_STATUS(HGR_STATUS_RESOURCE_EXHAUSTED, "'%s' is %llu bytes, more than %llu bytes, the fixed cap "
                        "on files of its kind", path, (unsigned long long)info.st_size, (unsigned long long)cap);
    goto cleanup;
  }
  /* A regular file's buffer fits it and one byte more, which finds its end (or that it
   * grew since fstat) without a realloc; a stream's grows, up to one byte over the cap,
   * which proves that more than the cap arrived. */
  capacity = regular ? (size_t)info.st_size + 1 : (size_t)(cap < 65535 ? cap + 1 : 65536);
  data = hgr__alloc(allocator, capacity);
  if (!data) {
    status = HGR_STATUS(HGR_STATUS_RESOURCE_EXHAUSTED, "out of host memory reading '%s' (%zu bytes)", path,
                        capacity);
    goto cleanup;
  }
  for (;;) {
    if (length == capacity) {
      if (length > cap) break;
      size_t grown_capacity = capacity <= cap / 2 ? capacity * 2 : (size_t)cap + 1;
      uint8_t* grown = hgr__realloc(allocator, data, grown_capacity);
      if (!grown) {
        status = HGR_STATUS(HGR_STATUS_RESOURCE_EXHAUSTED, "out of host memory reading '%s' (%zu bytes)", path,
                            grown_capacity);
        goto cleanup;
      }
      data = grown;
      capacity = grown_capacity;
    }
    ssize_t got = read_some(fd, data + length, capacity - length);
    if (got < 0) {
      status = HGR_STATUS(HGR_STATUS_UNAVAILABLE, "cannot read '%s': %s", path, strerror(errno));
      goto cleanup;
    }
    if (got == 0) break;
    length += (size_t)got;
  }
  if (length > cap)
    status = HGR_STATUS(HGR_STATUS_RESOURCE_EXHAUSTED, "'%s' holds more than %llu bytes, the fixed cap on files "
                        "of its kind%s", path, (unsigned long long)cap, regular ? " (it grew while being read)" : "");
cleanup:
  close(fd);
  if (status) {
    hgr__free(allocator, data);
  } else {
    *out_data = data;
    *out_length = length;
  }
  return status;
}

hgr_status_t hgr__file_map(hgr_allocator_t allocator, const char* path, uint64_t max_bytes, hgr__file_bytes_t* out) {
  *out = (hgr__file_bytes_t){0};
  /* stat first: a FIFO is opened once only, by hgr__file_read (a second open waits
   * for a second writer). */
  struct stat info;
  int fd = stat(path, &info) == 0 && S_ISREG(info.st_mode) ? open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY) : -1;
  bool regular = fd >= 0 && fstat(fd, &info) == 0 && S_ISREG(info.st_mode);
  if (regular && info.st_size > 0 && (uint64_t)info.st_size <= max_bytes && (uint64_t)info.st_size <= SIZE_MAX) {
    void* data = mmap(NULL, (size_t)info.st_size, PROT_READ, MAP_PRIVATE | MAP_POPULATE, fd, 0);
    if (data != MAP_FAILED) {
      close(fd);
      *out = (hgr__file_bytes_t){.data = data, .length = (size_t)info.st_size, .mapped = (size_t)info.st_size};
      return HGR_OK;
    }
  }
  if (fd >= 0) close(fd);
  /* Everything else, and every error, as a read: one open there, one set of messages. */
  void* data = NULL;
  size_t length = 0;
  HGR_RETURN_IF_ERROR(hgr__file_read(allocator, path, max_bytes, &data, &length));
  *out = (hgr__file_bytes_t){.data = data, .length = length, .mapped = 0};
  return HGR_OK;
}

void hgr__file_unmap(hgr_allocator_t allocator, hgr__file_bytes_t* bytes) {
  if (bytes->mapped) munmap((void*)bytes->data, bytes->mapped);
  else hgr__free(allocator, (void*)bytes->data);
  *bytes = (hgr__file_bytes_t){0};
}

hgr_status_t hgr__file_write_atomic(hgr_allocator_t allocator, const char* path, const void* head, size_t head_length,
                                    const void* body, size_t body_length) {
  size_t capacity = strlen(path) + 32;
  char* temporary = hgr__alloc(allocator, capacity);
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
  hgr__free(allocator, temporary);
  return status;
}
