// ONNX Shape: the input's dimensions as a 1-D INT64 tensor, optionally the slice [start, end)
// (opset 15; clamped like Slice). The values are known symbolically at build time, so
// Shape -> Gather -> Concat -> Reshape chains keep dynamic dimensions.
#include <algorithm>

#include "../common/util.h"

namespace opforge::ops {
namespace {
void range(const AttrMap& a, int r, int64_t* s, int64_t* e) {
  *s = a.get<int64_t>("start");
  *e = a.has("end") ? a.get<int64_t>("end") : r;
  if (*s < 0) *s += r;
  if (*e < 0) *e += r;
  *s = std::clamp<int64_t>(*s, 0, r);
  *e = std::clamp<int64_t>(*e, 0, r);
}
}  // namespace

OPFORGE_OP(Shape, "ai.onnx::Shape")
    .doc("The input's shape.")
    .input("data")
    .output("shape")
    .attr<int64_t>("start", int64_t{0})
    .optionalAttr<int64_t>("end")
    .shape([](ShapeContext& c) -> Result<SymDesc> {
      SymDesc x = c.input(0);
      int64_t s, e;
      range(c.attrs(), x.rank(), &s, &e);
      std::vector<DimExpr> v;
      for (int64_t i = s; i < e; ++i) v.push_back(x.dim(static_cast<int>(i)));
      c.setValue(0, v);
      return SymDesc::make(DataType::kInt64, {static_cast<int64_t>(v.size())});
    })
    .cpu([](KernelContext& k, std::span<const Tensor> in, std::span<const Tensor> out) -> Status {
      int64_t s, e;
      range(k.attrs(), in[0].desc.rank(), &s, &e);
      auto* py = static_cast<int64_t*>(out[0].data);
      for (int64_t i = s; i < e; ++i) py[i - s] = in[0].desc.dims[i];
      return Status::ok();
    });
}  // namespace opforge::ops
