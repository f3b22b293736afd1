/* Random DAGs built with the builder (broadcast, reshape aliases, fan-out, several
 * outputs), placed under every policy and random rules over pocl:0, pocl:1,
 * rusticl:0 and oclgrind:0: every plan passes the verifier, and the outputs equal
 * the single-device outputs bit for bit. The ops are ones whose results IEEE 754
 * fixes exactly (add, subtract, multiply, maximum, minimum, relu, negative, abs), so
 * that any difference is the placement's. Prints planned / lower bound / no-reuse
 * bytes per device for every plan, and the worst planned / bound ratios (against
 * the byte bound, and against the storage bound, which must be within 1.10).
 *
 *   test_place_random [GRAPHS]   (default 10) */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "place_internal.h"
#include "testlib.h"

static const hgr_dtype_t F32 = {HGR_DTYPE_FLOAT, 32, 1};
static const char* const all_devices[] = {"pocl:0", "pocl:1", "rusticl:0", "oclgrind:0"};
#define DEVICE_COUNT 4
static hgr_instance_t* instance;
static unsigned graph_count = 10;
static double worst_ratio = 0;         /* planned / byte lower bound */
static double worst_storage_ratio = 0; /* planned / storage bound */
static char cache_dir[512];

typedef struct value_t {
  hgr_value_t value;
  int32_t ndim;
  int64_t shape[3];
} value_t;

#define MAX_VALUES 48

static uint64_t elements(const value_t* v) {
  uint64_t n = 1;
  for (int32_t d = 0; d < v->ndim; ++d) n *= (uint64_t)v->shape[d];
  return n;
}

