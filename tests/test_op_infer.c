/* Op shape inference (hgr__op_infer, runtime/ops/op_registry.c) without devices: what
 * each family infers on a graph under construction (only the node and its inputs'
 * entries exist), the errors naming the node, the op and the input or attr at fault,
 * hgr__op_plan refusing an output entry that disagrees with inference, and user ops
 * with and without the manifest's "shapes". */
#include <string.h>
#include <unistd.h>

#include "ops.h"
#include "testlib.h"

/* ---- a graph under construction ---------------------------------------------------------
 * Input nodes x0, x1, ... and one op node 'n' after them, as the builder has them
 * while it adds 'n': entries exist for the inputs only (an allocation of exactly
 * that size, so that a read of the op's own rows is out of bounds under ASan). */

#define MAX_INPUTS 6

typedef struct input_t {
  const char* dtype;
  int32_t ndim;
  int64_t shape[HGR_MAX_DIMS];
} input_t;

typedef struct partial_t {
  hgr_graph_t graph;
  hgr__node_t nodes[MAX_INPUTS + 1];
  char names[MAX_INPUTS][16];
  uint32_t row_ptr[MAX_INPUTS + 2];
  hgr__entry_ref_t refs[MAX_INPUTS];
  hgr__attr_t attrs[8];
  char func_name[32];
} partial_t;

/* attrs: "key", "value", ..., NULL. */
static partial_t* partial_new(const char* op, uint32_t num_outputs, const input_t* inputs, uint32_t input_count,
                              const char* const* attrs) {
  assert_true(input_count <= MAX_INPUTS);
  partial_t* p = calloc(1, sizeof(*p));
  assert_non_null(p);
  p->graph.nodes = p->nodes;
  p->graph.node_count = input_count + 1;
  p->graph.node_row_ptr = p->row_ptr;
  p->graph.entries = calloc(input_count ? input_count : 1, sizeof(hgr__entry_t));
  assert_non_null(p->graph.entries);
  p->graph.entry_count = input_count;
  for (uint32_t i = 0; i < input_count; ++i) {
    snprintf(p->names[i], sizeof(p->names[i]), "x%u", i);
    p->nodes[i] = (hgr__node_t){.name = p->names[i], .num_outputs = 1};
    p->row_ptr[i] = i;
    hgr__entry_t* e = &p->graph.entries[i];
    e->node_id = i;
    ASSERT_OK(hgr_dtype_parse(inputs[i].dtype, &e->dtype));
    e->ndim = inputs[i].ndim;
    e->element_count = 1;
    for (int32_t d = 0; d < e->ndim; ++d) {
      e->shape[d] = inputs[i].shape[d];
      e->element_count *= (uint64_t)e->shape[d];
    }
    e->bytes = e->element_count * hgr_dtype_element_bytes(e->dtype);
    p->refs[i] = (hgr__entry_ref_t){i, 0};
  }
  uint32_t attr_count = 0;
  for (const char* const* a = attrs; a && *a; a += 2) p->attrs[attr_count++] = (hgr__attr_t){(char*)a[0], (char*)a[1]};
  snprintf(p->func_name, sizeof(p->func_name), "%s", op);
  p->nodes[input_count] = (hgr__node_t){.name = "n", .is_op = true, .func_name = p->func_name,
                                        .num_outputs = num_outputs, .inputs = p->refs, .input_count = input_count,
                                        .attrs = p->attrs, .attr_count = attr_count};
  p->row_ptr[input_count] = input_count;
  p->row_ptr[input_count + 1] = input_count + num_outputs;
  return p;
}

static void partial_free(partial_t* p) {
  free(p->graph.entries);
  free(p);
}

static hgr_status_t infer(partial_t* p, const hgr_kernel_library_t* library, hgr__entry_t* outputs) {
  return hgr__op_infer(&p->graph, p->graph.node_count - 1, library, outputs);
}

static void assert_entry(const hgr__entry_t* entry, const char* dtype, int32_t ndim, const int64_t* shape) {
  hgr_dtype_t want;
  ASSERT_OK(hgr_dtype_parse(dtype, &want));
  char text[32];
  if (!hgr__dtype_same(entry->dtype, want)) fail_msg("dtype %s, expected %s", hgr_dtype_format(entry->dtype, text, sizeof(text)), dtype);
  assert_int_equal(entry->ndim, ndim);
  uint64_t count = 1;
  for (int32_t d = 0; d < ndim; ++d) {
    assert_int_equal(entry->shape[d], shape[d]);
    count *= (uint64_t)shape[d];
  }
  assert_int_equal(entry->element_count, count);
  assert_int_equal(entry->bytes, count * hgr_dtype_element_bytes(want));
  assert_int_equal(entry->storage_id, 0);
}

