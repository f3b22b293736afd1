#include "optest.h"

#include "ref_elementwise.h"

#include "device_internal.h"
#include "graph_internal.h"
#include "ops.h"

#include <math.h>
#include <string.h>

hgr_instance_t* hgr_optest_instance;
const char* hgr_optest_device;

void hgr_optest_init(hgr_optest_t* t, const char* op, const char* attrs) {
  memset(t, 0, sizeof(*t));
  t->op = op;
  snprintf(t->attrs, sizeof(t->attrs), "%s", attrs ? attrs : "");
}

static void* add_tensor(hgr_optest_tensor_t* tensor, const char* dtype, int32_t ndim, const int64_t* shape) {
  assert_true(ndim >= 0 && ndim <= HGR_OPTEST_MAX_DIMS);
  tensor->dtype = dtype;
  tensor->ndim = ndim;
  tensor->count = 1;
  for (int32_t d = 0; d < ndim; ++d) {
    tensor->shape[d] = shape[d];
    tensor->count *= (uint64_t)shape[d];
  }
  tensor->data = calloc(tensor->count ? tensor->count : 1, hgr_optest_element_bytes(dtype));
  assert_non_null(tensor->data);
  return tensor->data;
}

void* hgr_optest_input(hgr_optest_t* t, const char* dtype, int32_t ndim, const int64_t* shape) {
  assert_true(t->input_count < HGR_OPTEST_MAX_TENSORS);
  return add_tensor(&t->inputs[t->input_count++], dtype, ndim, shape);
}

void* hgr_optest_output(hgr_optest_t* t, const char* dtype, int32_t ndim, const int64_t* shape) {
  assert_true(t->output_count < HGR_OPTEST_MAX_TENSORS);
  return add_tensor(&t->outputs[t->output_count++], dtype, ndim, shape);
}

void hgr_optest_tolerance(hgr_optest_t* t, double rtol, double atol) {
  t->rtol = rtol;
  t->atol = atol;
}

void hgr_optest_free(hgr_optest_t* t) {
  for (uint32_t i = 0; i < t->input_count; ++i) free(t->inputs[i].data);
  for (uint32_t i = 0; i < t->output_count; ++i) free(t->outputs[i].data);
  memset(t, 0, sizeof(*t));
}

size_t hgr_optest_element_bytes(const char* dtype) {
  if (!strcmp(dtype, "bool") || !strcmp(dtype, "uint8") || !strcmp(dtype, "int8")) return 1;
  if (!strcmp(dtype, "uint16") || !strcmp(dtype, "int16") || !strcmp(dtype, "float16") || !strcmp(dtype, "bfloat16"))
    return 2;
  if (!strcmp(dtype, "int64")) return 8;
  return 4;
}

static bool is_float(const hgr_optest_tensor_t* tensor) { return !strcmp(tensor->dtype, "float32"); }

/* float16 and bfloat16: held as their bits, compared as their values. */
static bool is_half(const hgr_optest_tensor_t* tensor) {
  return !strcmp(tensor->dtype, "float16") || !strcmp(tensor->dtype, "bfloat16");
}

static float half_at(const hgr_optest_tensor_t* tensor, const void* data, uint64_t i) {
  uint16_t bits = ((const uint16_t*)data)[i];
  return !strcmp(tensor->dtype, "float16") ? hgr_ref_float16_value(bits) : hgr_ref_bfloat16_value(bits);
}

int64_t hgr_optest_int_at(const hgr_optest_tensor_t* tensor, const void* data, uint64_t i) {
  if (!strcmp(tensor->dtype, "int64")) return ((const int64_t*)data)[i];
  if (!strcmp(tensor->dtype, "int8")) return ((const int8_t*)data)[i];
  if (!strcmp(tensor->dtype, "int16")) return ((const int16_t*)data)[i];
  if (hgr_optest_element_bytes(tensor->dtype) == 1) return ((const uint8_t*)data)[i];
  if (hgr_optest_element_bytes(tensor->dtype) == 2) return ((const uint16_t*)data)[i];
  return ((const int32_t*)data)[i];
}

void hgr_optest_set_int(hgr_optest_tensor_t* tensor, uint64_t i, int64_t value) {
  if (!strcmp(tensor->dtype, "int64")) ((int64_t*)tensor->data)[i] = value;
  else if (!strcmp(tensor->dtype, "int8")) ((int8_t*)tensor->data)[i] = (int8_t)value;
  else if (hgr_optest_element_bytes(tensor->dtype) == 1) ((uint8_t*)tensor->data)[i] = (uint8_t)value;
  else if (hgr_optest_element_bytes(tensor->dtype) == 2) ((uint16_t*)tensor->data)[i] = (uint16_t)value;
  else ((int32_t*)tensor->data)[i] = (int32_t)value;
}

