/* Host tensors of the ONNX loader: decoding TensorProtos (raw_data, typed fields,
 * external data), element access and conversion. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "alloc.h"
#include "byte_order.h"
#include "onnx_internal.h"
#include "text.h"

static const struct {
  int32_t type;
  const char* name;
  size_t bytes;
  hgr_dtype_t dtype;
} types[] = {
    {HGR__ONNX_FLOAT, "float", 4, {HGR_DTYPE_FLOAT, 32, 1}},
    {HGR__ONNX_UINT8, "uint8", 1, {HGR_DTYPE_UINT, 8, 1}},
    {HGR__ONNX_INT8, "int8", 1, {HGR_DTYPE_INT, 8, 1}},
    {HGR__ONNX_UINT16, "uint16", 2, {HGR_DTYPE_UINT, 16, 1}},
    {HGR__ONNX_INT16, "int16", 2, {HGR_DTYPE_INT, 16, 1}},
    {HGR__ONNX_INT32, "int32", 4, {HGR_DTYPE_INT, 32, 1}},
    {HGR__ONNX_INT64, "int64", 8, {HGR_DTYPE_INT, 64, 1}},
    {HGR__ONNX_STRING, "string", 0, {0, 0, 0}},
    {HGR__ONNX_BOOL, "bool", 1, {HGR_DTYPE_UINT, 1, 1}},
    {HGR__ONNX_FLOAT16, "float16", 2, {HGR_DTYPE_FLOAT, 16, 1}},
    {HGR__ONNX_DOUBLE, "double", 8, {HGR_DTYPE_FLOAT, 64, 1}},
    {HGR__ONNX_UINT32, "uint32", 4, {HGR_DTYPE_UINT, 32, 1}},
    {HGR__ONNX_UINT64, "uint64", 8, {HGR_DTYPE_UINT, 64, 1}},
    {HGR__ONNX_COMPLEX64, "complex64", 0, {0, 0, 0}},
    {HGR__ONNX_COMPLEX128, "complex128", 0, {0, 0, 0}},
    {HGR__ONNX_BFLOAT16, "bfloat16", 2, {HGR_DTYPE_BFLOAT, 16, 1}},
    {HGR__ONNX_FLOAT8E4M3FN, "float8e4m3fn", 0, {0, 0, 0}},
    {HGR__ONNX_FLOAT8E4M3FNUZ, "float8e4m3fnuz", 0, {0, 0, 0}},
    {HGR__ONNX_FLOAT8E5M2, "float8e5m2", 0, {0, 0, 0}},
    {HGR__ONNX_FLOAT8E5M2FNUZ, "float8e5m2fnuz", 0, {0, 0, 0}},
    {HGR__ONNX_UINT4, "uint4", 0, {0, 0, 0}},
    {HGR__ONNX_INT4, "int4", 0, {0, 0, 0}},
    {HGR__ONNX_FLOAT4E2M1, "float4e2m1", 0, {0, 0, 0}},
};
#define TYPE_COUNT (sizeof(types) / sizeof(types[0]))

static int type_index(int32_t onnx_type) {
  for (size_t i = 0; i < TYPE_COUNT; ++i)
    if (types[i].type == onnx_type) return (int)i;
  return -1;
}

const char* hgr__onnx_type_name(int32_t onnx_type) {
  int i = type_index(onnx_type);
  return i < 0 ? (onnx_type == HGR__ONNX_UNDEFINED ? "undefined" : "an unknown type") : types[i].name;
}

size_t hgr__onnx_type_bytes(int32_t onnx_type) {
  int i = type_index(onnx_type);
  return i < 0 ? 0 : types[i].bytes;
}

bool hgr__onnx_type_is_float(int32_t onnx_type) {
  return onnx_type == HGR__ONNX_FLOAT || onnx_type == HGR__ONNX_DOUBLE || onnx_type == HGR__ONNX_FLOAT16 ||
         onnx_type == HGR__ONNX_BFLOAT16;
}

hgr_status_t hgr__onnx_type_dtype(int32_t onnx_type, hgr_dtype_t* out_dtype) {
  int i = type_index(onnx_type);
  if (i < 0 || !types[i].bytes)
    return HGR_STATUS(HGR_STATUS_UNIMPLEMENTED, "ONNX element type %s (%d) is not supported; hgr holds the numeric "
                      "types of 8 bits and more but float8", hgr__onnx_type_name(onnx_type), (int)onnx_type);
  *out_dtype = types[i].dtype;
  return HGR_OK;
}

bool hgr__onnx_held_dtype(int32_t onnx_type, hgr_dtype_t* out_dtype) {
  switch (onnx_type) {
    case HGR__ONNX_INT64: *out_dtype = (hgr_dtype_t){HGR_DTYPE_INT, 32, 1}; return true;
    case HGR__ONNX_FLOAT: case HGR__ONNX_FLOAT16: case HGR__ONNX_BFLOAT16: case HGR__ONNX_INT32:
    case HGR__ONNX_UINT8: case HGR__ONNX_INT8: case HGR__ONNX_UINT16: case HGR__ONNX_INT16: case HGR__ONNX_BOOL:
      *out_dtype = types[type_index(onnx_type)].dtype;
      return true;
    default: return false;
  }
}

int32_t hgr__onnx_compute_type(int32_t onnx_type) {
  switch (onnx_type) {
    case HGR__ONNX_FLOAT16: case HGR__ONNX_BFLOAT16: return HGR__ONNX_FLOAT;
    case HGR__ONNX_UINT8: case HGR__ONNX_INT8: case HGR__ONNX_UINT16: case HGR__ONNX_INT16: case HGR__ONNX_INT64:
      return HGR__ONNX_INT32;
    default: return onnx_type;
  }
}

int32_t hgr__onnx_dtype_type(hgr_dtype_t dtype) {
  for (size_t i = 0; i < TYPE_COUNT; ++i)
    if (types[i].bytes && hgr_dtype_equal(types[i].dtype, dtype)) return types[i].type;
  /* hgr's bool may be spelled uint8 by a caller */
  return HGR__ONNX_UNDEFINED;
}

