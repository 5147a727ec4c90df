// opforge/network_edit.h — reading a network's nodes and replacing one by an equivalent op: what a
// lowering made outside the engine needs (the Python package replaces the nodes of ops defined in
// Python that run ahead of time by opforge::AotKernel layers, ops/core/aot_kernel/README.md).
//
// Usage:
//   NetworkDefinition copy = cloneNetwork(net);              // the original stays as it was
//   for (int i = 0; i < copy.numNodes(); ++i) {
//     NodeInfo n = *networkNode(copy, i);
//     if (n.op == "my::op") OPFORGE_RETURN_IF_ERROR(replaceNode(copy, i, "my::op_fast", attrs));
//   }
#pragma once

#include <string>
#include <vector>

#include "opforge/network.h"

namespace opforge {

// A node of a network as the API sees it.
struct NodeInfo {
  std::string name;
  std::string op;       // "ns::name" of the op it runs
  std::string version;  // the op's version
  std::string library;  // where the op comes from ("<built-in>", a path, "python:<module>")
  AttrMap attrs;        // validated, defaults filled in
  std::vector<TensorRef> inputs;   // an invalid ref for an omitted optional input
  std::vector<TensorRef> outputs;  // declared outputs, then hidden size tensors
};

// Node `index` (0 <= index < numNodes(), in topological order).
Result<NodeInfo> networkNode(const NetworkDefinition& net, int index);
// The symbolic dimensions of a tensor ("x.0" for a dynamic axis of input x); empty for an unknown
// tensor.
std::vector<DimExpr> networkDims(const NetworkDefinition& net, TensorRef t);
// Makes node `index` run op `key` with `attrs` instead, on the same inputs and writing the same
// output tensors (a lowering: an op replaced by an equivalent one). The new op's shape rule must
// give the same number of outputs with the same dtypes and ranks; dimensions it writes in another
// form become assertions checked at every profile point and whenever shapes are set. Nodes with
// data-dependent sizes are not replaced. On error the network is unchanged.
Status replaceNode(NetworkDefinition& net, int index, const std::string& key, const Attrs& attrs,
                   const std::string& version = "1");
// An independent copy: the same registry; nodes, tensors, names and formats copied.
NetworkDefinition cloneNetwork(const NetworkDefinition& net);

}  // namespace opforge
