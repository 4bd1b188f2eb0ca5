// fold-transpose: see kernel_passes.h. A matrix product whose B is a Transpose of a runtime
// tensor that only swaps the last two axes reads that tensor in place as B^T instead of having
// the Transpose copy it first (through memory, when B is larger than the caches): MatMul's tiles
// pack B^T a block at a time on the stack, the dot-product kernels read its rows as they lie:
//
//   MatMul(A, Transpose(X, perm = [0, ..., r-1, r-2]))  ->  MatMul(A, X) with onnxc.transposed_b
//   Gemm(A, Transpose(X, perm = [1, 0]), transB = t)     ->  Gemm(A, X, transB = 1 - t)
//
// A Gemm is not rewritten where that would move it from a tiled kernel to rt::gemm's loops
// (transA with a transposed runtime B has no tiled kernel). The Transpose goes when nothing else
// reads it.
#include <numeric>

#include "ops/matmul_shape.h"
#include "passes/kernel_passes.h"

namespace onnxc {
namespace {


// Whether the Transpose swaps its input's last two axes and keeps the others in place.
bool swaps_last_two_axes(const Node& transpose) {
  const std::size_t rank = transpose.inputs[0]->shape.size();
  if (rank < 2) return false;
  std::vector<int64_t> identity(rank);
  std::iota(identity.begin(), identity.end(), 0);
  std::vector<int64_t> swapped = identity;
  std::swap(swapped[rank - 2], swapped[rank - 1]);
  std::vector<int64_t> reversed(identity.rbegin(), identity.rend());
  return transpose.attr_ints("perm", reversed) == swapped;
}

// The tensor a float product's B is the last-two-axes Transpose of (a runtime one), or nullptr.
Value* transposed_source(const Node& product) {
  if (!product.has_input(1) || product.inputs[1]->dtype != DType::Float) return nullptr;
  const Node* t = product.inputs[1]->producer;
  if (!is_op(t, "Transpose") || !t->has_input(0) || t->inputs[0]->constant || !swaps_last_two_axes(*t))
    return nullptr;
  return t->inputs[0];
}

}  // namespace

int fold_transpose(Graph& g) {
  int folded = 0;
  for (auto& node : g.nodes) {
    Node& n = *node;
    if (n.op_type != "MatMul" && n.op_type != "Gemm") continue;
    if (!n.domain.empty() || n.has_attr(kTransposedBAttr) || n.has_attr(kPackedWeightsAttr)) continue;
    Value* source = transposed_source(n);
    if (!source || n.inputs[0]->dtype != DType::Float) continue;
    if (n.op_type == "MatMul") {
      if (n.inputs[1]->shape.size() < 2) continue;
      n.inputs[1] = source;
      n.set_attr_int(kTransposedBAttr, 1);
      ++folded;
      continue;
    }
    Value* transposed = n.inputs[1];
    const int64_t trans_b = n.attr_int("transB", 0);
    const bool tiled = matrix_product_kernel(n) != "gemm";
    n.inputs[1] = source;
    n.set_attr_int("transB", 1 - trans_b);
    if (tiled && matrix_product_kernel(n) == "gemm") {  // it would lose its tiled kernel: keep the Transpose
      n.inputs[1] = transposed;
      n.set_attr_int("transB", trans_b);
      continue;
    }
    ++folded;
  }
  if (folded == 0) return 0;
  g.relink();
  const std::size_t before = g.nodes.size();
  eliminate_dead_nodes(g);
  return static_cast<int>(before - g.nodes.size());
}

}  // namespace onnxc
