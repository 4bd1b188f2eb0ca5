#include <catch2/catch.hpp>

#include "passes/memory_plan.h"

using onnxc::BufferRequest;

namespace {
bool overlaps(const BufferRequest& a, std::size_t oa, const BufferRequest& b, std::size_t ob, std::size_t align) {
  auto up = [&](std::size_t v) { return (v + align - 1) / align * align; };
  bool time = a.first <= b.last && b.first <= a.last;
  bool space = oa < ob + up(b.size) && ob < oa + up(a.size);
  return time && space;
}
}  // namespace

TEST_CASE("buffers live at different times share memory") {
  std::vector<BufferRequest> bufs = {{100, 0, 1}, {100, 2, 3}, {100, 4, 5}};
  auto plan = onnxc::plan_memory(bufs, 16);
  CHECK(plan.arena_bytes == 112);  // 100 rounded up to 16
  CHECK(onnxc::peak_live_bytes(bufs, 16) == 112);
}

TEST_CASE("a chain of layers needs the two largest neighbours at once") {
  // x0 -> x1 -> x2 -> x3: buffer i is written at step i and read at step i+1.
  std::vector<BufferRequest> bufs = {{64, 0, 1}, {256, 1, 2}, {32, 2, 3}, {128, 3, 4}};
  auto plan = onnxc::plan_memory(bufs, 16);
  CHECK(plan.arena_bytes == 256 + 64);
  CHECK(onnxc::peak_live_bytes(bufs, 16) == 256 + 64);
}

TEST_CASE("no two simultaneously live buffers overlap, and offsets are aligned") {
  std::vector<BufferRequest> bufs;
  unsigned seed = 7;
  for (int i = 0; i < 60; ++i) {
    seed = seed * 1103515245u + 12345u;
    int first = static_cast<int>(seed % 40);
    seed = seed * 1103515245u + 12345u;
    int len = static_cast<int>(seed % 8);
    seed = seed * 1103515245u + 12345u;
    bufs.push_back({1 + seed % 5000, first, first + len});
  }
  auto plan = onnxc::plan_memory(bufs, 64);
  REQUIRE(plan.offsets.size() == bufs.size());
  for (std::size_t i = 0; i < bufs.size(); ++i) {
    CHECK(plan.offsets[i] % 64 == 0);
    CHECK(plan.offsets[i] + bufs[i].size <= plan.arena_bytes);
    for (std::size_t j = i + 1; j < bufs.size(); ++j) CHECK_FALSE(overlaps(bufs[i], plan.offsets[i], bufs[j], plan.offsets[j], 64));
  }
  CHECK(plan.arena_bytes >= onnxc::peak_live_bytes(bufs, 64));
}

TEST_CASE("an empty plan needs no memory") {
  auto plan = onnxc::plan_memory({}, 16);
  CHECK(plan.arena_bytes == 0);
  CHECK(plan.offsets.empty());
}
