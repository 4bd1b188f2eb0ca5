// rt::average_pool's float path by rows (column sums, then the windows' means; the vector
// windows of pool_average_simd.h where this file is compiled with ONNXC_SIMD) against a
// float64 mean over each window's taps written here: strides 1, 2 and 3, padding, dilation,
// count_include_pad, ceil_mode's windows past the end, 1-d pools and rows with tails;
// rt::max_pool's float rows (padded rows of column maxima, strided vectors, AVX-512's stride-2
// permutes, the 3 x 3 stride-2 rows of AVX-512 and AVX2) against each window's max taken here;
// and rt::global_max_pool (vector maxima on SIMD targets) against a scalar max that skips NaNs.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

#include "onnxc/pool.h"

namespace rt = onnxc::rt;
using rt::index_t;

namespace {

// The window mean of ONNX AveragePool over one plane, in double.
double reference_mean(const rt::PoolParams& p, const float* x, index_t oh, index_t ow) {
  double sum = 0;
  index_t inside = 0, padded = 0;
  for (index_t kh = 0; kh < p.k_h; ++kh)
    for (index_t kw = 0; kw < p.k_w; ++kw) {
      const index_t ih = oh * p.stride_h - p.pad_h + kh * p.dilation_h;
      const index_t iw = ow * p.stride_w - p.pad_w + kw * p.dilation_w;
      if (ih >= -p.pad_h && ih < p.in_h + p.pad_h_end && iw >= -p.pad_w && iw < p.in_w + p.pad_w_end) ++padded;
      if (ih < 0 || ih >= p.in_h || iw < 0 || iw >= p.in_w) continue;
      sum += x[ih * p.in_w + iw];
      ++inside;
    }
  const index_t div = p.count_include_pad ? padded : inside;
  return div > 0 ? sum / static_cast<double>(div) : 0.0;
}

// The window max of ONNX MaxPool over one plane (taps inside the input only).
float reference_max(const rt::PoolParams& p, const float* x, index_t oh, index_t ow) {
  float best = -std::numeric_limits<float>::infinity();
  for (index_t kh = 0; kh < p.k_h; ++kh)
    for (index_t kw = 0; kw < p.k_w; ++kw) {
      const index_t ih = oh * p.stride_h - p.pad_h + kh * p.dilation_h;
      const index_t iw = ow * p.stride_w - p.pad_w + kw * p.dilation_w;
      if (ih >= 0 && ih < p.in_h && iw >= 0 && iw < p.in_w && x[ih * p.in_w + iw] > best) best = x[ih * p.in_w + iw];
    }
  return best;
}

}  // namespace

TEST_CASE("float max_pool's row kernels give each window's max", "[pool]") {
  // {in_h, in_w, out_h, out_w, k, stride, pad, pad_end, dilation}: squeezenet's 3x3 stride 2
  // (with ceil_mode's window past the end), rows wide enough for several vectors, padding,
  // dilation, strides with no fixed-stride path; planes narrower than two vectors with stride 1
  // (whole planes at a time: padding, dilation, uneven padding, a single row), ceil_mode
  // (5 x 5 s5), and a row wider than the column buffer.
  const index_t cases[][9] = {{111, 111, 55, 55, 3, 2, 0, 0, 1}, {27, 27, 13, 13, 3, 2, 0, 0, 1},
                              {20, 70, 11, 36, 3, 2, 1, 1, 1}, {9, 40, 9, 40, 3, 1, 1, 1, 1},
                              {13, 50, 5, 23, 3, 2, 0, 0, 2},  {10, 41, 4, 14, 3, 3, 1, 1, 1},
                              {12, 12, 6, 7, 2, 2, 0, 1, 1},
                              // stride 2 with 1 to 16 taps per row (AVX-512 picks them by lane
                              // permutes), rows of one, two and three vectors of outputs plus a tail
                              {7, 40, 3, 20, 1, 2, 0, 0, 1},   {31, 77, 16, 39, 5, 2, 2, 2, 1},
                              {9, 80, 4, 40, 4, 2, 1, 1, 1},   {20, 64, 3, 25, 16, 2, 0, 0, 1},
                              {5, 99, 2, 47, 6, 2, 0, 1, 1},
                              {7, 7, 7, 7, 3, 1, 1, 1, 1},     {7, 7, 2, 2, 5, 5, 0, 0, 1},
                              {9, 30, 3, 8, 4, 4, 2, 2, 1},    {8, 20, 8, 20, 3, 1, 2, 2, 2},
                              {5, 5, 5, 5, 3, 1, 2, 2, 2},     {3, 600, 3, 600, 3, 1, 1, 1, 1},
                              {6, 13, 6, 13, 4, 1, 1, 2, 1},   {7, 31, 1, 25, 7, 1, 0, 0, 1},
                              // 3 x 3 stride 2 (k3s2's rows) with tails of every length in 8 and 16
                              // lanes, padding, ceil_mode's window past the end, odd row counts
                              {15, 33, 7, 16, 3, 2, 0, 0, 1},  {16, 18, 8, 9, 3, 2, 1, 1, 1},
                              {9, 9, 5, 5, 3, 2, 1, 1, 1},     {8, 17, 4, 8, 3, 2, 0, 1, 1},
                              {11, 47, 6, 24, 3, 2, 1, 1, 1},  {5, 3, 2, 1, 3, 2, 0, 0, 1},
                              {6, 62, 3, 31, 3, 2, 0, 1, 1},   {13, 29, 7, 15, 3, 2, 1, 1, 1}};
  for (const auto& c : cases) {
    const rt::PoolParams p{2, 1, c[0], c[1], 1, c[2], c[3], 1, c[4], c[4], 1, c[5], c[5], 1, c[8], c[8],
                           0, c[6], c[6], 0, c[7], c[7], false};
    // A ramp (many ties) and scattered values (a wrong tap or lane shows)
    std::vector<float> ramp(static_cast<std::size_t>(2 * c[0] * c[1])), scattered(ramp.size());
    for (std::size_t i = 0; i < ramp.size(); ++i) {
      ramp[i] = 0.5f * static_cast<float>(i % 97);
      scattered[i] = static_cast<float>((i * 2654435761u >> 8) % 1000) - 500.0f;
    }
    for (const auto* in : {&ramp, &scattered}) {
      std::vector<float> y(static_cast<std::size_t>(2 * c[2] * c[3]), -99.0f);
      rt::max_pool(p, in->data(), y.data(), static_cast<std::int64_t*>(nullptr), 0);
      for (index_t plane = 0; plane < 2; ++plane)
        for (index_t oh = 0; oh < c[2]; ++oh)
          for (index_t ow = 0; ow < c[3]; ++ow) {
            INFO("plane " << c[0] << "x" << c[1] << ", kernel " << c[4] << ", stride " << c[5] << ", pad " << c[6]
                          << "/" << c[7] << ", dilation " << c[8] << (in == &ramp ? ", ramp" : ", scattered")
                          << ", output " << oh << "," << ow);
            REQUIRE(y[static_cast<std::size_t>((plane * c[2] + oh) * c[3] + ow)] ==
                    reference_max(p, in->data() + plane * c[0] * c[1], oh, ow));
          }
    }
  }
}

