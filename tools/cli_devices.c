/* `hgr devices`: the devices the ICD loader reports, as a table or JSON. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "json.h"

static const char devices_usage[] =
    "usage: hgr devices [--json] [--context-per-device]\n"
    "\n"
    "Lists every OpenCL device with its spec string (what --device takes), platform,\n"
    "type, memory, compute units and OpenCL version, the platforms that were skipped\n"
    "and why, and the device-pair matrix (how data moves between each pair). Under\n"
    "mpirun, rank 0 lists every rank's devices (r1/pocl:0) and the pairs between\n"
    "ranks are cross-host (--json: each device and skipped platform with its rank).\n"
    "\n"
    "  --json                 print the same as JSON\n"
    "  --context-per-device   give every device its own OpenCL context (affects the\n"
    "                         pair matrix: devices of one platform become cross-context)\n"
    "  -h, --help             show this help\n";

static void write_json(const hgr_instance_t* instance, FILE* out) {
  size_t count = hgr_instance_device_count(instance);
  fprintf(out, "{\n  \"devices\": [");
  for (size_t i = 0; i < count; ++i) {
    const hgr_device_info_t* d = hgr_instance_device(instance, i);
    fprintf(out, "%s\n    {\"spec\": ", i ? "," : "");
    hgr_cli_json_string(out, d->spec);
    fprintf(out, ", \"platform\": ");
    hgr_cli_json_string(out, d->platform_name);
    fprintf(out, ", \"platform_vendor\": ");
    hgr_cli_json_string(out, d->platform_vendor);
    fprintf(out, ", \"platform_version\": ");
    hgr_cli_json_string(out, d->platform_version);
    fprintf(out, ", \"name\": ");
    hgr_cli_json_string(out, d->name);
    fprintf(out, ", \"vendor\": ");
    hgr_cli_json_string(out, d->vendor);
    fprintf(out, ", \"type\": \"%s\", \"opencl_version\": ", hgr_device_type_name(d->type));
    hgr_cli_json_string(out, d->version);
    fprintf(out, ", \"driver_version\": ");
    hgr_cli_json_string(out, d->driver_version);
    fprintf(out,
            ", \"compute_units\": %u, \"global_mem_bytes\": %llu, \"local_mem_bytes\": %llu"
            ", \"max_alloc_bytes\": %llu, \"base_address_align_bits\": %u"
            ", \"max_work_group_size\": %zu, \"fp16\": %s, \"fp64\": %s"
            ", \"unified_memory\": %s, \"timer_resolution_ns\": %llu}",
            d->compute_units, (unsigned long long)d->global_mem_bytes, (unsigned long long)d->local_mem_bytes,
            (unsigned long long)d->max_alloc_bytes, d->base_address_align_bits, d->max_work_group_size,
            d->fp16 ? "true" : "false", d->fp64 ? "true" : "false", d->unified_memory ? "true" : "false",
            (unsigned long long)d->timer_resolution_ns);
  }
  fprintf(out, "%s],\n  \"skipped_platforms\": [", count ? "\n  " : "");
  size_t skipped = hgr_instance_skipped_platform_count(instance);
  for (size_t i = 0; i < skipped; ++i) {
    const hgr_skipped_platform_t* s = hgr_instance_skipped_platform(instance, i);
    fprintf(out, "%s\n    {\"name\": ", i ? "," : "");
    hgr_cli_json_string(out, s->name);
    fprintf(out, ", \"reason\": ");
    hgr_cli_json_string(out, s->reason);
    fprintf(out, "}");
  }
  fprintf(out, "%s],\n  \"pairs\": [", skipped ? "\n  " : "");
  int first = 1;
  for (size_t a = 0; a < count; ++a)
    for (size_t b = 0; b < count; ++b) {
      if (a == b) continue;
      fprintf(out, "%s\n    {\"from\": \"%s\", \"to\": \"%s\", \"class\": \"%s\"}", first ? "" : ",",
              hgr_instance_device(instance, a)->spec, hgr_instance_device(instance, b)->spec,
              hgr_pair_class_name(hgr_instance_pair_class(instance, a, b)));
      first = 0;
    }
  fprintf(out, "%s]\n}\n", first ? "" : "\n  ");
}

/* Names key's string in object by its rank: "pocl:0" becomes "r1/pocl:0". */
static void name_rank(cJSON* object, const char* key, int rank) {
  const cJSON* value = cJSON_GetObjectItemCaseSensitive(object, key);
  if (!cJSON_IsString(value)) return;
  char spec[256];
  snprintf(spec, sizeof(spec), "r%d/%s", rank, value->valuestring);
  cJSON_ReplaceItemInObjectCaseSensitive(object, key, cJSON_CreateString(spec));
}

