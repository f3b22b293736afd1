/* Sizes and counts on the command line: one parser for every flag that takes one,
 * so that none accepts what strtoull would (a sign, leading spaces, a value that
 * overflowed to ULLONG_MAX, trailing text) and each error names the flag. */
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "cli.h"

hgr_status_t hgr_cli_parse_number(const char* text, bool suffixes, uint64_t min, uint64_t max,
                                  uint64_t* out_value) {
  const char* form = suffixes ? "digits with an optional K, M, G or T suffix (powers of 1024)" : "digits";
  if (!text)
    return HGR_STATUS(HGR_STATUS_INVALID_ARGUMENT, "no value: a %s is %s", suffixes ? "size" : "count", form);
  if (!text[0])
    return HGR_STATUS(HGR_STATUS_INVALID_ARGUMENT, "an empty value: a %s is %s", suffixes ? "size" : "count", form);
  if (text[0] < '0' || text[0] > '9')
    return HGR_STATUS(HGR_STATUS_INVALID_ARGUMENT, "'%s' is not a %s: that is %s, with no sign or space", text,
                      suffixes ? "size" : "count", form);
  uint64_t value = 0;
  const char* c = text;
  for (; *c >= '0' && *c <= '9'; ++c)
    if (__builtin_mul_overflow(value, 10, &value) || __builtin_add_overflow(value, (uint64_t)(*c - '0'), &value))
      return HGR_STATUS(HGR_STATUS_OUT_OF_RANGE, "'%s' is more than %llu", text, (unsigned long long)max);
  unsigned shift = 0;
  if (suffixes && *c) {
    const char* units = "KMGT";
    const char* unit = strchr(units, *c);
    if (unit) {
      shift = 10u * (unsigned)(unit - units + 1);
      ++c;
    }
  }
  if (*c)
    return HGR_STATUS(HGR_STATUS_INVALID_ARGUMENT, "'%s' is not a %s: that is %s, with nothing after it", text,
                      suffixes ? "size" : "count", form);
  if (shift && value > (UINT64_MAX >> shift))
    return HGR_STATUS(HGR_STATUS_OUT_OF_RANGE, "'%s' is more than %llu", text, (unsigned long long)max);
  value <<= shift;
  if (value > max) return HGR_STATUS(HGR_STATUS_OUT_OF_RANGE, "'%s' is more than %llu", text, (unsigned long long)max);
  if (value < min) return HGR_STATUS(HGR_STATUS_OUT_OF_RANGE, "'%s' is less than %llu", text, (unsigned long long)min);
  *out_value = value;
  return HGR_OK;
}

int hgr_cli_number_flag(const char* command, const char* flag, const char* text, bool suffixes, uint64_t min,
                        uint64_t max, uint64_t* out_value) {
  hgr_status_t status = hgr_cli_parse_number(text, suffixes, min, max, out_value);
  if (!status) return HGR_CLI_OK;
  int code = hgr_cli_usage_error(command, "%s: %s", flag, hgr_status_message(status));
  hgr_status_free(status);
  return code;
}
