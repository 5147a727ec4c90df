// ONNX LayerNormalization (opset 17): normalises over the axes [axis, rank) —
// Y = (X - mean) / sqrt(var + epsilon) * Scale + B, with Scale and B broadcast to X[axis:].
// Optional outputs Mean and InvStdDev have X's shape with dims [axis:] set to 1. Statistics are
// computed in double.
#include "layernormalization.h"

#include "../common/combos.h"
#include "../common/util.h"

namespace opforge::ops {
Status layerNormReference(int64_t axis_attr, double eps, std::span<const Tensor> in,
                          std::span<const Tensor> out) {
  const Tensor& x = in[0];
  const int r = x.desc.rank();
  const int axis = wrapAxis(axis_attr, r);
  const int64_t rows = prodOf(x.desc.dims, 0, axis), n = prodOf(x.desc.dims, axis, r);
  const std::vector<int64_t> norm(x.desc.dims.begin() + axis, x.desc.dims.end());
  // Offsets of Scale and B for each position of a normalized row.
  auto rowOffsets = [&](const Tensor& p) {
    std::vector<int64_t> off(static_cast<size_t>(n));
    forEachRun(norm, {broadcastStrides(p.desc.dims, norm)},
               [&](int64_t o, const int64_t* b, int64_t len, const int64_t* st) {
                 for (int64_t i = 0; i < len; ++i) off[o + i] = b[0] + i * st[0];
               });
    return off;
  };
  const auto soff = rowOffsets(in[1]);
  const bool has_b = hasIn(in, 2);
  const auto boff = has_b ? rowOffsets(in[2]) : std::vector<int64_t>{};
  return visitTypes<kFloats>(x.desc.dtype, "LayerNormalization", [&](auto num) -> Status {
    using N = decltype(num);
    using C = typename N::C;
    const auto* px = ptrOf<N>(x);
    const auto* ps = ptrOf<N>(in[1]);
    const auto* pb = has_b ? ptrOf<N>(in[2]) : nullptr;
    auto* py = mutPtr<N>(out[0]);
    for (int64_t row = 0; row < rows; ++row) {
      const auto* xr = px + row * n;
      double mean = 0, var = 0;
      for (int64_t i = 0; i < n; ++i) mean += N::load(xr[i]);
      mean /= static_cast<double>(n);
      for (int64_t i = 0; i < n; ++i) {
        const double d = N::load(xr[i]) - mean;
        var += d * d;
      }
      var /= static_cast<double>(n);
      const double inv = 1.0 / std::sqrt(var + eps);
      for (int64_t i = 0; i < n; ++i) {
        double v = (N::load(xr[i]) - mean) * inv * N::load(ps[soff[i]]);
        if (pb) v += N::load(pb[boff[i]]);
        py[row * n + i] = N::store(static_cast<C>(v));
      }
      if (out.size() > 1 && out[1].numel() > 0)
        mutPtr<N>(out[1])[row] = N::store(static_cast<C>(mean));
      if (out.size() > 2 && out[2].numel() > 0)
        mutPtr<N>(out[2])[row] = N::store(static_cast<C>(inv));
    }
    return Status::ok();
  });
}

OPFORGE_OP(LayerNormalization, "ai.onnx::LayerNormalization")
    .kind("normalization")
    .doc("Layer normalization over the trailing axes from `axis`.")
    .combos(comboTypes(kFloats))
    .input("X")
    .input("Scale")
    .optionalInput("B")
    .output("Y")
    .optionalOutput("Mean")
    .optionalOutput("InvStdDev")
    .attr<int64_t>("axis", int64_t{-1})
    .attr<double>("epsilon", 1e-5)
    .attr<int64_t>("stash_type", int64_t{1}, "1: statistics in float (opforge uses double)")
    .with(onnxOutputsAttr)
    .shape([](ShapeContext& c) -> Result<std::vector<SymDesc>> {
      SymDesc x = c.input(0);
      OPFORGE_RETURN_IF_ERROR(checkType(c, "input 'X'", x.dtype, kFloats));
      if (x.rank() == 0) return c.error("input 'X' must have rank >= 1");
      OPFORGE_ASSIGN_OR_RETURN(int axis, normAxis(c, c.attr<int64_t>("axis"), x.rank()));
      std::vector<DimExpr> norm(x.dims.begin() + axis, x.dims.end());
      for (int i = 1; i <= 2; ++i) {
        if (!c.hasInput(i)) continue;
        SymDesc p = c.input(i);
        const char* nm = i == 1 ? "Scale" : "B";
        if (p.dtype != x.dtype)
          return c.error(std::string("input '") + nm + "' has type " + dtypeName(p.dtype) +
                         "; X has " + dtypeName(x.dtype));
        OPFORGE_ASSIGN_OR_RETURN(auto b, broadcastShapes(c, norm, p.dims));
        if (b.size() != norm.size())
          return c.error(std::string("input '") + nm + "' " + toString(p.dims) +
                         " does not broadcast to the normalized shape " + toString(norm));
      }
      SymDesc stat = x.like();
      for (int a = axis; a < x.rank(); ++a) stat.dims[a] = 1;
      // Mean and InvStdDev are empty tensors when the ONNX node does not list them.
      const int64_t asked = c.attr<int64_t>("_onnx_num_outputs");
      std::vector<SymDesc> out{x.like(), stat, stat};
      for (int i = 1; i < 3; ++i)
        if (asked > 0 && asked <= i) out[i].dims = {0};
      return out;
    })
    .cpu([](KernelContext& k, std::span<const Tensor> in, std::span<const Tensor> out) {
      return layerNormReference(k.attr<int64_t>("axis"), k.attr<double>("epsilon"), in, out);
    });
}  // namespace opforge::ops
