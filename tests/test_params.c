/* TVM params files: round trips, a blob spelled out byte by byte, and corrupt or
 * truncated input, which must fail with DATA_LOSS naming the byte offset and the
 * param, without reading past the end (ASan checks each truncation). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "testlib.h"

/* Two params as TVM's save_param_dict writes them: "w" float32 [2] = {1, -2} and
 * "b" int8 scalar = -3. */
static const uint8_t HAND_BLOB[] = {
    0xB7, 0x9C, 0x04, 0x05, 0x4F, 0x8D, 0xE5, 0xF7,      /*   0 list magic */
    0,    0,    0,    0,    0,    0,    0,    0,         /*   8 reserved */
    2,    0,    0,    0,    0,    0,    0,    0,         /*  16 name count */
    1,    0,    0,    0,    0,    0,    0,    0,    'w', /*  24 name 0 */
    1,    0,    0,    0,    0,    0,    0,    0,    'b', /*  33 name 1 */
    2,    0,    0,    0,    0,    0,    0,    0,         /*  42 tensor count */
    0x3F, 0xA1, 0xB4, 0x96, 0xF0, 0x40, 0x5E, 0xDD,      /*  50 tensor "w": magic */
    0,    0,    0,    0,    0,    0,    0,    0,         /*  58 reserved */
    1,    0,    0,    0,                                 /*  66 device type: CPU */
    0,    0,    0,    0,                                 /*  70 device id */
    1,    0,    0,    0,                                 /*  74 ndim */
    2,    32,   1,    0,                                 /*  78 float, 32 bits, 1 lane */
    2,    0,    0,    0,    0,    0,    0,    0,         /*  82 shape[0] */
    8,    0,    0,    0,    0,    0,    0,    0,         /*  90 data byte size */
    0x00, 0x00, 0x80, 0x3F, 0x00, 0x00, 0x00, 0xC0,      /*  98 1.0f, -2.0f */
    0x3F, 0xA1, 0xB4, 0x96, 0xF0, 0x40, 0x5E, 0xDD,      /* 106 tensor "b": magic */
    0,    0,    0,    0,    0,    0,    0,    0,         /* 114 reserved */
    1,    0,    0,    0,                                 /* 122 device type */
    0,    0,    0,    0,                                 /* 126 device id */
    0,    0,    0,    0,                                 /* 130 ndim 0: a scalar */
    0,    8,    1,    0,                                 /* 134 int, 8 bits, 1 lane */
    1,    0,    0,    0,    0,    0,    0,    0,         /* 138 data byte size */
    0xFD,                                                /* 146 -3 */
};

static const hgr_dtype_t FLOAT32 = {HGR_DTYPE_FLOAT, 32, 1};
static const hgr_dtype_t INT8 = {HGR_DTYPE_INT, 8, 1};

static hgr_params_t* make_hand_params(void) {
  hgr_params_t* params = NULL;
  ASSERT_OK(hgr_params_create(&params));
  const float w[2] = {1.0f, -2.0f};
  const int64_t w_shape[1] = {2};
  const int8_t b = -3;
  ASSERT_OK(hgr_params_add(params, "w", FLOAT32, 1, w_shape, w, sizeof(w)));
  ASSERT_OK(hgr_params_add(params, "b", INT8, 0, NULL, &b, 1));
  return params;
}

/* Loads a copy of blob[0, length) in a buffer of exactly that size, so that ASan
 * catches any read past the end. */
static hgr_status_t load_exact(const uint8_t* blob, size_t length, hgr_params_t** out_params) {
  uint8_t* copy = malloc(length ? length : 1);
  memcpy(copy, blob, length);
  hgr_status_t status = hgr_params_load_memory(copy, length, out_params);
  free(copy);
  return status;
}

/* Loads HAND_BLOB with one byte changed. */
static hgr_status_t load_hand_blob_with(size_t offset, uint8_t value) {
  uint8_t blob[sizeof(HAND_BLOB)];
  memcpy(blob, HAND_BLOB, sizeof(blob));
  blob[offset] = value;
  hgr_params_t* params = NULL;
  hgr_status_t status = hgr_params_load_memory(blob, sizeof(blob), &params);
  if (status) assert_null(params);
  hgr_params_release(params);
  return status;
}

