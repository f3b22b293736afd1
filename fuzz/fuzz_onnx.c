/* libFuzzer target: ONNX model bytes (hgr_onnx_load_memory, no base directory so no
 * external file is read) and the same bytes as a TensorProto (hgr_onnx_read_tensor).
 * A model either loads into a graph whose every input and output answers, or
 * fails with a status naming why; nothing leaks and memory stays bounded (64 MiB
 * per tensor through the loader's limit). onnx_mutator.c, linked into this target,
 * mutates inputs as ModelProtos rather than as bytes. */
#include "fuzz.h"

int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  hgr_onnx_options_t* options = NULL;
  FUZZ_CHECK(hgr_onnx_options_create(&options) == HGR_OK);
  hgr_onnx_options_set_max_tensor_bytes(options, 64u << 20);
  /* Well inside -rss_limit_mb: a model that amplifies meets the budget's refusal,
   * which is what is fuzzed, not libFuzzer's out-of-memory report. */
  hgr_onnx_options_set_max_loader_bytes(options, 256u << 20);
  hgr_graph_t* graph = (hgr_graph_t*)&graph; /* must be overwritten with NULL */
  hgr_params_t* params = (hgr_params_t*)&params;
  hgr_onnx_report_t report;
  hgr_status_t status = hgr_onnx_load_memory(data, size, NULL, options, &graph, &params, &report);
  FUZZ_CHECK(report.loader_peak_bytes <= 256u << 20); /* the budget holds, refused or not */
  if (status) {
    hgr_status_code_t code = hgr_status_code(status);
    FUZZ_CHECK(code == HGR_STATUS_INVALID_ARGUMENT || code == HGR_STATUS_UNIMPLEMENTED ||
               code == HGR_STATUS_RESOURCE_EXHAUSTED || code == HGR_STATUS_DATA_LOSS);
    FUZZ_CHECK(graph == NULL && params == NULL);
    fuzz_consume_status(status);
  } else {
    FUZZ_CHECK(graph && params);
    FUZZ_CHECK(hgr_graph_output_count(graph) > 0);
    FUZZ_CHECK(report.graph_nodes <= hgr_graph_node_count(graph));
    for (size_t i = 0; i < hgr_graph_input_count(graph); ++i) {
      hgr_tensor_info_t info;
      FUZZ_CHECK(hgr_graph_input_info(graph, i, &info) == HGR_OK);
    }
    for (size_t i = 0; i < hgr_graph_output_count(graph); ++i) {
      hgr_tensor_info_t info;
      FUZZ_CHECK(hgr_graph_output_info(graph, i, &info) == HGR_OK);
    }
    hgr_graph_release(graph);
    hgr_params_release(params);
  }
  hgr_onnx_options_release(options);

  hgr_dtype_t dtype;
  int64_t shape[HGR_MAX_DIMS];
  int32_t ndim = 0;
  void* tensor = (void*)&tensor;
  size_t bytes = 0;
  char* name = NULL;
  status = hgr_onnx_read_tensor(data, size, &dtype, shape, &ndim, &tensor, &bytes, &name);
  if (status) {
    FUZZ_CHECK(tensor == NULL);
    fuzz_consume_status(status);
  } else {
    uint64_t count = 1;
    for (int32_t d = 0; d < ndim; ++d) count *= (uint64_t)shape[d];
    FUZZ_CHECK(count * hgr_dtype_element_bytes(dtype) == bytes);
    FUZZ_CHECK(name != NULL);
    free(tensor);
    free(name);
  }
  return 0;
}
