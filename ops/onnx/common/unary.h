// unary.h — shared definition of ONNX's elementwise unary ops (Abs, Exp, Relu, Elu, ...): one
// shape rule and one CPU reference parameterised by the scalar function.
#pragma once

#include <cmath>

#include "combos.h"
#include "util.h"

namespace opforge::ops {

// make(const AttrMap&) returns the scalar function f(C) -> C for the node's attributes (a generic
// lambda; C is float for FP16/BF16, else the storage type). Types: the accepted dtypes.
// `sym` (Neg) maps shape values: -n of a size stays a known expression (torch.arange(-n, n)).
using SymUnaryFn = DimExpr (*)(const DimExpr&);

template <unsigned Types, typename Make>
OpDef& defineUnary(OpDef& def, const char* name, Make make, SymUnaryFn sym = nullptr) {
  if (sym)
    def.valueInput("X");
  else
    def.input("X");
  return def.output("Y")
      .combos(comboTypes(Types))
      // Channels-last in and out: the CUDA tactic (1) maps the bytes as they lie.
      .combo(Combo(comboTypes(Types), "HWC").tactics({1}))
      .shape([sym](ShapeContext& c) -> Result<SymDesc> {
        SymDesc x = c.input(0);
        OPFORGE_RETURN_IF_ERROR(checkType(c, "input 'X'", x.dtype, Types));
        // Sizes map through `sym`; a BOOL value (a known condition, 0 / 1) only when every
        // element is a number.
        const bool cond = x.dtype == DataType::kBool;
        if (sym && x.rank() <= 1 && (isIntIndex(x.dtype) || cond))
          if (auto v = c.value(0)) {
            std::vector<DimExpr> out;
            for (const DimExpr& e : *v) {
              if (cond && !e.isConst()) return x.like();
              out.push_back(sym(e));
            }
            c.setValue(0, std::move(out));
          }
        return x.like();
      })
      .cpu([name, make](KernelContext& k, std::span<const Tensor> in,
                        std::span<const Tensor> out) -> Status {
        auto f = make(k.attrs());
        if (out[0].numel() != in[0].numel() ||  // a plan's dims (edited): never write past y
            !formatsShareBytes(in[0].desc.format, out[0].desc.format, in[0].desc.dims))
          return Status::invalid(std::string(name) + ": output " + describe(out[0].desc) +
                                 " differs from input " + describe(in[0].desc));
        return visitTypes<Types>(in[0].desc.dtype, name, [&](auto num) -> Status {
          using N = decltype(num);
          using C = typename N::C;
          const auto* px = ptrOf<N>(in[0]);
          auto* py = mutPtr<N>(out[0]);
          const int64_t n = in[0].numel();
          for (int64_t i = 0; i < n; ++i) py[i] = N::store(static_cast<C>(f(N::load(px[i]))));
          return Status::ok();
        });
      })
      .elementwise();
}

// A fragment for an op without attributes: f(C) -> C.
template <unsigned Types, typename F>
auto unaryOp(const char* name, F f, SymUnaryFn sym = nullptr) {
  return [=](OpDef& def) {
    defineUnary<Types>(
        def, name, [f](const AttrMap&) { return f; }, sym);
  };
}

}  // namespace opforge::ops
