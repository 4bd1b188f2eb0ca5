// RNN, GRU and LSTM: kernels against hand-computed recurrences, and the compiler's reading of
// directions, layouts and activation attributes.
#include <catch2/catch.hpp>

#include <cmath>
#include <limits>

#include "model_builder.h"
#include "onnxc/rnn.h"
#include "passes/pipeline.h"
#include "support/diagnostics.h"

using testing::ModelBuilder;
namespace rt = onnxc::rt;

namespace {

constexpr float kNoClip = std::numeric_limits<float>::infinity();
constexpr rt::RnnFunction kIdentity{rt::RnnActivation::Affine, 1.0f, 0.0f};
constexpr rt::RnnFunction kSigmoid{rt::RnnActivation::Sigmoid, 0, 0};
constexpr rt::RnnFunction kTanh{rt::RnnActivation::Tanh, 0, 0};

rt::RnnParams params(rt::index_t seq, rt::index_t batch, rt::index_t input, rt::index_t hidden, rt::index_t dirs,
                     rt::RnnFunction f, rt::RnnFunction g = kTanh, rt::RnnFunction h = kTanh) {
  return rt::RnnParams{seq, batch, input, hidden, dirs, false, false, kNoClip, false, false, {f, f}, {g, g}, {h, h},
                       false, false};
}

void add_string_attr(onnx::NodeProto& n, const std::string& name, const std::string& v) {
  auto* a = n.add_attribute();
  a->set_name(name);
  a->set_type(onnx::AttributeProto::STRING);
  a->set_s(v);
}

void add_strings_attr(onnx::NodeProto& n, const std::string& name, std::vector<std::string> v) {
  auto* a = n.add_attribute();
  a->set_name(name);
  a->set_type(onnx::AttributeProto::STRINGS);
  for (auto& s : v) a->add_strings(s);
}

void add_floats_attr(onnx::NodeProto& n, const std::string& name, std::vector<float> v) {
  auto* a = n.add_attribute();
  a->set_name(name);
  a->set_type(onnx::AttributeProto::FLOATS);
  for (float f : v) a->add_floats(f);
}

// One LSTM step, hidden and input size 1: x = 1, W (i, o, f, c) = (0.5, 1, -1, 2),
// R = (0.1, 0.2, 0.3, 0.4), H0 = 0.5, C0 = 1, no bias.
//   i = sigmoid(0.5 + 0.05) = 0.634136   o = sigmoid(1 + 0.1) = 0.750260
//   f = sigmoid(-1 + 0.15) = 0.299433    c = tanh(2 + 0.2) = 0.975743
//   C = f * 1 + i * c = 0.918186         H = o * tanh(C) = 0.543967
// With input_forget, f = 1 - i: C = 0.984618, H = 0.566490.
template <class T> void lstm_step(bool input_forget, float* h_out, float* c_out) {
  const T x[] = {rt::store<T>(1.0f)};
  const T w[] = {rt::store<T>(0.5f), rt::store<T>(1.0f), rt::store<T>(-1.0f), rt::store<T>(2.0f)};
  const T r[] = {rt::store<T>(0.1f), rt::store<T>(0.2f), rt::store<T>(0.3f), rt::store<T>(0.4f)};
  const T h0[] = {rt::store<T>(0.5f)};
  const T c0[] = {rt::store<T>(1.0f)};
  T y_h[1], y_c[1];
  float scratch[rt::lstm_scratch_elements(1)];
  rt::RnnParams p = params(1, 1, 1, 1, 1, kSigmoid);
  p.input_forget = input_forget;
  rt::lstm<T>(p, x, w, r, nullptr, nullptr, h0, c0, nullptr, nullptr, y_h, y_c, scratch);
  *h_out = rt::load(y_h[0]);
  *c_out = rt::load(y_c[0]);
}

}  // namespace

TEST_CASE("one LSTM step matches its gates computed by hand") {
  float h, c;
  lstm_step<float>(false, &h, &c);
  CHECK(h == Approx(0.5439673).epsilon(1e-6));
  CHECK(c == Approx(0.9181863).epsilon(1e-6));
  lstm_step<float>(true, &h, &c);
  CHECK(h == Approx(0.5664899).epsilon(1e-6));
  CHECK(c == Approx(0.9846179).epsilon(1e-6));
  // float16 storage computes in float; only the final rounding to half differs.
  lstm_step<rt::float16>(false, &h, &c);
  CHECK(h == Approx(0.5439673).epsilon(1e-3));
  CHECK(c == Approx(0.9181863).epsilon(1e-3));
}

