// opforge::FusedConv — Conv + bias + optional residual + activation in one layer:
//   Y = act(conv(X, W) + B + Z)
// with Conv's attributes (kernel_shape, strides, dilations, pads, auto_pad, group) and
// `activation` (none, relu, gelu, gelu_tanh, sigmoid, tanh, silu). Made by the conv_fusion graph
// pass from Conv -> [Add(residual)] -> [Relu/...] chains; its node is named "<conv>+<add>+<relu>".
// CPU reference: Conv's kernels (FP32 im2col + sgemm, else the double-accumulating loop), then
// Add's reference for the residual, then the activation in the compute type.
#include "../../onnx/add/add.h"
#include "../../onnx/common/activation.h"
#include "../../onnx/conv/conv_cpu.h"

namespace opforge::ops {

OPFORGE_OP(FusedConv, "opforge::FusedConv")
    .kind("conv")
    .doc(
        "Convolution with bias, residual add and activation fused (built by the conv_fusion pass).")
    .input("X", "(N, C, D1, ...)")
    .input("W", "(M, C / group, k1, ...)")
    .optionalInput("B", "(M)")
    .optionalInput("Z", "residual, Y's shape")
    .output("Y")
    .with(windowAttrs)
    .attr<int64_t>("group", int64_t{1})
    .attr<std::string>("activation", std::string("none"),
                       "none | relu | gelu | gelu_tanh | sigmoid | tanh | silu")
    .check([](const AttrMap& a) -> Status {
      // Checked here as well as in the shape rule: a plan's attributes are re-checked at load.
      if (a.get<int64_t>("group") < 1)
        return Status::invalid("attribute 'group' must be >= 1, got " +
                               std::to_string(a.get<int64_t>("group")));
      return parseAct(a.get<std::string>("activation")).status();
    })
    .shape([](ShapeContext& c) -> Result<SymDesc> {
      OPFORGE_ASSIGN_OR_RETURN(SymDesc y, convShape(c));
      if (c.hasInput(3)) {
        const SymDesc z = c.input(3);
        if (z.dtype != y.dtype || z.rank() != y.rank())
          return c.error("input 'Z' " + dtypeName(z.dtype) + toString(z.dims) +
                         " must have Y's type and shape " + dtypeName(y.dtype) + toString(y.dims));
        for (int a = 0; a < y.rank(); ++a)
          OPFORGE_RETURN_IF_ERROR(
              requireEq(c, z.dim(a), y.dim(a), "input 'Z' must have Y's shape"));
      }
      return y;
    })
    .combos("FP32|FP16|BF16|FP64")
    // Channels-last: only the CUDA tactics of hwcConvTactics() take it.
    .combo(Combo("FP32|FP16|BF16", "HWC").tactics(hwcConvTactics()))
    .cpu([](KernelContext& k, std::span<const Tensor> in, std::span<const Tensor> out) -> Status {
      OPFORGE_ASSIGN_OR_RETURN(ConvGeom g,
                               convGeom(k.attrs(), in[0].desc, in[1].desc, out[0].desc));
      OPFORGE_ASSIGN_OR_RETURN(Act act, parseAct(k.attr<std::string>("activation")));
      const Tensor* b = hasIn(in, 2) ? &in[2] : nullptr;
      const Tensor& y = out[0];
      if (y.numel() == 0) return Status::ok();
      OPFORGE_RETURN_IF_ERROR(convCpu(g, in[0], in[1], b, y, "FusedConv"));
      if (hasIn(in, 3)) OPFORGE_RETURN_IF_ERROR(addReference(y, in[3], y));  // the residual Add
      if (act == Act::kNone) return Status::ok();
      return visitTypes<kFloats>(y.desc.dtype, "FusedConv", [&](auto num) -> Status {
        using N = decltype(num);
        auto* py = mutPtr<N>(y);
        for (int64_t i = 0; i < y.numel(); ++i) py[i] = N::store(applyAct(N::load(py[i]), act));
        return Status::ok();
      });
    });

}  // namespace opforge::ops
