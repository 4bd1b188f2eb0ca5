// Float ConvTranspose over 1 or 2 spatial dims split into its stride phases (sub-pixel form),
// with no scratch: the portable kernel, the weights' layout and the geometry the SIMD kernel
// (conv_transpose_phases_simd.h) shares. conv_transpose.h holds the reference loops.
//
// Along one axis (stride s, dilation d, pads p), tap k of input position i lands on output
// o = i * s - p + k * d. Write o + p = q * s + r with 0 <= r < s: the output's phase r takes
// the taps with k * d = r (mod s), each reading input i = q - floor(k * d / s). So every phase
// is a small dense stride-1 correlation over X with a sub-kernel of about k / s taps, whose
// outputs land on every s-th column (row) of Y: no output is written twice, nothing is added
// into Y, and a phase without taps is the bias alone.
//
// Weights are re-laid at compile time (pack_conv_transpose_phase_weights): per group, phase
// block after phase block (row phase major), each block the [M/g, K_phase] matrix of that phase's
// taps (input channel, then kernel row, then kernel column, each ascending) in the panels of
// pack_direct_weights (conv.h): panels of kDirectPanelChannels output channels, a tap's channels
// side by side. The blocks together hold exactly the original weights.
#ifndef ONNXC_CONV_TRANSPOSE_PHASES_H
#define ONNXC_CONV_TRANSPOSE_PHASES_H

#include "onnxc/activation.h"
#include "onnxc/base.h"
#include "onnxc/conv.h"

