/* Recurrences of LSTM, GRU and RNN over whole sequences (runtime/ops/ops_rnn.c).
 *
 * The input projection X W^T + Wb is computed beforehand for every step and
 * direction at once (one GEMM); these kernels run the part that cannot be batched
 * over time: H_{t-1} R^T and the cell, step after step.
 *
 * Shapes (T steps, B batch rows, D directions, H hidden units, G gates: LSTM 4
 * (i, o, f, c), GRU 3 (z, r, h), RNN 1; GH = G * H):
 *   gates_x    layout 0: [T, B, D, GH]; layout 1: [B, T, D, GH]
 *   r          [D, GH, H]  ONNX's R; or, with RNN_R_COLUMNS and not RNN_R_COPIED, R^T
 *              [D, H, r_stride] (r_stride >= GH; a row's floats past GH unused), as the
 *              ONNX importer passes a constant R (runtime/onnx/onnx_import_rnn.c)
 *   bias       [D, GH]      the recurrent bias Rb            (flag RNN_BIAS)
 *   lens       [B] int      sequence_lens                     (flag RNN_LENS)
 *   initial_h  layout 0: [D, B, H]; layout 1: [B, D, H]        (flag RNN_INITIAL_H)
 *   initial_c  as initial_h (LSTM)                            (flag RNN_INITIAL_C)
 *   peepholes  [D, 3H] (LSTM: i, o, f)                        (flag RNN_PEEPHOLES)
 *   y          layout 0: [T, D, B, H]; layout 1: [B, T, D, H]
 *   y_h, y_c   as initial_h
 *   gates      the node's scratch: with RNN_R_COPIED first the R the kernel reads (a
 *              first launch wrote it from r: R, R^T [D, H, r_stride] with
 *              RNN_R_COLUMNS, R_P with RNN_R_PACKED); then [D * B, GH] floats (each
 *              step's gate rows); then [D * B, H] (LSTM: [D * B, 2H]), the state
 *              between launches
 *   meta       per direction and activation (LSTM f, g, h; GRU f, g; RNN f), 3 ints:
 *              the activation's code (RNN_ACT_*), alpha's and beta's float bits
 * An absent input's buffer is another input's (never read: its flag is clear).
 *
 * One work-group per (direction d, batch row b): group d * B + b. NDRange 1-D,
 * global = D * B * L (L if D * B is 0), any local size L (the plan takes a power of
 * two). The group runs steps [first_step, first_step + step_count) of its
 * sequence: each step, its work-items take the GH gate rows in turn (row lid,
 * lid + L, ...: gates_x + Rb + R[row] . H_{t-1}, into `gates`), then, after a
 * barrier, the H units in turn (the cell's update), and a barrier closes the step.
 * The state lives in local memory: `h` holds H floats, then LSTM's C (which only
 * unit j's work-item reads and writes) or GRU's r (.) H_{t-1}. A launch starts from
 * initial_h / initial_c (zeros when absent) when first_step is 0, else from the
 * state the previous launch left in the scratch; it ends writing Y_h and Y_c and
 * that state: one launch for the whole sequence, or one per block of steps.
 * No work-item returns early and every barrier is reached by the whole group
 * (PoCL 3.1 miscompiles a return before barriers: a group wrote another's Y_h).
 *   hgr_lstm_sequence(gates_x, r, bias, lens, initial_h, initial_c, peepholes, y, y_h, y_c,
 *                     gates, meta, __local float* h, uint steps, uint batch, uint directions,
 *                     uint hidden, uint flags, float clip, uint first_step, uint step_count,
 *                     uint r_stride)
 *   hgr_gru_sequence(gates_x, r, bias, lens, initial_h, y, y_h, gates, meta,
 *                    __local float* h, uint steps, ... (as LSTM's))
 *   hgr_rnn_sequence(gates_x, r, bias, lens, initial_h, y, y_h, gates, meta,
 *                    __local float* h, uint steps, ... (as LSTM's))
 *
 * sequence_lens: a row of length len (clamped to [0, T]) runs steps 0 .. len - 1 at
 * times 0 .. len - 1 (forward) or len - 1 .. 0 (reverse: it starts at its own last
 * valid step); step s >= len zeroes Y at time s; Y_h and Y_c hold the state after
 * the last valid step, zeros for a length of 0 (as ONNX Runtime).
 *
 * R's layout is a tile choice of the plan (rows / columns, runtime/ops/ops_rnn.c);
 * where r comes in another form than the kernel reads, a first launch writes that
 * form at the scratch's start (RNN_R_COPIED):
 *   hgr_rnn_transpose_r(__global const float* r, __global float* scratch, uint count,
 *                       uint rows, uint cols, uint r_stride, uint scratch_stride)
 *       r [D, rows, r_stride] (count = D rows cols elements, the first cols of each
 *       row) to [D, cols, scratch_stride] at the scratch's start: R to R^T (rows GH,
 *       cols H) or R^T to R (rows H, cols GH); one work-item per row of the copy
 *       (PoCL: 5 us for an LSTM of 64, against 35 us with one per element); NDRange
 *       1-D, global >= D cols.
 *
 * The units4 kernels (H % 4 == 0; tile choices rows4 and packed): as the gate-row
 * kernels, the same arguments, flags, scratch's state and NDRange (any local size
 * L; the plan takes a power of two >= H / 4 where it can), but a work-item per 4
 * units: tile q (q = lid, lid + L, ... < H / 4) is units 4q .. 4q + 3, whose G gates
 * it computes as float4s (gates_x + Rb + 4 rows of R times H_{t-1}) and whose cell
 * it updates in float4 itself. The state lives in local memory: `h` holds H_{t-1}
 * and H_t (2H floats, swapped each active step), then LSTM's C (H, tile q's alone),
 * or GRU's r (.) H_{t-1} and z (2H). A step has one barrier; GRU without
 * linear_before_reset two (R_h needs every unit's r (.) H_{t-1}). No gates in the
 * scratch: it holds what RNN_R_COPIED put there (R_P with RNN_R_PACKED), then the
 * state between launches.
 *   hgr_lstm_units4(as hgr_lstm_sequence's), hgr_gru_units4(as hgr_gru_sequence's),
 *   hgr_rnn_units4(as hgr_rnn_sequence's)
 *   hgr_rnn_pack_r(__global const float* r, __global float* scratch, uint count, uint gh,
 *                  uint hidden, uint r_stride)
 *       R [D, GH, H] (r_stride 0) or R^T [D, H, r_stride] to R_P [D, H / 4, H, G, 4]
 *       at the scratch's start (tile q's rows of gate g at k: R_P[d][q][k][g][0..3] =
 *       R[d][g H + 4q + 0..3][k]), one work-item per element of R (count); NDRange
 *       1-D, global >= count.
 *
 * The units16 kernels (H % 16 == 0; tile choice columns16): as the units4 kernels
 * (arguments, flags, state, barriers), but reading R^T (RNN_R_COLUMNS: rows of
 * r_stride floats) and a work-item per 16 units: tile q (q = lid, lid + L, ...
 * < H / 16) adds, for k = 0 .. H - 1, the float16 R^T[k][g H + 16q ..] times
 * H_{t-1}[k] to gate g's 16 sums (all the cell's gates in one pass over k, two
 * partial sums each), then updates its cell in float16: no sum runs across vector
 * lanes, and on a CPU the cell of one tile runs while the loads of the next one are
 * in flight. The plan takes a power of two >= H / 16 work-items where it can (on
 * PoCL one work-item per group, looping over the tiles, ran as fast).
 *   hgr_lstm_units16(as hgr_lstm_sequence's), hgr_gru_units16(as hgr_gru_sequence's),
 *   hgr_rnn_units16(as hgr_rnn_sequence's)
 *
 * Equations (ONNX's; clip(x) = min(max(x, -clip), clip) where RNN_CLIP, applied to
 * every activation's input but h's cell input):
 *   LSTM  i = f(clip(xi + Rb_i + R_i H + P_i (.) C)), f = f(... P_f ...) or 1 - i with
 *         RNN_INPUT_FORGET, c~ = g(clip(xc + Rb_c + R_c H)), C' = f C + i c~,
 *         o = f(clip(xo + Rb_o + R_o H + P_o (.) C')), H' = o h(C')
 *   GRU   z = f(clip(xz + Rb_z + R_z H)), r = f(clip(xr + Rb_r + R_r H)),
 *         h~ = g(clip(xh + R_h (r (.) H) + Rb_h)), or with RNN_LINEAR_BEFORE_RESET
 *         h~ = g(clip(xh + r (.) (R_h H + Rb_h))); H' = (1 - z) h~ + z H
 *   RNN   H' = f(clip(xi + Rb_i + R_i H))
 * Indices are uint (the plan checks every count against INT32_MAX). */

