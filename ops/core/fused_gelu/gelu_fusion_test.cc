// The gelu_fusion graph pass (ops/core/fused_gelu/gelu_fusion.cc): ONNX Gelu and the exported erf
// and tanh decompositions become one opforge::FusedGeluChain node — the engine's own op, with or
// without an op library loaded — chains of elementwise ops after it fold into it, and the results
// match the unfused graph (the same network built with the optimization passes off).
//
// These networks use the built-in ai.onnx Div, Erf, Gelu, Tanh, Pow, Relu, Sigmoid and Sub ops.
#include <gtest/gtest.h>

#include <cmath>

#include "op_harness.h"

using namespace opforge;
using namespace opforge::test;

namespace {

struct Built {
  std::vector<LayerInfo> layers;
  TensorValue y;
};

TensorValue scalarConst(DataType t, double v, std::vector<int64_t> dims = {}) {
  TensorValue c;
  c.desc = TensorDesc{t, std::move(dims)};
  c.data.assign(c.desc.bytes(), 0);
  for (int64_t i = 0; i < c.desc.numel(); ++i) storeFromDouble(c.data.data(), t, i, v);
  return c;
}

// A network over input x, written by `body`, built and run with `reg`.
class Net {
 public:
  Net(std::shared_ptr<Registry> reg, DataType t, std::vector<int64_t> dims)
      : net_(reg), reg_(reg), t_(t), dims_(dims) {
    x = *net_.addInput("x", t, dims);
  }
  TensorRef c(double v, std::vector<int64_t> dims = {}) {
    return *net_.addConstant("c" + std::to_string(n_++), scalarConst(t_, v, std::move(dims)));
  }
  TensorRef op(const std::string& key, std::vector<TensorRef> in, const std::string& name,
               Attrs a = {}) {
    auto r = net_.addOp(key, in, a, name);
    if (!r) {
      ADD_FAILURE() << r.status().message();
      return TensorRef{};
    }
    return (*r)[0];
  }
  // The PyTorch export of nn.GELU(): Mul(Mul(x, Add(Erf(Div(x, sqrt2)), 1)), 0.5), names prefixed.
  TensorRef erfGelu(TensorRef in, const std::string& p) {
    auto d = op("ai.onnx::Div", {in, c(std::sqrt(2.0))}, p + "div");
    auto e = op("ai.onnx::Erf", {d}, p + "erf");
    auto a = op("ai.onnx::Add", {e, c(1.0)}, p + "add");
    auto m = op("ai.onnx::Mul", {in, a}, p + "mul");
    return op("ai.onnx::Mul", {m, c(0.5)}, p + "half");
  }
  Result<Built> run(const TensorValue& input, std::vector<TensorRef> outs, bool optimize = true) {
    for (size_t i = 0; i < outs.size(); ++i)
      OPFORGE_RETURN_IF_ERROR(net_.markOutput(outs[i], "y" + std::to_string(i)));
    Builder b(reg_);
    BuilderConfig cfg;
    cfg.constant_folding = optimize;  // off: no optimization pass, the graph as written
    OPFORGE_ASSIGN_OR_RETURN(auto plan, b.buildSerializedNetwork(net_, cfg));
    OPFORGE_ASSIGN_OR_RETURN(auto engine, Engine::loadMemory(std::move(plan), "fusion", reg_));
    OPFORGE_ASSIGN_OR_RETURN(auto ctx, engine->createExecutionContext());
    OPFORGE_RETURN_IF_ERROR(ctx->setInput("x", input.data.data(), input.data.size()));
    OPFORGE_RETURN_IF_ERROR(ctx->execute());
    OPFORGE_ASSIGN_OR_RETURN(Tensor t, ctx->output("y0"));
    Built out;
    out.layers = engine->layers();
    out.y.desc = t.desc;
    out.y.data.assign(static_cast<const uint8_t*>(t.data),
                      static_cast<const uint8_t*>(t.data) + t.bytes());
    return out;
  }
  TensorRef x;

