// DFT: the discrete Fourier transform (or its inverse) along one axis of a real or complex
// signal whose last dim holds the components ([..., 1] real, [..., 2] complex). Version 17
// takes the axis as an attribute (default 1), version 20 as an optional input (default -2).
// STFT: the one-dimensional transforms of a batch of signals' frames, optionally windowed.
// Kernels: onnxc/spectral.h. Lengths, steps and axes shape the output, so they must be known
// at compile time.
#include "onnxc/spectral.h"
#include "ops/elementwise.h"
#include "ops/emitter.h"

namespace onnxc {
namespace {

// A scalar (or one-element) int32/int64 input that must be known at compile time.
int64_t const_int_input(const Node& n, std::size_t i, const char* what) {
  require_input_dtype(n, i, {DType::Int32, DType::Int64});
  const Tensor& t = require_const_input(n, i, what);
  if (t.numel() != 1) fail_invalid(n, fmt::format("{} must be a scalar; it has shape {}", what, shape_str(t.shape)));
  return t.int_at(0);
}

// The last dim of a signal: 1 for real values, 2 for complex (real, imaginary) pairs.
bool is_complex_signal(const Node& n, const Shape& s) {
  if (s.empty() || (s.back() != 1 && s.back() != 2))
    fail_invalid(n, fmt::format("the signal {} must end in a dim of 1 (real) or 2 (complex)", shape_str(s)));
  return s.back() == 2;
}

std::string bool_literal(bool b) { return b ? "true" : "false"; }

// ---- DFT ----

struct DftPlan {
  std::size_t axis;
  rt::DftParams params;
};

std::size_t dft_axis(const Node& n, int64_t rank) {
  int64_t axis = -2;
  if (n.version < 20) axis = n.attr_int("axis", 1);
  else if (n.has_input(2)) axis = const_int_input(n, 2, "axis");
  const int64_t a = normalize_axis(n, axis, rank);
  if (a == rank - 1)
    fail_invalid(n, fmt::format("axis {} is the real/imaginary dim; the axis must be one of the first {} dims", axis,
                                rank - 1));
  return static_cast<std::size_t>(a);
}

DftPlan plan_dft(const Node& n) {
  const Shape& s = n.inputs[0]->shape;
  const std::size_t axis = dft_axis(n, static_cast<int64_t>(s.size()));
  DftPlan plan{axis, {}};
  rt::DftParams& p = plan.params;
  p.outer = static_cast<rt::index_t>(shape_numel(Shape(s.begin(), s.begin() + static_cast<std::ptrdiff_t>(axis))));
  p.in_length = static_cast<rt::index_t>(s[axis]);
  p.inner = static_cast<rt::index_t>(shape_numel(Shape(s.begin() + static_cast<std::ptrdiff_t>(axis) + 1, s.end() - 1)));
  p.complex_input = is_complex_signal(n, s);
  p.dft_length = n.has_input(1) ? static_cast<rt::index_t>(const_int_input(n, 1, "dft_length")) : p.in_length;
  if (p.dft_length < 1) fail_invalid(n, fmt::format("dft_length {} must be at least 1", p.dft_length));
  p.inverse = n.attr_int("inverse", 0) != 0;
  const bool onesided = n.attr_int("onesided", 0) != 0;
  if (onesided && p.complex_input)
    fail_invalid(n, "onesided=1 needs a real input (last dim 1); this input is complex", "set onesided=0");
  if (onesided && p.inverse)
    fail_unsupported(n, "the inverse of a one-sided transform (onesided=1, inverse=1)",
                     "pass the full spectrum with onesided=0");
  p.bins = onesided ? p.dft_length / 2 + 1 : p.dft_length;
  return plan;
}

void infer_dft(Node& n) {
  check_arity(n, 1, n.version < 20 ? 2 : 3, 1, 1);
  require_input_dtype<FloatTypes>(n, 0);
  const Value& x = input(n, 0);
  if (x.shape.size() < 2)
    fail_invalid(n, fmt::format("the input {} must be [signal dims..., 1 or 2], of rank 2 or more", shape_str(x.shape)));
  const DftPlan plan = plan_dft(n);
  Shape out = x.shape;
  out[plan.axis] = plan.params.bins;
  out.back() = 2;
  set_output(n, 0, x.dtype, out);
}

void emit_dft(const Node& n, Emitter& e) {
  e.include("onnxc/spectral.h");
  const rt::DftParams p = plan_dft(n).params;
  e.linef("rt::dft({}, {}, {});",
          params_literal("rt::DftParams", {{"outer", std::to_string(p.outer)},
                                           {"in_length", std::to_string(p.in_length)},
                                           {"inner", std::to_string(p.inner)},
                                           {"complex_input", bool_literal(p.complex_input)},
                                           {"dft_length", std::to_string(p.dft_length)},
                                           {"bins", std::to_string(p.bins)},
                                           {"inverse", bool_literal(p.inverse)}}),
          e.in(0), e.out(0));
}

void fold_dft(const Node& n, std::vector<Tensor>& outs) {
  Tensor& y = fold_output(n, outs);
  const rt::DftParams p = plan_dft(n).params;
  dispatch_in(n, y.dtype, FloatTypes{}, [&](auto tag) {
    using T = typename decltype(tag)::type;
    rt::dft(p, n.inputs[0]->constant->data<T>(), y.data<T>());
  });
}

const OpRegistrar dft_op([] {
  OpDef d;
  d.op_type = "DFT";
  d.versions = {17, 20};
  d.infer = infer_dft;
  d.emit = emit_dft;
  d.fold = fold_dft;
  return d;
}());

// ---- STFT ----

constexpr std::size_t kSignal = 0, kFrameStep = 1, kWindow = 2, kFrameLength = 3;

rt::StftParams plan_stft(const Node& n) {
  const Shape& s = n.inputs[kSignal]->shape;
  if (s.size() != 3)
    fail_invalid(n, fmt::format("the signal {} must be [batch, length, 1 or 2]", shape_str(s)));
  rt::StftParams p{};
  p.batch = static_cast<rt::index_t>(s[0]);
  p.length = static_cast<rt::index_t>(s[1]);
  p.complex_input = is_complex_signal(n, s);
  p.frame_step = static_cast<rt::index_t>(const_int_input(n, kFrameStep, "frame_step"));
  if (p.frame_step < 1) fail_invalid(n, fmt::format("frame_step {} must be at least 1", p.frame_step));
  const bool has_window = n.has_input(kWindow), has_length = n.has_input(kFrameLength);
  if (!has_window && !has_length) fail_invalid(n, "neither a window nor frame_length says how long a frame is");
  if (has_window && n.inputs[kWindow]->shape.size() != 1)
    fail_invalid(n, fmt::format("the window {} must have rank 1", shape_str(n.inputs[kWindow]->shape)));
  p.frame_length = static_cast<rt::index_t>(has_length ? const_int_input(n, kFrameLength, "frame_length")
                                                       : n.inputs[kWindow]->shape[0]);
  if (has_window && has_length && n.inputs[kWindow]->shape[0] != p.frame_length)
    fail_invalid(n, fmt::format("the window has {} points but frame_length is {}", n.inputs[kWindow]->shape[0],
                                p.frame_length));
  if (p.frame_length < 1 || p.frame_length > p.length)
    fail_invalid(n, fmt::format("frame_length {} must be in [1, {}] (the signal length)", p.frame_length, p.length));
  p.frames = (p.length - p.frame_length) / p.frame_step + 1;
  const bool onesided = n.attr_int("onesided", 1) != 0;
  if (onesided && p.complex_input)
    fail_invalid(n, "onesided=1 (the default) needs a real signal (last dim 1); this signal is complex",
                 "set onesided=0");
  p.bins = onesided ? p.frame_length / 2 + 1 : p.frame_length;
  return p;
}

void infer_stft(Node& n) {
  check_arity(n, 2, 4, 1, 1);
  require_input_dtype<FloatTypes>(n, kSignal);
  if (n.has_input(kWindow)) require_same_dtype(n, kWindow, kSignal);
  const rt::StftParams p = plan_stft(n);
  set_output(n, 0, input(n, kSignal).dtype, {p.batch, p.frames, p.bins, 2});
}

void emit_stft(const Node& n, Emitter& e) {
  e.include("onnxc/spectral.h");
  const rt::StftParams p = plan_stft(n);
  e.linef("rt::stft({}, {}, {}, {});",
          params_literal("rt::StftParams", {{"batch", std::to_string(p.batch)},
                                            {"length", std::to_string(p.length)},
                                            {"complex_input", bool_literal(p.complex_input)},
                                            {"frame_step", std::to_string(p.frame_step)},
                                            {"frame_length", std::to_string(p.frame_length)},
                                            {"frames", std::to_string(p.frames)},
                                            {"bins", std::to_string(p.bins)}}),
          e.in(kSignal), e.in_or_null(kWindow, n.inputs[kSignal]->dtype), e.out(0));
}

void fold_stft(const Node& n, std::vector<Tensor>& outs) {
  Tensor& y = fold_output(n, outs);
  const rt::StftParams p = plan_stft(n);
  dispatch_in(n, y.dtype, FloatTypes{}, [&](auto tag) {
    using T = typename decltype(tag)::type;
    const T* window = n.has_input(kWindow) ? n.inputs[kWindow]->constant->data<T>() : nullptr;
    rt::stft(p, n.inputs[kSignal]->constant->data<T>(), window, y.data<T>());
  });
}

const OpRegistrar stft_op([] {
  OpDef d;
  d.op_type = "STFT";
  d.versions = {17};
  d.infer = infer_stft;
  d.emit = emit_stft;
  d.fold = fold_stft;
  return d;
}());

}  // namespace
}  // namespace onnxc
