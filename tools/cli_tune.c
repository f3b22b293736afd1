/* `hgr tune`: measures the tile candidates of every node that has some and stores
 * the winners in the tuning file next to the program cache (hgr/tune.h), which
 * later executors (and `hgr run`) read. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

static const char tune_usage[] =
    "usage: hgr tune MODEL.onnx|GRAPH.json [options]\n"
    "\n"
    "Measures every tile candidate of every node whose op offers some (the GEMM of\n"
    "dense, matmul, batch_matmul and 1x1 conv2d, conv2d's register-blocked layers,\n"
    "the LSTM/GRU/RNN recurrences' R layout) on the device the node runs on, one\n"
    "executor per candidate with profiling, and writes the fastest per layer to\n"
    "tuning.tsv in the program cache directory ($HGR_CACHE_DIR, else\n"
    "$XDG_CACHE_HOME/hgr, else ~/.cache/hgr). Later runs take those tiles;\n"
    "`hgr run --verbose` shows per node which tile and whether from the limits or\n"
    "tuning. Inputs not given are zeros (a GEMM's time does not depend on values).\n"
    "\n"
    "options:\n"
    "  --devices SPEC,...     place the graph on these devices (as `hgr run`)\n"
    "  --device KEY=SPEC      bind a graph device key to a device\n"
    "  --params FILE          a graph's params (TVM .params)\n"
    "  --input NAME=FILE.npy  an input's values (also fixes an ONNX input's shape)\n"
    "  --input-shape NAME=D0,D1,...  an ONNX input's shape\n"
  HGR_CLI_LOADER_FLAGS
    "  --runs N               timed runs per candidate, after one untimed (default 5)\n"
    "  --dry-run              measure and print, write nothing\n"
    "  -h, --help             this help\n";

#define MAX_ITEMS 64

typedef struct tune_args_t {
  const char* graph_path;
  const char* params_path;
  hgr_cli_inputs_t inputs; /* --input: each file read once */
  hgr_device_binding_t bindings[MAX_ITEMS];
  size_t binding_count;
  uint64_t runs;
  bool dry_run;
  hgr_cli_place_args_t place;
  hgr_cli_model_args_t model;
} tune_args_t;

static int parse_args(int argc, char** argv, tune_args_t* args) {
  memset(args, 0, sizeof(*args));
  args->runs = 5;
  hgr_place_options_init(&args->place.options);
  for (int i = 1; i < argc; ++i) {
    const char* arg = argv[i];
    const char* value = i + 1 < argc ? argv[i + 1] : NULL;
    int code = hgr_cli_place_parse("tune", &args->place, argc, argv, &i);
    if (code > 0) return code;
    if (code == HGR_CLI_OK) continue;
    code = hgr_cli_model_parse("tune", &args->model, argc, argv, &i);
    if (code > 0) return code;
    if (code == HGR_CLI_OK) continue;
    code = hgr_cli_inputs_parse("tune", &args->inputs, argc, argv, &i);
    if (code < 0) code = hgr_cli_binding_parse("tune", args->bindings, &args->binding_count, MAX_ITEMS, argc, argv, &i);
    if (code > 0) return code;
    if (code == HGR_CLI_OK) continue;
    if (!strcmp(arg, "-h") || !strcmp(arg, "--help")) {
      fputs(tune_usage, stdout);
      return HGR_CLI_OK;
    } else if (!strcmp(arg, "--params")) {
      if (!value) return hgr_cli_usage_error("tune", "--params needs a file");
      args->params_path = argv[++i];
    } else if (!strcmp(arg, "--runs")) {
      if (hgr_cli_number_flag("tune", "--runs", value, false, 1, 1000, &args->runs)) return HGR_CLI_USAGE;
      ++i;
    } else if (!strcmp(arg, "--dry-run")) {
      args->dry_run = true;
    } else if (arg[0] == '-') {
      return hgr_cli_usage_error("tune", "unknown option '%s'", arg);
    } else if (args->graph_path) {
      return hgr_cli_usage_error("tune", "one model or graph at a time ('%s' and '%s')", args->graph_path, arg);
    } else {
      args->graph_path = arg;
    }
  }
  if (!args->graph_path) return hgr_cli_usage_error("tune", "name a model or graph to tune");
  return -1;
}