TEST_CASE("a bidirectional RNN runs each sequence forwards and backwards, up to its length") {
  // With W = R = 1 and the identity activation, H is the running sum of the inputs.
  // Batch entry 0: x = 1, 2, 3 (length 3); entry 1: x = 10, 20, 30 with length 2.
  const float x[] = {1, 10, 2, 20, 3, 30};  // [seq 3, batch 2, input 1]
  const float w[] = {1, 1}, r[] = {1, 1};   // [2 directions, 1, 1]
  const std::int32_t lens[] = {3, 2};
  float y[3 * 2 * 2], y_h[2 * 2];
  float scratch[rt::rnn_scratch_elements(1)];
  rt::RnnParams p = params(3, 2, 1, 1, 2, kIdentity);
  rt::rnn<float>(p, x, w, r, nullptr, lens, nullptr, y, y_h, scratch);
  // Y [seq, direction, batch, 1]: forward sums 1, 3, 6 and 10, 30, (past the end) 0;
  // backward sums from the last valid step: 6, 5, 3 and 30, 20, 0.
  const float want_y[] = {1, 10, 6, 30, /**/ 3, 30, 5, 20, /**/ 6, 0, 3, 0};
  for (int i = 0; i < 12; ++i) CHECK(y[i] == want_y[i]);
  const float want_h[] = {6, 30, 6, 30};  // [direction, batch, 1]
  for (int i = 0; i < 4; ++i) CHECK(y_h[i] == want_h[i]);

  SECTION("batch-major layout holds the same numbers transposed") {
    const float xb[] = {1, 2, 3, 10, 20, 30};  // [batch 2, seq 3, input 1]
    p.batch_major = true;
    rt::rnn<float>(p, xb, w, r, nullptr, lens, nullptr, y, y_h, scratch);
    const float want_yb[] = {1, 6, 3, 5, 6, 3, /**/ 10, 30, 30, 20, 0, 0};  // [batch, seq, direction, 1]
    for (int i = 0; i < 12; ++i) CHECK(y[i] == want_yb[i]);
    const float want_hb[] = {6, 6, 30, 30};  // [batch, direction, 1]
    for (int i = 0; i < 4; ++i) CHECK(y_h[i] == want_hb[i]);
  }
  SECTION("direction reverse runs the single direction backwards") {
    p.directions = 1;
    p.reverse = true;
    rt::rnn<float>(p, x, w, r, nullptr, lens, nullptr, y, y_h, scratch);
    const float want_rev[] = {6, 30, 5, 20, 3, 0};
    for (int i = 0; i < 6; ++i) CHECK(y[i] == want_rev[i]);
  }
}

TEST_CASE("GRU's linear_before_reset moves the reset gate after the recurrence product") {
  // Identity activations, x = 1, H0 = 2; W (z, r, h) = (0.5, 1, 2), R = (0, 0.5, 1), Rbh = 1.
  //   z = 0.5, r = 1 + 0.5 * 2 = 2
  //   default: n = 2 + (r * H0) * 1 + 1 = 7,   H = (1 - z) * n + z * H0 = 4.5
  //   linear_before_reset: n = 2 + r * (H0 * 1 + 1) = 8, H = 5
  const float x[] = {1}, w[] = {0.5f, 1, 2}, r[] = {0, 0.5f, 1}, h0[] = {2};
  const float b[] = {0, 0, 0, 0, 0, 1};
  float y_h[1];
  float scratch[rt::gru_scratch_elements(1)];
  rt::RnnParams p = params(1, 1, 1, 1, 1, kIdentity, kIdentity);
  rt::gru<float>(p, x, w, r, b, nullptr, h0, nullptr, y_h, scratch);
  CHECK(y_h[0] == 4.5f);
  p.linear_before_reset = true;
  rt::gru<float>(p, x, w, r, b, nullptr, h0, nullptr, y_h, scratch);
  CHECK(y_h[0] == 5.0f);
}

TEST_CASE("clip bounds the activations' inputs") {
  const float x[] = {5, -0.25f}, w[] = {1}, r[] = {0};
  float y[2];
  float scratch[rt::rnn_scratch_elements(1)];
  rt::RnnParams p = params(2, 1, 1, 1, 1, kIdentity);
  p.clip = 1.0f;
  rt::rnn<float>(p, x, w, r, nullptr, nullptr, nullptr, y, nullptr, scratch);
  CHECK(y[0] == 1.0f);
  CHECK(y[1] == -0.25f);
}

