/* Structure-aware mutations for hgr_fuzz_onnx (libFuzzer's LLVMFuzzerCustomMutator
 * and LLVMFuzzerCustomCrossOver).
 *
 * Byte mutations of a protobuf mostly break its framing, so the loader rejects
 * them before any op importer runs. Here an input that unpacks as an
 * Onnx__ModelProto gets one mutation of its structure, chosen by libFuzzer's seed
 * (the same seed and input give the same output), and is packed back:
 *   - a dim of an initializer or a Constant's tensor, or of a graph input's shape
 *     (0, 1, -1, 2^31, 2^62+1, INT64_MAX, a neighbour; a dim added or dropped);
 *   - a tensor's payload: raw_data or the typed field shorter, longer or empty,
 *     moved between the two, another data_type, external data;
 *   - an attribute's int, ints, float, floats, string, type or name; one added or
 *     dropped;
 *   - a node input renamed to "" (an omitted optional input), to another value of
 *     the graph or to a new name; an output made a duplicate;
 *   - op_type (an op hgr imports, see pick_op), domain, opset version,
 *     ir_version;
 *   - nodes swapped, duplicated or deleted;
 *   - a chain of Constant, Shape, Gather, Concat, Reshape, Slice, ConstantOfShape
 *     and Range nodes on an existing value, whose end replaces a node input or
 *     becomes a graph output;
 *   - a value's TypeProto wrapped in sequence/optional types a few levels deep, or
 *     a node given a graph attribute (If-like branches) nested a few levels.
 * Crossover grafts a node or an initializer of one model into the other, then
 * mutates. Inputs that do not unpack, one in eight that do, and results larger
 * than max_size go to libFuzzer's byte mutator (LLVMFuzzerMutate, which uses the
 * -dict words).
 *
 * Ownership: the model is unpacked with protobuf-c's default allocator (malloc and
 * free), which allocates every string, array and submessage on its own, and
 * free_unpacked frees whatever the fields point to. So every replacement here is
 * malloc'd, every replaced or dropped piece is freed (messages with
 * protobuf_c_message_free_unpacked), and onnx.proto (proto2, no explicit
 * defaults) makes a NULL string field an absent one. Repeated strings never hold
 * NULL. */
#include <float.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "onnx/onnx.pb-c.h"
#include "onnx_internal.h"

size_t LLVMFuzzerMutate(uint8_t* data, size_t size, size_t max_size);
size_t LLVMFuzzerCustomMutator(uint8_t* data, size_t size, size_t max_size, unsigned int seed);
size_t LLVMFuzzerCustomCrossOver(const uint8_t* data1, size_t size1, const uint8_t* data2, size_t size2,
                                 uint8_t* out, size_t max_out_size, unsigned int seed);

/* Ops hgr does not import (the loader's tables, hgr__onnx_op_list, give those it
 * does: pick_op). */
static const char* const kNotImported[] = {"SequenceConstruct", "Optional", "OneHot", "StringNormalizer",
                                           "Unknown"};

/* Attribute names the importers read or check. */
static const char* const kAttrNames[] = {
    "allowzero", "alpha", "auto_pad", "axes", "axis", "beta", "bias", "block_size", "blocksize", "broadcast",
    "ceil_mode",
    "coordinate_transformation_mode", "count_include_pad", "cubic_coeff_a", "detect_negative",
    "detect_positive", "dilations", "dtype", "end", "ends", "epsilon", "equation", "exclude_outside",
    "exclusive", "extrapolation_value", "fmod", "gamma", "group", "height_scale", "is_test", "k", "keepdims",
    "kernel_shape", "largest", "max", "min", "mode", "momentum", "nearest_mode", "noop_with_empty_axes",
    "num_outputs", "output_dtype", "output_padding", "output_shape", "pads", "perm", "ratio", "reverse", "saturate", "scales",
    "seed", "select_last_index", "shape", "size", "sorted", "spatial", "split", "start", "starts", "stash_type",
    "storage_order", "strides", "to", "training_mode", "transA", "transB", "value", "value_float",
    "value_floats", "value_int", "value_ints", "value_string", "width_scale", "then_branch", "else_branch",
    "body", "hidden_size", "direction", "clip", "input_forget", "channels_last", "transBatchA", "transBatchB"};

static const char* const kAttrStrings[] = {
    "", "NOTSET", "SAME_UPPER", "SAME_LOWER", "VALID", "constant", "reflect", "edge", "wrap", "linear",
    "nearest", "cubic", "half_pixel", "asymmetric", "align_corners", "tf_crop_and_resize", "round_prefer_floor",
    "floor", "ceil", "DCR", "CRD", "forward", "reverse", "bidirectional", "ij,jk->ik", "...ii->...i", "i,i",
    "bij,bjk->bik", "ab", "a->", "\xff"};

/* ONNX TensorProto data types 0 (undefined) to 22, and one past them. */
#define MAX_ONNX_TYPE 23

#define MAX_GRAPHS 32
#define MAX_PICKS 512
#define MAX_NEST 5

typedef struct {
  uint64_t state;
} rng_t;

static uint64_t rng_next(rng_t* rng) { /* splitmix64 */
  uint64_t z = (rng->state += 0x9e3779b97f4a7c15u);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9u;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebu;
  return z ^ (z >> 31);
}

static size_t rng_below(rng_t* rng, size_t n) { return n ? (size_t)(rng_next(rng) % n) : 0; }
static int rng_chance(rng_t* rng, size_t one_in) { return rng_below(rng, one_in) == 0; }
#define PICK(rng, array) ((array)[rng_below((rng), sizeof(array) / sizeof((array)[0]))])

/* The names of hgr__onnx_op_list(domain), split once: they stay for the process. */
typedef struct {
  char* text;
  const char* names[512];
  size_t count;
} op_names_t;

