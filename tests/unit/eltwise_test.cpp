// Elementwise functors and kernels (runtime-support eltwise.h, eltwise_math.h, cast.h):
// hand-computed values for the functors whose semantics are easy to get wrong, and constant
// folding of every elementwise node test against the ONNX expected outputs.
#include <catch2/catch.hpp>

#include <cmath>
#include <cstdint>
#include <filesystem>
#include <limits>
#include <regex>
#include <set>
#include <string>

#include "frontend/load.h"
#include "onnxc/cast.h"
#include "onnxc/eltwise.h"
#include "onnxc/eltwise_math.h"
#include "passes/passes.h"
#include "support/diagnostics.h"

using namespace onnxc::rt;

namespace {
const float kNaN = std::numeric_limits<float>::quiet_NaN();
const float kInf = std::numeric_limits<float>::infinity();
}  // namespace

TEST_CASE("Mod (fmod=0) gives the remainder the divisor's sign, like Python's %", "[eltwise]") {
  CHECK(Mod{}(7, 3) == 1);
  CHECK(Mod{}(-7, 3) == 2);
  CHECK(Mod{}(7, -3) == -2);
  CHECK(Mod{}(-7, -3) == -1);
  CHECK(Mod{}(6, -3) == 0);
  CHECK(Mod{}(std::int8_t{-128}, std::int8_t{-1}) == 0);  // INT_MIN % -1 is undefined in C++
  CHECK(Mod{}(std::int8_t{-128}, std::int8_t{127}) == 126);
  CHECK(Mod{}(5, 0) == 0);
  CHECK(Mod{}(std::uint8_t{250}, std::uint8_t{7}) == 5);
  CHECK(Mod{}(-7.5, 2.0) == 0.5);
  CHECK(Mod{}(7.5, -2.0) == -0.5);
}

TEST_CASE("Mod (fmod=1) gives the remainder the dividend's sign, like C's fmod", "[eltwise]") {
  CHECK(FMod{}(-7, 3) == -1);
  CHECK(FMod{}(7, -3) == 1);
  CHECK(FMod{}(-7, -3) == -1);
  CHECK(FMod{}(std::int64_t{5}, std::int64_t{0}) == 0);
  CHECK(FMod{}(-7.5f, 2.0f) == -1.5f);
  CHECK(FMod{}(7.5f, -2.0f) == 1.5f);
  CHECK(std::isnan(FMod{}(1.0f, 0.0f)));
}

TEST_CASE("Round rounds half to even and keeps the sign of zero", "[eltwise]") {
  CHECK(Round{}(0.5f) == 0.0f);
  CHECK(Round{}(1.5f) == 2.0f);
  CHECK(Round{}(2.5f) == 2.0f);
  CHECK(Round{}(3.5) == 4.0);
  CHECK(Round{}(-1.5f) == -2.0f);
  CHECK(Round{}(-2.5f) == -2.0f);
  CHECK(Round{}(2.4999998f) == 2.0f);
  CHECK(Round{}(2.5000002f) == 3.0f);
  CHECK(Round{}(-0.4f) == 0.0f);
  CHECK(std::signbit(Round{}(-0.5f)));
  CHECK(std::signbit(Round{}(-0.4f)));
  CHECK(Round{}(16777216.0f) == 16777216.0f);  // 2^24: every float this large is an integer
  CHECK(Round{}(kInf) == kInf);
  CHECK(Round{}(-kInf) == -kInf);
  CHECK(std::isnan(Round{}(kNaN)));
}

