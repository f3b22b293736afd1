/* Resizing (kernels/resize.cl): Relay's image.resize2d on float32 NCHW data,
 * resizing H and W with ONNX Resize's semantics (opsets 11 to 13).
 *
 * Attrs: size [OH, OW] (required); scales [sh, sw] (optional, hgr's: ONNX Resize's
 * scales input; when given, the coordinate transforms divide by these instead of
 * OH / H and OW / W); roi [h_start, w_start, h_end, w_end] (normalized, used by
 * tf_crop_and_resize only, and required by it); layout "NCHW"; method
 * "nearest_neighbor", "linear" (default, Relay's) or "cubic";
 * coordinate_transformation_mode "half_pixel" (default), "align_corners",
 * "asymmetric", "pytorch_half_pixel", "tf_half_pixel_for_nn" or
 * "tf_crop_and_resize"; rounding_method (nearest only) "round_prefer_floor"
 * (default), "round_prefer_ceil", "floor" or "ceil"; cubic_alpha (-0.75);
 * cubic_exclude (0: ONNX's exclude_outside); extrapolation_value (0; for
 * tf_crop_and_resize samples outside the input); out_layout and out_dtype ("" or
 * the input's).
 *
 * Resizing is separable: each output row y reads a few input rows with weights
 * that depend only on y, and each output column likewise. The plan computes these
 * taps in double, on the host, with ONNX's formulas (onnx/reference/ops/op_resize.py),
 * so coordinates and rounding follow ONNX exactly whatever the device's float
 * arithmetic (scales and roi are float32 values, as ONNX's inputs are); the kernel only sums taps_h x taps_w products in float32. Out-of-range
 * taps read the edge element (ONNX pads the input by its edge). */
#include <errno.h>
#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "ops.h"

enum { NEAREST, LINEAR, CUBIC };
enum { HALF_PIXEL, ALIGN_CORNERS, ASYMMETRIC, PYTORCH_HALF_PIXEL, TF_HALF_PIXEL_FOR_NN, TF_CROP_AND_RESIZE };
enum { ROUND_PREFER_FLOOR, ROUND_PREFER_CEIL, FLOOR, CEIL };

/* Everything the node asks for. scale[a] is the scale of axis a (0: H, 1: W);
 * roi_start/roi_end per axis. */
typedef struct resize_t {
  int64_t out_h, out_w;
  bool has_scales; /* the scales attr, float32 values (ONNX's scales input) */
  double scale[2];  /* from sizes: out / in */
  float scales[2]; /* the scales attr, float32 as ONNX's input (a float field, so the value is surely rounded) */
  float roi_start[2], roi_end[2]; /* float32, as ONNX's roi input */
  int method, transform, rounding;
  double cubic_alpha;
  bool exclude_outside;
  float extrapolation;
} resize_t;

/* Reads a list of up to capacity numbers ("[0.5, 2]", "(1, 1)", "2"; "None", ""
 * or absent: not present) into out. */
static hgr_status_t attr_floats(const hgr__op_ctx_t* ctx, const char* key, double* out, uint32_t capacity,
                                uint32_t* out_count, bool* out_present) {
  const char* value = hgr__node_attr(ctx->node, key);
  *out_count = 0;
  *out_present = false;
  const char* s = value;
  while (s && *s == ' ') ++s;
  if (!s || !*s || !strcmp(s, "None") || !strcmp(s, "null")) return HGR_OK;
  char open = *s, close = open == '[' ? ']' : open == '(' ? ')' : 0;
  if (close) ++s;
  for (;;) {
    while (*s == ' ') ++s;
    if (close && *s == close && *out_count == 0) {
      ++s;
      break;
    }
    char* stop = NULL;
    errno = 0;
    double parsed = strtod(s, &stop);
    if (stop == s || !isfinite(parsed) || errno == ERANGE || *out_count == capacity)
      return HGR__OP_ERROR(ctx, "attr '%s' = \"%s\" is not a list of at most %u finite numbers", key, value,
                           capacity);
    out[(*out_count)++] = parsed;
    s = stop;
    while (*s == ' ') ++s;
    if (*s == ',') {
      ++s;
      continue;
    }
    if (close && *s == close) ++s;
    else if (close) return HGR__OP_ERROR(ctx, "attr '%s' = \"%s\" is not a list of numbers", key, value);
    break;
  }
  while (*s == ' ') ++s;
  if (*s) return HGR__OP_ERROR(ctx, "attr '%s' = \"%s\" is not a list of numbers", key, value);
  *out_present = true;
  return HGR_OK;
}

