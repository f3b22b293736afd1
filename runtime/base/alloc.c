/* Host allocation through an hgr_allocator_t (alloc.h). */
#include "alloc.h"

#include <stdlib.h>
#include <string.h>

hgr_allocator_t hgr_allocator_system(void) {
  hgr_allocator_t system = {NULL, NULL};
  return system;
}

static void* call(hgr_allocator_t allocator, void* block, size_t bytes) {
  if (allocator.fn) return allocator.fn(allocator.self, block, bytes);
  if (bytes == 0) {
    free(block);
    return NULL;
  }
  return block ? realloc(block, bytes) : malloc(bytes);
}

void* hgr__alloc(hgr_allocator_t allocator, size_t bytes) {
  return call(allocator, NULL, bytes ? bytes : 1);
}

void* hgr__calloc(hgr_allocator_t allocator, size_t count, size_t size) {
  size_t bytes;
  if (__builtin_mul_overflow(count, size, &bytes)) return NULL;
  if (bytes == 0) bytes = 1;
  /* The system's calloc takes fresh pages for large blocks, zero already: no pass
   * over a tensor's bytes before the loader writes them. */
  if (!allocator.fn) return calloc(1, bytes);
  void* block = call(allocator, NULL, bytes);
  if (block) memset(block, 0, bytes);
  return block;
}

void* hgr__realloc(hgr_allocator_t allocator, void* block, size_t bytes) {
  return call(allocator, block, bytes ? bytes : 1);
}

void* hgr__realloc_array(hgr_allocator_t allocator, void* block, size_t count, size_t size) {
  size_t bytes;
  if (__builtin_mul_overflow(count, size, &bytes)) return NULL;
  return hgr__realloc(allocator, block, bytes);
}

void hgr__free(hgr_allocator_t allocator, void* block) {
  if (block) call(allocator, block, 0);
}

char* hgr__copy_text_n(hgr_allocator_t allocator, const char* text, size_t length) {
  size_t actual = strnlen(text, length);
  char* copy = call(allocator, NULL, actual + 1);
  if (!copy) return NULL;
  memcpy(copy, text, actual);
  copy[actual] = '\0';
  return copy;
}

char* hgr__copy_text(hgr_allocator_t allocator, const char* text) {
  return hgr__copy_text_n(allocator, text, strlen(text));
}
