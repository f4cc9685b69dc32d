#!/usr/bin/env python3
"""Merge gx and peer benchmark JSON lines into one table, BENCH.md and bench.png.

Usage:
    python3 scripts/bench_merge.py FILE.jsonl [FILE.jsonl ...]
        [--out DIR] [--csv FILE] [--cmd "command line to record"] [--no-plot]

Input: JSON objects, one a line (other lines are ignored):
    {"impl":"gx"|"cub"|"cuda"|"cublas"|"torch"|"cupy"|"cupy_kernel"|...,
     "op":"sum","dtype":"f32","n":N,"median_us":x,
     "bytes":B,"flops":F,            # optional; 0 = not meaningful
     "elems":E,                      # optional; rate in G elements/s when no bytes/flops
     "ok":true, ...}                 # optional; false marks a wrong result
    {"impl":"device","name":...,"sms":...,"l2_bytes":...,"driver":...}  # device line
    {"impl":"meta",...}                                                  # ignored
Rows are merged by (op, dtype, n).  "speedup" is best_peer_us / gx_us (>1: gx
faster).  "% copy" is the row's GB/s over the copy bandwidth: the "copy" op at
the largest n measured, from impl "cuda", else "memcpy" (bench/peers/cpu_omp.c, on
the CPU), else "gx".
Writes DIR/BENCH.md and DIR/bench.png (DIR: --out, else $OUT, else "."), and
prints the table to stdout last.
"""

import argparse
import csv
import datetime
import json
import math
import os
import sys

OP_ORDER = ["copy", "h2d", "d2h", "sum", "max", "argmin", "argmax", "mean", "map_sin2cos2",
            "map_saxpy", "map_saxpy_new", "l2dist", "scan_sum", "scan_sum_new", "select_gt05",
            "sum_rows", "sum_cols", "rand_f32", "iota_hash_sum_i64", "launch_latency_iota_sum", "pipeline_count", "concat4", "gather_map_f32", "gather_map_f32_unchecked", "sort_u32",
            "sort_f32"]
LAST_OPS = ["sgemm"]
IMPL_ORDER = ["gx", "cuda", "cub", "cublas", "torch", "torch_out", "torch_index_out", "torch_norm", "torch_compile", "cupy",
              "cupy_out", "cupy_kernel", "cupy_fuse", "cuda-hand", "cuda-hand-sr", "numpy", "omp", "memcpy",
              "c_loop"]
IMPL_COLOR = {"gx": "#d62728", "cuda": "#7f7f7f", "cub": "#1f77b4", "cublas": "#17becf",
              "torch": "#ff7f0e", "torch_out": "#ffbb78", "torch_index_out": "#ffbb78", "torch_norm": "#ffbb78",
              "torch_compile": "#e6550d", "cupy": "#2ca02c", "cupy_out": "#98df8a", "cupy_kernel": "#98df8a",
              "cupy_fuse": "#31a354",
              "cuda-hand": "#9467bd", "cuda-hand-sr": "#c5b0d5",
              "numpy": "#8c564b", "omp": "#e377c2", "memcpy": "#7f7f7f", "c_loop": "#bcbd22"}
META_IMPLS = {"device", "meta", "note", "versions"}
HOST_REFS = {"memcpy", "c_loop", "c_loop_1t"}


