// RegisteredOp and KernelInstance: an op of a loaded library as the engine calls it (attribute
// conversion, shape queries, kernel instances), over the library's C entry points.
#include <algorithm>
#include <climits>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <limits>

#include "../common/checked.h"
#include "../common/wire.h"
#include "opforge/plugin_export.h"
#include "opforge/registry.h"

namespace opforge {

namespace {
constexpr size_t kErrCap = 4096;

std::string opLabel(const OpSchema& s) {
  return s.key() + " v" + s.version;
}

std::string nodePrefix(const std::string& node, const OpSchema& s) {
  return "node '" + node + "' (" + opLabel(s) + ")";
}

template <typename T>
bool fitsInt(double v) {
  return std::isfinite(v) && std::floor(v) == v &&
         v >= static_cast<double>(std::numeric_limits<T>::min()) &&
         v <= static_cast<double>(std::numeric_limits<T>::max());
}

// Flattens any list-like attribute value into doubles (with the integer flag) for conversion.
bool asNumbers(const AttrValue& v, std::vector<double>& out, bool& integral) {
  integral = true;
  auto take = [&](const auto& vec, bool is_int) {
    integral = is_int;
    for (const auto& x : vec) {
      using E = std::decay_t<decltype(x)>;
      if constexpr (std::is_same_v<E, half>) {
        out.push_back(halfToFloat(x.bits));
      } else {
        out.push_back(static_cast<double>(x));
      }
    }
    return true;
  };
  if (auto* p = std::get_if<std::vector<int8_t>>(&v)) return take(*p, true);
  if (auto* p = std::get_if<std::vector<int16_t>>(&v)) return take(*p, true);
  if (auto* p = std::get_if<std::vector<int32_t>>(&v)) return take(*p, true);
  if (auto* p = std::get_if<std::vector<int64_t>>(&v)) return take(*p, true);
  if (auto* p = std::get_if<std::vector<half>>(&v)) return take(*p, false);
  if (auto* p = std::get_if<std::vector<float>>(&v)) return take(*p, false);
  if (auto* p = std::get_if<std::vector<double>>(&v)) return take(*p, false);
  if (auto* p = std::get_if<std::vector<bool>>(&v)) {
    for (bool b : *p) out.push_back(b ? 1.0 : 0.0);
    return true;
  }
  if (auto* t = std::get_if<TensorValue>(&v)) {
    if (t->desc.rank() > 1) return false;
    integral = !isFloatType(t->desc.dtype);
    for (int64_t i = 0; i < t->desc.numel(); ++i)
      out.push_back(loadAsDouble(t->data.data(), t->desc.dtype, i));
    return true;
  }
  return false;
}

template <typename T>
Result<AttrValue> toIntList(const std::vector<double>& nums) {
  std::vector<T> out;
  for (size_t i = 0; i < nums.size(); ++i) {
    if (!fitsInt<T>(nums[i]))
      return Status::invalid("value " + std::to_string(nums[i]) + " at index " + std::to_string(i) +
                             " does not fit the declared element type");
    out.push_back(static_cast<T>(nums[i]));
  }
  return AttrValue(std::move(out));
}

Result<AttrValue> convertAttr(const AttrDef& def, const AttrValue& v) {
  const AttrType want = def.type;
  const AttrType have = attrTypeOf(v);
  if (have == want) return v;
  auto mismatch = [&]() {
    return Status::invalid("attribute '" + def.name + "' must be " + attrTypeName(want) + ", got " +
                           attrTypeName(have) + " " + attrToString(v));
  };
  switch (want) {
    case AttrType::kInt:
      if (auto* b = std::get_if<bool>(&v)) return AttrValue(int64_t{*b});
      return mismatch();
    case AttrType::kFloat:
      if (auto* i = std::get_if<int64_t>(&v)) return AttrValue(static_cast<double>(*i));
      return mismatch();
    case AttrType::kBool:
      if (auto* i = std::get_if<int64_t>(&v)) {
        if (*i == 0 || *i == 1) return AttrValue(*i == 1);
        return Status::invalid("attribute '" + def.name + "' is a bool and must be 0 or 1, got " +
                               std::to_string(*i));
      }
      return mismatch();
    case AttrType::kString:
      if (auto* b = std::get_if<Bytes>(&v))
        return AttrValue(std::string(b->data.begin(), b->data.end()));
      return mismatch();
    case AttrType::kBytes:
      if (auto* s = std::get_if<std::string>(&v)) return AttrValue(Bytes{{s->begin(), s->end()}});
      return mismatch();
    case AttrType::kTensor:
      return mismatch();
    default:
      break;
  }
  std::vector<double> nums;
  bool integral = true;
  if (!asNumbers(v, nums, integral)) return mismatch();
  Result<AttrValue> r = Status::internal("unreachable");
  switch (want) {
    case AttrType::kInts8:
      r = toIntList<int8_t>(nums);
      break;
    case AttrType::kInts16:
      r = toIntList<int16_t>(nums);
      break;
    case AttrType::kInts32:
      r = toIntList<int32_t>(nums);
      break;
    case AttrType::kInts64:
      r = toIntList<int64_t>(nums);
      break;
    case AttrType::kBools: {
      std::vector<bool> out;
      for (double d : nums) {
        if (d != 0.0 && d != 1.0)
          return Status::invalid("attribute '" + def.name +
                                 "' is a bool list; values must be 0 or 1");
        out.push_back(d == 1.0);
      }
      return AttrValue(std::move(out));
    }
    case AttrType::kFloats16: {
      std::vector<half> out;
      for (double d : nums) out.push_back(half{floatToHalf(static_cast<float>(d))});
      return AttrValue(std::move(out));
    }
    case AttrType::kFloats32: {
      std::vector<float> out(nums.begin(), nums.end());
      return AttrValue(std::move(out));
    }
    case AttrType::kFloats64:
      return AttrValue(std::move(nums));
    default:
      return mismatch();
  }
  if (!r)
    return Status::invalid("attribute '" + def.name + "' (" + attrTypeName(want) +
                           "): " + r.status().message());
  if (!integral) {
    // a float list where integers were declared: accept only whole numbers (checked above)
  }
  return r;
}
}  // namespace

namespace {
// validateAttrs and validatePlanAttrs: `given` converted to the declared types (unknown names
// refused unless `ignore_unknown`), then the defaults of the attributes `fills` accepts.
template <typename Fills>
Result<AttrMap> convertAttrs(const OpSchema& s, const std::string& node, const AttrMap& given,
                             bool ignore_unknown, Fills fills) {
  AttrMap out;
  for (const auto& [name, v] : given.all()) {
    const AttrDef* def = nullptr;
    for (const auto& d : s.attrs)
      if (d.name == name) def = &d;
    if (!def) {
      if (ignore_unknown) continue;
      std::string known;
      for (const auto& d : s.attrs)
        known += (known.empty() ? "" : ", ") + d.name + " (" + attrTypeName(d.type) + ")";
      return Status::invalid(nodePrefix(node, s) + ": unknown attribute '" + name +
                             "'; the op's attributes are: " + (known.empty() ? "none" : known));
    }
    auto conv = convertAttr(*def, v);
    if (!conv) return conv.status().withContext(nodePrefix(node, s));
    out.set(name, std::move(conv).value());
  }
  for (const auto& d : s.attrs) {
    if (!fills(d.name) || out.has(d.name) || (d.optional && !d.default_value)) continue;
    if (!d.default_value)
      return Status::invalid(nodePrefix(node, s) + ": required attribute '" + d.name + "' (" +
                             attrTypeName(d.type) + ") is missing");
    out.set(d.name, *d.default_value);
  }
  return out;
}
}  // namespace

Result<AttrMap> RegisteredOp::validateAttrs(const std::string& node, const AttrMap& given,
                                            bool ignore_unknown) const {
  return convertAttrs(schema_, node, given, ignore_unknown,
                      [](const std::string&) { return true; });
}

Result<AttrMap> RegisteredOp::validatePlanAttrs(const std::string& node,
                                                const AttrMap& stored) const {
  const auto& keep = schema_.plan_attrs;
  const auto kept = [&](const std::string& name) {
    return std::find(keep.begin(), keep.end(), name) != keep.end();
  };
  for (const auto& [name, v] : stored.all()) {
    if (kept(name)) continue;  // kept names are declared (Registry::addTable checks)
    std::string list;
    for (const auto& k : keep) list += (list.empty() ? "" : ", ") + k;
    return Status::corrupt(nodePrefix(node, schema_) + ": the plan stores attribute '" + name +
                           "', which plans of this op do not keep (they keep " +
                           (list.empty() ? "none" : list) + ")");
  }
  return convertAttrs(schema_, node, stored, false, kept);
}

Result<InferResult> RegisteredOp::infer(const std::string& node, const AttrMap& attrs,
                                        const std::vector<InferInput>& inputs,
                                        const std::string& symbol_prefix) const {
  wire::Writer w;
  {
    wire::ShapeQuery q;
    q.node = node;
    q.key = key();
    q.symbol_prefix = symbol_prefix;
    q.attrs = attrs;
    q.inputs = inputs;
    wire::put(w, q);
  }
  OpforgeBuffer ans{nullptr, 0};
  std::string err(kErrCap, '\0');
  int32_t rc = c_->infer(c_, w.buffer().data(), w.size(), &ans, err.data(), err.size());
  if (rc != OPFORGE_ABI_OK) {
    err.resize(std::strlen(err.c_str()));
    auto code = static_cast<StatusCode>(rc);
    if (code == StatusCode::kOk || rc < 0 || rc > static_cast<int>(StatusCode::kInternal))
      code = StatusCode::kInternal;
    // Shape rules write "node '...' (...): ..." themselves through ShapeContext::error.
    if (err.rfind("node '", 0) != 0) err = nodePrefix(node, schema_) + ": " + err;
    return Status(code, err);
  }
  InferResult res;
  {
    wire::Reader r(ans.data, ans.size, "shape answer of " + key());
    res = wire::getShapeAnswer(r);
    Status st = r.status();
    lib_->free_buffer(&ans);
    if (!st) return st;
  }
  const std::string where = nodePrefix(node, schema_);
  size_t declared = schema_.outputs.size();
  // A variadic last output (ONNX Split) may be returned any number of times (at least once).
  const bool variadic_out = declared > 0 && schema_.outputs.back().variadic;
  if (variadic_out ? res.outputs.size() < declared : res.outputs.size() != declared)
    return Status::internal(where + ": the shape rule returned " +
                            std::to_string(res.outputs.size()) + " outputs; the op declares " +
                            std::to_string(declared) + (variadic_out ? " or more" : ""));
  for (size_t k = 0; k < res.size_tensors.size(); ++k) {
    int found = -1;
    for (size_t o = 0; o < res.outputs.size(); ++o)
      if (res.outputs[o].size_tensor == static_cast<int>(k)) found = static_cast<int>(o);
    if (found < 0) {
      SymDesc d = SymDesc::make(res.size_tensors[k].dtype, {});
      d.size_tensor = static_cast<int>(k);
      res.outputs.push_back(d);
      found = static_cast<int>(res.outputs.size()) - 1;
    }
    res.size_tensors[k].output = found;
  }
  for (size_t o = 0; o < res.outputs.size(); ++o) {
    const SymDesc& d = res.outputs[o];
    if (!isKnownDataType(static_cast<int32_t>(d.dtype)))
      return Status::internal(where + ": the shape rule gave output " + std::to_string(o) +
                              " no data type");
    if (d.alias >= 0) {
      if (d.alias >= static_cast<int>(inputs.size()) || !inputs[d.alias].present)
        return Status::internal(where + ": output " + std::to_string(o) +
                                " aliases a missing input");
      const SymDesc& in = inputs[d.alias].desc;
      bool same = in.dtype == d.dtype && in.dims.size() == d.dims.size();
      for (size_t i = 0; same && i < in.dims.size(); ++i) same = in.dims[i].sameAs(d.dims[i]);
      if (!same)
        return Status::internal(where + ": output " + std::to_string(o) + " aliases input " +
                                std::to_string(d.alias) + " but has another type or shape");
    }
  }
  return res;
}

Result<std::shared_ptr<KernelInstance>> RegisteredOp::instantiate(const std::string& node,
                                                                  const AttrMap& attrs) const {
  wire::Writer w;
  wire::put(w, attrs);
  void* handle = nullptr;
  std::string err(kErrCap, '\0');
  int32_t rc = c_->create(c_, w.buffer().data(), w.size(), &handle, err.data(), err.size());
  if (rc != OPFORGE_ABI_OK) {
    err.resize(std::strlen(err.c_str()));
    auto code = static_cast<StatusCode>(rc);
    if (rc <= 0 || rc > static_cast<int>(StatusCode::kInternal)) code = StatusCode::kInternal;
    return Status(code, nodePrefix(node, schema_) + ": " + err);
  }
  return std::shared_ptr<KernelInstance>(new KernelInstance(this, handle));
}

KernelInstance::~KernelInstance() {
  if (handle_) op_->c_->destroy(handle_);
}

namespace {
OpforgeTensor toC(const TensorDesc& d, void* data, Device dev) {
  OpforgeTensor t{};
  t.data = data;
  t.dims = d.dims.data();
  t.rank = d.rank();
  t.dtype = static_cast<int32_t>(d.dtype);
  t.format = static_cast<int32_t>(d.format);
  t.device = static_cast<int32_t>(dev);
  return t;
}
}  // namespace

bool KernelInstance::tacticApplies(int32_t tactic, std::span<const TensorDesc> in,
                                   std::span<const TensorDesc> out, size_t* workspace) const {
  std::vector<OpforgeTensor> ci, co;
  for (const auto& d : in) ci.push_back(toC(d, nullptr, Device::kCpu));
  for (const auto& d : out) co.push_back(toC(d, nullptr, Device::kCpu));
  uint64_t ws = 0;
  int32_t r = op_->c_->query_tactic(handle_, tactic, ci.data(), static_cast<int32_t>(ci.size()),
                                    co.data(), static_cast<int32_t>(co.size()), &ws);
  if (workspace) *workspace = ws;
  return r == 1;
}

Status KernelInstance::run(int32_t tactic, std::span<const Tensor> in, std::span<const Tensor> out,
                           void* workspace, size_t workspace_size, void* stream,
                           DeviceErrorRecord* error_record) const {
  std::vector<OpforgeTensor> ci, co;
  ci.reserve(in.size());
  co.reserve(out.size());
  for (const auto& t : in) ci.push_back(toC(t.desc, t.data, t.device));
  for (const auto& t : out) co.push_back(toC(t.desc, t.data, t.device));
  char err[kErrCap];
  err[0] = '\0';
  OpforgeKernelArgs a{};
  a.struct_size = sizeof(a);
  a.tactic = tactic;
  a.inputs = ci.data();
  a.num_inputs = static_cast<int32_t>(ci.size());
  a.outputs = co.data();
  a.num_outputs = static_cast<int32_t>(co.size());
  a.workspace = workspace;
  a.workspace_size = workspace_size;
  a.stream = stream;
  a.error = err;
  a.error_capacity = sizeof(err);
  a.error_record = error_record;
  int32_t rc = op_->c_->run(handle_, &a);
  if (rc == OPFORGE_ABI_OK) return Status::ok();
  auto code = static_cast<StatusCode>(rc);
  if (rc <= 0 || rc > static_cast<int>(StatusCode::kInternal)) code = StatusCode::kRuntime;
  return Status(code, err);
}

}  // namespace opforge
