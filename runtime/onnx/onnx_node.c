/* What importers and folders use: a node's inputs, attrs and outputs, and adding
 * builder ops on its behalf (onnx_internal.h). */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "alloc.h"
#include "onnx_internal.h"
#include "ops.h"
#include "text.h"

hgr_status_t hgr__onnx_error(const hgr__onnx_node_t* node, hgr_status_code_t code, const char* file, int line,
                             const char* format, ...) {
  va_list args;
  va_start(args, format);
  char* message = hgr__vformat(format, args);
  va_end(args);
  hgr_status_t status = hgr_status_make(code, file, line, "%s: %s", node->label, message ? message : "(out of memory)");
  hgr__free(hgr_allocator_system(), message); /* hgr__vformat's: a status message, as statuses are */
  return status;
}

hgr__onnx_value_t* hgr__onnx_input(const hgr__onnx_node_t* node, uint32_t i) {
  return i < node->input_count ? node->inputs[i] : NULL;
}

hgr_status_t hgr__onnx_required(const hgr__onnx_node_t* node, uint32_t i, hgr__onnx_value_t** out_value) {
  *out_value = hgr__onnx_input(node, i);
  if (!*out_value) return HGR__ONNX_INVALID(node, "input %u is required but the node omits it", i);
  return HGR_OK;
}

bool hgr__onnx_all_constant(const hgr__onnx_node_t* node) {
  for (uint32_t i = 0; i < node->input_count; ++i)
    if (node->inputs[i] && !node->inputs[i]->constant) return false;
  return true;
}

/* ---- attrs -------------------------------------------------------------------------- */

const Onnx__AttributeProto* hgr__onnx_proto_attr(const Onnx__NodeProto* proto, const char* name) {
  for (size_t i = 0; i < proto->n_attribute; ++i) {
    const Onnx__AttributeProto* a = proto->attribute[i];
    if (a && a->name && !strcmp(a->name, name)) return a;
  }
  return NULL;
}

const Onnx__AttributeProto* hgr__onnx_attr(const hgr__onnx_node_t* node, const char* name) {
  return hgr__onnx_proto_attr(node->proto, name);
}

static hgr_status_t attr_type(const hgr__onnx_node_t* node, const Onnx__AttributeProto* a,
                              Onnx__AttributeProto__AttributeType want, const char* want_name) {
  if (a->has_type && a->type != want)
    return HGR__ONNX_INVALID(node, "attr '%s' is of attribute type %d; the op takes %s", a->name, (int)a->type,
                             want_name);
  return HGR_OK;
}

hgr_status_t hgr__onnx_attr_int(const hgr__onnx_node_t* node, const char* name, int64_t fallback, int64_t* out) {
  const Onnx__AttributeProto* a = hgr__onnx_attr(node, name);
  *out = fallback;
  if (!a) return HGR_OK;
  HGR_RETURN_IF_ERROR(attr_type(node, a, ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__INT, "an int"));
  *out = a->i;
  return HGR_OK;
}

hgr_status_t hgr__onnx_attr_float(const hgr__onnx_node_t* node, const char* name, double fallback, double* out) {
  const Onnx__AttributeProto* a = hgr__onnx_attr(node, name);
  *out = fallback;
  if (!a) return HGR_OK;
  HGR_RETURN_IF_ERROR(attr_type(node, a, ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__FLOAT, "a float"));
  *out = a->f;
  return HGR_OK;
}

hgr_status_t hgr__onnx_attr_string(const hgr__onnx_node_t* node, const char* name, const char* fallback, char* buffer,
                                   size_t capacity) {
  const Onnx__AttributeProto* a = hgr__onnx_attr(node, name);
  const char* text = fallback;
  size_t length = strlen(fallback);
  if (a) {
    HGR_RETURN_IF_ERROR(attr_type(node, a, ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__STRING, "a string"));
    text = (const char*)a->s.data;
    length = a->s.len;
    /* An empty string may come with no bytes at all (data NULL): memchr must not see it. */
    if (length && memchr(text, 0, length)) return HGR__ONNX_INVALID(node, "attr '%s' holds a NUL byte", name);
  }
  if (length >= capacity)
    return HGR__ONNX_UNSUPPORTED(node, "attr '%s' is %zu bytes long; hgr reads at most %zu", name, length,
                                 capacity - 1);
  if (length) memcpy(buffer, text, length);
  buffer[length] = 0;
  return HGR_OK;
}