/* A random graph: 2-3 inputs shaped [4, 8], [8] or [1, 8]; 8-16 ops; 1-3 outputs. */
static hgr_graph_t* random_graph(uint64_t seed, hgr_params_t** out_params) {
  hgr_test_rng_t rng;
  hgr_test_rng_seed(&rng, seed);
  hgr_builder_t* b = NULL;
  ASSERT_OK(hgr_builder_create(NULL, &b));
  value_t values[MAX_VALUES];
  uint32_t count = 0;
  static const int64_t shapes[3][2] = {{4, 8}, {8, 0}, {1, 8}};
  uint32_t inputs = 2 + hgr_test_rng_below(&rng, 2);
  for (uint32_t i = 0; i < inputs; ++i) {
    uint32_t s = i == 0 ? 0 : hgr_test_rng_below(&rng, 3);
    value_t* v = &values[count++];
    v->ndim = s == 1 ? 1 : 2;
    memcpy(v->shape, shapes[s], sizeof(shapes[s]));
    char name[16];
    snprintf(name, sizeof(name), "x%u", i);
    if (i == inputs - 1) { /* the last is a constant (a param) */
      float data[32];
      for (uint64_t e = 0; e < elements(v); ++e) data[e] = hgr_test_rng_float(&rng, -2, 2);
      ASSERT_OK(hgr_builder_add_constant(b, name, F32, v->shape, v->ndim, data,
                                         (size_t)elements(v) * 4, &v->value));
    } else {
      ASSERT_OK(hgr_builder_add_input(b, name, F32, v->shape, v->ndim, &v->value));
    }
  }
  static const char* const binary[] = {"add", "subtract", "multiply", "maximum", "minimum"};
  static const char* const unary[] = {"relu", "negative", "abs"};
  uint32_t ops = 8 + hgr_test_rng_below(&rng, 9);
  for (uint32_t o = 0; o < ops && count < MAX_VALUES; ++o) {
    char name[16];
    snprintf(name, sizeof(name), "n%u", o);
    /* Prefer recent values, so chains form, but reach back for fan-out. */
    const value_t* a = &values[count - 1 - hgr_test_rng_below(&rng, count < 4 ? count : 4)];
    value_t* out = &values[count];
    uint32_t kind = hgr_test_rng_below(&rng, 10);
    if (kind < 5) {
      /* A partner that broadcasts with a: same element count along the last axis. */
      const value_t* partner = NULL;
      for (uint32_t tries = 0; tries < 8 && !partner; ++tries) {
        const value_t* c = &values[hgr_test_rng_below(&rng, count)];
        bool fits = c->shape[c->ndim - 1] == a->shape[a->ndim - 1] && c->ndim <= 2 && a->ndim <= 2;
        if (fits) partner = c;
      }
      if (!partner) partner = a;
      hgr_value_t in[2] = {a->value, partner->value};
      ASSERT_OK(hgr_builder_add_op(b, name, binary[hgr_test_rng_below(&rng, 5)], in, 2, NULL, 1, &out->value));
      const value_t* big = a->ndim >= partner->ndim && elements(a) >= elements(partner) ? a : partner;
      out->ndim = big->ndim;
      memcpy(out->shape, big->shape, sizeof(out->shape));
      if (a->ndim == partner->ndim)
        for (int32_t d = 0; d < out->ndim; ++d)
          out->shape[d] = a->shape[d] > partner->shape[d] ? a->shape[d] : partner->shape[d];
    } else if (kind < 8) {
      ASSERT_OK(hgr_builder_add_op(b, name, unary[hgr_test_rng_below(&rng, 3)], &a->value, 1, NULL, 1, &out->value));
      *out = (value_t){out->value, a->ndim, {a->shape[0], a->shape[1], a->shape[2]}};
    } else {
      /* A reshape alias that keeps the last axis (so it still broadcasts with [8]). */
      hgr_attrs_t* attrs = NULL;
      ASSERT_OK(hgr_attrs_create(&attrs));
      int64_t rows = (int64_t)(elements(a) / 8);
      int64_t newshape[3] = {rows, 1, 8};
      int32_t ndim = rows > 1 && hgr_test_rng_below(&rng, 2) ? 2 : 3;
      if (ndim == 2) newshape[1] = 8;
      ASSERT_OK(hgr_attrs_set_ints(attrs, "newshape", newshape, (size_t)ndim));
      ASSERT_OK(hgr_builder_add_op(b, name, "reshape", &a->value, 1, attrs, 1, &out->value));
      hgr_attrs_release(attrs);
      out->ndim = ndim;
      memcpy(out->shape, newshape, sizeof(newshape));
      if (ndim == 3) { /* [rows, 1, 8] broadcasts poorly with 2-D values: reshape back */
        int64_t flat[2] = {rows, 8};
        hgr_attrs_t* back = NULL;
        ASSERT_OK(hgr_attrs_create(&back));
        ASSERT_OK(hgr_attrs_set_ints(back, "newshape", flat, 2));
        snprintf(name, sizeof(name), "n%ub", o);
        hgr_value_t three = out->value;
        ASSERT_OK(hgr_builder_add_op(b, name, "reshape", &three, 1, back, 1, &out->value));
        hgr_attrs_release(back);
        out->ndim = 2;
        out->shape[0] = rows;
        out->shape[1] = 8;
      }
    }
    count++;
  }
  uint32_t outputs = 1 + hgr_test_rng_below(&rng, 3);
  ASSERT_OK(hgr_builder_mark_output(b, values[count - 1].value));
  for (uint32_t o = 1; o < outputs; ++o)
    ASSERT_OK(hgr_builder_mark_output(b, values[inputs + hgr_test_rng_below(&rng, count - inputs)].value));
  hgr_graph_t* graph = NULL;
  ASSERT_OK(hgr_builder_finish(b, &graph, out_params));
  hgr_builder_release(b);
  return graph;
}

typedef struct outputs_t {
  size_t count;
  void* data[8];
  size_t bytes[8];
} outputs_t;

static void outputs_free(outputs_t* o) {
  for (size_t i = 0; i < o->count; ++i) free(o->data[i]);
  memset(o, 0, sizeof(*o));
}

