/* Importing a parsed ONNX model (onnx_model.c) into an hgr graph at given shapes:
 * collect the values, find the nodes the outputs need, fold or import each in order,
 * mark the outputs, name the nodes, run the graph passes; and hgr_onnx_load_* (a
 * parse, one import, optionally placement) and hgr_onnx_read_tensor*. */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "alloc.h"
#include "file.h"
#include "passes.h"
#include "builder_internal.h"
#include "device_internal.h"
#include "onnx_internal.h"
#include "onnx_model.h"
#include "text.h"

/* ---- values ------------------------------------------------------------------------- */

static int compare_values(const void* a, const void* b) {
  return strcmp(((const hgr__onnx_value_t*)a)->name, ((const hgr__onnx_value_t*)b)->name);
}

/* Collects every name the graph defines (initializers, inputs, node outputs), sorted;
 * a name defined twice is an error (an input may repeat an initializer: IR < 4
 * lists initializers among the inputs). */
/* Where a value comes from while the values are collected (hgr__onnx_value_t's
 * producer: a node index, or one of these). */
#define FROM_INITIALIZER (-2)
#define FROM_INPUT (-1)

static void describe_origin(int32_t producer, char* buffer, size_t capacity) {
  if (producer == FROM_INITIALIZER) snprintf(buffer, capacity, "an initializer");
  else if (producer == FROM_INPUT) snprintf(buffer, capacity, "a graph input");
  else snprintf(buffer, capacity, "node %d's output", (int)producer);
}

static hgr_status_t collect_values(hgr__onnx_loader_t* loader) {
  const Onnx__GraphProto* g = loader->graph;
  size_t capacity = g->n_initializer + g->n_input;
  for (size_t n = 0; n < g->n_node; ++n) capacity += g->node[n]->n_output;
  loader->values = hgr__calloc(loader->allocator, capacity ? capacity : 1, sizeof(*loader->values));
  if (!loader->values) return HGR_STATUS(HGR_STATUS_RESOURCE_EXHAUSTED, "out of host memory for %zu values", capacity);
  size_t count = 0;
  for (size_t i = 0; i < g->n_initializer; ++i) {
    if (!g->initializer[i]->name || !g->initializer[i]->name[0])
      return HGR_STATUS(HGR_STATUS_INVALID_ARGUMENT, "initializer %zu has no name", i);
    loader->values[count++] = (hgr__onnx_value_t){.name = g->initializer[i]->name, .producer = FROM_INITIALIZER};
  }
  for (size_t i = 0; i < g->n_input; ++i) {
    if (!g->input[i]->name || !g->input[i]->name[0])
      return HGR_STATUS(HGR_STATUS_INVALID_ARGUMENT, "graph input %zu has no name", i);
    loader->values[count++] = (hgr__onnx_value_t){.name = g->input[i]->name, .producer = FROM_INPUT};
  }
  for (size_t n = 0; n < g->n_node; ++n) /* a protobuf of at most 2 GiB holds fewer than 2^31 nodes */
    for (size_t k = 0; k < g->node[n]->n_output; ++k) {
      const char* name = g->node[n]->output[k];
      if (name && name[0]) loader->values[count++] = (hgr__onnx_value_t){.name = name, .producer = (int32_t)n};
    }
  qsort(loader->values, count, sizeof(*loader->values), compare_values);
  size_t unique = 0;
  for (size_t i = 0; i < count; ++i) {
    hgr__onnx_value_t* last = unique ? &loader->values[unique - 1] : NULL;
    if (last && !strcmp(last->name, loader->values[i].name)) {
      int32_t a = last->producer, b = loader->values[i].producer;
      if ((a == FROM_INITIALIZER && b == FROM_INPUT) || (a == FROM_INPUT && b == FROM_INITIALIZER)) {
        last->producer = FROM_INITIALIZER; /* IR < 4 lists initializers among the inputs */
        continue;
      }
      char first[64], second[64];
      describe_origin(a < b ? a : b, first, sizeof(first));
      describe_origin(a < b ? b : a, second, sizeof(second));
      return HGR_STATUS(HGR_STATUS_INVALID_ARGUMENT, "value '%s' is defined twice: as %s and as %s", last->name, first,
                        second);
    }
    loader->values[unique++] = loader->values[i];
  }
  loader->value_count = unique;
  for (size_t i = 0; i < unique; ++i) {
    hgr__onnx_value_t* v = &loader->values[i];
    if (v->producer < 0) v->producer = -1; /* initializers and inputs alike */
    v->ndim = -1;
    v->consumer = -1;
    v->scoped = loader->parent != NULL;
  }
  return HGR_OK;
}

/* The initializers, decoded once when the model was parsed: the value table borrows
 * them (importers treat constants as read-only, and nothing frees a borrowed one). */
static hgr_status_t add_initializers(hgr__onnx_loader_t* loader, hgr__onnx_tensor_t* const* initializers) {
  for (size_t i = 0; i < loader->graph->n_initializer; ++i) {
    hgr__onnx_value_t* v = hgr__onnx_find_local(loader, loader->graph->initializer[i]->name);
    v->constant = initializers[i];
    v->borrowed = true;
    v->onnx_type = v->constant->onnx_type;
    v->ndim = v->constant->ndim;
    memcpy(v->shape, v->constant->shape, sizeof(v->shape));
    v->defined = true;
  }
  return HGR_OK;
}

static hgr_status_t input_shape(const hgr__onnx_loader_t* loader, const Onnx__ValueInfoProto* info, int32_t* out_ndim,
                                int64_t* out_shape) {
  const input_shape_t* given = NULL;
  for (size_t i = 0; loader->options && i < loader->options->shape_count; ++i)
    if (!strcmp(loader->options->shapes[i].name, info->name)) given = &loader->options->shapes[i];
  const Onnx__TypeProto__Tensor* tt = hgr__onnx_tensor_type(info);
  const Onnx__TensorShapeProto* shape = tt ? tt->shape : NULL;
  if (!shape) {
    if (!given)
      return HGR_STATUS(HGR_STATUS_INVALID_ARGUMENT, "graph input '%s' has no shape in the model; give it (hgr: "
                        "--input-shape %s=D0,D1,... or --input %s=FILE.npy)", info->name, info->name, info->name);
    *out_ndim = given->ndim;
    memcpy(out_shape, given->shape, sizeof(int64_t) * (size_t)given->ndim);
    return HGR_OK;
  }
  if (shape->n_dim > HGR_MAX_DIMS)
    return HGR_STATUS(HGR_STATUS_INVALID_ARGUMENT, "graph input '%s' has %zu dimensions; hgr holds at most %d",
                      info->name, shape->n_dim, HGR_MAX_DIMS);
  if (given && given->ndim != (int32_t)shape->n_dim)
    return HGR_STATUS(HGR_STATUS_INVALID_ARGUMENT, "graph input '%s' has %zu dimensions in the model; the shape "
                      "given has %d", info->name, shape->n_dim, (int)given->ndim);
  *out_ndim = (int32_t)shape->n_dim;
  for (size_t d = 0; d < shape->n_dim; ++d) {
    const Onnx__TensorShapeProto__Dimension* dim = shape->dim[d];
    /* A negative dim_value is unknown (PaddlePaddle writes -1), and so is 0 when a
     * shape is given (exporters write 0 for unknown too); without one, 0 is 0. */
    bool fixed = dim && dim->value_case == ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_VALUE &&
                 (dim->dim_value > 0 || (dim->dim_value == 0 && !given));
    if (given) {
      if (fixed && given->shape[d] != dim->dim_value)
        return HGR_STATUS(HGR_STATUS_INVALID_ARGUMENT, "graph input '%s': dimension %zu is %lld in the model; the "
                          "shape given says %lld", info->name, d, (long long)dim->dim_value,
                          (long long)given->shape[d]);
      out_shape[d] = given->shape[d];
    } else if (fixed) {
      out_shape[d] = dim->dim_value;
    } else {
      const char* symbol = dim && dim->value_case == ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_PARAM
                               ? dim->dim_param : NULL;
      return HGR_STATUS(HGR_STATUS_INVALID_ARGUMENT, "graph input '%s': dimension %zu is %s%s%s; give the input's "
                        "shape (hgr: --input-shape %s=D0,D1,... or --input %s=FILE.npy)", info->name, d,
                        symbol ? "symbolic ('" : "unknown", symbol ? symbol : "", symbol ? "')" : "", info->name,
                        info->name);
    }
  }
  return HGR_OK;
}

