// ONNX LpPool: Y = (sum of |x|^p over each window)^(1 / p), padding contributing nothing; the
// window attributes as MaxPool's (kernel_shape, strides, pads, auto_pad, dilations and ceil_mode
// from opset 18). Sums and powers in double.
#include <cmath>

#include "../common/combos.h"
#include "../common/pooling.h"

namespace opforge::ops {
OPFORGE_OP(LpPool, "ai.onnx::LpPool")
    .kind("pooling")
    .doc("Lp pooling over N-D windows.")
    .combos(comboTypes(kFloats))
    .input("X")
    .output("Y")
    .with(windowAttrs)
    .attr<int64_t>("ceil_mode", int64_t{0})
    .attr<int64_t>("p", int64_t{2}, ">= 1")
    .check([](const AttrMap& a) -> Status {
      if (a.get<int64_t>("p") < 1)
        return Status::invalid("p must be at least 1, got " + std::to_string(a.get<int64_t>("p")));
      return Status::ok();
    })
    .shape([](ShapeContext& c) -> Result<SymDesc> { return poolShape(c, kFloats); })
    .cpu([](KernelContext& k, std::span<const Tensor> in, std::span<const Tensor> out) -> Status {
      const Tensor& x = in[0];
      OPFORGE_ASSIGN_OR_RETURN(Window w, poolWindow(k.attrs(), x.desc.rank()));
      const std::vector<int64_t> isz(x.desc.dims.begin() + 2, x.desc.dims.end());
      const std::vector<int64_t> osz(out[0].desc.dims.begin() + 2, out[0].desc.dims.end());
      resolvePads(w, isz);
      const double p = static_cast<double>(k.attr<int64_t>("p"));
      const int64_t planes = x.desc.dims[0] * x.desc.dims[1], ip = prodOf(isz, 0, w.nd),
                    op = prodOf(osz, 0, w.nd);
      return visitTypes<kFloats>(x.desc.dtype, "LpPool", [&](auto num) -> Status {
        using N = decltype(num);
        using C = typename N::C;
        const auto* px = ptrOf<N>(x);
        auto* py = mutPtr<N>(out[0]);
        for (int64_t q = 0; q < planes; ++q) {
          const auto* xp = px + q * ip;
          forEachPoolWindow(w, isz, osz, [&](int64_t o, const int64_t* taps, int64_t n, int64_t) {
            double sum = 0;
            for (int64_t t = 0; t < n; ++t)
              sum += std::pow(std::fabs(static_cast<double>(N::load(xp[taps[t]]))), p);
            py[q * op + o] = N::store(static_cast<C>(std::pow(sum, 1.0 / p)));
          });
        }
        return Status::ok();
      });
    });
}  // namespace opforge::ops
