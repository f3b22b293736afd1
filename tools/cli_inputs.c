/* The --input NAME=FILE options: each file read once and its array kept, because a
 * FIFO (or a pipe given as /dev/fd/N) yields its bytes to one reader only, and the
 * ONNX loader needs the arrays' shapes before the run needs their values. */
#include <stdlib.h>
#include <string.h>

#include "cli.h"

int hgr_cli_inputs_parse(const char* command, hgr_cli_inputs_t* inputs, int argc, char** argv, int* i) {
  if (strcmp(argv[*i], "--input")) return -1;
  char* value = *i + 1 < argc ? argv[*i + 1] : NULL;
  char* eq = value ? strchr(value, '=') : NULL;
  if (!eq || eq == value || !eq[1]) return hgr_cli_usage_error(command, "--input takes NAME=FILE.npy");
  if (inputs->count == HGR_CLI_MAX_INPUTS)
    return hgr_cli_usage_error(command, "too many --input options (at most %d)", HGR_CLI_MAX_INPUTS);
  *eq = 0;
  inputs->names[inputs->count] = value;
  inputs->files[inputs->count++] = eq + 1;
  ++*i;
  return HGR_CLI_OK;
}

hgr_status_t hgr_cli_inputs_array(hgr_cli_inputs_t* inputs, size_t i, const hgr_npy_array_t** out_array) {
  *out_array = NULL;
  if (inputs->dropped[i])
    return HGR_STATUS(HGR_STATUS_FAILED_PRECONDITION, "--input %s: its array was already handed on and freed",
                      inputs->names[i]);
  if (!inputs->loaded[i]) {
    HGR_RETURN_IF_ERROR_CLI(hgr_status_annotate(hgr_cli_load_array(inputs->files[i], &inputs->arrays[i]),
                                                "--input %s", inputs->names[i]));
    inputs->loaded[i] = true;
  }
  *out_array = &inputs->arrays[i];
  return HGR_OK;
}

void hgr_cli_inputs_drop(hgr_cli_inputs_t* inputs, size_t i) {
  if (inputs->loaded[i]) hgr_npy_array_free(&inputs->arrays[i]);
  inputs->loaded[i] = false;
  inputs->dropped[i] = true;
}

void hgr_cli_inputs_free(hgr_cli_inputs_t* inputs) {
  for (size_t i = 0; i < inputs->count; ++i)
    if (inputs->loaded[i]) hgr_npy_array_free(&inputs->arrays[i]);
  memset(inputs->loaded, 0, sizeof(inputs->loaded));
}
