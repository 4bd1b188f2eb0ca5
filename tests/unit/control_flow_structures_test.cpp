// Control flow over compile-time structures and compile-time iteration numbers: a Loop carrying
// a sequence or needing its iteration number as a constant is unrolled, and an If returning
// sequences returns the tensors they hold. Checked through constant folding against values
// worked out by hand, and on the compiled graph's shape where the condition is a run-time input.
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

namespace {

void typed(onnx::ValueInfoProto* vi, const std::string& name, int dtype, std::vector<int64_t> dims) {
  vi->set_name(name);
  auto* tt = vi->mutable_type()->mutable_tensor_type();
  tt->set_elem_type(dtype);
  auto* shape = tt->mutable_shape();
  for (int64_t d : dims) shape->add_dim()->set_dim_value(d);
}

void sequence_of_floats(onnx::ValueInfoProto* vi, const std::string& name) {
  vi->set_name(name);
  vi->mutable_type()->mutable_sequence_type()->mutable_elem_type()->mutable_tensor_type()->set_elem_type(
      onnx::TensorProto::FLOAT);
}

onnx::NodeProto* add_node(onnx::GraphProto& g, const std::string& op, std::vector<std::string> in,
                          std::vector<std::string> out) {
  auto* n = g.add_node();
  n->set_op_type(op);
  for (auto& i : in) n->add_input(i);
  for (auto& o : out) n->add_output(o);
  return n;
}

void int64_initializer(onnx::GraphProto& g, const std::string& name, std::vector<int64_t> dims, int64_t v) {
  auto* t = g.add_initializer();
  t->set_name(name);
  t->set_data_type(onnx::TensorProto::INT64);
  for (int64_t d : dims) t->add_dims(d);
  t->add_int64_data(v);
}

onnx::GraphProto& graph_attr(onnx::NodeProto& n, const std::string& name, const std::string& graph_name) {
  auto* a = n.add_attribute();
  a->set_name(name);
  a->set_type(onnx::AttributeProto::GRAPH);
  a->mutable_g()->set_name(graph_name);
  return *a->mutable_g();
}

// A Loop body's first inputs (iteration number i, condition c) and its pass-through condition.
void loop_body_header(onnx::GraphProto& body) {
  typed(body.add_input(), "i", onnx::TensorProto::INT64, {});
  typed(body.add_input(), "c", onnx::TensorProto::BOOL, {});
  typed(body.add_output(), "c_out", onnx::TensorProto::BOOL, {});
  add_node(body, "Identity", {"c"}, {"c_out"});
}

// x[i : i + 1] (start_is_i) or x[0 : i + 1], from the body's iteration number i.
void slice_by_iteration(onnx::GraphProto& body, bool start_is_i, const std::string& out) {
  int64_initializer(body, "one", {}, 1);
  int64_initializer(body, "axis0", {1}, 0);
  int64_initializer(body, "zero", {1}, 0);
  add_node(body, "Add", {"i", "one"}, {"end"});
  add_node(body, "Unsqueeze", {"end", "axis0"}, {"end_1d"});
  if (start_is_i) add_node(body, "Unsqueeze", {"i", "axis0"}, {"start_1d"});
  add_node(body, "Slice", {"x", start_is_i ? "start_1d" : "zero", "end_1d"}, {out});
}

}  // namespace

TEST_CASE("A Loop carrying a sequence is unrolled: one element per iteration, each of its own shape") {
  ModelBuilder b(13);
  b.output("joined").output("length", {}, onnx::TensorProto::INT64);
  b.floats("x", {3}, {1, 2, 3});
  b.ints("M", {}, {3});
  ModelBuilder::attr_int(b.node("SequenceEmpty", {}, {"empty"}), "dtype", onnx::TensorProto::FLOAT);
  onnx::GraphProto& body = graph_attr(b.node("Loop", {"M", "", "empty"}, {"prefixes"}), "body", "body");
  loop_body_header(body);
  sequence_of_floats(body.add_input(), "s");
  sequence_of_floats(body.add_output(), "s_out");
  slice_by_iteration(body, false, "prefix");  // x[0 : i + 1]
  add_node(body, "SequenceInsert", {"s", "prefix"}, {"s_out"});
  ModelBuilder::attr_int(b.node("ConcatFromSequence", {"prefixes"}, {"joined"}), "axis", 0);
  b.node("SequenceLength", {"prefixes"}, {"length"});
  onnxc::Model m = onnxc::check_model(b.write("loop_unrolled_sequence"), {});
  CHECK(constant_values(*m.graph.outputs[0]) == std::vector<double>{1, 1, 2, 1, 2, 3});
  CHECK(constant_values(*m.graph.outputs[1]) == std::vector<double>{3});
}