/* Places graph with options, verifies the plan, runs it and reads every output. */
static void place_and_run(hgr_graph_t* graph, const hgr_params_t* params, hgr_place_options_t* options,
                          const char* what, outputs_t* out) {
  options->cost_cache_directory = cache_dir;
  hgr_placement_t* placement = NULL;
  ASSERT_OK(hgr_place(instance, graph, options, &placement));
  hgr_graph_t* placed = hgr_placement_graph(placement);
  ASSERT_OK(hgr__place_verify(placed, NULL));
  printf("  %-34s", what);
  for (size_t d = 0; d < hgr_placement_device_count(placement); ++d) {
    hgr_placement_device_t device;
    ASSERT_OK(hgr_placement_device(placement, d, &device));
    double ratio = device.lower_bound_bytes ? (double)device.planned_bytes / (double)device.lower_bound_bytes : 1.0;
    double storage_ratio =
        device.storage_bound_bytes ? (double)device.planned_bytes / (double)device.storage_bound_bytes : 1.0;
    if (ratio > worst_ratio) worst_ratio = ratio;
    if (storage_ratio > worst_storage_ratio) worst_storage_ratio = storage_ratio;
    printf(" %s %u nodes %llu/%llu/%llu B%s;", hgr_instance_device(instance, device.device_index)->spec,
           device.node_count, (unsigned long long)device.planned_bytes,
           (unsigned long long)device.lower_bound_bytes, (unsigned long long)device.no_reuse_bytes,
           ratio > 1.10 ? " (TARGET 1.10 MISSED)" : "");
  }
  printf("\n");
  hgr_executor_options_t executor_options;
  hgr_executor_options_init(&executor_options);
  executor_options.params = params;
  hgr_executor_t* executor = NULL;
  ASSERT_OK(hgr_executor_create(instance, placed, &executor_options, &executor));
  hgr_test_rng_t rng;
  hgr_test_rng_seed(&rng, 7);
  for (size_t i = 0; i < hgr_executor_input_count(executor); ++i) {
    hgr_tensor_info_t info;
    ASSERT_OK(hgr_executor_input_info(executor, i, &info));
    size_t param;
    hgr_status_t lookup = hgr_params_find(params, info.name, &param);
    if (!lookup) continue; /* a constant */
    hgr_status_free(lookup);
    float data[64];
    for (size_t e = 0; e < info.bytes / 4; ++e) data[e] = hgr_test_rng_float(&rng, -3, 3);
    ASSERT_OK(hgr_executor_set_input(executor, i, data, (size_t)info.bytes));
  }
  ASSERT_OK(hgr_executor_run(executor));
  ASSERT_OK(hgr_executor_wait(executor));
  out->count = hgr_executor_output_count(executor);
  assert_true(out->count <= 8);
  for (size_t o = 0; o < out->count; ++o) {
    hgr_tensor_info_t info;
    ASSERT_OK(hgr_executor_output_info(executor, o, &info));
    out->bytes[o] = (size_t)info.bytes;
    out->data[o] = malloc(out->bytes[o] + 1);
    assert_non_null(out->data[o]);
    ASSERT_OK(hgr_executor_get_output(executor, o, out->data[o], out->bytes[o]));
  }
  hgr_executor_release(executor);
  hgr_placement_release(placement);
}

static void assert_same(const outputs_t* want, const outputs_t* got, const char* what) {
  assert_int_equal(want->count, got->count);
  for (size_t o = 0; o < want->count; ++o) {
    assert_int_equal(want->bytes[o], got->bytes[o]);
    if (memcmp(want->data[o], got->data[o], want->bytes[o]) != 0) {
      print_error("%s: output %zu differs from the single-device run\n", what, o);
      fail();
    }
  }
}

static void add_random_rules(hgr_place_options_t* options, hgr_test_rng_t* rng, size_t node_count) {
  uint32_t rules = 1 + hgr_test_rng_below(rng, 3);
  static const char* const ops[] = {"add", "multiply", "relu", "reshape", "maximum"};
  for (uint32_t r = 0; r < rules; ++r) {
    char text[160];
    const char* spec = all_devices[hgr_test_rng_below(rng, DEVICE_COUNT)];
    uint32_t kind = hgr_test_rng_below(rng, 3);
    if (kind == 0) {
      snprintf(text, sizeof(text), "op:%s=%s", ops[hgr_test_rng_below(rng, 5)], spec);
    } else if (kind == 1) {
      snprintf(text, sizeof(text), "node:n%u*=%s", hgr_test_rng_below(rng, 10), spec);
    } else {
      uint32_t a = hgr_test_rng_below(rng, (uint32_t)node_count);
      uint32_t z = a + hgr_test_rng_below(rng, (uint32_t)(node_count - a));
      snprintf(text, sizeof(text), "range:%u-%u=%s", a, z, spec);
    }
    ASSERT_OK(hgr_place_options_parse(options, text));
  }
}

