// opforge::AotKernel — a layer whose kernels were compiled ahead of time (PTX or cubin, e.g. an
// op defined in Python with @ofp.aot_impl, or a Triton kernel): the attributes carry the images,
// the launches and the output descriptions as expressions of the node's input dimensions, so a
// plan holding it runs with no Python and no op library. Spec: README.md.
#include "aot_spec.h"

namespace opforge::ops {

namespace {

Result<std::vector<SymDesc>> aotShape(ShapeContext& c) {
  const auto dtypes = c.attr<std::vector<int32_t>>("input_dtypes");
  const auto ranks = c.attr<std::vector<int32_t>>("input_ranks");
  const std::string from = c.attr<std::string>("op");
  const std::string what = from.empty() ? "" : " (op " + from + ")";
  if (c.numInputs() != static_cast<int>(dtypes.size()))
    return c.error("the kernels" + what + " were made for " + std::to_string(dtypes.size()) +
                   " inputs, the node has " + std::to_string(c.numInputs()));
  std::vector<SymDesc> ins;
  for (int i = 0; i < c.numInputs(); ++i) {
    if (!c.hasInput(i)) return c.error("input " + std::to_string(i) + " is missing");
    SymDesc d = c.input(i);
    if (d.dtype != static_cast<DataType>(dtypes[i]) || d.rank() != ranks[i])
      return c.error("input " + std::to_string(i) + " is " + dtypeName(d.dtype) + " " +
                     toString(d.dims) + "; the kernels" + what + " were made for " +
                     dtypeName(static_cast<DataType>(dtypes[i])) + " of rank " +
                     std::to_string(ranks[i]));
    ins.push_back(std::move(d));
  }
  auto outs = aot::parseOutputs(c.attr<std::string>("outputs"));
  if (!outs) return c.error(outs.status().message());
  std::vector<SymDesc> result;
  for (const auto& o : *outs) {
    SymDesc d = SymDesc::make(o.dtype, {});
    for (const auto& e : o.dims)
      d.dims.push_back(e.substitute([&](const std::string& s) -> std::optional<DimExpr> {
        const size_t dot = s.find('.');
        const int k = std::stoi(s.substr(2, dot - 2)), a = std::stoi(s.substr(dot + 1));
        return ins[k].dims[a];  // checked: in<k>.<d> of an input of that rank
      }));
    d.alias = o.alias;
    result.push_back(std::move(d));
  }
  return result;
}

}  // namespace

OPFORGE_OP(AotKernel, "opforge::AotKernel")
    .doc(
        "Kernels compiled ahead of time (PTX or cubin) launched with launch geometry and "
        "arguments computed from the input shapes; CUDA only.")
    .variadicInput("inputs", "the tensors the kernels read (and write, for an alias)")
    .variadicOutput("outputs", "as attribute 'outputs' describes them")
    .attr<std::string>("op", "", "the op this layer implements (\"ns::name\"), for messages")
    .attr<std::string>("origin", "", "where that op was defined (\"python:<module>\")")
    .attr<Bytes>("images", "kernel images, PTX text or cubin ELF files, one after the other")
    .attr<std::vector<int64_t>>("image_sizes", "the byte size of each image in 'images'")
    .attr<int64_t>("image_hash", "FNV-1a 64-bit hash of 'images'")
    .attr<int64_t>("arch", "the SM the images need (90: sm_90)")
    .attr<std::vector<int32_t>>("input_dtypes", "the input dtypes the kernels were made for")
    .attr<std::vector<int32_t>>("input_ranks", "the input ranks the kernels were made for")
    .attr<std::string>("outputs",
                       "one line per output: DTYPE[dim, ...] [alias=K], dims in in<k>.<d>")
    .attr<std::string>("launches",
                       "one line per launch: kernel=; image=; [variant=;] grid=; block=; "
                       "shared=; args= (README.md)")
    .attr<std::vector<int64_t>>("variant_tactics", std::vector<int64_t>{},
                                "the op's own tactic each variant of launches was made for "
                                "(messages, inspect); empty: one variant, or unnamed")
    .check([](const AttrMap& a) -> Status { return aot::checkAttrs(a); })
    .shape(aotShape)
    .cpu([](KernelContext& k, std::span<const Tensor>, std::span<const Tensor>) -> Status {
      // There is no host code to run: the kernels exist only as GPU images. A CPU plan can hold
      // the layer (it is built and inspected without a GPU) but cannot run it.
      const std::string from = k.attr<std::string>("op");
      return Status::unsupported(
          "opforge::AotKernel" + (from.empty() ? std::string() : " (op " + from + ")") +
          " runs only on CUDA: its kernels are GPU images (sm_" +
          std::to_string(k.attr<int64_t>("arch")) +
          "); build the plan for CUDA, or give the op an impl (JIT) for the CPU");
    });

}  // namespace opforge::ops
