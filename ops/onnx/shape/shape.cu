// CUDA tactic of ai.onnx::Shape: the dimensions are known on the host; a small kernel writes them
// (no host memory in the launch, so it captures into CUDA graphs).
#include "../common/movement.cuh"

namespace opforge::ops {

OPFORGE_TACTICS("ai.onnx::Shape", [](OpDef& d) {
  d.tactic(1, "cuda.write",
           [](KernelContext& k, std::span<const Tensor> in, std::span<const Tensor> out) -> Status {
             const int r = in[0].desc.rank();
             int64_t s = k.attr<int64_t>("start");
             int64_t e = k.attrs().has("end") ? k.attr<int64_t>("end") : r;
             if (s < 0) s += r;
             if (e < 0) e += r;
             s = std::clamp<int64_t>(s, 0, r);
             e = std::clamp<int64_t>(e, 0, r);
             std::vector<int64_t> v;
             for (int64_t i = s; i < e; ++i) v.push_back(in[0].desc.dims[i]);
             return writeInt64s(static_cast<int64_t*>(out[0].data), v, streamOf(k), "Shape");
           });
});

}  // namespace opforge::ops
