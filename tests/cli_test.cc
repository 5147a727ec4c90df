// The opforge CLI as users run it: separate processes, exit codes, messages, files.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include <array>
#include <cstdio>
#include <fstream>

#include "../tools/opforge/npy.h"
#include "onnx_model.h"
#include "op_harness.h"

namespace {
struct Run {
  int rc;
  std::string out;
};
Run sh(const std::string& args) {
  std::string cmd = std::string(OPFORGE_BINARY_DIR) + "/bin/opforge " + args + " 2>&1";
  FILE* p = popen(cmd.c_str(), "r");
  std::string out;
  std::array<char, 4096> buf;
  while (size_t n = fread(buf.data(), 1, buf.size(), p)) out.append(buf.data(), n);
  int st = pclose(p);
  return {WIFEXITED(st) ? WEXITSTATUS(st) : -1, out};
}
std::string ex(const std::string& f) {
  return std::string(OPFORGE_SOURCE_DIR) + "/examples/" + f;
}
std::string plugins() {
  return "--plugins=" + opforge::test::contribLibrary();
}
std::string tmp(const std::string& f) {
  return opforge::test::testDir() + "/" + f;
}
bool exists(const std::string& p) {
  struct stat sb;
  return ::stat(p.c_str(), &sb) == 0;
}
const char* kQuick = " --warmUp=0 --duration=0 --iterations=2";
}  // namespace

TEST(Cli, HelpAnswersQuestions) {
  auto top = sh("--help");
  EXPECT_EQ(top.rc, 0);
  EXPECT_NE(top.out.find("exec"), std::string::npos);
  EXPECT_NE(top.out.find("inspect"), std::string::npos);
  auto e = sh("exec --help");
  EXPECT_EQ(e.rc, 0);
  for (const char* f :
       {"--onnx", "--plugins", "--saveEngine", "--loadEngine", "--minShapes", "--loadInputs",
        "--saveOutputs", "--exportOutput", "--iterations", "--warmUp", "--duration", "--device"})
    EXPECT_NE(e.out.find(f), std::string::npos) << f;
  EXPECT_EQ(sh("exec --nonsense").rc, 1);
}

TEST(Cli, RunsTheShippedExampleAndReports) {
  auto r = sh("exec --onnx=" + ex("circ_pad/circ_pad.onnx") + " " + plugins() +
              " --shapes=x:2x3x32x32" + kQuick);
  ASSERT_EQ(r.rc, 0) << r.out;
  for (const char* part : {"Throughput", "Latency: min", "median", "percentile(99%)",
                           "Total Host Walltime", "output 'y': FP32[2x3x36x34]", "seed 1"})
    EXPECT_NE(r.out.find(part), std::string::npos) << part << "\n" << r.out;
}

TEST(Cli, APlanSavedByOneProcessRunsInAnother) {
  const std::string plan = tmp("pad.plan"), d1 = tmp("out1"), d2 = tmp("out2");
  auto a =
      sh("exec --onnx=" + ex("circ_pad/circ_pad.onnx") + " " + plugins() +
         " --minShapes=x:1x3x32x32 --optShapes=x:2x3x32x32 --maxShapes=x:4x3x32x32 --saveEngine=" +
         plan + " --shapes=x:3x3x32x32 --seed=5 --saveOutputs=" + d1 + kQuick);
  ASSERT_EQ(a.rc, 0) << a.out;
  auto b = sh("exec --loadEngine=" + plan + " " + plugins() +
              " --shapes=x:3x3x32x32 --seed=5 --saveOutputs=" + d2 + kQuick);
  ASSERT_EQ(b.rc, 0) << b.out;
  auto y1 = opforge::npy::read(d1 + "/y.npy");
  auto y2 = opforge::npy::read(d2 + "/y.npy");
  ASSERT_TRUE(y1.isOk() && y2.isOk());
  EXPECT_EQ(y1->desc.dims, (std::vector<int64_t>{3, 3, 36, 34}));
  EXPECT_EQ(y1->data, y2->data);
  auto ins = sh("inspect " + plan + " " + plugins());
  EXPECT_EQ(ins.rc, 0);
  EXPECT_NE(ins.out.find("min 1x3x32x32, opt 2x3x32x32, max 4x3x32x32"), std::string::npos)
      << ins.out;
  auto out = sh("exec --loadEngine=" + plan + " " + plugins() + " --shapes=x:5x3x32x32" + kQuick);
  EXPECT_EQ(out.rc, 1);
  EXPECT_NE(out.out.find("outside optimization profile 0 [1, 4]"), std::string::npos) << out.out;
  auto noplug = sh("exec --loadEngine=" + plan + kQuick);
  EXPECT_EQ(noplug.rc, 1);
  EXPECT_NE(noplug.out.find("example::circ_pad_plugin v1"), std::string::npos) << noplug.out;
  EXPECT_NE(noplug.out.find("--plugins="), std::string::npos);
}

