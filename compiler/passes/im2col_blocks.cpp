// im2col-blocks: see kernel_passes.h.
#include <algorithm>
#include <map>

#include "ops/conv_algorithm.h"
#include "passes/kernel_passes.h"

namespace onnxc {

int64_t choose_im2col_cols(const Im2colShape& s, std::size_t slack_bytes, bool memory_first) {
  const int64_t fitting = static_cast<int64_t>(slack_bytes) / s.bytes_per_column;
  if (fitting >= std::min(s.columns, s.fastest_cols)) return s.fastest_cols;
  const int64_t block = fitting / s.quantum_cols * s.quantum_cols;
  if (block > 0) return block;
  // Not even one row of register tiles fits: the smallest block worth running (that row, or
  // the whole output when it is narrower), unless memory comes first.
  return memory_first ? 0 : std::min(s.columns, s.quantum_cols);
}

int choose_im2col_blocks(Graph& g, const Block& scratch_free, bool memory_first) {
  const std::size_t peak = scratch_free.peak_live_bytes;
  std::map<const Node*, std::size_t> step_of;
  for (std::size_t i = 0; i < scratch_free.steps.size(); ++i) step_of[scratch_free.steps[i].node] = i;
  int chosen = 0;
  for (auto& node : g.nodes) {
    Node& n = *node;
    if (!n.domain.empty() || !step_of.count(&n)) continue;
    Im2colShape shape;
    if (n.op_type == "Conv" && conv_packs_weights(n)) shape = conv_im2col_shape(n);
    else if (n.op_type == "QLinearConv") shape = qlinear_conv_im2col_shape(n);
    else continue;
    if (shape.bytes_per_column == 0) continue;  // reads its input as the matrix (or cannot use it): no scratch
    if (n.op_type == "QLinearConv" && memory_first) {
      // Without dot-product instructions the integer matrix product gains little over the plane
      // kernel, and its im2col block and stack tiles cost RAM: keep the plane kernel.
      Attribute none;
      none.kind = Attribute::Kind::Int;
      none.i = 0;
      n.attrs[kIm2colColsAttr] = none;
      ++chosen;
      continue;
    }
    const std::size_t slack = peak - scratch_free.live_bytes[step_of[&n]];
    Attribute a;
    a.kind = Attribute::Kind::Int;
    a.i = choose_im2col_cols(shape, slack, memory_first);
    n.attrs[kIm2colColsAttr] = a;
    ++chosen;
  }
  return chosen;
}

}  // namespace onnxc
