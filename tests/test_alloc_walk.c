/* A failing allocator walked over a model's life (include/hgr/allocator.h), as
 * test_faults walks failing OpenCL calls: the instance is made with an allocator
 * that counts its blocks and fails the n-th allocation, for n = 1, 2, 3 ... until a
 * step runs through without reaching n. Each step is
 *   - making the instance,
 *   - loading a model (hgr_model_create_onnx_file: parse, import, passes),
 *   - its first run at a shape (specialization: shapes, place, plan, executor; the
 *     run; reading the output back),
 * (each model builds its programs into its own pool, from hgr's program cache), and
 * after each, whatever it returned:
 *   - a failure is RESOURCE_EXHAUSTED (never another code, never a crash);
 *   - a success gives the output an unfailing run gives (an allocation that only
 *     a cache wanted may fail without failing the step);
 *   - after a failed run the model still runs, and gives that output;
 *   - once the objects are released, every block of the allocator is freed, and
 *     every block freed came from it (each block carries a header the free checks).
 *
 * usage: test_alloc_walk DATA_DIR DEVICE_SPEC */
#include <stdatomic.h>
#include <string.h>
#include <time.h>

#include "testlib.h"

static const char* data_dir;
static const char* device_spec;

/* ---- the walking allocator -------------------------------------------------------- */

#define BLOCK_MAGIC 0x68677241424c4f4bull /* "hgrABLOK" */
#define FREED_MAGIC 0x6867724672656564ull

typedef struct block_header_t {
  uint64_t magic;
  uint64_t bytes;
} block_header_t; /* 16 bytes: the block after it stays aligned for any type */

typedef struct walker_t {
  atomic_llong live;    /* blocks allocated and not yet freed */
  atomic_llong calls;   /* allocations and resizes since armed */
  atomic_llong fail_at; /* the call that fails (1-based); 0: none */
  atomic_bool failed;   /* whether it was reached */
} walker_t;

static walker_t walker;

static void* walker_fn(void* self, void* block, size_t bytes) {
  walker_t* w = self;
  block_header_t* header = block ? (block_header_t*)block - 1 : NULL;
  if (header && header->magic != BLOCK_MAGIC) {
    fprintf(stderr, "a block %p not from this allocator (or freed twice) was given back to it\n", block);
    abort();
  }
  if (bytes == 0) {
    header->magic = FREED_MAGIC;
    free(header);
    atomic_fetch_sub(&w->live, 1);
    return NULL;
  }
  long long call = atomic_fetch_add(&w->calls, 1) + 1;
  long long fail_at = atomic_load(&w->fail_at);
  if (fail_at && call == fail_at) {
    atomic_store(&w->failed, true);
    return NULL;
  }
  if (bytes > SIZE_MAX - sizeof(block_header_t)) return NULL;
  block_header_t* grown = realloc(header, sizeof(block_header_t) + bytes);
  if (!grown) return NULL;
  if (!header) atomic_fetch_add(&w->live, 1);
  grown->magic = BLOCK_MAGIC;
  grown->bytes = bytes;
  return grown + 1;
}

static void arm(long long fail_at) {
  atomic_store(&walker.calls, 0);
  atomic_store(&walker.failed, false);
  atomic_store(&walker.fail_at, fail_at);
}

/* Disarms; whether the armed call was reached. */
static bool disarm(void) {
  atomic_store(&walker.fail_at, 0);
  return atomic_load(&walker.failed);
}

static hgr_instance_options_t walked_options(void) {
  hgr_instance_options_t options;
  hgr_instance_options_init(&options);
  options.allocator = (hgr_allocator_t){&walker, walker_fn};
  return options;
}

/* A failed step's status must be RESOURCE_EXHAUSTED; prints and fails otherwise. */
static void expect_exhausted(hgr_status_t status, const char* step, long long n) {
  if (hgr_status_code(status) != HGR_STATUS_RESOURCE_EXHAUSTED) {
    char* text = hgr_status_to_string(status);
    print_error("%s, allocation %lld failed: %s (RESOURCE_EXHAUSTED expected)\n", step, n, text);
    free(text);
    hgr_status_free(status);
    fail();
  }
  hgr_status_free(status);
}

/* Every block back, allowing an OpenCL driver's callbacks (which free what a wait
 * shared with them) up to 2 s to run after the objects were released. */
