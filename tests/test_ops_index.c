/* The index-tensor ops (onnx_gather_nd, onnx_scatter_nd, scatter_elements) against
 * plain-C references (tests/ref_index.c) on random float32, int32 and bool data
 * (argument: a device spec).
 *
 * Tolerance: none. The moves are compared exactly; the reductions too, since the
 * kernels apply the updates of one element in the reference's order, each a single
 * IEEE float32 operation (add, mul, max, min) or int32 arithmetic that wraps.
 * Indices are drawn from [-dim, dim) (negative ones count from the end) and, in
 * the "wide" cases, from [-2 dim, 2 dim): gather_nd clamps what stays outside, the
 * scatters drop its update. Tuples of a scatter_nd without reduction are distinct,
 * as ONNX requires; the reductions get duplicates. Oclgrind simulates every
 * work-item: its shapes stay small. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "optest.h"
#include "ref_index.h"

static bool simulated(void) { return hgr_optest_is_simulator(hgr_optest_device); }

static void check(hgr_optest_t* t) {
  hgr_optest_check(hgr_optest_instance, hgr_optest_device, t);
  hgr_optest_free(t);
}

static bool is_float(const char* dtype) { return !strcmp(dtype, "float32"); }

static void fill_data(hgr_optest_tensor_t* tensor, hgr_test_rng_t* rng, int reduction) {
  /* products of many values stay finite and above float32's subnormals */
  if (reduction == REF_REDUCE_MUL) hgr_optest_fill(tensor, rng, is_float(tensor->dtype) ? 0.5f : -3, 2);
  else hgr_optest_fill(tensor, rng, -1000, 1000);
}

static int64_t count_of(const int64_t* shape, int32_t ndim) {
  int64_t n = 1;
  for (int32_t d = 0; d < ndim; ++d) n *= shape[d];
  return n;
}

/* Index c of tuple t: random in [-dim, dim), or [-2 dim, 2 dim) when wide. */
static int32_t random_index(hgr_test_rng_t* rng, int64_t dim, bool wide) {
  int64_t span = wide ? 4 * dim : 2 * dim;
  return (int32_t)((int64_t)hgr_test_rng_below(rng, (uint32_t)span) - span / 2);
}

/* ---- onnx_gather_nd ---------------------------------------------------------------- */

static void check_gather_nd(hgr_test_rng_t* rng, const char* dtype, int32_t ndim, const int64_t* shape,
                            int32_t index_ndim, const int64_t* index_shape, int32_t batch_dims, bool wide) {
  char attrs[64];
  snprintf(attrs, sizeof(attrs), "\"batch_dims\": \"%d\"", batch_dims);
  hgr_optest_t t;
  hgr_optest_init(&t, "onnx_gather_nd", attrs);
  void* data = hgr_optest_input(&t, dtype, ndim, shape);
  int32_t* indices = hgr_optest_input(&t, "int32", index_ndim, index_shape);
  fill_data(&t.inputs[0], rng, REF_REDUCE_NONE);
  int64_t k = index_shape[index_ndim - 1];
  int64_t index_count = count_of(index_shape, index_ndim);
  for (int64_t i = 0; i < index_count; ++i) indices[i] = random_index(rng, shape[batch_dims + i % k], wide);
  int64_t out_shape[8];
  int32_t out_ndim = 0;
  for (int32_t d = 0; d < index_ndim - 1; ++d) out_shape[out_ndim++] = index_shape[d];
  for (int32_t d = batch_dims + (int32_t)k; d < ndim; ++d) out_shape[out_ndim++] = shape[d];
  void* out = hgr_optest_output(&t, dtype, out_ndim, out_shape);
  ref_gather_nd(data, shape, ndim, indices, index_shape, index_ndim, batch_dims, hgr_optest_element_bytes(dtype), out);
  check(&t);
}

