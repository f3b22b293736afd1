/* hgr._hgr.place: placement (hgr/place.h) of a Graph on devices in priority
 * order, with rules and a policy in `hgr run --place` syntax
 * (hgr_place_options_parse), returning the placed Graph and the placement's
 * reports as text: the summary (hgr_placement_write_summary) and the JSON report
 * (hgr_placement_write_json). hgr.place (python/hgr/placement.py) is the public
 * function over it. */
#include "hgrpy.h"

#include <stdio.h>
#include <stdlib.h>

typedef hgr_status_t (*placement_writer_fn)(const hgr_placement_t*, FILE*);

/* A placement report written into a new str. */
static PyObject* report_text(const hgr_placement_t* placement, placement_writer_fn write) {
  char* text = NULL;
  size_t length = 0;
  FILE* out = open_memstream(&text, &length);
  if (!out) return PyErr_NoMemory();
  hgr_status_t status = write(placement, out);
  fclose(out);
  PyObject* result = status ? hgrpy_raise(status) : PyUnicode_FromStringAndSize(text, (Py_ssize_t)length);
  free(text);
  return result;
}

hgr_status_t hgrpy_place_options(hgr_place_options_t* options, const char* const* specs, size_t device_count,
                                 const char* const* rule_texts, size_t rule_count) {
  hgr_place_options_init(options);
  options->devices = device_count ? specs : NULL;
  options->device_count = device_count;
  hgr_status_t status = HGR_OK;
  for (size_t i = 0; !status && i < rule_count; ++i) status = hgr_place_options_parse(options, rule_texts[i]);
  return status;
}

/* Places graph with the options these strings give; the GIL is released while placing. */
static PyObject* place_with(PyObject* graph, const char* const* specs, size_t device_count,
                            const char* const* rule_texts, size_t rule_count, bool cost_cache) {
  hgr_place_options_t options;
  hgr_status_t status = hgrpy_place_options(&options, specs, device_count, rule_texts, rule_count);
  if (status) return hgrpy_raise(status);
  options.cost_cache_off = !cost_cache;
  hgr_instance_t* instance = hgrpy_instance();
  if (!instance) return NULL;
  hgr_placement_t* placement = NULL;
  hgr_graph_t* source = ((hgrpy_graph_t*)graph)->graph;
  Py_BEGIN_ALLOW_THREADS;
  status = hgr_place(instance, source, &options, &placement);
  Py_END_ALLOW_THREADS;
  if (status) return hgrpy_raise(status);
  PyObject* placed = hgrpy_graph_wrap(hgr_graph_retain(hgr_placement_graph(placement)));
  PyObject* summary = placed ? report_text(placement, hgr_placement_write_summary) : NULL;
  PyObject* report = summary ? report_text(placement, hgr_placement_write_json) : NULL;
  PyObject* result = report ? PyTuple_Pack(3, placed, summary, report) : NULL;
  Py_XDECREF(placed);
  Py_XDECREF(summary);
  Py_XDECREF(report);
  hgr_placement_release(placement);
  return result;
}

/* place(graph, devices=None, rules=None, cost_cache=True) -> (Graph, summary, report_json) */
static PyObject* place(PyObject* module, PyObject* args, PyObject* kwargs) {
  (void)module;
  static char* keywords[] = {"graph", "devices", "rules", "cost_cache", NULL};
  PyObject *graph = NULL, *devices = Py_None, *rules = Py_None;
  int cost_cache = 1;
  if (!PyArg_ParseTupleAndKeywords(args, kwargs, "O!|OOp", keywords, &hgrpy_graph_type, &graph, &devices, &rules,
                                   &cost_cache))
    return NULL;
  const char **specs = NULL, **rule_texts = NULL;
  size_t device_count = 0, rule_count = 0;
  PyObject *device_keep = NULL, *rule_keep = NULL;
  if (hgrpy_string_list(devices, "devices", &device_keep, &specs, &device_count) < 0) return NULL;
  if (hgrpy_string_list(rules, "rules", &rule_keep, &rule_texts, &rule_count) < 0) {
    free(specs);
    Py_XDECREF(device_keep);
    return NULL;
  }
  PyObject* result = place_with(graph, specs, device_count, rule_texts, rule_count, cost_cache != 0);
  free(specs);
  free(rule_texts);
  Py_XDECREF(device_keep);
  Py_XDECREF(rule_keep);
  return result;
}

static PyMethodDef place_methods[] = {
    {"place", HGRPY_KW(place), METH_VARARGS | METH_KEYWORDS,
     "place(graph, devices=None, rules=None, cost_cache=True) -> (Graph, str, str)\n\n"
     "Places graph (its own device keys and copies discarded) on devices (specs in priority order; None: one "
     "default device) with rules (a list of `hgr run --place` texts: 'op:NAME=SPEC', 'node:GLOB=SPEC', "
     "'range:A-B=SPEC', 'first', 'auto', 'stages:N'). Returns the placed graph, the placement summary and its "
     "JSON report. The GIL is released while placing (auto and stages may calibrate on the devices)."},
    {NULL, NULL, 0, NULL},
};

int hgrpy_add_place(PyObject* module) {
  return PyModule_AddFunctions(module, place_methods);
}
