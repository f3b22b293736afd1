/* The ONNX loader's internals: host tensors (onnx_tensor.c), the loader's value
 * table and node context (onnx_node.c), the op importers (onnx_import_<family>.c,
 * listed in onnx_ops.c) and the loader itself (onnx_load.c).
 *
 * Loading walks the model's nodes in order. Every ONNX value is a
 * hgr__onnx_value_t: either a constant known at load (a host tensor: initializers,
 * Constant nodes, folded nodes) or a runtime value of the graph being built (a
 * builder value), with its ONNX element type and shape either way. A node whose
 * inputs are all constants is folded when its op has a `fold` (host evaluation);
 * otherwise its op's `import` adds builder ops. A constant that a runtime op needs
 * becomes a builder constant (a param) on first use.
 *
 * Run-time dtypes: ONNX float is float32; int32 and int64 are int32 (int64 graph
 * inputs are cast on entry, int64 graph outputs cast back on exit; constants are
 * narrowed with a range check); bool is hgr's bool (one byte). float16, bfloat16,
 * int8, uint8, int16 and uint16 are held in their own width between ops (graph
 * inputs and outputs, the values nodes write), and computed in float32 or int32:
 * hgr__onnx_runtime gives an op its inputs widened, hgr__onnx_set_runtime narrows
 * what it computed back, and ops that take them as they are (Cast) read them with
 * hgr__onnx_runtime_held. Constants are widened at load, or kept narrow for those.
 * A node with float16 or bfloat16 inputs is imported as a float node
 * (hgr__onnx_import, onnx_widen.c), so importers that take float take those too. */
#ifndef HGR_ONNX_INTERNAL_H_
#define HGR_ONNX_INTERNAL_H_

#include <stdbool.h>
#include <stdint.h>

#include "hgr/builder.h"
#include "hgr/onnx.h"
#include "hgr/passes.h"
#include "internal.h"
#include "onnx/onnx.pb-c.h"

/* ONNX's TensorProto.DataType codes. */
enum {
  HGR__ONNX_UNDEFINED = 0,
  HGR__ONNX_FLOAT = 1,
  HGR__ONNX_UINT8 = 2,
  HGR__ONNX_INT8 = 3,
  HGR__ONNX_UINT16 = 4,
  HGR__ONNX_INT16 = 5,
  HGR__ONNX_INT32 = 6,
  HGR__ONNX_INT64 = 7,
  HGR__ONNX_STRING = 8,
  HGR__ONNX_BOOL = 9,
  HGR__ONNX_FLOAT16 = 10,
  HGR__ONNX_DOUBLE = 11,
  HGR__ONNX_UINT32 = 12,
  HGR__ONNX_UINT64 = 13,
  HGR__ONNX_COMPLEX64 = 14,
  HGR__ONNX_COMPLEX128 = 15,
  HGR__ONNX_BFLOAT16 = 16,
  HGR__ONNX_FLOAT8E4M3FN = 17, /* 17 to 23: named in messages, never held */
  HGR__ONNX_FLOAT8E4M3FNUZ = 18,
  HGR__ONNX_FLOAT8E5M2 = 19,
  HGR__ONNX_FLOAT8E5M2FNUZ = 20,
  HGR__ONNX_UINT4 = 21,
  HGR__ONNX_INT4 = 22,
  HGR__ONNX_FLOAT4E2M1 = 23,
};

/* The opsets of the default domain hgr reads. */
#define HGR__ONNX_MIN_OPSET 1
#define HGR__ONNX_MAX_OPSET 22

/* ---- host tensors (onnx_tensor.c) ------------------------------------------------------- */

/* A tensor known at load: count elements of onnx_type in host byte order. Element
 * types held: every numeric ONNX type (float16 and bfloat16 as their 16 bits). */
typedef struct hgr__onnx_limits_t hgr__onnx_limits_t;
typedef struct hgr__onnx_tensor_t {
  int32_t onnx_type;
  int32_t ndim;
  int64_t shape[HGR_MAX_DIMS];
  uint64_t count;
  void* data; /* from allocator, count * hgr__onnx_type_bytes(onnx_type) bytes (never NULL) */
  hgr__onnx_limits_t* charged; /* the load whose budget holds these bytes until freed, or NULL */
  hgr_allocator_t allocator;   /* the tensor's and its data's (hgr__onnx_tensor_free frees with it) */
} hgr__onnx_tensor_t;

/* "float", "int64", ...; "type 99" for an unknown code (static buffer not used:
 * unknown codes give "an unknown type"). */
const char* hgr__onnx_type_name(int32_t onnx_type);
/* Bytes per element; 0 for string, complex and unknown types. */
size_t hgr__onnx_type_bytes(int32_t onnx_type);
bool hgr__onnx_type_is_float(int32_t onnx_type); /* float, double, float16, bfloat16 */
/* hgr's dtype of an ONNX type (for constants and test data); UNIMPLEMENTED for
 * strings, complex and unknown types. */
hgr_status_t hgr__onnx_type_dtype(int32_t onnx_type, hgr_dtype_t* out_dtype);
/* The dtype values of onnx_type are held in at run time (int64 as int32); false
 * for the types hgr does not hold (double, uint32, uint64, strings, complex). */
bool hgr__onnx_held_dtype(int32_t onnx_type, hgr_dtype_t* out_dtype);
/* The ONNX type ops compute values of onnx_type in: float for float16 and
 * bfloat16, int32 for the 8-, 16- and 64-bit integers; else onnx_type itself. */
int32_t hgr__onnx_compute_type(int32_t onnx_type);
/* The ONNX type of an hgr dtype, or HGR__ONNX_UNDEFINED. */
int32_t hgr__onnx_dtype_type(hgr_dtype_t dtype);

/* What one load lets the loader hold on the host (hgr_onnx_options_set_max_tensor_bytes
 * and _set_max_loader_bytes): each host tensor's bytes, and all of them together
 * with the builder constants made from them. The loader enters its limits on the
 * calling thread for the duration of a load; every host tensor made meanwhile is
 * charged to them (hgr__onnx_tensor_new) and credited back when freed. */
