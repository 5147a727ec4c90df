// ONNX MelWeightMatrix (opset 17): the [floor(dft_length / 2) + 1, num_mel_bins] matrix of
// triangular mel filters (peak 1) that maps a linear spectrogram to mel bins (the arithmetic and
// the reference's quirks in melweightmatrix.h). num_mel_bins, dft_length and sample_rate are
// INT32/INT64 scalars, lower_edge_hertz and upper_edge_hertz float scalars; the output has
// output_datatype (default FLOAT; integer types truncate, so only the peaks stay 1).
// num_mel_bins and dft_length decide the output shape and must be known when the network is built
// (constants, or computed from shapes); the shape rule checks every value it knows, the kernels
// read all five at run time and check them again.
#include "melweightmatrix.h"

#include <vector>

#include "../common/util.h"

namespace opforge::ops {

namespace {

constexpr unsigned kMelTypes = kNumeric;

Status checkScalar(const ShapeContext& c, int i, const char* name, unsigned types,
                   const char* type_text) {
  const SymDesc d = c.input(i);
  if (!inTypeSet(d.dtype, types))
    return c.error(std::string("input '") + name + "' must be " + type_text + ", got " +
                   dtypeName(d.dtype));
  if (d.rank() > 1 || (d.rank() == 1 && !isConstEq(d.dim(0), 1)))
    return c.error(std::string("input '") + name + "' must be a scalar, got " + toString(d.dims));
  return Status::ok();
}

// A float scalar's constant value, when the builder knows it.
std::optional<double> constNumber(const ShapeContext& c, int i) {
  const TensorValue* t = c.constant(i);
  if (!t || t->desc.numel() != 1) return std::nullopt;
  return loadAsDouble(t->data.data(), t->desc.dtype, 0);
}

}  // namespace

OPFORGE_OP(MelWeightMatrix, "ai.onnx::MelWeightMatrix")
    .doc("Triangular mel filter bank weights for a linear spectrogram.")
    .valueInput("num_mel_bins", false, "INT32/INT64 scalar > 0, known when the network is built")
    .valueInput("dft_length", false, "INT32/INT64 scalar > 0, known when the network is built")
    .valueInput("sample_rate", false, "INT32/INT64 scalar > 0")
    .valueInput("lower_edge_hertz", false, "float scalar, >= 0 and < upper_edge_hertz")
    .valueInput("upper_edge_hertz", false, "float scalar, <= sample_rate / 2")
    .output("output", "[floor(dft_length / 2) + 1, num_mel_bins] of output_datatype")
    .attr<int64_t>("output_datatype", int64_t{1}, "ONNX data type of the output (default FLOAT)")
    .check([](const AttrMap& a) -> Status {
      const int64_t t = a.get<int64_t>("output_datatype");
      if (!isKnownDataType(static_cast<int32_t>(t)) ||
          !inTypeSet(static_cast<DataType>(t), kMelTypes))
        return Status::invalid("output_datatype " + std::to_string(t) +
                               " is not a numeric ONNX data type opforge has");
      return Status::ok();
    })
    .shape([](ShapeContext& c) -> Result<SymDesc> {
      static const char* names[] = {"num_mel_bins", "dft_length", "sample_rate", "lower_edge_hertz",
                                    "upper_edge_hertz"};
      for (int i = 0; i < 3; ++i)
        OPFORGE_RETURN_IF_ERROR(checkScalar(c, i, names[i], kI32 | kI64, "INT32 or INT64"));
      for (int i = 3; i < 5; ++i)
        OPFORGE_RETURN_IF_ERROR(checkScalar(c, i, names[i], kFloats, "a float type"));
      OPFORGE_ASSIGN_OR_RETURN(auto bins, needValue(c, 0, "num_mel_bins"));
      OPFORGE_ASSIGN_OR_RETURN(auto dft, needValue(c, 1, "dft_length"));
      if (bins.size() != 1 || dft.size() != 1)
        return c.error("inputs 'num_mel_bins' and 'dft_length' must hold one value each");
      // Check every value known now (the kernels check them all again at run time).
      MelParams p;
      if (bins[0].isConst()) {
        p.bins = bins[0].constValue();
        if (p.bins <= 0) return c.error(melProblem(p, 0));
      } else {
        c.require(DimExpr(1), DimAssertion::Op::kLe, bins[0], "num_mel_bins must be > 0");
      }
      if (dft[0].isConst()) {
        p.dft = dft[0].constValue();
        if (p.dft <= 0) return c.error(melProblem(p, 1));
      } else {
        c.require(DimExpr(1), DimAssertion::Op::kLe, dft[0], "dft_length must be > 0");
      }
      const auto rate = c.value(2);
      const bool rate_known = rate && rate->size() == 1 && (*rate)[0].isConst();
      if (rate_known) {
        p.rate = (*rate)[0].constValue();
        if (p.rate <= 0) return c.error(melProblem(p, 2));
      }
      const auto lower = constNumber(c, 3), upper = constNumber(c, 4);
      if (lower) {
        p.lower = *lower;
        if (!(p.lower >= 0)) return c.error(melProblem(p, 3));
      }
      if (lower && upper) {
        p.upper = *upper;
        if (!(p.lower < p.upper)) return c.error(melProblem(p, 3));
      }
      if (upper && rate_known) {
        p.upper = *upper;
        if (!(p.upper <= static_cast<double>(p.rate) / 2)) return c.error(melProblem(p, 4));
      }
      const std::vector<DimExpr> dims = {floorDiv(dft[0], 2) + 1, bins[0]};
      OPFORGE_RETURN_IF_ERROR(checkElementCount(c, dims, "output"));
      return SymDesc::make(static_cast<DataType>(c.attr<int64_t>("output_datatype")), dims);
    })
    .cpu([](KernelContext&, std::span<const Tensor> in, std::span<const Tensor> out) -> Status {
      MelParams p;
      p.bins = readInts(in[0]).at(0);
      p.dft = readInts(in[1]).at(0);
      p.rate = readInts(in[2]).at(0);
      p.lower = readDoubles(in[3]).at(0);
      p.upper = readDoubles(in[4]).at(0);
      if (const int bad = melBadInput(p); bad >= 0) return Status::invalid(melProblem(p, bad));
      const int64_t spec = out[0].desc.dims[0], bins = out[0].desc.dims[1];
      if (p.bins != bins || p.dft / 2 + 1 != spec)
        return Status::invalid("num_mel_bins " + std::to_string(p.bins) + " and dft_length " +
                               std::to_string(p.dft) + " at run time do not give the planned " +
                               "output shape [" + std::to_string(spec) + ", " +
                               std::to_string(bins) + "]");
      return visitTypes<kMelTypes>(out[0].desc.dtype, "MelWeightMatrix", [&](auto num) -> Status {
        using N = decltype(num);
        using C = typename N::C;
        auto* py = mutPtr<N>(out[0]);
        // Column by column, the triangle's points sliding along (no table of bins + 2 points).
        int64_t l = melPoint(p, 0), c = melPoint(p, 1);
        for (int64_t i = 0; i < bins; ++i) {
          const int64_t h = melPoint(p, i + 2);
          for (int64_t j = 0; j < spec; ++j)
            py[j * bins + i] = N::store(static_cast<C>(melWeight(j, l, c, h)));
          l = c;
          c = h;
        }
        return Status::ok();
      });
    });

}  // namespace opforge::ops
