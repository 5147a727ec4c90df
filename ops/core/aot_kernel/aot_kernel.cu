// CUDA tactic of opforge::AotKernel: loads the node's images with the runtime's library API
// (cudaLibraryLoadData, once per process and image set), resolves and prepares each kernel once
// per device (its attributes read, which loads it there, so nothing loads later inside a graph
// capture; the dynamic shared memory limit raised where a launch needs more than 48 KiB), then
// evaluates the launch expressions on the input shapes and launches on the layer's stream. It
// never synchronizes, so the layer can be captured into a CUDA graph.
#include <cuda_runtime.h>

#include <algorithm>
#include <cstring>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "aot_spec.h"

namespace opforge::ops {

namespace {

struct DeviceState {
  bool ready = false;
  std::vector<int> max_threads;  // per launch
  std::vector<int> shared_set;   // per launch: the dynamic shared memory limit set so far
};

// The loaded form of one node's attributes, shared by every node with the same images and
// launches. Kept for the life of the process (plans may be loaded again; images are small).
struct Program {
  std::vector<aot::Launch> launches;
  std::vector<cudaLibrary_t> libraries;
  std::vector<cudaKernel_t> kernels;  // per launch
  bool any_cubin = false;
  int64_t arch = 0;
  std::mutex mu;  // guards `devices`
  std::map<int, DeviceState> devices;
};

std::string cudaText(cudaError_t e) {
  return std::string(cudaGetErrorName(e)) + ": " + cudaGetErrorString(e);
}

Status label(const AttrMap& a, Status st) {
  const std::string from = a.get<std::string>("op");
  return Status(st.code(), "opforge::AotKernel" + (from.empty() ? "" : " (op " + from + ")") +
                               ": " + st.message());
}

// The program of these attributes, loaded on first use.
Result<std::shared_ptr<Program>> program(const AttrMap& a) {
  static std::mutex mu;
  static std::map<std::pair<int64_t, std::string>, std::shared_ptr<Program>> cache;
  const auto key = std::make_pair(a.get<int64_t>("image_hash"), a.get<std::string>("launches"));
  std::lock_guard<std::mutex> lock(mu);
  if (auto it = cache.find(key); it != cache.end()) return it->second;
  auto p = std::make_shared<Program>();
  OPFORGE_ASSIGN_OR_RETURN(p->launches, aot::parseLaunches(key.second));
  OPFORGE_ASSIGN_OR_RETURN(auto images, aot::splitImages(a));
  p->arch = a.get<int64_t>("arch");
  for (size_t i = 0; i < images.size(); ++i) {
    OPFORGE_ASSIGN_OR_RETURN(auto info, aot::inspectImage(images[i]));
    p->any_cubin |= info.cubin;
    // PTX is loaded as a NUL-terminated string.
    std::vector<uint8_t> code(images[i].begin(), images[i].end());
    if (!info.cubin) code.push_back(0);
    cudaLibrary_t lib = nullptr;
    cudaError_t e =
        cudaLibraryLoadData(&lib, code.data(), nullptr, nullptr, 0, nullptr, nullptr, 0);
    if (e != cudaSuccess) {
      for (auto l : p->libraries) cudaLibraryUnload(l);
      return Status::runtime("loading image " + std::to_string(i) + " (" +
                             (info.cubin ? "cubin" : "PTX") + " for sm_" + std::to_string(info.sm) +
                             "): " + cudaText(e));
    }
    p->libraries.push_back(lib);
  }
  for (const auto& l : p->launches) {
    cudaKernel_t k = nullptr;
    cudaError_t e = cudaLibraryGetKernel(&k, p->libraries[l.image], l.kernel.c_str());
    if (e != cudaSuccess) {
      for (auto lib : p->libraries) cudaLibraryUnload(lib);
      return Status::runtime("kernel '" + l.kernel + "' in image " + std::to_string(l.image) +
                             ": " + cudaText(e));
    }
    p->kernels.push_back(k);
  }
  cache.emplace(key, p);
  return p;
}

// Checks the device against the images and loads every kernel on it (once per device).
Status prepare(Program& p, int device, DeviceState& d) {
  if (d.ready) return Status::ok();
  int major = 0, minor = 0;
  cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, device);
  cudaDeviceGetAttribute(&minor, cudaDevAttrComputeCapabilityMinor, device);
  const int cc = major * 10 + minor;
  const bool fits = p.any_cubin ? (major == p.arch / 10 && cc >= p.arch) : cc >= p.arch;
  if (!fits)
    return Status::unsupported("the kernels were compiled for sm_" + std::to_string(p.arch) +
                               (p.any_cubin ? " (cubin)" : " (PTX)") + " but device " +
                               std::to_string(device) + " is sm_" + std::to_string(cc) +
                               ": rebuild the plan for this GPU");
  for (size_t i = 0; i < p.kernels.size(); ++i) {
    cudaFuncAttributes fa{};
    cudaError_t e = cudaFuncGetAttributes(&fa, reinterpret_cast<const void*>(p.kernels[i]));
    if (e != cudaSuccess)
      return Status::runtime("loading kernel '" + p.launches[i].kernel + "' on device " +
                             std::to_string(device) + ": " + cudaText(e));
    d.max_threads.push_back(fa.maxThreadsPerBlock);
    d.shared_set.push_back(48 * 1024);
  }
  d.ready = true;
  return Status::ok();
}

constexpr size_t kScratchAlign = 256;  // the workspace is at least this aligned

size_t roundUp(size_t n, int64_t align) {
  const size_t a = std::max<size_t>(kScratchAlign, static_cast<size_t>(align));
  return (n + a - 1) / a * a;
}

// Workspace bytes: every scratch argument of every launch of `variant`, grid size × bytes per
// program.
Result<size_t> scratchBytes(const std::vector<aot::Launch>& launches, int variant,
                            std::span<const TensorDesc> in) {
  size_t total = 0;
  for (const auto& l : launches) {
    if (l.variant != variant) continue;
    int64_t programs = 1;
    for (const auto& g : l.grid) {
      OPFORGE_ASSIGN_OR_RETURN(int64_t v, aot::evalWith(g, in));
      programs *= std::max<int64_t>(v, 0);
    }
    for (const auto& a : l.args) {
      if (a.kind != aot::Arg::Kind::kScratch) continue;
      OPFORGE_ASSIGN_OR_RETURN(int64_t per, aot::evalWith(a.expr, in));
      if (per < 0 || (per > 0 && programs > (int64_t{1} << 40) / per))
        return Status::outOfRange("scratch \"" + a.text + "\" needs " + std::to_string(per) +
                                  " bytes for each of " + std::to_string(programs) + " programs");
      total = roundUp(total, a.align) + roundUp(static_cast<size_t>(per * programs), kScratchAlign);
    }
  }
  return total;
}

size_t aotWorkspace(const AttrMap& a, int variant, std::span<const TensorDesc> in) {
  auto launches = aot::parseLaunches(a.get<std::string>("launches"));
  if (!launches) return 0;  // refused by the check already
  auto bytes = scratchBytes(*launches, variant, in);
  return bytes ? *bytes : 0;
}

// Runs the launches of one variant, in order.
Status aotRun(KernelContext& k, int variant, std::span<const Tensor> in,
              std::span<const Tensor> out) {
  const AttrMap& a = k.attrs();
  auto prog = program(a);
  if (!prog) return label(a, prog.status());
  Program& p = **prog;
  int device = 0;
  if (cudaError_t e = cudaGetDevice(&device); e != cudaSuccess)
    return label(a, Status::runtime("cudaGetDevice: " + cudaText(e)));
  std::vector<TensorDesc> in_d;
  for (const auto& t : in) in_d.push_back(t.desc);
  cudaStream_t stream = static_cast<cudaStream_t>(k.stream());
  auto* scratch = static_cast<uint8_t*>(k.workspace());
  size_t scratch_used = 0;
  for (size_t li = 0; li < p.launches.size(); ++li) {
    const aot::Launch& l = p.launches[li];
    if (l.variant != variant) continue;
    auto where = [&](const std::string& m) {
      return "launch " + std::to_string(li) + " (kernel '" + l.kernel + "'): " + m;
    };
    int64_t g[3], b[3];
    for (int i = 0; i < 3; ++i) {
      auto gv = aot::evalWith(l.grid[i], in_d);
      auto bv = aot::evalWith(l.block[i], in_d);
      if (!gv) return label(a, Status::invalid(where("grid: " + gv.status().message())));
      if (!bv) return label(a, Status::invalid(where("block: " + bv.status().message())));
      g[i] = *gv;
      b[i] = *bv;
    }
    auto sh = aot::evalWith(l.shared, in_d);
    if (!sh) return label(a, Status::invalid(where("shared: " + sh.status().message())));
    const int64_t kGridMax[3] = {(int64_t{1} << 31) - 1, 65535, 65535};
    bool empty = false;
    for (int i = 0; i < 3; ++i) {
      if (g[i] < 0 || g[i] > kGridMax[i] || b[i] < 1 || b[i] > 1024)
        return label(a, Status::outOfRange(
                            where("grid (" + std::to_string(g[0]) + ", " + std::to_string(g[1]) +
                                  ", " + std::to_string(g[2]) + ") or block (" +
                                  std::to_string(b[0]) + ", " + std::to_string(b[1]) + ", " +
                                  std::to_string(b[2]) + ") is outside CUDA's limits")));
      empty |= g[i] == 0;
    }
    if (*sh < 0 || *sh > 1024 * 1024)
      return label(a, Status::outOfRange(where("shared memory " + std::to_string(*sh) + " bytes")));
    // Scratch is laid out as scratchBytes sized it, also for an empty grid.
    std::vector<uint64_t> words(l.args.size());
    std::vector<void*> argv(l.args.size());
    const int64_t programs = g[0] * g[1] * g[2];
    for (size_t i = 0; i < l.args.size(); ++i) {
      const aot::Arg& arg = l.args[i];
      void* slot = &words[i];
      switch (arg.kind) {
        case aot::Arg::Kind::kInput:
          std::memcpy(slot, &in[arg.index].data, sizeof(void*));
          break;
        case aot::Arg::Kind::kOutput:
          std::memcpy(slot, &out[arg.index].data, sizeof(void*));
          break;
        case aot::Arg::Kind::kNull:
          words[i] = 0;
          break;
        case aot::Arg::Kind::kI32:
        case aot::Arg::Kind::kI64: {
          auto v = aot::evalWith(arg.expr, in_d);
          if (!v)
            return label(a, Status::invalid(
                                where("argument \"" + arg.text + "\": " + v.status().message())));
          if (arg.kind == aot::Arg::Kind::kI32) {
            if (*v < INT32_MIN || *v > INT32_MAX)
              return label(a, Status::outOfRange(where("argument \"" + arg.text + "\" is " +
                                                       std::to_string(*v) +
                                                       ", which does not fit in an i32")));
            const int32_t x = static_cast<int32_t>(*v);
            std::memcpy(slot, &x, 4);
          } else {
            std::memcpy(slot, &*v, 8);
          }
          break;
        }
        case aot::Arg::Kind::kF32: {
          const float x = static_cast<float>(arg.value);
          std::memcpy(slot, &x, 4);
          break;
        }
        case aot::Arg::Kind::kF64:
          std::memcpy(slot, &arg.value, 8);
          break;
        case aot::Arg::Kind::kScratch: {
          auto per = aot::evalWith(arg.expr, in_d);
          if (!per)
            return label(a, Status::invalid(
                                where("argument \"" + arg.text + "\": " + per.status().message())));
          void* ptr = nullptr;
          const size_t bytes = static_cast<size_t>(std::max<int64_t>(*per, 0) * programs);
          scratch_used = roundUp(scratch_used, arg.align);
          if (*per > 0) {
            if (!scratch || scratch_used + bytes > k.workspaceSize())
              return label(a, Status::internal(where("the workspace is smaller than its scratch")));
            ptr = scratch + scratch_used;
          }
          scratch_used += roundUp(bytes, 1);
          std::memcpy(slot, &ptr, sizeof(void*));
          break;
        }
      }
      argv[i] = slot;
    }
    if (empty) continue;
    {
      std::lock_guard<std::mutex> lock(p.mu);
      DeviceState& d = p.devices[device];
      if (Status st = prepare(p, device, d); !st) return label(a, st);
      if (b[0] * b[1] * b[2] > d.max_threads[li])
        return label(a,
                     Status::outOfRange(where("block (" + std::to_string(b[0]) + ", " +
                                              std::to_string(b[1]) + ", " + std::to_string(b[2]) +
                                              ") has more threads than the kernel "
                                              "allows (" +
                                              std::to_string(d.max_threads[li]) + ")")));
      if (*sh > d.shared_set[li]) {
        cudaError_t e = cudaKernelSetAttributeForDevice(p.kernels[li],
                                                        cudaFuncAttributeMaxDynamicSharedMemorySize,
                                                        static_cast<int>(*sh), device);
        if (e != cudaSuccess)
          return label(a,
                       Status::runtime(where("allowing " + std::to_string(*sh) +
                                             " bytes of dynamic shared memory: " + cudaText(e))));
        d.shared_set[li] = static_cast<int>(*sh);
      }
    }
    cudaError_t e = cudaLaunchKernel(
        reinterpret_cast<const void*>(p.kernels[li]),
        dim3(static_cast<unsigned>(g[0]), static_cast<unsigned>(g[1]), static_cast<unsigned>(g[2])),
        dim3(static_cast<unsigned>(b[0]), static_cast<unsigned>(b[1]), static_cast<unsigned>(b[2])),
        argv.data(), static_cast<size_t>(*sh), stream);
    if (e != cudaSuccess) return label(a, Status::runtime(where("launch: " + cudaText(e))));
  }
  return Status::ok();
}

}  // namespace

// Tactic 1 + v runs variant v (cuda.aot: variant 0, the only one of most nodes); a tactic whose
// variant the node lacks does not apply, so the builder times exactly the node's variants.
OPFORGE_TACTICS("opforge::AotKernel", [](OpDef& d) {
  for (int v = 0; v < aot::kMaxVariants; ++v)
    d.tactic(
        1 + v, v == 0 ? std::string("cuda.aot") : "cuda.aot.variant" + std::to_string(v),
        [v](KernelContext& k, std::span<const Tensor> in, std::span<const Tensor> out) {
          return aotRun(k, v, in, out);
        },
        [v](const AttrMap& a, std::span<const TensorDesc>, std::span<const TensorDesc>) {
          auto launches = aot::parseLaunches(a.get<std::string>("launches"));
          return launches && v < aot::variantCount(*launches);
        },
        [v](const AttrMap& a, std::span<const TensorDesc> in, std::span<const TensorDesc>) {
          return aotWorkspace(a, v, in);
        });
});

}  // namespace opforge::ops
