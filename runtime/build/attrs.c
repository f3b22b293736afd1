/* Typed attr setters (hgr/builder.h): values become the strings TVM's graph JSON
 * holds, so that a built graph and a loaded one are the same to the ops' attr
 * parsers (runtime/ops/op_context.c) and to hgr_graph_write_json. */
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "alloc.h"
#include "attrs.h"
#include "text.h"
#include "internal.h"

struct hgr_attrs_s {
  hgr_allocator_t allocator; /* of the attrs, their entries and strings */
  hgr__attr_t* entries;
  uint32_t count;
  uint32_t capacity;
};

#define INVALID(...) HGR_STATUS(HGR_STATUS_INVALID_ARGUMENT, __VA_ARGS__)
#define OUT_OF_MEMORY() HGR_STATUS(HGR_STATUS_RESOURCE_EXHAUSTED, "out of host memory for attrs")

hgr_status_t hgr__attrs_create_in(hgr_allocator_t allocator, hgr_attrs_t** out_attrs) {
  *out_attrs = hgr__calloc(allocator, 1, sizeof(**out_attrs));
  if (!*out_attrs) return OUT_OF_MEMORY();
  (*out_attrs)->allocator = allocator;
  return HGR_OK;
}

hgr_status_t hgr_attrs_create(hgr_attrs_t** out_attrs) {
  return hgr__attrs_create_in(hgr_allocator_system(), out_attrs);
}

void hgr_attrs_release(hgr_attrs_t* attrs) {
  if (!attrs) return;
  hgr_allocator_t allocator = attrs->allocator;
  for (uint32_t i = 0; i < attrs->count; ++i) {
    hgr__free(allocator, attrs->entries[i].key);
    hgr__free(allocator, attrs->entries[i].value);
  }
  hgr__free(allocator, attrs->entries);
  hgr__free(allocator, attrs);
}

size_t hgr_attrs_count(const hgr_attrs_t* attrs) { return attrs ? attrs->count : 0; }

hgr_status_t hgr_attrs_get(const hgr_attrs_t* attrs, size_t i, const char** out_key, const char** out_value) {
  *out_key = *out_value = NULL;
  if (!attrs || i >= attrs->count)
    return HGR_STATUS(HGR_STATUS_OUT_OF_RANGE, "attr %zu is out of range; %u are set", i, attrs ? attrs->count : 0);
  *out_key = attrs->entries[i].key;
  *out_value = attrs->entries[i].value;
  return HGR_OK;
}

const hgr__attr_t* hgr__attrs_entries(const hgr_attrs_t* attrs, uint32_t* out_count) {
  *out_count = attrs ? attrs->count : 0;
  return attrs ? attrs->entries : NULL;
}

static hgr_status_t check_key(const hgr_attrs_t* attrs, const char* key) {
  if (!attrs) return INVALID("no attrs object to set '%.60s' in", key ? key : "(null)");
  if (!key || !*key) return INVALID("an attr key must be a non-empty string");
  static const char* const standard[] = {"func_name", "num_inputs", "num_outputs", "flatten_data"};
  for (size_t k = 0; k < 4; ++k)
    if (!strcmp(key, standard[k]))
      return INVALID("attr '%s' is set by the builder itself (from the op, its inputs and outputs), not by an attr",
                     key);
  return HGR_OK;
}

/* Takes value (from attrs' allocator) as key's value, replacing an earlier one; frees value on
 * failure. */
