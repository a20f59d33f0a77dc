#!/usr/bin/env python3
"""Joins the outputs of one benchmark run (benches/run.sh) into tables and one JSON file.

    python3 benches/join.py --work DIR --out DIR [--mode all|kernels|seed|graph|launch|ports] [--sources FILE...]

Reads, from --work (what run.sh wrote there; any may be missing):
  kernels-cuda.csv, kernels-rust.csv   bench.cu / bench_kernels (impl,kernel,sizes,block,grid,median_ms,min_ms,max_ms,reps,check,registers)
  seed-cuda.csv, seed-rust.csv         seed.cu --only plain / bench_seed, every round appended
  graph-cuda.csv, graph-rust.csv       seed.cu --only graph / bench_graph, every round appended
      (impl,variant,config,rows,cols,sources,median_ms,min_ms,max_ms,reps,check,verified,samples)
  scopes.csv                           bench_scopes (scopes,config,pattern,lanes,scopes_per_round,raw_us;..,sluice_us;..,verified)
  stream.csv                           stream_batches (stream,batch_mib,batches,slots,gib_each_way,stream_ms,stream_min_ms,
                                       stream_gbps,bound_ms,bound_gbps,h2d_gbps,d2h_gbps,ratio,verified)
  mem.csv                              bench_graph --leak (mem,config,variant,replays,dev_free_before,dev_free_after,rss_kib_before,rss_kib_after,total_ms,verified)
  launch.txt                           bench_launch (csv-launch,launches,rounds,path,ns,ratio)
  ports-cuda.csv, ports-rust.csv       gemm.cu / sluice-ports bench, every round appended (the kernels' format)
  ports-check.txt                      sluice-ports check (its table; the last line says whether all matched)
  nvidia-smi.txt                       name, driver_version, memory.total
Writes --out/bench.json (every number, every sample) and --out/bench.md (the tables, ready for
BENCHMARKS.md), and prints the tables, the seed summary last. Python 3 standard library only.

Every repetition of every round is pooled: a median and a min are over all timed repetitions
of a variant in all rounds of this run.
"""
import argparse
import datetime
import json
import os
import re
import statistics
import sys

CONFIG_ORDER = ["copy-bound", "balanced", "compute-bound", "many-small", "many-small-128"]
# Goals (issues 10 and 11; BENCHMARKS.md says what each means).
GOAL_VS_CPP = 1.02
GOAL_VS_BOUND = 1.03
GOAL_SCOPE_US_PER_LANE = 2.0
GOAL_LAUNCH = 1.03  # issue 22
GOAL_GRAPH = 1.05
GOAL_GRAPH_ABS_MS = {"many-small": 0.25, "many-small-128": 0.25}
GOAL_KERNEL = 1.02  # issue 22: every kernel written safely <= 1.02x nvcc, geometric mean <= 1.00
GOAL_KERNEL_GEOMEAN = 1.00
# The kernel sources, for the `unsafe` column (set by --sources; run.sh passes the bundle's copies).
SOURCES = []
GOAL_PORTS_GEMM = 1.05  # issue 9: the ported Rust-CUDA tiled gemm against the same CUDA C++
GOAL_NATURAL = 1.05  # issue 23: the README's program within 1.05x the best C++, graphs included
GOAL_STREAM = 0.95  # issue 23: streaming batches at >= 0.95x the bidirectional pinned-copy bound
VS_GRAPH = re.compile(r"^(natural.*)-vs-graph-k(\d+)$")  # bench_scopes: a natural program against a raw graph
NATURAL_VARIANTS = ("natural", "natural-nograph", "natural-direct")
CPP_NOT_A_PROGRAM = ("kernels-1", "kernels-n", "copy-only")  # parts of the overlap bound
CPP_HOST_VARIANTS = ("one-stream", "devsync", "per-stream", "fan-in")  # plus chunked-k*
SLUICE_HOST_VARIANTS = ("per-lane", "fan-in")  # plus chunked-k*


def lines(path):
    if not os.path.exists(path):
        return []
    with open(path, errors="replace") as f:
        return [l.rstrip("\n") for l in f if l.strip()]


def median(xs):
    return statistics.median(xs) if xs else float("nan")


def fmt(x, digits=3):
    if x is None or (isinstance(x, float) and x != x):
        return "-"
    return f"{x:.{digits}f}"


def ratio(a, b):
    if a is None or b is None or not b or a != a or b != b:
        return None
    return a / b


def table(headers, rows, align=None):
    """Console table: columns padded; `align` 'l'/'r' per column."""
    align = align or ["l"] + ["r"] * (len(headers) - 1)
    cells = [[str(c) for c in headers]] + [[str(c) for c in r] for r in rows]
    widths = [max(len(r[i]) for r in cells) for i in range(len(headers))]
    out = []
    for k, r in enumerate(cells):
        out.append("  ".join(c.ljust(w) if a == "l" else c.rjust(w) for c, w, a in zip(r, widths, align)))
        if k == 0:
            out.append("  ".join("-" * w for w in widths))
    return "\n".join(out)


def md_table(headers, rows, align=None):
    align = align or ["l"] + ["r"] * (len(headers) - 1)
    out = ["| " + " | ".join(headers) + " |", "| " + " | ".join("---:" if a == "r" else "---" for a in align) + " |"]
    out += ["| " + " | ".join(str(c) for c in r) + " |" for r in rows]
    return "\n".join(out)


# --------------------------------------------------------------------------------------------
# Parsing


def parse_device(path, into):
    for l in lines(path):
        if l.startswith("# device,"):
            f = l.split(",")
            d = {"name": f[1]}
            for k in range(2, len(f) - 1, 2):
                d[f[k]] = f[k + 1]
            into.setdefault(os.path.basename(path), d)


def parse_runs(paths):
    """(impl, variant, config) -> record with pooled samples."""
    runs = {}
    for path in paths:
        for l in lines(path):
            if l.startswith("#"):
                continue
            f = l.split(",", 12)
            if len(f) < 13:
                continue
            imp, variant, config = f[0], f[1], f[2]
            r = runs.setdefault(
                (imp, variant, config),
                {"rows": int(f[3]), "cols": int(f[4]), "sources": int(f[5]), "samples": [], "rounds": [], "checks": [], "verified": []},
            )
            samples = [float(x) for x in f[12].split(";") if x]
            r["samples"] += samples
            r["rounds"].append({"median_ms": float(f[6]), "min_ms": float(f[7]), "max_ms": float(f[8]), "reps": int(f[9])})
            r["checks"].append(float(f[10]))
            r["verified"].append(f[11])
    for r in runs.values():
        r["median_ms"] = median(r["samples"])
        r["min_ms"] = min(r["samples"]) if r["samples"] else float("nan")
        r["ok"] = all(v == "ok" for v in r["verified"])
    return runs


