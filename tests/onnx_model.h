// onnx_model.h — a small ONNX model builder for the C++ tests (onnx_pb directly): inputs,
// outputs, nodes, attributes, saved under the test's own directory.
#pragma once

#include <sys/stat.h>

#include <fstream>
#include <string>
#include <vector>

#include "onnx/onnx_pb.h"
#include "op_harness.h"

namespace opforge::test {

// A node appended to `g` (a model's graph or a subgraph: a branch, a loop body).
inline onnx::NodeProto* addNode(onnx::GraphProto& g, const std::string& op,
                                std::vector<std::string> in, std::vector<std::string> out,
                                const std::string& name = "", const std::string& domain = "") {
  auto* n = g.add_node();
  n->set_op_type(op);
  n->set_name(name);
  n->set_domain(domain);
  for (auto& i : in) n->add_input(i);
  for (auto& o : out) n->add_output(o);
  return n;
}
// A Constant node of INT64 values and the given dims.
inline void constInt64(onnx::GraphProto& g, const std::string& out, std::vector<int64_t> dims,
                       std::vector<int64_t> v) {
  auto* a = addNode(g, "Constant", {}, {out})->add_attribute();
  a->set_name("value");
  a->set_type(onnx::AttributeProto::TENSOR);
  auto* t = a->mutable_t();
  t->set_data_type(onnx::TensorProto::INT64);
  for (int64_t d : dims) t->add_dims(d);
  for (int64_t x : v) t->add_int64_data(x);
}

struct Model {
  onnx::ModelProto m;
  Model() {
    m.set_ir_version(8);
    auto* o = m.add_opset_import();
    o->set_domain("");
    o->set_version(17);
    m.mutable_graph()->set_name("g");
  }
  onnx::GraphProto& g() { return *m.mutable_graph(); }
  void input(const std::string& name, int type, std::vector<int64_t> dims) {
    auto* v = g().add_input();
    v->set_name(name);
    auto* t = v->mutable_type()->mutable_tensor_type();
    t->set_elem_type(type);
    auto* s = t->mutable_shape();
    for (int64_t d : dims) {
      auto* dim = s->add_dim();
      if (d < 0)
        dim->set_dim_param("N");
      else
        dim->set_dim_value(d);
    }
  }
  void output(const std::string& name, int type = 0) {
    auto* v = g().add_output();
    v->set_name(name);
    v->mutable_type()->mutable_tensor_type()->set_elem_type(type);
  }
  onnx::NodeProto* node(const std::string& op, std::vector<std::string> in,
                        std::vector<std::string> out, const std::string& name = "",
                        const std::string& domain = "") {
    return addNode(g(), op, std::move(in), std::move(out), name, domain);
  }
  std::string save(const std::string& file) {
    std::string dir = test::testDir() + "/onnx_import";
    ::mkdir(dir.c_str(), 0755);
    std::string path = dir + "/" + file;
    std::ofstream f(path, std::ios::binary);
    f << m.SerializeAsString();
    return path;
  }
};
inline void strAttr(onnx::NodeProto* n, const std::string& k, const std::string& v) {
  auto* a = n->add_attribute();
  a->set_name(k);
  a->set_type(onnx::AttributeProto::STRING);
  a->set_s(v);
}
inline void intsAttr(onnx::NodeProto* n, const std::string& k, std::vector<int64_t> v) {
  auto* a = n->add_attribute();
  a->set_name(k);
  a->set_type(onnx::AttributeProto::INTS);
  for (auto x : v) a->add_ints(x);
}
inline void intAttr(onnx::NodeProto* n, const std::string& k, int64_t v) {
  auto* a = n->add_attribute();
  a->set_name(k);
  a->set_type(onnx::AttributeProto::INT);
  a->set_i(v);
}
}  // namespace opforge::test
