/* `hgr run` and `hgr check`. */
#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "cli.h"

#define PLACE_FLAGS \
  "  --devices SPEC,...     place the graph anew on these devices, in priority order\n" \
  "                         (a TVM graph's own device keys and copies are discarded);\n" \
  "                         `all`: every device found (under mpirun every rank's),\n" \
  "                         the Oclgrind simulator last\n" \
  "  --place RULE|POLICY    placement rules (op:NAME=SPEC, node:GLOB=SPEC, range:A-B=SPEC;\n" \
  "                         repeatable, later wins) and the policy for the other nodes\n" \
  "                         (first, auto, stages:N); docs/placement.md; implies placing anew\n" \
  "  --place-report FILE    write the placement with predicted per-node times as JSON\n" \
  "  --no-cost-cache        calibrate auto/stages again and store nothing\n"

#define MODEL_FLAGS \
  "  --input-shape NAME=D0,D1,...  an ONNX model's input shape where the model leaves\n" \
  "                         dims symbolic (an --input array gives its own shape)\n" \
  "  --fix-input NAME       make ONNX input NAME a constant of its --input value at load\n" \
  "                         (inputs that decide shapes, such as Reshape's shape, Slice's\n" \
  "                         starts or TopK's k, are found and fixed without it)\n" \
  "  --no-fusion            keep elementwise chains as separate nodes (ONNX and graph JSON)\n" \
  "                         (by default each becomes one generated kernel)\n" \
  "  --no-prepack           keep matmul weights as the model stores them (by default\n" \
  "                         each constant [K, N] is repacked in panels of 32 columns)\n" \
  HGR_CLI_LOADER_FLAGS

static const char run_usage[] =
    "usage: hgr run GRAPH.json|MODEL.onnx|BUNDLE [options]\n"
    "\n"
    "Runs a TVM graph-executor graph or an ONNX model on this machine's OpenCL devices\n"
    "and prints the device binding, memory per device, copies per device-pair class,\n"
    "the outputs and the time of each run. A BUNDLE (`hgr compile --bundle`) runs its\n"
    "model at the shapes of the --input arrays (every input given) with the programs\n"
    "it holds. An ONNX model that decides at run time (an If or Loop on the data,\n"
    "NonZero, NonMaxSuppression ...) runs in stages through the model object, every\n"
    "input given (docs/onnx.md, \"Decisions at run time\"); the options that take one\n"
    "executor (--profile, --profile-json, --trace, --dump, --pipeline, --queues N,\n"
    "--place-report, --params, mpirun) are refused with it.\n"
    "\n"
    MODEL_FLAGS
    "  --params FILE          TVM params file; params named like inputs are loaded\n"
    "  --input NAME=FILE.npy  value of input NAME (repeatable); shape and dtype must match;\n"
    "                         an ONNX TensorProto file (FILE.pb) works too; read once\n"
    "                         (a FIFO works), at most 4 GiB (.pb: 2 GiB)\n"
    "  --device KEY=SPEC      bind device key KEY of the graph's device_index column to\n"
    "                         device SPEC (repeatable), e.g. --device 4=rusticl:0\n"
    "  --context-per-device   give every device its own OpenCL context\n"
    PLACE_FLAGS
    HGR_CLI_RANKS_FLAGS
    "  --output-dir DIR       write output i as DIR/output_i.npy\n"
    "  --expect I=FILE.npy    check output I against FILE (.npy or ONNX .pb; repeatable);\n"
    "                         exit 1 on mismatch\n"
    "  --rtol R, --atol A     --expect's tolerance for floats: |got - want| <= A + R |want|\n"
    "                         (default 1e-5 each)\n"
    "  --repeat N             run N times, each waited for; print min/median/max\n"
    "  --pipeline K           with --repeat N: keep K runs in flight instead (each waited\n"
    "                         for through its fence once K newer ones were started) and\n"
    "                         print the throughput\n"
    "  --queues N             N in-order compute queues per device (1 to 16, default 1):\n"
    "                         independent nodes are spread over them by dependency level\n"
    "                         and overlap where the device runs queues concurrently;\n"
    "                         Oclgrind keeps one queue\n"
    "  --profile              time every command of the last run with OpenCL profiling\n"
    "                         events; print device time per device, op, node (the 20\n"
    "                         slowest; --verbose: all) and copy, and host enqueue time\n"
    "  --profile-json FILE    write that profile (every node) as JSON\n"
    "  --trace FILE.json      write the last run as a Chrome trace (Perfetto,\n"
    "                         chrome://tracing): a track per queue and for the host\n"
    "                         (under mpirun --profile prints every rank's profile, and\n"
    "                         rank N other than 0 writes these files to FILE.rN)\n"
    "  --dump DIR             run one node at a time and write every node's outputs as\n"
    "                         DIR/<node id>_<node name>_<output>.npy right after the\n"
    "                         node ran (inputs too); for finding where a result goes wrong\n"
    "  --until NODE           with --dump: stop after NODE (a name or a node id)\n"
    "  --memory-budget SIZE   fail unless each device's storage, host staging and kernel\n"
    "                         scratch fit SIZE bytes (suffixes K, M, G, T: powers of\n"
    "                         1024; no sign)\n"
    "  --kernels MANIFEST     the user's own ops, declared in a JSON kernel manifest\n"
    "                         (README.md, \"User kernels\")\n"
    "  --no-program-cache     compile every kernel program from source; by default\n"
    "                         binaries are kept in $HGR_CACHE_DIR, else\n"
    "                         $XDG_CACHE_HOME/hgr, else ~/.cache/hgr\n"
    "  --warm-up auto|all|off at creation, launch each distinct kernel once so that the\n"
    "                         driver compiles it there, not in the first run, and store\n"
    "                         the programs then: auto (default) for programs compiled\n"
    "                         from source, all also for cached ones, off for none\n"
    "  --verbose              also list params that name no input, every run's time,\n"
    "                         what the program cache does, and each node the graph\n"
    "                         passes fused (\"fused: layer_norm 'ln' <- 10 nodes: ...\")\n"
    "  -h, --help             show this help\n";

static double now_ms(void);

/* --profile-json and --trace: one of hgr/profile.h's writers into the file at path
 * (which may be a device such as /dev/stdout, so a failed report is not removed). */
typedef hgr_status_t (*profile_writer_fn)(hgr_executor_t* executor, FILE* out);

static hgr_status_t write_profile_file(const char* path, hgr_executor_t* executor, profile_writer_fn write) {
  /* Under mpirun every rank writes its own: rank N other than 0 to PATH.rN, so that
   * ranks on one host do not write over each other. */
  char ranked[4096];
  hgr_status_t status = HGR_OK;
  if (hgr_cli_rank() != 0 && snprintf(ranked, sizeof(ranked), "%s.r%d", path, hgr_cli_rank()) >= (int)sizeof(ranked))
    status = HGR_STATUS(HGR_STATUS_INVALID_ARGUMENT, "%s: the path is too long", path);
  if (hgr_cli_rank() != 0) path = ranked;
  FILE* out = status ? NULL : fopen(path, "w");
  if (!status && !out) status = HGR_STATUS(HGR_STATUS_UNAVAILABLE, "cannot write %s", path);
  if (out) status = hgr_status_annotate(write(executor, out), "%s", path);
  if (out && fclose(out) != 0)
    status = hgr_status_join(status, HGR_STATUS(HGR_STATUS_UNAVAILABLE, "writing %s failed", path));
  return hgr_cli_agree(status, "writing the profile");
}

/* --profile: the summary of this rank's nodes; under mpirun rank 0 prints its own,
 * then every other rank's under "rank N:". */