static _Thread_local hgr__onnx_limits_t* current_limits;

void hgr__onnx_limits_enter(hgr__onnx_limits_t* limits) { current_limits = limits; }

uint64_t hgr__onnx_limits_budget(const hgr__onnx_limits_t* limits) {
  if (limits->max_loader_bytes) return limits->max_loader_bytes;
  uint64_t scaled = 0, budget = 0;
  if (!hgr__mul_u64(limits->model_bytes, HGR_ONNX_LOADER_BYTES_PER_MODEL_BYTE, &scaled) ||
      !hgr__add_u64(scaled, HGR_ONNX_LOADER_SLACK_BYTES, &budget))
    budget = UINT64_MAX;
  return budget < HGR_ONNX_DEFAULT_MAX_LOADER_BYTES ? budget : HGR_ONNX_DEFAULT_MAX_LOADER_BYTES;
}

hgr_status_t hgr__onnx_limits_charge(uint64_t bytes, const char* where) {
  hgr__onnx_limits_t* limits = current_limits;
  if (!limits) return HGR_OK;
  uint64_t budget = hgr__onnx_limits_budget(limits), held = 0;
  if (!hgr__add_u64(limits->held, bytes, &held) || held > budget)
    return HGR_STATUS(HGR_STATUS_RESOURCE_EXHAUSTED, "%s: %llu more bytes would make the loader hold %llu, beyond its "
                      "budget of %llu bytes (%s; hgr_onnx_options_set_max_loader_bytes, hgr --loader-budget)", where,
                      (unsigned long long)bytes, (unsigned long long)limits->held + bytes, (unsigned long long)budget,
                      limits->max_loader_bytes ? "as set" : "by default from the model's size");
  limits->held = held;
  if (held > limits->peak) limits->peak = held;
  return HGR_OK;
}

void hgr__onnx_limits_add_model_bytes(uint64_t bytes) {
  if (current_limits && !hgr__add_u64(current_limits->model_bytes, bytes, &current_limits->model_bytes))
    current_limits->model_bytes = UINT64_MAX;
}

