/* ONNX Runtime's contrib ops (domain com.microsoft) through the ONNX loader, on
 * models this test writes with protobuf-c: the ops hgr reads (Gelu, FastGelu,
 * BiasGelu, QuickGelu, BiasAdd, SkipLayerNormalization,
 * SkipSimplifiedLayerNormalization, EmbedLayerNormalization, Attention,
 * MultiHeadAttention, RotaryEmbedding) load; every other op of that domain, and every
 * op of other domains, is refused naming op and domain; a contrib node without the
 * domain's opset import, or at an opset hgr does not read, is refused; the
 * contrib ops' own refusals name the node, the input or output and what is wrong.
 * (python/tests/test_contrib_ops.py checks the values against ONNX Runtime.)
 *
 *   test_onnx_contrib        the loader only (no device)
 *   test_onnx_contrib run    SkipLayerNormalization (with its sum output) followed
 *                            by FastGelu, and SkipSimplifiedLayerNormalization;
 *                            Attention with a padding mask, causal and not; on
 *                            pocl:0 against plain C in double */
#include <math.h>
#include <string.h>

#include "onnx/onnx.pb-c.h"
#include "testlib.h"

/* ---- writing models: every block from calloc, listed, freed by arena_free ---------- */

static void** arena;
static size_t arena_count, arena_capacity;

static void* grab(size_t bytes) {
  void* block = calloc(1, bytes ? bytes : 1);
  assert_non_null(block);
  if (arena_count == arena_capacity) {
    arena_capacity = arena_capacity ? 2 * arena_capacity : 64;
    arena = realloc(arena, arena_capacity * sizeof(*arena));
    assert_non_null(arena);
  }
  arena[arena_count++] = block;
  return block;
}

static void arena_free(void) {
  for (size_t i = 0; i < arena_count; ++i) free(arena[i]);
  free(arena);
  arena = NULL;
  arena_count = arena_capacity = 0;
}

/* "a,b,,c" as names ("" for an omitted one). */
static char** name_list(const char* csv, size_t* out_count) {
  size_t count = 1;
  for (const char* c = csv; *c; ++c) count += *c == ',';
  char** names = grab(count * sizeof(char*));
  *out_count = 0;
  for (const char* start = csv;;) {
    const char* comma = strchr(start, ',');
    size_t length = comma ? (size_t)(comma - start) : strlen(start);
    names[*out_count] = grab(length + 1);
    memcpy(names[(*out_count)++], start, length);
    if (!comma) break;
    start = comma + 1;
  }
  return names;
}

enum { MAX_ITEMS = 16 };

typedef struct model_t {
  Onnx__ModelProto* model;
  Onnx__GraphProto* graph;
} model_t;

/* A model importing the default domain at opset 17 and, where contrib_version > 0,
 * com.microsoft at contrib_version. */
static model_t model_new(int64_t contrib_version) {
  model_t m;
  m.model = grab(sizeof(*m.model));
  onnx__model_proto__init(m.model);
  m.model->has_ir_version = 1;
  m.model->ir_version = 8;
  m.model->opset_import = grab(2 * sizeof(*m.model->opset_import));
  const char* domains[2] = {"", "com.microsoft"};
  int64_t versions[2] = {17, contrib_version};
  for (int i = 0; i < (contrib_version > 0 ? 2 : 1); ++i) {
    Onnx__OperatorSetIdProto* o = grab(sizeof(*o));
    onnx__operator_set_id_proto__init(o);
    o->domain = (char*)domains[i];
    o->has_version = 1;
    o->version = versions[i];
    m.model->opset_import[m.model->n_opset_import++] = o;
  }
  m.graph = grab(sizeof(*m.graph));
  onnx__graph_proto__init(m.graph);
  m.graph->name = "contrib";
  m.graph->node = grab(MAX_ITEMS * sizeof(*m.graph->node));
  m.graph->input = grab(MAX_ITEMS * sizeof(*m.graph->input));
  m.graph->output = grab(MAX_ITEMS * sizeof(*m.graph->output));
  m.graph->initializer = grab(MAX_ITEMS * sizeof(*m.graph->initializer));
  m.model->graph = m.graph;
  return m;
}

