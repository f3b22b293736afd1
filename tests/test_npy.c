/* .npy files: write -> read round trips, the exact header hgr writes, a blob
 * written by hand, versions 2.0 and 3.0, Python 2 headers, both byte orders read as
 * host values and written little-endian on any host, and refusals (Fortran order,
 * unsupported descr, corrupt headers, every truncation). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "testlib.h"

static const hgr_dtype_t FLOAT32 = {HGR_DTYPE_FLOAT, 32, 1};
static const hgr_dtype_t INT32 = {HGR_DTYPE_INT, 32, 1};
static const hgr_dtype_t BOOL = {HGR_DTYPE_UINT, 1, 1};

/* A version 1.0 file as numpy writes it: int16 [3] = {1, -1, -32768}; the header is
 * padded with spaces so that the data starts at byte 128. */
static const char HAND_DICT[] = "{'descr': '<i2', 'fortran_order': False, 'shape': (3,), }";
static const uint8_t HAND_PREFIX[10] = {0x93, 'N', 'U', 'M', 'P', 'Y', 1, 0, 118, 0};
static const uint8_t HAND_DATA[6] = {0x01, 0x00, 0xFF, 0xFF, 0x00, 0x80};
/* What HAND_DATA reads as: the values, in the host's byte order. */
static const int16_t HAND_VALUES[3] = {1, -1, -32768};
#define HAND_LENGTH 134

static void make_hand_blob(uint8_t blob[HAND_LENGTH]) {
  memcpy(blob, HAND_PREFIX, 10);
  memcpy(blob + 10, HAND_DICT, strlen(HAND_DICT));
  memset(blob + 10 + strlen(HAND_DICT), ' ', 128 - 10 - strlen(HAND_DICT) - 1);
  blob[127] = '\n';
  memcpy(blob + 128, HAND_DATA, 6);
}

/* A version 1.0 blob around dict (padded to 64) followed by data_length bytes. */
static size_t make_blob(uint8_t* blob, const char* dict, size_t data_length) {
  size_t header = (10 + strlen(dict) + 1 + 63) / 64 * 64 - 10;
  memcpy(blob, HAND_PREFIX, 8);
  blob[8] = (uint8_t)header;
  blob[9] = (uint8_t)(header >> 8);
  memset(blob + 10, ' ', header);
  memcpy(blob + 10, dict, strlen(dict));
  blob[10 + header - 1] = '\n';
  memset(blob + 10 + header, 0x11, data_length);
  return 10 + header + data_length;
}

static hgr_status_t load_dict(const char* dict, size_t data_length) {
  uint8_t blob[1024];
  size_t length = make_blob(blob, dict, data_length);
  hgr_npy_array_t array;
  hgr_status_t status = hgr_npy_load_memory(blob, length, &array);
  if (status) assert_null(array.data);
  hgr_npy_array_free(&array);
  return status;
}

/* Loads a copy of blob[0, length) in a buffer of exactly that size (ASan). */
static hgr_status_t load_exact(const uint8_t* blob, size_t length, hgr_npy_array_t* out_array) {
  uint8_t* copy = malloc(length ? length : 1);
  memcpy(copy, blob, length);
  hgr_status_t status = hgr_npy_load_memory(copy, length, out_array);
  free(copy);
  return status;
}

static void round_trip(const char* name, hgr_dtype_t dtype, int32_t ndim, const int64_t* shape,
                       const void* data, uint64_t bytes) {
  const char* path = hgr_test_tmp_path(name);
  ASSERT_OK(hgr_npy_save_file(path, dtype, ndim, shape, data, bytes));
  hgr_npy_array_t array;
  ASSERT_OK(hgr_npy_load_file(path, &array));
  assert_true(hgr_dtype_equal(array.dtype, dtype));
  assert_int_equal(array.ndim, ndim);
  for (int32_t d = 0; d < ndim; ++d) assert_int_equal(array.shape[d], shape[d]);
  assert_int_equal(array.bytes, bytes);
  if (bytes) assert_memory_equal(array.data, data, (size_t)bytes);
  hgr_npy_array_free(&array);
  remove(path);
}