hgr_status_t hgr__onnx_tensor_new(hgr_allocator_t allocator, int32_t onnx_type, const int64_t* shape, int32_t ndim,
                                  const char* where, hgr__onnx_tensor_t** out_tensor) {
  *out_tensor = NULL;
  size_t element = hgr__onnx_type_bytes(onnx_type);
  if (!element)
    return HGR_STATUS(HGR_STATUS_UNIMPLEMENTED, "%s: element type %s (%d) is not supported; hgr holds the numeric "
                      "types of 8 bits and more but float8", where, hgr__onnx_type_name(onnx_type), (int)onnx_type);
  if (ndim < 0 || ndim > HGR_MAX_DIMS)
    return HGR_STATUS(HGR_STATUS_INVALID_ARGUMENT, "%s: %d dimensions; hgr holds at most %d", where, (int)ndim,
                      HGR_MAX_DIMS);
  for (int32_t d = 0; d < ndim; ++d)
    if (shape[d] < 0)
      return HGR_STATUS(HGR_STATUS_INVALID_ARGUMENT, "%s: dimension %d is %lld; extents must not be negative", where,
                        (int)d, (long long)shape[d]);
  uint64_t count = 0, bytes = 0;
  if (!hgr__shape_size(shape, ndim, element, &count, &bytes) || bytes > (uint64_t)SIZE_MAX ||
      bytes > (uint64_t)PTRDIFF_MAX)
    return HGR_STATUS(HGR_STATUS_INVALID_ARGUMENT, "%s: a shape of %d dimensions of %s whose element count or bytes "
                      "exceed 2^63 - 1", where, (int)ndim, hgr__onnx_type_name(onnx_type));
  uint64_t limit = current_limits && current_limits->max_tensor_bytes ? current_limits->max_tensor_bytes
                                                                       : HGR_ONNX_DEFAULT_MAX_TENSOR_BYTES;
  if (bytes > limit)
    return HGR_STATUS(HGR_STATUS_RESOURCE_EXHAUSTED, "%s: %llu bytes of %s exceed the loader's limit of %llu bytes per "
                      "tensor (hgr_onnx_options_set_max_tensor_bytes)", where, (unsigned long long)bytes,
                      hgr__onnx_type_name(onnx_type), (unsigned long long)limit);
  HGR_RETURN_IF_ERROR(hgr__onnx_limits_charge(bytes, where));
  hgr__onnx_tensor_t* t = hgr__calloc(allocator, 1, sizeof(*t));
  void* data = t ? hgr__calloc(allocator, 1, bytes ? (size_t)bytes : 1) : NULL;
  if (!data) {
    hgr__free(allocator, t);
    if (current_limits) current_limits->held -= bytes;
    return HGR_STATUS(HGR_STATUS_RESOURCE_EXHAUSTED, "%s: out of host memory for %llu bytes", where,
                      (unsigned long long)bytes);
  }
  t->charged = current_limits;
  t->allocator = allocator;
  t->onnx_type = onnx_type;
  t->ndim = ndim;
  for (int32_t d = 0; d < ndim; ++d) t->shape[d] = shape[d];
  t->count = count;
  t->data = data;
  *out_tensor = t;
  return HGR_OK;
}

void hgr__onnx_tensor_recharge(hgr__onnx_tensor_t* tensor, hgr__onnx_limits_t* limits) {
  uint64_t bytes = tensor->count * hgr__onnx_type_bytes(tensor->onnx_type);
  tensor->charged = limits; /* the load that made it still holds it until it ends */
  if (limits && !hgr__add_u64(limits->held, bytes, &limits->held)) limits->held = UINT64_MAX;
}

void hgr__onnx_tensor_free(hgr__onnx_tensor_t* tensor) {
  if (!tensor) return;
  if (tensor->charged) tensor->charged->held -= tensor->count * hgr__onnx_type_bytes(tensor->onnx_type);
  hgr__free(tensor->allocator, tensor->data);
  hgr__free(tensor->allocator, tensor);
}

hgr_status_t hgr__onnx_tensor_reshape(hgr__onnx_tensor_t* tensor, const int64_t* shape, int32_t ndim,
                                      const char* where) {
  uint64_t count = 0;
  if (ndim < 0 || ndim > HGR_MAX_DIMS || !hgr__shape_size(shape, ndim, hgr__onnx_type_bytes(tensor->onnx_type), &count,
                                                          NULL))
    return HGR_STATUS(HGR_STATUS_INVALID_ARGUMENT, "%s: a shape of %d dimensions whose element count or bytes exceed "
                      "2^63 - 1", where, (int)ndim);
  if (count != tensor->count)
    return HGR_STATUS(HGR_STATUS_INVALID_ARGUMENT, "%s: cannot reshape %llu elements into %llu", where,
                      (unsigned long long)tensor->count, (unsigned long long)count);
  tensor->ndim = ndim;
  for (int32_t d = 0; d < ndim; ++d) tensor->shape[d] = shape[d];
  return HGR_OK;
}

