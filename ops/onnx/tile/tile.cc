// ONNX Tile: repeats the input repeats[i] times along each axis i. `repeats` must be known when
// the network is built.
#include "../common/combos.h"
#include "../common/util.h"

namespace opforge::ops {
OPFORGE_OP(Tile, "ai.onnx::Tile")
    .doc("Repeats the input along each axis.")
    .combos(comboTypes(kAll) + ", " + kIndexTypes + ", " + comboTypes(kAll))
    .input("input")
    .shapeInput("repeats", false, "INT64 1-D, one value per axis")
    .output("output")
    .shape([](ShapeContext& c) -> Result<SymDesc> {
      SymDesc x = c.input(0);
      OPFORGE_ASSIGN_OR_RETURN(auto rep, needValue(c, 1, "repeats"));
      if (static_cast<int>(rep.size()) != x.rank())
        return c.error("input 'repeats' has " + std::to_string(rep.size()) +
                       " values for an input of rank " + std::to_string(x.rank()));
      SymDesc y = x.like();
      for (int a = 0; a < x.rank(); ++a) {
        if (rep[a].isConst() && rep[a].constValue() < 0)
          return c.error("input 'repeats' holds a negative value " + toString(rep));
        y.dims[a] = x.dim(a) * rep[a];
      }
      OPFORGE_RETURN_IF_ERROR(checkElementCount(c, y.dims, "output"));
      return y;
    })
    .cpu([](KernelContext&, std::span<const Tensor> in, std::span<const Tensor> out) -> Status {
      const Tensor &x = in[0], &y = out[0];
      const int r = x.desc.rank();
      const auto xs = stridesOf(x.desc.dims);
      return visitBySize(x.desc.dtype, "Tile", [&](auto num) -> Status {
        using S = typename decltype(num)::S;
        const S* px = static_cast<const S*>(x.data);
        S* py = static_cast<S*>(y.data);
        std::vector<int64_t> idx(r, 0);
        for (int64_t o = 0; o < y.numel(); ++o) {
          int64_t off = 0;
          for (int a = 0; a < r; ++a) off += (idx[a] % x.desc.dims[a]) * xs[a];
          py[o] = px[off];
          for (int a = r - 1; a >= 0; --a) {
            if (++idx[a] < y.desc.dims[a]) break;
            idx[a] = 0;
          }
        }
        return Status::ok();
      });
    });
}  // namespace opforge::ops