hgr_status_t hgr__onnx_attr_ints(const hgr__onnx_node_t* node, const char* name, int64_t* out, uint32_t capacity,
                                 uint32_t* out_count, bool* out_present) {
  const Onnx__AttributeProto* a = hgr__onnx_attr(node, name);
  *out_count = 0;
  if (out_present) *out_present = a != NULL;
  if (!a) return HGR_OK;
  HGR_RETURN_IF_ERROR(attr_type(node, a, ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__INTS, "a list of ints"));
  if (a->n_ints > capacity)
    return HGR__ONNX_UNSUPPORTED(node, "attr '%s' has %zu values; hgr takes at most %u", name, a->n_ints, capacity);
  for (size_t i = 0; i < a->n_ints; ++i) out[i] = a->ints[i];
  *out_count = (uint32_t)a->n_ints;
  return HGR_OK;
}

hgr_status_t hgr__onnx_attr_floats(const hgr__onnx_node_t* node, const char* name, double* out, uint32_t capacity,
                                   uint32_t* out_count, bool* out_present) {
  const Onnx__AttributeProto* a = hgr__onnx_attr(node, name);
  *out_count = 0;
  if (out_present) *out_present = a != NULL;
  if (!a) return HGR_OK;
  HGR_RETURN_IF_ERROR(attr_type(node, a, ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__FLOATS, "a list of floats"));
  if (a->n_floats > capacity)
    return HGR__ONNX_UNSUPPORTED(node, "attr '%s' has %zu values; hgr takes at most %u", name, a->n_floats,
                                 capacity);
  for (size_t i = 0; i < a->n_floats; ++i) out[i] = a->floats[i];
  *out_count = (uint32_t)a->n_floats;
  return HGR_OK;
}

bool hgr__onnx_listed(const char* list, const char* name) {
  size_t length = strlen(name);
  for (const char* k = list; *k && length;) {
    size_t n = strcspn(k, " ");
    if (n == length && !strncmp(k, name, n)) return true;
    k += n;
    while (*k == ' ') ++k;
  }
  return false;
}

hgr_status_t hgr__onnx_check_attrs(const hgr__onnx_node_t* node, const char* known) {
  for (size_t i = 0; i < node->proto->n_attribute; ++i) {
    const Onnx__AttributeProto* a = node->proto->attribute[i];
    const char* name = a && a->name ? a->name : "";
    if (!hgr__onnx_listed(known, name))
      return HGR__ONNX_UNSUPPORTED(node, "attr '%s' is not supported%s%s", name, known[0] ? "; hgr reads: " : "",
                                   known);
  }
  return HGR_OK;
}

/* ---- builder values ----------------------------------------------------------------- */

/* The dtype v is held in at run time (hgr__onnx_held_dtype), or UNIMPLEMENTED naming v. */
static hgr_status_t held_dtype(const hgr__onnx_node_t* node, const hgr__onnx_value_t* v, hgr_dtype_t* out) {
  if (hgr__onnx_held_dtype(v->onnx_type, out)) return HGR_OK;
  return HGR__ONNX_UNSUPPORTED(node, "value '%s' is %s; at run time hgr holds float, float16, bfloat16, int8, uint8, "
                               "int16, uint16, int32, int64 (as int32) and bool", v->name,
                               hgr__onnx_type_name(v->onnx_type));
}

static hgr_status_t builder_status(const hgr__onnx_node_t* node, hgr_status_t status) {
  return hgr_status_annotate(status, "%s", node->label);
}

