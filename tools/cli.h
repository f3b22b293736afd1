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
  bool no_fusion; /* --no-fusion: ONNX elementwise chains stay separate nodes */
} hgr_cli_model_args_t;

/* Consumes --input-shape NAME=D0,D1,..., --fix-input NAME or --no-fusion like
 * hgr_cli_place_parse (-1: another argument). */
int hgr_cli_model_parse(const char* command, hgr_cli_model_args_t* model, int argc, char** argv, int* i);

/* Loads path: TVM graph JSON, or an ONNX model (by its .onnx extension), whose
 * symbolic input dims come from the --input arrays' shapes and --input-shape, and
 * whose --fix-input inputs become constants of their --input values; its
 * weights come back in *out_params (NULL for graph JSON). print: one line of what
 * the ONNX loader did (nodes before and after, folded, removed, fused). */
/* Whether --fix-input named name. */
bool hgr_cli_model_fixed(const hgr_cli_model_args_t* model, const char* name);

hgr_status_t hgr_cli_model_load(const char* path, const hgr_cli_model_args_t* model, const char* const* input_names,
                                const char* const* input_files, size_t input_count, bool print, hgr_graph_t** out_graph,
                                hgr_params_t** out_params);

/* An array from a .npy file, or from an ONNX TensorProto file (.pb, ONNX's test
 * data) when the library has the ONNX loader. Free with hgr_npy_array_free. */
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
