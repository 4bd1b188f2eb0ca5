// TreeEnsembleRegressor and TreeEnsembleClassifier (ai.onnx.ml 1 and 3; issue #24), lowered
// into one onnxc.TreeEnsemble step (rt::tree_ensemble, onnxc/tree_ensemble.h) that sums the
// reached leaves' weights per target, then the ai.onnx nodes of the rest: averaging, base values,
// the post-transform and, for a classifier, the label of the best score.
//
// The trees are laid out for the kernel here: each tree's nodes depth-first with the true
// branch first (the true child is the next node, only the false child's distance is stored),
// 16-bit feature indices, thresholds as float, a one-byte mode, distances in 16 bits when every
// one fits (32 otherwise), and a leaf's single weight kept in the node itself: 9 bytes a node.
//
// Not built (refused with a message): aggregate functions MIN and MAX, string class labels,
// binary classifiers that give weights for one class only, the PROBIT and SOFTMAX_ZERO
// post-transforms.
#include <algorithm>
#include <array>
#include <limits>
#include <map>

#include "ops/emitter.h"
#include "ops/ml_lowering.h"

namespace onnxc {
namespace {

using namespace ml;

constexpr const char* kTreeOp = "TreeEnsemble";  // domain onnxc

// rt::TreeMode.
enum Mode : uint8_t { kLeq = 0, kLt, kGte, kGt, kEq, kNeq, kLeaf, kLeafSingle };
constexpr uint8_t kMissingTrue = 0x80;

struct TreeNode {
  int64_t feature = 0;
  float threshold = 0.0f;
  uint8_t mode = kLeaf;
  bool missing_true = false;
  int64_t yes = -1, no = -1;                     // record indices of the children
  std::vector<std::pair<int64_t, float>> weights;  // (target, weight) of a leaf
};

// A float attribute given as floats or as a tensor (the *_as_tensor attributes of version 3).
std::vector<float> floats_or_tensor(const Node& n, const std::string& name) {
  if (const Attribute* t = n.attr(name + "_as_tensor"); t && t->t) {
    std::vector<float> v;
    for (int64_t i = 0; i < t->t->numel(); ++i) v.push_back(static_cast<float>(t->t->float_at(i)));
    return v;
  }
  return n.attr_floats(name);
}

uint8_t branch_mode(const Node& n, const std::string& s) {
  static const std::map<std::string, uint8_t> modes = {{"BRANCH_LEQ", kLeq}, {"BRANCH_LT", kLt}, {"BRANCH_GTE", kGte},
                                                       {"BRANCH_GT", kGt},   {"BRANCH_EQ", kEq}, {"BRANCH_NEQ", kNeq},
                                                       {"LEAF", kLeaf}};
  auto it = modes.find(s);
  if (it == modes.end()) fail_invalid(n, fmt::format("node mode '{}'", s), "use BRANCH_LEQ/LT/GTE/GT/EQ/NEQ or LEAF");
  return it->second;
}

// The kernel's arrays, every tree laid out depth-first.
struct Layout {
  std::vector<int64_t> feature, jump, roots, depth, leaf_target;
  std::vector<float> threshold, leaf_weight;
  std::vector<uint8_t> mode;
};

Layout lay_out(const Node& n, const std::vector<TreeNode>& nodes, const std::vector<int64_t>& roots) {
  Layout out;
  for (int64_t root : roots) {
    out.roots.push_back(static_cast<int64_t>(out.mode.size()));
    // Depth-first, true branch first; a branch's jump is filled when its false child is placed.
    // (record, slot of the parent whose false child it is, branches above it)
    std::vector<std::array<int64_t, 3>> stack{{root, -1, 0}};
    int64_t placed = 0, deepest = 0;
    while (!stack.empty()) {
      auto [rec, parent, level] = stack.back();
      stack.pop_back();
      deepest = std::max(deepest, level);
      if (++placed > static_cast<int64_t>(nodes.size()))
        fail_invalid(n, "a tree's nodes form a cycle or are shared between branches", "each node has one parent");
      const int64_t slot = static_cast<int64_t>(out.mode.size());
      if (parent >= 0) out.jump[static_cast<std::size_t>(parent)] = slot - parent;
      const TreeNode& t = nodes[static_cast<std::size_t>(rec)];
      if (t.mode == kLeaf) {
        if (t.weights.size() == 1) {
          out.feature.push_back(t.weights[0].first);
          out.threshold.push_back(t.weights[0].second);
          out.mode.push_back(kLeafSingle);
          out.jump.push_back(0);
        } else {
          out.feature.push_back(static_cast<int64_t>(t.weights.size()));
          out.threshold.push_back(0.0f);
          out.mode.push_back(kLeaf);
          out.jump.push_back(static_cast<int64_t>(out.leaf_target.size()));
          for (const auto& [target, w] : t.weights) {
            out.leaf_target.push_back(target);
            out.leaf_weight.push_back(w);
          }
        }
        continue;
      }
      out.feature.push_back(t.feature);
      out.threshold.push_back(t.threshold);
      out.mode.push_back(static_cast<uint8_t>(t.mode | (t.missing_true ? kMissingTrue : 0)));
      out.jump.push_back(0);
      stack.push_back({t.no, slot, level + 1});
      stack.push_back({t.yes, -1, level + 1});
    }
    out.depth.push_back(deepest);
  }
  return out;
}

template <class T> Value* constant_of(Lowering& l, const std::string& hint, DType dt, const std::vector<T>& v) {
  Tensor t(dt, {static_cast<int64_t>(std::max<std::size_t>(v.size(), 1))});
  std::fill(t.bytes.begin(), t.bytes.end(), 0);
  for (std::size_t i = 0; i < v.size(); ++i) {
    switch (dt) {
      case DType::Uint8: t.data<uint8_t>()[i] = static_cast<uint8_t>(v[i]); break;
      case DType::Uint16: t.data<uint16_t>()[i] = static_cast<uint16_t>(v[i]); break;
      case DType::Int32: t.data<int32_t>()[i] = static_cast<int32_t>(v[i]); break;
      default: t.data<float>()[i] = static_cast<float>(v[i]); break;
    }
  }
  Value* c = l.value(hint);
  set_constant_output(*c, std::move(t));
  return c;
}

// The onnxc.TreeEnsemble step summing the leaves each row reaches: [N, targets].
Value* tree_sums(Lowering& l, const Node& n, Value* x, int64_t c, const std::vector<TreeNode>& nodes,
                 const std::vector<int64_t>& roots, int64_t targets) {
  if (c > std::numeric_limits<uint16_t>::max() || targets > std::numeric_limits<uint16_t>::max())
    fail_unsupported(n, fmt::format("{} features and {} targets: onnxc's tree layout holds up to 65535 of each", c, targets));
  const Layout layout = lay_out(n, nodes, roots);
  int64_t widest = 0;
  for (int64_t j : layout.jump) widest = std::max(widest, j);
  const DType jump_type = widest <= std::numeric_limits<uint16_t>::max() ? DType::Uint16 : DType::Int32;
  Value* sums = l.value("sums");
  Node& step = l.add(kTreeOp, {x, constant_of(l, "tree_feature", DType::Uint16, layout.feature),
                               constant_of(l, "tree_threshold", DType::Float, layout.threshold),
                               constant_of(l, "tree_mode", DType::Uint8, layout.mode),
                               constant_of(l, "tree_jump", jump_type, layout.jump),
                               constant_of(l, "tree_roots", DType::Int32, layout.roots),
                               constant_of(l, "tree_depth", DType::Uint16, layout.depth),
                               constant_of(l, "leaf_target", DType::Uint16, layout.leaf_target),
                               constant_of(l, "leaf_weight", DType::Float, layout.leaf_weight)},
                     {sums});
  step.domain = "onnxc";
  step.version = 1;
  step.set_attr_int("targets", targets);
  return sums;
}

Nodes lower_tree_ensemble(Node& n, Graph& g, bool classifier) {
  Lowering l(n, g, kLoweredOpset);
  Value* x = features(l, n);
  if (n.inputs[0]->shape.size() != 2)
    fail_unsupported(n, fmt::format("X has shape {}; onnxc takes [N, C] features", shape_str(n.inputs[0]->shape)));
  const int64_t c = n.inputs[0]->shape[1];
  if (c < 1) fail_invalid(n, "X has no features");

  const std::vector<int64_t> tree_ids = n.attr_ints("nodes_treeids"), node_ids = n.attr_ints("nodes_nodeids"),
                             feature_ids = n.attr_ints("nodes_featureids"), yes = n.attr_ints("nodes_truenodeids"),
                             no = n.attr_ints("nodes_falsenodeids"),
                             missing = n.attr_ints("nodes_missing_value_tracks_true");
  const std::vector<float> values = floats_or_tensor(n, "nodes_values");
  const std::vector<std::string> modes = n.attr_strings("nodes_modes");
  const std::size_t count = tree_ids.size();
  if (count == 0) fail_invalid(n, "has no tree nodes");
  for (std::size_t s : {node_ids.size(), feature_ids.size(), yes.size(), no.size(), values.size(), modes.size()})
    if (s != count) fail_invalid(n, fmt::format("the nodes_* attributes have different lengths ({} and {})", count, s));
  if (!missing.empty() && missing.size() != count)
    fail_invalid(n, "nodes_missing_value_tracks_true has a different length than the nodes");

  std::map<std::pair<int64_t, int64_t>, int64_t> index;  // (tree, node id) -> record
  std::vector<TreeNode> nodes(count);
  std::vector<int64_t> trees;  // tree ids in order of first appearance
  for (std::size_t i = 0; i < count; ++i) {
    if (!index.emplace(std::make_pair(tree_ids[i], node_ids[i]), static_cast<int64_t>(i)).second)
      fail_invalid(n, fmt::format("tree {} lists node {} twice", tree_ids[i], node_ids[i]));
    if (std::find(trees.begin(), trees.end(), tree_ids[i]) == trees.end()) trees.push_back(tree_ids[i]);
    TreeNode& t = nodes[i];
    t.mode = branch_mode(n, modes[i]);
    t.feature = feature_ids[i];
    t.threshold = values[i];
    t.missing_true = !missing.empty() && missing[i] != 0;
    if (t.mode != kLeaf && (t.feature < 0 || t.feature >= c))
      fail_invalid(n, fmt::format("node {} of tree {} reads feature {} of {}", node_ids[i], tree_ids[i], t.feature, c));
  }
  std::vector<bool> is_child(count, false);
  for (std::size_t i = 0; i < count; ++i) {
    if (nodes[i].mode == kLeaf) continue;
    for (auto [child, slot] : {std::make_pair(yes[i], &nodes[i].yes), std::make_pair(no[i], &nodes[i].no)}) {
      auto it = index.find({tree_ids[i], child});
      if (it == index.end())
        fail_invalid(n, fmt::format("node {} of tree {} branches to node {}, which the tree lacks", node_ids[i], tree_ids[i], child));
      *slot = it->second;
      is_child[static_cast<std::size_t>(it->second)] = true;
    }
  }
  std::vector<int64_t> roots;
  for (int64_t tree : trees) {
    int64_t root = -1;
    for (std::size_t i = 0; i < count; ++i)
      if (tree_ids[i] == tree && !is_child[i]) {
        if (root >= 0) fail_invalid(n, fmt::format("tree {} has more than one root", tree));
        root = static_cast<int64_t>(i);
      }
    if (root < 0) fail_invalid(n, fmt::format("tree {} has no root (its nodes form a cycle)", tree));
    roots.push_back(root);
  }

  // Leaf weights.
  const std::string prefix = classifier ? "class_" : "target_";
  const std::vector<int64_t> w_trees = n.attr_ints(prefix + "treeids"), w_nodes = n.attr_ints(prefix + "nodeids"),
                             w_ids = n.attr_ints(prefix + "ids");
  const std::vector<float> w_values = floats_or_tensor(n, prefix + "weights");
  if (w_nodes.size() != w_trees.size() || w_ids.size() != w_trees.size() || w_values.size() != w_trees.size())
    fail_invalid(n, fmt::format("the {}* attributes have different lengths", prefix));
  std::vector<int64_t> labels;
  int64_t targets = 0;
  if (classifier) {
    if (n.has_attr("classlabels_strings"))
      fail_unsupported(n, "string class labels are not supported", "use classlabels_int64s");
    labels = n.attr_ints("classlabels_int64s");
    if (labels.empty()) fail_invalid(n, "needs classlabels_int64s (or classlabels_strings)");
    targets = static_cast<int64_t>(labels.size());
  } else {
    targets = n.attr_int("n_targets", 1);
  }
  if (targets < 1 || targets > std::numeric_limits<uint16_t>::max())
    fail_unsupported(n, fmt::format("{} targets: onnxc's tree layout holds 1 to 65535", targets));
  std::vector<bool> used(static_cast<std::size_t>(targets), false);
  for (std::size_t k = 0; k < w_trees.size(); ++k) {
    auto it = index.find({w_trees[k], w_nodes[k]});
    if (it == index.end())
      fail_invalid(n, fmt::format("a weight names node {} of tree {}, which does not exist", w_nodes[k], w_trees[k]));
    if (w_ids[k] < 0 || w_ids[k] >= targets)
      fail_invalid(n, fmt::format("a weight's target {} is outside the {} targets", w_ids[k], targets));
    TreeNode& t = nodes[static_cast<std::size_t>(it->second)];
    if (t.mode != kLeaf) fail_invalid(n, fmt::format("a weight names node {} of tree {}, a branch", w_nodes[k], w_trees[k]));
    t.weights.emplace_back(w_ids[k], w_values[k]);
    used[static_cast<std::size_t>(w_ids[k])] = true;
  }
  if (classifier && targets == 2 && !(used[0] && used[1]))
    fail_unsupported(n, "a binary classifier with weights for one class only is not supported",
                     "give both classes' weights (or convert the model with both)");
  const std::string aggregate = n.attr_string("aggregate_function", "SUM");
  if (aggregate != "SUM" && aggregate != "AVERAGE")
    fail_unsupported(n, fmt::format("aggregate_function {} is not supported", aggregate), "use SUM or AVERAGE");

  Value* sums = tree_sums(l, n, x, c, nodes, roots, targets);

  Value* scores = sums;
  if (aggregate == "AVERAGE")
    scores = binary(l, "Mul", scores, l.float_constant("per_tree", {}, {1.0f / static_cast<float>(trees.size())}), "average");
  const std::vector<float> base = floats_or_tensor(n, "base_values");
  if (!base.empty()) {
    if (static_cast<int64_t>(base.size()) != targets)
      fail_invalid(n, fmt::format("base_values has {} values for {} targets", base.size(), targets));
    scores = binary(l, "Add", scores, l.float_constant("base_values", {targets}, base), "with_base");
  }
  if (!classifier) {
    post_transform(l, n, scores, n.outputs[0]);
    return l.take();
  }
  Value* z = post_transform(l, n, scores, n.has_output(1) ? n.outputs[1] : nullptr);
  if (n.has_output(0)) {
    Value* best = l.value("best");
    Node& am = l.add("ArgMax", {z}, {best});
    am.set_attr_int("axis", 1);
    am.set_attr_int("keepdims", 0);
    l.add("Gather", {l.int64_constant("labels", {targets}, labels), best}, {n.outputs[0]}).set_attr_int("axis", 0);
  }
  return l.take();
}

// ---- onnxc.TreeEnsemble: X, then the layout's eight arrays ----

void infer_tree_step(Node& n) {
  check_arity(n, 9, 9, 1, 1);
  require_dtype(n, 0, {DType::Float});
  const int64_t targets = n.attr_int("targets", 0);
  if (targets <= 0 || n.inputs[0]->shape.size() != 2) fail_invalid(n, "made by the TreeEnsemble lowering only");
  for (std::size_t i = 1; i < n.inputs.size(); ++i)
    if (!n.inputs[i]->constant) fail_invalid(n, "the tree layout's arrays must be constants");
  set_output(n, 0, DType::Float, {n.inputs[0]->shape[0], targets});
}

void emit_tree_step(const Node& n, Emitter& e) {
  e.include("onnxc/tree_ensemble.h");
  e.linef("constexpr rt::TreeEnsembleParams p = {{{}, {}, {}, {}}};", n.inputs[0]->shape[0], n.inputs[0]->shape[1],
          n.inputs[5]->numel(), n.attr_int("targets", 0));
  // One branch mode in every tree (LEQ for scikit-learn, LT for XGBoost): the kernel compares
  // without dispatching on the mode.
  const Tensor& modes = *n.inputs[3]->constant;
  int uniform = -2;
  for (int64_t i = 0; i < modes.numel(); ++i) {
    const int kind = modes.data<uint8_t>()[i] & 0x0f;
    if (kind >= kLeaf) continue;
    uniform = uniform == -2 || uniform == kind ? kind : -1;
  }
  static const char* const names[] = {"rt::kTreeLeq", "rt::kTreeLt", "rt::kTreeGte", "rt::kTreeGt"};
  const std::string mode = uniform >= 0 && uniform <= kGt ? names[uniform] : "rt::kTreeAnyMode";
  e.linef("rt::tree_ensemble<{}>({}, {}, {}, {}, {}, {}, {}, {}, {}, {}, p);", mode, e.in(0), e.in(1), e.in(2),
          e.in(3), e.in(4), e.in(5), e.in(6), e.in(7), e.in(8), e.out(0));
}

const OpRegistrar tree_step([] {
  OpDef d;
  d.domain = "onnxc";
  d.op_type = kTreeOp;
  d.versions = {1};
  d.infer = infer_tree_step;
  d.emit = emit_tree_step;
  return d;
}());

const OpRegistrar tree_regressor(ml_op("TreeEnsembleRegressor", {1, 3},
                                       [](Node& n, Graph& g) { return lower_tree_ensemble(n, g, false); }));
const OpRegistrar tree_classifier(ml_op("TreeEnsembleClassifier", {1, 3},
                                        [](Node& n, Graph& g) { return lower_tree_ensemble(n, g, true); }));

}  // namespace
}  // namespace onnxc
