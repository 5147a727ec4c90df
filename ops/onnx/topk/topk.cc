// ONNX TopK: the k largest (largest = 1) or smallest values along `axis` and their INT64 indices,
// sorted; equal values keep the lower index first. k (input, opset 10+) known when the network
// is built gives static shapes; a k computed from run-time data (torchvision's detection heads:
// min(1000, the boxes above the score threshold)) makes the axis a data-dependent size, bounded by
// the axis length, that the kernel writes (only the CPU reference reads k on the host).
#include <algorithm>
#include <numeric>

#include "../common/kernel_axis.h"
#include "../common/util.h"

namespace opforge::ops {
OPFORGE_OP(TopK, "ai.onnx::TopK")
    .doc("The k largest or smallest elements along an axis.")
    .input("X")
    .shapeInput("K", true, "INT64 [1] (opset 10)")
    .output("Values")
    .output("Indices")
    .attr<int64_t>("axis", int64_t{-1})
    .attr<int64_t>("largest", int64_t{1})
    .attr<int64_t>("sorted", int64_t{1})
    .optionalAttr<int64_t>("k", "opset < 10")
    .shape([](ShapeContext& c) -> Result<std::vector<SymDesc>> {
      SymDesc x = c.input(0);
      OPFORGE_RETURN_IF_ERROR(checkType(c, "input 'X'", x.dtype, kNumeric));
      if (x.rank() == 0) return c.error("input 'X' must have rank >= 1");
      OPFORGE_ASSIGN_OR_RETURN(int axis, normAxis(c, c.attr<int64_t>("axis"), x.rank()));
      DimExpr k;
      if (c.hasInput(1) && !c.value(1)) {
        const SymDesc kd = c.input(1);
        if (kd.dtype != DataType::kInt64 || kd.rank() != 1 || !kd.dim(0).isConst() ||
            kd.dim(0).constValue() != 1)
          return c.error("input 'K' must be INT64 [1], got " + dtypeName(kd.dtype) +
                         toString(kd.dims));
        k = c.sizeTensor(x.dim(axis), x.dim(axis), DataType::kInt64).expr();
      } else if (c.hasInput(1)) {
        OPFORGE_ASSIGN_OR_RETURN(auto v, needValue(c, 1, "K"));
        if (v.size() != 1)
          return c.error("input 'K' must hold one value, got " + std::to_string(v.size()));
        k = v[0];
      } else if (c.attrs().has("k")) {
        k = c.attr<int64_t>("k");
      } else {
        return c.error("needs K (input, or attribute before opset 10)");
      }
      if (k.isConst() && k.constValue() < 0)
        return c.error("K must not be negative, got " + k.toString());
      if (k.isConst() && x.dim(axis).isConst() && k.constValue() > x.dim(axis).constValue())
        return c.error("K = " + k.toString() + " is larger than axis " + std::to_string(axis) +
                       " (" + x.dim(axis).toString() + ")");
      if (!k.isConst() || !x.dim(axis).isConst())
        c.require(k, DimAssertion::Op::kLe, x.dim(axis), "K must not exceed the axis size");
      SymDesc v = x.like();
      v.dims[axis] = k;
      SymDesc i = v;
      i.dtype = DataType::kInt64;
      return std::vector<SymDesc>{v, i};
    })
    .cpu([](KernelContext& kc, std::span<const Tensor> in, std::span<const Tensor> out) -> Status {
      const Tensor& x = in[0];
      const int r = x.desc.rank();
      OPFORGE_ASSIGN_OR_RETURN(const int axis, kernelAxis(kc.attr<int64_t>("axis"), r));
      const bool largest = kc.attr<int64_t>("largest") != 0;
      const int64_t outer = prodOf(x.desc.dims, 0, axis), n = x.desc.dims[axis],
                    inner = prodOf(x.desc.dims, axis + 1, r);
      // A run-time K: read here (a hidden size-tensor output gets it); else the output's dim.
      const bool runtime_k = out.size() > 2;
      if (runtime_k && !in[1].data)
        return Status::internal("TopK: the run-time input 'K' is missing");
      const int64_t k =
          runtime_k ? *static_cast<const int64_t*>(in[1].data) : out[0].desc.dims[axis];
      if (k < 0 || k > n)
        return Status::outOfRange("K = " + std::to_string(k) + " is outside [0, " +
                                  std::to_string(n) + "] (the axis size)");
      if (runtime_k) *static_cast<int64_t*>(out[2].data) = k;
      auto* pi = static_cast<int64_t*>(out[1].data);
      return visitTypes<kNumeric>(x.desc.dtype, "TopK", [&](auto num) -> Status {
        using N = decltype(num);
        using C = typename N::C;
        const auto* px = ptrOf<N>(x);
        auto* pv = mutPtr<N>(out[0]);
        std::vector<int64_t> order(static_cast<size_t>(n));
        std::vector<C> vals(static_cast<size_t>(n));
        for (int64_t o = 0; o < outer; ++o)
          for (int64_t i = 0; i < inner; ++i) {
            for (int64_t j = 0; j < n; ++j) vals[j] = N::load(px[(o * n + j) * inner + i]);
            std::iota(order.begin(), order.end(), 0);
            auto before = [&](int64_t a, int64_t b) {
              if (vals[a] == vals[b]) return a < b;
              return largest ? vals[a] > vals[b] : vals[a] < vals[b];
            };
            std::partial_sort(order.begin(), order.begin() + k, order.end(), before);
            for (int64_t j = 0; j < k; ++j) {
              pv[(o * k + j) * inner + i] = N::store(vals[order[j]]);
              pi[(o * k + j) * inner + i] = order[j];
            }
          }
        return Status::ok();
      });
    });
}  // namespace opforge::ops
