// NonMaxSuppression: per batch and class, the boxes kept by greedy suppression in decreasing
// score order; a bounded output (how many are kept is known only at run time).
#ifndef ONNXC_NMS_H
#define ONNXC_NMS_H

#include <algorithm>
#include <cstdint>

#include "onnxc/base.h"

namespace onnxc {
namespace rt {

struct NmsParams {
  index_t batches, classes, boxes;
  bool center_point_box;  // boxes are [x_center, y_center, width, height], else [y1, x1, y2, x2]
};

namespace detail {

// A box as its extent on each axis, whichever corners the model gave.
struct NmsBox {
  float y_min, x_min, y_max, x_max;
};

template <class T> inline NmsBox nms_box(const T* b, bool center_point_box) {
  const float v0 = load(b[0]), v1 = load(b[1]), v2 = load(b[2]), v3 = load(b[3]);
  if (center_point_box) return {v1 - v3 / 2, v0 - v2 / 2, v1 + v3 / 2, v0 + v2 / 2};
  return {std::min(v0, v2), std::min(v1, v3), std::max(v0, v2), std::max(v1, v3)};
}

// Whether b suppresses a: their intersection over union exceeds the threshold. Boxes without
// area overlap nothing.
inline bool nms_suppresses(const NmsBox& a, const NmsBox& b, float iou_threshold) {
  const float y_min = std::max(a.y_min, b.y_min), y_max = std::min(a.y_max, b.y_max);
  const float x_min = std::max(a.x_min, b.x_min), x_max = std::min(a.x_max, b.x_max);
  if (y_max <= y_min || x_max <= x_min) return false;
  const float area_a = (a.y_max - a.y_min) * (a.x_max - a.x_min);
  const float area_b = (b.y_max - b.y_min) * (b.x_max - b.x_min);
  if (area_a <= 0 || area_b <= 0) return false;
  const float intersection = (y_max - y_min) * (x_max - x_min);
  const float union_area = area_a + area_b - intersection;
  return union_area > 0 && intersection / union_area > iou_threshold;
}

}  // namespace detail

// boxes is [batches, boxes, 4], scores [batches, classes, boxes]. For each batch and class, the
// boxes scoring above score_threshold (all when it is null) are taken best first (equal scores:
// lower index first); one is kept unless a kept box overlaps it with IoU above iou_threshold
// (0 when null), up to max_per_class (none when null or <= 0) boxes. Writes the kept boxes as
// [k, 3] rows (batch, class, box) and returns k. `scratch` holds 2 * boxes index_t.
template <class T>
inline index_t non_max_suppression(const NmsParams& p, const T* boxes, const T* scores, const std::int64_t* max_per_class,
                                   const T* iou_threshold, const T* score_threshold, std::int64_t* selected,
                                   index_t* scratch) {
  const std::int64_t limit = max_per_class ? std::min<std::int64_t>(max_per_class[0], p.boxes) : 0;
  const float iou = iou_threshold ? static_cast<float>(load(iou_threshold[0])) : 0.0f;
  index_t* candidates = scratch;
  index_t* kept = scratch + p.boxes;
  index_t k = 0;
  for (index_t b = 0; b < p.batches && limit > 0; ++b)
    for (index_t c = 0; c < p.classes; ++c) {
      const T* s = scores + (b * p.classes + c) * p.boxes;
      index_t count = 0;
      for (index_t i = 0; i < p.boxes; ++i)
        if (!score_threshold || load(s[i]) > load(score_threshold[0])) candidates[count++] = i;
      std::sort(candidates, candidates + count, [s](index_t x, index_t y) {
        const float sx = load(s[x]), sy = load(s[y]);
        return sx > sy || (sx == sy && x < y);
      });
      index_t kept_count = 0;
      for (index_t j = 0; j < count && kept_count < limit; ++j) {
        const detail::NmsBox box = detail::nms_box(boxes + (b * p.boxes + candidates[j]) * 4, p.center_point_box);
        bool suppressed = false;
        for (index_t m = 0; m < kept_count && !suppressed; ++m)
          suppressed = detail::nms_suppresses(
              box, detail::nms_box(boxes + (b * p.boxes + kept[m]) * 4, p.center_point_box), iou);
        if (suppressed) continue;
        kept[kept_count++] = candidates[j];
        selected[k * 3 + 0] = static_cast<std::int64_t>(b);
        selected[k * 3 + 1] = static_cast<std::int64_t>(c);
        selected[k * 3 + 2] = static_cast<std::int64_t>(candidates[j]);
        ++k;
      }
    }
  return k;
}

}  // namespace rt
}  // namespace onnxc

#endif  // ONNXC_NMS_H
