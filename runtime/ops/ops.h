/* The op registry: func_name -> one or more kernel launches, planned from the node's
 * shapes, dtypes and attrs. `__nop` and `__copy` are the runtime's and not in the
 * registry.
 *
 * An op is an infer and a plan function. Infer checks the node's inputs and attrs
 * and gives its outputs' dtypes and shapes (the graph builder calls it through
 * hgr__op_infer while a graph is under construction); hgr__op_plan holds the
 * graph's output entries to it, and plan then describes the launches that compute
 * the node (checking what the device's limits bound): kernel name, arguments
 * (input and output buffers, scalars, local memory, one small read-only int32
 * "meta" buffer of shapes and strides, and the node's scratch buffer), and the
 * NDRange. The executor turns the
 * description into cl_kernels once, at creation, and enqueues the launches of a
 * step in order on one in-order queue (so launch k+1 sees launch k's writes).
 *
 * Ops live in families, one runtime/ops_<family>.c and one kernels/<family>.cl
 * each; a family exports a table terminated by an entry whose name is NULL, and
 * op_registry.c lists the tables; op_context.c implements the helpers below. */
#ifndef HGR_OPS_H_
#define HGR_OPS_H_

#include "graph_internal.h"
#include "hgr/kernels.h"
#include "hgr/tune.h"
#include "internal.h"

/* Launch geometry of one kernel. */
typedef struct hgr__launch_t {
  cl_uint work_dim;
  size_t global[3];
  size_t local[3];
  bool use_local; /* false: let the driver choose */
} hgr__launch_t;

typedef enum hgr__arg_kind_t {
  HGR__ARG_INPUT,  /* buffer of input `index` */
  HGR__ARG_OUTPUT, /* buffer of output `index` */
  HGR__ARG_META,   /* the launch's meta buffer (__global const int*) */
  HGR__ARG_INT,    /* int */
  HGR__ARG_UINT,   /* uint */
  HGR__ARG_FLOAT,  /* float */
  HGR__ARG_LOCAL,  /* __local memory of `local_bytes` */
  /* The node's scratch buffer (__global float*): device memory of the node's own, of
   * the op's scratch_bytes, kept for the executor's life and shared by the node's
   * launches (launch k + 1 reads what launch k wrote there). At the step's start it
   * holds what the previous run left (zeros before the first): a launch reads only
   * what an earlier launch of the same run wrote. One buffer per node is enough
   * because a node's launches never overlap another run's: they all go to the
   * node's one in-order queue. */
  HGR__ARG_SCRATCH,
} hgr__arg_kind_t;

typedef struct hgr__arg_t {
  hgr__arg_kind_t kind;
  uint32_t index;
  int32_t i;
  uint32_t u;
  float f;
  size_t local_bytes;
} hgr__arg_t;

#define HGR__MAX_ARGS 48

/* One kernel launch of a planned op. */
typedef struct hgr__launch_plan_t {
  const char* source; /* kernels/<source>.cl; NULL: the op's; or a generated program's name */
  /* A generated program (fused_elementwise): "<name>\0<OpenCL C text>" from the
   * context's allocator, freed with the plan; source then points at its name, which
   * is unique to the text (a hash of it). NULL for programs of kernels/ or the
   * kernel library. */
  char* generated;
  char kernel[64];    /* entry point (copied in) */
  hgr__arg_t args[HGR__MAX_ARGS];
  uint32_t arg_count;
  /* The kernels of the same source that the op picks instead of this one at other
   * sizes of its inputs (a GEMM's other tiles, a softmax by rows or by element):
   * each name followed by '\0', the list by another '\0', from the context's
   * allocator; NULL when none. The program of
   * a model whose shapes vary holds them too, so that a new shape builds nothing
   * (exec/program_cache.c). */
  char* siblings;
  int32_t* meta;      /* the context's allocator's, meta_count values; NULL when none */
  uint32_t meta_count;
  uint32_t meta_capacity;
  hgr__launch_t launch;
} hgr__launch_plan_t;

