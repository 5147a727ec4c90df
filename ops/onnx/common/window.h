// window.h — the window-function ops (HannWindow, HammingWindow, BlackmanWindow, opset 17): one
// definition fragment and one formula, each op folder naming its coefficients.
//
//   w[n] = a0 - a1 cos(2 pi n / N) + a2 cos(4 pi n / N),  n in [0, size), N = size (periodic = 1,
//   the default) or size - 1 (periodic = 0)
// Hann (0.5, 0.5, 0), Hamming (25/46, 21/46, 0), Blackman (0.42, 0.5, 0.08). Computed in double and
// stored as output_datatype (default FLOAT; integer types truncate, NaN becomes 0: a symmetric
// window of size 1 divides by N = 0). `size` is an INT32/INT64 scalar known when the network is
// built (it may be symbolic).
#pragma once

#include <cmath>

#include "opforge/epilogue.h"  // OPFORGE_HOST_DEVICE
#include "util.h"

namespace opforge::ops {

struct WindowCoeffs {
  double a0, a1, a2;
};

OPFORGE_HOST_DEVICE inline double windowValue(WindowCoeffs c, int64_t n, int64_t size,
                                              bool periodic) {
  const double pi = 3.14159265358979323846;
  const double big_n = static_cast<double>(periodic ? size : size - 1);
  const double fn = static_cast<double>(n);
  return c.a0 - c.a1 * cos(2 * pi * fn / big_n) + c.a2 * cos(4 * pi * fn / big_n);
}

// The types a window can be stored as.
constexpr unsigned kWindowTypes = kNumeric;

inline DataType windowType(const AttrMap& a) {
  return static_cast<DataType>(a.get<int64_t>("output_datatype"));
}

// The definition of a window op but its CPU kernel: inputs, attributes, checks, shape rule.
inline OpDef& windowOp(OpDef& d) {
  return d.valueInput("size", false, "INT32/INT64 scalar, >= 0, known when the network is built")
      .output("output", "[size] of output_datatype")
      .attr<int64_t>("output_datatype", int64_t{1}, "ONNX data type of the output (default FLOAT)")
      .attr<int64_t>("periodic", int64_t{1}, "1: N = size; 0: N = size - 1 (symmetric)")
      .check([](const AttrMap& a) -> Status {
        const int64_t t = a.get<int64_t>("output_datatype");
        if (!isKnownDataType(static_cast<int32_t>(t)) ||
            !inTypeSet(static_cast<DataType>(t), kWindowTypes))
          return Status::invalid("output_datatype " + std::to_string(t) +
                                 " is not a numeric ONNX data type opforge has");
        const int64_t p = a.get<int64_t>("periodic");
        if (p != 0 && p != 1)
          return Status::invalid("periodic must be 0 or 1, got " + std::to_string(p));
        return Status::ok();
      })
      .shape([](ShapeContext& c) -> Result<SymDesc> {
        SymDesc s = c.input(0);
        if (!isIntIndex(s.dtype))
          return c.error("input 'size' must be INT32 or INT64, got " + dtypeName(s.dtype));
        if (s.rank() > 1 || (s.rank() == 1 && !isConstEq(s.dim(0), 1)))
          return c.error("input 'size' must be a scalar, got " + toString(s.dims));
        OPFORGE_ASSIGN_OR_RETURN(auto v, needValue(c, 0, "size"));
        if (v.size() != 1) return c.error("input 'size' must hold one value");
        if (v[0].isConst() && v[0].constValue() < 0)
          return c.error("input 'size' is negative: " + v[0].toString());
        OPFORGE_RETURN_IF_ERROR(checkElementCount(c, {v[0]}, "output"));
        return SymDesc::make(windowType(c.attrs()), {v[0]});
      });
}

// The CPU reference of a window op with coefficients `c`.
inline KernelFn windowReference(WindowCoeffs c) {
  return [c](KernelContext& k, std::span<const Tensor>, std::span<const Tensor> out) -> Status {
    const int64_t size = out[0].desc.dims[0];
    const bool periodic = k.attr<int64_t>("periodic") != 0;
    return visitTypes<kWindowTypes>(out[0].desc.dtype, "window", [&](auto num) -> Status {
      using N = decltype(num);
      using C = typename N::C;
      auto* py = mutPtr<N>(out[0]);
      for (int64_t n = 0; n < size; ++n) {
        double v = windowValue(c, n, size, periodic);
        if constexpr (std::is_integral_v<C>) v = std::isnan(v) ? 0 : std::trunc(v);
        py[n] = N::store(static_cast<C>(v));
      }
      return Status::ok();
    });
  };
}

}  // namespace opforge::ops
