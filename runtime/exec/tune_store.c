/* The tuning file (tune_store.h): parsing, every check a file from the disk needs,
 * and writing. Pure but for load and save, which go through the on-disk store
 * (base/store.h), so fuzz/fuzz_tune.c runs the parser without a driver. */
#include "alloc.h"
#include "tune_store.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "file.h"
#include "store.h"

void hgr__tune_table_free(hgr_allocator_t allocator, hgr__tune_table_t* table) {
  for (size_t i = 0; i < table->count; ++i) {
    hgr__free(allocator, table->records[i].device);
    hgr__free(allocator, table->records[i].key);
    hgr__free(allocator, table->records[i].tile);
  }
  hgr__free(allocator, table->records);
  memset(table, 0, sizeof(*table));
}

/* Why a field cannot be stored, or NULL. */
static const char* field_problem(const char* field, size_t length) {
  if (length == 0) return "is empty";
  if (length > HGR__TUNE_FIELD_MAX) return "is longer than 511 bytes";
  for (size_t i = 0; i < length; ++i)
    if ((unsigned char)field[i] < 0x20 || (unsigned char)field[i] > 0x7e) return "has a byte that is not printable ASCII";
  return NULL;
}

static char* copy_text(hgr_allocator_t allocator, const char* text, size_t length) {
  char* copy = hgr__alloc(allocator, length + 1);
  if (copy) {
    memcpy(copy, text, length);
    copy[length] = 0;
  }
  return copy;
}

static hgr__tune_record_t* find(hgr__tune_table_t* table, const char* device, const char* key) {
  for (size_t i = 0; i < table->count; ++i)
    if (!strcmp(table->records[i].device, device) && !strcmp(table->records[i].key, key)) return &table->records[i];
  return NULL;
}

/* Appends a record of owned strings (freed on failure). */
static hgr_status_t append(hgr_allocator_t allocator, hgr__tune_table_t* table, char* device, char* key, char* tile,
                           double time_us) {
  if (!device || !key || !tile) goto exhausted;
  if (table->count == table->capacity) {
    size_t capacity = table->capacity ? table->capacity * 2 : 16;
    hgr__tune_record_t* records = hgr__realloc(allocator, table->records, capacity * sizeof(*records));
    if (!records) goto exhausted;
    table->records = records;
    table->capacity = capacity;
  }
  table->records[table->count++] = (hgr__tune_record_t){device, key, tile, time_us};
  return HGR_OK;
exhausted:
  hgr__free(allocator, device);
  hgr__free(allocator, key);
  hgr__free(allocator, tile);
  return HGR_STATUS(HGR_STATUS_RESOURCE_EXHAUSTED, "out of host memory");
}

hgr_status_t hgr__tune_table_put(hgr_allocator_t allocator, hgr__tune_table_t* table, const char* device,
                                 const char* key, const char* tile, double time_us) {
  const char* names[3] = {"device", "key", "tile"};
  const char* fields[3] = {device, key, tile};
  for (int f = 0; f < 3; ++f) {
    const char* problem = fields[f] ? field_problem(fields[f], strlen(fields[f])) : "is missing";
    if (problem) return HGR_STATUS(HGR_STATUS_INVALID_ARGUMENT, "tuning record: the %s %s", names[f], problem);
    if (strchr(fields[f], '\t'))
      return HGR_STATUS(HGR_STATUS_INVALID_ARGUMENT, "tuning record: the %s has a tab", names[f]);
  }
  if (!(time_us >= 0 && time_us <= HGR__TUNE_MAX_TIME_US))
    return HGR_STATUS(HGR_STATUS_INVALID_ARGUMENT, "tuning record: the time %g is not a number from 0 to 1e12", time_us);
  hgr__tune_record_t* record = find(table, device, key);
  if (record) {
    char* copy = hgr__copy_text(allocator, tile);
    if (!copy) return HGR_STATUS(HGR_STATUS_RESOURCE_EXHAUSTED, "out of host memory");
    hgr__free(allocator, record->tile);
    record->tile = copy;
    record->time_us = time_us;
    return HGR_OK;
  }
  if (table->count >= HGR__TUNE_MAX_RECORDS)
    return HGR_STATUS(HGR_STATUS_RESOURCE_EXHAUSTED, "tuning records: more than %d", HGR__TUNE_MAX_RECORDS);
  return append(allocator, table, hgr__copy_text(allocator, device), hgr__copy_text(allocator, key),
                hgr__copy_text(allocator, tile), time_us);
}

