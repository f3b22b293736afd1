/* The model examples (README.md here): a small CNN and a two-layer MLP, each split
 * over device keys 1 and 4 with __copy nodes between them, their weights in a TVM
 * params file, one input as .npy and the expected output computed on the host with
 * the plain-C references the op tests use (tests/ref_*.c, in double precision).
 *
 *   cnn.json  x[1,3,32,32] -> conv2d 3x3 (+bias) -> relu -> max_pool2d 2x2 on key 1;
 *             __copy to key 4 -> conv2d 3x3 (+bias, fused relu) -> max_pool2d 2x2 ->
 *             batch_flatten (an alias: same storage) -> dense (+bias) on key 4;
 *             __copy to key 1 -> softmax
 *   mlp.json  x[4,64] -> dense 128 (+bias) -> relu on key 1; __copy to key 4 ->
 *             dense 10 (+bias) -> softmax */
#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "example_graph.h"
#include "hgr/hgr.h"
#include "models.h"
#include "ref_conv.h"
#include "ref_linalg.h"
#include "ref_norm.h"

#define MAX_MODEL_NODES 32

typedef struct model_t {
  example_node_t nodes[MAX_MODEL_NODES];
  int node_count;
  int next_storage;
  uint64_t random_state;
} model_t;

static const hgr_dtype_t float32 = {HGR_DTYPE_FLOAT, 32, 1};


static float* zeroed(int64_t count) {
  float* values = calloc((size_t)count, sizeof(float));
  if (!values) {
    fprintf(stderr, "hgr_make_examples: out of memory\n");
    exit(1);
  }
  return values;
}

static int add_node(model_t* m, const char* name, const char* func_name, int key, int ndim, const int64_t* shape) {
  if (m->node_count == MAX_MODEL_NODES) {
    fprintf(stderr, "hgr_make_examples: too many model nodes\n");
    exit(1);
  }
  example_node_t* n = &m->nodes[m->node_count];
  memset(n, 0, sizeof(*n));
  snprintf(n->name, sizeof(n->name), "%s", name);
  n->func_name = func_name;
  n->key = key;
  n->storage_id = m->next_storage++;
  n->ndim = ndim;
  memcpy(n->shape, shape, (size_t)ndim * sizeof(int64_t));
  n->values = zeroed(example_element_count(n));
  return m->node_count++;
}

/* An input (is_param false) in [-1, 1), or a weight uniform in +-scale. */
static int add_tensor(model_t* m, const char* name, bool is_param, float scale, int key, int ndim,
                      const int64_t* shape) {
  int id = add_node(m, name, NULL, key, ndim, shape);
  example_node_t* n = &m->nodes[id];
  n->is_param = is_param;
  for (int64_t i = 0; i < example_element_count(n); ++i) {
    m->random_state = m->random_state * 6364136223846793005ull + 1442695040888963407ull;
    n->values[i] = scale * ((float)(m->random_state >> 40) / (float)(1ull << 23) - 1.0f);
  }
  return id;
}

static int add_op(model_t* m, const char* name, const char* func_name, const char* attrs, int key, int ndim,
                  const int64_t* shape, int a, int b, int c) {
  int id = add_node(m, name, func_name, key, ndim, shape);
  example_node_t* n = &m->nodes[id];
  snprintf(n->attrs, sizeof(n->attrs), "%s", attrs);
  int inputs[3] = {a, b, c};
  for (int k = 0; k < 3 && inputs[k] >= 0; ++k) n->inputs[n->input_count++] = inputs[k];
  return id;
}

static int add_copy(model_t* m, const char* name, int from, int key) {
  const example_node_t* src = &m->nodes[from];
  int id = add_op(m, name, "__copy", "", key, src->ndim, src->shape, from, -1, -1);
  memcpy(m->nodes[id].values, m->nodes[from].values, (size_t)example_element_count(src) * sizeof(float));
  return id;
}

static float* values_of(model_t* m, int id) { return m->nodes[id].values; }

