// cumulative.h — CumSum / CumProd: a running sum or product along the axis given by the scalar
// input `axis`; `exclusive` leaves the current element out, `reverse` runs from the end. Floats
// accumulate in double.
#pragma once

#include "util.h"
#include "wrap.h"

namespace opforge::ops {

template <bool kProduct>
auto cumulativeOp(const char* name) {
  return [=](OpDef& d) {
    d.input("x")
        .input("axis", "INT32 or INT64 scalar")
        .output("y")
        .attr<int64_t>("exclusive", int64_t{0})
        .attr<int64_t>("reverse", int64_t{0})
        .shape([](ShapeContext& c) -> Result<SymDesc> {
          SymDesc x = c.input(0), a = c.input(1);
          OPFORGE_RETURN_IF_ERROR(checkType(c, "input 'x'", x.dtype, kNumeric));
          if (!isIntIndex(a.dtype))
            return c.error("input 'axis' must be INT32 or INT64, got " + dtypeName(a.dtype));
          if (a.rank() > 1 || (a.rank() == 1 && !isConstEq(a.dim(0), 1)))
            return c.error("input 'axis' must be a scalar, got shape " + toString(a.dims));
          if (x.rank() == 0) return c.error("input 'x' must have rank >= 1");
          return x.like();
        })
        .cpu([name](KernelContext& k, std::span<const Tensor> in,
                    std::span<const Tensor> out) -> Status {
          const Tensor& x = in[0];
          const int r = x.desc.rank();
          const int64_t given = readInts(in[1])[0];
          if (given < -r || given >= r)
            return Status::outOfRange("input 'axis' is " + std::to_string(given) + ", outside [" +
                                      std::to_string(-r) + ", " + std::to_string(r - 1) +
                                      "] for an input of rank " + std::to_string(r));
          const int axis = wrapAxis(given, r);
          const bool excl = k.attr<int64_t>("exclusive") != 0,
                     rev = k.attr<int64_t>("reverse") != 0;
          const int64_t outer = prodOf(x.desc.dims, 0, axis), n = x.desc.dims[axis],
                        inner = prodOf(x.desc.dims, axis + 1, r);
          return visitTypes<kNumeric>(x.desc.dtype, name, [&](auto num) -> Status {
            using N = decltype(num);
            using C = typename N::C;
            using Acc = std::conditional_t<std::is_floating_point_v<C>, double, C>;
            const auto* px = ptrOf<N>(x);
            auto* py = mutPtr<N>(out[0]);
            for (int64_t o = 0; o < outer; ++o)
              for (int64_t i = 0; i < inner; ++i) {
                Acc s = kProduct ? Acc(1) : Acc(0);
                for (int64_t t = 0; t < n; ++t) {
                  const int64_t j = rev ? n - 1 - t : t;
                  const int64_t at = (o * n + j) * inner + i;
                  const Acc v = static_cast<Acc>(N::load(px[at]));
                  if (!excl) s = static_cast<Acc>(kProduct ? wrapMul(s, v) : wrapAdd(s, v));
                  py[at] = N::store(static_cast<C>(s));
                  if (excl) s = static_cast<Acc>(kProduct ? wrapMul(s, v) : wrapAdd(s, v));
                }
              }
            return Status::ok();
          });
        });
  };
}

}  // namespace opforge::ops