static hgr_status_t print_profile(hgr_executor_t* executor, const hgr_profile_summary_options_t* summary) {
  if (!hgr_cli_ranks_launched()) return hgr_profile_write_summary(executor, summary, stdout);
  char* own = NULL;
  size_t length = 0;
  hgr_status_t status = HGR_OK;
  if (hgr_cli_rank() == 0) {
    status = hgr_profile_write_summary(executor, summary, stdout);
  } else {
    FILE* out = open_memstream(&own, &length);
    if (!out) status = HGR_STATUS(HGR_STATUS_RESOURCE_EXHAUSTED, "out of host memory");
    if (out) status = hgr_profile_write_summary(executor, summary, out);
    if (out && fclose(out) && !status) status = HGR_STATUS(HGR_STATUS_RESOURCE_EXHAUSTED, "out of host memory");
  }
  status = hgr_cli_agree(status, "profiling");
  char** texts = NULL;
  int ranks = 0;
  if (!status) status = hgr_cli_gather_text(own, length, "profiling", &texts, &ranks);
  free(own);
  for (int r = 1; r < ranks; ++r) printf("rank %d: %s", r, texts[r]);
  free(texts);
  return status;
}

/* Keeps `depth` runs in flight over `runs` runs: run k + depth starts once run k's
 * fence was waited for. Prints the throughput. */
static hgr_status_t run_pipelined(hgr_executor_t* executor, long runs, long depth) {
  hgr_fence_t** fences = calloc((size_t)depth, sizeof(*fences));
  if (!fences) return HGR_STATUS(HGR_STATUS_RESOURCE_EXHAUSTED, "out of host memory");
  hgr_status_t status = HGR_OK;
  double start = now_ms();
  for (long r = 0; r < runs && !status; ++r) {
    hgr_fence_t** slot = &fences[r % depth];
    if (*slot) {
      status = hgr_fence_wait(*slot);
      hgr_fence_release(*slot);
      *slot = NULL;
    }
    if (!status) status = hgr_executor_run_async(executor, slot);
  }
  for (long r = runs; r < runs + depth; ++r) { /* the last ones, oldest first */
    hgr_fence_t** slot = &fences[r % depth];
    if (!*slot) continue;
    if (!status) status = hgr_fence_wait(*slot);
    hgr_fence_release(*slot);
    *slot = NULL;
  }
  free(fences);
  status = status ? hgr_cli_agree(status, "pipelined runs") : hgr_cli_executor_wait(executor);
  double elapsed = now_ms() - start;
  if (!status)
    printf("%ld runs, %ld in flight: %.3f ms, %.1f runs/s (%.3f ms per run)\n", runs, depth, elapsed,
           elapsed > 0 ? runs * 1000.0 / elapsed : 0.0, elapsed / (double)runs);
  return status;
}

static const char check_usage[] =
    "usage: hgr check GRAPH.json|MODEL.onnx [--device KEY=SPEC]... [--context-per-device]\n"
    "                 [--kernels MANIFEST] [--memory-budget SIZE] [--devices SPEC,...]\n"
    "                 [--place RULE|POLICY]... [--place-report FILE] [--json]\n"
    "                 [--input-shape NAME=D0,D1,...]... [--loader-budget SIZE]\n"
    "                 [--mpi-timeout S]\n"
    "\n"
    "Validates a graph and its placement without running it: loads and checks the\n"
    "JSON (or loads the ONNX model, printing its node counts before and after the\n"
    "loader's folding, removal and fusion, and the patterns the graph passes fused:\n"
    "layer norms, GELUs, conv epilogues, elementwise groups, each with the nodes it\n"
    "replaced), places it anew when --devices or --place\n"
    "is given, binds device keys to devices, checks every node's op, and prints nodes\n"
    "and memory per device and copies per device-pair class. Allocates and builds\n"
    "nothing (auto and stages calibrate).\n"
    "\n"
    "  --memory-budget SIZE   fail unless each device's storage, host staging and kernel\n"
    "                         scratch fit SIZE bytes (suffixes K, M, G, T: powers of\n"
    "                         1024; no sign)\n"
    HGR_CLI_LOADER_FLAGS
    PLACE_FLAGS
    HGR_CLI_RANKS_FLAGS
    "  --json                 print the summary as JSON instead (docs/placement.md)\n";

#define MAX_ITEMS 256

typedef struct run_args_t {
  const char* graph_path;
  const char* params_path;
  const char* output_dir;
  hgr_cli_inputs_t inputs; /* --input: each file read once */
  hgr_device_binding_t bindings[MAX_ITEMS];
  size_t binding_count;
  size_t expect_index[MAX_ITEMS];
  const char* expect_files[MAX_ITEMS];
  size_t expect_count;
  const char* profile_json;
  const char* trace_path;
  const char* dump_dir;
  const char* until;
  const char* kernels_path;
  uint64_t memory_budget;
  double rtol, atol; /* --expect's tolerance */
  long repeat;
  long pipeline; /* runs in flight; 0: run and wait */
  long queues;
  bool profile, verbose, context_per_device, no_program_cache, json;
  hgr_warm_up_t warm_up;
  hgr_cli_place_args_t place;
  hgr_cli_model_args_t model;
  hgr_params_t* model_params; /* an ONNX model's weights */
  hgr_params_t* file_params;  /* --params, loaded before placement (which keeps weights on
                                 their consumer's rank) */
  hgr_model_t* bundle;        /* GRAPH is a bundle (`hgr compile --bundle`): its model ... */
  hgr_specialization_t* specialization; /* ... at the --input shapes, whose executor runs */
  hgr_model_t* staged;        /* MODEL.onnx decides at run time: the model object runs it in stages */
  hgr_kernel_library_t* staged_kernels; /* --kernels, which the stages' executors take when made */
} run_args_t;

/* Whether path is a bundle: a directory with a manifest.json. */
static bool is_bundle(const char* path) {
  char manifest[4096];
  struct stat st;
  int written = snprintf(manifest, sizeof(manifest), "%s/manifest.json", path);
  return written > 0 && (size_t)written < sizeof(manifest) && stat(path, &st) == 0 && S_ISDIR(st.st_mode) &&
         stat(manifest, &st) == 0;
}

/* The options of a model object that the command runs (a bundle's, or one in
 * stages): every executor's options, and placement when --devices or --place asked. */
static hgr_model_options_t model_options(run_args_t* args, const hgr_executor_options_t* options) {
  hgr_model_options_t model_options;
  hgr_model_options_init(&model_options);
  model_options.executor = *options;
  if (args->place.requested) model_options.place = &args->place.options;
  return model_options;
}

/* model's inputs in its order, from the --input arrays (inputs holds MAX_ITEMS):
 * a bundle and a model in stages run at their shapes and values, so every input is
 * given, and an --input names an input of model (or a --fix-input). */
static hgr_status_t given_inputs(run_args_t* args, const hgr_model_t* model, hgr_model_input_t* inputs,
                                 size_t* out_count) {
  size_t count = *out_count = hgr_model_input_count(model);
  if (count > MAX_ITEMS)
    return HGR_STATUS(HGR_STATUS_UNIMPLEMENTED, "%s: the model has %zu inputs; hgr run takes at most %d",
                      args->graph_path, count, MAX_ITEMS);
  for (size_t i = 0; i < args->inputs.count; ++i) {
    size_t index;
    if (!hgr_cli_model_fixed(&args->model, args->inputs.names[i]))
      HGR_RETURN_IF_ERROR_CLI(hgr_status_annotate(hgr_model_input_index(model, args->inputs.names[i], &index),
                                                  "--input %s", args->inputs.names[i]));
  }
  for (size_t m = 0; m < count; ++m) {
    hgr_model_io_t io;
    HGR_RETURN_IF_ERROR_CLI(hgr_model_input(model, m, &io));
    size_t i = 0;
    while (i < args->inputs.count && strcmp(args->inputs.names[i], io.name)) ++i;
    if (i == args->inputs.count)
      return HGR_STATUS(HGR_STATUS_INVALID_ARGUMENT, "input %zu '%s' of %s is not given with --input", m, io.name,
                        args->graph_path);
    const hgr_npy_array_t* array = NULL;
    HGR_RETURN_IF_ERROR_CLI(hgr_cli_inputs_array(&args->inputs, i, &array));
    inputs[m] = (hgr_model_input_t){array->dtype, array->ndim, array->shape, array->data, (size_t)array->bytes};
  }
  return HGR_OK;
}

