/* The kernel library (hgr/kernels.h): a JSON manifest declaring the user's own ops
 * from their sources or per-device binaries (kernels.h has the format), and the plan
 * that turns a declaration into a launch. */
#include <limits.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "alloc.h"
#include "file.h"
#include "ops.h"

#include "json.h"

typedef enum user_arg_kind_t {
  USER_BUFFER,   /* input or output buffer */
  USER_ELEMENTS, /* uint element count */
  USER_DIM,      /* int size of one dimension */
  USER_ATTR,     /* a node attr as int, uint or float */
} user_arg_kind_t;

typedef struct user_arg_t {
  user_arg_kind_t kind;
  bool output;        /* of an output (else an input) */
  uint32_t index;
  int32_t dim;        /* USER_DIM; negative counts from the end */
  char* attr;         /* USER_ATTR */
  hgr__arg_kind_t type; /* USER_ATTR: INT, UINT or FLOAT */
} user_arg_t;

typedef struct user_binary_t {
  char* device;       /* spec or platform short name */
  char* path;
  unsigned char* data;
  size_t length;
} user_binary_t;

typedef struct user_op_t {
  hgr__op_t op;       /* first: name, source, counts, attrs, plan (ctx->op is this op) */
  char* name;
  char* source_name;  /* "user:<source>|<device>=<binary>,...|<options>": one program per distinct one */
  char* attrs;        /* the attr names its args and NDRange read */
  char* kernel;
  char* source_path;
  char* source_text;
  size_t source_length;
  char* build_options;
  user_binary_t* binaries;
  size_t binary_count;
  user_arg_t* args;
  size_t arg_count;
  bool ndrange_attrs;
  uint32_t* shape_inputs; /* "shapes": output k is like input shape_inputs[k]; NULL without */
} user_op_t;

struct hgr_kernel_library_s {
  atomic_int refcount;
  hgr_allocator_t allocator; /* the library's and its ops' memory */
  user_op_t* ops;
  size_t count;
};

/* ---- inference and the plan ---------------------------------------------------------- */

/* With "shapes" only (else the op's infer is NULL): each output takes the dtype and
 * shape of the input the manifest names. */
static hgr_status_t infer_user(hgr__op_ctx_t* ctx, hgr__entry_t* outputs) {
  const user_op_t* user = (const user_op_t*)ctx->op; /* op is its first member */
  for (uint32_t k = 0; k < hgr__op_output_count(ctx); ++k) {
    const hgr__entry_t* like = hgr__op_input(ctx, user->shape_inputs[k]);
    hgr__op_set_output(&outputs[k], like->dtype, like->shape, like->ndim);
  }
  return HGR_OK;
}

