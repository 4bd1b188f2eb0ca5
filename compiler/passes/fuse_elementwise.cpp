// fuse-elementwise: see fuse_elementwise.h. Groups grow backwards from their last node (the
// graph is in execution order, so a node's readers are met before it). Only the last node's
// output leaves a group, so a group never reads, through a node outside it, what it computes.
#include "passes/fuse_elementwise.h"

#include <algorithm>
#include <map>
#include <optional>
#include <set>

#include "ops/fused_elementwise.h"
#include "ops/op.h"
#include "passes/passes.h"

namespace onnxc {
namespace {

struct Member {
  Node* node;
  ElementwiseForm form;
};

struct Group {
  std::vector<Member> members;  // the last node first, then in the order they joined
  std::set<const Node*> nodes;

  const Value& output() const { return *members.front().node->outputs[0]; }
  void add(Node& n, ElementwiseForm form) {
    members.push_back({&n, std::move(form)});
    nodes.insert(&n);
  }
};

// n's elementwise form when it can be a step of a fused loop: one tensor output, its operands
// present, its other inputs compile-time constants.
std::optional<ElementwiseForm> fusable_form(const Node& n) {
  if (n.outputs.size() != 1 || !n.has_output(0)) return std::nullopt;
  const Value& y = *n.outputs[0];
  if (y.is_bounded() || y.is_sequence || y.is_optional) return std::nullopt;
  const OpDef* op = find_op(n.domain, n.op_type);
  if (!op || !op->elementwise_form) return std::nullopt;
  std::optional<ElementwiseForm> form = op->elementwise_form(n);
  if (!form) return std::nullopt;
  for (std::size_t i = 0; i < n.inputs.size(); ++i) {
    const bool operand = i < form->operands;
    if (operand && (!n.has_input(i) || n.inputs[i]->is_sequence || n.inputs[i]->is_optional)) return std::nullopt;
    if (!operand && n.has_input(i) && !n.inputs[i]->constant) return std::nullopt;
  }
  return form;
}

// The values a group's members read from outside it, each once, in the order of first use
// (members in execution order).
std::vector<Value*> outside_operands(const std::vector<const Member*>& in_order, const std::set<const Node*>& nodes) {
  std::vector<Value*> operands;
  for (const Member* m : in_order)
    for (std::size_t i = 0; i < m->form.operands; ++i) {
      Value* v = m->node->inputs[i];
      if (nodes.count(v->producer)) continue;
      if (std::find(operands.begin(), operands.end(), v) == operands.end()) operands.push_back(v);
    }
  return operands;
}

class ElementwiseFuser {
 public:
  explicit ElementwiseFuser(Graph& g) : g_(g) {
    g_.relink();
    for (std::size_t i = 0; i < g_.nodes.size(); ++i) {
      const Node& n = *g_.nodes[i];
      position_[&n] = i;
      for (const Value* v : std::set<const Value*>(n.inputs.begin(), n.inputs.end()))
        if (v) readers_[v].push_back(&n);
      for (const Value* v : n.implicit_inputs(g_)) read_by_subgraphs_.insert(v);
    }
  }

  int run() {
    for (std::size_t i = g_.nodes.size(); i-- > 0;) {
      Node& n = *g_.nodes[i];
      std::optional<ElementwiseForm> form = fusable_form(n);
      if (!form) continue;
      operand_count_[&n] = form->operands;
      Group* reader = group_to_join(n);
      if (reader && still_indexable(*reader, n, *form)) {
        reader->add(n, std::move(*form));
        group_of_[&n] = group_of_.at(reader->members.front().node);
        continue;
      }
      group_of_[&n] = groups_.size();
      groups_.emplace_back();
      groups_.back().add(n, std::move(*form));
    }
    return replace_groups();
  }

 private:
  // The group every node reading n's output is in, when n may join it: then the output is
  // computed once per element and read by the steps that read it.
  Group* group_to_join(const Node& n) {
    const Value* y = n.outputs[0];
    auto readers = readers_.find(y);
    if (y->is_graph_output || read_by_subgraphs_.count(y) || readers == readers_.end()) return nullptr;
    std::optional<std::size_t> group;
    for (const Node* r : readers->second) {
      auto it = group_of_.find(r);
      if (it == group_of_.end() || (group && *group != it->second)) return nullptr;
      group = it->second;
      // Only operands are read per element (not Clip's constant bounds).
      const auto first_non_operand = r->inputs.begin() + static_cast<std::ptrdiff_t>(operand_count_.at(r));
      if (std::find(first_non_operand, r->inputs.end(), y) != r->inputs.end()) return nullptr;
    }
    // Only values with one element per output element: a smaller one would be recomputed for each.
    Group& joined = groups_[*group];
    return y->numel() == joined.output().numel() ? &joined : nullptr;
  }

