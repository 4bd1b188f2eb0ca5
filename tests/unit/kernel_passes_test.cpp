// fuse-activation and pack-weights (passes/kernel_passes.h); the float Conv kernels they
// prepare for are tested in simd_kernels_test.cpp.
#include <catch2/catch.hpp>

#include <vector>

#include "model_builder.h"
#include "onnxc/conv.h"
#include "ops/conv_algorithm.h"
#include "passes/pipeline.h"

using testing::ModelBuilder;

namespace {

// x [1, 2, 3, 3] -> Conv with 10 output channels (weights 0, 1, 2, ...) -> `act` -> y.
ModelBuilder conv_then(const std::string& act, std::vector<std::string> act_extra_inputs = {}) {
  ModelBuilder b;
  std::vector<float> w(20);
  for (std::size_t i = 0; i < w.size(); ++i) w[i] = static_cast<float>(i);
  b.input("x", {1, 2, 3, 3}).output("y").floats("w", {10, 2, 1, 1}, w);
  b.floats("lo", {}, {0.0f}).floats("hi", {}, {6.0f});
  b.node("Conv", {"x", "w"}, {"c"});
  std::vector<std::string> in = {"c"};
  in.insert(in.end(), act_extra_inputs.begin(), act_extra_inputs.end());
  b.node(act, in, {"y"});
  return b;
}

const onnxc::Node& only_node(const onnxc::Compilation& c) {
  REQUIRE(c.model.graph.nodes.size() == 1);
  return *c.model.graph.nodes[0];
}

}  // namespace

TEST_CASE("fuse-activation merges a Relu into the Conv before it, and can be turned off") {
  auto c = onnxc::compile_model(conv_then("Relu").write("fuse_relu"), {});
  const onnxc::Node& conv = only_node(c);
  CHECK(conv.op_type == "Conv");
  CHECK(conv.attr_string(onnxc::kActivationAttr, "") == "Relu");
  CHECK(conv.outputs[0]->name == "y");

  onnxc::CompileOptions off;
  off.disabled_passes = {"fuse-activation"};
  auto unfused = onnxc::compile_model(conv_then("Relu").write("fuse_relu_off"), off);
  CHECK(unfused.model.graph.nodes.size() == 2);
}

TEST_CASE("fuse-activation takes Clip's bounds from its constant inputs") {
  auto c = onnxc::compile_model(conv_then("Clip", {"lo", "hi"}).write("fuse_clip"), {});
  const onnxc::Node& conv = only_node(c);
  CHECK(conv.attr_string(onnxc::kActivationAttr, "") == "Clip");
  CHECK(conv.attr_float(onnxc::kActivationAlphaAttr, -1) == 0.0f);
  CHECK(conv.attr_float(onnxc::kActivationBetaAttr, -1) == 6.0f);
}

TEST_CASE("fuse-activation leaves a Conv whose output is also read elsewhere") {
  ModelBuilder b = conv_then("Relu");
  b.output("c2");
  b.node("Identity", {"c"}, {"c2"});
  auto c = onnxc::compile_model(b.write("fuse_shared"), {});
  for (const auto& n : c.model.graph.nodes) CHECK_FALSE(n->has_attr(onnxc::kActivationAttr));
}

TEST_CASE("pack-weights stores a Conv weight in panels of 8 rows, k-major inside a panel") {
  auto c = onnxc::compile_model(conv_then("Relu").write("pack"), {});
  const onnxc::Node& conv = only_node(c);
  CHECK(onnxc::conv_algorithm(conv) == onnxc::ConvAlgorithm::Gemm);
  const float* p = conv.inputs[1]->constant->data<float>();
  // w[m][k] = 2m + k with 10 rows and k < 2: panel 0 holds rows 0..7, panel 1 rows 8..9.
  const std::vector<float> expected = {0, 2, 4, 6, 8, 10, 12, 14,  1, 3, 5, 7, 9, 11, 13, 15,  // panel 0, k = 0, 1
                                       16, 18, 17, 19};                                        // panel 1
  CHECK(std::vector<float>(p, p + 20) == expected);
}

TEST_CASE("Activation epilogues on hand-computed values") {
  using onnxc::rt::Activation;
  using onnxc::rt::activate;
  CHECK(activate({Activation::Relu, 0, 0}, -2.0f) == 0.0f);
  CHECK(activate({Activation::Clip, 0, 6}, 7.5f) == 6.0f);
  CHECK(activate({Activation::LeakyRelu, 0.1f, 0}, -2.0f) == Approx(-0.2f));
  CHECK(activate({Activation::HardSwish, 0, 0}, 1.0f) == Approx(1.0f * (1.0f / 6.0f + 0.5f)));
  CHECK(activate({Activation::HardSigmoid, 0.2f, 0.5f}, 10.0f) == 1.0f);
  CHECK(activate({Activation::Sigmoid, 0, 0}, 0.0f) == 0.5f);
}
