/* ONNX's backend tests as hgr's conformance bar: every test directory of Debian's
 * libonnx-testdata (node/, pytorch-converted/, pytorch-operator/, simple/: a
 * model.onnx and test_data_set_*\/input_N.pb, output_N.pb) is loaded with
 * hgr_onnx_load_file, run on one device through the C API, and compared with
 * ONNX's default tolerance (|got - want| <= 1e-7 + 1e-3 |want|; NaN matches NaN;
 * integers and bools exactly, dtypes and shapes equal). Each test is passed,
 * failed, not supported (the model was refused as UNIMPLEMENTED: an op, attr
 * value or dtype hgr does not support, named in the reason), or one whose data
 * ONNX Runtime does not meet either (data_differs, below).
 *
 *   onnx_conformance DEVICE [--data DIR] [--sample N] [--report FILE.tsv] [--only TEXT]
 *
 * --sample N runs every N-th test only (the simulator and the second platform run a
 * sample); --report writes one line per test: directory, test, outcome, reason;
 * --only runs the tests whose name contains TEXT. Exit status 1 when a test
 * failed, 77 (skipped) when the test data or the device is missing, else 0. */
#include <dirent.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "hgr/hgr.h"

#define DEFAULT_DATA "/usr/share/libonnx-testdata/data"
#define RTOL 1e-3
#define ATOL 1e-7
#define MAX_IO 64

static const char* const categories[] = {"node", "pytorch-converted", "pytorch-operator", "simple"};

typedef enum outcome_t { PASSED, FAILED, UNSUPPORTED, DATA_DIFFERS } outcome_t;
static const char* const outcome_names[] = {"passed", "failed", "not supported", "data differs"};

/* Tests whose data ONNX Runtime does not meet either: each fails as `failure` says
 * (any other outcome fails the run, so the list cannot go stale), and is reported
 * with why. */
static const struct {
  const char *test, *failure, *why;
} data_differs[] = {
    {"test_cast_FLOAT_to_BFLOAT16", "values differ",
     "ONNX 1.12's data truncates to bfloat16; ONNX Runtime 1.32 (and ONNX's reference since 1.14) rounds to nearest "
     "even, as hgr does"},
    {"test_castlike_BFLOAT16_to_FLOAT", "input 'like' has rank 2 in the model; the input given has rank 1",
     "the data gives input 'like' shaped [1], the model declares [3, 4]; ONNX Runtime checks a feed's rank against "
     "the model's too"},
    {"test_castlike_FLOAT_to_BFLOAT16", "input 'like' has rank 2 in the model; the input given has rank 1",
     "the data gives input 'like' shaped [1], the model declares [3, 4]; ONNX Runtime checks a feed's rank against "
     "the model's too"},
    {"test_castlike_BFLOAT16_to_FLOAT_expanded", "input 'like' has rank 2 in the model; the input given has rank 1",
     "the data gives input 'like' shaped [1], the model declares [3, 4]; ONNX Runtime checks a feed's rank against "
     "the model's too"},
    {"test_castlike_FLOAT_to_BFLOAT16_expanded", "input 'like' has rank 2 in the model; the input given has rank 1",
     "the data gives input 'like' shaped [1], the model declares [3, 4]; ONNX Runtime checks a feed's rank against "
     "the model's too"},
};

/* outcome, seen against data_differs: DATA_DIFFERS (reason: why) for a listed test
 * that failed as listed; FAILED for one that did anything else. */
static outcome_t against_data_differs(const char* test, outcome_t outcome, char* reason, size_t capacity) {
  for (size_t k = 0; k < sizeof(data_differs) / sizeof(data_differs[0]); ++k) {
    if (strcmp(test, data_differs[k].test)) continue;
    if (outcome == FAILED && strstr(reason, data_differs[k].failure)) {
      snprintf(reason, capacity, "%s", data_differs[k].why);
      return DATA_DIFFERS;
    }
    char was[1024];
    snprintf(was, sizeof(was), "%s", reason);
    snprintf(reason, capacity, "listed as data that differs (\"%s\"), but %s%s%s", data_differs[k].failure,
             outcome_names[outcome], was[0] ? ": " : "", was);
    return FAILED;
  }
  return outcome;
}

