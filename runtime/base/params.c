/* TVM params files (reference/tvm-graph-format.md, section 2) and the whole-file
 * helpers the loaders share.
 *
 * The format is little-endian with no padding, so fields are decoded byte by byte:
 * no host byte order is assumed and no unaligned pointer is dereferenced. Every
 * length read from the blob is checked against what remains before anything is
 * allocated for it. Tensor data is kept as stored (compact, little-endian
 * elements): it is bound for OpenCL devices, not interpreted by the host. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "alloc.h"
#include "byte_order.h"
#include "file.h"
#include "hgr/params.h"
#include "internal.h"

#define LIST_MAGIC 0xF7E58D4F05049CB7ull
#define TENSOR_MAGIC 0xDD5E40F096B4A13Full
#define DEVICE_TYPE_CPU 1

typedef struct param_t {
  char* name;
  hgr_dtype_t dtype;
  int32_t ndim;
  int64_t shape[HGR_MAX_DIMS];
  uint64_t bytes;
  void* data;
} param_t;

struct hgr_params_s {
  hgr_allocator_t allocator; /* of the list, the names and the data */
  param_t* items;
  size_t count;
  size_t capacity;
};

/* ---- the params object --------------------------------------------------------- */

hgr_status_t hgr__params_create_in(hgr_allocator_t allocator, hgr_params_t** out_params) {
  *out_params = hgr__calloc(allocator, 1, sizeof(**out_params));
  if (!*out_params) return HGR_STATUS(HGR_STATUS_RESOURCE_EXHAUSTED, "out of host memory");
  (*out_params)->allocator = allocator;
  return HGR_OK;
}

hgr_status_t hgr_params_create(hgr_params_t** out_params) {
  return hgr__params_create_in(hgr_allocator_system(), out_params);
}

hgr_allocator_t hgr__params_allocator(const hgr_params_t* params) {
  return params->allocator;
}

void hgr_params_release(hgr_params_t* params) {
  if (!params) return;
  hgr_allocator_t allocator = params->allocator;
  for (size_t i = 0; i < params->count; ++i) {
    hgr__free(allocator, params->items[i].name);
    hgr__free(allocator, params->items[i].data);
  }
  hgr__free(allocator, params->items);
  hgr__free(allocator, params);
}

/* Bytes of a tensor as the format counts them: elements x ceil(bits / 8). The
 * format ignores lanes, so vector dtypes are refused before this is asked. */
static bool tensor_bytes(hgr_dtype_t dtype, int32_t ndim, const int64_t* shape,
                         uint64_t* out_bytes) {
  uint64_t count = 1;
  for (int32_t d = 0; d < ndim; ++d)
    if (shape[d] < 0 || !hgr__mul_u64(count, (uint64_t)shape[d], &count)) return false;
  return hgr__mul_u64(count, ((uint64_t)dtype.bits + 7) / 8, out_bytes);
}

/* What hgr_params_add and the loader both require of a tensor's description. */
static hgr_status_t check_description(const char* name, hgr_dtype_t dtype, int32_t ndim) {
  HGR_RETURN_IF_ERROR(hgr_status_annotate(hgr_dtype_validate(dtype), "param '%.120s'", name));
  if (dtype.lanes != 1) {
    char text[24];
    return HGR_STATUS(HGR_STATUS_INVALID_ARGUMENT,
                      "param '%.120s': dtype %s has %u lanes, but the params format counts bytes "
                      "without lanes and would drop them",
                      name, hgr_dtype_format(dtype, text, sizeof(text)), (unsigned)dtype.lanes);
  }
  if (ndim < 0 || ndim > HGR_MAX_DIMS)
    return HGR_STATUS(HGR_STATUS_INVALID_ARGUMENT,
                      "param '%.120s': %d dimensions, but hgr supports 0 to %d", name, (int)ndim,
                      HGR_MAX_DIMS);
  return HGR_OK;
}

/* Appends item, taking ownership of its name and data only on success. */
static hgr_status_t append(hgr_params_t* params, const param_t* item) {
  if (params->count == params->capacity) {
    size_t capacity = params->capacity ? params->capacity * 2 : 8;
    param_t* grown = hgr__realloc_array(params->allocator, params->items, capacity, sizeof(*grown));
    if (!grown) return HGR_STATUS(HGR_STATUS_RESOURCE_EXHAUSTED, "out of host memory");
    params->items = grown;
    params->capacity = capacity;
  }
  params->items[params->count++] = *item;
  return HGR_OK;
}

