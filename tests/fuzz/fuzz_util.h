// fuzz_util.h — what the libFuzzer targets of tests/fuzz share (docs/fuzzing.md).
//
// Contract:
//   - registry(): the global registry with the contrib op library (libopforge_ops.so of this
//     build) loaded once, so the example models and their plans resolve.
//   - buildAndRun(net): builds `net` for the CPU (dynamic input dimensions set to 1, as the CLI
//     does without --shapes), loads the plan and runs it; see runOnCpu.
//   - importBuildAndRun(data, size): importOnnxBytes on the bytes (no external data); an
//     accepted model goes through buildAndRun.
//   - runOnCpu(engine): one execution context, every input at the first profile's opt shape (or
//     its static shape) filled with a fixed byte pattern, one execute(). Inputs over kMaxInputBytes
//     are not run, and the context's memory is capped at kMaxRunBytes (setMemoryLimit: a plan that
//     needs more is refused before it allocates): memory the fuzzer cannot afford (libFuzzer's
//     -rss_limit_mb and -malloc_limit_mb, 2048 MB) is not a finding. Nor is time a legal but
//     large workload takes under ASan and coverage (about 40x a release build; libFuzzer's
//     timeout is 10 s): a 3x3 AveragePool over 65 MB of input and a nearest Resize to 86 MB each
//     took 0.3-0.6 s in release and over 10 s there. So inputs stay at 1 MiB and contexts at
//     16 MiB, small enough that no kernel's work is mistaken for a hang.
//   - Every rejected input must come back as an error with a message: an empty message aborts,
//     so the fuzzer reports it. Crashes, hangs (libFuzzer's -timeout), leaks and sanitizer reports
//     are the findings.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>

#include "opforge/network.h"
#include "opforge/registry.h"
#include "opforge/runtime.h"
#include "opforge/status.h"

namespace opforge::fuzz {

constexpr size_t kMaxInputBytes = size_t{1} << 20;
constexpr uint64_t kMaxRunBytes = uint64_t{16} << 20;

std::shared_ptr<Registry> registry();
// Aborts (a finding) when a failed status carries no message.
void expectMessage(const Status& st, const char* where);
void runOnCpu(const std::shared_ptr<Engine>& engine);
void buildAndRun(const NetworkDefinition& net);
void importBuildAndRun(const uint8_t* data, size_t size);

}  // namespace opforge::fuzz
