/* libFuzzer target: user kernel manifests (hgr_kernel_library_load_file). The
 * input is written to manifest.json in a temporary directory that also holds a
 * source (k.cl) and a binary (k.bin) a manifest may name; the library that loads is
 * then queried as the executor does (op lookup, the program for a device). */
#include <unistd.h>

#include "fuzz.h"
#include "ops.h"

static char dir[512];
static char manifest_path[sizeof(dir) + 32];

static void write_file(const char* path, const void* bytes, size_t length) {
  FILE* file = fopen(path, "wb");
  FUZZ_CHECK(file);
  FUZZ_CHECK(fwrite(bytes, 1, length, file) == length);
  FUZZ_CHECK(fclose(file) == 0);
}

static void remove_files(void) {
  static const char* const names[] = {"manifest.json", "k.cl", "k.bin"};
  char path[sizeof(dir) + 32];
  for (size_t i = 0; i < 3; ++i) {
    snprintf(path, sizeof(path), "%s/%s", dir, names[i]);
    remove(path);
  }
  rmdir(dir);
}

int LLVMFuzzerInitialize(int* argc, char*** argv);
int LLVMFuzzerInitialize(int* argc, char*** argv) {
  (void)argc;
  (void)argv;
  fuzz_make_dir("manifest", dir, sizeof(dir));
  atexit(remove_files);
  char path[sizeof(dir) + 32];
  snprintf(path, sizeof(path), "%s/k.cl", dir);
  static const char source[] = "__kernel void k(__global float* x) { x[get_global_id(0)] = 0; }\n";
  write_file(path, source, sizeof(source) - 1);
  snprintf(path, sizeof(path), "%s/k.bin", dir);
  static const unsigned char binary[] = {0x7f, 'E', 'L', 'F', 0, 1, 2, 3};
  write_file(path, binary, sizeof(binary));
  snprintf(manifest_path, sizeof(manifest_path), "%s/manifest.json", dir);
  return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  write_file(manifest_path, data, size);
  hgr_kernel_library_t* library = (hgr_kernel_library_t*)&library; /* must become NULL */
  hgr_status_t status = hgr_kernel_library_load_file(manifest_path, &library);
  if (status) {
    hgr_status_code_t code = hgr_status_code(status);
    FUZZ_CHECK(code == HGR_STATUS_INVALID_ARGUMENT || code == HGR_STATUS_NOT_FOUND ||
               code == HGR_STATUS_UNAVAILABLE || code == HGR_STATUS_RESOURCE_EXHAUSTED);
    FUZZ_CHECK(library == NULL);
    fuzz_consume_status(status);
    return 0;
  }
  FUZZ_CHECK(library);
  hgr_device_info_t device;
  memset(&device, 0, sizeof(device));
  device.spec = "pocl:0";
  device.platform_short = "pocl";
  for (size_t i = 0; i < hgr_kernel_library_op_count(library); ++i) {
    const char* name = hgr_kernel_library_op_name(library, i);
    FUZZ_CHECK(name && name[0]);
    FUZZ_CHECK(hgr__op_find(name) == NULL);
    const hgr__op_t* op = hgr__library_op(library, name);
    FUZZ_CHECK(op && !strcmp(op->name, name) && op->plan && op->source && op->attrs);
    FUZZ_CHECK(op->min_outputs >= 1);
    hgr__user_program_t program;
    FUZZ_CHECK(hgr__library_program(library, op->source, &device, &program));
    /* Neither text nor binary: a binary-only op for other devices. */
    FUZZ_CHECK(!(program.text && program.binary));
    if (program.text || program.binary) FUZZ_CHECK(program.origin);
  }
  FUZZ_CHECK(hgr_kernel_library_op_name(library, hgr_kernel_library_op_count(library)) == NULL);
  hgr_kernel_library_t* again = hgr_kernel_library_retain(library);
  hgr_kernel_library_release(library);
  hgr_kernel_library_release(again);
  return 0;
}
