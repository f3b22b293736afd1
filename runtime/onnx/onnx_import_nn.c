/* ONNX's neural-network ops: Conv (with a BatchNormalization after it folded into
 * its weights; the conv epilogue pass fuses what follows), ConvTranspose, pools,
 * normalizations and Softmax/LogSoftmax (Gemm and MatMul: onnx_import_matmul.c).
 * 1-D convolutions and pools run as 2-D ones of height 1. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "onnx_internal.h"
#include "text.h"

/* ---- shared ----------------------------------------------------------------------- */

static hgr_status_t set_pair(hgr_attrs_t* attrs, const char* key, int64_t a, int64_t b) {
  int64_t v[2] = {a, b};
  return hgr_attrs_set_ints(attrs, key, v, 2);
}

/* A float runtime input of rank 3 (1-D spatial, made 4-D with height 1) or 4. */
static hgr_status_t spatial_input(hgr__onnx_node_t* node, hgr__onnx_value_t* x, bool* out_1d, hgr_value_t* out) {
  if (x->onnx_type != HGR__ONNX_FLOAT)
    return HGR__ONNX_UNSUPPORTED(node, "input '%s' is %s; hgr computes float", x->name,
                                 hgr__onnx_type_name(x->onnx_type));
  if (x->ndim != 3 && x->ndim != 4)
    return HGR__ONNX_UNSUPPORTED(node, "input '%s' has rank %d; hgr runs 1-D and 2-D %s (rank 3 and 4)", x->name,
                                 (int)x->ndim, node->proto->op_type);
  HGR_RETURN_IF_ERROR(hgr__onnx_runtime(node, x, out));
  *out_1d = x->ndim == 3;
  if (*out_1d) {
    int64_t shape[4] = {x->shape[0], x->shape[1], 1, x->shape[2]};
    HGR_RETURN_IF_ERROR(hgr__onnx_add_reshape(node, *out, shape, 4, out));
  }
  return HGR_OK;
}

/* Back to rank 3 after a 1-D op. */
static hgr_status_t spatial_output(hgr__onnx_node_t* node, bool is_1d, hgr_value_t* value) {
  if (!is_1d) return HGR_OK;
  hgr_tensor_info_t info;
  HGR_RETURN_IF_ERROR(hgr__onnx_value_info(node, *value, &info));
  int64_t shape[3] = {info.shape[0], info.shape[1], info.shape[3]};
  return hgr__onnx_add_reshape(node, *value, shape, 3, value);
}

/* Window geometry of Conv/ConvTranspose/pools, in 2-D (a 1-D op has height 1). */
typedef struct window_t {
  int64_t kernel[2], stride[2], dilation[2];
  int64_t pad[4]; /* top, left, bottom, right */
} window_t;

/* The bounds of a window's numbers, so that the geometry's sums and products
 * (stride * extent + (kernel - 1) * dilation + pads) stay far inside int64 whatever
 * a file says: extents and kernels up to 2^31 - 1, the rest up to 65535. */
#define WINDOW_MAX_EXTENT INT32_MAX
#define WINDOW_MAX_STEP 65535

/* INVALID naming `what` when value lies outside [low, high]. */
static hgr_status_t check_window_value(const hgr__onnx_node_t* node, const char* what, int64_t value, int64_t low,
                                       int64_t high) {
  if (value >= low && value <= high) return HGR_OK;
  return HGR__ONNX_INVALID(node, "%s holds %lld; hgr takes %lld to %lld", what, (long long)value, (long long)low,
                           (long long)high);
}

/* Reads kernel_shape (or `kernel` from the weights), strides, dilations, pads and
 * auto_pad for spatial extents in[0..1] (in[0] = 1 for 1-D). */
static hgr_status_t read_window(const hgr__onnx_node_t* node, bool is_1d, const int64_t* in, const int64_t* kernel,
                                bool transpose, window_t* w) {
  int32_t n = is_1d ? 1 : 2;
  int64_t values[4];
  uint32_t count;
  bool present;
  for (int d = 0; d < 2; ++d) {
    HGR_RETURN_IF_ERROR(check_window_value(node, "the input's spatial extent", in[d], 0, WINDOW_MAX_EXTENT));
    if (kernel) HGR_RETURN_IF_ERROR(check_window_value(node, "the weights' kernel", kernel[d], 0, WINDOW_MAX_EXTENT));
    w->kernel[d] = kernel ? kernel[d] : 1;
    w->stride[d] = w->dilation[d] = 1;
  }
  memset(w->pad, 0, sizeof(w->pad));
  HGR_RETURN_IF_ERROR(hgr__onnx_attr_ints(node, "kernel_shape", values, 4, &count, &present));
  if (present) {
    if ((int32_t)count != n) return HGR__ONNX_INVALID(node, "attr 'kernel_shape' has %u values for %d-D", count, n);
    for (int32_t d = 0; d < n; ++d) {
      if (kernel && values[d] != kernel[2 - n + d])
        return HGR__ONNX_INVALID(node, "attr 'kernel_shape' says %lld, the weights %lld", (long long)values[d],
                                 (long long)kernel[2 - n + d]);
      HGR_RETURN_IF_ERROR(check_window_value(node, "attr 'kernel_shape'", values[d], 1, WINDOW_MAX_EXTENT));
      w->kernel[2 - n + d] = values[d];
    }
  } else if (!kernel) {
    return HGR__ONNX_INVALID(node, "attr 'kernel_shape' is required");
  }
  const char* keys[2] = {"strides", "dilations"};
  const char* labels[2] = {"attr 'strides'", "attr 'dilations'"};
  int64_t* dest[2] = {w->stride, w->dilation};
  for (int k = 0; k < 2; ++k) {
    HGR_RETURN_IF_ERROR(hgr__onnx_attr_ints(node, keys[k], values, 4, &count, &present));
    if (!present) continue;
    if ((int32_t)count != n) return HGR__ONNX_INVALID(node, "%s has %u values for %d-D", labels[k], count, n);
    for (int32_t d = 0; d < n; ++d) {
      HGR_RETURN_IF_ERROR(check_window_value(node, labels[k], values[d], 1, WINDOW_MAX_STEP));
      dest[k][2 - n + d] = values[d];
    }
  }
  char auto_pad[32];
  HGR_RETURN_IF_ERROR(hgr__onnx_attr_string(node, "auto_pad", "NOTSET", auto_pad, sizeof(auto_pad)));
  HGR_RETURN_IF_ERROR(hgr__onnx_attr_ints(node, "pads", values, 4, &count, &present));
  if (present && strcmp(auto_pad, "NOTSET"))
    return HGR__ONNX_INVALID(node, "attrs 'pads' and 'auto_pad' = %s at once", auto_pad);
  if (present) {
    if ((int32_t)count != 2 * n) return HGR__ONNX_INVALID(node, "attr 'pads' has %u values for %d-D", count, n);
    for (int32_t d = 0; d < n; ++d) {
      if (values[d] < 0 || values[n + d] < 0)
        return HGR__ONNX_UNSUPPORTED(node, "negative pads");
      HGR_RETURN_IF_ERROR(check_window_value(node, "attr 'pads'", values[d], 0, WINDOW_MAX_STEP));
      HGR_RETURN_IF_ERROR(check_window_value(node, "attr 'pads'", values[n + d], 0, WINDOW_MAX_STEP));
      w->pad[2 - n + d] = values[d];
      w->pad[2 + 2 - n + d] = values[n + d];
    }
  } else if (!strcmp(auto_pad, "SAME_UPPER") || !strcmp(auto_pad, "SAME_LOWER")) {
    if (transpose) return HGR_OK; /* ConvTranspose pads from its output shape (conv_transpose_pads) */
    for (int d = 0; d < 2; ++d) {
      int64_t out = (in[d] + w->stride[d] - 1) / w->stride[d];
      int64_t total = (out - 1) * w->stride[d] + (w->kernel[d] - 1) * w->dilation[d] + 1 - in[d];
      if (total < 0) total = 0;
      int64_t small = total / 2, large = total - small;
      bool upper = !strcmp(auto_pad, "SAME_UPPER");
      w->pad[d] = upper ? small : large;
      w->pad[2 + d] = upper ? large : small;
    }
  } else if (strcmp(auto_pad, "NOTSET") && strcmp(auto_pad, "VALID")) {
    return HGR__ONNX_UNSUPPORTED(node, "attr 'auto_pad' = \"%s\"", auto_pad);
  }
  return HGR_OK;
}

