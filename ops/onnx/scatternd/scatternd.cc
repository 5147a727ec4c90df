// ONNX ScatterND: output = data, then the slice of output addressed by each index tuple
// indices[..., :q] is replaced (or reduced) by the matching slice of updates. Indices out of
// range are a run-time error naming the value and its position; nothing is written past the
// tensor.
#include <cstring>

#include "../common/scatter.h"

namespace opforge::ops {
OPFORGE_OP(ScatterND, "ai.onnx::ScatterND")
    .doc("Scatters slices of updates into a copy of data.")
    .input("data")
    .input("indices", "INT64 [..., q]")
    .input("updates", "indices.shape[:-1] + data.shape[q:]")
    .output("output")
    .attr<std::string>("reduction", std::string("none"), "default none")
    .check(checkReduction)
    .shape([](ShapeContext& c) -> Result<SymDesc> {
      SymDesc x = c.input(0), idx = c.input(1), up = c.input(2);
      if (!isIntIndex(idx.dtype))
        return c.error("input 'indices' must be INT64, got " + dtypeName(idx.dtype));
      if (up.dtype != x.dtype)
        return c.error("input 'updates' has type " + dtypeName(up.dtype) + "; data has " +
                       dtypeName(x.dtype));
      OPFORGE_RETURN_IF_ERROR(checkType(c, "input 'data'", x.dtype, kAll));
      if (idx.rank() < 1 || x.rank() < 1) return c.error("data and indices must have rank >= 1");
      if (!idx.dim(-1).isConst()) return c.error("the last dimension of 'indices' must be static");
      const int64_t q = idx.dim(-1).constValue();
      if (q < 1 || q > x.rank())
        return c.error("the last dimension of 'indices' (" + std::to_string(q) +
                       ") must be in [1, rank(data) = " + std::to_string(x.rank()) + "]");
      std::vector<DimExpr> want(idx.dims.begin(), idx.dims.end() - 1);
      want.insert(want.end(), x.dims.begin() + q, x.dims.end());
      if (static_cast<int>(want.size()) != up.rank())
        return c.error("input 'updates' " + toString(up.dims) + " must have shape " +
                       toString(want));
      for (size_t a = 0; a < want.size(); ++a)
        OPFORGE_RETURN_IF_ERROR(
            requireEq(c, up.dims[a], want[a], "input 'updates' must have shape " + toString(want)));
      return x.aliased();
    })
    .cpu([](KernelContext& k, std::span<const Tensor> in, std::span<const Tensor> out) -> Status {
      const Tensor &x = in[0], &idx = in[1], &up = in[2], &y = out[0];
      const std::string red = k.attr<std::string>("reduction");
      const int r = x.desc.rank();
      const int64_t q = idx.desc.dims.back(), tuples = idx.numel() / std::max<int64_t>(q, 1);
      const int64_t slice = prodOf(x.desc.dims, static_cast<int>(q), r);
      const auto xs = stridesOf(x.desc.dims);
      std::vector<int64_t> offs(static_cast<size_t>(tuples));
      for (int64_t t = 0; t < tuples; ++t) {
        int64_t off = 0;
        for (int64_t j = 0; j < q; ++j) {
          int64_t v = readIndex(idx.data, idx.desc.dtype, t * q + j);
          if (!normIndex(v, x.desc.dims[j]))
            return indexError("indices", readIndex(idx.data, idx.desc.dtype, t * q + j), t * q + j,
                              x.desc.dims[j], static_cast<int>(j));
          off += v * xs[j];
        }
        offs[t] = off;
      }
      if (y.data != x.data && y.bytes()) std::memcpy(y.data, x.data, y.bytes());
      return visitTypes<kAll>(x.desc.dtype, "ScatterND", [&](auto num) -> Status {
        using N = decltype(num);
        const auto* pu = ptrOf<N>(up);
        auto* py = mutPtr<N>(y);
        for (int64_t t = 0; t < tuples; ++t)
          for (int64_t i = 0; i < slice; ++i)
            scatterOne<N>(py[offs[t] + i], pu[t * slice + i], red);
        return Status::ok();
      });
    });
}  // namespace opforge::ops
