/* `hgr compile`: a model's programs built ahead of its first run (the caches
 * filled), and optionally written with the model as a bundle (hgr/model.h) that
 * `hgr run BUNDLE` loads with nothing compiled from source. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

static const char compile_usage[] =
    "usage: hgr compile MODEL.onnx [options]\n"
    "\n"
    "Loads the ONNX model, specializes it at the input shapes given (inputs with\n"
    "--input take their values, the others zeros), and runs it once on the devices:\n"
    "hgr builds one program per device of just the kernels the model uses, fills its\n"
    "program cache and the driver's own (PoCL compiles each kernel's work-group\n"
    "function at its first launch), so the first run of a later process compiles\n"
    "nothing. Run it at install time. With --bundle DIR it also writes the model and\n"
    "its programs' binaries for these devices into DIR; `hgr run DIR` (and\n"
    "hgr_model_create_bundle) loads them on a machine with the same devices, drivers\n"
    "and hgr, with empty caches and no compilation from source.\n"
    "\n"
    "options:\n"
    "  --devices SPEC,...     place the model on these devices (as `hgr run`)\n"
    "  --device KEY=SPEC      bind a graph device key to a device (default: as `hgr run`)\n"
    "  --input NAME=FILE.npy  an input's values and shape\n"
    "  --input-shape NAME=D0,D1,...  an input's shape (its values: zeros)\n"
    "  --bundle DIR           write a bundle into DIR (made if missing)\n"
    "  --verbose              print what the program cache did\n"
    "  -h, --help             this help\n";

#define MAX_BINDINGS 64

typedef struct compile_args_t {
  const char* model_path;
  const char* bundle;
  bool verbose;
  hgr_cli_inputs_t inputs;
  hgr_device_binding_t bindings[MAX_BINDINGS];
  size_t binding_count;
  hgr_cli_place_args_t place;
  hgr_cli_model_args_t model;
} compile_args_t;

static int parse_args(int argc, char** argv, compile_args_t* args) {
  memset(args, 0, sizeof(*args));
  hgr_place_options_init(&args->place.options);
  for (int i = 1; i < argc; ++i) {
    const char* arg = argv[i];
    const char* value = i + 1 < argc ? argv[i + 1] : NULL;
    int code = hgr_cli_place_parse("compile", &args->place, argc, argv, &i);
    if (code < 0) code = hgr_cli_inputs_parse("compile", &args->inputs, argc, argv, &i);
    if (code < 0)
      code = hgr_cli_binding_parse("compile", args->bindings, &args->binding_count, MAX_BINDINGS, argc, argv, &i);
    if (code < 0 && !strcmp(arg, "--input-shape")) code = hgr_cli_model_parse("compile", &args->model, argc, argv, &i);
    if (code > 0) return code;
    if (code == HGR_CLI_OK) continue;
    if (!strcmp(arg, "-h") || !strcmp(arg, "--help")) {
      fputs(compile_usage, stdout);
      return HGR_CLI_OK;
    } else if (!strcmp(arg, "--bundle")) {
      if (!value || !value[0]) return hgr_cli_usage_error("compile", "--bundle needs a directory");
      args->bundle = argv[++i];
    } else if (!strcmp(arg, "--verbose")) {
      args->verbose = true;
    } else if (arg[0] == '-') {
      return hgr_cli_usage_error("compile", "unknown option '%s'", arg);
    } else if (args->model_path) {
      return hgr_cli_usage_error("compile", "one model at a time ('%s' and '%s')", args->model_path, arg);
    } else {
      args->model_path = arg;
    }
  }
  if (!args->model_path) return hgr_cli_usage_error("compile", "name an ONNX model to compile");
  return -1;
}

static void print_line(void* user, const char* line) {
  (void)user;
  printf("  %s\n", line);
  fflush(stdout);
}

/* The model's inputs at the shapes given: --input arrays, else --input-shape with
 * zeros (*out_zeros: the buffers to free), else the declared shape if it has no
 * unknown dim. */