static hgr_status_t plan_user(hgr__op_ctx_t* ctx) {
  const user_op_t* user = (const user_op_t*)ctx->op; /* op is its first member */
  hgr__launch_plan_t* l = hgr__op_launch(ctx, user->kernel);
  for (size_t a = 0; a < user->arg_count; ++a) {
    const user_arg_t* arg = &user->args[a];
    const hgr__entry_t* entry = arg->kind == USER_ATTR ? NULL
                                : arg->output           ? hgr__op_output(ctx, arg->index)
                                                        : hgr__op_input(ctx, arg->index);
    switch (arg->kind) {
      case USER_BUFFER:
        if (arg->output) hgr__launch_output(ctx, l, arg->index);
        else hgr__launch_input(ctx, l, arg->index);
        break;
      case USER_ELEMENTS:
        HGR_RETURN_IF_ERROR(hgr__op_check_range(ctx, "an element count", entry->element_count, UINT32_MAX));
        hgr__launch_uint(ctx, l, (uint32_t)entry->element_count);
        break;
      case USER_DIM: {
        int32_t d = arg->dim < 0 ? arg->dim + entry->ndim : arg->dim;
        if (d < 0 || d >= entry->ndim)
          return HGR__OP_ERROR(ctx, "argument %zu asks for dimension %d of %s %u, which has %d", a, arg->dim,
                               arg->output ? "output" : "input", arg->index, entry->ndim);
        HGR_RETURN_IF_ERROR(hgr__op_check_range(ctx, "a dimension", (uint64_t)entry->shape[d], INT32_MAX));
        hgr__launch_int(ctx, l, (int32_t)entry->shape[d]);
        break;
      }
      case USER_ATTR: {
        if (!hgr__node_attr(ctx->node, arg->attr))
          return HGR__OP_ERROR(ctx, "attr '%s' is required (argument %zu of kernel %s)", arg->attr, a, user->kernel);
        if (arg->type == HGR__ARG_FLOAT) {
          double value;
          HGR_RETURN_IF_ERROR(hgr__attr_float(ctx, arg->attr, 0, &value));
          hgr__launch_float(ctx, l, (float)value);
        } else {
          int64_t value;
          HGR_RETURN_IF_ERROR(hgr__attr_int(ctx, arg->attr, 0, &value));
          bool fits = arg->type == HGR__ARG_INT ? value >= INT32_MIN && value <= INT32_MAX
                                                : value >= 0 && value <= (int64_t)UINT32_MAX;
          if (!fits)
            return HGR__OP_ERROR(ctx, "attr '%s' = %lld does not fit a 32-bit %s", arg->attr, (long long)value,
                                 arg->type == HGR__ARG_INT ? "int" : "uint");
          if (arg->type == HGR__ARG_INT) hgr__launch_int(ctx, l, (int32_t)value);
          else hgr__launch_uint(ctx, l, (uint32_t)value);
        }
        break;
      }
    }
  }
  if (!user->ndrange_attrs) {
    hgr__launch_1d(ctx, l, hgr__op_output(ctx, 0)->element_count);
    return HGR_OK;
  }
  int64_t global[3], local[3];
  uint32_t global_count = 0, local_count = 0;
  bool has_local = false;
  HGR_RETURN_IF_ERROR(hgr__attr_ints(ctx, "global_size", global, 3, &global_count, NULL));
  HGR_RETURN_IF_ERROR(hgr__attr_ints(ctx, "local_size", local, 3, &local_count, &has_local));
  if (global_count == 0) return HGR__OP_ERROR(ctx, "attr 'global_size' (1 to 3 ints) is required");
  if (has_local && local_count != global_count)
    return HGR__OP_ERROR(ctx, "attr 'local_size' has %u values, global_size %u", local_count, global_count);
  size_t g[3] = {1, 1, 1}, lsize[3] = {1, 1, 1}, items = 1;
  for (uint32_t d = 0; d < global_count; ++d) {
    if (global[d] < 1 || (has_local && local[d] < 1))
      return HGR__OP_ERROR(ctx, "global_size and local_size must be positive");
    g[d] = (size_t)global[d];
    if (has_local) {
      lsize[d] = (size_t)local[d];
      items *= lsize[d];
      if (g[d] % lsize[d])
        return HGR__OP_ERROR(ctx, "global_size[%u] = %zu is not a multiple of local_size[%u] = %zu", d, g[d], d,
                             lsize[d]);
      if (lsize[d] > ctx->limits.max_work_item[d])
        return HGR__OP_ERROR(ctx, "local_size[%u] = %zu exceeds the device's %zu", d, lsize[d],
                             ctx->limits.max_work_item[d]);
    }
  }
  if (has_local && items > ctx->limits.max_work_group)
    return HGR__OP_ERROR(ctx, "local_size has %zu work-items; the kernel allows %zu on this device", items,
                         ctx->limits.max_work_group);
  if (l) {
    hgr__launch_nd(l, global_count, g, lsize);
    l->launch.use_local = has_local;
  }
  return HGR_OK;
}

/* ---- loading ------------------------------------------------------------------------- */

