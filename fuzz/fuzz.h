/* Helpers shared by the libFuzzer targets in this directory.
 *
 * A target feeds one input to one loader and checks the loader's contract: on
 * failure a status with a code other than OK and a non-empty message, and the
 * output left NULL or zeroed; on success an object whose accessors answer for every
 * index they report. A broken contract aborts, which libFuzzer reports as a crash
 * and saves the input; so do AddressSanitizer, UndefinedBehaviorSanitizer and
 * LeakSanitizer findings. */
#ifndef HGR_FUZZ_H_
#define HGR_FUZZ_H_

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hgr/hgr.h"

/* Aborts (a libFuzzer crash) with the failed condition when cond is false. */
#define FUZZ_CHECK(cond)                                                              \
  do {                                                                                \
    if (!(cond)) {                                                                    \
      fprintf(stderr, "%s:%d: contract broken: %s\n", __FILE__, __LINE__, #cond);    \
      abort();                                                                        \
    }                                                                                 \
  } while (0)

/* Checks a failed call's status (a known code, a message; formatting it works) and
 * frees it. Returns 1 when status was an error, 0 for OK. */
static inline int fuzz_consume_status(hgr_status_t status) {
  if (!status) return 0;
  hgr_status_code_t code = hgr_status_code(status);
  FUZZ_CHECK(code != HGR_STATUS_OK);
  FUZZ_CHECK(hgr_status_code_name(code) != NULL);
  const char* message = hgr_status_message(status);
  FUZZ_CHECK(message && message[0]);
  char* text = hgr_status_to_string(status);
  FUZZ_CHECK(text && strlen(text) >= strlen(message));
  free(text);
  hgr_status_free(status);
  return 1;
}

/* A NUL-terminated copy of the input (malloc'd; the caller frees it). */
static inline char* fuzz_string(const uint8_t* data, size_t size) {
  char* text = malloc(size + 1);
  FUZZ_CHECK(text);
  if (size) memcpy(text, data, size);
  text[size] = 0;
  return text;
}

/* Creates a fresh directory under $TMPDIR (else /tmp) into path (capacity bytes). */
static inline void fuzz_make_dir(const char* name, char* path, size_t capacity) {
  const char* base = getenv("TMPDIR");
  snprintf(path, capacity, "%s/hgr-fuzz-%s-XXXXXX", base && base[0] ? base : "/tmp", name);
  FUZZ_CHECK(strlen(path) + 1 < capacity && mkdtemp(path));
}

#endif /* HGR_FUZZ_H_ */