/* A builder constant of tensor in the dtype it is held in (held) or computed in. */
static hgr_status_t add_constant_as(hgr__onnx_node_t* node, const char* name, const hgr__onnx_tensor_t* tensor,
                                    bool held, hgr_value_t* out_value) {
  hgr__onnx_value_t v = {.name = name ? name : "(a constant)", .onnx_type = tensor->onnx_type};
  hgr_dtype_t dtype;
  HGR_RETURN_IF_ERROR(held_dtype(node, &v, &dtype));
  const hgr__onnx_tensor_t* c = tensor;
  hgr__onnx_tensor_t* converted = NULL;
  if (c->onnx_type == HGR__ONNX_INT64) {
    for (uint64_t i = 0; i < c->count; ++i) {
      int64_t x = hgr__onnx_tensor_i64(c, i);
      if (x < INT32_MIN || x > INT32_MAX)
        return HGR__ONNX_UNSUPPORTED(node, "constant '%s' holds %lld at element %llu; hgr computes int64 as int32",
                                     name ? name : "", (long long)x, (unsigned long long)i);
    }
  }
  int32_t as_type = held ? hgr__onnx_dtype_type(dtype) : hgr__onnx_compute_type(c->onnx_type);
  if (as_type != c->onnx_type) {
    HGR_RETURN_IF_ERROR(hgr__onnx_tensor_cast(node->loader->allocator, c, as_type, node->label, &converted));
    hgr__onnx_held_dtype(as_type, &dtype); /* float or int32 */
    c = converted;
  }
  const char* base = name ? name : (node->proto->n_output && node->proto->output[0] ? node->proto->output[0] : "c");
  char* unique = name ? NULL
                      : hgr__format_in(node->loader->allocator, "%s#const%llu", base,
                                       (unsigned long long)++node->loader->name_counter);
  /* the builder keeps its own copy until the load returns */
  hgr_status_t status = hgr__onnx_limits_charge(c->count * hgr__onnx_type_bytes(c->onnx_type), node->label);
  if (!status)
    status = !name && !unique ? HGR_STATUS(HGR_STATUS_RESOURCE_EXHAUSTED, "out of host memory")
                            : hgr_builder_add_constant(node->loader->builder, name ? name : unique, dtype, c->shape,
                                                       c->ndim, c->data,
                                                       (size_t)(c->count * hgr__onnx_type_bytes(c->onnx_type)),
                                                       out_value);
  hgr__free(node->loader->allocator, unique);
  hgr__onnx_tensor_free(converted);
  return builder_status(node, status);
}

hgr_status_t hgr__onnx_add_constant(hgr__onnx_node_t* node, const char* name, const hgr__onnx_tensor_t* tensor,
                                    hgr_value_t* out_value) {
  return add_constant_as(node, name, tensor, false, out_value);
}

hgr_status_t hgr__onnx_add_cast(hgr__onnx_node_t* node, hgr_value_t value, hgr_dtype_t dtype, hgr_value_t* out_value) {
  char name[32];
  hgr_attrs_t* attrs = NULL;
  HGR_RETURN_IF_ERROR(hgr_attrs_create(&attrs));
  hgr_status_t status = hgr_attrs_set_string(attrs, "dtype", hgr_dtype_format(dtype, name, sizeof(name)));
  if (!status) status = hgr__onnx_add_op(node, "cast", &value, 1, attrs, 1, out_value);
  hgr_attrs_release(attrs);
  return status;
}

hgr_status_t hgr__onnx_add_float_constant(hgr__onnx_node_t* node, const char* base, const hgr__onnx_tensor_t* t,
                                          hgr_value_t* out_value) {
  char* name = base ? hgr__format_in(node->loader->allocator, "%s#%llu", base,
                                     (unsigned long long)++node->loader->name_counter)
                    : NULL;
  if (base && !name) return HGR_STATUS(HGR_STATUS_RESOURCE_EXHAUSTED, "%s: out of host memory", node->label);
  hgr__onnx_tensor_t* f = NULL;
  hgr_status_t status = t->onnx_type == HGR__ONNX_FLOAT
                            ? HGR_OK
                            : hgr__onnx_tensor_cast(node->loader->allocator, t, HGR__ONNX_FLOAT, node->label, &f);
  if (!status) status = hgr__onnx_add_constant(node, name, f ? f : t, out_value);
  hgr__onnx_tensor_free(f);
  hgr__free(node->loader->allocator, name);
  return status;
}

hgr_status_t hgr__onnx_add_scalar(hgr__onnx_node_t* node, double value, hgr_value_t* out_value) {
  hgr__onnx_tensor_t* t = NULL;
  HGR_RETURN_IF_ERROR(hgr__onnx_tensor_new(node->loader->allocator, HGR__ONNX_FLOAT, NULL, 0, node->label, &t));
  hgr__onnx_tensor_set_f64(t, 0, value);
  hgr_status_t status = hgr__onnx_add_constant(node, NULL, t, out_value);
  hgr__onnx_tensor_free(t);
  return status;
}