static void free_op(hgr_allocator_t allocator, user_op_t* op) {
  hgr__free(allocator, op->name);
  hgr__free(allocator, op->source_name);
  hgr__free(allocator, op->attrs);
  hgr__free(allocator, op->kernel);
  hgr__free(allocator, op->source_path);
  hgr__free(allocator, op->source_text);
  hgr__free(allocator, op->build_options);
  for (size_t b = 0; b < op->binary_count; ++b) {
    hgr__free(allocator, op->binaries[b].device);
    hgr__free(allocator, op->binaries[b].path);
    hgr__free(allocator, op->binaries[b].data);
  }
  hgr__free(allocator, op->binaries);
  for (size_t a = 0; a < op->arg_count; ++a) hgr__free(allocator, op->args[a].attr);
  hgr__free(allocator, op->args);
  hgr__free(allocator, op->shape_inputs);
}

static void free_library(hgr_kernel_library_t* library) {
  hgr_allocator_t allocator = library->allocator;
  for (size_t i = 0; i < library->count; ++i) free_op(allocator, &library->ops[i]);
  hgr__free(allocator, library->ops);
  hgr__free(allocator, library);
}

hgr_kernel_library_t* hgr_kernel_library_retain(hgr_kernel_library_t* library) {
  if (library) atomic_fetch_add(&library->refcount, 1);
  return library;
}

void hgr_kernel_library_release(hgr_kernel_library_t* library) {
  if (library && atomic_fetch_sub(&library->refcount, 1) == 1) free_library(library);
}

size_t hgr_kernel_library_op_count(const hgr_kernel_library_t* library) { return library ? library->count : 0; }

const char* hgr_kernel_library_op_name(const hgr_kernel_library_t* library, size_t i) {
  return library && i < library->count ? library->ops[i].name : NULL;
}

const hgr__op_t* hgr__library_op(const hgr_kernel_library_t* library, const char* name) {
  for (size_t i = 0; library && i < library->count; ++i)
    if (!strcmp(library->ops[i].name, name)) return &library->ops[i].op;
  return NULL;
}

bool hgr__library_program(const hgr_kernel_library_t* library, const char* source_name,
                          const hgr_device_info_t* device, hgr__user_program_t* out) {
  memset(out, 0, sizeof(*out));
  for (size_t i = 0; library && i < library->count; ++i) {
    const user_op_t* op = &library->ops[i];
    if (strcmp(op->source_name, source_name)) continue;
    out->build_options = op->build_options;
    for (size_t b = 0; b < op->binary_count; ++b)
      if (!strcmp(op->binaries[b].device, device->spec) || !strcmp(op->binaries[b].device, device->platform_short)) {
        out->binary = op->binaries[b].data;
        out->binary_length = op->binaries[b].length;
        out->origin = op->binaries[b].path;
        return true;
      }
    out->text = op->source_text;
    out->text_length = op->source_length;
    out->origin = op->source_path;
    return true;
  }
  return false;
}

static char* join_path(hgr_allocator_t allocator, const char* manifest, const char* file) {
  if (file[0] == '/') return hgr__copy_text(allocator, file);
  const char* slash = strrchr(manifest, '/');
  size_t dir = slash ? (size_t)(slash - manifest) + 1 : 0;
  char* path = hgr__alloc(allocator, dir + strlen(file) + 1);
  if (path) {
    memcpy(path, manifest, dir);
    strcpy(path + dir, file);
  }
  return path;
}

#define BAD(...) HGR_STATUS(HGR_STATUS_INVALID_ARGUMENT, __VA_ARGS__)

static hgr_status_t string_field(hgr_allocator_t allocator, const cJSON* item, const char* where, const char* key,
                                 bool required, char** out) {
  const cJSON* value = cJSON_GetObjectItemCaseSensitive(item, key);
  *out = NULL;
  if (!value) return required ? BAD("%s: \"%s\" is required", where, key) : HGR_OK;
  if (!cJSON_IsString(value) || !value->valuestring[0]) return BAD("%s: \"%s\" must be a non-empty string", where, key);
  *out = hgr__copy_text(allocator, value->valuestring);
  return *out ? HGR_OK : HGR_STATUS(HGR_STATUS_RESOURCE_EXHAUSTED, "out of host memory");
}

