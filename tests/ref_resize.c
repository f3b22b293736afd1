#include "ref_resize.h"

#include <math.h>
#include <stdlib.h>

const char* const ref_resize_method_names[3] = {"nearest_neighbor", "linear", "cubic"};
const char* const ref_resize_transform_names[6] = {"half_pixel",         "align_corners",
                                                   "asymmetric",         "pytorch_half_pixel",
                                                   "tf_half_pixel_for_nn", "tf_crop_and_resize"};
const char* const ref_resize_rounding_names[4] = {"round_prefer_floor", "round_prefer_ceil", "floor", "ceil"};

/* ONNX's coefficient functions; returns how many. */
static int coefficients(const ref_resize_attrs_t* a, double ratio, double* c) {
  if (a->method == REF_RESIZE_NEAREST) {
    if (ratio == floor(ratio)) {
      c[0] = 0, c[1] = 1;
    } else if (a->rounding == REF_RESIZE_ROUND_PREFER_FLOOR) {
      c[0] = ratio <= 0.5, c[1] = ratio > 0.5;
    } else if (a->rounding == REF_RESIZE_ROUND_PREFER_CEIL) {
      c[0] = ratio < 0.5, c[1] = ratio >= 0.5;
    } else if (a->rounding == REF_RESIZE_FLOOR) {
      c[0] = 1, c[1] = 0;
    } else {
      c[0] = 0, c[1] = 1;
    }
    return 2;
  }
  if (a->method == REF_RESIZE_LINEAR) {
    c[0] = 1 - ratio, c[1] = ratio;
    return 2;
  }
  double A = a->cubic_alpha, r = ratio, s = 1 - ratio;
  c[0] = ((A * (r + 1) - 5 * A) * (r + 1) + 8 * A) * (r + 1) - 4 * A;
  c[1] = ((A + 2) * r - (A + 3)) * r * r + 1;
  c[2] = ((A + 2) * s - (A + 3)) * s * s + 1;
  c[3] = ((A * (s + 1) - 5 * A) * (s + 1) + 8 * A) * (s + 1) - 4 * A;
  return 4;
}

/* ONNX's _interpolate_1d_with_x on data[0 .. n) (stride apart) at output x of an
 * axis with the given scale and roi [start, end]. */
static double interpolate_1d(const ref_resize_attrs_t* a, const double* data, int64_t n, double scale,
                             const double* roi, int64_t x) {
  /* As ONNX's reference: double from the float32 scales and roi, but for the
   * output extent with scales and the roi's span and offset, float32 there. */
#define S(v) ((double)(float)(v))
  double in = (double)n, at = (double)x, source;
  double out = a->has_scales ? S(scale * in) : scale * in, last = a->has_scales ? S(out - 1) : out - 1;
  switch (a->transform) {
    case REF_RESIZE_ALIGN_CORNERS: source = out == 1 ? 0 : at * (in - 1) / last; break;
    case REF_RESIZE_ASYMMETRIC: source = at / scale; break;
    case REF_RESIZE_PYTORCH_HALF_PIXEL: source = out == 1 ? -0.5 : (at + 0.5) / scale - 0.5; break;
    case REF_RESIZE_TF_HALF_PIXEL_FOR_NN: source = (at + 0.5) / scale; break;
    case REF_RESIZE_TF_CROP_AND_RESIZE: {
      double span = S(S(roi[1]) - S(roi[0]));
      source = out == 1 ? S(S(span * (in - 1)) / 2) : at * span * (in - 1) / last;
      source += S(S(roi[0]) * (in - 1));
      if (out == 1) source = S(source);
      if (source < 0 || source > in - 1) return a->extrapolation;
      break;
    }
    default: source = (at + 0.5) / scale - 0.5; break;
  }
#undef S
  double ratio = source == floor(source) ? 1 : source - floor(source);
  double c[4];
  int taps = coefficients(a, ratio, c);
  /* The taps nearest source in the data padded by ceil(taps / 2) edge elements,
   * ties to the lower index, ascending. */
  int64_t pad = (taps + 1) / 2, length = n + 2 * pad;
  double centre = source + (double)pad;
  int64_t chosen[4];
  int found = 0;
  int64_t low = (int64_t)floor(centre) - taps - 1, high = (int64_t)floor(centre) + taps + 1;
  if (low < 0) low = 0;
  if (high > length - 1) high = length - 1;
  while (found < taps) {
    int64_t best = -1;
    for (int64_t k = low; k <= high; ++k) {
      bool taken = false;
      for (int j = 0; j < found; ++j) taken = taken || chosen[j] == k;
      if (taken) continue;
      if (best < 0 || fabs(centre - (double)k) < fabs(centre - (double)best)) best = k;
    }
    chosen[found++] = best;
  }
  for (int i = 0; i < taps; ++i) /* ascending */
    for (int j = i + 1; j < taps; ++j)
      if (chosen[j] < chosen[i]) {
        int64_t swap = chosen[i];
        chosen[i] = chosen[j];
        chosen[j] = swap;
      }
  if (a->exclude_outside) {
    double sum = 0;
    for (int i = 0; i < taps; ++i) {
      int64_t index = chosen[i] - pad;
      if (index < 0 || index >= n) c[i] = 0;
      sum += c[i];
    }
    for (int i = 0; i < taps; ++i) c[i] /= sum;
  }
  double result = 0;
  for (int i = 0; i < taps; ++i) {
    int64_t index = chosen[i] - pad;
    index = index < 0 ? 0 : index >= n ? n - 1 : index;
    result += c[i] * data[index];
  }
  return result;
}

void ref_resize2d(const float* in, const int64_t* shape, int64_t out_h, int64_t out_w, const ref_resize_attrs_t* a,
                  float* out) {
  int64_t planes = shape[0] * shape[1], h = shape[2], w = shape[3];
  double scale_h = a->has_scales ? (float)a->scales[0] : (double)out_h / (double)h;
  double scale_w = a->has_scales ? (float)a->scales[1] : (double)out_w / (double)w;
  double roi_h[2] = {a->roi[0], a->roi[2]}, roi_w[2] = {a->roi[1], a->roi[3]};
  double* row = malloc(sizeof(double) * (size_t)(w > 0 ? w : 1));
  double* column = malloc(sizeof(double) * (size_t)(h > 0 ? h : 1));
  if (!row || !column) abort();
  for (int64_t p = 0; p < planes; ++p)
    for (int64_t y = 0; y < out_h; ++y)
      for (int64_t x = 0; x < out_w; ++x) {
        for (int64_t r = 0; r < h; ++r) {
          for (int64_t k = 0; k < w; ++k) row[k] = in[(p * h + r) * w + k];
          column[r] = interpolate_1d(a, row, w, scale_w, roi_w, x);
        }
        out[(p * out_h + y) * out_w + x] = (float)interpolate_1d(a, column, h, scale_h, roi_h, y);
      }
  free(row);
  free(column);
}
