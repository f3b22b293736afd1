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
 * graph is immutable and may be shared, an executor is thread-compatible (one
 * thread at a time). */
#ifndef HGR_HGR_H_
#define HGR_HGR_H_

#include "hgr/config.h"
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
#include "hgr/executor.h"

#define HGR_VERSION_MAJOR 0
#define HGR_VERSION_MINOR 1
#define HGR_VERSION_PATCH 0

#endif /* HGR_HGR_H_ */