/* What a device (and the kernel, once built) allows. */
typedef struct hgr__limits_t {
  size_t max_work_group;   /* min(device, CL_KERNEL_WORK_GROUP_SIZE once known) */
  size_t max_work_item[3];
  uint64_t local_mem_bytes;
  /* floats per vector register (CL_DEVICE_NATIVE_VECTOR_WIDTH_FLOAT); 0 unknown. Not
   * a limit: the GEMM takes its two-vector-wide register block only at 16 or more */
  uint32_t native_float_width;
} hgr__limits_t;

typedef struct hgr__op_t hgr__op_t;

/* ---- tile choices (tuning.c) --------------------------------------------------------- */

/* One record of the tuning file (exec/tune_store.c reads and writes the file): on
 * the device identified by `device` (hgr__tune_device_id), the layer `key` runs
 * fastest with tile `tile`, measured at time_us microseconds per run. */
typedef struct hgr__tune_record_t {
  char* device;
  char* key;
  char* tile;
  double time_us;
} hgr__tune_record_t;

typedef struct hgr__tune_table_t {
  hgr__tune_record_t* records;
  size_t count, capacity;
} hgr__tune_table_t;

/* What a plan consults to choose among its candidates: the records (may be NULL)
 * of one device, and the executor's mode (hgr_tuning_mode_t). */
typedef struct hgr__tuning_t {
  const hgr__tune_table_t* table;
  const char* device; /* hgr__tune_device_id of the node's device */
  hgr_tuning_mode_t mode;
  uint32_t candidate; /* HGR_TUNING_CANDIDATE's */
} hgr__tuning_t;

/* "platform|device|version|driver version": the device part of a record's key.
 * Writes at most capacity bytes (truncating). */
const char* hgr__tune_device_id(const hgr_device_info_t* info, char* buffer, size_t capacity);

/* The tile the table records for device and key, or NULL. */
const char* hgr__tune_lookup(const hgr__tune_table_t* table, const char* device, const char* key);

/* What an op allows when one of its outputs shares an input's storage id (TVM's
 * in-place ops). hgr__op_plan refuses every other sharing with INVALID_ARGUMENT. */
typedef enum hgr__in_place_t {
  HGR__IN_PLACE_REFUSED = 0,
  /* A reshape-like: output 0 sharing input 0's storage is an alias, and the plan
   * runs nothing (like __nop); the plan checks that the bytes are the same. */
  HGR__IN_PLACE_ALIAS = 1,
  /* One launch in which work-item i reads only element i of every input that has
   * the output's element count, and writes element i of the output: an output may
   * share such an input when the element sizes agree too, since then each
   * work-item reads exactly the bytes it writes. A smaller (broadcast) input, or
   * one of another element size, may not share it: another work-item would read
   * bytes already overwritten. Multi-launch ops are never this (a later launch
   * would read what an earlier one overwrote). */
  HGR__IN_PLACE_ELEMENTWISE = 2,
} hgr__in_place_t;

/* An op being planned for one node. */
typedef struct hgr__op_ctx_t {
  /* What the launches, their meta and generated texts are made and freed with
   * (hgr__op_plan's allocator; the graph's for hgr__op_infer). */
  hgr_allocator_t allocator;
  const hgr__op_t* op;
  const hgr_graph_t* graph;
  uint32_t node_id;
  const hgr__node_t* node;
  char label[160];       /* "node 7 'conv1'" */
  hgr__limits_t limits;
  const hgr__tuning_t* tuning; /* NULL: every tile from the limits */
  hgr_tile_choice_t tile;      /* what hgr__op_choose_tile chose (source NONE otherwise) */
  hgr_status_t error;    /* first failure of a launch helper (out of memory, too many args) */
  hgr__launch_plan_t* launches;
  uint32_t launch_count;
  uint32_t launch_capacity;
  uint64_t scratch_bytes;      /* the node's scratch buffer (HGR__ARG_SCRATCH); 0: none */
  hgr__launch_plan_t discarded; /* what hgr__op_launch returns when it cannot append */
} hgr__op_ctx_t;

