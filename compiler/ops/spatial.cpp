#include "ops/spatial.h"

namespace onnxc {

std::vector<int64_t> to_3d(const std::vector<int64_t>& v, int64_t fill) {
  std::vector<int64_t> r(3 - std::min<std::size_t>(3, v.size()), fill);
  r.insert(r.end(), v.begin(), v.end());
  return r;
}

Window resolve_window(const Node& n, const std::vector<int64_t>& in, const std::vector<int64_t>& kernel,
                      bool ceil_mode) {
  std::size_t r = in.size();
  Window w;
  w.in = in;
  w.kernel = kernel;
  if (kernel.size() != r)
    fail_invalid(n, fmt::format("kernel has {} spatial dims but the input has {}", kernel.size(), r));
  for (int64_t k : kernel)
    if (k < 1) fail_invalid(n, fmt::format("kernel size {} must be positive", k));
  w.strides = n.attr_ints("strides", std::vector<int64_t>(r, 1));
  w.dilations = n.attr_ints("dilations", std::vector<int64_t>(r, 1));
  if (w.strides.size() != r) fail_invalid(n, fmt::format("'strides' has {} values; expected {}", w.strides.size(), r));
  if (w.dilations.size() != r)
    fail_invalid(n, fmt::format("'dilations' has {} values; expected {}", w.dilations.size(), r));
  for (int64_t s : w.strides)
    if (s < 1) fail_invalid(n, fmt::format("stride {} must be positive", s));
  for (int64_t d : w.dilations)
    if (d < 1) fail_invalid(n, fmt::format("dilation {} must be positive", d));
  std::string auto_pad = n.attr_string("auto_pad", "NOTSET");
  w.pad_begin.assign(r, 0);
  w.pad_end.assign(r, 0);
  w.out.assign(r, 0);
  if (auto_pad == "NOTSET") {
    std::vector<int64_t> pads = n.attr_ints("pads", std::vector<int64_t>(2 * r, 0));
    if (pads.size() != 2 * r)
      fail_invalid(n, fmt::format("'pads' has {} values; expected {} (begin and end for each spatial axis)",
                                  pads.size(), 2 * r));
    for (std::size_t i = 0; i < r; ++i) {
      w.pad_begin[i] = pads[i];
      w.pad_end[i] = pads[i + r];
      if (pads[i] < 0 || pads[i + r] < 0) fail_invalid(n, "'pads' must not be negative");
    }
  } else if (auto_pad != "VALID" && auto_pad != "SAME_UPPER" && auto_pad != "SAME_LOWER") {
    fail_invalid(n, fmt::format("auto_pad '{}' is not one of NOTSET, SAME_UPPER, SAME_LOWER, VALID", auto_pad));
  }
  for (std::size_t i = 0; i < r; ++i) {
    int64_t ext = (w.kernel[i] - 1) * w.dilations[i] + 1;
    if (auto_pad == "SAME_UPPER" || auto_pad == "SAME_LOWER") {
      int64_t out = (in[i] + w.strides[i] - 1) / w.strides[i];
      int64_t total = std::max<int64_t>(0, (out - 1) * w.strides[i] + ext - in[i]);
      int64_t small = total / 2, big = total - small;
      w.pad_begin[i] = auto_pad == "SAME_UPPER" ? small : big;
      w.pad_end[i] = auto_pad == "SAME_UPPER" ? big : small;
      w.out[i] = out;
      continue;
    }
    int64_t span = in[i] + w.pad_begin[i] + w.pad_end[i] - ext;
    if (span < 0)
      fail_invalid(n, fmt::format("the kernel ({} with dilation {}) is larger than the padded input ({}) on axis {}",
                                  w.kernel[i], w.dilations[i], in[i] + w.pad_begin[i] + w.pad_end[i], i + 2));
    w.out[i] = (ceil_mode ? (span + w.strides[i] - 1) / w.strides[i] : span / w.strides[i]) + 1;
    // With ceil_mode, the last window must start inside the input or the left padding.
    if (ceil_mode && (w.out[i] - 1) * w.strides[i] >= in[i] + w.pad_begin[i]) --w.out[i];
  }
  return w;
}

}  // namespace onnxc
