/* Device-key binding: which instance device each device key of the graph's
 * device_index column runs on (explicit bindings first, then TVM's defaults: key 1 a
 * CPU, key 4 a GPU or accelerator, any other key the next unused device), and the
 * executor's devices, those some key is bound to, with what each uses. Data in,
 * data out: no OpenCL object is created here. */
#ifndef HGR_DEVICE_KEYS_H_
#define HGR_DEVICE_KEYS_H_

#include "graph_internal.h"
#include "hgr/executor.h"
#include "device_internal.h"

/* One device the executor uses: its queues (indices into the executor's queue set)
 * and what it uses. The compute queues are compute_queue to compute_queue +
 * compute_queue_count - 1 (kernel nodes, spread by dependency level); the transfer
 * queue takes copies into the device, inputs and outputs. A host-driven device has
 * one queue, which is all of them. */
typedef struct hgr__exec_device_t {
  size_t device_index;
  uint32_t compute_queue;       /* the first */
  uint32_t compute_queue_count;
  uint32_t transfer_queue;
  hgr_device_usage_t usage;
} hgr__exec_device_t;

/* Where another rank's device stands in for an instance device index: keys bound to
 * one, their entries, their storages and the steps that run there. */
#define HGR__REMOTE_DEVICE SIZE_MAX

typedef struct hgr__device_keys_t {
  hgr_allocator_t allocator;    /* the instance's (hgr__device_keys_bind sets it): all below */
  hgr_key_binding_t* keys;      /* the graph's distinct keys, ascending (-1 without a
                                   device_index column); spec owned here */
  size_t key_count;
  hgr__exec_device_t* devices;  /* in instance order; this rank's only */
  size_t device_count;
  size_t* entry_device;         /* instance device index per entry, HGR__REMOTE_DEVICE
                                   for another rank's */
  int* entry_rank;              /* per entry the rank of its device (0 without a transport) */
  const char** entry_spec;      /* per entry its device's spec, borrowed from keys */
  int rank;                     /* this process's (0 without a transport) */
} hgr__device_keys_t;

/* Binds every key of graph to a device of instance, the given bindings first. With
 * a transport, a binding may name another rank's device ("r1/pocl:0"): its key is
 * bound to HGR__REMOTE_DEVICE. */
hgr_status_t hgr__device_keys_bind(hgr__device_keys_t* device_keys, hgr_instance_t* instance, const hgr_graph_t* graph,
                                   const hgr_device_binding_t* bindings, size_t binding_count,
                                   const hgr_transport_t* transport);
void hgr__device_keys_release(hgr__device_keys_t* device_keys);

/* The device TVM's default gives key 1 when nothing is bound: the first CPU, real
 * devices before Oclgrind, else the first real device. Placement (place/) uses it
 * for graphs placed without a device list. UNAVAILABLE without devices. */
hgr_status_t hgr__device_keys_default_device(hgr_instance_t* instance, size_t* out_device_index);

/* The executor's record of instance device device_index; NULL when it does not use
 * that device. */
hgr__exec_device_t* hgr__device_keys_device(const hgr__device_keys_t* device_keys, size_t device_index);
/* Its index in device_keys->devices (the device must be used). */
size_t hgr__device_keys_slot(const hgr__device_keys_t* device_keys, size_t device_index);
/* "key K (SPEC)", or "SPEC" without a device_index column: where entry_id lives
 * (SPEC names the rank when it is another's: "r1/pocl:0"). */
const char* hgr__device_keys_describe_entry(const hgr__device_keys_t* device_keys, const hgr_instance_t* instance,
                                            const hgr_graph_t* graph, uint32_t entry_id, char* buffer,
                                            size_t capacity);

#endif /* HGR_DEVICE_KEYS_H_ */
