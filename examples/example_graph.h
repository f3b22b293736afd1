/* The node both example writers describe graphs with (make_examples.c: the
 * elementwise graphs; models.c: cnn and mlp), the one TVM graph-JSON writer, and
 * the status report they share. */
#ifndef HGR_EXAMPLES_EXAMPLE_GRAPH_H_
#define HGR_EXAMPLES_EXAMPLE_GRAPH_H_

#include <stdbool.h>
#include <stdint.h>

#include "hgr/status.h"

typedef struct example_node_t {
  char name[32];
  const char* func_name; /* NULL for an input (or a weight) */
  char attrs[256];       /* extra attrs as JSON members, or "" */
  int inputs[3];
  int input_count;
  int key;
  int storage_id;
  int ndim;
  int64_t shape[4];
  float* values;         /* the node's value, computed on the host */
  bool is_param;         /* models: goes into the params file, not an .npy */
} example_node_t;

int64_t example_element_count(const example_node_t* node);

/* Writes nodes as graph JSON to path: float32 everywhere, the nodes without
 * func_name are the inputs, heads are output 0 of the given nodes. */
bool example_write_graph(const example_node_t* nodes, int node_count, const int* heads, int head_count,
                         const char* path);

/* True for HGR_OK; otherwise prints the status for hgr_make_examples, frees it and
 * returns false. */
bool example_report(hgr_status_t status);

#endif /* HGR_EXAMPLES_EXAMPLE_GRAPH_H_ */
