# Writes PREFIX.noise.{in,out}.npz and PREFIX.far.out.npz for absolute-floor.test, without numpy:
# .npz is a zip of .npy files (format 1.0: magic, header length, a dict literal, raw data).
import struct, sys, zipfile

def npy(values):
    header = "{'descr': '<f4', 'fortran_order': False, 'shape': (%d,), }" % len(values)
    header += " " * (63 - (10 + len(header)) % 64) + "\n"
    return b"\x93NUMPY\x01\x00" + struct.pack("<H", len(header)) + header.encode() + struct.pack("<%df" % len(values), *values)

def npz(path, arrays):
    with zipfile.ZipFile(path, "w") as z:
        for name, values in arrays.items():
            z.writestr(name + ".npy", npy(values))

prefix = sys.argv[1]
x = [1e-8, -2e-8, 3e-8, 0.0]            # a "zero" gradient: rounding noise
npz(prefix + ".noise.in.npz", {"arg0": x})
npz(prefix + ".noise.out.npz", {"out0": [-3e-8, 1e-8, -1e-8, 2e-8]})  # other noise: relative error ~1, rms ~3e-8
npz(prefix + ".far.out.npz", {"out0": [1.0, 2.0, 3.0, 4.0]})
