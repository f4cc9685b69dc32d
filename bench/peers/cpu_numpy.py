#!/usr/bin/env python3
"""NumPy peer of `gx bench` on the CPU backend (scripts/bench-cpu runs it).

Usage: python3 bench/peers/cpu_numpy.py [--sizes 10,16,20,24] [--reps 30]
           [--filter S] [--max-seconds 10] > numpy.jsonl

Like gx bench: the same inputs (bench_bits in tools/bench_cases.h: splitmix64's
output function over a counter; f32 = top 24 bits / 2^24, uniform in [0, 1)), case
names, byte counts (the fewest bytes the work must move) and "check" (the result, or
the f64 sum of the result array), the same work (l2dist includes its sqrt; the iota
case hashes each index, as gx's iota_hash_sum_i64), and the same timing: the median
wall time of one call (time.perf_counter_ns around it, its result ready on return)
over --reps runs after 3 warm-ups, the inputs and the outputs written with out=
rotated through copies as gx bench rotates them (ceil(4 x the last-level cache / the
working set) copies, at most 64).

Each case is the fastest correct NumPy form into an existing array (out=), and the
*_new cases the plain expression that makes a new array.  l2dist is np.dot of the
difference (OpenBLAS, which may use several threads): faster than np.sum((x-y)**2).
One JSON line per row, impl "numpy", after a {"impl":"meta"} line.
"""

import argparse
import functools
import json
import math
import subprocess
import sys
import time

import numpy as np

MAXROT = 64
WARMUPS = 3
CHUNK = 1 << 22  # elements generated at a time: bounds the uint64 temporaries


# ------------------------------------------------------------------ inputs --
def bench_bits(lo, hi, seed):
    """gx bench's bench_bits(seed, i) for i in [lo, hi), as uint64 (wrapping)."""
    with np.errstate(over="ignore"):
        z = np.arange(lo, hi, dtype=np.uint64)
        z += np.uint64(((seed << 40) + 0x9E3779B97F4A7C15) & 0xFFFFFFFFFFFFFFFF)
        z ^= z >> np.uint64(30)
        z *= np.uint64(0xBF58476D1CE4E5B9)
        z ^= z >> np.uint64(27)
        z *= np.uint64(0x94D049BB133111EB)
        z ^= z >> np.uint64(31)
    return z


@functools.lru_cache(maxsize=4)
def data(n, seed, dtype="f32"):
    """gx bench's inputs of seed: f32 in [0, 1), or i32 in 0..1023."""
    out = np.empty(n, dtype=np.float32 if dtype == "f32" else np.int32)
    for lo in range(0, n, CHUNK):
        z = bench_bits(lo, min(n, lo + CHUNK), seed)
        if dtype == "f32":
            out[lo:lo + len(z)] = (z >> np.uint64(40)).astype(np.float32) * np.float32(2.0 ** -24)
        else:
            out[lo:lo + len(z)] = (z >> np.uint64(54)).astype(np.int32)
    out.flags.writeable = False  # shared between cases: none may write it
    return out


@functools.lru_cache(maxsize=1)
def llc_bytes():
    """The last-level cache as gx sees it (glibc's sysconf, through getconf)."""
    for name in ("LEVEL3_CACHE_SIZE", "LEVEL2_CACHE_SIZE"):
        try:
            v = int(subprocess.run(["getconf", name], capture_output=True, text=True).stdout.strip() or 0)
        except (OSError, ValueError):
            v = 0
        if v > 0:
            return v
    return 0


def rot_count(set_bytes):
    """gx bench's bench_rot_count: ceil(4 llc / set) copies, at most 64, so that runs do
    not find their data in the cache."""
    llc = llc_bytes()
    if llc <= 0 or set_bytes <= 0:
        return 1
    return max(1, min(MAXROT, math.ceil(4.0 * llc / set_bytes)))


def rotated(x, set_bytes, k=None):
    """x and copies of it: rot_count(set_bytes) arrays in all (or k)."""
    return [x] + [x.copy() for _ in range((k or rot_count(set_bytes)) - 1)]


