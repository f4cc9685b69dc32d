#!/usr/bin/env python3
"""PyTorch and CuPy peer baselines for gx, timed the way gx's own suite is.

Usage:
    python3 bench/peers/torch_cupy_peers.py [--sizes 20,24,28] [--gemm 4096,8192]
        [--reps 50] [--warmup 5] [--libs torch,cupy] [--ops sum,l2dist,...]
        [--max-seconds 1.5]
    Sizes may also come from $GX_BENCH_SIZES; values below 64 are exponents of 2.

Method: each timed run is one call bracketed by a pair of CUDA events on the
current stream; the median (and min) over the timed runs is reported after
untimed warm-up calls.  Inputs are fresh uniform random f32 data made on the
device.  Where the arrays one call touches would fit in L2, several copies of
the inputs are made and the calls rotate through them.  A measurement whose
single call takes so long that --reps runs would exceed --max-seconds is timed
with fewer runs (at least 3); the "reps" field says how many were used.

Output (stdout): one JSON object per line,
    {"impl":"torch"|"cupy"|"cupy_kernel","op":...,"dtype":"f32","n":N,
     "median_us":x,"bytes":B,"flops":F,"min_us":x,"reps":R,"warmup":W,"rot":K,
     "ok":true}
plus one {"impl":"meta",...} line per library with versions and the device.
bytes = the fewest bytes the operation must move (0 for sort and sgemm);
flops = 2*m^3 for sgemm, else 0.  Notes and warnings go to stderr.
"""

import argparse
import json
import math
import os
import sys
import time

# plain FP32 GEMMs: no TF32 anywhere (must be set before the libraries load)
os.environ["NVIDIA_TF32_OVERRIDE"] = "0"
os.environ["CUPY_TF32"] = "0"

DEFAULT_SIZES = "20,24,28"
DEFAULT_GEMM = "4096,8192"
ALL_OPS = ["sum", "map_sin2cos2", "map_saxpy", "l2dist", "scan_sum",
           "select_gt05", "argmin", "sort_f32", "sgemm"]


def note(msg):
    print(msg, file=sys.stderr, flush=True)


def emit(rec):
    print(json.dumps(rec, separators=(",", ":")), flush=True)


def parse_sizes(s):
    out = []
    for tok in str(s).replace(" ", "").split(","):
        if not tok:
            continue
        if tok.startswith("2^"):
            v = 1 << int(tok[2:])
        else:
            v = int(float(tok))
            if v < 64:
                v = 1 << v
        out.append(v)
    return out