static void load_op_names(op_names_t* ops, const char* domain) {
  ops->text = hgr__onnx_op_list(domain);
  char* save = NULL;
  for (char* name = ops->text ? strtok_r(ops->text, ", ", &save) : NULL; name && ops->count < 512;
       name = strtok_r(NULL, ", ", &save))
    ops->names[ops->count++] = name;
}

/* An op of the default domain or of com.microsoft that hgr imports (as the loader
 * lists them, so that the list never goes stale), or now and then one it does not. */
static const char* pick_op(rng_t* rng) {
  static op_names_t ops[2];
  static int loaded;
  if (!loaded) {
    load_op_names(&ops[0], "");
    load_op_names(&ops[1], "com.microsoft");
    loaded = 1;
  }
  const op_names_t* from = &ops[rng_chance(rng, 4)];
  if (rng_chance(rng, 8) || !from->count) return PICK(rng, kNotImported);
  return from->names[rng_below(rng, from->count)];
}

static void* xmalloc(size_t size) {
  void* p = malloc(size ? size : 1);
  if (!p) abort();
  return p;
}

static void* xrealloc(void* p, size_t size) {
  p = realloc(p, size ? size : 1);
  if (!p) abort();
  return p;
}

static char* xstrdup(const char* text) {
  size_t n = strlen(text) + 1;
  return memcpy(xmalloc(n), text, n);
}

/* Replaces a string field (NULL: absent) with a malloc'd copy of text. */
static void set_string(char** field, const char* text) {
  char* copy = xstrdup(text);
  free(*field);
  *field = copy;
}

/* Appends one pointer to a repeated message or string field. */
#define APPEND(count, array, item)                                                      \
  do {                                                                                  \
    (array) = xrealloc((array), ((count) + 1) * sizeof(*(array)));                      \
    (array)[(count)++] = (item);                                                        \
  } while (0)

/* A deep copy, through the wire format, that free_unpacked frees; NULL if the copy
 * does not unpack. */
static void* clone_message(const ProtobufCMessage* message) {
  size_t size = protobuf_c_message_get_packed_size(message);
  uint8_t* bytes = xmalloc(size);
  protobuf_c_message_pack(message, bytes);
  ProtobufCMessage* copy = protobuf_c_message_unpack(message->descriptor, NULL, size, bytes);
  free(bytes);
  return copy;
}

static void free_message(void* message) {
  if (message) protobuf_c_message_free_unpacked((ProtobufCMessage*)message, NULL);
}

/* Removes item i of a repeated message field, freeing it. */
#define REMOVE_MESSAGE(count, array, i)                                                 \
  do {                                                                                  \
    free_message((array)[(i)]);                                                         \
    memmove(&(array)[(i)], &(array)[(i) + 1], ((count) - (i)-1) * sizeof(*(array)));    \
    --(count);                                                                          \
  } while (0)

static int64_t interesting_int(rng_t* rng, int64_t current) {
  switch (rng_below(rng, 14)) {
  case 0: return 0;
  case 1: return 1;
  case 2: return -1;
  case 3: return INT64_C(1) << 31;
  case 4: return (INT64_C(1) << 62) + 1;
  case 5: return INT64_MAX;
  case 6: return INT64_MIN;
  case 7: return (int64_t)((uint64_t)current + 1); /* wraps, no signed overflow */
  case 8: return (int64_t)((uint64_t)current - 1);
  case 9: return INT64_C(1) << 32;
  case 10: return INT32_MAX;
  case 11: return -(int64_t)rng_below(rng, 5) - 2;
  case 12: return (int64_t)((uint64_t)current * 2u);
  default: return (int64_t)rng_below(rng, 8);
  }
}

static float interesting_float(rng_t* rng, float current) {
  switch (rng_below(rng, 12)) {
  case 0: return 0.0f;
  case 1: return -0.0f;
  case 2: return 1.0f;
  case 3: return -1.0f;
  case 4: return NAN;
  case 5: return INFINITY;
  case 6: return -INFINITY;
  case 7: return FLT_MAX;
  case 8: return FLT_MIN / 4; /* subnormal */
  case 9: return 1e-30f;
  case 10: return current * 2.0f + 1.0f;
  default: return (float)rng_below(rng, 1000) / 10.0f - 50.0f;
  }
}

/* ---- what a model holds, gathered for picking ---------------------------------- */

typedef struct {
  Onnx__GraphProto* graphs[MAX_GRAPHS]; /* graphs[0] is the model's graph */
  size_t graph_count;
} graphs_t;

static void gather_graphs(graphs_t* graphs, Onnx__GraphProto* graph, int depth) {
  if (!graph || graphs->graph_count == MAX_GRAPHS || depth > 8) return;
  graphs->graphs[graphs->graph_count++] = graph;
  for (size_t n = 0; n < graph->n_node; ++n)
    for (size_t a = 0; a < graph->node[n]->n_attribute; ++a) {
      Onnx__AttributeProto* attr = graph->node[n]->attribute[a];
      gather_graphs(graphs, attr->g, depth + 1);
      for (size_t g = 0; g < attr->n_graphs; ++g) gather_graphs(graphs, attr->graphs[g], depth + 1);
    }
}

/* Mostly the top graph: that is where the loader spends its time. */
static Onnx__GraphProto* pick_graph(rng_t* rng, const graphs_t* graphs) {
  if (graphs->graph_count > 1 && rng_chance(rng, 4)) return graphs->graphs[rng_below(rng, graphs->graph_count)];
  return graphs->graphs[0];
}

/* Initializers and the tensors of node attributes (Constant's value, ConstantOfShape's). */
static Onnx__TensorProto* pick_tensor(rng_t* rng, Onnx__GraphProto* graph) {
  Onnx__TensorProto* found[MAX_PICKS];
  size_t count = 0;
  for (size_t i = 0; i < graph->n_initializer && count < MAX_PICKS; ++i) found[count++] = graph->initializer[i];
  for (size_t n = 0; n < graph->n_node; ++n)
    for (size_t a = 0; a < graph->node[n]->n_attribute && count < MAX_PICKS; ++a)
      if (graph->node[n]->attribute[a]->t) found[count++] = graph->node[n]->attribute[a]->t;
  return count ? found[rng_below(rng, count)] : NULL;
}

