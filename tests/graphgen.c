#include "graphgen.h"

#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "testlib.h"

/* Every generated node has one output, so node id = entry id. */
typedef struct gen_node_t {
  const char* op;       /* NULL for an input */
  uint32_t inputs[2];
  uint32_t input_count;
  uint32_t key_index;   /* into the device keys */
  uint32_t size_index;  /* into the sizes */
  uint32_t alias_root;  /* the node whose storage a __nop chain shares; itself otherwise */
  uint32_t last_use;    /* last node reading it (itself when none) */
  bool pinned;          /* an input or a head, or aliased by one: storage never reused */
  uint32_t storage_id;
} gen_node_t;

typedef struct generator_t {
  hgr_test_rng_t rng;
  const hgr_test_graph_options_t* options;
  uint32_t key_count;
  gen_node_t* nodes;
  uint32_t node_count;
  bool* copied; /* [from * key_count + to]: a copy between that ordered pair exists */
} generator_t;

static const char* const binary_ops[] = {"add", "subtract", "multiply", "divide", "maximum",
                                         "minimum"};
static const char* const unary_ops[] = {"negative", "relu", "exp", "sigmoid", "tanh"};

static gen_node_t* add_node(generator_t* g, const char* op, uint32_t key_index,
                            uint32_t size_index) {
  gen_node_t* node = &g->nodes[g->node_count];
  *node = (gen_node_t){.op = op, .key_index = key_index, .size_index = size_index,
                       .alias_root = g->node_count, .last_use = g->node_count};
  g->node_count++;
  return node;
}

static void add_input(generator_t* g, gen_node_t* node, uint32_t input) {
  node->inputs[node->input_count++] = input;
  g->nodes[input].last_use = g->node_count - 1;
}

/* A random existing node on key_index (of size_index unless that is UINT32_MAX),
 * biased towards recent ones so that chains grow deep; UINT32_MAX when none. */
static uint32_t pick(generator_t* g, uint32_t key_index, uint32_t size_index) {
  uint32_t found = 0, chosen = UINT32_MAX;
  uint32_t recent = hgr_test_rng_below(&g->rng, 2) ? 4 : UINT32_MAX;
  for (uint32_t n = g->node_count; n-- > 0;) {
    const gen_node_t* node = &g->nodes[n];
    if (node->key_index != key_index) continue;
    if (size_index != UINT32_MAX && node->size_index != size_index) continue;
    if (hgr_test_rng_below(&g->rng, ++found) == 0) chosen = n; /* reservoir sampling */
    if (found == recent) break;
  }
  return chosen;
}

static void add_copy(generator_t* g, bool force_uncovered) {
  uint32_t k = g->key_count, from, to;
  do {
    from = hgr_test_rng_below(&g->rng, k);
    to = hgr_test_rng_below(&g->rng, k);
  } while (from == to || (force_uncovered && g->copied[from * k + to]));
  g->copied[from * k + to] = true;
  uint32_t source = pick(g, from, UINT32_MAX);
  gen_node_t* node = add_node(g, "__copy", to, g->nodes[source].size_index);
  add_input(g, node, source);
}

static void add_op(generator_t* g, uint32_t choice) {
  uint32_t key_index = hgr_test_rng_below(&g->rng, g->key_count);
  uint32_t a = pick(g, key_index, UINT32_MAX);
  if (choice < 10) { /* __nop: same key, same shape, same storage */
    gen_node_t* node = add_node(g, "__nop", key_index, g->nodes[a].size_index);
    node->alias_root = g->nodes[a].alias_root;
    add_input(g, node, a);
  } else if (choice < 55) {
    uint32_t b = pick(g, key_index, g->nodes[a].size_index);
    const char* op = binary_ops[hgr_test_rng_below(&g->rng, 6)];
    gen_node_t* node = add_node(g, op, key_index, g->nodes[a].size_index);
    add_input(g, node, a);
    add_input(g, node, b);
  } else {
    const char* op = unary_ops[hgr_test_rng_below(&g->rng, 5)];
    gen_node_t* node = add_node(g, op, key_index, g->nodes[a].size_index);
    add_input(g, node, a);
  }
}

static void choose_heads(generator_t* g, uint32_t* heads, uint32_t* head_count) {
  heads[0] = g->node_count - 1;
  *head_count = 1;
  uint32_t wanted = 1 + hgr_test_rng_below(&g->rng, 3);
  for (uint32_t tries = 0; *head_count < wanted && tries < 16; ++tries) {
    uint32_t candidate = hgr_test_rng_below(&g->rng, g->node_count);
    bool seen = false;
    for (uint32_t h = 0; h < *head_count; ++h) seen |= heads[h] == candidate;
    if (!seen && (g->nodes[candidate].op || hgr_test_rng_below(&g->rng, 4) == 0))
      heads[(*head_count)++] = candidate;
  }
}

