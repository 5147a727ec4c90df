// ONNX Gather: takes slices of `data` along `axis` at `indices` (negative indices count from the
// end). Out = data[:axis] + indices.shape + data[axis+1:]. An index out of range is a run-time
// error naming the value and its position (never an out-of-bounds read). Shape values pass
// through (Shape -> Gather(index) chains).
#include <cstring>

#include "../common/combos.h"
#include "../common/kernel_axis.h"
#include "../common/util.h"

namespace opforge::ops {
OPFORGE_OP(Gather, "ai.onnx::Gather")
    .kind("movement")
    .doc("Gathers slices along an axis.")
    .combos(comboTypes(kAll) + ", " + kIndexTypes + ", " + comboTypes(kAll))
    .valueInput("data")
    .valueInput("indices", false, "INT32 or INT64")
    .output("output")
    .attr<int64_t>("axis", int64_t{0})
    .shape([](ShapeContext& c) -> Result<SymDesc> {
      SymDesc x = c.input(0), idx = c.input(1);
      if (!isIntIndex(idx.dtype))
        return c.error("input 'indices' must be INT32 or INT64, got " + dtypeName(idx.dtype));
      if (x.rank() == 0) return c.error("input 'data' must have rank >= 1");
      OPFORGE_ASSIGN_OR_RETURN(int axis, normAxis(c, c.attr<int64_t>("axis"), x.rank()));
      std::vector<DimExpr> dims(x.dims.begin(), x.dims.begin() + axis);
      dims.insert(dims.end(), idx.dims.begin(), idx.dims.end());
      dims.insert(dims.end(), x.dims.begin() + axis + 1, x.dims.end());
      // Shape values: known indices into a known 1-D value list.
      auto vx = c.value(0), vi = c.value(1);
      if (x.rank() == 1 && idx.rank() <= 1 && vx && vi) {
        const int64_t n = static_cast<int64_t>(vx->size());
        std::vector<DimExpr> out;
        for (const auto& i : *vi) {
          if (!i.isConst()) break;
          int64_t j = i.constValue();
          if (!normIndex(j, n))
            return c.error("input 'indices' holds " + std::to_string(i.constValue()) +
                           ", outside [" + std::to_string(-n) + ", " + std::to_string(n - 1) +
                           "] for axis " + std::to_string(axis) + " of size " + std::to_string(n));
          out.push_back((*vx)[j]);
        }
        if (out.size() == vi->size()) c.setValue(0, std::move(out));
      }
      return SymDesc::make(x.dtype, std::move(dims));
    })
    .cpu([](KernelContext& k, std::span<const Tensor> in, std::span<const Tensor> out) -> Status {
      const Tensor &x = in[0], &idx = in[1], &y = out[0];
      const int r = x.desc.rank();
      // Checked here too: a plan whose indices are not constants loads without its shape rule
      // re-run, so an edited axis reaches the kernel (heap-buffer-overflow found by fuzz_plan).
      OPFORGE_ASSIGN_OR_RETURN(const int axis, kernelAxis(k.attr<int64_t>("axis"), r));
      const size_t es = dtypeSize(x.desc.dtype);
      const int64_t n = x.desc.dims[axis], ni = idx.numel();
      std::vector<int64_t> ids(static_cast<size_t>(ni));
      for (int64_t i = 0; i < ni; ++i) {
        int64_t j = readIndex(idx.data, idx.desc.dtype, i);
        if (!normIndex(j, n))
          return indexError("indices", readIndex(idx.data, idx.desc.dtype, i), i, n, axis);
        ids[i] = j;
      }
      // An empty output may have other dims whose product (in bytes) overflows; a non-empty one
      // holds every product below.
      if (y.numel() == 0) return Status::ok();
      const int64_t outer = prodOf(x.desc.dims, 0, axis),
                    inner = prodOf(x.desc.dims, axis + 1, r) * static_cast<int64_t>(es);
      const auto* px = static_cast<const uint8_t*>(x.data);
      auto* py = static_cast<uint8_t*>(y.data);
      for (int64_t o = 0; o < outer; ++o)
        for (int64_t i = 0; i < ni; ++i)
          if (inner) std::memcpy(py + (o * ni + i) * inner, px + (o * n + ids[i]) * inner, inner);
      return Status::ok();
    });
}  // namespace opforge::ops