static hgr_status_t set_window(hgr_attrs_t* attrs, const window_t* w, const char* kernel_key, const char* dilation_key) {
  hgr_status_t status = set_pair(attrs, "strides", w->stride[0], w->stride[1]);
  if (!status && kernel_key) status = set_pair(attrs, kernel_key, w->kernel[0], w->kernel[1]);
  if (!status && dilation_key) status = set_pair(attrs, dilation_key, w->dilation[0], w->dilation[1]);
  if (!status) status = hgr_attrs_set_ints(attrs, "padding", w->pad, 4);
  return status;
}

/* ---- Conv and its fusions ------------------------------------------------------------ */

#define MAX_CHAIN 16

typedef struct conv_epilogue_t {
  hgr__onnx_tensor_t* weight; /* owned float copy when folding changed it, else NULL */
  hgr__onnx_tensor_t* bias;   /* owned float [M] when folded or added, else NULL */
  uint32_t chain[MAX_CHAIN];  /* the nodes fused, in order (a BatchNormalization) */
  uint32_t chain_length;
} conv_epilogue_t;

static const hgr__onnx_tensor_t* constant_of(const hgr__onnx_loader_t* loader, const Onnx__NodeProto* p, size_t i) {
  if (i >= p->n_input) return NULL;
  const hgr__onnx_value_t* v = hgr__onnx_find_value(loader, p->input[i]);
  return v && v->defined ? v->constant : NULL;
}

/* Whether the live uses of outputs other than 0 of p are none. */
static bool only_first_output_used(const hgr__onnx_loader_t* loader, const Onnx__NodeProto* p) {
  for (size_t k = 1; k < p->n_output; ++k) {
    const hgr__onnx_value_t* v = hgr__onnx_find_value(loader, p->output[k]);
    if (v && v->uses) return false;
  }
  return true;
}

/* A per-channel affine map y[c] = x[c] * scale[c] + shift[c] over a value of rank
 * `rank` whose dim 1 has `channels` entries, grown node by node. */
typedef struct affine_t {
  double* scale; /* the data of held[0] and held[1] */
  double* shift;
  int64_t channels;
  int32_t rank;
  hgr__onnx_tensor_t* held[2];
} affine_t;

/* The arrays are host tensors: their size comes from a shape the model gives (a
 * Conv's weight may be a graph input of 2^31 channels), so the loader's limits
 * bound them like any folded constant. affine_free after a failed init too. */
static hgr_status_t affine_init(const hgr__onnx_node_t* node, int64_t channels, int32_t rank, affine_t* f) {
  memset(f, 0, sizeof(*f));
  f->channels = channels;
  f->rank = rank;
  for (int k = 0; k < 2; ++k)
    HGR_RETURN_IF_ERROR(
        hgr__onnx_tensor_new(node->loader->allocator, HGR__ONNX_DOUBLE, &channels, 1, node->label, &f->held[k]));
  f->scale = f->held[0]->data;
  f->shift = f->held[1]->data;
  for (int64_t m = 0; m < channels; ++m) f->scale[m] = 1, f->shift[m] = 0;
  return HGR_OK;
}

static void affine_free(affine_t* f) {
  hgr__onnx_tensor_free(f->held[0]);
  hgr__onnx_tensor_free(f->held[1]);
}

/* Inference BatchNormalization p with constant statistics of `channels`. */
static bool is_inference_batch_norm(const hgr__onnx_loader_t* loader, const Onnx__NodeProto* p, int64_t channels) {
  const Onnx__AttributeProto* spatial = hgr__onnx_proto_attr(p, "spatial");
  if (strcmp(p->op_type, "BatchNormalization") || p->n_input != 5 || !only_first_output_used(loader, p) ||
      hgr__onnx_proto_attr(p, "training_mode") || (spatial && spatial->i != 1))
    return false;
  for (size_t i = 1; i < 5; ++i) {
    const hgr__onnx_tensor_t* t = constant_of(loader, p, i);
    if (!t || t->count != (uint64_t)channels || !hgr__onnx_type_is_float(t->onnx_type)) return false;
  }
  return true;
}

/* Composes BatchNormalization p (checked by is_inference_batch_norm) into f. */
static void affine_batch_norm(const hgr__onnx_loader_t* loader, const Onnx__NodeProto* p, affine_t* f) {
  const Onnx__AttributeProto* eps_attr = hgr__onnx_proto_attr(p, "epsilon");
  double eps = eps_attr ? eps_attr->f : 1e-5;
  for (int64_t m = 0; m < f->channels; ++m) {
    double s = hgr__onnx_tensor_f64(constant_of(loader, p, 1), (uint64_t)m) /
               sqrt(hgr__onnx_tensor_f64(constant_of(loader, p, 4), (uint64_t)m) + eps);
    double mean = hgr__onnx_tensor_f64(constant_of(loader, p, 3), (uint64_t)m);
    double b = hgr__onnx_tensor_f64(constant_of(loader, p, 2), (uint64_t)m);
    f->scale[m] *= s;
    f->shift[m] = (f->shift[m] - mean) * s + b;
  }
}

/* The per-channel constant operand of Mul or Add p applied to `current` ([C], [C, 1,
 * 1], [1, C, 1, 1], ...: one value per channel along the output's dim 1), or NULL. */
static const hgr__onnx_tensor_t* per_channel_operand(const hgr__onnx_loader_t* loader, const Onnx__NodeProto* p,
                                                     const char* current, const affine_t* f) {
  if ((strcmp(p->op_type, "Mul") && strcmp(p->op_type, "Add")) || p->n_input != 2) return NULL;
  int other = !strcmp(p->input[0], current) ? 1 : 0;
  if (!strcmp(p->input[other], current)) return NULL; /* x * x */
  const hgr__onnx_tensor_t* c = constant_of(loader, p, (size_t)other);
  if (!c || c->count != (uint64_t)f->channels || c->ndim < f->rank - 1 || c->ndim > f->rank ||
      !hgr__onnx_type_is_float(c->onnx_type))
    return NULL;
  /* the output's dim 1 (C) lines up with c's dim ndim - (rank - 1); every other dim of c is 1 */
  for (int32_t d = 0; d < c->ndim; ++d)
    if (d != c->ndim - (f->rank - 1) && c->shape[d] != 1) return NULL;
  return c;
}