struct hgr__op_t {
  const char* name;      /* func_name */
  const char* source;    /* kernels/<source>.cl */
  uint32_t min_inputs, max_inputs;   /* max UINT32_MAX: any number */
  uint32_t min_outputs, max_outputs;
  /* Space-separated attr names the op reads (Relay's names); any other attr of the
   * node is an error, except "hash" and empty "*layout*" values, which TVM emits. */
  const char* attrs;
  /* Checks the node and fills ctx's launches. */
  hgr_status_t (*plan)(hgr__op_ctx_t* ctx);
  /* Op-specific constant for plan (e.g. which expression a shared plan computes). */
  int variant;
  /* Whether an output may share an input's storage id (above). */
  hgr__in_place_t in_place;
  /* The dtypes and shapes of the node's outputs from its inputs' entries and its
   * attrs: fills outputs[k].dtype, ndim and shape for k < num_outputs (nothing
   * else). Every check of inputs and attrs lives here or in plan, and every check
   * of an output is hgr__op_plan comparing the graph's output entries with what
   * infer gives, so that inference and checking cannot disagree. */
  hgr_status_t (*infer)(hgr__op_ctx_t* ctx, hgr__entry_t* outputs);
};

/* ---- registry ---------------------------------------------------------------------- */

/* The built-in op called name, or NULL. */
const hgr__op_t* hgr__op_find(const char* name);
/* The built-in families' tables (each ends with an op whose name is NULL). */
const hgr__op_t* const* hgr__op_families(size_t* out_count);

/* Plans node node_id for a device with the given limits: finds the op (built-in,
 * else in library, which may be NULL), checks the
 * input and output counts, the attrs against the op's list and outputs sharing an
 * input's storage id against the op's in_place, runs the op's infer and compares
 * every output entry's dtype and shape with what it gives (skipped for a user op
 * whose manifest declares no "shapes": infer is NULL), and calls its plan, which
 * may then rely on what infer checked.
 * On success *ctx holds the launches, made with allocator (which ctx keeps; free
 * with hgr__op_ctx_free); on failure nothing is left allocated and the status names
 * the node. INVALID_ARGUMENT for an unknown func_name (listing the
 * known ones), a wrong count, an unknown attr, an output in place where the op
 * cannot run in place (naming the output and input entries and the storage id) or
 * anything the op rejects. */
hgr_status_t hgr__op_plan(hgr_allocator_t allocator, const hgr_graph_t* graph, uint32_t node_id,
                          const hgr_kernel_library_t* library, const hgr__limits_t* limits, hgr__op_ctx_t* ctx);

/* hgr__op_plan with tile choices: a plan with candidates consults tuning (may be
 * NULL) through hgr__op_choose_tile, and ctx->tile says what it chose. */
hgr_status_t hgr__op_plan_tuned(hgr_allocator_t allocator, const hgr_graph_t* graph, uint32_t node_id,
                                const hgr_kernel_library_t* library, const hgr__limits_t* limits,
                                const hgr__tuning_t* tuning, hgr__op_ctx_t* ctx);

/* The context of node node_id of graph for reading its attrs and inputs outside
 * planning (a pass asking what an op would do): the built-in op, its counts and
 * attrs checked, no device's limits; free with hgr__op_ctx_free. On failure nothing
 * is left allocated. */
hgr_status_t hgr__op_inspect(const hgr_graph_t* graph, uint32_t node_id, hgr__op_ctx_t* ctx);

/* Whether the conv2d of ctx (hgr__op_inspect's), followed by a max pool of
 * window[0] x window[1] at that stride without padding, runs both in one
 * register-blocked kernel (conv2d's attr pool_size, ops_conv.c): where the conv
 * epilogue pass fuses the pool. */
bool hgr__conv2d_pools_in_registers(const hgr__op_ctx_t* ctx, const int64_t window[2]);

/* Whether the max_pool2d of ctx (hgr__op_inspect's) tiles its input: windows at
 * their own stride, without padding or dilation, each output the max of its own
 * window (ops_pool.c); *out_window gets the window. */
bool hgr__max_pool2d_tiles(const hgr__op_ctx_t* ctx, int64_t out_window[2]);

/* The op called name: built-in, else the library's (library may be NULL); NULL when
 * neither has it. */
const hgr__op_t* hgr__op_lookup(const char* name, const hgr_kernel_library_t* library);

/* Infers the dtypes and shapes of node node_id's outputs: runs the checks
 * hgr__op_plan runs before planning (known op, input and output counts, attrs) and
 * the op's infer, with no device limits. Only the node and its input entries are
 * read (the graph may be under construction, graph_edit.c). out_outputs[k] for k <
 * the node's num_outputs gets dtype, ndim, shape, element_count and bytes; the
 * other fields are zeroed. Errors as hgr__op_plan's, naming the node, the op and
 * the input or attr at fault. */
