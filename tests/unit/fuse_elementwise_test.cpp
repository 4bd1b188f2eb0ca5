// fuse-elementwise (passes/fuse_elementwise.h): which nodes it groups, what the fused node
// records, and the loop nests it can index. The fused loops' values are checked against ONNX
// Runtime by the models of tests/models/fusion (make.py) and the conformance suite.
#include <catch2/catch.hpp>

#include <string>
#include <vector>

#include "model_builder.h"
#include "ops/fused_elementwise.h"
#include "passes/pipeline.h"

using testing::ModelBuilder;

namespace {

std::vector<std::string> op_types(const onnxc::Compilation& c) {
  std::vector<std::string> ops;
  for (const auto& n : c.model.graph.nodes) ops.push_back(n->op_type);
  return ops;
}

std::vector<std::string> fused_ops(const onnxc::Node& n) {
  std::vector<std::string> ops;
  for (const onnxc::FusedStep& s : onnxc::fused_steps(n)) ops.push_back(s.op_type);
  return ops;
}

const onnxc::Node& node_named(const onnxc::Compilation& c, const std::string& output) {
  for (const auto& n : c.model.graph.nodes)
    if (n->outputs[0]->name == output) return *n;
  FAIL("no node computes " << output);
  throw;
}

onnxc::Compilation compile(const ModelBuilder& b, const std::string& name, std::vector<std::string> disabled = {}) {
  onnxc::CompileOptions o;
  o.disabled_passes.insert(disabled.begin(), disabled.end());
  return onnxc::compile_model(b.write(name), o);
}

// y = Add(Relu(Mul(x, s)), x) with b's extra nodes.
ModelBuilder mul_relu_add() {
  ModelBuilder b;
  b.input("x", {2, 8}).output("y").floats("s", {}, {0.5f});
  b.node("Mul", {"x", "s"}, {"a"});
  b.node("Relu", {"a"}, {"r"});
  b.node("Add", {"r", "x"}, {"y"});
  return b;
}

}  // namespace

TEST_CASE("fuse-elementwise computes a chain in one node, its steps in order, reading each input once") {
  auto c = compile(mul_relu_add(), "fuse_eltwise_chain");
  REQUIRE(op_types(c) == std::vector<std::string>{onnxc::kFusedElementwiseOp});
  const onnxc::Node& n = *c.model.graph.nodes[0];
  CHECK(n.domain == onnxc::kFusedElementwiseDomain);
  CHECK(n.outputs[0]->name == "y");
  CHECK(fused_ops(n) == std::vector<std::string>{"Mul", "Relu", "Add"});
  // Inputs: x (the output's size: first, so the output may overwrite it), then the scalar s.
  REQUIRE(n.inputs.size() == 2);
  CHECK(n.inputs[0]->name == "x");
  CHECK(n.inputs[1]->name == "s");
  const std::vector<onnxc::FusedStep> steps = onnxc::fused_steps(n);
  CHECK(steps[0].args == std::vector<int64_t>{0, 1});                       // Mul(x, s)
  CHECK(steps[1].args == std::vector<int64_t>{onnxc::step_arg(0)});         // Relu(Mul)
  CHECK(steps[2].args == std::vector<int64_t>{onnxc::step_arg(1), 0});      // Add(Relu, x)
  CHECK(steps[0].functor == "rt::Mul{}");
  CHECK(c.fused_nodes == 2);

  auto off = compile(mul_relu_add(), "fuse_eltwise_chain_off", {"fuse-elementwise"});
  CHECK(op_types(off) == std::vector<std::string>{"Mul", "Relu", "Add"});
}

