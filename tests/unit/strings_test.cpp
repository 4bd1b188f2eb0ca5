// The string kernels (onnxc/strings.h): float <-> text against hand-computed values (numpy's
// str() of a float32 for the text, the nearest float for the parse), and StringNormalizer's
// text storage running out.
#include <catch2/catch.hpp>

#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "model_builder.h"
#include "compile_helpers.h"
#include "onnxc/strings.h"
#include "passes/pipeline.h"

using namespace onnxc;

namespace {

std::string text_of(float v) {
  char s[rt::kNumberTextBytes];
  const rt::index_t n = rt::format_float(v, s);
  REQUIRE(n < rt::kNumberTextBytes);
  REQUIRE(static_cast<std::size_t>(n) == std::string(s).size());
  return s;
}

std::uint32_t parsed_bits(const char* s) { return rt::float_to_bits(rt::parse_float(s)); }

}  // namespace

TEST_CASE("format_float writes the shortest round-trip decimal as numpy's str of a float32", "[strings]") {
  CHECK(text_of(0.1f) == "0.1");
  CHECK(text_of(1.0f) == "1.0");
  CHECK(text_of(100.5f) == "100.5");
  CHECK(text_of(0.9767611f) == "0.9767611");
  CHECK(text_of(0.039187793f) == "0.039187793");  // the ONNX test data's
  CHECK(text_of(16777216.0f) == "16777216.0");
  CHECK(text_of(9999999e9f) == "9999999000000000.0");  // the float below 1e16f: the longest positional text
  CHECK(text_of(-0.0f) == "-0.0");
  CHECK(text_of(0.0f) == "0.0");
  // Scientific outside [1e-4, 1e16): float(1e-4) is just below 1e-4, float(1e16) just above.
  CHECK(text_of(1e-4f) == "1e-04");
  CHECK(text_of(1e16f) == "1e+16");
  CHECK(text_of(rt::bits_to_float(0x38d1b718u)) == "0.000100000005");  // the next float up from 1e-4f
  CHECK(text_of(1.5e-7f) == "1.5e-07");
  CHECK(text_of(3e20f) == "3e+20");
  CHECK(text_of(std::numeric_limits<float>::max()) == "3.4028235e+38");
  CHECK(text_of(std::numeric_limits<float>::min()) == "1.1754944e-38");
  // Denormals: the smallest is 1.4e-45, the shortest text that reads back to it is "1e-45".
  CHECK(text_of(std::numeric_limits<float>::denorm_min()) == "1e-45");
  CHECK(text_of(3 * std::numeric_limits<float>::denorm_min()) == "4e-45");
  CHECK(text_of(std::numeric_limits<float>::quiet_NaN()) == "nan");
  CHECK(text_of(std::numeric_limits<float>::infinity()) == "inf");
  CHECK(text_of(-std::numeric_limits<float>::infinity()) == "-inf");
}

TEST_CASE("parse_float rounds decimals to the nearest float, ties to even", "[strings]") {
  CHECK(parsed_bits("0.47892547") == rt::float_to_bits(0.47892547f));
  CHECK(parsed_bits("1E8") == rt::float_to_bits(1e8f));
  CHECK(parsed_bits("-1e-5") == rt::float_to_bits(-1e-5f));
  CHECK(parsed_bits(".5") == rt::float_to_bits(0.5f));
  CHECK(parsed_bits("+100.") == rt::float_to_bits(100.0f));
  CHECK(parsed_bits("0.000") == 0u);
  CHECK(parsed_bits("-0") == 0x80000000u);
  // 1 + 2^-24 is the midpoint between 1 and the next float (1 + 2^-23): to even, 1.
  CHECK(parsed_bits("1.000000059604644775390625") == 0x3f800000u);
  CHECK(parsed_bits("1.0000000596046447753906250000000000001") == 0x3f800001u);
  CHECK(parsed_bits("1.000000059604644775390624999") == 0x3f800000u);
  // 2^-150, half the smallest denormal: a tie, to even (zero); a hair more gives the denormal.
  CHECK(parsed_bits("7.00649232162408535461864791644958065640130970938257885878534141944895541342930300743319094181060791015625e-46") == 0u);
  CHECK(parsed_bits("7.0064923216240854e-46") == 1u);
  CHECK(parsed_bits("1e-50") == 0u);
  // 2^128 - 2^103 is the midpoint above the largest float: a tie, to even (infinity).
  CHECK(parsed_bits("340282356779733661637539395458142568448") == 0x7f800000u);
  CHECK(parsed_bits("340282356779733661637539395458142568447") == 0x7f7fffffu);
  CHECK(parsed_bits("1e39") == 0x7f800000u);
}

