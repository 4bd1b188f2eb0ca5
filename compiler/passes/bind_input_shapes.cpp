#include "passes/passes.h"
#include "support/diagnostics.h"

#include <fmt/format.h>

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

}  // namespace onnxc
