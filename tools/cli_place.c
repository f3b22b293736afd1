/* Placement on the command line: the --devices, --place and --place-report flags
 * that `hgr run`, `hgr check` and `hgr place` share, and `hgr place` itself. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "cli.h"

int hgr_cli_place_parse(const char* command, hgr_cli_place_args_t* place, int argc, char** argv, int* i) {
  const char* arg = argv[*i];
  const char* value = *i + 1 < argc ? argv[*i + 1] : NULL;
  if (!strcmp(arg, "--devices")) {
    if (!value || !value[0]) return hgr_cli_usage_error(command, "--devices takes SPEC[,SPEC...], e.g. pocl:0,rusticl:0");
    if (place->device_count) return hgr_cli_usage_error(command, "--devices given twice");
    if (strlen(value) >= sizeof(place->device_text))
      return hgr_cli_usage_error(command, "--devices: the list is too long");
    snprintf(place->device_text, sizeof(place->device_text), "%s", value);
    for (char* spec = strtok(place->device_text, ","); spec; spec = strtok(NULL, ",")) {
      if (place->device_count == HGR_CLI_MAX_DEVICES)
        return hgr_cli_usage_error(command, "--devices lists more than %d devices", HGR_CLI_MAX_DEVICES);
      place->devices[place->device_count++] = spec;
    }
    if (!place->device_count) return hgr_cli_usage_error(command, "--devices lists no device");
    place->options.devices = place->devices;
    place->options.device_count = place->device_count;
    place->requested = true;
    ++*i;
    return HGR_CLI_OK;
  }
  if (!strcmp(arg, "--place")) {
    if (!value) return hgr_cli_usage_error(command, "--place takes a rule (op:NAME=SPEC, node:GLOB=SPEC, range:A-B=SPEC) "
                                                    "or a policy (first, auto, stages:N)");
    hgr_status_t status = hgr_place_options_parse(&place->options, value);
    if (status) {
      int code = hgr_cli_usage_error(command, "%s", hgr_status_message(status));
      hgr_status_free(status);
      return code;
    }
    place->requested = true;
    ++*i;
    return HGR_CLI_OK;
  }
  if (!strcmp(arg, "--place-report")) {
    if (!value) return hgr_cli_usage_error(command, "--place-report needs a FILE.json");
    place->report_path = value;
    ++*i;
    return HGR_CLI_OK;
  }
  if (!strcmp(arg, "--no-cost-cache")) {
    place->options.cost_cache_off = true;
    return HGR_CLI_OK;
  }
  return -1;
}

static void print_progress(void* user, const char* message) {
  (void)user;
  if (hgr_cli_rank() != 0) fprintf(stderr, "hgr: rank %d: %s\n", hgr_cli_rank(), message);
  else fprintf(stderr, "hgr: %s\n", message);
}

/* --devices all: every device found, the Oclgrind simulator last (as default
 * choices rank it); under mpirun every rank's, as rN/SPEC in rank order, every
 * simulator after the other devices. Collective under mpirun: rank 0 makes the list
 * from every rank's devices and sends it to the others. */
