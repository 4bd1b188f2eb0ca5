// Part of a parent header that includes it: not included on its own (tests/headers_portable_native.sh).
// QuantizeLinear of floats into 8-bit integers with one scale and zero point (the per-tensor form,
// a model's input: VWW's 96 x 96 x 3 image) on cores with the DSP extension and a
// single-precision FPU but no Helium (Cortex-M4F, M7), in optimised Thumb-2 builds. Included by
// quant.h after quantize_byte, whose instructions it runs eight values at a time: one VLDM of
// the eight floats, VDIV by the scale and VCVTR (nearest, ties to even, saturating; NaN gives 0)
// each, two VMOVs of two values back per four, QADD of the zero point (left out when it is 0),
// USAT/SSAT, the bytes put together by BFI and stored as a word: 39 instructions for eight
// values with a zero point of 0 (47 with one), where GCC's loop over quantize_byte takes 8 (9)
// per value. The same bits: the same instructions in the same rounding mode.
// tests/firmware/kernels compares it with the definition on the core.
#ifndef ONNXC_QUANT_QUANTIZE_ARMV7EM_DSP_H
#define ONNXC_QUANT_QUANTIZE_ARMV7EM_DSP_H

namespace onnxc {
namespace rt {
namespace detail {

// y[i] = quantize_byte(x[i] / scale, zero_point) for i < n - n % 8; returns the count done.
template <class Q>
inline index_t quantize_floats_dsp(const float* x, float scale, std::int32_t zero_point, Q* y, index_t n) {
  static_assert(sizeof(Q) == 1, "8-bit outputs");
  index_t octets = n / 8;
  if (octets == 0) return 0;
  std::uint32_t s0, s1, s2, s3;
#define ONNXC_QUANTIZE_ZP4                         \
  "qadd %[s0], %[s0], %[zp]\n\t"                   \
  "qadd %[s1], %[s1], %[zp]\n\t"                   \
  "qadd %[s2], %[s2], %[zp]\n\t"                   \
  "qadd %[s3], %[s3], %[zp]\n\t"
#define ONNXC_QUANTIZE_OUT4(SAT, ZP, S0, S1, S2, S3) \
  "vmov %[s0], %[s1], " S0 ", " S1 "\n\t"              \
  "vmov %[s2], %[s3], " S2 ", " S3 "\n\t"              \
  ZP                                                   \
  SAT " %[s0], #8, %[s0]\n\t"                          \
  SAT " %[s1], #8, %[s1]\n\t"                          \
  SAT " %[s2], #8, %[s2]\n\t"                          \
  SAT " %[s3], #8, %[s3]\n\t"                          \
  "bfi %[s0], %[s1], #8, #8\n\t"                       \
  "bfi %[s0], %[s2], #16, #8\n\t"                      \
  "bfi %[s0], %[s3], #24, #8\n\t"                      \
  "str %[s0], [%[y]], #4\n\t"
#define ONNXC_QUANTIZE_OCTET(SAT, ZP)                  \
  "1:\n\t"                                             \
  "vldmia %[x]!, {s0-s7}\n\t"                          \
  "vdiv.f32 s0, s0, %[scale]\n\t"                      \
  "vdiv.f32 s1, s1, %[scale]\n\t"                      \
  "vdiv.f32 s2, s2, %[scale]\n\t"                      \
  "vdiv.f32 s3, s3, %[scale]\n\t"                      \
  "vdiv.f32 s4, s4, %[scale]\n\t"                      \
  "vdiv.f32 s5, s5, %[scale]\n\t"                      \
  "vdiv.f32 s6, s6, %[scale]\n\t"                      \
  "vdiv.f32 s7, s7, %[scale]\n\t"                      \
  "vcvtr.s32.f32 s0, s0\n\t"                           \
  "vcvtr.s32.f32 s1, s1\n\t"                           \
  "vcvtr.s32.f32 s2, s2\n\t"                           \
  "vcvtr.s32.f32 s3, s3\n\t"                           \
  "vcvtr.s32.f32 s4, s4\n\t"                           \
  "vcvtr.s32.f32 s5, s5\n\t"                           \
  "vcvtr.s32.f32 s6, s6\n\t"                           \
  "vcvtr.s32.f32 s7, s7\n\t"                           \
  ONNXC_QUANTIZE_OUT4(SAT, ZP, "s0", "s1", "s2", "s3") \
  ONNXC_QUANTIZE_OUT4(SAT, ZP, "s4", "s5", "s6", "s7") \
  "subs %[octets], %[octets], #1\n\t"                  \
  "bne 1b\n\t"
#define ONNXC_QUANTIZE_OCTET_ASM(SAT, ZP)                                                                  \
  __asm__ volatile(ONNXC_QUANTIZE_OCTET(SAT, ZP)                                                          \
                   : [x] "+r"(x), [y] "+r"(y), [octets] "+r"(octets), [s0] "=&r"(s0), [s1] "=&r"(s1),   \
                     [s2] "=&r"(s2), [s3] "=&r"(s3)                                                     \
                   : [scale] "t"(scale), [zp] "r"(zero_point)                                           \
                   : "s0", "s1", "s2", "s3", "s4", "s5", "s6", "s7", "cc", "memory")
  if (std::numeric_limits<Q>::is_signed) {
    if (zero_point == 0) ONNXC_QUANTIZE_OCTET_ASM("ssat", "");
    else ONNXC_QUANTIZE_OCTET_ASM("ssat", ONNXC_QUANTIZE_ZP4);
  } else {
    if (zero_point == 0) ONNXC_QUANTIZE_OCTET_ASM("usat", "");
    else ONNXC_QUANTIZE_OCTET_ASM("usat", ONNXC_QUANTIZE_ZP4);
  }
#undef ONNXC_QUANTIZE_OCTET_ASM
#undef ONNXC_QUANTIZE_OCTET
#undef ONNXC_QUANTIZE_OUT4
#undef ONNXC_QUANTIZE_ZP4
  return n - n % 8;
}

}  // namespace detail
}  // namespace rt
}  // namespace onnxc

#endif  // ONNXC_QUANT_QUANTIZE_ARMV7EM_DSP_H