/* A name a value of graph has: an input, an initializer or a node output. */
static const char* pick_value_name(rng_t* rng, const Onnx__GraphProto* graph) {
  const char* found[MAX_PICKS];
  size_t count = 0;
  for (size_t i = 0; i < graph->n_input && count < MAX_PICKS; ++i)
    if (graph->input[i]->name) found[count++] = graph->input[i]->name;
  for (size_t i = 0; i < graph->n_initializer && count < MAX_PICKS; ++i)
    if (graph->initializer[i]->name) found[count++] = graph->initializer[i]->name;
  for (size_t n = 0; n < graph->n_node; ++n)
    for (size_t o = 0; o < graph->node[n]->n_output && count < MAX_PICKS; ++o) found[count++] = graph->node[n]->output[o];
  return count ? found[rng_below(rng, count)] : "x";
}

static Onnx__NodeProto* pick_node(rng_t* rng, Onnx__GraphProto* graph) {
  return graph->n_node ? graph->node[rng_below(rng, graph->n_node)] : NULL;
}

/* A graph input mostly; else an output or a value_info. */
static Onnx__ValueInfoProto* pick_value_info(rng_t* rng, Onnx__GraphProto* graph) {
  size_t which = rng_below(rng, 6);
  if (which == 4 && graph->n_output) return graph->output[rng_below(rng, graph->n_output)];
  if (which == 5 && graph->n_value_info) return graph->value_info[rng_below(rng, graph->n_value_info)];
  if (graph->n_input) return graph->input[rng_below(rng, graph->n_input)];
  return graph->n_output ? graph->output[rng_below(rng, graph->n_output)] : NULL;
}

static void fresh_name(rng_t* rng, char* name, size_t capacity) {
  snprintf(name, capacity, "fz%u", (unsigned)rng_below(rng, 100000));
}

/* ---- building pieces ------------------------------------------------------------ */

static Onnx__TensorProto* new_int64_tensor(const int64_t* dims, size_t ndim, const int64_t* values, size_t count) {
  Onnx__TensorProto* t = xmalloc(sizeof(*t));
  onnx__tensor_proto__init(t);
  t->has_data_type = 1;
  t->data_type = ONNX__TENSOR_PROTO__DATA_TYPE__INT64;
  t->n_dims = ndim;
  t->dims = ndim ? memcpy(xmalloc(ndim * sizeof(int64_t)), dims, ndim * sizeof(int64_t)) : NULL;
  t->n_int64_data = count;
  t->int64_data = count ? memcpy(xmalloc(count * sizeof(int64_t)), values, count * sizeof(int64_t)) : NULL;
  return t;
}

static Onnx__AttributeProto* new_attribute(const char* name, Onnx__AttributeProto__AttributeType type) {
  Onnx__AttributeProto* attr = xmalloc(sizeof(*attr));
  onnx__attribute_proto__init(attr);
  attr->name = xstrdup(name);
  attr->has_type = 1;
  attr->type = type;
  return attr;
}

/* Appends a node to graph (or inserts it at position when position < n_node). */
static Onnx__NodeProto* add_node(Onnx__GraphProto* graph, size_t position, const char* op_type,
                                 const char* const* inputs, size_t input_count, const char* output) {
  Onnx__NodeProto* node = xmalloc(sizeof(*node));
  onnx__node_proto__init(node);
  node->op_type = xstrdup(op_type);
  for (size_t i = 0; i < input_count; ++i) APPEND(node->n_input, node->input, xstrdup(inputs[i]));
  APPEND(node->n_output, node->output, xstrdup(output));
  graph->node = xrealloc(graph->node, (graph->n_node + 1) * sizeof(*graph->node));
  if (position > graph->n_node) position = graph->n_node;
  memmove(&graph->node[position + 1], &graph->node[position], (graph->n_node - position) * sizeof(*graph->node));
  graph->node[position] = node;
  ++graph->n_node;
  return node;
}

/* A Constant node of int64 values (a scalar when ndim is 0) named output. */
static void add_int64_constant(Onnx__GraphProto* graph, size_t position, const char* output, size_t ndim,
                               const int64_t* values, size_t count) {
  int64_t dim = (int64_t)count;
  Onnx__NodeProto* node = add_node(graph, position, "Constant", NULL, 0, output);
  Onnx__AttributeProto* attr = new_attribute("value", ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__TENSOR);
  attr->t = new_int64_tensor(&dim, ndim, values, count);
  APPEND(node->n_attribute, node->attribute, attr);
}

/* ---- the mutations ------------------------------------------------------------- */

static int mutate_tensor_dims(rng_t* rng, Onnx__GraphProto* graph) {
  Onnx__TensorProto* t = pick_tensor(rng, graph);
  if (!t) return 0;
  if (t->n_dims == 0 || rng_chance(rng, 5)) {
    t->dims = xrealloc(t->dims, (t->n_dims + 1) * sizeof(int64_t));
    t->dims[t->n_dims++] = interesting_int(rng, 1);
  } else if (rng_chance(rng, 6)) {
    --t->n_dims;
  } else {
    size_t d = rng_below(rng, t->n_dims);
    t->dims[d] = interesting_int(rng, t->dims[d]);
  }
  return 1;
}

static void set_dim_value(Onnx__TensorShapeProto__Dimension* dim, int64_t value) {
  if (dim->value_case == ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_PARAM) free(dim->dim_param);
  dim->value_case = ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_VALUE;
  dim->dim_value = value;
}

