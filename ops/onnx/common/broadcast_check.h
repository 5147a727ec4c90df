// broadcast_check.h — a broadcasting CPU kernel's own check that an input broadcasts to its
// output. A loaded plan does not re-run the shape rule of a node whose value inputs are not
// constants or whose shape input the builder dropped (src/runtime/engine.cc), so an edited plan
// could give the kernel dims that do not broadcast; it must be an error, not a read past the input.
#pragma once

#include <string>
#include <vector>

#include "opforge/status.h"
#include "opforge/tensor.h"

namespace opforge::ops {

inline Status checkBroadcast(const std::vector<int64_t>& in, const std::vector<int64_t>& out,
                             const char* op) {
  bool ok = in.size() <= out.size();
  for (size_t a = 0; ok && a < in.size(); ++a) {
    const int64_t d = in[a], o = out[out.size() - in.size() + a];
    ok = d == o || d == 1;
  }
  if (ok) return Status::ok();
  return Status::invalid(std::string(op) + ": input " + dimsToString(in) +
                         " does not broadcast to the output " + dimsToString(out));
}

}  // namespace opforge::ops