struct hgr__onnx_limits_t {
  uint64_t max_tensor_bytes; /* 0: HGR_ONNX_DEFAULT_MAX_TENSOR_BYTES */
  uint64_t max_loader_bytes; /* 0: from model_bytes (hgr/onnx.h) */
  uint64_t model_bytes;      /* the model's bytes, external data read so far included */
  uint64_t held;             /* live host tensors and builder constants made, in bytes */
  uint64_t peak;             /* the most held at once */
};
/* Makes limits the calling thread's (NULL: none, as outside a load: tensors are then
 * bounded by HGR_ONNX_DEFAULT_MAX_TENSOR_BYTES alone and charged to nothing). */
void hgr__onnx_limits_enter(hgr__onnx_limits_t* limits);
/* The loader budget in force for limits (its max_loader_bytes, or the default). */
uint64_t hgr__onnx_limits_budget(const hgr__onnx_limits_t* limits);
/* Charges bytes (never credited before the load ends: builder constants) to the
 * thread's limits: RESOURCE_EXHAUSTED naming where, the bytes held and the budget
 * when they would exceed it. OK when no limits are entered. */
hgr_status_t hgr__onnx_limits_charge(uint64_t bytes, const char* where);
/* Counts bytes of external data as the model's own (they raise the default budget). */
void hgr__onnx_limits_add_model_bytes(uint64_t bytes);

/* A zeroed tensor, it and its data from allocator (which it keeps). INVALID_ARGUMENT
 * (naming where) for a negative extent, too many dims or a byte size beyond 64 bits /
 * size_t; RESOURCE_EXHAUSTED. */
hgr_status_t hgr__onnx_tensor_new(hgr_allocator_t allocator, int32_t onnx_type, const int64_t* shape, int32_t ndim,
                                  const char* where, hgr__onnx_tensor_t** out_tensor);
void hgr__onnx_tensor_free(hgr__onnx_tensor_t* tensor);
/* Charges tensor to limits (NULL: none) from now on, for a tensor that outlives the
 * load that made it (a fold the parsed model keeps): that load goes on counting it
 * until it ends, limits until the tensor is freed. */
void hgr__onnx_tensor_recharge(hgr__onnx_tensor_t* tensor, hgr__onnx_limits_t* limits);
/* Gives tensor shape (ndim values), which must hold its element count: INVALID_ARGUMENT
 * naming where otherwise (a count that differs, or a shape hgr__shape_size refuses). */
hgr_status_t hgr__onnx_tensor_reshape(hgr__onnx_tensor_t* tensor, const int64_t* shape, int32_t ndim,
                                      const char* where);
/* Whether tensor's shape is countable (hgr__shape_size) and its element count is
 * the tensor's count: what every constant entering the loader's value table must
 * be, so that no folder reads past a constant's bytes. */
bool hgr__onnx_tensor_is_whole(const hgr__onnx_tensor_t* tensor);
/* The row-major strides of tensor, in elements (out: tensor->ndim values). */
void hgr__onnx_tensor_strides(const hgr__onnx_tensor_t* tensor, uint64_t* out_strides);
/* A copy of tensor made with allocator. */
hgr_status_t hgr__onnx_tensor_copy(hgr_allocator_t allocator, const hgr__onnx_tensor_t* tensor,
                                   hgr__onnx_tensor_t** out_copy);

/* Where a tensor's external data may come from: the model's folder (NULL: external
 * data is refused). */
typedef struct hgr__onnx_external_t {
  const char* base_directory;
} hgr__onnx_external_t;

/* Decodes a TensorProto into a tensor made with allocator: raw_data (little-endian),
 * the typed fields, or external data. where names it in errors ("initializer 'w'"). */
hgr_status_t hgr__onnx_tensor_decode(hgr_allocator_t allocator, const Onnx__TensorProto* proto,
                                     const hgr__onnx_external_t* external, const char* where,
                                     hgr__onnx_tensor_t** out_tensor);
/* hgr__onnx_tensor_decode of a proto unpacked with allocator (through
 * hgr__onnx_protobuf_allocator_init) that is decoded once: where raw_data holds the
 * values in the host's order, the tensor takes its buffer (proto's raw_data is left
 * empty) instead of copying it, which saves a pass over the model's weights. */
hgr_status_t hgr__onnx_tensor_decode_taking(hgr_allocator_t allocator, Onnx__TensorProto* proto,
                                            const hgr__onnx_external_t* external, const char* where,
                                            hgr__onnx_tensor_t** out_tensor);

/* Element i as a double / an int64 (floats truncated toward zero, NaN 0). */
double hgr__onnx_tensor_f64(const hgr__onnx_tensor_t* tensor, uint64_t i);
int64_t hgr__onnx_tensor_i64(const hgr__onnx_tensor_t* tensor, uint64_t i);
/* Sets element i from a double / an int64, converting to the tensor's type (as
 * ONNX Cast does: float to int truncates; to bool: nonzero). */
void hgr__onnx_tensor_set_f64(hgr__onnx_tensor_t* tensor, uint64_t i, double value);
void hgr__onnx_tensor_set_i64(hgr__onnx_tensor_t* tensor, uint64_t i, int64_t value);
/* A copy made with allocator, converted to onnx_type element by element (ONNX Cast). */
hgr_status_t hgr__onnx_tensor_cast(hgr_allocator_t allocator, const hgr__onnx_tensor_t* tensor, int32_t onnx_type,
                                   const char* where, hgr__onnx_tensor_t** out_tensor);

/* ---- before parsing (onnx_wire.c) ------------------------------------------------------ */

/* Checks how deep the protobuf message of type descriptor in bytes nests, before
 * protobuf-c unpacks it recursively: INVALID_ARGUMENT naming the limit when
 * messages nest more than HGR_ONNX_MAX_MESSAGE_DEPTH deep or GraphProtos more
 * than HGR_ONNX_MAX_GRAPH_DEPTH; OK otherwise, also for bytes that do not parse
 * (protobuf-c then says so). */
hgr_status_t hgr__onnx_wire_check(const void* bytes, size_t size, const ProtobufCMessageDescriptor* descriptor);

/* protobuf-c's allocator over an hgr allocator: give &base to protobuf-c's unpack and
 * to free_unpacked alike (the same one, which must outlive what it unpacked). failed
 * tells that an allocation failed, so that an unpack that returns NULL for want of
 * memory is RESOURCE_EXHAUSTED rather than bytes that do not parse. */