static int mutate_value_shape(rng_t* rng, Onnx__GraphProto* graph) {
  Onnx__ValueInfoProto* info = pick_value_info(rng, graph);
  if (!info) return 0;
  if (!info->type) {
    info->type = xmalloc(sizeof(*info->type));
    onnx__type_proto__init(info->type);
  }
  Onnx__TypeProto* type = info->type;
  if (type->value_case != ONNX__TYPE_PROTO__VALUE_TENSOR_TYPE) {
    if (!rng_chance(rng, 2)) return 0; /* the nesting mutation handles other types */
    Onnx__TypeProto__Tensor* tensor = xmalloc(sizeof(*tensor));
    onnx__type_proto__tensor__init(tensor);
    tensor->has_elem_type = 1;
    tensor->elem_type = ONNX__TENSOR_PROTO__DATA_TYPE__FLOAT;
    /* The oneof's members are all message pointers: free whichever is set. */
    if (type->value_case != ONNX__TYPE_PROTO__VALUE__NOT_SET) free_message(type->tensor_type);
    type->value_case = ONNX__TYPE_PROTO__VALUE_TENSOR_TYPE;
    type->tensor_type = tensor;
  }
  Onnx__TypeProto__Tensor* tensor = type->tensor_type;
  if (rng_chance(rng, 8)) {
    tensor->has_elem_type = 1;
    tensor->elem_type = (int32_t)rng_below(rng, MAX_ONNX_TYPE + 1);
    return 1;
  }
  if (!tensor->shape) {
    tensor->shape = xmalloc(sizeof(*tensor->shape));
    onnx__tensor_shape_proto__init(tensor->shape);
  }
  Onnx__TensorShapeProto* shape = tensor->shape;
  switch (rng_below(rng, 8)) {
  case 0: { /* one more dim */
    Onnx__TensorShapeProto__Dimension* dim = xmalloc(sizeof(*dim));
    onnx__tensor_shape_proto__dimension__init(dim);
    set_dim_value(dim, interesting_int(rng, 1));
    APPEND(shape->n_dim, shape->dim, dim);
    break;
  }
  case 1: /* one dim less */
    if (!shape->n_dim) return 0;
    REMOVE_MESSAGE(shape->n_dim, shape->dim, shape->n_dim - 1);
    break;
  case 2: /* a symbolic dim */
    if (!shape->n_dim) return 0;
    {
      Onnx__TensorShapeProto__Dimension* dim = shape->dim[rng_below(rng, shape->n_dim)];
      char* name = xstrdup(rng_chance(rng, 2) ? "N" : "");
      if (dim->value_case == ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_PARAM) free(dim->dim_param);
      dim->value_case = ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_PARAM;
      dim->dim_param = name;
    }
    break;
  case 3: /* no shape at all (unknown rank) */
    free_message(tensor->shape);
    tensor->shape = NULL;
    break;
  default:
    if (!shape->n_dim) return 0;
    {
      Onnx__TensorShapeProto__Dimension* dim = shape->dim[rng_below(rng, shape->n_dim)];
      int64_t current = dim->value_case == ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_VALUE ? dim->dim_value : 1;
      set_dim_value(dim, interesting_int(rng, current));
    }
    break;
  }
  return 1;
}

/* Resizes a repeated scalar field to count elements, filling new ones with noise. */
static void resize_scalars(rng_t* rng, size_t* count, void** array, size_t element, size_t new_count) {
  *array = xrealloc(*array, new_count * element);
  for (size_t i = *count * element; i < new_count * element; ++i)
    ((uint8_t*)*array)[i] = (uint8_t)(rng_chance(rng, 2) ? 0 : rng_next(rng));
  *count = new_count;
}

static size_t new_length(rng_t* rng, size_t length) {
  switch (rng_below(rng, 7)) {
  case 0: return 0;
  case 1: return length ? length - 1 : 0;
  case 2: return length / 2;
  case 3: return length + 1;
  case 4: return length * 2 + 1;
  case 5: return length + 4;
  default: return length + 8;
  }
}

