// Overlapped buffers (OpDef::overlap_delta): how far an output may start after the input it is
// computed from, sharing its memory, given the order in which the kernel reads and writes.
#pragma once

#include <algorithm>
#include <cstdint>

namespace onnxc {

// A kernel that walks `planes` planes in order, `group` at a time (the last group may be
// shorter), where the outputs of a group depend only on the inputs of the same group (input
// plane i of `in_plane_bytes` at i * in_plane_bytes, output plane i of `out_plane_bytes` at
// i * out_plane_bytes), and within a group may write any of its outputs before it has read any
// of its inputs. Returns the largest (output start - input start) in bytes at which no output
// byte lands on an input byte still to be read:
//   min over groups g of  (first input byte of g and later groups) - (end of the outputs of g
//   and earlier groups)  =  min over g of  g * group * in_plane_bytes - min((g + 1) * group, planes) * out_plane_bytes.
// Pooling walks (N * C) planes one at a time; an elementwise kernel walks planes of one element
// `group` (its vector and unrolling) at a time. The expression is linear in g over the full
// groups, so its minimum is at the first, the last full or the last group.
inline int64_t plane_walk_overlap_delta(int64_t planes, int64_t in_plane_bytes, int64_t out_plane_bytes, int64_t group) {
  if (planes <= 0) return 0;
  group = std::max<int64_t>(group, 1);
  const int64_t groups = (planes + group - 1) / group;
  auto at = [&](int64_t g) { return g * group * in_plane_bytes - std::min((g + 1) * group, planes) * out_plane_bytes; };
  return std::min({at(0), at(std::max<int64_t>(groups - 2, 0)), at(groups - 1)});
}

}  // namespace onnxc