TEST_CASE("Cast from floating to integer truncates toward zero and saturates", "[eltwise]") {
  CHECK(convert<std::int8_t>(127.9f) == 127);
  CHECK(convert<std::int8_t>(-128.9f) == -128);
  CHECK(convert<std::int8_t>(2.5f) == 2);
  CHECK(convert<std::int8_t>(-2.5f) == -2);
  CHECK(convert<std::int8_t>(-0.9f) == 0);
  CHECK(convert<std::int8_t>(300.0f) == 127);
  CHECK(convert<std::int8_t>(-300.0f) == -128);
  CHECK(convert<std::int8_t>(kInf) == 127);
  CHECK(convert<std::int8_t>(-kInf) == -128);
  CHECK(convert<std::int8_t>(kNaN) == 0);
  CHECK(convert<std::uint8_t>(-1.5f) == 0);
  CHECK(convert<std::uint8_t>(255.5f) == 255);
  CHECK(convert<std::uint8_t>(256.0f) == 255);
  CHECK(convert<std::int32_t>(2147483520.0f) == 2147483520);  // largest float below 2^31
  CHECK(convert<std::int32_t>(2147483648.0f) == std::numeric_limits<std::int32_t>::max());
  CHECK(convert<std::int64_t>(-9.3e18) == std::numeric_limits<std::int64_t>::min());
  CHECK(convert<std::uint64_t>(1.9e19) == std::numeric_limits<std::uint64_t>::max());
  CHECK(convert<std::uint64_t>(1.8e19) == 18000000000000000000ull);
}

TEST_CASE("Cast to bool is x != 0; integers narrow by keeping the low bits", "[eltwise]") {
  CHECK(convert<bool>(0.0f) == false);
  CHECK(convert<bool>(-0.0f) == false);
  CHECK(convert<bool>(0.1f) == true);
  CHECK(convert<bool>(kNaN) == true);
  CHECK(convert<bool>(std::int64_t{256}) == true);  // not the low byte
  CHECK(convert<std::int8_t>(std::int32_t{300}) == 44);
  CHECK(convert<std::int8_t>(std::int32_t{-129}) == 127);
  CHECK(convert<std::uint16_t>(std::int64_t{-1}) == 65535);
  CHECK(convert<float>(true) == 1.0f);
}

TEST_CASE("Cast to the 16-bit floats rounds to nearest even, once", "[eltwise]") {
  const float x[] = {1.0f + 1.0f / 2048, 1.0f + 3.0f / 2048, 70000.0f};  // two ties, one overflow
  float16 h[3];
  map(x, h, 3, Cast<float16>{});
  CHECK(h[0].bits == 0x3c00);  // 1 + 2^-11 ties to 1
  CHECK(h[1].bits == 0x3c02);  // 1 + 3*2^-11 ties up to 1 + 2^-9
  CHECK(h[2].bits == 0x7c00);  // inf
  bfloat16 b[1];
  map(x, b, 1, Cast<bfloat16>{});
  CHECK(b[0].bits == 0x3f80);

  // Just above a tie, by less than a float can hold: rounding through float would tie to even.
  const double eps = 1.0 / (1ll << 40);
  const double d[] = {1.0 + 1.0 / 2048 + eps, -(1.0 + 1.0 / 2048 + eps), 1e300};
  map(d, h, 3, Cast<float16>{});
  CHECK(h[0].bits == 0x3c01);
  CHECK(h[1].bits == 0xbc01);
  CHECK(h[2].bits == 0x7c00);
  const double d_bf[] = {1.0 + 1.0 / 256 + eps};
  map(d_bf, b, 1, Cast<bfloat16>{});
  CHECK(b[0].bits == 0x3f81);

  const float16 third[] = {float16{0x3555}};  // 0.33325195
  std::int32_t i;
  map(third, &i, 1, Cast<std::int32_t>{});
  CHECK(i == 0);
}

TEST_CASE("HardSwish is x * clamp(x/6 + 1/2, 0, 1)", "[eltwise]") {
  CHECK(HardSwish{}(-4.0f) == 0.0f);
  CHECK(HardSwish{}(-3.0f) == 0.0f);
  CHECK(HardSwish{}(0.0f) == 0.0f);
  CHECK(HardSwish{}(1.0f) == Approx(2.0 / 3.0));
  CHECK(HardSwish{}(-1.0f) == Approx(-1.0 / 3.0));
  CHECK(HardSwish{}(3.0f) == 3.0f);
  CHECK(HardSwish{}(5.0) == 5.0);
}

