#!/usr/bin/env python3
"""The no-C++ promise: a new rule file is a rebuild away, with no C++ and no CMake edit.

Adds rules/simplify/MulTwo.td (`multiply(x, 2) => add(x, x)`, pass algsimp) to a build, rebuilds
`hloc` with plain `ninja`, checks that the only build steps were the generator on that file,
its compilation, the registry (all_rules.cc), the rules archive and the link, and then runs
`hloc opt --passes algsimp --trace-rules` on an input, printing what it shows (the lit test
FileChecks it). Nothing is written to the source tree.

Modes:
  fast     copy an existing build directory (cp -a keeps it incremental) next to a mirror of the
           sources (symlinks, same relative layout, for ninja's relative header paths), point the
           copy's CMakeCache at its new place and add the rule through HLOC_EXTRA_RULE_DIRS (a
           directory laid out like rules/). The copy first catches up (commands that name the
           build directory by absolute path, e.g. for generated rule code, run once), then the
           rule is added.
  scratch  copy the sources (without tests/) into a temporary tree, configure a fresh build
           there (ccache hits carry over: CCACHE_BASEDIR makes paths relative, as scripts/build
           does), build hloc, then add rules/simplify/MulTwo.td to that copy. Slow without a
           warm ccache: opt-in (HLOC_SLOW_TESTS=1).
"""
import argparse
import os
import re
import shutil
import subprocess
import sys

MUL_TWO_TD = """// The no-C++ promise (tests/lit/no-cxx): a rule added as data alone.
include "base/Common.td"

let Pass = "algsimp", Group = "no-cxx-demo" in
// x * 2 => x + x
def MulTwo : Rule<(Multiply $x, (ScalarConstant 2)), (Add $x, $x)>;
"""

INPUT_HLO = """HloModule no_cxx

ENTRY main {
  x = f32[8] parameter(0)
  two = f32[] constant(2)
  twos = f32[8] broadcast(two), dimensions={}
  ROOT y = f32[8] multiply(x, twos)
}
"""

# Build steps ninja may print besides the expected ones: CMake noticing the new file.
NOISE = [r"Re-checking globbed directories", r"Re-running CMake"]
# (label, pattern over ninja's step descriptions); each must appear exactly once.
EXPECTED = [
    ("hloc-tblgen MulTwo.td", r"^hloc-tblgen .*MulTwo\.td$"),
    ("compile MulTwo.rules.cc", r"^Building CXX object .*MulTwo\.rules\.cc\.o$"),
    ("compile all_rules.cc", r"^Building CXX object .*all_rules\.cc\.o$"),
    ("archive libhloc_rules.a", r"^Linking CXX static library .*libhloc_rules\.a$"),
    ("link hloc", r"^Linking CXX executable hloc$"),
]


def fail(message):
    print(f"no-cxx: FAILED: {message}", file=sys.stderr)
    sys.exit(1)