 private:
  NetworkDefinition net_;
  std::shared_ptr<Registry> reg_;
  DataType t_;
  std::vector<int64_t> dims_;
  int n_ = 0;
};

std::shared_ptr<Registry> builtinOnly() {
  static auto r = Registry::create();
  return r;
}

// Builds the same network with the built-in ops only, optimized and not, and with the op library
// loaded; checks the layers of the optimized ones (the same with and without the library) and
// that all compute the same values.
template <typename Body>
void expectFused(Body body, const std::vector<std::string>& want_layers,
                 DataType t = DataType::kFloat32, Tolerance tol = {2e-5, 2e-5}) {
  std::mt19937_64 rng(99);
  const std::vector<int64_t> dims = {2, 3, 17};
  TensorValue input = randomTensor(t, dims, rng, -4, 4);
  Net fused(builtinOnly(), t, dims), plain(builtinOnly(), t, dims),
      with_lib(contribRegistry(), t, dims);
  auto bf = fused.run(input, {body(fused)});
  auto bp = plain.run(input, {body(plain)}, false);
  auto bl = with_lib.run(input, {body(with_lib)});
  ASSERT_TRUE(bf.isOk()) << bf.status().message();
  ASSERT_TRUE(bp.isOk()) << bp.status().message();
  ASSERT_TRUE(bl.isOk()) << bl.status().message();
  std::vector<std::string> got, got_lib;
  for (const auto& l : bf->layers) got.push_back(l.name + " = " + l.op);
  for (const auto& l : bl->layers) got_lib.push_back(l.name + " = " + l.op);
  EXPECT_EQ(got, want_layers);
  EXPECT_EQ(got_lib, want_layers) << "the op library changed what the engine fuses";
  EXPECT_TRUE(allClose(bf->y, bp->y, tol));
  EXPECT_TRUE(allClose(bl->y, bf->y, {0, 0}));
  for (const auto& l : bp->layers) EXPECT_NE(l.op, "opforge::FusedGeluChain v1");
}

const std::string kFusedOp = " = opforge::FusedGeluChain v1";

}  // namespace

TEST(GeluFusion, PyTorchErfExportBecomesOneNode) {
  expectFused([](Net& n) { return n.erfGelu(n.x, ""); }, {"div+erf+add+mul+half" + kFusedOp});
}

TEST(GeluFusion, ErfFormInEveryOperandOrder) {
  // Mul(x, 1/sqrt2) instead of Div; constants on the left; the three spellings of 0.5 * x * (.).
  for (int tail = 0; tail < 3; ++tail) {
    for (bool swap : {false, true}) {
      SCOPED_TRACE("tail " + std::to_string(tail) + (swap ? " swapped" : ""));
      expectFused(
          [&](Net& n) {
            auto s = swap ? n.op("ai.onnx::Mul", {n.c(1 / std::sqrt(2.0)), n.x}, "scale")
                          : n.op("ai.onnx::Div", {n.x, n.c(std::sqrt(2.0))}, "scale");
            auto e = n.op("ai.onnx::Erf", {s}, "erf");
            auto a = swap ? n.op("ai.onnx::Add", {n.c(1.0), e}, "add")
                          : n.op("ai.onnx::Add", {e, n.c(1.0)}, "add");
            if (tail == 0) {
              auto m = n.op("ai.onnx::Mul", {a, n.x}, "m1");
              return swap ? n.op("ai.onnx::Mul", {n.c(0.5), m}, "m2")
                          : n.op("ai.onnx::Mul", {m, n.c(0.5)}, "m2");
            }
            if (tail == 1) {
              auto m = swap ? n.op("ai.onnx::Mul", {n.c(0.5), a}, "m1")
                            : n.op("ai.onnx::Mul", {a, n.c(0.5)}, "m1");
              return n.op("ai.onnx::Mul", {n.x, m}, "m2");
            }
            auto h = swap ? n.op("ai.onnx::Mul", {n.c(0.5), n.x}, "m1")
                          : n.op("ai.onnx::Mul", {n.x, n.c(0.5)}, "m1");
            return swap ? n.op("ai.onnx::Mul", {a, h}, "m2") : n.op("ai.onnx::Mul", {h, a}, "m2");
          },
          {tail == 2 ? "scale+erf+add+m1+m2" + kFusedOp : "scale+erf+add+m1+m2" + kFusedOp});
    }
  }
}

