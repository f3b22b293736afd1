/* libFuzzer target: NumPy .npy blobs (hgr_npy_load_memory). */
#include "fuzz.h"

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
  /* The data is the blob's tail, byte for byte. */
  FUZZ_CHECK(array.bytes == 0 || memcmp(array.data, data + size - array.bytes, (size_t)array.bytes) == 0);
  hgr_npy_array_free(&array);
  FUZZ_CHECK(array.data == NULL);
  return 0;
}
