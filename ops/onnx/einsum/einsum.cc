// ONNX Einsum: Einstein summation over the labelled axes of the inputs ("bhqd,bhkd->bhqk",
// "...ii->...i", "ij->" ...). Implicit output: the ellipsis axes, then the labels used once, in
// alphabetical order. Ellipsis axes broadcast (numpy); a label repeated within one input takes
// its diagonal. The reference loops over every label combination and accumulates in double
// (64-bit for integers).
#include <algorithm>
#include <map>

#include "../common/util.h"

namespace opforge::ops {
namespace {

constexpr int kEllipsisBase = 100;

struct Parsed {
  std::vector<std::vector<int>> in;  // labels per input axis
  std::vector<int> out;
};

int labelOf(char ch) {
  return ch >= 'a' && ch <= 'z' ? ch - 'a' : ch >= 'A' && ch <= 'Z' ? 26 + ch - 'A' : -1;
}

// Parses the equation for inputs of the given ranks.
Result<Parsed> parse(std::string eq, const std::vector<int>& ranks) {
  eq.erase(std::remove(eq.begin(), eq.end(), ' '), eq.end());
  const size_t arrow = eq.find("->");
  const std::string lhs = eq.substr(0, arrow);
  std::vector<std::string> terms;
  for (size_t s = 0;;) {
    const size_t comma = lhs.find(',', s);
    terms.push_back(lhs.substr(s, comma == std::string::npos ? std::string::npos : comma - s));
    if (comma == std::string::npos) break;
    s = comma + 1;
  }
  if (terms.size() != ranks.size())
    return Status::invalid("equation '" + eq + "' has " + std::to_string(terms.size()) +
                           " input terms for " + std::to_string(ranks.size()) + " inputs");
  Parsed p;
  int ell = 0;  // axes the ellipsis stands for (the most of any input)
  std::vector<std::pair<std::vector<int>, int>>
      split;  // letters with -1 at the ellipsis, ellipsis size
  for (size_t i = 0; i < terms.size(); ++i) {
    std::vector<int> labels;
    int letters = 0;
    bool has_ell = false;
    const std::string& t = terms[i];
    for (size_t j = 0; j < t.size(); ++j) {
      if (t.compare(j, 3, "...") == 0) {
        if (has_ell) return Status::invalid("term '" + t + "' has two ellipses");
        has_ell = true;
        labels.push_back(-1);
        j += 2;
        continue;
      }
      const int l = labelOf(t[j]);
      if (l < 0)
        return Status::invalid("equation '" + eq + "': '" + std::string(1, t[j]) +
                               "' is not a letter");
      labels.push_back(l);
      ++letters;
    }
    const int e = ranks[i] - letters;
    if (e < 0 || (!has_ell && e != 0))
      return Status::invalid("term '" + t + "' has " + std::to_string(letters) +
                             " labels for an input of rank " + std::to_string(ranks[i]));
    ell = std::max(ell, e);
    split.emplace_back(labels, e);
  }
  for (auto& [labels, e] : split) {
    std::vector<int> axes;
    for (int l : labels) {
      if (l >= 0) {
        axes.push_back(l);
        continue;
      }
      for (int j = 0; j < e; ++j) axes.push_back(kEllipsisBase + ell - e + j);
    }
    p.in.push_back(axes);
  }
  if (arrow != std::string::npos) {
    const std::string rhs = eq.substr(arrow + 2);
    for (size_t j = 0; j < rhs.size(); ++j) {
      if (rhs.compare(j, 3, "...") == 0) {
        for (int k = 0; k < ell; ++k) p.out.push_back(kEllipsisBase + k);
        j += 2;
        continue;
      }
      const int l = labelOf(rhs[j]);
      if (l < 0)
        return Status::invalid("equation '" + eq + "': '" + std::string(1, rhs[j]) +
                               "' is not a letter");
      bool used = false;
      for (const auto& in : p.in) used = used || std::find(in.begin(), in.end(), l) != in.end();
      if (!used)
        return Status::invalid("output label '" + std::string(1, rhs[j]) + "' appears in no input");
      p.out.push_back(l);
    }
  } else {
    for (int k = 0; k < ell; ++k) p.out.push_back(kEllipsisBase + k);
    std::map<int, int> count;
    for (const auto& in : p.in)
      for (int l : in)
        if (l < kEllipsisBase) ++count[l];
    for (const auto& [l, n] : count)
      if (n == 1) p.out.push_back(l);
  }
  return p;
}

}  // namespace

OPFORGE_OP(Einsum, "ai.onnx::Einsum")
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
      auto p = parse(c.attr<std::string>("equation"), ranks);
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
      OPFORGE_ASSIGN_OR_RETURN(Parsed p, parse(k.attr<std::string>("equation"), ranks));
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
