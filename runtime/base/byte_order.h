/* Byte order of file data. The formats hgr reads and writes (TVM params, .npy, ONNX
 * raw_data, the headers of each) are little-endian on disk; in memory, tensor data is
 * in the host's order, so that a big-endian host computes on the same values a
 * little-endian one does. These helpers read and write integers byte by byte (no
 * unaligned loads of file data, no assumption about the host's order) and convert
 * whole arrays of elements between the two orders. */
#ifndef HGR_BYTE_ORDER_H_
#define HGR_BYTE_ORDER_H_

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

/* Whether the host stores the lowest byte of an integer first. */
static inline bool hgr__host_is_little_endian(void) {
  const uint16_t one = 1;
  uint8_t first;
  memcpy(&first, &one, 1);
  return first == 1;
}

/* The unsigned little-endian integer of size bytes (1 to 8) at bytes. */
static inline uint64_t hgr__le_load(const void* bytes, int size) {
  const uint8_t* byte = (const uint8_t*)bytes;
  uint64_t value = 0;
  for (int i = size - 1; i >= 0; --i) value = value << 8 | byte[i];
  return value;
}

/* Writes the low size bytes (1 to 8) of value at out, lowest first; returns the byte
 * after them. */
static inline uint8_t* hgr__le_store(void* out, uint64_t value, int size) {
  uint8_t* byte = (uint8_t*)out;
  for (int i = 0; i < size; ++i) byte[i] = (uint8_t)(value >> (8 * i));
  return byte + size;
}

/* Copies count elements of element_size bytes each from src to dst, reversing the
 * bytes of each element when swap is true (a plain copy otherwise, and always for
 * elements of one byte). dst may be src (in place); otherwise the two must not
 * overlap. The caller has checked that count * element_size bytes fit in both. */
static inline void hgr__byte_order_copy(void* dst, const void* src, size_t count, size_t element_size,
                                        bool swap) {
  size_t bytes = count * element_size;
  if (element_size <= 1 || !swap) {
    if (dst != src && bytes) memmove(dst, src, bytes);
    return;
  }
  uint8_t* out = (uint8_t*)dst;
  const uint8_t* in = (const uint8_t*)src;
  for (size_t e = 0; e < count; ++e, out += element_size, in += element_size)
    for (size_t low = 0, high = element_size - 1; low < high; ++low, --high) {
      uint8_t a = in[low], b = in[high];
      out[low] = b;
      out[high] = a;
    }
}

/* hgr__byte_order_copy between little-endian (file) order and the host's order: the
 * same reordering both ways, a plain copy on a little-endian host and each element's
 * bytes reversed on a big-endian one. */
static inline void hgr__le_copy(void* dst, const void* src, size_t count, size_t element_size) {
  hgr__byte_order_copy(dst, src, count, element_size, !hgr__host_is_little_endian());
}

#endif /* HGR_BYTE_ORDER_H_ */
