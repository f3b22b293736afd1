/* NumPy .npy files: "\x93NUMPY", major and minor version, header length (u16 LE for
 * 1.0, u32 LE for 2.0 and 3.0), then a Python dict literal with 'descr',
 * 'fortran_order' and 'shape', padded with spaces and a newline, then the data.
 * Data is read in either byte order ('<' or '>' in descr) and kept in the host's
 * order, like params data; it is written little-endian ('<') on any host. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "alloc.h"
#include "byte_order.h"
#include "file.h"
#include "hgr/npy.h"
#include "internal.h"

#define DATA_LOSS(...) HGR_STATUS(HGR_STATUS_DATA_LOSS, __VA_ARGS__)
#define INVALID(...) HGR_STATUS(HGR_STATUS_INVALID_ARGUMENT, __VA_ARGS__)

static const char npy_magic[6] = {'\x93', 'N', 'U', 'M', 'P', 'Y'};

/* ---- dtypes -------------------------------------------------------------------- */

/* '<f4', '>f4', '|u1', '|b1', ... -> dtype, bytes per element and whether the data
 * is big-endian. bool is uint1 with one byte per element, which is what
 * hgr_dtype_element_bytes gives it too. */
static hgr_status_t descr_to_dtype(const char* descr, hgr_dtype_t* out_dtype, uint64_t* out_size,
                                   bool* out_big_endian) {
  char order = descr[0], kind = descr[0] ? descr[1] : 0;
  int size = 0;
  if (kind && descr[2] >= '1' && descr[2] <= '8' && descr[3] == 0) size = descr[2] - '0';
  /* '|' (no byte order) only makes sense for single bytes; '<' and '>' are fine there. */
  bool order_ok = order == '<' || order == '>' || (order == '|' && size == 1);
  hgr_dtype_t dtype = {0, 0, 1};
  bool known = true;
  if (kind == 'b' && size == 1)
    dtype = (hgr_dtype_t){HGR_DTYPE_UINT, 1, 1};
  else if (kind == 'f' && (size == 2 || size == 4 || size == 8))
    dtype = (hgr_dtype_t){HGR_DTYPE_FLOAT, (uint8_t)(size * 8), 1};
  else if ((kind == 'i' || kind == 'u') && (size == 1 || size == 2 || size == 4 || size == 8))
    dtype = (hgr_dtype_t){kind == 'i' ? HGR_DTYPE_INT : HGR_DTYPE_UINT, (uint8_t)(size * 8), 1};
  else
    known = false;
  if (!known || !order_ok)
    return INVALID(
        ".npy descr '%s' is not supported (expected bool, int8-64, uint8-64 or "
        "float16/32/64)",
        descr);
  *out_dtype = dtype;
  *out_size = (uint64_t)size;
  *out_big_endian = order == '>';
  return HGR_OK;
}

static hgr_status_t dtype_to_descr(hgr_dtype_t dtype, char* out_descr) {
  char text[24];
  bool is_bool = dtype.code == HGR_DTYPE_UINT && dtype.bits == 1 && dtype.lanes == 1;
  bool whole_bytes = dtype.lanes == 1 &&
                     (dtype.bits == 8 || dtype.bits == 16 || dtype.bits == 32 || dtype.bits == 64);
  char kind = dtype.code == HGR_DTYPE_INT ? 'i' : dtype.code == HGR_DTYPE_UINT ? 'u' : 'f';
  if (is_bool) {
    strcpy(out_descr, "|b1");
  } else if (whole_bytes && (dtype.code == HGR_DTYPE_INT || dtype.code == HGR_DTYPE_UINT ||
                             (dtype.code == HGR_DTYPE_FLOAT && dtype.bits >= 16))) {
    snprintf(out_descr, 8, "%c%c%d", dtype.bits == 8 ? '|' : '<', kind, dtype.bits / 8);
  } else {
    return INVALID("dtype %s has no .npy equivalent", hgr_dtype_format(dtype, text, sizeof(text)));
  }
  return HGR_OK;
}

/* ---- the header dict ----------------------------------------------------------- */

typedef struct cursor_t {
  const char* p;
  const char* end;
} cursor_t;

static void skip_space(cursor_t* c) {
  while (c->p < c->end && (*c->p == ' ' || *c->p == '\t' || *c->p == '\n' || *c->p == '\r')) ++c->p;
}

