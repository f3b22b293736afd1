/* Built against an installed hgr by tests/install_consumer.cmake, once per way of
 * linking (find_package: hgr::hgr and hgr::hgr_static; pkg-config: shared and
 * static). Lists the devices, loads a one-node graph from a string, runs it on the
 * first device and checks the sums. Prints "hgr consumer ok" on success; exits 77
 * when the machine has no OpenCL device. */
#include <stdio.h>
#include <stdlib.h>

#include "hgr/hgr.h"

/* out = a + b over 4 floats, all on device key 1. */
static const char graph_json[] =
    "{\"nodes\": ["
    " {\"op\": \"null\", \"name\": \"a\", \"inputs\": []},"
    " {\"op\": \"null\", \"name\": \"b\", \"inputs\": []},"
    " {\"op\": \"tvm_op\", \"name\": \"add0\", \"attrs\": {\"func_name\": \"add\", \"num_inputs\": \"2\","
    "  \"num_outputs\": \"1\", \"flatten_data\": \"0\"}, \"inputs\": [[0, 0, 0], [1, 0, 0]]}],"
    " \"arg_nodes\": [0, 1], \"node_row_ptr\": [0, 1, 2, 3], \"heads\": [[2, 0, 0]],"
    " \"attrs\": {\"storage_id\": [\"list_int\", [0, 1, 2]], \"device_index\": [\"list_int\", [1, 1, 1]],"
    "  \"dltype\": [\"list_str\", [\"float32\", \"float32\", \"float32\"]],"
    "  \"shape\": [\"list_shape\", [[4], [4], [4]]]}}";

static int report(const char* what, hgr_status_t status) {
  char* text = hgr_status_to_string(status);
  fprintf(stderr, "hgr consumer: %s: %s\n", what, text ? text : "(out of memory)");
  free(text);
  hgr_status_free(status);
  return 1;
}

int main(void) {
  hgr_instance_t* instance = NULL;
  hgr_graph_t* graph = NULL;
  hgr_executor_t* executor = NULL;
  int result = 1;
  hgr_status_t status = hgr_instance_create(NULL, &instance);
  if (status) return report("hgr_instance_create", status);

  size_t device_count = hgr_instance_device_count(instance);
  for (size_t i = 0; i < device_count; ++i) {
    const hgr_device_info_t* device = hgr_instance_device(instance, i);
    printf("device %s: %s (%s)\n", device->spec, device->name, device->platform_name);
  }
  if (device_count == 0) {
    printf("hgr consumer: no OpenCL device, skipped\n");
    hgr_instance_release(instance);
    return 77;
  }

  status = hgr_graph_load_json(graph_json, sizeof graph_json - 1, &graph);
  if (status) {
    result = report("hgr_graph_load_json", status);
    goto cleanup;
  }
  const char* spec = hgr_instance_device(instance, 0)->spec;
  hgr_device_binding_t binding = {1, spec};
  hgr_executor_options_t options;
  hgr_executor_options_init(&options);
  options.bindings = &binding;
  options.binding_count = 1;
  status = hgr_executor_create(instance, graph, &options, &executor);
  if (status) {
    result = report("hgr_executor_create", status);
    goto cleanup;
  }

  const float a[4] = {1, 2, 3, 4};
  const float b[4] = {10, 20, 30, 40};
  float out[4] = {0};
  status = hgr_executor_set_input_by_name(executor, "a", a, sizeof a);
  if (!status) status = hgr_executor_set_input_by_name(executor, "b", b, sizeof b);
  if (!status) status = hgr_executor_run(executor);
  if (!status) status = hgr_executor_get_output(executor, 0, out, sizeof out);
  if (status) {
    result = report("running the graph", status);
    goto cleanup;
  }
  printf("add on %s: %g %g %g %g\n", spec, out[0], out[1], out[2], out[3]);
  for (int i = 0; i < 4; ++i) {
    if (out[i] != a[i] + b[i]) {
      fprintf(stderr, "hgr consumer: element %d is %g, expected %g\n", i, out[i], a[i] + b[i]);
      goto cleanup;
    }
  }
  printf("hgr consumer ok (hgr %d.%d.%d, npy %s)\n", HGR_VERSION_MAJOR, HGR_VERSION_MINOR,
         HGR_VERSION_PATCH, HGR_HAS_NPY ? "in" : "left out");
  result = 0;

cleanup:
  hgr_executor_release(executor);
  hgr_graph_release(graph);
  hgr_instance_release(instance);
  return result;
}
