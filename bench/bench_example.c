/* Helpers for the benchmarks that run a graph file (bench_example.h). */
#include "bench_example.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

bool bench_example_parse_binding(char* argument, hgr_device_binding_t* out_binding) {
  char* spec = strchr(argument, '=');
  if (!spec) return false;
  *spec = '\0';
  *out_binding = (hgr_device_binding_t){atoi(argument), spec + 1};
  return true;
}

static bool given_by_params(const hgr_params_t* params, const char* name) {
  for (size_t p = 0; params && p < hgr_params_count(params); ++p) {
    hgr_tensor_info_t param;
    const void* data = NULL;
    hgr_status_t status = hgr_params_get(params, p, &param, &data);
    if (status) {
      hgr_status_free(status);
      continue;
    }
    if (!strcmp(param.name, name)) return true;
  }
  return false;
}

hgr_status_t bench_example_set_inputs(hgr_executor_t* executor, const hgr_params_t* params) {
  hgr_status_t status = HGR_OK;
  for (size_t i = 0; !status && i < hgr_executor_input_count(executor); ++i) {
    hgr_tensor_info_t info;
    status = hgr_executor_input_info(executor, i, &info);
    if (status || given_by_params(params, info.name)) continue;
    float* data = calloc(info.bytes / 4 + 1, 4);
    if (!data) return HGR_STATUS(HGR_STATUS_RESOURCE_EXHAUSTED, "input %zu '%s': out of host memory", i, info.name);
    if (info.dtype.code == HGR_DTYPE_FLOAT && info.dtype.bits == 32)
      for (uint64_t e = 0; e < info.bytes / 4; ++e) data[e] = (float)((e * 7919 + i * 104729) % 2001) / 1000.0f - 1.0f;
    status = hgr_executor_set_input(executor, i, data, info.bytes);
    free(data);
  }
  return status;
}