# ------------------------------------------------------------------ input --
def load(paths):
    recs, device, metas, bad = [], {}, [], 0
    for path in paths:
        try:
            fh = open(path, encoding="utf-8", errors="replace")
        except OSError as e:
            print(f"bench_merge: cannot read {path}: {e}", file=sys.stderr)
            continue
        with fh:
            for line in fh:
                line = line.strip()
                if not line.startswith("{"):
                    continue
                try:
                    r = json.loads(line)
                except ValueError:
                    bad += 1
                    continue
                if not isinstance(r, dict):
                    continue
                impl = str(r.get("impl", ""))
                if impl == "device":
                    if not device:
                        device = r
                    continue
                if impl in META_IMPLS or "op" not in r:
                    metas.append(r)
                    continue
                try:
                    r["n"] = int(r.get("n", 0))
                    r["median_us"] = float(r["median_us"])
                except (KeyError, TypeError, ValueError):
                    bad += 1
                    continue
                if not (r["median_us"] > 0 and math.isfinite(r["median_us"])):
                    bad += 1
                    continue
                r["impl"] = impl or "?"
                r["op"] = str(r["op"])
                r["dtype"] = str(r.get("dtype", "") or "")
                recs.append(r)
    if bad:
        print(f"bench_merge: ignored {bad} malformed line(s)", file=sys.stderr)
    return recs, device, metas


def num(r, k):
    try:
        v = float(r.get(k, 0) or 0)
        return v if math.isfinite(v) else 0.0
    except (TypeError, ValueError):
        return 0.0


def rate(r):
    """(value, unit) of a record's throughput, or (None, "")."""
    us = r["median_us"]
    if num(r, "flops") > 0:
        return num(r, "flops") / us / 1e6, "TFLOP/s"
    if num(r, "bytes") > 0:
        return num(r, "bytes") / us / 1e3, "GB/s"
    if num(r, "elems") > 0:
        return num(r, "elems") / us / 1e3, "Gel/s"
    if str(r.get("op", "")).startswith("sort") and int(r.get("n", 0) or 0) > 0:
        return int(r["n"]) / us / 1e3, "Gel/s"  # a sort of n keys
    return None, ""


def op_rank(op):
    if op in OP_ORDER:
        return (0, OP_ORDER.index(op), op)
    if op in LAST_OPS:
        return (2, LAST_OPS.index(op), op)
    return (1, 0, op)


def impl_rank(impl):
    return (IMPL_ORDER.index(impl), impl) if impl in IMPL_ORDER else (len(IMPL_ORDER), impl)


def fmt_n(op, n):
    if op == "sgemm":
        return f"m={n}"
    if n >= 1024 and n & (n - 1) == 0:
        return f"2^{n.bit_length() - 1}"
    return f"{n:,}"


def fmt_us(us):
    if us is None:
        return "-"
    if us >= 1e5:
        return f"{us:,.0f}"
    if us >= 100:
        return f"{us:.1f}"
    return f"{us:.2f}"


def fmt_rate(v, unit):
    if v is None:
        return "-"
    if unit == "GB/s":
        return f"{v:.0f} GB/s" if v >= 10 else f"{v:.2f} GB/s"
    if unit == "TFLOP/s":
        return f"{v:.1f} TFLOP/s"
    return f"{v:.2f} Gel/s"


# ------------------------------------------------------------------ merge --
def check_state(r):
    """A record's check: True (right), False (wrong), None (no check is possible for
    it, said so by an explicit "ok": null) or "unchecked" (no "ok" at all: a result
    nobody looked at is not counted as right)."""
    if "ok" not in r:
        return "unchecked"
    return r["ok"] if r["ok"] in (True, False, None) else "unchecked"



def merge(recs):
    groups = {}
    for r in recs:  # a later line for the same (op, dtype, n, impl) replaces an earlier one
        groups.setdefault((r["op"], r["dtype"], r["n"]), {})[r["impl"]] = r
    return dict(sorted(groups.items(), key=lambda kv: (op_rank(kv[0][0]), kv[0][1], kv[0][2])))


def copy_bandwidth(groups):
    best = None
    for (op, _dt, n), impls in groups.items():
        if op != "copy":
            continue
        for impl in ("cuda", "memcpy", "gx"):
            r = impls.get(impl)
            if r is None:
                continue
            b = num(r, "bytes") or 2.0 * n * 4
            cand = (n, impl, b / r["median_us"] / 1e3)
            if best is None or n > best[0]:
                best = cand
            break
    return best  # (n, impl, GB/s) or None


