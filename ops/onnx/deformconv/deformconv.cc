// ONNX DeformConv (opset 19): 2-D deformable convolution. Each kernel tap samples the input at its
// regular position plus a learned offset (offset [N, offset_group * 2 * kH * kW, oH, oW], (dh, dw)
// per tap), bilinearly with zeros outside the image, scaled by the optional mask
// [N, offset_group * kH * kW, oH, oW]; input channels are split into `group` groups (as Conv) and
// `offset_group` offset groups. oH = floor((H + pads - dilated kernel) / stride) + 1, and the
// offset's spatial size must equal it. Float types; sums in double (deformconv.h).
#include "deformconv.h"

#include "../common/util.h"

namespace opforge::ops {
namespace {

std::vector<int64_t> listOr(const AttrMap& a, const char* n, size_t count, int64_t dflt) {
  return a.has(n) ? a.get<std::vector<int64_t>>(n) : std::vector<int64_t>(count, dflt);
}

DeformGeom geomOf(const AttrMap& a, std::span<const TensorDesc> in) {
  DeformGeom g{};
  g.n = in[0].dims[0], g.ic = in[0].dims[1], g.ih = in[0].dims[2], g.iw = in[0].dims[3];
  g.oc = in[1].dims[0], g.kh = in[1].dims[2], g.kw = in[1].dims[3];
  g.oh = in[2].dims[2], g.ow = in[2].dims[3];
  g.group = a.get<int64_t>("group");
  g.offset_group = a.get<int64_t>("offset_group");
  const auto s = listOr(a, "strides", 2, 1), d = listOr(a, "dilations", 2, 1),
             p = listOr(a, "pads", 4, 0);
  g.sh = s[0], g.sw = s[1], g.dh = d[0], g.dw = d[1], g.ph = p[0], g.pw = p[1];
  g.has_bias = in.size() > 3 && in[3].dtype != DataType::kUndefined;
  g.has_mask = in.size() > 4 && in[4].dtype != DataType::kUndefined;
  return g;
}

}  // namespace

OPFORGE_OP(DeformConv, "ai.onnx::DeformConv")
    .kind("conv")
    .doc("2-D deformable convolution (learned sampling offsets, optional mask).")
    .input("X", "[N, C, H, W]")
    .input("W", "[oC, C / group, kH, kW]")
    .input("offset", "[N, offset_group * 2 * kH * kW, oH, oW]")
    .optionalInput("B", "[oC]")
    .optionalInput("mask", "[N, offset_group * kH * kW, oH, oW]")
    .output("Y", "[N, oC, oH, oW]")
    .optionalAttr<std::vector<int64_t>>("dilations", "2 values, >= 1; default 1")
    .attr<int64_t>("group", int64_t{1}, ">= 1, divides C and oC")
    .optionalAttr<std::vector<int64_t>>("kernel_shape", "2 values; default W's")
    .attr<int64_t>("offset_group", int64_t{1}, ">= 1, divides C")
    .optionalAttr<std::vector<int64_t>>("pads", "4 values (begin h, w, end h, w), >= 0")
    .optionalAttr<std::vector<int64_t>>("strides", "2 values, >= 1; default 1")
    .check([](const AttrMap& a) -> Status {
      for (const char* n : {"group", "offset_group"})
        if (a.get<int64_t>(n) < 1 || a.get<int64_t>(n) > std::numeric_limits<int32_t>::max())
          return Status::invalid(std::string(n) + " must be in [1, 2^31 - 1], got " +
                                 std::to_string(a.get<int64_t>(n)));
      struct L {
        const char* name;
        size_t count;
        int64_t lo;
      };
      for (const L& l :
           {L{"dilations", 2, 1}, L{"strides", 2, 1}, L{"pads", 4, 0}, L{"kernel_shape", 2, 1}}) {
        if (!a.has(l.name)) continue;
        const auto v = a.get<std::vector<int64_t>>(l.name);
        if (v.size() != l.count)
          return Status::invalid(std::string(l.name) + " must have " + std::to_string(l.count) +
                                 " values (DeformConv is 2-D), got " + std::to_string(v.size()));
        for (int64_t x : v)
          if (x < l.lo || x > std::numeric_limits<int32_t>::max())
            return Status::invalid(std::string(l.name) + " must be in [" + std::to_string(l.lo) +
                                   ", 2^31 - 1], got " + std::to_string(x));
      }
      return Status::ok();
    })
    .shape([](ShapeContext& c) -> Result<SymDesc> {
      SymDesc x = c.input(0), w = c.input(1), off = c.input(2);
      OPFORGE_RETURN_IF_ERROR(checkType(c, "input 'X'", x.dtype, kFloats));
      for (int i = 1; i < 5; ++i)
        if (c.hasInput(i) && c.input(i).dtype != x.dtype)
          return c.error("input " + std::to_string(i) + " must have X's type " +
                         dtypeName(x.dtype) + ", got " + dtypeName(c.input(i).dtype));
      if (x.rank() != 4)
        return c.error("input 'X' must be [N, C, H, W] (DeformConv is 2-D), got " +
                       toString(x.dims));
      if (w.rank() != 4) return c.error("input 'W' must have rank 4, got " + toString(w.dims));
      if (off.rank() != 4)
        return c.error("input 'offset' must have rank 4, got " + toString(off.dims));
      const int64_t group = c.attr<int64_t>("group"), og = c.attr<int64_t>("offset_group");
      if (c.attrs().has("kernel_shape")) {
        const auto k = c.attr<std::vector<int64_t>>("kernel_shape");
        OPFORGE_RETURN_IF_ERROR(
            requireEq(c, w.dim(2), k[0], "'kernel_shape' must match W (dim 2)"));
        OPFORGE_RETURN_IF_ERROR(
            requireEq(c, w.dim(3), k[1], "'kernel_shape' must match W (dim 3)"));
      }
      OPFORGE_RETURN_IF_ERROR(requireEq(c, w.dim(1) * group, x.dim(1),
                                        "W's dim 1 times group must equal X's channels"));
      if (w.dim(0).isConst() && w.dim(0).constValue() % group != 0)
        return c.error("W's output channels (" + w.dim(0).toString() +
                       ") are not a multiple of group " + std::to_string(group));
      if (x.dim(1).isConst() && x.dim(1).constValue() % og != 0)
        return c.error("X's channels (" + x.dim(1).toString() +
                       ") are not a multiple of offset_group " + std::to_string(og));
      if (!w.dim(2).isConst() || !w.dim(3).isConst())
        return c.error(
            "the kernel size (W's dims 2 and 3) must be known when the network is built");
      const int64_t kh = w.dim(2).constValue(), kw = w.dim(3).constValue();
      OPFORGE_RETURN_IF_ERROR(requireEq(c, off.dim(0), x.dim(0), "'offset' dim 0 must be N"));
      OPFORGE_RETURN_IF_ERROR(requireEq(c, off.dim(1), DimExpr(og) * 2 * kh * kw,
                                        "'offset' dim 1 must be offset_group * 2 * kH * kW"));
      const auto s = listOr(c.attrs(), "strides", 2, 1), d = listOr(c.attrs(), "dilations", 2, 1),
                 p = listOr(c.attrs(), "pads", 4, 0);
      std::vector<DimExpr> out = {x.dim(0), w.dim(0)};
      for (int a = 0; a < 2; ++a) {
        // In DimExpr arithmetic, which does not wrap: a dilation of 2^31 - 1 times a kernel of
        // 2^40 taps is past int64.
        const DimExpr span = DimExpr(d[a]) * ((a == 0 ? kh : kw) - 1) + 1;
        const DimExpr padded = x.dim(2 + a) + p[a] + p[a + 2] - span;
        if (padded.isConst() && padded.constValue() < 0)
          return c.error("the dilated kernel (" + span.toString() +
                         ") is larger than the padded input along axis " + std::to_string(2 + a));
        c.require(
            DimExpr(0), DimAssertion::Op::kLe, padded,
            "the dilated kernel must fit the padded input (axis " + std::to_string(2 + a) + ")");
        const DimExpr o = floorDiv(padded, s[a]) + 1;
        OPFORGE_RETURN_IF_ERROR(
            requireEq(c, off.dim(2 + a), o,
                      "'offset' dim " + std::to_string(2 + a) + " must equal the output size"));
        out.push_back(o);
      }
      if (c.hasInput(3)) {
        SymDesc b = c.input(3);
        if (b.rank() != 1) return c.error("input 'B' must be [oC], got " + toString(b.dims));
        OPFORGE_RETURN_IF_ERROR(requireEq(c, b.dim(0), w.dim(0), "input 'B' must be [oC]"));
      }
      if (c.hasInput(4)) {
        SymDesc m = c.input(4);
        if (m.rank() != 4) return c.error("input 'mask' must have rank 4, got " + toString(m.dims));
        OPFORGE_RETURN_IF_ERROR(requireEq(c, m.dim(0), x.dim(0), "'mask' dim 0 must be N"));
        OPFORGE_RETURN_IF_ERROR(requireEq(c, m.dim(1), DimExpr(og) * kh * kw,
                                          "'mask' dim 1 must be offset_group * kH * kW"));
        OPFORGE_RETURN_IF_ERROR(requireEq(c, m.dim(2), out[2], "'mask' dim 2 must be oH"));
        OPFORGE_RETURN_IF_ERROR(requireEq(c, m.dim(3), out[3], "'mask' dim 3 must be oW"));
      }
      return SymDesc::make(x.dtype, out);
    })
    .cpu([](KernelContext& k, std::span<const Tensor> in, std::span<const Tensor> out) -> Status {
      std::vector<TensorDesc> descs;
      for (const auto& t : in) descs.push_back(t.desc);
      const DeformGeom g = geomOf(k.attrs(), descs);
      return visitTypes<kFloats>(in[0].desc.dtype, "DeformConv", [&](auto num) -> Status {
        using N = decltype(num);
        using C = typename N::C;
        auto loader = [&](size_t i) {
          const auto* p = i < in.size() && hasIn(in, i) ? ptrOf<N>(in[i]) : nullptr;
          return [p](int64_t at) { return static_cast<double>(N::load(p[at])); };
        };
        const auto lx = loader(0), lw = loader(1), lo = loader(2), lb = loader(3), lm = loader(4);
        auto* py = mutPtr<N>(out[0]);
        int64_t at = 0;
        for (int64_t b = 0; b < g.n; ++b)
          for (int64_t o = 0; o < g.oc; ++o)
            for (int64_t i = 0; i < g.oh; ++i)
              for (int64_t j = 0; j < g.ow; ++j)
                py[at++] =
                    N::store(static_cast<C>(deformOutput(g, b, o, i, j, lx, lw, lo, lm, lb)));
        return Status::ok();
      });
    });
}  // namespace opforge::ops
