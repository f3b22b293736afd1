/* Graph passes: each a graph (and its params) in, a graph (and its params) out, run
 * on every graph alike, whatever made it (the ONNX loader, TVM graph JSON, the
 * builder), before placement. The pipeline (passes.c, hgr_passes_apply in
 * hgr/passes.h) runs them in this order, each switchable and counted:
 *
 * Pattern fusion (fuse_patterns.c): subgraphs exporters write out op by op become
 * the one op that computes them, each pattern a matcher in its table, switched and
 * counted on its own (hgr__pattern_t): layer normalization (mean, subtract, power 2
 * or a multiply by itself, mean, add epsilon, sqrt, divide or reciprocal/rsqrt and
 * multiply, then a multiply by gamma and an add of beta, [len] vectors, one of them
 * at least; both means over the last axis only, keeping it) -> layer_norm; GELU
 * (x * 0.5 * (1 + erf(x / sqrt(2))) and 0.5 * x * (1 + tanh(sqrt(2 / pi) * (x +
 * 0.044715 * x^3))), the multiplies grouped and ordered any way) -> gelu,
 * gelu_tanh. A pattern is matched from its last node backwards; its constants are
 * scalar params compared with a relative tolerance of 1e-4; every member but the
 * last must be read by members only and be no graph output. Before the others, so
 * that elementwise fusion joins a gelu with its neighbours, and a matmul's or
 * conv's bias add stays the pattern's input.
 *
 * Conv epilogue fusion (conv_epilogue.c): a conv2d followed by per-channel multiply
 * and add of constant params ([C, 1, ...] or [1, C, 1, ...] along the output's
 * channel dim) and then a relu, clip, leaky_relu, sigmoid, hard_swish or a SiLU written
 * out (a sigmoid and the multiply of its input by it, as silu; a leaky_relu with a
 * clamp after it, a clip or a maximum or minimum with a float32 param of one value, as
 * leaky_relu_clip) becomes one conv2d with that epilogue (ops_conv.c: bias input,
 * attr "activation"): a multiply scales the
 * conv's weights and bias (only when its weights are a float32 param), an add
 * shifts the bias; both fold into new params, and the params only the fused nodes
 * read leave the graph and the params. A value inside the chain must have one
 * consumer (a SiLU's input its two) and be no graph output. Between the conv2d and the chain may stand one
 * reshape that keeps the batch and channel dims (a 1-D convolution is a conv2d of
 * height 1 and a reshape): the chain then moves before it. After the chain (or the
 * conv2d alone) a max_pool2d whose windows tile its input (window = stride, no
 * padding or dilation: hgr__max_pool2d_tiles) joins as the conv2d's attr pool_size
 * where one register-blocked kernel runs both (hgr__conv2d_pools_in_registers: a
 * condition on attrs, so that every shape of a model fuses the same nodes; the
 * convolution's outputs are then never stored), and not after a reshape. Without params (or with
 * a conv whose weights or bias are no params) only the activation joins.
 *
 * GEMM epilogue fusion (fuse_gemm_epilogue.c): a dense, matmul or batch_matmul
 * followed by the add of a float32 param [N] (N its output's last axis, either
 * input order, only when the GEMM has no bias) and then a relu, leaky_relu, clip,
 * sigmoid, hard_swish, a written-out SiLU, gelu or gelu_tanh (at least one of the two)
 * becomes one GEMM with that
 * epilogue (ops_linalg.c: bias input 2, attr "activation"); one reshape keeping the last
 * axis may stand between the GEMM and the chain (ONNX MatMul of a 3-D input), and
 * then stays after the fused GEMM. A value inside the chain must have one consumer
 * (a SiLU's input its two) and be no graph output. Without params only the activation joins. After pattern
 * fusion (which makes the gelu nodes) and before elementwise fusion (which would
 * take the add and the activation).
 *
 * GEMM weight packing (pack_gemm_weights.c): a matmul whose tensor_b is a float32
 * param [K, N] (or [N, K] with transpose_b) with N >= 64 reads a new param in
 * panels of 32 columns instead ([ceil(N / 32), K, 32], zero-padded; attrs b_panel
 * 32 and units N), which the GEMM kernels stream as contiguous runs; matmuls reading
 * one param one way share its pack, and a param nothing else reads leaves. After
 * the GEMM epilogue fusion, which reads the matmul's attrs as they were.
 *
 * Output layout fusion (fuse_out_layout.c): a dense, matmul, batch_matmul or
 * attention followed by reshapes and one transpose (or two, composed) stores its
 * result as the transpose would lay it out (attrs out_shape and out_axes, ops.h's
 * hgr__out_layout_t), at the last transpose's place and name; attention only where
 * each output row stays one run. A value inside the chain must have one consumer and
 * be no graph output. After the GEMM epilogue fusion and the weight packing.
 *
 * Sibling GEMM fusion (fuse_sibling_gemms.c): up to 3 matmuls that read the same A
 * with float32 weights in panels (the same K, N a multiple of 32, the same epilogue
 * and out_shape) become one matmul of as many outputs over new params, the weights
 * (and biases) side by side: output s is member s's columns, through member s's
 * out_axes; the group stands at its first member's place and name. Attention's q, k
 * and v projections become one launch. After the weight packing and the output
 * layout fusion.
 *
 * Skip layer norm fusion (fuse_skip_norm.c): an add of two values shaped as its
 * result, read by a layer_norm as its data, becomes that layer_norm's input 3 (skip),
 * added to its data in the kernel; at the layer_norm's place and name. Where others
 * read the sum too (all after the layer_norm) or it is a graph output, the layer_norm
 * also gives the sum as its output 1 (a pre-norm transformer's residual stream).
 *
 * Elementwise fusion (fuse_elementwise.c): replaces each chain of float32
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
 * inputs did.
 *
 * Both are pure: no device, no OpenCL. Each returns a new graph (validated, each
 * entry its own storage id as the builder gives), or the graph itself, retained,
 * when it changes nothing. Inputs keep their order and names, outputs their order
 * and names. A placed graph (device keys, __copy nodes) is FAILED_PRECONDITION: the
 * passes run before placement. */
