// scatter.h — the reductions of ScatterElements / ScatterND: none (replace), add, mul, max, min.
#pragma once

#include "util.h"

namespace opforge::ops {

inline Status checkReduction(const AttrMap& a) {
  const auto r = a.get<std::string>("reduction");
  if (r != "none" && r != "add" && r != "mul" && r != "max" && r != "min")
    return Status::invalid("attribute 'reduction' must be none, add, mul, max or min, got '" + r +
                           "'");
  return Status::ok();
}

template <typename N>
void scatterOne(typename N::S& dst, typename N::S v, const std::string& red) {
  using C = typename N::C;
  if (red == "none") {
    dst = v;
    return;
  }
  const C a = N::load(dst), b = N::load(v);
  C r;
  if (red == "add")
    r = static_cast<C>(a + b);
  else if (red == "mul")
    r = static_cast<C>(a * b);
  else if (red == "max")
    r = a < b ? b : a;
  else
    r = b < a ? b : a;
  dst = N::store(r);
}

}  // namespace opforge::ops
