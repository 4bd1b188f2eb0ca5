#include "passes/sequence_io.h"

#include <fmt/format.h>

#include "ops/sequence.h"
#include "passes/passes.h"
#include "support/diagnostics.h"

namespace onnxc {

namespace {

std::string element_name(const Value& sequence, std::size_t k) { return fmt::format("{}_{}", sequence.name, k); }

// A tensor input standing for element k of the sequence input s.
Value* element_input(Graph& g, Value& s, std::size_t k, const Shape& shape) {
  Value* e = g.add_unique_value(element_name(s, k));
  e->is_graph_input = true;
  e->dtype = s.dtype;
  e->shape = shape;
  e->has_shape = true;
  e->declared_rank = true;
  for (int64_t d : shape) e->declared_dims.push_back(Dim{d, {}});
  return e;
}

}  // namespace

void bind_sequence_inputs(Graph& g, const std::map<std::string, std::vector<Shape>>& shapes) {
  Diagnostics diag;
  for (const auto& [name, element_shapes] : shapes) {
    const Value* v = g.find(name);
    if (!v || !v->is_graph_input || !v->is_sequence)
      diag.add(ErrorKind::Usage, fmt::format("sequence input '{}'", name), "the model has no sequence input of that name");
  }
  std::vector<Value*> inputs;
  for (Value* v : g.inputs) {
    if (!v->is_sequence) {
      inputs.push_back(v);
      continue;
    }
    auto it = shapes.find(v->name);
    if (it == shapes.end()) {
      diag.unsupported(fmt::format("input '{}'", v->name),
                       "is a sequence whose length and element shapes are not known at compile time",
                       "give them at compile time (onnxc validate takes them from the test data)");
      continue;
    }
    for (std::size_t k = 0; k < it->second.size(); ++k) {
      v->elements.push_back(element_input(g, *v, k, it->second[k]));
      inputs.push_back(v->elements.back());
    }
    v->is_graph_input = false;  // its elements are
  }
  diag.throw_if_any();
  g.inputs = std::move(inputs);
}

void expand_sequence_outputs(Graph& g, int opset, bool fold) {
  const std::size_t first_new = g.nodes.size();
  std::vector<Value*> outputs;
  for (Value* v : g.outputs) {
    if (!v->is_sequence) {
      outputs.push_back(v);
      continue;
    }
    if (v->has_shape)
      throw CompileError(ErrorKind::Unsupported, fmt::format("output '{}'", v->name),
                         "is declared a sequence but computed as a tensor");
    for (std::size_t k = 0; k < v->elements.size(); ++k) {
      Value* out = g.add_unique_value(element_name(*v, k));
      out->is_graph_output = true;
      g.add_node(make_onnx_node("Identity", out->name, opset, -1, {v->elements[k]}, {out}));
      outputs.push_back(out);
    }
    v->is_graph_output = false;  // its elements are
  }
  g.outputs = std::move(outputs);
  g.relink();
  infer_and_fold(g, fold, first_new);
}

}  // namespace onnxc