bool hgr__onnx_tensor_is_whole(const hgr__onnx_tensor_t* tensor) {
  uint64_t count = 0;
  return tensor->data && tensor->ndim >= 0 && tensor->ndim <= HGR_MAX_DIMS &&
         hgr__shape_size(tensor->shape, tensor->ndim, hgr__onnx_type_bytes(tensor->onnx_type), &count, NULL) &&
         count == tensor->count;
}

void hgr__onnx_tensor_strides(const hgr__onnx_tensor_t* tensor, uint64_t* out_strides) {
  uint64_t stride = 1; /* no overflow: the shape passed hgr__shape_size */
  for (int32_t d = tensor->ndim - 1; d >= 0; --d) {
    out_strides[d] = stride;
    stride *= (uint64_t)tensor->shape[d];
  }
}

hgr_status_t hgr__onnx_tensor_copy(hgr_allocator_t allocator, const hgr__onnx_tensor_t* tensor,
                                   hgr__onnx_tensor_t** out_copy) {
  HGR_RETURN_IF_ERROR(
      hgr__onnx_tensor_new(allocator, tensor->onnx_type, tensor->shape, tensor->ndim, "a constant", out_copy));
  memcpy((*out_copy)->data, tensor->data, (size_t)tensor->count * hgr__onnx_type_bytes(tensor->onnx_type));
  return HGR_OK;
}

/* ---- element access ------------------------------------------------------------------- */

static uint16_t float_to_half(float f) { /* round to nearest even */
  uint32_t x;
  memcpy(&x, &f, 4);
  uint32_t sign = (x >> 16) & 0x8000;
  int32_t exponent = (int32_t)((x >> 23) & 0xff) - 127 + 15;
  uint32_t mantissa = x & 0x7fffff;
  if (((x >> 23) & 0xff) == 0xff) return (uint16_t)(sign | 0x7c00 | (mantissa ? 0x200 : 0));
  if (exponent >= 0x1f) return (uint16_t)(sign | 0x7c00);
  if (exponent <= 0) {
    if (exponent < -10) return (uint16_t)sign;
    mantissa |= 0x800000;
    uint32_t shift = (uint32_t)(14 - exponent);
    uint32_t half = mantissa >> shift, rest = mantissa & ((1u << shift) - 1), mid = 1u << (shift - 1);
    if (rest > mid || (rest == mid && (half & 1))) ++half;
    return (uint16_t)(sign | half);
  }
  uint32_t half = sign | ((uint32_t)exponent << 10) | (mantissa >> 13);
  uint32_t rest = mantissa & 0x1fff;
  if (rest > 0x1000 || (rest == 0x1000 && (half & 1))) ++half;
  return (uint16_t)half;
}

double hgr__onnx_tensor_f64(const hgr__onnx_tensor_t* t, uint64_t i) {
  const void* p = (const char*)t->data + i * hgr__onnx_type_bytes(t->onnx_type);
  switch (t->onnx_type) {
    case HGR__ONNX_FLOAT: { float v; memcpy(&v, p, 4); return v; }
    case HGR__ONNX_DOUBLE: { double v; memcpy(&v, p, 8); return v; }
    case HGR__ONNX_FLOAT16: { uint16_t v; memcpy(&v, p, 2); return hgr_float16_to_float32(v); }
    case HGR__ONNX_BFLOAT16: { uint16_t v; memcpy(&v, p, 2); return hgr_bfloat16_to_float32(v); }
    case HGR__ONNX_UINT64: { uint64_t v; memcpy(&v, p, 8); return (double)v; }
    default: return (double)hgr__onnx_tensor_i64(t, i);
  }
}

int64_t hgr__onnx_tensor_i64(const hgr__onnx_tensor_t* t, uint64_t i) {
  const void* p = (const char*)t->data + i * hgr__onnx_type_bytes(t->onnx_type);
  switch (t->onnx_type) {
    case HGR__ONNX_UINT8: case HGR__ONNX_BOOL: return *(const uint8_t*)p;
    case HGR__ONNX_INT8: return *(const int8_t*)p;
    case HGR__ONNX_UINT16: { uint16_t v; memcpy(&v, p, 2); return v; }
    case HGR__ONNX_INT16: { int16_t v; memcpy(&v, p, 2); return v; }
    case HGR__ONNX_INT32: { int32_t v; memcpy(&v, p, 4); return v; }
    case HGR__ONNX_UINT32: { uint32_t v; memcpy(&v, p, 4); return v; }
    case HGR__ONNX_INT64: { int64_t v; memcpy(&v, p, 8); return v; }
    case HGR__ONNX_UINT64: { uint64_t v; memcpy(&v, p, 8); return v > (uint64_t)INT64_MAX ? INT64_MAX : (int64_t)v; }
    default: {
      double v = hgr__onnx_tensor_f64(t, i);
      if (isnan(v)) return 0;
      if (v >= 9223372036854775807.0) return INT64_MAX;
      if (v <= -9223372036854775808.0) return INT64_MIN;
      return (int64_t)v;
    }
  }
}

