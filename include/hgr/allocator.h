/* hgr — the host allocator.
 *
 * Host memory an instance's objects hold (loaded models, graphs, placements, plans,
 * executors, their tables and texts) comes from the allocator in
 * hgr_instance_options_t; objects made from an instance (hgr_model_*,
 * hgr_executor_create, hgr_onnx_load_* with an instance) use its allocator, and
 * objects made without one (hgr_graph_load_json, hgr_builder_create, hgr_params_*,
 * hgr_onnx_load_* with a NULL instance) use the system allocator. Embedders on small
 * devices bring their own; a zero value ({NULL, NULL}) is the system allocator
 * (malloc, realloc, free).
 *
 * Not from it: statuses (hgr_status_free frees them), memory the API hands the caller
 * to free() (each such function says so), the memory of the libraries hgr calls that
 * have only process-wide hooks (cJSON, used for TVM graph JSON and records files),
 * the few bytes a wait for a run gives the event callbacks that wake it (which a
 * driver thread may free after the wait and the executor are gone), and the OpenCL
 * driver's own memory.
 *
 * When an allocation fails, the call that needed it returns RESOURCE_EXHAUSTED and
 * leaves nothing allocated behind it. */
#ifndef HGR_ALLOCATOR_H_
#define HGR_ALLOCATOR_H_

#include <stddef.h>

#include "hgr/export.h"

#ifdef __cplusplus
extern "C" {
#endif

/* One function does everything (as Lua's lua_Alloc):
 *   fn(self, NULL, bytes)   allocates bytes (> 0), aligned for any type; NULL when it cannot;
 *   fn(self, block, bytes)  resizes block to bytes (> 0), keeping its contents up to the
 *                           smaller size; NULL when it cannot, leaving block as it was;
 *   fn(self, block, 0)      frees block (never NULL) and returns NULL.
 * It is called from every thread that uses an object made with it, and from OpenCL
 * driver threads that finish a run, so it must be thread-safe. */
typedef void* (*hgr_allocator_fn_t)(void* self, void* block, size_t bytes);

typedef struct hgr_allocator_t {
  void* self;            /* passed to fn unchanged */
  hgr_allocator_fn_t fn; /* NULL: the system allocator */
} hgr_allocator_t;

/* The system allocator: {NULL, NULL}. */
HGR_API hgr_allocator_t hgr_allocator_system(void);

#ifdef __cplusplus
}
#endif

#endif /* HGR_ALLOCATOR_H_ */
