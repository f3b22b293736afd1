/* trilu against a plain-C reference (tests/ref_index.c) on random float32, int32
 * and bool data (argument: a device spec). The op only moves elements or writes
 * zeros: compared exactly. Oclgrind simulates every work-item: small shapes. */
#include <stdio.h>

#include "optest.h"
#include "ref_index.h"

static void check_trilu(hgr_test_rng_t* rng, const char* dtype, int32_t ndim, const int64_t* shape, int64_t k,
                        bool upper) {
  char attrs[64];
  snprintf(attrs, sizeof(attrs), "\"k\": \"%lld\", \"upper\": \"%d\"", (long long)k, upper);
  hgr_optest_t t;
  hgr_optest_init(&t, "trilu", attrs);
  void* in = hgr_optest_input(&t, dtype, ndim, shape);
  hgr_optest_fill(&t.inputs[0], rng, -1000, 1000);
  void* out = hgr_optest_output(&t, dtype, ndim, shape);
  ref_trilu(in, shape, ndim, k, upper, hgr_optest_element_bytes(dtype), out);
  hgr_optest_check(hgr_optest_instance, hgr_optest_device, &t);
  hgr_optest_free(&t);
}

/* Diagonals inside, at the edges of and beyond the matrices (k past either end
 * keeps everything or nothing), square, wide, tall and one-row matrices, batches. */
static void trilu_matches_reference(void** state) {
  (void)state;
  hgr_test_rng_t rng;
  hgr_test_rng_seed(&rng, 40);
  static const char* const dtypes[] = {"float32", "int32", "bool"};
  static const int64_t ks[] = {0, 1, -1, 2, -3, 5, -7, 1LL << 40, -(1LL << 40)};
  for (int d = 0; d < 3; ++d)
    for (int upper = 0; upper < 2; ++upper)
      for (size_t i = 0; i < sizeof(ks) / sizeof(ks[0]); ++i) {
        check_trilu(&rng, dtypes[d], 2, (int64_t[]){4, 5}, ks[i], upper);
        check_trilu(&rng, dtypes[d], 3, (int64_t[]){2, 3, 3}, ks[i], upper);
        check_trilu(&rng, dtypes[d], 4, (int64_t[]){2, 2, 6, 3}, ks[i], upper);
        check_trilu(&rng, dtypes[d], 2, (int64_t[]){1, 7}, ks[i], upper);
      }
  check_trilu(&rng, "float32", 3, (int64_t[]){0, 3, 3}, 0, true);
  if (!hgr_optest_is_simulator(hgr_optest_device)) /* a causal mask of GPT-2's size, batched */
    check_trilu(&rng, "float32", 3, (int64_t[]){4, 512, 512}, 0, false);
}

#define ASSERT_REJECTED(t, ...)                                                                   \
  ASSERT_STATUS(hgr_optest_create(hgr_optest_instance, hgr_optest_device, (t)), HGR_STATUS_INVALID_ARGUMENT, \
                __VA_ARGS__)

static void trilu_rejects_vectors_and_bad_attrs(void** state) {
  (void)state;
  hgr_optest_t t;
  hgr_optest_init(&t, "trilu", NULL);
  hgr_optest_input(&t, "float32", 1, (int64_t[]){4});
  hgr_optest_output(&t, "float32", 1, (int64_t[]){4});
  ASSERT_REJECTED(&t, "node 1 'trilu_node' (trilu): input 0 (entry 0) is shaped [4]; trilu needs rank 2 or more");
  hgr_optest_free(&t);
  hgr_optest_init(&t, "trilu", "\"upper\": \"sometimes\"");
  hgr_optest_input(&t, "float32", 2, (int64_t[]){2, 2});
  hgr_optest_output(&t, "float32", 2, (int64_t[]){2, 2});
  ASSERT_REJECTED(&t, "node 1 'trilu_node' (trilu): attr 'upper'");
  hgr_optest_free(&t);
  hgr_optest_init(&t, "trilu", "\"k\": \"one\"");
  hgr_optest_input(&t, "int64", 2, (int64_t[]){2, 2});
  hgr_optest_output(&t, "int64", 2, (int64_t[]){2, 2});
  ASSERT_REJECTED(&t, "node 1 'trilu_node' (trilu): input 0 (entry 0) is int64; trilu moves 4-byte");
  hgr_optest_free(&t);
}

int main(int argc, char** argv) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(trilu_matches_reference),
      cmocka_unit_test(trilu_rejects_vectors_and_bad_attrs),
  };
  return hgr_optest_main(argc, argv, "ops_trilu", tests, sizeof(tests) / sizeof(tests[0]));
}
