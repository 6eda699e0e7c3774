#!/usr/bin/env python3
"""Counts how much of hloc's decision logic is data (.td records, YAML, tuning knobs) and how
much is C++, at one or more git revisions, for docs/decisions.md (issue 15).

    tools/decisions/count_decisions.py [REV ...]      (default: HEAD)

What it counts (the method of the architecture review of 2026-12-06, section 1, extended):
  - per area (simplify, layout, fusion, library): non-blank, non-comment lines of rules/AREA/*.td against
    those of the C++ in src/passes/AREA/ (.cc and .h), and the share in records;
  - records by kind: rewrite rules (Pat / Rule / Rewrite subclasses in rules/simplify), layout
    rows, fusion vetoes, Fusible and OpCost rows, cost classes, library patterns (LibraryPattern
    records in rules/library: the GEMM epilogues of cublas-gemm-rewriter);
  - tuning numbers: knobs declared in src/engine/tuning.cc (each settable per profile) against
    numeric literals >= 3 that C++ compares with or clamps to (`< 8192`, `>= 20`,
    `std::min<int64_t>(8, ...)`, `constexpr int64_t kX = 4;`) in the decision folders
    (src/passes, src/codegen/gpu, src/schedule), comments stripped. Powers of two up to 64 that
    are bit or byte widths and warp lanes (8, 16, 32, 64) are counted too: the counter cannot
    tell a warp from a threshold, so the figure is an upper bound, and it is the same counter at
    every revision.
Read from git objects (`git show REV:PATH`), so the working tree is not touched.
"""
import re
import subprocess
import sys

AREAS = ("simplify", "layout", "fusion", "library")
DECISION_DIRS = ("src/passes", "src/codegen/gpu", "src/schedule")


def git(*args):
    return subprocess.run(("git",) + args, capture_output=True, text=True, check=True).stdout


def files(rev, prefix, exts):
    try:
        names = git("ls-tree", "-r", "--name-only", rev, prefix).split()
    except subprocess.CalledProcessError:
        return []
    return [n for n in names if n.endswith(exts)]


def read(rev, path):
    return git("show", f"{rev}:{path}")


def strip_comments(text):
    text = re.sub(r"/\*.*?\*/", "", text, flags=re.S)
    text = re.sub(r'"(?:\\.|[^"\\])*"', '""', text)  # string literals hold prose, not decisions
    return "\n".join(re.sub(r"//.*", "", line) for line in text.splitlines())


def code_lines(text):
    return sum(1 for line in strip_comments(text).splitlines() if line.strip())


LITERAL = r"(\d+(?:\.\d+)?(?:[eE]-?\d+)?)"
THRESHOLD_PATTERNS = [
    re.compile(r"[<>]=?\s*\(?\s*(?:int64_t\{)?" + LITERAL),        # x >= 8192
    re.compile(LITERAL + r"\s*\)?\s*[<>]=?"),                        # 512 <= x
    re.compile(r"std::(?:min|max)(?:<[^>]*>)?\(\s*" + LITERAL),      # std::min<int64_t>(8, ...
    re.compile(r",\s*" + LITERAL + r"\s*\)"),                         # std::max(x, 1024)
    re.compile(r"constexpr\s+(?:int|int64_t|double|float|size_t)\s+k\w+\s*=\s*" + LITERAL),
    re.compile(r"\?\s*" + LITERAL + r"\s*:\s*" + LITERAL),           # c ? 1024 : 512
]


def thresholds(text):
    found = 0
    for line in strip_comments(text).splitlines():
        if "<<" in line and "std::" not in line:
            line = line.replace("<<", " ")
        seen = set()
        for pat in THRESHOLD_PATTERNS:
            for m in pat.finditer(line):
                for lit in m.groups():
                    if lit is None or (m.start(), lit) in seen:
                        continue
                    seen.add((m.start(), lit))
                    try:
                        if float(lit) >= 3:
                            found += 1
                    except ValueError:
                        pass
    return found


def record_counts(rev):
    kinds = {"rewrite rules": 0, "layout rows": 0, "fusion vetoes": 0, "Fusible rows": 0, "OpCost rows": 0,
             "library patterns": 0, "tuning knobs": 0}
    for path in files(rev, "rules", (".td",)):
        text = strip_comments(read(rev, path))
        for m in re.finditer(r"^\s*def\s+\w+\s*:\s*(\w+)", text, flags=re.M):
            cls = m.group(1)
            if path.startswith("rules/simplify") and cls in ("Pat", "Rule", "Rewrite", "Pattern", "NativeRule"):
                kinds["rewrite rules"] += 1
            elif path.startswith("rules/layout") and cls not in ("LayoutKind",):
                kinds["layout rows"] += 1
            elif cls == "FusionVeto":
                kinds["fusion vetoes"] += 1
            elif cls.startswith("Fusible") or cls.endswith("Fusible"):
                kinds["Fusible rows"] += 1
            elif cls == "OpCost":
                kinds["OpCost rows"] += 1
            elif path.startswith("rules/library") and cls == "LibraryPattern":
                kinds["library patterns"] += 1
    try:
        kinds["tuning knobs"] = len(re.findall(r"\{TuningKnob::k\w+,", read(rev, "src/engine/tuning.cc")))
    except subprocess.CalledProcessError:
        kinds["tuning knobs"] = 0
    return kinds


def count(rev):
    out = {"rev": git("rev-parse", "--short", rev).strip(), "areas": {}}
    for area in AREAS:
        td = sum(code_lines(read(rev, p)) for p in files(rev, f"rules/{area}", (".td",)))
        cc = sum(code_lines(read(rev, p)) for p in files(rev, f"src/passes/{area}", (".cc", ".h")))
        out["areas"][area] = (td, cc)
    out["records"] = record_counts(rev)
    out["cxx_thresholds"] = {d: sum(thresholds(read(rev, p)) for p in files(rev, d, (".cc", ".h")))
                             for d in DECISION_DIRS}
    return out


def main(revs):
    results = [count(r) for r in (revs or ["HEAD"])]
    heads = " | ".join(r["rev"] for r in results)
    print(f"| area: .td lines / C++ lines (share in records) | {heads} |")
    print("|---|" + "---|" * len(results))
    for area in AREAS:
        cells = []
        for r in results:
            td, cc = r["areas"][area]
            cells.append(f"{td} / {cc} ({100.0 * td / max(1, td + cc):.1f} %)")
        print(f"| {area} | " + " | ".join(cells) + " |")
    for kind in results[0]["records"]:
        print(f"| {kind} | " + " | ".join(str(r["records"][kind]) for r in results) + " |")
    for d in DECISION_DIRS:
        print(f"| numeric thresholds in C++, {d} | " + " | ".join(str(r["cxx_thresholds"][d]) for r in results) + " |")


if __name__ == "__main__":
    main(sys.argv[1:])