hgr_status_t hgr__onnx_runtime(hgr__onnx_node_t* node, hgr__onnx_value_t* v, hgr_value_t* out_value) {
  if (!v->has_value) {
    if (!v->constant)
      return HGR_STATUS(HGR_STATUS_INTERNAL, "%s: value '%s' has no builder value", node->label, v->name);
    /* a subgraph's names repeat (a body per iteration, shadowing): those take unique names */
    HGR_RETURN_IF_ERROR(hgr__onnx_add_constant(node, v->scoped ? NULL : v->name, v->constant, &v->value));
    v->has_value = true;
  }
  *out_value = v->value;
  hgr_tensor_info_t info;
  hgr_dtype_t compute;
  HGR_RETURN_IF_ERROR(hgr__onnx_value_info(node, v->value, &info));
  if (!hgr__onnx_held_dtype(hgr__onnx_compute_type(v->onnx_type), &compute) || hgr_dtype_equal(info.dtype, compute))
    return HGR_OK;
  return hgr__onnx_add_cast(node, v->value, compute, out_value); /* widened for the op */
}

hgr_status_t hgr__onnx_runtime_held(hgr__onnx_node_t* node, hgr__onnx_value_t* v, hgr_value_t* out_value) {
  hgr_dtype_t held, compute;
  HGR_RETURN_IF_ERROR(held_dtype(node, v, &held));
  if (v->has_value) {
    hgr_tensor_info_t info;
    HGR_RETURN_IF_ERROR(hgr__onnx_value_info(node, v->value, &info));
    if (hgr_dtype_equal(info.dtype, held)) {
      *out_value = v->value;
      return HGR_OK;
    }
  }
  if (!v->constant)
    return HGR_STATUS(HGR_STATUS_INTERNAL, "%s: value '%s' has no builder value of its own dtype", node->label,
                      v->name);
  hgr__onnx_held_dtype(hgr__onnx_compute_type(v->onnx_type), &compute);
  if (hgr_dtype_equal(held, compute)) return hgr__onnx_runtime(node, v, out_value);
  return add_constant_as(node, NULL, v->constant, true, out_value); /* v->value keeps the computed one */
}

hgr_status_t hgr__onnx_add_op(hgr__onnx_node_t* node, const char* op, const hgr_value_t* inputs, uint32_t input_count,
                              const hgr_attrs_t* attrs, uint32_t output_count, hgr_value_t* out_outputs) {
  const char* base = node->op_name ? node->op_name
                     : node->proto->n_output && node->proto->output[0] && node->proto->output[0][0]
                         ? node->proto->output[0]
                         : (node->proto->name && node->proto->name[0] ? node->proto->name : op);
  if (!hgr__op_lookup(op, NULL))
    return HGR__ONNX_UNSUPPORTED(node, "this hgr has no op '%s', which the node needs", op);
  char* name =
      hgr__format_in(node->loader->allocator, "%s#%llu", base, (unsigned long long)++node->loader->name_counter);
  if (!name) return HGR_STATUS(HGR_STATUS_RESOURCE_EXHAUSTED, "%s: out of host memory", node->label);
  hgr_status_t status = hgr_builder_add_op(node->loader->builder, name, op, inputs, input_count, attrs, output_count,
                                           out_outputs);
  hgr__free(node->loader->allocator, name);
  return builder_status(node, status);
}

hgr_status_t hgr__onnx_add_binary(hgr__onnx_node_t* node, const char* op, hgr_value_t a, hgr_value_t b,
                                  hgr_value_t* out_value) {
  hgr_value_t pair[2] = {a, b};
  return hgr__onnx_add_op(node, op, pair, 2, NULL, 1, out_value);
}

hgr_status_t hgr__onnx_add_unary(hgr__onnx_node_t* node, const char* op, hgr_value_t input, hgr_value_t* out_value) {
  return hgr__onnx_add_op(node, op, &input, 1, NULL, 1, out_value);
}