static Onnx__ValueInfoProto* typed_value_info(const char* name, int32_t elem_type, const int64_t* shape, int ndim) {
  Onnx__ValueInfoProto* v = grab(sizeof(*v));
  onnx__value_info_proto__init(v);
  v->name = (char*)name;
  if (ndim < 0) return v; /* an output: no type */
  Onnx__TypeProto* type = grab(sizeof(*type));
  Onnx__TypeProto__Tensor* tensor = grab(sizeof(*tensor));
  Onnx__TensorShapeProto* dims = grab(sizeof(*dims));
  onnx__type_proto__init(type);
  onnx__type_proto__tensor__init(tensor);
  onnx__tensor_shape_proto__init(dims);
  type->value_case = ONNX__TYPE_PROTO__VALUE_TENSOR_TYPE;
  type->tensor_type = tensor;
  tensor->has_elem_type = 1;
  tensor->elem_type = elem_type;
  tensor->shape = dims;
  dims->dim = grab((size_t)(ndim ? ndim : 1) * sizeof(*dims->dim));
  for (int d = 0; d < ndim; ++d) {
    Onnx__TensorShapeProto__Dimension* dim = grab(sizeof(*dim));
    onnx__tensor_shape_proto__dimension__init(dim);
    dim->value_case = ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_VALUE;
    dim->dim_value = shape[d];
    dims->dim[dims->n_dim++] = dim;
  }
  v->type = type;
  return v;
}

static void add_typed_input(model_t* m, const char* name, int32_t elem_type, const int64_t* shape, int ndim) {
  m->graph->input[m->graph->n_input++] = typed_value_info(name, elem_type, shape, ndim);
}

static void add_input(model_t* m, const char* name, const int64_t* shape, int ndim) {
  add_typed_input(m, name, ONNX__TENSOR_PROTO__DATA_TYPE__FLOAT, shape, ndim);
}

static void add_output(model_t* m, const char* name) {
  m->graph->output[m->graph->n_output++] = typed_value_info(name, 0, NULL, -1);
}

/* A float initializer shaped dims (ndim of them; values: the floats, which the
 * caller keeps alive). */
static void add_tensor(model_t* m, const char* name, const float* values, const int64_t* dims, int ndim) {
  Onnx__TensorProto* t = grab(sizeof(*t));
  onnx__tensor_proto__init(t);
  t->name = (char*)name;
  t->has_data_type = 1;
  t->data_type = ONNX__TENSOR_PROTO__DATA_TYPE__FLOAT;
  t->dims = grab((size_t)ndim * sizeof(*t->dims));
  size_t count = 1;
  for (int d = 0; d < ndim; ++d) count *= (size_t)(t->dims[d] = dims[d]);
  t->n_dims = (size_t)ndim;
  t->has_raw_data = 1;
  t->raw_data.data = (uint8_t*)values;
  t->raw_data.len = count * sizeof(float);
  m->graph->initializer[m->graph->n_initializer++] = t;
}

static void add_vector(model_t* m, const char* name, const float* values, int64_t count) {
  add_tensor(m, name, values, &count, 1);
}

/* A node of domain ("" the default), its inputs and outputs as "a,b,,c". */
static Onnx__NodeProto* add_node(model_t* m, const char* domain, const char* op, const char* inputs,
                                 const char* outputs) {
  Onnx__NodeProto* n = grab(sizeof(*n));
  onnx__node_proto__init(n);
  n->op_type = (char*)op;
  n->domain = (char*)domain;
  n->input = name_list(inputs, &n->n_input);
  n->output = name_list(outputs, &n->n_output);
  n->name = n->output[0];
  n->attribute = grab(4 * sizeof(*n->attribute));
  m->graph->node[m->graph->n_node++] = n;
  return n;
}

static void add_attr_float(Onnx__NodeProto* n, const char* name, float value) {
  Onnx__AttributeProto* a = grab(sizeof(*a));
  onnx__attribute_proto__init(a);
  a->name = (char*)name;
  a->has_type = 1;
  a->type = ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__FLOAT;
  a->has_f = 1;
  a->f = value;
  n->attribute[n->n_attribute++] = a;
}

static void add_attr_int(Onnx__NodeProto* n, const char* name, int64_t value) {
  Onnx__AttributeProto* a = grab(sizeof(*a));
  onnx__attribute_proto__init(a);
  a->name = (char*)name;
  a->has_type = 1;
  a->type = ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__INT;
  a->has_i = 1;
  a->i = value;
  n->attribute[n->n_attribute++] = a;
}

static uint8_t* pack(const model_t* m, size_t* out_size) {
  *out_size = onnx__model_proto__get_packed_size(m->model);
  uint8_t* bytes = grab(*out_size);
  onnx__model_proto__pack(m->model, bytes);
  return bytes;
}

