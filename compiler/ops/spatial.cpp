#include "ops/spatial.h"

#include "ops/emitter.h"

namespace onnxc {

std::vector<int64_t> to_3d(const std::vector<int64_t>& v, int64_t fill) {
  std::vector<int64_t> r(3 - std::min<std::size_t>(3, v.size()), fill);
  r.insert(r.end(), v.begin(), v.end());
  return r;
}

std::vector<int64_t> weight_kernel(const Node& n, const Value& weight) {
  std::vector<int64_t> kernel(weight.shape.begin() + std::min<std::size_t>(2, weight.shape.size()), weight.shape.end());
  if (n.has_attr("kernel_shape") && n.attr_ints("kernel_shape") != kernel)
    fail_invalid(n, fmt::format("kernel_shape {} does not match the weight's spatial dims {}",
                                shape_str(n.attr_ints("kernel_shape")), shape_str(kernel)));
  return kernel;
}

rt::ConvParams conv_params(const Window& w, int64_t batch, int64_t in_channels, int64_t out_channels, int64_t group) {
  auto in = to_3d(w.in, 1), out = to_3d(w.out, 1), k = to_3d(w.kernel, 1), s = to_3d(w.strides, 1),
       d = to_3d(w.dilations, 1), p = to_3d(w.pad_begin, 0);
  return rt::ConvParams{batch, in_channels, out_channels, group, in[0], in[1], in[2], out[0], out[1], out[2], k[0],
                        k[1],  k[2],        s[0],         s[1],  s[2],  d[0],  d[1],  d[2],   p[0],   p[1],   p[2]};
}

std::string conv_params_code(const rt::ConvParams& p) {
  auto three = [](int64_t a, int64_t b, int64_t c) { return fmt::format("{}, {}, {}", a, b, c); };
  return fmt::format("constexpr rt::ConvParams p = {};",
                     params_literal("rt::ConvParams", {{"batch", fmt::format("{}", p.batch)},
                                                       {"in_channels", fmt::format("{}", p.in_channels)},
                                                       {"out_channels", fmt::format("{}", p.out_channels)},
                                                       {"group", fmt::format("{}", p.group)},
                                                       {"in_dhw", three(p.in_d, p.in_h, p.in_w)},
                                                       {"out_dhw", three(p.out_d, p.out_h, p.out_w)},
                                                       {"kernel_dhw", three(p.k_d, p.k_h, p.k_w)},
                                                       {"stride_dhw", three(p.stride_d, p.stride_h, p.stride_w)},
                                                       {"dilation_dhw", three(p.dilation_d, p.dilation_h, p.dilation_w)},
                                                       {"pad_dhw", three(p.pad_d, p.pad_h, p.pad_w)}}));
}

namespace {

bool same_padding(const std::string& auto_pad) { return auto_pad == "SAME_UPPER" || auto_pad == "SAME_LOWER"; }

int64_t window_extent(const Window& w, std::size_t i) { return (w.kernel[i] - 1) * w.dilations[i] + 1; }

// Validates the attributes every window shares (kernel, strides, dilations, explicit pads,
// auto_pad) and returns the auto_pad mode. Explicit pads are copied into w.
std::string read_window_attrs(const Node& n, Window& w) {
  std::size_t r = w.in.size();
  if (w.kernel.size() != r)
    fail_invalid(n, fmt::format("kernel has {} spatial dims but the input has {}", w.kernel.size(), r));
  for (int64_t k : w.kernel)
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
  if (auto_pad != "NOTSET" && auto_pad != "VALID" && !same_padding(auto_pad))
    fail_invalid(n, fmt::format("auto_pad '{}' is not one of NOTSET, SAME_UPPER, SAME_LOWER, VALID", auto_pad));
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
  }
  return auto_pad;
}

// Splits a total padding between begin and end as auto_pad says: SAME_UPPER puts the odd
// element at the end, anything else at the beginning. Floors, so a negative total (output
// larger than the windows cover) extends the end.
void split_padding(int64_t total, const std::string& auto_pad, int64_t& begin, int64_t& end) {
  int64_t half = total >= 0 ? total / 2 : -((-total + 1) / 2);
  begin = auto_pad == "SAME_UPPER" ? half : total - half;
  end = total - begin;
}

}  // namespace

Window resolve_window(const Node& n, const std::vector<int64_t>& in, const std::vector<int64_t>& kernel,
                      bool ceil_mode) {
  Window w;
  w.in = in;
  w.kernel = kernel;
  std::string auto_pad = read_window_attrs(n, w);
  for (std::size_t i = 0; i < in.size(); ++i) {
    int64_t ext = window_extent(w, i);
    if (same_padding(auto_pad)) {
      w.out[i] = (in[i] + w.strides[i] - 1) / w.strides[i];
      int64_t total = std::max<int64_t>(0, (w.out[i] - 1) * w.strides[i] + ext - in[i]);
      split_padding(total, auto_pad, w.pad_begin[i], w.pad_end[i]);
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

Window resolve_transposed_window(const Node& n, const std::vector<int64_t>& in, const std::vector<int64_t>& kernel) {
  Window w;
  w.in = in;
  w.kernel = kernel;
  std::string auto_pad = read_window_attrs(n, w);
  std::size_t r = in.size();
  std::vector<int64_t> output_padding = n.attr_ints("output_padding", std::vector<int64_t>(r, 0));
  if (output_padding.size() != r)
    fail_invalid(n, fmt::format("'output_padding' has {} values; expected {}", output_padding.size(), r));
  for (int64_t p : output_padding)
    if (p < 0) fail_invalid(n, "'output_padding' must not be negative");
  // output_shape may list the spatial dims only or (as some exporters write it) N and C too.
  std::vector<int64_t> output_shape = n.attr_ints("output_shape");
  if (output_shape.size() == r + 2) output_shape.erase(output_shape.begin(), output_shape.begin() + 2);
  if (!output_shape.empty() && output_shape.size() != r)
    fail_invalid(n, fmt::format("'output_shape' has {} values; expected {}", output_shape.size(), r));
  for (std::size_t i = 0; i < r; ++i) {
    int64_t full = w.strides[i] * (in[i] - 1) + output_padding[i] + window_extent(w, i);
    if (!output_shape.empty() || same_padding(auto_pad)) {
      w.out[i] = !output_shape.empty() ? output_shape[i] : in[i] * w.strides[i];
      split_padding(full - w.out[i], auto_pad, w.pad_begin[i], w.pad_end[i]);
    } else {
      w.out[i] = full - w.pad_begin[i] - w.pad_end[i];
    }
    if (w.out[i] < 1)
      fail_invalid(n, fmt::format("output dim {} on axis {} is not positive (pads {} and {} remove more than the {} "
                                  "elements the windows cover)",
                                  w.out[i], i + 2, w.pad_begin[i], w.pad_end[i], full));
  }
  return w;
}

}  // namespace onnxc