TEST_CASE("A Loop whose body slices at its iteration number is unrolled, scan outputs stacked") {
  ModelBuilder b(13);
  b.output("sum", {1}).output("partial_sums", {3, 1});
  b.floats("x", {3}, {1, 2, 3});
  b.floats("y0", {1}, {10});
  b.ints("M", {}, {3});
  onnx::GraphProto& body = graph_attr(b.node("Loop", {"M", "", "y0"}, {"sum", "partial_sums"}), "body", "body");
  loop_body_header(body);
  typed(body.add_input(), "y", onnx::TensorProto::FLOAT, {1});
  typed(body.add_output(), "y_out", onnx::TensorProto::FLOAT, {1});
  typed(body.add_output(), "scan", onnx::TensorProto::FLOAT, {1});
  slice_by_iteration(body, true, "xi");  // x[i : i + 1]: a run-time start would leave no static shape
  add_node(body, "Add", {"y", "xi"}, {"y_out"});
  add_node(body, "Identity", {"y_out"}, {"scan"});
  onnxc::Model m = onnxc::check_model(b.write("loop_unrolled_iteration"), {});
  CHECK(constant_values(*m.graph.outputs[0]) == std::vector<double>{16});
  CHECK(m.graph.outputs[1]->shape == onnxc::Shape{3, 1});
  CHECK(constant_values(*m.graph.outputs[1]) == std::vector<double>{11, 13, 16});
}

namespace {

// If(cond) returning SequenceConstruct(then_elements...) or SequenceConstruct(else_elements...),
// concatenated into 'joined'.
std::string if_returning_sequences(const std::vector<std::string>& then_elements,
                                   const std::vector<std::string>& else_elements, const std::string& name) {
  ModelBuilder b(13);
  b.input("cond", {}, onnx::TensorProto::BOOL).output("joined");
  b.floats("a", {2}, {1, 2});
  b.floats("b", {2}, {3, 4});
  auto& n = b.node("If", {"cond"}, {"seq"});
  onnx::GraphProto& then_g = graph_attr(n, "then_branch", "then");
  onnx::GraphProto& else_g = graph_attr(n, "else_branch", "else");
  sequence_of_floats(then_g.add_output(), "then_seq");
  sequence_of_floats(else_g.add_output(), "else_seq");
  add_node(then_g, "SequenceConstruct", then_elements, {"then_seq"});
  add_node(else_g, "SequenceConstruct", else_elements, {"else_seq"});
  ModelBuilder::attr_int(b.node("ConcatFromSequence", {"seq"}, {"joined"}), "axis", 0);
  return b.write(name);
}

}  // namespace

TEST_CASE("An If returning sequences of the same structure returns their tensors at run time") {
  onnxc::Model m = onnxc::check_model(if_returning_sequences({"a", "b"}, {"b", "a"}, "if_sequences"), {});
  CHECK(m.graph.outputs[0]->shape == onnxc::Shape{4});
  const onnxc::Node* if_node = nullptr;
  for (const auto& n : m.graph.nodes)
    if (n->op_type == "If") if_node = n.get();
  REQUIRE(if_node);
  CHECK(if_node->outputs.size() == 2);  // the two tensors of the sequence
  for (const onnxc::Value* out : if_node->outputs) CHECK(out->shape == onnxc::Shape{2});

  // A branch may return a sequence of the enclosing graph (its tensors are read from outside).
  ModelBuilder outer(13);
  outer.input("cond", {}, onnx::TensorProto::BOOL).output("joined");
  outer.floats("a", {2}, {1, 2});
  outer.floats("b", {2}, {3, 4});
  outer.node("SequenceConstruct", {"a", "b"}, {"ab"});
  auto& n = outer.node("If", {"cond"}, {"seq"});
  onnx::GraphProto& then_g = graph_attr(n, "then_branch", "then");
  onnx::GraphProto& else_g = graph_attr(n, "else_branch", "else");
  sequence_of_floats(then_g.add_output(), "ab");
  sequence_of_floats(else_g.add_output(), "ba");
  add_node(else_g, "SequenceConstruct", {"b", "a"}, {"ba"});
  ModelBuilder::attr_int(outer.node("ConcatFromSequence", {"seq"}, {"joined"}), "axis", 0);
  CHECK(onnxc::check_model(outer.write("if_outer_sequence"), {}).graph.outputs[0]->shape == onnxc::Shape{4});

  const std::string error = compile_error(if_returning_sequences({"a", "b"}, {"a"}, "if_sequences_differ"));
  CHECK(error.find("is a sequence of 2 tensors in then_branch but a sequence of 1 tensor in else_branch") !=
        std::string::npos);
  CHECK(error.find("make 'cond' a constant") != std::string::npos);
}