/* A bundle's model at the shapes of the --input arrays: *out_executor is its
 * specialization's (the weights loaded, the programs the bundle's). */
static hgr_status_t open_bundle(run_args_t* args, hgr_instance_t* instance, const hgr_executor_options_t* options,
                                hgr_executor_t** out_executor) {
  hgr_model_options_t bundle_options = model_options(args, options);
  HGR_RETURN_IF_ERROR_CLI(hgr_model_create_bundle(instance, args->graph_path, &bundle_options, &args->bundle));
  hgr_model_input_t inputs[MAX_ITEMS];
  size_t count = 0;
  HGR_RETURN_IF_ERROR_CLI(given_inputs(args, args->bundle, inputs, &count));
  HGR_RETURN_IF_ERROR_CLI(hgr_model_specialize(args->bundle, inputs, count, &args->specialization));
  *out_executor = hgr_specialization_executor(args->specialization);
  return HGR_OK;
}

/* MODEL.onnx, which the loader refused as one graph with one_graph (taken): when
 * it decides at run time, args->staged runs it in stages (hgr_cli_model_open_staged).
 * `hgr check` (plan_only) validates one graph: it refuses such a model, pointing
 * to `hgr run`. */
static hgr_status_t open_staged(run_args_t* args, hgr_instance_t* instance, const hgr_executor_options_t* options,
                                hgr_status_t one_graph) {
  hgr_model_options_t staged_options = model_options(args, options);
  if (hgr_cli_ranks_launched()) {
    /* Refused under mpirun (needs_one_executor) once known: told apart on this rank's
     * devices alone, without the placement and bindings that name other ranks'. */
    staged_options.place = NULL;
    staged_options.executor.bindings = NULL;
    staged_options.executor.binding_count = 0;
    staged_options.executor.plan_only = true;
  }
  hgr_status_t decision = HGR_OK;
  double start = now_ms();
  HGR_RETURN_IF_ERROR_CLI(hgr_cli_model_open_staged(args->graph_path, &args->model, &args->inputs, instance,
                                                    &staged_options, one_graph, &args->staged, &decision));
  if (options->plan_only) {
    hgr_model_release(args->staged);
    args->staged = NULL;
    if (!decision) /* the model object made one executor of what the loader refused */
      decision = HGR_STATUS(HGR_STATUS_FAILED_PRECONDITION, "the loader refuses it as one graph");
    return hgr_status_annotate(decision, "%s: hgr check validates one graph; `hgr run` runs this model in stages",
                               args->graph_path);
  }
  printf("%s runs in stages through the model object (its first stage made in %.1f ms): %s\n", args->graph_path,
         now_ms() - start, decision ? hgr_status_message(decision) : "the loader refuses it as one graph");
  hgr_status_free(decision);
  return HGR_OK;
}

/* Splits "A=B" at the first '='; returns false if there is none or a side is empty. */
static bool split_pair(char* text, char** out_left, char** out_right) {
  char* eq = strchr(text, '=');
  if (!eq || eq == text || !eq[1]) return false;
  *eq = 0;
  *out_left = text;
  *out_right = eq + 1;
  return true;
}

/* A count within [0, max] (hgr_cli_parse_number: digits only). */
static bool parse_count(const char* text, uint64_t max, uint64_t* out_value) {
  hgr_status_t status = hgr_cli_parse_number(text, false, 0, max, out_value);
  hgr_status_free(status);
  return !status;
}

/* Parses argv into args; returns -1 on success, or the exit code to return. */
static int parse_args(const char* command, int argc, char** argv, run_args_t* args, const char* usage,
                      bool running) {
  memset(args, 0, sizeof(*args));
  args->repeat = 1;
  args->rtol = args->atol = 1e-5;
  hgr_place_options_init(&args->place.options);
  for (int i = 1; i < argc; ++i) {
    const char* arg = argv[i];
    const char* value = i + 1 < argc ? argv[i + 1] : NULL;
    char *left, *right;
    int place_code = hgr_cli_place_parse(command, &args->place, argc, argv, &i);
    if (place_code > 0) return place_code;
    if (place_code == HGR_CLI_OK) continue;
    int model_code = hgr_cli_model_parse(command, &args->model, argc, argv, &i);
    if (model_code > 0) return model_code;
    if (model_code == HGR_CLI_OK) continue;
    int ranks_code = hgr_cli_ranks_parse(command, argc, argv, &i);
    if (ranks_code > 0) return ranks_code;
    if (ranks_code == HGR_CLI_OK) continue;
    int input_code = running ? hgr_cli_inputs_parse(command, &args->inputs, argc, argv, &i) : -1;
    if (input_code < 0)
      input_code = hgr_cli_binding_parse(command, args->bindings, &args->binding_count, MAX_ITEMS, argc, argv, &i);
    if (input_code > 0) return input_code;
    if (input_code == HGR_CLI_OK) continue;
    if (!strcmp(arg, "-h") || !strcmp(arg, "--help")) {
      fputs(usage, stdout);
      return HGR_CLI_OK;
    } else if (!strcmp(arg, "--context-per-device")) {
      args->context_per_device = true;
    } else if (running && !strcmp(arg, "--params")) {
      if (!value) return hgr_cli_usage_error(command, "--params needs a file");
      args->params_path = argv[++i];
    } else if (running && !strcmp(arg, "--expect")) {
      uint64_t index;
      if (!value || !split_pair(argv[++i], &left, &right) || !parse_count(left, SIZE_MAX, &index))
        return hgr_cli_usage_error(command, "--expect takes INDEX=FILE.npy");
      if (args->expect_count == MAX_ITEMS) return hgr_cli_usage_error(command, "too many --expect options");
      args->expect_index[args->expect_count] = (size_t)index;
      args->expect_files[args->expect_count++] = right;
    } else if (running && (!strcmp(arg, "--rtol") || !strcmp(arg, "--atol"))) {
      char* end = NULL;
      double tolerance = value ? strtod(value, &end) : -1;
      if (!value || end == value || *end || !(tolerance >= 0))
        return hgr_cli_usage_error(command, "%s takes a non-negative number", arg);
      *(arg[2] == 'r' ? &args->rtol : &args->atol) = tolerance;
      ++i;
    } else if (running && !strcmp(arg, "--output-dir")) {
      if (!value) return hgr_cli_usage_error(command, "--output-dir needs a directory");
      args->output_dir = argv[++i];
    } else if (running && !strcmp(arg, "--pipeline")) {
      uint64_t depth;
      if (hgr_cli_number_flag(command, "--pipeline takes a number of runs in flight from 1 to 64", value, false, 1,
                              64, &depth))
        return HGR_CLI_USAGE;
      args->pipeline = (long)depth;
      ++i;
    } else if (running && !strcmp(arg, "--repeat")) {
      uint64_t runs;
      if (hgr_cli_number_flag(command, "--repeat", value, false, 1, LONG_MAX, &runs)) return HGR_CLI_USAGE;
      args->repeat = (long)runs;
      ++i;
    } else if (running && !strcmp(arg, "--queues")) {
      uint64_t queues;
      if (hgr_cli_number_flag(command, "--queues takes an integer from 1 to " HGR_CLI_STRINGIFY(HGR_MAX_COMPUTE_QUEUES),
                              value, false, 1, HGR_MAX_COMPUTE_QUEUES, &queues))
        return HGR_CLI_USAGE;
      args->queues = (long)queues;
      ++i;
    } else if (running && !strcmp(arg, "--profile")) {
      args->profile = true;
    } else if (running && !strcmp(arg, "--profile-json")) {
      if (!(args->profile_json = value)) return hgr_cli_usage_error(command, "--profile-json needs a FILE");
      ++i;
    } else if (!strcmp(arg, "--memory-budget")) {
      if (hgr_cli_number_flag(command, "--memory-budget", value, true, 1, UINT64_MAX, &args->memory_budget))
        return HGR_CLI_USAGE;
      ++i;
    } else if (!strcmp(arg, "--kernels")) {
      if (!(args->kernels_path = value)) return hgr_cli_usage_error(command, "--kernels needs a manifest");
      ++i;
    } else if (running && !strcmp(arg, "--no-program-cache")) {
      args->no_program_cache = true;
    } else if (running && !strcmp(arg, "--warm-up")) {
      if (!value) return hgr_cli_usage_error(command, "--warm-up takes auto, all or off");
      if (!strcmp(value, "auto")) args->warm_up = HGR_WARM_UP_AUTO;
      else if (!strcmp(value, "all")) args->warm_up = HGR_WARM_UP_ALL;
      else if (!strcmp(value, "off")) args->warm_up = HGR_WARM_UP_OFF;
      else return hgr_cli_usage_error(command, "--warm-up takes auto, all or off, not '%s'", value);
      ++i;
    } else if (running && !strcmp(arg, "--dump")) {
      if (!(args->dump_dir = value)) return hgr_cli_usage_error(command, "--dump needs a directory");
      ++i;
    } else if (running && !strcmp(arg, "--until")) {
      if (!(args->until = value)) return hgr_cli_usage_error(command, "--until needs a node name or id");
      ++i;
    } else if (running && !strcmp(arg, "--trace")) {
      if (!(args->trace_path = value)) return hgr_cli_usage_error(command, "--trace needs a FILE");
      ++i;
    } else if (!running && !strcmp(arg, "--json")) {
      args->json = true;
    } else if (running && !strcmp(arg, "--verbose")) {
      args->verbose = true;
      args->model.list_fusions = true;
    } else if (arg[0] == '-') {
      return hgr_cli_usage_error(command, "unknown option '%s'", arg);
    } else if (!args->graph_path) {
      args->graph_path = arg;
    } else {
      return hgr_cli_usage_error(command, "unexpected argument '%s' (one graph at a time)", arg);
    }
  }
  if (!args->graph_path) return hgr_cli_usage_error(command, "no graph given");
  if (args->place.requested && args->binding_count)
    return hgr_cli_usage_error(command, "--device binds the graph's own device keys; with --devices or --place the "
                                        "graph is placed anew and keys are hgr's");
  if (args->until && !args->dump_dir) return hgr_cli_usage_error(command, "--until works with --dump");
  if (args->dump_dir && hgr_cli_ranks_launched())
    return hgr_cli_usage_error(command, "--dump steps one node at a time in one process: run it without mpirun");
  if (args->dump_dir && (args->repeat > 1 || args->pipeline || args->profile || args->profile_json || args->trace_path))
    return hgr_cli_usage_error(command, "--dump steps one node at a time: it goes with neither --repeat nor profiling");
  return -1;
}

