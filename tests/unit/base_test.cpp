#include <catch2/catch.hpp>

#include <cmath>
#include <limits>

#include "onnxc/base.h"
#include "support/names.h"

using namespace onnxc::rt;

TEST_CASE("float16 conversion matches IEEE binary16 bit patterns") {
  CHECK(float_to_half(1.0f) == 0x3c00);
  CHECK(float_to_half(-2.0f) == 0xc000);
  CHECK(float_to_half(65504.0f) == 0x7bff);   // largest finite half
  CHECK(float_to_half(65520.0f) == 0x7c00);   // rounds to infinity
  CHECK(float_to_half(0.1f) == 0x2e66);
  CHECK(float_to_half(5.9604645e-8f) == 0x0001);  // smallest subnormal
  CHECK(float_to_half(2.9e-8f) == 0x0000);        // below half of it
  CHECK(float_to_half(std::numeric_limits<float>::infinity()) == 0x7c00);
  CHECK((float_to_half(std::numeric_limits<float>::quiet_NaN()) & 0x7c00) == 0x7c00);
  CHECK(half_to_float(0x3c00) == 1.0f);
  CHECK(half_to_float(0x0001) == 5.9604645e-8f);
  CHECK(half_to_float(0x7bff) == 65504.0f);
  CHECK(std::isnan(half_to_float(0x7e00)));
}

TEST_CASE("float16 round trip is exact for every finite half") {
  for (unsigned h = 0; h < 0x10000; ++h) {
    if ((h & 0x7c00) == 0x7c00) continue;  // inf/nan
    CHECK(float_to_half(half_to_float(static_cast<std::uint16_t>(h))) == h);
  }
}

TEST_CASE("8-bit floats: the operator text's values at the ends of each format (hand-checked)") {
  using E4M3FN = float8_format<float8e4m3fn>::type;
  using E4M3FNUZ = float8_format<float8e4m3fnuz>::type;
  using E5M2 = float8_format<float8e5m2>::type;
  using E5M2FNUZ = float8_format<float8e5m2fnuz>::type;
  const float inf = std::numeric_limits<float>::infinity();
  // E4M3FN: 448 = S.1111.110 is the largest; 480 would be S.1111.111, which is NaN.
  CHECK(float_to_float8<E4M3FN>(448.0f, false) == 0x7e);
  CHECK(float_to_float8<E4M3FN>(464.0f, false) == 0x7e);   // tie: to the even 448
  CHECK(float_to_float8<E4M3FN>(480.0f, false) == 0x7f);   // beyond: NaN (ONNX Runtime 1.30: 448)
  CHECK(float_to_float8<E4M3FN>(480.0f, true) == 0x7e);
  CHECK(float_to_float8<E4M3FN>(-inf, true) == 0xfe);
  CHECK(float_to_float8<E4M3FN>(0x1p-9f, true) == 0x01);   // smallest subnormal
  CHECK(float_to_float8<E4M3FN>(0x1p-10f, true) == 0x00);  // tie: to zero
  CHECK(float_to_float8<E4M3FN>(-0.0f, true) == 0x80);
  // E5M2: 57344 = S.11110.11 is the largest; 61440 ties between it and 65536 (infinity).
  CHECK(float_to_float8<E5M2>(61440.0f, false) == 0x7c);   // infinity (ONNX Runtime 1.30: NaN)
  CHECK(float_to_float8<E5M2>(61440.0f, true) == 0x7b);
  CHECK(float_to_float8<E5M2>(inf, false) == 0x7c);
  CHECK(float_to_float8<E5M2>(0x1p-16f, true) == 0x01);
  // FNUZ: one NaN (0x80), no negative zero, bias 8 / 16.
  CHECK(float_to_float8<E4M3FNUZ>(240.0f, false) == 0x7f);
  CHECK(float_to_float8<E4M3FNUZ>(248.0f, false) == 0x80);
  CHECK(float_to_float8<E4M3FNUZ>(-0.0f, true) == 0x00);
  CHECK(float_to_float8<E5M2FNUZ>(0x1p-17f, true) == 0x01);
  CHECK(float_to_float8<E5M2FNUZ>(-inf, true) == 0xff);
  CHECK(std::isnan(float8_to_float<E4M3FN>(0xff)));
  CHECK(std::isnan(float8_to_float<E4M3FNUZ>(0x80)));
  CHECK(float8_to_float<E5M2>(0xfc) == -inf);
  CHECK(float8_to_float<E5M2FNUZ>(0x7f) == 57344.0f);
}

TEST_CASE("8-bit floats: every value survives the round trip through float") {
  auto round_trip = [](auto format, unsigned nan_code_a, unsigned nan_code_b) {
    using Format = decltype(format);
    for (unsigned b = 0; b < 0x100; ++b) {
      if (b == nan_code_a || b == nan_code_b) continue;
      const float f = float8_to_float<Format>(static_cast<std::uint8_t>(b));
      if (std::isnan(f) || std::isinf(f)) continue;
      CHECK(float_to_float8<Format>(f, false) == b);
    }
  };
  round_trip(float8_format<float8e4m3fn>::type{}, 0x7f, 0xff);
  round_trip(float8_format<float8e4m3fnuz>::type{}, 0x80, 0x80);
  round_trip(float8_format<float8e5m2>::type{}, 0x100, 0x100);
  round_trip(float8_format<float8e5m2fnuz>::type{}, 0x80, 0x80);
}

TEST_CASE("bfloat16 rounds to nearest even") {
  CHECK(float_to_bfloat16(1.0f) == 0x3f80);
  CHECK(float_to_bfloat16(bits_to_float(0x3f808000u)) == 0x3f80);  // tie, even stays
  CHECK(float_to_bfloat16(bits_to_float(0x3f818000u)) == 0x3f82);  // tie, odd rounds up
  CHECK(float_to_bfloat16(bits_to_float(0x3f808001u)) == 0x3f81);
  CHECK(bfloat16_to_float(0x3f80) == 1.0f);
}

TEST_CASE("ONNX names become readable, unique C++ identifiers") {
  CHECK(onnxc::sanitize_identifier("/f/f.0/Conv_output_0") == "f_f_0_Conv_output_0");
  CHECK(onnxc::sanitize_identifier("0") == "v0");
  CHECK(onnxc::sanitize_identifier("a::b") == "a_b");
  onnxc::IdentifierPool pool;
  CHECK(pool.make("", "input") == "input");
  CHECK(pool.make("", "input") == "input_2");
  CHECK(pool.make("", "float") == "float_2");  // keywords are never used
  CHECK(pool.make("t_", "x.y") == "t_x_y");
}
