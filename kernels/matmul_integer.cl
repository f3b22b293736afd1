/* matmul_integer (runtime/ops/ops_matmul_integer.c): an integer GEMM of 8-bit
 * operands, the products of (a - a_zero) and (b - b_zero) summed exactly (int32),
 *   c[i, j] = sum_l (a[i, l] - a_zero) * (b[j, l] - b_zero[j * zb_step])
 * and, for the float32 output, times scale[j * scale_step] (one float32 product of
 * the int32 sum converted to float32, as ONNX Runtime's requantizing multiply).
 * a is [m, k] with contiguous rows (the activations, uint8 or int8), b is [n, k]
 * (a weight matrix stored transposed, so that both operands run along k).
 *
 *   hgr_matmul_integer_<ta><tb>_<out>_<lanes>(__global const TA* a, __global const TB* b,
 *       __global const TA* a_zero, __global const TB* b_zero,
 *       __global const float* scale, __global OUT* c, int m, int n, int k,
 *       int zb_step, int scale_step)
 * ta, tb: u8 or i8; out: f32 (scaled) or i32 (scale unread). NDRange
 * (ceil(n / 4), ceil(m / 4)), any local size: each work-item computes a block of
 * 4 rows x 4 columns of c, 8 of the depth at a time (rows and columns past the ends
 * read the last ones and are not stored; the depth's last k % 8 one at a time).
 *
 * Two ways to sum the products exactly (lanes):
 * - int: in int32 lanes. a is taken unsigned (int8 plus 128, its zero point too)
 *   and zero-extended, b - b_zero sign-extended from 16 bits, so that LLVM selects
 *   x86's pmaddwd for the product (it does on PoCL); sum_l a (b - zb) then loses
 *   a_zero times the column's sum of b - zb, kept beside it. Exact while
 *   k * 255^2 < 2^31 (k < 33025; the plan checks).
 * - flt: (a - a_zero) and (b - b_zero) as float8, multiplied and added in float
 *   lanes, which are exact integers while each lane's sum stays within 2^24: k / 8
 *   products of at most 255^2 each (k / 8 <= 258; the plan takes flt then).
 *   On PoCL (LLVM 15, skylake-avx512 code, no VNNI) the float multiply-add runs
 *   faster than the int lanes' pmaddwd and add: bench/notes.md. */

#include "select.h"

/* The horizontal sum of a row's four accumulators, through private memory
 * (Oclgrind 21.10 mistakes the shadow of narrowing shuffles, as linalg.cl's gemv). */
static inline int4 hgr_mi_sum4(int8 d0, int8 d1, int8 d2, int8 d3) {
  int part[32];
  vstore8(d0, 0, part);
  vstore8(d1, 1, part);
  vstore8(d2, 2, part);
  vstore8(d3, 3, part);
  int sum[4] = {0, 0, 0, 0};
  for (int c = 0; c < 4; ++c)
    for (int e = 0; e < 8; ++e) sum[c] += part[c * 8 + e];
  return vload4(0, sum);
}

/* a's 8 values from p, as unsigned: uint8 as they are, int8 plus 128 (its top bit flipped) */
#define HGR_MI_A_u8(p) convert_int8(vload8(0, p))
#define HGR_MI_A_i8(p) convert_int8(as_uchar8(vload8(0, p)) ^ (uchar8)0x80)
#define HGR_MI_A1_u8(v) (int)(v)
#define HGR_MI_A1_i8(v) ((int)(v) + 128)

/* int: b - b_zero as int8 (sign-extended from 16 bits) into the columns' sums, a as
 * unsigned (zero-extended: pmaddwd); flt: both differences as float8 */
#define HGR_MI_ACC_int int8
#define HGR_MI_ACC_flt float8
#define HGR_MI_ZC_int za
#define HGR_MI_ZC_flt 0
#define HGR_MI_LOAD_B_int(c, z)                                                         \
  const int8 bv##c = convert_int8(convert_short8(vload8(0, b##c + l)) - (short8)(short)(z)); \
  s##c += bv##c;
