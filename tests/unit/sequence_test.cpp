// Sequences and optionals of compile-time structure: their operators rewritten into tensor
// operators on the elements, checked through constant folding against values worked out by hand;
// sequence graph inputs and outputs as one tensor parameter per element.
#include <catch2/catch.hpp>

#include <string>
#include <vector>

#include "compile_helpers.h"
#include "model_builder.h"
#include "passes/pipeline.h"
#include "support/diagnostics.h"

using testing::compile_error;
using testing::constant_values;
using testing::ModelBuilder;

TEST_CASE("Construct, insert, erase, length and concat of a sequence") {
  ModelBuilder b(12);
  b.output("joined").output("length", {}, onnx::TensorProto::INT64).output("stacked");
  b.floats("a", {2}, {1, 2});
  b.floats("b", {2}, {3, 4});
  b.floats("c", {2}, {5, 6});
  b.ints("front", {}, {0});
  b.ints("second", {}, {1});
  b.node("SequenceConstruct", {"a", "b"}, {"ab"});
  b.node("SequenceInsert", {"ab", "c", "front"}, {"cab"});   // [c, a, b]
  b.node("SequenceInsert", {"cab", "a"}, {"caba"});          // [c, a, b, a]
  b.node("SequenceErase", {"caba", "second"}, {"cba"});      // [c, b, a]
  ModelBuilder::attr_int(b.node("ConcatFromSequence", {"cba"}, {"joined"}), "axis", 0);
  b.node("SequenceLength", {"caba"}, {"length"});
  auto& stack = b.node("ConcatFromSequence", {"cba"}, {"stacked"});
  ModelBuilder::attr_int(stack, "axis", -1);
  ModelBuilder::attr_int(stack, "new_axis", 1);
  onnxc::Model m = onnxc::check_model(b.write("sequence_rearrange"), {});
  CHECK(constant_values(*m.graph.outputs[0]) == std::vector<double>{5, 6, 3, 4, 1, 2});
  CHECK(constant_values(*m.graph.outputs[1]) == std::vector<double>{4});
  // new_axis=1 at the last axis: [2, 3], column j is the j-th element.
  CHECK(m.graph.outputs[2]->shape == onnxc::Shape{2, 3});
  CHECK(constant_values(*m.graph.outputs[2]) == std::vector<double>{5, 3, 1, 6, 4, 2});
}

TEST_CASE("SplitToSequence: ones, a scalar chunk size, explicit sizes, keepdims=0; SequenceAt from the back") {
  ModelBuilder b(12);
  b.output("last_chunk").output("middle_row").output("count", {}, onnx::TensorProto::INT64);
  b.floats("x", {5}, {0, 1, 2, 3, 4});
  b.floats("m", {3, 2}, {0, 1, 2, 3, 4, 5});
  b.ints("chunk", {}, {2});
  b.ints("sizes", {2}, {1, 4});
  b.ints("minus_one", {}, {-1});
  b.ints("one", {}, {1});
  b.node("SplitToSequence", {"x", "chunk"}, {"chunks"});  // [0 1] [2 3] [4]
  b.node("SequenceAt", {"chunks", "minus_one"}, {"last_chunk"});
  ModelBuilder::attr_int(b.node("SplitToSequence", {"m"}, {"rows"}), "keepdims", 0);  // three [2] rows
  b.node("SequenceAt", {"rows", "one"}, {"middle_row"});
  b.node("SplitToSequence", {"x", "sizes"}, {"parts"});
  b.node("SequenceLength", {"parts"}, {"count"});
  onnxc::Model m = onnxc::check_model(b.write("sequence_split"), {});
  CHECK(m.graph.outputs[0]->shape == onnxc::Shape{1});
  CHECK(constant_values(*m.graph.outputs[0]) == std::vector<double>{4});
  CHECK(m.graph.outputs[1]->shape == onnxc::Shape{2});
  CHECK(constant_values(*m.graph.outputs[1]) == std::vector<double>{2, 3});
  CHECK(constant_values(*m.graph.outputs[2]) == std::vector<double>{2});
}

