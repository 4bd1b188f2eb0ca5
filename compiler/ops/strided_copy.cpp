#include "ops/strided_copy.h"

#include "onnxc/layout.h"

namespace onnxc {

StridedCopy permuted_copy(const Shape& in_shape, const std::vector<int64_t>& perm) {
  StridedCopy c;
  std::vector<int64_t> st = contiguous_strides(in_shape);
  for (int64_t p : perm) {
    c.shape.push_back(in_shape[static_cast<std::size_t>(p)]);
    c.strides.push_back(st[static_cast<std::size_t>(p)]);
  }
  return c;
}

StridedCopy simplify(const StridedCopy& c) {
  StridedCopy s;
  s.offset = c.offset;
  for (std::size_t d = 0; d < c.shape.size(); ++d) {
    if (c.shape[d] == 1) continue;
    // Dim d continues the previous one when stepping the previous dim once equals walking d
    // to its end: then both are a single longer dim.
    if (!s.shape.empty() && s.strides.back() == c.strides[d] * c.shape[d]) {
      s.shape.back() *= c.shape[d];
      s.strides.back() = c.strides[d];
      continue;
    }
    s.shape.push_back(c.shape[d]);
    s.strides.push_back(c.strides[d]);
  }
  if (s.shape.empty()) {  // a single element
    s.shape = {1};
    s.strides = {0};
  }
  return s;
}

void emit_strided_copy(Emitter& e, const StridedCopy& c, const std::string& src, const std::string& dst,
                       const std::string& tag) {
  if (c.numel() == 0) return;
  e.include("onnxc/layout.h");
  StridedCopy s = simplify(c);
  std::string from = s.offset ? fmt::format("{} + {}", src, s.offset) : src;
  if (s.shape.size() == 1 && s.strides[0] == 1) {
    // A contiguous copy splits into runs of whole cache lines.
    constexpr int64_t kAlign = 16;
    const int64_t tasks = e.tasks(s.shape[0], (s.shape[0] + kAlign - 1) / kAlign);
    if (tasks < 2) return e.linef("rt::copy({}, {}, {});", from, dst, s.shape[0]);
    e.open_ranges(s.shape[0], tasks, kAlign);
    e.linef("rt::copy({}, {}, r_.end - r_.begin);", moved(from, "r_.begin"), moved(dst, "r_.begin"));
    return e.close_ranges();
  }
  if (s.shape.size() > static_cast<std::size_t>(rt::kMaxCopyRank))
    fail_unsupported(e.node(), fmt::format("a copy over {} non-mergeable dims (onnxc supports {})", s.shape.size(),
                                           rt::kMaxCopyRank));
  // Splits into ranges of the outermost dim: each task copies its range of output rows.
  const int64_t tasks = e.tasks(s.numel(), s.shape[0]);
  std::string strides = e.index_array("strides" + tag, s.strides);
  if (tasks < 2) {
    std::string shape = e.index_array("shape" + tag, s.shape);
    return e.linef("rt::strided_copy({}, {}, {}, {}, {});", from, dst, shape, strides, s.shape.size());
  }
  std::vector<std::string> dims{"r_.end - r_.begin"};
  for (std::size_t d = 1; d < s.shape.size(); ++d) dims.push_back(std::to_string(s.shape[d]));
  const int64_t row = shape_numel(Shape(s.shape.begin() + 1, s.shape.end()));
  e.open_ranges(s.shape[0], tasks);
  e.linef("const rt::index_t shape{}_[] = {{{}}};", tag, fmt::join(dims, ", "));
  e.linef("rt::strided_copy({}, {}, shape{}_, {}, {});", s.strides[0] ? moved(from, range_offset(s.strides[0])) : from,
          moved(dst, range_offset(row)), tag, strides, s.shape.size());
  e.close_ranges();
}

void fold_strided_copy(const Node& n, const StridedCopy& c, const Tensor& src, Tensor& dst) {
  if (c.numel() == 0) return;
  StridedCopy s = simplify(c);
  std::vector<rt::index_t> shape(s.shape.begin(), s.shape.end()), strides(s.strides.begin(), s.strides.end());
  dispatch_dtype(n, src.dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    rt::strided_copy(src.data<T>() + s.offset, dst.data<T>(), shape.data(), strides.data(),
                     static_cast<int>(shape.size()));
  });
}

OpDef strided_copy_op(const char* op_type, std::vector<int> versions, void (*infer)(Node&),
                      StridedCopy (*copy)(const Node&)) {
  OpDef d;
  d.op_type = op_type;
  d.versions = std::move(versions);
  d.infer = infer;
  d.emit = [copy](const Node& n, Emitter& e) { emit_strided_copy(e, copy(n), e.in(0), e.out(0)); };
  d.fold = [copy](const Node& n, std::vector<Tensor>& outs) {
    const Value& y = *n.outputs[0];
    outs.emplace_back(y.dtype, y.shape);
    fold_strided_copy(n, copy(n), *n.inputs[0]->constant, outs[0]);
  };
  return d;
}

}  // namespace onnxc
