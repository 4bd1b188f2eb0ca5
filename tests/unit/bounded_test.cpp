// Operators with bounded outputs (NonZero, Unique, NonMaxSuppression): their kernels against
// hand-computed cases, and how the compiler treats a bounded tensor (reported as a model
// output, refused as an operator's input, folded to its exact shape when constant).
#include <catch2/catch.hpp>

#include <cstdint>
#include <vector>

#include "model_builder.h"
#include "onnxc/nms.h"
#include "onnxc/nonzero.h"
#include "onnxc/unique.h"
#include "passes/pipeline.h"
#include "support/diagnostics.h"

using namespace onnxc;
using testing::ModelBuilder;

TEST_CASE("nonzero: indices of the non-zero elements, packed as [rank, k]", "[bounded]") {
  const float x[] = {0.f, 1.5f, -0.f, 2.f, 0.f, -3.f};  // [2, 3]; -0 is zero
  const rt::index_t shape[] = {2, 3};
  std::int64_t y[2 * 6] = {};
  REQUIRE(rt::nonzero(x, 6, shape, 2, y) == 3);
  const std::int64_t want[] = {0, 1, 1, /**/ 1, 0, 2};
  CHECK(std::vector<std::int64_t>(y, y + 6) == std::vector<std::int64_t>(want, want + 6));

  const bool none[] = {false, false};
  const rt::index_t shape1[] = {2};
  CHECK(rt::nonzero(none, 2, shape1, 1, y) == 0);
}

TEST_CASE("unique: flattened, sorted and in first-occurrence order", "[bounded]") {
  const std::int32_t x[] = {2, 1, 1, 3, 4, 3};
  std::int32_t y[6];
  std::int64_t indices[6], inverse[6], counts[6];
  rt::index_t scratch[5 * 6];

  rt::UniqueParams p{1, 6, 1, false};
  REQUIRE(rt::unique(p, x, y, indices, inverse, counts, scratch) == 4);
  CHECK(std::vector<std::int32_t>(y, y + 4) == std::vector<std::int32_t>{2, 1, 3, 4});
  CHECK(std::vector<std::int64_t>(indices, indices + 4) == std::vector<std::int64_t>{0, 1, 3, 4});
  CHECK(std::vector<std::int64_t>(inverse, inverse + 6) == std::vector<std::int64_t>{0, 1, 1, 2, 3, 2});
  CHECK(std::vector<std::int64_t>(counts, counts + 4) == std::vector<std::int64_t>{1, 2, 2, 1});

  p.sorted = true;
  REQUIRE(rt::unique(p, x, y, nullptr, inverse, nullptr, scratch) == 4);  // optional outputs omitted
  CHECK(std::vector<std::int32_t>(y, y + 4) == std::vector<std::int32_t>{1, 2, 3, 4});
  CHECK(std::vector<std::int64_t>(inverse, inverse + 6) == std::vector<std::int64_t>{1, 0, 0, 2, 3, 2});
}

TEST_CASE("unique: slices along an axis, compared lexicographically", "[bounded]") {
  // [2, 3] along axis 1: the columns (1, 4), (0, 5), (1, 4).
  const float x[] = {1, 0, 1, /**/ 4, 5, 4};
  float y[6];
  std::int64_t indices[3], inverse[3], counts[3];
  rt::index_t scratch[5 * 3];
  const rt::UniqueParams p{2, 3, 1, true};
  REQUIRE(rt::unique(p, x, y, indices, inverse, counts, scratch) == 2);
  CHECK(std::vector<float>(y, y + 4) == std::vector<float>{0, 1, /**/ 5, 4});  // packed as [2, k = 2]
  CHECK(std::vector<std::int64_t>(indices, indices + 2) == std::vector<std::int64_t>{1, 0});
  CHECK(std::vector<std::int64_t>(inverse, inverse + 3) == std::vector<std::int64_t>{1, 0, 1});
  CHECK(std::vector<std::int64_t>(counts, counts + 2) == std::vector<std::int64_t>{1, 2});
}

