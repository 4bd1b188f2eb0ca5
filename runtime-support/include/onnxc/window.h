// Sliding-window geometry shared by the row kernels of conv.h and pool.h.
#ifndef ONNXC_WINDOW_H
#define ONNXC_WINDOW_H

#include "onnxc/base.h"

namespace onnxc {
namespace rt {

// The output columns [lo, hi) whose tap at input column `ow * stride + offset` lies inside an
// input row of in_w columns (the others fall in the padding).
struct ColumnRange {
  index_t lo, hi;
};

inline ColumnRange columns_inside(index_t offset, index_t stride, index_t in_w, index_t out_w) {
  const index_t lo = offset >= 0 ? 0 : (-offset + stride - 1) / stride;
  index_t hi = in_w - offset <= 0 ? 0 : (in_w - offset + stride - 1) / stride;
  if (hi > out_w) hi = out_w;
  return {lo, hi < lo ? lo : hi};
}

}  // namespace rt
}  // namespace onnxc

#endif  // ONNXC_WINDOW_H
