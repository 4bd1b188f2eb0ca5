// HannWindow, HammingWindow, BlackmanWindow: generalized cosine windows of a given size.
// MelWeightMatrix: the triangular mel filter bank that maps a one-sided spectrogram's bins to
// mel bands. Kernels: onnxc/spectral.h. Sizes shape the outputs, so they must be known at
// compile time; with constant inputs (the usual case) the outputs fold to constants.
#include <algorithm>
#include <cstdint>

#include "onnxc/spectral.h"
#include "ops/elementwise.h"
#include "ops/emitter.h"

namespace onnxc {
namespace {

// A scalar int32/int64 input that must be known at compile time and be >= min.
int64_t const_count_input(const Node& n, std::size_t i, const char* what, int64_t min) {
  require_input_dtype(n, i, {DType::Int32, DType::Int64});
  const Tensor& t = require_const_input(n, i, what);
  if (t.numel() != 1) fail_invalid(n, fmt::format("{} must be a scalar; it has shape {}", what, shape_str(t.shape)));
  const int64_t v = t.int_at(0);
  if (v < min) fail_invalid(n, fmt::format("{} is {}; it must be at least {}", what, v, min));
  return v;
}

// The element type the 'output_datatype' attribute asks for (default float).
DType output_datatype(const Node& n) {
  const int64_t code = n.attr_int("output_datatype", static_cast<int64_t>(DType::Float));
  DType t = DType::Undefined;
  if (code < 0 || code > INT32_MAX || !dtype_from_int(static_cast<int32_t>(code), &t))
    fail_invalid(n, fmt::format("output_datatype {} is not an ONNX element type", code));
  const std::vector<DType> allowed = dtypes_of(NumericTypes{});
  if (std::find(allowed.begin(), allowed.end(), t) == allowed.end())
    fail_dtype(n, "output_datatype", t, allowed);
  return t;
}

// ---- the cosine windows ----

struct CosineCoefficients {
  double a0, a1, a2;
};

struct WindowPlan {
  int64_t size;
  bool periodic;
};

WindowPlan plan_window(const Node& n) {
  return {const_count_input(n, 0, "window size", 0), n.attr_int("periodic", 1) != 0};
}

void infer_window(Node& n) {
  check_arity(n, 1, 1, 1, 1);
  set_output(n, 0, output_datatype(n), {plan_window(n).size});
}

OpDef cosine_window_op(const char* name, CosineCoefficients c) {
  OpDef d;
  d.op_type = name;
  d.versions = {17};
  d.infer = infer_window;
  d.emit = [c](const Node& n, Emitter& e) {
    e.include("onnxc/spectral.h");
    const WindowPlan w = plan_window(n);
    e.linef("rt::cosine_window({}, {}, {}, {}, {}, {});", e.out(0), w.size, w.periodic ? "true" : "false",
            double_literal(c.a0), double_literal(c.a1), double_literal(c.a2));
  };
  d.fold = [c](const Node& n, std::vector<Tensor>& outs) {
    Tensor& y = fold_output(n, outs);
    const WindowPlan w = plan_window(n);
    dispatch_in(n, y.dtype, NumericTypes{}, [&](auto tag) {
      using T = typename decltype(tag)::type;
      rt::cosine_window(y.data<T>(), w.size, w.periodic, c.a0, c.a1, c.a2);
    });
  };
  return d;
}

const OpRegistrar hann_window_op(cosine_window_op("HannWindow", {0.5, 0.5, 0.0}));
const OpRegistrar hamming_window_op(cosine_window_op("HammingWindow", {25.0 / 46.0, 21.0 / 46.0, 0.0}));
const OpRegistrar blackman_window_op(cosine_window_op("BlackmanWindow", {0.42, 0.5, 0.08}));

// ---- MelWeightMatrix ----

constexpr std::size_t kMelBins = 0, kDftLength = 1, kSampleRate = 2, kLowerHertz = 3, kUpperHertz = 4;

struct MelPlan {
  int64_t mel_bins, dft_length;
};

MelPlan plan_mel(const Node& n) {
  return {const_count_input(n, kMelBins, "num_mel_bins", 1), const_count_input(n, kDftLength, "dft_length", 1)};
}

void infer_mel_weight_matrix(Node& n) {
  check_arity(n, 5, 5, 1, 1);
  require_input_dtype(n, kSampleRate, {DType::Int32, DType::Int64});
  require_input_dtype<FloatTypes>(n, kLowerHertz);
  require_same_dtype(n, kUpperHertz, kLowerHertz);
  for (std::size_t i : {kSampleRate, kLowerHertz, kUpperHertz})
    if (input(n, i).numel() != 1)
      fail_invalid(n, fmt::format("input {} must be a scalar; it has shape {}", i, shape_str(input(n, i).shape)));
  const MelPlan p = plan_mel(n);
  set_output(n, 0, output_datatype(n), {p.dft_length / 2 + 1, p.mel_bins});
}

// The scalar inputs sample_rate and the edge frequencies may be computed at run time.
void emit_mel_weight_matrix(const Node& n, Emitter& e) {
  e.include("onnxc/spectral.h");
  const MelPlan p = plan_mel(n);
  auto scalar = [&](std::size_t i) { return fmt::format("static_cast<double>(rt::load({}[0]))", e.in(i)); };
  e.linef("rt::mel_weight_matrix({}, {}, {}, {}, {}, {});", e.out(0), p.mel_bins, p.dft_length, scalar(kSampleRate),
          scalar(kLowerHertz), scalar(kUpperHertz));
}

void fold_mel_weight_matrix(const Node& n, std::vector<Tensor>& outs) {
  Tensor& y = fold_output(n, outs);
  const MelPlan p = plan_mel(n);
  auto scalar = [&](std::size_t i) { return n.inputs[i]->constant->float_at(0); };
  dispatch_in(n, y.dtype, NumericTypes{}, [&](auto tag) {
    using T = typename decltype(tag)::type;
    rt::mel_weight_matrix(y.data<T>(), p.mel_bins, p.dft_length, scalar(kSampleRate), scalar(kLowerHertz),
                          scalar(kUpperHertz));
  });
}

const OpRegistrar mel_weight_matrix_op([] {
  OpDef d;
  d.op_type = "MelWeightMatrix";
  d.versions = {17};
  d.infer = infer_mel_weight_matrix;
  d.emit = emit_mel_weight_matrix;
  d.fold = fold_mel_weight_matrix;
  return d;
}());

}  // namespace
}  // namespace onnxc
