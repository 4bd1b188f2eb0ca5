// concat-in-place: a Concat's inputs computed straight into their slabs of its output.
#include <catch2/catch.hpp>

#include "model_builder.h"
#include "passes/pipeline.h"

using testing::ModelBuilder;

namespace {

const onnxc::TensorPlace& place_of(const onnxc::Compilation& c, const std::string& name) {
  return c.program.tensors.at(c.model.graph.find(name));
}

// x [rows, 4] -> MatMul a [rows, 4], MatMul b [rows, 8] -> Concat(a, b) on `axis` -> Relu -> y.
std::string two_branches(const std::string& name, int64_t rows, int64_t axis) {
  ModelBuilder b;
  b.input("x", {rows, 4}).output("y");
  b.floats("wa", {4, 4}, std::vector<float>(16, 0.5f)).floats("wb", {4, 8}, std::vector<float>(32, 0.25f));
  b.node("MatMul", {"x", "wa"}, {"a"});
  b.node("MatMul", {"x", "wb"}, {"b"});
  ModelBuilder::attr_int(b.node("Concat", {"a", "b"}, {"c"}), "axis", axis);
  b.node("Relu", {"c"}, {"y"});
  return b.write(name);
}

}  // namespace

TEST_CASE("a Concat's inputs are computed into its output and the Concat runs no code") {
  auto c = onnxc::compile_model(two_branches("concat_slabs", 1, 1), {});
  CHECK(place_of(c, "a").storage == onnxc::Storage::Alias);
  CHECK(place_of(c, "a").alias_of == c.model.graph.find("c"));
  CHECK(place_of(c, "a").alias_offset == 0);
  CHECK(place_of(c, "b").alias_of == c.model.graph.find("c"));
  CHECK(place_of(c, "b").alias_offset == 16);  // after a's four floats
  CHECK(c.program.main.steps[2].elided);
  CHECK(c.program.arena_bytes == 48);  // c only: 12 floats (a and b copied into c took 96)

  onnxc::CompileOptions off;
  off.disabled_passes.insert("concat-in-place");
  auto copied = onnxc::compile_model(two_branches("concat_slabs", 1, 1), off);
  CHECK_FALSE(copied.program.main.steps[2].elided);
  CHECK(place_of(copied, "a").storage == onnxc::Storage::Arena);
  CHECK(copied.program.arena_bytes == 96);
}

TEST_CASE("a Concat whose inputs interleave in its output is computed by copying") {
  // rows = 2, axis 1: each row of c holds a row of a then a row of b.
  auto c = onnxc::compile_model(two_branches("concat_interleaved", 2, 1), {});
  CHECK(place_of(c, "a").storage == onnxc::Storage::Arena);
  CHECK_FALSE(c.program.main.steps[2].elided);
}

TEST_CASE("graph inputs, repeated inputs and unaligned slabs keep the Concat a copy") {
  SECTION("a graph input cannot be moved into the Concat's output") {
    ModelBuilder b;
    b.input("x", {1, 4}).output("y").floats("w", {4, 4}, std::vector<float>(16, 0.5f));
    b.node("MatMul", {"x", "w"}, {"a"});
    ModelBuilder::attr_int(b.node("Concat", {"a", "x"}, {"c"}), "axis", 1);
    b.node("Relu", {"c"}, {"y"});
    auto c = onnxc::compile_model(b.write("concat_graph_input"), {});
    CHECK(place_of(c, "a").storage == onnxc::Storage::Arena);
    CHECK_FALSE(c.program.main.steps[1].elided);
  }
  SECTION("a tensor concatenated twice cannot live in two slabs") {
    ModelBuilder b;
    b.input("x", {1, 4}).output("y").floats("w", {4, 4}, std::vector<float>(16, 0.5f));
    b.node("MatMul", {"x", "w"}, {"a"});
    ModelBuilder::attr_int(b.node("Concat", {"a", "a"}, {"c"}), "axis", 1);
    b.node("Relu", {"c"}, {"y"});
    auto c = onnxc::compile_model(b.write("concat_twice"), {});
    CHECK(place_of(c, "a").storage == onnxc::Storage::Arena);
  }
  SECTION("a slab that would start off the arena alignment") {
    ModelBuilder b;
    b.input("x", {1, 4}).output("y");
    b.floats("wa", {4, 3}, std::vector<float>(12, 0.5f)).floats("wb", {4, 4}, std::vector<float>(16, 0.5f));
    b.node("MatMul", {"x", "wa"}, {"a"});  // 12 bytes: b would start at byte 12
    b.node("MatMul", {"x", "wb"}, {"b"});
    ModelBuilder::attr_int(b.node("Concat", {"a", "b"}, {"c"}), "axis", 1);
    b.node("Relu", {"c"}, {"y"});
    auto c = onnxc::compile_model(b.write("concat_unaligned"), {});
    CHECK(place_of(c, "b").storage == onnxc::Storage::Arena);
    CHECK_FALSE(c.program.main.steps[2].elided);
  }
}

