/* The nesting check that runs on a model's bytes before protobuf-c unpacks them
 * (onnx_internal.h, hgr__onnx_wire_check). protobuf-c recurses once per nested
 * message, so a small file of messages nested thousands deep (TypeProto inside
 * TypeProto, a graph attribute inside a node inside a graph ...) overflows the
 * stack inside protobuf_c_message_unpack, before any check of hgr's can run.
 *
 * The scan reads the wire format with the schema's descriptors: a
 * length-delimited field that the descriptor says is a message is entered,
 * everything else is skipped by its wire type. It recurses too, but at most
 * HGR_ONNX_MAX_MESSAGE_DEPTH deep, and reads each byte once per level it is
 * nested in, so it is linear in the file for a bounded depth. Bytes it cannot
 * read (a varint past the end, a length beyond its message) end the scan
 * without an error: protobuf-c refuses them in turn, and anything nested before
 * them has been checked. */
#include <stdio.h>
#include <string.h>

#include "alloc.h"
#include "onnx_internal.h"

/* A string field's bytes in the model (not NUL-terminated). */
typedef struct wire_text_t {
  const uint8_t* bytes;
  size_t length;
} wire_text_t;

typedef struct wire_scan_t {
  const uint8_t* bytes;
  uint32_t graph_depth; /* GraphProtos entered */
  /* The NodeProto being scanned, as far as read: its name and op_type, which
   * serializers write before its attributes (the graphs it holds). */
  wire_text_t node_name, node_op;
  hgr_status_t status;
} wire_scan_t;

/* The node that holds the graph being entered: "node 'name' (op)", "an unnamed op
 * node", or less where the node did not say its name or op before its attributes. */
static void describe_holder(const wire_scan_t* scan, char* buffer, size_t capacity) {
  int name = (int)(scan->node_name.length < 100 ? scan->node_name.length : 100);
  int op = (int)(scan->node_op.length < 60 ? scan->node_op.length : 60);
  const char* name_bytes = (const char*)scan->node_name.bytes;
  const char* op_bytes = (const char*)scan->node_op.bytes;
  if (name && op) snprintf(buffer, capacity, "node '%.*s' (%.*s)", name, name_bytes, op, op_bytes);
  else if (op) snprintf(buffer, capacity, "an unnamed %.*s node", op, op_bytes);
  else if (name) snprintf(buffer, capacity, "node '%.*s'", name, name_bytes);
  else snprintf(buffer, capacity, "a node");
}

static bool read_varint(const uint8_t* bytes, size_t end, size_t* at, uint64_t* out) {
  uint64_t value = 0;
  for (unsigned shift = 0; shift < 64 && *at < end; shift += 7) {
    uint8_t byte = bytes[(*at)++];
    value |= (uint64_t)(byte & 0x7f) << shift;
    if (!(byte & 0x80)) {
      *out = value;
      return true;
    }
  }
  return false;
}

/* Scans the message of type descriptor in bytes [begin, end), nested depth
 * messages deep; false ends the whole scan (an error in scan->status, or bytes
 * protobuf-c will refuse). */
static bool scan_message(wire_scan_t* scan, const ProtobufCMessageDescriptor* descriptor, size_t begin, size_t end,
                         uint32_t depth) {
  if (depth > HGR_ONNX_MAX_MESSAGE_DEPTH) {
    scan->status = HGR_STATUS(HGR_STATUS_INVALID_ARGUMENT,
                              "the model nests protobuf messages more than %d deep (a %s at byte %zu); hgr refuses "
                              "deeper nesting before parsing",
                              HGR_ONNX_MAX_MESSAGE_DEPTH, descriptor->short_name, begin);
    return false;
  }
  bool is_graph = descriptor == &onnx__graph_proto__descriptor;
  bool is_node = descriptor == &onnx__node_proto__descriptor;
  if (is_graph && ++scan->graph_depth > HGR_ONNX_MAX_GRAPH_DEPTH) {
    char holder[200];
    describe_holder(scan, holder, sizeof(holder));
    scan->status = HGR_STATUS(HGR_STATUS_INVALID_ARGUMENT,
                              "the model nests graphs (If, Loop and Scan bodies) more than %d deep: %s holds a graph "
                              "at depth %u (a GraphProto at byte %zu); hgr refuses deeper nesting "
                              "(HGR_ONNX_MAX_GRAPH_DEPTH)",
                              HGR_ONNX_MAX_GRAPH_DEPTH, holder, scan->graph_depth, begin);
    return false;
  }
  if (is_node) scan->node_name = scan->node_op = (wire_text_t){NULL, 0};
  for (size_t at = begin; at < end;) {
    uint64_t key, length;
    if (!read_varint(scan->bytes, end, &at, &key)) return false;
    switch (key & 7) {
      case 0: /* varint */
        if (!read_varint(scan->bytes, end, &at, &length)) return false;
        break;
      case 1: /* 64-bit */
      case 5: /* 32-bit */
        length = (key & 7) == 1 ? 8 : 4;
        if (length > end - at) return false;
        at += (size_t)length;
        break;
      case 2: { /* length-delimited: a message when the schema says so */
        if (!read_varint(scan->bytes, end, &at, &length) || length > end - at) return false;
        const ProtobufCFieldDescriptor* field =
            key >> 3 <= UINT32_MAX ? protobuf_c_message_descriptor_get_field(descriptor, (unsigned)(key >> 3)) : NULL;
        if (is_node && field && field->type == PROTOBUF_C_TYPE_STRING && !strcmp(field->name, "name"))
          scan->node_name = (wire_text_t){scan->bytes + at, (size_t)length};
        if (is_node && field && field->type == PROTOBUF_C_TYPE_STRING && !strcmp(field->name, "op_type"))
          scan->node_op = (wire_text_t){scan->bytes + at, (size_t)length};
        if (field && field->type == PROTOBUF_C_TYPE_MESSAGE) {
          wire_text_t name = scan->node_name, op = scan->node_op; /* this node's, after its graphs' nodes */
          if (!scan_message(scan, field->descriptor, at, at + (size_t)length, depth + 1)) return false;
          scan->node_name = name;
          scan->node_op = op;
        }
        at += (size_t)length;
        break;
      }
      default: /* groups (3, 4) and unknown wire types: protobuf-c refuses them */
        return false;
    }
  }
  if (is_graph) --scan->graph_depth;
  return true;
}

hgr_status_t hgr__onnx_wire_check(const void* bytes, size_t size, const ProtobufCMessageDescriptor* descriptor) {
  wire_scan_t scan = {.bytes = bytes, .graph_depth = 0, .status = HGR_OK};
  scan_message(&scan, descriptor, 0, size, 1);
  return scan.status;
}

static void* protobuf_alloc(void* data, size_t size) {
  hgr__onnx_protobuf_allocator_t* wrapper = data;
  void* block = hgr__alloc(wrapper->allocator, size);
  if (!block) wrapper->failed = true;
  return block;
}

static void protobuf_free(void* data, void* block) {
  hgr__free(((hgr__onnx_protobuf_allocator_t*)data)->allocator, block);
}

void hgr__onnx_protobuf_allocator_init(hgr__onnx_protobuf_allocator_t* wrapper, hgr_allocator_t allocator) {
  wrapper->base = (ProtobufCAllocator){.alloc = protobuf_alloc, .free = protobuf_free, .allocator_data = wrapper};
  wrapper->allocator = allocator;
  wrapper->failed = false;
}
