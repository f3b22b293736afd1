/* Data types: TVM dtype strings <-> hgr_dtype_t, element sizes. */
#include <stdio.h>
#include <string.h>

#include "hgr/tensor.h"
#include "internal.h"

static const struct {
  const char* prefix;
  hgr_dtype_code_t code;
  unsigned default_bits;
} dtype_prefixes[] = {
    {"int", HGR_DTYPE_INT, 32},
    {"uint", HGR_DTYPE_UINT, 32},
    {"float", HGR_DTYPE_FLOAT, 32},
    {"bfloat", HGR_DTYPE_BFLOAT, 16},
};

static const char* code_prefix(uint8_t code) {
  for (size_t i = 0; i < sizeof(dtype_prefixes) / sizeof(dtype_prefixes[0]); ++i)
    if ((uint8_t)dtype_prefixes[i].code == code) return dtype_prefixes[i].prefix;
  return NULL;
}

static bool dtype_supported(hgr_dtype_t dtype) {
  if (dtype.lanes == 0) return false;
  switch (dtype.code) {
    case HGR_DTYPE_INT:
    case HGR_DTYPE_UINT:
      return dtype.bits >= 1 && dtype.bits <= 64;
    case HGR_DTYPE_FLOAT:
      return dtype.bits == 16 || dtype.bits == 32 || dtype.bits == 64;
    case HGR_DTYPE_BFLOAT:
      return dtype.bits == 16;
    default:
      return false;
  }
}

/* Reads a decimal number of at most 5 digits (lanes go up to 65535); false when
 * there are no digits or too many. */
static bool parse_small_number(const char** cursor, unsigned* out_value) {
  const char* p = *cursor;
  unsigned value = 0;
  int digits = 0;
  while (*p >= '0' && *p <= '9') {
    if (++digits > 5) return false;
    value = value * 10 + (unsigned)(*p++ - '0');
  }
  if (digits == 0) return false;
  *cursor = p;
  *out_value = value;
  return true;
}

hgr_status_t hgr_dtype_parse(const char* text, hgr_dtype_t* out_dtype) {
  if (!text) return HGR_STATUS(HGR_STATUS_INVALID_ARGUMENT, "dtype string is NULL");
  if (strcmp(text, "bool") == 0) {
    *out_dtype = (hgr_dtype_t){HGR_DTYPE_UINT, 1, 1};
    return HGR_OK;
  }
  /* No prefix is a prefix of another, so the first match is the only one. TVM's other
   * codes (handle, void, custom[..], e4m3_float8, e5m2_float8) have no storage or
   * kernels here and are refused. */
  size_t match = SIZE_MAX, match_length = 0;
  for (size_t i = 0; i < sizeof(dtype_prefixes) / sizeof(dtype_prefixes[0]); ++i) {
    size_t length = strlen(dtype_prefixes[i].prefix);
    if (strncmp(text, dtype_prefixes[i].prefix, length) == 0) {
      match = i;
      match_length = length;
      break;
    }
  }
  const char* p = text + match_length;
  unsigned bits = 0, lanes = 1;
  bool ok = match != SIZE_MAX;
  if (ok) bits = dtype_prefixes[match].default_bits;
  if (ok && *p >= '0' && *p <= '9') ok = parse_small_number(&p, &bits) && bits <= 255;
  if (ok && *p == 'x') {
    ++p;
    ok = parse_small_number(&p, &lanes) && lanes <= 65535;
  }
  ok = ok && *p == '\0';
  hgr_dtype_t dtype = {0, 0, 0};
  if (ok) {
    dtype = (hgr_dtype_t){(uint8_t)dtype_prefixes[match].code, (uint8_t)bits, (uint16_t)lanes};
    ok = dtype_supported(dtype);
  }
  if (!ok)
    return HGR_STATUS(HGR_STATUS_INVALID_ARGUMENT,
                      "dtype '%s' is not supported (expected int1-64, uint1-64, float16/32/64 "
                      "or bfloat16, optionally followed by x<lanes>, or bool)",
                      text);
  *out_dtype = dtype;
  return HGR_OK;
}

hgr_status_t hgr_dtype_validate(hgr_dtype_t dtype) {
  if (dtype_supported(dtype)) return HGR_OK;
  char text[24];
  return HGR_STATUS(HGR_STATUS_INVALID_ARGUMENT,
                    "dtype %s (code %u, bits %u, lanes %u) is not supported",
                    hgr_dtype_format(dtype, text, sizeof(text)), (unsigned)dtype.code,
                    (unsigned)dtype.bits, (unsigned)dtype.lanes);
}

const char* hgr_dtype_format(hgr_dtype_t dtype, char* buffer, size_t capacity) {
  if (!buffer || capacity == 0) return buffer;
  const char* prefix = code_prefix(dtype.code);
  if (dtype.code == HGR_DTYPE_UINT && dtype.bits == 1 && dtype.lanes == 1)
    snprintf(buffer, capacity, "bool");
  else if (!prefix)
    snprintf(buffer, capacity, "invalid(%u:%ux%u)", (unsigned)dtype.code, (unsigned)dtype.bits,
             (unsigned)dtype.lanes);
  else if (dtype.lanes == 1)
    snprintf(buffer, capacity, "%s%u", prefix, (unsigned)dtype.bits);
  else
    snprintf(buffer, capacity, "%s%ux%u", prefix, (unsigned)dtype.bits, (unsigned)dtype.lanes);
  return buffer;
}

uint64_t hgr_dtype_element_bytes(hgr_dtype_t dtype) {
  return ((uint64_t)dtype.bits * dtype.lanes + 7) / 8;
}

int hgr_dtype_equal(hgr_dtype_t a, hgr_dtype_t b) {
  return a.code == b.code && a.bits == b.bits && a.lanes == b.lanes;
}

float hgr_float16_to_float32(uint16_t h) {
  uint32_t sign = (uint32_t)(h >> 15) << 31, exponent = (h >> 10) & 0x1f, mantissa = h & 0x3ff, bits;
  if (exponent == 0x1f) {
    bits = sign | 0x7f800000u | (mantissa << 13);
  } else if (exponent) {
    bits = sign | ((exponent + 112) << 23) | (mantissa << 13);
  } else if (mantissa) { /* subnormal: normalize */
    int shift = 0;
    while (!(mantissa & 0x400)) {
      mantissa <<= 1;
      ++shift;
    }
    bits = sign | ((uint32_t)(113 - shift) << 23) | ((mantissa & 0x3ff) << 13);
  } else {
    bits = sign;
  }
  float f;
  memcpy(&f, &bits, 4);
  return f;
}

float hgr_bfloat16_to_float32(uint16_t bits) {
  uint32_t wide = (uint32_t)bits << 16;
  float f;
  memcpy(&f, &wide, 4);
  return f;
}