/* Follows the sole consumers of *current while they are per-channel Mul/Add of a
 * constant (Mul only where allow_mul), composing them into f and appending them to
 * chain; *current and *next end at the first node not taken. */
static void affine_walk(hgr__onnx_node_t* node, affine_t* f, bool allow_mul, const hgr__onnx_value_t** current,
                        const Onnx__NodeProto** next, uint32_t* index, uint32_t* chain, uint32_t* chain_length) {
  const hgr__onnx_tensor_t* c;
  while (*next && *chain_length < MAX_CHAIN - 1 &&
         (c = per_channel_operand(node->loader, *next, (*current)->name, f)) != NULL) {
    bool mul = !strcmp((*next)->op_type, "Mul");
    if (mul && !allow_mul) break;
    for (int64_t m = 0; m < f->channels; ++m) {
      double v = hgr__onnx_tensor_f64(c, (uint64_t)m);
      if (mul) f->scale[m] *= v, f->shift[m] *= v;
      else f->shift[m] += v;
    }
    chain[(*chain_length)++] = *index;
    *current = hgr__onnx_find_value(node->loader, (*next)->output[0]);
    *next = hgr__onnx_sole_consumer(node, *current, index);
  }
}

/* Finds a BatchNormalization following the conv's output and folds it into the
 * conv's weights and bias: y = conv * scale + shift becomes W * scale and b * scale
 * + shift (only with constant weights and a constant or no bias). What may follow
 * (per-channel Mul and Add, Relu, Clip, LeakyRelu) is the conv epilogue pass's, on
 * the built graph (runtime/passes/conv_epilogue.c), as for graphs of any source. */
static hgr_status_t find_epilogue(hgr__onnx_node_t* node, const hgr__onnx_tensor_t* weight,
                                  const hgr__onnx_value_t* bias, int64_t channels, int32_t rank, conv_epilogue_t* e) {
  hgr__onnx_loader_t* loader = node->loader;
  uint32_t index;
  const Onnx__NodeProto* next = hgr__onnx_sole_consumer(node, node->outputs[0], &index);
  if (!next || !weight || (bias && !bias->constant) || !is_inference_batch_norm(loader, next, channels)) return HGR_OK;
  affine_t f;
  hgr_status_t status = affine_init(node, channels, rank, &f);
  if (!status) {
    affine_batch_norm(loader, next, &f);
    e->chain[e->chain_length++] = index;
    int64_t shape[1] = {channels};
    status = hgr__onnx_tensor_new(node->loader->allocator, HGR__ONNX_FLOAT, shape, 1, node->label, &e->bias);
    bool scaled = false;
    for (int64_t m = 0; !status && m < channels; ++m) {
      double b0 = bias ? hgr__onnx_tensor_f64(bias->constant, (uint64_t)m) : 0.0;
      hgr__onnx_tensor_set_f64(e->bias, (uint64_t)m, b0 * f.scale[m] + f.shift[m]);
      scaled = scaled || f.scale[m] != 1;
    }
    if (!status && scaled) {
      status = hgr__onnx_tensor_cast(node->loader->allocator, weight, HGR__ONNX_FLOAT, node->label, &e->weight);
      uint64_t per = status || !channels ? 0 : weight->count / (uint64_t)channels; /* no channels: no weights */
      float* w = status ? NULL : e->weight->data;
      for (uint64_t m = 0; per && m < (uint64_t)channels; ++m) /* a float loop: resnet50 folds 25 M weights */
        for (uint64_t k = m * per; k < (m + 1) * per; ++k) w[k] = (float)(w[k] * f.scale[m]);
    }
  }
  affine_free(&f);
  return status;
}

static hgr_status_t import_conv(hgr__onnx_node_t* node) {
  HGR_RETURN_IF_ERROR(hgr__onnx_check_attrs(node, "auto_pad dilations group kernel_shape pads strides"));
  hgr__onnx_value_t *x, *wv;
  HGR_RETURN_IF_ERROR(hgr__onnx_required(node, 0, &x));
  HGR_RETURN_IF_ERROR(hgr__onnx_required(node, 1, &wv));
  hgr__onnx_value_t* bv = hgr__onnx_input(node, 2);
  bool is_1d;
  hgr_value_t in;
  HGR_RETURN_IF_ERROR(spatial_input(node, x, &is_1d, &in));
  if (wv->ndim != x->ndim)
    return HGR__ONNX_INVALID(node, "the weights have rank %d, the input %d", (int)wv->ndim, (int)x->ndim);
  int64_t group;
  HGR_RETURN_IF_ERROR(hgr__onnx_attr_int(node, "group", 1, &group));
  int64_t channels = wv->shape[0];
  int64_t kernel[2] = {is_1d ? 1 : wv->shape[2], wv->shape[is_1d ? 2 : 3]};
  int64_t spatial[2] = {is_1d ? 1 : x->shape[2], x->shape[is_1d ? 2 : 3]};
  window_t w;
  HGR_RETURN_IF_ERROR(read_window(node, is_1d, spatial, kernel, false, &w));
  /* A strided 1x1 convolution without padding reads one pixel in stride[0] x
   * stride[1]: those pixels taken first by a strided_slice (a quarter of the input
   * at stride 2) make it a 1x1 convolution of stride 1, which runs as the GEMM
   * micro-kernel (resnet50's stride-2 projections: 2-3x faster, slice included). */
  if (kernel[0] == 1 && kernel[1] == 1 && (w.stride[0] > 1 || w.stride[1] > 1) && !w.pad[0] && !w.pad[1] &&
      !w.pad[2] && !w.pad[3] && group == 1 && x->ndim == 4) {
    int64_t begin[4] = {0, 0, 0, 0}, strides[4] = {1, 1, w.stride[0], w.stride[1]};
    int64_t end[4] = {x->shape[0], x->shape[1], (spatial[0] - 1) / w.stride[0] * w.stride[0] + 1,
                      (spatial[1] - 1) / w.stride[1] * w.stride[1] + 1};
    hgr_attrs_t* slice = NULL;
    HGR_RETURN_IF_ERROR(hgr_attrs_create(&slice));
    hgr_status_t status = hgr_attrs_set_ints(slice, "begin", begin, 4);
    if (!status) status = hgr_attrs_set_ints(slice, "end", end, 4);
    if (!status) status = hgr_attrs_set_ints(slice, "strides", strides, 4);
    if (!status) status = hgr__onnx_add_op(node, "strided_slice", &in, 1, slice, 1, &in);
    hgr_attrs_release(slice);
    HGR_RETURN_IF_ERROR(status);
    w.stride[0] = w.stride[1] = 1;
  }
  conv_epilogue_t e = {0};
  hgr_status_t status = find_epilogue(node, wv->constant, bv, channels, x->ndim, &e);
  hgr_value_t inputs[3] = {in};
  uint32_t count = 2;
  /* weights: folded copy, the constant, or the runtime value; 1-D gets height 1 */
  if (!status) {
    if (!e.weight && wv->constant && wv->onnx_type == HGR__ONNX_FLOAT && !is_1d) {
      status = hgr__onnx_runtime(node, wv, &inputs[1]); /* the weights as they are: the value's own param */
    } else if (e.weight || wv->constant) {
      hgr__onnx_tensor_t* t = e.weight;
      if (!t) status = hgr__onnx_tensor_cast(node->loader->allocator, wv->constant, HGR__ONNX_FLOAT, node->label, &t);
      if (!status && is_1d) {
        int64_t height_1[4] = {t->shape[0], t->shape[1], 1, t->shape[2]};
        status = hgr__onnx_tensor_reshape(t, height_1, 4, node->label);
      }
      if (!status) status = hgr__onnx_add_float_constant(node, wv->name, t, &inputs[1]);
      if (t != e.weight) hgr__onnx_tensor_free(t);
    } else {
      status = hgr__onnx_runtime(node, wv, &inputs[1]);
      if (!status && is_1d) {
        int64_t shape[4] = {wv->shape[0], wv->shape[1], 1, wv->shape[2]};
        status = hgr__onnx_add_reshape(node, inputs[1], shape, 4, &inputs[1]);
      }
    }
  }
  if (!status && (e.bias || bv)) {
    status = e.bias ? hgr__onnx_add_float_constant(node, bv ? bv->name : NULL, e.bias, &inputs[2])
                    : hgr__onnx_runtime(node, bv, &inputs[2]);
    count = 3;
  }
  hgr_attrs_t* attrs = NULL;
  if (!status) status = hgr_attrs_create(&attrs);
  if (!status) status = set_window(attrs, &w, "kernel_size", "dilation");
  if (!status) status = hgr_attrs_set_int(attrs, "groups", group);
  if (!status) status = hgr_attrs_set_int(attrs, "channels", channels);
  hgr_value_t out;
  if (e.chain_length) /* named after the value it computes: the last fused node's */
    node->op_name = node->loader->graph->node[e.chain[e.chain_length - 1]]->output[0];
  if (!status) status = hgr__onnx_add_op(node, "conv2d", inputs, count, attrs, 1, &out);
  hgr_attrs_release(attrs);
  hgr__onnx_tensor_free(e.weight);
  hgr__onnx_tensor_free(e.bias);
  HGR_RETURN_IF_ERROR(status);
  HGR_RETURN_IF_ERROR(spatial_output(node, is_1d, &out));
  if (!e.chain_length) return hgr__onnx_set_runtime(node, 0, out, HGR__ONNX_FLOAT);
  hgr__onnx_value_t result = {.onnx_type = HGR__ONNX_FLOAT, .has_value = true, .value = out};
  hgr_tensor_info_t info;
  HGR_RETURN_IF_ERROR(hgr__onnx_value_info(node, out, &info));
  result.ndim = info.ndim;
  memcpy(result.shape, info.shape, sizeof(int64_t) * (size_t)info.ndim);
  for (uint32_t i = 0; i < e.chain_length; ++i)
    HGR_RETURN_IF_ERROR(hgr__onnx_fuse_into(node, e.chain[i], i + 1 == e.chain_length ? &result : NULL));
  return HGR_OK;
}

