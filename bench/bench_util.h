/* Small helpers shared by the benchmark programs: a monotonic clock, medians, and a
 * growable text buffer. Header-only; no hgr and no OpenCL code, so the raw baselines
 * can use it too. */
#ifndef HGR_BENCH_UTIL_H_
#define HGR_BENCH_UTIL_H_

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* CLOCK_MONOTONIC in nanoseconds. */
static inline double bench_now_ns(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec * 1e9 + (double)t.tv_nsec;
}

/* CPU time of the calling thread in nanoseconds. */
static inline double bench_thread_cpu_ns(void) {
  struct timespec t;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
  return (double)t.tv_sec * 1e9 + (double)t.tv_nsec;
}

static inline int bench_compare_doubles(const void* a, const void* b) {
  double x = *(const double*)a, y = *(const double*)b;
  return (x > y) - (x < y);
}

/* Median of values[0..count) (count > 0); values are left unchanged. */
static inline double bench_median(const double* values, size_t count) {
  double* sorted = malloc(count * sizeof(double));
  if (!sorted) {
    fprintf(stderr, "bench: out of memory\n");
    exit(1);
  }
  memcpy(sorted, values, count * sizeof(double));
  qsort(sorted, count, sizeof(double), bench_compare_doubles);
  double median = count % 2 ? sorted[count / 2] : (sorted[count / 2 - 1] + sorted[count / 2]) / 2;
  free(sorted);
  return median;
}

/* A growable NUL-terminated string (for generated graph JSON). */
typedef struct bench_text_t {
  char* data;
  size_t length, capacity;
} bench_text_t;

static inline void bench_text_append(bench_text_t* text, const char* format, ...) {
  for (;;) {
    va_list args;
    va_start(args, format);
    size_t room = text->capacity - text->length;
    int n = vsnprintf(text->data ? text->data + text->length : NULL, text->data ? room : 0, format, args);
    va_end(args);
    if (n < 0) {
      fprintf(stderr, "bench: formatting failed\n");
      exit(1);
    }
    if (text->data && (size_t)n < room) {
      text->length += (size_t)n;
      return;
    }
    size_t capacity = text->capacity ? text->capacity * 2 : 4096;
    while (capacity < text->length + (size_t)n + 1) capacity *= 2;
    char* grown = realloc(text->data, capacity);
    if (!grown) {
      fprintf(stderr, "bench: out of memory\n");
      exit(1);
    }
    text->data = grown;
    text->capacity = capacity;
  }
}

#endif /* HGR_BENCH_UTIL_H_ */
