/* What the conv2d programs share (kernels/conv.cl, kernels/conv_depthwise.cl): the
 * meta layout runtime/ops/ops_conv.c writes (its META_* enum, in the same order),
 * the epilogue's flags and the epilogue. Included as text by the kernel embedding
 * (cmake/embed_kernels.cmake), so each program stays one self-contained source. */

#define CONV_N 0
#define CONV_C 1
#define CONV_H 2
#define CONV_W 3
#define CONV_K 4
#define CONV_OH 5
#define CONV_OW 6
#define CONV_KH 7
#define CONV_KW 8
#define CONV_SH 9
#define CONV_SW 10
#define CONV_DH 11
#define CONV_DW 12
#define CONV_PT 13
#define CONV_PL 14
#define CONV_GROUPS 15
#define CONV_FLAGS 16
#define CONV_CIT 17
#define CONV_TIH 18
#define CONV_TIW 19
#define CONV_TILES_K 20
#define CONV_ALPHA 21 /* float bits: leaky_relu's slope */
#define CONV_A_MIN 22 /* float bits: clip's bounds */
#define CONV_A_MAX 23
#define CONV_DW_ROWS 24 /* conv_depthwise.cl: output rows per work-item */
/* conv.cl's pooling kernels instead (conv2d's attr pool_size): the max pool's window
 * rows and columns, its stride too */
#define CONV_POOL_H 24
#define CONV_POOL_W 25
/* conv.cl's split stride-2 kernels instead: the scratch copy's padded rows and half
 * rows, and the zeros after its last row (at least 31 + (CONV_ROWS_S2_MAX_KW - 1) / 2: a
 * block of 32 lanes reads on past its row's end) */
#define CONV_SPLIT_HP 24
#define CONV_SPLIT_WH 25
#define CONV_SPLIT_TAIL 64
/* conv.cl's padded stride-1 kernels instead: the scratch copy's padded rows and
 * row width, and the zeros after its last row (a block's 32 lanes past the grid) */
#define CONV_PAD_HP 24
#define CONV_PAD_WP 25
#define CONV_PAD_TAIL 32

#define CONV_HAS_BIAS 1
#define CONV_RELU 2
#define CONV_LEAKY_RELU 4
#define CONV_CLIP 8
#define CONV_SIGMOID 16
#define CONV_SILU 32       /* v * sigmoid(v): a Sigmoid and the Mul of its input by it */
#define CONV_HARD_SWISH 64 /* v * min(max(v / 6 + 0.5, 0), 1) */

/* The fused epilogue after the bias, on a float or a floatN v of type T. */
#define CONV_ACTIVATE(T, v, flags, meta)                                                   \
  do {                                                                                    \
    if ((flags) & CONV_RELU) (v) = fmax((v), (T)(0.0f));                                  \
    if ((flags) & CONV_LEAKY_RELU) (v) = (v) < (T)(0.0f) ? (v) * as_float((meta)[CONV_ALPHA]) : (v); \
    if ((flags) & CONV_CLIP)                                                              \
      (v) = fmin(fmax((v), (T)(as_float((meta)[CONV_A_MIN]))), (T)(as_float((meta)[CONV_A_MAX]))); \
    if ((flags) & CONV_SIGMOID) (v) = (T)(1.0f) / ((T)(1.0f) + exp(-(v)));                 \
    if ((flags) & CONV_SILU) (v) = (v) * ((T)(1.0f) / ((T)(1.0f) + exp(-(v))));            \
    if ((flags) & CONV_HARD_SWISH) (v) = (v) * fmax(fmin((v) / (T)(6.0f) + (T)(0.5f), (T)(1.0f)), (T)(0.0f)); \
  } while (0)