/* Infers op on inputs and asserts output 0 (of num_outputs). */
static void expect_output(const char* op, const input_t* inputs, uint32_t input_count, const char* const* attrs,
                          const char* dtype, int32_t ndim, const int64_t* shape) {
  partial_t* p = partial_new(op, 1, inputs, input_count, attrs);
  hgr__entry_t outputs[1];
  memset(outputs, 0xAB, sizeof(outputs)); /* every field must be written */
  ASSERT_OK(infer(p, NULL, outputs));
  assert_entry(&outputs[0], dtype, ndim, shape);
  partial_free(p);
}

static void expect_error(const char* op, uint32_t num_outputs, const input_t* inputs, uint32_t input_count,
                         const char* const* attrs, const char* message) {
  partial_t* p = partial_new(op, num_outputs, inputs, input_count, attrs);
  hgr__entry_t outputs[4];
  ASSERT_STATUS(infer(p, NULL, outputs), HGR_STATUS_INVALID_ARGUMENT, message);
  partial_free(p);
}

#define F32(...) {"float32", (int32_t)(sizeof((int64_t[]){__VA_ARGS__}) / sizeof(int64_t)), {__VA_ARGS__}}
#define I32(...) {"int32", (int32_t)(sizeof((int64_t[]){__VA_ARGS__}) / sizeof(int64_t)), {__VA_ARGS__}}
#define SHAPE(...) (int32_t)(sizeof((int64_t[]){__VA_ARGS__}) / sizeof(int64_t)), (const int64_t[]){__VA_ARGS__}
#define ATTRS(...) ((const char* const[]){__VA_ARGS__, NULL})

/* ---- what each family infers ----------------------------------------------------------- */

static void elementwise_ops_infer_broadcasts_and_casts(void** state) {
  (void)state;
  expect_output("add", (input_t[]){F32(3, 1), F32(4)}, 2, NULL, "float32", SHAPE(3, 4));
  expect_output("maximum", (input_t[]){I32(2, 1, 5), I32(7, 1)}, 2, NULL, "int32", SHAPE(2, 7, 5));
  expect_output("relu", (input_t[]){F32(2, 3)}, 1, NULL, "float32", SHAPE(2, 3));
  expect_output("clip", (input_t[]){F32(4)}, 1, ATTRS("a_min", "0", "a_max", "6"), "float32", SHAPE(4));
  expect_output("cast", (input_t[]){F32(2, 2)}, 1, ATTRS("dtype", "int32"), "int32", SHAPE(2, 2));
}

#define BOOL(...) {"bool", (int32_t)(sizeof((int64_t[]){__VA_ARGS__}) / sizeof(int64_t)), {__VA_ARGS__}}

/* Comparisons, logical ops, isnan and isinf give bool (uint1, one byte per element);
 * where broadcasts three ways; prelu keeps the data's shape; cast reaches int64. */
static void bool_results_where_prelu_and_wider_casts_are_inferred(void** state) {
  (void)state;
  expect_output("less", (input_t[]){F32(3, 1), F32(4)}, 2, NULL, "bool", SHAPE(3, 4));
  expect_output("equal", (input_t[]){I32(2, 1, 5), I32(7, 1)}, 2, NULL, "bool", SHAPE(2, 7, 5));
  expect_output("logical_xor", (input_t[]){BOOL(4), BOOL(2, 1)}, 2, NULL, "bool", SHAPE(2, 4));
  expect_output("logical_not", (input_t[]){BOOL(3)}, 1, NULL, "bool", SHAPE(3));
  expect_output("isinf", (input_t[]){F32(2, 3)}, 1, ATTRS("detect_negative", "0"), "bool", SHAPE(2, 3));
  expect_output("where", (input_t[]){BOOL(3, 1, 1), I32(4, 1), I32(5)}, 3, NULL, "int32", SHAPE(3, 4, 5));
  expect_output("prelu", (input_t[]){F32(2, 3, 4), F32(3, 1)}, 2, NULL, "float32", SHAPE(2, 3, 4));
  expect_output("selu", (input_t[]){F32(6)}, 1, ATTRS("gamma", "2"), "float32", SHAPE(6));
  expect_output("cast", (input_t[]){BOOL(2, 2)}, 1, ATTRS("dtype", "int64"), "int64", SHAPE(2, 2));
  expect_output("cast", (input_t[]){{"int64", 1, {7}}}, 1, ATTRS("dtype", "bool"), "bool", SHAPE(7));
  expect_output("cast", (input_t[]){F32(3)}, 1, ATTRS("dtype", "float16"), "float16", SHAPE(3));
  expect_output("dequantize", (input_t[]){{"int8", 2, {4, 6}}, F32(6), {"int8", 1, {6}}}, 3, NULL, "float32",
                SHAPE(4, 6));
  expect_output("quantize", (input_t[]){F32(4, 6), F32(4, 2), {"uint16", 2, {4, 2}}}, 3,
                ATTRS("axis", "1", "block_size", "3"), "uint16", SHAPE(4, 6));
  expect_error("prelu", 1, (input_t[]){F32(3), F32(2, 3)}, 2, NULL,
               "node 2 'n' (prelu): the slope (input 1) shaped [2, 3] does not broadcast to the data (input 0) "
               "shaped [3]");
  expect_error("where", 1, (input_t[]){F32(3), F32(3), F32(3)}, 3, NULL,
               "node 3 'n' (where): input 0 (entry 0) is float32; the op supports bool");
}

