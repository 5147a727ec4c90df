// ONNX Split: cuts the input along `axis` into parts given by the `split` input (opset 13+) or
// attribute (older), else into num_outputs (opset 18) or as many parts as the node has outputs —
// equal parts of ceil(d / n), the last one smaller.
#include <algorithm>
#include <cstring>

#include "../common/bytes.h"
#include "../common/kernel_axis.h"
#include "../common/util.h"

namespace opforge::ops {
OPFORGE_OP(Split, "ai.onnx::Split")
    .doc("Splits a tensor into parts along an axis.")
    .input("input")
    .shapeInput("split", true, "INT64 sizes of the parts (opset 13)")
    .variadicOutput("outputs", "one or more parts")
    .attr<int64_t>("axis", int64_t{0})
    .optionalAttr<std::vector<int64_t>>("split", "opset < 13")
    .optionalAttr<int64_t>("num_outputs", "opset 18")
    .with(onnxOutputsAttr)
    .shape([](ShapeContext& c) -> Result<std::vector<SymDesc>> {
      SymDesc x = c.input(0);
      if (x.rank() == 0) return c.error("input must have rank >= 1");
      OPFORGE_ASSIGN_OR_RETURN(int axis, normAxis(c, c.attr<int64_t>("axis"), x.rank()));
      const DimExpr d = x.dim(axis);
      std::vector<DimExpr> parts;
      std::optional<std::vector<DimExpr>> sizes;
      if (c.hasInput(1)) {
        OPFORGE_ASSIGN_OR_RETURN(auto v, needValue(c, 1, "split"));
        sizes = v;
      } else if (c.attrs().has("split")) {
        std::vector<DimExpr> v;
        for (int64_t s : c.attr<std::vector<int64_t>>("split")) v.emplace_back(s);
        sizes = v;
      }
      if (sizes) {
        DimExpr sum = 0;
        for (const auto& s : *sizes) {
          if (s.isConst() && s.constValue() < 0)
            return c.error("split sizes " + toString(*sizes) + " hold a negative value");
          sum = sum + s;
        }
        OPFORGE_RETURN_IF_ERROR(requireEq(c, sum, d,
                                          "split sizes " + toString(*sizes) +
                                              " must add up to dimension " + std::to_string(axis) +
                                              " of the input"));
        const int64_t listed = c.attr<int64_t>("_onnx_num_outputs");
        if (listed > 0 && static_cast<int64_t>(sizes->size()) != listed)
          return c.error("split sizes " + toString(*sizes) + " give " +
                         std::to_string(sizes->size()) + " parts, but the node lists " +
                         std::to_string(listed) + " outputs");
        parts = *sizes;
      } else {
        int64_t n = c.attrs().has("num_outputs") ? c.attr<int64_t>("num_outputs")
                                                 : c.attr<int64_t>("_onnx_num_outputs");
        if (n <= 0) return c.error("needs the split sizes, num_outputs, or the number of outputs");
        const int64_t listed = c.attr<int64_t>("_onnx_num_outputs");
        if (listed > 0 && n != listed)
          return c.error("num_outputs = " + std::to_string(n) + ", but the node lists " +
                         std::to_string(listed) + " outputs");
        // Checked before the parts are made: a plan's num_outputs must not make the loader hold
        // billions of shapes.
        if (n > (d.isConst() ? std::max<int64_t>(d.constValue(), 1) : int64_t{1} << 16))
          return c.error("cannot split dimension " + std::to_string(axis) + " (" + d.toString() +
                         ") into " + std::to_string(n) + " parts");
        const DimExpr each = ceilDiv(d, n);
        for (int64_t i = 0; i + 1 < n; ++i) parts.push_back(each);
        parts.push_back(d - each * (n - 1));
        if (d.isConst() && (n - 1) * each.constValue() > d.constValue())
          return c.error("cannot split dimension " + std::to_string(axis) + " (" + d.toString() +
                         ") into " + std::to_string(n) + " parts");
      }
      std::vector<SymDesc> out;
      for (const auto& p : parts) {
        SymDesc y = x.like();
        y.dims[axis] = p;
        out.push_back(y);
      }
      return out;
    })
    .cpu([](KernelContext& k, std::span<const Tensor> in, std::span<const Tensor> out) -> Status {
      const Tensor& x = in[0];
      const int r = x.desc.rank();
      OPFORGE_ASSIGN_OR_RETURN(const int axis, kernelAxis(k.attr<int64_t>("axis"), r));
      const size_t es = dtypeSize(x.desc.dtype);
      const int64_t outer = prodOf(x.desc.dims, 0, axis),
                    row = bytesOf(prodOf(x.desc.dims, axis, r), es);
      int64_t at = 0, total = 0;
      for (const Tensor& y : out) total += y.desc.dims[axis];
      if (total != x.desc.dims[axis])
        return Status::invalid("the split sizes add up to " + std::to_string(total) +
                               ", not the input's dimension " + std::to_string(x.desc.dims[axis]));
      // Outputs match the input but on the axis (a loaded plan whose sizes input was dropped by
      // the builder skips the shape rule; a fuzzer's edited dims overran the input here).
      for (const Tensor& y : out) {
        bool same = y.desc.rank() == r;
        for (int a = 0; same && a < r; ++a) same = a == axis || y.desc.dims[a] == x.desc.dims[a];
        if (!same)
          return Status::invalid("an output of shape [" + dimsToString(y.desc.dims) +
                                 "] is not the input's [" + dimsToString(x.desc.dims) +
                                 "] but on axis " + std::to_string(axis));
      }
      for (const Tensor& y : out) {
        const int64_t chunk = bytesOf(prodOf(y.desc.dims, axis, r), es);
        for (int64_t o = 0; o < outer && chunk > 0; ++o)
          std::memcpy(static_cast<uint8_t*>(y.data) + o * chunk,
                      static_cast<const uint8_t*>(x.data) + o * row + at, chunk);
        at += chunk;
      }
      return Status::ok();
    });
}  // namespace opforge::ops
