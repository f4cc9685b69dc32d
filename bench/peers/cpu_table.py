#!/usr/bin/env python3
"""The table of scripts/bench-cpu: gx on its CPU backend beside NumPy and OpenMP.

Usage:
    python3 bench/peers/cpu_table.py [machine.jsonl] gx.jsonl numpy.jsonl omp.jsonl
        [--scale IMPL:THREADS:FILE ...] [--scale-ops sum,map_saxpy,...]

Reads the JSON lines of `gx bench --json`, bench/peers/cpu_numpy.py and the
program of bench/peers/cpu_omp.c (with scripts/bench_merge.py's reader) and prints, per (op, dtype,
n) that a peer measured: the three medians, gx's speed against each peer (peer µs /
gx µs: > 1 means gx is faster), gx's GB/s as a share of the machine's copy bandwidth
(the "memcpy" row of cpu_omp: every thread copying its share), whether gx's own check
against its host reference passed (gx bench's "ok"), and whether the peers' "check"
values agree with gx's.  --scale adds a table of the same ops at
several thread counts (files of gx and omp runs at THREADS each), as speedups over
the fewest threads.

A row measured in several rounds (scripts/bench-cpu's ROUNDS: the implementations
alternate, each round running all of them once) shows the median of the rounds'
medians, so that a host whose speed drifts (another tenant, a clock change) moves
every implementation alike; the header says how many rounds.
"""

import argparse
import math
import os
import sys

sys.dont_write_bytecode = True  # no __pycache__ left in scripts/
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "scripts"))
from bench_merge import fmt_n, fmt_us, load, op_rank  # noqa: E402

PEERS = ["numpy", "omp"]

# How far a peer's check may be from gx's, relative.  Indices, integer sums and
# selections are exact; copies and maps are f64 sums of equal (maps: nearly equal)
# elements.  f32 reductions and scans differ by their accumulation: gx adds f32 in
# f64, NumPy and the OpenMP loop in f32, whose error grows with n (a squared distance
# most: its many tiny terms round away), so their bound grows like sqrt(n).
EXACT = {"argmin", "argmax", "iota_hash_sum_i64", "argsort_f32", "hist256_f32"}
TOLERANCE = {"copy": 1e-9, "h2d": 1e-9, "d2h": 1e-9, "map_saxpy": 1e-9, "map_saxpy_new": 1e-9,
             "select_gt05": 1e-9, "map_sin2cos2": 1e-6,
             "sort_f32": 1e-9, "sort_u32": 1e-9, "sort_rows_f32": 1e-9}


def tolerance(op, dtype, n):
    if op in EXACT or dtype in ("i32", "i64"):
        return 0.0
    return TOLERANCE.get(op, max(1e-5, 8 * math.sqrt(n) * 2.0 ** -24))


def rel_diff(a, b):
    a, b = float(a), float(b)
    return abs(a - b) / max(abs(a), abs(b)) if a != b else 0.0


def rate_gbs(r):
    b = float(r.get("bytes", 0) or 0)
    return b / r["median_us"] / 1e3 if b > 0 else None


def copy_reference(recs):
    """(GB/s, n, what) of the copy at its largest n: the OpenMP peer's memcpy row (every
    thread copying), else gx's own copy; None without either."""
    for impl in ("memcpy", "gx"):
        rows = [r for r in recs if r["impl"] == impl and r["op"] == "copy"]
        if rows:
            r = max(rows, key=lambda r: r["n"])
            what = f"memcpy, {r.get('threads', '?')} threads" if impl == "memcpy" else "gx copy"
            return rate_gbs(r), r["n"], what
    return None


