#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
"""Time-to-accuracy table and plot from tta_runner.sh's results.

    tta_report.py DIR [SCENARIO...]

Reads DIR/SCENARIO/{gloo,exact,bounded}.{csv,json}, runs.tsv and cluster.txt;
writes DIR/table.md, DIR/table.csv and DIR/tta.png, and prints the table.

Columns: time to the target test accuracy in training wall time (steps'
time without the evaluations) and how much sooner than Gloo; steps taken;
step time P50/P99; gradient averaging time per step (first bucket handed over
to last reduced) P50, P99, P99/P50 and mean; the rest of the step (forward,
backward before the first bucket, optimizer: step time minus averaging),
mean; the compute (forward and the backward before the first bucket) P25, and
the share of steps in which it took more than twice that; the forward pass's
wall time over its CPU time, and how far apart the ranks start a step; share of gradient elements lost (all
ranks); test accuracy minus Gloo's at the last evaluation both runs made (the
same step); final test accuracy on all 10000 test images (at the run's last
step); CPU busy during the run (a run near 100% measured the CPUs, not the
links).

With tta_runner.sh --seeds the runs are WAY-sSEED.*: each run is compared with
Gloo's run of the same seed, and a row per way gives the median over the seeds
(a run that did not reach the target counts as slower than every run that did).
"""
import csv
import glob
import json
import os
import re
import statistics
import sys
import textwrap

WAYS = ("gloo", "exact", "bounded")


def read_csv(path):
    meta, rows = {}, []
    with open(path) as f:
        lines = []
        for line in f:
            if line.startswith("#"):
                k, _, v = line[1:].partition(":")
                meta[k.strip()] = v.strip()
            else:
                lines.append(line)
    for r in csv.DictReader(lines):
        rows.append(r)
    return meta, rows