static hgr_status_t list_every_device(hgr_cli_place_args_t* place, hgr_instance_t* instance) {
  char* own = NULL; /* "S SPEC" a line, S 1 for a simulator */
  size_t own_length = 0;
  FILE* out = open_memstream(&own, &own_length);
  if (!out) return hgr_cli_agree(HGR_STATUS(HGR_STATUS_RESOURCE_EXHAUSTED, "out of host memory"), "listing the devices");
  for (size_t d = 0; d < hgr_instance_device_count(instance); ++d) {
    const hgr_device_info_t* info = hgr_instance_device(instance, d);
    fprintf(out, "%d %s\n", !strcmp(info->platform_short, "oclgrind"), info->spec);
  }
  fclose(out);
  char** texts = NULL;
  int ranks = 0;
  hgr_status_t status = hgr_cli_gather_text(own, own_length, "listing the devices", &texts, &ranks);
  free(own);
  HGR_RETURN_IF_ERROR_CLI(status);
  char* list = NULL;
  size_t length = 0;
  if (hgr_cli_rank() == 0 && (out = open_memstream(&list, &length))) {
    for (int simulator = 0; simulator < 2; ++simulator)
      for (int r = 0; r < ranks; ++r)
        for (const char* line = texts[r]; *line; line = strchr(line, '\n') + 1) {
          int spec_length = (int)(strchr(line, '\n') - line) - 2;
          if (line[0] - '0' != simulator) continue;
          fprintf(out, "%s", ftell(out) > 0 ? "," : "");
          if (hgr_cli_ranks_launched()) fprintf(out, "r%d/", r);
          fprintf(out, "%.*s", spec_length, line + 2);
        }
    fclose(out);
  }
  free(texts);
  if (hgr_cli_rank() == 0 && !list) status = HGR_STATUS(HGR_STATUS_RESOURCE_EXHAUSTED, "out of host memory");
  else if (hgr_cli_rank() == 0 && length >= sizeof(place->device_text))
    status = HGR_STATUS(HGR_STATUS_INVALID_ARGUMENT, "--devices all: the list of every device (%zu bytes) is too long",
                        length);
  char* every = NULL; /* rank 0's list, on every rank */
  if (!(status = hgr_cli_agree(status, "listing the devices")))
    status = hgr_cli_broadcast_text(list, length, "listing the devices", &every, &length);
  free(list);
  if (!status) {
    snprintf(place->device_text, sizeof(place->device_text), "%s", every);
    place->device_count = 0;
    for (char* spec = strtok(place->device_text, ","); spec && !status; spec = strtok(NULL, ",")) {
      if (place->device_count == HGR_CLI_MAX_DEVICES)
        status = HGR_STATUS(HGR_STATUS_INVALID_ARGUMENT, "--devices all: more than %d devices", HGR_CLI_MAX_DEVICES);
      else place->devices[place->device_count++] = spec;
    }
    if (!status && !place->device_count)
      status = HGR_STATUS(HGR_STATUS_UNAVAILABLE, "--devices all: no OpenCL device found");
    place->options.device_count = place->device_count;
  }
  free(every);
  return status;
}

hgr_status_t hgr_cli_place_apply(hgr_cli_place_args_t* place, hgr_instance_t* instance, hgr_kernel_library_t* kernels,
                                 bool print_summary, hgr_graph_t** inout_graph, hgr_placement_t** out_placement) {
  *out_placement = NULL;
  if (!place->requested) {
    if (place->report_path)
      return HGR_STATUS(HGR_STATUS_INVALID_ARGUMENT, "--place-report needs --place or --devices (nothing is placed)");
    return HGR_OK;
  }
  hgr_status_t status = HGR_OK;
  if (place->device_count == 1 && !strcmp(place->devices[0], "all"))
    HGR_RETURN_IF_ERROR_CLI(list_every_device(place, instance));
  /* Under mpirun what follows is collective, and rank 0 alone gets the placement,
   * which it prints and writes. */
  place->options.kernels = kernels;
  place->options.log = print_progress;
  hgr_graph_t* placed = NULL;
  HGR_RETURN_IF_ERROR_CLI(hgr_cli_place_graph(instance, *inout_graph, &place->options, &placed, out_placement));
  hgr_graph_release(*inout_graph);
  *inout_graph = placed;
  if (*out_placement && print_summary) status = hgr_placement_write_summary(*out_placement, stdout);
  if (*out_placement && place->report_path && !status) {
    FILE* out = fopen(place->report_path, "w");
    if (!out) {
      status = HGR_STATUS(HGR_STATUS_UNAVAILABLE, "cannot write %s", place->report_path);
    } else {
      status = hgr_status_annotate(hgr_placement_write_json(*out_placement, out), "%s", place->report_path);
      if (fclose(out) != 0 && !status)
        status = HGR_STATUS(HGR_STATUS_UNAVAILABLE, "writing %s failed", place->report_path);
      if (!status && print_summary) printf("placement report written to %s\n", place->report_path);
    }
  }
  return hgr_cli_agree(status, "writing the placement");
}

/* This rank's measured device time per node, one line "NODE MS UNTIMED" for each
 * node it ran commands of (UNTIMED 1: a command without timestamps); NULL when out
 * of host memory. */