static void npy_round_trips_float32_int32_bool_and_scalars(void** state) {
  (void)state;
  hgr_test_rng_t rng;
  hgr_test_rng_seed(&rng, 7);
  float values[2 * 3];
  for (int i = 0; i < 6; ++i) values[i] = hgr_test_rng_float(&rng, -10.0f, 10.0f);
  const int64_t matrix[2] = {2, 3};
  round_trip("f32.npy", FLOAT32, 2, matrix, values, sizeof(values));
  int32_t integers[5] = {INT32_MIN, -1, 0, 1, INT32_MAX};
  const int64_t vector[1] = {5};
  round_trip("i32.npy", INT32, 1, vector, integers, sizeof(integers));
  uint8_t flags[5] = {1, 0, 0, 1, 1};
  round_trip("bool.npy", BOOL, 1, vector, flags, sizeof(flags));
  double scalar = 3.25;
  round_trip("scalar.npy", (hgr_dtype_t){HGR_DTYPE_FLOAT, 64, 1}, 0, NULL, &scalar, sizeof(scalar));
  const int64_t empty[2] = {0, 4};
  round_trip("empty.npy", (hgr_dtype_t){HGR_DTYPE_UINT, 16, 1}, 2, empty, NULL, 0);
}

static void npy_writes_a_version_1_header_padded_to_64_bytes(void** state) {
  (void)state;
  struct {
    int32_t ndim;
    int64_t shape[2];
    hgr_dtype_t dtype;
    const char* dict;
  } cases[] = {
      {2, {2, 3}, FLOAT32, "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }"},
      {1, {3, 0}, BOOL, "{'descr': '|b1', 'fortran_order': False, 'shape': (3,), }"},
      {0,
       {0, 0},
       (hgr_dtype_t){HGR_DTYPE_INT, 8, 1},
       "{'descr': '|i1', 'fortran_order': False, 'shape': (), }"},
  };
  const uint8_t data[6 * 4] = {0};
  for (size_t c = 0; c < 3; ++c) {
    const char* path = hgr_test_tmp_path("header.npy");
    uint64_t bytes = (cases[c].ndim == 2 ? 24 : cases[c].ndim == 1 ? 3 : 1);
    ASSERT_OK(hgr_npy_save_file(path, cases[c].dtype, cases[c].ndim, cases[c].shape, data, bytes));
    FILE* file = fopen(path, "rb");
    assert_non_null(file);
    uint8_t blob[256];
    size_t length = fread(blob, 1, sizeof(blob), file);
    fclose(file);
    remove(path);
    assert_memory_equal(blob, HAND_PREFIX, 8);
    size_t header = blob[8] | (size_t)blob[9] << 8;
    assert_int_equal((10 + header) % 64, 0);
    assert_int_equal(length, 10 + header + bytes);
    assert_int_equal(blob[10 + header - 1], '\n');
    size_t dict_length = strlen(cases[c].dict);
    assert_memory_equal(blob + 10, cases[c].dict, dict_length);
    for (size_t i = 10 + dict_length; i < 10 + header - 1; ++i) assert_int_equal(blob[i], ' ');
  }
}

static void npy_reads_a_version_1_blob_written_by_hand(void** state) {
  (void)state;
  uint8_t blob[HAND_LENGTH];
  make_hand_blob(blob);
  hgr_npy_array_t array;
  ASSERT_OK(load_exact(blob, sizeof(blob), &array));
  assert_true(hgr_dtype_equal(array.dtype, (hgr_dtype_t){HGR_DTYPE_INT, 16, 1}));
  assert_int_equal(array.ndim, 1);
  assert_int_equal(array.shape[0], 3);
  assert_int_equal(array.bytes, 6);
  assert_memory_equal(array.data, HAND_VALUES, 6);
  hgr_npy_array_free(&array);
  assert_null(array.data);
}

