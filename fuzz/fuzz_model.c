/* libFuzzer target: the model object (hgr/model.h) fed sequences of input shapes and
 * values. A model is created without an instance (it makes graphs only), from one
 * of the symbolic models of tests/data/symbolic/ or from model bytes in the input,
 * then asked for its graph (hgr_model_graph) at shapes, dtypes and values read
 * from the rest of the input: valid ones, ones that break a fixed or named dim, a
 * rank, a dtype or a byte count, huge dims, and values of inputs that decide shapes
 * (negative, zero, huge). Between them: the accessors at random indexes and names,
 * a graph model made from a graph the ONNX model gave, an exact repeat of the last
 * request. The model learns which inputs decide shapes as it goes, so the order of
 * the requests matters.
 *
 * The input (all integers little-endian):
 *   byte 0 = 0..3      the symbolic model of that number (models[] below), then
 *                      an options byte, then requests
 *   byte 0 = 4         a model: 3 bytes of length L, L bytes of ONNX model (fewer
 *                      when the input ends), an options byte, then requests
 *   anything else      the whole input is an ONNX model (a .onnx file as a seed),
 *                      asked for at its declared shapes (default_requests)
 * options: bit 0 fusion off; bit 1 a loader budget of 64 KiB instead of 256 MiB;
 *   bit 2 one input fixed to a value through the ONNX options (the next bytes say
 *   which and its value, as an input of a request)
 * each request: an op byte (op % 16: 0-9 a graph, 10 the accessors, 11 a wrong input
 *   count, 12 a graph model, 13 hgr_model_specialize, 14-15 the last request again),
 *   then per model input a mode byte and what the mode reads (read_input).
 *
 * Findings beyond the sanitizers and leaks: an INTERNAL status (or a code outside
 * what model.h and onnx.h list), a graph without params or outputs, a graph input
 * at a shape other than the one asked for, a request that worked and fails when
 * repeated at once, a load report over the budget. Memory stays bounded by the
 * loader budget (the ONNX options) for what the loader makes, and by MAX_DATA_BYTES
 * for the input values this target allocates; a dim may be huge when no values
 * come with it. */
#include <stdbool.h>

#include "fuzz.h"
#include "hgr/model.h"

#define BUDGET_BYTES (256u << 20)
#define SMALL_BUDGET_BYTES (64u << 10)
#define MAX_DATA_BYTES (1u << 20) /* per input; larger shapes go without values */
#define MAX_REQUESTS 24
#define MAX_NAMED 32

/* ---- the symbolic models, read once ------------------------------------------------------ */

static const char* const model_files[] = {"dims.onnx", "reshape_input.onnx", "encoder.onnx", "cnn.onnx"};
#define MODEL_COUNT (sizeof(model_files) / sizeof(model_files[0]))
static uint8_t* models[MODEL_COUNT];
/* HGR_FUZZ_MODEL_VERBOSE set: each request and what it got, on stderr (for replays). */
static bool verbose;
static size_t model_sizes[MODEL_COUNT];

/* For a whole .onnx file as the input: requests of each input at its declared
 * shape, unknown dims 2 with values 3, then unknown dims 3 with values 4. Each byte
 * reads alike as an op (a graph), a mode (declared dtype and shape, small values),
 * a dim and a value, so the requests hold whatever the inputs' shapes. */
static uint8_t default_requests[96];

int LLVMFuzzerInitialize(int* argc, char*** argv);
int LLVMFuzzerInitialize(int* argc, char*** argv) {
  (void)argc, (void)argv;
  verbose = getenv("HGR_FUZZ_MODEL_VERBOSE") != NULL;
  memset(default_requests, 0x62, sizeof(default_requests) / 2);
  memset(default_requests + sizeof(default_requests) / 2, 0x63, sizeof(default_requests) / 2);
  for (size_t m = 0; m < MODEL_COUNT; ++m) {
    char path[4096];
    snprintf(path, sizeof(path), "%s/%s", HGR_FUZZ_SYMBOLIC_DIR, model_files[m]);
    FILE* file = fopen(path, "rb");
    if (!file) {
      fprintf(stderr, "hgr_fuzz_model: cannot open %s (the symbolic test models)\n", path);
      abort();
    }
    size_t capacity = 1 << 16;
    models[m] = malloc(capacity);
    FUZZ_CHECK(models[m]);
    model_sizes[m] = fread(models[m], 1, capacity, file);
    FUZZ_CHECK(model_sizes[m] > 0 && model_sizes[m] < capacity && !ferror(file));
    fclose(file);
  }
  return 0;
}

