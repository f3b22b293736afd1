/* Bundles (hgr/model.h): a model with the programs its specializations built, for
 * a deployment that compiles nothing from source. The directory holds
 *   manifest.json   {"format": "hgr-bundle-1", "hgr": "0.1.0", "kernels": "<hash
 *                   of the kernel library>", "model": "model.onnx", "programs":
 *                   [{"file": "program-0.bin", "platform": ..., "device": ...,
 *                   "device_version": ..., "driver_version": ..., "key": ...,
 *                   "kernels": "a;b;", "options": ...}, ...]}
 *   model.onnx      the model file, copied
 *   program-<n>.bin each program as a program cache entry (its key, its length, a
 *                   checksum, the binary: base/store.h)
 * A program is loaded into the model's pool for the instance device whose platform,
 * name, version and driver version equal its own; the executors of the model's
 * specializations take their kernels from the pool (exec/program_cache.c). */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "alloc.h"
#include "device_internal.h"
#include "executor_internal.h"
#include "file.h"
#include "hgr/hgr.h"
#include "internal.h"
#include "json.h"
#include "bundle.h"
#include "model_internal.h"
#include "text.h"

#define FORMAT "hgr-bundle-1"
#define MANIFEST "manifest.json"
#define MODEL_FILE "model.onnx"
#define MAX_MANIFEST_BYTES (16ull << 20)
#define MAX_MODEL_BYTES (2ull << 30)

#define STRINGIFY_(x) #x
#define STRINGIFY(x) STRINGIFY_(x)
#define VERSION STRINGIFY(HGR_VERSION_MAJOR) "." STRINGIFY(HGR_VERSION_MINOR) "." STRINGIFY(HGR_VERSION_PATCH)

/* "<directory>/<name>" from allocator, or NULL. */
static char* path_in(hgr_allocator_t allocator, const char* directory, const char* name) {
  return hgr__format_in(allocator, "%s/%s", directory, name);
}

static void library_hash(char out[17]) {
  snprintf(out, 17, "%016llx", (unsigned long long)hgr__kernel_library_hash());
}

/* ---- writing ------------------------------------------------------------------------- */

typedef struct writer_t {
  hgr_model_t* model;
  const char* directory;
  cJSON* programs;
  size_t count;
} writer_t;

static hgr_status_t write_program(void* user, size_t device_index, const char* key, const char* kernels,
                                  const char* options, cl_program program) {
  writer_t* w = user;
  hgr_allocator_t allocator = hgr__model_allocator(w->model);
  const hgr_device_info_t* info = &hgr__model_instance(w->model)->devices[device_index].info;
  char name[64];
  snprintf(name, sizeof(name), "program-%zu.bin", w->count);
  unsigned char* entry = NULL;
  size_t size = 0;
  hgr_status_t status = hgr__program_entry(allocator, program, key, &entry, &size);
  char* path = status ? NULL : path_in(allocator, w->directory, name);
  if (!status && !path) status = HGR_STATUS(HGR_STATUS_RESOURCE_EXHAUSTED, "out of host memory");
  if (!status) status = hgr__file_write_atomic(allocator, path, entry, size, NULL, 0);
  hgr__free(allocator, path);
  hgr__free(allocator, entry);
  if (status) return hgr_status_annotate(status, "the program of %s for %s", kernels, info->spec);
  cJSON* item = cJSON_CreateObject();
  if (!item || !cJSON_AddItemToArray(w->programs, item) || !cJSON_AddStringToObject(item, "file", name) ||
      !cJSON_AddStringToObject(item, "platform", info->platform_name) ||
      !cJSON_AddStringToObject(item, "device", info->name) ||
      !cJSON_AddStringToObject(item, "device_version", info->version) ||
      !cJSON_AddStringToObject(item, "driver_version", info->driver_version) ||
      !cJSON_AddStringToObject(item, "key", key) || !cJSON_AddStringToObject(item, "kernels", kernels) ||
      !cJSON_AddStringToObject(item, "options", options))
    return HGR_STATUS(HGR_STATUS_RESOURCE_EXHAUSTED, "out of host memory for the bundle's manifest");
  w->count++;
  return HGR_OK;
}

static hgr_status_t make_directory(const char* directory) {
  if (mkdir(directory, 0777) == 0 || errno == EEXIST) {
    struct stat st;
    if (stat(directory, &st) == 0 && S_ISDIR(st.st_mode)) return HGR_OK;
    return HGR_STATUS(HGR_STATUS_FAILED_PRECONDITION, "bundle %s: not a directory", directory);
  }
  return HGR_STATUS(HGR_STATUS_FAILED_PRECONDITION, "bundle %s: cannot make the directory: %s", directory,
                    strerror(errno));
}

