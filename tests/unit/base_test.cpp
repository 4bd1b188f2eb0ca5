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
