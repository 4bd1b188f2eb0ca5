#include "frontend/load.h"

#include <algorithm>
#include <climits>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <limits>
#include <map>
#include <optional>
#include <set>

#include <fmt/format.h>
#include <google/protobuf/io/coded_stream.h>
#include <google/protobuf/wire_format_lite.h>

#include "frontend/functions.h"
#include "onnx.pb.h"
#include "support/diagnostics.h"

namespace fs = std::filesystem;

namespace onnxc {
namespace {

using AP = onnx::AttributeProto;

// Protobuf nests three messages per subgraph level (Graph > Node > Attribute > Graph); leave
// room beyond LoadOptions::max_graph_depth so our own check, with its clearer message, fires
// first, while a hostile file still cannot recurse without bound.
constexpr int kProtobufRecursionLimit = 1000;

std::string read_file(const std::string& path, std::size_t max_bytes) {
  std::error_code ec;
  if (!fs::is_regular_file(path, ec))
    throw CompileError(ErrorKind::Invalid, "", fs::exists(path, ec) ? "is not a regular file" : "does not exist",
                       "check the path");
  uint64_t size = fs::file_size(path, ec);
  if (ec) throw CompileError(ErrorKind::Invalid, "", "cannot be read: " + ec.message(), "check the permissions");
  if (size > max_bytes)
    throw CompileError(ErrorKind::Unsupported, "",
                       fmt::format("is {} bytes; onnxc reads model files up to {} bytes", size, max_bytes),
                       "move the weights to external data files");
  std::ifstream f(path, std::ios::binary);
  std::string data(static_cast<std::size_t>(size), '\0');
  if (!f.read(data.data(), static_cast<std::streamsize>(size)))
    throw CompileError(ErrorKind::Invalid, "", "cannot be read", "check the permissions");
  return data;
}

// Parses a serialized message with an explicit recursion limit. False on any damage.
template <class Message> bool parse_bounded(const std::string& bytes, Message* out) {
  if (bytes.size() > static_cast<std::size_t>(INT_MAX)) return false;
  google::protobuf::io::CodedInputStream in(reinterpret_cast<const uint8_t*>(bytes.data()),
                                            static_cast<int>(bytes.size()));
  in.SetRecursionLimit(kProtobufRecursionLimit);
  return out->ParseFromCodedStream(&in) && in.ConsumedEntireMessage();
}

// How deep a serialized ModelProto nests: the most messages open at once (the model itself at
// 1) and the most subgraphs (graphs inside the main graph) among them. Walks the wire format
// with its own stack, following the fields onnx.proto declares as messages, so a file nested
// past the parser's recursion limit can be measured; nullopt if the bytes are damaged.
struct Nesting {
  int messages = 0;
  int subgraphs = 0;
};

std::optional<Nesting> measure_nesting(const std::string& bytes) {
  using google::protobuf::Descriptor;
  using google::protobuf::FieldDescriptor;
  struct Open {
    const Descriptor* type;
    std::size_t end;
  };
  const Descriptor* graph = onnx::GraphProto::descriptor();
  std::vector<Open> open{{onnx::ModelProto::descriptor(), bytes.size()}};
  int graphs_open = 0;
  Nesting deepest{1, 0};
  auto varint = [&](std::size_t& at, uint64_t* v) {
    *v = 0;
    for (int shift = 0; shift < 64 && at < bytes.size(); shift += 7) {
      uint8_t b = static_cast<uint8_t>(bytes[at++]);
      *v |= uint64_t(b & 0x7f) << shift;
      if (!(b & 0x80)) return true;
    }
    return false;
  };
  for (std::size_t at = 0; !open.empty();) {
    if (at == open.back().end) {
      graphs_open -= open.back().type == graph;
      open.pop_back();
      continue;
    }
    uint64_t key = 0, length = 0;
    if (!varint(at, &key)) return std::nullopt;
    switch (key & 7) {
      case 0:
        if (!varint(at, &length)) return std::nullopt;
        break;
      case 1: at += 8; break;
      case 5: at += 4; break;
      case 2: {
        if (!varint(at, &length) || length > open.back().end - at) return std::nullopt;
        const FieldDescriptor* f = open.back().type->FindFieldByNumber(static_cast<int>(key >> 3));
        if (f && f->type() == FieldDescriptor::TYPE_MESSAGE) {
          open.push_back({f->message_type(), at + length});
          graphs_open += f->message_type() == graph;
          deepest.messages = std::max(deepest.messages, static_cast<int>(open.size()));
          deepest.subgraphs = std::max(deepest.subgraphs, graphs_open - 1);
          continue;
        }
        at += length;
        break;
      }
      default: return std::nullopt;  // groups: not in onnx.proto
    }
    if (at > open.back().end) return std::nullopt;
  }
  return deepest;
}

// Multiplies dims, refusing negative dims and overflow. Returns -1 on failure.
int64_t checked_numel(const Shape& shape) {
  int64_t n = 1;
  for (int64_t d : shape) {
    if (d < 0) return -1;
    if (d != 0 && n > std::numeric_limits<int64_t>::max() / d) return -1;
    n *= d;
  }
  return n;
}

bool all_digits(const std::string& s) {
  return !s.empty() && s.size() <= 19 && s.find_first_not_of("0123456789") == std::string::npos;
}

// The repeated field that carries elements of `dt` when raw_data is not used (TensorProto docs).
const char* typed_field_for(DType dt) {
  switch (dt) {
    case DType::Float:
    case DType::Complex64: return "float_data";
    case DType::Double:
    case DType::Complex128: return "double_data";
    case DType::Int64: return "int64_data";
    case DType::Uint32:
    case DType::Uint64: return "uint64_data";
    case DType::String: return "string_data";
    default: return "int32_data";
  }
}

// Names of the value fields a TensorProto populates.
std::vector<std::string> populated_fields(const onnx::TensorProto& t) {
  std::vector<std::string> f;
  if (t.has_raw_data()) f.push_back("raw_data");
  if (t.float_data_size()) f.push_back("float_data");
  if (t.double_data_size()) f.push_back("double_data");
  if (t.int32_data_size()) f.push_back("int32_data");
  if (t.int64_data_size()) f.push_back("int64_data");
  if (t.uint64_data_size()) f.push_back("uint64_data");
  if (t.string_data_size()) f.push_back("string_data");
  return f;
}

// Attribute types whose value field the AttributeProto populates.
std::vector<AP::AttributeType> populated_fields(const AP& a) {
  std::vector<AP::AttributeType> f;
  if (a.has_f()) f.push_back(AP::FLOAT);
  if (a.has_i()) f.push_back(AP::INT);
  if (a.has_s()) f.push_back(AP::STRING);
  if (a.has_t()) f.push_back(AP::TENSOR);
  if (a.has_g()) f.push_back(AP::GRAPH);
  if (a.has_sparse_tensor()) f.push_back(AP::SPARSE_TENSOR);
  if (a.has_tp()) f.push_back(AP::TYPE_PROTO);
  if (a.floats_size()) f.push_back(AP::FLOATS);
  if (a.ints_size()) f.push_back(AP::INTS);
  if (a.strings_size()) f.push_back(AP::STRINGS);
  if (a.tensors_size()) f.push_back(AP::TENSORS);
  if (a.graphs_size()) f.push_back(AP::GRAPHS);
  if (a.sparse_tensors_size()) f.push_back(AP::SPARSE_TENSORS);
  if (a.type_protos_size()) f.push_back(AP::TYPE_PROTOS);
  return f;
}

std::string attribute_type_name(AP::AttributeType t) {
  std::string s = AP::AttributeType_Name(t);
  std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return std::tolower(c); });
  return s.empty() ? fmt::format("type {}", static_cast<int>(t)) : s;
}

