/* Plain-C references of the norm and reduce op families (runtime/ops/ops_norm.c,
 * runtime/ops/ops_reduce.c), computed in double and rounded once to float32 (int64 for
 * int32 sums, wrapped to int32 at the end).
 *
 * Tensors are row-major. An op over one axis views its input as
 * [outer, axis_len, inner]: outer is the product of the dimensions before the axis,
 * inner of those after it; element (o, j, i) is at (o * axis_len + j) * inner + i.
 * The examples generator links this file too. */
#ifndef HGR_TEST_REF_NORM_H_
#define HGR_TEST_REF_NORM_H_

#include <stdbool.h>
#include <stdint.h>

/* softmax (log false) or log_softmax (log true) over the middle axis, numerically
 * stable: exp(x - max) / sum exp(x - max), or x - max - log(sum exp(x - max)). */
void hgr_ref_softmax(const float* x, float* y, int64_t outer, int64_t axis_len, int64_t inner, bool log);

/* layer_norm over the middle axis (Relay): (x - mean) / sqrt(var + epsilon), var
 * the biased variance; times gamma[j] when scale, plus beta[j] when center. gamma
 * and beta hold axis_len values (either may be NULL when its flag is off). */
void hgr_ref_layer_norm(const float* x, const float* gamma, const float* beta, float* y, int64_t outer,
                        int64_t axis_len, int64_t inner, double epsilon, bool center, bool scale);

/* batch_norm for inference (Relay) over the channel axis of a tensor viewed as
 * [outer, channels, inner]: (x - moving_mean[c]) / sqrt(moving_var[c] + epsilon),
 * times gamma[c] when scale, plus beta[c] when center. */
void hgr_ref_batch_norm(const float* x, const float* gamma, const float* beta, const float* moving_mean,
                        const float* moving_var, float* y, int64_t outer, int64_t channels, int64_t inner,
                        double epsilon, bool center, bool scale);

/* lrn (ONNX LRN) over the channel axis of x viewed as [outer, channels, inner]:
 * x / (bias + alpha / size * s)^beta, s the sum of squares over the channels
 * [c - floor((size - 1) / 2), c + ceil((size - 1) / 2)] that exist. */
void hgr_ref_lrn(const float* x, float* y, int64_t outer, int64_t channels, int64_t inner, int64_t size,
                 double alpha, double beta, double bias);

/* instance_norm over x viewed as [batch, before, channels, after]: each (n, c) is
 * normalized over its before * after elements with its mean and biased variance,
 * then times gamma[c] when scale, plus beta[c] when center. */
void hgr_ref_instance_norm(const float* x, const float* gamma, const float* beta, float* y, int64_t batch,
                           int64_t before, int64_t channels, int64_t after, double epsilon, bool center, bool scale);

/* Reductions. */
typedef enum hgr_ref_reduce_op_t {
  HGR_REF_SUM,
  HGR_REF_MEAN,
  HGR_REF_MAX,
  HGR_REF_MIN,
  HGR_REF_PROD, /* over zero elements 1; int32 products wrap */
} hgr_ref_reduce_op_t;

/* Which of ndim axes a Relay reduction reduces, into reduced[0..ndim): axes (count
 * values, negatives counting from the end) or every axis when axes is NULL or count
 * is 0 (Relay: absent, None or [] reduce everything, whatever exclude says); with
 * exclude, the axes NOT listed. Returns false when an axis is out of range or listed
 * twice. */
bool hgr_ref_reduce_axes(int32_t ndim, const int64_t* axes, int32_t count, bool exclude, bool* reduced);

/* The output shape of a reduction: the kept dimensions in order, with a 1 for each
 * reduced one when keepdims. Returns its ndim (0 for a scalar). */
int32_t hgr_ref_reduce_shape(int32_t ndim, const int64_t* shape, const bool* reduced, bool keepdims,
                             int64_t* out_shape);

/* Reduces x (shape[ndim]) over the axes where reduced[d]; y gets one value per
 * combination of the kept axes, in row-major order (keepdims changes only the
 * shape). Over zero elements: sum 0, mean NaN, max -inf, min +inf. max and min
 * propagate NaN (any NaN in the group gives NaN). */
void hgr_ref_reduce_f32(hgr_ref_reduce_op_t op, const float* x, int32_t ndim, const int64_t* shape,
                        const bool* reduced, float* y);

/* The same for int32 (op is HGR_REF_SUM, MAX or MIN): sums wrap modulo 2^32; over
 * zero elements sum 0, max INT32_MIN, min INT32_MAX. */
void hgr_ref_reduce_i32(hgr_ref_reduce_op_t op, const int32_t* x, int32_t ndim, const int64_t* shape,
                        const bool* reduced, int32_t* y);

/* argmax (is_max) or argmin over the middle axis of x viewed as [outer, len, inner]
 * (float32, or int32 when is_int), len >= 1: y[o * inner + i] is the index of the
 * extreme, the first of equal ones (the last with select_last); a NaN is the
 * extreme (the first NaN, or the last with select_last), as NumPy's. */
void hgr_ref_arg_reduce(const void* x, bool is_int, int64_t outer, int64_t len, int64_t inner, bool is_max,
                        bool select_last, int32_t* y);

/* topk over the middle axis: the k largest (smallest with ascend) of each row,
 * sorted, equal values by lower index first, NaN above every number; values and
 * indices are [outer, k, inner]. A plain stable sort of each row. */
void hgr_ref_topk(const void* x, bool is_int, int64_t outer, int64_t len, int64_t inner, int64_t k, bool ascend,
                  void* values, int32_t* indices);

#endif /* HGR_TEST_REF_NORM_H_ */