TEST_CASE("a Concat of Concats puts the inner inputs in the outer output") {
  ModelBuilder b;
  b.input("x", {1, 4}).output("y").floats("w", {4, 4}, std::vector<float>(16, 0.5f));
  for (const char* t : {"a", "b", "d"}) b.node("MatMul", {"x", "w"}, {t});
  ModelBuilder::attr_int(b.node("Concat", {"a", "b"}, {"ab"}), "axis", 1);
  ModelBuilder::attr_int(b.node("Concat", {"d", "ab"}, {"c"}), "axis", 1);
  b.node("Relu", {"c"}, {"y"});
  auto c = onnxc::compile_model(b.write("concat_nested"), {});
  const onnxc::Value* outer = c.model.graph.find("c");
  CHECK(place_of(c, "d").alias_of == outer);
  CHECK(place_of(c, "ab").alias_of == outer);
  CHECK(place_of(c, "a").alias_of == outer);
  CHECK(place_of(c, "a").alias_offset == 16);
  CHECK(place_of(c, "b").alias_offset == 32);
  CHECK(c.program.arena_bytes == 48);
}

TEST_CASE("a dense block's Concats (each the earlier one's inputs and one more) share the last one's buffer") {
  // x -> MatMul a, MatMul b -> Concat ab -> Relu r -> MatMul d; Concat(a, b, d) = abd -> Relu -> y.
  ModelBuilder b;
  b.input("x", {1, 4}).output("y").floats("w", {4, 4}, std::vector<float>(16, 0.5f));
  b.floats("w8", {8, 4}, std::vector<float>(32, 0.25f));
  for (const char* t : {"a", "b"}) b.node("MatMul", {"x", "w"}, {t});
  ModelBuilder::attr_int(b.node("Concat", {"a", "b"}, {"ab"}), "axis", 1);
  b.node("Relu", {"ab"}, {"r"});
  b.node("MatMul", {"r", "w8"}, {"d"});
  ModelBuilder::attr_int(b.node("Concat", {"a", "b", "d"}, {"abd"}), "axis", 1);
  b.node("Relu", {"abd"}, {"y"});
  auto c = onnxc::compile_model(b.write("concat_dense"), {});
  const onnxc::Value* last = c.model.graph.find("abd");
  CHECK(place_of(c, "ab").alias_of == last);
  CHECK(place_of(c, "ab").alias_offset == 0);
  CHECK(place_of(c, "a").alias_of == last);
  CHECK(place_of(c, "b").alias_offset == 16);
  CHECK(place_of(c, "d").alias_of == last);
  CHECK(place_of(c, "d").alias_offset == 32);
  // The Relu of ab must not run in ab's memory: abd still holds a and b after it.
  CHECK(place_of(c, "r").storage == onnxc::Storage::Arena);
  for (const auto& step : c.program.main.steps)
    if (step.node->op_type == "Concat") CHECK(step.elided);
  CHECK(c.program.arena_bytes == 80);  // abd and r (ab copied took 32 more)
}