hgr_status_t hgr__op_infer(const hgr_graph_t* graph, uint32_t node_id, const hgr_kernel_library_t* library,
                           hgr__entry_t* out_outputs);

/* ---- fused elementwise chains (ops_fused.c) -------------------------------------------- */

/* What fused_elementwise can compute: a built-in float32 elementwise op, its value
 * operands (1 or 2), the attrs it reads as float literals (in order, with their
 * defaults; NAN: required) and its OpenCL C expression over the value operands A,
 * B and the params P, Q (the same expression as the op's kernel). */
#define HGR__FUSED_MAX_INPUTS 16
#define HGR__FUSED_MAX_STATEMENTS 64
#define HGR__FUSED_MAX_OPERANDS 4
typedef struct hgr__fusable_t {
  const char* name;
  uint32_t operands;
  const char* params[2];
  double defaults[2];
  const char* code;
} hgr__fusable_t;
/* The fusable op called name (a built-in func_name), or NULL. */
const hgr__fusable_t* hgr__fusable_op(const char* name);

/* ---- user kernels (kernel_library.c) ---------------------------------------------------- */

/* The library's op called name, or NULL. */
const hgr__op_t* hgr__library_op(const hgr_kernel_library_t* library, const char* name);
/* The source or binary of a library op's program for a device: *out_binary (and
 * length) when the library has a binary for it, else *out_text; both NULL when it
 * has neither. source_name is the op's `source`. */
typedef struct hgr__user_program_t {
  const char* text;
  size_t text_length;
  const unsigned char* binary;
  size_t binary_length;
  const char* build_options;
  const char* origin; /* the file it came from, for messages */
} hgr__user_program_t;
bool hgr__library_program(const hgr_kernel_library_t* library, const char* source_name, const hgr_device_info_t* device,
                          hgr__user_program_t* out_program);
void hgr__op_ctx_free(hgr__op_ctx_t* ctx);

/* The embedded source called name (kernels/<name>.cl), or NULL. */
const char* hgr__kernel_source(const char* name, size_t* out_length);


/* ---- for plan functions -------------------------------------------------------------- */

/* float32 and int32 scalars' dtypes, for infer functions. */
#define HGR__DTYPE_F32 ((hgr_dtype_t){HGR_DTYPE_FLOAT, 32, 1})
#define HGR__DTYPE_I32 ((hgr_dtype_t){HGR_DTYPE_INT, 32, 1})
bool hgr__dtype_same(hgr_dtype_t a, hgr_dtype_t b);
/* Sets an inferred output's dtype, ndim and shape (ndim values). */
void hgr__op_set_output(hgr__entry_t* output, hgr_dtype_t dtype, const int64_t* shape, int32_t ndim);

/* INVALID_ARGUMENT status prefixed with the node label and the op name:
 * "node 7 'conv1' (conv2d): <message>". */
#define HGR__OP_ERROR(ctx, ...) hgr__op_error((ctx), __FILE__, __LINE__, __VA_ARGS__)
hgr_status_t hgr__op_error(const hgr__op_ctx_t* ctx, const char* file, int line, const char* format, ...)
    HGR_PRINTF(4, 5);

/* Whether the node's device is one of PoCL's CPU drivers (pthread, basic, cpu),
 * which run a work-group's work-items as a loop per region between barriers, pay
 * for each work-item, and vectorize only what a work-item writes in vectors: where
 * fewer work-items doing more each win. The limits do not say how a device runs
 * work-items, and its type does not either (rusticl's llvmpipe is a CPU that runs
 * them SIMT-wise, as GPUs), so this reads the device's platform and name from its
 * tuning id ("platform|device|version|driver"); false without one. */
bool hgr__op_loops_work_items(const hgr__op_ctx_t* ctx);

/* How many loop iterations a work-item may run in all, summed over every loop of its
 * kernel, before the driver silently ends its loops early; 0: no such limit known.
 * llvmpipe (rusticl's CPU device) has one counter for every loop of a kernel, Mesa's
 * gallivm LP_MAX_TGSI_LOOP_ITERATIONS = 65535: past it the loops stop and the results
 * are wrong. Read from the tuning id as hgr__op_loops_work_items reads it. */