static hgr_status_t add_inputs(hgr__onnx_loader_t* loader, hgr__onnx_node_t* entry) {
  for (size_t i = 0; i < loader->graph->n_input; ++i) {
    const Onnx__ValueInfoProto* info = loader->graph->input[i];
    hgr__onnx_value_t* v = hgr__onnx_find_local(loader, info->name);
    if (v->constant) continue; /* an initializer's default: a constant */
    const Onnx__TypeProto__Tensor* tt = hgr__onnx_tensor_type(info);
    if (!tt || !tt->has_elem_type)
      return HGR_STATUS(HGR_STATUS_UNIMPLEMENTED, "graph input '%s' is not a tensor with an element type; hgr "
                        "takes tensors", info->name);
    v->onnx_type = tt->elem_type;
    hgr_dtype_t dtype;
    if (!hgr__onnx_held_dtype(v->onnx_type, &dtype))
      return HGR_STATUS(HGR_STATUS_UNIMPLEMENTED, "graph input '%s' is %s; hgr takes float, float16, bfloat16, int8, "
                        "uint8, int16, uint16, int32, int64 and bool inputs", info->name,
                        hgr__onnx_type_name(v->onnx_type));
    HGR_RETURN_IF_ERROR(hgr__onnx_type_dtype(v->onnx_type, &dtype)); /* int64 at the edge */
    int64_t shape[HGR_MAX_DIMS];
    int32_t ndim = 0;
    HGR_RETURN_IF_ERROR(input_shape(loader, info, &ndim, shape));
    const input_shape_t* given = NULL;
    for (size_t k = 0; loader->options && k < loader->options->shape_count; ++k)
      if (!strcmp(loader->options->shapes[k].name, info->name)) given = &loader->options->shapes[k];
    if (given && given->value) { /* fixed at load: a constant from here on */
      if (given->value->onnx_type != v->onnx_type)
        return HGR_STATUS(HGR_STATUS_INVALID_ARGUMENT, "graph input '%s' is %s; the value given for it is %s",
                          info->name, hgr__onnx_type_name(v->onnx_type), hgr__onnx_type_name(given->value->onnx_type));
      HGR_RETURN_IF_ERROR(hgr__onnx_tensor_copy(loader->allocator, given->value, &v->constant));
      v->ndim = given->value->ndim;
      memcpy(v->shape, given->value->shape, sizeof(v->shape));
      v->defined = true;
      v->from_input = true;
      continue;
    }
    hgr_value_t value;
    HGR_RETURN_IF_ERROR(hgr_builder_add_input(loader->builder, info->name, dtype, shape, ndim, &value));
    if (v->onnx_type == HGR__ONNX_INT64) { /* held as int32 inside */
      snprintf(entry->label, sizeof(entry->label), "graph input '%.200s'", info->name);
      HGR_RETURN_IF_ERROR(hgr__onnx_add_cast(entry, value, (hgr_dtype_t){HGR_DTYPE_INT, 32, 1}, &value));
    }
    v->ndim = ndim;
    memcpy(v->shape, shape, sizeof(int64_t) * (size_t)ndim);
    v->value = value;
    v->has_value = true;
    v->defined = true;
    v->from_input = true;
  }
  return HGR_OK;
}

/* Marks the nodes some graph output needs (walking back from the outputs), and
 * counts each value's uses by them; a value a node's subgraphs read counts as one
 * of its inputs. A subgraph's output may be a value of an enclosing scope. */
static hgr_status_t find_live(hgr__onnx_loader_t* loader) {
  const Onnx__GraphProto* g = loader->graph;
  bool* needed = hgr__calloc(loader->allocator, loader->value_count ? loader->value_count : 1, sizeof(*needed));
  if (!needed) return HGR_STATUS(HGR_STATUS_RESOURCE_EXHAUSTED, "out of host memory");
  for (size_t i = 0; i < g->n_output; ++i) {
    hgr__onnx_value_t* v = hgr__onnx_find_local(loader, g->output[i]->name);
    if (!v && loader->parent && hgr__onnx_find_value(loader->parent, g->output[i]->name)) continue;
    if (!v) {
      hgr__free(loader->allocator, needed);
      return HGR_STATUS(HGR_STATUS_INVALID_ARGUMENT, "graph output %zu '%s' is not produced by any node, "
                        "initializer or input", i, g->output[i]->name ? g->output[i]->name : "");
    }
    needed[v - loader->values] = true;
    v->graph_output = true;
    ++v->uses;
  }
  for (size_t n = g->n_node; n-- > 0;) {
    const Onnx__NodeProto* node = g->node[n];
    bool live = false;
    for (size_t k = 0; k < node->n_output; ++k) {
      hgr__onnx_value_t* v = hgr__onnx_find_local(loader, node->output[k]);
      if (v && needed[v - loader->values]) live = true;
    }
    loader->live[n] = live;
    if (!live) {
      ++loader->report.removed;
      continue;
    }
    const hgr__onnx_names_t* captured = hgr__onnx_captures_of(loader, (uint32_t)n);
    size_t reads = node->n_input + (captured ? captured->count : 0);
    for (size_t i = 0; i < reads; ++i) {
      /* a name of an enclosing scope: that scope counted it as its subgraph's */
      hgr__onnx_value_t* v = hgr__onnx_find_local(
          loader, i < node->n_input ? node->input[i] : captured->names[i - node->n_input]);
      if (!v) continue; /* omitted, or undefined: the import loop says which */
      needed[v - loader->values] = true;
      v->consumer = v->uses ? -1 : (int32_t)n;
      ++v->uses;
    }
  }
  hgr__free(loader->allocator, needed);
  return HGR_OK;
}