static void gather_nd_matches_reference(void** state) {
  (void)state;
  hgr_test_rng_t rng;
  hgr_test_rng_seed(&rng, 37);
  static const char* const dtypes[] = {"float32", "int32", "bool"};
  for (int wide = 0; wide < 2; ++wide)
    for (int d = 0; d < 3; ++d) {
      const char* dtype = dtypes[d];
      /* ONNX's examples' shapes: whole elements, rows, batch dims */
      check_gather_nd(&rng, dtype, 2, (int64_t[]){2, 2}, 2, (int64_t[]){2, 2}, 0, wide);
      check_gather_nd(&rng, dtype, 2, (int64_t[]){2, 2}, 2, (int64_t[]){2, 1}, 0, wide);
      check_gather_nd(&rng, dtype, 3, (int64_t[]){2, 2, 2}, 2, (int64_t[]){2, 1}, 1, wide);
      check_gather_nd(&rng, dtype, 3, (int64_t[]){3, 4, 5}, 3, (int64_t[]){2, 3, 2}, 0, wide);
      check_gather_nd(&rng, dtype, 4, (int64_t[]){2, 3, 4, 5}, 3, (int64_t[]){2, 3, 2}, 2, wide);
      check_gather_nd(&rng, dtype, 4, (int64_t[]){2, 3, 4, 5}, 4, (int64_t[]){2, 3, 7, 1}, 2, wide);
      check_gather_nd(&rng, dtype, 1, (int64_t[]){6}, 1, (int64_t[]){1}, 0, wide);
      check_gather_nd(&rng, dtype, 3, (int64_t[]){3, 4, 5}, 2, (int64_t[]){0, 2}, 0, wide);
    }
  if (!simulated()) { /* an embedding-table lookup of BERT's size, and many tuples */
    check_gather_nd(&rng, "float32", 2, (int64_t[]){30522, 64}, 3, (int64_t[]){4, 128, 1}, 0, false);
    check_gather_nd(&rng, "int32", 3, (int64_t[]){8, 200, 300}, 3, (int64_t[]){8, 5000, 2}, 1, true);
  }
}

/* ---- onnx_scatter_nd --------------------------------------------------------------- */

static const char* const reduction_names[] = {"none", "add", "mul", "max", "min"};

static void check_scatter_nd(hgr_test_rng_t* rng, const char* dtype, int32_t ndim, const int64_t* shape,
                             int32_t index_ndim, const int64_t* index_shape, int reduction, bool wide) {
  char attrs[64];
  snprintf(attrs, sizeof(attrs), "\"reduction\": \"%s\"", reduction_names[reduction]);
  hgr_optest_t t;
  hgr_optest_init(&t, "onnx_scatter_nd", attrs);
  void* data = hgr_optest_input(&t, dtype, ndim, shape);
  int32_t* indices = hgr_optest_input(&t, "int32", index_ndim, index_shape);
  int64_t k = index_shape[index_ndim - 1];
  int64_t update_shape[8];
  int32_t update_ndim = 0;
  for (int32_t d = 0; d < index_ndim - 1; ++d) update_shape[update_ndim++] = index_shape[d];
  for (int32_t d = (int32_t)k; d < ndim; ++d) update_shape[update_ndim++] = shape[d];
  void* updates = hgr_optest_input(&t, dtype, update_ndim, update_shape);
  fill_data(&t.inputs[0], rng, reduction);
  fill_data(&t.inputs[2], rng, reduction);
  int64_t tuples = count_of(index_shape, index_ndim - 1);
  if (reduction == REF_REDUCE_NONE) {
    /* distinct tuples: a random sample of the positions the k dims span (the
     * caller keeps tuples at most that many), each written as negative or not */
    int64_t positions = count_of(shape, (int32_t)k);
    int64_t* order = malloc(sizeof(int64_t) * (size_t)(positions ? positions : 1));
    for (int64_t p = 0; p < positions; ++p) order[p] = p;
    for (int64_t p = positions - 1; p > 0; --p) {
      int64_t q = hgr_test_rng_below(rng, (uint32_t)(p + 1)), swap = order[p];
      order[p] = order[q];
      order[q] = swap;
    }
    for (int64_t n = 0; n < tuples; ++n)
      for (int64_t c = k - 1, rest = order[n]; c >= 0; --c) {
        int64_t v = rest % shape[c];
        rest /= shape[c];
        indices[n * k + c] = (int32_t)(hgr_test_rng_below(rng, 2) ? v - shape[c] : v);
      }
    free(order);
  } else {
    for (int64_t i = 0; i < tuples * k; ++i) indices[i] = random_index(rng, shape[i % k], wide);
  }
  void* out = hgr_optest_output(&t, dtype, ndim, shape);
  ref_scatter_nd(data, shape, ndim, indices, index_shape, index_ndim, updates, reduction, is_float(dtype),
                 hgr_optest_element_bytes(dtype), out);
  check(&t);
}

