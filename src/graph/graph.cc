#include "graph.h"

namespace opforge::graph {

std::string Graph::uniqueNodeName(const std::string& base) {
  int& n = unique_names[base];
  return base + "_" + std::to_string(n++);
}

std::string Graph::uniqueValueName(const std::string& base) {
  if (findValue(base) < 0) return base;
  for (int i = 1;; ++i) {
    std::string c = base + "_" + std::to_string(i);
    if (findValue(c) < 0) return c;
  }
}

std::string nodeLabel(const Node& n) {
  return "node '" + n.name + "' (" + n.op->key() + " v" + n.op->schema().version + ")";
}

std::optional<std::vector<DimExpr>> constantAsDims(const TensorValue& t, size_t max_elements) {
  const DataType d = t.desc.dtype;
  if (d != DataType::kInt64 && d != DataType::kInt32) return std::nullopt;
  if (t.desc.rank() > 1 || static_cast<size_t>(t.desc.numel()) > max_elements) return std::nullopt;
  std::vector<DimExpr> out;
  for (int64_t i = 0; i < t.desc.numel(); ++i) {
    int64_t v = d == DataType::kInt64 ? reinterpret_cast<const int64_t*>(t.data.data())[i]
                                      : reinterpret_cast<const int32_t*>(t.data.data())[i];
    out.emplace_back(v);
  }
  return out;
}

namespace {
std::vector<InferInput> inferInputs(const Graph& g, const Node& node) {
  const OpSchema& s = node.op->schema();
  std::vector<InferInput> ins(node.inputs.size());
  for (size_t i = 0; i < node.inputs.size(); ++i) {
    int vid = node.inputs[i];
    if (vid < 0) continue;
    const Value& v = g.values[vid];
    ins[i].present = true;
    ins[i].desc = SymDesc::make(v.dtype, v.dims);
    // Values and constants travel only for inputs the op reads at shape time; constants only
    // when small (a shape rule reads shapes, axes, scales — not weight tables).
    size_t decl = std::min(i, s.inputs.size() - 1);
    if (s.inputs[decl].value) {
      ins[i].value = v.sym_value;
      if (v.constant && v.constant->desc.numel() <= kMaxShapeConstant)
        ins[i].constant = v.constant.get();
    }
  }
  return ins;
}

void applyInfer(Graph& g, Node& node, InferResult r) {
  node.aliases.assign(r.outputs.size(), -1);
  for (size_t o = 0; o < r.outputs.size(); ++o) {
    Value& v = g.values[node.outputs[o]];
    v.dtype = r.outputs[o].dtype;
    v.dims = r.outputs[o].dims;
    v.sym_value.reset();
    node.aliases[o] = r.outputs[o].alias;
  }
  for (auto& [o, vals] : r.values)
    if (o >= 0 && o < static_cast<int>(node.outputs.size()))
      g.values[node.outputs[o]].sym_value = vals;
  node.size_tensors = std::move(r.size_tensors);
  node.assertions = std::move(r.assertions);
}
}  // namespace

Status inferNode(Graph& g, int n) {
  Node& node = g.nodes[n];
  OPFORGE_ASSIGN_OR_RETURN(
      InferResult r, node.op->infer(node.name, node.attrs, inferInputs(g, node), node.name + "#"));
  if (node.outputs.size() != r.outputs.size())
    return Status::internal(nodeLabel(node) +
                            ": the number of outputs changed between shape queries");
  applyInfer(g, node, std::move(r));
  return Status::ok();
}

Result<int> addNode(Graph& g, const RegisteredOp* op, const std::string& name, const AttrMap& attrs,
                    const std::vector<int>& inputs, const std::vector<std::string>& output_names,
                    bool ignore_unknown_attrs) {
  const OpSchema& s = op->schema();
  const std::string label = "node '" + name + "' (" + op->key() + " v" + s.version + ")";
  // Input count against the declaration.
  size_t required = 0, max_inputs = s.inputs.size();
  bool variadic = !s.inputs.empty() && s.inputs.back().variadic;
  for (const auto& io : s.inputs)
    if (!io.optional) ++required;
  size_t given = inputs.size();
  while (given > 0 && inputs[given - 1] < 0 && given > required) --given;  // trailing omissions
  if (given < required || (!variadic && given > max_inputs)) {
    std::string names;
    for (const auto& io : s.inputs)
      names += (names.empty() ? "" : ", ") + io.name + (io.optional ? "?" : "") +
               (io.variadic ? "..." : "");
    return Status::invalid(
        label + ": takes " +
        (variadic ? "at least " + std::to_string(required)
                  : std::to_string(required) +
                        (required == max_inputs ? "" : " to " + std::to_string(max_inputs))) +
        " inputs (" + names + "), got " + std::to_string(given));
  }
  for (size_t i = 0; i < given; ++i) {
    size_t decl = std::min(i, s.inputs.size() - 1);
    if (inputs[i] < 0 && !s.inputs[decl].optional)
      return Status::invalid(label + ": input " + std::to_string(i) + " ('" + s.inputs[decl].name +
                             "') is required");
    if (inputs[i] >= static_cast<int>(g.values.size()))
      return Status::invalid(label + ": input " + std::to_string(i) +
                             " refers to an unknown tensor");
  }
  OPFORGE_ASSIGN_OR_RETURN(AttrMap checked, op->validateAttrs(name, attrs, ignore_unknown_attrs));
  OPFORGE_ASSIGN_OR_RETURN(auto instance, op->instantiate(name, checked));

  Node node;
  node.name = name;
  node.op = op;
  node.attrs = std::move(checked);
  node.inputs.assign(inputs.begin(), inputs.begin() + static_cast<long>(given));
  node.instance = std::move(instance);
  g.nodes.push_back(std::move(node));
  const int n = static_cast<int>(g.nodes.size()) - 1;

  auto r = op->infer(name, g.nodes[n].attrs, inferInputs(g, g.nodes[n]), name + "#");
  if (!r) {
    g.nodes.pop_back();
    return r.status();
  }
  for (size_t o = 0; o < r->outputs.size(); ++o) {
    Value v;
    bool named = o < output_names.size() && !output_names[o].empty();
    std::string base = named ? output_names[o]
                             : name + (o < s.outputs.size() ? ":" + s.outputs[o].name
                                                            : ":size" + std::to_string(o));
    v.name = named ? base : g.uniqueValueName(base);
    v.producer = n;
    v.producer_output = static_cast<int>(o);
    g.nodes[n].outputs.push_back(g.addValue(std::move(v)));
  }
  applyInfer(g, g.nodes[n], std::move(r).value());
  return n;
}

}  // namespace opforge::graph
