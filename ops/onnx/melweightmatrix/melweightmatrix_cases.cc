// The GPU test cases of ai.onnx::MelWeightMatrix, run by opforge_gpu_onnx_tests (tests/op_cases.h).
// Every input has a fixed type (the case's type list only runs each case once); the output type is
// the attribute. The tactic computes the reference's points in double; each case's points
// (dft_length + 1) hz / sample_rate stay at least 0.0025 from an integer (checked against a float64
// evaluation when the cases were written), so the floors can not differ by an ulp of the math
// library, and every weight is computed and rounded as in the reference: factor 1.
#include "op_cases.h"

namespace opforge::test::cases {

namespace {

// num_mel_bins, dft_length, sample_rate as `it`, the edges as `ft`.
std::vector<In> melInputs(DataType it, DataType ft, double bins, double dft, double rate, double lo,
                          double hi) {
  return {V(it, {}, {bins}), V(it, {}, {dft}), V(it, {}, {rate}), V(ft, {}, {lo}), V(ft, {}, {hi})};
}

}  // namespace

OPFORGE_BUILTIN_CASES(melweightmatrix) {
  // ONNX's node test (8 bins, DFT 16, 8 kHz up to Nyquist) in every output type: FLOAT, UINT8,
  // INT8, UINT16, INT16, INT32, INT64, FLOAT16, DOUBLE, UINT32, UINT64, BFLOAT16 (integer types
  // keep only the peaks).
  for (int64_t t : {1, 2, 3, 4, 5, 6, 7, 10, 11, 12, 13, 16})
    add({"MelWeightMatrix",
         A({{"output_datatype", t}}),
         melInputs(I64, F32, 8, 16, 8192, 0, 4096),
         {F32},
         1,
         false,
         "output type " + std::to_string(t)});
  add({"MelWeightMatrix",
       {},
       melInputs(I32, F32, 40, 512, 16000, 20, 8000),
       {F32},
       1,
       false,
       "INT32"});
  add({"MelWeightMatrix",
       {},
       melInputs(I64, F32, 80, 1024, 22050, 0, 11025),
       {F32},
       1,
       false,
       "80 bins"});
  add({"MelWeightMatrix",
       A({{"output_datatype", int64_t{11}}}),
       melInputs(I64, F64, 10, 63, 8000, 300, 3800),
       {F32},
       1,
       false,
       "odd DFT length, DOUBLE edges"});
  add({"MelWeightMatrix",
       A({{"output_datatype", int64_t{10}}}),
       melInputs(I32, F64, 128, 2048, 48000, 50, 24000),
       {F32},
       1,
       false,
       "128 bins, FLOAT16 output"});
  // More mel bins than spectrogram bins: triangles collapse (left == centre), peaks only.
  add({"MelWeightMatrix",
       {},
       melInputs(I64, F16, 30, 32, 16000, 100, 8000),
       {F32},
       1,
       false,
       "collapsed triangles, FLOAT16 edges"});
  add({"MelWeightMatrix",
       A({{"output_datatype", int64_t{16}}}),
       melInputs(I64, B16, 64, 400, 16000, 125, 7680),
       {F32},
       1,
       false,
       "BFLOAT16 edges and output"});
  // Fractional weights (points 0, 2, 5, 8, 12 of 17 bins).
  for (int64_t t : {1, 10, 11})
    add({"MelWeightMatrix",
         A({{"output_datatype", t}}),
         melInputs(I64, F32, 3, 32, 1000, 0, 500),
         {F32},
         1,
         false,
         "fractional weights, output type " + std::to_string(t)});
  add({"MelWeightMatrix", {}, melInputs(I64, F32, 1, 1, 2, 0, 1), {F32}, 1, false, "1x1"});
  add({"MelWeightMatrix",
       {},
       melInputs(I32, F32, 5, 9, 100, 0, 50),
       {F32},
       1,
       false,
       "upper = rate / 2"});
  add({"MelWeightMatrix",
       {},
       melInputs(I64, F32, 3, 2, 16000, 0, 8000),
       {F32},
       1,
       false,
       "DFT length 2"});
}

}  // namespace opforge::test::cases