/* TVM-like planning over alias groups (a node and the __nop chain on it): a group
 * lives from its root to its last reader; a dead unpinned group's storage goes back
 * to its key's free list after the node that last reads it. */
static void plan_storage(generator_t* g, const uint32_t* heads, uint32_t head_count) {
  for (uint32_t h = 0; h < head_count; ++h) g->nodes[heads[h]].pinned = true;
  for (uint32_t n = 0; n < g->node_count; ++n) {
    gen_node_t* root = &g->nodes[g->nodes[n].alias_root];
    if (!g->nodes[n].op || g->nodes[n].pinned) root->pinned = true;
    if (g->nodes[n].last_use > root->last_use) root->last_use = g->nodes[n].last_use;
  }
  uint32_t* free_ids = malloc(g->node_count * sizeof(uint32_t));
  uint32_t* free_keys = malloc(g->node_count * sizeof(uint32_t));
  uint32_t free_count = 0, storage_count = 0;
  for (uint32_t n = 0; n < g->node_count; ++n) {
    gen_node_t* node = &g->nodes[n];
    if (node->alias_root != n) {
      node->storage_id = g->nodes[node->alias_root].storage_id;
    } else {
      node->storage_id = storage_count;
      uint32_t found = 0, slot = UINT32_MAX;
      for (uint32_t f = 0; !node->pinned && f < free_count; ++f)
        if (free_keys[f] == node->key_index && hgr_test_rng_below(&g->rng, ++found) == 0) slot = f;
      if (slot != UINT32_MAX) {
        node->storage_id = free_ids[slot];
        free_ids[slot] = free_ids[--free_count];
        free_keys[slot] = free_keys[free_count];
      } else {
        storage_count++;
      }
    }
    for (uint32_t r = 0; r <= n; ++r) { /* release groups whose last reader is n */
      const gen_node_t* group = &g->nodes[r];
      if (group->alias_root == r && group->last_use == n && !group->pinned) {
        free_ids[free_count] = group->storage_id;
        free_keys[free_count++] = group->key_index;
      }
    }
  }
  free(free_ids);
  free(free_keys);
}

typedef struct text_t {
  char* data;
  size_t length, capacity;
  bool failed;
} text_t;

static void appendf(text_t* text, const char* format, ...) HGR_PRINTF(2, 3);
static void appendf(text_t* text, const char* format, ...) {
  for (int attempt = 0; attempt < 2 && !text->failed; ++attempt) {
    va_list args;
    va_start(args, format);
    int n = vsnprintf(text->data + text->length, text->capacity - text->length, format, args);
    va_end(args);
    if (n < 0) break;
    if ((size_t)n < text->capacity - text->length) {
      text->length += (size_t)n;
      return;
    }
    size_t capacity = 2 * text->capacity + (size_t)n + 1;
    char* grown = realloc(text->data, capacity);
    if (!grown) break;
    text->data = grown;
    text->capacity = capacity;
  }
  text->failed = true;
}

static void append_shape(text_t* text, uint64_t size) {
  if (size == 1) appendf(text, "[]");
  else if (size % 8 == 0 && size >= 64) appendf(text, "[8,%llu]", (unsigned long long)(size / 8));
  else appendf(text, "[%llu]", (unsigned long long)size);
}