#include "select.h"

#define RNN_REVERSE 1u   /* D == 1: the direction is reverse */
#define RNN_LAYOUT_BATCH 2u /* layout 1: batch first */
#define RNN_BIAS 4u
#define RNN_LENS 8u
#define RNN_INITIAL_H 16u
#define RNN_INITIAL_C 32u
#define RNN_PEEPHOLES 64u
#define RNN_CLIP 128u
#define RNN_INPUT_FORGET 256u
#define RNN_LINEAR_BEFORE_RESET 512u
#define RNN_R_COLUMNS 1024u /* the kernel reads R^T, rows of r_stride floats */
#define RNN_R_PACKED 2048u  /* units4: the kernel reads R_P (hgr_rnn_pack_r) */
#define RNN_R_COPIED 4096u  /* what the kernel reads is at the scratch's start */

/* Activation codes (ops_rnn.c's activation table, in this order). */
#define RNN_ACT_RELU 0
#define RNN_ACT_TANH 1
#define RNN_ACT_SIGMOID 2
#define RNN_ACT_AFFINE 3
#define RNN_ACT_LEAKY_RELU 4
#define RNN_ACT_THRESHOLDED_RELU 5
#define RNN_ACT_SCALED_TANH 6
#define RNN_ACT_HARD_SIGMOID 7
#define RNN_ACT_ELU 8
#define RNN_ACT_SOFTSIGN 9
#define RNN_ACT_SOFTPLUS 10

/* Activation a of a direction's meta (3 ints each) applied to x. */
float hgr_rnn_activate(__global const int* act, uint a, float x) {
  int code = act[3 * a];
  float alpha = as_float(act[3 * a + 1]), beta = as_float(act[3 * a + 2]);
  switch (code) {
    case RNN_ACT_RELU: return x < 0.0f ? 0.0f : x;
    case RNN_ACT_TANH: return tanh(x);
    case RNN_ACT_SIGMOID: return 1.0f / (1.0f + exp(-x));
    case RNN_ACT_AFFINE: return alpha * x + beta;
    case RNN_ACT_LEAKY_RELU: return x < 0.0f ? alpha * x : x;
    case RNN_ACT_THRESHOLDED_RELU: return x >= alpha ? x : 0.0f;
    case RNN_ACT_SCALED_TANH: return alpha * tanh(beta * x);
    case RNN_ACT_HARD_SIGMOID: return fmin(fmax(alpha * x + beta, 0.0f), 1.0f);
    case RNN_ACT_ELU: return x < 0.0f ? alpha * (exp(x) - 1.0f) : x;
    case RNN_ACT_SOFTSIGN: return x / (1.0f + fabs(x));
    default: return fmax(x, 0.0f) + log1p(exp(-fabs(x))); /* RNN_ACT_SOFTPLUS */
  }
}

float hgr_rnn_clip(float x, uint flags, float clip) { return (flags & RNN_CLIP) ? clamp(x, -clip, clip) : x; }

/* A sequence's length: sequence_lens[b] clamped to [0, steps], or steps. */
uint hgr_rnn_length(__global const int* lens, uint b, uint steps, uint flags) {
  if (!(flags & RNN_LENS)) return steps;
  int len = lens[b];
  return len < 0 ? 0u : min((uint)len, steps);
}

/* Offsets of (d, b)'s state, and of gates_x's and y's rows of (d, b) at time t. */
uint hgr_rnn_state_offset(uint d, uint b, uint batch, uint directions, uint hidden, uint flags) {
  return ((flags & RNN_LAYOUT_BATCH) ? b * directions + d : d * batch + b) * hidden;
}

uint hgr_rnn_x_offset(uint d, uint b, uint t, uint steps, uint batch, uint directions, uint gh, uint flags) {
  uint outer = (flags & RNN_LAYOUT_BATCH) ? b * steps + t : t * batch + b;
  return (outer * directions + d) * gh;
}

uint hgr_rnn_y_offset(uint d, uint b, uint t, uint steps, uint batch, uint directions, uint hidden, uint flags) {
  uint outer = (flags & RNN_LAYOUT_BATCH) ? (b * steps + t) * directions + d : (t * directions + d) * batch + b;
  return outer * hidden;
}

/* gates[row] = gates_x[row] (with_x) + Rb[row] + R[row] . v for rows [first, last) in
 * turn over the group; R[row][k] is rd[row * rs + k * ks] (hgr_rnn_matrix). */
