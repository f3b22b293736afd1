/* `hgr devices`: the devices the ICD loader reports, as a table or JSON. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

static const char devices_usage[] =
    "usage: hgr devices [--json] [--context-per-device]\n"
    "\n"
    "Lists every OpenCL device with its spec string (what --device takes), platform,\n"
    "type, memory, compute units and OpenCL version, the platforms that were skipped\n"
    "and why, and the device-pair matrix (how data moves between each pair). Under\n"
    "mpirun, rank 0 lists every rank's devices (r1/pocl:0) and the pairs between\n"
    "ranks are cross-host (--json: rank 0's own devices).\n"
    "\n"
    "  --json                 print the same as JSON\n"
    "  --context-per-device   give every device its own OpenCL context (affects the\n"
    "                         pair matrix: devices of one platform become cross-context)\n"
    "  -h, --help             show this help\n";

static void print_json(const hgr_instance_t* instance) {
  size_t count = hgr_instance_device_count(instance);
  printf("{\n  \"devices\": [");
  for (size_t i = 0; i < count; ++i) {
    const hgr_device_info_t* d = hgr_instance_device(instance, i);
    printf("%s\n    {\"spec\": ", i ? "," : "");
    hgr_cli_json_string(stdout, d->spec);
    printf(", \"platform\": ");
    hgr_cli_json_string(stdout, d->platform_name);
    printf(", \"platform_vendor\": ");
    hgr_cli_json_string(stdout, d->platform_vendor);
    printf(", \"platform_version\": ");
    hgr_cli_json_string(stdout, d->platform_version);
    printf(", \"name\": ");
    hgr_cli_json_string(stdout, d->name);
    printf(", \"vendor\": ");
    hgr_cli_json_string(stdout, d->vendor);
    printf(", \"type\": \"%s\", \"opencl_version\": ", hgr_device_type_name(d->type));
    hgr_cli_json_string(stdout, d->version);
    printf(", \"driver_version\": ");
    hgr_cli_json_string(stdout, d->driver_version);
    printf(", \"compute_units\": %u, \"global_mem_bytes\": %llu, \"local_mem_bytes\": %llu"
           ", \"max_alloc_bytes\": %llu, \"base_address_align_bits\": %u"
           ", \"max_work_group_size\": %zu, \"fp16\": %s, \"fp64\": %s"
           ", \"unified_memory\": %s, \"timer_resolution_ns\": %llu}",
           d->compute_units, (unsigned long long)d->global_mem_bytes,
           (unsigned long long)d->local_mem_bytes, (unsigned long long)d->max_alloc_bytes,
           d->base_address_align_bits, d->max_work_group_size, d->fp16 ? "true" : "false",
           d->fp64 ? "true" : "false", d->unified_memory ? "true" : "false",
           (unsigned long long)d->timer_resolution_ns);
  }
  printf("%s],\n  \"skipped_platforms\": [", count ? "\n  " : "");
  size_t skipped = hgr_instance_skipped_platform_count(instance);
  for (size_t i = 0; i < skipped; ++i) {
    const hgr_skipped_platform_t* s = hgr_instance_skipped_platform(instance, i);
    printf("%s\n    {\"name\": ", i ? "," : "");
    hgr_cli_json_string(stdout, s->name);
    printf(", \"reason\": ");
    hgr_cli_json_string(stdout, s->reason);
    printf("}");
  }
  printf("%s],\n  \"pairs\": [", skipped ? "\n  " : "");
  int first = 1;
  for (size_t a = 0; a < count; ++a)
    for (size_t b = 0; b < count; ++b) {
      if (a == b) continue;
      printf("%s\n    {\"from\": \"%s\", \"to\": \"%s\", \"class\": \"%s\"}", first ? "" : ",",
             hgr_instance_device(instance, a)->spec, hgr_instance_device(instance, b)->spec,
             hgr_pair_class_name(hgr_instance_pair_class(instance, a, b)));
      first = 0;
    }
  printf("%s]\n}\n", first ? "" : "\n  ");
}

static void print_table(const hgr_instance_t* instance) {
  size_t count = hgr_instance_device_count(instance);
  if (count == 0) {
    printf("No OpenCL devices found.\n");
  } else {
    printf("%-12s %-28s %-34s %-5s %10s %10s %4s  %s\n", "SPEC", "PLATFORM", "DEVICE", "TYPE",
           "MEMORY", "MAX ALLOC", "CUs", "OPENCL");
    for (size_t i = 0; i < count; ++i) {
      const hgr_device_info_t* d = hgr_instance_device(instance, i);
      char memory[32], alloc[32];
      printf("%-12s %-28.28s %-34.34s %-5s %10s %10s %4u  %d.%d\n", d->spec, d->platform_name,
             d->name, hgr_device_type_name(d->type),
             hgr_cli_bytes(d->global_mem_bytes, memory, sizeof(memory)),
             hgr_cli_bytes(d->max_alloc_bytes, alloc, sizeof(alloc)), d->compute_units,
             d->opencl_major, d->opencl_minor);
    }
  }
  size_t skipped = hgr_instance_skipped_platform_count(instance);
  if (skipped) {
    printf("\nSkipped platforms:\n");
    for (size_t i = 0; i < skipped; ++i) {
      const hgr_skipped_platform_t* s = hgr_instance_skipped_platform(instance, i);
      printf("  %-28s %s\n", s->name, s->reason);
    }
  }
  if (count > 1) {
    printf("\nDevice pairs (how a copy from ROW to COLUMN is made):\n%-12s", "");
    for (size_t b = 0; b < count; ++b) printf(" %-15s", hgr_instance_device(instance, b)->spec);
    printf("\n");
    for (size_t a = 0; a < count; ++a) {
      printf("%-12s", hgr_instance_device(instance, a)->spec);
      for (size_t b = 0; b < count; ++b)
        printf(" %-15s", hgr_pair_class_name(hgr_instance_pair_class(instance, a, b)));
      printf("\n");
    }
  }
}

int hgr_cli_devices(int argc, char** argv) {
  int json = 0;
  hgr_instance_options_t options;
  hgr_instance_options_init(&options);
  for (int i = 1; i < argc; ++i) {
    if (!strcmp(argv[i], "-h") || !strcmp(argv[i], "--help")) {
      fputs(devices_usage, stdout);
      return HGR_CLI_OK;
    } else if (!strcmp(argv[i], "--json")) {
      json = 1;
    } else if (!strcmp(argv[i], "--context-per-device")) {
      options.context_per_device = true;
    } else {
      return hgr_cli_usage_error("devices", "unknown option '%s'", argv[i]);
    }
  }
  hgr_instance_t* instance = NULL;
  bool written = false;
  hgr_status_t status = hgr_cli_instance_create(&options, &instance);
  if (!status && !json) status = hgr_cli_devices_write(stdout, &written);
  if (status) return hgr_cli_fail(status);
  if (json) print_json(instance); /* under mpirun: rank 0's */
  else if (!written) print_table(instance);
  hgr_cli_instance_release(instance);
  return HGR_CLI_OK;
}