// True if `rel` (relative) stays inside the folder it is resolved against.
bool stays_inside(const fs::path& rel) {
  if (rel.empty() || rel.is_absolute() || rel.has_root_name()) return false;
  for (const auto& part : rel)
    if (part == "..") return false;
  return true;
}

class Loader {
 public:
  Loader(std::string name, fs::path dir, const LoadOptions& opts)
      : name_(std::move(name)), dir_(std::move(dir)), opts_(opts) {
    if (dir_.empty()) dir_ = ".";
  }

  Model load(const std::string& bytes) {
    if (bytes.empty())
      throw CompileError(ErrorKind::Invalid, "", "the file is empty", "pass an ONNX model file (.onnx)");
    onnx::ModelProto proto;
    if (!parse_bounded(bytes, &proto)) {
      std::optional<Nesting> nesting = measure_nesting(bytes);
      if (nesting && nesting->messages > kProtobufRecursionLimit && nesting->subgraphs > opts_.max_graph_depth)
        throw CompileError(
            ErrorKind::Unsupported, "",
            fmt::format("subgraphs are nested {} levels deep, beyond the parser's limit of {} nested protobuf messages "
                        "(about {} levels of subgraphs: each level is a graph, a node and an attribute)",
                        nesting->subgraphs, kProtobufRecursionLimit, kProtobufRecursionLimit / 3),
            fmt::format("flatten the control flow: onnxc compiles subgraphs nested up to {} levels",
                        opts_.max_graph_depth));
      if (nesting && nesting->messages > kProtobufRecursionLimit)
        throw CompileError(ErrorKind::Unsupported, "",
                           fmt::format("protobuf messages are nested {} deep, beyond the parser's limit of {}",
                                       nesting->messages, kProtobufRecursionLimit),
                           "re-export the model; types nested this deep (sequences of sequences ...) are not "
                           "supported");
      throw CompileError(ErrorKind::Invalid, "", "the file is not a valid ONNX protobuf (truncated or not a model)",
                         "re-export the model; check the file was copied completely");
    }
    Model m;
    m.path = name_;
    convert_model(proto, m);
    diag_.throw_if_any();
    return m;
  }

  Tensor tensor(const onnx::TensorProto& t, const std::string& where) { return convert_tensor(t, where); }
  void finish() { diag_.throw_if_any(); }

 private:
  // ---- model ----

  void convert_model(onnx::ModelProto& p, Model& m) {
    m.ir_version = p.ir_version();
    m.producer_name = p.producer_name();
    m.producer_version = p.producer_version();
    ir_version_ = p.ir_version();
    if (!p.has_ir_version())
      diag_.invalid("model", "ir_version is missing", "every ONNX model must state its IR version");
    else if (p.ir_version() < 3)
      diag_.unsupported("model", fmt::format("IR version {} is too old (onnxc reads IR 3 and later)", p.ir_version()),
                        "convert the model with onnx.version_converter to a newer opset");
    else if (p.ir_version() > 13)
      diag_.unsupported("model", fmt::format("IR version {} is newer than onnxc knows (up to 13)", p.ir_version()),
                        "export with an older IR version or upgrade onnxc");
    read_opsets(p, m);
    if (!p.has_graph()) {
      diag_.invalid("model", "the model has no graph");
      return;
    }
    opsets_ = &m.opsets;
    expand_functions(p, m.opsets, diag_, functions_);
    m.function_calls = functions_.calls;
    convert_graph(p.graph(), m.graph, nullptr, 0);
  }

  void read_opsets(const onnx::ModelProto& p, Model& m) {
    if (p.opset_import_size() == 0) {
      diag_.invalid("model", "opset_import is empty", "the model must import the ai.onnx opset it uses");
      return;
    }
    for (const auto& os : p.opset_import()) {
      std::string domain = os.domain() == "ai.onnx" ? "" : os.domain();
      std::string label = domain.empty() ? "ai.onnx" : domain;
      if (m.opsets.count(domain)) {
        diag_.invalid("model", fmt::format("opset_import lists domain '{}' twice", label),
                      "keep one entry per domain");
        continue;
      }
      if (!os.has_version() || os.version() < 1 || os.version() > INT_MAX) {
        diag_.invalid("model", fmt::format("opset_import of '{}' has no valid version ({})", label, os.version()),
                      "opset versions start at 1");
        continue;
      }
      // No check of the IR version against the opset: ONNX's own test models pair IR 5 with
      // opset 11, so exporters evidently may stamp an older IR than the opset's release had.
      m.opsets[domain] = static_cast<int>(os.version());
    }
  }

  // ---- graphs ----

  void convert_graph(const onnx::GraphProto& gp, Graph& g, Graph* outer, int depth) {
    std::string gwhere = depth == 0 ? "graph" : fmt::format("subgraph '{}'", gp.name());
    if (depth > opts_.max_graph_depth) {
      diag_.unsupported(gwhere, fmt::format("subgraphs are nested more than {} levels deep", opts_.max_graph_depth),
                        "flatten the control flow");
      return;
    }
    g.name = gp.name();
    g.outer = outer;
    if (gp.name().empty()) diag_.invalid(gwhere, "has no name", "every graph must be named");
    refuse_map_operators(gp);
    add_initializers(gp, g, gwhere);
    add_sparse_initializers(gp, g, gwhere);
    add_inputs(gp, g, gwhere, depth);
    std::vector<const onnx::NodeProto*> protos = add_nodes(gp, g, depth);
    link_node_inputs(g, protos);
    add_outputs(gp, g, depth);
    check_value_info(gp, g);
    g.relink();
    sort_topologically(g, gwhere);
  }

