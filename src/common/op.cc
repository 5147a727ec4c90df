#include "opforge/op.h"

#include <charconv>
#include <deque>
#include <mutex>
#include <stdexcept>

namespace opforge {

void AttrMap::throwMissing(const std::string& name) {
  throw std::logic_error("attribute '" + name +
                         "' is not set on this node (an undeclared name, or an optional attribute "
                         "read without has())");
}

void AttrMap::throwWrongType(const std::string& name, const AttrValue& held, AttrType wanted) {
  const char* have =
      std::holds_alternative<std::monostate>(held) ? "nothing" : attrTypeName(attrTypeOf(held));
  throw std::logic_error("attribute '" + name + "' holds " + have + ", read as " +
                         attrTypeName(wanted));
}

const char* attrTypeName(AttrType t) {
  switch (t) {
    case AttrType::kInt:
      return "int";
    case AttrType::kFloat:
      return "float";
    case AttrType::kString:
      return "string";
    case AttrType::kBool:
      return "bool";
    case AttrType::kBytes:
      return "bytes";
    case AttrType::kInts8:
      return "int8[]";
    case AttrType::kInts16:
      return "int16[]";
    case AttrType::kInts32:
      return "int32[]";
    case AttrType::kInts64:
      return "int64[]";
    case AttrType::kFloats16:
      return "float16[]";
    case AttrType::kFloats32:
      return "float32[]";
    case AttrType::kFloats64:
      return "float64[]";
    case AttrType::kBools:
      return "bool[]";
    case AttrType::kTensor:
      return "tensor";
  }
  return "?";
}

AttrType attrTypeOf(const AttrValue& v) {
  // variant index 0 is monostate; the rest follow the AttrType order.
  return static_cast<AttrType>(v.index());
}

namespace {
// Numbers as std::to_chars writes them: the shortest text that reads back to the same value, and
// independent of any locale (these strings are also timing-cache keys).
template <typename T>
std::string number(T x) {
  char buf[64];
  auto r = std::to_chars(buf, buf + sizeof(buf), x);
  return std::string(buf, r.ptr);
}

template <typename V>
std::string listToString(const V& v, size_t max_elements) {
  std::string out = "[";
  for (size_t i = 0; i < v.size() && i < max_elements; ++i) {
    if (i) out += ", ";
    using E = typename V::value_type;
    if constexpr (std::is_same_v<E, half>) {
      out += number(halfToFloat(v[i].bits));
    } else if constexpr (std::is_same_v<E, bool>) {
      out += v[i] ? "true" : "false";
    } else {
      out += number(v[i]);
    }
  }
  if (v.size() > max_elements) out += ", ... (" + std::to_string(v.size()) + " values)";
  out += "]";
  return out;
}
}  // namespace

std::string attrToString(const AttrValue& v, size_t max_elements) {
  return std::visit(
      [&](const auto& x) -> std::string {
        using T = std::decay_t<decltype(x)>;
        if constexpr (std::is_same_v<T, std::monostate>) {
          return "<unset>";
        } else if constexpr (std::is_same_v<T, int64_t>) {
          return std::to_string(x);
        } else if constexpr (std::is_same_v<T, double>) {
          return number(x);
        } else if constexpr (std::is_same_v<T, std::string>) {
          return "\"" + x + "\"";
        } else if constexpr (std::is_same_v<T, bool>) {
          return x ? "true" : "false";
        } else if constexpr (std::is_same_v<T, Bytes>) {
          return "<" + std::to_string(x.data.size()) + " bytes>";
        } else if constexpr (std::is_same_v<T, TensorValue>) {
          return "tensor " + describe(x.desc);
        } else {
          return listToString(x, max_elements);
        }
      },
      v);
}

std::pair<std::string, std::string> splitKey(const std::string& key) {
  size_t p = key.rfind("::");
  if (p == std::string::npos) return {"", key};
  return {key.substr(0, p), key.substr(p + 2)};
}

// ---------------------------------------------------------------------------------------------
// Combination grammar
// ---------------------------------------------------------------------------------------------

namespace {
std::string trim(const std::string& s) {
  size_t b = s.find_first_not_of(" \t");
  size_t e = s.find_last_not_of(" \t");
  return b == std::string::npos ? "" : s.substr(b, e - b + 1);
}

std::vector<std::string> split(const std::string& s, char sep) {
  std::vector<std::string> out;
  std::string cur;
  for (char c : s) {
    if (c == sep) {
      out.push_back(trim(cur));
      cur.clear();
    } else {
      cur += c;
    }
  }
  out.push_back(trim(cur));
  return out;
}

// One position's entry: options and whether they move jointly ('|') or independently ('*').
struct Entry {
  std::vector<std::string> options;
  bool joint = false;
};

Result<Entry> parseEntry(const std::string& e) {
  Entry out;
  bool has_bar = e.find('|') != std::string::npos;
  bool has_star = e.find('*') != std::string::npos;
  if (has_bar && has_star)
    return Status::invalid("combination entry '" + e + "' mixes '|' and '*'");
  out.joint = has_bar;
  out.options = split(e, has_bar ? '|' : '*');
  for (const auto& o : out.options)
    if (o.empty()) return Status::invalid("empty option in combination entry '" + e + "'");
  return out;
}

// Expands per-position entries into a list of per-position choices.
Result<std::vector<std::vector<std::string>>> expandEntries(const std::vector<Entry>& entries) {
  size_t joint_len = 0;
  for (const auto& e : entries) {
    if (!e.joint) continue;
    if (joint_len && e.options.size() != joint_len)
      return Status::invalid("positions joined with '|' list different numbers of options (" +
                             std::to_string(joint_len) + " and " +
                             std::to_string(e.options.size()) + ")");
    joint_len = e.options.size();
  }
  std::vector<std::vector<std::string>> out;
  const size_t outer = joint_len ? joint_len : 1;
  for (size_t k = 0; k < outer; ++k) {
    std::vector<std::vector<std::string>> partial{{}};
    for (const auto& e : entries) {
      std::vector<std::vector<std::string>> next;
      for (const auto& p : partial) {
        if (e.joint) {
          auto q = p;
          q.push_back(e.options[k]);
          next.push_back(std::move(q));
        } else {
          for (const auto& o : e.options) {
            auto q = p;
            q.push_back(o);
            next.push_back(std::move(q));
          }
        }
      }
      partial = std::move(next);
    }
    for (auto& p : partial) out.push_back(std::move(p));
  }
  return out;
}

Result<std::vector<Entry>> positionEntries(
    const std::string& spec, const std::vector<std::pair<std::vector<int>, std::string>>& pos,
    int positions, const char* what) {
  std::vector<std::optional<Entry>> entries(positions);
  if (!spec.empty()) {
    auto parts = split(spec, ',');
    if (parts.size() != 1 && static_cast<int>(parts.size()) != positions)
      return Status::invalid(std::string(what) + " '" + spec + "' has " +
                             std::to_string(parts.size()) + " entries for " +
                             std::to_string(positions) + " inputs and outputs");
    for (int i = 0; i < positions; ++i) {
      OPFORGE_ASSIGN_OR_RETURN(entries[i], parseEntry(parts.size() == 1 ? parts[0] : parts[i]));
    }
  }
  for (const auto& [idx, s] : pos) {
    OPFORGE_ASSIGN_OR_RETURN(Entry e, parseEntry(s));
    for (int i : idx) {
      if (i < 0 || i >= positions)
        return Status::invalid(std::string(what) + ": pos(" + std::to_string(i) +
                               ") is outside the op's " + std::to_string(positions) +
                               " inputs and outputs");
      entries[i] = e;
    }
  }
  std::vector<Entry> out;
  for (int i = 0; i < positions; ++i) {
    if (!entries[i])
      return Status::invalid(std::string(what) + ": position " + std::to_string(i) +
                             " has no entry");
    out.push_back(*entries[i]);
  }
  return out;
}
}  // namespace

Result<std::vector<ConcreteCombo>> expandCombo(const Combo& c, int positions) {
  OPFORGE_ASSIGN_OR_RETURN(auto type_entries,
                           positionEntries(c.types, c.pos_types, positions, "type combination"));
  std::string fspec = c.formats.empty() && c.pos_formats.empty() ? "LINEAR" : c.formats;
  std::vector<std::pair<std::vector<int>, std::string>> fpos = c.pos_formats;
  if (fspec.empty()) {  // pos() formats only: unspecified positions are LINEAR
    std::vector<bool> set(positions, false);
    for (auto& [idx, s] : fpos)
      for (int i : idx)
        if (i >= 0 && i < positions) set[i] = true;
    std::vector<int> rest;
    for (int i = 0; i < positions; ++i)
      if (!set[i]) rest.push_back(i);
    if (!rest.empty()) fpos.emplace_back(rest, "LINEAR");
  }
  OPFORGE_ASSIGN_OR_RETURN(auto format_entries,
                           positionEntries(fspec, fpos, positions, "format combination"));
  OPFORGE_ASSIGN_OR_RETURN(auto types, expandEntries(type_entries));
  OPFORGE_ASSIGN_OR_RETURN(auto formats, expandEntries(format_entries));
  std::vector<ConcreteCombo> out;
  for (const auto& t : types) {
    for (const auto& f : formats) {
      ConcreteCombo cc;
      for (const auto& name : t) {
        auto dt = parseDataType(name);
        if (!dt) return Status::invalid("unknown data type '" + name + "' in combination");
        cc.types.push_back(*dt);
      }
      for (const auto& name : f) {
        auto fm = parseFormat(name);
        if (!fm) return Status::invalid("unknown format '" + name + "' in combination");
        cc.formats.push_back(*fm);
      }
      cc.tactic_ids = c.tactic_ids;
      if (std::find(out.begin(), out.end(), cc) == out.end()) out.push_back(std::move(cc));
    }
  }
  return out;
}

bool takesChannelsLast(const OpSchema& s) {
  for (const auto& c : s.combos) {
    if (c.formats.find("HWC") != std::string::npos) return true;
    for (const auto& [pos, f] : c.pos_formats)
      if (f.find("HWC") != std::string::npos) return true;
  }
  return false;
}

std::string describe(const ConcreteCombo& c) {
  std::string s;
  for (size_t i = 0; i < c.types.size(); ++i) {
    if (i) s += ", ";
    s += dtypeName(c.types[i]);
    if (c.formats[i] != Format::kLinear) s += ":" + formatName(c.formats[i]);
  }
  return s;
}

// ---------------------------------------------------------------------------------------------
// OpDef
// ---------------------------------------------------------------------------------------------

OpDef::OpDef(const std::string& key) {
  auto [ns, name] = splitKey(key);
  schema_.ns = ns;
  schema_.name = name;
  // The CPU reference is tactic 0 and always exists once cpu() is called.
}

OpDef& OpDef::doc(std::string text) {
  schema_.doc = std::move(text);
  return *this;
}
OpDef& OpDef::version(std::string v) {
  schema_.version = std::move(v);
  return *this;
}
OpDef& OpDef::input(std::string name, std::string d) {
  schema_.inputs.push_back({std::move(name), false, false, false, std::move(d)});
  return *this;
}
OpDef& OpDef::optionalInput(std::string name, std::string d) {
  schema_.inputs.push_back({std::move(name), true, false, false, std::move(d)});
  return *this;
}
OpDef& OpDef::variadicInput(std::string name, std::string d) {
  schema_.inputs.push_back({std::move(name), false, true, false, std::move(d)});
  return *this;
}
OpDef& OpDef::valueInput(std::string name, bool optional, std::string d) {
  schema_.inputs.push_back({std::move(name), optional, false, true, std::move(d)});
  return *this;
}
OpDef& OpDef::shapeInput(std::string name, bool optional, std::string d) {
  valueInput(std::move(name), optional, std::move(d));
  schema_.inputs.back().shape_only = true;
  return *this;
}
OpDef& OpDef::variadicValueInput(std::string name, std::string d) {
  schema_.inputs.push_back({std::move(name), false, true, true, std::move(d)});
  return *this;
}
OpDef& OpDef::output(std::string name, std::string d) {
  schema_.outputs.push_back({std::move(name), false, false, false, std::move(d)});
  return *this;
}
OpDef& OpDef::optionalOutput(std::string name, std::string d) {
  schema_.outputs.push_back({std::move(name), true, false, false, std::move(d)});
  return *this;
}
OpDef& OpDef::variadicOutput(std::string name, std::string d) {
  schema_.outputs.push_back({std::move(name), false, true, false, std::move(d)});
  return *this;
}
OpDef& OpDef::check(CheckFn fn) {
  check_ = std::move(fn);
  return *this;
}
OpDef& OpDef::shape(ShapeFn fn) {
  shape_ = std::move(fn);
  return *this;
}
OpDef& OpDef::shape(std::function<Result<SymDesc>(ShapeContext&)> fn) {
  shape_ = [f = std::move(fn)](ShapeContext& c) -> Result<std::vector<SymDesc>> {
    auto r = f(c);
    if (!r) return r.status();
    return std::vector<SymDesc>{std::move(r).value()};
  };
  return *this;
}
OpDef& OpDef::combos(std::string types, std::string formats) {
  schema_.combos.emplace_back(std::move(types), std::move(formats));
  return *this;
}
OpDef& OpDef::combo(Combo c) {
  schema_.combos.push_back(std::move(c));
  return *this;
}
OpDef& OpDef::cpu(KernelFn fn) {
  return tactic(0, "cpu.reference", std::move(fn));
}
OpDef& OpDef::tactic(int32_t id, std::string name, KernelFn fn, AppliesFn applies,
                     WorkspaceFn workspace) {
  // Ids from 1 << 30 up are further CPU tactics (ops defined in Python under autotune).
  Backend b = (id == 0 || id >= (1 << 30)) ? Backend::kCpu : Backend::kCuda;
  tactics_.push_back({id, name, b, std::move(fn), std::move(applies), std::move(workspace)});
  schema_.tactics.push_back({id, std::move(name), b});
  return *this;
}
OpDef& OpDef::tf32Tactic(int32_t id, std::string name, KernelFn fn, AppliesFn applies,
                         WorkspaceFn workspace) {
  tactic(id, std::move(name), std::move(fn), std::move(applies), std::move(workspace));
  tactics_.back().tf32 = true;
  schema_.tactics.back().tf32 = true;
  return *this;
}
OpDef& OpDef::viewTactic(int32_t id, std::string name, KernelFn fn, AppliesFn applies) {
  tactic(id, std::move(name), std::move(fn), std::move(applies));
  tactics_.back().in_place = true;
  schema_.tactics.back().in_place = true;
  return *this;
}
OpDef& OpDef::alias(std::string key) {
  schema_.aliases.push_back(std::move(key));
  return *this;
}
OpDef& OpDef::backward(std::string key) {
  schema_.backward = std::move(key);
  return *this;
}
OpDef& OpDef::elementwise(bool on) {
  schema_.elementwise = on;
  return *this;
}
OpDef& OpDef::kind(std::string k) {
  schema_.kind = std::move(k);
  return *this;
}

OpDef& OpDef::planAttrs(std::vector<std::string> names) {
  schema_.plan_attrs_only = true;
  schema_.plan_attrs = std::move(names);
  return *this;
}

const TacticDef* OpDef::findTactic(int32_t id) const {
  for (const auto& t : tactics_)
    if (t.id == id) return &t;
  return nullptr;
}

namespace detail {
namespace {
struct LocalRegistry {
  std::deque<OpDef> ops;
  std::vector<std::pair<std::string, std::function<void(OpDef&)>>> pending_tactics;
};
LocalRegistry& local() {
  static LocalRegistry r;
  return r;
}
}  // namespace

OpDef& registerOp(const std::string& key) {
  return local().ops.emplace_back(key);
}

bool registerTactics(const std::string& key, std::function<void(OpDef&)> fn) {
  local().pending_tactics.emplace_back(key, std::move(fn));
  return true;
}

// Applies pending tactic registrations (static initialisation order across files is unspecified,
// so tactics attach here, when the library table is first built). Returns the op list.
std::deque<OpDef>& finalizedOps(std::string& error) {
  auto& r = local();
  for (auto& [key, fn] : r.pending_tactics) {
    bool found = false;
    for (auto& op : r.ops) {
      if (op.schema().key() == key) {
        fn(op);
        found = true;
      }
    }
    if (!found && error.empty())
      error = "tactics registered for '" + key + "', which this library does not define";
  }
  r.pending_tactics.clear();
  return r.ops;
}
}  // namespace detail

}  // namespace opforge
