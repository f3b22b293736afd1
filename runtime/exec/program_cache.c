/* The programs an executor's launches use, per executor device, built concurrently
 * across devices (one thread per device; host-driven devices on the calling thread,
 * since Oclgrind is not thread-safe), through a binary cache.
 *
 * hgr's own kernels (of the embedded kernels/<name>.cl sources, and the generated
 * ones of fused_elementwise, whose plans carry their text) go into one program per
 * device holding just the kernels used there: the sources' texts one after another,
 * built with -DHGR_SELECT and -DHGR_K_<kernel>=~,1 for each kernel of theirs wanted
 * (kernels/select.h drops the others before the compiler sees them), then the
 * generated kernels. For a pool that asks for them (a model object whose shapes
 * vary), a new program also holds the launches' siblings (the kernels their ops pick
 * at other shapes, hgr__launch_plan_t.siblings), so that a later shape finds them.
 * A kernel that a program of the executor's pool has (the model
 * object's: an earlier specialization's) is taken from there instead; when the pool
 * has programs on the device but not a kernel this executor needs, the sources of
 * the missing kernels come whole (whole_sources), so that a model misses a source's
 * kernels at most once. A user op's source is a program of its
 * own, built whole. Each program is keyed by its text and options, so a second
 * executor or process with the same kernels loads it from the cache.
 *
 * Cache entries ("blobs", the same bytes in files and through callbacks) are the
 * on-disk store's checked entries (base/store.h): the binary behind a header with
 * its key, its length and its checksum. The key names platform, device, device
 * version, driver version, build options and the source's hash; the file,
 * "program-<hash of the key>.bin", is the store's, and the key inside the entry
 * must match it too (a file written for another driver is rejected, not trusted).
 * The key's "hgr-program-2" changed with the format, so an entry of the format
 * before ("HGRPROG1", in "<hash>.bin") is never looked up: a miss.
 *
 * Binaries are taken once the kernels were launched (PoCL generates most of the
 * code then): at creation when the kernel warm-up (warm.c) launched every kernel
 * the graph uses from the programs compiled here, else after the first run.
 *
 * Not in files mode on a driver that keeps what it compiles on disk itself and
 * compiles every kernel of a program again to hand out its binary: PoCL with its
 * kernel cache on. There a stored binary saves what PoCL's cache already saves, and
 * taking it costs a generic compilation of each kernel on top of the ones its
 * launches made (1.4 s of a 4.7 s first run of tests/data/symbolic/cnn.onnx;
 * bench/notes.md), unless the options ask for it (store_always). A binary stored
 * before, or given through callbacks, is still loaded. */
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "alloc.h"
#include "executor_internal.h"
#include "file.h"
#include "kernel_sources.h"
#include "store.h"
#include "text.h"

/* The store's names for the program cache (store.h). */
#define STORE_WHAT "program cache"
#define STORE_KEY_NAMES "platform, device, driver, options or source"
#define ENTRY_PREFIX "program-"
#define ENTRY_SUFFIX ".bin"
#define BUILD_OPTIONS ""
/* The library's programs flush denormal floats to zero: values below 1.2e-38, which
 * x86 cores compute in microcode at up to 100x the time. A softmax's tail reaches them
 * (exp of scores 87-103 below the row's largest): on PoCL (2-core Xeon) the attention of
 * a 6-layer encoder from ONNX Runtime's optimizer took 95 ms at 512 tokens without the
 * flag, 16.5 ms with it (hgr run --profile; bench/notes.md, "Denormals"). PoCL's CPU
 * drivers set the core's flush-to-zero mode for such a program's kernels. */
#define LIBRARY_OPTIONS "-cl-denorms-are-zero"

/* What a program is built from: the library's text, or a user op's source or binary. */
typedef struct source_t {
  const char* text;
  size_t length;
  const unsigned char* binary; /* a user's binary for this device: no cache involved */
  size_t binary_length;
  const char* options;
  const char* origin; /* for messages: what the library's program holds, or the user's file */
} source_t;

uint64_t hgr__kernel_library_hash(void) {
  uint64_t hash = HGR__FNV1A_START;
  for (size_t i = 0; i < hgr__kernel_source_count; ++i) {
    hash = hgr__fnv1a(hgr__kernel_sources[i].name, strlen(hgr__kernel_sources[i].name) + 1, hash);
    hash = hgr__fnv1a(hgr__kernel_sources[i].text, hgr__kernel_sources[i].length, hash);
  }
  return hash;
}

static const hgr__kernel_source_t* embedded(const char* name) {
  for (size_t i = 0; i < hgr__kernel_source_count; ++i)
    if (!strcmp(hgr__kernel_sources[i].name, name)) return &hgr__kernel_sources[i];
  return NULL;
}

static hgr_status_t resolve_source(const hgr_executor_t* executor, const hgr__device_t* device,
                                   const hgr__program_t* program, source_t* out) {
  memset(out, 0, sizeof(*out));
  if (!program->source) { /* the library's */
    out->text = program->text;
    out->length = strlen(program->text);
    out->options = program->options;
    out->origin = program->origin;
    return HGR_OK;
  }
  hgr__user_program_t user;
  if (!hgr__library_program(executor->programs.kernels, program->source, &device->info, &user))
    return HGR_STATUS(HGR_STATUS_INTERNAL, "no kernel source '%s'", program->source);
  out->text = user.text;
  out->length = user.text_length;
  out->binary = user.binary;
  out->binary_length = user.binary_length;
  out->options = user.build_options ? user.build_options : BUILD_OPTIONS;
  out->origin = user.origin;
  if (!out->text && !out->binary)
    return HGR_STATUS(HGR_STATUS_INVALID_ARGUMENT, "the kernel library has neither a source nor a binary of %s for %s",
                      program->source, device->info.spec);
  return HGR_OK;
}

