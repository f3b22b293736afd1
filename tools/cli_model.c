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
  if (!strcmp(argv[*i], "--no-prepack")) {
    model->no_prepack = true;
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

/* One line per node the graph passes made (hgr_passes_options_t's log). */
static void print_fusion(void* user, const char* message) {
  (void)user;
  printf("  fused: %s\n", message);
}

/* The graph passes the load runs: all, but elementwise fusion with --no-fusion and
 * the packing of matmul weights with --no-prepack; each fused node listed with
 * list_fusions. */
static void passes_options(const hgr_cli_model_args_t* model, hgr_passes_options_t* passes) {
  hgr_passes_options_init(passes);
  passes->elementwise = !model->no_fusion;
  passes->gemm_pack = !model->no_prepack;
  if (model->list_fusions) passes->log = print_fusion;
}

/* "PATH: fused patterns: 2 layer norms (20 nodes), ...": every pattern the report
 * counts, in pipeline order. */
static void print_fusions(const char* path, const hgr_passes_report_t* report) {
  hgr_passes_count_t counts[HGR_PASSES_COUNT_MAX];
  size_t count = hgr_passes_report_counts(report, counts);
  printf("%s: fused patterns:", path);
  for (size_t k = 0; k < count; ++k)
    printf("%s %u %s (%u nodes)", k ? "," : "", counts[k].made, counts[k].label, counts[k].replaced);
  printf("\n");
}

#if HGR_HAS_ONNX
/* The --fix-input values as loader options: constants of the model from creation on. */
static hgr_status_t onnx_options(const hgr_cli_model_args_t* model, hgr_cli_inputs_t* inputs,
                                 hgr_onnx_options_t* options) {
  size_t input_count = inputs ? inputs->count : 0;
  for (size_t f = 0; f < model->fixed_count; ++f) {
    size_t i = 0;
    while (i < input_count && strcmp(inputs->names[i], model->fixed[f])) ++i;
    if (i == input_count)
      return HGR_STATUS(HGR_STATUS_INVALID_ARGUMENT, "--fix-input %s: no --input %s=FILE gives its value",
                        model->fixed[f], model->fixed[f]);
    const hgr_npy_array_t* array = NULL;
    HGR_RETURN_IF_ERROR_CLI(hgr_cli_inputs_array(inputs, i, &array));
    HGR_RETURN_IF_ERROR_CLI(hgr_onnx_options_set_input_value(options, model->fixed[f], array->dtype, array->shape,
                                                             array->ndim, array->data, (size_t)array->bytes));
  }
  hgr_passes_options_t passes;
  passes_options(model, &passes);
  hgr_onnx_options_set_passes(options, &passes);
  if (model->loader_budget) hgr_onnx_options_set_max_loader_bytes(options, model->loader_budget);
  return HGR_OK;
}

/* "float32 [N, 3, 224, 224]": dims by value, name, or '?' */
static void print_io(const char* what, const hgr_model_io_t* io) {
  char dtype[32];
  printf("  %s '%s': %s", what, io->name, io->dtype.bits ? hgr_dtype_format(io->dtype, dtype, sizeof(dtype)) : "?");
  if (io->ndim < 0) {
    printf(" (no shape declared)\n");
    return;
  }
  printf(" [");
  for (int32_t d = 0; d < io->ndim; ++d) {
    if (io->dims[d] >= 0) printf("%s%lld", d ? ", " : "", (long long)io->dims[d]);
    else printf("%s%s", d ? ", " : "", io->dim_names[d] ? io->dim_names[d] : "?");
  }
  printf("]%s\n", io->decides_shapes ? " (its values decide shapes)" : "");
}

static void print_symbolic(const char* path, const hgr_model_t* m) {
  printf("%s: inputs and outputs as the model declares them (names: symbolic dims, '?': unknown):\n", path);
  for (size_t i = 0; i < hgr_model_input_count(m); ++i) {
    hgr_model_io_t io;
    if (!hgr_model_input(m, i, &io)) print_io("input", &io);
  }
  for (size_t i = 0; i < hgr_model_output_count(m); ++i) {
    hgr_model_io_t io;
    if (!hgr_model_output(m, i, &io)) print_io("output", &io);
  }
}

/* The shape of model input io: --input-shape, else the --input array's, else the
 * model's own when it fixes every dim; its data when an --input array gives it. */
static hgr_status_t cli_input(const hgr_cli_model_args_t* model, hgr_cli_inputs_t* inputs, const hgr_model_io_t* io,
                              hgr_model_input_t* out_input, int64_t* shape_storage, bool* out_missing) {
  memset(out_input, 0, sizeof(*out_input));
  out_input->dtype = io->dtype;
  out_input->shape = shape_storage;
  const hgr_npy_array_t* array = NULL;
  for (size_t i = 0; inputs && i < inputs->count; ++i)
    if (!strcmp(inputs->names[i], io->name)) HGR_RETURN_IF_ERROR_CLI(hgr_cli_inputs_array(inputs, i, &array));
  if (array) {
    out_input->dtype = array->dtype;
    out_input->ndim = array->ndim;
    memcpy(shape_storage, array->shape, sizeof(int64_t) * (size_t)array->ndim);
    out_input->data = array->data;
    out_input->bytes = (size_t)array->bytes;
  }
  for (size_t i = 0; i < model->shape_count; ++i) {
    const hgr_cli_input_shape_t* s = &model->shapes[i];
    if (strlen(io->name) != s->name_length || strncmp(io->name, s->name, s->name_length)) continue;
    out_input->ndim = s->ndim;
    memcpy(shape_storage, s->shape, sizeof(int64_t) * (size_t)s->ndim);
    if (array && (array->ndim != s->ndim || memcmp(array->shape, s->shape, sizeof(int64_t) * (size_t)s->ndim)))
      out_input->data = NULL, out_input->bytes = 0; /* the shape given wins; its values are not known */
    return HGR_OK;
  }
  if (array) return HGR_OK;
  bool known = io->ndim >= 0;
  for (int32_t d = 0; known && d < io->ndim; ++d) known = io->dims[d] >= 0;
  if (!known) {
    *out_missing = true;
    int32_t d = 0;
    while (d < io->ndim && io->dims[d] >= 0) ++d;
    char what[320];
    if (io->ndim < 0) snprintf(what, sizeof(what), "the model declares no shape");
    else if (io->dim_names[d]) snprintf(what, sizeof(what), "dimension %d is symbolic ('%.256s')", (int)d, io->dim_names[d]);
    else snprintf(what, sizeof(what), "dimension %d is unknown", (int)d);
    return HGR_STATUS(HGR_STATUS_INVALID_ARGUMENT, "graph input '%s': %s; give the input's shape (hgr: --input-shape "
                      "%s=D0,D1,... or --input %s=FILE.npy)", io->name, what, io->name, io->name);
  }
  out_input->ndim = io->ndim;
  memcpy(shape_storage, io->dims, sizeof(int64_t) * (size_t)io->ndim);
  return HGR_OK;
}

/* The ONNX model at path as a model object on instance (NULL: one that only makes
 * graphs) with options (NULL: the defaults), whose loader options are model's. */
static hgr_status_t create_model(const char* path, const hgr_cli_model_args_t* model, hgr_cli_inputs_t* inputs,
                                 hgr_instance_t* instance, const hgr_model_options_t* options, hgr_model_t** out_model) {
  *out_model = NULL;
  hgr_onnx_options_t* onnx = NULL;
  HGR_RETURN_IF_ERROR_CLI(hgr_onnx_options_create(&onnx));
  hgr_status_t status = onnx_options(model, inputs, onnx);
  hgr_model_options_t model_options;
  if (options) model_options = *options;
  else hgr_model_options_init(&model_options);
  model_options.onnx = onnx;
  if (!status) status = hgr_model_create_onnx_file(instance, path, &model_options, out_model);
  hgr_onnx_options_release(onnx); /* the model keeps a copy */
  return status;
}

/* m's inputs in its order, each as cli_input gives it, in one allocation (free it):
 * the struct, then the inputs, then their shapes. print: as hgr_cli_model_load. */
typedef struct model_inputs_t {
  hgr_model_input_t* inputs;
  size_t count;
} model_inputs_t;

static hgr_status_t model_inputs(const char* path, hgr_cli_model_args_t* model, hgr_cli_inputs_t* inputs,
                                 const hgr_model_t* m, bool print, model_inputs_t** out_inputs) {
  *out_inputs = NULL;
  size_t count = hgr_model_input_count(m);
  model_inputs_t* given =
      calloc(1, sizeof(*given) + (count + 1) * (sizeof(hgr_model_input_t) + sizeof(int64_t[HGR_MAX_DIMS])));
  if (!given) return HGR_STATUS(HGR_STATUS_RESOURCE_EXHAUSTED, "out of host memory for %zu inputs", count);
  given->inputs = (hgr_model_input_t*)(given + 1);
  int64_t(*shapes)[HGR_MAX_DIMS] = (int64_t(*)[HGR_MAX_DIMS])(given->inputs + count + 1);
  given->count = count;
  hgr_status_t status = HGR_OK;
  for (size_t i = 0; !status && i < count; ++i) {
    hgr_model_io_t io;
    status = hgr_model_input(m, i, &io);
    bool missing = false;
    if (!status) status = cli_input(model, inputs, &io, &given->inputs[i], shapes[i], &missing);
    if (status && print && missing) { /* what `hgr check` can say without shapes */
      print_symbolic(path, m);
      model->shapes_missing = true;
    }
  }
  if (status) free(given);
  else *out_inputs = given;
  return status;
}

/* The ONNX model at path specialized to the --input shapes and values: inputs whose
 * values decide shapes are found by the model and become constants (added to
 * model->fixed, so that the run does not set them). */
static hgr_status_t load_onnx(const char* path, hgr_cli_model_args_t* model, hgr_cli_inputs_t* inputs, bool print,
                              hgr_graph_t** out_graph, hgr_params_t** out_params) {
  hgr_model_t* m = NULL;
  model_inputs_t* given = NULL;
  hgr_status_t status = create_model(path, model, inputs, NULL, NULL, &m);
  if (!status) status = model_inputs(path, model, inputs, m, print, &given);
  size_t count = given ? given->count : 0;
  if (!status) status = hgr_model_graph(m, given->inputs, count, out_graph, out_params);
  for (size_t i = 0; !status && i < count; ++i) {
    hgr_model_io_t io;
    if (!hgr_model_input(m, i, &io) && io.decides_shapes && model->fixed_count < HGR_CLI_MAX_SHAPES &&
        !hgr_cli_model_fixed(model, io.name)) {
      for (size_t k = 0; inputs && k < inputs->count; ++k) /* the --input name (argv) outlives the model */
        if (!strcmp(inputs->names[k], io.name)) model->fixed[model->fixed_count++] = inputs->names[k];
      if (print) printf("%s: input '%s' decides shapes: its --input values are constants of this run\n", path, io.name);
    }
  }
  hgr_model_report_t report;
  hgr_model_report(m, &report);
  free(given);
  hgr_model_release(m);
  if (!status && print)
    printf("%s: ONNX IR %lld, opset %lld: %u nodes -> %u graph nodes (%u folded at load, %u removed, %u fused; "
           "%u elementwise nodes fused into %u kernels)\n",
           path, (long long)report.onnx.ir_version, (long long)report.onnx.opset, report.onnx.onnx_nodes,
           report.onnx.graph_nodes, report.onnx.folded, report.onnx.removed, report.onnx.fused,
           report.onnx.elementwise_fused, report.onnx.elementwise_groups);
  if (!status && print) print_fusions(path, &report.onnx.passes);
  if (!status && print)
    printf("%s: the loader held at most %llu bytes on the host at once (--loader-budget SIZE bounds it)\n", path,
           (unsigned long long)report.onnx.loader_peak_bytes);
  return status;
}
#endif

hgr_status_t hgr_cli_model_open_staged(const char* path, hgr_cli_model_args_t* model, hgr_cli_inputs_t* inputs,
                                      hgr_instance_t* instance, const hgr_model_options_t* options,
                                      hgr_status_t one_graph, hgr_model_t** out_model, hgr_status_t* out_decision) {
  *out_model = NULL;
  *out_decision = HGR_OK;
  /* The loader refuses with UNIMPLEMENTED both an op it lacks and a value needed at
   * load that the data computes; hgr_model_specialize tells them apart: at the same
   * shapes it imports the model in stages, and a first stage that ends at a decision
   * is FAILED_PRECONDITION (hgr/model.h). */
  if (hgr_status_code(one_graph) != HGR_STATUS_UNIMPLEMENTED || !has_suffix(path, ".onnx")) return one_graph;
#if HGR_HAS_ONNX
  hgr_model_t* m = NULL;
  model_inputs_t* given = NULL;
  hgr_specialization_t* first = NULL;
  hgr_status_t status = create_model(path, model, inputs, instance, options, &m);
  if (!status) status = model_inputs(path, model, inputs, m, false, &given);
  if (!status) status = hgr_model_specialize(m, given->inputs, given->count, &first);
  free(given);
  hgr_specialization_release(first); /* one executor ran the whole model: the model object runs it as well */
  if (hgr_status_code(status) == HGR_STATUS_FAILED_PRECONDITION) { /* its first stage stays in the model's cache */
    *out_decision = status;
    status = HGR_OK;
  }
  if (hgr_status_code(status) == HGR_STATUS_UNIMPLEMENTED) { /* the same refusal, in stages too */
    hgr_status_free(status);
    hgr_model_release(m);
    return one_graph;
  }
  hgr_status_free(one_graph);
  if (status) hgr_model_release(m);
  else *out_model = m;
  return status;
#else
  (void)model, (void)inputs, (void)instance, (void)options;
  return one_graph;
#endif
}

hgr_status_t hgr_cli_model_load(const char* path, hgr_cli_model_args_t* model, hgr_cli_inputs_t* inputs,
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
    passes_options(model, &passes);
    hgr_passes_report_t report;
    hgr_graph_t* fused = NULL;
    HGR_RETURN_IF_ERROR_CLI(hgr_graph_load_file(path, out_graph));
    HGR_RETURN_IF_ERROR_CLI(hgr_passes_apply(*out_graph, NULL, &passes, &fused, &report));
    hgr_graph_release(*out_graph);
    *out_graph = fused;
    if (print && (report.conv_epilogues || report.gemm_epilogues || report.elementwise_groups || report.layer_norms ||
                  report.gelus))
      print_fusions(path, &report);
    return HGR_OK;
  }
#if HGR_HAS_ONNX
  return load_onnx(path, model, inputs, print, out_graph, out_params);
#else
  (void)inputs, (void)print;
  return HGR_STATUS(HGR_STATUS_UNIMPLEMENTED, "%s: this hgr was built without the ONNX loader (HGR_ONNX=OFF)", path);
#endif
}