def outputs(n, k, dtype=np.float32):
    """k output arrays of n elements, every page written (as gx's are)."""
    return [np.full(n, np.nan, dtype) for _ in range(k)]


def matrix_shape(n):
    """gx bench's matrix of n elements: rows a power of two, as square as it goes."""
    side = 1
    while (side * 2) * (side * 2) <= n:
        side *= 2
    return side, n // side


def f64sum(a):
    return float(np.sum(a, dtype=np.float64))


# ------------------------------------------------------------------- cases --
class Case:
    """What one row times: call(k) runs once on the k-th rotated copy; bytes() and
    check() are read after the timed runs (select's bytes count what it kept)."""

    def __init__(self, call, nrot, bytes_, check, elems=0.0):
        self.call, self.nrot, self.bytes, self.check, self.elems = call, nrot, bytes_, check, elems


def case_copy(n, seed):
    xs = rotated(data(n, seed), 8.0 * n)
    os_, last = outputs(n, len(xs)), {}

    def call(k):
        np.copyto(os_[k], xs[k])
        last["o"] = os_[k]
    return Case(call, len(xs), lambda: 8.0 * n, lambda: f64sum(last["o"]))


def case_sin2cos2(n):
    xs = rotated(data(n, 11), 8.0 * n)
    os_, t, last = outputs(n, len(xs)), np.zeros(n, np.float32), {}

    def call(k):
        x, o = xs[k], os_[k]
        np.sin(x, out=o)
        np.square(o, out=o)
        np.cos(x, out=t)
        np.square(t, out=t)
        np.add(o, t, out=o)
        last["o"] = o
    return Case(call, len(xs), lambda: 8.0 * n, lambda: f64sum(last["o"]))


def case_saxpy(n):
    xs = rotated(data(n, 11), 12.0 * n)
    ys = rotated(data(n, 12), 12.0 * n, len(xs))
    os_, two, last = outputs(n, len(xs)), np.float32(2), {}

    def call(k):
        o = os_[k]
        np.multiply(xs[k], two, out=o)
        np.add(o, ys[k], out=o)
        last["o"] = o
    return Case(call, len(xs), lambda: 12.0 * n, lambda: f64sum(last["o"]))


def case_saxpy_new(n):
    """A new result each call: the inputs rotate, the result is the block just freed."""
    xs = rotated(data(n, 11), 8.0 * n)
    ys, last = rotated(data(n, 12), 8.0 * n, len(xs)), {}

    def call(k):
        last["o"] = 2 * xs[k] + ys[k]
    return Case(call, len(xs), lambda: 12.0 * n, lambda: f64sum(last["o"]))


def case_reduce(n, method, dtype="f32"):
    """x.method() over rotated copies of gx's reduction inputs (seed 21; i32: 20)."""
    xs, last = rotated(data(n, 21 if dtype == "f32" else 20, dtype), 4.0 * n), {}

    def call(k):
        last["v"] = getattr(xs[k], method)()
    return Case(call, len(xs), lambda: 4.0 * n, lambda: float(last["v"]))


def case_l2dist(n):
    """sqrt(sum((x - y)^2)), the sqrt included as gx bench times it: np.dot of the
    difference."""
    xs, ys = rotated(data(n, 21), 8.0 * n), rotated(data(n, 22), 8.0 * n)
    t, last = np.zeros(n, np.float32), {}

    def call(k):
        np.subtract(xs[k], ys[k], out=t)
        last["v"] = np.sqrt(np.dot(t, t))
    return Case(call, len(xs), lambda: 8.0 * n, lambda: float(last["v"]))


def case_axis(n, axis):
    rows, cols = matrix_shape(n)
    xs = rotated(data(rows * cols, 23), 4.0 * n)
    xs = [x.reshape(rows, cols) for x in xs]
    os_, last = outputs(rows if axis == 1 else cols, len(xs)), {}

    def call(k):
        last["o"] = np.sum(xs[k], axis=axis, out=os_[k])
    return Case(call, len(xs), lambda: 4.0 * n, lambda: f64sum(last["o"]))


