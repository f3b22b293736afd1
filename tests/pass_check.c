#include "pass_check.h"

#include <stdlib.h>

hgr_value_t hgr_test_random_constant(hgr_builder_t* builder, const char* name, const int64_t* shape, int32_t ndim,
                                     hgr_test_rng_t* rng) {
  size_t count = 1;
  for (int32_t d = 0; d < ndim; ++d) count *= (size_t)shape[d];
  float* data = malloc(count * sizeof(float) + 1);
  assert_non_null(data);
  for (size_t i = 0; i < count; ++i) data[i] = hgr_test_rng_float(rng, -1, 1);
  hgr_value_t value;
  const hgr_dtype_t f32 = {HGR_DTYPE_FLOAT, 32, 1};
  ASSERT_OK(hgr_builder_add_constant(builder, name, f32, shape, ndim, data, count * sizeof(float), &value));
  free(data);
  return value;
}

hgr_params_t* hgr_test_params_copy(const hgr_params_t* params) {
  hgr_params_t* copy = NULL;
  ASSERT_OK(hgr_params_create(&copy));
  for (size_t p = 0; p < hgr_params_count(params); ++p) {
    hgr_tensor_info_t info;
    const void* data;
    ASSERT_OK(hgr_params_get(params, p, &info, &data));
    ASSERT_OK(hgr_params_add(copy, info.name, info.dtype, info.ndim, info.shape, data, (size_t)info.bytes));
  }
  return copy;
}

bool hgr_test_has_param(const hgr_params_t* params, const char* name) {
  size_t index;
  hgr_status_t status = hgr_params_find(params, name, &index);
  hgr_status_free(status);
  return !status;
}

float* hgr_test_run_graph(hgr_instance_t* instance, const char* spec, const hgr_graph_t* graph,
                          const hgr_params_t* params, const float* x) {
  return hgr_test_run_graph_output(instance, spec, graph, params, x, 0);
}

float* hgr_test_run_graph_output(hgr_instance_t* instance, const char* spec, const hgr_graph_t* graph,
                                 const hgr_params_t* params, const float* x, uint32_t k) {
  hgr_executor_options_t options;
  hgr_executor_options_init(&options);
  const hgr_device_binding_t binding = {0, spec};
  options.bindings = &binding;
  options.binding_count = 1;
  options.params = params;
  options.program_cache.mode = HGR_PROGRAM_CACHE_OFF;
  hgr_executor_t* executor = NULL;
  ASSERT_OK(hgr_executor_create(instance, (hgr_graph_t*)graph, &options, &executor));
  hgr_tensor_info_t info;
  ASSERT_OK(hgr_graph_input_info(graph, 0, &info));
  ASSERT_OK(hgr_executor_set_input(executor, 0, x, info.bytes));
  ASSERT_OK(hgr_executor_run(executor));
  ASSERT_OK(hgr_executor_wait(executor));
  ASSERT_OK(hgr_graph_output_info(graph, k, &info));
  float* result = malloc(info.bytes + 1);
  assert_non_null(result);
  ASSERT_OK(hgr_executor_get_output(executor, k, result, info.bytes));
  hgr_executor_release(executor);
  return result;
}