/* Index of value in the NULL-terminated list (hgr__attr_choice checked it is there). */
static int choice_index(const char* const* list, const char* value) {
  for (int i = 0; list[i]; ++i)
    if (!strcmp(list[i], value)) return i;
  return 0;
}

static hgr_status_t resize_parse(const hgr__op_ctx_t* ctx, resize_t* p) {
  static const char* const layouts[] = {"NCHW", "", NULL};
  static const char* const out_layouts[] = {"", "NCHW", NULL};
  static const char* const out_dtypes[] = {"", "float32", NULL};
  static const char* const methods[] = {"nearest_neighbor", "linear", "cubic", NULL};
  static const char* const transforms[] = {"half_pixel",           "align_corners",       "asymmetric",
                                           "pytorch_half_pixel",   "tf_half_pixel_for_nn", "tf_crop_and_resize",
                                           NULL};
  static const char* const roundings[] = {"round_prefer_floor", "round_prefer_ceil", "floor", "ceil", "", NULL};
  memset(p, 0, sizeof(*p));
  HGR_RETURN_IF_ERROR(hgr__op_check_dtype(ctx, 0, -1, false));
  const hgr__entry_t* in = hgr__op_input(ctx, 0);
  char have[160];
  if (in->ndim != 4)
    return HGR__OP_ERROR(ctx, "input 0 (entry %u) is shaped %s; resize2d takes NCHW data (4 dimensions)",
                         (uint32_t)(in - ctx->graph->entries), hgr__entry_shape(in, have, sizeof(have)));
  const char* choice;
  HGR_RETURN_IF_ERROR(hgr__attr_choice(ctx, "layout", "NCHW", layouts, &choice));
  HGR_RETURN_IF_ERROR(hgr__attr_choice(ctx, "out_layout", "", out_layouts, &choice));
  HGR_RETURN_IF_ERROR(hgr__attr_choice(ctx, "out_dtype", "", out_dtypes, &choice));
  HGR_RETURN_IF_ERROR(hgr__attr_choice(ctx, "method", "linear", methods, &choice));
  p->method = choice_index(methods, choice);
  HGR_RETURN_IF_ERROR(hgr__attr_choice(ctx, "coordinate_transformation_mode", "half_pixel", transforms, &choice));
  p->transform = choice_index(transforms, choice);
  HGR_RETURN_IF_ERROR(hgr__attr_choice(ctx, "rounding_method", "round_prefer_floor", roundings, &choice));
  p->rounding = *choice ? choice_index(roundings, choice) : ROUND_PREFER_FLOOR;
  HGR_RETURN_IF_ERROR(hgr__attr_float(ctx, "cubic_alpha", -0.75, &p->cubic_alpha));
  if (!isfinite(p->cubic_alpha))
    return HGR__OP_ERROR(ctx, "attr 'cubic_alpha' = \"%s\" must be finite", hgr__attr_string(ctx, "cubic_alpha", ""));
  HGR_RETURN_IF_ERROR(hgr__attr_bool(ctx, "cubic_exclude", false, &p->exclude_outside));
  double extrapolation;
  HGR_RETURN_IF_ERROR(hgr__attr_float(ctx, "extrapolation_value", 0.0, &extrapolation));
  if (isfinite(extrapolation) && fabs(extrapolation) > FLT_MAX)
    return HGR__OP_ERROR(ctx, "attr 'extrapolation_value' = \"%s\" is outside float32's range",
                         hgr__attr_string(ctx, "extrapolation_value", ""));
  p->extrapolation = (float)extrapolation;

  int64_t size[2];
  uint32_t count;
  bool present;
  HGR_RETURN_IF_ERROR(hgr__attr_ints(ctx, "size", size, 2, &count, &present));
  const char* size_text = hgr__attr_string(ctx, "size", "");
  if (!present) return HGR__OP_ERROR(ctx, "attr 'size' ([out_height, out_width]) is required");
  if (count != 2)
    return HGR__OP_ERROR(ctx, "attr 'size' = \"%s\" has %u values; it takes 2 ([out_height, out_width])", size_text,
                         count);
  for (int a = 0; a < 2; ++a)
    if (size[a] < 0 || size[a] > INT32_MAX)
      return HGR__OP_ERROR(ctx, "attr 'size' = \"%s\" has %lld; sizes must be 0 to %d", size_text, (long long)size[a],
                           INT32_MAX);
  p->out_h = size[0];
  p->out_w = size[1];

  double values[4];
  HGR_RETURN_IF_ERROR(attr_floats(ctx, "scales", values, 2, &count, &present));
  if (present && count != 2)
    return HGR__OP_ERROR(ctx, "attr 'scales' = \"%s\" has %u values; it takes 2 ([height, width])",
                         hgr__attr_string(ctx, "scales", ""), count);
  p->has_scales = present;
  for (int a = 0; a < 2; ++a) {
    int64_t extent = in->shape[2 + a];
    if (present) {
      if (!(values[a] > 0))
        return HGR__OP_ERROR(ctx, "attr 'scales' = \"%s\" has %g; scales must be positive",
                             hgr__attr_string(ctx, "scales", ""), values[a]);
      p->scales[a] = (float)values[a];
      p->scale[a] = p->scales[a];
    } else if (extent > 0) {
      p->scale[a] = (double)size[a] / (double)extent;
    } else {
      p->scale[a] = 1.0; /* nothing to sample, and nothing sampled: size must be 0 too */
    }
    if (extent == 0 && size[a] > 0)
      return HGR__OP_ERROR(ctx, "input 0 (entry %u) is shaped %s: an empty %s cannot be resized to %lld",
                           (uint32_t)(in - ctx->graph->entries), hgr__entry_shape(in, have, sizeof(have)),
                           a ? "width" : "height", (long long)size[a]);
  }

  HGR_RETURN_IF_ERROR(attr_floats(ctx, "roi", values, 4, &count, &present));
  if (present && count != 4)
    return HGR__OP_ERROR(ctx, "attr 'roi' = \"%s\" has %u values; it takes 4 ([h_start, w_start, h_end, w_end])",
                         hgr__attr_string(ctx, "roi", ""), count);
  if (p->transform == TF_CROP_AND_RESIZE && !present)
    return HGR__OP_ERROR(ctx, "attr 'roi' is required with coordinate_transformation_mode \"tf_crop_and_resize\"");
  for (int a = 0; a < 2; ++a) {
    p->roi_start[a] = present ? (float)values[a] : 0.0f;
    p->roi_end[a] = present ? (float)values[2 + a] : 1.0f;
  }
  return HGR_OK;
}

