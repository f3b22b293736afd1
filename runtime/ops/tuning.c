/* Tile choices: an op with tile candidates chooses one per node from its own rule
 * over the device's limits, unless the executor's tuning says otherwise (a record
 * of `hgr tune` for the node's device and layer, or one candidate for every node
 * while hgr_tune_graph measures it). The records come from exec/tune_store.c. */
#include <stdio.h>
#include <string.h>

#include "ops.h"

const char* hgr__tune_device_id(const hgr_device_info_t* info, char* buffer, size_t capacity) {
  snprintf(buffer, capacity, "%s|%s|%s|%s", info->platform_name ? info->platform_name : "",
           info->name ? info->name : "", info->version ? info->version : "",
           info->driver_version ? info->driver_version : "");
  return buffer;
}

const char* hgr__tune_lookup(const hgr__tune_table_t* table, const char* device, const char* key) {
  if (!table || !device || !key) return NULL;
  for (size_t i = 0; i < table->count; ++i) {
    const hgr__tune_record_t* record = &table->records[i];
    if (!strcmp(record->device, device) && !strcmp(record->key, key)) return record->tile;
  }
  return NULL;
}

uint32_t hgr__op_choose_tile(hgr__op_ctx_t* ctx, const char* key, const char* const* names, const bool* fits,
                             uint32_t count, uint32_t by_limits) {
  uint32_t chosen = by_limits;
  hgr_tile_source_t source = HGR_TILE_LIMITS;
  const hgr__tuning_t* tuning = ctx->tuning;
  if (tuning && tuning->mode == HGR_TUNING_CANDIDATE && tuning->candidate < count && fits[tuning->candidate]) {
    chosen = tuning->candidate;
    source = HGR_TILE_CANDIDATE;
  } else if (tuning && tuning->mode == HGR_TUNING_FILE) {
    const char* tile = hgr__tune_lookup(tuning->table, tuning->device, key);
    for (uint32_t i = 0; tile && i < count; ++i)
      if (!strcmp(names[i], tile) && fits[i]) {
        chosen = i;
        source = HGR_TILE_TUNED;
        break;
      }
  }
  hgr_tile_choice_t* choice = &ctx->tile;
  memset(choice, 0, sizeof(*choice));
  choice->source = source;
  choice->candidate = chosen;
  choice->candidate_count = count;
  snprintf(choice->tile, sizeof(choice->tile), "%s", names[chosen]);
  snprintf(choice->key, sizeof(choice->key), "%s", key);
  return chosen;
}
