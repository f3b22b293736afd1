#include "ref_rnn.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static const char* const names[HGR_REF_ACTIVATION_COUNT] = {
    "Relu", "Tanh", "Sigmoid", "Affine", "LeakyRelu", "ThresholdedRelu", "ScaledTanh", "HardSigmoid", "Elu",
    "Softsign", "Softplus"};

const char* hgr_ref_activation_name(hgr_ref_activation_t activation) { return names[activation]; }

int hgr_ref_cell_gates(hgr_ref_cell_t cell) { return cell == HGR_REF_LSTM ? 4 : cell == HGR_REF_GRU ? 3 : 1; }
int hgr_ref_cell_activations(hgr_ref_cell_t cell) { return cell == HGR_REF_LSTM ? 3 : cell == HGR_REF_GRU ? 2 : 1; }

/* ONNX's defaults of the ops of the same names (Affine and ScaledTanh: the
 * experimental ops'). */
static void defaults(hgr_ref_activation_t a, bool* takes_alpha, bool* takes_beta, double* alpha, double* beta) {
  *takes_alpha = *takes_beta = false;
  *alpha = *beta = 0;
  switch (a) {
    case HGR_REF_AFFINE: *takes_alpha = *takes_beta = true, *alpha = 1.0, *beta = 0.0; break;
    case HGR_REF_LEAKY_RELU: *takes_alpha = true, *alpha = 0.01; break;
    case HGR_REF_THRESHOLDED_RELU: *takes_alpha = true, *alpha = 1.0; break;
    case HGR_REF_SCALED_TANH: *takes_alpha = *takes_beta = true, *alpha = 1.0, *beta = 1.0; break;
    case HGR_REF_HARD_SIGMOID: *takes_alpha = *takes_beta = true, *alpha = 0.2, *beta = 0.5; break;
    case HGR_REF_ELU: *takes_alpha = true, *alpha = 1.0; break;
    default: break;
  }
}

void hgr_ref_rnn_activations(hgr_ref_rnn_t* c, const hgr_ref_activation_t* given, int count, const double* alphas,
                             int alpha_count, const double* betas, int beta_count) {
  static const hgr_ref_activation_t cell_defaults[3][3] = {
      {HGR_REF_SIGMOID, HGR_REF_TANH, HGR_REF_TANH}, {HGR_REF_SIGMOID, HGR_REF_TANH}, {HGR_REF_TANH}};
  int per = hgr_ref_cell_activations(c->cell);
  int next_alpha = 0, next_beta = 0;
  for (int d = 0; d < c->directions; ++d) {
    for (int a = 0; a < per; ++a) {
      hgr_ref_activation_t act = count ? given[d * per + a] : cell_defaults[c->cell][a];
      bool takes_alpha, takes_beta;
      double alpha, beta;
      defaults(act, &takes_alpha, &takes_beta, &alpha, &beta);
      if (takes_alpha && next_alpha < alpha_count) alpha = alphas[next_alpha++];
      if (takes_beta && next_beta < beta_count) beta = betas[next_beta++];
      c->activation[d * per + a] = act;
      c->alpha[d * per + a] = alpha;
      c->beta[d * per + a] = beta;
    }
  }
}

static double activate(const hgr_ref_rnn_t* c, int index, double x) {
  double alpha = c->alpha[index], beta = c->beta[index];
  switch (c->activation[index]) {
    case HGR_REF_RELU: return x > 0 ? x : 0;
    case HGR_REF_TANH: return tanh(x);
    case HGR_REF_SIGMOID: return 1 / (1 + exp(-x));
    case HGR_REF_AFFINE: return alpha * x + beta;
    case HGR_REF_LEAKY_RELU: return x >= 0 ? x : alpha * x;
    case HGR_REF_THRESHOLDED_RELU: return x >= alpha ? x : 0;
    case HGR_REF_SCALED_TANH: return alpha * tanh(beta * x);
    case HGR_REF_HARD_SIGMOID: return fmin(fmax(alpha * x + beta, 0), 1);
    case HGR_REF_ELU: return x >= 0 ? x : alpha * (exp(x) - 1);
    case HGR_REF_SOFTSIGN: return x / (1 + fabs(x));
    case HGR_REF_SOFTPLUS: return log(1 + exp(x));
    default: abort();
  }
}

static double clip(const hgr_ref_rnn_t* c, double x) {
  if (!c->clip_on) return x;
  return x < -c->clip ? -c->clip : x > c->clip ? c->clip : x;
}

/* x's row of time t, batch row b. */
static const float* x_row(const hgr_ref_rnn_t* c, int64_t t, int64_t b) {
  int64_t row = c->batch_first ? b * c->steps + t : t * c->batch + b;
  return c->x + row * c->input_size;
}

/* Offset of (d, b)'s state; of y at time t. */
static int64_t state_at(const hgr_ref_rnn_t* c, int d, int64_t b) {
  return (c->batch_first ? b * c->directions + d : d * c->batch + b) * c->hidden;
}

static int64_t y_at(const hgr_ref_rnn_t* c, int64_t t, int d, int64_t b) {
  int64_t row = c->batch_first ? (b * c->steps + t) * c->directions + d : (t * c->directions + d) * c->batch + b;
  return row * c->hidden;
}