static hgr_status_t infer_resize2d(hgr__op_ctx_t* ctx, hgr__entry_t* outputs) {
  resize_t p;
  HGR_RETURN_IF_ERROR(resize_parse(ctx, &p));
  const hgr__entry_t* in = hgr__op_input(ctx, 0);
  int64_t shape[4] = {in->shape[0], in->shape[1], p.out_h, p.out_w};
  hgr__op_set_output(&outputs[0], HGR__DTYPE_F32, shape, 4);
  return HGR_OK;
}

/* ---- the taps ------------------------------------------------------------------------ */

#define MAX_TAPS 4

/* value rounded to float32, where ONNX's reference computes in float32. */
static double as_single(double value) { return (double)(float)value; }

/* Where output coordinate x of axis a samples the input (ONNX's x_original), and
 * whether it lies outside the crop (tf_crop_and_resize: the extrapolation value).
 * This follows ONNX's reference to the rounding, so that samples falling on a
 * rounding tie (nearest) or on the crop's edge go the way ONNX's expected outputs
 * do: it computes in double from the (float32) scales and roi, except for the
 * output extent scale * in, the roi's span and offset, and tf_crop_and_resize's
 * sample for an output extent of 1, which are float32 there. */
static double source_coordinate(const resize_t* p, int a, int64_t x, int64_t in_extent, bool* out_outside) {
  double scale = p->has_scales ? (double)p->scales[a] : p->scale[a], in = (double)in_extent, at = (double)x;
  double out = p->has_scales ? as_single(scale * in) : scale * in;
  *out_outside = false;
  switch (p->transform) {
    case ALIGN_CORNERS: return out == 1 ? 0.0 : at * (in - 1) / (p->has_scales ? as_single(out - 1) : out - 1);
    case ASYMMETRIC: return at / scale;
    case PYTORCH_HALF_PIXEL: return out == 1 ? -0.5 : (at + 0.5) / scale - 0.5;
    case TF_HALF_PIXEL_FOR_NN: return (at + 0.5) / scale;
    case TF_CROP_AND_RESIZE: {
      double start = p->roi_start[a], span = as_single(p->roi_end[a] - start), source;
      if (out == 1) source = as_single(as_single(span * (in - 1)) / 2);
      else source = at * span * (in - 1) / (p->has_scales ? as_single(out - 1) : out - 1);
      source += as_single(start * (in - 1));
      if (out == 1) source = as_single(source); /* float32 throughout there */
      *out_outside = source < 0 || source > in - 1;
      return source;
    }
    default: return (at + 0.5) / scale - 0.5; /* half_pixel */
  }
}

