// ONNX GroupNormalization: the channels are split into num_groups groups; each (n, group) is
// normalised over its channels and spatial axes, then scaled and shifted. Opset 21 gives scale
// and bias per channel [C]; opset 18 gave them per group [num_groups] (told apart by size).
#include "../common/combos.h"
#include "../common/util.h"

namespace opforge::ops {
OPFORGE_OP(GroupNormalization, "ai.onnx::GroupNormalization")
    .kind("normalization")
    .doc("Group normalization.")
    .combos(comboTypes(kFloats))
    .input("X")
    .input("scale")
    .input("bias")
    .output("Y")
    .attr<double>("epsilon", 1e-5)
    .attr<int64_t>("num_groups")
    .attr<int64_t>("stash_type", int64_t{1}, "statistics in double regardless")
    .check([](const AttrMap& a) -> Status {
      if (a.get<int64_t>("num_groups") <= 0)
        return Status::invalid("attribute 'num_groups' must be positive, got " +
                               std::to_string(a.get<int64_t>("num_groups")));
      return Status::ok();
    })
    .shape([](ShapeContext& c) -> Result<SymDesc> {
      SymDesc x = c.input(0);
      OPFORGE_RETURN_IF_ERROR(checkType(c, "input 'X'", x.dtype, kFloats));
      if (x.rank() < 2)
        return c.error("input 'X' must have rank >= 2 (N, C, ...), got " + toString(x.dims));
      const int64_t g = c.attr<int64_t>("num_groups");
      if (x.dim(1).isConst() && x.dim(1).constValue() % g != 0)
        return c.error("the channel count " + x.dim(1).toString() +
                       " is not divisible by num_groups = " + std::to_string(g));
      for (int i = 1; i <= 2; ++i) {
        SymDesc p = c.input(i);
        if (p.dtype != x.dtype)
          return c.error("scale and bias must have X's type " + dtypeName(x.dtype));
        if (p.rank() != 1) return c.error("scale and bias must be 1-D, got " + toString(p.dims));
        if (!isConstEq(p.dim(0), g))
          OPFORGE_RETURN_IF_ERROR(requireEq(c, p.dim(0), x.dim(1),
                                            "scale and bias must have C or num_groups elements"));
      }
      return x.like();
    })
    .cpu([](KernelContext& k, std::span<const Tensor> in, std::span<const Tensor> out) -> Status {
      const Tensor& x = in[0];
      const double eps = k.attr<double>("epsilon");
      const int64_t g = k.attr<int64_t>("num_groups");
      const int64_t n = x.desc.dims[0], ch = x.desc.dims[1],
                    sp = prodOf(x.desc.dims, 2, x.desc.rank());
      if (ch % g != 0)
        return Status::invalid("channel count " + std::to_string(ch) +
                               " not divisible by num_groups");
      const int64_t cg = ch / g, len = cg * sp;
      const auto scale = readDoubles(in[1]), bias = readDoubles(in[2]);
      const bool per_channel = static_cast<int64_t>(scale.size()) == ch;
      return visitTypes<kFloats>(x.desc.dtype, "GroupNormalization", [&](auto num) -> Status {
        using N = decltype(num);
        using C = typename N::C;
        const auto* px = ptrOf<N>(x);
        auto* py = mutPtr<N>(out[0]);
        for (int64_t p = 0; p < n * g; ++p) {
          const auto* xp = px + p * len;
          double mean = 0, var = 0;
          for (int64_t i = 0; i < len; ++i) mean += N::load(xp[i]);
          mean /= static_cast<double>(len);
          for (int64_t i = 0; i < len; ++i)
            var += (N::load(xp[i]) - mean) * (N::load(xp[i]) - mean);
          var /= static_cast<double>(len);
          const double inv = 1.0 / std::sqrt(var + eps);
          for (int64_t i = 0; i < len; ++i) {
            const int64_t cidx = per_channel ? (p % g) * cg + i / sp : p % g;
            py[p * len + i] =
                N::store(static_cast<C>((N::load(xp[i]) - mean) * inv * scale[cidx] + bias[cidx]));
          }
        }
        return Status::ok();
      });
    });
}  // namespace opforge::ops