void hgr_rnn_rows(__global float* gates, __global const float* xt, __global const float* rd,
                  __global const float* bias, __local const float* v, uint first, uint last, uint hidden,
                  uint rs, uint ks, uint flags, int with_x) {
  for (uint row = first + get_local_id(0); row < last; row += get_local_size(0)) {
    float acc = with_x ? xt[row] : 0.0f;
    if (flags & RNN_BIAS) acc += bias[row];
    __global const float* rr = rd + row * rs;
    for (uint k = 0; k < hidden; ++k) acc += rr[k * ks] * v[k];
    gates[row] = acc;
  }
}

/* How many floats a direction's R takes as the kernel reads it: R^T's H rows of
 * r_stride floats with RNN_R_COLUMNS, else G H rows of H (R, R_P). */
uint hgr_rnn_r_floats(uint gh, uint hidden, uint flags, uint r_stride) {
  return hidden * ((flags & RNN_R_COLUMNS) ? r_stride : gh);
}

/* The scratch past what RNN_R_COPIED put at its start. */
__global float* hgr_rnn_work(__global float* scratch, uint directions, uint gh, uint hidden, uint flags,
                             uint r_stride) {
  return scratch + ((flags & RNN_R_COPIED) ? directions * hgr_rnn_r_floats(gh, hidden, flags, r_stride) : 0u);
}

/* Direction d's R as the kernel reads it (r, or the scratch's start with
 * RNN_R_COPIED). */
__global const float* hgr_rnn_direction_r(__global const float* r, __global float* scratch, uint d, uint gh,
                                          uint hidden, uint flags, uint r_stride) {
  return ((flags & RNN_R_COPIED) ? (__global const float*)scratch : r) +
         d * hgr_rnn_r_floats(gh, hidden, flags, r_stride);
}

/* Direction d's R and its strides (R[row][k] at rd[row * rs + k * ks]): R itself,
 * rows of H floats, which a work-item walks along (a CPU's cache lines); or, with
 * RNN_R_COLUMNS, R^T, where neighbouring work-items read neighbouring floats (a
 * GPU's coalesced loads). */
__global const float* hgr_rnn_matrix(__global const float* r, __global float* scratch, uint d, uint gh,
                                     uint hidden, uint flags, uint r_stride, uint* rs, uint* ks) {
  int columns = (flags & RNN_R_COLUMNS) != 0;
  *rs = columns ? 1u : hidden;
  *ks = columns ? r_stride : 1u;
  return hgr_rnn_direction_r(r, scratch, d, gh, hidden, flags, r_stride);
}

#if HGR_WANTED(hgr_rnn_transpose_r)
__kernel void hgr_rnn_transpose_r(__global const float* r, __global float* scratch, uint count, uint rows,
                                  uint cols, uint r_stride, uint scratch_stride) {
  uint i = get_global_id(0); /* i = d * cols + col: the scratch's row */
  if (i >= count / rows) return;
  uint d = i / cols, col = i - d * cols;
  __global const float* from = r + d * rows * r_stride + col;
  __global float* to = scratch + i * scratch_stride;
  for (uint row = 0; row < rows; ++row) to[row] = from[row * r_stride];
}
#endif

#if HGR_WANTED(hgr_lstm_sequence)
__kernel void hgr_lstm_sequence(__global const float* gates_x, __global const float* r,
                                __global const float* bias, __global const int* lens,
                                __global const float* initial_h, __global const float* initial_c,
                                __global const float* peepholes, __global float* y, __global float* y_h,
                                __global float* y_c, __global float* gates, __global const int* meta,
                                __local float* h, uint steps, uint batch, uint directions, uint hidden,
                                uint flags, float clip, uint first_step, uint step_count, uint r_stride) {
  uint group = get_group_id(0);
  /* No early return: PoCL 3.1 miscompiles a return before barriers. A group past
   * the rows (only when there are none: batch 0) has no units and no steps. */
  int valid = group < directions * batch;
  uint units = valid ? hidden : 0, last_step = valid ? min(first_step + step_count, steps) : first_step;
  uint d = valid ? group / batch : 0, b = valid ? group - d * batch : 0;
  uint len = valid ? hgr_rnn_length(lens, b, steps, flags) : 0;
  uint state = hgr_rnn_state_offset(d, b, batch, directions, hidden, flags);
  int reverse = directions == 2 ? d == 1 : (flags & RNN_REVERSE) != 0;
  uint gh = 4 * hidden;
  __global const int* act = meta + d * 9;
  uint rs, ks;
  __global const float* rd = hgr_rnn_matrix(r, gates, d, gh, hidden, flags, r_stride, &rs, &ks);
  __global float* work = hgr_rnn_work(gates, directions, gh, hidden, flags, r_stride);
  __global float* g = work + group * gh;
  __global float* saved = work + directions * batch * gh + group * 2 * hidden; /* H, C between launches */
  __global const float* p = peepholes + d * 3 * hidden;
  __local float* cell = h + hidden; /* C_{t-1}: unit j's work-item alone reads and writes cell[j] */
  for (uint j = get_local_id(0); j < units; j += get_local_size(0)) {
    h[j] = first_step ? saved[j] : (flags & RNN_INITIAL_H) ? initial_h[state + j] : 0.0f;
    cell[j] = first_step ? saved[hidden + j] : (flags & RNN_INITIAL_C) ? initial_c[state + j] : 0.0f;
  }
  barrier(CLK_LOCAL_MEM_FENCE);
  for (uint s = first_step; s < last_step; ++s) {
    int active = s < len; /* the whole group alike; every barrier is reached by all */
    uint t = active && reverse ? len - 1 - s : s;
    __global const float* xt = gates_x + hgr_rnn_x_offset(d, b, t, steps, batch, directions, gh, flags);
    if (active) hgr_rnn_rows(g, xt, rd, bias + d * gh, h, 0, gh, hidden, rs, ks, flags, 1);
    barrier(CLK_LOCAL_MEM_FENCE | CLK_GLOBAL_MEM_FENCE);
    __global float* yt = y + hgr_rnn_y_offset(d, b, t, steps, batch, directions, hidden, flags);
    for (uint j = get_local_id(0); j < hidden; j += get_local_size(0)) {
      if (!active) { /* Y is zero past the row's length */
        yt[j] = 0.0f;
        continue;
      }
      float c_prev = cell[j];
      float pi = g[j], po = g[hidden + j], pf = g[2 * hidden + j], pc = g[3 * hidden + j];
      if (flags & RNN_PEEPHOLES) {
        pi += p[j] * c_prev;
        pf += p[2 * hidden + j] * c_prev;
      }
      float i = hgr_rnn_activate(act, 0, hgr_rnn_clip(pi, flags, clip));
      float f = (flags & RNN_INPUT_FORGET) ? 1.0f - i : hgr_rnn_activate(act, 0, hgr_rnn_clip(pf, flags, clip));
      float c = f * c_prev + i * hgr_rnn_activate(act, 1, hgr_rnn_clip(pc, flags, clip));
      if (flags & RNN_PEEPHOLES) po += p[hidden + j] * c;
      float o = hgr_rnn_activate(act, 0, hgr_rnn_clip(po, flags, clip));
      float value = o * hgr_rnn_activate(act, 2, c);
      cell[j] = c;
      h[j] = value;
      yt[j] = value;
    }
    barrier(CLK_LOCAL_MEM_FENCE | CLK_GLOBAL_MEM_FENCE);
  }
  for (uint j = get_local_id(0); j < units; j += get_local_size(0)) {
    y_h[state + j] = len ? h[j] : 0.0f;
    y_c[state + j] = len ? cell[j] : 0.0f;
    saved[j] = h[j];
    saved[hidden + j] = cell[j];
  }
}
#endif

