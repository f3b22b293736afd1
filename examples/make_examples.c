/* Writes the example graphs and their inputs into a directory (see README.md here):
 *
 *   simplex.json  TVM's two-device test graph: (A + B) on key 4, __copy to key 1, - C
 *   duplex.json   the same back and forth twice: ((A + B) - C + D) - E
 *   large.json    a few hundred elementwise nodes over keys 1, 4 and 5 with copies
 *                 between them, one tensor of 1 MiB and more
 *   <graph>_<input>.npy  the inputs; large.params  the weights of large.json
 *   <graph>_expected_<i>.npy  the expected value of head i
 *   cnn.*, mlp.*  the model examples (models.c)
 *
 * usage: hgr_make_examples DIR
 *
 * The expected values are computed here, on the host, in float32: every op node's
 * values are computed as the node is added, with the C counterparts of the
 * expressions in kernels/elementwise.cl (expf, tanhf, fmaxf, fminf).
 *
 * Only the public API is used. The output is deterministic. */
#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "example_graph.h"
#include "hgr/hgr.h"
#include "models.h"

#define MAX_NODES 512

typedef struct graph_t {
  example_node_t nodes[MAX_NODES];
  int node_count;
  int heads[4];
  int head_count;
  uint64_t random_state; /* input values are drawn from it, in node order */
} graph_t;

static const hgr_dtype_t float32 = {HGR_DTYPE_FLOAT, 32, 1};


static float* allocate_values(int64_t count) {
  float* values = malloc((size_t)count * sizeof(float));
  if (!values) {
    fprintf(stderr, "hgr_make_examples: out of memory\n");
    exit(1);
  }
  return values;
}

/* Deterministic values in [-1, 1). */
static float* random_values(uint64_t* state, int64_t count) {
  float* values = allocate_values(count);
  for (int64_t i = 0; i < count; ++i) {
    *state = *state * 6364136223846793005ull + 1442695040888963407ull;
    values[i] = (float)(*state >> 40) / (float)(1ull << 23) - 1.0f;
  }
  return values;
}

/* y = op(x) or op(x, y) for one element, as kernels/elementwise.cl computes it. */
static float apply_binary(const char* op, float x, float y) {
  if (!strcmp(op, "add")) return x + y;
  if (!strcmp(op, "subtract")) return x - y;
  if (!strcmp(op, "multiply")) return x * y;
  if (!strcmp(op, "divide")) return x / y;
  if (!strcmp(op, "maximum")) return fmaxf(x, y);
  if (!strcmp(op, "minimum")) return fminf(x, y);
  fprintf(stderr, "hgr_make_examples: no host version of binary op '%s'\n", op);
  exit(1);
}

static float apply_unary(const char* op, float x) {
  if (!strcmp(op, "__copy") || !strcmp(op, "__nop")) return x;
  if (!strcmp(op, "negative")) return -x;
  if (!strcmp(op, "relu")) return fmaxf(x, 0.0f);
  if (!strcmp(op, "exp")) return expf(x);
  if (!strcmp(op, "sigmoid")) return 1.0f / (1.0f + expf(-x));
  if (!strcmp(op, "tanh")) return tanhf(x);
  fprintf(stderr, "hgr_make_examples: no host version of unary op '%s'\n", op);
  exit(1);
}

static int add_input(graph_t* g, const char* name, int key, int storage_id, int ndim,
                     int64_t d0, int64_t d1) {
  example_node_t* n = &g->nodes[g->node_count];
  *n = (example_node_t){.func_name = NULL, .key = key, .storage_id = storage_id, .ndim = ndim,
                        .shape = {d0, d1}};
  snprintf(n->name, sizeof(n->name), "%s", name);
  n->values = random_values(&g->random_state, example_element_count(n));
  return g->node_count++;
}

/* An op node shaped like its first input (b, if any, has the same shape); b < 0: a
 * unary op. Its values are computed from its inputs' here. */
static int add_op(graph_t* g, const char* func_name, int a, int b, int key, int storage_id) {
  example_node_t* n = &g->nodes[g->node_count];
  *n = g->nodes[a];
  n->func_name = func_name;
  n->inputs[0] = a;
  n->inputs[1] = b;
  n->input_count = b < 0 ? 1 : 2;
  n->key = key;
  n->storage_id = storage_id;
  snprintf(n->name, sizeof(n->name), "%s_%d", func_name[0] == '_' ? func_name + 2 : func_name,
           g->node_count);
  int64_t count = example_element_count(n);
  const float* x = g->nodes[a].values;
  const float* y = b < 0 ? NULL : g->nodes[b].values;
  n->values = allocate_values(count);
  for (int64_t i = 0; i < count; ++i)
    n->values[i] = y ? apply_binary(func_name, x[i], y[i]) : apply_unary(func_name, x[i]);
  return g->node_count++;
}

