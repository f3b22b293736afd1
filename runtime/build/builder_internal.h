/* What the loaders built on the builder (hgr/builder.h) use beyond the public API,
 * before hgr_builder_finish makes the graph immutable. */
#ifndef HGR_BUILDER_INTERNAL_H_
#define HGR_BUILDER_INTERNAL_H_

#include <stdbool.h>
#include <stdint.h>

#include "hgr/allocator.h"
#include "hgr/builder.h"

/* hgr_builder_create with the memory of the builder, its graph and its params from
 * allocator (hgr_builder_create: the system's). */
hgr_status_t hgr__builder_create_in(hgr_allocator_t allocator, hgr_kernel_library_t* kernels,
                                    hgr_builder_t** out_builder);

/* The name of node node_id, and whether it is an op; NULL for no such node. */
const char* hgr__builder_node_name(const hgr_builder_t* builder, uint32_t node_id, bool* out_is_op);
/* Whether a node of the builder is called name. */
bool hgr__builder_has_name(const hgr_builder_t* builder, const char* name);
/* Renames node node_id (a copy of name): INVALID_ARGUMENT for a name another node
 * has, FAILED_PRECONDITION after finish; RESOURCE_EXHAUSTED. Linear in the nodes. */
hgr_status_t hgr__builder_rename(hgr_builder_t* builder, uint32_t node_id, const char* name);

#endif /* HGR_BUILDER_INTERNAL_H_ */
