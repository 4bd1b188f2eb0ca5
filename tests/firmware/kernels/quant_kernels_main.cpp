// The int8 kernels of the Cortex-M targets checked on the core itself: built with
// arm-none-eabi-g++ for a board (kernels_firmware.sh) and run under QEMU, so the variants that
// exist only there (quant_gemm_mve.h on the M55, the SMLAD assembly on the M4) run. Each kernel's
// int32 sums are compared with a direct convolution in this file (the definition of the sums)
// over odd shapes: channel counts and reductions that are not multiples of the vectors, tails
// of columns and positions, padding, strides, x's zero point. Prints each mismatch and exits with
// the number of failed cases.
#include <cmath>
#include <cstdint>

#include "onnxc/quant.h"
#include "semihosting.h"

namespace {

namespace rt = onnxc::rt;
using rt::index_t;
namespace sh = onnxc::firmware::semihosting;

constexpr index_t kMaxX = 24 * 20 * 20, kMaxW = 40 * 24 * 9, kMaxY = 40 * 20 * 20, kMaxScratch = 64 * 1024;
std::uint8_t x[kMaxX];
std::int8_t w[kMaxW];
std::int32_t y[kMaxY], expected[kMaxY];
alignas(16) std::uint8_t scratch[kMaxScratch];
index_t row_sums[64];
std::uint32_t seed = 12345;

// A kernel's scratch of `bytes` at the end of `scratch` with 16 guard bytes after it, which
// guard_intact checks: nothing written past the size the compiler plans.
constexpr index_t kGuardBytes = 16;
std::uint8_t* guard = nullptr;
std::uint8_t* guarded_scratch(index_t bytes) {
  std::uint8_t* block = scratch + (kMaxScratch - kGuardBytes - bytes) / 4 * 4;
  guard = block + bytes;
  for (index_t i = 0; i < kGuardBytes; ++i) guard[i] = 0xA5;
  return block;
}
int guard_intact(const char* what) {
  for (index_t i = 0; i < kGuardBytes; ++i)
    if (guard[i] != 0xA5) {
      sh::print(what);
      sh::print(": wrote past its scratch\n");
      return 1;
    }
  return 0;
}

std::uint32_t next() {
  seed = seed * 1664525u + 1013904223u;
  return seed >> 8;
}

void print_number(long v) {
  char text[24];
  int n = 0;
  const bool negative = v < 0;
  unsigned long u = negative ? 0ul - static_cast<unsigned long>(v) : static_cast<unsigned long>(v);
  do {
    text[n++] = static_cast<char>('0' + u % 10);
    u /= 10;
  } while (u);
  char out[26];
  int o = 0;
  if (negative) out[o++] = '-';
  while (n) out[o++] = text[--n];
  out[o] = 0;
  sh::print(out);
}

// sum over (c, kh, kw) of (x - zx) * w, x's padding taking zx (so contributing 0).
void direct(const rt::ConvParams& p, std::int32_t zx) {
  for (index_t m = 0; m < p.out_channels; ++m)
    for (index_t oh = 0; oh < p.out_h; ++oh)
      for (index_t ow = 0; ow < p.out_w; ++ow) {
        std::int32_t s = 0;
        for (index_t c = 0; c < p.in_channels; ++c)
          for (index_t kh = 0; kh < p.k_h; ++kh)
            for (index_t kw = 0; kw < p.k_w; ++kw) {
              const index_t ih = oh * p.stride_h + kh - p.pad_h, iw = ow * p.stride_w + kw - p.pad_w;
              if (ih < 0 || ih >= p.in_h || iw < 0 || iw >= p.in_w) continue;
              s += (static_cast<std::int32_t>(x[(c * p.in_h + ih) * p.in_w + iw]) - zx) *
                   w[((m * p.in_channels + c) * p.k_h + kh) * p.k_w + kw];
            }
        expected[(m * p.out_h + oh) * p.out_w + ow] = s;
      }
}

struct Case {
  index_t ic, oc, h, w, k, stride, pad, cols;
  std::uint8_t zx;
};

int check(const char* kernel, const Case& c, index_t n) {
  for (index_t i = 0; i < n; ++i)
    if (y[i] != expected[i]) {
      sh::print(kernel);
      sh::print(": ic ");
      print_number(c.ic);
      sh::print(" oc ");
      print_number(c.oc);
      sh::print(" k ");
      print_number(c.k);
      sh::print(" at ");
      print_number(i);
      sh::print(": ");
      print_number(y[i]);
      sh::print(" expected ");
      print_number(expected[i]);
      sh::print("\n");
      return 1;
    }
  return 0;
}

int run_case(const Case& c) {
  const index_t oh = (c.h + 2 * c.pad - c.k) / c.stride + 1, ow = (c.w + 2 * c.pad - c.k) / c.stride + 1;
  const rt::ConvParams p = {1, c.ic, c.oc, 1, 1, c.h, c.w, 1, oh, ow, 1, c.k, c.k, 1, c.stride, c.stride, 1, 1, 1, 0, c.pad, c.pad};
  for (index_t i = 0; i < c.ic * c.h * c.w; ++i) x[i] = static_cast<std::uint8_t>(next());
  for (index_t i = 0; i < c.oc * c.ic * c.k * c.k; ++i) w[i] = static_cast<std::int8_t>(next());
  // Extremes too: the flipped int8 range and the SMLAD halves at their limits.
  x[0] = 255;
  w[0] = -128;
  direct(p, c.zx);
  rt::qconv_weight_row_sums(p, w, row_sums);
  const index_t n = c.oc * oh * ow;
  for (index_t i = 0; i < n; ++i) y[i] = -1;
  rt::qconv_gemm(p, x, c.zx, w, row_sums, [](index_t, index_t i, std::int32_t acc) { y[i] = acc; }, c.cols, scratch);
  int failed = check("qconv_gemm", c, n);
  {
    static std::int32_t pairs[64 * 48 * 2];
    rt::qconv_gemm_pairs_pack_weights(p, w, pairs);
    for (index_t i = 0; i < n; ++i) y[i] = -1;
    rt::qconv_gemm_pairs(p, x, c.zx, pairs, row_sums, [](index_t, index_t i, std::int32_t acc) { y[i] = acc; }, c.cols,
                         scratch);
    failed += check("qconv_gemm_pairs", c, n);
    // The widened columns after the block, in the plan's scratch (qconv_gemm_pairs_scratch_bytes).
    std::uint8_t* block = guarded_scratch(rt::qconv_gemm_pairs_scratch_bytes(p, c.cols));
    for (index_t i = 0; i < n; ++i) y[i] = -1;
    rt::qconv_gemm_pairs(p, x, c.zx, pairs, row_sums, [](index_t, index_t i, std::int32_t acc) { y[i] = acc; }, c.cols,
                         block, block + rt::qconv_gemm_pairs_widened_offset(p, c.cols));
    failed += check("qconv_gemm_pairs widened in scratch", c, n) + guard_intact("qconv_gemm_pairs in scratch");
  }
  if (c.k == 1 && c.stride == 1 && c.pad == 0) {
    static std::int32_t packed[64 * 48];
    rt::qconv_pointwise_pack_weights(p, w, packed);
    for (index_t i = 0; i < n; ++i) y[i] = -1;
    rt::qconv_pointwise(p, x, c.zx, packed, row_sums, [](index_t, index_t i, std::int32_t acc) { y[i] = acc; });
    failed += check("qconv_pointwise", c, n);
    std::uint8_t* block = guarded_scratch(rt::qconv_pointwise_dsp_scratch_bytes(p));
    for (index_t i = 0; i < n; ++i) y[i] = -1;
    rt::qconv_pointwise(p, x, c.zx, packed, row_sums, [](index_t, index_t i, std::int32_t acc) { y[i] = acc; }, block);
    failed += check("qconv_pointwise in scratch", c, n) + guard_intact("qconv_pointwise in scratch");
    static std::int8_t bytes[8192];
    rt::qconv_pointwise_s8_pack_weights(p, w, bytes);
    for (index_t i = 0; i < n; ++i) y[i] = -1;
    rt::qconv_pointwise_s8(p, x, c.zx, bytes, row_sums, [](index_t, index_t i, std::int32_t acc) { y[i] = acc; });
    failed += check("qconv_pointwise_s8", c, n);
  }
  return failed;
}

// store_row of requantized 8-bit outputs (Helium's vector form on the M55) against the
// definition: saturate(round_half_even(float(acc + bias) * multiplier) + zero_point), the
// rounding by nearbyintf in the default rounding mode.
template <class Q>
int requantize_case(index_t n, float multiplier, std::int32_t zero_point, std::int32_t bias) {
  std::int32_t acc[67];
  Q out[68];
  const std::int32_t biases[1] = {bias};
  const rt::Requant r = rt::make_requant(multiplier);
  // Mostly within the output's range (ties included: multiplier 0.5 and odd sums), some far out.
  const std::int32_t span = static_cast<std::int32_t>(400.0f / multiplier);
  for (index_t i = 0; i < n; ++i)
    acc[i] = i % 5 == 4 ? static_cast<std::int32_t>(next()) - (1 << 23)
                        : static_cast<std::int32_t>(next() % static_cast<std::uint32_t>(span)) - span / 2 + 3 - bias;
  acc[0] = 2147483647;  // wraps with the bias, as the accumulation does
  acc[1] = -2147483647 - 1;
  out[n] = 77;
  rt::store_row(rt::RequantizeOutput<Q, rt::Requant>{out, biases, &r, 0, zero_point}, 0, 0, acc, n, 3);
  for (index_t i = 0; i < n; ++i) {
    const std::int32_t biased = static_cast<std::int32_t>(static_cast<std::uint32_t>(acc[i]) + static_cast<std::uint32_t>(bias) - 3u);
    const float v = std::nearbyintf(static_cast<float>(biased) * r.multiplier);
    const float lo = std::numeric_limits<Q>::lowest(), hi = std::numeric_limits<Q>::max();
    const float q = v + static_cast<float>(zero_point);
    const std::int32_t want = static_cast<std::int32_t>(q < lo ? lo : (q > hi ? hi : q));
    if (out[i] != want) {
      sh::print("store_row: at ");
      print_number(i);
      sh::print(": ");
      print_number(out[i]);
      sh::print(" expected ");
      print_number(want);
      sh::print("\n");
      return 1;
    }
  }
  if (out[n] != 77) {
    sh::print("store_row wrote past the row\n");
    return 1;
  }
  // store_row_started (the M4's form without the bias's additions): the same sums begun at
  // row_start, the same bytes as the definition (checked above).
  Q again[68];
  const rt::RequantizeOutput<Q, rt::Requant> started_again{again, biases, &r, 0, zero_point};
  const std::uint32_t start = static_cast<std::uint32_t>(rt::row_start(started_again, 0, 3));
  for (index_t i = 0; i < n; ++i) acc[i] = static_cast<std::int32_t>(static_cast<std::uint32_t>(acc[i]) + start);
  again[n] = 77;
  rt::store_row_started(started_again, 0, 0, acc, n);
  for (index_t i = 0; i <= n; ++i)
    if (again[i] != out[i]) {
      sh::print("store_row_started: at ");
      print_number(i);
      sh::print("\n");
      return 1;
    }
  // With an output table (fuse-output-table, the M4's LDRB per output): table[the definition's
  // byte], from both entries (the sums above are started ones; undone for store_row).
  Q table[256];
  for (Q& t : table) t = static_cast<Q>(next());
  const rt::RequantizeLookupOutput<Q, rt::Requant> looked{{again, biases, &r, 0, zero_point}, table};
  for (int started = 0; started < 2; ++started) {
    for (index_t i = 0; i <= n; ++i) again[i] = 77;
    if (started) {
      rt::store_row_started(looked, 0, 0, acc, n);
    } else {
      for (index_t i = 0; i < n; ++i) acc[i] = static_cast<std::int32_t>(static_cast<std::uint32_t>(acc[i]) - start);
      rt::store_row(looked, 0, 0, acc, n, 3);
      for (index_t i = 0; i < n; ++i) acc[i] = static_cast<std::int32_t>(static_cast<std::uint32_t>(acc[i]) + start);
    }
    for (index_t i = 0; i <= n; ++i) {
      const Q want = i < n ? table[static_cast<std::int32_t>(out[i]) - std::numeric_limits<Q>::lowest()] : Q(77);
      if (again[i] != want) {
        sh::print(started ? "store_row_started with a table: at " : "store_row with a table: at ");
        print_number(i);
        sh::print("\n");
        return 1;
      }
    }
  }
  return 0;
}

// QuantizeLinear with one scale (the M4's eight values per turn, with and without a zero point)
// against the definition: saturate(round_half_even(x / scale) + zero_point), the rounding by
// nearbyintf in the default rounding mode, NaN as 0. Ties, values past the range and past 2^31,
// infinities and NaN.
template <class Q>
int quantize_case(index_t n, float scale, std::int32_t zero_point) {
  static float xs[75];
  static Q out[76];
  const Q zp[1] = {static_cast<Q>(zero_point)};
  for (index_t i = 0; i < n; ++i) {
    const std::int32_t v = static_cast<std::int32_t>(next() % 700u) - 350;
    xs[i] = i % 3 == 0 ? (static_cast<float>(v) + 0.5f) * scale : static_cast<float>(v) * 0.37f * scale;
  }
  const float specials[] = {3.0e9f * scale, -3.0e9f * scale, INFINITY, -INFINITY, NAN, 2.5f * scale, -2.5f * scale};
  for (index_t i = 0; i < 7 && i * 5 + 2 < n; ++i) xs[i * 5 + 2] = specials[i];
  for (Q& o : out) o = 77;
  const rt::QuantLayout all = {1, 1, n, 1, 0, 0, 0};
  rt::quantize_linear(all, xs, &scale, zp, out);
  for (index_t i = 0; i <= n; ++i) {
    std::int32_t want = 77;
    if (i < n) {
      const float r = xs[i] / scale;
      const float v = (r == r ? std::nearbyintf(r) : 0.0f) + static_cast<float>(zero_point);
      const float lo = std::numeric_limits<Q>::lowest(), hi = std::numeric_limits<Q>::max();
      want = static_cast<std::int32_t>(v < lo ? lo : (v > hi ? hi : v));
    }
    if (out[i] != want) {
      sh::print("quantize_linear: at ");
      print_number(i);
      sh::print(": ");
      print_number(out[i]);
      sh::print(" expected ");
      print_number(want);
      sh::print("\n");
      return 1;
    }
  }
  return 0;
}

// depthwise_3x3 ("same" 3x3, stride 1) against the direct definition, with per-channel weight
// zero points: sum over taps inside the input of (x - zx) * (w - zw).
template <class X>
int depthwise_case(index_t channels, index_t h, index_t wd, X zx) {
  static X xd[6 * 64 * 9];
  static std::int8_t wd8[6 * 9], zw[6];
  for (index_t i = 0; i < channels * h * wd; ++i) xd[i] = static_cast<X>(next());
  for (index_t i = 0; i < channels * 9; ++i) wd8[i] = static_cast<std::int8_t>(next());
  for (index_t c = 0; c < channels; ++c) zw[c] = static_cast<std::int8_t>(static_cast<int>(next() % 7) - 3);
  xd[0] = std::numeric_limits<X>::max();
  wd8[0] = -128;
  const rt::ConvParams p = {1, channels, channels, channels, 1, h, wd, 1, h, wd, 1, 3, 3, 1, 1, 1, 1, 1, 1, 0, 1, 1};
  for (index_t c = 0; c < channels; ++c)
    for (index_t oh = 0; oh < h; ++oh)
      for (index_t ow = 0; ow < wd; ++ow) {
        std::int32_t sum = 0;
        for (index_t kh = 0; kh < 3; ++kh)
          for (index_t kw = 0; kw < 3; ++kw) {
            const index_t ih = oh + kh - 1, iw = ow + kw - 1;
            if (ih < 0 || ih >= h || iw < 0 || iw >= wd) continue;
            sum += (static_cast<std::int32_t>(xd[(c * h + ih) * wd + iw]) - zx) * (wd8[c * 9 + kh * 3 + kw] - zw[c]);
          }
        expected[(c * h + oh) * wd + ow] = sum;
      }
  const index_t n = channels * h * wd;
  for (index_t i = 0; i < n; ++i) y[i] = -1;
  const X zx_array[1] = {zx};
  rt::depthwise_3x3(p, rt::QuantOperand<X>{xd, zx_array, 0}, rt::QuantOperand<std::int8_t>{wd8, zw, 1},
                    [](index_t, index_t i, std::int32_t acc) { y[i] = acc; });
  const Case c = {channels, channels, h, wd, 3, 1, 1, 0, 0};
  int failed = check("depthwise_3x3", c, n);
  // The M4's bands in the plan's scratch (depthwise_3x3_dsp_scratch_bytes, nothing written past it).
  std::uint8_t* block = guarded_scratch(rt::depthwise_3x3_dsp_scratch_bytes(p));
  for (index_t i = 0; i < n; ++i) y[i] = -1;
  rt::depthwise_3x3(p, rt::QuantOperand<X>{xd, zx_array, 0}, rt::QuantOperand<std::int8_t>{wd8, zw, 1},
                    [](index_t, index_t i, std::int32_t acc) { y[i] = acc; }, block);
  failed += check("depthwise_3x3 in scratch", c, n) + guard_intact("depthwise_3x3 in scratch");
  return failed;
}

// lookup over n values: each output the table's entry at the value less the type's lowest.
template <class Q>
int lookup_case(index_t n) {
  Q table[256], values[70], out[71];
  for (int i = 0; i < 256; ++i) table[i] = static_cast<Q>(next());
  for (index_t i = 0; i < n; ++i) values[i] = static_cast<Q>(next());
  values[0] = std::numeric_limits<Q>::lowest();
  if (n > 1) values[1] = std::numeric_limits<Q>::max();
  out[n] = 42;
  rt::lookup(values, table, out, n);
  for (index_t i = 0; i < n; ++i)
    if (out[i] != table[static_cast<int>(values[i]) - std::numeric_limits<Q>::lowest()]) {
      sh::print("lookup: at ");
      print_number(i);
      sh::print("\n");
      return 1;
    }
  return out[n] == 42 ? 0 : 1;
}

// conv_integer of a depthwise convolution (Helium's band kernel for 3x3 on the M55, its row
// kernel otherwise): any kernel, stride and padding (end_pad: the bottom and right padding when
// it differs from the top and left), against the direct definition with per-channel weight zero
// points.
int depthwise_strided_case(index_t channels, index_t h, index_t wd, index_t kh_, index_t kw_, index_t stride,
                           index_t pad_h, index_t pad_w, std::uint8_t zx, index_t end_pad = -1) {
  static std::uint8_t xd[4 * 40 * 40];
  static std::int8_t wq[4 * 25], zw[4];
  static std::int32_t plane[40 * 40];
  for (index_t i = 0; i < channels * h * wd; ++i) xd[i] = static_cast<std::uint8_t>(next());
  for (index_t i = 0; i < channels * kh_ * kw_; ++i) wq[i] = static_cast<std::int8_t>(next());
  for (index_t c = 0; c < channels; ++c) zw[c] = static_cast<std::int8_t>(static_cast<int>(next() % 5) - 2);
  const index_t oh_n = (h + pad_h + (end_pad < 0 ? pad_h : end_pad) - kh_) / stride + 1;
  const index_t ow_n = (wd + pad_w + (end_pad < 0 ? pad_w : end_pad) - kw_) / stride + 1;
  const rt::ConvParams p = {1, channels, channels, channels, 1, h, wd, 1, oh_n, ow_n, 1, kh_, kw_,
                            1, stride, stride, 1, 1, 1, 0, pad_h, pad_w};
  for (index_t c = 0; c < channels; ++c)
    for (index_t oh = 0; oh < oh_n; ++oh)
      for (index_t ow = 0; ow < ow_n; ++ow) {
        std::int32_t sum = 0;
        for (index_t kh = 0; kh < kh_; ++kh)
          for (index_t kw = 0; kw < kw_; ++kw) {
            const index_t ih = oh * stride + kh - pad_h, iw = ow * stride + kw - pad_w;
            if (ih < 0 || ih >= h || iw < 0 || iw >= wd) continue;
            sum += (static_cast<std::int32_t>(xd[(c * h + ih) * wd + iw]) - zx) * (wq[(c * kh_ + kh) * kw_ + kw] - zw[c]);
          }
        expected[(c * oh_n + oh) * ow_n + ow] = sum;
      }
  const index_t n = channels * oh_n * ow_n;
  for (index_t i = 0; i < n; ++i) y[i] = -1;
  const std::uint8_t zx_array[1] = {zx};
  rt::conv_integer(p, rt::QuantOperand<std::uint8_t>{xd, zx_array, 0}, rt::QuantOperand<std::int8_t>{wq, zw, 1},
                   [](index_t, index_t i, std::int32_t acc) { y[i] = acc; }, plane);
  const Case c = {channels, channels, h, wd, kh_, stride, pad_h, 0, zx};
  return check("depthwise conv_integer", c, n);
}

}  // namespace

