#!/usr/bin/env python3
"""Accuracy of f32 sums: gx against NumPy, PyTorch and CuPy on the same data.

Usage:
    python3 bench/peers/accuracy.py [--sizes 20,24,28] [--seed 25]
        [--gx build/gx_accuracy] [--gx-name gx] [--backends cpu,cuda]
        [--libs numpy,torch,cupy,gx] [--out DIR] [--keep]
    Sizes below 64 are exponents of 2.

For every n and two data sets -- "same" (uniform [0, 1): every value positive,
where sequential f32 accumulators lose most) and "mixed" (uniform [-1, 1)) --
x and y are drawn as float32 with a fixed seed (numpy's default_rng(seed), so
every run and every machine sees the same values) and saved as .npy files in
DIR.  Each library then computes, in float32 as its users would:
    sum   x.sum()
    mean  x.mean()
    l2    sqrt(sum((x - y)**2))
and the table shows |result - exact|, where exact is math.fsum over the float64
values (x; for l2 the squares of the float64 differences, themselves rounded
once in float64 -- far below float32's errors).
    numpy  always (required)        torch  on CUDA if it has a GPU, else CPU
    cupy   when a GPU answers       gx     bench/accuracy.c (build/gx_accuracy):
                                           its CPU backend, and CUDA when present
A library that will not import, or a gx backend that will not open, is left
out with a note on stderr.

Output: the markdown table on stdout (rows: op, data, n; a column per library
and backend); DIR/accuracy.jsonl holds every value.  The .npy files are deleted
after use unless --keep.
"""

import argparse
import itertools
import json
import math
import os
import subprocess
import sys


def note(msg):
    print("accuracy.py: " + msg, file=sys.stderr, flush=True)


def exact_sum(a64):
    """math.fsum over a float64 array, fed in chunks (no list of 2^28 floats)."""
    step = 1 << 20
    chunks = (a64[i:i + step].tolist() for i in range(0, a64.size, step))
    return math.fsum(itertools.chain.from_iterable(chunks))


def make_data(np, n, kind, seed):
    # One generator per (n, kind): a size's data does not depend on which sizes ran.
    rng = np.random.default_rng([seed, n, 0 if kind == "same" else 1])
    lo = 0.0 if kind == "same" else -1.0
    x = rng.uniform(lo, 1.0, n).astype(np.float32)
    y = rng.uniform(lo, 1.0, n).astype(np.float32)
    return x, y


def exact_refs(np, x, y):
    x64 = x.astype(np.float64)
    s = exact_sum(x64)
    d = x64 - y.astype(np.float64)  # exact: a difference of two float32
    d *= d
    return {"sum": s, "mean": s / x.size, "l2": math.sqrt(exact_sum(d))}


def numpy_results(np, x, y):
    d = x - y
    return {"sum": float(x.sum()), "mean": float(x.mean()),
            "l2": float(np.sqrt(np.sum(d * d)))}


def torch_results(torch, dev, x, y):
    tx = torch.from_numpy(x).to(dev)
    ty = torch.from_numpy(y).to(dev)
    d = tx - ty
    out = {"sum": tx.sum().item(), "mean": tx.mean().item(),
           "l2": torch.sqrt(torch.sum(d * d)).item()}
    del tx, ty, d
    if dev == "cuda":
        torch.cuda.empty_cache()
    return out


def cupy_results(cp, x, y):
    cx = cp.asarray(x)
    cy = cp.asarray(y)
    d = cx - cy
    out = {"sum": float(cx.sum()), "mean": float(cx.mean()),
           "l2": float(cp.sqrt(cp.sum(d * d)))}
    del cx, cy, d
    cp.get_default_memory_pool().free_all_blocks()
    return out


def gx_results(gx, backends, xpath, ypath):
    """{backend: {op: value}} from gx_accuracy's JSON lines."""
    try:
        p = subprocess.run([gx, "--backends", backends, xpath, ypath],
                           capture_output=True, text=True, check=False)
    except OSError as e:
        note(f"cannot run {gx}: {e}")
        return {}
    if p.returncode != 0:
        note(f"{gx} failed ({p.returncode}): {p.stderr.strip()}")
    res = {}
    for line in p.stdout.splitlines():
        if not line.startswith("{"):
            continue
        o = json.loads(line)
        if "skipped" in o:
            note(f"gx {o['backend']}: skipped ({o['skipped']})")
            continue
        res.setdefault(o["backend"], {})[o["op"]] = o["value"]
    return res