#if HGR_WANTED(hgr_gru_sequence)
__kernel void hgr_gru_sequence(__global const float* gates_x, __global const float* r,
                               __global const float* bias, __global const int* lens,
                               __global const float* initial_h, __global float* y, __global float* y_h,
                               __global float* gates, __global const int* meta, __local float* h, uint steps,
                               uint batch, uint directions, uint hidden, uint flags, float clip, uint first_step,
                               uint step_count, uint r_stride) {
  uint group = get_group_id(0);
  /* No early return: PoCL 3.1 miscompiles a return before barriers. A group past
   * the rows (only when there are none: batch 0) has no units and no steps. */
  int valid = group < directions * batch;
  uint units = valid ? hidden : 0, last_step = valid ? min(first_step + step_count, steps) : first_step;
  uint d = valid ? group / batch : 0, b = valid ? group - d * batch : 0;
  uint len = valid ? hgr_rnn_length(lens, b, steps, flags) : 0;
  uint state = hgr_rnn_state_offset(d, b, batch, directions, hidden, flags);
  int reverse = directions == 2 ? d == 1 : (flags & RNN_REVERSE) != 0;
  uint gh = 3 * hidden;
  __global const int* act = meta + d * 6;
  uint rs, ks;
  __global const float* rd = hgr_rnn_matrix(r, gates, d, gh, hidden, flags, r_stride, &rs, &ks);
  __global float* work = hgr_rnn_work(gates, directions, gh, hidden, flags, r_stride);
  __global float* g = work + group * gh;
  __global float* saved = work + directions * batch * gh + group * hidden; /* H between launches */
  __global const float* bd = bias + d * gh;
  __local float* reset_h = h + hidden; /* r (.) H_{t-1} */
  int linear = (flags & RNN_LINEAR_BEFORE_RESET) != 0;
  for (uint j = get_local_id(0); j < units; j += get_local_size(0))
    h[j] = first_step ? saved[j] : (flags & RNN_INITIAL_H) ? initial_h[state + j] : 0.0f;
  barrier(CLK_LOCAL_MEM_FENCE);
  for (uint s = first_step; s < last_step; ++s) {
    int active = s < len; /* the whole group alike; every barrier is reached by all */
    uint t = active && reverse ? len - 1 - s : s;
    __global const float* xt = gates_x + hgr_rnn_x_offset(d, b, t, steps, batch, directions, gh, flags);
    __global float* yt = y + hgr_rnn_y_offset(d, b, t, steps, batch, directions, hidden, flags);
    /* z and r (and with linear_before_reset R_h H + Rb_h, without x) */
    if (active) hgr_rnn_rows(g, xt, rd, bd, h, 0, 2 * hidden, hidden, rs, ks, flags, 1);
    if (active && linear) hgr_rnn_rows(g, xt, rd, bd, h, 2 * hidden, gh, hidden, rs, ks, flags, 0);
    barrier(CLK_LOCAL_MEM_FENCE | CLK_GLOBAL_MEM_FENCE);
    if (active && !linear)
      for (uint j = get_local_id(0); j < hidden; j += get_local_size(0))
        reset_h[j] = hgr_rnn_activate(act, 0, hgr_rnn_clip(g[hidden + j], flags, clip)) * h[j];
    barrier(CLK_LOCAL_MEM_FENCE);
    for (uint j = get_local_id(0); j < hidden; j += get_local_size(0)) {
      if (!active) { /* Y is zero past the row's length */
        yt[j] = 0.0f;
        continue;
      }
      float z = hgr_rnn_activate(act, 0, hgr_rnn_clip(g[j], flags, clip));
      float pre;
      if (linear) {
        float reset = hgr_rnn_activate(act, 0, hgr_rnn_clip(g[hidden + j], flags, clip));
        pre = xt[2 * hidden + j] + reset * g[2 * hidden + j];
      } else { /* unit j's row of R_h against r (.) H: only reset_h is shared now */
        pre = xt[2 * hidden + j] + ((flags & RNN_BIAS) ? bd[2 * hidden + j] : 0.0f);
        __global const float* rr = rd + (2 * hidden + j) * rs;
        for (uint k = 0; k < hidden; ++k) pre += rr[k * ks] * reset_h[k];
      }
      float value = (1.0f - z) * hgr_rnn_activate(act, 1, hgr_rnn_clip(pre, flags, clip)) + z * h[j];
      h[j] = value;
      yt[j] = value;
    }
    barrier(CLK_LOCAL_MEM_FENCE | CLK_GLOBAL_MEM_FENCE);
  }
  for (uint j = get_local_id(0); j < units; j += get_local_size(0)) {
    y_h[state + j] = len ? h[j] : 0.0f;
    saved[j] = h[j];
  }
}
#endif