hgr_status_t hgr__onnx_add_reshape(hgr__onnx_node_t* node, hgr_value_t input, const int64_t* shape, int32_t ndim,
                                   hgr_value_t* out_value) {
  hgr_attrs_t* attrs = NULL;
  HGR_RETURN_IF_ERROR(hgr_attrs_create(&attrs));
  hgr_status_t status = hgr_attrs_set_ints(attrs, "newshape", shape, (size_t)ndim);
  /* the shape is final: a 0 is an empty dim, not Relay's "copy this dim" */
  if (!status) status = hgr_attrs_set_int(attrs, "allowzero", 1);
  if (!status) status = hgr__onnx_add_op(node, "reshape", &input, 1, attrs, 1, out_value);
  hgr_attrs_release(attrs);
  return status;
}

hgr_status_t hgr__onnx_runtime_inputs(hgr__onnx_node_t* node, uint32_t first, uint32_t count, hgr_value_t* out_values) {
  for (uint32_t i = 0; i < count; ++i) {
    hgr__onnx_value_t* v;
    HGR_RETURN_IF_ERROR(hgr__onnx_required(node, first + i, &v));
    HGR_RETURN_IF_ERROR(hgr__onnx_runtime(node, v, &out_values[i]));
  }
  return HGR_OK;
}

hgr_status_t hgr__onnx_finish_op(hgr__onnx_node_t* node, hgr_status_t status, hgr_attrs_t* attrs, const char* op,
                                 const hgr_value_t* inputs, uint32_t input_count, uint32_t k, int32_t onnx_type) {
  hgr_value_t out;
  if (!status) status = hgr__onnx_add_op(node, op, inputs, input_count, attrs, 1, &out);
  hgr_attrs_release(attrs);
  if (!status) status = hgr__onnx_set_runtime(node, k, out, onnx_type);
  return status;
}

hgr_status_t hgr__onnx_index_input(hgr__onnx_node_t* node, hgr__onnx_value_t* indices, int64_t extent,
                                   hgr_value_t* out_value) {
  if (!indices->constant) return hgr__onnx_runtime(node, indices, out_value);
  hgr__onnx_tensor_t* fixed = NULL;
  HGR_RETURN_IF_ERROR(hgr__onnx_tensor_copy(node->loader->allocator, indices->constant, &fixed));
  for (uint64_t j = 0; j < fixed->count; ++j) {
    int64_t k = hgr__onnx_tensor_i64(fixed, j);
    if (k < -extent || k >= extent) {
      hgr__onnx_tensor_free(fixed);
      return HGR__ONNX_INVALID(node, "index %lld at position %llu is outside [-%lld, %lld)", (long long)k,
                               (unsigned long long)j, (long long)extent, (long long)extent);
    }
    if (k < 0) hgr__onnx_tensor_set_i64(fixed, j, k + extent);
  }
  hgr_status_t status = hgr__onnx_add_constant(node, NULL, fixed, out_value);
  hgr__onnx_tensor_free(fixed);
  return status;
}

hgr_status_t hgr__onnx_value_info(const hgr__onnx_node_t* node, hgr_value_t value, hgr_tensor_info_t* out_info) {
  return builder_status(node, hgr_builder_value_info(node->loader->builder, value, out_info));
}

int64_t hgr__onnx_element_count(const hgr__onnx_value_t* v) {
  int64_t count = 1;
  for (int32_t d = 0; d < v->ndim; ++d) count *= v->shape[d];
  return count;
}

hgr__onnx_value_t hgr__onnx_runtime_value(const hgr__onnx_node_t* node, hgr_value_t value, int32_t onnx_type) {
  hgr__onnx_value_t v = {.name = node->output_count && node->outputs[0] ? node->outputs[0]->name : "(a value)",
                         .onnx_type = onnx_type, .ndim = -1, .has_value = true, .value = value, .defined = true,
                         .producer = (int32_t)node->index, .consumer = -1, .scoped = true};
  hgr_tensor_info_t info;
  if (!hgr_builder_value_info(node->loader->builder, value, &info)) {
    v.ndim = info.ndim;
    for (int32_t d = 0; d < info.ndim; ++d) v.shape[d] = info.shape[d];
  }
  return v;
}

/* ---- outputs ---------------------------------------------------------------------- */

static hgr__onnx_value_t* output(const hgr__onnx_node_t* node, uint32_t k) {
  return k < node->output_count ? node->outputs[k] : NULL;
}

