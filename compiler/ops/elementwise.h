// Shared machinery for elementwise operators: one functor (runtime-support eltwise.h,
// eltwise_math.h, cast.h) serves both constant folding (called here) and the generated code
// (named in the text), and one broadcasting path serves every arity.
//
// Most operators are declared with the builders at the end (unary_op, binary_op): an element
// type list, a functor and the ONNX versions. See ops/TEMPLATE.cpp.txt.
#pragma once

#include <array>
#include <cstdint>
#include <functional>
#include <string>
#include <tuple>
#include <type_traits>
#include <utility>
#include <vector>

#include "onnxc/eltwise.h"
#include "onnxc/eltwise_math.h"
#include "ops/emitter.h"
#include "ops/op.h"

namespace onnxc {

// ---- element type lists: one list says which types infer accepts and fold instantiates ----

template <class... T> struct TypeList {};

template <class... L> struct ConcatTypes;
template <class... A> struct ConcatTypes<TypeList<A...>> { using type = TypeList<A...>; };
template <class... A, class... B, class... Rest>
struct ConcatTypes<TypeList<A...>, TypeList<B...>, Rest...> : ConcatTypes<TypeList<A..., B...>, Rest...> {};

using FloatTypes = TypeList<float, double, rt::float16, rt::bfloat16>;
using SignedIntTypes = TypeList<int8_t, int16_t, int32_t, int64_t>;
using UnsignedIntTypes = TypeList<uint8_t, uint16_t, uint32_t, uint64_t>;
using IntTypes = ConcatTypes<SignedIntTypes, UnsignedIntTypes>::type;
using SignedTypes = ConcatTypes<FloatTypes, SignedIntTypes>::type;  // floats and signed integers
using NumericTypes = ConcatTypes<FloatTypes, IntTypes>::type;
using BoolTypes = TypeList<bool>;
using AllTypes = ConcatTypes<NumericTypes, BoolTypes>::type;  // every type generated code computes on
// The 8-bit floats, which generated code holds and converts (Cast, QuantizeLinear, DequantizeLinear) only.
using Float8Types = TypeList<rt::float8e4m3fn, rt::float8e4m3fnuz, rt::float8e5m2, rt::float8e5m2fnuz>;
using CastTypes = ConcatTypes<AllTypes, Float8Types>::type;

template <class T> struct DTypeOf;
template <> struct DTypeOf<float> { static constexpr DType value = DType::Float; };
template <> struct DTypeOf<double> { static constexpr DType value = DType::Double; };
template <> struct DTypeOf<rt::float16> { static constexpr DType value = DType::Float16; };
template <> struct DTypeOf<rt::bfloat16> { static constexpr DType value = DType::BFloat16; };
template <> struct DTypeOf<int8_t> { static constexpr DType value = DType::Int8; };
template <> struct DTypeOf<int16_t> { static constexpr DType value = DType::Int16; };
template <> struct DTypeOf<int32_t> { static constexpr DType value = DType::Int32; };
template <> struct DTypeOf<int64_t> { static constexpr DType value = DType::Int64; };
template <> struct DTypeOf<uint8_t> { static constexpr DType value = DType::Uint8; };
template <> struct DTypeOf<uint16_t> { static constexpr DType value = DType::Uint16; };
template <> struct DTypeOf<uint32_t> { static constexpr DType value = DType::Uint32; };
template <> struct DTypeOf<uint64_t> { static constexpr DType value = DType::Uint64; };
template <> struct DTypeOf<bool> { static constexpr DType value = DType::Bool; };
template <> struct DTypeOf<rt::float8e4m3fn> { static constexpr DType value = DType::Float8E4M3FN; };
template <> struct DTypeOf<rt::float8e4m3fnuz> { static constexpr DType value = DType::Float8E4M3FNUZ; };
template <> struct DTypeOf<rt::float8e5m2> { static constexpr DType value = DType::Float8E5M2; };
template <> struct DTypeOf<rt::float8e5m2fnuz> { static constexpr DType value = DType::Float8E5M2FNUZ; };

template <class... T> std::vector<DType> dtypes_of(TypeList<T...>) { return {DTypeOf<T>::value...}; }

// Fails (unsupported) naming the element type and the supported ones.
[[noreturn]] void fail_dtype(const Node& n, const std::string& what, DType t, const std::vector<DType>& allowed);
// Fails (unsupported) unless input i's element type is one of `allowed`.
void require_input_dtype(const Node& n, std::size_t i, const std::vector<DType>& allowed);
// Fails (invalid) unless input i has the element type of input `like`.
void require_same_dtype(const Node& n, std::size_t i, std::size_t like);
template <class L> void require_input_dtype(const Node& n, std::size_t i) { require_input_dtype(n, i, dtypes_of(L{})); }

// Runs f(TypeTag<T>{}) for the T of list L whose dtype is t; fails (unsupported) otherwise.
// Only the types of L are instantiated, so f may use operations other types lack.
template <class... T, class F> void dispatch_in(const Node& n, DType t, TypeList<T...> list, F&& f) {
  const bool found = ((t == DTypeOf<T>::value ? (f(TypeTag<T>{}), true) : false) || ...);
  if (!found) fail_dtype(n, "element type", t, dtypes_of(list));
}

// ---- functors: the same functor as C++ text (generated code) and as an object (folding) ----
//
// A functor source is a callable `source(node, use)` that calls `use(functor, text)` with the
// functor object for node's attributes and the C++ expression that constructs the same functor
// (e.g. rt::Elu{1.0f} and "rt::Elu{1.f}"). It may pick the functor type by attribute (Mod's
// fmod) and fails on invalid attributes; the op builders call it from infer to validate.

template <class F> struct Functor {
  std::function<std::string(const Node&)> text;  // e.g. "rt::Elu{1.f}"
  std::function<F(const Node&)> make;            // e.g. rt::Elu{1.0f}
  template <class Use> void operator()(const Node& n, Use&& use) const { use(make(n), text(n)); }
};

// A float attribute that becomes a functor field. Selu-1 had other defaults than Selu-6: before
// version `default_since` the default is `older_default`.
struct FloatAttr {
  const char* name;
  float default_value;
  int default_since = 0;
  float older_default = 0;
  float value(const Node& n) const {
    return n.attr_float(name, n.version < default_since ? older_default : default_value);
  }
};

// A functor without fields, written `cname{}`.
template <class F> Functor<F> functor(const char* cname) {
  return {[cname](const Node&) { return std::string(cname) + "{}"; }, [](const Node&) { return F{}; }};
}

// A functor whose fields are the given float attributes, in declaration order: `cname{a, b}`.
template <class F, std::size_t N> Functor<F> functor(const char* cname, const FloatAttr (&attrs)[N]) {
  std::array<FloatAttr, N> fields;
  for (std::size_t i = 0; i < N; ++i) fields[i] = attrs[i];
  auto values = [fields](const Node& n) {
    std::array<float, N> v;
    for (std::size_t i = 0; i < N; ++i) v[i] = fields[i].value(n);
    return v;
  };
  auto text = [cname, values](const Node& n) {
    std::vector<std::string> literals;
    for (float v : values(n)) literals.push_back(float_literal(v));
    return fmt::format("{}{{{}}}", cname, fmt::join(literals, ", "));
  };
  auto make = [values](const Node& n) {
    return std::apply([](auto... v) { return F{v...}; }, values(n));
  };
  return {text, make};
}

// The C++ text of the functor `source` gives for node n.
template <class Source> std::string functor_text(const Node& n, const Source& source) {
  std::string text;
  source(n, [&](auto&&, const std::string& t) { text = t; });
  return text;
}

// ---- shapes ----

// Output shape of a two-input op. From version 7 numpy multidirectional broadcasting; before,
// the shapes must match unless broadcast=1, which broadcasts input 1 onto input 0 (see
// binary_operand_shapes).
Shape binary_output_shape(const Node& n);
// The shapes inputs 0 and 1 are read with: their own, except input 1 under legacy broadcasting
// (version < 7, broadcast=1), which is padded with trailing 1s so that it starts at `axis`.
std::pair<Shape, Shape> binary_operand_shapes(const Node& n);
// numpy broadcasting of every present input's shape.
Shape broadcast_inputs(const Node& n);
// Whether a binary op reads both inputs with their own shapes (not under legacy broadcasting,
// which aligns input 1 at `axis`).
bool reads_own_shapes(const Node& n);
// Unidirectional broadcasting: `from` must broadcast to `to` (PRelu's slope onto X).
void require_unidirectional(const Node& n, const Shape& from, const Shape& to, const char* what);

// ---- emitting ----

// One input of an elementwise call: its pointer expression and the shape it is read with
// (broadcast to the output's shape). `label` names its strides array when it needs one.
struct Operand {
  std::string ptr;
  Shape shape;
  std::string label;
};

// Writes elementwise calls into one node's block, picking the cheapest kernel the shapes
// allow and declaring each constant array once.
class EltwiseWriter {
 public:
  EltwiseWriter(Emitter& e, Shape out);
  void map(const std::string& x, const std::string& y, const std::string& functor);
  void zip(const Operand& a, const Operand& b, const std::string& y, const std::string& functor);
  void zip3(const Operand& c, const Operand& a, const Operand& b, const std::string& y, const std::string& functor);

