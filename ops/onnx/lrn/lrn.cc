// ONNX LRN: local response normalization across channels (axis 1).
//   square_sum[n, c, ...] = sum of X[n, c', ...]^2 over c' in [c - floor((size - 1) / 2),
//                           c + ceil((size - 1) / 2)] (channels outside [0, C) left out)
//   Y = X / (bias + alpha / size * square_sum)^beta
// Sums and powers in double.
#include <cmath>

#include "../common/util.h"

namespace opforge::ops {
OPFORGE_OP(LRN, "ai.onnx::LRN")
    .doc("Local response normalization across channels.")
    .input("X", "[N, C, D1, ...]")
    .output("Y")
    .attr<double>("alpha", 1e-4)
    .attr<double>("beta", 0.75)
    .attr<double>("bias", 1.0)
    .attr<int64_t>("size", "the number of channels summed over (required, >= 1)")
    .check([](const AttrMap& a) -> Status {
      if (a.get<int64_t>("size") < 1)
        return Status::invalid("size must be at least 1, got " +
                               std::to_string(a.get<int64_t>("size")));
      for (const char* n : {"alpha", "beta", "bias"})
        if (!std::isfinite(a.get<double>(n)))
          return Status::invalid(std::string(n) + " must be finite");
      return Status::ok();
    })
    .shape([](ShapeContext& c) -> Result<SymDesc> {
      SymDesc x = c.input(0);
      OPFORGE_RETURN_IF_ERROR(checkType(c, "input 'X'", x.dtype, kFloats));
      if (x.rank() < 2)
        return c.error("input 'X' must have rank >= 2 (N, C, ...), got " + toString(x.dims));
      return x.like();
    })
    .cpu([](KernelContext& k, std::span<const Tensor> in, std::span<const Tensor> out) -> Status {
      const Tensor& x = in[0];
      const int64_t n = x.desc.dims[0], ch = x.desc.dims[1],
                    sp = prodOf(x.desc.dims, 2, x.desc.rank());
      const int64_t size = k.attr<int64_t>("size");
      const double alpha = k.attr<double>("alpha"), beta = k.attr<double>("beta"),
                   bias = k.attr<double>("bias");
      const int64_t lo = (size - 1) / 2, hi = size - 1 - lo;  // floor and ceil of (size - 1) / 2
      return visitTypes<kFloats>(x.desc.dtype, "LRN", [&](auto num) -> Status {
        using N = decltype(num);
        using C = typename N::C;
        const auto* px = ptrOf<N>(x);
        auto* py = mutPtr<N>(out[0]);
        for (int64_t b = 0; b < n; ++b)
          for (int64_t c = 0; c < ch; ++c)
            for (int64_t i = 0; i < sp; ++i) {
              double sum = 0;
              for (int64_t j = std::max<int64_t>(c - lo, 0); j <= std::min(c + hi, ch - 1); ++j) {
                const double v = N::load(px[(b * ch + j) * sp + i]);
                sum += v * v;
              }
              const int64_t at = (b * ch + c) * sp + i;
              const double d = std::pow(bias + alpha / static_cast<double>(size) * sum, beta);
              py[at] = N::store(static_cast<C>(static_cast<double>(N::load(px[at])) / d));
            }
        return Status::ok();
      });
    });
}  // namespace opforge::ops