/* ---- reading the input --------------------------------------------------------------------- */

typedef struct reader_t {
  const uint8_t* data;
  size_t size, at;
} reader_t;

/* The next byte; 0 once the input is used up. */
static uint8_t take(reader_t* r) { return r->at < r->size ? r->data[r->at++] : 0; }
static bool more(const reader_t* r) { return r->at < r->size; }

/* A dim: mostly small (0 included), sometimes one of the sizes that overflow a
 * product, an int32 or an allocation, or a negative one. */
static int64_t dim_value(uint8_t b) {
  static const int64_t special[16] = {-1,         -2,          64,          255,          256,        1024,
                                      65535,      65536,       1 << 20,     INT32_MAX,    1ll << 31,  (1ll << 32) + 1,
                                      1ll << 40,  1ll << 62,   INT64_MAX,   INT64_MIN};
  if (b < 0xC0) return b % 8;
  if (b < 0xF0) return 8 + (b - 0xC0);
  return special[b - 0xF0];
}

/* A value of an input that decides shapes: mostly -8..8, sometimes an extreme. */
static int64_t int_value(uint8_t b) {
  static const int64_t special[32] = {0,          1,           -1,          INT64_MIN,   INT64_MAX,    INT32_MIN,
                                      INT32_MAX,  1ll << 31,   -(1ll << 31) - 1, 1ll << 32, 1ll << 40, 1ll << 53,
                                      1ll << 62,  -(1ll << 62), 64,         100,          1000,        65536,
                                      -65536,     255,         256,         INT64_MIN + 1, INT64_MAX - 1, 16,
                                      17,         24,          32,          -9,           -16,         -100,
                                      3,          6};
  if (b < 0xE0) return (int64_t)(b % 17) - 8;
  return special[b - 0xE0];
}

static const hgr_dtype_t dtypes[] = {
    {HGR_DTYPE_FLOAT, 32, 1}, {HGR_DTYPE_INT, 32, 1},   {HGR_DTYPE_INT, 64, 1},  {HGR_DTYPE_UINT, 1, 1},
    {HGR_DTYPE_FLOAT, 16, 1}, {HGR_DTYPE_UINT, 8, 1},   {HGR_DTYPE_INT, 8, 1},   {HGR_DTYPE_FLOAT, 64, 1},
    {0, 0, 0},                {HGR_DTYPE_INT, 64, 2},   {HGR_DTYPE_BFLOAT, 16, 1}, {HGR_DTYPE_UINT, 64, 1},
};
#define DTYPE_COUNT (sizeof(dtypes) / sizeof(dtypes[0]))

/* ---- requests ------------------------------------------------------------------------------ */

/* The inputs of one hgr_model_graph call, each shape and value in a heap block of
 * exactly its size (so that AddressSanitizer sees a read past a rank or a byte count). */
typedef struct request_t {
  size_t count;
  hgr_model_input_t* inputs; /* exactly count entries; NULL for count 0 */
} request_t;

static void request_free(request_t* request) {
  for (size_t i = 0; request->inputs && i < request->count; ++i) {
    free((void*)request->inputs[i].shape);
    free((void*)request->inputs[i].data);
  }
  free(request->inputs);
  memset(request, 0, sizeof(*request));
}

/* The values of a dim name within one request, so that declared shapes agree. */
typedef struct named_t {
  const char* names[MAX_NAMED];
  int64_t values[MAX_NAMED];
  size_t count;
} named_t;

