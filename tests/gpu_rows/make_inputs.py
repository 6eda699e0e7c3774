#!/usr/bin/env python3
"""Writes the *.inputs.npz of tests/gpu_rows (no numpy needed); expected outputs come from
the reference evaluator: hloc eval NAME.hlo --inputs NAME.inputs.npz --outputs NAME.outputs.npz."""
import math, random, struct, sys, zipfile

def npy(dtype, shape, data):
    dims = ", ".join(map(str, shape)) + ("," if len(shape) == 1 else "")
    hdr = "{'descr': '%s', 'fortran_order': False, 'shape': (%s), }" % (dtype, dims)
    hdr += " " * ((64 - (10 + len(hdr) + 1) % 64) % 64) + "\n"
    return b"\x93NUMPY\x01\x00" + struct.pack("<H", len(hdr)) + hdr.encode() + data

def f32(shape, scale, off=0.0):
    n = math.prod(shape)
    return npy("<f4", shape, struct.pack("<%df" % n, *[random.gauss(off, scale) for _ in range(n)]))

def bf16(shape, scale, off=0.0):  # bf16 as uint16 bit patterns (truncated f32)
    n = math.prod(shape)
    bits = [struct.unpack("<I", struct.pack("<f", random.gauss(off, scale)))[0] >> 16 for _ in range(n)]
    return npy("<u2", shape, struct.pack("<%dH" % n, *bits))

def save(path, arrays):
    with zipfile.ZipFile(path, "w") as z:
        for k, v in arrays.items():
            z.writestr(k + ".npy", v)

d = sys.argv[1] if len(sys.argv) > 1 else "."
random.seed(0)
save(f"{d}/softmax_rows.inputs.npz", {"arg0": f32((96, 2048), 3.0)})
save(f"{d}/warp_rows.inputs.npz", {"arg0": bf16((300, 256), 2.0, 1.0)})
save(f"{d}/layernorm_rows.inputs.npz",
     {"arg0": bf16((200, 4096), 2.0, 0.5), "arg1": bf16((4096,), 1.0), "arg2": bf16((4096,), 1.0)})
