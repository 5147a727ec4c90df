// ONNX Mod: remainder with numpy broadcasting. fmod = 0: the sign of the divisor (Python's %,
// numpy's mod; floats since the spec of onnx 1.23 allows it: A - floor(A / B) * B, a zero result
// has the divisor's sign); fmod = 1: the sign of the dividend (C's fmod). An integer modulo by
// zero is a run-time error; a float one is NaN.
#include "../common/binary.h"
#include "../common/combos.h"

namespace opforge::ops {
namespace {
template <typename C>
C modOf(C x, C y, bool fmod) {
  if constexpr (std::is_floating_point_v<C>) {
    C r = std::fmod(x, y);
    if (fmod) return r;
    if (r != C(0)) {
      if ((r < C(0)) != (y < C(0))) r += y;
    } else {
      r = std::copysign(C(0), y);
    }
    return r;
  } else if constexpr (std::is_unsigned_v<C>) {
    return static_cast<C>(x % y);
  } else {
    if (y == C(-1)) return C(0);  // no INT_MIN % -1 trap
    C r = static_cast<C>(x % y);
    if (!fmod && r != 0 && ((r < 0) != (y < 0))) r = static_cast<C>(r + y);
    return r;
  }
}
}  // namespace

OPFORGE_OP(Mod, "ai.onnx::Mod")
    .doc("Elementwise remainder of A / B with numpy broadcasting.")
    .combos(comboTypes(kNumeric))
    .valueInput("A")
    .valueInput("B")
    .output("C")
    .attr<int64_t>("fmod", int64_t{0},
                   "0: sign of the divisor (A - floor(A / B) * B); 1: sign of the dividend")
    .shape([](ShapeContext& c) -> Result<SymDesc> {
      SymDesc a = c.input(0), b = c.input(1);
      if (a.dtype != b.dtype)
        return c.error(std::string("inputs 'A' and 'B' must have one type, got ") +
                       dtypeName(a.dtype) + " and " + dtypeName(b.dtype));
      OPFORGE_RETURN_IF_ERROR(checkType(c, "input 'A'", a.dtype, kNumeric));
      const int64_t fmod = c.attr<int64_t>("fmod");
      if (fmod != 0 && fmod != 1)
        return c.error("attribute 'fmod' must be 0 or 1, got " + std::to_string(fmod));
      OPFORGE_ASSIGN_OR_RETURN(auto dims, broadcastShapes(c, a.dims, b.dims));
      // Shape values (TorchScript's F.pad export: pads = (-L) mod k): constants by the kernel's
      // rule; a symbolic A with a positive constant B and fmod = 0 as A - floor(A / B) * B.
      if (dims.size() <= 1 && isIntIndex(a.dtype)) {
        auto va = c.value(0), vb = c.value(1);
        if (va && vb)
          if (auto v = broadcastValues(
                  *va, *vb, [fmod](const DimExpr& x, const DimExpr& y) -> std::optional<DimExpr> {
                    if (!y.isConst() || y.constValue() == 0) return std::nullopt;
                    if (x.isConst()) return DimExpr(modOf(x.constValue(), y.constValue(), fmod));
                    if (fmod != 0 || y.constValue() < 0) return std::nullopt;
                    return x - floorDiv(x, y.constValue()) * y.constValue();
                  }))
            c.setValue(0, std::move(*v));
      }
      return SymDesc::make(a.dtype, std::move(dims));
    })
    .cpu([](KernelContext& k, std::span<const Tensor> in, std::span<const Tensor> out) -> Status {
      const bool fmod = k.attr<int64_t>("fmod") != 0;
      return visitTypes<kNumeric>(in[0].desc.dtype, "Mod", [&](auto num) -> Status {
        using N = decltype(num);
        using C = typename N::C;
        if constexpr (std::is_integral_v<C>) {
          const auto* pb = ptrOf<N>(in[1]);
          for (int64_t i = 0; i < in[1].numel(); ++i)
            if (pb[i] == 0)
              return Status::runtime("Mod: input 'B' holds 0 at position " + std::to_string(i) +
                                     " (integer modulo by zero)");
        }
        broadcastBinary<N, N, N>(in[0], in[1], out[0],
                                 [fmod](C x, C y) { return modOf(x, y, fmod); });
        return Status::ok();
      });
    })
    .elementwise();
}  // namespace opforge::ops
