/* What the row-blocked kernels share (kernels/conv_depthwise.cl, kernels/pool.cl):
 * a block's lane numbers, the store of a block into an output row, and the mask of
 * a 3-wide window's tap t for lanes whose
 * tap 0 reads input column col: an int vector, -1 where column col + t lies in a
 * row of W columns, 0 outside. Made with shifts, not comparisons: PoCL 3.1 kept
 * comparison masks as <V x i1> vectors, spilled them as bytes and expanded them
 * again with 4 instructions per tap. Included as text by the kernel embedding
 * (cmake/embed_kernels.cmake). */

#define ROW_LANES8 (int8)(0, 1, 2, 3, 4, 5, 6, 7)
#define ROW_LANES16 (int16)(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15)

#define ROW_TAP_MASK(col, t, W) (~((((col) + (t)) >> 31) | (((W) - 1 - (t) - (col)) >> 31)))

/* Stores block v (floatV) at yr, the block's place in an output row of OW columns:
 * one vector store, or the first OW lanes where the row is narrower than a block. */
#define ROW_STORE(V, v, yr, OW)                                                                                \
  if ((OW) >= V) {                                                                                            \
    vstore##V(v, 0, yr);                                                                                      \
  } else {                                                                                                    \
    float part[V];                                                                                            \
    vstore##V(v, 0, part);                                                                                    \
    for (int j = 0; j < (OW); ++j) (yr)[j] = part[j];                                                         \
  }