TEST_CASE("non_max_suppression: greedy by score, per class, up to the limit", "[bounded]") {
  // Boxes [y1, x1, y2, x2]: 0 and 1 overlap with IoU 0.9 / 1.1 = 0.82; 2 is apart; 3 has no area.
  const float boxes[] = {0, 0, 1, 1, /**/ 0, 0.1f, 1, 1.1f, /**/ 5, 5, 6, 6, /**/ 2, 2, 2, 3};
  const float scores[] = {0.5f, 0.9f, 0.3f, 0.8f, /**/ 0.1f, 0.2f, 0.7f, 0.0f};  // 2 classes
  const rt::NmsParams p{1, 2, 4, false};
  std::int64_t selected[2 * 4 * 3];
  rt::index_t scratch[2 * 4];
  const std::int64_t limit = 3;
  const float iou = 0.5f, score = 0.15f;
  REQUIRE(rt::non_max_suppression(p, boxes, scores, &limit, &iou, &score, selected, scratch) == 5);
  // Class 0: 1 (0.9), 3 (0.8, no area: suppresses nothing), then 0 is suppressed by 1, 2 (0.3).
  // Class 1: 2 (0.7), 1 (0.2); 0 scores 0.1 <= 0.15 and 3 0.0.
  const std::vector<std::int64_t> want = {0, 0, 1, 0, 0, 3, 0, 0, 2, 0, 1, 2, 0, 1, 1};
  CHECK(std::vector<std::int64_t>(selected, selected + 15) == want);

  const std::int64_t one = 1;
  REQUIRE(rt::non_max_suppression(p, boxes, scores, &one, &iou, static_cast<const float*>(nullptr), selected,
                                  scratch) == 2);
  CHECK(std::vector<std::int64_t>(selected, selected + 6) == std::vector<std::int64_t>{0, 0, 1, 0, 1, 2});
  CHECK(rt::non_max_suppression(p, boxes, scores, static_cast<const std::int64_t*>(nullptr), &iou, &score, selected,
                                scratch) == 0);  // no limit given: keeps none
}

TEST_CASE("a bounded output of the model reports its shape; as an operator's input it is refused", "[bounded]") {
  ModelBuilder b;
  b.input("x", {2, 3}).output("idx", {2, -1}, onnx::TensorProto::INT64);
  b.node("NonZero", {"x"}, {"idx"});
  Compilation c = compile_model(b.write("bounded_output"), {});
  const Value& idx = *c.model.graph.outputs[0];
  CHECK(idx.dynamic_axis == 1);
  CHECK(idx.shape == Shape{2, 6});
  REQUIRE(c.program.main.output_shape_params.size() == 1);
  const GeneratedCode code = emit_code(c, {}, "m.h", "m.cpp");
  CHECK(code.header.find("std::int64_t* idx_shape") != std::string::npos);
  CHECK(code.source.find("idx_shape[1] = static_cast<std::int64_t>(rt::nonzero(") != std::string::npos);

  ModelBuilder consumer;
  consumer.input("x", {2, 3}).output("y", {}, onnx::TensorProto::INT64);
  consumer.node("NonZero", {"x"}, {"idx"}, "nz");
  consumer.node("ReduceSum", {"idx"}, {"y"}, "sum");
  try {
    compile_model(consumer.write("bounded_consumer"), {});
    FAIL("a node reading a bounded tensor compiled");
  } catch (const CompileError& e) {
    CHECK(std::string(e.what()).find("'idx' (output 0 of node") != std::string::npos);
    CHECK(std::string(e.what()).find("known only at run time") != std::string::npos);
  }
}

TEST_CASE("a bounded operator on constant inputs folds to its exact shape", "[bounded]") {
  ModelBuilder b;
  b.floats("c", {4}, {0, 3, 0, 5}).output("y", {1, 2}, onnx::TensorProto::INT64);
  b.node("NonZero", {"c"}, {"nz"});
  b.node("Identity", {"nz"}, {"y"});  // reads the folded tensor: allowed, it is exact now
  Compilation c = compile_model(b.write("bounded_fold"), {});
  const Value& y = *c.model.graph.outputs[0];
  CHECK(y.dynamic_axis == -1);
  CHECK(y.shape == Shape{1, 2});
  REQUIRE(y.constant);
  CHECK(y.constant->to_ints() == std::vector<int64_t>{1, 3});
}