static int64_t named_value(named_t* named, const char* name, reader_t* r) {
  for (size_t i = 0; i < named->count; ++i)
    if (!strcmp(named->names[i], name)) return named->values[i];
  int64_t value = dim_value(take(r));
  if (named->count < MAX_NAMED) {
    named->names[named->count] = name;
    named->values[named->count++] = value;
  }
  return value;
}

/* Values for an input of shape and dtype: element e is the value of byte e % k of
 * the input (k <= 32), or 1..4 when small is set. */
static void* make_data(hgr_dtype_t dtype, uint64_t elements, size_t bytes, bool small, reader_t* r) {
  void* data = malloc(bytes ? bytes : 1);
  FUZZ_CHECK(data);
  int64_t values[32];
  size_t k = elements < 32 ? (size_t)elements : 32;
  for (size_t i = 0; i < k; ++i) values[i] = small ? 1 + take(r) % 4 : int_value(take(r));
  uint64_t element_bytes = hgr_dtype_element_bytes(dtype);
  uint8_t* out = data;
  for (uint64_t e = 0; k && element_bytes && (e + 1) * element_bytes <= bytes; ++e) {
    int64_t v = values[e % k];
    uint8_t* at = out + e * element_bytes;
    if (dtype.code == HGR_DTYPE_INT && dtype.bits == 64 && dtype.lanes == 1) memcpy(at, &v, 8);
    else if (dtype.code == HGR_DTYPE_INT && dtype.bits == 32 && dtype.lanes == 1) {
      int32_t w = (int32_t)(uint32_t)(uint64_t)v; /* wraps, as a caller's cast would */
      memcpy(at, &w, 4);
    } else if (dtype.code == HGR_DTYPE_FLOAT && dtype.bits == 32 && dtype.lanes == 1) {
      float f = (float)v;
      memcpy(at, &f, 4);
    } else if (dtype.code == HGR_DTYPE_UINT && dtype.bits == 1) {
      *at = (uint8_t)(v & 1);
    } else {
      for (uint64_t b = 0; b < element_bytes; ++b) at[b] = (uint8_t)((uint64_t)v >> (8 * (b % 8)));
    }
  }
  return data;
}

/* Reads input i of a request for io (NULL: an input the model does not have). The
 * mode byte: bits 0-2 the dtype (0-4 the declared one, 5 int32 for int64 and the
 * other way, 6 one of dtypes[], 7 float32); bits 3-4 the shape (0 declared, with
 * named dims agreeing and unknown dims read; 1 declared with one dim read anew;
 * 2 a random rank, up to HGR_MAX_DIMS + 1 or -1, and dims; 3 the declared rank
 * plus or minus one); bits 5-6 the values (0 none; 1 read; 2 a byte count that
 * does not match; 3 small positive ones, as shapes and sizes are). */
