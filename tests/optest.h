/* Single-op tests: a graph of one op node fed by its inputs, run on one device and
 * compared with values the test computed with a plain-C reference (tests/ref_*.c).
 *
 *   hgr_optest_t t;
 *   hgr_optest_init(&t, "softmax", "\"axis\": \"-1\"");
 *   float* x = hgr_optest_input(&t, "float32", 2, (int64_t[]){3, 5});
 *   float* y = hgr_optest_output(&t, "float32", 2, (int64_t[]){3, 5});
 *   hgr_optest_fill(&t.inputs[0], &rng, -4, 4);
 *   ref_softmax(x, y, ...);               // expected values into the output
 *   hgr_optest_tolerance(&t, 1e-5, 1e-6);
 *   hgr_optest_check(instance, spec, &t); // fails the cmocka test on a mismatch
 *   hgr_optest_free(&t);
 *
 * Inputs are graph inputs x0, x1, ... set through hgr_executor_set_input; the op
 * node's outputs are the graph's outputs. */
#ifndef HGR_TEST_OPTEST_H_
#define HGR_TEST_OPTEST_H_

#include <stdbool.h>
#include <stdint.h>

#include "testlib.h"

#define HGR_OPTEST_MAX_TENSORS 12
#define HGR_OPTEST_MAX_DIMS 8

typedef struct hgr_optest_tensor_t {
  const char* dtype;  /* "float32", "int32", "int64", "uint8", "int8" or "bool" (1 byte, 0 or 1) */
  int32_t ndim;
  int64_t shape[HGR_OPTEST_MAX_DIMS];
  uint64_t count;     /* elements */
  void* data;         /* count elements of the dtype (calloc'd) */
} hgr_optest_tensor_t;

typedef struct hgr_optest_t {
  const char* op;
  char attrs[1024];   /* extra node attrs as JSON members, e.g. "\"axis\": \"-1\"" */
  uint32_t input_count;
  hgr_optest_tensor_t inputs[HGR_OPTEST_MAX_TENSORS];
  uint32_t output_count;
  hgr_optest_tensor_t outputs[HGR_OPTEST_MAX_TENSORS]; /* expected values */
  bool alias_output;  /* output 0 shares input alias_input's storage id (reshape-likes, */
  uint32_t alias_input; /* in-place ops) */
  double rtol, atol;  /* float32: |got - expected| <= atol + rtol * |expected|; 0, 0: exact.
                         Integer and bool outputs are always compared exactly. */
  bool force_candidate; /* executors take tile candidate `candidate` (HGR_TUNING_CANDIDATE); */
  uint32_t candidate;   /* false: each op's rule over the device's limits */
} hgr_optest_t;

/* attrs may be NULL or "" (no extra attrs); it is copied. */
void hgr_optest_init(hgr_optest_t* t, const char* op, const char* attrs);
/* Adds an input or an expected output and returns its (zeroed) data. */
void* hgr_optest_input(hgr_optest_t* t, const char* dtype, int32_t ndim, const int64_t* shape);
void* hgr_optest_output(hgr_optest_t* t, const char* dtype, int32_t ndim, const int64_t* shape);
void hgr_optest_tolerance(hgr_optest_t* t, double rtol, double atol);
void hgr_optest_free(hgr_optest_t* t);

/* Uniform values in [lo, hi): floats, or integers for integer tensors; 0 or 1 for
 * bool (lo and hi ignored). */
void hgr_optest_fill(hgr_optest_tensor_t* tensor, hgr_test_rng_t* rng, float lo, float hi);

/* Bytes per element of a test dtype (bool, uint8, int8: 1; int64: 8; else 4). */
size_t hgr_optest_element_bytes(const char* dtype);
/* Element i of data laid out as tensor's integer dtype (int32, int64, uint8, int8,
 * bool), and the setter of tensor's own data. */
int64_t hgr_optest_int_at(const hgr_optest_tensor_t* tensor, const void* data, uint64_t i);
void hgr_optest_set_int(hgr_optest_tensor_t* tensor, uint64_t i, int64_t value);

/* The graph JSON of the test (malloc'd). */
char* hgr_optest_graph_json(const hgr_optest_t* t);

/* Runs the op on device_spec and compares every output; on a mismatch or an error
 * prints the op, attrs, shapes, device and the first bad element, and fails. */
void hgr_optest_check(hgr_instance_t* instance, const char* device_spec, const hgr_optest_t* t);

/* Only creates the executor (then releases it) and returns the status, for tests
 * of what an op rejects. */
hgr_status_t hgr_optest_create(hgr_instance_t* instance, const char* device_spec, const hgr_optest_t* t);

/* Plans the op's node (hgr__op_plan_tuned, no device) into ctx as a device with
 * `limits` would run it (tuning NULL: the rule's tiles); fails on an error. The
 * caller frees ctx with hgr__op_ctx_free. */
struct hgr__limits_t;
struct hgr__op_ctx_t;
struct hgr__tuning_t;
void hgr_optest_plan(const hgr_optest_t* t, const struct hgr__limits_t* limits, const struct hgr__tuning_t* tuning,
                     struct hgr__op_ctx_t* ctx);

/* The instance's record of hgr_optest_device, whose limits (max_work_group_size,
 * max_work_item_sizes, local_mem_bytes) executors plan from: a test may change them
 * to run as if on a smaller device, and must put back a saved copy afterwards. */
hgr_device_info_t* hgr_optest_device_info(void);

/* Whether device_spec names Oclgrind (a simulator: give it small shapes). */
bool hgr_optest_is_simulator(const char* device_spec);

/* The usual main of an op test: `test_ops_<family> DEVICE_SPEC`. Creates the
 * instance, skips (77) when the device is absent, and runs the tests with
 * hgr_optest_instance and hgr_optest_device set. */
extern hgr_instance_t* hgr_optest_instance;
extern const char* hgr_optest_device;
int hgr_optest_main(int argc, char** argv, const char* group, const struct CMUnitTest* tests, size_t count);

#endif /* HGR_TEST_OPTEST_H_ */