/* A node context without its inputs and outputs: what names it in errors. */
static void node_header(hgr__onnx_loader_t* loader, uint32_t index, hgr__onnx_node_t* node) {
  const Onnx__NodeProto* proto = loader->graph->node[index];
  memset(node, 0, sizeof(*node));
  node->loader = loader;
  node->proto = proto;
  node->index = index;
  bool contrib = hgr__onnx_domain_is_contrib(proto->domain);
  node->opset = contrib ? loader->contrib_opset : loader->opset;
  const char* op = proto->op_type ? proto->op_type : "";
  const char* name = proto->name && proto->name[0] ? proto->name : (proto->n_output ? proto->output[0] : "");
  snprintf(node->label, sizeof(node->label), "node %u '%.120s' (%s%.60s, opset %lld)%s%.399s", index,
           name ? name : "", contrib ? HGR__ONNX_CONTRIB_DOMAIN "." : "", op, (long long)node->opset,
           loader->where[0] ? " in " : "", loader->where);
}

static hgr_status_t node_context(hgr__onnx_loader_t* loader, uint32_t index, hgr__onnx_node_t* node) {
  const Onnx__NodeProto* proto = loader->graph->node[index];
  node_header(loader, index, node);
  node->inputs = hgr__calloc(loader->allocator, proto->n_input + 1, sizeof(*node->inputs));
  node->outputs = hgr__calloc(loader->allocator, proto->n_output + 1, sizeof(*node->outputs));
  if (!node->inputs || !node->outputs) return HGR_STATUS(HGR_STATUS_RESOURCE_EXHAUSTED, "out of host memory");
  node->input_count = (uint32_t)proto->n_input;
  node->output_count = (uint32_t)proto->n_output;
  for (uint32_t i = 0; i < node->input_count; ++i) {
    const char* input = proto->input[i];
    if (!input || !input[0]) continue;
    hgr__onnx_value_t* v = hgr__onnx_find_value(loader, input);
    if (!v)
      return HGR__ONNX_INVALID(node, "input %u '%s' is not defined by any node, initializer or graph input", i, input);
    if (!v->defined)
      return HGR__ONNX_INVALID(node, "input %u '%s' is used before the node that produces it (node %d): the graph "
                               "has a cycle or its nodes are not in topological order", i, input, (int)v->producer);
    node->inputs[i] = v;
  }
  for (uint32_t k = 0; k < node->output_count; ++k) /* a node's outputs are its own scope's */
    node->outputs[k] = hgr__onnx_find_local(loader, proto->output[k]);
  return HGR_OK;
}

static void node_free(hgr__onnx_node_t* node) {
  hgr__free(node->loader->allocator, node->inputs);
  hgr__free(node->loader->allocator, node->outputs);
}

static hgr_status_t unknown_op(const hgr__onnx_node_t* node) {
  const char* domain = node->proto->domain;
  const char* op_type = node->proto->op_type ? node->proto->op_type : "";
  if (!hgr__onnx_domain_is_default(domain) && !hgr__onnx_domain_is_contrib(domain))
    return HGR__ONNX_UNSUPPORTED(node, "op '%s' of domain '%s' is not supported; hgr reads the default domain "
                                 "(ai.onnx) and some ops of " HGR__ONNX_CONTRIB_DOMAIN, op_type, domain);
  char* list = hgr__onnx_op_list(domain);
  hgr_status_t status =
      hgr__onnx_domain_is_contrib(domain)
          ? HGR__ONNX_UNSUPPORTED(node, "op '%s' of domain '%s' is not supported; of that domain hgr supports: %s",
                                  op_type, domain, list ? list : "(out of memory)")
          : HGR__ONNX_UNSUPPORTED(node, "op '%s' is not supported; hgr supports: %s", op_type,
                                  list ? list : "(out of memory)");
  hgr__free(hgr_allocator_system(), list); /* hgr__onnx_op_list's: for the status message */
  return status;
}

/* The op's required inputs (hgr__onnx_op_t): present, or an error naming which. */
static hgr_status_t check_required_inputs(const hgr__onnx_node_t* node, const hgr__onnx_op_t* op) {
  bool every = op->required_inputs == HGR__ONNX_EVERY_INPUT;
  if (every && !node->input_count) return HGR__ONNX_INVALID(node, "takes at least one input; the node lists none");
  uint32_t required = every ? node->input_count : op->required_inputs;
  for (uint32_t i = 0; i < required; ++i)
    if (!hgr__onnx_input(node, i))
      return HGR__ONNX_INVALID(node, "input %u is required, but the node %s", i,
                               i < node->input_count ? "omits it (an empty name)" : "lists fewer inputs");
  return HGR_OK;
}

/* The op of node: hgr must know it in the node's domain (the default one, or some
 * contrib ops of com.microsoft, whose opset the model must import). */
static hgr_status_t find_op(const hgr__onnx_node_t* node, const hgr__onnx_op_t** out_op) {
  const Onnx__NodeProto* proto = node->proto;
  if (!(*out_op = hgr__onnx_op_find(proto->domain, proto->op_type ? proto->op_type : ""))) return unknown_op(node);
  if (!hgr__onnx_domain_is_contrib(proto->domain)) return HGR_OK;
  int64_t version = node->loader->contrib_opset;
  if (!version)
    return HGR__ONNX_INVALID(node, "the node is of domain '%s', but the model imports no opset of it",
                             proto->domain);
  if (version < HGR__ONNX_CONTRIB_MIN_OPSET || version > HGR__ONNX_CONTRIB_MAX_OPSET)
    return HGR__ONNX_UNSUPPORTED(node, "the model imports opset %lld of domain '%s'; hgr reads opsets %d to %d of it",
                                 (long long)version, proto->domain, HGR__ONNX_CONTRIB_MIN_OPSET,
                                 HGR__ONNX_CONTRIB_MAX_OPSET);
  return HGR_OK;
}

static hgr_status_t import_node(hgr__onnx_loader_t* loader, uint32_t index) {
  hgr__onnx_node_t node;
  hgr_status_t status = node_context(loader, index, &node);
  const hgr__onnx_op_t* op = NULL;
  if (!status) status = find_op(&node, &op);
  if (!status) status = check_required_inputs(&node, op);
  bool done = false, from_input = false, constant = !status && hgr__onnx_all_constant(&node);
  for (uint32_t i = 0; i < node.input_count; ++i) from_input = from_input || (node.inputs[i] && node.inputs[i]->from_input);
  const hgr__onnx_names_t* captured = hgr__onnx_captures_of(loader, index); /* what its subgraphs read counts as inputs */
  for (size_t i = 0; captured && i < captured->count; ++i) {
    const hgr__onnx_value_t* v = hgr__onnx_find_value(loader, captured->names[i]);
    constant = constant && v && v->defined && v->constant;
    from_input = from_input || (v && v->from_input);
  }
  /* The parsed model keeps the folds of its own graph's nodes, by index. */
  bool kept = constant && !from_input && !loader->parent;
  if (kept && hgr__onnx_model_borrow_fold(loader, &node)) { /* an earlier import's fold */
    ++loader->report.folded;
    done = true;
  } else if (constant && op->fold) {
    status = op->fold(&node);
    if (!status) {
      ++loader->report.folded;
      done = true;
    } else if (hgr_status_code(status) == HGR_STATUS_UNIMPLEMENTED) {
      hgr_status_free(status); /* the device computes it */
      status = HGR_OK;
    }
  }
  if (!status && !done) status = hgr__onnx_import(&node, op); /* some imports fold too (ConstantOfShape, Range) */
  if (!status && kept) hgr__onnx_model_keep_fold(loader, &node);
  for (uint32_t k = 0; !status && k < node.output_count; ++k) /* a runtime value differs between imports too */
    if (node.outputs[k] && (from_input || !node.outputs[k]->constant)) node.outputs[k]->from_input = true;
  for (uint32_t k = 0; !status && k < node.output_count; ++k)
    if (node.outputs[k] && !node.outputs[k]->defined && node.outputs[k]->uses &&
        !(node.outputs[k]->consumer >= 0 && loader->fused[node.outputs[k]->consumer])) /* used inside a fusion */
      status = HGR_STATUS(HGR_STATUS_INVALID_ARGUMENT, "%s: output %u '%s' is used, but the op does not produce it "
                          "(the node declares %u outputs)", node.label, k, node.outputs[k]->name, node.output_count);
  node_free(&node);
  return status;
}

