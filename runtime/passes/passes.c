/* The pipeline (hgr/passes.h): the passes switched on, in order, each on the graph
 * the one before gave. A pass that changes nothing hands its graph on retained, so
 * a pipeline that changes nothing returns the caller's graph. The params the passes
 * make are kept aside until every pass has succeeded, so that a failure leaves the
 * caller's params as they were. */
#include "alloc.h"
#include "passes.h"

#include <stdlib.h>
#include <string.h>

void hgr_passes_options_init(hgr_passes_options_t* options) {
  if (!options) return;
  memset(options, 0, sizeof(*options));
  options->layer_norm = true;
  options->gelu = true;
  options->attention = true;
  options->conv_epilogue = true;
  options->gemm_epilogue = true;
  options->gemm_pack = true;
  options->out_layout = true;
  options->sibling_gemms = true;
  options->skip_layer_norm = true;
  options->elementwise = true;
}

size_t hgr_passes_report_counts(const hgr_passes_report_t* report, hgr_passes_count_t* out_counts) {
  const hgr_passes_count_t counts[] = {
      {"layer_norms", "layer norms", report->layer_norms, report->layer_norm_fused},
      {"gelus", "GELUs", report->gelus, report->gelu_fused},
      {"attentions", "attentions", report->attentions, report->attention_fused},
      {"conv_epilogues", "conv epilogues", report->conv_epilogues, report->conv_epilogue_fused},
      {"gemm_epilogues", "GEMM epilogues", report->gemm_epilogues, report->gemm_epilogue_fused},
      {"packed_weights", "packed GEMM weights", report->packed_weights, report->packed_weight_readers},
      {"out_layouts", "output layouts", report->out_layouts, report->out_layout_fused},
      {"sibling_gemms", "sibling GEMMs", report->sibling_gemms, report->sibling_gemm_fused},
      {"skip_layer_norms", "skip layer norms", report->skip_layer_norms, report->skip_layer_norm_fused},
      {"elementwise_groups", "elementwise groups", report->elementwise_groups, report->elementwise_fused},
  };
  _Static_assert(sizeof(counts) / sizeof(counts[0]) <= HGR_PASSES_COUNT_MAX, "raise HGR_PASSES_COUNT_MAX");
  memcpy(out_counts, counts, sizeof(counts));
  return sizeof(counts) / sizeof(counts[0]);
}

static int compare_names(const void* a, const void* b) {
  return strcmp(*(const char* const*)a, *(const char* const*)b);
}

/* The names of graph's inputs, sorted, from allocator (NULL when out of memory). */
static const char** input_names(hgr_allocator_t allocator, const hgr_graph_t* graph) {
  const char** names = hgr__alloc(allocator, (graph->arg_count + 1) * sizeof(*names));
  if (!names) return NULL;
  for (uint32_t i = 0; i < graph->arg_count; ++i) names[i] = graph->nodes[graph->arg_nodes[i]].name;
  qsort(names, graph->arg_count, sizeof(*names), compare_names);
  return names;
}

static bool has_name(const char* const* names, uint32_t count, const char* name) {
  return count && bsearch(&name, names, count, sizeof(*names), compare_names);
}

/* Moves the params the passes made into params, and removes the params that named
 * an input of graph which result no longer has. */
static hgr_status_t commit_params(hgr_params_t* params, hgr_params_t* made, const hgr_graph_t* graph,
                                  const hgr_graph_t* result) {
  hgr_allocator_t allocator = hgr__graph_allocator(graph); /* scratch of the pipeline on graph */
  const char** before = input_names(allocator, graph);
  const char** after = input_names(allocator, result);
  bool* drop =
      hgr__calloc(allocator, hgr_params_count(params) + (made ? hgr_params_count(made) : 0) + 1, sizeof(*drop));
  hgr_status_t status = HGR_OK;
  if (!before || !after || !drop)
    status = HGR_STATUS(HGR_STATUS_RESOURCE_EXHAUSTED, "running the graph passes: out of host memory");
  for (size_t p = 0; !status && p < hgr_params_count(params); ++p) {
    hgr_tensor_info_t info;
    status = hgr_params_get(params, p, &info, NULL);
    drop[p] =
        !status && has_name(before, graph->arg_count, info.name) && !has_name(after, result->arg_count, info.name);
  }
  size_t kept = hgr_params_count(params);
  if (!status && made) status = hgr__params_take(params, made); /* the last step that may fail */
  /* a param a pass made that a later pass replaced (packed weights joined) */
  for (size_t p = kept; !status && p < hgr_params_count(params); ++p) {
    hgr_tensor_info_t info;
    hgr_status_t got = hgr_params_get(params, p, &info, NULL);
    drop[p] = !got && !has_name(after, result->arg_count, info.name);
    hgr_status_free(got);
  }
  if (!status) hgr__params_drop(params, drop);
  hgr__free(allocator, before);
  hgr__free(allocator, after);
  hgr__free(allocator, drop);
  return status;
}

/* Moves the params a pass made (from, may be NULL; both from params' allocator) into
 * *made, the pipeline's so far (NULL: from becomes it); from is consumed either way. */
static hgr_status_t keep_made(hgr_params_t** made, hgr_params_t* from) {
  if (!from) return HGR_OK;
  if (!*made) {
    *made = from;
    return HGR_OK;
  }
  hgr_status_t status = hgr__params_take(*made, from);
  hgr_params_release(from);
  return status;
}

