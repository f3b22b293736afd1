/* hgr — portable heterogeneous graph runtime on OpenCL. The umbrella header.
 *
 * Ownership rules, once for the whole API:
 * - A function named *_create or *_load_* returns an object the caller owns. It sets
 *   *out to NULL first and writes it only on success; on failure nothing is leaked.
 *   Owned objects are given back with *_release (NULL is a no-op).
 * - Accessors return borrowed pointers, valid as long as the object they came from.
 * - A function that keeps an argument beyond the call retains it and says so.
 * - Every fallible function returns hgr_status_t; HGR_OK (zero) is success, any
 *   other status is owned by the caller and freed with hgr_status_free.
 *
 * Thread safety is stated in each header: the instance is thread-safe, a loaded
 * graph and a kernel library are immutable and may be shared, an executor is
 * thread-compatible (one thread at a time), and its fences and profile getters
 * count as calls on it; statuses and params are used by one thread at a time.
 *
 * The headers, one concept each: status.h (errors), allocator.h (where host memory
 * comes from), tensor.h (dtypes), device.h
 * (the instance and its devices), graph.h (a loaded graph), params.h (TVM params
 * files), npy.h (.npy files, where the build has them), kernels.h (the user's
 * kernels), executor.h (running a graph), fence.h (one run as an object),
 * profile.h (placement, memory, the last run's profile and its reports),
 * builder.h (building a graph in C), passes.h (fusing a graph's nodes), place.h
 * (placing a graph on the devices), onnx.h (ONNX models), model.h (a model run at
 * any input shape). Not
 * included here: opencl.h (the caller's own OpenCL objects), which needs the
 * OpenCL headers. */
#ifndef HGR_HGR_H_
#define HGR_HGR_H_

#include "hgr/config.h"
#include "hgr/allocator.h"
#include "hgr/export.h"
#include "hgr/status.h"
#include "hgr/tensor.h"
#include "hgr/device.h"
#include "hgr/graph.h"
#include "hgr/params.h"
#if HGR_HAS_NPY
#include "hgr/npy.h"
#endif
#include "hgr/kernels.h"
#include "hgr/transport.h"
#include "hgr/executor.h"
#include "hgr/fence.h"
#include "hgr/profile.h"
#include "hgr/builder.h"
#include "hgr/passes.h"
#include "hgr/place.h"
#include "hgr/tune.h"
#if HGR_HAS_ONNX
#include "hgr/onnx.h"
#endif
#include "hgr/model.h"

#define HGR_VERSION_MAJOR 0
#define HGR_VERSION_MINOR 1
#define HGR_VERSION_PATCH 0

#endif /* HGR_HGR_H_ */
