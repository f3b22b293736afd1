/* libFuzzer target: the tuning file (runtime/exec/tune_store.h), which every
 * executor reads from the cache directory. A file either parses into records whose
 * fields the format can hold, or fails with INVALID_ARGUMENT or RESOURCE_EXHAUSTED
 * and a message naming the file; what parses is formatted and parsed back to the
 * same records, and every record is found by its device and key. */
#include "fuzz.h"
#include "tune_store.h"

#include <math.h>

static void check_record(const hgr__tune_record_t* record) {
  const char* fields[3] = {record->device, record->key, record->tile};
  for (int f = 0; f < 3; ++f) {
    size_t length = strlen(fields[f]);
    FUZZ_CHECK(length >= 1 && length <= HGR__TUNE_FIELD_MAX);
    for (size_t i = 0; i < length; ++i) FUZZ_CHECK(fields[f][i] >= 0x20 && fields[f][i] <= 0x7e && fields[f][i] != '\t');
  }
  FUZZ_CHECK(record->time_us >= 0 && isfinite(record->time_us));
}

int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  hgr__tune_table_t table;
  memset(&table, 0xA5, sizeof(table)); /* must be emptied by the call */
  hgr_status_t status = hgr__tune_table_parse(hgr_allocator_system(), (const char*)data, size, "fuzz.tsv", &table);
  if (status) {
    hgr_status_code_t code = hgr_status_code(status);
    FUZZ_CHECK(code == HGR_STATUS_INVALID_ARGUMENT || code == HGR_STATUS_RESOURCE_EXHAUSTED);
    FUZZ_CHECK(strstr(hgr_status_message(status), "fuzz.tsv") || code == HGR_STATUS_RESOURCE_EXHAUSTED);
    fuzz_consume_status(status);
    hgr__tune_table_free(hgr_allocator_system(), &table);
    return 0;
  }
  for (size_t r = 0; r < table.count; ++r) {
    check_record(&table.records[r]);
    FUZZ_CHECK(hgr__tune_lookup(&table, table.records[r].device, table.records[r].key) == table.records[r].tile);
  }
  /* What hgr writes, it reads back as the same records (times to the format's
   * three decimals). */
  char* text = NULL;
  size_t length = 0;
  FUZZ_CHECK(hgr__tune_table_format(hgr_allocator_system(), &table, &text, &length) == HGR_OK);
  hgr__tune_table_t again;
  FUZZ_CHECK(hgr__tune_table_parse(hgr_allocator_system(), text, length, "again.tsv", &again) == HGR_OK);
  FUZZ_CHECK(again.count == table.count);
  for (size_t r = 0; r < table.count; ++r) {
    FUZZ_CHECK(!strcmp(again.records[r].device, table.records[r].device));
    FUZZ_CHECK(!strcmp(again.records[r].key, table.records[r].key));
    FUZZ_CHECK(!strcmp(again.records[r].tile, table.records[r].tile));
    double difference = again.records[r].time_us - table.records[r].time_us;
    FUZZ_CHECK(difference <= 5e-4 * (1 + table.records[r].time_us) && -difference <= 5e-4 * (1 + table.records[r].time_us));
  }
  free(text);
  hgr__tune_table_free(hgr_allocator_system(), &again);
  hgr__tune_table_free(hgr_allocator_system(), &table);
  FUZZ_CHECK(table.records == NULL && table.count == 0);
  return 0;
}
