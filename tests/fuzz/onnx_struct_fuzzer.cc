// libFuzzer target: the ONNX importer on structure-aware mutations of valid models. The custom
// mutator parses the input as an onnx ModelProto, changes one thing a model author (or a broken
// exporter) could get wrong — a dimension, an attribute value, a node's wiring, a dtype, an
// initializer's dims or data size, the opset, a node's presence — and serializes the model again;
// inputs that do not parse are mutated as bytes. Accepted models are built and run on the CPU.
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <limits>
#include <random>
#include <string>

#include "fuzz_util.h"
#include "onnx/onnx_pb.h"

extern "C" size_t LLVMFuzzerMutate(uint8_t* data, size_t size, size_t max_size);

namespace {

using Rng = std::minstd_rand;

// Values that break arithmetic: zero, signs, powers of two around the 32-bit and 53-bit edges,
// the int64 extremes.
int64_t interestingInt(Rng& rng, int64_t old) {
  static const int64_t kValues[] = {0,
                                    1,
                                    -1,
                                    2,
                                    3,
                                    7,
                                    -2,
                                    255,
                                    65536,
                                    (int64_t{1} << 31) - 1,
                                    int64_t{1} << 31,
                                    int64_t{1} << 32,
                                    int64_t{1} << 40,
                                    int64_t{1} << 53,
                                    int64_t{1} << 62,
                                    std::numeric_limits<int64_t>::max(),
                                    std::numeric_limits<int64_t>::min(),
                                    std::numeric_limits<int64_t>::min() + 1};
  switch (rng() % 4) {
    case 0:  // in uint64_t: the sum and the negation wrap instead of overflowing int64
      return static_cast<int64_t>(static_cast<uint64_t>(old) + rng() % 5 - 2);
    case 1:
      return static_cast<int64_t>(uint64_t{0} - static_cast<uint64_t>(old));
    default:
      return kValues[rng() % (sizeof(kValues) / sizeof(kValues[0]))];
  }
}

float interestingFloat(Rng& rng) {
  static const float kValues[] = {0.0f,
                                  -0.0f,
                                  1.0f,
                                  -1.0f,
                                  0.5f,
                                  1e30f,
                                  -1e30f,
                                  1e-30f,
                                  std::numeric_limits<float>::infinity(),
                                  std::numeric_limits<float>::quiet_NaN(),
                                  3.0f,
                                  65504.0f};
  return kValues[rng() % (sizeof(kValues) / sizeof(kValues[0]))];
}

// A random element of a repeated field, or nullptr when it is empty.
template <typename R>
auto* pick(R* field, Rng& rng) {
  return field->empty() ? nullptr : field->Mutable(static_cast<int>(rng() % field->size()));
}

// Every tensor name of the graph (inputs, initializers, node outputs), for rewiring.
std::string anyName(const onnx::GraphProto& g, Rng& rng) {
  std::vector<const std::string*> names;
  for (const auto& v : g.input()) names.push_back(&v.name());
  for (const auto& t : g.initializer()) names.push_back(&t.name());
  for (const auto& n : g.node())
    for (const auto& o : n.output()) names.push_back(&o);
  if (names.empty() || rng() % 8 == 0) return rng() % 2 ? "" : "no_such_tensor";
  return *names[rng() % names.size()];
}

void mutateDims(onnx::TypeProto* type, Rng& rng) {
  if (!type->has_tensor_type()) return;
  auto* tt = type->mutable_tensor_type();
  if (rng() % 6 == 0) {
    tt->set_elem_type(static_cast<int32_t>(rng() % 24));
    return;
  }
  auto* shape = tt->mutable_shape();
  switch (rng() % 4) {
    case 0:
      shape->add_dim()->set_dim_value(interestingInt(rng, 1));
      return;
    case 1:
      if (shape->dim_size()) shape->mutable_dim()->RemoveLast();
      return;
    case 2:
      if (auto* d = pick(shape->mutable_dim(), rng)) d->set_dim_param("N");
      return;
    default:
      if (auto* d = pick(shape->mutable_dim(), rng))
        d->set_dim_value(interestingInt(rng, d->dim_value()));
  }
}

void mutateAttribute(onnx::AttributeProto* a, Rng& rng) {
  switch (rng() % 5) {
    case 0:
      a->set_i(interestingInt(rng, a->i()));
      return;
    case 1:
      a->set_f(interestingFloat(rng));
      return;
    case 2:
      if (a->ints_size() && rng() % 3) {
        auto* v = pick(a->mutable_ints(), rng);
        *v = interestingInt(rng, *v);
      } else if (rng() % 2) {
        a->add_ints(interestingInt(rng, 1));
      } else if (a->ints_size()) {
        a->mutable_ints()->RemoveLast();
      }
      return;
    case 3:
      if (a->floats_size()) *pick(a->mutable_floats(), rng) = interestingFloat(rng);
      return;
    default:
      a->set_type(static_cast<onnx::AttributeProto::AttributeType>(rng() % 15));
  }
}

void mutateInitializer(onnx::TensorProto* t, Rng& rng) {
  switch (rng() % 5) {
    case 0:
      if (t->dims_size()) {
        auto* d = pick(t->mutable_dims(), rng);
        *d = interestingInt(rng, *d);
      }
      return;
    case 1:
      if (rng() % 2)
        t->add_dims(interestingInt(rng, 1));
      else if (t->dims_size())
        t->mutable_dims()->RemoveLast();
      return;
    case 2: {
      std::string* raw = t->mutable_raw_data();
      const size_t n = rng() % 3 == 0 ? 0 : rng() % (raw->size() + 9);
      raw->resize(n, '\x01');
      return;
    }
    case 3:
      t->set_data_type(static_cast<int32_t>(rng() % 24));
      return;
    default:
      if (rng() % 2)
        t->add_int64_data(interestingInt(rng, 0));
      else
        t->add_float_data(interestingFloat(rng));
  }
}

bool mutateModel(onnx::ModelProto& m, Rng& rng) {
  onnx::GraphProto* g = m.mutable_graph();
  switch (rng() % 10) {
    case 0:
      if (auto* v = pick(g->mutable_input(), rng)) return mutateDims(v->mutable_type(), rng), true;
      return false;
    case 1:
      if (auto* v = pick(g->mutable_output(), rng)) return mutateDims(v->mutable_type(), rng), true;
      return false;
    case 2:
    case 3:
      if (auto* n = pick(g->mutable_node(), rng)) {
        if (auto* a = pick(n->mutable_attribute(), rng)) return mutateAttribute(a, rng), true;
      }
      return false;
    case 4:
      if (auto* n = pick(g->mutable_node(), rng)) {
        if (rng() % 3 == 0) {
          n->add_input(anyName(*g, rng));
        } else if (auto* in = pick(n->mutable_input(), rng)) {
          *in = anyName(*g, rng);
        }
        return true;
      }
      return false;
    case 5:
      if (auto* n = pick(g->mutable_node(), rng)) {
        if (auto* out = pick(n->mutable_output(), rng)) *out = anyName(*g, rng);
        return true;
      }
      return false;
    case 6:
      if (auto* t = pick(g->mutable_initializer(), rng)) return mutateInitializer(t, rng), true;
      return false;
    case 7:
      if (g->node_size() && rng() % 2) {
        // Drop a node, or duplicate one (a second producer of its outputs).
        const int i = static_cast<int>(rng() % g->node_size());
        if (rng() % 2) {
          g->mutable_node()->DeleteSubrange(i, 1);
        } else {
          *g->add_node() = g->node(i);
        }
        return true;
      }
      return false;
    case 8:
      if (auto* op = pick(m.mutable_opset_import(), rng)) {
        op->set_version(interestingInt(rng, op->version()));
        return true;
      }
      m.set_ir_version(interestingInt(rng, m.ir_version()));
      return true;
    default:
      if (auto* n = pick(g->mutable_node(), rng)) {
        // Another op type of the same graph: inputs and attributes that do not fit it.
        const auto& other = g->node(static_cast<int>(rng() % g->node_size()));
        n->set_op_type(other.op_type());
        n->set_domain(other.domain());
        return true;
      }
      return false;
  }
}

}  // namespace

extern "C" size_t LLVMFuzzerCustomMutator(uint8_t* data, size_t size, size_t max_size,
                                          unsigned int seed) {
  Rng rng(seed);
  onnx::ModelProto m;
  if (rng() % 16 == 0 || !m.ParseFromArray(data, static_cast<int>(size)) || !m.has_graph())
    return LLVMFuzzerMutate(data, size, max_size);
  const int edits = 1 + static_cast<int>(rng() % 3);
  bool changed = false;
  for (int i = 0; i < edits; ++i) changed |= mutateModel(m, rng);
  if (!changed) return LLVMFuzzerMutate(data, size, max_size);
  std::string out;
  if (!m.SerializeToString(&out) || out.size() > max_size)
    return LLVMFuzzerMutate(data, size, max_size);
  std::memcpy(data, out.data(), out.size());
  return out.size();
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  opforge::fuzz::importBuildAndRun(data, size);
  return 0;
}