def fmt_err(e):
    if e is None:
        return ""
    return "0" if e == 0 else f"{e:.2e}"


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--sizes", default="20,24,28")
    ap.add_argument("--seed", type=int, default=25)
    here = os.path.dirname(os.path.abspath(__file__))
    root = os.path.dirname(os.path.dirname(here))
    ap.add_argument("--gx", default=os.path.join(root, "build", "gx_accuracy"))
    ap.add_argument("--cub", default="", help="cub_accuracy binary (bench/peers/cub_accuracy.cu); empty: no CUB column")
    ap.add_argument("--backends", default="cpu,cuda", help="gx backends")
    ap.add_argument("--gx-name", default="gx", help="gx's column label (to compare builds)")
    ap.add_argument("--libs", default="numpy,torch,cupy,gx")
    ap.add_argument("--out", default=os.path.join(root, "bench-out", "accuracy"))
    ap.add_argument("--keep", action="store_true", help="keep the .npy files")
    args = ap.parse_args()

    try:
        import numpy as np
    except ImportError:
        note("numpy is required (pip install numpy); nothing measured")
        return 1
    libs = set(args.libs.split(","))
    torch = cp = None
    torch_dev = "cpu"
    if "torch" in libs:
        try:
            import torch
            torch_dev = "cuda" if torch.cuda.is_available() else "cpu"
        except ImportError:
            note("torch not installed: left out")
    if "cupy" in libs:
        try:
            import cupy as cp
            cp.cuda.runtime.getDeviceCount()
        except Exception as e:  # no module, or no GPU behind it
            note(f"cupy left out ({type(e).__name__}: {e})")
            cp = None
    if "gx" in libs and not os.access(args.gx, os.X_OK):
        note(f"{args.gx} not found (build it: cmake --build build --target gx_accuracy): gx left out")
        libs.discard("gx")

    os.makedirs(args.out, exist_ok=True)
    sizes = [int(s) for s in args.sizes.split(",") if s]
    sizes = [1 << s if s < 64 else s for s in sizes]
    rows = []  # (op, kind, n, {column: |error|})
    columns = []
    jsonl = open(os.path.join(args.out, "accuracy.jsonl"), "w")

    def add(col, res, ref, bucket, n, kind):
        if col not in columns:
            columns.append(col)
        for op, v in res.items():
            bucket[op][col] = abs(v - ref[op])
            jsonl.write(json.dumps({"lib": col, "op": op, "n": n, "data": kind, "value": v,
                                    "exact": ref[op], "abs_error": abs(v - ref[op])}) + "\n")

    for n in sizes:
        for kind in ("same", "mixed"):
            note(f"n = 2^{n.bit_length() - 1}, {kind}")
            x, y = make_data(np, n, kind, args.seed)
            xpath = os.path.join(args.out, f"x-{kind}-{n}.npy")
            ypath = os.path.join(args.out, f"y-{kind}-{n}.npy")
            np.save(xpath, x)
            np.save(ypath, y)
            ref = exact_refs(np, x, y)
            bucket = {"sum": {}, "mean": {}, "l2": {}}
            add("numpy (cpu)", numpy_results(np, x, y), ref, bucket, n, kind)
            if torch is not None:
                try:
                    add(f"torch ({torch_dev})", torch_results(torch, torch_dev, x, y), ref, bucket, n, kind)
                except Exception as e:
                    note(f"torch failed at n={n}: {e}")
            if cp is not None:
                try:
                    add("cupy (cuda)", cupy_results(cp, x, y), ref, bucket, n, kind)
                except Exception as e:
                    note(f"cupy failed at n={n}: {e}")
            if args.cub and os.access(args.cub, os.X_OK):
                for be, res in gx_results(args.cub, "cuda", xpath, ypath).items():
                    add(f"cub ({be})", res, ref, bucket, n, kind)
            if "gx" in libs:
                for be, res in gx_results(args.gx, args.backends, xpath, ypath).items():
                    add(f"{args.gx_name} ({be})", res, ref, bucket, n, kind)
            if not args.keep:
                os.remove(xpath)
                os.remove(ypath)
            for op in ("sum", "mean", "l2"):
                rows.append((op, kind, n, bucket[op]))
            del x, y
    jsonl.close()

    order = {"sum": 0, "mean": 1, "l2": 2}
    rows.sort(key=lambda r: (order[r[0]], r[1] != "same", r[2]))
    print(f"|error| against the exact value (math.fsum); seed {args.seed}")
    print()
    print("| op | data | n | " + " | ".join(columns) + " |")
    print("|---|---|---|" + "---|" * len(columns))
    for op, kind, n, errs in rows:
        cells = [fmt_err(errs.get(c)) for c in columns]
        print(f"| {op} | {kind} | 2^{n.bit_length() - 1} | " + " | ".join(cells) + " |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
