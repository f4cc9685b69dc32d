#!/usr/bin/env python3
"""PyTorch peers of gx's ragged-segment benchmark cases (tools/bench_segment.c), timed
the way torch_cupy_peers.py times its forms (CUDA events around one call, median after
warm-up, inputs rotated through enough copies to defeat the L2).

    python3 bench/peers/segment_peers.py [--sizes 24,28] [--reps 30]

Cases, on the same offsets as gx's (nseg segments of n, o[s] = s*avg +
splitmix64(s) % avg - avg/2, lengths in [1, 2 avg)):
  segsum_f32       2^20 segments;  segsum_long_f32  2^10 segments
  reduce_by_key_f32  i32 keys sorted in runs of 64, f32 values
Forms: torch.segment_reduce(x, "sum", lengths=...) (torch), the same with
offsets= (torch_offsets), index_add_ of x into per-segment bins by a segment-id
array made once outside the timing (torch_index_add: the scatter a user writes);
reduce-by-key: unique_consecutive(return_counts) + segment_reduce (torch).
Every result is checked against a float64 reference.  JSON lines on stdout."""

import argparse
import json
import sys

M64 = (1 << 64) - 1


def mix(z):
    z = (z + 0x9E3779B97F4A7C15) & M64
    z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & M64
    z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & M64
    return z ^ (z >> 31)


def offsets(t, n, nseg):
    import numpy as np
    avg = n // nseg
    s = np.arange(1, nseg, dtype=np.uint64)
    z = s + np.uint64(0x9E3779B97F4A7C15)
    with np.errstate(over="ignore"):
        z = (z ^ (z >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
        z = (z ^ (z >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
        z = z ^ (z >> np.uint64(31))
    o = np.empty(nseg + 1, dtype=np.int64)
    o[0], o[nseg] = 0, n
    o[1:nseg] = s.astype(np.int64) * avg + (z % np.uint64(avg)).astype(np.int64) - avg // 2
    assert mix(1) == int(z[0]) if nseg > 1 else True
    return t.from_numpy(o).cuda()


def time_calls(t, fn, k, reps, warm=3):
    for i in range(warm):
        fn(i % k)
    t.cuda.synchronize()
    ts = []
    for i in range(reps):
        a, b = t.cuda.Event(enable_timing=True), t.cuda.Event(enable_timing=True)
        a.record()
        fn(i % k)
        b.record()
        b.synchronize()
        ts.append(a.elapsed_time(b) * 1000.0)
    ts.sort()
    return ts[len(ts) // 2], ts[0]


def emit(rec):
    print(json.dumps(rec, separators=(",", ":")), flush=True)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--sizes", default="24,28")
    ap.add_argument("--reps", type=int, default=30)
    args = ap.parse_args()
    try:
        import torch as t
    except ImportError:
        print("segment_peers: no torch", file=sys.stderr)
        return 0
    l2 = t.cuda.get_device_properties(0).L2_cache_size
    for e in [int(s) for s in args.sizes.split(",")]:
        n = 1 << e
        k = max(1, min(64, -(-4 * l2 // (8 * n))))
        xs = [t.rand(n, device="cuda") for _ in range(k)]
        for op, nseg in (("segsum_f32", 1 << 20), ("segsum_long_f32", 1 << 10)):
            o = offsets(t, n, nseg)
            lengths = o[1:] - o[:-1]
            ids = t.repeat_interleave(t.arange(nseg, device="cuda"), lengths)
            ref = t.segment_reduce(xs[0].double(), "sum", lengths=lengths)
            outs = [t.zeros(nseg, device="cuda") for _ in range(k)]
            forms = [
                ("torch", lambda i: t.segment_reduce(xs[i], "sum", lengths=lengths)),
                ("torch_offsets", lambda i: t.segment_reduce(xs[i], "sum", offsets=o)),
                ("torch_index_add", lambda i: outs[i].zero_().index_add_(0, ids, xs[i])),
            ]
            for impl, fn in forms:
                got = fn(0).double()
                ok = bool(((got - ref).abs() <= 1e-4 * (1 + ref.abs())).all())
                med, mn = time_calls(t, fn, k, args.reps)
                emit({"impl": impl, "op": op, "dtype": "f32", "n": n, "median_us": round(med, 3),
                      "bytes": 4 * n + 4 * nseg + 8 * (nseg + 1), "flops": 0, "min_us": round(mn, 3),
                      "reps": args.reps, "rot": k, "ok": ok})
            del ids, outs
        keys = (t.arange(n, device="cuda", dtype=t.int32) // 64)
        ref_u, ref_c = t.unique_consecutive(keys, return_counts=True)
        ref = t.segment_reduce(xs[0].double(), "sum", lengths=ref_c)

        def rbk(i):
            u, c = t.unique_consecutive(keys, return_counts=True)
            return u, t.segment_reduce(xs[i], "sum", lengths=c)
        u, got = rbk(0)
        ok = bool(((got.double() - ref).abs() <= 1e-4 * (1 + ref.abs())).all()) and bool((u == ref_u).all())
        med, mn = time_calls(t, rbk, k, args.reps)
        emit({"impl": "torch", "op": "reduce_by_key_f32", "dtype": "f32", "n": n, "median_us": round(med, 3),
              "bytes": 8 * n + 8 * (n // 64), "flops": 0, "min_us": round(mn, 3), "reps": args.reps,
              "rot": k, "ok": ok})
        del xs, keys
        t.cuda.empty_cache()
    return 0


if __name__ == "__main__":
    sys.exit(main())
