/* libFuzzer target: TVM params blobs (hgr_params_load_memory). A blob that loads
 * must save (hgr_params_save_memory) to a blob that loads to the same params and
 * saves to the same bytes. */
#include "fuzz.h"

static void check_equal(const hgr_params_t* a, const hgr_params_t* b) {
  FUZZ_CHECK(hgr_params_count(a) == hgr_params_count(b));
  for (size_t i = 0; i < hgr_params_count(a); ++i) {
    hgr_tensor_info_t x, y;
    const void *x_data = NULL, *y_data = NULL;
    FUZZ_CHECK(hgr_params_get(a, i, &x, &x_data) == HGR_OK);
    FUZZ_CHECK(hgr_params_get(b, i, &y, &y_data) == HGR_OK);
    FUZZ_CHECK(strcmp(x.name, y.name) == 0);
    FUZZ_CHECK(hgr_dtype_equal(x.dtype, y.dtype) && x.ndim == y.ndim && x.bytes == y.bytes);
    FUZZ_CHECK(x.ndim == 0 || memcmp(x.shape, y.shape, (size_t)x.ndim * sizeof(*x.shape)) == 0);
    FUZZ_CHECK(x.bytes == 0 || memcmp(x_data, y_data, (size_t)x.bytes) == 0);
    size_t found = SIZE_MAX;
    FUZZ_CHECK(hgr_params_find(a, x.name, &found) == HGR_OK && found == i);
  }
}

int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  hgr_params_t* params = (hgr_params_t*)&params; /* must be overwritten with NULL */
  hgr_status_t status = hgr_params_load_memory(data, size, &params);
  if (status) {
    hgr_status_code_t code = hgr_status_code(status);
    FUZZ_CHECK(code == HGR_STATUS_DATA_LOSS || code == HGR_STATUS_INVALID_ARGUMENT ||
               code == HGR_STATUS_RESOURCE_EXHAUSTED);
    FUZZ_CHECK(params == NULL);
    fuzz_consume_status(status);
    return 0;
  }
  FUZZ_CHECK(params);
  void* blob = NULL;
  size_t length = 0;
  FUZZ_CHECK(hgr_params_save_memory(params, &blob, &length) == HGR_OK);
  /* What hgr writes differs from the input only in the words TVM ignores. */
  FUZZ_CHECK(length == size);
  hgr_params_t* reloaded = NULL;
  FUZZ_CHECK(hgr_params_load_memory(blob, length, &reloaded) == HGR_OK);
  check_equal(params, reloaded);
  void* blob_again = NULL;
  size_t length_again = 0;
  FUZZ_CHECK(hgr_params_save_memory(reloaded, &blob_again, &length_again) == HGR_OK);
  FUZZ_CHECK(length_again == length && memcmp(blob, blob_again, length) == 0);
  /* Adding every param again to a new list gives the same list; adding one twice fails. */
  hgr_params_t* copy = NULL;
  FUZZ_CHECK(hgr_params_create(&copy) == HGR_OK);
  for (size_t i = 0; i < hgr_params_count(params); ++i) {
    hgr_tensor_info_t info;
    const void* tensor = NULL;
    FUZZ_CHECK(hgr_params_get(params, i, &info, &tensor) == HGR_OK);
    FUZZ_CHECK(hgr_params_add(copy, info.name, info.dtype, info.ndim, info.shape, tensor, info.bytes) == HGR_OK);
    FUZZ_CHECK(fuzz_consume_status(
        hgr_params_add(copy, info.name, info.dtype, info.ndim, info.shape, tensor, info.bytes)));
  }
  check_equal(params, copy);
  FUZZ_CHECK(fuzz_consume_status(hgr_params_get(params, hgr_params_count(params), NULL, NULL)));
  free(blob);
  free(blob_again);
  hgr_params_release(copy);
  hgr_params_release(reloaded);
  hgr_params_release(params);
  return 0;
}
