// A library whose op reports into the device error record it is handed (KernelContext::
// errorRecord(), opforge/device_error.h) from its CPU kernel, to check that the record crosses the
// C ABI. y = x, except y[0] = 1 when the kernel got a record, 0 when it got none; with a record,
// the kernel reports x[0] as an index outside [-2, 2) of axis 0 of input 0.
#include <cstring>

#include "opforge/op.h"
#include "opforge/plugin_export.h"

OPFORGE_OP(report_error, "test::report_error")
    .input("x")
    .output("y")
    .shape([](opforge::ShapeContext& c) -> opforge::Result<opforge::SymDesc> {
      return c.input(0).like();
    })
    .combos("FP32")
    .cpu([](opforge::KernelContext& ctx, std::span<const opforge::Tensor> in,
            std::span<const opforge::Tensor> out) -> opforge::Status {
      std::memcpy(out[0].data, in[0].data, out[0].bytes());
      opforge::DeviceErrorRecord* r = ctx.errorRecord();
      if (out[0].numel() > 0) out[0].as<float>()[0] = r ? 1.f : 0.f;
      if (r && in[0].numel() > 0) {
        r->value = static_cast<int64_t>(in[0].as<const float>()[0]);
        r->position = 0;
        r->extent = 2;
        r->axis = 0;
        r->input = 0;
        r->kind = opforge::kDeviceErrorIndex;
        r->flag = 1;
      }
      return opforge::Status::ok();
    });
OPFORGE_PLUGIN_LIBRARY("error_record", "0");
