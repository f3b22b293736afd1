/* hgr_onnx_options_t (hgr/onnx.h): the input shapes and values, limits, fusion and
 * placement a load takes, and the copies the model object (runtime/model/) makes of
 * them for its specializations (onnx_model.h). */
#include <stdlib.h>
#include <string.h>

#include "alloc.h"
#include "onnx_internal.h"
#include "onnx_model.h"

/* Empty options whose memory, and their values', comes from allocator. */
static hgr_status_t options_create_in(hgr_allocator_t allocator, hgr_onnx_options_t** out_options) {
  *out_options = hgr__calloc(allocator, 1, sizeof(**out_options));
  if (!*out_options) return HGR_STATUS(HGR_STATUS_RESOURCE_EXHAUSTED, "out of host memory for ONNX options");
  (*out_options)->allocator = allocator;
  hgr_passes_options_init(&(*out_options)->passes);
  return HGR_OK;
}

hgr_status_t hgr_onnx_options_create(hgr_onnx_options_t** out_options) {
  if (!out_options) return HGR_STATUS(HGR_STATUS_INVALID_ARGUMENT, "out_options is NULL");
  return options_create_in(hgr_allocator_system(), out_options); /* no instance: the system's (hgr/allocator.h) */
}

void hgr_onnx_options_release(hgr_onnx_options_t* options) {
  if (!options) return;
  for (size_t i = 0; i < options->shape_count; ++i) {
    hgr__free(options->allocator, options->shapes[i].name);
    hgr__onnx_tensor_free(options->shapes[i].value);
  }
  hgr__free(options->allocator, options->shapes);
  hgr__free(options->allocator, options);
}

/* The slot of input name in options, added when absent. */
static hgr_status_t input_slot(hgr_onnx_options_t* options, const char* name, input_shape_t** out_slot) {
  for (size_t i = 0; i < options->shape_count; ++i)
    if (!strcmp(options->shapes[i].name, name)) {
      *out_slot = &options->shapes[i];
      return HGR_OK;
    }
  input_shape_t* grown =
      hgr__realloc_array(options->allocator, options->shapes, options->shape_count + 1, sizeof(*grown));
  if (!grown) return HGR_STATUS(HGR_STATUS_RESOURCE_EXHAUSTED, "out of host memory");
  options->shapes = grown;
  input_shape_t* slot = &grown[options->shape_count];
  memset(slot, 0, sizeof(*slot));
  HGR_RETURN_IF_ERROR(hgr__strdup(options->allocator, name, &slot->name));
  ++options->shape_count;
  *out_slot = slot;
  return HGR_OK;
}

hgr_status_t hgr_onnx_options_set_input_shape(hgr_onnx_options_t* options, const char* name, const int64_t* shape,
                                              int32_t ndim) {
  if (!options || !name || !name[0]) return HGR_STATUS(HGR_STATUS_INVALID_ARGUMENT, "input shape: empty name");
  if (ndim < 0 || ndim > HGR_MAX_DIMS || (ndim && !shape))
    return HGR_STATUS(HGR_STATUS_INVALID_ARGUMENT, "input shape of '%s': %d dimensions; at most %d", name, (int)ndim,
                      HGR_MAX_DIMS);
  for (int32_t d = 0; d < ndim; ++d)
    if (shape[d] < 0)
      return HGR_STATUS(HGR_STATUS_INVALID_ARGUMENT, "input shape of '%s': extent %lld in dimension %d", name,
                        (long long)shape[d], (int)d);
  input_shape_t* slot = NULL;
  HGR_RETURN_IF_ERROR(input_slot(options, name, &slot));
  slot->ndim = ndim;
  for (int32_t d = 0; d < ndim; ++d) slot->shape[d] = shape[d];
  return HGR_OK;
}