#ifndef HGR_PASSES_INTERNAL_H_ /* hgr/passes.h has HGR_PASSES_H_ */
#define HGR_PASSES_INTERNAL_H_

#include "graph_internal.h"
#include "hgr/params.h"
#include "hgr/passes.h"
#include "internal.h"
#include "ops.h"

typedef struct hgr__fuse_report_t {
  uint32_t groups;      /* nodes made: fused_elementwise nodes, conv2d and GEMM nodes that took an epilogue */
  uint32_t fused_nodes; /* nodes they replaced (for the epilogues: besides the conv2d or GEMM) */
} hgr__fuse_report_t;

/* ---- what the passes share (rewrite.c) ------------------------------------------ */

/* Where a pass reports each node it made (hgr_passes_options_t's log). */
typedef struct hgr__pass_log_t {
  hgr_passes_log_fn fn; /* may be NULL: nothing is reported */
  void* user;
} hgr__pass_log_t;

/* Reports, through log (may be NULL), that node `made` of func made replaced
 * members (nodes of graph), as one bounded line naming the first few. */
void hgr__pass_log_fused(const hgr__pass_log_t* log, const hgr_graph_t* graph, const char* func, uint32_t made,
                         const uint32_t* members, uint32_t count);

#define HGR__PASS_NONE UINT32_MAX

/* FAILED_PRECONDITION, naming the pass, when graph is placed (device keys or a
 * __copy node); else OK. */
hgr_status_t hgr__pass_check_unplaced(const hgr_graph_t* graph, const char* pass);

/* A float attr of a fusable op (hgr__fusable_op) as the op reads it: the node's
 * value, or the op's default; false when it is absent without a default or does not
 * parse (the node is then left to its op, which reports it). Values beyond float's
 * range become infinities. */
bool hgr__pass_fusable_attr(const hgr__node_t* node, const hgr__fusable_t* op, uint32_t k, float* out);

/* Counts into uses (zeroed, per entry) each entry's input references plus 1 per
 * graph output, and sets head (zeroed, per entry) for graph outputs. */
