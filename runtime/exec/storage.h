/* The storage pool: per storage slot its owning device, its size (the largest entry
 * using it) and one cl_mem, allocated once per executor or borrowed from another
 * executor of the same graph for read-only params (share_params_from); the buffer
 * the kernels use (its own, or a caller's bound in its place), and the kernel
 * arguments that name it, set again when that buffer changes. Storages are indexed
 * by slot (graph_internal.h); messages name the graph's storage id. */
#ifndef HGR_STORAGE_H_
#define HGR_STORAGE_H_

#include "graph_internal.h"
#include "hgr/executor.h"
#include "internal.h"
#include "device_keys.h"

/* A kernel argument that names a storage. */
typedef struct hgr__storage_arg_t {
  cl_kernel kernel; /* borrowed from the step that owns it */
  cl_uint index;
} hgr__storage_arg_t;

typedef struct hgr__storage_t {
  bool used;           /* some entry refers to it */
  size_t device_index;
  uint64_t bytes;
  cl_mem mem;          /* what the kernels use: own_mem, or a caller's buffer bound to it */
  cl_mem own_mem;      /* the executor's allocation, or the source executor's (retained) */
  bool params;         /* holds a param: set by load_params and not since by set_input
                          or a binding, or borrowed (share_params_from) */
  bool shared;         /* lent to or borrowed from another executor: read-only */
  bool borrowed;       /* own_mem is the source executor's, not allocated here */
  uint32_t source_slot; /* when borrowed: the source's storage slot it is */
  hgr__storage_arg_t* args; /* the kernel arguments that name it */
  uint32_t arg_count, arg_capacity;
} hgr__storage_t;

typedef struct hgr__storage_pool_t {
  hgr_allocator_t allocator; /* the executor's: the table and its records (set before use) */
  hgr__storage_t* storages; /* per storage slot */
  uint32_t count;
} hgr__storage_pool_t;

/* What share_params_from offers: another executor's pool, graph and instance. */
typedef struct hgr__storage_source_t {
  const hgr__storage_pool_t* pool;
  const hgr_graph_t* graph;
  const hgr_instance_t* instance;
  /* share_param_names: when given, the graphs may differ and only inputs of these
   * names are shared, each with the source's input of the same name. */
  const char* const* names;
  size_t name_count;
} hgr__storage_source_t;

/* Owners and sizes of the storages, and per device (device_keys.h) what they take. With
 * source (may be NULL), first checks that it runs the same graph and chooses the
 * storages to borrow from it (log, when given, says what is shared and what not, and
 * why); those count as shared_bytes, not storage_bytes. */
hgr_status_t hgr__storage_plan(hgr__storage_pool_t* pool, const hgr_instance_t* instance, const hgr_graph_t* graph,
                               hgr__device_keys_t* device_keys, const hgr__storage_source_t* source, hgr_log_fn log,
                               void* log_user);
/* Whether some storage is borrowed: the source's writes into it must have completed
 * before hgr__storage_allocate. */
bool hgr__storage_borrows(const hgr__storage_pool_t* pool);
/* One cl_mem per used storage: the source's, retained, for a borrowed one, else a
 * new one. */
hgr_status_t hgr__storage_allocate(hgr__storage_pool_t* pool, hgr_instance_t* instance, const hgr_graph_t* graph,
                                   const hgr__storage_pool_t* source);
/* Once the executor is complete: its borrowed storages become read-only in the
 * source too. */
void hgr__storage_lend(const hgr__storage_pool_t* pool, hgr__storage_pool_t* source);
void hgr__storage_release(hgr__storage_pool_t* pool);

/* Notes that argument index of kernel names storage (set again by hgr__storage_use). */
hgr_status_t hgr__storage_add_arg(hgr__storage_pool_t* pool, uint32_t storage, cl_kernel kernel, cl_uint index);
/* Forgets every kernel argument (their kernels are about to be released). */
void hgr__storage_clear_args(hgr__storage_pool_t* pool);
/* Makes storage's kernels use mem (its own buffer or a bound one). */
hgr_status_t hgr__storage_use(hgr__storage_pool_t* pool, const hgr_graph_t* graph, uint32_t storage, cl_mem mem);

#endif /* HGR_STORAGE_H_ */