TEST_CASE("Gelu, exact and with the tanh approximation", "[eltwise]") {
  // x * Phi(x) with Phi the standard normal CDF: Phi(1) = 0.8413447460685429.
  CHECK(Gelu{}(1.0) == Approx(0.8413447460685429).epsilon(1e-12));
  CHECK(Gelu{}(-1.0) == Approx(-0.15865525393145707).epsilon(1e-12));
  CHECK(Gelu{}(0.0f) == 0.0f);
  CHECK(Gelu{}(2.0f) == Approx(1.9544997361036416).epsilon(1e-6));
  // 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3))) at x = 1: tanh(0.8366535) = 0.6823840.
  CHECK(GeluTanh{}(1.0) == Approx(0.8411919906082768).epsilon(1e-12));
  CHECK(GeluTanh{}(-1.0f) == Approx(-0.1588080093917232).epsilon(1e-6));
}

TEST_CASE("Pow on integers is exact; a real exponent truncates the result", "[eltwise]") {
  CHECK(Pow{}(std::int32_t{2}, std::int32_t{10}) == 1024);
  CHECK(Pow{}(std::int64_t{-3}, std::int64_t{3}) == -27);
  CHECK(Pow{}(std::int64_t{3}, std::int64_t{39}) == 4052555153018976267ll);
  CHECK(Pow{}(std::int64_t{3}, std::uint8_t{40}) == -6289078614652622815ll);  // 3^40 - 2^64: wraps
  CHECK(Pow{}(std::int32_t{2}, std::int32_t{-1}) == 0);
  CHECK(Pow{}(std::int32_t{-1}, std::int32_t{-3}) == -1);
  CHECK(Pow{}(std::int32_t{-1}, std::int32_t{-4}) == 1);
  CHECK(Pow{}(std::int32_t{2}, 0.5f) == 1);
  CHECK(Pow{}(std::int32_t{3}, 2.0f) == 9);
  CHECK(Pow{}(2.0f, std::int64_t{-2}) == 0.25f);
  CHECK(Pow{}(-8.0, 1.0 / 3.0) != Pow{}(-8.0, 1.0 / 3.0));  // NaN, as in C
}

TEST_CASE("Shifts by the type's width or more give 0", "[eltwise]") {
  CHECK(ShiftLeft{}(std::uint8_t{1}, std::uint8_t{7}) == 128);
  CHECK(ShiftLeft{}(std::uint8_t{255}, std::uint8_t{1}) == 254);
  CHECK(ShiftLeft{}(std::uint8_t{1}, std::uint8_t{8}) == 0);
  CHECK(ShiftLeft{}(std::uint64_t{1}, std::uint64_t{63}) == (std::uint64_t{1} << 63));
  CHECK(ShiftRight{}(std::uint32_t{0x80000000u}, std::uint32_t{31}) == 1);
  CHECK(ShiftRight{}(std::uint32_t{0x80000000u}, std::uint32_t{32}) == 0);
}

TEST_CASE("Max and Min propagate NaN; integer arithmetic wraps instead of overflowing", "[eltwise]") {
  CHECK(std::isnan(Max{}(kNaN, 1.0f)));
  CHECK(std::isnan(Max{}(1.0f, kNaN)));
  CHECK(std::isnan(Min{}(1.0f, kNaN)));
  CHECK(Max{}(-0.5f, -1.0f) == -0.5f);
  CHECK(Min{}(std::uint64_t{1}, std::uint64_t{18446744073709551615ull}) == 1);
  CHECK(Add{}(std::int32_t{2147483647}, std::int32_t{1}) == -2147483647 - 1);
  CHECK(Mul{}(std::uint16_t{65535}, std::uint16_t{65535}) == 1);
  CHECK(Div{}(std::int32_t{-2147483647 - 1}, std::int32_t{-1}) == -2147483647 - 1);
  CHECK(Div{}(std::int32_t{-7}, std::int32_t{2}) == -3);
  CHECK(Div{}(std::int32_t{7}, std::int32_t{0}) == 0);
  CHECK(Neg{}(std::int8_t{-128}) == -128);
  CHECK(Abs{}(std::int8_t{-128}) == -128);
}

