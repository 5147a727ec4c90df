// onnx_tensor.h — TensorProto <-> TensorValue (internal; also used by the node-test runner).
#pragma once

#include <string>

#include "../common/checked.h"
#include "opforge/op.h"

namespace onnx {
class TensorProto;
}

namespace opforge::onnx_io {

// Limits on tensors read from a model (docs/architecture.md, "Limits and hostile input"): a
// dimension of an initializer, a Constant or a graph input is at most 2^31 - 1, a tensor has at
// most 2^40 elements.
constexpr int64_t kMaxDim = checked::kMaxModelDim;
constexpr int64_t kMaxElements = checked::kMaxElements;

// Converts a TensorProto (raw_data, typed fields or external data) into a host tensor. Every size
// (dims, their product, the bytes held) is checked before anything is allocated.
// `base_dir` is the model's folder for external data ("" forbids external data); `what` names the
// tensor in messages.
Result<TensorValue> tensorFromProto(const onnx::TensorProto& t, const std::string& base_dir,
                                    const std::string& what);
// Reads a serialized TensorProto file (the node tests' input_0.pb).
Result<TensorValue> readTensorFile(const std::string& path, std::string* name = nullptr);

// Checks an external-data location against ONNX's rule: relative, no "..", no symlinks, inside
// `base_dir`. Returns the full path.
Result<std::string> safeExternalPath(const std::string& base_dir, const std::string& location,
                                     const std::string& what);

}  // namespace opforge::onnx_io
