/* The `hgr` command-line program: shared declarations of its commands. */
#ifndef HGR_CLI_H_
#define HGR_CLI_H_

#include <stdbool.h>
#include <stdio.h>

#include "hgr/hgr.h"
#include "hgr/place.h"

/* Exit codes: 0 success, 1 failure, 2 usage error. */
#define HGR_CLI_OK 0
#define HGR_CLI_FAILED 1
#define HGR_CLI_USAGE 2

int hgr_cli_devices(int argc, char** argv);
int hgr_cli_run(int argc, char** argv);
int hgr_cli_check(int argc, char** argv);
int hgr_cli_place(int argc, char** argv);
int hgr_cli_tune(int argc, char** argv);
int hgr_cli_compile(int argc, char** argv);

/* ---- placement flags, shared by run, check and place (cli_place.c) ---- */

#define HGR_CLI_MAX_DEVICES 32

typedef struct hgr_cli_place_args_t {
  char device_text[1024];                 /* --devices, split in place */
  const char* devices[HGR_CLI_MAX_DEVICES];
  size_t device_count;
  hgr_place_options_t options;            /* rules and policy from --place */
  bool requested;                         /* --devices or --place given: place anew */
  const char* report_path;                /* --place-report */
} hgr_cli_place_args_t;

/* When argv[*i] is a placement flag (--devices, --place, --place-report,
 * --no-cost-cache), consumes it and its value (advancing *i) and returns HGR_CLI_OK,
 * or a usage error's exit code; returns -1 for any other argument. place must have
 * been zeroed and its options initialized (hgr_place_options_init). */
int hgr_cli_place_parse(const char* command, hgr_cli_place_args_t* place, int argc, char** argv, int* i);

/* When placement was requested, places *inout_graph (replacing it by the placed
 * graph), prints the summary when print_summary, writes --place-report, and returns
 * the placement in *out_placement (NULL when nothing was requested). Under a
 * launcher it is collective (hgr_mpi_place): every rank gets the placed graph, rank
 * 0 alone the placement, which it prints and writes. */
hgr_status_t hgr_cli_place_apply(hgr_cli_place_args_t* place, hgr_instance_t* instance, hgr_kernel_library_t* kernels,
                                 bool print_summary, hgr_graph_t** inout_graph, hgr_placement_t** out_placement);

/* When argv[*i] is --device KEY=SPEC (a graph device key bound to a device),
 * appends the binding to bindings (*count of capacity; SPEC points into argv) and
 * consumes it like hgr_cli_place_parse (-1: another argument). */
int hgr_cli_binding_parse(const char* command, hgr_device_binding_t* bindings, size_t* count, size_t capacity,
                          int argc, char** argv, int* i);

/* ---- sizes and counts (cli_size.c) ---- */

/* Parses text, a size or count given on the command line: decimal digits and, when
 * suffixes, an optional K, M, G or T (powers of 1024), into *out_value (untouched on
 * failure). Refuses an empty text, a sign, a space, anything else after the digits
 * (INVALID_ARGUMENT), and a value that overflows 64 bits, exceeds max or is below
 * min (OUT_OF_RANGE; min 1 where zero means nothing), quoting text. */
hgr_status_t hgr_cli_parse_number(const char* text, bool suffixes, uint64_t min, uint64_t max, uint64_t* out_value);
/* hgr_cli_parse_number for flag's value: HGR_CLI_OK, or the usage error's exit code
 * after printing "hgr <command>: <flag>: <why>" (flag may say what it takes). */
int hgr_cli_number_flag(const char* command, const char* flag, const char* text, bool suffixes, uint64_t min,
                        uint64_t max, uint64_t* out_value);

/* ---- the --input arrays (cli_inputs.c) ---- */

#define HGR_CLI_MAX_INPUTS 256

/* The --input NAME=FILE options of a command. Each file is opened and read once,
 * when first asked for, and its array kept: a FIFO can be read only once, so the
 * loader (which takes shapes and --fix-input values from the arrays) and the run
 * (which sets them) share one read. */
typedef struct hgr_cli_inputs_t {
  const char* names[HGR_CLI_MAX_INPUTS]; /* point into argv */
  const char* files[HGR_CLI_MAX_INPUTS];
  hgr_npy_array_t arrays[HGR_CLI_MAX_INPUTS];
  bool loaded[HGR_CLI_MAX_INPUTS];
  bool dropped[HGR_CLI_MAX_INPUTS];
  size_t count;
} hgr_cli_inputs_t;

/* When argv[*i] is --input NAME=FILE, consumes it like hgr_cli_place_parse (-1:
 * another argument). inputs must have been zeroed. */
int hgr_cli_inputs_parse(const char* command, hgr_cli_inputs_t* inputs, int argc, char** argv, int* i);
/* Input i's array, loaded from its file on the first call (hgr_cli_load_array) and
 * borrowed from inputs after that. Errors: the load's, annotated "--input NAME";
 * FAILED_PRECONDITION once the array was dropped. */