static void read_input(const hgr_model_io_t* io, named_t* named, reader_t* r, hgr_model_input_t* out) {
  memset(out, 0, sizeof(*out));
  uint8_t mode = take(r);
  hgr_dtype_t declared = io ? io->dtype : dtypes[0];
  int32_t declared_ndim = io ? io->ndim : -1;
  switch (mode & 7) {
    case 5:
      out->dtype = declared.code == HGR_DTYPE_INT && declared.bits == 64 ? dtypes[1] : dtypes[2];
      break;
    case 6: out->dtype = dtypes[take(r) % DTYPE_COUNT]; break;
    case 7: out->dtype = dtypes[0]; break;
    default: out->dtype = declared; break;
  }
  int32_t ndim = 0;
  int64_t dims[HGR_MAX_DIMS + 2] = {0};
  int shape_mode = (mode >> 3) & 3;
  if ((shape_mode == 0 || shape_mode == 1) && declared_ndim >= 0) {
    ndim = declared_ndim;
    for (int32_t d = 0; d < ndim; ++d) {
      if (io->dims[d] >= 0) dims[d] = io->dims[d];
      else if (io->dim_names[d]) dims[d] = named_value(named, io->dim_names[d], r);
      else dims[d] = dim_value(take(r));
    }
    if (shape_mode == 1 && ndim) {
      int32_t d = take(r) % ndim; /* first the dim, then its size */
      dims[d] = dim_value(take(r));
    }
  } else if (shape_mode == 3 && declared_ndim >= 0) {
    ndim = declared_ndim + ((take(r) & 1) ? 1 : -1);
    if (ndim > HGR_MAX_DIMS + 1) ndim = HGR_MAX_DIMS + 1;
    for (int32_t d = 0; d < ndim; ++d) dims[d] = dim_value(take(r));
  } else { /* a random rank, also for an input of no declared shape */
    uint8_t b = take(r);
    ndim = b == 0xFF ? -1 : b % 6 == 5 ? b % (HGR_MAX_DIMS + 2) : b % 5;
    for (int32_t d = 0; d < ndim; ++d) dims[d] = dim_value(take(r));
  }
  out->ndim = ndim;
  if (ndim > 0) {
    int64_t* shape = malloc((size_t)ndim * sizeof(int64_t));
    FUZZ_CHECK(shape);
    memcpy(shape, dims, (size_t)ndim * sizeof(int64_t));
    out->shape = shape;
  }
  int data_mode = (mode >> 5) & 3;
  if (!data_mode || ndim < 0) return;
  uint64_t elements = 1;
  for (int32_t d = 0; d < ndim; ++d)
    if (dims[d] < 0 || __builtin_mul_overflow(elements, (uint64_t)dims[d], &elements)) return;
  uint64_t bytes;
  if (__builtin_mul_overflow(elements, hgr_dtype_element_bytes(out->dtype), &bytes) || bytes > MAX_DATA_BYTES)
    return; /* too large to give values: the shape alone is asked for */
  if (data_mode == 2) bytes = (take(r) & 1) ? bytes + 1 : bytes ? bytes - 1 : 8;
  out->data = make_data(out->dtype, elements, (size_t)bytes, data_mode == 3, r);
  out->bytes = (size_t)bytes;
}

/* A request for every model input, or (wrong_count) for one input more or less. */
static void read_request(const hgr_model_t* model, bool wrong_count, reader_t* r, request_t* out) {
  memset(out, 0, sizeof(*out));
  size_t count = hgr_model_input_count(model);
  if (wrong_count) count = (take(r) & 1) || !count ? count + 1 : count - 1;
  out->count = count;
  if (!count) return;
  out->inputs = calloc(count, sizeof(*out->inputs));
  FUZZ_CHECK(out->inputs);
  named_t named = {.count = 0};
  for (size_t i = 0; i < count; ++i) {
    hgr_model_io_t io;
    bool known = i < hgr_model_input_count(model);
    if (known) FUZZ_CHECK(hgr_model_input(model, i, &io) == HGR_OK);
    read_input(known ? &io : NULL, &named, r, &out->inputs[i]);
  }
}

/* ---- checks ---------------------------------------------------------------------------------- */

/* A failed call: no INTERNAL, one of the codes the call may return, a message. */
static void expect_failure(hgr_status_t status, unsigned allowed_codes) {
  hgr_status_code_t code = hgr_status_code(status);
  if (verbose) fprintf(stderr, "  refused: %s: %s\n", hgr_status_code_name(code), hgr_status_message(status));
  if (code == HGR_STATUS_INTERNAL || !(allowed_codes & (1u << code))) {
    char* text = hgr_status_to_string(status);
    fprintf(stderr, "hgr_fuzz_model: unexpected status %s\n", text ? text : "?");
    free(text);
    abort();
  }
  fuzz_consume_status(status);
}

#define CODE(name) (1u << HGR_STATUS_##name)
/* What a load or an import may refuse (onnx.h; DATA_LOSS for truncated tensors). */
#define LOAD_CODES (CODE(INVALID_ARGUMENT) | CODE(UNIMPLEMENTED) | CODE(RESOURCE_EXHAUSTED) | CODE(DATA_LOSS))

static void check_report(const hgr_model_t* model, uint64_t budget) {
  hgr_model_report_t report;
  hgr_model_report(model, &report);
  FUZZ_CHECK(report.onnx.loader_peak_bytes <= budget);
}

