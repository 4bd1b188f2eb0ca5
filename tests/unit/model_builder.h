// Builds small ONNX models in memory for tests (through our own onnx.proto).
#pragma once

#include <cstdio>
#include <fstream>
#include <initializer_list>
#include <string>
#include <vector>

#include "onnx.pb.h"

namespace testing {

class ModelBuilder {
 public:
  explicit ModelBuilder(int opset = 13, int ir_version = 8) {
    model_.set_ir_version(ir_version);
    auto* os = model_.add_opset_import();
    os->set_domain("");
    os->set_version(opset);
    model_.mutable_graph()->set_name("test");
  }

  ModelBuilder& input(const std::string& name, std::vector<int64_t> dims, int dtype = onnx::TensorProto::FLOAT) {
    describe(model_.mutable_graph()->add_input(), name, dims, dtype);
    return *this;
  }
  ModelBuilder& output(const std::string& name, std::vector<int64_t> dims = {}, int dtype = onnx::TensorProto::FLOAT) {
    describe(model_.mutable_graph()->add_output(), name, dims, dtype);
    return *this;
  }
  ModelBuilder& floats(const std::string& name, std::vector<int64_t> dims, std::vector<float> values) {
    auto* t = model_.mutable_graph()->add_initializer();
    t->set_name(name);
    t->set_data_type(onnx::TensorProto::FLOAT);
    for (auto d : dims) t->add_dims(d);
    for (float v : values) t->add_float_data(v);
    return *this;
  }
  ModelBuilder& ints(const std::string& name, std::vector<int64_t> dims, std::vector<int64_t> values) {
    auto* t = model_.mutable_graph()->add_initializer();
    t->set_name(name);
    t->set_data_type(onnx::TensorProto::INT64);
    for (auto d : dims) t->add_dims(d);
    for (auto v : values) t->add_int64_data(v);
    return *this;
  }
  onnx::NodeProto& node(const std::string& op, std::vector<std::string> in, std::vector<std::string> out,
                        const std::string& name = "") {
    auto* n = model_.mutable_graph()->add_node();
    n->set_op_type(op);
    n->set_name(name);
    for (auto& i : in) n->add_input(i);
    for (auto& o : out) n->add_output(o);
    return *n;
  }
  static void attr_ints(onnx::NodeProto& n, const std::string& name, std::vector<int64_t> v) {
    auto* a = n.add_attribute();
    a->set_name(name);
    a->set_type(onnx::AttributeProto::INTS);
    for (auto x : v) a->add_ints(x);
  }
  static void attr_int(onnx::NodeProto& n, const std::string& name, int64_t v) {
    auto* a = n.add_attribute();
    a->set_name(name);
    a->set_type(onnx::AttributeProto::INT);
    a->set_i(v);
  }
  onnx::ModelProto& proto() { return model_; }

  // Writes the model to a file under /tmp and returns its path.
  std::string write(const std::string& name) const {
    std::string path = "/tmp/onnxc-unit-" + name + ".onnx";
    std::ofstream f(path, std::ios::binary);
    model_.SerializeToOstream(&f);
    return path;
  }

 private:
  static void describe(onnx::ValueInfoProto* vi, const std::string& name, const std::vector<int64_t>& dims, int dtype) {
    vi->set_name(name);
    auto* tt = vi->mutable_type()->mutable_tensor_type();
    tt->set_elem_type(dtype);
    auto* shape = tt->mutable_shape();
    for (auto d : dims) {
      if (d >= 0) shape->add_dim()->set_dim_value(d);
      else shape->add_dim()->set_dim_param("N");
    }
  }
  onnx::ModelProto model_;
};

}  // namespace testing
