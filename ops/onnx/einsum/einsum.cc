// ONNX Einsum: Einstein summation over the labelled axes of the inputs ("bhqd,bhkd->bhqk",
// "...ii->...i", "ij->" ...). Implicit output: the ellipsis axes, then the labels used once, in
// alphabetical order. Ellipsis axes broadcast (numpy); a label repeated within one input takes
// its diagonal. The reference loops over every label combination and accumulates in double
// (64-bit for integers).
#include <algorithm>
#include <map>

#include "../common/util.h"
#include "einsum_parse.h"

namespace opforge::ops {
OPFORGE_OP(Einsum, "ai.onnx::Einsum")
    .kind("gemm")
    .doc("Einstein summation.")
    .variadicInput("Inputs")
    .output("Output")
    .attr<std::string>("equation")
    .shape([](ShapeContext& c) -> Result<SymDesc> {
      std::vector<int> ranks;
      const DataType t = c.input(0).dtype;
      OPFORGE_RETURN_IF_ERROR(checkType(c, "input 0", t, kFloats | kSigned | kUnsigned));
      for (int i = 0; i < c.numInputs(); ++i) {
        if (c.input(i).dtype != t) return c.error("all inputs must have one type");
        ranks.push_back(c.input(i).rank());
      }
      auto p = parseEinsum(c.attr<std::string>("equation"), ranks);
      if (!p) return c.error(p.status().message());
      std::map<int, DimExpr> size;
      for (size_t i = 0; i < p->in.size(); ++i) {
        const SymDesc x = c.input(static_cast<int>(i));
        for (size_t a = 0; a < p->in[i].size(); ++a) {
          const int l = p->in[i][a];
          const DimExpr d = x.dims[a];
          auto it = size.find(l);
          if (it == size.end()) {
            size[l] = d;
          } else if (l >= kEllipsisBase) {
            if (isConstEq(it->second, 1))
              it->second = d;
            else if (!isConstEq(d, 1))
              OPFORGE_RETURN_IF_ERROR(requireEq(c, d, it->second, "ellipsis axes must broadcast"));
          } else {
            OPFORGE_RETURN_IF_ERROR(
                requireEq(c, d, it->second, "every use of a label must have one size"));
          }
        }
      }
      std::vector<DimExpr> dims;
      for (int l : p->out) dims.push_back(size.at(l));
      return SymDesc::make(t, std::move(dims));
    })
    .cpu([](KernelContext& k, std::span<const Tensor> in, std::span<const Tensor> out) -> Status {
      std::vector<int> ranks;
      for (const auto& t : in) ranks.push_back(t.desc.rank());
      OPFORGE_ASSIGN_OR_RETURN(Parsed p, parseEinsum(k.attr<std::string>("equation"), ranks));
      // Every label: its size; output labels first, then the summed ones.
      std::map<int, int64_t> size;
      for (size_t i = 0; i < in.size(); ++i)
        for (size_t a = 0; a < p.in[i].size(); ++a) {
          int64_t& s = size[p.in[i][a]];
          s = std::max(s, in[i].desc.dims[a]);
        }
      std::vector<int> labels = p.out;
      for (const auto& [l, s] : size)
        if (std::find(p.out.begin(), p.out.end(), l) == p.out.end()) labels.push_back(l);
      const size_t nl = labels.size(), no = p.out.size();
      std::vector<int64_t> lsize(nl);
      for (size_t j = 0; j < nl; ++j) lsize[j] = size[labels[j]];
      // Stride of each label in each input (0 where broadcast or absent).
      std::vector<std::vector<int64_t>> st(in.size(), std::vector<int64_t>(nl, 0));
      for (size_t i = 0; i < in.size(); ++i) {
        const auto xs = stridesOf(in[i].desc.dims);
        for (size_t a = 0; a < p.in[i].size(); ++a) {
          const size_t j = static_cast<size_t>(std::find(labels.begin(), labels.end(), p.in[i][a]) -
                                               labels.begin());
          if (in[i].desc.dims[a] != 1 || lsize[j] == 1) st[i][j] += xs[a];
        }
      }
      int64_t nout = 1, nsum = 1;
      for (size_t j = 0; j < nl; ++j) (j < no ? nout : nsum) *= lsize[j];
      return visitTypes<kFloats | kSigned | kUnsigned>(
          out[0].desc.dtype, "Einsum", [&](auto num) -> Status {
            using N = decltype(num);
            using C = typename N::C;
            using Acc =
                std::conditional_t<std::is_floating_point_v<C>, double,
                                   std::conditional_t<std::is_signed_v<C>, int64_t, uint64_t>>;
            auto* py = mutPtr<N>(out[0]);
            std::vector<int64_t> idx(nl, 0);
            for (int64_t o = 0; o < nout; ++o) {
              Acc acc = 0;
              std::fill(idx.begin() + static_cast<long>(no), idx.end(), 0);
              for (int64_t s = 0; s < nsum; ++s) {
                Acc prod = 1;
                for (size_t i = 0; i < in.size(); ++i) {
                  int64_t off = 0;
                  for (size_t j = 0; j < nl; ++j) off += idx[j] * st[i][j];
                  prod *= static_cast<Acc>(N::load(ptrOf<N>(in[i])[off]));
                }
                acc += prod;
                for (size_t j = nl; j-- > no;) {
                  if (++idx[j] < lsize[j]) break;
                  idx[j] = 0;
                }
              }
              py[o] = N::store(static_cast<C>(acc));
              for (size_t j = no; j-- > 0;) {
                if (++idx[j] < lsize[j]) break;
                idx[j] = 0;
              }
            }
            return Status::ok();
          });
    });
}  // namespace opforge::ops
