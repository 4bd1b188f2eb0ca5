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

namespace {

using StepOf = std::map<const Node*, std::pair<const Block*, std::size_t>>;

// The block and step every node of `b` and of its nested blocks runs at.
void index_steps(const Block& b, StepOf& step_of) {
  for (std::size_t i = 0; i < b.steps.size(); ++i) {
    step_of[b.steps[i].node] = {&b, i};
    for (const auto& nested : b.steps[i].subgraphs)
      if (nested) index_steps(*nested, step_of);
  }
}

// Calls f on every node of g and of the graphs nested in its nodes' attributes.
template <class F> void for_each_node(Graph& g, F& f) {
  for (auto& node : g.nodes) {
    f(*node);
    for (auto& [name, a] : node->attrs) {
      if (a.g) for_each_node(*a.g, f);
      for (auto& sub : a.graphs) for_each_node(*sub, f);
    }
  }
}

}  // namespace

int choose_im2col_blocks(Graph& g, const Block& scratch_free, bool memory_first) {
  StepOf step_of;
  index_steps(scratch_free, step_of);
  int chosen = 0;
  auto choose = [&](Node& n) {
    auto where = step_of.find(&n);
    if (!n.domain.empty() || where == step_of.end()) return;  // a branch that never runs
    Im2colShape shape;
    if (n.op_type == "Conv" && conv_packs_weights(n)) shape = conv_im2col_shape(n);
    else if (n.op_type == "QLinearConv") shape = qlinear_conv_im2col_shape(n);
    else return;
    if (shape.bytes_per_column == 0) return;  // reads its input as the matrix (or cannot use it): no scratch
    ++chosen;
    if (n.op_type == "QLinearConv" && memory_first) {
      // Without dot-product instructions the integer matrix product gains little over the plane
      // kernel, and its im2col block and stack tiles cost RAM: keep the plane kernel.
      n.set_attr_int(kIm2colColsAttr, 0);
      return;
    }
    // The room under the peak of the node's own block: a nested block that keeps its arena
    // keeps its parent's step as it was.
    const Block& block = *where->second.first;
    const std::size_t slack = block.peak_live_bytes - block.live_bytes[where->second.second];
    n.set_attr_int(kIm2colColsAttr, choose_im2col_cols(shape, slack, memory_first));
  };
  for_each_node(g, choose);
  return chosen;
}

}  // namespace onnxc
