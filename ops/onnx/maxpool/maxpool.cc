// ONNX MaxPool: maximum over each window (padding never wins). The optional Indices output holds
// the flat index of the chosen element over (N, C, D1, ...) — row-major, or with the spatial axes
// column-major when storage_order = 1.
#include "../common/combos.h"
#include "../common/pooling.h"

namespace opforge::ops {
OPFORGE_OP(MaxPool, "ai.onnx::MaxPool")
    .kind("pooling")
    .doc("Max pooling over N-D windows.")
    .combos(comboTypes(kFloats | kSigned | kUnsigned) + ", " +
            comboTypes(kFloats | kSigned | kUnsigned) + ", INT64")
    // Channels-last: 2-D windows without Indices, CUDA tactic 3 (cuda.nhwc).
    .combo(Combo("FP32|FP16|BF16, FP32|FP16|BF16, INT64", "HWC").tactics({3}))
    .input("X")
    .output("Y")
    .optionalOutput("Indices", "INT64; an empty tensor when the ONNX node does not list it")
    .with(windowAttrs)
    .attr<int64_t>("ceil_mode", int64_t{0})
    .attr<int64_t>("storage_order", int64_t{0})
    .with(onnxOutputsAttr)
    .shape([](ShapeContext& c) -> Result<std::vector<SymDesc>> {
      OPFORGE_ASSIGN_OR_RETURN(SymDesc y, poolShape(c, kFloats | kSigned | kUnsigned));
      // Indices: empty when the ONNX node does not ask for them (nothing is computed then).
      const int64_t asked = c.attr<int64_t>("_onnx_num_outputs");
      SymDesc idx = SymDesc::make(DataType::kInt64, y.dims);
      if (asked == 1) idx.dims = {0};
      return std::vector<SymDesc>{y, idx};
    })
    .cpu([](KernelContext& k, std::span<const Tensor> in, std::span<const Tensor> out) -> Status {
      const Tensor& x = in[0];
      OPFORGE_ASSIGN_OR_RETURN(Window w, poolWindow(k.attrs(), x.desc.rank()));
      const std::vector<int64_t> isz(x.desc.dims.begin() + 2, x.desc.dims.end());
      const std::vector<int64_t> osz(out[0].desc.dims.begin() + 2, out[0].desc.dims.end());
      resolvePads(w, isz);
      const int64_t planes = x.desc.dims[0] * x.desc.dims[1], ip = prodOf(isz, 0, w.nd),
                    op = prodOf(osz, 0, w.nd);
      const bool col_major = k.attr<int64_t>("storage_order") == 1;
      const WindowRanges rg = windowRanges(w, isz, osz);
      auto* pi =
          out.size() > 1 && out[1].numel() > 0 ? static_cast<int64_t*>(out[1].data) : nullptr;
      return visitTypes<kFloats | kSigned | kUnsigned>(
          x.desc.dtype, "MaxPool", [&](auto num) -> Status {
            using N = decltype(num);
            using C = typename N::C;
            const auto* px = ptrOf<N>(x);
            auto* py = mutPtr<N>(out[0]);
            for (int64_t p = 0; p < planes; ++p) {
              const auto* xp = px + p * ip;
              if (!pi && w.nd == 2) {  // the common 2-D case: direct loops over the valid taps
                const int64_t W = isz[1];
                for (int64_t oh = 0; oh < osz[0]; ++oh)
                  for (int64_t ow = 0; ow < osz[1]; ++ow) {
                    C best = std::numeric_limits<C>::lowest();
                    if constexpr (std::is_floating_point_v<C>)
                      best = -std::numeric_limits<C>::infinity();
                    bool nan = false;
                    for (int64_t jh = rg.lo[0][oh]; jh < rg.hi[0][oh]; ++jh) {
                      const auto* row = xp + (rg.start[0][oh] + jh * w.d[0]) * W + rg.start[1][ow];
                      for (int64_t jw = rg.lo[1][ow]; jw < rg.hi[1][ow]; ++jw) {
                        const C v = N::load(row[jw * w.d[1]]);
                        if constexpr (std::is_floating_point_v<C>) nan |= v != v;
                        best = std::max(best, v);
                      }
                    }
                    if constexpr (std::is_floating_point_v<C>)
                      if (nan) best = std::numeric_limits<C>::quiet_NaN();
                    py[p * op + oh * osz[1] + ow] = N::store(best);
                  }
                continue;
              }
              if (!pi) {  // values only: a branch-free maximum, NaN propagated afterwards
                forEachPoolWindow(w, isz, osz,
                                  [&](int64_t o, const int64_t* taps, int64_t n, int64_t) {
                                    C best = std::numeric_limits<C>::lowest();
                                    if constexpr (std::is_floating_point_v<C>)
                                      best = -std::numeric_limits<C>::infinity();
                                    bool nan = false;
                                    for (int64_t t = 0; t < n; ++t) {
                                      const C v = N::load(xp[taps[t]]);
                                      if constexpr (std::is_floating_point_v<C>) nan |= v != v;
                                      best = std::max(best, v);
                                    }
                                    if constexpr (std::is_floating_point_v<C>)
                                      if (nan) best = std::numeric_limits<C>::quiet_NaN();
                                    py[p * op + o] = N::store(best);
                                  });
                continue;
              }
              forEachPoolWindow(
                  w, isz, osz, [&](int64_t o, const int64_t* taps, int64_t n, int64_t) {
                    C best = std::numeric_limits<C>::lowest();
                    if constexpr (std::is_floating_point_v<C>)
                      best = -std::numeric_limits<C>::infinity();
                    int64_t arg = -1;
                    for (int64_t t = 0; t < n; ++t) {
                      const C v = N::load(xp[taps[t]]);
                      bool take = arg < 0 || v > best;
                      if constexpr (std::is_floating_point_v<C>)
                        take = take || (std::isnan(v) && !std::isnan(best));
                      if (take) {
                        best = v;
                        arg = taps[t];
                      }
                    }
                    py[p * op + o] = N::store(best);
                    if (pi) {
                      int64_t idx = arg;
                      if (col_major && arg >= 0) {  // reverse the order of the spatial axes
                        int64_t rem = arg, mul = 1;
                        idx = 0;
                        std::vector<int64_t> coord(w.nd);
                        for (int a = w.nd - 1; a >= 0; --a) coord[a] = rem % isz[a], rem /= isz[a];
                        for (int a = 0; a < w.nd; ++a) idx += coord[a] * mul, mul *= isz[a];
                      }
                      pi[p * op + o] = p * ip + idx;
                    }
                  });
            }
            return Status::ok();
          });
    });
}  // namespace opforge::ops
