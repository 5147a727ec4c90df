// ONNX Unique (opset 11): the unique elements of the flattened input, or the unique slices along
// `axis`, with (optional outputs) the index of each one's first occurrence, the inverse indices
// (which unique entry each input element or slice is) and the counts. sorted = 1 (default): in
// ascending order (slices lexicographically, element by element in row-major order); sorted = 0:
// in order of first occurrence. Elements compare as numbers (unique.h: NaN equals NaN and sorts
// last, -0 equals +0); each unique entry is its first occurrence. The number of unique entries U
// is data dependent: a size tensor bounded by the element (slice) count.
//   Y: [U] (no axis) or the input's shape with the axis U long; indices, counts: INT64 [U];
//   inverse_indices: INT64 [element count] or [axis length].
#include "unique.h"

#include <algorithm>
#include <cstring>
#include <numeric>

#include "../common/util.h"

namespace opforge::ops {
namespace {

// The input seen as [outer, len, inner] around the axis (flattened: [1, numel, 1]).
struct Geom {
  int64_t outer = 1, len = 1, inner = 1;
  int axis = -1;
};
Geom geomOf(const AttrMap& a, const std::vector<int64_t>& d) {
  Geom g;
  const int r = static_cast<int>(d.size());
  if (!a.has("axis")) {
    g.len = prodOf(d, 0, r);
    return g;
  }
  g.axis = wrapAxis(a.get<int64_t>("axis"), r);
  g.outer = prodOf(d, 0, g.axis);
  g.len = d[g.axis];
  g.inner = prodOf(d, g.axis + 1, r);
  return g;
}

}  // namespace

OPFORGE_OP(Unique, "ai.onnx::Unique")
    .doc("Unique elements (or slices along an axis), first indices, inverse indices and counts.")
    .input("X")
    .output("Y", "the unique elements or slices; U of them (data dependent)")
    .optionalOutput("indices", "INT64 [U]: the first occurrence of each")
    .optionalOutput("inverse_indices", "INT64 [element count or axis length]")
    .optionalOutput("counts", "INT64 [U]")
    .optionalAttr<int64_t>("axis", "the axis whose slices are compared; absent: flatten")
    .attr<int64_t>("sorted", int64_t{1}, "1: ascending; 0: order of first occurrence")
    .check([](const AttrMap& a) -> Status {
      const int64_t s = a.get<int64_t>("sorted");
      if (s != 0 && s != 1)
        return Status::invalid("sorted must be 0 or 1, got " + std::to_string(s));
      return Status::ok();
    })
    .shape([](ShapeContext& c) -> Result<std::vector<SymDesc>> {
      SymDesc x = c.input(0);
      OPFORGE_RETURN_IF_ERROR(checkType(c, "input 'X'", x.dtype, kNumeric | kBools));
      int axis = -1;
      if (c.attrs().has("axis")) {
        if (x.rank() == 0) return c.error("'axis' is given but input 'X' is a scalar");
        OPFORGE_ASSIGN_OR_RETURN(axis, normAxis(c, c.attr<int64_t>("axis"), x.rank(), "axis"));
      }
      const DimExpr len = axis >= 0 ? x.dim(axis) : product(x.dims);
      const DimExpr u = c.sizeTensor(len, len, DataType::kInt64).expr();
      SymDesc y = SymDesc::make(x.dtype, {u});
      if (axis >= 0) {
        y = x.like();
        y.dims[axis] = u;
      }
      return std::vector<SymDesc>{y, SymDesc::make(DataType::kInt64, {u}),
                                  SymDesc::make(DataType::kInt64, {len}),
                                  SymDesc::make(DataType::kInt64, {u})};
    })
    .cpu([](KernelContext& k, std::span<const Tensor> in, std::span<const Tensor> out) -> Status {
      const Tensor& x = in[0];
      const Geom g = geomOf(k.attrs(), x.desc.dims);
      const bool sorted = k.attr<int64_t>("sorted") != 0;
      const int64_t n = g.len;
      return visitTypes<kNumeric | kBools>(x.desc.dtype, "Unique", [&](auto num) -> Status {
        using N = decltype(num);
        const auto* px = ptrOf<N>(x);
        // Slice j, element e (row-major over the other axes): x[o, j, i], e = o * inner + i.
        auto at = [&](int64_t j, int64_t e) {
          return N::load(px[((e / g.inner) * n + j) * g.inner + e % g.inner]);
        };
        const int64_t m = g.outer * g.inner;
        auto cmp = [&](int64_t a, int64_t b) {
          for (int64_t e = 0; e < m; ++e)
            if (int c = uniqueCompare(at(a, e), at(b, e))) return c;
          return 0;
        };
        std::vector<int64_t> order(static_cast<size_t>(n));
        std::iota(order.begin(), order.end(), 0);
        std::stable_sort(order.begin(), order.end(),
                         [&](int64_t a, int64_t b) { return cmp(a, b) < 0; });
        // Groups of equal slices in sorted order; the first of each is its first occurrence.
        std::vector<int64_t> first, counts, group(static_cast<size_t>(n));
        for (int64_t q = 0; q < n; ++q) {
          if (q == 0 || cmp(order[q - 1], order[q]) != 0) {
            first.push_back(order[q]);
            counts.push_back(0);
          }
          ++counts.back();
          group[order[q]] = static_cast<int64_t>(first.size()) - 1;
        }
        const int64_t u = static_cast<int64_t>(first.size());
        // Unique entry of each group: the sorted position, or the rank of its first occurrence.
        std::vector<int64_t> slot(static_cast<size_t>(u));
        std::iota(slot.begin(), slot.end(), 0);
        if (!sorted) {
          std::vector<int64_t> by_first(static_cast<size_t>(u));
          std::iota(by_first.begin(), by_first.end(), 0);
          std::sort(by_first.begin(), by_first.end(),
                    [&](int64_t a, int64_t b) { return first[a] < first[b]; });
          for (int64_t r = 0; r < u; ++r) slot[by_first[r]] = r;
        }
        const int64_t capacity = out[1].desc.dims[0];
        if (u > capacity)
          return Status::runtime("Unique found " + std::to_string(u) +
                                 " unique entries; the output holds " + std::to_string(capacity));
        const size_t es = dtypeSize(x.desc.dtype);
        const auto* bx = static_cast<const uint8_t*>(x.data);
        auto* by = static_cast<uint8_t*>(out[0].data);
        auto* pidx = static_cast<int64_t*>(out[1].data);
        auto* pinv = static_cast<int64_t*>(out[2].data);
        auto* pcnt = static_cast<int64_t*>(out[3].data);
        for (int64_t gi = 0; gi < u; ++gi) {
          const int64_t s = slot[gi], j = first[gi];
          pidx[s] = j;
          pcnt[s] = counts[gi];
          for (int64_t o = 0; o < g.outer; ++o)
            std::memcpy(by + static_cast<size_t>((o * u + s) * g.inner) * es,
                        bx + static_cast<size_t>((o * n + j) * g.inner) * es,
                        static_cast<size_t>(g.inner) * es);
        }
        for (int64_t j = 0; j < n; ++j) pinv[j] = slot[group[j]];
        *static_cast<int64_t*>(out[4].data) = u;
        return Status::ok();
      });
    });
}  // namespace opforge::ops
