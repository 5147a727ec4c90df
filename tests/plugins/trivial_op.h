// A minimal op for the test plugin libraries.
#pragma once
#include <cstring>

#include "opforge/op.h"

#define TEST_TRIVIAL_OP(ident, key)                                              \
  OPFORGE_OP(ident, key)                                                         \
      .input("x")                                                                \
      .output("y")                                                               \
      .shape([](opforge::ShapeContext& c) -> opforge::Result<opforge::SymDesc> { \
        return c.input(0).like();                                                \
      })                                                                         \
      .cpu([](opforge::KernelContext&, std::span<const opforge::Tensor> in,      \
              std::span<const opforge::Tensor> out) -> opforge::Status {         \
        std::memcpy(out[0].data, in[0].data, out[0].bytes());                    \
        return opforge::Status::ok();                                            \
      })
