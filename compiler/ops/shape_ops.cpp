// Operators whose outputs are fixed by shapes or by constant inputs, the building blocks of
// the shape subgraphs exporters emit: Shape, Size, ConstantOfShape, Range (NonZero: nonzero.cpp); and the
// shape-driven generators EyeLike and Trilu.
#include <algorithm>
#include <cmath>

#include "onnxc/layout.h"
#include "ops/emitter.h"
#include "ops/scalar_literal.h"

namespace onnxc {
namespace {

// Gives output i a value known at compile time (whatever the input data): consumers see a
// constant and the node itself is dropped.
void set_constant_output(Node& n, std::size_t i, Tensor t) {
  set_output(n, i, t.dtype, t.shape);
  n.outputs[i]->constant = std::make_shared<Tensor>(std::move(t));
}

void emit_never(const Node& n, Emitter&) {
  fail_invalid(n, "internal: an operator whose output is always a constant reached the back end");
}

// ---- Shape and Size: static shapes make them constants ----

void infer_shape(Node& n) {
  check_arity(n, 1, 1, 1, 1);
  const Shape& s = input(n, 0).shape;
  const int64_t rank = static_cast<int64_t>(s.size());
  if (n.version < 15 && (n.has_attr("start") || n.has_attr("end")))
    fail_invalid(n, "'start' and 'end' exist from version 15 on");
  // Version 15's window [start, end) of the dims; negative values count from the back.
  auto clamp_dim = [&](int64_t i) { return std::clamp<int64_t>(i < 0 ? i + rank : i, 0, rank); };
  const int64_t start = clamp_dim(n.attr_int("start", 0)), end = clamp_dim(n.attr_int("end", rank));
  Tensor t(DType::Int64, {std::max<int64_t>(end - start, 0)});
  for (int64_t i = start; i < end; ++i) t.data<int64_t>()[i - start] = s[static_cast<std::size_t>(i)];
  set_constant_output(n, 0, std::move(t));
}

void infer_size(Node& n) {
  check_arity(n, 1, 1, 1, 1);
  Tensor t(DType::Int64, {});
  t.data<int64_t>()[0] = input(n, 0).numel();
  set_constant_output(n, 0, std::move(t));
}

OpDef constant_op(const char* name, std::vector<int> versions, void (*infer)(Node&)) {
  OpDef d;
  d.op_type = name;
  d.versions = std::move(versions);
  d.infer = infer;
  d.emit = emit_never;
  return d;
}

const OpRegistrar shape_op(constant_op("Shape", {1, 13, 15, 19, 21, 23, 24, 25}, infer_shape));
const OpRegistrar size_op(constant_op("Size", {1, 13, 19, 21, 23, 24, 25}, infer_size));

// ---- ConstantOfShape: a tensor of the given (constant) shape filled with one value ----

// The fill value: attribute 'value' (a one-element tensor), float 0 by default.
Tensor fill_value(const Node& n) {
  if (const Attribute* a = n.attr("value")) {
    if (!a->t || a->t->numel() != 1) fail_invalid(n, "'value' must be a tensor with exactly one element");
    return *a->t;
  }
  return Tensor(DType::Float, {1});
}

void infer_constant_of_shape(Node& n) {
  check_arity(n, 1, 1, 1, 1);
  require_dtype(n, 0, {DType::Int64});
  Shape shape = require_const_input(n, 0, "output shape").to_ints();
  for (int64_t d : shape)
    if (d < 0) fail_invalid(n, fmt::format("shape {} has a negative dim", shape_str(shape)));
  Tensor v = fill_value(n);
  if (dtype_size(v.dtype) == 0 || v.dtype == DType::String) fail_unsupported(n, fmt::format("fill value of type {}", dtype_name(v.dtype)));
  set_output(n, 0, v.dtype, shape);
}

const OpRegistrar constant_of_shape([] {
  OpDef d;
  d.op_type = "ConstantOfShape";
  d.versions = {9, 20, 21, 23, 24, 25};
  d.infer = infer_constant_of_shape;
  d.emit = [](const Node& n, Emitter& e) {
    const Value& y = *n.outputs[0];
    e.include("onnxc/layout.h");
    e.linef("rt::fill({}, {}, {});", e.out(0), y.numel(), scalar_literal(y.dtype, fill_value(n)));
  };
  d.fold = [](const Node& n, std::vector<Tensor>& outs) {
    const Value& y = *n.outputs[0];
    Tensor v = fill_value(n);
    outs.emplace_back(y.dtype, y.shape);
    dispatch_dtype(n, y.dtype, [&](auto tag) {
      using T = typename decltype(tag)::type;
      rt::fill(outs[0].data<T>(), y.numel(), v.data<T>()[0]);
    });
  };
  return d;
}());

// ---- Range: start, start + delta, ... up to (excluding) limit ----

// Number of elements: max(ceil((limit - start) / delta), 0), exactly for integers.
int64_t range_length(const Node& n, const Tensor& start, const Tensor& limit, const Tensor& delta) {
  if (dtype_is_float(start.dtype)) {
    double s = start.float_at(0), l = limit.float_at(0), d = delta.float_at(0);
    if (d == 0) fail_invalid(n, "delta is 0");
    return std::max<int64_t>(dim_from_double(n, std::ceil((l - s) / d), "the element count"), 0);
  }
  int64_t s = start.int_at(0), l = limit.int_at(0), d = delta.int_at(0);
  if (d == 0) fail_invalid(n, "delta is 0");
  int64_t span = l - s;
  int64_t len = span / d + ((span % d != 0 && (span < 0) == (d < 0)) ? 1 : 0);
  return std::max<int64_t>(len, 0);
}

void infer_range(Node& n) {
  check_arity(n, 3, 3, 1, 1);
  require_dtype(n, 0, {DType::Float, DType::Double, DType::Int16, DType::Int32, DType::Int64});
  const DType t = input(n, 0).dtype;
  for (std::size_t i = 0; i < 3; ++i) {
    if (input(n, i).dtype != t) fail_invalid(n, "start, limit and delta must have the same type");
    if (input(n, i).numel() != 1) fail_invalid(n, fmt::format("input {} is not a scalar", i));
  }
  // The length depends on the values, so all three must be known.
  int64_t len = range_length(n, require_const_input(n, 0, "start"), require_const_input(n, 1, "limit"),
                             require_const_input(n, 2, "delta"));
  set_output(n, 0, t, {len});
}

const OpRegistrar range_op([] {
  OpDef d;
  d.op_type = "Range";
  d.versions = {11};
  d.infer = infer_range;
  d.emit = [](const Node& n, Emitter& e) {
    const Value& y = *n.outputs[0];
    e.include("onnxc/layout.h");
    e.linef("rt::range({}, {}, {}, {});", e.out(0), y.numel(), scalar_literal(y.dtype, *n.inputs[0]->constant),
            scalar_literal(y.dtype, *n.inputs[2]->constant));
  };
  d.fold = [](const Node& n, std::vector<Tensor>& outs) {
    const Value& y = *n.outputs[0];
    outs.emplace_back(y.dtype, y.shape);
    dispatch_dtype(n, y.dtype, [&](auto tag) {
      using T = typename decltype(tag)::type;
      rt::range(outs[0].data<T>(), y.numel(), n.inputs[0]->constant->data<T>()[0],
                n.inputs[2]->constant->data<T>()[0]);
    });
  };
  return d;
}());

// ---- EyeLike: ones on a diagonal, shaped like the input ----

DType eye_dtype(const Node& n) {
  if (!n.has_attr("dtype")) return input(n, 0).dtype;
  DType t;
  if (!dtype_from_int(static_cast<int32_t>(n.attr_int("dtype", 0)), &t)) fail_invalid(n, "'dtype' is not a known type");
  return t;
}

void infer_eye_like(Node& n) {
  check_arity(n, 1, 1, 1, 1);
  const Value& x = input(n, 0);
  if (x.shape.size() != 2) fail_invalid(n, fmt::format("input {} is not 2-D", shape_str(x.shape)));
  DType t = eye_dtype(n);
  if (dtype_size(t) == 0 || t == DType::String) fail_unsupported(n, fmt::format("output type {}", dtype_name(t)));
  set_output(n, 0, t, x.shape);
}

const OpRegistrar eye_like([] {
  OpDef d;
  d.op_type = "EyeLike";
  d.versions = {9, 22};
  d.infer = infer_eye_like;
  d.emit = [](const Node& n, Emitter& e) {
    const Value& y = *n.outputs[0];
    e.include("onnxc/layout.h");
    e.linef("rt::eye({}, {}, {}, {});", e.out(0), y.shape[0], y.shape[1], n.attr_int("k", 0));
  };
  d.fold = [](const Node& n, std::vector<Tensor>& outs) {
    const Value& y = *n.outputs[0];
    outs.emplace_back(y.dtype, y.shape);
    dispatch_dtype(n, y.dtype, [&](auto tag) {
      using T = typename decltype(tag)::type;
      rt::eye(outs[0].data<T>(), y.shape[0], y.shape[1], n.attr_int("k", 0));
    });
  };
  return d;
}());

// ---- Trilu: the upper or lower triangle of each matrix in the last two dims ----

struct TriluDims {
  int64_t batch, rows, cols;
};

TriluDims trilu_dims(const Node& n) {
  const Shape& s = input(n, 0).shape;
  if (s.size() < 2) fail_invalid(n, fmt::format("input {} has rank below 2", shape_str(s)));
  const int64_t rows = s[s.size() - 2], cols = s.back();
  const int64_t plane = rows * cols;
  return {plane != 0 ? shape_numel(s) / plane : 0, rows, cols};
}

void infer_trilu(Node& n) {
  check_arity(n, 1, 2, 1, 1);
  const Value& x = input(n, 0);
  trilu_dims(n);
  if (n.has_input(1)) {
    require_dtype(n, 1, {DType::Int64});
    if (input(n, 1).numel() != 1)
      fail_invalid(n, fmt::format("'k' must hold one element; it has shape {}", shape_str(input(n, 1).shape)));
  }
  set_output(n, 0, x.dtype, x.shape);
}

// The diagonal offset k as the generated code computes it: a literal when constant, else read
// from input 1 at run time (k changes which elements are kept, never the shape).
std::string trilu_offset_code(const Node& n, Emitter& e) {
  if (!n.has_input(1)) return "0";
  TriluDims t = trilu_dims(n);
  if (const Tensor* k = const_input(n, 1)) return std::to_string(rt::trilu_offset(k->int_at(0), t.rows, t.cols));
  return fmt::format("rt::trilu_offset({}[0], {}, {})", e.in(1), t.rows, t.cols);
}

const OpRegistrar trilu([] {
  OpDef d;
  d.op_type = "Trilu";
  d.versions = {14};
  d.infer = infer_trilu;
  d.inplace = true;  // elementwise
  d.emit = [](const Node& n, Emitter& e) {
    TriluDims t = trilu_dims(n);
    e.include("onnxc/layout.h");
    e.linef("rt::trilu({}, {}, {}, {}, {}, {}, {});", e.in(0), e.out(0), t.batch, t.rows, t.cols,
            trilu_offset_code(n, e), n.attr_int("upper", 1) ? "true" : "false");
  };
  d.fold = [](const Node& n, std::vector<Tensor>& outs) {
    const Value& y = *n.outputs[0];
    TriluDims t = trilu_dims(n);
    outs.emplace_back(y.dtype, y.shape);
    dispatch_dtype(n, y.dtype, [&](auto tag) {
      using T = typename decltype(tag)::type;
      const rt::index_t k = n.has_input(1) ? rt::trilu_offset(n.inputs[1]->constant->int_at(0), t.rows, t.cols) : 0;
      rt::trilu(n.inputs[0]->constant->data<T>(), outs[0].data<T>(), t.batch, t.rows, t.cols, k,
                n.attr_int("upper", 1) != 0);
    });
  };
  return d;
}());

}  // namespace
}  // namespace onnxc