static bool accept(cursor_t* c, char ch) {
  skip_space(c);
  if (c->p < c->end && *c->p == ch) {
    ++c->p;
    return true;
  }
  return false;
}

static bool accept_word(cursor_t* c, const char* word) {
  skip_space(c);
  size_t length = strlen(word);
  if ((size_t)(c->end - c->p) < length || memcmp(c->p, word, length) != 0) return false;
  c->p += length;
  return true;
}

/* A quoted Python string without escapes (numpy never writes any in a header). */
static bool parse_string(cursor_t* c, char* out, size_t capacity) {
  skip_space(c);
  if (c->p >= c->end || (*c->p != '\'' && *c->p != '"')) return false;
  char quote = *c->p++;
  size_t length = 0;
  while (c->p < c->end && *c->p != quote) {
    if (*c->p == '\\' || length + 1 >= capacity) return false;
    out[length++] = *c->p++;
  }
  if (c->p >= c->end) return false;
  ++c->p;
  out[length] = 0;
  return true;
}

/* A non-negative Python int; Python 2 wrote longs with an 'L' suffix. */
static bool parse_extent(cursor_t* c, int64_t* out_value) {
  skip_space(c);
  int64_t value = 0;
  const char* start = c->p;
  while (c->p < c->end && *c->p >= '0' && *c->p <= '9') {
    if (value > (INT64_MAX - 9) / 10) return false;
    value = value * 10 + (*c->p++ - '0');
  }
  if (c->p == start) return false;
  if (c->p < c->end && *c->p == 'L') ++c->p;
  *out_value = value;
  return true;
}

typedef struct header_t {
  char descr[16];
  bool fortran_order;
  int32_t ndim;
  int64_t shape[HGR_MAX_DIMS];
} header_t;

/* Returns NULL or what is wrong with the dict, for a DATA_LOSS message; shape
 * problems that are well-formed but unsupported come back through *out_status. */
static const char* parse_header_dict(cursor_t* c, header_t* header, hgr_status_t* out_status) {
  bool seen_descr = false, seen_fortran = false, seen_shape = false;
  if (!accept(c, '{')) return "it does not start with '{'";
  while (!accept(c, '}')) {
    char key[32];
    if (!parse_string(c, key, sizeof(key))) return "a key is not a short quoted string";
    if (!accept(c, ':')) return "a key is not followed by ':'";
    if (strcmp(key, "descr") == 0 && !seen_descr) {
      seen_descr = true;
      skip_space(c);
      if (c->p < c->end && *c->p == '[') {
        *out_status = INVALID("structured .npy dtypes are not supported");
        return NULL;
      }
      if (!parse_string(c, header->descr, sizeof(header->descr))) return "descr is not a string";
    } else if (strcmp(key, "fortran_order") == 0 && !seen_fortran) {
      seen_fortran = true;
      if (accept_word(c, "True"))
        header->fortran_order = true;
      else if (!accept_word(c, "False"))
        return "fortran_order is neither True nor False";
    } else if (strcmp(key, "shape") == 0 && !seen_shape) {
      seen_shape = true;
      if (!accept(c, '(')) return "shape is not a tuple";
      while (!accept(c, ')')) {
        if (header->ndim == HGR_MAX_DIMS) {
          *out_status = INVALID(".npy array has more than %d dimensions", HGR_MAX_DIMS);
          return NULL;
        }
        if (!parse_extent(c, &header->shape[header->ndim]))
          return "shape holds a value that is not a non-negative integer";
        header->ndim++;
        if (!accept(c, ',')) {
          if (!accept(c, ')')) return "shape values are not separated by ','";
          break;
        }
      }
    } else {
      return "it has an unknown or repeated key";
    }
    if (!accept(c, ',')) {
      if (!accept(c, '}')) return "items are not separated by ','";
      break;
    }
  }
  skip_space(c);
  if (c->p != c->end) return "it has content after the closing '}'";
  if (!seen_descr || !seen_fortran || !seen_shape)
    return "it lacks one of 'descr', 'fortran_order' and 'shape'";
  return NULL;
}

/* ---- reading ------------------------------------------------------------------- */

