/* libFuzzer target: ONNX model bytes (hgr_onnx_load_memory, no base directory so no
 * external file is read) and the same bytes as a TensorProto (hgr_onnx_read_tensor).
 * A model either loads into a graph whose every input and output answers, or
 * fails with a status naming why; nothing leaks and memory stays bounded (64 MiB
 * per tensor through the loader's limit). The model is also imported in stages, as
 * the model object imports a model that decides at run time (onnx_model.h), each
 * decision made up (all zeros, then all ones: a condition false or true, a count of
 * 0 or 1), up to 8 stages: each stage's graph has the decision as its output after
 * the carried values, and the next stage's inputs are the carried values and the
 * payloads. onnx_mutator.c, linked into this target, mutates inputs as ModelProtos
 * rather than as bytes. */
#include <string.h>

#include "fuzz.h"
#include "onnx_model.h"

static void check_status(hgr_status_t status) {
  hgr_status_code_t code = hgr_status_code(status);
  FUZZ_CHECK(code == HGR_STATUS_INVALID_ARGUMENT || code == HGR_STATUS_UNIMPLEMENTED ||
             code == HGR_STATUS_RESOURCE_EXHAUSTED || code == HGR_STATUS_DATA_LOSS);
  fuzz_consume_status(status);
}

/* The model in stages, every decision filled with fill (0 or 1 per element). */
static void import_in_stages(hgr__onnx_model_t* model, const hgr_onnx_options_t* options, uint8_t fill) {
  enum { MAX_STAGES = 8 };
  hgr__onnx_decision_t decisions[MAX_STAGES];
  uint8_t values[MAX_STAGES][64];
  hgr__onnx_stage_t stage;
  memset(&stage, 0, sizeof(stage));
  for (size_t count = 0; count < MAX_STAGES; ++count) {
    stage.decisions = decisions;
    stage.decision_count = count;
    hgr_graph_t* graph = NULL;
    hgr_params_t* params = NULL;
    hgr_status_t status = hgr__onnx_model_import_stage(model, options, &stage, &graph, &params, NULL, NULL);
    if (status) {
      FUZZ_CHECK(graph == NULL && params == NULL);
      check_status(status);
      return;
    }
    bool cut = stage.cut;
    if (cut) { /* the carried values, the decision, the payloads */
      FUZZ_CHECK(hgr_graph_output_count(graph) == stage.carried + 1 + stage.payloads);
      hgr_tensor_info_t info;
      FUZZ_CHECK(hgr_graph_output_info(graph, stage.carried, &info) == HGR_OK);
      size_t element = hgr_dtype_element_bytes(info.dtype);
      cut = info.bytes <= sizeof(values[count]); /* made-up decisions stay small */
      decisions[count] = (hgr__onnx_decision_t){info.dtype, info.ndim, {0}, values[count], (size_t)info.bytes};
      memcpy(decisions[count].shape, info.shape, sizeof(int64_t) * (size_t)info.ndim);
      memset(values[count], 0, sizeof(values[count]));
      for (size_t i = 0; cut && i < info.bytes; i += element) {
        if (!fill) continue;
        if (info.dtype.code == HGR_DTYPE_FLOAT) memcpy(values[count] + i, &(float){1}, sizeof(float));
        else values[count][i] = 1; /* int32 1 in little-endian, or true */
      }
      stage.resume = stage.at;
      stage.resume_after = stage.after;
      stage.resume_asked = stage.at_asked;
      stage.resume_in_loop = stage.in_loop;
    }
    hgr_graph_release(graph);
    hgr_params_release(params);
    if (!cut) return;
  }
}

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
    FUZZ_CHECK(graph == NULL && params == NULL);
    check_status(status);
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
  hgr__onnx_model_t* model = NULL;
  status = hgr__onnx_model_parse(hgr_allocator_system(), data, size, NULL, options, &model);
  if (status) {
    check_status(status);
  } else {
    import_in_stages(model, options, 0);
    import_in_stages(model, options, 1);
    hgr__onnx_model_free(model);
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