typedef struct hgr__onnx_protobuf_allocator_t {
  ProtobufCAllocator base;
  hgr_allocator_t allocator;
  bool failed;
} hgr__onnx_protobuf_allocator_t;
void hgr__onnx_protobuf_allocator_init(hgr__onnx_protobuf_allocator_t* wrapper, hgr_allocator_t allocator);

/* ---- options (onnx_options.c) and the parsed model (onnx_model.c) ------------------------ */

/* An input's shape, and value, from the options (hgr_onnx_options_set_input_*). */
typedef struct input_shape_t {
  char* name;
  int32_t ndim;
  int64_t shape[HGR_MAX_DIMS];
  hgr__onnx_tensor_t* value; /* hgr_onnx_options_set_input_value; NULL: only the shape */
} input_shape_t;

struct hgr_onnx_options_s {
  hgr_allocator_t allocator; /* its memory and its values' (hgr_onnx_options_create: the system's) */
  input_shape_t* shapes;
  size_t shape_count;
  hgr_instance_t* instance;
  const hgr_place_options_t* place;
  uint64_t max_tensor_bytes; /* 0: the default */
  uint64_t max_loader_bytes; /* 0: the default, from the model's size */
  hgr_passes_options_t passes; /* hgr_onnx_options_set_passes, set_fuse_elementwise */
};

/* A parsed model (onnx_model.h). */
struct hgr__onnx_model_s {
  hgr_allocator_t allocator;                /* everything the model holds, and each import's loader */
  hgr__onnx_protobuf_allocator_t protobuf;  /* proto's, over allocator (freed with it) */
  Onnx__ModelProto* proto;
  /* Per node, the outputs of its fold when no input depends on a graph input: the same
   * at every import, so each import after the first borrows them (NULL: not kept). */
  hgr__onnx_tensor_t*** folds;
  char* base_directory;          /* NULL: external data refused */
  hgr__onnx_tensor_t** initializers; /* per graph initializer, decoded at parse */
  uint32_t* inputs;              /* the graph inputs no initializer gives: their indexes in graph->input */
  size_t input_count;
  hgr__onnx_limits_t limits;     /* the initializers are charged here; each import starts from it */
};

/* The tensor type of a value info, or NULL for a sequence, map, optional or no type
 * (TypeProto's value is a oneof: its pointers share one union). */
const Onnx__TypeProto__Tensor* hgr__onnx_tensor_type(const Onnx__ValueInfoProto* info);

/* ---- the loader ---------------------------------------------------------------------- */

typedef struct hgr__onnx_value_t {
  const char* name;            /* borrowed from the model */
  int32_t onnx_type;           /* HGR__ONNX_UNDEFINED until known */
  int32_t ndim;                /* -1 until known */
  int64_t shape[HGR_MAX_DIMS];
  hgr__onnx_tensor_t* constant; /* owned unless borrowed; non-NULL: known at load */
  bool borrowed;               /* constant is the parsed model's (an initializer, a kept fold) */
  bool from_input;             /* depends on a graph input (its shape or its value): differs between imports */
  bool has_value;              /* a builder value exists (runtime, or a materialized constant) */
  hgr_value_t value;
  bool defined;                /* produced by an earlier node, an initializer or an input */
  int32_t producer;            /* node index; -1 for initializers and inputs */
  uint32_t uses;               /* inputs of live nodes naming it, plus graph outputs */
  int32_t consumer;            /* the live node using it when uses == 1 (else -1) */
  bool graph_output;           /* a graph output (of a subgraph, for a subgraph's value) */
  bool scoped;                 /* a subgraph's value or a copy of one: its name is not unique in the builder */
  bool decided;                /* its constant is a decision at run time (onnx_stage.c); has_value stays */
} hgr__onnx_value_t;

typedef struct hgr__onnx_loader_t {
  hgr_allocator_t allocator; /* the parsed model's: the builder, the host tensors, the tables */
  const Onnx__GraphProto* graph;
  int64_t opset;
  int64_t contrib_opset;     /* of com.microsoft; 0: the model imports none */
  const hgr_onnx_options_t* options;
  hgr__onnx_external_t external;
  hgr_builder_t* builder;
  hgr__onnx_value_t* values; /* every value name of the graph, sorted by name for lookup */
  size_t value_count;
  bool* live;                /* per node: some graph output needs it */
  bool* fused;               /* per node: done by an earlier node */
  uint64_t name_counter;     /* for unique builder node names */
  hgr_onnx_report_t report;
  bool* deciding;            /* per graph input: a value some node needed at load derives from it */
  struct hgr__onnx_model_s* model; /* the parsed model: its initializers and the folds it keeps */
  /* Scopes. A subgraph (If's branches, Loop's and Scan's bodies) is imported by a
   * loader of its own, into the same builder, whose names not defined in the subgraph
   * are looked up in the enclosing loaders (lexical scoping: inner names shadow outer
   * ones). name_counter, report and unrolled are the whole load's: a subgraph's loader
   * starts from its parent's and hands them back (hgr__onnx_subgraph_import). */
  struct hgr__onnx_loader_t* parent;    /* NULL: the model's graph */
  const struct hgr__onnx_node_t* owner; /* the parent's If, Loop or Scan node whose subgraph this is */
  uint32_t depth;                       /* graphs nested: 1 for the model's graph */
  struct hgr__onnx_names_t* captures;   /* per node: the names its subgraphs read from enclosing scopes */
  uint64_t unrolled;                    /* subgraph nodes imported by this load (HGR_ONNX_MAX_UNROLLED_NODES) */
  char where[400];                      /* "the body of node 3 'y' (Loop, opset 13), iteration 2"; "" */
  bool* done;                           /* per node: imported (or folded) already */
  /* An import in stages (onnx_stage.c): the model's graph's loader only. */
  struct hgr__onnx_stage_t* stage;      /* NULL: not in stages */
  size_t decisions_asked;               /* decisions taken so far by this import */
  size_t node_asked;                    /* decisions_asked when the node being imported began */
  hgr_value_t cut_values[8];            /* at a cut: the decision, then the payloads */
  uint32_t cut_value_count;
  hgr_value_t* in_flight;               /* at a cut inside a Loop: its values carried across */
  size_t in_flight_count;
} hgr__onnx_loader_t;

