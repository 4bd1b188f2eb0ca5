// Gradient (ai.onnx.preview.training): reverse-mode differentiation built at compile time,
// checked through constant folding against derivatives worked out by hand.
#include <catch2/catch.hpp>

#include <string>
#include <vector>

#include "compile_helpers.h"
#include "model_builder.h"
#include "passes/pipeline.h"
#include "support/diagnostics.h"

using testing::constant_values;
using testing::ModelBuilder;

namespace {

// A Gradient node of y with respect to xs (its inputs), in a model importing the training domain.
void gradient(ModelBuilder& b, const std::vector<std::string>& xs, const std::string& y,
              const std::vector<std::string>& outputs) {
  auto* os = b.proto().add_opset_import();
  os->set_domain("ai.onnx.preview.training");
  os->set_version(1);
  auto& n = b.node("Gradient", xs, outputs);
  n.set_domain("ai.onnx.preview.training");
  auto* a = n.add_attribute();
  a->set_name("xs");
  a->set_type(onnx::AttributeProto::STRINGS);
  for (const auto& x : xs) a->add_strings(x);
  auto* ya = n.add_attribute();
  ya->set_name("y");
  ya->set_type(onnx::AttributeProto::STRING);
  ya->set_s(y);
}

}  // namespace

TEST_CASE("Gradient of a/b - a*b with b broadcast, and of an unrelated x") {
  ModelBuilder b(13);
  b.output("y", {2, 3}).output("dy_da", {2, 3}).output("dy_db", {3}).output("dy_dc", {2});
  b.floats("a", {2, 3}, {1, 2, 3, 4, 5, 6});
  b.floats("b", {3}, {1, 2, 4});
  b.floats("c", {2}, {7, 8});
  b.node("Div", {"a", "b"}, {"q"});
  b.node("Mul", {"a", "b"}, {"p"});
  b.node("Sub", {"q", "p"}, {"y"});
  gradient(b, {"a", "b", "c"}, "y", {"dy_da", "dy_db", "dy_dc"});
  onnxc::Model m = onnxc::check_model(b.write("gradient_broadcast"), {});
  // d/da (a/b - ab) = 1/b - b, per column.
  CHECK(constant_values(*m.graph.outputs[1]) == std::vector<double>{0, -1.5, -3.75, 0, -1.5, -3.75});
  // d/db = -a/b^2 - a, summed over the rows b was broadcast along: -(5, 7, 9) * (1/b^2 + 1).
  CHECK(m.graph.outputs[2]->shape == onnxc::Shape{3});
  CHECK(constant_values(*m.graph.outputs[2]) == std::vector<double>{-10, -8.75, -9.5625});
  CHECK(constant_values(*m.graph.outputs[3]) == std::vector<double>{0, 0});  // y does not depend on c
}

TEST_CASE("Gradient refuses operators it cannot differentiate, naming them") {
  ModelBuilder b(13);
  b.output("y", {2}).output("dy_da", {2});
  b.floats("a", {2}, {-1, 2});
  b.node("Relu", {"a"}, {"r"});
  b.node("Neg", {"r"}, {"y"});
  gradient(b, {"a"}, "y", {"dy_da"});
  try {
    onnxc::check_model(b.write("gradient_relu"), {});
    FAIL("a Gradient through Relu was accepted");
  } catch (const onnxc::CompileError& e) {
    CHECK(std::string(e.what()).find("(Relu") != std::string::npos);
    CHECK(std::string(e.what()).find("onnxc differentiates Add, Sub, Mul, Div, Neg and Identity") != std::string::npos);
  }
}
