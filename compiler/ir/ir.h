// The compiler's own intermediate representation: small, plain structs.
//
// A Graph owns its Values and Nodes. A Value is one tensor (graph input, initializer,
// node output); a Node reads and writes Values. After shape inference every Value has a
// dtype and a fully static shape.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "ir/dtype.h"

namespace onnxc {

using Shape = std::vector<int64_t>;

int64_t shape_numel(const Shape& s);           // product of dims (1 for a scalar)
std::string shape_str(const Shape& s);         // "[1, 3, 224, 224]"
std::string shape_cname(const Shape& s);       // "1x3x224x224" ("scalar" for rank 0)

// Constant tensor data. Numeric data is little-endian bytes as the generated code stores
// them (bool: one byte 0/1; float16/bfloat16: their 16-bit patterns).
struct Tensor {
  DType dtype = DType::Undefined;
  Shape shape;
  std::vector<uint8_t> bytes;
  std::vector<std::string> strings;  // only for DType::String

  Tensor() = default;
  Tensor(DType t, Shape s);  // zero-filled

  int64_t numel() const { return shape_numel(shape); }
  template <class T> T* data() { return reinterpret_cast<T*>(bytes.data()); }
  template <class T> const T* data() const { return reinterpret_cast<const T*>(bytes.data()); }
  // Element i converted to int64/double, for any numeric dtype (bool as 0/1).
  int64_t int_at(int64_t i) const;
  double float_at(int64_t i) const;
  std::vector<int64_t> to_ints() const;
};

struct Graph;
struct Node;

// One dimension as declared in the model: a number, a symbolic name, or unknown.
struct Dim {
  int64_t value = -1;   // >= 0 when known
  std::string param;    // dim_param, when symbolic
};

struct Value {
  std::string name;
  DType dtype = DType::Undefined;
  Shape shape;
  bool has_shape = false;            // shape known (after binding/inference: always)
  std::vector<Dim> declared_dims;    // graph inputs/outputs: the dims the file declares
  bool declared_rank = false;        // the file gave a shape (possibly with unknown dims)
  std::shared_ptr<const Tensor> constant;  // set for initializers and folded values
  Node* producer = nullptr;
  bool is_graph_input = false;
  bool is_graph_output = false;
  Value* outer = nullptr;            // inside a subgraph: the enclosing graph's value it names
  // A sequence whose length and element types and shapes are known at compile time: the tensor
  // values it holds, in order (dtype is their element type). It has no buffer of its own: the
  // operators on sequences are rewritten into operators on these elements (see OpDef::lower).
  bool is_sequence = false;
  std::vector<Value*> elements;
  // An optional whose presence is known at compile time: `elements` holds its content (one
  // tensor or sequence value) when present and nothing when empty. No buffer of its own either.
  bool is_optional = false;
  // A bounded tensor (outputs of NonZero, Unique, NonMaxSuppression): `shape` is an upper bound
  // and the extent along dynamic_axis is known only at run time. Its buffer is sized for the
  // bound and holds the tensor packed in its actual shape; the generated code reports that
  // shape to the caller, so such a tensor may only be an output of the model. -1: exact shape.
  int dynamic_axis = -1;
  // A string tensor whose text the model writes (Cast to string, case changes) holds it in its
  // own buffer: after the numel() pointer slots come text_bytes_per_element * numel() bytes of
  // text storage (rt::TextStorage). Operators set it in infer, to kTextBytesFromOption when no
  // bound is known at compile time (the compilation then gives it the --string-bytes option's).
  // 0: its strings point into other tensors' text (inputs, constants).
  std::size_t text_bytes_per_element = 0;
  static constexpr std::size_t kTextBytesFromOption = ~std::size_t(0);

