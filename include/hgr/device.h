/* hgr — the instance and its OpenCL devices.
 *
 * An hgr_instance_t holds all process-wide state: the platforms and devices the
 * OpenCL ICD loader reports, the contexts created for them, and options. There are
 * no globals; several instances may coexist. Discovery never fails because one
 * platform does: a platform that reports an error or no devices (Mesa's Clover
 * does) is skipped and recorded with the reason (hgr_instance_skipped_platform).
 *
 * Devices are named by spec strings:
 *   "pocl:0", "rusticl:0", "oclgrind:1"  platform name (case-insensitive substring;
 *                                        "pocl" also matches "Portable Computing
 *                                        Language"), then the index within it
 *   "cpu:0", "gpu:1", "accelerator:0"    by device type, counted across platforms
 *   "0.1"                                platform index . device index
 * A spec may start with a rank, "r1/pocl:0", naming a device of another process
 * (hgr/transport.h); hgr_spec_rank splits it. The instance's own lookups
 * (hgr_instance_find_device) take specs without a rank.
 *
 * Contexts: devices of one platform share one cl_context unless the instance was
 * created with context_per_device, which gives every device its own context (vendors
 * have shared-context bugs, and it lets tests reach the cross-context path on one
 * platform). Contexts are created when first needed.
 *
 * Thread safety: the instance is thread-safe; device info structs are immutable and
 * live as long as the instance. */
#ifndef HGR_DEVICE_H_
#define HGR_DEVICE_H_

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "hgr/allocator.h"
#include "hgr/export.h"
#include "hgr/status.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct hgr_instance_s hgr_instance_t;

/* Device types; values match CL_DEVICE_TYPE_* bits. */
typedef enum hgr_device_type_t {
  HGR_DEVICE_TYPE_DEFAULT = 1,
  HGR_DEVICE_TYPE_CPU = 2,
  HGR_DEVICE_TYPE_GPU = 4,
  HGR_DEVICE_TYPE_ACCELERATOR = 8,
  HGR_DEVICE_TYPE_CUSTOM = 16,
} hgr_device_type_t;

/* What hgr knows about one device. Strings are owned by the instance. */
typedef struct hgr_device_info_t {
  const char* spec;            /* canonical spec string, e.g. "pocl:1" */
  size_t index;                /* position in the instance's device list */
  size_t platform_index;       /* position of its platform among all platforms */
  size_t index_in_platform;    /* device index within its platform */
  const char* platform_short;  /* "pocl", "rusticl", "oclgrind", "nvidia", ... */
  const char* platform_name;
  const char* platform_vendor;
  const char* platform_version;
  const char* name;
  const char* vendor;
  hgr_device_type_t type;      /* the primary type (CPU, GPU, ACCELERATOR, CUSTOM) */
  const char* version;         /* CL_DEVICE_VERSION, e.g. "OpenCL 3.0 PoCL ..." */
  const char* driver_version;
  int opencl_major, opencl_minor; /* parsed from version */
  uint32_t compute_units;
  uint64_t global_mem_bytes;
  uint64_t local_mem_bytes;
  uint64_t max_alloc_bytes;
  uint32_t base_address_align_bits; /* CL_DEVICE_MEM_BASE_ADDR_ALIGN, in bits */
  size_t max_work_group_size;
  size_t max_work_item_sizes[3]; /* CL_DEVICE_MAX_WORK_ITEM_SIZES, first 3 dimensions */
  bool fp16;                   /* cl_khr_fp16 */
  bool fp64;                   /* cl_khr_fp64 or a non-zero CL_DEVICE_DOUBLE_FP_CONFIG */
  bool unified_memory;         /* CL_DEVICE_HOST_UNIFIED_MEMORY */
  uint64_t timer_resolution_ns;/* CL_DEVICE_PROFILING_TIMER_RESOLUTION */
  bool compiler_available;     /* CL_DEVICE_COMPILER_AVAILABLE: builds programs from source
                                  (a binary-only device runs only the kernel library's binaries) */
  uint32_t native_float_width; /* CL_DEVICE_NATIVE_VECTOR_WIDTH_FLOAT: floats per vector register
                                  (PoCL's CPU driver: 16 with AVX-512, 8 with AVX2); 0 unknown */
} hgr_device_info_t;