uint64_t hgr__op_loop_iteration_limit(const hgr__op_ctx_t* ctx);

uint32_t hgr__op_input_count(const hgr__op_ctx_t* ctx);
uint32_t hgr__op_output_count(const hgr__op_ctx_t* ctx);
const hgr__entry_t* hgr__op_input(const hgr__op_ctx_t* ctx, uint32_t i);
const hgr__entry_t* hgr__op_output(const hgr__op_ctx_t* ctx, uint32_t i);
/* The entry's id in the node's graph (what error messages name). */
uint32_t hgr__op_entry_id(const hgr__op_ctx_t* ctx, const hgr__entry_t* entry);

bool hgr__dtype_is_f32(hgr_dtype_t dtype);
bool hgr__dtype_is_i32(hgr_dtype_t dtype);

/* Checks that input i (output_index < 0) or output output_index is float32, or
 * also int32 when allow_i32; the error names the entry and its dtype. Infer
 * functions check inputs only (hgr__op_plan checks outputs against infer). */
hgr_status_t hgr__op_check_dtype(const hgr__op_ctx_t* ctx, int input_index, int output_index,
                                 bool allow_i32);
/* Checks that an entry's shape equals `shape` (ndim values); the error names what
 * was expected (`what`, e.g. "the output") and what the graph declares. */
hgr_status_t hgr__op_check_shape(const hgr__op_ctx_t* ctx, const hgr__entry_t* entry, const char* entry_name,
                                 const int64_t* shape, int32_t ndim);
/* Checks that a count fits a kernel's indexing: at most max (INT32_MAX for int,
 * UINT32_MAX for uint indices). */
hgr_status_t hgr__op_check_range(const hgr__op_ctx_t* ctx, const char* what, uint64_t value, uint64_t max);

/* Attrs. A missing attr gives the default (and *out_present = false where asked).
 * A value that does not parse is an error naming the node, the attr and the value.
 * Ints: "3"; floats: "0.01", "1e-5", "inf", "-inf"; bools: "1"/"0"/"true"/"false"
 * (any case); int lists: "[2, 2]", "(2, 2)", "[]" or a bare int "2" (one value);
 * nested lists are read flat in order ("[[0, 0], [1, 2]]" gives 0, 0, 1, 2);
 * "None"/"null"/"" for a list means absent. */
hgr_status_t hgr__attr_int(const hgr__op_ctx_t* ctx, const char* key, int64_t fallback, int64_t* out);
hgr_status_t hgr__attr_float(const hgr__op_ctx_t* ctx, const char* key, double fallback, double* out);
hgr_status_t hgr__attr_bool(const hgr__op_ctx_t* ctx, const char* key, bool fallback, bool* out);
/* Up to capacity ints into out; *out_count values; *out_present (may be NULL). */
hgr_status_t hgr__attr_ints(const hgr__op_ctx_t* ctx, const char* key, int64_t* out, uint32_t capacity,
                            uint32_t* out_count, bool* out_present);
/* Up to capacity numbers into out: a flat list ("[0.5, 1e-3]", "(2,)", "[]") or one
 * bare number; absent, "None", "null" or "" give none (*out_present false). NaN
 * and anything else are errors naming the attr and its value. */
hgr_status_t hgr__attr_floats(const hgr__op_ctx_t* ctx, const char* key, double* out, uint32_t capacity,
                              uint32_t* out_count, bool* out_present);
/* An attr of one or two ints, each in [min, INT32_MAX] ("2" means [2, 2]). */
hgr_status_t hgr__attr_pair(const hgr__op_ctx_t* ctx, const char* key, int64_t fallback, int64_t min,
                            int64_t out[2]);
/* Relay's padding: 1 value (all sides), 2 ([top and bottom, left and right]) or 4
 * ([top, left, bottom, right]); out is top, left, bottom, right, each >= 0. */
hgr_status_t hgr__attr_padding(const hgr__op_ctx_t* ctx, const char* key, int64_t out[4]);
/* A string attr that must be one of the allowed values (NULL-terminated list; ""
 * stands for the attr left unset and is not listed in the error). */