#if HGR_WANTED(hgr_rnn_sequence)
__kernel void hgr_rnn_sequence(__global const float* gates_x, __global const float* r,
                               __global const float* bias, __global const int* lens,
                               __global const float* initial_h, __global float* y, __global float* y_h,
                               __global float* gates, __global const int* meta, __local float* h, uint steps,
                               uint batch, uint directions, uint hidden, uint flags, float clip, uint first_step,
                               uint step_count, uint r_stride) {
  uint group = get_group_id(0);
  /* No early return: PoCL 3.1 miscompiles a return before barriers. A group past
   * the rows (only when there are none: batch 0) has no units and no steps. */
  int valid = group < directions * batch;
  uint units = valid ? hidden : 0, last_step = valid ? min(first_step + step_count, steps) : first_step;
  uint d = valid ? group / batch : 0, b = valid ? group - d * batch : 0;
  uint len = valid ? hgr_rnn_length(lens, b, steps, flags) : 0;
  uint state = hgr_rnn_state_offset(d, b, batch, directions, hidden, flags);
  int reverse = directions == 2 ? d == 1 : (flags & RNN_REVERSE) != 0;
  __global const int* act = meta + d * 3;
  uint rs, ks;
  __global const float* rd = hgr_rnn_matrix(r, gates, d, hidden, hidden, flags, r_stride, &rs, &ks);
  __global float* work = hgr_rnn_work(gates, directions, hidden, hidden, flags, r_stride);
  __global float* g = work + group * hidden;
  __global float* saved = work + directions * batch * hidden + group * hidden; /* H between launches */
  for (uint j = get_local_id(0); j < units; j += get_local_size(0))
    h[j] = first_step ? saved[j] : (flags & RNN_INITIAL_H) ? initial_h[state + j] : 0.0f;
  barrier(CLK_LOCAL_MEM_FENCE);
  for (uint s = first_step; s < last_step; ++s) {
    int active = s < len; /* the whole group alike; every barrier is reached by all */
    uint t = active && reverse ? len - 1 - s : s;
    __global const float* xt = gates_x + hgr_rnn_x_offset(d, b, t, steps, batch, directions, hidden, flags);
    if (active)
      hgr_rnn_rows(g, xt, rd, bias + d * hidden, h, 0, hidden, hidden, rs, ks, flags, 1);
    barrier(CLK_LOCAL_MEM_FENCE | CLK_GLOBAL_MEM_FENCE);
    __global float* yt = y + hgr_rnn_y_offset(d, b, t, steps, batch, directions, hidden, flags);
    for (uint j = get_local_id(0); j < hidden; j += get_local_size(0)) {
      float value = active ? hgr_rnn_activate(act, 0, hgr_rnn_clip(g[j], flags, clip)) : 0.0f;
      if (active) h[j] = value;
      yt[j] = value; /* zero past the row's length */
    }
    barrier(CLK_LOCAL_MEM_FENCE | CLK_GLOBAL_MEM_FENCE);
  }
  for (uint j = get_local_id(0); j < units; j += get_local_size(0)) {
    y_h[state + j] = len ? h[j] : 0.0f;
    saved[j] = h[j];
  }
}
#endif

/* ---- 4 units per work-item (H % 4 == 0): hgr_*_units4 ------------------------------- */

/* Activation a of a direction's meta applied to N values (float4: units4, float16:
 * units16): the code is the same for the N, so the branch is the work-item's alone
 * and the math is vector math (PoCL's vector exp and tanh). As hgr_rnn_activate,
 * lane by lane. */
#define RNN_VECTOR_ACTIVATIONS(N)                                                                         \
  float##N hgr_rnn_activate##N(__global const int* act, uint a, float##N x) {                            \
    int code = act[3 * a];                                                                                \
    float alpha = as_float(act[3 * a + 1]), beta = as_float(act[3 * a + 2]);                              \
    float##N zero = (float##N)(0.0f);                                                                     \
    switch (code) {                                                                                       \
      case RNN_ACT_RELU: return select(x, zero, x < zero);                                                \
      case RNN_ACT_TANH: return tanh(x);                                                                  \
      case RNN_ACT_SIGMOID: return 1.0f / (1.0f + exp(-x));                                               \
      case RNN_ACT_AFFINE: return alpha * x + beta;                                                       \
      case RNN_ACT_LEAKY_RELU: return select(x, alpha * x, x < zero);                                     \
      case RNN_ACT_THRESHOLDED_RELU: return select(zero, x, x >= (float##N)(alpha));                      \
      case RNN_ACT_SCALED_TANH: return alpha * tanh(beta * x);                                            \
      case RNN_ACT_HARD_SIGMOID: return fmin(fmax(alpha * x + beta, 0.0f), 1.0f);                         \
      case RNN_ACT_ELU: return select(x, alpha * (exp(x) - 1.0f), x < zero);                              \
      case RNN_ACT_SOFTSIGN: return x / (1.0f + fabs(x));                                                 \
      default: return fmax(x, 0.0f) + log1p(exp(-fabs(x))); /* RNN_ACT_SOFTPLUS */                       \
    }                                                                                                     \
  }                                                                                                       \
  float##N hgr_rnn_clip##N(float##N x, uint flags, float clip) {                                          \
    return (flags & RNN_CLIP) ? clamp(x, -clip, clip) : x;                                                \
  }
RNN_VECTOR_ACTIVATIONS(4)
RNN_VECTOR_ACTIVATIONS(16)

/* Rows g H + 4 q .. g H + 4 q + 3 of direction d's R times v (H floats): with
 * RNN_R_PACKED from R_P (hgr_rnn_pack_r), one float4 per k, two partial sums;
 * else from R itself, each row's dot product over k in float8s (H % 8 == 0: PoCL
 * ran the bench's bidirectional LSTM of 256 about 25% faster than in float4s) or
 * float4s, the four rows' sums added across at the end. */
float4 hgr_rnn_gate4(__global const float* rd, uint flags, uint q, uint g, uint gates, uint hidden,
                     __local const float* v) {
  if (flags & RNN_R_PACKED) {
    __global const float* rq = rd + q * 4 * gates * hidden + 4 * g;
    uint step = 4 * gates;
    float4 a0 = (float4)(0.0f), a1 = (float4)(0.0f);
    for (uint k = 0; k < hidden; k += 2, rq += 2 * step) {
      a0 += vload4(0, rq) * v[k];
      a1 += vload4(0, rq + step) * v[k + 1];
    }
    return a0 + a1;
  }
  __global const float* r0 = rd + (g * hidden + 4 * q) * hidden;
  __global const float* r1 = r0 + hidden;
  __global const float* r2 = r1 + hidden;
  __global const float* r3 = r2 + hidden;
  float4 s0 = (float4)(0.0f), s1 = (float4)(0.0f), s2 = (float4)(0.0f), s3 = (float4)(0.0f);
  uint k4 = 0;
  if (hidden % 8 == 0) {
    float8 e0 = (float8)(0.0f), e1 = (float8)(0.0f), e2 = (float8)(0.0f), e3 = (float8)(0.0f);
    for (uint k8 = 0; k8 < hidden / 8; ++k8) {
      float8 vk = vload8(k8, v);
      e0 += vload8(k8, r0) * vk;
      e1 += vload8(k8, r1) * vk;
      e2 += vload8(k8, r2) * vk;
      e3 += vload8(k8, r3) * vk;
    }
    s0 = e0.lo + e0.hi, s1 = e1.lo + e1.hi, s2 = e2.lo + e2.hi, s3 = e3.lo + e3.hi;
    k4 = hidden / 4;
  }
  for (; k4 < hidden / 4; ++k4) {
    float4 vk = vload4(k4, v);
    s0 += vload4(k4, r0) * vk;
    s1 += vload4(k4, r1) * vk;
    s2 += vload4(k4, r2) * vk;
    s3 += vload4(k4, r3) * vk;
  }
  float4 t0 = (float4)(s0.xz, s1.xz) + (float4)(s0.yw, s1.yw);
  float4 t1 = (float4)(s2.xz, s3.xz) + (float4)(s2.yw, s3.yw);
  return (float4)(t0.xz, t1.xz) + (float4)(t0.yw, t1.yw);
}