/* Whether every input node n names, and every name its subgraphs read from around
 * them, is a constant already (or omitted). */
static bool inputs_constant(const hgr__onnx_loader_t* loader, uint32_t n) {
  const Onnx__NodeProto* proto = loader->graph->node[n];
  const hgr__onnx_names_t* captured = hgr__onnx_captures_of(loader, n);
  size_t reads = proto->n_input + (captured ? captured->count : 0);
  for (size_t i = 0; i < reads; ++i) {
    const char* name = i < proto->n_input ? proto->input[i] : captured->names[i - proto->n_input];
    if (!name || !name[0]) continue;
    const hgr__onnx_value_t* v = hgr__onnx_find_value(loader, name);
    if (!v || !v->defined || !v->constant) return false;
  }
  return true;
}

static hgr_status_t mark_outputs(hgr__onnx_loader_t* loader) {
  hgr__onnx_node_t exit_node;
  memset(&exit_node, 0, sizeof(exit_node));
  exit_node.loader = loader;
  exit_node.opset = loader->opset;
  Onnx__NodeProto none = ONNX__NODE_PROTO__INIT;
  exit_node.proto = &none;
  for (size_t i = 0; i < loader->graph->n_output; ++i) {
    hgr__onnx_value_t* v = hgr__onnx_find_local(loader, loader->graph->output[i]->name);
    snprintf(exit_node.label, sizeof(exit_node.label), "graph output %zu '%.200s'", i, v->name);
    if (!v->defined)
      return HGR_STATUS(HGR_STATUS_INVALID_ARGUMENT, "%s is never defined", exit_node.label);
    hgr_value_t value;
    HGR_RETURN_IF_ERROR(hgr__onnx_runtime_held(&exit_node, v, &value));
    /* a float16 (bfloat16) value a fusion left in float (hgr__onnx_import): back to its declared type */
    const Onnx__TypeProto__Tensor* declared = hgr__onnx_tensor_type(loader->graph->output[i]);
    hgr_dtype_t narrow;
    if (v->onnx_type == HGR__ONNX_FLOAT && declared && declared->has_elem_type &&
        (declared->elem_type == HGR__ONNX_FLOAT16 || declared->elem_type == HGR__ONNX_BFLOAT16) &&
        hgr__onnx_held_dtype(declared->elem_type, &narrow))
      HGR_RETURN_IF_ERROR(hgr__onnx_add_cast(&exit_node, value, narrow, &value));
    if (v->onnx_type == HGR__ONNX_INT64) { /* back to int64 on exit */
      char* name = hgr__copy_text(loader->allocator, v->name);
      none.n_output = 1;
      none.output = &name;
      hgr_status_t status = name ? hgr__onnx_add_cast(&exit_node, value, (hgr_dtype_t){HGR_DTYPE_INT, 64, 1}, &value)
                                 : HGR_STATUS(HGR_STATUS_RESOURCE_EXHAUSTED, "out of host memory");
      none.n_output = 0;
      none.output = NULL;
      hgr__free(loader->allocator, name);
      HGR_RETURN_IF_ERROR(status);
    }
    HGR_RETURN_IF_ERROR(hgr_builder_mark_output(loader->builder, value));
  }
  return HGR_OK;
}

static hgr_status_t read_opset(hgr__onnx_loader_t* loader, const Onnx__ModelProto* model) {
  bool found = false;
  for (size_t i = 0; i < model->n_opset_import; ++i) {
    const Onnx__OperatorSetIdProto* o = model->opset_import[i];
    if (hgr__onnx_domain_is_default(o->domain)) {
      loader->opset = o->has_version ? o->version : 1;
      found = true;
    } else if (hgr__onnx_domain_is_contrib(o->domain)) {
      loader->contrib_opset = o->has_version ? o->version : 1; /* checked by the nodes of that domain */
    }
  }
  if (!found) { /* valid when no node needs it: then the model is all in other domains */
    const Onnx__GraphProto* g = model->graph;
    for (size_t n = 0; g && n < g->n_node; ++n)
      if (hgr__onnx_domain_is_default(g->node[n]->domain))
        return HGR_STATUS(HGR_STATUS_INVALID_ARGUMENT, "node %zu (%s) is of the default domain, but the model imports "
                          "no opset of it", n, g->node[n]->op_type ? g->node[n]->op_type : "");
    return HGR_STATUS(HGR_STATUS_UNIMPLEMENTED, "the model uses only other domains than the default one (%s%s); "
                      "hgr reads the default domain (ai.onnx), and some ops of " HGR__ONNX_CONTRIB_DOMAIN " beside it",
                      model->n_opset_import ? "" : "none imported",
                      model->n_opset_import && model->opset_import[0]->domain ? model->opset_import[0]->domain : "");
  }
  if (loader->opset < HGR__ONNX_MIN_OPSET || loader->opset > HGR__ONNX_MAX_OPSET)
    return HGR_STATUS(HGR_STATUS_UNIMPLEMENTED, "the model's opset is %lld; hgr reads opsets %d to %d of the default "
                      "domain", (long long)loader->opset, HGR__ONNX_MIN_OPSET, HGR__ONNX_MAX_OPSET);
  loader->report.opset = loader->opset;
  return HGR_OK;
}

static uint32_t op_node_count(const hgr_graph_t* graph) {
  uint32_t count = 0;
  for (size_t n = 0; n < hgr_graph_node_count(graph); ++n) {
    hgr_node_info_t info;
    if (!hgr_graph_node_info(graph, n, &info) && info.func_name) ++count;
  }
  return count;
}

/* Names each op node that computes an ONNX value after the value ("conv1" rather
 * than the builder's unique "conv1#12"), where no other node has that name, so that
 * profiles, dumps and outputs speak the model's names; before the graph is finished.
 * Out of memory, the builder's names stay (unique either way). */
