// plan.h — the serialized engine ("plan file"), shared by the builder and the runtime.
//
// File layout (little-endian):
//   [0, 64)     header: magic "OPFGPLAN", format version, header size, file size, checksum of
//               everything after the header, metadata offset/size, weights offset/size, ABI
//   metadata    wire-encoded Plan (below)
//   weights     each constant at a 64-byte aligned offset (the file is mmap-ed; constants are
//               used in place on the CPU)
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "opforge/op.h"
#include "opforge/registry.h"
#include "opforge/shape.h"

namespace opforge::plan {

constexpr char kMagic[8] = {'O', 'P', 'F', 'G', 'P', 'L', 'A', 'N'};
constexpr uint32_t kFormatVersion = 2;  // 2: node guards (If branches)
constexpr size_t kHeaderSize = 64;
constexpr size_t kWeightAlign = 64;

struct Header {
  char magic[8];
  uint32_t format_version;
  uint32_t header_size;
  uint64_t file_size;
  uint64_t checksum;  // of bytes [header_size, file_size)
  uint64_t meta_offset;
  uint64_t meta_size;
  uint64_t weights_offset;
  uint32_t abi_version;
  uint32_t reserved;
};
static_assert(sizeof(Header) == kHeaderSize);

enum class TensorKind : uint8_t { kInput = 0, kActivation = 1, kConstant = 2 };

struct Tensor {
  std::string name;
  DataType dtype = DataType::kFloat32;
  Format format = Format::kLinear;
  std::vector<DimExpr> dims;
  TensorKind kind = TensorKind::kActivation;
  bool is_output = false;
  uint64_t weight_offset = 0;  // constants: offset inside the weights section
  uint64_t weight_bytes = 0;
  int32_t storage = -1;  // activations/inputs: storage group (aliases share one)
};

struct Node {
  std::string name;
  std::string ns, op, version;
  std::string library;  // file name of the library that defined the op ("<built-in>")
  AttrMap attrs;
  std::vector<int32_t> inputs;  // tensor ids; -1 omitted
  std::vector<int32_t> outputs;
  std::vector<SizeRecord> size_tensors;  // symbol, upper, output stored (opforge/registry.h)
  std::vector<DimAssertion> assertions;
  // If branches: the node runs only when every guard's BOOL tensor holds its value (read on the
  // host before the node; graph::Guard).
  std::vector<std::pair<int32_t, bool>> guards;
  std::string combo;  // "FP32, FP32:HWC" for inspection
  int32_t tactic = 0;
  std::string tactic_name;
  int32_t backend = 0;          // Backend
  uint64_t workspace = 0;       // at the profile's max shapes
  double build_time_ms = -1.0;  // measured by the autotuner; -1 when not timed
};

struct ProfileDim {
  std::string input;
  std::vector<int64_t> min, opt, max;
};

struct Storage {
  int32_t first = 0;  // first step that writes it (-1: a network input)
  int32_t last = 0;   // last step that reads it (INT32_MAX: a network output)
};

struct Plan {
  std::string producer;          // "opforge 0.1.0"
  std::string source;            // model the plan was built from
  int32_t backend = 0;           // Backend the plan runs on
  std::string device;            // GPU name for CUDA plans, "cpu" otherwise
  std::string arch;              // "sm_90" for CUDA plans
  int32_t cuda_runtime = 0;      // CUDA runtime version the plan was built with (13000)
  std::vector<int32_t> inputs;   // tensor ids
  std::vector<int32_t> outputs;  // tensor ids
  std::vector<Tensor> tensors;
  std::vector<Node> nodes;
  std::vector<std::vector<ProfileDim>> profiles;
  std::vector<Storage> storages;
  // Symbols of dynamic input dimensions: symbol -> (input tensor id, axis).
  std::vector<std::pair<std::string, std::pair<int32_t, int32_t>>> input_symbols;
};

// Serialises `p` with `weights` (already laid out at the tensors' weight offsets).
std::vector<uint8_t> serialize(const Plan& p, const std::vector<uint8_t>& weights);
// Checks the decoded plan's structure (see plan.cc): kinds, formats, backends, constants' bytes
// against their dims and the weights section, node inputs and outputs, storage lifetimes,
// profiles and input symbols. Errors are kCorrupt and name the file, the field and the value.
Status validate(const Plan& p, const std::string& what, uint64_t weights_size);
// Checks header, size, checksum and version, then decodes the metadata and validates it (a
// checksum recomputed after an edit does not make a plan loadable). `what` names the file.
// On success *weights points into `data` (which must outlive the Plan's use).
Result<Plan> deserialize(const uint8_t* data, size_t size, const std::string& what,
                         const uint8_t** weights, size_t* weights_size);

}  // namespace opforge::plan
