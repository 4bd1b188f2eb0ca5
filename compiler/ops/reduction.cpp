#include "ops/reduction.h"

#include "ops/emitter.h"
#include "ops/op.h"

namespace onnxc {

std::vector<bool> axes_mask(const Node& n, const std::vector<int64_t>& axes, int64_t rank) {
  std::vector<bool> mask(static_cast<std::size_t>(rank), false);
  for (int64_t a : axes) {
    auto d = static_cast<std::size_t>(normalize_axis(n, a, rank, "axes entry"));
    if (mask[d]) fail_invalid(n, fmt::format("axes {} names axis {} twice", shape_str(axes), d));
    mask[d] = true;
  }
  return mask;
}

namespace {

// Appends one axis to a space, merging it into the last one when that is contiguous with it
// (always the case for neighbouring axes of a row-major tensor once extent-1 axes are gone).
void append_axis(const Node& n, int& rank, rt::index_t* dims, rt::index_t* strides, bool merge, int64_t extent,
                 int64_t stride) {
  if (merge) {
    dims[rank - 1] *= extent;
    strides[rank - 1] = stride;
    return;
  }
  if (rank == rt::kMaxReduceRank)
    fail_unsupported(n, fmt::format("the reduction alternates between kept and reduced axes more than {} times",
                                    rt::kMaxReduceRank),
                     "reduce in two steps");
  dims[rank] = extent;
  strides[rank] = stride;
  ++rank;
}

}  // namespace

rt::ReduceParams reduce_params(const Node& n, const Shape& shape, const std::vector<bool>& reduced) {
  rt::ReduceParams p{};
  std::vector<int64_t> strides = contiguous_strides(shape);
  int last_kind = -1;  // 0: kept, 1: reduced; the kind of the previous axis that was appended
  for (std::size_t d = 0; d < shape.size(); ++d) {
    if (shape[d] == 1) continue;
    int kind = reduced[d] ? 1 : 0;
    if (kind == 1)
      append_axis(n, p.reduced_rank, p.reduced_dims, p.reduced_strides, last_kind == 1, shape[d], strides[d]);
    else
      append_axis(n, p.kept_rank, p.kept_dims, p.kept_strides, last_kind == 0, shape[d], strides[d]);
    last_kind = kind;
  }
  return p;
}

std::string reduce_params_literal(const rt::ReduceParams& p) {
  auto list = [](int rank, const rt::index_t* v) {
    return fmt::format("{{{}}}", fmt::join(std::vector<rt::index_t>(v, v + rank), ", "));
  };
  return params_literal("rt::ReduceParams", {{"kept_rank", fmt::format("{}", p.kept_rank)},
                                             {"kept_dims", list(p.kept_rank, p.kept_dims)},
                                             {"kept_strides", list(p.kept_rank, p.kept_strides)},
                                             {"reduced_rank", fmt::format("{}", p.reduced_rank)},
                                             {"reduced_dims", list(p.reduced_rank, p.reduced_dims)},
                                             {"reduced_strides", list(p.reduced_rank, p.reduced_strides)}});
}

}  // namespace onnxc
