// The training-domain optimizers (Adagrad, Adam, Momentum) against their specification's
// formulas evaluated by hand (in double, see the comments), and a node of the training domain
// through the compiler.
#include <catch2/catch.hpp>

#include <cstdint>
#include <utility>

#include "model_builder.h"
#include "onnxc/optimizer.h"
#include "passes/pipeline.h"

using namespace onnxc;
using testing::ModelBuilder;

TEST_CASE("adagrad: decayed rate, regularized gradient, accumulated square", "[optimizer]") {
  // r = 0.1 / (1 + 1 * 0.1); g = 0.001 * 1 - 1 = -0.999; h = 2 + g^2; x = 1 - r * g / (sqrt(h) + 1e-5).
  const float rate = 0.1f, x = 1.0f, g = -1.0f, h = 2.0f;
  const std::int64_t step = 1;
  float x_new = 0, h_new = 0;
  rt::adagrad(rt::AdagradParams{0.1f, 1e-5f, 0.001f}, &rate, &step, 1, &x, &g, &h, &x_new, &h_new);
  CHECK(h_new == Approx(2.998001));
  CHECK(x_new == Approx(1.0524510767560185));
}

TEST_CASE("adam: moments, bias-corrected rate from step 1 on, post-update decay", "[optimizer]") {
  // g = 0.01 * 1.2 - 0.5; v = 0.9 * 0.3 + 0.1 * g; h = 0.99 * 0.4 + 0.01 * g^2;
  // T = 2: r = 0.1 * sqrt(1 - 0.99^2) / (1 - 0.9^2); x = 0.9 * (1.2 - r * v / (sqrt(h) + 1e-6)).
  const double rate = 0.1;  // R may be double while X is float
  const float x = 1.2f, g = -0.5f, v = 0.3f, h = 0.4f;
  const rt::AdamParams p{0.9f, 0.99f, 1e-6f, 0.01f, 0.1f};
  float x_new = 0, v_new = 0, h_new = 0;
  const std::int64_t step = 2;
  rt::adam(p, &rate, &step, 1, &x, &g, &v, &h, &x_new, &v_new, &h_new);
  CHECK(v_new == Approx(0.2212));
  CHECK(h_new == Approx(0.39838144));
  CHECK(x_new == Approx(1.0565819713651445));
  const std::int64_t first = 0;  // T = 0: the rate is not corrected
  rt::adam(p, &rate, &first, 1, &x, &g, &v, &h, &x_new, &v_new, &h_new);
  CHECK(x_new == Approx(1.0484588593205675));
}

TEST_CASE("momentum: standard and Nesterov, the first step takes the whole gradient", "[optimizer]") {
  // g = 0.01 * 1 - 1 = -0.99; v = 0.9 * 0.5 + beta' * g with beta' = 1 at T = 0, else 0.1.
  const double x = 1.0, g = -1.0, v = 0.5, rate = 0.1;
  double x_new = 0, v_new = 0;
  const std::int64_t first = 0, later = 3;
  rt::MomentumParams p{0.9f, 0.1f, 0.01f, false};
  rt::momentum(p, &rate, &first, 1, &x, &g, &v, &x_new, &v_new);
  CHECK(v_new == Approx(-0.54));
  CHECK(x_new == Approx(1.054));  // x - r * v
  rt::momentum(p, &rate, &later, 1, &x, &g, &v, &x_new, &v_new);
  CHECK(v_new == Approx(0.351));
  CHECK(x_new == Approx(0.9649));
  p.nesterov = true;  // x - r * (g + alpha * v)
  rt::momentum(p, &rate, &first, 1, &x, &g, &v, &x_new, &v_new);
  CHECK(x_new == Approx(1.1476));
  rt::momentum(p, &rate, &later, 1, &x, &g, &v, &x_new, &v_new);
  CHECK(x_new == Approx(1.06741));
}

TEST_CASE("Momentum in the training domain folds two tensors' updates in its input order", "[optimizer]") {
  ModelBuilder b(13);
  auto* training = b.proto().add_opset_import();
  training->set_domain("ai.onnx.preview.training");
  training->set_version(1);
  b.floats("R", {}, {0.1f}).ints("T", {}, {3});
  b.floats("X1", {1}, {1}).floats("X2", {2}, {2, 0}).floats("G1", {1}, {-1}).floats("G2", {2}, {0.5f, 1});
  b.floats("V1", {1}, {0.5f}).floats("V2", {2}, {0, -1});
  b.output("X2_new", {2}).output("V1_new", {1});
  onnx::NodeProto& n = b.node("Momentum", {"R", "T", "X1", "X2", "G1", "G2", "V1", "V2"},
                              {"X1_new", "X2_new", "V1_new", "V2_new"});
  n.set_domain("ai.onnx.preview.training");
  for (auto [name, value] : {std::pair<const char*, float>{"alpha", 0.9f}, {"beta", 0.1f}, {"norm_coefficient", 0.01f}}) {
    auto* a = n.add_attribute();
    a->set_name(name);
    a->set_type(onnx::AttributeProto::FLOAT);
    a->set_f(value);
  }
  auto* mode = n.add_attribute();
  mode->set_name("mode");
  mode->set_type(onnx::AttributeProto::STRING);
  mode->set_s("standard");
  Compilation c = compile_model(b.write("momentum_fold"), {});
  const Value& x2 = *c.model.graph.outputs[0];
  const Value& v1 = *c.model.graph.outputs[1];
  REQUIRE(x2.constant);
  REQUIRE(v1.constant);
  // V1 = 0.9 * 0.5 + 0.1 * (0.01 - 1) = 0.351 (as in the kernel test); X2 = X2 - 0.1 * V2 with
  // V2 = 0.9 * [0, -1] + 0.1 * ([0.02, 0] + [0.5, 1]) = [0.052, -0.8].
  CHECK(v1.constant->float_at(0) == Approx(0.351));
  CHECK(x2.constant->float_at(0) == Approx(2 - 0.0052));
  CHECK(x2.constant->float_at(1) == Approx(0.08));
}
