// Shape and data-movement operators on hand-computed cases: the runtime kernels directly,
// and whole operators through shape inference + constant folding (which calls the same
// kernels as the generated code).
#include <catch2/catch.hpp>

#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "compile_helpers.h"
#include "model_builder.h"
#include "onnxc/gather.h"
#include "onnxc/layout.h"
#include "onnxc/pad.h"
#include "passes/pipeline.h"
#include "support/diagnostics.h"

using testing::compile_error;
using testing::ModelBuilder;

namespace {

void attr_string(onnx::NodeProto& n, const std::string& name, const std::string& v) {
  auto* a = n.add_attribute();
  a->set_name(name);
  a->set_type(onnx::AttributeProto::STRING);
  a->set_s(v);
}

// Compiles the model (everything constant, so it folds) and returns output 0's values.
std::vector<double> folded_output(ModelBuilder& b, const std::string& name, onnxc::Shape* shape = nullptr) {
  onnxc::Model m = onnxc::check_model(b.write(name), {});
  const onnxc::Value* y = m.graph.outputs[0];
  REQUIRE(y->constant);
  if (shape) *shape = y->shape;
  std::vector<double> v;
  for (int64_t i = 0; i < y->constant->numel(); ++i) v.push_back(y->constant->float_at(i));
  return v;
}

std::vector<float> iota(int n) {
  std::vector<float> v;
  for (int i = 0; i < n; ++i) v.push_back(static_cast<float>(i));
  return v;
}

}  // namespace

// ---- kernels ----

TEST_CASE("strided_copy walks negative strides from an offset pointer") {
  // x is 3x4 = 0..11; read rows 2, 0 (stride -8) and columns 3, 2, 1 (stride -1).
  std::vector<float> x = iota(12), y(6);
  const onnxc::rt::index_t shape[] = {2, 3}, strides[] = {-8, -1};
  onnxc::rt::strided_copy(x.data() + 11, y.data(), shape, strides, 2);
  CHECK(y == std::vector<float>{11, 10, 9, 3, 2, 1});
}

TEST_CASE("strided_copy with zero strides broadcasts (Expand/Tile)") {
  std::vector<int> x = {1, 2}, y(6);
  const onnxc::rt::index_t shape[] = {3, 2}, strides[] = {0, 1};
  onnxc::rt::strided_copy(x.data(), y.data(), shape, strides, 2);
  CHECK(y == std::vector<int>{1, 2, 1, 2, 1, 2});
}

TEST_CASE("pad_source maps padded coordinates back into the source") {
  using onnxc::rt::PadMode;
  using onnxc::rt::pad_source;
  // Source of 3 elements, 2 in front: output 0..6 reads source -2..4.
  std::vector<onnxc::rt::index_t> reflect, edge, wrap, constant;
  for (int o = 0; o < 7; ++o) {
    reflect.push_back(pad_source(o, 2, 3, PadMode::Reflect));
    edge.push_back(pad_source(o, 2, 3, PadMode::Edge));
    wrap.push_back(pad_source(o, 2, 3, PadMode::Wrap));
    constant.push_back(pad_source(o, 2, 3, PadMode::Constant));
  }
  CHECK(reflect == std::vector<onnxc::rt::index_t>{2, 1, 0, 1, 2, 1, 0});
  CHECK(edge == std::vector<onnxc::rt::index_t>{0, 0, 0, 1, 2, 2, 2});
  CHECK(wrap == std::vector<onnxc::rt::index_t>{1, 2, 0, 1, 2, 0, 1});
  CHECK(constant == std::vector<onnxc::rt::index_t>{-1, -1, 0, 1, 2, -1, -1});
  CHECK(pad_source(5, 2, 1, PadMode::Reflect) == 0);  // a single element reflects onto itself
}

TEST_CASE("gather wraps negative indices and clamps out-of-range ones at run time") {
  const float x[] = {10, 20, 30, 40};
  const int32_t idx[] = {-1, 0, -4, 7, -9};
  float y[5];
  onnxc::rt::gather(x, idx, y, 1, 4, 5, 1);
  CHECK(std::vector<float>(y, y + 5) == std::vector<float>{40, 10, 10, 40, 10});
}

TEST_CASE("scatter_nd reduces duplicate indices in order") {
  float y[] = {1, 1, 1, 1};
  const int64_t idx[] = {1, 1, 3};
  const float upd[] = {2, 5, 7};
  const onnxc::rt::index_t dims[] = {4}, strides[] = {1};
  onnxc::rt::scatter_nd(y, idx, upd, 3, 1, dims, strides, 1, onnxc::rt::ScatterMul{});
  CHECK(std::vector<float>(y, y + 4) == std::vector<float>{1, 10, 1, 7});
}

// ---- operators, folded ----