hgr_status_t hgr_params_add(hgr_params_t* params, const char* name, hgr_dtype_t dtype, int32_t ndim,
                            const int64_t* shape, const void* data, size_t bytes) {
  if (!name) return HGR_STATUS(HGR_STATUS_INVALID_ARGUMENT, "param name is NULL");
  HGR_RETURN_IF_ERROR(check_description(name, dtype, ndim));
  if (ndim > 0 && !shape)
    return HGR_STATUS(HGR_STATUS_INVALID_ARGUMENT, "param '%.120s': shape is NULL", name);
  uint64_t expected = 0;
  if (!tensor_bytes(dtype, ndim, shape, &expected))
    return HGR_STATUS(HGR_STATUS_INVALID_ARGUMENT,
                      "param '%.120s': the shape has a negative dimension or its size overflows",
                      name);
  if (expected != bytes)
    return HGR_STATUS(HGR_STATUS_INVALID_ARGUMENT,
                      "param '%.120s': %zu bytes given, but its dtype and shape need %llu", name,
                      bytes, (unsigned long long)expected);
  if (bytes && !data)
    return HGR_STATUS(HGR_STATUS_INVALID_ARGUMENT, "param '%.120s': data is NULL", name);
  size_t existing;
  hgr_status_t status = hgr_params_find(params, name, &existing);
  if (!status)
    return HGR_STATUS(HGR_STATUS_INVALID_ARGUMENT, "param '%.120s' is already present (param %zu)",
                      name, existing);
  hgr_status_free(status);

  param_t item = {NULL, dtype, ndim, {0}, bytes, NULL};
  if (ndim > 0) memcpy(item.shape, shape, (size_t)ndim * sizeof(*shape));
  status = hgr__strdup(params->allocator, name, &item.name);
  if (status) goto cleanup;
  item.data = hgr__alloc(params->allocator, bytes ? bytes : 1);
  if (!item.data) {
    status =
        HGR_STATUS(HGR_STATUS_RESOURCE_EXHAUSTED, "out of host memory for param '%.120s'", name);
    goto cleanup;
  }
  if (bytes) memcpy(item.data, data, bytes);
  status = append(params, &item);
cleanup:
  if (status) {
    hgr__free(params->allocator, item.name);
    hgr__free(params->allocator, item.data);
  }
  return status;
}

size_t hgr_params_count(const hgr_params_t* params) { return params ? params->count : 0; }

hgr_status_t hgr_params_get(const hgr_params_t* params, size_t i, hgr_tensor_info_t* out_info,
                            const void** out_data) {
  if (i >= params->count)
    return HGR_STATUS(HGR_STATUS_OUT_OF_RANGE, "param %zu is out of range; there are %zu params", i,
                      params->count);
  const param_t* item = &params->items[i];
  if (out_info) {
    out_info->name = item->name;
    out_info->dtype = item->dtype;
    out_info->ndim = item->ndim;
    out_info->shape = item->shape;
    out_info->bytes = item->bytes;
  }
  if (out_data) *out_data = item->data;
  return HGR_OK;
}

hgr_status_t hgr_params_find(const hgr_params_t* params, const char* name, size_t* out_index) {
  for (size_t i = 0; i < params->count; ++i) {
    if (strcmp(params->items[i].name, name) == 0) {
      *out_index = i;
      return HGR_OK;
    }
  }
  return HGR_STATUS(HGR_STATUS_NOT_FOUND, "no param named '%.120s' (among %zu params)", name,
                    params->count);
}

