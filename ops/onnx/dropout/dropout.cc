// ONNX Dropout, inference form: output = data and mask (optional output) all true. Training-mode
// dropout with a non-zero ratio draws random masks, which opforge does not implement (an
// Unsupported error); training_mode and ratio, when given, must be known when the network is
// built.
#include <cstring>

#include "../common/util.h"

namespace opforge::ops {
OPFORGE_OP(Dropout, "ai.onnx::Dropout")
    .doc("Dropout at inference: the identity.")
    .input("data")
    .valueInput("ratio", true, "scalar (opset 12)")
    .valueInput("training_mode", true, "BOOL scalar (opset 12)")
    .output("output")
    .optionalOutput("mask", "BOOL, all true; an empty tensor when the ONNX node does not list it")
    .optionalAttr<int64_t>("seed")
    .attr<double>("ratio", 0.5, "opset < 12")
    .optionalAttr<int64_t>("is_test", "opset < 7")
    .with(onnxOutputsAttr)
    .shape([](ShapeContext& c) -> Result<std::vector<SymDesc>> {
      SymDesc x = c.input(0);
      OPFORGE_RETURN_IF_ERROR(checkType(c, "input 'data'", x.dtype, kFloats));
      bool training = false;
      double ratio = c.attr<double>("ratio");
      if (c.hasInput(2)) {
        OPFORGE_ASSIGN_OR_RETURN(auto t, needNumbers(c, 2, "training_mode"));
        training = !t.empty() && t[0] != 0;
      }
      if (c.hasInput(1)) {
        OPFORGE_ASSIGN_OR_RETURN(auto r, needNumbers(c, 1, "ratio"));
        if (!r.empty()) ratio = r[0];
      }
      if (training && ratio != 0)
        return Status::unsupported(
            "node '" + c.nodeName() + "' (" + c.opKey() + "): training-mode dropout with ratio " +
            std::to_string(ratio) +
            " (random masks) is not supported; opforge runs Dropout for inference");
      SymDesc mask = SymDesc::make(DataType::kBool, x.dims);
      if (c.attr<int64_t>("_onnx_num_outputs") == 1) mask.dims = {0};
      return std::vector<SymDesc>{x.like(), mask};
    })
    .cpu([](KernelContext&, std::span<const Tensor> in, std::span<const Tensor> out) -> Status {
      if (out[0].bytes()) std::memcpy(out[0].data, in[0].data, out[0].bytes());
      if (out.size() > 1 && out[1].bytes()) std::memset(out[1].data, 1, out[1].bytes());
      return Status::ok();
    });
}  // namespace opforge::ops