def by_config(runs, imp):
    out = {}
    for (i, v, c), r in runs.items():
        if i == imp:
            out.setdefault(c, {})[v] = r
    return out


def order(configs):
    known = [c for c in CONFIG_ORDER if c in configs]
    return known + sorted(c for c in configs if c not in CONFIG_ORDER)


def is_host_variant(v, names):
    return v in names or v.startswith("chunked-k")


def best(variants, names, key="median_ms"):
    cands = [(r[key], v) for v, r in variants.items() if is_host_variant(v, names) and r["samples"]]
    return min(cands) if cands else (None, None)


def load_kernel_rows(path):
    """The per-kernel CSV lines (`impl,kernel,sizes,block,grid,median,min,max,reps,check`) of
    bench.cu, gemm.cu, bench_kernels and sluice-ports: per (kernel, sizes), the round with
    the smallest median."""
    rows = {}
    for l in lines(path):
        if l.startswith("#"):
            continue
        f = l.split(",")
        if len(f) not in (10, 11):
            continue
        imp, kernel, sizes, block, grid, med, lo, hi, reps, check = f[:10]
        regs = int(f[10]) if len(f) == 11 and f[10].strip().isdigit() else None
        row = dict(block=block, grid=grid, median_ms=float(med), min_ms=float(lo), check=float(check), registers=regs)
        if (kernel, sizes) not in rows or row["median_ms"] < rows[(kernel, sizes)]["median_ms"]:
            rows[(kernel, sizes)] = row
    return rows


# --------------------------------------------------------------------------------------------
# Sections


def kernel_sources(paths):
    """`{kernel: (uses_unsafe, uses_get_unchecked)}` for every `fn` of the kernel sources
    (gpu-kernels/src/device.rs, ports/kernels/src/lib.rs, as the bundle copies them): whether
    the function is an `unsafe fn` or its body holds `unsafe` or `get_unchecked`, and whether it
    holds `get_unchecked` or `assert_unchecked` (comments aside)."""
    out = {}
    for path in paths:
        try:
            text = open(path).read()
        except OSError:
            continue
        code = []
        for line in text.splitlines():
            line = line.split("//")[0]
            code.append(line)
        code = "\n".join(code)
        i = 0
        while True:
            at = code.find("fn ", i)
            if at < 0:
                break
            name_end = at + 3
            while name_end < len(code) and (code[name_end].isalnum() or code[name_end] == "_"):
                name_end += 1
            name = code[at + 3:name_end]
            head = code[code.rfind("\n", 0, at) + 1:at]
            body_at = code.find("{", name_end)
            semi = code.find(";", name_end)
            if body_at < 0 or (0 <= semi < body_at) or not name:
                i = name_end
                continue
            depth, j = 0, body_at
            while j < len(code):
                depth += {"{": 1, "}": -1}.get(code[j], 0)
                if depth == 0:
                    break
                j += 1
            body = code[body_at:j + 1]
            unchecked = "get_unchecked" in body or "assert_unchecked" in body
            out.setdefault(name, ("unsafe" in head or "unsafe" in body or unchecked, unchecked))
            i = j + 1
    return out


def regs(row):
    return "-" if not row or row.get("registers") is None else str(row["registers"])


def kernels_section(work, res, md, console):
    cuda, rust = load_kernel_rows(os.path.join(work, "kernels-cuda.csv")), load_kernel_rows(os.path.join(work, "kernels-rust.csv"))
    if not cuda and not rust:
        return
    unsafety = kernel_sources(SOURCES)
    out, rows = [], []
    for key in sorted(cuda):
        c, r = cuda[key], rust.get(key)
        q = ratio(r and r["median_ms"], c["median_ms"])
        same = r is not None and abs(r["check"] - c["check"]) <= 1e-3 * max(1.0, abs(c["check"]))
        verdict = "-" if q is None else ("ok" if q <= GOAL_KERNEL else f"over {GOAL_KERNEL}x")
        uses = unsafety.get(key[0], (None,))[0]
        rows.append([key[0], key[1], fmt(c["median_ms"], 4), fmt(r and r["median_ms"], 4), fmt(q), regs(c), regs(r),
                     "-" if uses is None else ("yes" if uses else "no"), "same" if same else "DIFF", verdict])
        out.append({"kernel": key[0], "sizes": key[1], "nvcc": c, "rust": r, "ratio": q, "check_same": same, "unsafe": uses})
    res["kernels"] = out
    q = [k["ratio"] for k in out if k["ratio"]]
    if q:
        res["kernels_geomean"] = statistics.geometric_mean(q)
    h = ["kernel", "sizes", "nvcc ms", "Rust ms", "Rust/nvcc", "regs nvcc", "regs Rust", "unsafe", "check", f"goal <= {GOAL_KERNEL}"]
    al = ["l", "l", "r", "r", "r", "r", "r", "l", "l", "l"]
    gm = f"\ngeometric mean of Rust/nvcc: {res['kernels_geomean']:.3f}" if q else ""
    console.append("Kernels (CUDA events around each launch, median of 50 after 5 warm-ups):\n" + table(h, rows, al) + gm)
    md.append("### Kernels: Rust against nvcc, same algorithm\n\n" + md_table(h, rows, al) + gm.replace("\n", "\n\n"))


