"""Checks tools/corpus/workloads_sweep_*.py without JAX (tests/lit/sweep).
  sweep_workloads.py compile DIR   every module compiles (no files written)
  sweep_workloads.py cases DIR     every module's make() with stand-ins for JAX builds 10..30 well-named cases
"""
import glob
import importlib.util
import os
import re
import sys
from unittest import mock

mode, d = sys.argv[1], sys.argv[2]
paths = sorted(glob.glob(os.path.join(d, "workloads_sweep_*.py")))
fams = [os.path.basename(p)[len("workloads_sweep_"):-3] for p in paths]
if mode == "compile":
    for p in paths:
        with open(p) as f:
            compile(f.read(), p, "exec")
    print(f"compiled {len(paths)} sweep families: {' '.join(fams)}")
    sys.exit(0)
bad = 0
for fam, p in zip(fams, paths):
    spec = importlib.util.spec_from_file_location(f"sweep_{fam}", p)
    m = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(m)
    g = {k: mock.MagicMock(name=k) for k in ("jax", "jnp", "lax", "rnd", "rng", "B", "W", "Wb", "bf16")}
    work = m.make(g)
    names = [n for n in work if not re.fullmatch(rf"sweep_{fam}_[a-z0-9_]+", n)]
    shapes = [n for n, v in work.items() if not (len(v) == 3 and all(callable(x) for x in v))]
    ok = 10 <= len(work) <= 30 and not names and not shapes and getattr(m, "FAMILY", fam) == fam
    bad += not ok
    print(f"{fam}: {len(work)} cases {'ok' if ok else 'BAD'}" + (f" names {names}" if names else "") +
          (f" entries {shapes}" if shapes else ""))
print(f"all {len(fams)} families ok" if not bad else f"{bad} families bad")
sys.exit(1 if bad else 0)