#define HGR_MI_LOAD_B_flt(c, z) const float8 bv##c = convert_float8(convert_int8(vload8(0, b##c + l)) - (z));
#define HGR_MI_LOAD_A_int(r, ta) const int8 av##r = HGR_MI_A_##ta(a##r + l);
#define HGR_MI_LOAD_A_flt(r, ta) const float8 av##r = convert_float8(HGR_MI_A_##ta(a##r + l) - za);
#define HGR_MI_INT_int(d) d
#define HGR_MI_INT_flt(d) convert_int8(d)
#define HGR_MI_MAD(r)           \
  d##r##0 += av##r * bv0;       \
  d##r##1 += av##r * bv1;       \
  d##r##2 += av##r * bv2;       \
  d##r##3 += av##r * bv3;
#define HGR_MI_TAIL(r, ta, zc)                           \
  {                                                      \
    const int x = HGR_MI_A1_##ta(a##r[l]) - (za - zc);   \
    t##r += x * y;                                       \
  }
#define HGR_MI_STORE(r, out, mode)                                                             \
  if (row0 + r < m) {                                                                          \
    const int4 sum = as_int4(as_uint4(hgr_mi_sum4(HGR_MI_INT_##mode(d##r##0), HGR_MI_INT_##mode(d##r##1), \
                                                  HGR_MI_INT_##mode(d##r##2), HGR_MI_INT_##mode(d##r##3)) + t##r) - \
                             (uint)zc * as_uint4(column));                                     \
    HGR_MI_OUT_##out(sum, c + (row0 + r) * n + j0)                                              \
  }

/* The columns' scales (f32 only: i32 reads none). */
#define HGR_MI_SCALE_f32                                                                       \
  const float4 s = (float4)(scale[min(j0, jl) * scale_step], scale[min(j0 + 1, jl) * scale_step], \
                            scale[min(j0 + 2, jl) * scale_step], scale[min(j0 + 3, jl) * scale_step]);
#define HGR_MI_SCALE_i32

/* Storing a row's 4 values v from column j0 (the columns below n). */
#define HGR_MI_PUT4(v, at)                                                                 \
  {                                                                                       \
    if (j0 + 4 <= n) vstore4(v, 0, at);                                                   \
    else {                                                                                \
      (at)[0] = (v).s0;                                                                   \
      if (j0 + 1 < n) (at)[1] = (v).s1;                                                   \
      if (j0 + 2 < n) (at)[2] = (v).s2;                                                   \
    }                                                                                     \
  }
/* Storing a row's 4 sums (f32: times the columns' scales s). */
#define HGR_MI_OUT_f32(sum, at)                                                            \
  {                                                                                       \
    const float4 v = convert_float4(sum) * s;                                             \
    HGR_MI_PUT4(v, at)                                                                    \
  }
#define HGR_MI_OUT_i32(sum, at) HGR_MI_PUT4(sum, at)

#define HGR_MATMUL_INTEGER(mode, ta, TA, tb, TB, out, OUT)                                                        \
  HGR_KERNEL_IF(hgr_matmul_integer_##ta##tb##_##out##_##mode,                                                    \
  __kernel void hgr_matmul_integer_##ta##tb##_##out##_##mode(                                                    \
      __global const TA* restrict a, __global const TB* restrict b, __global const TA* restrict a_zero, \
      __global const TB* restrict b_zero, __global const float* restrict scale, __global OUT* restrict c, \
      int m, int n, int k, int zb_step, int scale_step) {                                               \
    const int j0 = (int)get_global_id(0) * 4, row0 = (int)get_global_id(1) * 4;                        \
    if (j0 >= n || row0 >= m) return;                                                                   \
    const int jl = n - 1;                                                                               \
    __global const TA* a0 = a + min(row0, m - 1) * k;                                                   \
    __global const TA* a1 = a + min(row0 + 1, m - 1) * k;                                               \
    __global const TA* a2 = a + min(row0 + 2, m - 1) * k;                                               \
    __global const TA* a3 = a + min(row0 + 3, m - 1) * k;                                               \
    __global const TB* b0 = b + min(j0, jl) * k;                                                        \
    __global const TB* b1 = b + min(j0 + 1, jl) * k;                                                    \
    __global const TB* b2 = b + min(j0 + 2, jl) * k;                                                    \
    __global const TB* b3 = b + min(j0 + 3, jl) * k;                                                    \
    const int za = HGR_MI_A1_##ta(a_zero[0]);                                                           \
    const int4 zb = (int4)((int)b_zero[min(j0, jl) * zb_step], (int)b_zero[min(j0 + 1, jl) * zb_step],  \
                           (int)b_zero[min(j0 + 2, jl) * zb_step], (int)b_zero[min(j0 + 3, jl) * zb_step]); \
    HGR_MI_ACC_##mode d00 = 0, d01 = 0, d02 = 0, d03 = 0, d10 = 0, d11 = 0, d12 = 0, d13 = 0;             \
    HGR_MI_ACC_##mode d20 = 0, d21 = 0, d22 = 0, d23 = 0, d30 = 0, d31 = 0, d32 = 0, d33 = 0;             \
    int8 s0 = 0, s1 = 0, s2 = 0, s3 = 0; /* the columns' sums of b - b_zero (int only) */               \
    int l = 0;                                                                                          \
    for (; l + 8 <= k; l += 8) {                                                                        \
      HGR_MI_LOAD_B_##mode(0, zb.s0) HGR_MI_LOAD_B_##mode(1, zb.s1)                                     \
      HGR_MI_LOAD_B_##mode(2, zb.s2) HGR_MI_LOAD_B_##mode(3, zb.s3)                                     \
      HGR_MI_LOAD_A_##mode(0, ta) HGR_MI_LOAD_A_##mode(1, ta)                                           \
      HGR_MI_LOAD_A_##mode(2, ta) HGR_MI_LOAD_A_##mode(3, ta)                                           \
      HGR_MI_MAD(0) HGR_MI_MAD(1) HGR_MI_MAD(2) HGR_MI_MAD(3)                                           \
    }                                                                                                   \
    int4 t0 = 0, t1 = 0, t2 = 0, t3 = 0;                                                                \
    int4 column = hgr_mi_sum4(s0, s1, s2, s3);                                                          \
    const int zc = HGR_MI_ZC_##mode; /* flt: a_zero already subtracted */                               \
    for (; l < k; ++l) {                                                                                \
      const int4 y = (int4)((int)b0[l], (int)b1[l], (int)b2[l], (int)b3[l]) - zb;                       \
      column += y;                                                                                      \
      HGR_MI_TAIL(0, ta, zc) HGR_MI_TAIL(1, ta, zc) HGR_MI_TAIL(2, ta, zc) HGR_MI_TAIL(3, ta, zc)       \
    }                                                                                                   \
    HGR_MI_SCALE_##out                                                                                  \
    HGR_MI_STORE(0, out, mode) HGR_MI_STORE(1, out, mode)                                               \
    HGR_MI_STORE(2, out, mode) HGR_MI_STORE(3, out, mode)                                               \
  })

HGR_MATMUL_INTEGER(int, u8, uchar, i8, char, f32, float)
HGR_MATMUL_INTEGER(int, u8, uchar, u8, uchar, f32, float)
HGR_MATMUL_INTEGER(int, i8, char, i8, char, f32, float)
HGR_MATMUL_INTEGER(int, i8, char, u8, uchar, f32, float)
HGR_MATMUL_INTEGER(int, u8, uchar, i8, char, i32, int)
HGR_MATMUL_INTEGER(int, u8, uchar, u8, uchar, i32, int)
HGR_MATMUL_INTEGER(int, i8, char, i8, char, i32, int)
HGR_MATMUL_INTEGER(int, i8, char, u8, uchar, i32, int)
HGR_MATMUL_INTEGER(flt, u8, uchar, i8, char, f32, float)
HGR_MATMUL_INTEGER(flt, u8, uchar, u8, uchar, f32, float)
HGR_MATMUL_INTEGER(flt, i8, char, i8, char, f32, float)
HGR_MATMUL_INTEGER(flt, i8, char, u8, uchar, f32, float)
HGR_MATMUL_INTEGER(flt, u8, uchar, i8, char, i32, int)
HGR_MATMUL_INTEGER(flt, u8, uchar, u8, uchar, i32, int)
HGR_MATMUL_INTEGER(flt, i8, char, i8, char, i32, int)
HGR_MATMUL_INTEGER(flt, i8, char, u8, uchar, i32, int)

/* dequantize_matmul: float32 a [m, k] (contiguous rows) times 8-bit weights b in
 * panels of 32 columns, [ceil(n / 32), k, 32] (the last one padded), dequantized in
 * the loads,
 *   c[i, j] = (sum_l a[i, l] * (b[l, j] - b_zero[j * zb_step])) * scale[j * scale_step]
 *             (+ bias[j] when biased)
 * with b[l, j] at b[(j / 32) * k * 32 + l * 32 + j % 32]; the sum in float32
 * (b - b_zero exact), the scale applied once per output.
 *
 *   hgr_dequantize_matmul_<tb>_<RM>x<RN>(__global const float* a, __global const TB* b,
 *       __global const TB* b_zero, __global const float* scale,
 *       __global const float* bias, __global float* c, int m, int n, int k,
 *       int zb_step, int scale_step, int biased)
 * tb: u8 or i8; RM x RN: 6 x 16 or 8 x 32. NDRange (ceil(n / RN), ceil(m / RM)),
 * any local size: each work-item computes RM rows x RN columns, RN / 16 float16
 * accumulators per row, one RN-byte load of b per step of k (a panel's rows are 32
 * bytes apart: the strip streams), converted: the float GEMM's direct blocks of
 * kernels/linalg.cl (6 x 16 for 16 registers of 8 floats, 8 x 32 for 32 of 16),
 * reading a quarter of its bytes of b. The last strip reads the padding and stores
 * only columns below n. Rows past m read the last one and are not stored. One path
 * through the loop: with a second one (rows of b [k, n], gathered columns) LLVM
 * merged their multiply-adds into one block and spilled half the accumulators. */

/* 16 values of p from column j on, p[j * step] (columns past n: the last one) */
#define HGR_DQ_COLUMNS(T)                                                                       \
  static inline float16 hgr_dq_columns_##T(__global const T* p, int step, int j, int n) {       \
    if (step == 0) return (float16)((float)p[0]);                                               \
    if (j + 16 <= n) return convert_float16(vload16(0, p + j));                                 \
    float part[16];                                                                             \
    for (int e = 0; e < 16; ++e) part[e] = (float)p[min(j + e, n - 1)];                         \
    return vload16(0, part);                                                                    \
  }