static void npy_reads_versions_2_and_3(void** state) {
  (void)state;
  uint8_t v1[HAND_LENGTH], blob[HAND_LENGTH + 2];
  make_hand_blob(v1);
  for (uint8_t major = 2; major <= 3; ++major) {
    memcpy(blob, HAND_PREFIX, 6);
    blob[6] = major;
    blob[7] = 0;
    blob[8] = 118; /* u32 header length */
    blob[9] = blob[10] = blob[11] = 0;
    memcpy(blob + 12, v1 + 10, HAND_LENGTH - 10);
    hgr_npy_array_t array;
    ASSERT_OK(load_exact(blob, sizeof(blob), &array));
    assert_int_equal(array.shape[0], 3);
    assert_memory_equal(array.data, HAND_VALUES, 6);
    hgr_npy_array_free(&array);
  }
}

static void npy_reads_python_2_headers_in_any_key_order(void** state) {
  (void)state;
  uint8_t blob[512];
  size_t length =
      make_blob(blob, "{\"shape\": (2L, 3L), \"fortran_order\": False, \"descr\": \"<f8\"}", 48);
  hgr_npy_array_t array;
  ASSERT_OK(load_exact(blob, length, &array));
  assert_int_equal(array.dtype.bits, 64);
  assert_int_equal(array.ndim, 2);
  assert_int_equal(array.shape[1], 3);
  hgr_npy_array_free(&array);
  length = make_blob(blob, "{'descr': '|u1', 'fortran_order': False, 'shape': (4, ), }", 4);
  ASSERT_OK(load_exact(blob, length, &array));
  assert_true(hgr_dtype_equal(array.dtype, (hgr_dtype_t){HGR_DTYPE_UINT, 8, 1}));
  hgr_npy_array_free(&array);
}

static void npy_rejects_fortran_order(void** state) {
  (void)state;
  ASSERT_STATUS(load_dict("{'descr': '<f4', 'fortran_order': True, 'shape': (2, 2), }", 16),
                HGR_STATUS_INVALID_ARGUMENT, "Fortran order");
}

/* tests/data/byte_order/ holds files numpy wrote (make.py there): the same 2x3 float32 values big-endian ('>f4') and little-endian
 * ('<f4'), and int64 values big-endian ('>i8'). In memory hgr keeps the host's
 * order, so every file must read as these numbers on any host. */
static const float BYTE_ORDER_FLOATS[6] = {1.5f, -2.25f, 1e-3f, 65504.0f, 3.0f, -0.0f};
static const int64_t BYTE_ORDER_INTS[3] = {1, -2, 0x0102030405060708};

static void assert_byte_order_floats(const char* name) {
  hgr_npy_array_t array;
  ASSERT_OK(hgr_npy_load_file(hgr_test_data_path(name), &array));
  assert_int_equal(array.dtype.code, HGR_DTYPE_FLOAT);
  assert_int_equal(array.dtype.bits, 32);
  assert_int_equal(array.ndim, 2);
  assert_int_equal(array.shape[0], 2);
  assert_int_equal(array.shape[1], 3);
  assert_int_equal(array.bytes, sizeof(BYTE_ORDER_FLOATS));
  assert_memory_equal(array.data, BYTE_ORDER_FLOATS, sizeof(BYTE_ORDER_FLOATS));
  hgr_npy_array_free(&array);
}

static void npy_reads_big_endian_data_as_host_values(void** state) {
  (void)state;
  assert_byte_order_floats("byte_order/big_endian_f4.npy");
  hgr_npy_array_t array;
  ASSERT_OK(hgr_npy_load_file(hgr_test_data_path("byte_order/big_endian_i8.npy"), &array));
  assert_int_equal(array.dtype.code, HGR_DTYPE_INT);
  assert_int_equal(array.dtype.bits, 64);
  assert_int_equal(array.bytes, sizeof(BYTE_ORDER_INTS));
  assert_memory_equal(array.data, BYTE_ORDER_INTS, sizeof(BYTE_ORDER_INTS));
  hgr_npy_array_free(&array);
  /* Single bytes have no order: '>u1' is as good as '|u1'. */
  assert_int_equal(load_dict("{'descr': '>u1', 'fortran_order': False, 'shape': (2,), }", 2), HGR_OK);
}

