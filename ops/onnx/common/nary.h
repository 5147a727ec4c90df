// nary.h — ONNX's variadic broadcasting ops (Max, Min, Mean, Sum): y = f(...f(f(x0, x1), x2)...).
#pragma once

#include "binary.h"

namespace opforge::ops {

// `sym` (Min, Max, Sum) propagates shape values: min(s, t // 2) of two sizes (transformers'
// SEW) stays a known dimension.
template <unsigned Types, typename F>
OpDef& defineNary(OpDef& def, const char* name, F f, bool mean = false, SymBinaryFn sym = nullptr) {
  if (sym)
    def.variadicValueInput("data_0");
  else
    def.variadicInput("data_0");
  return def.output("result")
      .combos(comboTypes(Types))
      .shape([sym](ShapeContext& c) -> Result<SymDesc> {
        std::vector<SymDesc> ins;
        for (int i = 0; i < c.numInputs(); ++i) {
          ins.push_back(c.input(i));
          if (ins.back().dtype != ins[0].dtype)
            return c.error("input " + std::to_string(i) + " has type " +
                           dtypeName(ins.back().dtype) + "; the first input has " +
                           dtypeName(ins[0].dtype) + " (all must match)");
        }
        OPFORGE_RETURN_IF_ERROR(checkType(c, "input 'data_0'", ins[0].dtype, Types));
        OPFORGE_ASSIGN_OR_RETURN(auto dims, broadcastAll(c, ins));
        if (sym && dims.size() <= 1 && isIntIndex(ins[0].dtype)) {
          std::optional<std::vector<DimExpr>> acc = c.value(0);
          for (int i = 1; i < c.numInputs() && acc; ++i) {
            const auto v = c.value(i);
            acc = v ? broadcastValues(*acc, *v, sym) : std::nullopt;
          }
          if (acc) c.setValue(0, std::move(*acc));
        }
        return SymDesc::make(ins[0].dtype, std::move(dims));
      })
      .cpu([name, f, mean](KernelContext&, std::span<const Tensor> in,
                           std::span<const Tensor> out) -> Status {
        const Tensor& y = out[0];
        for (const Tensor& x : in)  // a plan's dims (edited) must still broadcast
          OPFORGE_RETURN_IF_ERROR(checkBroadcast(x.desc.dims, y.desc.dims, name));
        return visitTypes<Types>(y.desc.dtype, name, [&](auto num) -> Status {
          using N = decltype(num);
          using C = typename N::C;
          // Accumulate in the compute type, one input at a time, into the output.
          std::vector<C> acc(static_cast<size_t>(y.numel()));
          for (size_t k = 0; k < in.size(); ++k) {
            const auto* px = ptrOf<N>(in[k]);
            forEachRun(y.desc.dims, {broadcastStrides(in[k].desc.dims, y.desc.dims)},
                       [&](int64_t o, const int64_t* off, int64_t n, const int64_t* st) {
                         for (int64_t i = 0; i < n; ++i) {
                           const C v = N::load(px[off[0] + i * st[0]]);
                           acc[o + i] = k == 0 ? v : static_cast<C>(f(acc[o + i], v));
                         }
                       });
          }
          auto* py = mutPtr<N>(y);
          for (int64_t i = 0; i < y.numel(); ++i)
            py[i] = N::store(mean ? static_cast<C>(acc[i] / static_cast<C>(in.size())) : acc[i]);
          return Status::ok();
        });
      })
      .elementwise();
}

// max / min that propagate NaN (numpy's maximum / minimum).
template <typename C>
C nanMax(C a, C b) {
  if constexpr (std::is_floating_point_v<C>)
    if (std::isnan(a) || std::isnan(b)) return std::numeric_limits<C>::quiet_NaN();
  return a < b ? b : a;
}
template <typename C>
C nanMin(C a, C b) {
  if constexpr (std::is_floating_point_v<C>)
    if (std::isnan(a) || std::isnan(b)) return std::numeric_limits<C>::quiet_NaN();
  return b < a ? b : a;
}

}  // namespace opforge::ops