/* Adds an empty entry (not built yet); NULL when out of memory. The array only grows
 * before the build threads start. */
static hgr__program_t* add_program(hgr_executor_t* executor, size_t device_slot) {
  if (executor->programs.count == executor->programs.capacity) {
    size_t capacity = executor->programs.capacity ? 2 * executor->programs.capacity : 8;
    hgr__program_t* grown = hgr__realloc(executor->allocator, executor->programs.programs, capacity * sizeof(*grown));
    if (!grown) return NULL;
    executor->programs.programs = grown;
    executor->programs.capacity = capacity;
  }
  hgr__program_t* program = &executor->programs.programs[executor->programs.count++];
  memset(program, 0, sizeof(*program));
  program->device_slot = device_slot;
  return program;
}

static void free_program(hgr_allocator_t allocator, hgr__program_t* program) {
  if (program->program) clReleaseProgram(program->program);
  hgr__free(allocator, program->kernels);
  hgr__free(allocator, program->text);
  hgr__free(allocator, program->options);
  hgr__free(allocator, program->origin);
  hgr__free(allocator, program->key);
}

/* The user source's program on device_slot, or NULL. */
static hgr__program_t* find_user_program(hgr_executor_t* executor, size_t device_slot, const char* source) {
  for (size_t p = 0; p < executor->programs.count; ++p) {
    hgr__program_t* program = &executor->programs.programs[p];
    if (program->device_slot == device_slot && program->source && !strcmp(program->source, source)) return program;
  }
  return NULL;
}

/* The library's program on device_slot that has kernel, or NULL. */
static hgr__program_t* find_library_program(hgr_executor_t* executor, size_t device_slot, const char* kernel) {
  for (size_t p = 0; p < executor->programs.count; ++p) {
    hgr__program_t* program = &executor->programs.programs[p];
    if (program->device_slot == device_slot && !program->source && hgr__kernels_have(program->kernels, kernel))
      return program;
  }
  return NULL;
}

/* ---- the library's programs: the kernels a device's launches use (kernels/select.h) -- */

/* A kernel of hgr's that a launch uses: of an embedded source, or generated. */
typedef struct wanted_t {
  const char* kernel;
  const hgr__kernel_source_t* source; /* embedded; NULL: generated */
  const char* generated;              /* a generated kernel's "<name>\0<text>" (its plan's) */
} wanted_t;

static int compare_wanted(const void* a, const void* b) {
  return strcmp(((const wanted_t*)a)->kernel, ((const wanted_t*)b)->kernel);
}

/* Whether plan's kernel (of op's source unless the plan names one) is hgr's, an
 * embedded source's or a generated one: then *out_wanted is its entry. *out_source:
 * the source's name (a user op's, when the kernel is not hgr's). */
static bool library_kernel(const hgr__op_t* op, const hgr__launch_plan_t* plan, wanted_t* out_wanted,
                           const char** out_source) {
  *out_source = plan->source ? plan->source : op->source;
  const hgr__kernel_source_t* source = plan->generated ? NULL : embedded(*out_source);
  *out_wanted = (wanted_t){plan->kernel, source, plan->generated};
  return plan->generated || source;
}

/* Sorts wanted by kernel and drops repeats; the count left. */
static size_t sort_wanted(wanted_t* wanted, size_t count) {
  qsort(wanted, count, sizeof(*wanted), compare_wanted);
  size_t kept = 0;
  for (size_t w = 0; w < count; ++w)
    if (!kept || strcmp(wanted[w].kernel, wanted[kept - 1].kernel)) wanted[kept++] = wanted[w];
  return kept;
}

/* Makes program the library's program of wanted[0..count) (sorted, each once): its
 * text (the embedded sources with any of the kernels, in the table's order, then the
 * generated kernels), the options selecting the embedded ones (none when whole: every
 * kernel of those sources), its kernel list (the built program's, once built) and its
 * origin. One text for them all: PoCL 3.1 spends 0.12-0.14 s on any program before its
 * kernels, 0.6 s on a process's first (bench/notes.md). false when out of memory. */
static bool compose(hgr_allocator_t allocator, hgr__program_t* program, const wanted_t* wanted, size_t count,
                    bool whole) {
  hgr__text_t text = {.allocator = allocator}, options = {.allocator = allocator},
              kernels = {.allocator = allocator}, origin = {.allocator = allocator};
  hgr__text_appendf(&options, "%s%s", LIBRARY_OPTIONS, whole ? "" : " -DHGR_SELECT");
  size_t sources = 0, generated = 0;
  for (size_t i = 0; i < hgr__kernel_source_count; ++i) {
    bool used = false;
    for (size_t w = 0; w < count && !used; ++w) used = wanted[w].source == &hgr__kernel_sources[i];
    if (!used) continue;
    hgr__text_appendf(&text, "#line 1 \"kernels/%s.cl\"\n%s\n", hgr__kernel_sources[i].name,
                      hgr__kernel_sources[i].text);
    hgr__text_appendf(&origin, "%skernels/%s.cl", sources++ ? ", " : "", hgr__kernel_sources[i].name);
  }
  for (size_t w = 0; w < count; ++w) {
    hgr__text_appendf(&kernels, "%s;", wanted[w].kernel);
    if (wanted[w].source) {
      if (!whole) hgr__text_appendf(&options, " -DHGR_K_%s=~,1", wanted[w].kernel);
    } else {
      hgr__text_appendf(&text, "%s\n", wanted[w].generated + strlen(wanted[w].generated) + 1);
      generated++;
    }
  }
  if (generated)
    hgr__text_appendf(&origin, "%s%zu generated kernel%s", sources ? " and " : "", generated, generated == 1 ? "" : "s");
  if (whole) hgr__text_appendf(&origin, " (every kernel)");
  else hgr__text_appendf(&origin, " (%zu kernel%s)", count, count == 1 ? "" : "s");
  program->text = hgr__text_take(&text);
  program->options = hgr__text_take(&options);
  program->kernels = hgr__text_take(&kernels);
  program->origin = hgr__text_take(&origin);
  return program->text && program->options && program->kernels && program->origin;
}

