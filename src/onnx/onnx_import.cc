// ONNX ModelProto -> NetworkDefinition.
#include <sys/stat.h>

#include <fstream>
#include <map>
#include <set>
#include <unordered_map>
#include <unordered_set>

#include "../common/checked.h"
#include "../graph/fold.h"
#include "../graph/graph.h"
#include "onnx/onnx_pb.h"
#include "onnx_tensor.h"
#include "opforge/network.h"

namespace opforge {

namespace {

constexpr const char* kOnnxNs = "ai.onnx";
// The newest IR version and default-domain opset that onnx 1.23 and ONNX Runtime 1.32 define;
// newer ones are refused, as ONNX Runtime refuses them.
constexpr int64_t kMaxIrVersion = 14;
constexpr int64_t kMaxOnnxOpset = 28;

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
                             " (strings lists, graphs and sparse tensors are not supported)");
}

struct Resolved {
  const RegisteredOp* op = nullptr;
  std::string ns, name, version;
  bool plugin = false;
};

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

bool isIf(const onnx::NodeProto& n) {
  return isStandardDomain(n.domain()) && n.op_type() == "If";
}

// The nodes of `gp` (and of the If branches inside it) whose op no loaded library provides, one
// line each; `path` names the enclosing If branches ("If_3/then_branch: ").
void collectUnresolved(const onnx::GraphProto& gp, const Registry& reg, const std::string& path,
                       std::vector<std::string>& out) {
  for (int i = 0; i < gp.node_size(); ++i) {
    const onnx::NodeProto& n = gp.node(i);
    if (isIf(n)) {
      for (const auto& a : n.attribute())
        if (a.type() == onnx::AttributeProto::GRAPH)
          collectUnresolved(a.g(), reg, path + nodeDisplayName(n, i) + "/" + a.name() + ": ", out);
      continue;
    }
    const Resolved r = resolve(n, reg);
    if (!r.op)
      out.push_back("  " + path + "node '" + nodeDisplayName(n, i) + "': op '" + r.name +
                    "', namespace '" + r.ns + "', version '" + r.version + "'" +
                    (r.plugin ? "" : " (not a standard ONNX op opforge implements)"));
  }
}

// The names a subgraph reads from the graphs around it: what its nodes (and the subgraphs inside
// them) read, and its outputs, less what it defines itself.
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

using Scope = std::unordered_map<std::string, int>;  // ONNX tensor name -> value id

// Nested Ifs deeper than this are refused (a hostile model must not exhaust the stack; protobuf
// refuses a model nested about 32 Ifs deep before this is reached).
constexpr int kMaxIfDepth = 16;

// One import: the graph's nodes, and If branches inlined with guards (graph::Guard).
struct Importer {
  const std::string& file;
  const Registry& reg;
  NetworkDefinition& net;
  graph::Graph& g;
  std::map<std::string, int64_t>& opsets;
  const OnnxImportOptions& options;
  std::unordered_set<std::string> taken;     // value names in use
  std::unordered_set<std::string> reserved;  // the main graph's tensor names
  std::set<std::string> used_names;          // node names in use

  // The value name of ONNX tensor `name`: the main graph's own (prefix ""), else a branch's
  // (prefix "<if>/then_branch/"): itself where no value and no main-graph tensor has it, else
  // made unique with the prefix.
  std::string valueName(const std::string& name, const std::string& prefix) {
    std::string n = name;
    if (!prefix.empty()) {
      auto busy = [&](const std::string& x) { return taken.count(x) || reserved.count(x); };
      if (busy(n)) n = prefix + name;
      for (int i = 1; busy(n); ++i) n = prefix + name + "_" + std::to_string(i);
    }
    taken.insert(n);
    return n;
  }

