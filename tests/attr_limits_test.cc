// AttrLimits.*: every built-in op, built from each of its declarative cases (ops/<lib>/<op>/
// <op>_cases.cc) with one attribute at a time set to a value at the edge of its type — -1, 0, 2^31,
// INT64_MAX, INT64_MIN, 2^62 + 2 for integers (and each element of an integer list, which also
// loses or gains an element), NaN, +-inf and +-1e300 for floats, an empty or non-UTF-8 string, a
// flipped bool — including the attributes a case leaves at their defaults. A plan file carries
// attributes as written, and the plan loader runs the same attribute check and shape rule, so what
// a tampered plan can hold the network API must survive: each build either fails with an error
// naming the op, or builds, and the one-node plan then loads and runs (or fails with an error). The
// test fails on a crash, an abort, an exception, or — in the sanitizer build (scripts/sanitize.sh)
// — any overflow or out-of-bounds access the attribute reaches. The fuzzer found one such
// attribute (FusedAttention's heads, 3 * heads overflowed); this walks all of them.
#include <gtest/gtest.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <limits>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "op_cases.h"
#include "op_harness.h"
#include "opforge/builder.h"
#include "opforge/network.h"
#include "opforge/runtime.h"

using namespace opforge;
using namespace opforge::test;
using namespace opforge::test::cases;