static void scatter_nd_matches_reference(void** state) {
  (void)state;
  hgr_test_rng_t rng;
  hgr_test_rng_seed(&rng, 38);
  static const char* const dtypes[] = {"float32", "int32", "bool"};
  for (int d = 0; d < 3; ++d) { /* without reduction: distinct tuples */
    check_scatter_nd(&rng, dtypes[d], 1, (int64_t[]){8}, 2, (int64_t[]){4, 1}, REF_REDUCE_NONE, false);
    check_scatter_nd(&rng, dtypes[d], 3, (int64_t[]){4, 4, 4}, 2, (int64_t[]){2, 1}, REF_REDUCE_NONE, false);
    check_scatter_nd(&rng, dtypes[d], 3, (int64_t[]){4, 5, 6}, 3, (int64_t[]){3, 2, 2}, REF_REDUCE_NONE, false);
    check_scatter_nd(&rng, dtypes[d], 3, (int64_t[]){4, 5, 6}, 2, (int64_t[]){7, 3}, REF_REDUCE_NONE, false);
    check_scatter_nd(&rng, dtypes[d], 2, (int64_t[]){4, 5}, 2, (int64_t[]){0, 2}, REF_REDUCE_NONE, false);
  }
  for (int wide = 0; wide < 2; ++wide) /* reductions, with duplicates and (wide) dropped updates */
    for (int r = REF_REDUCE_ADD; r <= REF_REDUCE_MIN; ++r)
      for (int d = 0; d < 2; ++d) {
        check_scatter_nd(&rng, dtypes[d], 1, (int64_t[]){5}, 2, (int64_t[]){12, 1}, r, wide);
        check_scatter_nd(&rng, dtypes[d], 3, (int64_t[]){4, 4, 4}, 2, (int64_t[]){6, 1}, r, wide);
        check_scatter_nd(&rng, dtypes[d], 3, (int64_t[]){3, 4, 5}, 3, (int64_t[]){2, 9, 2}, r, wide);
        check_scatter_nd(&rng, dtypes[d], 2, (int64_t[]){3, 4}, 2, (int64_t[]){20, 2}, r, wide);
      }
  if (!simulated()) {
    check_scatter_nd(&rng, "float32", 3, (int64_t[]){64, 32, 100}, 2, (int64_t[]){1500, 2}, REF_REDUCE_NONE, false);
    check_scatter_nd(&rng, "float32", 3, (int64_t[]){64, 32, 100}, 2, (int64_t[]){3000, 2}, REF_REDUCE_ADD, true);
    check_scatter_nd(&rng, "int32", 2, (int64_t[]){300, 400}, 2, (int64_t[]){5000, 2}, REF_REDUCE_MAX, false);
  }
}

/* ---- scatter_elements -------------------------------------------------------------- */

static void check_scatter_elements(hgr_test_rng_t* rng, const char* dtype, int32_t ndim, const int64_t* shape,
                                   const int64_t* index_shape, int32_t axis_attr, int reduction, bool wide) {
  char attrs[96];
  snprintf(attrs, sizeof(attrs), "\"axis\": \"%d\", \"reduction\": \"%s\"", axis_attr,
           reduction == REF_REDUCE_NONE && axis_attr == 0 ? "update" : reduction_names[reduction]);
  int32_t axis = axis_attr < 0 ? axis_attr + ndim : axis_attr;
  hgr_optest_t t;
  hgr_optest_init(&t, "scatter_elements", attrs);
  void* data = hgr_optest_input(&t, dtype, ndim, shape);
  int32_t* indices = hgr_optest_input(&t, "int32", ndim, index_shape);
  void* updates = hgr_optest_input(&t, dtype, ndim, index_shape);
  fill_data(&t.inputs[0], rng, reduction);
  fill_data(&t.inputs[2], rng, reduction);
  int64_t count = count_of(index_shape, ndim);
  for (int64_t i = 0; i < count; ++i) indices[i] = random_index(rng, shape[axis], wide);
  void* out = hgr_optest_output(&t, dtype, ndim, shape);
  ref_scatter_elements(data, shape, ndim, indices, index_shape, updates, axis, reduction, is_float(dtype),
                       hgr_optest_element_bytes(dtype), out);
  check(&t);
}

/* Every reduction, duplicates included: the kernels apply a line's updates in
 * order, so even "none" (where ONNX leaves duplicates open) matches the reference's
 * last write. */
