// One element of a constant as a C++ expression of a given element type, for emitters that
// bake fill values, pad values and range bounds into the generated code.
#pragma once

#include <string>

#include "ir/ir.h"

namespace onnxc {

// Element i of `value`, converted to element type `t` ("1.5f", "onnxc::rt::float16{0x3c00}",
// "static_cast<std::int32_t>(-3)", ...). 16-bit floats keep their exact bits when `value`
// already has type t.
std::string scalar_literal(DType t, const Tensor& value, int64_t i = 0);

}  // namespace onnxc
