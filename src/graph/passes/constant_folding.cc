// constant_folding: evaluates nodes of built-in ops whose inputs are all constants (plugins are
// never folded: a plan must show the plugin the user asked for).
#include <cstring>

#include "../fold.h"
#include "../passes.h"

namespace opforge::graph {
namespace {

Status foldConstants(PassContext& ctx) {
  if (!ctx.constant_folding) return Status::ok();
  Graph& g = ctx.g;
  for (int n : ctx.order) {
    Node& node = g.nodes[n];
    if (node.dead || !node.op->builtin() || !node.size_tensors.empty()) continue;
    bool all_const = true;
    for (int v : node.inputs) all_const &= v < 0 || g.values[v].constant != nullptr;
    for (int v : node.outputs)
      for (const auto& d : g.values[v].dims) all_const &= d.isConst();
    if (!all_const || !foldable(g, node)) continue;  // a huge result stays a node (fold.h)
    std::vector<Tensor> ins;
    for (int v : node.inputs) {
      if (v < 0) {
        ins.push_back(Tensor{});
        continue;
      }
      const TensorValue& c = *g.values[v].constant;
      ins.push_back(Tensor{c.desc, const_cast<uint8_t*>(c.data.data()), Device::kCpu});
    }
    std::vector<std::shared_ptr<TensorValue>> results;
    std::vector<Tensor> outs;
    for (int v : node.outputs) {
      auto t = std::make_shared<TensorValue>();
      t->desc.dtype = g.values[v].dtype;
      for (const auto& d : g.values[v].dims) t->desc.dims.push_back(d.constValue());
      t->data.assign(t->desc.bytes(), 0);
      outs.push_back(Tensor{t->desc, t->data.data(), Device::kCpu});
      results.push_back(std::move(t));
    }
    // In-place ops write into their input: give them a copy.
    for (size_t o = 0; o < node.aliases.size(); ++o)
      if (node.aliases[o] >= 0 && outs[o].bytes())
        std::memcpy(outs[o].data, ins[node.aliases[o]].data, outs[o].bytes());
    Status st = node.instance->run(0, ins, outs, nullptr, 0, nullptr);
    if (!st && !node.guards.empty())
      continue;  // an If branch's node, maybe of the branch not taken
    if (!st)
      return st.withContext(nodeLabel(node) +
                            " (evaluating it at build time because its inputs are constant)");
    for (size_t o = 0; o < node.outputs.size(); ++o) {
      Value& v = g.values[node.outputs[o]];
      v.sym_value = constantAsDims(*results[o]);
      v.constant = std::move(results[o]);
      v.producer = -1;
    }
    node.dead = true;
    ++ctx.counters["folded to constants"];
  }
  return Status::ok();
}

}  // namespace

OPFORGE_GRAPH_PASS(constant_folding, 100, foldConstants);

}  // namespace opforge::graph
