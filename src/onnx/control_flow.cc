// control_flow.cc — ONNX If, Loop and Scan in the importer (importer.h). If is inlined with
// guards (docs/architecture.md, "Control flow"); Loop and Scan are unrolled, each iteration's body
// imported like any subgraph (a Loop whose iteration count is run-time data: to a bound, each
// iteration guarded).
#include <algorithm>
#include <cstring>

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
  OPFORGE_RETURN_IF_ERROR(needTensor(cond, where, "input 'cond'"));
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
  // A condition the shape rules decided (a comparison of sizes: DeBERTa-v2's
  // `not (q_len == k_len)`) is known too.
  if (!known && cv.sym_value && cv.sym_value->size() == 1 && (*cv.sym_value)[0].isConst())
    known = (*cv.sym_value)[0].constValue() != 0;
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
    for (int v : {then_outs[o], else_outs[o]})
      OPFORGE_RETURN_IF_ERROR(
          needTensor(v, where,
                     "output " + std::to_string(o) +
                         " (the condition is run-time data, and a sequence is an "
                         "import-time list)"));
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

// Whether the body's condition output is its condition input, directly or through Identity nodes:
// with no trip count and a true condition, such a loop never ends.
bool conditionPassedOn(const onnx::GraphProto& body) {
  if (body.input_size() < 2 || body.output_size() < 1) return false;
  std::string v = body.output(0).name();
  for (int hops = 0; hops <= body.node_size(); ++hops) {
    if (v == body.input(1).name()) return true;
    const onnx::NodeProto* producer = nullptr;
    for (const auto& node : body.node())
      for (const auto& o : node.output())
        if (o == v) producer = &node;
    if (!producer || producer->op_type() != "Identity" || producer->input_size() != 1 ||
        !(producer->domain().empty() || producer->domain() == "ai.onnx"))
      return false;
    v = producer->input(0);
  }
  return false;
}
}  // namespace

