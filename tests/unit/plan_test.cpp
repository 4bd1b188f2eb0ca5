#include <catch2/catch.hpp>

#include "model_builder.h"
#include "passes/pipeline.h"

using testing::ModelBuilder;

namespace {

const onnxc::TensorPlace& place_of(const onnxc::Compilation& c, const std::string& name) {
  return c.program.tensors.at(c.model.graph.find(name));
}

}  // namespace

TEST_CASE("an activation whose input dies is computed in place") {
  ModelBuilder b;
  b.input("x", {1, 4}).output("y").floats("w", {4, 4}, std::vector<float>(16, 0.25f));
  b.node("MatMul", {"x", "w"}, {"a"});
  b.node("Relu", {"a"}, {"r"});
  b.node("MatMul", {"r", "w"}, {"y"});
  onnxc::CompileOptions o;
  o.disabled_passes = {"fuse-activation"};  // which would make the first MatMul a Gemm applying the Relu
  auto c = onnxc::compile_model(b.write("inplace"), o);
  CHECK(place_of(c, "r").storage == onnxc::Storage::Alias);
  CHECK(place_of(c, "r").in_place);
  CHECK(c.program.arena_bytes == 16);  // one [1, 4] float buffer serves a and r
}

TEST_CASE("an input still read later is not overwritten in place") {
  ModelBuilder b;
  b.input("x", {1, 4}).output("y").floats("w", {4, 4}, std::vector<float>(16, 0.25f));
  b.node("MatMul", {"x", "w"}, {"a"});
  b.node("Relu", {"a"}, {"r"});
  b.node("Add", {"r", "a"}, {"y"});
  onnxc::CompileOptions o;
  o.disabled_passes = {"fuse-elementwise"};  // which would compute r inside Add's loop, no tensor
  auto c = onnxc::compile_model(b.write("not_inplace"), o);
  CHECK(place_of(c, "r").storage == onnxc::Storage::Arena);
  CHECK(place_of(c, "r").offset != place_of(c, "a").offset);
}

TEST_CASE("views alias their input and graph outputs are written in the caller's buffer") {
  ModelBuilder b;
  b.input("x", {2, 3}).output("y").ints("shape", {1}, {6}).floats("w", {6}, std::vector<float>(6, 1.f));
  b.node("Relu", {"x"}, {"r"});
  b.node("Reshape", {"r", "shape"}, {"flat"});
  b.node("Add", {"flat", "w"}, {"y"});
  auto c = onnxc::compile_model(b.write("views"), {});
  CHECK(place_of(c, "flat").storage == onnxc::Storage::Alias);
  CHECK(place_of(c, "y").storage == onnxc::Storage::Output);
  CHECK(place_of(c, "x").storage == onnxc::Storage::Input);
  CHECK(c.program.arena_bytes == 32);  // only r: 24 bytes rounded up to 16
}

TEST_CASE("fold-batchnorm removes a BatchNormalization after a Conv, and can be turned off") {
  std::string path = std::string(ONNXC_TEST_DIR) + "/models/fusion/conv_bn/model.onnx";
  onnxc::CompileOptions on, off;
  off.disabled_passes.insert("fold-batchnorm");
  CHECK(onnxc::compile_model(path, on).program.main.steps.size() == 1);
  CHECK(onnxc::compile_model(path, off).program.main.steps.size() == 2);
}

TEST_CASE("reorder: branches run one after the other when that lowers the peak, else the file's order stays") {
  // Two branches x -> wide [1, 64] -> narrow [1, 4], joined by an Add. The file computes both
  // wide tensors first (peak 2 x 256 bytes + 16); branch by branch needs one wide tensor at a time.
  ModelBuilder b;
  b.input("x", {1, 4}).output("y");
  b.floats("up", {4, 64}, std::vector<float>(256, 0.5f)).floats("down", {64, 4}, std::vector<float>(256, 0.25f));
  b.node("MatMul", {"x", "up"}, {"wide1"}, "wide1");
  b.node("MatMul", {"x", "up"}, {"wide2"}, "wide2");
  b.node("MatMul", {"wide1", "down"}, {"narrow1"}, "narrow1");
  b.node("MatMul", {"wide2", "down"}, {"narrow2"}, "narrow2");
  b.node("Add", {"narrow1", "narrow2"}, {"y"}, "add");
  const std::string path = b.write("reorder_branches");
  auto c = onnxc::compile_model(path, {});
  std::vector<std::string> order;
  for (const onnxc::Step& s : c.program.main.steps) order.push_back(s.node->name);
  CHECK(order == std::vector<std::string>{"wide1", "narrow1", "wide2", "narrow2", "add"});
  CHECK(c.program.peak_live_bytes == 256 + 16 + 16);  // wide2 and both narrow tensors

  onnxc::CompileOptions off;
  off.disabled_passes.insert("reorder");
  auto file = onnxc::compile_model(path, off);
  CHECK(file.program.main.steps[1].node->name == "wide2");
  CHECK(file.program.peak_live_bytes == 256 + 256 + 16);
}

namespace {

std::vector<std::string> step_ops(const onnxc::Compilation& c) {
  std::vector<std::string> ops;
  for (const onnxc::Step& s : c.program.main.steps) ops.push_back(s.node->op_type);
  return ops;
}

}  // namespace

