// Static memory planning as a pure function: given each buffer's size and the steps it is
// live, choose byte offsets in one arena so that buffers live at the same time never overlap.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

namespace onnxc {

struct BufferRequest {
  std::size_t size = 0;  // bytes
  int first = 0;         // first step the buffer is live (written)
  int last = 0;          // last step it is live (read); first <= last
};

// Overlapped buffers: where the lifetimes of buffers `input` and `output` meet (the step that
// reads input for the last time writes output), output may start at most `max_delta` bytes after
// input (max_delta <= 0: that many bytes before it), overlapping it, because the kernel has read
// every input byte the output bytes it writes land on (OpDef::overlap_delta). Otherwise the two
// are apart, as any two buffers live at the same time.
struct OverlapAllowance {
  std::size_t input = 0, output = 0;  // indices into the requests
  std::ptrdiff_t max_delta = 0;
};

struct MemoryPlan {
  std::vector<std::size_t> offsets;  // one per request
  std::size_t arena_bytes = 0;
  std::string strategy;              // the packing strategy that won
};

// The sum of (aligned) sizes live at each step in [0, steps).
std::vector<std::size_t> live_bytes_per_step(const std::vector<BufferRequest>& buffers, std::size_t alignment,
                                             int steps);
// The largest sum of sizes live at any one step: no plan can use less.
std::size_t peak_live_bytes(const std::vector<BufferRequest>& buffers, std::size_t alignment);

// Tries several packings (largest first, longest-lived first, earliest first) and keeps the smallest.
MemoryPlan plan_memory(const std::vector<BufferRequest>& buffers, std::size_t alignment,
                       const std::vector<OverlapAllowance>& overlaps = {});

// Kernel scratch after the tensors: `plan` places `placed`; each buffer of `late` goes to the
// lowest aligned offset free over its lifetime, so it takes memory the tensors leave free and
// grows the arena only when no gap holds it. Offsets: `placed`'s, then `late`'s.
MemoryPlan place_into_gaps(const std::vector<BufferRequest>& placed, const MemoryPlan& plan,
                           const std::vector<BufferRequest>& late, std::size_t alignment,
                           const std::vector<OverlapAllowance>& overlaps = {});
// The largest contiguous bytes below plan.arena_bytes no buffer of `placed` live at `step`
// occupies: the most scratch that step can have without growing the arena.
std::size_t largest_gap_at(const std::vector<BufferRequest>& placed, const MemoryPlan& plan, int step,
                           std::size_t alignment);

}  // namespace onnxc
