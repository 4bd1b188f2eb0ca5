#include <catch2/catch.hpp>

#include "model_builder.h"
#include "passes/pipeline.h"

using testing::ModelBuilder;

namespace {

std::vector<std::string> step_ops(const onnxc::Compilation& c) {
  std::vector<std::string> ops;
  for (const auto& s : c.program.main.steps) ops.push_back(s.node->op_type);
  return ops;
}

onnxc::CompileOptions without(const char* pass) {
  onnxc::CompileOptions o;
  o.disabled_passes.insert(pass);
  return o;
}

}  // namespace

TEST_CASE("simplify: a Transpose pair that cancels disappears", "[simplify]") {
  ModelBuilder b;
  b.input("x", {2, 3, 4}).output("y", {2, 3, 4});
  ModelBuilder::attr_ints(b.node("Transpose", {"x"}, {"t1"}), "perm", {1, 2, 0});
  ModelBuilder::attr_ints(b.node("Transpose", {"t1"}, {"t2"}), "perm", {2, 0, 1});
  b.node("Relu", {"t2"}, {"y"});
  std::string path = b.write("simplify_cancel");
  CHECK(step_ops(onnxc::compile_model(path, {})) == std::vector<std::string>{"Relu"});
  CHECK(step_ops(onnxc::compile_model(path, without("simplify"))) ==
        std::vector<std::string>{"Transpose", "Transpose", "Relu"});
}

TEST_CASE("simplify: a Transpose pair becomes one Transpose with the composed permutation", "[simplify]") {
  ModelBuilder b;
  b.input("x", {2, 3, 4}).output("y", {3, 2, 4});
  ModelBuilder::attr_ints(b.node("Transpose", {"x"}, {"t1"}), "perm", {0, 2, 1});  // [2, 4, 3]
  ModelBuilder::attr_ints(b.node("Transpose", {"t1"}, {"y"}), "perm", {2, 0, 1});  // [3, 2, 4]
  auto c = onnxc::compile_model(b.write("simplify_compose"), {});
  REQUIRE(step_ops(c) == std::vector<std::string>{"Transpose"});
  const onnxc::Node& t = *c.program.main.steps[0].node;
  CHECK(t.inputs[0]->name == "x");
  // y = transpose(t1, [2, 0, 1]) and t1 = transpose(x, [0, 2, 1]): y takes x's axes 1, 0, 2.
  CHECK(t.attr_ints("perm") == std::vector<int64_t>{1, 0, 2});
}

TEST_CASE("simplify: Identity, Cast to the same type and inference Dropout are bypassed", "[simplify]") {
  ModelBuilder b;
  b.input("x", {4}).output("y", {4});
  b.node("Identity", {"x"}, {"i"});
  ModelBuilder::attr_int(b.node("Cast", {"i"}, {"c"}), "to", onnx::TensorProto::FLOAT);
  b.node("Dropout", {"c"}, {"d"});
  b.node("Relu", {"d"}, {"y"});
  auto c = onnxc::compile_model(b.write("simplify_identities"), {});
  REQUIRE(step_ops(c) == std::vector<std::string>{"Relu"});
  CHECK(c.program.main.steps[0].node->inputs[0]->name == "x");
}

TEST_CASE("simplify: a node writing a graph output is kept", "[simplify]") {
  ModelBuilder b;
  b.input("x", {4}).output("y", {4});
  b.node("Identity", {"x"}, {"y"});
  CHECK(step_ops(onnxc::compile_model(b.write("simplify_output"), {})) == std::vector<std::string>{"Identity"});
}

TEST_CASE("simplify: zero Pad, whole Slice, same-shape Expand and Tile, one-input Concat are bypassed", "[simplify]") {
  ModelBuilder b;
  b.input("x", {2, 3}).output("y", {2, 3});
  b.ints("pads", {4}, {0, 0, 0, 0});
  b.ints("starts", {2}, {0, 0}).ints("ends", {2}, {2, 100}).ints("axes", {2}, {0, 1}).ints("steps", {2}, {1, 1});
  b.ints("shape", {2}, {2, 3}).ints("repeats", {2}, {1, 1});
  b.node("Pad", {"x", "pads"}, {"p"});
  b.node("Slice", {"p", "starts", "ends", "axes", "steps"}, {"s"});
  b.node("Expand", {"s", "shape"}, {"e"});
  b.node("Tile", {"e", "repeats"}, {"t"});
  ModelBuilder::attr_int(b.node("Concat", {"t"}, {"c"}), "axis", 1);
  b.node("Relu", {"c"}, {"y"});
  std::string path = b.write("simplify_shape_keeping");
  auto c = onnxc::compile_model(path, {});
  REQUIRE(step_ops(c) == std::vector<std::string>{"Relu"});
  CHECK(c.program.main.steps[0].node->inputs[0]->name == "x");
  CHECK(step_ops(onnxc::compile_model(path, without("simplify"))) ==
        std::vector<std::string>{"Pad", "Slice", "Expand", "Tile", "Concat", "Relu"});
}

TEST_CASE("simplify: a Pad that crops one side and pads the other, and a reversing Slice, are kept", "[simplify]") {
  // Both keep the shape but move the elements.
  ModelBuilder b;
  b.input("x", {4}).output("y", {4});
  b.ints("pads", {2}, {-1, 1});
  b.ints("starts", {1}, {-1}).ints("ends", {1}, {-100}).ints("axes", {1}, {0}).ints("steps", {1}, {-1});
  b.node("Pad", {"x", "pads"}, {"p"});
  b.node("Slice", {"p", "starts", "ends", "axes", "steps"}, {"s"});
  b.node("Relu", {"s"}, {"y"});
  CHECK(step_ops(onnxc::compile_model(b.write("simplify_moves"), {})) ==
        std::vector<std::string>{"Pad", "Slice", "Relu"});
}