static hgr_status_t load(const model_t* m) {
  size_t size;
  uint8_t* bytes = pack(m, &size);
  hgr_graph_t* graph = (hgr_graph_t*)&graph;
  hgr_params_t* params = (hgr_params_t*)&params;
  hgr_status_t status = hgr_onnx_load_memory(bytes, size, NULL, NULL, &graph, &params, NULL);
  if (status) {
    assert_null(graph);
    assert_null(params);
  } else {
    hgr_graph_release(graph);
    hgr_params_release(params);
  }
  return status;
}

#define MS "com.microsoft"
static const int64_t x_shape[3] = {2, 3, 8};
static const float vector8[8] = {0.5f, -1, 2, 0.25f, 1, -0.5f, 1.5f, 3};

/* x [2, 3, 8] and skip [2, 3, 8] inputs; gamma, beta, bias [8] initializers. */
static model_t residual_model(int64_t contrib_version) {
  model_t m = model_new(contrib_version);
  add_input(&m, "x", x_shape, 3);
  add_input(&m, "skip", x_shape, 3);
  add_vector(&m, "gamma", vector8, 8);
  add_vector(&m, "beta", vector8, 8);
  add_vector(&m, "bias", vector8, 8);
  return m;
}

/* ---- what loads ---------------------------------------------------------------------- */

static void contrib_ops_load(void** state) {
  (void)state;
  model_t m = residual_model(1);
  add_node(&m, MS, "Gelu", "x", "g1");
  add_node(&m, MS, "FastGelu", "g1,bias", "g2");
  add_node(&m, MS, "FastGelu", "g2", "g3");
  add_node(&m, MS, "BiasGelu", "g3,bias", "g4");
  add_attr_float(add_node(&m, MS, "QuickGelu", "g4", "g5"), "alpha", 1.5f);
  add_node(&m, MS, "BiasAdd", "g5,bias,skip", "g6");
  add_node(&m, MS, "SkipLayerNormalization", "g6,skip,gamma,beta,bias", "n1,,,sum");
  add_node(&m, MS, "SkipSimplifiedLayerNormalization", "n1,sum,gamma", "y");
  add_node(&m, "", "Relu", "y", "z"); /* beside the default domain */
  add_output(&m, "z");
  add_output(&m, "sum");
  ASSERT_OK(load(&m));
  arena_free();
}

/* ---- refusals -------------------------------------------------------------------------- */

static void other_contrib_ops_are_refused_with_their_domain(void** state) {
  (void)state;
  static const char* const refused[] = {"GroupQueryAttention", "PackedAttention", "QAttention",
                                        "SkipGroupNorm", "Relu"};
  for (size_t i = 0; i < sizeof(refused) / sizeof(refused[0]); ++i) {
    model_t m = residual_model(1);
    add_node(&m, MS, refused[i], "x", "y");
    add_output(&m, "y");
    char what[96];
    snprintf(what, sizeof(what), "op '%s' of domain 'com.microsoft' is not supported", refused[i]);
    ASSERT_STATUS(load(&m), HGR_STATUS_UNIMPLEMENTED, "node 0 'y' (com.microsoft.", what,
                  "of that domain hgr supports: Attention, BiasAdd, BiasGelu, DynamicQuantizeLSTM, "
                  "DynamicQuantizeMatMul, EmbedLayerNormalization, FastGelu, FusedMatMul, Gelu, MatMulIntegerToFloat, "
                  "MultiHeadAttention, QEmbedLayerNormalization, QGemm, QLinearAdd, QLinearAveragePool, QLinearConcat, "
                  "QLinearGlobalAveragePool, QLinearLeakyRelu, QLinearMul, QLinearSigmoid, QuickGelu, RotaryEmbedding, "
                  "SkipLayerNormalization, SkipSimplifiedLayerNormalization");
    arena_free();
  }
}

static void ops_of_other_domains_are_refused_with_their_domain(void** state) {
  (void)state;
  static const char* const domains[] = {"ai.onnx.ml", "com.example", "com.microsoft.nchwc"};
  for (size_t i = 0; i < sizeof(domains) / sizeof(domains[0]); ++i) {
    model_t m = residual_model(1);
    add_node(&m, domains[i], "Gelu", "x", "y");
    add_output(&m, "y");
    char what[96];
    snprintf(what, sizeof(what), "op 'Gelu' of domain '%s' is not supported", domains[i]);
    ASSERT_STATUS(load(&m), HGR_STATUS_UNIMPLEMENTED, "node 0 'y' (Gelu, opset 17)", what,
                  "hgr reads the default domain (ai.onnx) and some ops of com.microsoft");
    arena_free();
  }
}

