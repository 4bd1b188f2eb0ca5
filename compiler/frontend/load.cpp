#include "frontend/load.h"

#include <algorithm>
#include <climits>
#include <cstring>
#include <deque>
#include <filesystem>
#include <fstream>
#include <limits>
#include <set>

#include <fmt/format.h>

#include "onnx.pb.h"
#include "support/diagnostics.h"

namespace fs = std::filesystem;

namespace onnxc {
namespace {

std::string read_file(const std::string& path, std::string* error) {
  std::ifstream f(path, std::ios::binary);
  if (!f) {
    *error = "cannot open the file";
    return {};
  }
  std::string data((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
  return data;
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

class Loader {
 public:
  Loader(std::string path, const LoadOptions& opts) : path_(std::move(path)), opts_(opts) {
    dir_ = fs::path(path_).parent_path();
    if (dir_.empty()) dir_ = ".";
  }

  Model load() {
    std::string err;
    std::string bytes = read_file(path_, &err);
    if (!err.empty()) throw CompileError(ErrorKind::Invalid, "", err, "check the path");
    if (bytes.empty())
      throw CompileError(ErrorKind::Invalid, "", "the file is empty", "pass an ONNX model file (.onnx)");
    onnx::ModelProto proto;
    if (bytes.size() > static_cast<std::size_t>(INT_MAX) ||
        !proto.ParseFromArray(bytes.data(), static_cast<int>(bytes.size())))
      throw CompileError(ErrorKind::Invalid, "",
                         "the file is not a valid ONNX protobuf (truncated or not a model)",
                         "re-export the model; check the file was copied completely");
    Model m;
    m.path = path_;
    convert_model(proto, m);
    diag_.throw_if_any();
    return m;
  }

  Tensor tensor(const onnx::TensorProto& t, const std::string& where) { return convert_tensor(t, where); }
  void finish() { diag_.throw_if_any(); }

 private:
  void convert_model(const onnx::ModelProto& p, Model& m) {
    m.ir_version = p.ir_version();
    m.producer_name = p.producer_name();
    m.producer_version = p.producer_version();
    if (!p.has_ir_version())
      diag_.invalid("model", "ir_version is missing", "every ONNX model must state its IR version");
    else if (p.ir_version() < 3)
      diag_.unsupported("model", fmt::format("IR version {} is too old (onnxc reads IR 3 and later)", p.ir_version()),
                        "convert the model with onnx.version_converter to a newer opset");
    else if (p.ir_version() > 12)
      diag_.unsupported("model", fmt::format("IR version {} is newer than onnxc knows (up to 12)", p.ir_version()),
                        "export with an older IR version or upgrade onnxc");
    for (const auto& os : p.opset_import()) {
      std::string domain = os.domain() == "ai.onnx" ? "" : os.domain();
      if (m.opsets.count(domain))
        diag_.invalid("model", fmt::format("opset_import lists domain '{}' twice", os.domain()));
      m.opsets[domain] = static_cast<int>(os.version());
    }
    if (p.opset_import_size() == 0) {
      if (p.ir_version() >= 3)
        diag_.invalid("model", "opset_import is empty", "the model must import the ai.onnx opset it uses");
    }
    if (!p.has_graph()) {
      diag_.invalid("model", "the model has no graph");
      return;
    }
    opsets_ = &m.opsets;
    convert_graph(p.graph(), m.graph, nullptr, 0);
  }

  void read_value_info(const onnx::ValueInfoProto& vi, Value* v, const std::string& role) {
    std::string where = fmt::format("{} '{}'", role, vi.name());
    if (!vi.has_type()) {
      diag_.invalid(where, "has no type", "graph inputs and outputs must be typed");
      return;
    }
    const auto& type = vi.type();
    if (!type.has_tensor_type()) {
      diag_.unsupported(where, "is not a tensor (sequences, maps and optionals are not supported as graph inputs/outputs)");
      return;
    }
    const auto& tt = type.tensor_type();
    DType dt;
    if (!dtype_from_int(tt.elem_type(), &dt) || dt == DType::Undefined) {
      diag_.invalid(where, fmt::format("has unknown element type {}", tt.elem_type()));
      return;
    }
    v->dtype = dt;
    if (!tt.has_shape()) return;
    v->declared_rank = true;
    v->declared_dims.clear();
    for (const auto& d : tt.shape().dim()) {
      Dim dim;
      if (d.has_dim_value()) {
        if (d.dim_value() < 0) {
          diag_.invalid(where, fmt::format("has a negative dim {}", d.dim_value()));
          dim.value = -1;
        } else {
          dim.value = d.dim_value();
        }
      } else if (d.has_dim_param()) {
        dim.param = d.dim_param();
      }
      v->declared_dims.push_back(dim);
    }
  }

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
      diag_.invalid(where, fmt::format("has invalid dims {} (negative or overflowing)", shape_str(out.shape)));
      out.shape.clear();
      return out;
    }
    if (dt == DType::String) {
      if (t.string_data_size() != n) {
        diag_.invalid(where, fmt::format("has {} strings for shape {}", t.string_data_size(), shape_str(out.shape)));
        return out;
      }
      out.strings.assign(t.string_data().begin(), t.string_data().end());
      return out;
    }
    std::size_t esize = dtype_size(dt);
    if (esize == 0) {
      diag_.unsupported(where, fmt::format("has element type {}, which onnxc cannot store yet", dtype_name(dt)),
                        "convert the tensor to float32 or an integer type");
      return out;
    }
    if (static_cast<uint64_t>(n) > opts_.max_tensor_bytes / esize) {
      diag_.invalid(where, fmt::format("is too large: {} elements of {} ({} bytes allowed)", n, dtype_name(dt),
                                       opts_.max_tensor_bytes));
      return out;
    }
    std::size_t nbytes = static_cast<std::size_t>(n) * esize;

    if (t.data_location() == onnx::TensorProto::EXTERNAL) {
      read_external(t, where, nbytes, out);
      return out;
    }
    if (t.has_raw_data()) {
      if (t.raw_data().size() != nbytes) {
        diag_.invalid(where, fmt::format("raw_data has {} bytes; shape {} of {} needs {}", t.raw_data().size(),
                                         shape_str(out.shape), dtype_name(dt), nbytes));
        return out;
      }
      out.bytes.assign(t.raw_data().begin(), t.raw_data().end());
      if (dt == DType::Bool)
        for (auto& b : out.bytes) b = b != 0;
      return out;
    }
    out.bytes.assign(nbytes, 0);
    auto count_mismatch = [&](int have, const char* field) {
      diag_.invalid(where, fmt::format("{} has {} values; shape {} needs {}", field, have, shape_str(out.shape), n));
    };
    switch (dt) {
      case DType::Float:
        if (t.float_data_size() != n) return count_mismatch(t.float_data_size(), "float_data"), out;
        std::memcpy(out.bytes.data(), t.float_data().data(), nbytes);
        break;
      case DType::Double:
        if (t.double_data_size() != n) return count_mismatch(t.double_data_size(), "double_data"), out;
        std::memcpy(out.bytes.data(), t.double_data().data(), nbytes);
        break;
      case DType::Int64:
        if (t.int64_data_size() != n) return count_mismatch(t.int64_data_size(), "int64_data"), out;
        std::memcpy(out.bytes.data(), t.int64_data().data(), nbytes);
        break;
      case DType::Uint32:
      case DType::Uint64:
        if (t.uint64_data_size() != n) return count_mismatch(t.uint64_data_size(), "uint64_data"), out;
        for (int64_t i = 0; i < n; ++i) {
          uint64_t v = t.uint64_data(static_cast<int>(i));
          if (dt == DType::Uint32) out.data<uint32_t>()[i] = static_cast<uint32_t>(v);
          else out.data<uint64_t>()[i] = v;
        }
        break;
      default:  // int32_data carries every type narrower than 32 bits, bool and the 16-bit floats
        if (t.int32_data_size() != n) return count_mismatch(t.int32_data_size(), "int32_data"), out;
        for (int64_t i = 0; i < n; ++i) {
          int32_t v = t.int32_data(static_cast<int>(i));
          switch (dt) {
            case DType::Int32: out.data<int32_t>()[i] = v; break;
            case DType::Int16: out.data<int16_t>()[i] = static_cast<int16_t>(v); break;
            case DType::Int8: out.data<int8_t>()[i] = static_cast<int8_t>(v); break;
            case DType::Uint16:
            case DType::Float16:
            case DType::BFloat16: out.data<uint16_t>()[i] = static_cast<uint16_t>(v); break;
            case DType::Uint8: out.data<uint8_t>()[i] = static_cast<uint8_t>(v); break;
            case DType::Bool: out.data<uint8_t>()[i] = v != 0; break;
            default: break;
          }
        }
        break;
    }
    return out;
  }

  void read_external(const onnx::TensorProto& t, const std::string& where, std::size_t nbytes, Tensor& out) {
    std::string location;
    uint64_t offset = 0, length = 0;
    bool has_length = false;
    for (const auto& kv : t.external_data()) {
      try {
        if (kv.key() == "location") location = kv.value();
        else if (kv.key() == "offset") offset = std::stoull(kv.value());
        else if (kv.key() == "length") length = std::stoull(kv.value()), has_length = true;
      } catch (const std::exception&) {
        diag_.invalid(where, fmt::format("external_data '{}' is not a number: '{}'", kv.key(), kv.value()));
        return;
      }
    }
    if (location.empty()) {
      diag_.invalid(where, "external data has no 'location'");
      return;
    }
    fs::path rel(location);
    if (rel.is_absolute() || location.find("..") != std::string::npos) {
      diag_.invalid(where, fmt::format("external data location '{}' leaves the model's folder", location),
                    "external data files must sit in the model's folder or below it");
      return;
    }
    fs::path file = dir_ / rel;
    std::error_code ec;
    uint64_t fsize = fs::file_size(file, ec);
    if (ec) {
      diag_.invalid(where, fmt::format("external data file '{}' cannot be read", file.string()),
                    "copy the data file next to the model");
      return;
    }
    if (has_length && length != nbytes) {
      diag_.invalid(where, fmt::format("external data length {} does not match shape {} ({} bytes)", length,
                                       shape_str(out.shape), nbytes));
      return;
    }
    if (offset > fsize || nbytes > fsize - offset) {
      diag_.invalid(where, fmt::format("external data [{}, +{}) lies outside '{}' ({} bytes)", offset, nbytes,
                                       location, fsize));
      return;
    }
    std::ifstream f(file, std::ios::binary);
    out.bytes.resize(nbytes);
    f.seekg(static_cast<std::streamoff>(offset));
    f.read(reinterpret_cast<char*>(out.bytes.data()), static_cast<std::streamsize>(nbytes));
    if (!f) diag_.invalid(where, fmt::format("reading external data from '{}' failed", location));
  }

  void convert_attribute(const onnx::AttributeProto& a, Attribute& out, const std::string& where, Graph* scope,
                         int depth) {
    using AP = onnx::AttributeProto;
    AP::AttributeType type = a.type();
    if (type == AP::UNDEFINED) {  // IR < 3 files: infer from the populated field
      if (a.has_f()) type = AP::FLOAT;
      else if (a.has_i()) type = AP::INT;
      else if (a.has_s()) type = AP::STRING;
      else if (a.has_t()) type = AP::TENSOR;
      else if (a.has_g()) type = AP::GRAPH;
      else if (a.floats_size()) type = AP::FLOATS;
      else if (a.ints_size()) type = AP::INTS;
      else if (a.strings_size()) type = AP::STRINGS;
    }
    std::string aw = fmt::format("{}: attribute '{}'", where, a.name());
    switch (type) {
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
      default:
        diag_.invalid(aw, fmt::format("has unknown attribute type {}", static_cast<int>(type)));
        break;
    }
    if (!a.ref_attr_name().empty())
      diag_.invalid(aw, "refers to a function attribute (ref_attr_name) outside a function");
  }

  void convert_graph(const onnx::GraphProto& gp, Graph& g, Graph* outer, int depth) {
    if (depth > 64) {
      diag_.unsupported("graph '" + gp.name() + "'", "subgraphs are nested more than 64 levels deep");
      return;
    }
    g.name = gp.name();
    g.outer = outer;
    std::string gwhere = depth == 0 ? "graph" : fmt::format("subgraph '{}'", gp.name());

    // Initializers first: they are constants, possibly also listed as inputs (IR < 4 style).
    for (const auto& init : gp.initializer()) {
      std::string where = fmt::format("initializer '{}'", init.name());
      if (init.name().empty()) {
        diag_.invalid(gwhere, "an initializer has no name");
        continue;
      }
      if (g.find(init.name())) {
        diag_.invalid(where, "is defined twice", "initializer names must be unique");
        continue;
      }
      Value* v = g.add_value(init.name());
      Tensor t = convert_tensor(init, where);
      v->dtype = t.dtype;
      v->shape = t.shape;
      v->has_shape = true;
      v->constant = std::make_shared<Tensor>(std::move(t));
    }
    for (const auto& sp : gp.sparse_initializer()) {
      diag_.unsupported(fmt::format("sparse initializer '{}'", sp.values().name()), "sparse initializers are not supported",
                        "densify the initializer before compiling");
    }
    for (const auto& in : gp.input()) {
      std::string where = fmt::format("input '{}'", in.name());
      if (in.name().empty()) {
        diag_.invalid(gwhere, "a graph input has no name");
        continue;
      }
      if (Value* v = g.find(in.name())) {
        if (!v->constant) diag_.invalid(where, "is listed twice");
        continue;  // an initializer that is also an input: a constant with a default value
      }
      Value* v = g.add_value(in.name());
      v->is_graph_input = true;
      read_value_info(in, v, "input");
      g.inputs.push_back(v);
    }
    // Nodes: create outputs first so inputs can refer to them regardless of file order.
    std::vector<const onnx::NodeProto*> protos;
    std::set<std::string> node_names;
    for (int i = 0; i < gp.node_size(); ++i) {
      const auto& np = gp.node(i);
      auto n = std::make_unique<Node>();
      n->index = i;
      n->op_type = np.op_type();
      n->domain = np.domain() == "ai.onnx" ? "" : np.domain();
      n->name = np.name().empty() ? fmt::format("{}_{}", np.op_type(), i) : np.name();
      auto it = opsets_->find(n->domain);
      n->opset = it == opsets_->end() ? 0 : it->second;
      std::string where = n->describe();
      if (np.op_type().empty()) diag_.invalid(where, "has no op_type");
      if (!np.name().empty() && !node_names.insert(np.name()).second && depth == 0)
        diag_.invalid(where, "shares its name with an earlier node", "node names must be unique in a graph");
      if (it == opsets_->end())
        diag_.invalid(where, fmt::format("uses domain '{}', which the model does not import", np.domain()),
                      "add the domain to the model's opset_import");
      for (const auto& out : np.output()) {
        if (out.empty()) {
          n->outputs.push_back(nullptr);
          continue;
        }
        if (g.find(out)) {
          diag_.invalid(where, fmt::format("output '{}' is already defined elsewhere", out),
                        "every value must be assigned exactly once (SSA)");
          n->outputs.push_back(nullptr);
          continue;
        }
        Value* v = g.add_value(out);
        n->outputs.push_back(v);
      }
      for (const auto& a : np.attribute()) {
        if (a.name().empty()) {
          diag_.invalid(where, "has an attribute without a name");
          continue;
        }
        if (n->attrs.count(a.name())) {
          diag_.invalid(where, fmt::format("has attribute '{}' twice", a.name()));
          continue;
        }
        convert_attribute(a, n->attrs[a.name()], where, &g, depth);
      }
      protos.push_back(&np);
      g.add_node(std::move(n));
    }
    for (std::size_t i = 0; i < protos.size(); ++i) {
      Node* n = g.nodes[i].get();
      for (const auto& in : protos[i]->input()) {
        if (in.empty()) {
          n->inputs.push_back(nullptr);
          continue;
        }
        Value* v = lookup(g, in);
        if (!v) {
          diag_.invalid(n->describe(), fmt::format("input '{}' is not defined", in),
                        "every input must be a graph input, an initializer or an earlier node's output");
        }
        n->inputs.push_back(v);
      }
    }
    for (const auto& out : gp.output()) {
      Value* v = lookup(g, out.name());
      if (!v) {
        diag_.invalid(fmt::format("output '{}'", out.name()), "is not produced by any node, input or initializer");
        continue;
      }
      if (v->is_graph_output) {
        diag_.invalid(fmt::format("output '{}'", out.name()), "is listed twice as a graph output");
        continue;
      }
      v->is_graph_output = true;
      Value tmp;
      read_value_info(out, &tmp, "output");
      if (v->dtype == DType::Undefined) v->dtype = tmp.dtype;
      v->declared_dims = tmp.declared_dims;
      v->declared_rank = tmp.declared_rank;
      g.outputs.push_back(v);
    }
    g.relink();
    sort_topologically(g, gwhere);
  }

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

  std::string path_;
  fs::path dir_;
  LoadOptions opts_;
  Diagnostics diag_;
  const std::map<std::string, int>* opsets_ = nullptr;
};

}  // namespace

Model load_model(const std::string& path, const LoadOptions& options) {
  Loader loader(path, options);
  return loader.load();
}

Tensor load_tensor_file(const std::string& path, std::string* name) {
  std::string err;
  std::string bytes = read_file(path, &err);
  if (!err.empty()) throw CompileError(ErrorKind::Invalid, path, err);
  onnx::TensorProto proto;
  if (bytes.size() > static_cast<std::size_t>(INT_MAX) ||
      !proto.ParseFromArray(bytes.data(), static_cast<int>(bytes.size())))
    throw CompileError(ErrorKind::Invalid, path, "is not a serialized TensorProto");
  Loader loader(path, LoadOptions{});
  Tensor t = loader.tensor(proto, fmt::format("tensor '{}'", proto.name()));
  loader.finish();
  if (name) *name = proto.name();
  return t;
}

}  // namespace onnxc