typedef struct tensor_t {
  hgr_dtype_t dtype;
  int64_t shape[HGR_MAX_DIMS];
  int32_t ndim;
  void* data;
  size_t bytes;
  char* name;
} tensor_t;

static void tensor_free(tensor_t* t) {
  free(t->data);
  free(t->name);
  memset(t, 0, sizeof(*t));
}

static void* read_file(const char* path, size_t* out_length) {
  FILE* f = fopen(path, "rb");
  if (!f) return NULL;
  size_t capacity = 4096, length = 0;
  char* data = malloc(capacity);
  for (size_t n = 1; data && n;) {
    if (length == capacity) {
      char* grown = realloc(data, capacity *= 2);
      if (!grown) free(data);
      data = grown;
      if (!data) break;
    }
    n = fread(data + length, 1, capacity - length, f);
    length += n;
  }
  fclose(f);
  *out_length = length;
  return data;
}

static hgr_status_t read_tensor(const char* path, tensor_t* t) {
  size_t length = 0;
  void* bytes = read_file(path, &length);
  if (!bytes) return HGR_STATUS(HGR_STATUS_NOT_FOUND, "cannot read %s", path);
  hgr_status_t status = hgr_onnx_read_tensor(bytes, length, &t->dtype, t->shape, &t->ndim, &t->data, &t->bytes, &t->name);
  free(bytes);
  return hgr_status_annotate(status, "%s", path);
}

static bool exists(const char* path) {
  struct stat st;
  return stat(path, &st) == 0;
}

/* ONNX's test data writes bfloat16 tensors as uint16 (numpy has no bfloat16): the
 * same bits, read as bfloat16 where the model's own tensor is. */
static const hgr_dtype_t BFLOAT16 = {HGR_DTYPE_BFLOAT, 16, 1}, UINT16 = {HGR_DTYPE_UINT, 16, 1};
static hgr_dtype_t as_written(hgr_dtype_t model_dtype, hgr_dtype_t data_dtype) {
  return hgr_dtype_equal(model_dtype, BFLOAT16) && hgr_dtype_equal(data_dtype, UINT16) ? BFLOAT16 : data_dtype;
}

/* Compares an output with the expected tensor; on a mismatch writes why. */
static bool compare(const hgr_tensor_info_t* info, const void* got, const tensor_t* want, char* why, size_t capacity) {
  char a[32], b[32];
  if (!hgr_dtype_equal(info->dtype, as_written(info->dtype, want->dtype))) {
    snprintf(why, capacity, "dtype %s, expected %s", hgr_dtype_format(info->dtype, a, sizeof(a)),
             hgr_dtype_format(want->dtype, b, sizeof(b)));
    return false;
  }
  bool same = info->ndim == want->ndim;
  for (int32_t d = 0; same && d < info->ndim; ++d) same = info->shape[d] == want->shape[d];
  if (!same) {
    snprintf(why, capacity, "shape of rank %d, expected rank %d (or other extents)", (int)info->ndim, (int)want->ndim);
    return false;
  }
  if (want->dtype.code == HGR_DTYPE_FLOAT && want->dtype.bits == 32) {
    const float *g = got, *w = want->data;
    size_t count = want->bytes / 4, bad = 0, first = 0;
    double worst = 0;
    for (size_t i = 0; i < count; ++i) {
      if ((isnan(g[i]) && isnan(w[i])) || g[i] == w[i]) continue; /* infinities too */
      double diff = fabs((double)g[i] - (double)w[i]);
      if (!(diff <= ATOL + RTOL * fabs((double)w[i]))) {
        if (!bad++) first = i;
        if (!(diff <= worst)) worst = diff;
      }
    }
    if (bad)
      snprintf(why, capacity, "%zu of %zu values differ beyond rtol %g, atol %g (first at %zu: %.9g, expected %.9g; "
               "largest difference %.3g)", bad, count, RTOL, ATOL, first, g[first], w[first], worst);
    return bad == 0;
  }
  if (memcmp(got, want->data, want->bytes)) {
    snprintf(why, capacity, "values differ (compared exactly)");
    return false;
  }
  return true;
}

