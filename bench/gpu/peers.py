#!/usr/bin/env python3
"""PyTorch peers of the contrib ops at ISSUE 5's sizes, timed like opforge_gpu_bench (CUDA events
around each call, warm-up, median of many runs, inputs rotated among copies when one set would fit
in L2). Writes one JSON object per line.

  python3 bench/gpu/peers.py --json peers.json [--reps N] [--quick] [--no-compile] [--only SUBSTRING]

Peers (../shared/reference/gpu-anchors.md): F.pad(mode="circular"); GELU(GELU(x)) eager and
torch.compile; torch.nonzero (its size read-back included: nonzero synchronises); x.add_(delta);
deformable aggregation as the grid_sample formulation, eager and torch.compile.
"""
import argparse
import json
import math
import statistics
import sys

L2_BYTES = 50 << 20


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--json", required=True)
    ap.add_argument("--reps", type=int, default=100)
    ap.add_argument("--warmup", type=int, default=10)
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--no-compile", action="store_true")
    ap.add_argument("--only", default="", help="only the peers of ops whose registry key contains this text")
    a = ap.parse_args()
    want = lambda key: a.only in key  # noqa: E731
    try:
        import torch
        import torch.nn.functional as F
    except Exception as e:  # noqa: BLE001
        print(f"peers.py: torch is not available ({e}); no peers measured", file=sys.stderr)
        open(a.json, "w").close()
        return 0
    if not torch.cuda.is_available():
        print("peers.py: no CUDA device; no peers measured", file=sys.stderr)
        open(a.json, "w").close()
        return 0
    dev = torch.device("cuda")
    torch.manual_seed(0)
    rows = []

    def sets_for(nbytes):
        return max(1, min(8, math.ceil(3 * L2_BYTES / max(nbytes, 1))))

    def time_calls(fn, args_sets):
        n = len(args_sets)
        for i in range(a.warmup):
            fn(*args_sets[i % n])
        torch.cuda.synchronize()
        ev = [(torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)) for _ in range(a.reps)]
        for i in range(a.reps):
            ev[i][0].record()
            fn(*args_sets[i % n])
            ev[i][1].record()
        torch.cuda.synchronize()
        ms = sorted(s.elapsed_time(e) for s, e in ev)
        return statistics.median(ms), ms[int(0.1 * (len(ms) - 1))], ms[int(0.9 * (len(ms) - 1))]

    def add(op, config, dtype, impl, ms, nbytes, err=None, note="", source="torch"):
        med, p10, p90 = ms
        rows.append(dict(source=source, op=op, config=config, dtype=dtype, impl=impl, mode="eager",
                         median_ms=med, p10_ms=p10, p90_ms=p90, bytes=nbytes,
                         max_abs_err=-1 if err is None else err, max_rel_err=-1, note=note))
        print(f"  {op:34s} {config:30s} {dtype:5s} {impl:28s} {med:.4f} ms  {nbytes / (med * 1e-3) / 1e12:.3f} TB/s",
              flush=True)

    def compiled(fn):
        if a.no_compile:
            return None
        try:
            c = torch.compile(fn)
            return c
        except Exception as e:  # noqa: BLE001
            print(f"torch.compile unavailable: {e}", file=sys.stderr)
            return None

    name = {torch.float32: "FP32", torch.float16: "FP16", torch.bfloat16: "BF16"}

    # circ_pad: x [8,64,256,256], pads (2,2,2,2)
    if want("example::circ_pad_plugin"):
        dims = (2, 16, 256, 256) if a.quick else (8, 64, 256, 256)
        for dt in (torch.float32, torch.float16):
            x = torch.rand(dims, device=dev, dtype=dt) * 2 - 1
            out_elems = dims[0] * dims[1] * (dims[2] + 4) * (dims[3] + 4)
            nbytes = (x.numel() + out_elems) * x.element_size()
            xs = [(x.clone(),) for _ in range(sets_for(nbytes))]
            ms = time_calls(lambda t: F.pad(t, (2, 2, 2, 2), mode="circular"), xs)
            add("example::circ_pad_plugin", f"x {'x'.join(map(str, dims))} pads 2,2,2,2", name[dt], "torch F.pad circular", ms, nbytes)
            # The copy ceiling at this size (not a peer): an out-of-place copy moving the same bytes (half read,
            # half written), PyTorch's copy_ as gpu-anchors.md's 4.16 TB/s at 2 GiB.
            half = (x.numel() + out_elems) // 2
            pairs = [(torch.empty(half, device=dev, dtype=dt), torch.rand(half, device=dev, dtype=dt))
                     for _ in range(sets_for(nbytes))]
            add("example::circ_pad_plugin", f"x {'x'.join(map(str, dims))} pads 2,2,2,2", name[dt],
                "copy ceiling: copy_ of the same bytes", time_calls(lambda d, src: d.copy_(src), pairs),
                2 * half * x.element_size(), note="out-of-place copy, same bytes moved", source="ceiling")
            del pairs

    # GELU(GELU(x)), 64 Mi elements
    n = (1 << 22) if a.quick else (64 << 20)
    suffix = " (quick: 4Mi)" if a.quick else ""
    if want("opforge::FusedGelu"):
        gg = lambda t: F.gelu(F.gelu(t))  # noqa: E731
        ggc = compiled(gg)
        for dt in (torch.float32, torch.float16, torch.bfloat16):
            x = torch.rand(n, device=dev, dtype=dt) * 12 - 6
            ref = gg(x.double())
            nbytes = 2 * n * x.element_size()
            xs = [(x.clone(),) for _ in range(sets_for(nbytes))]
            err = (gg(x).double() - ref).abs().max().item()
            add("opforge::FusedGelu", "gelu(gelu(x)) 64Mi" + suffix, name[dt], "torch eager", time_calls(gg, xs), nbytes, err)
            if ggc is not None and dt == torch.float32:
                try:
                    err = (ggc(x).double() - ref).abs().max().item()
                    add("opforge::FusedGelu", "gelu(gelu(x)) 64Mi" + suffix, name[dt], "torch.compile", time_calls(ggc, xs), nbytes, err)
                except Exception as e:  # noqa: BLE001
                    print(f"torch.compile GELU failed: {e}", file=sys.stderr)
            if dt == torch.float32:
                g1 = lambda t: F.gelu(t)  # noqa: E731
                add("opforge::FusedGelu", "gelu(x) 64Mi" + suffix, name[dt], "torch eager", time_calls(g1, xs), nbytes,
                    (F.gelu(x).double() - F.gelu(x.double())).abs().max().item())
            del x, xs, ref

    # non_zero [4096, 4096], half non-zero (torch.nonzero returns int64 and synchronises for the size)
    if want("example::non_zero_plugin"):
        m = 1024 if a.quick else 4096
        x = torch.rand(m, m, device=dev) * 2 - 1
        x[torch.rand(m, m, device=dev) < 0.5] = 0
        k = int((x != 0).sum().item())
        nbytes = x.numel() * 4 + k * 8 + 4
        xs = [(x.clone(),) for _ in range(sets_for(nbytes))]
        add("example::non_zero_plugin", f"x {m}x{m} half non-zero, count read back", "FP32", "torch.nonzero (int64)",
            time_calls(torch.nonzero, xs), nbytes, note="int64 output: 2x the index bytes counted here")

    # in-place add, 64 Mi fp32
    if want("sample::elemwise_add_plugin_"):
        x = torch.rand(n, device=dev) * 200 - 100
        nbytes = 2 * n * 4
        xs = [(x.clone(),) for _ in range(sets_for(nbytes))]
        add("sample::elemwise_add_plugin_", "64Mi in place" + suffix, "FP32", "torch x.add_(7)", time_calls(lambda t: t.add_(7), xs), nbytes)
        del x, xs

    # deformable aggregation: the grid_sample formulation at Sparse4Dv3 sizes
    if want("opforge::DeformableAggregation"):
        levels = [(64, 176), (32, 88), (16, 44), (8, 22)]
        ncam, P, C, G, B = 6, 13, 256, 8, 1
        starts = []
        row = 0
        for c in range(ncam):
            starts.append([])
            for (h, w) in levels:
                starts[-1].append(row)
                row += h * w
        Frows = row

        def da_torch(feat, loc, wts):
            # feat [B, F, C]; loc [B, A, P, Ncam, 2]; wts [B, A, P, Ncam, L, G]
            Bn, A = loc.shape[0], loc.shape[1]
            acc_t = torch.float64 if feat.dtype == torch.float64 else torch.float32
            out = torch.zeros(Bn, A, C, device=feat.device, dtype=acc_t)
            u, v = loc[..., 0], loc[..., 1]
            valid = (u > 0) & (u < 1) & (v > 0) & (v < 1)  # [B, A, P, Ncam]
            for c in range(ncam):
                grid = (2 * loc[:, :, :, c, :] - 1).to(feat.dtype)  # [B, A, P, 2]
                for l, (h, w) in enumerate(levels):
                    s = starts[c][l]
                    fm = feat[:, s:s + h * w, :].reshape(Bn, h, w, C).permute(0, 3, 1, 2)  # [B, C, H, W]
                    smp = F.grid_sample(fm, grid, mode="bilinear", padding_mode="zeros", align_corners=False)  # [B, C, A, P]
                    smp = smp.permute(0, 2, 3, 1).to(acc_t)  # [B, A, P, C]
                    wt = wts[:, :, :, c, l, :].repeat_interleave(C // G, dim=-1)  # [B, A, P, C]
                    contrib = torch.where(valid[:, :, :, c, None], smp * wt.to(acc_t), torch.zeros((), device=feat.device, dtype=acc_t))
                    out += contrib.sum(dim=2)
            return out.to(feat.dtype)

        dac = compiled(da_torch)
        for anchors in (900, 1220):
            for valid_frac in (0.1, 0.7, 1.0):
                if a.quick and (anchors != 900 or valid_frac != 0.7):
                    continue
                for dt in (torch.float32, torch.float16):
                    feat = (torch.rand(B, Frows, C, device=dev) * 2 - 1).to(dt)
                    loc = torch.rand(B, anchors, P, ncam, 2, device=dev) * 0.998 + 0.001
                    bad = torch.rand(B, anchors, P, ncam, device=dev) >= valid_frac
                    loc[..., 0] = torch.where(bad, torch.full_like(loc[..., 0], -0.5), loc[..., 0])
                    wts = torch.softmax(torch.rand(B, anchors, P * ncam * len(levels), G, device=dev) * 4 - 2, dim=2)
                    wts = wts.reshape(B, anchors, P, ncam, len(levels), G).contiguous()
                    nbytes = feat.numel() * feat.element_size() + loc.numel() * 4 + wts.numel() * 4 + \
                        ncam * len(levels) * 3 * 4 + B * anchors * C * feat.element_size()
                    cfg = f"A {anchors}, {int(valid_frac * 100 + 0.5)}% valid"
                    with torch.no_grad():
                        ref = da_torch(feat.double(), loc.double(), wts.double())
                        err = (da_torch(feat, loc, wts).double() - ref).abs().max().item()
                        args = [(feat, loc, wts)]
                        add("opforge::DeformableAggregation", cfg, name[dt], "torch grid_sample eager",
                            time_calls(da_torch, args), nbytes, err)
                        # torch.compile recompiles per shape and type (tens of seconds each): the point only.
                        if dac is not None and anchors == 900 and valid_frac == 0.7 and dt == torch.float32:
                            try:
                                err = (dac(feat, loc, wts).double() - ref).abs().max().item()
                                add("opforge::DeformableAggregation", cfg, name[dt], "torch grid_sample compile",
                                    time_calls(dac, args), nbytes, err)
                            except Exception as e:  # noqa: BLE001
                                print(f"torch.compile deformable aggregation failed: {e}", file=sys.stderr)
                    del feat, loc, wts, ref
                    torch.cuda.empty_cache()

    with open(a.json, "w") as f:
        for r in rows:
            f.write(json.dumps(r) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
