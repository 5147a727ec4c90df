// argreduce.h — ArgMax / ArgMin: INT64 index of the extreme value along `axis` (the first one, or
// the last with select_last_index). A NaN counts as the extreme value (numpy's argmax).
#pragma once

#include "combos.h"
#include "util.h"

namespace opforge::ops {

template <bool kMax>
auto argReduceOp(const char* name) {
  return [=](OpDef& d) {
    d.input("data")
        .output("reduced")
        .attr<int64_t>("axis", int64_t{0})
        .attr<int64_t>("keepdims", int64_t{1})
        .attr<int64_t>("select_last_index", int64_t{0})
        .combos(comboTypes(kNumeric) + ", INT64")
        .shape([](ShapeContext& c) -> Result<SymDesc> {
          SymDesc x = c.input(0);
          OPFORGE_RETURN_IF_ERROR(checkType(c, "input 'data'", x.dtype, kNumeric));
          if (x.rank() == 0) return c.error("input 'data' must have rank >= 1");
          OPFORGE_ASSIGN_OR_RETURN(int axis, normAxis(c, c.attr<int64_t>("axis"), x.rank()));
          if (c.attr<int64_t>("keepdims") != 0)
            x.dims[axis] = 1;
          else
            x.dims.erase(x.dims.begin() + axis);
          if (!isConstEq(c.input(0).dim(axis), 0) && !c.input(0).dim(axis).isConst())
            c.require(1, DimAssertion::Op::kLe, c.input(0).dim(axis),
                      "the reduced axis must not be empty");
          else if (isConstEq(c.input(0).dim(axis), 0))
            return c.error("the reduced axis " + std::to_string(axis) + " is empty");
          return SymDesc::make(DataType::kInt64, x.dims);
        })
        .cpu([name](KernelContext& k, std::span<const Tensor> in,
                    std::span<const Tensor> out) -> Status {
          const Tensor& x = in[0];
          const int axis = wrapAxis(k.attr<int64_t>("axis"), x.desc.rank());
          const bool last = k.attr<int64_t>("select_last_index") != 0;
          const int64_t outer = prodOf(x.desc.dims, 0, axis), n = x.desc.dims[axis],
                        inner = prodOf(x.desc.dims, axis + 1, x.desc.rank());
          auto* py = static_cast<int64_t*>(out[0].data);
          return visitTypes<kNumeric>(x.desc.dtype, name, [&](auto num) -> Status {
            using N = decltype(num);
            using C = typename N::C;
            const auto* px = ptrOf<N>(x);
            for (int64_t o = 0; o < outer; ++o)
              for (int64_t i = 0; i < inner; ++i) {
                const auto* base = px + o * n * inner + i;
                int64_t best = 0;
                C bv = N::load(base[0]);
                for (int64_t j = 1; j < n; ++j) {
                  const C v = N::load(base[j * inner]);
                  bool better;
                  if constexpr (std::is_floating_point_v<C>) {
                    if (std::isnan(bv)) break;
                    if (std::isnan(v)) {
                      best = j;
                      bv = v;
                      break;
                    }
                  }
                  if constexpr (kMax)
                    better = last ? v >= bv : v > bv;
                  else
                    better = last ? v <= bv : v < bv;
                  if (better) {
                    best = j;
                    bv = v;
                  }
                }
                py[o * inner + i] = best;
              }
            return Status::ok();
          });
        });
  };
}

}  // namespace opforge::ops
