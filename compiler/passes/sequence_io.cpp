#include "passes/sequence_io.h"

#include <fmt/format.h>

#include "ops/sequence.h"
#include "passes/passes.h"
#include "support/diagnostics.h"

namespace onnxc {

namespace {

// A tensor input of the main graph for the k-th tensor that `holder` (a sequence or optional
// input) holds.
Value* element_input(Graph& g, const Value& holder, std::size_t k, const Shape& shape) {
  Value* e = g.add_unique_value(fmt::format("{}_{}", holder.name, k));
  e->is_graph_input = true;
  e->dtype = holder.dtype;
  e->shape = shape;
  e->has_shape = true;
  e->declared_rank = true;
  for (int64_t d : shape) e->declared_dims.push_back(Dim{d, {}});
  return e;
}

// A sequence of tensor inputs holder_0, holder_1, ... with the given shapes; `sequence` is the
// holder itself (a sequence input) or a new value (the content of an optional input).
void bind_sequence(Graph& g, const Value& holder, Value& sequence, const std::vector<Shape>& shapes,
                   std::vector<Value*>& inputs) {
  sequence.is_sequence = true;
  sequence.dtype = holder.dtype;
  for (std::size_t k = 0; k < shapes.size(); ++k) {
    sequence.elements.push_back(element_input(g, holder, k, shapes[k]));
    inputs.push_back(sequence.elements.back());
  }
}

// The tensor input holder_0 standing for a present optional's tensor, with its declared dims
// (bound to numbers later, like any input's).
Value* optional_tensor_input(Graph& g, const Value& holder) {
  Value* t = g.add_unique_value(fmt::format("{}_0", holder.name));
  t->is_graph_input = true;
  t->dtype = holder.dtype;
  t->declared_rank = holder.declared_rank;
  t->declared_dims = holder.declared_dims;
  return t;
}

}  // namespace

void bind_structured_inputs(Graph& g, const std::map<std::string, std::vector<Shape>>& sequence_shapes,
                            const std::set<std::string>& empty_optionals) {
  Diagnostics diag;
  for (const auto& [name, shapes] : sequence_shapes) {
    const Value* v = g.find(name);
    if (!v || !v->is_graph_input || (!v->is_sequence && !v->is_optional))
      diag.add(ErrorKind::Usage, fmt::format("sequence input '{}'", name), "the model has no sequence input of that name");
  }
  for (const std::string& name : empty_optionals) {
    const Value* v = g.find(name);
    if (!v || !v->is_graph_input || !v->is_optional)
      diag.add(ErrorKind::Usage, fmt::format("empty optional input '{}'", name),
               "the model has no optional input of that name");
  }
  std::vector<Value*> inputs;
  for (Value* v : g.inputs) {
    if (!v->is_sequence && !v->is_optional) {
      inputs.push_back(v);
      continue;
    }
    v->is_graph_input = false;  // the tensors it holds are
    auto shapes = sequence_shapes.find(v->name);
    if (v->is_optional) {
      if (empty_optionals.count(v->name)) continue;
      if (shapes != sequence_shapes.end()) {
        Value* content = g.add_unique_value(v->name + "_sequence");
        bind_sequence(g, *v, *content, shapes->second, inputs);
        v->elements = {content};
      } else {
        v->elements = {optional_tensor_input(g, *v)};
        inputs.push_back(v->elements[0]);
      }
      continue;
    }
    if (shapes == sequence_shapes.end()) {
      diag.unsupported(fmt::format("input '{}'", v->name),
                       "is a sequence whose length and element shapes are not known at compile time",
                       fmt::format("bind them with --sequence {}=DIMS,DIMS,... (onnxc validate takes them from "
                                   "the test data)",
                                   v->name));
      continue;
    }
    bind_sequence(g, *v, *v, shapes->second, inputs);
  }
  diag.throw_if_any();
  g.inputs = std::move(inputs);
}

void expand_structured_outputs(Graph& g, int opset, bool fold) {
  const std::size_t first_new = g.nodes.size();
  std::vector<Value*> outputs;
  for (Value* v : g.outputs) {
    if (!v->is_sequence && !v->is_optional) {
      outputs.push_back(v);
      continue;
    }
    if (v->has_shape)
      throw CompileError(ErrorKind::Unsupported, fmt::format("output '{}'", v->name),
                         "is declared a sequence or optional but computed as a tensor");
    std::vector<Value*> tensors;
    collect_tensors(*v, tensors);
    for (std::size_t k = 0; k < tensors.size(); ++k) {
      Value* out = g.add_unique_value(fmt::format("{}_{}", v->name, k));
      out->is_graph_output = true;
      g.add_node(make_onnx_node("Identity", out->name, opset, -1, {tensors[k]}, {out}));
      outputs.push_back(out);
    }
    v->is_graph_output = false;  // the tensors it holds are
  }
  g.outputs = std::move(outputs);
  g.relink();
  infer_and_fold(g, fold, first_new);
}

}  // namespace onnxc
