/* Loading the graph a command names: TVM graph JSON, or an ONNX model (.onnx),
 * whose input shapes come from --input-shape and the --input arrays. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "cli.h"

bool hgr_cli_model_fixed(const hgr_cli_model_args_t* model, const char* name) {
  for (size_t i = 0; i < model->fixed_count; ++i)
    if (!strcmp(model->fixed[i], name)) return true;
  return false;
}

int hgr_cli_model_parse(const char* command, hgr_cli_model_args_t* model, int argc, char** argv, int* i) {
  const char* value = *i + 1 < argc ? argv[*i + 1] : NULL;
  if (!strcmp(argv[*i], "--fix-input")) {
    if (!value || !value[0]) return hgr_cli_usage_error(command, "--fix-input takes the name of an --input");
    if (model->fixed_count == HGR_CLI_MAX_SHAPES) return hgr_cli_usage_error(command, "too many --fix-input options");
    model->fixed[model->fixed_count++] = value;
    ++*i;
    return HGR_CLI_OK;
  }
  if (!strcmp(argv[*i], "--no-fusion")) {
    model->no_fusion = true;
    return HGR_CLI_OK;
  }
  if (!strcmp(argv[*i], "--loader-budget")) {
    int code = hgr_cli_number_flag(command, "--loader-budget", value, true, 1, UINT64_MAX, &model->loader_budget);
    if (code == HGR_CLI_OK) ++*i;
    return code;
  }
  if (strcmp(argv[*i], "--input-shape")) return -1;
  const char* eq = value ? strchr(value, '=') : NULL;
  if (!eq || eq == value)
    return hgr_cli_usage_error(command, "--input-shape takes NAME=D0,D1,... (e.g. data=1,3,224,224)");
  if (model->shape_count == HGR_CLI_MAX_SHAPES) return hgr_cli_usage_error(command, "too many --input-shape options");
  hgr_cli_input_shape_t* s = &model->shapes[model->shape_count];
  s->name = value;
  s->name_length = (size_t)(eq - value);
  s->ndim = 0;
  const char* p = eq + 1;
  while (*p) {
    char dim[32];
    size_t length = strcspn(p, ",");
    uint64_t extent = 0;
    hgr_status_t status = HGR_OK;
    if (length >= sizeof(dim) || s->ndim == HGR_MAX_DIMS)
      status = HGR_STATUS(HGR_STATUS_OUT_OF_RANGE, "too many dims or digits");
    if (!status) {
      memcpy(dim, p, length);
      dim[length] = 0;
      status = hgr_cli_parse_number(dim, false, 0, INT64_MAX, &extent);
    }
    if (status) {
      int code = hgr_cli_usage_error(command, "--input-shape %s: %s; dims are non-negative integers separated by "
                                     "commas (at most %d)", value, hgr_status_message(status), HGR_MAX_DIMS);
      hgr_status_free(status);
      return code;
    }
    s->shape[s->ndim++] = (int64_t)extent;
    p += length;
    if (*p) ++p;
  }
  ++model->shape_count;
  ++*i;
  return HGR_CLI_OK;
}

static bool has_suffix(const char* path, const char* suffix) {
  size_t n = strlen(path), m = strlen(suffix);
  return n >= m && !strcasecmp(path + n - m, suffix);
}

hgr_status_t hgr_cli_load_array(const char* path, hgr_npy_array_t* out_array) {
  if (!has_suffix(path, ".pb")) return hgr_npy_load_file(path, out_array);
  memset(out_array, 0, sizeof(*out_array));
#if HGR_HAS_ONNX
  size_t data_bytes = 0;
  hgr_status_t status = hgr_onnx_read_tensor_file(path, &out_array->dtype, out_array->shape, &out_array->ndim,
                                                  &out_array->data, &data_bytes, NULL);
  out_array->bytes = data_bytes;
  return status;
#else
  return HGR_STATUS(HGR_STATUS_UNIMPLEMENTED, "%s: .pb tensors need the ONNX loader (HGR_ONNX=OFF here)", path);
#endif
}

#if HGR_HAS_ONNX
static hgr_status_t onnx_options(const hgr_cli_model_args_t* model, hgr_cli_inputs_t* inputs,
                                 hgr_onnx_options_t* options) {
  size_t input_count = inputs ? inputs->count : 0;
  for (size_t i = 0; i < input_count; ++i) { /* an --input array's shape first; --input-shape overrides */
    const hgr_npy_array_t* array = NULL;
    const char* name = inputs->names[i];
    HGR_RETURN_IF_ERROR_CLI(hgr_cli_inputs_array(inputs, i, &array));
    HGR_RETURN_IF_ERROR_CLI(hgr_cli_model_fixed(model, name)
                                ? hgr_onnx_options_set_input_value(options, name, array->dtype, array->shape,
                                                                   array->ndim, array->data, (size_t)array->bytes)
                                : hgr_onnx_options_set_input_shape(options, name, array->shape, array->ndim));
  }
  for (size_t f = 0; f < model->fixed_count; ++f) {
    size_t i = 0;
    while (i < input_count && strcmp(inputs->names[i], model->fixed[f])) ++i;
    if (i == input_count)
      return HGR_STATUS(HGR_STATUS_INVALID_ARGUMENT, "--fix-input %s: no --input %s=FILE gives its value",
                        model->fixed[f], model->fixed[f]);
  }
  for (size_t i = 0; i < model->shape_count; ++i) {
    const hgr_cli_input_shape_t* s = &model->shapes[i];
    char name[256];
    snprintf(name, sizeof(name), "%.*s", (int)s->name_length, s->name);
    HGR_RETURN_IF_ERROR_CLI(hgr_onnx_options_set_input_shape(options, name, s->shape, s->ndim));
  }
  return HGR_OK;
}
#endif