/* Names a node reads besides its inputs: those its subgraphs use from enclosing
 * scopes, nested subgraphs' included (sorted, unique; borrowed from the model). */
typedef struct hgr__onnx_names_t {
  const char** names;
  size_t count;
} hgr__onnx_names_t;

/* One node being imported. */
typedef struct hgr__onnx_node_t {
  hgr__onnx_loader_t* loader;
  const Onnx__NodeProto* proto;
  uint32_t index;
  int64_t opset;
  char label[640];              /* "node 12 'conv1' (Conv, opset 13)", and where a subgraph's node is */
  uint32_t input_count;
  hgr__onnx_value_t** inputs;   /* NULL entries: omitted optional inputs */
  uint32_t output_count;
  hgr__onnx_value_t** outputs;  /* NULL entries: omitted optional outputs */
  const char* op_name;          /* base of the builder ops' names; NULL: the first output's name */
} hgr__onnx_node_t;

/* The parsed model's fold of node, kept by an earlier import (its inputs depend on no
 * graph input): true with every output set to the kept tensor, borrowed. */
bool hgr__onnx_model_borrow_fold(hgr__onnx_loader_t* loader, hgr__onnx_node_t* node);
/* Keeps the outputs of node's fold (or of an import that folds) in the parsed model
 * for later imports, when every output is a constant the value table owns (else, or
 * out of memory: not kept). */
void hgr__onnx_model_keep_fold(hgr__onnx_loader_t* loader, hgr__onnx_node_t* node);

/* An ONNX op: import adds builder ops for the node (its inputs runtime or
 * constant); fold (may be NULL) computes its outputs on the host when every
 * input is a constant, or returns UNIMPLEMENTED to leave the node to import.
 * required_inputs: inputs 0 .. required_inputs - 1 must be present (named, not
 * ""), which the loader checks before import or fold (INVALID_ARGUMENT naming the
 * node and the input); the later ones are optional, and import and fold reach
 * them through hgr__onnx_input / hgr__onnx_required, which see an omitted input
 * as NULL. HGR__ONNX_EVERY_INPUT: at least one input, and every input the node
 * lists (variadic ops: Sum, Concat ...; elementwise ops, which have no optional
 * inputs). */
#define HGR__ONNX_EVERY_INPUT UINT32_MAX
typedef struct hgr__onnx_op_t {
  const char* name;
  hgr_status_t (*import)(hgr__onnx_node_t* node);
  hgr_status_t (*fold)(hgr__onnx_node_t* node);
  uint32_t required_inputs;
} hgr__onnx_op_t;

/* The op families (onnx_import_<family>.c), each ending with a NULL name; add a
 * family to HGR__ONNX_FAMILIES in onnx_ops.c. */
extern const hgr__onnx_op_t hgr__onnx_ops_elementwise[];
extern const hgr__onnx_op_t hgr__onnx_ops_nn[];
extern const hgr__onnx_op_t hgr__onnx_ops_matmul[];
extern const hgr__onnx_op_t hgr__onnx_ops_shape[];
extern const hgr__onnx_op_t hgr__onnx_ops_reduce[];
extern const hgr__onnx_op_t hgr__onnx_ops_layout[]; /* Split, Slice, Pad, Resize, Expand, Tile, ... */
extern const hgr__onnx_op_t hgr__onnx_ops_index[];  /* ArgMax, ArgMin, TopK, CumSum */
extern const hgr__onnx_op_t hgr__onnx_ops_scatter[]; /* GatherND, ScatterND, ScatterElements, Scatter */
extern const hgr__onnx_op_t hgr__onnx_ops_einsum[];
extern const hgr__onnx_op_t hgr__onnx_ops_rnn[];    /* LSTM, GRU, RNN */
extern const hgr__onnx_op_t hgr__onnx_ops_dynamic[]; /* NonZero, Compress, Unique, NonMaxSuppression: in stages */
extern const hgr__onnx_op_t hgr__onnx_ops_control[]; /* If, Loop, Scan: their subgraphs inlined or unrolled */
extern const hgr__onnx_op_t hgr__onnx_ops_quant[];   /* QuantizeLinear, DequantizeLinear, DynamicQuantizeLinear */
extern const hgr__onnx_op_t hgr__onnx_ops_qlinear[]; /* QLinearConv, QLinearMatMul, ConvInteger, MatMulInteger */
/* Of the domain com.microsoft (ONNX Runtime's contrib ops): Gelu, FastGelu, BiasGelu,
 * QuickGelu, BiasAdd, SkipLayerNormalization, SkipSimplifiedLayerNormalization,
 * EmbedLayerNormalization; and Attention, MultiHeadAttention, RotaryEmbedding
 * (onnx_import_attention.c). */
extern const hgr__onnx_op_t hgr__onnx_ops_contrib[];
extern const hgr__onnx_op_t hgr__onnx_ops_attention[];
extern const hgr__onnx_op_t hgr__onnx_ops_matmul_contrib[];
/* QLinearAdd, QLinearMul, QLinearConcat, QLinearGlobalAveragePool,
 * QLinearAveragePool, QLinearLeakyRelu, QLinearSigmoid, QGemm (onnx_import_qlinear.c) */
extern const hgr__onnx_op_t hgr__onnx_ops_qlinear_contrib[];

/* ---- for importers and folders (onnx_node.c) -------------------------------------------- */

/* UNIMPLEMENTED / INVALID_ARGUMENT prefixed with the node's label. */
#define HGR__ONNX_UNSUPPORTED(node, ...) hgr__onnx_error((node), HGR_STATUS_UNIMPLEMENTED, __FILE__, __LINE__, __VA_ARGS__)
#define HGR__ONNX_INVALID(node, ...) hgr__onnx_error((node), HGR_STATUS_INVALID_ARGUMENT, __FILE__, __LINE__, __VA_ARGS__)
hgr_status_t hgr__onnx_error(const hgr__onnx_node_t* node, hgr_status_code_t code, const char* file, int line,
                             const char* format, ...) HGR_PRINTF(5, 6);

