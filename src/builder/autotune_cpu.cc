// The builder's CPU tactic choice: tactic 0 (the reference) unless an op declares more than one
// CPU tactic (a Python op under autotune; a view tactic), then a view tactic that applies
// (views.cc), else the fastest on the host at the tuning point.
#include <algorithm>
#include <chrono>

#include "autotune.h"
#include "build_state.h"

namespace opforge::tune {

std::vector<TacticTime> timeHostTactics(const KernelInstance& inst,
                                        const std::vector<int32_t>& tactics,
                                        const std::vector<TimedInput>& inputs,
                                        const std::vector<TensorDesc>& outputs, int reps) {
  std::vector<TacticTime> out;
  std::mt19937_64 rng(0x5eed);
  std::vector<std::vector<uint8_t>> in_mem, out_mem;
  std::vector<Tensor> ins, outs;
  std::vector<TensorDesc> in_d;
  for (const auto& in : inputs)
    in_mem.push_back(in.present ? fill(in, rng) : std::vector<uint8_t>{});
  for (size_t i = 0; i < inputs.size(); ++i) {
    in_d.push_back(inputs[i].present ? inputs[i].desc : TensorDesc{});
    ins.push_back(inputs[i].present ? Tensor{inputs[i].desc, in_mem[i].data(), Device::kCpu}
                                    : Tensor{});
  }
  for (const auto& d : outputs) out_mem.emplace_back(std::max<size_t>(d.bytes(), 1), 0xff);
  for (size_t o = 0; o < outputs.size(); ++o)
    outs.push_back(Tensor{outputs[o], out_mem[o].data(), Device::kCpu});
  for (int32_t t : tactics) {
    TacticTime r;
    r.tactic = t;
    size_t ws_size = 0;
    inst.tacticApplies(t, in_d, outputs, &ws_size);
    std::vector<uint8_t> ws(std::max<size_t>(ws_size, 1));
    Status st = inst.run(t, ins, outs, ws.data(), ws_size, nullptr);  // warm-up
    std::vector<double> ms;
    for (int i = 0; i < reps && st; ++i) {
      const auto t0 = std::chrono::steady_clock::now();
      st = inst.run(t, ins, outs, ws.data(), ws_size, nullptr);
      ms.push_back(
          std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count());
    }
    if (!st) {
      r.error = st.message();
    } else {
      std::sort(ms.begin(), ms.end());
      r.median_ms = ms.empty() ? -1 : ms[ms.size() / 2];
    }
    out.push_back(r);
  }
  return out;
}

}  // namespace opforge::tune

namespace opforge::build {

Status BuildState::chooseCpuTactics() {
  // CPU tactics other than views: a choice to time when more than one.
  auto cpuTactics = [](const Node& node) {
    int n = 0;
    for (const auto& t : node.op->schema().tactics) n += t.backend == Backend::kCpu && !t.in_place;
    return n;
  };
  auto hasView = [](const Node& node) {
    for (const auto& t : node.op->schema().tactics)
      if (t.backend == Backend::kCpu && t.in_place) return true;
    return false;
  };
  bool any = false;
  for (int n : order_) {
    Node& node = g_.nodes[n];
    node.tactic = 0;
    // layer_tactics entries are checked (and marked used) on every layer; a CPU tactic other than
    // the reference can be pinned only where there is one, which the loop below times.
    OPFORGE_ASSIGN_OR_RETURN(const auto pin, pinnedTactic(node));
    if (hasView(node) && (!pin || *pin != 0)) {  // costs nothing where placeViews runs it in place
      OPFORGE_ASSIGN_OR_RETURN(const int32_t view, viewTactic(node));
      if (view >= 0 && (!pin || *pin == view)) {
        node.tactic = view;
        continue;
      }
      if (pin && cpuTactics(node) < 2) return pinNotApplicable(g_.source, node, *pin);
    }
    any = any || cpuTactics(node) > 1;
  }
  if (!any) return checkPinsUsed();
  OPFORGE_RETURN_IF_ERROR(prepareTuning());
  int tried = 0, layers = 0;
  for (int n : order_) {
    Node& node = g_.nodes[n];
    if (cpuTactics(node) < 2 || node.tactic != 0) continue;
    OPFORGE_ASSIGN_OR_RETURN(const auto pin, pinnedTactic(node));
    OPFORGE_ASSIGN_OR_RETURN(NodeTiming t, timeNodeAsPlaced(node));
    if (pin && *pin != 0 && t.tactic != *pin) return pinNotApplicable(g_.source, node, *pin);
    if (t.tactic < 0) continue;  // none of them applies here: the reference
    node.tactic = t.tactic;
    node.build_time_ms = t.tried ? t.ms : -1.0;
    tried += t.tried;
    layers += t.tried > 0;
  }
  log("timed " + std::to_string(tried) + " CPU tactics for " + std::to_string(layers) +
      " layers with a choice of CPU tactics");
  return checkPinsUsed();
}

}  // namespace opforge::build