def percentile(values, q):
    if not values:
        return float("nan")
    s = sorted(values)
    return s[min(len(s) - 1, max(0, -(-q * len(s) // 100) - 1))]


def load_run(d, way):
    path = os.path.join(d, way + ".csv")
    if not os.path.exists(path):
        return None
    meta, rows = read_csv(path)
    run = {"meta": meta, "rows": rows, "summary": {}}
    js = os.path.join(d, way + ".json")
    if os.path.exists(js):
        with open(js) as f:
            run["summary"] = json.load(f)
    evals = [(int(r["step"]), float(r["wall_s"]), float(r["test_acc"]))
             for r in rows if r.get("test_acc")]
    run["evals"] = evals
    comm = [float(r["comm_s"]) for r in rows if r.get("comm_s")]
    run["comm_p50"], run["comm_p99"] = percentile(comm, 50), percentile(comm, 99)
    run["comm_mean"] = statistics.mean(comm) if comm else None
    rest = [float(r["step_s"]) - float(r["comm_s"]) for r in rows
            if r.get("comm_s") and r.get("step_s")]
    run["rest_mean"] = statistics.mean(rest) if rest else None
    compute = [float(r["fwd_s"]) + float(r["pre_s"]) for r in rows
               if r.get("fwd_s") and r.get("pre_s")]
    run["compute_p25"] = percentile(compute, 25) if compute else None
    run["compute_slow"] = (sum(c > 2 * run["compute_p25"] for c in compute) / len(compute)
                           if compute else None)
    fwd = [(float(r["fwd_s"]), float(r["fwd_cpu_s"])) for r in rows
           if r.get("fwd_s") and r.get("fwd_cpu_s")]
    fwd_cpu = sum(c for _, c in fwd)
    run["fwd_stretch"] = sum(w for w, _ in fwd) / fwd_cpu if fwd_cpu > 0 else None
    lost = [float(r["lost_all"]) for r in rows if r.get("lost_all")]
    run["lost"] = sum(lost) / len(lost) if lost else None
    return run


def fmt(v, spec, none="-"):
    return none if v is None or v != v else format(v, spec)


def run_names(d):
    """The runs of a scenario directory, in order: WAY, or WAY-sSEED per seed."""
    names = [w for w in WAYS if os.path.exists(os.path.join(d, w + ".csv"))]
    seeded = []
    for path in glob.glob(os.path.join(d, "*-s*.csv")):
        m = re.fullmatch(r"(\w+)-s(\d+)", os.path.basename(path)[:-4])
        if m and m.group(1) in WAYS:
            seeded.append((int(m.group(2)), WAYS.index(m.group(1)), m.group(0)))
    return names + [n for _, _, n in sorted(seeded)]


def way_of(name):
    return name.split("-s")[0]


def gloo_of(name):
    """The Gloo run a run is compared with: the one of the same seed."""
    return "gloo" + name[len(way_of(name)):]


def run_row(sc, name, run, gloo, cpu):
    s = run["summary"]
    w = way_of(name)
    tta = s.get("tta_s")
    gloo_tta = gloo["summary"].get("tta_s") if gloo else None
    gloo_acc = {st: a for st, _, a in gloo["evals"]} if gloo else {}
    sooner = (100 * (gloo_tta - tta) / gloo_tta) if (tta and gloo_tta and w != "gloo") else None
    common = [st for st, _, _ in run["evals"] if st in gloo_acc]
    dacc = None
    if common and w != "gloo":
        k = max(common)
        dacc = 100 * (dict((st, a) for st, _, a in run["evals"])[k] - gloo_acc[k])
    ratio = run["comm_p99"] / run["comm_p50"] if run["comm_p50"] else None
    return {
        "scenario": sc, "way": name,
        "reached": "yes" if s.get("reached") else ("no" if s else "failed"),
        "tta_s": tta, "sooner_pct": sooner, "steps": s.get("tta_steps") or s.get("steps"),
        "step_p50_s": s.get("step_p50_s"), "step_p99_s": s.get("step_p99_s"),
        "comm_p50_s": run["comm_p50"], "comm_p99_s": run["comm_p99"],
        "comm_p99_over_p50": ratio,
        "comm_mean_s": run["comm_mean"], "rest_mean_s": run["rest_mean"],
        "compute_p25_s": run["compute_p25"],
        "compute_slow_pct": 100 * run["compute_slow"] if run["compute_slow"] is not None else None,
        "fwd_stretch": run["fwd_stretch"], "start_spread_ms": s.get("start_spread_p50_ms"),
        "lost_pct": 100 * run["lost"] if run["lost"] is not None else (0.0 if w != "bounded" else None),
        "dacc_pp": dacc, "final_acc": s.get("final_acc"),
        "cpu_busy_pct": float(cpu[name]["cpu_busy_pct"]) if name in cpu else None,
        "exit": cpu[name]["exit"] if name in cpu else None,
    }


def median_of(rows, key):
    vals = [r[key] for r in rows if r[key] is not None and r[key] == r[key]]
    return statistics.median(vals) if vals else None


def median_rows(sc, rows):
    """Per way, the median over its seeds; TTA counts a run that missed the target as
    slower than any that reached it, so a median that falls on one is "not reached"."""
    out, gloo_tta = [], None
    for w in WAYS:
        mine = [r for r in rows if way_of(r["way"]) == w]
        if len(mine) < 2:
            continue
        ttas = sorted(r["tta_s"] if r["reached"] == "yes" else float("inf") for r in mine)
        tta = statistics.median(ttas)
        tta = None if tta == float("inf") else tta
        if w == "gloo":
            gloo_tta = tta
        row = {k: median_of(mine, k) for k in mine[0] if k not in ("scenario", "way", "reached", "exit")}
        row.update({
            "scenario": sc, "way": "%s, median of %d" % (w, len(mine)),
            "reached": "%d of %d" % (sum(r["reached"] == "yes" for r in mine), len(mine)),
            "tta_s": tta, "exit": None,
            "sooner_pct": (100 * (gloo_tta - tta) / gloo_tta) if (tta and gloo_tta and w != "gloo") else None,
        })
        out.append(row)
    return out


def scenario_rows(out, sc):
    d = os.path.join(out, sc)
    runs = {name: load_run(d, name) for name in run_names(d)}
    cpu = {}
    if os.path.exists(os.path.join(d, "runs.tsv")):
        with open(os.path.join(d, "runs.tsv")) as f:
            for r in csv.DictReader(f, delimiter="\t"):
                cpu[r["way"]] = r
    rows = [run_row(sc, name, run, runs.get(gloo_of(name)), cpu) for name, run in runs.items()]
    rows += median_rows(sc, rows)
    cluster = ""
    if os.path.exists(os.path.join(d, "cluster.txt")):
        with open(os.path.join(d, "cluster.txt")) as f:
            cluster = f.read().strip()
    return runs, rows, cluster


HEADER = ("| way | reached | TTA (s) | sooner than Gloo | steps | step P50/P99 (s) | "
          "averaging P50/P99 (s) | P99/P50 | averaging mean (s) | rest of step mean (s) | compute P25 (s), slow | forward wall/CPU, starts apart (ms) | lost | acc - Gloo's (pp) | final acc | CPU |")


def table_md(all_rows, clusters, meta):
    lines = ["# Time to accuracy", ""]
    if meta:
        lines.append("Training: %s ranks, %s parameters (%s MB of gradient), batch %s per rank, "
                     "target test accuracy %s, evaluation every %s steps on %s test images." % (
                         meta.get("ranks"), meta.get("parameters"), meta.get("gradient_mb"),
                         meta.get("batch_per_rank"), meta.get("target"), meta.get("eval_every"),
                         meta.get("eval_samples")))
        lines.append("")
    for sc, rows in all_rows:
        lines += ["## %s" % sc, "", "`%s`" % clusters[sc], "", HEADER,
                  "|" + "---|" * (HEADER.count("|") - 1)]
        for r in rows:
            lines.append("| %s | %s | %s | %s | %s | %s / %s | %s / %s | %s | %s | %s | %s, %s | %s, %s | %s | %s | %s | %s |" % (
                r["way"], r["reached"], fmt(r["tta_s"], ".1f"),
                fmt(r["sooner_pct"], "+.0f") + ("%" if r["sooner_pct"] is not None else ""),
                r["steps"] if r["steps"] is not None else "-",
                fmt(r["step_p50_s"], ".3f"), fmt(r["step_p99_s"], ".3f"),
                fmt(r["comm_p50_s"], ".3f"), fmt(r["comm_p99_s"], ".3f"),
                fmt(r["comm_p99_over_p50"], ".1f"),
                fmt(r["comm_mean_s"], ".3f"), fmt(r["rest_mean_s"], ".3f"),
                fmt(r["compute_p25_s"], ".3f"),
                fmt(r["compute_slow_pct"], ".0f") + ("%" if r["compute_slow_pct"] is not None else ""),
                fmt(r["fwd_stretch"], ".2f"), fmt(r["start_spread_ms"], ".0f"),
                fmt(r["lost_pct"], ".2f") + ("%" if r["lost_pct"] is not None else ""),
                fmt(r["dacc_pp"], "+.2f"), fmt(r["final_acc"], ".4f"),
                fmt(r["cpu_busy_pct"], ".0f") + ("%" if r["cpu_busy_pct"] is not None else "")))
        lines.append("")
    lines += ["TTA: training wall time (the steps' time, evaluations left out) until the test "
              "accuracy reached the target; steps: to the target, or all steps run if it was "
              "not reached.  Averaging: per step, first gradient bucket handed over to last "
              "reduced; the rest of the step is step time minus averaging (forward, the "
              "backward before the first bucket, optimizer).  Compute: the forward pass and the "
              "backward before the first bucket; slow: the share of steps in which it took "
              "more than twice its P25 (the CPUs were busy with something else, such as the "
              "cross traffic's kernel work).  Forward wall/CPU: the forward passes' wall time over their CPU time (1.0: the rank had a CPU to itself); starts apart: the median over steps of how far apart the ranks began a step (ranks that start together compete for shared CPUs).  lost: gradient elements bounded mode estimated instead of received, "
              "all ranks.  acc - Gloo's: at the last evaluation both runs made (same step).  "
              "final acc: all 10000 test images at the run's last step.  CPU: busy share of "
              "all CPUs during the run.  With seeds (WAY-sSEED) each run is compared with Gloo's run of "
              "the same seed, and a row per way gives the medians over the seeds (TTA: a run "
              "that missed the target counts as the slowest).", ""]
    return "\n".join(lines)


def plot(out, runs_by_sc, clusters, target):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    n = len(runs_by_sc)
    fig, axes = plt.subplots(1, n, figsize=(5.5 * n, 4.2), squeeze=False)
    colors = {"gloo": "tab:blue", "exact": "tab:green", "bounded": "tab:red"}
    labels = {"gloo": "PyTorch Gloo", "exact": "liboptireduce exact",
              "bounded": "liboptireduce bounded"}
    for ax, (sc, runs) in zip(axes[0], runs_by_sc):
        labelled = set()
        for name, run in runs.items():
            w = way_of(name)
            if not run or not run["evals"]:
                continue
            ax.plot([t for _, t, _ in run["evals"]], [a for _, _, a in run["evals"]],
                    marker=".", color=colors[w], linewidth=1 if name == w else 0.8,
                    alpha=1 if name == w else 0.7,
                    label=None if w in labelled else labels[w])
            labelled.add(w)
        if target:
            ax.axhline(target, color="gray", linestyle="--", linewidth=0.8)
        ax.set_title("\n".join([sc] + textwrap.wrap(clusters[sc], 64)), fontsize=8)
        ax.set_xlabel("training wall time (s)")
        ax.set_ylabel("test accuracy")
        ax.grid(alpha=0.3)
        ax.legend(fontsize=8, loc="lower right")
    fig.tight_layout()
    path = os.path.join(out, "tta.png")
    fig.savefig(path, dpi=110)
    return path


def main():
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    out = sys.argv[1]
    scenarios = sys.argv[2:] or sorted(d for d in os.listdir(out)
                                       if os.path.isdir(os.path.join(out, d)))
    all_rows, runs_by_sc, clusters, meta, target = [], [], {}, {}, None
    for sc in scenarios:
        runs, rows, clusters[sc] = scenario_rows(out, sc)
        all_rows.append((sc, rows))
        runs_by_sc.append((sc, runs))
        for run in runs.values():
            if run and not meta:
                meta = run["meta"]
                target = float(meta.get("target", 0)) or None
    md = table_md(all_rows, clusters, meta)
    with open(os.path.join(out, "table.md"), "w") as f:
        f.write(md)
    flat = [r for _, rows in all_rows for r in rows]
    if flat:
        with open(os.path.join(out, "table.csv"), "w", newline="") as f:
            w = csv.DictWriter(f, fieldnames=list(flat[0].keys()))
            w.writeheader()
            w.writerows(flat)
    png = plot(out, runs_by_sc, clusters, target)
    print(md)
    print("Table: %s (and table.csv); plot: %s" % (os.path.join(out, "table.md"), png))


if __name__ == "__main__":
    main()
