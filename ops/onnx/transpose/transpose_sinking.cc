// transpose_sinking: Transposes that cancel, merge, or move below a residual Add —
//   Transpose(Transpose(x, P), Q)            -> Transpose(x, P[Q[i]]), or x when that is the
//                                               identity (as is a Transpose of perm 0, 1, ...);
//   op(Transpose(a, P), Transpose(b, P))     -> Transpose(op(a, b), P)  for Add, Sub, Mul, Div of
//                                               operands of one shape;
//   Add(Transpose(a, (0, 3, 1, 2)), b)       -> Transpose(Add(a, Transpose(b, (0, 2, 3, 1))),
//                                               (0, 3, 1, 2))  when b has the sum's shape and the
//                                               Add is the first Transpose's only reader.
// The last rule keeps a residual stream in the channels-last order a block computes in: ConvNeXt
// permutes each block's [N, H, W, C] result back to [N, C, H, W] and adds the block's input; moved
// below the Add, the permutation meets the next block's (0, 2, 3, 1) and the next downsample's,
// and they cancel, so the blocks add [N, H, W, C] tensors. The Transposes left stand between a
// convolution and the channels-last side; the builder runs those as views where the convolution
// reads or writes channels-last (Transpose's view tactics). Runs with constant folding on (the
// optimization switch), after gemm_scale_fusion: ConvNeXt's LayerScale, a Mul after the
// permutation back, is folded into the GEMM's weights by then.
#include "graph/passes/fusion_util.h"
#include "transpose.h"

namespace opforge::graph {
namespace {

// The node's permutation as its kernels apply it (transpose.h; the default is the axes reversed),
// as the int64 list the attribute holds; nullopt for one the op would refuse.
std::optional<std::vector<int64_t>> permOf(const Graph& g, int n) {
  const int x = g.nodes[n].inputs[0];
  if (x < 0) return std::nullopt;
  auto p = ops::transposePerm(g.nodes[n].attrs, static_cast<int>(g.values[x].dims.size()));
  if (!p) return std::nullopt;
  return std::vector<int64_t>(p->begin(), p->end());
}

class Sinker {
 public:
  explicit Sinker(PassContext& ctx)
      : ctx_(ctx), g_(ctx.g), m_(ctx), transpose_(ctx.registry.find("ai.onnx::Transpose")) {}

  Status run() {
    if (!transpose_) return Status::ok();
    for (size_t step = 0; step < ctx_.order.size(); ++step) {
      const int n = ctx_.order[step];
      if (m_.is(n, "ai.onnx::Transpose")) {
        mergeWithProducer(n);
      } else if (m_.is(n, "ai.onnx::Add") || m_.is(n, "ai.onnx::Sub") || m_.is(n, "ai.onnx::Mul") ||
                 m_.is(n, "ai.onnx::Div")) {
        OPFORGE_RETURN_IF_ERROR(sinkBelow(n, step));
      }
    }
    return Status::ok();
  }

 private:
  // Transpose n of a Transpose: one Transpose of the first's input, or none.
  void mergeWithProducer(int n) {
    auto q = permOf(g_, n);
    if (!q) return;
    const int inner = m_.producer(g_.nodes[n].inputs[0]);
    if (m_.is(inner, "ai.onnx::Transpose")) {
      auto p = permOf(g_, inner);
      if (!p || p->size() != q->size()) return;
      std::vector<int64_t> pq(q->size());
      for (size_t i = 0; i < q->size(); ++i) pq[i] = (*p)[(*q)[i]];
      g_.nodes[n].inputs[0] = g_.nodes[inner].inputs[0];
      g_.nodes[n].attrs.set("perm", AttrValue(pq));
      q = pq;
      ++ctx_.counters["Transposes of Transposes merged"];
      m_.rebuild();
    }
    if (ops::isIdentityPerm(*q) && m_.bypass(n, "transpose_sinking"))
      ++ctx_.counters["identity Transposes dropped"];
  }

  // Adds a node after position `at` of the execution order (the caller's loop visits it later).
  Result<int> add(const char* key, const std::string& name, const AttrMap& attrs,
                  const std::vector<int>& inputs, size_t at, const std::vector<Guard>& guards) {
    const RegisteredOp* op = ctx_.registry.find(key);
    if (!op) return Status::internal(std::string("transpose_sinking: no op ") + key);
    OPFORGE_ASSIGN_OR_RETURN(int nn,
                             addNode(g_, op, g_.uniqueNodeName(name), attrs, inputs, {}, false));
    g_.nodes[nn].guards = guards;
    ctx_.order.insert(ctx_.order.begin() + static_cast<std::ptrdiff_t>(at), nn);
    return nn;
  }

