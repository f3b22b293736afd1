/* ONNX's backend tests as hgr's conformance bar: every test directory of Debian's
 * libonnx-testdata (node/, pytorch-converted/, pytorch-operator/, simple/: a
 * model.onnx and test_data_set_*\/input_N.pb, output_N.pb) is loaded with
 * hgr_onnx_load_file, run on one device through the C API, and compared with
 * ONNX's default tolerance (|got - want| <= 1e-7 + 1e-3 |want|; NaN matches NaN;
 * integers and bools exactly, dtypes and shapes equal). Each test is passed,
 * failed, or not supported (the loader refused the model as UNIMPLEMENTED: an op,
 * attr value or dtype hgr does not support, named in the reason).
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
#include "onnx/onnx.pb-c.h"

#define DEFAULT_DATA "/usr/share/libonnx-testdata/data"
#define RTOL 1e-3
#define ATOL 1e-7
#define MAX_IO 64

static const char* const categories[] = {"node", "pytorch-converted", "pytorch-operator", "simple"};

typedef enum outcome_t { PASSED, FAILED, UNSUPPORTED } outcome_t;
static const char* const outcome_names[] = {"passed", "failed", "not supported"};

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

/* The model's real inputs (graph inputs no initializer gives), in order: the names
 * input_N.pb belongs to when the file leaves its name empty. */
static size_t model_inputs(const char* model_path, char names[][256], size_t capacity) {
  size_t length = 0, count = 0;
  void* bytes = read_file(model_path, &length);
  Onnx__ModelProto* model = bytes ? onnx__model_proto__unpack(NULL, length, bytes) : NULL;
  for (size_t i = 0; model && model->graph && i < model->graph->n_input && count < capacity; ++i) {
    const char* name = model->graph->input[i]->name;
    bool initialized = false;
    for (size_t k = 0; k < model->graph->n_initializer; ++k)
      if (!strcmp(model->graph->initializer[k]->name, name)) initialized = true;
    if (!initialized) snprintf(names[count++], 256, "%s", name);
  }
  if (model) onnx__model_proto__free_unpacked(model, NULL);
  free(bytes);
  return count;
}

