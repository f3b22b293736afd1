/* The ONNX loader against models this test writes itself with protobuf-c: what it
 * builds (folding, fusion, node counts, symbolic dims, external data, int64
 * narrowing) and, above all, hostile files: truncated protobuf, wrong field types,
 * negative or overflowing dims, raw_data shorter or longer than the shape, a huge
 * declared tensor with no data, name clashes, an output named twice, a cycle,
 * external data paths that leave the model's folder, an external offset past
 * 2 GiB. Every refusal must name what and where; nothing may leak (ASan).
 *
 *   test_onnx_load           the loader only (no device)
 *   test_onnx_load run       fused models (Conv+BatchNormalization+Add+Relu;
 *                            BatchNormalization+Mul+Add, Conv+Mul+Add) on pocl:0
 *                            against a plain-C computation; a BERT-like block with
 *                            LayerNormalization and GELU written out (opset 14)
 *                            against itself with the passes off; a bidirectional LSTM
 *                            with sequence_lens and a batch-first GRU against
 *                            tests/ref_rnn.c */
#include <fcntl.h>
#include <math.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "onnx/onnx.pb-c.h"
#include "ref_rnn.h"
#include "testlib.h"

/* ---- writing models ---------------------------------------------------------------- */

typedef struct model_t {
  Onnx__ModelProto model;
  Onnx__GraphProto graph;
  Onnx__OperatorSetIdProto opset;
  Onnx__OperatorSetIdProto* opsets[1];
  Onnx__NodeProto nodes[32]; /* a BERT-like block takes 29 */
  Onnx__NodeProto* node_list[32];
  Onnx__TensorProto inits[16];
  Onnx__TensorProto* init_list[16];
  Onnx__ValueInfoProto ins[4], outs[4];
  Onnx__ValueInfoProto *in_list[4], *out_list[4];
  Onnx__TypeProto types[8];
  Onnx__TypeProto__Tensor tensor_types[8];
  Onnx__TensorShapeProto shapes[8];
  Onnx__TensorShapeProto__Dimension dims[8][4];
  Onnx__TensorShapeProto__Dimension* dim_list[8][4];
  Onnx__AttributeProto attrs[32][8];
  Onnx__AttributeProto* attr_list[32][8];
  Onnx__StringStringEntryProto external[8][3];
  Onnx__StringStringEntryProto* external_list[8][3];
  char* io_names[32][8];
  int type_count;
} model_t;

static void model_init(model_t* m, int64_t opset) {
  memset(m, 0, sizeof(*m));
  onnx__model_proto__init(&m->model);
  onnx__graph_proto__init(&m->graph);
  onnx__operator_set_id_proto__init(&m->opset);
  m->model.has_ir_version = 1;
  m->model.ir_version = 8;
  m->opset.domain = "";
  m->opset.has_version = 1;
  m->opset.version = opset;
  m->opsets[0] = &m->opset;
  m->model.n_opset_import = 1;
  m->model.opset_import = m->opsets;
  m->model.graph = &m->graph;
  m->graph.name = "test";
  m->graph.node = m->node_list;
  m->graph.initializer = m->init_list;
  m->graph.input = m->in_list;
  m->graph.output = m->out_list;
}

/* A value info of element type elem and shape (dims < 0: symbolic "N"). */
static Onnx__ValueInfoProto* value_info(model_t* m, Onnx__ValueInfoProto* v, const char* name, int32_t elem,
                                        const int64_t* shape, int ndim) {
  int t = m->type_count++;
  onnx__value_info_proto__init(v);
  onnx__type_proto__init(&m->types[t]);
  onnx__type_proto__tensor__init(&m->tensor_types[t]);
  onnx__tensor_shape_proto__init(&m->shapes[t]);
  v->name = (char*)name;
  v->type = &m->types[t];
  m->types[t].value_case = ONNX__TYPE_PROTO__VALUE_TENSOR_TYPE;
  m->types[t].tensor_type = &m->tensor_types[t];
  m->tensor_types[t].has_elem_type = 1;
  m->tensor_types[t].elem_type = elem;
  m->tensor_types[t].shape = &m->shapes[t];
  m->shapes[t].n_dim = (size_t)ndim;
  m->shapes[t].dim = m->dim_list[t];
  for (int d = 0; d < ndim; ++d) {
    Onnx__TensorShapeProto__Dimension* dim = &m->dims[t][d];
    onnx__tensor_shape_proto__dimension__init(dim);
    if (shape[d] >= 0) {
      dim->value_case = ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_VALUE;
      dim->dim_value = shape[d];
    } else {
      dim->value_case = ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_PARAM;
      dim->dim_param = "N";
    }
    m->dim_list[t][d] = dim;
  }
  return v;
}

static void add_input(model_t* m, const char* name, const int64_t* shape, int ndim) {
  m->in_list[m->graph.n_input] = value_info(m, &m->ins[m->graph.n_input], name, 1, shape, ndim);
  ++m->graph.n_input;
}

static void add_output(model_t* m, const char* name) {
  Onnx__ValueInfoProto* v = &m->outs[m->graph.n_output];
  onnx__value_info_proto__init(v);
  v->name = (char*)name;
  m->out_list[m->graph.n_output++] = v;
}

/* A float initializer with raw_data (values may be NULL: no data at all). */
static Onnx__TensorProto* add_init(model_t* m, const char* name, const int64_t* dims, int ndim, const float* values,
                                   size_t count) {
  Onnx__TensorProto* t = &m->inits[m->graph.n_initializer];
  onnx__tensor_proto__init(t);
  t->name = (char*)name;
  t->has_data_type = 1;
  t->data_type = 1;
  t->n_dims = (size_t)ndim;
  t->dims = (int64_t*)dims;
  if (values) {
    t->has_raw_data = 1;
    t->raw_data.data = (uint8_t*)values;
    t->raw_data.len = count * sizeof(float);
  }
  m->init_list[m->graph.n_initializer++] = t;
  return t;
}

static Onnx__NodeProto* add_node(model_t* m, const char* op, const char* const* inputs, int n_in,
                                 const char* const* outputs, int n_out) {
  int k = (int)m->graph.n_node;
  Onnx__NodeProto* n = &m->nodes[k];
  onnx__node_proto__init(n);
  n->op_type = (char*)op;
  n->name = (char*)outputs[0];
  for (int i = 0; i < n_in; ++i) m->io_names[k][i] = (char*)inputs[i];
  n->n_input = (size_t)n_in;
  n->input = m->io_names[k];
  n->n_output = (size_t)n_out;
  n->output = (char**)outputs;
  n->attribute = m->attr_list[k];
  m->node_list[m->graph.n_node++] = n;
  return n;
}

static void add_attr_ints(model_t* m, Onnx__NodeProto* n, const char* name, const int64_t* values, size_t count) {
  int k = (int)(n - m->nodes);
  Onnx__AttributeProto* a = &m->attrs[k][n->n_attribute];
  onnx__attribute_proto__init(a);
  a->name = (char*)name;
  a->has_type = 1;
  a->type = ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__INTS;
  a->n_ints = count;
  a->ints = (int64_t*)values;
  m->attr_list[k][n->n_attribute++] = a;
}

/* An attr of node n: the next free one, of type and name. */
static Onnx__AttributeProto* new_attr(model_t* m, Onnx__NodeProto* n, const char* name,
                                      Onnx__AttributeProto__AttributeType type) {
  int k = (int)(n - m->nodes);
  Onnx__AttributeProto* a = &m->attrs[k][n->n_attribute];
  onnx__attribute_proto__init(a);
  a->name = (char*)name;
  a->has_type = 1;
  a->type = type;
  m->attr_list[k][n->n_attribute++] = a;
  return a;
}

static void add_attr_int(model_t* m, Onnx__NodeProto* n, const char* name, int64_t value) {
  Onnx__AttributeProto* a = new_attr(m, n, name, ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__INT);
  a->has_i = 1;
  a->i = value;
}

static void add_attr_float(model_t* m, Onnx__NodeProto* n, const char* name, float value) {
  Onnx__AttributeProto* a = new_attr(m, n, name, ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__FLOAT);
  a->has_f = 1;
  a->f = value;
}

static void add_attr_floats(model_t* m, Onnx__NodeProto* n, const char* name, const float* values, size_t count) {
  Onnx__AttributeProto* a = new_attr(m, n, name, ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__FLOATS);
  a->n_floats = count;
  a->floats = (float*)values;
}

static void add_attr_string(model_t* m, Onnx__NodeProto* n, const char* name, const char* value) {
  Onnx__AttributeProto* a = new_attr(m, n, name, ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__STRING);
  a->has_s = 1;
  a->s.data = (uint8_t*)value;
  a->s.len = strlen(value);
}

