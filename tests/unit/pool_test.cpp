// Pools, MaxUnpool and ConvTranspose: kernels on hand-computed cases, and output shapes from
// ceil_mode, output_padding, output_shape and auto_pad.
#include <catch2/catch.hpp>

#include "model_builder.h"
#include "onnxc/conv_transpose.h"
#include "onnxc/pool.h"
#include "passes/pipeline.h"

using testing::ModelBuilder;
namespace rt = onnxc::rt;

namespace {

// A 1-D pool over one plane of `in` elements.
rt::PoolParams pool_1d(rt::index_t in, rt::index_t out, rt::index_t kernel, rt::index_t stride, rt::index_t pad_begin,
                       rt::index_t pad_end, bool count_include_pad = false) {
  return rt::PoolParams{1, 1, 1, in, 1, 1, out, 1, 1, kernel, 1, 1, stride, 1, 1, 1, 0, 0, pad_begin, 0, 0, pad_end,
                        count_include_pad};
}

// A 1-D transposed convolution with one input and one output channel.
rt::ConvParams conv_transpose_1d(rt::index_t in, rt::index_t out, rt::index_t kernel, rt::index_t stride,
                                 rt::index_t pad_begin) {
  return rt::ConvParams{1, 1, 1, 1, 1, 1, in, 1, 1, out, 1, 1, kernel, 1, 1, stride, 1, 1, 1, 0, 0, pad_begin};
}

onnxc::Shape pool_output_shape(std::vector<int64_t> in, std::vector<int64_t> kernel, std::vector<int64_t> strides,
                               std::vector<int64_t> pads, int64_t ceil_mode) {
  ModelBuilder b(12);
  b.input("x", in).output("y");
  auto& n = b.node("MaxPool", {"x"}, {"y"});
  ModelBuilder::attr_ints(n, "kernel_shape", kernel);
  ModelBuilder::attr_ints(n, "strides", strides);
  ModelBuilder::attr_ints(n, "pads", pads);
  ModelBuilder::attr_int(n, "ceil_mode", ceil_mode);
  return onnxc::check_model(b.write("pool_shape"), {}).graph.outputs[0]->shape;
}

}  // namespace

TEST_CASE("ceil_mode rounds pooled dims up, but no window starts in the end padding") {
  // 5 wide, kernel 2, stride 2: windows at 0, 2 (floor) and a partial one at 4 (ceil).
  CHECK(pool_output_shape({1, 1, 5, 5}, {2, 2}, {2, 2}, {0, 0, 0, 0}, 0) == onnxc::Shape{1, 1, 2, 2});
  CHECK(pool_output_shape({1, 1, 5, 5}, {2, 2}, {2, 2}, {0, 0, 0, 0}, 1) == onnxc::Shape{1, 1, 3, 3});
  // 2 wide with 1 end pad, kernel 2, stride 2: ceil gives 2 windows, but the second would
  // start at 2, in the end padding, so only 1 remains.
  CHECK(pool_output_shape({1, 1, 2}, {2}, {2}, {0, 1}, 1) == onnxc::Shape{1, 1, 1});
}

TEST_CASE("MaxPool never takes a value from the padding, also for integers") {
  // [-3, -5] with one pad each side, kernel 3: both windows hold both values; max -3 at 0.
  const std::int8_t x[] = {-3, -5};
  std::int8_t y[2];
  std::int64_t idx[2];
  rt::max_pool(pool_1d(2, 2, 3, 1, 1, 1), x, y, idx, 0);
  CHECK(y[0] == -3);
  CHECK(y[1] == -3);
  CHECK(idx[0] == 0);
  CHECK(idx[1] == 0);
}

TEST_CASE("AveragePool divides by the taps in the input, or with count_include_pad in the padded input") {
  // [2, 4], kernel 2, stride 1, one pad each side: windows [pad 2], [2 4], [4 pad].
  const float x[] = {2, 4};
  float y[3];
  rt::average_pool(pool_1d(2, 3, 2, 1, 1, 1), x, y);
  CHECK(y[0] == 2);
  CHECK(y[1] == 3);
  CHECK(y[2] == 4);
  rt::average_pool(pool_1d(2, 3, 2, 1, 1, 1, true), x, y);
  CHECK(y[0] == 1);
  CHECK(y[1] == 3);
  CHECK(y[2] == 2);
}

