#!/usr/bin/env python3
"""Runs the one GPU kernel of a small HLO module on the CPU and compares its outputs with the
reference evaluator: the kernel's LLVM IR (hloc compile --profile h200 --dump-to) is retargeted
to the host (NVVM special registers and barriers become calls into harness.cc, which runs each
block with block_x*block_y host threads sharing a std::barrier), so index math, tiling and
bounds checks of the GPU emitters can be checked without a GPU.

usage: HLOC=build-x/hloc emu.py MODULE.hlo   (needs llc-19 and g++ with C++20; f32, f16,
bf16, s32 and pred parameters; modules that compile to exactly one kernel)"""
import os, re, struct, subprocess, sys, zipfile, random, shutil

HERE = os.path.dirname(os.path.abspath(__file__))
HLOC = os.environ.get("HLOC", os.path.join(HERE, "../../../build/hloc"))
EMU = os.environ.get("EMU_DIR", "/tmp/hloc-emu")
hlo = sys.argv[1]
work = EMU + "/w_" + os.path.basename(hlo).replace(".", "_")
shutil.rmtree(work, ignore_errors=True)
os.makedirs(work)
env = dict(os.environ)
r = subprocess.run([HLOC, "compile", hlo, "--profile", "h200", "-o", work + "/x.hlox", "--dump-to", work + "/d"],
                   capture_output=True, text=True)
if r.returncode:
    print(r.stdout, r.stderr); sys.exit(1)
d = work + "/d"
thunks = open([d + "/" + f for f in os.listdir(d) if f.endswith("thunk_sequence.txt")][0]).read()
kernels = re.findall(r"kKernel \[[^\]]*\] (\S+) grid: \[(\d+), 1, 1\] threads: \[(\d+), (\d+), 1\]", thunks)
if len(kernels) != 1:
    print("expected one kernel:\n" + thunks); sys.exit(1)
name, grid, bx, by = kernels[0]
ll = open([d + "/" + f for f in os.listdir(d) if f.endswith(".ll")][0]).read()
m = re.search(r"define ptx_kernel void @" + re.escape(name) + r"\((.*)\) #", ll)
params = re.findall(r"dereferenceable\((\d+)\) %(in|out)(\d+)", m.group(1))
ll = re.sub(r"^target .*$", "", ll, flags=re.M)
ll = ll.replace("ptr addrspace(3)", "ptr").replace("internal addrspace(3) global", "internal global")
ll = ll.replace("ptx_kernel ", "").replace("@" + name + "(", "@KERNEL(")
ll = re.sub(r"^!nvvm\.annotations.*$", "", ll, flags=re.M)
ll = re.sub(r"^!\d+ = !\{ptr @.*$", "", ll, flags=re.M)
for a, b in [("llvm.nvvm.read.ptx.sreg.tid.", "emu_tid_"), ("llvm.nvvm.read.ptx.sreg.ctaid.", "emu_ctaid_"),
             ("llvm.nvvm.read.ptx.sreg.nctaid.", "emu_nctaid_"), ("llvm.nvvm.read.ptx.sreg.ntid.", "emu_ntid_"),
             ("llvm.nvvm.barrier0", "emu_barrier")]:
    ll = ll.replace(a, b)
open(work + "/k.ll", "w").write(ll)
subprocess.run(["llc-19", "-O1", "-filetype=obj", "-relocation-model=pic", work + "/k.ll", "-o", work + "/k.o"], check=True)
subprocess.run(["g++", "-std=c++20", "-O1", "-c", HERE + "/harness.cc", "-o", work + "/harness.o"], check=True)
# bf16 rounding (__truncsfbf2), which libgcc 12 lacks, written in IR for the bfloat return ABI.
subprocess.run(["llc-19", "-O1", "-filetype=obj", "-relocation-model=pic", HERE + "/shim.ll", "-o", work + "/shim.o"], check=True)
subprocess.run(["g++", work + "/harness.o", work + "/shim.o", work + "/k.o", "-o", work + "/run", "-pthread", "-lm"], check=True)

