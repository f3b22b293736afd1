/* hgr — graph passes: rewrites of a graph before placement, whatever made it (TVM
 * graph JSON, the builder, the ONNX loader, which runs them itself).
 *
 * Each pass takes a graph (and its params) and gives a graph that computes the same
 * outputs with fewer nodes; hgr_passes_apply runs the ones switched on, in this
 * order, and counts what each did:
 *   1. patterns written out op by op, each becoming the one op that computes it
 *      (fuse_patterns.c): layer normalization as torch.onnx (opset <= 16) and
 *      tf2onnx write it, mean -> subtract -> power 2 (or a multiply by itself) ->
 *      mean -> add epsilon -> sqrt -> divide (or reciprocal or rsqrt and a
 *      multiply), then optionally a multiply by gamma and an add of beta, both
 *      reductions over the last axis only -> layer_norm; GELU written out,
 *      x * 0.5 * (1 + erf(x / sqrt(2))) in its usual orderings -> gelu, and
 *      0.5 * x * (1 + tanh(sqrt(2 / pi) * (x + 0.044715 * x^3))) -> gelu_tanh.
 *      Their constants (epsilon, 2, 0.5, 1, sqrt(2), ...) must be scalar params,
 *      compared with a relative tolerance of 1e-4; without params nothing matches.
 *      Whether a pattern matches depends on the graph's structure, attrs and
 *      constants, never on extents, so that every shape of a model fuses the same
 *      nodes;
 *   2. attention: the attention block (batch_matmul of queries and keys, a scalar
 *      scale, a causal where, an additive mask, softmax over the keys,
 *      batch_matmul with the values, reshapes between) becomes one attention
 *      node, whose kernel never stores the scores (docs/ops.md, attention);
 *   3. conv epilogue: a conv2d followed by per-channel multiply and add of constant
 *      params and then relu, clip or leaky_relu becomes one conv2d with that
 *      epilogue (a multiply scales the weights and bias, an add shifts the bias;
 *      docs/ops.md, conv2d); without params only the activation joins; a max pool
 *      after it whose windows tile the value joins too, where one kernel runs the
 *      convolution and the pool (conv2d's attr pool_size);
 *   4. GEMM epilogue: a dense, matmul or batch_matmul, then the add of a float32
 *      param [N] and relu, leaky_relu, clip, gelu or gelu_tanh, becomes one GEMM
 *      with that epilogue (docs/ops.md, dense);
 *   5. GEMM weight packing: a matmul whose weights are a float32 param [K, N] with
 *      N >= 64 reads them as a new param in panels of 32 columns, [ceil(N / 32),
 *      K, 32] (matmul's attr b_panel; docs/ops.md, matmul), each column strip of
 *      the GEMM kernels then one contiguous run of memory per step of K; the
 *      param leaves when nothing else reads it;
 *   6. output layouts: a reshape and a transpose (or two) after a dense, matmul,
 *      batch_matmul or attention become its attrs out_shape and out_axes, its
 *      kernel storing the result where the transpose would have put it (the heads
 *      of a transformer split after their projections and joined after attention;
 *      docs/ops.md, matmul);
 *   7. skip layer norms: the add of two values of one shape that a layer_norm reads
 *      becomes the layer_norm's skip input (a transformer's residual, as ONNX
 *      Runtime's SkipLayerNormalization; docs/ops.md, layer_norm); where the sum is
 *      read again after the layer_norm, or is a graph output, the layer_norm also
 *      gives it, as its output 1 (a pre-norm transformer's residual stream);
 *   8. elementwise: chains of float32 elementwise nodes become fused_elementwise
 *      nodes, one generated kernel each (docs/onnx.md, "Elementwise fusion"); a
 *      gelu the patterns made joins its neighbours there.
 * A value used outside a chain, or that is a graph output, is never fused away
 * (the skip layer norm's sum is kept as an output).
 * Inputs keep their order and names, outputs their order and names.
 *
 * Thread safety: hgr_passes_apply may run on several threads at once for distinct
 * params (the graph is only read). */