static void scatter_elements_matches_reference(void** state) {
  (void)state;
  hgr_test_rng_t rng;
  hgr_test_rng_seed(&rng, 39);
  static const char* const dtypes[] = {"float32", "int32", "bool"};
  for (int wide = 0; wide < 2; ++wide)
    for (int r = REF_REDUCE_NONE; r <= REF_REDUCE_MIN; ++r)
      for (int d = 0; d < (r == REF_REDUCE_NONE ? 3 : 2); ++d) {
        check_scatter_elements(&rng, dtypes[d], 2, (int64_t[]){3, 3}, (int64_t[]){2, 3}, 0, r, wide);
        check_scatter_elements(&rng, dtypes[d], 2, (int64_t[]){1, 5}, (int64_t[]){1, 2}, 1, r, wide);
        check_scatter_elements(&rng, dtypes[d], 3, (int64_t[]){3, 4, 5}, (int64_t[]){2, 7, 3}, -2, r, wide);
        check_scatter_elements(&rng, dtypes[d], 3, (int64_t[]){3, 4, 5}, (int64_t[]){3, 4, 9}, 2, r, wide);
        check_scatter_elements(&rng, dtypes[d], 1, (int64_t[]){6}, (int64_t[]){10}, -1, r, wide);
        check_scatter_elements(&rng, dtypes[d], 2, (int64_t[]){4, 2}, (int64_t[]){0, 2}, 0, r, wide);
      }
  if (!simulated()) {
    check_scatter_elements(&rng, "float32", 3, (int64_t[]){30, 64, 65}, (int64_t[]){30, 100, 60}, 1, REF_REDUCE_ADD,
                           true);
    check_scatter_elements(&rng, "int32", 2, (int64_t[]){500, 300}, (int64_t[]){400, 300}, 0, REF_REDUCE_NONE, false);
  }
}

/* Empty data: every index is outside its (empty) dim, so every update drops and
 * the output is empty too; with a reduction too (no scratch of 0 bytes). */
static void scatters_into_empty_data_drop_every_update(void** state) {
  (void)state;
  for (int reduction = REF_REDUCE_NONE; reduction <= REF_REDUCE_ADD; ++reduction) {
    char attrs[64];
    snprintf(attrs, sizeof(attrs), "\"reduction\": \"%s\"", reduction_names[reduction]);
    hgr_optest_t t;
    hgr_optest_init(&t, "onnx_scatter_nd", attrs);
    hgr_optest_input(&t, "float32", 2, (int64_t[]){0, 4});
    hgr_optest_input(&t, "int32", 2, (int64_t[]){2, 1});
    hgr_optest_input(&t, "float32", 2, (int64_t[]){2, 4});
    hgr_optest_output(&t, "float32", 2, (int64_t[]){0, 4});
    check(&t);
    hgr_optest_init(&t, "scatter_elements", attrs);
    hgr_optest_input(&t, "int32", 2, (int64_t[]){0, 3});
    hgr_optest_input(&t, "int32", 2, (int64_t[]){1, 3});
    hgr_optest_input(&t, "int32", 2, (int64_t[]){1, 3});
    hgr_optest_output(&t, "int32", 2, (int64_t[]){0, 3});
    check(&t);
  }
}

/* ---- refusals ------------------------------------------------------------------------ */

#define ASSERT_REJECTED(t, ...)                                                                   \
  ASSERT_STATUS(hgr_optest_create(hgr_optest_instance, hgr_optest_device, (t)), HGR_STATUS_INVALID_ARGUMENT, \
                __VA_ARGS__)

