// opforge/combo.h — how a concrete type/format combination of an op fits a node.
//
// The one combination matcher: the builder (which picks a combination per node, with precision
// lowering and format scores) and the Python op runner (which checks a call's row-major tensors)
// both use fitCombo over the op's expanded combinations (expandCombo, opforge/op.h).
//
// Contract:
//   - Positions are the op's declared inputs, then its declared outputs (ConcreteCombo's order);
//     a node input past the last declared input (a variadic tail) takes the last input's entry.
//   - An input slot with dtype kUndefined is an omitted optional input: not checked.
//   - Types: a position fits when its type equals the combination's; with `lowerable` types
//     (the builder's --fp16/--bf16), an FP32 position may instead take one of them, the same one
//     for every FP32 position of the node (ComboFit::lowered says which).
//   - Formats never rule a combination out, they cost reformats: the counts compare formats as
//     a tensor of that rank sees them (effectiveFormat: HWC is LINEAR below rank 3).
//   - Aliases: an output that aliases input k must have input k's format in the combination.
//
// Usage:
//   std::vector<ComboSlot> in = {{DataType::kFloat32, Format::kLinear, 4}};
//   std::vector<ComboSlot> out = {{DataType::kFloat32, Format::kLinear, 4}};
//   for (const auto& c : op.schema().combos)
//     for (const ConcreteCombo& cc : *expandCombo(c, positions)) {
//       ComboFit f = fitCombo(op.schema(), cc, in, out, /*aliases=*/{-1});
//       if (f.fits() && f.input_reformats == 0 && f.output_reformats == 0) ...
//     }
#pragma once

#include <cstddef>
#include <vector>

#include "opforge/op.h"
#include "opforge/tensor.h"

namespace opforge {

// One tensor position of a node.
struct ComboSlot {
  DataType dtype = DataType::kUndefined;  // kUndefined: omitted optional input
  Format format = Format::kLinear;
  size_t rank = 0;
};

struct ComboFit {
  bool types = true;    // every checked position has a fitting type
  bool aliases = true;  // every aliased output shares its input's format
  // The type the node's FP32 positions take: kFloat32, one of `lowerable`, or kUndefined when no
  // checked position is FP32.
  DataType lowered = DataType::kUndefined;
  int input_reformats = 0;   // present inputs whose (effective) format differs from the slot's
  int output_reformats = 0;  // declared outputs whose (effective) format differs from the slot's
  bool fits() const { return types && aliases; }
};

// Formats as a row-major tensor of `rank` sees them: HWC is LINEAR below rank 3.
inline Format effectiveFormat(Format f, size_t rank) {
  return rank < 3 ? Format::kLinear : f;
}

// `inputs`: one slot per node input; `outputs`: one per declared output (more are ignored);
// `aliases`: per declared output, the input it aliases or -1 (shorter: no alias).
ComboFit fitCombo(const OpSchema& schema, const ConcreteCombo& combo,
                  const std::vector<ComboSlot>& inputs, const std::vector<ComboSlot>& outputs,
                  const std::vector<int>& aliases, const std::vector<DataType>& lowerable = {});

}  // namespace opforge
