// BitCast-26: the input's bytes read as another type of the same width (little endian, as the
// operator asks and every target of onnxc is). The output is a copy under the new type, or the
// same bytes when folded.
#include "onnxc/layout.h"
#include "ops/emitter.h"

namespace onnxc {
namespace {

DType bit_cast_target(const Node& n) {
  const Attribute* to = n.attr("to");
  DType t;
  if (!to || to->kind != Attribute::Kind::Int) fail_invalid(n, "the required integer attribute 'to' is missing");
  if (!dtype_from_int(static_cast<int32_t>(to->i), &t) || t == DType::Undefined)
    fail_invalid(n, fmt::format("attribute 'to' ({}) is not a TensorProto.DataType value", to->i));
  return t;
}

void require_bit_castable(const Node& n, DType t, const char* role) {
  if (t == DType::String) fail_invalid(n, fmt::format("BitCast {} string: strings have no fixed width", role));
  if (dtype_size(t) == 0)
    fail_unsupported(n, fmt::format("BitCast {} {} is not supported: generated code has no {} type", role,
                                    dtype_name(t), dtype_name(t)),
                     "bit-cast between types onnxc holds in memory (floats, integers, bool)");
}

void infer_bit_cast(Node& n) {
  check_arity(n, 1, 1, 1, 1);
  const Value& x = input(n, 0);
  const DType to = bit_cast_target(n);
  require_bit_castable(n, x.dtype, "from");
  require_bit_castable(n, to, "to");
  if (dtype_size(x.dtype) != dtype_size(to))
    fail_invalid(n, fmt::format("{} ({} bits) and {} ({} bits) differ in width", dtype_name(x.dtype),
                                8 * dtype_size(x.dtype), dtype_name(to), 8 * dtype_size(to)));
  // A bool holds 0 or 1 only: bytes of another type are not bools.
  if (to == DType::Bool && x.dtype != DType::Bool)
    fail_unsupported(n, fmt::format("BitCast from {} to bool is not supported: a byte other than 0 or 1 is no bool",
                                    dtype_name(x.dtype)),
                     "compare with zero instead (Cast to bool, or Not(Equal(x, 0)))");
  set_output(n, 0, to, x.shape);
}

const OpRegistrar bit_cast([] {
  OpDef d;
  d.op_type = "BitCast";
  d.versions = {26};
  d.infer = infer_bit_cast;
  d.inplace = true;
  d.emit = [](const Node& n, Emitter& e) {
    e.include("onnxc/layout.h");
    e.linef("rt::copy_bits({}, {}, {});", e.in(0), e.out(0), n.outputs[0]->numel());
  };
  d.fold = [](const Node& n, std::vector<Tensor>& outs) {
    Tensor t = *n.inputs[0]->constant;
    t.dtype = n.outputs[0]->dtype;
    outs.push_back(std::move(t));
  };
  return d;
}());

}  // namespace
}  // namespace onnxc