TEST(Cli, LoadInputsFromNpy) {
  const std::string in = tmp("x.npy"), d = tmp("inplace_out");
  std::vector<float> x(2 * 4 * 8 * 8);
  for (size_t i = 0; i < x.size(); ++i) x[i] = 0.25f * static_cast<float>(i);
  ASSERT_TRUE(opforge::npy::write(
                  in, opforge::TensorDesc{opforge::DataType::kFloat32, {2, 4, 8, 8}}, x.data())
                  .isOk());
  auto r = sh("exec --onnx=" + ex("inplace_add/inplace_add.onnx") + " " + plugins() +
              " --loadInputs=x:" + in + " --saveOutputs=" + d + " --exportOutput=" + tmp("y.json") +
              kQuick);
  ASSERT_EQ(r.rc, 0) << r.out;
  auto y = opforge::npy::read(d + "/y.npy");
  ASSERT_TRUE(y.isOk());
  for (size_t i = 0; i < x.size(); ++i)
    ASSERT_EQ(reinterpret_cast<const float*>(y->data.data())[i], x[i] + 6.f);
  std::ifstream j(tmp("y.json"));
  std::string json((std::istreambuf_iterator<char>(j)), std::istreambuf_iterator<char>());
  EXPECT_NE(json.find("\"dimensions\": \"2x4x8x8\""), std::string::npos);
}