typedef struct runner_t {
  hgr_instance_t* instance;
  const char* device;
  FILE* report;
  size_t counts[4];
} runner_t;

/* Runs one test directory; *reason gets why it failed or is not supported. */
/* Data set dir/test_data_set_N's inputs (*out_count of them, in the model's input
 * order: input_i.pb is the model's input i, whatever name the file gives). */
static hgr_status_t read_inputs(const char* set_dir, tensor_t* inputs, size_t* out_count) {
  *out_count = 0;
  for (size_t i = 0; i < MAX_IO; ++i) {
    char path[8400];
    snprintf(path, sizeof(path), "%s/input_%zu.pb", set_dir, i);
    if (!exists(path)) break;
    hgr_status_t status = read_tensor(path, &inputs[i]);
    if (status) return status;
    *out_count = i + 1;
  }
  return HGR_OK;
}

/* Every output of run against set_dir's output_N.pb: FAILED with why in reason. */
static outcome_t compare_outputs(hgr_model_t* model, hgr_model_run_t* run, const char* set_dir, size_t set,
                                 hgr_status_t* inout_status, char* reason, size_t capacity) {
  size_t outputs = hgr_model_output_count(model);
  for (size_t o = 0; !*inout_status; ++o) {
    char path[8400];
    snprintf(path, sizeof(path), "%s/output_%zu.pb", set_dir, o);
    if (!exists(path)) {
      if (o == outputs) return PASSED;
      snprintf(reason, capacity, "the model has %zu outputs, the test data %zu", outputs, o);
      return FAILED;
    }
    if (o >= outputs) {
      snprintf(reason, capacity, "the test data has more outputs than the model's %zu", outputs);
      return FAILED;
    }
    tensor_t want;
    memset(&want, 0, sizeof(want));
    hgr_tensor_info_t info;
    hgr_status_t status = read_tensor(path, &want);
    if (!status) status = hgr_model_run_output_info(run, o, &info);
    void* got = status ? NULL : malloc(info.bytes ? (size_t)info.bytes : 1);
    if (!status && !got) status = HGR_STATUS(HGR_STATUS_RESOURCE_EXHAUSTED, "out of host memory");
    if (!status) status = hgr_model_run_get_output(run, o, got, (size_t)info.bytes);
    char why[512];
    bool same = status || compare(&info, got, &want, why, sizeof(why));
    free(got);
    tensor_free(&want);
    *inout_status = status;
    if (!same) {
      snprintf(reason, capacity, "data set %zu, output %zu: %s", set, o, why);
      return FAILED;
    }
  }
  return PASSED;
}

