// The attribute sets of FusedGelu's GPU cases, shared with FusedGeluGrad's (tests/op_cases.h).
#pragma once

#include <string>
#include <vector>

#include "opforge/network.h"

namespace opforge::test::cases {

struct GeluAttrs {
  const char* name;
  Attrs attrs;
};

inline const std::vector<GeluAttrs>& geluAttrs() {
  static const std::vector<GeluAttrs> a = {
      {"erf", {}},
      {"tanh", {{"approximate", std::string("tanh")}}},
      {"gelu(gelu)", {{"chain", std::vector<int32_t>{1}}}},
      {"every stage",
       {{"approximate", std::string("tanh")},
        {"chain", std::vector<int32_t>{2, 3, 6, 7, 4, 1, 5, 8}},
        {"chain_scalars", std::vector<float>{0, 0, -1.5f, 0.25f, 0, 0, 0, 3.0f}}}},
  };
  return a;
}

}  // namespace opforge::test::cases