#if HGR_WANTED(hgr_rnn_pack_r)
__kernel void hgr_rnn_pack_r(__global const float* r, __global float* scratch, uint count, uint gh, uint hidden,
                             uint r_stride) {
  uint i = get_global_id(0);
  if (i >= count) return;
  uint q = i / hidden, k = i - q * hidden; /* i = (d * gh + row) * hidden + k */
  uint d = q / gh, row = q - d * gh;
  uint g = row / hidden, unit = row - g * hidden, gates = gh / hidden;
  float value = r_stride ? r[(d * hidden + k) * r_stride + row] : r[i];
  scratch[d * hidden * gh + ((unit >> 2) * hidden + k) * 4 * gates + g * 4 + (unit & 3)] = value;
}
#endif

/* The units kernels' common start: (d, b) of the group, its length, its state's
 * offset, its direction, its R as the kernel reads it, the state between launches
 * in the scratch; tiles of WIDTH units. */
#define RNN_UNITS_PROLOGUE(GATES, STATE_FLOATS, WIDTH)                                                        \
  uint group = get_group_id(0);                                                                               \
  int valid = group < directions * batch;                                                                     \
  uint tiles = valid ? hidden / (WIDTH) : 0;                                                                  \
  uint last_step = valid ? min(first_step + step_count, steps) : first_step;                                  \
  uint d = valid ? group / batch : 0, b = valid ? group - d * batch : 0;                                      \
  uint len = valid ? hgr_rnn_length(lens, b, steps, flags) : 0;                                               \
  uint state = hgr_rnn_state_offset(d, b, batch, directions, hidden, flags);                                  \
  int reverse = directions == 2 ? d == 1 : (flags & RNN_REVERSE) != 0;                                        \
  uint gh = (GATES) * hidden;                                                                                 \
  __global const float* rd = hgr_rnn_direction_r(r, scratch, d, gh, hidden, flags, r_stride);                 \
  __global float* saved = hgr_rnn_work(scratch, directions, gh, hidden, flags, r_stride) +                    \
                          group * (STATE_FLOATS) * hidden;                                                    \
  __global const float* bd = bias + d * gh;                                                                   \
  uint lid = get_local_id(0), lsize = get_local_size(0)




/* ---- 16 units per work-item from R^T (H % 16 == 0): hgr_*_units16 ------------------ */

/* Tile q's 16 rows of one gate (dot), two (pair) or four (quad) times v (H
 * floats), added to what *a.. hold, from col = R^T + g H + 16 q (gate g's columns
 * of the tile in row 0; R^T's rows stride floats apart): each k adds the float16
 * at row k times v[k]. The partial sums over even and odd k (dot: k mod 4) keep
 * several FMA chains in flight, and one pass takes all of a tile's gates: on PoCL
 * (an LSTM of 64, T 63, the kernel alone) one pass of four gates ran in 47 us, a
 * pass per gate in 62 us. */
void hgr_rnn_dot16(__global const float* col, uint stride, uint hidden, __local const float* v, float16* a) {
  float16 s1 = (float16)(0.0f), s2 = (float16)(0.0f), s3 = (float16)(0.0f);
  for (uint k = 0; k < hidden; k += 4, col += 4 * stride) {
    *a += vload16(0, col) * v[k];
    s1 += vload16(0, col + stride) * v[k + 1];
    s2 += vload16(0, col + 2 * stride) * v[k + 2];
    s3 += vload16(0, col + 3 * stride) * v[k + 3];
  }
  *a += (s1 + s2) + s3;
}

void hgr_rnn_pair16(__global const float* col, uint stride, uint hidden, __local const float* v, float16* a,
                    float16* b) {
  float16 a1 = (float16)(0.0f), b1 = (float16)(0.0f);
  for (uint k = 0; k < hidden; k += 2, col += 2 * stride) {
    float v0 = v[k], v1 = v[k + 1];
    *a += vload16(0, col) * v0;
    *b += vload16(0, col + hidden) * v0;
    a1 += vload16(0, col + stride) * v1;
    b1 += vload16(0, col + stride + hidden) * v1;
  }
  *a += a1;
  *b += b1;
}

void hgr_rnn_quad16(__global const float* col, uint stride, uint hidden, __local const float* v, float16* a,
                    float16* b, float16* c, float16* e) {
  float16 a1 = (float16)(0.0f), b1 = (float16)(0.0f), c1 = (float16)(0.0f), e1 = (float16)(0.0f);
  for (uint k = 0; k < hidden; k += 2, col += 2 * stride) {
    float v0 = v[k], v1 = v[k + 1];
    __global const float* next = col + stride;
    *a += vload16(0, col) * v0;
    *b += vload16(0, col + hidden) * v0;
    *c += vload16(0, col + 2 * hidden) * v0;
    *e += vload16(0, col + 3 * hidden) * v0;
    a1 += vload16(0, next) * v1;
    b1 += vload16(0, next + hidden) * v1;
    c1 += vload16(0, next + 2 * hidden) * v1;
    e1 += vload16(0, next + 3 * hidden) * v1;
  }
  *a += a1;
  *b += b1;
  *c += c1;
  *e += e1;
}

/* ---- the units kernels, of 4 units (rows4, packed) and 16 (columns16) ------------- */

/* gates_x + Rb of gate g of tile q at time t (xt), N units. */
#define RNN_VECTOR_INPUT(N)                                                                               \
  float##N hgr_rnn_input##N(__global const float* xt, __global const float* bd, uint q, uint g, uint hidden, \
                            uint flags) {                                                                 \
    float##N x = vload##N(q, xt + g * hidden);                                                            \
    return (flags & RNN_BIAS) ? x + vload##N(q, bd + g * hidden) : x;                                     \
  }
RNN_VECTOR_INPUT(4)
RNN_VECTOR_INPUT(16)

/* R (or R_P) times v added to tile q's gates (G of them): one gate g (RNN_R1), the
 * first two (RNN_R2) or all four (RNN_R4) at once; rows4 and packed through
 * hgr_rnn_gate4, columns16 through R^T (r_stride floats a row) in one pass. */