/* Adds the executor's pool's program of hgr's kernels on device_slot that has
 * kernel, if the pool has one: *out_program (built already), else NULL. */
static hgr_status_t take_pooled(hgr_executor_t* executor, size_t device_slot, const char* kernel,
                                hgr__program_t** out_program) {
  *out_program = NULL;
  size_t device_index = executor->device_keys.devices[device_slot].device_index;
  char* kernels = NULL;
  cl_program pooled = hgr__program_pool_find_kernel(executor->programs.pool, executor->instance, device_index,
                                                    kernel, executor->allocator, &kernels);
  if (!pooled) return HGR_OK;
  hgr__program_t* program = add_program(executor, device_slot);
  if (!program) {
    clReleaseProgram(pooled);
    hgr__free(executor->allocator, kernels);
    return HGR_STATUS(HGR_STATUS_RESOURCE_EXHAUSTED, "out of host memory");
  }
  program->program = pooled;
  program->kernels = kernels;
  executor->programs.stats.from_pool++;
  executor->programs.stats.programs++;
  *out_program = program;
  return HGR_OK;
}

/* Whether the library's programs on device_slot are whole sources: when the executor's
 * pool holds programs of hgr's kernels on that device already, an earlier
 * specialization built the kernels its shapes used, and this one needs others of the
 * same sources (a shape that changes an op's tile or variant). Then the sources come
 * whole, so that no later shape misses a kernel of theirs again. */
static bool whole_sources(const hgr_executor_t* executor, size_t device_slot) {
  return hgr__program_pool_has_device(executor->programs.pool, executor->instance,
                                      executor->device_keys.devices[device_slot].device_index);
}

/* Adds a new program of wanted[0..count) (sorted, each once), not built yet. */
static hgr_status_t add_composed(hgr_executor_t* executor, size_t device_slot, const wanted_t* wanted, size_t count,
                                 hgr__program_t** out_program) {
  bool whole = whole_sources(executor, device_slot);
  hgr__program_t* program = add_program(executor, device_slot);
  if (program && compose(executor->allocator, program, wanted, count, whole)) {
    *out_program = program;
    return HGR_OK;
  }
  if (program) {
    free_program(executor->allocator, program);
    executor->programs.count--;
  }
  return HGR_STATUS(HGR_STATUS_RESOURCE_EXHAUSTED, "out of host memory");
}

/* Whether kernel is in a program of the executor's or its pool's on device_slot. */
static bool have_kernel(hgr_executor_t* executor, size_t device_slot, const char* kernel) {
  if (find_library_program(executor, device_slot, kernel)) return true;
  char* kernels = NULL;
  cl_program pooled = hgr__program_pool_find_kernel(executor->programs.pool, executor->instance,
                                                    executor->device_keys.devices[device_slot].device_index, kernel,
                                                    executor->allocator, &kernels);
  hgr__free(executor->allocator, kernels);
  if (pooled) clReleaseProgram(pooled);
  return pooled != NULL;
}

/* Step s when it launches kernels on device_slot, else NULL. */
static const hgr__step_t* kernel_step_on(const hgr_executor_t* executor, uint32_t s, size_t device_slot) {
  const hgr__step_t* step = &executor->steps[s];
  return step->kind == HGR__STEP_KERNEL &&
                 hgr__device_keys_slot(&executor->device_keys, step->device_index) == device_slot
             ? step
             : NULL;
}

/* Appends to wanted[count..) the siblings of the library launches on device_slot
 * that no program has yet (the pool asks for them: hgr__program_pool_siblings);
 * the new count. */
static size_t add_siblings(hgr_executor_t* executor, size_t device_slot, wanted_t* wanted, size_t count) {
  for (uint32_t s = 0; s < executor->step_count; ++s) {
    const hgr__step_t* step = kernel_step_on(executor, s, device_slot);
    if (!step) continue;
    for (uint32_t k = 0; k < step->plan.launch_count; ++k) {
      const hgr__launch_plan_t* plan = &step->plan.launches[k];
      wanted_t own;
      const char* name = NULL;
      if (!plan->siblings || !library_kernel(step->plan.op, plan, &own, &name) || !own.source) continue;
      for (const char* kernel = plan->siblings; *kernel; kernel += strlen(kernel) + 1) {
        bool listed = false;
        for (size_t w = 0; w < count && !listed; ++w) listed = !strcmp(wanted[w].kernel, kernel);
        if (!listed && !have_kernel(executor, device_slot, kernel))
          wanted[count++] = (wanted_t){kernel, own.source, NULL};
      }
    }
  }
  return count;
}

/* What the planned launches on device_slot use: each user source's program, and of
 * hgr's kernels, those a pooled program has from it, the rest in one new program,
 * with the launches' siblings where the pool asks for them. wanted has room for
 * every launch and every sibling. */