hgr_status_t hgr__params_copy(hgr_allocator_t allocator, const hgr_params_t* params,
                              hgr_params_t** out_copy) {
  *out_copy = NULL;
  hgr_params_t* copy = NULL;
  HGR_RETURN_IF_ERROR(hgr__params_create_in(allocator, &copy));
  hgr_status_t status = HGR_OK;
  if (params->count) {
    copy->items = hgr__calloc(allocator, params->count, sizeof(*copy->items));
    if (!copy->items)
      status = HGR_STATUS(HGR_STATUS_RESOURCE_EXHAUSTED, "out of host memory");
    else
      copy->capacity = params->count;
  }
  for (size_t i = 0; i < params->count && !status; ++i) {
    const param_t* from = &params->items[i];
    param_t item = *from;
    item.name = hgr__copy_text(allocator, from->name);
    item.data = hgr__alloc(allocator, from->bytes ? (size_t)from->bytes : 1);
    if (!item.name || !item.data) {
      hgr__free(allocator, item.name);
      hgr__free(allocator, item.data);
      status = HGR_STATUS(HGR_STATUS_RESOURCE_EXHAUSTED,
                          "out of host memory for param '%.120s'", from->name);
      break;
    }
    if (from->bytes) memcpy(item.data, from->data, (size_t)from->bytes);
    copy->items[copy->count++] = item;
  }
  if (status)
    hgr_params_release(copy);
  else
    *out_copy = copy;
  return status;
}

hgr_status_t hgr__params_take(hgr_params_t* params, hgr_params_t* from) {
  if (!from->count) return HGR_OK;
  if (from->allocator.fn != params->allocator.fn || from->allocator.self != params->allocator.self)
    return HGR_STATUS(HGR_STATUS_INTERNAL, "params taken from a list of another allocator");
  if (params->count + from->count > params->capacity) {
    size_t capacity = params->count + from->count;
    param_t* grown = hgr__realloc_array(params->allocator, params->items, capacity, sizeof(*grown));
    if (!grown) return HGR_STATUS(HGR_STATUS_RESOURCE_EXHAUSTED, "out of host memory");
    params->items = grown;
    params->capacity = capacity;
  }
  memcpy(&params->items[params->count], from->items, from->count * sizeof(*from->items));
  params->count += from->count;
  from->count = 0;
  return HGR_OK;
}

void hgr__params_drop(hgr_params_t* params, const bool* drop) {
  size_t kept = 0;
  for (size_t i = 0; i < params->count; ++i) {
    if (drop[i]) {
      hgr__free(params->allocator, params->items[i].name);
      hgr__free(params->allocator, params->items[i].data);
    } else {
      params->items[kept++] = params->items[i];
    }
  }
  params->count = kept;
}

/* ---- reading ------------------------------------------------------------------- */

typedef struct reader_t {
  const uint8_t* data;
  size_t length;
  size_t offset;
  char where[160]; /* "header", "param 3 'conv1_weight'": what is being read */
} reader_t;

#define DATA_LOSS(...) HGR_STATUS(HGR_STATUS_DATA_LOSS, __VA_ARGS__)

static hgr_status_t take(reader_t* reader, uint64_t count, const char* what,
                         const uint8_t** out_bytes) {
  if (count > reader->length - reader->offset)
    return DATA_LOSS("params truncated at byte %zu: %s of %s needs %llu bytes, but %zu remain",
                     reader->offset, what, reader->where, (unsigned long long)count,
                     reader->length - reader->offset);
  *out_bytes = reader->data + reader->offset;
  reader->offset += (size_t)count;
  return HGR_OK;
}

/* Tensor data is little-endian on disk and in the host's order in memory: the unit
 * whose bytes a big-endian host reverses is one lane of the dtype (bool and sub-byte
 * or 8-bit types have none). */
static size_t element_order_unit(hgr_dtype_t dtype) {
  return dtype.bits > 8 && dtype.bits % 8 == 0 ? (size_t)dtype.bits / 8 : 1;
}

static hgr_status_t read_le(reader_t* reader, int size, const char* what, uint64_t* out_value) {
  const uint8_t* bytes = NULL;
  HGR_RETURN_IF_ERROR(take(reader, (uint64_t)size, what, &bytes));
  *out_value = hgr__le_load(bytes, size);
  return HGR_OK;
}