TEST_CASE("fuse-elementwise splits a chain where a value is read elsewhere: it stays a tensor") {
  SECTION("read by another node") {
    ModelBuilder b = mul_relu_add();
    b.output("z");
    b.node("Sigmoid", {"a"}, {"z"});
    auto c = compile(b, "fuse_eltwise_side_exit");
    CHECK(op_types(c) == std::vector<std::string>{"Mul", onnxc::kFusedElementwiseOp, "Sigmoid"});
    const onnxc::Node& rest = node_named(c, "y");
    CHECK(fused_ops(rest) == std::vector<std::string>{"Relu", "Add"});
    CHECK(rest.inputs[0]->name == "a");
  }
  SECTION("a graph output") {
    ModelBuilder b = mul_relu_add();
    b.output("r");
    auto c = compile(b, "fuse_eltwise_output_exit");
    CHECK(op_types(c) == std::vector<std::string>{onnxc::kFusedElementwiseOp, "Add"});
    CHECK(fused_ops(node_named(c, "r")) == std::vector<std::string>{"Mul", "Relu"});
  }
}

TEST_CASE("fuse-elementwise computes a value every reader of which is in the group once, for all of them") {
  // HardSwish written out: y = r * (r + 3) / 6 with r = Relu(x); r has two readers, both fused.
  ModelBuilder b;
  b.input("x", {16}).output("y").floats("three", {}, {3.0f}).floats("sixth", {}, {1.0f / 6});
  b.node("Relu", {"x"}, {"r"});
  b.node("Add", {"r", "three"}, {"p"});
  b.node("Mul", {"p", "sixth"}, {"q"});
  b.node("Mul", {"r", "q"}, {"y"});
  auto c = compile(b, "fuse_eltwise_dag");
  REQUIRE(op_types(c) == std::vector<std::string>{onnxc::kFusedElementwiseOp});
  const std::vector<onnxc::FusedStep> steps = onnxc::fused_steps(*c.model.graph.nodes[0]);
  REQUIRE(steps.size() == 4);
  CHECK(steps[1].args == std::vector<int64_t>{onnxc::step_arg(0), 1});                   // Add(r, three)
  CHECK(steps[3].args == std::vector<int64_t>{onnxc::step_arg(0), onnxc::step_arg(2)});  // Mul(r, q)
}

TEST_CASE("fuse-elementwise fuses broadcasts it indexes with three loops and leaves the others") {
  // x [2, 3, 4, 5] + b, then Relu.
  auto model = [](std::vector<int64_t> b_shape) {
    ModelBuilder m;
    m.input("x", {2, 3, 4, 5}).input("b", b_shape).output("y");
    m.node("Add", {"x", "b"}, {"a"});
    m.node("Relu", {"a"}, {"y"});
    return m;
  };
  SECTION("per channel: batch, channel, then the plane contiguous") {
    auto c = compile(model({1, 3, 1, 1}), "fuse_eltwise_per_channel");
    CHECK(op_types(c) == std::vector<std::string>{onnxc::kFusedElementwiseOp});
  }
  SECTION("per channel and column: four loops, left to the kernels") {
    auto c = compile(model({1, 3, 1, 5}), "fuse_eltwise_four_loops");
    CHECK(op_types(c) == std::vector<std::string>{"Add", "Relu"});
  }
}

