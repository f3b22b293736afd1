/* The tuning file: the winners of `hgr tune` (hgr/tune.h), read by every executor
 * that takes its tiles from it and rewritten by a tuning pass. A file on disk, so
 * everything in it is checked: a file that does not parse is an error naming the
 * file and the line, never a crash, and the executor then ignores it.
 *
 * Format: text, one record per line, after the header line "hgr-tune 1":
 *
 *   <device> TAB <key> TAB <tile> TAB <time in microseconds> LF
 *
 * device (hgr__tune_device_id), key (the op's layer key) and tile are 1 to
 * HGR__TUNE_FIELD_MAX bytes of printable ASCII without tabs; the time is a decimal
 * number from 0 to HGR__TUNE_MAX_TIME_US. Empty lines and lines starting with '#' are skipped; at
 * most one record per device and key (a second is an error); at most
 * HGR__TUNE_MAX_RECORDS records. */
#ifndef HGR_TUNE_STORE_H_
#define HGR_TUNE_STORE_H_

#include "alloc.h"
#include "ops.h"

#define HGR__TUNE_HEADER "hgr-tune 1"
#define HGR__TUNE_FIELD_MAX 511
#define HGR__TUNE_MAX_RECORDS 100000
#define HGR__TUNE_MAX_TIME_US 1e12 /* 11.6 days: larger is no measurement */
#define HGR__TUNE_FILE_NAME "tuning.tsv"

/* A table's records and their strings come from the allocator given to every call
 * that fills, grows or frees it (the same one throughout; an executor's own: its
 * allocator). */

/* Parses text (length bytes, no terminator needed) into *out_table (emptied first;
 * free with hgr__tune_table_free, also after a failure). INVALID_ARGUMENT naming
 * origin (the file, for messages) and the line: a missing or other header, a line
 * without four fields, an empty, overlong or unprintable field, a time that is not
 * a number from 0 to 1e12, a repeated device and key, too many records.
 * RESOURCE_EXHAUSTED when out of memory. */
hgr_status_t hgr__tune_table_parse(hgr_allocator_t allocator, const char* text, size_t length, const char* origin,
                                   hgr__tune_table_t* out_table);

/* Adds a record, or replaces the tile and time of the one with the same device and
 * key. INVALID_ARGUMENT for a field the format cannot hold; RESOURCE_EXHAUSTED. */
hgr_status_t hgr__tune_table_put(hgr_allocator_t allocator, hgr__tune_table_t* table, const char* device,
                                 const char* key, const char* tile, double time_us);

/* The table in the file format (from allocator, NUL-terminated; *out_length without the
 * NUL). RESOURCE_EXHAUSTED. */
hgr_status_t hgr__tune_table_format(hgr_allocator_t allocator, const hgr__tune_table_t* table, char** out_text,
                                    size_t* out_length);

/* Reads and parses path; a missing file is an empty table (OK). Errors as
 * hgr__tune_table_parse's, UNAVAILABLE when it cannot be read. */
hgr_status_t hgr__tune_table_load(hgr_allocator_t allocator, const char* path, hgr__tune_table_t* out_table);

/* Writes the table to path atomically, creating its directory (hgr__store_write_file).
 * UNAVAILABLE. */
hgr_status_t hgr__tune_table_save(hgr_allocator_t allocator, const char* path, const hgr__tune_table_t* table);

void hgr__tune_table_free(hgr_allocator_t allocator, hgr__tune_table_t* table);

/* <the store's directory (hgr__store_open(allocator, configured))>/tuning.tsv, from
 * allocator;
 * NULL when no directory can be named or out of memory. */
char* hgr__tune_path(hgr_allocator_t allocator, const char* configured_directory);

#endif /* HGR_TUNE_STORE_H_ */