static void index_ops_reject_bad_shapes_and_attrs(void** state) {
  (void)state;
  hgr_optest_t t;
  hgr_optest_init(&t, "onnx_gather_nd", NULL);
  hgr_optest_input(&t, "float32", 2, (int64_t[]){2, 3});
  hgr_optest_input(&t, "int32", 2, (int64_t[]){4, 3});
  hgr_optest_output(&t, "float32", 1, (int64_t[]){4});
  ASSERT_REJECTED(&t, "node 2 'onnx_gather_nd_node' (onnx_gather_nd): input 1 (the indices, entry 1) is shaped [4, 3]: "
                      "its last dim (the tuple length) must be 1 to 2 for data of rank 2 with 0 batch dims");
  hgr_optest_free(&t);
  hgr_optest_init(&t, "onnx_gather_nd", "\"batch_dims\": \"1\"");
  hgr_optest_input(&t, "float32", 2, (int64_t[]){2, 3});
  hgr_optest_input(&t, "int32", 2, (int64_t[]){3, 1});
  hgr_optest_output(&t, "float32", 1, (int64_t[]){3});
  ASSERT_REJECTED(&t, "node 2 'onnx_gather_nd_node' (onnx_gather_nd): input 1 (the indices, entry 1) is shaped [3, 1] "
                      "and input 0 (entry 0) [2, 3]: their first 1 (batch) dims must be equal");
  hgr_optest_free(&t);
  hgr_optest_init(&t, "onnx_gather_nd", NULL);
  hgr_optest_input(&t, "float32", 2, (int64_t[]){2, 3});
  hgr_optest_input(&t, "float32", 2, (int64_t[]){4, 2});
  hgr_optest_output(&t, "float32", 1, (int64_t[]){4});
  ASSERT_REJECTED(&t, "node 2 'onnx_gather_nd_node' (onnx_gather_nd): input 1 (the indices, entry 1) is float32; "
                      "onnx_gather_nd needs int32 indices");
  hgr_optest_free(&t);
  hgr_optest_init(&t, "onnx_scatter_nd", NULL);
  hgr_optest_input(&t, "float32", 2, (int64_t[]){4, 3});
  hgr_optest_input(&t, "int32", 2, (int64_t[]){2, 1});
  hgr_optest_input(&t, "float32", 2, (int64_t[]){2, 4});
  hgr_optest_output(&t, "float32", 2, (int64_t[]){4, 3});
  ASSERT_REJECTED(&t, "node 3 'onnx_scatter_nd_node' (onnx_scatter_nd): input 2 (the updates, entry 2) is shaped "
                      "[2, 4]; indices [2, 1] into data [4, 3] need updates shaped [2, 3]");
  hgr_optest_free(&t);
  hgr_optest_init(&t, "onnx_scatter_nd", "\"reduction\": \"add\"");
  hgr_optest_input(&t, "bool", 1, (int64_t[]){4});
  hgr_optest_input(&t, "int32", 2, (int64_t[]){2, 1});
  hgr_optest_input(&t, "bool", 1, (int64_t[]){2});
  hgr_optest_output(&t, "bool", 1, (int64_t[]){4});
  ASSERT_REJECTED(&t, "node 3 'onnx_scatter_nd_node' (onnx_scatter_nd): input 0 (entry 0) is bool; attr 'reduction' "
                      "= \"add\" takes float32 and int32");
  hgr_optest_free(&t);
  hgr_optest_init(&t, "scatter_elements", "\"reduction\": \"mean\"");
  hgr_optest_input(&t, "float32", 1, (int64_t[]){4});
  hgr_optest_input(&t, "int32", 1, (int64_t[]){2});
  hgr_optest_input(&t, "float32", 1, (int64_t[]){2});
  hgr_optest_output(&t, "float32", 1, (int64_t[]){4});
  ASSERT_REJECTED(&t, "node 3 'scatter_elements_node' (scatter_elements): attr 'reduction'", "mean");
  hgr_optest_free(&t);
  hgr_optest_init(&t, "scatter_elements", "\"axis\": \"1\"");
  hgr_optest_input(&t, "int32", 2, (int64_t[]){2, 3});
  hgr_optest_input(&t, "int32", 2, (int64_t[]){2, 2});
  hgr_optest_input(&t, "int32", 2, (int64_t[]){2, 3});
  hgr_optest_output(&t, "int32", 2, (int64_t[]){2, 3});
  ASSERT_REJECTED(&t, "node 3 'scatter_elements_node' (scatter_elements): input 2 (the updates, entry 2) is shaped "
                      "[2, 3] but input 1 (the indices, entry 1) [2, 2]; they must be shaped alike");
  hgr_optest_free(&t);
}

int main(int argc, char** argv) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(gather_nd_matches_reference),
      cmocka_unit_test(scatter_nd_matches_reference),
      cmocka_unit_test(scatter_elements_matches_reference),
      cmocka_unit_test(scatters_into_empty_data_drop_every_update),
      cmocka_unit_test(index_ops_reject_bad_shapes_and_attrs),
  };
  return hgr_optest_main(argc, argv, "ops_index", tests, sizeof(tests) / sizeof(tests[0]));
}