hgr_status_t hgr_cli_model_load(const char* path, const hgr_cli_model_args_t* model, hgr_cli_inputs_t* inputs,
                                bool print, hgr_graph_t** out_graph, hgr_params_t** out_params) {
  *out_params = NULL;
  if (!has_suffix(path, ".onnx")) {
    if (model->shape_count || model->fixed_count)
      return HGR_STATUS(HGR_STATUS_INVALID_ARGUMENT, "--input-shape and --fix-input are for ONNX models; %s is graph "
                        "JSON", path);
    if (model->loader_budget)
      return HGR_STATUS(HGR_STATUS_INVALID_ARGUMENT, "--loader-budget bounds the ONNX loader; %s is graph JSON", path);
    /* The graph passes, as an ONNX load runs them (without params: a conv2d takes its
     * activation, not the constants after it); a placed graph stays as it is. */
    hgr_passes_options_t passes;
    hgr_passes_options_init(&passes);
    passes.elementwise = !model->no_fusion;
    hgr_passes_report_t report;
    hgr_graph_t* fused = NULL;
    HGR_RETURN_IF_ERROR_CLI(hgr_graph_load_file(path, out_graph));
    HGR_RETURN_IF_ERROR_CLI(hgr_passes_apply(*out_graph, NULL, &passes, &fused, &report));
    hgr_graph_release(*out_graph);
    *out_graph = fused;
    if (print && (report.conv_epilogues || report.elementwise_groups))
      printf("%s: %u nodes fused into %u conv2d epilogues, %u elementwise nodes into %u kernels\n", path,
             report.conv_epilogue_fused, report.conv_epilogues, report.elementwise_fused, report.elementwise_groups);
    return HGR_OK;
  }
#if HGR_HAS_ONNX
  hgr_onnx_options_t* options = NULL;
  HGR_RETURN_IF_ERROR_CLI(hgr_onnx_options_create(&options));
  hgr_onnx_report_t report;
  hgr_status_t status = onnx_options(model, inputs, options);
  hgr_onnx_options_set_fuse_elementwise(options, !model->no_fusion);
  if (model->loader_budget) hgr_onnx_options_set_max_loader_bytes(options, model->loader_budget);
  if (!status) status = hgr_onnx_load_file(path, options, out_graph, out_params, &report);
  hgr_onnx_options_release(options);
  if (!status && print)
    printf("%s: ONNX IR %lld, opset %lld: %u nodes -> %u graph nodes (%u folded at load, %u removed, %u fused; "
           "%u elementwise nodes fused into %u kernels)\n",
           path, (long long)report.ir_version, (long long)report.opset, report.onnx_nodes, report.graph_nodes,
           report.folded, report.removed, report.fused, report.elementwise_fused, report.elementwise_groups);
  if (!status && print)
    printf("%s: the loader held at most %llu bytes on the host at once (--loader-budget SIZE bounds it)\n", path,
           (unsigned long long)report.loader_peak_bytes);
  return status;
#else
  (void)inputs, (void)print;
  return HGR_STATUS(HGR_STATUS_UNIMPLEMENTED, "%s: this hgr was built without the ONNX loader (HGR_ONNX=OFF)", path);
#endif
}