static hgr_status_t collect_device(hgr_executor_t* executor, size_t device_slot, wanted_t* wanted) {
  size_t count = 0;
  for (uint32_t s = 0; s < executor->step_count; ++s) {
    const hgr__step_t* step = kernel_step_on(executor, s, device_slot);
    if (!step) continue;
    for (uint32_t k = 0; k < step->plan.launch_count; ++k) {
      const char* name = NULL;
      if (library_kernel(step->plan.op, &step->plan.launches[k], &wanted[count], &name)) {
        count++;
      } else if (!find_user_program(executor, device_slot, name)) {
        hgr__program_t* program = add_program(executor, device_slot);
        if (!program) return HGR_STATUS(HGR_STATUS_RESOURCE_EXHAUSTED, "out of host memory");
        program->source = name;
      }
    }
  }
  count = sort_wanted(wanted, count);
  size_t missing = 0;
  for (size_t w = 0; w < count; ++w) {
    if (find_library_program(executor, device_slot, wanted[w].kernel)) continue;
    hgr__program_t* pooled = NULL;
    HGR_RETURN_IF_ERROR(take_pooled(executor, device_slot, wanted[w].kernel, &pooled));
    if (!pooled) wanted[missing++] = wanted[w];
  }
  /* a new program: with the siblings no program has, so that other shapes find them */
  if (missing && hgr__program_pool_siblings(executor->programs.pool))
    missing = sort_wanted(wanted, add_siblings(executor, device_slot, wanted, missing));
  hgr__program_t* program = NULL;
  return missing ? add_composed(executor, device_slot, wanted, missing, &program) : HGR_OK;
}

/* ---- logging: lines collected per worker, emitted by the calling thread ----------- */

typedef struct worker_t {
  hgr_executor_t* executor;
  size_t device_slot;
  size_t* programs; /* indexes into executor->programs.programs to build */
  size_t program_count;
  hgr_status_t status;
  char* log;       /* lines separated by '\n' */
  size_t log_length;
  uint32_t from_cache, from_pool, from_source, rejected, binaries;
} worker_t;

static void note(worker_t* worker, const char* format, ...) HGR_PRINTF(2, 3);
static void note(worker_t* worker, const char* format, ...) {
  if (!worker->executor->log) return;
  char line[1024];
  va_list args;
  va_start(args, format);
  vsnprintf(line, sizeof(line), format, args);
  va_end(args);
  size_t length = strlen(line);
  char* grown = hgr__realloc(worker->executor->allocator, worker->log, worker->log_length + length + 2);
  if (!grown) return;
  worker->log = grown;
  memcpy(worker->log + worker->log_length, line, length);
  worker->log_length += length;
  worker->log[worker->log_length++] = '\n';
  worker->log[worker->log_length] = 0;
}

static void emit_log(hgr_executor_t* executor, worker_t* worker) {
  for (char* line = worker->log; line && *line;) {
    char* end = strchr(line, '\n');
    *end = 0;
    executor->log(executor->log_user, line);
    line = end + 1;
  }
}

/* ---- keys and blobs ---------------------------------------------------------------- */

/* The key (from allocator), or NULL when out of memory. */
static char* make_key(hgr_allocator_t allocator, const hgr__device_t* device, const source_t* source) {
  const hgr_device_info_t* info = &device->info;
  uint64_t source_hash = hgr__fnv1a(source->text, source->length, HGR__FNV1A_START);
  size_t capacity = strlen(info->platform_name) + strlen(info->name) + strlen(info->version) +
                    strlen(info->driver_version) + strlen(source->origin) + strlen(source->options) + 96;
  char* key = hgr__alloc(allocator, capacity);
  if (key)
    snprintf(key, capacity, "hgr-program-2|%s|%s|%s|%s|options=%s|%s|%016llx", info->platform_name, info->name,
             info->version, info->driver_version, source->options, source->origin, (unsigned long long)source_hash);
  return key;
}

static bool cache_enabled(const hgr_executor_t* executor) {
  return executor->programs.cache.mode != HGR_PROGRAM_CACHE_OFF &&
         (executor->programs.cache.mode != HGR_PROGRAM_CACHE_CALLBACKS ||
          (executor->programs.cache.load && executor->programs.cache.store));
}

/* The executor's store in FILES mode: its directory is resolved at each use, as the
 * environment says then. */
static hgr_status_t open_store(const hgr_executor_t* executor, hgr__store_t* out_store) {
  return hgr__store_open(executor->allocator, executor->programs.cache.directory, STORE_WHAT, STORE_KEY_NAMES,
                         out_store);
}

/* What checks a blob, from a file or the embedder's callbacks: no directory needed. */
static const hgr__store_t blob_checker = {.what = STORE_WHAT, .key_names = STORE_KEY_NAMES};

/* The allocator of what load_blob returns: the embedder's load callback mallocs
 * its blob (hgr/executor.h: "allocated by malloc (hgr frees it)"), hence the
 * system's; the store reads with the executor's. */
static hgr_allocator_t blob_allocator(const hgr_executor_t* executor) {
  return executor->programs.cache.mode == HGR_PROGRAM_CACHE_CALLBACKS ? hgr_allocator_system() : executor->allocator;
}