/* A key bound explicitly came from --device or, without any, from the bindings the
 * graph file records (`hgr place` writes them). */
static void print_placement(const hgr_instance_t* instance, const hgr_executor_t* executor, bool cli_bindings) {
  printf("device binding:\n");
  for (size_t k = 0; k < hgr_executor_key_count(executor); ++k) {
    hgr_key_binding_t b = hgr_executor_key_binding(executor, k);
    const hgr_device_info_t* d = hgr_instance_device(instance, b.device_index); /* NULL: another rank's */
    if (b.key < 0) printf("  (no device_index column) -> %s", b.spec);
    else printf("  key %-3d -> %s", b.key, b.spec);
    if (d) printf("  %s, %s", d->name, d->platform_name);
    else printf("  (rank %d's device)", b.rank);
    printf(" [%s]\n", !b.explicit_binding ? "default" : cli_bindings ? "--device" : "graph");
  }
  printf("memory per device:\n");
  for (size_t i = 0; i < hgr_executor_device_count(executor); ++i) {
    hgr_device_usage_t u = hgr_executor_device_usage(executor, i);
    char bytes[32], staging[32], shared[32], scratch[32];
    printf("  %-12s %4u kernel nodes  %4u storages  %10s", hgr_instance_device(instance, u.device_index)->spec,
           u.kernel_nodes, u.storage_count, hgr_cli_bytes(u.storage_bytes, bytes, sizeof(bytes)));
    if (u.staging_bytes) printf("  + %s host staging", hgr_cli_bytes(u.staging_bytes, staging, sizeof(staging)));
    if (u.scratch_bytes) printf("  + %s kernel scratch", hgr_cli_bytes(u.scratch_bytes, scratch, sizeof(scratch)));
    if (u.shared_count)
      printf("  (+ %u storages, %s, shared with another executor)", u.shared_count,
             hgr_cli_bytes(u.shared_bytes, shared, sizeof(shared)));
    printf("\n");
  }
  hgr_copy_summary_t c = hgr_executor_copy_summary(executor);
  printf("copies per run:\n");
  int any = 0;
  for (int p = 0; p < HGR_PAIR_CLASS_COUNT; ++p) {
    if (!c.count[p]) continue;
    char bytes[32];
    printf("  %-15s %4u copies  %10s\n", hgr_pair_class_name((hgr_pair_class_t)p), c.count[p],
           hgr_cli_bytes(c.bytes[p], bytes, sizeof(bytes)));
    any = 1;
  }
  if (!any) printf("  none\n");
  if (c.staged_small || c.staged_mapped)
    printf("  host-staged paths: %u read-then-write, %u mapped (%u chunks)\n", c.staged_small, c.staged_mapped,
           c.staged_chunks);
}

/* --queues: each device's queues by role (Oclgrind keeps one for everything). */
static void print_queues(const hgr_instance_t* instance, const hgr_executor_t* executor) {
  printf("queues per device:\n");
  for (size_t i = 0; i < hgr_executor_device_count(executor); ++i) {
    size_t device = hgr_executor_device_usage(executor, i).device_index;
    unsigned compute = 0, transfer = 0, both = 0;
    for (size_t q = 0; q < hgr_executor_queue_count(executor); ++q) {
      hgr_queue_info_t info = hgr_executor_queue_info(executor, q);
      if (info.device_index != device) continue;
      if (!strcmp(info.role, "compute")) compute++;
      else if (!strcmp(info.role, "transfer")) transfer++;
      else both++;
    }
    const char* spec = hgr_instance_device(instance, device)->spec;
    if (both) printf("  %-12s 1 queue for compute and transfers (host-driven)\n", spec);
    else printf("  %-12s %u compute + %u transfer\n", spec, compute, transfer);
  }
}

static double now_ms(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec * 1e3 + (double)t.tv_nsec / 1e6;
}

static void print_log(void* user, const char* message) {
  (void)user;
  printf("  %s\n", message);
}

