/* A bundle's manifest (bundle.c; hgr/model.h), read apart from the instance so that
 * a fuzz target reads it as hgr_model_create_bundle does. */
#ifndef HGR_BUNDLE_H_
#define HGR_BUNDLE_H_

#include <stddef.h>

#include "hgr/allocator.h"
#include "hgr/device.h"
#include "hgr/status.h"
#include "json.h"

/* One program of the manifest: its strings point into the manifest's JSON. info
 * has platform_name, name, version and driver_version set, nothing else. */
typedef struct hgr__bundle_program_t {
  const char* file;
  const char* key;
  const char* kernels;
  const char* options;
  hgr_device_info_t info;
  char where[48]; /* "manifest.json: program N", for messages */
} hgr__bundle_program_t;

typedef struct hgr__bundle_manifest_t {
  hgr_allocator_t allocator; /* the programs array */
  cJSON* json;
  const char* model; /* the model's file name */
  hgr__bundle_program_t* programs;
  size_t count;
} hgr__bundle_manifest_t;

/* Parses and checks text: format, hgr version and kernel library (FAILED_PRECONDITION
 * naming both sides), every field a string, every file a name inside the bundle
 * (INVALID_ARGUMENT naming it). On failure out holds nothing. */
hgr_status_t hgr__bundle_manifest_parse(hgr_allocator_t allocator, const char* text, size_t length,
                                        hgr__bundle_manifest_t* out);
void hgr__bundle_manifest_free(hgr__bundle_manifest_t* manifest);

/* The index among devices of the one program was built for (platform, name,
 * version and driver version equal), or FAILED_PRECONDITION naming it and listing
 * devices. */
hgr_status_t hgr__bundle_find_device(const hgr__bundle_program_t* program, const hgr_device_info_t* const* devices,
                                     size_t count, size_t* out_index);

#endif /* HGR_BUNDLE_H_ */