def table_rows(groups, copy_bw):
    rows = []
    for (op, dtype, n), impls in groups.items():
        gx = impls.get("gx")
        # Hand-written reference kernels ("ref": true) are listed, not compared against.
        # gx bench's own host references on the CPU (a copy over every thread, a plain
        # loop on one) are yardsticks, not peers, except as the copy itself.
        peers = [r for i, r in impls.items() if i != "gx" and not r.get("ref")
                 and (op == "copy" or i not in HOST_REFS)]
        # The best peer is the fastest whose result was checked and right.
        good = [r for r in peers if r.get("ok") is True] or [r for r in peers if r.get("ok") is not False] or peers
        best = min(good, key=lambda r: r["median_us"]) if good else None
        row = {"op": op, "dtype": dtype, "n": n, "size": fmt_n(op, n),
               "gx_us": gx["median_us"] if gx else None,
               "gx_rate": None, "unit": "", "gx_ok": check_state(gx) if gx else True,
               "peer": best["impl"] if best else "", "peer_us": best["median_us"] if best else None,
               "peer_rate": None, "peer_unit": "", "peer_ok": check_state(best) if best else True,
               "speedup": None, "gx_pct_copy": None, "peer_pct_copy": None,
               "all": sorted(impls.values(), key=lambda r: impl_rank(r["impl"]))}
        if gx:
            row["gx_rate"], row["unit"] = rate(gx)
        if best:
            row["peer_rate"], row["peer_unit"] = rate(best)
            row["unit"] = row["unit"] or row["peer_unit"]
        if gx and best:
            row["speedup"] = best["median_us"] / gx["median_us"]
        if copy_bw and copy_bw[2] > 0:
            if row["unit"] == "GB/s" and row["gx_rate"] is not None:
                row["gx_pct_copy"] = 100.0 * row["gx_rate"] / copy_bw[2]
            if best and rate(best)[1] == "GB/s":
                row["peer_pct_copy"] = 100.0 * rate(best)[0] / copy_bw[2]
        rows.append(row)
    return rows


COLUMNS = ["operation", "dtype", "size", "gx µs", "gx rate", "best peer", "peer µs",
           "peer rate", "speedup", "gx %copy", "peer %copy"]


def row_cells(r):
    pct = lambda v: "-" if v is None else f"{v:.0f}%"  # noqa: E731
    flag = lambda ok: {False: " (WRONG)", "unchecked": " (unchecked)"}.get(ok, "")  # noqa: E731
    return [r["op"], r["dtype"] or "-", r["size"],
            fmt_us(r["gx_us"]) + (flag(r["gx_ok"]) if r["gx_us"] is not None else ""),
            fmt_rate(r["gx_rate"], r["unit"]) if r["gx_us"] is not None else "-",
            (r["peer"] + flag(r["peer_ok"])) if r["peer"] else "-",
            fmt_us(r["peer_us"]),
            fmt_rate(r["peer_rate"], r["peer_unit"]) if r["peer_us"] is not None else "-",
            "-" if r["speedup"] is None else f"{r['speedup']:.2f}x",
            pct(r["gx_pct_copy"]), pct(r["peer_pct_copy"])]


def text_table(rows):
    cells = [COLUMNS] + [row_cells(r) for r in rows]
    w = [max(len(c[i]) for c in cells) for i in range(len(COLUMNS))]
    right = {3, 4, 6, 7, 8, 9, 10}
    out = []
    for k, c in enumerate(cells):
        out.append("  ".join(c[i].rjust(w[i]) if i in right else c[i].ljust(w[i])
                             for i in range(len(c))).rstrip())
        if k == 0:
            out.append("  ".join("-" * w[i] for i in range(len(c))))
    return "\n".join(out)