TEST_CASE("parse_float reads the special values in any case and anything else as NaN", "[strings]") {
  const float inf = std::numeric_limits<float>::infinity();
  CHECK(rt::parse_float("INF") == inf);
  CHECK(rt::parse_float("+INF") == inf);
  CHECK(rt::parse_float("-inf") == -inf);
  CHECK(rt::parse_float("Infinity") == inf);
  CHECK(std::isnan(rt::parse_float("NaN")));
  CHECK(std::isnan(rt::parse_float("nan")));
  for (const char* junk : {"", "abc", "1e", "1.2.3", "--1", "1 ", "."}) CHECK(std::isnan(rt::parse_float(junk)));
  CHECK(std::isnan(rt::parse_float(nullptr)));
}

TEST_CASE("float text round-trips for every exponent", "[strings]") {
  // One float per binade and a few mantissas each, denormals included.
  for (std::uint32_t exponent = 0; exponent < 255; ++exponent)
    for (std::uint32_t mantissa : {0x000001u, 0x2aaaaau, 0x400000u, 0x7fffffu}) {
      const std::uint32_t bits = exponent << 23 | mantissa;
      char s[rt::kNumberTextBytes];
      rt::format_float(rt::bits_to_float(bits), s);
      INFO(s);
      CHECK(parsed_bits(s) == bits);
    }
}

TEST_CASE("format_integer writes the extremes", "[strings]") {
  char s[rt::kNumberTextBytes];
  rt::format_integer(std::numeric_limits<std::int64_t>::min(), s);
  CHECK(std::string(s) == "-9223372036854775808");
  rt::format_integer(std::numeric_limits<std::uint64_t>::max(), s);
  CHECK(std::string(s) == "18446744073709551615");
  rt::format_integer(std::int8_t{-7}, s);
  CHECK(std::string(s) == "-7");
  rt::format_integer(0, s);
  CHECK(std::string(s) == "0");
}

TEST_CASE("string_normalize drops stopwords and changes case into its text storage", "[strings]") {
  const rt::cstring x[] = {"Monday", "tuesday", "MONDAY", "Wednesday"};
  const rt::cstring stopwords[] = {"monday"};
  rt::cstring y[4] = {};
  char text[64];
  const rt::StringNormalizerParams upper_insensitive{stopwords, 1, false, rt::CaseChange::Upper};
  REQUIRE(rt::string_normalize(x, 4, upper_insensitive, y, text, sizeof text) == 2);
  CHECK(std::string(y[0]) == "TUESDAY");
  CHECK(std::string(y[1]) == "WEDNESDAY");

  // Case-sensitive without a case change: "Monday" is no stopword, and the kept strings are the
  // input's own.
  const rt::cstring days[] = {"monday", "Monday", "friday"};
  const rt::StringNormalizerParams keep{stopwords, 1, true, rt::CaseChange::None};
  REQUIRE(rt::string_normalize(days, 3, keep, y, nullptr, 0) == 2);
  CHECK(y[0] == days[1]);
  CHECK(y[1] == days[2]);

  // Only stopwords: one empty string.
  REQUIRE(rt::string_normalize(x, 1, upper_insensitive, y, text, sizeof text) == 1);
  CHECK(std::string(y[0]).empty());
}

TEST_CASE("string_normalize makes a string that does not fit a null pointer, never a truncated one", "[strings]") {
  const rt::cstring x[] = {"abc", "defghij", "k", nullptr};
  rt::cstring y[4] = {};
  char text[7];  // "ABC\0" fits, "DEFGHIJ\0" does not, "K\0" does
  const rt::StringNormalizerParams upper{nullptr, 0, true, rt::CaseChange::Upper};
  REQUIRE(rt::string_normalize(x, 4, upper, y, text, sizeof text) == 4);
  CHECK(std::string(y[0]) == "ABC");
  CHECK(y[1] == nullptr);
  CHECK(std::string(y[2]) == "K");
  CHECK(y[3] == nullptr);  // a null input string stays null
}

TEST_CASE("string_normalize with text storage copies the strings it keeps", "[strings]") {
  const rt::cstring x[] = {"keep", "drop"};
  const rt::cstring stopwords[] = {"drop"};
  rt::cstring y[2] = {};
  char text[16];
  const rt::StringNormalizerParams keep{stopwords, 1, true, rt::CaseChange::None};
  REQUIRE(rt::string_normalize(x, 2, keep, y, text, sizeof text) == 1);
  CHECK(y[0] == text);
  CHECK(std::string(y[0]) == "keep");
}