def ports_section(work, res, md, console):
    """The Rust-CUDA kernels ported to sluice (ports/): each gemm against the same CUDA C++,
    vecadd with and without its bounds check, sha256's rate, and whether the check passed."""

    cuda, rust = load_kernel_rows(os.path.join(work, "ports-cuda.csv")), load_kernel_rows(os.path.join(work, "ports-rust.csv"))
    check = lines(os.path.join(work, "ports-check.txt"))
    if not cuda and not rust and not check:
        return
    out = {"gemm": [], "vecadd": None, "sha256": None, "check_ok": None, "check": check}
    if check:
        out["check_ok"] = check[-1].startswith("every kernel matches")
    rows = []
    # The ports are Rust-CUDA's `unsafe fn` kernels as ported (raw output pointers, `static mut`
    # tiles): the column says whether a body removes its bounds checks (`get_unchecked`,
    # `assert_unchecked`).
    unsafety = kernel_sources(SOURCES)
    for key in sorted(k for k in set(cuda) | set(rust) if k[0].startswith("gemm")):
        # gemm_tiled_unchecked (no bounds checks) is compared with the same CUDA C++ kernel.
        c, r = cuda.get(key) or cuda.get((key[0].replace("_unchecked", ""), key[1])), rust.get(key)
        q = ratio(r and r["median_ms"], c and c["median_ms"])
        m, n, k = (int(x) for x in key[1].split("x"))
        gflops = lambda e: e and 2.0 * m * n * k / (e["median_ms"] * 1e6)
        same = c is not None and r is not None and abs(r["check"] - c["check"]) <= 1e-6 * max(1.0, abs(c["check"]))
        goal = key[0] == "gemm_tiled"
        verdict = "-" if q is None or not goal else ("ok" if q <= GOAL_PORTS_GEMM else f"over {GOAL_PORTS_GEMM}x")
        uses = unsafety.get(key[0], (None, None))[1]
        rows.append([key[0], key[1], fmt(c and c["median_ms"], 4), fmt(r and r["median_ms"], 4), fmt(q),
                     fmt(gflops(r), 0), regs(c), regs(r), "-" if uses is None else ("yes" if uses else "no"),
                     "same" if same else "DIFF", verdict])
        out["gemm"].append({"kernel": key[0], "sizes": key[1], "cuda": c, "rust": r, "ratio": q, "check_same": same,
                            "goal": GOAL_PORTS_GEMM if goal else None})
    h = ["kernel", "sizes", "CUDA C++ ms", "sluice ms", "sluice/C++", "sluice GFLOP/s", "regs C++", "regs sluice",
         "get_unchecked", "check", f"goal <= {GOAL_PORTS_GEMM}"]
    al = ["l", "l", "r", "r", "r", "r", "r", "r", "l", "l", "l"]
    extra = []
    checked = [(s_, r) for (k_, s_), r in rust.items() if k_ == "vecadd"]
    for sizes, r in checked:
        u = rust.get(("vecadd_unchecked", sizes))
        cost = ratio(r["median_ms"], u and u["median_ms"])
        out["vecadd"] = {"sizes": sizes, "checked_ms": r["median_ms"], "unchecked_ms": u and u["median_ms"], "ratio": cost}
        n = int(sizes)
        gbps = 3 * 4 * n / (r["median_ms"] * 1e6)
        extra.append(f"vecadd {sizes}: checked index {fmt(r['median_ms'], 4)} ms ({gbps:.0f} GB/s), get_unchecked "
                     f"{fmt(u and u['median_ms'], 4)} ms: the bounds check costs "
                     + ("-" if cost is None else f"{(cost - 1) * 100:+.1f}%"))
    for (k_, sizes), r in rust.items():
        if k_ == "sha256":
            count = int(sizes.split("x")[0])
            out["sha256"] = {"sizes": sizes, "median_ms": r["median_ms"], "mhash_per_s": count / (r["median_ms"] * 1e3)}
            extra.append(f"sha256 ({sizes.replace('x', ' messages, ', 1)} B, sha2 crate on the GPU): "
                         f"{fmt(r['median_ms'], 4)} ms, {count / (r['median_ms'] * 1e3):.0f} M hashes/s")
    if out["check_ok"] is not None:
        extra.append("sluice-ports check: " + ("every kernel matches its reference" if out["check_ok"] else "MISMATCH (see ports-check.txt)"))
    res["ports"] = out
    console.append("Ports (Rust-CUDA kernels on sluice, ports/; CUDA events around each launch, best round's median):\n"
                   + table(h, rows, al) + ("\n" + "\n".join(extra) if extra else ""))
    md.append("### Ports: Rust-CUDA kernels on sluice against CUDA C++\n\n" + md_table(h, rows, al)
              + ("\n\n" + "\n".join(f"* {e}" for e in extra) if extra else ""))


def launch_section(work, res, md, console):
    data = {}
    for l in lines(os.path.join(work, "launch.txt")):
        if l.startswith("csv-launch,"):
            _, launches, rounds, path, ns, q = l.split(",")
            # `launches` is "20000", or "20000/100" for batches of 100 between synchronizations.
            data.setdefault(launches, {})[path] = {"ns": float(ns), "ratio": float(q), "rounds": int(rounds)}
    if not data:
        return
    res["launch"] = data
    rows = []
    for launches in sorted(data, key=lambda k: ("/" in k, -int(k.split("/")[0]))):
        d = data[launches]
        worst = max((v["ratio"] for p, v in d.items() if not p.startswith("raw")), default=None)
        cells = [launches.replace("/", " in batches of "), fmt(d.get("raw", {}).get("ns"), 0)]
        for p in ("raw-ctx", "function", "kernel", "kernel-args"):
            v = d.get(p)
            cells.append(f"{v['ns']:.0f} ({v['ratio']:.3f}x)" if v else "-")
        cells.append("-" if worst is None else ("ok" if worst <= GOAL_LAUNCH else f"MISS {worst:.3f}x"))
        rows.append(cells)
    h = ["launches/round", "raw cuLaunchKernel ns", "raw after cuCtxGetCurrent", "sluice Function", "sluice Kernel", "Kernel + args", f"goal <= {GOAL_LAUNCH}x"]
    console.append("Launch overhead (host enqueue ns per launch, median of rounds):\n" + table(h, rows))
    md.append("### Launch overhead: host ns per launch (ratio to raw `cuLaunchKernel`)\n\n" + md_table(h, rows))


def scopes_section(work, res, md, console):
    out, rows = [], []
    for l in lines(os.path.join(work, "scopes.csv")):
        if l.startswith("#") or not l.startswith("scopes,"):
            continue
        _, config, pattern, n, per_round, raw, sl, verified = l.split(",", 7)
        raw_us = [float(x) for x in raw.split(";") if x]
        sl_us = [float(x) for x in sl.split(";") if x]
        n = int(n)
        e = {"config": config, "pattern": pattern, "lanes": n, "scopes_per_round": int(per_round), "raw_us_per_scope": raw_us,
             "sluice_us_per_scope": sl_us, "verified": verified}
        out.append(e)
        if VS_GRAPH.match(pattern):
            continue  # a natural program against a raw graph, not a per-scope cost: its own table
        mr, ms = median(raw_us), median(sl_us)
        per_lane = (ms - mr) / n
        per_lane_min = (min(sl_us) - min(raw_us)) / n
        ok = per_lane <= GOAL_SCOPE_US_PER_LANE
        e["beyond_raw_us_per_lane_median"] = per_lane
        e["beyond_raw_us_per_lane_min"] = per_lane_min
        rows.append(
            [config, pattern, n, fmt(mr, 1), fmt(ms, 1), fmt(ms - mr, 1), f"{per_lane:.2f} / {per_lane_min:.2f}", verified,
             "ok" if ok else "MISS"]
        )
    if not out:
        return
    res["scopes"] = out
    h = ["config", "pattern", "lanes", "raw µs/iter", "sluice µs/scope", "beyond raw µs", "µs/lane med / min", "checks", f"goal <= {GOAL_SCOPE_US_PER_LANE} µs/lane"]
    al = ["l", "l", "r", "r", "r", "r", "r", "l", "l"]
    console.append("Per-scope cost (loops of scopes over persistent inputs against the raw-driver loop; medians of rounds):\n" + table(h, rows, al))
    md.append("### Per-scope cost beyond a raw-driver loop\n\n" + md_table(h, rows, al))