TEST(Cli, BadInputsGiveOneClearMessageAndExitCode1) {
  const std::string model =
      " --onnx=" + ex("circ_pad/circ_pad.onnx") + " " + plugins() + " --shapes=x:2x3x32x32";
  // wrong dtype
  std::vector<int64_t> i64(2 * 3 * 32 * 32, 1);
  ASSERT_TRUE(opforge::npy::write(tmp("i64.npy"),
                                  opforge::TensorDesc{opforge::DataType::kInt64, {2, 3, 32, 32}},
                                  i64.data())
                  .isOk());
  auto dt = sh("exec" + model + " --loadInputs=x:" + tmp("i64.npy") + kQuick);
  EXPECT_EQ(dt.rc, 1);
  EXPECT_NE(dt.out.find("input 'x' is FP32 but"), std::string::npos) << dt.out;
  EXPECT_NE(dt.out.find("INT64"), std::string::npos) << dt.out;
  // wrong shape
  std::vector<float> f(3 * 32 * 32, 1.f);
  ASSERT_TRUE(opforge::npy::write(tmp("f.npy"),
                                  opforge::TensorDesc{opforge::DataType::kFloat32, {1, 3, 32, 32}},
                                  f.data())
                  .isOk());
  auto sh1 = sh("exec" + model + " --loadInputs=x:" + tmp("f.npy") + kQuick);
  EXPECT_EQ(sh1.rc, 1);
  EXPECT_NE(sh1.out.find("has shape 2x3x32x32 but"), std::string::npos) << sh1.out;
  // unwritable --saveEngine: no file left
  auto un = sh("exec" + model + " --saveEngine=/nonexistent-dir/a.plan" + kQuick);
  EXPECT_EQ(un.rc, 1);
  EXPECT_NE(un.out.find("/nonexistent-dir/a.plan"), std::string::npos) << un.out;
  // a plan that is not a plan
  std::ofstream(tmp("bad.plan")) << "OPFGPLAN but then nothing useful";
  auto bp = sh("exec --loadEngine=" + tmp("bad.plan") + " " + plugins() + kQuick);
  EXPECT_EQ(bp.rc, 1);
  EXPECT_NE(bp.out.find("bad.plan"), std::string::npos) << bp.out;
  // unknown op: forgot --plugins
  auto nop = sh("exec --onnx=" + ex("circ_pad/circ_pad.onnx") + " --shapes=x:2x3x32x32" + kQuick);
  EXPECT_EQ(nop.rc, 1);
  EXPECT_NE(nop.out.find("op 'circ_pad_plugin', namespace 'example', version '1'"),
            std::string::npos)
      << nop.out;
  // missing plugin library file
  auto nf = sh("exec --onnx=" + ex("circ_pad/circ_pad.onnx") + " --plugins=/nope/libx.so" + kQuick);
  EXPECT_EQ(nf.rc, 1);
  EXPECT_NE(nf.out.find("/nope/libx.so"), std::string::npos);
  // the error is printed once, without a crash trace
  EXPECT_EQ(nop.out.find("terminate"), std::string::npos);
  // --saveOutputs into a folder that can not be made: no partial file anywhere
  auto so = sh("exec" + model + " --saveOutputs=/nonexistent-dir/out" + kQuick);
  EXPECT_EQ(so.rc, 1);
  EXPECT_FALSE(exists("/nonexistent-dir"));
  // --layerPrecisions: only fp32 can be pinned, only under --fp16/--bf16; op names with "::" parse
  auto lp16 =
      sh("exec" + model + " --fp16 --layerPrecisions=example::circ_pad_plugin:fp16" + kQuick);
  EXPECT_EQ(lp16.rc, 1);
  EXPECT_NE(lp16.out.find("asks for fp16; only fp32 can be pinned"), std::string::npos) << lp16.out;
  auto lpno = sh("exec" + model + " --layerPrecisions=circ_pad_plugin:fp32" + kQuick);
  EXPECT_EQ(lpno.rc, 1);
  EXPECT_NE(lpno.out.find("neither is given"), std::string::npos) << lpno.out;
  auto lpok =
      sh("exec" + model + " --fp16 --layerPrecisions=example::circ_pad_plugin:fp32" + kQuick);
  EXPECT_EQ(lpok.rc, 0) << lpok.out;
  // --layerTactics: the reference by name, and an entry that matches no layer
  auto ltok = sh("exec" + model + " --layerTactics=circ_pad_plugin=reference" + kQuick);
  EXPECT_EQ(ltok.rc, 0) << ltok.out;
  auto ltno = sh("exec" + model + " --layerTactics=nothing*=reference" + kQuick);
  EXPECT_EQ(ltno.rc, 1);
  EXPECT_NE(ltno.out.find("layer_tactics 'nothing*=reference' matches no layer"), std::string::npos)
      << ltno.out;
}

TEST(Cli, DumpProfileGivesEachLayersKindAndTheTimeByKind) {
  opforge::test::Model m;
  m.input("x", onnx::TensorProto::FLOAT, {1, 3, 8, 8});
  m.input("w", onnx::TensorProto::FLOAT, {4, 3, 3, 3});
  m.node("Conv", {"x", "w"}, {"c"}, "conv");
  m.node("Softmax", {"c"}, {"y"}, "softmax");
  m.output("y");
  const std::string model = m.save("conv_softmax.onnx");
  for (const char* tf32 : {"", " --noTF32"}) {
    auto r = sh("exec --onnx=" + model + " --device=cpu --dumpProfile --exportProfile=" +
                tmp("profile.json") + tf32 + kQuick);
    ASSERT_EQ(r.rc, 0) << r.out;
    for (const char* part : {"Kind", "conv ", "softmax ", "=== CPU time by layer kind ==="})
      EXPECT_NE(r.out.find(part), std::string::npos) << part << "\n" << r.out;
    std::ifstream j(tmp("profile.json"));
    std::string json((std::istreambuf_iterator<char>(j)), std::istreambuf_iterator<char>());
    EXPECT_NE(json.find("\"kind\": \"conv\""), std::string::npos) << json;
  }
  EXPECT_NE(sh("exec --help").out.find("--noTF32"), std::string::npos);
  auto ops = sh("ops ai.onnx::MatMul");
  ASSERT_EQ(ops.rc, 0) << ops.out;
  EXPECT_NE(ops.out.find("kind   gemm"), std::string::npos) << ops.out;
  const bool cuda = ops.out.find("(CUDA") != std::string::npos;
  EXPECT_EQ(ops.out.find("cuda.lt0.tf32 (CUDA, TF32") != std::string::npos, cuda) << ops.out;
}