/* Input i, or NULL when the node omits it (fewer inputs, or an empty name). */
hgr__onnx_value_t* hgr__onnx_input(const hgr__onnx_node_t* node, uint32_t i);
/* Input i, which must be present: INVALID_ARGUMENT naming it otherwise. */
hgr_status_t hgr__onnx_required(const hgr__onnx_node_t* node, uint32_t i, hgr__onnx_value_t** out_value);
/* Input i, which must be a constant, or decided at run time (hgr__onnx_decide, in
 * onnx_stage.c); UNIMPLEMENTED "input i ('name') must be known at load" otherwise;
 * NULL *out_tensor when omitted. */
hgr_status_t hgr__onnx_constant_input(const hgr__onnx_node_t* node, uint32_t i, hgr__onnx_tensor_t** out_tensor);
/* True when every present input is a constant. */
bool hgr__onnx_all_constant(const hgr__onnx_node_t* node);

/* Attrs. A missing attr gives fallback (*out_present false where asked); an attr of
 * another type is INVALID_ARGUMENT naming it. attr_string copies into buffer
 * (truncation is an error). attr_ints/floats: at most capacity values. */
const Onnx__AttributeProto* hgr__onnx_attr(const hgr__onnx_node_t* node, const char* name);
/* The attr called name of any node (a look-ahead at a consumer's), or NULL. */
const Onnx__AttributeProto* hgr__onnx_proto_attr(const Onnx__NodeProto* proto, const char* name);
hgr_status_t hgr__onnx_attr_int(const hgr__onnx_node_t* node, const char* name, int64_t fallback, int64_t* out);
hgr_status_t hgr__onnx_attr_float(const hgr__onnx_node_t* node, const char* name, double fallback, double* out);
hgr_status_t hgr__onnx_attr_string(const hgr__onnx_node_t* node, const char* name, const char* fallback, char* buffer,
                                   size_t capacity);
hgr_status_t hgr__onnx_attr_ints(const hgr__onnx_node_t* node, const char* name, int64_t* out, uint32_t capacity,
                                 uint32_t* out_count, bool* out_present);
hgr_status_t hgr__onnx_attr_floats(const hgr__onnx_node_t* node, const char* name, double* out, uint32_t capacity,
                                   uint32_t* out_count, bool* out_present);
/* Refuses any attr of the node not in the space-separated list (UNIMPLEMENTED
 * naming it), so that an attr hgr would silently ignore is an error. */
bool hgr__onnx_listed(const char* list, const char* name); /* name is one of list's (never "") */
hgr_status_t hgr__onnx_check_attrs(const hgr__onnx_node_t* node, const char* known);

/* The builder value of v in the dtype ops compute it in (hgr__onnx_compute_type:
 * a value held narrower is cast to it), making a builder constant of a constant on
 * first use (int64 narrowed to int32 with a range check). */
hgr_status_t hgr__onnx_runtime(hgr__onnx_node_t* node, hgr__onnx_value_t* v, hgr_value_t* out_value);
/* The builder value of v in the dtype it is held in (hgr__onnx_held_dtype), for ops
 * that take it so: a constant of a narrow type is made narrow. */
hgr_status_t hgr__onnx_runtime_held(hgr__onnx_node_t* node, hgr__onnx_value_t* v, hgr_value_t* out_value);
/* value cast to dtype by a cast op named after the node. */
hgr_status_t hgr__onnx_add_cast(hgr__onnx_node_t* node, hgr_value_t value, hgr_dtype_t dtype, hgr_value_t* out_value);
/* A builder constant of a host tensor, converted to the dtype ops compute it in
 * (int64 narrowed to int32 with a range check). name NULL: a unique name after the
 * node. */
hgr_status_t hgr__onnx_add_constant(hgr__onnx_node_t* node, const char* name, const hgr__onnx_tensor_t* tensor,
                                    hgr_value_t* out_value);
/* A float32 builder constant of t (cast from its type), named "<base>#<n>" (base
 * NULL: after the node); a float32 scalar constant; op on two values (no attrs). */
hgr_status_t hgr__onnx_add_float_constant(hgr__onnx_node_t* node, const char* base, const hgr__onnx_tensor_t* t,
                                          hgr_value_t* out_value);
hgr_status_t hgr__onnx_add_scalar(hgr__onnx_node_t* node, double value, hgr_value_t* out_value);
hgr_status_t hgr__onnx_add_binary(hgr__onnx_node_t* node, const char* op, hgr_value_t a, hgr_value_t b,
                                  hgr_value_t* out_value);
/* Adds builder op `op` named after the node (unique), with inputs and attrs (may be
 * NULL); output_count 0 for the op's minimum. Builder errors are prefixed with the
 * node's label. */
hgr_status_t hgr__onnx_add_op(hgr__onnx_node_t* node, const char* op, const hgr_value_t* inputs, uint32_t input_count,
                              const hgr_attrs_t* attrs, uint32_t output_count, hgr_value_t* out_outputs);
/* Shorthands over hgr__onnx_add_op: one input and no attrs; a reshape to shape. */
hgr_status_t hgr__onnx_add_unary(hgr__onnx_node_t* node, const char* op, hgr_value_t input, hgr_value_t* out_value);
hgr_status_t hgr__onnx_add_reshape(hgr__onnx_node_t* node, hgr_value_t input, const int64_t* shape, int32_t ndim,
                                   hgr_value_t* out_value);
/* The builder values of inputs first .. first + count - 1, each required. */
hgr_status_t hgr__onnx_runtime_inputs(hgr__onnx_node_t* node, uint32_t first, uint32_t count, hgr_value_t* out_values);
/* Adds op on inputs with attrs (may be NULL) as output k of onnx_type, releasing
 * attrs; status is that of setting the attrs, returned as it is when an error. */
hgr_status_t hgr__onnx_finish_op(hgr__onnx_node_t* node, hgr_status_t status, hgr_attrs_t* attrs, const char* op,
                                 const hgr_value_t* inputs, uint32_t input_count, uint32_t k, int32_t onnx_type);
/* The builder value of an index input into an axis of extent: a constant's
 * negative indices made non-negative at load (an index outside [-extent, extent) is
 * INVALID_ARGUMENT naming it); a runtime one as it is. */
hgr_status_t hgr__onnx_index_input(hgr__onnx_node_t* node, hgr__onnx_value_t* indices, int64_t extent,
                                   hgr_value_t* out_value);
/* dtype, shape of a builder value. */
hgr_status_t hgr__onnx_value_info(const hgr__onnx_node_t* node, hgr_value_t value, hgr_tensor_info_t* out_info);