TEST(GeluFusion, TanhFormWithPowOrMulCube) {
  for (int cube = 0; cube < 3; ++cube) {
    SCOPED_TRACE("cube form " + std::to_string(cube));
    std::vector<std::string> want = {cube == 0
                                         ? "pow+kappa+inner+beta+tanh+add+mul+half" + kFusedOp
                                         : "sq+cube+kappa+inner+beta+tanh+add+mul+half" + kFusedOp};
    expectFused(
        [&](Net& n) {
          TensorRef x3;
          if (cube == 0) {
            x3 = n.op("ai.onnx::Pow", {n.x, n.c(3.0)}, "pow");
          } else {
            auto sq = n.op("ai.onnx::Mul", {n.x, n.x}, "sq");
            x3 = cube == 1 ? n.op("ai.onnx::Mul", {n.x, sq}, "cube")
                           : n.op("ai.onnx::Mul", {sq, n.x}, "cube");
          }
          auto k = n.op("ai.onnx::Mul", {n.c(0.044715), x3}, "kappa");
          auto s = n.op("ai.onnx::Add", {n.x, k}, "inner");
          auto b = n.op("ai.onnx::Mul", {n.c(std::sqrt(2 / M_PI)), s}, "beta");
          auto t = n.op("ai.onnx::Tanh", {b}, "tanh");
          auto a = n.op("ai.onnx::Add", {n.c(1.0), t}, "add");
          auto m = n.op("ai.onnx::Mul", {n.x, a}, "mul");
          return n.op("ai.onnx::Mul", {n.c(0.5), m}, "half");
        },
        want);
  }
}

TEST(GeluFusion, OnnxGeluOpBothForms) {
  expectFused([](Net& n) { return n.op("ai.onnx::Gelu", {n.x}, "g"); }, {"g" + kFusedOp});
  expectFused(
      [](Net& n) {
        return n.op("ai.onnx::Gelu", {n.x}, "g", {{"approximate", std::string("tanh")}});
      },
      {"g" + kFusedOp});
}

TEST(GeluFusion, SeedGeluOfGeluBecomesOneNode) {
  expectFused([](Net& n) { return n.erfGelu(n.erfGelu(n.x, "a_"), "b_"); },
              {"a_div+a_erf+a_add+a_mul+a_half+b_div+b_erf+b_add+b_mul+b_half" + kFusedOp});
  for (DataType t : {DataType::kFloat16, DataType::kBFloat16}) {
    // The fused node keeps the intermediate in fp32: closer to float64 than the unfused graph,
    // within a few half/bfloat16 ulps of it.
    expectFused(
        [](Net& n) { return n.op("ai.onnx::Gelu", {n.op("ai.onnx::Gelu", {n.x}, "g1")}, "g2"); },
        {"g1+g2" + kFusedOp}, t,
        t == DataType::kFloat16 ? Tolerance{4e-3, 4e-3} : Tolerance{3e-2, 3e-2});
  }
}

TEST(GeluFusion, ElementwiseChainAfterGelu) {
  expectFused(
      [](Net& n) {
        auto g = n.op("ai.onnx::Gelu", {n.x}, "g");
        auto a = n.op("ai.onnx::Mul", {n.c(1.5), g}, "scale");
        auto b = n.op("ai.onnx::Sub", {a, n.c(0.25)}, "shift");
        auto r = n.op("ai.onnx::Relu", {b}, "relu");
        auto d = n.op("ai.onnx::Div", {r, n.c(4.0)}, "div");
        auto s = n.op("ai.onnx::Sigmoid", {d}, "sig");
        auto t = n.op("ai.onnx::Tanh", {s}, "tanh");
        auto e = n.op("ai.onnx::Add", {t, n.c(-1.0)}, "add");
        return n.op("ai.onnx::Gelu", {e}, "g2", {{"approximate", std::string("tanh")}});
      },
      {"g+scale+shift+relu+div+sig+tanh+add+g2" + kFusedOp});
}