/* values: count strings, as ProtobufCBinaryData the caller keeps alive. */
static void add_attr_strings(model_t* m, Onnx__NodeProto* n, const char* name, ProtobufCBinaryData* values,
                             const char* const* texts, size_t count) {
  Onnx__AttributeProto* a = new_attr(m, n, name, ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__STRINGS);
  for (size_t i = 0; i < count; ++i) values[i] = (ProtobufCBinaryData){strlen(texts[i]), (uint8_t*)texts[i]};
  a->n_strings = count;
  a->strings = values;
}

/* Serializes m into a malloc'd buffer. */
static uint8_t* pack(const model_t* m, size_t* out_size) {
  *out_size = onnx__model_proto__get_packed_size(&m->model);
  uint8_t* bytes = malloc(*out_size ? *out_size : 1);
  assert_non_null(bytes);
  onnx__model_proto__pack(&m->model, bytes);
  return bytes;
}

static hgr_status_t load(const model_t* m, const char* base, const hgr_onnx_options_t* options, hgr_onnx_report_t* report) {
  size_t size;
  uint8_t* bytes = pack(m, &size);
  hgr_graph_t* graph = (hgr_graph_t*)&graph;
  hgr_params_t* params = (hgr_params_t*)&params;
  hgr_status_t status = hgr_onnx_load_memory(bytes, size, base, options, &graph, &params, report);
  free(bytes);
  if (status) {
    assert_null(graph);
    assert_null(params);
  } else {
    hgr_graph_release(graph);
    hgr_params_release(params);
  }
  return status;
}

/* The small model most cases start from: y = Relu(x + b), x [2, 3]. */
static const int64_t x_shape[2] = {2, 3};
static const int64_t b_dims[1] = {3};
static const float b_values[3] = {1, 2, 3};
static const char* const add_in[2] = {"x", "b"};
static const char* const add_out[1] = {"s"};
static const char* const relu_in[1] = {"s"};
static const char* const relu_out[1] = {"y"};

static void small_model(model_t* m) {
  model_init(m, 13);
  add_input(m, "x", x_shape, 2);
  add_init(m, "b", b_dims, 1, b_values, 3);
  add_node(m, "Add", add_in, 2, add_out, 1);
  add_node(m, "Relu", relu_in, 1, relu_out, 1);
  add_output(m, "y");
}

/* ---- what loads ---------------------------------------------------------------------- */

static void small_model_loads_with_its_counts(void** state) {
  (void)state;
  model_t m;
  small_model(&m);
  hgr_onnx_report_t report;
  ASSERT_OK(load(&m, NULL, NULL, &report));
  assert_int_equal(report.opset, 13);
  assert_int_equal(report.onnx_nodes, 2);
  assert_int_equal(report.graph_nodes, 1); /* add and relu: one fused_elementwise */
  assert_int_equal(report.elementwise_fused, 2);
  assert_int_equal(report.elementwise_groups, 1);
  assert_int_equal(report.folded, 0);
  /* Without fusion, the two nodes stay. */
  hgr_onnx_options_t* options = NULL;
  ASSERT_OK(hgr_onnx_options_create(&options));
  hgr_onnx_options_set_fuse_elementwise(options, 0);
  ASSERT_OK(load(&m, NULL, options, &report));
  hgr_onnx_options_release(options);
  assert_int_equal(report.graph_nodes, 2);
  assert_int_equal(report.elementwise_fused, 0);
}

static void constant_chains_fold_and_dead_nodes_go(void** state) {
  (void)state;
  /* Shape(x) -> Reshape(x, shape) folds to a reshape; a Relu nobody needs is removed. */
  model_t m;
  model_init(&m, 13);
  add_input(&m, "x", x_shape, 2);
  static const char* const shape_in[1] = {"x"}, *shape_out[1] = {"shape"};
  static const char* const reshape_in[2] = {"x", "shape"}, *reshape_out[1] = {"y"};
  static const char* const dead_in[1] = {"x"}, *dead_out[1] = {"dead"};
  add_node(&m, "Shape", shape_in, 1, shape_out, 1);
  add_node(&m, "Relu", dead_in, 1, dead_out, 1);
  add_node(&m, "Reshape", reshape_in, 2, reshape_out, 1);
  add_output(&m, "y");
  hgr_onnx_report_t report;
  ASSERT_OK(load(&m, NULL, NULL, &report));
  assert_int_equal(report.folded, 1);
  assert_int_equal(report.removed, 1);
  assert_int_equal(report.graph_nodes, 1);
}

static void symbolic_dims_take_the_given_shape(void** state) {
  (void)state;
  model_t m;
  model_init(&m, 13);
  static const int64_t symbolic[2] = {-1, 3};
  add_input(&m, "x", symbolic, 2);
  add_node(&m, "Relu", (const char* const[]){"x"}, 1, relu_out, 1);
  add_output(&m, "y");
  ASSERT_STATUS(load(&m, NULL, NULL, NULL), HGR_STATUS_INVALID_ARGUMENT, "graph input 'x'", "dimension 0",
                "symbolic ('N')", "--input-shape");
  hgr_onnx_options_t* options;
  ASSERT_OK(hgr_onnx_options_create(&options));
  ASSERT_OK(hgr_onnx_options_set_input_shape(options, "x", (int64_t[]){5, 3}, 2));
  ASSERT_OK(load(&m, NULL, options, NULL));
  ASSERT_OK(hgr_onnx_options_set_input_shape(options, "x", (int64_t[]){5, 4}, 2));
  ASSERT_STATUS(load(&m, NULL, options, NULL), HGR_STATUS_INVALID_ARGUMENT, "dimension 1 is 3 in the model",
                "says 4");
  hgr_onnx_options_release(options);
}

static void unsupported_things_are_named(void** state) {
  (void)state;
  model_t m;
  small_model(&m);
  m.nodes[1].op_type = "NoSuchOp";
  ASSERT_STATUS(load(&m, NULL, NULL, NULL), HGR_STATUS_UNIMPLEMENTED, "node 1 'y' (NoSuchOp, opset 13)",
                "op 'NoSuchOp' is not supported", "hgr supports:", "Conv");
  small_model(&m);
  m.nodes[1].domain = "com.example";
  ASSERT_STATUS(load(&m, NULL, NULL, NULL), HGR_STATUS_UNIMPLEMENTED, "(Relu, opset 13)", "domain 'com.example'");
  small_model(&m);
  m.opset.version = 23;
  ASSERT_STATUS(load(&m, NULL, NULL, NULL), HGR_STATUS_UNIMPLEMENTED, "opset is 23", "1 to 22");
  /* A sequence input: TypeProto's oneof must be read by its case (its pointers share
   * one union), so this may not be taken for a tensor type. */
  small_model(&m);
  Onnx__TypeProto__Sequence sequence = ONNX__TYPE_PROTO__SEQUENCE__INIT;
  m.types[0].value_case = ONNX__TYPE_PROTO__VALUE_SEQUENCE_TYPE;
  m.types[0].sequence_type = &sequence;
  ASSERT_STATUS(load(&m, NULL, NULL, NULL), HGR_STATUS_UNIMPLEMENTED, "graph input 'x' is not a tensor");
  small_model(&m);
  static const int64_t axes[1] = {0};
  add_attr_ints(&m, &m.nodes[1], "bogus", axes, 1);
  ASSERT_STATUS(load(&m, NULL, NULL, NULL), HGR_STATUS_UNIMPLEMENTED, "(Relu, opset 13)", "attr 'bogus'");
}

/* GatherND, ScatterElements and Trilu name what is wrong with their inputs: a
 * constant index outside its dim (by value and position), a reduction of a later
 * opset, a k that is not one integer. */
static void index_ops_refuse_bad_indices_by_name(void** state) {
  (void)state;
  static const int64_t x_dims[2] = {2, 3}, pair[2] = {2, 2}, one[1] = {1};
  static const int64_t tuples[4] = {0, 1, 1, 3};
  static const float half = 0.5f;
  model_t m;
  model_init(&m, 13);
  add_input(&m, "x", x_dims, 2);
  Onnx__TensorProto* indices = add_init(&m, "i", pair, 2, NULL, 0);
  indices->data_type = 7; /* int64 */
  indices->n_int64_data = 4;
  indices->int64_data = (int64_t*)tuples;
  add_node(&m, "GatherND", (const char* const[]){"x", "i"}, 2, (const char* const[]){"y"}, 1);
  add_output(&m, "y");
  ASSERT_STATUS(load(&m, NULL, NULL, NULL), HGR_STATUS_INVALID_ARGUMENT, "(GatherND, opset 13)",
                "index 3 at position 3 of 'i' is outside [-3, 3)");
  m.nodes[0].op_type = "ScatterElements";
  m.opset.version = 16;
  add_attr_string(&m, &m.nodes[0], "reduction", "max");
  m.nodes[0].n_input = 3;
  m.io_names[0][2] = "x";
  ASSERT_STATUS(load(&m, NULL, NULL, NULL), HGR_STATUS_INVALID_ARGUMENT, "(ScatterElements, opset 16)",
                "attr 'reduction' = \"max\" is not one of none, add, mul at opset 16");
  model_init(&m, 14);
  add_input(&m, "x", x_dims, 2);
  add_init(&m, "k", one, 1, &half, 1);
  add_node(&m, "Trilu", (const char* const[]){"x", "k"}, 2, (const char* const[]){"y"}, 1);
  add_output(&m, "y");
  ASSERT_STATUS(load(&m, NULL, NULL, NULL), HGR_STATUS_INVALID_ARGUMENT, "(Trilu, opset 14)",
                "input 1 (k) must hold one integer");
}