TEST_CASE("LpPool takes the p-norm of each window, padding counting as zero") {
  const float x[] = {3, -4, 0, 12};
  float y[3];
  rt::lp_pool(pool_1d(4, 2, 2, 2, 0, 0), 2.0f, x, y);  // |(3, -4)| = 5, |(0, 12)| = 12
  CHECK(y[0] == Approx(5));
  CHECK(y[1] == Approx(12));
  rt::lp_pool(pool_1d(4, 2, 2, 2, 0, 0), 1.0f, x, y);
  CHECK(y[0] == Approx(7));
  CHECK(y[1] == Approx(12));
  rt::lp_pool(pool_1d(4, 3, 2, 2, 1, 1), 2.0f, x, y);  // [pad 3], [-4 0], [12 pad]
  CHECK(y[0] == Approx(3));
  CHECK(y[1] == Approx(4));
  CHECK(y[2] == Approx(12));
}

TEST_CASE("GlobalLpPool takes the p-norm of each plane") {
  const double x[] = {3, 4, 5, 12};
  double y[2];
  rt::global_lp_pool(2, 2, 2.0f, x, y);
  CHECK(y[0] == Approx(5));
  CHECK(y[1] == Approx(13));
}

TEST_CASE("MaxUnpool puts each value at its index and zeros elsewhere") {
  const float x[] = {5, 7, 9};
  const std::int64_t idx[] = {1, 2, 40};  // 40 is out of range and ignored
  float y[4] = {-1, -1, -1, -1};
  rt::max_unpool(3, x, idx, 4, y);
  CHECK(y[0] == 0);
  CHECK(y[1] == 5);
  CHECK(y[2] == 7);
  CHECK(y[3] == 0);
}

TEST_CASE("ConvTranspose spreads each input over the kernel at stride spacing") {
  // x = [1, 2], w = [1, 1, 1], stride 2: 1 covers outputs 0..2, 2 covers 2..4.
  const float x[] = {1, 2}, w[] = {1, 1, 1};
  float y[5];
  rt::conv_transpose(conv_transpose_1d(2, 5, 3, 2, 0), x, w, static_cast<const float*>(nullptr), y);
  const float want[] = {1, 1, 3, 2, 2};
  for (int i = 0; i < 5; ++i) CHECK(y[i] == want[i]);
  // Pads 1 and 1 crop one output at each end; the bias is added everywhere.
  const float bias[] = {10};
  float cropped[3];
  rt::conv_transpose(conv_transpose_1d(2, 3, 3, 2, 1), x, w, bias, cropped);
  CHECK(cropped[0] == 11);
  CHECK(cropped[1] == 13);
  CHECK(cropped[2] == 12);
}

TEST_CASE("ConvTranspose output dims come from output_padding, output_shape or auto_pad") {
  ModelBuilder b(11);
  b.input("x", {1, 1, 3, 3}).output("y");
  b.floats("w", {1, 2, 3, 3}, std::vector<float>(18, 1.0f));
  auto& n = b.node("ConvTranspose", {"x", "w"}, {"y"});
  ModelBuilder::attr_ints(n, "strides", {3, 2});
  auto out_shape = [&] { return onnxc::check_model(b.write("convtranspose_shape"), {}).graph.outputs[0]->shape; };
  // stride * (in - 1) + kernel: 3 * 2 + 3 = 9 high, 2 * 2 + 3 = 7 wide
  CHECK(out_shape() == onnxc::Shape{1, 2, 9, 7});
  SECTION("output_padding adds at the end") {
    ModelBuilder::attr_ints(n, "output_padding", {1, 1});
    CHECK(out_shape() == onnxc::Shape{1, 2, 10, 8});
  }
  SECTION("output_shape sets the dims, even beyond what the windows cover") {
    ModelBuilder::attr_ints(n, "output_shape", {10, 8});
    CHECK(out_shape() == onnxc::Shape{1, 2, 10, 8});
  }
  SECTION("SAME_UPPER gives input * stride") {
    auto* a = n.add_attribute();
    a->set_name("auto_pad");
    a->set_type(onnx::AttributeProto::STRING);
    a->set_s("SAME_UPPER");
    CHECK(out_shape() == onnxc::Shape{1, 2, 9, 6});
  }
}