def natural_vs_graph_section(res, md, console):
    """The natural program against raw-driver graphs of the chunked fan-in (seed.cu's
    graph-chunked-kK through cuGraphLaunch, the same kernel), in one process, loops of the two
    alternating: per config the chunk size whose graph was fastest, and the median over rounds
    of natural / graph, each round's two loops run back to back. Other natural variants
    (`bench_scopes --natural`) meet the fastest graph only, one row each."""
    groups = {}
    for e in res.get("scopes", []):
        m = VS_GRAPH.match(e["pattern"])
        if m:
            groups.setdefault((e["config"], m.group(1)), []).append((int(m.group(2)), e))
    if not groups:
        return
    out, rows = {}, []
    for c in order({c for c, _ in groups}):
        for variant in sorted((v for cc, v in groups if cc == c), key=lambda v: (v != "natural", v)):
            es = groups[(c, variant)]
            # A graph that failed its check is no bar (it may have skipped work).
            checked = [ke for ke in es if ke[1]["verified"] == "ok"] or es
            k, best = min(checked, key=lambda ke: median(ke[1]["raw_us_per_scope"]))
            name = lambda k, e: "graph-fan-in" if k == e["lanes"] else f"graph-chunked-k{k}"
            qs = [n / r for r, n in zip(best["raw_us_per_scope"], best["sluice_us_per_scope"])]
            q = median(qs)
            ok = all(e["verified"] == "ok" for _, e in es)
            out.setdefault(c, {})[variant] = {
                "graph": name(k, best),
                "graph_us": median(best["raw_us_per_scope"]),
                "natural_us": median(best["sluice_us_per_scope"]),
                "natural_over_graph_rounds": qs,
                "natural_over_graph_median": q,
                "checks_ok": ok,
            }
            others = ", ".join(f"{name(kk, e)} {median(e['raw_us_per_scope']):.1f}" + ("" if e["verified"] == "ok" else " (check FAILED)")
                               for kk, e in es if e is not best)
            rows.append([c, variant, f"{name(k, best)} {median(best['raw_us_per_scope']):.1f}", fmt(median(best["sluice_us_per_scope"]), 1),
                         f"{q:.3f} ({min(qs):.3f}-{max(qs):.3f})", others or "-", "ok" if ok else "FAIL",
                         "ok" if q <= GOAL_NATURAL else f"MISS {q:.3f}x"])
    res["natural_vs_graph"] = out
    h = ["config", "program", "fastest raw graph µs", "natural µs", "natural/graph, median of rounds (range)", "other raw graphs µs",
         "checks", f"goal <= {GOAL_NATURAL}x"]
    al = ["l", "l", "l", "r", "r", "l", "l", "l"]
    console.append("The natural program against raw-driver graphs of the chunked fan-in, in one process (same kernel, loops alternating):\n"
                   + table(h, rows, al))
    md.append("### The natural program against a raw-driver graph, one process\n\n" + md_table(h, rows, al))


def mem_section(work, res, md, console):
    out = []
    for l in lines(os.path.join(work, "mem.csv")):
        if not l.startswith("mem,"):
            continue
        _, config, variant, replays, d0, d1, r0, r1, total, verified = l.split(",", 9)
        e = {
            "config": config,
            "variant": variant,
            "replays": int(replays),
            "device_free_before": int(d0),
            "device_free_after": int(d1),
            "device_growth_bytes": int(d0) - int(d1),
            "rss_kib_before": int(r0),
            "rss_kib_after": int(r1),
            "rss_growth_kib": int(r1) - int(r0),
            "total_ms": float(total),
            "us_per_replay": float(total) * 1e3 / max(1, int(replays)),
            "verified": verified,
        }
        e["no_growth"] = e["device_growth_bytes"] <= 0 and e["rss_growth_kib"] <= 1024
        out.append(e)
    if not out:
        return
    res["graph_memory"] = out
    rows = [
        [e["config"], e["variant"], e["replays"], f"{e['us_per_replay']:.1f}", e["device_growth_bytes"], e["rss_growth_kib"], e["verified"],
         "ok" if e["no_growth"] else "GROWTH"]
        for e in out
    ]
    h = ["config", "graph", "replays", "µs/replay", "device growth B", "host RSS growth KiB", "checks", "no growth"]
    console.append("Graph replays, memory (one scope per replay; device after trim_memory_pool):\n" + table(h, rows))
    md.append("### 10,000 graph replays: memory before and after\n\n" + md_table(h, rows))