int main() {
  // in channels, out channels, height, width, kernel, stride, pad, block columns, x zero point
  const Case cases[] = {
      {3, 8, 9, 9, 3, 2, 1, 16, 0},     // k 27: one predicated vector
      {2, 4, 9, 31, 3, 2, 1, 40, 5},    // stride 2, rows of 16 split by the blocks (M4: 4 bytes from 2 words)
      {16, 16, 10, 10, 3, 1, 1, 16, 7},  // k 144: nine whole vectors, narrow blocks
      {5, 7, 11, 6, 3, 1, 1, 48, 128},   // odd rows: a one-row tile
      {1, 6, 13, 7, 4, 1, 0, 32, 3},     // k 16: one whole vector
      {24, 40, 6, 6, 3, 1, 1, 64, 255},  // k 216: a predicated last vector of 8
      {2, 5, 5, 5, 1, 1, 0, 16, 9},      // k 2 (1x1): mostly predicated
      {17, 9, 7, 5, 1, 1, 0, 32, 100},   // 1x1 with odd channels and positions
      {64, 12, 5, 5, 1, 1, 0, 16, 128},  // 1x1 with 64 channels
      {200, 5, 3, 7, 1, 1, 0, 16, 77},   // 1x1, 100 channel pairs: blocks of 10 positions (M4)
      {1027, 3, 3, 3, 1, 1, 0, 16, 1},   // 1x1 past 512 channel pairs: passes of channels (M4)
      {8, 16, 11, 11, 1, 1, 0, 16, 7},   // 1x1, half a vector of channels, blocks of 32 positions (M55)
      {33, 6, 9, 7, 1, 1, 0, 16, 250},   // 1x1, a vector of one channel, an odd block (M55)
      {1, 1, 94, 100, 1, 1, 0, 16, 5},   // 1x1 onto a plane past 16-bit gather offsets (M55)
      {130, 3, 4, 5, 3, 1, 1, 32, 5},    // k 1170: 586 pairs, passes of pairs (M4 qconv_gemm_pairs)
      {29, 7, 9, 8, 3, 1, 1, 64, 200},   // k 261: 132 pairs, blocks of 6 columns (M4)
      {1, 64, 49, 10, 4, 2, 1, 256, 17}, // kws' first Conv's reduction (k 16 here, one channel)
      {3, 4, 40, 40, 3, 2, 1, 512, 9},   // stride 2, two chunks of 256 columns: two bands (M55)
      {2, 3, 10, 300, 5, 2, 0, 256, 3},  // rows too wide for the band: the portable rows (M55)
      {10, 6, 5, 7, 1, 1, 0, 16, 3},     // 1x1, 5 pairs: the M4's turn of 8 entered past 3
      {6, 5, 4, 9, 1, 1, 0, 16, 200},    // 3 pairs: past 5
      {20, 3, 6, 5, 1, 1, 0, 16, 11},    // 10 pairs: a turn past 6, then a whole one
  };
  int failed = 0;
  for (const Case& c : cases) failed += run_case(c);
  failed += depthwise_case<std::uint8_t>(3, 5, 5, 7);  // kws' width
  failed += depthwise_case<std::uint8_t>(2, 3, 1, 255);
  failed += depthwise_case<std::uint8_t>(4, 4, 8, 0);
  failed += depthwise_case<std::uint8_t>(2, 7, 13, 128);
  failed += depthwise_case<std::uint8_t>(1, 2, 64, 3);  // the widest row
  failed += depthwise_case<std::uint8_t>(2, 37, 29, 9);  // bands of 34 and 3 rows (M4)
  failed += depthwise_case<std::uint8_t>(1, 20, 64, 200);  // bands of 16 and 4 rows (M4)
  failed += depthwise_case<std::uint8_t>(2, 29, 5, 7);  // kws' width, bands of 27 and 2 rows (M55)
  failed += depthwise_case<std::uint8_t>(2, 40, 4, 250);  // one padded-row word (M4)
  failed += depthwise_case<std::uint8_t>(3, 7, 3, 1);     // rows under a word, byte by byte (M4)
  failed += depthwise_case<std::int8_t>(1, 9, 2, -128);
  failed += depthwise_case<std::uint8_t>(1, 50, 48, 77);   // VWW's width, bands of 17 rows (M4)
  failed += depthwise_case<std::uint8_t>(2, 41, 5, 7);  // bands of 38 and 3 rows (M55)
  failed += depthwise_case<std::uint8_t>(1, 197, 1, 90);  // one column, bands of 192 and 5 rows (M55)
  failed += depthwise_case<std::uint8_t>(2, 9, 3, 250);
  failed += depthwise_case<std::uint8_t>(1, 15, 17, 1);  // rows past one vector of bytes (M55)
  failed += depthwise_case<std::int8_t>(2, 13, 16, -128);  // bands of 12 and 1 rows (M55)
  failed += depthwise_case<std::int8_t>(3, 6, 6, -4);
  failed += depthwise_case<std::int8_t>(2, 5, 11, 127);
  failed += depthwise_strided_case(3, 9, 9, 3, 3, 2, 1, 1, 7);     // MobileNet's stride 2
  failed += depthwise_strided_case(2, 8, 8, 3, 3, 2, 0, 0, 128);   // no padding
  failed += depthwise_strided_case(2, 8, 8, 3, 3, 2, 0, 0, 128, 1);  // VWW's pads at the end only
  failed += depthwise_strided_case(3, 17, 23, 3, 3, 2, 1, 1, 7);   // odd sizes, bands across rows (M55)
  failed += depthwise_strided_case(2, 11, 10, 3, 3, 3, 1, 2, 9);   // stride 3, padding 2 (M55)
  failed += depthwise_strided_case(1, 3, 40, 3, 3, 1, 0, 0, 5);    // stride 1 without padding
  failed += depthwise_strided_case(1, 40, 2, 3, 3, 2, 1, 1, 250, 2);  // one output column, end padding 2
  failed += depthwise_strided_case(2, 40, 39, 3, 3, 2, 1, 1, 255);  // rows past 16 outputs
  failed += depthwise_strided_case(4, 7, 10, 5, 5, 1, 2, 2, 3);    // 5x5, stride 1
  failed += depthwise_strided_case(1, 6, 5, 1, 4, 3, 0, 1, 0);     // 1x4, stride 3
  failed += depthwise_strided_case(2, 12, 13, 5, 3, 2, 2, 1, 9);   // 5x3, stride 2 (M4: the row taps)
  failed += depthwise_strided_case(1, 40, 40, 3, 3, 2, 1, 1, 3);   // bands of 6 rows of 20 (M4)
  failed += depthwise_strided_case(3, 2, 7, 3, 3, 2, 1, 1, 200);   // one output row, odd width
  const index_t counts[] = {1, 15, 16, 17, 70};
  for (index_t n : counts) failed += lookup_case<std::uint8_t>(n) + lookup_case<std::int8_t>(n);
  const index_t lengths[] = {1, 2, 3, 4, 6, 7, 16, 67};  // (M4: quads, a pair, a last one)
  for (index_t n : lengths) {
    failed += requantize_case<std::uint8_t>(n, 0.0123f, 17, 1000);
    failed += requantize_case<std::uint8_t>(n, 3.0e-5f, 255, -70000);
    failed += requantize_case<std::int8_t>(n, 0.00071f, -5, 12345);
    failed += requantize_case<std::int8_t>(n, 0.5f, 0, 0);
    // Ties with odd zero points (the M4's rounding into 1.5 * 2^23 must not see the zero point),
    // products past -1.5 * 2^23 (its sum then negative) and past 2^22.
    failed += requantize_case<std::uint8_t>(n, 0.5f, 3, 1);
    failed += requantize_case<std::int8_t>(n, 0.5f, -7, 0);
    failed += requantize_case<std::uint8_t>(n, 3.0f, 129, -5);
    failed += requantize_case<std::int8_t>(n, 3.0f, 1, 7);
  }
  const index_t values[] = {1, 7, 8, 9, 16, 23, 75};  // (M4: octets and a tail)
  for (index_t n : values) {
    failed += quantize_case<std::uint8_t>(n, 0.0078125f, 0) + quantize_case<std::uint8_t>(n, 0.013f, 131);
    failed += quantize_case<std::int8_t>(n, 0.5f, 0) + quantize_case<std::int8_t>(n, 0.021f, -9);
  }
  sh::print(failed ? "FAIL\n" : "PASS quant kernels\n");
  return failed;
}