hgr_status_t hgr_model_write_bundle(hgr_model_t* model, const char* model_path, const char* directory) {
  if (!model || !model_path || !directory)
    return HGR_STATUS(HGR_STATUS_INVALID_ARGUMENT, "hgr_model_write_bundle: NULL argument");
  if (!hgr__model_instance(model))
    return HGR_STATUS(HGR_STATUS_FAILED_PRECONDITION, "hgr_model_write_bundle: the model has no instance");
  hgr_allocator_t allocator = hgr__model_allocator(model);
  HGR_RETURN_IF_ERROR(make_directory(directory));
  void* bytes = NULL;
  size_t length = 0;
  char* path = path_in(allocator, directory, MODEL_FILE);
  hgr_status_t status = path ? hgr__file_read(allocator, model_path, MAX_MODEL_BYTES, &bytes, &length)
                             : HGR_STATUS(HGR_STATUS_RESOURCE_EXHAUSTED, "out of host memory");
  if (!status) status = hgr__file_write_atomic(allocator, path, bytes, length, NULL, 0);
  hgr__free(allocator, bytes);
  hgr__free(allocator, path);
  char hash[17];
  library_hash(hash);
  cJSON* manifest = status ? NULL : cJSON_CreateObject();
  writer_t writer = {model, directory, NULL, 0};
  if (!status && (!manifest || !cJSON_AddStringToObject(manifest, "format", FORMAT) ||
                  !cJSON_AddStringToObject(manifest, "hgr", VERSION) ||
                  !cJSON_AddStringToObject(manifest, "kernels", hash) ||
                  !cJSON_AddStringToObject(manifest, "model", MODEL_FILE) ||
                  !(writer.programs = cJSON_AddArrayToObject(manifest, "programs"))))
    status = HGR_STATUS(HGR_STATUS_RESOURCE_EXHAUSTED, "out of host memory for the bundle's manifest");
  if (!status)
    status = hgr__program_pool_each(hgr__model_programs(model), hgr__model_instance(model), write_program, &writer);
  if (!status && writer.count == 0)
    status = HGR_STATUS(HGR_STATUS_FAILED_PRECONDITION,
                        "the model has built no programs yet: run or specialize it at the bundle's shapes first");
  char* text = status ? NULL : cJSON_Print(manifest);
  if (!status && !text) status = HGR_STATUS(HGR_STATUS_RESOURCE_EXHAUSTED, "out of host memory for the manifest");
  path = status ? NULL : path_in(allocator, directory, MANIFEST);
  if (!status && !path) status = HGR_STATUS(HGR_STATUS_RESOURCE_EXHAUSTED, "out of host memory");
  if (!status) status = hgr__file_write_atomic(allocator, path, text, strlen(text), "\n", 1);
  hgr__free(allocator, path);
  cJSON_free(text);
  cJSON_Delete(manifest);
  return hgr_status_annotate(status, "bundle %s", directory);
}

/* ---- loading ------------------------------------------------------------------------- */

static const char* text_of(const cJSON* object, const char* name) {
  const cJSON* item = cJSON_GetObjectItemCaseSensitive(object, name);
  return cJSON_IsString(item) ? item->valuestring : NULL;
}

/* The manifest's string name, or INVALID_ARGUMENT naming it. */
static hgr_status_t field(const cJSON* object, const char* name, const char* where, const char** out) {
  *out = text_of(object, name);
  return *out ? HGR_OK : HGR_STATUS(HGR_STATUS_INVALID_ARGUMENT, "%s: no string \"%s\"", where, name);
}

/* A file name inside the bundle: no directory part, not "." or "..". */
static hgr_status_t file_name(const char* name, const char* where) {
  if (!name[0] || strchr(name, '/') || !strcmp(name, ".") || !strcmp(name, ".."))
    return HGR_STATUS(HGR_STATUS_INVALID_ARGUMENT, "%s: \"%s\" is not a file name in the bundle", where, name);
  return HGR_OK;
}

void hgr__bundle_manifest_free(hgr__bundle_manifest_t* manifest) {
  cJSON_Delete(manifest->json);
  hgr__free(manifest->allocator, manifest->programs);
  hgr_allocator_t allocator = manifest->allocator;
  memset(manifest, 0, sizeof(*manifest));
  manifest->allocator = allocator;
}

