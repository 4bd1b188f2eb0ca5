#include "ir/dtype.h"

#include <fmt/format.h>

namespace onnxc {

bool dtype_from_int(int32_t v, DType* out) {
  if (v < 0 || v > static_cast<int32_t>(DType::Int2)) return false;
  *out = static_cast<DType>(v);
  return true;
}

bool dtype_supported(DType t) { return dtype_size(t) != 0; }

std::size_t dtype_size(DType t) {
  switch (t) {
    case DType::Float: return 4;
    case DType::Uint8: return 1;
    case DType::Int8: return 1;
    case DType::Uint16: return 2;
    case DType::Int16: return 2;
    case DType::Int32: return 4;
    case DType::Int64: return 8;
    case DType::Bool: return 1;
    case DType::Float16: return 2;
    case DType::Double: return 8;
    case DType::Uint32: return 4;
    case DType::Uint64: return 8;
    case DType::BFloat16: return 2;
    case DType::Float8E4M3FN:
    case DType::Float8E4M3FNUZ:
    case DType::Float8E5M2:
    case DType::Float8E5M2FNUZ: return 1;
    // A pointer (rt::cstring), given 8 bytes on every target so sizes do not depend on it.
    case DType::String: return 8;
    default: return 0;
  }
}

std::string dtype_name(DType t) {
  switch (t) {
    case DType::Undefined: return "undefined";
    case DType::Float: return "float";
    case DType::Uint8: return "uint8";
    case DType::Int8: return "int8";
    case DType::Uint16: return "uint16";
    case DType::Int16: return "int16";
    case DType::Int32: return "int32";
    case DType::Int64: return "int64";
    case DType::String: return "string";
    case DType::Bool: return "bool";
    case DType::Float16: return "float16";
    case DType::Double: return "double";
    case DType::Uint32: return "uint32";
    case DType::Uint64: return "uint64";
    case DType::Complex64: return "complex64";
    case DType::Complex128: return "complex128";
    case DType::BFloat16: return "bfloat16";
    case DType::Float8E4M3FN: return "float8e4m3fn";
    case DType::Float8E4M3FNUZ: return "float8e4m3fnuz";
    case DType::Float8E5M2: return "float8e5m2";
    case DType::Float8E5M2FNUZ: return "float8e5m2fnuz";
    case DType::Uint4: return "uint4";
    case DType::Int4: return "int4";
    case DType::Float4E2M1: return "float4e2m1";
    case DType::Float8E8M0: return "float8e8m0";
    case DType::Uint2: return "uint2";
    case DType::Int2: return "int2";
  }
  return fmt::format("dtype({})", static_cast<int>(t));
}

std::string dtype_ctype(DType t) {
  switch (t) {
    case DType::Float: return "float";
    case DType::Uint8: return "std::uint8_t";
    case DType::Int8: return "std::int8_t";
    case DType::Uint16: return "std::uint16_t";
    case DType::Int16: return "std::int16_t";
    case DType::Int32: return "std::int32_t";
    case DType::Int64: return "std::int64_t";
    case DType::Bool: return "bool";
    case DType::Float16: return "onnxc::rt::float16";
    case DType::Double: return "double";
    case DType::Uint32: return "std::uint32_t";
    case DType::Uint64: return "std::uint64_t";
    case DType::BFloat16: return "onnxc::rt::bfloat16";
    case DType::Float8E4M3FN: return "onnxc::rt::float8e4m3fn";
    case DType::Float8E4M3FNUZ: return "onnxc::rt::float8e4m3fnuz";
    case DType::Float8E5M2: return "onnxc::rt::float8e5m2";
    case DType::Float8E5M2FNUZ: return "onnxc::rt::float8e5m2fnuz";
    case DType::String: return "onnxc::rt::cstring";
    default: return "void";
  }
}

bool dtype_is_float(DType t) {
  return t == DType::Float || t == DType::Double || t == DType::Float16 || t == DType::BFloat16;
}

bool dtype_is_float8(DType t) {
  return t == DType::Float8E4M3FN || t == DType::Float8E4M3FNUZ || t == DType::Float8E5M2 || t == DType::Float8E5M2FNUZ;
}

bool dtype_is_integer(DType t) {
  switch (t) {
    case DType::Uint8: case DType::Int8: case DType::Uint16: case DType::Int16:
    case DType::Int32: case DType::Int64: case DType::Uint32: case DType::Uint64:
      return true;
    default:
      return false;
  }
}

bool dtype_is_signed(DType t) {
  return t == DType::Int8 || t == DType::Int16 || t == DType::Int32 || t == DType::Int64 ||
         dtype_is_float(t);
}

}  // namespace onnxc
