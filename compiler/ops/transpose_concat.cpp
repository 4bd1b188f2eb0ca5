// Transpose and Concat: pure data movement.
#include "onnxc/layout.h"
#include "ops/emitter.h"
#include "ops/strided_copy.h"

namespace onnxc {
namespace {

std::vector<int64_t> transpose_perm(const Node& n) {
  std::size_t r = n.inputs[0]->shape.size();
  std::vector<int64_t> perm = n.attr_ints("perm");
  if (!n.has_attr("perm")) {
    for (std::size_t i = 0; i < r; ++i) perm.push_back(static_cast<int64_t>(r - 1 - i));
  }
  if (perm.size() != r) fail_invalid(n, fmt::format("perm has {} entries for rank {}", perm.size(), r));
  std::vector<bool> seen(r, false);
  for (int64_t p : perm) {
    if (p < 0 || p >= static_cast<int64_t>(r) || seen[static_cast<std::size_t>(p)])
      fail_invalid(n, fmt::format("perm {} is not a permutation of 0..{}", shape_str(perm), r - 1));
    seen[static_cast<std::size_t>(p)] = true;
  }
  return perm;
}

void infer_transpose(Node& n) {
  check_arity(n, 1, 1, 1, 1);
  const Value& x = input(n, 0);
  std::vector<int64_t> perm = transpose_perm(n);
  Shape out;
  for (int64_t p : perm) out.push_back(x.shape[static_cast<std::size_t>(p)]);
  set_output(n, 0, x.dtype, out);
}

StridedCopy transpose_copy(const Node& n) { return permuted_copy(n.inputs[0]->shape, transpose_perm(n)); }

const OpRegistrar transpose_op(strided_copy_op("Transpose", {1, 13, 21, 23, 24, 25}, infer_transpose, transpose_copy));

struct ConcatPiece {
  int64_t outer, block, dst_stride, dst_offset;
};

// Concat-1 defaults the axis to 1; from version 4 it is required.
int64_t concat_axis(const Node& n) {
  if (!n.has_attr("axis") && n.version >= 4) fail_invalid(n, "required attribute 'axis' is missing");
  return normalize_axis(n, n.attr_int("axis", 1), static_cast<int64_t>(input(n, 0).shape.size()));
}

std::vector<ConcatPiece> concat_pieces(const Node& n) {
  const Shape& out = n.outputs[0]->shape;
  int64_t axis = concat_axis(n);
  int64_t outer = 1, inner = 1;
  for (int64_t i = 0; i < axis; ++i) outer *= out[static_cast<std::size_t>(i)];
  for (std::size_t i = static_cast<std::size_t>(axis) + 1; i < out.size(); ++i) inner *= out[i];
  std::vector<ConcatPiece> pieces;
  int64_t offset = 0;
  for (const Value* v : n.inputs) {
    int64_t block = v->shape[static_cast<std::size_t>(axis)] * inner;
    pieces.push_back({outer, block, out[static_cast<std::size_t>(axis)] * inner, offset});
    offset += block;
  }
  return pieces;
}

void infer_concat(Node& n) {
  check_arity(n, 1, -1, 1, 1);
  const Value& x0 = input(n, 0);
  int64_t r = static_cast<int64_t>(x0.shape.size());
  int64_t axis = concat_axis(n);
  Shape out = x0.shape;
  out[static_cast<std::size_t>(axis)] = 0;
  for (std::size_t i = 0; i < n.inputs.size(); ++i) {
    const Value& v = input(n, i);
    if (v.dtype != x0.dtype) fail_invalid(n, fmt::format("input {} has type {}, input 0 {}", i, dtype_name(v.dtype), dtype_name(x0.dtype)));
    if (v.shape.size() != x0.shape.size()) fail_invalid(n, fmt::format("input {} has rank {}, input 0 rank {}", i, v.shape.size(), r));
    for (int64_t d = 0; d < r; ++d)
      if (d != axis && v.shape[static_cast<std::size_t>(d)] != x0.shape[static_cast<std::size_t>(d)])
        fail_invalid(n, fmt::format("input {} {} differs from input 0 {} outside axis {}", i, shape_str(v.shape),
                                    shape_str(x0.shape), axis));
    out[static_cast<std::size_t>(axis)] += v.shape[static_cast<std::size_t>(axis)];
  }
  set_output(n, 0, x0.dtype, out);
}

const OpRegistrar concat_op([] {
  OpDef d;
  d.op_type = "Concat";
  d.versions = {1, 4, 11, 13};
  d.infer = infer_concat;
  d.emit = [](const Node& n, Emitter& e) {
    e.include("onnxc/layout.h");
    auto pieces = concat_pieces(n);
    for (std::size_t i = 0; i < pieces.size(); ++i) {
      const ConcatPiece& p = pieces[i];
      if (p.block == 0 || p.outer == 0) continue;
      // Each input's blocks split into ranges of blocks (one block: of its elements).
      const std::string dst = fmt::format("{} + {}", e.out(0), p.dst_offset);
      if (p.outer == 1) {
        constexpr int64_t kAlign = 16;
        const int64_t tasks = e.tasks(p.block, (p.block + kAlign - 1) / kAlign);
        if (tasks < 2) {
          e.linef("rt::copy_blocks({}, {}, 1, {}, {});", e.in(i), dst, p.block, p.dst_stride);
          continue;
        }
        e.open_ranges(p.block, tasks, kAlign);
        e.linef("rt::copy({}, {}, r_.end - r_.begin);", moved(e.in(i), "r_.begin"), moved(dst, "r_.begin"));
        e.close_ranges();
        continue;
      }
      const int64_t tasks = e.tasks(p.outer * p.block, p.outer);
      if (tasks < 2) {
        e.linef("rt::copy_blocks({}, {}, {}, {}, {});", e.in(i), dst, p.outer, p.block, p.dst_stride);
        continue;
      }
      e.open_ranges(p.outer, tasks);
      e.linef("rt::copy_blocks({}, {}, r_.end - r_.begin, {}, {});", moved(e.in(i), range_offset(p.block)),
              moved(dst, range_offset(p.dst_stride)), p.block, p.dst_stride);
      e.close_ranges();
    }
  };
  d.fold = [](const Node& n, std::vector<Tensor>& outs) {
    const Value& y = *n.outputs[0];
    outs.emplace_back(y.dtype, y.shape);
    auto pieces = concat_pieces(n);
    dispatch_dtype(n, y.dtype, [&](auto tag) {
      using T = typename decltype(tag)::type;
      for (std::size_t i = 0; i < pieces.size(); ++i) {
        const ConcatPiece& p = pieces[i];
        if (p.block == 0 || p.outer == 0) continue;
        rt::copy_blocks(n.inputs[i]->constant->data<T>(), outs[0].data<T>() + p.dst_offset, p.outer, p.block,
                        p.dst_stride);
      }
    });
  };
  return d;
}());

}  // namespace
}  // namespace onnxc
