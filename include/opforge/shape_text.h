// opforge/shape_text.h — symbolic dimensions as text, read back.
//
// DimExpr::toString writes infix text ("x.0*2+4", "floordiv(x.1,2)", "min(a,b)"); parseDimExpr
// reads it: `+ - *` with the usual precedence, left to right; floordiv, ceildiv, min, max as calls;
// parentheses, spaces, a unary minus before a constant; decimal constants; any other run of
// characters other than `+-*(),` and whitespace is a symbol (a run of digits alone is a constant).
// parseDimExpr(e.toString()) equals e for every binding of its symbols (not always sameAs:
// "a+(b-c)" prints as "a+b-c"). Errors name the text and the position.
//
// Usage:
//   auto e = opforge::parseDimExpr("ceildiv(in0.0*8,128)");   // Result<DimExpr>
#pragma once

#include <string_view>

#include "opforge/shape.h"
#include "opforge/status.h"

namespace opforge {

Result<DimExpr> parseDimExpr(std::string_view text);

}  // namespace opforge