/* conv2d with bias (and relu when fused), padding 1, stride 1, 3x3. */
static int add_conv(model_t* m, const char* name, int x, int w, int bias, bool fused_relu, int key) {
  hgr_ref_conv2d_t p = {{1, 1}, {1, 1, 1, 1}, {1, 1}, 1, fused_relu};
  int64_t yshape[4];
  hgr_ref_conv2d_shape(m->nodes[x].shape, m->nodes[w].shape, &p, yshape);
  int y = add_op(m, name, "conv2d",
                 fused_relu ? "\"padding\": \"[1, 1]\", \"kernel_size\": \"[3, 3]\", \"activation\": \"relu\""
                            : "\"padding\": \"[1, 1]\", \"kernel_size\": \"[3, 3]\"",
                 key, 4, yshape, x, w, bias);
  hgr_ref_conv2d(values_of(m, x), m->nodes[x].shape, values_of(m, w), m->nodes[w].shape, values_of(m, bias),
                 values_of(m, y), yshape, &p);
  return y;
}

static int add_pool(model_t* m, const char* name, int x, int key) {
  hgr_ref_pool2d_t p = {true, {2, 2}, {2, 2}, {1, 1}, {0, 0, 0, 0}, false, false};
  int64_t yshape[4];
  hgr_ref_pool2d_shape(m->nodes[x].shape, &p, yshape);
  int y = add_op(m, name, "max_pool2d", "\"pool_size\": \"[2, 2]\", \"strides\": \"[2, 2]\"", key, 4, yshape, x, -1,
                 -1);
  hgr_ref_pool2d(values_of(m, x), m->nodes[x].shape, values_of(m, y), yshape, &p);
  return y;
}

static int add_relu(model_t* m, const char* name, int x, int key) {
  const example_node_t* src = &m->nodes[x];
  int y = add_op(m, name, "relu", "", key, src->ndim, src->shape, x, -1, -1);
  for (int64_t i = 0; i < example_element_count(src); ++i) values_of(m, y)[i] = fmaxf(values_of(m, x)[i], 0.0f);
  return y;
}

/* dense over a [rows, in] input with weight [units, in] and bias [units]. */
static int add_dense(model_t* m, const char* name, int x, int w, int bias, int key) {
  int64_t rows = m->nodes[x].shape[0], in = m->nodes[x].shape[1], units = m->nodes[w].shape[0];
  int y = add_op(m, name, "dense", "", key, 2, (int64_t[]){rows, units}, x, w, bias);
  hgr_ref_dense(values_of(m, x), values_of(m, w), values_of(m, bias), values_of(m, y), rows, in, units);
  return y;
}

static int add_softmax(model_t* m, const char* name, int x, int key) {
  const example_node_t* src = &m->nodes[x];
  int y = add_op(m, name, "softmax", "\"axis\": \"-1\"", key, src->ndim, src->shape, x, -1, -1);
  int64_t axis_len = src->shape[src->ndim - 1];
  hgr_ref_softmax(values_of(m, x), values_of(m, y), example_element_count(src) / axis_len, axis_len, 1, false);
  return y;
}

static void build_cnn(model_t* m) {
  int x = add_tensor(m, "x", false, 1.0f, 1, 4, (int64_t[]){1, 3, 32, 32});
  int w1 = add_tensor(m, "conv1_weight", true, sqrtf(6.0f / 27), 1, 4, (int64_t[]){8, 3, 3, 3});
  int b1 = add_tensor(m, "conv1_bias", true, 0.1f, 1, 1, (int64_t[]){8});
  int w2 = add_tensor(m, "conv2_weight", true, sqrtf(6.0f / 72), 4, 4, (int64_t[]){16, 8, 3, 3});
  int b2 = add_tensor(m, "conv2_bias", true, 0.1f, 4, 1, (int64_t[]){16});
  int w3 = add_tensor(m, "fc_weight", true, sqrtf(6.0f / 1024), 4, 2, (int64_t[]){10, 1024});
  int b3 = add_tensor(m, "fc_bias", true, 0.1f, 4, 1, (int64_t[]){10});
  int conv1 = add_conv(m, "conv1", x, w1, b1, false, 1);
  int relu1 = add_relu(m, "relu1", conv1, 1);
  int pool1 = add_pool(m, "pool1", relu1, 1);
  int moved = add_copy(m, "pool1_to_key4", pool1, 4);
  int conv2 = add_conv(m, "conv2_relu", moved, w2, b2, true, 4);
  int pool2 = add_pool(m, "pool2", conv2, 4);
  /* batch_flatten shares its input's storage: an alias, no kernel. */
  int flat = add_op(m, "flatten", "batch_flatten", "", 4, 2, (int64_t[]){1, 1024}, pool2, -1, -1);
  m->nodes[flat].storage_id = m->nodes[pool2].storage_id;
  memcpy(values_of(m, flat), values_of(m, pool2), 1024 * sizeof(float));
  int logits = add_dense(m, "fc", flat, w3, b3, 4);
  int back = add_copy(m, "logits_to_key1", logits, 1);
  add_softmax(m, "softmax", back, 1);
}

