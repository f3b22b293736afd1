/* Random TVM graph JSON for the end-to-end tests.
 *
 * A generated graph has a few float32 inputs spread over the device keys, then op
 * nodes that each run on one key and read only entries on that key: elementwise ops
 * (the reference's, see reference.h), `__copy` nodes that bring a value over from
 * another key (every ordered pair of keys gets at least one copy when op_count
 * allows), and `__nop` nodes whose output shares its input's storage id. Storage ids
 * come from a small planner like TVM's: inputs and heads keep their own storage,
 * intermediates reuse the storage of dead entries on the same key (of any size, so a
 * storage is sometimes grown), and a storage never spans two keys. Heads: the last
 * node's output plus up to two other entries (sometimes an input). */
#ifndef HGR_TEST_GRAPHGEN_H_
#define HGR_TEST_GRAPHGEN_H_

#include <stddef.h>
#include <stdint.h>

typedef struct hgr_test_graph_options_t {
  uint64_t seed;
  uint32_t op_count;           /* tvm_op nodes, __copy and __nop included (>= 1) */
  const uint64_t* sizes;       /* element counts to draw tensor sizes from (>= 1 entry) */
  size_t size_count;
  const int32_t* device_keys;  /* the keys to spread nodes over; with none (NULL, 0),
                                  the graph has no device_index column */
  size_t device_key_count;
} hgr_test_graph_options_t;

/* Returns the graph as malloc'd JSON text (free with free()), or NULL when memory
 * runs out or the options are empty. The same options give the same text. */
char* hgr_test_graph_generate(const hgr_test_graph_options_t* options);

#endif /* HGR_TEST_GRAPHGEN_H_ */
