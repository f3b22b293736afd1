/* Scopes (onnx_internal.h, hgr__onnx_find_captures): the names a node's subgraphs
 * read from the graphs around them, nested subgraphs' included, found once per
 * graph from the protos alone, so that the loader counts them as the node's inputs
 * (liveness, folding, the inputs that decide shapes). A name is free in a graph when
 * the graph reads it and neither its inputs, its initializers nor its nodes' outputs
 * define it. */
#include <stdlib.h>
#include <string.h>

#include "alloc.h"
#include "onnx_internal.h"

typedef struct name_list_t {
  const char** names;
  size_t count, capacity;
} name_list_t;

static hgr_status_t name_add(hgr_allocator_t allocator, name_list_t* list, const char* name) {
  if (list->count == list->capacity) {
    size_t capacity = list->capacity ? 2 * list->capacity : 16;
    const char** grown = hgr__realloc_array(allocator, list->names, capacity, sizeof(*grown));
    if (!grown) return HGR_STATUS(HGR_STATUS_RESOURCE_EXHAUSTED, "out of host memory");
    list->names = grown;
    list->capacity = capacity;
  }
  list->names[list->count++] = name;
  return HGR_OK;
}

static int compare_names(const void* a, const void* b) {
  return strcmp(*(const char* const*)a, *(const char* const*)b);
}

/* Sorts list and drops repeated names. */
static void name_unique(name_list_t* list) {
  if (!list->count) return;
  qsort(list->names, list->count, sizeof(*list->names), compare_names);
  size_t unique = 1;
  for (size_t i = 1; i < list->count; ++i)
    if (strcmp(list->names[i], list->names[unique - 1])) list->names[unique++] = list->names[i];
  list->count = unique;
}

static bool name_in(const name_list_t* sorted, const char* name) {
  return sorted->count &&
         bsearch(&name, sorted->names, sorted->count, sizeof(*sorted->names), compare_names) != NULL;
}

static bool has_subgraphs(const Onnx__NodeProto* node) {
  for (size_t a = 0; a < node->n_attribute; ++a)
    if (node->attribute[a]->g || node->attribute[a]->n_graphs) return true;
  return false;
}

static hgr_status_t free_names(hgr_allocator_t allocator, const Onnx__GraphProto* g, uint32_t depth, name_list_t* out);

/* Adds to out the names node's graph attrs read that are not in defined. */
static hgr_status_t subgraph_names(hgr_allocator_t allocator, const Onnx__NodeProto* node, const name_list_t* defined,
                                   uint32_t depth, name_list_t* out) {
  hgr_status_t status = HGR_OK;
  for (size_t a = 0; !status && a < node->n_attribute; ++a) {
    const Onnx__AttributeProto* attr = node->attribute[a];
    for (size_t k = 0; !status && k < attr->n_graphs + (attr->g ? 1 : 0); ++k) {
      name_list_t inner = {0};
      status = free_names(allocator, k < attr->n_graphs ? attr->graphs[k] : attr->g, depth + 1, &inner);
      for (size_t i = 0; !status && i < inner.count; ++i)
        if (!defined || !name_in(defined, inner.names[i])) status = name_add(allocator, out, inner.names[i]);
      hgr__free(allocator, inner.names);
    }
  }
  return status;
}

/* The names g reads that it does not define (its inputs, initializers and node
 * outputs), nested graphs' included: what it takes from the scopes around it. */
static hgr_status_t free_names(hgr_allocator_t allocator, const Onnx__GraphProto* g, uint32_t depth, name_list_t* out) {
  if (depth > HGR_ONNX_MAX_GRAPH_DEPTH) /* the wire check refused deeper models already */
    return HGR_STATUS(HGR_STATUS_INVALID_ARGUMENT, "graphs nest more than %d deep (HGR_ONNX_MAX_GRAPH_DEPTH)",
                      HGR_ONNX_MAX_GRAPH_DEPTH);
  name_list_t defined = {0};
  hgr_status_t status = HGR_OK;
  for (size_t i = 0; !status && i < g->n_input; ++i)
    if (g->input[i]->name) status = name_add(allocator, &defined, g->input[i]->name);
  for (size_t i = 0; !status && i < g->n_initializer; ++i)
    if (g->initializer[i]->name) status = name_add(allocator, &defined, g->initializer[i]->name);
  for (size_t n = 0; !status && n < g->n_node; ++n)
    for (size_t k = 0; !status && k < g->node[n]->n_output; ++k) {
      const char* name = g->node[n]->output[k];
      if (name && name[0]) status = name_add(allocator, &defined, name);
    }
  name_unique(&defined);
  for (size_t n = 0; !status && n < g->n_node; ++n) {
    const Onnx__NodeProto* node = g->node[n];
    for (size_t i = 0; !status && i < node->n_input; ++i)
      if (node->input[i] && node->input[i][0] && !name_in(&defined, node->input[i]))
        status = name_add(allocator, out, node->input[i]);
    if (!status && has_subgraphs(node)) status = subgraph_names(allocator, node, &defined, depth, out);
  }
  for (size_t i = 0; !status && i < g->n_output; ++i)
    if (g->output[i]->name && g->output[i]->name[0] && !name_in(&defined, g->output[i]->name))
      status = name_add(allocator, out, g->output[i]->name);
  hgr__free(allocator, defined.names);
  return status;
}

hgr_status_t hgr__onnx_find_captures(hgr__onnx_loader_t* loader) {
  const Onnx__GraphProto* g = loader->graph;
  for (size_t n = 0; n < g->n_node; ++n) {
    if (!has_subgraphs(g->node[n])) continue;
    if (!loader->captures && !(loader->captures = hgr__calloc(loader->allocator, g->n_node, sizeof(*loader->captures))))
      return HGR_STATUS(HGR_STATUS_RESOURCE_EXHAUSTED, "out of host memory");
    name_list_t names = {0};
    hgr_status_t status = subgraph_names(loader->allocator, g->node[n], NULL, loader->depth, &names);
    name_unique(&names);
    loader->captures[n] = (hgr__onnx_names_t){.names = names.names, .count = names.count};
    HGR_RETURN_IF_ERROR(status);
  }
  return HGR_OK;
}

const hgr__onnx_names_t* hgr__onnx_captures_of(const hgr__onnx_loader_t* loader, uint32_t index) {
  return loader->captures ? &loader->captures[index] : NULL;
}