void hgr_optest_fill(hgr_optest_tensor_t* tensor, hgr_test_rng_t* rng, float lo, float hi) {
  bool is_bool = !strcmp(tensor->dtype, "bool");
  for (uint64_t i = 0; i < tensor->count; ++i) {
    if (is_bool) {
      hgr_optest_set_int(tensor, i, hgr_test_rng_below(rng, 2));
    } else if (!is_float(tensor)) {
      int32_t span = (int32_t)hi - (int32_t)lo;
      hgr_optest_set_int(tensor, i, (int32_t)lo + (int32_t)hgr_test_rng_below(rng, span > 0 ? (uint32_t)span : 1));
    } else {
      ((float*)tensor->data)[i] = hgr_test_rng_float(rng, lo, hi);
    }
  }
}

/* ---- the graph ------------------------------------------------------------------------ */

typedef struct text_t {
  char* data;
  size_t length, capacity;
} text_t;

static void append(text_t* text, const char* format, ...) HGR_PRINTF(2, 3);
static void append(text_t* text, const char* format, ...) {
  for (;;) {
    va_list args;
    va_start(args, format);
    int n = vsnprintf(text->data + text->length, text->capacity - text->length, format, args);
    va_end(args);
    assert_true(n >= 0);
    if ((size_t)n < text->capacity - text->length) {
      text->length += (size_t)n;
      return;
    }
    text->capacity = 2 * text->capacity + (size_t)n;
    text->data = realloc(text->data, text->capacity);
    assert_non_null(text->data);
  }
}

static void append_shape(text_t* text, const hgr_optest_tensor_t* tensor) {
  append(text, "[");
  for (int32_t d = 0; d < tensor->ndim; ++d) append(text, "%s%lld", d ? ", " : "", (long long)tensor->shape[d]);
  append(text, "]");
}

char* hgr_optest_graph_json(const hgr_optest_t* t) {
  text_t text = {malloc(4096), 0, 4096};
  assert_non_null(text.data);
  uint32_t n = t->input_count, m = t->output_count;
  append(&text, "{\"nodes\": [");
  for (uint32_t i = 0; i < n; ++i) append(&text, "{\"op\": \"null\", \"name\": \"x%u\", \"inputs\": []}, ", i);
  append(&text,
         "{\"op\": \"tvm_op\", \"name\": \"%s_node\", \"attrs\": {\"func_name\": \"%s\", \"num_inputs\": \"%u\", "
         "\"num_outputs\": \"%u\", \"flatten_data\": \"0\"%s%s}, \"inputs\": [",
         t->op, t->op, n, m, t->attrs[0] ? ", " : "", t->attrs);
  for (uint32_t i = 0; i < n; ++i) append(&text, "%s[%u, 0, 0]", i ? ", " : "", i);
  append(&text, "]}], \"arg_nodes\": [");
  for (uint32_t i = 0; i < n; ++i) append(&text, "%s%u", i ? ", " : "", i);
  append(&text, "], \"node_row_ptr\": [");
  for (uint32_t i = 0; i <= n; ++i) append(&text, "%u, ", i);
  append(&text, "%u], \"heads\": [", n + m);
  for (uint32_t k = 0; k < m; ++k) append(&text, "%s[%u, %u, 0]", k ? ", " : "", n, k);
  append(&text, "], \"attrs\": {\"storage_id\": [\"list_int\", [");
  for (uint32_t i = 0; i < n + m; ++i)
    append(&text, "%s%u", i ? ", " : "", t->alias_output && i == n ? t->alias_input : i);
  append(&text, "]], \"shape\": [\"list_shape\", [");
  for (uint32_t i = 0; i < n + m; ++i) {
    append(&text, "%s", i ? ", " : "");
    append_shape(&text, i < n ? &t->inputs[i] : &t->outputs[i - n]);
  }
  append(&text, "]], \"dltype\": [\"list_str\", [");
  for (uint32_t i = 0; i < n + m; ++i)
    append(&text, "%s\"%s\"", i ? ", " : "", i < n ? t->inputs[i].dtype : t->outputs[i - n].dtype);
  append(&text, "]]}}");
  return text.data;
}