static void assert_same_params(const hgr_params_t* a, const hgr_params_t* b) {
  assert_int_equal(hgr_params_count(a), hgr_params_count(b));
  for (size_t i = 0; i < hgr_params_count(a); ++i) {
    hgr_tensor_info_t x, y;
    const void *x_data, *y_data;
    ASSERT_OK(hgr_params_get(a, i, &x, &x_data));
    ASSERT_OK(hgr_params_get(b, i, &y, &y_data));
    assert_string_equal(x.name, y.name);
    assert_true(hgr_dtype_equal(x.dtype, y.dtype));
    assert_int_equal(x.ndim, y.ndim);
    if (x.ndim) assert_memory_equal(x.shape, y.shape, (size_t)x.ndim * sizeof(int64_t));
    assert_int_equal(x.bytes, y.bytes);
    if (x.bytes) assert_memory_equal(x_data, y_data, (size_t)x.bytes);
  }
}

static void params_round_trip_keeps_names_dtypes_shapes_and_data(void** state) {
  (void)state;
  hgr_test_rng_t rng;
  hgr_test_rng_seed(&rng, 42);
  hgr_params_t* params = NULL;
  ASSERT_OK(hgr_params_create(&params));

  float conv[2 * 3 * 4 * 5];
  for (size_t i = 0; i < 120; ++i) conv[i] = hgr_test_rng_float(&rng, -1.0f, 1.0f);
  const int64_t conv_shape[4] = {2, 3, 4, 5};
  ASSERT_OK(hgr_params_add(params, "conv_weight", FLOAT32, 4, conv_shape, conv, sizeof(conv)));
  int8_t bytes[7] = {-128, -1, 0, 1, 2, 3, 127};
  const int64_t bytes_shape[1] = {7};
  ASSERT_OK(hgr_params_add(params, "int8_bias", INT8, 1, bytes_shape, bytes, sizeof(bytes)));
  uint16_t halves[6] = {0x3C00, 0xC000, 0x7BFF, 0x0001, 0x8000, 0x7E00};
  const int64_t halves_shape[2] = {2, 3};
  ASSERT_OK(hgr_params_add(params, "half", (hgr_dtype_t){HGR_DTYPE_FLOAT, 16, 1}, 2, halves_shape,
                           halves, sizeof(halves)));
  uint8_t flags[3] = {1, 0, 1};
  const int64_t flags_shape[1] = {3};
  ASSERT_OK(hgr_params_add(params, "mask", (hgr_dtype_t){HGR_DTYPE_UINT, 1, 1}, 1, flags_shape,
                           flags, sizeof(flags)));
  int64_t scalar = -1234567890123;
  ASSERT_OK(hgr_params_add(params, "step", (hgr_dtype_t){HGR_DTYPE_INT, 64, 1}, 0, NULL, &scalar,
                           sizeof(scalar)));
  const int64_t empty_shape[2] = {0, 3};
  ASSERT_OK(hgr_params_add(params, "empty", (hgr_dtype_t){HGR_DTYPE_UINT, 8, 1}, 2, empty_shape,
                           NULL, 0));

  void* blob = NULL;
  size_t length = 0;
  ASSERT_OK(hgr_params_save_memory(params, &blob, &length));
  hgr_params_t* loaded = NULL;
  ASSERT_OK(hgr_params_load_memory(blob, length, &loaded));
  assert_same_params(params, loaded);
  hgr_tensor_info_t info;
  const void* data;
  size_t index = 0;
  ASSERT_OK(hgr_params_find(loaded, "step", &index));
  ASSERT_OK(hgr_params_get(loaded, index, &info, &data));
  assert_int_equal(info.ndim, 0);
  assert_int_equal(info.bytes, 8);
  hgr_params_release(loaded);

  /* Through a file: the temporary file is renamed away. */
  const char* path_text = hgr_test_tmp_path("round-trip.params");
  char path[4096], temporary[4200];
  snprintf(path, sizeof(path), "%s", path_text);
  snprintf(temporary, sizeof(temporary), "%s.tmp.%ld", path, (long)getpid());
  ASSERT_OK(hgr_params_save_file(params, path));
  assert_int_not_equal(access(temporary, F_OK), 0);
  ASSERT_OK(hgr_params_load_file(path, &loaded));
  assert_same_params(params, loaded);
  hgr_params_release(loaded);
  remove(path);

  free(blob);
  hgr_params_release(params);
}

