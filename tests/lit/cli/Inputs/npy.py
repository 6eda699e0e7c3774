"""Writes small .npy / .npz files for the lit tests without numpy, laid out as numpy does.

Usage: npy.py OUT.npz [--deflate] NAME=DESCR:SHAPE:VALUES ...
       npy.py OUT.npy DESCR:SHAPE:VALUES
SHAPE is comma-separated ('' for a scalar), VALUES comma-separated numbers in row-major order.
--deflate stores members deflated, as numpy.savez_compressed does.
"""
import struct
import sys
import zipfile

FORMATS = {"b1": "?", "i1": "b", "u1": "B", "i2": "h", "u2": "H", "i4": "i", "u4": "I",
           "i8": "q", "u8": "Q", "f2": "e", "f4": "f", "f8": "d"}


def npy_bytes(spec):
    descr, shape_text, values_text = spec.split(":")
    shape = tuple(int(d) for d in shape_text.split(",") if d)
    order = "<" if descr[0] in "<|" else ">"
    fmt = FORMATS[descr[1:]]
    values = [float(v) if fmt in "efd" else int(v) for v in values_text.split(",") if v]
    data = struct.pack(order + fmt * len(values), *values)
    header = "{'descr': '%s', 'fortran_order': False, 'shape': %s, }" % (descr, repr(shape))
    header += " " * ((64 - (10 + len(header) + 1) % 64) % 64) + "\n"
    return b"\x93NUMPY\x01\x00" + struct.pack("<H", len(header)) + header.encode("latin1") + data


def main(argv):
    out = argv[1]
    if out.endswith(".npy"):
        with open(out, "wb") as f:
            f.write(npy_bytes(argv[2]))
        return
    args = argv[2:]
    compression = zipfile.ZIP_STORED
    if args and args[0] == "--deflate":
        compression = zipfile.ZIP_DEFLATED
        args = args[1:]
    with zipfile.ZipFile(out, "w", compression=compression, allowZip64=True) as z:
        for arg in args:
            name, spec = arg.split("=", 1)
            with z.open(name + ".npy", "w", force_zip64=True) as f:
                f.write(npy_bytes(spec))


if __name__ == "__main__":
    main(sys.argv)
