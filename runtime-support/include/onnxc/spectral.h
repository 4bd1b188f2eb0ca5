// Signal processing: DFT, STFT, the generalized cosine windows (Hann, Hamming, Blackman) and
// the mel filter bank matrix.
//
// Transforms are direct O(n^2) sums, each term's angle reduced modulo n so that long
// transforms keep their precision; twiddles and sums are computed in double.
#ifndef ONNXC_SPECTRAL_H
#define ONNXC_SPECTRAL_H

#include <cmath>
#include <cstdint>

#include "onnxc/base.h"

namespace onnxc {
namespace rt {

constexpr double kTwoPi = 6.283185307179586476925286766559;

// One transform of `dft_length` points from `count` input points (count <= dft_length: the rest
// are zeros). Input point j is x[j * x_stride] (+1 for its imaginary part when complex),
// multiplied by window[j] when a window is given; bin k is written to y[k * y_stride] (real)
// and y[k * y_stride + 1] (imaginary), for k < bins. The inverse transform divides by dft_length.
template <class T>
inline void dft_line(const T* x, index_t x_stride, index_t count, bool complex_input, const T* window,
                     index_t dft_length, index_t bins, bool inverse, T* y, index_t y_stride) {
  using C = compute_t<T>;
  const double sign = inverse ? 1.0 : -1.0;
  for (index_t k = 0; k < bins; ++k) {
    double re = 0, im = 0;
    for (index_t j = 0; j < count; ++j) {
      const double w = window ? static_cast<double>(load(window[j])) : 1.0;
      const double xr = static_cast<double>(load(x[j * x_stride])) * w;
      const double xi = complex_input ? static_cast<double>(load(x[j * x_stride + 1])) * w : 0.0;
      const double angle = sign * kTwoPi * static_cast<double>((j * k) % dft_length) / static_cast<double>(dft_length);
      const double c = std::cos(angle), s = std::sin(angle);
      re += xr * c - xi * s;
      im += xr * s + xi * c;
    }
    if (inverse) {
      re /= static_cast<double>(dft_length);
      im /= static_cast<double>(dft_length);
    }
    y[k * y_stride] = store<T>(static_cast<C>(re));
    y[k * y_stride + 1] = store<T>(static_cast<C>(im));
  }
}

// The input is [outer, in_length, inner, components] (components 1: real, 2: complex), the
// output [outer, bins, inner, 2]; every line along the middle axis is transformed.
struct DftParams {
  index_t outer;
  index_t in_length;
  index_t inner;
  bool complex_input;
  index_t dft_length;  // the input is cropped or zero-padded to this many points
  index_t bins;        // dft_length, or dft_length / 2 + 1 for a one-sided transform
  bool inverse;
};

template <class T>
inline void dft(const DftParams& p, const T* x, T* y) {
  const index_t components = p.complex_input ? 2 : 1;
  const index_t count = p.in_length < p.dft_length ? p.in_length : p.dft_length;
  for (index_t o = 0; o < p.outer; ++o)
    for (index_t i = 0; i < p.inner; ++i)
      dft_line(x + (o * p.in_length * p.inner + i) * components, p.inner * components, count, p.complex_input,
               static_cast<const T*>(nullptr), p.dft_length, p.bins, p.inverse, y + (o * p.bins * p.inner + i) * 2,
               p.inner * 2);
}

// The signal is [batch, length, components]; the output [batch, frames, bins, 2], frame f
// being the transform of the frame_length points from f * frame_step on, times the window.
struct StftParams {
  index_t batch;
  index_t length;
  bool complex_input;
  index_t frame_step;
  index_t frame_length;
  index_t frames;
  index_t bins;
};

template <class T>
inline void stft(const StftParams& p, const T* signal, const T* window, T* y) {
  const index_t components = p.complex_input ? 2 : 1;
  for (index_t b = 0; b < p.batch; ++b)
    for (index_t f = 0; f < p.frames; ++f)
      dft_line(signal + (b * p.length + f * p.frame_step) * components, components, p.frame_length, p.complex_input,
               window, p.frame_length, p.bins, false, y + (b * p.frames + f) * p.bins * 2, 2);
}

// w[n] = a0 - a1 cos(2 pi n / N) + a2 cos(4 pi n / N) for n < size, where N is size for a
// periodic window and size - 1 for a symmetric one (a symmetric window of size 1 is w[0]).
template <class T>
inline void cosine_window(T* y, index_t size, bool periodic, double a0, double a1, double a2) {
  const index_t period = periodic ? size : size - 1;
  for (index_t n = 0; n < size; ++n) {
    const double angle = period > 0 ? kTwoPi * static_cast<double>(n) / static_cast<double>(period) : 0.0;
    const double w = a0 - a1 * std::cos(angle) + a2 * std::cos(2 * angle);
    y[n] = store<T>(static_cast<compute_t<T>>(w));
  }
}

inline double hertz_to_mel(double hz) { return 2595.0 * std::log10(1.0 + hz / 700.0); }
inline double mel_to_hertz(double mel) { return 700.0 * (std::pow(10.0, mel / 2595.0) - 1.0); }

// The spectrogram bin of the i-th of mel_bins + 2 band edges, spaced evenly on the mel scale
// by (upper - lower) / (mel_bins + 2) from lower (as ONNX's reference does).
inline index_t mel_edge_bin(index_t i, index_t mel_bins, index_t dft_length, double sample_rate, double lower_hz,
                            double upper_hz) {
  const double low = hertz_to_mel(lower_hz), high = hertz_to_mel(upper_hz);
  const double mel = low + static_cast<double>(i) * (high - low) / static_cast<double>(mel_bins + 2);
  return static_cast<index_t>(std::floor(static_cast<double>(dft_length + 1) * mel_to_hertz(mel) / sample_rate));
}

// y is [dft_length / 2 + 1, mel_bins]: column m is a triangle rising from 0 at edge m to 1 at
// edge m + 1 and falling to 0 at edge m + 2 (a band whose rising edge is empty is 1 at its
// centre). Points outside the spectrogram's bins are dropped.
template <class T>
inline void mel_weight_matrix(T* y, index_t mel_bins, index_t dft_length, double sample_rate, double lower_hz,
                              double upper_hz) {
  using C = compute_t<T>;
  const index_t spectrogram_bins = dft_length / 2 + 1;
  for (index_t i = 0; i < spectrogram_bins * mel_bins; ++i) y[i] = store<T>(C(0));
  auto put = [&](index_t bin, index_t m, double v) {
    if (bin >= 0 && bin < spectrogram_bins) y[bin * mel_bins + m] = store<T>(static_cast<C>(v));
  };
  for (index_t m = 0; m < mel_bins; ++m) {
    const index_t left = mel_edge_bin(m, mel_bins, dft_length, sample_rate, lower_hz, upper_hz);
    const index_t centre = mel_edge_bin(m + 1, mel_bins, dft_length, sample_rate, lower_hz, upper_hz);
    const index_t right = mel_edge_bin(m + 2, mel_bins, dft_length, sample_rate, lower_hz, upper_hz);
    if (centre == left) put(centre, m, 1.0);
    for (index_t j = left; j <= centre && centre > left; ++j)
      put(j, m, static_cast<double>(j - left) / static_cast<double>(centre - left));
    for (index_t j = centre; j < right; ++j)
      put(j, m, static_cast<double>(right - j) / static_cast<double>(right - centre));
  }
}

}  // namespace rt
}  // namespace onnxc

#endif  // ONNXC_SPECTRAL_H