static void layout_ops_infer_their_shapes(void** state) {
  (void)state;
  expect_output("concatenate", (input_t[]){I32(2, 3), I32(2, 4)}, 2, ATTRS("axis", "-1"), "int32", SHAPE(2, 7));
  expect_output("transpose", (input_t[]){F32(2, 3, 4)}, 1, ATTRS("axes", "[2, 0, 1]"), "float32", SHAPE(4, 2, 3));
  expect_output("pad", (input_t[]){F32(2, 3)}, 1, ATTRS("pad_width", "[[1, 0], [2, 2]]"), "float32", SHAPE(3, 7));
  expect_output("take", (input_t[]){F32(5, 6), I32(2, 3)}, 2, ATTRS("axis", "1"), "float32", SHAPE(5, 2, 3));
  expect_output("strided_slice", (input_t[]){F32(10, 4)}, 1, ATTRS("begin", "[1]", "end", "[8]", "strides", "[3]"),
                "float32", SHAPE(3, 4));
  expect_output("reshape", (input_t[]){F32(2, 3, 4)}, 1, ATTRS("newshape", "[-1, 4]"), "float32", SHAPE(6, 4));
  expect_output("batch_flatten", (input_t[]){F32(2, 3, 4)}, 1, NULL, "float32", SHAPE(2, 12));
  expect_output("squeeze", (input_t[]){I32(1, 3, 1)}, 1, NULL, "int32", SHAPE(3));
  expect_output("expand_dims", (input_t[]){F32(3)}, 1, ATTRS("axis", "0", "num_newaxis", "2"), "float32",
                SHAPE(1, 1, 3));
}

/* The layout ops the ONNX importer maps onto (issue 15): shapes and the errors
 * naming the attr or input at fault. */
static void onnx_layout_ops_infer_their_shapes(void** state) {
  (void)state;
  expect_output("pad", (input_t[]){F32(4, 5)}, 1, ATTRS("pad_width", "[[-1, 2], [0, -3]]"), "float32", SHAPE(5, 2));
  expect_output("pad", (input_t[]){I32(3, 3)}, 1, ATTRS("pad_width", "[[2, 2], [0, 1]]", "pad_mode", "reflect"),
                "int32", SHAPE(7, 4));
  expect_output("broadcast_to", (input_t[]){F32(3, 1)}, 1, ATTRS("shape", "[2, 3, 6]"), "float32", SHAPE(2, 3, 6));
  expect_output("tile", (input_t[]){I32(2, 3)}, 1, ATTRS("reps", "[3, 0]"), "int32", SHAPE(6, 0));
  expect_output("depth_to_space", (input_t[]){F32(1, 8, 2, 3)}, 1, ATTRS("block_size", "2", "mode", "CRD"), "float32",
                SHAPE(1, 2, 4, 6));
  expect_output("space_to_depth", (input_t[]){F32(2, 3, 6, 9)}, 1, ATTRS("block_size", "3"), "float32",
                SHAPE(2, 27, 2, 3));
  expect_output("gather_elements", (input_t[]){F32(3, 4), I32(2, 7)}, 2, ATTRS("axis", "-1"), "float32", SHAPE(2, 7));
  expect_output("cumsum", (input_t[]){I32(2, 3)}, 1, ATTRS("axis", "1", "exclusive", "1", "reverse", "1"), "int32",
                SHAPE(2, 3));
  expect_output("cumsum", (input_t[]){F32(2, 3)}, 1, NULL, "float32", SHAPE(6));
  expect_error("pad", 1, (input_t[]){F32(2, 3)}, 1, ATTRS("pad_width", "[[0, 0], [3, 0]]", "pad_mode", "reflect"),
               "node 1 'n' (pad): attr 'pad_width' = \"[[0, 0], [3, 0]]\" pads dimension 1 (extent 3) by 3; pad_mode "
               "\"reflect\" pads by at most the extent - 1");
  expect_error("broadcast_to", 1, (input_t[]){F32(2, 2)}, 1, ATTRS("shape", "[4, 3, 2]"),
               "node 1 'n' (broadcast_to): input 0 (entry 0, shaped [2, 2]) does not broadcast to attr 'shape' = "
               "\"[4, 3, 2]\": its dim 0 is 2, not 1 or 3");
  expect_error("depth_to_space", 1, (input_t[]){F32(1, 8, 2, 3)}, 1, NULL,
               "node 1 'n' (depth_to_space): attr 'block_size' is required");
  expect_error("gather_elements", 1, (input_t[]){F32(3, 4), I32(4, 2)}, 2, ATTRS("axis", "1"),
               "node 2 'n' (gather_elements): input 1 (the indices, entry 1) is shaped [4, 2] but input 0 (entry 0) "
               "is [3, 4]");
  expect_error("cumsum", 1, (input_t[]){F32(2, 3)}, 1, ATTRS("axis", "-3"),
               "node 1 'n' (cumsum): attr 'axis' = -3 is out of range for 2 dimensions");
  expect_output("resize2d", (input_t[]){F32(1, 3, 4, 5)}, 1, ATTRS("size", "[8, 3]", "method", "cubic"), "float32",
                SHAPE(1, 3, 8, 3));
  expect_output("resize2d", (input_t[]){F32(2, 1, 4, 4)}, 1,
                ATTRS("size", "[2, 3]", "scales", "[0.6, 0.8]", "coordinate_transformation_mode", "tf_crop_and_resize",
                      "roi", "[0, 0, 1, 1]"),
                "float32", SHAPE(2, 1, 2, 3));
  expect_error("resize2d", 1, (input_t[]){F32(1, 3, 4, 5)}, 1, ATTRS("size", "[8, 3]", "scales", "[-1, 1]"),
               "node 1 'n' (resize2d): attr 'scales' = \"[-1, 1]\" has -1; scales must be positive");
  expect_error("resize2d", 1, (input_t[]){I32(1, 3, 4, 5)}, 1, ATTRS("size", "[8, 3]"),
               "node 1 'n' (resize2d): input 0 (entry 0) is int32");
}