TEST_CASE("copy_strings copies text into its storage, or keeps the pointers without one", "[strings]") {
  const rt::cstring x[] = {"ab", "cdef", nullptr};
  rt::cstring y[3] = {};
  char text[6];  // "ab\0" fits, "cdef\0" does not
  rt::copy_strings(x, y, 3, text, sizeof text);
  CHECK(y[0] == text);
  CHECK(std::string(y[0]) == "ab");
  CHECK(y[1] == nullptr);
  CHECK(y[2] == nullptr);
  rt::copy_strings(x, y, 3, nullptr, 0);
  CHECK(y[1] == x[1]);
}

// ---- through the compiler ----

namespace {

using testing::ModelBuilder;

void attr_string(onnx::NodeProto& n, const std::string& name, const std::string& s) {
  auto* a = n.add_attribute();
  a->set_name(name);
  a->set_type(onnx::AttributeProto::STRING);
  a->set_s(s);
}

void attr_strings(onnx::NodeProto& n, const std::string& name, const std::vector<std::string>& v) {
  auto* a = n.add_attribute();
  a->set_name(name);
  a->set_type(onnx::AttributeProto::STRINGS);
  for (const std::string& s : v) a->add_strings(s);
}

const Value& output_value(const Compilation& c, std::size_t i) { return *c.model.graph.outputs.at(i); }

}  // namespace

TEST_CASE("a case change gets --string-bytes of text storage per element after its pointers", "[strings]") {
  ModelBuilder b(10);
  b.input("x", {3}, onnx::TensorProto::STRING).output("y", {3}, onnx::TensorProto::STRING);
  attr_string(b.node("StringNormalizer", {"x"}, {"y"}), "case_change_action", "LOWER");
  CompileOptions o;
  o.string_bytes = 5;
  Compilation c = compile_model(b.write("strings_case"), o);
  CHECK(output_value(c, 0).byte_size() == 3 * 8 + 3 * 5);
  // Without a case change the output points to the input's text: pointers only.
  ModelBuilder plain(10);
  plain.input("x", {3}, onnx::TensorProto::STRING).output("y", {3}, onnx::TensorProto::STRING);
  plain.node("StringNormalizer", {"x"}, {"y"});
  CHECK(output_value(compile_model(plain.write("strings_plain"), o), 0).byte_size() == 3 * 8);
}

TEST_CASE("text kept from run-time text is copied into as much storage as it came from", "[strings]") {
  ModelBuilder b(13);
  b.input("x", {2}).output("y", {2}, onnx::TensorProto::STRING);
  ModelBuilder::attr_int(b.node("Cast", {"x"}, {"text"}), "to", onnx::TensorProto::STRING);
  b.node("StringNormalizer", {"text"}, {"y"});
  Compilation c = compile_model(b.write("strings_copy"), {});
  CHECK(output_value(c, 0).byte_size() == 2 * 8 + 2 * static_cast<std::size_t>(rt::kNumberTextBytes));
}

TEST_CASE("operators that would copy pointers to run-time text are refused", "[strings]") {
  ModelBuilder b(13);
  b.input("x", {2}).output("y", {2}, onnx::TensorProto::STRING);
  ModelBuilder::attr_int(b.node("Cast", {"x"}, {"text"}), "to", onnx::TensorProto::STRING);
  b.node("Identity", {"text"}, {"y"}, "copy");
  const std::string error = testing::compile_error(b.write("strings_dangling"));
  CHECK_THAT(error, Catch::Contains("'copy'") && Catch::Contains("whose text is computed at run time"));
}

TEST_CASE("StringNormalizer refuses locales other than en_US and folds constant strings", "[strings]") {
  ModelBuilder b(10);
  b.input("x", {2}, onnx::TensorProto::STRING).output("y", {2}, onnx::TensorProto::STRING);
  auto& n = b.node("StringNormalizer", {"x"}, {"y"}, "norm");
  attr_string(n, "case_change_action", "UPPER");
  attr_string(n, "locale", "tr_TR");
  CHECK_THAT(testing::compile_error(b.write("strings_locale")),
             Catch::Contains("'norm'") && Catch::Contains("locale 'tr_TR'"));

  ModelBuilder folded(12);  // Constant-12 has value_strings
  folded.output("y", {-1}, onnx::TensorProto::STRING);
  auto& constant = folded.node("Constant", {}, {"words"});
  attr_strings(constant, "value_strings", {"Monday", "tuesday", "MONDAY"});
  auto& norm = folded.node("StringNormalizer", {"words"}, {"y"});
  attr_string(norm, "case_change_action", "UPPER");
  attr_strings(norm, "stopwords", {"monday"});
  Compilation c = compile_model(folded.write("strings_fold"), {});
  const Value& y = output_value(c, 0);
  REQUIRE(y.constant);
  CHECK(y.constant->shape == Shape{1});
  CHECK(y.constant->strings == std::vector<std::string>{"TUESDAY"});
}