TEST_CASE("fold-affine folds Mul, Add, Sub and Div by per-channel constants into the Conv before them") {
  // tests/models/fusion/conv_affine (validated against numpy by ctest model.fusion.conv_affine):
  // Conv, then Mul, Add, Sub, Sub (constant first), Div, Relu.
  std::string path = std::string(ONNXC_TEST_DIR) + "/models/fusion/conv_affine/model.onnx";
  onnxc::CompileOptions on, off;
  off.disabled_passes.insert("fold-affine");
  CHECK(step_ops(onnxc::compile_model(path, on)) == std::vector<std::string>{"Conv"});
  const auto unfolded = onnxc::compile_model(path, off);
  CHECK(unfolded.program.main.steps.size() == 2);  // the Conv and one fused elementwise loop
  CHECK(unfolded.program.main.steps[0].node->op_type == "Conv");
}

TEST_CASE("fold-affine leaves constants that vary along other axes, and a node whose input is read twice") {
  ModelBuilder b;
  b.input("x", {1, 2, 3, 3}).output("y").output("z");
  b.floats("w", {2, 2, 1, 1}, {1, 2, 3, 4}).floats("rows", {3, 1}, {1, 2, 3}).floats("k", {2, 1, 1}, {5, 6});
  b.node("Conv", {"x", "w"}, {"c"});
  b.node("Mul", {"c", "rows"}, {"y"});  // varies along H: not per channel
  b.node("Conv", {"x", "w"}, {"d"});
  b.node("Add", {"d", "k"}, {"z0"});
  b.node("Add", {"z0", "d"}, {"z"});    // d is read twice: the first Add cannot take it over
  onnxc::CompileOptions o;
  o.disabled_passes = {"fuse-elementwise"};
  CHECK(step_ops(onnxc::compile_model(b.write("fold_affine_kept"), o)) ==
        std::vector<std::string>{"Conv", "Mul", "Conv", "Add", "Add"});
}

TEST_CASE("fold-affine turns MatMul + Add into a Gemm; fuse-activation takes written-out GELU through the view") {
  // tests/models/fusion/matmul_affine: MatMul [2,3,5] x [5,4], Mul, Add, GELU written out; a 2-d
  // MatMul minus a constant; a Gemm divided by a constant.
  std::string path = std::string(ONNXC_TEST_DIR) + "/models/fusion/matmul_affine/model.onnx";
  auto c = onnxc::compile_model(path, {});
  CHECK(step_ops(c) == std::vector<std::string>{"Reshape", "Gemm", "Reshape", "Gemm", "Gemm"});
  CHECK(c.program.main.steps[1].node->attr_string("onnxc.activation", "") == "Gelu");
  onnxc::CompileOptions no_activation;
  no_activation.disabled_passes = {"fuse-activation", "fuse-elementwise"};
  CHECK(step_ops(onnxc::compile_model(path, no_activation)) ==
        std::vector<std::string>{"Reshape", "Gemm", "Reshape", "Div", "Erf", "Add", "Mul", "Mul", "Gemm", "Gemm"});
  onnxc::CompileOptions off;
  off.disabled_passes = {"fold-affine", "fuse-elementwise", "fuse-activation"};
  // 12 ops, and pack-weights' Reshape views around the 3-d MatMul by constant weights, which it
  // computes as one Gemm over all of A's rows.
  CHECK(onnxc::compile_model(path, off).program.main.steps.size() == 14);
}

TEST_CASE("fuse-activation merges Gelu-20 into a Conv and a Gemm") {
  std::string path = std::string(ONNXC_TEST_DIR) + "/models/fusion/conv_gelu/model.onnx";
  auto c = onnxc::compile_model(path, {});
  REQUIRE(step_ops(c) == std::vector<std::string>{"Conv", "Gemm"});
  CHECK(c.program.main.steps[0].node->attr_string("onnxc.activation", "") == "GeluTanh");
  CHECK(c.program.main.steps[1].node->attr_string("onnxc.activation", "") == "Gelu");
}

TEST_CASE("fuse-activation makes a MatMul with constant weights a Gemm to take its activation") {
  // tests/models/fusion/matmul_activation: MatMul [2,3,5] x W + Relu, [3,5] x W2 + Sigmoid, and
  // [3,5] x an input + Tanh (not constant weights: no Gemm, the Tanh stays).
  std::string path = std::string(ONNXC_TEST_DIR) + "/models/fusion/matmul_activation/model.onnx";
  auto c = onnxc::compile_model(path, {});
  REQUIRE(step_ops(c) == std::vector<std::string>{"Reshape", "Gemm", "Reshape", "Gemm", "MatMul", "Tanh"});
  CHECK(c.program.main.steps[1].node->attr_string("onnxc.activation", "") == "Relu");
  CHECK(c.program.main.steps[3].node->attr_string("onnxc.activation", "") == "Sigmoid");
  onnxc::CompileOptions off;
  off.disabled_passes = {"fuse-activation", "fuse-elementwise"};
  // Without the fusion the activations stay steps of their own; pack-weights still computes the
  // MatMuls by constant weights as Gemms (the 3-d one over all of A's rows, between Reshape views).
  CHECK(step_ops(onnxc::compile_model(path, off)) ==
        std::vector<std::string>{"Reshape", "Gemm", "Reshape", "Relu", "Gemm", "Sigmoid", "MatMul", "Tanh"});
}