static void compute_ops_infer_their_shapes(void** state) {
  (void)state;
  expect_output("conv2d", (input_t[]){F32(1, 3, 8, 8), F32(6, 3, 3, 3), F32(6)}, 3,
                ATTRS("padding", "1", "strides", "2"), "float32", SHAPE(1, 6, 4, 4));
  expect_output("max_pool2d", (input_t[]){F32(1, 3, 7, 7)}, 1, ATTRS("pool_size", "3", "strides", "2"), "float32",
                SHAPE(1, 3, 3, 3));
  expect_output("global_avg_pool2d", (input_t[]){F32(2, 3, 5, 5)}, 1, NULL, "float32", SHAPE(2, 3, 1, 1));
  expect_output("dense", (input_t[]){F32(2, 3, 5), F32(4, 5)}, 2, NULL, "float32", SHAPE(2, 3, 4));
  expect_output("matmul", (input_t[]){F32(5, 3), F32(5, 4)}, 2, ATTRS("transpose_a", "1"), "float32", SHAPE(3, 4));
  expect_output("batch_matmul", (input_t[]){F32(1, 3, 5), F32(4, 2, 5)}, 2, NULL, "float32", SHAPE(4, 3, 2));
  expect_output("softmax", (input_t[]){F32(3, 4)}, 1, NULL, "float32", SHAPE(3, 4));
  expect_output("layer_norm", (input_t[]){F32(3, 4), F32(4), F32(4)}, 3, NULL, "float32", SHAPE(3, 4));
  expect_output("sum", (input_t[]){I32(2, 3, 4)}, 1, ATTRS("axis", "1", "keepdims", "1"), "int32", SHAPE(2, 1, 4));
  expect_output("mean", (input_t[]){F32(2, 3, 4)}, 1, ATTRS("axis", "[0, 2]", "exclude", "1"), "float32", SHAPE(2, 4));
}

static void batch_norm_infers_three_outputs(void** state) {
  (void)state;
  input_t inputs[5] = {F32(2, 3, 4, 4), F32(3), F32(3), F32(3), F32(3)};
  partial_t* p = partial_new("batch_norm", 3, inputs, 5, NULL);
  hgr__entry_t outputs[3];
  ASSERT_OK(infer(p, NULL, outputs));
  assert_entry(&outputs[0], "float32", SHAPE(2, 3, 4, 4));
  assert_entry(&outputs[1], "float32", SHAPE(3));
  assert_entry(&outputs[2], "float32", SHAPE(3));
  partial_free(p);
}

/* conv2d's epilogues, conv2d_transpose, the ONNX pool rule, lrn, instance_norm,
 * prod, argmax/argmin and topk (ops for the ONNX loader). */
