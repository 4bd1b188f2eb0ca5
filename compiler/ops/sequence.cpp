// The sequence operators, for sequences whose structure is known at compile time: a sequence
// value is a fixed list of tensor values (Value::elements), so positions and split sizes must
// be compile-time constants. Each operator is lowered before inference (OpDef::lower):
//
//   SequenceEmpty, SequenceConstruct, SequenceInsert, SequenceErase  only rearrange the list
//   SequenceAt          -> Identity of the element
//   SequenceLength      -> a constant
//   ConcatFromSequence  -> Concat of the elements (each Unsqueezed first with new_axis=1)
//   SplitToSequence     -> one Slice per element (a Gather, which drops the axis, for keepdims=0)
//   SequenceMap         -> its body, copied once per element
#include "ops/sequence.h"

#include "ops/elementwise.h"
#include "ops/inline_graph.h"

namespace onnxc {

void collect_tensors(Value& v, std::vector<Value*>& out) {
  if (!v.is_sequence && !v.is_optional) {
    out.push_back(&v);
    return;
  }
  for (Value* e : v.elements) collect_tensors(*e, out);
}

Value* as_declared(Lowering& l, Value* v, const Value& declared) {
  if (declared.is_optional && !v->is_optional) return l.wrap_in_optional(v);
  if (!declared.is_optional && (declared.is_sequence || declared.declared_rank) && v->is_optional) {
    if (v->elements.empty())
      fail_invalid(l.node(), fmt::format("'{}' is an empty optional (known at compile time) where '{}' needs a value",
                                         v->name, declared.name));
    return v->elements[0];
  }
  return v;
}

namespace {

using Nodes = std::vector<std::unique_ptr<Node>>;

// ---- reading sequences and positions ----

const Value& sequence_input(const Node& n, std::size_t i) {
  const Value& s = input(n, i);
  if (!s.is_sequence) fail_invalid(n, fmt::format("input {} ('{}') must be a sequence; it is a tensor", i, s.name));
  return s;
}

// The sequence's element type: its elements' (inferred) type, or the declared one when empty.
DType element_type(const Value& s) { return s.elements.empty() ? s.dtype : s.elements[0]->dtype; }

Value& make_sequence(Node& n, DType dtype, std::vector<Value*> elements) {
  Value& s = *n.outputs[0];
  s.is_sequence = true;
  s.dtype = dtype;
  s.elements = std::move(elements);
  return s;
}

void require_tensor_input(const Node& n, std::size_t i) {
  if (input(n, i).is_sequence) fail_invalid(n, fmt::format("input {} must be a tensor; it is a sequence", i));
}

// A position in a sequence of `size` elements, from input i (a compile-time scalar), or `dflt`
// when the input is omitted. Negative positions count from the back; `past_end` also allows
// `size` (insert at the back).
std::size_t position(const Node& n, std::size_t i, std::size_t size, std::size_t dflt, bool past_end) {
  if (!n.has_input(i)) return dflt;
  require_input_dtype(n, i, {DType::Int32, DType::Int64});
  const Tensor& t = require_const_input(n, i, "position in the sequence");
  if (t.numel() != 1) fail_invalid(n, fmt::format("the position must be a scalar; it has shape {}", shape_str(t.shape)));
  const int64_t p = t.int_at(0), count = static_cast<int64_t>(size);
  const int64_t last = past_end ? count : count - 1;
  if (p < -count || p > last)
    fail_invalid(n, fmt::format("position {} is outside [{}, {}] for a sequence of {} tensors", p, -count, last, count));
  return static_cast<std::size_t>(p < 0 ? p + count : p);
}

// ---- operators that only rearrange the list ----

Nodes lower_sequence_empty(Node& n, Graph&) {
  check_arity(n, 0, 0, 1, 1);
  const int64_t code = n.attr_int("dtype", static_cast<int64_t>(DType::Float));
  DType t = DType::Undefined;
  if (code < 0 || code > INT32_MAX || !dtype_from_int(static_cast<int32_t>(code), &t) || !dtype_supported(t))
    fail_unsupported(n, fmt::format("dtype {} is not an element type onnxc supports", code));
  make_sequence(n, t, {});
  return {};
}

Nodes lower_sequence_construct(Node& n, Graph&) {
  check_arity(n, 1, -1, 1, 1);
  for (std::size_t i = 0; i < n.inputs.size(); ++i) {
    require_tensor_input(n, i);
    require_same_dtype(n, i, 0);
  }
  make_sequence(n, input(n, 0).dtype, n.inputs);
  return {};
}

Nodes lower_sequence_insert(Node& n, Graph&) {
  check_arity(n, 2, 3, 1, 1);
  const Value& s = sequence_input(n, 0);
  require_tensor_input(n, 1);
  if (!s.elements.empty() && input(n, 1).dtype != element_type(s))
    fail_invalid(n, fmt::format("the tensor is {}; the sequence holds {}", dtype_name(input(n, 1).dtype),
                                dtype_name(element_type(s))));
  std::vector<Value*> elements = s.elements;
  const std::size_t at = position(n, 2, elements.size(), elements.size(), true);
  elements.insert(elements.begin() + static_cast<std::ptrdiff_t>(at), n.inputs[1]);
  make_sequence(n, input(n, 1).dtype, std::move(elements));
  return {};
}

Nodes lower_sequence_erase(Node& n, Graph&) {
  check_arity(n, 1, 2, 1, 1);
  const Value& s = sequence_input(n, 0);
  if (s.elements.empty()) fail_invalid(n, "the sequence is empty; there is nothing to erase");
  std::vector<Value*> elements = s.elements;
  const std::size_t at = position(n, 1, elements.size(), elements.size() - 1, false);
  elements.erase(elements.begin() + static_cast<std::ptrdiff_t>(at));
  make_sequence(n, element_type(s), std::move(elements));
  return {};
}

// ---- operators that read elements ----

Nodes lower_sequence_at(Node& n, Graph& g) {
  check_arity(n, 2, 2, 1, 1);
  const Value& s = sequence_input(n, 0);
  if (s.elements.empty()) fail_invalid(n, "the sequence is empty; there is no element to take");
  Lowering l(n, g);
  l.add("Identity", {s.elements[position(n, 1, s.elements.size(), 0, false)]}, {n.outputs[0]});
  return l.take();
}

Nodes lower_sequence_length(Node& n, Graph&) {
  check_arity(n, 1, 1, 1, 1);
  const Value& s = sequence_input(n, 0);
  Tensor length(DType::Int64, {});
  length.data<int64_t>()[0] = static_cast<int64_t>(s.elements.size());
  set_constant_output(*n.outputs[0], std::move(length));
  return {};
}

Nodes lower_concat_from_sequence(Node& n, Graph& g) {
  check_arity(n, 1, 1, 1, 1);
  const Value& s = sequence_input(n, 0);
  if (!n.has_attr("axis")) fail_invalid(n, "required attribute 'axis' is missing");
  if (s.elements.empty()) fail_unsupported(n, "concatenating an empty sequence (the output type is unknown)");
  const bool new_axis = n.attr_int("new_axis", 0) != 0;
  const int64_t rank = static_cast<int64_t>(s.elements[0]->shape.size()) + (new_axis ? 1 : 0);
  const int64_t axis = normalize_axis(n, n.attr_int("axis", 0), rank);
  Lowering l(n, g);
  std::vector<Value*> parts = s.elements;
  if (new_axis)
    for (Value*& p : parts) p = l.unsqueeze(p, axis);
  l.add("Concat", parts, {n.outputs[0]}).set_attr_int("axis", axis);
  return l.take();
}

// The element sizes SplitToSequence cuts `extent` into: split's values (a 1-D split), chunks of
// split's value with a shorter last one (a scalar split), or ones (no split).
std::vector<int64_t> split_sizes(const Node& n, int64_t extent) {
  if (!n.has_input(1)) return std::vector<int64_t>(static_cast<std::size_t>(extent), 1);
  require_input_dtype(n, 1, {DType::Int32, DType::Int64});
  const Tensor& split = require_const_input(n, 1, "split sizes");
  if (split.shape.size() > 1) fail_invalid(n, fmt::format("split must be a scalar or 1-D; it is {}", shape_str(split.shape)));
  std::vector<int64_t> sizes;
  if (split.shape.empty()) {
    const int64_t chunk = split.int_at(0);
    if (chunk < 1) fail_invalid(n, fmt::format("the split size {} must be at least 1", chunk));
    for (int64_t at = 0; at < extent; at += chunk) sizes.push_back(std::min(chunk, extent - at));
    return sizes;
  }
  sizes = split.to_ints();
  int64_t total = 0;
  for (int64_t v : sizes) {
    if (v < 0) fail_invalid(n, fmt::format("split sizes [{}] must not be negative", fmt::join(sizes, ", ")));
    total += v;
  }
  if (total != extent)
    fail_invalid(n, fmt::format("split sizes [{}] add up to {}, not the axis extent {}", fmt::join(sizes, ", "), total,
                                extent));
  return sizes;
}

Nodes lower_split_to_sequence(Node& n, Graph& g) {
  check_arity(n, 1, 2, 1, 1);
  require_tensor_input(n, 0);
  Value* x = n.inputs[0];
  const int64_t axis = normalize_axis(n, n.attr_int("axis", 0), static_cast<int64_t>(x->shape.size()));
  const std::vector<int64_t> sizes = split_sizes(n, x->shape[static_cast<std::size_t>(axis)]);
  const bool drop_axis = !n.has_input(1) && n.attr_int("keepdims", 1) == 0;
  Lowering l(n, g);
  std::vector<Value*> elements;
  int64_t start = 0;
  for (int64_t size : sizes) {
    Value* e = l.value(fmt::format("{}_{}", n.outputs[0]->name, elements.size()));
    if (drop_axis) {
      l.add("Gather", {x, l.int64_constant("index", {}, {start})}, {e}).set_attr_int("axis", axis);
    } else {
      l.add("Slice", {x, l.int64_constant("starts", {1}, {start}), l.int64_constant("ends", {1}, {start + size}),
                      l.int64_constant("axes", {1}, {axis})},
            {e});
    }
    elements.push_back(e);
    start += size;
  }
  make_sequence(n, x->dtype, std::move(elements));
  return l.take();
}

// ---- SequenceMap: the body, unrolled once per element ----

Nodes lower_sequence_map(Node& n, Graph& g) {
  check_arity(n, 1, -1, 1, -1);
  const Value& first = sequence_input(n, 0);
  const Attribute* body_attr = n.attr("body");
  if (!body_attr || !body_attr->g) fail_invalid(n, "required graph attribute 'body' is missing");
  const Graph& body = *body_attr->g;
  if (body.inputs.size() != n.inputs.size() || body.outputs.size() != n.outputs.size())
    fail_invalid(n, fmt::format("the body has {} inputs and {} outputs; the node has {} and {}", body.inputs.size(),
                                body.outputs.size(), n.inputs.size(), n.outputs.size()));
  const std::size_t length = first.elements.size();
  for (std::size_t i = 0; i < n.inputs.size(); ++i)
    if (input(n, i).is_sequence && input(n, i).elements.size() != length)
      fail_invalid(n, fmt::format("input {} has {} elements; input 0 has {}", i, input(n, i).elements.size(), length));
  Lowering l(n, g);
  std::vector<std::vector<Value*>> results(n.outputs.size());
  for (std::size_t k = 0; k < length; ++k) {
    std::vector<Value*> args;
    for (Value* in : n.inputs) args.push_back(in->is_sequence ? in->elements[k] : in);
    std::vector<Value*> outs = inline_graph(l, body, args, fmt::format("_{}", k));
    for (std::size_t j = 0; j < outs.size(); ++j) results[j].push_back(outs[j]);
  }
  for (std::size_t j = 0; j < n.outputs.size(); ++j) {
    Value& y = *n.outputs[j];
    y.is_sequence = true;
    y.dtype = body.outputs[j]->dtype;  // as declared, if at all; element_type() reads the inferred elements
    y.elements = results[j];
  }
  return l.take();
}

}  // namespace

std::vector<std::unique_ptr<Node>> lower_structure_identity(Node& n, Graph&) {
  check_arity(n, 1, 1, 1, 1);
  const Value& in = input(n, 0);
  Value& out = *n.outputs[0];
  out.is_sequence = in.is_sequence;
  out.is_optional = in.is_optional;
  out.dtype = in.dtype;
  out.elements = in.elements;
  return {};
}


namespace {

const OpRegistrar sequence_empty_op(structure_op("SequenceEmpty", {11}, lower_sequence_empty));
const OpRegistrar sequence_construct_op(structure_op("SequenceConstruct", {11}, lower_sequence_construct));
const OpRegistrar sequence_insert_op(structure_op("SequenceInsert", {11}, lower_sequence_insert));
const OpRegistrar sequence_erase_op(structure_op("SequenceErase", {11}, lower_sequence_erase));
const OpRegistrar sequence_at_op(structure_op("SequenceAt", {11}, lower_sequence_at));
const OpRegistrar sequence_length_op(structure_op("SequenceLength", {11}, lower_sequence_length));
const OpRegistrar concat_from_sequence_op(structure_op("ConcatFromSequence", {11}, lower_concat_from_sequence));
const OpRegistrar sequence_map_op(structure_op("SequenceMap", {17}, lower_sequence_map));
const OpRegistrar split_to_sequence_op(structure_op("SplitToSequence", {11, 24}, lower_split_to_sequence));

}  // namespace

OpDef structure_op(const char* name, std::vector<int> versions, std::function<Nodes(Node&, Graph&)> lower) {
  OpDef d;
  d.op_type = name;
  d.versions = std::move(versions);
  d.lower = std::move(lower);
  return d;
}

}  // namespace onnxc