#ifndef HGR_PASSES_H_
#define HGR_PASSES_H_

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "hgr/export.h"
#include "hgr/graph.h"
#include "hgr/params.h"
#include "hgr/status.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Receives one line per fused node: what it became and which nodes it replaced,
 * by name ("layer_norm 'ln/Add_1' <- 10 nodes: 'ln/ReduceMean', ..."), on the
 * thread that runs the passes; the line is valid during the call only. */
typedef void (*hgr_passes_log_fn)(void* user, const char* message);

/* Which passes run; hgr_passes_options_init switches every pass on and sets no log. */
typedef struct hgr_passes_options_t {
  bool layer_norm; /* written-out layer normalization -> layer_norm */
  bool gelu;       /* written-out GELU (erf and tanh forms) -> gelu, gelu_tanh */
  bool attention;  /* the attention block -> attention */
  bool conv_epilogue;
  bool gemm_epilogue; /* dense/matmul/batch_matmul, then a bias add and an activation -> one GEMM */
  bool gemm_pack;     /* matmul's constant weights -> panels of 32 columns (attr b_panel) */
  bool out_layout;    /* a GEMM's or attention's reshape and transpose -> its output layout */
  bool sibling_gemms; /* matmuls of one input and packed weights (q, k and v) -> one matmul of their outputs */
  bool skip_layer_norm; /* a residual add before a layer_norm -> the layer_norm's skip input */
  bool elementwise;
  hgr_passes_log_fn log; /* may be NULL */
  void* log_user;
} hgr_passes_options_t;

HGR_API void hgr_passes_options_init(hgr_passes_options_t* options);

/* What the passes did. hgr_passes_report_counts lists the counts by pattern. */
typedef struct hgr_passes_report_t {
  uint32_t layer_norms;         /* layer_norm nodes made */
  uint32_t layer_norm_fused;    /* nodes they replaced */
  uint32_t gelus;               /* gelu and gelu_tanh nodes made */
  uint32_t gelu_fused;          /* nodes they replaced */
  uint32_t attentions;          /* attention nodes made */
  uint32_t attention_fused;     /* batch_matmul, reshape, scale, where, mask, softmax nodes they replaced */
  uint32_t conv_epilogues;      /* conv2d nodes that took an epilogue */
  uint32_t conv_epilogue_fused; /* multiply, add, activation and max pool nodes they took in */
  uint32_t gemm_epilogues;      /* dense, matmul and batch_matmul nodes that took an epilogue */
  uint32_t gemm_epilogue_fused; /* add and activation nodes they took in */
  uint32_t packed_weights;      /* params made of matmul weights in panels */
  uint32_t packed_weight_readers; /* matmul nodes that read them */
  uint32_t out_layouts;         /* GEMM and attention nodes that took a transpose as their output layout */
  uint32_t out_layout_fused;    /* reshape and transpose nodes they took in */
  uint32_t sibling_gemms;       /* matmul nodes made of sibling matmuls */
  uint32_t sibling_gemm_fused;  /* matmul nodes they replaced */
  uint32_t skip_layer_norms;    /* layer_norm nodes that took a residual add as their skip input */
  uint32_t skip_layer_norm_fused; /* add nodes they took in */
  uint32_t elementwise_groups;  /* fused_elementwise nodes made */
  uint32_t elementwise_fused;   /* elementwise nodes they replaced */
  bool placed;                  /* the graph carries a placement: no pass ran */
} hgr_passes_report_t;

/* One fused pattern's counts in a report: key (snake case, as the Python report
 * dicts name it: "layer_norms"), label (for people: "layer norms"), the nodes made
 * and the nodes they replaced. */
typedef struct hgr_passes_count_t {
  const char* key;
  const char* label;
  uint32_t made;
  uint32_t replaced;
} hgr_passes_count_t;

/* The number of patterns a report counts (HGR_PASSES_COUNT_MAX at most). */
#define HGR_PASSES_COUNT_MAX 12

/* Fills out_counts (room for HGR_PASSES_COUNT_MAX) with report's counts, one per
 * pattern in pipeline order (layer norms, GELUs, attentions, conv epilogues, GEMM
 * epilogues, packed GEMM weights, output layouts, sibling GEMMs, skip layer norms,
 * elementwise groups), and returns how many it
 * wrote; the strings are static. */
HGR_API size_t hgr_passes_report_counts(const hgr_passes_report_t* report, hgr_passes_count_t* out_counts);

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
