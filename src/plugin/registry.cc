#include "opforge/registry.h"

#include <dlfcn.h>
#include <elf.h>
#include <sys/stat.h>

#include <climits>
#include <cmath>
#include <cstdlib>
#include <fstream>
#include <limits>

#include "../common/checked.h"
#include "../common/plugin_table.h"
#include "../common/wire.h"
#include "opforge/plugin_export.h"

namespace opforge {

namespace {
// The dynamic loader maps a library's segments and touches them: a file shorter than its own
// headers say (a truncated copy) ends in SIGBUS inside dlopen. Check that the file holds its ELF
// header, program headers, every loadable segment and the section header table first. A file
// that passes can still be one ld.so cannot load (corrupt relocations, a bad dynamic section):
// that is beyond what a loader can check (docs/architecture.md, "Op libraries").
Status checkElf(const std::string& path, uint64_t file_size) {
  auto bad = [&](const std::string& why) {
    return Status::invalid("cannot load op library '" + path +
                           "': not a complete shared object: " + why);
  };
  std::ifstream f(path, std::ios::binary);
  if (!f) return Status::io("cannot open op library '" + path + "'");
  Elf64_Ehdr eh{};
  if (file_size < EI_NIDENT) return bad("the file is " + std::to_string(file_size) + " bytes");
  f.read(reinterpret_cast<char*>(eh.e_ident), EI_NIDENT);
  if (!f || std::memcmp(eh.e_ident, ELFMAG, SELFMAG) != 0) return bad("no ELF magic");
  if (eh.e_ident[EI_CLASS] != ELFCLASS64 || eh.e_ident[EI_DATA] != ELFDATA2LSB)
    return bad("not a 64-bit little-endian ELF file");
  if (file_size < sizeof(eh))
    return bad("the file (" + std::to_string(file_size) + " bytes) ends inside the ELF header");
  f.seekg(0);
  if (!f.read(reinterpret_cast<char*>(&eh), sizeof(eh))) return bad("cannot read the ELF header");
  if (eh.e_type != ET_DYN)
    return bad("the ELF file is not a shared object (type " + std::to_string(eh.e_type) + ")");
  auto table = [&](uint64_t off, uint64_t count, uint64_t entsize, uint64_t min_entsize,
                   const char* what) -> Status {
    if (count == 0) return Status::ok();
    if (entsize < min_entsize)
      return bad(std::string(what) + " entries are " + std::to_string(entsize) + " bytes");
    auto end = checked::addU(off, count * entsize);
    if (!end || *end > file_size)
      return bad(std::string("the ") + what + " table at offset " + std::to_string(off) + " (" +
                 std::to_string(count) + " entries) lies past the end of the file (" +
                 std::to_string(file_size) + " bytes; truncated?)");
    return Status::ok();
  };
  OPFORGE_RETURN_IF_ERROR(
      table(eh.e_phoff, eh.e_phnum, eh.e_phentsize, sizeof(Elf64_Phdr), "program header"));
  OPFORGE_RETURN_IF_ERROR(
      table(eh.e_shoff, eh.e_shnum, eh.e_shentsize, sizeof(Elf64_Shdr), "section header"));
  if (eh.e_phnum == 0) return bad("no program headers");
  for (uint64_t i = 0; i < eh.e_phnum; ++i) {
    Elf64_Phdr ph{};
    f.seekg(static_cast<std::streamoff>(eh.e_phoff + i * eh.e_phentsize));
    if (!f.read(reinterpret_cast<char*>(&ph), sizeof(ph)))
      return bad("cannot read program header " + std::to_string(i));
    if (ph.p_type != PT_LOAD && ph.p_type != PT_DYNAMIC) continue;
    auto end = checked::addU(ph.p_offset, ph.p_filesz);
    if (!end || *end > file_size)
      return bad("segment " + std::to_string(i) + " [" + std::to_string(ph.p_offset) + ", +" +
                 std::to_string(ph.p_filesz) + ") lies past the end of the file (" +
                 std::to_string(file_size) + " bytes; truncated?)");
  }
  return Status::ok();
}
}  // namespace

// ---------------------------------------------------------------------------------------------

namespace detail {
const OpforgeLibrary* builtinLibrary();
}

std::shared_ptr<Registry> Registry::create() {
  auto r = std::make_shared<Registry>();
  Status st = r->addTable(detail::builtinLibrary(), "<built-in>");
  (void)st;  // the built-in table is checked by the unit tests; a failure there is an opforge bug
  return r;
}

std::shared_ptr<Registry> Registry::global() {
  static std::shared_ptr<Registry> g = create();
  return g;
}

Status Registry::addTable(const OpforgeLibrary* lib, const std::string& path) {
  if (!lib) return Status::invalid("op library '" + path + "' returned no op table");
  if (lib->error)
    return Status::invalid("op library '" + path + "' failed to initialise: " + lib->error);
  if (lib->abi_version != OPFORGE_PLUGIN_ABI_VERSION)
    return Status::version("op library '" + path + "' reports plugin ABI version " +
                           std::to_string(lib->abi_version) + "; this opforge speaks version " +
                           std::to_string(OPFORGE_PLUGIN_ABI_VERSION) +
                           ". Rebuild the library against this opforge's headers.");
  // The table crosses a C ABI: check every field the engine will read or call before using it.
  auto badTable = [&](const std::string& why) {
    return Status::invalid("op library '" + path + "' has a malformed op table: " + why);
  };
  if (lib->struct_size < sizeof(OpforgeLibrary))
    return badTable("struct_size " + std::to_string(lib->struct_size) + " is smaller than " +
                    std::to_string(sizeof(OpforgeLibrary)));
  if (lib->num_ops < 0) return badTable("num_ops is " + std::to_string(lib->num_ops));
  if (lib->num_ops > 0 && !lib->ops)
    return badTable("num_ops is " + std::to_string(lib->num_ops) + " but the op array is null");
  if (!lib->free_buffer) return badTable("free_buffer is null");
  for (int i = 0; i < lib->num_ops; ++i) {
    const OpforgeOp& c = lib->ops[i];
    const std::string at =
        "op " + std::to_string(i) + (c.key ? " ('" + std::string(c.key) + "')" : std::string());
    if (c.struct_size < sizeof(OpforgeOp))
      return badTable(at + ": struct_size " + std::to_string(c.struct_size) + " is smaller than " +
                      std::to_string(sizeof(OpforgeOp)));
    if (!c.key) return badTable(at + ": the key is null");
    if (!c.version) return badTable(at + ": the version is null");
    if (!c.schema && c.schema_size > 0)
      return badTable(at + ": the schema is null with a size of " + std::to_string(c.schema_size));
    const char* null_fn = !c.infer          ? "infer"
                          : !c.create       ? "create"
                          : !c.destroy      ? "destroy"
                          : !c.query_tactic ? "query_tactic"
                          : !c.run          ? "run"
                                            : nullptr;
    if (null_fn) return badTable(at + ": function " + null_fn + " is null");
  }
  auto info = std::make_shared<LibraryInfo>();
  info->path = path;
  info->name = lib->name ? lib->name : "";
  info->version = lib->version ? lib->version : "";
  info->num_ops = lib->num_ops;
  std::vector<std::unique_ptr<RegisteredOp>> fresh;
  for (int i = 0; i < lib->num_ops; ++i) {
    const OpforgeOp* c = &lib->ops[i];
    auto op = std::make_unique<RegisteredOp>();
    wire::Reader r(c->schema, c->schema_size,
                   "schema of op '" + std::string(c->key) + "' in " + path);
    op->schema_ = wire::getSchema(r);
    if (!r.ok()) return r.status();
    if (op->schema_.key() != c->key || op->schema_.version != c->version)
      return badTable("op " + std::to_string(i) + " is listed as '" + c->key + "' v" + c->version +
                      " but its schema describes " + op->schema_.key() + " v" +
                      op->schema_.version);
    for (const auto& a : op->schema_.plan_attrs) {
      bool declared = false;
      for (const auto& d : op->schema_.attrs) declared |= d.name == a;
      if (!declared)
        return badTable("op '" + std::string(c->key) + "': planAttrs names '" + a +
                        "', which is not one of its attributes");
    }
    op->c_ = c;
    op->lib_ = lib;
    op->library_ = info;
    fresh.push_back(std::move(op));
  }
  std::lock_guard<std::mutex> lock(mu_);
  for (const auto& op : fresh) {
    std::vector<std::string> keys{op->key()};
    for (const auto& a : op->schema().aliases) keys.push_back(a);
    for (const auto& k : keys) {
      auto [ns, name] = splitKey(k);
      for (const auto& old : ops_) {
        bool clash = old->schema().version == op->schema().version &&
                     (old->key() == k ||
                      std::find(old->schema().aliases.begin(), old->schema().aliases.end(), k) !=
                          old->schema().aliases.end());
        if (clash)
          return Status::invalid("op library '" + path + "' registers " + k + " v" +
                                 op->schema().version + ", which '" + old->library().path +
                                 "' already registered (duplicate registration)");
      }
      (void)ns;
      (void)name;
    }
  }
  for (auto& op : fresh) ops_.push_back(std::move(op));
  libs_.push_back(info);
  return Status::ok();
}

Status Registry::addOps(const std::string& origin, std::vector<OpDef> ops) {
  if (origin.empty() || origin == "<built-in>")
    return Status::invalid("ops added at run time need an origin other than '" + origin + "'");
  std::shared_ptr<detail::OpTable> table = detail::makeTable(origin, "", std::move(ops));
  OPFORGE_RETURN_IF_ERROR(addTable(&table->lib, origin));
  std::lock_guard<std::mutex> lock(mu_);
  run_time_tables_.push_back(std::move(table));
  return Status::ok();
}

Status Registry::loadLibrary(const std::string& path) {
  struct stat sb;
  if (::stat(path.c_str(), &sb) != 0)
    return Status::notFound("op library '" + path + "' not found (no such file)");
  // A FIFO would block dlopen's open() forever; a directory or a device is no library.
  OPFORGE_RETURN_IF_ERROR(checked::regularFile(path, "op library"));
  char real[PATH_MAX];
  std::string canonical = ::realpath(path.c_str(), real) ? std::string(real) : path;
  // One load at a time: "already loaded?" and the registration must be one step, or two threads
  // loading the same library both register it and one gets "duplicate registration" (found by
  // Engine.BuildLoadAndRunInThreads). Loads are rare; mu_ still guards the tables for readers.
  static std::mutex load_mu;
  std::lock_guard<std::mutex> load_lock(load_mu);
  {
    std::lock_guard<std::mutex> lock(mu_);
    for (const auto& p : loaded_real_paths_)
      if (p == canonical) return Status::ok();  // loading twice is harmless
  }
  OPFORGE_RETURN_IF_ERROR(checkElf(path, static_cast<uint64_t>(sb.st_size)));
  void* h = ::dlopen(canonical.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!h) {
    const char* e = ::dlerror();
    return Status::invalid("cannot load op library '" + path + "': " + (e ? e : "dlopen failed"));
  }
  auto abi = reinterpret_cast<OpforgeAbiVersionFn>(::dlsym(h, OPFORGE_PLUGIN_ABI_VERSION_SYMBOL));
  auto get = reinterpret_cast<OpforgeGetLibraryFn>(::dlsym(h, OPFORGE_PLUGIN_GET_LIBRARY_SYMBOL));
  if (!abi || !get)
    return Status::invalid("'" + path + "' is not an opforge op library (it does not export " +
                           OPFORGE_PLUGIN_ABI_VERSION_SYMBOL + " and " +
                           OPFORGE_PLUGIN_GET_LIBRARY_SYMBOL + ")");
  uint32_t v = abi();
  if (v != OPFORGE_PLUGIN_ABI_VERSION)
    return Status::version("op library '" + path + "' was built for plugin ABI version " +
                           std::to_string(v) + "; this opforge speaks version " +
                           std::to_string(OPFORGE_PLUGIN_ABI_VERSION) +
                           ". Rebuild the library against this opforge's headers.");
  OPFORGE_RETURN_IF_ERROR(addTable(get(OPFORGE_PLUGIN_ABI_VERSION), canonical));
  std::lock_guard<std::mutex> lock(mu_);
  loaded_real_paths_.push_back(canonical);
  return Status::ok();
}

const RegisteredOp* Registry::find(const std::string& ns, const std::string& name,
                                   const std::string& version) const {
  const std::string key = ns.empty() ? name : ns + "::" + name;
  std::lock_guard<std::mutex> lock(mu_);
  for (const auto& op : ops_)
    if (op->key() == key && op->schema().version == version) return op.get();
  for (const auto& op : ops_)
    if (op->schema().version == version)
      for (const auto& a : op->schema().aliases)
        if (a == key) return op.get();
  return nullptr;
}

const RegisteredOp* Registry::find(const std::string& key, const std::string& version) const {
  auto [ns, name] = splitKey(key);
  return find(ns, name, version);
}

std::vector<LibraryInfo> Registry::libraries() const {
  std::lock_guard<std::mutex> lock(mu_);
  std::vector<LibraryInfo> out;
  for (const auto& l : libs_) out.push_back(*l);
  return out;
}

std::vector<const RegisteredOp*> Registry::ops() const {
  std::lock_guard<std::mutex> lock(mu_);
  std::vector<const RegisteredOp*> out;
  for (const auto& o : ops_) out.push_back(o.get());
  return out;
}

std::string Registry::librariesSummary() const {
  std::string s;
  for (const auto& l : libraries()) {
    if (!s.empty()) s += ", ";
    s += l.path + " (" + std::to_string(l.num_ops) + " ops)";
  }
  return s;
}

}  // namespace opforge