namespace {

constexpr int64_t kI64Max = std::numeric_limits<int64_t>::max();
constexpr int64_t kI64Min = std::numeric_limits<int64_t>::min();

const std::vector<int64_t> kIntEdges = {-1,      0,       int64_t{1} << 31,
                                        kI64Max, kI64Min, (int64_t{1} << 62) + 2};
const std::vector<double> kFloatEdges = {std::nan(""), INFINITY, -INFINITY, 1e300, -1e300};

// Integer edges as element type T (saturated to T's range: an int8 list gets -1, 0, 127, -128).
template <typename T>
std::vector<T> edgesAs() {
  std::vector<T> out;
  for (int64_t v : kIntEdges) {
    const T x =
        v > static_cast<int64_t>(std::numeric_limits<T>::max())   ? std::numeric_limits<T>::max()
        : v < static_cast<int64_t>(std::numeric_limits<T>::min()) ? std::numeric_limits<T>::min()
                                                                  : static_cast<T>(v);
    if (std::find(out.begin(), out.end(), x) == out.end()) out.push_back(x);
  }
  return out;
}

// Each element of `list` (the first 8) set to each edge in turn; the list one shorter and one
// longer; an absent or empty list: lists of one and of four edges.
template <typename T, typename E>
void listVariants(const std::vector<T>& list, const std::vector<E>& edges,
                  std::vector<AttrValue>& out) {
  for (size_t i = 0; i < std::min<size_t>(list.size(), 8); ++i)
    for (const E& e : edges) {
      auto l = list;
      l[i] = static_cast<T>(e);
      out.push_back(l);
    }
  if (!list.empty()) {
    out.push_back(std::vector<T>(list.begin(), list.end() - 1));
    auto l = list;
    l.push_back(list.back());
    out.push_back(l);
  } else {
    for (const E& e : edges) {
      out.push_back(std::vector<T>{static_cast<T>(e)});
      out.push_back(std::vector<T>(4, static_cast<T>(e)));
    }
  }
}

// The edge values of an attribute of type `type` whose value in the case is `cur` (monostate:
// absent, the default or nothing).
std::vector<AttrValue> variants(AttrType type, const AttrValue& cur) {
  std::vector<AttrValue> out;
  auto listOf = [&](auto tag) {
    using T = decltype(tag);
    const auto* l = std::get_if<std::vector<T>>(&cur);
    return l ? *l : std::vector<T>{};
  };
  switch (type) {
    case AttrType::kInt:
      for (int64_t v : kIntEdges) out.push_back(v);
      break;
    case AttrType::kFloat:
      for (double v : kFloatEdges) out.push_back(v);
      break;
    case AttrType::kString:
      out.push_back(std::string());
      out.push_back(std::string("\xff\xfe"));
      break;
    case AttrType::kBool: {
      const auto* b = std::get_if<bool>(&cur);
      out.push_back(!(b && *b));
      break;
    }
    case AttrType::kInts8:
      listVariants(listOf(int8_t{}), edgesAs<int8_t>(), out);
      break;
    case AttrType::kInts16:
      listVariants(listOf(int16_t{}), edgesAs<int16_t>(), out);
      break;
    case AttrType::kInts32:
      listVariants(listOf(int32_t{}), edgesAs<int32_t>(), out);
      break;
    case AttrType::kInts64:
      listVariants(listOf(int64_t{}), kIntEdges, out);
      break;
    case AttrType::kFloats32: {
      std::vector<float> edges;
      for (double v : kFloatEdges) edges.push_back(static_cast<float>(v));
      listVariants(listOf(float{}), edges, out);
      break;
    }
    case AttrType::kFloats64:
      listVariants(listOf(double{}), kFloatEdges, out);
      break;
    default:  // bytes, half and bool lists, tensors: no op of this repository takes edges there
      break;
  }
  return out;
}

// The element count of a shape as NetworkDefinition::shapeOf prints it ("[2, 3, 4]"); a symbolic
// dimension (a data-dependent size, bounded by the inputs) counts as 1; overflow as INT64_MAX.
int64_t elementsOf(const std::string& shape) {
  int64_t n = 1;
  size_t i = 0;
  while (i < shape.size()) {
    if (!std::isdigit(static_cast<unsigned char>(shape[i]))) {
      // skip a symbol such as "x.0" or "nz_1" whole, digits included
      if (std::isalpha(static_cast<unsigned char>(shape[i])) || shape[i] == '_')
        while (i < shape.size() && shape[i] != ',' && shape[i] != ']') ++i;
      else
        ++i;
      continue;
    }
    size_t j = i;
    while (j < shape.size() && std::isdigit(static_cast<unsigned char>(shape[j]))) ++j;
    const std::string digits = shape.substr(i, j - i);
    const int64_t d = digits.size() > 18 ? kI64Max : std::stoll(digits);
    if (__builtin_mul_overflow(n, d, &n)) return kI64Max;
    i = j;
  }
  return n;
}

struct Tally {
  int builds = 0, rejected = 0, shape_only = 0, ran = 0, run_errors = 0;
};

// Builds the one-node network of `c` (value inputs as constants, the others as network inputs) with
// `attrs`; where it builds and its outputs are small, builds the plan, loads it and runs it.
// Errors are expected; a crash or a sanitizer report is the failure.
void tryBuild(const std::shared_ptr<Registry>& reg, const std::string& key, const OpSchema& schema,
              const Attrs& attrs, const std::vector<TensorValue>& inputs, const std::string& what,
              Tally& tally) {
  ++tally.builds;
  NetworkDefinition net(reg);
  std::vector<TensorRef> refs;
  std::vector<std::pair<std::string, const TensorValue*>> feeds;
  for (size_t i = 0; i < inputs.size(); ++i) {
    if (inputs[i].desc.dims.empty() && inputs[i].data.empty()) {  // an absent optional input
      refs.emplace_back();
      continue;
    }
    const bool value = i < schema.inputs.size()
                           ? schema.inputs[i].value
                           : !schema.inputs.empty() && schema.inputs.back().value;
    const std::string name = "in" + std::to_string(i);
    auto r = value ? net.addConstant(name, inputs[i])
                   : net.addInput(name, inputs[i].desc.dtype, inputs[i].desc.dims);
    if (!r) {  // an input past the 2^40-element limit: refused, as the plan loader refuses it
      EXPECT_NE(r.status().message().find("2^40"), std::string::npos) << r.status().message();
      ++tally.rejected;
      return;
    }
    refs.push_back(*r);
    if (!value) feeds.emplace_back(name, &inputs[i]);
  }
  auto outs = net.addOp(key, refs, attrs, "node");
  if (!outs) {
    ++tally.rejected;
    EXPECT_FALSE(outs.status().message().empty()) << what;
    return;
  }
  // An input of a dynamic or a huge dimension stops at the shape rule (a plan's loader runs no
  // more than that with it).
  for (const auto& [name, v] : feeds) {
    int64_t n = 1;
    for (int64_t d : v->desc.dims)
      if (d < 0 || __builtin_mul_overflow(n, d, &n)) n = kI64Max;
    if (n > (int64_t{1} << 22)) {
      ++tally.shape_only;
      return;
    }
  }
  for (size_t o = 0; o < outs->size(); ++o) {
    // A network whose output passes 2^22 elements is not built: the attribute check and the shape
    // rule above were what a plan's loader runs; building would time, and running would fill, the
    // tensors the attribute asked for.
    if (elementsOf(net.shapeOf((*outs)[o])) > (int64_t{1} << 22)) return;
    ASSERT_TRUE(net.markOutput((*outs)[o], "out" + std::to_string(o)).isOk()) << what;
  }
  Builder b(reg);
  BuilderConfig cfg;
  auto plan = b.buildSerializedNetwork(net, cfg);
  if (!plan) {
    ++tally.rejected;
    return;
  }
  auto engine = Engine::loadMemory(std::move(*plan), "attr-limits", reg);
  ASSERT_TRUE(engine.isOk()) << what << ": a plan the builder wrote does not load: "
                             << engine.status().message();
  auto ctx = (*engine)->createExecutionContext();
  if (!ctx) {
    ++tally.run_errors;
    return;
  }
  for (const auto& [name, v] : feeds) {
    // An input whose dimensions a test changed runs on zeros.
    const bool own = v->data.size() == v->desc.bytes();
    std::vector<uint8_t> zeros(own ? 0 : v->desc.bytes() + 1);
    if (!(*ctx)->setInput(name, own ? v->data.data() : zeros.data(), v->desc.bytes()).isOk()) {
      ++tally.run_errors;
      return;
    }
  }
  // The run may need outputs of any size the attribute asked for: the engine's own limits decide.
  const Status st = (*ctx)->execute();
  st.isOk() ? ++tally.ran : ++tally.run_errors;
  if (!st.isOk() && std::getenv("OPFORGE_ATTR_LIMITS_FROM"))
    std::printf("  %s: run error: %s\n", what.c_str(), st.message().c_str());
}

// One case per (op, attributes the case sets): further cases of the same form add shapes, not
// attribute paths. Inputs materialized in the case's first type, from a generator seeded by the
// test's seed and the form's own text: a case added to one op leaves every other op's inputs as
// they were (one stream over all cases made CI's sanitizer run find RoiAlign's float-to-int64 cast
// only when cases of other ops were added). OPFORGE_ATTR_LIMITS_SEED=S replaces the test's seed
// (more inputs, the same attribute edges); OPFORGE_ATTR_LIMITS_FROM=N starts at the N-th form
// (after a finding) and prints each form and each build.
struct Form {
  Case c;
  std::string key, label;
  const RegisteredOp* op = nullptr;
  std::vector<TensorValue> inputs;
};

// FNV-1a of a form's text.
uint64_t formHash(const std::string& s) {
  uint64_t h = 14695981039346656037ull;
  for (unsigned char ch : s) h = (h ^ ch) * 1099511628211ull;
  return h;
}

std::vector<Form> forms(Registry& reg, uint64_t seed) {
  if (const char* s = std::getenv("OPFORGE_ATTR_LIMITS_SEED")) {
    seed = std::strtoull(s, nullptr, 10);
    std::printf("OPFORGE_ATTR_LIMITS_SEED=%llu\n", static_cast<unsigned long long>(seed));
  }
  const char* e = std::getenv("OPFORGE_ATTR_LIMITS_FROM");
  const int from = e ? std::atoi(e) : -1;
  std::set<std::string> seen;
  std::vector<Form> out;
  for (const Case& c : builtinCases()) {
    Form f;
    f.key = keyOf(c.op);
    std::string form = f.key;
    for (const auto& [k, v] : c.attrs) form += " " + k;
    if (!seen.insert(form).second) continue;
    if (static_cast<int>(seen.size()) - 1 < from) continue;
    if (from >= 0) std::printf("form %zu: %s\n", seen.size() - 1, form.c_str());
    f.op = reg.find(f.key);
    if (!f.op) {
      ADD_FAILURE() << f.key << " is not registered";
      continue;
    }
    const DataType t = c.types.empty() ? DataType::kFloat32 : c.types.front();
    std::mt19937_64 rng(seed ^ formHash(form));
    for (const In& in : c.in) f.inputs.push_back(makeInput(in, t, rng));
    f.label = f.key + " (" + (c.note.empty() ? form : c.note) + ")";
    f.c = c;
    out.push_back(std::move(f));
  }
  std::fflush(stdout);
  return out;
}

void build(const std::shared_ptr<Registry>& reg, const Form& f, const Attrs& attrs,
           const std::vector<TensorValue>& inputs, const std::string& what, Tally& tally) {
  SCOPED_TRACE(what);
  if (std::getenv("OPFORGE_ATTR_LIMITS_FROM")) std::fprintf(stderr, "%s\n", what.c_str());
  tryBuild(reg, f.key, f.op->schema(), attrs, inputs, what, tally);
}

TEST(AttrLimits, EveryOpSurvivesEveryAttributeAtItsEdges) {
  auto reg = Registry::create();
  Tally tally;
  const auto all = forms(*reg, 20261206);
  for (const Form& f : all)
    for (const AttrDef& def : f.op->schema().attrs) {
      const auto it = f.c.attrs.find(def.name);
      const AttrValue cur = it != f.c.attrs.end()           ? it->second
                            : def.default_value.has_value() ? *def.default_value
                                                            : AttrValue{};
      for (const AttrValue& v : variants(def.type, cur)) {
        Attrs attrs = f.c.attrs;
        attrs[def.name] = v;
        build(reg, f, attrs, f.inputs, f.label + " with " + def.name + " = " + attrToString(v, 8),
              tally);
        if (::testing::Test::HasFatalFailure()) return;
      }
    }
  std::printf("attr limits: %zu cases, %d builds: %d rejected, %d ran, %d failed at run time\n",
              all.size(), tally.builds, tally.rejected, tally.ran, tally.run_errors);
  EXPECT_GT(all.size(), 150u);
  EXPECT_GT(tally.rejected, 0);
  EXPECT_GT(tally.ran, 0);
}

// The same forms with one input dimension at a time at an edge: 0, dynamic (-1: the shape rule
// with a symbol), 2^31 + 1, the widest the 2^40-element limit allows on that axis, one more, and
// 2^62 — what a plan's tensor table may declare (the last two are refused by addInput, as the plan
// loader refuses them). Each build fails with an error or passes the shape rule; with a 0 it
// builds and runs.
TEST(AttrLimits, EveryOpSurvivesEveryInputDimensionAtItsEdges) {
  auto reg = Registry::create();
  Tally tally;
  const auto all = forms(*reg, 20261207);
  for (const Form& f : all) {
    const OpSchema& schema = f.op->schema();
    for (size_t i = 0; i < f.inputs.size(); ++i) {
      const bool value = i < schema.inputs.size()
                             ? schema.inputs[i].value
                             : !schema.inputs.empty() && schema.inputs.back().value;
      const auto& dims = f.inputs[i].desc.dims;
      if (value || dims.empty()) continue;  // constants, scalars, absent inputs
      for (size_t a = 0; a < std::min<size_t>(dims.size(), 5); ++a) {
        // The largest dimension the 2^40-element limit leaves this axis.
        int64_t others = 1;
        for (size_t b = 0; b < dims.size(); ++b)
          if (b != a) others *= std::max<int64_t>(dims[b], 1);
        const int64_t widest = (int64_t{1} << 40) / others;
        for (int64_t d : {int64_t{0}, int64_t{-1}, (int64_t{1} << 31) + 1, widest, widest + 1,
                          int64_t{1} << 62}) {
          auto changed = f.inputs;
          changed[i].desc.dims[a] = d;
          build(reg, f, f.c.attrs, changed,
                f.label + " with input " + std::to_string(i) + " axis " + std::to_string(a) +
                    " = " + std::to_string(d),
                tally);
          if (::testing::Test::HasFatalFailure()) return;
        }
      }
    }
  }
  std::printf(
      "dimension limits: %zu cases, %d builds: %d rejected, %d shape rule only, %d ran, %d failed "
      "at run time\n",
      all.size(), tally.builds, tally.rejected, tally.shape_only, tally.ran, tally.run_errors);
  EXPECT_GT(tally.rejected, 0);
  EXPECT_GT(tally.shape_only, 0);
  EXPECT_GT(tally.ran, 0);
}

}  // namespace

