#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <fstream>

#include "op_harness.h"
#include "opforge/plugin_abi.h"
#include "opforge/registry.h"

using namespace opforge;

namespace {
std::string lib(const std::string& name) {
  return std::string(OPFORGE_BINARY_DIR) + "/lib/lib" + name + ".so";
}
}  // namespace

TEST(Registry, BuiltinsAreThere) {
  auto reg = Registry::create();
  EXPECT_NE(reg->find("ai.onnx", "Add", "1"), nullptr);
  EXPECT_NE(reg->find("opforge::Reformat"), nullptr);
  EXPECT_EQ(reg->find("example::circ_pad_plugin"), nullptr);
}

TEST(Registry, LoadsTheContribLibraryOnceEvenTwice) {
  auto reg = Registry::create();
  ASSERT_TRUE(reg->loadLibrary(test::contribLibrary()).isOk());
  const size_t n = reg->ops().size();
  EXPECT_TRUE(reg->loadLibrary(test::contribLibrary()).isOk());
  // The same file through a symbolic link is the same library.
  std::string link = test::testDir() + "/opforge_ops_link.so";
  ::unlink(link.c_str());
  ASSERT_EQ(::symlink(test::contribLibrary().c_str(), link.c_str()), 0);
  EXPECT_TRUE(reg->loadLibrary(link).isOk());
  EXPECT_EQ(reg->ops().size(), n);
  EXPECT_NE(reg->find("example", "circ_pad_plugin", "1"), nullptr);
  EXPECT_NE(reg->find("example", "non_zero_plugin", "1"), nullptr);
  EXPECT_NE(reg->find("sample", "elemwise_add_plugin_", "1"), nullptr);
  EXPECT_EQ(reg->libraries().size(), 2u);
}

TEST(Registry, MissingFileIsNamed) {
  auto reg = Registry::create();
  Status st = reg->loadLibrary("/nonexistent/libnothing.so");
  EXPECT_EQ(st.code(), StatusCode::kNotFound);
  EXPECT_NE(st.message().find("/nonexistent/libnothing.so"), std::string::npos) << st.message();
}

TEST(Registry, NonLibraryIsRefused) {
  auto reg = Registry::create();
  Status st = reg->loadLibrary(lib("opforge"));  // a shared object without the plugin entry points
  ASSERT_FALSE(st.isOk());
  EXPECT_NE(st.message().find("not an opforge op library"), std::string::npos) << st.message();
  std::string text = test::testDir() + "/not_a_library.so";
  FILE* f = std::fopen(text.c_str(), "w");
  std::fputs("hello", f);
  std::fclose(f);
  Status st2 = reg->loadLibrary(text);
  ASSERT_FALSE(st2.isOk());
  EXPECT_NE(st2.message().find("cannot load op library"), std::string::npos) << st2.message();
}

TEST(Registry, OtherAbiVersionIsRefused) {
  auto reg = Registry::create();
  Status st = reg->loadLibrary(lib("test_plugin_abi99"));
  EXPECT_EQ(st.code(), StatusCode::kVersion);
  EXPECT_NE(st.message().find("ABI version 99"), std::string::npos) << st.message();
  EXPECT_NE(st.message().find("speaks version " + std::to_string(OPFORGE_PLUGIN_ABI_VERSION)),
            std::string::npos)
      << st.message();
  EXPECT_EQ(reg->find("test::future_op"), nullptr);
}

TEST(Registry, DuplicateRegistrationIsRefused) {
  auto reg = Registry::create();
  ASSERT_TRUE(reg->loadLibrary(test::contribLibrary()).isOk());
  Status st = reg->loadLibrary(lib("test_plugin_duplicate"));
  ASSERT_FALSE(st.isOk());
  EXPECT_NE(st.message().find("duplicate registration"), std::string::npos) << st.message();
  EXPECT_NE(st.message().find("example::circ_pad_plugin"), std::string::npos);
  EXPECT_NE(st.message().find("libopforge_ops.so"), std::string::npos);
  // The original op is untouched.
  EXPECT_EQ(reg->find("example::circ_pad_plugin")->library().path.find("duplicate"),
            std::string::npos);
}

TEST(Registry, MalformedLibraryReportsWhy) {
  auto reg = Registry::create();
  Status st = reg->loadLibrary(lib("test_plugin_bad_combo"));
  ASSERT_FALSE(st.isOk());
  EXPECT_NE(st.message().find("failed to initialise"), std::string::npos) << st.message();
  EXPECT_NE(st.message().find("test::bad_combo"), std::string::npos) << st.message();
}