/* ---- running -------------------------------------------------------------------------- */

hgr_device_info_t* hgr_optest_device_info(void) {
  size_t index = 0;
  ASSERT_OK(hgr_instance_find_device(hgr_optest_instance, hgr_optest_device, &index));
  return &hgr_optest_instance->devices[index].info;
}

bool hgr_optest_is_simulator(const char* device_spec) { return strstr(device_spec, "oclgrind") != NULL; }

static void describe(const hgr_optest_t* t, const char* device_spec, char* buffer, size_t capacity) {
  text_t text = {malloc(1024), 0, 1024};
  assert_non_null(text.data);
  append(&text, "%s {%s} on %s, inputs", t->op, t->attrs, device_spec);
  for (uint32_t i = 0; i < t->input_count; ++i) {
    append(&text, " %s", t->inputs[i].dtype);
    append_shape(&text, &t->inputs[i]);
  }
  if (t->force_candidate) append(&text, ", tile candidate %u", t->candidate);
  snprintf(buffer, capacity, "%s", text.data);
  free(text.data);
}

static hgr_status_t create(hgr_instance_t* instance, const char* device_spec, const hgr_optest_t* t,
                           hgr_graph_t** out_graph, hgr_executor_t** out_executor) {
  *out_graph = NULL;
  *out_executor = NULL;
  char* json = hgr_optest_graph_json(t);
  hgr_status_t status = hgr_graph_load_json(json, strlen(json), out_graph);
  free(json);
  if (status) return status;
  hgr_device_binding_t binding = {0, device_spec};
  hgr_executor_options_t options;
  hgr_executor_options_init(&options);
  options.bindings = &binding;
  options.binding_count = 1;
  if (t->force_candidate) {
    options.tuning = HGR_TUNING_CANDIDATE;
    options.tuning_candidate = t->candidate;
  }
  status = hgr_executor_create(instance, *out_graph, &options, out_executor);
  if (status) {
    hgr_graph_release(*out_graph);
    *out_graph = NULL;
  }
  return status;
}

hgr_status_t hgr_optest_create(hgr_instance_t* instance, const char* device_spec, const hgr_optest_t* t) {
  hgr_graph_t* graph;
  hgr_executor_t* executor;
  hgr_status_t status = create(instance, device_spec, t, &graph, &executor);
  hgr_executor_release(executor);
  hgr_graph_release(graph);
  return status;
}

/* hgr__op_infer on the test's op node gives exactly each output's dtype and shape
 * (the ones the test computed its reference values for), and its counts and bytes:
 * every op's inference is checked against the reference's shapes on every case. */
static bool infer_matches(const hgr_graph_t* graph, const char* what) {
  uint32_t node_id = graph->node_count - 1;
  uint32_t count = graph->nodes[node_id].num_outputs;
  hgr__entry_t* inferred = calloc(count, sizeof(*inferred));
  assert_non_null(inferred);
  hgr_status_t status = hgr__op_infer(graph, node_id, NULL, inferred);
  bool same = true;
  if (status) {
    char* text = hgr_status_to_string(status);
    print_error("%s: hgr__op_infer failed: %s\n", what, text);
    free(text);
    hgr_status_free(status);
    same = false;
  }
  for (uint32_t k = 0; same && k < count; ++k) {
    const hgr__entry_t* want = &graph->entries[graph->node_row_ptr[node_id] + k];
    const hgr__entry_t* got = &inferred[k];
    same = hgr__dtype_same(got->dtype, want->dtype) && got->ndim == want->ndim &&
           got->element_count == want->element_count && got->bytes == want->bytes;
    for (int32_t d = 0; same && d < want->ndim; ++d) same = got->shape[d] == want->shape[d];
    if (!same) {
      char got_dtype[32], want_dtype[32], got_shape[160], want_shape[160];
      print_error("%s: hgr__op_infer gives output %u %s %s (%llu elements, %llu bytes), the test expects %s %s\n", what,
                  k, hgr_dtype_format(got->dtype, got_dtype, sizeof(got_dtype)),
                  hgr__entry_shape(got, got_shape, sizeof(got_shape)), (unsigned long long)got->element_count,
                  (unsigned long long)got->bytes, hgr_dtype_format(want->dtype, want_dtype, sizeof(want_dtype)),
                  hgr__entry_shape(want, want_shape, sizeof(want_shape)));
    }
  }
  free(inferred);
  return same;
}