static void params_save_matches_a_blob_written_by_hand(void** state) {
  (void)state;
  hgr_params_t* params = make_hand_params();
  void* blob = NULL;
  size_t length = 0;
  ASSERT_OK(hgr_params_save_memory(params, &blob, &length));
  assert_int_equal(length, sizeof(HAND_BLOB));
  assert_memory_equal(blob, HAND_BLOB, sizeof(HAND_BLOB));

  hgr_params_t* loaded = NULL;
  ASSERT_OK(load_exact(HAND_BLOB, sizeof(HAND_BLOB), &loaded));
  assert_same_params(params, loaded);
  hgr_params_release(loaded);
  free(blob);
  hgr_params_release(params);
}

static void params_rejects_every_truncation_with_data_loss(void** state) {
  (void)state;
  for (size_t length = 0; length < sizeof(HAND_BLOB); ++length) {
    hgr_params_t* params = (hgr_params_t*)1;
    ASSERT_STATUS(load_exact(HAND_BLOB, length, &params), HGR_STATUS_DATA_LOSS, "byte");
    assert_null(params);
  }
  hgr_params_t* params = NULL;
  ASSERT_STATUS(load_exact(HAND_BLOB, 101, &params), HGR_STATUS_DATA_LOSS,
                "params truncated at byte 98: data of param 0 'w' needs 8 bytes, but 3 remain");
  ASSERT_STATUS(load_exact(HAND_BLOB, 140, &params), HGR_STATUS_DATA_LOSS,
                "truncated at byte 138: data byte size of param 1 'b'");
  ASSERT_STATUS(hgr_params_load_memory(NULL, 0, &params), HGR_STATUS_DATA_LOSS, "list magic");
}

static void params_rejects_a_bad_list_magic(void** state) {
  (void)state;
  ASSERT_STATUS(load_hand_blob_with(0, 0xB6), HGR_STATUS_DATA_LOSS,
                "not a TVM params blob: the magic at byte 0 is 0xF7E58D4F05049CB6");
}

static void params_rejects_a_bad_tensor_magic(void** state) {
  (void)state;
  ASSERT_STATUS(load_hand_blob_with(106, 0), HGR_STATUS_DATA_LOSS,
                "param 1 'b': tensor magic at byte 106 is 0xDD5E40F096B4A100");
}

static void params_rejects_a_tensor_count_that_differs_from_the_name_count(void** state) {
  (void)state;
  ASSERT_STATUS(load_hand_blob_with(42, 3), HGR_STATUS_DATA_LOSS,
                "2 names but a tensor count of 3 at byte 42");
}

static void params_rejects_a_byte_size_that_does_not_match_the_shape(void** state) {
  (void)state;
  ASSERT_STATUS(load_hand_blob_with(90, 9), HGR_STATUS_DATA_LOSS,
                "param 0 'w': data byte size at byte 90 is 9, but the shape and dtype need 8");
}

static void params_rejects_a_device_type_other_than_cpu(void** state) {
  (void)state;
  ASSERT_STATUS(load_hand_blob_with(66, 4), HGR_STATUS_DATA_LOSS,
                "param 0 'w': device type at byte 66 is 4, expected 1");
}

static void params_rejects_an_unsupported_dtype_naming_the_param(void** state) {
  (void)state;
  ASSERT_STATUS(load_hand_blob_with(134, 3), HGR_STATUS_INVALID_ARGUMENT, "param 'b'", "code 3");
  ASSERT_STATUS(load_hand_blob_with(80, 4), HGR_STATUS_INVALID_ARGUMENT, "param 'w'", "4 lanes");
}