void hgr_ref_rnn_gates_x(const hgr_ref_rnn_t* c, float* gates_x) {
  int64_t gh = hgr_ref_cell_gates(c->cell) * c->hidden;
  for (int64_t t = 0; t < c->steps; ++t)
    for (int64_t b = 0; b < c->batch; ++b) {
      int64_t row = c->batch_first ? b * c->steps + t : t * c->batch + b;
      for (int d = 0; d < c->directions; ++d)
        for (int64_t g = 0; g < gh; ++g) {
          double sum = c->b ? c->b[d * 2 * gh + g] : 0;
          const float* w = c->w + (d * gh + g) * c->input_size;
          for (int64_t i = 0; i < c->input_size; ++i) sum += (double)w[i] * x_row(c, t, b)[i];
          gates_x[(row * c->directions + d) * gh + g] = (float)sum;
        }
    }
}

/* W x_t + Wb + Rb + R v for gate row g of direction d (Rb and R v left out where asked). */
static double gate(const hgr_ref_rnn_t* c, int d, int64_t g, const float* x, const double* v, bool with_x,
                   bool with_r) {
  int64_t gh = hgr_ref_cell_gates(c->cell) * c->hidden;
  double sum = 0;
  if (with_x) {
    const float* w = c->w + (d * gh + g) * c->input_size;
    for (int64_t i = 0; i < c->input_size; ++i) sum += (double)w[i] * x[i];
    if (c->b) sum += c->b[d * 2 * gh + g];
  }
  if (with_r) {
    const float* r = c->r + (d * gh + g) * c->hidden;
    for (int64_t k = 0; k < c->hidden; ++k) sum += (double)r[k] * v[k];
    if (c->b) sum += c->b[d * 2 * gh + gh + g];
  }
  return sum;
}

void hgr_ref_rnn(const hgr_ref_rnn_t* c, float* y, float* y_h, float* y_c) {
  int64_t H = c->hidden;
  int per = hgr_ref_cell_activations(c->cell);
  double* h = calloc((size_t)(3 * H + 1), sizeof(double));
  double* cell = h + H;
  double* next = h + 2 * H;
  if (!h) abort();
  if (y)
    memset(y, 0, (size_t)(c->steps * c->directions * c->batch * H) * sizeof(float));
  for (int d = 0; d < c->directions; ++d) {
    bool reverse = c->directions == 2 ? d == 1 : c->reverse;
    int act = d * per; /* f, g, h at act, act + 1, act + 2 */
    for (int64_t b = 0; b < c->batch; ++b) {
      int64_t len = c->steps;
      if (c->lens) len = c->lens[b] < 0 ? 0 : c->lens[b] > c->steps ? c->steps : c->lens[b];
      int64_t state = state_at(c, d, b);
      for (int64_t j = 0; j < H; ++j) {
        h[j] = c->initial_h ? c->initial_h[state + j] : 0;
        cell[j] = c->initial_c ? c->initial_c[state + j] : 0;
      }
      for (int64_t s = 0; s < len; ++s) {
        int64_t t = reverse ? len - 1 - s : s;
        const float* x = x_row(c, t, b);
        for (int64_t j = 0; j < H; ++j) {
          if (c->cell == HGR_REF_LSTM) {
            const float* p = c->p ? c->p + d * 3 * H : NULL;
            double pi = gate(c, d, j, x, h, true, true), po = gate(c, d, H + j, x, h, true, true);
            double pf = gate(c, d, 2 * H + j, x, h, true, true), pc = gate(c, d, 3 * H + j, x, h, true, true);
            if (p) pi += p[j] * cell[j], pf += p[2 * H + j] * cell[j];
            double i = activate(c, act, clip(c, pi));
            double f = c->input_forget ? 1 - i : activate(c, act, clip(c, pf));
            double c_new = f * cell[j] + i * activate(c, act + 1, clip(c, pc));
            if (p) po += p[H + j] * c_new;
            double o = activate(c, act, clip(c, po));
            next[j] = o * activate(c, act + 2, c_new);
            cell[j] = c_new; /* unit j's cell alone reads it */
          } else if (c->cell == HGR_REF_GRU) {
            double z = activate(c, act, clip(c, gate(c, d, j, x, h, true, true)));
            double pre;
            if (c->linear_before_reset) {
              double reset = activate(c, act, clip(c, gate(c, d, H + j, x, h, true, true)));
              pre = gate(c, d, 2 * H + j, x, h, true, false) + reset * gate(c, d, 2 * H + j, x, h, false, true);
            } else {
              double* reset_h = calloc((size_t)H + 1, sizeof(double));
              if (!reset_h) abort();
              for (int64_t k = 0; k < H; ++k)
                reset_h[k] = activate(c, act, clip(c, gate(c, d, H + k, x, h, true, true))) * h[k];
              pre = gate(c, d, 2 * H + j, x, h, true, false) + gate(c, d, 2 * H + j, x, reset_h, false, true);
              free(reset_h);
            }
            next[j] = (1 - z) * activate(c, act + 1, clip(c, pre)) + z * h[j];
          } else {
            next[j] = activate(c, act, clip(c, gate(c, d, j, x, h, true, true)));
          }
        }
        memcpy(h, next, (size_t)H * sizeof(double));
        if (y)
          for (int64_t j = 0; j < H; ++j) y[y_at(c, t, d, b) + j] = (float)h[j];
      }
      for (int64_t j = 0; j < H; ++j) {
        if (y_h) y_h[state + j] = len ? (float)h[j] : 0.0f;
        if (y_c) y_c[state + j] = len ? (float)cell[j] : 0.0f;
      }
    }
  }
  free(h);
}