def md_table(rows):
    out = ["| " + " | ".join(COLUMNS) + " |",
           "|" + "|".join("---:" if i in (3, 4, 6, 7, 8, 9, 10) else "---" for i in range(len(COLUMNS))) + "|"]
    for r in rows:
        out.append("| " + " | ".join(row_cells(r)) + " |")
    return "\n".join(out)


def device_line(dev, metas):
    if dev:
        parts = [str(dev.get("name", "?"))]
        if dev.get("sms"):
            parts.append(f"{dev['sms']} SMs")
        if dev.get("l2_bytes"):
            parts.append(f"L2 {int(dev['l2_bytes']) / 2**20:.0f} MiB")
        if dev.get("mem_bytes"):
            parts.append(f"{int(dev['mem_bytes']) / 2**30:.0f} GiB")
        if dev.get("peak_gbps"):
            parts.append(f"nominal {float(dev['peak_gbps']):.0f} GB/s")
        if dev.get("driver"):
            parts.append(f"driver {dev['driver']}")
        if dev.get("runtime"):
            rt = int(dev["runtime"])
            parts.append(f"CUDA runtime {rt // 1000}.{rt % 1000 // 10}")
        return ", ".join(parts)
    for m in metas:
        if m.get("device"):
            return str(m["device"])
    return "unknown device"


def write_md(path, rows, dev_line, copy_bw, cmd, inputs, metas, recs):
    now = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    L = ["# gx benchmark", "",
         f"- Device: {dev_line}",
         f"- Date: {now}",
         f"- Command: `{cmd}`",
         f"- Inputs: {', '.join(os.path.basename(p) for p in inputs)}"]
    libs = [f"{m['lib']} {m.get('version', '?')}" for m in metas if m.get("lib")]
    if libs:
        L.append(f"- Peer libraries: {', '.join(libs)}")
    for m in metas:
        if m.get("fixture") or m.get("note"):
            L.append(f"- Note: {m.get('note', 'fixture data')}")
    if copy_bw:
        L.append(f"- Copy bandwidth (100%): {copy_bw[2]:.0f} GB/s "
                 f"({'cudaMemcpy D2D' if copy_bw[1] == 'cuda' else 'gx copy'}, n={fmt_n('copy', copy_bw[0])})")
    L += ["",
          "Medians of timed runs (CUDA events) after warm-ups, on fresh random data; "
          "inputs rotate through several buffers where they would fit in L2. "
          "GB/s counts the fewest bytes an operation must move. "
          "**speedup** = best peer time / gx time (>1: gx faster). "
          "**%copy** = achieved GB/s / copy bandwidth.", "",
          md_table(rows), "", "## Every measurement", "",
          "| operation | dtype | size | " + " | ".join(["impl µs (rate)"]) + " |",
          "|---|---|---|---|"]
    for r in rows:
        parts = []
        for x in r["all"]:
            v, u = rate(x)
            s = f"{x['impl']} {fmt_us(x['median_us'])}"
            if v is not None:
                s += f" ({fmt_rate(v, u)})"
            if x.get("ref"):
                s += " [hand-written reference]"
            if x.get("ok", True) is False:
                s += " WRONG"
            if x.get("reps") is not None and int(x["reps"]) < 30:
                s += f" [{x['reps']} runs]"
            parts.append(s)
        L.append(f"| {r['op']} | {r['dtype'] or '-'} | {r['size']} | {' · '.join(parts)} |")
    wrong = [x for x in recs if x.get("ok", True) is False]
    if wrong:
        L += ["", "## Wrong results", ""]
        L += [f"- {x['impl']} {x['op']} {x['dtype']} n={x['n']}" for x in wrong]
    L.append("")
    with open(path, "w", encoding="utf-8") as f:
        f.write("\n".join(L))


