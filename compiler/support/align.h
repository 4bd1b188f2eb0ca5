#pragma once

#include <cstddef>

namespace onnxc {

// v rounded up to a multiple of a (a > 0).
inline std::size_t align_up(std::size_t v, std::size_t a) { return (v + a - 1) / a * a; }

}  // namespace onnxc
