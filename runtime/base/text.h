/* Formatted strings, growing text and FNV-1a hashes: what status messages, the
 * builder's attrs, placement's reasons, the cost model's keys and the program cache's
 * keys are built from. */
#ifndef HGR_TEXT_H_
#define HGR_TEXT_H_

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "hgr/allocator.h"
#include "hgr/export.h"

/* A string that grows as it is appended to, from `allocator`; zero-initialize it
 * (the system allocator) or set allocator first. Once an append runs out of memory,
 * `failed` is set and later appends do nothing. */
typedef struct hgr__text_t {
  char* data;
  size_t length, capacity;
  bool failed;
  hgr_allocator_t allocator;
} hgr__text_t;

/* printf-formatted text in a new string from allocator, or NULL when memory runs out. */
char* hgr__format_in(hgr_allocator_t allocator, const char* format, ...) HGR_PRINTF(2, 3);
char* hgr__vformat_in(hgr_allocator_t allocator, const char* format, va_list args);
/* The same from the system allocator: for status messages, which are the system's. */
char* hgr__vformat(const char* format, va_list args);

/* Appends printf-formatted text. */
void hgr__text_appendf(hgr__text_t* text, const char* format, ...) HGR_PRINTF(2, 3);

/* The text (from text->allocator, the caller frees it; "" when nothing was
 * appended), or NULL when an append failed (the buffer is freed then). The text is
 * empty afterwards, its allocator kept. */
char* hgr__text_take(hgr__text_t* text);

/* FNV-1a over length bytes, continuing from hash (start with HGR__FNV1A_START). */
#define HGR__FNV1A_START 14695981039346656037ull
static inline uint64_t hgr__fnv1a(const void* data, size_t length, uint64_t hash) {
  const unsigned char* bytes = (const unsigned char*)data;
  for (size_t i = 0; i < length; ++i) hash = (hash ^ bytes[i]) * 1099511628211ull;
  return hash;
}

#endif /* HGR_TEXT_H_ */