def write_csv(path, rows):
    with open(path, "w", newline="", encoding="utf-8") as f:
        w = csv.writer(f)
        w.writerow(["op", "dtype", "n", "gx_us", "gx_rate", "unit", "best_peer", "peer_us",
                    "peer_rate", "speedup", "gx_pct_copy", "peer_pct_copy"])
        for r in rows:
            w.writerow([r["op"], r["dtype"], r["n"], r["gx_us"], r["gx_rate"], r["unit"],
                        r["peer"], r["peer_us"], r["peer_rate"], r["speedup"],
                        r["gx_pct_copy"], r["peer_pct_copy"]])


# ------------------------------------------------------------------- plot --
def plot(path, groups, copy_bw, dev_line):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    # rows to plot: per (op, dtype) its largest n; by unit
    latest = {}
    for (op, dtype, n), impls in groups.items():
        units = {rate(r)[1] for r in impls.values()} - {""}
        if not units:
            continue
        unit = "TFLOP/s" if "TFLOP/s" in units else ("GB/s" if "GB/s" in units else "Gel/s")
        if unit == "TFLOP/s":
            latest[(op, dtype, n)] = (unit, impls)  # every GEMM size
        elif (op, dtype) not in latest or n > latest[(op, dtype)][0]:
            latest[(op, dtype)] = (n, unit, impls)
    bw, el, fl = [], [], []
    for key, val in latest.items():
        if len(key) == 3:
            fl.append((f"{key[0]} {fmt_n(key[0], key[2])}", val[1], key))
        else:
            n, unit, impls = val
            dtypes = {k2[1] for k2 in latest if len(k2) == 2 and k2[0] == key[0]}
            label = key[0] + (f"\n{key[1]}" if len(dtypes) > 1 or key[1] not in ("f32", "") else "")
            (bw if unit == "GB/s" else el).append((label, impls, (key[0], key[1], n)))
    if not (bw or el or fl):
        return False
    nmax = max((k[2] for _, _, k in bw), default=0)
    for lst in (bw, el):
        top = max((k[2] for _, _, k in lst), default=0)
        for i, (label, impls, k) in enumerate(lst):
            if k[2] != top:
                lst[i] = (label + f"\n(n={fmt_n(k[0], k[2])})", impls, k)
    order = lambda lst: sorted(lst, key=lambda t: (op_rank(t[2][0]), t[2][1], t[2][2]))  # noqa: E731
    bw, el, fl = order(bw), order(el), order(fl)

    fig = plt.figure(figsize=(max(12, 1.25 * len(bw) + 4), 10.5), constrained_layout=True)
    bottom = [x for x in (el, fl) if x]
    gs = fig.add_gridspec(2 if bottom else 1, max(1, len(bottom)),
                          height_ratios=[1.35, 1] if bottom else [1])
    seen = {}

    def bars(ax, items, unit, title):
        most = max(sum(1 for r in t[1].values() if rate(r)[1] == unit) for t in items)
        wdt = 0.84 / max(most, 2)
        for gi, (label, impls, _k) in enumerate(items):
            rs = sorted((r for r in impls.values() if rate(r)[1] == unit),
                        key=lambda r: impl_rank(r["impl"]))
            if not rs:
                continue
            for j, r in enumerate(rs):
                v = rate(r)[0]
                x = gi + wdt * (j - (len(rs) - 1) / 2)
                col = IMPL_COLOR.get(r["impl"], "#9467bd")
                h = ax.bar(x, v, wdt * 0.92, color=col,
                           edgecolor="black" if r["impl"] == "gx" else "none", linewidth=0.8,
                           hatch="//" if r.get("ok", True) is False else None)
                seen.setdefault(r["impl"], h)
                txt = f"{v:.0f}" if v >= 10 else f"{v:.1f}"
                ax.annotate(txt, (x, v), xytext=(0, 2), textcoords="offset points",
                            ha="center", va="bottom", fontsize=7, rotation=90)
        ax.set_xticks(range(len(items)))
        ax.set_xticklabels([t[0] for t in items], fontsize=9)
        ax.set_xlim(-0.6, len(items) - 0.4)
        ax.set_ylabel(unit)
        ax.set_title(title, fontsize=11)
        ax.grid(axis="y", alpha=0.3)
        ax.set_axisbelow(True)
        ax.margins(y=0.15)

    if bw:
        ax = fig.add_subplot(gs[0, :])
        bars(ax, bw, "GB/s", f"Achieved bandwidth at n={fmt_n('', nmax)} (higher is better)")
        if copy_bw:
            ax.axhline(copy_bw[2], color="black", ls="--", lw=1)
            ax.text(len(bw) - 0.45, copy_bw[2], f"copy {copy_bw[2]:.0f} GB/s ",
                    ha="right", va="bottom", fontsize=9)
    col = 0
    if el:
        ax = fig.add_subplot(gs[1 if bw else 0, col])
        bars(ax, el, "Gel/s", "G elements/s (sorts; ops without a byte count)")
        col += 1
    if fl:
        ax = fig.add_subplot(gs[1 if bw else 0, col])
        bars(ax, fl, "TFLOP/s", "SGEMM FP32 (no TF32): TFLOP/s")
    labels = sorted(seen, key=impl_rank)
    fig.legend([seen[k] for k in labels], labels, loc="outside upper right",
               ncol=len(labels), fontsize=10)
    fig.suptitle(f"gx vs peers — {dev_line}", fontsize=12, x=0.01, ha="left")
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return True


