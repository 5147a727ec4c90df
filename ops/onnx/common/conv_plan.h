// conv_plan.h — ConvArgs (conv_cuda.h) of a Conv-like node from its attributes and tensors.
#pragma once

#include "conv_cuda.h"
#include "pool.h"

namespace opforge::ops {

// Conv: X (N, C, D...), W (M, C / group, k...), Y (N, M, O...).
inline Result<ConvArgs> convArgsOf(const AttrMap& at, const TensorDesc& x, const TensorDesc& w,
                                   const TensorDesc& y) {
  ConvArgs a;
  a.dtype = x.dtype;
  a.nd = x.rank() - 2;
  std::vector<int64_t> kernel(w.dims.begin() + 2, w.dims.end());
  OPFORGE_ASSIGN_OR_RETURN(Window win, readWindow(at, a.nd, kernel, false));
  a.isz.assign(x.dims.begin() + 2, x.dims.end());
  a.osz.assign(y.dims.begin() + 2, y.dims.end());
  resolvePads(win, a.isz);
  a.n = x.dims[0];
  a.c = x.dims[1];
  a.m = w.dims[0];
  a.group = at.get<int64_t>("group");
  a.k = win.k;
  a.s = win.s;
  a.d = win.d;
  a.pb = win.pb;
  a.pe = win.pe;
  return a;
}

}  // namespace opforge::ops
