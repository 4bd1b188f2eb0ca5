// MaxUnpool: scatters pooled values back to the positions MaxPool's indices name; everything
// else is zero. With output_shape the indices are flat positions in that shape's planes, as
// MaxPool of an input of that shape produces them (ONNX Runtime and PyTorch read them so; ONNX's
// reference scatters into the default shape and pads, see tests/conformance/expected_failures.txt).
#include "onnxc/pool.h"
#include "ops/emitter.h"
#include "ops/spatial.h"

namespace onnxc {
namespace {

void infer_max_unpool(Node& n) {
  check_arity(n, 2, 3, 1, 1);
  const Value& x = input(n, 0);
  const Value& indices = input(n, 1);
  require_float(n, 0);
  require_dtype(n, 1, {DType::Int64});
  if (x.shape.size() < 3) fail_invalid(n, fmt::format("input rank {} is below 3", x.shape.size()));
  if (indices.shape != x.shape)
    fail_invalid(n, fmt::format("indices shape {} differs from X's {}", shape_str(indices.shape), shape_str(x.shape)));
  if (!n.has_attr("kernel_shape")) fail_invalid(n, "required attribute 'kernel_shape' is missing");
  std::vector<int64_t> in(x.shape.begin() + 2, x.shape.end());
  // The default output undoes the pooling geometry; output_shape (input 2) overrides it.
  Window w = resolve_transposed_window(n, in, n.attr_ints("kernel_shape"));
  Shape out = {x.shape[0], x.shape[1]};
  out.insert(out.end(), w.out.begin(), w.out.end());
  if (n.has_input(2)) {
    Shape given = require_const_input(n, 2, "output shape").to_ints();
    if (given.size() != x.shape.size() || given[0] != x.shape[0] || given[1] != x.shape[1])
      fail_invalid(n, fmt::format("output_shape {} must have X's rank and batch and channel dims ({})", shape_str(given),
                                  shape_str(x.shape)));
    out = given;
  }
  set_output(n, 0, x.dtype, out);
}

void emit_max_unpool(const Node& n, Emitter& e) {
  e.include("onnxc/pool.h");
  e.linef("rt::max_unpool({}, {}, {}, {}, {});", n.inputs[0]->numel(), e.in(0), e.in(1), n.outputs[0]->numel(), e.out(0));
}

const OpRegistrar max_unpool_op([] {
  OpDef d;
  d.op_type = "MaxUnpool";
  d.versions = {9, 11, 22};
  d.infer = infer_max_unpool;
  d.emit = emit_max_unpool;
  return d;
}());

}  // namespace
}  // namespace onnxc
