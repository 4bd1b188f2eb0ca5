// Element types of ONNX tensors, numbered as TensorProto.DataType.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

namespace onnxc {

enum class DType : int32_t {
  Undefined = 0,
  Float = 1,
  Uint8 = 2,
  Int8 = 3,
  Uint16 = 4,
  Int16 = 5,
  Int32 = 6,
  Int64 = 7,
  String = 8,
  Bool = 9,
  Float16 = 10,
  Double = 11,
  Uint32 = 12,
  Uint64 = 13,
  Complex64 = 14,
  Complex128 = 15,
  BFloat16 = 16,
  Float8E4M3FN = 17,
  Float8E4M3FNUZ = 18,
  Float8E5M2 = 19,
  Float8E5M2FNUZ = 20,
  Uint4 = 21,
  Int4 = 22,
  Float4E2M1 = 23,
  Float8E8M0 = 24,
  Uint2 = 25,
  Int2 = 26,
};

// True for the types generated code can hold in memory today.
bool dtype_supported(DType t);
// Bytes one element occupies in generated code (bool: 1; string: an 8-byte pointer slot, see
// Value::text_bytes). 0 for unsupported types.
std::size_t dtype_size(DType t);
// The ONNX name, e.g. "float", "int64", "bfloat16"; "dtype(N)" for unknown numbers.
std::string dtype_name(DType t);
// The C++ element type generated code uses, e.g. "float", "std::int64_t", "onnxc::rt::float16",
// "onnxc::rt::cstring" (const char*).
std::string dtype_ctype(DType t);
// Maps a raw TensorProto.DataType number; returns false for numbers no ONNX version defines.
bool dtype_from_int(int32_t v, DType* out);

bool dtype_is_float(DType t);    // float, double, float16, bfloat16
bool dtype_is_integer(DType t);  // signed or unsigned integers (not bool)
bool dtype_is_signed(DType t);
bool dtype_is_float8(DType t);   // the four 8-bit floats of opset 19

}  // namespace onnxc