static int mutate_tensor_data(rng_t* rng, Onnx__GraphProto* graph, size_t max_size) {
  Onnx__TensorProto* t = pick_tensor(rng, graph);
  if (!t) return 0;
  switch (rng_below(rng, 8)) {
  case 0: /* another data type */
    t->has_data_type = 1;
    t->data_type = (int32_t)rng_below(rng, MAX_ONNX_TYPE + 1);
    return 1;
  case 1: /* raw_data dropped, or the typed fields emptied */
    if (t->has_raw_data) {
      free(t->raw_data.data);
      t->raw_data.data = NULL;
      t->raw_data.len = 0;
      t->has_raw_data = rng_chance(rng, 2); /* present but empty, or absent */
    } else {
      t->n_float_data = t->n_int32_data = t->n_int64_data = t->n_double_data = t->n_uint64_data = 0;
    }
    return 1;
  case 2: { /* stored outside the model: the loader has no directory to read it from */
    Onnx__StringStringEntryProto* entry = xmalloc(sizeof(*entry));
    onnx__string_string_entry_proto__init(entry);
    entry->key = xstrdup(rng_chance(rng, 3) ? "offset" : "location");
    entry->value = xstrdup(rng_chance(rng, 2) ? "../../etc/passwd" : "weights.bin");
    APPEND(t->n_external_data, t->external_data, entry);
    t->has_data_location = 1;
    t->data_location = rng_chance(rng, 4) ? ONNX__TENSOR_PROTO__DATA_LOCATION__DEFAULT
                                          : ONNX__TENSOR_PROTO__DATA_LOCATION__EXTERNAL;
    return 1;
  }
  case 3: case 4: { /* raw_data of another length */
    size_t length = new_length(rng, t->has_raw_data ? t->raw_data.len : 0);
    if (length > max_size) return 0;
    size_t old = t->has_raw_data ? t->raw_data.len : 0;
    uint8_t* bytes = xrealloc(t->has_raw_data ? t->raw_data.data : NULL, length);
    for (size_t i = old; i < length; ++i) bytes[i] = (uint8_t)rng_next(rng);
    t->has_raw_data = 1;
    t->raw_data.data = bytes;
    t->raw_data.len = length;
    return 1;
  }
  default: { /* a typed field of another count */
    size_t which = rng_below(rng, 6);
    switch (which) {
    case 0: {
      size_t n = new_length(rng, t->n_float_data);
      if (n * sizeof(float) > max_size) return 0;
      resize_scalars(rng, &t->n_float_data, (void**)&t->float_data, sizeof(float), n);
      break;
    }
    case 1: {
      size_t n = new_length(rng, t->n_int32_data);
      if (n * 4 > max_size) return 0;
      resize_scalars(rng, &t->n_int32_data, (void**)&t->int32_data, sizeof(int32_t), n);
      break;
    }
    case 2: {
      size_t n = new_length(rng, t->n_int64_data);
      if (n * 8 > max_size) return 0;
      resize_scalars(rng, &t->n_int64_data, (void**)&t->int64_data, sizeof(int64_t), n);
      break;
    }
    case 3: {
      size_t n = new_length(rng, t->n_double_data);
      if (n * 8 > max_size) return 0;
      resize_scalars(rng, &t->n_double_data, (void**)&t->double_data, sizeof(double), n);
      break;
    }
    case 4: {
      size_t n = new_length(rng, t->n_uint64_data);
      if (n * 8 > max_size) return 0;
      resize_scalars(rng, &t->n_uint64_data, (void**)&t->uint64_data, sizeof(uint64_t), n);
      break;
    }
    default: { /* string_data: each element owns its bytes */
      size_t n = new_length(rng, t->n_string_data);
      if (n > max_size) return 0;
      for (size_t i = n; i < t->n_string_data; ++i) free(t->string_data[i].data);
      t->string_data = xrealloc(t->string_data, n * sizeof(*t->string_data));
      for (size_t i = t->n_string_data; i < n; ++i) {
        t->string_data[i].len = rng_below(rng, 4);
        t->string_data[i].data = xmalloc(t->string_data[i].len);
        memset(t->string_data[i].data, 'a', t->string_data[i].len);
      }
      t->n_string_data = n;
      break;
    }
    }
    /* Typed data beside raw_data is invalid; keep both only sometimes. */
    if (t->has_raw_data && !rng_chance(rng, 4)) {
      free(t->raw_data.data);
      t->raw_data.data = NULL;
      t->raw_data.len = 0;
      t->has_raw_data = 0;
    }
    return 1;
  }
  }
}

static int mutate_attribute(rng_t* rng, Onnx__GraphProto* graph) {
  Onnx__NodeProto* node = pick_node(rng, graph);
  if (!node) return 0;
  if (!node->n_attribute || rng_chance(rng, 6)) {
    static const Onnx__AttributeProto__AttributeType kTypes[] = {
        ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__INT, ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__INTS,
        ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__FLOAT, ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__FLOATS,
        ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__STRING, ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__TENSOR};
    Onnx__AttributeProto* attr = new_attribute(PICK(rng, kAttrNames), PICK(rng, kTypes));
    switch (attr->type) {
    case ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__INT: attr->has_i = 1; attr->i = interesting_int(rng, 0); break;
    case ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__FLOAT: attr->has_f = 1; attr->f = interesting_float(rng, 1); break;
    case ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__STRING: {
      const char* s = PICK(rng, kAttrStrings);
      attr->has_s = 1;
      attr->s.len = strlen(s);
      attr->s.data = (uint8_t*)xstrdup(s);
      break;
    }
    case ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__TENSOR: {
      int64_t value = interesting_int(rng, 0);
      attr->t = new_int64_tensor(NULL, 0, &value, 1);
      break;
    }
    default: break; /* empty lists */
    }
    APPEND(node->n_attribute, node->attribute, attr);
    return 1;
  }
  size_t index = rng_below(rng, node->n_attribute);
  Onnx__AttributeProto* attr = node->attribute[index];
  switch (rng_below(rng, 9)) {
  case 0: attr->has_i = 1; attr->i = interesting_int(rng, attr->i); break;
  case 1: /* ints: an element, or the count */
    if (attr->n_ints && rng_chance(rng, 2)) {
      size_t i = rng_below(rng, attr->n_ints);
      attr->ints[i] = interesting_int(rng, attr->ints[i]);
    } else {
      size_t n = new_length(rng, attr->n_ints);
      if (n > 64) n = 64;
      resize_scalars(rng, &attr->n_ints, (void**)&attr->ints, sizeof(int64_t), n);
    }
    break;
  case 2: attr->has_f = 1; attr->f = interesting_float(rng, attr->f); break;
  case 3:
    if (attr->n_floats && rng_chance(rng, 2)) {
      size_t i = rng_below(rng, attr->n_floats);
      attr->floats[i] = interesting_float(rng, attr->floats[i]);
    } else {
      size_t n = new_length(rng, attr->n_floats);
      if (n > 64) n = 64;
      resize_scalars(rng, &attr->n_floats, (void**)&attr->floats, sizeof(float), n);
    }
    break;
  case 4: { /* s */
    const char* s = PICK(rng, kAttrStrings);
    free(attr->s.data);
    attr->has_s = 1;
    attr->s.len = strlen(s);
    attr->s.data = (uint8_t*)xstrdup(s);
    break;
  }
  case 5: /* a type that disagrees with the payload, or an unknown one */
    attr->has_type = 1;
    attr->type = (Onnx__AttributeProto__AttributeType)rng_below(rng, 16);
    break;
  case 6: set_string(&attr->name, PICK(rng, kAttrNames)); break;
  case 7: REMOVE_MESSAGE(node->n_attribute, node->attribute, index); break;
  default: /* the same attribute twice */
    if (rng_chance(rng, 2)) {
      Onnx__AttributeProto* copy = clone_message(&attr->base);
      if (!copy) return 0;
      APPEND(node->n_attribute, node->attribute, copy);
    } else {
      attr->has_i = 1;
      attr->i = interesting_int(rng, attr->i);
      attr->has_type = 1;
      attr->type = ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__INT;
    }
    break;
  }
  return 1;
}