static hgr_status_t put(hgr_attrs_t* attrs, const char* key, char* value) {
  for (uint32_t i = 0; i < attrs->count; ++i)
    if (!strcmp(attrs->entries[i].key, key)) {
      hgr__free(attrs->allocator, attrs->entries[i].value);
      attrs->entries[i].value = value;
      return HGR_OK;
    }
  char* key_copy = NULL;
  hgr_status_t status = hgr__strdup(attrs->allocator, key, &key_copy);
  if (!status && attrs->count == attrs->capacity) {
    uint32_t capacity = attrs->capacity ? attrs->capacity * 2 : 8;
    hgr__attr_t* grown = capacity > attrs->capacity
                             ? hgr__realloc_array(attrs->allocator, attrs->entries, capacity, sizeof(*grown))
                             : NULL;
    if (grown) {
      attrs->entries = grown;
      attrs->capacity = capacity;
    } else {
      status = OUT_OF_MEMORY();
    }
  }
  if (status) {
    hgr__free(attrs->allocator, key_copy);
    hgr__free(attrs->allocator, value);
    return status;
  }
  attrs->entries[attrs->count++] = (hgr__attr_t){key_copy, value};
  return HGR_OK;
}

/* %.9g gives a float32 back exactly, and TVM's own printing of attrs is no more
 * precise than the float32 the kernels use. */
static void format_float(double value, char* buffer, size_t capacity) { snprintf(buffer, capacity, "%.9g", value); }

static hgr_status_t check_float(const char* key, double value) {
  if (isnan(value)) return INVALID("attr '%s': NaN is not an attr value", key);
  return HGR_OK;
}

static hgr_status_t put_text(hgr_attrs_t* attrs, const char* key, const char* text) {
  char* value = NULL;
  HGR_RETURN_IF_ERROR(hgr__strdup(attrs->allocator, text, &value));
  return put(attrs, key, value);
}

hgr_status_t hgr_attrs_set_int(hgr_attrs_t* attrs, const char* key, int64_t value) {
  HGR_RETURN_IF_ERROR(check_key(attrs, key));
  char text[32];
  snprintf(text, sizeof(text), "%" PRId64, value);
  return put_text(attrs, key, text);
}

hgr_status_t hgr_attrs_set_float(hgr_attrs_t* attrs, const char* key, double value) {
  HGR_RETURN_IF_ERROR(check_key(attrs, key));
  HGR_RETURN_IF_ERROR(check_float(key, value));
  char text[40];
  format_float(value, text, sizeof(text));
  return put_text(attrs, key, text);
}

hgr_status_t hgr_attrs_set_string(hgr_attrs_t* attrs, const char* key, const char* value) {
  HGR_RETURN_IF_ERROR(check_key(attrs, key));
  if (!value) return INVALID("attr '%s': the value is NULL", key);
  return put_text(attrs, key, value);
}

/* "[a, b, ...]" from count values of ints (when integers) or floats. */
static hgr_status_t set_list(hgr_attrs_t* attrs, const char* key, bool integers, const int64_t* ints,
                             const double* floats, size_t count) {
  HGR_RETURN_IF_ERROR(check_key(attrs, key));
  if (count && (integers ? !ints : !floats)) return INVALID("attr '%s': %zu values but no array", key, count);
  for (size_t i = 0; !integers && i < count; ++i) HGR_RETURN_IF_ERROR(check_float(key, floats[i]));
  hgr__text_t text = {0};
  text.allocator = attrs->allocator;
  hgr__text_appendf(&text, "[");
  for (size_t i = 0; i < count; ++i) {
    char number[40];
    if (integers)
      snprintf(number, sizeof(number), "%" PRId64, ints[i]);
    else
      format_float(floats[i], number, sizeof(number));
    hgr__text_appendf(&text, "%s%s", i ? ", " : "", number);
  }
  hgr__text_appendf(&text, "]");
  char* value = hgr__text_take(&text);
  if (!value) return OUT_OF_MEMORY();
  return put(attrs, key, value);
}

hgr_status_t hgr_attrs_set_ints(hgr_attrs_t* attrs, const char* key, const int64_t* values, size_t count) {
  return set_list(attrs, key, true, values, NULL, count);
}

hgr_status_t hgr_attrs_set_floats(hgr_attrs_t* attrs, const char* key, const double* values, size_t count) {
  return set_list(attrs, key, false, NULL, values, count);
}
