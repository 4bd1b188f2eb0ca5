#include "passes/memory_plan.h"

#include <algorithm>
#include <cstdint>
#include <map>
#include <numeric>
#include <set>

#include "support/align.h"

namespace onnxc {
namespace {

// The least number of bytes an allowance lets its output start before its input: -max_delta
// rounded up to the alignment, at least 0 (an output starting after its input gains nothing
// over starting with it) and at most the output's size (below that they are apart anyway).
std::size_t allowed_lead(const OverlapAllowance& a, std::size_t out_size, std::size_t alignment) {
  if (a.max_delta >= 0) return 0;
  return std::min(align_up(static_cast<std::size_t>(-a.max_delta), alignment), out_size);
}

bool lifetimes_overlap(const BufferRequest& a, const BufferRequest& b) {
  return a.first <= b.last && b.first <= a.last;
}

// The [begin, end) byte ranges, sorted by offset, that buffer `self` (placed next, with the
// lifetime `lifetime`) must not overlap: those of the placed buffers whose lifetimes overlap
// its own, less what an OverlapAllowance between the two lets it share.
std::vector<std::pair<std::size_t, std::size_t>> taken_ranges(const std::vector<BufferRequest>& bufs,
                                                              const MemoryPlan& plan,
                                                              const std::vector<std::size_t>& placed,
                                                              const BufferRequest& lifetime, std::size_t alignment,
                                                              std::size_t self = SIZE_MAX,
                                                              const std::vector<OverlapAllowance>& overlaps = {}) {
  std::vector<std::pair<std::size_t, std::size_t>> taken;
  for (std::size_t p : placed) {
    if (!lifetimes_overlap(lifetime, bufs[p])) continue;
    const std::size_t lo = plan.offsets[p], hi = lo + align_up(bufs[p].size, alignment);
    const OverlapAllowance* a = nullptr;
    for (const OverlapAllowance& o : overlaps)
      if ((o.input == p && o.output == self) || (o.input == self && o.output == p)) a = &o;
    if (!a) {
      taken.emplace_back(lo, hi);
      continue;
    }
    // The allowed starts of the output: at most delta after the input's, or past its end.
    const std::size_t out_size = align_up(bufs[a->output].size, alignment);
    const std::size_t lead = allowed_lead(*a, out_size, alignment);  // bytes the output starts before the input
    // A range [b, e) takes the starts in (b - size, e): b may exceed e.
    if (a->input == p) {  // self is the output: starts in (lo - lead, hi) are taken
      taken.emplace_back(lo - lead + out_size, hi);
    } else {  // self is the input, p the output: starts in (lo - in_size, lo + lead) are taken
      taken.emplace_back(lo, lo + lead);
    }
  }
  std::sort(taken.begin(), taken.end());
  return taken;
}

// The lowest offset where `size` bytes collide with none of the sorted `taken` ranges.
std::size_t lowest_fit(const std::vector<std::pair<std::size_t, std::size_t>>& taken, std::size_t size) {
  std::size_t offset = 0;
  for (auto& [lo, hi] : taken) {
    if (offset + size <= lo) break;
    offset = std::max(offset, hi);
  }
  return offset;
}

// Places buffers in the given order, each at the lowest aligned offset that does not collide
// with an already placed buffer whose lifetime overlaps (first fit over the gaps).
MemoryPlan place_in_order(const std::vector<BufferRequest>& bufs, const std::vector<std::size_t>& order,
                          std::size_t alignment, const std::vector<OverlapAllowance>& overlaps) {
  MemoryPlan plan;
  plan.offsets.assign(bufs.size(), 0);
  std::vector<std::size_t> placed;
  for (std::size_t idx : order) {
    const std::size_t size = align_up(bufs[idx].size, alignment);
    plan.offsets[idx] = lowest_fit(taken_ranges(bufs, plan, placed, bufs[idx], alignment, idx, overlaps), size);
    plan.arena_bytes = std::max(plan.arena_bytes, plan.offsets[idx] + size);
    placed.push_back(idx);
  }
  return plan;
}

// `order` with each chain of overlapped buffers (input -> output -> its output ...) placed together
// where its first member came, the last output first: every input then finds the output it may
// overlap already placed, and takes the lowest start it allows (the orders alone would place a
// large input first and its smaller output past its end).
std::vector<std::size_t> overlap_chains_together(const std::vector<std::size_t>& order,
                                                 const std::vector<OverlapAllowance>& overlaps) {
  std::map<std::size_t, std::size_t> output_of, input_of;
  for (const OverlapAllowance& a : overlaps) {
    output_of[a.input] = a.output;
    input_of[a.output] = a.input;
  }
  std::vector<std::size_t> out;
  std::set<std::size_t> done;
  for (std::size_t idx : order) {
    if (done.count(idx)) continue;
    std::size_t last = idx;
    while (output_of.count(last) && !done.count(output_of.at(last))) last = output_of.at(last);
    for (std::size_t k = last;; k = input_of.at(k)) {
      if (!done.insert(k).second) break;
      out.push_back(k);
      if (!input_of.count(k)) break;
    }
  }
  return out;
}

std::vector<std::size_t> all_indices(std::size_t n) {
  std::vector<std::size_t> v(n);
  std::iota(v.begin(), v.end(), 0);
  return v;
}

}  // namespace

std::vector<std::size_t> live_bytes_per_step(const std::vector<BufferRequest>& buffers, std::size_t alignment,
                                             int steps) {
  std::vector<std::size_t> live(static_cast<std::size_t>(std::max(steps, 0)), 0);
  for (const auto& b : buffers)
    for (int s = std::max(b.first, 0); s <= b.last && s < steps; ++s)
      live[static_cast<std::size_t>(s)] += align_up(b.size, std::max<std::size_t>(alignment, 1));
  return live;
}

std::size_t peak_live_bytes(const std::vector<BufferRequest>& buffers, std::size_t alignment) {
  int steps = 0;
  for (const auto& b : buffers) steps = std::max(steps, b.last + 1);
  const std::vector<std::size_t> live = live_bytes_per_step(buffers, alignment, steps);
  return live.empty() ? 0 : *std::max_element(live.begin(), live.end());
}

MemoryPlan plan_memory(const std::vector<BufferRequest>& buffers, std::size_t alignment,
                       const std::vector<OverlapAllowance>& overlaps) {
  if (alignment == 0) alignment = 1;
  const std::vector<std::size_t> base = all_indices(buffers.size());
  struct Strategy {
    const char* name;
    bool (*before)(const BufferRequest&, const BufferRequest&);
  };
  const Strategy strategies[] = {
      {"largest first", [](const BufferRequest& a, const BufferRequest& b) { return a.size > b.size; }},
      {"longest lived first",
       [](const BufferRequest& a, const BufferRequest& b) { return a.last - a.first > b.last - b.first; }},
      {"earliest first", [](const BufferRequest& a, const BufferRequest& b) { return a.first < b.first; }},
      {"largest area first",
       [](const BufferRequest& a, const BufferRequest& b) {
         return a.size * static_cast<std::size_t>(a.last - a.first + 1) >
                b.size * static_cast<std::size_t>(b.last - b.first + 1);
       }},
  };
  MemoryPlan best;
  bool have = false;
  auto consider = [&](const std::vector<std::size_t>& order, const std::string& name) {
    MemoryPlan p = place_in_order(buffers, order, alignment, overlaps);
    p.strategy = name;
    if (!have || p.arena_bytes < best.arena_bytes) {
      best = std::move(p);
      have = true;
    }
  };
  std::vector<std::size_t> largest_first;
  for (const Strategy& s : strategies) {
    std::vector<std::size_t> order = base;
    // Ties broken by index so the plan is deterministic.
    std::stable_sort(order.begin(), order.end(),
                     [&](std::size_t a, std::size_t b) { return s.before(buffers[a], buffers[b]); });
    if (largest_first.empty()) largest_first = order;
    consider(order, s.name);
    if (!overlaps.empty()) consider(overlap_chains_together(order, overlaps), std::string(s.name) + ", overlap chains together");
  }
  // The orders above can leave gaps a different choice among equals would avoid: retry
  // "largest first" with equal-sized buffers in pseudo-random order, from a fixed seed so the
  // plan is reproducible, while the plan is above the lower bound and time allows.
  const std::size_t bound = peak_live_bytes(buffers, alignment);
  const std::size_t n = buffers.size();
  const int trials = n == 0 ? 0 : static_cast<int>(std::min<std::size_t>(64, 4000000 / (n * n + 1)));
  std::uint32_t state = 0x9e3779b9u;
  auto next = [&state] {  // xorshift32: the same sequence on every platform
    state ^= state << 13;
    state ^= state >> 17;
    state ^= state << 5;
    return state;
  };
  for (int t = 0; t < trials && best.arena_bytes > bound; ++t) {
    std::vector<std::size_t> order = largest_first;
    for (std::size_t i = 0; i < n;) {  // shuffle each run of equal sizes
      std::size_t j = i + 1;  // order[i] starts the run
      while (j < n && buffers[order[j]].size == buffers[order[i]].size) ++j;
      for (std::size_t k = j - 1; k > i; --k) std::swap(order[k], order[i + next() % (k - i + 1)]);
      i = j;
    }
    consider(order, "largest first, equal sizes reordered");
  }
  // Placing the largest buffer first can wall off a gap no order among equals fills (an in-place
  // Concat's output, live across the steps around a larger padded copy of it, is placed after
  // that copy, whose place it needed): retry "largest first" with a few buffers of any size
  // swapped, the same way.
  for (int t = 0; t < trials && best.arena_bytes > bound && n > 1; ++t) {
    std::vector<std::size_t> order = largest_first;
    for (int k = 0; k <= t % 3; ++k) std::swap(order[next() % n], order[next() % n]);
    consider(order, "largest first, some buffers swapped");
  }
  return best;
}

std::size_t largest_gap_at(const std::vector<BufferRequest>& placed, const MemoryPlan& plan, int step,
                           std::size_t alignment) {
  if (alignment == 0) alignment = 1;
  std::size_t largest = 0, free_from = 0;
  for (auto& [lo, hi] : taken_ranges(placed, plan, all_indices(placed.size()), BufferRequest{0, step, step}, alignment)) {
    if (lo > free_from) largest = std::max(largest, lo - free_from);
    free_from = std::max(free_from, hi);
  }
  return plan.arena_bytes > free_from ? std::max(largest, plan.arena_bytes - free_from) : largest;
}

MemoryPlan place_into_gaps(const std::vector<BufferRequest>& placed, const MemoryPlan& plan,
                           const std::vector<BufferRequest>& late, std::size_t alignment,
                           const std::vector<OverlapAllowance>& overlaps) {
  if (alignment == 0) alignment = 1;
  std::vector<BufferRequest> all = placed;
  all.insert(all.end(), late.begin(), late.end());
  MemoryPlan out = plan;
  out.offsets.resize(all.size(), 0);
  std::vector<std::size_t> done = all_indices(placed.size());
  for (std::size_t i = placed.size(); i < all.size(); ++i) {
    const std::size_t size = align_up(all[i].size, alignment);
    out.offsets[i] = lowest_fit(taken_ranges(all, out, done, all[i], alignment, i, overlaps), size);
    out.arena_bytes = std::max(out.arena_bytes, out.offsets[i] + size);
    done.push_back(i);
  }
  return out;
}

}  // namespace onnxc