#define RNN_R1_4(a, g, G, v) a += hgr_rnn_gate4(rd, flags, q, g, G, hidden, v)
#define RNN_R2_4(a, b, G, v) \
  a += hgr_rnn_gate4(rd, flags, q, 0, G, hidden, v); \
  b += hgr_rnn_gate4(rd, flags, q, 1, G, hidden, v)
#define RNN_R4_4(a, b, c, e, v) \
  RNN_R2_4(a, b, 4, v);         \
  c += hgr_rnn_gate4(rd, flags, q, 2, 4, hidden, v); \
  e += hgr_rnn_gate4(rd, flags, q, 3, 4, hidden, v)
#define RNN_R1_16(a, g, G, v) hgr_rnn_dot16(rd + (g) * hidden + 16 * q, r_stride, hidden, v, &a)
#define RNN_R2_16(a, b, G, v) hgr_rnn_pair16(rd + 16 * q, r_stride, hidden, v, &a, &b)
#define RNN_R4_16(a, b, c, e, v) hgr_rnn_quad16(rd + 16 * q, r_stride, hidden, v, &a, &b, &c, &e)

/* The three cells' kernels for N units a work-item: a work-group per (direction,
 * batch row), a work-item per tile of N units at a time computing all its gates and
 * its cell, H_{t-1} and H_t double-buffered in local memory, so that a step has one
 * barrier (GRU without linear_before_reset two) and no gate goes through global
 * memory. Each kernel's first lines load the state (initial, or saved by the launch
 * before), its last ones write Y_h (and Y_c) and save the state. */
#define RNN_UNITS_START(N)                                                                                 \
  uint cur = 0; /* H_{t-1} at h + cur, H_t written to the other half */                                    \
  for (uint s = first_step; s < last_step; ++s) {                                                          \
    int active = s < len; /* the whole group alike; every barrier is reached by all */                     \
    uint t = active && reverse ? len - 1 - s : s;                                                          \
    __global const float* xt = gates_x + hgr_rnn_x_offset(d, b, t, steps, batch, directions, gh, flags);   \
    __global float* yt = y + hgr_rnn_y_offset(d, b, t, steps, batch, directions, hidden, flags);           \
    __local const float* hp = h + cur;                                                                     \
    __local float* hn = h + (hidden - cur);

#define RNN_UNITS_INITIAL_H(N)                                                                             \
  for (uint q = lid; q < tiles; q += lsize)                                                                \
    vstore##N(first_step ? vload##N(q, saved)                                                              \
                         : (flags & RNN_INITIAL_H) ? vload##N(q, initial_h + state) : (float##N)(0.0f),    \
              q, h);

#define RNN_UNITS_END(N)                                                                                   \
    if (active) cur = hidden - cur;                                                                        \
    barrier(CLK_LOCAL_MEM_FENCE | CLK_GLOBAL_MEM_FENCE);                                                   \
  }

#define RNN_LSTM_UNITS(NAME, N)                                                                            \
  HGR_KERNEL_IF(NAME,                                                                                      \
  __kernel void NAME(__global const float* gates_x, __global const float* r, __global const float* bias,  \
                     __global const int* lens, __global const float* initial_h,                            \
                     __global const float* initial_c, __global const float* peepholes, __global float* y, \
                     __global float* y_h, __global float* y_c, __global float* scratch,                    \
                     __global const int* meta, __local float* h, uint steps, uint batch, uint directions,  \
                     uint hidden, uint flags, float clip, uint first_step, uint step_count, uint r_stride) { \
    RNN_UNITS_PROLOGUE(4, 2, N);                                                                           \
    __global const int* act = meta + d * 9;                                                                \
    __global const float* p = peepholes + d * 3 * hidden;                                                  \
    __local float* cell = h + 2 * hidden; /* C: tile q's work-item alone reads and writes its N */        \
    RNN_UNITS_INITIAL_H(N)                                                                                 \
    for (uint q = lid; q < tiles; q += lsize)                                                              \
      vstore##N(first_step ? vload##N(q, saved + hidden)                                                   \
                           : (flags & RNN_INITIAL_C) ? vload##N(q, initial_c + state) : (float##N)(0.0f),  \
                q, cell);                                                                                  \
    barrier(CLK_LOCAL_MEM_FENCE);                                                                          \
    RNN_UNITS_START(N)                                                                                     \
      for (uint q = lid; q < tiles; q += lsize) {                                                          \
        if (!active) { /* Y is zero past the row's length */                                               \
          vstore##N((float##N)(0.0f), q, yt);                                                              \
          continue;                                                                                        \
        }                                                                                                  \
        float##N pi = hgr_rnn_input##N(xt, bd, q, 0, hidden, flags);                                       \
        float##N po = hgr_rnn_input##N(xt, bd, q, 1, hidden, flags);                                       \
        float##N pf = hgr_rnn_input##N(xt, bd, q, 2, hidden, flags);                                       \
        float##N pc = hgr_rnn_input##N(xt, bd, q, 3, hidden, flags);                                       \
        RNN_R4_##N(pi, po, pf, pc, hp);                                                                    \
        float##N c_prev = vload##N(q, cell);                                                               \
        if (flags & RNN_PEEPHOLES) {                                                                       \
          pi += vload##N(q, p) * c_prev;                                                                   \
          pf += vload##N(q, p + 2 * hidden) * c_prev;                                                      \
        }                                                                                                  \
        float##N i = hgr_rnn_activate##N(act, 0, hgr_rnn_clip##N(pi, flags, clip));                        \
        float##N f = (flags & RNN_INPUT_FORGET) ? 1.0f - i                                                 \
                                                : hgr_rnn_activate##N(act, 0, hgr_rnn_clip##N(pf, flags, clip)); \
        float##N c = f * c_prev + i * hgr_rnn_activate##N(act, 1, hgr_rnn_clip##N(pc, flags, clip));      \
        if (flags & RNN_PEEPHOLES) po += vload##N(q, p + hidden) * c;                                      \
        float##N o = hgr_rnn_activate##N(act, 0, hgr_rnn_clip##N(po, flags, clip));                        \
        float##N value = o * hgr_rnn_activate##N(act, 2, c);                                               \
        vstore##N(c, q, cell);                                                                             \
        vstore##N(value, q, hn);                                                                           \
        vstore##N(value, q, yt);                                                                           \
      }                                                                                                    \
    RNN_UNITS_END(N)                                                                                       \
    for (uint q = lid; q < tiles; q += lsize) {                                                            \
      float##N hv = vload##N(q, h + cur), cv = vload##N(q, cell);                                          \
      vstore##N(len ? hv : (float##N)(0.0f), q, y_h + state);                                              \
      vstore##N(len ? cv : (float##N)(0.0f), q, y_c + state);                                              \
      vstore##N(hv, q, saved);                                                                             \
      vstore##N(cv, q, saved + hidden);                                                                    \
    }                                                                                                      \
  })