hgr_status_t hgr_passes_apply(const hgr_graph_t* graph, hgr_params_t* params, const hgr_passes_options_t* options,
                              hgr_graph_t** out_graph, hgr_passes_report_t* out_report) {
  hgr_passes_report_t report;
  memset(&report, 0, sizeof(report));
  if (out_report) *out_report = report;
  if (!graph || !out_graph) return HGR_STATUS(HGR_STATUS_INVALID_ARGUMENT, "hgr_passes_apply: NULL argument");
  *out_graph = NULL;
  hgr_status_t placed = hgr__pass_check_unplaced(graph, "running the graph passes");
  if (placed) { /* kept as it is: fusing would drop its device keys */
    hgr_status_free(placed);
    if (out_report) out_report->placed = true;
    *out_graph = hgr_graph_retain((hgr_graph_t*)graph);
    return HGR_OK;
  }
  hgr_passes_options_t defaults;
  hgr_passes_options_init(&defaults);
  if (!options) options = &defaults;
  hgr_graph_t* current = hgr_graph_retain((hgr_graph_t*)graph);
  hgr_params_t* made = NULL;
  hgr_status_t status = HGR_OK;
  hgr__fuse_report_t pass;
  const hgr__pass_log_t log = {options->log, options->log_user};
  const bool patterns[HGR__PATTERN_COUNT] = {[HGR__PATTERN_LAYER_NORM] = options->layer_norm,
                                             [HGR__PATTERN_GELU] = options->gelu};
  if (options->layer_norm || options->gelu) {
    hgr__fuse_report_t found[HGR__PATTERN_COUNT];
    hgr_graph_t* next = NULL;
    status = hgr__fuse_patterns(current, params, patterns, &log, &next, found);
    if (!status) {
      hgr_graph_release(current);
      current = next;
      report.layer_norms = found[HGR__PATTERN_LAYER_NORM].groups;
      report.layer_norm_fused = found[HGR__PATTERN_LAYER_NORM].fused_nodes;
      report.gelus = found[HGR__PATTERN_GELU].groups;
      report.gelu_fused = found[HGR__PATTERN_GELU].fused_nodes;
    }
  }
  if (!status && options->attention) {
    hgr_graph_t* next = NULL;
    status = hgr__fuse_attention(current, params, &log, &next, &pass);
    if (!status) {
      hgr_graph_release(current);
      current = next;
      report.attentions = pass.groups;
      report.attention_fused = pass.fused_nodes;
    }
  }
  if (!status && options->conv_epilogue) {
    hgr_graph_t* next = NULL;
    status = hgr__fuse_conv_epilogue(current, params, &log, &next, &made, &pass);
    if (!status) {
      hgr_graph_release(current);
      current = next;
      report.conv_epilogues = pass.groups;
      report.conv_epilogue_fused = pass.fused_nodes;
    }
  }
  if (!status && options->gemm_epilogue) {
    hgr_graph_t* next = NULL;
    status = hgr__fuse_gemm_epilogue(current, params, &log, &next, &pass);
    if (!status) {
      hgr_graph_release(current);
      current = next;
      report.gemm_epilogues = pass.groups;
      report.gemm_epilogue_fused = pass.fused_nodes;
    }
  }
  if (!status && options->gemm_pack && params) {
    hgr_graph_t* next = NULL;
    hgr_params_t* packed = NULL;
    status = hgr__pack_gemm_weights(current, params, &log, &next, &packed, &pass);
    if (!status) status = keep_made(&made, packed);
    else hgr_params_release(packed);
    if (!status) {
      hgr_graph_release(current);
      current = next;
      report.packed_weights = pass.groups;
      report.packed_weight_readers = pass.fused_nodes;
    } else {
      hgr_graph_release(next);
    }
  }
  if (!status && options->out_layout) {
    hgr_graph_t* next = NULL;
    status = hgr__fuse_out_layout(current, &log, &next, &pass);
    if (!status) {
      hgr_graph_release(current);
      current = next;
      report.out_layouts = pass.groups;
      report.out_layout_fused = pass.fused_nodes;
    }
  }
  if (!status && options->sibling_gemms && params) {
    hgr_graph_t* next = NULL;
    hgr_params_t* joined = NULL;
    status = hgr__fuse_sibling_gemms(current, params, made, &log, &next, &joined, &pass);
    if (!status) status = keep_made(&made, joined);
    else hgr_params_release(joined);
    if (!status) {
      hgr_graph_release(current);
      current = next;
      report.sibling_gemms = pass.groups;
      report.sibling_gemm_fused = pass.fused_nodes;
    } else {
      hgr_graph_release(next);
    }
  }
  if (!status && options->skip_layer_norm) {
    hgr_graph_t* next = NULL;
    status = hgr__fuse_skip_norm(current, &log, &next, &pass);
    if (!status) {
      hgr_graph_release(current);
      current = next;
      report.skip_layer_norms = pass.groups;
      report.skip_layer_norm_fused = pass.fused_nodes;
    }
  }
  if (!status && options->elementwise) {
    hgr_graph_t* next = NULL;
    status = hgr__fuse_elementwise(current, &log, &next, &pass);
    if (!status) {
      hgr_graph_release(current);
      current = next;
      report.elementwise_groups = pass.groups;
      report.elementwise_fused = pass.fused_nodes;
    }
  }
  if (!status && params && current != graph) status = commit_params(params, made, graph, current);
  hgr_params_release(made);
  if (status) {
    hgr_graph_release(current);
    return status;
  }
  if (out_report) *out_report = report;
  *out_graph = current;
  return HGR_OK;
}