static void test_random_graphs(void** state) {
  (void)state;
  for (unsigned g = 0; g < graph_count; ++g) {
    hgr_params_t* params = NULL;
    hgr_graph_t* graph = random_graph(1000 + g, &params);
    printf("graph %u: %zu nodes\n", g, hgr_graph_node_count(graph));
    hgr_place_options_t options;
    hgr_place_options_init(&options);
    const char* single[] = {"pocl:0"};
    options.devices = single;
    options.device_count = 1;
    outputs_t want = {0}, got = {0};
    place_and_run(graph, params, &options, "single pocl:0", &want);

    hgr_test_rng_t rng;
    hgr_test_rng_seed(&rng, 2000 + g);
    /* FIRST over every order of the devices' first two places, with random rules. */
    for (int variant = 0; variant < 4; ++variant) {
      hgr_place_options_init(&options);
      const char* order[DEVICE_COUNT];
      for (size_t d = 0; d < DEVICE_COUNT; ++d) order[d] = all_devices[(d + (size_t)variant) % DEVICE_COUNT];
      options.devices = order;
      options.device_count = DEVICE_COUNT;
      add_random_rules(&options, &rng, hgr_graph_node_count(graph));
      char what[64];
      snprintf(what, sizeof(what), "first from %s + rules", order[0]);
      place_and_run(graph, params, &options, what, &got);
      assert_same(&want, &got, what);
      outputs_free(&got);
    }
    /* STAGES: 2, 3 and 4 stages. */
    for (uint32_t stages = 2; stages <= DEVICE_COUNT; ++stages) {
      hgr_place_options_init(&options);
      options.devices = all_devices;
      options.device_count = DEVICE_COUNT;
      char text[32], what[64];
      snprintf(text, sizeof(text), "stages:%u", stages);
      ASSERT_OK(hgr_place_options_parse(&options, text));
      snprintf(what, sizeof(what), "stages:%u", stages);
      place_and_run(graph, params, &options, what, &got);
      assert_same(&want, &got, what);
      outputs_free(&got);
    }
    /* AUTO, with and without a rule. */
    for (int with_rule = 0; with_rule < 2; ++with_rule) {
      hgr_place_options_init(&options);
      options.devices = all_devices;
      options.device_count = DEVICE_COUNT;
      ASSERT_OK(hgr_place_options_parse(&options, "auto"));
      if (with_rule) ASSERT_OK(hgr_place_options_parse(&options, "node:n1=oclgrind:0"));
      const char* what = with_rule ? "auto + node:n1=oclgrind:0" : "auto";
      place_and_run(graph, params, &options, what, &got);
      assert_same(&want, &got, what);
      outputs_free(&got);
    }
    outputs_free(&want);
    hgr_params_release(params);
    hgr_graph_release(graph);
  }
  /* The byte bound lets values of different sizes share bytes, which TVM's format
   * (one buffer per storage id, used from offset 0) cannot: where a plan misses
   * 1.10 x that bound, it must still be within 1.10 x what any plan in the format
   * needs (the storage bound, docs/placement.md). */
  printf("worst planned / lower bound over every plan and device: %.3f (target <= 1.10%s)\n", worst_ratio,
         worst_ratio > 1.10 ? ", MISSED" : "");
  printf("worst planned / storage bound: %.3f\n", worst_storage_ratio);
  assert_true(worst_storage_ratio <= 1.10);
}

int main(int argc, char** argv) {
  if (argc > 1) graph_count = (unsigned)strtoul(argv[1], NULL, 10);
  instance = hgr_test_instance_or_exit();
  hgr_test_require_devices(instance, all_devices, DEVICE_COUNT);
  snprintf(cache_dir, sizeof(cache_dir), "%s", hgr_test_tmp_path("place-random-cache"));
  const struct CMUnitTest tests[] = {cmocka_unit_test(test_random_graphs)};
  int failed = cmocka_run_group_tests(tests, NULL, NULL);
  hgr_instance_release(instance);
  return failed;
}