static int mutate_edge(rng_t* rng, Onnx__GraphProto* graph) {
  Onnx__NodeProto* node = pick_node(rng, graph);
  if (!node) return 0;
  char name[32];
  fresh_name(rng, name, sizeof(name));
  switch (rng_below(rng, 10)) {
  case 0: /* one more input */
    APPEND(node->n_input, node->input, xstrdup(rng_chance(rng, 3) ? "" : pick_value_name(rng, graph)));
    return 1;
  case 1: /* one input less */
    if (!node->n_input) return 0;
    free(node->input[--node->n_input]);
    return 1;
  case 2: /* an output named like another value (two producers, or a cycle) */
    if (!node->n_output) return 0;
    set_string(&node->output[rng_below(rng, node->n_output)], pick_value_name(rng, graph));
    return 1;
  case 3: /* a graph output renamed */
    if (!graph->n_output) return 0;
    set_string(&graph->output[rng_below(rng, graph->n_output)]->name,
               rng_chance(rng, 3) ? name : pick_value_name(rng, graph));
    return 1;
  default: { /* an input renamed: omitted, another value, or nothing known */
    if (!node->n_input) return 0;
    size_t which = rng_below(rng, 4);
    const char* to = which == 0 ? "" : which == 1 ? name : pick_value_name(rng, graph);
    set_string(&node->input[rng_below(rng, node->n_input)], to);
    return 1;
  }
  }
}

static int mutate_op(rng_t* rng, Onnx__ModelProto* model, Onnx__GraphProto* graph) {
  switch (rng_below(rng, 6)) {
  case 0: { /* the default domain's opset version */
    Onnx__OperatorSetIdProto* opset = NULL;
    for (size_t i = 0; i < model->n_opset_import; ++i)
      if (!model->opset_import[i]->domain || !model->opset_import[i]->domain[0]) opset = model->opset_import[i];
    if (!opset || rng_chance(rng, 8)) {
      opset = xmalloc(sizeof(*opset));
      onnx__operator_set_id_proto__init(opset);
      APPEND(model->n_opset_import, model->opset_import, opset);
    }
    opset->has_version = 1;
    opset->version = rng_chance(rng, 4) ? interesting_int(rng, opset->version) : (int64_t)rng_below(rng, 24);
    return 1;
  }
  case 1:
    model->has_ir_version = 1;
    model->ir_version = rng_chance(rng, 2) ? interesting_int(rng, model->ir_version) : (int64_t)rng_below(rng, 11);
    return 1;
  case 2: { /* a domain */
    static const char* const kDomains[] = {"", "ai.onnx", "ai.onnx.ml", "com.microsoft"};
    Onnx__NodeProto* node = pick_node(rng, graph);
    if (!node) return 0;
    set_string(&node->domain, PICK(rng, kDomains));
    return 1;
  }
  default: {
    Onnx__NodeProto* node = pick_node(rng, graph);
    if (!node) return 0;
    set_string(&node->op_type, pick_op(rng));
    return 1;
  }
  }
}

static int mutate_nodes(rng_t* rng, Onnx__GraphProto* graph) {
  if (!graph->n_node) return 0;
  size_t a = rng_below(rng, graph->n_node), b = rng_below(rng, graph->n_node);
  switch (rng_below(rng, 3)) {
  case 0: { /* swap: a consumer before its producer */
    Onnx__NodeProto* node = graph->node[a];
    graph->node[a] = graph->node[b];
    graph->node[b] = node;
    return a != b;
  }
  case 1: { /* duplicate at b */
    Onnx__NodeProto* copy = clone_message(&graph->node[a]->base);
    if (!copy) return 0;
    graph->node = xrealloc(graph->node, (graph->n_node + 1) * sizeof(*graph->node));
    memmove(&graph->node[b + 1], &graph->node[b], (graph->n_node - b) * sizeof(*graph->node));
    graph->node[b] = copy;
    ++graph->n_node;
    return 1;
  }
  default: REMOVE_MESSAGE(graph->n_node, graph->node, a); return 1;
  }
}

/* A chain of shape-computing nodes from an existing value; its end replaces a node
 * input or becomes a graph output. The loader folds such chains as constants, so
 * they reach its constant evaluation and the ops' static checks. */