static char* format_measured(const hgr_executor_t* executor, size_t* out_length) {
  size_t node_count = hgr_graph_node_count(hgr_executor_graph(executor));
  double* measured = calloc(node_count + 1, sizeof(double));
  bool* ran = calloc(node_count + 1, sizeof(bool));
  bool* untimed = calloc(node_count + 1, sizeof(bool));
  char* text = NULL;
  FILE* out = measured && ran && untimed ? open_memstream(&text, out_length) : NULL;
  if (out) {
    for (size_t c = 0; c < hgr_executor_command_count(executor); ++c) {
      hgr_command_profile_t command;
      if (hgr_executor_command_profile(executor, c, &command) || command.node_id >= node_count) continue;
      ran[command.node_id] = true;
      /* a kernel without a duration (rusticl 22.3) leaves the node unmeasured */
      if (hgr_command_profile_has_duration(&command))
        measured[command.node_id] += (double)(command.end_ns - command.start_ns) / 1e6;
      else if (command.kind == HGR_COMMAND_KERNEL)
        untimed[command.node_id] = true;
    }
    for (size_t n = 0; n < node_count; ++n)
      if (ran[n]) fprintf(out, "%zu %.17g %d\n", n, measured[n], untimed[n] ? 1 : 0);
    if (fclose(out) != 0) {
      free(text);
      text = NULL;
    }
  }
  free(measured);
  free(ran);
  free(untimed);
  return text;
}

/* Sums one rank's lines (format_measured) over the nodes placed on `device`. */
static void sum_measured(const hgr_placement_t* placement, const hgr_placement_device_t* device, const char* lines,
                         double* out_sum, bool* out_untimed) {
  *out_sum = 0;
  *out_untimed = false;
  for (const char* line = lines; line && *line;) {
    unsigned long n = 0;
    double ms = 0;
    int untimed = 0;
    hgr_node_placement_t node;
    if (sscanf(line, "%lu %lf %d", &n, &ms, &untimed) == 3 && !hgr_placement_node(placement, (uint32_t)n, &node) &&
        node.device_index == device->device_index && node.rank == device->rank) {
      *out_sum += ms;
      *out_untimed |= untimed != 0;
    }
    line = strchr(line, '\n');
    if (line) line++;
  }
}

hgr_status_t hgr_cli_print_predicted(const hgr_placement_t* placement, const hgr_executor_t* executor) {
  size_t length = 0;
  char* own = format_measured(executor, &length);
  hgr_status_t status =
      hgr_cli_agree(own ? HGR_OK : HGR_STATUS(HGR_STATUS_RESOURCE_EXHAUSTED, "out of host memory"), "profiling");
  char** texts = NULL;
  int ranks = 0;
  if (!status) status = hgr_cli_gather_text(own, length, "profiling", &texts, &ranks);
  free(own);
  if (status || !placement) { /* rank 0 alone has the placement and prints */
    free(texts);
    return status;
  }
  const hgr_instance_t* instance = hgr_executor_instance(executor);
  printf("predicted (cost model) vs measured (last run, profiling events) per device:\n");
  for (size_t d = 0; d < hgr_placement_device_count(placement); ++d) {
    hgr_placement_device_t device;
    if (hgr_placement_device(placement, d, &device)) continue;
    double sum = 0;
    bool any_untimed = false;
    int rank = device.rank > 0 ? device.rank : 0; /* -1: no spec names a rank, this process */
    if (rank < ranks) sum_measured(placement, &device, texts[rank], &sum, &any_untimed);
    /* another rank's device by its spec with the rank, this rank's as the instance names it */
    const char* spec = device.rank > 0 ? device.spec : hgr_instance_device(instance, device.device_index)->spec;
    if (device.predicted_ms < 0) printf("  %-12s predicted      -      ", spec);
    else printf("  %-12s predicted %9.3f ms", spec, device.predicted_ms);
    if (any_untimed) printf("  measured: the driver gave no timestamps for some commands");
    else if (device.predicted_ms > 0) printf("  measured %9.3f ms  (measured/predicted %.2f)", sum, sum / device.predicted_ms);
    else printf("  measured %9.3f ms", sum);
    printf("\n");
  }
  double predicted = hgr_placement_predicted_ms(placement);
  if (predicted >= 0) printf("  one run predicted %.3f ms\n", predicted);
  free(texts);
  return HGR_OK;
}

/* Writes the placed graph to out_path and, with params_out, the params that name
 * one of its inputs. */
