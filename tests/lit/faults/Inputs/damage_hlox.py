"""Damages a real .hlox executable in many ways and runs `hloc run` on each copy (issue 17,
part 4: a truncated or corrupted executable gives a clear error, never a crash).

Usage: damage_hlox.py HLOC GOOD.hlox WORKDIR [RUN ARGS...]
Copies: the file truncated at every 1/50th of its length (and to 0, 1, 4, 7, 11 bytes and one
byte short), and 150 copies with one byte flipped (spread over the whole file, every section's
header included) plus 50 with a 4-byte run of 0xff (huge lengths). Each must exit 1 with an
"hloc: error:" line naming the file; a signal, another status, a silent exit or a run over 60 s
is a failure. Prints "damaged copies: N, all refused cleanly" or each failure (exit 1).
"""
import os
import signal
import subprocess
import sys


def cases(data):
    n = len(data)
    cuts = sorted({0, 1, 4, 7, 11, n - 1} | {n * i // 50 for i in range(50)})
    for cut in cuts:
        if 0 <= cut < n:
            yield "truncated to %d of %d bytes" % (cut, n), data[:cut]
    for i in range(150):
        at = (i * n) // 150 + (i % 7)
        if at >= n:
            continue
        damaged = bytearray(data)
        damaged[at] ^= 1 << (i % 8)
        yield "byte %d flipped (bit %d)" % (at, i % 8), bytes(damaged)
    for i in range(50):
        at = (i * n) // 50 + 8
        if at + 4 > n:
            continue
        damaged = bytearray(data)
        damaged[at:at + 4] = b"\xff\xff\xff\xff"
        yield "bytes %d..%d set to ff" % (at, at + 3), bytes(damaged)


def main(hloc, good, workdir, *run_args):
    data = open(good, "rb").read()
    os.makedirs(workdir, exist_ok=True)
    path = os.path.join(workdir, "damaged.hlox")
    failures, count = [], 0
    for what, damaged in cases(data):
        if damaged == data:  # a run of 0xff over bytes that were 0xff already
            continue
        count += 1
        with open(path, "wb") as f:
            f.write(damaged)
        try:
            p = subprocess.run([hloc, "run", "--seed", "0", *run_args, path], capture_output=True, timeout=60)
        except subprocess.TimeoutExpired:
            failures.append("%s: no answer in 60 s" % what)
            continue
        err = p.stderr.decode("utf-8", "replace")
        if p.returncode < 0:
            failures.append("%s: killed by %s; stderr: %s" % (what, signal.Signals(-p.returncode).name, err[-500:]))
        elif p.returncode != 1:
            failures.append("%s: exit status %d (expected 1); stderr: %s" % (what, p.returncode, err[-500:]))
        elif "hloc: error:" not in err or path not in err:
            failures.append("%s: no error naming the file; stderr: %s" % (what, err[-500:]))
    for f in failures:
        print("FAIL " + f)
    if failures:
        print("damaged copies: %d, %d not refused cleanly" % (count, len(failures)))
        sys.exit(1)
    print("damaged copies: %d, all refused cleanly" % count)


if __name__ == "__main__":
    main(*sys.argv[1:])