#define RNN_GRU_UNITS(NAME, N)                                                                             \
  HGR_KERNEL_IF(NAME,                                                                                      \
  __kernel void NAME(__global const float* gates_x, __global const float* r, __global const float* bias,  \
                     __global const int* lens, __global const float* initial_h, __global float* y,         \
                     __global float* y_h, __global float* scratch, __global const int* meta,               \
                     __local float* h, uint steps, uint batch, uint directions, uint hidden, uint flags,   \
                     float clip, uint first_step, uint step_count, uint r_stride) {                        \
    RNN_UNITS_PROLOGUE(3, 1, N);                                                                           \
    __global const int* act = meta + d * 6;                                                                \
    __local float* reset_h = h + 2 * hidden; /* r (.) H_{t-1} */                                           \
    __local float* update = h + 3 * hidden;  /* z, from the step's first half to its second */            \
    int linear = (flags & RNN_LINEAR_BEFORE_RESET) != 0;                                                   \
    RNN_UNITS_INITIAL_H(N)                                                                                 \
    barrier(CLK_LOCAL_MEM_FENCE);                                                                          \
    RNN_UNITS_START(N)                                                                                     \
      /* z and r against H_{t-1}; with linear_before_reset also R_h H_{t-1} + Rb_h and \
       * the unit's update, without r (.) H_{t-1} for the second half */              \
      for (uint q = lid; q < tiles && active; q += lsize) {                                                \
        float##N pz = hgr_rnn_input##N(xt, bd, q, 0, hidden, flags);                                       \
        float##N pr = hgr_rnn_input##N(xt, bd, q, 1, hidden, flags);                                       \
        RNN_R2_##N(pz, pr, 3, hp);                                                                         \
        float##N z = hgr_rnn_activate##N(act, 0, hgr_rnn_clip##N(pz, flags, clip));                        \
        float##N reset = hgr_rnn_activate##N(act, 0, hgr_rnn_clip##N(pr, flags, clip));                   \
        float##N hv = vload##N(q, hp);                                                                     \
        if (linear) {                                                                                      \
          float##N ph = (flags & RNN_BIAS) ? vload##N(q, bd + 2 * hidden) : (float##N)(0.0f);              \
          RNN_R1_##N(ph, 2, 3, hp);                                                                        \
          float##N pre = vload##N(q, xt + 2 * hidden) + reset * ph;                                        \
          float##N value = (1.0f - z) * hgr_rnn_activate##N(act, 1, hgr_rnn_clip##N(pre, flags, clip)) + z * hv; \
          vstore##N(value, q, hn);                                                                         \
          vstore##N(value, q, yt);                                                                         \
        } else {                                                                                           \
          vstore##N(z, q, update);                                                                         \
          vstore##N(reset * hv, q, reset_h);                                                               \
        }                                                                                                  \
      }                                                                                                    \
      barrier(CLK_LOCAL_MEM_FENCE);                                                                        \
      for (uint q = lid; q < tiles; q += lsize) {                                                          \
        if (!active) { /* Y is zero past the row's length */                                               \
          vstore##N((float##N)(0.0f), q, yt);                                                              \
          continue;                                                                                        \
        }                                                                                                  \
        if (linear) continue;                                                                              \
        float##N pre = hgr_rnn_input##N(xt, bd, q, 2, hidden, flags);                                      \
        RNN_R1_##N(pre, 2, 3, reset_h);                                                                    \
        float##N z = vload##N(q, update);                                                                  \
        float##N value = (1.0f - z) * hgr_rnn_activate##N(act, 1, hgr_rnn_clip##N(pre, flags, clip)) +     \
                         z * vload##N(q, hp);                                                              \
        vstore##N(value, q, hn);                                                                           \
        vstore##N(value, q, yt);                                                                           \
      }                                                                                                    \
    RNN_UNITS_END(N)                                                                                       \
    for (uint q = lid; q < tiles; q += lsize) {                                                            \
      float##N hv = vload##N(q, h + cur);                                                                  \
      vstore##N(len ? hv : (float##N)(0.0f), q, y_h + state);                                              \
      vstore##N(hv, q, saved);                                                                             \
    }                                                                                                      \
  })

#define RNN_RNN_UNITS(NAME, N)                                                                             \
  HGR_KERNEL_IF(NAME,                                                                                      \
  __kernel void NAME(__global const float* gates_x, __global const float* r, __global const float* bias,  \
                     __global const int* lens, __global const float* initial_h, __global float* y,         \
                     __global float* y_h, __global float* scratch, __global const int* meta,               \
                     __local float* h, uint steps, uint batch, uint directions, uint hidden, uint flags,   \
                     float clip, uint first_step, uint step_count, uint r_stride) {                        \
    RNN_UNITS_PROLOGUE(1, 1, N);                                                                           \
    __global const int* act = meta + d * 3;                                                                \
    RNN_UNITS_INITIAL_H(N)                                                                                 \
    barrier(CLK_LOCAL_MEM_FENCE);                                                                          \
    RNN_UNITS_START(N)                                                                                     \
      for (uint q = lid; q < tiles; q += lsize) {                                                          \
        if (!active) { /* Y is zero past the row's length */                                               \
          vstore##N((float##N)(0.0f), q, yt);                                                              \
          continue;                                                                                        \
        }                                                                                                  \
        float##N pre = hgr_rnn_input##N(xt, bd, q, 0, hidden, flags);                                      \
        RNN_R1_##N(pre, 0, 1, hp);                                                                         \
        float##N value = hgr_rnn_activate##N(act, 0, hgr_rnn_clip##N(pre, flags, clip));                   \
        vstore##N(value, q, hn);                                                                           \
        vstore##N(value, q, yt);                                                                           \
      }                                                                                                    \
    RNN_UNITS_END(N)                                                                                       \
    for (uint q = lid; q < tiles; q += lsize) {                                                            \
      float##N hv = vload##N(q, h + cur);                                                                  \
      vstore##N(len ? hv : (float##N)(0.0f), q, y_h + state);                                              \
      vstore##N(hv, q, saved);                                                                             \
    }                                                                                                      \
  })

RNN_LSTM_UNITS(hgr_lstm_units4, 4)
RNN_GRU_UNITS(hgr_gru_units4, 4)
RNN_RNN_UNITS(hgr_rnn_units4, 4)
RNN_LSTM_UNITS(hgr_lstm_units16, 16)
RNN_GRU_UNITS(hgr_gru_units16, 16)
RNN_RNN_UNITS(hgr_rnn_units16, 16)



