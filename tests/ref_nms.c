#include "ref_nms.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

int64_t hgr_ref_nms_capacity(const hgr_ref_nms_t* c) {
  int64_t keep = c->max_output_boxes_per_class < c->boxes ? c->max_output_boxes_per_class : c->boxes;
  int64_t rows = c->batch * c->classes * keep;
  return rows ? rows : 1;
}

typedef struct corners_t {
  float x_min, y_min, x_max, y_max;
} corners_t;

/* ONNX Runtime's MaxMin: min and max of a pair (lhs >= rhs decides, NaN too). */
static void max_min(float lhs, float rhs, float* min, float* max) {
  if (lhs >= rhs) {
    *min = rhs, *max = lhs;
  } else {
    *min = lhs, *max = rhs;
  }
}

static corners_t corners_of(const float* box, bool center_point_box) {
  corners_t c;
  if (center_point_box) {
    float half_width = box[2] / 2, half_height = box[3] / 2;
    c.x_min = box[0] - half_width, c.x_max = box[0] + half_width;
    c.y_min = box[1] - half_height, c.y_max = box[1] + half_height;
  } else {
    max_min(box[1], box[3], &c.x_min, &c.x_max);
    max_min(box[0], box[2], &c.y_min, &c.y_max);
  }
  return c;
}

/* std::max and std::min. */
static float max_of(float a, float b) { return a < b ? b : a; }
static float min_of(float a, float b) { return b < a ? b : a; }

/* SuppressByIOU(candidate a, selected b). */
static bool suppresses(corners_t a, corners_t b, float iou_threshold) {
  float x_min = max_of(a.x_min, b.x_min), x_max = min_of(a.x_max, b.x_max);
  if (x_max <= x_min) return false;
  float y_min = max_of(a.y_min, b.y_min), y_max = min_of(a.y_max, b.y_max);
  if (y_max <= y_min) return false;
  float intersection = (x_max - x_min) * (y_max - y_min);
  if (intersection <= 0.0f) return false;
  float area_a = (a.x_max - a.x_min) * (a.y_max - a.y_min);
  float area_b = (b.x_max - b.x_min) * (b.y_max - b.y_min);
  float union_area = area_a + area_b - intersection;
  if (area_a <= 0.0f || area_b <= 0.0f || union_area <= 0.0f) return false;
  return intersection / union_area > iou_threshold;
}

typedef struct candidate_t {
  float score;
  int64_t index;
} candidate_t;

/* Descending score, then ascending index (ONNX Runtime's BoxInfo order). */
static int by_score(const void* pa, const void* pb) {
  const candidate_t* a = pa;
  const candidate_t* b = pb;
  if (a->score != b->score) return a->score > b->score ? -1 : 1;
  return a->index < b->index ? -1 : a->index > b->index;
}

int64_t hgr_ref_nms(const hgr_ref_nms_t* c, int32_t* selected) {
  int64_t capacity = hgr_ref_nms_capacity(c), count = 0;
  memset(selected, 0, (size_t)capacity * 3 * sizeof(int32_t));
  candidate_t* candidates = malloc(((size_t)c->boxes + 1) * sizeof(candidate_t));
  corners_t* taken = malloc(((size_t)c->boxes + 1) * sizeof(corners_t));
  if (!candidates || !taken) abort();
  for (int64_t b = 0; b < c->batch; ++b)
    for (int64_t k = 0; k < c->classes; ++k) {
      const float* scores = c->score_data + (b * c->classes + k) * c->boxes;
      const float* boxes = c->box_data + b * c->boxes * 4;
      int64_t candidate_count = 0, taken_count = 0;
      for (int64_t i = 0; i < c->boxes; ++i) {
        bool candidate = c->has_score_threshold ? scores[i] > c->score_threshold : !isnan(scores[i]);
        if (candidate) candidates[candidate_count++] = (candidate_t){scores[i], i};
      }
      qsort(candidates, (size_t)candidate_count, sizeof(candidate_t), by_score);
      for (int64_t i = 0; i < candidate_count && taken_count < c->max_output_boxes_per_class; ++i) {
        corners_t box = corners_of(boxes + candidates[i].index * 4, c->center_point_box);
        bool keep = true;
        for (int64_t s = 0; s < taken_count && keep; ++s) keep = !suppresses(box, taken[s], c->iou_threshold);
        if (!keep) continue;
        taken[taken_count++] = box;
        int32_t* row = selected + 3 * count++;
        row[0] = (int32_t)b, row[1] = (int32_t)k, row[2] = (int32_t)candidates[i].index;
      }
    }
  free(candidates);
  free(taken);
  return count;
}