/* Output k: a builder value (its type: the ONNX type the node declares, given as
 * onnx_type; the value is in the dtype that type is held or computed in, and cast
 * to the held one); a constant (ownership passes,
 * also on failure); or the same value as an input (Identity). An omitted output
 * (NULL) ignores the call. */
hgr_status_t hgr__onnx_set_runtime(hgr__onnx_node_t* node, uint32_t k, hgr_value_t value, int32_t onnx_type);
hgr_status_t hgr__onnx_set_constant(hgr__onnx_node_t* node, uint32_t k, hgr__onnx_tensor_t* tensor);
hgr_status_t hgr__onnx_set_alias(hgr__onnx_node_t* node, uint32_t k, const hgr__onnx_value_t* source);

/* The element count of a value whose shape is known (every value's at load). */
int64_t hgr__onnx_element_count(const hgr__onnx_value_t* v);
/* A value of the node's own (no ONNX name's) holding builder value `value` of
 * onnx_type, for hgr__onnx_import_as. */
hgr__onnx_value_t hgr__onnx_runtime_value(const hgr__onnx_node_t* node, hgr_value_t value, int32_t onnx_type);
/* (onnx_widen.c) op's import of node; a node with float16 or bfloat16 inputs
 * imported as a float node (its inputs widened, its float outputs narrowed back),
 * but for the ops that take those types as they are (Cast, the quantization ops)
 * and control flow. */
hgr_status_t hgr__onnx_import(hgr__onnx_node_t* node, const hgr__onnx_op_t* op);
/* (onnx_ops.c) Imports node as op_type (of the default domain, else of
 * com.microsoft) on other inputs (values of the node's own, or of the graph) with
 * the node's attrs but those listed in dropped_attrs (space-separated), its result
 * in *out: how an op that computes on dequantized values (QLinearConv: Conv) reuses
 * the float op's importer. The
 * result fuses nothing that follows (*out has no consumers); errors carry the
 * node's label. */
hgr_status_t hgr__onnx_import_as(hgr__onnx_node_t* node, const char* op_type, const char* dropped_attrs,
                                 hgr__onnx_value_t** inputs, uint32_t input_count, hgr__onnx_value_t* out);
/* The same with out_count (at most 8) outputs in outs, each a value of the node's
 * own; outs NULL: the op sets the node's own outputs. */
hgr_status_t hgr__onnx_import_as_outputs(hgr__onnx_node_t* node, const char* op_type, const char* dropped_attrs,
                                         hgr__onnx_value_t** inputs, uint32_t input_count, hgr__onnx_value_t* outs,
                                         uint32_t out_count);

/* The zero point input zero_index of a quantized op in its own width, shaped like
 * its scale `like` (a zero point of [] beside a scale of [1] is reshaped; another
 * count is INVALID); omitted (or zero_index past the inputs): zeros of onnx_type
 * shaped so (onnx_import_quant.c). */
hgr_status_t hgr__onnx_zero_point(hgr__onnx_node_t* node, uint32_t zero_index, const hgr__onnx_value_t* like,
                                  int32_t onnx_type, hgr_value_t* out);
/* a (float32 [..., K]) times the constant int8 or uint8 weights w, [K, N] (or
 * [N, K] when transposed), dequantized in the product's loads (dequantize_matmul:
 * the weights stay in their width on the device, packed at load in panels of 32
 * columns, and no run dequantizes them), with scale (float32; NULL: 1) and zero
 * point (w's type; NULL: 0), each one element or [N], and the float bias ([N],
 * or [1, N]; NULL: none). *out: a value of the node's own. *out_fits false where
 * the operands are not those: the caller takes its general path
 * (onnx_import_quant.c). */
hgr_status_t hgr__onnx_weights_product(hgr__onnx_node_t* node, hgr__onnx_value_t* a, const hgr__onnx_value_t* w,
                                       bool transposed, hgr__onnx_value_t* scale, hgr__onnx_value_t* zero,
                                       hgr__onnx_value_t* bias, hgr__onnx_value_t* out, bool* out_fits);
/* Whether v is a constant that a DequantizeLinear of the node's graph folded at load
 * from constant int8 or uint8 weights: those (*out_q), their scale and zero point
 * (NULL when omitted) and the node's axis (non-negative). */
bool hgr__onnx_folded_weights(const hgr__onnx_node_t* node, const hgr__onnx_value_t* v, hgr__onnx_value_t** out_q,
                              hgr__onnx_value_t** out_scale, hgr__onnx_value_t** out_zero, int64_t* out_axis);
/* Element i of quantized constant q dequantized on the host as the dequantize kernel
 * does: (q - zero) exact, to float32, times the scale in float32 (zero NULL: 0;
 * scale NULL: 1); the zero point's and scale's elements zero_i and scale_i
 * (onnx_import_quant.c). */
double hgr__onnx_dequantized_element(const hgr__onnx_tensor_t* q, uint64_t i, const hgr__onnx_tensor_t* zero,
                                     uint64_t zero_i, const hgr__onnx_tensor_t* scale, uint64_t scale_i);
/* Constant q dequantized on the host, each element as hgr__onnx_dequantized_element
 * gives it (scale NULL: 1, zero NULL: 0), the scale and zero point one element each
 * or a vector along axis (non-negative) of q: a float32 tensor in *out (the caller
 * frees it). */
hgr_status_t hgr__onnx_dequantized_tensor(const hgr__onnx_node_t* node, const hgr__onnx_tensor_t* q,
                                          const hgr__onnx_tensor_t* scale, const hgr__onnx_tensor_t* zero,
                                          int64_t axis, hgr__onnx_tensor_t** out);

/* Fusion helpers: the live node that alone consumes v (uses == 1 and not a graph
 * output), or NULL; and marking a later node as done by this one (its outputs are
 * set by the caller through hgr__onnx_set_* on the other node's context). */
const Onnx__NodeProto* hgr__onnx_sole_consumer(const hgr__onnx_node_t* node, const hgr__onnx_value_t* v,
                                               uint32_t* out_index);
/* The value called name in loader's scope or, where the scope does not define it,
 * the nearest enclosing one's; or NULL. */