static hgr_status_t load(const uint8_t* data, size_t length, hgr_npy_array_t* out_array) {
  if (memcmp(data, npy_magic, length < 6 ? length : 6) != 0)
    return DATA_LOSS("not a .npy file: it does not start with \\x93NUMPY");
  if (length < 8)
    return DATA_LOSS(".npy file truncated at byte %zu, inside the magic and version", length);
  unsigned major = data[6], minor = data[7];
  if (major < 1 || major > 3)
    return INVALID(".npy format version %u.%u is not supported (1.0, 2.0 and 3.0 are)", major,
                   minor);
  size_t prefix = major == 1 ? 10 : 12;
  if (length < prefix)
    return DATA_LOSS(".npy file truncated at byte %zu, inside the header length", length);
  uint64_t header_length = major == 1 ? (uint64_t)data[8] | (uint64_t)data[9] << 8
                                      : (uint64_t)data[8] | (uint64_t)data[9] << 8 |
                                            (uint64_t)data[10] << 16 | (uint64_t)data[11] << 24;
  if (header_length > length - prefix)
    return DATA_LOSS(".npy file truncated at byte %zu: its header needs bytes %zu to %llu", length,
                     prefix, (unsigned long long)(prefix + header_length));

  header_t header;
  memset(&header, 0, sizeof(header));
  cursor_t cursor = {(const char*)data + prefix, (const char*)data + prefix + header_length};
  hgr_status_t status = HGR_OK;
  const char* problem = parse_header_dict(&cursor, &header, &status);
  if (status) return status;
  if (problem) {
    const char* text = (const char*)data + prefix;
    size_t shown = header_length < 120 ? (size_t)header_length : 120;
    while (shown > 0 && (text[shown - 1] == ' ' || text[shown - 1] == '\n')) --shown;
    return DATA_LOSS(".npy header is corrupt: %s (at header byte %zu of '%.*s')", problem,
                     (size_t)(cursor.p - text), (int)shown, text);
  }
  if (header.fortran_order)
    return INVALID(".npy arrays in Fortran order are not supported; save a C-order array");
  hgr_dtype_t dtype;
  uint64_t element_size = 0, count = 1, bytes = 0;
  bool big_endian = false;
  HGR_RETURN_IF_ERROR(descr_to_dtype(header.descr, &dtype, &element_size, &big_endian));
  for (int32_t d = 0; d < header.ndim; ++d)
    if (!hgr__mul_u64(count, (uint64_t)header.shape[d], &count))
      return DATA_LOSS(".npy shape's element count overflows");
  if (!hgr__mul_u64(count, element_size, &bytes)) return DATA_LOSS(".npy data size overflows");
  size_t offset = prefix + (size_t)header_length;
  if (bytes > length - offset)
    return DATA_LOSS(".npy file truncated at byte %zu: its data needs %llu bytes from byte %zu",
                     length, (unsigned long long)bytes, offset);
  if (bytes < length - offset)
    return DATA_LOSS(".npy file has %llu unexpected bytes after its data",
                     (unsigned long long)(length - offset - bytes));
  /* The system's: hgr_npy_array_t.data is malloc'd (hgr/npy.h). */
  void* copy = hgr__alloc(hgr_allocator_system(), bytes ? (size_t)bytes : 1);
  if (!copy) return HGR_STATUS(HGR_STATUS_RESOURCE_EXHAUSTED, "out of host memory for .npy data");
  /* bytes fits in size_t: it is at most length - offset. */
  hgr__byte_order_copy(copy, data + offset, (size_t)count, (size_t)element_size,
                       big_endian == hgr__host_is_little_endian());
  out_array->dtype = dtype;
  out_array->ndim = header.ndim;
  memcpy(out_array->shape, header.shape, sizeof(header.shape));
  out_array->data = copy;
  out_array->bytes = bytes;
  return HGR_OK;
}

hgr_status_t hgr_npy_load_memory(const void* data, size_t length, hgr_npy_array_t* out_array) {
  memset(out_array, 0, sizeof(*out_array));
  if (!data) length = 0;
  return load(data ? data : "", length, out_array);
}