static hgr_status_t create(run_args_t* args, bool plan_only, bool profiling, hgr_instance_t** out_instance,
                           hgr_graph_t** out_graph, hgr_placement_t** out_placement, hgr_executor_t** out_executor) {
  hgr_instance_options_t instance_options;
  hgr_instance_options_init(&instance_options);
  instance_options.context_per_device = args->context_per_device;
  double load_start = now_ms();
  /* Under mpirun, a step that may fail on one rank alone is agreed on before the next
   * collective one, so that every rank stops with that rank's error. */
  HGR_RETURN_IF_ERROR_CLI(hgr_cli_instance_create(&instance_options, out_instance));
  hgr_executor_options_t options;
  hgr_executor_options_init(&options);
  options.bindings = args->bindings;
  options.binding_count = args->binding_count;
  options.plan_only = plan_only;
  options.profiling = profiling;
  options.memory_budget_bytes = args->memory_budget;
  options.compute_queues = (uint32_t)args->queues;
  options.program_cache.mode = args->no_program_cache ? HGR_PROGRAM_CACHE_OFF : HGR_PROGRAM_CACHE_FILES;
  options.warm_up = args->warm_up;
  if (args->kernels_path) HGR_RETURN_IF_ERROR_CLI(hgr_kernel_library_load_file(args->kernels_path, &options.kernels));
  if (args->verbose) options.log = print_log;
  bool bundle = is_bundle(args->graph_path);
  hgr_status_t status = bundle ? HGR_OK
                               : hgr_cli_model_load(args->graph_path, &args->model, &args->inputs, !args->json,
                                                    out_graph, &args->model_params);
  if (status && !bundle) status = open_staged(args, *out_instance, &options, status);
  if (!status && args->params_path && !plan_only && !args->staged)
    status = hgr_params_load_file(args->params_path, &args->file_params);
  status = hgr_cli_agree(status, "loading the graph");
  if (!status && !plan_only && !bundle && !args->staged) printf("graph loaded in %.1f ms\n", now_ms() - load_start);
  args->place.options.program_cache = options.program_cache;
  args->place.options.params = args->model_params ? args->model_params : args->file_params;
  double start = now_ms();
  if (status || args->staged) {
    /* failed, or each stage's executor is made when a run reaches it */
  } else if (bundle) {
    status = plan_only ? HGR_STATUS(HGR_STATUS_UNIMPLEMENTED, "%s is a bundle: `hgr run` it", args->graph_path)
                       : open_bundle(args, *out_instance, &options, out_executor);
    if (!status) *out_graph = hgr_graph_retain(hgr_executor_graph(*out_executor));
    if (!status) printf("bundle loaded and specialized in %.1f ms\n", now_ms() - load_start);
  } else {
    /* Under mpirun a collective step: every rank gets the placed graph. */
    status = hgr_cli_place_apply(&args->place, *out_instance, options.kernels, !args->json, out_graph, out_placement);
    if (!status) status = hgr_cli_executor_create(*out_instance, *out_graph, &options, out_executor);
  }
  if (args->staged) args->staged_kernels = options.kernels; /* the model's options borrow it */
  else hgr_kernel_library_release(options.kernels);         /* the executor holds its own reference */
  if (!status && !plan_only && !args->staged) {
    hgr_program_stats_t stats = hgr_executor_program_stats(*out_executor);
    printf("executor created in %.1f ms: %u programs (%u from the program cache, %u compiled%s", now_ms() - start,
           stats.programs, stats.from_cache, stats.from_source, stats.rejected ? ", rejected entries rebuilt" : "");
    if (args->bundle) printf(", %u from the bundle", stats.from_pool);
    printf(") in %.1f ms", stats.build_ms);
    if (stats.warm_launches)
      printf("; warm-up: %u steps in %.1f ms, %u programs stored in %.1f ms", stats.warm_launches, stats.warm_ms,
             stats.stored, stats.store_ms);
    if (stats.left_to_driver)
      printf("; %u programs left to the driver's own cache (PoCL's)", stats.left_to_driver);
    printf("\n");
  }
  /* --verbose: each node's tile (hgr/tune.h), and whether the limits or `hgr tune` chose it */
  for (uint32_t n = 0; !status && !args->staged && args->verbose && !args->json && n < hgr_graph_node_count(*out_graph);
       ++n) {
    hgr_tile_choice_t tile;
    hgr_node_info_t node;
    if (!hgr_executor_node_tile(*out_executor, n, &tile) && tile.source != HGR_TILE_NONE &&
        !hgr_graph_node_info(*out_graph, n, &node))
      printf("  tile: node %u '%s' (%s): %s from %s (candidate %u of %u; %s)\n", n, node.name, node.func_name,
             tile.tile, hgr_tile_source_name(tile.source), tile.candidate + 1, tile.candidate_count, tile.key);
  }
  return status;
}

/* `hgr check --json` for a graph that keeps its own placement: what the executor
 * bound, in the shape of hgr_placement_write_json's report; what only a plan by hgr
 * knows (the lower bound, no-reuse bytes, predicted times) is null. */
static void print_check_json(const hgr_instance_t* instance, const hgr_executor_t* executor) {
  printf("{\n  \"placed_by\": \"graph\",\n  \"devices\": [");
  for (size_t i = 0; i < hgr_executor_device_count(executor); ++i) {
    hgr_device_usage_t u = hgr_executor_device_usage(executor, i);
    printf("%s\n    {\"device\": ", i ? "," : "");
    hgr_cli_json_string(stdout, hgr_instance_device(instance, u.device_index)->spec);
    printf(", \"nodes\": %u, \"planned_bytes\": %llu, \"lower_bound_bytes\": null, \"no_reuse_bytes\": null, "
           "\"predicted_ms\": null}",
           u.kernel_nodes, (unsigned long long)u.storage_bytes);
  }
  hgr_copy_summary_t c = hgr_executor_copy_summary(executor);
  printf("\n  ],\n  \"copies\": {");
  for (int p = 0; p < HGR_PAIR_CLASS_COUNT; ++p)
    printf("%s\"%s\": %u", p ? ", " : "", hgr_pair_class_name((hgr_pair_class_t)p), c.count[p]);
  printf("},\n  \"fallbacks\": []\n}\n");
}

int hgr_cli_check(int argc, char** argv) {
  run_args_t args;
  int code = parse_args("check", argc, argv, &args, check_usage, false);
  if (code >= 0) return code;
  hgr_instance_t* instance = NULL;
  hgr_graph_t* graph = NULL;
  hgr_executor_t* executor = NULL;
  hgr_placement_t* placement = NULL;
  hgr_status_t status = create(&args, true, false, &instance, &graph, &placement, &executor);
  if (status && args.model.shapes_missing) { /* a symbolic model: its declared shapes were the answer */
    printf("%s: every op supported; give --input or --input-shape to check a specialization (%s)\n",
           args.graph_path, hgr_status_message(status));
    hgr_status_free(status);
    status = HGR_OK;
  } else if (!status && args.json && placement) {
    status = hgr_placement_write_json(placement, stdout);
  } else if (!status && args.json) {
    print_check_json(instance, executor);
  } else if (!status) {
    printf("%s: %zu nodes, %zu entries, %zu inputs, %zu outputs: valid\n", args.graph_path,
           hgr_graph_node_count(graph), hgr_graph_entry_count(graph), hgr_graph_input_count(graph),
           hgr_graph_output_count(graph));
    print_placement(instance, executor, args.binding_count > 0);
  }
  hgr_executor_release(executor);
  hgr_placement_release(placement);
  hgr_graph_release(graph);
  hgr_cli_instance_release(instance);
  hgr_params_release(args.model_params);
  hgr_params_release(args.file_params);
  return status ? hgr_cli_fail(status) : HGR_CLI_OK;
}


static int compare_doubles(const void* a, const void* b) {
  double x = *(const double*)a, y = *(const double*)b;
  return (x > y) - (x < y);
}

