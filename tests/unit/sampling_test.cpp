// RoiAlign and GridSample kernels on hand-computed cases.
#include <catch2/catch.hpp>

#include <cstdint>

#include "onnxc/grid_sample.h"
#include "onnxc/roi_align.h"

namespace rt = onnxc::rt;

namespace {

const float kImage[] = {1, 2, 3, 4};  // one 2x2 channel

float roi_align_whole_image(bool half_pixel, bool max_mode) {
  const float roi[] = {0, 0, 2, 2};
  const std::int64_t batch_index[] = {0};
  float y[1];
  rt::roi_align(rt::RoiAlignParams{1, 1, 2, 2, 1, 1, 1, 2, 1.0f, half_pixel, max_mode}, kImage, roi, batch_index, y);
  return y[0];
}

}  // namespace

TEST_CASE("RoiAlign averages, or takes the max of, bilinear samples of each bin") {
  // half_pixel shifts the roi to [-0.5, 1.5]: the 2x2 samples land on the pixel centres.
  CHECK(roi_align_whole_image(true, false) == Approx(2.5));
  // max takes the largest weighted corner per sample: the pixel itself here.
  CHECK(roi_align_whole_image(true, true) == Approx(4));
  // Without half_pixel the samples sit at 0.5 and 1.5; those past the last pixel centre are
  // clamped to it: (2.5 + 3 + 3.5 + 4) / 4.
  CHECK(roi_align_whole_image(false, false) == Approx(3.25));
}

TEST_CASE("RoiAlign pools zeros for a batch index out of range") {
  const float roi[] = {0, 0, 2, 2};
  const std::int64_t batch_index[] = {3};
  float y[1] = {-1};
  rt::roi_align(rt::RoiAlignParams{1, 1, 2, 2, 1, 1, 1, 2, 1.0f, true, false}, kImage, roi, batch_index, y);
  CHECK(y[0] == 0);
}

TEST_CASE("GridSample interpolates in 3-D and pads by the padding mode") {
  const float volume[] = {0, 1, 2, 3, 4, 5, 6, 7};  // [1, 1, 2, 2, 2]
  const float grid[] = {0, 0, 0, /**/ 1, -1, -1, /**/ 5, -1, -1};  // (x, y, z) per output
  float y[3];
  rt::GridSampleParams p{1, 1, 2, 2, 2, 1, 1, 3, 3, rt::GridSampleMode::Linear, rt::GridSamplePadding::Zeros, true};
  rt::grid_sample(p, volume, grid, y);
  CHECK(y[0] == Approx(3.5));  // the centre: the mean of all eight
  CHECK(y[1] == Approx(1));    // x = 1 (last column), y = z = -1 (first row and slice)
  CHECK(y[2] == Approx(0));    // far outside: zeros, weighted to nothing
  p.padding = rt::GridSamplePadding::Border;
  rt::grid_sample(p, volume, grid, y);
  CHECK(y[2] == Approx(1));  // clamped to the last column
  p.mode = rt::GridSampleMode::Nearest;
  p.padding = rt::GridSamplePadding::Reflection;
  // x = 5 is pixel 3 with align_corners; reflecting back and forth across [0, 1] ends at 1.
  rt::grid_sample(p, volume, grid, y);
  CHECK(y[2] == Approx(1));
}
