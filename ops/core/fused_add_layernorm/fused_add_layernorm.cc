// opforge::FusedAddLayerNorm — a residual add and LayerNormalization in one layer:
//   Y = LayerNormalization(X + R)   over the axes [axis, rank), Scale and B broadcast over them
//   Sum = X + R                      when sum_output is 1 (a pre-LN transformer's residual stream,
//                                    read again after the LayerNormalization), else empty
// X and R have one shape. Made by the add_layernorm_fusion graph pass from Add ->
// LayerNormalization (the statistics outputs unused); the node is named "<add>+<layernorm>". CPU
// reference: the two ops' own references one after the other (Add's sum stored in X's type, then
// LayerNormalization's), so the oracle is the unfused pair's and shares no code with the kernels.
#include <vector>

#include "../../onnx/add/add.h"
#include "../../onnx/common/combos.h"
#include "../../onnx/common/util.h"
#include "../../onnx/layernormalization/layernormalization.h"

namespace opforge::ops {

OPFORGE_OP(FusedAddLayerNorm, "opforge::FusedAddLayerNorm")
    .kind("normalization")
    .doc("LayerNormalization(X + R) in one layer (built by the add_layernorm_fusion pass).")
    .input("X")
    .input("R", "X's shape")
    .input("Scale")
    .optionalInput("B")
    .output("Y")
    .optionalOutput("Sum")
    .attr<int64_t>("axis", int64_t{-1})
    .attr<double>("epsilon", 1e-5)
    .attr<int64_t>("sum_output", int64_t{0}, "1: X + R is output Sum too; 0: Sum is empty")
    .shape([](ShapeContext& c) -> Result<std::vector<SymDesc>> {
      SymDesc x = c.input(0), res = c.input(1);
      OPFORGE_RETURN_IF_ERROR(checkType(c, "input 'X'", x.dtype, kFloats));
      if (res.dtype != x.dtype || res.rank() != x.rank())
        return c.error("input 'R' " + dtypeName(res.dtype) + toString(res.dims) +
                       " must have X's type and shape");
      for (int a = 0; a < x.rank(); ++a)
        OPFORGE_RETURN_IF_ERROR(
            requireEq(c, res.dim(a), x.dim(a), "input 'R' must have X's shape"));
      if (x.rank() == 0) return c.error("input 'X' must have rank >= 1");
      OPFORGE_ASSIGN_OR_RETURN(int axis, normAxis(c, c.attr<int64_t>("axis"), x.rank()));
      std::vector<DimExpr> norm(x.dims.begin() + axis, x.dims.end());
      for (int i = 2; i <= 3; ++i) {
        if (!c.hasInput(i)) continue;
        SymDesc p = c.input(i);
        if (p.dtype != x.dtype) return c.error("Scale and B must have X's type");
        OPFORGE_ASSIGN_OR_RETURN(auto b, broadcastShapes(c, norm, p.dims));
        if (b.size() != norm.size())
          return c.error("Scale / B " + toString(p.dims) + " do not broadcast to " +
                         toString(norm));
      }
      const int64_t sum_output = c.attr<int64_t>("sum_output");
      if (sum_output != 0 && sum_output != 1)
        return c.error("attribute 'sum_output' must be 0 or 1, got " + std::to_string(sum_output));
      SymDesc sum = x.like();
      if (!sum_output) sum.dims = {0};
      return std::vector<SymDesc>{x.like(), sum};
    })
    .combos(comboTypes(kFloats))
    .cpu([](KernelContext& k, std::span<const Tensor> in, std::span<const Tensor> out) -> Status {
      // The unfused pair: S = Add(X, R) in X's type (into output Sum when asked), then
      // LayerNormalization(S, Scale, B).
      const Tensor& x = in[0];
      std::vector<double> buf;
      const bool out_sum = out.size() > 1 && out[1].numel() > 0;
      if (!out_sum) buf.resize((x.bytes() + sizeof(double) - 1) / sizeof(double));
      const Tensor sum{x.desc, out_sum ? out[1].data : static_cast<void*>(buf.data()),
                       Device::kCpu};
      OPFORGE_RETURN_IF_ERROR(addReference(x, in[1], sum));
      std::vector<Tensor> ln_in{sum, in[2]};
      if (hasIn(in, 3)) ln_in.push_back(in[3]);
      return layerNormReference(k.attr<int64_t>("axis"), k.attr<double>("epsilon"), ln_in,
                                out.first(1));
    });

}  // namespace opforge::ops
