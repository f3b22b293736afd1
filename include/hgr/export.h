/* hgr — export macro for the public API.
 *
 * The library is built with hidden visibility; only declarations marked HGR_API
 * are exported from the shared library. Consumers of the static library define
 * nothing: on ELF platforms the attribute is harmless there.
 *
 * Thread safety: macros only; no types, no state. */
#ifndef HGR_EXPORT_H_
#define HGR_EXPORT_H_

#if defined(_WIN32)
#  if defined(HGR_BUILDING_SHARED)
#    define HGR_API __declspec(dllexport)
#  elif defined(HGR_USING_SHARED)
#    define HGR_API __declspec(dllimport)
#  else
#    define HGR_API
#  endif
#elif defined(__GNUC__) || defined(__clang__)
#  define HGR_API __attribute__((visibility("default")))
#else
#  define HGR_API
#endif

#if defined(__GNUC__) || defined(__clang__)
#  define HGR_PRINTF(fmt_index, first_arg) __attribute__((format(printf, fmt_index, first_arg)))
#else
#  define HGR_PRINTF(fmt_index, first_arg)
#endif

#endif /* HGR_EXPORT_H_ */