def graph_section(work, res, md, console, seed_best):
    runs = parse_runs([os.path.join(work, "graph-cuda.csv"), os.path.join(work, "graph-rust.csv")])
    if not runs:
        return
    cuda, rust = by_config(runs, "cuda"), by_config(runs, "rust")
    out, rows = {}, []
    for c in order(set(cuda) | set(rust)):
        cv, rv = cuda.get(c, {}), rust.get(c, {})
        cb = min(((r["median_ms"], v) for v, r in cv.items() if v.startswith("graph-")), default=(None, None))
        sb = min(((r["median_ms"], v) for v, r in rv.items() if v.startswith("graph-") and not v.endswith("-many")), default=(None, None))
        mb = min(((r["median_ms"], v) for v, r in rv.items() if v.endswith("-many")), default=(None, None))
        q, qm = ratio(sb[0], cb[0]), ratio(mb[0], cb[0])
        nongraph = seed_best.get(c)
        goals = []
        if q is not None:
            goals.append("ok" if q <= GOAL_GRAPH else f"MISS {q:.3f}x C++")
        if nongraph is not None and sb[0] is not None and sb[0] > nongraph:
            goals.append("MISS: slower than sluice non-graph")
        if c in GOAL_GRAPH_ABS_MS and sb[0] is not None and sb[0] > GOAL_GRAPH_ABS_MS[c]:
            goals.append(f"MISS > {GOAL_GRAPH_ABS_MS[c]} ms")
        shapes = {(r["rows"], r["cols"], r["sources"]) for r in list(cv.values()) + list(rv.values())}
        checks = all(r["ok"] for r in list(cv.values()) + list(rv.values())) and len(shapes) == 1
        verdict = "ok" if goals and all(g == "ok" for g in goals) else "; ".join(g for g in goals if g != "ok") or "-"
        if not checks:
            verdict = "INVALID: a check failed; " + verdict
        out[c] = {
            "cuda": {v: strip(r) for v, r in cv.items()},
            "rust": {v: strip(r) for v, r in rv.items()},
            "best_cuda": cb[1],
            "best_cuda_ms": cb[0],
            "best_sluice_one_scope_per_replay": sb[1],
            "best_sluice_one_scope_per_replay_ms": sb[0],
            "best_sluice_many_per_scope": mb[1],
            "best_sluice_many_per_scope_ms": mb[0],
            "ratio": q,
            "ratio_many": qm,
            "sluice_best_non_graph_ms": nongraph,
            "checks_ok": checks,
            "verdict": verdict,
        }
        rows.append(
            [c, f"{cb[1]} {fmt(cb[0])}", f"{sb[1]} {fmt(sb[0])}", fmt(q), f"{fmt(mb[0])} ({fmt(qm)})", fmt(nongraph), "ok" if checks else "FAIL",
             verdict]
        )
    res["graph"] = out
    h = ["config", "C++ graph best, ms", "sluice graph (scope per replay), ms", "sluice/C++", "many per scope, ms (/C++)",
         "sluice non-graph best ms", "checks", f"goals (<= {GOAL_GRAPH}x C++, <= non-graph)"]
    al = ["l", "l", "l", "r", "r", "r", "l", "l"]
    console.append("Graph replay (medians; replay + wait on the host clock):\n" + table(h, rows, al))
    md.append("### Graph replay (medians, ms)\n\n" + md_table(h, rows, al))


def variant_order(v):
    fixed = ["one-stream", "devsync", "per-stream", "fan-in"]
    if v in fixed:
        return (0, fixed.index(v), 0)
    if v.startswith("chunked-k"):
        return (1, 0, -int(v[len("chunked-k"):] or 0))
    return (2, 0, v)


def strip(r):
    return {k: r[k] for k in ("rows", "cols", "sources", "median_ms", "min_ms", "rounds", "checks", "verified", "samples")}


def seed_section(work, res, md):
    """Returns sluice's best non-graph median per configuration, the console tables (every
    variant; the summary) and whether every goal was met."""
    runs = parse_runs([os.path.join(work, "seed-cuda.csv"), os.path.join(work, "seed-rust.csv")])
    if not runs:
        return {}, None, None, None
    cuda, rust = by_config(runs, "cuda"), by_config(runs, "rust")
    out, rows, detail_rows, best_nongraph = {}, [], [], {}
    all_goals = True
    for c in order(set(cuda) | set(rust)):
        cv, rv = cuda.get(c, {}), rust.get(c, {})
        shapes = {(r["rows"], r["cols"], r["sources"]) for r in list(cv.values()) + list(rv.values())}
        rows_, cols, sources = sorted(shapes)[0]
        cb_med, cb_name = best(cv, CPP_HOST_VARIANTS)
        cb_min, _ = best(cv, CPP_HOST_VARIANTS, "min_ms")
        sb_med, sb_name = best(rv, SLUICE_HOST_VARIANTS)
        sb_min, _ = best(rv, SLUICE_HOST_VARIANTS, "min_ms")
        if sb_med is not None:
            best_nongraph[c] = sb_med

        def bound(key):
            ks = [cv[v][key] for v in ("kernels-1", "kernels-n") if v in cv]
            if not ks or "copy-only" not in cv:
                return None
            k, cp = min(ks), cv["copy-only"][key]
            return max(k, cp) + min(k, cp) / cols

        b_med, b_min = bound("median_ms"), bound("min_ms")
        q_med, q_min = ratio(sb_med, cb_med), ratio(sb_min, cb_min)
        qb_med, qb_min = ratio(sb_med, b_med), ratio(sb_min, b_min)
        cpp_b = ratio(cb_med, b_med)
        kern = ratio(rv.get("kernels-n", {}).get("median_ms"), cv.get("kernels-n", {}).get("median_ms"))
        checks_ok = all(r["ok"] for r in list(cv.values()) + list(rv.values())) and len(shapes) == 1
        same = None
        if cb_name and sb_name:
            a, b = cv[cb_name]["checks"][-1], rv[sb_name]["checks"][-1]
            same = abs(a - b) <= 1e-6 * max(1.0, abs(a))
        goals = []
        if q_med is not None:
            goals.append("ok" if q_med <= GOAL_VS_CPP else f"MISS {q_med:.3f}x C++")
        if qb_med is not None:
            goals.append("ok" if qb_med <= GOAL_VS_BOUND else f"MISS {qb_med:.3f}x bound")
        verdict = "ok" if goals and all(g == "ok" for g in goals) else "; ".join(g for g in goals if g != "ok") or "-"
        if not checks_ok:
            verdict = "INVALID: a check failed; " + verdict
        all_goals &= verdict == "ok"
        out[c] = {
            "rows": rows_,
            "cols": cols,
            "sources": sources,
            "cuda": {v: strip(r) for v, r in cv.items()},
            "rust": {v: strip(r) for v, r in rv.items()},
            "best_cuda": cb_name,
            "best_cuda_median_ms": cb_med,
            "best_cuda_min_ms": cb_min,
            "best_sluice": sb_name,
            "best_sluice_median_ms": sb_med,
            "best_sluice_min_ms": sb_min,
            "bound_median_ms": b_med,
            "bound_min_ms": b_min,
            "sluice_over_cuda_median": q_med,
            "sluice_over_cuda_min": q_min,
            "sluice_over_bound_median": qb_med,
            "sluice_over_bound_min": qb_min,
            "cuda_over_bound_median": cpp_b,
            "kernel_rust_over_nvcc_n_streams": kern,
            "checks_ok": checks_ok,
            "sizes_agree": len(shapes) == 1,
            "checksums_agree": same,
            "verdict": verdict,
        }
        rows.append(
            [
                c,
                f"{cb_name} {fmt(cb_med)} / {fmt(cb_min)}",
                f"{sb_name} {fmt(sb_med)} / {fmt(sb_min)}",
                f"{fmt(q_med)} / {fmt(q_min)}",
                f"{fmt(b_med)} / {fmt(b_min)}",
                f"{fmt(qb_med)} / {fmt(qb_min)}",
                fmt(cpp_b),
                fmt(kern),
                ("ok" if checks_ok else "FAIL") + ("" if same in (None, True) else " (sums differ)") + ("" if len(shapes) == 1 else " (SIZES DIFFER)"),
                verdict,
            ]
        )
        # One row per program: sluice's per-lane copies are C++'s per-stream copies.
        names = {"per-lane": "per-stream"}
        rv_rows = {names.get(v, v): r for v, r in rv.items()}
        for v in sorted(set(cv) | set(rv_rows), key=variant_order):
            cells = [c, v + (" / per-lane" if v == "per-stream" and v in rv_rows else "")]
            for d in (cv, rv_rows):
                r = d.get(v)
                cells.append(f"{fmt(r['median_ms'])} / {fmt(r['min_ms'])}" if r else "-")
            bad = [f"{side}: {','.join(sorted(set(d[v]['verified'])))}" for side, d in (("C++", cv), ("sluice", rv_rows)) if v in d and not d[v]["ok"]]
            cells.append("; ".join(bad) if bad else "ok")
            detail_rows.append(cells)
    res["seed"] = out
    dh = ["config", "variant", "C++ med / min ms", "sluice med / min ms", "checks"]
    detail_console = "Seed workload, every variant (host clock, first launch to last wait; all rounds pooled):\n" + table(
        dh, detail_rows, ["l", "l", "r", "r", "l"]
    )
    md.append("### Seed workload, every variant (ms)\n\n" + md_table(dh, detail_rows, ["l", "l", "r", "r", "l"]))
    h = ["config", "best C++ (non-graph) med / min ms", "sluice best med / min ms", "sluice/C++ med / min", "bound med / min ms",
         "sluice/bound med / min", "C++/bound", "kernel Rust/nvcc", "checks", f"goals (<= {GOAL_VS_CPP}x C++, <= {GOAL_VS_BOUND}x bound)"]
    al = ["l", "l", "l", "r", "r", "r", "r", "r", "l", "l"]
    summary_console = "Seed workload (sluice's best path against the best hand-written CUDA C++ and the overlap bound):\n" + table(h, rows, al)
    md.append("### Seed workload: sluice's best path, the best C++ and the bound\n\n" + md_table(h, rows, al))
    return best_nongraph, detail_console, summary_console, all_goals