/* Loads the blob of key: true with *out_blob (from blob_allocator) when there is one. */
static bool load_blob(worker_t* worker, const char* key, unsigned char** out_blob, size_t* out_size) {
  hgr_executor_t* executor = worker->executor;
  *out_blob = NULL;
  *out_size = 0;
  if (executor->programs.cache.mode == HGR_PROGRAM_CACHE_CALLBACKS) {
    void* blob = NULL;
    size_t size = 0;
    if (!executor->programs.cache.load(executor->programs.cache.user, key, &blob, &size) || !blob) return false;
    *out_blob = blob;
    *out_size = size;
    return true;
  }
  hgr__store_t store;
  char name[HGR__STORE_NAME_MAX];
  hgr__store_key_name(ENTRY_PREFIX, key, ENTRY_SUFFIX, name);
  void* data = NULL;
  size_t length = 0;
  hgr_status_t status = open_store(executor, &store);
  if (!status) status = hgr__store_read(&store, name, HGR__FILE_MAX_PROGRAM_BLOB_BYTES, &data, &length);
  if (status) note(worker, "program cache: %s", hgr_status_message(status));
  hgr_status_free(status);
  hgr__store_close(&store);
  if (!data) return false;
  *out_blob = data;
  *out_size = length;
  return true;
}

/* ---- building ---------------------------------------------------------------------- */

static hgr_status_t build_failure(hgr_allocator_t allocator, cl_int error, cl_program program, cl_device_id device,
                                  const char* origin, const char* spec) {
  char log[2048] = "";
  size_t size = 0;
  if (clGetProgramBuildInfo(program, device, CL_PROGRAM_BUILD_LOG, sizeof(log) - 1, log, &size) !=
      CL_SUCCESS) {
    /* The log is longer than the buffer: fetch the whole and keep its head. */
    char* whole = NULL;
    if (clGetProgramBuildInfo(program, device, CL_PROGRAM_BUILD_LOG, 0, NULL, &size) == CL_SUCCESS &&
        (whole = hgr__calloc(allocator, size + 1, 1)) &&
        clGetProgramBuildInfo(program, device, CL_PROGRAM_BUILD_LOG, size, whole, NULL) == CL_SUCCESS)
      snprintf(log, sizeof(log), "%s", whole);
    hgr__free(allocator, whole);
  }
  return HGR_CL_STATUS(error, "clBuildProgram(%s) on %s; build log: %.1500s", origin, spec,
                       log[0] ? log : "(empty)");
}

/* From a cached binary: NULL when there is none or it is unusable (noted). */
hgr_status_t hgr__program_from_entry(const hgr__device_t* device, cl_context context, const void* entry,
                                     size_t size, const char* key, const char* options, cl_program* out_program) {
  *out_program = NULL;
  const void* value = NULL;
  size_t length = 0;
  HGR_RETURN_IF_ERROR(hgr__store_entry_check(&blob_checker, entry, size, key, &value, &length));
  const unsigned char* binary = value;
  cl_int error = CL_SUCCESS, binary_status = CL_SUCCESS;
  cl_program program = clCreateProgramWithBinary(context, 1, &device->device, &length, &binary, &binary_status, &error);
  if (error == CL_SUCCESS && binary_status != CL_SUCCESS) error = binary_status;
  if (error == CL_SUCCESS && program) error = clBuildProgram(program, 1, &device->device, options, NULL, NULL);
  if (error != CL_SUCCESS || !program) {
    if (program) clReleaseProgram(program);
    return HGR_CL_STATUS(error, "a program binary for %s", device->info.spec);
  }
  *out_program = program;
  return HGR_OK;
}

/* From a cached binary: NULL when there is none or it is unusable (noted). */
static cl_program from_cache(worker_t* worker, cl_context context, const hgr__device_t* device, const char* key,
                             const source_t* source) {
  const char* source_name = source->origin;
  unsigned char* blob = NULL;
  size_t size = 0;
  if (!load_blob(worker, key, &blob, &size)) {
    note(worker, "program cache: miss for %s on %s", source_name, device->info.spec);
    return NULL;
  }
  cl_program program = NULL;
  hgr_status_t status = hgr__program_from_entry(device, context, blob, size, key, source->options, &program);
  if (status) {
    worker->rejected++;
    note(worker, "program cache: entry for %s on %s rejected (%s); rebuilding from source", source_name,
         device->info.spec, hgr_status_message(status));
  } else {
    note(worker, "program cache: hit for %s on %s", source_name, device->info.spec);
  }
  hgr_status_free(status);
  hgr__free(blob_allocator(worker->executor), blob);
  return program;
}

/* A library program's kernel list from the built program (CL_PROGRAM_KERNEL_NAMES),
 * since a whole source's kernels are known only once it is built; the composed list
 * stays where the driver cannot say or memory runs out. */
static void list_built_kernels(hgr_executor_t* executor, hgr__program_t* slot, cl_program program) {
  size_t bytes = 0;
  if (slot->source || clGetProgramInfo(program, CL_PROGRAM_KERNEL_NAMES, 0, NULL, &bytes) != CL_SUCCESS || !bytes)
    return;
  char* names = hgr__alloc(executor->allocator, bytes + 2);
  if (!names) return;
  if (clGetProgramInfo(program, CL_PROGRAM_KERNEL_NAMES, bytes, names, NULL) != CL_SUCCESS) {
    hgr__free(executor->allocator, names);
    return;
  }
  names[bytes] = 0;
  size_t length = strlen(names);
  if (length && names[length - 1] != ';') memcpy(names + length, ";", 2); /* each name followed by ';' */
  hgr__free(executor->allocator, slot->kernels);
  slot->kernels = names;
}