// The findings of the two tests above and of the plan fuzzer, each as the error it now is (the
// sanitizer build saw the overflow; these fail in any build if the check goes).
namespace {

Status addOne(const std::string& key, const std::vector<std::vector<int64_t>>& in_dims,
              const Attrs& attrs) {
  NetworkDefinition net;
  std::vector<TensorRef> refs;
  for (size_t i = 0; i < in_dims.size(); ++i) {
    OPFORGE_ASSIGN_OR_RETURN(
        auto r, net.addInput("in" + std::to_string(i), DataType::kFloat32, in_dims[i]));
    refs.push_back(r);
  }
  return net.addOp(key, refs, attrs, "node").status();
}

}  // namespace

TEST(AttrLimits, FindingsAreErrors) {
  // Split into 2^31 parts made the shape rule allocate 2^31 shapes.
  expectError(addOne("ai.onnx::Split", {{6, 4}}, {{"num_outputs", int64_t{1} << 31}}),
              {"Split", "cannot split dimension 0 (6) into 2147483648 parts"});
  // FusedAttention's packed layouts computed 3 * heads in int64.
  expectError(addOne("opforge::FusedAttention", {{2, 5, 24}, {2, 5, 24}, {2, 5, 24}},
                     {{"layout", std::string("bs3e")}, {"heads", (int64_t{1} << 62) + 2}}),
              {"FusedAttention", "heads in [1, 2^31)"});
  // GridSample over an empty image indexed before it with border padding.
  expectError(addOne("ai.onnx::GridSample", {{1, 2, 0, 4}, {1, 3, 3, 2}},
                     {{"padding_mode", std::string("border")}}),
              {"GridSample", "empty spatial axis 2"});
  // An input past opforge's 2^40 elements per tensor (shape rules multiply such dims).
  expectError(addOne("ai.onnx::Relu", {{int64_t{1} << 21, int64_t{1} << 20}}, {}),
              {"input 'in0'", "more than 2^40 elements"});
}
