/* The on-disk store (store.h): the directory rule, mkdir -p, key -> file name,
 * capped reads where a missing entry is a miss, atomic writes, and the header of
 * checked entries. One copy of each, for the program cache, the tuning records and
 * the cost cache. */
#include "alloc.h"
#include "store.h"

#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "byte_order.h"
#include "file.h"
#include "internal.h"
#include "text.h"

#define ENTRY_MAGIC "HGRSTOR1"

hgr_status_t hgr__store_open(hgr_allocator_t allocator, const char* configured_directory, const char* what, const char* key_names,
                             hgr__store_t* out_store) {
  *out_store = (hgr__store_t){.allocator = allocator, .what = what, .key_names = key_names};
  const char* env = getenv("HGR_CACHE_DIR");
  const char* xdg = getenv("XDG_CACHE_HOME");
  const char* home = getenv("HOME");
  char* directory = NULL;
  if (configured_directory && *configured_directory) directory = hgr__format_in(allocator, "%s", configured_directory);
  else if (env && *env) directory = hgr__format_in(allocator, "%s", env);
  else if (xdg && *xdg) directory = hgr__format_in(allocator, "%s/hgr", xdg);
  else if (home && *home) directory = hgr__format_in(allocator, "%s/.cache/hgr", home);
  else return HGR_STATUS(HGR_STATUS_UNAVAILABLE, "no directory for the %s (set HGR_CACHE_DIR or HOME)", what);
  if (!directory)
    return HGR_STATUS(HGR_STATUS_RESOURCE_EXHAUSTED, "out of host memory naming the %s's directory", what);
  out_store->directory = directory;
  return HGR_OK;
}

void hgr__store_close(hgr__store_t* store) {
  if (!store) return;
  hgr__free(store->allocator, store->directory);
  store->directory = NULL;
}

void hgr__store_key_name(const char* prefix, const char* key, const char* suffix, char out_name[HGR__STORE_NAME_MAX]) {
  snprintf(out_name, HGR__STORE_NAME_MAX, "%s%016llx%s", prefix,
           (unsigned long long)hgr__fnv1a(key, strlen(key), HGR__FNV1A_START), suffix);
}

hgr_status_t hgr__store_path(const hgr__store_t* store, const char* name, char** out_path) {
  *out_path = NULL;
  if (!*name || !strcmp(name, ".") || !strcmp(name, "..") || strchr(name, '/'))
    return HGR_STATUS(HGR_STATUS_INVALID_ARGUMENT, "%s entry '%s': not a plain file name", store->what, name);
  if (!store->directory)
    return HGR_STATUS(HGR_STATUS_UNAVAILABLE, "%s entry '%s': the %s has no directory (set HGR_CACHE_DIR or HOME)",
                      store->what, name, store->what);
  *out_path = hgr__format_in(store->allocator, "%s/%s", store->directory, name);
  return *out_path ? HGR_OK : HGR_STATUS(HGR_STATUS_RESOURCE_EXHAUSTED, "out of host memory");
}

/* mkdir -p directory (what, when not NULL, names the store in messages). A part
 * that exists must be a directory: mkdir's EEXIST says only that something is
 * there. */
static hgr_status_t make_directories(hgr_allocator_t allocator, const char* directory, const char* what) {
  char* path = hgr__copy_text(allocator, directory);
  if (!path) return HGR_STATUS(HGR_STATUS_RESOURCE_EXHAUSTED, "out of host memory");
  hgr_status_t status = HGR_OK;
  for (char* at = path + 1;; ++at) {
    if (*at != '/' && *at) continue;
    char saved = *at;
    *at = 0;
    struct stat info;
    if (mkdir(path, 0777) != 0) {
      int error = errno;
      if (error == EEXIST && (stat(path, &info) != 0 || !S_ISDIR(info.st_mode))) error = ENOTDIR;
      if (error != EEXIST)
        status = HGR_STATUS(HGR_STATUS_UNAVAILABLE, "cannot create '%s'%s%s: %s", path, what ? " for the " : "",
                            what ? what : "", strerror(error));
    }
    *at = saved;
    if (status || !saved) break;
  }
  hgr__free(allocator, path);
  return status;
}

hgr_status_t hgr__store_make_directory(const hgr__store_t* store) {
  if (!store->directory)
    return HGR_STATUS(HGR_STATUS_UNAVAILABLE, "the %s has no directory (set HGR_CACHE_DIR or HOME)", store->what);
  return make_directories(store->allocator, store->directory, store->what);
}

hgr_status_t hgr__store_read_file(hgr_allocator_t allocator, const char* path, uint64_t max_bytes, void** out_data,
                                  size_t* out_length) {
  hgr_status_t status = hgr__file_read(allocator, path, max_bytes, out_data, out_length);
  if (status && hgr_status_code(status) == HGR_STATUS_NOT_FOUND) {
    hgr_status_free(status);
    return HGR_OK; /* a miss: *out_data stays NULL */
  }
  return status;
}

