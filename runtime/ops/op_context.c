/* What the op plan functions (ops_<family>.c, the user ops of kernel_library.c)
 * share, over one node's hgr__op_ctx_t: errors naming the node, its entries, dtype
 * and shape checks, attr parsing, and the launch builders. */
#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "alloc.h"
#include "ops.h"

/* ---- errors, entries, dtypes, shapes ------------------------------------------------- */

hgr_status_t hgr__op_error(const hgr__op_ctx_t* ctx, const char* file, int line, const char* format, ...) {
  char message[768];
  va_list args;
  va_start(args, format);
  vsnprintf(message, sizeof(message), format, args);
  va_end(args);
  return hgr_status_make(HGR_STATUS_INVALID_ARGUMENT, file, line, "%s (%s): %s", ctx->label,
                         ctx->node->func_name, message);
}

bool hgr__op_loops_work_items(const hgr__op_ctx_t* ctx) {
  static const char platform[] = "Portable Computing Language|";
  const char* id = ctx->tuning ? ctx->tuning->device : NULL;
  if (!id || strncmp(id, platform, sizeof(platform) - 1)) return false;
  const char* name = id + sizeof(platform) - 1;
  return !strncmp(name, "pthread", 7) || !strncmp(name, "basic", 5) || !strncmp(name, "cpu", 3);
}

uint64_t hgr__op_loop_iteration_limit(const hgr__op_ctx_t* ctx) {
  const char* id = ctx->tuning ? ctx->tuning->device : NULL;
  const char* name = id ? strchr(id, '|') : NULL;
  return name && !strncmp(name + 1, "llvmpipe", 8) ? 65535 : 0;
}

uint32_t hgr__op_input_count(const hgr__op_ctx_t* ctx) { return ctx->node->input_count; }
uint32_t hgr__op_output_count(const hgr__op_ctx_t* ctx) { return ctx->node->num_outputs; }
uint32_t hgr__op_entry_id(const hgr__op_ctx_t* ctx, const hgr__entry_t* entry) {
  return (uint32_t)(entry - ctx->graph->entries);
}

const hgr__entry_t* hgr__op_input(const hgr__op_ctx_t* ctx, uint32_t i) {
  return &ctx->graph->entries[hgr__graph_entry_id(ctx->graph, ctx->node->inputs[i])];
}

const hgr__entry_t* hgr__op_output(const hgr__op_ctx_t* ctx, uint32_t i) {
  return &ctx->graph->entries[ctx->graph->node_row_ptr[ctx->node_id] + i];
}

bool hgr__dtype_is_f32(hgr_dtype_t dtype) {
  return dtype.code == HGR_DTYPE_FLOAT && dtype.bits == 32 && dtype.lanes == 1;
}

bool hgr__dtype_is_i32(hgr_dtype_t dtype) {
  return dtype.code == HGR_DTYPE_INT && dtype.bits == 32 && dtype.lanes == 1;
}

bool hgr__dtype_same(hgr_dtype_t a, hgr_dtype_t b) {
  return a.code == b.code && a.bits == b.bits && a.lanes == b.lanes;
}

void hgr__op_set_output(hgr__entry_t* output, hgr_dtype_t dtype, const int64_t* shape, int32_t ndim) {
  output->dtype = dtype;
  output->ndim = ndim;
  for (int32_t d = 0; d < ndim; ++d) output->shape[d] = shape[d];
}

hgr_status_t hgr__op_check_dtype(const hgr__op_ctx_t* ctx, int input_index, int output_index,
                                 bool allow_i32) {
  bool is_input = output_index < 0;
  uint32_t index = (uint32_t)(is_input ? input_index : output_index);
  const hgr__entry_t* entry = is_input ? hgr__op_input(ctx, index) : hgr__op_output(ctx, index);
  if (hgr__dtype_is_f32(entry->dtype) || (allow_i32 && hgr__dtype_is_i32(entry->dtype))) return HGR_OK;
  char text[32];
  return HGR__OP_ERROR(ctx, "%s %u (entry %u) is %s; the op supports float32%s", is_input ? "input" : "output",
                       index, (uint32_t)(entry - ctx->graph->entries),
                       hgr_dtype_format(entry->dtype, text, sizeof(text)), allow_i32 ? " and int32" : "");
}