void hgr__onnx_tensor_set_f64(hgr__onnx_tensor_t* t, uint64_t i, double value) {
  void* p = (char*)t->data + i * hgr__onnx_type_bytes(t->onnx_type);
  switch (t->onnx_type) {
    case HGR__ONNX_FLOAT: { float v = (float)value; memcpy(p, &v, 4); return; }
    case HGR__ONNX_DOUBLE: memcpy(p, &value, 8); return;
    case HGR__ONNX_FLOAT16: { uint16_t v = float_to_half((float)value); memcpy(p, &v, 2); return; }
    case HGR__ONNX_BFLOAT16: {
      float f = (float)value;
      uint32_t bits;
      memcpy(&bits, &f, 4);
      uint16_t v = isnan(f) ? (uint16_t)((bits >> 16) | 0x40) : (uint16_t)((bits + 0x7fff + ((bits >> 16) & 1)) >> 16);
      memcpy(p, &v, 2);
      return;
    }
    case HGR__ONNX_BOOL: *(uint8_t*)p = value != 0; return;
    default: {
      int64_t v = 0;
      if (!isnan(value))
        v = value >= 9223372036854775807.0 ? INT64_MAX : value <= -9223372036854775808.0 ? INT64_MIN : (int64_t)value;
      hgr__onnx_tensor_set_i64(t, i, v);
      return;
    }
  }
}

void hgr__onnx_tensor_set_i64(hgr__onnx_tensor_t* t, uint64_t i, int64_t value) {
  void* p = (char*)t->data + i * hgr__onnx_type_bytes(t->onnx_type);
  switch (t->onnx_type) {
    case HGR__ONNX_BOOL: *(uint8_t*)p = value != 0; return;
    case HGR__ONNX_UINT8: *(uint8_t*)p = (uint8_t)value; return;
    case HGR__ONNX_INT8: *(int8_t*)p = (int8_t)value; return;
    case HGR__ONNX_UINT16: { uint16_t v = (uint16_t)value; memcpy(p, &v, 2); return; }
    case HGR__ONNX_INT16: { int16_t v = (int16_t)value; memcpy(p, &v, 2); return; }
    case HGR__ONNX_INT32: { int32_t v = (int32_t)value; memcpy(p, &v, 4); return; }
    case HGR__ONNX_UINT32: { uint32_t v = (uint32_t)value; memcpy(p, &v, 4); return; }
    case HGR__ONNX_INT64: memcpy(p, &value, 8); return;
    case HGR__ONNX_UINT64: { uint64_t v = (uint64_t)value; memcpy(p, &v, 8); return; }
    default: hgr__onnx_tensor_set_f64(t, i, (double)value); return;
  }
}

hgr_status_t hgr__onnx_tensor_cast(hgr_allocator_t allocator, const hgr__onnx_tensor_t* t, int32_t onnx_type,
                                   const char* where, hgr__onnx_tensor_t** out_tensor) {
  HGR_RETURN_IF_ERROR(hgr__onnx_tensor_new(allocator, onnx_type, t->shape, t->ndim, where, out_tensor));
  if (onnx_type == t->onnx_type) {
    memcpy((*out_tensor)->data, t->data, t->count * hgr__onnx_type_bytes(onnx_type));
    return HGR_OK;
  }
  bool from_float = hgr__onnx_type_is_float(t->onnx_type) || t->onnx_type == HGR__ONNX_UINT64;
  for (uint64_t i = 0; i < t->count; ++i) {
    if (from_float)
      hgr__onnx_tensor_set_f64(*out_tensor, i, hgr__onnx_tensor_f64(t, i));
    else
      hgr__onnx_tensor_set_i64(*out_tensor, i, hgr__onnx_tensor_i64(t, i));
  }
  return HGR_OK;
}