hgr_status_t hgr__attr_choice(const hgr__op_ctx_t* ctx, const char* key, const char* fallback,
                              const char* const* allowed, const char** out);
/* The string value, or fallback when absent. Never fails. */
const char* hgr__attr_string(const hgr__op_ctx_t* ctx, const char* key, const char* fallback);

/* An axis in [-ndim, ndim) made non-negative; error naming the attr otherwise. */
hgr_status_t hgr__op_axis(const hgr__op_ctx_t* ctx, const char* key, int64_t axis, int32_t ndim,
                          int32_t* out_axis);

/* An op's output layout: attrs out_shape (1 to 4 dims) and out_axes (a permutation
 * of as many axes), both or neither, say that the op writes its result R as
 * transpose(reshape(R, out_shape), out_axes), as a reshape and a transpose after it
 * would (passes/fuse_out_layout.c folds them in). dims: R viewed as out_shape padded
 * with leading 1s to 4 dims; strides: each view axis's stride in the output. */
typedef struct hgr__out_layout_t {
  bool mapped; /* false: the output is R as it is */
  int32_t dims[4];
  int32_t strides[4];
  int32_t rank;    /* out_shape's dims, */
  int32_t axes[4]; /* and out_axes (of the view without the padding) */
} hgr__out_layout_t;
/* Reads the attrs (out_layout.c); shape and *ndim, R's shape on entry, become the
 * output's. Errors name the node and the attrs: one without the other, a shape that
 * does not hold R's elements (or more than INT32_MAX), axes that are no permutation. */
hgr_status_t hgr__out_layout_parse(const hgr__op_ctx_t* ctx, int64_t* shape, int32_t* ndim, hgr__out_layout_t* out);
/* The most outputs an op with layouts has (a GEMM split into q, k and v). */
#define HGR__OUT_LAYOUT_OUTPUTS 3
/* hgr__out_layout_parse for output `output` of an op of `outputs` (at most
 * HGR__OUT_LAYOUT_OUTPUTS) whose outputs share out_shape: out_axes holds one
 * permutation for all of them, or one per output in turn (rank * outputs ints). */
hgr_status_t hgr__out_layout_parse_output(const hgr__op_ctx_t* ctx, uint32_t output, uint32_t outputs,
                                          int64_t* shape, int32_t* ndim, hgr__out_layout_t* out);
/* Appends kernels/out_layout.h's HGR_OUT_LAYOUT_PARAMS for layout (all 0: plain). */
void hgr__out_layout_args(hgr__op_ctx_t* ctx, hgr__launch_plan_t* l, const hgr__out_layout_t* layout);
/* Whether view (view_ndim dims) only splits the dims of shape (ndim dims): each dim of
 * shape other than 1 the product of consecutive dims of view, the rest of view 1s. A
 * tensor of shape at strides (elements; NULL: not asked) is then the view at
 * *out_strides, whatever the strides: a strided gather can read it so. */
bool hgr__view_splits(const int64_t* shape, int32_t ndim, const int64_t* view, int32_t view_ndim,
                      const int64_t* strides, int64_t* out_strides);

/* Launches. hgr__op_launch appends one (kernel of the op's source; the name is
 * copied, at most 63 characters) and returns it; when out of memory it records
 * that in ctx->error and returns ctx->discarded instead, which plan functions fill
 * like any launch and which is then dropped, so that no plan function has to test
 * the launch it got. The helpers below record their own failures in ctx->error
 * too, which hgr__op_plan returns after plan. */
hgr__launch_plan_t* hgr__op_launch(hgr__op_ctx_t* ctx, const char* kernel);
void hgr__launch_input(hgr__op_ctx_t* ctx, hgr__launch_plan_t* l, uint32_t index);
void hgr__launch_output(hgr__op_ctx_t* ctx, hgr__launch_plan_t* l, uint32_t index);
void hgr__launch_meta_arg(hgr__op_ctx_t* ctx, hgr__launch_plan_t* l);
void hgr__launch_int(hgr__op_ctx_t* ctx, hgr__launch_plan_t* l, int32_t value);
void hgr__launch_uint(hgr__op_ctx_t* ctx, hgr__launch_plan_t* l, uint32_t value);
void hgr__launch_float(hgr__op_ctx_t* ctx, hgr__launch_plan_t* l, float value);
void hgr__launch_local(hgr__op_ctx_t* ctx, hgr__launch_plan_t* l, size_t bytes);
/* The node's scratch buffer as the next argument; the buffer holds at least bytes
 * (the largest any launch of the node asks for). */