def case_scan(n):
    xs = rotated(data(n, 21), 8.0 * n)
    os_ = [np.zeros(n, np.float32) for _ in xs]
    last = {}

    def call(k):
        last["o"] = np.cumsum(xs[k], out=os_[k])
    return Case(call, len(xs), lambda: 8.0 * n, lambda: f64sum(last["o"]))


def case_scan_new(n):
    xs, last = rotated(data(n, 21), 4.0 * n), {}

    def call(k):
        last["o"] = np.cumsum(xs[k])
    return Case(call, len(xs), lambda: 8.0 * n, lambda: f64sum(last["o"]))


def case_select(n):
    xs, last = rotated(data(n, 22), 4.0 * n), {}

    def call(k):
        x = xs[k]
        last["o"] = x[x > np.float32(0.5)]
    return Case(call, len(xs), lambda: 4.0 * n + 4.0 * last["o"].size, lambda: f64sum(last["o"]))


def case_iota(n):
    """gx bench's iota_hash_sum_i64: the sum of i -> (i ^ (i >> 7)) * 2654435761 % 1000
    in i64 (the product wraps, as gx's integers do), in blocks of CHUNK indices so the
    temporaries stay in the cache.  n is already gx bench's 2n: its iota pipelines run
    at twice the size."""
    last = {}
    mul, mod = np.int64(2654435761), np.int64(1000)

    def call(k):
        s = 0
        with np.errstate(over="ignore"):
            for lo in range(0, n, CHUNK):
                i = np.arange(lo, min(n, lo + CHUNK), dtype=np.int64)
                h = i >> 7
                h ^= i
                h *= mul
                np.fmod(h, mod, out=h)  # C's %, truncating: the product may wrap negative
                s += int(h.sum())
        last["v"] = s
    return Case(call, 1, lambda: 0.0, lambda: float(last["v"]), elems=float(n))


def bench_idx(n, seed, mod):
    """gx bench's index arrays (tools/bench_index.c): bench_bits(seed, i) % mod as int64."""
    out = np.empty(n, dtype=np.int64)
    for lo in range(0, n, CHUNK):
        z = bench_bits(lo, min(n, lo + CHUNK), seed)
        out[lo:lo + len(z)] = (z % np.uint64(mod)).astype(np.int64)
    return out


def case_take(n):
    """gx bench's take_f32: np.take(x, idx), x of seed 51, idx of seed 52 into x."""
    x, idx, last = data(n, 51), bench_idx(n, 52, n), {}

    def call(k):
        last["o"] = np.take(x, idx)
    return Case(call, 1, lambda: 16.0 * n, lambda: f64sum(last["o"]))


SCAT_BINS = 1 << 20


def case_scatter_add(n):
    """gx bench's scatter_add_f32 (and _det: NumPy is always in index order):
    bins zeroed, then np.add.at(bins, idx, values)."""
    v, idx, bins = data(n, 53), bench_idx(n, 54, SCAT_BINS), np.zeros(SCAT_BINS, np.float32)

    def call(k):
        bins.fill(0)
        np.add.at(bins, idx, v)
    return Case(call, 1, lambda: 12.0 * n + 8.0 * SCAT_BINS, lambda: f64sum(bins))


def case_where(n):
    """gx bench's where_f32: np.where(c, a, b), c = (inputs of seed 55) > 0.5."""
    c, a, b, last = data(n, 55) > np.float32(0.5), data(n, 56), data(n, 57), {}

    def call(k):
        last["o"] = np.where(c, a, b)
    return Case(call, 1, lambda: 13.0 * n, lambda: f64sum(last["o"]))


def seg_mix(z):
    """splitmix64 of uint64 array z (tools/bench_segment.c's seg_mix)."""
    with np.errstate(over="ignore"):
        z = z + np.uint64(0x9e3779b97f4a7c15)
        z = (z ^ (z >> np.uint64(30))) * np.uint64(0xbf58476d1ce4e5b9)
        z = (z ^ (z >> np.uint64(27))) * np.uint64(0x94d049bb133111eb)
        return z ^ (z >> np.uint64(31))


