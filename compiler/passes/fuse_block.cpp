// fuse-block: see kernel_passes.h. The chain's nodes become one FusedBlock node
// (ops/fused_block.h) in the place of its last one.
#include <map>
#include <set>

#include "ops/conv_algorithm.h"
#include "ops/fused_block.h"
#include "passes/kernel_passes.h"

namespace onnxc {
namespace {

bool is_float_conv_2d(const Node* n) {
  return n && n->op_type == "Conv" && n->domain.empty() && n->inputs[0]->dtype == DType::Float &&
         n->inputs[0]->shape.size() == 4 && n->has_input(1) && n->inputs[1]->constant &&
         !n->has_attr(kWinogradRowsAttr);
}

// A 1x1 Conv the packed matrix product computes over its input's planes as they are (weights in
// rt::pack_weights' layout).
bool is_pointwise(const Node* n) {
  if (!is_float_conv_2d(n) || n->attr_int("group", 1) != 1 || n->attr_int(kPackedWeightsAttr, 0) != 1) return false;
  const ConvAlgorithm a = conv_algorithm(*n);
  if (a != ConvAlgorithm::Gemm && a != ConvAlgorithm::Shifted) return false;
  const rt::ConvParams p = conv_geometry(*n);
  return p.k_h == 1 && p.k_w == 1 && rt::conv_reads_input_as_matrix(p);
}

// A depthwise Conv (one channel per group, no multiplier) whose every output row reads a row of
// its input (a band's input rows are never empty).
bool is_depthwise(const Node* n) {
  if (!is_float_conv_2d(n) || conv_algorithm(*n) != ConvAlgorithm::Depthwise) return false;
  const rt::ConvParams p = conv_geometry(*n);
  const int64_t span = rt::depthwise_span_h(p);
  return p.out_channels == p.in_channels && p.pad_h < span && (p.out_h - 1) * p.stride_h - p.pad_h < p.in_h;
}

// An Add of `projected` and another float tensor of its shape (the residual), or nullptr.
Node* residual_add(const Graph& g, const Value* projected, const Value*& residual) {
  Node* add = g.only_reader(projected);
  if (!add || add->op_type != "Add" || !add->domain.empty() || add->inputs.size() != 2 || add->outputs.size() != 1)
    return nullptr;
  const Value* other = add->inputs[0] == projected ? add->inputs[1] : add->inputs[0];
  if (add->inputs[0] == add->inputs[1] || !other || other->dtype != DType::Float || other->shape != projected->shape ||
      add->outputs[0]->shape != projected->shape)
    return nullptr;
  residual = other;
  return add;
}

std::vector<std::string> merged_ops(const Node& n) {
  std::vector<std::string> ops = {n.op_type};
  for (const std::string& op : n.attr_strings(kMergedOpsAttr)) ops.push_back(op);
  return ops;
}

struct Chain {
  Node* expand = nullptr;
  Node* depthwise = nullptr;
  Node* project = nullptr;
  Node* add = nullptr;
  const Value* residual = nullptr;
  Node* last() const { return add ? add : project ? project : depthwise; }
  std::vector<const Node*> members() const {
    std::vector<const Node*> m;
    for (const Node* n : {expand, depthwise, project, add})
      if (n) m.push_back(n);
    return m;
  }
};

std::unique_ptr<Node> fused_node(const Chain& c, int64_t tasks) {
  auto n = std::make_unique<Node>();
  const Node& last = *c.last();
  n->name = last.name;
  n->domain = kFusedBlockDomain;
  n->op_type = kFusedBlockOp;
  n->opset = n->version = 1;
  n->index = last.index;
  n->inputs.assign(kBlockInputs, nullptr);
  n->inputs[kBlockX] = c.expand->inputs[0];
  n->inputs[kExpandW] = c.expand->inputs[1];
  n->inputs[kExpandBias] = c.expand->has_input(2) ? c.expand->inputs[2] : nullptr;
  n->inputs[kDepthwiseW] = c.depthwise->inputs[1];
  n->inputs[kDepthwiseBias] = c.depthwise->has_input(2) ? c.depthwise->inputs[2] : nullptr;
  if (c.project) {
    n->inputs[kProjectW] = c.project->inputs[1];
    n->inputs[kProjectBias] = c.project->has_input(2) ? c.project->inputs[2] : nullptr;
  }
  n->inputs[kResidual] = const_cast<Value*>(c.residual);
  n->outputs = last.outputs;
  const rt::ConvParams p = conv_geometry(*c.depthwise);
  const int64_t in_channels = c.expand->inputs[0]->shape[1];
  const int64_t out_channels = c.project ? c.project->outputs[0]->shape[1] : 0;
  set_fused_block_params(*n, {p, in_channels, out_channels, fused_block_band(p, in_channels, out_channels), tasks});
  n->set_attr_string(kExpandEpilogueAttr, epilogue_code(*c.expand));
  n->set_attr_string(kDepthwiseEpilogueAttr, epilogue_code(*c.depthwise));
  if (c.project) n->set_attr_string(kProjectEpilogueAttr, epilogue_code(*c.project));
  std::vector<std::string> ops;
  for (const Node* m : c.members())
    for (const std::string& op : merged_ops(*m)) ops.push_back(op);
  n->set_attr_strings(kMergedOpsAttr, std::move(ops));
  return n;
}

}  // namespace

int fuse_block(Graph& g, int64_t tasks) {
  std::vector<Chain> chains;
  std::set<const Node*> taken;
  for (const auto& node : g.nodes) {
    Chain c;
    c.expand = node.get();
    if (taken.count(c.expand) || !is_pointwise(c.expand)) continue;
    const Value* expanded = c.expand->outputs[0];
    c.depthwise = g.only_reader(expanded);
    if (!is_depthwise(c.depthwise) || c.depthwise->inputs[0] != expanded || taken.count(c.depthwise)) continue;
    if (expanded->byte_size() < kFusedBlockMinExpandedBytes) continue;
    Node* project = g.only_reader(c.depthwise->outputs[0]);
    if (is_pointwise(project) && project->inputs[0] == c.depthwise->outputs[0] && !taken.count(project)) {
      c.project = project;
      c.add = residual_add(g, project->outputs[0], c.residual);
    }
    for (const Node* m : c.members()) taken.insert(m);
    chains.push_back(c);
  }
  if (chains.empty()) return 0;
  std::map<const Node*, std::unique_ptr<Node>> replacement;
  std::set<const Node*> dropped;
  int removed = 0;
  for (const Chain& c : chains) {
    replacement[c.last()] = fused_node(c, tasks);
    for (const Node* m : c.members())
      if (m != c.last()) {
        dropped.insert(m);
        ++removed;
      }
  }
  replace_nodes(g, replacement, dropped);
  return removed;
}

}  // namespace onnxc
