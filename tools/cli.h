/* The `hgr` command-line program: shared declarations of its commands. */
#ifndef HGR_CLI_H_
#define HGR_CLI_H_

#include <stdbool.h>
#include <stdio.h>

#include "hgr/hgr.h"

/* Exit codes: 0 success, 1 failure, 2 usage error. */
#define HGR_CLI_OK 0
#define HGR_CLI_FAILED 1
#define HGR_CLI_USAGE 2

int hgr_cli_devices(int argc, char** argv);
int hgr_cli_run(int argc, char** argv);
int hgr_cli_check(int argc, char** argv);

/* Returns the status of expr from the enclosing function if it failed. */
#define HGR_RETURN_IF_ERROR_CLI(expr)       \
  do {                                      \
    hgr_status_t cli_status_ = (expr);      \
    if (cli_status_) return cli_status_;    \
  } while (0)

/* Prints "hgr: <status>" to stderr, frees it, returns HGR_CLI_FAILED. */
int hgr_cli_fail(hgr_status_t status);

/* Prints "hgr <command>: <message>" and a hint to use --help; returns HGR_CLI_USAGE. */
int hgr_cli_usage_error(const char* command, const char* format, ...);

/* Formats bytes as "12.0 MiB" into buffer. */
const char* hgr_cli_bytes(unsigned long long bytes, char* buffer, size_t capacity);

/* Writes text as a JSON string literal (quoted, escaped). */
void hgr_cli_json_string(FILE* out, const char* text);

#endif /* HGR_CLI_H_ */