/* ---- hostile files ---------------------------------------------------------------- */

static void truncated_and_corrupt_protobuf_is_refused(void** state) {
  (void)state;
  model_t m;
  small_model(&m);
  size_t size;
  uint8_t* bytes = pack(&m, &size);
  hgr_graph_t* graph;
  hgr_params_t* params;
  for (size_t cut = 1; cut < size; cut += 7) {
    hgr_status_t status = hgr_onnx_load_memory(bytes, cut, NULL, NULL, &graph, &params, NULL);
    assert_non_null(status); /* a prefix of a model is never a valid model with outputs */
    hgr_status_free(status);
  }
  ASSERT_STATUS(hgr_onnx_load_memory(bytes, size / 2, NULL, NULL, &graph, &params, NULL), HGR_STATUS_INVALID_ARGUMENT,
                "");
  /* A wrong wire type: the first field (ir_version, varint) tagged as length-delimited. */
  bytes[0] = (uint8_t)((bytes[0] & ~7u) | 2u);
  ASSERT_STATUS(hgr_onnx_load_memory(bytes, size, NULL, NULL, &graph, &params, NULL), HGR_STATUS_INVALID_ARGUMENT,
                "do not parse as a ModelProto");
  free(bytes);
  ASSERT_STATUS(hgr_onnx_load_memory("not a model at all", 18, NULL, NULL, &graph, &params, NULL),
                HGR_STATUS_INVALID_ARGUMENT, "not a valid ONNX model");
}

static void bad_dims_and_data_sizes_are_refused(void** state) {
  (void)state;
  model_t m;
  small_model(&m);
  static const int64_t negative[1] = {-3};
  m.inits[0].dims = (int64_t*)negative;
  ASSERT_STATUS(load(&m, NULL, NULL, NULL), HGR_STATUS_INVALID_ARGUMENT, "initializer 'b'", "dimension 0 is -3");
  small_model(&m);
  static const int64_t overflowing[3] = {INT64_MAX, INT64_MAX, 4};
  m.inits[0].dims = (int64_t*)overflowing;
  m.inits[0].n_dims = 3;
  ASSERT_STATUS(load(&m, NULL, NULL, NULL), HGR_STATUS_INVALID_ARGUMENT, "initializer 'b'", "exceed 2^63 - 1");
  small_model(&m);
  m.inits[0].raw_data.len = 8; /* shorter */
  ASSERT_STATUS(load(&m, NULL, NULL, NULL), HGR_STATUS_INVALID_ARGUMENT, "initializer 'b'", "3 elements of float",
                "holds 8 bytes of raw_data");
  small_model(&m);
  static const float four[4] = {1, 2, 3, 4};
  m.inits[0].raw_data.data = (uint8_t*)four;
  m.inits[0].raw_data.len = 16; /* longer */
  ASSERT_STATUS(load(&m, NULL, NULL, NULL), HGR_STATUS_INVALID_ARGUMENT, "holds 16 bytes of raw_data");
  small_model(&m);
  static const int64_t huge[2] = {1 << 30, 1 << 30};
  m.inits[0].dims = (int64_t*)huge;
  m.inits[0].n_dims = 2;
  m.inits[0].has_raw_data = 0;
  ASSERT_STATUS(load(&m, NULL, NULL, NULL), HGR_STATUS_INVALID_ARGUMENT, "initializer 'b'",
                "1152921504606846976 elements of float declared", "holds 0 values");
  /* A declared tensor within the size limit of the options but with data: the limit applies first. */
  small_model(&m);
  hgr_onnx_options_t* options;
  ASSERT_OK(hgr_onnx_options_create(&options));
  hgr_onnx_options_set_max_tensor_bytes(options, 8);
  ASSERT_STATUS(load(&m, NULL, options, NULL), HGR_STATUS_RESOURCE_EXHAUSTED, "initializer 'b'", "12 bytes",
                "limit of 8 bytes");
  hgr_onnx_options_release(options);
  /* The typed field of another type. */
  small_model(&m);
  m.inits[0].has_raw_data = 0;
  static const int64_t ints[3] = {1, 2, 3};
  m.inits[0].n_int64_data = 3;
  m.inits[0].int64_data = (int64_t*)ints;
  ASSERT_STATUS(load(&m, NULL, NULL, NULL), HGR_STATUS_INVALID_ARGUMENT, "initializer 'b'");
}

static void name_clashes_and_cycles_are_refused(void** state) {
  (void)state;
  model_t m;
  small_model(&m);
  add_init(&m, "b", b_dims, 1, b_values, 3); /* an initializer twice */
  ASSERT_STATUS(load(&m, NULL, NULL, NULL), HGR_STATUS_INVALID_ARGUMENT, "value 'b' is defined twice");
  small_model(&m);
  m.nodes[1].output = (char**)add_out; /* Relu writes 's' too: a node output named twice */
  add_output(&m, "s");
  ASSERT_STATUS(load(&m, NULL, NULL, NULL), HGR_STATUS_INVALID_ARGUMENT, "value 's' is defined twice",
                "node 0's output", "node 1's output");
  small_model(&m);
  static const char* const clash[1] = {"b"};
  m.nodes[1].output = (char**)clash; /* a node output named like an initializer */
  m.outs[0].name = "b";
  ASSERT_STATUS(load(&m, NULL, NULL, NULL), HGR_STATUS_INVALID_ARGUMENT, "value 'b' is defined twice",
                "an initializer");
  /* A cycle: Add reads Relu's output, Relu reads Add's. */
  small_model(&m);
  m.io_names[0][1] = "y";
  ASSERT_STATUS(load(&m, NULL, NULL, NULL), HGR_STATUS_INVALID_ARGUMENT, "node 0 's' (Add, opset 13)",
                "input 1 'y' is used before the node that produces it (node 1)", "cycle");
  small_model(&m);
  m.io_names[1][0] = "nowhere";
  ASSERT_STATUS(load(&m, NULL, NULL, NULL), HGR_STATUS_INVALID_ARGUMENT, "input 0 'nowhere' is not defined");
  small_model(&m);
  m.outs[0].name = "missing";
  ASSERT_STATUS(load(&m, NULL, NULL, NULL), HGR_STATUS_INVALID_ARGUMENT, "graph output 0 'missing'");
}

/* ---- external data --------------------------------------------------------------- */

static void external(model_t* m, Onnx__TensorProto* t, const char* location, const char* offset,
                     const char* length) {
  int k = (int)(t - m->inits);
  const char* keys[3] = {"location", "offset", "length"};
  const char* values[3] = {location, offset, length};
  t->has_raw_data = 0;
  t->has_data_location = 1;
  t->data_location = ONNX__TENSOR_PROTO__DATA_LOCATION__EXTERNAL;
  t->external_data = m->external_list[k];
  for (int i = 0; i < 3; ++i) {
    if (!values[i]) continue;
    Onnx__StringStringEntryProto* e = &m->external[k][t->n_external_data];
    onnx__string_string_entry_proto__init(e);
    e->key = (char*)keys[i];
    e->value = (char*)values[i];
    m->external_list[k][t->n_external_data++] = e;
  }
}

