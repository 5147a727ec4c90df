// ONNX ModelProto -> NetworkDefinition: the model-level checks (IR version, opsets), the main
// graph's initializers, inputs and outputs; the nodes are imported by importer.h.
#include <sys/stat.h>

#include <fstream>
#include <map>

#include "../common/checked.h"
#include "../graph/graph.h"
#include "importer.h"
#include "onnx/onnx_pb.h"
#include "onnx_tensor.h"
#include "opforge/network.h"

namespace opforge {

namespace {

using namespace onnx_import;

// The newest IR version and default-domain opset that onnx 1.23 and ONNX Runtime 1.32 define;
// newer ones are refused, as ONNX Runtime refuses them.
constexpr int64_t kMaxIrVersion = 14;
constexpr int64_t kMaxOnnxOpset = 28;

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
    // addInput refuses more than 2^40 elements (the error gains the file here).
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
  Importer imp{file, *registry, net, g, opsets, options, gp, {}, {}, {}, {}};
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
    if (isSequenceId(id))
      return Status::unsupported(file + ": graph output '" + out.name() +
                                 "' is a sequence; opforge's outputs are tensors (sequences are "
                                 "import-time lists inside the graph)");
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
        g.renameValue(id, out.name());
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