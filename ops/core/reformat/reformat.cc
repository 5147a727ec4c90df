// opforge::Reformat — what the builder inserts between layers: a change of memory format
// (LINEAR <-> HWC) where neighbours disagree, a change of float precision at the boundaries of
// layers run in reduced precision (--fp16/--bf16), and the copy before an in-place op whose input
// is still needed.
#include <cstring>

#include "../../common/dtype_dispatch.h"
#include "../../common/view_copy.h"
#include "reformat.h"

namespace opforge::ops {

OPFORGE_OP(Reformat, "opforge::Reformat")
    .kind("reformat")
    .doc(
        "Copies a tensor into another memory format and/or float precision (inserted by the "
        "builder).")
    .input("x")
    .output("y")
    .attr<int64_t>("to_format", -1, "target Format; -1 keeps the input's")
    .attr<int64_t>("to_dtype", 0,
                   "target DataType (FP32, FP16 or BF16 from a float type); 0 keeps the input's")
    .check([](const AttrMap& a) -> Status {
      int64_t t = a.get<int64_t>("to_dtype");
      if (t != 0 && !isFloatType(static_cast<DataType>(t)))
        return Status::invalid("attribute 'to_dtype' must be a float type, got " +
                               std::to_string(t));
      return Status::ok();
    })
    .shape([](ShapeContext& c) -> Result<SymDesc> {
      SymDesc y = c.input(0).like();
      int64_t t = c.attr<int64_t>("to_dtype");
      if (t != 0) {
        if (!isFloatType(y.dtype))
          return c.error("can only change the precision of float tensors, got " +
                         dtypeName(y.dtype));
        y.dtype = static_cast<DataType>(t);
      }
      return y;
    })
    .cpu([](KernelContext&, std::span<const Tensor> in, std::span<const Tensor> out) -> Status {
      const Tensor &x = in[0], &y = out[0];
      const int r = x.desc.rank();
      const bool same_layout = formatsShareBytes(x.desc.format, y.desc.format, x.desc.dims);
      const bool same_type = x.desc.dtype == y.desc.dtype;
      if (same_layout && same_type) {
        if (y.bytes()) std::memcpy(y.data, x.data, y.bytes());
        return Status::ok();
      }
      const size_t es = dtypeSize(x.desc.dtype);
      std::vector<int64_t> idx(r, 0);
      const int64_t n = x.numel();
      const auto* src = static_cast<const uint8_t*>(x.data);
      auto* dst = static_cast<uint8_t*>(y.data);
      for (int64_t i = 0; i < n; ++i) {
        const int64_t si = same_layout ? i : physicalOffset(x.desc, idx.data());
        const int64_t di = same_layout ? i : physicalOffset(y.desc, idx.data());
        if (same_type)
          std::memcpy(dst + di * es, src + si * es, es);
        else
          storeFromDouble(dst, y.desc.dtype, di, loadAsDouble(src, x.desc.dtype, si));
        for (int a = r - 1; a >= 0; --a) {
          if (++idx[a] < x.desc.dims[a]) break;
          idx[a] = 0;
        }
      }
      return Status::ok();
    })
    // Between formats that store the tensor alike, in a plan's storage of its input: nothing to
    // do; given its own buffer (autotuning, the op tests) it copies the bytes.
    .viewTactic((1 << 30) + 1, "cpu.view", copyUnlessInPlace, reformatIsView);

}  // namespace opforge::ops