hgr_status_t hgr__op_check_shape(const hgr__op_ctx_t* ctx, const hgr__entry_t* entry, const char* entry_name,
                                 const int64_t* shape, int32_t ndim) {
  bool same = entry->ndim == ndim;
  for (int32_t d = 0; same && d < ndim; ++d) same = entry->shape[d] == shape[d];
  if (same) return HGR_OK;
  hgr__entry_t expected = {0};
  expected.ndim = ndim;
  for (int32_t d = 0; d < ndim; ++d) expected.shape[d] = shape[d];
  char want[160], got[160];
  return HGR__OP_ERROR(ctx, "%s (entry %u) should be shaped %s, the graph says %s", entry_name,
                       (uint32_t)(entry - ctx->graph->entries), hgr__entry_shape(&expected, want, sizeof(want)),
                       hgr__entry_shape(entry, got, sizeof(got)));
}

hgr_status_t hgr__op_check_range(const hgr__op_ctx_t* ctx, const char* what, uint64_t value, uint64_t max) {
  if (value <= max) return HGR_OK;
  return HGR__OP_ERROR(ctx, "%s is %llu; the kernels index with 32-bit integers (at most %llu)", what,
                       (unsigned long long)value, (unsigned long long)max);
}

hgr_status_t hgr__op_axis(const hgr__op_ctx_t* ctx, const char* key, int64_t axis, int32_t ndim,
                          int32_t* out_axis) {
  if (axis < -(int64_t)ndim || axis >= ndim || (ndim == 0))
    return HGR__OP_ERROR(ctx, "attr '%s' = %lld is out of range for %d dimension%s", key, (long long)axis,
                         ndim, ndim == 1 ? "" : "s");
  *out_axis = (int32_t)(axis < 0 ? axis + ndim : axis);
  return HGR_OK;
}

/* ---- attrs --------------------------------------------------------------------------- */

static hgr_status_t bad_attr(const hgr__op_ctx_t* ctx, const char* key, const char* value, const char* want) {
  return HGR__OP_ERROR(ctx, "attr '%s' = \"%s\" is not %s", key, value, want);
}

static const char* skip_space(const char* s) {
  while (isspace((unsigned char)*s)) ++s;
  return s;
}

static bool parse_int(const char* text, const char** end, int64_t* out) {
  errno = 0;
  char* stop = NULL;
  long long value = strtoll(text, &stop, 10);
  if (stop == text || errno == ERANGE) return false;
  /* "2.0" is not an int */
  if (*stop == '.' || *stop == 'e' || *stop == 'E') return false;
  *out = value;
  *end = stop;
  return true;
}

hgr_status_t hgr__attr_int(const hgr__op_ctx_t* ctx, const char* key, int64_t fallback, int64_t* out) {
  const char* value = hgr__node_attr(ctx->node, key);
  *out = fallback;
  if (!value) return HGR_OK;
  const char* end = NULL;
  if (!parse_int(skip_space(value), &end, out) || *skip_space(end))
    return bad_attr(ctx, key, value, "an integer");
  return HGR_OK;
}

hgr_status_t hgr__attr_float(const hgr__op_ctx_t* ctx, const char* key, double fallback, double* out) {
  const char* value = hgr__node_attr(ctx->node, key);
  *out = fallback;
  if (!value) return HGR_OK;
  const char* start = skip_space(value);
  char* stop = NULL;
  errno = 0;
  double parsed = strtod(start, &stop);
  if (stop == start || *skip_space(stop) || (errno == ERANGE && isinf(parsed)) || isnan(parsed))
    return bad_attr(ctx, key, value, "a number");
  *out = parsed;
  return HGR_OK;
}

hgr_status_t hgr__attr_bool(const hgr__op_ctx_t* ctx, const char* key, bool fallback, bool* out) {
  const char* value = hgr__node_attr(ctx->node, key);
  *out = fallback;
  if (!value) return HGR_OK;
  if (!strcmp(value, "1") || !strcasecmp(value, "true")) *out = true;
  else if (!strcmp(value, "0") || !strcasecmp(value, "false")) *out = false;
  else return bad_attr(ctx, key, value, "a bool (1, 0, true or false)");
  return HGR_OK;
}

