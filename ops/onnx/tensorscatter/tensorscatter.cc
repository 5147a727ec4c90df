// ONNX TensorScatter (opset 24): the KV-cache update of LLM attention. present_cache = past_cache
// with, for every batch b and every prefix of the axes before `axis`, the update's sequence_length
// rows written from write_indices[b] (0 without the input) along the sequence axis; mode
// "circular" wraps the position modulo max_sequence_length. The output is past_cache written in
// place (the builder copies first where past_cache is still needed, or is a network input or
// constant), as TensorRT's KV cache update. A negative write index, or in "linear" mode one whose
// rows run past max_sequence_length, is a run-time error naming the value; nothing is written
// outside the cache.
#include <cstring>

#include "tensorscatter.h"

namespace opforge::ops {
OPFORGE_OP(TensorScatter, "ai.onnx::TensorScatter")
    .doc("Writes update into a copy of past_cache at write_indices along the sequence axis.")
    .input("past_cache", "[batch, D1, ..., max_sequence_length, ..., Dn]")
    .input("update", "past_cache's shape, sequence_length <= max_sequence_length on the axis")
    .optionalInput("write_indices", "INT64 [batch]: the first position written per batch")
    .output("present_cache", "past_cache's shape, written in place")
    .attr<std::string>("mode", std::string("linear"), "linear or circular")
    .attr<int64_t>("axis", int64_t{-2}, "the sequence axis; not the batch axis 0")
    .check([](const AttrMap& a) -> Status {
      const auto m = a.get<std::string>("mode");
      if (m != "linear" && m != "circular")
        return Status::invalid("attribute 'mode' must be linear or circular, got '" + m + "'");
      return Status::ok();
    })
    .shape([](ShapeContext& c) -> Result<SymDesc> {
      SymDesc x = c.input(0), u = c.input(1);
      OPFORGE_RETURN_IF_ERROR(checkType(c, "input 'past_cache'", x.dtype, kAll | kFp8));
      if (u.dtype != x.dtype)
        return c.error("input 'update' has type " + dtypeName(u.dtype) + "; past_cache has " +
                       dtypeName(x.dtype));
      const int r = x.rank();
      if (r < 2)
        return c.error("input 'past_cache' must have rank >= 2 (batch, then sequence), got " +
                       toString(x.dims));
      if (u.rank() != r)
        return c.error("input 'update' " + toString(u.dims) + " must have past_cache's rank " +
                       std::to_string(r) + " " + toString(x.dims));
      const int64_t axis_attr = c.attr<int64_t>("axis");
      OPFORGE_ASSIGN_OR_RETURN(int axis, normAxis(c, axis_attr, r, "attribute 'axis'"));
      if (axis == 0)
        return c.error("attribute 'axis' " + std::to_string(axis_attr) +
                       " names the batch axis 0; the sequence axis must be one of 1 to " +
                       std::to_string(r - 1) + " (or -" + std::to_string(r - 1) + " to -1)");
      for (int a = 0; a < r; ++a)
        if (a != axis)
          OPFORGE_RETURN_IF_ERROR(
              requireEq(c, u.dim(a), x.dim(a),
                        "input 'update' must match past_cache on axis " + std::to_string(a)));
      const DimExpr &len = u.dim(axis), &max_len = x.dim(axis);
      if (len.isConst() && max_len.isConst()) {
        if (len.constValue() > max_len.constValue())
          return c.error("input 'update' has sequence_length " + len.toString() + " on axis " +
                         std::to_string(axis) + ", more than past_cache's max_sequence_length " +
                         max_len.toString());
      } else if (!len.sameAs(max_len)) {
        c.require(len, DimAssertion::Op::kLe, max_len,
                  "TensorScatter: update's sequence_length (axis " + std::to_string(axis) +
                      ") must be at most past_cache's max_sequence_length");
      }
      if (c.hasInput(2)) {
        SymDesc w = c.input(2);
        if (w.dtype != DataType::kInt64)
          return c.error("input 'write_indices' must be INT64, got " + dtypeName(w.dtype));
        if (w.rank() != 1)
          return c.error("input 'write_indices' must be 1-D [batch], got " + toString(w.dims));
        OPFORGE_RETURN_IF_ERROR(
            requireEq(c, w.dim(0), x.dim(0),
                      "input 'write_indices' must hold one index per batch (past_cache's dim 0)"));
      }
      return x.aliased();
    })
    .cpu([](KernelContext& k, std::span<const Tensor> in, std::span<const Tensor> out) -> Status {
      const Tensor &x = in[0], &u = in[1], &y = out[0];
      OPFORGE_ASSIGN_OR_RETURN(TensorScatterGeom g, tensorScatterGeom(k.attrs(), x.desc, u.desc));
      const bool has_w = hasIn(in, 2);
      if (has_w && in[2].numel() != g.batch)
        return Status::invalid("TensorScatter: input 'write_indices' has " +
                               std::to_string(in[2].numel()) + " entries; the batch is " +
                               std::to_string(g.batch));
      const int64_t* wi = has_w ? static_cast<const int64_t*>(in[2].data) : nullptr;
      // Every index is checked before anything is written.
      for (int64_t b = 0; b < g.batch && wi; ++b)
        if (!tensorScatterIndexOk(wi[b], g)) return tensorScatterIndexError(wi[b], b, g);
      if (y.data != x.data && y.bytes()) std::memcpy(y.data, x.data, y.bytes());
      const size_t row = static_cast<size_t>(g.inner) * dtypeSize(x.desc.dtype);
      if (row == 0) return Status::ok();
      auto* dst = static_cast<uint8_t*>(y.data);
      const auto* src = static_cast<const uint8_t*>(u.data);
      for (int64_t o = 0; o < g.outer; ++o) {
        const int64_t w = wi ? wi[o / g.per_batch] : 0;
        const int64_t start = g.circular && g.max_seq > 0 ? w % g.max_seq : w;
        for (int64_t s = 0; s < g.seq; ++s) {
          int64_t t = start + s;
          if (g.circular && t >= g.max_seq) t -= g.max_seq;
          std::memcpy(dst + static_cast<size_t>(o * g.max_seq + t) * row,
                      src + static_cast<size_t>(o * g.seq + s) * row, row);
        }
      }
      return Status::ok();
    });
}  // namespace opforge::ops
