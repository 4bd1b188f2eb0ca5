// Part of a parent header that includes it: not included on its own (tests/headers_portable_native.sh).
// store_row for 8-bit requantized outputs on cores with the DSP extension and a single-precision
// FPU but no Helium (Cortex-M4F, M7: ONNXC_QUANTIZE_BYTE_VCVTR without ONNXC_QUANT_MVE), in
// optimised Thumb-2 builds. Included by quant.h after the portable store_row it overloads;
// tests/firmware/kernels compares it with the definition on the core.
//
// quantize_byte's instructions four outputs at a time, then two: LDRDs of the sums, the bias added
// (not where the kernel started its sums at it: store_row_started), VMOVs of two sums into two
// single-precision registers and back, VCVT, VMUL by the channel's multiplier, VCVTR (nearest,
// ties to even, saturating), QADD of the zero point, USAT/SSAT, the bytes put together by BFI and
// stored as one word (STRH for a pair): 32 instructions for four started outputs with the loop,
// where GCC's loop over quantize_byte takes about 12 per output (it moves each sum to the FPU and
// back alone).
// The same bits: the same instructions in the same rounding mode.
#ifndef ONNXC_QUANT_REQUANTIZE_ARMV7EM_DSP_H
#define ONNXC_QUANT_REQUANTIZE_ARMV7EM_DSP_H