hgr_status_t hgr__attr_ints(const hgr__op_ctx_t* ctx, const char* key, int64_t* out, uint32_t capacity,
                            uint32_t* out_count, bool* out_present) {
  const char* value = hgr__node_attr(ctx->node, key);
  *out_count = 0;
  if (out_present) *out_present = false;
  const char* s = value ? skip_space(value) : NULL;
  if (!s || !*s || !strcmp(s, "None") || !strcmp(s, "null")) return HGR_OK;
  /* Brackets may nest ("[[0, 0], [1, 1]]"): they must balance, and the values are
   * read in order. A comma separates values or lists; "(2,)" is one value. */
  char stack[HGR_MAX_DIMS + 1];
  int depth = 0;
  uint32_t count = 0;
  bool need_value = true; /* at the start, or after '[' or ',' */
  for (;;) {
    s = skip_space(s);
    if (*s == '[' || *s == '(') {
      if (!need_value || depth == (int)sizeof(stack)) return bad_attr(ctx, key, value, "an int or a list of ints");
      stack[depth++] = *s == '[' ? ']' : ')';
      ++s;
    } else if (*s == ']' || *s == ')') {
      if (!depth || *s != stack[depth - 1]) return bad_attr(ctx, key, value, "an int or a list of ints");
      --depth;
      need_value = false;
      ++s;
    } else if (*s == ',') {
      if (need_value || !depth) return bad_attr(ctx, key, value, "an int or a list of ints");
      need_value = true;
      ++s;
      /* a trailing comma before a closing bracket */
      const char* next = skip_space(s);
      if (*next == ']' || *next == ')') need_value = false;
    } else if (*s) {
      int64_t item;
      const char* end = NULL;
      if (!need_value || !parse_int(s, &end, &item)) return bad_attr(ctx, key, value, "an int or a list of ints");
      if (count == capacity)
        return HGR__OP_ERROR(ctx, "attr '%s' = \"%s\" has more than %u values", key, value, capacity);
      out[count++] = item;
      need_value = false;
      s = end;
    } else {
      break;
    }
    if (!depth) break;
  }
  if (depth || *skip_space(s)) return bad_attr(ctx, key, value, "an int or a list of ints");
  *out_count = count;
  if (out_present) *out_present = true;
  return HGR_OK;
}

hgr_status_t hgr__attr_floats(const hgr__op_ctx_t* ctx, const char* key, double* out, uint32_t capacity,
                              uint32_t* out_count, bool* out_present) {
  const char* value = hgr__node_attr(ctx->node, key);
  *out_count = 0;
  if (out_present) *out_present = false;
  const char* s = value ? skip_space(value) : NULL;
  if (!s || !*s || !strcmp(s, "None") || !strcmp(s, "null")) return HGR_OK;
  char close = *s == '[' ? ']' : *s == '(' ? ')' : 0;
  if (close) s = skip_space(s + 1);
  uint32_t count = 0;
  while (*s && *s != close) {
    char* stop = NULL;
    errno = 0;
    double parsed = strtod(s, &stop);
    if (stop == s || isnan(parsed) || (errno == ERANGE && isinf(parsed)))
      return bad_attr(ctx, key, value, "a number or a list of numbers");
    if (count == capacity)
      return HGR__OP_ERROR(ctx, "attr '%s' = \"%s\" has more than %u values", key, value, capacity);
    out[count++] = parsed;
    s = skip_space(stop);
    if (*s == ',' && close) s = skip_space(s + 1);
    else if (*s != close) return bad_attr(ctx, key, value, "a number or a list of numbers");
  }
  if (*s != close || (close && *skip_space(s + 1)) || (!close && !count))
    return bad_attr(ctx, key, value, "a number or a list of numbers");
  *out_count = count;
  if (out_present) *out_present = true;
  return HGR_OK;
}

const char* hgr__attr_string(const hgr__op_ctx_t* ctx, const char* key, const char* fallback) {
  const char* value = hgr__node_attr(ctx->node, key);
  return value ? value : fallback;
}

