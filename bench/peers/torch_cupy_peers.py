#!/usr/bin/env python3
"""PyTorch and CuPy peer baselines for gx, timed the way gx's own suite is.

Usage:
    python3 bench/peers/torch_cupy_peers.py [--sizes 20,24,28] [--gemm 4096,8192]
        [--reps 50] [--warmup 5] [--libs torch,cupy] [--ops sum,l2dist,...]
        [--max-seconds 1.5]
    Sizes may also come from $GX_BENCH_SIZES; values below 64 are exponents of 2.
    python3 bench/peers/torch_cupy_peers.py --latency [10,16,20]
        only gx bench's lat_* cases in torch (host clock, one call to a host result).

Forms: each op is timed in every form a user of the library would write, from
plain eager calls to the library's best: `out=` into an existing array
(torch_out, cupy_out), torch.linalg.vector_norm (torch_norm), torch.compile'd
Triton kernels (torch_compile; warmed up, the first call's compile time is
reported as "compile_s"), CuPy's ElementwiseKernel / ReductionKernel
(cupy_kernel) and cupy.fuse (cupy_fuse).  The merge takes the fastest correct
form as the peer.

Method: each timed run is one call bracketed by a pair of CUDA events on the
current stream; the median (and min) over the timed runs is reported after
untimed warm-up calls.  Inputs are fresh uniform random f32 data made on the
device.  Where the arrays one call touches would fit in L2, several copies of
the inputs, and of the outputs a form writes into, are made and the calls
rotate through them (4x the L2 between reuses, as gx bench does).  A
measurement whose single call takes so long that --reps runs would exceed
--max-seconds is timed with fewer runs (at least 3); the "reps" field says
how many were used.  Every form's result is checked first against a float64
reference made by the same library from the same inputs ("ok").

Output (stdout): one JSON object per line,
    {"impl":"torch"|"torch_out"|"torch_compile"|...,"op":...,"dtype":"f32","n":N,
     "median_us":x,"bytes":B,"flops":F,"min_us":x,"reps":R,"warmup":W,"rot":K,
     "ok":true[,"compile_s":s]}
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
ALL_OPS = ["sum", "max", "mean", "argmin", "argmax", "map_sin2cos2", "map_saxpy", "l2dist",
           "scan_sum", "select_gt05", "sum_rows", "sum_cols", "fill_f32", "rand_f32",
            "pipeline_l2count", "sort_f32", "sort_u32", "argsort_f32", "sort_rows_f32", "hist256_f32",
            "sort_pairs_u32", "topk100_f32", "unique_i32", "searchsorted_f32", "concat4", "gather_map_f32",
            "take_f32", "scatter_add_f32", "scatter_add_det_f32", "index_add_rows_f32", "where_f32", "sgemm",
            "sum_f16", "map_sin2cos2_f16", "l2dist_f16", "gemm_f16", "gemm_bf16"]
HALF_OPS = ("sum_f16", "map_sin2cos2_f16", "l2dist_f16")  # torch only (run_half)
SCAT_BINS = 1 << 20  # gx bench's scatter-add bins (tools/bench_index.c)


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

    def randint(self, n):
        return self.t.randint(0, n, (n,), device=self.dev, dtype=self.t.int64)

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

    def randint(self, n):
        return self.cp.random.randint(0, n, n, dtype=self.cp.int64)

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
# op name -> list of Form: each the way a user of that library writes the op,
# eager and in its best form (one fused kernel, `out=` into an existing array,
# torch.compile, CuPy's ElementwiseKernel / ReductionKernel / fuse).  A form's
# fn(ins, outs) returns the result; `outs` names the arrays it writes into
# (rotated with the inputs, so each call finds its output out of L2 as gx's
# does); `compiled` forms report their compile time separately.

class Form:
    def __init__(self, impl, fn, outs=(), compiled=False):
        self.impl, self.fn, self.outs, self.compiled = impl, fn, tuple(outs), compiled


def side_of(n):
    """gx's matrix for sum_rows / sum_cols: side x n/side, side the largest power
    of two with side^2 <= n (16384 x 16384 at 2^28)."""
    s = 1
    while (s * 2) * (s * 2) <= n:
        s *= 2
    return s


def in_shape(op, n):
    if op == "concat4":  # four arrays of n/4 into one of n (2^28: four of 2^26)
        return (n // 4,)
    return (side_of(n), n // side_of(n)) if op in ("sum_rows", "sum_cols") else (n,)


def out_shape(op, n, what):
    """shape of an output array: 'n' like the input, 'row' one per row, 'col' one per
    column, 'scalar' a 0-d array"""
    s = side_of(n)
    return {"n": (n,), "row": (s,), "col": (n // s,), "scalar": (), "bins": (SCAT_BINS,),
            "bins_rows": (SCAT_BINS // 16, 16)}[what]


def compile_fn(t, f):
    return t.compile(f, dynamic=False, fullgraph=True)


def build_ops_torch(L):
    t = L.t
    C = lambda f: compile_fn(t, f)  # noqa: E731
    ops = {}
    ops["sum"] = [Form("torch", lambda i, o, n: i[0].sum()),
                  Form("torch_out", lambda i, o, n: t.sum(i[0], 0, out=o[0]), ["scalar"])]
    ops["max"] = [Form("torch", lambda i, o, n: t.amax(i[0])),
                  Form("torch_out", lambda i, o, n: t.amax(i[0], 0, out=o[0]), ["scalar"])]
    ops["mean"] = [Form("torch", lambda i, o, n: t.mean(i[0])),
                   Form("torch_out", lambda i, o, n: t.mean(i[0], 0, out=o[0]), ["scalar"])]
    ops["argmin"] = [Form("torch", lambda i, o, n: t.argmin(i[0]))]
    ops["argmax"] = [Form("torch", lambda i, o, n: t.argmax(i[0]))]
    sc = C(lambda x: t.sin(x) ** 2 + t.cos(x) ** 2)
    ops["map_sin2cos2"] = [Form("torch", lambda i, o, n: t.sin(i[0]) ** 2 + t.cos(i[0]) ** 2),
                           Form("torch_compile", lambda i, o, n: sc(i[0]), compiled=True)]
    sx = C(lambda x, y: 2 * x + y)
    ops["map_saxpy"] = [Form("torch", lambda i, o, n: 2 * i[0] + i[1]),
                        Form("torch_out", lambda i, o, n: t.add(i[1], i[0], alpha=2, out=o[0]), ["n"]),
                        Form("torch_compile", lambda i, o, n: sx(i[0], i[1]), compiled=True)]
    l2 = C(lambda x, y: t.sqrt(t.sum((x - y) ** 2)))
    ops["l2dist"] = [Form("torch", lambda i, o, n: t.sqrt(t.sum((i[0] - i[1]) ** 2))),
                     Form("torch_norm", lambda i, o, n: t.linalg.vector_norm(i[0] - i[1])),
                     Form("torch_compile", lambda i, o, n: l2(i[0], i[1]), compiled=True)]
    ops["scan_sum"] = [Form("torch", lambda i, o, n: t.cumsum(i[0], 0)),
                       Form("torch_out", lambda i, o, n: t.cumsum(i[0], 0, out=o[0]), ["n"])]
    ops["select_gt05"] = [Form("torch", lambda i, o, n: i[0][i[0] > 0.5])]
    ops["sum_rows"] = [Form("torch_out", lambda i, o, n: t.sum(i[0], 1, out=o[0]), ["row"])]
    ops["sum_cols"] = [Form("torch_out", lambda i, o, n: t.sum(i[0], 0, out=o[0]), ["col"])]
    ops["fill_f32"] = [Form("torch_out", lambda i, o, n: o[0].fill_(1.5), ["n"])]
    ops["rand_f32"] = [Form("torch_out", lambda i, o, n: o[0].uniform_(), ["n"])]
    lc = C(lambda x, y: ((x - y) ** 2 < 0.25).sum())
    ops["pipeline_l2count"] = [Form("torch", lambda i, o, n: (((i[0] - i[1]) ** 2) < 0.25).sum()),
                               Form("torch_compile", lambda i, o, n: lc(i[0], i[1]), compiled=True)]
    ops["sort_f32"] = [Form("torch", lambda i, o, n: t.sort(i[0])[0])]
    # torch has no CUDA sort of uint32: sort_u32's torch inputs are int32 keys (same width)
    ops["sort_u32"] = [Form("torch", lambda i, o, n: t.sort(i[0])[0])]
    ops["argsort_f32"] = [Form("torch", lambda i, o, n: t.sort(i[0], stable=True)[1]),
                          Form("torch_argsort", lambda i, o, n: t.argsort(i[0], stable=True))]
    ops["sort_rows_f32"] = [Form("torch", lambda i, o, n: t.sort(i[0], dim=-1)[0])]
    ops["hist256_f32"] = [Form("torch", lambda i, o, n: t.histc(i[0], bins=256, min=0, max=1))]

    def pairs(i, o, n):
        k, ix = t.sort(i[0], stable=True)
        return k, i[1][ix]
    ops["sort_pairs_u32"] = [Form("torch", pairs)]
    ops["topk100_f32"] = [Form("torch", lambda i, o, n: t.topk(i[0], 100))]
    ops["unique_i32"] = [Form("torch", lambda i, o, n: t.unique(i[0], sorted=True, return_counts=True))]
    ops["searchsorted_f32"] = [Form("torch", lambda i, o, n: t.searchsorted(i[0], i[1]))]
    ops["concat4"] = [Form("torch", lambda i, o, n: t.cat(i)),
                      Form("torch_out", lambda i, o, n: t.cat(i, out=o[0]), ["n"])]
    # gather_map_f32: ins = (idx i64, table f32); out = table[idx] * 2 (gx fuses the gather)
    gm = compile_fn(t, lambda idx, table: table[idx] * 2)
    ops["gather_map_f32"] = [
        Form("torch_out", lambda i, o, n: t.mul(t.take(i[1], i[0]), 2, out=o[0]), ["n"]),
        Form("torch_index_out", lambda i, o, n: t.mul(t.index_select(i[1], 0, i[0]), 2, out=o[0]), ["n"]),
        Form("torch_compile", lambda i, o, n: gm(i[0], i[1]), compiled=True)]
    # inputs from index_inputs: take (x, idx), scatter (values, idx), where (c, a, b)
    ops["take_f32"] = [Form("torch", lambda i, o, n: t.take(i[0], i[1])),
                       Form("torch_index_select", lambda i, o, n: i[0].index_select(0, i[1])),
                       Form("torch_out", lambda i, o, n: t.index_select(i[0], 0, i[1], out=o[0]), ["n"])]
    ops["scatter_add_f32"] = [
        Form("torch", lambda i, o, n: o[0].zero_().index_add_(0, i[1], i[0]), ["bins"]),
        Form("torch_scatter_add", lambda i, o, n: o[0].zero_().scatter_add_(0, i[1], i[0]), ["bins"])]

    def det(fn):  # torch's deterministic algorithms, for this call only
        def run(i, o, n):
            t.use_deterministic_algorithms(True)
            try:
                return fn(i, o, n)
            finally:
                t.use_deterministic_algorithms(False)
        return run
    ops["index_add_rows_f32"] = [
        Form("torch", lambda i, o, n: o[0].zero_().index_add_(0, i[1], i[0]), ["bins_rows"])]
    ops["scatter_add_det_f32"] = [
        Form("torch_det", det(lambda i, o, n: o[0].zero_().index_add_(0, i[1], i[0])), ["bins"])]
    ops["where_f32"] = [Form("torch", lambda i, o, n: t.where(i[0], i[1], i[2])),
                        Form("torch_out", lambda i, o, n: t.where(i[0], i[1], i[2], out=o[0]), ["n"])]
    return ops


def build_ops_cupy(L):
    cp = L.cp
    ops = {}
    ops["sum"] = [Form("cupy", lambda i, o, n: cp.sum(i[0])),
                  Form("cupy_out", lambda i, o, n: cp.sum(i[0], out=o[0]), ["scalar"])]
    ops["max"] = [Form("cupy", lambda i, o, n: cp.max(i[0]))]
    ops["mean"] = [Form("cupy", lambda i, o, n: cp.mean(i[0]))]
    ops["argmin"] = [Form("cupy", lambda i, o, n: cp.argmin(i[0]))]
    ops["argmax"] = [Form("cupy", lambda i, o, n: cp.argmax(i[0]))]
    ek_map = cp.ElementwiseKernel(
        "float32 x", "float32 y",
        "float s = sin(x); float c = cos(x); y = s * s + c * c;",
        "gxpeer_sin2cos2")
    # cupy.fuse names its kernel after the function: a lambda's "<lambda>" does not compile
    def gxpeer_fuse_sc(x):
        return cp.sin(x) ** 2 + cp.cos(x) ** 2

    def gxpeer_fuse_saxpy(x, y):
        return 2 * x + y

    def gxpeer_fuse_l2(x, y):
        return cp.sqrt(cp.sum((x - y) ** 2))

    fu_map = cp.fuse(gxpeer_fuse_sc)
    ops["map_sin2cos2"] = [Form("cupy", lambda i, o, n: cp.sin(i[0]) ** 2 + cp.cos(i[0]) ** 2),
                           Form("cupy_kernel", lambda i, o, n: ek_map(i[0], o[0]), ["n"]),
                           Form("cupy_fuse", lambda i, o, n: fu_map(i[0]))]
    ek_saxpy = cp.ElementwiseKernel(
        "float32 x, float32 y", "float32 z", "z = 2.0f * x + y", "gxpeer_saxpy")
    fu_saxpy = cp.fuse(gxpeer_fuse_saxpy)
    ops["map_saxpy"] = [Form("cupy", lambda i, o, n: 2 * i[0] + i[1]),
                        Form("cupy_kernel", lambda i, o, n: ek_saxpy(i[0], i[1], o[0]), ["n"]),
                        Form("cupy_fuse", lambda i, o, n: fu_saxpy(i[0], i[1]))]
    rk_l2 = cp.ReductionKernel(
        "float32 x, float32 y", "float32 z", "(x - y) * (x - y)", "a + b",
        "z = sqrt(a)", "0", "gxpeer_l2dist")
    fu_l2 = cp.fuse(gxpeer_fuse_l2)
    ops["l2dist"] = [Form("cupy", lambda i, o, n: cp.sqrt(cp.sum((i[0] - i[1]) ** 2))),
                     Form("cupy_kernel", lambda i, o, n: rk_l2(i[0], i[1])),
                     Form("cupy_fuse", lambda i, o, n: fu_l2(i[0], i[1]))]
    ops["scan_sum"] = [Form("cupy_out", lambda i, o, n: cp.cumsum(i[0], out=o[0]), ["n"])]
    ops["select_gt05"] = [Form("cupy", lambda i, o, n: i[0][i[0] > 0.5])]
    ops["sum_rows"] = [Form("cupy_out", lambda i, o, n: cp.sum(i[0], axis=1, out=o[0]), ["row"])]
    ops["sum_cols"] = [Form("cupy_out", lambda i, o, n: cp.sum(i[0], axis=0, out=o[0]), ["col"])]
    ops["fill_f32"] = [Form("cupy_out", lambda i, o, n: (o[0].fill(1.5), o[0])[1], ["n"])]
    ops["rand_f32"] = [Form("cupy", lambda i, o, n: L.rand(n))]
    rk_cnt = cp.ReductionKernel(
        "float32 x, float32 y", "int64 z", "((x - y) * (x - y) < 0.25f) ? 1 : 0", "a + b",
        "z = a", "0", "gxpeer_l2count")
    ops["pipeline_l2count"] = [Form("cupy", lambda i, o, n: cp.count_nonzero((i[0] - i[1]) ** 2 < 0.25)),
                               Form("cupy_kernel", lambda i, o, n: rk_cnt(i[0], i[1]))]
    ops["sort_f32"] = [Form("cupy", lambda i, o, n: cp.sort(i[0]))]
    ops["sort_u32"] = [Form("cupy", lambda i, o, n: cp.sort(i[0]))]
    ops["argsort_f32"] = [Form("cupy", lambda i, o, n: cp.argsort(i[0]))]  # CuPy's argsort is stable
    ops["sort_rows_f32"] = [Form("cupy", lambda i, o, n: cp.sort(i[0], axis=-1))]
    ops["hist256_f32"] = [Form("cupy", lambda i, o, n: cp.histogram(i[0], bins=256, range=(0.0, 1.0))[0])]

    def pairs(i, o, n):
        ix = cp.argsort(i[0])
        return i[0][ix], i[1][ix]
    ops["sort_pairs_u32"] = [Form("cupy", pairs)]
    # no top-k in CuPy: the whole sort, then the last 100 (a user's form)
    ops["topk100_f32"] = [Form("cupy", lambda i, o, n: cp.sort(i[0])[-100:][::-1])]
    ops["unique_i32"] = [Form("cupy", lambda i, o, n: cp.unique(i[0], return_counts=True))]
    ops["searchsorted_f32"] = [Form("cupy", lambda i, o, n: cp.searchsorted(i[0], i[1]))]
    ops["concat4"] = [Form("cupy", lambda i, o, n: cp.concatenate(i)),
                      Form("cupy_out", lambda i, o, n: cp.concatenate(i, out=o[0]), ["n"])]
    # the best a CuPy user writes: one kernel reading the raw table by index
    ek_gather = cp.ElementwiseKernel("int64 ix, raw float32 table", "float32 y", "y = table[ix] * 2.0f",
                                     "gxpeer_gather")
    ops["gather_map_f32"] = [
        Form("cupy_out", lambda i, o, n: cp.multiply(cp.take(i[1], i[0]), 2, out=o[0]), ["n"]),
        Form("cupy_kernel", lambda i, o, n: ek_gather(i[0], i[1], o[0]), ["n"])]
    import cupyx

    def scat(i, o, n):
        o[0].fill(0)
        cupyx.scatter_add(o[0], i[1], i[0])
        return o[0]
    ops["take_f32"] = [Form("cupy", lambda i, o, n: cp.take(i[0], i[1])),
                       Form("cupy_out", lambda i, o, n: cp.take(i[0], i[1], out=o[0]), ["n"])]
    ops["scatter_add_f32"] = [Form("cupy", scat, ["bins"])]
    ops["where_f32"] = [Form("cupy", lambda i, o, n: cp.where(i[0], i[1], i[2]))]
    return ops


# f32 inputs each op reads (fill and rand read none)
ARITY = {"sum": 1, "max": 1, "mean": 1, "argmin": 1, "argmax": 1, "map_sin2cos2": 1,
         "map_saxpy": 2, "l2dist": 2, "scan_sum": 1, "select_gt05": 1, "sum_rows": 1,
         "sum_cols": 1, "fill_f32": 0, "rand_f32": 0, "pipeline_l2count": 2, "sort_f32": 1,
         "concat4": 4, "gather_map_f32": 2, "take_f32": 3, "scatter_add_f32": 3, "scatter_add_det_f32": 3,
         "index_add_rows_f32": 3, "where_f32": 3, "sort_u32": 1, "argsort_f32": 1, "sort_rows_f32": 1,
         "hist256_f32": 1, "sort_pairs_u32": 2, "topk100_f32": 1, "unique_i32": 1, "searchsorted_f32": 2}
# f32 arrays of n each op writes (for the rotation estimate of forms that allocate)
WRITES = {"map_sin2cos2": 1, "map_saxpy": 1, "scan_sum": 1, "select_gt05": 1,
          "fill_f32": 1, "rand_f32": 1, "sort_f32": 1, "concat4": 1, "gather_map_f32": 1, "take_f32": 1, "where_f32": 1}


INDEX_OPS = ("take_f32", "scatter_add_f32", "scatter_add_det_f32", "index_add_rows_f32", "where_f32")
SORT_OPS = ("sort_u32", "sort_rows_f32", "sort_pairs_u32", "unique_i32", "searchsorted_f32")


def randint(L, n, hi):
    """n int64 indices uniform in [0, hi) on the device."""
    if L.name == "torch":
        return L.t.randint(0, hi, (n,), device=L.dev, dtype=L.t.int64)
    return L.cp.random.randint(0, hi, n, dtype=L.cp.int64)


def index_inputs(L, op, n):
    """The inputs of the indexing ops (as gx bench's: tools/bench_index.c), or None:
    take (x, idx into x), scatter-add (values, idx into 2^20 bins), where (c, a, b)."""
    if op == "take_f32":
        return [L.rand(n), randint(L, n, n)]
    if op in ("scatter_add_f32", "scatter_add_det_f32"):
        return [L.rand(n), randint(L, n, SCAT_BINS)]
    if op == "index_add_rows_f32":  # values (n/16, 16), one index per row into 2^16 rows
        v = L.rand(n // 16 * 16)
        return [v.reshape(n // 16, 16), randint(L, n // 16, SCAT_BINS // 16)]
    if op == "where_f32":
        return [L.rand(n) > 0.5, L.rand(n), L.rand(n)]
    return None


def int_keys(L, n, hi):
    """n integer keys uniform in [0, hi): u32 in CuPy; int32 in torch (no CUDA sort of
    uint32: int32 keys of the same width, over the whole int32 range for hi = 2^32)."""
    if L.name == "torch":
        t = L.t
        lo, top = (-(1 << 31), (1 << 31) - 1) if hi > (1 << 31) else (0, hi)
        return t.randint(lo, top, (n,), device=L.dev, dtype=t.int32)
    cp = L.cp
    return cp.random.randint(0, hi, n, dtype=cp.int64).astype(cp.uint32 if hi > (1 << 31) else cp.int32)


def sort_inputs(L, op, n):
    """gx bench's sorting inputs (tools/bench_sort.c), or None: u32 keys (pairs: and u32
    values, the positions), rows of 1024, i32 keys in [0, 2^16), a sorted haystack and
    needles."""
    if op == "sort_u32":
        return [int_keys(L, n, 1 << 32)]
    if op == "sort_pairs_u32":
        pos = L.t.arange(n, device=L.dev, dtype=L.t.int32) if L.name == "torch" else \
            L.cp.arange(n, dtype=L.cp.uint32)
        return [int_keys(L, n, 1 << 32), pos]
    if op == "sort_rows_f32":
        return [L.rand(max(n, 1024)).reshape(-1, 1024)]
    if op == "unique_i32":
        return [int_keys(L, n, 1 << 16)]
    if op == "searchsorted_f32":
        hay = L.t.sort(L.rand(n))[0] if L.name == "torch" else L.cp.sort(L.rand(n))
        return [hay, L.rand(n)]
    return None


def as_float(L, v):
    return float(v.item()) if hasattr(v, "item") else float(v)


def f64(L, a):
    return a.double() if L.name == "torch" else a.astype("float64")


def maxabs(L, a):
    return as_float(L, abs(a).max())


def verify(L, op, ins, out, n):
    """(ok, extra fields): the result against a float64 reference computed with the
    same library from the same inputs."""
    extra = {}
    x = ins[0] if ins else None
    xd = f64(L, x) if x is not None else None
    if op in ("sum", "mean"):
        ref = as_float(L, xd.sum()) / (n if op == "mean" else 1)
        ok = close(as_float(L, out), ref, 1e-4)
    elif op == "max":
        ok = as_float(L, out) == as_float(L, x.max())
    elif op in ("argmin", "argmax"):
        j = int(as_float(L, out))
        ok = as_float(L, x[j]) == as_float(L, x.min() if op == "argmin" else x.max())
    elif op == "map_sin2cos2":
        ok = maxabs(L, f64(L, out) - 1) < 1e-5
    elif op == "map_saxpy":
        ok = maxabs(L, f64(L, out) - (2 * xd + f64(L, ins[1]))) < 1e-5
    elif op == "l2dist":
        ref = as_float(L, ((xd - f64(L, ins[1])) ** 2).sum()) ** 0.5
        ok = close(as_float(L, out), ref, 1e-4)
    elif op == "scan_sum":
        ok = close(as_float(L, out[-1]), as_float(L, xd.sum()), 1e-3) and \
            close(as_float(L, out[n // 2]), as_float(L, xd[: n // 2 + 1].sum()), 1e-3)
    elif op == "select_gt05":
        kept = int(out.shape[0])
        extra["kept"] = kept
        ok = kept == int(as_float(L, (x > 0.5).sum())) and bool(as_float(L, (out > 0.5).all()))
    elif op in ("sum_rows", "sum_cols"):
        ref = xd.sum(1 if op == "sum_rows" else 0)
        ok = maxabs(L, f64(L, out) - ref) <= 1e-5 * max(1.0, maxabs(L, ref))
    elif op == "fill_f32":
        ok = as_float(L, out.min()) == 1.5 and as_float(L, out.max()) == 1.5
    elif op == "rand_f32":
        # uniform on [0, 1): in range, mean within 6 sigma of 1/2
        m = as_float(L, f64(L, out).mean())
        ok = as_float(L, out.min()) >= 0 and as_float(L, out.max()) < 1 and \
            abs(m - 0.5) <= 6 * (1 / 12) ** 0.5 / n ** 0.5
    elif op == "pipeline_l2count":
        ref = int(as_float(L, (((xd - f64(L, ins[1])) ** 2) < 0.25).sum()))
        ok = abs(int(as_float(L, out)) - ref) <= max(1, n // 10**6)  # f32 vs f64 at the edge
    elif op == "concat4":
        q = n // 4
        ok = all(as_float(L, out[k * q + j]) == as_float(L, ins[k][j])
                 for k in range(4) for j in (0, q // 2, q - 1))
        ok = ok and close(as_float(L, f64(L, out).sum()),
                          sum(as_float(L, f64(L, a).sum()) for a in ins), 1e-9)
    elif op == "gather_map_f32":
        idx, table = ins
        ref = table.take(idx) * 2 if L.name == "cupy" else L.t.take(table, idx) * 2
        ok = maxabs(L, f64(L, out) - f64(L, ref)) == 0
    elif op == "take_f32":
        idx = ins[1]
        ok = all(as_float(L, out[j]) == as_float(L, x[int(as_float(L, idx[j]))]) for j in (0, n // 3, n - 1))
        ok = ok and close(as_float(L, f64(L, out).sum()), as_float(L, f64(L, x[idx]).sum()), 1e-9)
    elif op in ("scatter_add_f32", "scatter_add_det_f32"):
        if L.name == "torch":
            ref = L.t.bincount(ins[1], weights=xd, minlength=SCAT_BINS)
        else:
            ref = L.cp.bincount(ins[1], weights=xd, minlength=SCAT_BINS)
        ok = maxabs(L, f64(L, out) - ref) <= 1e-4 * max(1.0, maxabs(L, ref))
    elif op == "index_add_rows_f32" and L.name == "torch":  # the sum over all bins is the values' sum
        ok = close(as_float(L, f64(L, out).sum()), as_float(L, xd.sum()), 1e-6)
    elif op == "where_f32":
        lib = L.t if L.name == "torch" else L.cp
        ok = bool(as_float(L, (out == lib.where(ins[0], ins[1], ins[2])).all()))
    elif op in ("sort_f32", "sort_u32"):
        ok = bool(as_float(L, (out[1:] >= out[:-1]).all()))
        extra["elems"] = n
    elif op == "sort_rows_f32":
        ok = bool(as_float(L, (out[:, 1:] >= out[:, :-1]).all()))
        extra["elems"] = n
    elif op == "argsort_f32":
        v = x[out]
        ok = bool(as_float(L, ((v[1:] > v[:-1]) | ((v[1:] == v[:-1]) & (out[1:] > out[:-1]))).all()))
        extra["elems"] = n
    elif op == "hist256_f32":
        lib = L.t if L.name == "torch" else L.cp
        want = lib.floor(xd * 256).clamp(0, 255) if L.name == "torch" else lib.clip(lib.floor(xd * 256), 0, 255)
        ref = (lib.bincount(want.long(), minlength=256) if L.name == "torch"
               else lib.bincount(want.astype(lib.int64), minlength=256))
        # histc's float edges may move a value at a bin edge by one bin: the total is exact
        ok = as_float(L, f64(L, out).sum()) == n and maxabs(L, f64(L, out) - f64(L, ref)) <= max(2, n // 10**5)
        extra["elems"] = n
    elif op == "sort_pairs_u32":
        k, v = out
        ok = bool(as_float(L, (k[1:] >= k[:-1]).all())) and bool(as_float(L, (x[v.long() if L.name == "torch"
                                                                               else v] == k).all()))
        extra["elems"] = n
    elif op == "topk100_f32":
        vals = out[0] if L.name == "torch" else out
        ref = (L.t.sort(x, descending=True)[0][:100] if L.name == "torch" else L.cp.sort(x)[::-1][:100])
        ok = maxabs(L, f64(L, vals) - f64(L, ref)) == 0
        extra["elems"] = n
    elif op == "unique_i32":
        u, c = out
        ok = int(as_float(L, c.sum())) == n and bool(as_float(L, (u[1:] > u[:-1]).all()))
        extra["elems"] = n
    elif op == "searchsorted_f32":
        hay, nd = ins
        p = out.long() if L.name == "torch" else out
        lo_ok = (p == 0) | (hay[(p - 1).clamp(min=0) if L.name == "torch" else L.cp.maximum(p - 1, 0)] < nd)
        ok = bool(as_float(L, lo_ok.all()))
        extra["elems"] = n
    else:
        ok = None
    return ok, extra


def op_bytes(op, n, extra):
    f = 4
    return {
        "sum": n * f, "max": n * f, "mean": n * f, "argmin": n * f, "argmax": n * f,
        "map_sin2cos2": 2 * n * f, "map_saxpy": 3 * n * f, "l2dist": 2 * n * f,
        "scan_sum": 2 * n * f, "select_gt05": n * f + extra.get("kept", 0) * f,
        "sum_rows": n * f, "sum_cols": n * f, "fill_f32": n * f, "rand_f32": n * f,
        "pipeline_l2count": 2 * n * f, "sort_f32": 0, "concat4": 2 * n * f,
        "gather_map_f32": 16 * n,  # idx (8n), the table once on average (4n), out (4n): as gx counts
        "take_f32": 16 * n, "scatter_add_f32": 12 * n + 8 * SCAT_BINS,
        "scatter_add_det_f32": 12 * n + 8 * SCAT_BINS, "where_f32": 13 * n,
    }.get(op, 0)  # the sorting ops: 0, as sort_f32


def alloc(L, shape):
    if L.name == "torch":
        return L.t.empty(shape, device=L.dev, dtype=L.t.float32)
    return L.cp.empty(shape, dtype=L.cp.float32)


def run_form(L, op, n, form, pool, k, args):
    """Checks one form's result, then times it; emits its line."""
    outs = [[alloc(L, out_shape(op, n, w)) for w in form.outs] for _ in range(k)]
    extra = {}
    if form.compiled:  # the first call compiles: timed on its own
        t0 = time.perf_counter()
        form.fn(pool[0], outs[0], n)
        L.sync()
        extra["compile_s"] = round(time.perf_counter() - t0, 3)
    ok, more = verify(L, op, pool[0], form.fn(pool[0], outs[0], n), n)
    extra.update(more)
    if ok is False:
        note(f"WARNING {form.impl}: {op} n={n}: wrong result")
    med, mn, reps, warm = time_calls(L, lambda i: form.fn(pool[i % k], outs[i % k], n), args)
    # A form that makes a new array each call is the peer of gx's allocating case
    # where gx has one (map_saxpy_new, scan_sum_new); out= forms of the plain case.
    name = op + "_new" if op in ("map_saxpy", "scan_sum") and not form.outs else op
    rec = {"impl": form.impl, "op": name, "dtype": "f32", "n": n,
           "median_us": round(med, 3), "bytes": op_bytes(op, n, extra),
           "flops": 0, "min_us": round(mn, 3), "reps": reps,
           "warmup": warm, "rot": k, "ok": ok}
    rec.update(extra)
    emit(rec)