static hgr_status_t count_field(const cJSON* item, const char* where, const char* key, uint32_t* out) {
  const cJSON* value = cJSON_GetObjectItemCaseSensitive(item, key);
  if (!value || !cJSON_IsNumber(value) || value->valuedouble < 0 || value->valuedouble > 64 ||
      value->valuedouble != (double)(int)value->valuedouble)
    return BAD("%s: \"%s\" must be a count from 0 to 64", where, key);
  *out = (uint32_t)value->valueint;
  return HGR_OK;
}

/* "input 0", "output 1", "elements output 0", "dim input 0 -1", "attr alpha float" */
static hgr_status_t parse_arg(hgr_allocator_t allocator, const char* text, const char* where, size_t index,
                              uint32_t inputs, uint32_t outputs, user_arg_t* arg) {
  char word[4][64] = {{0}};
  char extra[8] = "";
  int words = sscanf(text, "%63s %63s %63s %63s %7s", word[0], word[1], word[2], word[3], extra);
  bool ok = false;
  memset(arg, 0, sizeof(*arg));
  const char* tensor = NULL;
  const char* number = NULL;
  if ((!strcmp(word[0], "input") || !strcmp(word[0], "output")) && words == 2) {
    arg->kind = USER_BUFFER;
    tensor = word[0];
    number = word[1];
  } else if (!strcmp(word[0], "elements") && words == 3) {
    arg->kind = USER_ELEMENTS;
    tensor = word[1];
    number = word[2];
  } else if (!strcmp(word[0], "dim") && words == 4) {
    arg->kind = USER_DIM;
    tensor = word[1];
    number = word[2];
    char* end = NULL;
    long dim = strtol(word[3], &end, 10);
    if (*end || end == word[3] || dim < -16 || dim > 15) return BAD("%s: argument %zu \"%s\": bad dimension", where, index, text);
    arg->dim = (int32_t)dim;
  } else if (!strcmp(word[0], "attr") && words == 3) {
    arg->kind = USER_ATTR;
    if (!strcmp(word[2], "int")) arg->type = HGR__ARG_INT;
    else if (!strcmp(word[2], "uint")) arg->type = HGR__ARG_UINT;
    else if (!strcmp(word[2], "float")) arg->type = HGR__ARG_FLOAT;
    else return BAD("%s: argument %zu \"%s\": the type must be int, uint or float", where, index, text);
    /* The graph format's own node attrs are not the op's to read. */
    static const char* const reserved[] = {"func_name", "num_inputs", "num_outputs", "flatten_data", "hash", NULL};
    for (const char* const* r = reserved; *r; ++r)
      if (!strcmp(word[1], *r))
        return BAD("%s: argument %zu \"%s\": '%s' is a standard node attr, not the op's", where, index, text, *r);
    arg->attr = hgr__copy_text(allocator, word[1]);
    return arg->attr ? HGR_OK : HGR_STATUS(HGR_STATUS_RESOURCE_EXHAUSTED, "out of host memory");
  }
  if (tensor && (!strcmp(tensor, "input") || !strcmp(tensor, "output"))) {
    arg->output = !strcmp(tensor, "output");
    char* end = NULL;
    unsigned long n = strtoul(number, &end, 10);
    ok = !*end && end != number && n < (arg->output ? outputs : inputs);
    arg->index = (uint32_t)n;
  }
  if (!ok)
    return BAD("%s: argument %zu \"%s\" is not one of \"input N\", \"output N\", \"elements input|output N\", "
               "\"dim input|output N D\", \"attr NAME int|uint|float\" (with N below the op's count)",
               where, index, text);
  return HGR_OK;
}

static hgr_status_t read_whole(hgr_allocator_t allocator, const char* path, const char* where, void** out,
                               size_t* out_length) {
  return hgr_status_annotate(hgr__file_read(allocator, path, HGR__FILE_MAX_KERNEL_PROGRAM_BYTES, out, out_length),
                             "%s", where);
}

static const char* const op_keys[] = {"func_name", "kernel", "source", "binaries", "build_options",
                                      "inputs", "outputs", "args", "ndrange", "in_place", "shapes", NULL};

