/* Whole files: reading one into memory, and writing one atomically, for the loaders
 * of graphs, params and .npy files and for the program cache. */
#ifndef HGR_FILE_H_
#define HGR_FILE_H_

#include <stddef.h>

#include "hgr/status.h"

/* Reads the whole file into a new malloc'd buffer (never NULL on success, even
 * for an empty file). Errors: NOT_FOUND when it does not exist, UNAVAILABLE for
 * other failures, with the path and the errno text. */
hgr_status_t hgr__file_read(const char* path, void** out_data, size_t* out_length);

/* Writes head then body (body may be NULL when body_length is 0) to
 * "<path>.tmp.<pid>", flushes it to disk and renames it over path, so a reader sees
 * the old file or the complete new one. Errors: UNAVAILABLE naming the path and the
 * errno text. */
hgr_status_t hgr__file_write_atomic(const char* path, const void* head, size_t head_length,
                                    const void* body, size_t body_length);

#endif /* HGR_FILE_H_ */
