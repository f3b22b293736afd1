/* The op registry: func_name -> kernel, with its validation, argument binding and
 * NDRange rule. `__nop` and `__copy` are the runtime's and not in the registry. */
#ifndef HGR_OPS_H_
#define HGR_OPS_H_

#include "graph_internal.h"
#include "internal.h"

/* Launch geometry of one kernel. */
typedef struct hgr__launch_t {
  cl_uint work_dim;
  size_t global[3];
  size_t local[3];
  bool use_local; /* false: let the driver choose */
} hgr__launch_t;

typedef struct hgr__op_t hgr__op_t;
struct hgr__op_t {
  const char* name;   /* func_name */
  const char* source; /* kernels/<source>.cl */
  const char* kernel; /* entry point */
  uint32_t inputs;    /* exact number of inputs */
  /* Checks that the node's shapes, dtypes and attrs suit the op. */
  hgr_status_t (*validate)(const hgr__op_t* op, const hgr_graph_t* graph, uint32_t node_id);
  /* Sets the kernel arguments (buffers: inputs then outputs) and the NDRange, for a
   * device whose largest work-group is max_work_group. */
  hgr_status_t (*bind)(const hgr__op_t* op, const hgr_graph_t* graph, uint32_t node_id,
                       cl_kernel kernel, const cl_mem* inputs, const cl_mem* outputs,
                       size_t max_work_group, hgr__launch_t* out_launch);
};

/* The op called name, or NULL. */
const hgr__op_t* hgr__op_find(const char* name);

/* The op of node node_id. INVALID_ARGUMENT naming the node and listing the known
 * func_names when there is none. */
hgr_status_t hgr__op_resolve(const hgr_graph_t* graph, uint32_t node_id, const hgr__op_t** out_op);

/* The embedded source called name (kernels/<name>.cl), or NULL. */
const char* hgr__kernel_source(const char* name, size_t* out_length);

/* "node 7 'conv1'" style prefix for messages, into buffer. */
const char* hgr__node_label(const hgr_graph_t* graph, uint32_t node_id, char* buffer, size_t capacity);

#endif /* HGR_OPS_H_ */