def run_lib(L, ops, sizes, gemms, args):
    wanted = set(args.ops.split(",")) if args.ops else set(ALL_OPS)
    for n in sizes:
        for op in ALL_OPS:
            if op == "sgemm" or op not in wanted or op not in ops:
                continue
            arity = ARITY[op]
            # inputs and the array written (the outputs of out= forms rotate too)
            set_bytes = (arity * math.prod(in_shape(op, n)) + WRITES.get(op, 0) * n) * 4
            k = rot_count(L.l2, set_bytes)
            try:
                if op == "gather_map_f32":  # (idx, table): i64 indices rotate, one table, as gx's case
                    table = L.rand(n)
                    pool = [[L.randint(n), table] for _ in range(k)]
                elif op in INDEX_OPS:
                    pool = [index_inputs(L, op, n) for _ in range(k)]
                elif op in SORT_OPS:
                    pool = [sort_inputs(L, op, n) for _ in range(k)]
                else:
                    pool = [[L.rand(math.prod(in_shape(op, n))).reshape(in_shape(op, n)) for _ in range(arity)]
                            for _ in range(k)]
            except Exception as e:  # out of memory and the like
                note(f"note {L.name}: {op} n={n}: could not allocate inputs: {e}")
                L.free()
                continue
            for form in ops[op]:
                try:
                    run_form(L, op, n, form, pool, k, args)
                except Exception as e:
                    note(f"note {form.impl}: {op} n={n} failed: {type(e).__name__}: {e}")
                    L.free()
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


