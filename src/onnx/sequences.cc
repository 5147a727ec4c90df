// sequences.cc — ONNX sequence ops inside a graph, as import-time lists of tensors (importer.h).
//
// A sequence never reaches the engine: SequenceEmpty / SequenceConstruct make a list, Insert and
// Erase make a new one, At and Length read it, ConcatFromSequence and SplitToSequence turn it into
// (or make it from) Concat, Unsqueeze, Slice and Squeeze nodes. Positions must be known when the
// model is imported (constants, or folded from static shapes), and a sequence carried through a
// Loop works where the loop is unrolled with iterations that surely run (TorchScript's export of
// torchvision's MViT builds a list of slices in a constant-count loop). What needs a sequence at
// run time — a sequence graph input or output, a position computed from data, a sequence through an
// If whose condition is run-time data — is refused with kUnsupported, naming the node.
#include <algorithm>
#include <cstring>

#include "../graph/fold.h"
#include "importer.h"

namespace opforge::onnx_import {

bool isSequenceOp(const onnx::NodeProto& n) {
  if (!isStandardDomain(n.domain())) return false;
  const std::string& t = n.op_type();
  return t == "SequenceEmpty" || t == "SequenceConstruct" || t == "SequenceInsert" ||
         t == "SequenceAt" || t == "SequenceErase" || t == "SequenceLength" ||
         t == "ConcatFromSequence" || t == "SplitToSequence";
}

int Importer::addSequence(Sequence s) {
  sequences.push_back(std::move(s));
  return -1 - static_cast<int>(sequences.size());
}

Status Importer::needTensor(int id, const std::string& where, const std::string& what) const {
  if (isSequenceId(id))
    return Status::unsupported(where + ": " + what +
                               " is a sequence; here opforge needs a tensor (sequences are "
                               "import-time lists: read them with SequenceAt or "
                               "ConcatFromSequence)");
  return Status::ok();
}

Status Importer::importSequenceOp(const onnx::NodeProto& n, const std::string& name, Scope& scope,
                                  const std::vector<graph::Guard>& guards,
                                  const std::string& prefix) {
  const std::string& t = n.op_type();
  const std::string where = file + ": node '" + name + "' (ai.onnx::" + t + ")";
  auto in = [&](int i) -> int {
    if (i >= n.input_size() || n.input(i).empty()) return -1;
    auto it = scope.find(n.input(i));
    return it == scope.end() ? -1 : it->second;
  };
  auto seqIn = [&](int i) -> Result<const Sequence*> {
    const int id = in(i);
    if (!isSequenceId(id))
      return Status::invalid(where + ": input " + std::to_string(i) + " ('" +
                             (i < n.input_size() ? n.input(i) : std::string()) +
                             "') must be a sequence");
    return &sequences[static_cast<size_t>(-2 - id)];
  };
  auto tensorIn = [&](int i, const char* what) -> Result<int> {
    const int id = in(i);
    if (id == -1)
      return Status::invalid(where + ": input '" + what + "' ('" +
                             (i < n.input_size() ? n.input(i) : std::string()) +
                             "') is not defined");
    OPFORGE_RETURN_IF_ERROR(needTensor(id, where, std::string("input '") + what + "'"));
    return id;
  };
  // A position: known when the model is imported, in [-len, len + extra), made non-negative.
  auto position = [&](int i, int64_t len, int64_t extra, int64_t dflt) -> Result<int64_t> {
    if (in(i) == -1) return dflt;
    OPFORGE_ASSIGN_OR_RETURN(int v, tensorIn(i, "position"));
    auto p = knownScalar(g, v);
    if (!p)
      return Status::unsupported(where + ": input 'position' ('" + n.input(i) +
                                 "') is run-time data; opforge needs sequence positions when the "
                                 "model is imported");
    if (*p < -len || *p >= len + extra)
      return Status::invalid(where + ": position " + std::to_string(*p) +
                             " is outside the sequence of " + std::to_string(len) + " tensors");
    return *p < 0 ? *p + len : *p;
  };
  auto setOut = [&](int id) {
    if (n.output_size() > 0 && !n.output(0).empty()) scope[n.output(0)] = id;
  };
  auto outName = [&](int o) {
    return o < n.output_size() && !n.output(o).empty() ? valueName(n.output(o), prefix)
                                                       : std::string();
  };
  auto checkType = [&](const Sequence& s, int v) -> Status {
    if (s.dtype != DataType::kUndefined && g.values[v].dtype != s.dtype)
      return Status::invalid(where + ": tensor '" + g.values[v].name + "' is " +
                             dtypeName(g.values[v].dtype) + "; the sequence holds " +
                             dtypeName(s.dtype));
    return Status::ok();
  };

  if (t == "SequenceEmpty") {
    Sequence s;
    s.dtype = elemType(static_cast<int32_t>(intAttr(n, "dtype").value_or(1)));
    if (s.dtype == DataType::kUndefined)
      return Status::unsupported(where + ": attribute 'dtype' " +
                                 std::to_string(intAttr(n, "dtype").value_or(0)) +
                                 " is not a data type opforge holds");
    setOut(addSequence(std::move(s)));
    return Status::ok();
  }
  if (t == "SequenceConstruct") {
    Sequence s;
    for (int i = 0; i < n.input_size(); ++i) {
      OPFORGE_ASSIGN_OR_RETURN(int v, tensorIn(i, "inputs"));
      if (s.items.empty()) s.dtype = g.values[v].dtype;
      OPFORGE_RETURN_IF_ERROR(checkType(s, v));
      s.items.push_back(v);
    }
    if (s.items.empty()) return Status::invalid(where + ": needs at least one input");
    setOut(addSequence(std::move(s)));
    return Status::ok();
  }
  if (t == "SequenceInsert") {
    OPFORGE_ASSIGN_OR_RETURN(const Sequence* s, seqIn(0));
    Sequence out = *s;
    OPFORGE_ASSIGN_OR_RETURN(int v, tensorIn(1, "tensor"));
    OPFORGE_RETURN_IF_ERROR(checkType(out, v));
    const auto len = static_cast<int64_t>(out.items.size());
    OPFORGE_ASSIGN_OR_RETURN(int64_t p, position(2, len, 1, len));
    out.dtype = g.values[v].dtype;
    out.items.insert(out.items.begin() + p, v);
    setOut(addSequence(std::move(out)));
    return Status::ok();
  }
  if (t == "SequenceErase") {
    OPFORGE_ASSIGN_OR_RETURN(const Sequence* s, seqIn(0));
    Sequence out = *s;
    const auto len = static_cast<int64_t>(out.items.size());
    if (len == 0) return Status::invalid(where + ": the sequence is empty");
    OPFORGE_ASSIGN_OR_RETURN(int64_t p, position(1, len, 0, len - 1));
    out.items.erase(out.items.begin() + p);
    setOut(addSequence(std::move(out)));
    return Status::ok();
  }
  if (t == "SequenceLength") {
    OPFORGE_ASSIGN_OR_RETURN(const Sequence* s, seqIn(0));
    auto ref = net.addConstant(outName(0),
                               scalar(DataType::kInt64, static_cast<int64_t>(s->items.size())));
    if (!ref) return ref.status().withContext(where);
    taken.insert(g.values[ref->id].name);
    setOut(ref->id);
    return Status::ok();
  }
  if (t == "SequenceAt") {
    OPFORGE_ASSIGN_OR_RETURN(const Sequence* s, seqIn(0));
    const auto len = static_cast<int64_t>(s->items.size());
    if (in(1) == -1) return Status::invalid(where + ": needs the input 'position'");
    OPFORGE_ASSIGN_OR_RETURN(int64_t p, position(1, len, 0, 0));
    // A node of its own (an Identity the passes remove), so the output has its ONNX name.
    OPFORGE_ASSIGN_OR_RETURN(int k, addOp("ai.onnx::Identity", name, {},
                                          {s->items[static_cast<size_t>(p)]}, outName(0), guards));
    setOut(g.nodes[k].outputs[0]);
    return Status::ok();
  }
  if (t == "ConcatFromSequence") {
    OPFORGE_ASSIGN_OR_RETURN(const Sequence* s, seqIn(0));
    if (s->items.empty())
      return Status::invalid(where + ": the sequence is empty; Concat needs a tensor");
    const auto axis = intAttr(n, "axis");
    if (!axis) return Status::invalid(where + ": needs the attribute 'axis'");
    const bool new_axis = intAttr(n, "new_axis").value_or(0) != 0;
    std::vector<int> parts = s->items;
    if (new_axis) {
      const auto rank = static_cast<int64_t>(g.values[parts[0]].dims.size());
      if (*axis < -rank - 1 || *axis > rank)
        return Status::invalid(
            where + ": axis " + std::to_string(*axis) +
            " is outside [-r-1, r] for new_axis = 1 (r = " + std::to_string(rank) + ")");
      AttrMap un;
      un.set("axes", AttrValue(std::vector<int64_t>{*axis < 0 ? *axis + rank + 1 : *axis}));
      for (size_t i = 0; i < parts.size(); ++i) {
        OPFORGE_ASSIGN_OR_RETURN(
            int k, addOp("ai.onnx::Unsqueeze", name + "/unsqueeze" + std::to_string(i), un,
                         {parts[i]}, "", guards));
        parts[i] = g.nodes[k].outputs[0];
      }
    }
    AttrMap cat;
    cat.set("axis", AttrValue(*axis));
    OPFORGE_ASSIGN_OR_RETURN(int k, addOp("ai.onnx::Concat", name, cat, parts, outName(0), guards));
    setOut(g.nodes[k].outputs[0]);
    return Status::ok();
  }
  if (t == "SplitToSequence") {
    OPFORGE_ASSIGN_OR_RETURN(int x, tensorIn(0, "input"));
    const graph::Value& xv = g.values[x];
    const auto rank = static_cast<int64_t>(xv.dims.size());
    int64_t axis = intAttr(n, "axis").value_or(0);
    if (axis < -rank || axis >= rank)
      return Status::invalid(where + ": axis " + std::to_string(axis) + " is outside [-" +
                             std::to_string(rank) + ", " + std::to_string(rank) + ")");
    if (axis < 0) axis += rank;
    const DimExpr& d = xv.dims[static_cast<size_t>(axis)];
    if (!d.isConst())
      return Status::unsupported(where + ": axis " + std::to_string(axis) + " of '" + xv.name +
                                 "' has the dynamic length " + d.toString() +
                                 "; opforge needs the sequence's length when the model is "
                                 "imported");
    const int64_t len = d.constValue();
    // At most kMaxUnrolledIterations parts, checked before any list of them is made.
    auto tooMany = [&](int64_t parts) {
      return Status::outOfRange(where + ": " + std::to_string(parts) +
                                " parts; opforge makes at most " +
                                std::to_string(kMaxUnrolledIterations));
    };
    std::vector<int64_t> sizes;
    bool squeeze = false;
    if (in(1) == -1) {
      if (len > kMaxUnrolledIterations) return tooMany(len);
      sizes.assign(static_cast<size_t>(len), 1);
      squeeze = intAttr(n, "keepdims").value_or(1) == 0;
    } else {
      OPFORGE_ASSIGN_OR_RETURN(int sv, tensorIn(1, "split"));
      const graph::Value& spv = g.values[sv];
      std::vector<int64_t> given;
      if (spv.dtype != DataType::kInt64 && spv.dtype != DataType::kInt32)
        return Status::invalid(where + ": input 'split' is " + dtypeName(spv.dtype) +
                               "; it must be INT32 or INT64");
      if (spv.constant) {
        const TensorValue& c = *spv.constant;
        for (int64_t i = 0; i < c.desc.numel(); ++i) {  // exact: no double in between
          int64_t v = 0;
          if (c.desc.dtype == DataType::kInt64) {
            std::memcpy(&v, c.data.data() + i * 8, 8);
          } else {
            int32_t w = 0;
            std::memcpy(&w, c.data.data() + i * 4, 4);
            v = w;
          }
          given.push_back(v);
        }
      } else if (spv.sym_value && std::all_of(spv.sym_value->begin(), spv.sym_value->end(),
                                              [](const DimExpr& e) { return e.isConst(); })) {
        for (const auto& e : *spv.sym_value) given.push_back(e.constValue());
      } else {
        return Status::unsupported(where + ": input 'split' ('" + n.input(1) +
                                   "') is run-time data; opforge needs it when the model is "
                                   "imported");
      }
      if (spv.dims.empty()) {  // a scalar: chunks of that size, the last one shorter
        if (given.size() != 1 || given[0] < 1)
          return Status::invalid(where + ": a scalar 'split' must be >= 1");
        const int64_t parts = len / given[0] + (len % given[0] != 0);
        if (parts > kMaxUnrolledIterations) return tooMany(parts);
        for (int64_t p = 0; p < parts; ++p) sizes.push_back(std::min(given[0], len - p * given[0]));
      } else {
        int64_t sum = 0;
        for (int64_t v : given) {
          if (v < 0 || __builtin_add_overflow(sum, v, &sum))
            return Status::invalid(where + ": 'split' holds a negative or overflowing size");
        }
        if (sum != len)
          return Status::invalid(where + ": 'split' sizes add up to " + std::to_string(sum) +
                                 "; axis " + std::to_string(axis) + " has " + std::to_string(len));
        if (static_cast<int64_t>(given.size()) > kMaxUnrolledIterations)
          return tooMany(static_cast<int64_t>(given.size()));
        sizes = given;
      }
    }
    Sequence s;
    s.dtype = xv.dtype;
    int64_t at = 0;
    for (size_t i = 0; i < sizes.size(); ++i) {
      AttrMap sl;
      sl.set("starts", AttrValue(std::vector<int64_t>{at}));
      sl.set("ends", AttrValue(std::vector<int64_t>{at + sizes[i]}));
      sl.set("axes", AttrValue(std::vector<int64_t>{axis}));
      at += sizes[i];
      OPFORGE_ASSIGN_OR_RETURN(
          int k, addOp("ai.onnx::Slice", name + "/part" + std::to_string(i), sl, {x}, "", guards));
      int v = g.nodes[k].outputs[0];
      if (squeeze) {
        AttrMap sq;
        sq.set("axes", AttrValue(std::vector<int64_t>{axis}));
        OPFORGE_ASSIGN_OR_RETURN(
            int q,
            addOp("ai.onnx::Squeeze", name + "/squeeze" + std::to_string(i), sq, {v}, "", guards));
        v = g.nodes[q].outputs[0];
      }
      s.items.push_back(v);
    }
    setOut(addSequence(std::move(s)));
    return Status::ok();
  }
  return Status::internal(where + ": not a sequence op");
}

}  // namespace opforge::onnx_import