static void contrib_opset_must_be_imported_at_a_version_hgr_reads(void** state) {
  (void)state;
  model_t m = residual_model(0);
  add_node(&m, MS, "Gelu", "x", "y");
  add_output(&m, "y");
  ASSERT_STATUS(load(&m), HGR_STATUS_INVALID_ARGUMENT, "node 0 'y' (com.microsoft.Gelu, opset 0)",
                "the node is of domain 'com.microsoft', but the model imports no opset of it");
  arena_free();
  m = residual_model(2);
  add_node(&m, MS, "Gelu", "x", "y");
  add_output(&m, "y");
  ASSERT_STATUS(load(&m), HGR_STATUS_UNIMPLEMENTED, "(com.microsoft.Gelu, opset 2)",
                "the model imports opset 2 of domain 'com.microsoft'; hgr reads opsets 1 to 1 of it");
  arena_free();
  /* An import of another version of the domain is no error while no node uses it. */
  m = residual_model(2);
  add_node(&m, "", "Relu", "x", "y");
  add_output(&m, "y");
  ASSERT_OK(load(&m));
  arena_free();
}

static void contrib_ops_name_what_they_refuse(void** state) {
  (void)state;
  static const float vector5[5] = {0};
  model_t m = residual_model(1);
  add_vector(&m, "short", vector5, 5);
  add_node(&m, MS, "FastGelu", "x,short", "y");
  add_output(&m, "y");
  ASSERT_STATUS(load(&m), HGR_STATUS_INVALID_ARGUMENT, "node 0 'y' (com.microsoft.FastGelu, opset 1)",
                "input 1 'short' (bias) must be 1-D of the last extent 8 of input 0, but it has 1 dimensions and "
                "extent 5");
  arena_free();

  m = residual_model(1);
  add_node(&m, MS, "BiasGelu", "x", "y");
  add_output(&m, "y");
  ASSERT_STATUS(load(&m), HGR_STATUS_INVALID_ARGUMENT, "(com.microsoft.BiasGelu, opset 1)",
                "input 1 is required, but the node lists fewer inputs");
  arena_free();

  m = residual_model(1);
  add_input(&m, "wide", (const int64_t[]){2, 4, 8}, 3);
  add_node(&m, MS, "SkipLayerNormalization", "x,wide,gamma", "y");
  add_output(&m, "y");
  ASSERT_STATUS(load(&m), HGR_STATUS_INVALID_ARGUMENT, "(com.microsoft.SkipLayerNormalization, opset 1)",
                "shapes do not broadcast");
  arena_free();

  m = residual_model(1);
  add_input(&m, "bigger", (const int64_t[]){4, 2, 3, 8}, 4);
  add_node(&m, MS, "BiasAdd", "x,bias,bigger", "y");
  add_output(&m, "y");
  ASSERT_STATUS(load(&m), HGR_STATUS_INVALID_ARGUMENT, "(com.microsoft.BiasAdd, opset 1)",
                "input 2 'bigger' (skip) does not broadcast to the shape of input 0");
  arena_free();

  static const char* const statistics[2] = {"y,mean", "y,,inv"};
  static const char* const named[2] = {"output 1 'mean' (mean) is used", "output 2 'inv' (inv_std_var) is used"};
  for (int k = 0; k < 2; ++k) {
    m = residual_model(1);
    add_node(&m, MS, k ? "SkipSimplifiedLayerNormalization" : "SkipLayerNormalization", "x,skip,gamma",
             statistics[k]);
    add_output(&m, "y");
    add_output(&m, k ? "inv" : "mean");
    ASSERT_STATUS(load(&m), HGR_STATUS_UNIMPLEMENTED, named[k],
                  "hgr computes only outputs 0 (output) and 3 (input_skip_bias_sum)");
    arena_free();
  }
  /* Declared but unused, they are no error (ONNX Runtime's optimizer leaves them empty). */
  m = residual_model(1);
  add_node(&m, MS, "SkipLayerNormalization", "x,skip,gamma", "y,mean,inv");
  add_output(&m, "y");
  ASSERT_OK(load(&m));
  arena_free();

  m = residual_model(1);
  add_attr_float(add_node(&m, MS, "Gelu", "x", "y"), "approximate", 1);
  add_output(&m, "y");
  ASSERT_STATUS(load(&m), HGR_STATUS_UNIMPLEMENTED, "(com.microsoft.Gelu, opset 1)", "approximate");
  arena_free();
}

/* ---- the attention ops, the embeddings ----------------------------------------------- */

