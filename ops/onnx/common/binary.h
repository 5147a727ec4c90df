// binary.h — shared definition of ONNX's broadcasting binary ops (Add, Mul, ...): one shape rule
// and one CPU reference parameterised by the scalar function.
#pragma once

#include "../../common/dtype_dispatch.h"

namespace opforge::ops {

template <typename F>
OpDef& defineBinary(OpDef& def, const char* name, unsigned types, F f) {
  return def.input("A")
      .input("B")
      .output("C")
      .shape([name, types](ShapeContext& c) -> Result<SymDesc> {
        SymDesc a = c.input(0), b = c.input(1);
        if (a.dtype != b.dtype)
          return c.error(std::string("inputs must have one type, got ") + dtypeName(a.dtype) + " and " + dtypeName(b.dtype));
        if (!inTypeSet(a.dtype, types)) return c.error(std::string(name) + " does not support " + dtypeName(a.dtype));
        OPFORGE_ASSIGN_OR_RETURN(auto dims, broadcastShapes(c, a.dims, b.dims));
        return SymDesc::make(a.dtype, std::move(dims));
      })
      .cpu([name, types, f](KernelContext&, std::span<const Tensor> in, std::span<const Tensor> out) -> Status {
        const Tensor &a = in[0], &b = in[1], &y = out[0];
        return visitType(y.desc.dtype, types, name, [&](auto num) -> Status {
          using N = decltype(num);
          const auto* pa = static_cast<const typename N::S*>(a.data);
          const auto* pb = static_cast<const typename N::S*>(b.data);
          auto* py = static_cast<typename N::S*>(y.data);
          forEachBroadcast(y.desc.dims,
                           {broadcastStrides(a.desc.dims, y.desc.dims), broadcastStrides(b.desc.dims, y.desc.dims)},
                           [&](int64_t i, const std::vector<int64_t>& off) {
                             py[i] = N::store(static_cast<typename N::C>(f(N::load(pa[off[0]]), N::load(pb[off[1]]))));
                           });
          return Status::ok();
        });
      })
      .elementwise();
}

// A definition fragment: a broadcasting binary op over `types` with scalar function f(C, C) -> C.
// Usage: OPFORGE_OP(Add, "ai.onnx::Add").with(binaryOp("Add", kNumeric, [](auto x, auto y) { return x + y; }));
template <typename F>
auto binaryOp(const char* name, unsigned types, F f) {
  return [=](OpDef& def) { defineBinary(def, name, types, f); };
}

}  // namespace opforge::ops
