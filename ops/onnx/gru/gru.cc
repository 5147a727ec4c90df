// ONNX GRU (opsets 7-22): a gated recurrent unit layer, forward, reverse or bidirectional.
// Gates z, r, h (W, R, B in that order):
//   z = f(X W_z + H R_z + Wb_z + Rb_z)
//   r = f(X W_r + H R_r + Wb_r + Rb_r)
//   h = g(X W_h + (r * H) R_h + Rb_h + Wb_h)       linear_before_reset = 0
//   h = g(X W_h + r * (H R_h + Rb_h) + Wb_h)       linear_before_reset = 1
//   H' = (1 - z) * h + z * H
// Shapes, activations, clip, layout and sequence_lens as common/recurrent.h describes; the
// reference is rnnReference (sums in double).
#include "../common/recurrent.h"

namespace opforge::ops {
OPFORGE_OP(GRU, "ai.onnx::GRU")
    .kind("recurrent")
    .doc("Gated recurrent unit layer (ONNX GRU).")
    .input("X", "[seq, batch, input] (layout 1: [batch, seq, input])")
    .input("W", "[dirs, 3 * hidden, input], gates z, r, h")
    .input("R", "[dirs, 3 * hidden, hidden]")
    .optionalInput("B", "[dirs, 6 * hidden]: W's biases, then R's")
    .optionalInput("sequence_lens", "INT32/INT64 [batch]")
    .optionalInput("initial_h", "[dirs, batch, hidden]")
    .optionalOutput("Y", "[seq, dirs, batch, hidden]")
    .optionalOutput("Y_h", "[dirs, batch, hidden]")
    .with(rnnCommonAttrs)
    .attr<int64_t>("linear_before_reset", int64_t{0}, "1: apply the reset gate after R_h's product")
    .with(onnxOutputsAttr)
    .check([](const AttrMap& a) -> Status { return rnnConfig(a, RnnCell::kGru).status(); })
    .shape([](ShapeContext& c) { return rnnShape(c, RnnCell::kGru); })
    .cpu([](KernelContext& k, std::span<const Tensor> in, std::span<const Tensor> out) {
      return rnnReference(k.attrs(), RnnCell::kGru, in, out);
    });
}  // namespace opforge::ops
