#!/usr/bin/env python3
"""The op-family sweeps' report (issue 34, part 2): docs/bench/sweeps.md from the runs of
tools/corpus/sweep.sh, one or more families.

  python3 tools/corpus/sweep_report.py BENCH.json... [--check SUMMARY.md]... [--results RESULTS.json]...
                                       [--out docs/bench/sweeps.md]

  BENCH.json    `scripts/bench gpu --corpus DIR` output (bench_gpu_*.json: rows of module, hloc_us, xla_us,
                error), one per family or several; rows are grouped by family from their names
                (sweep_<family>_<params>; the families are the tools/corpus/workloads_sweep_<family>.py files).
  --check       `scripts/gpu-check --small --corpus DIR` summary.md: each small module's check against JAX's
                outputs (match, MISMATCH, compile failed, run failed); "-" where none was given.
  --results     jax_corpus.py's results.json of the same folder: cases whose JAX/XLA generation failed, or
                whose large module was never timed by hloc, are listed too.

Per family: a table (case, hloc us, XLA us, hloc/XLA, small check), the geometric mean of hloc/XLA over
the cases both timed, the worst case, and issue 34's targets: every case within 1.5x of XLA, the
family's geometric mean at most 1.0x. Needs only the Python standard library.
"""
import argparse
import glob
import json
import math
import os
import re
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
CASE_TARGET = 1.5
GMEAN_TARGET = 1.0
KNOWN = ["conv", "topk_sort", "reduce", "reduce_window", "gather_scatter", "dot", "loop", "linalg"]


def families():
    found = [os.path.basename(p)[len("workloads_sweep_"):-3] for p in glob.glob(os.path.join(HERE, "workloads_sweep_*.py"))]
    return sorted(set(found) | set(KNOWN), key=lambda f: -len(f))  # longest first: reduce_window before reduce


def family_of(case, fams):
    if not case.startswith("sweep_"):
        return "other"
    rest = case[len("sweep_"):]
    for f in fams:
        if rest == f or rest.startswith(f + "_"):
            return f
    return rest.split("_", 1)[0]


ROW_RE = re.compile(r"^\|\s*([^|]+?)\s*\|\s*small\s*\|\s*([^|]*?)\s*\|\s*([^|]*?)\s*\|\s*(.*?)\s*\|\s*$")


def read_checks(paths):
    """gpu-check summary.md rows `| NAME | small | COMPILE | RUN | RESULT |` -> {NAME: verdict}."""
    out = {}
    for path in paths:
        with open(path) as f:
            for line in f:
                m = ROW_RE.match(line.strip())
                if not m:
                    continue
                name, comp, run, result = m.groups()
                if comp != "ok":
                    verdict = "compile failed"
                elif run == "ok" and result == "match":
                    verdict = "match"
                elif "do not match" in result or "mismatch" in result.lower():
                    verdict = "MISMATCH"
                else:
                    verdict = "run failed"
                out[name] = verdict
    return out


def gmean(values):
    return math.exp(sum(math.log(v) for v in values) / len(values)) if values else None


def collect(bench_paths, result_paths):
    """{case: row} with hloc_us, xla_us, error; plus the runs' (device, when, command) lines."""
    cases, runs = {}, []
    for path in bench_paths:
        with open(path) as f:
            data = json.load(f)
        runs.append((data.get("device") or "the GPU machine", data.get("when") or "?", data.get("command") or "?"))
        for r in data.get("rows", []):
            cases[r["module"]] = {"hloc_us": r.get("hloc_us"), "xla_us": r.get("xla_us"), "error": r.get("error")}
    for path in result_paths:
        with open(path) as f:
            work = json.load(f).get("work", {})
        for key, rec in work.items():
            name, _, size = key.rpartition(".")
            if not name.startswith("sweep_"):
                continue
            row = cases.setdefault(name, {"hloc_us": None, "xla_us": None, "error": None})
            if "error" in rec:
                if size == "small":
                    row["small_failed"] = True
                elif row["hloc_us"] is None:
                    row["error"] = "JAX/XLA large failed"
            elif size == "large" and "xla_median_s" in rec:
                if row["xla_us"] is None:
                    row["xla_us"] = rec["xla_median_s"] * 1e6
                if row["hloc_us"] is None and not row["error"]:
                    row["error"] = "not timed by hloc"
    return cases, runs


def cell(x):
    return "-" if x is None else f"{x:.1f}"