/* ---- decoding ---------------------------------------------------------------------- */

static const char* external_key(const Onnx__TensorProto* proto, const char* key) {
  for (size_t i = 0; i < proto->n_external_data; ++i) {
    const Onnx__StringStringEntryProto* e = proto->external_data[i];
    if (e && e->key && !strcmp(e->key, key)) return e->value ? e->value : "";
  }
  return NULL;
}

static hgr_status_t parse_u64(const char* text, const char* key, const char* where, uint64_t* out) {
  char* end = NULL;
  errno = 0;
  if (!text[0] || text[0] == '-') goto bad;
  unsigned long long v = strtoull(text, &end, 10);
  if (errno || *end) goto bad;
  *out = v;
  return HGR_OK;
bad:
  return HGR_STATUS(HGR_STATUS_INVALID_ARGUMENT, "%s: external data %s \"%s\" is not a non-negative integer", where,
                    key, text);
}

/* Checks a tensor's external data (location, offset, length, the file holding them)
 * and, where data is not NULL, reads its bytes into data: called once before the
 * tensor is allocated, so that a declared size the file cannot back costs nothing,
 * and once to read. */
static hgr_status_t read_external(hgr_allocator_t allocator, const Onnx__TensorProto* proto,
                                  const hgr__onnx_external_t* external, const char* where, void* data, uint64_t bytes) {
  const char* location = external_key(proto, "location");
  if (!location || !location[0])
    return HGR_STATUS(HGR_STATUS_INVALID_ARGUMENT, "%s: external data without a \"location\"", where);
  if (!external || !external->base_directory)
    return HGR_STATUS(HGR_STATUS_INVALID_ARGUMENT,
                      "%s: external data (\"%s\") in a model loaded from memory without a base directory", where,
                      location);
  /* Relative, and no component "..": the file must stay inside the model's folder. */
  if (location[0] == '/' || location[0] == '\\')
    return HGR_STATUS(HGR_STATUS_INVALID_ARGUMENT, "%s: external data location \"%s\" is an absolute path; it must "
                      "be relative to the model's folder", where, location);
  for (const char* c = location; *c;) {
    size_t n = strcspn(c, "/\\");
    if (n == 2 && c[0] == '.' && c[1] == '.')
      return HGR_STATUS(HGR_STATUS_INVALID_ARGUMENT, "%s: external data location \"%s\" leaves the model's folder "
                        "(\"..\")", where, location);
    c += n;
    if (*c) ++c;
  }
  uint64_t offset = 0, length = bytes;
  const char* text = external_key(proto, "offset");
  if (text) HGR_RETURN_IF_ERROR(parse_u64(text, "offset", where, &offset));
  text = external_key(proto, "length");
  if (text) HGR_RETURN_IF_ERROR(parse_u64(text, "length", where, &length));
  if (length != bytes)
    return HGR_STATUS(HGR_STATUS_INVALID_ARGUMENT, "%s: external data length %llu, but the shape needs %llu bytes",
                      where, (unsigned long long)length, (unsigned long long)bytes);
  char* path = hgr__format_in(allocator, "%s/%s", external->base_directory, location);
  if (!path) return HGR_STATUS(HGR_STATUS_RESOURCE_EXHAUSTED, "%s: out of host memory", where);
  hgr_status_t status = HGR_OK;
  /* Non-blocking, so that a FIFO there cannot hang the open: it is refused below as
   * not a regular file (regular files ignore the flag). */
  int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
  FILE* file = fd >= 0 ? fdopen(fd, "rb") : NULL;
  if (fd >= 0 && !file) close(fd);
  struct stat st;
  if (!file) {
    status = HGR_STATUS(errno == ENOENT ? HGR_STATUS_NOT_FOUND : HGR_STATUS_UNAVAILABLE,
                        "%s: cannot open external data file '%s': %s", where, path, strerror(errno));
  } else if (fstat(fileno(file), &st) || !S_ISREG(st.st_mode)) {
    status = HGR_STATUS(HGR_STATUS_INVALID_ARGUMENT, "%s: external data '%s' is not a regular file", where, path);
  } else if (offset > (uint64_t)st.st_size || bytes > (uint64_t)st.st_size - offset) {
    status = HGR_STATUS(HGR_STATUS_DATA_LOSS, "%s: external data '%s' has %lld bytes; %llu at offset %llu do not fit",
                        where, path, (long long)st.st_size, (unsigned long long)bytes, (unsigned long long)offset);
  } else if (data && (offset > (uint64_t)LLONG_MAX || fseeko(file, (off_t)offset, SEEK_SET) ||
                      fread(data, 1, (size_t)bytes, file) != (size_t)bytes)) {
    status = HGR_STATUS(HGR_STATUS_DATA_LOSS, "%s: reading %llu bytes at offset %llu of '%s' failed", where,
                        (unsigned long long)bytes, (unsigned long long)offset, path);
  }
  if (file) fclose(file);
  hgr__free(allocator, path);
  return status;
}