static void npy_reads_little_endian_data_as_host_values(void** state) {
  (void)state;
  assert_byte_order_floats("byte_order/little_endian_f4.npy");
}

/* Host values saved on any host give the very bytes numpy wrote for '<f4'. */
static void npy_saves_little_endian_bytes_on_any_host(void** state) {
  (void)state;
  const int64_t shape[2] = {2, 3};
  const char* path_text = hgr_test_tmp_path("byte-order.npy");
  char path[4096];
  snprintf(path, sizeof(path), "%s", path_text);
  ASSERT_OK(hgr_npy_save_file(path, FLOAT32, 2, shape, BYTE_ORDER_FLOATS, sizeof(BYTE_ORDER_FLOATS)));
  uint8_t saved[512], expected[512];
  FILE* file = fopen(path, "rb");
  assert_non_null(file);
  size_t saved_length = fread(saved, 1, sizeof(saved), file);
  fclose(file);
  file = fopen(hgr_test_data_path("byte_order/little_endian_f4.npy"), "rb");
  assert_non_null(file);
  size_t expected_length = fread(expected, 1, sizeof(expected), file);
  fclose(file);
  assert_int_equal(saved_length, expected_length);
  assert_memory_equal(saved, expected, expected_length);
  remove(path);
}

static void npy_rejects_unsupported_descrs(void** state) {
  (void)state;
  const char* dicts[] = {
      "{'descr': '<c8', 'fortran_order': False, 'shape': (1,), }",
      "{'descr': '<U4', 'fortran_order': False, 'shape': (1,), }",
      "{'descr': '|O', 'fortran_order': False, 'shape': (1,), }",
      "{'descr': '|f4', 'fortran_order': False, 'shape': (1,), }",
  };
  for (size_t i = 0; i < 4; ++i)
    ASSERT_STATUS(load_dict(dicts[i], 8), HGR_STATUS_INVALID_ARGUMENT, "is not supported");
  ASSERT_STATUS(load_dict("{'descr': [('a', '<f4')], 'fortran_order': False, 'shape': (1,), }", 4),
                HGR_STATUS_INVALID_ARGUMENT, "structured");
}

static void npy_rejects_corrupt_headers_with_data_loss(void** state) {
  (void)state;
  ASSERT_STATUS(load_dict("{'descr': '<f4', 'fortran_order': False}", 4), HGR_STATUS_DATA_LOSS,
                "lacks one of");
  ASSERT_STATUS(load_dict("{'descr': '<f4', 'fortran_order': False, 'shape': (1,), 'x': 1}", 4),
                HGR_STATUS_DATA_LOSS, "unknown or repeated key");
  ASSERT_STATUS(load_dict("{'descr': '<f4', 'fortran_order': False, 'shape': (-1,), }", 4),
                HGR_STATUS_DATA_LOSS, "not a non-negative integer");
  ASSERT_STATUS(load_dict("{'descr': '<f4', 'fortran_order': 0, 'shape': (1,), }", 4),
                HGR_STATUS_DATA_LOSS, "neither True nor False");
  ASSERT_STATUS(load_dict("{'descr': '<f4', 'fortran_order': False, 'shape': (1 2), }", 4),
                HGR_STATUS_DATA_LOSS, "not separated by ','");
  ASSERT_STATUS(load_dict("{'descr': '<f4', 'fortran_order': False, 'shape': (1,), } x", 4),
                HGR_STATUS_DATA_LOSS, "after the closing");
  ASSERT_STATUS(load_dict("{'descr': '<f4', 'fortran_order': False, 'shape': (1,), }", 5),
                HGR_STATUS_DATA_LOSS, "1 unexpected bytes after its data");
  uint8_t blob[HAND_LENGTH];
  make_hand_blob(blob);
  blob[1] = 'n';
  hgr_npy_array_t array;
  ASSERT_STATUS(load_exact(blob, sizeof(blob), &array), HGR_STATUS_DATA_LOSS, "not a .npy file");
  make_hand_blob(blob);
  blob[6] = 4;
  ASSERT_STATUS(load_exact(blob, sizeof(blob), &array), HGR_STATUS_INVALID_ARGUMENT, "version 4.0");
}