hgr_status_t hgr__attr_pair(const hgr__op_ctx_t* ctx, const char* key, int64_t fallback, int64_t min,
                            int64_t out[2]) {
  int64_t values[2];
  uint32_t count = 0;
  bool present = false;
  HGR_RETURN_IF_ERROR(hgr__attr_ints(ctx, key, values, 2, &count, &present));
  if (!present) {
    out[0] = out[1] = fallback;
    return HGR_OK;
  }
  if (count != 1 && count != 2)
    return HGR__OP_ERROR(ctx, "attr '%s' = \"%s\" should hold 2 values, it has %u", key, hgr__attr_string(ctx, key, ""),
                         count);
  out[0] = values[0];
  out[1] = count == 2 ? values[1] : values[0];
  for (int i = 0; i < 2; ++i)
    if (out[i] < min || out[i] > INT32_MAX)
      return HGR__OP_ERROR(ctx, "attr '%s' = \"%s\" has %lld; each value must be at least %lld", key,
                           hgr__attr_string(ctx, key, ""), (long long)out[i], (long long)min);
  return HGR_OK;
}

hgr_status_t hgr__attr_padding(const hgr__op_ctx_t* ctx, const char* key, int64_t out[4]) {
  int64_t values[4];
  uint32_t count = 0;
  bool present = false;
  HGR_RETURN_IF_ERROR(hgr__attr_ints(ctx, key, values, 4, &count, &present));
  memset(out, 0, 4 * sizeof(int64_t));
  if (!present) return HGR_OK;
  if (count == 1) {
    out[0] = out[1] = out[2] = out[3] = values[0];
  } else if (count == 2) {
    out[0] = out[2] = values[0];
    out[1] = out[3] = values[1];
  } else if (count == 4) {
    memcpy(out, values, sizeof(values));
  } else {
    return HGR__OP_ERROR(ctx, "attr '%s' = \"%s\" has %u values; it takes 1, 2 or 4", key,
                         hgr__attr_string(ctx, key, ""), count);
  }
  for (int i = 0; i < 4; ++i)
    if (out[i] < 0 || out[i] > INT32_MAX / 4)
      return HGR__OP_ERROR(ctx, "attr '%s' = \"%s\" has %lld; padding must be between 0 and %d", key,
                           hgr__attr_string(ctx, key, ""), (long long)out[i], INT32_MAX / 4);
  return HGR_OK;
}

hgr_status_t hgr__attr_choice(const hgr__op_ctx_t* ctx, const char* key, const char* fallback,
                              const char* const* allowed, const char** out) {
  const char* value = hgr__attr_string(ctx, key, fallback);
  for (const char* const* a = allowed; *a; ++a)
    if (!strcmp(value, *a)) {
      *out = value;
      return HGR_OK;
    }
  char list[128] = ""; /* "" (the attr left unset) is not listed */
  size_t used = 0;
  for (const char* const* a = allowed; *a && used < sizeof(list); ++a)
    if (**a) used += (size_t)snprintf(list + used, sizeof(list) - used, "%s\"%s\"", used ? " or " : "", *a);
  return HGR__OP_ERROR(ctx, "attr '%s' = \"%s\" is not supported; hgr takes %s", key, value, list);
}

/* Whether key is a word of the space-separated list. */
/* ---- launches ------------------------------------------------------------------------ */

static void launch_failed(hgr__op_ctx_t* ctx, hgr_status_t status) {
  if (!ctx->error) ctx->error = status;
  else hgr_status_free(status);
}

hgr__launch_plan_t* hgr__op_launch(hgr__op_ctx_t* ctx, const char* kernel) {
  if (ctx->launch_count == ctx->launch_capacity) {
    uint32_t capacity = ctx->launch_capacity ? 2 * ctx->launch_capacity : 2;
    hgr__launch_plan_t* grown = hgr__realloc(ctx->allocator, ctx->launches, capacity * sizeof(*grown));
    if (!grown) {
      launch_failed(ctx, HGR_STATUS(HGR_STATUS_RESOURCE_EXHAUSTED, "out of host memory"));
      hgr__free(ctx->allocator, ctx->discarded.meta);
      hgr__free(ctx->allocator, ctx->discarded.generated);
      hgr__free(ctx->allocator, ctx->discarded.siblings);
      memset(&ctx->discarded, 0, sizeof(ctx->discarded));
      return &ctx->discarded;
    }
    ctx->launches = grown;
    ctx->launch_capacity = capacity;
  }
  hgr__launch_plan_t* l = &ctx->launches[ctx->launch_count++];
  memset(l, 0, sizeof(*l));
  if (strlen(kernel) >= sizeof(l->kernel))
    launch_failed(ctx, HGR_STATUS(HGR_STATUS_INTERNAL, "kernel name '%s' is too long", kernel));
  snprintf(l->kernel, sizeof(l->kernel), "%s", kernel);
  return l;
}