hgr_status_t hgr_npy_load_file(const char* path, hgr_npy_array_t* out_array) {
  memset(out_array, 0, sizeof(*out_array));
  void* data = NULL;
  size_t length = 0;
  /* The system's: a public call with no allocator. */
  hgr_status_t status =
      hgr__file_read(hgr_allocator_system(), path, HGR__FILE_MAX_NPY_BYTES, &data, &length);
  if (!status)
    status =
        hgr_status_annotate(hgr_npy_load_memory(data, length, out_array), ".npy file '%s'", path);
  hgr__free(hgr_allocator_system(), data);
  return status;
}

void hgr_npy_array_free(hgr_npy_array_t* array) {
  if (!array) return;
  hgr__free(hgr_allocator_system(), array->data); /* malloc'd (hgr/npy.h) */
  memset(array, 0, sizeof(*array));
}

/* ---- writing ------------------------------------------------------------------- */

hgr_status_t hgr_npy_save_file(const char* path, hgr_dtype_t dtype, int32_t ndim,
                               const int64_t* shape, const void* data, uint64_t bytes) {
  char descr[8];
  HGR_RETURN_IF_ERROR(hgr_status_annotate(dtype_to_descr(dtype, descr), "saving '%s'", path));
  if (ndim < 0 || ndim > HGR_MAX_DIMS || (ndim > 0 && !shape))
    return INVALID("saving '%s': ndim %d is not 0 to %d with a shape", path, (int)ndim,
                   HGR_MAX_DIMS);
  uint64_t count = 1, expected = 0;
  for (int32_t d = 0; d < ndim; ++d)
    if (shape[d] < 0 || !hgr__mul_u64(count, (uint64_t)shape[d], &count))
      return INVALID("saving '%s': dimension %d is negative or the size overflows", path, (int)d);
  if (!hgr__mul_u64(count, hgr_dtype_element_bytes(dtype), &expected) || expected != bytes)
    return INVALID("saving '%s': %llu bytes given, but the dtype and shape need %llu", path,
                   (unsigned long long)bytes, (unsigned long long)expected);
  if (bytes && !data) return INVALID("saving '%s': data is NULL", path);
  if (bytes > SIZE_MAX)
    return INVALID("saving '%s': %llu bytes do not fit in memory", path, (unsigned long long)bytes);

  /* 10 bytes of prefix, then the dict padded with spaces to end in '\n' where the
   * data starts at a multiple of 64 bytes, as numpy itself writes. */
  char head[640]; /* the longest header (16 dims of 20 digits) rounds up to 448 */
  int used = snprintf(head + 10, sizeof(head) - 10,
                      "{'descr': '%s', 'fortran_order': False, 'shape': (", descr);
  for (int32_t d = 0; d < ndim; ++d)
    used += snprintf(head + 10 + used, sizeof(head) - 10 - (size_t)used, "%s%lld", d ? ", " : "",
                     (long long)shape[d]);
  used +=
      snprintf(head + 10 + used, sizeof(head) - 10 - (size_t)used, "%s), }", ndim == 1 ? "," : "");
  size_t total = ((size_t)10 + (size_t)used + 1 + 63) / 64 * 64;
  memset(head + 10 + used, ' ', total - 10 - (size_t)used - 1);
  head[total - 1] = '\n';
  memcpy(head, npy_magic, 6);
  head[6] = 1;
  head[7] = 0;
  head[8] = (char)((total - 10) & 0xff);
  head[9] = (char)((total - 10) >> 8);
  /* The data is in the host's order; the file says '<'. A big-endian host writes a
   * reordered copy. */
  uint64_t element_size = hgr_dtype_element_bytes(dtype);
  void* little_endian = NULL;
  if (!hgr__host_is_little_endian() && element_size > 1 && bytes) {
    /* The system's, as all of this public call with no allocator. */
    little_endian = hgr__alloc(hgr_allocator_system(), (size_t)bytes);
    if (!little_endian)
      return HGR_STATUS(HGR_STATUS_RESOURCE_EXHAUSTED, "saving '%s': out of host memory", path);
    hgr__le_copy(little_endian, data, (size_t)count, (size_t)element_size);
  }
  hgr_status_t status = hgr__file_write_atomic(hgr_allocator_system(), path, head, total,
                                               little_endian ? little_endian : data, (size_t)bytes);
  hgr__free(hgr_allocator_system(), little_endian);
  return hgr_status_annotate(status, "saving .npy");
}