static void npy_rejects_every_truncation_with_data_loss(void** state) {
  (void)state;
  uint8_t blob[HAND_LENGTH];
  make_hand_blob(blob);
  for (size_t length = 0; length < sizeof(blob); ++length) {
    hgr_npy_array_t array;
    ASSERT_STATUS(load_exact(blob, length, &array), HGR_STATUS_DATA_LOSS, "");
    assert_null(array.data);
  }
  hgr_npy_array_t array;
  ASSERT_STATUS(load_exact(blob, 131, &array), HGR_STATUS_DATA_LOSS,
                "truncated at byte 131: its data needs 6 bytes from byte 128");
  ASSERT_STATUS(load_exact(blob, 60, &array), HGR_STATUS_DATA_LOSS,
                "truncated at byte 60: its header needs bytes 10 to 128");
}

static void npy_save_refuses_what_npy_cannot_hold(void** state) {
  (void)state;
  const char* path = hgr_test_tmp_path("refused.npy");
  const int64_t shape[1] = {2};
  const uint16_t data[2] = {0};
  ASSERT_STATUS(hgr_npy_save_file(path, (hgr_dtype_t){HGR_DTYPE_BFLOAT, 16, 1}, 1, shape, data, 4),
                HGR_STATUS_INVALID_ARGUMENT, "bfloat16 has no .npy equivalent");
  ASSERT_STATUS(hgr_npy_save_file(path, (hgr_dtype_t){HGR_DTYPE_FLOAT, 16, 2}, 1, shape, data, 8),
                HGR_STATUS_INVALID_ARGUMENT, "float16x2");
  ASSERT_STATUS(hgr_npy_save_file(path, (hgr_dtype_t){HGR_DTYPE_FLOAT, 16, 1}, 1, shape, data, 3),
                HGR_STATUS_INVALID_ARGUMENT, "3 bytes given, but the dtype and shape need 4");
  ASSERT_STATUS(hgr_npy_save_file("/nonexistent/dir/a.npy", (hgr_dtype_t){HGR_DTYPE_FLOAT, 16, 1},
                                  1, shape, data, 4),
                HGR_STATUS_UNAVAILABLE, "/nonexistent/dir/a.npy");
}

static void npy_load_file_names_a_missing_path(void** state) {
  (void)state;
  hgr_npy_array_t array;
  ASSERT_STATUS(hgr_npy_load_file("/nonexistent/a.npy", &array), HGR_STATUS_NOT_FOUND,
                "'/nonexistent/a.npy'");
  assert_null(array.data);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(npy_round_trips_float32_int32_bool_and_scalars),
      cmocka_unit_test(npy_writes_a_version_1_header_padded_to_64_bytes),
      cmocka_unit_test(npy_reads_a_version_1_blob_written_by_hand),
      cmocka_unit_test(npy_reads_versions_2_and_3),
      cmocka_unit_test(npy_reads_python_2_headers_in_any_key_order),
      cmocka_unit_test(npy_rejects_fortran_order),
      cmocka_unit_test(npy_reads_big_endian_data_as_host_values),
      cmocka_unit_test(npy_reads_little_endian_data_as_host_values),
      cmocka_unit_test(npy_saves_little_endian_bytes_on_any_host),
      cmocka_unit_test(npy_rejects_unsupported_descrs),
      cmocka_unit_test(npy_rejects_corrupt_headers_with_data_loss),
      cmocka_unit_test(npy_rejects_every_truncation_with_data_loss),
      cmocka_unit_test(npy_save_refuses_what_npy_cannot_hold),
      cmocka_unit_test(npy_load_file_names_a_missing_path),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
