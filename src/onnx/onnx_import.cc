// ONNX ModelProto -> NetworkDefinition.
#include <sys/stat.h>

#include <fstream>
#include <map>
#include <set>
#include <unordered_map>

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

  // Resolve every node's op first so that all unknown ops are reported together.
  const int nn = gp.node_size();
  std::vector<Resolved> resolved(nn);
  std::vector<std::string> unresolved;
  for (int i = 0; i < nn; ++i) {
    resolved[i] = resolve(gp.node(i), *registry);
    if (!resolved[i].op) {
      const auto& r = resolved[i];
      unresolved.push_back("  node '" + nodeDisplayName(gp.node(i), i) + "': op '" + r.name +
                           "', namespace '" + r.ns + "', version '" + r.version + "'" +
                           (r.plugin ? "" : " (not a standard ONNX op opforge implements)"));
    }
  }
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
  std::unordered_map<std::string, int> value_ids;
  for (int v = 0; v < static_cast<int>(g.values.size()); ++v) value_ids[g.values[v].name] = v;
  auto findValue = [&](const std::string& name) {
    auto it = value_ids.find(name);
    return it == value_ids.end() ? -1 : it->second;
  };

  // Topological order (ONNX requires one; sort anyway, keeping file order where possible).
  // Depth-first with an explicit stack: a chain of 200,000 nodes listed in reverse order must not
  // overflow the call stack.
  std::unordered_map<std::string, int> producer;
  for (int i = 0; i < nn; ++i)
    for (const auto& o : gp.node(i).output())
      if (!o.empty()) {
        if (producer.count(o) || findValue(o) >= 0)
          return Status::invalid(file + ": tensor '" + o + "' is produced twice (node '" +
                                 nodeDisplayName(gp.node(i), i) + "')");
        producer[o] = i;
      }
  std::vector<int> order;
  order.reserve(nn);
  std::vector<int> state(nn, 0);  // 0 new, 1 visiting, 2 done
  struct Frame {
    int node;
    int next_input;
  };
  std::vector<Frame> stack;
  for (int root = 0; root < nn; ++root) {
    if (state[root] != 0) continue;
    state[root] = 1;
    stack.push_back({root, 0});
    while (!stack.empty()) {
      Frame& f = stack.back();
      const onnx::NodeProto& node = gp.node(f.node);
      if (f.next_input == node.input_size()) {
        state[f.node] = 2;
        order.push_back(f.node);
        stack.pop_back();
        continue;
      }
      const std::string& in = node.input(f.next_input++);
      if (in.empty()) continue;
      auto it = producer.find(in);
      if (it == producer.end()) {
        if (findValue(in) < 0)
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

  std::set<std::string> used_names;
  for (int i : order) {
    const onnx::NodeProto& n = gp.node(i);
    std::string name = nodeDisplayName(n, i);
    if (used_names.count(name)) name = g.uniqueNodeName(name);
    used_names.insert(name);
    const Resolved& r = resolved[i];
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
    for (const auto& in : n.input()) inputs.push_back(in.empty() ? -1 : findValue(in));
    std::vector<std::string> outs(n.output().begin(), n.output().end());
    bool ignore_unknown = r.plugin && !options.strict_attributes;
    auto added = graph::addNode(g, r.op, name, attrs, inputs, outs, ignore_unknown);
    if (!added) return added.status().withContext(file);
    const graph::Node& node = g.nodes[*added];
    for (int v : node.outputs) value_ids[g.values[v].name] = v;
    if (static_cast<size_t>(n.output_size()) > node.outputs.size())
      return Status::invalid(where + ": lists " + std::to_string(n.output_size()) +
                             " outputs; the op has " + std::to_string(node.outputs.size()));
    // Small results of known inputs (Constant nodes, arithmetic on shapes) are computed now, so
    // that later nodes' shape rules can read them (a Range bound, a Pad amount, a Reshape shape).
    if (!r.plugin) {
      auto folded = graph::foldNode(g, *added, graph::kMaxShapeConstant);
      if (!folded) return folded.status().withContext(file);
    }
  }

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
