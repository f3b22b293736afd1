/* hgr — graph passes: rewrites of a graph before placement, whatever made it (TVM
 * graph JSON, the builder, the ONNX loader, which runs them itself).
 *
 * Each pass takes a graph (and its params) and gives a graph that computes the same
 * outputs with fewer nodes; hgr_passes_apply runs the ones switched on, in this
 * order, and counts what each did:
 *   1. attention: the attention block (batch_matmul of queries and keys, a scalar
 *      scale, an additive mask, softmax over the keys, batch_matmul with the
 *      values, reshapes between) becomes one attention node, whose kernel never
 *      stores the scores (docs/ops.md, attention);
 *   2. conv epilogue: a conv2d followed by per-channel multiply and add of constant
 *      params and then relu, clip or leaky_relu becomes one conv2d with that
 *      epilogue (a multiply scales the weights and bias, an add shifts the bias;
 *      docs/ops.md, conv2d); without params only the activation joins; a max pool
 *      after it whose windows tile the value joins too, where one kernel runs the
 *      convolution and the pool (conv2d's attr pool_size);
 *   3. elementwise: chains of float32 elementwise nodes become fused_elementwise
 *      nodes, one generated kernel each (docs/onnx.md, "Elementwise fusion").
 * A value used outside a chain, or that is a graph output, is never fused away.
 * Inputs keep their order and names, outputs their order and names.
 *
 * Thread safety: hgr_passes_apply may run on several threads at once for distinct
 * params (the graph is only read). */
#ifndef HGR_PASSES_H_
#define HGR_PASSES_H_

#include <stdbool.h>
#include <stdint.h>

#include "hgr/export.h"
#include "hgr/graph.h"
#include "hgr/params.h"
#include "hgr/status.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Which passes run; hgr_passes_options_init switches every pass on. */
typedef struct hgr_passes_options_t {
  bool attention;
  bool conv_epilogue;
  bool elementwise;
} hgr_passes_options_t;

HGR_API void hgr_passes_options_init(hgr_passes_options_t* options);

/* What the passes did. */
typedef struct hgr_passes_report_t {
  uint32_t attentions;          /* attention nodes made */
  uint32_t attention_fused;     /* batch_matmul, reshape, scale, mask, softmax nodes they replaced */
  uint32_t conv_epilogues;      /* conv2d nodes that took an epilogue */
  uint32_t conv_epilogue_fused; /* multiply, add, activation and max pool nodes they took in */
  uint32_t elementwise_groups;  /* fused_elementwise nodes made */
  uint32_t elementwise_fused;   /* elementwise nodes they replaced */
  bool placed;                  /* the graph carries a placement: no pass ran */
} hgr_passes_report_t;

/* Runs the passes options switches on (NULL: all) over graph and sets *out_graph to
 * the result: a new graph the caller owns, or graph itself, retained, when no pass
 * changed anything. params (may be NULL) holds the graph's constants, by input
 * name: a pass that folds constants reads them and edits params to go with
 * *out_graph: the params it makes (named after the node, "conv1.bias") are
 * appended, and those no node of *out_graph reads any more are removed. On failure
 * params is unchanged. The passes run before placement: a graph that carries one
 * (device keys or __copy nodes, as TVM or `hgr place` wrote it) is given back as it
 * is, with report.placed set. out_report may be NULL. Errors: INVALID_ARGUMENT for
 * NULL graph or out_graph; RESOURCE_EXHAUSTED; INTERNAL when a rewritten node fails
 * its op's inference (a bug). */
HGR_API hgr_status_t hgr_passes_apply(const hgr_graph_t* graph, hgr_params_t* params,
                                      const hgr_passes_options_t* options, hgr_graph_t** out_graph,
                                      hgr_passes_report_t* out_report);

#ifdef __cplusplus
}
#endif

#endif /* HGR_PASSES_H_ */