  // Whether the group with n added still reads its inputs within kMaxFusedLoops loops.
  bool still_indexable(const Group& group, Node& n, const ElementwiseForm& form) const {
    std::vector<const Member*> members;
    for (const Member& m : group.members) members.push_back(&m);
    const Member joining{&n, form};
    members.push_back(&joining);
    std::set<const Node*> nodes = group.nodes;
    nodes.insert(&n);
    std::vector<Shape> shapes;
    for (const Value* v : outside_operands(members, nodes)) shapes.push_back(v->shape);
    return elementwise_loops(shapes, group.output().shape).extents.size() <= kMaxFusedLoops;
  }

  std::vector<const Member*> in_execution_order(const Group& group) const {
    std::vector<const Member*> members;
    for (const Member& m : group.members) members.push_back(&m);
    std::sort(members.begin(), members.end(),
              [&](const Member* a, const Member* b) { return position_.at(a->node) < position_.at(b->node); });
    return members;
  }

  // Moves to the front the input the output may overwrite (OpDef::inplace: input 0, when it has
  // the output's type and size and dies there): the input reached from the last node through
  // input 0 of each node, the one the unfused nodes would have computed in place along, so the
  // plan keeps the buffers it had (a residual stream stays in its buffer); else the first input
  // of the output's type and size.
  static void put_overwritable_first(const Group& group, std::vector<Value*>& inputs) {
    const Value& y = group.output();
    auto fits = [&](const Value* v) { return v->dtype == y.dtype && v->numel() == y.numel(); };
    const Value* spine = group.members.front().node->inputs[0];
    while (spine->producer && group.nodes.count(spine->producer)) spine = spine->producer->inputs[0];
    auto first = std::find(inputs.begin(), inputs.end(), spine);
    if (first == inputs.end() || !fits(spine)) first = std::find_if(inputs.begin(), inputs.end(), fits);
    if (first != inputs.end()) std::rotate(inputs.begin(), first, first + 1);
  }

  std::unique_ptr<Node> fused_node(const Group& group) const {
    const std::vector<const Member*> members = in_execution_order(group);
    std::vector<Value*> inputs = outside_operands(members, group.nodes);
    put_overwritable_first(group, inputs);

    std::vector<FusedStep> steps;
    std::map<const Value*, std::size_t> step_of;
    for (const Member* m : members) {
      FusedStep s{m->node->op_type, m->form.functor, m->node->outputs[0]->dtype, {}};
      for (std::size_t i = 0; i < m->form.operands; ++i) {
        const Value* v = m->node->inputs[i];
        auto step = step_of.find(v);
        s.args.push_back(step != step_of.end() ? step_arg(step->second)
                                               : std::find(inputs.begin(), inputs.end(), v) - inputs.begin());
      }
      step_of[m->node->outputs[0]] = steps.size();
      steps.push_back(std::move(s));
    }

    const Node& last = *members.back()->node;
    auto n = std::make_unique<Node>();
    n->name = last.name;
    n->domain = kFusedElementwiseDomain;
    n->op_type = kFusedElementwiseOp;
    n->opset = n->version = 1;
    n->index = last.index;
    n->inputs = std::move(inputs);
    n->outputs = last.outputs;
    set_fused_steps(*n, steps);
    return n;
  }

  // Puts each group of two or more nodes in its last node's place and drops the others.
  int replace_groups() {
    std::map<const Node*, std::unique_ptr<Node>> replacement;
    std::set<const Node*> dropped;
    for (const Group& group : groups_) {
      if (group.members.size() < 2) continue;
      replacement[group.members.front().node] = fused_node(group);
      for (std::size_t k = 1; k < group.members.size(); ++k) dropped.insert(group.members[k].node);
    }
    replace_nodes(g_, replacement, dropped);
    return static_cast<int>(dropped.size());
  }

  Graph& g_;
  std::map<const Node*, std::size_t> position_;
  std::map<const Value*, std::vector<const Node*>> readers_;  // the nodes reading each value
  std::map<const Node*, std::size_t> operand_count_;  // fusable nodes: ElementwiseForm::operands
  std::set<const Value*> read_by_subgraphs_;
  std::vector<Group> groups_;
  std::map<const Node*, std::size_t> group_of_;
};

}  // namespace

int fuse_elementwise(Graph& g) {
  int removed = 0;
  // Control-flow bodies first: a body's nodes never read the enclosing graph's intermediates
  // through anything but implicit inputs, which the enclosing graph's grouping keeps as tensors.
  for (auto& n : g.nodes)
    for (Graph* body : n->subgraphs()) removed += fuse_elementwise(*body);
  return removed + ElementwiseFuser(g).run();
}

}  // namespace onnxc
