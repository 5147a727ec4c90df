// Shared by the AotKernel tests (aot_kernel_test.cc: CPU, aot_kernel_gpu.cc: GPU): a hand-written
// PTX module and the attributes of a node y = x * a + row (two launches), x FP32 [rows, 8].
#pragma once

#include <string>

#include "aot_spec.h"
#include "opforge/network.h"

namespace opforge::ops::aot::testing {

// scale(x, n, a, y): y[i] = a * x[i] for i < n (128 threads per block, .reqntid).
// add_rows(x, len, y): y[r, c] += r for c < len (one block per row).
inline const char* kPtx =
    ".version 8.0\n"
    ".target sm_90\n"
    ".address_size 64\n"
    "\n"
    ".visible .entry scale(\n"
    "  .param .u64 scale_param_0,\n"
    "  .param .u32 scale_param_1,\n"
    "  .param .f32 scale_param_2,\n"
    "  .param .u64 scale_param_3\n"
    ")\n"
    ".reqntid 128, 1, 1\n"
    "{\n"
    "  .reg .pred %p<2>;\n"
    "  .reg .b32 %r<6>;\n"
    "  .reg .f32 %f<4>;\n"
    "  .reg .b64 %rd<8>;\n"
    "  ld.param.u64 %rd1, [scale_param_0];\n"
    "  ld.param.u32 %r1, [scale_param_1];\n"
    "  ld.param.f32 %f1, [scale_param_2];\n"
    "  ld.param.u64 %rd2, [scale_param_3];\n"
    "  mov.u32 %r2, %ctaid.x;\n"
    "  mov.u32 %r3, %ntid.x;\n"
    "  mov.u32 %r4, %tid.x;\n"
    "  mad.lo.s32 %r5, %r2, %r3, %r4;\n"
    "  setp.ge.s32 %p1, %r5, %r1;\n"
    "  @%p1 bra DONE;\n"
    "  cvta.to.global.u64 %rd3, %rd1;\n"
    "  cvta.to.global.u64 %rd4, %rd2;\n"
    "  mul.wide.s32 %rd5, %r5, 4;\n"
    "  add.s64 %rd6, %rd3, %rd5;\n"
    "  add.s64 %rd7, %rd4, %rd5;\n"
    "  ld.global.f32 %f2, [%rd6];\n"
    "  mul.f32 %f3, %f2, %f1;\n"
    "  st.global.f32 [%rd7], %f3;\n"
    "DONE:\n"
    "  ret;\n"
    "}\n"
    "\n"
    ".visible .entry add_rows(\n"
    "  .param .u64 add_rows_param_0,\n"
    "  .param .u64 add_rows_param_1,\n"
    "  .param .u64 add_rows_param_2\n"
    ")\n"
    "{\n"
    "  .reg .pred %p<2>;\n"
    "  .reg .b32 %r<4>;\n"
    "  .reg .b64 %rd<10>;\n"
    "  .reg .f32 %f<4>;\n"
    "  ld.param.u64 %rd1, [add_rows_param_0];\n"
    "  ld.param.u64 %rd2, [add_rows_param_1];\n"
    "  ld.param.u64 %rd3, [add_rows_param_2];\n"
    "  cvta.to.global.u64 %rd4, %rd1;\n"
    "  cvta.to.global.u64 %rd5, %rd3;\n"
    "  mov.u32 %r1, %ctaid.x;\n"
    "  mov.u32 %r2, %tid.x;\n"
    "  cvt.u64.u32 %rd6, %r1;\n"
    "  mul.lo.s64 %rd7, %rd6, %rd2;\n"
    "  cvt.u64.u32 %rd8, %r2;\n"
    "  setp.ge.u64 %p1, %rd8, %rd2;\n"
    "  @%p1 bra DONE2;\n"
    "  add.s64 %rd7, %rd7, %rd8;\n"
    "  shl.b64 %rd9, %rd7, 2;\n"
    "  add.s64 %rd9, %rd5, %rd9;\n"
    "  ld.global.f32 %f1, [%rd9];\n"
    "  cvt.rn.f32.u32 %f2, %r1;\n"
    "  add.f32 %f3, %f1, %f2;\n"
    "  st.global.f32 [%rd9], %f3;\n"
    "DONE2:\n"
    "  ret;\n"
    "}\n";

inline Bytes bytesOf(const std::string& s) {
  return Bytes{std::vector<uint8_t>(s.begin(), s.end())};
}

// The node's two launches: y = 2.5 x, then y[r, :] += r.
inline const char* kScaleLaunch =
    "kernel=scale; image=0; grid=ceildiv(in0.0*8,128), 1, 1; block=128, 1, 1; shared=0; "
    "args=in0, i32:in0.0*8, f32:2.5, out0";
inline const char* kRowsLaunch =
    "kernel=add_rows; image=0; grid=in0.0, 1, 1; block=8, 1, 1; shared=0; args=in0, i64:8, out0";
inline const std::string kLaunches = std::string(kScaleLaunch) + "\n" + kRowsLaunch;

// The node's attributes; `image` / `launches` / `outputs` replace the defaults.
inline Attrs aotAttrs(const std::string& image = kPtx, const std::string& launches = kLaunches,
                      const std::string& outputs = "FP32[in0.0, 8]", int64_t arch = 90) {
  Bytes b = bytesOf(image);
  const int64_t hash = imageHash(b.data);
  const int64_t size = static_cast<int64_t>(b.data.size());
  return Attrs{{"op", std::string("test::scale_rows")},
               {"origin", std::string("aot_kernel_test")},
               {"images", std::move(b)},
               {"image_sizes", std::vector<int64_t>{size}},
               {"image_hash", hash},
               {"arch", arch},
               {"input_dtypes", std::vector<int32_t>{static_cast<int32_t>(DataType::kFloat32)}},
               {"input_ranks", std::vector<int32_t>{2}},
               {"outputs", outputs},
               {"launches", launches}};
}

// kLaunches as two variants of one node: variant `slow` launches `scale` `repeats` times before
// the real pair (each writes the same y), the other only the pair; both compute the same y.
inline std::string twoVariants(int slow, int repeats) {
  std::string text;
  for (int v = 0; v < 2; ++v) {
    const std::string tag = "variant=" + std::to_string(v) + "; ";
    for (int r = 0; v == slow && r < repeats; ++r) text += tag + kScaleLaunch + "\n";
    text += tag + kScaleLaunch + "\n" + tag + kRowsLaunch + "\n";
  }
  text.pop_back();
  return text;
}

// What the node computes, on the host.
inline std::vector<float> expected(const std::vector<float>& x) {
  std::vector<float> y(x.size());
  for (size_t i = 0; i < x.size(); ++i) y[i] = x[i] * 2.5f + static_cast<float>(i / 8);
  return y;
}

}  // namespace opforge::ops::aot::testing