hgr__onnx_value_t* hgr__onnx_find_value(const hgr__onnx_loader_t* loader, const char* name);
/* The value called name that loader's own graph defines, or NULL. */
hgr__onnx_value_t* hgr__onnx_find_local(const hgr__onnx_loader_t* loader, const char* name);
/* Notes that a node needed v at load, which is not a constant: the graph inputs v
 * derives from through values that are not constants decide shapes
 * (hgr__onnx_import's out_deciding). RESOURCE_EXHAUSTED. */
hgr_status_t hgr__onnx_note_deciding(hgr__onnx_loader_t* loader, const hgr__onnx_value_t* v);
/* Marks node index as fused into node (counted in the report), and defines its
 * first output as the same value as `result` (NULL: leaves it undefined, for a
 * node inside a fused chain whose output only the chain used). */
hgr_status_t hgr__onnx_fuse_into(hgr__onnx_node_t* node, uint32_t index, const hgr__onnx_value_t* result);
/* Whether node index is fused already (the loader skips it). */
bool hgr__onnx_is_fused(const hgr__onnx_loader_t* loader, uint32_t index);

/* ---- decisions at run time (onnx_stage.c; onnx_model.h has the stages) ---------------------- */

/* The most elements a decision may hold (an If's condition holds one, a Reshape's
 * shape a few): a bigger value needed at load is refused as one not known. */
#define HGR__ONNX_MAX_DECISION_ELEMENTS 4096
/* Integer and bool graph inputs of at most this many elements that a needed value
 * derives from are specialized on by value (the model object), rather than decided
 * at run time. */
#define HGR__ONNX_SMALL_INPUT_ELEMENTS 16

/* For a node that needs v's value at load: OK with v->constant set when it is a
 * constant or an earlier stage decided it; the stage's end (an error status the
 * loader takes as such: loader->stage->cut) when this import runs in stages and v
 * becomes its decision; OK with v->constant NULL otherwise (not in stages, v in a
 * subgraph, too big, or taken from small graph inputs), for the caller to refuse
 * (its refusal notes the deciding inputs). */
hgr_status_t hgr__onnx_decide(const hgr__onnx_node_t* node, hgr__onnx_value_t* v);
/* hgr__onnx_decide for a condition a Loop's body computes: a cut there carries, after
 * the model's graph's values, the Loop's own run-time values in_flight (count: its
 * carried values and scan outputs so far). Between iterations the Loop asks
 * hgr__onnx_stage_resumes_in_loop, and where the last stage ended there, starts this
 * one with hgr__onnx_stage_start_in_loop over the same values. */
hgr_status_t hgr__onnx_decide_in_loop(const hgr__onnx_node_t* node, hgr__onnx_value_t* v,
                                      hgr__onnx_value_t* const* in_flight, size_t count);
bool hgr__onnx_stage_resumes_in_loop(const hgr__onnx_node_t* node);
hgr_status_t hgr__onnx_stage_start_in_loop(hgr__onnx_node_t* node, hgr__onnx_value_t* const* in_flight,
                                           size_t count);
/* Whether the value v, which a node of loader needs at load, derives from graph
 * inputs (of the model's graph) that are integers or flags, few and small
 * (HGR__ONNX_SMALL_INPUT_ELEMENTS): then they are noted as deciding (the model
 * object specializes on their values: an If on a sample rate); otherwise they are
 * left unnoted, for v to be decided or selected at run time. RESOURCE_EXHAUSTED. */
hgr_status_t hgr__onnx_from_small_inputs(hgr__onnx_loader_t* loader, const hgr__onnx_value_t* v, bool* out_small);
/* For an op whose output extents follow from its data: the count the stage before
 * found (*out_count >= 0), or -1 when the op runs in this stage: it then adds its op
 * at capacity and ends the stage with hgr__onnx_stage_after. UNIMPLEMENTED naming
 * the node when the import does not run in stages or the node is in a subgraph. */
hgr_status_t hgr__onnx_stage_count(hgr__onnx_node_t* node, int64_t* out_count);
/* Ends the stage after node: count (a scalar) is the decision, payloads (at most 7)
 * its results at capacity. Returns the stage's end (see hgr__onnx_decide). */
hgr_status_t hgr__onnx_stage_after(hgr__onnx_node_t* node, hgr_value_t count, const hgr_value_t* payloads,
                                   uint32_t payload_count);
/* Payload k of the stage before, at its actual shape: an input of this stage's graph. */
hgr_status_t hgr__onnx_stage_payload(hgr__onnx_node_t* node, uint32_t k, hgr_dtype_t dtype, const int64_t* shape,
                                     int32_t ndim, hgr_value_t* out_value);
/* For the loader: whether the graph of this import starts before node index (the
 * last stage ended there); hgr__onnx_stage_start then starts it, in a new builder
 * whose inputs are the carried values. hgr__onnx_stage_end marks the stage's
 * outputs after a cut. */
bool hgr__onnx_stage_starts_at(const hgr__onnx_loader_t* loader, uint32_t index);
hgr_status_t hgr__onnx_stage_start(hgr__onnx_loader_t* loader);
hgr_status_t hgr__onnx_stage_end(hgr__onnx_loader_t* loader);

/* ---- scopes (onnx_scope.c) ------------------------------------------------------------------ */

/* Per node of loader's graph with subgraphs, the names they read from the scopes
 * around them (loader->captures; left NULL when no node has a subgraph).
 * INVALID_ARGUMENT for graphs nested deeper than HGR_ONNX_MAX_GRAPH_DEPTH,
 * RESOURCE_EXHAUSTED. */
hgr_status_t hgr__onnx_find_captures(hgr__onnx_loader_t* loader);
/* Node index's captures, or NULL when the graph has no subgraph. */
const hgr__onnx_names_t* hgr__onnx_captures_of(const hgr__onnx_loader_t* loader, uint32_t index);

/* ---- subgraphs (onnx_load.c), for If, Loop and Scan (onnx_import_control.c) ---------------- */

/* A graph attr of a node, opened once and imported once (an If's branch) or once per
 * iteration (a Loop's or Scan's body), each import into the node's builder through
 * the loader that imports the model's graph, in a scope of its own. */
typedef struct hgr__onnx_subgraph_t {
  hgr__onnx_node_t* owner;              /* the If, Loop or Scan node */
  const char* attr;                     /* "then_branch", "body", ... */
  const Onnx__GraphProto* graph;
  hgr__onnx_tensor_t** initializers;    /* the graph's, decoded once for every import */
} hgr__onnx_subgraph_t;