/* ---- ConvTranspose ----------------------------------------------------------------------- */

/* ConvTranspose's pads and output_padding where the node gives output_shape or
 * auto_pad SAME_*: ONNX's formulas (and its reference's floor division):
 * total = stride (in - 1) + output_padding + (k - 1) dilation + 1 - out; SAME_UPPER
 * puts floor(total / 2) first, the others the rest first. A negative end pad (an
 * output longer than the full result) becomes extra output_padding. */
static hgr_status_t conv_transpose_pads(const hgr__onnx_node_t* node, bool is_1d, const int64_t* in,
                                        window_t* w, int64_t* output_padding) {
  int32_t n = is_1d ? 1 : 2;
  int64_t values[4];
  uint32_t count;
  bool present, shape_present;
  output_padding[0] = output_padding[1] = 0;
  HGR_RETURN_IF_ERROR(hgr__onnx_attr_ints(node, "output_padding", values, 4, &count, &present));
  if (present) {
    if ((int32_t)count != n) return HGR__ONNX_INVALID(node, "attr 'output_padding' has %u values for %d-D", count, n);
    for (int32_t d = 0; d < n; ++d) {
      HGR_RETURN_IF_ERROR(check_window_value(node, "attr 'output_padding'", values[d], 0, WINDOW_MAX_STEP));
      output_padding[2 - n + d] = values[d];
    }
  }
  int64_t out_shape[HGR_MAX_DIMS];
  HGR_RETURN_IF_ERROR(hgr__onnx_attr_ints(node, "output_shape", out_shape, HGR_MAX_DIMS, &count, &shape_present));
  char auto_pad[32];
  HGR_RETURN_IF_ERROR(hgr__onnx_attr_string(node, "auto_pad", "NOTSET", auto_pad, sizeof(auto_pad)));
  bool same = !strcmp(auto_pad, "SAME_UPPER") || !strcmp(auto_pad, "SAME_LOWER");
  if (!shape_present && !same) return HGR_OK; /* pads as read_window read them */
  if (hgr__onnx_attr(node, "pads"))
    return HGR__ONNX_UNSUPPORTED(node, "attrs 'pads' and '%s' at once", shape_present ? "output_shape" : "auto_pad");
  int64_t target[2] = {1, 1};
  if (shape_present) {
    if ((int32_t)count != n && (int32_t)count != n + 2)
      return HGR__ONNX_INVALID(node, "attr 'output_shape' has %u values for %d-D", count, n);
    for (int32_t d = 0; d < n; ++d) {
      target[2 - n + d] = out_shape[(int32_t)count - n + d];
      HGR_RETURN_IF_ERROR(check_window_value(node, "attr 'output_shape'", target[2 - n + d], 0, WINDOW_MAX_EXTENT));
    }
  } else {
    for (int d = 0; d < 2; ++d) target[d] = in[d] * w->stride[d];
  }
  for (int d = 2 - n; d < 2; ++d) {
    int64_t total = w->stride[d] * (in[d] - 1) + output_padding[d] + (w->kernel[d] - 1) * w->dilation[d] + 1 -
                    target[d];
    int64_t half = total >= 0 ? total / 2 : -((-total + 1) / 2); /* floor */
    int64_t start = !strcmp(auto_pad, "SAME_UPPER") ? half : total - half;
    int64_t end = total - start;
    if (start < 0)
      return HGR__ONNX_UNSUPPORTED(node, "output_shape %lld on axis %d needs a negative start pad (%lld)",
                                   (long long)target[d], d + 2 - (2 - n), (long long)start);
    if (end < 0) {
      output_padding[d] -= end;
      end = 0;
    }
    w->pad[d] = start;
    w->pad[2 + d] = end;
  }
  return HGR_OK;
}

/* ConvTranspose as conv2d_transpose: weight [C_in, C_out / group, kh, kw] is hgr's
 * IOHW already; 1-D runs with height 1; 3-D is refused. */
