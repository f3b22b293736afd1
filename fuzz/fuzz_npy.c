/* libFuzzer target: NumPy .npy blobs (hgr_npy_load_memory). An array that loads
 * is saved (hgr_npy_save_file) and read back (hgr_npy_load_file) unchanged. */
#include <unistd.h>

#include "fuzz.h"

static char dir[512];
static char path[sizeof(dir) + 16];

static void remove_dir(void) {
  remove(path);
  rmdir(dir);
}

int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  hgr_npy_array_t array;
  memset(&array, 0xA5, sizeof(array)); /* must be zeroed by the call */
  hgr_status_t status = hgr_npy_load_memory(data, size, &array);
  if (status) {
    hgr_status_code_t code = hgr_status_code(status);
    FUZZ_CHECK(code == HGR_STATUS_DATA_LOSS || code == HGR_STATUS_INVALID_ARGUMENT ||
               code == HGR_STATUS_RESOURCE_EXHAUSTED);
    FUZZ_CHECK(array.data == NULL && array.bytes == 0);
    fuzz_consume_status(status);
    hgr_npy_array_free(&array);
    return 0;
  }
  FUZZ_CHECK(array.ndim >= 0 && array.ndim <= HGR_MAX_DIMS);
  FUZZ_CHECK(hgr_dtype_validate(array.dtype) == HGR_OK);
  uint64_t count = 1;
  for (int32_t d = 0; d < array.ndim; ++d) {
    FUZZ_CHECK(array.shape[d] >= 0);
    count *= (uint64_t)array.shape[d];
  }
  FUZZ_CHECK(array.bytes == count * hgr_dtype_element_bytes(array.dtype));
  FUZZ_CHECK(array.data != NULL && array.bytes <= size);
  /* The data is the blob's tail: byte for byte in the file's byte order is the host's,
   * else each element's bytes reversed (a '>' descr on a little-endian host, or '<'
   * on a big-endian one). */
  const uint8_t* tail = data + size - array.bytes;
  if (array.bytes && memcmp(array.data, tail, (size_t)array.bytes) != 0) {
    size_t element = (size_t)hgr_dtype_element_bytes(array.dtype);
    const uint8_t* held = array.data;
    for (size_t i = 0; i < (size_t)array.bytes; ++i)
      FUZZ_CHECK(held[i] == tail[i / element * element + (element - 1 - i % element)]);
  }
  /* What hgr writes, it reads back as the same array. */
  if (!path[0]) {
    fuzz_make_dir("npy", dir, sizeof(dir));
    snprintf(path, sizeof(path), "%s/array.npy", dir);
    atexit(remove_dir);
  }
  FUZZ_CHECK(hgr_npy_save_file(path, array.dtype, array.ndim, array.shape, array.data, array.bytes) == HGR_OK);
  hgr_npy_array_t again;
  FUZZ_CHECK(hgr_npy_load_file(path, &again) == HGR_OK);
  FUZZ_CHECK(hgr_dtype_equal(again.dtype, array.dtype) && again.ndim == array.ndim && again.bytes == array.bytes);
  FUZZ_CHECK(memcmp(again.shape, array.shape, sizeof(array.shape)) == 0);
  FUZZ_CHECK(array.bytes == 0 || memcmp(again.data, array.data, (size_t)array.bytes) == 0);
  remove(path);
  hgr_npy_array_free(&again);
  hgr_npy_array_free(&array);
  FUZZ_CHECK(array.data == NULL);
  return 0;
}