static hgr_status_t read_tensor(reader_t* reader, char* name, hgr_params_t* params) {
  hgr_status_t status = HGR_OK;
  param_t item = {name, {0, 0, 0}, 0, {0}, 0, NULL};
  uint64_t magic, ignored, device_type, ndim, code, bits, lanes, byte_size, expected = 0;
  size_t start = reader->offset;
  const uint8_t* bytes = NULL;
  if ((status = read_le(reader, 8, "tensor magic", &magic))) goto cleanup;
  if (magic != TENSOR_MAGIC) {
    status = DATA_LOSS("%s: tensor magic at byte %zu is 0x%016llX, expected 0x%016llX",
                       reader->where, start, (unsigned long long)magic, TENSOR_MAGIC);
    goto cleanup;
  }
  if ((status = read_le(reader, 8, "reserved word", &ignored))) goto cleanup;
  if ((status = read_le(reader, 4, "device type", &device_type))) goto cleanup;
  /* TVM writes every tensor as a CPU tensor and refuses anything else. */
  if (device_type != DEVICE_TYPE_CPU) {
    status = DATA_LOSS("%s: device type at byte %zu is %llu, expected 1 (CPU)", reader->where,
                       reader->offset - 4, (unsigned long long)device_type);
    goto cleanup;
  }
  if ((status = read_le(reader, 4, "device id", &ignored))) goto cleanup;
  if ((status = read_le(reader, 4, "ndim", &ndim))) goto cleanup;
  if ((status = read_le(reader, 1, "dtype code", &code))) goto cleanup;
  if ((status = read_le(reader, 1, "dtype bits", &bits))) goto cleanup;
  if ((status = read_le(reader, 2, "dtype lanes", &lanes))) goto cleanup;
  if (ndim > INT32_MAX) { /* a negative i32 */
    status = DATA_LOSS("%s: ndim at byte %zu is negative", reader->where, reader->offset - 8);
    goto cleanup;
  }
  item.ndim = (int32_t)ndim;
  item.dtype = (hgr_dtype_t){(uint8_t)code, (uint8_t)bits, (uint16_t)lanes};
  if ((status = hgr_status_annotate(check_description(name, item.dtype, item.ndim),
                                    "params byte %zu", reader->offset - 8)))
    goto cleanup;
  size_t shape_offset = reader->offset;
  for (int32_t d = 0; d < item.ndim; ++d) {
    uint64_t extent;
    if ((status = read_le(reader, 8, "shape", &extent))) goto cleanup;
    item.shape[d] = (int64_t)extent;
  }
  if (!tensor_bytes(item.dtype, item.ndim, item.shape, &expected)) {
    status = DATA_LOSS("%s: the shape at byte %zu has a negative dimension or its size overflows",
                       reader->where, shape_offset);
    goto cleanup;
  }
  if ((status = read_le(reader, 8, "data byte size", &byte_size))) goto cleanup;
  if (expected != byte_size) {
    status = DATA_LOSS("%s: data byte size at byte %zu is %llu, but the shape and dtype need %llu",
                       reader->where, reader->offset - 8, (unsigned long long)byte_size,
                       (unsigned long long)expected);
    goto cleanup;
  }
  if ((status = take(reader, byte_size, "data", &bytes))) goto cleanup;
  item.bytes = byte_size;
  item.data = hgr__alloc(params->allocator, byte_size ? (size_t)byte_size : 1);
  if (!item.data) {
    status = HGR_STATUS(HGR_STATUS_RESOURCE_EXHAUSTED, "out of host memory for %s", reader->where);
    goto cleanup;
  }
  size_t unit = element_order_unit(item.dtype);
  hgr__le_copy(item.data, bytes, (size_t)byte_size / unit, unit);
  status = append(params, &item);
cleanup:
  if (status) {
    hgr__free(params->allocator, item.name);
    hgr__free(params->allocator, item.data);
  }
  return status;
}

static int compare_names(const void* a, const void* b) {
  return strcmp(*(char* const*)a, *(char* const*)b);
}

/* Names are matched by name, so two params with one name would be ambiguous. */
static hgr_status_t check_unique_names(const hgr_params_t* params) {
  if (params->count < 2) return HGR_OK;
  char** names = hgr__calloc(params->allocator, params->count, sizeof(*names));
  if (!names) return HGR_STATUS(HGR_STATUS_RESOURCE_EXHAUSTED, "out of host memory");
  for (size_t i = 0; i < params->count; ++i) names[i] = params->items[i].name;
  qsort(names, params->count, sizeof(*names), compare_names);
  hgr_status_t status = HGR_OK;
  for (size_t i = 1; i < params->count && !status; ++i)
    if (strcmp(names[i - 1], names[i]) == 0)
      status = HGR_STATUS(HGR_STATUS_INVALID_ARGUMENT, "two params are named '%.120s'", names[i]);
  hgr__free(params->allocator, names);
  return status;
}