static void build_mlp(model_t* m) {
  int x = add_tensor(m, "x", false, 1.0f, 1, 2, (int64_t[]){4, 64});
  int w1 = add_tensor(m, "fc1_weight", true, sqrtf(6.0f / 64), 1, 2, (int64_t[]){128, 64});
  int b1 = add_tensor(m, "fc1_bias", true, 0.1f, 1, 1, (int64_t[]){128});
  int w2 = add_tensor(m, "fc2_weight", true, sqrtf(6.0f / 128), 4, 2, (int64_t[]){10, 128});
  int b2 = add_tensor(m, "fc2_bias", true, 0.1f, 4, 1, (int64_t[]){10});
  int hidden = add_dense(m, "fc1", x, w1, b1, 1);
  int relu = add_relu(m, "relu", hidden, 1);
  int moved = add_copy(m, "hidden_to_key4", relu, 4);
  int logits = add_dense(m, "fc2", moved, w2, b2, 4);
  add_softmax(m, "softmax", logits, 4);
}

/* <name>.json, <name>.params (the weights), <name>_x.npy and <name>_expected_0.npy. */
static bool write_model(const model_t* m, const char* dir, const char* name) {
  char path[4096];
  snprintf(path, sizeof(path), "%s/%s.json", dir, name);
  int head = m->node_count - 1; /* the last node is the one head */
  bool ok = example_write_graph(m->nodes, m->node_count, &head, 1, path);
  hgr_params_t* params = NULL;
  ok = ok && example_report(hgr_params_create(&params));
  for (int i = 0; ok && i < m->node_count; ++i) {
    const example_node_t* n = &m->nodes[i];
    uint64_t bytes = (uint64_t)example_element_count(n) * sizeof(float);
    if (n->is_param) {
      ok = example_report(hgr_params_add(params, n->name, float32, n->ndim, n->shape, n->values, bytes));
    } else if (!n->func_name || i == m->node_count - 1) {
      if (n->func_name) snprintf(path, sizeof(path), "%s/%s_expected_0.npy", dir, name);
      else snprintf(path, sizeof(path), "%s/%s_%s.npy", dir, name, n->name);
      ok = example_report(hgr_npy_save_file(path, float32, n->ndim, n->shape, n->values, bytes));
    }
  }
  snprintf(path, sizeof(path), "%s/%s.params", dir, name);
  ok = ok && example_report(hgr_params_save_file(params, path));
  hgr_params_release(params);
  return ok;
}

static void free_model(model_t* m) {
  for (int i = 0; i < m->node_count; ++i) free(m->nodes[i].values);
}

bool hgr_examples_write_models(const char* dir) {
  static model_t cnn, mlp;
  cnn.random_state = 4;
  mlp.random_state = 5;
  build_cnn(&cnn);
  build_mlp(&mlp);
  bool ok = write_model(&cnn, dir, "cnn") && write_model(&mlp, dir, "mlp");
  if (ok) printf("wrote cnn (%d nodes) and mlp (%d nodes) to %s\n", cnn.node_count, mlp.node_count, dir);
  free_model(&cnn);
  free_model(&mlp);
  return ok;
}