/* A graph the model gave for request: params, outputs that answer, and each graph
 * input that is a model input not deciding shapes at the shape asked for. */
static void check_graph(const hgr_model_t* model, const request_t* request, hgr_graph_t* graph, hgr_params_t* params) {
  FUZZ_CHECK(graph && params);
  FUZZ_CHECK(hgr_graph_output_count(graph) > 0);
  for (size_t i = 0; i < hgr_graph_output_count(graph); ++i) {
    hgr_tensor_info_t info;
    FUZZ_CHECK(hgr_graph_output_info(graph, i, &info) == HGR_OK);
  }
  for (size_t i = 0; i < hgr_params_count(params); ++i) {
    hgr_tensor_info_t info;
    const void* data;
    FUZZ_CHECK(hgr_params_get(params, i, &info, &data) == HGR_OK);
  }
  for (size_t i = 0; i < hgr_graph_input_count(graph); ++i) {
    hgr_tensor_info_t info;
    FUZZ_CHECK(hgr_graph_input_info(graph, i, &info) == HGR_OK);
    size_t index;
    hgr_status_t missing = hgr_model_input_index(model, info.name, &index);
    if (missing) { /* a weight of a graph model */
      fuzz_consume_status(missing);
      continue;
    }
    hgr_model_io_t io;
    FUZZ_CHECK(hgr_model_input(model, index, &io) == HGR_OK);
    if (io.decides_shapes) continue;
    const hgr_model_input_t* asked = &request->inputs[index];
    if (info.ndim != asked->ndim ||
        (info.ndim > 0 && memcmp(info.shape, asked->shape, (size_t)info.ndim * sizeof(int64_t)))) {
      fprintf(stderr, "hgr_fuzz_model: graph input '%s' has rank %d; rank %d was asked for\n", info.name,
              (int)info.ndim, (int)asked->ndim);
      abort();
    }
  }
}

/* hgr_model_graph for request: a graph that passes check_graph, or a refusal. On
 * success the graph and params go to *keep (replacing what it held). */
static bool graph_request(hgr_model_t* model, const request_t* request, uint64_t budget, hgr_graph_t** keep_graph,
                          hgr_params_t** keep_params) {
  hgr_graph_t* graph = (hgr_graph_t*)&graph; /* must be overwritten */
  hgr_params_t* params = (hgr_params_t*)&params;
  hgr_status_t status = hgr_model_graph(model, request->inputs, request->count, &graph, &params);
  check_report(model, budget);
  if (status) {
    FUZZ_CHECK(graph == NULL && params == NULL);
    expect_failure(status, LOAD_CODES);
    return false;
  }
  check_graph(model, request, graph, params);
  if (verbose) fprintf(stderr, "  a graph of %zu nodes\n", hgr_graph_node_count(graph));
  hgr_graph_release(*keep_graph);
  hgr_params_release(*keep_params);
  *keep_graph = graph;
  *keep_params = params;
  return true;
}

