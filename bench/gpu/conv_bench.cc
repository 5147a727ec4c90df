// opforge_conv_bench: every cuDNN tactic of Conv/FusedConv (legacy algorithms on LINEAR tensors,
// graph-API engines on LINEAR and HWC tensors) timed on the convolutions of a ResNet-50 backbone,
// y = relu(conv(x, w) + b), with CUDA events (median of --reps runs after a warm-up). Each
// tactic's result is compared with the first legacy tactic that runs (max |diff| / max |ref|),
// so a wrong engine shows. Prints one table: per shape the GFLOP, then per family the best
// tactic's time and TFLOP/s.
//
//   opforge_conv_bench [--dtype fp16|fp32|bf16] [--batch N] [--height H --width W] [--reps N]
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "gpu_runner.h"
#include "ops/onnx/common/conv_cuda.h"

using namespace opforge;
using namespace opforge::ops;

namespace {

struct Shape {
  const char* name;
  int64_t c, m, k, s, hin, win;  // input channels, output channels, kernel, stride, input size
};

struct Opts {
  DataType dtype = DataType::kFloat16;
  int64_t batch = 6, h = 256, w = 704;
  int reps = 30;
};

size_t esize(DataType t) {
  return t == DataType::kFloat32 ? 4 : 2;
}

float toFloat(const void* p, DataType t, size_t i) {
  if (t == DataType::kFloat32) return static_cast<const float*>(p)[i];
  uint16_t b = static_cast<const uint16_t*>(p)[i];
  if (t == DataType::kBFloat16) {
    uint32_t u = uint32_t(b) << 16;
    float f;
    std::memcpy(&f, &u, 4);
    return f;
  }
  return __half2float(__half_raw{b});
}

void fill(std::vector<uint8_t>& buf, DataType t, size_t n, std::mt19937& rng, float scale) {
  std::uniform_real_distribution<float> u(-scale, scale);
  buf.resize(n * esize(t));
  for (size_t i = 0; i < n; ++i) {
    float f = u(rng);
    if (t == DataType::kFloat32) {
      std::memcpy(buf.data() + 4 * i, &f, 4);
    } else if (t == DataType::kFloat16) {
      __half h = __float2half(f);
      std::memcpy(buf.data() + 2 * i, &h, 2);
    } else {
      uint32_t v;
      std::memcpy(&v, &f, 4);
      uint16_t b = static_cast<uint16_t>((v + 0x7fff + ((v >> 16) & 1)) >> 16);
      std::memcpy(buf.data() + 2 * i, &b, 2);
    }
  }
}

// x [n, c, s] -> [n, s, c] (element size es).
std::vector<uint8_t> toHwc(const std::vector<uint8_t>& x, int64_t n, int64_t c, int64_t s,
                           size_t es) {
  std::vector<uint8_t> y(x.size());
  for (int64_t b = 0; b < n; ++b)
    for (int64_t ch = 0; ch < c; ++ch)
      for (int64_t p = 0; p < s; ++p)
        std::memcpy(y.data() + ((b * s + p) * c + ch) * es, x.data() + ((b * c + ch) * s + p) * es,
                    es);
  return y;
}

struct Result1 {
  std::string tactic;
  double ms = -1, err = -1;
};

}  // namespace

