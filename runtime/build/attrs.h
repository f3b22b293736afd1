/* A node's attrs as the builder collects them (hgr/builder.h, hgr_attrs_t): the
 * key/value strings graph_edit.c copies into a node. */
#ifndef HGR_BUILD_ATTRS_H_
#define HGR_BUILD_ATTRS_H_

#include <stdint.h>

#include "graph_internal.h"
#include "hgr/builder.h"

/* hgr_attrs_create with the attrs' memory from allocator (hgr_attrs_create: the
 * system's). */
hgr_status_t hgr__attrs_create_in(hgr_allocator_t allocator, hgr_attrs_t** out_attrs);

/* The attrs in the order they were first set; *out_count of them. attrs may be
 * NULL (then none). Borrowed: valid until the attrs change or are released. */
const hgr__attr_t* hgr__attrs_entries(const hgr_attrs_t* attrs, uint32_t* out_count);

#endif /* HGR_BUILD_ATTRS_H_ */