TEST(Registry, VersionsAndAliases) {
  auto reg = Registry::create();
  ASSERT_TRUE(reg->loadLibrary(lib("test_plugin_extra_op")).isOk());
  EXPECT_EQ(reg->find("test::copy", "1"), nullptr);
  EXPECT_NE(reg->find("test::copy", "2"), nullptr);
  EXPECT_EQ(reg->find("legacy::Copy", "2"), reg->find("test::copy", "2"));
}

namespace {
std::string scratch(const std::string& name) {
  return test::testDir() + "/" + name;
}
}  // namespace

TEST(Registry, TruncatedLibraryIsRefusedBeforeDlopen) {
  // A truncated copy used to end in SIGBUS inside dlopen (the loader maps past the end).
  std::ifstream in(test::contribLibrary(), std::ios::binary);
  std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  ASSERT_GT(bytes.size(), size_t{4096});
  for (size_t keep : {size_t{0}, size_t{10}, size_t{100}, size_t{1024}, size_t{64 * 1024},
                      size_t{1024 * 1024}, bytes.size() / 2, bytes.size() - 1}) {
    if (keep >= bytes.size()) continue;
    const std::string path = scratch("libcut_" + std::to_string(keep) + ".so");
    {
      std::ofstream f(path, std::ios::binary);
      f.write(bytes.data(), static_cast<std::streamsize>(keep));
    }
    auto reg = Registry::create();
    Status st = reg->loadLibrary(path);
    ASSERT_FALSE(st.isOk()) << keep;
    EXPECT_NE(st.message().find(path), std::string::npos) << st.message();
    EXPECT_NE(st.message().find("cannot load op library"), std::string::npos) << st.message();
  }
}

TEST(Registry, FifosAndDirectoriesAreRefusedWithoutBlocking) {
  const std::string fifo = scratch("libfifo.so");
  ::unlink(fifo.c_str());
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0644), 0);
  auto reg = Registry::create();
  Status st = reg->loadLibrary(fifo);  // dlopen would block in open() forever
  ASSERT_FALSE(st.isOk());
  EXPECT_NE(st.message().find("FIFO"), std::string::npos) << st.message();
  EXPECT_NE(st.message().find(fifo), std::string::npos);
  Status d = reg->loadLibrary(test::testDir());
  ASSERT_FALSE(d.isOk());
  EXPECT_NE(d.message().find("directory"), std::string::npos) << d.message();
}

TEST(Registry, MalformedCTableIsRefusedWithTheField) {
  const std::pair<const char*, const char*> cases[] = {
      {"null_key", "the key is null"},      {"null_ops", "num_ops is 1 but the op array is null"},
      {"null_run", "function run is null"}, {"negative_count", "num_ops is -3"},
      {"null_free", "free_buffer is null"},
  };
  for (const auto& [mode, want] : cases) {
    ::setenv("OPFORGE_TEST_BAD_TABLE", mode, 1);
    auto reg = Registry::create();
    Status st = reg->loadLibrary(lib("test_plugin_bad_table"));
    ASSERT_FALSE(st.isOk()) << mode;
    EXPECT_NE(st.message().find("malformed op table"), std::string::npos) << st.message();
    EXPECT_NE(st.message().find(want), std::string::npos) << mode << ": " << st.message();
    EXPECT_NE(st.message().find("test_plugin_bad_table"), std::string::npos) << st.message();
  }
  ::unsetenv("OPFORGE_TEST_BAD_TABLE");
}

namespace {
// A run-time op: y = x * factor (FP32), as Python's opforge.plugin defines them.
OpDef scaleOp(const std::string& key) {
  OpDef d(key);
  d.input("x")
      .output("y")
      .attr<double>("factor", 2.0)
      .shape([](ShapeContext& c) -> Result<SymDesc> { return c.input(0).like(); })
      .combos("FP32, FP32")
      .cpu([](KernelContext& ctx, std::span<const Tensor> in, std::span<const Tensor> out) {
        const float f = ctx.attr<float>("factor");
        for (int64_t i = 0; i < in[0].numel(); ++i)
          static_cast<float*>(out[0].data)[i] = static_cast<const float*>(in[0].data)[i] * f;
        return Status::ok();
      });
  return d;
}
}  // namespace

