#include "opforge/network.h"

#include "graph.h"

namespace opforge {

NetworkDefinition::NetworkDefinition(std::shared_ptr<Registry> registry)
    : registry_(registry ? std::move(registry) : Registry::global()),
      g_(std::make_unique<graph::Graph>()) {}
NetworkDefinition::~NetworkDefinition() = default;
NetworkDefinition::NetworkDefinition(NetworkDefinition&&) noexcept = default;
NetworkDefinition& NetworkDefinition::operator=(NetworkDefinition&&) noexcept = default;

const std::string& NetworkDefinition::source() const {
  return g_->source;
}
void NetworkDefinition::setSource(std::string s) {
  g_->source = std::move(s);
}

namespace {
Status checkNewName(const graph::Graph& g, const std::string& name, const char* what) {
  if (name.empty()) return Status::invalid(std::string(what) + " needs a non-empty name");
  if (g.findValue(name) >= 0)
    return Status::invalid(std::string(what) + " '" + name +
                           "': a tensor of that name already exists");
  return Status::ok();
}
}  // namespace

Result<TensorRef> NetworkDefinition::addInput(const std::string& name, DataType dtype,
                                              const std::vector<int64_t>& dims, Format format) {
  OPFORGE_RETURN_IF_ERROR(checkNewName(*g_, name, "input"));
  if (!isKnownDataType(static_cast<int32_t>(dtype)))
    return Status::unsupported("input '" + name + "': data type " + dtypeName(dtype) +
                               " is not supported");
  graph::Value v;
  v.name = name;
  v.dtype = dtype;
  v.format = format;
  v.is_input = true;
  for (size_t a = 0; a < dims.size(); ++a) {
    if (dims[a] == -1) {
      v.dims.push_back(DimExpr::symbol(name + "." + std::to_string(a)));
    } else if (dims[a] < 0) {
      return Status::invalid("input '" + name + "': dimension " + std::to_string(a) + " is " +
                             std::to_string(dims[a]) + " (use -1 for a dynamic dimension)");
    } else {
      v.dims.emplace_back(dims[a]);
    }
  }
  int id = g_->addValue(std::move(v));
  g_->inputs.push_back(id);
  return TensorRef{id};
}

Result<TensorRef> NetworkDefinition::addConstant(const std::string& name, TensorValue value) {
  OPFORGE_RETURN_IF_ERROR(checkNewName(*g_, name, "constant"));
  if (value.data.size() != value.desc.bytes())
    return Status::invalid("constant '" + name + "': " + std::to_string(value.data.size()) +
                           " bytes given for " + describe(value.desc) + " (" +
                           std::to_string(value.desc.bytes()) + " bytes)");
  graph::Value v;
  v.name = name;
  v.dtype = value.desc.dtype;
  for (int64_t d : value.desc.dims) v.dims.emplace_back(d);
  v.sym_value = graph::constantAsDims(value);
  v.constant = std::make_shared<const TensorValue>(std::move(value));
  return TensorRef{g_->addValue(std::move(v))};
}

Result<std::vector<TensorRef>> NetworkDefinition::addOp(const std::string& key,
                                                        const std::vector<TensorRef>& inputs,
                                                        const Attrs& attrs, const std::string& name,
                                                        const std::string& version) {
  const RegisteredOp* op = registry_->find(key, version);
  if (!op)
    return Status::notFound(
        "op " + key + " v" + version +
        " is not registered; loaded: " + registry_->librariesSummary() +
        ". Load the library that defines it (Registry::loadLibrary, or --plugins=PATH).");
  std::string node_name = name.empty() ? g_->uniqueNodeName(op->schema().name) : name;
  AttrMap given;
  for (const auto& [k, v] : attrs) given.set(k, v);
  std::vector<int> ids;
  for (const auto& t : inputs) ids.push_back(t.id);
  OPFORGE_ASSIGN_OR_RETURN(int n, graph::addNode(*g_, op, node_name, given, ids, {}, false));
  std::vector<TensorRef> out;
  for (int v : g_->nodes[n].outputs) out.push_back(TensorRef{v});
  return out;
}

Status NetworkDefinition::markOutput(TensorRef t, const std::string& name) {
  if (t.id < 0 || t.id >= static_cast<int>(g_->values.size()))
    return Status::invalid("markOutput: unknown tensor");
  graph::Value& v = g_->values[t.id];
  if (!name.empty() && name != v.name) {
    if (g_->findValue(name) >= 0)
      return Status::invalid("markOutput: a tensor named '" + name + "' already exists");
    v.name = name;
  }
  if (v.is_output) return Status::ok();
  v.is_output = true;
  g_->outputs.push_back(t.id);
  return Status::ok();
}

Status NetworkDefinition::setOutputFormat(const std::string& name, Format format) {
  g_->output_formats[name] = format;
  return Status::ok();
}

Status NetworkDefinition::setInputFormat(const std::string& name, Format format) {
  int id = g_->findValue(name);
  if (id < 0 || !g_->values[id].is_input)
    return Status::notFound("'" + name + "' is not an input of the network");
  g_->values[id].format = format;
  return Status::ok();
}

std::vector<std::string> NetworkDefinition::inputNames() const {
  std::vector<std::string> out;
  for (int id : g_->inputs) out.push_back(g_->values[id].name);
  return out;
}

std::vector<std::string> NetworkDefinition::outputNames() const {
  std::vector<std::string> out;
  for (int id : g_->outputs) out.push_back(g_->values[id].name);
  return out;
}

std::string NetworkDefinition::tensorName(TensorRef t) const {
  return t.id >= 0 && t.id < static_cast<int>(g_->values.size()) ? g_->values[t.id].name : "";
}

Result<TensorRef> NetworkDefinition::findTensor(const std::string& name) const {
  int id = g_->findValue(name);
  if (id < 0) return Status::notFound("no tensor named '" + name + "'");
  return TensorRef{id};
}

std::string NetworkDefinition::shapeOf(TensorRef t) const {
  return t.id >= 0 && t.id < static_cast<int>(g_->values.size()) ? toString(g_->values[t.id].dims)
                                                                 : "";
}

DataType NetworkDefinition::dtypeOf(TensorRef t) const {
  return t.id >= 0 && t.id < static_cast<int>(g_->values.size()) ? g_->values[t.id].dtype
                                                                 : DataType::kUndefined;
}

int NetworkDefinition::numNodes() const {
  return static_cast<int>(g_->nodes.size());
}

Result<NodeInfo> NetworkDefinition::node(int index) const {
  if (index < 0 || index >= numNodes())
    return Status::outOfRange("node " + std::to_string(index) + ": the network has " +
                              std::to_string(numNodes()) + " nodes");
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

std::vector<DimExpr> NetworkDefinition::dimsOf(TensorRef t) const {
  return t.id >= 0 && t.id < static_cast<int>(g_->values.size()) ? g_->values[t.id].dims
                                                                 : std::vector<DimExpr>{};
}

Status NetworkDefinition::replaceNode(int index, const std::string& key, const Attrs& attrs,
                                      const std::string& version) {
  if (index < 0 || index >= numNodes())
    return Status::outOfRange("replaceNode: node " + std::to_string(index) + ": the network has " +
                              std::to_string(numNodes()) + " nodes");
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

NetworkDefinition NetworkDefinition::clone() const {
  NetworkDefinition copy(registry_);
  *copy.g_ = *g_;
  return copy;
}

}  // namespace opforge