static void onnx_compute_ops_infer_their_shapes(void** state) {
  (void)state;
  expect_output("conv2d", (input_t[]){F32(1, 3, 8, 8), F32(6, 3, 3, 3)}, 2,
                ATTRS("padding", "[0, 1, 2, 1]", "activation", "clip", "a_min", "0", "a_max", "6"), "float32",
                SHAPE(1, 6, 8, 8));
  expect_output("conv2d_transpose", (input_t[]){F32(1, 4, 3, 3), F32(4, 3, 3, 3), F32(6)}, 3,
                ATTRS("strides", "[3, 2]", "output_padding", "[1, 1]", "groups", "2"), "float32", SHAPE(1, 6, 10, 8));
  expect_output("conv2d_transpose", (input_t[]){F32(1, 1, 3, 3), F32(1, 2, 3, 3)}, 2,
                ATTRS("strides", "[3, 2]", "padding", "[1, 2, 1, 2]", "dilation", "2"), "float32", SHAPE(1, 2, 9, 5));
  expect_output("max_pool2d", (input_t[]){F32(1, 2, 5, 5)}, 1,
                ATTRS("pool_size", "2", "strides", "2", "padding", "1", "ceil_mode", "1", "drop_padded_windows", "1"),
                "float32", SHAPE(1, 2, 3, 3));
  expect_output("avg_pool2d", (input_t[]){F32(1, 2, 5, 5)}, 1,
                ATTRS("pool_size", "2", "strides", "2", "padding", "1", "ceil_mode", "1"), "float32",
                SHAPE(1, 2, 4, 4));
  expect_output("lrn", (input_t[]){F32(2, 5, 3, 3)}, 1, ATTRS("size", "4"), "float32", SHAPE(2, 5, 3, 3));
  expect_output("instance_norm", (input_t[]){F32(2, 3, 4, 5), F32(3), F32(3)}, 3, NULL, "float32", SHAPE(2, 3, 4, 5));
  expect_output("instance_norm", (input_t[]){F32(2, 4, 5, 3), F32(3), F32(3)}, 3, ATTRS("axis", "-1"), "float32",
                SHAPE(2, 4, 5, 3));
  expect_output("prod", (input_t[]){I32(2, 3, 4)}, 1, ATTRS("axis", "[0, 2]"), "int32", SHAPE(3));
  expect_output("argmax", (input_t[]){F32(2, 3, 4)}, 1, ATTRS("axis", "1"), "int32", SHAPE(2, 4));
  expect_output("argmin", (input_t[]){I32(2, 3, 4)}, 1, ATTRS("axis", "[-1]", "keepdims", "True"), "int32",
                SHAPE(2, 3, 1));
  expect_output("argmax", (input_t[]){F32(2, 3, 4)}, 1, ATTRS("keepdims", "1"), "int32", SHAPE(1, 1, 1));
  expect_output("argmin", (input_t[]){F32(2, 3, 4)}, 1, NULL, "int32", 0, NULL);

  partial_t* p = partial_new("topk", 2, (input_t[]){F32(2, 7, 3)}, 1, ATTRS("k", "4", "axis", "1"));
  hgr__entry_t outputs[2];
  ASSERT_OK(infer(p, NULL, outputs));
  assert_entry(&outputs[0], "float32", SHAPE(2, 4, 3));
  assert_entry(&outputs[1], "int32", SHAPE(2, 4, 3));
  partial_free(p);
  p = partial_new("topk", 2, (input_t[]){I32(5)}, 1, ATTRS("k", "5", "is_ascend", "1"));
  ASSERT_OK(infer(p, NULL, outputs));
  assert_entry(&outputs[0], "int32", SHAPE(5));
  assert_entry(&outputs[1], "int32", SHAPE(5));
  partial_free(p);

  expect_error("conv2d", 1, (input_t[]){F32(1, 3, 8, 8), F32(6, 3, 3, 3)}, 2, ATTRS("activation", "clip", "a_max", "6"),
               "node 2 'n' (conv2d): attr 'a_min' is required with attr 'activation' = \"clip\"");
  expect_error("conv2d_transpose", 1, (input_t[]){F32(1, 4, 3, 3), F32(4, 2, 3, 3)}, 2,
               ATTRS("output_padding", "2", "strides", "2"),
               "node 2 'n' (conv2d_transpose): attr 'output_padding' = \"2\" has 2; it must be below the stride (2) "
               "or the dilation (1)");
  expect_error("lrn", 1, (input_t[]){F32(2, 5, 3, 3)}, 1, ATTRS("size", "-2"),
               "node 1 'n' (lrn): attr 'size' = -2 must be at least 1");
  expect_error("instance_norm", 1, (input_t[]){F32(2, 3, 4), F32(4), F32(4)}, 3, NULL,
               "node 3 'n' (instance_norm): input 1 'gamma' (one value per channel, along axis 1) (entry 1) should be "
               "shaped [3]");
  expect_error("argmax", 1, (input_t[]){F32(2, 3)}, 1, ATTRS("axis", "[0, 1]"),
               "node 1 'n' (argmax): attr 'axis' = \"[0, 1]\" names 2 axes; argmax takes one");
  expect_error("topk", 2, (input_t[]){F32(2, 3)}, 1, ATTRS("k", "4"),
               "node 1 'n' (topk): attr 'k' = 4 is out of range: axis 1 has 3 elements");
  expect_error("max_pool2d", 1, (input_t[]){F32(1, 2, 5, 5)}, 1, ATTRS("pool_size", "2", "drop_padded_windows", "x"),
               "node 1 'n' (max_pool2d): attr 'drop_padded_windows' = \"x\" is not a bool");
}