TEST_CASE("float average_pool by rows gives each window's mean", "[pool]") {
  // {in_h, in_w, out_h, out_w, k_h, k_w, stride, pad, pad_end, dilation}
  const index_t cases[][10] = {
      {56, 56, 55, 55, 2, 2, 1, 0, 0, 1},     // stride 1, rows of several vectors and a tail
      {28, 28, 14, 14, 3, 3, 2, 1, 0, 1},     // stride 2, padding before
      {15, 15, 8, 8, 3, 3, 2, 1, 1, 1},       // padding both sides
      {14, 33, 5, 11, 3, 3, 3, 1, 1, 1},      // stride 3: the scalar windows
      {20, 40, 16, 32, 3, 5, 1, 2, 2, 2},     // dilation 2, wide kernel
      {7, 7, 1, 1, 7, 7, 1, 0, 0, 1},         // the whole plane with a window
      {6, 6, 3, 3, 3, 3, 2, 0, 1, 1},         // ceil_mode: the last window past the end
      {1, 100, 1, 50, 1, 4, 2, 1, 1, 1},      // 1-d
      {1, 2000, 1, 999, 1, 5, 2, 1, 1, 1},    // 1-d rows wider than the column buffer
      {1, 8000, 1, 7996, 1, 5, 1, 0, 0, 1},
      {9, 512, 4, 256, 3, 2, 2, 0, 0, 1},     // the widest rows taken
      {31, 77, 16, 39, 5, 5, 2, 2, 2, 1},
  };
  for (bool include_pad : {false, true})
    for (const auto& c : cases) {
      const rt::PoolParams p{3, 1, c[0], c[1], 1, c[2], c[3], 1, c[4], c[5], 1, c[6], c[6], 1, c[9], c[9],
                             0, c[7], c[7], 0, c[8], c[8], include_pad};
      std::vector<float> x(static_cast<std::size_t>(3 * c[0] * c[1]));
      for (std::size_t i = 0; i < x.size(); ++i) x[i] = static_cast<float>((i * 2654435761u >> 8) % 1000) / 250.0f - 2.0f;
      std::vector<float> y(static_cast<std::size_t>(3 * c[2] * c[3]), -99.0f);
      rt::average_pool(p, x.data(), y.data());
      for (index_t plane = 0; plane < 3; ++plane)
        for (index_t oh = 0; oh < c[2]; ++oh)
          for (index_t ow = 0; ow < c[3]; ++ow) {
            const double want = reference_mean(p, x.data() + plane * c[0] * c[1], oh, ow);
            INFO("plane " << c[0] << "x" << c[1] << ", kernel " << c[4] << "x" << c[5] << ", stride " << c[6]
                          << ", pad " << c[7] << "/" << c[8] << ", dilation " << c[9]
                          << (include_pad ? ", count_include_pad" : "") << ", output " << oh << "," << ow);
            REQUIRE(std::fabs(y[static_cast<std::size_t>((plane * c[2] + oh) * c[3] + ow)] - want) <= 2e-6 * (1 + std::fabs(want)));
          }
    }
}