HGR_DQ_COLUMNS(float)
HGR_DQ_COLUMNS(char)
HGR_DQ_COLUMNS(uchar)

#define HGR_DQ_ROWS6(X, h) X(0, h) X(1, h) X(2, h) X(3, h) X(4, h) X(5, h)
#define HGR_DQ_ROWS8(X, h) HGR_DQ_ROWS6(X, h) X(6, h) X(7, h)
#define HGR_DQ_HALVES16(X, r) X(r, 0)
#define HGR_DQ_HALVES32(X, r) X(r, 0) X(r, 1)
#define HGR_DQ_AROW(r, h) __global const float* a##r = a + min(row0 + r, m - 1) * k;
#define HGR_DQ_ZERO(r, h) float16 acc##r##_##h = 0.0f;
#define HGR_DQ_MAD(r, h) acc##r##_##h = a_##r * bv##h + acc##r##_##h;
#define HGR_DQ_BROADCAST(r, RN) { const float16 a_##r = (float16)(a##r[l]); HGR_DQ_HALVES##RN(HGR_DQ_MAD, r) }
#define HGR_DQ_COLUMN_PARAMS(h, u)                                                              \
  const float16 zb##h = hgr_dq_columns_##u(b_zero, zb_step, j0 + 16 * h, n);                    \
  const float16 s##h = hgr_dq_columns_float(scale, scale_step, j0 + 16 * h, n);                 \
  const float16 bias##h = biased ? hgr_dq_columns_float(bias, 1, j0 + 16 * h, n) : (float16)(0.0f);