static hgr_status_t build_program(worker_t* worker, hgr__program_t* slot) {
  hgr_executor_t* executor = worker->executor;
  size_t device_index = executor->device_keys.devices[slot->device_slot].device_index;
  const hgr__device_t* device = &executor->instance->devices[device_index];
  source_t source;
  HGR_RETURN_IF_ERROR(resolve_source(executor, device, slot, &source));
  cl_context context;
  HGR_RETURN_IF_ERROR(hgr__instance_context(executor->instance, device_index, &context));
  cl_int error = CL_SUCCESS;
  cl_program program = NULL;
  if (source.binary) { /* the user's own binary: built as given, never cached */
    cl_int binary_status = CL_SUCCESS;
    program = clCreateProgramWithBinary(context, 1, &device->device, &source.binary_length, &source.binary,
                                        &binary_status, &error);
    if (error == CL_SUCCESS && binary_status != CL_SUCCESS) error = binary_status;
    if (error != CL_SUCCESS || !program) {
      if (program) clReleaseProgram(program);
      return HGR_CL_STATUS(error, "clCreateProgramWithBinary(%s) on %s", source.origin, device->info.spec);
    }
  } else {
    slot->key = make_key(executor->allocator, device, &source);
    if (!slot->key) return HGR_STATUS(HGR_STATUS_RESOURCE_EXHAUSTED, "out of host memory");
    hgr_program_pool_t* pool = executor->programs.pool;
    if ((slot->program = hgr__program_pool_find(pool, executor->instance, device_index, slot->key))) {
      worker->from_pool++;
      return HGR_OK;
    }
    if (cache_enabled(executor) && (slot->program = from_cache(worker, context, device, slot->key, &source))) {
      worker->from_cache++;
      list_built_kernels(executor, slot, slot->program);
      hgr__program_pool_keep(pool, executor->instance, device_index, slot->key, slot->kernels, source.options,
                             slot->program);
      return HGR_OK;
    }
    program = clCreateProgramWithSource(context, 1, &source.text, &source.length, &error);
    if (error != CL_SUCCESS || !program)
      return HGR_CL_STATUS(error, "clCreateProgramWithSource(%s) on %s", source.origin, device->info.spec);
    slot->from_source = true;
  }
  error = clBuildProgram(program, 1, &device->device, source.options, NULL, NULL);
  if (error != CL_SUCCESS) {
    hgr_status_t status =
        build_failure(executor->allocator, error, program, device->device, source.origin, device->info.spec);
    clReleaseProgram(program);
    slot->from_source = false;
    return status;
  }
  slot->program = program;
  if (slot->from_source) {
    worker->from_source++;
    list_built_kernels(executor, slot, program);
    hgr__program_pool_keep(executor->programs.pool, executor->instance, device_index, slot->key, slot->kernels,
                           source.options, program);
  } else {
    worker->binaries++;
  }
  return HGR_OK;
}

/* Builds slot's program; the library's text and options go once used. */
static hgr_status_t build_one(worker_t* worker, hgr__program_t* slot) {
  hgr_status_t status = build_program(worker, slot);
  hgr__free(worker->executor->allocator, slot->text);
  hgr__free(worker->executor->allocator, slot->options);
  slot->text = slot->options = NULL;
  return status;
}

/* One build at a time per platform, process-wide: ThreadSanitizer shows PoCL 3.1's
 * compiler (LLVM 15) racing on its own state when two programs of one platform
 * build at once (two executors, or two devices of a platform). Different
 * platforms still build concurrently. */
#define PLATFORM_LOCKS 16
static pthread_mutex_t platform_locks_guard = PTHREAD_MUTEX_INITIALIZER;
static cl_platform_id locked_platforms[PLATFORM_LOCKS];
static pthread_mutex_t platform_locks[PLATFORM_LOCKS] = {
    PTHREAD_MUTEX_INITIALIZER, PTHREAD_MUTEX_INITIALIZER, PTHREAD_MUTEX_INITIALIZER, PTHREAD_MUTEX_INITIALIZER,
    PTHREAD_MUTEX_INITIALIZER, PTHREAD_MUTEX_INITIALIZER, PTHREAD_MUTEX_INITIALIZER, PTHREAD_MUTEX_INITIALIZER,
    PTHREAD_MUTEX_INITIALIZER, PTHREAD_MUTEX_INITIALIZER, PTHREAD_MUTEX_INITIALIZER, PTHREAD_MUTEX_INITIALIZER,
    PTHREAD_MUTEX_INITIALIZER, PTHREAD_MUTEX_INITIALIZER, PTHREAD_MUTEX_INITIALIZER, PTHREAD_MUTEX_INITIALIZER};

static pthread_mutex_t* platform_lock(cl_platform_id platform) {
  pthread_mutex_lock(&platform_locks_guard);
  size_t slot = 0;
  while (slot < PLATFORM_LOCKS && locked_platforms[slot] && locked_platforms[slot] != platform) ++slot;
  if (slot == PLATFORM_LOCKS) slot = PLATFORM_LOCKS - 1; /* more platforms than slots: they share the last */
  locked_platforms[slot] = platform;
  pthread_mutex_unlock(&platform_locks_guard);
  return &platform_locks[slot];
}

static void* build_worker(void* argument) {
  worker_t* worker = argument;
  hgr_executor_t* executor = worker->executor;
  cl_platform_id platform =
      executor->instance->devices[executor->device_keys.devices[worker->device_slot].device_index].platform;
  pthread_mutex_t* lock = platform_lock(platform);
  pthread_mutex_lock(lock);
  for (size_t i = 0; i < worker->program_count && !worker->status; ++i)
    worker->status = build_one(worker, &executor->programs.programs[worker->programs[i]]);
  pthread_mutex_unlock(lock);
  return NULL;
}