static outcome_t run_test(runner_t* r, const char* dir, char* reason, size_t capacity) {
  char path[8400];
  snprintf(path, sizeof(path), "%s/model.onnx", dir);
  hgr_model_options_t options;
  hgr_model_options_init(&options);
  const hgr_device_binding_t binding = {0, r->device};
  options.executor.bindings = &binding;
  options.executor.binding_count = 1;
  hgr_model_t* model = NULL;
  hgr_status_t status = hgr_model_create_onnx_file(r->instance, path, &options, &model);
  outcome_t outcome = PASSED;
  /* Every data set at its own shapes: inputs in order, run, compare every output. */
  for (size_t set = 0; !status && outcome == PASSED; ++set) {
    char set_dir[8300];
    snprintf(set_dir, sizeof(set_dir), "%s/test_data_set_%zu", dir, set);
    if (!exists(set_dir)) break;
    tensor_t inputs[MAX_IO];
    memset(inputs, 0, sizeof(inputs));
    size_t count = 0;
    hgr_model_input_t given[MAX_IO];
    status = read_inputs(set_dir, inputs, &count);
    for (size_t i = 0; i < count; ++i) {
      hgr_model_io_t io;
      hgr_dtype_t dtype = inputs[i].dtype;
      if (i < hgr_model_input_count(model) && !hgr_model_input(model, i, &io)) dtype = as_written(io.dtype, dtype);
      given[i] = (hgr_model_input_t){dtype, inputs[i].ndim, inputs[i].shape, inputs[i].data, inputs[i].bytes};
    }
    hgr_model_run_t* run = NULL;
    if (!status) status = hgr_model_run(model, given, count, &run);
    if (!status) status = hgr_model_run_wait(run);
    if (!status) outcome = compare_outputs(model, run, set_dir, set, &status, reason, capacity);
    hgr_model_run_release(run);
    for (size_t i = 0; i < count; ++i) tensor_free(&inputs[i]);
  }
  if (status && hgr_status_code(status) == HGR_STATUS_UNIMPLEMENTED) outcome = UNSUPPORTED;
  if (status) {
    if (outcome == PASSED) outcome = FAILED;
    char* text = hgr_status_to_string(status);
    snprintf(reason, capacity, "%s", text ? text : "(no message)");
    free(text);
    hgr_status_free(status);
  }
  /* The inputs the model specialized on (they decide shapes): said on a pass. */
  char deciding[512] = "";
  for (size_t i = 0; model && i < hgr_model_input_count(model); ++i) {
    hgr_model_io_t io;
    size_t used = strlen(deciding);
    if (!hgr_model_input(model, i, &io) && io.decides_shapes)
      snprintf(deciding + used, sizeof(deciding) - used, "%s%s", used ? ", " : "", io.name);
  }
  if (outcome == PASSED && deciding[0]) snprintf(reason, capacity, "inputs fixed at load: %s", deciding);
  hgr_model_release(model);
  return outcome;
}

static int compare_strings(const void* a, const void* b) {
  return strcmp(*(const char* const*)a, *(const char* const*)b);
}

/* The sorted names of the test directories in dir (NULL-terminated, malloc'd). */
static char** list_tests(const char* dir, size_t* out_count) {
  DIR* d = opendir(dir);
  *out_count = 0;
  if (!d) return NULL;
  size_t capacity = 64;
  char** names = malloc(capacity * sizeof(*names));
  struct dirent* e;
  while (names && (e = readdir(d))) {
    if (e->d_name[0] == '.') continue;
    if (*out_count + 1 == capacity) {
      char** grown = realloc(names, (capacity *= 2) * sizeof(*names));
      if (!grown) break;
      names = grown;
    }
    names[(*out_count)++] = strdup(e->d_name);
  }
  closedir(d);
  if (names) qsort(names, *out_count, sizeof(*names), compare_strings);
  return names;
}

/* One line for the report: tabs and newlines in reasons become spaces. */
static void report_line(FILE* f, const char* category, const char* test, outcome_t outcome, const char* reason) {
  fprintf(f, "%s\t%s\t%s\t", category, test, outcome_names[outcome]);
  for (const char* c = reason; *c; ++c) fputc(*c == '\t' || *c == '\n' ? ' ' : *c, f);
  fputc('\n', f);
}