TEST(Registry, AddOpsRegistersRunTimeOpsThroughTheCTable) {
  auto reg = Registry::create();
  std::vector<OpDef> defs;
  defs.push_back(scaleOp("rt::scale"));
  ASSERT_TRUE(reg->addOps("python:my_module", std::move(defs)).isOk());
  const RegisteredOp* op = reg->find("rt::scale");
  ASSERT_NE(op, nullptr);
  EXPECT_EQ(op->library().path, "python:my_module");
  EXPECT_FALSE(op->builtin());
  EXPECT_EQ(reg->libraries().back().path, "python:my_module");
  EXPECT_EQ(reg->libraries().back().num_ops, 1);
  EXPECT_NE(reg->librariesSummary().find("python:my_module (1 ops)"), std::string::npos);
  // Shape rule, attribute defaults and the kernel go through the C entry points.
  AttrMap given;
  auto attrs = op->validateAttrs("n", given);
  ASSERT_TRUE(attrs.isOk()) << attrs.status().message();
  InferInput x;
  x.present = true;
  x.desc = SymDesc::make(DataType::kFloat32, {DimExpr::symbol("b"), 3});
  auto r = op->infer("n", *attrs, {x}, "n#");
  ASSERT_TRUE(r.isOk()) << r.status().message();
  EXPECT_EQ(toString(r->outputs[0].dims), toString(x.desc.dims));
  auto inst = op->instantiate("n", *attrs);
  ASSERT_TRUE(inst.isOk());
  std::vector<float> in{1, 2, 3}, out(3);
  Tensor ti{TensorDesc{DataType::kFloat32, {3}}, in.data(), Device::kCpu};
  Tensor to{TensorDesc{DataType::kFloat32, {3}}, out.data(), Device::kCpu};
  ASSERT_TRUE((*inst)->run(0, {&ti, 1}, {&to, 1}, nullptr, 0, nullptr).isOk());
  EXPECT_EQ(out, (std::vector<float>{2, 4, 6}));
}

TEST(Registry, AddOpsRefusesADuplicateNamingBothOrigins) {
  auto reg = Registry::create();
  std::vector<OpDef> a, b, builtin;
  a.push_back(scaleOp("rt::scale"));
  b.push_back(scaleOp("rt::scale"));
  builtin.push_back(scaleOp("ai.onnx::Relu"));
  ASSERT_TRUE(reg->addOps("python:first", std::move(a)).isOk());
  Status st = reg->addOps("python:second", std::move(b));
  ASSERT_FALSE(st.isOk());
  EXPECT_NE(st.message().find("python:second"), std::string::npos) << st.message();
  EXPECT_NE(st.message().find("'python:first' already registered"), std::string::npos)
      << st.message();
  EXPECT_EQ(reg->find("rt::scale")->library().path, "python:first");
  Status sb = reg->addOps("python:third", std::move(builtin));
  ASSERT_FALSE(sb.isOk());
  EXPECT_NE(sb.message().find("'<built-in>' already registered"), std::string::npos)
      << sb.message();
  EXPECT_EQ(reg->libraries().size(), 2u);  // <built-in> and python:first
}

TEST(Registry, AddOpsValidatesLikeALibrary) {
  auto reg = Registry::create();
  std::vector<OpDef> no_cpu, bad_combo, twice, no_origin;
  no_cpu.emplace_back("rt::no_cpu")
      .input("x")
      .output("y")
      .shape([](ShapeContext& c) -> Result<SymDesc> { return c.input(0).like(); });
  Status st = reg->addOps("python:m", std::move(no_cpu));
  EXPECT_NE(st.message().find("rt::no_cpu v1 has no CPU reference"), std::string::npos)
      << st.message();
  bad_combo.push_back(scaleOp("rt::bad_combo"));
  bad_combo.back().combos("FP32, FP32, FP32");
  st = reg->addOps("python:m", std::move(bad_combo));
  EXPECT_NE(st.message().find("rt::bad_combo"), std::string::npos) << st.message();
  EXPECT_NE(st.message().find("failed to initialise"), std::string::npos) << st.message();
  twice.push_back(scaleOp("rt::twice"));
  twice.push_back(scaleOp("rt::twice"));
  st = reg->addOps("python:m", std::move(twice));
  EXPECT_NE(st.message().find("rt::twice v1 is defined twice"), std::string::npos) << st.message();
  no_origin.push_back(scaleOp("rt::no_origin"));
  EXPECT_FALSE(reg->addOps("", std::move(no_origin)).isOk());
  EXPECT_EQ(reg->find("rt::no_cpu"), nullptr);
  EXPECT_EQ(reg->find("rt::bad_combo"), nullptr);
  EXPECT_EQ(reg->find("rt::twice"), nullptr);
  EXPECT_EQ(reg->libraries().size(), 1u);
}