static hgr_status_t gather_inputs(compile_args_t* args, hgr_model_t* model, hgr_model_input_t* inputs,
                                  int64_t (*shapes)[HGR_MAX_DIMS], void** zeros) {
  size_t count = hgr_model_input_count(model);
  for (size_t m = 0; m < count; ++m) {
    hgr_model_io_t io;
    HGR_RETURN_IF_ERROR_CLI(hgr_model_input(model, m, &io));
    bool found = false;
    for (size_t i = 0; i < args->inputs.count && !found; ++i) {
      if (strcmp(args->inputs.names[i], io.name)) continue;
      const hgr_npy_array_t* array = NULL;
      HGR_RETURN_IF_ERROR_CLI(hgr_cli_inputs_array(&args->inputs, i, &array));
      inputs[m] = (hgr_model_input_t){array->dtype, array->ndim, array->shape, array->data, (size_t)array->bytes};
      found = true;
    }
    int32_t ndim = io.ndim;
    for (int32_t d = 0; d < ndim; ++d) shapes[m][d] = io.dims[d];
    for (size_t s = 0; s < args->model.shape_count && !found; ++s) {
      const hgr_cli_input_shape_t* given = &args->model.shapes[s];
      if (strlen(io.name) != given->name_length || strncmp(io.name, given->name, given->name_length)) continue;
      ndim = given->ndim;
      memcpy(shapes[m], given->shape, (size_t)ndim * sizeof(int64_t));
      found = true;
    }
    if (inputs[m].shape) continue;
    uint64_t elements = 1;
    for (int32_t d = 0; d < ndim; ++d) {
      if (shapes[m][d] < 0)
        return HGR_STATUS(HGR_STATUS_INVALID_ARGUMENT,
                          "input '%s': dimension %d is %s%s%s; give its shape (--input-shape %s=...) or values "
                          "(--input %s=FILE.npy)",
                          io.name, d, io.dim_names[d] ? "symbolic ('" : "unknown", io.dim_names[d] ? io.dim_names[d] : "",
                          io.dim_names[d] ? "')" : "", io.name, io.name);
      elements *= (uint64_t)shapes[m][d];
    }
    if (ndim < 0)
      return HGR_STATUS(HGR_STATUS_INVALID_ARGUMENT, "input '%s' declares no shape; give --input-shape %s=...", io.name,
                        io.name);
    size_t bytes = (size_t)(elements * hgr_dtype_element_bytes(io.dtype));
    if (!(zeros[m] = calloc(bytes ? bytes : 1, 1)))
      return HGR_STATUS(HGR_STATUS_RESOURCE_EXHAUSTED, "out of host memory for input '%s'", io.name);
    inputs[m] = (hgr_model_input_t){io.dtype, ndim, shapes[m], zeros[m], bytes};
  }
  return HGR_OK;
}

static hgr_status_t compile(compile_args_t* args, hgr_instance_t* instance) {
  hgr_model_options_t options;
  hgr_model_options_init(&options);
  options.executor.bindings = args->bindings;
  options.executor.binding_count = args->binding_count;
  if (args->verbose) options.executor.log = print_line;
  if (args->place.requested) options.place = &args->place.options;
  hgr_model_t* model = NULL;
  HGR_RETURN_IF_ERROR_CLI(hgr_model_create_onnx_file(instance, args->model_path, &options, &model));
  size_t count = hgr_model_input_count(model);
  hgr_model_input_t* inputs = calloc(count + 1, sizeof(*inputs));
  int64_t(*shapes)[HGR_MAX_DIMS] = calloc(count + 1, sizeof(*shapes));
  void** zeros = calloc(count + 1, sizeof(*zeros));
  hgr_status_t status = inputs && shapes && zeros ? gather_inputs(args, model, inputs, shapes, zeros)
                                                  : HGR_STATUS(HGR_STATUS_RESOURCE_EXHAUSTED, "out of host memory");
  hgr_model_run_t* run = NULL;
  if (!status) status = hgr_model_run(model, inputs, count, &run);
  if (!status) status = hgr_model_run_wait(run);
  hgr_model_run_release(run);
  if (!status) {
    hgr_model_report_t report;
    hgr_model_report(model, &report);
    const hgr_program_stats_t* p = &report.programs;
    printf("%s: %u program%s (%u compiled, %u from the program cache, %u left to the driver's own cache) in %.1f ms; "
           "warm-up: %u launches in %.1f ms\n",
           args->model_path, p->programs, p->programs == 1 ? "" : "s", p->from_source, p->from_cache,
           p->left_to_driver, p->build_ms, p->warm_launches, p->warm_ms);
  }
  if (!status && args->bundle) {
    status = hgr_model_write_bundle(model, args->model_path, args->bundle);
    if (!status) printf("bundle written to %s (hgr run %s runs it)\n", args->bundle, args->bundle);
  }
  for (size_t m = 0; zeros && m < count; ++m) free(zeros[m]);
  free(zeros);
  free(shapes);
  free(inputs);
  hgr_model_release(model);
  return status;
}

int hgr_cli_compile(int argc, char** argv) {
  compile_args_t args;
  int code = parse_args(argc, argv, &args);
  if (code >= 0) return code;
  hgr_instance_t* instance = NULL;
  hgr_status_t status = hgr_cli_instance_create(NULL, &instance);
  if (!status) status = compile(&args, instance);
  hgr_cli_inputs_free(&args.inputs);
  hgr_cli_instance_release(instance);
  return status ? hgr_cli_fail(status) : HGR_CLI_OK;
}