/* "shapes": one "input N" per output (N below the op's input count). */
static hgr_status_t parse_shapes(hgr_allocator_t allocator, const cJSON* item, const char* where, uint32_t inputs,
                                 uint32_t outputs, user_op_t* op) {
  const cJSON* shapes = cJSON_GetObjectItemCaseSensitive(item, "shapes");
  if (!shapes) return HGR_OK;
  if (!cJSON_IsArray(shapes) || cJSON_GetArraySize(shapes) != (int)outputs)
    return BAD("%s: \"shapes\" must be a list of %u string%s, one \"input N\" per output", where, outputs,
               outputs == 1 ? "" : "s");
  op->shape_inputs = hgr__calloc(allocator, outputs, sizeof(uint32_t));
  if (!op->shape_inputs) return HGR_STATUS(HGR_STATUS_RESOURCE_EXHAUSTED, "out of host memory");
  uint32_t k = 0;
  for (const cJSON* shape = shapes->child; shape; shape = shape->next, ++k) {
    unsigned index = 0;
    int used = 0;
    if (!cJSON_IsString(shape) || sscanf(shape->valuestring, "input %u%n", &index, &used) != 1 ||
        shape->valuestring[used] || strncmp(shape->valuestring, "input ", 6) || index >= inputs)
      return BAD("%s: \"shapes\"[%u] must be \"input N\" with N below %u (the op's inputs)", where, k, inputs);
    op->shape_inputs[k] = index;
  }
  return HGR_OK;
}

