// ONNX Col2Im (opset 18): rearranges column blocks back into an image, summing where blocks
// overlap (the inverse of im2col, as torch.nn.Fold). input [N, C * prod(block_shape), L] with L
// the number of block positions; output [N, C, image_shape...]. Element (c, kidx) of column l
// goes to image position l * stride - pad_begin + kidx * dilation (left out where it falls in the
// padding). image_shape (may be symbolic) and block_shape (constants) are INT64, known when the
// network is built. Float types; sums in double.
#include "col2im.h"

#include "../common/util.h"

namespace opforge::ops {

OPFORGE_OP(Col2Im, "ai.onnx::Col2Im")
    .doc("Rearranges column blocks into an image (torch.nn.Fold).")
    .input("input", "[N, C * prod(block_shape), L]")
    .valueInput("image_shape", false, "INT64, the spatial sizes of the image")
    .valueInput("block_shape", false, "INT64, the block (kernel) sizes, constants")
    .output("output", "[N, C, image_shape...]")
    .optionalAttr<std::vector<int64_t>>("dilations", "per spatial axis, >= 1; default 1")
    .optionalAttr<std::vector<int64_t>>("pads", "begin and end per spatial axis, >= 0; default 0")
    .optionalAttr<std::vector<int64_t>>("strides", "per spatial axis, >= 1; default 1")
    .check([](const AttrMap& a) -> Status {
      for (const char* n : {"dilations", "strides"})
        if (a.has(n))
          for (int64_t v : a.get<std::vector<int64_t>>(n))
            if (v < 1 || v > std::numeric_limits<int32_t>::max())
              return Status::invalid(std::string(n) + " must be in [1, 2^31 - 1], got " +
                                     std::to_string(v));
      if (a.has("pads"))
        for (int64_t v : a.get<std::vector<int64_t>>("pads"))
          if (v < 0 || v > std::numeric_limits<int32_t>::max())
            return Status::invalid("pads must be in [0, 2^31 - 1], got " + std::to_string(v));
      return Status::ok();
    })
    .shape([](ShapeContext& c) -> Result<SymDesc> {
      SymDesc x = c.input(0);
      OPFORGE_RETURN_IF_ERROR(checkType(c, "input 'input'", x.dtype, kFloats));
      if (x.rank() != 3)
        return c.error("input 'input' must have rank 3 [N, C * prod(block_shape), L], got " +
                       toString(x.dims));
      for (int i : {1, 2})
        if (c.input(i).dtype != DataType::kInt64)
          return c.error(std::string("input '") + (i == 1 ? "image_shape" : "block_shape") +
                         "' must be INT64, got " + dtypeName(c.input(i).dtype));
      OPFORGE_ASSIGN_OR_RETURN(auto image, needValue(c, 1, "image_shape"));
      OPFORGE_ASSIGN_OR_RETURN(auto block, needInts(c, 2, "block_shape"));
      const size_t nd = block.size();
      if (nd == 0 || image.size() != nd)
        return c.error("'image_shape' (" + std::to_string(image.size()) + " values) and " +
                       "'block_shape' (" + std::to_string(nd) +
                       ") must list the same, non-zero number of spatial axes");
      for (const char* n : {"dilations", "strides"})
        if (c.attrs().has(n) && c.attr<std::vector<int64_t>>(n).size() != nd)
          return c.error(std::string("'") + n + "' must have " + std::to_string(nd) + " values");
      if (c.attrs().has("pads") && c.attr<std::vector<int64_t>>("pads").size() != 2 * nd)
        return c.error("'pads' must have " + std::to_string(2 * nd) + " values");
      const Col2ImGeom g = col2imGeom(c.attrs(), nd);
      int64_t kprod = 1;
      DimExpr blocks = 1;
      std::vector<DimExpr> dims = {x.dim(0), DimExpr()};
      for (size_t d = 0; d < nd; ++d) {
        if (block[d] < 1 || block[d] > std::numeric_limits<int32_t>::max())
          return c.error("'block_shape' value " + std::to_string(block[d]) + " (axis " +
                         std::to_string(d) + ") must be in [1, 2^31 - 1]");
        if (image[d].isConst() && image[d].constValue() < 0)
          return c.error("'image_shape' value " + image[d].toString() + " is negative");
        kprod *= block[d];
        const int64_t span = g.dil[d] * (block[d] - 1) + 1;
        const DimExpr padded = image[d] + (g.pb[d] + g.pe[d] - span);
        if (padded.isConst() && padded.constValue() < 0)
          return c.error("the block of axis " + std::to_string(d) + " (" + std::to_string(span) +
                         " with dilation) is larger than the padded image (" +
                         (image[d] + (g.pb[d] + g.pe[d])).toString() + ")");
        c.require(DimExpr(0), DimAssertion::Op::kLe, padded,
                  "the dilated block must fit the padded image (axis " + std::to_string(d) + ")");
        blocks = blocks * (floorDiv(padded, g.stride[d]) + 1);
        dims.push_back(image[d]);
      }
      if (x.dim(1).isConst() && x.dim(1).constValue() % kprod != 0)
        return c.error("input 'input' dim 1 (" + x.dim(1).toString() +
                       ") is not a multiple of prod(block_shape) = " + std::to_string(kprod));
      dims[1] = floorDiv(x.dim(1), kprod);
      c.require(dims[1] * kprod, DimAssertion::Op::kEq, x.dim(1),
                "input 'input' dim 1 must be a multiple of prod(block_shape)");
      OPFORGE_RETURN_IF_ERROR(requireEq(c, x.dim(2), blocks,
                                        "input 'input' dim 2 must equal the number of block "
                                        "positions the image, blocks, pads and strides give"));
      OPFORGE_RETURN_IF_ERROR(checkElementCount(c, dims, "output"));
      return SymDesc::make(x.dtype, dims);
    })
    .cpu([](KernelContext& k, std::span<const Tensor> in, std::span<const Tensor> out) -> Status {
      const auto& yd = out[0].desc.dims;
      const auto block = readInts(in[2]);
      const size_t nd = block.size();
      const Col2ImGeom g = col2imGeom(k.attrs(), nd);
      const int64_t n = yd[0], ch = yd[1], kprod = prodOf(block, 0, static_cast<int>(nd)),
                    cols = in[0].desc.dims[2], img = prodOf(yd, 2, static_cast<int>(yd.size()));
      std::vector<int64_t> nblk(nd);
      for (size_t d = 0; d < nd; ++d)
        nblk[d] =
            (yd[2 + d] + g.pb[d] + g.pe[d] - (g.dil[d] * (block[d] - 1) + 1)) / g.stride[d] + 1;
      return visitTypes<kFloats>(in[0].desc.dtype, "Col2Im", [&](auto num) -> Status {
        using N = decltype(num);
        using C = typename N::C;
        const auto* px = ptrOf<N>(in[0]);
        auto* py = mutPtr<N>(out[0]);
        std::vector<double> acc(static_cast<size_t>(img));
        std::vector<int64_t> kix(nd), lix(nd);
        for (int64_t b = 0; b < n; ++b)
          for (int64_t c = 0; c < ch; ++c) {
            std::fill(acc.begin(), acc.end(), 0.0);
            for (int64_t kk = 0; kk < kprod; ++kk) {
              for (size_t d = nd, r = static_cast<size_t>(kk); d-- > 0;) {
                kix[d] = static_cast<int64_t>(r) % block[d];
                r /= static_cast<size_t>(block[d]);
              }
              const auto* col = px + ((b * ch + c) * kprod + kk) * cols;
              for (int64_t l = 0; l < cols; ++l) {
                int64_t rem = l, at = 0;
                bool inside = true;
                for (size_t d = nd; d-- > 0;) {
                  lix[d] = rem % nblk[d];
                  rem /= nblk[d];
                }
                for (size_t d = 0; d < nd; ++d) {
                  const int64_t p = lix[d] * g.stride[d] - g.pb[d] + kix[d] * g.dil[d];
                  inside = inside && p >= 0 && p < yd[2 + d];
                  at = at * yd[2 + d] + p;
                }
                if (inside) acc[at] += static_cast<double>(N::load(col[l]));
              }
            }
            for (int64_t i = 0; i < img; ++i)
              py[(b * ch + c) * img + i] = N::store(static_cast<C>(acc[i]));
          }
        return Status::ok();
      });
    });
}  // namespace opforge::ops