  // The ai.onnx.ml operators whose inputs or outputs are maps (onnxc has no map values): named
  // here, before their map-typed graph inputs and outputs are refused for their type alone.
  void refuse_map_operators(const onnx::GraphProto& gp) {
    static const std::map<std::string, std::pair<const char*, const char*>> map_ops = {
        {"ZipMap", {"makes a sequence of maps (one a row), and onnxc has no map values",
                    "take the scores tensor ZipMap reads as the output (skl2onnx: options={'zipmap': False})"}},
        {"DictVectorizer", {"reads a map, and onnxc has no map values",
                            "give the model the dense [N, C] features in the vocabulary's order"}},
        {"CastMap", {"reads a map, and onnxc has no map values", "give the model the values as a tensor"}}};
    for (int i = 0; i < gp.node_size(); ++i) {
      const auto& np = gp.node(i);
      auto it = map_ops.find(np.op_type());
      if (np.domain() != "ai.onnx.ml" || it == map_ops.end()) continue;
      const std::string name = np.name().empty() ? fmt::format("{}_{}", np.op_type(), i) : np.name();
      diag_.unsupported(fmt::format("node {} '{}' (ai.onnx.ml.{})", i, name, np.op_type()), it->second.first,
                        it->second.second);
    }
  }

  bool new_initializer_name(const std::string& name, Graph& g, const std::string& gwhere, const char* what) {
    if (name.empty()) {
      diag_.invalid(gwhere, fmt::format("{} has no name", what), "every initializer must be named");
      return false;
    }
    if (g.find(name)) {
      diag_.invalid(fmt::format("initializer '{}'", name), "is defined twice",
                    "initializer names must be unique (dense and sparse together)");
      return false;
    }
    return true;
  }

  Value* add_constant(Graph& g, const std::string& name, Tensor t) {
    Value* v = g.add_value(name);
    v->dtype = t.dtype;
    v->shape = t.shape;
    v->has_shape = true;
    v->constant = std::make_shared<Tensor>(std::move(t));
    return v;
  }

  void add_initializers(const onnx::GraphProto& gp, Graph& g, const std::string& gwhere) {
    for (const auto& init : gp.initializer()) {
      if (!new_initializer_name(init.name(), g, gwhere, "an initializer")) continue;
      add_constant(g, init.name(), convert_tensor(init, fmt::format("initializer '{}'", init.name())));
    }
  }

  void add_sparse_initializers(const onnx::GraphProto& gp, Graph& g, const std::string& gwhere) {
    for (const auto& sp : gp.sparse_initializer()) {
      const std::string& name = sp.values().name();
      if (!new_initializer_name(name, g, gwhere, "a sparse initializer")) continue;
      add_constant(g, name, densify(sp, fmt::format("sparse initializer '{}'", name)));
    }
  }

  void add_inputs(const onnx::GraphProto& gp, Graph& g, const std::string& gwhere, int depth) {
    std::set<std::string> initializers_listed;
    for (const auto& in : gp.input()) {
      std::string where = fmt::format("input '{}'", in.name());
      if (in.name().empty()) {
        diag_.invalid(gwhere, "a graph input has no name", "name every graph input");
        continue;
      }
      if (Value* v = g.find(in.name())) {
        if (!v->constant || !initializers_listed.insert(in.name()).second)
          diag_.invalid(where, "is listed twice", "list each graph input once");
        else if (depth > 0)
          diag_.invalid(where, "is both an input and an initializer of a subgraph",
                        "a subgraph must not give an input a default value; rename one of them");
        continue;  // an initializer that is also an input: a constant with a default value
      }
      Value* v = g.add_value(in.name());
      v->is_graph_input = true;
      read_value_info(in, v, "input", depth == 0);
      g.inputs.push_back(v);
    }
    // IR 3 and earlier: initializers are a subset of the graph inputs.
    if (depth == 0 && ir_version_ >= 1 && ir_version_ <= 3)
      for (const auto& init : gp.initializer())
        if (!init.name().empty() && !initializers_listed.count(init.name()))
          diag_.invalid(fmt::format("initializer '{}'", init.name()),
                        fmt::format("is not a graph input, which IR version {} requires", ir_version_),
                        "list it in graph.input too, or set ir_version to 4 or later");
  }

  // Is `name` visible from an enclosing graph of `g`?
  static bool defined_outside(const Graph& g, const std::string& name) {
    for (const Graph* o = g.outer; o; o = o->outer)
      if (o->find(name)) return true;
    return false;
  }

  // A name for node `index` that neither the file gives any node nor an earlier node took:
  // NAME_INDEX, or NAME_INDEX_2, _3, ... (deterministic: the same file, the same names).
  static std::string unused_node_name(const std::string& name, int index, const std::set<std::string>& given,
                                      const std::set<std::string>& used) {
    std::string unique = fmt::format("{}_{}", name, index);
    for (int k = 2; used.count(unique) || given.count(unique); ++k) unique = fmt::format("{}_{}_{}", name, index, k);
    return unique;
  }

  // A name the file repeats: refused with --strict, renamed with a warning otherwise.
  void repeated_node_name(const std::string& where, const std::string& renamed) {
    if (opts_.strict) {
      diag_.invalid(where, "shares its name with an earlier node",
                    "node names must be unique in a graph (without --strict onnxc renames it, with a warning)");
    } else if (opts_.warn) {
      opts_.warn(Problem{ErrorKind::Invalid, where,
                         fmt::format("shares its name with an earlier node; onnxc calls it '{}'", renamed),
                         "node names must be unique in a graph; --strict refuses such models", {}});
    }
  }

  std::vector<const onnx::NodeProto*> add_nodes(const onnx::GraphProto& gp, Graph& g, int depth) {
    std::vector<const onnx::NodeProto*> protos;
    std::set<std::string> given, used;  // the names the file gives; the names taken so far
    for (const auto& np : gp.node())
      if (!np.name().empty()) given.insert(np.name());
    for (int i = 0; i < gp.node_size(); ++i) {
      const auto& np = gp.node(i);
      auto n = std::make_unique<Node>();
      n->index = i;
      n->op_type = np.op_type();
      n->domain = np.domain() == "ai.onnx" ? "" : np.domain();
      n->name = np.name().empty() ? fmt::format("{}_{}", np.op_type(), i) : np.name();
      // A node out of a function's body takes its opsets from the function's imports.
      auto own = functions_.node_opsets.find(&np);
      const OpsetMap& opsets = own == functions_.node_opsets.end() ? *opsets_ : *own->second;
      auto it = opsets.find(n->domain);
      n->opset = it == opsets.end() ? 0 : it->second;
      std::string where = n->describe();
      if (np.op_type().empty()) diag_.invalid(where, "has no op_type", "set the operator the node calls");
      // Names are diagnostic only, yet the spec says they MUST be unique in a graph, and the
      // report and the generated code's comments name steps by them. A repeated name, or the
      // made-up OP_INDEX of an unnamed node that a named node uses, gets the index as a suffix.
      if (used.count(n->name) || (np.name().empty() && given.count(n->name))) {
        std::string renamed = unused_node_name(n->name, i, given, used);
        if (!np.name().empty()) repeated_node_name(where, renamed);
        n->name = renamed;
      }
      used.insert(n->name);
      if (it == opsets.end())
        diag_.invalid(where, fmt::format("uses domain '{}', which the model does not import", np.domain()),
                      "add the domain to the model's opset_import");
      // Attributes (and so subgraphs) first: a node's own outputs are not in scope in its subgraphs.
      for (const auto& a : np.attribute()) {
        if (a.name().empty()) {
          diag_.invalid(where, "has an attribute without a name", "name every attribute");
          continue;
        }
        if (n->attrs.count(a.name())) {
          diag_.invalid(where, fmt::format("has attribute '{}' twice", a.name()), "keep one of them");
          continue;
        }
        convert_attribute(a, n->attrs[a.name()], where, &g, depth);
      }
      for (const auto& out : np.output()) {
        n->outputs.push_back(out.empty() ? nullptr : add_node_output(g, out, where));
      }
      protos.push_back(&np);
      g.add_node(std::move(n));
    }
    return protos;
  }

