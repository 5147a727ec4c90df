// aot_spec.h — the attributes of opforge::AotKernel parsed and checked (README.md is the spec):
// the kernel images (PTX or cubin), what each launch passes, the output descriptions, all as
// expressions over the node's own input dimensions ("in<k>.<d>"). Shared by the op's definition
// (check, shape rule) and its CUDA tactic (launch).
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "opforge/op.h"
#include "opforge/shape_text.h"

namespace opforge::ops::aot {

// One argument of a launch, in the kernel's parameter order.
struct Arg {
  enum class Kind { kInput, kOutput, kI32, kI64, kF32, kF64, kScratch, kNull };
  Kind kind = Kind::kNull;
  int index = 0;      // kInput / kOutput
  DimExpr expr;       // kI32 / kI64: the value; kScratch: bytes per program
  double value = 0;   // kF32 / kF64
  int64_t align = 1;  // kScratch
  std::string text;   // as written, for messages
  size_t bytes() const;
};

// A node may hold up to kMaxVariants sets of launches (the aot_impl's answer for each tactic its
// autotune declares), numbered 0, 1, ...: CUDA tactic 1 + v runs variant v, and the builder times
// the variants against each other.
constexpr int kMaxVariants = 8;

struct Launch {
  std::string kernel;
  int image = 0;
  int variant = 0;
  DimExpr grid[3], block[3], shared;
  std::vector<Arg> args;
  std::string text;  // the line, for messages
};

struct OutputSpec {
  DataType dtype = DataType::kUndefined;
  std::vector<DimExpr> dims;
  int alias = -1;
};

// What one image says about a kernel: its parameters (offset, bytes) in order and the block size
// it requires (.reqntid / EIATTR_REQNTID), when it says so.
struct KernelInfo {
  std::vector<std::pair<size_t, size_t>> params;
  std::optional<std::vector<int64_t>> reqntid;
};

struct ImageInfo {
  bool cubin = false;  // else PTX
  int sm = 0;          // cubin: the SM it is for; PTX: its .target
};

// FNV-1a, 64 bits: the `image_hash` attribute.
int64_t imageHash(std::span<const uint8_t> bytes);
// Kind and SM of an image, or why it is not a CUDA image.
Result<ImageInfo> inspectImage(std::span<const uint8_t> image);
// A kernel's parameters in an image; NotFound when the image has no such kernel.
Result<KernelInfo> kernelInfo(std::span<const uint8_t> image, const std::string& kernel);

// The images of the attribute `images`, split by `image_sizes`.
Result<std::vector<std::span<const uint8_t>>> splitImages(const AttrMap& a);
// The launches, checked to number their variants 0, 1, ... without a gap.
Result<std::vector<Launch>> parseLaunches(const std::string& text);
// How many variants the launches hold (1 + the largest variant).
int variantCount(const std::vector<Launch>& launches);
Result<std::vector<OutputSpec>> parseOutputs(const std::string& text);

// Everything the attributes say, checked against each other and against the images (the op's
// check). Errors name the attribute, the launch or output, and the bad value.
Status checkAttrs(const AttrMap& a);

// Evaluates `e` with in<k>.<d> bound to the inputs' dimensions.
Result<int64_t> evalWith(const DimExpr& e, std::span<const TensorDesc> inputs);

}  // namespace opforge::ops::aot