TEST_CASE("the recurrent activation functions follow their ONNX definitions") {
  using K = rt::RnnActivation;
  CHECK(rt::RnnFunction{K::Relu, 0, 0}(-2.0f) == 0.0f);
  CHECK(rt::RnnFunction{K::Sigmoid, 0, 0}(0.0f) == 0.5f);
  CHECK(rt::RnnFunction{K::Affine, 2, 1}(3.0f) == 7.0f);
  CHECK(rt::RnnFunction{K::LeakyRelu, 0.1f, 0}(-2.0f) == Approx(-0.2f));
  CHECK(rt::RnnFunction{K::ThresholdedRelu, 1, 0}(1.0f) == 0.0f);
  CHECK(rt::RnnFunction{K::ThresholdedRelu, 1, 0}(1.5f) == 1.5f);
  CHECK(rt::RnnFunction{K::ScaledTanh, 2, 0.5f}(2.0f) == Approx(2 * std::tanh(1.0f)));
  CHECK(rt::RnnFunction{K::HardSigmoid, 0.2f, 0.5f}(1.0f) == Approx(0.7f));
  CHECK(rt::RnnFunction{K::HardSigmoid, 0.2f, 0.5f}(5.0f) == 1.0f);
  CHECK(rt::RnnFunction{K::Elu, 1, 0}(-1.0f) == Approx(std::exp(-1.0f) - 1));
  CHECK(rt::RnnFunction{K::Softsign, 0, 0}(-3.0f) == -0.75f);
  CHECK(rt::RnnFunction{K::Softplus, 0, 0}(0.0f) == Approx(std::log(2.0f)));
  CHECK(rt::RnnFunction{K::Softplus, 0, 0}(100.0f) == Approx(100.0f));  // no overflow
}

TEST_CASE("LSTM output shapes follow direction and layout") {
  ModelBuilder b(14);
  b.input("x", {2, 5, 3}).output("y").output("y_h").output("y_c");  // batch-major: [batch, seq, input]
  b.floats("w", {2, 16, 3}, std::vector<float>(2 * 16 * 3, 0.1f));
  b.floats("r", {2, 16, 4}, std::vector<float>(2 * 16 * 4, 0.1f));
  auto& n = b.node("LSTM", {"x", "w", "r"}, {"y", "y_h", "y_c"});
  ModelBuilder::attr_int(n, "hidden_size", 4);
  ModelBuilder::attr_int(n, "layout", 1);
  add_string_attr(n, "direction", "bidirectional");
  onnxc::Model m = onnxc::check_model(b.write("lstm_shapes"), {});
  CHECK(m.graph.outputs[0]->shape == onnxc::Shape{2, 5, 2, 4});
  CHECK(m.graph.outputs[1]->shape == onnxc::Shape{2, 2, 4});
  CHECK(m.graph.outputs[2]->shape == onnxc::Shape{2, 2, 4});
}

TEST_CASE("activation_alpha and activation_beta go, in order, to the functions that take them") {
  ModelBuilder b(14);
  b.input("x", {1, 1, 1}).output("y_h");
  b.floats("w", {1, 3, 1}, {1, 1, 1}).floats("r", {1, 3, 1}, {1, 1, 1});
  auto& n = b.node("GRU", {"x", "w", "r"}, {"", "y_h"});
  ModelBuilder::attr_int(n, "hidden_size", 1);
  // Tanh takes nothing; LeakyRelu takes alpha 0.25 only; the betas all go to later functions.
  add_strings_attr(n, "activations", {"LeakyRelu", "HardSigmoid"});
  add_floats_attr(n, "activation_alpha", {0.25f, 0.5f});
  add_floats_attr(n, "activation_beta", {0.75f});
  onnxc::CompileOptions o;
  auto code = onnxc::emit_code(onnxc::compile_model(b.write("gru_alpha"), o), o, "m.h", "m.cpp");
  CHECK_THAT(code.source, Catch::Contains("rt::RnnActivation::LeakyRelu, 0.25f, 0.f"));
  CHECK_THAT(code.source, Catch::Contains("rt::RnnActivation::HardSigmoid, 0.5f, 0.75f"));
}

TEST_CASE("an unknown activation or a wrong count of them is refused") {
  ModelBuilder b(14);
  b.input("x", {1, 1, 1}).output("y_h");
  b.floats("w", {1, 1, 1}, {1}).floats("r", {1, 1, 1}, {1});
  auto& n = b.node("RNN", {"x", "w", "r"}, {"", "y_h"});
  SECTION("unknown name") {
    add_strings_attr(n, "activations", {"Swish"});
    CHECK_THROWS_WITH(onnxc::check_model(b.write("rnn_bad_act"), {}), Catch::Contains("'Swish'"));
  }
  SECTION("two functions for a one-direction RNN") {
    add_strings_attr(n, "activations", {"Tanh", "Relu"});
    CHECK_THROWS_WITH(onnxc::check_model(b.write("rnn_two_acts"), {}), Catch::Contains("needs 1 per direction"));
  }
}