def natural_section(work, res, md, console):
    """Issue 23's headline: the README's program (a fresh scope per repetition, per-lane
    copies, inputs uploaded once), as a user runs it, against the best hand-written CUDA C++
    of any kind (plain streams, fan-ins, chunked fan-ins, graphs), with the levers taken
    apart: no graphs (deferred submission and merged copies only), nothing (direct)."""
    runs = parse_runs([os.path.join(work, "seed-cuda.csv"), os.path.join(work, "seed-rust.csv")])
    cuda, rust = by_config(runs, "cuda"), by_config(runs, "rust")
    out, rows = {}, []
    for c in order(set(cuda) | set(rust)):
        cv, rv = cuda.get(c, {}), rust.get(c, {})
        if "natural" not in rv:
            continue
        progs = {v: r for v, r in cv.items() if v not in CPP_NOT_A_PROGRAM and r["samples"]}
        cb = min(((r["median_ms"], v) for v, r in progs.items()), default=(None, None))
        cb_min = min((r["min_ms"] for r in progs.values()), default=None)
        nat = {v: rv[v] for v in NATURAL_VARIANTS if v in rv}
        sweep = {v[len("natural-merge-"):]: rv[v] for v in rv if v.startswith("natural-merge-")}
        n_med, n_min = nat["natural"]["median_ms"], nat["natural"]["min_ms"]
        q, q_min = ratio(n_med, cb[0]), ratio(n_min, cb_min)
        hand = min(((r["median_ms"], v) for v, r in rv.items() if is_host_variant(v, SLUICE_HOST_VARIANTS) and r["samples"]), default=(None, None))
        checks = all(r["ok"] for r in nat.values()) and (cb[1] is None or progs[cb[1]]["ok"])
        same = None
        if cb[1]:
            a, b = progs[cb[1]]["checks"][-1], nat["natural"]["checks"][-1]
            same = abs(a - b) <= 1e-6 * max(1.0, abs(a))
        verdict = "-" if q is None else ("ok (moonshot: <= 1.00)" if q <= 1.0 else "ok" if q <= GOAL_NATURAL else f"MISS {q:.3f}x")
        if not checks:
            verdict = "INVALID: a check failed; " + verdict
        out[c] = {
            "best_cuda": cb[1],
            "best_cuda_median_ms": cb[0],
            "best_cuda_min_ms": cb_min,
            "natural": {v: strip(r) for v, r in nat.items()},
            "natural_merge_sweep": {k: strip(r) for k, r in sweep.items()},
            "natural_median_ms": n_med,
            "natural_min_ms": n_min,
            "natural_over_cuda_median": q,
            "natural_over_cuda_min": q_min,
            "natural_nograph_over_cuda": ratio(nat.get("natural-nograph", {}).get("median_ms"), cb[0]),
            "natural_direct_over_cuda": ratio(nat.get("natural-direct", {}).get("median_ms"), cb[0]),
            "best_sluice_hand_written": hand[1],
            "best_sluice_hand_written_ms": hand[0],
            "checks_ok": checks,
            "checksums_agree": same,
            "verdict": verdict,
        }
        nd = lambda v: f"{fmt(nat[v]['median_ms'])} ({fmt(ratio(nat[v]['median_ms'], cb[0]))})" if v in nat else "-"
        sw = ", ".join(f"{k} {fmt(r['median_ms'])}" for k, r in sorted(sweep.items(), key=lambda kv: (kv[0] != "none", len(kv[0]), kv[0]))) or "-"
        rows.append([c, f"{cb[1]} {fmt(cb[0])} / {fmt(cb_min)}", f"{fmt(n_med)} / {fmt(n_min)}", f"{fmt(q)} / {fmt(q_min)}",
                     nd("natural-nograph"), nd("natural-direct"), sw, f"{hand[1]} {fmt(hand[0])}",
                     ("ok" if checks else "FAIL") + ("" if same in (None, True) else " (sums differ)"), verdict])
    if not out:
        return None
    res["natural"] = out
    h = ["config", "best C++ (any, graphs included) med / min ms", "natural med / min ms", "natural/C++ med / min",
         "no graphs ms (/C++)", "direct ms (/C++)", "other merge sizes, med ms", "sluice best hand-written ms", "checks",
         f"goal <= {GOAL_NATURAL}x"]
    al = ["l", "l", "r", "r", "r", "r", "l", "l", "l", "l"]
    md.append("### The natural program against the best hand-written C++ (issue 23)\n\n"
              "The README's program as a user runs it: a fresh `scope` per repetition, per-lane copies, the output "
              "allocated in the scope, inputs uploaded once. *no graphs*: deferred submission and merged copies only; "
              "*direct*: one driver call per operation (sluice before issue 23).\n\n" + md_table(h, rows, al))
    return "The natural program (README's, a fresh scope per repetition) against the best C++ of any kind, graphs included:\n" + table(h, rows, al)


