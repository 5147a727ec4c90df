#include <algorithm>

#include "opforge/combo.h"

namespace opforge {

ComboFit fitCombo(const OpSchema& s, const ConcreteCombo& cc, const std::vector<ComboSlot>& inputs,
                  const std::vector<ComboSlot>& outputs, const std::vector<int>& aliases,
                  const std::vector<DataType>& lowerable) {
  ComboFit f;
  auto declPos = [&](size_t i) { return std::min(i, s.inputs.size() - 1); };
  auto typeOk = [&](DataType node_t, DataType combo_t) {
    if (node_t != DataType::kFloat32) return combo_t == node_t;
    if (combo_t != DataType::kFloat32 &&
        std::find(lowerable.begin(), lowerable.end(), combo_t) == lowerable.end())
      return false;
    if (f.lowered == DataType::kUndefined) f.lowered = combo_t;
    return f.lowered == combo_t;
  };
  for (size_t i = 0; i < inputs.size() && !s.inputs.empty(); ++i) {
    const ComboSlot& in = inputs[i];
    if (in.dtype == DataType::kUndefined) continue;
    const size_t p = declPos(i);
    f.types = typeOk(in.dtype, cc.types[p]) && f.types;
    if (effectiveFormat(cc.formats[p], in.rank) != effectiveFormat(in.format, in.rank))
      ++f.input_reformats;
  }
  for (size_t o = 0; o < outputs.size() && o < s.outputs.size(); ++o) {
    const ComboSlot& out = outputs[o];
    const size_t p = s.inputs.size() + o;
    f.types = typeOk(out.dtype, cc.types[p]) && f.types;
    if (effectiveFormat(cc.formats[p], out.rank) != effectiveFormat(out.format, out.rank))
      ++f.output_reformats;
    if (o < aliases.size() && aliases[o] >= 0 && !s.inputs.empty())
      f.aliases =
          f.aliases && cc.formats[p] == cc.formats[declPos(static_cast<size_t>(aliases[o]))];
  }
  return f;
}

}  // namespace opforge