static hgr_status_t import_conv_transpose(hgr__onnx_node_t* node) {
  HGR_RETURN_IF_ERROR(hgr__onnx_check_attrs(
      node, "auto_pad dilations group kernel_shape output_padding output_shape pads strides"));
  hgr__onnx_value_t *x, *wv;
  HGR_RETURN_IF_ERROR(hgr__onnx_required(node, 0, &x));
  HGR_RETURN_IF_ERROR(hgr__onnx_required(node, 1, &wv));
  hgr__onnx_value_t* bv = hgr__onnx_input(node, 2);
  bool is_1d;
  hgr_value_t inputs[3];
  HGR_RETURN_IF_ERROR(spatial_input(node, x, &is_1d, &inputs[0]));
  if (wv->ndim != x->ndim)
    return HGR__ONNX_INVALID(node, "the weights have rank %d, the input %d", (int)wv->ndim, (int)x->ndim);
  if (wv->onnx_type != HGR__ONNX_FLOAT)
    return HGR__ONNX_UNSUPPORTED(node, "weights are %s; hgr computes float", hgr__onnx_type_name(wv->onnx_type));
  int64_t group;
  HGR_RETURN_IF_ERROR(hgr__onnx_attr_int(node, "group", 1, &group));
  if (group < 1 || group > (wv->shape[0] > 1 ? wv->shape[0] : 1) || x->shape[1] != wv->shape[0] ||
      wv->shape[0] % group)
    return HGR__ONNX_INVALID(node, "group %lld with %lld input channels and weights for %lld", (long long)group,
                             (long long)x->shape[1], (long long)wv->shape[0]);
  int64_t channels = wv->shape[1] * group;
  int64_t kernel[2] = {is_1d ? 1 : wv->shape[2], wv->shape[is_1d ? 2 : 3]};
  int64_t spatial[2] = {is_1d ? 1 : x->shape[2], x->shape[is_1d ? 2 : 3]};
  window_t w;
  int64_t output_padding[2];
  HGR_RETURN_IF_ERROR(read_window(node, is_1d, spatial, kernel, true, &w));
  HGR_RETURN_IF_ERROR(conv_transpose_pads(node, is_1d, spatial, &w, output_padding));
  HGR_RETURN_IF_ERROR(hgr__onnx_runtime(node, wv, &inputs[1]));
  if (is_1d) {
    int64_t shape[4] = {wv->shape[0], wv->shape[1], 1, wv->shape[2]};
    HGR_RETURN_IF_ERROR(hgr__onnx_add_reshape(node, inputs[1], shape, 4, &inputs[1]));
  }
  uint32_t count = 2;
  if (bv) {
    HGR_RETURN_IF_ERROR(hgr__onnx_runtime(node, bv, &inputs[2]));
    count = 3;
  }
  hgr_attrs_t* attrs = NULL;
  hgr_value_t out;
  HGR_RETURN_IF_ERROR(hgr_attrs_create(&attrs));
  hgr_status_t status = set_window(attrs, &w, "kernel_size", "dilation");
  if (!status) status = hgr_attrs_set_int(attrs, "groups", group);
  if (!status) status = hgr_attrs_set_int(attrs, "channels", channels);
  if (!status) status = set_pair(attrs, "output_padding", output_padding[0], output_padding[1]);
  if (!status) status = hgr__onnx_add_op(node, "conv2d_transpose", inputs, count, attrs, 1, &out);
  hgr_attrs_release(attrs);
  HGR_RETURN_IF_ERROR(status);
  HGR_RETURN_IF_ERROR(spatial_output(node, is_1d, &out));
  return hgr__onnx_set_runtime(node, 0, out, HGR__ONNX_FLOAT);
}

/* ---- pools --------------------------------------------------------------------------- */

static hgr_status_t import_pool(hgr__onnx_node_t* node) {
  bool max = !strcmp(node->proto->op_type, "MaxPool");
  HGR_RETURN_IF_ERROR(hgr__onnx_check_attrs(
      node, max ? "auto_pad ceil_mode dilations kernel_shape pads storage_order strides"
                : "auto_pad ceil_mode count_include_pad kernel_shape pads strides dilations"));
  hgr__onnx_value_t* x;
  HGR_RETURN_IF_ERROR(hgr__onnx_required(node, 0, &x));
  if (node->output_count > 1 && node->outputs[1] && node->outputs[1]->uses)
    return HGR__ONNX_UNSUPPORTED(node, "output 1 (Indices) is used; hgr computes MaxPool's values only");
  int64_t storage_order, ceil_mode, count_include_pad;
  HGR_RETURN_IF_ERROR(hgr__onnx_attr_int(node, "storage_order", 0, &storage_order));
  if (storage_order) return HGR__ONNX_UNSUPPORTED(node, "storage_order = %lld", (long long)storage_order);
  HGR_RETURN_IF_ERROR(hgr__onnx_attr_int(node, "ceil_mode", 0, &ceil_mode));
  HGR_RETURN_IF_ERROR(hgr__onnx_attr_int(node, "count_include_pad", 0, &count_include_pad));
  bool is_1d;
  hgr_value_t in, out;
  /* MaxPool of int8 and uint8 (ONNX Runtime's QOperator models keep it): in
   * float32, exact for the max of such integers, and back */
  int32_t type = x->onnx_type;
  hgr__onnx_value_t widened;
  if (max && (type == HGR__ONNX_INT8 || type == HGR__ONNX_UINT8)) {
    HGR_RETURN_IF_ERROR(hgr__onnx_runtime(node, x, &in));
    HGR_RETURN_IF_ERROR(hgr__onnx_add_cast(node, in, (hgr_dtype_t){HGR_DTYPE_FLOAT, 32, 1}, &in));
    widened = hgr__onnx_runtime_value(node, in, HGR__ONNX_FLOAT);
    x = &widened;
  }
  HGR_RETURN_IF_ERROR(spatial_input(node, x, &is_1d, &in));
  int64_t spatial[2] = {is_1d ? 1 : x->shape[2], x->shape[is_1d ? 2 : 3]};
  window_t w;
  HGR_RETURN_IF_ERROR(read_window(node, is_1d, spatial, NULL, false, &w));
  hgr_attrs_t* attrs = NULL;
  HGR_RETURN_IF_ERROR(hgr_attrs_create(&attrs));
  hgr_status_t status = set_window(attrs, &w, "pool_size", "dilation");
  if (!status) status = hgr_attrs_set_int(attrs, "ceil_mode", ceil_mode);
  if (!status) status = hgr_attrs_set_int(attrs, "drop_padded_windows", 1); /* ONNX's ceil_mode windows */
  if (!status && !max) status = hgr_attrs_set_int(attrs, "count_include_pad", count_include_pad);
  if (!status) status = hgr__onnx_add_op(node, max ? "max_pool2d" : "avg_pool2d", &in, 1, attrs, 1, &out);
  hgr_attrs_release(attrs);
  HGR_RETURN_IF_ERROR(status);
  HGR_RETURN_IF_ERROR(spatial_output(node, is_1d, &out));
  if (type != HGR__ONNX_FLOAT)
    HGR_RETURN_IF_ERROR(hgr__onnx_add_cast(node, out, (hgr_dtype_t){HGR_DTYPE_INT, 32, 1}, &out));
  return hgr__onnx_set_runtime(node, 0, out, type);
}

