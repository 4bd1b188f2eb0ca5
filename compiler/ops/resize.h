// What lower-qdq asks of Resize (compiler/ops/resize.cpp).
#pragma once

#include <string>

#include "ir/ir.h"

namespace onnxc {

// Why DequantizeLinear -> `resize` -> QuantizeLinear (a Resize or Upsample whose shapes are
// inferred; the input's scale over the output's `scale_ratio`) has no onnxc.QLinearResize form,
// or empty when it has one.
std::string integer_resize_refusal(const Node& resize, double scale_ratio);

}  // namespace onnxc
