// Overlapped buffers (issue #26): the distance a plane walk allows against a byte-level
// simulation of that walk, the planner's placement of an output over its input's buffer on
// hand-made lifetimes, and a MaxPool model planned so.
#include <catch2/catch.hpp>

#include <vector>

#include "model_builder.h"
#include "ops/overlap.h"
#include "passes/memory_plan.h"
#include "passes/pipeline.h"

using testing::ModelBuilder;

namespace {

// Whether a walk of `planes` planes, `group` at a time, each group writing all its output bytes
// before reading any of its input bytes (the least favourable order the contract allows), reads
// every input byte intact when the output starts `delta` bytes after the input.
bool walk_is_safe(int64_t planes, int64_t in_plane, int64_t out_plane, int64_t group, int64_t delta) {
  const int64_t in_bytes = planes * in_plane;
  std::vector<bool> overwritten(static_cast<std::size_t>(in_bytes), false);  // by input position
  for (int64_t g0 = 0; g0 < planes; g0 += group) {
    const int64_t g1 = std::min(g0 + group, planes);
    for (int64_t j = g0 * out_plane; j < g1 * out_plane; ++j)
      if (delta + j >= 0 && delta + j < in_bytes) overwritten[static_cast<std::size_t>(delta + j)] = true;
    for (int64_t i = g0 * in_plane; i < g1 * in_plane; ++i)
      if (overwritten[static_cast<std::size_t>(i)]) return false;
  }
  return true;
}

}  // namespace

TEST_CASE("a plane walk's overlap distance is the largest a byte-level simulation of the walk allows") {
  struct Case {
    int64_t planes, in_plane, out_plane, group;
  };
  const Case cases[] = {
      {8, 3136, 784, 1},  // mnist-cnn's 2 x 2 MaxPool: 8 planes of 28 x 28 floats onto 14 x 14
      {3, 100, 100, 1},   // a 3 x 3 stride-1 pad-1 pool on 5 x 5 floats: the same plane size
      {5, 16, 64, 1},     // output planes larger than the input's
      {100, 1, 4, 16},    // an elementwise int8 -> float walk, 16 elements a vector
      {100, 4, 1, 16},    // float -> int8
      {7, 20, 12, 3},     // groups of 3 planes, the last one short
      {1, 40, 4, 1},      // one plane
  };
  for (const Case& c : cases) {
    const int64_t d = onnxc::plane_walk_overlap_delta(c.planes, c.in_plane, c.out_plane, c.group);
    INFO("planes " << c.planes << ", plane bytes " << c.in_plane << " -> " << c.out_plane << ", group " << c.group
                   << ": delta " << d);
    CHECK(walk_is_safe(c.planes, c.in_plane, c.out_plane, c.group, d));
    CHECK_FALSE(walk_is_safe(c.planes, c.in_plane, c.out_plane, c.group, d + 1));
  }
  // By hand: the first plane's output (196 floats) is written while the first input plane is
  // still read, so the output starts one output plane before the input.
  CHECK(onnxc::plane_walk_overlap_delta(8, 3136, 784, 1) == -784);
  // Same-size planes: one plane apart (25 floats).
  CHECK(onnxc::plane_walk_overlap_delta(3, 100, 100, 1) == -100);
  // int8 -> float: at the last vector all 400 output bytes are written and input bytes 96.. unread.
  CHECK(onnxc::plane_walk_overlap_delta(100, 1, 4, 16) == 96 - 400);
}

TEST_CASE("an output placed over its input's buffer starts at most the allowed distance after it") {
  // in: written at step 0, read last at step 1, which writes out (read at step 2).
  const std::vector<onnxc::BufferRequest> bufs = {{96, 0, 1}, {96, 1, 2}};
  CHECK(onnxc::plan_memory(bufs, 16).arena_bytes == 192);
  const auto plan = onnxc::plan_memory(bufs, 16, {{0, 1, -20}});
  CHECK(plan.arena_bytes == 96 + 32);  // 20 bytes rounded up to the alignment
  CHECK(static_cast<std::ptrdiff_t>(plan.offsets[1]) - static_cast<std::ptrdiff_t>(plan.offsets[0]) <= -20);
  // A smaller output of a distance 0: it starts with its input.
  const auto same = onnxc::plan_memory({{128, 0, 1}, {32, 1, 2}}, 16, {{0, 1, 0}});
  CHECK(same.arena_bytes == 128);
  CHECK(same.offsets[0] == same.offsets[1]);
}