/* First element where got and expected differ by more than the tolerance; -1 if none. */
static int64_t first_mismatch(const hgr_optest_t* t, const hgr_optest_tensor_t* want, const void* got,
                              double* out_got, double* out_want) {
  for (uint64_t i = 0; i < want->count; ++i) {
    double g, w;
    bool ok;
    if (is_half(want)) {
      g = half_at(want, got, i);
      w = half_at(want, want->data, i);
      ok = (isnan(g) && isnan(w)) || g == w;
    } else if (!is_float(want)) {
      int64_t got_value = hgr_optest_int_at(want, got, i), want_value = hgr_optest_int_at(want, want->data, i);
      g = (double)got_value;
      w = (double)want_value;
      ok = got_value == want_value;
    } else {
      g = ((const float*)got)[i];
      w = ((const float*)want->data)[i];
      if (isnan(w) || isnan(g)) ok = isnan(w) && isnan(g);
      else if (isinf(w) || isinf(g)) ok = g == w;
      else ok = fabs(g - w) <= t->atol + t->rtol * fabs(w) || fabs(g - w) <= 1.2e-38;
    }
    if (!ok) {
      *out_got = g;
      *out_want = w;
      return (int64_t)i;
    }
  }
  return -1;
}

void hgr_optest_plan(const hgr_optest_t* t, const hgr__limits_t* limits, const hgr__tuning_t* tuning,
                     hgr__op_ctx_t* ctx) {
  char* json = hgr_optest_graph_json(t);
  hgr_graph_t* graph = NULL;
  ASSERT_OK(hgr_graph_load_json(json, strlen(json), &graph));
  free(json);
  ASSERT_OK(hgr__op_plan_tuned(hgr_allocator_system(), graph, t->input_count, NULL, limits, tuning, ctx));
  hgr_graph_release(graph); /* the plan keeps no reference to the graph */
}

void hgr_optest_check(hgr_instance_t* instance, const char* device_spec, const hgr_optest_t* t) {
  char what[1024];
  describe(t, device_spec, what, sizeof(what));
  hgr_graph_t* graph;
  hgr_executor_t* executor;
  hgr_status_t status = create(instance, device_spec, t, &graph, &executor);
  bool failed = !status && !infer_matches(graph, what);
  for (uint32_t i = 0; !status && i < t->input_count; ++i)
    status = hgr_executor_set_input(executor, i, t->inputs[i].data,
                                    t->inputs[i].count * hgr_optest_element_bytes(t->inputs[i].dtype));
  if (!status) status = hgr_executor_run(executor);
  if (!status) status = hgr_executor_wait(executor);
  for (uint32_t k = 0; !status && !failed && k < t->output_count; ++k) {
    const hgr_optest_tensor_t* want = &t->outputs[k];
    size_t element_bytes = hgr_optest_element_bytes(want->dtype);
    void* got = calloc(want->count ? want->count : 1, element_bytes);
    assert_non_null(got);
    status = hgr_executor_get_output(executor, k, got, want->count * element_bytes);
    double g = 0, w = 0;
    int64_t bad = status ? -1 : first_mismatch(t, want, got, &g, &w);
    if (bad >= 0) {
      print_error("%s: output %u element %lld: got %.9g, expected %.9g (rtol %g, atol %g)\n", what, k,
                  (long long)bad, g, w, t->rtol, t->atol);
      failed = true;
    }
    free(got);
  }
  if (status) {
    char* text = hgr_status_to_string(status);
    print_error("%s: %s\n", what, text);
    free(text);
    hgr_status_free(status);
    failed = true;
  }
  hgr_executor_release(executor);
  hgr_graph_release(graph);
  if (failed) fail();
}

int hgr_optest_main(int argc, char** argv, const char* group, const struct CMUnitTest* tests, size_t count) {
  if (argc != 2) {
    fprintf(stderr, "usage: %s DEVICE_SPEC\n", argv[0]);
    return 2;
  }
  hgr_optest_device = argv[1];
  hgr_status_t status = hgr_instance_create(NULL, &hgr_optest_instance);
  if (status) {
    char* text = hgr_status_to_string(status);
    fprintf(stderr, "%s\n", text);
    free(text);
    hgr_status_free(status);
    return 1;
  }
  hgr_test_require_devices(hgr_optest_instance, &hgr_optest_device, 1);
  int failed = _cmocka_run_group_tests(group, tests, count, NULL, NULL);
  hgr_instance_release(hgr_optest_instance);
  return failed;
}
