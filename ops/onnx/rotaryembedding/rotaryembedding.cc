// ONNX RotaryEmbedding (opset 23): rotary position embedding of each head. The input is
// [B, H, S, D] or [B, S, H * D] (num_heads gives H); the first R = rotary_embedding_dim (default
// D) elements of each head are rotated as R / 2 pairs (interleaved: (2i, 2i + 1); otherwise
// (i, i + R / 2)) by the angle whose cosine and sine the caches hold:
//   y1 = cos * x1 - sin * x2,  y2 = sin * x1 + cos * x2,
// the rest copied. The caches are [max_position, R / 2] indexed by position_ids [B, S] (INT64,
// checked at run time against max_position), or [B, S, R / 2] without position_ids. Float types;
// products summed in double.
#include "rotaryembedding.h"

#include "../common/util.h"

namespace opforge::ops {
namespace {

RopeGeom geomOf(const AttrMap& a, const std::vector<int64_t>& x, const std::vector<int64_t>& cache,
                bool has_pos) {
  RopeGeom g{};
  g.four_d = x.size() == 4;
  g.b = x[0];
  if (g.four_d) {
    g.h = x[1], g.s = x[2], g.d = x[3];
  } else {
    g.s = x[1];
    g.h = a.get<int64_t>("num_heads");
    g.d = g.h > 0 ? x[2] / g.h : 0;
  }
  const int64_t r = a.get<int64_t>("rotary_embedding_dim");
  g.r = r > 0 ? r : g.d;
  g.interleaved = a.get<int64_t>("interleaved") != 0;
  g.has_pos = has_pos;
  g.max_pos = has_pos ? cache[0] : 0;
  return g;
}

}  // namespace

OPFORGE_OP(RotaryEmbedding, "ai.onnx::RotaryEmbedding")
    .doc("Rotary position embedding of each attention head.")
    .input("X", "[B, H, S, D] or [B, S, H * D]")
    .input("cos_cache", "[max_position, R / 2] with position_ids, else [B, S, R / 2]")
    .input("sin_cache", "as cos_cache")
    .optionalInput("position_ids", "INT64 [B, S]")
    .output("Y")
    .attr<int64_t>("interleaved", int64_t{0}, "1: pairs (2i, 2i + 1); 0: (i, i + R / 2)")
    .attr<int64_t>("num_heads", int64_t{0}, "H for a 3-D input")
    .attr<int64_t>("rotary_embedding_dim", int64_t{0}, "R, even; 0: the head size")
    .check([](const AttrMap& a) -> Status {
      const int64_t i = a.get<int64_t>("interleaved");
      if (i != 0 && i != 1)
        return Status::invalid("interleaved must be 0 or 1, got " + std::to_string(i));
      if (a.get<int64_t>("num_heads") < 0)
        return Status::invalid("num_heads must not be negative, got " +
                               std::to_string(a.get<int64_t>("num_heads")));
      const int64_t r = a.get<int64_t>("rotary_embedding_dim");
      if (r < 0 || r % 2 != 0)
        return Status::invalid("rotary_embedding_dim must be even and not negative, got " +
                               std::to_string(r));
      return Status::ok();
    })
    .shape([](ShapeContext& c) -> Result<SymDesc> {
      SymDesc x = c.input(0), cs = c.input(1), sn = c.input(2);
      OPFORGE_RETURN_IF_ERROR(checkType(c, "input 'X'", x.dtype, kFloats));
      if (cs.dtype != x.dtype || sn.dtype != x.dtype)
        return c.error("'cos_cache' and 'sin_cache' must have X's type " + dtypeName(x.dtype) +
                       ", got " + dtypeName(cs.dtype) + " and " + dtypeName(sn.dtype));
      if (x.rank() != 3 && x.rank() != 4)
        return c.error("input 'X' must have rank 3 [B, S, H * D] or 4 [B, H, S, D], got " +
                       toString(x.dims));
      const int64_t heads = c.attr<int64_t>("num_heads");
      DimExpr s, d;
      if (x.rank() == 4) {
        s = x.dim(2);
        d = x.dim(3);
      } else {
        if (heads == 0) return c.error("a 3-D input 'X' needs the attribute num_heads");
        s = x.dim(1);
        d = floorDiv(x.dim(2), heads);
        OPFORGE_RETURN_IF_ERROR(requireEq(
            c, d * heads, x.dim(2),
            "input 'X' dim 2 must be a multiple of num_heads (" + std::to_string(heads) + ")"));
      }
      const int64_t r = c.attr<int64_t>("rotary_embedding_dim");
      DimExpr rot = d;
      if (r > 0) {
        rot = r;
        if (d.isConst() && r > d.constValue())
          return c.error("rotary_embedding_dim " + std::to_string(r) +
                         " is larger than the head size " + d.toString());
        c.require(rot, DimAssertion::Op::kLe, d,
                  "rotary_embedding_dim must not exceed the head size");
      } else if (d.isConst() && d.constValue() % 2 != 0) {
        return c.error("the head size " + d.toString() + " must be even (it is the rotated size)");
      }
      const bool pos = c.hasInput(3);
      for (const SymDesc* cache : {&cs, &sn}) {
        const char* name = cache == &cs ? "cos_cache" : "sin_cache";
        if (cache->rank() != (pos ? 2 : 3))
          return c.error(std::string("input '") + name + "' must have rank " + (pos ? "2" : "3") +
                         (pos ? " [max_position, R / 2] with position_ids"
                              : " [B, S, R / 2] without position_ids") +
                         ", got " + toString(cache->dims));
        OPFORGE_RETURN_IF_ERROR(
            requireEq(c, cache->dim(-1), floorDiv(rot, 2),
                      std::string("input '") + name + "' must have R / 2 columns"));
        if (!pos) {
          OPFORGE_RETURN_IF_ERROR(requireEq(c, cache->dim(0), x.dim(0),
                                            std::string("input '") + name + "' dim 0 must be B"));
          OPFORGE_RETURN_IF_ERROR(
              requireEq(c, cache->dim(1), s, std::string("input '") + name + "' dim 1 must be S"));
        }
      }
      OPFORGE_RETURN_IF_ERROR(requireEq(c, sn.dim(0), cs.dim(0),
                                        "'sin_cache' and 'cos_cache' must have the same rows"));
      if (pos) {
        SymDesc p = c.input(3);
        if (p.dtype != DataType::kInt64)
          return c.error("input 'position_ids' must be INT64, got " + dtypeName(p.dtype));
        if (p.rank() != 2)
          return c.error("input 'position_ids' must be [B, S], got " + toString(p.dims));
        OPFORGE_RETURN_IF_ERROR(requireEq(c, p.dim(0), x.dim(0), "'position_ids' dim 0 must be B"));
        OPFORGE_RETURN_IF_ERROR(requireEq(c, p.dim(1), s, "'position_ids' dim 1 must be S"));
      }
      return x.like();
    })
    .cpu([](KernelContext& k, std::span<const Tensor> in, std::span<const Tensor> out) -> Status {
      const bool has_pos = hasIn(in, 3);
      const RopeGeom g = geomOf(k.attrs(), in[0].desc.dims, in[1].desc.dims, has_pos);
      const auto* pid = has_pos ? static_cast<const int64_t*>(in[3].data) : nullptr;
      if (has_pos)
        for (int64_t i = 0; i < g.b * g.s; ++i)
          if (pid[i] < 0 || pid[i] >= g.max_pos)
            return Status::outOfRange("input 'position_ids' holds " + std::to_string(pid[i]) +
                                      " at position " + std::to_string(i) + ", outside [0, " +
                                      std::to_string(g.max_pos - 1) + "] (the caches' rows)");
      const int64_t half = g.r / 2;
      return visitTypes<kFloats>(in[0].desc.dtype, "RotaryEmbedding", [&](auto num) -> Status {
        using N = decltype(num);
        using C = typename N::C;
        const auto *px = ptrOf<N>(in[0]), *pc = ptrOf<N>(in[1]), *ps = ptrOf<N>(in[2]);
        auto* py = mutPtr<N>(out[0]);
        for (int64_t b = 0; b < g.b; ++b)
          for (int64_t s = 0; s < g.s; ++s) {
            const int64_t row = has_pos ? pid[b * g.s + s] : b * g.s + s;
            for (int64_t h = 0; h < g.h; ++h)
              for (int64_t d = 0; d < g.d; ++d) {
                const int64_t at = g.offset(b, s, h, d);
                if (d >= g.r) {
                  py[at] = px[at];
                  continue;
                }
                const RopeTap t = ropeTap(g, d);
                const double c = N::load(pc[row * half + t.i]), sn = N::load(ps[row * half + t.i]);
                const double v =
                    c * static_cast<double>(N::load(px[at])) +
                    t.sign * sn * static_cast<double>(N::load(px[g.offset(b, s, h, t.partner)]));
                py[at] = N::store(static_cast<C>(v));
              }
          }
        return Status::ok();
      });
    });
}  // namespace opforge::ops
