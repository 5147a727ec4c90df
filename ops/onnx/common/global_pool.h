// global_pool.h — GlobalAveragePool / GlobalMaxPool: one value per (n, c) over all spatial axes.
#pragma once

#include "combos.h"
#include "util.h"

namespace opforge::ops {

template <bool kMax>
auto globalPoolOp(const char* name) {
  return [=](OpDef& d) {
    d.input("X")
        .output("Y")
        .combos(comboTypes(kFloats))
        // Channels-last: CUDA tactic 4 (the output [N, C, 1, ...] has the same bytes either way).
        .combo(Combo(comboTypes(kFloats), "HWC").tactics({4}))
        .shape([](ShapeContext& c) -> Result<SymDesc> {
          SymDesc x = c.input(0);
          OPFORGE_RETURN_IF_ERROR(checkType(c, "input 'X'", x.dtype, kFloats));
          if (x.rank() < 2)
            return c.error("input 'X' must have rank >= 2 (N, C, ...), got " + toString(x.dims));
          SymDesc y = x.like();
          for (int a = 2; a < y.rank(); ++a) y.dims[a] = 1;
          return y;
        })
        .cpu([name](KernelContext&, std::span<const Tensor> in,
                    std::span<const Tensor> out) -> Status {
          const Tensor& x = in[0];
          const int64_t c = x.desc.dims[1], planes = x.desc.dims[0] * c,
                        sp = prodOf(x.desc.dims, 2, x.desc.rank());
          // Plane (n, c) starts at n * sp * C + c and steps by C in channels-last storage.
          const bool hwc = x.desc.format == Format::kHWC && x.desc.rank() >= 3;
          const auto at = [&](int64_t p, int64_t i) {
            return hwc ? (p / c) * sp * c + p % c + i * c : p * sp + i;
          };
          return visitTypes<kFloats>(x.desc.dtype, name, [&](auto num) -> Status {
            using N = decltype(num);
            using C = typename N::C;
            const auto* px = ptrOf<N>(x);
            auto* py = mutPtr<N>(out[0]);
            for (int64_t p = 0; p < planes; ++p) {
              double acc = kMax ? -std::numeric_limits<double>::infinity() : 0.0;
              for (int64_t i = 0; i < sp; ++i) {
                const double v = N::load(px[at(p, i)]);
                if constexpr (kMax)
                  acc = (v > acc || std::isnan(v)) ? v : acc;
                else
                  acc += v;
              }
              if constexpr (!kMax)
                acc = sp ? acc / static_cast<double>(sp) : std::numeric_limits<double>::quiet_NaN();
              py[p] = N::store(static_cast<C>(acc));
            }
            return Status::ok();
          });
        });
  };
}

}  // namespace opforge::ops
