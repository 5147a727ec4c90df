// reduce.h — ONNX's Reduce* family: axes from the attribute (older opsets) or the optional
// `axes` input (ReduceSum since 13, the others since 18), keepdims, noop_with_empty_axes; one
// reference kernel parameterised by the reduction.
//
// Floats accumulate in double, signed integers in int64, unsigned in uint64. Empty reductions
// give the identity: 0 (sums), 1 (product), -inf / +inf (max / min; the type's lowest / highest
// value for integers), NaN (mean of nothing), -inf (log-sum-exp). Max and min propagate NaN.
#pragma once

#include <algorithm>
#include <cmath>

#include "combos.h"
#include "util.h"
#include "wrap.h"

namespace opforge::ops {

enum class ReduceKind { kSum, kMean, kMax, kMin, kProd, kL1, kL2, kSumSquare, kLogSum, kLogSumExp };

// The axes a node reduces (normalised, sorted), from the axes input or attribute. Empty: all
// axes, or none when noop_with_empty_axes is set (*noop = true).
inline Result<std::vector<int>> reduceAxes(const ShapeContext& c, int rank, bool* noop) {
  std::vector<int64_t> axes;
  if (c.hasInput(1)) {
    OPFORGE_ASSIGN_OR_RETURN(axes, needInts(c, 1, "axes"));
  } else if (c.attrs().has("axes")) {
    axes = c.attr<std::vector<int64_t>>("axes");
  }
  *noop = false;
  if (axes.empty()) {
    if (c.attr<int64_t>("noop_with_empty_axes") != 0) {
      *noop = true;
      return std::vector<int>{};
    }
    std::vector<int> all(rank);
    for (int i = 0; i < rank; ++i) all[i] = i;
    return all;
  }
  OPFORGE_ASSIGN_OR_RETURN(auto norm, normAxes(c, axes, rank));
  std::sort(norm.begin(), norm.end());
  return norm;
}

template <unsigned Types>
inline Result<SymDesc> reduceShape(ShapeContext& c) {
  SymDesc x = c.input(0);
  OPFORGE_RETURN_IF_ERROR(checkType(c, "input 'data'", x.dtype, Types));
  if (c.hasInput(1) && !isIntIndex(c.input(1).dtype))
    return c.error("input 'axes' must be INT64, got " + dtypeName(c.input(1).dtype));
  bool noop = false;
  OPFORGE_ASSIGN_OR_RETURN(auto axes, reduceAxes(c, x.rank(), &noop));
  if (noop) return x.like();
  const bool keep = c.attr<int64_t>("keepdims") != 0;
  std::vector<DimExpr> dims;
  for (int a = 0; a < x.rank(); ++a) {
    const bool reduced = std::find(axes.begin(), axes.end(), a) != axes.end();
    if (!reduced)
      dims.push_back(x.dim(a));
    else if (keep)
      dims.push_back(1);
  }
  return SymDesc::make(x.dtype, std::move(dims));
}

// Run time: the reduced axes as a mask over the input's axes.
inline std::vector<bool> reducedMask(KernelContext& k, std::span<const Tensor> in, bool* noop) {
  const int rank = in[0].desc.rank();
  std::vector<int64_t> axes;
  if (hasIn(in, 1))
    axes = readInts(in[1]);
  else if (k.attrs().has("axes"))
    axes = k.attr<std::vector<int64_t>>("axes");
  *noop = axes.empty() && k.attr<int64_t>("noop_with_empty_axes") != 0;
  std::vector<bool> mask(rank, axes.empty() && !*noop);
  for (int64_t a : axes)
    if (a >= -rank && a < rank) mask[wrapAxis(a, rank)] = true;  // the shape rule checked the range
  return mask;
}

template <ReduceKind K, typename N>
Status reduceKernel(KernelContext& k, std::span<const Tensor> in, std::span<const Tensor> out) {
  using C = typename N::C;
  using Acc = std::conditional_t<
      std::is_floating_point_v<C>, double,
      std::conditional_t<std::is_same_v<C, bool>, uint8_t,
                         std::conditional_t<std::is_signed_v<C>, int64_t, uint64_t>>>;
  const Tensor& x = in[0];
  const Tensor& y = out[0];
  const auto* px = ptrOf<N>(x);
  auto* py = mutPtr<N>(y);
  bool noop = false;
  const auto mask = reducedMask(k, in, &noop);
  if (noop) {
    if (y.bytes()) std::memcpy(y.data, x.data, y.bytes());
    return Status::ok();
  }
  // Strides of the keepdims output, 0 on reduced axes.
  std::vector<int64_t> keep_dims = x.desc.dims;
  for (size_t a = 0; a < mask.size(); ++a)
    if (mask[a]) keep_dims[a] = 1;
  auto ostr = stridesOf(keep_dims);
  for (size_t a = 0; a < mask.size(); ++a)
    if (mask[a]) ostr[a] = 0;
  const int64_t ny = y.numel();
  const int64_t count = ny == 0 ? 0 : x.numel() / std::max<int64_t>(ny, 1);

  Acc init{};
  if constexpr (K == ReduceKind::kProd) init = Acc(1);
  if constexpr (K == ReduceKind::kMax || K == ReduceKind::kLogSumExp) {
    if constexpr (std::is_floating_point_v<Acc>)
      init = -std::numeric_limits<Acc>::infinity();
    else if constexpr (std::is_same_v<C, bool>)
      init = 0;
    else
      init = static_cast<Acc>(std::numeric_limits<C>::lowest());
  }
  if constexpr (K == ReduceKind::kMin) {
    if constexpr (std::is_floating_point_v<Acc>)
      init = std::numeric_limits<Acc>::infinity();
    else if constexpr (std::is_same_v<C, bool>)
      init = 1;
    else
      init = static_cast<Acc>(std::numeric_limits<C>::max());
  }
  std::vector<Acc> acc(static_cast<size_t>(ny), init);
  auto visit = [&](auto&& fn) {
    forEachRun(x.desc.dims, {ostr},
               [&](int64_t o, const int64_t* off, int64_t n, const int64_t* st) {
                 for (int64_t i = 0; i < n; ++i)
                   fn(acc[off[0] + i * st[0]], static_cast<Acc>(N::load(px[o + i])));
               });
  };
  if constexpr (K == ReduceKind::kMax || K == ReduceKind::kMin || K == ReduceKind::kLogSumExp) {
    visit([](Acc& a, Acc v) {
      if constexpr (std::is_floating_point_v<Acc>) {
        if (std::isnan(a)) return;
        if (std::isnan(v)) {
          a = v;
          return;
        }
      }
      if constexpr (K == ReduceKind::kMin)
        a = v < a ? v : a;
      else
        a = a < v ? v : a;
    });
  }
  if constexpr (K == ReduceKind::kLogSumExp) {
    // log(sum(exp(x))) = m + log(sum(exp(x - m))) with m the maximum.
    std::vector<Acc> m = acc;
    std::fill(acc.begin(), acc.end(), Acc(0));
    forEachRun(x.desc.dims, {ostr},
               [&](int64_t o, const int64_t* off, int64_t n, const int64_t* st) {
                 for (int64_t i = 0; i < n; ++i) {
                   const size_t j = static_cast<size_t>(off[0] + i * st[0]);
                   if (std::isfinite(m[j]))
                     acc[j] += std::exp(static_cast<double>(N::load(px[o + i])) - m[j]);
                 }
               });
    for (int64_t j = 0; j < ny; ++j) {
      const double v = std::isfinite(m[j]) ? m[j] + std::log(static_cast<double>(acc[j]))
                                           : static_cast<double>(m[j]);
      py[j] = N::store(static_cast<C>(v));
    }
    return Status::ok();
  } else {
    if constexpr (K == ReduceKind::kSum || K == ReduceKind::kMean || K == ReduceKind::kLogSum)
      visit([](Acc& a, Acc v) { a = wrapAdd(a, v); });
    if constexpr (K == ReduceKind::kProd) visit([](Acc& a, Acc v) { a = wrapMul(a, v); });
    if constexpr (K == ReduceKind::kL1)
      visit([](Acc& a, Acc v) {
        if constexpr (std::is_unsigned_v<Acc>)
          a = wrapAdd(a, v);
        else
          a = wrapAdd(a, v < 0 ? wrapSub(Acc(0), v) : v);
      });
    if constexpr (K == ReduceKind::kL2 || K == ReduceKind::kSumSquare)
      visit([](Acc& a, Acc v) { a = wrapAdd(a, wrapMul(v, v)); });
    for (int64_t j = 0; j < ny; ++j) {
      Acc v = acc[j];
      if constexpr (K == ReduceKind::kMean) {
        if constexpr (std::is_floating_point_v<Acc>)
          v = count ? v / static_cast<Acc>(count) : std::numeric_limits<Acc>::quiet_NaN();
        else
          v = count ? static_cast<Acc>(v / static_cast<Acc>(count)) : Acc(0);
      }
      if constexpr (K == ReduceKind::kL2) v = static_cast<Acc>(std::sqrt(static_cast<double>(v)));
      if constexpr (K == ReduceKind::kLogSum)
        v = static_cast<Acc>(std::log(static_cast<double>(v)));
      py[j] = N::store(static_cast<C>(v));
    }
  }
  return Status::ok();
}

// The definition of ReduceXxx over `Types`.
template <ReduceKind K, unsigned Types>
auto reduceOp(const char* name) {
  return [=](OpDef& d) {
    d.kind("reduction")
        .input("data")
        .valueInput("axes", true, "INT64 axes to reduce (opset 13 ReduceSum, opset 18 the others)")
        .output("reduced")
        .optionalAttr<std::vector<int64_t>>("axes", "axes to reduce (older opsets)")
        .attr<int64_t>("keepdims", int64_t{1})
        .attr<int64_t>("noop_with_empty_axes", int64_t{0})
        .combos(comboTypes(Types) + ", " + kIndexTypes + ", " + comboTypes(Types))
        .shape([](ShapeContext& c) -> Result<SymDesc> { return reduceShape<Types>(c); })
        .cpu([name](KernelContext& k, std::span<const Tensor> in,
                    std::span<const Tensor> out) -> Status {
          return visitTypes<Types>(in[0].desc.dtype, name, [&](auto num) -> Status {
            return reduceKernel<K, decltype(num)>(k, in, out);
          });
        });
  };
}

}  // namespace opforge::ops
