/* The chain benchmark's plan (chain_plan.h). */
#include "chain_plan.h"

#include <stdio.h>
#include <stdlib.h>

/* The value buffer of device that is not `avoid`. */
static int other_value(const chain_plan_t* plan, int device, int avoid) {
  return plan->value[device][0] != avoid ? plan->value[device][0] : plan->value[device][1];
}

void chain_plan_make(int nodes, int device_count, int switch_every, int elements, chain_plan_t* plan) {
  memset(plan, 0, sizeof(*plan));
  plan->device_count = device_count;
  plan->elements = elements;
  plan->nodes = nodes;
  int b = 0;
  plan->input = b;
  plan->buffer_device[b++] = 0;
  for (int d = 0; d < device_count; ++d) {
    plan->constant[d] = b;
    plan->buffer_device[b++] = d;
  }
  for (int d = 0; d < device_count; ++d)
    for (int v = 0; v < 2; ++v) {
      plan->value[d][v] = b;
      plan->buffer_device[b++] = d;
    }
  plan->buffer_count = b;
  plan->commands = calloc((size_t)nodes * 2 + 1, sizeof(chain_command_t));
  if (!plan->commands) {
    fprintf(stderr, "bench: out of memory\n");
    exit(1);
  }
  int current = plan->input;
  for (int k = 0; k < nodes; ++k) {
    int device = (k / switch_every) % device_count;
    if (plan->buffer_device[current] != device) {
      chain_command_t* copy = &plan->commands[plan->command_count++];
      *copy = (chain_command_t){true, CHAIN_ADD, device, current, other_value(plan, device, current)};
      current = copy->out;
    }
    chain_command_t* kernel = &plan->commands[plan->command_count++];
    *kernel = (chain_command_t){false, k % 2 ? CHAIN_MULTIPLY : CHAIN_ADD, device, current,
                                other_value(plan, device, current)};
    current = kernel->out;
  }
  plan->result = current;
}

void chain_plan_free(chain_plan_t* plan) {
  free(plan->commands);
  plan->commands = NULL;
}

int chain_plan_copy_count(const chain_plan_t* plan) {
  int copies = 0;
  for (int c = 0; c < plan->command_count; ++c) copies += plan->commands[c].copy;
  return copies;
}

char* chain_plan_json(const chain_plan_t* plan, const int* keys) {
  bench_text_t text = {0};
  int first_command = 1 + plan->device_count; /* node id of command 0 */
  int node_count = first_command + plan->command_count;
  bench_text_t storage = {0}, device = {0}, dltype = {0}, shape = {0};
  bench_text_append(&text, "{\n  \"nodes\": [\n    {\"op\": \"null\", \"name\": \"x\", \"inputs\": []}");
  bench_text_append(&storage, "%d", plan->input);
  bench_text_append(&device, "%d", keys[0]);
  for (int d = 0; d < plan->device_count; ++d) {
    bench_text_append(&text, ",\n    {\"op\": \"null\", \"name\": \"c%d\", \"inputs\": []}", d);
    bench_text_append(&storage, ", %d", plan->constant[d]);
    bench_text_append(&device, ", %d", keys[d]);
  }
  for (int c = 0; c < plan->command_count; ++c) {
    const chain_command_t* command = &plan->commands[c];
    int node = first_command + c;
    int input_node = c ? node - 1 : 0;
    const char* func = command->copy ? "__copy" : command->op == CHAIN_ADD ? "add" : "multiply";
    bench_text_append(&text,
                      ",\n    {\"op\": \"tvm_op\", \"name\": \"%s_%d\", \"attrs\": {\"func_name\": \"%s\", "
                      "\"num_inputs\": \"%d\", \"num_outputs\": \"1\", \"flatten_data\": \"0\"}, "
                      "\"inputs\": [[%d, 0, 0]",
                      command->copy ? "copy" : func, node, func, command->copy ? 1 : 2, input_node);
    if (!command->copy) bench_text_append(&text, ", [%d, 0, 0]", 1 + command->device);
    bench_text_append(&text, "]}");
    bench_text_append(&storage, ", %d", command->out);
    bench_text_append(&device, ", %d", keys[command->device]);
  }
  for (int n = 0; n < node_count; ++n) {
    bench_text_append(&dltype, "%s\"float32\"", n ? ", " : "");
    bench_text_append(&shape, "%s[%d]", n ? ", " : "", plan->elements);
  }
  bench_text_append(&text, "\n  ],\n  \"arg_nodes\": [");
  for (int n = 0; n < first_command; ++n) bench_text_append(&text, "%s%d", n ? ", " : "", n);
  bench_text_append(&text, "],\n  \"node_row_ptr\": [");
  for (int n = 0; n <= node_count; ++n) bench_text_append(&text, "%s%d", n ? ", " : "", n);
  bench_text_append(&text,
                    "],\n  \"heads\": [[%d, 0, 0]],\n  \"attrs\": {\n"
                    "    \"storage_id\": [\"list_int\", [%s]],\n"
                    "    \"device_index\": [\"list_int\", [%s]],\n"
                    "    \"dltype\": [\"list_str\", [%s]],\n"
                    "    \"shape\": [\"list_shape\", [%s]]\n  }\n}\n",
                    node_count - 1, storage.data, device.data, dltype.data, shape.data);
  free(storage.data);
  free(device.data);
  free(dltype.data);
  free(shape.data);
  return text.data;
}

void chain_plan_reference(const chain_plan_t* plan, const float* x, const float* const* constants, float* out) {
  for (int i = 0; i < plan->elements; ++i) {
    float value = x[i];
    for (int c = 0; c < plan->command_count; ++c) {
      const chain_command_t* command = &plan->commands[c];
      if (command->copy) continue;
      float y = constants[command->device][i];
      value = command->op == CHAIN_ADD ? value + y : value * y;
    }
    out[i] = value;
  }
}
