// opforge/network.h — a network to build: made in C++ or imported from ONNX.
//
// NetworkDefinition mirrors TensorRT's INetworkDefinition (add_input / add_plugin / mark_output).
// Every call validates at once: addOp resolves the op in the registry, converts and checks the
// attributes, and runs the op's symbolic shape rule, so an error names the node, the op and the
// attribute or input at fault when the node is created, not later.
//
// Dynamic dimensions are -1 in addInput; they become symbols "<input>.<axis>" (e.g. "x.0") that
// the builder's optimization profiles bound.
//
// Usage (the seed's circular padding example):
//   opforge::NetworkDefinition net(registry);
//   auto x = net.addInput("x", opforge::DataType::kFloat32, {-1, 3, 8, 8});
//   auto y = net.addOp("example::circ_pad_plugin", {*x}, {{"pads", std::vector<int32_t>{1, 1, 2,
//   2}}}); net.markOutput((*y)[0], "y");
//
//   auto imported = opforge::importOnnx("model.onnx", registry);   // Result<NetworkDefinition>
#pragma once

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "opforge/op.h"
#include "opforge/registry.h"
#include "opforge/status.h"
#include "opforge/tensor.h"

namespace opforge {

namespace graph {
struct Graph;
}

// A handle to a tensor of a network (valid for the network that returned it).
struct TensorRef {
  int id = -1;
  bool valid() const { return id >= 0; }
};

using Attrs = std::map<std::string, AttrValue>;

class NetworkDefinition {
 public:
  explicit NetworkDefinition(std::shared_ptr<Registry> registry = Registry::global());
  ~NetworkDefinition();
  NetworkDefinition(NetworkDefinition&&) noexcept;
  NetworkDefinition& operator=(NetworkDefinition&&) noexcept;

  // A network input. dims: -1 marks a dynamic dimension. format: the layout callers supply.
  Result<TensorRef> addInput(const std::string& name, DataType dtype,
                             const std::vector<int64_t>& dims, Format format = Format::kLinear);
  // A constant (weights). The network keeps a copy.
  Result<TensorRef> addConstant(const std::string& name, TensorValue value);
  // A node of op `key` ("ns::name", or an alias) at `version`. An invalid TensorRef in `inputs`
  // leaves an optional input out. Returns the node's outputs (declared outputs, then size tensors
  // the shape rule declared but did not return). `name` defaults to "<op name>_<n>".
  Result<std::vector<TensorRef>> addOp(const std::string& key, const std::vector<TensorRef>& inputs,
                                       const Attrs& attrs = {}, const std::string& name = "",
                                       const std::string& version = "1");
  // Marks a tensor as a network output, optionally renaming it.
  Status markOutput(TensorRef t, const std::string& name = "");
  // Output formats the caller wants (default LINEAR).
  Status setOutputFormat(const std::string& name, Format format);
  // The memory format in which callers will supply an input (default LINEAR).
  Status setInputFormat(const std::string& name, Format format);
  std::vector<std::string> inputNames() const;
  std::vector<std::string> outputNames() const;

  std::string tensorName(TensorRef t) const;
  Result<TensorRef> findTensor(const std::string& name) const;
  // Symbolic shape text of a tensor, e.g. "[x.0, 3, 10, 12]".
  std::string shapeOf(TensorRef t) const;
  DataType dtypeOf(TensorRef t) const;
  int numNodes() const;
  const std::shared_ptr<Registry>& registry() const { return registry_; }
  // Where the network came from ("model.onnx" or "<api>"), used in error messages.
  const std::string& source() const;
  void setSource(std::string s);

  // Internal representation (for the builder and the importer).
  graph::Graph& graph() { return *g_; }
  const graph::Graph& graph() const { return *g_; }

 private:
  std::shared_ptr<Registry> registry_;
  std::unique_ptr<graph::Graph> g_;
};

struct OnnxImportOptions {
  // Unknown attributes are ignored on plugin nodes (TensorRT's parser passes only the fields a
  // creator names); set to reject them instead.
  bool strict_attributes = false;
  // A Loop whose trip count or condition is computed from run-time data is unrolled to this many
  // iterations, each guarded by whether it runs (1 to 4096); a run that needs more fails with an
  // error naming the loop (opforge::LoopLimit). Each unrolled iteration is a copy of the body in
  // the plan: raise it for longer loops, at the cost of build time and plan size.
  int max_dynamic_loop_iterations = 64;
};

// Imports an ONNX model file. Plugin nodes follow TensorRT's ONNX parser convention: op = the
// node's op_type; namespace = attribute plugin_namespace, else the node's domain; version =
// attribute plugin_version, else "1". Standard ONNX nodes (domain "" or "ai.onnx") map to
// built-in ops. Errors name the file and the node; an unknown op lists every unresolved
// (namespace, name, version), the libraries loaded, and the --plugins flag.
Result<NetworkDefinition> importOnnx(const std::string& path,
                                     std::shared_ptr<Registry> registry = Registry::global(),
                                     const OnnxImportOptions& options = {});
// The same from bytes in memory; `base_dir` resolves external data ("" forbids it).
Result<NetworkDefinition> importOnnxBytes(const std::string& bytes, const std::string& name,
                                          const std::string& base_dir,
                                          std::shared_ptr<Registry> registry = Registry::global(),
                                          const OnnxImportOptions& options = {});

}  // namespace opforge