static void external_data_is_read_inside_the_model_folder_only(void** state) {
  (void)state;
  char folder[512];
  snprintf(folder, sizeof(folder), "%s", hgr_test_tmp_path("onnx-external"));
  char path[600];
  snprintf(path, sizeof(path), "mkdir -p %s", folder);
  assert_int_equal(system(path), 0);
  snprintf(path, sizeof(path), "%s/weights.bin", folder);
  int fd = open(path, O_CREAT | O_TRUNC | O_WRONLY, 0644);
  assert_true(fd >= 0);
  float pad[4] = {9, 9, 9, 9};
  assert_int_equal(write(fd, pad, 16), 16);
  assert_int_equal(write(fd, b_values, 12), 12);
  /* Past 2 GiB: the same values again at offset 3 GiB (a sparse file). */
  const off_t far = (off_t)3 << 30;
  assert_int_equal(pwrite(fd, b_values, 12, far), 12);
  close(fd);
  model_t m;
  small_model(&m);
  external(&m, &m.inits[0], "weights.bin", "16", "12");
  ASSERT_OK(load(&m, folder, NULL, NULL));
  ASSERT_STATUS(load(&m, NULL, NULL, NULL), HGR_STATUS_INVALID_ARGUMENT, "initializer 'b'", "without a base directory");
  small_model(&m);
  external(&m, &m.inits[0], "weights.bin", "3221225472", NULL);
  ASSERT_OK(load(&m, folder, NULL, NULL));
  small_model(&m);
  external(&m, &m.inits[0], "weights.bin", "3221225480", NULL); /* runs past the end */
  ASSERT_STATUS(load(&m, folder, NULL, NULL), HGR_STATUS_DATA_LOSS, "initializer 'b'", "at offset 3221225480",
                "do not fit");
  small_model(&m);
  external(&m, &m.inits[0], "../weights.bin", NULL, NULL);
  ASSERT_STATUS(load(&m, folder, NULL, NULL), HGR_STATUS_INVALID_ARGUMENT, "initializer 'b'", "\"../weights.bin\"",
                "leaves the model's folder");
  small_model(&m);
  external(&m, &m.inits[0], "sub/../../weights.bin", NULL, NULL);
  ASSERT_STATUS(load(&m, folder, NULL, NULL), HGR_STATUS_INVALID_ARGUMENT, "leaves the model's folder");
  small_model(&m);
  external(&m, &m.inits[0], "/etc/passwd", NULL, NULL);
  ASSERT_STATUS(load(&m, folder, NULL, NULL), HGR_STATUS_INVALID_ARGUMENT, "\"/etc/passwd\"", "absolute path");
  small_model(&m);
  external(&m, &m.inits[0], "weights.bin", "-4", NULL);
  ASSERT_STATUS(load(&m, folder, NULL, NULL), HGR_STATUS_INVALID_ARGUMENT, "offset \"-4\"");
  small_model(&m);
  external(&m, &m.inits[0], "missing.bin", NULL, NULL);
  ASSERT_STATUS(load(&m, folder, NULL, NULL), HGR_STATUS_NOT_FOUND, "missing.bin");
  /* A FIFO with no writer: opening it for reading would block forever; it is refused. */
  snprintf(path, sizeof(path), "%s/weights.fifo", folder);
  assert_int_equal(mkfifo(path, 0600), 0);
  small_model(&m);
  external(&m, &m.inits[0], "weights.fifo", NULL, NULL);
  ASSERT_STATUS(load(&m, folder, NULL, NULL), HGR_STATUS_INVALID_ARGUMENT, "weights.fifo' is not a regular file");
  snprintf(path, sizeof(path), "rm -rf %s", folder);
  assert_int_equal(system(path), 0);
}

/* tests/data/byte_order/raw_data_*.pb: TensorProtos that onnx's numpy_helper wrote
 * (make.py there), their raw_data little-endian as ONNX defines it. They must read
 * as these values, in the host's order, on any host (the conformance runner and the
 * CLI read .pb inputs and expectations this way). */
static void raw_data_reads_as_host_values_on_any_host(void** state) {
  (void)state;
  const float floats[6] = {1.5f, -2.25f, 1e-3f, 65504.0f, 3.0f, -0.0f};
  const int64_t ints[3] = {1, -2, 0x0102030405060708};
  const struct {
    const char* file;
    hgr_dtype_t dtype;
    int32_t ndim;
    const void* values;
    size_t bytes;
  } cases[2] = {{"byte_order/raw_data_f4.pb", {HGR_DTYPE_FLOAT, 32, 1}, 2, floats, sizeof(floats)},
                {"byte_order/raw_data_i8.pb", {HGR_DTYPE_INT, 64, 1}, 1, ints, sizeof(ints)}};
  for (size_t c = 0; c < 2; ++c) {
    FILE* file = fopen(hgr_test_data_path(cases[c].file), "rb");
    assert_non_null(file);
    uint8_t bytes[256];
    size_t length = fread(bytes, 1, sizeof(bytes), file);
    fclose(file);
    hgr_dtype_t dtype;
    int64_t shape[HGR_MAX_DIMS];
    int32_t ndim = 0;
    void* data = NULL;
    size_t data_bytes = 0;
    ASSERT_OK(hgr_onnx_read_tensor(bytes, length, &dtype, shape, &ndim, &data, &data_bytes, NULL));
    assert_true(hgr_dtype_equal(dtype, cases[c].dtype));
    assert_int_equal(ndim, cases[c].ndim);
    assert_int_equal(data_bytes, cases[c].bytes);
    assert_memory_equal(data, cases[c].values, cases[c].bytes);
    free(data);
  }
}

/* ---- recurrent ops: refusals ----------------------------------------------------------- */

/* An LSTM of hidden size 2 on x [2, 1, 3], its attrs set by the caller. */
static Onnx__NodeProto* lstm_model(model_t* m) {
  static const int64_t wd[3] = {1, 8, 3}, rd[3] = {1, 8, 2};
  static float w[24], r[16];
  model_init(m, 14);
  add_input(m, "x", (int64_t[]){2, 1, 3}, 3);
  add_init(m, "w", wd, 3, w, 24);
  add_init(m, "r", rd, 3, r, 16);
  static const char* const inputs[3] = {"x", "w", "r"}, *const outputs[1] = {"y"}; /* the node keeps outputs */
  Onnx__NodeProto* n = add_node(m, "LSTM", inputs, 3, outputs, 1);
  add_output(m, "y");
  return n;
}

static void recurrent_ops_name_what_they_refuse(void** state) {
  (void)state;
  model_t m;
  Onnx__NodeProto* n = lstm_model(&m);
  ASSERT_OK(load(&m, NULL, NULL, NULL));
  n = lstm_model(&m);
  add_attr_string(&m, n, "direction", "sideways");
  ASSERT_STATUS(load(&m, NULL, NULL, NULL), HGR_STATUS_INVALID_ARGUMENT, "node 0 'y' (LSTM, opset 14)",
                "attr 'direction' = \"sideways\"; ONNX defines forward, reverse and bidirectional");
  n = lstm_model(&m);
  static const char* const names[3] = {"Sigmoid", "Tanh", "Foo"};
  static ProtobufCBinaryData strings[3];
  add_attr_strings(&m, n, "activations", strings, names, 3);
  ASSERT_STATUS(load(&m, NULL, NULL, NULL), HGR_STATUS_INVALID_ARGUMENT, "(LSTM, opset 14)",
                "attr 'activations' = \"[Sigmoid, Tanh, Foo]\": 'Foo' is not an activation hgr knows");
  n = lstm_model(&m);
  add_attr_float(&m, n, "clip", 0);
  ASSERT_STATUS(load(&m, NULL, NULL, NULL), HGR_STATUS_INVALID_ARGUMENT, "(LSTM, opset 14)",
                "attr 'clip' = 0; the threshold must be greater than 0");
  n = lstm_model(&m);
  add_attr_int(&m, n, "hidden_size", 3);
  ASSERT_STATUS(load(&m, NULL, NULL, NULL), HGR_STATUS_INVALID_ARGUMENT,
                "W is [1, 8, 3] and R [1, 8, 2]; with hidden_size 3, 1 direction and X's 3 inputs they must be "
                "[1, 12, 3] and [1, 12, 3]");
  n = lstm_model(&m);
  add_attr_int(&m, n, "layout", 2);
  ASSERT_STATUS(load(&m, NULL, NULL, NULL), HGR_STATUS_INVALID_ARGUMENT, "attr 'layout' = 2");
  n = lstm_model(&m);
  add_attr_int(&m, n, "peephole_mode", 1);
  ASSERT_STATUS(load(&m, NULL, NULL, NULL), HGR_STATUS_UNIMPLEMENTED, "(LSTM, opset 14)",
                "attr 'peephole_mode' is not supported");
}

/* ---- fused models, run ------------------------------------------------------------ */

/* Loads m with options (may be NULL), runs it on pocl:0 of instance with inputs (by
 * name) and reads outputs 0 .. n_out - 1; *report gets the load's report. */
static void run_loaded(hgr_instance_t* instance, const model_t* m, const hgr_onnx_options_t* options,
                       const char* const* names, const float* const* inputs, const size_t* input_bytes, int n_in,
                       float* const* outputs, const size_t* output_bytes, int n_out, hgr_onnx_report_t* report) {
  size_t size;
  uint8_t* bytes = pack(m, &size);
  hgr_graph_t* graph;
  hgr_params_t* params;
  ASSERT_OK(hgr_onnx_load_memory(bytes, size, NULL, options, &graph, &params, report));
  free(bytes);
  hgr_executor_options_t eo;
  hgr_executor_options_init(&eo);
  const hgr_device_binding_t binding = {0, "pocl:0"};
  eo.bindings = &binding;
  eo.binding_count = 1;
  hgr_executor_t* executor;
  ASSERT_OK(hgr_executor_create(instance, graph, &eo, &executor));
  size_t unused;
  ASSERT_OK(hgr_executor_load_params(executor, params, &unused));
  for (int i = 0; i < n_in; ++i)
    ASSERT_OK(hgr_executor_set_input_by_name(executor, names[i], inputs[i], input_bytes[i]));
  ASSERT_OK(hgr_executor_run(executor));
  ASSERT_OK(hgr_executor_wait(executor));
  for (int k = 0; k < n_out; ++k)
    ASSERT_OK(hgr_executor_get_output(executor, (uint32_t)k, outputs[k], output_bytes[k]));
  hgr_executor_release(executor);
  hgr_params_release(params);
  hgr_graph_release(graph);
}