hgr_status_t hgr__onnx_set_runtime(hgr__onnx_node_t* node, uint32_t k, hgr_value_t value, int32_t onnx_type) {
  hgr__onnx_value_t* v = output(node, k);
  if (!v) return HGR_OK;
  hgr_tensor_info_t info;
  HGR_RETURN_IF_ERROR(hgr__onnx_value_info(node, value, &info));
  v->onnx_type = onnx_type;
  v->ndim = info.ndim; /* before a cast: info.shape is the builder's, which adding an op may move */
  for (int32_t d = 0; d < info.ndim; ++d) v->shape[d] = info.shape[d];
  hgr_dtype_t want, compute;
  HGR_RETURN_IF_ERROR(held_dtype(node, v, &want));
  if (!hgr_dtype_equal(want, info.dtype) && hgr__onnx_held_dtype(hgr__onnx_compute_type(onnx_type), &compute) &&
      hgr_dtype_equal(compute, info.dtype)) /* computed wide: held in the ONNX type's own width */
    HGR_RETURN_IF_ERROR(hgr__onnx_add_cast(node, value, want, &value));
  else if (!hgr_dtype_equal(want, info.dtype)) {
    char got[32], wanted[32];
    return HGR_STATUS(HGR_STATUS_INTERNAL, "%s: output '%s' is %s at run time, expected %s for %s", node->label,
                      v->name, hgr_dtype_format(info.dtype, got, sizeof(got)),
                      hgr_dtype_format(want, wanted, sizeof(wanted)), hgr__onnx_type_name(onnx_type));
  }
  v->value = value;
  v->has_value = true;
  v->defined = true;
  return HGR_OK;
}

hgr_status_t hgr__onnx_set_constant(hgr__onnx_node_t* node, uint32_t k, hgr__onnx_tensor_t* tensor) {
  hgr__onnx_value_t* v = output(node, k);
  if (!v || !hgr__onnx_tensor_is_whole(tensor)) {
    hgr__onnx_tensor_free(tensor);
    return v ? HGR_STATUS(HGR_STATUS_INTERNAL, "%s: output %u '%s' folded to a tensor whose shape does not hold its "
                          "element count", node->label, k, v->name)
             : HGR_OK;
  }
  hgr__onnx_tensor_free(v->constant);
  v->constant = tensor;
  v->onnx_type = tensor->onnx_type;
  v->ndim = tensor->ndim;
  for (int32_t d = 0; d < tensor->ndim; ++d) v->shape[d] = tensor->shape[d];
  v->defined = true;
  return HGR_OK;
}

hgr_status_t hgr__onnx_set_alias(hgr__onnx_node_t* node, uint32_t k, const hgr__onnx_value_t* source) {
  hgr__onnx_value_t* v = output(node, k);
  if (!v) return HGR_OK;
  if (source->constant) {
    hgr__onnx_tensor_t* copy = NULL;
    HGR_RETURN_IF_ERROR(hgr__onnx_tensor_copy(node->loader->allocator, source->constant, &copy));
    return hgr__onnx_set_constant(node, k, copy);
  }
  v->onnx_type = source->onnx_type;
  v->ndim = source->ndim;
  memcpy(v->shape, source->shape, sizeof(v->shape));
  v->value = source->value;
  v->has_value = source->has_value;
  v->defined = true;
  return HGR_OK;
}

/* ---- fusion ------------------------------------------------------------------------- */

static int compare_name(const void* key, const void* element) {
  return strcmp((const char*)key, ((const hgr__onnx_value_t*)element)->name);
}

hgr__onnx_value_t* hgr__onnx_find_local(const hgr__onnx_loader_t* loader, const char* name) {
  if (!name || !name[0] || !loader->value_count) return NULL;
  return bsearch(name, loader->values, loader->value_count, sizeof(*loader->values), compare_name);
}

hgr__onnx_value_t* hgr__onnx_find_value(const hgr__onnx_loader_t* loader, const char* name) {
  for (const hgr__onnx_loader_t* scope = loader; scope; scope = scope->parent) {
    hgr__onnx_value_t* v = hgr__onnx_find_local(scope, name);
    if (v) return v;
  }
  return NULL;
}

static bool is_local(const hgr__onnx_loader_t* loader, const hgr__onnx_value_t* v) {
  return v >= loader->values && v < loader->values + loader->value_count;
}