def case_segsum(n):
    """gx bench's segsum_f32: 2^20 segments of random lengths (never empty, as
    np.add.reduceat needs), x of seed 43; np.add.reduceat into an existing array."""
    nseg = 1 << 20
    if nseg > n // 2:
        nseg = max(1, n // 2)
    avg = n // nseg
    s_ = np.arange(1, nseg, dtype=np.uint64)
    o = np.empty(nseg, dtype=np.int64)
    o[0] = 0
    o[1:] = s_.astype(np.int64) * avg + (seg_mix(s_) % np.uint64(avg)).astype(np.int64) - avg // 2
    x, out = data(n, 43), np.empty(nseg, np.float32)

    def call(k):
        np.add.reduceat(x, o, out=out)
    return Case(call, 1, lambda: 4.0 * n + 12.0 * nseg, lambda: f64sum(out))


def case_concat4(n):
    """gx bench's concat4: four quarters of x (seed 41) concatenated into an array."""
    n -= n % 4
    x, q, out = data(n, 41), n // 4, np.empty(n - n % 4, np.float32)
    parts = [x[j * q:(j + 1) * q] for j in range(4)]

    def call(k):
        np.concatenate(parts, out=out)
    return Case(call, 1, lambda: 8.0 * n, lambda: f64sum(out))


def data_u32(n, seed):
    """gx bench's sort_u32 inputs: the top 32 bits of bench_bits(seed, i)."""
    out = np.empty(n, dtype=np.uint32)
    for lo in range(0, n, CHUNK):
        z = bench_bits(lo, min(n, lo + CHUNK), seed)
        out[lo:lo + len(z)] = (z >> np.uint64(32)).astype(np.uint32)
    return out


def case_sort(n, dtype="f32", rowlen=0):
    """gx bench's sort_f32 / sort_u32 / sort_rows_f32 (rows of rowlen): np.sort along
    the last axis (its default quicksort: the fastest NumPy sort, SIMD where the CPU
    has it) into a new array, inputs of seed 51 rotated as gx's."""
    x = data(n, 51) if dtype == "f32" else data_u32(n, 51)
    if rowlen:
        x = x.reshape(-1, rowlen)
    xs, last = rotated(x, 8.0 * n), {}

    def call(k):
        last["o"] = np.sort(xs[k], axis=-1)
    return Case(call, len(xs), lambda: 8.0 * n, lambda: f64sum(last["o"]))


def case_argsort(n):
    """gx bench's argsort_f32 (stable): np.argsort(kind="stable"), int64 positions."""
    xs, last = rotated(data(n, 51), 12.0 * n), {}

    def call(k):
        last["o"] = np.argsort(xs[k], kind="stable")
    return Case(call, len(xs), lambda: 12.0 * n, lambda: f64sum(last["o"]))


def case_hist256(n):
    """gx bench's hist256_f32: np.histogram(x, 256, (0, 1)) counts."""
    xs, last = rotated(data(n, 51), 4.0 * n), {}

    def call(k):
        last["o"] = np.histogram(xs[k], bins=256, range=(0.0, 1.0))[0]
    return Case(call, len(xs), lambda: 4.0 * n, lambda: f64sum(last["o"]))


# (name, dtype, size factor, maker): gx bench's cases, in its order.
CASES = [
    ("copy", "f32", 1, lambda n: case_copy(n, 1)),
    ("h2d", "f32", 1, lambda n: case_copy(n, 31)),
    ("d2h", "f32", 1, lambda n: case_copy(n, 32)),
    ("map_sin2cos2", "f32", 1, case_sin2cos2),
    ("map_saxpy", "f32", 1, case_saxpy),
    ("map_saxpy_new", "f32", 1, case_saxpy_new),
    ("sum", "f32", 1, lambda n: case_reduce(n, "sum")),
    ("sum", "i32", 1, lambda n: case_reduce(n, "sum", "i32")),
    ("max", "f32", 1, lambda n: case_reduce(n, "max")),
    ("argmin", "f32", 1, lambda n: case_reduce(n, "argmin")),
    ("argmax", "f32", 1, lambda n: case_reduce(n, "argmax")),
    ("mean", "f32", 1, lambda n: case_reduce(n, "mean")),
    ("l2dist", "f32", 1, case_l2dist),
    ("sum_rows", "f32", 1, lambda n: case_axis(n, 1)),
    ("sum_cols", "f32", 1, lambda n: case_axis(n, 0)),
    ("scan_sum", "f32", 1, case_scan),
    ("scan_sum_new", "f32", 1, case_scan_new),
    ("select_gt05", "f32", 1, case_select),
    ("iota_hash_sum_i64", "i64", 2, case_iota),
    ("take_f32", "f32", 1, case_take),
    ("scatter_add_f32", "f32", 1, case_scatter_add),
    ("scatter_add_det_f32", "f32", 1, case_scatter_add),
    ("where_f32", "f32", 1, case_where),
    ("segsum_f32", "f32", 1, case_segsum),
    ("concat4", "f32", 1, case_concat4),
    ("sort_f32", "f32", 1, case_sort),
    ("sort_u32", "u32", 1, lambda n: case_sort(n, "u32")),
    ("argsort_f32", "f32", 1, case_argsort),
    ("sort_rows_f32", "f32", 1, lambda n: case_sort(max(n, 1024), "f32", 1024)),
    ("hist256_f32", "f32", 1, case_hist256),
]


# ------------------------------------------------------------------ timing --
def time_calls(case, reps, max_s):
    """(median µs, runs): after the warm-ups, a call slower than max_s / reps gets
    fewer runs, at least 3."""
    i = 0
    t0 = time.perf_counter_ns()
    for _ in range(WARMUPS):
        case.call(i % case.nrot)
        i += 1
    per = (time.perf_counter_ns() - t0) / WARMUPS / 1e9
    if per * reps > max_s:
        reps = max(3, int(max_s / per))
    ts = []
    for _ in range(reps):
        k = i % case.nrot
        i += 1
        a = time.perf_counter_ns()
        case.call(k)
        ts.append(time.perf_counter_ns() - a)
    ts.sort()
    mid = len(ts) // 2
    med = ts[mid] if len(ts) % 2 else 0.5 * (ts[mid - 1] + ts[mid])
    return med / 1e3, reps


def selected(filt, name):
    """gx bench's --filter: comma-separated items; =NAME that name alone, else a substring."""
    if not filt:
        return True
    return any((it[1:] == name) if it.startswith("=") else (it in name)
               for it in filt.split(",") if it)


def main():
    ap = argparse.ArgumentParser(description="NumPy peer of gx bench on the CPU (JSON lines on stdout)")
    ap.add_argument("--sizes", default="10,16,20,24", help="element counts as exponents of 2")
    ap.add_argument("--reps", type=int, default=30, help="timed runs per row")
    ap.add_argument("--filter", default=None, help="as gx bench's: S,T: either; =NAME: that case alone")
    ap.add_argument("--max-seconds", type=float, default=10.0, help="time cap per row (fewer runs, at least 3)")
    a = ap.parse_args()
    sizes = [int(s) for s in a.sizes.split(",") if s]
    print(json.dumps({"impl": "meta", "lib": "numpy", "version": np.__version__,
                      "python": sys.version.split()[0], "llc_bytes": llc_bytes()}), flush=True)
    for name, dtype, factor, make in CASES:
        if not selected(a.filter, name):
            continue
        for e in sizes:
            n = factor << e
            print(f"cpu_numpy: {name} {dtype} 2^{e}", file=sys.stderr, flush=True)
            case = make(n)
            us, reps = time_calls(case, a.reps, a.max_seconds)
            row = {"impl": "numpy", "op": name, "dtype": dtype, "n": n, "median_us": round(us, 3),
                   "bytes": case.bytes(), "flops": 0, "elems": case.elems, "reps": reps,
                   "rot": case.nrot, "check": case.check()}
            print(json.dumps(row), flush=True)
            del case
    return 0


if __name__ == "__main__":
    sys.exit(main())