static void expect_all_freed(long long before, const char* step, long long n) {
  long long live = atomic_load(&walker.live);
  for (int i = 0; i < 2000 && live != before; ++i) {
    nanosleep(&(struct timespec){0, 1000000}, NULL);
    live = atomic_load(&walker.live);
  }
  if (live != before) {
    print_error("%s, allocation %lld failed: %lld blocks left allocated\n", step, n, live - before);
    fail();
  }
}

/* ---- the models ------------------------------------------------------------------- */

typedef struct walked_model_t {
  const char* file;
  size_t input_count;
  hgr_model_input_t inputs[2];
} walked_model_t;

static float encoder_x[2 * 5 * 8], encoder_mask[2 * 5], reshape_x[4 * 6], cnn_x[1 * 3 * 8 * 8];
static const int64_t encoder_x_shape[3] = {2, 5, 8}, encoder_mask_shape[2] = {2, 5};
static const int64_t reshape_x_shape[2] = {4, 6}, reshape_target_shape[1] = {2}, reshape_target[2] = {3, 8};
static const int64_t cnn_x_shape[4] = {1, 3, 8, 8};

/* encoder.onnx: MatMul, Add, Relu, MatMul, Unsqueeze, Mul (weights, fusion);
 * reshape_input.onnx: an input that decides shapes; cnn.onnx: Conv epilogues, pools,
 * Gemm. */
static walked_model_t models[] = {
    {"encoder.onnx", 2,
     {{{HGR_DTYPE_FLOAT, 32, 1}, 3, encoder_x_shape, encoder_x, sizeof(encoder_x)},
      {{HGR_DTYPE_FLOAT, 32, 1}, 2, encoder_mask_shape, encoder_mask, sizeof(encoder_mask)}}},
    {"reshape_input.onnx", 2,
     {{{HGR_DTYPE_FLOAT, 32, 1}, 2, reshape_x_shape, reshape_x, sizeof(reshape_x)},
      {{HGR_DTYPE_INT, 64, 1}, 1, reshape_target_shape, reshape_target, sizeof(reshape_target)}}},
    {"cnn.onnx", 1, {{{HGR_DTYPE_FLOAT, 32, 1}, 4, cnn_x_shape, cnn_x, sizeof(cnn_x)}}},
};

static void fill_inputs(void) {
  hgr_test_rng_t rng;
  hgr_test_rng_seed(&rng, 34);
  for (size_t i = 0; i < sizeof(encoder_x) / sizeof(float); ++i) encoder_x[i] = hgr_test_rng_float(&rng, -2, 2);
  for (size_t i = 0; i < sizeof(encoder_mask) / sizeof(float); ++i) encoder_mask[i] = (float)(i % 3 != 0);
  for (size_t i = 0; i < sizeof(reshape_x) / sizeof(float); ++i) reshape_x[i] = (float)i;
  for (size_t i = 0; i < sizeof(cnn_x) / sizeof(float); ++i) cnn_x[i] = hgr_test_rng_float(&rng, -1, 1);
}

static hgr_status_t open_model(hgr_instance_t* instance, const walked_model_t* m, hgr_model_t** out_model) {
  char path[1024];
  snprintf(path, sizeof(path), "%s/%s", data_dir, m->file);
  hgr_model_options_t options;
  hgr_model_options_init(&options);
  static hgr_device_binding_t binding;
  binding = (hgr_device_binding_t){0, device_spec};
  options.executor.bindings = &binding;
  options.executor.binding_count = 1;
  return hgr_model_create_onnx_file(instance, path, &options, out_model);
}

/* Runs the model once; output 0's bytes in *out_output (malloc'd) on success. */
static hgr_status_t run_once(hgr_model_t* model, const walked_model_t* m, void** out_output, size_t* out_bytes) {
  *out_output = NULL;
  *out_bytes = 0;
  hgr_model_run_t* run = NULL;
  hgr_status_t status = hgr_model_run(model, m->inputs, m->input_count, &run);
  if (!status) status = hgr_model_run_wait(run);
  hgr_tensor_info_t info;
  if (!status) status = hgr_model_run_output_info(run, 0, &info);
  if (!status) {
    *out_output = malloc(info.bytes ? info.bytes : 1);
    assert_non_null(*out_output);
    *out_bytes = info.bytes;
    status = hgr_model_run_get_output(run, 0, *out_output, info.bytes);
  }
  hgr_model_run_release(run);
  if (status) {
    free(*out_output);
    *out_output = NULL;
  }
  return status;
}