static void rename_nodes(const hgr__onnx_loader_t* loader) {
  for (size_t i = 0; i < loader->value_count; ++i) {
    const hgr__onnx_value_t* v = &loader->values[i];
    if (!v->has_value || v->value.index) continue;
    bool is_op = false;
    const char* name = hgr__builder_node_name(loader->builder, v->value.node, &is_op);
    size_t length = strlen(v->name);
    if (!name || !is_op || strncmp(name, v->name, length) || name[length] != '#' ||
        hgr__builder_has_name(loader->builder, v->name))
      continue;
    hgr_status_free(hgr__builder_rename(loader->builder, v->value.node, v->name));
  }
}

/* ---- import -------------------------------------------------------------------------- */

/* The tables of loader's graph: its values (initializers from initializers, borrowed;
 * NULL: none), the names its nodes' subgraphs read, and per node live and fused. */
static hgr_status_t open_scope(hgr__onnx_loader_t* loader, hgr__onnx_tensor_t* const* initializers) {
  const Onnx__GraphProto* g = loader->graph;
  loader->live = hgr__calloc(loader->allocator, g->n_node + 1, sizeof(bool));
  loader->fused = hgr__calloc(loader->allocator, g->n_node + 1, sizeof(bool));
  if (!loader->live || !loader->fused) return HGR_STATUS(HGR_STATUS_RESOURCE_EXHAUSTED, "out of host memory");
  HGR_RETURN_IF_ERROR(collect_values(loader));
  if (initializers) HGR_RETURN_IF_ERROR(add_initializers(loader, initializers));
  return hgr__onnx_find_captures(loader);
}

/* Imports the live nodes of loader's graph, whose inputs and initializers are set:
 * first every node computable from constants alone, so that the fusions looking
 * ahead see the constants later nodes would fold (densenet's per-channel scales are
 * Unsqueezed after the BatchNormalization they follow); then the rest, in order. */
static hgr_status_t import_nodes(hgr__onnx_loader_t* loader) {
  uint32_t count = (uint32_t)loader->graph->n_node; /* a protobuf of at most 2 GiB holds fewer than 2^31 */
  loader->done = hgr__calloc(loader->allocator, count + 1, sizeof(bool));
  if (!loader->done) return HGR_STATUS(HGR_STATUS_RESOURCE_EXHAUSTED, "out of host memory");
  hgr_status_t status = HGR_OK;
  for (int pass = 0; pass < 2; ++pass) {
    for (uint32_t n = 0; !status && n < count; ++n) {
      if (!loader->live[n] || loader->done[n] || (pass == 0 ? !inputs_constant(loader, n) : loader->fused[n]))
        continue;
      if (hgr__onnx_stage_starts_at(loader, n)) status = hgr__onnx_stage_start(loader);
      loader->node_asked = loader->decisions_asked;
      if (!status) status = import_node(loader, n);
      loader->done[n] = !status; /* a node that ends a stage is not done: the stage carries what it reads */
    }
  }
  return status;
}

static hgr_status_t load_model(hgr__onnx_loader_t* loader, const hgr__onnx_model_t* parsed, hgr_graph_t** out_graph,
                               hgr_params_t** out_params) {
  const Onnx__ModelProto* model = parsed->proto;
  loader->report.ir_version = model->has_ir_version ? model->ir_version : 0;
  HGR_RETURN_IF_ERROR(read_opset(loader, model));
  loader->graph = model->graph;
  loader->depth = 1;
  loader->report.onnx_nodes = (uint32_t)model->graph->n_node;
  HGR_RETURN_IF_ERROR(open_scope(loader, parsed->initializers));
  HGR_RETURN_IF_ERROR(hgr__builder_create_in(loader->allocator, NULL, &loader->builder));
  hgr__onnx_node_t entry;
  memset(&entry, 0, sizeof(entry));
  Onnx__NodeProto none = ONNX__NODE_PROTO__INIT;
  entry.loader = loader;
  entry.proto = &none;
  HGR_RETURN_IF_ERROR(add_inputs(loader, &entry));
  HGR_RETURN_IF_ERROR(find_live(loader));
  hgr_status_t status = import_nodes(loader);
  if (status && loader->stage && loader->stage->cut) { /* a decision at run time ends the stage here */
    hgr_status_free(status);
    HGR_RETURN_IF_ERROR(hgr__onnx_stage_end(loader));
  } else {
    HGR_RETURN_IF_ERROR(status);
    HGR_RETURN_IF_ERROR(mark_outputs(loader));
  }
  rename_nodes(loader);
  HGR_RETURN_IF_ERROR(hgr_builder_finish(loader->builder, out_graph, out_params));
  {
    /* After renaming, so that a fused node takes its last node's model name. */
    hgr_passes_report_t fusion;
    hgr_graph_t* fused = NULL;
    HGR_RETURN_IF_ERROR(
        hgr_passes_apply(*out_graph, *out_params, loader->options ? &loader->options->passes : NULL, &fused, &fusion));
    hgr_graph_release(*out_graph);
    *out_graph = fused;
    loader->report.fused += fusion.conv_epilogue_fused;
    loader->report.elementwise_fused = fusion.elementwise_fused;
    loader->report.elementwise_groups = fusion.elementwise_groups;
    loader->report.passes = fusion;
  }
  loader->report.graph_nodes = op_node_count(*out_graph);
  return HGR_OK;
}

/* Frees loader's tables and the constants it owns; the builder with the model's
 * graph's loader (a subgraph's borrows its parent's). */
static void loader_free(hgr__onnx_loader_t* loader) {
  for (size_t i = 0; i < loader->value_count; ++i)
    if (!loader->values[i].borrowed) hgr__onnx_tensor_free(loader->values[i].constant);
  hgr__free(loader->allocator, loader->values);
  hgr__free(loader->allocator, loader->live);
  hgr__free(loader->allocator, loader->fused);
  hgr__free(loader->allocator, loader->done);
  hgr__free(loader->allocator, loader->in_flight);
  for (size_t n = 0; loader->captures && n < loader->graph->n_node; ++n)
    hgr__free(loader->allocator, loader->captures[n].names);
  hgr__free(loader->allocator, loader->captures);
  if (!loader->parent) hgr_builder_release(loader->builder);
}

/* ---- subgraphs ------------------------------------------------------------------------ */

/* A loader for graph inside owner's scope (the builder, the options and the counters
 * of the load are its parent's). where: "the body of <owner>", and the iteration. */