void hgr__launch_scratch(hgr__op_ctx_t* ctx, hgr__launch_plan_t* l, uint64_t bytes);
/* Appends values to the launch's meta buffer. */
void hgr__launch_meta(hgr__op_ctx_t* ctx, hgr__launch_plan_t* l, const int32_t* values, uint32_t count);
void hgr__launch_meta1(hgr__op_ctx_t* ctx, hgr__launch_plan_t* l, int32_t value);
/* Names kernel (of the launch's source) as one the op picks instead of the launch's
 * at other input sizes (hgr__launch_plan_t.siblings); the launch's own is skipped. */
void hgr__launch_sibling(hgr__op_ctx_t* ctx, hgr__launch_plan_t* l, const char* kernel);

/* ---- broadcasting (op_context.c) ----------------------------------------------------- */

/* Extent of dimension d of an ndim-dimensional broadcast for entry placed at axis
 * (-1: aligned to the right, NumPy's rule); dimensions it lacks are 1. */
int64_t hgr__broadcast_extent(const hgr__entry_t* entry, int32_t axis, int32_t ndim, int32_t d);

/* An output's dimensions with extent-1 ones dropped and neighbours merged along which
 * every input is broadcast in both or in neither: fewer dimensions, fewer divisions
 * per element in a broadcast kernel; one left with every input full is contiguous. */
typedef struct hgr__collapsed_t {
  int32_t ndim;
  int64_t extent[HGR_MAX_DIMS];
  bool full[HGR__FUSED_MAX_INPUTS][HGR_MAX_DIMS]; /* input j spans dimension k; false: stride 0 */
} hgr__collapsed_t;

/* Collapses out's dimensions for count (<= HGR__FUSED_MAX_INPUTS) inputs, inputs[j]
 * placed at axes[j] (axes NULL: all aligned to the right); a NULL inputs[j] counts as
 * broadcast along every dimension. */
void hgr__collapse_broadcast(const hgr__entry_t* const* inputs, const int32_t* axes, uint32_t count,
                             const hgr__entry_t* out, hgr__collapsed_t* c);

/* NDRange helpers. Local sizes come from the device and the kernel, never from a
 * tensor's shape: drivers compile a kernel per local size (PoCL: its work-group
 * function, 0.2-0.4 s each), so a new shape must launch with the sizes the first
 * one compiled. Global sizes are rounded up to whole work-groups (kernels check
 * their range; a count of 0 still launches one group).
 * 1-D: one work-item per each of count items, in work-groups of up to 64 (fewer
 * when the limits say so); _groups: of up to `local` (a kernel whose work-items each
 * do much, a pool's row, wants more groups on small outputs). */
void hgr__launch_1d(const hgr__op_ctx_t* ctx, hgr__launch_plan_t* l, uint64_t count);
void hgr__launch_1d_groups(const hgr__op_ctx_t* ctx, hgr__launch_plan_t* l, uint64_t count, size_t local);
/* At most `most` work-items in a group along dimension 0, within the limits (at least 1). */
size_t hgr__launch_local_at_most(const hgr__op_ctx_t* ctx, size_t most);
/* N-D with an explicit local size (each local[d] must be <= the limits, checked by
 * the caller); global[d] is rounded up to a multiple of local[d]. */
void hgr__launch_nd(hgr__launch_plan_t* l, cl_uint dims, const size_t* global, const size_t* local);

/* Chooses one of an op's count tile candidates (names[i], fits[i]: whether
 * candidate i fits the device) for the layer `key`: candidate by_limits, the op's
 * own rule over the limits, unless ctx->tuning asks for a fitting candidate
 * (HGR_TUNING_CANDIDATE) or records one for the layer (a record naming a tile not
 * in names, or one that does not fit, is ignored). Fills ctx->tile; returns the
 * index. by_limits must fit. */
uint32_t hgr__op_choose_tile(hgr__op_ctx_t* ctx, const char* key, const char* const* names, const bool* fits,
                             uint32_t count, uint32_t by_limits);

#endif /* HGR_OPS_H_ */
