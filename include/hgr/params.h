/* hgr — TVM params files.
 *
 * A params file is TVM's save_param_dict format (little-endian): list magic, a
 * reserved word, names, then one tensor record per name (tensor magic, device,
 * ndim, dtype, shape, byte size, data). hgr reads and writes it exactly. An
 * hgr_params_t is an ordered list of named host tensors.
 *
 * Thread safety: thread-compatible; a params object that is no longer modified may
 * be read from several threads. */
#ifndef HGR_PARAMS_H_
#define HGR_PARAMS_H_

#include <stddef.h>
#include <stdint.h>

#include "hgr/export.h"
#include "hgr/status.h"
#include "hgr/tensor.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct hgr_params_s hgr_params_t;

/* Creates an empty params list. */
HGR_API hgr_status_t hgr_params_create(hgr_params_t** out_params);

/* Parses a params blob. Truncated or corrupt input (bad magic, tensor count other
 * than the name count, a device type other than CPU, a byte size that does not
 * match the shape, trailing bytes) is DATA_LOSS naming the byte offset and the
 * param; never reads past length. A dtype hgr cannot hold, a vector dtype or more
 * than HGR_MAX_DIMS dimensions is INVALID_ARGUMENT, as are two params with one
 * name. Tensor data is compact and little-endian in the blob, and in the host's
 * byte order in memory (hgr_params_get, hgr_params_add); saving writes it
 * little-endian again, on any host. */
HGR_API hgr_status_t hgr_params_load_memory(const void* data, size_t length,
                                            hgr_params_t** out_params);
/* Reads and parses a params file; errors name the path. */
HGR_API hgr_status_t hgr_params_load_file(const char* path, hgr_params_t** out_params);

HGR_API void hgr_params_release(hgr_params_t* params);

/* Appends a copy of a tensor (shape may be NULL when ndim is 0). Errors:
 * INVALID_ARGUMENT for a duplicate name, a byte size that does not match dtype and
 * shape (elements x ceil(bits / 8), as TVM counts them), or a vector dtype, which
 * the format cannot store (it drops the lanes). */
HGR_API hgr_status_t hgr_params_add(hgr_params_t* params, const char* name, hgr_dtype_t dtype,
                                    int32_t ndim, const int64_t* shape, const void* data,
                                    size_t bytes);

HGR_API size_t hgr_params_count(const hgr_params_t* params);
/* Param i: info (name, dtype, shape, bytes) and a borrowed pointer to its data. */
HGR_API hgr_status_t hgr_params_get(const hgr_params_t* params, size_t i,
                                    hgr_tensor_info_t* out_info, const void** out_data);
/* Index of the param called name, or NOT_FOUND. */
HGR_API hgr_status_t hgr_params_find(const hgr_params_t* params, const char* name,
                                     size_t* out_index);

/* Serializes into a new malloc'd buffer the caller frees with free(). */
HGR_API hgr_status_t hgr_params_save_memory(const hgr_params_t* params, void** out_data,
                                            size_t* out_length);
/* Serializes to a file (written to a temporary name, then renamed). */
HGR_API hgr_status_t hgr_params_save_file(const hgr_params_t* params, const char* path);

#ifdef __cplusplus
}
#endif

#endif /* HGR_PARAMS_H_ */