void hgr__launch_sibling(hgr__op_ctx_t* ctx, hgr__launch_plan_t* l, const char* kernel) {
  if (!l || l == &ctx->discarded || !strcmp(kernel, l->kernel)) return;
  size_t had = 0; /* the list's length, up to its final '\0' */
  for (const char* at = l->siblings; at && *at; at += strlen(at) + 1) {
    if (!strcmp(at, kernel)) return;
    had = (size_t)(at - l->siblings) + strlen(at) + 1;
  }
  size_t length = strlen(kernel);
  char* grown = hgr__realloc(ctx->allocator, l->siblings, had + length + 2);
  if (!grown) {
    launch_failed(ctx, HGR_STATUS(HGR_STATUS_RESOURCE_EXHAUSTED, "out of host memory"));
    return;
  }
  memcpy(grown + had, kernel, length + 1);
  grown[had + length + 1] = '\0';
  l->siblings = grown;
}

static hgr__arg_t* add_arg(hgr__op_ctx_t* ctx, hgr__launch_plan_t* l, hgr__arg_kind_t kind) {
  if (l->arg_count == HGR__MAX_ARGS) {
    launch_failed(ctx, HGR_STATUS(HGR_STATUS_INTERNAL, "%s: kernel %s has more than %d arguments", ctx->label,
                                  l->kernel, HGR__MAX_ARGS));
    return NULL;
  }
  hgr__arg_t* arg = &l->args[l->arg_count++];
  memset(arg, 0, sizeof(*arg));
  arg->kind = kind;
  return arg;
}

void hgr__launch_input(hgr__op_ctx_t* ctx, hgr__launch_plan_t* l, uint32_t index) {
  hgr__arg_t* arg = add_arg(ctx, l, HGR__ARG_INPUT);
  if (arg) arg->index = index;
}

void hgr__launch_output(hgr__op_ctx_t* ctx, hgr__launch_plan_t* l, uint32_t index) {
  hgr__arg_t* arg = add_arg(ctx, l, HGR__ARG_OUTPUT);
  if (arg) arg->index = index;
}

void hgr__launch_meta_arg(hgr__op_ctx_t* ctx, hgr__launch_plan_t* l) { add_arg(ctx, l, HGR__ARG_META); }

void hgr__launch_int(hgr__op_ctx_t* ctx, hgr__launch_plan_t* l, int32_t value) {
  hgr__arg_t* arg = add_arg(ctx, l, HGR__ARG_INT);
  if (arg) arg->i = value;
}

void hgr__launch_uint(hgr__op_ctx_t* ctx, hgr__launch_plan_t* l, uint32_t value) {
  hgr__arg_t* arg = add_arg(ctx, l, HGR__ARG_UINT);
  if (arg) arg->u = value;
}

void hgr__launch_float(hgr__op_ctx_t* ctx, hgr__launch_plan_t* l, float value) {
  hgr__arg_t* arg = add_arg(ctx, l, HGR__ARG_FLOAT);
  if (arg) arg->f = value;
}

void hgr__launch_local(hgr__op_ctx_t* ctx, hgr__launch_plan_t* l, size_t bytes) {
  hgr__arg_t* arg = add_arg(ctx, l, HGR__ARG_LOCAL);
  if (arg) arg->local_bytes = bytes ? bytes : 4;
}

void hgr__launch_scratch(hgr__op_ctx_t* ctx, hgr__launch_plan_t* l, uint64_t bytes) {
  if (add_arg(ctx, l, HGR__ARG_SCRATCH) && bytes > ctx->scratch_bytes) ctx->scratch_bytes = bytes;
}

