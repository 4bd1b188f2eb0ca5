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