static hgr_status_t import_global_pool(hgr__onnx_node_t* node) {
  HGR_RETURN_IF_ERROR(hgr__onnx_check_attrs(node, ""));
  bool max = !strcmp(node->proto->op_type, "GlobalMaxPool");
  hgr__onnx_value_t* x;
  HGR_RETURN_IF_ERROR(hgr__onnx_required(node, 0, &x));
  if (x->ndim < 3) return HGR__ONNX_INVALID(node, "input '%s' has rank %d; the op needs N, C and spatial dims",
                                            x->name, (int)x->ndim);
  hgr_value_t in, out;
  HGR_RETURN_IF_ERROR(hgr__onnx_runtime(node, x, &in));
  hgr_attrs_t* attrs = NULL;
  hgr_status_t status = HGR_OK;
  if (x->ndim == 4) {
    status = hgr__onnx_add_op(node, max ? "global_max_pool2d" : "global_avg_pool2d", &in, 1, NULL, 1, &out);
  } else { /* any other rank: a reduction over the spatial axes */
    int64_t axes[HGR_MAX_DIMS];
    for (int32_t d = 2; d < x->ndim; ++d) axes[d - 2] = d;
    HGR_RETURN_IF_ERROR(hgr_attrs_create(&attrs));
    status = hgr_attrs_set_ints(attrs, "axis", axes, (size_t)(x->ndim - 2));
    if (!status) status = hgr_attrs_set_int(attrs, "keepdims", 1);
    if (!status) status = hgr__onnx_add_op(node, max ? "max" : "mean", &in, 1, attrs, 1, &out);
  }
  hgr_attrs_release(attrs);
  HGR_RETURN_IF_ERROR(status);
  return hgr__onnx_set_runtime(node, 0, out, HGR__ONNX_FLOAT);
}

/* ---- normalizations ------------------------------------------------------------------- */

/* A BatchNormalization with constant statistics, and the per-channel Mul/Add of
 * constants that alone follow it, as x * scale + shift: a multiply and an add of
 * [C, 1, ...] constants (NumPy broadcasting along axis 1), named after the last
 * value it computes. Two elementwise nodes rather than one batch_norm with unit
 * statistics: the fusion pass merges them with their neighbours into one kernel
 * computing a multiply and an add per element, where batch_norm's statements
 * would compute a square root and a division per element too. */
static hgr_status_t import_batch_norm_affine(hgr__onnx_node_t* node, hgr__onnx_value_t* x) {
  affine_t f;
  hgr_status_t status = affine_init(node, x->shape[1], x->ndim, &f);
  uint32_t chain[MAX_CHAIN], chain_length = 0, index;
  const hgr__onnx_value_t* current = node->outputs[0];
  const Onnx__NodeProto* next = current ? hgr__onnx_sole_consumer(node, current, &index) : NULL;
  if (!status) {
    affine_batch_norm(node->loader, node->proto, &f);
    affine_walk(node, &f, true, &current, &next, &index, chain, &chain_length);
  }
  hgr__onnx_tensor_t* params[2] = {NULL}; /* scale, shift */
  int64_t shape[HGR_MAX_DIMS];
  int32_t ndim = x->ndim - 1; /* [C, 1, ...]: aligned to the right, C meets axis 1 */
  shape[0] = f.channels;
  for (int32_t d = 1; d < ndim; ++d) shape[d] = 1;
  for (int i = 0; !status && i < 2; ++i)
    status = hgr__onnx_tensor_new(node->loader->allocator, HGR__ONNX_FLOAT, shape, ndim, node->label, &params[i]);
  for (int64_t m = 0; !status && m < f.channels; ++m) {
    hgr__onnx_tensor_set_f64(params[0], (uint64_t)m, f.scale[m]);
    hgr__onnx_tensor_set_f64(params[1], (uint64_t)m, f.shift[m]);
  }
  affine_free(&f);
  hgr_value_t in, constants[2], scaled, out;
  if (!status) status = hgr__onnx_runtime(node, x, &in);
  for (int i = 0; !status && i < 2; ++i) status = hgr__onnx_add_constant(node, NULL, params[i], &constants[i]);
  for (int i = 0; i < 2; ++i) hgr__onnx_tensor_free(params[i]);
  if (!status) status = hgr__onnx_add_binary(node, "multiply", in, constants[0], &scaled);
  if (!status && chain_length) node->op_name = current->name;
  if (!status) status = hgr__onnx_add_binary(node, "add", scaled, constants[1], &out);
  if (status || !chain_length) return status ? status : hgr__onnx_set_runtime(node, 0, out, HGR__ONNX_FLOAT);
  hgr__onnx_value_t result = {.onnx_type = HGR__ONNX_FLOAT, .has_value = true, .value = out, .ndim = x->ndim};
  memcpy(result.shape, x->shape, sizeof(result.shape));
  for (uint32_t i = 0; i < chain_length; ++i)
    HGR_RETURN_IF_ERROR(hgr__onnx_fuse_into(node, chain[i], i + 1 == chain_length ? &result : NULL));
  return HGR_OK;
}

static hgr_status_t import_batch_norm(hgr__onnx_node_t* node) {
  HGR_RETURN_IF_ERROR(hgr__onnx_check_attrs(node, "epsilon momentum spatial training_mode is_test consumed_inputs"));
  int64_t spatial, training;
  double epsilon;
  HGR_RETURN_IF_ERROR(hgr__onnx_attr_int(node, "spatial", 1, &spatial));
  HGR_RETURN_IF_ERROR(hgr__onnx_attr_int(node, "training_mode", 0, &training));
  HGR_RETURN_IF_ERROR(hgr__onnx_attr_float(node, "epsilon", 1e-5, &epsilon));
  if (!spatial) return HGR__ONNX_UNSUPPORTED(node, "spatial = 0");
  if (training) return HGR__ONNX_UNSUPPORTED(node, "training_mode = 1; hgr runs inference");
  for (uint32_t k = 1; k < node->output_count; ++k)
    if (node->outputs[k] && node->outputs[k]->uses)
      return HGR__ONNX_UNSUPPORTED(node, "output %u (training statistics) is used", k);
  hgr__onnx_value_t* x;
  HGR_RETURN_IF_ERROR(hgr__onnx_required(node, 0, &x));
  if (x->ndim >= 2 && is_inference_batch_norm(node->loader, node->proto, x->shape[1]))
    return import_batch_norm_affine(node, x);
  hgr_value_t in[5];
  HGR_RETURN_IF_ERROR(hgr__onnx_runtime_inputs(node, 0, 5, in));
  hgr_attrs_t* attrs = NULL;
  HGR_RETURN_IF_ERROR(hgr_attrs_create(&attrs));
  hgr_status_t status = hgr_attrs_set_float(attrs, "epsilon", epsilon);
  if (!status) status = hgr_attrs_set_int(attrs, "axis", 1);
  return hgr__onnx_finish_op(node, status, attrs, "batch_norm", in, 5, 0, HGR__ONNX_FLOAT);
}

static hgr_status_t import_lrn(hgr__onnx_node_t* node) {
  HGR_RETURN_IF_ERROR(hgr__onnx_check_attrs(node, "alpha beta bias size"));
  double alpha, beta, bias;
  int64_t size;
  HGR_RETURN_IF_ERROR(hgr__onnx_attr_float(node, "alpha", 1e-4, &alpha));
  HGR_RETURN_IF_ERROR(hgr__onnx_attr_float(node, "beta", 0.75, &beta));
  HGR_RETURN_IF_ERROR(hgr__onnx_attr_float(node, "bias", 1.0, &bias));
  HGR_RETURN_IF_ERROR(hgr__onnx_attr_int(node, "size", 0, &size));
  if (size < 1) return HGR__ONNX_INVALID(node, "attr 'size' is required (>= 1)");
  hgr_value_t in;
  HGR_RETURN_IF_ERROR(hgr__onnx_runtime_inputs(node, 0, 1, &in));
  hgr_attrs_t* attrs = NULL;
  HGR_RETURN_IF_ERROR(hgr_attrs_create(&attrs));
  hgr_status_t status = hgr_attrs_set_int(attrs, "size", size);
  if (!status) status = hgr_attrs_set_int(attrs, "axis", 1);
  if (!status) status = hgr_attrs_set_float(attrs, "alpha", alpha);
  if (!status) status = hgr_attrs_set_float(attrs, "beta", beta);
  if (!status) status = hgr_attrs_set_float(attrs, "bias", bias);
  return hgr__onnx_finish_op(node, status, attrs, "lrn", &in, 1, 0, HGR__ONNX_FLOAT);
}