hgr_status_t hgr__programs_build(hgr_executor_t* executor) {
  uint64_t start = hgr__monotonic_ns();
  size_t devices = executor->device_keys.device_count;
  worker_t* workers = hgr__calloc(executor->allocator, devices + 1, sizeof(worker_t));
  pthread_t* threads = hgr__calloc(executor->allocator, devices + 1, sizeof(pthread_t));
  bool* started = hgr__calloc(executor->allocator, devices + 1, sizeof(bool));
  hgr_status_t status = HGR_OK;
  if (!workers || !threads || !started) {
    status = HGR_STATUS(HGR_STATUS_RESOURCE_EXHAUSTED, "out of host memory");
    goto cleanup;
  }
  /* What the planned launches use, per device. */
  size_t launches = 0; /* and siblings */
  for (uint32_t s = 0; s < executor->step_count; ++s)
    for (uint32_t k = 0; k < executor->steps[s].plan.launch_count; ++k) {
      const char* siblings = executor->steps[s].plan.launches[k].siblings;
      for (launches++; siblings && *siblings; siblings += strlen(siblings) + 1) launches++;
    }
  wanted_t* wanted = hgr__calloc(executor->allocator, launches + 1, sizeof(*wanted));
  if (!wanted) status = HGR_STATUS(HGR_STATUS_RESOURCE_EXHAUSTED, "out of host memory");
  for (size_t d = 0; d < devices && !status; ++d) status = collect_device(executor, d, wanted);
  hgr__free(executor->allocator, wanted);
  for (size_t d = 0; d < devices && !status; ++d) {
    worker_t* worker = &workers[d];
    worker->executor = executor;
    worker->device_slot = d;
    worker->programs = hgr__calloc(executor->allocator, executor->programs.count + 1, sizeof(size_t));
    if (!worker->programs) {
      status = HGR_STATUS(HGR_STATUS_RESOURCE_EXHAUSTED, "out of host memory");
      break;
    }
    for (size_t p = 0; p < executor->programs.count; ++p)
      if (executor->programs.programs[p].device_slot == d && !executor->programs.programs[p].program)
        worker->programs[worker->program_count++] = p;
  }
  if (status) goto cleanup;
  /* One thread per device with work, but host-driven ones (not thread-safe) and the
   * last one run here. */
  size_t last_threaded = SIZE_MAX;
  for (size_t d = 0; d < devices; ++d)
    if (workers[d].program_count &&
        !executor->instance->devices[executor->device_keys.devices[d].device_index].host_driven)
      last_threaded = d;
  for (size_t d = 0; d < devices; ++d) {
    bool host_driven = executor->instance->devices[executor->device_keys.devices[d].device_index].host_driven;
    if (!workers[d].program_count || host_driven || d == last_threaded) continue;
    started[d] = pthread_create(&threads[d], NULL, build_worker, &workers[d]) == 0;
  }
  for (size_t d = 0; d < devices; ++d)
    if (workers[d].program_count && !started[d]) build_worker(&workers[d]);
  for (size_t d = 0; d < devices; ++d) {
    if (started[d]) pthread_join(threads[d], NULL);
    if (executor->log) emit_log(executor, &workers[d]);
    executor->programs.stats.from_cache += workers[d].from_cache;
    executor->programs.stats.from_pool += workers[d].from_pool;
    executor->programs.stats.from_source += workers[d].from_source;
    executor->programs.stats.rejected += workers[d].rejected;
    executor->programs.stats.programs +=
        workers[d].from_cache + workers[d].from_pool + workers[d].from_source + workers[d].binaries;
    status = hgr_status_join(status, workers[d].status);
    workers[d].status = HGR_OK;
  }
cleanup:
  for (size_t d = 0; workers && d < devices; ++d) {
    hgr__free(executor->allocator, workers[d].programs);
    hgr__free(executor->allocator, workers[d].log);
    hgr_status_free(workers[d].status);
  }
  hgr__free(executor->allocator, workers);
  hgr__free(executor->allocator, threads);
  hgr__free(executor->allocator, started);
  executor->programs.stats.build_ms += (double)(hgr__monotonic_ns() - start) / 1e6;
  return status;
}

hgr_status_t hgr__program_get(hgr_executor_t* executor, size_t device_slot, const hgr__op_t* op,
                              const hgr__launch_plan_t* plan, cl_program* out_program) {
  *out_program = NULL;
  const char* name = NULL;
  wanted_t wanted;
  hgr__program_t* slot = NULL;
  if (library_kernel(op, plan, &wanted, &name)) {
    if (!(slot = find_library_program(executor, device_slot, plan->kernel))) {
      HGR_RETURN_IF_ERROR(take_pooled(executor, device_slot, plan->kernel, &slot));
      if (!slot) HGR_RETURN_IF_ERROR(add_composed(executor, device_slot, &wanted, 1, &slot));
    }
  } else if (!(slot = find_user_program(executor, device_slot, name))) {
    if (!(slot = add_program(executor, device_slot))) return HGR_STATUS(HGR_STATUS_RESOURCE_EXHAUSTED, "out of host memory");
    slot->source = name;
  }
  if (!slot->program) { /* not among the planned ones (a re-plan): build it now */
    worker_t worker = {.executor = executor, .device_slot = device_slot};
    pthread_mutex_t* lock =
        platform_lock(executor->instance->devices[executor->device_keys.devices[device_slot].device_index].platform);
    pthread_mutex_lock(lock);
    hgr_status_t status = build_one(&worker, slot);
    pthread_mutex_unlock(lock);
    if (executor->log) emit_log(executor, &worker);
    hgr__free(executor->allocator, worker.log);
    executor->programs.stats.from_cache += worker.from_cache;
    executor->programs.stats.from_source += worker.from_source;
    executor->programs.stats.rejected += worker.rejected;
    executor->programs.stats.programs += status ? 0 : 1;
    HGR_RETURN_IF_ERROR(status);
  }
  *out_program = slot->program;
  return HGR_OK;
}