def main():
    ap = argparse.ArgumentParser(description="Merge gx / peer benchmark JSON lines.")
    ap.add_argument("files", nargs="+")
    ap.add_argument("--out", default=os.environ.get("OUT") or ".")
    ap.add_argument("--csv", default=None, help="also write the merged table as CSV here")
    ap.add_argument("--cmd", default=None, help="command line to record in BENCH.md")
    ap.add_argument("--no-plot", action="store_true")
    args = ap.parse_args()

    recs, dev, metas = load(args.files)
    groups = merge(recs)
    copy_bw = copy_bandwidth(groups)
    rows = table_rows(groups, copy_bw)
    dev_line = device_line(dev, metas)
    os.makedirs(args.out, exist_ok=True)
    cmd = args.cmd or " ".join([os.path.basename(sys.argv[0])] + sys.argv[1:])
    write_md(os.path.join(args.out, "BENCH.md"), rows, dev_line, copy_bw, cmd, args.files,
             metas, recs)
    if args.csv:
        write_csv(args.csv, rows)
    if not args.no_plot:
        try:
            if not plot(os.path.join(args.out, "bench.png"), groups, copy_bw, dev_line):
                print("bench_merge: nothing to plot", file=sys.stderr)
        except Exception as e:  # the table matters more than the picture
            print(f"bench_merge: no plot ({type(e).__name__}: {e})", file=sys.stderr)

    print(f"Device: {dev_line}")
    if copy_bw:
        print(f"Copy bandwidth: {copy_bw[2]:.0f} GB/s ({copy_bw[1]}, n={fmt_n('copy', copy_bw[0])})")
    if not any(r["gx_us"] is not None for r in rows):
        print("(no gx measurements: peers only)")
    print("speedup = best peer time / gx time (>1: gx faster); %copy = GB/s / copy bandwidth")
    print(text_table(rows) if rows else "(no measurements)")
    wrong = [f"{r['op']} {r['dtype']} {r['size']}" for r in rows if r["gx_us"] is not None and r["gx_ok"] is False]
    unchecked = [f"{r['op']} {r['dtype']} {r['size']}" for r in rows
                 if r["gx_us"] is not None and r["gx_ok"] == "unchecked"]
    if unchecked:
        print(f"bench_merge: gx rows with no check: {', '.join(unchecked)}", file=sys.stderr)
    if wrong:
        print(f"bench_merge: WRONG gx results: {', '.join(wrong)}", file=sys.stderr)
        return 3
    return 0


if __name__ == "__main__":
    sys.exit(main())