def half_form(t, op):
    """gx bench's f16 cases (tools/bench_half.c) in PyTorch eager, as (impl, function)
    pairs: the sum with an f32 result (an f16 sum of 2^28 values in [0, 1) overflows),
    sin^2+cos^2 into an f16 out=, and two eager forms of the l2 distance:
    torch.linalg.vector_norm(x - y) (the best: x - y materialised in f16, then one
    norm kernel) and sqrt(sum((x - y)**2)) as written in the f32 peers ("torch_expr":
    three kernels; the f32 sum keeps 2^28 squares from overflowing f16)."""
    if op == "sum_f16":
        return [("torch", lambda i, o: t.sum(i[0], dtype=t.float32))]
    if op == "map_sin2cos2_f16":
        return [("torch", lambda i, o: t.add(t.sin(i[0]) ** 2, t.cos(i[0]) ** 2, out=o))]
    return [("torch", lambda i, o: t.linalg.vector_norm(i[0] - i[1])),
            ("torch_expr", lambda i, o: t.sqrt(t.sum((i[0] - i[1]) ** 2, dtype=t.float32)))]


def half_ok(L, op, ins, out):
    t = L.t
    x = ins[0].double()
    if op == "sum_f16":
        return close(as_float(L, out), as_float(L, x.sum()), 1e-4)
    if op == "map_sin2cos2_f16":
        return maxabs(L, out.double() - 1) <= 2 ** -10
    return close(as_float(L, out), as_float(L, ((x - ins[1].double()) ** 2).sum()) ** 0.5, 2e-3)