/* The accessors at an index and a name read from the input. */
static void probe_accessors(const hgr_model_t* model, reader_t* r) {
  size_t counts[2] = {hgr_model_input_count(model), hgr_model_output_count(model)};
  for (int side = 0; side < 2; ++side) {
    uint8_t b = take(r);
    size_t special[4] = {counts[side], SIZE_MAX, SIZE_MAX / 2, (size_t)1 << 32};
    size_t index = b >= 0xF0 ? special[b & 3] : b % (counts[side] + 2);
    hgr_model_io_t io;
    hgr_status_t status = side ? hgr_model_output(model, index, &io) : hgr_model_input(model, index, &io);
    if (index >= counts[side]) {
      FUZZ_CHECK(status && hgr_status_code(status) == HGR_STATUS_OUT_OF_RANGE);
      fuzz_consume_status(status);
      continue;
    }
    FUZZ_CHECK(status == HGR_OK);
    FUZZ_CHECK(io.name && io.ndim >= -1 && io.ndim <= HGR_MAX_DIMS);
    for (int32_t d = 0; d < io.ndim; ++d) FUZZ_CHECK(io.dims[d] >= -1 && (!io.dim_names[d] || io.dims[d] == -1));
    if (side) continue;
    size_t found = SIZE_MAX;
    FUZZ_CHECK(hgr_model_input_index(model, io.name, &found) == HGR_OK && found < counts[0]);
    hgr_model_io_t same;
    FUZZ_CHECK(hgr_model_input(model, found, &same) == HGR_OK && !strcmp(same.name, io.name));
  }
  /* A name of up to 7 bytes of the input, or an input's name with a byte more. */
  char name[512];
  uint8_t b = take(r);
  hgr_model_io_t io;
  if ((b & 1) && counts[0] && hgr_model_input(model, b % counts[0], &io) == HGR_OK)
    snprintf(name, sizeof(name), "%.400s%c", io.name, (char)(take(r) | 1));
  else {
    size_t length = b % 8;
    for (size_t i = 0; i < length; ++i) name[i] = (char)(take(r) | 1);
    name[length] = 0;
  }
  size_t found = SIZE_MAX;
  hgr_status_t status = hgr_model_input_index(model, name, &found);
  if (status) {
    FUZZ_CHECK(hgr_status_code(status) == HGR_STATUS_NOT_FOUND && found == SIZE_MAX);
    fuzz_consume_status(status);
  } else {
    FUZZ_CHECK(found < counts[0] && hgr_model_input(model, found, &io) == HGR_OK && !strcmp(io.name, name));
  }
  status = hgr_model_input_index(model, NULL, &found);
  FUZZ_CHECK(status && hgr_status_code(status) == HGR_STATUS_INVALID_ARGUMENT);
  fuzz_consume_status(status);
}

/* A graph model (hgr_model_create_graph, no instance, which runs the graph passes)
 * of the graph and params an ONNX model gave, asked for one request: a graph of as
 * many outputs, the same graph and as many params when asked again. */
static void graph_model_request(hgr_graph_t* graph, hgr_params_t* params, reader_t* r) {
  hgr_model_t* model = NULL;
  hgr_status_t status = hgr_model_create_graph(NULL, graph, params, NULL, &model);
  if (status) {
    FUZZ_CHECK(model == NULL);
    expect_failure(status, LOAD_CODES);
    return;
  }
  FUZZ_CHECK(hgr_model_output_count(model) == hgr_graph_output_count(graph));
  request_t request;
  read_request(model, false, r, &request);
  hgr_graph_t* out_graph = NULL;
  hgr_params_t* out_params = NULL;
  status = hgr_model_graph(model, request.inputs, request.count, &out_graph, &out_params);
  if (status) {
    FUZZ_CHECK(out_graph == NULL && out_params == NULL);
    expect_failure(status, CODE(INVALID_ARGUMENT) | CODE(RESOURCE_EXHAUSTED));
  } else {
    FUZZ_CHECK(out_graph && out_params);
    FUZZ_CHECK(hgr_graph_output_count(out_graph) == hgr_model_output_count(model));
    hgr_graph_t* again = NULL;
    hgr_params_t* again_params = NULL;
    FUZZ_CHECK(hgr_model_graph(model, request.inputs, request.count, &again, &again_params) == HGR_OK);
    FUZZ_CHECK(again == out_graph && hgr_params_count(again_params) == hgr_params_count(out_params));
    hgr_graph_release(again);
    hgr_params_release(again_params);
    hgr_graph_release(out_graph);
    hgr_params_release(out_params);
  }
  request_free(&request);
  hgr_model_release(model);
}

/* ---- one input ---------------------------------------------------------------------------- */

/* Creates the model from bytes with the options byte's settings; with bit 2, again
 * with one input (read from r) fixed to a value, which the model then no longer lists. */