  Value* add_node_output(Graph& g, const std::string& name, const std::string& where) {
    if (g.find(name)) {
      diag_.invalid(where, fmt::format("output '{}' is already defined elsewhere", name),
                    "every value must be assigned exactly once (SSA)");
      return nullptr;
    }
    if (defined_outside(g, name)) {
      diag_.invalid(where, fmt::format("output '{}' shadows a value of an enclosing graph", name),
                    "rename the output: names in a subgraph must differ from the outer scope's");
      return nullptr;
    }
    return g.add_value(name);
  }

  void link_node_inputs(Graph& g, const std::vector<const onnx::NodeProto*>& protos) {
    for (std::size_t i = 0; i < protos.size(); ++i) {
      Node* n = g.nodes[i].get();
      for (const auto& in : protos[i]->input()) {
        if (in.empty()) {
          n->inputs.push_back(nullptr);
          continue;
        }
        Value* v = lookup(g, in);
        if (!v)
          diag_.invalid(n->describe(), fmt::format("input '{}' is not defined", in),
                        "every input must be a graph input, an initializer or an earlier node's output");
        n->inputs.push_back(v);
      }
    }
  }

  void add_outputs(const onnx::GraphProto& gp, Graph& g, int depth) {
    for (const auto& out : gp.output()) {
      std::string where = fmt::format("output '{}'", out.name());
      if (out.name().empty()) {
        diag_.invalid("graph", "a graph output has no name", "name every graph output");
        continue;
      }
      Value* v = lookup(g, out.name());
      if (!v) {
        diag_.invalid(where, "is not produced by any node, input or initializer",
                      "name a value the graph computes, or remove the output");
        continue;
      }
      if (v->is_graph_output) {
        diag_.invalid(where, "is listed twice as a graph output", "list each graph output once");
        continue;
      }
      v->is_graph_output = true;
      Value declared;
      read_value_info(out, &declared, "output", depth == 0);
      if (v->dtype == DType::Undefined) v->dtype = declared.dtype;
      v->is_sequence = v->is_sequence || declared.is_sequence;
      v->is_optional = v->is_optional || declared.is_optional;
      v->declared_dims = declared.declared_dims;
      v->declared_rank = declared.declared_rank;
      g.outputs.push_back(v);
    }
  }

  // value_info only annotates; it must still name each value once and agree with constants.
  void check_value_info(const onnx::GraphProto& gp, const Graph& g) {
    std::set<std::string> seen;
    for (const auto& vi : gp.value_info()) {
      std::string where = fmt::format("value_info '{}'", vi.name());
      if (vi.name().empty()) {
        diag_.invalid("graph", "a value_info entry has no name", "name it or remove it");
        continue;
      }
      if (!seen.insert(vi.name()).second) {
        diag_.invalid(where, "is listed twice", "value_info names must be distinct");
        continue;
      }
      if (!vi.type().has_tensor_type()) continue;
      const auto& tt = vi.type().tensor_type();
      DType dt = DType::Undefined;
      if (tt.elem_type() != 0 && !dtype_from_int(tt.elem_type(), &dt)) {
        diag_.invalid(where, fmt::format("has unknown element type {}", tt.elem_type()),
                      "use a TensorProto.DataType value");
        continue;
      }
      const Value* v = g.find(vi.name());
      if (!v || !v->constant) continue;
      if (dt != DType::Undefined && dt != v->dtype)
        diag_.invalid(where, fmt::format("says {}, but the initializer holds {}", dtype_name(dt), dtype_name(v->dtype)),
                      "fix or remove the value_info entry");
      if (tt.has_shape() && tt.shape().dim_size() != static_cast<int>(v->shape.size()))
        diag_.invalid(where,
                      fmt::format("says rank {}, but the initializer has shape {}", tt.shape().dim_size(),
                                  shape_str(v->shape)),
                      "fix or remove the value_info entry");
    }
  }

  // Types are mandatory on the main graph's inputs and outputs (with a rank for inputs) and
  // optional in subgraphs.
  void read_value_info(const onnx::ValueInfoProto& vi, Value* v, const std::string& role, bool main_graph) {
    std::string where = fmt::format("{} '{}'", role, vi.name());
    if (!vi.has_type()) {
      if (main_graph) diag_.invalid(where, "has no type", "the main graph's inputs and outputs must be typed");
      return;
    }
    const auto& type = vi.type();
    if (type.value_case() == onnx::TypeProto::VALUE_NOT_SET && !main_graph) return;  // inferred later
    if (type.has_sequence_type()) {
      read_sequence_type(type.sequence_type(), v, where);
      return;
    }
    if (type.has_optional_type()) {
      read_optional_type(type.optional_type(), v, where);
      return;
    }
    if (!type.has_tensor_type()) {
      diag_.unsupported(where, "is not a tensor, a sequence of tensors or an optional of either (maps are not "
                               "supported)");
      return;
    }
    const auto& tt = type.tensor_type();
    DType dt = DType::Undefined;
    if (!dtype_from_int(tt.elem_type(), &dt)) {
      diag_.invalid(where, fmt::format("has unknown element type {}", tt.elem_type()), "use a TensorProto.DataType value");
      return;
    }
    if (dt == DType::Undefined && main_graph) {
      diag_.invalid(where, "has no element type", "set elem_type of its tensor type");
      return;
    }
    v->dtype = dt;
    if (!tt.has_shape()) {
      if (main_graph && role == "input")
        diag_.invalid(where, "has no shape (not even a rank)",
                      "declare the input's shape; unknown dims may be symbolic (dim_param) and bound with --dim");
      return;
    }
    read_declared_dims(tt.shape(), v, where);
  }

  // A sequence of tensors: its length and element shapes are bound at compile time (see
  // passes/sequence_io.h); the file gives only the element type.
  void read_sequence_type(const onnx::TypeProto::Sequence& seq, Value* v, const std::string& where) {
    DType dt = DType::Undefined;
    if (!seq.elem_type().has_tensor_type() || !dtype_from_int(seq.elem_type().tensor_type().elem_type(), &dt) ||
        dt == DType::Undefined) {
      diag_.unsupported(where, "is a sequence of something other than typed tensors",
                        "onnxc compiles sequences of tensors of a known element type");
      return;
    }
    v->is_sequence = true;
    v->dtype = dt;
  }