def median(v):
    v = sorted(v)
    k = len(v)
    return v[k // 2] if k % 2 else 0.5 * (v[k // 2 - 1] + v[k // 2])


class Lib:
    """The few things the timing loop needs from torch or cupy."""

    name = "?"

    def event_pair(self):
        raise NotImplementedError

    def elapsed_ms(self, a, b):
        raise NotImplementedError

    def sync(self):
        raise NotImplementedError


class TorchLib(Lib):
    def __init__(self, torch):
        self.t = torch
        self.name = "torch"
        self.dev = torch.device("cuda")
        # plain FP32 matmul
        try:
            torch.backends.cuda.matmul.fp32_precision = "ieee"
            self.math = "fp32_precision=ieee"
        except Exception:
            torch.backends.cuda.matmul.allow_tf32 = False
            torch.set_float32_matmul_precision("highest")
            self.math = "allow_tf32=False"
        p = torch.cuda.get_device_properties(0)
        self.l2 = int(getattr(p, "L2_cache_size", 0) or (64 << 20))
        self.device_name = p.name

    def event_pair(self):
        E = self.t.cuda.Event
        return E(enable_timing=True), E(enable_timing=True)

    def elapsed_ms(self, a, b):
        return a.elapsed_time(b)

    def sync(self):
        self.t.cuda.synchronize()

    def rand(self, n):
        return self.t.rand(n, device=self.dev, dtype=self.t.float32)

    def free(self):
        self.sync()
        self.t.cuda.empty_cache()


class CupyLib(Lib):
    def __init__(self, cp):
        self.cp = cp
        self.name = "cupy"
        props = cp.cuda.runtime.getDeviceProperties(cp.cuda.Device().id)
        self.l2 = int(props.get("l2CacheSize", 0) or (64 << 20))
        nm = props.get("name", b"?")
        self.device_name = nm.decode() if isinstance(nm, bytes) else str(nm)
        self.math = "CUPY_TF32=0"

    def event_pair(self):
        E = self.cp.cuda.Event
        return E(), E()

    def elapsed_ms(self, a, b):
        return self.cp.cuda.get_elapsed_time(a, b)

    def sync(self):
        self.cp.cuda.Device().synchronize()

    def rand(self, n):
        cp = self.cp
        try:
            return cp.random.random_sample(n, dtype=cp.float32)
        except TypeError:
            return cp.random.random_sample(n).astype(cp.float32)

    def free(self):
        self.sync()
        self.cp.get_default_memory_pool().free_all_blocks()


def time_calls(lib, fn, args):
    """fn(i) issues one call using rotation slot i; returns (median, min, reps, warm)."""
    warm_times = []
    warm = max(1, args.warmup)
    w = 0
    while w < warm:
        t0 = time.perf_counter()
        fn(w)
        lib.sync()
        warm_times.append(time.perf_counter() - t0)
        w += 1
        # a very slow call (> 50 ms) needs only two warm-ups
        if w >= 2 and min(warm_times) > 0.05:
            break
    per_call = min(warm_times)
    reps = args.reps
    if per_call * reps > args.max_seconds:
        reps = max(3, int(args.max_seconds / per_call))
    evs = [lib.event_pair() for _ in range(reps)]
    for r in range(reps):
        a, b = evs[r]
        a.record()
        fn(w + r)
        b.record()
    lib.sync()
    ts = [1000.0 * lib.elapsed_ms(a, b) for a, b in evs]
    return median(ts), min(ts), reps, w


def rot_count(l2, set_bytes):
    k = math.ceil(4 * l2 / max(1, set_bytes))
    return max(1, min(64, k))


def close(got, want, tol):
    return abs(got - want) <= tol * max(1.0, abs(want))


# --------------------------------------------------------------- op table --
# op name -> list of (impl, callable taking the op's input arrays); ARITY says
# how many f32 inputs each op takes, op_bytes how many bytes it must move.

def build_ops_torch(L):
    t = L.t
    ops = {}
    ops["sum"] = [("torch", lambda x: x.sum())]
    ops["map_sin2cos2"] = [("torch", lambda x: t.sin(x) ** 2 + t.cos(x) ** 2)]
    ops["map_saxpy"] = [("torch", lambda x, y: 2 * x + y)]
    ops["l2dist"] = [("torch", lambda x, y: t.sqrt(t.sum((x - y) ** 2)))]
    ops["scan_sum"] = [("torch", lambda x: t.cumsum(x, 0))]
    ops["select_gt05"] = [("torch", lambda x: x[x > 0.5])]
    ops["argmin"] = [("torch", lambda x: t.argmin(x))]
    ops["sort_f32"] = [("torch", lambda x: t.sort(x)[0])]
    return ops


def build_ops_cupy(L):
    cp = L.cp
    ops = {}
    ops["sum"] = [("cupy", lambda x: cp.sum(x))]
    ek_map = cp.ElementwiseKernel(
        "float32 x", "float32 y",
        "float s = sin(x); float c = cos(x); y = s * s + c * c;",
        "gxpeer_sin2cos2")
    ops["map_sin2cos2"] = [("cupy", lambda x: cp.sin(x) ** 2 + cp.cos(x) ** 2),
                           ("cupy_kernel", lambda x: ek_map(x))]
    ek_saxpy = cp.ElementwiseKernel(
        "float32 x, float32 y", "float32 z", "z = 2.0f * x + y", "gxpeer_saxpy")
    ops["map_saxpy"] = [("cupy", lambda x, y: 2 * x + y),
                        ("cupy_kernel", lambda x, y: ek_saxpy(x, y))]
    rk_l2 = cp.ReductionKernel(
        "float32 x, float32 y", "float32 z", "(x - y) * (x - y)", "a + b",
        "z = sqrt(a)", "0", "gxpeer_l2dist")
    ops["l2dist"] = [("cupy", lambda x, y: cp.sqrt(cp.sum((x - y) ** 2))),
                     ("cupy_kernel", lambda x, y: rk_l2(x, y))]
    ops["scan_sum"] = [("cupy", lambda x: cp.cumsum(x))]
    ops["select_gt05"] = [("cupy", lambda x: x[x > 0.5])]
    ops["argmin"] = [("cupy", lambda x: cp.argmin(x))]
    ops["sort_f32"] = [("cupy", lambda x: cp.sort(x))]
    return ops


ARITY = {"sum": 1, "map_sin2cos2": 1, "map_saxpy": 2, "l2dist": 2, "scan_sum": 1,
         "select_gt05": 1, "argmin": 1, "sort_f32": 1}


def out_arrays(op):
    """arrays written per call, for the rotation estimate"""
    return {"map_sin2cos2": 1, "map_saxpy": 1, "scan_sum": 1, "select_gt05": 1,
            "sort_f32": 1}.get(op, 0)


def as_float(L, v):
    return float(v.item()) if hasattr(v, "item") else float(v)


def verify(L, op, ins, out):
    """returns (ok, extra_fields); compares against a float64 reference
    computed with the same library on the same data."""
    x = ins[0]
    is_torch = L.name == "torch"
    xd = x.double() if is_torch else x.astype("float64")
    extra = {}
    if op == "sum":
        ok = close(as_float(L, out), as_float(L, xd.sum()), 1e-3)
    elif op == "map_sin2cos2":
        ok = as_float(L, abs(out.double() - 1).max() if is_torch
                      else abs(out.astype("float64") - 1).max()) < 1e-5
    elif op == "map_saxpy":
        yd = ins[1].double() if is_torch else ins[1].astype("float64")
        od = out.double() if is_torch else out.astype("float64")
        ok = as_float(L, abs(od - (2 * xd + yd)).max()) < 1e-5
    elif op == "l2dist":
        yd = ins[1].double() if is_torch else ins[1].astype("float64")
        ref = as_float(L, ((xd - yd) ** 2).sum()) ** 0.5
        ok = close(as_float(L, out), ref, 1e-3)
    elif op == "scan_sum":
        ok = close(as_float(L, out[-1]), as_float(L, xd.sum()), 1e-3)
    elif op == "select_gt05":
        kept = int(out.shape[0])
        extra["kept"] = kept
        ok = kept == int(as_float(L, (x > 0.5).sum())) and bool(
            as_float(L, (out > 0.5).all()))
    elif op == "argmin":
        i = int(as_float(L, out))
        ok = as_float(L, x[i]) == as_float(L, x.min())
    elif op == "sort_f32":
        ok = bool(as_float(L, (out[1:] >= out[:-1]).all()))
        extra["elems"] = int(x.shape[0])
    else:
        ok = True
    return ok, extra


def op_bytes(op, n, extra):
    f = 4
    return {
        "sum": n * f, "map_sin2cos2": 2 * n * f, "map_saxpy": 3 * n * f,
        "l2dist": 2 * n * f, "scan_sum": 2 * n * f, "argmin": n * f,
        "select_gt05": n * f + extra.get("kept", 0) * f, "sort_f32": 0,
    }[op]


def run_lib(L, ops, sizes, gemms, args):
    wanted = set(args.ops.split(",")) if args.ops else set(ALL_OPS)
    for n in sizes:
        for op in ALL_OPS:
            if op == "sgemm" or op not in wanted or op not in ops:
                continue
            arity = ARITY[op]
            set_bytes = (arity + out_arrays(op)) * n * 4
            k = rot_count(L.l2, set_bytes)
            try:
                pool = [[L.rand(n) for _ in range(arity)] for _ in range(k)]
            except Exception as e:  # out of memory and the like
                note(f"note {L.name}: {op} n={n}: could not allocate inputs: {e}")
                L.free()
                continue
            for impl, f in ops[op]:
                try:
                    ok, extra = verify(L, op, pool[0], f(*pool[0]))
                    if not ok:
                        note(f"WARNING {impl}: {op} n={n}: wrong result")
                    med, mn, reps, warm = time_calls(
                        L, lambda i: f(*pool[i % k]), args)
                except Exception as e:
                    note(f"note {impl}: {op} n={n} failed: {type(e).__name__}: {e}")
                    L.free()
                    continue
                rec = {"impl": impl, "op": op, "dtype": "f32", "n": n,
                       "median_us": round(med, 3), "bytes": op_bytes(op, n, extra),
                       "flops": 0, "min_us": round(mn, 3), "reps": reps,
                       "warmup": warm, "rot": k, "ok": ok}
                rec.update(extra)
                emit(rec)
            del pool
            L.free()
    if "sgemm" in wanted:
        for m in gemms:
            try:
                a, b = L.rand(m * m).reshape(m, m), L.rand(m * m).reshape(m, m)
                if L.name == "torch":
                    mm = lambda i: a @ b  # noqa: E731
                else:
                    cp = L.cp
                    mm = lambda i: cp.matmul(a, b)  # noqa: E731
                c = mm(0)
                rows = [0, m // 3, m - 1]
                if L.name == "torch":
                    ref = a[rows].double() @ b.double()
                    err = as_float(L, (abs(c[rows].double() - ref) / ref).max())
                else:
                    ref = a[rows].astype("float64") @ b.astype("float64")
                    err = as_float(L, (abs(c[rows].astype("float64") - ref) / ref).max())
                ok = err < 1e-4
                if not ok:
                    note(f"WARNING {L.name}: sgemm m={m}: max rel err {err:.3g}")
                del c, ref
                med, mn, reps, warm = time_calls(L, mm, args)
                emit({"impl": L.name, "op": "sgemm", "dtype": "f32", "n": m,
                      "median_us": round(med, 3), "bytes": 0, "flops": 2 * m ** 3,
                      "min_us": round(mn, 3), "reps": reps, "warmup": warm,
                      "rot": 1, "ok": ok, "m": m, "k": m, "math": L.math})
                del a, b
            except Exception as e:
                note(f"note {L.name}: sgemm m={m} failed: {type(e).__name__}: {e}")
            L.free()


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--sizes", default=os.environ.get("GX_BENCH_SIZES", DEFAULT_SIZES))
    ap.add_argument("--gemm", default=os.environ.get("GX_BENCH_GEMM", DEFAULT_GEMM),
                    help='GEMM sizes, or "none"')
    ap.add_argument("--reps", type=int, default=50)
    ap.add_argument("--warmup", type=int, default=5)
    ap.add_argument("--max-seconds", type=float, default=1.5,
                    help="cap on timed seconds per measurement (reps shrink, >= 3)")
    ap.add_argument("--libs", default="torch,cupy")
    ap.add_argument("--ops", default="", help="comma list; default all: " + ",".join(ALL_OPS))
    args = ap.parse_args()
    if args.reps < 30:
        note(f"note: --reps {args.reps} is below the suite's minimum of 30")
    sizes = parse_sizes(args.sizes)
    gemms = [] if args.gemm in ("none", "0", "") else [int(g) for g in args.gemm.split(",") if g]
    libs = [s.strip() for s in args.libs.split(",") if s.strip()]

    if "torch" in libs:
        try:
            import torch
            if not torch.cuda.is_available():
                raise RuntimeError("torch.cuda.is_available() is False")
            L = TorchLib(torch)
        except Exception as e:
            note(f"note: skipping torch ({type(e).__name__}: {e})")
        else:
            emit({"impl": "meta", "lib": "torch", "version": torch.__version__,
                  "cuda": torch.version.cuda, "device": L.device_name, "math": L.math})
            run_lib(L, build_ops_torch(L), sizes, gemms, args)
            del L

    if "cupy" in libs:
        try:
            import cupy as cp
            cp.cuda.runtime.getDeviceCount()
            L = CupyLib(cp)
            ops = build_ops_cupy(L)
        except Exception as e:
            note(f"note: skipping cupy ({type(e).__name__}: {e})")
        else:
            emit({"impl": "meta", "lib": "cupy", "version": cp.__version__,
                  "cuda": cp.cuda.runtime.runtimeGetVersion(), "device": L.device_name,
                  "accelerators": os.environ.get("CUPY_ACCELERATORS", "(default)"),
                  "math": L.math})
            run_lib(L, ops, sizes, gemms, args)


if __name__ == "__main__":
    main()
