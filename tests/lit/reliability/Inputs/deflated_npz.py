"""Writes an .npz whose one member, arg0.npy, declares more bytes than it holds, for the tests
of the npz reader's size checks (nothing large is written).

Usage: deflated_npz.py OUT.npz SHAPE DATA_BYTES
The member is a deflated .npy of dtype <f4 and shape SHAPE (comma-separated) whose zip entry
declares the header plus DATA_BYTES bytes. Only the header is really deflated; the compressed
bytes after it are 0xff (an invalid deflate block, were a reader ever to inflate that far),
at least 16 and as many as a deflate stream of the declared size needs (1:1032).
"""
import struct
import sys
import zlib


def npy_header(shape):
    header = "{'descr': '<f4', 'fortran_order': False, 'shape': %s, }" % (repr(shape),)
    header += " " * ((64 - (10 + len(header) + 1) % 64) % 64) + "\n"
    return b"\x93NUMPY\x01\x00" + struct.pack("<H", len(header)) + header.encode("latin1")


def main(out, shape_text, data_bytes):
    shape = tuple(int(d) for d in shape_text.split(",") if d)
    header = npy_header(shape)
    declared = len(header) + int(data_bytes)
    z = zlib.compressobj(9, zlib.DEFLATED, -15)
    data = z.compress(header) + z.flush(zlib.Z_SYNC_FLUSH)
    data += b"\xff" * max(16, declared // 1032 + 1 - len(data))
    name = b"arg0.npy"
    local = struct.pack("<IHHHHHIIIHH", 0x04034B50, 20, 0, 8, 0, 0, 0, len(data), declared, len(name), 0)
    central = struct.pack("<IHHHHHHIIIHHHHHII", 0x02014B50, 20, 20, 0, 8, 0, 0, 0, len(data), declared,
                          len(name), 0, 0, 0, 0, 0, 0) + name
    body = local + name + data
    end = struct.pack("<IHHHHIIH", 0x06054B50, 0, 0, 1, 1, len(central), len(body), 0)
    with open(out, "wb") as f:
        f.write(body + central + end)


if __name__ == "__main__":
    main(*sys.argv[1:])
