/* ONNX control flow at load (docs/onnx.md, "Control flow"), on models this test
 * writes with protobuf-c: If inlined where its condition is known when the model is
 * specialized (a constant, a comparison of shapes, a graph input the model object
 * specializes on by value), Loop and Scan unrolled, subgraphs reading the enclosing
 * graphs' values by name and shadowing them with their own; and what is refused,
 * each naming the node: conditions and trip counts computed from the data at run
 * time, sequences, opset 8's Scan, unrolling beyond HGR_ONNX_MAX_UNROLLED_NODES,
 * graphs nested beyond HGR_ONNX_MAX_GRAPH_DEPTH.
 *
 *   test_onnx_control        the loader and the model object without a device
 *   test_onnx_control run    the models run on pocl:0, against plain C; an If's
 *                            condition and a Loop's trip count from the data, run in
 *                            stages by the model object (docs/onnx.md, "Decisions
 *                            at run time") */
#include <math.h>
#include <string.h>

#include "onnx/onnx.pb-c.h"
#include "onnx_model.h"
#include "testlib.h"

/* ---- writing models: every block from calloc, listed, freed by arena_free ---------- */

static void** arena;
static size_t arena_count, arena_capacity;

static void* grab(size_t bytes) {
  void* block = calloc(1, bytes ? bytes : 1);
  assert_non_null(block);
  if (arena_count == arena_capacity) {
    arena_capacity = arena_capacity ? 2 * arena_capacity : 256;
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

static char* text(const char* s) {
  char* copy = grab(strlen(s) + 1);
  strcpy(copy, s);
  return copy;
}

/* "a,b,,c" as names ("" for an omitted input); "" as none. */
static char** name_list(const char* csv, size_t* out_count) {
  *out_count = 0;
  if (!csv[0]) return grab(sizeof(char*));
  size_t count = 1;
  for (const char* c = csv; *c; ++c) count += *c == ',';
  char** names = grab(count * sizeof(char*));
  for (const char* start = csv;; ++*out_count) {
    const char* comma = strchr(start, ',');
    size_t length = comma ? (size_t)(comma - start) : strlen(start);
    names[*out_count] = grab(length + 1);
    memcpy(names[*out_count], start, length);
    if (!comma) break;
    start = comma + 1;
  }
  ++*out_count;
  return names;
}

#define MAX_NODES 600
#define MAX_LIST 16

static Onnx__GraphProto* graph_new(const char* name) {
  Onnx__GraphProto* g = grab(sizeof(*g));
  onnx__graph_proto__init(g);
  g->name = text(name);
  g->node = grab(MAX_NODES * sizeof(*g->node));
  g->input = grab(MAX_LIST * sizeof(*g->input));
  g->output = grab(MAX_LIST * sizeof(*g->output));
  g->initializer = grab(MAX_LIST * sizeof(*g->initializer));
  return g;
}

static Onnx__NodeProto* node(Onnx__GraphProto* g, const char* op, const char* inputs, const char* outputs) {
  assert_true(g->n_node < MAX_NODES);
  Onnx__NodeProto* n = grab(sizeof(*n));
  onnx__node_proto__init(n);
  n->op_type = text(op);
  n->input = name_list(inputs, &n->n_input);
  n->output = name_list(outputs, &n->n_output);
  n->name = n->n_output ? n->output[0] : text(op);
  n->attribute = grab(MAX_LIST * sizeof(*n->attribute));
  g->node[g->n_node++] = n;
  return n;
}

static Onnx__AttributeProto* attr(Onnx__NodeProto* n, const char* name, Onnx__AttributeProto__AttributeType type) {
  Onnx__AttributeProto* a = grab(sizeof(*a));
  onnx__attribute_proto__init(a);
  a->name = text(name);
  a->has_type = 1;
  a->type = type;
  n->attribute[n->n_attribute++] = a;
  return a;
}

static void attr_graph(Onnx__NodeProto* n, const char* name, Onnx__GraphProto* g) {
  attr(n, name, ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__GRAPH)->g = g;
}

static void attr_int(Onnx__NodeProto* n, const char* name, int64_t value) {
  Onnx__AttributeProto* a = attr(n, name, ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__INT);
  a->has_i = 1;
  a->i = value;
}

static void attr_ints(Onnx__NodeProto* n, const char* name, const int64_t* values, size_t count) {
  Onnx__AttributeProto* a = attr(n, name, ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__INTS);
  a->ints = grab(count * sizeof(int64_t));
  memcpy(a->ints, values, count * sizeof(int64_t));
  a->n_ints = count;
}

enum { FLOAT = 1, INT64 = 7, BOOL = 9 };

static Onnx__TensorProto* tensor(const char* name, int32_t type, const int64_t* dims, int ndim, const void* data,
                                 size_t bytes) {
  Onnx__TensorProto* t = grab(sizeof(*t));
  onnx__tensor_proto__init(t);
  t->name = text(name);
  t->has_data_type = 1;
  t->data_type = type;
  t->n_dims = (size_t)ndim;
  t->dims = grab((size_t)ndim * sizeof(int64_t));
  if (ndim) memcpy(t->dims, dims, (size_t)ndim * sizeof(int64_t));
  t->has_raw_data = 1;
  t->raw_data.data = grab(bytes);
  memcpy(t->raw_data.data, data, bytes);
  t->raw_data.len = bytes;
  return t;
}

static void initializer(Onnx__GraphProto* g, Onnx__TensorProto* t) { g->initializer[g->n_initializer++] = t; }

static void init_floats(Onnx__GraphProto* g, const char* name, const int64_t* dims, int ndim, const float* values,
                        size_t count) {
  initializer(g, tensor(name, FLOAT, dims, ndim, values, count * sizeof(float)));
}

static void init_int64(Onnx__GraphProto* g, const char* name, int64_t value) {
  initializer(g, tensor(name, INT64, NULL, 0, &value, sizeof(value)));
}

static void init_bool(Onnx__GraphProto* g, const char* name, bool value) {
  uint8_t byte = value;
  initializer(g, tensor(name, BOOL, NULL, 0, &byte, 1));
}

/* A Constant node whose value is t. */
static void constant(Onnx__GraphProto* g, const char* output, Onnx__TensorProto* t) {
  Onnx__NodeProto* n = node(g, "Constant", "", output);
  attr(n, "value", ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__TENSOR)->t = t;
}

/* A value info of element type elem and shape (dims < 0: symbolic "N"); ndim < 0: no type. */
static Onnx__ValueInfoProto* value_info(const char* name, int32_t elem, const int64_t* dims, int ndim) {
  Onnx__ValueInfoProto* v = grab(sizeof(*v));
  onnx__value_info_proto__init(v);
  v->name = text(name);
  if (ndim < 0) return v;
  Onnx__TypeProto* type = grab(sizeof(*type));
  onnx__type_proto__init(type);
  Onnx__TypeProto__Tensor* tt = grab(sizeof(*tt));
  onnx__type_proto__tensor__init(tt);
  Onnx__TensorShapeProto* shape = grab(sizeof(*shape));
  onnx__tensor_shape_proto__init(shape);
  type->value_case = ONNX__TYPE_PROTO__VALUE_TENSOR_TYPE;
  type->tensor_type = tt;
  tt->has_elem_type = 1;
  tt->elem_type = elem;
  tt->shape = shape;
  shape->n_dim = (size_t)ndim;
  shape->dim = grab((size_t)(ndim + 1) * sizeof(*shape->dim));
  for (int d = 0; d < ndim; ++d) {
    Onnx__TensorShapeProto__Dimension* dim = grab(sizeof(*dim));
    onnx__tensor_shape_proto__dimension__init(dim);
    if (dims[d] >= 0) {
      dim->value_case = ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_VALUE;
      dim->dim_value = dims[d];
    } else {
      dim->value_case = ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_PARAM;
      dim->dim_param = text("N");
    }
    shape->dim[d] = dim;
  }
  v->type = type;
  return v;
}

static void input(Onnx__GraphProto* g, const char* name, int32_t elem, const int64_t* dims, int ndim) {
  g->input[g->n_input++] = value_info(name, elem, dims, ndim);
}

/* A graph input without a type: a subgraph's inputs take their outer values' types. */
static void body_input(Onnx__GraphProto* g, const char* name) {
  g->input[g->n_input++] = value_info(name, 0, NULL, -1);
}

static void output(Onnx__GraphProto* g, const char* name) { g->output[g->n_output++] = value_info(name, 0, NULL, -1); }

/* g as the graph of a model of opset, serialized (malloc'd). */
static uint8_t* pack(Onnx__GraphProto* g, int64_t opset, size_t* out_size) {
  Onnx__ModelProto model = ONNX__MODEL_PROTO__INIT;
  Onnx__OperatorSetIdProto set = ONNX__OPERATOR_SET_ID_PROTO__INIT;
  Onnx__OperatorSetIdProto* sets[1] = {&set};
  set.domain = "";
  set.has_version = 1;
  set.version = opset;
  model.has_ir_version = 1;
  model.ir_version = 8;
  model.n_opset_import = 1;
  model.opset_import = sets;
  model.graph = g;
  *out_size = onnx__model_proto__get_packed_size(&model);
  uint8_t* bytes = malloc(*out_size);
  assert_non_null(bytes);
  onnx__model_proto__pack(&model, bytes);
  return bytes;
}

/* One load (hgr_onnx_load_memory) of g at opset 13. */
static hgr_status_t load(Onnx__GraphProto* g, hgr_onnx_report_t* report) {
  size_t size;
  uint8_t* bytes = pack(g, 13, &size);
  hgr_graph_t* graph = NULL;
  hgr_params_t* params = NULL;
  hgr_status_t status = hgr_onnx_load_memory(bytes, size, NULL, NULL, &graph, &params, report);
  free(bytes);
  hgr_graph_release(graph);
  hgr_params_release(params);
  return status;
}

/* ---- the models ------------------------------------------------------------------ */

static const int64_t dims_2x3[2] = {2, 3}, dims_3[1] = {3}, dims_2[1] = {2}, dims_1[1] = {1};
static const float a_values[3] = {1, 2, 3}, one_value[1] = {1}, two_value[1] = {2};

/* y = If(cond) { x + a } else { else_op(x) }, cond and a initializers. */
static Onnx__GraphProto* if_model(bool cond, const char* else_op) {
  Onnx__GraphProto* g = graph_new("if");
  input(g, "x", FLOAT, dims_2x3, 2);
  init_bool(g, "cond", cond);
  init_floats(g, "a", dims_3, 1, a_values, 3);
  Onnx__GraphProto* then_branch = graph_new("then");
  node(then_branch, "Add", "x,a", "t_out");
  output(then_branch, "t_out");
  Onnx__GraphProto* else_branch = graph_new("else");
  node(else_branch, else_op, "x", "e_out");
  output(else_branch, "e_out");
  Onnx__NodeProto* n = node(g, "If", "cond", "y");
  attr_graph(n, "then_branch", then_branch);
  attr_graph(n, "else_branch", else_branch);
  output(g, "y");
  return g;
}

/* Loop(trip, cond, s = x) { s_out = s_in + x; scan = s_out * float(i) }: trip and cond
 * name initializers or are "" (omitted). */
static Onnx__GraphProto* loop_model(const char* trip, const char* cond) {
  Onnx__GraphProto* g = graph_new("loop");
  input(g, "x", FLOAT, dims_2, 1);
  Onnx__GraphProto* body = graph_new("body");
  body_input(body, "i");
  body_input(body, "cond_in");
  body_input(body, "s_in");
  node(body, "Identity", "cond_in", "cond_out");
  node(body, "Add", "s_in,x", "s_out");
  attr_int(node(body, "Cast", "i", "f"), "to", FLOAT);
  node(body, "Mul", "s_out,f", "scan");
  output(body, "cond_out");
  output(body, "s_out");
  output(body, "scan");
  char inputs[64];
  snprintf(inputs, sizeof(inputs), "%s,%s,x", trip, cond);
  attr_graph(node(g, "Loop", inputs, "s_final,scans"), "body", body);
  output(g, "s_final");
  output(g, "scans");
  return g;
}

/* ---- what loads, and what is refused (no device) ------------------------------------ */

static void if_imports_only_the_branch_its_constant_condition_takes(void** state) {
  (void)state;
  hgr_onnx_report_t report;
  ASSERT_OK(load(if_model(true, "NoSuchOp"), &report));
  assert_int_equal(report.graph_nodes, 1); /* the add: the else branch never existed */
  assert_int_equal(report.onnx_nodes, 2);  /* the If and its then branch's Add */
  ASSERT_STATUS(load(if_model(false, "NoSuchOp"), NULL), HGR_STATUS_UNIMPLEMENTED,
                "node 0 'e_out' (NoSuchOp, opset 13) in the else_branch of node 0 'y' (If, opset 13)",
                "op 'NoSuchOp' is not supported");
  ASSERT_OK(load(if_model(false, "Relu"), &report));
  /* The model object checks the ops of both branches when it is made. */
  size_t size;
  uint8_t* bytes = pack(if_model(true, "NoSuchOp"), 13, &size);
  hgr_model_t* model = (hgr_model_t*)&model;
  ASSERT_STATUS(hgr_model_create_onnx_memory(NULL, bytes, size, NULL, NULL, &model), HGR_STATUS_UNIMPLEMENTED,
                "(NoSuchOp, opset 13) in the else_branch of node 0 'y' (If, opset 13)");
  assert_null(model);
  free(bytes);
  arena_free();
}

static void a_branch_may_pass_an_outer_value_through(void** state) {
  (void)state;
  /* y = If(cond) { x } else { -x }: the then_branch has no node of its own. */
  Onnx__GraphProto* g = graph_new("pass");
  input(g, "x", FLOAT, dims_2, 1);
  init_bool(g, "cond", true);
  Onnx__GraphProto* then_branch = graph_new("then");
  output(then_branch, "x");
  Onnx__GraphProto* else_branch = graph_new("else");
  node(else_branch, "Neg", "x", "n");
  output(else_branch, "n");
  Onnx__NodeProto* n = node(g, "If", "cond", "y");
  attr_graph(n, "then_branch", then_branch);
  attr_graph(n, "else_branch", else_branch);
  node(g, "Relu", "y", "z");
  output(g, "z");
  hgr_onnx_report_t report;
  ASSERT_OK(load(g, &report));
  assert_int_equal(report.graph_nodes, 1); /* the relu, of x */
  /* An output no scope defines. */
  then_branch->output[0]->name = text("nowhere");
  ASSERT_STATUS(load(g, NULL), HGR_STATUS_INVALID_ARGUMENT, "the then_branch of node 0 'y' (If, opset 13)",
                "graph output 0 'nowhere' is not produced");
  arena_free();
}

/* A chain of `ifs` If nodes, each in the then_branch of the one before, every level
 * reading the model's graph's 'c' and the innermost its 'x'. */
static Onnx__GraphProto* nested_ifs(int ifs) {
  Onnx__GraphProto* top = graph_new("nested");
  input(top, "x", FLOAT, dims_2, 1);
  init_bool(top, "c", true);
  Onnx__GraphProto* g = top;
  for (int level = 0; level < ifs; ++level) {
    char name[32], out[32];
    snprintf(name, sizeof(name), "if%d", level);
    snprintf(out, sizeof(out), "y%d", level);
    Onnx__GraphProto* then_branch = graph_new("then");
    Onnx__GraphProto* else_branch = graph_new("else");
    node(else_branch, "Neg", "x", "neg");
    output(else_branch, "neg");
    Onnx__NodeProto* n = node(g, "If", "c", out);
    n->name = text(name);
    attr_graph(n, "then_branch", then_branch);
    attr_graph(n, "else_branch", else_branch);
    output(g, out);
    g = then_branch;
  }
  node(g, "Relu", "x", "innermost");
  output(g, "innermost");
  return top;
}

static void graphs_nest_up_to_the_named_limit(void** state) {
  (void)state;
  /* The model's graph and 15 branches: 16 graphs deep, HGR_ONNX_MAX_GRAPH_DEPTH. */
  hgr_onnx_report_t report;
  ASSERT_OK(load(nested_ifs(HGR_ONNX_MAX_GRAPH_DEPTH - 1), &report));
  assert_int_equal(report.graph_nodes, 1); /* the relu */
  ASSERT_STATUS(load(nested_ifs(HGR_ONNX_MAX_GRAPH_DEPTH), NULL), HGR_STATUS_INVALID_ARGUMENT,
                "nests graphs (If, Loop and Scan bodies) more than 16 deep", "node 'if15' (If) holds a graph at "
                "depth 17", "HGR_ONNX_MAX_GRAPH_DEPTH");
  arena_free();
}

static void conditions_computed_from_the_data_are_refused(void** state) {
  (void)state;
  /* If on ReduceSum(x) > 0 in one graph (no stages): its branches' outputs agree in
   * shape, so both run and a `where` selects; where they differ, it is refused. */
  Onnx__GraphProto* g = graph_new("data_if");
  input(g, "x", FLOAT, dims_3, 1);
  init_floats(g, "zero", NULL, 0, (const float[]){0}, 1);
  node(g, "ReduceSum", "x", "sum");
  node(g, "Greater", "sum,zero", "c");
  Onnx__GraphProto* then_branch = graph_new("then");
  node(then_branch, "Relu", "x", "r");
  output(then_branch, "r");
  Onnx__GraphProto* else_branch = graph_new("else");
  node(else_branch, "Neg", "x", "n");
  output(else_branch, "n");
  Onnx__NodeProto* n = node(g, "If", "c", "y");
  attr_graph(n, "then_branch", then_branch);
  attr_graph(n, "else_branch", else_branch);
  output(g, "y");
  ASSERT_OK(load(g, NULL));
  else_branch->node[0]->op_type = text("Concat"); /* [6]: no longer the then_branch's shape */
  else_branch->node[0]->n_input = 2;
  else_branch->node[0]->input = name_list("x,x", &else_branch->node[0]->n_input);
  attr_int(else_branch->node[0], "axis", 0);
  ASSERT_STATUS(load(g, NULL), HGR_STATUS_UNIMPLEMENTED,
                "node 2 'y' (If, opset 13): its condition 'c' depends on the model's data at run time; hgr runs If "
                "only when the condition is known when the model is specialized");
  /* The model object specializes on x's values, then refuses as well. */
  size_t size;
  uint8_t* bytes = pack(g, 13, &size);
  hgr_model_t* model = NULL;
  ASSERT_OK(hgr_model_create_onnx_memory(NULL, bytes, size, NULL, NULL, &model));
  free(bytes);
  const float x[3] = {1, 2, 3};
  const hgr_model_input_t in = {{HGR_DTYPE_FLOAT, 32, 1}, 1, dims_3, x, sizeof(x)};
  hgr_graph_t* graph = NULL;
  hgr_params_t* params = NULL;
  ASSERT_STATUS(hgr_model_graph(model, &in, 1, &graph, &params), HGR_STATUS_UNIMPLEMENTED,
                "its condition 'c' depends on the model's data at run time");
  hgr_model_release(model);

  /* A Loop whose body's condition comes from a carried value of the data. */
  g = graph_new("data_loop");
  input(g, "x", FLOAT, dims_2, 1);
  init_bool(g, "go", true);
  init_floats(g, "ten", NULL, 0, (const float[]){10}, 1);
  Onnx__GraphProto* body = graph_new("body");
  body_input(body, "i");
  body_input(body, "cond_in");
  body_input(body, "s_in");
  node(body, "Add", "s_in,s_in", "s_out");
  node(body, "ReduceSum", "s_out", "total");
  node(body, "Less", "total,ten", "cond_out");
  output(body, "cond_out");
  output(body, "s_out");
  attr_graph(node(g, "Loop", ",go,x", "y"), "body", body);
  output(g, "y");
  ASSERT_STATUS(load(g, NULL), HGR_STATUS_UNIMPLEMENTED,
                "node 0 'y' (Loop, opset 13): its condition 'cond_out' (the body's output 0, at iteration 0) depends "
                "on the model's data at run time");
  /* A trip count that is a graph input: one load cannot know it, and says how to fix it. */
  g = loop_model("trip", "");
  input(g, "trip", INT64, NULL, 0);
  ASSERT_STATUS(load(g, NULL), HGR_STATUS_UNIMPLEMENTED,
                "(Loop, opset 13): its trip count 'trip' depends on the model's data at run time",
                "hgr_onnx_options_set_input_value");
  g = loop_model("", "");
  ASSERT_STATUS(load(g, NULL), HGR_STATUS_UNIMPLEMENTED, "neither a trip count nor a condition");
  arena_free();
}

static void unrolling_beyond_the_limit_is_refused(void** state) {
  (void)state;
  /* A billion iterations of a 4-node body: refused before any copy is made. */
  Onnx__GraphProto* g = loop_model("trip", "");
  init_int64(g, "trip", 1000000000);
  ASSERT_STATUS(load(g, NULL), HGR_STATUS_RESOURCE_EXHAUSTED,
                "node 0 's_final' (Loop, opset 13): 1000000000 iterations \u00d7 4 nodes exceed hgr's limit of "
                "100000 nodes unrolled (HGR_ONNX_MAX_UNROLLED_NODES)");
  /* 2^62 iterations: the product of iterations and nodes does not wrap around. */
  g = loop_model("trip", "");
  init_int64(g, "trip", INT64_C(1) << 62);
  ASSERT_STATUS(load(g, NULL), HGR_STATUS_RESOURCE_EXHAUSTED,
                "node 0 's_final' (Loop, opset 13): 4611686018427387904 iterations \u00d7 4 nodes exceed hgr's limit");
  /* A while loop whose condition stays true: stopped by the same limit. */
  g = graph_new("forever");
  input(g, "x", FLOAT, dims_2, 1);
  init_bool(g, "go", true);
  Onnx__GraphProto* body = graph_new("body");
  body_input(body, "i");
  body_input(body, "cond_in");
  body_input(body, "s_0");
  node(body, "Identity", "cond_in", "cond_out");
  for (int k = 1; k < 500; ++k) {
    char from[16], to[16];
    snprintf(from, sizeof(from), "s_%d", k - 1);
    snprintf(to, sizeof(to), "s_%d", k);
    node(body, "Identity", from, to);
  }
  output(body, "cond_out");
  output(body, "s_499");
  attr_graph(node(g, "Loop", ",go,x", "y"), "body", body);
  output(g, "y");
  ASSERT_STATUS(load(g, NULL), HGR_STATUS_RESOURCE_EXHAUSTED, "node 0 'y' (Loop, opset 13)", "500 nodes",
                "exceed hgr's limit of 100000 nodes unrolled");
  arena_free();
}

static void scan_inputs_that_disagree_in_length_are_refused(void** state) {
  (void)state;
  /* Two scan inputs, x [2, 3] along axis 1 (3 steps) and w [2, 3] along axis 0 (2). */
  Onnx__GraphProto* g = graph_new("scan_disagree");
  input(g, "x", FLOAT, dims_2x3, 2);
  input(g, "w", FLOAT, dims_2x3, 2);
  init_floats(g, "zeros", dims_2, 1, (const float[]){0, 0}, 2);
  Onnx__GraphProto* body = graph_new("body");
  body_input(body, "sum_in");
  body_input(body, "column");
  body_input(body, "row");
  node(body, "Add", "sum_in,column", "sum_out");
  output(body, "sum_out");
  Onnx__NodeProto* n = node(g, "Scan", "zeros,x,w", "total");
  attr_graph(n, "body", body);
  attr_int(n, "num_scan_inputs", 2);
  attr_ints(n, "scan_input_axes", (const int64_t[]){1, 0}, 2);
  output(g, "total");
  ASSERT_STATUS(load(g, NULL), HGR_STATUS_INVALID_ARGUMENT,
                "node 0 'total' (Scan, opset 13): scan input 1 ('w') has 2 elements along its axis 0; scan input 0 "
                "has 3");
  /* An axis out of range: the attr set last is scan_input_axes. */
  n->attribute[n->n_attribute - 1]->ints[1] = 2;
  ASSERT_STATUS(load(g, NULL), HGR_STATUS_INVALID_ARGUMENT, "attr 'scan_input_axes'");
  arena_free();
}

static void sequences_and_opset_8_scan_are_refused_by_name(void** state) {
  (void)state;
  ASSERT_STATUS(load(if_model(false, "SequenceConstruct"), NULL), HGR_STATUS_UNIMPLEMENTED,
                "(SequenceConstruct, opset 13) in the else_branch of node 0 'y' (If, opset 13)",
                "op 'SequenceConstruct' is not supported");
  /* A body input declared as a sequence. */
  Onnx__GraphProto* g = loop_model("trip", "");
  init_int64(g, "trip", 2);
  Onnx__GraphProto* body = g->node[0]->attribute[0]->g;
  Onnx__TypeProto* sequence = grab(sizeof(*sequence));
  onnx__type_proto__init(sequence);
  Onnx__TypeProto__Sequence* of = grab(sizeof(*of));
  onnx__type_proto__sequence__init(of);
  sequence->value_case = ONNX__TYPE_PROTO__VALUE_SEQUENCE_TYPE;
  sequence->sequence_type = of;
  body->input[2]->type = sequence;
  ASSERT_STATUS(load(g, NULL), HGR_STATUS_UNIMPLEMENTED,
                "(Loop, opset 13): its body's input 2 's_in' is a sequence; hgr computes tensors only");
  /* Opset 8's Scan, batched with sequence_lens. */
  g = graph_new("scan8");
  input(g, "x", FLOAT, (const int64_t[]){1, 3, 2}, 3);
  input(g, "init", FLOAT, (const int64_t[]){1, 2}, 2);
  body = graph_new("body");
  body_input(body, "s_in");
  body_input(body, "row");
  node(body, "Add", "s_in,row", "s_out");
  output(body, "s_out");
  Onnx__NodeProto* n = node(g, "Scan", ",init,x", "y");
  attr_graph(n, "body", body);
  attr_int(n, "num_scan_inputs", 1);
  output(g, "y");
  size_t size;
  uint8_t* bytes = pack(g, 8, &size);
  hgr_graph_t* graph = NULL;
  hgr_params_t* params = NULL;
  ASSERT_STATUS(hgr_onnx_load_memory(bytes, size, NULL, NULL, &graph, &params, NULL), HGR_STATUS_UNIMPLEMENTED,
                "node 0 'y' (Scan, opset 8): the batched Scan of opset 8", "hgr runs Scan from opset 9");
  free(bytes);
  arena_free();
}

static void a_loop_of_constants_folds_at_load(void** state) {
  (void)state;
  /* Everything the body computes is known: nothing is left for a device but x + s. */
  Onnx__GraphProto* g = graph_new("folded");
  input(g, "x", FLOAT, dims_2, 1);
  init_int64(g, "trip", 3);
  init_floats(g, "s0", dims_2, 1, (const float[]){1, 2}, 2);
  Onnx__GraphProto* body = graph_new("body");
  body_input(body, "i");
  body_input(body, "cond_in");
  body_input(body, "s_in");
  node(body, "Identity", "cond_in", "cond_out");
  node(body, "Add", "s_in,s_in", "s_out");
  output(body, "cond_out");
  output(body, "s_out");
  attr_graph(node(g, "Loop", "trip,,s0", "s"), "body", body);
  node(g, "Add", "x,s", "y");
  output(g, "y");
  hgr_onnx_report_t report;
  ASSERT_OK(load(g, &report));
  assert_int_equal(report.graph_nodes, 1);
  assert_true(report.folded >= 3); /* the body's Add, three times */
  arena_free();
}

/* ---- every allocation failing in turn -------------------------------------------- */

typedef struct walker_t {
  long long live;    /* blocks allocated and not freed */
  long long calls;   /* allocations and resizes */
  long long fail_at; /* the call that fails (1-based); 0: none */
  bool failed;
} walker_t;

static void* walker_fn(void* self, void* block, size_t bytes) {
  walker_t* w = self;
  if (!bytes) {
    if (block) --w->live;
    free(block);
    return NULL;
  }
  if (++w->calls == w->fail_at) {
    w->failed = true;
    return NULL;
  }
  void* grown = realloc(block, bytes);
  if (grown && !block) ++w->live;
  return grown;
}

/* If, Loop (carried values, scan outputs, a nested If) and Scan in one model. */
static Onnx__GraphProto* every_control_op(void) {
  Onnx__GraphProto* g = loop_model("trip", "");
  init_int64(g, "trip", 3);
  init_bool(g, "cond", false);
  init_floats(g, "zeros", dims_2, 1, (const float[]){0, 0}, 2);
  Onnx__GraphProto* body = g->node[0]->attribute[0]->g;
  Onnx__GraphProto* then_branch = graph_new("then");
  node(then_branch, "Neg", "s_in", "negated");
  output(then_branch, "negated");
  Onnx__GraphProto* else_branch = graph_new("else");
  initializer(else_branch, tensor("half", FLOAT, NULL, 0, (const float[]){0.5f}, sizeof(float)));
  node(else_branch, "Mul", "s_in,half", "halved");
  output(else_branch, "halved");
  Onnx__NodeProto* n = node(body, "If", "cond", "inner");
  attr_graph(n, "then_branch", then_branch);
  attr_graph(n, "else_branch", else_branch);
  output(body, "inner");
  g->node[0]->output = name_list("s_final,scans,inners", &g->node[0]->n_output);
  Onnx__GraphProto* scan_body = graph_new("scan_body");
  body_input(scan_body, "acc_in");
  body_input(scan_body, "row");
  node(scan_body, "Add", "acc_in,row", "acc_out");
  output(scan_body, "acc_out");
  output(scan_body, "acc_out");
  n = node(g, "Scan", "zeros,scans", "acc,accs");
  attr_graph(n, "body", scan_body);
  attr_int(n, "num_scan_inputs", 1);
  output(g, "inners");
  output(g, "acc");
  output(g, "accs");
  return g;
}

static void every_failed_allocation_of_a_control_flow_import_is_clean(void** state) {
  (void)state;
  size_t size;
  uint8_t* bytes = pack(every_control_op(), 13, &size);
  walker_t w;
  bool done = false;
  long long steps = 0;
  for (long long fail_at = 1; !done; ++fail_at, ++steps) {
    memset(&w, 0, sizeof(w));
    w.fail_at = fail_at;
    hgr_allocator_t allocator = {&w, walker_fn};
    hgr__onnx_model_t* model = NULL;
    hgr_status_t status = hgr__onnx_model_parse(allocator, bytes, size, NULL, NULL, &model);
    hgr_graph_t* graph = NULL;
    hgr_params_t* params = NULL;
    if (!status) status = hgr__onnx_model_import(model, NULL, &graph, &params, NULL, NULL);
    hgr_graph_release(graph);
    hgr_params_release(params);
    hgr__onnx_model_free(model);
    if (status) {
      if (hgr_status_code(status) != HGR_STATUS_RESOURCE_EXHAUSTED || !w.failed) {
        char* message = hgr_status_to_string(status);
        print_error("allocation %lld failing: %s\n", fail_at, message);
        free(message);
        fail();
      }
      hgr_status_free(status);
    }
    if (w.live) {
      print_error("allocation %lld failing: %lld blocks left\n", fail_at, w.live);
      fail();
    }
    done = !w.failed;
  }
  printf("%lld allocations walked\n", steps);
  assert_true(steps > 100);
  free(bytes);
  arena_free();
}

/* ---- running on pocl:0 ------------------------------------------------------------ */

static const hgr_dtype_t f32 = {HGR_DTYPE_FLOAT, 32, 1}, boolean = {HGR_DTYPE_UINT, 1, 1};
static hgr_instance_t* instance;

/* The model object of g (opset 13) on pocl:0. */
static hgr_model_t* model_on_pocl(Onnx__GraphProto* g) {
  size_t size;
  uint8_t* bytes = pack(g, 13, &size);
  hgr_model_options_t options;
  hgr_model_options_init(&options);
  static const hgr_device_binding_t binding = {0, "pocl:0"};
  options.executor.bindings = &binding;
  options.executor.binding_count = 1;
  hgr_model_t* model = NULL;
  ASSERT_OK(hgr_model_create_onnx_memory(instance, bytes, size, NULL, &options, &model));
  free(bytes);
  return model;
}

/* Runs model on inputs and reads output index (of want_count floats, shape checked
 * against want_shape when given) into out. */
static void run(hgr_model_t* model, const hgr_model_input_t* inputs, size_t count, size_t index, float* out,
                size_t want_count, const int64_t* want_shape, int32_t want_ndim) {
  hgr_model_run_t* r = NULL;
  ASSERT_OK(hgr_model_run(model, inputs, count, &r));
  ASSERT_OK(hgr_model_run_wait(r));
  hgr_tensor_info_t info;
  ASSERT_OK(hgr_model_run_output_info(r, index, &info));
  assert_int_equal(info.bytes, want_count * sizeof(float));
  if (want_shape) {
    assert_int_equal(info.ndim, want_ndim);
    for (int32_t d = 0; d < want_ndim; ++d) assert_int_equal(info.shape[d], want_shape[d]);
  }
  ASSERT_OK(hgr_model_run_get_output(r, index, out, want_count * sizeof(float)));
  hgr_model_run_release(r);
}

static void assert_close(const float* got, const float* want, size_t count) {
  for (size_t i = 0; i < count; ++i)
    if (!(fabsf(got[i] - want[i]) <= 1e-5f + 1e-5f * fabsf(want[i]))) {
      print_error("element %zu: %g, expected %g\n", i, (double)got[i], (double)want[i]);
      fail();
    }
}

static void if_on_a_comparison_of_shapes_takes_each_shapes_branch(void** state) {
  (void)state;
  /* y = If(Shape(x)[0] > 2) { x * 2 } else { x + 1 }, x [N, 2] */
  Onnx__GraphProto* g = graph_new("shape_if");
  input(g, "x", FLOAT, (const int64_t[]){-1, 2}, 2);
  init_int64(g, "zero", 0);
  init_int64(g, "two_rows", 2);
  init_floats(g, "one", dims_1, 1, one_value, 1);
  init_floats(g, "two", dims_1, 1, two_value, 1);
  node(g, "Shape", "x", "shape");
  node(g, "Gather", "shape,zero", "rows");
  node(g, "Greater", "rows,two_rows", "c");
  Onnx__GraphProto* then_branch = graph_new("then");
  node(then_branch, "Mul", "x,two", "doubled");
  output(then_branch, "doubled");
  Onnx__GraphProto* else_branch = graph_new("else");
  node(else_branch, "Add", "x,one", "plus");
  output(else_branch, "plus");
  Onnx__NodeProto* n = node(g, "If", "c", "y");
  attr_graph(n, "then_branch", then_branch);
  attr_graph(n, "else_branch", else_branch);
  output(g, "y");
  hgr_model_t* model = model_on_pocl(g);
  const float x[6] = {1, -2, 3, -4, 5, -6};
  float y[6], want[6];
  const int64_t three_rows[2] = {3, 2}, one_row[2] = {1, 2};
  hgr_model_input_t in = {f32, 2, three_rows, x, sizeof(x)};
  run(model, &in, 1, 0, y, 6, three_rows, 2);
  for (int i = 0; i < 6; ++i) want[i] = x[i] * 2;
  assert_close(y, want, 6);
  in = (hgr_model_input_t){f32, 2, one_row, x, 2 * sizeof(float)};
  run(model, &in, 1, 0, y, 2, one_row, 2);
  for (int i = 0; i < 2; ++i) want[i] = x[i] + 1;
  assert_close(y, want, 2);
  hgr_model_io_t io;
  ASSERT_OK(hgr_model_input(model, 0, &io));
  assert_false(io.decides_shapes); /* shapes alone decided: x's values are not part of the key */
  hgr_model_release(model);
  arena_free();
}

static void if_on_an_input_specialized_by_value_takes_each_branch(void** state) {
  (void)state;
  /* y = If(cond) { x + a } else { ReduceSum(x, axes [0] from the branch's own
   * initializer, keepdims 0) }: the branches' outputs differ in shape. */
  Onnx__GraphProto* g = graph_new("value_if");
  input(g, "cond", BOOL, NULL, 0);
  input(g, "x", FLOAT, dims_2x3, 2);
  init_floats(g, "a", dims_3, 1, a_values, 3);
  Onnx__GraphProto* then_branch = graph_new("then");
  node(then_branch, "Add", "x,a", "sum");
  output(then_branch, "sum");
  Onnx__GraphProto* else_branch = graph_new("else");
  initializer(else_branch, tensor("axes", INT64, dims_1, 1, (const int64_t[]){0}, sizeof(int64_t)));
  attr_int(node(else_branch, "ReduceSum", "x,axes", "columns"), "keepdims", 0);
  output(else_branch, "columns");
  Onnx__NodeProto* n = node(g, "If", "cond", "y");
  attr_graph(n, "then_branch", then_branch);
  attr_graph(n, "else_branch", else_branch);
  output(g, "y");
  hgr_model_t* model = model_on_pocl(g);
  const float x[6] = {1, 2, 3, 4, 5, 6};
  uint8_t yes = 1, no = 0;
  float y[6];
  hgr_model_input_t in[2] = {{boolean, 0, dims_1, &yes, 1}, {f32, 2, dims_2x3, x, sizeof(x)}};
  run(model, in, 2, 0, y, 6, dims_2x3, 2);
  assert_close(y, (const float[]){2, 4, 6, 5, 7, 9}, 6);
  in[0].data = &no;
  run(model, in, 2, 0, y, 3, dims_3, 1);
  assert_close(y, (const float[]){5, 7, 9}, 3);
  in[0].data = &yes; /* the first specialization again */
  run(model, in, 2, 0, y, 6, dims_2x3, 2);
  assert_close(y, (const float[]){2, 4, 6, 5, 7, 9}, 6);
  hgr_model_io_t io;
  ASSERT_OK(hgr_model_input(model, 0, &io));
  assert_true(io.decides_shapes);
  hgr_model_report_t report;
  hgr_model_report(model, &report);
  assert_int_equal(report.created, 2);
  hgr_model_release(model);
  arena_free();
}

static void branches_read_outer_values_and_shadow_them_with_their_own(void** state) {
  (void)state;
  /* The then_branch reads the outer 'a' and defines its own 'b'; after the If, 'b'
   * is the outer one again: y = (x + a + 100 b_inner) + b_outer. */
  Onnx__GraphProto* g = graph_new("shadow");
  input(g, "x", FLOAT, dims_3, 1);
  init_bool(g, "cond", true);
  init_floats(g, "a", dims_3, 1, a_values, 3);
  init_floats(g, "b", dims_3, 1, (const float[]){10, 20, 30}, 3);
  Onnx__GraphProto* then_branch = graph_new("then");
  constant(then_branch, "b", tensor("", FLOAT, dims_3, 1, (const float[]){100, 200, 300}, 3 * sizeof(float)));
  node(then_branch, "Add", "x,a", "t");
  node(then_branch, "Add", "t,b", "u");
  output(then_branch, "u");
  Onnx__GraphProto* else_branch = graph_new("else");
  node(else_branch, "Neg", "x", "v");
  output(else_branch, "v");
  Onnx__NodeProto* n = node(g, "If", "cond", "w");
  attr_graph(n, "then_branch", then_branch);
  attr_graph(n, "else_branch", else_branch);
  node(g, "Add", "w,b", "y");
  output(g, "y");
  hgr_model_t* model = model_on_pocl(g);
  const float x[3] = {0.5f, -1, 2};
  float y[3];
  hgr_model_input_t in = {f32, 1, dims_3, x, sizeof(x)};
  run(model, &in, 1, 0, y, 3, dims_3, 1);
  assert_close(y, (const float[]){0.5f + 1 + 100 + 10, -1 + 2 + 200 + 20, 2 + 3 + 300 + 30}, 3);
  hgr_model_release(model);
  arena_free();
}

static void a_loop_threads_carried_values_and_stacks_its_scan_outputs(void** state) {
  (void)state;
  Onnx__GraphProto* g = loop_model("trip", "");
  init_int64(g, "trip", 4);
  hgr_model_t* model = model_on_pocl(g);
  const float x[2] = {1.5f, -2};
  float s[2], scans[8], want[8];
  hgr_model_input_t in = {f32, 1, dims_2, x, sizeof(x)};
  run(model, &in, 1, 0, s, 2, dims_2, 1);
  assert_close(s, (const float[]){5 * x[0], 5 * x[1]}, 2); /* x, then + x four times */
  const int64_t stacked[2] = {4, 2};
  run(model, &in, 1, 1, scans, 8, stacked, 2);
  for (int t = 0; t < 4; ++t)
    for (int j = 0; j < 2; ++j) want[t * 2 + j] = x[j] * (float)(t + 2) * (float)t;
  assert_close(scans, want, 8);
  hgr_model_release(model);
  arena_free();
}

static void a_while_loop_runs_until_its_condition_folds_false(void** state) {
  (void)state;
  /* cond given: the body's condition i < 2 ends it after iteration 2 (three copies). */
  Onnx__GraphProto* g = graph_new("while");
  input(g, "x", FLOAT, dims_2, 1);
  init_bool(g, "go", true);
  init_int64(g, "two", 2);
  Onnx__GraphProto* body = graph_new("body");
  body_input(body, "i");
  body_input(body, "cond_in");
  body_input(body, "s_in");
  node(body, "Less", "i,two", "cond_out");
  node(body, "Add", "s_in,x", "s_out");
  node(body, "Identity", "s_out", "scan");
  output(body, "cond_out");
  output(body, "s_out");
  output(body, "scan");
  attr_graph(node(g, "Loop", ",go,x", "s,scans"), "body", body);
  output(g, "s");
  output(g, "scans");
  hgr_model_t* model = model_on_pocl(g);
  const float x[2] = {3, -1};
  float s[2], scans[6];
  hgr_model_input_t in = {f32, 1, dims_2, x, sizeof(x)};
  run(model, &in, 1, 0, s, 2, dims_2, 1);
  assert_close(s, (const float[]){4 * x[0], 4 * x[1]}, 2);
  run(model, &in, 1, 1, scans, 6, (const int64_t[]){3, 2}, 2);
  assert_close(scans, (const float[]){2 * x[0], 2 * x[1], 3 * x[0], 3 * x[1], 4 * x[0], 4 * x[1]}, 6);
  hgr_model_release(model);
  arena_free();
}

static void an_if_nested_in_a_loop_body_is_inlined_per_iteration(void** state) {
  (void)state;
  /* s = x; four times: s = If(i < 2) { s + one } else { s * two }: ((x + 2) * 4). */
  Onnx__GraphProto* g = graph_new("loop_if");
  input(g, "x", FLOAT, dims_2, 1);
  init_int64(g, "trip", 4);
  init_int64(g, "two_steps", 2);
  init_floats(g, "one", dims_1, 1, one_value, 1);
  init_floats(g, "two", dims_1, 1, two_value, 1);
  Onnx__GraphProto* body = graph_new("body");
  body_input(body, "i");
  body_input(body, "cond_in");
  body_input(body, "s_in");
  node(body, "Identity", "cond_in", "cond_out");
  node(body, "Less", "i,two_steps", "early");
  Onnx__GraphProto* then_branch = graph_new("then");
  node(then_branch, "Add", "s_in,one", "plus");
  output(then_branch, "plus");
  Onnx__GraphProto* else_branch = graph_new("else");
  node(else_branch, "Mul", "s_in,two", "times");
  output(else_branch, "times");
  Onnx__NodeProto* n = node(body, "If", "early", "s_out");
  attr_graph(n, "then_branch", then_branch);
  attr_graph(n, "else_branch", else_branch);
  output(body, "cond_out");
  output(body, "s_out");
  attr_graph(node(g, "Loop", "trip,,x", "y"), "body", body);
  output(g, "y");
  hgr_model_t* model = model_on_pocl(g);
  const float x[2] = {0.25f, -3};
  float y[2];
  hgr_model_input_t in = {f32, 1, dims_2, x, sizeof(x)};
  run(model, &in, 1, 0, y, 2, dims_2, 1);
  assert_close(y, (const float[]){(x[0] + 2) * 4, (x[1] + 2) * 4}, 2);
  hgr_model_release(model);
  arena_free();
}

static void scan_runs_in_reverse_along_a_nonzero_axis(void** state) {
  (void)state;
  /* Over x [2, 3] along axis 1, last column first: the running sums, stacked along
   * axis 1 in reverse (suffix sums), and the total; and a Scan of constants, which
   * folds, added to the total. */
  Onnx__GraphProto* g = graph_new("scan");
  input(g, "x", FLOAT, dims_2x3, 2);
  init_floats(g, "zeros", dims_2, 1, (const float[]){0, 0}, 2);
  init_floats(g, "rows", (const int64_t[]){3, 2}, 2, (const float[]){1, 2, 3, 4, 5, 6}, 6);
  Onnx__GraphProto* body = graph_new("body");
  body_input(body, "sum_in");
  body_input(body, "column");
  node(body, "Add", "sum_in,column", "sum_out");
  node(body, "Identity", "sum_out", "scan_out");
  output(body, "sum_out");
  output(body, "scan_out");
  Onnx__NodeProto* n = node(g, "Scan", "zeros,x", "total,suffix");
  attr_graph(n, "body", body);
  attr_int(n, "num_scan_inputs", 1);
  attr_ints(n, "scan_input_axes", (const int64_t[]){1}, 1);
  attr_ints(n, "scan_input_directions", (const int64_t[]){1}, 1);
  attr_ints(n, "scan_output_axes", (const int64_t[]){-1}, 1);
  attr_ints(n, "scan_output_directions", (const int64_t[]){1}, 1);
  Onnx__GraphProto* folded = graph_new("folded_body");
  body_input(folded, "acc_in");
  body_input(folded, "row");
  node(folded, "Add", "acc_in,row", "acc_out");
  output(folded, "acc_out");
  Onnx__NodeProto* c = node(g, "Scan", "zeros,rows", "row_sum");
  attr_graph(c, "body", folded);
  attr_int(c, "num_scan_inputs", 1);
  node(g, "Add", "total,row_sum", "shifted");
  output(g, "total");
  output(g, "suffix");
  output(g, "shifted");
  hgr_model_t* model = model_on_pocl(g);
  const float x[6] = {1, 2, 4, 8, 16, 32};
  float total[2], suffix[6], shifted[2];
  hgr_model_input_t in = {f32, 2, dims_2x3, x, sizeof(x)};
  run(model, &in, 1, 0, total, 2, dims_2, 1);
  assert_close(total, (const float[]){7, 56}, 2);
  run(model, &in, 1, 1, suffix, 6, dims_2x3, 2);
  assert_close(suffix, (const float[]){7, 6, 4, 56, 48, 32}, 6);
  run(model, &in, 1, 2, shifted, 2, dims_2, 1);
  assert_close(shifted, (const float[]){7 + 9, 56 + 12}, 2);
  hgr_model_release(model);
  arena_free();
}

static void an_if_on_the_data_runs_in_stages_with_branches_of_other_shapes(void** state) {
  (void)state;
  /* y = If(ReduceSum(x) > 0) { Relu(x) [3] } else { Concat(x, x) [6] }; z = y * 2:
   * the first stage computes the condition and reads it on the host, the next one
   * (a specialization per branch, kept) takes x on the device. */
  Onnx__GraphProto* g = graph_new("data_if");
  input(g, "x", FLOAT, dims_3, 1);
  init_floats(g, "zero", NULL, 0, (const float[]){0}, 1);
  init_floats(g, "two", NULL, 0, (const float[]){2}, 1);
  node(g, "ReduceSum", "x", "sum");
  node(g, "Greater", "sum,zero", "c");
  Onnx__GraphProto* then_branch = graph_new("then");
  node(then_branch, "Relu", "x", "r");
  output(then_branch, "r");
  Onnx__GraphProto* else_branch = graph_new("else");
  attr_int(node(else_branch, "Concat", "x,x", "twice"), "axis", 0);
  output(else_branch, "twice");
  Onnx__NodeProto* n = node(g, "If", "c", "y");
  attr_graph(n, "then_branch", then_branch);
  attr_graph(n, "else_branch", else_branch);
  node(g, "Mul", "y,two", "z");
  output(g, "z");
  hgr_model_t* model = model_on_pocl(g);
  const float up[3] = {1, -2, 3}, down[3] = {-1, -2, 3};
  hgr_model_input_t in = {f32, 1, dims_3, up, sizeof(up)};
  float z[6];
  for (int round = 0; round < 2; ++round) {
    in.data = up;
    run(model, &in, 1, 0, z, 3, dims_3, 1);
    assert_close(z, (const float[]){2, 0, 6}, 3);
    in.data = down;
    run(model, &in, 1, 0, z, 6, (const int64_t[]){6}, 1);
    assert_close(z, (const float[]){-2, -4, 6, -2, -4, 6}, 6);
  }
  hgr_model_report_t report;
  hgr_model_report(model, &report);
  assert_int_equal(report.decisions, 4); /* one wait on the host per run */
  assert_int_equal(report.stage_runs, 4);
  assert_int_equal(report.created, 3); /* the first stage, and one per branch */
  /* No one executor runs it, nor one graph holds it. */
  hgr_specialization_t* s = NULL;
  ASSERT_STATUS(hgr_model_specialize(model, &in, 1, &s), HGR_STATUS_FAILED_PRECONDITION,
                "the model decides at run time (node 2 'y' (If, opset 13)): no one executor runs it");
  hgr_graph_t* graph = NULL;
  hgr_params_t* params = NULL;
  ASSERT_STATUS(hgr_model_graph(model, &in, 1, &graph, &params), HGR_STATUS_UNIMPLEMENTED,
                "its condition 'c' depends on the model's data at run time");
  /* The first stage reads the caller's memory where it lies (aligned, so zero copy on
   * PoCL), x carried on to the branch included, and only while hgr_model_run runs:
   * overwritten as soon as it returned, the run still computes from the values given. */
  float* aligned = aligned_alloc(4096, 4096);
  assert_non_null(aligned);
  memcpy(aligned, up, sizeof(up));
  in.data = aligned;
  hgr_model_run_t* r = NULL;
  ASSERT_OK(hgr_model_run(model, &in, 1, &r));
  memcpy(aligned, down, sizeof(down));
  ASSERT_OK(hgr_model_run_get_output(r, 0, z, 3 * sizeof(float)));
  assert_close(z, (const float[]){2, 0, 6}, 3);
  hgr_model_run_release(r);
  free(aligned);
  hgr_model_release(model);
  arena_free();
}

static void an_if_on_the_data_in_a_loop_body_selects_between_its_branches(void** state) {
  (void)state;
  /* Three iterations of s = If(ReduceSum(s) > 0) { s * 2 } else { s - 1 }: no stage
   * can start inside the body, so both branches run and a `where` takes one. */
  Onnx__GraphProto* g = graph_new("if_in_loop");
  input(g, "x", FLOAT, dims_3, 1);
  init_int64(g, "three", 3);
  init_floats(g, "zero", NULL, 0, (const float[]){0}, 1);
  init_floats(g, "one", NULL, 0, (const float[]){1}, 1);
  init_floats(g, "two", NULL, 0, (const float[]){2}, 1);
  Onnx__GraphProto* body = graph_new("body");
  body_input(body, "i");
  body_input(body, "cond_in");
  body_input(body, "s_in");
  node(body, "Identity", "cond_in", "cond_out");
  node(body, "ReduceSum", "s_in", "sum");
  node(body, "Greater", "sum,zero", "c");
  Onnx__GraphProto* then_branch = graph_new("then");
  node(then_branch, "Mul", "s_in,two", "doubled");
  output(then_branch, "doubled");
  Onnx__GraphProto* else_branch = graph_new("else");
  node(else_branch, "Sub", "s_in,one", "less");
  output(else_branch, "less");
  Onnx__NodeProto* n = node(body, "If", "c", "s_out");
  attr_graph(n, "then_branch", then_branch);
  attr_graph(n, "else_branch", else_branch);
  output(body, "cond_out");
  output(body, "s_out");
  init_bool(g, "go", true);
  attr_graph(node(g, "Loop", "three,go,x", "y"), "body", body);
  output(g, "y");
  hgr_model_t* model = model_on_pocl(g);
  /* sums 1 -> doubled (2) -> doubled (4); sums -1 -> less (-4) -> less (-7) -> less */
  const float up[3] = {1, -2, 2}, down[3] = {0, -2, 1};
  float y[3];
  hgr_model_input_t in = {f32, 1, dims_3, up, sizeof(up)};
  run(model, &in, 1, 0, y, 3, dims_3, 1);
  assert_close(y, (const float[]){8, -16, 16}, 3);
  in.data = down;
  run(model, &in, 1, 0, y, 3, dims_3, 1);
  assert_close(y, (const float[]){-3, -5, -2}, 3);
  hgr_model_report_t report;
  hgr_model_report(model, &report);
  assert_int_equal(report.decisions, 0); /* selected on the device, nothing read on the host */
  hgr_model_release(model);
  arena_free();
}

static void a_loop_trip_count_from_the_data_runs_in_stages(void** state) {
  (void)state;
  /* y = Loop(trip = ReduceSum(x) as int64) { s + 1 } from s = 0: the trip count is
   * read on the host, and the iterations unrolled at the count it says. */
  Onnx__GraphProto* g = graph_new("data_trip");
  input(g, "x", FLOAT, dims_3, 1);
  init_floats(g, "zero", NULL, 0, (const float[]){0}, 1);
  init_floats(g, "one", NULL, 0, (const float[]){1}, 1);
  node(g, "ReduceSum", "x", "sum");
  attr_int(node(g, "Cast", "sum", "trip"), "to", INT64);
  Onnx__GraphProto* body = graph_new("body");
  body_input(body, "i");
  body_input(body, "cond_in");
  body_input(body, "s_in");
  node(body, "Identity", "cond_in", "cond_out");
  node(body, "Add", "s_in,one", "s_out");
  output(body, "cond_out");
  output(body, "s_out");
  init_bool(g, "go", true);
  attr_graph(node(g, "Loop", "trip,go,zero", "y"), "body", body);
  output(g, "y");
  hgr_model_t* model = model_on_pocl(g);
  for (int trips = 0; trips < 4; ++trips) {
    const float x[3] = {(float)trips, 0.25f, -0.25f};
    hgr_model_input_t in = {f32, 1, dims_3, x, sizeof(x)};
    float y;
    run(model, &in, 1, 0, &y, 1, NULL, 0);
    assert_close(&y, (const float[]){(float)trips}, 1);
  }
  hgr_model_report_t report;
  hgr_model_report(model, &report);
  assert_int_equal(report.decisions, 4);
  hgr_model_release(model);
  arena_free();
}

static int open_instance(void** state) {
  (void)state;
  ASSERT_OK(hgr_instance_create(NULL, &instance));
  static const char* const device[1] = {"pocl:0"};
  hgr_test_require_devices(instance, device, 1);
  return 0;
}

static int close_instance(void** state) {
  (void)state;
  hgr_instance_release(instance);
  return 0;
}

int main(int argc, char** argv) {
  if (argc > 1 && !strcmp(argv[1], "run")) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(if_on_a_comparison_of_shapes_takes_each_shapes_branch),
        cmocka_unit_test(if_on_an_input_specialized_by_value_takes_each_branch),
        cmocka_unit_test(branches_read_outer_values_and_shadow_them_with_their_own),
        cmocka_unit_test(a_loop_threads_carried_values_and_stacks_its_scan_outputs),
        cmocka_unit_test(a_while_loop_runs_until_its_condition_folds_false),
        cmocka_unit_test(an_if_nested_in_a_loop_body_is_inlined_per_iteration),
        cmocka_unit_test(scan_runs_in_reverse_along_a_nonzero_axis),
        cmocka_unit_test(an_if_on_the_data_runs_in_stages_with_branches_of_other_shapes),
        cmocka_unit_test(a_loop_trip_count_from_the_data_runs_in_stages),
        cmocka_unit_test(an_if_on_the_data_in_a_loop_body_selects_between_its_branches),
    };
    return cmocka_run_group_tests(tests, open_instance, close_instance);
  }
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(if_imports_only_the_branch_its_constant_condition_takes),
      cmocka_unit_test(a_branch_may_pass_an_outer_value_through),
      cmocka_unit_test(graphs_nest_up_to_the_named_limit),
      cmocka_unit_test(conditions_computed_from_the_data_are_refused),
      cmocka_unit_test(unrolling_beyond_the_limit_is_refused),
      cmocka_unit_test(scan_inputs_that_disagree_in_length_are_refused),
      cmocka_unit_test(sequences_and_opset_8_scan_are_refused_by_name),
      cmocka_unit_test(a_loop_of_constants_folds_at_load),
      cmocka_unit_test(every_failed_allocation_of_a_control_flow_import_is_clean),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