static void params_rejects_duplicate_names(void** state) {
  (void)state;
  ASSERT_STATUS(load_hand_blob_with(41, 'w'), HGR_STATUS_INVALID_ARGUMENT,
                "two params are named 'w'");
  hgr_params_t* params = make_hand_params();
  const float w[2] = {0};
  const int64_t shape[1] = {2};
  ASSERT_STATUS(hgr_params_add(params, "w", FLOAT32, 1, shape, w, sizeof(w)),
                HGR_STATUS_INVALID_ARGUMENT, "param 'w' is already present");
  assert_int_equal(hgr_params_count(params), 2);
  hgr_params_release(params);
}

static void params_rejects_bytes_after_the_last_tensor(void** state) {
  (void)state;
  uint8_t blob[sizeof(HAND_BLOB) + 1];
  memcpy(blob, HAND_BLOB, sizeof(HAND_BLOB));
  blob[sizeof(HAND_BLOB)] = 0;
  hgr_params_t* params = NULL;
  ASSERT_STATUS(load_exact(blob, sizeof(blob), &params), HGR_STATUS_DATA_LOSS,
                "1 unexpected bytes after the last tensor (from byte 147)");
}

static void params_refuses_huge_lengths_without_allocating_them(void** state) {
  (void)state;
  uint8_t blob[sizeof(HAND_BLOB)];
  memcpy(blob, HAND_BLOB, sizeof(blob));
  memset(blob + 24, 0xFF, 8); /* name 0 length 2^64 - 1 */
  hgr_params_t* params = NULL;
  ASSERT_STATUS(load_exact(blob, sizeof(blob), &params), HGR_STATUS_DATA_LOSS,
                "truncated at byte 32: name of param 0 needs 18446744073709551615 bytes");
  memcpy(blob, HAND_BLOB, sizeof(blob));
  memset(blob + 16, 0x7F, 8); /* name count */
  ASSERT_STATUS(load_exact(blob, sizeof(blob), &params), HGR_STATUS_DATA_LOSS, "names at byte 16");
  memcpy(blob, HAND_BLOB, sizeof(blob));
  memset(blob + 82, 0x7F, 8); /* shape[0] of "w": the byte size overflows */
  ASSERT_STATUS(load_exact(blob, sizeof(blob), &params), HGR_STATUS_DATA_LOSS,
                "param 0 'w': the shape at byte 82 has a negative dimension or its size overflows");
}

static void params_add_checks_byte_size_dtype_and_shape(void** state) {
  (void)state;
  hgr_params_t* params = NULL;
  ASSERT_OK(hgr_params_create(&params));
  const float data[4] = {0};
  const int64_t shape[2] = {2, 2};
  ASSERT_STATUS(hgr_params_add(params, "a", FLOAT32, 2, shape, data, 12),
                HGR_STATUS_INVALID_ARGUMENT,
                "param 'a': 12 bytes given, but its dtype and shape need 16");
  ASSERT_STATUS(
      hgr_params_add(params, "a", (hgr_dtype_t){HGR_DTYPE_FLOAT, 32, 4}, 1, shape, data, 16),
      HGR_STATUS_INVALID_ARGUMENT, "param 'a': dtype float32x4 has 4 lanes");
  const int64_t negative[1] = {-1};
  ASSERT_STATUS(hgr_params_add(params, "a", FLOAT32, 1, negative, data, 0),
                HGR_STATUS_INVALID_ARGUMENT, "negative dimension");
  ASSERT_STATUS(hgr_params_add(params, "a", FLOAT32, 17, shape, data, 16),
                HGR_STATUS_INVALID_ARGUMENT, "17 dimensions");
  ASSERT_STATUS(hgr_params_add(params, "a", (hgr_dtype_t){3, 64, 1}, 1, shape, data, 16),
                HGR_STATUS_INVALID_ARGUMENT, "param 'a'", "not supported");
  assert_int_equal(hgr_params_count(params), 0);
  hgr_params_release(params);
}