TEST(Examples, CppProgramsMatchTheirReferences) {
  for (const char* e : {"circ_pad_api", "non_zero_api", "inplace_add_api"}) {
    std::string cmd = std::string(OPFORGE_BINARY_DIR) + "/bin/example_" + e + " 2>&1";
    FILE* p = popen(cmd.c_str(), "r");
    std::string out;
    char buf[1024];
    while (size_t n = fread(buf, 1, sizeof(buf), p)) out.append(buf, n);
    int st = pclose(p);
    EXPECT_EQ(WEXITSTATUS(st), 0) << e << ":\n" << out;
    EXPECT_NE(out.find("PASS"), std::string::npos) << out;
  }
}

// ---- Hostile input to the CLI (issue 21) ----

namespace {
// A folder of this test's own (the test name and the process id make it unique).
std::string own(const std::string& f) {
  return opforge::test::testDir() + "/" + f;
}
// With a time limit: a command that blocks (a FIFO opened for reading) fails instead of hanging.
std::string limited() {
  return "timeout 60 " + std::string(OPFORGE_BINARY_DIR) + "/bin/opforge ";
}
Run run(const std::string& cmd) {
  FILE* p = popen((cmd + " 2>&1").c_str(), "r");
  std::string out;
  std::array<char, 4096> buf;
  while (size_t n = fread(buf.data(), 1, buf.size(), p)) out.append(buf.data(), n);
  int st = pclose(p);
  return {WIFEXITED(st) ? WEXITSTATUS(st) : -1, out};
}
}  // namespace

TEST(Cli, AnEmptyValueDoesNotSwallowTheNextArgument) {
  for (const char* flag : {"--loadEngine=", "--plugins="}) {
    auto r = sh(std::string("exec ") + flag + " --onnx=" + ex("circ_pad/circ_pad.onnx") + kQuick);
    EXPECT_EQ(r.rc, 1) << r.out;
    EXPECT_NE(r.out.find(std::string(flag) + " has an empty value"), std::string::npos) << r.out;
  }
}

TEST(Cli, FifosAndDirectoriesAreRefusedNotWaitedOn) {
  const std::string fifo = own("fifo");
  ::unlink(fifo.c_str());
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0644), 0);
  const std::string model = " --onnx=" + ex("circ_pad/circ_pad.onnx") + " " + plugins();
  for (const std::string& args :
       {"exec --loadEngine=" + fifo + " " + plugins(), "exec --plugins=" + fifo + model,
        "exec" + model + " --shapes=x:1x3x32x32 --loadInputs=x:" + fifo, "exec --onnx=" + fifo,
        "inspect " + fifo}) {
    auto r = run(limited() + args + (args.rfind("exec", 0) == 0 ? kQuick : ""));
    EXPECT_EQ(r.rc, 1) << args << "\n" << r.out;  // 124: it blocked until the time limit
    EXPECT_NE(r.out.find(fifo), std::string::npos) << args << "\n" << r.out;
    EXPECT_EQ(r.out.find("terminate"), std::string::npos) << r.out;
  }
  const std::string dir = own("");
  for (const std::string& args : {"exec --loadEngine=" + dir + " " + plugins(),
                                  "exec" + model + " --shapes=x:1x3x32x32 --loadInputs=x:" + dir}) {
    auto r = run(limited() + args + kQuick);
    EXPECT_EQ(r.rc, 1) << args << "\n" << r.out;
    EXPECT_NE(r.out.find("directory"), std::string::npos) << args << "\n" << r.out;
    EXPECT_EQ(r.out.find("terminate"), std::string::npos) << r.out;
  }
}