/* A platform that discovery skipped, and why. */
typedef struct hgr_skipped_platform_t {
  const char* name;   /* platform name, or "platform N" when even that failed */
  const char* reason; /* e.g. "reports no devices (clGetDeviceIDs: CL_DEVICE_NOT_FOUND)" */
} hgr_skipped_platform_t;

typedef struct hgr_instance_options_t {
  /* Give every device its own cl_context instead of one per platform. */
  bool context_per_device;
  /* Where the host memory of the instance and of the objects made from it comes
   * from (hgr/allocator.h); the zero value is the system allocator. */
  hgr_allocator_t allocator;
} hgr_instance_options_t;

/* Fills options with defaults (one context per platform, the system allocator). */
HGR_API void hgr_instance_options_init(hgr_instance_options_t* options);

/* Discovers every platform and device through the OpenCL ICD loader. options may be
 * NULL for defaults. *out_instance is set to NULL first and written only on success;
 * the caller releases it with hgr_instance_release. Finding no device at all is not
 * an error (hgr_instance_device_count returns 0). Errors: RESOURCE_EXHAUSTED. */
HGR_API hgr_status_t hgr_instance_create(const hgr_instance_options_t* options,
                                         hgr_instance_t** out_instance);

/* Releases the instance, its contexts and device list. NULL is a no-op. Every
 * executor created from it must have been released first. */
HGR_API void hgr_instance_release(hgr_instance_t* instance);

HGR_API size_t hgr_instance_device_count(const hgr_instance_t* instance);

/* Device i (0 <= i < count), borrowed; NULL when i is out of range. */
HGR_API const hgr_device_info_t* hgr_instance_device(const hgr_instance_t* instance, size_t i);

HGR_API size_t hgr_instance_skipped_platform_count(const hgr_instance_t* instance);
HGR_API const hgr_skipped_platform_t* hgr_instance_skipped_platform(const hgr_instance_t* instance,
                                                                    size_t i);

/* Resolves a spec string to a device index. Errors: INVALID_ARGUMENT for a malformed
 * spec, NOT_FOUND when nothing matches (the message lists the available devices and
 * the skipped platforms with the reason, such as a failed OpenCL query). */
HGR_API hgr_status_t hgr_instance_find_device(const hgr_instance_t* instance, const char* spec,
                                              size_t* out_index);

/* How work on one device reaches another (DESIGN.md, "Device-pair matrix"). */
typedef enum hgr_pair_class_t {
  HGR_PAIR_SAME_QUEUE = 0,       /* the same device: ordered by its in-order queue */
  HGR_PAIR_SAME_CONTEXT = 1,     /* two devices of one context: event wait lists, direct copy */
  HGR_PAIR_CROSS_CONTEXT = 2,    /* one platform, two contexts: bridged events, host staging */
  HGR_PAIR_CROSS_PLATFORM = 3,   /* two platforms: bridged events, host staging */
  HGR_PAIR_CROSS_HOST = 4,       /* devices of two ranks (hgr/transport.h): staged
                                    through the host and sent by the transport */
} hgr_pair_class_t;

#define HGR_PAIR_CLASS_COUNT 5

/* Splits a spec's rank prefix "rN/": *out_rank is N, or -1 when the spec has none
 * (the local rank's device; "r" and then anything but a digit starts a platform
 * name, "rusticl:0"); *out_local points into spec past the prefix. Returns false for
 * a malformed prefix: digits not followed by '/' ("r1pocl:0", "r1") or a rank past
 * 2^31 - 1. */
HGR_API bool hgr_spec_rank(const char* spec, int* out_rank, const char** out_local);

/* Class of the pair (from, to) of device indices; both must be < device count.
 * Devices of one instance are on one host: never HGR_PAIR_CROSS_HOST. */
HGR_API hgr_pair_class_t hgr_instance_pair_class(const hgr_instance_t* instance, size_t from,
                                                 size_t to);

/* "same-queue", "same-context", "cross-context", "cross-platform", "cross-host".
 * Static. */
HGR_API const char* hgr_pair_class_name(hgr_pair_class_t pair_class);

/* "cpu", "gpu", "accelerator", "custom", "default". Static. */
HGR_API const char* hgr_device_type_name(hgr_device_type_t type);

#ifdef __cplusplus
}
#endif

#endif /* HGR_DEVICE_H_ */
