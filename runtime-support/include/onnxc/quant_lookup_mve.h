// Part of a parent header that includes it: not included on its own (tests/headers_portable_native.sh).
// rt::lookup (y = table[x] for 8-bit x) for cores with the M-profile vector extension (Helium,
// MVE: Cortex-M55, M85). Included by quant.h where __ARM_FEATURE_MVE is defined
// (ONNXC_QUANT_MVE); tests/firmware/kernels compares it with the table on the core.
//
// Sixteen values per vector: the bytes of x are the offsets of one byte gather from the table
// (VLDRB.U8 [table, Q]; int8 x less its type's lowest, the table's first entry, by flipping the
// sign bit), three instructions and the loop for sixteen outputs where the scalar loop takes
// about four per output. The last vector is predicated (VCTP).
#ifndef ONNXC_QUANT_LOOKUP_MVE_H
#define ONNXC_QUANT_LOOKUP_MVE_H

namespace onnxc {
namespace rt {
namespace detail {

ONNXC_INLINE uint8x16_t lookup_offsets(uint8x16_t x, std::uint8_t) { return x; }
ONNXC_INLINE uint8x16_t lookup_offsets(uint8x16_t x, std::int8_t) { return veorq_u8(x, vdupq_n_u8(0x80)); }

template <class Q>
inline void lookup_mve(const Q* x, const Q* table, Q* y, index_t n) {
  static_assert(sizeof(Q) == 1, "8-bit values");
  const std::uint8_t* xs = reinterpret_cast<const std::uint8_t*>(x);
  const std::uint8_t* t = reinterpret_cast<const std::uint8_t*>(table);
  std::uint8_t* ys = reinterpret_cast<std::uint8_t*>(y);
  index_t i = 0;
  for (; i + 16 <= n; i += 16) vst1q_u8(ys + i, vldrbq_gather_offset_u8(t, lookup_offsets(vld1q_u8(xs + i), Q{})));
  if (i < n) {
    const mve_pred16_t p = vctp8q(static_cast<std::uint32_t>(n - i));
    vstrbq_p_u8(ys + i, vldrbq_gather_offset_z_u8(t, lookup_offsets(vldrbq_z_u8(xs + i, p), Q{}), p), p);
  }
}

}  // namespace detail
}  // namespace rt
}  // namespace onnxc

#endif  // ONNXC_QUANT_LOOKUP_MVE_H
