// ONNX Scatter (opset 9 and 10; opset 11 keeps it, deprecated): ScatterElements before it had a
// `reduction` — output = data, then output[... indices[i] ...] = updates[i] with the index
// replacing the coordinate on `axis`. It is not an op of its own: the registry imports it as
// ai.onnx::ScatterElements (OpSchema::aliases, ops/onnx/scatterelements/), whose shape rule, CPU
// reference, CUDA tactics and run-time index errors it so shares; a Scatter node has no
// `reduction` attribute, so it gets ScatterElements' default, none (replace). The alias is attached
// here, beside Scatter's cases, by the registration that attaches definition fragments to an op
// declared in another file of the library (applied when the library's table is built).
#include "../common/util.h"

namespace opforge::ops {

OPFORGE_TACTICS("ai.onnx::ScatterElements", [](OpDef& d) { d.alias("ai.onnx::Scatter"); });

}  // namespace opforge::ops
