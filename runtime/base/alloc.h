/* Host allocation through an hgr_allocator_t (include/hgr/allocator.h): the only way
 * runtime code allocates, so that an instance's allocator sees all of its objects'
 * memory. Each object keeps the allocator it was made with and frees with it; a
 * function that allocates for its caller takes the allocator as its first argument.
 * Every function here accepts the zero value as the system allocator.
 * scripts/check_alloc.py (a test) refuses the C library's allocators anywhere else
 * in runtime/ (status.c excepted: statuses are the caller's to hgr_status_free). */
#ifndef HGR_ALLOC_H_
#define HGR_ALLOC_H_

#include <stddef.h>

#include "hgr/allocator.h"

/* bytes (0 counts as 1) or NULL. */
void* hgr__alloc(hgr_allocator_t allocator, size_t bytes);
/* count * size zeroed bytes (0 counts as 1), or NULL, also when the product overflows. */
void* hgr__calloc(hgr_allocator_t allocator, size_t count, size_t size);
/* realloc: block may be NULL (then as hgr__alloc); NULL when it cannot, block kept.
 * bytes 0 counts as 1 (use hgr__free to free). */
void* hgr__realloc(hgr_allocator_t allocator, void* block, size_t bytes);
/* realloc to count * size bytes; NULL (block kept) also when the product overflows. */
void* hgr__realloc_array(hgr_allocator_t allocator, void* block, size_t count, size_t size);
/* Frees block; NULL is a no-op. */
void hgr__free(hgr_allocator_t allocator, void* block);
/* A copy of text (NUL-terminated), or NULL; text may not be NULL. */
char* hgr__copy_text(hgr_allocator_t allocator, const char* text);
/* A copy of at most length bytes of text, NUL-terminated, or NULL. */
char* hgr__copy_text_n(hgr_allocator_t allocator, const char* text, size_t length);

#endif /* HGR_ALLOC_H_ */
