// ONNX GatherElements: y[i][j]... = data[...][indices[i][j]...][...] with the index replacing the
// coordinate on `axis`; indices has data's rank and y its shape. Indices out of range are a
// run-time error naming the value and its position.
#include "../common/util.h"

namespace opforge::ops {
OPFORGE_OP(GatherElements, "ai.onnx::GatherElements")
    .doc("Gathers elements along an axis.")
    .input("data")
    .input("indices", "INT32 or INT64, data's rank")
    .output("output")
    .attr<int64_t>("axis", int64_t{0})
    .shape([](ShapeContext& c) -> Result<SymDesc> {
      SymDesc x = c.input(0), idx = c.input(1);
      if (!isIntIndex(idx.dtype))
        return c.error("input 'indices' must be INT32 or INT64, got " + dtypeName(idx.dtype));
      if (idx.rank() != x.rank())
        return c.error("input 'indices' " + toString(idx.dims) + " must have the rank of data " +
                       toString(x.dims));
      if (x.rank() == 0) return c.error("input 'data' must have rank >= 1");
      OPFORGE_RETURN_IF_ERROR(normAxis(c, c.attr<int64_t>("axis"), x.rank()).status());
      return SymDesc::make(x.dtype, idx.dims);
    })
    .cpu([](KernelContext& k, std::span<const Tensor> in, std::span<const Tensor> out) -> Status {
      const Tensor &x = in[0], &idx = in[1], &y = out[0];
      const int r = x.desc.rank();
      const int axis = wrapAxis(k.attr<int64_t>("axis"), r);
      const int64_t n = x.desc.dims[axis];
      for (int a = 0; a < r; ++a)
        if (a != axis && idx.desc.dims[a] > x.desc.dims[a])
          return Status::outOfRange("input 'indices' " + dimsToString(idx.desc.dims) +
                                    " is larger than data " + dimsToString(x.desc.dims) +
                                    " on axis " + std::to_string(a));
      auto st = stridesOf(x.desc.dims);
      const int64_t axis_stride = st[axis];
      st[axis] = 0;
      return visitBySize(x.desc.dtype, "GatherElements", [&](auto num) -> Status {
        using S = typename decltype(num)::S;
        const S* px = static_cast<const S*>(x.data);
        S* py = static_cast<S*>(y.data);
        Status bad = Status::ok();
        forEachBroadcast(idx.desc.dims, {st}, [&](int64_t i, const std::vector<int64_t>& off) {
          if (!bad) return;
          int64_t j = readIndex(idx.data, idx.desc.dtype, i);
          if (!normIndex(j, n)) {
            bad = indexError("indices", readIndex(idx.data, idx.desc.dtype, i), i, n, axis);
            return;
          }
          py[i] = px[off[0] + j * axis_stride];
        });
        return bad;
      });
    });
}  // namespace opforge::ops
