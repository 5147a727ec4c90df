#include "fold.h"

#include <algorithm>
#include <cstring>

namespace opforge::graph {

namespace {
std::shared_ptr<const TensorValue> knownTensor(const Graph& g, int v) {
  const Value& val = g.values[v];
  if (val.constant) return val.constant;
  auto t = std::make_shared<TensorValue>();
  t->desc.dtype = val.dtype;
  for (const auto& d : val.dims) t->desc.dims.push_back(d.constValue());
  t->data.resize(t->desc.bytes());
  for (size_t i = 0; i < val.sym_value->size(); ++i) {
    const int64_t x = (*val.sym_value)[i].constValue();
    if (val.dtype == DataType::kInt64) {
      std::memcpy(t->data.data() + i * 8, &x, 8);
    } else {
      const int32_t y = static_cast<int32_t>(x);
      std::memcpy(t->data.data() + i * 4, &y, 4);
    }
  }
  return t;
}
}  // namespace

bool foldable(const Graph& g, const Node& node, int64_t max_elements) {
  int64_t total_bytes = 0;
  for (int v : node.outputs) {
    int64_t count = 1;
    for (const auto& d : g.values[v].dims) {
      if (!d.isConst() || d.constValue() < 0) return false;
      if (__builtin_mul_overflow(count, d.constValue(), &count)) return false;
    }
    if (max_elements > 0 && count > max_elements) return false;
    int64_t bytes;
    if (__builtin_mul_overflow(count, static_cast<int64_t>(dtypeSize(g.values[v].dtype)), &bytes) ||
        __builtin_add_overflow(total_bytes, bytes, &total_bytes))
      return false;
  }
  if (total_bytes <= kMaxFoldBytes) return true;
  int64_t in_bytes = 0;
  for (int v : node.inputs)
    if (v >= 0 && g.values[v].constant)
      in_bytes += static_cast<int64_t>(g.values[v].constant->data.size());
  return total_bytes / 8 <= in_bytes;  // a cast of a weight grows it at most 8 times
}

bool isKnown(const Graph& g, int v) {
  const Value& val = g.values[v];
  if (val.constant) return true;
  if (!val.sym_value || (val.dtype != DataType::kInt64 && val.dtype != DataType::kInt32) ||
      val.dims.size() > 1)
    return false;
  int64_t n = 1;
  for (const auto& d : val.dims) {
    if (!d.isConst()) return false;
    n *= d.constValue();
  }
  if (static_cast<size_t>(n) != val.sym_value->size()) return false;
  for (const auto& e : *val.sym_value)
    if (!e.isConst()) return false;
  return true;
}

Result<bool> foldNode(Graph& g, int n, int64_t max_elements) {
  Node& node = g.nodes[n];
  if (node.dead || !node.op->builtin() || !node.size_tensors.empty()) return false;
  for (int v : node.inputs)
    if (v >= 0 && !isKnown(g, v)) return false;
  if (!foldable(g, node, max_elements)) return false;
  std::vector<std::shared_ptr<const TensorValue>> keep;
  std::vector<Tensor> ins;
  for (int v : node.inputs) {
    if (v < 0) {
      ins.push_back(Tensor{});
      continue;
    }
    keep.push_back(knownTensor(g, v));
    TensorDesc d = keep.back()->desc;
    d.format =
        g.values[v]
            .format;  // the layout the value is stored in (a constant's is LINEAR unless folded so)
    ins.push_back(Tensor{d, const_cast<uint8_t*>(keep.back()->data.data()), Device::kCpu});
  }
  std::vector<std::shared_ptr<TensorValue>> results;
  std::vector<Tensor> outs;
  for (int v : node.outputs) {
    auto t = std::make_shared<TensorValue>();
    t->desc.dtype = g.values[v].dtype;
    t->desc.format = g.values[v].format;
    for (const auto& d : g.values[v].dims) t->desc.dims.push_back(d.constValue());
    t->data.assign(t->desc.bytes(), 0);
    outs.push_back(Tensor{t->desc, t->data.data(), Device::kCpu});
    results.push_back(std::move(t));
  }
  for (size_t o = 0; o < node.aliases.size() && o < outs.size(); ++o)
    if (node.aliases[o] >= 0 && outs[o].bytes())
      std::memcpy(outs[o].data, ins[node.aliases[o]].data, outs[o].bytes());
  // Outputs that are all empty have nothing to compute, as at run time (execute.cc): the kernel is
  // not called (an empty tensor's other dims may multiply past int64 in a reference's loop bounds).
  const bool all_empty =
      std::all_of(outs.begin(), outs.end(), [](const Tensor& t) { return t.numel() == 0; });
  Status st = all_empty ? Status::ok() : node.instance->run(0, ins, outs, nullptr, 0, nullptr);
  // A node of an If branch may fail on values of the branch not taken: it stays a node.
  if (!st && !node.guards.empty()) return false;
  if (!st)
    return st.withContext(nodeLabel(node) +
                          " (evaluated when the network is built: its inputs are known)");
  for (size_t o = 0; o < node.outputs.size(); ++o) {
    Value& v = g.values[node.outputs[o]];
    if (!v.sym_value) v.sym_value = constantAsDims(*results[o]);
    v.constant = std::move(results[o]);
    v.producer = -1;
  }
  node.dead = true;
  return true;
}

}  // namespace opforge::graph
