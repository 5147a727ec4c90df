// ONNX CausalConvWithState (opset 27): a stateful causal depthwise 1-D convolution (the Concat +
// Conv + Slice of Mamba / Gated DeltaNet decoders) with an optional fused SiLU. input [B, C, L],
// weight [C, 1, K], optional bias [C] and past_state [B, C, K - 1] (zeros when absent); outputs
// output [B, C, L] and present_state [B, C, K - 1], the last K - 1 positions of
// concat(past_state, input) (causalconvwithstate.h). FP32, FP16, BF16 (ONNX's types) and FP64;
// the reference sums in double and rounds the convolution to the tensors' type before the
// activation, as ONNX's does.
#include "causalconvwithstate.h"

#include <cmath>

#include "../common/util.h"

namespace opforge::ops {

OPFORGE_OP(CausalConvWithState, "ai.onnx::CausalConvWithState")
    .doc("Stateful causal depthwise 1-D convolution with optional fused SiLU.")
    .input("input", "[batch_size, channels, length]")
    .input("weight", "[channels, 1, k]")
    .optionalInput("bias", "[channels]")
    .optionalInput("past_state", "[batch_size, channels, k - 1]; zeros when absent")
    .output("output", "[batch_size, channels, length]")
    .output("present_state", "[batch_size, channels, k - 1]")
    .attr<std::string>("activation", std::string("none"), "'none', 'silu' or 'swish' (= silu)")
    .check([](const AttrMap& a) -> Status {
      const std::string act = a.get<std::string>("activation");
      if (act != "none" && act != "silu" && act != "swish")
        return Status::invalid("attribute 'activation' must be 'none', 'silu' or 'swish', got '" +
                               act + "'");
      return Status::ok();
    })
    .shape([](ShapeContext& c) -> Result<std::vector<SymDesc>> {
      const SymDesc x = c.input(0), w = c.input(1);
      OPFORGE_RETURN_IF_ERROR(checkType(c, "input 'input'", x.dtype, kFloats));
      if (x.rank() != 3)
        return c.error("input 'input' must have rank 3 [batch_size, channels, length], got " +
                       toString(x.dims));
      auto sameType = [&](const SymDesc& d, const char* name) -> Status {
        if (d.dtype == x.dtype) return Status::ok();
        return c.error(std::string("input '") + name + "' has data type " + dtypeName(d.dtype) +
                       ", input 'input' " + dtypeName(x.dtype) + ": they must have one type");
      };
      OPFORGE_RETURN_IF_ERROR(sameType(w, "weight"));
      if (w.rank() != 3)
        return c.error("input 'weight' must have rank 3 [channels, 1, k], got " + toString(w.dims));
      OPFORGE_RETURN_IF_ERROR(requireEq(c, w.dim(0), x.dim(1),
                                        "input 'weight' dim 0 must equal the channels of input "
                                        "'input' (dim 1)"));
      OPFORGE_RETURN_IF_ERROR(
          requireEq(c, w.dim(1), DimExpr(1), "input 'weight' dim 1 must be 1 (depthwise)"));
      const DimExpr k = w.dim(2);
      if (k.isConst() && k.constValue() < 1)
        return c.error("input 'weight' dim 2 (the kernel size k) must be >= 1, got " +
                       k.toString());
      if (!k.isConst())
        c.require(DimExpr(1), DimAssertion::Op::kLe, k,
                  "input 'weight' dim 2 (the kernel size k) must be >= 1");
      const std::vector<DimExpr> state = {x.dim(0), x.dim(1), k - 1};
      if (c.hasInput(2)) {
        const SymDesc b = c.input(2);
        OPFORGE_RETURN_IF_ERROR(sameType(b, "bias"));
        if (b.rank() != 1)
          return c.error("input 'bias' must have rank 1 [channels], got " + toString(b.dims));
        OPFORGE_RETURN_IF_ERROR(requireEq(c, b.dim(0), x.dim(1),
                                          "input 'bias' dim 0 must equal the channels of input "
                                          "'input' (dim 1)"));
      }
      if (c.hasInput(3)) {
        const SymDesc p = c.input(3);
        OPFORGE_RETURN_IF_ERROR(sameType(p, "past_state"));
        if (p.rank() != 3)
          return c.error("input 'past_state' must have rank 3 [batch_size, channels, k - 1], got " +
                         toString(p.dims));
        static const char* what[3] = {
            "input 'past_state' dim 0 must equal the batch size of input 'input' (dim 0)",
            "input 'past_state' dim 1 must equal the channels of input 'input' (dim 1)",
            "input 'past_state' dim 2 must equal k - 1 (input 'weight' dim 2 minus 1)"};
        for (int i = 0; i < 3; ++i)
          OPFORGE_RETURN_IF_ERROR(requireEq(c, p.dim(i), state[i], what[i]));
      }
      return std::vector<SymDesc>{x.like(), SymDesc::make(x.dtype, state)};
    })
    .cpu([](KernelContext& kc, std::span<const Tensor> in, std::span<const Tensor> out) -> Status {
      const CausalConvGeom g =
          causalConvGeom(kc.attrs(), in[0].desc, in[1].desc, hasIn(in, 2), hasIn(in, 3));
      const int64_t ns = g.state();
      return visitTypes<kFloats>(in[0].desc.dtype, "CausalConvWithState", [&](auto num) -> Status {
        using N = decltype(num);
        using C = typename N::C;
        const auto *px = ptrOf<N>(in[0]), *pw = ptrOf<N>(in[1]);
        const auto* pb = g.bias ? ptrOf<N>(in[2]) : nullptr;
        const auto* pp = g.past ? ptrOf<N>(in[3]) : nullptr;
        auto *py = mutPtr<N>(out[0]), *ps = mutPtr<N>(out[1]);
        for (int64_t bc = 0; bc < g.batch * g.channels; ++bc) {
          const int64_t ch = bc % g.channels;
          // Position p of the padded sequence.
          auto padded = [&](int64_t p) -> typename N::S {
            if (p >= ns) return px[bc * g.length + p - ns];
            return pp ? pp[bc * ns + p] : N::store(C(0));
          };
          for (int64_t t = 0; t < g.length; ++t) {
            double acc = 0;
            for (int64_t j = 0; j < g.k; ++j)
              acc += static_cast<double>(N::load(pw[ch * g.k + j])) *
                     static_cast<double>(N::load(padded(t + j)));
            if (pb) acc += static_cast<double>(N::load(pb[ch]));
            auto y = N::store(static_cast<C>(acc));
            if (g.silu) {
              const double v = static_cast<double>(N::load(y));
              y = N::store(static_cast<C>(v / (1 + std::exp(-v))));
            }
            py[bc * g.length + t] = y;
          }
          for (int64_t s = 0; s < ns; ++s) ps[bc * ns + s] = padded(g.length + s);
        }
        return Status::ok();
      });
    });

}  // namespace opforge::ops
