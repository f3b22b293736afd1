/* Elementwise fusion: a pass over a built graph that replaces each chain of float32
 * elementwise nodes by one fused_elementwise node (ops_fused.c), whose generated
 * kernel computes the whole chain in one launch, reading each input once and
 * writing only the chain's result.
 *
 * A group is a maximal connected set of fusable nodes (hgr__fusable_op: float32
 * inputs and output, one output, attrs it can write as literals; and batch_norm
 * with one output, written as (x - mean) / sqrt(var + epsilon) * gamma + beta with
 * its [C] parameters placed along its axis, attr "axes") with one value
 * leaving it: every other member's output is consumed only by members and is no
 * graph output. Groups are grown from their last node backwards; a group of two or
 * more nodes, with at most HGR__FUSED_MAX_INPUTS distinct inputs, becomes one node
 * at its last node's place, named like it. Its inputs are what the members read
 * from outside; each broadcasts to the output (NumPy rules), as the members' own
 * inputs did. Pure: no device, no OpenCL. */
#ifndef HGR_FUSE_H_
#define HGR_FUSE_H_

#include "graph_internal.h"
#include "internal.h"

typedef struct hgr__fuse_report_t {
  uint32_t groups;       /* fused_elementwise nodes made */
  uint32_t fused_nodes;  /* nodes they replaced */
} hgr__fuse_report_t;

/* Fuses graph's elementwise chains into *out_graph (a new graph, validated, each
 * entry its own storage id as the builder gives; or graph itself, retained, when
 * nothing fuses). Inputs keep their order and names, outputs their order, every
 * other node its name, op, attrs and inputs. graph must not be placed yet:
 * FAILED_PRECONDITION when it has device keys or __copy nodes. RESOURCE_EXHAUSTED;
 * INTERNAL when a fused node fails its op's inference (a bug). out_report may be
 * NULL. */
hgr_status_t hgr__fuse_elementwise(const hgr_graph_t* graph, hgr_graph_t** out_graph, hgr__fuse_report_t* out_report);

#endif /* HGR_FUSE_H_ */
