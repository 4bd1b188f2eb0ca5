// Part of a parent header that includes it: not included on its own (tests/headers_portable_native.sh).
// store_row for 8-bit requantized outputs on cores with Helium's floating-point vectors
// (MVE-F: Cortex-M55, M85). Included by quant.h after the portable store_row it overloads
// (ONNXC_QUANT_MVE, and requantization in float); tests/firmware/kernels compares the two on the
// core. Four outputs per vector, the bits of quantize_value: VCVT to float (nearest, as
// static_cast), VMUL by the channel's multiplier, VCVTN (nearest, ties to even, saturating),
// VQADD of the zero point, clamp to the type's range, VSTRB of the low bytes: nine instructions
// per four outputs with the load and the bias, where the scalar form takes about ten per output.
#ifndef ONNXC_QUANT_REQUANTIZE_MVE_H
#define ONNXC_QUANT_REQUANTIZE_MVE_H

namespace onnxc {
namespace rt {

template <class Q, class R>
inline void store_row_mve(const RequantizeOutput<Q, R>& out, index_t channel, index_t i, const std::int32_t* acc,
                          index_t n, std::int32_t offset) {
  static_assert(sizeof(Q) == 1, "8-bit outputs");
  const std::int32_t add = static_cast<std::int32_t>(requant_addend(out, channel, offset));
  const float multiplier = out.requant[channel * out.requant_stride].multiplier;
  const std::int32_t lo = std::numeric_limits<Q>::lowest(), hi = std::numeric_limits<Q>::max();
  Q* y = out.y + i;
  const int32x4_t low = vdupq_n_s32(lo), high = vdupq_n_s32(hi);
  // The four outputs' bytes (wrapping addition of the bias, as the scalar form).
  const auto quantize = [&](int32x4_t sums) {
    const int32x4_t q = vcvtnq_s32_f32(vmulq_n_f32(vcvtq_f32_s32(vaddq_n_s32(sums, add)), multiplier));
    return vminq_s32(vmaxq_s32(vqaddq_n_s32(q, out.zero_point), low), high);
  };
  std::int8_t* const ys = reinterpret_cast<std::int8_t*>(y);  // (the narrowing store keeps the low bytes)
  const index_t full = n / 4 * 4;  // whole vectors unpredicated: GCC moves each predicate through a register
  for (index_t j = 0; j < full; j += 4) vstrbq_s32(ys + j, quantize(vldrwq_s32(acc + j)));
  if (full < n) {
    const mve_pred16_t p = vctp32q(static_cast<std::uint32_t>(n - full));
    vstrbq_p_s32(ys + full, quantize(vldrwq_z_s32(acc + full, p)), p);
  }
}

template <class R>
inline void store_row(const RequantizeOutput<std::uint8_t, R>& out, index_t channel, index_t i, const std::int32_t* acc,
                      index_t n, std::int32_t offset) {
  store_row_mve(out, channel, i, acc, n, offset);
}

template <class R>
inline void store_row(const RequantizeOutput<std::int8_t, R>& out, index_t channel, index_t i, const std::int32_t* acc,
                      index_t n, std::int32_t offset) {
  store_row_mve(out, channel, i, acc, n, offset);
}

}  // namespace rt
}  // namespace onnxc

#endif  // ONNXC_QUANT_REQUANTIZE_MVE_H
