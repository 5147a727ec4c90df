// The test cases of opforge::ReadValues (tests/op_cases.h): the output and every biased size
// against the CPU reference, values of either sign and values past the clamp.
#include "op_cases.h"

namespace opforge::test::cases {

OPFORGE_BUILTIN_CASES(read_values) {
  add({"opforge::ReadValues", {}, {T({4}, -100, 100)}, {I32, I64}});
  add({"opforge::ReadValues", {}, {T({2, 32}, -5000, 5000)}, {I64}});
  add({"opforge::ReadValues", {}, {V(I64, {3}, {-2199023255552.0, 2199023255552.0, 7})}, {I64}});
}

}  // namespace opforge::test::cases