TEST_CASE("An If branch returning a value of the enclosing graph gets its type and a copy of it") {
  ModelBuilder b(13);
  b.input("cond", {}, onnx::TensorProto::BOOL).input("x", {2}).output("y", {2});
  b.node("Mul", {"x", "x"}, {"x2"});
  auto& n = b.node("If", {"cond"}, {"y"});
  onnx::GraphProto& then_g = graph_attr(n, "then_branch", "then");
  onnx::GraphProto& else_g = graph_attr(n, "else_branch", "else");
  then_g.add_output()->set_name("x2");  // untyped: the type comes from the enclosing graph
  typed(else_g.add_output(), "nx", onnx::TensorProto::FLOAT, {2});
  add_node(else_g, "Neg", {"x"}, {"nx"});
  onnxc::Model m = onnxc::check_model(b.write("if_outer_tensor"), {});
  const onnxc::Node* if_node = nullptr;
  for (const auto& node : m.graph.nodes)
    if (node->op_type == "If") if_node = node.get();
  REQUIRE(if_node);
  CHECK(if_node->outputs[0]->shape == onnxc::Shape{2});
  const onnxc::Graph& then_body = *if_node->attr("then_branch")->g;
  REQUIRE(then_body.outputs[0]->producer);  // copied in the branch, so the branch writes its output
  CHECK(then_body.outputs[0]->producer->op_type == "Identity");
}

TEST_CASE("An If branch that does not fit the bound shapes names its If and the inputs behind the condition") {
  // y = If(rate == 16000) then Reshape(x, [2, 2]) else Reshape(x, [3, 3]): with x [4], only the
  // then_branch fits, and only pinning 'rate' lets the compiler skip the else_branch.
  ModelBuilder b(13);
  b.input("x", {4}).input("rate", {}, onnx::TensorProto::INT64).output("y", {2, 2});
  b.ints("r16k", {}, {16000}).ints("shape_2x2", {2}, {2, 2}).ints("shape_3x3", {2}, {3, 3});
  b.node("Equal", {"rate", "r16k"}, {"is_16k"});
  auto& n = b.node("If", {"is_16k"}, {"y"}, "pick_rate");
  onnx::GraphProto& then_g = graph_attr(n, "then_branch", "then");
  onnx::GraphProto& else_g = graph_attr(n, "else_branch", "else");
  typed(then_g.add_output(), "y_then", onnx::TensorProto::FLOAT, {2, 2});
  typed(else_g.add_output(), "y_else", onnx::TensorProto::FLOAT, {2, 2});
  add_node(then_g, "Reshape", {"x", "shape_2x2"}, {"y_then"});
  add_node(else_g, "Reshape", {"x", "shape_3x3"}, {"y_else"});
  const std::string path = b.write("if_branch_misfit");

  try {
    onnxc::compile_model(path, {});
    FAIL("expected a CompileError");
  } catch (const onnxc::CompileError& e) {
    CHECK(e.inputs_to_pin() == std::vector<std::string>{"rate"});
    const std::string text = e.what();
    CHECK_THAT(text, Catch::Contains("in the else_branch of If 'pick_rate'"));
    CHECK_THAT(text, Catch::Contains("--constant rate=VALUE.pb"));
  }
  onnxc::CompileOptions pinned;
  pinned.constants["rate"] = {16000};
  CHECK(onnxc::compile_model(path, pinned).model.graph.outputs[0]->shape == onnxc::Shape{2, 2});
}
