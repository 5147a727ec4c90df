// ONNX Range: start, start + delta, ... while < limit (> limit for a negative delta):
// max(ceil((limit - start) / delta), 0) elements. The scalars must be known when the network is
// built; ranges may have a symbolic start or limit (a sequence length, also cast to float) with a
// constant (integral, for floats) delta.
#include <cmath>
#include <optional>
#include <type_traits>

#include "../common/util.h"

namespace opforge::ops {
namespace {

// A bound of a float Range as a dimension expression: a known number that is an integer, or the
// shape value of a size cast to float. nullopt otherwise.
std::optional<DimExpr> integralBound(const ShapeContext& c, int i) {
  if (const TensorValue* t = c.constant(i); t && t->desc.numel() == 1) {
    const double v = loadAsDouble(t->data.data(), t->desc.dtype, 0);
    if (v == std::floor(v) && std::fabs(v) < 9.0e15) return DimExpr(static_cast<int64_t>(v));
    return std::nullopt;
  }
  if (auto v = c.value(i); v && v->size() == 1) return (*v)[0];
  return std::nullopt;
}

// ceil((limit - start) / delta), at least 0, when start or limit is symbolic and delta a known
// integer.
std::optional<DimExpr> symbolicFloatCount(const ShapeContext& c) {
  auto s = integralBound(c, 0), l = integralBound(c, 1), d = integralBound(c, 2);
  if (!s || !l || !d || !d->isConst() || (s->isConst() && l->isConst())) return std::nullopt;
  const int64_t delta = d->constValue();
  if (delta > 0) return max(ceilDiv(*l - *s, delta), 0);
  if (delta < 0) return max(ceilDiv(*s - *l, -delta), 0);
  return std::nullopt;
}

}  // namespace

OPFORGE_OP(Range, "ai.onnx::Range")
    .doc("Arithmetic sequence.")
    .valueInput("start")
    .valueInput("limit")
    .valueInput("delta")
    .output("output")
    .shape([](ShapeContext& c) -> Result<SymDesc> {
      const DataType t = c.input(0).dtype;
      OPFORGE_RETURN_IF_ERROR(checkType(c, "input 'start'", t, kFloats | kSigned));
      for (int i = 0; i < 3; ++i) {
        if (c.input(i).dtype != t) return c.error("start, limit and delta must have one type");
        if (c.input(i).rank() > 1 || (c.input(i).rank() == 1 && !isConstEq(c.input(i).dim(0), 1)))
          return c.error("start, limit and delta must be scalars");
      }
      if (isIntIndex(t)) {
        auto s = c.value(0), l = c.value(1), d = c.value(2);
        if (s && l && d && s->size() == 1 && l->size() == 1 && d->size() == 1 &&
            (*d)[0].isConst()) {
          const int64_t delta = (*d)[0].constValue();
          if (delta == 0) return c.error("delta must not be 0");
          // ceil((limit - start) / delta), at least 0, in 128 bits: all three may be near INT64's
          // ends (fuzzer findings: the 64-bit form overflowed, undefined behaviour, and a
          // difference that did not fit in 64 bits fell back to doubles, one element short).
          const DimExpr diff = (*l)[0] - (*s)[0];
          std::optional<__int128> dfv;
          if ((*l)[0].isConst() && (*s)[0].isConst())
            dfv = static_cast<__int128>((*l)[0].constValue()) - (*s)[0].constValue();
          else if (diff.isConst())
            dfv = diff.constValue();
          if (dfv) {
            const __int128 df = *dfv;
            const __int128 dl = delta;
            __int128 n = dl > 0 ? (df + dl - 1) / dl : (-df - dl - 1) / -dl;
            if (n < 0) n = 0;
            if (n > static_cast<__int128>(kMaxElements))
              return c.error("the range has too many elements (limit 2^40)");
            return SymDesc::make(t, {static_cast<int64_t>(n)});
          }
          if (delta > 0) return SymDesc::make(t, {max(ceilDiv(diff, delta), 0)});
          return SymDesc::make(t, {max(ceilDiv((*s)[0] - (*l)[0], -delta), 0)});
        }
      }
      // Floats: start or limit may be a size cast to float (torch.arange(x.size(1), 0, -1.0)):
      // with an integral delta and integral other bounds the count is a dimension expression.
      if (auto n = symbolicFloatCount(c)) return SymDesc::make(t, {*n});
      OPFORGE_ASSIGN_OR_RETURN(auto s, needNumbers(c, 0, "start"));
      OPFORGE_ASSIGN_OR_RETURN(auto l, needNumbers(c, 1, "limit"));
      OPFORGE_ASSIGN_OR_RETURN(auto d, needNumbers(c, 2, "delta"));
      if (s.size() != 1 || l.size() != 1 || d.size() != 1)
        return c.error("start, limit and delta must be scalars");
      if (d[0] == 0) return c.error("delta must not be 0");
      const double n = std::ceil((l[0] - s[0]) / d[0]);
      if (!(n < 1e12)) return c.error("the range has too many elements");
      return SymDesc::make(t, {std::max<int64_t>(0, static_cast<int64_t>(n))});
    })
    .cpu([](KernelContext&, std::span<const Tensor> in, std::span<const Tensor> out) -> Status {
      return visitTypes<kFloats | kSigned>(out[0].desc.dtype, "Range", [&](auto num) -> Status {
        using N = decltype(num);
        using C = typename N::C;
        const C s = N::load(ptrOf<N>(in[0])[0]), d = N::load(ptrOf<N>(in[2])[0]);
        auto* py = mutPtr<N>(out[0]);
        for (int64_t i = 0; i < out[0].numel(); ++i) {
          if constexpr (std::is_integral_v<C>) {
            // start + i * delta fits (it lies between start and limit) where i * delta alone may
            // not (start near one end, delta near the other): two's complement arithmetic.
            using U = std::make_unsigned_t<C>;
            py[i] =
                N::store(static_cast<C>(static_cast<U>(s) + static_cast<U>(i) * static_cast<U>(d)));
          } else {
            py[i] = N::store(static_cast<C>(s + static_cast<C>(i) * d));
          }
        }
        return Status::ok();
      });
    });
}  // namespace opforge::ops