static hgr_status_t parse_op(const cJSON* item, const char* manifest, size_t index, const hgr_kernel_library_t* library,
                             user_op_t* op) {
  hgr_allocator_t allocator = library->allocator;
  char where[192];
  snprintf(where, sizeof(where), "%s: ops[%zu]", manifest, index);
  if (!cJSON_IsObject(item)) return BAD("%s must be an object", where);
  for (const cJSON* field = item->child; field; field = field->next) {
    bool known = false;
    for (const char* const* key = op_keys; *key && !known; ++key) known = !strcmp(*key, field->string);
    if (!known) return BAD("%s: unknown key \"%s\"", where, field->string);
  }
  HGR_RETURN_IF_ERROR(string_field(allocator, item, where, "func_name", true, &op->name));
  snprintf(where, sizeof(where), "%s: op '%.64s'", manifest, op->name);
  if (hgr__op_find(op->name) || !strcmp(op->name, "__nop") || !strcmp(op->name, "__copy"))
    return BAD("%s: a built-in op already has this func_name", where);
  for (size_t i = 0; i < library->count; ++i)
    if (!strcmp(library->ops[i].name, op->name)) return BAD("%s is declared twice", where);
  HGR_RETURN_IF_ERROR(string_field(allocator, item, where, "kernel", true, &op->kernel));
  /* A launch plan holds the entry point in a fixed buffer; refused here rather than
   * as an internal error when an executor plans the op. */
  size_t kernel_capacity = sizeof(((hgr__launch_plan_t*)NULL)->kernel);
  if (strlen(op->kernel) >= kernel_capacity)
    return BAD("%s: \"kernel\" is %zu characters long; entry points of at most %zu are supported", where,
               strlen(op->kernel), kernel_capacity - 1);
  char* source = NULL;
  HGR_RETURN_IF_ERROR(string_field(allocator, item, where, "source", false, &source));
  if (source) {
    op->source_path = join_path(allocator, manifest, source);
    hgr__free(allocator, source);
    if (!op->source_path) return HGR_STATUS(HGR_STATUS_RESOURCE_EXHAUSTED, "out of host memory");
    void* text = NULL;
    HGR_RETURN_IF_ERROR(read_whole(allocator, op->source_path, where, &text, &op->source_length));
    op->source_text = text;
  }
  const cJSON* binaries = cJSON_GetObjectItemCaseSensitive(item, "binaries");
  if (binaries) {
    if (!cJSON_IsArray(binaries)) return BAD("%s: \"binaries\" must be a list", where);
    size_t count = (size_t)cJSON_GetArraySize(binaries);
    op->binaries = hgr__calloc(allocator, count + 1, sizeof(user_binary_t));
    if (!op->binaries) return HGR_STATUS(HGR_STATUS_RESOURCE_EXHAUSTED, "out of host memory");
    for (const cJSON* entry = binaries->child; entry; entry = entry->next) {
      user_binary_t* binary = &op->binaries[op->binary_count++];
      char* file = NULL;
      if (!cJSON_IsObject(entry) || cJSON_GetArraySize(entry) != 2)
        return BAD("%s: each binary is {\"device\": SPEC, \"file\": PATH}", where);
      HGR_RETURN_IF_ERROR(string_field(allocator, entry, where, "device", true, &binary->device));
      HGR_RETURN_IF_ERROR(string_field(allocator, entry, where, "file", true, &file));
      binary->path = join_path(allocator, manifest, file);
      hgr__free(allocator, file);
      if (!binary->path) return HGR_STATUS(HGR_STATUS_RESOURCE_EXHAUSTED, "out of host memory");
      void* data = NULL;
      HGR_RETURN_IF_ERROR(read_whole(allocator, binary->path, where, &data, &binary->length));
      binary->data = data;
    }
  }
  if (!op->source_text && !op->binary_count) return BAD("%s: needs a \"source\" or \"binaries\"", where);
  const cJSON* options = cJSON_GetObjectItemCaseSensitive(item, "build_options");
  if (options && !cJSON_IsString(options)) return BAD("%s: \"build_options\" must be a string", where);
  op->build_options = hgr__copy_text(allocator, options ? options->valuestring : "");
  uint32_t inputs = 0, outputs = 0;
  HGR_RETURN_IF_ERROR(count_field(item, where, "inputs", &inputs));
  HGR_RETURN_IF_ERROR(count_field(item, where, "outputs", &outputs));
  if (outputs == 0) return BAD("%s: \"outputs\" must be at least 1", where);
  HGR_RETURN_IF_ERROR(parse_shapes(allocator, item, where, inputs, outputs, op));
  const cJSON* args = cJSON_GetObjectItemCaseSensitive(item, "args");
  if (!cJSON_IsArray(args) || cJSON_GetArraySize(args) > HGR__MAX_ARGS)
    return BAD("%s: \"args\" must be a list of at most %d argument descriptions", where, HGR__MAX_ARGS);
  op->args = hgr__calloc(allocator, (size_t)cJSON_GetArraySize(args) + 1, sizeof(user_arg_t));
  size_t attrs_length = 32;
  if (!op->args || !op->build_options) return HGR_STATUS(HGR_STATUS_RESOURCE_EXHAUSTED, "out of host memory");
  for (const cJSON* arg = args->child; arg; arg = arg->next) {
    if (!cJSON_IsString(arg)) return BAD("%s: argument %zu must be a string", where, op->arg_count);
    HGR_RETURN_IF_ERROR(
        parse_arg(allocator, arg->valuestring, where, op->arg_count, inputs, outputs, &op->args[op->arg_count]));
    if (op->args[op->arg_count].attr) attrs_length += strlen(op->args[op->arg_count].attr) + 1;
    op->arg_count++;
  }
  const cJSON* ndrange = cJSON_GetObjectItemCaseSensitive(item, "ndrange");
  if (!cJSON_IsString(ndrange) || (strcmp(ndrange->valuestring, "elements") && strcmp(ndrange->valuestring, "attrs")))
    return BAD("%s: \"ndrange\" must be \"elements\" or \"attrs\"", where);
  op->ndrange_attrs = !strcmp(ndrange->valuestring, "attrs");
  /* hgr cannot see what a user kernel reads: running in place is the manifest's
   * promise, and the element count and size rule still applies (ops.h). */
  const cJSON* in_place = cJSON_GetObjectItemCaseSensitive(item, "in_place");
  if (in_place && (!cJSON_IsString(in_place) ||
                   (strcmp(in_place->valuestring, "elementwise") && strcmp(in_place->valuestring, "never"))))
    return BAD("%s: \"in_place\" must be \"elementwise\" or \"never\"", where);
  hgr__in_place_t in_place_mode =
      in_place && !strcmp(in_place->valuestring, "elementwise") ? HGR__IN_PLACE_ELEMENTWISE : HGR__IN_PLACE_REFUSED;
  op->attrs = hgr__calloc(allocator, attrs_length, 1);
  /* Ops declared with the same files and options share one program per device. */
  size_t name_length = 16 + (op->source_path ? strlen(op->source_path) : 0) + strlen(op->build_options);
  for (size_t b = 0; b < op->binary_count; ++b)
    name_length += strlen(op->binaries[b].device) + strlen(op->binaries[b].path) + 2;
  op->source_name = hgr__alloc(allocator, name_length);
  if (!op->attrs || !op->source_name) return HGR_STATUS(HGR_STATUS_RESOURCE_EXHAUSTED, "out of host memory");
  snprintf(op->source_name, name_length, "user:%s|", op->source_path ? op->source_path : "");
  for (size_t b = 0; b < op->binary_count; ++b) {
    strcat(op->source_name, op->binaries[b].device);
    strcat(op->source_name, "=");
    strcat(op->source_name, op->binaries[b].path);
    strcat(op->source_name, ",");
  }
  strcat(op->source_name, "|");
  strcat(op->source_name, op->build_options);
  for (size_t a = 0; a < op->arg_count; ++a)
    if (op->args[a].attr) {
      strcat(op->attrs, op->args[a].attr);
      strcat(op->attrs, " ");
    }
  if (op->ndrange_attrs) strcat(op->attrs, "global_size local_size");
  op->op = (hgr__op_t){.name = op->name, .source = op->source_name, .min_inputs = inputs, .max_inputs = inputs,
                       .min_outputs = outputs, .max_outputs = outputs, .attrs = op->attrs, .plan = plan_user,
                       .in_place = in_place_mode, .infer = op->shape_inputs ? infer_user : NULL};
  return HGR_OK;
}

