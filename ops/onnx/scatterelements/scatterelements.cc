// ONNX ScatterElements: output = data, then output[... indices[i] ...] (= or reduction) updates[i]
// with the index replacing the coordinate on `axis`. Indices out of range are a run-time error
// naming the value and its position; nothing is written past the tensor.
#include <cstring>

#include "../common/scatter.h"

namespace opforge::ops {
OPFORGE_OP(ScatterElements, "ai.onnx::ScatterElements")
    .doc("Scatters updates into a copy of data along an axis.")
    .input("data")
    .input("indices", "INT32 or INT64, data's rank")
    .input("updates", "indices' shape")
    .output("output")
    .attr<int64_t>("axis", int64_t{0})
    .attr<std::string>("reduction", std::string("none"), "default none")
    .check(checkReduction)
    .shape([](ShapeContext& c) -> Result<SymDesc> {
      SymDesc x = c.input(0), idx = c.input(1), up = c.input(2);
      if (!isIntIndex(idx.dtype))
        return c.error("input 'indices' must be INT32 or INT64, got " + dtypeName(idx.dtype));
      if (up.dtype != x.dtype)
        return c.error("input 'updates' has type " + dtypeName(up.dtype) + "; data has " +
                       dtypeName(x.dtype));
      OPFORGE_RETURN_IF_ERROR(checkType(c, "input 'data'", x.dtype, kAll));
      if (idx.rank() != x.rank() || up.rank() != x.rank())
        return c.error("indices " + toString(idx.dims) + " and updates " + toString(up.dims) +
                       " must have data's rank " + std::to_string(x.rank()));
      if (x.rank() == 0) return c.error("input 'data' must have rank >= 1");
      for (int a = 0; a < x.rank(); ++a)
        OPFORGE_RETURN_IF_ERROR(
            requireEq(c, up.dim(a), idx.dim(a), "updates must have the shape of indices"));
      OPFORGE_RETURN_IF_ERROR(normAxis(c, c.attr<int64_t>("axis"), x.rank()).status());
      return x.aliased();
    })
    .cpu([](KernelContext& k, std::span<const Tensor> in, std::span<const Tensor> out) -> Status {
      const Tensor &x = in[0], &idx = in[1], &up = in[2], &y = out[0];
      const int r = x.desc.rank();
      const int axis = wrapAxis(k.attr<int64_t>("axis"), r);
      const std::string red = k.attr<std::string>("reduction");
      const int64_t n = x.desc.dims[axis];
      for (int a = 0; a < r; ++a)
        if (a != axis && idx.desc.dims[a] > x.desc.dims[a])
          return Status::outOfRange("input 'indices' " + dimsToString(idx.desc.dims) +
                                    " is larger than data " + dimsToString(x.desc.dims) +
                                    " on axis " + std::to_string(a));
      for (int64_t i = 0; i < idx.numel(); ++i) {
        int64_t j = readIndex(idx.data, idx.desc.dtype, i);
        if (!normIndex(j, n)) return indexError("indices", j, i, n, axis);
      }
      if (y.data != x.data && y.bytes()) std::memcpy(y.data, x.data, y.bytes());
      auto st = stridesOf(x.desc.dims);
      const int64_t axis_stride = st[axis];
      st[axis] = 0;
      return visitTypes<kAll>(x.desc.dtype, "ScatterElements", [&](auto num) -> Status {
        using N = decltype(num);
        const auto* pu = ptrOf<N>(up);
        auto* py = mutPtr<N>(y);
        forEachBroadcast(idx.desc.dims, {st}, [&](int64_t i, const std::vector<int64_t>& off) {
          int64_t j = readIndex(idx.data, idx.desc.dtype, i);
          normIndex(j, n);
          scatterOne<N>(py[off[0] + j * axis_stride], pu[i], red);
        });
        return Status::ok();
      });
    });
}  // namespace opforge::ops