TEST_CASE("Shrink, Selu, Celu, Softplus and IsInf at hand-computed points", "[eltwise]") {
  CHECK(Shrink{0.5f, 1.0f}(2.0f) == 1.5f);
  CHECK(Shrink{0.5f, 1.0f}(-2.0f) == -1.5f);
  CHECK(Shrink{0.5f, 1.0f}(0.7f) == 0.0f);
  CHECK(Shrink{1.0f, 1.5f}(std::int32_t{-3}) == -2);
  CHECK(Selu{2.0f, 3.0f}(-1.0) == Approx(3.0 * 2.0 * (std::exp(-1.0) - 1.0)));
  CHECK(Celu{2.0f}(-1.0) == Approx(2.0 * (std::exp(-0.5) - 1.0)));
  CHECK(Softplus{}(100.0f) == 100.0f);  // no overflow in exp
  CHECK(Softplus{}(0.0) == Approx(std::log(2.0)));
  CHECK(IsInf{true, false}(kInf));
  CHECK_FALSE(IsInf{true, false}(-kInf));
  CHECK(IsInf{false, true}(-kInf));
  CHECK_FALSE(IsInf{true, true}(kNaN));
  CHECK(Erf{}(std::int32_t{3}) == 0);  // erf(3) = 0.99998 truncates
  CHECK(Sign{}(std::uint8_t{7}) == 1);
  CHECK(Sign{}(-2.5f) == -1.0f);
}

TEST_CASE("zip3_broadcast reads each input with its own strides", "[eltwise]") {
  // cond [2, 1], a [3], b scalar -> y [2, 3]
  const bool cond[] = {true, false};
  const float a[] = {1, 2, 3};
  const float b[] = {-1};
  const index_t cond_strides[] = {1, 0}, a_strides[] = {0, 1}, b_strides[] = {0, 0}, shape[] = {2, 3};
  float y[6];
  zip3_broadcast(cond, cond_strides, a, a_strides, b, b_strides, y, shape, 2, Select{});
  const float want[] = {1, 2, 3, -1, -1, -1};
  for (int i = 0; i < 6; ++i) CHECK(y[i] == want[i]);
}

TEST_CASE("zip_broadcast may accumulate into its first input", "[eltwise]") {
  // y [2, 2] = y + b [2, 1]: the variadic ops accumulate like this.
  float y[] = {1, 2, 3, 4};
  const float b[] = {10, 20};
  const index_t y_strides[] = {2, 1}, b_strides[] = {1, 0}, shape[] = {2, 2};
  zip_broadcast(y, y_strides, b, b_strides, y, shape, 2, Add{});
  CHECK(y[0] == 11);
  CHECK(y[1] == 12);
  CHECK(y[2] == 23);
  CHECK(y[3] == 24);
}

// ---- folding the node tests ----

