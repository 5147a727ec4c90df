// opforge/network_edit.h: a network's nodes read and replaced (lowerings made outside the engine).
#include "opforge/network_edit.h"

#include "graph.h"

namespace opforge {

Result<NodeInfo> networkNode(const NetworkDefinition& net, int index) {
  const graph::Graph* g_ = &net.graph();
  const int numNodes = net.numNodes();
  if (index < 0 || index >= numNodes)
    return Status::outOfRange("node " + std::to_string(index) + ": the network has " +
                              std::to_string(numNodes) + " nodes");
  const graph::Node& n = g_->nodes[index];
  NodeInfo info;
  info.name = n.name;
  info.op = n.op->key();
  info.version = n.op->schema().version;
  info.library = n.op->library().path;
  info.attrs = n.attrs;
  for (int v : n.inputs) info.inputs.push_back(TensorRef{v});
  for (int v : n.outputs) info.outputs.push_back(TensorRef{v});
  return info;
}

std::vector<DimExpr> networkDims(const NetworkDefinition& net, TensorRef t) {
  const graph::Graph* g_ = &net.graph();
  return t.id >= 0 && t.id < static_cast<int>(g_->values.size()) ? g_->values[t.id].dims
                                                                 : std::vector<DimExpr>{};
}

Status replaceNode(NetworkDefinition& net, int index, const std::string& key, const Attrs& attrs,
                   const std::string& version) {
  graph::Graph* g_ = &net.graph();
  const std::shared_ptr<Registry>& registry_ = net.registry();
  if (index < 0 || index >= net.numNodes())
    return Status::outOfRange("replaceNode: node " + std::to_string(index) + ": the network has " +
                              std::to_string(net.numNodes()) + " nodes");
  const RegisteredOp* op = registry_->find(key, version);
  if (!op)
    return Status::notFound("replaceNode: op " + key + " v" + version + " is not registered");
  const graph::Node old = g_->nodes[index];
  const std::string what = "replacing " + graph::nodeLabel(old) + " by " + key;
  // A scratch graph holding the node's inputs: the new node is made there first, so a refusal
  // leaves this network as it was.
  graph::Graph scratch;
  std::vector<int> ids;
  for (int v : old.inputs) {
    if (v < 0) {
      ids.push_back(-1);
      continue;
    }
    graph::Value copy = g_->values[v];
    copy.producer = -1;
    copy.is_output = false;
    ids.push_back(scratch.addValue(std::move(copy)));
  }
  AttrMap given;
  for (const auto& [k, v] : attrs) given.set(k, v);
  auto made = graph::addNode(scratch, op, old.name, given, ids, {}, false);
  if (!made) return made.status().withContext(what);
  graph::Node& fresh = scratch.nodes[*made];
  if (fresh.outputs.size() != old.outputs.size())
    return Status::invalid(what + ": the new op gives " + std::to_string(fresh.outputs.size()) +
                           " outputs, the node has " + std::to_string(old.outputs.size()));
  for (size_t o = 0; o < old.outputs.size(); ++o) {
    const graph::Value& want = g_->values[old.outputs[o]];
    const graph::Value& got = scratch.values[fresh.outputs[o]];
    if (want.dtype != got.dtype || want.dims.size() != got.dims.size())
      return Status::invalid(what + ": output " + std::to_string(o) + " ('" + want.name + "') is " +
                             dtypeName(want.dtype) + toString(want.dims) + "; the new op gives " +
                             dtypeName(got.dtype) + toString(got.dims));
    for (size_t a = 0; a < want.dims.size(); ++a)
      if (!want.dims[a].sameAs(got.dims[a]))
        fresh.assertions.push_back(
            DimAssertion{got.dims[a], DimAssertion::Op::kEq, want.dims[a],
                         what + ": dim " + std::to_string(a) + " of output " + std::to_string(o) +
                             " must be the node's " + want.dims[a].toString()});
  }
  if (!fresh.size_tensors.empty() || !old.size_tensors.empty())
    return Status::unsupported(what + ": nodes with data-dependent sizes cannot be replaced");
  graph::Node& n = g_->nodes[index];
  n.op = fresh.op;
  n.attrs = std::move(fresh.attrs);
  n.instance = std::move(fresh.instance);
  n.aliases = std::move(fresh.aliases);
  n.assertions = std::move(fresh.assertions);
  return Status::ok();
}

NetworkDefinition cloneNetwork(const NetworkDefinition& net) {
  NetworkDefinition copy(net.registry());
  copy.graph() = net.graph();
  return copy;
}

}  // namespace opforge
