// ONNX Clip: min(max(x, lo), hi). Opset 11+ takes lo and hi as optional scalar inputs; older
// models give attributes `min` and `max`. With lo > hi every value becomes hi (numpy's clip).
#include <algorithm>

#include "../common/combos.h"
#include "../common/util.h"

namespace opforge::ops {
OPFORGE_OP(Clip, "ai.onnx::Clip")
    .doc("Elementwise clamp of x to [min, max].")
    .combos(comboTypes(kNumeric))
    .input("input")
    .optionalInput("min", "scalar lower bound (default: the lowest value of the type)")
    .optionalInput("max", "scalar upper bound (default: the highest value of the type)")
    .output("output")
    .optionalAttr<double>("min", "opset < 11")
    .optionalAttr<double>("max", "opset < 11")
    .shape([](ShapeContext& c) -> Result<SymDesc> {
      SymDesc x = c.input(0);
      OPFORGE_RETURN_IF_ERROR(checkType(c, "input 'input'", x.dtype, kNumeric));
      for (int i = 1; i <= 2; ++i) {
        if (!c.hasInput(i)) continue;
        SymDesc b = c.input(i);
        if (b.dtype != x.dtype)
          return c.error(std::string("input '") + (i == 1 ? "min" : "max") +
                         "' must have the input's type " + dtypeName(x.dtype) + ", got " +
                         dtypeName(b.dtype));
        if (b.rank() > 1 || (b.rank() == 1 && !isConstEq(b.dim(0), 1)))
          return c.error(std::string("input '") + (i == 1 ? "min" : "max") +
                         "' must be a scalar, got shape " + toString(b.dims));
      }
      return x.like();
    })
    .cpu([](KernelContext& k, std::span<const Tensor> in, std::span<const Tensor> out) -> Status {
      return visitTypes<kNumeric>(in[0].desc.dtype, "Clip", [&](auto num) -> Status {
        using N = decltype(num);
        using C = typename N::C;
        C lo = std::numeric_limits<C>::lowest(), hi = std::numeric_limits<C>::max();
        if constexpr (std::is_floating_point_v<C>) {
          lo = -std::numeric_limits<C>::infinity();
          hi = std::numeric_limits<C>::infinity();
        }
        if (k.attrs().has("min")) lo = static_cast<C>(k.attr<double>("min"));
        if (k.attrs().has("max")) hi = static_cast<C>(k.attr<double>("max"));
        if (hasIn(in, 1) && in[1].numel() == 1) lo = N::load(ptrOf<N>(in[1])[0]);
        if (hasIn(in, 2) && in[2].numel() == 1) hi = N::load(ptrOf<N>(in[2])[0]);
        const auto* px = ptrOf<N>(in[0]);
        auto* py = mutPtr<N>(out[0]);
        for (int64_t i = 0; i < in[0].numel(); ++i) {
          C v = N::load(px[i]);
          if (v < lo) v = lo;
          if (v > hi) v = hi;
          py[i] = N::store(v);
        }
        return Status::ok();
      });
    })
    .elementwise();
}  // namespace opforge::ops
