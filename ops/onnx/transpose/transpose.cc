// ONNX Transpose: output axis i is input axis perm[i] (default: reversed), in any format.
#include <cstring>

#include "../../common/view_copy.h"
#include "../common/combos.h"
#include "../common/util.h"

#include "transpose.h"

namespace opforge::ops {

OPFORGE_OP(Transpose, "ai.onnx::Transpose")
    .kind("movement")
    .doc("Permutes the axes.")
    // Channels-last on either side: the copy follows the bytes (bytePermute); a channels-last
    // [N, C, H, W] to a LINEAR [N, H, W, C] by (0, 2, 3, 1), or back by (0, 3, 1, 2), is a view
    // the builder runs in place.
    .combos(comboTypes(kAll), "LINEAR*HWC")
    .valueInput("data")
    .output("transposed")
    .optionalAttr<std::vector<int64_t>>("perm")
    .shape([](ShapeContext& c) -> Result<SymDesc> {
      SymDesc x = c.input(0);
      auto checked = transposePerm(c.attrs(), x.rank());
      if (!checked) return c.error(checked.status().message());
      const std::vector<int>& perm = *checked;
      SymDesc y = x.like();
      for (int i = 0; i < x.rank(); ++i) y.dims[i] = x.dim(perm[i]);
      // Shape values of a small tensor of static dims, permuted (the TorchScript export of F.pad
      // transposes its [-1, 2] pads).
      const DimExpr n = product(x.dims);
      auto v = c.value(0);
      if (v && x.rank() > 1 && n.isConst() && n.constValue() <= 64 &&
          static_cast<int64_t>(v->size()) == n.constValue()) {
        std::vector<int64_t> xd, yd;
        for (int a = 0; a < x.rank(); ++a) xd.push_back(x.dim(a).constValue());
        for (int a = 0; a < x.rank(); ++a) yd.push_back(y.dims[a].constValue());
        const auto xs = stridesOf(xd);
        std::vector<DimExpr> out;
        for (int64_t j = 0; j < n.constValue(); ++j) {
          int64_t rem = j, off = 0;
          for (int a = x.rank() - 1; a >= 0; --a) {
            off += rem % yd[a] * xs[perm[a]];
            rem /= yd[a];
          }
          out.push_back((*v)[off]);
        }
        c.setValue(0, std::move(out));
      }
      return y;
    })
    .cpu([](KernelContext& k, std::span<const Tensor> in, std::span<const Tensor> out) -> Status {
      const Tensor &x = in[0], &y = out[0];
      const int r = x.desc.rank();
      OPFORGE_ASSIGN_OR_RETURN(const auto perm, transposePerm(k.attrs(), r));
      OPFORGE_RETURN_IF_ERROR(checkTransposed(x.desc, y.desc, perm));
      const BytePermute b = bytePermute(x.desc, y.desc, perm);
      if (x.data == y.data) {  // a view in place (the builder's transpose_views_in_place)
        if (b.identity()) return Status::ok();
        return Status::invalid("Transpose " + describe(x.desc) + " -> " + describe(y.desc) +
                               " moves bytes and cannot run in place");
      }
      const auto xs = stridesOf(b.dims);
      std::vector<int64_t> yd(r), st(r);
      for (int j = 0; j < r; ++j) {
        yd[j] = b.dims[b.perm[j]];
        st[j] = xs[b.perm[j]];
      }
      return visitBySize(x.desc.dtype, "Transpose", [&](auto num) -> Status {
        using S = typename decltype(num)::S;
        const S* px = static_cast<const S*>(x.data);
        S* py = static_cast<S*>(y.data);
        forEachRun(yd, {st}, [&](int64_t o, const int64_t* off, int64_t n, const int64_t* s) {
          for (int64_t i = 0; i < n; ++i) py[o + i] = px[off[0] + i * s[0]];
        });
        return Status::ok();
      });
    })
    // In a plan's storage of its input it writes nothing; given its own buffer (autotuning, the
    // op tests) it copies the bytes.
    .viewTactic((1 << 30) + 1, "cpu.view", copyUnlessInPlace, transposeIsView);
}  // namespace opforge::ops