namespace onnxc {
namespace rt {

// Started: the sums began at row_start (bias and offset already in them; add is 0). Lookup: each
// byte then replaced by table[byte - lowest] (one LDRB per output: the table's base is biased by
// 128 for int8, so the signed byte indexes it as it is).
template <bool Started, bool Lookup, class Q, class R>
inline void store_row_dsp(const RequantizeOutput<Q, R>& out, const Q* table, index_t channel, index_t i,
                          const std::int32_t* acc, index_t n, std::int32_t offset) {
  static_assert(sizeof(Q) == 1, "8-bit outputs");
  const std::uint32_t add = Started ? 0u : requant_addend(out, channel, offset);
  const R r = out.requant[channel * out.requant_stride];
  const float multiplier = r.multiplier;
  const std::int32_t zero_point = out.zero_point;
  const std::uint8_t* t =
      Lookup ? reinterpret_cast<const std::uint8_t*>(table) - std::numeric_limits<Q>::lowest() : nullptr;
  Q* y = out.y + i;
  index_t quads = n / 4;
  // round_half_even(p) + zero_point for p = float(sum) * multiplier by the rounding of the
  // non-fused VMLA into 1.5 * 2^23 (the float's last place then being 1): for |p| < 2^22 the
  // sum's bits are 0x4B400000 + round_half_even(p) (the rounding mode's ties to even, as VCVTR's),
  // so one QSUB of 0x4B400000 - zero_point leaves the integer (replacing VMUL, VCVTR and QADD by
  // VMLA and QSUB). Past 2^22 either way the bits stay ordered, and the QSUB saturates, so USAT
  // and SSAT clamp as before.
  alignas(8) static const float magic[8] = {12582912.0f, 12582912.0f, 12582912.0f, 12582912.0f,
                                            12582912.0f, 12582912.0f, 12582912.0f, 12582912.0f};
  const std::uint32_t unbias = 0x4B400000u - static_cast<std::uint32_t>(zero_point);
#define ONNXC_REQUANTIZE_IN [m] "t"(multiplier), [unbias] "r"(unbias), [magic] "r"(magic)
#define ONNXC_REQUANTIZE_LOOKUP4                   \
  "ldrb %[s0], [%[t], %[s0]]\n\t"                  \
  "ldrb %[s1], [%[t], %[s1]]\n\t"                  \
  "ldrb %[s2], [%[t], %[s2]]\n\t"                  \
  "ldrb %[s3], [%[t], %[s3]]\n\t"
  // Started sums with a table: eight outputs a turn (one VLDM of the sums, one of the magic, the
  // products out as two runs of four: 56 instructions against 60 as two quads). The multiplier
  // then lies past s15, which the prologue saves: taken where the tables are (VWW's rows of 32
  // gain, resnet8's short rows without tables lost 27,000 instructions to the saving).
  index_t octets = Started && Lookup ? n / 8 : 0;
  if (octets > 0) {
    const std::int32_t* a = acc;
    std::uint32_t s0, s1, s2, s3;
#define ONNXC_REQUANTIZE_OUT4(SAT, S0, S1, S2, S3) \
  "vmov %[s0], %[s1], " S0 ", " S1 "\n\t"            \
  "vmov %[s2], %[s3], " S2 ", " S3 "\n\t"            \
  "qsub %[s0], %[s0], %[unbias]\n\t"                 \
  "qsub %[s1], %[s1], %[unbias]\n\t"                 \
  "qsub %[s2], %[s2], %[unbias]\n\t"                 \
  "qsub %[s3], %[s3], %[unbias]\n\t"                 \
  SAT " %[s0], #8, %[s0]\n\t"                        \
  SAT " %[s1], #8, %[s1]\n\t"                        \
  SAT " %[s2], #8, %[s2]\n\t"                        \
  SAT " %[s3], #8, %[s3]\n\t"                        \
  ONNXC_REQUANTIZE_LOOKUP4                           \
  "bfi %[s0], %[s1], #8, #8\n\t"                     \
  "bfi %[s0], %[s2], #16, #8\n\t"                    \
  "bfi %[s0], %[s3], #24, #8\n\t"                    \
  "str %[s0], [%[y]], #4\n\t"
#define ONNXC_REQUANTIZE_OCTET(SAT)                \
  "1:\n\t"                                         \
  "vldmia %[a]!, {s0-s7}\n\t"                      \
  "vldmia %[magic], {s8-s15}\n\t"                  \
  "vcvt.f32.s32 s0, s0\n\t"                        \
  "vcvt.f32.s32 s1, s1\n\t"                        \
  "vcvt.f32.s32 s2, s2\n\t"                        \
  "vcvt.f32.s32 s3, s3\n\t"                        \
  "vcvt.f32.s32 s4, s4\n\t"                        \
  "vcvt.f32.s32 s5, s5\n\t"                        \
  "vcvt.f32.s32 s6, s6\n\t"                        \
  "vcvt.f32.s32 s7, s7\n\t"                        \
  "vmla.f32 s8, s0, %[m]\n\t"                      \
  "vmla.f32 s9, s1, %[m]\n\t"                      \
  "vmla.f32 s10, s2, %[m]\n\t"                     \
  "vmla.f32 s11, s3, %[m]\n\t"                     \
  "vmla.f32 s12, s4, %[m]\n\t"                     \
  "vmla.f32 s13, s5, %[m]\n\t"                     \
  "vmla.f32 s14, s6, %[m]\n\t"                     \
  "vmla.f32 s15, s7, %[m]\n\t"                     \
  ONNXC_REQUANTIZE_OUT4(SAT, "s8", "s9", "s10", "s11")   \
  ONNXC_REQUANTIZE_OUT4(SAT, "s12", "s13", "s14", "s15") \
  "subs %[octets], %[octets], #1\n\t"              \
  "bne 1b\n\t"
#define ONNXC_REQUANTIZE_OCTET_ASM(SAT)                                                                           \
  __asm__ volatile(ONNXC_REQUANTIZE_OCTET(SAT)                                                                \
                   : [a] "+r"(a), [y] "+r"(y), [octets] "+r"(octets), [s0] "=&r"(s0), [s1] "=&r"(s1),         \
                     [s2] "=&r"(s2), [s3] "=&r"(s3)                                                           \
                   : ONNXC_REQUANTIZE_IN, [t] "r"(t)                                                          \
                   : "s0", "s1", "s2", "s3", "s4", "s5", "s6", "s7", "s8", "s9", "s10", "s11", "s12", "s13",  \
                     "s14", "s15", "cc", "memory")
    if (std::numeric_limits<Q>::is_signed) ONNXC_REQUANTIZE_OCTET_ASM("ssat");
    else ONNXC_REQUANTIZE_OCTET_ASM("usat");
#undef ONNXC_REQUANTIZE_OCTET_ASM
#undef ONNXC_REQUANTIZE_OCTET
#undef ONNXC_REQUANTIZE_OUT4
    acc += 8 * (n / 8);
    n %= 8;
    quads = n / 4;
  }
  if (quads > 0) {
    const std::int32_t* a = acc;
    std::uint32_t s0, s1, s2, s3;
    // Four outputs a turn: the sums to the FPU by one VLDM (started sums; two LDRDs, four ADDs and
    // two VMOVs otherwise), the magic by another, two VMOVs back, one word stored (BFI x 3): 26
    // instructions for four started outputs, 30 with the lookups.
#define ONNXC_REQUANTIZE_LOAD4_STARTED             \
  "vldmia %[a]!, {s8-s11}\n\t"
#define ONNXC_REQUANTIZE_LOAD4_ADD                 \
  "ldrd %[s2], %[s3], [%[a], #8]\n\t"              \
  "ldrd %[s0], %[s1], [%[a]], #16\n\t"             \
  "add %[s0], %[s0], %[add]\n\t"                   \
  "add %[s1], %[s1], %[add]\n\t"                   \
  "add %[s2], %[s2], %[add]\n\t"                   \
  "add %[s3], %[s3], %[add]\n\t"                   \
  "vmov s8, s9, %[s0], %[s1]\n\t"                  \
  "vmov s10, s11, %[s2], %[s3]\n\t"
#define ONNXC_REQUANTIZE_QUAD(SAT, LOAD, LOOKUP)   \
  "1:\n\t"                                         \
  LOAD                                             \
  "vldmia %[magic], {s12-s15}\n\t"                 \
  "vcvt.f32.s32 s8, s8\n\t"                        \
  "vcvt.f32.s32 s9, s9\n\t"                        \
  "vcvt.f32.s32 s10, s10\n\t"                      \
  "vcvt.f32.s32 s11, s11\n\t"                      \
  "vmla.f32 s12, s8, %[m]\n\t"                     \
  "vmla.f32 s13, s9, %[m]\n\t"                     \
  "vmla.f32 s14, s10, %[m]\n\t"                    \
  "vmla.f32 s15, s11, %[m]\n\t"                    \
  "vmov %[s0], %[s1], s12, s13\n\t"                \
  "vmov %[s2], %[s3], s14, s15\n\t"                \
  "qsub %[s0], %[s0], %[unbias]\n\t"               \
  "qsub %[s1], %[s1], %[unbias]\n\t"               \
  "qsub %[s2], %[s2], %[unbias]\n\t"               \
  "qsub %[s3], %[s3], %[unbias]\n\t"               \
  SAT " %[s0], #8, %[s0]\n\t"                      \
  SAT " %[s1], #8, %[s1]\n\t"                      \
  SAT " %[s2], #8, %[s2]\n\t"                      \
  SAT " %[s3], #8, %[s3]\n\t"                      \
  LOOKUP                                           \
  "bfi %[s0], %[s1], #8, #8\n\t"                   \
  "bfi %[s0], %[s2], #16, #8\n\t"                  \
  "bfi %[s0], %[s3], #24, #8\n\t"                  \
  "str %[s0], [%[y]], #4\n\t"                      \
  "subs %[quads], %[quads], #1\n\t"                \
  "bne 1b\n\t"
#define ONNXC_REQUANTIZE_QUAD_ASM(SAT, LOAD, LOOKUP, ...)                                                         \
  __asm__ volatile(ONNXC_REQUANTIZE_QUAD(SAT, LOAD, LOOKUP)                                                   \
                   : [a] "+r"(a), [y] "+r"(y), [quads] "+r"(quads), [s0] "=&r"(s0), [s1] "=&r"(s1),           \
                     [s2] "=&r"(s2), [s3] "=&r"(s3)                                                           \
                   : __VA_ARGS__                                                                              \
                   : "s8", "s9", "s10", "s11", "s12", "s13", "s14", "s15", "cc", "memory")
    constexpr bool is_signed = std::numeric_limits<Q>::is_signed;
    if (Lookup) {
      if (is_signed && !Started) ONNXC_REQUANTIZE_QUAD_ASM("ssat", ONNXC_REQUANTIZE_LOAD4_ADD, ONNXC_REQUANTIZE_LOOKUP4,
                                          [add] "r"(add), ONNXC_REQUANTIZE_IN, [t] "r"(t));
      else if (!Started) ONNXC_REQUANTIZE_QUAD_ASM("usat", ONNXC_REQUANTIZE_LOAD4_ADD, ONNXC_REQUANTIZE_LOOKUP4,
                                          [add] "r"(add), ONNXC_REQUANTIZE_IN, [t] "r"(t));
      else if (is_signed) ONNXC_REQUANTIZE_QUAD_ASM("ssat", ONNXC_REQUANTIZE_LOAD4_STARTED, ONNXC_REQUANTIZE_LOOKUP4,
                                          ONNXC_REQUANTIZE_IN, [t] "r"(t));
      else ONNXC_REQUANTIZE_QUAD_ASM("usat", ONNXC_REQUANTIZE_LOAD4_STARTED, ONNXC_REQUANTIZE_LOOKUP4,
                                          ONNXC_REQUANTIZE_IN, [t] "r"(t));
    } else {
      if (is_signed && !Started) ONNXC_REQUANTIZE_QUAD_ASM("ssat", ONNXC_REQUANTIZE_LOAD4_ADD, "",
                                          [add] "r"(add), ONNXC_REQUANTIZE_IN);
      else if (!Started) ONNXC_REQUANTIZE_QUAD_ASM("usat", ONNXC_REQUANTIZE_LOAD4_ADD, "",
                                          [add] "r"(add), ONNXC_REQUANTIZE_IN);
      else if (is_signed) ONNXC_REQUANTIZE_QUAD_ASM("ssat", ONNXC_REQUANTIZE_LOAD4_STARTED, "", ONNXC_REQUANTIZE_IN);
      else ONNXC_REQUANTIZE_QUAD_ASM("usat", ONNXC_REQUANTIZE_LOAD4_STARTED, "", ONNXC_REQUANTIZE_IN);
    }
#undef ONNXC_REQUANTIZE_QUAD_ASM
#undef ONNXC_REQUANTIZE_QUAD
#undef ONNXC_REQUANTIZE_LOOKUP4
#undef ONNXC_REQUANTIZE_LOAD4_ADD
#undef ONNXC_REQUANTIZE_LOAD4_STARTED
    acc += 4 * (n / 4);
    n %= 4;
  }
  index_t pairs = n / 2;
  if (pairs > 0) {
    const std::int32_t* a = acc;
    std::uint32_t s0, s1;
    // (s12 to s15 by name: VMOV moves a consecutive pair, VLDM a consecutive run.)
#define ONNXC_REQUANTIZE_LOAD_STARTED              \
  "vldmia %[a]!, {s12-s13}\n\t"
#define ONNXC_REQUANTIZE_LOAD_ADD                  \
  "ldrd %[s0], %[s1], [%[a]], #8\n\t"              \
  "add %[s0], %[s0], %[add]\n\t"                   \
  "add %[s1], %[s1], %[add]\n\t"                   \
  "vmov s12, s13, %[s0], %[s1]\n\t"
#define ONNXC_REQUANTIZE_LOOKUP                    \
  "ldrb %[s0], [%[t], %[s0]]\n\t"                  \
  "ldrb %[s1], [%[t], %[s1]]\n\t"
#define ONNXC_REQUANTIZE_PAIR(SAT, LOAD, LOOKUP)   \
  "1:\n\t"                                         \
  LOAD                                             \
  "vldmia %[magic], {s14-s15}\n\t"                 \
  "vcvt.f32.s32 s12, s12\n\t"                      \
  "vcvt.f32.s32 s13, s13\n\t"                      \
  "vmla.f32 s14, s12, %[m]\n\t"                    \
  "vmla.f32 s15, s13, %[m]\n\t"                    \
  "vmov %[s0], %[s1], s14, s15\n\t"                \
  "qsub %[s0], %[s0], %[unbias]\n\t"               \
  "qsub %[s1], %[s1], %[unbias]\n\t"               \
  SAT " %[s0], #8, %[s0]\n\t"                      \
  SAT " %[s1], #8, %[s1]\n\t"                      \
  LOOKUP                                           \
  "bfi %[s0], %[s1], #8, #8\n\t"                   \
  "strh %[s0], [%[y]], #2\n\t"                     \
  "subs %[pairs], %[pairs], #1\n\t"                \
  "bne 1b\n\t"
#define ONNXC_REQUANTIZE_PAIR_ASM(SAT, LOAD, LOOKUP, ...)                                                         \
  __asm__ volatile(ONNXC_REQUANTIZE_PAIR(SAT, LOAD, LOOKUP)                                                   \
                   : [a] "+r"(a), [y] "+r"(y), [pairs] "+r"(pairs), [s0] "=&r"(s0), [s1] "=&r"(s1)            \
                   : __VA_ARGS__                                                                              \
                   : "s12", "s13", "s14", "s15", "cc", "memory")
    constexpr bool is_signed = std::numeric_limits<Q>::is_signed;
    if (Lookup) {
      if (is_signed && !Started) ONNXC_REQUANTIZE_PAIR_ASM("ssat", ONNXC_REQUANTIZE_LOAD_ADD, ONNXC_REQUANTIZE_LOOKUP,
                                          [add] "r"(add), ONNXC_REQUANTIZE_IN, [t] "r"(t));
      else if (!Started) ONNXC_REQUANTIZE_PAIR_ASM("usat", ONNXC_REQUANTIZE_LOAD_ADD, ONNXC_REQUANTIZE_LOOKUP,
                                          [add] "r"(add), ONNXC_REQUANTIZE_IN, [t] "r"(t));
      else if (is_signed) ONNXC_REQUANTIZE_PAIR_ASM("ssat", ONNXC_REQUANTIZE_LOAD_STARTED, ONNXC_REQUANTIZE_LOOKUP,
                                          ONNXC_REQUANTIZE_IN, [t] "r"(t));
      else ONNXC_REQUANTIZE_PAIR_ASM("usat", ONNXC_REQUANTIZE_LOAD_STARTED, ONNXC_REQUANTIZE_LOOKUP,
                                          ONNXC_REQUANTIZE_IN, [t] "r"(t));
    } else {
      if (is_signed && !Started) ONNXC_REQUANTIZE_PAIR_ASM("ssat", ONNXC_REQUANTIZE_LOAD_ADD, "",
                                          [add] "r"(add), ONNXC_REQUANTIZE_IN);
      else if (!Started) ONNXC_REQUANTIZE_PAIR_ASM("usat", ONNXC_REQUANTIZE_LOAD_ADD, "",
                                          [add] "r"(add), ONNXC_REQUANTIZE_IN);
      else if (is_signed) ONNXC_REQUANTIZE_PAIR_ASM("ssat", ONNXC_REQUANTIZE_LOAD_STARTED, "", ONNXC_REQUANTIZE_IN);
      else ONNXC_REQUANTIZE_PAIR_ASM("usat", ONNXC_REQUANTIZE_LOAD_STARTED, "", ONNXC_REQUANTIZE_IN);
    }
#undef ONNXC_REQUANTIZE_PAIR_ASM
#undef ONNXC_REQUANTIZE_PAIR
#undef ONNXC_REQUANTIZE_LOOKUP
#undef ONNXC_REQUANTIZE_LOAD_ADD
#undef ONNXC_REQUANTIZE_LOAD_STARTED
  }
#undef ONNXC_REQUANTIZE_IN
  if (n % 2) {
    const Q q = requantize<Q>(static_cast<std::int32_t>(static_cast<std::uint32_t>(acc[n - 1]) + add), r, zero_point);
    y[0] = Lookup ? table[static_cast<std::int32_t>(q) - std::numeric_limits<Q>::lowest()] : q;
  }
}

template <class R>
inline void store_row(const RequantizeOutput<std::uint8_t, R>& out, index_t channel, index_t i, const std::int32_t* acc,
                      index_t n, std::int32_t offset) {
  store_row_dsp<false, false>(out, static_cast<const std::uint8_t*>(nullptr), channel, i, acc, n, offset);
}

template <class R>
inline void store_row(const RequantizeOutput<std::int8_t, R>& out, index_t channel, index_t i, const std::int32_t* acc,
                      index_t n, std::int32_t offset) {
  store_row_dsp<false, false>(out, static_cast<const std::int8_t*>(nullptr), channel, i, acc, n, offset);
}

template <class R>
inline void store_row_started(const RequantizeOutput<std::uint8_t, R>& out, index_t channel, index_t i,
                              const std::int32_t* acc, index_t n) {
  store_row_dsp<true, false>(out, static_cast<const std::uint8_t*>(nullptr), channel, i, acc, n, 0);
}

template <class R>
inline void store_row_started(const RequantizeOutput<std::int8_t, R>& out, index_t channel, index_t i,
                              const std::int32_t* acc, index_t n) {
  store_row_dsp<true, false>(out, static_cast<const std::int8_t*>(nullptr), channel, i, acc, n, 0);
}

template <class R>
inline void store_row(const RequantizeLookupOutput<std::uint8_t, R>& out, index_t channel, index_t i,
                      const std::int32_t* acc,
                      index_t n, std::int32_t offset) {
  store_row_dsp<false, true>(out.requant, out.table, channel, i, acc, n, offset);
}

template <class R>
inline void store_row(const RequantizeLookupOutput<std::int8_t, R>& out, index_t channel, index_t i,
                      const std::int32_t* acc,
                      index_t n, std::int32_t offset) {
  store_row_dsp<false, true>(out.requant, out.table, channel, i, acc, n, offset);
}

template <class R>
inline void store_row_started(const RequantizeLookupOutput<std::uint8_t, R>& out, index_t channel, index_t i,
                              const std::int32_t* acc, index_t n) {
  store_row_dsp<true, true>(out.requant, out.table, channel, i, acc, n, 0);
}

template <class R>
inline void store_row_started(const RequantizeLookupOutput<std::int8_t, R>& out, index_t channel, index_t i,
                              const std::int32_t* acc, index_t n) {
  store_row_dsp<true, true>(out.requant, out.table, channel, i, acc, n, 0);
}

}  // namespace rt
}  // namespace onnxc

#endif  // ONNXC_QUANT_REQUANTIZE_ARMV7EM_DSP_H
