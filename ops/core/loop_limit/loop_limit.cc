// opforge::LoopLimit — the run-time check of a Loop the importer unrolled to a bound because its
// trip count or condition is run-time data: a layer guarded by "the loop would run another
// iteration", so it runs only when the loop needs more iterations than were unrolled, and then
// fails with its message. Spec: README.md.
#include "../../onnx/common/combos.h"
#include "../../onnx/common/util.h"

namespace opforge::ops {

OPFORGE_OP(LoopLimit, "opforge::LoopLimit")
    .doc("Fails with 'message' when it runs (made by the importer, guarded; see README.md).")
    .combos(comboTypes(kAll))
    .input("input", "a value of the loop (its output passes it through when the layer is skipped)")
    .output("output")
    .attr<std::string>("message", std::string(), "the error the layer gives when it runs")
    .shape([](ShapeContext& c) -> Result<SymDesc> { return c.input(0).like(); })
    .cpu([](KernelContext& k, std::span<const Tensor>, std::span<const Tensor>) -> Status {
      return Status::outOfRange(k.attr<std::string>("message"));
    });

}  // namespace opforge::ops