TEST_CASE("Slice with negative steps and clamped starts/ends") {
  ModelBuilder b;
  b.output("y");
  b.floats("x", {3, 4}, iota(12));
  b.ints("starts", {2}, {100, -1});                                     // row 100 clamps to 2
  b.ints("ends", {2}, {std::numeric_limits<int64_t>::min(), 0});        // to before the start
  b.ints("axes", {2}, {0, -1});
  b.ints("steps", {2}, {-2, -1});
  b.node("Slice", {"x", "starts", "ends", "axes", "steps"}, {"y"});
  onnxc::Shape shape;
  // rows 2, 0; columns 3, 2, 1
  CHECK(folded_output(b, "slice_neg", &shape) == std::vector<double>{11, 10, 9, 3, 2, 1});
  CHECK(shape == onnxc::Shape{2, 3});
}

TEST_CASE("Slice-1 takes its parameters as attributes") {
  ModelBuilder b(9);
  b.output("y");
  b.floats("x", {2, 4}, iota(8));
  auto& n = b.node("Slice", {"x"}, {"y"});
  ModelBuilder::attr_ints(n, "starts", {1, 1});
  ModelBuilder::attr_ints(n, "ends", {2, 1000});
  CHECK(folded_output(b, "slice_v1") == std::vector<double>{5, 6, 7});
}

TEST_CASE("Pad reflect, edge and wrap") {
  struct Case {
    const char* mode;
    int opset;
    std::vector<double> want;
  };
  for (const Case& c : {Case{"reflect", 13, {3, 2, 1, 2, 3, 2}}, Case{"edge", 13, {1, 1, 1, 2, 3, 3}},
                        Case{"wrap", 19, {2, 3, 1, 2, 3, 1}}}) {
    ModelBuilder b(c.opset, c.opset >= 19 ? 9 : 8);  // opset 19 came with IR version 9
    b.output("y");
    b.floats("x", {3}, {1, 2, 3});
    b.ints("pads", {2}, {2, 1});
    attr_string(b.node("Pad", {"x", "pads"}, {"y"}), "mode", c.mode);
    INFO(c.mode);
    CHECK(folded_output(b, std::string("pad_") + c.mode) == c.want);
  }
}

TEST_CASE("Pad with negative pads crops before padding") {
  ModelBuilder b;
  b.output("y");
  b.floats("x", {2, 3}, {1, 2, 3, 4, 5, 6});
  b.ints("pads", {4}, {0, -1, 1, 1});  // crop column 0, add a row below and a column right
  b.floats("value", {}, {9});
  b.node("Pad", {"x", "pads", "value"}, {"y"});
  onnxc::Shape shape;
  CHECK(folded_output(b, "pad_crop", &shape) == std::vector<double>{2, 3, 9, 5, 6, 9, 9, 9, 9});
  CHECK(shape == onnxc::Shape{3, 3});
}

TEST_CASE("Resize linear with align_corners") {
  ModelBuilder b;
  b.output("y");
  b.floats("x", {1, 1, 2, 2}, {1, 2, 3, 4});
  b.ints("sizes", {4}, {1, 1, 3, 3});
  auto& n = b.node("Resize", {"x", "", "", "sizes"}, {"y"});
  attr_string(n, "mode", "linear");
  attr_string(n, "coordinate_transformation_mode", "align_corners");
  // Output coordinate i maps to i * (2 - 1) / (3 - 1): 0, 0.5, 1 along both axes.
  CHECK(folded_output(b, "resize_align") == std::vector<double>{1, 1.5, 2, 2, 2.5, 3, 3, 3.5, 4});
}

TEST_CASE("Resize nearest with half_pixel and round_prefer_ceil") {
  ModelBuilder b;
  b.output("y");
  b.floats("x", {4}, {10, 20, 30, 40});
  b.floats("scales", {1}, {0.5f});
  auto& n = b.node("Resize", {"x", "", "scales"}, {"y"});
  attr_string(n, "nearest_mode", "round_prefer_ceil");
  // Output 0 -> (0.5 / 0.5) - 0.5 = 0.5 -> 1; output 1 -> 2.5 -> 3.
  CHECK(folded_output(b, "resize_nearest") == std::vector<double>{20, 40});
}

TEST_CASE("Gather wraps negative constant indices") {
  ModelBuilder b;
  b.output("y");
  b.floats("x", {4, 2}, iota(8));
  b.ints("idx", {2}, {-1, 1});
  b.node("Gather", {"x", "idx"}, {"y"});
  CHECK(folded_output(b, "gather_neg") == std::vector<double>{6, 7, 2, 3});
}