void hgr__pass_count_uses(const hgr_graph_t* graph, uint32_t* uses, bool* head);

/* Per entry of graph: the one node that reads it, once, when it is no graph output;
 * HGR__PASS_NONE otherwise. From graph's allocator; NULL when out of memory. */
uint32_t* hgr__pass_sole_consumers(const hgr_graph_t* graph);

/* A SiLU written out (torch.onnx's export of nn.SiLU): a sigmoid reading entry
 * `current` (float32, from node `producer`) and a multiply of current by the
 * sigmoid's value, current read by those two alone and no graph output, the
 * sigmoid's value by the multiply alone. *sigmoid and *multiply get the two nodes;
 * false when current's readers are not that. Looks at the nodes after producer. */
bool hgr__pass_silu(const hgr_graph_t* graph, uint32_t producer, uint32_t current, uint32_t* sigmoid,
                    uint32_t* multiply);

/* The data of the param that graph input node n is, when params holds it with that
 * dtype and that many bytes; else NULL (an op node, no params, another param). */
const void* hgr__pass_param_data(const hgr_graph_t* graph, const hgr_params_t* params, uint32_t n, hgr_dtype_t dtype,
                                 uint64_t bytes);

/* A pass's test whether a name it would give a new param is taken (user: its state). */
typedef bool (*hgr__pass_taken_fn)(const void* user, const char* name);
/* "<base>.<suffix>", or "<base>.<suffix>#2", #3 ... the first that taken (with user)
 * says is free, from allocator; NULL when out of memory. */
char* hgr__pass_unique_name(hgr_allocator_t allocator, const char* base, const char* suffix, hgr__pass_taken_fn taken,
                            const void* user);
/* Whether name is a node's of graph or a param's of params or made (each may be NULL). */
bool hgr__pass_name_in_use(const hgr_graph_t* graph, const hgr_params_t* params, const hgr_params_t* made,
                           const char* name);
/* Whether a and b have the same shape. */
bool hgr__pass_same_shape(const hgr__entry_t* a, const hgr__entry_t* b);
/* Whether node is an op with one output and no attrs but op's params (and TVM's
 * "hash"); op NULL: no params. */
bool hgr__pass_only_known_attrs(const hgr__node_t* node, const hgr__fusable_t* op);

/* qsort/bsearch order of uint32_t node ids, ascending. */
int hgr__pass_compare_ids(const void* a, const void* b);

/* Whether node n's inputs and first output are all float32. */
bool hgr__pass_all_float32(const hgr_graph_t* graph, uint32_t n);

/* A graph rebuilt from `graph` node by node, in its order: new_id maps each node of
 * graph to the node that now gives its outputs (HGR__PASS_NONE until appended, and
 * for nodes left out), output k of node n as output k + index_shift[n] of new_id[n]
 * (index_shift 0 unless a pass sets it: a node whose value a fused node gives as a
 * later output); refs is room for any node's inputs. The rebuild, and the new graph,
 * use graph's allocator. */
typedef struct hgr__pass_rebuild_t {
  hgr_allocator_t allocator; /* hgr__graph_allocator(graph) */
  const hgr_graph_t* graph;
  hgr_graph_t* out;
  uint32_t* new_id;
  uint32_t* index_shift;
  hgr__entry_ref_t* refs;
} hgr__pass_rebuild_t;

/* RESOURCE_EXHAUSTED (nothing to free then). */
hgr_status_t hgr__pass_rebuild_init(const hgr_graph_t* graph, hgr__pass_rebuild_t* out_rebuild);
void hgr__pass_rebuild_free(hgr__pass_rebuild_t* rebuild);
/* inputs (references into graph) mapped through new_id, in refs. */
const hgr__entry_ref_t* hgr__pass_map_inputs(hgr__pass_rebuild_t* rebuild, const hgr__entry_ref_t* inputs,
                                             uint32_t count);
/* Appends node n of graph as it is (name: its own when NULL), its inputs mapped,
 * and sets new_id[n]. */
