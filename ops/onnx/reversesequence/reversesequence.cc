// ONNX ReverseSequence (opset 10): for each batch entry b, the first sequence_lens[b] elements
// along time_axis are reversed; the rest are copied. batch_axis and time_axis are 0 and 1 (either
// way round); the input has rank >= 2; sequence_lens is INT64 [batch], each in [0, time length]
// (checked at run time: an error naming the value and its position). Data movement: every dtype.
#include <cstring>

#include "../common/util.h"

namespace opforge::ops {

OPFORGE_OP(ReverseSequence, "ai.onnx::ReverseSequence")
    .doc("Reverses the first sequence_lens[b] elements along the time axis of each batch entry.")
    .input("input", "rank >= 2")
    .input("sequence_lens", "INT64 [batch]")
    .output("Y")
    .attr<int64_t>("batch_axis", int64_t{1}, "0 or 1")
    .attr<int64_t>("time_axis", int64_t{0}, "0 or 1, not batch_axis")
    .check([](const AttrMap& a) -> Status {
      const int64_t b = a.get<int64_t>("batch_axis"), t = a.get<int64_t>("time_axis");
      if (b != 0 && b != 1)
        return Status::invalid("batch_axis must be 0 or 1, got " + std::to_string(b));
      if (t != 0 && t != 1)
        return Status::invalid("time_axis must be 0 or 1, got " + std::to_string(t));
      if (b == t)
        return Status::invalid("batch_axis and time_axis must differ, both are " +
                               std::to_string(b));
      return Status::ok();
    })
    .shape([](ShapeContext& c) -> Result<SymDesc> {
      SymDesc x = c.input(0), lens = c.input(1);
      OPFORGE_RETURN_IF_ERROR(checkType(c, "input 'input'", x.dtype, kAll));
      if (x.rank() < 2)
        return c.error("input 'input' must have rank >= 2, got " + toString(x.dims));
      if (lens.dtype != DataType::kInt64)
        return c.error("input 'sequence_lens' must be INT64, got " + dtypeName(lens.dtype));
      if (lens.rank() != 1)
        return c.error("input 'sequence_lens' must be 1-D [batch], got " + toString(lens.dims));
      const int b = static_cast<int>(c.attr<int64_t>("batch_axis"));
      OPFORGE_RETURN_IF_ERROR(requireEq(c, lens.dim(0), x.dim(b),
                                        "input 'sequence_lens' must have one entry per batch entry "
                                        "(batch_axis " +
                                            std::to_string(b) + ")"));
      return x.like();
    })
    .cpu([](KernelContext& k, std::span<const Tensor> in, std::span<const Tensor> out) -> Status {
      const Tensor& x = in[0];
      const auto& d = x.desc.dims;
      const int ba = static_cast<int>(k.attr<int64_t>("batch_axis"));
      const int64_t nb = d[ba], nt = d[1 - ba], inner = prodOf(d, 2, x.desc.rank());
      const auto* lens = static_cast<const int64_t*>(in[1].data);
      // Element (b, t) of the first two axes starts at ((b, t) in axis order) * inner.
      const int64_t sb = ba == 0 ? nt * inner : inner, stt = ba == 0 ? inner : nb * inner;
      const size_t es = dtypeSize(x.desc.dtype), row = static_cast<size_t>(inner) * es;
      const auto* px = static_cast<const uint8_t*>(x.data);
      auto* py = static_cast<uint8_t*>(out[0].data);
      for (int64_t b = 0; b < nb; ++b) {
        const int64_t len = lens[b];
        if (len < 0 || len > nt)
          return Status::outOfRange("input 'sequence_lens' holds " + std::to_string(len) +
                                    " at position " + std::to_string(b) + ", outside [0, " +
                                    std::to_string(nt) + "] (the length of time axis " +
                                    std::to_string(1 - ba) + ")");
        for (int64_t t = 0; t < nt; ++t) {
          const int64_t from = t < len ? len - 1 - t : t;
          std::memcpy(py + static_cast<size_t>(b * sb + t * stt) * es,
                      px + static_cast<size_t>(b * sb + from * stt) * es, row);
        }
      }
      return Status::ok();
    });
}  // namespace opforge::ops