/* A growing list of values of enclosing scopes that the walk reached. */
typedef struct value_list_t {
  const hgr__onnx_value_t** values;
  size_t count, capacity;
} value_list_t;

static bool list_add(hgr_allocator_t allocator, value_list_t* list, const hgr__onnx_value_t* v) {
  if (list->count == list->capacity) {
    size_t capacity = list->capacity ? 2 * list->capacity : 16;
    const hgr__onnx_value_t** grown = hgr__realloc(allocator, list->values, capacity * sizeof(*grown));
    if (!grown) return false;
    list->values = grown;
    list->capacity = capacity;
  }
  list->values[list->count++] = v;
  return true;
}

/* What node index of loader reads: its inputs, then the names its subgraphs read
 * from enclosing scopes; each found (NULL: omitted or undefined) passed to visit. */
static bool visit_reads(const hgr__onnx_loader_t* loader, uint32_t index,
                        bool (*visit)(void* context, const hgr__onnx_value_t* v), void* context) {
  const Onnx__NodeProto* node = loader->graph->node[index];
  for (size_t i = 0; i < node->n_input; ++i)
    if (!visit(context, hgr__onnx_find_value(loader, node->input[i]))) return false;
  const hgr__onnx_names_t* captured = loader->captures ? &loader->captures[index] : NULL;
  for (size_t i = 0; captured && i < captured->count; ++i)
    if (!visit(context, hgr__onnx_find_value(loader, captured->names[i]))) return false;
  return true;
}

typedef struct deciding_walk_t {
  const hgr__onnx_loader_t* loader;
  bool* seen;                      /* per value of loader */
  const hgr__onnx_value_t** stack; /* room for every value of loader */
  size_t depth;
  value_list_t outer;              /* values of enclosing scopes reached */
} deciding_walk_t;

static bool deciding_visit(void* context, const hgr__onnx_value_t* v) {
  deciding_walk_t* walk = context;
  if (!v) return true;
  /* a value no scope holds is a copy out of a subgraph, walked inside it already */
  if (!is_local(walk->loader, v)) return !walk->loader->parent || list_add(walk->loader->allocator, &walk->outer, v);
  if (walk->seen[v - walk->loader->values]) return true;
  walk->seen[v - walk->loader->values] = true;
  walk->stack[walk->depth++] = v;
  return true;
}

/* For what the owner of a subgraph reads: the parent walks it. */
static bool deciding_visit_outer(void* context, const hgr__onnx_value_t* v) {
  deciding_walk_t* walk = context;
  return !v || list_add(walk->loader->allocator, &walk->outer, v);
}

/* Walks back from roots through loader's values that are not constants; the graph
 * inputs of the model's graph reached are marked deciding. A subgraph's input
 * reached stands for what its owner node reads (its Loop's carried values came
 * from there), and values of enclosing scopes reached are walked there in turn. */
static hgr_status_t note_deciding_in(hgr__onnx_loader_t* loader, const hgr__onnx_value_t* const* roots,
                                     size_t root_count) {
  deciding_walk_t walk = {.loader = loader};
  walk.seen = hgr__calloc(loader->allocator, loader->value_count + 1, sizeof(*walk.seen));
  walk.stack = hgr__alloc(loader->allocator, (loader->value_count + 1) * sizeof(*walk.stack));
  bool ok = walk.seen && walk.stack, escaped = false;
  for (size_t r = 0; ok && r < root_count; ++r) ok = deciding_visit(&walk, roots[r]);
  const Onnx__GraphProto* g = loader->graph;
  while (ok && walk.depth) { /* each value once: the walk is linear in the graph */
    const hgr__onnx_value_t* top = walk.stack[--walk.depth];
    if (top->constant) continue;
    if (top->producer >= 0) {
      ok = visit_reads(loader, (uint32_t)top->producer, deciding_visit, &walk);
    } else if (!loader->parent) {
      for (size_t i = 0; i < g->n_input; ++i)
        if (!strcmp(g->input[i]->name, top->name)) loader->deciding[i] = true;
    } else {
      escaped = true;
    }
  }
  if (ok && escaped) { /* the owner's reads, in the parent's scope */
    ok = visit_reads(loader->parent, loader->owner->index, deciding_visit_outer, &walk);
  }
  hgr__free(loader->allocator, walk.seen);
  hgr__free(loader->allocator, walk.stack);
  hgr_status_t status = ok ? HGR_OK : HGR_STATUS(HGR_STATUS_RESOURCE_EXHAUSTED, "out of host memory");
  if (!status && walk.outer.count) status = note_deciding_in(loader->parent, walk.outer.values, walk.outer.count);
  hgr__free(loader->allocator, walk.outer.values);
  return status;
}

