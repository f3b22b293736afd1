/* dtype strings: TVM's grammar (prefix, optional bits, optional x<lanes>, "bool"),
 * the canonical form hgr writes back, element sizes, and what is refused. */
#include <stdio.h>
#include <string.h>

#include "testlib.h"

static hgr_dtype_t parse(const char* text) {
  hgr_dtype_t dtype = {0, 0, 0};
  ASSERT_OK(hgr_dtype_parse(text, &dtype));
  return dtype;
}

static void assert_dtype(hgr_dtype_t dtype, int code, int bits, int lanes) {
  assert_int_equal(dtype.code, code);
  assert_int_equal(dtype.bits, bits);
  assert_int_equal(dtype.lanes, lanes);
}

static void dtype_parses_tvm_strings(void** state) {
  (void)state;
  assert_dtype(parse("float32"), HGR_DTYPE_FLOAT, 32, 1);
  assert_dtype(parse("float16"), HGR_DTYPE_FLOAT, 16, 1);
  assert_dtype(parse("float64"), HGR_DTYPE_FLOAT, 64, 1);
  assert_dtype(parse("int8"), HGR_DTYPE_INT, 8, 1);
  assert_dtype(parse("int64"), HGR_DTYPE_INT, 64, 1);
  assert_dtype(parse("uint1"), HGR_DTYPE_UINT, 1, 1);
  assert_dtype(parse("bool"), HGR_DTYPE_UINT, 1, 1);
  assert_dtype(parse("bfloat16"), HGR_DTYPE_BFLOAT, 16, 1);
  assert_dtype(parse("float16x4"), HGR_DTYPE_FLOAT, 16, 4);
  assert_dtype(parse("int8x16"), HGR_DTYPE_INT, 8, 16);
}

static void dtype_defaults_bits_like_tvm(void** state) {
  (void)state;
  assert_dtype(parse("float"), HGR_DTYPE_FLOAT, 32, 1);
  assert_dtype(parse("int"), HGR_DTYPE_INT, 32, 1);
  assert_dtype(parse("uint"), HGR_DTYPE_UINT, 32, 1);
  assert_dtype(parse("bfloat"), HGR_DTYPE_BFLOAT, 16, 1);
  assert_dtype(parse("floatx4"), HGR_DTYPE_FLOAT, 32, 4);
}

static void dtype_formats_the_canonical_string(void** state) {
  (void)state;
  const char* canonical[] = {"float32",  "float16x4", "int8",    "uint64",    "bool",
                             "bfloat16", "int1",      "uint4x8", "int8x65535"};
  char text[24];
  for (size_t i = 0; i < sizeof(canonical) / sizeof(canonical[0]); ++i)
    assert_string_equal(hgr_dtype_format(parse(canonical[i]), text, sizeof(text)), canonical[i]);
  assert_string_equal(hgr_dtype_format(parse("uint1"), text, sizeof(text)), "bool");
  assert_string_equal(hgr_dtype_format(parse("float"), text, sizeof(text)), "float32");
  hgr_dtype_t handle = {3, 64, 1};
  assert_string_equal(hgr_dtype_format(handle, text, sizeof(text)), "invalid(3:64x1)");
  char small[4];
  assert_string_equal(hgr_dtype_format(parse("float32"), small, sizeof(small)), "flo");
}

static void dtype_counts_element_bytes_like_tvm(void** state) {
  (void)state;
  assert_int_equal(hgr_dtype_element_bytes(parse("float32")), 4);
  assert_int_equal(hgr_dtype_element_bytes(parse("float16x4")), 8);
  assert_int_equal(hgr_dtype_element_bytes(parse("bool")), 1);
  assert_int_equal(hgr_dtype_element_bytes(parse("int4")), 1);
  assert_int_equal(hgr_dtype_element_bytes(parse("int4x4")), 2);
  assert_int_equal(hgr_dtype_element_bytes(parse("uint1x9")), 2);
  assert_true(hgr_dtype_equal(parse("bool"), parse("uint1")));
  assert_false(hgr_dtype_equal(parse("int8"), parse("uint8")));
  assert_false(hgr_dtype_equal(parse("int8"), parse("int8x2")));
}

static void dtype_rejects_what_hgr_cannot_hold_naming_the_text(void** state) {
  (void)state;
  const char* refused[] = {
      "handle",      "void",    "",          "custom[posit]32", "e4m3_float8",
      "e5m2_float8", "float8",  "float128",  "bfloat32",        "int0",
      "int65",       "int256",  "float32x0", "float32x",        "float32x65536",
      "float32 ",    "Float32", "bool8",     "int8x4y",         "int-8"};
  for (size_t i = 0; i < sizeof(refused) / sizeof(refused[0]); ++i) {
    hgr_dtype_t dtype;
    char needle[64];
    snprintf(needle, sizeof(needle), "dtype '%s' is not supported", refused[i]);
    ASSERT_STATUS(hgr_dtype_parse(refused[i], &dtype), HGR_STATUS_INVALID_ARGUMENT, needle);
  }
  hgr_dtype_t dtype;
  ASSERT_STATUS(hgr_dtype_parse(NULL, &dtype), HGR_STATUS_INVALID_ARGUMENT, "NULL");
}

static void dtype_validate_accepts_parsed_dtypes_and_refuses_others(void** state) {
  (void)state;
  ASSERT_OK(hgr_dtype_validate(parse("float16x4")));
  ASSERT_OK(hgr_dtype_validate(parse("bool")));
  ASSERT_STATUS(hgr_dtype_validate((hgr_dtype_t){3, 64, 1}), HGR_STATUS_INVALID_ARGUMENT, "code 3");
  ASSERT_STATUS(hgr_dtype_validate((hgr_dtype_t){HGR_DTYPE_FLOAT, 32, 0}),
                HGR_STATUS_INVALID_ARGUMENT, "lanes 0");
  ASSERT_STATUS(hgr_dtype_validate((hgr_dtype_t){HGR_DTYPE_FLOAT, 8, 1}),
                HGR_STATUS_INVALID_ARGUMENT, "float8");
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(dtype_parses_tvm_strings),
      cmocka_unit_test(dtype_defaults_bits_like_tvm),
      cmocka_unit_test(dtype_formats_the_canonical_string),
      cmocka_unit_test(dtype_counts_element_bytes_like_tvm),
      cmocka_unit_test(dtype_rejects_what_hgr_cannot_hold_naming_the_text),
      cmocka_unit_test(dtype_validate_accepts_parsed_dtypes_and_refuses_others),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
