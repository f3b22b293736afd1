/* Helpers shared by the tests: status assertions, test-bed platform checks that
 * skip (exit 77) when a platform is absent, temporary paths and random data. */
#ifndef HGR_TESTLIB_H_
#define HGR_TESTLIB_H_

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
/* cmocka needs the headers above first. */
#include <cmocka.h>

#include "hgr/hgr.h"

/* Exit code that CTest reports as skipped (SKIP_RETURN_CODE). */
#define HGR_TEST_SKIP 77

/* Fails the test, printing the status, unless expr returns HGR_OK. */
#define ASSERT_OK(expr)                                                              \
  do {                                                                               \
    hgr_status_t s_ = (expr);                                                        \
    if (s_) {                                                                        \
      char* text_ = hgr_status_to_string(s_);                                        \
      print_error("%s:%d: %s returned %s\n", __FILE__, __LINE__, #expr, text_);      \
      free(text_);                                                                   \
      hgr_status_free(s_);                                                           \
      fail();                                                                        \
    }                                                                                \
  } while (0)

/* Asserts that expr fails with code and that its formatted text contains each of
 * the given substrings (NULL-terminated list), then frees the status. */
#define ASSERT_STATUS(expr, code, ...) \
  hgr_test_assert_status((expr), (code), #expr, __FILE__, __LINE__, __VA_ARGS__, (const char*)NULL)
void hgr_test_assert_status(hgr_status_t status, hgr_status_code_t code, const char* expr,
                            const char* file, int line, ...);

/* A default instance; exits 1, printing why, when none can be made. */
hgr_instance_t* hgr_test_instance_or_exit(void);

/* The node of placement's graph that came from node source_node of the graph given
 * to hgr_place (*out_id, may be NULL: its id); fails the test when there is none. */
hgr_node_placement_t hgr_test_placed_node(const hgr_placement_t* placement, uint32_t source_node, uint32_t* out_id);

/* Exits with HGR_TEST_SKIP, printing why, unless every spec resolves to a device
 * of the instance. */
void hgr_test_require_devices(const hgr_instance_t* instance, const char* const* specs,
                              size_t count);

/* A file path under the test temp dir (HGR_TEST_TMP_DIR, else /tmp), unique per
 * process: "<dir>/<pid>-<name>". Static buffer, overwritten by the next call. */
const char* hgr_test_tmp_path(const char* name);

/* Path of a file in tests/data (HGR_TEST_DATA_DIR). Static buffer. */
const char* hgr_test_data_path(const char* name);

/* Deterministic random numbers (xorshift64*). */
typedef struct hgr_test_rng_t {
  uint64_t state;
} hgr_test_rng_t;
void hgr_test_rng_seed(hgr_test_rng_t* rng, uint64_t seed);
uint64_t hgr_test_rng_next(hgr_test_rng_t* rng);
/* Uniform in [lo, hi). */
float hgr_test_rng_float(hgr_test_rng_t* rng, float lo, float hi);
/* Uniform integer in [0, n). */
uint32_t hgr_test_rng_below(hgr_test_rng_t* rng, uint32_t n);

#endif /* HGR_TESTLIB_H_ */