hgr_status_t hgr__bundle_manifest_parse(hgr_allocator_t allocator, const char* text, size_t length,
                                        hgr__bundle_manifest_t* out) {
  memset(out, 0, sizeof(*out));
  out->allocator = allocator;
  out->json = cJSON_ParseWithLength(text, length);
  const cJSON* json = out->json;
  hgr_status_t status = HGR_OK;
  const char *format = NULL, *version = NULL, *kernels = NULL;
  if (!cJSON_IsObject(json)) status = HGR_STATUS(HGR_STATUS_INVALID_ARGUMENT, "%s: not a JSON object", MANIFEST);
  if (!status) status = field(json, "format", MANIFEST, &format);
  if (!status && strcmp(format, FORMAT))
    status = HGR_STATUS(HGR_STATUS_FAILED_PRECONDITION, "%s: format \"%s\"; this hgr reads \"%s\"", MANIFEST, format,
                        FORMAT);
  if (!status) status = field(json, "hgr", MANIFEST, &version);
  if (!status) status = field(json, "kernels", MANIFEST, &kernels);
  char hash[17];
  library_hash(hash);
  if (!status && (strcmp(version, VERSION) || strcmp(kernels, hash)))
    status = HGR_STATUS(HGR_STATUS_FAILED_PRECONDITION,
                        "made by hgr %s with kernel library %s; this is hgr %s with kernel library %s: make the "
                        "bundle again with this hgr (hgr compile)",
                        version, kernels, VERSION, hash);
  if (!status) status = field(json, "model", MANIFEST, &out->model);
  if (!status) status = file_name(out->model, MANIFEST ": model");
  const cJSON* programs = status ? NULL : cJSON_GetObjectItemCaseSensitive(json, "programs");
  if (!status && !cJSON_IsArray(programs))
    status = HGR_STATUS(HGR_STATUS_INVALID_ARGUMENT, "%s: no array \"programs\"", MANIFEST);
  size_t count = status ? 0 : (size_t)cJSON_GetArraySize(programs);
  if (!status && !(out->programs = hgr__calloc(allocator, count + 1, sizeof(*out->programs))))
    status = HGR_STATUS(HGR_STATUS_RESOURCE_EXHAUSTED, "out of host memory for the bundle's manifest");
  const cJSON* item = NULL;
  cJSON_ArrayForEach(item, programs) {
    if (status) break;
    hgr__bundle_program_t* p = &out->programs[out->count];
    snprintf(p->where, sizeof(p->where), "%s: program %zu", MANIFEST, out->count);
    status = field(item, "file", p->where, &p->file);
    if (!status) status = file_name(p->file, p->where);
    if (!status) status = field(item, "platform", p->where, &p->info.platform_name);
    if (!status) status = field(item, "device", p->where, &p->info.name);
    if (!status) status = field(item, "device_version", p->where, &p->info.version);
    if (!status) status = field(item, "driver_version", p->where, &p->info.driver_version);
    if (!status) status = field(item, "key", p->where, &p->key);
    if (!status) status = field(item, "kernels", p->where, &p->kernels);
    if (!status) status = field(item, "options", p->where, &p->options);
    if (!status) out->count++;
  }
  if (status) hgr__bundle_manifest_free(out);
  return status;
}

hgr_status_t hgr__bundle_find_device(const hgr__bundle_program_t* program, const hgr_device_info_t* const* devices,
                                     size_t count, size_t* out_index) {
  const hgr_device_info_t* want = &program->info;
  for (size_t i = 0; i < count; ++i) {
    const hgr_device_info_t* info = devices[i];
    if (!strcmp(info->platform_name, want->platform_name) && !strcmp(info->name, want->name) &&
        !strcmp(info->version, want->version) && !strcmp(info->driver_version, want->driver_version)) {
      *out_index = i;
      return HGR_OK;
    }
  }
  hgr__text_t have = {.allocator = hgr_allocator_system()};
  for (size_t i = 0; i < count; ++i)
    hgr__text_appendf(&have, "%s%s '%s' (%s, %s, driver %s)", i ? "; " : "", devices[i]->spec, devices[i]->name,
                      devices[i]->platform_name, devices[i]->version, devices[i]->driver_version);
  char* list = hgr__text_take(&have);
  hgr_status_t status = HGR_STATUS(
      HGR_STATUS_FAILED_PRECONDITION, "%s was built for '%s' (%s, %s, driver %s), which this machine lacks; its devices: %s",
      program->where, want->name, want->platform_name, want->version, want->driver_version,
      list && list[0] ? list : "none");
  hgr__free(hgr_allocator_system(), list);
  return status;
}

