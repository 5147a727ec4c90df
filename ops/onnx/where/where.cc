// ONNX Where: condition ? X : Y with numpy broadcasting of all three inputs.
#include "../common/binary.h"
#include "../common/combos.h"

namespace opforge::ops {
OPFORGE_OP(Where, "ai.onnx::Where")
    .doc("Elementwise select: condition ? X : Y, broadcast.")
    .combos(std::string("BOOL, ") + comboTypes(kAll) + ", " + comboTypes(kAll) + ", " +
            comboTypes(kAll))
    .valueInput("condition")
    .valueInput("X")
    .valueInput("Y")
    .output("output")
    .shape([](ShapeContext& c) -> Result<SymDesc> {
      SymDesc cond = c.input(0), x = c.input(1), y = c.input(2);
      if (cond.dtype != DataType::kBool)
        return c.error("input 'condition' must be BOOL, got " + dtypeName(cond.dtype));
      if (x.dtype != y.dtype)
        return c.error("inputs 'X' and 'Y' must have one type, got " + dtypeName(x.dtype) +
                       " and " + dtypeName(y.dtype));
      OPFORGE_RETURN_IF_ERROR(checkType(c, "input 'X'", x.dtype, kAll));
      OPFORGE_ASSIGN_OR_RETURN(auto dims, broadcastAll(c, {cond, x, y}));
      // Shape values: a condition known at build time selects between known values.
      auto vc = c.value(0), vx = c.value(1), vy = c.value(2);
      if (dims.size() <= 1 && vc && vx && vy && isIntIndex(x.dtype)) {
        const size_t n = std::max({vc->size(), vx->size(), vy->size()});
        std::vector<DimExpr> v;
        for (size_t i = 0; i < n && v.size() == i; ++i) {
          auto pick = [&](const std::vector<DimExpr>& a) -> const DimExpr& {
            return a[a.size() == 1 ? 0 : i];
          };
          const DimExpr& ci = pick(*vc);
          if (!ci.isConst()) break;
          v.push_back(ci.constValue() != 0 ? pick(*vx) : pick(*vy));
        }
        if (v.size() == n) c.setValue(0, std::move(v));
      }
      return SymDesc::make(x.dtype, std::move(dims));
    })
    .cpu([](KernelContext&, std::span<const Tensor> in, std::span<const Tensor> out) -> Status {
      const Tensor &cond = in[0], &x = in[1], &y = in[2], &z = out[0];
      return visitBySize(z.desc.dtype, "Where", [&](auto num) -> Status {
        using N = decltype(num);
        const auto* pc = static_cast<const uint8_t*>(cond.data);
        const auto* px = ptrOf<N>(x);
        const auto* py = ptrOf<N>(y);
        auto* pz = mutPtr<N>(z);
        forEachRun(z.desc.dims,
                   {broadcastStrides(cond.desc.dims, z.desc.dims),
                    broadcastStrides(x.desc.dims, z.desc.dims),
                    broadcastStrides(y.desc.dims, z.desc.dims)},
                   [&](int64_t o, const int64_t* off, int64_t n, const int64_t* st) {
                     for (int64_t i = 0; i < n; ++i)
                       pz[o + i] =
                           pc[off[0] + i * st[0]] ? px[off[1] + i * st[1]] : py[off[2] + i * st[2]];
                   });
        return Status::ok();
      });
    })
    .elementwise();
}  // namespace opforge::ops