TEST_CASE("Sequence positions out of range and run-time positions are refused, naming the node") {
  ModelBuilder b(12);
  b.output("y");
  b.floats("a", {2}, {1, 2});
  b.ints("two", {}, {2});
  b.node("SequenceConstruct", {"a", "a"}, {"s"});
  b.node("SequenceAt", {"s", "two"}, {"y"}, "pick");
  const std::string e = compile_error(b.write("sequence_at_range"));
  CHECK(e.find("'pick'") != std::string::npos);
  CHECK(e.find("position 2 is outside [-2, 1]") != std::string::npos);

  ModelBuilder r(12);
  r.input("pos", {}, onnx::TensorProto::INT64).output("y");
  r.floats("a", {2}, {1, 2});
  r.node("SequenceConstruct", {"a"}, {"s"});
  r.node("SequenceAt", {"s", "pos"}, {"y"}, "pick");
  CHECK(compile_error(r.write("sequence_at_runtime")).find("needs it at compile time") != std::string::npos);
}

TEST_CASE("Sequence graph inputs and outputs become one tensor parameter per element") {
  ModelBuilder b(12);
  auto sequence_of_floats = [](onnx::ValueInfoProto* vi, const char* name) {
    vi->set_name(name);
    vi->mutable_type()->mutable_sequence_type()->mutable_elem_type()->mutable_tensor_type()->set_elem_type(
        onnx::TensorProto::FLOAT);
  };
  sequence_of_floats(b.proto().mutable_graph()->add_input(), "s");
  b.input("t", {2});
  sequence_of_floats(b.proto().mutable_graph()->add_output(), "u");
  b.node("SequenceInsert", {"s", "t"}, {"u"});
  const std::string path = b.write("sequence_io");

  onnxc::CompileOptions o;
  o.sequence_shapes["s"] = {{3}, {1}};
  onnxc::Model m = onnxc::check_model(path, o);
  std::vector<std::string> inputs, outputs;
  for (const onnxc::Value* v : m.graph.inputs) inputs.push_back(v->name + onnxc::shape_str(v->shape));
  for (const onnxc::Value* v : m.graph.outputs) outputs.push_back(v->name + onnxc::shape_str(v->shape));
  CHECK(inputs == std::vector<std::string>{"s_0[3]", "s_1[1]", "t[2]"});
  CHECK(outputs == std::vector<std::string>{"u_0[3]", "u_1[1]", "u_2[2]"});

  try {
    onnxc::check_model(path, {});
    FAIL("a sequence input without element shapes was accepted");
  } catch (const onnxc::CompileError& e) {
    CHECK(std::string(e.what()).find("input 's'") != std::string::npos);
    CHECK(std::string(e.what()).find("length and element shapes are not known at compile time") != std::string::npos);
  }
}

namespace {

// Optional() of a float tensor type, holding nothing.
void empty_optional(ModelBuilder& b, const std::string& out) {
  auto& n = b.node("Optional", {}, {out});
  auto* type = n.add_attribute();
  type->set_name("type");
  type->set_type(onnx::AttributeProto::TYPE_PROTO);
  type->mutable_tp()->mutable_tensor_type()->set_elem_type(onnx::TensorProto::FLOAT);
}

}  // namespace

TEST_CASE("Optionals of known presence: HasElement folds to a constant, GetElement reads the content") {
  ModelBuilder b(16);
  b.output("has", {}, onnx::TensorProto::BOOL).output("has_not", {}, onnx::TensorProto::BOOL).output("got");
  b.floats("a", {2}, {7, 8});
  b.node("Optional", {"a"}, {"full"});
  empty_optional(b, "empty");
  b.node("OptionalHasElement", {"full"}, {"has"});
  b.node("OptionalHasElement", {"empty"}, {"has_not"});
  b.node("OptionalGetElement", {"full"}, {"got"});
  onnxc::Model m = onnxc::check_model(b.write("optional"), {});
  CHECK(constant_values(*m.graph.outputs[0]) == std::vector<double>{1});
  CHECK(constant_values(*m.graph.outputs[1]) == std::vector<double>{0});
  CHECK(constant_values(*m.graph.outputs[2]) == std::vector<double>{7, 8});

  ModelBuilder e(16);
  e.output("y");
  empty_optional(e, "empty");
  e.node("OptionalGetElement", {"empty"}, {"y"}, "get");
  const std::string error = compile_error(e.write("optional_get_empty"));
  CHECK(error.find("'get'") != std::string::npos);
  CHECK(error.find("is empty (known at compile time)") != std::string::npos);
}