static const char* format_shape(const hgr_tensor_info_t* info, char* buffer, size_t capacity) {
  size_t used = (size_t)snprintf(buffer, capacity, "[");
  for (int32_t d = 0; d < info->ndim && used < capacity; ++d)
    used += (size_t)snprintf(buffer + used, capacity - used, "%s%lld", d ? ", " : "", (long long)info->shape[d]);
  if (used < capacity) snprintf(buffer + used, capacity - used, "]");
  return buffer;
}

static bool same_shape(const hgr_tensor_info_t* info, int32_t ndim, const int64_t* shape) {
  if (info->ndim != ndim) return false;
  for (int32_t d = 0; d < ndim; ++d)
    if (info->shape[d] != shape[d]) return false;
  return true;
}

static bool is_float32(hgr_dtype_t dtype) {
  return dtype.code == HGR_DTYPE_FLOAT && dtype.bits == 32 && dtype.lanes == 1;
}

/* float32, float16 and bfloat16: printed and compared as values. */
static bool is_float(hgr_dtype_t dtype) {
  return dtype.lanes == 1 && ((dtype.code == HGR_DTYPE_FLOAT && (dtype.bits == 32 || dtype.bits == 16)) ||
                              (dtype.code == HGR_DTYPE_BFLOAT && dtype.bits == 16));
}

/* Element i of data, of a dtype is_float takes. */
static double float_at(hgr_dtype_t dtype, const void* data, size_t i) {
  if (dtype.bits == 32) return ((const float*)data)[i];
  uint16_t bits = ((const uint16_t*)data)[i];
  return dtype.code == HGR_DTYPE_BFLOAT ? hgr_bfloat16_to_float32(bits) : hgr_float16_to_float32(bits);
}

static hgr_status_t set_inputs(run_args_t* args, hgr_executor_t* executor, bool* input_given) {
  hgr_cli_inputs_t* inputs = &args->inputs;
  for (size_t i = 0; i < inputs->count; ++i) {
    const char* name = inputs->names[i];
    if (hgr_cli_model_fixed(&args->model, name)) continue; /* a constant of the model now */
    size_t index;
    HGR_RETURN_IF_ERROR_CLI(
        hgr_status_annotate(hgr_executor_input_index(executor, name, &index), "--input %s", name));
    if (hgr_executor_input_rank(executor, index) != hgr_cli_rank()) { /* its rank sets it */
      input_given[index] = true;
      continue;
    }
    hgr_tensor_info_t info;
    HGR_RETURN_IF_ERROR_CLI(hgr_executor_input_info(executor, index, &info));
    const hgr_npy_array_t* array = NULL;
    HGR_RETURN_IF_ERROR_CLI(hgr_cli_inputs_array(inputs, i, &array)); /* read once, maybe by the ONNX loader */
    hgr_status_t status = HGR_OK;
    if (!hgr_dtype_equal(array->dtype, info.dtype) || !same_shape(&info, array->ndim, array->shape)) {
      char want_dtype[24], have_dtype[24], want_shape[128], have_shape[128];
      hgr_tensor_info_t have = {NULL, array->dtype, array->ndim, array->shape, array->bytes};
      status = HGR_STATUS(HGR_STATUS_INVALID_ARGUMENT, "--input %s: %s holds %s %s, but the graph's input is %s %s",
                          name, inputs->files[i], hgr_dtype_format(array->dtype, have_dtype, sizeof(have_dtype)),
                          format_shape(&have, have_shape, sizeof(have_shape)),
                          hgr_dtype_format(info.dtype, want_dtype, sizeof(want_dtype)),
                          format_shape(&info, want_shape, sizeof(want_shape)));
    } else {
      status = hgr_executor_set_input(executor, index, array->data, (size_t)array->bytes);
      input_given[index] = true;
    }
    hgr_cli_inputs_drop(inputs, i); /* the executor holds the values now */
    HGR_RETURN_IF_ERROR_CLI(status);
  }
  return HGR_OK;
}

/* --dump: every entry of every node as it is produced, stepping node by node. */
typedef struct dump_t {
  const run_args_t* args;
  const hgr_graph_t* graph;
  uint32_t until;   /* node id, or UINT32_MAX */
  uint32_t files;
  hgr_status_t status;
} dump_t;

static bool dump_node(hgr_executor_t* executor, uint32_t node_id, void* user) {
  dump_t* dump = user;
  hgr_node_info_t node;
  if ((dump->status = hgr_graph_node_info(dump->graph, node_id, &node))) return false;
  for (uint32_t k = 0; k < node.output_count && !dump->status; ++k) {
    hgr_tensor_info_t info;
    if ((dump->status = hgr_graph_entry_info(dump->graph, node_id, k, &info))) break;
    void* data = malloc(info.bytes ? (size_t)info.bytes : 1);
    if (!data) {
      dump->status = HGR_STATUS(HGR_STATUS_RESOURCE_EXHAUSTED, "out of host memory");
      break;
    }
    char name[128], path[4096];
    size_t n = 0;
    for (const char* c = node.name; *c && n + 1 < sizeof(name); ++c)
      name[n++] = (isalnum((unsigned char)*c) || *c == '-' || *c == '.') ? *c : '_';
    name[n] = 0;
    snprintf(path, sizeof(path), "%s/%04u_%s_%u.npy", dump->args->dump_dir, node_id, name, k);
    dump->status = hgr_executor_read_entry(executor, node_id, k, data, (size_t)info.bytes);
    if (!dump->status) dump->status = hgr_npy_save_file(path, info.dtype, info.ndim, info.shape, data, info.bytes);
    if (!dump->status) dump->files++;
    free(data);
  }
  return !dump->status && node_id != dump->until;
}

static hgr_status_t run_dump(const run_args_t* args, const hgr_graph_t* graph, hgr_executor_t* executor) {
  dump_t dump = {args, graph, UINT32_MAX, 0, HGR_OK};
  if (args->until) {
    uint64_t id = UINT64_MAX; /* stays so when --until is a name: the one parser of counts decides */
    hgr_status_free(hgr_cli_parse_number(args->until, false, 0, UINT64_MAX, &id));
    hgr_node_info_t info;
    for (size_t n = 0; n < hgr_graph_node_count(graph) && dump.until == UINT32_MAX; ++n)
      if (!hgr_graph_node_info(graph, n, &info) && !strcmp(info.name, args->until)) dump.until = (uint32_t)n;
    if (dump.until == UINT32_MAX && id < hgr_graph_node_count(graph)) dump.until = (uint32_t)id;
    if (dump.until == UINT32_MAX)
      return HGR_STATUS(HGR_STATUS_NOT_FOUND, "--until %s: no node has that name or id", args->until);
  }
  if (mkdir(args->dump_dir, 0777) != 0 && errno != EEXIST)
    return HGR_STATUS(HGR_STATUS_UNAVAILABLE, "cannot create %s: %s", args->dump_dir, strerror(errno));
  hgr_status_t status = hgr_executor_run_stepwise(executor, dump_node, &dump);
  if (!status) status = dump.status;
  else hgr_status_free(dump.status);
  if (!status)
    printf("dumped %u tensors to %s%s%s\n", dump.files, args->dump_dir, args->until ? ", stopped after " : "",
           args->until ? args->until : "");
  return status;
}

/* Output index of an executor or, executor NULL, of a model's run: its info, and its
 * values read into *out_data (free it). */