/* ---- storing ----------------------------------------------------------------------- */

hgr_status_t hgr__program_entry(hgr_allocator_t allocator, cl_program program, const char* key,
                                unsigned char** out_entry, size_t* out_size) {
  *out_entry = NULL;
  *out_size = 0;
  size_t length = 0;
  cl_int error = clGetProgramInfo(program, CL_PROGRAM_BINARY_SIZES, sizeof(length), &length, NULL);
  if (error != CL_SUCCESS) return HGR_CL_STATUS(error, "clGetProgramInfo(CL_PROGRAM_BINARY_SIZES)");
  if (!length) return HGR_STATUS(HGR_STATUS_UNIMPLEMENTED, "the driver gives no binary (size 0)");
  size_t size = hgr__store_entry_size(key, length);
  unsigned char* entry = size ? hgr__alloc(allocator, size) : NULL;
  if (!entry) return HGR_STATUS(HGR_STATUS_RESOURCE_EXHAUSTED, "out of host memory for a program binary");
  /* the driver writes the binary in place, behind the entry's header */
  unsigned char* binary = entry + HGR__STORE_ENTRY_HEADER + strlen(key);
  error = clGetProgramInfo(program, CL_PROGRAM_BINARIES, sizeof(binary), &binary, NULL);
  if (error != CL_SUCCESS) {
    hgr__free(allocator, entry);
    return HGR_CL_STATUS(error, "clGetProgramInfo(CL_PROGRAM_BINARIES)");
  }
  hgr__store_entry_seal(entry, key, length);
  *out_entry = entry;
  *out_size = size;
  return HGR_OK;
}

static void store_one(hgr_executor_t* executor, size_t device_slot, hgr__program_t* slot) {
  const hgr__device_t* device = &executor->instance->devices[executor->device_keys.devices[device_slot].device_index];
  worker_t worker = {.executor = executor, .device_slot = device_slot};
  unsigned char* blob = NULL;
  size_t size = 0;
  hgr_status_t status = hgr__program_entry(executor->allocator, slot->program, slot->key, &blob, &size);
  if (status) {
    note(&worker, "program cache: %s gives no binary (%s); not stored", device->info.spec, hgr_status_message(status));
  } else if (executor->programs.cache.mode == HGR_PROGRAM_CACHE_CALLBACKS) {
    executor->programs.cache.store(executor->programs.cache.user, slot->key, blob, size);
    executor->programs.stats.stored++;
  } else {
    hgr__store_t store;
    char name[HGR__STORE_NAME_MAX];
    hgr__store_key_name(ENTRY_PREFIX, slot->key, ENTRY_SUFFIX, name);
    status = open_store(executor, &store);
    if (!status) status = hgr__store_write(&store, name, blob, size, NULL, 0);
    if (status) note(&worker, "program cache: not stored: %s", hgr_status_message(status));
    else {
      executor->programs.stats.stored++;
      note(&worker, "program cache: stored %zu bytes for %s in %s/%s", size, device->info.spec, store.directory,
           name);
    }
    hgr__store_close(&store);
  }
  hgr_status_free(status);
  hgr__free(executor->allocator, blob);
  if (executor->log) emit_log(executor, &worker);
  hgr__free(executor->allocator, worker.log);
}

/* Whether device's driver keeps its compiled programs on disk and compiles every
 * kernel of a program for clGetProgramInfo(CL_PROGRAM_BINARIES): PoCL, unless
 * POCL_KERNEL_CACHE=0 turns its cache off. */
static bool driver_keeps_programs(const hgr__device_t* device) {
  const char* cache = getenv("POCL_KERNEL_CACHE");
  return !strcmp(device->info.platform_short, "pocl") && !(cache && !strcmp(cache, "0"));
}

void hgr__programs_store(hgr_executor_t* executor) {
  if (!cache_enabled(executor)) return;
  for (size_t p = 0; p < executor->programs.count; ++p) {
    hgr__program_t* slot = &executor->programs.programs[p];
    if (!slot->program || !slot->from_source || slot->stored) continue;
    slot->stored = true; /* tried once, whatever happens */
    const hgr__device_t* device =
        &executor->instance->devices[executor->device_keys.devices[slot->device_slot].device_index];
    if (executor->programs.cache.mode == HGR_PROGRAM_CACHE_FILES && !executor->programs.cache.store_always &&
        driver_keeps_programs(device)) {
      executor->programs.stats.left_to_driver++;
      continue;
    }
    store_one(executor, slot->device_slot, slot);
  }
}

void hgr__programs_release(hgr__programs_t* programs) {
  for (size_t p = 0; p < programs->count; ++p) free_program(programs->allocator, &programs->programs[p]);
  hgr__free(programs->allocator, programs->programs);
  hgr_kernel_library_release(programs->kernels);
  hgr_allocator_t allocator = programs->allocator;
  memset(programs, 0, sizeof(*programs));
  programs->allocator = allocator;
}

hgr_program_stats_t hgr_executor_program_stats(const hgr_executor_t* executor) { return executor->programs.stats; }
