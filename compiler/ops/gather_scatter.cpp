// Indexed reads and writes: Gather, GatherElements, GatherND, ScatterElements, Scatter,
// ScatterND, OneHot, and Compress (a gather at the positions its constant condition selects).
#include <algorithm>

#include "onnxc/gather.h"
#include "ops/emitter.h"

namespace onnxc {
namespace {

// ---- shared helpers ----

// Runs f with the C++ type of an index tensor (int32 or int64).
template <class F> void dispatch_index(const Node& n, DType t, F&& f) {
  switch (t) {
    case DType::Int32: return f(TypeTag<int32_t>{});
    case DType::Int64: return f(TypeTag<int64_t>{});
    default: fail_invalid(n, fmt::format("indices have type {}; expected int32 or int64", dtype_name(t)));
  }
}

// Runs f(data tag, index tag) for a data input and an index input.
template <class F> void dispatch_data_index(const Node& n, std::size_t data, std::size_t index, F&& f) {
  dispatch_dtype(n, n.inputs[data]->dtype, [&](auto t) {
    dispatch_index(n, n.inputs[index]->dtype, [&](auto i) { f(t, i); });
  });
}

const Tensor& const_data(const Node& n, std::size_t i) { return *n.inputs[i]->constant; }

// Indices known at compile time must lie in [-bound, bound): an error otherwise, naming the
// node, rather than a clamped read at run time. bound_of(j) is element j's axis length.
template <class Bound> void check_const_indices(const Node& n, std::size_t i, Bound bound_of) {
  const Tensor* t = const_input(n, i);
  if (!t) return;
  for (int64_t j = 0; j < t->numel(); ++j) {
    int64_t v = t->int_at(j), b = bound_of(j);
    if (v < -b || v >= b)
      fail_invalid(n, fmt::format("index {} (element {} of input {} '{}') is out of range for an axis of length {}", v,
                                  j, i, n.inputs[i]->name, b),
                   fmt::format("indices must lie in [{}, {}]", -b, b - 1));
  }
}

void check_index_dtype(const Node& n, std::size_t i) { require_dtype(n, i, {DType::Int32, DType::Int64}); }

int64_t product(const Shape& s, std::size_t from, std::size_t to) {
  int64_t p = 1;
  for (std::size_t d = from; d < to && d < s.size(); ++d) p *= s[d];
  return p;
}

// ---- Gather ----

struct GatherDims {
  int64_t outer, axis_len, count, inner;
};

GatherDims gather_dims(const Node& n) {
  const Shape& x = input(n, 0).shape;
  const std::size_t axis = static_cast<std::size_t>(normalize_axis(n, n.attr_int("axis", 0), static_cast<int64_t>(x.size())));
  return {product(x, 0, axis), x[axis], input(n, 1).numel(), product(x, axis + 1, x.size())};
}

void infer_gather(Node& n) {
  check_arity(n, 2, 2, 1, 1);
  const Value& x = input(n, 0);
  if (x.shape.empty()) fail_invalid(n, "data must have rank 1 or more");
  check_index_dtype(n, 1);
  const std::size_t axis = static_cast<std::size_t>(normalize_axis(n, n.attr_int("axis", 0), static_cast<int64_t>(x.shape.size())));
  check_const_indices(n, 1, [&](int64_t) { return x.shape[axis]; });
  Shape out(x.shape.begin(), x.shape.begin() + static_cast<std::ptrdiff_t>(axis));
  const Shape& idx = input(n, 1).shape;
  out.insert(out.end(), idx.begin(), idx.end());
  out.insert(out.end(), x.shape.begin() + static_cast<std::ptrdiff_t>(axis) + 1, x.shape.end());
  set_output(n, 0, x.dtype, out);
}

const OpRegistrar gather_op([] {
  OpDef d;
  d.op_type = "Gather";
  d.versions = {1, 11, 13};
  d.infer = infer_gather;
  d.emit = [](const Node& n, Emitter& e) {
    GatherDims g = gather_dims(n);
    if (n.outputs[0]->numel() == 0) return;
    e.include("onnxc/gather.h");
    e.linef("rt::gather({}, {}, {}, {}, {}, {}, {});", e.in(0), e.in(1), e.out(0), g.outer, g.axis_len, g.count, g.inner);
  };
  d.fold = [](const Node& n, std::vector<Tensor>& outs) {
    const Value& y = *n.outputs[0];
    GatherDims g = gather_dims(n);
    outs.emplace_back(y.dtype, y.shape);
    dispatch_data_index(n, 0, 1, [&](auto t, auto i) {
      using T = typename decltype(t)::type;
      using I = typename decltype(i)::type;
      rt::gather(const_data(n, 0).data<T>(), const_data(n, 1).data<I>(), outs[0].data<T>(), g.outer, g.axis_len,
                 g.count, g.inner);
    });
  };
  return d;
}());

// ---- GatherElements, ScatterElements, Scatter: one index per element, along one axis ----

int64_t elements_axis(const Node& n) {
  return normalize_axis(n, n.attr_int("axis", 0), static_cast<int64_t>(input(n, 0).shape.size()));
}

// Indices must have the data's rank and fit inside it off the axis.
void check_elements_indices(const Node& n) {
  const Shape& x = input(n, 0).shape;
  const Shape& idx = input(n, 1).shape;
  check_index_dtype(n, 1);
  if (x.empty()) fail_invalid(n, "data must have rank 1 or more");
  if (idx.size() != x.size())
    fail_invalid(n, fmt::format("indices {} and data {} must have the same rank", shape_str(idx), shape_str(x)));
  if (x.size() > static_cast<std::size_t>(rt::kMaxCopyRank)) fail_unsupported(n, fmt::format("rank {}", x.size()));
  const int64_t axis = elements_axis(n);
  for (std::size_t d = 0; d < x.size(); ++d)
    if (static_cast<int64_t>(d) != axis && idx[d] > x[d])
      fail_invalid(n, fmt::format("indices {} exceed data {} along dim {}", shape_str(idx), shape_str(x), d));
  check_const_indices(n, 1, [&](int64_t) { return x[static_cast<std::size_t>(axis)]; });
}

void infer_gather_elements(Node& n) {
  check_arity(n, 2, 2, 1, 1);
  check_elements_indices(n);
  set_output(n, 0, input(n, 0).dtype, input(n, 1).shape);
}

const OpRegistrar gather_elements_op([] {
  OpDef d;
  d.op_type = "GatherElements";
  d.versions = {11, 13};
  d.infer = infer_gather_elements;
  d.emit = [](const Node& n, Emitter& e) {
    const Shape& x = n.inputs[0]->shape;
    if (n.outputs[0]->numel() == 0) return;
    const int64_t axis = elements_axis(n);
    e.include("onnxc/gather.h");
    e.index_array("index_shape", n.inputs[1]->shape);
    e.index_array("x_strides", contiguous_strides(x));
    e.linef("rt::gather_elements({}, {}, {}, index_shape, x_strides, {}, {}, {});", e.in(0), e.in(1), e.out(0),
            x.size(), axis, x[static_cast<std::size_t>(axis)]);
  };
  d.fold = [](const Node& n, std::vector<Tensor>& outs) {
    const Value& y = *n.outputs[0];
    const Shape& x = n.inputs[0]->shape;
    const int64_t axis = elements_axis(n);
    outs.emplace_back(y.dtype, y.shape);
    std::vector<rt::index_t> shape(y.shape.begin(), y.shape.end());
    std::vector<int64_t> st = contiguous_strides(x);
    std::vector<rt::index_t> strides(st.begin(), st.end());
    dispatch_data_index(n, 0, 1, [&](auto t, auto i) {
      using T = typename decltype(t)::type;
      using I = typename decltype(i)::type;
      rt::gather_elements(const_data(n, 0).data<T>(), const_data(n, 1).data<I>(), outs[0].data<T>(), shape.data(),
                          strides.data(), static_cast<int>(x.size()), static_cast<int>(axis),
                          x[static_cast<std::size_t>(axis)]);
    });
  };
  return d;
}());

// The 'reduction' of ScatterElements/ScatterND: none, add and mul from version 16, max and
// min from 18; the name of its rt:: functor.
const char* scatter_reduction(const Node& n) {
  std::string r = n.attr_string("reduction", "none");
  if (r != "none" && n.version < 16) fail_invalid(n, "'reduction' exists from version 16 on");
  if (r == "none") return "ScatterReplace";
  if (r == "add") return "ScatterAdd";
  if (r == "mul") return "ScatterMul";
  if ((r == "max" || r == "min") && n.version < 18) fail_invalid(n, fmt::format("reduction '{}' exists from version 18 on", r));
  if (r == "max") return "ScatterMax";
  if (r == "min") return "ScatterMin";
  fail_invalid(n, fmt::format("reduction '{}' is not none, add, mul, max or min", r));
}

// Calls f with the reduction functor the node names.
template <class F> void dispatch_reduction(const Node& n, F&& f) {
  std::string r = scatter_reduction(n);
  if (r == "ScatterAdd") return f(rt::ScatterAdd{});
  if (r == "ScatterMul") return f(rt::ScatterMul{});
  if (r == "ScatterMax") return f(rt::ScatterMax{});
  if (r == "ScatterMin") return f(rt::ScatterMin{});
  return f(rt::ScatterReplace{});
}

void check_updates(const Node& n, const Shape& expected) {
  const Value& u = input(n, 2);
  if (u.dtype != input(n, 0).dtype)
    fail_invalid(n, fmt::format("updates have type {}, data {}", dtype_name(u.dtype), dtype_name(input(n, 0).dtype)));
  if (u.shape != expected)
    fail_invalid(n, fmt::format("updates have shape {}; expected {}", shape_str(u.shape), shape_str(expected)));
}

void infer_scatter_elements(Node& n) {
  check_arity(n, 3, 3, 1, 1);
  check_elements_indices(n);
  check_updates(n, input(n, 1).shape);
  scatter_reduction(n);
  set_output(n, 0, input(n, 0).dtype, input(n, 0).shape);
}

// The output starts as a copy of the data (skipped when the planner gave it the same buffer).
void emit_copy_data(const Node& n, Emitter& e) {
  e.include("onnxc/layout.h");
  e.linef("rt::copy({}, {}, {});", e.in(0), e.out(0), n.outputs[0]->numel());
}

void emit_scatter_elements(const Node& n, Emitter& e) {
  emit_copy_data(n, e);
  const Shape& x = n.inputs[0]->shape;
  if (n.inputs[1]->numel() == 0) return;
  const int64_t axis = elements_axis(n);
  e.include("onnxc/gather.h");
  e.index_array("index_shape", n.inputs[1]->shape);
  e.index_array("y_strides", contiguous_strides(x));
  e.linef("rt::scatter_elements({}, {}, {}, index_shape, y_strides, {}, {}, {}, rt::{}{{}});", e.out(0), e.in(1),
          e.in(2), x.size(), axis, x[static_cast<std::size_t>(axis)], scatter_reduction(n));
}

void fold_scatter_elements(const Node& n, std::vector<Tensor>& outs) {
  const Shape& x = n.inputs[0]->shape;
  const int64_t axis = elements_axis(n);
  outs.push_back(const_data(n, 0));
  std::vector<rt::index_t> shape(n.inputs[1]->shape.begin(), n.inputs[1]->shape.end());
  std::vector<int64_t> st = contiguous_strides(x);
  std::vector<rt::index_t> strides(st.begin(), st.end());
  if (n.inputs[1]->numel() == 0) return;
  dispatch_data_index(n, 0, 1, [&](auto t, auto i) {
    using T = typename decltype(t)::type;
    using I = typename decltype(i)::type;
    dispatch_reduction(n, [&](auto reduce) {
      rt::scatter_elements(outs[0].data<T>(), const_data(n, 1).data<I>(), const_data(n, 2).data<T>(), shape.data(),
                           strides.data(), static_cast<int>(x.size()), static_cast<int>(axis),
                           x[static_cast<std::size_t>(axis)], reduce);
    });
  });
}

OpDef scatter_elements_op(const char* name, std::vector<int> versions) {
  OpDef d;
  d.op_type = name;
  d.versions = std::move(versions);
  d.infer = infer_scatter_elements;
  d.emit = emit_scatter_elements;
  d.fold = fold_scatter_elements;
  return d;
}

const OpRegistrar scatter_elements(scatter_elements_op("ScatterElements", {11, 13, 16, 18}));
// Scatter-9 is ScatterElements-11 under its old name (deprecated in 11).
const OpRegistrar scatter(scatter_elements_op("Scatter", {9}));

// ---- GatherND, ScatterND: index tuples select slices ----

// The tuple geometry shared by GatherND (batch_dims b >= 0) and ScatterND (b = 0): data
// dims [b..., k indexed dims..., slice dims...], indices [b..., count..., k].
struct TupleDims {
  int64_t batch = 1, data_batch = 1, count = 1, k = 0, slice = 1;
  std::vector<int64_t> dims, strides;  // the k indexed dims and their element strides
};

TupleDims tuple_dims(const Node& n, int64_t b) {
  const Shape& x = input(n, 0).shape;
  const Shape& idx = input(n, 1).shape;
  check_index_dtype(n, 1);
  if (x.empty() || idx.empty()) fail_invalid(n, "data and indices must have rank 1 or more");
  const std::size_t q = idx.size(), r = x.size(), ub = static_cast<std::size_t>(b);
  if (b < 0 || ub >= std::min(q, r)) fail_invalid(n, fmt::format("batch_dims {} must be below both ranks", b));
  for (std::size_t d = 0; d < ub; ++d)
    if (idx[d] != x[d])
      fail_invalid(n, fmt::format("batch dim {} differs: indices {}, data {}", d, shape_str(idx), shape_str(x)));
  TupleDims t;
  t.k = idx.back();
  if (t.k < 1 || ub + static_cast<std::size_t>(t.k) > r)
    fail_invalid(n, fmt::format("index tuples have {} entries; data {} allows 1 to {}", t.k, shape_str(x), r - ub));
  const std::size_t k = static_cast<std::size_t>(t.k);
  std::vector<int64_t> st = contiguous_strides(x);
  t.batch = product(x, 0, ub);
  t.data_batch = product(x, ub, r);
  t.count = product(idx, ub, q - 1);
  t.slice = product(x, ub + k, r);
  t.dims.assign(x.begin() + static_cast<std::ptrdiff_t>(ub), x.begin() + static_cast<std::ptrdiff_t>(ub + k));
  t.strides.assign(st.begin() + static_cast<std::ptrdiff_t>(ub), st.begin() + static_cast<std::ptrdiff_t>(ub + k));
  check_const_indices(n, 1, [&](int64_t j) { return t.dims[static_cast<std::size_t>(j % t.k)]; });
  return t;
}

int64_t batch_dims(const Node& n) {
  if (n.version < 12 && n.has_attr("batch_dims")) fail_invalid(n, "'batch_dims' exists from version 12 on");
  return n.attr_int("batch_dims", 0);
}

void infer_gather_nd(Node& n) {
  check_arity(n, 2, 2, 1, 1);
  const int64_t b = batch_dims(n);
  TupleDims t = tuple_dims(n, b);
  const Shape& x = input(n, 0).shape;
  const Shape& idx = input(n, 1).shape;
  Shape out(idx.begin(), idx.end() - 1);
  out.insert(out.end(), x.begin() + b + t.k, x.end());
  set_output(n, 0, input(n, 0).dtype, out);
}

const OpRegistrar gather_nd([] {
  OpDef d;
  d.op_type = "GatherND";
  d.versions = {11, 12, 13};
  d.infer = infer_gather_nd;
  d.emit = [](const Node& n, Emitter& e) {
    TupleDims t = tuple_dims(n, batch_dims(n));
    if (n.outputs[0]->numel() == 0) return;
    e.include("onnxc/gather.h");
    e.index_array("dims", t.dims);
    e.index_array("strides", t.strides);
    e.linef("rt::gather_nd({}, {}, {}, {}, {}, {}, {}, dims, strides, {});", e.in(0), e.in(1), e.out(0), t.batch,
            t.data_batch, t.count, t.k, t.slice);
  };
  d.fold = [](const Node& n, std::vector<Tensor>& outs) {
    const Value& y = *n.outputs[0];
    TupleDims t = tuple_dims(n, batch_dims(n));
    outs.emplace_back(y.dtype, y.shape);
    std::vector<rt::index_t> dims(t.dims.begin(), t.dims.end()), strides(t.strides.begin(), t.strides.end());
    if (y.numel() == 0) return;
    dispatch_data_index(n, 0, 1, [&](auto tt, auto i) {
      using T = typename decltype(tt)::type;
      using I = typename decltype(i)::type;
      rt::gather_nd(const_data(n, 0).data<T>(), const_data(n, 1).data<I>(), outs[0].data<T>(), t.batch,
                    t.data_batch, t.count, t.k, dims.data(), strides.data(), t.slice);
    });
  };
  return d;
}());

void infer_scatter_nd(Node& n) {
  check_arity(n, 3, 3, 1, 1);
  TupleDims t = tuple_dims(n, 0);
  const Shape& x = input(n, 0).shape;
  const Shape& idx = input(n, 1).shape;
  Shape updates(idx.begin(), idx.end() - 1);
  updates.insert(updates.end(), x.begin() + t.k, x.end());
  check_updates(n, updates);
  scatter_reduction(n);
  set_output(n, 0, input(n, 0).dtype, x);
}

const OpRegistrar scatter_nd([] {
  OpDef d;
  d.op_type = "ScatterND";
  d.versions = {11, 13, 16, 18};
  d.infer = infer_scatter_nd;
  d.emit = [](const Node& n, Emitter& e) {
    emit_copy_data(n, e);
    TupleDims t = tuple_dims(n, 0);
    if (t.count == 0 || t.slice == 0) return;
    e.include("onnxc/gather.h");
    e.index_array("dims", t.dims);
    e.index_array("strides", t.strides);
    e.linef("rt::scatter_nd({}, {}, {}, {}, {}, dims, strides, {}, rt::{}{{}});", e.out(0), e.in(1), e.in(2), t.count,
            t.k, t.slice, scatter_reduction(n));
  };
  d.fold = [](const Node& n, std::vector<Tensor>& outs) {
    TupleDims t = tuple_dims(n, 0);
    outs.push_back(const_data(n, 0));
    std::vector<rt::index_t> dims(t.dims.begin(), t.dims.end()), strides(t.strides.begin(), t.strides.end());
    if (t.count == 0 || t.slice == 0) return;
    dispatch_data_index(n, 0, 1, [&](auto tt, auto i) {
      using T = typename decltype(tt)::type;
      using I = typename decltype(i)::type;
      dispatch_reduction(n, [&](auto reduce) {
        rt::scatter_nd(outs[0].data<T>(), const_data(n, 1).data<I>(), const_data(n, 2).data<T>(), t.count, t.k,
                       dims.data(), strides.data(), t.slice, reduce);
      });
    });
  };
  return d;
}());

// ---- OneHot ----

struct OneHotDims {
  int64_t outer, depth, inner;
};

// Where the one-hot dim goes in the output (whose rank is the indices' plus one).
std::size_t one_hot_axis(const Node& n) {
  return static_cast<std::size_t>(
      normalize_axis(n, n.attr_int("axis", -1), static_cast<int64_t>(input(n, 0).shape.size()) + 1));
}

OneHotDims one_hot_dims(const Node& n) {
  const Shape& idx = input(n, 0).shape;
  const Tensor& depth_t = require_const_input(n, 1, "depth");
  if (depth_t.numel() != 1) fail_invalid(n, "depth must have exactly one element");
  const int64_t depth = static_cast<int64_t>(depth_t.float_at(0));  // non-integer depths truncate
  if (depth < 1) fail_invalid(n, fmt::format("depth {} is not positive", depth));
  const std::size_t axis = one_hot_axis(n);
  return {product(idx, 0, axis), depth, product(idx, axis, idx.size())};
}

void infer_one_hot(Node& n) {
  check_arity(n, 3, 3, 1, 1);
  const Value& values = input(n, 2);
  if (values.numel() != 2) fail_invalid(n, fmt::format("values has {} elements; expected [off, on]", values.numel()));
  if (!dtype_is_float(input(n, 0).dtype) && !dtype_is_integer(input(n, 0).dtype))
    fail_invalid(n, fmt::format("indices have type {}; expected a numeric type", dtype_name(input(n, 0).dtype)));
  Shape out = input(n, 0).shape;
  out.insert(out.begin() + static_cast<std::ptrdiff_t>(one_hot_axis(n)), one_hot_dims(n).depth);
  set_output(n, 0, values.dtype, out);
}

const OpRegistrar one_hot([] {
  OpDef d;
  d.op_type = "OneHot";
  d.versions = {9, 11};
  d.infer = infer_one_hot;
  d.emit = [](const Node& n, Emitter& e) {
    OneHotDims h = one_hot_dims(n);
    if (n.outputs[0]->numel() == 0) return;
    e.include("onnxc/gather.h");
    e.linef("rt::one_hot({}, {}, {}, {}, {}, {}, {});", e.in(0), e.in(2), e.out(0), h.outer, h.depth, h.inner,
            n.version >= 11 ? "true" : "false");
  };
  d.fold = [](const Node& n, std::vector<Tensor>& outs) {
    const Value& y = *n.outputs[0];
    OneHotDims h = one_hot_dims(n);
    outs.emplace_back(y.dtype, y.shape);
    dispatch_dtype(n, n.inputs[0]->dtype, [&](auto i) {
      using I = typename decltype(i)::type;
      dispatch_dtype(n, y.dtype, [&](auto t) {
        using T = typename decltype(t)::type;
        rt::one_hot(const_data(n, 0).data<I>(), const_data(n, 2).data<T>(), outs[0].data<T>(), h.outer, h.depth,
                    h.inner, n.version >= 11);
      });
    });
  };
  return d;
}());

// ---- Compress: the output shape depends on the condition, which must be a constant ----

struct CompressPlan {
  GatherDims dims;                 // the gather that implements it
  std::vector<int64_t> positions;  // the selected positions along the axis
};

// Without an axis the input is read flattened.
CompressPlan compress_plan(const Node& n) {
  const Shape& x = input(n, 0).shape;
  const Tensor& cond = require_const_input(n, 1, "condition");
  if (cond.shape.size() != 1) fail_invalid(n, fmt::format("condition {} is not 1-D", shape_str(cond.shape)));
  CompressPlan p;
  if (n.has_attr("axis")) {
    const std::size_t axis = static_cast<std::size_t>(normalize_axis(n, n.attr_int("axis", 0), static_cast<int64_t>(x.size())));
    p.dims = {product(x, 0, axis), x[axis], 0, product(x, axis + 1, x.size())};
  } else {
    p.dims = {1, shape_numel(x), 0, 1};
  }
  if (cond.numel() > p.dims.axis_len)
    fail_invalid(n, fmt::format("condition has {} entries for an axis of length {}", cond.numel(), p.dims.axis_len));
  for (int64_t i = 0; i < cond.numel(); ++i)
    if (cond.int_at(i)) p.positions.push_back(i);
  p.dims.count = static_cast<int64_t>(p.positions.size());
  return p;
}

void infer_compress(Node& n) {
  check_arity(n, 2, 2, 1, 1);
  require_dtype(n, 1, {DType::Bool});
  const Shape& x = input(n, 0).shape;
  CompressPlan p = compress_plan(n);
  Shape out = {p.dims.count};
  if (n.has_attr("axis")) {
    out = x;
    out[static_cast<std::size_t>(normalize_axis(n, n.attr_int("axis", 0), static_cast<int64_t>(x.size())))] = p.dims.count;
  }
  set_output(n, 0, input(n, 0).dtype, out);
}

const OpRegistrar compress([] {
  OpDef d;
  d.op_type = "Compress";
  d.versions = {9, 11};
  d.infer = infer_compress;
  d.emit = [](const Node& n, Emitter& e) {
    CompressPlan p = compress_plan(n);
    if (n.outputs[0]->numel() == 0) return;
    e.include("onnxc/gather.h");
    e.index_array("positions", p.positions);
    e.linef("rt::gather({}, positions, {}, {}, {}, {}, {});", e.in(0), e.out(0), p.dims.outer, p.dims.axis_len,
            p.dims.count, p.dims.inner);
  };
  d.fold = [](const Node& n, std::vector<Tensor>& outs) {
    const Value& y = *n.outputs[0];
    CompressPlan p = compress_plan(n);
    outs.emplace_back(y.dtype, y.shape);
    if (y.numel() == 0) return;
    dispatch_dtype(n, y.dtype, [&](auto t) {
      using T = typename decltype(t)::type;
      rt::gather(const_data(n, 0).data<T>(), p.positions.data(), outs[0].data<T>(), p.dims.outer, p.dims.axis_len,
                 p.dims.count, p.dims.inner);
    });
  };
  return d;
}());

}  // namespace
}  // namespace onnxc
