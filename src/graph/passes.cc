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

Status runPasses(PassContext& ctx) {
  auto list = passes();
  std::stable_sort(list.begin(), list.end(),
                   [](const Entry& a, const Entry& b) { return a.order < b.order; });
  for (const auto& p : list) {
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