/* ONNX's cubic convolution weights of the 4 taps at first - 1 .. first + 2 for a
 * sample ratio past `first` (0 < ratio <= 1). */
static void cubic_weights(double ratio, double alpha, double* w) {
  double r1 = ratio + 1, q = 1 - ratio, q1 = q + 1;
  w[0] = ((alpha * r1 - 5 * alpha) * r1 + 8 * alpha) * r1 - 4 * alpha;
  w[1] = ((alpha + 2) * ratio - (alpha + 3)) * ratio * ratio + 1;
  w[2] = ((alpha + 2) * q - (alpha + 3)) * q * q + 1;
  w[3] = ((alpha * q1 - 5 * alpha) * q1 + 8 * alpha) * q1 - 4 * alpha;
}

static int taps_of(int method) { return method == NEAREST ? 1 : method == LINEAR ? 2 : 4; }

/* Output coordinate x's taps along axis a: whether it lies outside the crop (the
 * extrapolation value), then taps_of(method) input indices (clamped to the edge) and
 * their weights. */
static bool taps_at(const resize_t* p, int a, int64_t x, int64_t in_extent, int64_t* clamped, double* weight) {
  int taps = taps_of(p->method);
  bool outside;
  double source = source_coordinate(p, a, x, in_extent, &outside);
  /* ONNX takes the taps left of the sample: first = ceil(source) - 1, so that the
   * ratio past it is in (0, 1] (an integral source gives ratio 1). */
  double first_real = ceil(source) - 1;
  double ratio = source - first_real;
  int64_t first = (int64_t)first_real;
  int64_t index[MAX_TAPS];
  if (p->method == NEAREST) {
    bool upper;
    if (ratio == 1) upper = true; /* integral: the sample itself */
    else if (p->rounding == ROUND_PREFER_FLOOR) upper = ratio > 0.5;
    else if (p->rounding == ROUND_PREFER_CEIL) upper = ratio >= 0.5;
    else upper = p->rounding == CEIL;
    index[0] = upper ? first + 1 : first;
    weight[0] = 1;
  } else if (p->method == LINEAR) {
    index[0] = first;
    index[1] = first + 1;
    weight[0] = 1 - ratio;
    weight[1] = ratio;
  } else {
    for (int k = 0; k < 4; ++k) index[k] = first - 1 + k;
    cubic_weights(ratio, p->cubic_alpha, weight);
  }
  if (p->exclude_outside) {
    double sum = 0;
    for (int k = 0; k < taps; ++k) {
      if (index[k] < 0 || index[k] >= in_extent) weight[k] = 0;
      sum += weight[k];
    }
    for (int k = 0; k < taps; ++k) weight[k] = sum != 0 ? weight[k] / sum : 0;
  }
  for (int k = 0; k < taps; ++k) clamped[k] = index[k] < 0 ? 0 : index[k] >= in_extent ? in_extent - 1 : index[k];
  return outside;
}

/* Whether every output coordinate x of axis a takes input pixel x / factor whole
 * (weight 1 on it, exactly 0 on any other tap), the output factor times the input.
 * factor 1: a resize to the same size whose samples fall on the pixels (scale 1 with
 * half_pixel, align_corners, asymmetric, pytorch_half_pixel, any method: a cubic's
 * outer taps weigh 0 at a whole pixel) copies that axis. factor 2: a nearest 2x
 * upsampling (asymmetric with floor, half_pixel with round_prefer_floor or ceil, ...:
 * whichever attrs give that mapping) repeats each pixel twice. */
static bool axis_repeats(const resize_t* p, int a, int64_t out_extent, int64_t in_extent, int64_t factor) {
  if (out_extent != in_extent * factor) return false;
  int64_t clamped[MAX_TAPS];
  double weight[MAX_TAPS];
  for (int64_t x = 0; x < out_extent; ++x) {
    if (taps_at(p, a, x, in_extent, clamped, weight)) return false;
    int whole = 0; /* taps of weight 1 on pixel x / factor; every other weighs 0 */
    for (int k = 0; k < taps_of(p->method); ++k) {
      if (weight[k] == 1.0 && clamped[k] == x / factor) ++whole;
      else if (weight[k] != 0.0) return false;
    }
    if (whole != 1) return false;
  }
  return true;
}

/* Appends output coordinate x's entry for axis a to the launch's meta: a flag (1:
 * the extrapolation value), then taps input indices (clamped to the edge) and taps
 * weights (float32 bits). */