def run(cmd, cwd=None, env=None, check=True):
    p = subprocess.run(cmd, cwd=cwd, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    if check and p.returncode != 0:
        fail(f"{' '.join(cmd)} exited {p.returncode}:\n{p.stdout[-6000:]}")
    return p


def ninja_steps(output):
    """The descriptions of the steps ninja ran: lines "[k/n] description"."""
    steps = []
    for line in output.splitlines():
        m = re.match(r"^\[\d+/\d+\] (.*)$", line.strip())
        if m:
            steps.append(m.group(1).strip())
    return steps


def check_steps(steps):
    remaining = [s for s in steps if not any(re.search(n, s) for n in NOISE)]
    found = []
    for label, pattern in EXPECTED:
        hits = [s for s in remaining if re.search(pattern, s)]
        if len(hits) != 1:
            fail(f"expected exactly one step '{label}', saw {len(hits)}; all steps:\n  " + "\n  ".join(steps))
        found.append(label)
        remaining.remove(hits[0])
    if remaining:
        fail("steps beyond the generator output, the registry and the link:\n  " + "\n  ".join(remaining))
    return found


def copy_build(src, build, work):
    """Copies `build` into `work` beside a mirror of `src` (symlinks to its entries), keeping the
    relative path between them. Compile commands name sources by absolute path (unchanged: the
    copy stays configured for `src`), while ninja's dependency log names headers relative to the
    build directory ("../src/ir/shape.h"): the mirror keeps those valid, so nothing rebuilds for
    having moved. Returns the copied build directory."""
    common = os.path.commonpath([src, build])
    root = os.path.join(work, "tree")
    mirror_src = os.path.normpath(os.path.join(root, os.path.relpath(src, common)))
    new_build = os.path.normpath(os.path.join(root, os.path.relpath(build, common)))
    if common == src:
        # The build folder is inside the sources: link every other top-level entry.
        os.makedirs(mirror_src)
        first = os.path.relpath(build, src).split(os.sep)[0]
        for entry in os.listdir(src):
            if entry not in (first, ".git"):
                os.symlink(os.path.join(src, entry), os.path.join(mirror_src, entry))
    else:
        os.makedirs(os.path.dirname(mirror_src), exist_ok=True)
        os.symlink(src, mirror_src)
    os.makedirs(os.path.dirname(new_build), exist_ok=True)
    # lit-out holds this very test's scratch files; Testing is CTest's.
    shutil.copytree(build, new_build, symlinks=True, ignore=shutil.ignore_patterns("lit-out", "Testing"))
    cache = os.path.join(new_build, "CMakeCache.txt")
    with open(cache) as f:
        text = f.read()
    old_build = re.search(r"^CMAKE_CACHEFILE_DIR:INTERNAL=(.*)$", text, re.M)
    if not old_build:
        fail(f"{cache} names no build directory")
    with open(cache, "w") as f:
        f.write(text.replace(old_build.group(1).strip(), new_build))
    return new_build


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--mode", choices=["fast", "scratch"], required=True)
    ap.add_argument("--src", required=True, help="the repository root")
    ap.add_argument("--build", help="fast mode: the build directory to copy")
    ap.add_argument("--work", required=True, help="an empty scratch directory")
    args = ap.parse_args()

    src = os.path.realpath(args.src)
    work = os.path.realpath(args.work)
    shutil.rmtree(work, ignore_errors=True)
    os.makedirs(work)
    env = dict(os.environ)
    env["CCACHE_NOHASHDIR"] = "1"
    env.pop("NINJA_STATUS", None)  # the default "[k/n] " prefix is what ninja_steps reads

    if args.mode == "fast":
        if not args.build or not os.path.isfile(os.path.join(args.build, "build.ninja")):
            fail(f"no configured build directory at {args.build}")
        build = copy_build(src, os.path.realpath(args.build), work)
        rules_root = os.path.join(work, "extra-rules")
        os.makedirs(os.path.join(rules_root, "simplify"))
        run(["cmake", "-S", src, "-B", build, f"-DHLOC_EXTRA_RULE_DIRS={rules_root}"], env=env)
    else:
        tree = os.path.join(work, "src")
        # Everything CMake needs except tests/ (not built here) and build folders.
        shutil.copytree(src, tree, symlinks=True,
                        ignore=shutil.ignore_patterns(".git", "build", "build-*", "tests", ".cache"))
        build = os.path.join(tree, "build")
        rules_root = os.path.join(tree, "rules")
        env["CCACHE_BASEDIR"] = tree  # as scripts/build: relative paths, so the main build's cache hits
        run(["cmake", "-S", tree, "-B", build, "-G", "Ninja", "-DHLOC_BUILD_TESTS=OFF"], env=env)

    # Catch up: whatever this copy must rebuild before the experiment starts.
    run(["ninja", "-C", build, "hloc"], env=env)
    hloc = os.path.join(build, "hloc")
    input_path = os.path.join(work, "in.hlo")
    with open(input_path, "w") as f:
        f.write(INPUT_HLO)
    before = run([hloc, "opt", input_path, "--passes", "algsimp", "--trace-rules"], env=env)
    if re.search(r"\] MulTwo \(", before.stdout):
        fail("the build already has a rule named MulTwo; the experiment proves nothing")
    print("baseline: hloc has no MulTwo rule")

    # The experiment: one new .td file, then plain ninja.
    td = os.path.join(rules_root, "simplify", "MulTwo.td")
    os.makedirs(os.path.dirname(td), exist_ok=True)
    with open(td, "w") as f:
        f.write(MUL_TWO_TD)
    out = run(["ninja", "-C", build, "hloc"], env=env)
    labels = check_steps(ninja_steps(out.stdout))
    print("build steps after adding MulTwo.td: " + ", ".join(labels))
    generated = os.path.join(build, "gen", "rules", "MulTwo.rules.cc")
    if not os.path.isfile(generated):
        fail(f"no generated {generated}")
    for root, _, files in os.walk(os.path.join(src, "rules")):
        if any(f.startswith("MulTwo") for f in files):
            fail(f"a MulTwo file appeared in the source tree ({root})")
    print("generated: <build>/gen/rules/MulTwo.rules.cc (none in the source tree)")

    after = run([hloc, "opt", input_path, "--passes", "algsimp", "--trace-rules"], env=env)
    sys.stdout.write(after.stdout)
    shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
