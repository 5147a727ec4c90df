// ONNX LpNormalization: Y = X / ||X||_p along `axis` (p = 1: the sum of |x|, p = 2: the Euclidean
// norm), in double; a line whose norm is 0 gives 0 (as the ONNX reference and test data).
#include <cmath>

#include "../common/util.h"

namespace opforge::ops {
OPFORGE_OP(LpNormalization, "ai.onnx::LpNormalization")
    .doc("Lp-normalization (p = 1 or 2) along an axis.")
    .input("input")
    .output("output")
    .attr<int64_t>("axis", int64_t{-1})
    .attr<int64_t>("p", int64_t{2}, "1 or 2")
    .check([](const AttrMap& a) -> Status {
      const int64_t p = a.get<int64_t>("p");
      if (p != 1 && p != 2) return Status::invalid("p must be 1 or 2, got " + std::to_string(p));
      return Status::ok();
    })
    .shape([](ShapeContext& c) -> Result<SymDesc> {
      SymDesc x = c.input(0);
      OPFORGE_RETURN_IF_ERROR(checkType(c, "input 'input'", x.dtype, kFloats));
      if (x.rank() == 0) return c.error("input 'input' must have rank >= 1");
      OPFORGE_RETURN_IF_ERROR(normAxis(c, c.attr<int64_t>("axis"), x.rank()).status());
      return x.like();
    })
    .cpu([](KernelContext& k, std::span<const Tensor> in, std::span<const Tensor> out) -> Status {
      const Tensor& x = in[0];
      const int r = x.desc.rank();
      const int axis = wrapAxis(k.attr<int64_t>("axis"), r);
      const bool l1 = k.attr<int64_t>("p") == 1;
      const int64_t outer = prodOf(x.desc.dims, 0, axis), n = x.desc.dims[axis],
                    inner = prodOf(x.desc.dims, axis + 1, r);
      return visitTypes<kFloats>(x.desc.dtype, "LpNormalization", [&](auto num) -> Status {
        using N = decltype(num);
        using C = typename N::C;
        const auto* px = ptrOf<N>(x);
        auto* py = mutPtr<N>(out[0]);
        for (int64_t o = 0; o < outer; ++o)
          for (int64_t i = 0; i < inner; ++i) {
            const int64_t base = o * n * inner + i;
            double sum = 0;
            for (int64_t j = 0; j < n; ++j) {
              const double v = N::load(px[base + j * inner]);
              sum += l1 ? std::fabs(v) : v * v;
            }
            const double norm = l1 ? sum : std::sqrt(sum);
            for (int64_t j = 0; j < n; ++j) {
              const double v = N::load(px[base + j * inner]);
              py[base + j * inner] = N::store(static_cast<C>(norm == 0 ? 0.0 : v / norm));
            }
          }
        return Status::ok();
      });
    });
}  // namespace opforge::ops
