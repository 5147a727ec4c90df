// `opforge new-op`: see new_op.h.
#include "new_op.h"

#include <fcntl.h>
#include <stdio.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <set>

namespace opforge::cli {
namespace {
namespace fs = std::filesystem;

// Namespaces no new op may take: C++'s and PyTorch's own (torch.ops.<ns>), and opforge's.
const std::set<std::string> kReservedNamespaces = {"std", "torch", "aten", "prim",   "prims",
                                                   "c10", "at",    "cuda", "opforge"};

const std::set<std::string> kCppKeywords = {"alignas",
                                            "alignof",
                                            "and",
                                            "asm",
                                            "auto",
                                            "bool",
                                            "break",
                                            "case",
                                            "catch",
                                            "char",
                                            "class",
                                            "concept",
                                            "const",
                                            "consteval",
                                            "constexpr",
                                            "constinit",
                                            "continue",
                                            "co_await",
                                            "co_return",
                                            "co_yield",
                                            "decltype",
                                            "default",
                                            "delete",
                                            "do",
                                            "double",
                                            "dynamic_cast",
                                            "else",
                                            "enum",
                                            "explicit",
                                            "export",
                                            "extern",
                                            "false",
                                            "float",
                                            "for",
                                            "friend",
                                            "goto",
                                            "if",
                                            "inline",
                                            "int",
                                            "long",
                                            "mutable",
                                            "namespace",
                                            "new",
                                            "noexcept",
                                            "not",
                                            "nullptr",
                                            "operator",
                                            "or",
                                            "private",
                                            "protected",
                                            "public",
                                            "register",
                                            "requires",
                                            "return",
                                            "short",
                                            "signed",
                                            "sizeof",
                                            "static",
                                            "struct",
                                            "switch",
                                            "template",
                                            "this",
                                            "throw",
                                            "true",
                                            "try",
                                            "typedef",
                                            "typeid",
                                            "typename",
                                            "union",
                                            "unsigned",
                                            "using",
                                            "virtual",
                                            "void",
                                            "volatile",
                                            "wchar_t",
                                            "while",
                                            "xor",
                                            "static_assert",
                                            "char8_t",
                                            "char16_t",
                                            "char32_t",
                                            "thread_local",
                                            "reinterpret_cast",
                                            "const_cast",
                                            "static_cast"};

// An identifier of C++, Python and CMake alike: a letter, then letters, digits and '_' (no "__",
// which C++ reserves), at most 64 characters, not a C++ keyword.
Status checkIdentifier(const std::string& what, const std::string& s, const std::string& key) {
  auto bad = [&](const std::string& why) {
    return Status::invalid("opforge new-op: '" + key + "': the " + what + " '" + s + "' " + why +
                           " (want NAMESPACE::NAME, each a letter followed by letters, digits and "
                           "'_', e.g. myops::roi_align)");
  };
  if (s.empty()) return bad("is empty");
  if (s.size() > 64) return bad("is longer than 64 characters");
  if (!std::isalpha(static_cast<unsigned char>(s[0]))) return bad("does not begin with a letter");
  for (char c : s)
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '_')
      return bad(std::string("holds the character '") + c + "'");
  if (s.find("__") != std::string::npos) return bad("holds \"__\" (reserved in C++)");
  if (kCppKeywords.count(s)) return bad("is a C++ keyword");
  return Status::ok();
}

// roi_align -> RoiAlign (the test suite's name).
std::string camel(const std::string& s) {
  std::string out;
  bool up = true;
  for (char c : s) {
    if (c == '_') {
      up = true;
      continue;
    }
    out += up ? static_cast<char>(std::toupper(static_cast<unsigned char>(c))) : c;
    up = false;
  }
  return out;
}

void replaceAll(std::string& s, const std::string& from, const std::string& to) {
  for (size_t p = s.find(from); p != std::string::npos; p = s.find(from, p + to.size()))
    s.replace(p, from.size(), to);
}

const char* templateText(const std::string& file) {
  for (const auto& t : newOpTemplates())
    if (file == t.file) return t.text;
  return nullptr;
}

// opforge's source tree that holds `dir` (its ops/contrib/library.cc and include/opforge/op.h).
bool isOpforgeRoot(const fs::path& p) {
  std::error_code ec;
  return fs::is_regular_file(p / "ops/contrib/library.cc", ec) &&
         fs::is_regular_file(p / "include/opforge/op.h", ec);
}

const char* kCudaCMake = R"md(
# The CUDA tactic (newop_name.cu) is compiled when a CUDA compiler is found; until its `#if 0` is
# removed it compiles to nothing. Set CMAKE_CUDA_ARCHITECTURES for your GPUs.
include(CheckLanguage)
check_language(CUDA)
if(CMAKE_CUDA_COMPILER)
  if(NOT DEFINED CMAKE_CUDA_ARCHITECTURES)
    set(CMAKE_CUDA_ARCHITECTURES 90)
  endif()
  enable_language(CUDA)
endif()
)md";

const char* kBuildOutOfTree = R"md(
## Build, test, run

```sh
cmake -S . -B build -DCMAKE_PREFIX_PATH=<opforge prefix>   # or $(python3 -c "import opforge; print(opforge.cmake_prefix_path)")
cmake --build build
ctest --test-dir build --output-on-failure
opforge ops --plugins=build/lib/libnewop_ns_ops.so newop_ns::
```

From PyTorch: `opforge.load_library("build/lib/libnewop_ns_ops.so")`, then
`torch.ops.newop_ns.newop_name(x)`.
)md";

const char* kBuildInTree = R"md(
## Build and test (inside opforge's tree)

The folder is globbed by CMake: `newop_name.cc` goes into `libopforge_ops.so` with the other contrib
ops, `newop_name_test.cc` into `opforge_tests`.