static hgr_status_t write_placed(hgr_graph_t* graph, hgr_params_t* params, const char* out_path,
                                 const char* params_out) {
  FILE* out = fopen(out_path, "w");
  if (!out) return HGR_STATUS(HGR_STATUS_UNAVAILABLE, "cannot write %s", out_path);
  hgr_status_t status = hgr_status_annotate(hgr_graph_write_json(graph, out), "%s", out_path);
  if (fclose(out) != 0 && !status) status = HGR_STATUS(HGR_STATUS_UNAVAILABLE, "writing %s failed", out_path);
  if (status) return status;
  printf("placed graph written to %s\n", out_path);
  if (!params_out) return HGR_OK;
  hgr_params_t* kept = NULL;
  status = hgr_params_create(&kept);
  for (size_t p = 0; !status && p < hgr_params_count(params); ++p) {
    hgr_tensor_info_t info;
    const void* data = NULL;
    size_t index;
    status = hgr_params_get(params, p, &info, &data);
    if (status) break;
    hgr_status_t lookup = hgr_graph_input_index(graph, info.name, &index);
    if (lookup) {
      hgr_status_free(lookup);
      continue;
    }
    status = hgr_params_add(kept, info.name, info.dtype, info.ndim, info.shape, data, (size_t)info.bytes);
  }
  if (!status) status = hgr_params_save_file(kept, params_out);
  if (!status) printf("params (%zu) written to %s\n", hgr_params_count(kept), params_out);
  hgr_params_release(kept);
  return status;
}

static const char place_usage[] =
    "usage: hgr place GRAPH.json|MODEL.onnx [--params FILE] [--devices SPEC[,SPEC...]]\n"
    "                 [--place RULE|POLICY]... -o OUT.json [--params-out OUT.params]\n"
    "                 [--place-report FILE.json] [--kernels MANIFEST] [--context-per-device]\n"
    "                 [--no-cost-cache] [--input-shape NAME=D0,D1,...]... [--loader-budget SIZE]\n"
    "                 [--mpi-timeout S]\n"
    "\n"
    "Places a graph (or an ONNX model, converted: its weights go to --params-out) on\n"
    "this machine's devices, inserts the copies between them and plans\n"
    "memory per device, then writes the result as TVM graph JSON (with __copy nodes,\n"
    "device_index and storage_id, and the device of each key recorded in its metadata)\n"
    "so that `hgr run OUT.json` runs it the same way without flags. A TVM graph's own\n"
    "device keys and copies are discarded and placed anew. Under mpirun every rank\n"
    "measures its own listed devices (rN/SPEC) and rank 0 places and writes the files\n"
    "(docs/distributed.md).\n"
    "\n"
    "  --devices SPEC,...     the devices to use, in priority order (default: one, chosen\n"
    "                         as TVM chooses device key 1's: a CPU); `all`: every device\n"
    "                         found, the Oclgrind simulator last\n"
    "  --place RULE           op:NAME=SPEC, node:GLOB=SPEC or range:A-B=SPEC (node ids);\n"
    "                         repeatable, applied in order, later rules win\n"
    "  --place POLICY         for nodes no rule placed: first (default), auto (cost-based)\n"
    "                         or stages:N (N pipeline stages on the first N devices)\n"
    "  --place-report FILE    write the placement with predicted per-node times as JSON\n"
    "  --params FILE          params of the graph; with --params-out, written again with\n"
    "                         only those that name an input of the placed graph\n"
    "  --no-cost-cache        calibrate auto/stages again and store nothing\n"
    HGR_CLI_LOADER_FLAGS
    HGR_CLI_RANKS_FLAGS
    "  docs/placement.md explains the policies, the cost cache and the report.\n";