  Result<std::vector<int>> topoOrder(const onnx::GraphProto& gp, const Scope& scope) {
    // ONNX requires a topological order; sort anyway, keeping file order where possible.
    // Depth-first with an explicit stack: a chain of 200,000 nodes listed in reverse order must
    // not overflow the call stack. An If node also depends on what its branches read.
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
      if (isIf(n)) {
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

  // Imports the nodes of `gp` into the graph; names resolve through `scope`, which gains the
  // nodes' outputs. Nodes get `guards` (the If branches they are in).
  Status importNodes(const onnx::GraphProto& gp, Scope& scope,
                     const std::vector<graph::Guard>& guards, int depth,
                     const std::string& prefix = "") {
    OPFORGE_ASSIGN_OR_RETURN(auto order, topoOrder(gp, scope));
    for (int i : order) {
      const onnx::NodeProto& n = gp.node(i);
      std::string name = prefix + nodeDisplayName(n, i);
      if (used_names.count(name)) name = g.uniqueNodeName(name);
      used_names.insert(name);
      if (isIf(n)) {
        OPFORGE_RETURN_IF_ERROR(importIf(n, name, scope, guards, depth, prefix));
        continue;
      }
      OPFORGE_RETURN_IF_ERROR(importNode(n, name, scope, guards, prefix));
    }
    return Status::ok();
  }

  Status importNode(const onnx::NodeProto& n, const std::string& name, Scope& scope,
                    const std::vector<graph::Guard>& guards, const std::string& prefix) {
    const Resolved r = resolve(n, reg);
    if (!r.op) return Status::internal(file + ": node '" + name + "': op not resolved");
    const std::string where = file + ": node '" + name + "' (" + r.op->key() + ")";
    AttrMap attrs;
    for (const auto& a : n.attribute()) {
      if (a.name() == "plugin_namespace" || a.name() == "plugin_version") continue;
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
    }
    std::vector<std::string> outs;
    for (const auto& o : n.output()) outs.push_back(o.empty() ? o : valueName(o, prefix));
    bool ignore_unknown = r.plugin && !options.strict_attributes;
    auto added = graph::addNode(g, r.op, name, attrs, inputs, outs, ignore_unknown);
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
    if (!r.plugin) {
      auto folded = graph::foldNode(g, *added, graph::kMaxShapeConstant);
      if (!folded) return folded.status().withContext(file);
    }
    return Status::ok();
  }

  // ONNX If: a condition known when the network is built inlines the branch taken; otherwise
  // both branches are inlined, each node guarded by the condition, and each output is an
  // opforge::IfSelect of the two branches' values (the runtime skips the branch not taken).
  Status importIf(const onnx::NodeProto& n, const std::string& name, Scope& scope,
                  const std::vector<graph::Guard>& guards, int depth, const std::string& outer) {
    const std::string where = file + ": node '" + name + "' (ai.onnx::If)";
    if (depth >= kMaxIfDepth)
      return Status::unsupported(where + ": If nested more than " + std::to_string(kMaxIfDepth) +
                                 " levels deep");
    const onnx::GraphProto *then_g = nullptr, *else_g = nullptr;
    for (const auto& a : n.attribute()) {
      if (a.name() == "then_branch" && a.type() == onnx::AttributeProto::GRAPH) then_g = &a.g();
      if (a.name() == "else_branch" && a.type() == onnx::AttributeProto::GRAPH) else_g = &a.g();
    }
    if (!then_g || !else_g)
      return Status::invalid(where +
                             ": needs the graph attributes 'then_branch' and "
                             "'else_branch'");
    if (n.input_size() != 1 || n.input(0).empty() || !scope.count(n.input(0)))
      return Status::invalid(where + ": needs one input, the condition 'cond'");
    const int cond = scope.at(n.input(0));
    const graph::Value& cv = g.values[cond];
    if (cv.dtype != DataType::kBool)
      return Status::invalid(where + ": input 'cond' ('" + cv.name + "') is " +
                             dtypeName(cv.dtype) + "; If needs a BOOL condition");
    for (const auto& d : cv.dims)
      if (!d.isConst() || d.constValue() != 1)
        return Status::invalid(where + ": input 'cond' ('" + cv.name + "') has shape " +
                               toString(cv.dims) + "; If needs a single element");
    for (const auto* b : {then_g, else_g})
      if (b->output_size() != n.output_size())
        return Status::invalid(where + ": branch '" + b->name() + "' has " +
                               std::to_string(b->output_size()) + " outputs; the node lists " +
                               std::to_string(n.output_size()));
    std::optional<bool> known;
    if (cv.constant && !cv.constant->data.empty()) known = cv.constant->data[0] != 0;
    // Imports one branch into a scope of its own; returns the values of its outputs.
    auto branch = [&](const onnx::GraphProto& b, const char* label,
                      std::vector<graph::Guard> gs) -> Result<std::vector<int>> {
      Scope inner = scope;
      const std::string prefix = name + "/" + label + "/";
      for (const auto& init : b.initializer()) {
        OPFORGE_ASSIGN_OR_RETURN(
            TensorValue t,
            onnx_io::tensorFromProto(init, "",
                                     where + ": " + label + " initializer '" + init.name() + "'"));
        auto ref = net.addConstant(valueName(init.name(), prefix), std::move(t));
        if (!ref) return ref.status().withContext(where);
        inner[init.name()] = ref->id;
      }
      OPFORGE_RETURN_IF_ERROR(importNodes(b, inner, gs, depth + 1, prefix));
      std::vector<int> outs;
      for (const auto& o : b.output()) {
        auto it = inner.find(o.name());
        if (it == inner.end())
          return Status::invalid(where + ": " + label + " output '" + o.name() +
                                 "' is not produced by any node");
        outs.push_back(it->second);
      }
      return outs;
    };
    if (known) {
      OPFORGE_ASSIGN_OR_RETURN(auto outs, branch(*known ? *then_g : *else_g,
                                                 *known ? "then_branch" : "else_branch", guards));
      for (int o = 0; o < n.output_size(); ++o)
        if (!n.output(o).empty()) scope[n.output(o)] = outs[o];
      return Status::ok();
    }
    auto with = [&](bool when) {
      std::vector<graph::Guard> gs = guards;
      gs.push_back({cond, when});
      return gs;
    };
    OPFORGE_ASSIGN_OR_RETURN(auto then_outs, branch(*then_g, "then_branch", with(true)));
    OPFORGE_ASSIGN_OR_RETURN(auto else_outs, branch(*else_g, "else_branch", with(false)));
    const RegisteredOp* select = reg.find("opforge", "IfSelect", "1");
    if (!select) return Status::internal(where + ": the built-in op opforge::IfSelect is missing");
    for (int o = 0; o < n.output_size(); ++o) {
      const graph::Value &a = g.values[then_outs[o]], &b = g.values[else_outs[o]];
      if (a.dtype != b.dtype)
        return Status::invalid(where + ": output " + std::to_string(o) +
                               " has another type in each branch: then_branch gives " +
                               dtypeName(a.dtype) + " ('" + a.name + "'), else_branch " +
                               dtypeName(b.dtype) + " ('" + b.name + "')");
      if (a.dims.size() != b.dims.size())
        return Status::invalid(where + ": output " + std::to_string(o) +
                               " has another rank in each branch: then_branch gives " +
                               toString(a.dims) + " ('" + a.name + "'), else_branch " +
                               toString(b.dims) + " ('" + b.name + "')");
      // The axes whose length differs by branch: the output's length there is known when the
      // IfSelect has run (a data-dependent size).
      std::vector<int64_t> axes;
      for (size_t d = 0; d < a.dims.size(); ++d)
        if (!a.dims[d].sameAs(b.dims[d])) axes.push_back(static_cast<int64_t>(d));
      AttrMap attrs;
      attrs.set("axes", AttrValue(axes));
      const std::string oname =
          n.output(o).empty() ? name + ":" + std::to_string(o) : valueName(n.output(o), outer);
      const std::string sname = n.output_size() == 1 ? name : g.uniqueNodeName(name + "/select");
      auto added = graph::addNode(g, select, sname, attrs, {cond, then_outs[o], else_outs[o]},
                                  {oname}, false);
      if (!added) return added.status().withContext(file);
      g.nodes[*added].guards = guards;
      for (int v : g.nodes[*added].outputs) taken.insert(g.values[v].name);
      if (!n.output(o).empty()) scope[n.output(o)] = g.nodes[*added].outputs[0];
    }
    return Status::ok();
  }

  const onnx::GraphProto& root;
};

}  // namespace

Result<NetworkDefinition> importOnnxBytes(const std::string& bytes, const std::string& file,
                                          const std::string& base_dir,
                                          std::shared_ptr<Registry> registry,
                                          const OnnxImportOptions& options) {
  if (!registry) registry = Registry::global();
  onnx::ModelProto model;
  if (bytes.empty()) return Status::invalid(file + ": the file is empty, not an ONNX model");
  if (!model.ParseFromString(bytes) || !model.has_graph())
    return Status::invalid(file +
                           ": not a valid ONNX model (the protobuf does not parse as a "
                           "ModelProto with a graph; is the file truncated or of another kind?)");
  // IR version and opsets, decided as the ONNX checker and ONNX Runtime do (docs/architecture.md,
  // "Limits and hostile input").
  if (model.ir_version() <= 0)
    return Status::invalid(file + ": ONNX IR version " + std::to_string(model.ir_version()) +
                           " is not valid: the model does not say which IR version it follows "
                           "(ir_version must be 1 to " +
                           std::to_string(kMaxIrVersion) + ")");
  if (model.ir_version() > kMaxIrVersion)
    return Status::version(file + ": ONNX IR version " + std::to_string(model.ir_version()) +
                           " is newer than opforge reads (1 to " + std::to_string(kMaxIrVersion) +
                           "); re-export the model with an older IR version");
  if (model.opset_import_size() == 0)
    return Status::invalid(file +
                           ": the model imports no opset (opset_import is empty); ONNX requires an "
                           "entry for the default domain, e.g. {domain: \"\", version: 17}");
  const onnx::GraphProto& gp = model.graph();
  NetworkDefinition net(registry);
  net.setSource(file);
  graph::Graph& g = net.graph();

  std::map<std::string, int64_t> opsets;
  for (const auto& o : model.opset_import())
    opsets[o.domain().empty() ? kOnnxNs : o.domain()] = o.version();
  if (opsets.count(kOnnxNs)) {
    const int64_t v = opsets[kOnnxNs];
    if (v < 1)
      return Status::invalid(file + ": opset_import gives the default ONNX domain version " +
                             std::to_string(v) + "; ONNX opset versions start at 1");
    if (v > kMaxOnnxOpset)
      return Status::version(file + ": opset_import gives the default ONNX domain version " +
                             std::to_string(v) + "; opforge knows opsets 1 to " +
                             std::to_string(kMaxOnnxOpset) +
                             " (as ONNX Runtime, a newer opset is refused)");
  } else {
    for (int i = 0; i < gp.node_size(); ++i)
      if (isStandardDomain(gp.node(i).domain()))
        return Status::invalid(file + ": node '" + nodeDisplayName(gp.node(i), i) + "' (" +
                               gp.node(i).op_type() +
                               ") is in the default ONNX domain, but opset_import has no entry "
                               "for that domain (ONNX requires one, e.g. version 17)");
  }

  // Initializers.
  std::set<std::string> initializer_names;
  for (const auto& init : gp.initializer()) {
    OPFORGE_ASSIGN_OR_RETURN(
        TensorValue t,
        onnx_io::tensorFromProto(init, base_dir, file + ": initializer '" + init.name() + "'"));
    auto ref = net.addConstant(init.name(), std::move(t));
    if (!ref) return ref.status().withContext(file);
    initializer_names.insert(init.name());
  }
  if (gp.sparse_initializer_size() > 0)
    return Status::unsupported(file + ": sparse initializers are not supported");

  // Inputs.
  for (const auto& in : gp.input()) {
    if (initializer_names.count(in.name())) continue;
    if (!in.type().has_tensor_type())
      return Status::unsupported(file + ": input '" + in.name() +
                                 "' is not a tensor (sequences and maps are not supported)");
    const auto& tt = in.type().tensor_type();
    DataType dt = elemType(tt.elem_type());
    if (dt == DataType::kUndefined)
      return Status::unsupported(file + ": input '" + in.name() + "' has ONNX element type " +
                                 std::to_string(tt.elem_type()) +
                                 ", which opforge does not support");
    if (!tt.has_shape())
      return Status::unsupported(file + ": input '" + in.name() +
                                 "' has no shape (its rank must be known)");
    std::vector<int64_t> dims;
    for (const auto& d : tt.shape().dim()) {
      if (d.has_dim_value() && d.dim_value() > onnx_io::kMaxDim)
        return Status::outOfRange(
            file + ": input '" + in.name() + "' dimension " + std::to_string(dims.size()) + " is " +
            std::to_string(d.dim_value()) + "; opforge's maximum for a dimension is 2^31 - 1");
      dims.push_back(d.has_dim_value() && d.dim_value() >= 0 ? d.dim_value() : -1);
    }
    {
      int64_t n = 1;
      for (int64_t d : dims)
        if (d > 0 && (__builtin_mul_overflow(n, d, &n) || n > onnx_io::kMaxElements))
          return Status::outOfRange(file + ": input '" + in.name() + "' of shape " +
                                    dimsToString(dims) +
                                    " has more than 2^40 elements, opforge's maximum");
    }
    auto ref = net.addInput(in.name(), dt, dims);
    if (!ref) return ref.status().withContext(file);
  }

  // Resolve every node's op first (those of If branches too) so that all unknown ops are
  // reported together.
  std::vector<std::string> unresolved;
  collectUnresolved(gp, *registry, "", unresolved);
  if (!unresolved.empty()) {
    std::string msg = file + ": " + std::to_string(unresolved.size()) +
                      " node(s) use ops that no loaded library provides:\n";
    for (const auto& u : unresolved) msg += u + "\n";
    msg += "loaded libraries: " + registry->librariesSummary() + "\n";
    msg +=
        "If these are plugins, load the library that defines them with --plugins=PATH "
        "(e.g. --plugins=build/lib/libopforge_ops.so); plugin nodes are matched by op_type, "
        "attribute plugin_namespace (else the node's domain) and attribute plugin_version "
        "(default \"1\").";
    return Status::notFound(msg);
  }

  // Names of the tensors defined so far (inputs, initializers; node outputs as they are added):
  // Graph::findValue is a linear scan, too slow for graphs of 100,000s of nodes.
  Importer imp{file, *registry, net, g, opsets, options, {}, {}, {}, gp};
  Scope scope;
  for (int v = 0; v < static_cast<int>(g.values.size()); ++v) {
    scope[g.values[v].name] = v;
    imp.taken.insert(g.values[v].name);
  }
  for (const auto& n : gp.node())
    for (const auto& o : n.output()) imp.reserved.insert(o);
  OPFORGE_RETURN_IF_ERROR(imp.importNodes(gp, scope, {}, 0));
  auto findValue = [&](const std::string& name) {
    auto it = scope.find(name);
    return it == scope.end() ? -1 : it->second;
  };

  for (const auto& out : gp.output()) {
    int id = findValue(out.name());
    if (id < 0)
      return Status::invalid(file + ": graph output '" + out.name() +
                             "' is not produced by any node");
    if (out.type().has_tensor_type()) {
      DataType declared = elemType(out.type().tensor_type().elem_type());
      if (declared != DataType::kUndefined && declared != g.values[id].dtype)
        return Status::invalid(file + ": graph output '" + out.name() + "' is declared " +
                               dtypeName(declared) + " but its producer gives " +
                               dtypeName(g.values[id].dtype));
    }
    if (g.values[id].name != out.name()) {
      // An output of an If whose branch was chosen when importing: the value has the branch's
      // name. A branch's own node output takes the graph output's name; anything else (an
      // outer value, a constant) is copied by an Identity of that name.
      graph::Value& v = g.values[id];
      if (v.producer >= 0 && !v.is_output && !imp.taken.count(out.name())) {
        v.name = out.name();
      } else {
        const RegisteredOp* identity = registry->find(kOnnxNs, "Identity", "1");
        if (!identity) return Status::internal(file + ": the built-in op Identity is missing");
        auto added = graph::addNode(g, identity, g.uniqueNodeName(out.name() + "/identity"), {},
                                    {id}, {imp.valueName(out.name(), "")}, false);
        if (!added) return added.status().withContext(file);
        id = g.nodes[*added].outputs[0];
      }
      imp.taken.insert(out.name());
    }
    OPFORGE_RETURN_IF_ERROR(net.markOutput(TensorRef{id}));
  }
  if (g.outputs.empty()) return Status::invalid(file + ": the graph has no outputs");
  return net;
}

Result<NetworkDefinition> importOnnx(const std::string& path, std::shared_ptr<Registry> registry,
                                     const OnnxImportOptions& options) {
  struct stat sb;
  if (::stat(path.c_str(), &sb) != 0) return Status::notFound(path + ": no such file");
  // Directories and FIFOs are refused before open(): opening a FIFO blocks.
  OPFORGE_RETURN_IF_ERROR(checked::regularFile(path, "ONNX model"));
  std::ifstream f(path, std::ios::binary);
  if (!f) return Status::io(path + ": cannot open for reading");
  std::string bytes((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
  size_t slash = path.find_last_of('/');
  std::string dir = slash == std::string::npos ? "." : path.substr(0, slash);
  if (dir.empty()) dir = "/";
  return importOnnxBytes(bytes, path, dir, std::move(registry), options);
}

}  // namespace opforge
