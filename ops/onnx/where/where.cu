// CUDA tactic of ai.onnx::Where: condition ? X : Y with broadcasting, one pass (only bytes move).
#include "../common/elementwise.cuh"

namespace opforge::ops {
namespace {
Status whereCuda(KernelContext& k, std::span<const Tensor> in, std::span<const Tensor> out) {
  const Tensor &c = in[0], &x = in[1], &y = in[2], &z = out[0];
  const int64_t n = z.numel();
  if (n == 0) return Status::ok();
  return visitDeviceBySize(z.desc.dtype, "Where", [&](auto tag) -> Status {
    using S = typename decltype(tag)::type;
    const auto* pc = static_cast<const uint8_t*>(c.data);
    const auto* px = static_cast<const S*>(x.data);
    const auto* py = static_cast<const S*>(y.data);
    auto* pz = static_cast<S*>(z.data);
    if (c.numel() == n && x.numel() == n && y.numel() == n) {
      whereFlatKernel<S><<<blocksFor(n), kThreads, 0, streamOf(k)>>>(pc, px, py, pz, n);
      return launched("Where");
    }
    StridedShape<3> s;
    if (!coalesce<3>(
            z.desc.dims,
            {broadcastStrides(c.desc.dims, z.desc.dims), broadcastStrides(x.desc.dims, z.desc.dims),
             broadcastStrides(y.desc.dims, z.desc.dims)},
            &s))
      return Status::unsupported("Where (CUDA): more than " + std::to_string(kMaxDims) +
                                 " broadcast axes");
    whereKernel<S><<<blocksFor(n), kThreads, 0, streamOf(k)>>>(pc, px, py, pz, s, n);
    return launched("Where");
  });
}
}  // namespace

OPFORGE_TACTICS("ai.onnx::Where",
                [](OpDef& d) { d.tactic(1, "cuda.broadcast", whereCuda, linearOnly); });

}  // namespace opforge::ops