static void print_line(void* user, const char* line) {
  (void)user;
  printf("  %s\n", line);
  fflush(stdout);
}

/* The given params and the --input arrays, in one set for the executors. */
static hgr_status_t gather_params(tune_args_t* args, hgr_params_t* model_params, hgr_params_t** out_params) {
  *out_params = NULL;
  hgr_params_t* params = NULL;
  if (args->params_path) HGR_RETURN_IF_ERROR_CLI(hgr_params_load_file(args->params_path, &params));
  else HGR_RETURN_IF_ERROR_CLI(hgr_params_create(&params));
  hgr_status_t status = HGR_OK;
  for (size_t p = 0; model_params && p < hgr_params_count(model_params) && !status; ++p) {
    hgr_tensor_info_t info;
    const void* data = NULL;
    status = hgr_params_get(model_params, p, &info, &data);
    if (!status) status = hgr_params_add(params, info.name, info.dtype, info.ndim, info.shape, data, (size_t)info.bytes);
  }
  for (size_t i = 0; i < args->inputs.count && !status; ++i) {
    if (hgr_cli_model_fixed(&args->model, args->inputs.names[i])) continue;
    const hgr_npy_array_t* array = NULL; /* read once, maybe by the ONNX loader */
    status = hgr_cli_inputs_array(&args->inputs, i, &array);
    if (status) break;
    status = hgr_params_add(params, args->inputs.names[i], array->dtype, array->ndim, array->shape, array->data,
                            (size_t)array->bytes);
    hgr_cli_inputs_drop(&args->inputs, i);
  }
  if (status) hgr_params_release(params);
  else *out_params = params;
  return status;
}

int hgr_cli_tune(int argc, char** argv) {
  tune_args_t args;
  int code = parse_args(argc, argv, &args);
  if (code >= 0) return code;
  /* Tuning times kernels on this host's devices: ranks sharing a host would disturb
   * each other's timings and write the same records. */
  if (hgr_cli_ranks_launched())
    return hgr_cli_usage_error("tune", "runs in one process: tune each host's devices by running it there "
                                       "without mpirun");
  hgr_instance_t* instance = NULL;
  hgr_graph_t* graph = NULL;
  hgr_params_t* model_params = NULL;
  hgr_params_t* params = NULL;
  hgr_placement_t* placement = NULL;
  hgr_status_t status = hgr_cli_model_load(args.graph_path, &args.model, &args.inputs, true, &graph, &model_params);
  hgr_instance_options_t instance_options;
  hgr_instance_options_init(&instance_options);
  if (!status) status = hgr_instance_create(&instance_options, &instance);
  hgr_executor_options_t options;
  hgr_executor_options_init(&options);
  options.bindings = args.bindings;
  options.binding_count = args.binding_count;
  if (!status) status = hgr_cli_place_apply(&args.place, instance, NULL, true, &graph, &placement);
  if (!status) status = gather_params(&args, model_params, &params);
  options.params = params;
  hgr_tune_options_t tune;
  hgr_tune_options_init(&tune);
  tune.runs = (uint32_t)args.runs;
  tune.write = !args.dry_run;
  tune.progress = print_line;
  hgr_tune_summary_t summary;
  if (!status) {
    printf("tuning %s: every tile candidate, %llu timed runs each\n", args.graph_path, (unsigned long long)args.runs);
    status = hgr_tune_graph(instance, graph, &options, &tune, &summary);
  }
  if (!status && summary.layers) {
    printf("%u layers (%u nodes): %.3f ms with the limits' tiles, %.3f ms tuned (%+.1f%%); %u layers changed\n",
           summary.layers, summary.nodes, summary.limits_ms, summary.tuned_ms,
           summary.limits_ms > 0 ? 100.0 * (summary.tuned_ms - summary.limits_ms) / summary.limits_ms : 0.0,
           summary.changed);
    if (summary.path[0]) printf("tuning records written to %s\n", summary.path);
    else printf("nothing written (--dry-run)\n");
  }
  hgr_placement_release(placement);
  hgr_params_release(params);
  hgr_params_release(model_params);
  hgr_graph_release(graph);
  hgr_instance_release(instance);
  hgr_cli_inputs_free(&args.inputs);
  return status ? hgr_cli_fail(status) : HGR_CLI_OK;
}