static int mutate_chain(rng_t* rng, Onnx__GraphProto* graph) {
  char current[256], name[32], a[40], b[40], c[40];
  snprintf(current, sizeof(current), "%s", pick_value_name(rng, graph));
  size_t position = rng_below(rng, graph->n_node + 1), steps = 1 + rng_below(rng, 5);
  for (size_t s = 0; s < steps; ++s) {
    fresh_name(rng, name, sizeof(name));
    snprintf(a, sizeof(a), "%s_a", name);
    snprintf(b, sizeof(b), "%s_b", name);
    snprintf(c, sizeof(c), "%s_c", name);
    int64_t v[3] = {interesting_int(rng, 0), interesting_int(rng, 1), interesting_int(rng, 1)};
    if (rng_chance(rng, 2)) v[0] = (int64_t)rng_below(rng, 4); /* mostly sane values */
    if (rng_chance(rng, 2)) v[1] = (int64_t)rng_below(rng, 8);
    switch (rng_below(rng, 8)) {
    case 0: add_node(graph, position++, "Shape", (const char* const[]){current}, 1, name); break;
    case 1: {
      add_int64_constant(graph, position++, a, rng_below(rng, 2), v, 1);
      Onnx__NodeProto* node = add_node(graph, position++, "Gather", (const char* const[]){current, a}, 2, name);
      if (rng_chance(rng, 3)) {
        Onnx__AttributeProto* axis = new_attribute("axis", ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__INT);
        axis->has_i = 1;
        axis->i = interesting_int(rng, 0);
        APPEND(node->n_attribute, node->attribute, axis);
      }
      break;
    }
    case 2: {
      add_int64_constant(graph, position++, a, 1, v, 1 + rng_below(rng, 3));
      Onnx__NodeProto* node = add_node(graph, position++, "Concat", (const char* const[]){current, a}, 2, name);
      Onnx__AttributeProto* axis = new_attribute("axis", ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__INT);
      axis->has_i = 1;
      axis->i = rng_chance(rng, 4) ? interesting_int(rng, 0) : 0;
      APPEND(node->n_attribute, node->attribute, axis);
      break;
    }
    case 3: /* current as the shape of some value, or a shape for current */
      if (rng_chance(rng, 2)) {
        add_node(graph, position++, "Reshape", (const char* const[]){pick_value_name(rng, graph), current}, 2, name);
      } else {
        add_int64_constant(graph, position++, a, 1, v, 1 + rng_below(rng, 3));
        add_node(graph, position++, "Reshape", (const char* const[]){current, a}, 2, name);
      }
      break;
    case 4: {
      size_t inputs = 3 + rng_below(rng, 3); /* starts, ends, [axes], [steps] */
      add_int64_constant(graph, position++, a, 1, &v[0], 1);
      add_int64_constant(graph, position++, b, 1, &v[1], 1);
      int64_t step = rng_chance(rng, 2) ? 1 : interesting_int(rng, 1);
      add_int64_constant(graph, position++, c, 1, &step, 1);
      const char* slice_inputs[5] = {current, a, b, rng_chance(rng, 3) ? "" : a, c};
      add_node(graph, position++, "Slice", slice_inputs, inputs, name);
      break;
    }
    case 5: {
      Onnx__NodeProto* node = add_node(graph, position++, "ConstantOfShape", (const char* const[]){current}, 1, name);
      if (rng_chance(rng, 2)) {
        Onnx__AttributeProto* value = new_attribute("value", ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__TENSOR);
        int64_t one = 1;
        value->t = new_int64_tensor(&one, 1, &v[2], 1);
        APPEND(node->n_attribute, node->attribute, value);
      }
      break;
    }
    case 6: { /* Range(start, limit, delta) with current as one of them */
      add_int64_constant(graph, position++, a, 0, &v[0], 1);
      add_int64_constant(graph, position++, b, 0, &v[2], 1);
      const char* range_inputs[3] = {a, rng_chance(rng, 2) ? current : a, b};
      add_node(graph, position++, "Range", range_inputs, 3, name);
      break;
    }
    default: add_int64_constant(graph, position++, name, rng_below(rng, 2), v, 1 + rng_below(rng, 3)); break;
    }
    snprintf(current, sizeof(current), "%s", name);
  }
  /* Use the end: as the input of a node after the chain, else as a graph output. */
  if (position < graph->n_node && rng_chance(rng, 4) == 0) {
    Onnx__NodeProto* node = graph->node[position + rng_below(rng, graph->n_node - position)];
    if (node->n_input) {
      set_string(&node->input[rng_below(rng, node->n_input)], current);
      return 1;
    }
  }
  Onnx__ValueInfoProto* output = xmalloc(sizeof(*output));
  onnx__value_info_proto__init(output);
  output->name = xstrdup(current);
  APPEND(graph->n_output, graph->output, output);
  return 1;
}

/* Wraps a value's type in sequence or optional types, or makes it another kind. */
static int mutate_nest_type(rng_t* rng, Onnx__GraphProto* graph) {
  Onnx__ValueInfoProto* info = pick_value_info(rng, graph);
  if (!info) return 0;
  size_t depth = 1 + rng_below(rng, MAX_NEST);
  for (size_t d = 0; d < depth; ++d) {
    Onnx__TypeProto* outer = xmalloc(sizeof(*outer));
    onnx__type_proto__init(outer);
    if (rng_chance(rng, 2)) {
      Onnx__TypeProto__Sequence* sequence = xmalloc(sizeof(*sequence));
      onnx__type_proto__sequence__init(sequence);
      sequence->elem_type = info->type; /* may be NULL: a sequence of nothing */
      outer->value_case = ONNX__TYPE_PROTO__VALUE_SEQUENCE_TYPE;
      outer->sequence_type = sequence;
    } else if (!rng_chance(rng, 6)) {
      Onnx__TypeProto__Optional* optional = xmalloc(sizeof(*optional));
      onnx__type_proto__optional__init(optional);
      optional->elem_type = info->type;
      outer->value_case = ONNX__TYPE_PROTO__VALUE_OPTIONAL_TYPE;
      outer->optional_type = optional;
    } else { /* a sparse tensor instead */
      Onnx__TypeProto__SparseTensor* sparse = xmalloc(sizeof(*sparse));
      onnx__type_proto__sparse_tensor__init(sparse);
      sparse->has_elem_type = 1;
      sparse->elem_type = ONNX__TENSOR_PROTO__DATA_TYPE__FLOAT;
      free_message(info->type);
      outer->value_case = ONNX__TYPE_PROTO__VALUE_SPARSE_TENSOR_TYPE;
      outer->sparse_tensor_type = sparse;
    }
    info->type = outer;
  }
  return 1;
}

/* Gives a node graph attributes (then_branch and else_branch of If, a Loop body)
 * holding a copy of one of graph's nodes, nested up to MAX_NEST levels; or makes it
 * an If. */