static bool write_graph(const graph_t* g, const char* dir, const char* file) {
  char path[4096];
  snprintf(path, sizeof(path), "%s/%s", dir, file);
  return example_write_graph(g->nodes, g->node_count, g->heads, g->head_count, path);
}

/* Writes every input of g as <dir>/<example>_<name>.npy, except those that go into
 * params (when params is not NULL, names starting with "w_"). */
static bool write_inputs(const graph_t* g, const char* dir, const char* example,
                         hgr_params_t* params) {
  bool ok = true;
  for (int i = 0; i < g->node_count && ok; ++i) {
    const example_node_t* n = &g->nodes[i];
    if (n->func_name) continue;
    uint64_t bytes = (uint64_t)example_element_count(n) * sizeof(float);
    if (params && !strncmp(n->name, "w_", 2)) {
      ok = example_report(hgr_params_add(params, n->name, float32, n->ndim, n->shape, n->values, bytes));
    } else {
      char path[4096];
      snprintf(path, sizeof(path), "%s/%s_%s.npy", dir, example, n->name);
      ok = example_report(hgr_npy_save_file(path, float32, n->ndim, n->shape, n->values, bytes));
    }
  }
  return ok;
}

/* Writes the host-computed value of head i as <dir>/<example>_expected_<i>.npy. */
static bool write_expected(const graph_t* g, const char* dir, const char* example) {
  bool ok = true;
  for (int h = 0; h < g->head_count && ok; ++h) {
    const example_node_t* n = &g->nodes[g->heads[h]];
    char path[4096];
    snprintf(path, sizeof(path), "%s/%s_expected_%d.npy", dir, example, h);
    ok = example_report(hgr_npy_save_file(path, float32, n->ndim, n->shape, n->values,
                                  (uint64_t)example_element_count(n) * sizeof(float)));
  }
  return ok;
}

static void free_values(graph_t* g) {
  for (int i = 0; i < g->node_count; ++i) {
    free(g->nodes[i].values);
    g->nodes[i].values = NULL;
  }
}

/* Reference §1.5: storage ids [3,4,0,1,5,2], keys [4,4,4,1,1,1]. */
static void build_simplex(graph_t* g) {
  int a = add_input(g, "A", 4, 3, 2, 10, 5);
  int b = add_input(g, "B", 4, 4, 2, 10, 5);
  int sum = add_op(g, "add", a, b, 4, 0);
  int copy = add_op(g, "__copy", sum, -1, 1, 1);
  int c = add_input(g, "C", 1, 5, 2, 10, 5);
  g->heads[g->head_count++] = add_op(g, "subtract", copy, c, 1, 2);
}

/* Back and forth twice; the second add and copy reuse dead storages 2 and 3. */
static void build_duplex(graph_t* g) {
  int a = add_input(g, "A", 4, 0, 2, 10, 5);
  int b = add_input(g, "B", 4, 1, 2, 10, 5);
  int sum = add_op(g, "add", a, b, 4, 2);
  int to_host = add_op(g, "__copy", sum, -1, 1, 3);
  int c = add_input(g, "C", 1, 4, 2, 10, 5);
  int difference = add_op(g, "subtract", to_host, c, 1, 5);
  int to_device = add_op(g, "__copy", difference, -1, 4, 6);
  int d = add_input(g, "D", 4, 7, 2, 10, 5);
  int sum2 = add_op(g, "add", to_device, d, 4, 2);
  int to_host2 = add_op(g, "__copy", sum2, -1, 1, 3);
  int e = add_input(g, "E", 1, 8, 2, 10, 5);
  g->heads[g->head_count++] = add_op(g, "subtract", to_host2, e, 1, 9);
}

/* Storage ids of large.json: one per (chain, key, slot), handed out on first use. */
typedef struct slots_t {
  int ids[2][6][5];
  int next;
} slots_t;

static int slot(slots_t* s, int chain, int key, int index) {
  int* id = &s->ids[chain][key][index];
  if (*id < 0) *id = s->next++;
  return *id;
}