enum { ROWS = 6, HIDDEN = 8, COUNT = ROWS * HIDDEN };
#define INT32_TYPE ONNX__TENSOR_PROTO__DATA_TYPE__INT32
#define INT64_TYPE ONNX__TENSOR_PROTO__DATA_TYPE__INT64
enum { QKV = 3 * HIDDEN };
static float weights[HIDDEN * QKV], bias24[QKV], tables[16 * HIDDEN];

/* residual_model's plus: weights [8, 24], bias24 [24], a [2, 3] int32 mask, [2]
 * int32 lengths, cos and sin [16, 2] (head size 4), int64 positions [2, 3]. */
static model_t attention_model(void) {
  for (int i = 0; i < HIDDEN * QKV; ++i) weights[i] = (float)((i * 37) % 17 - 8) / 16;
  for (int i = 0; i < QKV; ++i) bias24[i] = (float)(i % 5 - 2) / 8;
  for (int i = 0; i < 16 * HIDDEN; ++i) tables[i] = (float)((i * 13) % 11 - 5) / 8;
  model_t m = residual_model(1);
  add_tensor(&m, "weights", weights, (const int64_t[]){HIDDEN, QKV}, 2);
  add_vector(&m, "bias24", bias24, QKV);
  add_tensor(&m, "cos", tables, (const int64_t[]){16, 2}, 2);
  add_tensor(&m, "table", tables, (const int64_t[]){16, HIDDEN}, 2);
  add_typed_input(&m, "mask", INT32_TYPE, (const int64_t[]){2, 3}, 2);
  add_typed_input(&m, "lengths", INT32_TYPE, (const int64_t[]){2}, 1);
  add_typed_input(&m, "positions", INT64_TYPE, (const int64_t[]){2, 3}, 2);
  return m;
}

static void attention_ops_load(void** state) {
  (void)state;
  model_t m = attention_model();
  add_attr_int(add_node(&m, MS, "Attention", "x,weights,bias24,mask", "a1"), "num_heads", 2);
  Onnx__NodeProto* n = add_node(&m, MS, "Attention", "a1,weights,bias24,lengths", "a2");
  add_attr_int(n, "num_heads", 2);
  add_attr_int(n, "unidirectional", 1);
  add_attr_int(add_node(&m, MS, "Attention", "a2,weights", "a3"), "num_heads", 4);
  add_attr_int(add_node(&m, MS, "MultiHeadAttention", "a3,x,x,bias24,mask", "a4"), "num_heads", 2);
  add_attr_int(add_node(&m, MS, "RotaryEmbedding", "a4,positions,cos,cos", "r"), "num_heads", 2);
  add_node(&m, MS, "EmbedLayerNormalization", "mask,,table,table,,gamma,beta,mask", "e,count,sum");
  add_output(&m, "r");
  add_output(&m, "e");
  add_output(&m, "count");
  ASSERT_OK(load(&m));
  arena_free();
}

/* One refused node: op on inputs (and, with attr, attr = value), num_heads 2. */
typedef struct refusal_t {
  const char* op;
  const char* inputs;
  const char* outputs;
  const char* attr;
  int64_t value;
  hgr_status_code_t code;
  const char* message;
} refusal_t;