int hgr_cli_place(int argc, char** argv) {
  hgr_cli_place_args_t place;
  memset(&place, 0, sizeof(place));
  hgr_place_options_init(&place.options);
  place.requested = true;
  static hgr_cli_model_args_t model; /* large; one command per process */
  const char *graph_path = NULL, *out_path = NULL, *params_path = NULL, *params_out = NULL, *kernels_path = NULL;
  bool context_per_device = false;
  for (int i = 1; i < argc; ++i) {
    const char* arg = argv[i];
    const char* value = i + 1 < argc ? argv[i + 1] : NULL;
    int code = hgr_cli_place_parse("place", &place, argc, argv, &i);
    if (code > 0) return code;
    if (code == HGR_CLI_OK) continue;
    code = hgr_cli_model_parse("place", &model, argc, argv, &i);
    if (code > 0) return code;
    if (code == HGR_CLI_OK) continue;
    code = hgr_cli_ranks_parse("place", argc, argv, &i);
    if (code > 0) return code;
    if (code == HGR_CLI_OK) continue;
    if (!strcmp(arg, "-h") || !strcmp(arg, "--help")) {
      fputs(place_usage, stdout);
      return HGR_CLI_OK;
    } else if (!strcmp(arg, "-o")) {
      if (!(out_path = value)) return hgr_cli_usage_error("place", "-o needs a file");
      ++i;
    } else if (!strcmp(arg, "--params")) {
      if (!(params_path = value)) return hgr_cli_usage_error("place", "--params needs a file");
      ++i;
    } else if (!strcmp(arg, "--params-out")) {
      if (!(params_out = value)) return hgr_cli_usage_error("place", "--params-out needs a file");
      ++i;
    } else if (!strcmp(arg, "--kernels")) {
      if (!(kernels_path = value)) return hgr_cli_usage_error("place", "--kernels needs a manifest");
      ++i;
    } else if (!strcmp(arg, "--context-per-device")) {
      context_per_device = true;
    } else if (arg[0] == '-') {
      return hgr_cli_usage_error("place", "unknown option '%s'", arg);
    } else if (!graph_path) {
      graph_path = arg;
    } else {
      return hgr_cli_usage_error("place", "unexpected argument '%s' (one graph at a time)", arg);
    }
  }
  if (!graph_path) return hgr_cli_usage_error("place", "no graph given");
  if (!out_path) return hgr_cli_usage_error("place", "no output given (-o OUT.json)");
  bool onnx = strlen(graph_path) >= 5 && !strcasecmp(graph_path + strlen(graph_path) - 5, ".onnx");
  if (params_out && !params_path && !onnx)
    return hgr_cli_usage_error("place", "--params-out needs --params (or an ONNX model, which has its own)");
  if (params_path && onnx) return hgr_cli_usage_error("place", "an ONNX model carries its weights: no --params");

  hgr_instance_t* instance = NULL;
  hgr_graph_t* graph = NULL;
  hgr_kernel_library_t* kernels = NULL;
  hgr_placement_t* placement = NULL;
  hgr_params_t* params = NULL;
  hgr_instance_options_t instance_options;
  hgr_instance_options_init(&instance_options);
  instance_options.context_per_device = context_per_device;
  /* Under mpirun every rank places with the others (its devices measured there) and
   * rank 0 writes the files; a step that may fail on one rank is agreed on. */
  hgr_status_t status = hgr_cli_instance_create(&instance_options, &instance);
  if (!status) {
    status = hgr_cli_model_load(graph_path, &model, NULL, true, &graph, &params);
    if (!status && kernels_path) status = hgr_kernel_library_load_file(kernels_path, &kernels);
    if (!status && params_path) status = hgr_params_load_file(params_path, &params);
    status = hgr_cli_agree(status, "loading the graph");
  }
  place.options.params = params; /* across ranks: weights are read where they are used */
  if (!status) status = hgr_cli_place_apply(&place, instance, kernels, true, &graph, &placement);
  /* rank 0 writes the files */
  if (!status)
    status = hgr_cli_agree(hgr_cli_rank() == 0 ? write_placed(graph, params, out_path, params_out) : HGR_OK,
                           "writing the placed graph");
  hgr_params_release(params);
  hgr_placement_release(placement);
  hgr_kernel_library_release(kernels);
  hgr_graph_release(graph);
  hgr_cli_instance_release(instance);
  return status ? hgr_cli_fail(status) : HGR_CLI_OK;
}

int hgr_cli_binding_parse(const char* command, hgr_device_binding_t* bindings, size_t* count, size_t capacity,
                          int argc, char** argv, int* i) {
  if (strcmp(argv[*i], "--device")) return -1;
  char* value = *i + 1 < argc ? argv[*i + 1] : NULL;
  char* eq = value ? strchr(value, '=') : NULL;
  uint64_t key = 0;
  hgr_status_t status = eq && eq != value && eq[1] ? HGR_OK : HGR_STATUS(HGR_STATUS_INVALID_ARGUMENT, "no KEY=SPEC");
  if (!status) {
    *eq = 0;
    status = hgr_cli_parse_number(value, false, 0, INT32_MAX, &key);
  }
  bool bad = status != HGR_OK;
  hgr_status_free(status);
  if (bad)
    return hgr_cli_usage_error(command, "--device takes KEY=SPEC with a non-negative integer key, e.g. 4=rusticl:0");
  if (*count == capacity) return hgr_cli_usage_error(command, "too many --device options");
  bindings[(*count)++] = (hgr_device_binding_t){(int32_t)key, eq + 1};
  ++*i;
  return HGR_CLI_OK;
}