static hgr_status_t read_params(reader_t* reader, hgr_params_t* params, char** names,
                                uint64_t name_count) {
  uint64_t length = 0, tensor_count = 0;
  const uint8_t* bytes = NULL;
  for (uint64_t i = 0; i < name_count; ++i) {
    snprintf(reader->where, sizeof(reader->where), "param %llu", (unsigned long long)i);
    HGR_RETURN_IF_ERROR(read_le(reader, 8, "name length", &length));
    HGR_RETURN_IF_ERROR(take(reader, length, "name", &bytes));
    if (memchr(bytes, 0, (size_t)length))
      return DATA_LOSS("param %llu: its name at byte %zu contains a NUL byte",
                       (unsigned long long)i, reader->offset - (size_t)length);
    names[i] = hgr__alloc(params->allocator, (size_t)length + 1);
    if (!names[i]) return HGR_STATUS(HGR_STATUS_RESOURCE_EXHAUSTED, "out of host memory");
    memcpy(names[i], bytes, (size_t)length);
    names[i][length] = 0;
  }
  snprintf(reader->where, sizeof(reader->where), "the header");
  size_t count_offset = reader->offset;
  HGR_RETURN_IF_ERROR(read_le(reader, 8, "tensor count", &tensor_count));
  if (tensor_count != name_count)
    return DATA_LOSS("params blob has %llu names but a tensor count of %llu at byte %zu",
                     (unsigned long long)name_count, (unsigned long long)tensor_count,
                     count_offset);
  for (uint64_t i = 0; i < name_count; ++i) {
    snprintf(reader->where, sizeof(reader->where), "param %llu '%.120s'", (unsigned long long)i,
             names[i]);
    char* name = names[i];
    names[i] = NULL; /* read_tensor owns it now, success or not */
    HGR_RETURN_IF_ERROR(read_tensor(reader, name, params));
  }
  if (reader->offset != reader->length)
    return DATA_LOSS("params blob has %zu unexpected bytes after the last tensor (from byte %zu)",
                     reader->length - reader->offset, reader->offset);
  return check_unique_names(params);
}

hgr_status_t hgr__params_load_memory_in(hgr_allocator_t allocator, const void* data, size_t length,
                                        hgr_params_t** out_params) {
  *out_params = NULL;
  hgr_params_t* params = NULL;
  char** names = NULL;
  uint64_t magic, ignored, name_count = 0;
  reader_t reader = {data, data ? length : 0, 0, "the header"};
  hgr_status_t status = hgr__params_create_in(allocator, &params);
  if (status) goto cleanup;
  if ((status = read_le(&reader, 8, "list magic", &magic))) goto cleanup;
  if (magic != LIST_MAGIC) {
    status =
        DATA_LOSS("not a TVM params blob: the magic at byte 0 is 0x%016llX, expected 0x%016llX",
                  (unsigned long long)magic, LIST_MAGIC);
    goto cleanup;
  }
  if ((status = read_le(&reader, 8, "reserved word", &ignored))) goto cleanup;
  if ((status = read_le(&reader, 8, "name count", &name_count))) goto cleanup;
  /* Each name takes at least its 8-byte length: a count beyond that is corrupt and
   * must not size an allocation. */
  if (name_count > (reader.length - reader.offset) / 8) {
    status = DATA_LOSS(
        "params blob claims %llu names at byte 16, more than its %zu remaining "
        "bytes can hold",
        (unsigned long long)name_count, reader.length - reader.offset);
    name_count = 0;
    goto cleanup;
  }
  names = hgr__calloc(allocator, (size_t)name_count + 1, sizeof(*names));
  if (!names) {
    status = HGR_STATUS(HGR_STATUS_RESOURCE_EXHAUSTED, "out of host memory");
    name_count = 0;
    goto cleanup;
  }
  status = read_params(&reader, params, names, name_count);
cleanup:
  for (uint64_t i = 0; names && i < name_count; ++i) hgr__free(allocator, names[i]);
  hgr__free(allocator, names);
  if (status)
    hgr_params_release(params);
  else
    *out_params = params;
  return status;
}