hgr_status_t hgr__pass_copy_node(hgr__pass_rebuild_t* rebuild, uint32_t n, const char* name);
/* Checks output 0 of out's node node_id (at most HGR__OUT_LAYOUT_OUTPUTS outputs),
 * through its op's inference, against output 0 of graph's node `like` it replaces: a
 * difference is INTERNAL (a bug of the pass), naming the pass; inference running
 * out of memory is RESOURCE_EXHAUSTED. */
hgr_status_t hgr__pass_check_inferred(const hgr__pass_rebuild_t* rebuild, uint32_t node_id, uint32_t like,
                                      const char* pass);
/* hgr__pass_check_inferred for output `output` of node_id (a fused node giving what
 * several nodes gave). */
hgr_status_t hgr__pass_check_inferred_output(const hgr__pass_rebuild_t* rebuild, uint32_t node_id, uint32_t output,
                                             uint32_t like, const char* pass);
/* Adds graph's outputs mapped through new_id, orders the inputs like graph's, gives
 * every entry its own storage id, validates, and hands the graph to *out_graph. */
hgr_status_t hgr__pass_rebuild_finish(hgr__pass_rebuild_t* rebuild, hgr_graph_t** out_graph);
/* A pass's appending of every node of rebuild->graph (its own state in pass). */
typedef hgr_status_t (*hgr__pass_append_fn)(const void* pass, const hgr__pass_log_t* log,
                                            hgr__pass_rebuild_t* rebuild);
/* The whole rebuild: init, append, finish into *out_graph, free. */
hgr_status_t hgr__pass_rebuild(const hgr_graph_t* graph, hgr__pass_append_fn append, const void* pass,
                               const hgr__pass_log_t* log, hgr_graph_t** out_graph);

/* ---- the passes ------------------------------------------------------------------- */

/* The patterns fuse_patterns.c matches, in the order it tries them at a node. */
typedef enum hgr__pattern_t {
  HGR__PATTERN_LAYER_NORM,
  HGR__PATTERN_GELU,
  HGR__PATTERN_COUNT
} hgr__pattern_t;

/* Fuses the patterns enabled[p] switches on (HGR__PATTERN_COUNT flags) into
 * *out_graph; params (may be NULL: nothing matches) holds the constants the
 * patterns compare. out_report (HGR__PATTERN_COUNT reports, or NULL) gets each
 * pattern's counts. RESOURCE_EXHAUSTED; INTERNAL when a fused node fails its op's
 * inference (a bug). */
hgr_status_t hgr__fuse_patterns(const hgr_graph_t* graph, const hgr_params_t* params, const bool* enabled,
                                const hgr__pass_log_t* log, hgr_graph_t** out_graph, hgr__fuse_report_t* out_report);

/* Fuses graph's attention blocks (fuse_attention.c) into *out_graph, each reported
 * through log (may be NULL). params (may be NULL: nothing fuses then, the scale
 * being a param) holds the graph's constants by input name; the params only fused
 * blocks read leave the graph (hgr_passes_apply then drops them). RESOURCE_EXHAUSTED;
 * INTERNAL when a fused node fails its op's inference (a bug). out_report may be
 * NULL. */
hgr_status_t hgr__fuse_attention(const hgr_graph_t* graph, const hgr_params_t* params, const hgr__pass_log_t* log,
                                 hgr_graph_t** out_graph, hgr__fuse_report_t* out_report);

/* Fuses the reshapes and transposes after GEMMs and attention into their producers'
 * output layouts (fuse_out_layout.c) into *out_graph, each fused producer reported
 * through log (may be NULL). RESOURCE_EXHAUSTED; INTERNAL when a fused node fails its
 * op's inference (a bug). out_report may be NULL. */
hgr_status_t hgr__fuse_out_layout(const hgr_graph_t* graph, const hgr__pass_log_t* log, hgr_graph_t** out_graph,
                                  hgr__fuse_report_t* out_report);