static void expect_output(const void* output, size_t bytes, const void* expected, size_t expected_bytes,
                          const char* step, long long n) {
  if (bytes != expected_bytes || memcmp(output, expected, bytes) != 0) {
    print_error("%s, allocation %lld failed: the step succeeded with another output\n", step, n);
    fail();
  }
}

/* ---- the walks --------------------------------------------------------------------- */

static void making_the_instance(void** state) {
  (void)state;
  hgr_instance_options_t options = walked_options();
  long long n = 1;
  for (;; ++n) {
    long long before = atomic_load(&walker.live);
    hgr_instance_t* instance = NULL;
    arm(n);
    hgr_status_t status = hgr_instance_create(&options, &instance);
    bool reached = disarm();
    if (status) expect_exhausted(status, "instance", n);
    else assert_true(hgr_instance_device_count(instance) > 0);
    hgr_instance_release(instance);
    expect_all_freed(before, "instance", n);
    if (!reached) break;
  }
  print_message("instance: %lld allocations walked\n", n - 1);
}

static void walk_model(const walked_model_t* m) {
  hgr_instance_options_t options = walked_options();
  hgr_instance_t* instance = NULL;
  ASSERT_OK(hgr_instance_create(&options, &instance));
  hgr_test_require_devices(instance, &device_spec, 1);
  hgr_model_t* model = NULL;
  ASSERT_OK(open_model(instance, m, &model));
  void* expected = NULL;
  size_t expected_bytes = 0;
  ASSERT_OK(run_once(model, m, &expected, &expected_bytes));
  hgr_model_release(model);
  long long before = atomic_load(&walker.live);

  char step[256];
  snprintf(step, sizeof(step), "%s: load", m->file);
  long long n = 1;
  for (;; ++n) {
    model = NULL;
    arm(n);
    hgr_status_t status = open_model(instance, m, &model);
    bool reached = disarm();
    if (status) {
      expect_exhausted(status, step, n);
    } else {
      void* output = NULL;
      size_t bytes = 0;
      ASSERT_OK(run_once(model, m, &output, &bytes));
      expect_output(output, bytes, expected, expected_bytes, step, n);
      free(output);
    }
    hgr_model_release(model);
    expect_all_freed(before, step, n);
    if (!reached) break;
  }
  print_message("%s: %lld allocations walked\n", step, n - 1);

  snprintf(step, sizeof(step), "%s: specialize and run", m->file);
  for (n = 1;; ++n) {
    ASSERT_OK(open_model(instance, m, &model));
    void* output = NULL;
    size_t bytes = 0;
    arm(n);
    hgr_status_t status = run_once(model, m, &output, &bytes);
    bool reached = disarm();
    if (status) {
      expect_exhausted(status, step, n);
      ASSERT_OK(run_once(model, m, &output, &bytes)); /* the model still runs */
    }
    expect_output(output, bytes, expected, expected_bytes, step, n);
    free(output);
    hgr_model_release(model);
    expect_all_freed(before, step, n);
    if (!reached) break;
  }
  print_message("%s: %lld allocations walked\n", step, n - 1);

  free(expected);
  hgr_instance_release(instance);
  expect_all_freed(0, "the end of the walk", 0);
}

static void the_encoder(void** state) {
  (void)state;
  walk_model(&models[0]);
}

static void a_model_whose_input_decides_shapes(void** state) {
  (void)state;
  walk_model(&models[1]);
}

static void a_cnn(void** state) {
  (void)state;
  walk_model(&models[2]);
}

int main(int argc, char** argv) {
  if (argc < 3) {
    fprintf(stderr, "usage: %s DATA_DIR DEVICE_SPEC\n", argv[0]);
    return 2;
  }
  data_dir = argv[1];
  device_spec = argv[2];
  fill_inputs();
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(making_the_instance),
      cmocka_unit_test(the_encoder),
      cmocka_unit_test(a_model_whose_input_decides_shapes),
      cmocka_unit_test(a_cnn),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
