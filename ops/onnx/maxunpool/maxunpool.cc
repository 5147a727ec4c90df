// ONNX MaxUnpool: the inverse of MaxPool with Indices: Y is zero except Y.flat[I[i]] = X[i], the
// indices flat over the whole output [N, C, D1, ...] as MaxPool's Indices are (storage_order 0).
// The inferred shape has per spatial axis (in - 1) * stride + kernel - pad_begin - pad_end; the
// indices address it. With output_shape (it must be known when the network is built; N and C as
// X's, each spatial size at least the inferred one) the inferred tensor sits at the start of each
// axis of Y and the rest is zero, as the ONNX reference. An index outside [0, the inferred element
// count) is an error; when two indices are equal the later element wins (the reference; the CUDA
// tactic leaves the order of such writes undefined).
#include <cstring>

#include "../common/pool.h"

namespace opforge::ops {
// The inferred output dims (also used by maxunpool.cu's tactic) for X's dims (the window attributes
// were checked by the shape rule).
std::vector<int64_t> maxUnpoolInferredDims(const AttrMap& attrs, const std::vector<int64_t>& x) {
  AttrMap wa = attrs;
  wa.set("auto_pad", std::string("NOTSET"));
  const int nd = static_cast<int>(x.size()) - 2;
  auto w = readWindow(wa, nd, attrs.get<std::vector<int64_t>>("kernel_shape"), false);
  std::vector<int64_t> d = x;
  if (!w) return d;
  for (int i = 0; i < nd; ++i) d[2 + i] = (x[2 + i] - 1) * w->s[i] + w->k[i] - w->pb[i] - w->pe[i];
  return d;
}
OPFORGE_OP(MaxUnpool, "ai.onnx::MaxUnpool")
    .doc("Partial inverse of MaxPool: scatters values to their argmax positions.")
    .input("X", "[N, C, D1, ...]")
    .input("I", "INT64, X's shape: flat indices into Y")
    .valueInput("output_shape", true, "INT64 [rank of X]")
    .output("Y")
    .attr<std::vector<int64_t>>("kernel_shape")
    .optionalAttr<std::vector<int64_t>>("strides")
    .optionalAttr<std::vector<int64_t>>("pads", "begin values of every axis, then end values")
    .shape([](ShapeContext& c) -> Result<SymDesc> {
      SymDesc x = c.input(0), idx = c.input(1);
      OPFORGE_RETURN_IF_ERROR(checkType(c, "input 'X'", x.dtype, kFloats));
      if (idx.dtype != DataType::kInt64)
        return c.error("input 'I' must be INT64, got " + dtypeName(idx.dtype));
      if (x.rank() < 3)
        return c.error("input 'X' must have rank >= 3 (N, C, D1, ...), got " + toString(x.dims));
      if (idx.rank() != x.rank())
        return c.error("input 'I' must have X's shape " + toString(x.dims) + ", got " +
                       toString(idx.dims));
      for (int a = 0; a < x.rank(); ++a)
        OPFORGE_RETURN_IF_ERROR(
            requireEq(c, idx.dim(a), x.dim(a), "input 'I' must have X's shape"));
      const int nd = x.rank() - 2;
      AttrMap wa = c.attrs();
      wa.set("auto_pad", std::string("NOTSET"));
      auto w = readWindow(wa, nd, c.attr<std::vector<int64_t>>("kernel_shape"), false);
      if (!w) return c.error(w.status().message());
      SymDesc y = x.like();
      for (int i = 0; i < nd; ++i)
        y.dims[2 + i] = (x.dims[2 + i] - 1) * w->s[i] + (w->k[i] - w->pb[i] - w->pe[i]);
      for (int i = 0; i < nd; ++i)
        if (y.dims[2 + i].isConst() && y.dims[2 + i].constValue() < 1)
          return c.error("the unpooled size of spatial axis " + std::to_string(i) + " is " +
                         y.dims[2 + i].toString() + " (pads larger than the window)");
      if (c.hasInput(2)) {
        OPFORGE_ASSIGN_OR_RETURN(auto v, needValue(c, 2, "output_shape"));
        if (static_cast<int>(v.size()) != x.rank())
          return c.error("input 'output_shape' has " + std::to_string(v.size()) +
                         " values; X has rank " + std::to_string(x.rank()));
        for (int a = 0; a < 2; ++a)
          OPFORGE_RETURN_IF_ERROR(
              requireEq(c, v[a], x.dim(a), "input 'output_shape' must keep X's N and C"));
        for (int a = 2; a < x.rank(); ++a) {
          if (v[a].isConst() && y.dims[a].isConst() && v[a].constValue() < y.dims[a].constValue())
            return c.error("input 'output_shape' " + toString(v) +
                           " is smaller than the unpooled " + "shape " + toString(y.dims) +
                           " on axis " + std::to_string(a));
          if (!v[a].isConst() || !y.dims[a].isConst())
            c.require(y.dims[a], DimAssertion::Op::kLe, v[a],
                      "input 'output_shape' must not be smaller than the unpooled shape");
          y.dims[a] = v[a];
        }
      }
      OPFORGE_RETURN_IF_ERROR(checkElementCount(c, y.dims, "output"));
      return y;
    })
    .cpu([](KernelContext& k, std::span<const Tensor> in, std::span<const Tensor> out) -> Status {
      const Tensor& x = in[0];
      const auto inf = maxUnpoolInferredDims(k.attrs(), x.desc.dims);
      const auto& od = out[0].desc.dims;
      int64_t total = 1;
      for (int64_t d : inf) total *= d;
      const int64_t n = x.numel();
      const auto* pi = static_cast<const int64_t*>(in[1].data);
      for (int64_t i = 0; i < n; ++i)
        if (pi[i] < 0 || pi[i] >= total)
          return Status::outOfRange("input 'I' holds " + std::to_string(pi[i]) + " at position " +
                                    std::to_string(i) + ", outside [0, " +
                                    std::to_string(total - 1) + "] (the unpooled shape has " +
                                    std::to_string(total) + " elements)");
      // Flat index in the inferred shape -> flat index in Y.
      const auto ist = stridesOf(inf), ost = stridesOf(od);
      auto place = [&](int64_t t) {
        int64_t o = 0;
        for (size_t a = 0; a < inf.size(); ++a) {
          o += t / ist[a] * ost[a];
          t %= ist[a];
        }
        return o;
      };
      const size_t es = dtypeSize(x.desc.dtype);
      auto* py = static_cast<uint8_t*>(out[0].data);
      const auto* px = static_cast<const uint8_t*>(x.data);
      if (out[0].bytes()) std::memset(py, 0, out[0].bytes());  // +0 in every float type
      for (int64_t i = 0; i < n; ++i) std::memcpy(py + place(pi[i]) * es, px + i * es, es);
      return Status::ok();
    });
}  // namespace opforge::ops