# Inputs: the entry parameters from entry_computation_layout.
text = open(hlo).read()
lay = re.search(r"entry_computation_layout=\{\((.*?)\)->", text).group(1)
shapes = re.findall(r"(f32|f16|bf16|s32|pred)\[([\d,]*)\]", lay)
def npy(dtype, dims, raw):
    descr = {"f32": "<f4", "f16": "<f2", "bf16": "<u2", "s32": "<i4", "pred": "|b1"}[dtype]
    hdr = "{'descr': '%s', 'fortran_order': False, 'shape': (%s), }" % (descr, "".join(d + "," for d in dims))
    hdr = hdr.ljust((len(hdr) + 11 + 63) // 64 * 64 - 11) + "\n"
    return b"\x93NUMPY\x01\x00" + struct.pack("<H", len(hdr)) + hdr.encode() + raw
rng = random.Random(1)
raws = []
with zipfile.ZipFile(work + "/in.npz", "w") as z:
    for i, (t, dims) in enumerate(shapes):
        dl = [x for x in dims.split(",") if x]
        n = 1
        for x in dl: n *= int(x)
        vals = [rng.uniform(-2, 2) for _ in range(n)]
        if t == "f32": raw = struct.pack("<%df" % n, *vals)
        elif t == "f16": raw = struct.pack("<%de" % n, *vals)
        elif t == "bf16": raw = b"".join(struct.pack("<f", v)[2:] for v in vals)
        elif t == "s32": raw = struct.pack("<%di" % n, *[int(v * 100) for v in vals])
        else: raw = bytes(int(v > 0) for v in vals)
        raws.append(raw)
        z.writestr("arg%d.npy" % i, npy(t, dl, raw))
r = subprocess.run([HLOC, "eval", hlo, "--inputs", work + "/in.npz", "--outputs", work + "/ref.npz"], capture_output=True, text=True)
if r.returncode: print(r.stdout, r.stderr); sys.exit(1)
refs = []
with zipfile.ZipFile(work + "/ref.npz") as z:
    for nm in sorted(z.namelist(), key=lambda s: int(re.sub(r"\D", "", s))):
        b = z.read(nm)
        hl = struct.unpack("<H", b[8:10])[0]
        hdr = b[10:10 + hl].decode()
        refs.append((nm, re.search(r"'descr': '(..)(\d)'", hdr).groups(), b[10 + hl:]))
args = [grid, bx, by]
ins = [p for p in params if p[1] == "in"]
for size, kind, idx in params:
    if kind == "in":
        k = ins.index((size, kind, idx))
        open(work + "/in%s.bin" % idx, "wb").write(raws[k])
        args.append("in:%s/in%s.bin:%s" % (work, idx, size))
    else:
        args.append("out:%s/out%s.bin:%s" % (work, idx, size))
r = subprocess.run([work + "/run"] + args, capture_output=True, text=True, timeout=600)
if r.returncode: print("run failed", r.returncode, r.stdout, r.stderr); sys.exit(1)
def decode(kind, width, raw):
    if kind == "<f" and width == "4": return struct.unpack("<%df" % (len(raw) // 4), raw)
    if kind == "<f" and width == "2": return struct.unpack("<%de" % (len(raw) // 2), raw)
    if kind == "<u" and width == "2": return [struct.unpack("<f", b"\0\0" + raw[i:i+2])[0] for i in range(0, len(raw), 2)]
    if kind == "<i" and width == "4": return struct.unpack("<%di" % (len(raw) // 4), raw)
    return list(raw)
# Output layouts (the kernel writes physical order; the evaluator's npz is row-major logical).
res = text.split("entry_computation_layout={", 1)[1].split(")->", 1)[1].split("\n", 1)[0]
out_layouts = re.findall(r"\[([\d,]*)\](?:\{([\d,]*)\})?", res)[:len(refs)]
def to_logical(vals, dims, m2m):
    if not m2m or m2m == list(range(len(dims) - 1, -1, -1)): return vals
    phys = [dims[d] for d in reversed(m2m)]
    out = [None] * len(vals)
    strides = [1] * len(dims)
    for d in range(len(dims) - 2, -1, -1): strides[d] = strides[d + 1] * dims[d + 1]
    for p in range(len(vals)):
        rest, idx = p, {}
        for k in range(len(phys) - 1, -1, -1):
            idx[list(reversed(m2m))[k]] = rest % phys[k]; rest //= phys[k]
        out[sum(idx[d] * strides[d] for d in range(len(dims)))] = vals[p]
    return out
ok = True
used = set()
for size, kind, idx in params:
    if kind != "out": continue
    got = open(work + "/out%s.bin" % idx, "rb").read()
    match = None
    for j, (nm, (k, w), raw) in enumerate(refs):
        if j in used or len(raw) != len(got): continue
        a, b = decode(k, w, raw), decode(k, w, got)
        dims_s, m2m_s = out_layouts[j]
        b = to_logical(list(b), [int(x) for x in dims_s.split(",") if x], [int(x) for x in m2m_s.split(",") if x])
        err = max((abs(x - y) for x, y in zip(a, b)), default=0)
        if err <= 1e-5 + 0.01 * (w == "2"):
            match = (nm, err); used.add(j); break
    if match is None:
        ok = False
        print("out%s (%s bytes): NO MATCH" % (idx, size))
        for nm, (k, w), raw in refs:
            if len(raw) == len(got):
                a, b = decode(k, w, raw), decode(k, w, got)
                bad = [i for i in range(len(a)) if abs(a[i] - b[i]) > 1e-5]
                print("  vs %s: %d/%d differ, first %s" % (nm, len(bad), len(a), bad[:5]))
    else:
        print("out%s matches %s (max err %g)" % (idx, match[0], match[1]))
print("kernel", name, "grid", grid, "block", bx, by, "PASS" if ok else "FAIL")
sys.exit(0 if ok else 1)
