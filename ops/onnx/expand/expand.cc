// ONNX Expand: broadcasts the input to `shape` (numpy rules in both directions: the output is the
// broadcast of the two shapes). `shape` must be known when the network is built.
#include "../common/binary.h"
#include "../common/combos.h"

namespace opforge::ops {
OPFORGE_OP(Expand, "ai.onnx::Expand")
    .kind("movement")
    .doc("Broadcasts to a shape.")
    .combos(comboTypes(kAll) + ", INT64, " + comboTypes(kAll))
    .valueInput("input")
    .shapeInput("shape", false, "INT64 1-D")
    .output("output")
    .shape([](ShapeContext& c) -> Result<SymDesc> {
      SymDesc x = c.input(0);
      if (c.input(1).dtype != DataType::kInt64 || c.input(1).rank() != 1)
        return c.error("input 'shape' must be a 1-D INT64 tensor, got " +
                       dtypeName(c.input(1).dtype) + toString(c.input(1).dims));
      OPFORGE_ASSIGN_OR_RETURN(auto shape, needValue(c, 1, "shape"));
      for (const auto& d : shape)
        if (d.isConst() && d.constValue() < 0)
          return c.error("shape " + toString(shape) + " holds a negative dimension");
      OPFORGE_ASSIGN_OR_RETURN(auto dims, broadcastShapes(c, x.dims, shape));
      OPFORGE_RETURN_IF_ERROR(checkElementCount(c, dims, "output"));
      if (dims.size() == 1 && x.rank() <= 1)
        if (auto v = c.value(0); v && v->size() == 1 && dims[0].isConst())
          c.setValue(0, std::vector<DimExpr>(static_cast<size_t>(dims[0].constValue()), (*v)[0]));
      return SymDesc::make(x.dtype, std::move(dims));
    })
    .cpu([](KernelContext&, std::span<const Tensor> in, std::span<const Tensor> out) -> Status {
      const Tensor &x = in[0], &y = out[0];
      OPFORGE_RETURN_IF_ERROR(checkBroadcast(x.desc.dims, y.desc.dims, "Expand"));
      return visitBySize(x.desc.dtype, "Expand", [&](auto num) -> Status {
        using S = typename decltype(num)::S;
        const S* px = static_cast<const S*>(x.data);
        S* py = static_cast<S*>(y.data);
        forEachRun(y.desc.dims, {broadcastStrides(x.desc.dims, y.desc.dims)},
                   [&](int64_t o, const int64_t* off, int64_t n, const int64_t* s) {
                     for (int64_t i = 0; i < n; ++i) py[o + i] = px[off[0] + i * s[0]];
                   });
        return Status::ok();
      });
    });
}  // namespace opforge::ops