static hgr_status_t import_instance_norm(hgr__onnx_node_t* node) {
  HGR_RETURN_IF_ERROR(hgr__onnx_check_attrs(node, "epsilon"));
  double epsilon;
  HGR_RETURN_IF_ERROR(hgr__onnx_attr_float(node, "epsilon", 1e-5, &epsilon));
  hgr_value_t in[3];
  HGR_RETURN_IF_ERROR(hgr__onnx_runtime_inputs(node, 0, 3, in));
  hgr_attrs_t* attrs = NULL;
  HGR_RETURN_IF_ERROR(hgr_attrs_create(&attrs));
  hgr_status_t status = hgr_attrs_set_float(attrs, "epsilon", epsilon);
  if (!status) status = hgr_attrs_set_int(attrs, "axis", 1);
  return hgr__onnx_finish_op(node, status, attrs, "instance_norm", in, 3, 0, HGR__ONNX_FLOAT);
}

/* ---- Softmax, LogSoftmax ---------------------------------------------------------------- */

static hgr_status_t import_softmax(hgr__onnx_node_t* node) {
  HGR_RETURN_IF_ERROR(hgr__onnx_check_attrs(node, "axis"));
  bool log = !strcmp(node->proto->op_type, "LogSoftmax");
  hgr__onnx_value_t* x;
  HGR_RETURN_IF_ERROR(hgr__onnx_required(node, 0, &x));
  int64_t axis;
  HGR_RETURN_IF_ERROR(hgr__onnx_attr_int(node, "axis", node->opset < 13 ? 1 : -1, &axis));
  int32_t a;
  HGR_RETURN_IF_ERROR(hgr__onnx_axis(node, "attr 'axis'", axis, x->ndim, &a));
  hgr_value_t in, out;
  HGR_RETURN_IF_ERROR(hgr__onnx_runtime(node, x, &in));
  bool coerce = node->opset < 13 && a != x->ndim - 1; /* before 13: over the flattened tail [a, rank) */
  if (coerce) {
    int64_t rows = 1, cols = 1;
    for (int32_t d = 0; d < x->ndim; ++d) *(d < a ? &rows : &cols) *= x->shape[d];
    int64_t shape[2] = {rows, cols};
    HGR_RETURN_IF_ERROR(hgr__onnx_add_reshape(node, in, shape, 2, &in));
    a = 1;
  }
  hgr_attrs_t* attrs = NULL;
  HGR_RETURN_IF_ERROR(hgr_attrs_create(&attrs));
  hgr_status_t status = hgr_attrs_set_int(attrs, "axis", a);
  if (!status) status = hgr__onnx_add_op(node, log ? "log_softmax" : "softmax", &in, 1, attrs, 1, &out);
  hgr_attrs_release(attrs);
  HGR_RETURN_IF_ERROR(status);
  if (coerce) HGR_RETURN_IF_ERROR(hgr__onnx_add_reshape(node, out, x->shape, x->ndim, &out));
  return hgr__onnx_set_runtime(node, 0, out, HGR__ONNX_FLOAT);
}

/* ---- LayerNormalization ------------------------------------------------------------------ */

/* Scale or B as a flat float [count] over the normalized dims norm[0..ndim), to which
 * v must broadcast: a constant is expanded at load, a runtime value broadcast and
 * reshaped; v NULL gives zeros (an omitted B). */
static hgr_status_t layer_norm_param(hgr__onnx_node_t* node, hgr__onnx_value_t* v, const int64_t* norm,
                                     int32_t ndim, int64_t count, hgr_value_t* out) {
  int64_t flat[1] = {count};
  if (!v) {
    hgr__onnx_tensor_t* zeros = NULL;
    HGR_RETURN_IF_ERROR(hgr__onnx_tensor_new(node->loader->allocator, HGR__ONNX_FLOAT, flat, 1, node->label, &zeros));
    hgr_status_t status = hgr__onnx_add_float_constant(node, NULL, zeros, out);
    hgr__onnx_tensor_free(zeros);
    return status;
  }
  int64_t shape[HGR_MAX_DIMS];
  int32_t shape_ndim;
  HGR_RETURN_IF_ERROR(hgr__onnx_broadcast(node, v->shape, v->ndim, norm, ndim, shape, &shape_ndim));
  bool fits = shape_ndim == ndim;
  for (int32_t d = 0; fits && d < ndim; ++d) fits = shape[d] == norm[d];
  if (!fits) return HGR__ONNX_INVALID(node, "input '%s' does not broadcast to the normalized dims", v->name);
  if (!hgr__onnx_type_is_float(v->onnx_type))
    return HGR__ONNX_INVALID(node, "input '%s' is %s", v->name, hgr__onnx_type_name(v->onnx_type));
  if (v->constant) { /* expand at load: element i of the normalized dims reads v's broadcast index */
    hgr__onnx_tensor_t* t = NULL;
    HGR_RETURN_IF_ERROR(hgr__onnx_tensor_new(node->loader->allocator, HGR__ONNX_FLOAT, flat, 1, node->label, &t));
    int32_t lead = ndim - v->ndim;
    for (int64_t i = 0; i < count; ++i) {
      int64_t rest = i, from = 0, stride = 1;
      for (int32_t d = ndim - 1; d >= lead; --d) {
        int64_t c = rest % norm[d];
        rest /= norm[d];
        if (v->shape[d - lead] != 1) from += c * stride;
        stride *= v->shape[d - lead];
      }
      hgr__onnx_tensor_set_f64(t, (uint64_t)i, hgr__onnx_tensor_f64(v->constant, (uint64_t)from));
    }
    hgr_status_t status = hgr__onnx_add_float_constant(node, NULL, t, out);
    hgr__onnx_tensor_free(t);
    return status;
  }
  uint64_t v_count = 1;
  for (int32_t d = 0; d < v->ndim; ++d) v_count *= (uint64_t)v->shape[d];
  HGR_RETURN_IF_ERROR(hgr__onnx_runtime(node, v, out));
  if (v_count != (uint64_t)count) {
    hgr_attrs_t* attrs = NULL;
    HGR_RETURN_IF_ERROR(hgr_attrs_create(&attrs));
    hgr_value_t in = *out;
    hgr_status_t status = HGR_OK;
    if (v->ndim != ndim) { /* align ranks first */
      int64_t aligned[HGR_MAX_DIMS];
      for (int32_t d = 0; d < ndim; ++d) aligned[d] = d < ndim - v->ndim ? 1 : v->shape[d - (ndim - v->ndim)];
      status = hgr__onnx_add_reshape(node, in, aligned, ndim, &in);
    }
    if (!status) status = hgr_attrs_set_ints(attrs, "shape", norm, (size_t)ndim);
    if (!status) status = hgr__onnx_add_op(node, "broadcast_to", &in, 1, attrs, 1, out);
    hgr_attrs_release(attrs);
    HGR_RETURN_IF_ERROR(status);
  }
  return hgr__onnx_add_reshape(node, *out, flat, 1, out);
}

