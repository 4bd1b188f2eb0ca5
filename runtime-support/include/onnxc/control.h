// Helpers for control flow (Loop, Scan): moving slices in and out of loop bodies.
#ifndef ONNXC_CONTROL_H
#define ONNXC_CONTROL_H

#include <cstring>

#include "onnxc/base.h"

namespace onnxc {
namespace rt {

// Slice `t` along an axis of a tensor viewed as [outer, len, inner]: copies it out as a
// contiguous [outer, inner] tensor.
template <class T>
inline void take_slice(const T* x, T* slice, index_t outer, index_t len, index_t inner, index_t t) {
  for (index_t o = 0; o < outer; ++o)
    std::memcpy(static_cast<void*>(slice + o * inner), static_cast<const void*>(x + (o * len + t) * inner),
                sizeof(T) * static_cast<std::size_t>(inner));
}

// The inverse: writes a contiguous [outer, inner] slice into position `t` of [outer, len, inner].
template <class T>
inline void put_slice(const T* slice, T* y, index_t outer, index_t len, index_t inner, index_t t) {
  for (index_t o = 0; o < outer; ++o)
    std::memcpy(static_cast<void*>(y + (o * len + t) * inner), static_cast<const void*>(slice + o * inner),
                sizeof(T) * static_cast<std::size_t>(inner));
}

}  // namespace rt
}  // namespace onnxc

#endif  // ONNXC_CONTROL_H