  // An optional tensor or sequence of tensors: whether it is present (and a sequence's length
  // and element shapes) is bound at compile time; the file gives the element type and, for a
  // tensor, its dims.
  void read_optional_type(const onnx::TypeProto::Optional& opt, Value* v, const std::string& where) {
    const onnx::TypeProto& content = opt.elem_type();
    if (content.has_sequence_type()) {
      read_sequence_type(content.sequence_type(), v, where);
      v->is_sequence = false;  // the optional's content is; bind_structured_inputs makes it
    } else if (content.has_tensor_type()) {
      DType dt = DType::Undefined;
      if (!dtype_from_int(content.tensor_type().elem_type(), &dt) || dt == DType::Undefined) {
        diag_.invalid(where, "is an optional tensor without an element type", "set elem_type of its tensor type");
        return;
      }
      v->dtype = dt;
      if (content.tensor_type().has_shape()) read_declared_dims(content.tensor_type().shape(), v, where);
    } else {
      diag_.unsupported(where, "is an optional of something other than a tensor or a sequence of tensors");
      return;
    }
    v->is_optional = true;
  }

  void read_declared_dims(const onnx::TensorShapeProto& shape, Value* v, const std::string& where) {
    v->declared_rank = true;
    v->declared_dims.clear();
    Shape known;
    for (const auto& d : shape.dim()) {
      Dim dim;
      if (d.has_dim_value()) {
        if (d.dim_value() < 0)
          diag_.invalid(where, fmt::format("has a negative dim {}", d.dim_value()), "dims are sizes: 0 or more");
        else
          dim.value = d.dim_value();
      } else if (d.has_dim_param()) {
        dim.param = d.dim_param();
      }
      if (dim.value >= 0) known.push_back(dim.value);
      v->declared_dims.push_back(dim);
    }
    check_size(known, v->dtype, where, "declares");
  }

  // Refuses shapes whose element count overflows or whose bytes exceed the tensor limit.
  bool check_size(const Shape& shape, DType dt, const std::string& where, const char* verb) {
    int64_t n = checked_numel(shape);
    if (n < 0) {
      diag_.invalid(where, fmt::format("{} dims {} whose product overflows", verb, shape_str(shape)),
                    "check the dims");
      return false;
    }
    std::size_t esize = std::max<std::size_t>(dtype_size(dt), 1);
    if (static_cast<uint64_t>(n) > opts_.max_tensor_bytes / esize) {
      diag_.unsupported(where,
                        fmt::format("{} {} elements of {}, more than the {} bytes onnxc accepts for one tensor", verb,
                                    n, dtype_name(dt), opts_.max_tensor_bytes),
                        "check the dims");
      return false;
    }
    return true;
  }

  // ---- tensors ----

  Tensor convert_tensor(const onnx::TensorProto& t, const std::string& where) {
    Tensor out;
    DType dt;
    if (!dtype_from_int(t.data_type(), &dt) || dt == DType::Undefined) {
      diag_.invalid(where, fmt::format("has unknown data_type {}", t.data_type()),
                    "the tensor must use one of the TensorProto.DataType values");
      return out;
    }
    out.dtype = dt;
    for (int64_t d : t.dims()) out.shape.push_back(d);
    int64_t n = checked_numel(out.shape);
    if (n < 0) {
      diag_.invalid(where, fmt::format("has invalid dims {} (negative or overflowing)", shape_str(out.shape)),
                    "dims are sizes: 0 or more");
      out.shape.clear();
      return out;
    }
    if (t.has_segment()) {
      diag_.unsupported(where, "is stored in segments", "store the whole tensor in one TensorProto");
      return out;
    }
    if (dt == DType::Int4 || dt == DType::Uint4) return unpack_4bit(t, out, n, where);
    if (t.data_location() == onnx::TensorProto::EXTERNAL) {
      if (!populated_fields(t).empty())
        diag_.invalid(where, "has external data and also values inside the file",
                      "an external tensor must not use raw_data or the typed fields");
      else if (dt == DType::String)
        diag_.invalid(where, "is a string tensor stored externally", "string tensors must use string_data");
      else if (std::size_t nbytes = storable_bytes(dt, n, where))
        read_external(t, where, nbytes, out);
      return out;
    }
    if (dt == DType::String) {
      if (check_value_fields(t, dt, n, where)) out.strings.assign(t.string_data().begin(), t.string_data().end());
      return out;
    }
    std::size_t nbytes = storable_bytes(dt, n, where);  // before looking at the data: size first
    if (nbytes == 0 || !check_value_fields(t, dt, n, where)) return out;
    if (t.has_raw_data()) {
      out.bytes.assign(t.raw_data().begin(), t.raw_data().end());
      if (dt == DType::Bool)
        for (auto& b : out.bytes) b = b != 0;
      return out;
    }
    out.bytes.assign(nbytes, 0);
    copy_typed_values(t, dt, n, out);
    return out;
  }

  // An int4 or uint4 tensor (IR 10), two values per byte, the first in the low nibble, in
  // raw_data or one byte per int32_data entry, widened to int8 or uint8: the values a 4-bit
  // weight takes are all int8 (uint8) values, and DequantizeLinear gives the same floats.
  Tensor& unpack_4bit(const onnx::TensorProto& t, Tensor& out, int64_t n, const std::string& where) {
    const bool is_signed = out.dtype == DType::Int4;
    if (t.data_location() == onnx::TensorProto::EXTERNAL) {
      diag_.unsupported(where, fmt::format("is a {} tensor stored externally", dtype_name(out.dtype)),
                        "store 4-bit tensors inside the model file");
      return out;
    }
    std::vector<uint8_t> packed;
    if (t.has_raw_data()) packed.assign(t.raw_data().begin(), t.raw_data().end());
    for (int32_t v : t.int32_data()) packed.push_back(static_cast<uint8_t>(v));
    const std::size_t need = static_cast<std::size_t>((n + 1) / 2);
    if (packed.size() != need || (t.has_raw_data() && t.int32_data_size())) {
      diag_.invalid(where, fmt::format("holds {} bytes of {} values; shape {} needs {} (two per byte)", packed.size(),
                                       dtype_name(out.dtype), shape_str(out.shape), need),
                    "pack the values two per byte, in raw_data or int32_data");
      return out;
    }
    out.dtype = is_signed ? DType::Int8 : DType::Uint8;
    out.bytes.resize(static_cast<std::size_t>(n));
    for (int64_t i = 0; i < n; ++i) {
      int v = (packed[static_cast<std::size_t>(i / 2)] >> (4 * (i % 2))) & 0xF;
      if (is_signed && v >= 8) v -= 16;
      out.bytes[static_cast<std::size_t>(i)] = static_cast<uint8_t>(v);
    }
    return out;
  }