#define HGR_DQ_LOAD(h, u) const float16 bv##h = convert_float16(vload16(h, b_row + l * 32)) - zb##h;
#define HGR_DQ_STORE(r, h)                                                                      \
  if (row0 + r < m) {                                                                           \
    const float16 out = acc##r##_##h * s##h + bias##h;                                          \
    __global float* to = c + (row0 + r) * n + j0 + 16 * h;                                      \
    if (j0 + 16 * h + 16 <= n) {                                                                \
      vstore16(out, 0, to);                                                                     \
    } else {                                                                                    \
      float part[16];                                                                           \
      vstore16(out, 0, part);                                                                   \
      for (int j = 0; j < n - (j0 + 16 * h); ++j) to[j] = part[j];                              \
    }                                                                                           \
  }

#define HGR_DEQUANTIZE_MATMUL(tb, TB, RM, RN)                                                     \
  HGR_KERNEL_IF(hgr_dequantize_matmul_##tb##_##RM##x##RN,                                       \
  __kernel void hgr_dequantize_matmul_##tb##_##RM##x##RN(                                       \
      __global const float* restrict a, __global const TB* restrict b,                          \
      __global const TB* restrict b_zero, __global const float* restrict scale,                 \
      __global const float* restrict bias, __global float* restrict c, int m, int n, int k,     \
      int zb_step, int scale_step, int biased) {                                                \
    const int j0 = (int)get_global_id(0) * RN, row0 = (int)get_global_id(1) * RM;              \
    if (j0 >= n || row0 >= m) return;                                                           \
    HGR_DQ_ROWS##RM(HGR_DQ_AROW, _)                                                             \
    HGR_DQ_ROWS##RM(HGR_DQ_PER_HALF_ZERO, RN)                                                   \
    HGR_DQ_HALVES##RN(HGR_DQ_COLUMN_PARAMS_##TB, _)                                             \
    /* panel j0 / 32's rows from column j0 % 32 (no %: DivRemPairs' freeze) */                 \
    __global const TB* b_row = b + j0 / 32 * (k * 32 - 32) + j0;                                \
    for (int l = 0; l < k; ++l) {                                                               \
      HGR_DQ_HALVES##RN(HGR_DQ_LOAD_##TB, _)                                                    \
      HGR_DQ_ROWS##RM(HGR_DQ_BROADCAST, RN)                                                     \
    }                                                                                           \
    HGR_DQ_ROWS##RM(HGR_DQ_PER_HALF_STORE, RN)                                                  \
  })
/* per row, every half: zero the accumulators, store them */
#define HGR_DQ_PER_HALF_ZERO(r, RN) HGR_DQ_HALVES##RN(HGR_DQ_ZERO, r)
#define HGR_DQ_PER_HALF_STORE(r, RN) HGR_DQ_HALVES##RN(HGR_DQ_STORE, r)
/* the halves' macros take (r or nothing, h); the column ones want the type's name */
#define HGR_DQ_COLUMN_PARAMS_char(u, h) HGR_DQ_COLUMN_PARAMS(h, char)
#define HGR_DQ_COLUMN_PARAMS_uchar(u, h) HGR_DQ_COLUMN_PARAMS(h, uchar)
#define HGR_DQ_LOAD_char(u, h) HGR_DQ_LOAD(h, char)
#define HGR_DQ_LOAD_uchar(u, h) HGR_DQ_LOAD(h, uchar)

HGR_DEQUANTIZE_MATMUL(i8, char, 6, 16)
HGR_DEQUANTIZE_MATMUL(u8, uchar, 6, 16)
HGR_DEQUANTIZE_MATMUL(i8, char, 8, 32)
HGR_DEQUANTIZE_MATMUL(u8, uchar, 8, 32)