hgr_status_t hgr_kernel_library_load_file(const char* manifest_path, hgr_kernel_library_t** out_library) {
  *out_library = NULL;
  if (!manifest_path) return BAD("no manifest path");
  /* A public constructor with no instance: the system allocator (hgr/allocator.h). */
  hgr_allocator_t allocator = hgr_allocator_system();
  void* text = NULL;
  size_t length = 0;
  HGR_RETURN_IF_ERROR(
      hgr__file_read(allocator, manifest_path, HGR__FILE_MAX_KERNEL_MANIFEST_BYTES, &text, &length));
  const char* end = NULL;
  cJSON* root = cJSON_ParseWithLengthOpts(text, length, &end, false);
  size_t where = end && end >= (const char*)text ? (size_t)(end - (const char*)text) : 0;
  hgr__free(allocator, text);
  if (!root) return BAD("%s: not valid JSON (near byte %zu)", manifest_path, where);
  hgr_status_t status = HGR_OK;
  hgr_kernel_library_t* library = hgr__calloc(allocator, 1, sizeof(*library));
  if (library) library->allocator = allocator;
  const cJSON* ops = cJSON_GetObjectItemCaseSensitive(root, "ops");
  if (!library) status = HGR_STATUS(HGR_STATUS_RESOURCE_EXHAUSTED, "out of host memory");
  else if (!cJSON_IsObject(root) || !cJSON_IsArray(ops) || cJSON_GetArraySize(root) != 1)
    status = BAD("%s: a manifest is an object with one key, \"ops\", a list of op declarations", manifest_path);
  if (!status) {
    atomic_init(&library->refcount, 1);
    library->ops = hgr__calloc(allocator, (size_t)cJSON_GetArraySize(ops) + 1, sizeof(user_op_t));
    if (!library->ops) status = HGR_STATUS(HGR_STATUS_RESOURCE_EXHAUSTED, "out of host memory");
    size_t index = 0;
    for (const cJSON* item = ops ? ops->child : NULL; item && !status; item = item->next, ++index) {
      status = parse_op(item, manifest_path, index, library, &library->ops[library->count]);
      library->count++; /* freed with the library, whole or not */
    }
  }
  cJSON_Delete(root);
  if (status) {
    if (library) free_library(library);
    return status;
  }
  *out_library = library;
  return HGR_OK;
}
