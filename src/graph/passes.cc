#include "passes.h"

#include <algorithm>

namespace opforge::graph {

namespace {
struct Entry {
  std::string name;
  int order;
  PassFn fn;
};
std::vector<Entry>& passes() {
  static std::vector<Entry> p;
  return p;
}
}  // namespace

bool registerPass(const std::string& name, int order, PassFn fn) {
  passes().push_back({name, order, std::move(fn)});
  return true;
}

namespace {
std::vector<Entry> sortedPasses() {
  auto list = passes();
  std::stable_sort(list.begin(), list.end(),
                   [](const Entry& a, const Entry& b) { return a.order < b.order; });
  return list;
}
}  // namespace

std::vector<PassInfo> registeredPasses() {
  std::vector<PassInfo> out;
  for (const auto& p : sortedPasses()) out.push_back({p.name, p.order});
  return out;
}

Status runPasses(PassContext& ctx) {
  const auto list = sortedPasses();
  for (size_t i = 1; i < list.size(); ++i)
    if (list[i].order == list[i - 1].order)
      return Status::internal("graph passes '" + list[i - 1].name + "' and '" + list[i].name +
                              "' share order " + std::to_string(list[i].order) +
                              "; every pass needs its own order number");
  for (const auto& name : ctx.disabled)
    if (std::none_of(list.begin(), list.end(), [&](const Entry& e) { return e.name == name; })) {
      std::string known;
      for (const auto& e : list) known += (known.empty() ? "" : ", ") + e.name;
      return Status::invalid(ctx.g.source + ": no graph pass is named '" + name +
                             "' (disabled passes); the passes are: " + known);
    }
  for (const auto& p : list) {
    if (std::find(ctx.disabled.begin(), ctx.disabled.end(), p.name) != ctx.disabled.end()) {
      ctx.ran.push_back(p.name + " (" + std::to_string(p.order) + ", disabled)");
      continue;
    }
    ctx.ran.push_back(p.name + " (" + std::to_string(p.order) + ")");
    Status st = p.fn(ctx);
    if (!st) return st.withContext(ctx.g.source + ": graph pass '" + p.name + "'");
    std::vector<int> live;
    for (int n : ctx.order)
      if (!ctx.g.nodes[n].dead) live.push_back(n);
    ctx.order = std::move(live);
  }
  return Status::ok();
}

}  // namespace opforge::graph
