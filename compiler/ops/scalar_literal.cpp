#include "ops/scalar_literal.h"

#include <cstdint>
#include <cstring>

#include <fmt/format.h>

#include "onnxc/base.h"
#include "ops/emitter.h"

namespace onnxc {

std::string scalar_literal(DType t, const Tensor& value, int64_t i) {
  switch (t) {
    case DType::Float: return float_literal(static_cast<float>(value.float_at(i)));
    case DType::Double: return double_literal(value.float_at(i));
    case DType::Float16:
    case DType::BFloat16: {
      // Keep the stored bits exactly when the constant already has this type.
      uint16_t bits = 0;
      if (value.dtype == t) {
        std::memcpy(&bits, value.bytes.data() + 2 * i, 2);
      } else {
        float f = static_cast<float>(value.float_at(i));
        bits = t == DType::Float16 ? rt::float_to_half(f) : rt::float_to_bfloat16(f);
      }
      return fmt::format("{}{{0x{:04x}}}", dtype_ctype(t), bits);
    }
    case DType::Bool: return value.int_at(i) ? "true" : "false";
    case DType::Uint64: return fmt::format("static_cast<std::uint64_t>({}ull)", static_cast<uint64_t>(value.int_at(i)));
    case DType::Int64: {
      int64_t v = value.int_at(i);
      // INT64_MIN has no literal form; write it as an expression.
      if (v == INT64_MIN) return "(-9223372036854775807ll - 1)";
      return fmt::format("static_cast<std::int64_t>({}ll)", v);
    }
    default: return fmt::format("static_cast<{}>({})", dtype_ctype(t), value.int_at(i));
  }
}

}  // namespace onnxc