static void attention_ops_name_what_they_refuse(void** state) {
  (void)state;
  static const refusal_t refusals[] = {
      {"Attention", "x,weights,bias24,,past", "y", NULL, 0, HGR_STATUS_UNIMPLEMENTED,
       "input 4 'past' (past) is given; hgr computes Attention without a KV cache"},
      {"Attention", "x,weights,bias24", "y,used", NULL, 0, HGR_STATUS_UNIMPLEMENTED,
       "output 1 'used' (present) is used; hgr computes only output 0 of Attention"},
      {"Attention", "x,weights,bias24", "y", "do_rotary", 1, HGR_STATUS_UNIMPLEMENTED,
       "attr 'do_rotary' = 1; hgr reads only 0"},
      {"Attention", "x,weights,bias24,mask3", "y", NULL, 0, HGR_STATUS_UNIMPLEMENTED,
       "input 3 'mask3' (mask_index) has 3 dimensions; hgr reads [2] (lengths: right padding) and [2, 3]"},
      {"Attention", "x,weights,bias24,skip", "y", NULL, 0, HGR_STATUS_INVALID_ARGUMENT,
       "input 3 'skip' (mask_index) is float; it must be int32"},
      {"Attention", "x,weights,bias24", "y", "num_heads", 3, HGR_STATUS_INVALID_ARGUMENT,
       "the hidden size 8 of Q and K is not a multiple of attr 'num_heads' = 3"},
      {"Attention", "x,weights,bias24", "y", "past_present_share_buffer", 1, HGR_STATUS_UNIMPLEMENTED,
       "attr 'past_present_share_buffer' = 1; hgr reads only 0"},
      {"MultiHeadAttention", "x", "y", NULL, 0, HGR_STATUS_UNIMPLEMENTED,
       "input 1 (key) is omitted; hgr reads separate query, key and value"},
      {"MultiHeadAttention", "x,x,x,,,,skip,skip", "y", NULL, 0, HGR_STATUS_UNIMPLEMENTED,
       "input 6 'skip' (past_key) is given; hgr computes MultiHeadAttention without a KV cache"},
      {"MultiHeadAttention", "x,x,x,,lengths,mask3", "y", NULL, 0, HGR_STATUS_INVALID_ARGUMENT,
       "input 5 'mask3' (attention_bias) must be float [2 or 1, 2 or 1, 3, 3]"},
      {"RotaryEmbedding", "x,positions,cos,cos", "y", "rotary_embedding_dim", 2, HGR_STATUS_UNIMPLEMENTED,
       "the rotary dimension 2 (attr 'rotary_embedding_dim') is not the head size 4; hgr rotates whole heads"},
      {"RotaryEmbedding", "x,positions,table,table", "y", NULL, 0, HGR_STATUS_UNIMPLEMENTED,
       "the rotary dimension 16 (twice input 2's last extent) is not the head size 4"},
      {"RotaryEmbedding", "x,positions,cos,cos", "y", "is_packed_batching", 1, HGR_STATUS_UNIMPLEMENTED,
       "attr 'is_packed_batching' = 1; hgr reads only 0"},
      {"EmbedLayerNormalization", "mask,mask,table,table,,gamma,beta", "y", NULL, 0, HGR_STATUS_INVALID_ARGUMENT,
       "inputs 1 (segment_ids) and 4 (segment_embedding) go together; the node gives one"},
      {"EmbedLayerNormalization", "mask,,table,cos,,gamma,beta", "y", NULL, 0, HGR_STATUS_INVALID_ARGUMENT,
       "input 3 'cos' (position_embedding) must be [rows, 8] (the word embedding's width)"},
      {"EmbedLayerNormalization", "x,,table,table,,gamma,beta", "y", NULL, 0, HGR_STATUS_INVALID_ARGUMENT,
       "input 0 'x' (input_ids) must be [batch, sequence]"},
  };
  for (size_t r = 0; r < sizeof(refusals) / sizeof(refusals[0]); ++r) {
    const refusal_t* c = &refusals[r];
    model_t m = attention_model();
    add_typed_input(&m, "mask3", INT32_TYPE, (const int64_t[]){2, 3, 3}, 3);
    add_input(&m, "past", (const int64_t[]){2, 2, 2, 3, 4}, 5);
    Onnx__NodeProto* n = add_node(&m, MS, c->op, c->inputs, c->outputs);
    if (strcmp(c->op, "EmbedLayerNormalization")) add_attr_int(n, "num_heads", 2);
    if (c->attr && strcmp(c->attr, "num_heads")) add_attr_int(n, c->attr, c->value);
    if (c->attr && !strcmp(c->attr, "num_heads")) n->attribute[0]->i = c->value;
    add_output(&m, "y");
    if (strchr(c->outputs, ',')) add_output(&m, "used");
    char op[96];
    snprintf(op, sizeof(op), "(com.microsoft.%s, opset 1)", c->op);
    ASSERT_STATUS(load(&m), c->code, op, c->message);
    arena_free();
  }
}

/* ---- on a device --------------------------------------------------------------------- */

/* Runs m on pocl:0 with its inputs (names, data, bytes: input_count of each),
 * reading its outputs (output_count, each output_bytes). */
static void run_on_pocl(hgr_instance_t* instance, const model_t* m, const char* const* names, const void* const* data,
                        const size_t* bytes, int input_count, float* const* outputs, int output_count,
                        size_t output_bytes) {
  size_t size;
  uint8_t* packed = pack(m, &size);
  hgr_graph_t* graph;
  hgr_params_t* params;
  ASSERT_OK(hgr_onnx_load_memory(packed, size, NULL, NULL, &graph, &params, NULL));
  hgr_executor_options_t eo;
  hgr_executor_options_init(&eo);
  const hgr_device_binding_t binding = {0, "pocl:0"};
  eo.bindings = &binding;
  eo.binding_count = 1;
  hgr_executor_t* executor;
  ASSERT_OK(hgr_executor_create(instance, graph, &eo, &executor));
  size_t unused;
  ASSERT_OK(hgr_executor_load_params(executor, params, &unused));
  for (int i = 0; i < input_count; ++i)
    ASSERT_OK(hgr_executor_set_input_by_name(executor, names[i], data[i], bytes[i]));
  ASSERT_OK(hgr_executor_run(executor));
  ASSERT_OK(hgr_executor_wait(executor));
  for (int k = 0; k < output_count; ++k)
    ASSERT_OK(hgr_executor_get_output(executor, (uint32_t)k, outputs[k], output_bytes));
  hgr_executor_release(executor);
  hgr_params_release(params);
  hgr_graph_release(graph);
}