  bool is_bounded() const { return dynamic_axis >= 0; }
  int64_t numel() const { return shape_numel(shape); }
  std::size_t text_bytes() const {
    return text_bytes_per_element == kTextBytesFromOption ? 0 : static_cast<std::size_t>(numel()) * text_bytes_per_element;
  }
  std::size_t byte_size() const { return static_cast<std::size_t>(numel()) * dtype_size(dtype) + text_bytes(); }
  bool is_constant() const { return constant != nullptr; }
};

struct Attribute {
  enum class Kind { Undefined, Float, Int, String, Tensor, Graph, Floats, Ints, Strings, Tensors, Graphs, TypeProto };
  Kind kind = Kind::Undefined;
  float f = 0;
  int64_t i = 0;
  std::string s;
  std::shared_ptr<const onnxc::Tensor> t;
  std::shared_ptr<onnxc::Graph> g;
  std::vector<float> floats;
  std::vector<int64_t> ints;
  std::vector<std::string> strings;
  std::vector<std::shared_ptr<const onnxc::Tensor>> tensors;
  std::vector<std::shared_ptr<onnxc::Graph>> graphs;
};
const char* attribute_kind_name(Attribute::Kind k);

struct Node {
  std::string name;      // may be empty in the file; never empty after loading
  std::string op_type;
  std::string domain;    // "" for ai.onnx
  int opset = 0;         // the model's opset for this node's domain
  int version = 0;       // the operator version in force (resolved since_version)
  int index = 0;         // position in the file's node list
  std::vector<Value*> inputs;   // nullptr for an omitted optional input
  std::vector<Value*> outputs;  // nullptr for an omitted optional output
  std::map<std::string, Attribute> attrs;

  bool has_input(std::size_t i) const { return i < inputs.size() && inputs[i] != nullptr; }
  bool has_output(std::size_t i) const { return i < outputs.size() && outputs[i] != nullptr; }
  bool has_attr(const std::string& n) const { return attrs.count(n) != 0; }
  int64_t attr_int(const std::string& n, int64_t dflt) const;
  float attr_float(const std::string& n, float dflt) const;
  std::string attr_string(const std::string& n, const std::string& dflt) const;
  std::vector<int64_t> attr_ints(const std::string& n, std::vector<int64_t> dflt = {}) const;
  std::vector<float> attr_floats(const std::string& n, std::vector<float> dflt = {}) const;
  std::vector<std::string> attr_strings(const std::string& n, std::vector<std::string> dflt = {}) const;
  const Attribute* attr(const std::string& n) const;
  // Setters for the attributes rewrites give the nodes they make or change.
  void set_attr_int(const std::string& n, int64_t v);
  void set_attr_float(const std::string& n, float v);
  void set_attr_string(const std::string& n, std::string v);
  void set_attr_ints(const std::string& n, std::vector<int64_t> v);
  void set_attr_strings(const std::string& n, std::vector<std::string> v);

  // Values of `owner` that this node's subgraphs read from the outer scope: dependencies as
  // real as its inputs for ordering and liveness.
  std::vector<Value*> implicit_inputs(const Graph& owner) const;

  // The graphs nested in this node's attributes (If's branches, Loop's and Scan's bodies), in
  // attribute-name order (else_branch before then_branch): the one way passes reach them.
  std::vector<Graph*> subgraphs() const;
  // Whether it has a graph attribute at all (even an empty list of graphs).
  bool has_subgraphs() const;

  // "node 3 'conv1' (Conv, opset 13)" for messages.
  std::string describe() const;
};

struct Graph {
  std::string name;
  Graph* outer = nullptr;                    // the enclosing graph, for subgraphs
  std::vector<std::unique_ptr<Value>> values;
  std::vector<std::unique_ptr<Node>> nodes;  // in execution order after sorting
  std::vector<Value*> inputs;                // real inputs (initializers excluded)
  std::vector<Value*> outputs;
  std::map<std::string, Value*> by_name;

  Value* find(const std::string& name) const;
  Value* add_value(const std::string& name);  // name must be new
  // A fresh value named after `hint` that does not collide with any existing name.
  Value* add_unique_value(const std::string& hint);
  Node* add_node(std::unique_ptr<Node> n);
  // Rebuild producers and keep nodes' pointers consistent; call after rewriting.
  void relink();
  std::vector<Node*> consumers(const Value* v) const;
  // The one node that reads v, or nullptr when v is null, a graph output, or read by none or several.
  Node* only_reader(const Value* v) const;
};

// n is the default-domain (ai.onnx) operator op_type; false for a null n.
inline bool is_op(const Node* n, const char* op_type) { return n && n->domain.empty() && n->op_type == op_type; }

// Calls f on every node of g and of the graphs nested in its nodes, depth first: each node before
// the nodes of its subgraphs.
template <class F> void for_each_nested_node(Graph& g, const F& f) {
  for (auto& node : g.nodes) {
    f(*node);
    for (Graph* sub : node->subgraphs()) for_each_nested_node(*sub, f);
  }
}

struct Model {
  std::string path;       // the file it came from, for messages
  int64_t ir_version = 0;
  int function_calls = 0;  // calls of model-local functions expanded into their bodies
  std::map<std::string, int> opsets;  // domain ("" = ai.onnx) -> version
  std::string producer_name, producer_version;
  Graph graph;
};

}  // namespace onnxc