static hgr_model_t* create_model(const uint8_t* bytes, size_t size, uint8_t flags, uint64_t budget, reader_t* r) {
  hgr_onnx_options_t* onnx = NULL;
  FUZZ_CHECK(hgr_onnx_options_create(&onnx) == HGR_OK);
  hgr_onnx_options_set_max_tensor_bytes(onnx, 64u << 20);
  hgr_onnx_options_set_max_loader_bytes(onnx, budget);
  hgr_onnx_options_set_fuse_elementwise(onnx, !(flags & 1));
  hgr_model_options_t options;
  hgr_model_options_init(&options);
  options.onnx = onnx;
  hgr_model_t* model = (hgr_model_t*)&model; /* must be overwritten */
  hgr_status_t status = hgr_model_create_onnx_memory(NULL, bytes, size, NULL, &options, &model);
  if (!status) check_report(model, budget);
  if (!status && (flags & 4) && hgr_model_input_count(model)) {
    hgr_model_io_t io;
    size_t count = hgr_model_input_count(model);
    FUZZ_CHECK(hgr_model_input(model, take(r) % count, &io) == HGR_OK);
    named_t named = {.count = 0};
    hgr_model_input_t value;
    read_input(&io, &named, r, &value);
    hgr_status_t fixed = hgr_onnx_options_set_input_value(onnx, io.name, value.dtype, value.shape, value.ndim,
                                                          value.data, value.bytes);
    if (!fixed) {
      hgr_model_release(model);
      model = (hgr_model_t*)&model;
      status = hgr_model_create_onnx_memory(NULL, bytes, size, NULL, &options, &model);
      if (!status) FUZZ_CHECK(hgr_model_input_count(model) < count);
    } else {
      expect_failure(fixed, CODE(INVALID_ARGUMENT));
    }
    free((void*)value.shape);
    free((void*)value.data);
  }
  hgr_onnx_options_release(onnx);
  if (status) {
    FUZZ_CHECK(model == NULL);
    expect_failure(status, LOAD_CODES);
  }
  return status ? NULL : model;
}

int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (!size) return 0;
  reader_t r = {data, size, 1};
  const uint8_t* bytes;
  size_t length;
  uint8_t flags = 0;
  if (data[0] < MODEL_COUNT) {
    bytes = models[data[0]];
    length = model_sizes[data[0]];
    flags = take(&r);
  } else if (data[0] == MODEL_COUNT) {
    length = (size_t)take(&r) | (size_t)take(&r) << 8 | (size_t)take(&r) << 16;
    if (length > size - r.at) length = size - r.at;
    bytes = data + r.at;
    r.at += length;
    flags = take(&r);
  } else {
    bytes = data;
    length = size;
    r = (reader_t){default_requests, sizeof(default_requests), 0};
  }
  uint64_t budget = (flags & 2) ? SMALL_BUDGET_BYTES : BUDGET_BYTES;
  hgr_model_t* model = create_model(bytes, length, flags, budget, &r);
  if (!model) return 0;

  hgr_graph_t* graph = NULL; /* the last graph the model gave, and its params */
  hgr_params_t* params = NULL;
  request_t last = {0, NULL};
  bool last_worked = false;
  for (int n = 0; n < MAX_REQUESTS && more(&r); ++n) {
    uint8_t op = take(&r) % 16;
    if (verbose) fprintf(stderr, "request %d: op %d\n", n, (int)op);
    if (op <= 9 || op == 11) {
      request_free(&last);
      read_request(model, op == 11, &r, &last);
      last_worked = graph_request(model, &last, budget, &graph, &params);
      FUZZ_CHECK(op != 11 || !last_worked);
    } else if (op == 10) {
      probe_accessors(model, &r);
    } else if (op == 12) {
      if (graph) graph_model_request(graph, params, &r);
    } else if (op == 13) {
      hgr_specialization_t* s = (hgr_specialization_t*)&s;
      hgr_status_t status = hgr_model_specialize(model, last.inputs, last.count, &s);
      FUZZ_CHECK(status && hgr_status_code(status) == HGR_STATUS_FAILED_PRECONDITION && s == NULL);
      fuzz_consume_status(status);
    } else { /* the last request again: what worked works again */
      bool worked = graph_request(model, &last, budget, &graph, &params);
      FUZZ_CHECK(worked || !last_worked);
      last_worked = worked;
    }
  }
  request_free(&last);
  hgr_graph_release(graph);
  hgr_params_release(params);
  hgr_model_release(model);
  return 0;
}
