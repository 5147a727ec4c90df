// importer.cc — resolving ops, the topological order and one node's import (importer.h).
#include "importer.h"

#include <cstring>

#include "../graph/fold.h"
#include "onnx_tensor.h"

namespace opforge::onnx_import {

bool isStandardDomain(const std::string& d) {
  return d.empty() || d == "ai.onnx";
}

std::string nodeDisplayName(const onnx::NodeProto& n, int index) {
  return n.name().empty() ? n.op_type() + "_" + std::to_string(index) : n.name();
}

Result<AttrValue> convertAttribute(const onnx::AttributeProto& a, const std::string& where) {
  using A = onnx::AttributeProto;
  switch (a.type()) {
    case A::FLOAT:
      return AttrValue(static_cast<double>(a.f()));
    case A::INT:
      return AttrValue(static_cast<int64_t>(a.i()));
    case A::STRING:
      return AttrValue(a.s());
    case A::TENSOR: {
      OPFORGE_ASSIGN_OR_RETURN(
          TensorValue t,
          onnx_io::tensorFromProto(a.t(), "", where + " attribute '" + a.name() + "'"));
      return AttrValue(std::move(t));
    }
    case A::FLOATS:
      return AttrValue(std::vector<float>(a.floats().begin(), a.floats().end()));
    case A::INTS:
      return AttrValue(std::vector<int64_t>(a.ints().begin(), a.ints().end()));
    case A::STRINGS: {
      // A strings list arrives as one string, its elements joined by ',' (the recurrent ops'
      // `activations`; no ONNX list element holds a comma).
      std::string joined;
      for (int i = 0; i < a.strings_size(); ++i) {
        if (a.strings(i).find(',') != std::string::npos)
          return Status::unsupported(where + ": attribute '" + a.name() + "' element '" +
                                     a.strings(i) +
                                     "' holds a ',' (strings lists are joined by ',')");
        joined += (i ? "," : "") + a.strings(i);
      }
      return AttrValue(std::move(joined));
    }
    case A::UNDEFINED:
      // Old exporters leave `type` unset; infer it from the field that is filled.
      if (a.has_f()) return AttrValue(static_cast<double>(a.f()));
      if (a.has_i()) return AttrValue(static_cast<int64_t>(a.i()));
      if (a.has_s()) return AttrValue(a.s());
      if (a.ints_size()) return AttrValue(std::vector<int64_t>(a.ints().begin(), a.ints().end()));
      if (a.floats_size())
        return AttrValue(std::vector<float>(a.floats().begin(), a.floats().end()));
      break;
    default:
      break;
  }
  return Status::unsupported(where + ": attribute '" + a.name() + "' has ONNX attribute type " +
                             std::to_string(static_cast<int>(a.type())) +
                             " (graphs and sparse tensors are not supported)");
}

Resolved resolve(const onnx::NodeProto& n, const Registry& reg) {
  Resolved r;
  std::optional<std::string> ns_attr, ver_attr;
  for (const auto& a : n.attribute()) {
    if (a.name() == "plugin_namespace") ns_attr = a.s();
    if (a.name() == "plugin_version")
      ver_attr = a.type() == onnx::AttributeProto::INT ? std::to_string(a.i()) : a.s();
  }
  r.name = n.op_type();
  r.version = ver_attr.value_or("1");
  if (!ns_attr && isStandardDomain(n.domain())) {
    r.ns = kOnnxNs;
    r.op = reg.find(kOnnxNs, n.op_type(), "1");
    if (r.op) return r;
    r.ns = "";  // TensorRT's parser falls back to a plugin in the empty namespace
  } else {
    r.ns = ns_attr ? *ns_attr : n.domain();
  }
  r.plugin = true;
  r.op = reg.find(r.ns, r.name, r.version);
  return r;
}

DataType elemType(int32_t t) {
  return isKnownDataType(t) ? static_cast<DataType>(t) : DataType::kUndefined;
}
bool isControlFlow(const onnx::NodeProto& n) {
  return isStandardDomain(n.domain()) &&
         (n.op_type() == "If" || n.op_type() == "Loop" || n.op_type() == "Scan");
}

void collectUnresolved(const onnx::GraphProto& gp, const Registry& reg, const std::string& path,
                       std::vector<std::string>& out) {
  for (int i = 0; i < gp.node_size(); ++i) {
    const onnx::NodeProto& n = gp.node(i);
    if (isControlFlow(n)) {
      for (const auto& a : n.attribute())
        if (a.type() == onnx::AttributeProto::GRAPH)
          collectUnresolved(a.g(), reg, path + nodeDisplayName(n, i) + "/" + a.name() + ": ", out);
      continue;
    }
    if (isSequenceOp(n)) continue;
    const Resolved r = resolve(n, reg);
    if (!r.op)
      out.push_back("  " + path + "node '" + nodeDisplayName(n, i) + "': op '" + r.name +
                    "', namespace '" + r.ns + "', version '" + r.version + "'" +
                    (r.plugin ? "" : " (not a standard ONNX op opforge implements)"));
  }
}

void outerReads(const onnx::GraphProto& gp, std::set<std::string>& out) {
  std::set<std::string> defined, reads;
  for (const auto& i : gp.input()) defined.insert(i.name());
  for (const auto& i : gp.initializer()) defined.insert(i.name());
  for (const auto& n : gp.node()) {
    for (const auto& o : n.output()) defined.insert(o);
    for (const auto& i : n.input())
      if (!i.empty()) reads.insert(i);
    for (const auto& a : n.attribute())
      if (a.type() == onnx::AttributeProto::GRAPH) outerReads(a.g(), reads);
  }
  for (const auto& o : gp.output()) reads.insert(o.name());
  for (const auto& r : reads)
    if (!defined.count(r)) out.insert(r);
}
std::string Importer::valueName(const std::string& name, const std::string& prefix) {
  std::string n = name;
  if (!prefix.empty()) {
    auto busy = [&](const std::string& x) { return taken.count(x) || reserved.count(x); };
    if (busy(n)) n = prefix + name;
    for (int i = 1; busy(n); ++i) n = prefix + name + "_" + std::to_string(i);
  }
  taken.insert(n);
  return n;
}

Result<std::vector<int>> Importer::topoOrder(const onnx::GraphProto& gp, const Scope& scope) {
  // ONNX requires a topological order; sort anyway, keeping file order where possible.
  // Depth-first with an explicit stack: a chain of 200,000 nodes listed in reverse order must
  // not overflow the call stack. A control-flow node also depends on what its subgraphs read.
  const int nn = gp.node_size();
  std::unordered_map<std::string, int> producer;
  for (int i = 0; i < nn; ++i)
    for (const auto& o : gp.node(i).output())
      if (!o.empty()) {
        if (producer.count(o) || (scope.count(o) && &gp == &root))
          return Status::invalid(file + ": tensor '" + o + "' is produced twice (node '" +
                                 nodeDisplayName(gp.node(i), i) + "')");
        producer[o] = i;
      }
  std::vector<std::vector<std::string>> deps(nn);
  for (int i = 0; i < nn; ++i) {
    const auto& n = gp.node(i);
    deps[i].assign(n.input().begin(), n.input().end());
    if (isControlFlow(n)) {
      std::set<std::string> extra;
      for (const auto& a : n.attribute())
        if (a.type() == onnx::AttributeProto::GRAPH) outerReads(a.g(), extra);
      deps[i].insert(deps[i].end(), extra.begin(), extra.end());
    }
  }
  std::vector<int> order;
  order.reserve(nn);
  std::vector<int> state(nn, 0);  // 0 new, 1 visiting, 2 done
  struct Frame {
    int node;
    size_t next_input;
  };
  std::vector<Frame> stack;
  for (int r = 0; r < nn; ++r) {
    if (state[r] != 0) continue;
    state[r] = 1;
    stack.push_back({r, 0});
    while (!stack.empty()) {
      Frame& f = stack.back();
      const onnx::NodeProto& node = gp.node(f.node);
      if (f.next_input == deps[f.node].size()) {
        state[f.node] = 2;
        order.push_back(f.node);
        stack.pop_back();
        continue;
      }
      const std::string& in = deps[f.node][f.next_input++];
      if (in.empty()) continue;
      auto it = producer.find(in);
      if (it == producer.end()) {
        if (!scope.count(in))
          return Status::invalid(file + ": node '" + nodeDisplayName(node, f.node) + "' (" +
                                 node.op_type() + ") reads tensor '" + in +
                                 "', which no node, input or initializer defines");
        continue;
      }
      const int dep = it->second;
      if (state[dep] == 1)
        return Status::invalid(file + ": the graph has a cycle through node '" +
                               nodeDisplayName(gp.node(dep), dep) + "'");
      if (state[dep] == 0) {
        state[dep] = 1;
        stack.push_back({dep, 0});  // invalidates f; the loop reads stack.back() again
      }
    }
  }
  return order;
}

Status Importer::importNodes(const onnx::GraphProto& gp, Scope& scope,
                             const std::vector<graph::Guard>& guards, int depth,
                             const std::string& prefix) {
  OPFORGE_ASSIGN_OR_RETURN(auto order, topoOrder(gp, scope));
  for (int i : order) {
    const onnx::NodeProto& n = gp.node(i);
    std::string name = prefix + nodeDisplayName(n, i);
    if (used_names.count(name)) name = g.uniqueNodeName(name);
    used_names.insert(name);
    if (isControlFlow(n)) {
      if (depth >= kMaxSubgraphDepth)
        return Status::unsupported(file + ": node '" + name + "' (ai.onnx::" + n.op_type() +
                                   "): subgraphs nested more than " +
                                   std::to_string(kMaxSubgraphDepth) + " levels deep");
      if (n.op_type() == "If")
        OPFORGE_RETURN_IF_ERROR(importIf(n, name, scope, guards, depth, prefix));
      else if (n.op_type() == "Loop")
        OPFORGE_RETURN_IF_ERROR(importLoop(n, name, scope, guards, depth, prefix));
      else
        OPFORGE_RETURN_IF_ERROR(importScan(n, name, scope, guards, depth, prefix));
      continue;
    }
    if (isSequenceOp(n)) {
      OPFORGE_RETURN_IF_ERROR(importSequenceOp(n, name, scope, guards, prefix));
      continue;
    }
    if (n.op_type() == "Identity" && isStandardDomain(n.domain()) && n.input_size() == 1 &&
        n.output_size() == 1) {
      auto it = scope.find(n.input(0));
      if (it != scope.end() && isSequenceId(it->second)) {  // a sequence: the same list
        scope[n.output(0)] = it->second;
        continue;
      }
    }
    OPFORGE_RETURN_IF_ERROR(importNode(n, name, scope, guards, prefix));
  }
  return Status::ok();
}

Status Importer::importNode(const onnx::NodeProto& n, const std::string& name, Scope& scope,
                            const std::vector<graph::Guard>& guards, const std::string& prefix) {
  const Resolved r = resolve(n, reg);
  if (!r.op) return Status::internal(file + ": node '" + name + "': op not resolved");
  const std::string where = file + ": node '" + name + "' (" + r.op->key() + ")";
  AttrMap attrs;
  for (const auto& a : n.attribute()) {
    if (a.name() == "plugin_namespace" || a.name() == "plugin_version") continue;
    // TensorRT's JIT/AOT choice for a plugin node (read by opforge.plugin before the build),
    // unless the op has an attribute of that name.
    if (r.plugin && a.name() == "aot") {
      bool declared = false;
      for (const auto& d : r.op->schema().attrs) declared |= d.name == "aot";
      if (!declared) continue;
    }
    auto v = convertAttribute(a, where);
    if (!v) {
      // An attribute of a type opforge can not hold is fine on a plugin that does not read it.
      bool declared = false;
      for (const auto& d : r.op->schema().attrs) declared |= d.name == a.name();
      if (!declared && r.plugin && !options.strict_attributes) continue;
      return v.status();
    }
    attrs.set(a.name(), std::move(v).value());
  }
  // Built-in ops that differ across opsets (or read how many outputs the node lists) declare
  // these attributes; the importer fills them so one definition serves every opset.
  if (!r.plugin)
    for (const auto& d : r.op->schema().attrs) {
      if (d.name == "_onnx_opset")
        attrs.set(d.name, AttrValue(int64_t{opsets.count(kOnnxNs) ? opsets[kOnnxNs] : 0}));
      if (d.name == "_onnx_num_outputs")
        attrs.set(d.name, AttrValue(static_cast<int64_t>(n.output_size())));
    }
  std::vector<int> inputs;
  for (const auto& in : n.input()) {
    auto it = in.empty() ? scope.end() : scope.find(in);
    inputs.push_back(it == scope.end() ? -1 : it->second);
    OPFORGE_RETURN_IF_ERROR(needTensor(inputs.back(), where, "input '" + in + "'"));
  }
  std::vector<std::string> outs;
  for (const auto& o : n.output()) outs.push_back(o.empty() ? o : valueName(o, prefix));
  bool ignore_unknown = r.plugin && !options.strict_attributes;
  auto added = graph::addNode(g, r.op, name, attrs, inputs, outs, ignore_unknown);
  if (!added) {
    // A shape input computed from run-time data (a Resize's sizes from box corners): read it on
    // the host when it is made, and try again. Where that does not help, the first error stands.
    auto read = readRuntimeValues(*r.op, name, inputs, guards);
    if (read && !read->empty()) {
      auto again = graph::addNode(g, r.op, name, attrs, *read, outs, ignore_unknown);
      if (again) added = again;
    }
  }
  if (!added) return added.status().withContext(file);
  g.nodes[*added].guards = guards;
  const graph::Node& node = g.nodes[*added];
  for (size_t o = 0; o < node.outputs.size(); ++o) {
    const int v = node.outputs[o];
    taken.insert(g.values[v].name);
    if (o < static_cast<size_t>(n.output_size()) && !n.output(o).empty()) scope[n.output(o)] = v;
  }
  if (static_cast<size_t>(n.output_size()) > node.outputs.size())
    return Status::invalid(where + ": lists " + std::to_string(n.output_size()) +
                           " outputs; the op has " + std::to_string(node.outputs.size()));
  // Small results of known inputs (Constant nodes, arithmetic on shapes) are computed now, so
  // that later nodes' shape rules can read them (a Range bound, a Pad amount, a Reshape shape).
  // Quantize/dequantize nodes (layer kind "quantize") stay: the Q/DQ fusions read the 8-bit
  // weights and scales behind them, and constant folding takes what they leave.
  if (!r.plugin && r.op->schema().kind != "quantize") {
    auto folded = graph::foldNode(g, *added, graph::kMaxShapeConstant);
    if (!folded) return folded.status().withContext(file);
  }
  return Status::ok();
}

Result<std::vector<int>> Importer::readRuntimeValues(const RegisteredOp& op,
                                                     const std::string& name,
                                                     std::vector<int> inputs,
                                                     const std::vector<graph::Guard>& guards) {
  constexpr int64_t kMost = 64;  // opforge::ReadValues' limit: a shape input is a short vector
  const auto& decl = op.schema().inputs;
  bool any = false;
  for (size_t i = 0; i < inputs.size() && !decl.empty(); ++i) {
    const int v = inputs[i];
    if (v < 0 || !decl[std::min(i, decl.size() - 1)].value) continue;
    const graph::Value& val = g.values[v];
    if (val.constant || val.sym_value ||
        (val.dtype != DataType::kInt32 && val.dtype != DataType::kInt64))
      continue;
    int64_t count = 1;
    bool fixed = true;
    for (const auto& d : val.dims) {
      fixed = fixed && d.isConst();
      if (fixed) count *= d.constValue();
      if (!fixed || count > kMost) break;
    }
    if (!fixed || count < 1 || count > kMost) continue;
    OPFORGE_ASSIGN_OR_RETURN(
        int k, addOp("opforge::ReadValues", name + "/read_values" + std::to_string(i), {}, {v}, "",
                     guards));
    inputs[i] = g.nodes[k].outputs[0];
    any = true;
  }
  if (!any) inputs.clear();
  return inputs;
}

Result<int> Importer::addOp(const std::string& key, const std::string& name, const AttrMap& attrs,
                            const std::vector<int>& inputs, const std::string& out,
                            const std::vector<graph::Guard>& guards) {
  const size_t sep = key.find("::");
  const RegisteredOp* op = reg.find(key.substr(0, sep), key.substr(sep + 2), "1");
  if (!op) return Status::internal(file + ": the built-in op " + key + " is missing");
  std::string node_name = used_names.count(name) ? g.uniqueNodeName(name) : name;
  used_names.insert(node_name);
  auto added = graph::addNode(g, op, node_name, attrs, inputs, {out}, false);
  if (!added) return added.status().withContext(file);
  g.nodes[*added].guards = guards;
  for (int v : g.nodes[*added].outputs) taken.insert(g.values[v].name);
  auto folded = graph::foldNode(g, *added, graph::kMaxShapeConstant);
  if (!folded) return folded.status().withContext(file);
  return *added;
}
std::optional<int64_t> intAttr(const onnx::NodeProto& n, const std::string& name) {
  for (const auto& a : n.attribute())
    if (a.name() == name && a.type() == onnx::AttributeProto::INT) return a.i();
  return std::nullopt;
}

std::optional<int64_t> knownScalar(const graph::Graph& g, int v) {
  const graph::Value& val = g.values[v];
  if (val.constant && val.constant->desc.numel() == 1) {
    // INT64 exactly (a TorchScript while loop's M is INT64_MAX, which a double rounds past).
    if (val.dtype == DataType::kInt64 && val.constant->data.size() == sizeof(int64_t)) {
      int64_t v = 0;
      std::memcpy(&v, val.constant->data.data(), sizeof v);
      return v;
    }
    const double d = loadAsDouble(val.constant->data.data(), val.dtype, 0);
    if (!(d > -9.2e18 && d < 9.2e18)) return std::nullopt;  // NaN or past int64: not a count
    return static_cast<int64_t>(d);
  }
  if (val.sym_value && val.sym_value->size() == 1 && (*val.sym_value)[0].isConst())
    return (*val.sym_value)[0].constValue();
  return std::nullopt;
}
TensorValue scalar(DataType t, int64_t v) {
  TensorValue x;
  x.desc = TensorDesc{t, {}};
  x.data.assign(dtypeSize(t), 0);
  storeFromDouble(x.data.data(), t, 0, static_cast<double>(v));
  return x;
}

}  // namespace opforge::onnx_import