TEST(GeluFusion, LeavesNonMatchingGraphsAlone) {
  // A wrong constant (1.41 is not sqrt 2 to 1e-4).
  expectFused(
      [](Net& n) {
        auto d = n.op("ai.onnx::Div", {n.x, n.c(1.41)}, "div");
        auto e = n.op("ai.onnx::Erf", {d}, "erf");
        auto a = n.op("ai.onnx::Add", {e, n.c(1.0)}, "add");
        auto m = n.op("ai.onnx::Mul", {n.x, a}, "mul");
        return n.op("ai.onnx::Mul", {m, n.c(0.5)}, "half");
      },
      {"div = ai.onnx::Div v1", "erf = ai.onnx::Erf v1", "add = ai.onnx::Add v1",
       "mul = ai.onnx::Mul v1", "half = ai.onnx::Mul v1"});
  // A constant of higher rank broadcasts x to another shape: not a GELU of x.
  expectFused(
      [](Net& n) {
        auto d = n.op("ai.onnx::Div", {n.x, n.c(std::sqrt(2.0), {1, 1, 1, 1})}, "div");
        auto e = n.op("ai.onnx::Erf", {d}, "erf");
        auto a = n.op("ai.onnx::Add", {e, n.c(1.0)}, "add");
        auto m = n.op("ai.onnx::Mul", {n.x, a}, "mul");
        return n.op("ai.onnx::Mul", {m, n.c(0.5)}, "half");
      },
      {"div = ai.onnx::Div v1", "erf = ai.onnx::Erf v1", "add = ai.onnx::Add v1",
       "mul = ai.onnx::Mul v1", "half = ai.onnx::Mul v1"});
  // A non-scalar operand after the GELU is not a chain stage.
  expectFused(
      [](Net& n) {
        auto g = n.op("ai.onnx::Gelu", {n.x}, "g");
        return n.op("ai.onnx::Mul", {g, n.x}, "mul");
      },
      {"g" + kFusedOp, "mul = ai.onnx::Mul v1"});
}

TEST(GeluFusion, IntermediateValuesStillNeededBlockTheFusion) {
  std::mt19937_64 rng(3);
  const std::vector<int64_t> dims = {4, 5};
  TensorValue input = randomTensor(DataType::kFloat32, dims, rng, -3, 3);
  // The Erf output is also a network output: the pattern must stay.
  Net n(contribRegistry(), DataType::kFloat32, dims);
  auto d = n.op("ai.onnx::Div", {n.x, n.c(std::sqrt(2.0))}, "div");
  auto e = n.op("ai.onnx::Erf", {d}, "erf");
  auto a = n.op("ai.onnx::Add", {e, n.c(1.0)}, "add");
  auto m = n.op("ai.onnx::Mul", {n.x, a}, "mul");
  auto y = n.op("ai.onnx::Mul", {m, n.c(0.5)}, "half");
  auto r = n.run(input, {y, e});
  ASSERT_TRUE(r.isOk()) << r.status().message();
  EXPECT_EQ(r->layers.size(), 5u);
  // A GELU whose output is used twice fuses, but does not absorb either consumer.
  Net n2(contribRegistry(), DataType::kFloat32, dims);
  auto g = n2.op("ai.onnx::Gelu", {n2.x}, "g");
  auto t = n2.op("ai.onnx::Tanh", {g}, "tanh");
  auto s = n2.op("ai.onnx::Sigmoid", {g}, "sig");
  auto r2 = n2.run(input, {t, s});
  ASSERT_TRUE(r2.isOk()) << r2.status().message();
  ASSERT_EQ(r2->layers.size(), 3u);
  EXPECT_EQ(r2->layers[0].name, "g");
  EXPECT_EQ(r2->layers[0].op, "opforge::FusedGeluChain v1");
}

TEST(GeluFusion, WithoutTheOpLibraryTheEngineFusesToo) {
  std::mt19937_64 rng(4);
  TensorValue input = randomTensor(DataType::kFloat32, {3, 3}, rng, -3, 3);
  Net n(builtinOnly(), DataType::kFloat32, {3, 3});
  auto r = n.run(input, {n.op("ai.onnx::Gelu", {n.x}, "g")});
  ASSERT_TRUE(r.isOk()) << r.status().message();
  ASSERT_EQ(r->layers.size(), 1u);
  EXPECT_EQ(r->layers[0].op, "opforge::FusedGeluChain v1");
  // With the optimization passes off the graph stays as written.
  Net n2(builtinOnly(), DataType::kFloat32, {3, 3});
  auto r2 = n2.run(input, {n2.op("ai.onnx::Gelu", {n2.x}, "g")}, false);
  ASSERT_TRUE(r2.isOk()) << r2.status().message();
  ASSERT_EQ(r2->layers.size(), 1u);
  EXPECT_EQ(r2->layers[0].op, "ai.onnx::Gelu v1");
}