// ONNX Loop, unrolled; the loop-carried values flow from one iteration's body to the next, scan
// outputs are stacked along a new axis 0. Iterations that surely run (the trip count M and the
// condition known when the network is built) are imported as they are. From the first iteration
// whose running depends on run-time data (M, the initial condition or the body's condition
// output), each is guarded by `cond && i < M` computed in the network, and every carried value
// and scan output after it is an IfSelect of the body's value and the one before; at most
// OnnxImportOptions::max_dynamic_loop_iterations such iterations, then an opforge::LoopLimit
// layer that fails at run time if the loop would go on.
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
  // A flag known when the network is built, or a BOOL value computed at run time.
  struct Flag {
    std::optional<bool> known;
    int value = -1;
  };
  std::optional<int64_t> trips;
  int m = -1;  // M's value when it is run-time data
  if (!n.input(0).empty()) {
    m = input(0);
    OPFORGE_RETURN_IF_ERROR(needTensor(m, where, "input 'M'"));
    if (m < 0) return Status::invalid(where + ": input 'M' ('" + n.input(0) + "') is not defined");
    trips = knownScalar(g, m);
    if (trips) {
      m = -1;
      if (*trips < 0) trips = 0;
    } else if (g.values[m].dtype != DataType::kInt64) {
      return Status::invalid(where + ": input 'M' ('" + n.input(0) + "') is " +
                             dtypeName(g.values[m].dtype) + "; Loop needs INT64");
    }
  }
  Flag cond{true, -1};
  if (!n.input(1).empty()) {
    const int c = input(1);
    OPFORGE_RETURN_IF_ERROR(needTensor(c, where, "input 'cond'"));
    if (c < 0)
      return Status::invalid(where + ": input 'cond' ('" + n.input(1) + "') is not defined");
    if (auto k = knownScalar(g, c)) {
      cond = {*k != 0, -1};
    } else {
      if (g.values[c].dtype != DataType::kBool)
        return Status::invalid(where + ": input 'cond' ('" + n.input(1) + "') is " +
                               dtypeName(g.values[c].dtype) + "; Loop needs BOOL");
      cond = {std::nullopt, c};
    }
  }
  if (trips && *trips > kMaxUnrolledIterations && cond.known && *cond.known)
    return Status::outOfRange(where + ": trip count " + std::to_string(*trips) +
                              " is more than opforge unrolls (" +
                              std::to_string(kMaxUnrolledIterations) + " iterations)");
  if (!trips && m < 0 && cond.known && *cond.known && conditionPassedOn(*body))
    return Status::invalid(
        where + ": the loop never ends: it has no trip count M, its condition" +
        (n.input(1).empty() ? std::string(" is absent (true)") : " '" + n.input(1) + "' is true") +
        " and the body passes the condition on unchanged ('" + body->output(0).name() + "')");
  std::vector<int> carried;
  for (int j = 0; j < num_carried; ++j) {
    const int v = input(2 + j);
    if (v == -1)
      return Status::invalid(where + ": loop-carried input '" + n.input(2 + j) +
                             "' is not defined");
    carried.push_back(v);
  }
  // Helpers for iterations that run only at run time (guarded by a BOOL value).
  auto constant = [&](const std::string& label, TensorValue t) -> Result<int> {
    auto ref = net.addConstant(valueName(label, name + "/"), std::move(t));
    if (!ref) return ref.status().withContext(where);
    return ref->id;
  };
  auto op = [&](const std::string& key, const std::string& label, const AttrMap& attrs,
                const std::vector<int>& ins, const std::vector<graph::Guard>& gs) -> Result<int> {
    OPFORGE_ASSIGN_OR_RETURN(int k, addOp(key, name + "/" + label, attrs, ins, "", gs));
    return g.nodes[k].outputs[0];
  };
  // run ? a : b, the lengths that differ between a and b data-dependent (as an If's outputs).
  auto select = [&](int run, int a, int b, const std::string& label) -> Result<int> {
    if (a == b) return a;
    for (int v : {a, b})
      OPFORGE_RETURN_IF_ERROR(needTensor(
          v, where, "a value carried through iterations whose running is run-time data"));
    std::vector<int64_t> axes;
    const auto &da = g.values[a].dims, &db = g.values[b].dims;
    if (da.size() != db.size() || g.values[a].dtype != g.values[b].dtype)
      return Status::invalid(
          where + ": value '" + g.values[a].name + "' " + dtypeName(g.values[a].dtype) +
          toString(da) + " changes its type or rank between iterations (was '" + g.values[b].name +
          "' " + dtypeName(g.values[b].dtype) + toString(db) + ")");
    for (size_t d = 0; d < da.size(); ++d)
      if (!da[d].sameAs(db[d])) axes.push_back(static_cast<int64_t>(d));
    AttrMap at;
    at.set("axes", AttrValue(axes));
    return op("opforge::IfSelect", label, at, {run, a, b}, guards);
  };
  auto both = [&](const Flag& a, const Flag& b, const std::string& label) -> Result<Flag> {
    if (a.known) return *a.known ? b : Flag{false, -1};
    if (b.known) return *b.known ? a : Flag{false, -1};
    OPFORGE_ASSIGN_OR_RETURN(int v, op("ai.onnx::And", label, {}, {a.value, b.value}, guards));
    return Flag{std::nullopt, v};
  };
  // Whether iteration i runs: cond && i < M.
  auto runs = [&](int64_t i, const Flag& c) -> Result<Flag> {
    if (trips) return i < *trips ? c : Flag{false, -1};
    if (m < 0) return c;
    OPFORGE_ASSIGN_OR_RETURN(int iv,
                             constant("i" + std::to_string(i), scalar(DataType::kInt64, i)));
    OPFORGE_ASSIGN_OR_RETURN(
        int less, op("ai.onnx::Less", "iter" + std::to_string(i) + "_in_M", {}, {iv, m}, guards));
    return both(c, Flag{std::nullopt, less}, "iter" + std::to_string(i) + "_runs");
  };
  const int max_dynamic = options.max_dynamic_loop_iterations;
  if (max_dynamic < 1 || max_dynamic > kMaxUnrolledIterations)
    return Status::invalid(where + ": the import option max_dynamic_loop_iterations is " +
                           std::to_string(max_dynamic) + "; it must be 1 to " +
                           std::to_string(kMaxUnrolledIterations));
  std::vector<std::vector<int>> scans(num_scans);  // iterations that surely run
  std::vector<int> acc(num_scans, -1);  // scan outputs once an iteration runs only at run time
  int dynamic = 0;                      // iterations unrolled that run only at run time
  const size_t first_node = g.nodes.size();
  Scope consts = scope;  // the body's initializers, once for every iteration
  OPFORGE_RETURN_IF_ERROR(importInitializers(*body, where + ": body", name + "/body/", consts));
  Flag run{false, -1};
  for (int64_t i = 0;; ++i) {
    OPFORGE_ASSIGN_OR_RETURN(run, runs(i, cond));
    if (run.known && !*run.known) break;
    if (run.known && i == kMaxUnrolledIterations)
      return Status::outOfRange(where + ": the loop runs more than " +
                                std::to_string(kMaxUnrolledIterations) +
                                " iterations (opforge unrolls loops)");
    if (!run.known && dynamic == max_dynamic) break;  // checked at run time below
    std::vector<graph::Guard> gs = guards;
    if (!run.known) gs.push_back({run.value, true}), ++dynamic;
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
    OPFORGE_RETURN_IF_ERROR(importNodes(*body, inner, gs, depth + 1, prefix));
    std::vector<int> outs;
    for (const auto& o : body->output()) {
      auto it = inner.find(o.name());
      if (it == inner.end())
        return Status::invalid(where + ": body output '" + o.name() +
                               "' is not produced by any node");
      outs.push_back(it->second);
    }
    const std::string at = "iter" + std::to_string(i);
    OPFORGE_RETURN_IF_ERROR(needTensor(outs[0], where, "the body's condition output"));
    for (int k = 0; k < num_scans; ++k)
      OPFORGE_RETURN_IF_ERROR(needTensor(outs[1 + num_carried + k], where,
                                         "scan output " + std::to_string(k) + " of the body"));
    Flag next;
    if (auto k = knownScalar(g, outs[0])) {
      next = {*k != 0, -1};
    } else if (g.values[outs[0]].dtype != DataType::kBool) {
      return Status::invalid(where + ": the body's condition output ('" + body->output(0).name() +
                             "') is " + dtypeName(g.values[outs[0]].dtype) + "; it must be BOOL");
    } else {
      next = {std::nullopt, outs[0]};
    }
    if (run.known) {  // the iteration surely runs
      cond = next;
      for (int j = 0; j < num_carried; ++j) carried[j] = outs[1 + j];
      for (int k = 0; k < num_scans; ++k) scans[k].push_back(outs[1 + num_carried + k]);
    } else {  // it runs when `run` is true: each value is the body's then, else the one before
      if (next.known) {
        cond = *next.known ? run : Flag{false, -1};
      } else {
        TensorValue stop = scalar(DataType::kBool, 0);  // of the condition's shape
        for (const auto& d : g.values[outs[0]].dims) {
          if (!d.isConst() || d.constValue() != 1)
            return Status::invalid(where + ": the body's condition output ('" +
                                   body->output(0).name() + "') has shape " +
                                   toString(g.values[outs[0]].dims) + "; it must be one element");
          stop.desc.dims.push_back(1);
        }
        OPFORGE_ASSIGN_OR_RETURN(int no, constant(at + "_stop", std::move(stop)));
        OPFORGE_ASSIGN_OR_RETURN(int v, select(run.value, outs[0], no, at + "_cond"));
        cond = {std::nullopt, v};
      }
      for (int j = 0; j < num_carried; ++j) {
        OPFORGE_ASSIGN_OR_RETURN(carried[j], select(run.value, outs[1 + j], carried[j],
                                                    at + "_carried" + std::to_string(j)));
      }
      for (int k = 0; k < num_scans; ++k) {
        const int out = outs[1 + num_carried + k];
        const std::string sk = at + "_scan" + std::to_string(k);
        if (acc[k] < 0) {  // the first such iteration: the stack of those that surely ran
          if (!scans[k].empty()) {
            OPFORGE_ASSIGN_OR_RETURN(
                acc[k], stack(*this, scans[k], 0, name + "/" + sk + "_before", "", guards));
          } else {  // none: an empty stack [0, element dims...], the first element sliced
            // away; it reads no element, so the value may be one the iteration did not write.
            AttrMap un;
            un.set("axes", AttrValue(std::vector<int64_t>{0}));
            OPFORGE_ASSIGN_OR_RETURN(int u0,
                                     op("ai.onnx::Unsqueeze", sk + "_first", un, {out}, guards));
            AttrMap none;
            for (const char* a : {"starts", "ends", "axes"})
              none.set(a, AttrValue(std::vector<int64_t>{0}));
            OPFORGE_ASSIGN_OR_RETURN(acc[k],
                                     op("ai.onnx::Slice", sk + "_empty", none, {u0}, guards));
          }
        }
        AttrMap un;
        un.set("axes", AttrValue(std::vector<int64_t>{0}));
        OPFORGE_ASSIGN_OR_RETURN(int u, op("ai.onnx::Unsqueeze", sk + "_unsqueeze", un, {out}, gs));
        AttrMap cat;
        cat.set("axis", AttrValue(int64_t{0}));
        OPFORGE_ASSIGN_OR_RETURN(int grown,
                                 op("ai.onnx::Concat", sk + "_concat", cat, {acc[k], u}, gs));
        OPFORGE_ASSIGN_OR_RETURN(acc[k], select(run.value, grown, acc[k], sk));
      }
    }
    if (g.nodes.size() - first_node > kMaxUnrolledNodes)
      return Status::outOfRange(where + ": unrolled, the loop makes more than " +
                                std::to_string(kMaxUnrolledNodes) + " nodes");
  }
  std::vector<int> results = carried;
  for (int k = 0; k < num_scans; ++k) {
    if (acc[k] >= 0) {
      results.push_back(acc[k]);
      continue;
    }
    if (scans[k].empty())
      return Status::unsupported(where + ": the loop runs no iteration, so scan output '" +
                                 n.output(num_carried + k) +
                                 "' is empty with an element shape opforge does not infer");
    const std::string& o = n.output(num_carried + k);
    OPFORGE_ASSIGN_OR_RETURN(int v, stack(*this, scans[k], 0, name + "/scan" + std::to_string(k),
                                          o.empty() ? "" : valueName(o, outer), guards));
    results.push_back(v);
  }
  // Unrolled to the bound with the loop still able to go on: a layer that fails when it would.
  if (!run.known) {
    const std::string msg = where + ": at run time the loop needs more than " +
                            std::to_string(max_dynamic) +
                            " iterations, the most opforge unrolled for a loop whose trip count or "
                            "condition is run-time data (the import option "
                            "max_dynamic_loop_iterations, opforge exec --maxLoopIterations)";
    AttrMap at;
    at.set("message", AttrValue(msg));
    for (size_t o = 0; o < results.size(); ++o) {
      const std::string label = "limit" + std::to_string(o);
      OPFORGE_ASSIGN_OR_RETURN(int failed, op("opforge::LoopLimit", label, at, {results[o]}, [&] {
                                 auto gs = guards;
                                 gs.push_back({run.value, true});
                                 return gs;
                               }()));
      OPFORGE_ASSIGN_OR_RETURN(results[o], select(run.value, failed, results[o], label + "_pass"));
    }
  }
  for (int o = 0; o < n.output_size(); ++o)
    if (!n.output(o).empty()) scope[n.output(o)] = results[o];
  return Status::ok();
}

