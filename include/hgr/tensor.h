/* hgr — data types and tensor descriptions.
 *
 * Data types follow DLPack and TVM: a type code (int, uint, float, bfloat), a bit
 * width and a lane count. They are written as TVM's dtype strings: "float32",
 * "int8", "uint1" (also "bool"), "bfloat16", "float16x4". A tensor info names an
 * input, output or entry with its dtype, shape and byte size.
 *
 * Thread safety: the functions are pure and reentrant; the structs are plain
 * values. */
#ifndef HGR_TENSOR_H_
#define HGR_TENSOR_H_

#include <stddef.h>
#include <stdint.h>

#include "hgr/export.h"
#include "hgr/status.h"

#ifdef __cplusplus
extern "C" {
#endif

/* DLDataTypeCode values. */
typedef enum hgr_dtype_code_t {
  HGR_DTYPE_INT = 0,
  HGR_DTYPE_UINT = 1,
  HGR_DTYPE_FLOAT = 2,
  HGR_DTYPE_BFLOAT = 4,
} hgr_dtype_code_t;

typedef struct hgr_dtype_t {
  uint8_t code;   /* hgr_dtype_code_t */
  uint8_t bits;   /* bits per lane */
  uint16_t lanes; /* >= 1 */
} hgr_dtype_t;

/* The most dimensions hgr accepts for a tensor. */
#define HGR_MAX_DIMS 16

/* Parses a TVM dtype string: int|uint|float|bfloat, optional bits (default 32; 16
 * for bfloat), optional x<lanes>; "bool" is uint1. Only what hgr_dtype_validate
 * accepts is returned; handle, void, custom[...] and the float8 codes are refused.
 * Errors: INVALID_ARGUMENT naming the text. */
HGR_API hgr_status_t hgr_dtype_parse(const char* text, hgr_dtype_t* out_dtype);

/* Checks that a dtype is one hgr can hold: int/uint of 1-64 bits, float of 16, 32 or
 * 64 bits, bfloat16, 1-65535 lanes. Binary formats (params, .npy) use it on the
 * fields they read. Errors: INVALID_ARGUMENT naming the dtype. */
HGR_API hgr_status_t hgr_dtype_validate(hgr_dtype_t dtype);

/* Writes the canonical string ("float32", "bool", "int8x4") into buffer; returns
 * buffer. capacity of 24 is always enough. */
HGR_API const char* hgr_dtype_format(hgr_dtype_t dtype, char* buffer, size_t capacity);

/* Bytes per element as TVM's storage planner counts them: ceil(bits * lanes / 8). */
HGR_API uint64_t hgr_dtype_element_bytes(hgr_dtype_t dtype);

/* True when the two dtypes are equal. */
HGR_API int hgr_dtype_equal(hgr_dtype_t a, hgr_dtype_t b);

/* The value of a float16 (IEEE binary16) or bfloat16 element, given as its bits:
 * exact in float32, subnormals, infinities and NaN included. */
HGR_API float hgr_float16_to_float32(uint16_t bits);
HGR_API float hgr_bfloat16_to_float32(uint16_t bits);

/* A description of a tensor: dtype and shape. shape is borrowed from whoever
 * returned the struct. */
typedef struct hgr_tensor_info_t {
  const char* name; /* input or output name; borrowed */
  hgr_dtype_t dtype;
  int32_t ndim;
  const int64_t* shape;
  uint64_t bytes; /* element bytes x element count */
} hgr_tensor_info_t;

#ifdef __cplusplus
}
#endif

#endif /* HGR_TENSOR_H_ */