def merge_rounds(recs):
    """One record per (impl, op, dtype, n, threads): the median of the rounds' medians
    (the lower middle one for an even count), "ok" false if any round's was; the count
    of rounds in "rounds"."""
    by = {}
    for r in recs:
        by.setdefault((r["impl"], r["op"], r["dtype"], r["n"], r.get("threads")), []).append(r)
    out = []
    for rs in by.values():
        rs = sorted(rs, key=lambda r: r["median_us"])
        m = dict(rs[(len(rs) - 1) // 2])
        m["rounds"] = len(rs)
        if any(r.get("ok", True) is False for r in rs):
            m["ok"] = False
        out.append(m)
    return out


def group(recs, impls):
    """{(op, dtype, n): {impl: record}} of the given impls; a later line wins."""
    g = {}
    for r in recs:
        if r["impl"] in impls:
            g.setdefault((r["op"], r["dtype"], r["n"]), {})[r["impl"]] = r
    return dict(sorted(g.items(), key=lambda kv: (op_rank(kv[0][0]), kv[0][1], kv[0][2])))


def speed(peer, gx):
    return "-" if not (peer and gx) else f"{peer['median_us'] / gx['median_us']:.2f}x"


def check_cell(op, dtype, n, impls):
    """ok, -, WRONG when gx's own check against its host reference failed (gx bench's
    "ok": false), or the peers whose check is off gx's: their relative difference, or
    for exact results both values."""
    gx = impls.get("gx")
    if gx is not None and gx.get("ok", True) is False:
        return "WRONG: gx " + str(gx.get("why", "differs from its host reference"))
    if gx is None or gx.get("check") is None:
        return "-"
    tol, bad = tolerance(op, dtype, n), []
    for p in PEERS:
        c = impls.get(p, {}).get("check")
        if c is not None and rel_diff(gx["check"], c) > tol:
            bad.append(f"{p} {c:.17g} (gx {gx['check']:.17g})" if tol == 0 else
                       f"{p} {rel_diff(gx['check'], c):.1e}")
    return "ok" if not bad else "DIFFERS: " + ", ".join(bad)


def main_rows(recs, copy_gbs):
    rows = []
    for (op, dtype, n), impls in group(recs, ["gx"] + PEERS).items():
        if not any(p in impls for p in PEERS):
            continue  # gx-only cases (pool, jit, sgemm...): gx bench's own table has them
        gx = impls.get("gx")
        g = rate_gbs(gx) if gx else None
        pct = f"{100 * g / copy_gbs:.0f}%" if g and copy_gbs else "-"
        rows.append([op, dtype, fmt_n(op, n)] +
                    [fmt_us(impls[i]["median_us"]) if i in impls else "-" for i in ["gx"] + PEERS] +
                    [speed(impls.get("numpy"), gx), speed(impls.get("omp"), gx), pct,
                     check_cell(op, dtype, n, impls)])
    return rows


def text_table(header, rows, left=3):
    cells = [header] + rows
    w = [max(len(c[i]) for c in cells) for i in range(len(header))]
    out = []
    for k, c in enumerate(cells):
        out.append("  ".join(c[i].ljust(w[i]) if i < left or i == len(c) - 1 else c[i].rjust(w[i])
                             for i in range(len(c))).rstrip())
        if k == 0:
            out.append("  ".join("-" * x for x in w))
    return "\n".join(out)


def machine_line(recs_meta, copy_ref):
    dev = next((m for m in recs_meta if m.get("impl") == "device"), {})
    parts = [str(dev.get("name", "unknown CPU"))]
    if dev.get("cores"):
        parts.append(f"{dev['cores']} cores")
    if dev.get("mem_bytes"):
        parts.append(f"{int(dev['mem_bytes']) / 2**30:.0f} GiB")
    if dev.get("llc_bytes"):
        parts.append(f"last-level cache {int(dev['llc_bytes']) / 2**20:.0f} MiB")
    line = "Machine: " + ", ".join(parts)
    if copy_ref and copy_ref[0]:
        line += f"; copy bandwidth {copy_ref[0]:.1f} GB/s ({copy_ref[2]}, {fmt_n('copy', copy_ref[1])} f32)"
    return line


def versions_line(metas):
    libs = [f"{m['lib']} {m.get('version', '?')}" + (f" ({m['threads']} threads)" if m.get("threads") else "")
            for m in metas if m.get("lib")]
    libs = list(dict.fromkeys(libs))  # once each, however many rounds
    return "Peers: " + ", ".join(libs) if libs else ""


# ------------------------------------------------------------------ scaling --
def scaling_table(specs, numpy_recs, ops):
    """specs: [(impl, threads, records)]; one row per (op, dtype, n) of ops."""
    by = {}  # (op, dtype, n) -> {(impl, threads): us}
    for impl, t, recs in specs:
        for r in recs:
            if r["impl"] == impl and r["op"] in ops and r["dtype"] == "f32":
                by.setdefault((r["op"], r["dtype"], r["n"]), {})[(impl, t)] = r["median_us"]
    counts = sorted({t for _, t, _ in specs})
    npy = {(r["op"], r["dtype"], r["n"]): r["median_us"] for r in numpy_recs if r["impl"] == "numpy"}
    header = ["op", "dtype", "n", "NumPy µs"]
    for impl in ("gx", "omp"):
        header += [f"{impl} µs t={counts[0]}"] + [f"{impl} t={t}" for t in counts[1:]]
    rows = []
    for key in sorted(by, key=lambda k: (op_rank(k[0]), k[2])):
        cells = [key[0], key[1], fmt_n(key[0], key[2]), fmt_us(npy.get(key))]
        for impl in ("gx", "omp"):
            base = by[key].get((impl, counts[0]))
            cells.append(fmt_us(base))
            for t in counts[1:]:
                us = by[key].get((impl, t))
                cells.append(f"{base / us:.2f}x" if base and us else "-")
        rows.append(cells)
    return header, rows, counts


def main():
    ap = argparse.ArgumentParser(description="gx (CPU backend) beside NumPy and OpenMP")
    ap.add_argument("files", nargs="+", help="JSON-lines files of gx bench, cpu_numpy.py, cpu_omp")
    ap.add_argument("--scale", action="append", default=[], metavar="IMPL:THREADS:FILE",
                    help="a gx or omp run at THREADS threads, for the scaling table")
    ap.add_argument("--scale-ops", default="sum,map_saxpy,scan_sum,select_gt05")
    a = ap.parse_args()

    recs, dev, metas = load(a.files)
    recs = merge_rounds(recs)
    rounds = max((r["rounds"] for r in recs), default=1)
    if dev:
        metas = [dev] + metas
    copy_ref = copy_reference(recs)
    print(machine_line(metas, copy_ref))
    v = versions_line(metas)
    if v:
        print(v)
    header = ["op", "dtype", "n", "gx µs", "NumPy µs", "OpenMP µs", "gx/NumPy", "gx/OMP", "gx %copy", "check"]
    rows = main_rows(recs, copy_ref[0] if copy_ref else None)
    print(text_table(header, rows) if rows else "(no peer measurements)")
    if rounds > 1:
        print(f"each time: the median of {rounds} rounds' medians (gx, NumPy and OpenMP alternating)")
    print("gx/NumPy, gx/OMP: the peer's time over gx's (> 1: gx faster); gx %copy: gx's GB/s over the copy "
          "bandwidth above;\ncheck: WRONG where gx's result differs from its own host reference (gx bench's "
          "check), else the peers' results against gx's (the value, or the f64 sum of the result array; f32 "
          "sums within 8 sqrt(n) 2^-24)")
    wrong = sum(1 for r in rows if r[-1].startswith("WRONG"))
    # gx rows no peer measured are not in the table; their failed checks still count
    shown = {(r["op"], r["dtype"], r["n"]) for r in recs if r["impl"] in PEERS}
    wrong += sum(1 for r in recs if r["impl"] == "gx" and r.get("ok", True) is False
                 and (r["op"], r["dtype"], r["n"]) not in shown)
    if wrong:
        print(f"WARNING: {wrong} gx row(s) WRONG: the result differs from gx bench's host reference")
    bad = sum(1 for r in rows if r[-1].startswith("DIFFERS"))
    if bad:
        print(f"WARNING: {bad} row(s) where a peer's result differs from gx's beyond the tolerance")
    bad += wrong

    if a.scale:
        specs = []
        for s in a.scale:
            impl, t, path = s.split(":", 2)
            specs.append((impl, int(t), merge_rounds(load([path])[0])))
        header, rows, counts = scaling_table(specs, recs, set(a.scale_ops.split(",")))
        print()
        print(f"Scaling: threads {','.join(map(str, counts))} (GX_CPU_THREADS for gx, OMP_NUM_THREADS for omp); "
              f"t=N columns: speedup over t={counts[0]}; NumPy: one thread")
        print(text_table(header, rows) if rows else "(no scaling measurements)")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