/* 40 stages; stage s runs on key 1, 4, 5, 1, ... for the first half and 5, 4, 1, ...
 * for the second, so copies go both ways between every pair of keys. A small chain
 * (32x32) visits every key: s' = tanh(s * w_key) - sigmoid(s). A big chain (512x520,
 * 1,064,960 bytes) visits keys 1 and 4 only: b' = tanh(b + x_big) on key 1 and
 * sigmoid(maximum(b * b, -b)) on key 4. Values stay within (-2, 1). The final values
 * get storage of their own. */
static int stage_key(int stage, int stages) {
  static const int keys[3] = {1, 4, 5};
  return stage < stages / 2 ? keys[stage % 3] : keys[2 - stage % 3];
}

static void build_large(graph_t* g) {
  const int stages = 40;
  int last_big_stage = stages - 1;
  while (stage_key(last_big_stage, stages) == 5) --last_big_stage;
  slots_t slots;
  memset(slots.ids, -1, sizeof(slots.ids));
  int small = add_input(g, "x_small", 4, 0, 2, 32, 32);
  int x_big = add_input(g, "x_big", 1, 1, 2, 512, 520), big = x_big;
  int weights[6];
  weights[1] = add_input(g, "w_small_1", 1, 2, 2, 32, 32);
  weights[4] = add_input(g, "w_small_4", 4, 3, 2, 32, 32);
  weights[5] = add_input(g, "w_small_5", 5, 4, 2, 32, 32);
  slots.next = 5;
  for (int s = 0; s < stages; ++s) {
    int key = stage_key(s, stages);
    bool last_small = s == stages - 1, last_big = s == last_big_stage;
    if (g->nodes[small].key != key)
      small = add_op(g, "__copy", small, -1, key, slot(&slots, 0, key, 0));
    int product = add_op(g, "multiply", small, weights[key], key, slot(&slots, 0, key, 1));
    int squashed = add_op(g, "tanh", product, -1, key, slot(&slots, 0, key, 2));
    int gate = add_op(g, "sigmoid", small, -1, key, slot(&slots, 0, key, 1));
    int small_storage = last_small ? slots.next++ : slot(&slots, 0, key, 0);
    small = add_op(g, "subtract", squashed, gate, key, small_storage);
    if (key == 5) continue;
    if (g->nodes[big].key != key) big = add_op(g, "__copy", big, -1, key, slot(&slots, 1, key, 0));
    int big_storage = last_big ? slots.next++ : slot(&slots, 1, key, 0);
    if (key == 1) {
      int shifted = add_op(g, "add", big, x_big, key, slot(&slots, 1, key, 1));
      big = add_op(g, "tanh", shifted, -1, key, big_storage);
    } else {
      int square = add_op(g, "multiply", big, big, key, slot(&slots, 1, key, 1));
      int negated = add_op(g, "negative", big, -1, key, slot(&slots, 1, key, 2));
      int larger = add_op(g, "maximum", square, negated, key, slot(&slots, 1, key, 3));
      big = add_op(g, "sigmoid", larger, -1, key, big_storage);
    }
    if (last_big) g->heads[g->head_count++] = big;
  }
  g->heads[g->head_count++] = small;
}

int main(int argc, char** argv) {
  if (argc != 2) {
    fprintf(stderr, "usage: %s DIR\n", argv[0]);
    return 2;
  }
  const char* dir = argv[1];
  static graph_t simplex, duplex, large;
  simplex.random_state = 1;
  duplex.random_state = 2;
  large.random_state = 3;
  build_simplex(&simplex);
  build_duplex(&duplex);
  build_large(&large);
  hgr_params_t* params = NULL;
  bool ok = write_graph(&simplex, dir, "simplex.json") &&
            write_inputs(&simplex, dir, "simplex", NULL) &&
            write_expected(&simplex, dir, "simplex") &&
            write_graph(&duplex, dir, "duplex.json") &&
            write_inputs(&duplex, dir, "duplex", NULL) &&
            write_expected(&duplex, dir, "duplex") &&
            write_graph(&large, dir, "large.json") && example_report(hgr_params_create(&params)) &&
            write_inputs(&large, dir, "large", params) && write_expected(&large, dir, "large");
  if (ok) {
    char path[4096];
    snprintf(path, sizeof(path), "%s/large.params", dir);
    ok = example_report(hgr_params_save_file(params, path));
  }
  hgr_params_release(params);
  free_values(&simplex);
  free_values(&duplex);
  free_values(&large);
  if (ok) printf("wrote simplex (%d nodes), duplex (%d nodes) and large (%d nodes) to %s\n",
                 simplex.node_count, duplex.node_count, large.node_count, dir);
  ok = ok && hgr_examples_write_models(dir);
  return ok ? 0 : 1;
}