hgr_status_t hgr__onnx_note_deciding(hgr__onnx_loader_t* loader, const hgr__onnx_value_t* v) {
  if (!loader->deciding) return HGR_OK;
  return note_deciding_in(loader, &v, 1);
}

bool hgr__onnx_domain_is_default(const char* domain) {
  return !domain || !domain[0] || !strcmp(domain, "ai.onnx");
}

bool hgr__onnx_domain_is_contrib(const char* domain) { return domain && !strcmp(domain, HGR__ONNX_CONTRIB_DOMAIN); }

const Onnx__NodeProto* hgr__onnx_sole_consumer(const hgr__onnx_node_t* node, const hgr__onnx_value_t* v,
                                               uint32_t* out_index) {
  if (!v || v->uses != 1 || v->graph_output || v->consumer < 0) return NULL;
  uint32_t index = (uint32_t)v->consumer;
  if (index <= node->index || node->loader->fused[index]) return NULL;
  const Onnx__NodeProto* consumer = node->loader->graph->node[index];
  if (!hgr__onnx_domain_is_default(consumer->domain)) return NULL;
  *out_index = index;
  return consumer;
}

hgr_status_t hgr__onnx_fuse_into(hgr__onnx_node_t* node, uint32_t index, const hgr__onnx_value_t* result) {
  hgr__onnx_loader_t* loader = node->loader;
  loader->fused[index] = true;
  ++loader->report.fused;
  if (!result) return HGR_OK;
  const Onnx__NodeProto* fused = loader->graph->node[index];
  hgr__onnx_value_t* out = fused->n_output ? hgr__onnx_find_local(loader, fused->output[0]) : NULL;
  if (!out) return HGR_STATUS(HGR_STATUS_INTERNAL, "%s: fusing node %u without an output", node->label, index);
  out->onnx_type = result->onnx_type;
  out->ndim = result->ndim;
  memcpy(out->shape, result->shape, sizeof(out->shape));
  out->value = result->value;
  out->has_value = result->has_value;
  out->defined = true;
  return HGR_OK;
}

bool hgr__onnx_is_fused(const hgr__onnx_loader_t* loader, uint32_t index) { return loader->fused[index]; }

/* ---- shapes ------------------------------------------------------------------------- */

hgr_status_t hgr__onnx_axis(const hgr__onnx_node_t* node, const char* what, int64_t axis, int32_t rank,
                            int32_t* out_axis) {
  if (axis < -(int64_t)rank || axis >= (int64_t)rank || rank == 0)
    return HGR__ONNX_INVALID(node, "%s = %lld is outside [-%d, %d) for rank %d", what, (long long)axis, (int)rank,
                             (int)rank, (int)rank);
  *out_axis = (int32_t)(axis < 0 ? axis + rank : axis);
  return HGR_OK;
}

hgr_status_t hgr__onnx_broadcast(const hgr__onnx_node_t* node, const int64_t* a, int32_t a_ndim, const int64_t* b,
                                 int32_t b_ndim, int64_t* out, int32_t* out_ndim) {
  int32_t ndim = a_ndim > b_ndim ? a_ndim : b_ndim;
  for (int32_t d = 0; d < ndim; ++d) {
    int64_t x = d - (ndim - a_ndim) >= 0 ? a[d - (ndim - a_ndim)] : 1;
    int64_t y = d - (ndim - b_ndim) >= 0 ? b[d - (ndim - b_ndim)] : 1;
    if (x != y && x != 1 && y != 1)
      return HGR__ONNX_INVALID(node, "shapes do not broadcast: extent %lld against %lld in dimension %d of %d",
                               (long long)x, (long long)y, (int)d, (int)ndim);
    out[d] = x == 1 ? y : x;
  }
  *out_ndim = ndim;
  return HGR_OK;
}