static void params_find_and_get_report_missing_params(void** state) {
  (void)state;
  hgr_params_t* params = make_hand_params();
  size_t index = 0;
  ASSERT_OK(hgr_params_find(params, "b", &index));
  assert_int_equal(index, 1);
  ASSERT_STATUS(hgr_params_find(params, "c", &index), HGR_STATUS_NOT_FOUND, "no param named 'c'");
  hgr_tensor_info_t info;
  ASSERT_STATUS(hgr_params_get(params, 2, &info, NULL), HGR_STATUS_OUT_OF_RANGE, "param 2");
  hgr_params_release(params);
}

static void params_load_file_names_a_missing_path(void** state) {
  (void)state;
  hgr_params_t* params = (hgr_params_t*)1;
  ASSERT_STATUS(hgr_params_load_file("/nonexistent/x.params", &params), HGR_STATUS_NOT_FOUND,
                "'/nonexistent/x.params'");
  assert_null(params);
  params = make_hand_params();
  ASSERT_STATUS(hgr_params_save_file(params, "/nonexistent/dir/x.params"), HGR_STATUS_UNAVAILABLE,
                "/nonexistent/dir/x.params");
  hgr_params_release(params);
}

/* tests/data/byte_order/little_endian.params, written by Python's struct (make.py
 * there): float32 w [2, 2], int16 b [3], int64 s []. The file is little-endian; in
 * memory hgr keeps the host's order, so it must read as these numbers on any host,
 * and saving them must give the file back byte for byte. */
static void params_file_reads_as_host_values_and_saves_byte_for_byte(void** state) {
  (void)state;
  const float w[4] = {1.5f, -2.25f, 1e-3f, 65504.0f};
  const int16_t b[3] = {1, -2, 0x1234};
  const int64_t s = 0x0102030405060708;
  const void* expected[3] = {w, b, &s};
  const size_t sizes[3] = {sizeof(w), sizeof(b), sizeof(s)};
  const char* names[3] = {"w", "b", "s"};

  FILE* file = fopen(hgr_test_data_path("byte_order/little_endian.params"), "rb");
  assert_non_null(file);
  uint8_t blob[1024];
  size_t length = fread(blob, 1, sizeof(blob), file);
  fclose(file);
  hgr_params_t* params = NULL;
  ASSERT_OK(hgr_params_load_memory(blob, length, &params));
  assert_int_equal(hgr_params_count(params), 3);
  for (size_t i = 0; i < 3; ++i) {
    hgr_tensor_info_t info;
    const void* data = NULL;
    ASSERT_OK(hgr_params_get(params, i, &info, &data));
    assert_string_equal(info.name, names[i]);
    assert_int_equal(info.bytes, sizes[i]);
    assert_memory_equal(data, expected[i], sizes[i]);
  }
  void* saved = NULL;
  size_t saved_length = 0;
  ASSERT_OK(hgr_params_save_memory(params, &saved, &saved_length));
  assert_int_equal(saved_length, length);
  assert_memory_equal(saved, blob, length);
  free(saved);
  hgr_params_release(params);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(params_round_trip_keeps_names_dtypes_shapes_and_data),
      cmocka_unit_test(params_save_matches_a_blob_written_by_hand),
      cmocka_unit_test(params_rejects_every_truncation_with_data_loss),
      cmocka_unit_test(params_rejects_a_bad_list_magic),
      cmocka_unit_test(params_rejects_a_bad_tensor_magic),
      cmocka_unit_test(params_rejects_a_tensor_count_that_differs_from_the_name_count),
      cmocka_unit_test(params_rejects_a_byte_size_that_does_not_match_the_shape),
      cmocka_unit_test(params_rejects_a_device_type_other_than_cpu),
      cmocka_unit_test(params_rejects_an_unsupported_dtype_naming_the_param),
      cmocka_unit_test(params_rejects_duplicate_names),
      cmocka_unit_test(params_rejects_bytes_after_the_last_tensor),
      cmocka_unit_test(params_refuses_huge_lengths_without_allocating_them),
      cmocka_unit_test(params_add_checks_byte_size_dtype_and_shape),
      cmocka_unit_test(params_find_and_get_report_missing_params),
      cmocka_unit_test(params_load_file_names_a_missing_path),
      cmocka_unit_test(params_file_reads_as_host_values_and_saves_byte_for_byte),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