/* One record line (without its LF), line number `line_number`. */
static hgr_status_t parse_record(hgr_allocator_t allocator, hgr__tune_table_t* table, const char* line, size_t length,
                                 const char* origin, size_t line_number) {
  static const char* names[4] = {"device", "key", "tile", "time"};
  const char* field[4];
  size_t field_length[4];
  size_t count = 0, start = 0;
  for (size_t i = 0; i <= length; ++i)
    if (i == length || line[i] == '\t') {
      if (count == 4)
        return HGR_STATUS(HGR_STATUS_INVALID_ARGUMENT, "%s line %zu: more than 4 tab-separated fields", origin,
                          line_number);
      field[count] = line + start;
      field_length[count++] = i - start;
      start = i + 1;
    }
  if (count != 4)
    return HGR_STATUS(HGR_STATUS_INVALID_ARGUMENT,
                      "%s line %zu: %zu tab-separated field%s; a record is device, key, tile and time", origin,
                      line_number, count, count == 1 ? "" : "s");
  for (int f = 0; f < 4; ++f) {
    const char* problem = field_problem(field[f], field_length[f]);
    if (f == 3 && !problem && field_length[f] > 32) problem = "is longer than 32 bytes";
    if (problem) return HGR_STATUS(HGR_STATUS_INVALID_ARGUMENT, "%s line %zu: the %s %s", origin, line_number, names[f], problem);
  }
  char number[40];
  memcpy(number, field[3], field_length[3]);
  number[field_length[3]] = 0;
  char* end = NULL;
  errno = 0;
  double time_us = strtod(number, &end);
  if (end == number || *end || errno == ERANGE || !(time_us >= 0 && time_us <= HGR__TUNE_MAX_TIME_US))
    return HGR_STATUS(HGR_STATUS_INVALID_ARGUMENT, "%s line %zu: the time \"%s\" is not a number from 0 to 1e12",
                      origin, line_number, number);
  char* device = copy_text(allocator, field[0], field_length[0]);
  char* key = copy_text(allocator, field[1], field_length[1]);
  if (device && key && find(table, device, key)) {
    hgr_status_t status = HGR_STATUS(HGR_STATUS_INVALID_ARGUMENT,
                                     "%s line %zu: a second record for key '%s' on device '%s'", origin, line_number,
                                     key, device);
    hgr__free(allocator, device);
    hgr__free(allocator, key);
    return status;
  }
  if (table->count >= HGR__TUNE_MAX_RECORDS) {
    hgr__free(allocator, device);
    hgr__free(allocator, key);
    return HGR_STATUS(HGR_STATUS_INVALID_ARGUMENT, "%s line %zu: more than %d records", origin, line_number,
                      HGR__TUNE_MAX_RECORDS);
  }
  return append(allocator, table, device, key, copy_text(allocator, field[2], field_length[2]), time_us);
}

hgr_status_t hgr__tune_table_parse(hgr_allocator_t allocator, const char* text, size_t length, const char* origin,
                                   hgr__tune_table_t* out_table) {
  memset(out_table, 0, sizeof(*out_table));
  size_t header_length = strlen(HGR__TUNE_HEADER);
  size_t first_end = 0;
  while (first_end < length && text[first_end] != '\n') ++first_end;
  if (first_end != header_length || memcmp(text, HGR__TUNE_HEADER, header_length))
    return HGR_STATUS(HGR_STATUS_INVALID_ARGUMENT,
                      "%s line 1: not a tuning file of this version (the first line must be \"" HGR__TUNE_HEADER "\")",
                      origin);
  size_t line_number = 1;
  for (size_t start = first_end + 1; start < length;) {
    size_t end = start;
    while (end < length && text[end] != '\n') ++end;
    ++line_number;
    if (end > start && text[start] != '#')
      HGR_RETURN_IF_ERROR(parse_record(allocator, out_table, text + start, end - start, origin, line_number));
    start = end + 1;
  }
  return HGR_OK;
}

hgr_status_t hgr__tune_table_format(hgr_allocator_t allocator, const hgr__tune_table_t* table, char** out_text,
                                    size_t* out_length) {
  *out_text = NULL;
  *out_length = 0;
  size_t capacity = strlen(HGR__TUNE_HEADER) + 2;
  for (size_t i = 0; i < table->count; ++i)
    capacity += strlen(table->records[i].device) + strlen(table->records[i].key) + strlen(table->records[i].tile) + 40;
  char* text = hgr__alloc(allocator, capacity);
  if (!text) return HGR_STATUS(HGR_STATUS_RESOURCE_EXHAUSTED, "out of host memory");
  size_t used = (size_t)snprintf(text, capacity, "%s\n", HGR__TUNE_HEADER);
  for (size_t i = 0; i < table->count; ++i) {
    const hgr__tune_record_t* r = &table->records[i];
    used += (size_t)snprintf(text + used, capacity - used, "%s\t%s\t%s\t%.3f\n", r->device, r->key, r->tile,
                             r->time_us);
  }
  *out_text = text;
  *out_length = used;
  return HGR_OK;
}

hgr_status_t hgr__tune_table_load(hgr_allocator_t allocator, const char* path, hgr__tune_table_t* out_table) {
  memset(out_table, 0, sizeof(*out_table));
  void* data = NULL;
  size_t length = 0;
  hgr_status_t status = hgr__store_read_file(allocator, path, HGR__FILE_MAX_TUNE_RECORDS_BYTES, &data, &length);
  if (!status && data) status = hgr__tune_table_parse(allocator, data, length, path, out_table);
  hgr__free(allocator, data);
  return status;
}

hgr_status_t hgr__tune_table_save(hgr_allocator_t allocator, const char* path, const hgr__tune_table_t* table) {
  char* text = NULL;
  size_t length = 0;
  hgr_status_t status = hgr__tune_table_format(allocator, table, &text, &length);
  if (!status) status = hgr__store_write_file(allocator, path, text, length, NULL, 0);
  hgr__free(allocator, text);
  return status;
}

char* hgr__tune_path(hgr_allocator_t allocator, const char* configured_directory) {
  hgr__store_t store;
  char* path = NULL;
  hgr_status_t status = hgr__store_open(allocator, configured_directory, "tuning records", NULL, &store);
  if (!status) status = hgr__store_path(&store, HGR__TUNE_FILE_NAME, &path);
  hgr_status_free(status);
  hgr__store_close(&store);
  return path;
}
