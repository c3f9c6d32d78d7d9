#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
"""Time-to-accuracy table and plot from tta_runner.sh's results.

    tta_report.py DIR [SCENARIO...]

Reads DIR/SCENARIO/{gloo,exact,bounded}.{csv,json}, runs.tsv and cluster.txt;
writes DIR/table.md, DIR/table.csv and DIR/tta.png, and prints the table.

Columns: time to the target test accuracy in training wall time (steps'
time without the evaluations) and how much sooner than Gloo; steps taken;
step time P50/P99; gradient averaging time per step (first bucket handed over
to last reduced) P50, P99 and P99/P50; share of gradient elements lost (all
ranks); test accuracy minus Gloo's at the last evaluation both runs made (the
same step); final test accuracy on all 10000 test images (at the run's last
step); CPU busy during the run (a run near 100% measured the CPUs, not the
links).
"""
import csv
import json
import os
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
    lost = [float(r["lost_all"]) for r in rows if r.get("lost_all")]
    run["lost"] = sum(lost) / len(lost) if lost else None
    return run


def fmt(v, spec, none="-"):
    return none if v is None or v != v else format(v, spec)


def scenario_rows(out, sc):
    d = os.path.join(out, sc)
    runs = {w: load_run(d, w) for w in WAYS}
    cpu = {}
    if os.path.exists(os.path.join(d, "runs.tsv")):
        with open(os.path.join(d, "runs.tsv")) as f:
            for r in csv.DictReader(f, delimiter="\t"):
                cpu[r["way"]] = r
    gloo = runs.get("gloo")
    gloo_tta = gloo["summary"].get("tta_s") if gloo else None
    gloo_acc = {s: a for s, _, a in gloo["evals"]} if gloo else {}
    rows = []
    for w in WAYS:
        run = runs[w]
        if run is None:
            continue
        s = run["summary"]
        tta = s.get("tta_s")
        sooner = (100 * (gloo_tta - tta) / gloo_tta) if (tta and gloo_tta and w != "gloo") else None
        common = [st for st, _, _ in run["evals"] if st in gloo_acc]
        dacc = None
        if common and w != "gloo":
            k = max(common)
            dacc = 100 * (dict((st, a) for st, _, a in run["evals"])[k] - gloo_acc[k])
        ratio = run["comm_p99"] / run["comm_p50"] if run["comm_p50"] else None
        rows.append({
            "scenario": sc, "way": w,
            "reached": "yes" if s.get("reached") else ("no" if s else "failed"),
            "tta_s": tta, "sooner_pct": sooner, "steps": s.get("tta_steps") or s.get("steps"),
            "step_p50_s": s.get("step_p50_s"), "step_p99_s": s.get("step_p99_s"),
            "comm_p50_s": run["comm_p50"], "comm_p99_s": run["comm_p99"],
            "comm_p99_over_p50": ratio,
            "lost_pct": 100 * run["lost"] if run["lost"] is not None else (0.0 if w != "bounded" else None),
            "dacc_pp": dacc, "final_acc": s.get("final_acc"),
            "cpu_busy_pct": float(cpu[w]["cpu_busy_pct"]) if w in cpu else None,
            "exit": cpu[w]["exit"] if w in cpu else None,
        })
    cluster = ""
    if os.path.exists(os.path.join(d, "cluster.txt")):
        with open(os.path.join(d, "cluster.txt")) as f:
            cluster = f.read().strip()
    return runs, rows, cluster


HEADER = ("| way | reached | TTA (s) | sooner than Gloo | steps | step P50/P99 (s) | "
          "averaging P50/P99 (s) | P99/P50 | lost | acc - Gloo's (pp) | final acc | CPU |")


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
            lines.append("| %s | %s | %s | %s | %s | %s / %s | %s / %s | %s | %s | %s | %s | %s |" % (
                r["way"], r["reached"], fmt(r["tta_s"], ".1f"),
                fmt(r["sooner_pct"], "+.0f") + ("%" if r["sooner_pct"] is not None else ""),
                r["steps"] if r["steps"] is not None else "-",
                fmt(r["step_p50_s"], ".3f"), fmt(r["step_p99_s"], ".3f"),
                fmt(r["comm_p50_s"], ".3f"), fmt(r["comm_p99_s"], ".3f"),
                fmt(r["comm_p99_over_p50"], ".1f"),
                fmt(r["lost_pct"], ".2f") + ("%" if r["lost_pct"] is not None else ""),
                fmt(r["dacc_pp"], "+.2f"), fmt(r["final_acc"], ".4f"),
                fmt(r["cpu_busy_pct"], ".0f") + ("%" if r["cpu_busy_pct"] is not None else "")))
        lines.append("")
    lines += ["TTA: training wall time (the steps' time, evaluations left out) until the test "
              "accuracy reached the target; steps: to the target, or all steps run if it was "
              "not reached.  Averaging: per step, first gradient bucket handed over to last "
              "reduced.  lost: gradient elements bounded mode estimated instead of received, "
              "all ranks.  acc - Gloo's: at the last evaluation both runs made (same step).  "
              "final acc: all 10000 test images at the run's last step.  CPU: busy share of "
              "all CPUs during the run.", ""]
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
        for w in WAYS:
            run = runs.get(w)
            if not run or not run["evals"]:
                continue
            ax.plot([t for _, t, _ in run["evals"]], [a for _, _, a in run["evals"]],
                    marker=".", color=colors[w], label=labels[w])
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
