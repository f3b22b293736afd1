/* hgr_program_pool_t (hgr/executor.h): programs built by one executor, reused by
 * the others that share the pool (the model object's specializations, hgr/model.h):
 * keyed by instance, device and program cache key, each retained until the pool
 * goes. A program of hgr's kernels is found by any kernel it has too: a
 * specialization takes each kernel from whichever earlier program has it, and
 * compiles only kernels none has. Thread-safe: executors build programs on one
 * thread per device. */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "alloc.h"
#include "executor_internal.h"

typedef struct pooled_t {
  const hgr_instance_t* instance;
  size_t device_index;
  char* key;
  char* kernels; /* hgr's kernels: their names, each followed by ';'; NULL for a user's program */
  char* options; /* what it was built with */
  cl_program program;
} pooled_t;

struct hgr_program_pool_s {
  hgr_allocator_t allocator; /* the pool, its table and its keys */
  pthread_mutex_t mutex;
  pooled_t* programs;
  size_t count, capacity;
  bool siblings; /* hgr__program_pool_set_siblings */
};

hgr_status_t hgr__program_pool_create_in(hgr_allocator_t allocator, hgr_program_pool_t** out_pool) {
  if (!out_pool) return HGR_STATUS(HGR_STATUS_INVALID_ARGUMENT, "hgr_program_pool_create: NULL out_pool");
  *out_pool = hgr__calloc(allocator, 1, sizeof(**out_pool));
  if (!*out_pool) return HGR_STATUS(HGR_STATUS_RESOURCE_EXHAUSTED, "out of host memory for a program pool");
  (*out_pool)->allocator = allocator;
  pthread_mutex_init(&(*out_pool)->mutex, NULL);
  return HGR_OK;
}

/* No instance to take an allocator from: the system allocator (hgr/allocator.h). */
hgr_status_t hgr_program_pool_create(hgr_program_pool_t** out_pool) {
  return hgr__program_pool_create_in(hgr_allocator_system(), out_pool);
}

void hgr_program_pool_release(hgr_program_pool_t* pool) {
  if (!pool) return;
  for (size_t i = 0; i < pool->count; ++i) {
    clReleaseProgram(pool->programs[i].program);
    hgr__free(pool->allocator, pool->programs[i].key);
    hgr__free(pool->allocator, pool->programs[i].kernels);
    hgr__free(pool->allocator, pool->programs[i].options);
  }
  hgr__free(pool->allocator, pool->programs);
  pthread_mutex_destroy(&pool->mutex);
  hgr__free(pool->allocator, pool);
}

static pooled_t* find(hgr_program_pool_t* pool, const hgr_instance_t* instance, size_t device_index, const char* key) {
  for (size_t i = 0; i < pool->count; ++i) {
    pooled_t* p = &pool->programs[i];
    if (p->instance == instance && p->device_index == device_index && !strcmp(p->key, key)) return p;
  }
  return NULL;
}

cl_program hgr__program_pool_find(hgr_program_pool_t* pool, const hgr_instance_t* instance, size_t device_index,
                                  const char* key) {
  if (!pool) return NULL;
  pthread_mutex_lock(&pool->mutex);
  pooled_t* p = find(pool, instance, device_index, key);
  cl_program program = p && clRetainProgram(p->program) == CL_SUCCESS ? p->program : NULL;
  pthread_mutex_unlock(&pool->mutex);
  return program;
}

void hgr__program_pool_set_siblings(hgr_program_pool_t* pool, bool siblings) {
  if (!pool) return;
  pthread_mutex_lock(&pool->mutex);
  pool->siblings = siblings;
  pthread_mutex_unlock(&pool->mutex);
}

bool hgr__program_pool_siblings(hgr_program_pool_t* pool) {
  if (!pool) return false;
  pthread_mutex_lock(&pool->mutex);
  bool siblings = pool->siblings;
  pthread_mutex_unlock(&pool->mutex);
  return siblings;
}