/* Whether something uses LayerNormalization's output k (1 mean, 2 inv_std_dev). */
static bool layer_norm_output_used(const hgr__onnx_node_t* node, uint32_t k) {
  return node->output_count > k && node->outputs[k] && node->outputs[k]->uses;
}

/* Mean and InvStdDev (outputs 1 and 2) over the rows of x2 [outer, count], shaped
 * like X with the normalized dims 1, for the outputs that are used. */

static hgr_status_t layer_norm_statistics(hgr__onnx_node_t* node, const hgr__onnx_value_t* x, int32_t axis,
                                          hgr_value_t x2, double epsilon) {
  bool want_mean = layer_norm_output_used(node, 1), want_inv = layer_norm_output_used(node, 2);
  if (!want_mean && !want_inv) return HGR_OK;
  int64_t shape[HGR_MAX_DIMS];
  for (int32_t d = 0; d < x->ndim; ++d) shape[d] = d < axis ? x->shape[d] : 1;
  hgr_attrs_t* attrs = NULL;
  HGR_RETURN_IF_ERROR(hgr_attrs_create(&attrs));
  hgr_value_t mean, centered, var, eps, inv;
  hgr_status_t status = hgr_attrs_set_int(attrs, "axis", 1);
  if (!status) status = hgr_attrs_set_int(attrs, "keepdims", 1);
  if (!status) status = hgr__onnx_add_op(node, "mean", &x2, 1, attrs, 1, &mean);
  if (!status) status = hgr__onnx_add_binary(node, "subtract", x2, mean, &centered);
  if (!status) status = hgr__onnx_add_binary(node, "multiply", centered, centered, &var);
  if (!status) status = hgr__onnx_add_op(node, "mean", &var, 1, attrs, 1, &var);
  hgr_attrs_release(attrs);
  if (!status) status = hgr__onnx_add_scalar(node, epsilon, &eps);
  if (!status) status = hgr__onnx_add_binary(node, "add", var, eps, &inv);
  if (!status) status = hgr__onnx_add_unary(node, "rsqrt", inv, &inv);
  HGR_RETURN_IF_ERROR(status);
  if (want_mean) {
    HGR_RETURN_IF_ERROR(hgr__onnx_add_reshape(node, mean, shape, x->ndim, &mean));
    HGR_RETURN_IF_ERROR(hgr__onnx_set_runtime(node, 1, mean, HGR__ONNX_FLOAT));
  }
  if (want_inv) {
    HGR_RETURN_IF_ERROR(hgr__onnx_add_reshape(node, inv, shape, x->ndim, &inv));
    HGR_RETURN_IF_ERROR(hgr__onnx_set_runtime(node, 2, inv, HGR__ONNX_FLOAT));
  }
  return HGR_OK;
}

/* LayerNormalization (opset 17) on layer_norm, which normalizes over one axis: X is
 * viewed as [outer, prod(normalized dims)] unless the axis is already the last. */
static hgr_status_t import_layer_norm(hgr__onnx_node_t* node) {
  HGR_RETURN_IF_ERROR(hgr__onnx_check_attrs(node, "axis epsilon stash_type"));
  int64_t axis, stash_type;
  double epsilon;
  HGR_RETURN_IF_ERROR(hgr__onnx_attr_int(node, "axis", -1, &axis));
  HGR_RETURN_IF_ERROR(hgr__onnx_attr_int(node, "stash_type", HGR__ONNX_FLOAT, &stash_type));
  HGR_RETURN_IF_ERROR(hgr__onnx_attr_float(node, "epsilon", 1e-5, &epsilon));
  if (stash_type != HGR__ONNX_FLOAT)
    return HGR__ONNX_UNSUPPORTED(node, "attr 'stash_type' = %lld; hgr computes float statistics",
                                 (long long)stash_type);
  hgr__onnx_value_t *x, *scale;
  HGR_RETURN_IF_ERROR(hgr__onnx_required(node, 0, &x));
  HGR_RETURN_IF_ERROR(hgr__onnx_required(node, 1, &scale));
  if (x->onnx_type != HGR__ONNX_FLOAT)
    return HGR__ONNX_UNSUPPORTED(node, "input '%s' is %s; hgr computes float", x->name,
                                 hgr__onnx_type_name(x->onnx_type));
  if (x->ndim < 1) return HGR__ONNX_INVALID(node, "input '%s' is a scalar", x->name);
  int32_t a;
  HGR_RETURN_IF_ERROR(hgr__onnx_axis(node, "attr 'axis'", axis, x->ndim, &a));
  int64_t outer = 1, count = 1;
  for (int32_t d = 0; d < x->ndim; ++d) *(d < a ? &outer : &count) *= x->shape[d];
  hgr_value_t in[3], x2 = {0}, out;
  HGR_RETURN_IF_ERROR(hgr__onnx_runtime(node, x, &in[0]));
  int64_t two[2] = {outer, count};
  bool flatten = a != x->ndim - 1;
  /* X as [outer, count] only where something reads it: a reshape nobody reads would
   * still be a reader of X (the skip layer norm pass fuses X's add only where the
   * layer norm is its first reader) */
  if (flatten || layer_norm_output_used(node, 1) || layer_norm_output_used(node, 2))
    HGR_RETURN_IF_ERROR(hgr__onnx_add_reshape(node, in[0], two, 2, &x2));
  if (flatten) in[0] = x2;
  HGR_RETURN_IF_ERROR(layer_norm_param(node, scale, x->shape + a, x->ndim - a, count, &in[1]));
  HGR_RETURN_IF_ERROR(layer_norm_param(node, hgr__onnx_input(node, 2), x->shape + a, x->ndim - a, count, &in[2]));
  hgr_attrs_t* attrs = NULL;
  HGR_RETURN_IF_ERROR(hgr_attrs_create(&attrs));
  hgr_status_t status = hgr_attrs_set_int(attrs, "axis", -1);
  if (!status) status = hgr_attrs_set_float(attrs, "epsilon", epsilon);
  if (!status) status = hgr__onnx_add_op(node, "layer_norm", in, 3, attrs, 1, &out);
  hgr_attrs_release(attrs);
  HGR_RETURN_IF_ERROR(status);
  if (flatten) HGR_RETURN_IF_ERROR(hgr__onnx_add_reshape(node, out, x->shape, x->ndim, &out));
  HGR_RETURN_IF_ERROR(hgr__onnx_set_runtime(node, 0, out, HGR__ONNX_FLOAT));
  return layer_norm_statistics(node, x, a, x2, epsilon);
}

const hgr__onnx_op_t hgr__onnx_ops_nn[] = {
    {"Conv", import_conv, NULL, 2},
    {"ConvTranspose", import_conv_transpose, NULL, 2},
    {"MaxPool", import_pool, NULL, 1},
    {"AveragePool", import_pool, NULL, 1},
    {"GlobalAveragePool", import_global_pool, NULL, 1},
    {"GlobalMaxPool", import_global_pool, NULL, 1},
    {"BatchNormalization", import_batch_norm, NULL, 5},
    {"LRN", import_lrn, NULL, 1},
    {"InstanceNormalization", import_instance_norm, NULL, 3},
    {"LayerNormalization", import_layer_norm, NULL, 2},
    {"Softmax", import_softmax, NULL, 1},
    {"LogSoftmax", import_softmax, NULL, 1},
    {.name = NULL},
};