def run_half(L, sizes, gemms, args, wanted):
    """torch f16 / bf16 peers of gx bench's bench_half.c cases, and torch.matmul on
    f16 / bf16 (f32 accumulation: cuBLAS; reduced-precision reductions left off so the
    accumulation matches gx's)."""
    t = L.t
    try:
        t.backends.cuda.matmul.allow_fp16_reduced_precision_reduction = False
        t.backends.cuda.matmul.allow_bf16_reduced_precision_reduction = False
    except Exception:
        pass
    for n in sizes:
        for op in HALF_OPS:
            if op not in wanted:
                continue
            arity = 2 if op == "l2dist_f16" else 1
            k = rot_count(L.l2, (arity + (1 if op == "map_sin2cos2_f16" else 0)) * n * 2)
            try:
                pool = [[L.rand(n).half() for _ in range(arity)] for _ in range(k)]
                outs = [t.empty(n, device=L.dev, dtype=t.float16) for _ in range(k)]
                for impl, fn in half_form(t, op):
                    ok = half_ok(L, op, pool[0], fn(pool[0], outs[0]))
                    if not ok:
                        note(f"WARNING {impl}: {op} n={n}: wrong result")
                    med, mn, reps, warm = time_calls(L, lambda i, fn=fn: fn(pool[i % k], outs[i % k]), args)
                    nbytes = {"sum_f16": 2 * n, "map_sin2cos2_f16": 4 * n, "l2dist_f16": 4 * n}[op]
                    emit({"impl": impl, "op": op, "dtype": "f16", "n": n, "median_us": round(med, 3),
                          "bytes": nbytes, "flops": 0, "min_us": round(mn, 3), "reps": reps, "warmup": warm,
                          "rot": k, "ok": ok})
                del pool, outs
            except Exception as e:
                note(f"note torch: {op} n={n} failed: {type(e).__name__}: {e}")
            L.free()
    for op, dt in (("gemm_f16", t.float16), ("gemm_bf16", t.bfloat16)):
        if op not in wanted:
            continue
        for m in gemms:
            try:
                a, b = L.rand(m * m).reshape(m, m).to(dt), L.rand(m * m).reshape(m, m).to(dt)
                mm = lambda i: a @ b  # noqa: E731
                c = mm(0)
                rows = [0, m // 3, m - 1]
                ref = a[rows].double() @ b.double()
                err = as_float(L, (abs(c[rows].double() - ref) / ref).max())
                ok = err < (2e-3 if dt == t.float16 else 1.6e-2)
                if not ok:
                    note(f"WARNING torch: {op} m={m}: max rel err {err:.3g}")
                del c, ref
                med, mn, reps, warm = time_calls(L, mm, args)
                emit({"impl": "torch", "op": op, "dtype": "f16" if dt == t.float16 else "bf16", "n": m,
                      "median_us": round(med, 3), "bytes": 0, "flops": 2 * m ** 3, "min_us": round(mn, 3),
                      "reps": reps, "warmup": warm, "rot": 1, "ok": ok, "m": m, "k": m})
                del a, b
            except Exception as e:
                note(f"note torch: {op} m={m} failed: {type(e).__name__}: {e}")
            L.free()


LAT_OPS = ("lat_sum_to_host", "lat_scan_sync", "lat_filter_new", "lat_map_sync")
DEFAULT_LAT_SIZES = "10,16,20"


def run_latency_torch(torch, sizes, args):
    """gx bench's lat_* cases in torch: one call until its result is usable on the host,
    timed with the host clock (perf_counter) around the call and its wait, median of
    --reps after --warmup calls; each result checked.  x.sum().item();
    torch.cumsum(out=) + synchronize; x[x > 0.5] + synchronize; torch.add(x, x, out=)
    + synchronize (one elementwise kernel, as gx's map is)."""
    dev = torch.device("cuda")
    sync = torch.cuda.synchronize
    for n in sizes:
        x = torch.rand(n, device=dev, dtype=torch.float32)
        o = torch.empty_like(x)
        x64 = x.double()
        ref_sum = float(x64.sum())
        ref_cnt = int((x > 0.5).sum())
        res = {}

        def f_sum():
            res["v"] = x.sum().item()

        def f_scan():
            torch.cumsum(x, 0, out=o)
            sync()

        def f_filter():
            res["v"] = x[x > 0.5]
            sync()

        def f_map():
            torch.add(x, x, out=o)
            sync()

        def ok_of(op):
            if op == "lat_sum_to_host":
                return abs(res["v"] - ref_sum) <= 1e-5 * (1 + abs(ref_sum))
            if op == "lat_scan_sync":
                ref = torch.cumsum(x64, 0)  # f32 running sums: relative to the largest prefix
                return float((o.double() - ref).abs().max()) <= 1e-3 * max(1.0, float(ref.abs().max()))
            if op == "lat_filter_new":
                return res["v"].numel() == ref_cnt and bool((res["v"] > 0.5).all())
            return bool(torch.equal(o, x * 2))

        fns = {"lat_sum_to_host": f_sum, "lat_scan_sync": f_scan, "lat_filter_new": f_filter,
               "lat_map_sync": f_map}
        for op, fn in fns.items():
            for _ in range(max(1, args.warmup)):
                fn()
            sync()
            ts = []
            for _ in range(args.reps):
                t0 = time.perf_counter()
                fn()
                ts.append(1e6 * (time.perf_counter() - t0))
            emit({"impl": "torch", "op": op, "dtype": "f32", "n": n, "median_us": median(ts),
                  "bytes": 8 * n, "flops": 0, "min_us": min(ts), "reps": args.reps,
                  "warmup": args.warmup, "rot": 1, "ok": ok_of(op), "clock": "host"})
        del x, o, x64
        res.clear()
        torch.cuda.empty_cache()


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
    ap.add_argument("--latency", nargs="?", const=DEFAULT_LAT_SIZES, default="",
                    help="only the one-call-to-host-result cases (torch: " + ", ".join(LAT_OPS) +
                    ") at these sizes (default " + DEFAULT_LAT_SIZES + ")")
    args = ap.parse_args()
    if args.latency:
        import torch
        emit({"impl": "meta", "lib": "torch", "version": torch.__version__, "cuda": torch.version.cuda,
              "device": torch.cuda.get_device_properties(0).name})
        run_latency_torch(torch, parse_sizes(args.latency), args)
        return
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
            run_half(L, sizes, gemms, args, set(args.ops.split(",")) if args.ops else set(ALL_OPS))
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