TEST_CASE("fuse-elementwise does not recompute a smaller value per element, nor fuse Clip's run-time bounds") {
  SECTION("a per-channel intermediate stays a tensor") {
    ModelBuilder b;
    b.input("x", {1, 3, 4, 4}).input("g", {1, 3, 1, 1}).output("y");
    b.node("Sqrt", {"g"}, {"sg"});  // 3 elements, read by a 48-element Mul
    b.node("Mul", {"x", "sg"}, {"m"});
    b.node("Tanh", {"m"}, {"y"});
    auto c = compile(b, "fuse_eltwise_smaller");
    CHECK(op_types(c) == std::vector<std::string>{"Sqrt", onnxc::kFusedElementwiseOp});
  }
  SECTION("Clip with a bound computed at run time") {
    ModelBuilder b(13);
    b.input("x", {6}).input("hi", {}).output("y").floats("lo", {}, {0.0f});
    b.node("Neg", {"x"}, {"n"});
    b.node("Clip", {"n", "lo", "hi"}, {"y"});
    CHECK(op_types(compile(b, "fuse_eltwise_clip_runtime")) == std::vector<std::string>{"Neg", "Clip"});
  }
  SECTION("Clip with constant bounds, written into its functor") {
    ModelBuilder b(13);
    b.input("x", {6}).output("y").floats("lo", {}, {0.0f}).floats("hi", {}, {6.0f});
    b.node("Neg", {"x"}, {"n"});
    b.node("Clip", {"n", "lo", "hi"}, {"y"});
    auto c = compile(b, "fuse_eltwise_clip_const");
    REQUIRE(op_types(c) == std::vector<std::string>{onnxc::kFusedElementwiseOp});
    CHECK(onnxc::fused_steps(*c.model.graph.nodes[0])[1].functor == "rt::Clip<float>{rt::load(0.f), rt::load(6.f)}");
  }
}

TEST_CASE("fuse-elementwise keeps each step's element type: comparisons, Where and Cast") {
  ModelBuilder b;
  b.input("x", {4, 4}).output("y", {}, onnx::TensorProto::INT32).floats("zero", {}, {0.0f});
  b.node("Greater", {"x", "zero"}, {"positive"});
  b.node("Where", {"positive", "x", "zero"}, {"w"});
  auto& cast = b.node("Cast", {"w"}, {"y"});
  ModelBuilder::attr_int(cast, "to", onnx::TensorProto::INT32);
  auto c = compile(b, "fuse_eltwise_types");
  REQUIRE(op_types(c) == std::vector<std::string>{onnxc::kFusedElementwiseOp});
  const std::vector<onnxc::FusedStep> steps = onnxc::fused_steps(*c.model.graph.nodes[0]);
  REQUIRE(steps.size() == 3);
  CHECK(steps[0].dtype == onnxc::DType::Bool);
  CHECK(steps[1].dtype == onnxc::DType::Float);
  CHECK(steps[2].dtype == onnxc::DType::Int32);
  CHECK(steps[1].args == std::vector<int64_t>{onnxc::step_arg(0), 0, 1});  // Where(Greater, x, zero)
}

TEST_CASE("elementwise_loops merges the dims every operand reads alike") {
  using onnxc::elementwise_loops;
  SECTION("same shapes: one loop") {
    auto nest = elementwise_loops({{2, 3, 4}, {2, 3, 4}}, {2, 3, 4});
    CHECK(nest.extents == std::vector<int64_t>{24});
    CHECK(nest.strides[0] == std::vector<int64_t>{1});
  }
  SECTION("a scalar is read with stride 0") {
    auto nest = elementwise_loops({{2, 3, 4}, {}}, {2, 3, 4});
    CHECK(nest.extents == std::vector<int64_t>{24});
    CHECK(nest.strides[1] == std::vector<int64_t>{0});
  }
  SECTION("per channel of a batch: N, C, then H*W") {
    auto nest = elementwise_loops({{2, 3, 4, 5}, {3, 1, 1}}, {2, 3, 4, 5});
    CHECK(nest.extents == std::vector<int64_t>{2, 3, 20});
    CHECK(nest.strides[0] == std::vector<int64_t>{60, 20, 1});
    CHECK(nest.strides[1] == std::vector<int64_t>{0, 1, 0});
  }
  SECTION("a row vector over a matrix, dims of extent 1 dropped") {
    auto nest = elementwise_loops({{1, 6, 1, 8}, {8}}, {1, 6, 1, 8});
    CHECK(nest.extents == std::vector<int64_t>{6, 8});
    CHECK(nest.strides[1] == std::vector<int64_t>{0, 1});
  }
  SECTION("a single element") {
    auto nest = elementwise_loops({{1, 1}}, {1, 1});
    CHECK(nest.extents == std::vector<int64_t>{1});
  }
}
