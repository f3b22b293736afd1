/* Whole files: reading one into memory under a size cap, and writing one
 * atomically, for the loaders of models, graphs, params and .npy files, and for the
 * program cache, the tuning records, kernel manifests and the cost cache.
 *
 * Every file hgr reads may come from a stranger (a model downloaded, a FIFO, a
 * device such as /dev/zero), so every read names its own cap: the most bytes that
 * kind of file may hold. The caps below are fixed; nothing sets them at run time
 * (the ONNX loader's is protobuf's 2 GiB limit, MAX_MODEL_BYTES in onnx_load.c). */
#ifndef HGR_FILE_H_
#define HGR_FILE_H_

#include <stddef.h>
#include <stdint.h>

#include "hgr/allocator.h"
#include "hgr/status.h"

/* TVM graph JSON (hgr_graph_load_file): a large model's graph is a few MiB. */
#define HGR__FILE_MAX_GRAPH_JSON_BYTES (256ull << 20)
/* TVM params (hgr_params_load_file): every weight of a model, held in memory. */
#define HGR__FILE_MAX_PARAMS_BYTES (16ull << 30)
/* .npy arrays (hgr_npy_load_file; hgr's --input, --expect): one tensor as large as
 * the ONNX loader takes (HGR_ONNX_DEFAULT_MAX_TENSOR_BYTES, 4 GiB) and its header
 * (at most 64 KiB in versions 1.0; more is refused as a corrupt file anyway). */
#define HGR__FILE_MAX_NPY_BYTES ((4ull << 30) + (64ull << 10))
/* ONNX TensorProto files (.pb, hgr's --input and --expect): protobuf's limit. */
#define HGR__FILE_MAX_TENSOR_PROTO_BYTES ((uint64_t)INT32_MAX)
/* One compiled program in the program cache (the driver's binary). */
#define HGR__FILE_MAX_PROGRAM_BLOB_BYTES (256ull << 20)
/* The tuning records (tuning.tsv): one short line per tuned layer and device. */
#define HGR__FILE_MAX_TUNE_RECORDS_BYTES (64ull << 20)
/* A kernel manifest (hgr_kernel_library_load_file): JSON naming the user's ops. */
#define HGR__FILE_MAX_KERNEL_MANIFEST_BYTES (16ull << 20)
/* A kernel source or binary a manifest names. */
#define HGR__FILE_MAX_KERNEL_PROGRAM_BYTES (256ull << 20)
/* The placement cost cache: one short line per measured op and device. */
#define HGR__FILE_MAX_COST_CACHE_BYTES (64ull << 20)

/* Reads the whole file at path into a new buffer from allocator (never NULL on success,
 * even for an empty file), opening it once. A regular file's size (fstat) is
 * checked against max_bytes before anything is allocated; a FIFO, pipe or device
 * is read until its end, failing as soon as more than max_bytes arrived, so that
 * /dev/zero fails after max_bytes, not at the end of memory. Errors: NOT_FOUND when
 * path does not exist; INVALID_ARGUMENT for a directory; RESOURCE_EXHAUSTED naming
 * the path, its size (or "more than") and max_bytes when it holds more, or when
 * host memory runs out; UNAVAILABLE for other failures, with the path and the
 * errno text. Thread-safe. */
hgr_status_t hgr__file_read(hgr_allocator_t allocator, const char* path, uint64_t max_bytes, void** out_data, size_t* out_length);

/* A whole file's bytes for a reader that only reads them (the ONNX model file, whose
 * weights protobuf-c copies out anyway): a regular file is mapped read-only, so that
 * no copy of the file is made on the host; a FIFO, pipe or device is read as
 * hgr__file_read reads it. The checks, the cap and the errors are hgr__file_read's;
 * data is never NULL on success, even for an empty file. A mapped file that another
 * process truncates while it is being read faults (SIGBUS), as with any mapping: the
 * file must stay as it is until hgr__file_unmap. */
typedef struct hgr__file_bytes_t {
  const void* data;
  size_t length;
  size_t mapped; /* bytes mapped at data; 0 when data was read into the allocator's memory */
} hgr__file_bytes_t;
hgr_status_t hgr__file_map(hgr_allocator_t allocator, const char* path, uint64_t max_bytes, hgr__file_bytes_t* out);
void hgr__file_unmap(hgr_allocator_t allocator, hgr__file_bytes_t* bytes);

/* Writes head then body (body may be NULL when body_length is 0) to
 * "<path>.tmp.<pid>", flushes it to disk and renames it over path, so a reader sees
 * the old file or the complete new one. Errors: UNAVAILABLE naming the path and the
 * errno text. */
hgr_status_t hgr__file_write_atomic(hgr_allocator_t allocator, const char* path, const void* head, size_t head_length,
                                    const void* body, size_t body_length);

#endif /* HGR_FILE_H_ */