hgr_status_t hgr_cli_inputs_array(hgr_cli_inputs_t* inputs, size_t i, const hgr_npy_array_t** out_array);
/* Frees input i's array once its values were handed on (set on the executor). */
void hgr_cli_inputs_drop(hgr_cli_inputs_t* inputs, size_t i);
/* Frees every array; inputs may then be zeroed and used again. */
void hgr_cli_inputs_free(hgr_cli_inputs_t* inputs);

/* ---- the graph a command names (cli_model.c) ---- */

#define HGR_CLI_MAX_SHAPES 64

typedef struct hgr_cli_input_shape_t {
  const char* name; /* not terminated: name_length characters (points into argv) */
  size_t name_length;
  int32_t ndim;
  int64_t shape[HGR_MAX_DIMS];
} hgr_cli_input_shape_t;

typedef struct hgr_cli_model_args_t {
  hgr_cli_input_shape_t shapes[HGR_CLI_MAX_SHAPES]; /* --input-shape */
  size_t shape_count;
  const char* fixed[HGR_CLI_MAX_SHAPES]; /* --fix-input NAME: its --input value fixed at load */
  size_t fixed_count;
  bool no_fusion; /* --no-fusion: elementwise chains stay separate nodes (ONNX and graph JSON) */
  bool no_prepack; /* --no-prepack: matmul weights keep their layout (no panels) */
  bool list_fusions; /* the graph passes print each node they fused (`hgr run --verbose`) */
  uint64_t loader_budget; /* --loader-budget: the ONNX loader's bytes at once; 0: its default */
  bool shapes_missing;    /* set by hgr_cli_model_load: an ONNX input's shape was neither given nor fixed */
} hgr_cli_model_args_t;

/* The help lines of the flags hgr_cli_model_parse takes besides --input-shape. */
#define HGR_CLI_LOADER_FLAGS                                                            \
  "  --loader-budget SIZE   the most host memory an ONNX model's loader holds at once\n" \
  "                         (weights, external data, constants folded at load); SIZE\n" \
  "                         in bytes, suffixes K, M, G, T (powers of 1024); default\n" \
  "                         from the model's size, at most 8G (docs/onnx.md)\n"

/* Consumes --input-shape NAME=D0,D1,..., --fix-input NAME, --no-fusion, --no-prepack or
 * --loader-budget SIZE like hgr_cli_place_parse (-1: another argument). */
int hgr_cli_model_parse(const char* command, hgr_cli_model_args_t* model, int argc, char** argv, int* i);

/* Whether --fix-input named name. */
bool hgr_cli_model_fixed(const hgr_cli_model_args_t* model, const char* name);

/* Loads path: TVM graph JSON, or an ONNX model (by its .onnx extension) specialized
 * (hgr_model_graph) to the input shapes of the --input arrays (inputs may be NULL:
 * none) and --input-shape, whose --fix-input inputs become constants of their
 * --input values, as do inputs whose values decide shapes (those are added to
 * model->fixed), and whose loader holds at most --loader-budget; its weights come
 * back in *out_params (NULL for graph JSON). print: one line of what the ONNX loader
 * did (nodes before and after, folded, removed, fused), and the model's symbolic
 * inputs and outputs when a shape is missing (model->shapes_missing). */
hgr_status_t hgr_cli_model_load(const char* path, hgr_cli_model_args_t* model, hgr_cli_inputs_t* inputs,
                                bool print, hgr_graph_t** out_graph, hgr_params_t** out_params);

/* After hgr_cli_model_load refused path with one_graph (taken): whether the model
 * decides at run time (docs/onnx.md, "Decisions at run time") and so runs in stages
 * through the model object instead of as one graph. When it does (or when the model
 * object runs it as one executor after all), *out_model is the model object on
 * instance with options (the loader's options from model, as hgr_cli_model_load
 * takes them; its first stage specialized at the shapes hgr_cli_model_load takes
 * and kept in its cache), *out_decision the status
 * hgr_model_specialize refused it with (FAILED_PRECONDITION naming the node that
 * decides; HGR_OK when it did not; the caller frees it), and HGR_OK is returned.
 * Otherwise one_graph is returned when the model object refuses the model as the
 * loader did (UNIMPLEMENTED: an op hgr lacks), or the model object's error (its
 * first stage could not be placed or made). */
hgr_status_t hgr_cli_model_open_staged(const char* path, hgr_cli_model_args_t* model, hgr_cli_inputs_t* inputs,
                                      hgr_instance_t* instance, const hgr_model_options_t* options,
                                      hgr_status_t one_graph, hgr_model_t** out_model, hgr_status_t* out_decision);

/* An array from a .npy file, or from an ONNX TensorProto file (.pb, ONNX's test
 * data, at most HGR__FILE_MAX_TENSOR_PROTO_BYTES) when the library has the ONNX
 * loader. Free with hgr_npy_array_free. */
hgr_status_t hgr_cli_load_array(const char* path, hgr_npy_array_t* out_array);