hgr_status_t hgr__store_write_file(hgr_allocator_t allocator, const char* path, const void* head, size_t head_length,
                                   const void* body, size_t body_length) {
  const char* slash = strrchr(path, '/');
  if (slash && slash != path) {
    char* directory = hgr__copy_text_n(allocator, path, (size_t)(slash - path));
    if (!directory) return HGR_STATUS(HGR_STATUS_RESOURCE_EXHAUSTED, "out of host memory");
    hgr_status_t status = make_directories(allocator, directory, NULL);
    hgr__free(allocator, directory);
    HGR_RETURN_IF_ERROR(status);
  }
  return hgr__file_write_atomic(allocator, path, head, head_length, body, body_length);
}

hgr_status_t hgr__store_read(const hgr__store_t* store, const char* name, uint64_t max_bytes, void** out_data,
                             size_t* out_length) {
  *out_data = NULL;
  *out_length = 0;
  char* path = NULL;
  HGR_RETURN_IF_ERROR(hgr__store_path(store, name, &path));
  hgr_status_t status = hgr__store_read_file(store->allocator, path, max_bytes, out_data, out_length);
  hgr__free(store->allocator, path);
  return status;
}

hgr_status_t hgr__store_write(const hgr__store_t* store, const char* name, const void* head, size_t head_length,
                              const void* body, size_t body_length) {
  char* path = NULL;
  hgr_status_t status = hgr__store_path(store, name, &path);
  if (!status) status = hgr__store_make_directory(store);
  if (!status) status = hgr__file_write_atomic(store->allocator, path, head, head_length, body, body_length);
  hgr__free(store->allocator, path);
  return status;
}

/* ---- checked entries ---------------------------------------------------------------- */

size_t hgr__store_entry_size(const char* key, size_t value_length) {
  size_t key_length = strlen(key), size = 0;
  if (key_length > UINT32_MAX || __builtin_add_overflow(HGR__STORE_ENTRY_HEADER + key_length, value_length, &size))
    return 0;
  return size;
}

void hgr__store_entry_seal(void* entry, const char* key, size_t value_length) {
  uint8_t* at = entry;
  size_t key_length = strlen(key);
  const uint8_t* value = at + HGR__STORE_ENTRY_HEADER + key_length;
  memcpy(at, ENTRY_MAGIC, 8);
  hgr__le_store(at + 8, key_length, 4);
  hgr__le_store(at + 12, 0, 4);
  hgr__le_store(at + 16, value_length, 8);
  hgr__le_store(at + 24, hgr__fnv1a(value, value_length, HGR__FNV1A_START), 8);
  memcpy(at + HGR__STORE_ENTRY_HEADER, key, key_length);
}

hgr_status_t hgr__store_entry_check(const hgr__store_t* store, const void* entry, size_t size, const char* key,
                                    const void** out_value, size_t* out_value_length) {
  *out_value = NULL;
  *out_value_length = 0;
  const uint8_t* at = entry;
  if (size < HGR__STORE_ENTRY_HEADER || memcmp(at, ENTRY_MAGIC, 8) || hgr__le_load(at + 12, 4) != 0)
    return HGR_STATUS(HGR_STATUS_DATA_LOSS, "not a %s entry (bad magic or too short)", store->what);
  uint64_t key_length = hgr__le_load(at + 8, 4), value_length = hgr__le_load(at + 16, 8);
  uint64_t checksum = hgr__le_load(at + 24, 8), expected = 0;
  /* The sizes must add up to the entry's before anything past the header is read;
   * a length near 2^64 must not wrap around to a small sum. */
  if (!hgr__add_u64(HGR__STORE_ENTRY_HEADER + key_length, value_length, &expected) || expected != (uint64_t)size)
    return HGR_STATUS(HGR_STATUS_DATA_LOSS, "truncated or padded (its sizes do not add up)");
  if (key_length != strlen(key) || memcmp(at + HGR__STORE_ENTRY_HEADER, key, (size_t)key_length))
    return HGR_STATUS(HGR_STATUS_FAILED_PRECONDITION, "written for another %s (its key differs)",
                      store->key_names ? store->key_names : "key");
  const uint8_t* value = at + HGR__STORE_ENTRY_HEADER + key_length;
  if (hgr__fnv1a(value, (size_t)value_length, HGR__FNV1A_START) != checksum)
    return HGR_STATUS(HGR_STATUS_DATA_LOSS, "corrupt (checksum mismatch)");
  *out_value = value;
  *out_value_length = (size_t)value_length;
  return HGR_OK;
}
