/* hgr — status values.
 *
 * Every fallible hgr function returns an hgr_status_t. HGR_OK (a null pointer, so
 * it compares equal to zero) means success. Anything else is a status object the
 * caller owns and must free with hgr_status_free(); it carries a code from a small
 * fixed set, the source file and line where it was raised, and a message that names
 * the object and the offending value. Statuses can be annotated with where they
 * passed through (each layer adds where, not a restatement) and joined, so that a
 * cleanup failure is kept next to the first failure instead of being dropped.
 *
 * Thread safety: a status object is confined to one thread at a time; the functions
 * that only read (hgr_status_code, hgr_status_message, ...) may be called
 * concurrently on the same status. */
#ifndef HGR_STATUS_H_
#define HGR_STATUS_H_

#include <stddef.h>
#include <stdint.h>

#include "hgr/export.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The fixed set of status codes. The numbering is stable. */
typedef enum hgr_status_code_t {
  HGR_STATUS_OK = 0,
  HGR_STATUS_CANCELLED = 1,          /* work was abandoned, e.g. terminated by a failed dependency */
  HGR_STATUS_INVALID_ARGUMENT = 2,   /* bad input: malformed file, wrong shape, bad flag */
  HGR_STATUS_NOT_FOUND = 3,          /* a named thing (file, device, input, kernel) does not exist */
  HGR_STATUS_OUT_OF_RANGE = 4,       /* an index or size outside what is valid */
  HGR_STATUS_RESOURCE_EXHAUSTED = 5, /* host or device memory, or a device limit, ran out */
  HGR_STATUS_FAILED_PRECONDITION = 6,/* the call is valid but not in this state */
  HGR_STATUS_UNIMPLEMENTED = 7,      /* a feature hgr does not support (yet) */
  HGR_STATUS_UNAVAILABLE = 8,        /* a platform, device or file is not available */
  HGR_STATUS_INTERNAL = 9,           /* an hgr invariant broke, or an unexpected driver error */
  HGR_STATUS_DATA_LOSS = 10,         /* a file is truncated or corrupt */
  HGR_STATUS_DEVICE_FAILURE = 11,    /* a command failed on the device (reported by an event) */
} hgr_status_code_t;

/* Opaque status; NULL is success. */
typedef struct hgr_status_s* hgr_status_t;

#define HGR_OK ((hgr_status_t)0)

/* Creates a status with a printf-style message. code must not be HGR_STATUS_OK.
 * file and line name where it was raised (use the HGR_STATUS macro). Never fails:
 * if memory is exhausted, a static "out of memory" status is returned, which
 * hgr_status_free accepts like any other. */
HGR_API hgr_status_t hgr_status_make(hgr_status_code_t code, const char* file, int line,
                                     const char* format, ...) HGR_PRINTF(4, 5);

#define HGR_STATUS(code, ...) hgr_status_make((code), __FILE__, __LINE__, __VA_ARGS__)

/* Prepends "<where>: " to the message of status and returns it. HGR_OK passes
 * through unchanged. Takes ownership of status and returns it (possibly the same
 * pointer). */
HGR_API hgr_status_t hgr_status_annotate(hgr_status_t status, const char* format, ...)
    HGR_PRINTF(2, 3);

/* Joins two statuses: returns first with second attached as a follow-up failure
 * (both are printed by hgr_status_format). Either may be HGR_OK; the code of the
 * result is first's when first is not OK. Takes ownership of both. */
HGR_API hgr_status_t hgr_status_join(hgr_status_t first, hgr_status_t second);

/* The code; HGR_STATUS_OK for HGR_OK. */
HGR_API hgr_status_code_t hgr_status_code(hgr_status_t status);

/* The message of this status alone (without joined follow-ups); "" for HGR_OK.
 * Borrowed: valid until the status is freed. */
HGR_API const char* hgr_status_message(hgr_status_t status);

/* Source location where the status was raised; NULL and 0 for HGR_OK. */
HGR_API const char* hgr_status_file(hgr_status_t status);
HGR_API int hgr_status_line(hgr_status_t status);

/* The status joined after this one, or HGR_OK. Borrowed. */
HGR_API hgr_status_t hgr_status_next(hgr_status_t status);

/* Writes "CODE_NAME: message [file:line]" for status and every joined follow-up
 * ("; also: ...") into buffer (always NUL-terminated when capacity > 0). Returns the
 * length the full text needs, excluding the NUL, like snprintf. "OK" for HGR_OK. */
HGR_API size_t hgr_status_format(hgr_status_t status, char* buffer, size_t capacity);

/* Like hgr_status_format into a new heap string the caller frees with free().
 * Returns NULL only if memory is exhausted. */
HGR_API char* hgr_status_to_string(hgr_status_t status);

/* Frees status and everything joined to it. HGR_OK is a no-op. */
HGR_API void hgr_status_free(hgr_status_t status);

/* "INVALID_ARGUMENT" and so on; "UNKNOWN" for values outside the enum. Static. */
HGR_API const char* hgr_status_code_name(hgr_status_code_t code);

/* The name of an OpenCL error code ("CL_INVALID_WORK_GROUP_SIZE" for -54),
 * covering OpenCL 1.0-3.0 and the extension codes the Khronos headers define.
 * Unknown codes give "CL_UNKNOWN_ERROR". Static. */
HGR_API const char* hgr_opencl_error_name(int32_t error_code);

#ifdef __cplusplus
}
#endif

#endif /* HGR_STATUS_H_ */
