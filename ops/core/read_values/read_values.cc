// opforge::ReadValues — a small integer tensor whose values a shape needs but which is run-time
// data: its output is its input, and each element is also a data-dependent size (hidden size
// outputs), so that the layers after it are planned with these values as symbols and the runtime
// allocates their tensors once the values are known. Spec: README.md.
#include <cstring>

#include "../../onnx/common/combos.h"
#include "../../onnx/common/util.h"
#include "read_values.h"

namespace opforge::ops {

OPFORGE_OP(ReadValues, "opforge::ReadValues")
    .doc(
        "Passes a small integer tensor through and reads its values as data-dependent sizes "
        "(made by the importer where a shape input is run-time data; see README.md).")
    .combos(kIndexTypes)
    .input("input", "INT32 or INT64, static dims, 1 to 64 elements")
    .output("output", "the input, whose values the shape rules see as symbols")
    .shape([](ShapeContext& c) -> Result<SymDesc> {
      const SymDesc x = c.input(0);
      if (!isIntIndex(x.dtype))
        return c.error("input must be INT32 or INT64, got " + dtypeName(x.dtype));
      const DimExpr count = product(x.dims);
      if (!count.isConst() || count.constValue() < 1 ||
          count.constValue() > read_values::kMaxElements)
        return c.error("input must have static dims and 1 to " +
                       std::to_string(read_values::kMaxElements) + " elements, got " +
                       toString(x.dims));
      std::vector<DimExpr> values;
      for (int64_t j = 0; j < count.constValue(); ++j) {
        // No upper bound (-1): the tensors these values size are allocated when they are known.
        const SizeTensor s =
            c.sizeTensor(DimExpr(read_values::kBias + 1), DimExpr(int64_t{-1}), DataType::kInt64);
        values.push_back(s.expr() - DimExpr(read_values::kBias));
      }
      c.setValue(0, std::move(values));
      return x.like();
    })
    .cpu([](KernelContext&, std::span<const Tensor> in, std::span<const Tensor> out) -> Status {
      const Tensor& x = in[0];
      if (x.data != out[0].data) std::memcpy(out[0].data, x.data, x.bytes());
      const int64_t n = x.numel();
      for (int64_t j = 0; j < n; ++j) {
        const int64_t v = x.desc.dtype == DataType::kInt64 ? static_cast<const int64_t*>(x.data)[j]
                                                           : static_cast<const int32_t*>(x.data)[j];
        *static_cast<int64_t*>(out[1 + j].data) = read_values::biased(v);
      }
      return Status::ok();
    });

}  // namespace opforge::ops
