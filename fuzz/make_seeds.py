#!/usr/bin/env python3
"""Builds the seed corpus of each libFuzzer target (fuzz/, issue 17; docs/fuzz.md).

    fuzz/make_seeds.py --out DIR [--hloc build/hloc] [--targets a,b]

writes DIR/<target>/ for hlo_roundtrip, yaml_config, npz, hlox and tblgen from the checkout:

- hlo_roundtrip: tests/corpus/**/*.txt up to 16 KB (HLO modules only, not the buffer-assignment
  and thunk dumps) and XLA's parser cases tests/xla-hlo-cases/{valid,valid_other,invalid}
  (Apache-2.0, see tests/xla-hlo-cases/README.md);
- yaml_config: configs/*.yaml, pipelines/*.yaml, tests/lit/yaml-errors/*.yaml;
- npz: tests/corpus/**/*.npz up to 64 KB, and small .npy / .npz files of every dtype hloc
  reads, written with numpy when it is installed (stored and deflated members);
- hlox: `hloc compile` of a few small corpus modules for cpu and h200 (deviceless), when
  --hloc exists;
- tblgen: rules/**/*.td (not rules/base, which they include), tests/unit/rules/*.td and
  tests/lit/tblgen/*.td.

Python 3 standard library (numpy optional). Files keep their names, prefixed by their folder.
"""
import argparse
import os
import shutil
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
TARGETS = ["hlo_roundtrip", "yaml_config", "npz", "hlox", "tblgen"]


def walk(folder, suffixes, max_bytes=None, exclude=()):
    folder = os.path.join(ROOT, folder)
    for dirpath, _, names in os.walk(folder):
        for name in sorted(names):
            path = os.path.join(dirpath, name)
            if not name.endswith(tuple(suffixes)) or any(x in path for x in exclude):
                continue
            if max_bytes is not None and os.path.getsize(path) > max_bytes:
                continue
            yield path


def copy(paths, out):
    os.makedirs(out, exist_ok=True)
    n = 0
    for path in paths:
        rel = os.path.relpath(path, ROOT).replace(os.sep, "_")
        shutil.copyfile(path, os.path.join(out, rel))
        n += 1
    return n


def hlo_seeds(out):
    paths = list(walk("tests/corpus", [".txt"], 16384,
                      exclude=("buffer-assignment", "thunk_sequence", "README")))
    for sub in ("valid", "valid_other", "invalid"):
        paths += walk(os.path.join("tests/xla-hlo-cases", sub), [".hlo", ".txt"])
    return copy(paths, out)


def yaml_seeds(out):
    paths = list(walk("configs", [".yaml"])) + list(walk("pipelines", [".yaml"]))
    paths += walk("tests/lit/yaml-errors", [".yaml"])
    return copy(paths, out)


def npz_seeds(out):
    n = copy(walk("tests/corpus", [".npz"], 65536), out)
    try:
        import numpy as np
    except ImportError:
        print("make_seeds: numpy not installed; npz seeds from the corpus only", file=sys.stderr)
        return n
    rng = np.random.default_rng(0)
    dtypes = ["<f4", "<f8", "<f2", "|b1", "|i1", "|u1", "<i2", "<u2", "<i4", "<u4", "<i8", "<u8",
              "<c8", "<c16"]
    for dt in dtypes:
        a = (rng.standard_normal((2, 3)) * 10).astype(dt)
        path = os.path.join(out, f"gen_{dt.strip('<|')}.npy")
        np.save(path, a)
        n += 1
    np.save(os.path.join(out, "gen_scalar.npy"), np.float32(1.5))
    np.save(os.path.join(out, "gen_empty.npy"), np.zeros((0, 3), np.float32))
    np.save(os.path.join(out, "gen_fortran.npy"), np.asfortranarray(np.arange(6, dtype=np.int32).reshape(2, 3)))
    np.savez(os.path.join(out, "gen_stored.npz"), arg0=np.ones((2, 2), np.float32), arg1=np.arange(3, dtype=np.int64))
    np.savez_compressed(os.path.join(out, "gen_deflated.npz"), out0=np.arange(8, dtype=np.uint16).reshape(2, 4))
    return n + 5


TINY_MODULES = {
    "tiny_negate": "HloModule m\n\nENTRY e {\n  a = f32[2] parameter(0)\n  ROOT n = f32[2] negate(a)\n}\n",
    "tiny_tuple": ("HloModule m\n\nENTRY e {\n  a = f32[2] parameter(0)\n  b = f32[2] parameter(1)\n"
                   "  c = f32[2] add(a, b)\n  ROOT t = (f32[2], f32[2]) tuple(c, a)\n}\n"),
}


def hlox_seeds(out, hloc):
    os.makedirs(out, exist_ok=True)
    if not hloc or not os.access(hloc, os.X_OK):
        print(f"make_seeds: no hloc binary ({hloc}); no .hlox seeds", file=sys.stderr)
        return 0
    modules = ["seed_example.small", "while_loop.small", "cond_branch.small", "sort_topk.small",
               "dot_variants.small", "elementwise_chain.small"]
    n = 0
    with tempfile.TemporaryDirectory() as tmp:
        # A private copy of the binary uses its built-in pipelines and profiles, not the
        # checkout's (which others may be editing).
        exe = os.path.join(tmp, "hloc")
        shutil.copy2(hloc, exe)
        sources = [(m, os.path.join(ROOT, "tests/corpus", m + ".before_optimizations.txt")) for m in modules]
        # Two tiny modules: small executables, whose mutations stay small.
        for name, text in TINY_MODULES.items():
            path = os.path.join(tmp, name + ".hlo")
            with open(path, "w") as f:
                f.write(text)
            sources.append((name, path))
        for m, src in sources:
            if not os.path.exists(src):
                continue
            for profile in ("cpu", "h200"):
                dst = os.path.join(out, f"{m}.{profile}.hlox")
                r = subprocess.run([exe, "compile", src, "--profile", profile, "-o", dst],
                                   cwd=tmp, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
                if r.returncode == 0 and os.path.getsize(dst) <= 65536:
                    n += 1
                elif os.path.exists(dst):
                    os.remove(dst)
    return n


def tblgen_seeds(out):
    paths = list(walk("rules", [".td"], exclude=(os.sep + "base" + os.sep,)))
    paths += walk("tests/unit/rules", [".td"])
    paths += walk("tests/lit/tblgen", [".td"])
    return copy(paths, out)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", required=True)
    ap.add_argument("--hloc", default=os.path.join(ROOT, "build", "hloc"))
    ap.add_argument("--targets", default=",".join(TARGETS))
    args = ap.parse_args()
    for t in args.targets.split(","):
        out = os.path.join(args.out, t)
        if t == "hlo_roundtrip":
            n = hlo_seeds(out)
        elif t == "yaml_config":
            n = yaml_seeds(out)
        elif t == "npz":
            n = npz_seeds(out)
        elif t == "hlox":
            n = hlox_seeds(out, args.hloc)
        elif t == "tblgen":
            n = tblgen_seeds(out)
        else:
            sys.exit(f"make_seeds: unknown target '{t}' (targets: {', '.join(TARGETS)})")
        print(f"{t}: {n} seeds in {out}")


if __name__ == "__main__":
    main()