static hgr_status_t read_output(hgr_executor_t* executor, hgr_model_run_t* run, size_t index,
                                hgr_tensor_info_t* out_info, void** out_data) {
  *out_data = NULL;
  HGR_RETURN_IF_ERROR_CLI(executor ? hgr_executor_output_info(executor, index, out_info)
                                   : hgr_model_run_output_info(run, index, out_info));
  void* data = malloc(out_info->bytes ? (size_t)out_info->bytes : 1);
  if (!data) return HGR_STATUS(HGR_STATUS_RESOURCE_EXHAUSTED, "out of host memory for output %zu", index);
  hgr_status_t status = executor ? hgr_executor_get_output(executor, index, data, (size_t)out_info->bytes)
                                 : hgr_model_run_get_output(run, index, data, (size_t)out_info->bytes);
  if (status) free(data);
  else *out_data = data;
  return status;
}

/* Prints output index's first values and sum (info describes data), writes it, and
 * checks expectations. */
static hgr_status_t handle_output(const run_args_t* args, size_t index, const hgr_tensor_info_t* info,
                                  const void* data, bool* failed) {
  char dtype[24], shape[128];
  printf("output %zu '%s' %s %s", index, info->name, hgr_dtype_format(info->dtype, dtype, sizeof(dtype)),
         format_shape(info, shape, sizeof(shape)));
  size_t count = (size_t)(info->bytes / (is_float32(info->dtype) ? 4 : 2)); /* of the float dtypes */
  if (is_float(info->dtype)) {
    double sum = 0;
    for (size_t i = 0; i < count; ++i) sum += float_at(info->dtype, data, i);
    printf(": ");
    for (size_t i = 0; i < count && i < 4; ++i) printf("%s%.6g", i ? ", " : "", float_at(info->dtype, data, i));
    printf("%s (sum %.6g)", count > 4 ? ", ..." : "", sum);
  }
  printf("\n");
  hgr_status_t status = HGR_OK;
  if (args->output_dir) {
    char path[4096];
    snprintf(path, sizeof(path), "%s/output_%zu.npy", args->output_dir, index);
    status = hgr_npy_save_file(path, info->dtype, info->ndim, info->shape, data, info->bytes);
  }
  for (size_t e = 0; !status && e < args->expect_count; ++e) {
    if (args->expect_index[e] != index) continue;
    hgr_npy_array_t expected;
    status = hgr_status_annotate(hgr_cli_load_array(args->expect_files[e], &expected), "--expect %zu", index);
    if (status) break;
    double worst = 0;
    bool match = hgr_dtype_equal(expected.dtype, info->dtype) && same_shape(info, expected.ndim, expected.shape);
    if (match && is_float(info->dtype)) {
      for (size_t i = 0; i < count; ++i) {
        double got = float_at(info->dtype, data, i), want = float_at(info->dtype, expected.data, i);
        double diff = fabs(got - want);
        double allowed = args->atol + args->rtol * fabs(want);
        if (!(diff <= allowed) && !(got != got && want != want)) match = false; /* NaN matches NaN */
        if (diff > worst || diff != diff) worst = diff;
      }
    } else if (match) {
      match = memcmp(data, expected.data, (size_t)info->bytes) == 0;
    }
    printf("  %s %s (largest difference %.3g)\n", match ? "matches" : "DOES NOT MATCH", args->expect_files[e], worst);
    if (!match) *failed = true;
    hgr_npy_array_free(&expected);
  }
  return status;
}

/* Every output: an executor's (those of this rank; rank 0 names the others') or,
 * executor NULL, count outputs of a model's run. */
static hgr_status_t handle_outputs(const run_args_t* args, hgr_executor_t* executor, hgr_model_run_t* run,
                                   size_t count, bool* failed) {
  if (args->output_dir) mkdir(args->output_dir, 0777);
  hgr_status_t status = HGR_OK;
  for (size_t o = 0; o < count && !status; ++o) {
    int holder = executor ? hgr_executor_output_rank(executor, o) : hgr_cli_rank();
    if (holder != hgr_cli_rank()) {
      if (hgr_cli_rank() == 0) printf("output %zu is on rank %d, which reads and checks it\n", o, holder);
      continue;
    }
    hgr_tensor_info_t info;
    void* data = NULL;
    status = read_output(executor, run, o, &info, &data);
    if (!status) status = handle_output(args, o, &info, data, failed);
    free(data);
  }
  return status;
}

/* Runs args->repeat times, each time one call of run (which waits for its run),
 * timed as a whole; prints each time (with --verbose or for one run) and, over
 * several, the min, median and max. */
typedef hgr_status_t (*run_fn)(void* user);

static hgr_status_t run_timed(const run_args_t* args, run_fn run, void* user) {
  double* times = calloc((size_t)args->repeat, sizeof(double));
  if (!times) return HGR_STATUS(HGR_STATUS_RESOURCE_EXHAUSTED, "out of host memory for %ld run times", args->repeat);
  hgr_status_t status = HGR_OK;
  for (long r = 0; r < args->repeat && !status; ++r) {
    double start = now_ms();
    status = run(user);
    times[r] = now_ms() - start;
    if (!status && (args->verbose || args->repeat == 1)) printf("run %ld: %.3f ms\n", r + 1, times[r]);
  }
  if (!status && args->repeat > 1) {
    qsort(times, (size_t)args->repeat, sizeof(double), compare_doubles);
    printf("%ld runs: min %.3f ms, median %.3f ms, max %.3f ms\n", args->repeat, times[0], times[args->repeat / 2],
           times[args->repeat - 1]);
  }
  free(times);
  return status;
}

static hgr_status_t run_executor(void* user) {
  hgr_executor_t* executor = user;
  hgr_status_t status = hgr_executor_run(executor);
  return status ? hgr_cli_agree(status, "run") : hgr_cli_executor_wait(executor);
}

/* The runs of a model in stages; the last one's outputs are read. */
typedef struct staged_runs_t {
  hgr_model_t* model;
  hgr_model_input_t inputs[MAX_ITEMS];
  size_t input_count;
  hgr_model_run_t* last;
} staged_runs_t;

static hgr_status_t run_stages(void* user) {
  staged_runs_t* runs = user;
  hgr_model_run_release(runs->last);
  runs->last = NULL;
  HGR_RETURN_IF_ERROR_CLI(hgr_model_run(runs->model, runs->inputs, runs->input_count, &runs->last));
  return hgr_model_run_wait(runs->last);
}

/* The first option given that takes one executor, refused for a model in stages
 * (each stage its own executor, made when a run first reaches it), and why; NULL
 * when none is. */
static const char* needs_one_executor(const run_args_t* args, const char** out_why) {
  const struct {
    bool given;
    const char* option;
    const char* why;
  } options[] = {
      {hgr_cli_ranks_launched(), "mpirun", "every rank runs its part of one executor"},
      {args->profile, "--profile", "it times the commands of one executor's run"},
      {args->profile_json != NULL, "--profile-json", "it writes the profile of one executor's run"},
      {args->trace_path != NULL, "--trace", "it draws the queues of one executor's run"},
      {args->dump_dir != NULL, "--dump", "it steps one executor node by node"},
      {args->pipeline > 0, "--pipeline", "it keeps runs of one executor in flight"},
      {args->place.report_path != NULL, "--place-report", "it reports the placement of one graph"},
      {args->queues > 1, "--queues", "it spreads one executor's nodes over its queues"},
      {args->params_path != NULL, "--params", "it sets an executor's inputs by name; give them with --input"},
  };
  for (size_t i = 0; i < sizeof(options) / sizeof(options[0]); ++i)
    if (options[i].given) {
      *out_why = options[i].why;
      return options[i].option;
    }
  return NULL;
}

/* `hgr run` of a model that decides at run time: every run goes through the model
 * object (hgr_model_run), which reads each decision on the host and runs the stage
 * it selects; the last run's outputs are printed, written and checked. */
