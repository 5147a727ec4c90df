// ONNX STFT (opset 17): the short-time Fourier transform of a batch of signals (common/dft.h).
//   signal [B, L, 1 | 2]; frame_step: INT32/INT64 scalar (known when the network is built);
//   window [fl] (optional); frame_length: scalar (optional, known when the network is built; with
//   a window it must be the window's length; without either, fl = L);
//   frames = 1 + (L - fl) / frame_step; output [B, frames, fl / 2 + 1 (onesided, the default) or
//   fl, 2]: X[b, f, k] = sum_{t < fl} w[t] x[b, f * step + t] e^{-2 pi i k t / fl}.
// Reference: the direct sum per output element in double (stftElement).
#include "../common/dft.h"

#include "../common/util.h"

namespace opforge::ops {

// The geometry of a call from host tensors (the CPU reference).
Result<StftGeom> stftGeomOf(std::span<const Tensor> in, const std::vector<int64_t>& out) {
  StftGeom g;
  const auto& x = in[0].desc.dims;
  g.batch = x[0], g.L = x[1], g.in_c = static_cast<int>(x[2]);
  g.step = readInts(in[1])[0];
  g.window = hasIn(in, 2);
  g.fl = hasIn(in, 3) ? readInts(in[3])[0] : g.window ? in[2].desc.dims[0] : g.L;
  g.frames = out[1], g.bins = out[2];
  if (g.step < 1 || g.fl < 1)
    return Status::invalid("STFT: frame_step and frame_length must be at least 1");
  return g;
}

OPFORGE_OP(STFT, "ai.onnx::STFT")
    .doc("Short-time Fourier transform (ONNX STFT).")
    .input("signal", "[batch, length, 1 | 2]")
    .valueInput("frame_step", false, "scalar, known when the network is built")
    .optionalInput("window", "[frame_length], signal's type")
    .valueInput("frame_length", true, "scalar, known when the network is built")
    .output("output", "[batch, frames, bins, 2]")
    .attr<int64_t>("onesided", int64_t{1})
    .check([](const AttrMap& a) -> Status {
      const int64_t v = a.get<int64_t>("onesided");
      if (v != 0 && v != 1)
        return Status::invalid("attribute 'onesided' must be 0 or 1, got " + std::to_string(v));
      return Status::ok();
    })
    .shape([](ShapeContext& c) -> Result<SymDesc> {
      const SymDesc x = c.input(0);
      OPFORGE_RETURN_IF_ERROR(checkType(c, "input 'signal'", x.dtype, kFloats));
      if (x.rank() != 3 || !x.dim(2).isConst() ||
          (x.dim(2).constValue() != 1 && x.dim(2).constValue() != 2))
        return c.error("input 'signal' must be [batch, length, 1 | 2], got " + toString(x.dims));
      OPFORGE_ASSIGN_OR_RETURN(auto step_v, needInts(c, 1, "frame_step"));
      if (step_v.size() != 1 || step_v[0] < 1)
        return c.error("input 'frame_step' must be one value >= 1, got " + dimsToString(step_v));
      DimExpr fl = x.dim(1);
      if (c.hasInput(2)) {
        const SymDesc w = c.input(2);
        if (w.dtype != x.dtype)
          return c.error("input 'window' has type " + dtypeName(w.dtype) + "; signal has " +
                         dtypeName(x.dtype));
        if (w.rank() != 1) return c.error("input 'window' must be 1-D, got " + toString(w.dims));
        fl = w.dim(0);
      }
      if (c.hasInput(3)) {
        OPFORGE_ASSIGN_OR_RETURN(auto fl_v, needInts(c, 3, "frame_length"));
        if (fl_v.size() != 1 || fl_v[0] < 1)
          return c.error("input 'frame_length' must be one value >= 1, got " + dimsToString(fl_v));
        if (c.hasInput(2))
          OPFORGE_RETURN_IF_ERROR(
              requireEq(c, fl, fl_v[0], "input 'frame_length' must be the window's length"));
        fl = fl_v[0];
      }
      if (fl.isConst() && x.dim(1).isConst() && fl.constValue() > x.dim(1).constValue())
        return c.error("the frame length " + fl.toString() + " is longer than the signal (" +
                       x.dim(1).toString() + " samples)");
      c.require(fl, DimAssertion::Op::kLe, x.dim(1),
                "the frame must not be longer than the signal");
      c.require(1, DimAssertion::Op::kLe, fl, "the frame length must be at least 1");
      const DimExpr frames = floorDiv(x.dim(1) - fl, DimExpr(step_v[0])) + 1;
      const DimExpr bins = c.attr<int64_t>("onesided") != 0 ? floorDiv(fl, 2) + 1 : fl;
      std::vector<DimExpr> dims{x.dim(0), frames, bins, 2};
      OPFORGE_RETURN_IF_ERROR(checkElementCount(c, dims, "output"));
      return SymDesc::make(x.dtype, dims);
    })
    .cpu([](KernelContext&, std::span<const Tensor> in, std::span<const Tensor> out) -> Status {
      OPFORGE_ASSIGN_OR_RETURN(StftGeom g, stftGeomOf(in, out[0].desc.dims));
      const DataType t = in[0].desc.dtype;
      auto loadx = [&](int64_t b, int64_t s, int part) {
        return loadAsDouble(in[0].data, t, (b * g.L + s) * g.in_c + part);
      };
      auto loadw = [&](int64_t j) { return loadAsDouble(in[2].data, t, j); };
      for (int64_t b = 0; b < g.batch; ++b)
        for (int64_t f = 0; f < g.frames; ++f)
          for (int64_t k = 0; k < g.bins; ++k) {
            double re, im;
            stftElement(g, b, f, k, loadx, loadw, re, im);
            const int64_t at = ((b * g.frames + f) * g.bins + k) * 2;
            storeFromDouble(out[0].data, t, at, re);
            storeFromDouble(out[0].data, t, at + 1, im);
          }
      return Status::ok();
    });

}  // namespace opforge::ops
