#include <catch2/catch.hpp>

#include <fstream>

#include "frontend/load.h"
#include "model_builder.h"
#include "passes/pipeline.h"
#include "support/diagnostics.h"

using testing::ModelBuilder;

namespace {

// Compiles and returns every problem's text, or "" when it compiles.
std::string compile_errors(const std::string& path, onnxc::CompileOptions o = {}) {
  try {
    onnxc::compile_model(path, o);
    return "";
  } catch (const onnxc::CompileError& e) {
    std::string s;
    for (auto& p : e.problems()) s += onnxc::format_problem(path, p) + "\n";
    return s;
  }
}

}  // namespace

TEST_CASE("Conv infers its output shape from pads, strides and dilations") {
  ModelBuilder b;
  b.input("x", {1, 3, 32, 32}).output("y");
  b.floats("w", {8, 3, 3, 3}, std::vector<float>(8 * 27, 0.5f));
  auto& conv = b.node("Conv", {"x", "w"}, {"y"});
  ModelBuilder::attr_ints(conv, "pads", {1, 1, 1, 1});
  ModelBuilder::attr_ints(conv, "strides", {2, 2});
  ModelBuilder::attr_ints(conv, "dilations", {2, 1});
  onnxc::Model m = onnxc::check_model(b.write("conv_shape"), {});
  // height: (32 + 2 - (3-1)*2 - 1) / 2 + 1 = 15; width: (32 + 2 - 3) / 2 + 1 = 16
  CHECK(m.graph.outputs[0]->shape == onnxc::Shape{1, 8, 15, 16});
}

TEST_CASE("Reshape infers -1 from the other dims and copies 0 from the input") {
  ModelBuilder b;
  b.input("x", {2, 3, 4}).output("y").ints("shape", {3}, {0, -1, 2});
  b.node("Reshape", {"x", "shape"}, {"y"});
  onnxc::Model m = onnxc::check_model(b.write("reshape"), {});
  CHECK(m.graph.outputs[0]->shape == onnxc::Shape{2, 6, 2});
}

TEST_CASE("a cycle is refused, naming a node on it") {
  ModelBuilder b;
  b.input("x", {1}).output("c");
  b.node("Add", {"x", "c"}, {"a"}, "first");
  b.node("Relu", {"a"}, {"c"}, "second");
  std::string err = compile_errors(b.write("cycle"));
  CHECK_THAT(err, Catch::Contains("cycle"));
  CHECK_THAT(err, Catch::Contains("'first'"));
}

TEST_CASE("several independent problems are reported together") {
  ModelBuilder b;
  b.input("x", {1}).output("y");
  b.node("Relu", {"missing"}, {"a"}, "r1");
  b.node("Relu", {"x"}, {"a"}, "r2");  // 'a' assigned twice
  b.node("Relu", {"a"}, {"y"}, "r3");
  std::string err = compile_errors(b.write("many"));
  CHECK_THAT(err, Catch::Contains("input 'missing' is not defined"));
  CHECK_THAT(err, Catch::Contains("output 'a' is already defined"));
}

TEST_CASE("an unknown operator is refused as unsupported, naming node, op and opset") {
  ModelBuilder b;
  b.input("x", {1}).output("y");
  b.node("FancyOp", {"x"}, {"y"}, "mystery");
  std::string err = compile_errors(b.write("unknown_op"));
  CHECK_THAT(err, Catch::Contains("'mystery'"));
  CHECK_THAT(err, Catch::Contains("FancyOp"));
  CHECK_THAT(err, Catch::Contains("opset 13"));
}

TEST_CASE("an opset newer than onnxc knows is refused with what to do") {
  ModelBuilder b(99);
  b.input("x", {1}).output("y");
  b.node("Relu", {"x"}, {"y"});
  std::string err = compile_errors(b.write("new_opset"));
  CHECK_THAT(err, Catch::Contains("opset 99"));
  CHECK_THAT(err, Catch::Contains("fix:"));
}

TEST_CASE("a symbolic dim must be bound, and --dim binds it") {
  ModelBuilder b;
  b.input("x", {-1, 4}).output("y");
  b.node("Relu", {"x"}, {"y"});
  std::string path = b.write("symbolic");
  CHECK_THAT(compile_errors(path), Catch::Contains("'N'"));
  onnxc::CompileOptions o;
  o.dims["N"] = 3;
  onnxc::Model m = onnxc::check_model(path, o);
  CHECK(m.graph.outputs[0]->shape == onnxc::Shape{3, 4});
}

TEST_CASE("truncated and random files are refused with a clear error") {
  std::string path = "/tmp/onnxc-unit-garbage.onnx";
  {
    std::ofstream f(path, std::ios::binary);
    f << "\x08\x07\x12\xff\xff\xff\xff\x0f this is not a model";
  }
  CHECK_THAT(compile_errors(path), Catch::Contains("not a valid ONNX protobuf"));
  { std::ofstream f(path, std::ios::binary); }
  CHECK_THAT(compile_errors(path), Catch::Contains("empty"));
}

TEST_CASE("generated code is byte-identical for the same model and options") {
  std::string path = std::string(ONNXC_TEST_DIR) + "/models/mnist-cnn/model.onnx";
  onnxc::CompileOptions o;
  o.name = "m";
  auto a = onnxc::emit_code(onnxc::compile_model(path, o), o, "m.h", "m.cpp");
  auto b = onnxc::emit_code(onnxc::compile_model(path, o), o, "m.h", "m.cpp");
  CHECK(a.source == b.source);
  CHECK(a.header == b.header);
  CHECK_THAT(a.source, Catch::Contains("rt::conv("));
}

TEST_CASE("weights are written with exact bit patterns") {
  ModelBuilder b;
  b.input("x", {3}).output("y").floats("c", {3}, {0.1f, -3.4028235e38f, 1.17549435e-38f});
  b.node("Add", {"x", "c"}, {"y"});
  onnxc::CompileOptions o;
  auto code = onnxc::emit_code(onnxc::compile_model(b.write("bits"), o), o, "m.h", "m.cpp");
  CHECK_THAT(code.source, Catch::Contains("0.1f, -3.4028235e+38f, 1.1754944e-38f"));
}