namespace {

namespace fs = std::filesystem;

// The operators of this family. A node test is checked when its model uses only these (and
// Constant), except the string casts (refused) and the bfloat16 casts, whose test data stores
// bfloat16 as uint16 (and truncates where later ONNX releases round to nearest even).
const std::set<std::string> kElementwiseOps = {
    "Abs", "Neg", "Exp", "Log", "Sqrt", "Reciprocal", "Floor", "Ceil", "Round", "Sign", "Sin", "Cos", "Tan",
    "Asin", "Acos", "Atan", "Sinh", "Cosh", "Asinh", "Acosh", "Atanh", "Erf", "Elu", "Selu", "Celu",
    "HardSigmoid", "HardSwish", "Softplus", "Softsign", "ThresholdedRelu", "Shrink", "Mish", "Gelu", "IsNaN",
    "IsInf", "Not", "BitwiseNot", "Pow", "Mod", "Max", "Min", "Sum", "Mean", "Equal", "Less", "Greater",
    "LessOrEqual", "GreaterOrEqual", "And", "Or", "Xor", "BitShift", "BitwiseAnd", "BitwiseOr", "BitwiseXor",
    "PRelu", "Where", "Cast", "CastLike", "Add", "Sub", "Mul", "Div", "Relu", "LeakyRelu", "Sigmoid", "Tanh",
    "Clip", "Constant"};
const std::regex kExcluded(".*(STRING|BFLOAT16).*");

bool uses_only_elementwise_ops(const onnxc::Model& m) {
  for (const auto& n : m.graph.nodes)
    if (!n->domain.empty() || !kElementwiseOps.count(n->op_type)) return false;
  return true;
}

std::string first_mismatch(const onnxc::Tensor& got, const onnxc::Tensor& want) {
  using onnxc::dtype_name, onnxc::shape_str;
  if (got.dtype != want.dtype) return "type " + dtype_name(got.dtype) + ", expected " + dtype_name(want.dtype);
  if (got.shape != want.shape) return "shape " + shape_str(got.shape) + ", expected " + shape_str(want.shape);
  for (int64_t i = 0; i < want.numel(); ++i) {
    const double g = got.float_at(i), w = want.float_at(i);
    const bool ok = !onnxc::dtype_is_float(want.dtype) ? got.int_at(i) == want.int_at(i)
                    : std::isnan(w)                    ? std::isnan(g)
                                                       : g == w || std::fabs(g - w) <= 1e-5 + 1e-3 * std::fabs(w);
    if (!ok) return "element " + std::to_string(i) + " is " + std::to_string(g) + ", expected " + std::to_string(w);
  }
  return "";
}

// input_<i>.pb or output_<i>.pb of a test data set.
onnxc::Tensor load_data(const fs::path& set, const std::string& kind, std::size_t i) {
  return onnxc::load_tensor_file((set / (kind + "_" + std::to_string(i) + ".pb")).string());
}

// Binds every input of the model in `dir` to its first data set, folds, compares.
std::string fold_node_test(onnxc::Model& m, const fs::path& dir) {
  onnxc::resolve_operators(m);
  const fs::path data = dir / "test_data_set_0";
  for (std::size_t i = 0; i < m.graph.inputs.size(); ++i) {
    onnxc::Value* v = m.graph.inputs[i];
    auto t = std::make_shared<onnxc::Tensor>(load_data(data, "input", i));
    v->dtype = t->dtype;
    v->shape = t->shape;
    v->has_shape = true;
    v->constant = t;
  }
  onnxc::infer_and_fold(m.graph, true);
  for (std::size_t i = 0; i < m.graph.outputs.size(); ++i) {
    const onnxc::Value* v = m.graph.outputs[i];
    if (!v->constant) return "output '" + v->name + "' did not fold";
    const std::string why = first_mismatch(*v->constant, load_data(data, "output", i));
    if (!why.empty()) return "output '" + v->name + "': " + why;
  }
  return "";
}

}  // namespace

TEST_CASE("Elementwise operators fold to the ONNX node tests' expected outputs", "[eltwise]") {
  const char* node_tests = "/usr/share/libonnx-testdata/data/node";
  REQUIRE(fs::is_directory(node_tests));
  std::vector<fs::path> dirs;
  for (const auto& entry : fs::directory_iterator(node_tests))
    if (!std::regex_match(entry.path().filename().string(), kExcluded)) dirs.push_back(entry.path());
  std::sort(dirs.begin(), dirs.end());
  int checked = 0;
  for (const fs::path& dir : dirs) {
    onnxc::Model m;
    try {
      m = onnxc::load_model((dir / "model.onnx").string());
    } catch (const onnxc::CompileError&) {
      continue;  // sequences, optionals, ...: not an elementwise test
    }
    if (!uses_only_elementwise_ops(m)) continue;
    std::string problem;
    try {
      problem = fold_node_test(m, dir);
    } catch (const onnxc::CompileError& e) {
      problem = e.what();
    }
    CHECK(dir.filename().string() + problem == dir.filename().string());
    ++checked;
  }
  CHECK(checked > 200);
}