hgr_status_t hgr_params_load_memory(const void* data, size_t length, hgr_params_t** out_params) {
  return hgr__params_load_memory_in(hgr_allocator_system(), data, length, out_params);
}

hgr_status_t hgr_params_load_file(const char* path, hgr_params_t** out_params) {
  *out_params = NULL;
  void* data = NULL;
  size_t length = 0;
  /* The system's, as the params: a public call with no allocator. */
  hgr_status_t status =
      hgr__file_read(hgr_allocator_system(), path, HGR__FILE_MAX_PARAMS_BYTES, &data, &length);
  if (!status)
    status = hgr_status_annotate(hgr_params_load_memory(data, length, out_params),
                                 "params file '%s'", path);
  hgr__free(hgr_allocator_system(), data);
  return status;
}

/* ---- writing ------------------------------------------------------------------- */

hgr_status_t hgr_params_save_memory(const hgr_params_t* params, void** out_data,
                                    size_t* out_length) {
  *out_data = NULL;
  *out_length = 0;
  /* list magic, reserved, name count, tensor count; per param its name and record. */
  uint64_t total = 32;
  bool ok = true;
  for (size_t i = 0; i < params->count && ok; ++i) {
    const param_t* item = &params->items[i];
    ok = hgr__add_u64(total, 8 + strlen(item->name), &total) &&
         hgr__add_u64(total, 40 + 8 * (uint64_t)item->ndim, &total) &&
         hgr__add_u64(total, item->bytes, &total);
  }
  if (!ok || total > SIZE_MAX)
    return HGR_STATUS(HGR_STATUS_RESOURCE_EXHAUSTED, "params do not fit in memory as one blob");
  /* The system's: the caller free()s it (hgr/params.h). */
  uint8_t* blob = hgr__alloc(hgr_allocator_system(), (size_t)total);
  if (!blob) return HGR_STATUS(HGR_STATUS_RESOURCE_EXHAUSTED, "out of host memory");
  uint8_t* p = blob;
  p = hgr__le_store(p, LIST_MAGIC, 8);
  p = hgr__le_store(p, 0, 8);
  p = hgr__le_store(p, params->count, 8);
  for (size_t i = 0; i < params->count; ++i) {
    size_t length = strlen(params->items[i].name);
    p = hgr__le_store(p, length, 8);
    memcpy(p, params->items[i].name, length);
    p += length;
  }
  p = hgr__le_store(p, params->count, 8);
  for (size_t i = 0; i < params->count; ++i) {
    const param_t* item = &params->items[i];
    p = hgr__le_store(p, TENSOR_MAGIC, 8);
    p = hgr__le_store(p, 0, 8);
    p = hgr__le_store(p, DEVICE_TYPE_CPU, 4);
    p = hgr__le_store(p, 0, 4); /* device id */
    p = hgr__le_store(p, (uint32_t)item->ndim, 4);
    p = hgr__le_store(p, item->dtype.code, 1);
    p = hgr__le_store(p, item->dtype.bits, 1);
    p = hgr__le_store(p, item->dtype.lanes, 2);
    for (int32_t d = 0; d < item->ndim; ++d) p = hgr__le_store(p, (uint64_t)item->shape[d], 8);
    p = hgr__le_store(p, item->bytes, 8);
    size_t unit = element_order_unit(item->dtype);
    hgr__le_copy(p, item->data, (size_t)item->bytes / unit, unit);
    p += item->bytes;
  }
  *out_data = blob;
  *out_length = (size_t)total;
  return HGR_OK;
}

hgr_status_t hgr_params_save_file(const hgr_params_t* params, const char* path) {
  void* blob = NULL;
  size_t length = 0;
  hgr_status_t status = hgr_params_save_memory(params, &blob, &length);
  /* The system's, as hgr_params_save_memory's blob: a public call with no allocator. */
  if (!status)
    status = hgr__file_write_atomic(hgr_allocator_system(), path, blob, length, NULL, 0);
  hgr__free(hgr_allocator_system(), blob);
  return hgr_status_annotate(status, "saving params to '%s'", path);
}
