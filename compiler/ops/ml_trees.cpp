// TreeEnsembleRegressor and TreeEnsembleClassifier (ai.onnx.ml 1 and 3; issue #24), lowered
// into one onnxc.TreeEnsemble step (rt::tree_ensemble, onnxc/tree_ensemble.h) that sums the
// reached leaves' weights per target, then the ai.onnx nodes of the rest: averaging, base values,
// the post-transform and, for a classifier, the label of the best score.
//
// The trees are laid out for the kernel here: each tree's nodes depth-first with the true
// branch first (the true child is the next node, only the false child's distance is stored),
// one record a node: the float threshold (a leaf's single weight), a 16-bit feature index and a
// 16-bit `next` holding the false child's distance and the leaf and missing-value bits: 8 bytes a
// node (12 when a distance does not fit). Every branch mode becomes one of three comparisons
// (LEQ, LT, EQ; GTE, GT and NEQ by swapping the children): a forest of one compiles it into the
// kernel, others store it in two bits of `next`.
//
// Not built (refused with a message): binary classifiers that give weights for the second class only.
#include <algorithm>
#include <array>
#include <cstring>
#include <limits>
#include <map>

#include "ops/emitter.h"
#include "ops/ml_lowering.h"

namespace onnxc {
namespace {

using namespace ml;

constexpr const char* kTreeOp = "TreeEnsemble";  // domain onnxc

// rt::TreeMode.
enum Mode : uint8_t { kLeq = 0, kLt, kGte, kGt, kEq, kNeq, kMember, kLeaf };

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

// The kernel's arrays, every tree laid out depth-first (rt::tree_ensemble's record fields).
struct Layout {
  std::vector<float> value, leaf_weight;
  std::vector<int64_t> feature, link, roots, depth, leaf_target;  // link: jump, target or first weight
  std::vector<uint8_t> flags, kind;
};

// rt::tree_ensemble's `next` bits and comparison kinds (rt::TreeKind).
constexpr uint8_t kLeafBit = 1, kFlagBit = 2;
enum Kind : uint8_t { kKindLeq = 0, kKindLt = 1, kKindEq = 2 };

// A branch as one of three comparisons: GTE, GT and NEQ are the negations of LT, LEQ and EQ for
// any number, so they become those with the children (and the missing-value branch) swapped.
// A NaN threshold compares false in every mode but NEQ: LEQ against NaN is false for any value.
std::pair<Kind, bool> canonical_rule(uint8_t mode, float threshold) {
  if (threshold != threshold) return {kKindLeq, mode == kNeq};
  switch (mode) {
    case kLt: return {kKindLt, false};
    case kGte: return {kKindLt, true};
    case kGt: return {kKindLeq, true};
    case kEq: return {kKindEq, false};
    case kNeq: return {kKindEq, true};
    default: return {kKindLeq, false};
  }
}

constexpr std::size_t kMaxPlaced = std::size_t{1} << 24;

Layout lay_out(const Node& n, const std::vector<TreeNode>& nodes, const std::vector<int64_t>& roots) {
  Layout out;
  for (int64_t root : roots) {
    out.roots.push_back(static_cast<int64_t>(out.kind.size()));
    // Depth-first, true branch first; a branch's distance is filled when its false child is placed.
    // (record, slot of the parent whose false child it is, branches above it)
    std::vector<std::array<int64_t, 3>> stack{{root, -1, 0}};
    int64_t deepest = 0;
    while (!stack.empty()) {
      auto [rec, parent, level] = stack.back();
      stack.pop_back();
      deepest = std::max(deepest, level);
      // A node two branches share is placed under each (set-membership chains share their true
      // child); a path longer than the node count is a cycle.
      if (level > static_cast<int64_t>(nodes.size())) fail_invalid(n, "a tree's nodes form a cycle", "each path ends at a leaf");
      if (out.kind.size() >= kMaxPlaced)
        fail_unsupported(n, fmt::format("the trees lay out to more than {} nodes (shared subtrees are copied)", kMaxPlaced));
      const int64_t slot = static_cast<int64_t>(out.kind.size());
      if (parent >= 0) out.link[static_cast<std::size_t>(parent)] = slot - parent;
      const TreeNode& t = nodes[static_cast<std::size_t>(rec)];
      if (t.mode == kLeaf) {
        out.feature.push_back(0);
        out.kind.push_back(kKindLeq);
        if (t.weights.size() == 1) {
          out.value.push_back(t.weights[0].second);
          out.link.push_back(t.weights[0].first);
          out.flags.push_back(kLeafBit);
        } else {
          out.value.push_back(static_cast<float>(t.weights.size()));
          out.link.push_back(static_cast<int64_t>(out.leaf_target.size()));
          out.flags.push_back(kLeafBit | kFlagBit);
          for (const auto& [target, w] : t.weights) {
            out.leaf_target.push_back(target);
            out.leaf_weight.push_back(w);
          }
        }
        continue;
      }
      const auto [kind, swap] = canonical_rule(t.mode, t.threshold);
      out.feature.push_back(t.feature);
      out.value.push_back(t.threshold);
      out.kind.push_back(kind);
      out.flags.push_back(t.missing_true != swap ? kFlagBit : 0);
      out.link.push_back(0);
      stack.push_back({swap ? t.yes : t.no, slot, level + 1});
      stack.push_back({swap ? t.no : t.yes, -1, level + 1});
    }
    out.depth.push_back(deepest);
  }
  return out;
}

// The records: two words a node (value, feature | next << 16) when every `next` fits in 16 bits,
// three (value, feature, next) otherwise. next = link << 2 | flags, or link << 4 | kind << 2 |
// flags when the trees mix comparison kinds (`mixed`).
std::pair<std::vector<uint32_t>, int> node_words(const Node& n, const Layout& layout, bool mixed) {
  const int shift = mixed ? 4 : 2;
  const int64_t widest = *std::max_element(layout.link.begin(), layout.link.end());
  if (widest > (int64_t{1} << (32 - shift)) - 1)
    fail_unsupported(n, "a tree or the leaves' weights too large for onnxc's tree layout (28-bit distances)");
  const int words = widest <= (int64_t{1} << (16 - shift)) - 1 ? 2 : 3;
  std::vector<uint32_t> out;
  for (std::size_t i = 0; i < layout.value.size(); ++i) {
    uint32_t bits = 0;
    std::memcpy(&bits, &layout.value[i], sizeof bits);
    out.push_back(bits);
    const auto feature = static_cast<uint32_t>(layout.feature[i]);
    // rt::tree_ensemble's mixed codes: LEQ 1, LT 2, EQ 3.
    const int64_t code = mixed ? (layout.kind[i] + 1) << 2 : 0;
    const auto next = static_cast<uint32_t>(layout.link[i] << shift | code | layout.flags[i]);
    if (words == 2) {
      out.push_back(feature | next << 16);
    } else {
      out.push_back(feature);
      out.push_back(next);
    }
  }
  return {out, words};
}

template <class T> Value* constant_of(Lowering& l, const std::string& hint, DType dt, const std::vector<T>& v) {
  Tensor t(dt, {static_cast<int64_t>(std::max<std::size_t>(v.size(), 1))});
  std::fill(t.bytes.begin(), t.bytes.end(), 0);
  for (std::size_t i = 0; i < v.size(); ++i) {
    switch (dt) {
      case DType::Uint8: t.data<uint8_t>()[i] = static_cast<uint8_t>(v[i]); break;
      case DType::Uint16: t.data<uint16_t>()[i] = static_cast<uint16_t>(v[i]); break;
      case DType::Uint32: t.data<uint32_t>()[i] = static_cast<uint32_t>(v[i]); break;
      case DType::Int32: t.data<int32_t>()[i] = static_cast<int32_t>(v[i]); break;
      default: t.data<float>()[i] = static_cast<float>(v[i]); break;
    }
  }
  Value* c = l.value(hint);
  set_constant_output(*c, std::move(t));
  return c;
}

// The onnxc.TreeEnsemble step combining the leaves each row reaches (aggregate: rt::TreeAggregate):
// [N, targets].
Value* tree_sums(Lowering& l, const Node& n, Value* x, int64_t c, const std::vector<TreeNode>& nodes,
                 const std::vector<int64_t>& roots, int64_t targets, int aggregate) {
  if (c > std::numeric_limits<uint16_t>::max() || targets > std::numeric_limits<uint16_t>::max())
    fail_unsupported(n, fmt::format("{} features and {} targets: onnxc's tree layout holds up to 65535 of each", c, targets));
  const Layout layout = lay_out(n, nodes, roots);
  // One comparison kind in every tree (scikit-learn's LEQ, XGBoost's LT): the kernel compares
  // without dispatching on the kind, and the kinds are not stored.
  int kind = -1;
  bool missing = false;  // some branch sends a NaN to its true child
  for (std::size_t i = 0; i < layout.kind.size(); ++i) {
    if (layout.flags[i] & kLeafBit) continue;
    kind = kind == -1 || kind == layout.kind[i] ? layout.kind[i] : -2;
    missing = missing || (layout.flags[i] & kFlagBit);
  }
  const auto [words, per_node] = node_words(n, layout, kind == -2);
  Value* sums = l.value("sums");
  Node& step = l.add(kTreeOp, {x, constant_of(l, "tree_nodes", DType::Uint32, words),
                               constant_of(l, "tree_roots", DType::Int32, layout.roots),
                               constant_of(l, "tree_depth", DType::Uint16, layout.depth),
                               constant_of(l, "leaf_target", DType::Uint16, layout.leaf_target),
                               constant_of(l, "leaf_weight", DType::Float, layout.leaf_weight)},
                     {sums});
  step.set_attr_int("kind", kind == -2 ? -1 : std::max(kind, 0));
  step.set_attr_int("words", per_node);
  step.set_attr_int("missing", missing);
  step.set_attr_int("aggregate", aggregate);
  step.domain = "onnxc";
  step.version = 1;
  step.set_attr_int("targets", targets);
  return sums;
}

// The trees' scores [N, targets] after the aggregate function and the base values.
Value* aggregated(Lowering& l, const Node& n, Value* x, int64_t c, const std::vector<TreeNode>& nodes,
                  const std::vector<int64_t>& roots, int64_t targets, const std::string& aggregate,
                  const std::vector<float>& base) {
  static const std::map<std::string, int> kernel_aggregate = {{"SUM", 0}, {"AVERAGE", 0}, {"MIN", 1}, {"MAX", 2}};
  const auto it = kernel_aggregate.find(aggregate);
  if (it == kernel_aggregate.end())
    fail_invalid(n, fmt::format("aggregate_function '{}'", aggregate), "use SUM, AVERAGE, MIN or MAX");
  Value* scores = tree_sums(l, n, x, c, nodes, roots, targets, it->second);
  if (aggregate == "AVERAGE")
    scores = binary(l, "Mul", scores, l.float_constant("per_tree", {}, {1.0f / static_cast<float>(roots.size())}), "average");
  if (!base.empty()) {
    if (static_cast<int64_t>(base.size()) != targets)
      fail_invalid(n, fmt::format("base_values has {} values for {} targets", base.size(), targets));
    scores = binary(l, "Add", scores, l.float_constant("base_values", {targets}, base), "with_base");
  }
  if (it->second != 0) {
    // MIN and MAX: a target no reached leaf gives a weight to is 0, base value or not (as ONNX
    // Runtime gives it); the kernel leaves it infinite.
    Value* zeroed = l.value("unreached_zero");
    l.add("Where", {unary(l, "IsInf", scores, "unreached"), l.float_constant("zero", {}, {0.0f}), scores}, {zeroed});
    scores = zeroed;
  }
  return scores;
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
  ClassLabels labels;
  int64_t targets = 0;
  if (classifier) {
    labels = class_labels(l, n, "classlabels_int64s");
    targets = labels.count;
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
  // A binary classifier with weights for the first class only (XGBoost's and LightGBM's form, as
  // onnxmltools writes it): ONNX Runtime reads their sum as the second class's score s and gives
  // [-s, s] or [1 - p, p] (binary_scores), base_values one value added to s.
  const bool one_score = classifier && targets == 2 && used[0] && !used[1];
  if (classifier && targets == 2 && !used[0])
    fail_unsupported(n, "a binary classifier with weights for the second class only is not supported",
                     "give the weights to the first class (as onnxmltools does) or to both");
  const std::string aggregate = n.attr_string("aggregate_function", "SUM");
  if (one_score) {
    const std::vector<float> base = floats_or_tensor(n, "base_values");
    if (base.size() > 1)
      fail_unsupported(n, "a binary classifier with weights for one class takes one base value, not two");
    Value* sums = aggregated(l, n, x, c, nodes, roots, 1, aggregate, base);
    Value* z = binary_scores(l, n, n.attr_string("post_transform", "NONE"), sums, n.has_output(1) ? n.outputs[1] : nullptr);
    label_of_best(l, n, z, labels);
    return l.take();
  }
  Value* scores = aggregated(l, n, x, c, nodes, roots, targets, aggregate, floats_or_tensor(n, "base_values"));
  if (!classifier) {
    post_transform(l, n, n.attr_string("post_transform", "NONE"), scores, n.outputs[0]);
    return l.take();
  }
  Value* z = post_transform(l, n, n.attr_string("post_transform", "NONE"), scores, n.has_output(1) ? n.outputs[1] : nullptr);
  label_of_best(l, n, z, labels);
  return l.take();
}

// BRANCH_MEMBER nodes (TreeEnsemble 5, mode 6; their sets in membership_values, one after the
// other, each ended by a NaN) become chains of BRANCH_EQ nodes: x == the first member goes to the
// true child, else the next member is tried, the last one's false child the node's; a NaN follows
// the node's missing-value flag at each. An empty set is never true. Which set is whose: the
// operator's reference implementation hands them out as it walks the trees (depth-first from
// tree_roots, true branch first), which is the order of the nodes when they are listed that way;
// onnxc takes that case and refuses the others.
void member_chains(const Node& n, std::vector<TreeNode>& nodes, std::size_t count, const std::vector<int64_t>& roots,
                   const std::vector<float>& members) {
  std::vector<std::size_t> walk, listed;
  std::vector<int64_t> stack(roots.rbegin(), roots.rend());
  while (!stack.empty() && walk.size() <= count) {
    const auto i = static_cast<std::size_t>(stack.back());
    stack.pop_back();
    if (i >= count) continue;  // a leaf
    if (nodes[i].mode == kMember) walk.push_back(i);
    stack.push_back(nodes[i].no);
    stack.push_back(nodes[i].yes);
  }
  for (std::size_t i = 0; i < count; ++i)
    if (nodes[i].mode == kMember) listed.push_back(i);
  if (walk != listed)
    fail_unsupported(n, "its BRANCH_MEMBER nodes are not listed in the order a depth-first walk of the trees meets them",
                     "list the nodes depth-first from tree_roots, true branch first (which set is whose is ambiguous otherwise)");
  std::size_t next = 0;
  for (std::size_t i : listed) {
    std::vector<float> set;
    for (; next < members.size() && members[next] == members[next]; ++next) set.push_back(members[next]);
    if (next >= members.size())
      fail_invalid(n, fmt::format("membership_values has no NaN-ended set for the BRANCH_MEMBER node {}", i));
    ++next;
    if (set.empty()) {  // LEQ against NaN: false for every value
      nodes[i].mode = kLeq;
      nodes[i].threshold = std::numeric_limits<float>::quiet_NaN();
      continue;
    }
    const int64_t no = nodes[i].no;
    int64_t at = static_cast<int64_t>(i);
    for (std::size_t k = 0; k < set.size(); ++k) {
      TreeNode& t = nodes[static_cast<std::size_t>(at)];
      t.mode = kEq;
      t.threshold = set[k];
      if (k + 1 == set.size()) {
        t.no = no;
        break;
      }
      TreeNode link = t;  // the next member: same feature, true child and missing-value flag
      nodes.push_back(link);
      nodes[static_cast<std::size_t>(at)].no = static_cast<int64_t>(nodes.size()) - 1;
      at = static_cast<int64_t>(nodes.size()) - 1;
    }
  }
  if (next != members.size()) fail_invalid(n, "membership_values has more sets than BRANCH_MEMBER nodes");
}

// TreeEnsemble (ai.onnx.ml 5): interior nodes in nodes_*, each child either a node or a leaf
// (nodes_trueleafs / nodes_falseleafs), a leaf one (target, weight) pair, tree_roots the nodes
// each tree starts at; the aggregate function and post-transform as integer codes. The codes are
// the operator text's (onnx.ai, and the ONNX reference implementation's enums): aggregate AVERAGE 0,
// SUM 1, MIN 2, MAX 3; post_transform NONE 0, SOFTMAX 1, LOGISTIC 2, SOFTMAX_ZERO 3, PROBIT 4;
// modes BRANCH_LEQ 0, LT 1, GTE 2, GT 3, EQ 4, NEQ 5, MEMBER 6 (member_chains). (ONNX Runtime 1.30 reads
// post_transform through its older enum, where 1 is LOGISTIC and 2 SOFTMAX; docs/classical-ml.md.)
Nodes lower_tree_ensemble5(Node& n, Graph& g) {
  Lowering l(n, g, kLoweredOpset);
  if (n.inputs.empty() || !n.has_input(0)) fail_invalid(n, "needs one input X");
  const DType in_type = n.inputs[0]->dtype;
  Value* x = n.inputs[0];
  if (in_type == DType::Double || in_type == DType::Float16) {
    x = l.value("x_float");
    l.add("Cast", {n.inputs[0]}, {x}).set_attr_int("to", 1);
  } else if (in_type != DType::Float) {
    fail_unsupported(n, fmt::format("X is {}; TreeEnsemble takes float, double or float16", dtype_name(in_type)));
  }
  if (n.inputs[0]->shape.size() != 2)
    fail_unsupported(n, fmt::format("X has shape {}; onnxc takes [N, C] features", shape_str(n.inputs[0]->shape)));
  const int64_t c = n.inputs[0]->shape[1];
  if (c < 1) fail_invalid(n, "X has no features");

  auto tensor_floats = [&](const char* name) {
    std::vector<float> v;
    if (const Attribute* t = n.attr(name); t && t->t)
      for (int64_t i = 0; i < t->t->numel(); ++i) v.push_back(static_cast<float>(t->t->float_at(i)));
    return v;
  };
  std::vector<int64_t> modes;
  if (const Attribute* t = n.attr("nodes_modes"); t && t->t)
    for (int64_t i = 0; i < t->t->numel(); ++i) modes.push_back(t->t->int_at(i));
  const std::vector<float> splits = tensor_floats("nodes_splits"), leaf_weights = tensor_floats("leaf_weights");
  const std::vector<int64_t> feature_ids = n.attr_ints("nodes_featureids"), yes = n.attr_ints("nodes_truenodeids"),
                             no = n.attr_ints("nodes_falsenodeids"), yes_leaf = n.attr_ints("nodes_trueleafs"),
                             no_leaf = n.attr_ints("nodes_falseleafs"),
                             missing = n.attr_ints("nodes_missing_value_tracks_true"),
                             leaf_targets = n.attr_ints("leaf_targetids"), tree_roots = n.attr_ints("tree_roots");
  const std::size_t count = feature_ids.size();
  if (count == 0 || tree_roots.empty()) fail_invalid(n, "has no tree nodes or no tree_roots");
  for (std::size_t size : {splits.size(), modes.size(), yes.size(), no.size(), yes_leaf.size(), no_leaf.size()})
    if (size != count) fail_invalid(n, fmt::format("the nodes_* attributes have different lengths ({} and {})", count, size));
  if (!missing.empty() && missing.size() != count)
    fail_invalid(n, "nodes_missing_value_tracks_true has a different length than the nodes");
  if (leaf_targets.size() != leaf_weights.size()) fail_invalid(n, "leaf_targetids and leaf_weights differ in length");
  const int64_t targets = n.attr_int("n_targets", 0);
  if (targets < 1 || targets > std::numeric_limits<uint16_t>::max())
    fail_unsupported(n, fmt::format("n_targets {}: onnxc's tree layout holds 1 to 65535", targets));

  // Interior nodes first (record i is node i), then one leaf record a reference to a leaf.
  std::vector<TreeNode> nodes(count);
  for (std::size_t i = 0; i < count; ++i) {
    if (modes[i] < 0 || modes[i] > 6) fail_invalid(n, fmt::format("node {} has mode {}", i, modes[i]), "use 0 to 6");
    if (feature_ids[i] < 0 || feature_ids[i] >= c)
      fail_invalid(n, fmt::format("node {} reads feature {} of {}", i, feature_ids[i], c));
    nodes[i].mode = static_cast<uint8_t>(modes[i]);
    nodes[i].feature = feature_ids[i];
    nodes[i].threshold = splits[i];
    nodes[i].missing_true = !missing.empty() && missing[i] != 0;
  }
  auto child = [&](std::size_t i, int64_t id, bool leaf) -> int64_t {
    if (!leaf) {
      if (id < 0 || id >= static_cast<int64_t>(count))
        fail_invalid(n, fmt::format("node {} branches to node {} of {}", i, id, count));
      return id;
    }
    if (id < 0 || id >= static_cast<int64_t>(leaf_weights.size()))
      fail_invalid(n, fmt::format("node {} branches to leaf {} of {}", i, id, leaf_weights.size()));
    const int64_t target = leaf_targets[static_cast<std::size_t>(id)];
    if (target < 0 || target >= targets)
      fail_invalid(n, fmt::format("leaf {} is for target {} of {}", id, target, targets));
    TreeNode leaf_node;
    leaf_node.weights.emplace_back(target, leaf_weights[static_cast<std::size_t>(id)]);
    nodes.push_back(leaf_node);
    return static_cast<int64_t>(nodes.size()) - 1;
  };
  for (std::size_t i = 0; i < count; ++i) {
    nodes[i].yes = child(i, yes[i], yes_leaf[i] != 0);
    nodes[i].no = child(i, no[i], no_leaf[i] != 0);
  }
  for (int64_t root : tree_roots)
    if (root < 0 || root >= static_cast<int64_t>(count)) fail_invalid(n, fmt::format("tree root {} of {} nodes", root, count));
  member_chains(n, nodes, count, tree_roots, tensor_floats("membership_values"));

  static const char* const aggregates[] = {"AVERAGE", "SUM", "MIN", "MAX"};
  static const char* const transforms[] = {"NONE", "SOFTMAX", "LOGISTIC", "SOFTMAX_ZERO", "PROBIT"};
  const int64_t aggregate = n.attr_int("aggregate_function", 1), transform = n.attr_int("post_transform", 0);
  if (aggregate < 0 || aggregate > 3) fail_invalid(n, fmt::format("aggregate_function {}", aggregate), "use 0 to 3");
  if (transform < 0 || transform > 4) fail_invalid(n, fmt::format("post_transform {}", transform), "use 0 to 4");
  Value* scores = aggregated(l, n, x, c, nodes, tree_roots, targets, aggregates[aggregate], {});
  if (in_type == DType::Float) {
    post_transform(l, n, transforms[transform], scores, n.outputs[0]);
  } else {
    Value* y = post_transform(l, n, transforms[transform], scores, nullptr);
    l.add("Cast", {y}, {n.outputs[0]}).set_attr_int("to", static_cast<int64_t>(in_type));
  }
  return l.take();
}

// ---- onnxc.TreeEnsemble: X, then the layout's five arrays ----

void infer_tree_step(Node& n) {
  check_arity(n, 6, 6, 1, 1);
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
          n.inputs[2]->numel(), n.attr_int("targets", 0));
  static const char* const kinds[] = {"rt::kTreeLeq", "rt::kTreeLt", "rt::kTreeEq"};
  const int64_t kind = n.attr_int("kind", -1);
  static const char* const aggregates[] = {"rt::kTreeSum", "rt::kTreeMin", "rt::kTreeMax"};
  const int64_t aggregate = n.attr_int("aggregate", 0);
  e.linef("rt::tree_ensemble<{}, {}, {}, {}>({}, {}, {}, {}, {}, {}, {}, p);",
          kind >= 0 && kind <= kKindEq ? kinds[kind] : "rt::kTreeMixed", n.attr_int("words", 2),
          n.attr_int("missing", 1) ? "true" : "false", aggregate >= 0 && aggregate <= 2 ? aggregates[aggregate] : "rt::kTreeSum",
          e.in(0), e.in(1),
          e.in(2), e.in(3), e.in(4), e.in(5), e.out(0));
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
const OpRegistrar tree_ensemble5(ml_op("TreeEnsemble", {5}, lower_tree_ensemble5));

}  // namespace
}  // namespace onnxc
