#include "opforge/network.h"

#include "../common/checked.h"
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
  // opforge's maximum per tensor (the builder checks every tensor at every profile point; a shape
  // rule may multiply dims of this size, never wider ones).
  int64_t known = 1;
  for (int64_t d : dims)
    if (d > 0 && (__builtin_mul_overflow(known, d, &known) || known > checked::kMaxElements))
      return Status::outOfRange("input '" + name + "' of shape " + dimsToString(dims) +
                                " has more than 2^40 elements, opforge's maximum per tensor");
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
    g_->renameValue(t.id, name);
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

}  // namespace opforge
