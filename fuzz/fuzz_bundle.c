/* libFuzzer target: bundle manifests (runtime/model/bundle.h), read as
 * hgr_model_create_bundle reads them before it touches a device, and a program entry
 * checked against a program's key as loading checks it (base/store.h).
 *
 * The input: 2 bytes (little-endian) of manifest length L, L bytes of manifest.json
 * (fewer when the input ends; "@KERNELS@" in it becomes this build's kernel library
 * hash, so inputs get past the version check), the rest a program cache entry. A
 * manifest that parses must give every program a device match or a
 * FAILED_PRECONDITION naming it among two made-up devices, of which the first is
 * the seeds' PoCL. Findings beyond the sanitizers and leaks: a status outside
 * INVALID_ARGUMENT, FAILED_PRECONDITION, DATA_LOSS and RESOURCE_EXHAUSTED; a
 * manifest that parses with a file name holding '/'. */
#include "bundle.h"
#include "executor_internal.h"
#include "fuzz.h"
#include "store.h"

static const hgr_device_info_t devices[2] = {
    {.spec = "pocl:0", .platform_name = "Portable Computing Language", .name = "pthread-cpu",
     .version = "OpenCL 3.0 PoCL", .driver_version = "3.1+debian"},
    {.spec = "rusticl:0", .platform_name = "rusticl", .name = "llvmpipe", .version = "OpenCL 3.0",
     .driver_version = "22.3.6"},
};

static void expect_known(hgr_status_t status) {
  if (!status) return;
  hgr_status_code_t code = hgr_status_code(status);
  FUZZ_CHECK(code == HGR_STATUS_INVALID_ARGUMENT || code == HGR_STATUS_FAILED_PRECONDITION ||
             code == HGR_STATUS_DATA_LOSS || code == HGR_STATUS_RESOURCE_EXHAUSTED);
  fuzz_consume_status(status);
}

int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size < 2) return 0;
  size_t length = (size_t)data[0] | (size_t)data[1] << 8;
  if (length > size - 2) length = size - 2;
  const uint8_t* entry = data + 2 + length;
  size_t entry_size = size - 2 - length;
  /* the manifest, with @KERNELS@ replaced (as text: cJSON reads up to length) */
  static char hash[17];
  if (!hash[0]) snprintf(hash, sizeof(hash), "%016llx", (unsigned long long)hgr__kernel_library_hash());
  char* text = malloc(length * 2 + 17);
  FUZZ_CHECK(text);
  size_t n = 0;
  for (size_t i = 0; i < length;) {
    if (length - i >= 9 && !memcmp(data + 2 + i, "@KERNELS@", 9)) {
      memcpy(text + n, hash, 16);
      n += 16;
      i += 9;
    } else {
      text[n++] = (char)data[2 + i++];
    }
  }
  hgr__bundle_manifest_t manifest;
  hgr_status_t status = hgr__bundle_manifest_parse(hgr_allocator_system(), text, n, &manifest);
  if (status) {
    FUZZ_CHECK(!manifest.json && !manifest.programs && !manifest.count);
    expect_known(status);
    free(text);
    return 0;
  }
  const hgr_device_info_t* list[2] = {&devices[0], &devices[1]};
  FUZZ_CHECK(manifest.model && !strchr(manifest.model, '/'));
  for (size_t p = 0; p < manifest.count; ++p) {
    const hgr__bundle_program_t* program = &manifest.programs[p];
    FUZZ_CHECK(program->file && !strchr(program->file, '/') && program->key && program->kernels && program->options);
    size_t index = 99;
    status = hgr__bundle_find_device(program, list, 2, &index);
    if (!status) FUZZ_CHECK(index < 2);
    else FUZZ_CHECK(hgr_status_code(status) == HGR_STATUS_FAILED_PRECONDITION);
    expect_known(status);
    const hgr__store_t checker = {.what = "bundle", .key_names = "platform, device, driver, options or source"};
    const void* value = NULL;
    size_t value_length = 0;
    status = hgr__store_entry_check(&checker, entry, entry_size, program->key, &value, &value_length);
    if (!status) FUZZ_CHECK(value && (const uint8_t*)value + value_length <= entry + entry_size);
    expect_known(status);
  }
  hgr__bundle_manifest_free(&manifest);
  free(text);
  return 0;
}
