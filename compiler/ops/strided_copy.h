// The one copy most data-movement operators reduce to: the output, walked in order, reads
// the input through an affine index map (see rt::strided_copy). Transpose, Slice, Split,
// Expand, Tile, DepthToSpace and SpaceToDepth differ only in how they build the map.
#pragma once

#include <string>
#include <vector>

#include "ops/emitter.h"
#include "ops/op.h"

namespace onnxc {

struct StridedCopy {
  Shape shape;                   // the output's dims (the copy's iteration space)
  std::vector<int64_t> strides;  // input element step per output dim (0: broadcast, < 0: reversed)
  int64_t offset = 0;            // input element the first output element reads

  int64_t numel() const { return shape_numel(shape); }
};

// The input dims `in_shape` permuted by `perm` (output dim d is input dim perm[d]).
StridedCopy permuted_copy(const Shape& in_shape, const std::vector<int64_t>& perm);

// The same copy with size-1 dims dropped and neighbouring dims merged where the input is
// contiguous across them, so the kernel walks as few and as long rows as possible.
StridedCopy simplify(const StridedCopy& c);

// Emits the copy from `src` into `dst` (C++ pointer expressions); nothing for empty outputs.
// `tag` suffixes the names of the index arrays it declares, for nodes that emit several copies.
void emit_strided_copy(Emitter& e, const StridedCopy& c, const std::string& src, const std::string& dst,
                       const std::string& tag = "");

// Runs the copy on a constant: the same kernel the generated code calls.
void fold_strided_copy(const Node& n, const StridedCopy& c, const Tensor& src, Tensor& dst);

// An operator whose output 0 is one strided copy of input 0, described by `copy`.
OpDef strided_copy_op(const char* op_type, std::vector<int> versions, void (*infer)(Node&),
                      StridedCopy (*copy)(const Node&));

}  // namespace onnxc
