// ONNX RNN (opsets 7-22): a simple recurrent layer, forward, reverse or bidirectional:
//   H' = f(X W^T + H R^T + Wb + Rb)
// Shapes, activations, clip, layout and sequence_lens as common/recurrent.h describes; the
// reference is rnnReference (sums in double).
#include "../common/recurrent.h"

namespace opforge::ops {
OPFORGE_OP(RNN, "ai.onnx::RNN")
    .kind("recurrent")
    .doc("Simple recurrent layer (ONNX RNN).")
    .input("X", "[seq, batch, input] (layout 1: [batch, seq, input])")
    .input("W", "[dirs, hidden, input]")
    .input("R", "[dirs, hidden, hidden]")
    .optionalInput("B", "[dirs, 2 * hidden]: W's bias, then R's")
    .optionalInput("sequence_lens", "INT32/INT64 [batch]")
    .optionalInput("initial_h", "[dirs, batch, hidden]")
    .optionalOutput("Y", "[seq, dirs, batch, hidden]")
    .optionalOutput("Y_h", "[dirs, batch, hidden]")
    .with(rnnCommonAttrs)
    .with(onnxOutputsAttr)
    .check([](const AttrMap& a) -> Status { return rnnConfig(a, RnnCell::kRnn).status(); })
    .shape([](ShapeContext& c) { return rnnShape(c, RnnCell::kRnn); })
    .cpu([](KernelContext& k, std::span<const Tensor> in, std::span<const Tensor> out) {
      return rnnReference(k.attrs(), RnnCell::kRnn, in, out);
    });
}  // namespace opforge::ops
