/* libFuzzer target: device spec strings (hgr__device_spec_match) over a fake device
 * list, as tests/test_device_spec.c builds one, plus platform short names and
 * canonical spec assignment (hgr__device_assign_specs).
 *
 * Input: lines. The first is the spec to match. Each further line (at most 16) is
 * a device: its first byte picks the type, its second the platform index (modulo
 * 8), the rest is the platform name. Every assigned spec must match its own
 * device. */
#include <ctype.h>

#include "fuzz.h"
#include "device_internal.h"

#define MAX_DEVICES 16

static const hgr_device_type_t types[] = {HGR_DEVICE_TYPE_CPU, HGR_DEVICE_TYPE_GPU,
                                          HGR_DEVICE_TYPE_ACCELERATOR, HGR_DEVICE_TYPE_CUSTOM,
                                          HGR_DEVICE_TYPE_DEFAULT};

int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  char* text = fuzz_string(data, size);
  hgr_device_info_t devices[MAX_DEVICES];
  hgr_device_info_t* list[MAX_DEVICES];
  size_t count = 0, per_platform[8] = {0};
  char* spec = text;
  char* line = strchr(text, '\n');
  if (line) *line++ = 0;
  while (line && count < MAX_DEVICES) {
    char* next = strchr(line, '\n');
    if (next) *next++ = 0;
    hgr_device_info_t* device = &devices[count];
    memset(device, 0, sizeof(*device));
    size_t length = strlen(line);
    device->index = count;
    device->type = types[(length > 0 ? (unsigned char)line[0] : 0) % 5];
    device->platform_index = (length > 1 ? (unsigned char)line[1] : 0) % 8;
    device->index_in_platform = per_platform[device->platform_index]++;
    device->platform_name = length > 2 ? line + 2 : "";
    device->name = "fuzz device";
    char* short_name = NULL;
    FUZZ_CHECK(hgr__platform_short_name(hgr_allocator_system(), device->platform_name, &short_name) == HGR_OK);
    FUZZ_CHECK(short_name[0] && strlen(short_name) < 64);
    for (const char* p = short_name; *p; ++p)
      FUZZ_CHECK(isdigit((unsigned char)*p) || islower((unsigned char)*p));
    device->platform_short = short_name;
    list[count++] = device;
    line = next;
  }
  FUZZ_CHECK(hgr__device_assign_specs(hgr_allocator_system(), list, count) == HGR_OK);
  const hgr_device_info_t* const* view = (const hgr_device_info_t* const*)list;
  for (size_t i = 0; i < count; ++i) {
    size_t found = SIZE_MAX;
    hgr_status_t status = hgr__device_spec_match(view, count, list[i]->spec, &found);
    if (status) {
      char* message = hgr_status_to_string(status);
      fprintf(stderr, "device %zu's own spec '%s' does not match: %s\n", i, list[i]->spec, message);
      abort();
    }
    FUZZ_CHECK(found == i);
  }
  /* "TYPE:K" is the K-th device of that type; "P.D" names platform and device. */
  static const char* const type_words[] = {"cpu", "gpu", "accelerator", "custom"};
  for (size_t i = 0; i < count; ++i) {
    char name[64];
    size_t found = SIZE_MAX, position = 0;
    for (size_t j = 0; j < i; ++j) position += list[j]->type == list[i]->type;
    if (list[i]->type != HGR_DEVICE_TYPE_DEFAULT) {
      snprintf(name, sizeof(name), "%s:%zu", type_words[list[i]->type == HGR_DEVICE_TYPE_CPU ? 0
                                                        : list[i]->type == HGR_DEVICE_TYPE_GPU ? 1
                                                        : list[i]->type == HGR_DEVICE_TYPE_ACCELERATOR ? 2
                                                                                                      : 3],
               position);
      FUZZ_CHECK(hgr__device_spec_match(view, count, name, &found) == HGR_OK && found == i);
    }
    snprintf(name, sizeof(name), "%zu.%zu", list[i]->platform_index, list[i]->index_in_platform);
    FUZZ_CHECK(hgr__device_spec_match(view, count, name, &found) == HGR_OK && found == i);
  }
  size_t found = 0;
  hgr_status_t status = hgr__device_spec_match(view, count, spec, &found);
  if (status) {
    hgr_status_code_t code = hgr_status_code(status);
    FUZZ_CHECK(code == HGR_STATUS_INVALID_ARGUMENT || code == HGR_STATUS_NOT_FOUND);
    FUZZ_CHECK(found == SIZE_MAX);
    fuzz_consume_status(status);
  } else {
    FUZZ_CHECK(found < count);
  }
  for (size_t i = 0; i < count; ++i) {
    free((char*)devices[i].spec);
    free((char*)devices[i].platform_short);
  }
  free(text);
  return 0;
}