void hgr__launch_meta(hgr__op_ctx_t* ctx, hgr__launch_plan_t* l, const int32_t* values, uint32_t count) {
  if (l->meta_count + count > l->meta_capacity) {
    uint32_t capacity = l->meta_capacity ? l->meta_capacity : 16;
    while (capacity < l->meta_count + count) capacity *= 2;
    int32_t* grown = hgr__realloc(ctx->allocator, l->meta, capacity * sizeof(int32_t));
    if (!grown) {
      launch_failed(ctx, HGR_STATUS(HGR_STATUS_RESOURCE_EXHAUSTED, "out of host memory"));
      return;
    }
    l->meta = grown;
    l->meta_capacity = capacity;
  }
  memcpy(l->meta + l->meta_count, values, count * sizeof(int32_t));
  l->meta_count += count;
}

void hgr__launch_meta1(hgr__op_ctx_t* ctx, hgr__launch_plan_t* l, int32_t value) {
  hgr__launch_meta(ctx, l, &value, 1);
}

size_t hgr__launch_local_at_most(const hgr__op_ctx_t* ctx, size_t most) {
  size_t local = ctx->limits.max_work_group && ctx->limits.max_work_group < most ? ctx->limits.max_work_group : most;
  if (ctx->limits.max_work_item[0] && local > ctx->limits.max_work_item[0]) local = ctx->limits.max_work_item[0];
  return local ? local : 1;
}

void hgr__launch_1d(const hgr__op_ctx_t* ctx, hgr__launch_plan_t* l, uint64_t count) {
  hgr__launch_1d_groups(ctx, l, count, 64);
}

void hgr__launch_1d_groups(const hgr__op_ctx_t* ctx, hgr__launch_plan_t* l, uint64_t count, size_t local) {
  size_t global[1] = {(size_t)count}, local_sizes[1] = {hgr__launch_local_at_most(ctx, local)};
  hgr__launch_nd(l, 1, global, local_sizes);
}

void hgr__launch_nd(hgr__launch_plan_t* l, cl_uint dims, const size_t* global, const size_t* local) {
  memset(&l->launch, 0, sizeof(l->launch));
  l->launch.work_dim = dims;
  l->launch.use_local = true;
  for (cl_uint d = 0; d < dims; ++d) {
    size_t lsize = local[d] ? local[d] : 1;
    size_t g = (global[d] + lsize - 1) / lsize * lsize;
    l->launch.global[d] = g ? g : lsize;
    l->launch.local[d] = lsize;
  }
}

void hgr__op_ctx_free(hgr__op_ctx_t* ctx) {
  for (uint32_t i = 0; i < ctx->launch_count; ++i) {
    hgr__free(ctx->allocator, ctx->launches[i].meta);
    hgr__free(ctx->allocator, ctx->launches[i].generated);
    hgr__free(ctx->allocator, ctx->launches[i].siblings);
  }
  hgr__free(ctx->allocator, ctx->launches);
  hgr__free(ctx->allocator, ctx->discarded.meta);
  hgr__free(ctx->allocator, ctx->discarded.generated);
  hgr__free(ctx->allocator, ctx->discarded.siblings);
  hgr_status_free(ctx->error);
  memset(ctx, 0, sizeof(*ctx));
}

int64_t hgr__broadcast_extent(const hgr__entry_t* entry, int32_t axis, int32_t ndim, int32_t d) {
  int32_t k = axis < 0 ? d - (ndim - entry->ndim) : d - axis;
  return k < 0 || k >= entry->ndim ? 1 : entry->shape[k];
}

void hgr__collapse_broadcast(const hgr__entry_t* const* inputs, const int32_t* axes, uint32_t count,
                             const hgr__entry_t* out, hgr__collapsed_t* c) {
  c->ndim = 0;
  for (int32_t d = 0; d < out->ndim; ++d) {
    int64_t extent = out->shape[d];
    if (extent == 1) continue;
    bool full[HGR__FUSED_MAX_INPUTS], same = c->ndim > 0;
    int32_t k = c->ndim;
    for (uint32_t j = 0; j < count; ++j) {
      full[j] = inputs[j] && hgr__broadcast_extent(inputs[j], axes ? axes[j] : -1, out->ndim, d) != 1;
      same = same && c->full[j][k - 1] == full[j];
    }
    if (same) {
      c->extent[k - 1] *= extent; /* <= the output's element count */
      continue;
    }
    c->extent[k] = extent;
    for (uint32_t j = 0; j < count; ++j) c->full[j][k] = full[j];
    ++c->ndim;
  }
}