static hgr_status_t child_loader(hgr__onnx_loader_t* child, const hgr__onnx_node_t* owner, const char* attr,
                                 const Onnx__GraphProto* graph, int64_t iteration) {
  hgr__onnx_loader_t* parent = owner->loader;
  memset(child, 0, sizeof(*child));
  child->allocator = parent->allocator;
  child->graph = graph;
  child->opset = parent->opset;
  child->contrib_opset = parent->contrib_opset;
  child->options = parent->options;
  child->external = parent->external;
  child->builder = parent->builder;
  child->name_counter = parent->name_counter;
  child->deciding = parent->deciding;
  child->model = parent->model;
  child->parent = parent;
  child->owner = owner;
  child->depth = parent->depth + 1;
  child->unrolled = parent->unrolled;
  if (iteration >= 0)
    snprintf(child->where, sizeof(child->where), "the %.40s of %.300s, iteration %lld", attr, owner->label,
             (long long)iteration);
  else
    snprintf(child->where, sizeof(child->where), "the %.40s of %.300s", attr, owner->label);
  if (child->depth > HGR_ONNX_MAX_GRAPH_DEPTH) /* the wire check refused deeper models already */
    return HGR_STATUS(HGR_STATUS_INVALID_ARGUMENT, "%s: its %s nests graphs more than %d deep "
                      "(HGR_ONNX_MAX_GRAPH_DEPTH)", owner->label, attr, HGR_ONNX_MAX_GRAPH_DEPTH);
  return HGR_OK;
}

/* The kind of a value info that is not a tensor ("a sequence"), or NULL. */
static const char* non_tensor_kind(const Onnx__ValueInfoProto* info) {
  if (!info->type) return NULL;
  switch (info->type->value_case) {
    case ONNX__TYPE_PROTO__VALUE_SEQUENCE_TYPE: return "a sequence";
    case ONNX__TYPE_PROTO__VALUE_MAP_TYPE: return "a map";
    case ONNX__TYPE_PROTO__VALUE_OPTIONAL_TYPE: return "an optional";
    case ONNX__TYPE_PROTO__VALUE_SPARSE_TENSOR_TYPE: return "a sparse tensor";
    default: return NULL;
  }
}

/* Refuses a subgraph input or output declared as a sequence, map or optional. */
static hgr_status_t check_tensor_types(const hgr__onnx_subgraph_t* subgraph) {
  const Onnx__GraphProto* g = subgraph->graph;
  for (size_t i = 0; i < g->n_input + g->n_output; ++i) {
    bool is_input = i < g->n_input;
    const Onnx__ValueInfoProto* info = is_input ? g->input[i] : g->output[i - g->n_input];
    const char* kind = non_tensor_kind(info);
    if (kind)
      return HGR__ONNX_UNSUPPORTED(subgraph->owner, "its %s's %s %zu '%s' is %s; hgr computes tensors only",
                                   subgraph->attr, is_input ? "input" : "output", is_input ? i : i - g->n_input,
                                   info->name ? info->name : "", kind);
  }
  return HGR_OK;
}

hgr_status_t hgr__onnx_subgraph_open(hgr__onnx_node_t* owner, const char* attr, hgr__onnx_subgraph_t* out_subgraph) {
  memset(out_subgraph, 0, sizeof(*out_subgraph));
  out_subgraph->owner = owner;
  out_subgraph->attr = attr;
  const Onnx__AttributeProto* a = hgr__onnx_attr(owner, attr);
  if (!a || !a->g)
    return HGR__ONNX_INVALID(owner, "attr '%s' (a graph) is required%s", attr,
                             a ? ", but the attr holds no graph" : "");
  const Onnx__GraphProto* g = a->g;
  out_subgraph->graph = g;
  HGR_RETURN_IF_ERROR(check_tensor_types(out_subgraph));
  hgr_allocator_t allocator = owner->loader->allocator;
  out_subgraph->initializers = hgr__calloc(allocator, g->n_initializer + 1, sizeof(*out_subgraph->initializers));
  if (!out_subgraph->initializers) return HGR_STATUS(HGR_STATUS_RESOURCE_EXHAUSTED, "out of host memory");
  for (size_t i = 0; i < g->n_initializer; ++i) {
    const Onnx__TensorProto* t = g->initializer[i];
    if (!t->name || !t->name[0])
      return HGR__ONNX_INVALID(owner, "initializer %zu of its %s has no name", i, attr);
    char where[800];
    snprintf(where, sizeof(where), "initializer '%.120s' of the %.40s of %.600s", t->name, attr, owner->label);
    HGR_RETURN_IF_ERROR(hgr__onnx_tensor_decode(allocator, t, &owner->loader->external, where,
                                                &out_subgraph->initializers[i]));
  }
  return HGR_OK;
}

void hgr__onnx_subgraph_close(hgr__onnx_subgraph_t* subgraph) {
  for (size_t i = 0; subgraph->initializers && i < subgraph->graph->n_initializer; ++i)
    hgr__onnx_tensor_free(subgraph->initializers[i]);
  if (subgraph->owner) hgr__free(subgraph->owner->loader->allocator, subgraph->initializers);
  subgraph->initializers = NULL;
}

/* One import's cost against HGR_ONNX_MAX_UNROLLED_NODES: its nodes, at least one. */
static uint64_t import_cost(const hgr__onnx_subgraph_t* subgraph) {
  return subgraph->graph->n_node ? (uint64_t)subgraph->graph->n_node : 1;
}

hgr_status_t hgr__onnx_subgraph_check_unroll(const hgr__onnx_subgraph_t* subgraph, uint64_t iterations) {
  uint64_t before = subgraph->owner->loader->unrolled, cost = import_cost(subgraph);
  if (before <= HGR_ONNX_MAX_UNROLLED_NODES && iterations <= (HGR_ONNX_MAX_UNROLLED_NODES - before) / cost)
    return HGR_OK;
  char earlier[96] = "";
  if (before)
    snprintf(earlier, sizeof(earlier), ", with the %llu nodes imported from subgraphs before it",
             (unsigned long long)before);
  return HGR_STATUS(HGR_STATUS_RESOURCE_EXHAUSTED, "%s: %llu iterations \u00d7 %zu nodes exceed hgr's limit of %d "
                    "nodes unrolled%s (HGR_ONNX_MAX_UNROLLED_NODES)", subgraph->owner->label,
                    (unsigned long long)iterations, subgraph->graph->n_node, HGR_ONNX_MAX_UNROLLED_NODES, earlier);
}

void hgr__onnx_value_release(hgr__onnx_value_t* value) {
  if (!value->borrowed) hgr__onnx_tensor_free(value->constant);
  memset(value, 0, sizeof(*value));
}

/* Gives the graph inputs of child the values of inputs: constants borrowed. */
static hgr_status_t bind_inputs(hgr__onnx_loader_t* child, const hgr__onnx_value_t* inputs) {
  const Onnx__GraphProto* g = child->graph;
  for (size_t i = 0; i < g->n_input; ++i) {
    hgr__onnx_value_t* v = hgr__onnx_find_local(child, g->input[i]->name);
    const hgr__onnx_value_t* given = &inputs[i];
    if (v->constant && !v->borrowed) hgr__onnx_tensor_free(v->constant);
    v->onnx_type = given->onnx_type;
    v->ndim = given->ndim;
    memcpy(v->shape, given->shape, sizeof(v->shape));
    v->constant = given->constant;
    v->borrowed = true;
    v->has_value = given->has_value;
    v->value = given->value;
    v->from_input = given->from_input;
    v->defined = true;
  }
  return HGR_OK;
}