static void every_built_in_op_has_an_infer(void** state) {
  (void)state;
  size_t family_count = 0, ops = 0;
  const hgr__op_t* const* families = hgr__op_families(&family_count);
  for (size_t f = 0; f < family_count; ++f)
    for (const hgr__op_t* op = families[f]; op->name; ++op, ++ops)
      if (!op->infer) fail_msg("op '%s' has no infer", op->name);
  assert_true(ops > 40);
}

/* ---- inference errors name the node, the op and the input or attr ----------------------- */

static void unknown_op_is_named(void** state) {
  (void)state;
  expect_error("frobnicate", 1, (input_t[]){F32(4)}, 1, NULL,
               "node 1 'n': unknown func_name 'frobnicate'; known: add, ");
  const hgr__op_t* op = hgr__op_lookup("frobnicate", NULL);
  assert_null(op);
  assert_non_null(hgr__op_lookup("conv2d", NULL));
}

static void wrong_input_count_is_named(void** state) {
  (void)state;
  expect_error("add", 1, (input_t[]){F32(4)}, 1, NULL, "node 1 'n' (add): takes 2 input(s), the node has 1");
  expect_error("relu", 2, (input_t[]){F32(4)}, 1, NULL, "node 1 'n' (relu): takes 1 output(s), the node has 2");
}

static void bad_attr_values_are_named(void** state) {
  (void)state;
  expect_error("leaky_relu", 1, (input_t[]){F32(4)}, 1, ATTRS("alpha", "steep"),
               "node 1 'n' (leaky_relu): attr 'alpha' = \"steep\" is not a number");
  expect_error("relu", 1, (input_t[]){F32(4)}, 1, ATTRS("alpha", "0.5"), "node 1 'n' (relu): unknown attr 'alpha'");
  expect_error("conv2d", 1, (input_t[]){F32(1, 3, 8, 8), F32(6, 3, 3, 3)}, 2, ATTRS("strides", "[0, 1]"),
               "node 2 'n' (conv2d): attr 'strides' = \"[0, 1]\" has 0");
  expect_error("reshape", 1, (input_t[]){F32(2, 3)}, 1, ATTRS("newshape", "[7]"),
               "node 1 'n' (reshape): attr 'newshape' = \"[7]\" gives shape [7] (7 elements) but input 0 (entry 0) "
               "is shaped [2, 3] (6 elements)");
  expect_error("cast", 1, (input_t[]){F32(4)}, 1, NULL,
               "node 1 'n' (cast): attr 'dtype' (the output's dtype: float32, int32, int64, uint8, int8, bool, uint16, "
               "int16, float16 or bfloat16) is required");
  expect_error("sum", 1, (input_t[]){F32(2, 3)}, 1, ATTRS("axis", "2"),
               "node 1 'n' (sum): attr 'axis' = 2 is out of range for 2 dimensions");
}

static void input_dtype_mismatch_is_named(void** state) {
  (void)state;
  expect_error("add", 1, (input_t[]){F32(4), I32(4)}, 2, NULL,
               "node 2 'n' (add): input 1 (entry 1) is int32 but input 0 (entry 0) is float32");
  expect_error("tanh", 1, (input_t[]){I32(4)}, 1, NULL,
               "node 1 'n' (tanh): input 0 (entry 0) is int32; the op supports float32");
  expect_error("take", 1, (input_t[]){F32(5), F32(2)}, 2, NULL,
               "node 2 'n' (take): input 1 (the indices, entry 1) is float32; take needs int32 indices");
}

static void incompatible_shapes_are_named(void** state) {
  (void)state;
  expect_error("multiply", 1, (input_t[]){F32(3, 4), F32(5)}, 2, NULL,
               "node 2 'n' (multiply): input 0 shaped [3, 4] and input 1 shaped [5] do not broadcast: 4 against 5 "
               "in dimension 1 from the right");
  expect_error("dense", 1, (input_t[]){F32(3, 5), F32(4, 6)}, 2, NULL,
               "node 2 'n' (dense): input 1 (weight) is shaped [4, 6] and input 0 (data) [3, 5]");
  expect_error("concatenate", 1, (input_t[]){F32(2, 3), F32(3, 3)}, 2, ATTRS("axis", "1"),
               "node 2 'n' (concatenate): input 1 (entry 1) is shaped [3, 3] but input 0 (entry 0) is [2, 3]");
}

/* ---- planning compares the graph's outputs with inference -------------------------------- */

/* A loaded graph: x0 [3, 1] and x1 [4] (float32) into an op 'n' with the given
 * outputs (JSON shapes and dtypes). */
