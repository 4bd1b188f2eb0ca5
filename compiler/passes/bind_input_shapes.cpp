#include "passes/passes.h"
#include "support/diagnostics.h"

#include <algorithm>

#include <fmt/format.h>

#include "onnxc/base.h"

namespace onnxc {

void bind_input_shapes(Graph& g, const std::map<std::string, Shape>& shapes,
                       const std::map<std::string, int64_t>& dims) {
  Diagnostics diag;
  for (auto& [name, shape] : shapes) {
    Value* v = g.find(name);
    if (!v || !v->is_graph_input)
      diag.add(ErrorKind::Usage, fmt::format("--shape {}", name), "the model has no input of that name",
               fmt::format("the inputs are: {}", [&] {
                 std::vector<std::string> names;
                 for (Value* in : g.inputs) names.push_back(in->name);
                 return fmt::format("{}", fmt::join(names, ", "));
               }()));
  }
  std::vector<std::string> unbound;
  for (Value* v : g.inputs) {
    auto it = shapes.find(v->name);
    if (it != shapes.end()) {
      const Shape& given = it->second;
      if (v->declared_rank && given.size() != v->declared_dims.size()) {
        diag.add(ErrorKind::Usage, fmt::format("--shape {}", v->name),
                 fmt::format("gives rank {} but the model declares rank {}", given.size(), v->declared_dims.size()));
        continue;
      }
      for (std::size_t d = 0; v->declared_rank && d < given.size(); ++d) {
        if (v->declared_dims[d].value >= 0 && v->declared_dims[d].value != given[d])
          diag.add(ErrorKind::Usage, fmt::format("--shape {}", v->name),
                   fmt::format("dim {} is {} in the model, not {}", d, v->declared_dims[d].value, given[d]));
      }
      v->shape = given;
      v->has_shape = true;
      continue;
    }
    if (!v->declared_rank) {
      unbound.push_back(fmt::format("{} (rank unknown)", v->name));
      continue;
    }
    Shape s;
    bool ok = true;
    for (std::size_t d = 0; d < v->declared_dims.size(); ++d) {
      const Dim& dim = v->declared_dims[d];
      if (dim.value >= 0) {
        s.push_back(dim.value);
      } else if (!dim.param.empty() && dims.count(dim.param)) {
        s.push_back(dims.at(dim.param));
      } else {
        ok = false;
        unbound.push_back(dim.param.empty() ? fmt::format("{} dim {} (unnamed)", v->name, d)
                                            : fmt::format("{} dim {} ('{}')", v->name, d, dim.param));
      }
    }
    if (ok) {
      v->shape = s;
      v->has_shape = true;
    }
  }
  if (!unbound.empty()) {
    diag.unsupported("inputs", fmt::format("these dims have no static value: {}", fmt::join(unbound, "; ")),
                     "bind them with --dim NAME=VALUE (named dims) or --shape INPUT=1x3x224x224");
  }
  diag.throw_if_any();
}

void bind_input_constants(Graph& g, const std::map<std::string, std::vector<double>>& constants) {
  Diagnostics diag;
  for (auto& [name, values] : constants) {
    Value* v = g.find(name);
    if (!v || !v->is_graph_input) {
      diag.add(ErrorKind::Usage, fmt::format("--constant {}", name), "the model has no input of that name");
      continue;
    }
    if (!v->has_shape || v->numel() != static_cast<int64_t>(values.size())) {
      diag.add(ErrorKind::Usage, fmt::format("--constant {}", name),
               fmt::format("gives {} values for an input of shape {}", values.size(),
                           v->has_shape ? shape_str(v->shape) : "(unknown)"));
      continue;
    }
    if (!dtype_is_float(v->dtype) && !dtype_is_integer(v->dtype) && v->dtype != DType::Bool) {
      diag.add(ErrorKind::Usage, fmt::format("--constant {}", name),
               fmt::format("inputs of type {} cannot be bound", dtype_name(v->dtype)));
      continue;
    }
    Tensor t(v->dtype, v->shape);
    for (std::size_t i = 0; i < values.size(); ++i) {
      double x = values[i];
      switch (v->dtype) {
        case DType::Float: t.data<float>()[i] = static_cast<float>(x); break;
        case DType::Double: t.data<double>()[i] = x; break;
        case DType::Float16: t.data<uint16_t>()[i] = rt::float_to_half(static_cast<float>(x)); break;
        case DType::BFloat16: t.data<uint16_t>()[i] = rt::float_to_bfloat16(static_cast<float>(x)); break;
        case DType::Bool: t.data<uint8_t>()[i] = x != 0; break;
        case DType::Int8: t.data<int8_t>()[i] = static_cast<int8_t>(x); break;
        case DType::Uint8: t.data<uint8_t>()[i] = static_cast<uint8_t>(x); break;
        case DType::Int16: t.data<int16_t>()[i] = static_cast<int16_t>(x); break;
        case DType::Uint16: t.data<uint16_t>()[i] = static_cast<uint16_t>(x); break;
        case DType::Int32: t.data<int32_t>()[i] = static_cast<int32_t>(x); break;
        case DType::Uint32: t.data<uint32_t>()[i] = static_cast<uint32_t>(x); break;
        case DType::Int64: t.data<int64_t>()[i] = static_cast<int64_t>(x); break;
        case DType::Uint64: t.data<uint64_t>()[i] = static_cast<uint64_t>(x); break;
        default: break;
      }
    }
    v->constant = std::make_shared<Tensor>(std::move(t));
  }
  diag.throw_if_any();
}

void take_uint16_as_bfloat16_bits(Tensor& t, DType want) {
  if (want == DType::BFloat16 && t.dtype == DType::Uint16) t.dtype = DType::BFloat16;
}

void bind_input_tensors(Graph& g, const std::map<std::string, Tensor>& constants) {
  Diagnostics diag;
  for (auto& [name, given] : constants) {
    Value* v = g.find(name);
    if (!v || !v->is_graph_input) {
      diag.add(ErrorKind::Usage, fmt::format("--constant {}", name), "the model has no input of that name");
      continue;
    }
    Tensor t = given;
    take_uint16_as_bfloat16_bits(t, v->dtype);
    if (t.dtype != v->dtype || t.shape != v->shape) {
      diag.add(ErrorKind::Usage, fmt::format("--constant {}", name),
               fmt::format("gives a tensor of type {} and shape {}; the input has type {} and shape {}",
                           dtype_name(t.dtype), shape_str(t.shape), dtype_name(v->dtype),
                           v->has_shape ? shape_str(v->shape) : "(unknown)"),
               "give a tensor of the input's type and shape, or bind the input's shape with --shape");
      continue;
    }
    v->constant = std::make_shared<Tensor>(std::move(t));
  }
  diag.throw_if_any();
}

CompileError with_pinning_advice(const Graph& g, const CompileError& e) {
  auto is_main_input = [&](const std::string& name) {
    return std::any_of(g.inputs.begin(), g.inputs.end(), [&](const Value* in) { return in->name == name; });
  };
  std::vector<Problem> problems = e.problems();
  for (Problem& p : problems) {
    if (p.inputs_to_pin.empty()) continue;
    if (!std::all_of(p.inputs_to_pin.begin(), p.inputs_to_pin.end(), is_main_input)) {
      p.inputs_to_pin.clear();
      continue;
    }
    std::vector<std::string> quoted, flags;
    for (const std::string& name : p.inputs_to_pin) {
      quoted.push_back("'" + name + "'");
      flags.push_back(fmt::format("--constant {}=VALUE.pb", name));
    }
    bool several = quoted.size() > 1;
    std::string advice = fmt::format(
        "the value comes from graph input{} {}: if {} always the same, pin {} with {} (a TensorProto file) so it is "
        "known at compile time",
        several ? "s" : "", fmt::join(quoted, ", "), several ? "they are" : "it is", several ? "them" : "it",
        fmt::join(flags, " "));
    p.fix = p.fix.empty() ? advice : advice + "; or " + p.fix;
  }
  return CompileError(std::move(problems), e.file);
}

}  // namespace onnxc