/* Loads bytes, runs the graph on pocl:0 with input x and reads output 0 into y;
 * *report gets the load's report. */
static void run_on_pocl(hgr_instance_t* instance, const model_t* m, const float* x, size_t x_bytes, float* y,
                        size_t y_bytes, hgr_onnx_report_t* report) {
  run_loaded(instance, m, NULL, (const char* const[]){"x"}, (const float* const[]){x}, &x_bytes, 1,
             (float* const[]){y}, &y_bytes, 1, report);
}

/* Gelu (opset 20) in both forms on pocl:0 against the formulas in double: "none"
 * 0.5 x (1 + erf(x / sqrt 2)), "tanh" 0.5 x (1 + tanh(sqrt(2 / pi) (x + 0.044715
 * x^3))), to 64 ulp (test_ops_elementwise.c derives it); another form is refused. */
static void gelu_forms_match_formulas(void** state) {
  (void)state;
  hgr_instance_t* instance;
  hgr_instance_options_t io;
  hgr_instance_options_init(&io);
  ASSERT_OK(hgr_instance_create(&io, &instance));
  hgr_test_require_devices(instance, (const char* const[]){"pocl:0"}, 1);
  float x[64], y[64];
  hgr_test_rng_t rng;
  hgr_test_rng_seed(&rng, 20);
  for (int i = 0; i < 64; ++i) x[i] = hgr_test_rng_float(&rng, -5, 5);
  for (int form = 0; form < 3; ++form) {
    model_t m;
    model_init(&m, 20);
    add_input(&m, "x", (int64_t[]){4, 16}, 2);
    Onnx__NodeProto* gelu = add_node(&m, "Gelu", (const char* const[]){"x"}, 1, (const char* const[]){"y"}, 1);
    if (form) add_attr_string(&m, gelu, "approximate", form == 1 ? "tanh" : "exact");
    add_output(&m, "y");
    if (form == 2) {
      ASSERT_STATUS(load(&m, NULL, NULL, NULL), HGR_STATUS_INVALID_ARGUMENT, "(Gelu, opset 20)",
                    "attr 'approximate' = \"exact\" is not \"none\" or \"tanh\"");
      break;
    }
    hgr_onnx_report_t report;
    run_on_pocl(instance, &m, x, sizeof(x), y, sizeof(y), &report);
    for (int i = 0; i < 64; ++i) {
      double v = x[i];
      double want = form ? 0.5 * v * (1 + tanh(sqrt(2 / 3.14159265358979323846) * (v + 0.044715 * v * v * v)))
                         : 0.5 * v * (1 + erf(v / sqrt(2.0)));
      if (!(fabs(y[i] - want) <= 65 * 0x1p-23 * fabs(want) + 1e-30))
        fail_msg("Gelu form %d at x = %.9g: got %.9g, want %.9g", form, v, (double)y[i], want);
    }
  }
  hgr_instance_release(instance);
}

/* Conv(x, w, bias) -> BatchNormalization -> Add(per-channel c) -> Relu: one conv2d
 * node after fusion, checked against the same arithmetic in C on pocl:0. */
static void fused_conv_matches_plain_arithmetic(void** state) {
  (void)state;
  hgr_instance_t* instance;
  hgr_instance_options_t io;
  hgr_instance_options_init(&io);
  ASSERT_OK(hgr_instance_create(&io, &instance));
  static const char* const device[1] = {"pocl:0"};
  hgr_test_require_devices(instance, device, 1);
  enum { C = 2, M = 3, H = 5, W = 5, K = 3 };
  static float w[M * C * K * K], bias[M], scale[M], shift[M], mean[M], var[M], add[M], x[C * H * W];
  hgr_test_rng_t rng;
  hgr_test_rng_seed(&rng, 15);
  for (size_t i = 0; i < sizeof(w) / 4; ++i) w[i] = hgr_test_rng_float(&rng, -1, 1);
  for (int i = 0; i < M; ++i) {
    bias[i] = hgr_test_rng_float(&rng, -1, 1);
    scale[i] = hgr_test_rng_float(&rng, 0.5f, 2);
    shift[i] = hgr_test_rng_float(&rng, -1, 1);
    mean[i] = hgr_test_rng_float(&rng, -1, 1);
    var[i] = hgr_test_rng_float(&rng, 0.1f, 2);
    add[i] = hgr_test_rng_float(&rng, -1, 1);
  }
  for (size_t i = 0; i < sizeof(x) / 4; ++i) x[i] = hgr_test_rng_float(&rng, -1, 1);
  model_t m;
  model_init(&m, 13);
  add_input(&m, "x", (int64_t[]){1, C, H, W}, 4);
  static const int64_t wd[4] = {M, C, K, K}, vd[1] = {M}, ad[3] = {M, 1, 1};
  add_init(&m, "w", wd, 4, w, sizeof(w) / 4);
  add_init(&m, "bias", vd, 1, bias, M);
  add_init(&m, "scale", vd, 1, scale, M);
  add_init(&m, "shift", vd, 1, shift, M);
  add_init(&m, "mean", vd, 1, mean, M);
  add_init(&m, "var", vd, 1, var, M);
  add_init(&m, "c", ad, 3, add, M);
  static const int64_t pads[4] = {1, 1, 1, 1};
  Onnx__NodeProto* conv = add_node(&m, "Conv", (const char* const[]){"x", "w", "bias"}, 3, (const char* const[]){"a"}, 1);
  add_attr_ints(&m, conv, "pads", pads, 4);
  add_node(&m, "BatchNormalization", (const char* const[]){"a", "scale", "shift", "mean", "var"}, 5,
           (const char* const[]){"b"}, 1);
  add_node(&m, "Add", (const char* const[]){"b", "c"}, 2, (const char* const[]){"d"}, 1);
  add_node(&m, "Relu", (const char* const[]){"d"}, 1, (const char* const[]){"y"}, 1);
  add_output(&m, "y");
  float y[M * H * W];
  hgr_onnx_report_t report;
  run_on_pocl(instance, &m, x, sizeof(x), y, sizeof(y), &report);
  assert_int_equal(report.fused, 3);
  assert_int_equal(report.graph_nodes, 1);
  for (int o = 0; o < M; ++o)
    for (int i = 0; i < H; ++i)
      for (int j = 0; j < W; ++j) {
        double s = bias[o];
        for (int c = 0; c < C; ++c)
          for (int ki = 0; ki < K; ++ki)
            for (int kj = 0; kj < K; ++kj) {
              int yi = i + ki - 1, xj = j + kj - 1;
              if (yi < 0 || yi >= H || xj < 0 || xj >= W) continue;
              s += (double)w[((o * C + c) * K + ki) * K + kj] * x[(c * H + yi) * W + xj];
            }
        s = (s - mean[o]) / sqrt((double)var[o] + 1e-5) * scale[o] + shift[o] + add[o];
        double want = s > 0 ? s : 0;
        assert_true(fabs(y[(o * H + i) * W + j] - want) <= 1e-4 + 1e-4 * fabs(want));
      }
  hgr_instance_release(instance);
}

/* BatchNormalization (constant statistics) -> Mul(per-channel) -> Add(per-channel) ->
 * Relu on a graph input: x * scale + shift as a multiply and an add, then relu;
 * and Conv -> Mul -> Add: the Mul scales the weights and bias. */