```sh
cmake -S . -B build      # once, so that the glob finds the new folder
cmake --build build --target opforge_ops opforge_tests
ctest --test-dir build -R NewopName
```

Add the op's row to `ops/contrib/README.md`; once the CUDA tactic is written, GPU test cases
(`newop_name_cases.cc`, as the other contrib ops have).
)md";

Status writeFile(const fs::path& p, const std::string& text) {
  std::ofstream f(p, std::ios::binary | std::ios::trunc);
  f << text;
  f.close();
  if (!f) return Status::io("opforge new-op: cannot write '" + p.string() + "'");
  return Status::ok();
}
}  // namespace

Result<NewOpResult> newOp(const NewOpOptions& o, const std::vector<std::string>& shipped) {
  const size_t sep = o.key.find("::");
  if (sep == std::string::npos)
    return Status::invalid("opforge new-op: '" + o.key +
                           "' is not NAMESPACE::NAME (e.g. myops::roi_align): the op's registry "
                           "key, and its PyTorch name torch.ops.NAMESPACE.NAME");
  const std::string ns = o.key.substr(0, sep), name = o.key.substr(sep + 2);
  if (kReservedNamespaces.count(ns) ||
      std::find(shipped.begin(), shipped.end(), ns) != shipped.end())
    return Status::invalid("opforge new-op: '" + o.key + "': the namespace '" + ns +
                           "' is taken (by opforge's shipped ops, C++ or PyTorch; `opforge ops` "
                           "lists the shipped ones); pick a namespace of your own");
  OPFORGE_RETURN_IF_ERROR(checkIdentifier("namespace", ns, o.key));
  OPFORGE_RETURN_IF_ERROR(checkIdentifier("name", name, o.key));

  // Where: opforge's ops/contrib/ (in the tree), else a project folder of its own.
  std::error_code ec;
  fs::path parent;
  bool in_tree = false;
  if (!o.dir.empty()) {
    parent = fs::absolute(o.dir, ec);
    if (ec || !fs::is_directory(parent, ec))
      return Status::invalid("opforge new-op: --dir '" + o.dir + "' is not a directory");
    parent = fs::weakly_canonical(parent, ec);
    in_tree = parent.filename() == "contrib" && parent.parent_path().filename() == "ops" &&
              isOpforgeRoot(parent.parent_path().parent_path());
  } else {
    const fs::path cwd = fs::current_path(ec);
    parent = cwd;
    for (fs::path p = cwd; !p.empty(); p = p.parent_path()) {
      if (isOpforgeRoot(p)) {
        parent = p / "ops/contrib";
        in_tree = true;
        break;
      }
      if (p == p.parent_path()) break;
    }
  }
  const fs::path folder = parent / name;
  struct stat sb;
  if (::lstat(folder.c_str(), &sb) == 0)
    return Status::invalid("opforge new-op: '" + folder.string() +
                           "' already exists; new-op never writes into an existing folder");

  // The files: template name -> file name.
  std::vector<std::pair<std::string, std::string>> files = {
      {"newop_name.cc", name + ".cc"},
      {"newop_name_test.cc", name + "_test.cc"},
      {"README.md", "README.md"}};
  if (o.cuda) files.push_back({"newop_name.cu", name + ".cu"});
  if (!in_tree) {
    files.push_back({"library.cc", "library.cc"});
    files.push_back({"project_CMakeLists.txt", "CMakeLists.txt"});
  }

  auto fill = [&](std::string s) {
    replaceAll(s, "@CUDA@", in_tree || !o.cuda ? "" : kCudaCMake);
    replaceAll(s, "@CUDA_SOURCE@", o.cuda ? " newop_name.cu" : "");
    replaceAll(s, "@BUILD@", in_tree ? kBuildInTree : kBuildOutOfTree);
    replaceAll(s, "@OUT_OF_TREE_FILES@",
               in_tree ? ""
                       : "| `library.cc` | the library's two exported C functions (plugin ABI) |\n"
                         "| `CMakeLists.txt` | the project: `find_package(opforge)`, the library, "
                         "the test |\n");
    if (!o.cuda) {
      // The README's row of the .cu file.
      const size_t p = s.find("| `newop_name.cu` |");
      if (p != std::string::npos) s.erase(p, s.find('\n', p) + 1 - p);
    }
    replaceAll(s, "NewopName", camel(name));
    replaceAll(s, "newop_ns", ns);
    replaceAll(s, "newop_name", name);
    return s;
  };

  // Written into a hidden sibling first, then renamed into place (never over an existing folder).
  const fs::path temp = parent / ("." + name + ".new-op-" + std::to_string(::getpid()));
  if (!fs::create_directory(temp, ec))
    return Status::io("opforge new-op: cannot create '" + temp.string() +
                      "': " + (ec ? ec.message() : std::string("it exists")));
  auto undo = [&](Status st) -> Status {
    std::error_code e2;
    fs::remove_all(temp, e2);
    return st;
  };
  NewOpResult r;
  r.folder = folder.string();
  r.in_tree = in_tree;
  for (const auto& [tmpl, out] : files) {
    const char* text = templateText(tmpl);
    if (!text) return undo(Status::internal("opforge new-op: no template " + tmpl));
    Status st = writeFile(temp / out, fill(text));
    if (!st) return undo(st);
    r.files.push_back((folder / out).string());
  }
  if (::renameat2(AT_FDCWD, temp.c_str(), AT_FDCWD, folder.c_str(), RENAME_NOREPLACE) != 0) {
    const int e = errno;
    return undo(Status::io("opforge new-op: cannot create '" + folder.string() +
                           "': " + std::strerror(e) + "; nothing was written"));
  }
  return r;
}

}  // namespace opforge::cli
