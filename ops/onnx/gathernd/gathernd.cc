// ONNX GatherND: indices[..., :q] address slices of data after `batch_dims` leading batch axes;
// out = indices.shape[:-1] + data.shape[batch_dims + q:]. Indices out of range are a run-time
// error naming the value and its position.
#include <cstring>

#include "../common/bytes.h"
#include "../common/util.h"

namespace opforge::ops {
OPFORGE_OP(GatherND, "ai.onnx::GatherND")
    .doc("Gathers slices addressed by index tuples.")
    .input("data")
    .input("indices", "INT64")
    .output("output")
    .attr<int64_t>("batch_dims", int64_t{0})
    .shape([](ShapeContext& c) -> Result<SymDesc> {
      SymDesc x = c.input(0), idx = c.input(1);
      if (!isIntIndex(idx.dtype))
        return c.error("input 'indices' must be INT64, got " + dtypeName(idx.dtype));
      const int64_t b = c.attr<int64_t>("batch_dims");
      if (x.rank() < 1 || idx.rank() < 1) return c.error("data and indices must have rank >= 1");
      if (b < 0 || b >= std::min(x.rank(), idx.rank()))
        return c.error("batch_dims = " + std::to_string(b) +
                       " must be in [0, min(rank(data), rank(indices)))");
      if (!idx.dim(-1).isConst()) return c.error("the last dimension of 'indices' must be static");
      const int64_t q = idx.dim(-1).constValue();
      if (q < 1 || q > x.rank() - b)
        return c.error(
            "the last dimension of 'indices' (" + std::to_string(q) +
            ") must be in [1, rank(data) - batch_dims = " + std::to_string(x.rank() - b) + "]");
      for (int a = 0; a < b; ++a)
        OPFORGE_RETURN_IF_ERROR(
            requireEq(c, idx.dim(a), x.dim(a),
                      "batch axis " + std::to_string(a) + " of indices and data must match"));
      std::vector<DimExpr> dims(idx.dims.begin(), idx.dims.end() - 1);
      dims.insert(dims.end(), x.dims.begin() + b + q, x.dims.end());
      return SymDesc::make(x.dtype, std::move(dims));
    })
    .cpu([](KernelContext& k, std::span<const Tensor> in, std::span<const Tensor> out) -> Status {
      const Tensor &x = in[0], &idx = in[1], &y = out[0];
      const int b = static_cast<int>(k.attr<int64_t>("batch_dims"));
      const int r = x.desc.rank();
      const int64_t q = idx.desc.dims.back();
      const int64_t nbatch = prodOf(x.desc.dims, 0, b);
      const int64_t tuples = prodOf(idx.desc.dims, b, idx.desc.rank() - 1);  // per batch
      const size_t es = dtypeSize(x.desc.dtype);
      const int64_t slice = bytesOf(prodOf(x.desc.dims, b + static_cast<int>(q), r), es);
      const int64_t batch_elems = prodOf(x.desc.dims, b, r);
      const auto xs = stridesOf(x.desc.dims);
      const auto* px = static_cast<const uint8_t*>(x.data);
      auto* py = static_cast<uint8_t*>(y.data);
      for (int64_t bi = 0; bi < nbatch; ++bi)
        for (int64_t t = 0; t < tuples; ++t) {
          int64_t off = bi * batch_elems;
          for (int64_t j = 0; j < q; ++j) {
            const int64_t pos = (bi * tuples + t) * q + j;
            int64_t v = readIndex(idx.data, idx.desc.dtype, pos);
            const int64_t n = x.desc.dims[b + j];
            if (!normIndex(v, n))
              return indexError("indices", readIndex(idx.data, idx.desc.dtype, pos), pos, n,
                                b + static_cast<int>(j));
            off += v * xs[b + j];
          }
          if (slice)
            std::memcpy(py + (bi * tuples + t) * slice, px + off * static_cast<int64_t>(es), slice);
        }
      return Status::ok();
    });
}  // namespace opforge::ops
