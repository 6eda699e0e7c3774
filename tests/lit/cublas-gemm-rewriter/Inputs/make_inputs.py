"""Writes deterministic inputs (arg0..argN) for an HLO module's entry parameters as an .npz,
without numpy: python3 make_inputs.py MODULE.hlo OUT.npz. Values are pseudo-random in [-1, 1)
(integers in [-4, 4)); bf16 is written as uint16 bit patterns, as hloc eval reads it."""
import re
import struct
import sys
import zipfile

DTYPES = {"f32": ("<f4", "f"), "f64": ("<f8", "d"), "f16": ("<f2", "e"), "bf16": ("<u2", None),
          "s8": ("|i1", "b"), "s32": ("<i4", "i"), "u8": ("|u1", "B"), "pred": ("|b1", "?")}


def parameters(text):
    entry = re.search(r"ENTRY\s+%?[\w.\-]+\s*\(([^)]*)\)", text)
    for name, ty, dims in re.findall(r"([\w.\-]+):\s*(\w+)\[([\d,]*)\]", entry.group(1)):
        yield ty, [int(d) for d in dims.split(",") if d]


def npy(ty, dims, seed):
    descr, fmt = DTYPES[ty]
    count = 1
    for d in dims:
        count *= d
    state = seed * 2654435761 % 2**32 or 1
    values = []
    for _ in range(count):
        state = (state * 1103515245 + 12345) % 2**31
        u = state / 2**31 * 2 - 1
        if ty == "bf16":
            values.append(struct.unpack("<I", struct.pack("<f", u))[0] >> 16)
        elif ty in ("s8", "s32", "u8"):
            values.append(int(u * 4) + (4 if ty == "u8" else 0))
        elif ty == "pred":
            values.append(u > 0)
        else:
            values.append(u)
    shape = "(" + "".join(f"{d}," if len(dims) == 1 else f"{d}, " for d in dims).rstrip(" ") + ")"
    header = f"{{'descr': '{descr}', 'fortran_order': False, 'shape': {shape}, }}"
    header += " " * (63 - (len(header) + 10) % 64) + "\n"
    body = b"".join(struct.pack("<H" if ty == "bf16" else "<" + fmt, v) for v in values)
    return b"\x93NUMPY\x01\x00" + struct.pack("<H", len(header)) + header.encode() + body


def main():
    text = open(sys.argv[1]).read()
    with zipfile.ZipFile(sys.argv[2], "w") as z:
        for i, (ty, dims) in enumerate(parameters(text)):
            z.writestr(f"arg{i}.npy", npy(ty, dims, i + 1))


main()
