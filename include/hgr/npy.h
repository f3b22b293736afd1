/* hgr — NumPy .npy files (format versions 1.0, 2.0 and 3.0), as used by the `hgr`
 * command line and the tests. Reads C-order arrays of bool, int8-64, uint8-64,
 * float16/32/64 in either byte order ('<' or '>'), keeping their data in the host's
 * byte order; writes version 1.0, little-endian ('<') on any host.
 *
 * Thread safety: the functions are reentrant. */
#ifndef HGR_NPY_H_
#define HGR_NPY_H_

#include <stddef.h>
#include <stdint.h>

#include "hgr/export.h"
#include "hgr/status.h"
#include "hgr/tensor.h"

#ifdef __cplusplus
extern "C" {
#endif

/* An array read from a .npy file; owns its shape and data. */
typedef struct hgr_npy_array_t {
  hgr_dtype_t dtype;
  int32_t ndim;
  int64_t shape[HGR_MAX_DIMS];
  void* data;      /* malloc'd; freed by hgr_npy_array_free */
  uint64_t bytes;  /* size of data */
} hgr_npy_array_t;

/* Parses a .npy blob. *out_array is zeroed first, so it may be passed to
 * hgr_npy_array_free whether or not the call succeeds. bool arrays come back as
 * uint1, one byte per element. Errors: INVALID_ARGUMENT for an unsupported dtype,
 * Fortran order or an unknown format version; DATA_LOSS for a
 * truncated or corrupt header or body (including bytes after the data). Never
 * reads past length. */
HGR_API hgr_status_t hgr_npy_load_memory(const void* data, size_t length, hgr_npy_array_t* out_array);
HGR_API hgr_status_t hgr_npy_load_file(const char* path, hgr_npy_array_t* out_array);
HGR_API void hgr_npy_array_free(hgr_npy_array_t* array);

/* Writes a C-order array as .npy version 1.0, its header padded so that the data
 * starts at a multiple of 64 bytes (temporary file, then rename). shape may be
 * NULL when ndim is 0. Errors: INVALID_ARGUMENT for a dtype .npy cannot express
 * (bfloat16, vectors, sub-byte ints other than bool) or bytes that do not match
 * dtype and shape; UNAVAILABLE when the file cannot be written. */
HGR_API hgr_status_t hgr_npy_save_file(const char* path, hgr_dtype_t dtype, int32_t ndim,
                                       const int64_t* shape, const void* data, uint64_t bytes);

#ifdef __cplusplus
}
#endif

#endif /* HGR_NPY_H_ */
