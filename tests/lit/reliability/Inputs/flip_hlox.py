"""Flips one bit in the middle of a section of an .hlox executable (by default the code section,
tag 2), as a damaged disk or download would.

Usage: flip_hlox.py IN.hlox OUT.hlox [TAG]
Layout (runtime/executable/serialize.cc): "HLOX" | u32 version | sections, each
u32 tag | u64 length | payload | u32 CRC-32.
"""
import struct
import sys


def main(src, dst, tag="2"):
    data = bytearray(open(src, "rb").read())
    at = 8
    while at < len(data):
        section_tag, length = struct.unpack_from("<IQ", data, at)
        if section_tag == int(tag):
            data[at + 12 + length // 2] ^= 0x08
            open(dst, "wb").write(data)
            return
        at += 12 + length + 4
    sys.exit("no section with tag %s" % tag)


if __name__ == "__main__":
    main(*sys.argv[1:])
