#pragma once

#include <cstdint>

#include "onnxc/base.h"

namespace onnxc {

template <class T> struct TypeTag { using type = T; };

template <class F> void dispatch_dtype(const Node& n, DType t, F&& f) {
  switch (t) {
    case DType::Float: return f(TypeTag<float>{});
    case DType::Double: return f(TypeTag<double>{});
    case DType::Float16: return f(TypeTag<rt::float16>{});
    case DType::BFloat16: return f(TypeTag<rt::bfloat16>{});
    case DType::Int8: return f(TypeTag<int8_t>{});
    case DType::Int16: return f(TypeTag<int16_t>{});
    case DType::Int32: return f(TypeTag<int32_t>{});
    case DType::Int64: return f(TypeTag<int64_t>{});
    case DType::Uint8: return f(TypeTag<uint8_t>{});
    case DType::Uint16: return f(TypeTag<uint16_t>{});
    case DType::Uint32: return f(TypeTag<uint32_t>{});
    case DType::Uint64: return f(TypeTag<uint64_t>{});
    case DType::Bool: return f(TypeTag<bool>{});
    default: fail_unsupported(n, "element type " + dtype_name(t) + " is not supported by this operator");
  }
}

}  // namespace onnxc