bool hgr__kernels_have(const char* kernels, const char* kernel) {
  size_t length = strlen(kernel);
  for (const char* at = kernels; at && *at;) {
    if (!strncmp(at, kernel, length) && at[length] == ';') return true;
    at = strchr(at, ';');
    if (at) ++at;
  }
  return false;
}

cl_program hgr__program_pool_find_kernel(hgr_program_pool_t* pool, const hgr_instance_t* instance,
                                         size_t device_index, const char* kernel, hgr_allocator_t allocator,
                                         char** out_kernels) {
  *out_kernels = NULL;
  if (!pool) return NULL;
  cl_program program = NULL;
  pthread_mutex_lock(&pool->mutex);
  for (size_t i = 0; i < pool->count && !program; ++i) {
    pooled_t* p = &pool->programs[i];
    if (p->instance != instance || p->device_index != device_index || !hgr__kernels_have(p->kernels, kernel)) continue;
    hgr_status_t status = hgr__strdup(allocator, p->kernels, out_kernels);
    if (!status && clRetainProgram(p->program) == CL_SUCCESS) program = p->program;
    else {
      hgr__free(allocator, *out_kernels);
      *out_kernels = NULL;
    }
    hgr_status_free(status);
  }
  pthread_mutex_unlock(&pool->mutex);
  return program;
}

bool hgr__program_pool_has_device(hgr_program_pool_t* pool, const hgr_instance_t* instance, size_t device_index) {
  if (!pool) return false;
  bool found = false;
  pthread_mutex_lock(&pool->mutex);
  for (size_t i = 0; i < pool->count && !found; ++i)
    found = pool->programs[i].instance == instance && pool->programs[i].device_index == device_index &&
            pool->programs[i].kernels;
  pthread_mutex_unlock(&pool->mutex);
  return found;
}

hgr_status_t hgr__program_pool_each(hgr_program_pool_t* pool, const hgr_instance_t* instance,
                                   hgr__pooled_program_fn_t fn, void* user) {
  if (!pool) return HGR_OK;
  hgr_status_t status = HGR_OK;
  pthread_mutex_lock(&pool->mutex);
  for (size_t i = 0; i < pool->count && !status; ++i) {
    const pooled_t* p = &pool->programs[i];
    if (p->instance == instance && p->kernels)
      status = fn(user, p->device_index, p->key, p->kernels, p->options ? p->options : "", p->program);
  }
  pthread_mutex_unlock(&pool->mutex);
  return status;
}

void hgr__program_pool_keep(hgr_program_pool_t* pool, const hgr_instance_t* instance, size_t device_index,
                            const char* key, const char* kernels, const char* options, cl_program program) {
  if (!pool || !program || !key) return;
  pthread_mutex_lock(&pool->mutex);
  if (!find(pool, instance, device_index, key)) {
    if (pool->count == pool->capacity) {
      size_t capacity = pool->capacity ? 2 * pool->capacity : 16;
      pooled_t* grown = hgr__realloc(pool->allocator, pool->programs, capacity * sizeof(*grown));
      if (grown) {
        pool->programs = grown;
        pool->capacity = capacity;
      }
    }
    char *copy = NULL, *kernels_copy = NULL, *options_copy = NULL;
    hgr_status_t status = pool->count < pool->capacity ? hgr__strdup(pool->allocator, key, &copy) : HGR_OK;
    if (!status && kernels) status = hgr__strdup(pool->allocator, kernels, &kernels_copy);
    if (!status && options) status = hgr__strdup(pool->allocator, options, &options_copy);
    if (!status && copy && clRetainProgram(program) == CL_SUCCESS) /* out of memory: simply not pooled */
      pool->programs[pool->count++] = (pooled_t){instance, device_index, copy, kernels_copy, options_copy, program};
    else {
      hgr__free(pool->allocator, copy);
      hgr__free(pool->allocator, kernels_copy);
      hgr__free(pool->allocator, options_copy);
    }
    hgr_status_free(status);
  }
  pthread_mutex_unlock(&pool->mutex);
}