/* `hgr run --profile` on a placed graph: predicted beside measured, per device.
 * Collective under a launcher: every rank gives its own devices' measured times and
 * rank 0, which alone has the placement (the others pass NULL), prints. */
hgr_status_t hgr_cli_print_predicted(const hgr_placement_t* placement, const hgr_executor_t* executor);

/* ---- ranks: several processes under an MPI launcher (cli_ranks.c) ----
 * Under mpirun every rank runs the same command; without a launcher, or in a build
 * without libhgr_mpi, there is one rank and these are the plain calls. */

/* Before anything else: joins the ranks when a launcher started the process (MPI
 * with MPI_THREAD_MULTIPLE); ranks other than 0 then print nothing on stdout. */
int hgr_cli_ranks_start(int* argc, char*** argv);
/* At the end: releases the MPI instance and finalizes MPI. */
void hgr_cli_ranks_finish(void);
bool hgr_cli_ranks_launched(void);
int hgr_cli_rank(void);
/* When argv[*i] is --mpi-timeout S (seconds a rank waits for another; without it
 * libhgr_mpi's default), consumes it (advancing *i) and returns HGR_CLI_OK, or a
 * usage error's exit code; -1 for any other argument. Accepted without a launcher
 * too, where it does nothing. */
int hgr_cli_ranks_parse(const char* command, int argc, char** argv, int* i);
#define HGR_CLI_RANKS_FLAGS                                                           \
  "  --mpi-timeout S        under mpirun: seconds a rank waits for another before\n" \
  "                         every rank fails naming it (default 60; docs/distributed.md)\n"
/* The instance: this rank's devices (under a launcher, the MPI instance's, created
 * once, collectively). Release with hgr_cli_instance_release. */
hgr_status_t hgr_cli_instance_create(const hgr_instance_options_t* options, hgr_instance_t** out_instance);
void hgr_cli_instance_release(hgr_instance_t* instance);
/* Collective under a launcher: every rank gets the first failing rank's error. */
hgr_status_t hgr_cli_agree(hgr_status_t local, const char* what);
/* hgr_executor_create / hgr_executor_wait, collective under a launcher. */
hgr_status_t hgr_cli_executor_create(hgr_instance_t* instance, hgr_graph_t* graph,
                                     const hgr_executor_options_t* options, hgr_executor_t** out_executor);
hgr_status_t hgr_cli_executor_wait(hgr_executor_t* executor);
/* hgr_place, and *out_graph the placed graph; under a launcher, once the ranks'
 * instance exists (hgr_cli_instance_create), hgr_mpi_place (collective: every rank
 * gets the placed graph, rank 0 alone *out_placement). */
hgr_status_t hgr_cli_place_graph(hgr_instance_t* instance, hgr_graph_t* graph, const hgr_place_options_t* options,
                                 hgr_graph_t** out_graph, hgr_placement_t** out_placement);
/* Under a launcher: every rank's devices, written by rank 0 (*out_written true). */
hgr_status_t hgr_cli_devices_write(FILE* out, bool* out_written);
/* Collective under a launcher: hgr_mpi_gather_texts (what names the step in
 * errors). Rank 0 gets *out_texts, rank r's text at (*out_texts)[r], in one
 * allocation (free(*out_texts)), and *out_count the number of ranks; the other ranks
 * get NULL and 0. Without a launcher: this one text, laid out alike. */
hgr_status_t hgr_cli_gather_text(const char* text, size_t length, const char* what, char*** out_texts,
                                 int* out_count);
/* Collective under a launcher: hgr_mpi_broadcast_text, rank 0's text to every rank
 * as a malloc'd copy (*out_text, *out_length). Without a launcher: a copy. */
hgr_status_t hgr_cli_broadcast_text(const char* text, size_t length, const char* what, char** out_text,
                                    size_t* out_length);

/* A macro's value as a string literal. */
#define HGR_CLI_STRINGIFY(x) HGR_CLI_STRINGIFY_(x)
#define HGR_CLI_STRINGIFY_(x) #x

/* Returns the status of expr from the enclosing function if it failed. */
#define HGR_RETURN_IF_ERROR_CLI(expr)       \
  do {                                      \
    hgr_status_t cli_status_ = (expr);      \
    if (cli_status_) return cli_status_;    \
  } while (0)

/* Prints "hgr: <status>" to stderr, frees it, returns HGR_CLI_FAILED. */
int hgr_cli_fail(hgr_status_t status);

/* Prints "hgr <command>: <message>" and a hint to use --help; returns HGR_CLI_USAGE. */
int hgr_cli_usage_error(const char* command, const char* format, ...);

/* Formats bytes as "12.0 MiB" into buffer. */
const char* hgr_cli_bytes(unsigned long long bytes, char* buffer, size_t capacity);

/* Writes text as a JSON string literal (quoted, escaped). */
void hgr_cli_json_string(FILE* out, const char* text);

#endif /* HGR_CLI_H_ */