static hgr_graph_t* load_graph(const char* op, const char* attrs, uint32_t num_outputs, const char* output_shapes,
                               const char* output_dtypes, const char* inputs, const char* input_shapes,
                               uint32_t input_count) {
  char json[2048], row_ptr[64] = "", storage[64] = "", refs[128] = "", args[64] = "", nodes[512] = "";
  for (uint32_t i = 0; i < input_count; ++i) {
    snprintf(nodes + strlen(nodes), sizeof(nodes) - strlen(nodes), "{\"op\": \"null\", \"name\": \"x%u\", \"inputs\": []}, ", i);
    snprintf(refs + strlen(refs), sizeof(refs) - strlen(refs), "%s[%u, 0, 0]", i ? ", " : "", i);
    snprintf(args + strlen(args), sizeof(args) - strlen(args), "%s%u", i ? ", " : "", i);
  }
  for (uint32_t i = 0; i <= input_count; ++i)
    snprintf(row_ptr + strlen(row_ptr), sizeof(row_ptr) - strlen(row_ptr), "%u, ", i);
  for (uint32_t e = 0; e < input_count + num_outputs; ++e)
    snprintf(storage + strlen(storage), sizeof(storage) - strlen(storage), "%s%u", e ? ", " : "", e);
  snprintf(json, sizeof(json),
           "{\"nodes\": [%s{\"op\": \"tvm_op\", \"name\": \"n\", \"attrs\": {\"func_name\": \"%s\", \"num_inputs\": "
           "\"%u\", \"num_outputs\": \"%u\", \"flatten_data\": \"0\"%s}, \"inputs\": [%s]}], \"arg_nodes\": [%s], "
           "\"node_row_ptr\": [%s%u], \"heads\": [[%u, 0, 0]], \"attrs\": {\"storage_id\": [\"list_int\", [%s]], "
           "\"shape\": [\"list_shape\", [%s, %s]], \"dltype\": [\"list_str\", [%s, %s]]}}",
           nodes, op, input_count, num_outputs, attrs, refs, args, row_ptr, input_count + num_outputs, input_count,
           storage, input_shapes, output_shapes, inputs, output_dtypes);
  hgr_graph_t* graph = NULL;
  ASSERT_OK(hgr_graph_load_json(json, strlen(json), &graph));
  return graph;
}

static const hgr__limits_t limits = {256, {256, 256, 64}, 65536, 0};

static void expect_plan(hgr_graph_t* graph, const hgr_kernel_library_t* library, const char* message) {
  hgr__op_ctx_t ctx;
  hgr_status_t status = hgr__op_plan(hgr_allocator_system(), graph, graph->node_count - 1, library, &limits, &ctx);
  if (!message) {
    ASSERT_OK(status);
    hgr__op_ctx_free(&ctx);
  } else {
    ASSERT_STATUS(status, HGR_STATUS_INVALID_ARGUMENT, message);
  }
  hgr_graph_release(graph);
}

static void plan_refuses_outputs_that_disagree_with_inference(void** state) {
  (void)state;
  const char* in = "\"float32\", \"float32\"";
  const char* in_shapes = "[3, 1], [4]";
  expect_plan(load_graph("add", "", 1, "[3, 4]", "\"float32\"", in, in_shapes, 2), NULL, NULL);
  expect_plan(load_graph("add", "", 1, "[3, 5]", "\"float32\"", in, in_shapes, 2), NULL,
              "node 2 'n' (add): output 0 (entry 2) should be shaped [3, 4], the graph says [3, 5]");
  expect_plan(load_graph("add", "", 1, "[3, 4]", "\"int32\"", in, in_shapes, 2), NULL,
              "node 2 'n' (add): output 0 (entry 2) should be float32 [3, 4], the graph says int32 [3, 4]");
  /* The output named is the one at fault, here batch_norm's moving_var. */
  expect_plan(load_graph("batch_norm", "", 3, "[2, 3], [3], [4]", "\"float32\", \"float32\", \"float32\"",
                         "\"float32\", \"float32\", \"float32\", \"float32\", \"float32\"",
                         "[2, 3], [3], [3], [3], [3]", 5),
              NULL, "node 5 'n' (batch_norm): output 2 (entry 7) should be shaped [3], the graph says [4]");
}

/* ---- user ops: with and without "shapes" --------------------------------------------------- */

static hgr_kernel_library_t* load_manifest(const char* ops_json, hgr_status_t* out_status) {
  char manifest_path[512], source_path[512];
  snprintf(manifest_path, sizeof(manifest_path), "%s", hgr_test_tmp_path("infer_ops.json"));
  snprintf(source_path, sizeof(source_path), "%s", hgr_test_tmp_path("infer_k.cl"));
  FILE* file = fopen(source_path, "w");
  assert_non_null(file);
  fputs("__kernel void k(__global const float* x, __global float* y) { y[0] = x[0]; }\n", file);
  fclose(file);
  file = fopen(manifest_path, "w");
  assert_non_null(file);
  const char* slash = strrchr(source_path, '/');
  const char* source_name = slash ? slash + 1 : source_path;
  fprintf(file, ops_json, source_name, source_name); /* each op's "source" */
  fclose(file);
  hgr_kernel_library_t* library = NULL;
  *out_status = hgr_kernel_library_load_file(manifest_path, &library);
  remove(manifest_path);
  remove(source_path);
  return library;
}

