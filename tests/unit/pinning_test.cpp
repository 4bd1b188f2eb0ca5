// Values needed at compile time: errors that name the graph inputs to pin, and pinning them.
#include <catch2/catch.hpp>

#include "model_builder.h"
#include "passes/passes.h"
#include "passes/pipeline.h"
#include "support/diagnostics.h"

using testing::ModelBuilder;

namespace {

// y = Reshape(x, shape) with x [2, 3, 4]; `shape` is computed from the graph input `s`
// (through Add with a constant when through_add).
std::string reshape_model(bool through_add) {
  ModelBuilder b;
  b.input("x", {2, 3, 4}).input("s", {3}, onnx::TensorProto::INT64).output("y");
  if (through_add) {
    b.ints("zero", {3}, {0, 0, 0});
    b.node("Add", {"s", "zero"}, {"shape"});
  }
  b.node("Reshape", {"x", through_add ? "shape" : "s"}, {"y"}, "reshape");
  return b.write(through_add ? "pin_reshape_add" : "pin_reshape");
}

onnxc::CompileError compile_error(const std::string& path, const onnxc::CompileOptions& o = {}) {
  try {
    onnxc::compile_model(path, o);
  } catch (const onnxc::CompileError& e) {
    return e;
  }
  FAIL("expected a CompileError");
  throw;  // not reached
}

onnxc::Tensor int64_tensor(std::vector<int64_t> values) {
  onnxc::Tensor t(onnxc::DType::Int64, {static_cast<int64_t>(values.size())});
  for (std::size_t i = 0; i < values.size(); ++i) t.data<int64_t>()[i] = values[i];
  return t;
}

}  // namespace

TEST_CASE("a Reshape whose target shape is a graph input names it and the --constant that pins it") {
  onnxc::CompileError e = compile_error(reshape_model(false));
  CHECK(e.unsupported());
  CHECK(e.inputs_to_pin() == std::vector<std::string>{"s"});
  REQUIRE(e.problems().size() == 1);
  const onnxc::Problem& p = e.problems()[0];
  CHECK_THAT(p.what, Catch::Contains("input 1 ('s', the target shape) is computed at run time"));
  CHECK_THAT(p.fix, Catch::Contains("graph input 's': if it is always the same, pin it with --constant s=VALUE.pb"));
  CHECK_THAT(p.fix, Catch::Contains("make it an initializer"));  // the other advice stays
}

TEST_CASE("a needed value computed from a graph input by foldable nodes names that input") {
  CHECK(compile_error(reshape_model(true)).inputs_to_pin() == std::vector<std::string>{"s"});
}

TEST_CASE("a pinned input is folded in and stays in the signature") {
  onnxc::CompileOptions o;
  o.constant_tensors["s"] = int64_tensor({4, -1, 2});
  onnxc::Compilation c = onnxc::compile_model(reshape_model(true), o);
  const onnxc::Graph& g = c.model.graph;
  REQUIRE(g.inputs.size() == 2);
  CHECK(g.inputs[1]->name == "s");
  CHECK(g.outputs[0]->shape == onnxc::Shape{4, 3, 2});
}

TEST_CASE("a pinned tensor must have the input's type and shape") {
  onnxc::CompileOptions o;
  o.constant_tensors["s"] = int64_tensor({4, 6});
  onnxc::CompileError e = compile_error(reshape_model(false), o);
  REQUIRE(e.problems().size() == 1);
  CHECK(e.problems()[0].kind == onnxc::ErrorKind::Usage);
  CHECK_THAT(e.problems()[0].what, Catch::Contains("gives a tensor of type int64 and shape [2]; the input has type int64 and shape [3]"));
  CHECK(e.inputs_to_pin().empty());
}

TEST_CASE("uint16 test data stands for bfloat16 bits, and only for bfloat16") {
  onnxc::Tensor t(onnxc::DType::Uint16, {2});
  t.data<uint16_t>()[0] = 0x3f80;  // 1.0 as bfloat16
  onnxc::take_uint16_as_bfloat16_bits(t, onnxc::DType::Float);
  CHECK(t.dtype == onnxc::DType::Uint16);
  onnxc::take_uint16_as_bfloat16_bits(t, onnxc::DType::BFloat16);
  CHECK(t.dtype == onnxc::DType::BFloat16);
  CHECK(t.data<uint16_t>()[0] == 0x3f80);
}

TEST_CASE("pinning is advised only for the main graph's inputs, and only when every problem can use it") {
  onnxc::Graph g;
  onnxc::Value* s = g.add_value("s");
  s->is_graph_input = true;
  g.inputs.push_back(s);
  onnxc::Problem main_input{onnxc::ErrorKind::Unsupported, "node 0", "needs s", "", {"s"}};
  onnxc::Problem body_input{onnxc::ErrorKind::Unsupported, "node 1", "needs i", "", {"i"}};

  onnxc::CompileError advised = onnxc::with_pinning_advice(g, onnxc::CompileError({main_input}));
  CHECK(advised.inputs_to_pin() == std::vector<std::string>{"s"});
  CHECK_THAT(advised.problems()[0].fix, Catch::Contains("--constant s=VALUE.pb"));

  // 'i' is not an input of the main graph (a loop body's, say): no advice, and nothing to pin.
  onnxc::CompileError not_advised = onnxc::with_pinning_advice(g, onnxc::CompileError({body_input}));
  CHECK(not_advised.inputs_to_pin().empty());
  CHECK(not_advised.problems()[0].fix.empty());

  // One problem that pinning cannot fix means pinning cannot make the compilation succeed.
  onnxc::Problem other{onnxc::ErrorKind::Unsupported, "node 2", "unsupported", "", {}};
  CHECK(onnxc::CompileError({main_input, other}).inputs_to_pin().empty());
}