hgr_status_t hgr_onnx_options_set_input_value(hgr_onnx_options_t* options, const char* name, hgr_dtype_t dtype,
                                              const int64_t* shape, int32_t ndim, const void* data, size_t bytes) {
  HGR_RETURN_IF_ERROR(hgr_onnx_options_set_input_shape(options, name, shape, ndim));
  int32_t type = hgr__onnx_dtype_type(dtype);
  char text[32];
  if (type == HGR__ONNX_UNDEFINED)
    return HGR_STATUS(HGR_STATUS_INVALID_ARGUMENT, "input value of '%s': dtype %s has no ONNX element type", name,
                      hgr_dtype_format(dtype, text, sizeof(text)));
  /* The bytes against the shape before the value is allocated: a shape of 2^40
   * elements given with a few bytes must not allocate first. */
  uint64_t count = 0, want = 0;
  if (!hgr__shape_size(shape, ndim, hgr__onnx_type_bytes(type), &count, &want))
    return HGR_STATUS(HGR_STATUS_INVALID_ARGUMENT, "input value of '%s': a shape whose element count or bytes exceed "
                      "2^63 - 1", name);
  if (want != (uint64_t)bytes || (bytes && !data))
    return HGR_STATUS(HGR_STATUS_INVALID_ARGUMENT, "input value of '%s': %zu bytes for %llu elements of %s", name,
                      bytes, (unsigned long long)count, hgr__onnx_type_name(type));
  hgr__onnx_tensor_t* value = NULL;
  HGR_RETURN_IF_ERROR(hgr__onnx_tensor_new(options->allocator, type, shape, ndim, "an input value", &value));
  if (bytes) memcpy(value->data, data, bytes);
  input_shape_t* slot = NULL;
  hgr_status_t status = input_slot(options, name, &slot);
  if (status) {
    hgr__onnx_tensor_free(value);
    return status;
  }
  hgr__onnx_tensor_free(slot->value);
  slot->value = value;
  return HGR_OK;
}

hgr_status_t hgr__onnx_options_clone(hgr_allocator_t allocator, const hgr_onnx_options_t* options,
                                     hgr_onnx_options_t** out_copy) {
  HGR_RETURN_IF_ERROR(options_create_in(allocator, out_copy));
  hgr_onnx_options_t* copy = *out_copy;
  if (!options) return HGR_OK;
  hgr_status_t status = HGR_OK;
  copy->shapes = hgr__calloc(allocator, options->shape_count + 1, sizeof(*copy->shapes));
  if (!copy->shapes) status = HGR_STATUS(HGR_STATUS_RESOURCE_EXHAUSTED, "out of host memory");
  for (size_t i = 0; !status && i < options->shape_count; ++i) {
    copy->shapes[i] = options->shapes[i];
    copy->shapes[i].name = NULL;
    copy->shapes[i].value = NULL;
    ++copy->shape_count;
    status = hgr__strdup(allocator, options->shapes[i].name, &copy->shapes[i].name);
    if (!status && options->shapes[i].value)
      status = hgr__onnx_tensor_copy(allocator, options->shapes[i].value, &copy->shapes[i].value);
  }
  copy->instance = options->instance;
  copy->place = options->place;
  copy->max_tensor_bytes = options->max_tensor_bytes;
  copy->max_loader_bytes = options->max_loader_bytes;
  copy->passes = options->passes;
  if (status) {
    hgr_onnx_options_release(copy);
    *out_copy = NULL;
  }
  return status;
}

bool hgr__onnx_options_fixes(const hgr_onnx_options_t* options, const char* name) {
  for (size_t i = 0; options && i < options->shape_count; ++i)
    if (options->shapes[i].value && !strcmp(options->shapes[i].name, name)) return true;
  return false;
}

void hgr_onnx_options_set_max_tensor_bytes(hgr_onnx_options_t* options, uint64_t bytes) {
  if (options) options->max_tensor_bytes = bytes;
}

void hgr_onnx_options_set_max_loader_bytes(hgr_onnx_options_t* options, uint64_t bytes) {
  if (options) options->max_loader_bytes = bytes;
}

void hgr_onnx_options_set_fuse_elementwise(hgr_onnx_options_t* options, int enabled) {
  if (options) options->passes.elementwise = enabled != 0;
}

void hgr_onnx_options_set_passes(hgr_onnx_options_t* options, const hgr_passes_options_t* passes) {
  if (!options) return;
  if (passes) options->passes = *passes;
  else hgr_passes_options_init(&options->passes);
}

void hgr_onnx_options_set_place(hgr_onnx_options_t* options, hgr_instance_t* instance,
                                const hgr_place_options_t* place) {
  if (!options) return;
  options->instance = instance;
  options->place = place;
}

int hgr_onnx_is_model_path(const char* path) {
  size_t n = path ? strlen(path) : 0;
  return n >= 5 && !strcasecmp(path + n - 5, ".onnx");
}