static char* write_json(const generator_t* g, const uint32_t* heads, uint32_t head_count) {
  const hgr_test_graph_options_t* o = g->options;
  text_t text = {.data = malloc(4096), .capacity = 4096};
  if (!text.data) return NULL;
  text.data[0] = 0;
  appendf(&text, "{\"nodes\":[");
  for (uint32_t n = 0; n < g->node_count; ++n) {
    const gen_node_t* node = &g->nodes[n];
    if (!node->op) {
      appendf(&text, "%s\n{\"op\":\"null\",\"name\":\"x%u\",\"inputs\":[]}", n ? "," : "", n);
      continue;
    }
    appendf(&text, ",\n{\"op\":\"tvm_op\",\"name\":\"n%u_%s\",\"attrs\":{\"func_name\":\"%s\","
            "\"num_inputs\":\"%u\",\"num_outputs\":\"1\",\"flatten_data\":\"0\"},\"inputs\":[",
            n, node->op[0] == '_' ? node->op + 2 : node->op, node->op, node->input_count);
    for (uint32_t i = 0; i < node->input_count; ++i)
      appendf(&text, "%s[%u,0,0]", i ? "," : "", node->inputs[i]);
    appendf(&text, "]}");
  }
  appendf(&text, "],\n\"arg_nodes\":[");
  for (uint32_t n = 0, first = 1; n < g->node_count; ++n)
    if (!g->nodes[n].op) appendf(&text, "%s%u", first ? (first = 0, "") : ",", n);
  appendf(&text, "],\n\"node_row_ptr\":[");
  for (uint32_t n = 0; n <= g->node_count; ++n) appendf(&text, "%s%u", n ? "," : "", n);
  appendf(&text, "],\n\"heads\":[");
  for (uint32_t h = 0; h < head_count; ++h) appendf(&text, "%s[%u,0,0]", h ? "," : "", heads[h]);
  appendf(&text, "],\n\"attrs\":{\"dltype\":[\"list_str\",[");
  for (uint32_t n = 0; n < g->node_count; ++n) appendf(&text, "%s\"float32\"", n ? "," : "");
  appendf(&text, "]],\n\"storage_id\":[\"list_int\",[");
  for (uint32_t n = 0; n < g->node_count; ++n)
    appendf(&text, "%s%u", n ? "," : "", g->nodes[n].storage_id);
  appendf(&text, "]],\n\"shape\":[\"list_shape\",[");
  for (uint32_t n = 0; n < g->node_count; ++n) {
    appendf(&text, "%s", n ? "," : "");
    append_shape(&text, o->sizes[g->nodes[n].size_index]);
  }
  appendf(&text, "]]");
  if (o->device_key_count) {
    appendf(&text, ",\n\"device_index\":[\"list_int\",[");
    for (uint32_t n = 0; n < g->node_count; ++n)
      appendf(&text, "%s%d", n ? "," : "", (int)o->device_keys[g->nodes[n].key_index]);
    appendf(&text, "]]");
  }
  appendf(&text, "}}\n");
  if (text.failed) {
    free(text.data);
    return NULL;
  }
  return text.data;
}

char* hgr_test_graph_generate(const hgr_test_graph_options_t* options) {
  if (!options->op_count || !options->size_count) return NULL;
  generator_t g = {.options = options};
  g.key_count = options->device_key_count ? (uint32_t)options->device_key_count : 1;
  hgr_test_rng_seed(&g.rng, options->seed * 0x9E3779B97F4A7C15ull + 1);
  uint32_t k = g.key_count;
  uint32_t input_count = (k > options->size_count ? k : (uint32_t)options->size_count) +
                         hgr_test_rng_below(&g.rng, 2);
  if (input_count > 6) input_count = 6;
  if (input_count < k) input_count = k;
  if (input_count < 2) input_count = 2;
  g.nodes = calloc(input_count + options->op_count, sizeof(gen_node_t));
  g.copied = calloc(k * k, sizeof(bool));
  uint32_t* heads = calloc(3, sizeof(uint32_t));
  char* json = NULL;
  if (!g.nodes || !g.copied || !heads) goto cleanup;
  /* Every key gets an input; every size appears; one input may come mid-graph. */
  uint32_t size_count = (uint32_t)options->size_count;
  uint32_t late_input = input_count > k ? input_count - 1 : UINT32_MAX;
  for (uint32_t i = 0; i < input_count && i != late_input; ++i)
    add_node(&g, NULL, i % k, i < size_count ? i : hgr_test_rng_below(&g.rng, size_count));
  for (uint32_t emitted = 0; emitted < options->op_count; ++emitted) {
    uint32_t uncovered = 0;
    for (uint32_t p = 0; p < k * k; ++p) uncovered += p / k != p % k && !g.copied[p];
    if (emitted == options->op_count / 2 && late_input != UINT32_MAX)
      add_node(&g, NULL, hgr_test_rng_below(&g.rng, k),
               late_input < size_count ? late_input : hgr_test_rng_below(&g.rng, size_count));
    bool must_copy = options->op_count - emitted <= uncovered;
    uint32_t choice = hgr_test_rng_below(&g.rng, 100);
    if (k > 1 && (must_copy || choice < 15)) add_copy(&g, must_copy || (uncovered && choice < 5));
    else add_op(&g, hgr_test_rng_below(&g.rng, 100));
  }
  uint32_t head_count;
  choose_heads(&g, heads, &head_count);
  plan_storage(&g, heads, head_count);
  json = write_json(&g, heads, head_count);
cleanup:
  free(g.nodes);
  free(g.copied);
  free(heads);
  return json;
}