static hgr_status_t decode(hgr_allocator_t allocator, const Onnx__TensorProto* proto, Onnx__TensorProto* taken,
                           const hgr__onnx_external_t* external, const char* where, hgr__onnx_tensor_t** out_tensor) {
  *out_tensor = NULL;
  if (proto->n_dims > HGR_MAX_DIMS)
    return HGR_STATUS(HGR_STATUS_INVALID_ARGUMENT, "%s: %zu dimensions; hgr holds at most %d", where, proto->n_dims,
                      HGR_MAX_DIMS);
  if (proto->segment)
    return HGR_STATUS(HGR_STATUS_UNIMPLEMENTED, "%s: segmented tensors are not supported", where);
  int32_t type = proto->has_data_type ? proto->data_type : HGR__ONNX_UNDEFINED;
  /* The data must be there before anything is allocated for it: a tensor that
   * declares a huge shape without its bytes is refused without trying. */
  uint64_t declared = 0;
  for (size_t d = 0; d < proto->n_dims; ++d)
    if (proto->dims[d] < 0)
      return HGR_STATUS(HGR_STATUS_INVALID_ARGUMENT, "%s: dimension %zu is %lld; extents must not be negative", where,
                        d, (long long)proto->dims[d]);
  if (!hgr__shape_size(proto->dims, (int32_t)proto->n_dims, hgr__onnx_type_bytes(type), &declared, NULL))
    return HGR_STATUS(HGR_STATUS_INVALID_ARGUMENT, "%s: %zu dimensions whose element count or bytes exceed 2^63 - 1",
                      where, proto->n_dims);
  bool is_external = proto->has_data_location && proto->data_location == ONNX__TENSOR_PROTO__DATA_LOCATION__EXTERNAL;
  if (!is_external && hgr__onnx_type_bytes(type)) {
    size_t inline_values = proto->n_float_data + proto->n_double_data + proto->n_int64_data + proto->n_uint64_data +
                           proto->n_int32_data;
    uint64_t have = proto->has_raw_data ? (uint64_t)proto->raw_data.len : (uint64_t)inline_values;
    uint64_t need = proto->has_raw_data ? declared * hgr__onnx_type_bytes(type) : declared; /* fits: shape_size */
    if (have != need)
      return HGR_STATUS(HGR_STATUS_INVALID_ARGUMENT, "%s: %llu elements of %s declared, but the tensor holds %llu %s",
                        where, (unsigned long long)declared, hgr__onnx_type_name(type), (unsigned long long)have,
                        proto->has_raw_data ? "bytes of raw_data" : "values");
  }
  if (is_external && hgr__onnx_type_bytes(type)) { /* before allocating; the bytes fit: shape_size */
    HGR_RETURN_IF_ERROR(read_external(allocator, proto, external, where, NULL, declared * hgr__onnx_type_bytes(type)));
    hgr__onnx_limits_add_model_bytes(declared * hgr__onnx_type_bytes(type)); /* bytes on disk: the model's own */
  }
  hgr__onnx_tensor_t* t = NULL;
  HGR_RETURN_IF_ERROR(hgr__onnx_tensor_new(allocator, type, proto->dims, (int32_t)proto->n_dims, where, &t));
  size_t element = hgr__onnx_type_bytes(type);
  uint64_t bytes = t->count * element; /* fits: checked by tensor_new */
  hgr_status_t status = HGR_OK;
  /* Which typed field holds this type, and how many values it has. */
  size_t typed = 0;
  switch (type) {
    case HGR__ONNX_FLOAT: typed = proto->n_float_data; break;
    case HGR__ONNX_DOUBLE: typed = proto->n_double_data; break;
    case HGR__ONNX_INT64: typed = proto->n_int64_data; break;
    case HGR__ONNX_UINT32: case HGR__ONNX_UINT64: typed = proto->n_uint64_data; break;
    default: typed = proto->n_int32_data; break;
  }
  size_t other_fields = proto->n_float_data + proto->n_double_data + proto->n_int64_data + proto->n_uint64_data +
                        proto->n_int32_data + proto->n_string_data - typed;
  if (other_fields) {
    status = HGR_STATUS(HGR_STATUS_INVALID_ARGUMENT, "%s: a %s tensor with values in a field of another type", where,
                        hgr__onnx_type_name(type));
  } else if (proto->has_data_location && proto->data_location == ONNX__TENSOR_PROTO__DATA_LOCATION__EXTERNAL) {
    if (proto->has_raw_data || typed)
      status = HGR_STATUS(HGR_STATUS_INVALID_ARGUMENT, "%s: external data and inline data at once", where);
    else if ((status = read_external(allocator, proto, external, where, t->data, bytes)) == HGR_OK)
      hgr__le_copy(t->data, t->data, (size_t)t->count, element); /* fits: tensor_new */
  } else if (proto->has_raw_data) {
    if (typed) {
      status = HGR_STATUS(HGR_STATUS_INVALID_ARGUMENT, "%s: both raw_data and a typed field hold values", where);
    } else if ((uint64_t)proto->raw_data.len != bytes) {
      status = HGR_STATUS(HGR_STATUS_INVALID_ARGUMENT, "%s: raw_data has %zu bytes; %llu elements of %s need %llu",
                          where, proto->raw_data.len, (unsigned long long)t->count, hgr__onnx_type_name(type),
                          (unsigned long long)bytes);
    } else if (taken && bytes && (element == 1 || hgr__host_is_little_endian())) {
      hgr__free(allocator, t->data); /* fresh pages never touched: calloc's */
      t->data = taken->raw_data.data;
      taken->raw_data = (ProtobufCBinaryData){0, NULL};
    } else {
      if (bytes) memcpy(t->data, proto->raw_data.data, (size_t)bytes);
      hgr__le_copy(t->data, t->data, (size_t)t->count, element); /* fits: tensor_new */
    }
  } else if ((uint64_t)typed != t->count) {
    status = HGR_STATUS(HGR_STATUS_INVALID_ARGUMENT, "%s: %zu values for %llu elements of %s", where, typed,
                        (unsigned long long)t->count, hgr__onnx_type_name(type));
  } else {
    for (uint64_t i = 0; i < t->count; ++i) {
      switch (type) {
        case HGR__ONNX_FLOAT: memcpy((char*)t->data + i * 4, &proto->float_data[i], 4); break;
        case HGR__ONNX_DOUBLE: memcpy((char*)t->data + i * 8, &proto->double_data[i], 8); break;
        case HGR__ONNX_INT64: memcpy((char*)t->data + i * 8, &proto->int64_data[i], 8); break;
        case HGR__ONNX_UINT32: case HGR__ONNX_UINT64: {
          uint64_t v = proto->uint64_data[i];
          if (type == HGR__ONNX_UINT32) {
            uint32_t v32 = (uint32_t)v;
            memcpy((char*)t->data + i * 4, &v32, 4);
          } else {
            memcpy((char*)t->data + i * 8, &v, 8);
          }
          break;
        }
        case HGR__ONNX_FLOAT16: case HGR__ONNX_BFLOAT16: {
          uint16_t v = (uint16_t)proto->int32_data[i];
          memcpy((char*)t->data + i * 2, &v, 2);
          break;
        }
        default: hgr__onnx_tensor_set_i64(t, i, proto->int32_data[i]); break;
      }
    }
  }
  if (status) {
    hgr__onnx_tensor_free(t);
    return status;
  }
  *out_tensor = t;
  return HGR_OK;
}

hgr_status_t hgr__onnx_tensor_decode(hgr_allocator_t allocator, const Onnx__TensorProto* proto,
                                     const hgr__onnx_external_t* external, const char* where,
                                     hgr__onnx_tensor_t** out_tensor) {
  return decode(allocator, proto, NULL, external, where, out_tensor);
}

hgr_status_t hgr__onnx_tensor_decode_taking(hgr_allocator_t allocator, Onnx__TensorProto* proto,
                                            const hgr__onnx_external_t* external, const char* where,
                                            hgr__onnx_tensor_t** out_tensor) {
  return decode(allocator, proto, proto, external, where, out_tensor);
}