static hgr_status_t run_staged(run_args_t* args, bool* failed) {
  const char* why = NULL;
  const char* option = needs_one_executor(args, &why);
  if (option)
    return HGR_STATUS(HGR_STATUS_INVALID_ARGUMENT, "%s needs one executor (%s), but %s decides at run time and runs in "
                      "stages, each its own executor (docs/onnx.md, \"Decisions at run time\")", option, why,
                      args->graph_path);
  staged_runs_t* runs = calloc(1, sizeof(*runs));
  if (!runs) return HGR_STATUS(HGR_STATUS_RESOURCE_EXHAUSTED, "out of host memory");
  runs->model = args->staged;
  hgr_status_t status = given_inputs(args, args->staged, runs->inputs, &runs->input_count);
  if (!status) status = run_timed(args, run_stages, runs);
  hgr_model_report_t report;
  hgr_model_report(args->staged, &report);
  if (!status)
    printf("in stages: %llu decisions read on the host, %llu stages run after them over %ld runs; %u specializations "
           "kept (%llu made, %llu found)\n", (unsigned long long)report.decisions,
           (unsigned long long)report.stage_runs, args->repeat, report.kept, (unsigned long long)report.created,
           (unsigned long long)report.hits);
  if (!status) status = handle_outputs(args, NULL, runs->last, hgr_model_output_count(args->staged), failed);
  hgr_model_run_release(runs->last);
  free(runs);
  return status;
}

/* Marks the inputs that params named as given. */
static void mark_given(hgr_executor_t* executor, const hgr_params_t* params, bool* input_given) {
  for (size_t p = 0; p < hgr_params_count(params); ++p) {
    hgr_tensor_info_t info;
    size_t index;
    if (hgr_params_get(params, p, &info, NULL)) continue;
    hgr_status_t lookup = hgr_executor_input_index(executor, info.name, &index);
    if (!lookup) input_given[index] = true;
    hgr_status_free(lookup);
  }
}

/* Loads the model's weights and the --params file and sets the --input files, then
 * checks that every input of this rank's is given; *out_params keeps the file's
 * params (loaded by name, listed by --verbose). */
static hgr_status_t give_inputs(run_args_t* args, hgr_executor_t* executor, bool* input_given,
                                hgr_params_t** out_params) {
  if (args->model_params) { /* an ONNX model's weights */
    size_t unused = 0;
    HGR_RETURN_IF_ERROR_CLI(hgr_executor_load_params(executor, args->model_params, &unused));
    mark_given(executor, args->model_params, input_given);
    /* The executor's buffers hold the weights now: the host copy goes, instead of
     * doubling the weights' memory for the rest of the process. */
    hgr_params_release(args->model_params);
    args->model_params = NULL;
  }
  if (args->params_path) {
    size_t unused = 0;
    hgr_params_t* params = *out_params = args->file_params;
    args->file_params = NULL;
    HGR_RETURN_IF_ERROR_CLI(hgr_executor_load_params(executor, params, &unused));
    mark_given(executor, params, input_given);
    printf("params: %zu loaded from %s, %zu name no input%s\n", hgr_params_count(params) - unused, args->params_path,
           unused, unused && !args->verbose ? " (--verbose lists them)" : "");
    for (size_t u = 0; args->verbose && u < unused; ++u)
      printf("  unused param '%s'\n", hgr_executor_unused_param(executor, u));
  }
  HGR_RETURN_IF_ERROR_CLI(set_inputs(args, executor, input_given));
  for (size_t i = 0; args->bundle && i < hgr_executor_input_count(executor); ++i) { /* the model's weights */
    hgr_tensor_info_t info;
    size_t index;
    hgr_status_t lookup = hgr_executor_input_info(executor, i, &info);
    if (!lookup) lookup = hgr_model_input_index(args->bundle, info.name, &index);
    if (lookup) input_given[i] = true;
    hgr_status_free(lookup);
  }
  for (size_t i = 0; i < hgr_executor_input_count(executor); ++i)
    if (!input_given[i] && hgr_executor_input_rank(executor, i) == hgr_cli_rank()) {
      hgr_tensor_info_t info;
      hgr_executor_input_info(executor, i, &info);
      return HGR_STATUS(HGR_STATUS_INVALID_ARGUMENT, "input %zu '%s' is neither given with --input nor in the params",
                        i, info.name);
    }
  return HGR_OK;
}

int hgr_cli_run(int argc, char** argv) {
  run_args_t args;
  int code = parse_args("run", argc, argv, &args, run_usage, true);
  if (code >= 0) return code;
  hgr_instance_t* instance = NULL;
  hgr_graph_t* graph = NULL;
  hgr_executor_t* executor = NULL;
  hgr_params_t* params = NULL;
  bool* input_given = NULL;
  bool failed = false;
  bool profiling = args.profile || args.profile_json || args.trace_path;
  hgr_placement_t* placement = NULL;
  hgr_status_t status = create(&args, false, profiling, &instance, &graph, &placement, &executor);
  if (!status && args.staged) status = run_staged(&args, &failed);
  if (status || args.staged) goto cleanup;
  size_t input_count = hgr_executor_input_count(executor);
  input_given = calloc(input_count + 1, sizeof(bool));
  print_placement(instance, executor, args.binding_count > 0);
  if (args.queues > 1) print_queues(instance, executor);
  /* Agreed: a rank that misses an input of its own must not leave the others
   * waiting for its values. */
  status = !input_given ? HGR_STATUS(HGR_STATUS_RESOURCE_EXHAUSTED, "out of host memory")
                        : give_inputs(&args, executor, input_given, &params);
  if ((status = hgr_cli_agree(status, "setting the inputs"))) goto cleanup;

  if (args.dump_dir) {
    /* Stepping replaces the runs; the outputs are there only when every node ran. */
    if ((status = run_dump(&args, graph, executor)) || args.until) goto cleanup;
  }
  if (args.pipeline && !args.dump_dir) {
    if ((status = run_pipelined(executor, args.repeat, args.pipeline))) goto cleanup;
  }
  if (!args.dump_dir && !args.pipeline && (status = run_timed(&args, run_executor, executor))) goto cleanup;
  if (args.profile) {
    hgr_profile_summary_options_t summary;
    hgr_profile_summary_options_init(&summary);
    if (args.verbose) summary.top_nodes = 0;
    if ((status = print_profile(executor, &summary))) goto cleanup;
    if (args.place.requested && (status = hgr_cli_print_predicted(placement, executor))) goto cleanup;
  }
  const char* other_ranks = hgr_cli_ranks_launched() ? " (every other rank N's to FILE.rN)" : "";
  if (args.profile_json) {
    if ((status = write_profile_file(args.profile_json, executor, hgr_profile_write_json)))
      goto cleanup;
    printf("profile written to %s%s\n", args.profile_json, other_ranks);
  }
  if (args.trace_path) {
    if ((status = write_profile_file(args.trace_path, executor, hgr_profile_write_trace)))
      goto cleanup;
    printf("trace written to %s%s\n", args.trace_path, other_ranks);
  }
  status = handle_outputs(&args, executor, NULL, hgr_executor_output_count(executor), &failed);

cleanup:
  free(input_given);
  if (args.specialization) hgr_specialization_release(args.specialization); /* its executor */
  else hgr_executor_release(executor);
  hgr_model_release(args.bundle);
  hgr_model_release(args.staged);
  hgr_kernel_library_release(args.staged_kernels);
  hgr_placement_release(placement);
  hgr_params_release(params);
  hgr_params_release(args.model_params);
  hgr_cli_inputs_free(&args.inputs);
  hgr_graph_release(graph);
  hgr_cli_instance_release(instance);
  if (status) return hgr_cli_fail(status);
  if (failed) {
    fprintf(stderr, "hgr: an output does not match its expected values\n");
    return HGR_CLI_FAILED;
  }
  return HGR_CLI_OK;
}