static void fused_batch_norm_and_scale_match_plain_arithmetic(void** state) {
  (void)state;
  hgr_instance_t* instance;
  hgr_instance_options_t io;
  hgr_instance_options_init(&io);
  ASSERT_OK(hgr_instance_create(&io, &instance));
  static const char* const device[1] = {"pocl:0"};
  hgr_test_require_devices(instance, device, 1);
  enum { C = 3, H = 4, W = 5 };
  static float scale[C], shift[C], mean[C], var[C], mul[C], add[C], w[C * C], x[C * H * W];
  hgr_test_rng_t rng;
  hgr_test_rng_seed(&rng, 16);
  for (int i = 0; i < C; ++i) {
    scale[i] = hgr_test_rng_float(&rng, 0.5f, 2);
    shift[i] = hgr_test_rng_float(&rng, -1, 1);
    mean[i] = hgr_test_rng_float(&rng, -1, 1);
    var[i] = hgr_test_rng_float(&rng, 0.1f, 2);
    mul[i] = hgr_test_rng_float(&rng, -2, 2);
    add[i] = hgr_test_rng_float(&rng, -1, 1);
  }
  for (int i = 0; i < C * C; ++i) w[i] = hgr_test_rng_float(&rng, -1, 1);
  for (size_t i = 0; i < sizeof(x) / 4; ++i) x[i] = hgr_test_rng_float(&rng, -2, 2);
  model_t m;
  model_init(&m, 13);
  add_input(&m, "x", (int64_t[]){1, C, H, W}, 4);
  static const int64_t vd[1] = {C}, ad[3] = {C, 1, 1}, wd[4] = {C, C, 1, 1};
  add_init(&m, "scale", vd, 1, scale, C);
  add_init(&m, "shift", vd, 1, shift, C);
  add_init(&m, "mean", vd, 1, mean, C);
  add_init(&m, "var", vd, 1, var, C);
  add_init(&m, "mul", ad, 3, mul, C);
  add_init(&m, "add", ad, 3, add, C);
  add_init(&m, "w", wd, 4, w, C * C);
  add_node(&m, "BatchNormalization", (const char* const[]){"x", "scale", "shift", "mean", "var"}, 5,
           (const char* const[]){"b"}, 1);
  add_node(&m, "Mul", (const char* const[]){"b", "mul"}, 2, (const char* const[]){"c"}, 1);
  add_node(&m, "Add", (const char* const[]){"c", "add"}, 2, (const char* const[]){"d"}, 1);
  add_node(&m, "Relu", (const char* const[]){"d"}, 1, (const char* const[]){"e"}, 1);
  add_node(&m, "Conv", (const char* const[]){"e", "w"}, 2, (const char* const[]){"f"}, 1);
  add_node(&m, "Mul", (const char* const[]){"mul", "f"}, 2, (const char* const[]){"g"}, 1);
  add_node(&m, "Add", (const char* const[]){"g", "add"}, 2, (const char* const[]){"y"}, 1);
  add_output(&m, "y");
  float y[C * H * W];
  hgr_onnx_report_t report;
  run_on_pocl(instance, &m, x, sizeof(x), y, sizeof(y), &report);
  assert_int_equal(report.fused, 4); /* Mul, Add into the batch_norm; Mul, Add into the conv */
  /* the batch_norm as a multiply and an add, and the relu, fused into one
   * fused_elementwise; conv2d */
  assert_int_equal(report.elementwise_fused, 3);
  assert_int_equal(report.elementwise_groups, 1);
  assert_int_equal(report.graph_nodes, 2);
  for (int o = 0; o < C; ++o)
    for (int p = 0; p < H * W; ++p) {
      double f = 0;
      for (int c = 0; c < C; ++c) {
        double e = ((double)x[c * H * W + p] - mean[c]) / sqrt((double)var[c] + 1e-5) * scale[c] + shift[c];
        e = e * mul[c] + add[c];
        f += (double)w[o * C + c] * (e > 0 ? e : 0);
      }
      double want = f * mul[o] + add[o];
      assert_true(fabs(y[o * H * W + p] - want) <= 1e-4 + 1e-4 * fabs(want));
    }
  hgr_instance_release(instance);
}

/* Conv 1x1 with strides [2, 3] and no padding on odd extents: a strided_slice of the
 * pixels it reads, then a stride-1 conv2d, against the same arithmetic in C. */
static void strided_pointwise_conv_slices_first(void** state) {
  (void)state;
  hgr_instance_t* instance;
  ASSERT_OK(hgr_instance_create(NULL, &instance));
  static const char* const device[1] = {"pocl:0"};
  hgr_test_require_devices(instance, device, 1);
  enum { C = 3, M = 4, H = 7, W = 8, SH = 2, SW = 3, OH = (H - 1) / SH + 1, OW = (W - 1) / SW + 1 };
  static float w[M * C], bias[M], x[C * H * W];
  hgr_test_rng_t rng;
  hgr_test_rng_seed(&rng, 17);
  for (int i = 0; i < M * C; ++i) w[i] = hgr_test_rng_float(&rng, -1, 1);
  for (int i = 0; i < M; ++i) bias[i] = hgr_test_rng_float(&rng, -1, 1);
  for (size_t i = 0; i < sizeof(x) / 4; ++i) x[i] = hgr_test_rng_float(&rng, -1, 1);
  model_t m;
  model_init(&m, 13);
  add_input(&m, "x", (int64_t[]){1, C, H, W}, 4);
  static const int64_t wd[4] = {M, C, 1, 1}, vd[1] = {M}, strides[2] = {SH, SW};
  add_init(&m, "w", wd, 4, w, M * C);
  add_init(&m, "bias", vd, 1, bias, M);
  Onnx__NodeProto* conv = add_node(&m, "Conv", (const char* const[]){"x", "w", "bias"}, 3, (const char* const[]){"y"}, 1);
  add_attr_ints(&m, conv, "strides", strides, 2);
  add_output(&m, "y");
  float y[M * OH * OW];
  hgr_onnx_report_t report;
  run_on_pocl(instance, &m, x, sizeof(x), y, sizeof(y), &report);
  assert_int_equal(report.graph_nodes, 2); /* strided_slice, conv2d */
  for (int o = 0; o < M; ++o)
    for (int i = 0; i < OH; ++i)
      for (int j = 0; j < OW; ++j) {
        double want = bias[o];
        for (int c = 0; c < C; ++c) want += (double)w[o * C + c] * x[(c * H + i * SH) * W + j * SW];
        assert_true(fabs(y[(o * OH + i) * OW + j] - want) <= 1e-5 + 1e-5 * fabs(want));
      }
  hgr_instance_release(instance);
}

/* ---- recurrent ops, run ------------------------------------------------------------- */

/* An int32 initializer with raw_data. */
static void add_init_i32(model_t* m, const char* name, const int64_t* dims, int ndim, const int32_t* values,
                         size_t count) {
  Onnx__TensorProto* t = add_init(m, name, dims, ndim, NULL, 0);
  t->data_type = 6;
  t->has_raw_data = 1;
  t->raw_data.data = (uint8_t*)values;
  t->raw_data.len = count * sizeof(int32_t);
}

/* run_loaded on an instance of its own, which must have pocl:0. */
static void run_model_on_pocl(const model_t* m, const char* const* names, const float* const* inputs,
                              const size_t* input_bytes, int n_in, float* const* outputs, const size_t* output_bytes,
                              int n_out, hgr_onnx_report_t* report) {
  hgr_instance_t* instance;
  ASSERT_OK(hgr_instance_create(NULL, &instance));
  static const char* const device[1] = {"pocl:0"};
  hgr_test_require_devices(instance, device, 1);
  run_loaded(instance, m, NULL, names, inputs, input_bytes, n_in, outputs, output_bytes, n_out, report);
  hgr_instance_release(instance);
}

/* Pow by a constant 2 or 3 (float or integer, one element of any rank) is imported
 * as multiplies, x * x and x * (x * x), as ONNX Runtime computes them, not OpenCL's
 * pow() (a general routine, some 35 times a multiply's time on PoCL); another
 * exponent stays power, an integer one (Pow's T2) converted at load. Checked in the
 * loaded graph (fusion off, to see the ops) and run on pocl:0: the products bit for
 * bit, x^4 against pow to 16 ulp. */
static void small_constant_powers_are_multiplies(void** state) {
  (void)state;
  enum { N = 64 };
  static float x[N], square[N], cube[N], other[N];
  hgr_test_rng_t rng;
  hgr_test_rng_seed(&rng, 37);
  for (int i = 0; i < N; ++i) x[i] = hgr_test_rng_float(&rng, -3, 3);
  x[0] = -0.0f;
  model_t m;
  model_init(&m, 14);
  add_input(&m, "x", (int64_t[]){4, 16}, 2);
  static const float two = 2;
  static const int32_t three = 3, four = 4;
  add_init(&m, "two", NULL, 0, &two, 1);
  add_init_i32(&m, "three", (int64_t[]){1, 1}, 2, &three, 1);
  add_init_i32(&m, "four", (int64_t[]){1}, 1, &four, 1);
  add_node(&m, "Pow", (const char* const[]){"x", "two"}, 2, (const char* const[]){"square"}, 1);
  add_node(&m, "Pow", (const char* const[]){"x", "three"}, 2, (const char* const[]){"cube"}, 1);
  add_node(&m, "Pow", (const char* const[]){"x", "four"}, 2, (const char* const[]){"other"}, 1);
  add_output(&m, "square");
  add_output(&m, "cube");
  add_output(&m, "other");
  size_t size;
  uint8_t* bytes = pack(&m, &size);
  hgr_onnx_options_t* options = NULL;
  ASSERT_OK(hgr_onnx_options_create(&options));
  hgr_onnx_options_set_fuse_elementwise(options, 0);
  hgr_graph_t* graph;
  hgr_params_t* params;
  ASSERT_OK(hgr_onnx_load_memory(bytes, size, NULL, options, &graph, &params, NULL));
  hgr_onnx_options_release(options);
  free(bytes);
  int multiplies = 0, powers = 0;
  for (size_t n = 0; n < hgr_graph_node_count(graph); ++n) {
    hgr_node_info_t info;
    ASSERT_OK(hgr_graph_node_info(graph, n, &info));
    multiplies += info.func_name && !strcmp(info.func_name, "multiply");
    powers += info.func_name && !strcmp(info.func_name, "power");
  }
  assert_int_equal(multiplies, 3);
  assert_int_equal(powers, 1);
  hgr_params_release(params);
  hgr_graph_release(graph);
  size_t x_bytes = sizeof(x), out_bytes[3] = {sizeof(square), sizeof(cube), sizeof(other)};
  hgr_onnx_report_t report;
  run_model_on_pocl(&m, (const char* const[]){"x"}, (const float* const[]){x}, &x_bytes, 1,
                    (float* const[]){square, cube, other}, out_bytes, 3, &report);
  for (int i = 0; i < N; ++i) {
    float want_square = x[i] * x[i], want_cube = x[i] * (x[i] * x[i]);
    double want_other = pow(x[i], 4);
    if (memcmp(&square[i], &want_square, 4) || memcmp(&cube[i], &want_cube, 4))
      fail_msg("x = %.9g: square %.9g, cube %.9g; want %.9g, %.9g", (double)x[i], (double)square[i],
               (double)cube[i], (double)want_square, (double)want_cube);
    if (!(fabs(other[i] - want_other) <= 16 * 0x1p-23 * fabs(want_other)))
      fail_msg("x = %.9g: Pow(x, 4) = %.9g, want %.9g", (double)x[i], (double)other[i], want_other);
  }
}