int main(int argc, char** argv) {
  const char *device = NULL, *data = DEFAULT_DATA, *report_path = NULL, *only = NULL;
  long sample = 1;
  for (int i = 1; i < argc; ++i) {
    if (!strcmp(argv[i], "--data") && i + 1 < argc) data = argv[++i];
    else if (!strcmp(argv[i], "--sample") && i + 1 < argc) sample = strtol(argv[++i], NULL, 10);
    else if (!strcmp(argv[i], "--report") && i + 1 < argc) report_path = argv[++i];
    else if (!strcmp(argv[i], "--only") && i + 1 < argc) only = argv[++i];
    else if (!device && argv[i][0] != '-') device = argv[i];
    else {
      fprintf(stderr, "usage: onnx_conformance DEVICE [--data DIR] [--sample N] [--report FILE.tsv] [--only TEXT]\n");
      return 2;
    }
  }
  if (!device || sample < 1) {
    fprintf(stderr, "usage: onnx_conformance DEVICE [--data DIR] [--sample N] [--report FILE.tsv] [--only TEXT]\n");
    return 2;
  }
  char node_dir[4096];
  snprintf(node_dir, sizeof(node_dir), "%s/node", data);
  if (!exists(node_dir)) {
    printf("SKIPPED: ONNX's backend test data is not at %s (Debian: libonnx-testdata)\n", data);
    return 77;
  }
  runner_t r = {.device = device};
  hgr_instance_options_t io;
  hgr_instance_options_init(&io);
  hgr_status_t status = hgr_instance_create(&io, &r.instance);
  size_t index;
  if (!status && (status = hgr_instance_find_device(r.instance, device, &index))) {
    char* text = hgr_status_to_string(status);
    printf("SKIPPED: device %s is not available: %s\n", device, text ? text : "");
    free(text);
    hgr_status_free(status);
    hgr_instance_release(r.instance);
    return 77;
  }
  if (status) {
    char* text = hgr_status_to_string(status);
    fprintf(stderr, "onnx_conformance: %s\n", text ? text : "");
    free(text);
    hgr_status_free(status);
    return 1;
  }
  if (report_path && !(r.report = fopen(report_path, "w"))) {
    fprintf(stderr, "onnx_conformance: cannot write %s: %s\n", report_path, strerror(errno));
    hgr_instance_release(r.instance);
    return 1;
  }
  size_t seen = 0, ran = 0;
  for (size_t c = 0; c < sizeof(categories) / sizeof(categories[0]); ++c) {
    char dir[2048];
    snprintf(dir, sizeof(dir), "%.2000s/%s", data, categories[c]);
    size_t count = 0;
    char** tests = list_tests(dir, &count);
    for (size_t t = 0; t < count; ++t) {
      char test_dir[4096], model[4200];
      snprintf(test_dir, sizeof(test_dir), "%s/%.1000s", dir, tests[t]);
      snprintf(model, sizeof(model), "%s/model.onnx", test_dir);
      bool selected = exists(model) && (!only || strstr(tests[t], only)) && seen++ % (size_t)sample == 0;
      if (selected) {
        char reason[2048] = "";
        outcome_t outcome = against_data_differs(tests[t], run_test(&r, test_dir, reason, sizeof(reason)), reason,
                                                 sizeof(reason));
        ++r.counts[outcome];
        ++ran;
        if (outcome == FAILED) printf("FAILED %s/%s: %s\n", categories[c], tests[t], reason);
        if (r.report) report_line(r.report, categories[c], tests[t], outcome, reason);
        if (ran % 100 == 0)
          printf("... %zu tests: %zu passed, %zu failed, %zu not supported, %zu data differs\n", ran, r.counts[PASSED],
                 r.counts[FAILED], r.counts[UNSUPPORTED], r.counts[DATA_DIFFERS]);
        fflush(stdout);
      }
      free(tests[t]);
    }
    free(tests);
  }
  if (r.report) fclose(r.report);
  printf("ONNX backend tests on %s%s: %zu run, %zu passed, %zu failed, %zu not supported, %zu whose data ONNX Runtime "
         "does not meet either\n", device, sample > 1 ? " (a sample)" : "", ran, r.counts[PASSED], r.counts[FAILED],
         r.counts[UNSUPPORTED], r.counts[DATA_DIFFERS]);
  hgr_instance_release(r.instance);
  return r.counts[FAILED] ? 1 : 0;
}
