// opforge::IfSelect — the output of an ONNX If whose condition is known only at run time: the
// importer inlines both branches (their layers guarded by the condition, so only the branch taken
// runs) and selects, per If output, the value of the branch taken. Spec: README.md.
#include <cstring>

#include "../../onnx/common/combos.h"
#include "../../onnx/common/util.h"

namespace opforge::ops {

OPFORGE_OP(IfSelect, "opforge::IfSelect")
    .doc("cond ? then : else for a whole tensor, of the branch an If took (made by the importer).")
    .combos(std::string("BOOL, ") + comboTypes(kAll) + ", " + comboTypes(kAll) + ", " +
            comboTypes(kAll))
    .input("cond", "BOOL, one element")
    .input("then", "the then_branch's value")
    .input("else", "the else_branch's value, of the same type and rank")
    .output("output")
    .attr<std::vector<int64_t>>("axes", {},
                                "axes whose length differs by branch: data-dependent sizes")
    .shape([](ShapeContext& c) -> Result<SymDesc> {
      const SymDesc cond = c.input(0), a = c.input(1), b = c.input(2);
      const DimExpr count = product(cond.dims);
      if (cond.dtype != DataType::kBool || !count.isConst() || count.constValue() != 1)
        return c.error("input 'cond' must be one BOOL element, got " + dtypeName(cond.dtype) + " " +
                       toString(cond.dims));
      if (a.dtype != b.dtype)
        return c.error("the branches give different types: then " + dtypeName(a.dtype) + ", else " +
                       dtypeName(b.dtype));
      if (a.rank() != b.rank())
        return c.error("the branches give different ranks: then " + toString(a.dims) + ", else " +
                       toString(b.dims));
      const auto axes = c.attr<std::vector<int64_t>>("axes");
      std::vector<bool> sized(a.rank(), false);
      for (int64_t x : axes) {
        if (x < 0 || x >= a.rank() || sized[x])
          return c.error("attribute 'axes' has " + std::to_string(x) + ", not a distinct axis of " +
                         "rank " + std::to_string(a.rank()));
        sized[x] = true;
      }
      // The branch taken writes its lengths (hidden size-tensor outputs, in the order of
      // 'axes'); buffers hold the longer of the two.
      SymDesc y = SymDesc::make(a.dtype, a.dims);
      for (int64_t x : axes) {
        const DimExpr most = max(a.dims[x], b.dims[x]);
        y.dims[x] = c.sizeTensor(most, most, DataType::kInt64).expr();
      }
      for (int d = 0; d < a.rank(); ++d)
        if (!sized[d] && !a.dims[d].sameAs(b.dims[d]))
          c.require(a.dims[d], DimAssertion::Op::kEq, b.dims[d],
                    "IfSelect: dim " + std::to_string(d) +
                        " of the branches must agree (it is not in 'axes')");
      return y;
    })
    .cpu([](KernelContext& k, std::span<const Tensor> in, std::span<const Tensor> out) -> Status {
      const bool take_then = *static_cast<const uint8_t*>(in[0].data) != 0;
      const Tensor& src = in[take_then ? 1 : 2];
      if (src.bytes() > out[0].bytes())
        return Status::runtime("IfSelect: the branch taken gives " + describe(src.desc) +
                               ", more than the output holds (" + describe(out[0].desc) + ")");
      if (src.bytes() && src.data != out[0].data) std::memcpy(out[0].data, src.data, src.bytes());
      const auto axes = k.attr<std::vector<int64_t>>("axes");
      for (size_t j = 0; j < axes.size(); ++j)
        *static_cast<int64_t*>(out[1 + j].data) = src.desc.dims[axes[j]];
      return Status::ok();
    });

}  // namespace opforge::ops
