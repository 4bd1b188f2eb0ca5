// CenterCropPad (ai.onnx since 18): each listed axis of the input cropped or zero-padded to the
// length `shape` gives it, centred (a crop starts at (length - target) / 2 rounded down, a pad
// puts (target - length) / 2 rounded down before). Lowered into one Slice for the crops and one
// Pad for the pads; the target shape must be a constant.
#include "ops/lowering.h"
#include "ops/op.h"

namespace onnxc {
namespace {

std::vector<std::unique_ptr<Node>> lower_center_crop_pad(Node& n, Graph& g) {
  Lowering l(n, g);
  if (n.inputs.size() != 2 || !n.has_input(0) || !n.has_input(1)) fail_invalid(n, "needs input_data and shape");
  const Value& x = *n.inputs[0];
  const Value& target = *n.inputs[1];
  if (!target.constant)
    fail_unsupported(n, "input 'shape' is computed at run time", "make it a constant (or pin it with --constant)");
  const int64_t rank = static_cast<int64_t>(x.shape.size());
  std::vector<int64_t> axes = n.attr_ints("axes", {});
  if (axes.empty())
    for (int64_t a = 0; a < rank; ++a) axes.push_back(a);
  if (target.constant->numel() != static_cast<int64_t>(axes.size()))
    fail_invalid(n, fmt::format("'shape' has {} values for {} axes", target.constant->numel(), axes.size()));
  std::vector<int64_t> starts, ends, slice_axes, pads(static_cast<std::size_t>(2 * rank), 0);
  bool padded = false;
  for (std::size_t i = 0; i < axes.size(); ++i) {
    int64_t a = axes[i] < 0 ? axes[i] + rank : axes[i];
    if (a < 0 || a >= rank) fail_invalid(n, fmt::format("axis {} is out of range for rank {}", axes[i], rank));
    const int64_t have = x.shape[static_cast<std::size_t>(a)], want = target.constant->int_at(static_cast<int64_t>(i));
    if (want < 0) fail_invalid(n, fmt::format("target length {} is negative", want));
    if (want < have) {
      const int64_t start = (have - want) / 2;
      starts.push_back(start);
      ends.push_back(start + want);
      slice_axes.push_back(a);
    } else if (want > have) {
      pads[static_cast<std::size_t>(a)] = (want - have) / 2;
      pads[static_cast<std::size_t>(a + rank)] = want - have - (want - have) / 2;
      padded = true;
    }
  }
  Value* y = n.inputs[0];
  if (!slice_axes.empty()) {
    Value* cropped = padded ? l.value("cropped") : n.outputs[0];
    const Shape k{static_cast<int64_t>(slice_axes.size())};
    l.add("Slice", {y, l.int64_constant("starts", k, starts), l.int64_constant("ends", k, ends),
                    l.int64_constant("axes", k, slice_axes)},
          {cropped});
    y = cropped;
  }
  if (padded) {
    l.add("Pad", {y, l.int64_constant("pads", {2 * rank}, pads)}, {n.outputs[0]});
  } else if (slice_axes.empty()) {
    l.add("Identity", {y}, {n.outputs[0]});
  }
  return l.take();
}

const OpRegistrar center_crop_pad_op(lowered_op("", "CenterCropPad", {18}, lower_center_crop_pad));

}  // namespace
}  // namespace onnxc