static const char two_ops[] =
    "{\"ops\": ["
    "{\"func_name\": \"shaped\", \"kernel\": \"k\", \"source\": \"%s\", \"inputs\": 2, \"outputs\": 2,"
    " \"args\": [\"input 0\", \"output 0\"], \"ndrange\": \"elements\", \"shapes\": [\"input 1\", \"input 0\"]},"
    "{\"func_name\": \"unshaped\", \"kernel\": \"k\", \"source\": \"%s\", \"inputs\": 2, \"outputs\": 1,"
    " \"args\": [\"input 0\", \"output 0\"], \"ndrange\": \"elements\"}]}";

static void user_op_with_shapes_infers_them(void** state) {
  (void)state;
  hgr_status_t status;
  hgr_kernel_library_t* library = load_manifest(two_ops, &status);
  ASSERT_OK(status);
  partial_t* p = partial_new("shaped", 2, (input_t[]){F32(2, 3), I32(5)}, 2, NULL);
  hgr__entry_t outputs[2];
  ASSERT_OK(infer(p, library, outputs));
  assert_entry(&outputs[0], "int32", SHAPE(5));
  assert_entry(&outputs[1], "float32", SHAPE(2, 3));
  partial_free(p);
  /* ...and planning holds the graph to them. */
  const char* in = "\"float32\", \"int32\"";
  expect_plan(load_graph("shaped", "", 2, "[5], [2, 3]", "\"int32\", \"float32\"", in, "[2, 3], [5]", 2), library,
              NULL);
  expect_plan(load_graph("shaped", "", 2, "[5], [3, 2]", "\"int32\", \"float32\"", in, "[2, 3], [5]", 2), library,
              "node 2 'n' (shaped): output 1 (entry 3) should be shaped [2, 3], the graph says [3, 2]");
  hgr_kernel_library_release(library);
}

static void user_op_without_shapes_cannot_be_inferred(void** state) {
  (void)state;
  hgr_status_t status;
  hgr_kernel_library_t* library = load_manifest(two_ops, &status);
  ASSERT_OK(status);
  partial_t* p = partial_new("unshaped", 1, (input_t[]){F32(2, 3), I32(5)}, 2, NULL);
  hgr__entry_t outputs[1];
  ASSERT_STATUS(infer(p, library, outputs), HGR_STATUS_INVALID_ARGUMENT, "node 2 'n' (unshaped): ",
                "no \"shapes\" key");
  partial_free(p);
  /* Planning leaves its outputs to the kernel, as before "shapes" existed. */
  expect_plan(load_graph("unshaped", "", 1, "[7, 7]", "\"int32\"", "\"float32\", \"int32\"", "[2, 3], [5]", 2),
              library, NULL);
  hgr_kernel_library_release(library);
}

static void manifest_shapes_are_checked(void** state) {
  (void)state;
  static const char* const bad[] = {"[\"input 2\"]", "[\"input 0\", \"input 0\"]", "[\"output 0\"]", "\"input 0\"",
                                    "[\"input 0x\"]", "[3]"};
  for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); ++i) {
    char ops[1024];
    snprintf(ops, sizeof(ops),
             "{\"ops\": [{\"func_name\": \"shaped\", \"kernel\": \"k\", \"source\": \"%%s\", \"inputs\": 2,"
             " \"outputs\": 1, \"args\": [\"input 0\", \"output 0\"], \"ndrange\": \"elements\", \"shapes\": %s}]}",
             bad[i]);
    hgr_status_t status;
    hgr_kernel_library_t* library = load_manifest(ops, &status);
    assert_null(library);
    ASSERT_STATUS(status, HGR_STATUS_INVALID_ARGUMENT, "op 'shaped': \"shapes\"");
  }
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(elementwise_ops_infer_broadcasts_and_casts),
      cmocka_unit_test(bool_results_where_prelu_and_wider_casts_are_inferred),
      cmocka_unit_test(layout_ops_infer_their_shapes),
      cmocka_unit_test(onnx_layout_ops_infer_their_shapes),
      cmocka_unit_test(compute_ops_infer_their_shapes),
      cmocka_unit_test(batch_norm_infers_three_outputs),
      cmocka_unit_test(onnx_compute_ops_infer_their_shapes),
      cmocka_unit_test(every_built_in_op_has_an_infer),
      cmocka_unit_test(unknown_op_is_named),
      cmocka_unit_test(wrong_input_count_is_named),
      cmocka_unit_test(bad_attr_values_are_named),
      cmocka_unit_test(input_dtype_mismatch_is_named),
      cmocka_unit_test(incompatible_shapes_are_named),
      cmocka_unit_test(plan_refuses_outputs_that_disagree_with_inference),
      cmocka_unit_test(user_op_with_shapes_infers_them),
      cmocka_unit_test(user_op_without_shapes_cannot_be_inferred),
      cmocka_unit_test(manifest_shapes_are_checked),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