TEST_CASE("a chain of overlapped buffers is placed together, each output before its input") {
  // a -> b -> c, each 160 bytes, each output 32 bytes before its input; d (64 B) lives with b.
  const std::vector<onnxc::BufferRequest> bufs = {{160, 0, 1}, {160, 1, 2}, {160, 2, 3}, {64, 1, 2}};
  const auto plan = onnxc::plan_memory(bufs, 16, {{0, 1, -32}, {1, 2, -32}});
  // c at 0, b 32 bytes on, a 32 more (224 bytes for the chain); d is live with b and c, then a
  // and b, whose bytes cover [0, 224) at one step or the other: d after them. Apart: 3 x 160 + 64.
  CHECK(onnxc::plan_memory(bufs, 16).arena_bytes == 384);
  CHECK(plan.arena_bytes == 224 + 64);
  for (int k = 0; k < 2; ++k)
    CHECK(static_cast<std::ptrdiff_t>(plan.offsets[k + 1]) - static_cast<std::ptrdiff_t>(plan.offsets[k]) <= -32);
  // Kernel scratch at the overlapping step goes beside both, not over either.
  const auto fitted = onnxc::place_into_gaps(bufs, plan, {{16, 1, 1}}, 16, {{0, 1, -32}, {1, 2, -32}});
  const std::size_t s = fitted.offsets[4];
  for (std::size_t k : {0u, 1u, 3u}) CHECK((s + 16 <= plan.offsets[k] || s >= plan.offsets[k] + bufs[k].size));
}

TEST_CASE("a MaxPool's output overlaps its dying input by all but one output plane") {
  ModelBuilder b(12);
  b.input("x", {1, 3, 8, 8}).output("y");
  b.node("Relu", {"x"}, {"r"});  // the pool's input: an arena tensor that dies at the pool
  auto& pool = b.node("MaxPool", {"r"}, {"p"});
  ModelBuilder::attr_ints(pool, "kernel_shape", {3, 3});
  ModelBuilder::attr_ints(pool, "pads", {1, 1, 1, 1});
  b.node("Relu", {"p"}, {"q"});
  b.node("Add", {"q", "x"}, {"y"});
  const std::string path = b.write("overlap_pool");
  onnxc::CompileOptions o;
  o.disabled_passes = {"fuse-elementwise"};
  const auto c = onnxc::compile_model(path, o);
  const auto& r = c.program.tensors.at(c.model.graph.find("r"));
  const auto& p = c.program.tensors.at(c.model.graph.find("p"));
  // r: 3 planes of 64 floats; the pool writes plane 0 (256 B) while reading it: p starts 256 B
  // before r and shares 512 B.
  CHECK(static_cast<std::ptrdiff_t>(p.offset) - static_cast<std::ptrdiff_t>(r.offset) == -256);
  CHECK(p.overlap_bytes == 512);
  CHECK(c.program.arena_bytes == 768 + 256);
  o.disabled_passes.insert("overlap");
  const auto apart = onnxc::compile_model(path, o);
  CHECK(apart.program.tensors.at(apart.model.graph.find("p")).overlap_bytes == 0);
  CHECK(apart.program.arena_bytes == 768 * 2);
}

TEST_CASE("--memory-budget turns overlap back on to fit, and otherwise names the smallest arena it reaches") {
  ModelBuilder b(12);
  b.input("x", {1, 3, 8, 8}).output("y");
  b.node("Relu", {"x"}, {"r"});
  auto& pool = b.node("MaxPool", {"r"}, {"p"});
  ModelBuilder::attr_ints(pool, "kernel_shape", {3, 3});
  ModelBuilder::attr_ints(pool, "pads", {1, 1, 1, 1});
  b.node("Relu", {"p"}, {"q"});
  b.node("Add", {"q", "x"}, {"y"});
  const std::string path = b.write("overlap_budget");
  onnxc::CompileOptions o;
  o.disabled_passes = {"fuse-elementwise", "overlap"};
  o.memory_budget = 1024;  // 1,536 B apart, 1,024 overlapped (the MaxPool case above)
  CHECK(onnxc::compile_model(path, o).program.arena_bytes == 1024);
  o.memory_budget = 1000;
  try {
    onnxc::compile_model(path, o);
    FAIL("a budget below the smallest arena compiled");
  } catch (const onnxc::CompileError& e) {
    CHECK(e.unsupported());
    CHECK_THAT(e.what(), Catch::Contains("smallest arena onnxc reaches for this model is 1024 B"));
  }
}
