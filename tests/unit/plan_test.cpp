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
  auto c = onnxc::compile_model(b.write("inplace"), {});
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
  auto c = onnxc::compile_model(b.write("not_inplace"), {});
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