static void append_taps(hgr__op_ctx_t* ctx, hgr__launch_plan_t* l, const resize_t* p, int a, int64_t x,
                        int64_t in_extent) {
  int taps = taps_of(p->method);
  int64_t clamped[MAX_TAPS];
  double weight[MAX_TAPS];
  bool outside = taps_at(p, a, x, in_extent, clamped, weight);
  hgr__launch_meta1(ctx, l, outside);
  for (int k = 0; k < taps; ++k) hgr__launch_meta1(ctx, l, outside ? 0 : (int32_t)clamped[k]);
  for (int k = 0; k < taps; ++k) {
    float single = (float)weight[k];
    int32_t bits;
    memcpy(&bits, &single, sizeof(bits));
    hgr__launch_meta1(ctx, l, bits);
  }
}

static hgr_status_t plan_resize2d(hgr__op_ctx_t* ctx) {
  resize_t p;
  HGR_RETURN_IF_ERROR(resize_parse(ctx, &p));
  const hgr__entry_t* in = hgr__op_input(ctx, 0);
  const hgr__entry_t* out = hgr__op_output(ctx, 0);
  HGR_RETURN_IF_ERROR(hgr__op_check_range(ctx, "input 0's element count", in->element_count, INT32_MAX));
  HGR_RETURN_IF_ERROR(hgr__op_check_range(ctx, "the output's element count", out->element_count, INT32_MAX));
  int taps = taps_of(p.method);
  uint64_t count = out->element_count;
  /* An empty output runs nothing; then neither the tables nor the extents matter. */
  int64_t in_h = count ? in->shape[2] : 1, in_w = count ? in->shape[3] : 1;
  int64_t out_h = count ? p.out_h : 0, out_w = count ? p.out_w : 0;
  HGR_RETURN_IF_ERROR(hgr__op_check_range(ctx, "the tap table's length (out_height + out_width) * 9",
                                          (uint64_t)(out_h + out_w) * 9, INT32_MAX / 4));
  /* each pixel twice along both axes (a detector's 2x nearest upsampling): a work-item
   * per input row, no table */
  if (count && axis_repeats(&p, 0, out_h, in_h, 2) && axis_repeats(&p, 1, out_w, in_w, 2)) {
    hgr__launch_plan_t* l = hgr__op_launch(ctx, "hgr_resize2d_repeat2");
    hgr__launch_input(ctx, l, 0);
    hgr__launch_output(ctx, l, 0);
    hgr__launch_int(ctx, l, (int32_t)in_w);
    uint64_t rows = in->element_count / (uint64_t)in_w;
    hgr__launch_uint(ctx, l, (uint32_t)rows);
    hgr__launch_1d(ctx, l, rows);
    return HGR_OK;
  }
  /* a resize that samples every pixel where it is: a copy (taps 0, no table) */
  bool identity = count && axis_repeats(&p, 0, out_h, in_h, 1) && axis_repeats(&p, 1, out_w, in_w, 1);
  if (identity) taps = 0;
  hgr__launch_plan_t* l = hgr__op_launch(ctx, "hgr_resize2d");
  hgr__launch_input(ctx, l, 0);
  hgr__launch_output(ctx, l, 0);
  hgr__launch_meta_arg(ctx, l);
  hgr__launch_int(ctx, l, (int32_t)in_h);
  hgr__launch_int(ctx, l, (int32_t)in_w);
  hgr__launch_int(ctx, l, (int32_t)(out_h ? out_h : 1));
  hgr__launch_int(ctx, l, (int32_t)(out_w ? out_w : 1));
  hgr__launch_int(ctx, l, taps);
  hgr__launch_float(ctx, l, p.extrapolation);
  uint64_t rows = count ? count / (uint64_t)out_w : 0; /* a work-item per output row */
  hgr__launch_uint(ctx, l, (uint32_t)rows);
  for (int64_t y = 0; taps && y < out_h; ++y) append_taps(ctx, l, &p, 0, y, in_h);
  for (int64_t x = 0; taps && x < out_w; ++x) append_taps(ctx, l, &p, 1, x, in_w);
  if (!count || !taps) hgr__launch_meta1(ctx, l, 0); /* a meta buffer is never empty */
  hgr__launch_1d(ctx, l, rows);
  return HGR_OK;
}

const hgr__op_t hgr__ops_resize[] = {
    {"resize2d", "resize", 1, 1, 1, 1,
     "size scales roi layout method coordinate_transformation_mode rounding_method cubic_alpha cubic_exclude "
     "extrapolation_value out_layout out_dtype",
     plan_resize2d, 0, HGR__IN_PLACE_REFUSED, infer_resize2d},
    {.name = NULL},
};
