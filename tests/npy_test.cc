// The .npy reader under hostile files: bounded header parse, checked dims, non-regular files.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <cstdint>
#include <fstream>
#include <string>

#include "../tools/opforge/npy.h"

using namespace opforge;

#include "op_harness.h"

namespace {
std::string dir() {
  return opforge::test::testDir();
}
// A version-1 (or 2) .npy file with `header` as its dict and `payload` bytes after it.
std::string npyFile(const std::string& name, const std::string& header, size_t payload,
                    int major = 1) {
  std::string path = dir() + "/" + name;
  std::ofstream f(path, std::ios::binary);
  f.write("\x93NUMPY", 6);
  f.put(static_cast<char>(major));
  f.put(0);
  const uint32_t n = static_cast<uint32_t>(header.size());
  if (major == 1) {
    f.put(static_cast<char>(n & 0xff));
    f.put(static_cast<char>((n >> 8) & 0xff));
  } else {
    f.write(reinterpret_cast<const char*>(&n), 4);
  }
  f << header;
  f << std::string(payload, '\0');
  return path;
}
std::string dict(const std::string& shape, const std::string& descr = "<f4") {
  return "{'descr': '" + descr + "', 'fortran_order': False, 'shape': " + shape + ", }\n";
}
}  // namespace

TEST(Npy, WellFormedFilesStillRead) {
  auto a = npy::read(npyFile("a.npy", dict("(2, 3)"), 24));
  ASSERT_TRUE(a.isOk()) << a.status().message();
  EXPECT_EQ(a->desc.dims, (std::vector<int64_t>{2, 3}));
  auto one = npy::read(npyFile("one.npy", dict("(3,)"), 12));
  ASSERT_TRUE(one.isOk()) << one.status().message();
  EXPECT_EQ(one->desc.dims, (std::vector<int64_t>{3}));
  auto scalar = npy::read(npyFile("s.npy", dict("()", "<i8"), 8));
  ASSERT_TRUE(scalar.isOk()) << scalar.status().message();
  EXPECT_EQ(scalar->desc.rank(), 0);
  auto empty = npy::read(npyFile("e.npy", dict("(0, 5)"), 0));
  ASSERT_TRUE(empty.isOk()) << empty.status().message();
  // Python 2's longs and double quotes, as old numpy wrote them.
  auto old = npy::read(npyFile(
      "old.npy", "{\"descr\": \"<f4\", \"fortran_order\": False, \"shape\": (2L, 2L)}", 16));
  ASSERT_TRUE(old.isOk()) << old.status().message();
  // Written by npy::write and read back.
  std::vector<float> v{1, 2, 3};
  const std::string w = dir() + "/w.npy";
  ASSERT_TRUE(npy::write(w, TensorDesc{DataType::kFloat32, {3}}, v.data()).isOk());
  auto back = npy::read(w);
  ASSERT_TRUE(back.isOk()) << back.status().message();
  EXPECT_EQ(back->desc.dims, (std::vector<int64_t>{3}));
}

TEST(Npy, HugeHeadersAreRefusedNotCrashed) {
  for (size_t n : {size_t{100000}, size_t{2000000}}) {
    for (const std::string& fill : {std::string(" "), std::string("1, ")}) {
      std::string filler;
      while (filler.size() < n) filler += fill;
      const std::string header =
          "{'descr': '<f4', 'fortran_order': False, 'shape': (" + filler + "), }";
      auto r = npy::read(npyFile("huge.npy", header, 0, 2));
      ASSERT_FALSE(r.isOk());
      EXPECT_NE(r.status().message().find("at most 65536"), std::string::npos)
          << r.status().message().substr(0, 300);
    }
  }
  // Long but under the limit: parsed in bounded time and stack.
  std::string spaces(60000, ' ');
  auto r = npy::read(npyFile("long.npy",
                             "{'descr':" + spaces +
                                 "'<f4', 'fortran_order': False, "
                                 "'shape': (2,), }",
                             8, 2));
  EXPECT_TRUE(r.isOk()) << r.status().message();
}

TEST(Npy, BadShapesAreNamed) {
  auto twenty = npy::read(npyFile("d20.npy", dict("(12345678901234567890, 2)"), 0));
  ASSERT_FALSE(twenty.isOk());
  EXPECT_NE(twenty.status().message().find("12345678901234567890"), std::string::npos)
      << twenty.status().message();
  EXPECT_NE(twenty.status().message().find("does not fit in 64 bits"), std::string::npos);
  auto neg = npy::read(npyFile("neg.npy", dict("(-2, 3)"), 0));
  ASSERT_FALSE(neg.isOk());
  EXPECT_NE(neg.status().message().find("negative"), std::string::npos) << neg.status().message();
  auto bare = npy::read(npyFile("bare.npy", dict("(3)"), 12));
  ASSERT_FALSE(bare.isOk());
  EXPECT_NE(bare.status().message().find("not a tuple"), std::string::npos)
      << bare.status().message();
  EXPECT_NE(bare.status().message().find("(3,)"), std::string::npos);
  auto product = npy::read(npyFile("prod.npy", dict("(4294967296, 4294967296, 4)"), 0));
  ASSERT_FALSE(product.isOk());
  EXPECT_NE(product.status().message().find("64 bits"), std::string::npos)
      << product.status().message();
  auto garbage = npy::read(npyFile("garbage.npy", dict("(2, x)"), 0));
  ASSERT_FALSE(garbage.isOk());
  EXPECT_NE(garbage.status().message().find("garbage.npy"), std::string::npos);
  auto extra = npy::read(
      npyFile("extra.npy", "{'descr': '<f4', 'fortran_order': False, 'shape': (1,), 'x': 1}", 4));
  ASSERT_FALSE(extra.isOk());
  EXPECT_NE(extra.status().message().find("unexpected key 'x'"), std::string::npos)
      << extra.status().message();
  auto missing = npy::read(npyFile("missing.npy", "{'descr': '<f4', 'shape': (1,)}", 4));
  ASSERT_FALSE(missing.isOk());
  EXPECT_NE(missing.status().message().find("fortran_order"), std::string::npos);
  auto payload = npy::read(npyFile("short.npy", dict("(1000, 1000)"), 10));
  ASSERT_FALSE(payload.isOk());
  EXPECT_NE(payload.status().message().find("payload is 10 bytes"), std::string::npos)
      << payload.status().message();
}

TEST(Npy, DirectoriesAndFifosAreRefusedWithoutBlocking) {
  auto d = npy::read(dir());
  ASSERT_FALSE(d.isOk());
  EXPECT_NE(d.status().message().find("is a directory"), std::string::npos) << d.status().message();
  const std::string fifo = dir() + "/fifo.npy";
  ::unlink(fifo.c_str());
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0644), 0);
  const auto t0 = std::chrono::steady_clock::now();
  auto f = npy::read(fifo);  // would block forever in open() if it were opened
  ASSERT_FALSE(f.isOk());
  EXPECT_NE(f.status().message().find("FIFO"), std::string::npos) << f.status().message();
  EXPECT_NE(f.status().message().find(fifo), std::string::npos);
  EXPECT_LT(std::chrono::steady_clock::now() - t0, std::chrono::seconds(5));
  auto none = npy::read(dir() + "/nothing.npy");
  ASSERT_FALSE(none.isOk());
  EXPECT_NE(none.status().message().find("nothing.npy"), std::string::npos);
}
