/* Formatted strings and growing text (text.h). */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "alloc.h"
#include "text.h"

char* hgr__vformat_in(hgr_allocator_t allocator, const char* format, va_list args) {
  va_list copy;
  va_copy(copy, args);
  int needed = vsnprintf(NULL, 0, format, copy);
  va_end(copy);
  if (needed < 0) return NULL;
  char* text = hgr__alloc(allocator, (size_t)needed + 1);
  if (!text) return NULL;
  vsnprintf(text, (size_t)needed + 1, format, args);
  return text;
}

char* hgr__format_in(hgr_allocator_t allocator, const char* format, ...) {
  va_list args;
  va_start(args, format);
  char* text = hgr__vformat_in(allocator, format, args);
  va_end(args);
  return text;
}

char* hgr__vformat(const char* format, va_list args) {
  return hgr__vformat_in(hgr_allocator_system(), format, args);
}


void hgr__text_appendf(hgr__text_t* text, const char* format, ...) {
  if (text->failed) return;
  for (;;) {
    size_t room = text->capacity - text->length;
    va_list args;
    va_start(args, format);
    int written = vsnprintf(text->data ? text->data + text->length : NULL, text->data ? room : 0, format, args);
    va_end(args);
    if (written < 0) {
      text->failed = true;
      return;
    }
    if (text->data && (size_t)written < room) {
      text->length += (size_t)written;
      return;
    }
    size_t capacity = text->capacity ? text->capacity : 64;
    while (capacity < text->length + (size_t)written + 1) capacity *= 2;
    char* grown = hgr__realloc(text->allocator, text->data, capacity);
    if (!grown) {
      text->failed = true;
      return;
    }
    text->data = grown;
    text->capacity = capacity;
  }
}

char* hgr__text_take(hgr__text_t* text) {
  hgr_allocator_t allocator = text->allocator;
  char* data = text->failed ? NULL : text->data ? text->data : hgr__calloc(allocator, 1, 1);
  if (text->failed) hgr__free(allocator, text->data);
  memset(text, 0, sizeof(*text));
  text->allocator = allocator;
  return data;
}
