/* hgr — the user's own kernels: a kernel library declared by a JSON manifest.
 *
 * A manifest declares ops that graphs may use as func_name beside the built-in ones
 * (README.md, "User kernels", documents the format):
 *
 *   {"ops": [{
 *      "func_name": "scale_add",            the node's func_name (not a built-in one)
 *      "kernel": "scale_add",               the entry point
 *      "source": "scale_add.cl",            OpenCL C, relative to the manifest; and/or
 *      "binaries": [{"device": "pocl", "file": "scale_add.pocl.bin"}],
 *                                           per device: a spec ("pocl:1") or a platform
 *                                           short name ("pocl"); a binary wins over the
 *                                           source for the devices it names
 *      "build_options": "-DSCALE=2",        optional
 *      "inputs": 2, "outputs": 1,           how many the node must have
 *      "args": ["input 0", "input 1", "output 0", "elements output 0", "attr alpha float"],
 *      "ndrange": "elements",               or "attrs"
 *      "in_place": "elementwise",           optional; "never" (the default) or
 *                                           "elementwise" (below)
 *      "shapes": ["input 0"]                optional; per output, the input whose
 *                                           dtype and shape it has (below)
 *   }]}
 *
 * Arguments, in kernel order: "input N" / "output N" (the buffer), "elements input N"
 * / "elements output N" (uint: element count), "dim input N D" / "dim output N D"
 * (int: size of dimension D, negative from the end), "attr NAME int|uint|float"
 * (the node attr NAME, required). NDRange: "elements" is one work-item per element
 * of output 0 in 1-D work-groups the device allows (the kernel must check its
 * bounds); "attrs" takes the node attrs global_size (a list of 1 to 3 ints) and
 * local_size (optional, same length; each multiple-checked against the device).
 * Shapes: with "shapes" (one "input N" per output), output k has input N's dtype
 * and shape: hgr infers it (the graph builder needs it) and refuses a graph whose
 * output entry says otherwise, naming the node, the output and both shapes. Without
 * it, dtypes and shapes are the kernel's business: hgr checks only counts and
 * sizes it computes with, and inferring the op's outputs (the builder) fails with
 * INVALID_ARGUMENT naming the op and the missing "shapes" key.
 *
 * In place: a node whose output shares an input's storage id (TVM's in-place ops)
 * is refused unless the op declares "in_place": "elementwise", a promise that the
 * kernel runs one launch in which work-item i reads only element i of each input
 * of the output's element count (other inputs anywhere) and writes only element i
 * of each output. Even then an output may share only an input of its own element
 * count and element size; anything else is refused with INVALID_ARGUMENT naming
 * the node, the entries and the storage id.
 *
 * Thread safety: a library is immutable once loaded and may be shared by executors
 * on any threads; its reference count is atomic. */
#ifndef HGR_KERNELS_H_
#define HGR_KERNELS_H_

#include "hgr/export.h"
#include "hgr/status.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct hgr_kernel_library_s hgr_kernel_library_t;

/* Loads a manifest and the files it names (sources and binaries are read now).
 * Errors: NOT_FOUND / UNAVAILABLE for files, INVALID_ARGUMENT naming the op and
 * the field for anything malformed (unknown keys included), or a func_name that a
 * built-in op or an earlier entry already has. */
HGR_API hgr_status_t hgr_kernel_library_load_file(const char* manifest_path, hgr_kernel_library_t** out_library);

/* Reference counting; release(NULL) is a no-op. */
HGR_API hgr_kernel_library_t* hgr_kernel_library_retain(hgr_kernel_library_t* library);
HGR_API void hgr_kernel_library_release(hgr_kernel_library_t* library);

/* The ops it declares. */
HGR_API size_t hgr_kernel_library_op_count(const hgr_kernel_library_t* library);
HGR_API const char* hgr_kernel_library_op_name(const hgr_kernel_library_t* library, size_t i);

#ifdef __cplusplus
}
#endif

#endif /* HGR_KERNELS_H_ */
