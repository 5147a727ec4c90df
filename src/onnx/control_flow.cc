// control_flow.cc — ONNX If, Loop and Scan in the importer (importer.h). If is inlined with
// guards (docs/architecture.md, "Control flow"); Loop and Scan are unrolled when their iteration
// count is known when the network is built, each iteration's body imported like any subgraph.
#include <algorithm>

#include "../graph/fold.h"
#include "importer.h"
#include "onnx_tensor.h"

namespace opforge::onnx_import {

Status Importer::importInitializers(const onnx::GraphProto& b, const std::string& where,
                                    const std::string& prefix, Scope& inner) {
  for (const auto& init : b.initializer()) {
    OPFORGE_ASSIGN_OR_RETURN(
        TensorValue t,
        onnx_io::tensorFromProto(init, "", where + " initializer '" + init.name() + "'"));
    auto ref = net.addConstant(valueName(init.name(), prefix), std::move(t));
    if (!ref) return ref.status().withContext(where);
    inner[init.name()] = ref->id;
  }
  return Status::ok();
}

namespace {

const onnx::GraphProto* graphAttr(const onnx::NodeProto& n, const std::string& name) {
  for (const auto& a : n.attribute())
    if (a.name() == name && a.type() == onnx::AttributeProto::GRAPH) return &a.g();
  return nullptr;
}
std::vector<int64_t> intsAttr(const onnx::NodeProto& n, const std::string& name) {
  for (const auto& a : n.attribute())
    if (a.name() == name) return std::vector<int64_t>(a.ints().begin(), a.ints().end());
  return {};
}
std::optional<int64_t> intAttr(const onnx::NodeProto& n, const std::string& name) {
  for (const auto& a : n.attribute())
    if (a.name() == name && a.type() == onnx::AttributeProto::INT) return a.i();
  return std::nullopt;
}
// The one element of a known scalar-like value (a constant, or integer values the shape rules
// know); nullopt when it is computed from run-time data.
std::optional<int64_t> knownScalar(const graph::Graph& g, int v) {
  const graph::Value& val = g.values[v];
  if (val.constant && val.constant->desc.numel() == 1)
    return static_cast<int64_t>(loadAsDouble(val.constant->data.data(), val.dtype, 0));
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

}  // namespace

// ONNX If: a condition known when the network is built inlines the branch taken; otherwise
// both branches are inlined, each node guarded by the condition, and each output is an
// opforge::IfSelect of the two branches' values (the runtime skips the branch not taken).
Status Importer::importIf(const onnx::NodeProto& n, const std::string& name, Scope& scope,
                          const std::vector<graph::Guard>& guards, int depth,
                          const std::string& outer) {
  const std::string where = file + ": node '" + name + "' (ai.onnx::If)";
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
    return Status::invalid(where + ": input 'cond' ('" + cv.name + "') is " + dtypeName(cv.dtype) +
                           "; If needs a BOOL condition");
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
    OPFORGE_RETURN_IF_ERROR(importInitializers(b, where + ": " + label, prefix, inner));
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
    auto added =
        graph::addNode(g, select, sname, attrs, {cond, then_outs[o], else_outs[o]}, {oname}, false);
    if (!added) return added.status().withContext(file);
    g.nodes[*added].guards = guards;
    for (int v : g.nodes[*added].outputs) taken.insert(g.values[v].name);
    if (!n.output(o).empty()) scope[n.output(o)] = g.nodes[*added].outputs[0];
  }
  return Status::ok();
}

namespace {
// Stacks `steps` (one value per iteration, in order) along a new axis `axis`: Unsqueeze each,
// then one Concat.
Result<int> stack(Importer& im, const std::vector<int>& steps, int64_t axis,
                  const std::string& name, const std::string& out,
                  const std::vector<graph::Guard>& guards) {
  std::vector<int> parts;
  AttrMap un;
  un.set("axes", AttrValue(std::vector<int64_t>{axis}));
  for (size_t i = 0; i < steps.size(); ++i) {
    OPFORGE_ASSIGN_OR_RETURN(
        int u, im.addOp("ai.onnx::Unsqueeze", name + "/unsqueeze" + std::to_string(i), un,
                        {steps[i]}, "", guards));
    parts.push_back(im.g.nodes[u].outputs[0]);
  }
  AttrMap cat;
  cat.set("axis", AttrValue(axis));
  OPFORGE_ASSIGN_OR_RETURN(int c,
                           im.addOp("ai.onnx::Concat", name + "/concat", cat, parts, out, guards));
  return im.g.nodes[c].outputs[0];
}
}  // namespace

// ONNX Loop, unrolled: the trip count M and the initial condition must be known when the
// network is built, and the body's condition output must be known after each iteration (a
// constant, or the condition passed through); the loop-carried values flow from one iteration's
// body to the next; scan outputs are stacked along a new axis 0.
Status Importer::importLoop(const onnx::NodeProto& n, const std::string& name, Scope& scope,
                            const std::vector<graph::Guard>& guards, int depth,
                            const std::string& outer) {
  const std::string where = file + ": node '" + name + "' (ai.onnx::Loop)";
  const onnx::GraphProto* body = graphAttr(n, "body");
  if (!body) return Status::invalid(where + ": needs the graph attribute 'body'");
  const int num_carried = n.input_size() - 2;
  if (num_carried < 0)
    return Status::invalid(where + ": needs the inputs M and cond (either may be empty)");
  if (body->input_size() != num_carried + 2)
    return Status::invalid(where + ": the body has " + std::to_string(body->input_size()) +
                           " inputs; it needs " + std::to_string(num_carried + 2) +
                           " (iteration number, condition, " + std::to_string(num_carried) +
                           " loop-carried values)");
  const int num_scans = body->output_size() - 1 - num_carried;
  if (num_scans < 0 || n.output_size() != num_carried + num_scans)
    return Status::invalid(where + ": the body has " + std::to_string(body->output_size()) +
                           " outputs and the node " + std::to_string(n.output_size()) +
                           "; the body needs the condition, the " + std::to_string(num_carried) +
                           " loop-carried values and one per scan output");
  auto input = [&](int i) -> int {
    if (i >= n.input_size() || n.input(i).empty()) return -1;
    auto it = scope.find(n.input(i));
    return it == scope.end() ? -1 : it->second;
  };
  std::optional<int64_t> trips;
  if (!n.input(0).empty()) {
    const int m = input(0);
    if (m < 0) return Status::invalid(where + ": input 'M' ('" + n.input(0) + "') is not defined");
    trips = knownScalar(g, m);
    if (!trips)
      return Status::unsupported(where + ": the trip count M ('" + n.input(0) +
                                 "') must be known when the network is built (opforge unrolls "
                                 "loops; a trip count from run-time data is not supported)");
    if (*trips < 0) trips = 0;
  }
  bool cond = true;
  if (!n.input(1).empty()) {
    const int c = input(1);
    if (c < 0)
      return Status::invalid(where + ": input 'cond' ('" + n.input(1) + "') is not defined");
    auto k = knownScalar(g, c);
    if (!k)
      return Status::unsupported(where + ": the condition ('" + n.input(1) +
                                 "') must be known when the network is built (opforge unrolls "
                                 "loops)");
    cond = *k != 0;
  }
  if (trips && *trips > kMaxUnrolledIterations)
    return Status::outOfRange(where + ": trip count " + std::to_string(*trips) +
                              " is more than opforge unrolls (" +
                              std::to_string(kMaxUnrolledIterations) + " iterations)");
  const int64_t limit = trips ? *trips : kMaxUnrolledIterations + 1;
  std::vector<int> carried;
  for (int j = 0; j < num_carried; ++j) {
    const int v = input(2 + j);
    if (v < 0)
      return Status::invalid(where + ": loop-carried input '" + n.input(2 + j) +
                             "' is not defined");
    carried.push_back(v);
  }
  std::vector<std::vector<int>> scans(num_scans);
  const size_t first_node = g.nodes.size();
  Scope consts = scope;  // the body's initializers, once for every iteration
  OPFORGE_RETURN_IF_ERROR(importInitializers(*body, where + ": body", name + "/body/", consts));
  for (int64_t i = 0; i < limit && cond; ++i) {
    if (i == kMaxUnrolledIterations)
      return Status::outOfRange(where + ": the loop runs more than " +
                                std::to_string(kMaxUnrolledIterations) +
                                " iterations (opforge unrolls loops)");
    Scope inner = consts;
    const std::string prefix = name + "/iter" + std::to_string(i) + "/";
    auto iter =
        net.addConstant(valueName(body->input(0).name(), prefix), scalar(DataType::kInt64, i));
    if (!iter) return iter.status().withContext(where);
    inner[body->input(0).name()] = iter->id;
    auto c = net.addConstant(valueName(body->input(1).name(), prefix), scalar(DataType::kBool, 1));
    if (!c) return c.status().withContext(where);
    inner[body->input(1).name()] = c->id;
    for (int j = 0; j < num_carried; ++j) inner[body->input(2 + j).name()] = carried[j];
    OPFORGE_RETURN_IF_ERROR(importNodes(*body, inner, guards, depth + 1, prefix));
    std::vector<int> outs;
    for (const auto& o : body->output()) {
      auto it = inner.find(o.name());
      if (it == inner.end())
        return Status::invalid(where + ": body output '" + o.name() +
                               "' is not produced by any node");
      outs.push_back(it->second);
    }
    auto next = knownScalar(g, outs[0]);
    if (!next)
      return Status::unsupported(where + ": the body's condition output ('" +
                                 body->output(0).name() +
                                 "') depends on run-time data; opforge unrolls loops and needs "
                                 "it known when the network is built");
    cond = *next != 0;
    for (int j = 0; j < num_carried; ++j) carried[j] = outs[1 + j];
    for (int k = 0; k < num_scans; ++k) scans[k].push_back(outs[1 + num_carried + k]);
    if (g.nodes.size() - first_node > kMaxUnrolledNodes)
      return Status::outOfRange(where + ": unrolled, the loop makes more than " +
                                std::to_string(kMaxUnrolledNodes) + " nodes");
  }
  for (int j = 0; j < num_carried; ++j)
    if (!n.output(j).empty()) scope[n.output(j)] = carried[j];
  for (int k = 0; k < num_scans; ++k) {
    const std::string& o = n.output(num_carried + k);
    if (scans[k].empty())
      return Status::unsupported(where + ": the loop runs no iteration, so scan output '" + o +
                                 "' is empty with an element shape opforge does not infer");
    OPFORGE_ASSIGN_OR_RETURN(int v, stack(*this, scans[k], 0, name + "/scan" + std::to_string(k),
                                          o.empty() ? "" : valueName(o, outer), guards));
    if (!o.empty()) scope[o] = v;
  }
  return Status::ok();
}

// ONNX Scan (opset 9 and later), unrolled along the scan inputs' sequence axis, whose length must
// be known when the network is built: step t reads element t (or L-1-t, reversed) of each scan
// input, the state flows from step to step, and each scan output stacks the steps' values along
// its axis (in reverse for a reversed output).
Status Importer::importScan(const onnx::NodeProto& n, const std::string& name, Scope& scope,
                            const std::vector<graph::Guard>& guards, int depth,
                            const std::string& outer) {
  const std::string where = file + ": node '" + name + "' (ai.onnx::Scan)";
  const int64_t opset = opsets.count(kOnnxNs) ? opsets[kOnnxNs] : 0;
  if (opset < 9)
    return Status::unsupported(where +
                               ": Scan before opset 9 (with a batch axis and sequence_lens) is "
                               "not supported");
  const onnx::GraphProto* body = graphAttr(n, "body");
  if (!body) return Status::invalid(where + ": needs the graph attribute 'body'");
  const auto m = intAttr(n, "num_scan_inputs");
  if (!m || *m < 1 || *m > n.input_size())
    return Status::invalid(where + ": attribute 'num_scan_inputs' must be 1 to the input count (" +
                           std::to_string(n.input_size()) + ")");
  const int num_scan_in = static_cast<int>(*m), num_state = n.input_size() - num_scan_in;
  const int num_scan_out = n.output_size() - num_state;
  if (body->input_size() != n.input_size() || num_scan_out < 0 ||
      body->output_size() != n.output_size())
    return Status::invalid(where + ": the body has " + std::to_string(body->input_size()) +
                           " inputs and " + std::to_string(body->output_size()) +
                           " outputs; the node " + std::to_string(n.input_size()) + " and " +
                           std::to_string(n.output_size()));
  auto axesOf = [&](const char* attr, int count) -> Result<std::vector<int64_t>> {
    auto v = intsAttr(n, attr);
    if (v.empty()) v.assign(count, 0);
    if (static_cast<int>(v.size()) != count)
      return Status::invalid(where + ": attribute '" + attr + "' has " + std::to_string(v.size()) +
                             " values; it needs " + std::to_string(count));
    return v;
  };
  OPFORGE_ASSIGN_OR_RETURN(auto in_axes, axesOf("scan_input_axes", num_scan_in));
  OPFORGE_ASSIGN_OR_RETURN(auto in_dirs, axesOf("scan_input_directions", num_scan_in));
  OPFORGE_ASSIGN_OR_RETURN(auto out_axes, axesOf("scan_output_axes", num_scan_out));
  OPFORGE_ASSIGN_OR_RETURN(auto out_dirs, axesOf("scan_output_directions", num_scan_out));
  std::vector<int> state, xs;
  for (int i = 0; i < n.input_size(); ++i) {
    auto it = n.input(i).empty() ? scope.end() : scope.find(n.input(i));
    if (it == scope.end())
      return Status::invalid(where + ": input " + std::to_string(i) + " ('" + n.input(i) +
                             "') is not defined");
    (i < num_state ? state : xs).push_back(it->second);
  }
  int64_t length = -1;
  for (int j = 0; j < num_scan_in; ++j) {
    const graph::Value& x = g.values[xs[j]];
    const int r = static_cast<int>(x.dims.size());
    const int64_t a = in_axes[j] < 0 ? in_axes[j] + r : in_axes[j];
    if (a < 0 || a >= r)
      return Status::invalid(where + ": scan input axis " + std::to_string(in_axes[j]) +
                             " is outside the rank " + std::to_string(r) + " of '" + x.name + "'");
    in_axes[j] = a;
    if (!x.dims[a].isConst())
      return Status::unsupported(where + ": the sequence length of scan input '" + x.name + "' (" +
                                 x.dims[a].toString() +
                                 ") must be known when the network is built (opforge unrolls "
                                 "Scan)");
    if (length >= 0 && x.dims[a].constValue() != length)
      return Status::invalid(where + ": the scan inputs have sequence lengths " +
                             std::to_string(length) + " and " +
                             std::to_string(x.dims[a].constValue()));
    length = x.dims[a].constValue();
  }
  if (length == 0)
    return Status::unsupported(where + ": a Scan over an empty sequence is not supported");
  if (length > kMaxUnrolledIterations)
    return Status::outOfRange(where + ": sequence length " + std::to_string(length) +
                              " is more than opforge unrolls (" +
                              std::to_string(kMaxUnrolledIterations) + " steps)");
  const size_t first_node = g.nodes.size();
  Scope consts = scope;
  OPFORGE_RETURN_IF_ERROR(importInitializers(*body, where + ": body", name + "/body/", consts));
  std::vector<std::vector<int>> outs_per_step(num_scan_out);
  for (int64_t t = 0; t < length; ++t) {
    Scope inner = consts;
    const std::string prefix = name + "/step" + std::to_string(t) + "/";
    for (int j = 0; j < num_state; ++j) inner[body->input(j).name()] = state[j];
    for (int j = 0; j < num_scan_in; ++j) {
      const int64_t at = in_dirs[j] ? length - 1 - t : t;
      auto idx = net.addConstant(valueName("index", prefix), scalar(DataType::kInt64, at));
      if (!idx) return idx.status().withContext(where);
      AttrMap ga;
      ga.set("axis", AttrValue(in_axes[j]));
      OPFORGE_ASSIGN_OR_RETURN(
          int gn,
          addOp("ai.onnx::Gather", prefix + "scan_input" + std::to_string(j), ga, {xs[j], idx->id},
                valueName(body->input(num_state + j).name(), prefix), guards));
      inner[body->input(num_state + j).name()] = g.nodes[gn].outputs[0];
    }
    OPFORGE_RETURN_IF_ERROR(importNodes(*body, inner, guards, depth + 1, prefix));
    std::vector<int> outs;
    for (const auto& o : body->output()) {
      auto it = inner.find(o.name());
      if (it == inner.end())
        return Status::invalid(where + ": body output '" + o.name() +
                               "' is not produced by any node");
      outs.push_back(it->second);
    }
    for (int j = 0; j < num_state; ++j) state[j] = outs[j];
    for (int k = 0; k < num_scan_out; ++k) outs_per_step[k].push_back(outs[num_state + k]);
    if (g.nodes.size() - first_node > kMaxUnrolledNodes)
      return Status::outOfRange(where + ": unrolled, the Scan makes more than " +
                                std::to_string(kMaxUnrolledNodes) + " nodes");
  }
  for (int j = 0; j < num_state; ++j)
    if (!n.output(j).empty()) scope[n.output(j)] = state[j];
  for (int k = 0; k < num_scan_out; ++k) {
    auto steps = outs_per_step[k];
    if (out_dirs[k]) std::reverse(steps.begin(), steps.end());
    const int r = static_cast<int>(g.values[steps[0]].dims.size()) + 1;
    const int64_t a = out_axes[k] < 0 ? out_axes[k] + r : out_axes[k];
    if (a < 0 || a >= r)
      return Status::invalid(where + ": scan output axis " + std::to_string(out_axes[k]) +
                             " is outside the output rank " + std::to_string(r));
    const std::string& o = n.output(num_state + k);
    OPFORGE_ASSIGN_OR_RETURN(int v,
                             stack(*this, steps, a, name + "/scan_output" + std::to_string(k),
                                   o.empty() ? "" : valueName(o, outer), guards));
    if (!o.empty()) scope[o] = v;
  }
  return Status::ok();
}

}  // namespace opforge::onnx_import