namespace onnxc {
namespace rt {
namespace phases_detail {

constexpr index_t kMaxKernel = 16;  // kernel rows and columns
constexpr index_t kMaxStride = 16;

// One axis of the geometry: stride, dilation, pads before, kernel, input and output extents.
struct Axis {
  index_t stride, dilation, pad, kernel, in, out;
};

constexpr Axis axis_h(const ConvParams& p) { return Axis{p.stride_h, p.dilation_h, p.pad_h, p.k_h, p.in_h, p.out_h}; }
constexpr Axis axis_w(const ConvParams& p) { return Axis{p.stride_w, p.dilation_w, p.pad_w, p.k_w, p.in_w, p.out_w}; }

// Tap k's phase and its input offset (input = q - offset).
constexpr index_t tap_phase(const Axis& a, index_t k) { return k * a.dilation % a.stride; }
constexpr index_t tap_offset(const Axis& a, index_t k) { return k * a.dilation / a.stride; }
// The largest offset of any tap.
constexpr index_t max_offset(const Axis& a) { return tap_offset(a, a.kernel - 1); }
// Taps of phase r.
constexpr index_t phase_taps(const Axis& a, index_t r) {
  index_t n = 0;
  for (index_t k = 0; k < a.kernel; ++k) n += tap_phase(a, k) == r ? 1 : 0;
  return n;
}
// Phase r's outputs o = q * s + r - pad in [0, out): q in [first_q, end_q).
constexpr index_t first_q(const Axis& a, index_t r) { return a.pad > r ? (a.pad - r + a.stride - 1) / a.stride : 0; }
constexpr index_t end_q(const Axis& a, index_t r) {
  return a.out - 1 + a.pad - r < 0 ? 0 : (a.out - 1 + a.pad - r) / a.stride + 1;
}
// The end of every phase's q.
constexpr index_t max_end_q(const Axis& a) {
  index_t e = 0;
  for (index_t r = 0; r < a.stride; ++r) e = end_q(a, r) > e ? end_q(a, r) : e;
  return e;
}

// Phase r's taps (ascending) and their offsets; returns how many.
inline index_t phase_tap_offsets(const Axis& a, index_t r, index_t* taps, index_t* offsets) {
  index_t n = 0;
  for (index_t k = 0; k < a.kernel; ++k)
    if (tap_phase(a, k) == r) {
      taps[n] = k;
      offsets[n++] = tap_offset(a, k);
    }
  return n;
}

}  // namespace phases_detail

// Whether the phase kernels take the ConvTranspose: 1-d or 2-d, kernels and strides in bounds.
constexpr bool conv_transpose_phases_apply(const ConvParams& p) {
  return p.in_d == 1 && p.k_d == 1 && p.out_d == 1 && p.k_h <= phases_detail::kMaxKernel &&
         p.k_w <= phases_detail::kMaxKernel && p.stride_h <= phases_detail::kMaxStride &&
         p.stride_w <= phases_detail::kMaxStride;
}

// w ([C, M/g, kH, kW], ONNX's layout) into the phase blocks above (the compiler calls this).
inline void pack_conv_transpose_phase_weights(const ConvParams& p, const float* w, float* packed) {
  using namespace phases_detail;
  const Axis ah = axis_h(p), aw = axis_w(p);
  const index_t cg = p.in_channels / p.group, mg = p.out_channels / p.group, taps = p.k_h * p.k_w;
  index_t kh_of[kMaxKernel], kw_of[kMaxKernel], unused[kMaxKernel];
  float* out = packed;
  for (index_t g = 0; g < p.group; ++g)
    for (index_t rh = 0; rh < p.stride_h; ++rh)
      for (index_t rw = 0; rw < p.stride_w; ++rw) {
        const index_t th = phase_tap_offsets(ah, rh, kh_of, unused), tw = phase_tap_offsets(aw, rw, kw_of, unused);
        const index_t k = cg * th * tw;
        for (index_t first = 0; first < mg; first += kDirectPanelChannels) {
          const index_t rows = mg - first < kDirectPanelChannels ? mg - first : kDirectPanelChannels;
          for (index_t c = 0; c < cg; ++c)
            for (index_t i = 0; i < th; ++i)
              for (index_t j = 0; j < tw; ++j) {
                const index_t l = (c * th + i) * tw + j;
                for (index_t r = 0; r < rows; ++r)
                  out[first * k + l * rows + r] = w[((g * cg + c) * mg + first + r) * taps + kh_of[i] * p.k_w + kw_of[j]];
              }
        }
        out += mg * k;
      }
}

// x: [batch, C, H, W]; w_packed: pack_conv_transpose_phase_weights' layout; bias: [M] or nullptr;
// y: [batch, M, outH, outW], activated. Plain C++: per output row of a phase, bias then one
// multiply-add pass along the row per input channel and tap.
inline void conv_transpose_phases(const ConvParams& p, const float* x, const float* w_packed, const float* bias,
                                  float* y, const Epilogue& e = kNoActivation) {
  using namespace phases_detail;
  const Axis ah = axis_h(p), aw = axis_w(p);
  const index_t cg = p.in_channels / p.group, mg = p.out_channels / p.group;
  const index_t in_plane = p.in_h * p.in_w, out_plane = p.out_h * p.out_w, sw = p.stride_w;
  index_t kh_of[kMaxKernel], kw_of[kMaxKernel], off_h[kMaxKernel], off_w[kMaxKernel];
  for (index_t n = 0; n < p.batch; ++n)
    for (index_t g = 0; g < p.group; ++g) {
      const float* block = w_packed + g * mg * cg * p.k_h * p.k_w;
      const float* xg = x + (n * p.in_channels + g * cg) * in_plane;
      for (index_t rh = 0; rh < p.stride_h; ++rh)
        for (index_t rw = 0; rw < sw; ++rw) {
          const index_t th = phase_tap_offsets(ah, rh, kh_of, off_h), tw = phase_tap_offsets(aw, rw, kw_of, off_w);
          const index_t k = cg * th * tw, q0 = first_q(aw, rw), q1 = end_q(aw, rw);
          for (index_t m = 0; m < mg; ++m) {
            const index_t first = m / kDirectPanelChannels * kDirectPanelChannels;
            const index_t rows = mg - first < kDirectPanelChannels ? mg - first : kDirectPanelChannels;
            const float* wm = block + first * k + (m - first);
            const float b = bias ? bias[g * mg + m] : 0.0f;
            float* ym = y + (n * p.out_channels + g * mg + m) * out_plane + rw - p.pad_w;  // column q at ym[q * sw]
            for (index_t qh = first_q(ah, rh); qh < end_q(ah, rh); ++qh) {
              float* yr = ym + (qh * p.stride_h + rh - p.pad_h) * p.out_w;
              for (index_t q = q0; q < q1; ++q) yr[q * sw] = b;
              for (index_t c = 0; c < cg; ++c)
                for (index_t i = 0; i < th; ++i) {
                  const index_t ih = qh - off_h[i];
                  if (ih < 0 || ih >= p.in_h) continue;
                  const float* xr = xg + c * in_plane + ih * p.in_w;
                  for (index_t j = 0; j < tw; ++j) {
                    const float wv = wm[((c * th + i) * tw + j) * rows];
                    // Columns whose input q - offset lies inside the row.
                    const index_t lo = q0 > off_w[j] ? q0 : off_w[j];
                    const index_t hi = q1 < p.in_w + off_w[j] ? q1 : p.in_w + off_w[j];
                    const float* xs = xr - off_w[j];
                    for (index_t q = lo; q < hi; ++q) yr[q * sw] += wv * xs[q];
                  }
                }
              if (e.activation != Activation::None)
                for (index_t q = q0; q < q1; ++q) yr[q * sw] = activate(e, yr[q * sw]);
            }
          }
          block += mg * k;
        }
    }
}

}  // namespace rt
}  // namespace onnxc

#endif  // ONNXC_CONV_TRANSPOSE_PHASES_H