static void expect_close(const float* got, const float* want, size_t count, const char* what) {
  for (size_t i = 0; i < count; ++i)
    if (!(fabs((double)got[i] - want[i]) <= 2e-5 + 1e-4 * fabs((double)want[i])))
      fail_msg("%s element %zu: got %.9g, expected %.9g", what, i, (double)got[i], (double)want[i]);
}

/* LSTM, bidirectional, with every optional input (B, sequence_lens with a length
 * of 0 and one of T, initial_h, initial_c, P), clip, activations with alpha and
 * beta, and Y omitted (an empty output name): one dense for the projection of every
 * step and direction, one lstm_recurrence; Y_h and Y_c against tests/ref_rnn.c. */
static void bidirectional_lstm_with_sequence_lens_matches_reference(void** state) {
  (void)state;
  enum { T = 5, B = 4, I = 3, H = 4, D = 2, G = 4 };
  static float x[T * B * I], w[D * G * H * I], r[D * G * H * H], b[D * 2 * G * H], h0[D * B * H], c0[D * B * H],
      p[D * 3 * H];
  static const int32_t lens[B] = {5, 2, 0, 3};
  hgr_test_rng_t rng;
  hgr_test_rng_seed(&rng, 18);
  float* all[7] = {x, w, r, b, h0, c0, p};
  size_t counts[7] = {T * B * I, D * G * H * I, D * G * H * H, D * 2 * G * H, D * B * H, D * B * H, D * 3 * H};
  for (int k = 0; k < 7; ++k)
    for (size_t i = 0; i < counts[k]; ++i) all[k][i] = hgr_test_rng_float(&rng, -0.7f, 0.7f);
  model_t m;
  model_init(&m, 14);
  add_input(&m, "x", (int64_t[]){T, B, I}, 3);
  static const int64_t wd[3] = {D, G * H, I}, rd[3] = {D, G * H, H}, bd[2] = {D, 2 * G * H}, ld[1] = {B},
                       sd[3] = {D, B, H}, pd[2] = {D, 3 * H};
  add_init(&m, "w", wd, 3, w, counts[1]);
  add_init(&m, "r", rd, 3, r, counts[2]);
  add_init(&m, "b", bd, 2, b, counts[3]);
  add_init_i32(&m, "lens", ld, 1, lens, B);
  add_init(&m, "h0", sd, 3, h0, counts[4]);
  add_init(&m, "c0", sd, 3, c0, counts[5]);
  add_init(&m, "p", pd, 2, p, counts[6]);
  Onnx__NodeProto* lstm =
      add_node(&m, "LSTM", (const char* const[]){"x", "w", "r", "b", "lens", "h0", "c0", "p"}, 8,
               (const char* const[]){"", "y_h", "y_c"}, 3);
  static const char* const names[6] = {"Sigmoid", "Tanh", "Tanh", "HardSigmoid", "Softsign", "LeakyRelu"};
  static ProtobufCBinaryData strings[6];
  static const float alphas[2] = {0.3f, 0.05f}, betas[1] = {0.4f};
  add_attr_int(&m, lstm, "hidden_size", H);
  add_attr_string(&m, lstm, "direction", "bidirectional");
  add_attr_strings(&m, lstm, "activations", strings, names, 6);
  add_attr_floats(&m, lstm, "activation_alpha", alphas, 2);
  add_attr_floats(&m, lstm, "activation_beta", betas, 1);
  add_attr_float(&m, lstm, "clip", 1.5f);
  add_output(&m, "y_h");
  add_output(&m, "y_c");
  static float y_h[D * B * H], y_c[D * B * H], want_h[D * B * H], want_c[D * B * H];
  hgr_onnx_report_t report;
  run_model_on_pocl(&m, (const char* const[]){"x"}, (const float* const[]){x}, (size_t[]){sizeof(x)}, 1,
                    (float* const[]){y_h, y_c}, (size_t[]){sizeof(y_h), sizeof(y_c)}, 2, &report);
  assert_int_equal(report.graph_nodes, 2); /* dense (every step and direction), lstm_recurrence */
  hgr_ref_rnn_t c = {.cell = HGR_REF_LSTM, .steps = T, .batch = B, .input_size = I, .hidden = H, .directions = D,
                     .x = x, .w = w, .r = r, .b = b, .lens = lens, .initial_h = h0, .initial_c = c0, .p = p,
                     .clip_on = true, .clip = 1.5f};
  static const hgr_ref_activation_t activations[6] = {HGR_REF_SIGMOID, HGR_REF_TANH, HGR_REF_TANH,
                                                      HGR_REF_HARD_SIGMOID, HGR_REF_SOFTSIGN, HGR_REF_LEAKY_RELU};
  hgr_ref_rnn_activations(&c, activations, 6, (const double[]){0.3f, 0.05f}, 2, (const double[]){0.4f}, 1);
  hgr_ref_rnn(&c, NULL, want_h, want_c);
  expect_close(y_h, want_h, D * B * H, "Y_h");
  expect_close(y_c, want_c, D * B * H, "Y_c");
}

/* GRU, batch first (layout 1), linear_before_reset, reverse, with B a graph input
 * (split by two strided_slices at run time) and only Y: against tests/ref_rnn.c. */
static void batch_first_gru_with_runtime_bias_matches_reference(void** state) {
  (void)state;
  enum { T = 4, B = 3, I = 2, H = 5, G = 3 };
  static float x[B * T * I], w[G * H * I], r[G * H * H], b[2 * G * H];
  hgr_test_rng_t rng;
  hgr_test_rng_seed(&rng, 19);
  float* all[4] = {x, w, r, b};
  size_t counts[4] = {B * T * I, G * H * I, G * H * H, 2 * G * H};
  for (int k = 0; k < 4; ++k)
    for (size_t i = 0; i < counts[k]; ++i) all[k][i] = hgr_test_rng_float(&rng, -0.7f, 0.7f);
  model_t m;
  model_init(&m, 22);
  add_input(&m, "x", (int64_t[]){B, T, I}, 3);
  add_input(&m, "b", (int64_t[]){1, 2 * G * H}, 2);
  static const int64_t wd[3] = {1, G * H, I}, rd[3] = {1, G * H, H};
  add_init(&m, "w", wd, 3, w, counts[1]);
  add_init(&m, "r", rd, 3, r, counts[2]);
  Onnx__NodeProto* gru =
      add_node(&m, "GRU", (const char* const[]){"x", "w", "r", "b"}, 4, (const char* const[]){"y"}, 1);
  add_attr_int(&m, gru, "hidden_size", H);
  add_attr_int(&m, gru, "layout", 1);
  add_attr_int(&m, gru, "linear_before_reset", 1);
  add_attr_string(&m, gru, "direction", "reverse");
  add_output(&m, "y");
  static float y[B * T * H], want[B * T * H];
  hgr_onnx_report_t report;
  run_model_on_pocl(&m, (const char* const[]){"x", "b"}, (const float* const[]){x, b}, (size_t[]){sizeof(x), sizeof(b)},
                    2, (float* const[]){y}, (size_t[]){sizeof(y)}, 1, &report);
  hgr_ref_rnn_t c = {.cell = HGR_REF_GRU, .steps = T, .batch = B, .input_size = I, .hidden = H, .directions = 1,
                     .reverse = true, .batch_first = true, .x = x, .w = w, .r = r, .b = b,
                     .linear_before_reset = true};
  hgr_ref_rnn_activations(&c, NULL, 0, NULL, 0, NULL, 0);
  hgr_ref_rnn(&c, want, NULL, NULL);
  expect_close(y, want, B * T * H, "Y");
}