  // Bytes `n` elements of `dt` take in memory; 0 (with a problem reported) when onnxc cannot
  // hold them, and also for an empty tensor, which needs no storage.
  std::size_t storable_bytes(DType dt, int64_t n, const std::string& where) {
    std::size_t esize = dtype_size(dt);
    if (esize == 0) {
      diag_.unsupported(where, fmt::format("has element type {}, which onnxc cannot store yet", dtype_name(dt)),
                        "convert the tensor to float32 or an integer type");
      return 0;
    }
    if (static_cast<uint64_t>(n) > opts_.max_tensor_bytes / esize) {
      diag_.unsupported(where, fmt::format("is too large: {} elements of {} ({} bytes allowed)", n, dtype_name(dt),
                                           opts_.max_tensor_bytes),
                        "check the dims");
      return 0;
    }
    return static_cast<std::size_t>(n) * esize;
  }

  // The tensor keeps its values in exactly one field, the one its data_type uses, with as many
  // values as its dims say.
  bool check_value_fields(const onnx::TensorProto& t, DType dt, int64_t n, const std::string& where) {
    std::vector<std::string> fields = populated_fields(t);
    if (fields.size() > 1) {
      diag_.invalid(where, fmt::format("stores values in {} fields at once ({})", fields.size(), fmt::join(fields, ", ")),
                    "keep the values in one field");
      return false;
    }
    std::string expected = typed_field_for(dt);
    if (fields.empty()) {
      if (n == 0) return true;
      diag_.invalid(where, fmt::format("has no values; shape {} needs {}", shape_str(Shape(t.dims().begin(), t.dims().end())), n),
                    fmt::format("store them in raw_data or {}", expected));
      return false;
    }
    const std::string& field = fields[0];
    if (field == "raw_data" && dt == DType::String) {
      diag_.invalid(where, "is a string tensor stored in raw_data", "string tensors must use string_data");
      return false;
    }
    if (field != "raw_data" && field != expected) {
      diag_.invalid(where, fmt::format("stores {} values in {}", dtype_name(dt), field),
                    fmt::format("{} values belong in {} or raw_data", dtype_name(dt), expected));
      return false;
    }
    uint64_t have = field == "raw_data" ? t.raw_data().size() : value_count(t, field);
    uint64_t want = field == "raw_data" ? static_cast<uint64_t>(n) * dtype_size(dt) : static_cast<uint64_t>(n);
    if (have != want) {
      Shape shape(t.dims().begin(), t.dims().end());
      diag_.invalid(where,
                    field == "raw_data"
                        ? fmt::format("raw_data has {} bytes; shape {} of {} needs {}", have, shape_str(shape),
                                      dtype_name(dt), want)
                        : fmt::format("{} has {} values; shape {} needs {}", field, have, shape_str(shape), want),
                    "the data must match the dims exactly");
      return false;
    }
    return true;
  }

  static uint64_t value_count(const onnx::TensorProto& t, const std::string& field) {
    if (field == "float_data") return t.float_data_size();
    if (field == "double_data") return t.double_data_size();
    if (field == "int32_data") return t.int32_data_size();
    if (field == "int64_data") return t.int64_data_size();
    if (field == "uint64_data") return t.uint64_data_size();
    return t.string_data_size();
  }

  // Converts the typed field (already checked to hold n values) into little-endian bytes.
  static void copy_typed_values(const onnx::TensorProto& t, DType dt, int64_t n, Tensor& out) {
    std::size_t nbytes = out.bytes.size();
    switch (dt) {
      case DType::Float: std::memcpy(out.bytes.data(), t.float_data().data(), nbytes); return;
      case DType::Double: std::memcpy(out.bytes.data(), t.double_data().data(), nbytes); return;
      case DType::Int64: std::memcpy(out.bytes.data(), t.int64_data().data(), nbytes); return;
      case DType::Uint64: std::memcpy(out.bytes.data(), t.uint64_data().data(), nbytes); return;
      case DType::Uint32:
        for (int64_t i = 0; i < n; ++i) out.data<uint32_t>()[i] = static_cast<uint32_t>(t.uint64_data(static_cast<int>(i)));
        return;
      default: break;
    }
    // int32_data carries every type narrower than 32 bits, bool and the 16-bit floats.
    for (int64_t i = 0; i < n; ++i) {
      int32_t v = t.int32_data(static_cast<int>(i));
      switch (dt) {
        case DType::Int32: out.data<int32_t>()[i] = v; break;
        case DType::Int16: out.data<int16_t>()[i] = static_cast<int16_t>(v); break;
        case DType::Int8: out.data<int8_t>()[i] = static_cast<int8_t>(v); break;
        case DType::Uint16:
        case DType::Float16:
        case DType::BFloat16: out.data<uint16_t>()[i] = static_cast<uint16_t>(v); break;
        case DType::Uint8:
        case DType::Float8E4M3FN:
        case DType::Float8E4M3FNUZ:
        case DType::Float8E5M2:
        case DType::Float8E5M2FNUZ: out.data<uint8_t>()[i] = static_cast<uint8_t>(v); break;
        case DType::Bool: out.data<uint8_t>()[i] = v != 0; break;
        default: break;
      }
    }
  }

  // COO sparse tensor -> dense: values [NNZ], indices [NNZ] (linear) or [NNZ, rank].
  Tensor densify(const onnx::SparseTensorProto& sp, const std::string& where) {
    Tensor dense;
    std::size_t before = diag_.size();
    Tensor values = convert_tensor(sp.values(), where + " values");
    Tensor indices = convert_tensor(sp.indices(), where + " indices");
    if (diag_.size() != before) return dense;
    Shape shape(sp.dims().begin(), sp.dims().end());
    int64_t numel = checked_numel(shape);
    int64_t nnz = values.numel();
    if (numel < 0 || !check_size(shape, values.dtype, where, "has")) {
      if (numel < 0) diag_.invalid(where, fmt::format("has invalid dims {}", shape_str(shape)), "check the dims");
      return dense;
    }
    if (values.dtype == DType::String || values.shape.size() != 1) {
      diag_.unsupported(where, "has string or non-1-D values", "densify the initializer before compiling");
      return dense;
    }
    bool linear = indices.shape.size() == 1 && indices.shape[0] == nnz;
    bool coordinates = indices.shape.size() == 2 && indices.shape[0] == nnz &&
                       indices.shape[1] == static_cast<int64_t>(shape.size());
    if (indices.dtype != DType::Int64 || (!linear && !coordinates)) {
      diag_.invalid(where,
                    fmt::format("indices must be int64 of shape [{}] or [{}, {}], not {} {}", nnz, nnz, shape.size(),
                                dtype_name(indices.dtype), shape_str(indices.shape)),
                    "store the indices as SparseTensorProto describes");
      return dense;
    }
    dense = Tensor(values.dtype, shape);
    std::size_t esize = dtype_size(values.dtype);
    for (int64_t k = 0; k < nnz; ++k) {
      int64_t offset = linear ? indices.data<int64_t>()[k] : 0;
      for (std::size_t d = 0; !linear && d < shape.size(); ++d) {
        int64_t i = indices.data<int64_t>()[k * static_cast<int64_t>(shape.size()) + static_cast<int64_t>(d)];
        if (i < 0 || i >= shape[d]) offset = -1;
        if (offset >= 0) offset = offset * shape[d] + i;
      }
      if (offset < 0 || offset >= numel) {
        diag_.invalid(where, fmt::format("index {} of value {} lies outside shape {}", offset, k, shape_str(shape)),
                      "every index must address an element of the dense tensor");
        return Tensor();
      }
      std::memcpy(dense.bytes.data() + static_cast<std::size_t>(offset) * esize,
                  values.bytes.data() + static_cast<std::size_t>(k) * esize, esize);
    }
    return dense;
  }