  // Binary node n (at position `step`) of Transposes: the Transpose moves below it.
  Status sinkBelow(int n, size_t& step) {
    const std::vector<int> in = g_.nodes[n].inputs;
    if (in.size() != 2 || in[0] < 0 || in[1] < 0) return Status::ok();
    const int y = m_.out(n);
    const int ta = m_.producer(in[0]), tb = m_.producer(in[1]);
    const bool a_t = m_.is(ta, "ai.onnx::Transpose"), b_t = m_.is(tb, "ai.onnx::Transpose");
    if (!a_t && !b_t) return Status::ok();
    if (!m_.sameShape(in[0], in[1]) || !m_.sameShape(in[0], y)) return Status::ok();
    const auto pa = a_t ? permOf(g_, ta) : std::nullopt, pb = b_t ? permOf(g_, tb) : std::nullopt;
    std::vector<int64_t> perm;
    int moved = -1;  // the operand whose Transpose is undone below the node (-1: both are)
    if (pa && pb && *pa == *pb) {
      perm = *pa;
      // Worth it only when one of them is read by n alone (else a third Transpose appears).
      if (m_.soleConsumer(in[0]) != n && m_.soleConsumer(in[1]) != n) return Status::ok();
    } else if (m_.is(n, "ai.onnx::Add")) {
      const std::vector<int64_t> to_first = {0, 3, 1, 2};
      const int t = pa && *pa == to_first ? 0 : pb && *pb == to_first ? 1 : -1;
      if (t < 0 || m_.soleConsumer(in[t]) != n || g_.values[in[1 - t]].constant)
        return Status::ok();
      perm = to_first;
      moved = 1 - t;
    } else {
      return Status::ok();
    }
    const std::vector<Guard> guards = g_.nodes[n].guards;
    const std::string name = g_.nodes[n].name, key = g_.nodes[n].op->key();
    const AttrMap attrs = g_.nodes[n].attrs;  // addNode moves g_.nodes
    std::vector<int64_t> inv(perm.size());
    for (size_t i = 0; i < perm.size(); ++i) inv[perm[i]] = static_cast<int64_t>(i);
    AttrMap inv_attrs, perm_attrs;
    inv_attrs.set("perm", AttrValue(inv));
    perm_attrs.set("perm", AttrValue(perm));
    std::vector<int> ops(2);
    size_t at = step;  // n's position: the new nodes go there, n is dropped
    for (int k = 0; k < 2; ++k) {
      if (k == moved) {
        OPFORGE_ASSIGN_OR_RETURN(int u, add("ai.onnx::Transpose", name + ":unpermute", inv_attrs,
                                            {in[k]}, at++, guards));
        ops[k] = m_.out(u);
      } else {
        ops[k] = g_.nodes[m_.producer(in[k])].inputs[0];
      }
    }
    OPFORGE_ASSIGN_OR_RETURN(int nn, add(key.c_str(), name, attrs, ops, at++, guards));
    OPFORGE_ASSIGN_OR_RETURN(int back, add("ai.onnx::Transpose", name + ":permute", perm_attrs,
                                           {m_.out(nn)}, at, guards));
    m_.takeOutput(back, y);
    g_.nodes[n].dead = true;
    ctx_.order.erase(ctx_.order.begin() + static_cast<std::ptrdiff_t>(at + 1));  // n, now after
    step = at - 1;  // the loop visits `back` next (it may merge with n's readers' Transposes)
    ++ctx_.counters[moved < 0 ? "Transposes of both operands moved below them"
                              : "Transposes moved below a residual Add"];
    if (ctx_.log) ctx_.log("transpose_sinking: the Transpose moved below " + name);
    m_.rebuild();
    return Status::ok();
  }

  PassContext& ctx_;
  Graph& g_;
  fusion::Matcher m_;
  const RegisteredOp* transpose_;
};

Status sinkTransposes(PassContext& ctx) {
  if (!ctx.constant_folding) return Status::ok();
  return Sinker(ctx).run();
}

}  // namespace

OPFORGE_GRAPH_PASS(transpose_sinking, 264, sinkTransposes);  // after gemm_scale_fusion (262)

}  // namespace opforge::graph
