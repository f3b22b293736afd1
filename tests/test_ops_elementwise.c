/* Elementwise ops against plain-C references on random data (argument: a device spec). */
#include <math.h>
#include <string.h>

#include "optest.h"

static void add_matches_reference(void** state) {
  (void)state;
  hgr_test_rng_t rng;
  hgr_test_rng_seed(&rng, 1);
  static const int64_t shapes[][3] = {{1, 1, 1}, {2, 3, 7}, {3, 5, 67}};
  for (size_t s = 0; s < 3; ++s) {
    hgr_optest_t t;
    hgr_optest_init(&t, "add", NULL);
    float* a = hgr_optest_input(&t, "float32", 3, shapes[s]);
    float* b = hgr_optest_input(&t, "float32", 3, shapes[s]);
    float* y = hgr_optest_output(&t, "float32", 3, shapes[s]);
    hgr_optest_fill(&t.inputs[0], &rng, -4, 4);
    hgr_optest_fill(&t.inputs[1], &rng, -4, 4);
    for (uint64_t i = 0; i < t.outputs[0].count; ++i) y[i] = a[i] + b[i];
    hgr_optest_check(hgr_optest_instance, hgr_optest_device, &t);
    hgr_optest_free(&t);
  }
}

static void unknown_attrs_are_rejected(void** state) {
  (void)state;
  hgr_optest_t t;
  hgr_optest_init(&t, "relu", "\"alpha\": \"0.5\"");
  hgr_optest_input(&t, "float32", 1, (int64_t[]){4});
  hgr_optest_output(&t, "float32", 1, (int64_t[]){4});
  ASSERT_STATUS(hgr_optest_create(hgr_optest_instance, hgr_optest_device, &t), HGR_STATUS_INVALID_ARGUMENT,
                "node 1 'relu_node' (relu): unknown attr 'alpha'");
  hgr_optest_free(&t);
}

int main(int argc, char** argv) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(add_matches_reference),
      cmocka_unit_test(unknown_attrs_are_rejected),
  };
  return hgr_optest_main(argc, argv, "ops_elementwise", tests, sizeof(tests) / sizeof(tests[0]));
}
