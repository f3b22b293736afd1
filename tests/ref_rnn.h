/* Plain-C references of ONNX's LSTM, GRU and RNN (runtime/ops/ops_rnn.c and the
 * ONNX importer's projection before it), computed in double from X, W, R and the
 * optional inputs, rounded once to float32.
 *
 * T steps, B batch rows, I inputs, H hidden units, D directions, G gates (LSTM 4 in
 * the order i, o, f, c; GRU 3: z, r, h; RNN 1). Tensors are row-major:
 *   x [T, B, I] (batch_first: [B, T, I]), w [D, G H, I], r [D, G H, H],
 *   b [D, 2 G H] (Wb then Rb), lens [B], initial_h / initial_c [D, B, H]
 *   (batch_first: [B, D, H]), p [D, 3 H] (i, o, f);
 *   y [T, D, B, H] (batch_first: [B, T, D, H]), y_h / y_c as initial_h.
 * A sequence of length len (clamped to [0, T]) runs times 0 .. len - 1, forward, or
 * len - 1 .. 0 in reverse; Y is zero at later times; Y_h and Y_c hold the state
 * after its last step, zeros for a length of 0 (ONNX Runtime's). */
#ifndef HGR_TEST_REF_RNN_H_
#define HGR_TEST_REF_RNN_H_

#include <stdbool.h>
#include <stdint.h>

typedef enum hgr_ref_cell_t { HGR_REF_LSTM, HGR_REF_GRU, HGR_REF_RNN } hgr_ref_cell_t;

/* ONNX's activations, in this order. */
typedef enum hgr_ref_activation_t {
  HGR_REF_RELU,
  HGR_REF_TANH,
  HGR_REF_SIGMOID,
  HGR_REF_AFFINE,
  HGR_REF_LEAKY_RELU,
  HGR_REF_THRESHOLDED_RELU,
  HGR_REF_SCALED_TANH,
  HGR_REF_HARD_SIGMOID,
  HGR_REF_ELU,
  HGR_REF_SOFTSIGN,
  HGR_REF_SOFTPLUS,
  HGR_REF_ACTIVATION_COUNT
} hgr_ref_activation_t;

/* ONNX's name of an activation ("LeakyRelu"). */
const char* hgr_ref_activation_name(hgr_ref_activation_t activation);

/* Gates per cell (4, 3, 1) and activations per direction (3, 2, 1). */
int hgr_ref_cell_gates(hgr_ref_cell_t cell);
int hgr_ref_cell_activations(hgr_ref_cell_t cell);

typedef struct hgr_ref_rnn_t {
  hgr_ref_cell_t cell;
  int64_t steps, batch, input_size, hidden;
  int directions;    /* 1 or 2 */
  bool reverse;      /* with one direction: it runs backwards */
  bool batch_first;  /* ONNX's layout 1 */
  const float* x;
  const float* w;
  const float* r;
  const float* b;         /* NULL: zeros */
  const int32_t* lens;    /* NULL: every row T long */
  const float* initial_h; /* NULL: zeros */
  const float* initial_c; /* LSTM; NULL: zeros */
  const float* p;         /* LSTM; NULL: no peepholes */
  /* Per direction d and activation a, at d * activations + a: the activation and
   * its alpha and beta (already resolved: hgr_ref_rnn_activations). */
  hgr_ref_activation_t activation[6];
  double alpha[6], beta[6];
  bool clip_on;
  double clip;
  bool input_forget;        /* LSTM: f = 1 - i */
  bool linear_before_reset; /* GRU */
} hgr_ref_rnn_t;

/* Fills c->activation, alpha and beta from ONNX's attrs: names (count 0: the cell's
 * defaults; else one per activation and direction, forward first), and the alphas
 * and betas consumed in order by the activations that take them (Affine,
 * LeakyRelu, ThresholdedRelu, ScaledTanh, HardSigmoid, Elu); an activation left
 * without a value takes its ONNX op's default. */
void hgr_ref_rnn_activations(hgr_ref_rnn_t* c, const hgr_ref_activation_t* names, int count, const double* alphas,
                             int alpha_count, const double* betas, int beta_count);

/* The input projection the importer computes before the recurrence: x W^T + Wb
 * for every step and direction, [T, B, D G H] (batch_first: [B, T, D G H]). */
void hgr_ref_rnn_gates_x(const hgr_ref_rnn_t* c, float* gates_x);

/* The outputs: y, y_h and (LSTM) y_c; any may be NULL. */
void hgr_ref_rnn(const hgr_ref_rnn_t* c, float* y, float* y_h, float* y_c);

#endif /* HGR_TEST_REF_RNN_H_ */
