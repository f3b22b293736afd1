/* Plain-C reference of ONNX's NonMaxSuppression (runtime/ops/ops_nms.c), written
 * after ONNX Runtime's CPU kernel (onnxruntime/core/providers/cpu/object_detection/
 * non_max_suppression.cc and nms_helpers.h) and computed as it computes: in float.
 *
 * boxes [B, N, 4] ([y1, x1, y2, x2], any diagonal pair of corners; with
 * center_point_box [x_center, y_center, width, height]), scores [B, C, N].
 * For every batch, then class, the candidates (score > score_threshold when
 * has_score_threshold, else every score but NaN) in descending order of score,
 * equal scores by ascending box index, each taken unless its IoU with a box
 * already taken for the batch and class is > iou_threshold, until
 * max_output_boxes_per_class are taken. IoU is ONNX Runtime's SuppressByIOU: no
 * suppression where the intersection, either area or the union is <= 0. */
#ifndef HGR_TEST_REF_NMS_H_
#define HGR_TEST_REF_NMS_H_

#include <stdbool.h>
#include <stdint.h>

typedef struct hgr_ref_nms_t {
  int64_t batch, classes, boxes;
  const float* box_data;   /* [batch, boxes, 4] */
  const float* score_data; /* [batch, classes, boxes] */
  bool center_point_box;
  int64_t max_output_boxes_per_class; /* >= 0 */
  float iou_threshold;
  bool has_score_threshold;
  float score_threshold;
} hgr_ref_nms_t;

/* The op's capacity: max(1, batch x classes x min(max_output_boxes_per_class, boxes)). */
int64_t hgr_ref_nms_capacity(const hgr_ref_nms_t* c);

/* Writes the selected (batch, class, box) rows into selected ([capacity, 3], the rows
 * past the count zeroed) and returns the count. */
int64_t hgr_ref_nms(const hgr_ref_nms_t* c, int32_t* selected);

#endif /* HGR_TEST_REF_NMS_H_ */