/* Fuses sibling matmuls (fuse_sibling_gemms.c) into *out_graph: matmuls reading
 * one A with weights in panels become one matmul of 2 or 3 outputs, reading new
 * params (the weights and biases side by side), which *out_made receives (a new
 * params object from params' allocator, or NULL when none was made; their names,
 * "<param>.siblings", new to graph, params and made); the params only fused members
 * read leave the graph. The weights are read from made (what earlier passes made,
 * may be NULL) or params (NULL: nothing fuses). Each group is reported through log
 * (may be NULL). RESOURCE_EXHAUSTED; INTERNAL when a fused node fails its op's
 * inference (a bug). out_report counts the matmuls made (groups) and the members
 * (fused_nodes); may be NULL. */
hgr_status_t hgr__fuse_sibling_gemms(const hgr_graph_t* graph, const hgr_params_t* params, const hgr_params_t* made,
                                     const hgr__pass_log_t* log, hgr_graph_t** out_graph, hgr_params_t** out_made,
                                     hgr__fuse_report_t* out_report);

/* Fuses the residual adds before layer norms into their skip inputs
 * (fuse_skip_norm.c) into *out_graph, each reported through log (may be NULL).
 * RESOURCE_EXHAUSTED; INTERNAL when a fused node fails its op's inference (a bug).
 * out_report may be NULL. */
hgr_status_t hgr__fuse_skip_norm(const hgr_graph_t* graph, const hgr__pass_log_t* log, hgr_graph_t** out_graph,
                                 hgr__fuse_report_t* out_report);

/* Fuses GEMM epilogues (fuse_gemm_epilogue.c) into *out_graph, each fused GEMM
 * reported through log (may be NULL). params (may be NULL: only activations join)
 * holds the graph's constants by input name: a bias must be one; it stays a param
 * the fused GEMM reads. RESOURCE_EXHAUSTED; INTERNAL when a fused node fails its
 * op's inference (a bug). out_report may be NULL. */
hgr_status_t hgr__fuse_gemm_epilogue(const hgr_graph_t* graph, const hgr_params_t* params, const hgr__pass_log_t* log,
                                     hgr_graph_t** out_graph, hgr__fuse_report_t* out_report);

/* Repacks the weights of graph's matmuls (pack_gemm_weights.c) into *out_graph:
 * each matmul whose tensor_b is a float32 param [K, N] (or [N, K], transposed) with
 * N >= 64 reads a new param in panels of 32 columns (attr b_panel), which
 * *out_made receives (a new params object from params' allocator, or NULL when none
 * was made; the names, "<param>.panels", are new to graph and params); a param only
 * repacked matmuls read leaves the graph. params may be NULL: nothing is packed.
 * out_report counts the params made (groups) and the matmuls reading them
 * (fused_nodes); may be NULL. RESOURCE_EXHAUSTED; INTERNAL when a repacked node fails
 * its op's inference (a bug). */
hgr_status_t hgr__pack_gemm_weights(const hgr_graph_t* graph, const hgr_params_t* params, const hgr__pass_log_t* log,
                                    hgr_graph_t** out_graph, hgr_params_t** out_made, hgr__fuse_report_t* out_report);

/* Fuses graph's elementwise chains into *out_graph, each group reported through log
 * (may be NULL). RESOURCE_EXHAUSTED; INTERNAL when a fused node fails its op's
 * inference (a bug). out_report may be NULL. */
hgr_status_t hgr__fuse_elementwise(const hgr_graph_t* graph, const hgr__pass_log_t* log, hgr_graph_t** out_graph,
                                   hgr__fuse_report_t* out_report);

/* Fuses conv2d epilogues into *out_graph. params (may be NULL) holds the graph's
 * constants, by input name: those a multiply or add reads fold into new params,
 * which *out_made receives (a new params object, or NULL when none was made; their
 * names are new to graph and params); the inputs only the fused nodes read leave
 * the graph. Each fused conv2d is reported through log (may be NULL).
 * RESOURCE_EXHAUSTED; INTERNAL when a fused node fails its op's inference (a bug).
 * out_report may be NULL. */
hgr_status_t hgr__fuse_conv_epilogue(const hgr_graph_t* graph, const hgr_params_t* params, const hgr__pass_log_t* log,
                                     hgr_graph_t** out_graph, hgr_params_t** out_made, hgr__fuse_report_t* out_report);

#endif /* HGR_PASSES_INTERNAL_H_ */