/* A BERT-like block at opset 14, as torch.onnx and tf2onnx write it: a layer norm
 * written out (Pow, Div), a linear layer, GELU written out (Div by sqrt 2, Erf),
 * a linear layer, the residual add and a layer norm written out as tf2onnx does
 * (Mul, Reciprocal). Loaded with the passes it is two layer_norm nodes and two
 * matmuls whose epilogues took their bias adds (and the first one the gelu), and
 * computes what it computes with every pass off, also on rows of one value
 * (variance 0). */
static void bert_block_fuses_its_layer_norms_and_gelu(void** state) {
  (void)state;
  enum { B = 2, S = 4, HID = 16, FF = 32 };
  static const int64_t x_dims[3] = {B, S, HID}, vec[1] = {HID}, ff[1] = {FF}, w1_dims[2] = {HID, FF},
                       w2_dims[2] = {FF, HID}, last[1] = {-1};
  static float g1[HID], b1[HID], g2[HID], b2[HID], w1[HID * FF], bf1[FF], w2[FF * HID], bf2[HID];
  static const float two = 2, eps = 1e-5f, sqrt2 = 1.4142135f, one = 1, half = 0.5f;
  hgr_test_rng_t rng;
  hgr_test_rng_seed(&rng, 37);
  float* const vectors[] = {g1, b1, g2, b2, w1, bf1, w2, bf2};
  const size_t counts[] = {HID, HID, HID, HID, HID * FF, FF, FF * HID, HID};
  for (size_t v = 0; v < 8; ++v)
    for (size_t i = 0; i < counts[v]; ++i) vectors[v][i] = hgr_test_rng_float(&rng, -0.5f, 0.5f) + (v % 2 ? 0 : 1);
  model_t m;
  model_init(&m, 14);
  add_input(&m, "x", x_dims, 3);
  add_output(&m, "y");
  const struct {
    const char* name;
    const int64_t* dims;
    int ndim;
    const float* values;
    size_t count;
  } inits[] = {{"two", NULL, 0, &two, 1},     {"eps", NULL, 0, &eps, 1},       {"g1", vec, 1, g1, HID},
               {"b1", vec, 1, b1, HID},       {"w1", w1_dims, 2, w1, HID * FF}, {"bf1", ff, 1, bf1, FF},
               {"sqrt2", NULL, 0, &sqrt2, 1}, {"one", NULL, 0, &one, 1},       {"half", NULL, 0, &half, 1},
               {"w2", w2_dims, 2, w2, FF * HID}, {"bf2", vec, 1, bf2, HID},   {"g2", vec, 1, g2, HID},
               {"b2", vec, 1, b2, HID}};
  for (size_t i = 0; i < sizeof(inits) / sizeof(inits[0]); ++i)
    add_init(&m, inits[i].name, inits[i].dims, inits[i].ndim, inits[i].values, inits[i].count);
  /* op, two inputs (the second NULL for one), output */
  static const char* const nodes[][4] = {
      {"ReduceMean", "x", NULL, "m1"},  {"Sub", "x", "m1", "d1"},        {"Pow", "d1", "two", "s1"},
      {"ReduceMean", "s1", NULL, "v1"}, {"Add", "v1", "eps", "ve1"},     {"Sqrt", "ve1", NULL, "sd1"},
      {"Div", "d1", "sd1", "n1"},       {"Mul", "n1", "g1", "gm1"},      {"Add", "gm1", "b1", "y1"},
      {"MatMul", "y1", "w1", "h0"},     {"Add", "h0", "bf1", "h"},       {"Div", "h", "sqrt2", "q"},
      {"Erf", "q", NULL, "e"},          {"Add", "e", "one", "a"},        {"Mul", "h", "a", "mm"},
      {"Mul", "mm", "half", "g"},       {"MatMul", "g", "w2", "o0"},     {"Add", "o0", "bf2", "o"},
      {"Add", "o", "y1", "r"},          {"ReduceMean", "r", NULL, "m2"}, {"Sub", "r", "m2", "d2"},
      {"Mul", "d2", "d2", "s2"},        {"ReduceMean", "s2", NULL, "v2"}, {"Add", "v2", "eps", "ve2"},
      {"Sqrt", "ve2", NULL, "sd2"},     {"Reciprocal", "sd2", NULL, "rc2"}, {"Mul", "d2", "rc2", "n2"},
      {"Mul", "n2", "g2", "gm2"},       {"Add", "gm2", "b2", "y"}};
  size_t node_count = sizeof(nodes) / sizeof(nodes[0]);
  for (size_t k = 0; k < node_count; ++k) {
    Onnx__NodeProto* n = add_node(&m, nodes[k][0], &nodes[k][1], nodes[k][2] ? 2 : 1, &nodes[k][3], 1);
    if (!strcmp(nodes[k][0], "ReduceMean")) add_attr_ints(&m, n, "axes", last, 1);
  }
  float x[B * S * HID], fused[B * S * HID], plain[B * S * HID];
  for (size_t i = 0; i < B * S * HID; ++i) x[i] = i / HID == 2 ? 1.5f : hgr_test_rng_float(&rng, -3, 3);
  hgr_instance_t* instance;
  ASSERT_OK(hgr_instance_create(NULL, &instance));
  hgr_test_require_devices(instance, (const char* const[]){"pocl:0"}, 1);
  hgr_onnx_report_t report;
  run_loaded(instance, &m, NULL, (const char* const[]){"x"}, (const float* const[]){x}, (size_t[]){sizeof(x)}, 1,
             (float* const[]){fused}, (size_t[]){sizeof(fused)}, 1, &report);
  assert_int_equal(report.onnx_nodes, node_count);
  assert_int_equal(report.passes.layer_norms, 2);
  assert_int_equal(report.passes.layer_norm_fused, 19);
  assert_int_equal(report.passes.gelus, 1);
  assert_int_equal(report.passes.gelu_fused, 5);
  /* the bias adds (and the gelu after the first) join their matmuls' epilogues,
   * and the residual add the second layer norm as its skip input: no elementwise
   * group */
  assert_int_equal(report.passes.gemm_epilogues, 2);
  assert_int_equal(report.passes.gemm_epilogue_fused, 3);
  assert_int_equal(report.passes.skip_layer_norms, 1);
  assert_int_equal(report.elementwise_groups, 0);
  /* two layer_norm, two matmuls (each between reshapes) */
  assert_int_equal(report.graph_nodes, 2 + 2 * 3);
  hgr_onnx_options_t* options;
  ASSERT_OK(hgr_onnx_options_create(&options));
  hgr_passes_options_t off = {0};
  hgr_onnx_options_set_passes(options, &off);
  run_loaded(instance, &m, options, (const char* const[]){"x"}, (const float* const[]){x}, (size_t[]){sizeof(x)}, 1,
             (float* const[]){plain}, (size_t[]){sizeof(plain)}, 1, &report);
  assert_int_equal(
      report.passes.layer_norms + report.passes.gelus + report.passes.gemm_epilogues + report.elementwise_groups, 0);
  expect_close(fused, plain, B * S * HID, "y");
  hgr_onnx_options_release(options);
  hgr_instance_release(instance);
}

int main(int argc, char** argv) {
  if (argc > 1 && !strcmp(argv[1], "run")) {
    const struct CMUnitTest tests[] = {cmocka_unit_test(fused_conv_matches_plain_arithmetic),
                                       cmocka_unit_test(fused_batch_norm_and_scale_match_plain_arithmetic),
                                       cmocka_unit_test(strided_pointwise_conv_slices_first),
                                       cmocka_unit_test(bidirectional_lstm_with_sequence_lens_matches_reference),
                                       cmocka_unit_test(batch_first_gru_with_runtime_bias_matches_reference),
                                       cmocka_unit_test(gelu_forms_match_formulas),
                                       cmocka_unit_test(small_constant_powers_are_multiplies),
                                       cmocka_unit_test(bert_block_fuses_its_layer_norms_and_gelu)};
    return cmocka_run_group_tests(tests, NULL, NULL);
  }
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(small_model_loads_with_its_counts),
      cmocka_unit_test(constant_chains_fold_and_dead_nodes_go),
      cmocka_unit_test(symbolic_dims_take_the_given_shape),
      cmocka_unit_test(unsupported_things_are_named),
      cmocka_unit_test(index_ops_refuse_bad_indices_by_name),
      cmocka_unit_test(truncated_and_corrupt_protobuf_is_refused),
      cmocka_unit_test(bad_dims_and_data_sizes_are_refused),
      cmocka_unit_test(name_clashes_and_cycles_are_refused),
      cmocka_unit_test(external_data_is_read_inside_the_model_folder_only),
      cmocka_unit_test(raw_data_reads_as_host_values_on_any_host),
      cmocka_unit_test(recurrent_ops_name_what_they_refuse),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
