// ONNX LSTM (opsets 7-22): a long short-term memory layer, forward, reverse or bidirectional.
// Gates i, o, f, c (W, R, B in that order), peepholes P (i, o, f):
//   i = f(X W_i + H R_i + P_i * C + Wb_i + Rb_i)    (input_forget = 1: i = 1 - f)
//   f = f(X W_f + H R_f + P_f * C + Wb_f + Rb_f)
//   c = g(X W_c + H R_c + Wb_c + Rb_c)
//   C' = f * C + i * c
//   o = f(X W_o + H R_o + P_o * C' + Wb_o + Rb_o)
//   H' = o * h(C')
// Shapes, activations, clip, layout and sequence_lens as common/recurrent.h describes; the
// reference is rnnReference (sums in double).
#include "../common/recurrent.h"

namespace opforge::ops {
OPFORGE_OP(LSTM, "ai.onnx::LSTM")
    .kind("recurrent")
    .doc("Long short-term memory layer (ONNX LSTM).")
    .input("X", "[seq, batch, input] (layout 1: [batch, seq, input])")
    .input("W", "[dirs, 4 * hidden, input], gates i, o, f, c")
    .input("R", "[dirs, 4 * hidden, hidden]")
    .optionalInput("B", "[dirs, 8 * hidden]: W's biases, then R's")
    .optionalInput("sequence_lens", "INT32/INT64 [batch]")
    .optionalInput("initial_h", "[dirs, batch, hidden]")
    .optionalInput("initial_c", "[dirs, batch, hidden]")
    .optionalInput("P", "[dirs, 3 * hidden]: peepholes i, o, f")
    .optionalOutput("Y", "[seq, dirs, batch, hidden]")
    .optionalOutput("Y_h", "[dirs, batch, hidden]")
    .optionalOutput("Y_c", "[dirs, batch, hidden]")
    .with(rnnCommonAttrs)
    .attr<int64_t>("input_forget", int64_t{0}, "1: couple the input and forget gates")
    .with(onnxOutputsAttr)
    .check([](const AttrMap& a) -> Status { return rnnConfig(a, RnnCell::kLstm).status(); })
    .shape([](ShapeContext& c) { return rnnShape(c, RnnCell::kLstm); })
    .cpu([](KernelContext& k, std::span<const Tensor> in, std::span<const Tensor> out) {
      return rnnReference(k.attrs(), RnnCell::kLstm, in, out);
    });
}  // namespace opforge::ops