TEST(Cli, HugeShapesAreAnErrorNotAnAbort) {
  const std::string model =
      "exec --device=cpu --onnx=" + ex("circ_pad/circ_pad.onnx") + " " + plugins();
  auto r = sh(model + " --shapes=x:2147483648x3x32x32" + kQuick);
  EXPECT_EQ(r.rc, 1) << r.out;
  EXPECT_NE(r.out.find("input 'x'"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("2147483648x3x32x32"), std::string::npos) << r.out;
  EXPECT_EQ(r.out.find("terminate"), std::string::npos) << r.out;
  auto big = sh(model + " --shapes=x:1099511627776x3x32x32" + kQuick);
  EXPECT_EQ(big.rc, 1) << big.out;
  EXPECT_EQ(big.out.find("terminate"), std::string::npos) << big.out;
  // An allocation that fails anyway (here under a 1.5 GB address-space limit) ends in a message
  // and exit code 1 at the command boundary, never in SIGABRT. Not under AddressSanitizer or
  // ThreadSanitizer, whose shadow memory needs terabytes of address space (the process could not
  // start).
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
  return;
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer)
  return;
#endif
#endif
  auto oom = run("ulimit -v 1500000; " + std::string(OPFORGE_BINARY_DIR) + "/bin/opforge " + model +
                 " --shapes=x:64x3x512x512" + kQuick);
  EXPECT_EQ(oom.rc, 1) << oom.out;
  EXPECT_NE(oom.out.find("opforge: error:"), std::string::npos) << oom.out;
  EXPECT_EQ(oom.out.find("terminate"), std::string::npos) << oom.out;
}

TEST(Cli, DynamicInputsTakeTheLoadedShapeOrOne) {
  const std::string model = "exec --onnx=" + ex("circ_pad/circ_pad.onnx") + " " + plugins();
  std::vector<float> x(3 * 3 * 32 * 32, 0.5f);
  const std::string in = own("x.npy");
  ASSERT_TRUE(opforge::npy::write(
                  in, opforge::TensorDesc{opforge::DataType::kFloat32, {3, 3, 32, 32}}, x.data())
                  .isOk());
  auto loaded = sh(model + " --loadInputs=x:" + in + kQuick);
  ASSERT_EQ(loaded.rc, 0) << loaded.out;
  EXPECT_NE(loaded.out.find("using the shape of " + in), std::string::npos) << loaded.out;
  EXPECT_NE(loaded.out.find("output 'y': FP32[3x3x36x34]"), std::string::npos) << loaded.out;
  auto none = sh(model + kQuick);
  ASSERT_EQ(none.rc, 0) << none.out;
  EXPECT_NE(none.out.find("[W] input 'x' has dynamic dimensions"), std::string::npos) << none.out;
  EXPECT_NE(none.out.find("overriding them to 1x3x32x32"), std::string::npos) << none.out;
  EXPECT_NE(none.out.find("--shapes=x:"), std::string::npos) << none.out;
  EXPECT_NE(none.out.find("output 'y': FP32[1x3x36x34]"), std::string::npos) << none.out;
}

TEST(Cli, SaveOutputsIsAllOrNothing) {
  // non_zero has two outputs, indices then count; the second cannot be written.
  const std::string out = own("out");
  ::mkdir(out.c_str(), 0755);
  ASSERT_EQ(::mkdir((out + "/count.npy").c_str(), 0755), 0);
  auto r = sh("exec --onnx=" + ex("non_zero/non_zero.onnx") + " " + plugins() +
              " --saveOutputs=" + out + kQuick);
  EXPECT_EQ(r.rc, 1) << r.out;
  EXPECT_NE(r.out.find("count.npy"), std::string::npos) << r.out;
  EXPECT_FALSE(exists(out + "/indices.npy")) << r.out;
  ::rmdir((out + "/count.npy").c_str());
  auto ok = sh("exec --onnx=" + ex("non_zero/non_zero.onnx") + " " + plugins() +
               " --saveOutputs=" + out + kQuick);
  ASSERT_EQ(ok.rc, 0) << ok.out;
  EXPECT_TRUE(exists(out + "/indices.npy"));
  EXPECT_TRUE(exists(out + "/count.npy"));
}