 private:
  void flat(int64_t n, int inputs, const std::function<std::string(const std::string&, const std::string&)>& call);
  void broadcast(const std::vector<const Operand*>& operands, int64_t work,
                 const std::function<std::string(const std::vector<std::string>&, const std::string&, const std::string&)>& call);
  std::string strides(const Operand& o);
  std::string shape();
  Emitter& e_;
  Shape out_;
  std::vector<std::string> declared_;
};

// y = f(x) over every element.
void emit_unary(const Node& n, Emitter& e, const std::string& functor);
// y = f(a, b) with broadcasting (legacy broadcasting before version 7).
void emit_binary(const Node& n, Emitter& e, const std::string& functor);
// y = f(c, a, b) with numpy broadcasting of all three.
void emit_ternary(const Node& n, Emitter& e, const std::string& functor);

// ---- folding, with the kernels the generated code calls ----

// How a binary op reads its two inputs for a given output shape.
enum class BinaryForm { Same, ScalarB, ScalarA, Broadcast };
BinaryForm binary_form(const Shape& a, const Shape& b, const Shape& out);

std::vector<rt::index_t> to_index_vector(const std::vector<int64_t>& v);

template <class A, class B, class Y, class F>
void fold_zip(const A* a, const Shape& a_shape, const B* b, const Shape& b_shape, Y* y, const Shape& y_shape, F f) {
  rt::index_t n = shape_numel(y_shape);
  switch (binary_form(a_shape, b_shape, y_shape)) {
    case BinaryForm::Same: return rt::zip(a, b, y, n, f);
    case BinaryForm::ScalarB: return rt::zip_scalar_b(a, b, y, n, f);
    case BinaryForm::ScalarA: return rt::zip_scalar_a(a, b, y, n, f);
    case BinaryForm::Broadcast: {
      if (n == 0) return;
      auto as = to_index_vector(broadcast_strides(a_shape, y_shape));
      auto bs = to_index_vector(broadcast_strides(b_shape, y_shape));
      auto shape = to_index_vector(y_shape);
      return rt::zip_broadcast(a, as.data(), b, bs.data(), y, shape.data(), static_cast<int>(shape.size()), f);
    }
  }
}

// Computes y = f(a, b) on constant tensors with the same kernels the generated code uses.
template <class A, class B, class Y, class F>
void fold_binary(const Tensor& a, const Tensor& b, Tensor& y, F f) {
  fold_zip(a.data<A>(), a.shape, b.data<B>(), b.shape, y.data<Y>(), y.shape, f);
}

// As fold_binary, reading the inputs of node n as emit_binary does (legacy broadcasting).
template <class A, class B, class Y, class F>
void fold_binary_node(const Node& n, Tensor& y, F f) {
  auto [a_shape, b_shape] = binary_operand_shapes(n);
  fold_zip(n.inputs[0]->constant->data<A>(), a_shape, n.inputs[1]->constant->data<B>(), b_shape, y.data<Y>(),
           y.shape, f);
}

template <class C, class A, class B, class Y, class F>
void fold_ternary(const Tensor& c, const Tensor& a, const Tensor& b, Tensor& y, F f) {
  rt::index_t n = y.numel();
  if (c.shape == y.shape && a.shape == y.shape && b.shape == y.shape)
    return rt::zip3(c.data<C>(), a.data<A>(), b.data<B>(), y.data<Y>(), n, f);
  if (n == 0) return;
  auto cs = to_index_vector(broadcast_strides(c.shape, y.shape));
  auto as = to_index_vector(broadcast_strides(a.shape, y.shape));
  auto bs = to_index_vector(broadcast_strides(b.shape, y.shape));
  auto shape = to_index_vector(y.shape);
  rt::zip3_broadcast(c.data<C>(), cs.data(), a.data<A>(), as.data(), b.data<B>(), bs.data(), y.data<Y>(), shape.data(),
                     static_cast<int>(shape.size()), f);
}

// The single output tensor a fold hook fills, shaped as inferred.
Tensor& fold_output(const Node& n, std::vector<Tensor>& outs);

// An optional constant input's data for a fold hook, or nullptr when the input is absent.
template <class T> const T* const_data_or_null(const Node& n, std::size_t i) {
  return n.has_input(i) ? n.inputs[i]->constant->data<T>() : nullptr;
}

// ---- operator builders ----

// Output element type rules: the input's type, or bool (predicates, comparisons).
struct SameAsInput {
  template <class T> using type = T;
  static DType dtype(DType input) { return input; }
};
struct BoolOutput {
  template <class T> using type = bool;
  static DType dtype(DType) { return DType::Bool; }
};

// y = f(x) for an input type in Types; `source` gives f (see Functor).
template <class Types, class Out = SameAsInput, class Source>
OpDef unary_op(const char* op_type, std::vector<int> versions, Source source) {
  OpDef d;
  d.op_type = op_type;
  d.versions = std::move(versions);
  d.inplace = std::is_same<Out, SameAsInput>::value;
  d.infer = [source](Node& n) {
    check_arity(n, 1, 1, 1, 1);
    require_input_dtype<Types>(n, 0);
    source(n, [](auto&&, const std::string&) {});  // validates the attributes
    set_output(n, 0, Out::dtype(n.inputs[0]->dtype), n.inputs[0]->shape);
  };
  d.emit = [source](const Node& n, Emitter& e) { emit_unary(n, e, functor_text(n, source)); };
  d.elementwise_form = [source](const Node& n) -> std::optional<ElementwiseForm> {
    return ElementwiseForm{functor_text(n, source), 1};
  };
  d.fold = [source](const Node& n, std::vector<Tensor>& outs) {
    Tensor& y = fold_output(n, outs);
    const Tensor& x = *n.inputs[0]->constant;
    source(n, [&](auto f, const std::string&) {
      dispatch_in(n, x.dtype, Types{}, [&](auto tag) {
        using T = typename decltype(tag)::type;
        rt::map(x.data<T>(), y.data<typename Out::template type<T>>(), y.numel(), f);
      });
    });
  };
  return d;
}

// y = f(a, b) for inputs of one type in Types, broadcasting like numpy (before version 7:
// legacy `broadcast`/`axis` attributes); `source` gives f (see Functor).
template <class Types, class Out = SameAsInput, class Source>
OpDef binary_op(const char* op_type, std::vector<int> versions, Source source) {
  OpDef d;
  d.op_type = op_type;
  d.versions = std::move(versions);
  d.inplace = std::is_same<Out, SameAsInput>::value;
  d.infer = [source](Node& n) {
    check_arity(n, 2, 2, 1, 1);
    require_input_dtype<Types>(n, 0);
    require_same_dtype(n, 1, 0);
    source(n, [](auto&&, const std::string&) {});  // validates the attributes
    set_output(n, 0, Out::dtype(n.inputs[0]->dtype), binary_output_shape(n));
  };
  d.emit = [source](const Node& n, Emitter& e) { emit_binary(n, e, functor_text(n, source)); };
  d.elementwise_form = [source](const Node& n) -> std::optional<ElementwiseForm> {
    if (!reads_own_shapes(n)) return std::nullopt;
    return ElementwiseForm{functor_text(n, source), 2};
  };
  d.fold = [source](const Node& n, std::vector<Tensor>& outs) {
    Tensor& y = fold_output(n, outs);
    source(n, [&](auto f, const std::string&) {
      dispatch_in(n, n.inputs[0]->dtype, Types{}, [&](auto tag) {
        using T = typename decltype(tag)::type;
        fold_binary_node<T, T, typename Out::template type<T>>(n, y, f);
      });
    });
  };
  return d;
}

}  // namespace onnxc
