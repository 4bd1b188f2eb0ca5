// onnxc runtime support: grouped convolution (1 < group) as one-group convolutions over
// channel-offset views, portable (every target).
//
// In NCHW a group's input channels, output channels, weight rows and bias are each one
// contiguous run, so group g of image b is a one-group convolution of in_channels / group
// channels to out_channels / group channels whose operands start at offsets into the tensors:
// any one-group kernel (the packed matrix product, the product reading its input in place, the
// packed direct kernel) computes it with its weights packed group by group (the compiler packs
// each group's [out_channels / group, K] rows as that kernel lays out a whole weight, one after
// the other).
#pragma once

#include "onnxc/conv.h"
#include "onnxc/parallel.h"

namespace onnxc {
namespace rt {

// The one-group convolution of one group of one image.
constexpr ConvParams conv_group_params(const ConvParams& p) {
  ConvParams q = p;
  q.batch = 1;
  q.in_channels = p.in_channels / p.group;
  q.out_channels = p.out_channels / p.group;
  q.group = 1;
  return q;
}

// Tasks conv_each_group splits the (image, group) pairs into when run() is given a parallel-for:
// one pair each up to 16 pairs, so two threads get nearly equal shares (4 tasks of 10 groups, 2 or
// 3 pairs each, left one thread 6 of them: bench --predict-threads 2, 0.61 of one thread; 8 tasks
// still 0.60), and few enough that a task's kernel call is not tiny.
constexpr index_t kGroupTasks = 16;

// one(q, x, w, bias, y, slot) for every group of every image, q = conv_group_params(p); w holds
// each group's weights (packed or not) one after the other, out_channels / group x K floats each.
// With a parallel-for the (image, group) pairs split into at most `slots` tasks, and `slot` is
// the task's index: `one` may then use scratch slot `slot` of `slots` (one im2col block each).
// Without one, or with fewer than two slots, every pair runs here with slot 0.
template <class OneGroup>
inline void conv_each_group_in_slots(const ConvParams& p, const float* x, const float* w, const float* bias, float* y,
                                     index_t slots, const OneGroup& one, Parallel parallel = nullptr) {
  const ConvParams q = conv_group_params(p);
  const index_t in_group = q.in_channels * p.in_d * p.in_h * p.in_w;
  const index_t out_group = q.out_channels * p.out_d * p.out_h * p.out_w;
  const index_t w_group = q.out_channels * q.in_channels * p.k_d * p.k_h * p.k_w;
  auto group_of = [&](index_t at, index_t slot) {  // at = image * group + g: the views are at the same offsets
    const index_t g = at % p.group;
    one(q, x + at * in_group, w + g * w_group, bias ? bias + g * q.out_channels : nullptr, y + at * out_group, slot);
  };
  const index_t count = p.batch * p.group;
  if (!parallel || slots < 2) {
    for (index_t at = 0; at < count; ++at) group_of(at, 0);
    return;
  }
  const index_t tasks = count < slots ? count : slots;
  parallel_for(parallel, tasks, [&](index_t t) {
    const Range r = part_of(count, tasks, t);
    for (index_t at = r.begin; at < r.end; ++at) group_of(at, t);
  });
}

// one(q, x, w, bias, y) for every group of every image (conv_each_group_in_slots). With a
// parallel-for the pairs split into kGroupTasks tasks: `one` must then use no shared scratch
// (kernels reading their input in place, the packed direct kernel).
template <class OneGroup>
inline void conv_each_group(const ConvParams& p, const float* x, const float* w, const float* bias, float* y,
                            const OneGroup& one, Parallel parallel = nullptr) {
  conv_each_group_in_slots(
      p, x, w, bias, y, kGroupTasks,
      [&](const ConvParams& q, const float* xg, const float* wg, const float* bg, float* yg, index_t) {
        one(q, xg, wg, bg, yg);
      },
      parallel);
}

}  // namespace rt
}  // namespace onnxc
