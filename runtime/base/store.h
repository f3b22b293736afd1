/* The on-disk store: one directory of keyed entries, shared by the program cache
 * (exec/program_cache.c: compiled programs), the tuning records (exec/tune_store.c:
 * tuning.tsv) and the cost cache (place/cost_model.c: cost-*.tsv). It owns what they
 * have in common: which directory (configured, else $HGR_CACHE_DIR, else
 * $XDG_CACHE_HOME/hgr, else ~/.cache/hgr), creating it, the file name of a key,
 * reading an entry under a cap (a missing entry is a miss, not an error) and
 * replacing one atomically (a reader sees the old file or the whole new one).
 *
 * Files in the directory come from strangers: another version of hgr, another
 * process that died half-way, a full disk, an editor. Nothing read is trusted.
 * Entries are of two kinds:
 * - text entries (tuning.tsv, cost-*.tsv), which people read and edit: their owner
 *   parses them and checks every line;
 * - checked entries (compiled programs, whose bytes mean nothing to a person): the
 *   value behind a header that this file writes and checks,
 *     "HGRSTOR1"  magic
 *     u32 key length, u32 0, u64 value length, u64 FNV-1a of the value
 *     key bytes, value bytes                              (integers little-endian)
 *   so that an entry written for another key (two keys whose names collide, or a
 *   file copied from another machine), a truncated, padded or corrupt one, and a
 *   file of another format are each refused with the reason, never taken.
 *
 * Nothing here keeps state: every function is thread-safe, and concurrent writers
 * of one entry leave one of their complete files. */
#ifndef HGR_STORE_H_
#define HGR_STORE_H_

#include <stddef.h>
#include <stdint.h>

#include "hgr/allocator.h"
#include "hgr/status.h"

/* A store: its directory and how messages name it. */
typedef struct hgr__store_t {
  hgr_allocator_t allocator; /* for the directory's name, paths and entries read */
  char* directory;       /* owned; NULL when none could be named */
  const char* what;      /* in messages: "program cache" (borrowed, static) */
  const char* key_names; /* what its keys tell apart, in the message about an entry
                            of another key: "platform, device, driver, options or
                            source" (borrowed, static) */
} hgr__store_t;

/* Bytes of a checked entry's header (before the key). */
#define HGR__STORE_ENTRY_HEADER 32
/* The most bytes hgr__store_key_name writes, with the NUL. */
#define HGR__STORE_NAME_MAX 64

/* Names the store's directory: configured_directory when it is set and not empty,
 * else $HGR_CACHE_DIR, else $XDG_CACHE_HOME/hgr, else $HOME/.cache/hgr. Creates
 * nothing (hgr__store_write does). what and key_names are kept, not copied.
 * Errors: UNAVAILABLE "no directory for the <what> (set HGR_CACHE_DIR or HOME)"
 * when none of them is set, RESOURCE_EXHAUSTED; *out_store then has no directory
 * and hgr__store_close is still safe. */
hgr_status_t hgr__store_open(hgr_allocator_t allocator, const char* configured_directory, const char* what, const char* key_names,
                             hgr__store_t* out_store);

/* Frees the directory's name; the store is then empty. NULL is a no-op. */
void hgr__store_close(hgr__store_t* store);

/* The file name of key: "<prefix><16 hex digits of FNV-1a(key)><suffix>" in out_name
 * (HGR__STORE_NAME_MAX bytes). Keys of any bytes and length map to names safe in
 * any directory; two keys may share a name, which is why a checked entry carries
 * its key. prefix and suffix are ours (no '/'), together at most 40 bytes. */
void hgr__store_key_name(const char* prefix, const char* key, const char* suffix, char out_name[HGR__STORE_NAME_MAX]);

/* "<directory>/<name>", malloc'd. name is one plain file name. Errors:
 * INVALID_ARGUMENT for an empty name, ".", "..", or one with a '/';
 * UNAVAILABLE when the store has no directory; RESOURCE_EXHAUSTED. */
hgr_status_t hgr__store_path(const hgr__store_t* store, const char* name, char** out_path);

/* Creates the store's directory and its parents (mkdir -p). UNAVAILABLE naming the
 * store and the part that could not be made, or that exists and is not a
 * directory, with the errno text; UNAVAILABLE when the store has no directory. */
hgr_status_t hgr__store_make_directory(const hgr__store_t* store);

/* Reads entry name whole (hgr__file_read) under max_bytes (a HGR__FILE_MAX_* cap).
 * A missing entry is a miss: OK with *out_data NULL and *out_length 0; otherwise
 * *out_data is malloc'd (non-NULL even when empty). Errors as hgr__file_read's (a
 * directory in its place, more than max_bytes, unreadable), naming the path, and
 * as hgr__store_path's. */
hgr_status_t hgr__store_read(const hgr__store_t* store, const char* name, uint64_t max_bytes, void** out_data,
                             size_t* out_length);

/* Replaces entry name with head then body (head never NULL, "" for none; body may be
 * NULL when body_length is 0), atomically, creating the directory first. Errors: UNAVAILABLE naming the path
 * or the directory, as hgr__store_path's. */
hgr_status_t hgr__store_write(const hgr__store_t* store, const char* name, const void* head, size_t head_length,
                              const void* body, size_t body_length);

/* hgr__store_read and hgr__store_write for an entry named by its whole path (the
 * tuning file, which its callers name): the directory is the path's. */
hgr_status_t hgr__store_read_file(hgr_allocator_t allocator, const char* path, uint64_t max_bytes, void** out_data, size_t* out_length);
hgr_status_t hgr__store_write_file(hgr_allocator_t allocator, const char* path, const void* head, size_t head_length, const void* body,
                                   size_t body_length);

/* ---- checked entries ---------------------------------------------------------------- */

/* The bytes of a checked entry of key and a value of value_length bytes, or 0 when
 * that overflows size_t (or the key is longer than UINT32_MAX). The value goes at
 * offset HGR__STORE_ENTRY_HEADER + strlen(key). */
size_t hgr__store_entry_size(const char* key, size_t value_length);

/* Writes the header and the key of a checked entry in front of its value, which the
 * caller has put at entry + HGR__STORE_ENTRY_HEADER + strlen(key) (so a large value,
 * a driver's binary, is written once, in place). entry holds
 * hgr__store_entry_size(key, value_length) bytes. */
void hgr__store_entry_seal(void* entry, const char* key, size_t value_length);

/* Checks a checked entry of size bytes (from a file or an embedder) against key; OK
 * with *out_value pointing into entry and its length. Errors, the message the
 * reason alone (its owner says which entry): DATA_LOSS "not a <what> entry (bad
 * magic or too short)", "truncated or padded (its sizes do not add up)", "corrupt
 * (checksum mismatch)"; FAILED_PRECONDITION "written for another <key_names> (its
 * key differs)". Every one is a miss to the owner, never a crash: the sizes are
 * checked before anything is read. */
hgr_status_t hgr__store_entry_check(const hgr__store_t* store, const void* entry, size_t size, const char* key,
                                    const void** out_value, size_t* out_value_length);

#endif /* HGR_STORE_H_ */
