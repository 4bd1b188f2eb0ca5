// Part of a parent header that includes it: not included on its own (tests/headers_portable_native.sh).
// The im2col rows of qconv_pack_block for convolutions other than 1x1 on cores with the
// M-profile vector extension (Helium, MVE: Cortex-M55, M85). Included by quant.h where
// __ARM_FEATURE_MVE is defined (ONNXC_QUANT_MVE); tests/firmware/kernels runs qconv_gemm (whose
// blocks these rows fill) against a direct convolution on the core.
//
// The portable rows go one output-row segment at a time, with the padding worked out per
// segment: kws' first Conv (stride 2, 25 x 5 outputs) took about 100 instructions per 5-byte
// segment. Here, for a block of output positions, the input rows under it of one channel are
// copied once into a band on the stack with their padding (x's zero point; rows of
// wp = (out_w - 1) * stride_w + (k_w - 1) * dilation_w + 1 bytes from column -pad_w), and a table
// of 16-bit offsets gives each position's top-left tap in the band (made once per block). A
// tap's row is then a byte gather per eight columns (VLDRB.U16 at the offsets from the tap's
// place in the band) and a narrowing store: three instructions per eight bytes, the band
// refilled when the tap's channel changes (once per channel and block). Stride-1 convolutions
// take it too: the plan gives resnet8's 3x3 Convs blocks of 16 to 32 columns, where the portable
// rows (qconv_im2col_row_shifted) cost about 140 instructions each, mostly per call. 1x1
// convolutions read as a matrix (one copy per row) and blocks whose band does not fit
// kIm2colBandBytes keep the portable rows.
#ifndef ONNXC_QUANT_IM2COL_MVE_H
#define ONNXC_QUANT_IM2COL_MVE_H

namespace onnxc {
namespace rt {
namespace detail {

constexpr index_t kIm2colBandBytes = 1536;
constexpr index_t kIm2colBandColumns = 256;  // the block's chunk (kQConvPackChunk)

class Im2colBandMve {
 public:
  // For the `cols` output positions from `first` on (one image): whether the band takes them.
  bool init(const ConvParams& p, index_t first, index_t cols) {
    channel_ = -1;
    if (p.in_d != 1 || p.k_d != 1 || p.out_d != 1 || p.group != 1 || cols > kIm2colBandColumns || cols <= 0)
      return false;
    const index_t out_w = p.out_w, oh_first = first / out_w, oh_last = (first + cols - 1) / out_w;
    wp_ = (out_w - 1) * p.stride_w + (p.k_w - 1) * p.dilation_w + 1;
    rows_ = (oh_last - oh_first) * p.stride_h + (p.k_h - 1) * p.dilation_h + 1;
    if (rows_ * wp_ > kIm2colBandBytes) return false;
    ih_first_ = oh_first * p.stride_h - p.pad_h;
    cols_ = cols;
    index_t oh = 0, ow = first - oh_first * out_w;  // (oh from oh_first)
    for (index_t j = 0; j < cols; ++j) {
      at_[j] = static_cast<std::uint16_t>(oh * p.stride_h * wp_ + ow * p.stride_w);
      if (++ow == out_w) ow = 0, ++oh;
    }
    for (index_t j = cols; j < cols + 8; ++j) at_[j] = 0;
    return true;
  }

  // Row `tap` of the block into out (whole vectors of eight: up to seven bytes past cols).
  void row(const ConvParams& p, const std::uint8_t* x, std::uint8_t zx, ConvTap tap, std::uint8_t* out) {
    if (tap.ic != channel_) fill(p, x, zx, tap.ic);
    const std::uint8_t* base = band_ + tap.kh * p.dilation_h * wp_ + tap.kw * p.dilation_w;
    const std::uint16_t* at = at_;
    // (the count in a local: the byte stores may alias the members, so GCC would reload them)
    for (index_t n = (cols_ + 7) / 8; n > 0; --n, at += 8, out += 8)
      vstrbq_u16(out, vldrbq_gather_offset_u16(base, vldrhq_u16(at)));
  }

 private:
  // The band's rows of channel c: x's zero point where the taps fall outside the plane (written
  // with the first channel only: the same places for every channel).
  void fill(const ConvParams& p, const std::uint8_t* x, std::uint8_t zx, index_t c) {
    if (channel_ < 0) fill_bytes(band_, zx, rows_ * wp_);
    channel_ = c;
    const index_t in_h = p.in_h, in_w = p.in_w, pad_w = p.pad_w;
    const index_t copied = pad_w >= wp_ ? 0 : (in_w < wp_ - pad_w ? in_w : wp_ - pad_w);
    if (copied <= 0) return;
    const std::uint8_t* xc = x + c * in_h * in_w;
    const index_t first = ih_first_ < 0 ? -ih_first_ : 0;
    const index_t last = in_h - ih_first_ < rows_ ? in_h - ih_first_ : rows_;
    for (index_t r = first; r < last; ++r) copy_bytes(band_ + r * wp_ + pad_w, xc + (ih_first_ + r) * in_w, copied);
  }

  std::uint8_t band_[kIm2colBandBytes];
  std::uint16_t at_[kIm2colBandColumns + 8];
  index_t wp_ = 0, rows_ = 0, ih_first_ = 0, cols_ = 0, channel_ = -1;
};

}  // namespace detail
}  // namespace rt
}  // namespace onnxc

#endif  // ONNXC_QUANT_IM2COL_MVE_H
