/* hgr — command-line front end. Thin: parses flags and calls the public API. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

static const char usage[] =
    "usage: hgr <command> [options]\n"
    "\n"
    "Runs TVM graph-executor graphs on the OpenCL devices of this machine.\n"
    "\n"
    "commands:\n"
    "  devices   list OpenCL devices, their spec strings, and skipped platforms\n"
    "  run       run a graph: hgr run GRAPH.json [--params FILE] [--input NAME=FILE.npy]...\n"
    "  check     validate a graph and summarize its placement without running it\n"
    "  place     place a graph on the devices, insert copies, plan memory, write it\n"
    "  tune      measure tile candidates per layer and store the fastest for later runs\n"
    "  compile   build a model's programs ahead of its first run; write a bundle\n"
    "\n"
    "options:\n"
    "  -h, --help     show this help; `hgr <command> --help` describes a command\n"
    "  --version      print the version\n"
    "\n"
    "Device specs: pocl:0, rusticl:0, oclgrind:0 (platform name, then index),\n"
    "cpu:0, gpu:1, accelerator:0 (by type), or P.D (platform and device index);\n"
    "under mpirun, rN/SPEC is rank N's device (docs/distributed.md).\n";

int hgr_cli_fail(hgr_status_t status) {
  char* text = hgr_status_to_string(status);
  if (hgr_cli_ranks_launched()) fprintf(stderr, "hgr (rank %d): %s\n", hgr_cli_rank(), text ? text : "out of memory");
  else fprintf(stderr, "hgr: %s\n", text ? text : "out of memory");
  free(text);
  hgr_status_free(status);
  return HGR_CLI_FAILED;
}

int hgr_cli_usage_error(const char* command, const char* format, ...) {
  va_list args;
  va_start(args, format);
  fprintf(stderr, "hgr %s: ", command);
  vfprintf(stderr, format, args);
  fprintf(stderr, "\n(see `hgr %s --help`)\n", command);
  va_end(args);
  return HGR_CLI_USAGE;
}

const char* hgr_cli_bytes(unsigned long long bytes, char* buffer, size_t capacity) {
  static const char* units[] = {"B", "KiB", "MiB", "GiB", "TiB"};
  double value = (double)bytes;
  size_t unit = 0;
  while (value >= 1024.0 && unit < 4) {
    value /= 1024.0;
    ++unit;
  }
  if (unit == 0) snprintf(buffer, capacity, "%llu B", bytes);
  else snprintf(buffer, capacity, "%.1f %s", value, units[unit]);
  return buffer;
}

void hgr_cli_json_string(FILE* out, const char* text) {
  fputc('"', out);
  for (const unsigned char* p = (const unsigned char*)(text ? text : ""); *p; ++p) {
    if (*p == '"' || *p == '\\') fprintf(out, "\\%c", *p);
    else if (*p == '\n') fputs("\\n", out);
    else if (*p < 0x20) fprintf(out, "\\u%04x", *p);
    else fputc(*p, out);
  }
  fputc('"', out);
}

static int run_command(int argc, char** argv) {
  if (argc < 2) {
    fputs(usage, stderr);
    return HGR_CLI_USAGE;
  }
  const char* command = argv[1];
  if (!strcmp(command, "-h") || !strcmp(command, "--help") || !strcmp(command, "help")) {
    fputs(usage, stdout);
    return HGR_CLI_OK;
  }
  if (!strcmp(command, "--version")) {
    printf("hgr %d.%d.%d\n", HGR_VERSION_MAJOR, HGR_VERSION_MINOR, HGR_VERSION_PATCH);
    return HGR_CLI_OK;
  }
  if (!strcmp(command, "devices")) return hgr_cli_devices(argc - 1, argv + 1);
  if (!strcmp(command, "run")) return hgr_cli_run(argc - 1, argv + 1);
  if (!strcmp(command, "check")) return hgr_cli_check(argc - 1, argv + 1);
  if (!strcmp(command, "place")) return hgr_cli_place(argc - 1, argv + 1);
  if (!strcmp(command, "tune")) return hgr_cli_tune(argc - 1, argv + 1);
  if (!strcmp(command, "compile")) return hgr_cli_compile(argc - 1, argv + 1);
  fprintf(stderr, "hgr: unknown command '%s'\n\n%s", command, usage);
  return HGR_CLI_USAGE;
}

int main(int argc, char** argv) {
  int code = hgr_cli_ranks_start(&argc, &argv);
  if (code != HGR_CLI_OK) return code;
  code = run_command(argc, argv);
  hgr_cli_ranks_finish();
  return code;
}
