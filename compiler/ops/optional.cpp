// The optional operators, for optionals whose presence is known at compile time (an optional
// value holds its content in Value::elements, or nothing). Like the sequence operators they are
// lowered before inference (OpDef::lower):
//
//   Optional            wraps its input (or nothing)
//   OptionalHasElement  -> a constant
//   OptionalGetElement  -> Identity of the content (a sequence content is passed on as is)
//
// From version 18 the last two also take a tensor or sequence (always present) and
// OptionalHasElement an omitted input (absent).
#include "ops/op.h"
#include "ops/sequence.h"

namespace onnxc {
namespace {

using Nodes = std::vector<std::unique_ptr<Node>>;

Nodes lower_optional(Node& n, Graph&) {
  check_arity(n, 0, 1, 1, 1);
  Value& out = *n.outputs[0];
  out.is_optional = true;
  if (n.has_input(0)) {
    out.dtype = n.inputs[0]->dtype;
    out.elements = {n.inputs[0]};
  } else if (!n.has_attr("type")) {
    fail_invalid(n, "an Optional without input needs the attribute 'type'");
  }
  return {};
}

// Checks that version 15 gets an optional input (18 also accepts tensors and sequences).
void require_optional_before_18(const Node& n) {
  if (n.version < 18 && !input(n, 0).is_optional)
    fail_invalid(n, fmt::format("{}-{} takes an optional; input '{}' is not one", n.op_type, n.version,
                                input(n, 0).name),
                 "use version 18 to pass a tensor or sequence");
}

Nodes lower_optional_has_element(Node& n, Graph&) {
  check_arity(n, n.version < 18 ? 1 : 0, 1, 1, 1);
  bool present = false;
  if (n.has_input(0)) {
    require_optional_before_18(n);
    present = !input(n, 0).is_optional || !input(n, 0).elements.empty();
  }
  Tensor result(DType::Bool, {});
  result.data<uint8_t>()[0] = present ? 1 : 0;
  set_constant_output(*n.outputs[0], std::move(result));
  return {};
}

Nodes lower_optional_get_element(Node& n, Graph&) {
  check_arity(n, 1, 1, 1, 1);
  require_optional_before_18(n);
  const Value& in = input(n, 0);
  if (in.is_optional && in.elements.empty())
    fail_invalid(n, fmt::format("the optional '{}' is empty (known at compile time); there is no element to get",
                                in.name));
  Value* content = in.is_optional ? in.elements[0] : n.inputs[0];
  Value& out = *n.outputs[0];
  if (content->is_sequence) {
    out.is_sequence = true;
    out.dtype = content->dtype;
    out.elements = content->elements;
    return {};
  }
  Nodes nodes;
  nodes.push_back(make_onnx_node("Identity", n.name + "/Identity", n.opset, n.index, {content}, {&out}));
  return nodes;
}

const OpRegistrar optional_registrar(structure_op("Optional", {15}, lower_optional));
const OpRegistrar optional_has_element_op(structure_op("OptionalHasElement", {15, 18}, lower_optional_has_element));
const OpRegistrar optional_get_element_op(structure_op("OptionalGetElement", {15, 18}, lower_optional_get_element));

}  // namespace
}  // namespace onnxc