/* Opens owner's graph attr `attr`: INVALID_ARGUMENT naming it when the node lacks it
 * or it is not a graph; errors decoding its initializers. Close it also on failure. */
hgr_status_t hgr__onnx_subgraph_open(hgr__onnx_node_t* owner, const char* attr, hgr__onnx_subgraph_t* out_subgraph);
void hgr__onnx_subgraph_close(hgr__onnx_subgraph_t* subgraph);
/* Imports subgraph once: its graph inputs take the values of inputs (input_count, the
 * graph's input count), constants borrowed for the import; its nodes are imported as
 * the model's are, names they do not define read from the enclosing scopes; its
 * outputs are copied into outputs (the graph's output count; release each with
 * hgr__onnx_value_release). iteration (-1: none) names the copy in messages. The
 * first known_outputs outputs must be known at load: one that is not is noted as
 * deciding (hgr__onnx_note_deciding) and copied without a constant, for the caller
 * to refuse. Errors: INVALID_ARGUMENT (counts, nesting deeper than
 * HGR_ONNX_MAX_GRAPH_DEPTH), RESOURCE_EXHAUSTED (also beyond
 * HGR_ONNX_MAX_UNROLLED_NODES), and any error of the subgraph's nodes, whose labels
 * say where they are. */
hgr_status_t hgr__onnx_subgraph_import(hgr__onnx_subgraph_t* subgraph, int64_t iteration,
                                       const hgr__onnx_value_t* inputs, uint32_t input_count, uint32_t known_outputs,
                                       hgr__onnx_value_t* outputs);
/* Checks, before a Loop or Scan unrolls iterations copies of subgraph, that they stay
 * within HGR_ONNX_MAX_UNROLLED_NODES with what the load imported from subgraphs
 * before: RESOURCE_EXHAUSTED naming the node, the iterations, the nodes and the limit. */
hgr_status_t hgr__onnx_subgraph_check_unroll(const hgr__onnx_subgraph_t* subgraph, uint64_t iterations);
/* Frees what a value copied out of a subgraph owns (its constant), leaving it empty. */
void hgr__onnx_value_release(hgr__onnx_value_t* value);

/* Normalizes an axis in [-rank, rank) (INVALID_ARGUMENT naming the attr or input). */
hgr_status_t hgr__onnx_axis(const hgr__onnx_node_t* node, const char* what, int64_t axis, int32_t rank,
                            int32_t* out_axis);

/* Broadcasts shapes a and b as NumPy does into out (INVALID_ARGUMENT naming the node
 * when they do not). */
hgr_status_t hgr__onnx_broadcast(const hgr__onnx_node_t* node, const int64_t* a, int32_t a_ndim, const int64_t* b,
                                 int32_t b_ndim, int64_t* out, int32_t* out_ndim);

/* ---- host evaluation by index maps (onnx_fold_map.c) ------------------------------------ */

enum {
  HGR__ONNX_MAP_SLICE,
  HGR__ONNX_MAP_BROADCAST,
  HGR__ONNX_MAP_TILE,
  HGR__ONNX_MAP_PAD_CONSTANT,
  HGR__ONNX_MAP_PAD_EDGE,
  HGR__ONNX_MAP_PAD_REFLECT,
  HGR__ONNX_MAP_TRILU
};

/* Where an output element comes from. SLICE: start + coord * step; the pads: coord -
 * start (start = the before pads), outside the input the fill value, the edge or the
 * mirror; BROADCAST: the input right-aligned, its extents of 1 repeated; TILE: coord
 * modulo the extent; TRILU: the element itself where column - row >= start[0]
 * (step[0] 1: upper) or <= start[0] (step[0] 0: lower), else the fill. */
typedef struct hgr__onnx_source_map_t {
  int kind;
  const hgr__onnx_tensor_t* in;
  int64_t start[HGR_MAX_DIMS];
  int64_t step[HGR_MAX_DIMS];
  const void* fill; /* PAD_CONSTANT: one element of the input's type */
} hgr__onnx_source_map_t;

/* A tensor shaped shape (ndim) of the input's type, by map, made with the loader's
 * allocator. Beyond 2^26 elements
 * UNIMPLEMENTED (a fold then leaves the node to the device); a source index outside
 * the input INVALID_ARGUMENT naming it. */
hgr_status_t hgr__onnx_map_tensor(const hgr__onnx_node_t* node, const hgr__onnx_source_map_t* map,
                                  const int64_t* shape, int32_t ndim, hgr__onnx_tensor_t** out_tensor);
/* Output k of node: map's result (hgr__onnx_map_tensor). */
hgr_status_t hgr__onnx_fold_map(hgr__onnx_node_t* node, const hgr__onnx_source_map_t* map, const int64_t* shape,
                                int32_t ndim, uint32_t k);

/* ---- the op registry (onnx_ops.c) -------------------------------------------------------- */

/* The domains hgr reads: the default one ("", "ai.onnx"), every op of it in the
 * families above; and ONNX Runtime's contrib domain, only the ops of
 * hgr__onnx_ops_contrib. */
#define HGR__ONNX_CONTRIB_DOMAIN "com.microsoft"
/* The contrib domain's opset versions hgr reads. */
#define HGR__ONNX_CONTRIB_MIN_OPSET 1
#define HGR__ONNX_CONTRIB_MAX_OPSET 1
/* (onnx_node.c, below the registry: importers and fusion look-ahead ask them too) */
bool hgr__onnx_domain_is_default(const char* domain); /* NULL, "" or "ai.onnx" */
bool hgr__onnx_domain_is_contrib(const char* domain); /* "com.microsoft" */
/* The ONNX op called name of domain (NULL or "": the default one), or NULL (also
 * for every op of a domain hgr does not read). */
const hgr__onnx_op_t* hgr__onnx_op_find(const char* domain, const char* name);
/* Every supported op's name of domain, comma-separated, sorted ("" for a domain hgr
 * does not read; NULL when out of memory), for status messages: from the system
 * allocator, as statuses are (hgr/allocator.h); free it with
 * hgr__free(hgr_allocator_system(), ...). */
char* hgr__onnx_op_list(const char* domain);

#endif /* HGR_ONNX_INTERNAL_H_ */