/* Copies child's output k (its own value, or one of an enclosing scope) into out. */
static hgr_status_t copy_output(hgr__onnx_loader_t* child, const hgr__onnx_subgraph_t* subgraph, size_t k,
                                hgr__onnx_value_t* out) {
  const char* name = subgraph->graph->output[k]->name;
  const hgr__onnx_value_t* v = hgr__onnx_find_value(child, name);
  if (!v || !v->defined)
    return HGR_STATUS(HGR_STATUS_INVALID_ARGUMENT, "%s: output %zu '%s' is never defined", child->where, k,
                      name ? name : "");
  *out = *v;
  out->constant = NULL;
  out->borrowed = false;
  out->producer = -1;
  out->consumer = -1;
  out->uses = 0;
  out->graph_output = false;
  out->scoped = true;
  if (v->constant) HGR_RETURN_IF_ERROR(hgr__onnx_tensor_copy(child->allocator, v->constant, &out->constant));
  return HGR_OK;
}

hgr_status_t hgr__onnx_subgraph_import(hgr__onnx_subgraph_t* subgraph, int64_t iteration,
                                       const hgr__onnx_value_t* inputs, uint32_t input_count, uint32_t known_outputs,
                                       hgr__onnx_value_t* outputs) {
  const hgr__onnx_node_t* owner = subgraph->owner;
  hgr__onnx_loader_t* parent = owner->loader;
  const Onnx__GraphProto* g = subgraph->graph;
  memset(outputs, 0, g->n_output * sizeof(*outputs));
  if (input_count != g->n_input)
    return HGR__ONNX_INVALID(owner, "its %s takes %zu inputs; the node gives it %u", subgraph->attr, g->n_input,
                             input_count);
  uint64_t cost = import_cost(subgraph);
  if (cost > HGR_ONNX_MAX_UNROLLED_NODES || parent->unrolled > HGR_ONNX_MAX_UNROLLED_NODES - cost)
    return HGR_STATUS(HGR_STATUS_RESOURCE_EXHAUSTED, "%s: its %s's %zu nodes, after the %llu nodes imported from "
                      "subgraphs before, exceed hgr's limit of %d nodes unrolled (HGR_ONNX_MAX_UNROLLED_NODES)",
                      owner->label, subgraph->attr, g->n_node, (unsigned long long)parent->unrolled,
                      HGR_ONNX_MAX_UNROLLED_NODES);
  hgr__onnx_loader_t child;
  hgr_status_t status = child_loader(&child, owner, subgraph->attr, g, iteration);
  child.unrolled += cost;
  if (!status) {
    status = open_scope(&child, subgraph->initializers);
    if (!status) status = bind_inputs(&child, inputs);
    if (!status) status = find_live(&child);
    if (status) status = hgr_status_annotate(status, "%s", child.where);
  }
  child.report.onnx_nodes = (uint32_t)g->n_node;
  if (!status) status = import_nodes(&child);
  size_t copied = 0;
  for (; !status && copied < g->n_output; ++copied) {
    status = copy_output(&child, subgraph, copied, &outputs[copied]);
    hgr__onnx_value_t* v = hgr__onnx_find_value(&child, g->output[copied]->name);
    if (!status && copied < known_outputs && !v->constant) status = hgr__onnx_note_deciding(&child, v);
  }
  /* the load's counters go on from the child's */
  parent->name_counter = child.name_counter;
  parent->unrolled = child.unrolled;
  parent->report.onnx_nodes += child.report.onnx_nodes;
  parent->report.folded += child.report.folded;
  parent->report.removed += child.report.removed;
  parent->report.fused += child.report.fused;
  loader_free(&child);
  if (status)
    for (size_t k = 0; k < g->n_output; ++k) hgr__onnx_value_release(&outputs[k]);
  return status;
}

/* ---- ops without shapes --------------------------------------------------------------- */

/* Checks that hgr has an op for every live node of loader's graph (its values
 * collected), and of the subgraphs of those nodes, recursively. */
static hgr_status_t check_graph_ops(hgr__onnx_loader_t* loader) {
  const Onnx__GraphProto* g = loader->graph;
  loader->live = hgr__calloc(loader->allocator, g->n_node + 1, sizeof(bool));
  if (!loader->live) return HGR_STATUS(HGR_STATUS_RESOURCE_EXHAUSTED, "out of host memory");
  hgr_status_t status = collect_values(loader);
  if (!status) status = hgr__onnx_find_captures(loader);
  if (!status) status = find_live(loader);
  if (status && loader->parent) status = hgr_status_annotate(status, "%s", loader->where);
  for (uint32_t n = 0; !status && n < (uint32_t)g->n_node; ++n) {
    if (!loader->live[n]) continue;
    hgr__onnx_node_t node;
    const hgr__onnx_op_t* op = NULL;
    node_header(loader, n, &node);
    status = find_op(&node, &op);
    const Onnx__NodeProto* proto = g->node[n];
    for (size_t a = 0; !status && a < proto->n_attribute; ++a) {
      const Onnx__AttributeProto* attr = proto->attribute[a];
      for (size_t k = 0; !status && k < attr->n_graphs + (attr->g ? 1 : 0); ++k) {
        hgr__onnx_loader_t child;
        status = child_loader(&child, &node, attr->name ? attr->name : "graph attr",
                              k < attr->n_graphs ? attr->graphs[k] : attr->g, -1);
        if (!status) status = check_graph_ops(&child);
        loader_free(&child);
      }
    }
  }
  return status;
}

hgr_status_t hgr__onnx_model_check_ops(const hgr__onnx_model_t* model) {
  hgr__onnx_loader_t loader;
  memset(&loader, 0, sizeof(loader));
  loader.allocator = model->allocator;
  loader.graph = model->proto->graph;
  loader.depth = 1;
  hgr_status_t status = read_opset(&loader, model->proto);
  if (!status) status = check_graph_ops(&loader);
  loader_free(&loader); /* no builder */
  return status;
}

hgr_status_t hgr__onnx_model_import(hgr__onnx_model_t* model, const hgr_onnx_options_t* options,
                                    hgr_graph_t** out_graph, hgr_params_t** out_params, hgr_onnx_report_t* out_report,
                                    bool* out_deciding) {
  return hgr__onnx_model_import_stage(model, options, NULL, out_graph, out_params, out_report, out_deciding);
}

hgr_status_t hgr__onnx_model_import_stage(hgr__onnx_model_t* model, const hgr_onnx_options_t* options,
                                          hgr__onnx_stage_t* stage, hgr_graph_t** out_graph,
                                          hgr_params_t** out_params, hgr_onnx_report_t* out_report,
                                          bool* out_deciding) {
  *out_graph = NULL;
  *out_params = NULL;
  hgr__onnx_loader_t loader;
  memset(&loader, 0, sizeof(loader));
  loader.allocator = model->allocator;
  loader.options = options;
  loader.stage = stage;
  if (stage) stage->cut = false;
  loader.external.base_directory = model->base_directory;
  bool* deciding = hgr__calloc(loader.allocator, model->proto->graph->n_input + 1, sizeof(*deciding));
  if (!deciding) return HGR_STATUS(HGR_STATUS_RESOURCE_EXHAUSTED, "out of host memory");
  loader.deciding = deciding;
  loader.model = model;
  hgr_graph_t* graph = NULL;
  hgr_params_t* params = NULL;
  /* The parsed initializers count as held from the start. */
  hgr__onnx_limits_t limits = model->limits;
  limits.peak = limits.held;
  if (options) {
    limits.max_tensor_bytes = options->max_tensor_bytes;
    limits.max_loader_bytes = options->max_loader_bytes;
  }
  hgr__onnx_limits_enter(&limits);
  hgr_status_t status = load_model(&loader, model, &graph, &params);
  loader_free(&loader); /* credits its tensors to limits */
  hgr__onnx_limits_enter(NULL);
  loader.report.loader_peak_bytes = limits.peak;
  if (out_report) *out_report = loader.report;
  if (out_deciding)
    for (size_t i = 0; i < model->input_count; ++i) out_deciding[i] = deciding[model->inputs[i]];
  hgr__free(loader.allocator, deciding);
  if (status) {
    hgr_graph_release(graph);
    hgr_params_release(params);
    return status;
  }
  *out_graph = graph;
  *out_params = params;
  return HGR_OK;
}