TEST_CASE("An out-of-range constant index is a compile-time error naming the node") {
  ModelBuilder b;
  b.output("y");
  b.floats("x", {4}, iota(4));
  b.ints("idx", {1}, {4});
  b.node("Gather", {"x", "idx"}, {"y"}, "pick");
  std::string e = compile_error(b.write("gather_oob"));
  CHECK(e.find("'pick'") != std::string::npos);
  CHECK(e.find("index 4") != std::string::npos);
}

TEST_CASE("Split-18 num_outputs makes equal chunks and a shorter last one") {
  ModelBuilder b(18);
  b.output("a").output("b").output("c");
  b.floats("x", {5}, iota(5));
  ModelBuilder::attr_int(b.node("Split", {"x"}, {"a", "b", "c"}), "num_outputs", 3);
  onnxc::Model m = onnxc::check_model(b.write("split18"), {});
  CHECK(m.graph.outputs[0]->shape == onnxc::Shape{2});
  CHECK(m.graph.outputs[1]->shape == onnxc::Shape{2});
  CHECK(m.graph.outputs[2]->shape == onnxc::Shape{1});
  CHECK(m.graph.outputs[2]->constant->float_at(0) == 4);
}

TEST_CASE("An exporter's Shape/Gather/Unsqueeze/Concat/Reshape subgraph folds to a static shape") {
  // y = Reshape(x, Concat(Unsqueeze(Gather(Shape(x), 0)), [-1])): x [2, 3, 4] -> [2, 12].
  ModelBuilder b;
  b.input("x", {2, 3, 4}).output("y");
  b.ints("zero", {}, {0});
  b.ints("axes", {1}, {0});
  b.ints("minus_one", {1}, {-1});
  b.node("Shape", {"x"}, {"s"});
  b.node("Gather", {"s", "zero"}, {"batch"});
  b.node("Unsqueeze", {"batch", "axes"}, {"batch1"});
  ModelBuilder::attr_int(b.node("Concat", {"batch1", "minus_one"}, {"target"}), "axis", 0);
  b.node("Reshape", {"x", "target"}, {"y"});
  onnxc::Compilation c = onnxc::compile_model(b.write("shape_subgraph"), {});
  CHECK(c.model.graph.outputs[0]->shape == onnxc::Shape{2, 12});
  REQUIRE(c.model.graph.nodes.size() == 1);  // only the Reshape is left to run
  CHECK(c.model.graph.nodes[0]->op_type == "Reshape");
}

TEST_CASE("Resize-18 antialiased linear and cubic downsampling match the ONNX examples") {
  // 4x4 = 1..16 scaled by 0.6: the filter widens by 1/0.6 and the weights renormalise.
  struct Case {
    const char* mode;
    std::vector<double> want;
  };
  for (const Case& c : {Case{"linear", {2.875, 4.5, 9.375, 11.0}},
                        Case{"cubic", {2.5180721, 4.2858863, 9.589329, 11.357142}}}) {
    ModelBuilder b(18);
    b.output("y");
    std::vector<float> x = iota(16);
    for (float& v : x) v += 1;
    b.floats("x", {1, 1, 4, 4}, x);
    b.floats("scales", {4}, {1, 1, 0.6f, 0.6f});
    auto& n = b.node("Resize", {"x", "", "scales"}, {"y"});
    attr_string(n, "mode", c.mode);
    ModelBuilder::attr_int(n, "antialias", 1);
    std::vector<double> got = folded_output(b, std::string("resize_aa_") + c.mode);
    INFO(c.mode);
    REQUIRE(got.size() == 4);
    for (std::size_t i = 0; i < 4; ++i) CHECK(got[i] == Approx(c.want[i]).epsilon(1e-5));
  }
}

TEST_CASE("Resize-18 keep_aspect_ratio_policy picks one scale for the listed axes") {
  struct Case {
    const char* policy;
    onnxc::Shape want;
  };
  // sizes 7x8 for a 2x2 image: not_larger scales by min(3.5, 4), not_smaller by max.
  for (const Case& c : {Case{"not_larger", {1, 1, 7, 7}}, Case{"not_smaller", {1, 1, 8, 8}},
                        Case{"stretch", {1, 1, 7, 8}}}) {
    ModelBuilder b(18);
    b.output("y");
    b.floats("x", {1, 1, 2, 2}, {1, 2, 3, 4});
    b.ints("sizes", {2}, {7, 8});
    auto& n = b.node("Resize", {"x", "", "", "sizes"}, {"y"});
    ModelBuilder::attr_ints(n, "axes", {2, -1});
    attr_string(n, "keep_aspect_ratio_policy", c.policy);
    onnxc::Shape shape;
    std::vector<double> y = folded_output(b, std::string("resize_policy_") + c.policy, &shape);
    INFO(c.policy);
    CHECK(shape == c.want);
    CHECK(y.front() == 1);
    CHECK(y.back() == 4);
  }
}