TEST_CASE("float global_max_pool gives each plane's max, NaN only when the plane starts with one", "[pool]") {
  // Sizes around one and two vectors (16 lanes on AVX-512, 8 on AVX2), the max at the first
  // and the last element, NaNs inside the plane (skipped) and first (kept, as the scalar loop).
  const float nan = std::numeric_limits<float>::quiet_NaN();
  for (index_t size : {1, 7, 8, 9, 15, 16, 17, 31, 33, 100, 784}) {
    for (int variant = 0; variant < 4; ++variant) {
      std::vector<float> x(static_cast<std::size_t>(2 * size));
      for (std::size_t i = 0; i < x.size(); ++i) x[i] = static_cast<float>((i * 2654435761u >> 8) % 1000) - 700.0f;
      if (variant == 1) x[0] = 5000.0f;
      if (variant == 2) x[static_cast<std::size_t>(2 * size - 1)] = 5000.0f;
      if (variant == 3) x[static_cast<std::size_t>(size / 2)] = nan;
      if (variant == 3) x[static_cast<std::size_t>(size)] = nan;  // plane 1 starts with NaN
      std::vector<float> y(2, -1.0f);
      rt::global_max_pool(2, size, x.data(), y.data());
      for (index_t c = 0; c < 2; ++c) {
        INFO("size " << size << ", variant " << variant << ", plane " << c);
        const float* p = x.data() + c * size;
        if (std::isnan(p[0])) {
          REQUIRE(std::isnan(y[static_cast<std::size_t>(c)]));
          continue;
        }
        double best = -1e30;
        for (index_t i = 0; i < size; ++i)
          if (!std::isnan(p[i]) && p[i] > best) best = p[i];
        REQUIRE(y[static_cast<std::size_t>(c)] == static_cast<float>(best));
      }
    }
  }
}

TEST_CASE("float max_pool and average_pool read each plane before an output starting one output plane before the input overwrites it", "[pool]") {
  // Overlapped buffers (OpDef::overlap_delta, ops/pool.cpp): the kernels walk the planes in order
  // and read only plane c for output plane c, so the output may start one output plane before the
  // input in the same memory. Each row kernel of the two tests above, on 3 planes.
  const index_t cases[][9] = {{111, 111, 55, 55, 3, 2, 0, 0, 1}, {9, 40, 9, 40, 3, 1, 1, 1, 1},
                              {20, 70, 11, 36, 3, 2, 1, 1, 1},   {7, 7, 7, 7, 3, 1, 1, 1, 1},
                              {8, 20, 8, 20, 3, 1, 2, 2, 2},     {31, 77, 16, 39, 5, 2, 2, 2, 1},
                              {7, 7, 1, 1, 7, 1, 0, 0, 1},       {3, 600, 3, 600, 3, 1, 1, 1, 1}};
  for (const auto& c : cases) {
    const rt::PoolParams p{3, 1, c[0], c[1], 1, c[2], c[3], 1, c[4], c[4], 1, c[5], c[5], 1, c[8], c[8],
                           0, c[6], c[6], 0, c[7], c[7], false};
    const index_t in_plane = c[0] * c[1], out_plane = c[2] * c[3];
    std::vector<float> x(static_cast<std::size_t>(3 * in_plane));
    for (std::size_t i = 0; i < x.size(); ++i) x[i] = static_cast<float>((i * 2654435761u >> 8) % 1000) - 500.0f;
    for (int average = 0; average < 2; ++average) {
      std::vector<float> memory(static_cast<std::size_t>(out_plane + 3 * in_plane));
      std::copy(x.begin(), x.end(), memory.begin() + out_plane);
      if (average) rt::average_pool(p, memory.data() + out_plane, memory.data());
      else rt::max_pool(p, memory.data() + out_plane, memory.data(), static_cast<std::int64_t*>(nullptr), 0);
      for (index_t plane = 0; plane < 3; ++plane)
        for (index_t oh = 0; oh < c[2]; ++oh)
          for (index_t ow = 0; ow < c[3]; ++ow) {
            INFO("plane " << c[0] << "x" << c[1] << ", kernel " << c[4] << ", stride " << c[5]
                          << (average ? ", average" : ", max") << ", output " << plane << "," << oh << "," << ow);
            const float got = memory[static_cast<std::size_t>((plane * c[2] + oh) * c[3] + ow)];
            const float* xp = x.data() + plane * in_plane;
            if (average) REQUIRE(std::fabs(got - reference_mean(p, xp, oh, ow)) <= 1e-3);
            else REQUIRE(got == reference_max(p, xp, oh, ow));
          }
    }
  }
}
