/* cJSON, wherever the system put its header (<cJSON.h>, or Debian's
 * <cjson/cJSON.h>): one place for the loaders, the writers, the reports and their
 * tests. */
#ifndef HGR_JSON_H_
#define HGR_JSON_H_

#if defined(__has_include)
#if __has_include(<cJSON.h>)
#include <cJSON.h>
#else
#include <cjson/cJSON.h>
#endif
#else
#include <cJSON.h>
#endif

#endif /* HGR_JSON_H_ */