static hgr_status_t load_program(hgr_model_t* model, const char* directory, const hgr__bundle_program_t* program,
                                 size_t device_index) {
  hgr_instance_t* instance = hgr__model_instance(model);
  hgr_allocator_t allocator = hgr__model_allocator(model);
  cl_context context;
  HGR_RETURN_IF_ERROR(hgr__instance_context(instance, device_index, &context));
  char* path = path_in(allocator, directory, program->file);
  if (!path) return HGR_STATUS(HGR_STATUS_RESOURCE_EXHAUSTED, "out of host memory");
  void* entry = NULL;
  size_t size = 0;
  cl_program built = NULL;
  hgr_status_t status = hgr__file_read(allocator, path, HGR__FILE_MAX_PROGRAM_BLOB_BYTES, &entry, &size);
  if (!status)
    status = hgr__program_from_entry(&instance->devices[device_index], context, entry, size, program->key,
                                     program->options, &built);
  if (!status)
    hgr__program_pool_keep(hgr__model_programs(model), instance, device_index, program->key, program->kernels,
                           program->options, built);
  if (built) clReleaseProgram(built); /* the pool holds it */
  hgr__free(allocator, entry);
  status = hgr_status_annotate(status, "%s", path);
  hgr__free(allocator, path);
  return status;
}

hgr_status_t hgr_model_create_bundle(hgr_instance_t* instance, const char* directory,
                                     const hgr_model_options_t* options, hgr_model_t** out_model) {
  if (!directory || !out_model) return HGR_STATUS(HGR_STATUS_INVALID_ARGUMENT, "hgr_model_create_bundle: NULL argument");
  *out_model = NULL;
  if (!instance) return HGR_STATUS(HGR_STATUS_INVALID_ARGUMENT, "hgr_model_create_bundle: NULL instance");
  hgr_allocator_t allocator = hgr__instance_allocator(instance);
  char* path = path_in(allocator, directory, MANIFEST);
  void* text = NULL;
  size_t length = 0;
  hgr_status_t status = path ? hgr__file_read(allocator, path, MAX_MANIFEST_BYTES, &text, &length)
                             : HGR_STATUS(HGR_STATUS_RESOURCE_EXHAUSTED, "out of host memory");
  hgr__free(allocator, path);
  hgr__bundle_manifest_t manifest = {.allocator = allocator};
  if (!status) status = hgr__bundle_manifest_parse(allocator, text, length, &manifest);
  hgr__free(allocator, text);
  /* every device first: a bundle for another machine is refused before anything loads */
  size_t device_count = hgr_instance_device_count(instance);
  const hgr_device_info_t** devices = status ? NULL : hgr__calloc(allocator, device_count + 1, sizeof(*devices));
  size_t* device_of = status ? NULL : hgr__calloc(allocator, manifest.count + 1, sizeof(*device_of));
  if (!status && (!devices || !device_of)) status = HGR_STATUS(HGR_STATUS_RESOURCE_EXHAUSTED, "out of host memory");
  for (size_t i = 0; !status && i < device_count; ++i) devices[i] = &instance->devices[i].info;
  for (size_t p = 0; !status && p < manifest.count; ++p)
    status = hgr__bundle_find_device(&manifest.programs[p], devices, device_count, &device_of[p]);
  char* model_path = status ? NULL : path_in(allocator, directory, manifest.model);
  if (!status && !model_path) status = HGR_STATUS(HGR_STATUS_RESOURCE_EXHAUSTED, "out of host memory");
  hgr_model_t* model = NULL;
  if (!status) status = hgr_model_create_onnx_file(instance, model_path, options, &model);
  hgr__free(allocator, model_path);
  bool one_device = manifest.count > 0;
  for (size_t p = 1; p < manifest.count; ++p) one_device = one_device && device_of[p] == device_of[0];
  if (!status && one_device) hgr__model_bind_default(model, devices[device_of[0]]->spec);
  for (size_t p = 0; !status && p < manifest.count; ++p)
    status = load_program(model, directory, &manifest.programs[p], device_of[p]);
  hgr__free(allocator, devices);
  hgr__free(allocator, device_of);
  hgr__bundle_manifest_free(&manifest);
  if (status) {
    hgr_model_release(model);
    return hgr_status_annotate(status, "bundle %s", directory);
  }
  *out_model = model;
  return HGR_OK;
}