/* A load's allocator: its instance's (hgr_onnx_options_set_place), else the system's. */
static hgr_allocator_t load_allocator(const hgr_onnx_options_t* options) {
  return hgr__instance_allocator(options ? options->instance : NULL);
}

static hgr_status_t place_graph(const hgr_onnx_options_t* options, hgr_graph_t** inout_graph) {
  hgr_placement_t* placement = NULL;
  HGR_RETURN_IF_ERROR(hgr_place(options->instance, *inout_graph, options->place, &placement));
  hgr_graph_t* placed = hgr_graph_retain(hgr_placement_graph(placement));
  hgr_placement_release(placement);
  hgr_graph_release(*inout_graph);
  *inout_graph = placed;
  return HGR_OK;
}

hgr_status_t hgr_onnx_load_memory(const void* bytes, size_t size, const char* base_directory,
                                  const hgr_onnx_options_t* options, hgr_graph_t** out_graph, hgr_params_t** out_params,
                                  hgr_onnx_report_t* out_report) {
  if (!out_graph || !out_params || (!bytes && size))
    return HGR_STATUS(HGR_STATUS_INVALID_ARGUMENT, "hgr_onnx_load_memory: NULL argument");
  *out_graph = NULL;
  *out_params = NULL;
  if (out_report) memset(out_report, 0, sizeof(*out_report));
  hgr__onnx_model_t* model = NULL;
  HGR_RETURN_IF_ERROR(hgr__onnx_model_parse(load_allocator(options), bytes, size, base_directory, options, &model));
  hgr_graph_t* graph = NULL;
  hgr_params_t* params = NULL;
  hgr_status_t status = hgr__onnx_model_import(model, options, &graph, &params, out_report, NULL);
  hgr__onnx_model_free(model);
  if (!status && options && options->place) status = place_graph(options, &graph);
  if (status) {
    hgr_graph_release(graph);
    hgr_params_release(params);
    return status;
  }
  *out_graph = graph;
  *out_params = params;
  return HGR_OK;
}

hgr_status_t hgr_onnx_load_file(const char* path, const hgr_onnx_options_t* options, hgr_graph_t** out_graph,
                                hgr_params_t** out_params, hgr_onnx_report_t* out_report) {
  if (!path) return HGR_STATUS(HGR_STATUS_INVALID_ARGUMENT, "hgr_onnx_load_file: NULL path");
  hgr__file_bytes_t bytes;
  char* folder = NULL;
  hgr_allocator_t allocator = load_allocator(options);
  hgr_status_t status = hgr__onnx_model_read_file(allocator, path, &bytes, &folder);
  if (!status)
    status = hgr_onnx_load_memory(bytes.data, bytes.length, folder, options, out_graph, out_params, out_report);
  hgr__free(allocator, folder);
  hgr__file_unmap(allocator, &bytes);
  return hgr_status_annotate(status, "%s", path);
}

hgr_status_t hgr_onnx_read_tensor(const void* bytes, size_t size, hgr_dtype_t* out_dtype, int64_t* out_shape,
                                  int32_t* out_ndim, void** out_data, size_t* out_bytes, char** out_name) {
  if (!out_dtype || !out_shape || !out_ndim || !out_data || !out_bytes || (!bytes && size))
    return HGR_STATUS(HGR_STATUS_INVALID_ARGUMENT, "hgr_onnx_read_tensor: NULL argument");
  *out_data = NULL;
  if (out_name) *out_name = NULL;
  HGR_RETURN_IF_ERROR(hgr__onnx_wire_check(bytes, size, &onnx__tensor_proto__descriptor));
  /* No instance, and *out_data and *out_name are the caller's to free(): the system's. */
  hgr_allocator_t system = hgr_allocator_system();
  hgr__onnx_protobuf_allocator_t protobuf;
  hgr__onnx_protobuf_allocator_init(&protobuf, system);
  Onnx__TensorProto* proto = onnx__tensor_proto__unpack(&protobuf.base, size, bytes);
  if (!proto && protobuf.failed)
    return HGR_STATUS(HGR_STATUS_RESOURCE_EXHAUSTED, "out of host memory parsing a TensorProto of %zu bytes", size);
  if (!proto)
    return HGR_STATUS(HGR_STATUS_INVALID_ARGUMENT, "not a TensorProto: %zu bytes that do not parse", size);
  hgr__onnx_tensor_t* t = NULL;
  hgr_status_t status = hgr__onnx_tensor_decode(system, proto, NULL, "the tensor", &t);
  if (!status) status = hgr__onnx_type_dtype(t->onnx_type, out_dtype);
  if (!status && out_name) status = hgr__strdup(system, proto->name ? proto->name : "", out_name);
  if (!status) {
    *out_ndim = t->ndim;
    memcpy(out_shape, t->shape, sizeof(int64_t) * (size_t)t->ndim);
    *out_bytes = (size_t)(t->count * hgr__onnx_type_bytes(t->onnx_type));
    *out_data = t->data;
    t->data = NULL;
  }
  hgr__free(system, t ? t->data : NULL);
  hgr__free(system, t);
  onnx__tensor_proto__free_unpacked(proto, &protobuf.base);
  return status;
}

hgr_status_t hgr_onnx_read_tensor_file(const char* path, hgr_dtype_t* out_dtype, int64_t* out_shape,
                                       int32_t* out_ndim, void** out_data, size_t* out_bytes, char** out_name) {
  if (!path || !out_data) return HGR_STATUS(HGR_STATUS_INVALID_ARGUMENT, "hgr_onnx_read_tensor_file: NULL argument");
  *out_data = NULL;
  void* bytes = NULL;
  size_t length = 0;
  hgr_allocator_t system = hgr_allocator_system(); /* no instance */
  HGR_RETURN_IF_ERROR(hgr__file_read(system, path, HGR__FILE_MAX_TENSOR_PROTO_BYTES, &bytes, &length));
  hgr_status_t status = hgr_onnx_read_tensor(bytes, length, out_dtype, out_shape, out_ndim, out_data, out_bytes,
                                             out_name);
  hgr__free(system, bytes);
  return hgr_status_annotate(status, "%s", path);
}