/* Compares an output with the expected tensor; on a mismatch writes why. */
static bool compare(const hgr_tensor_info_t* info, const void* got, const tensor_t* want, char* why, size_t capacity) {
  char a[32], b[32];
  if (!hgr_dtype_equal(info->dtype, want->dtype)) {
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
      if (isnan(g[i]) && isnan(w[i])) continue;
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
  size_t counts[3];
} runner_t;

/* Runs one test directory; *reason gets why it failed or is not supported. */
static outcome_t run_test(runner_t* r, const char* dir, char* reason, size_t capacity) {
  char path[8400];
  snprintf(path, sizeof(path), "%s/model.onnx", dir);
  char names[MAX_IO][256];
  size_t name_count = model_inputs(path, names, MAX_IO);
  /* The first data set's inputs give the shapes of symbolic dims. */
  hgr_onnx_options_t* options = NULL;
  hgr_status_t status = hgr_onnx_options_create(&options);
  tensor_t inputs[MAX_IO];
  memset(inputs, 0, sizeof(inputs));
  size_t input_count = 0;
  hgr_status_t input_status = HGR_OK; /* reported unless the model is refused first */
  for (size_t i = 0; !status && !input_status && i < MAX_IO; ++i) {
    snprintf(path, sizeof(path), "%s/test_data_set_0/input_%zu.pb", dir, i);
    if (!exists(path)) break;
    input_status = read_tensor(path, &inputs[i]);
    if (input_status) break;
    input_count = i + 1;
    if (!status && !inputs[i].name[0] && i < name_count) {
      free(inputs[i].name);
      inputs[i].name = strdup(names[i]);
    }
    if (!status && inputs[i].name && inputs[i].name[0])
      status = hgr_onnx_options_set_input_shape(options, inputs[i].name, inputs[i].shape, inputs[i].ndim);
  }
  hgr_graph_t* graph = NULL;
  hgr_params_t* params = NULL;
  hgr_executor_t* executor = NULL;
  snprintf(path, sizeof(path), "%s/model.onnx", dir);
  /* An input the loader needs at load (a shape, starts, k, ...) is fixed to the first
   * data set's value and the load retried; the report says which. */
  bool frozen[MAX_IO] = {false};
  char frozen_names[512] = "";
  for (int attempt = 0; !status && attempt < MAX_IO; ++attempt) {
    status = hgr_onnx_load_file(path, options, &graph, &params, NULL);
    if (!status || hgr_status_code(status) != HGR_STATUS_UNIMPLEMENTED) break;
    const char* at = strstr(hgr_status_message(status), "') must be known at load");
    const char* open = at ? at : NULL;
    while (open && open > hgr_status_message(status) && !(open[0] == '(' && open[1] == '\'')) --open;
    if (!open || open[0] != '(') break;
    char name[256];
    snprintf(name, sizeof(name), "%.*s", (int)(at - open - 2), open + 2);
    size_t i = 0;
    while (i < input_count && !(inputs[i].name && !strcmp(inputs[i].name, name))) ++i;
    if (i == input_count || frozen[i]) break; /* not a graph input of the test: truly unsupported */
    hgr_status_free(status);
    status = hgr_onnx_options_set_input_value(options, name, inputs[i].dtype, inputs[i].shape, inputs[i].ndim,
                                              inputs[i].data, inputs[i].bytes);
    frozen[i] = true;
    size_t used = strlen(frozen_names);
    snprintf(frozen_names + used, sizeof(frozen_names) - used, "%s%s", used ? ", " : "", name);
  }
  hgr_onnx_options_release(options);
  outcome_t outcome = PASSED;
  if (status && hgr_status_code(status) == HGR_STATUS_UNIMPLEMENTED) outcome = UNSUPPORTED;
  if (outcome == UNSUPPORTED || !input_status) {
    hgr_status_free(input_status);
  } else {
    status = hgr_status_join(input_status, status);
  }
  if (!status) {
    hgr_executor_options_t eo;
    hgr_executor_options_init(&eo);
    const hgr_device_binding_t binding = {0, r->device};
    eo.bindings = &binding;
    eo.binding_count = 1;
    status = hgr_executor_create(r->instance, graph, &eo, &executor);
    size_t unused;
    if (!status) status = hgr_executor_load_params(executor, params, &unused);
  }
  /* Every data set: inputs by name, run, compare every output. */
  for (size_t set = 0; !status && outcome == PASSED; ++set) {
    char set_dir[8300];
    snprintf(set_dir, sizeof(set_dir), "%s/test_data_set_%zu", dir, set);
    if (!exists(set_dir)) break;
    if (set > 0) {
      for (size_t i = 0; i < input_count; ++i) {
        char* name = inputs[i].name;
        inputs[i].name = NULL;
        tensor_free(&inputs[i]);
        snprintf(path, sizeof(path), "%s/input_%zu.pb", set_dir, i);
        if ((status = read_tensor(path, &inputs[i]))) break;
        free(inputs[i].name);
        inputs[i].name = name;
      }
    }
    for (size_t i = 0; !status && i < input_count; ++i) {
      if (frozen[i]) continue; /* a constant of the loaded graph */
      const char* name = inputs[i].name && inputs[i].name[0] ? inputs[i].name : "";
      status = hgr_executor_set_input_by_name(executor, name, inputs[i].data, inputs[i].bytes);
    }
    if (!status) status = hgr_executor_run(executor);
    if (!status) status = hgr_executor_wait(executor);
    for (size_t o = 0; !status && outcome == PASSED; ++o) {
      snprintf(path, sizeof(path), "%s/output_%zu.pb", set_dir, o);
      if (!exists(path)) {
        if (o != hgr_executor_output_count(executor))
          snprintf(reason, capacity, "the model has %zu outputs, the test data %zu", hgr_executor_output_count(executor),
                   o), outcome = FAILED;
        break;
      }
      if (o >= hgr_executor_output_count(executor)) {
        snprintf(reason, capacity, "the test data has more outputs than the model's %zu",
                 hgr_executor_output_count(executor));
        outcome = FAILED;
        break;
      }
      tensor_t want;
      memset(&want, 0, sizeof(want));
      hgr_tensor_info_t info;
      if ((status = read_tensor(path, &want))) break;
      status = hgr_executor_output_info(executor, o, &info);
      void* got = status ? NULL : malloc(info.bytes ? (size_t)info.bytes : 1);
      if (!status && !got) status = HGR_STATUS(HGR_STATUS_RESOURCE_EXHAUSTED, "out of host memory");
      if (!status) status = hgr_executor_get_output(executor, o, got, (size_t)info.bytes);
      char why[512];
      if (!status && !compare(&info, got, &want, why, sizeof(why))) {
        snprintf(reason, capacity, "data set %zu, output %zu: %s", set, o, why);
        outcome = FAILED;
      }
      free(got);
      tensor_free(&want);
    }
  }
  if (status) {
    if (outcome == PASSED) outcome = FAILED;
    char* text = hgr_status_to_string(status);
    snprintf(reason, capacity, "%s", text ? text : "(no message)");
    free(text);
    hgr_status_free(status);
  }
  if (outcome == PASSED && frozen_names[0]) snprintf(reason, capacity, "inputs fixed at load: %s", frozen_names);
  for (size_t i = 0; i < input_count; ++i) tensor_free(&inputs[i]);
  hgr_executor_release(executor);
  hgr_params_release(params);
  hgr_graph_release(graph);
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
        outcome_t outcome = run_test(&r, test_dir, reason, sizeof(reason));
        ++r.counts[outcome];
        ++ran;
        if (outcome == FAILED) printf("FAILED %s/%s: %s\n", categories[c], tests[t], reason);
        if (r.report) report_line(r.report, categories[c], tests[t], outcome, reason);
        if (ran % 100 == 0)
          printf("... %zu tests: %zu passed, %zu failed, %zu not supported\n", ran, r.counts[PASSED], r.counts[FAILED],
                 r.counts[UNSUPPORTED]);
        fflush(stdout);
      }
      free(tests[t]);
    }
    free(tests);
  }
  if (r.report) fclose(r.report);
  printf("ONNX backend tests on %s%s: %zu run, %zu passed, %zu failed, %zu not supported\n", device,
         sample > 1 ? " (a sample)" : "", ran, r.counts[PASSED], r.counts[FAILED], r.counts[UNSUPPORTED]);
  hgr_instance_release(r.instance);
  return r.counts[FAILED] ? 1 : 0;
}