int main(int argc, char** argv) {
  Opts o;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    auto next = [&]() -> std::string {
      if (i + 1 >= argc) {
        std::fprintf(stderr, "%s needs a value\n", a.c_str());
        std::exit(2);
      }
      return argv[++i];
    };
    if (a == "--dtype") {
      std::string t = next();
      o.dtype = t == "fp32"   ? DataType::kFloat32
                : t == "bf16" ? DataType::kBFloat16
                              : DataType::kFloat16;
    } else if (a == "--batch") {
      o.batch = std::stoll(next());
    } else if (a == "--height") {
      o.h = std::stoll(next());
    } else if (a == "--width") {
      o.w = std::stoll(next());
    } else if (a == "--reps") {
      o.reps = std::stoi(next());
    } else {
      std::printf(
          "usage: opforge_conv_bench [--dtype fp16|fp32|bf16] [--batch N] [--height H] [--width W] "
          "[--reps N]\n");
      return a == "--help" ? 0 : 2;
    }
  }
  const int64_t H = o.h, W = o.w;
  const std::vector<Shape> shapes = {
      {"stem 7x7/2 3->64", 3, 64, 7, 2, H, W},
      {"l1 1x1 64->64", 64, 64, 1, 1, H / 4, W / 4},
      {"l1 3x3 64->64", 64, 64, 3, 1, H / 4, W / 4},
      {"l1 1x1 64->256", 64, 256, 1, 1, H / 4, W / 4},
      {"l1 1x1 256->64", 256, 64, 1, 1, H / 4, W / 4},
      {"l2 3x3/2 128->128", 128, 128, 3, 2, H / 4, W / 4},
      {"l2 1x1 128->512", 128, 512, 1, 1, H / 8, W / 8},
      {"l2 1x1 512->128", 512, 128, 1, 1, H / 8, W / 8},
      {"l2 3x3 128->128", 128, 128, 3, 1, H / 8, W / 8},
      {"l3 1x1 1024->256", 1024, 256, 1, 1, H / 16, W / 16},
      {"l3 3x3 256->256", 256, 256, 3, 1, H / 16, W / 16},
      {"l3 1x1 256->1024", 256, 1024, 1, 1, H / 16, W / 16},
      {"l4 1x1 2048->512", 2048, 512, 1, 1, H / 32, W / 32},
      {"l4 3x3 512->512", 512, 512, 3, 1, H / 32, W / 32},
      {"l4 1x1 512->2048", 512, 2048, 1, 1, H / 32, W / 32},
      {"fpn 3x3 256->256 /4", 256, 256, 3, 1, H / 4, W / 4},
  };
  std::mt19937 rng(7);
  const size_t es = esize(o.dtype);
  cudaStream_t st;
  CUDA_OK(cudaStreamCreate(&st));
  cudaEvent_t e0, e1;
  CUDA_OK(cudaEventCreate(&e0));
  CUDA_OK(cudaEventCreate(&e1));
  const char* dn = o.dtype == DataType::kFloat32   ? "FP32"
                   : o.dtype == DataType::kFloat16 ? "FP16"
                                                   : "BF16";
  std::printf(
      "# convolutions of ResNet-50 at batch %lld, %lldx%lld, %s, y = relu(conv(x, w) + b); ms = "
      "median of %d\n",
      (long long)o.batch, (long long)H, (long long)W, dn, o.reps);
  std::printf(
      "| conv | GFLOP | legacy best ms | TFLOP/s | graph LINEAR best ms | TFLOP/s | graph HWC best "
      "ms | TFLOP/s | "
      "HWC/legacy speed-up | worst rel. err | tactics (ms) "
      "|\n|---|---|---|---|---|---|---|---|---|---|---|\n");
  double tot_legacy = 0, tot_lin = 0, tot_hwc = 0;
  for (const Shape& sh : shapes) {
    ConvArgs a;
    a.dtype = o.dtype;
    a.nd = 2;
    a.n = o.batch, a.c = sh.c, a.m = sh.m, a.group = 1;
    const int64_t pad = sh.k / 2;
    a.isz = {sh.hin, sh.win};
    a.osz = {(sh.hin + 2 * pad - sh.k) / sh.s + 1, (sh.win + 2 * pad - sh.k) / sh.s + 1};
    a.k = {sh.k, sh.k}, a.s = {sh.s, sh.s}, a.d = {1, 1}, a.pb = {pad, pad}, a.pe = {pad, pad};
    a.act = Act::kRelu;
    const int64_t sin = sh.hin * sh.win, sout = a.osz[0] * a.osz[1], taps = sh.k * sh.k;
    const size_t nx = a.n * sh.c * sin, nw = sh.m * sh.c * taps, ny = a.n * sh.m * sout;
    const double gflop = 2.0 * double(ny) * double(sh.c * taps) * 1e-9;
    std::vector<uint8_t> hx, hw, hb;
    fill(hx, o.dtype, nx, rng, 1.f);
    fill(hw, o.dtype, nw, rng, 1.f / std::sqrt(float(sh.c * taps)));
    fill(hb, o.dtype, sh.m, rng, 0.5f);
    void *dx, *dxh, *dw, *dwh, *db, *dy, *ws;
    CUDA_OK(cudaMalloc(&dx, nx * es));
    CUDA_OK(cudaMalloc(&dxh, nx * es));
    CUDA_OK(cudaMalloc(&dw, nw * es));
    CUDA_OK(cudaMalloc(&dwh, nw * es));
    CUDA_OK(cudaMalloc(&db, sh.m * es));
    CUDA_OK(cudaMalloc(&dy, ny * es));
    const size_t ws_size = size_t{512} << 20;
    CUDA_OK(cudaMalloc(&ws, ws_size));
    CUDA_OK(cudaMemcpy(dx, hx.data(), nx * es, cudaMemcpyHostToDevice));
    CUDA_OK(cudaMemcpy(dw, hw.data(), nw * es, cudaMemcpyHostToDevice));
    CUDA_OK(cudaMemcpy(dxh, toHwc(hx, a.n, sh.c, sin, es).data(), nx * es, cudaMemcpyHostToDevice));
    CUDA_OK(
        cudaMemcpy(dwh, toHwc(hw, sh.m, sh.c, taps, es).data(), nw * es, cudaMemcpyHostToDevice));
    CUDA_OK(cudaMemcpy(db, hb.data(), sh.m * es, cudaMemcpyHostToDevice));

    std::vector<float> ref;  // LINEAR order
    std::vector<Result1> res;
    double best[3] = {1e30, 1e30, 1e30};
    auto run = [&](int family, int idx, const char* label) {
      ConvArgs b = a;
      b.hwc = family == 2;
      b.x = b.hwc ? dxh : dx;
      b.w = b.hwc ? dwh : dw;
      b.bias = db;
      b.y = dy;
      size_t need = 0;
      const bool ok = family == 0 ? convDnnApplies(b, idx, &need) : convGraphApplies(b, idx, &need);
      if (!ok || need > ws_size) return;
      auto launch = [&]() {
        return family == 0 ? convDnn(b, idx, ws, ws_size, st) : convGraph(b, idx, ws, ws_size, st);
      };
      CUDA_OK(cudaMemsetAsync(dy, 0xff, ny * es, st));
      Status s = launch();
      if (!s) {
        std::fprintf(stderr, "%s %s%d: %s\n", sh.name, label, idx, s.message().c_str());
        return;
      }
      CUDA_OK(cudaStreamSynchronize(st));
      std::vector<uint8_t> hy(ny * es);
      CUDA_OK(cudaMemcpy(hy.data(), dy, ny * es, cudaMemcpyDeviceToHost));
      std::vector<float> y(ny);
      for (size_t i = 0; i < ny; ++i) {
        size_t src = i;
        if (b.hwc) {  // i indexes LINEAR [n, m, sout]
          const size_t p = i % sout, ch = (i / sout) % sh.m, bb = i / (sout * sh.m);
          src = (bb * sout + p) * sh.m + ch;
        }
        y[i] = toFloat(hy.data(), o.dtype, src);
      }
      Result1 r;
      r.tactic = std::string(label) + std::to_string(idx);
      if (ref.empty()) {
        ref = y;
        r.err = 0;
      } else {
        double md = 0, mr = 0;
        for (size_t i = 0; i < ny; ++i) {
          const double d = std::isfinite(y[i]) ? std::fabs(double(y[i]) - ref[i]) : 1e30;
          md = std::max(md, d), mr = std::max(mr, std::fabs(double(ref[i])));
        }
        r.err = md / std::max(mr, 1e-30);
      }
      for (int i = 0; i < 3; ++i) CUDA_OK(launch().ok() ? cudaSuccess : cudaErrorUnknown);
      std::vector<float> t;
      for (int i = 0; i < o.reps; ++i) {
        CUDA_OK(cudaEventRecord(e0, st));
        (void)launch();
        CUDA_OK(cudaEventRecord(e1, st));
        CUDA_OK(cudaEventSynchronize(e1));
        float ms = 0;
        CUDA_OK(cudaEventElapsedTime(&ms, e0, e1));
        t.push_back(ms);
      }
      std::sort(t.begin(), t.end());
      r.ms = t[t.size() / 2];
      best[family] = std::min(best[family], r.ms);
      res.push_back(r);
    };
    for (int i = 0; i < kDnnFwdAlgos; ++i) run(0, i, "L");
    for (int i = 0; i < kDnnGraphTactics; ++i) run(1, i, "G");
    for (int i = 0; i < kDnnGraphTactics; ++i) run(2, i, "H");
    double worst = 0;
    std::string list;
    for (const auto& r : res) {
      worst = std::max(worst, r.err);
      char buf[64];
      std::snprintf(buf, sizeof buf, "%s %.3f%s", r.tactic.c_str(), r.ms,
                    r.err > 1e-2 ? "(BAD)" : "");
      list += (list.empty() ? "" : ", ") + std::string(buf);
    }
    auto tf = [&](double ms) { return ms < 1e29 ? gflop / ms : 0.0; };
    auto msv = [&](double ms) { return ms < 1e29 ? ms : -1.0; };
    std::printf("| %s | %.2f | %.4f | %.0f | %.4f | %.0f | %.4f | %.0f | %.2fx | %.1e | %s |\n",
                sh.name, gflop, msv(best[0]), tf(best[0]), msv(best[1]), tf(best[1]), msv(best[2]),
                tf(best[2]), best[2] < 1e29 && best[0] < 1e29 ? best[0] / best[2] : 0.0, worst,
                list.c_str());
    std::fflush(stdout);
    if (best[0] < 1e29) tot_legacy += best[0];
    if (best[1] < 1e29) tot_lin += best[1];
    if (best[2] < 1e29) tot_hwc += best[2];
    for (void* p : {dx, dxh, dw, dwh, db, dy, ws}) CUDA_OK(cudaFree(p));
  }
  std::printf(
      "\nsum of best times (one of each conv): legacy %.3f ms, graph LINEAR %.3f ms, graph HWC "
      "%.3f ms\n",
      tot_legacy, tot_lin, tot_hwc);
  return 0;
}