// ONNX Scan (opset 9 and later), unrolled along the scan inputs' sequence axis: step t reads
// element t (or L-1-t, reversed) of each scan input, the state flows from step to step, and each
// scan output stacks the steps' values along its axis (in reverse for a reversed output). A
// sequence length that is run-time data makes it a Loop (importScanAsLoop).
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
    OPFORGE_RETURN_IF_ERROR(
        needTensor(it->second, where, "input " + std::to_string(i) + " ('" + n.input(i) + "')"));
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
    if (!x.dims[a].isConst()) {
      if (j != 0 || length >= 0)
        return Status::unsupported(where + ": scan input '" + x.name +
                                   "' has the sequence length " + x.dims[a].toString() +
                                   ", run-time data, and another scan input one known when the "
                                   "network is built");
      return importScanAsLoop(n, name, scope, guards, depth, outer, *body, num_state, in_axes,
                              in_dirs, out_axes, out_dirs);
    }
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
    for (int k = 0; k < num_scan_out; ++k) {
      OPFORGE_RETURN_IF_ERROR(needTensor(outs[num_state + k], where,
                                         "scan output " + std::to_string(k) + " of the body"));
      outs_per_step[k].push_back(outs[num_state + k]);
    }
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

// A Scan whose sequence length L is run-time data, as the Loop it is: M = L (Shape and Gather of
// the first scan input), no condition, the state carried; the body reads element i (or L-1-i) of
// each scan input through a Gather and yields the Scan body's outputs, the Loop's stacked scan
// outputs reversed (a Gather of L-1, ..., 0) and their axis moved (a Transpose) as the attributes
// say. The Loop importer then unrolls it to OnnxImportOptions::max_dynamic_loop_iterations guarded
// iterations, a longer sequence failing at run time with that limit named.
Status Importer::importScanAsLoop(const onnx::NodeProto& n, const std::string& name, Scope& scope,
                                  const std::vector<graph::Guard>& guards, int depth,
                                  const std::string& outer, const onnx::GraphProto& body,
                                  int num_state, const std::vector<int64_t>& in_axes,
                                  const std::vector<int64_t>& in_dirs,
                                  const std::vector<int64_t>& out_axes,
                                  const std::vector<int64_t>& out_dirs) {
  const std::string where = file + ": node '" + name + "' (ai.onnx::Scan)";
  const int num_scan_in = n.input_size() - num_state, num_scan_out = n.output_size() - num_state;
  // Tensor names of this rewrite: the node's name, unique among nodes, keeps them apart.
  const std::string t = name + "/scan_as_loop/";
  auto constant = [&](const std::string& label, TensorValue v) -> Status {
    auto ref = net.addConstant(valueName(t + label, outer), std::move(v));
    if (!ref) return ref.status().withContext(where);
    scope[t + label] = ref->id;
    return Status::ok();
  };
  auto node = [](onnx::GraphProto& gp, const std::string& op, std::vector<std::string> ins,
                 std::vector<std::string> outs) -> onnx::NodeProto& {
    onnx::NodeProto& nd = *gp.add_node();
    nd.set_op_type(op);
    nd.set_name(outs.empty() ? op : outs[0]);
    for (auto& i : ins) nd.add_input(i);
    for (auto& o : outs) nd.add_output(o);
    return nd;
  };
  auto intAttrOf = [](onnx::NodeProto& nd, const std::string& key, int64_t v) {
    onnx::AttributeProto& at = *nd.add_attribute();
    at.set_name(key);
    at.set_type(onnx::AttributeProto::INT);
    at.set_i(v);
  };
  OPFORGE_RETURN_IF_ERROR(constant("axis", scalar(DataType::kInt64, in_axes[0])));
  OPFORGE_RETURN_IF_ERROR(constant("one", scalar(DataType::kInt64, 1)));
  OPFORGE_RETURN_IF_ERROR(constant("true", scalar(DataType::kBool, 1)));
  onnx::GraphProto outer_g;
  node(outer_g, "Shape", {n.input(num_state)}, {t + "shape"});
  node(outer_g, "Gather", {t + "shape", t + "axis"}, {t + "length"});
  node(outer_g, "Sub", {t + "length", t + "one"}, {t + "last"});
  // The Loop and its body.
  onnx::NodeProto& loop = node(outer_g, "Loop", {t + "length", ""}, {});
  loop.set_name(t + "loop");
  for (int j = 0; j < num_state; ++j) loop.add_input(n.input(j));
  for (int j = 0; j < num_state; ++j) loop.add_output(n.output(j));
  for (int k = 0; k < num_scan_out; ++k) loop.add_output(t + "stacked" + std::to_string(k));
  onnx::AttributeProto& ba = *loop.add_attribute();
  ba.set_name("body");
  ba.set_type(onnx::AttributeProto::GRAPH);
  onnx::GraphProto& lb = *ba.mutable_g();
  lb.set_name(body.name());
  lb.add_input()->set_name(t + "iter");
  lb.add_input()->set_name(t + "cond_in");
  for (int j = 0; j < num_state; ++j) *lb.add_input() = body.input(j);
  for (int j = 0; j < num_scan_in; ++j) {
    std::string idx = t + "iter";
    if (in_dirs[j]) {
      idx = t + "rev_index" + std::to_string(j);
      node(lb, "Sub", {t + "last", t + "iter"}, {idx});
    }
    intAttrOf(node(lb, "Gather", {n.input(num_state + j), idx}, {body.input(num_state + j).name()}),
              "axis", in_axes[j]);
  }
  for (const auto& nd : body.node()) *lb.add_node() = nd;
  for (const auto& init : body.initializer()) *lb.add_initializer() = init;
  lb.add_output()->set_name(t + "true");  // the condition: a constant, so only M counts
  for (const auto& o : body.output()) *lb.add_output() = o;
  OPFORGE_RETURN_IF_ERROR(importNodes(outer_g, scope, guards, depth, outer));
  // The stacked outputs: reversed where the direction says (a Gather of L-1, L-2, ..., 0), the
  // stacking axis moved where the attribute says (a Transpose; the rank is known now); else the
  // Loop's own value.
  int backwards = -1;
  for (int k = 0; k < num_scan_out; ++k) {
    const std::string& o = n.output(num_state + k);
    if (o.empty()) continue;
    const std::string label = name + "/scan_output" + std::to_string(k);
    int v = scope.at(t + "stacked" + std::to_string(k));
    const int r = static_cast<int>(g.values[v].dims.size());
    const int64_t a = out_axes[k] < 0 ? out_axes[k] + r : out_axes[k];
    if (a < 0 || a >= r)
      return Status::invalid(where + ": scan output axis " + std::to_string(out_axes[k]) +
                             " is outside the output rank " + std::to_string(r));
    const bool moved = a != 0;
    if (out_dirs[k]) {
      if (backwards < 0) {
        OPFORGE_RETURN_IF_ERROR(constant("minus_one", scalar(DataType::kInt64, -1)));
        const int m1 = scope.at(t + "minus_one");
        OPFORGE_ASSIGN_OR_RETURN(int rn, addOp("ai.onnx::Range", name + "/backwards", {},
                                               {scope.at(t + "last"), m1, m1}, "", guards));
        backwards = g.nodes[rn].outputs[0];
      }
      OPFORGE_ASSIGN_OR_RETURN(int gn,
                               addOp("ai.onnx::Gather", label + "/reversed", {}, {v, backwards},
                                     moved ? "" : valueName(o, outer), guards));
      v = g.nodes[gn].outputs[0];
    }
    if (moved) {
      std::vector<int64_t> perm;
      for (int d = 0; d < r; ++d) perm.push_back(d < a ? d + 1 : d == a ? 0 : d);
      AttrMap at;
      at.set("perm", AttrValue(perm));
      OPFORGE_ASSIGN_OR_RETURN(int tn, addOp("ai.onnx::Transpose", label + "/axis", at, {v},
                                             valueName(o, outer), guards));
      v = g.nodes[tn].outputs[0];
    }
    scope[o] = v;
  }
  return Status::ok();
}

}  // namespace opforge::onnx_import