  void read_external(const onnx::TensorProto& t, const std::string& where, std::size_t nbytes, Tensor& out) {
    std::string location;
    uint64_t offset = 0, length = 0;
    bool has_length = false;
    for (const auto& kv : t.external_data()) {
      bool number = kv.key() == "offset" || kv.key() == "length";
      if (number && !all_digits(kv.value())) {
        diag_.invalid(where, fmt::format("external_data '{}' is not a number: '{}'", kv.key(), kv.value()),
                      "offset and length are byte counts written in decimal");
        return;
      }
      if (kv.key() == "location") location = kv.value();
      else if (kv.key() == "offset") offset = std::stoull(kv.value());
      else if (kv.key() == "length") length = std::stoull(kv.value()), has_length = true;
    }
    if (location.empty()) {
      diag_.invalid(where, "external data has no 'location'", "name the data file relative to the model");
      return;
    }
    if (!stays_inside(fs::path(location))) {
      diag_.invalid(where, fmt::format("external data location '{}' leaves the model's folder", location),
                    "external data files must sit in the model's folder or below it");
      return;
    }
    fs::path file = dir_ / location;
    std::error_code ec;
    fs::path real_dir = fs::weakly_canonical(dir_, ec);
    fs::path real_file = fs::weakly_canonical(file, ec);
    auto rel = real_file.lexically_relative(real_dir);
    if (ec || rel.empty() || *rel.begin() == "..") {
      diag_.invalid(where, fmt::format("external data location '{}' resolves outside the model's folder", location),
                    "do not link external data files to places outside the model's folder");
      return;
    }
    if (!fs::is_regular_file(file, ec)) {
      diag_.invalid(where, fmt::format("external data file '{}' does not exist or is not a file", location),
                    "copy the data file next to the model");
      return;
    }
    uint64_t fsize = fs::file_size(file, ec);
    if (ec) {
      diag_.invalid(where, fmt::format("external data file '{}' cannot be read", location), "check its permissions");
      return;
    }
    if (has_length && length != nbytes) {
      diag_.invalid(where, fmt::format("external data length {} does not match shape {} ({} bytes)", length,
                                       shape_str(out.shape), nbytes),
                    "the length must be the tensor's size in bytes");
      return;
    }
    if (offset > fsize || nbytes > fsize - offset) {
      diag_.invalid(where, fmt::format("external data [{}, +{}) lies outside '{}' ({} bytes)", offset, nbytes,
                                       location, fsize),
                    "the offset and length must lie inside the data file");
      return;
    }
    std::ifstream f(file, std::ios::binary);
    out.bytes.resize(nbytes);
    f.seekg(static_cast<std::streamoff>(offset));
    f.read(reinterpret_cast<char*>(out.bytes.data()), static_cast<std::streamsize>(nbytes));
    if (!f) diag_.invalid(where, fmt::format("reading external data from '{}' failed", location));
    if (out.dtype == DType::Bool)
      for (auto& b : out.bytes) b = b != 0;
  }

  // ---- attributes ----

  // The attribute's type: its `type` field, which must agree with the one value field set.
  // UNDEFINED when the attribute is malformed (reported).
  AP::AttributeType attribute_type(const AP& a, const std::string& aw) {
    std::vector<AP::AttributeType> fields = populated_fields(a);
    if (fields.size() > 1) {
      diag_.invalid(aw, fmt::format("sets {} value fields", fields.size()), "an attribute holds exactly one value");
      return AP::UNDEFINED;
    }
    AP::AttributeType type = a.type();
    if (type == AP::UNDEFINED) {
      if (ir_version_ >= 2 || fields.empty()) {
        diag_.invalid(aw, "has no type", "set AttributeProto.type");
        return AP::UNDEFINED;
      }
      return fields[0];  // IR 1 files: the populated field tells the type
    }
    if (!AP::AttributeType_IsValid(type)) {
      diag_.invalid(aw, fmt::format("has unknown attribute type {}", static_cast<int>(type)),
                    "use an AttributeProto.AttributeType value");
      return AP::UNDEFINED;
    }
    // An empty list is indistinguishable from an unset field; so is a list attribute's absence.
    if (!fields.empty() && fields[0] != type) {
      diag_.invalid(aw, fmt::format("is declared {} but holds a {} value", attribute_type_name(type),
                                    attribute_type_name(fields[0])),
                    "make the type field match the value");
      return AP::UNDEFINED;
    }
    return type;
  }

  void convert_attribute(const AP& a, Attribute& out, const std::string& where, Graph* scope, int depth) {
    std::string aw = fmt::format("{}: attribute '{}'", where, a.name());
    if (!a.ref_attr_name().empty()) {
      diag_.invalid(aw, "refers to a function attribute (ref_attr_name) outside a function",
                    "give the attribute a value");
      return;
    }
    switch (attribute_type(a, aw)) {
      case AP::FLOAT: out.kind = Attribute::Kind::Float; out.f = a.f(); break;
      case AP::INT: out.kind = Attribute::Kind::Int; out.i = a.i(); break;
      case AP::STRING: out.kind = Attribute::Kind::String; out.s = a.s(); break;
      case AP::TENSOR:
        out.kind = Attribute::Kind::Tensor;
        out.t = std::make_shared<Tensor>(convert_tensor(a.t(), aw));
        break;
      case AP::FLOATS: out.kind = Attribute::Kind::Floats; out.floats.assign(a.floats().begin(), a.floats().end()); break;
      case AP::INTS: out.kind = Attribute::Kind::Ints; out.ints.assign(a.ints().begin(), a.ints().end()); break;
      case AP::STRINGS: out.kind = Attribute::Kind::Strings; out.strings.assign(a.strings().begin(), a.strings().end()); break;
      case AP::TENSORS:
        out.kind = Attribute::Kind::Tensors;
        for (const auto& t : a.tensors()) out.tensors.push_back(std::make_shared<Tensor>(convert_tensor(t, aw)));
        break;
      case AP::GRAPH:
        out.kind = Attribute::Kind::Graph;
        out.g = std::make_shared<Graph>();
        convert_graph(a.g(), *out.g, scope, depth + 1);
        break;
      case AP::GRAPHS:
        out.kind = Attribute::Kind::Graphs;
        for (const auto& g : a.graphs()) {
          out.graphs.push_back(std::make_shared<Graph>());
          convert_graph(g, *out.graphs.back(), scope, depth + 1);
        }
        break;
      case AP::TYPE_PROTO:
      case AP::TYPE_PROTOS: out.kind = Attribute::Kind::TypeProto; break;
      case AP::SPARSE_TENSOR:
      case AP::SPARSE_TENSORS:
        diag_.unsupported(aw, "is a sparse tensor attribute", "use a dense tensor (e.g. Constant's 'value')");
        break;
      case AP::UNDEFINED: break;  // reported by attribute_type
    }
  }