/* run_on_pocl with x and skip [2, 3, 8], reading outputs y and sum. */
static void run_residual_on_pocl(hgr_instance_t* instance, const model_t* m, const float* x, const float* skip,
                                 float* y, float* sum) {
  run_on_pocl(instance, m, (const char* const[]){"x", "skip"}, (const void* const[]){x, skip},
              (const size_t[]){COUNT * sizeof(float), COUNT * sizeof(float)}, 2, (float* const[]){y, sum}, 2,
              COUNT * sizeof(float));
}

/* An instance whose pocl:0 the test runs on (the test skips without it). */
static hgr_instance_t* pocl_instance(void) {
  hgr_instance_t* instance;
  hgr_instance_options_t io;
  hgr_instance_options_init(&io);
  ASSERT_OK(hgr_instance_create(&io, &instance));
  hgr_test_require_devices(instance, (const char* const[]){"pocl:0"}, 1);
  return instance;
}

static void check_close(const char* what, const float* got, const double* want) {
  for (int i = 0; i < COUNT; ++i)
    if (!(fabs(got[i] - want[i]) <= 1e-5 + 1e-4 * fabs(want[i])))
      fail_msg("%s, element %d: got %.9g, want %.9g", what, i, (double)got[i], want[i]);
}

/* SkipLayerNormalization (beta, bias, epsilon 1e-3) then FastGelu with a bias; and
 * SkipSimplifiedLayerNormalization with a bias: against the formulas of ONNX
 * Runtime's documentation in double, to 1e-4 relative. */
static void skip_layer_norms_match_plain_arithmetic(void** state) {
  (void)state;
  hgr_instance_t* instance = pocl_instance();
  float x[COUNT], skip[COUNT], y[COUNT], sum[COUNT];
  hgr_test_rng_t rng;
  hgr_test_rng_seed(&rng, 37);
  for (int i = 0; i < COUNT; ++i) {
    x[i] = hgr_test_rng_float(&rng, -2, 3);
    skip[i] = hgr_test_rng_float(&rng, -1, 1);
  }
  static const float bias2[HIDDEN] = {0.1f, -0.2f, 0.3f, 0, 0.5f, -0.6f, 0.7f, -0.8f};
  for (int simplified = 0; simplified < 2; ++simplified) {
    model_t m = residual_model(1);
    add_vector(&m, "bias2", bias2, HIDDEN);
    if (simplified) {
      add_attr_float(add_node(&m, MS, "SkipSimplifiedLayerNormalization", "x,skip,gamma,bias", "y,,,sum"), "epsilon",
                     1e-3f);
    } else {
      add_attr_float(add_node(&m, MS, "SkipLayerNormalization", "x,skip,gamma,beta,bias", "n,,,sum"), "epsilon",
                     1e-3f);
      add_node(&m, MS, "FastGelu", "n,bias2", "y");
    }
    add_output(&m, "y");
    add_output(&m, "sum");
    run_residual_on_pocl(instance, &m, x, skip, y, sum);
    arena_free();
    double want_sum[COUNT], want_y[COUNT];
    for (int r = 0; r < ROWS; ++r) {
      double mean = 0, square = 0;
      for (int c = 0; c < HIDDEN; ++c) {
        int i = r * HIDDEN + c;
        want_sum[i] = (double)x[i] + skip[i] + vector8[c];
        mean += want_sum[i] / HIDDEN;
        square += want_sum[i] * want_sum[i] / HIDDEN;
      }
      double variance = square - mean * mean;
      for (int c = 0; c < HIDDEN; ++c) {
        int i = r * HIDDEN + c;
        if (simplified) {
          want_y[i] = want_sum[i] / sqrt(square + 1e-3) * vector8[c];
        } else {
          double n = (want_sum[i] - mean) / sqrt(variance + 1e-3) * vector8[c] + vector8[c] + bias2[c];
          want_y[i] = 0.5 * n * (1 + tanh(sqrt(2 / 3.14159265358979323846) * (n + 0.044715 * n * n * n)));
        }
      }
    }
    check_close(simplified ? "SkipSimplifiedLayerNormalization's sum" : "SkipLayerNormalization's sum", sum, want_sum);
    check_close(simplified ? "SkipSimplifiedLayerNormalization" : "SkipLayerNormalization then FastGelu", y, want_y);
  }
  hgr_instance_release(instance);
}