static int mutate_subgraph(rng_t* rng, Onnx__GraphProto* graph) {
  Onnx__NodeProto* node = pick_node(rng, graph);
  if (!node) return 0;
  static const char* const kGraphAttrs[] = {"then_branch", "else_branch", "body", "g"};
  if (rng_chance(rng, 3)) set_string(&node->op_type, rng_chance(rng, 2) ? "If" : "Loop");
  Onnx__NodeProto* holder = node;
  size_t depth = 1 + rng_below(rng, MAX_NEST);
  for (size_t d = 0; d < depth; ++d) {
    Onnx__GraphProto* body = xmalloc(sizeof(*body));
    onnx__graph_proto__init(body);
    body->name = xstrdup("branch");
    Onnx__NodeProto* inner = clone_message(&pick_node(rng, graph)->base);
    if (inner) APPEND(body->n_node, body->node, inner);
    if (inner && inner->n_output) {
      Onnx__ValueInfoProto* output = xmalloc(sizeof(*output));
      onnx__value_info_proto__init(output);
      output->name = xstrdup(inner->output[0]);
      APPEND(body->n_output, body->output, output);
    }
    Onnx__AttributeProto* attr = new_attribute(PICK(rng, kGraphAttrs), ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__GRAPH);
    if (rng_chance(rng, 5)) { /* as a GRAPHS list */
      attr->type = ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__GRAPHS;
      APPEND(attr->n_graphs, attr->graphs, body);
    } else {
      attr->g = body;
    }
    APPEND(holder->n_attribute, holder->attribute, attr);
    if (!inner) break;
    holder = inner;
  }
  return 1;
}

/* One structured mutation of model; 0 when the one picked did not apply. */
static int mutate_model(rng_t* rng, Onnx__ModelProto* model, size_t max_size) {
  if (!model->graph) {
    model->graph = xmalloc(sizeof(*model->graph));
    onnx__graph_proto__init(model->graph);
  }
  graphs_t graphs = {{NULL}, 0};
  gather_graphs(&graphs, model->graph, 0);
  Onnx__GraphProto* graph = pick_graph(rng, &graphs);
  switch (rng_below(rng, 13)) {
  case 0: return mutate_tensor_dims(rng, graph);
  case 1: case 2: return mutate_value_shape(rng, graph);
  case 3: return mutate_tensor_data(rng, graph, max_size);
  case 4: case 5: return mutate_attribute(rng, graph);
  case 6: return mutate_edge(rng, graph);
  case 7: return mutate_op(rng, model, graph);
  case 8: return mutate_nodes(rng, graph);
  case 9: case 10: return mutate_chain(rng, graph);
  case 11: return mutate_nest_type(rng, graph);
  default: return mutate_subgraph(rng, graph);
  }
}

/* Mutates (a few tries) and packs into out; 0 when nothing applied or it does not fit. */
static size_t mutate_and_pack(rng_t* rng, Onnx__ModelProto* model, uint8_t* out, size_t max_size) {
  int changed = 0;
  for (int attempt = 0; attempt < 4 && !changed; ++attempt) changed = mutate_model(rng, model, max_size);
  /* Sometimes stack a second mutation: some defects need two changes. */
  if (changed && rng_chance(rng, 4)) mutate_model(rng, model, max_size);
  if (!changed) return 0;
  size_t packed = onnx__model_proto__get_packed_size(model);
  if (packed > max_size) return 0;
  return onnx__model_proto__pack(model, out);
}

/* The model in data, or NULL. What the loader refuses for its nesting before parsing
 * is not unpacked here either: the mutator's own nests grow with each round, and
 * protobuf-c's recursion would overflow the stack on them. */
static Onnx__ModelProto* unpack_model(const uint8_t* data, size_t size) {
  hgr_status_t status = hgr__onnx_wire_check(data, size, &onnx__model_proto__descriptor);
  if (status) {
    hgr_status_free(status);
    return NULL;
  }
  return onnx__model_proto__unpack(NULL, size, data);
}

size_t LLVMFuzzerCustomMutator(uint8_t* data, size_t size, size_t max_size, unsigned int seed) {
  rng_t rng = {seed};
  Onnx__ModelProto* model = rng_chance(&rng, 8) ? NULL : unpack_model(data, size);
  if (!model) return LLVMFuzzerMutate(data, size, max_size);
  size_t packed = mutate_and_pack(&rng, model, data, max_size);
  onnx__model_proto__free_unpacked(model, NULL);
  return packed ? packed : LLVMFuzzerMutate(data, size, max_size);
}

/* Grafts a node (or an initializer, or a graph input) of the second model into the
 * first at a random place, then mutates the result. */
size_t LLVMFuzzerCustomCrossOver(const uint8_t* data1, size_t size1, const uint8_t* data2, size_t size2,
                                 uint8_t* out, size_t max_out_size, unsigned int seed) {
  rng_t rng = {seed};
  size_t packed = 0;
  Onnx__ModelProto* to = unpack_model(data1, size1);
  Onnx__ModelProto* from = unpack_model(data2, size2);
  if (to && from && to->graph && from->graph) {
    Onnx__GraphProto* g = to->graph;
    Onnx__GraphProto* source = from->graph;
    size_t which = rng_below(&rng, 4);
    if (which == 0 && source->n_initializer) {
      Onnx__TensorProto* t = clone_message(&source->initializer[rng_below(&rng, source->n_initializer)]->base);
      if (t) APPEND(g->n_initializer, g->initializer, t);
    } else if (which == 1 && source->n_input) {
      Onnx__ValueInfoProto* v = clone_message(&source->input[rng_below(&rng, source->n_input)]->base);
      if (v) APPEND(g->n_input, g->input, v);
    } else if (source->n_node) {
      Onnx__NodeProto* node = clone_message(&source->node[rng_below(&rng, source->n_node)]->base);
      if (node) {
        size_t at = rng_below(&rng, g->n_node + 1);
        g->node = xrealloc(g->node, (g->n_node + 1) * sizeof(*g->node));
        memmove(&g->node[at + 1], &g->node[at], (g->n_node - at) * sizeof(*g->node));
        g->node[at] = node;
        ++g->n_node;
        /* Wire it in: its first input from a value of this graph. */
        if (node->n_input && rng_chance(&rng, 2)) set_string(&node->input[0], pick_value_name(&rng, g));
      }
    }
    mutate_model(&rng, to, max_out_size);
    size_t size = onnx__model_proto__get_packed_size(to);
    if (size <= max_out_size) packed = onnx__model_proto__pack(to, out);
  }
  if (to) onnx__model_proto__free_unpacked(to, NULL);
  if (from) onnx__model_proto__free_unpacked(from, NULL);
  return packed;
}
