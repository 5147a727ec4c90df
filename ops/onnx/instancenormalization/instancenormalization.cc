// ONNX InstanceNormalization: normalises each (n, c) plane over its spatial axes, then
// Y = normalized * scale[c] + B[c]. Statistics in double.
#include "../common/combos.h"
#include "../common/util.h"

namespace opforge::ops {
OPFORGE_OP(InstanceNormalization, "ai.onnx::InstanceNormalization")
    .kind("normalization")
    .doc("Instance normalization.")
    .combos(comboTypes(kFloats))
    .input("input")
    .input("scale")
    .input("B")
    .output("output")
    .attr<double>("epsilon", 1e-5)
    .shape([](ShapeContext& c) -> Result<SymDesc> {
      SymDesc x = c.input(0);
      OPFORGE_RETURN_IF_ERROR(checkType(c, "input 'input'", x.dtype, kFloats));
      if (x.rank() < 3)
        return c.error("input 'input' must have rank >= 3 (N, C, D1, ...), got " +
                       toString(x.dims));
      for (int i = 1; i <= 2; ++i) {
        SymDesc p = c.input(i);
        if (p.dtype != x.dtype)
          return c.error("scale and B must have the input's type " + dtypeName(x.dtype));
        if (p.rank() != 1) return c.error("scale and B must be 1-D [C], got " + toString(p.dims));
        OPFORGE_RETURN_IF_ERROR(requireEq(c, p.dim(0), x.dim(1),
                                          "scale and B must have C = dim 1 of the input elements"));
      }
      return x.like();
    })
    .cpu([](KernelContext& k, std::span<const Tensor> in, std::span<const Tensor> out) -> Status {
      const Tensor& x = in[0];
      const double eps = k.attr<double>("epsilon");
      const int64_t n = x.desc.dims[0], ch = x.desc.dims[1],
                    sp = prodOf(x.desc.dims, 2, x.desc.rank());
      const auto scale = readDoubles(in[1]), bias = readDoubles(in[2]);
      return visitTypes<kFloats>(x.desc.dtype, "InstanceNormalization", [&](auto num) -> Status {
        using N = decltype(num);
        using C = typename N::C;
        const auto* px = ptrOf<N>(x);
        auto* py = mutPtr<N>(out[0]);
        for (int64_t p = 0; p < n * ch; ++p) {
          const auto* xp = px + p * sp;
          double mean = 0, var = 0;
          for (int64_t i = 0; i < sp; ++i) mean += N::load(xp[i]);
          mean /= static_cast<double>(sp);
          for (int64_t i = 0; i < sp; ++i) var += (N::load(xp[i]) - mean) * (N::load(xp[i]) - mean);
          var /= static_cast<double>(sp);
          const double a = scale[p % ch] / std::sqrt(var + eps), b = bias[p % ch];
          for (int64_t i = 0; i < sp; ++i)
            py[p * sp + i] = N::store(static_cast<C>((N::load(xp[i]) - mean) * a + b));
        }
        return Status::ok();
      });
    });
}  // namespace opforge::ops
