// DFT, STFT, cosine window and mel filter bank kernels against values computed by hand (and,
// for the mel matrix, the matrix the ONNX specification's example prints).
#include <catch2/catch.hpp>

#include <cmath>

#include "model_builder.h"
#include "onnxc/spectral.h"
#include "passes/pipeline.h"
#include "support/diagnostics.h"

using namespace onnxc;

namespace {

// Checks interleaved (re, im) pairs.
void check_complex(const float* got, std::initializer_list<float> want) {
  std::size_t i = 0;
  for (float w : want) {
    INFO("element " << i);
    CHECK(got[i] == Approx(w).margin(1e-5));
    ++i;
  }
}

}  // namespace

TEST_CASE("dft of a real signal, full and one-sided, and its inverse", "[spectral]") {
  const float x[] = {1, 2, 3, 4};
  float y[8];
  rt::dft(rt::DftParams{1, 4, 1, false, 4, 4, false}, x, y);
  check_complex(y, {10, 0, -2, 2, -2, 0, -2, -2});

  float half[6];
  rt::dft(rt::DftParams{1, 4, 1, false, 4, 3, false}, x, half);
  check_complex(half, {10, 0, -2, 2, -2, 0});

  float back[8];
  rt::dft(rt::DftParams{1, 4, 1, true, 4, 4, true}, y, back);
  check_complex(back, {1, 0, 2, 0, 3, 0, 4, 0});
}

TEST_CASE("dft crops or zero-pads to dft_length and transforms every line of the axis", "[spectral]") {
  const float x[] = {1, 2, 3, 4};
  float cropped[4];
  rt::dft(rt::DftParams{1, 4, 1, false, 2, 2, false}, x, cropped);  // [1, 2]
  check_complex(cropped, {3, 0, -1, 0});

  float padded[6];
  rt::dft(rt::DftParams{1, 1, 1, false, 3, 3, false}, x, padded);  // [1, 0, 0]: flat spectrum
  check_complex(padded, {1, 0, 1, 0, 1, 0});

  // [2, 2] signal transformed along axis 0 (inner 2): columns [1, 3] and [2, 4].
  float columns[8];
  rt::dft(rt::DftParams{1, 2, 2, false, 2, 2, false}, x, columns);
  check_complex(columns, {4, 0, 6, 0, -2, 0, -2, 0});
}

TEST_CASE("stft frames, steps and windows the signal", "[spectral]") {
  const float signal[] = {0, 1, 2, 3, 4, 5};
  const rt::StftParams p{1, 6, false, 2, 4, 2, 3};  // frames [0..3] and [2..5], one-sided
  float y[12];
  rt::stft(p, signal, static_cast<const float*>(nullptr), y);
  check_complex(y, {6, 0, -2, 2, -2, 0, 14, 0, -2, 2, -2, 0});

  const float window[] = {0, 1, 1, 0};  // first frame becomes [0, 1, 2, 0]
  rt::stft(p, signal, window, y);
  check_complex(y, {3, 0, -2, -1, 1, 0});
}

TEST_CASE("cosine windows: Hann, Hamming, Blackman, periodic and symmetric", "[spectral]") {
  float w[5];
  rt::cosine_window(w, 4, true, 0.5, 0.5, 0.0);
  CHECK(w[0] == Approx(0).margin(1e-7));
  CHECK(w[1] == Approx(0.5));
  CHECK(w[2] == Approx(1));
  CHECK(w[3] == Approx(0.5));

  rt::cosine_window(w, 5, false, 0.5, 0.5, 0.0);  // symmetric: period 4, both ends 0
  CHECK(w[2] == Approx(1));
  CHECK(w[4] == Approx(0).margin(1e-7));

  rt::cosine_window(w, 2, true, 25.0 / 46, 21.0 / 46, 0.0);  // Hamming: a0 -+ a1
  CHECK(w[0] == Approx(4.0 / 46));
  CHECK(w[1] == Approx(1));

  rt::cosine_window(w, 4, true, 0.42, 0.5, 0.08);  // Blackman
  CHECK(w[0] == Approx(0).margin(1e-7));
  CHECK(w[1] == Approx(0.34));
  CHECK(w[2] == Approx(1));

  double one[1];
  rt::cosine_window(one, 1, false, 0.5, 0.5, 0.0);  // a symmetric window of size 1: angle 0
  CHECK(one[0] == 0.0);
}

TEST_CASE("mel weight matrix of the specification's example", "[spectral]") {
  float m[9 * 8];
  rt::mel_weight_matrix(m, 8, 16, 8192.0, 0.0, 4096.0);
  // Rows are spectrogram bins, columns mel bands; every band here is a single 1.
  const int ones[][2] = {{0, 0}, {0, 1}, {1, 2}, {1, 3}, {2, 4}, {3, 5}, {4, 6}, {5, 7}};
  float want[9 * 8] = {};
  for (const auto& rc : ones) want[rc[0] * 8 + rc[1]] = 1;
  for (int i = 0; i < 9 * 8; ++i) {
    INFO("bin " << i / 8 << " band " << i % 8);
    CHECK(m[i] == want[i]);
  }
}

TEST_CASE("DFT-20 takes its axis as an input and refuses the real/imaginary dim as the axis", "[spectral]") {
  auto model = [](int64_t axis, bool onesided) {
    testing::ModelBuilder b(20);
    b.output("y");
    b.floats("x", {1, 4, 1}, {1, 2, 3, 4});
    b.ints("axis", {}, {axis});
    auto& dft = b.node("DFT", {"x", "", "axis"}, {"y"}, "dft");
    if (onesided) testing::ModelBuilder::attr_int(dft, "onesided", 1);
    return b;
  };
  auto b = model(-2, true);
  onnxc::Model m = onnxc::check_model(b.write("dft20"), {});
  const onnxc::Value& y = *m.graph.outputs[0];
  REQUIRE(y.constant);
  CHECK(y.shape == onnxc::Shape{1, 3, 2});
  check_complex(y.constant->data<float>(), {10, 0, -2, 2, -2, 0});

  auto bad = model(-1, false);
  try {
    onnxc::check_model(bad.write("dft20_bad_axis"), {});
    FAIL("axis -1 was accepted");
  } catch (const onnxc::CompileError& e) {
    CHECK(std::string(e.what()).find("real/imaginary dim") != std::string::npos);
  }
}