  // ---- scopes and order ----

  // Finds a name in this graph or (for subgraphs) an enclosing one, importing outer values.
  Value* lookup(Graph& g, const std::string& name) {
    if (Value* v = g.find(name)) return v;
    for (Graph* o = g.outer; o; o = o->outer) {
      if (Value* ov = o->find(name)) {
        Value* v = g.add_value(name);
        v->outer = ov;
        return v;
      }
    }
    return nullptr;
  }

  // Kahn's algorithm; among ready nodes the file order is kept.
  void sort_topologically(Graph& g, const std::string& gwhere) {
    std::size_t n = g.nodes.size();
    std::map<const Node*, std::size_t> pos;
    for (std::size_t i = 0; i < n; ++i) pos[g.nodes[i].get()] = i;
    std::vector<int> pending(n, 0);
    std::vector<std::vector<std::size_t>> users(n);
    for (std::size_t i = 0; i < n; ++i) {
      std::set<std::size_t> deps;
      for (Value* in : g.nodes[i]->inputs)
        if (in && in->producer) deps.insert(pos[in->producer]);
      for (Value* in : g.nodes[i]->implicit_inputs(g))
        if (in->producer) deps.insert(pos[in->producer]);
      for (std::size_t d : deps) users[d].push_back(i);
      pending[i] = static_cast<int>(deps.size());
    }
    std::set<std::size_t> ready;
    for (std::size_t i = 0; i < n; ++i)
      if (pending[i] == 0) ready.insert(i);
    std::vector<std::size_t> order;
    while (!ready.empty()) {
      std::size_t i = *ready.begin();
      ready.erase(ready.begin());
      order.push_back(i);
      for (std::size_t u : users[i])
        if (--pending[u] == 0) ready.insert(u);
    }
    if (order.size() != n) {
      for (std::size_t i = 0; i < n; ++i)
        if (pending[i] > 0) {
          diag_.invalid(gwhere, fmt::format("the nodes form a cycle; {} is on or behind it", g.nodes[i]->describe()),
                        "ONNX graphs must be acyclic; loops are expressed with the Loop operator");
          return;
        }
    }
    std::vector<std::unique_ptr<Node>> sorted;
    for (std::size_t i : order) sorted.push_back(std::move(g.nodes[i]));
    g.nodes = std::move(sorted);
  }

  std::string name_;
  fs::path dir_;
  LoadOptions opts_;
  Diagnostics diag_;
  int64_t ir_version_ = 0;
  const std::map<std::string, int>* opsets_ = nullptr;
  FunctionExpansion functions_;
};

}  // namespace

Model load_model_from_bytes(const std::string& bytes, const std::string& name_for_messages, const std::string& dir,
                            const LoadOptions& options) {
  Loader loader(name_for_messages, dir, options);
  return loader.load(bytes);
}

Model load_model(const std::string& path, const LoadOptions& options) {
  std::string bytes = read_file(path, static_cast<std::size_t>(INT_MAX));
  return load_model_from_bytes(bytes, path, fs::path(path).parent_path().string(), options);
}

namespace {

std::string read_test_file(const std::string& path) {
  try {
    return read_file(path, static_cast<std::size_t>(INT_MAX));
  } catch (const CompileError& e) {
    throw CompileError(ErrorKind::Invalid, path, e.problems().front().what);
  }
}

// Calls f(field_number, bytes) for each length-delimited field of a serialized message and
// skips the others; false when the bytes are not a well-formed message.
template <class F> bool for_each_message_field(const std::string& bytes, F f) {
  using google::protobuf::internal::WireFormatLite;
  google::protobuf::io::CodedInputStream in(reinterpret_cast<const uint8_t*>(bytes.data()),
                                            static_cast<int>(bytes.size()));
  while (uint32_t tag = in.ReadTag()) {
    if (WireFormatLite::GetTagWireType(tag) == WireFormatLite::WIRETYPE_LENGTH_DELIMITED) {
      std::string field;
      uint32_t length = 0;
      if (!in.ReadVarint32(&length) || !in.ReadString(&field, static_cast<int>(length))) return false;
      f(WireFormatLite::GetTagFieldNumber(tag), field);
    } else if (!WireFormatLite::SkipField(&in, tag)) {
      return false;
    }
  }
  return in.ConsumedEntireMessage();
}

// SequenceProto.tensor_values and OptionalProto.tensor_value / sequence_value.
constexpr int kSequenceTensorValues = 3, kOptionalTensorValue = 3, kOptionalSequenceValue = 5;

std::vector<std::string> sequence_elements(const std::string& bytes, const std::string& where) {
  std::vector<std::string> elements;
  if (!for_each_message_field(bytes, [&](int field, const std::string& value) {
        if (field == kSequenceTensorValues) elements.push_back(value);
      }))
    throw CompileError(ErrorKind::Invalid, where, "is not a serialized SequenceProto");
  return elements;
}

}  // namespace

std::vector<std::string> sequence_file_elements(const std::string& path) {
  return sequence_elements(read_test_file(path), path);
}

OptionalFile load_optional_file(const std::string& path) {
  OptionalFile opt;
  const std::string bytes = read_test_file(path);
  if (!for_each_message_field(bytes, [&](int field, const std::string& value) {
        if (field == kOptionalTensorValue) {
          opt.present = true;
          opt.tensors = {value};
        } else if (field == kOptionalSequenceValue) {
          opt.present = opt.is_sequence = true;
          opt.tensors = sequence_elements(value, path);
        }
      }))
    throw CompileError(ErrorKind::Invalid, path, "is not a serialized OptionalProto");
  return opt;
}

Tensor load_tensor_file(const std::string& path, std::string* name) {
  std::string bytes;
  try {
    bytes = read_file(path, static_cast<std::size_t>(INT_MAX));
  } catch (const CompileError& e) {
    throw CompileError(ErrorKind::Invalid, path, e.problems().front().what);
  }
  onnx::TensorProto proto;
  if (!parse_bounded(bytes, &proto)) throw CompileError(ErrorKind::Invalid, path, "is not a serialized TensorProto");
  Loader loader(path, fs::path(path).parent_path(), LoadOptions{});
  Tensor t = loader.tensor(proto, fmt::format("tensor '{}'", proto.name()));
  loader.finish();
  if (name) *name = proto.name();
  return t;
}

}  // namespace onnxc
