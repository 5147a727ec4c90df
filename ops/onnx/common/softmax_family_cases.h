// The GPU test cases shared by the softmax family (Softmax, LogSoftmax, Hardmax: one shape rule
// and one axis convention, ops/onnx/common/softmax.h). Test code: included only by those ops'
// <op>_cases.cc, which opforge_gpu_onnx_tests compiles (tests/op_cases.h).
#pragma once

#include "op_cases.h"

namespace opforge::test::cases {

inline void softmaxFamilyCases(CaseList& add, const char* op) {
  add({op, {}, {T({3, 4, 37}, -5, 5)}, kF, 10});
  add({op, A({{"axis", int64_t{1}}}), {T({3, 40, 6}, -5, 5)}, kF, 10});
  add({op, {}, {T({2, 3000}, -5, 5)}, {F32, F16}, 10});
  add({op,
       A({{"axis", int64_t{1}}, {"_onnx_opset", int64_t{11}}}),
       {T({2, 3, 5}, -5, 5)},
       {F32},
       10,
       false,
       "opset 11 flattening"});
}

}  // namespace opforge::test::cases