/* Moves every element of from[key] into into, each given its rank (and its specs
 * named by rank: the keys in specs, a NULL-ended list). */
static void move_elements(cJSON* from, const char* key, cJSON* into, int rank, const char* const* specs) {
  cJSON* array = cJSON_GetObjectItemCaseSensitive(from, key);
  while (cJSON_IsArray(array) && cJSON_GetArraySize(array) > 0) {
    cJSON* element = cJSON_DetachItemFromArray(array, 0);
    for (const char* const* spec = specs; *spec; ++spec) name_rank(element, *spec, rank);
    if (strcmp(key, "pairs")) cJSON_AddNumberToObject(element, "rank", rank);
    cJSON_AddItemToArray(into, element);
  }
}

/* Under mpirun, rank 0's document: every rank's own (write_json texts, in rank
 * order) merged into one. Specs name their rank ("r1/pocl:0"), every device and
 * skipped platform says its "rank", and every pair of devices of different ranks is
 * cross-host. */
static hgr_status_t write_ranks_json(char** texts, int ranks, FILE* out) {
  static const char* const device_specs[] = {"spec", NULL};
  static const char* const pair_specs[] = {"from", "to", NULL};
  static const char* const no_specs[] = {NULL};
  cJSON* merged = cJSON_CreateObject();
  cJSON_AddNumberToObject(merged, "ranks", ranks);
  cJSON* devices = cJSON_AddArrayToObject(merged, "devices");
  cJSON* skipped = cJSON_AddArrayToObject(merged, "skipped_platforms");
  cJSON* pairs = cJSON_AddArrayToObject(merged, "pairs");
  hgr_status_t status = HGR_OK;
  for (int r = 0; r < ranks && !status; ++r) {
    cJSON* own = cJSON_Parse(texts[r]);
    if (!own) {
      status = HGR_STATUS(HGR_STATUS_INTERNAL, "rank %d's device list is not JSON", r);
      break;
    }
    move_elements(own, "devices", devices, r, device_specs);
    move_elements(own, "skipped_platforms", skipped, r, no_specs);
    move_elements(own, "pairs", pairs, r, pair_specs);
    cJSON_Delete(own);
  }
  const cJSON* a = NULL;
  cJSON_ArrayForEach(a, devices) {
    const cJSON* b = NULL;
    cJSON_ArrayForEach(b, devices) {
      if (cJSON_GetNumberValue(cJSON_GetObjectItemCaseSensitive(a, "rank")) ==
          cJSON_GetNumberValue(cJSON_GetObjectItemCaseSensitive(b, "rank")))
        continue;
      cJSON* pair = cJSON_CreateObject();
      cJSON_AddStringToObject(pair, "from", cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(a, "spec")));
      cJSON_AddStringToObject(pair, "to", cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(b, "spec")));
      cJSON_AddStringToObject(pair, "class", hgr_pair_class_name(HGR_PAIR_CROSS_HOST));
      cJSON_AddItemToArray(pairs, pair);
    }
  }
  char* text = status ? NULL : cJSON_Print(merged);
  if (!status && !text) status = HGR_STATUS(HGR_STATUS_RESOURCE_EXHAUSTED, "out of host memory");
  if (text) fprintf(out, "%s\n", text);
  cJSON_free(text);
  cJSON_Delete(merged);
  return status;
}

/* --json: this rank's devices, or under mpirun every rank's (written by rank 0). */
static hgr_status_t print_json(const hgr_instance_t* instance) {
  if (!hgr_cli_ranks_launched()) {
    write_json(instance, stdout);
    return HGR_OK;
  }
  char* own = NULL;
  size_t length = 0;
  FILE* out = open_memstream(&own, &length);
  hgr_status_t status = HGR_OK;
  if (out) {
    write_json(instance, out);
    if (fclose(out)) status = HGR_STATUS(HGR_STATUS_RESOURCE_EXHAUSTED, "out of host memory");
  } else {
    status = HGR_STATUS(HGR_STATUS_RESOURCE_EXHAUSTED, "out of host memory");
  }
  status = hgr_cli_agree(status, "listing the devices");
  char** texts = NULL;
  int ranks = 0;
  if (!status) status = hgr_cli_gather_text(own, length, "listing the devices", &texts, &ranks);
  free(own);
  if (!status && texts) status = write_ranks_json(texts, ranks, stdout);
  free(texts);
  return status;
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
  if (!status && json) status = print_json(instance);
  else if (!status) status = hgr_cli_devices_write(stdout, &written);
  if (!status && !json && !written) print_table(instance);
  hgr_cli_instance_release(instance);
  return status ? hgr_cli_fail(status) : HGR_CLI_OK;
}
