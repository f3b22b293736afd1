/* The OpenCL C sources of kernels/, embedded at build time (cmake/embed_kernels.cmake). */
#ifndef HGR_KERNEL_SOURCES_H_
#define HGR_KERNEL_SOURCES_H_

#include <stddef.h>

typedef struct hgr__kernel_source_t {
  const char* name;   /* file name without .cl, e.g. "elementwise" */
  const char* text;   /* NUL-terminated source */
  size_t length;      /* bytes, without the NUL */
} hgr__kernel_source_t;

extern const hgr__kernel_source_t hgr__kernel_sources[];
extern const size_t hgr__kernel_source_count;

#endif /* HGR_KERNEL_SOURCES_H_ */