def stream_section(work, res, md):
    out = []
    for l in lines(os.path.join(work, "stream.csv")):
        if not l.startswith("stream,"):
            continue
        f = l.split(",")
        if len(f) < 14:
            continue
        e = {
            "batch_mib": int(f[1]), "batches": int(f[2]), "slots": int(f[3]), "gib_each_way": float(f[4]),
            "stream_ms": float(f[5]), "stream_min_ms": float(f[6]), "stream_gbps": float(f[7]), "bound_ms": float(f[8]),
            "bound_gbps": float(f[9]), "h2d_gbps": float(f[10]), "d2h_gbps": float(f[11]), "ratio": float(f[12]), "verified": f[13],
        }
        e["ok"] = e["ratio"] >= GOAL_STREAM and e["verified"] == "ok"
        out.append(e)
    if not out:
        return None
    res["stream"] = out
    h = ["batches", "GiB each way", "stream ms", "stream GB/s (both ways)", "bound GB/s (one copy each way at once)",
         "up / down alone GB/s", "stream/bound", "checks", f"goal >= {GOAL_STREAM}"]
    rows = [[f"{e['batches']} x {e['batch_mib']} MiB, {e['slots']} slots", fmt(e["gib_each_way"], 2), fmt(e["stream_ms"], 2),
             fmt(e["stream_gbps"], 1), fmt(e["bound_gbps"], 1), f"{fmt(e['h2d_gbps'], 1)} / {fmt(e['d2h_gbps'], 1)}",
             fmt(e["ratio"]), e["verified"], "ok" if e["ok"] else "MISS"] for e in out]
    md.append("### Streaming batches through the GPU against the bidirectional copy bound\n\n" + md_table(h, rows))
    return "Streaming (stream_batches: upload k+1, compute k, download k-1; one scope) against the copy bound:\n" + table(h, rows)