def render(cases, runs, checks):
    fams = families()
    groups = {}
    for name in sorted(cases):
        groups.setdefault(family_of(name, fams), []).append(name)
    order = [f for f in KNOWN if f in groups] + sorted(f for f in groups if f not in KNOWN)
    lines = ["# Op-family sweeps: hloc beside XLA, family by family", "",
             "Made by `tools/corpus/sweep.sh FAMILY DIR` on the GPU machine (JAX generates the family's cases and "
             "times XLA, `scripts/bench gpu --corpus DIR` times hloc on the large modules, `scripts/gpu-check --small "
             "--corpus DIR` checks the small ones against JAX's outputs), then `python3 tools/corpus/sweep_report.py` "
             "over the runs' bench json, check summaries and results.json. Times are per call, back-to-back calls, "
             "median of batches (DEVICE.md).", ""]
    for device, when, command in runs:
        lines.append(f"- run: `{command}` on {device}, {when}")
    lines += ["", f"Targets (issue 34): every case within {CASE_TARGET}x of XLA; each family's geometric mean of "
              f"hloc/XLA at most {GMEAN_TARGET}x.", "",
              "| family | cases | timed | hloc/XLA geomean | worst case | worst hloc/XLA | over 1.5x | small match | targets |",
              "| --- | ---: | ---: | ---: | --- | ---: | ---: | ---: | --- |"]
    sections = []
    for fam in order:
        names = groups[fam]
        ratios = {n: cases[n]["hloc_us"] / cases[n]["xla_us"] for n in names
                  if cases[n].get("hloc_us") and cases[n].get("xla_us")}
        gm = gmean(list(ratios.values()))
        worst = max(ratios, key=ratios.get) if ratios else None
        over = [n for n, r in ratios.items() if r > CASE_TARGET]
        untimed = [n for n in names if n not in ratios]
        checked = [n for n in names if n in checks]
        matched = [n for n in checked if checks[n] == "match"]
        case_ok = not over and not untimed
        gm_ok = gm is not None and gm <= GMEAN_TARGET
        targets = "met" if case_ok and gm_ok else "not met"
        lines.append(f"| {fam} | {len(names)} | {len(ratios)} | {'-' if gm is None else f'{gm:.3f}'} | "
                     f"{worst or '-'} | {'-' if worst is None else f'{ratios[worst]:.2f}'} | {len(over)} | "
                     f"{len(matched)} of {len(checked)} | {targets} |")
        sec = ["", f"## {fam}", "",
               "| case | hloc us | XLA us | hloc/XLA | small check |", "| --- | ---: | ---: | ---: | --- |"]
        for n in names:
            c = cases[n]
            if n in ratios:
                r = ratios[n]
                ratio = f"**{r:.2f}**" if r > CASE_TARGET else f"{r:.2f}"
                hl = cell(c["hloc_us"])
            else:
                ratio = "-"
                hl = "FAILED: " + (c.get("error") or "no time").replace("|", "/")[:120]
            check = checks.get(n) or ("JAX small failed" if c.get("small_failed") else "-")
            sec.append(f"| {n} | {hl} | {cell(c.get('xla_us'))} | {ratio} | {check} |")
        sec += [""]
        sec.append(f"- cases: {len(names)}; timed by both: {len(ratios)}; not timed or failed: {len(untimed)}; "
                   f"small checks matching: {len(matched)} of {len(checked)}")
        if gm is not None:
            sec.append(f"- hloc/XLA geometric mean: {gm:.3f} (target at most {GMEAN_TARGET}: "
                       f"{'met' if gm_ok else 'not met'})")
            sec.append(f"- worst case: {worst} at {ratios[worst]:.2f}x (target every case within {CASE_TARGET}x: "
                       f"{'met' if case_ok else 'not met'}; {len(over)} above, {len(untimed)} without a time)")
        else:
            sec.append("- hloc/XLA geometric mean: - (no case timed by both)")
        bad = [n for n in checked if checks[n] != "match"]
        if bad:
            sec.append("- small checks failing: " + ", ".join(f"{n} ({checks[n]})" for n in bad))
        sections += sec
    return "\n".join(lines + sections) + "\n"


def main(argv):
    ap = argparse.ArgumentParser(prog="tools/corpus/sweep_report.py", description=__doc__.split("\n\n")[0])
    ap.add_argument("bench", nargs="+", help="bench_gpu_*.json from scripts/bench gpu --corpus DIR")
    ap.add_argument("--check", action="append", default=[], help="scripts/gpu-check summary.md (repeatable)")
    ap.add_argument("--results", action="append", default=[], help="jax_corpus.py results.json (repeatable)")
    ap.add_argument("--out", default=os.path.join(ROOT, "docs", "bench", "sweeps.md"),
                    help="the report (default docs/bench/sweeps.md); '-' prints it")
    args = ap.parse_args(argv)
    cases, runs = collect(args.bench, args.results)
    text = render(cases, runs, read_checks(args.check))
    if args.out == "-":
        sys.stdout.write(text)
    else:
        os.makedirs(os.path.dirname(os.path.abspath(args.out)), exist_ok=True)
        with open(args.out, "w") as f:
            f.write(text)
        print(f"sweep_report: {len(cases)} cases -> {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
