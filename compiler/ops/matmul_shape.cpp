#include "ops/matmul_shape.h"

#include <utility>

#include <fmt/format.h>

#include "ops/elementwise.h"

namespace onnxc {

ProductShape product_shape(const Node& node, std::size_t a_index, std::size_t b_index) {
  Shape a = input(node, a_index).shape, b = input(node, b_index).shape;
  if (a.empty() || b.empty()) fail_invalid(node, "the matrix operands must have rank >= 1");
  const bool a_vector = a.size() == 1, b_vector = b.size() == 1;
  if (a_vector) a.insert(a.begin(), 1);
  if (b_vector) b.push_back(1);
  if (node.attr_int(kTransposedBAttr, 0)) std::swap(b[b.size() - 2], b[b.size() - 1]);
  ProductShape r;
  r.m = a[a.size() - 2];
  r.k = a.back();
  r.n = b.back();
  if (b[b.size() - 2] != r.k)
    fail_invalid(node, fmt::format("inner dims differ: {} times {}", shape_str(input(node, a_index).shape),
                                   shape_str(input(node, b_index).shape)));
  const Shape a_batch(a.begin(), a.end() - 2), b_batch(b.begin(), b.end() - 2);
  const Shape batch = broadcast_shapes(node, a_batch, b_batch);
  const std::vector<int64_t> as = broadcast_strides(a_batch, batch), bs = broadcast_strides(b_batch, batch);
  r.batches = shape_numel(batch);
  std::vector<int64_t> idx(batch.size(), 0);
  for (int64_t i = 0; i < r.batches; ++i) {
    int64_t ao = 0, bo = 0;
    for (std::size_t d = 0; d < batch.size(); ++d) {
      ao += idx[d] * as[d];
      bo += idx[d] * bs[d];
    }
    r.a_offsets.push_back(ao * r.m * r.k);
    r.b_offsets.push_back(bo * r.k * r.n);
    for (std::size_t d = batch.size(); d-- > 0;) {
      if (++idx[d] < batch[d]) break;
      idx[d] = 0;
    }
  }
  r.out = batch;
  if (!a_vector) r.out.push_back(r.m);
  if (!b_vector) r.out.push_back(r.n);
  return r;
}

}  // namespace onnxc