def goals_at_a_glance(res):
    """One line per goal: what, the measured worst case, the verdict."""
    out = []

    def add(what, measured, ok):
        out.append({"what": what, "measured": measured, "verdict": "-" if ok is None else ("ok" if ok else "MISS")})

    natural = res.get("natural", {})
    if natural:
        worst = max(((v["natural_over_cuda_median"], c) for c, v in natural.items() if v["natural_over_cuda_median"] is not None), default=None)
        if worst:
            add(f"natural program / best C++ (graphs included) <= {GOAL_NATURAL}", f"worst {worst[0]:.3f} ({worst[1]})", worst[0] <= GOAL_NATURAL)
        valid = all(v["checks_ok"] for v in natural.values())
        add("natural program: every result checked", "all checks passed" if valid else "a check FAILED", valid)
    nvg = {c: v["natural"] for c, v in res.get("natural_vs_graph", {}).items() if "natural" in v}
    if nvg:
        worst = max((v["natural_over_graph_median"], c) for c, v in nvg.items())
        checks = all(v["checks_ok"] for v in nvg.values())
        add(f"natural / raw graph, one process <= {GOAL_NATURAL}", f"worst {worst[0]:.3f} ({worst[1]})" + ("" if checks else "; a check FAILED"),
            worst[0] <= GOAL_NATURAL and checks)
    for e in res.get("stream", []):
        add(f"streaming >= {GOAL_STREAM}x the copy bound", f"{e['ratio']:.3f} ({e['stream_gbps']:.1f} of {e['bound_gbps']:.1f} GB/s)", e["ok"])
    seed = res.get("seed", {})
    if seed:
        worst_c = max(((v["sluice_over_cuda_median"], c) for c, v in seed.items() if v["sluice_over_cuda_median"] is not None), default=None)
        worst_b = max(((v["sluice_over_bound_median"], c) for c, v in seed.items() if v["sluice_over_bound_median"] is not None), default=None)
        valid = all(v["checks_ok"] for v in seed.values())
        if worst_c:
            add(f"seed: sluice/C++ <= {GOAL_VS_CPP}", f"worst {worst_c[0]:.3f} ({worst_c[1]})", worst_c[0] <= GOAL_VS_CPP)
        if worst_b:
            add(f"seed: sluice/bound <= {GOAL_VS_BOUND}", f"worst {worst_b[0]:.3f} ({worst_b[1]})", worst_b[0] <= GOAL_VS_BOUND)
        add("seed: every result checked", "all checks passed" if valid else "a check FAILED (see the summary)", valid)
    graph = res.get("graph", {})
    if graph:
        qs = [(v["ratio"], c) for c, v in graph.items() if v["ratio"] is not None]
        worst = max(qs, default=None)
        if worst:
            add(f"graph: sluice/C++ <= {GOAL_GRAPH}", f"worst {worst[0]:.3f} ({worst[1]})", worst[0] <= GOAL_GRAPH)
        gvalid = all(v["checks_ok"] for v in graph.values())
        add("graph: every result checked", "all checks passed" if gvalid else "a check FAILED (see the graph table)", gvalid)
        slower = [c for c, v in graph.items() if v["sluice_best_non_graph_ms"] is not None and v["best_sluice_one_scope_per_replay_ms"] is not None
                  and v["best_sluice_one_scope_per_replay_ms"] > v["sluice_best_non_graph_ms"]]
        if any(v["sluice_best_non_graph_ms"] is not None for v in graph.values()):
            add("graph: never slower than non-graph", "slower in " + ", ".join(slower) if slower else "faster everywhere", not slower)
        for c, limit in GOAL_GRAPH_ABS_MS.items():
            ms = graph.get(c, {}).get("best_sluice_one_scope_per_replay_ms")
            if ms is not None:
                add(f"graph: {c} <= {limit} ms", f"{ms:.3f} ms", ms <= limit)
    scopes = [e for e in res.get("scopes", []) if e["pattern"] != "natural" and not VS_GRAPH.match(e["pattern"])]
    if scopes:
        worst = max((e["beyond_raw_us_per_lane_median"], f"{e['config']} {e['pattern']}") for e in scopes)
        add(f"per-scope cost <= {GOAL_SCOPE_US_PER_LANE} us/lane", f"worst {worst[0]:.2f} us ({worst[1]})", worst[0] <= GOAL_SCOPE_US_PER_LANE)
    launch = res.get("launch", {})
    if launch:
        worst = max((v["ratio"], f"{p}, {n} launches") for n, d in launch.items() for p, v in d.items() if not p.startswith("raw"))
        add(f"launch <= {GOAL_LAUNCH}x raw", f"worst {worst[0]:.3f} ({worst[1]})", worst[0] <= GOAL_LAUNCH)
    for e in res.get("graph_memory", []):
        add(f"{e['replays']} replays: no growth", f"device {e['device_growth_bytes']} B, host {e['rss_growth_kib']} KiB", e["no_growth"])
    ports = res.get("ports", {})
    tiled = [g for g in ports.get("gemm", []) if g["goal"] and g["ratio"] is not None]
    if tiled:
        worst = max((g["ratio"], g["sizes"]) for g in tiled)
        add(f"ports: gemm_tiled sluice/C++ <= {GOAL_PORTS_GEMM}", f"worst {worst[0]:.3f} ({worst[1]})", worst[0] <= GOAL_PORTS_GEMM)
    if ports.get("check_ok") is not None:
        add("ports: sluice-ports check", "every kernel matches" if ports["check_ok"] else "a kernel differs", ports["check_ok"])
    if ports.get("vecadd") and ports["vecadd"]["ratio"] is not None:
        add("ports: vecadd bounds-check cost", f"{(ports['vecadd']['ratio'] - 1) * 100:+.1f}%", None)
    kernels = [k for k in res.get("kernels", []) if k["ratio"] is not None]
    if kernels:
        worst = max((k["ratio"], k["kernel"]) for k in kernels)
        add(f"kernels: Rust/nvcc <= {GOAL_KERNEL}", f"worst {worst[0]:.3f} ({worst[1]})", worst[0] <= GOAL_KERNEL)
        gm = res.get("kernels_geomean")
        if gm is not None:
            add(f"kernels: geometric mean <= {GOAL_KERNEL_GEOMEAN}", f"{gm:.3f}", gm <= GOAL_KERNEL_GEOMEAN)
        risky = [k["kernel"] for k in kernels if k.get("unsafe")]
        add("kernels: measured without unsafe", "all safe" if not risky else "unsafe in " + ", ".join(sorted(set(risky))), not risky)
    return out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--work", required=True)
    ap.add_argument("--out", required=True)
    ap.add_argument("--mode", default="all")
    ap.add_argument("--sources", nargs="*", default=[], help="kernel sources, for the `unsafe` column")
    a = ap.parse_args()
    SOURCES.extend(a.sources)
    res = {"date": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC"), "mode": a.mode, "devices": {}}
    smi = lines(os.path.join(a.work, "nvidia-smi.txt"))
    res["nvidia_smi"] = smi[0] if smi else None
    for name in ("seed-cuda.csv", "seed-rust.csv", "graph-cuda.csv", "graph-rust.csv"):
        parse_device(os.path.join(a.work, name), res["devices"])
    dev = next(iter(res["devices"].values()), {})
    device = res["nvidia_smi"] or dev.get("name", "unknown device")
    header = (
        f"## Latest run: {res['date']}\n\n"
        f"Device: {device} (nvidia-smi: name, driver, memory); CUDA driver API {dev.get('driver', '?')}, "
        f"runtime {dev.get('runtime', '?')} (from seed.cu); `benches/run.sh` mode `{a.mode}`. Medians and mins "
        "over every timed repetition of every round; the goals and the method are in BENCHMARKS.md."
    )
    md = []
    console = []
    kernels_section(a.work, res, md, console)
    # The seed section is computed first (the graph goals need sluice's best non-graph path);
    # its summary is printed last.
    seed_md = []
    best_nongraph, detail, summary, ok = seed_section(a.work, res, seed_md)
    if detail:
        console.append(detail)
    launch_section(a.work, res, md, console)
    ports_section(a.work, res, md, console)
    scopes_section(a.work, res, md, console)
    graph_section(a.work, res, md, console, best_nongraph)
    mem_section(a.work, res, md, console)
    headline_md = []
    natural = natural_section(a.work, res, headline_md, console)
    natural_vs_graph_section(res, headline_md, console)
    stream = stream_section(a.work, res, headline_md)
    # bench.md: the seed summary first, then the other suites, the seed's every variant last.
    seed_summary = [m for m in seed_md if m.startswith("### Seed workload: sluice's best")]
    seed_detail = [m for m in seed_md if m not in seed_summary]
    goals = goals_at_a_glance(res)
    res["goals"] = goals
    gh = ["goal", "measured", "verdict"]
    grows = [[g["what"], g["measured"], g["verdict"]] for g in goals]
    goals_md = "### Goals at a glance\n\n" + md_table(gh, grows, ["l", "l", "l"]) if goals else None
    md = (
        [header]
        + ([goals_md] if goals_md else [])
        + headline_md
        + seed_summary
        + [m for m in md if not m.startswith("### Kernels")]
        + seed_detail
        + [m for m in md if m.startswith("### Kernels")]
    )
    os.makedirs(a.out, exist_ok=True)
    with open(os.path.join(a.out, "bench.json"), "w") as f:
        json.dump(res, f, indent=1)
    with open(os.path.join(a.out, "bench.md"), "w") as f:
        f.write("\n\n".join(md) + "\n")
    for block in console:
        print(block)
        print()
    print(f"date {res['date']}; device {device}")
    if summary:
        print(summary)
        print()
    for headline in (stream, natural):
        if headline:
            print(headline)
            print()
    if goals:
        print("goals at a glance:\n" + table(gh, grows, ["l", "l", "l"]))
    print(f"wrote {os.path.join(a.out, 'bench.json')} and {os.path.join(a.out, 'bench.md')}")


if __name__ == "__main__":
    sys.exit(main())