/* Attention (num_heads 2, weights [8, 24], bias [24]) on x [2, 3, 8] with a [2, 3]
 * padding mask, causal and not, against the formulas of ONNX Runtime's
 * documentation in double: a masked key adds -10000 to its score, a causal one
 * removes it; to 1e-4 relative. */
static void attention_matches_plain_arithmetic(void** state) {
  (void)state;
  hgr_instance_t* instance = pocl_instance();
  enum { B = 2, S = 3, N = 2, D = HIDDEN / N };
  float x[COUNT], y[COUNT];
  static const int32_t mask[B * S] = {1, 1, 1, 1, 0, 1}; /* a hole in the second batch */
  hgr_test_rng_t rng;
  hgr_test_rng_seed(&rng, 38);
  for (int i = 0; i < COUNT; ++i) x[i] = hgr_test_rng_float(&rng, -2, 2);
  for (int causal = 0; causal < 2; ++causal) {
    model_t m = attention_model();
    Onnx__NodeProto* n = add_node(&m, MS, "Attention", "x,weights,bias24,mask", "y");
    add_attr_int(n, "num_heads", N);
    add_attr_int(n, "unidirectional", causal);
    add_output(&m, "y");
    static const float skip[COUNT];
    static const int32_t lengths[B];
    static const int64_t positions[B * S];
    run_on_pocl(instance, &m, (const char* const[]){"x", "mask", "skip", "lengths", "positions"},
                (const void* const[]){x, mask, skip, lengths, positions},
                (const size_t[]){sizeof(x), sizeof(mask), sizeof(skip), sizeof(lengths), sizeof(positions)}, 5,
                (float* const[]){y}, 1, sizeof(y));
    arena_free();
    double qkv[B * S][QKV], want[COUNT];
    for (int r = 0; r < B * S; ++r)
      for (int c = 0; c < QKV; ++c) {
        qkv[r][c] = bias24[c];
        for (int k = 0; k < HIDDEN; ++k) qkv[r][c] += (double)x[r * HIDDEN + k] * weights[k * QKV + c];
      }
    for (int b = 0; b < B; ++b)
      for (int h = 0; h < N; ++h)
        for (int s = 0; s < S; ++s) {
          double scores[S], top = -INFINITY, total = 0;
          for (int t = 0; t < S; ++t) {
            double dot = 0;
            for (int d = 0; d < D; ++d) dot += qkv[b * S + s][h * D + d] * qkv[b * S + t][HIDDEN + h * D + d];
            scores[t] = dot / sqrt((double)D) + (mask[b * S + t] ? 0 : -10000.0) + (causal && t > s ? -INFINITY : 0);
            top = fmax(top, scores[t]);
          }
          for (int t = 0; t < S; ++t) total += scores[t] = exp(scores[t] - top);
          for (int d = 0; d < D; ++d) {
            double sum = 0;
            for (int t = 0; t < S; ++t) sum += scores[t] / total * qkv[b * S + t][2 * HIDDEN + h * D + d];
            want[(b * S + s) * HIDDEN + h * D + d] = sum;
          }
        }
    check_close(causal ? "causal Attention" : "Attention", y, want);
  }
  hgr_instance_release(instance);
}

int main(int argc, char** argv) {
  if (argc > 1 && !strcmp(argv[1], "run")) {
    const struct CMUnitTest tests[] = {cmocka_unit_test(skip_layer_norms_match_plain_arithmetic),
                                       cmocka_unit_test(attention_matches_plain_arithmetic)};
    return cmocka_run_group_tests(tests, NULL, NULL);
  }
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(contrib_ops_load),
      cmocka_unit_test(other_contrib_ops_are_refused_with_their_domain),
      cmocka_unit_test(ops_of_other_domains_are_refused_with_their_domain),
      cmocka_unit_test(contrib_opset_must_be_imported_at_a_version_hgr_reads),
      cmocka_unit_test(contrib_ops_name_what_they_refuse),
      cmocka_unit_test(attention_ops_load),
      cmocka_unit_test(attention_ops_name_what_they_refuse),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
