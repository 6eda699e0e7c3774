"""Writes an HLO module whose root concatenates N operands, for t1-wide-concatenate.test.

Usage: wide_concat.py N DISTINCT
The entry takes DISTINCT f32[2] parameters and concatenates N operands cycling through them
(operand i is parameter i % DISTINCT), so an operand may repeat, as in the fuzzer's module.
"""
import sys


def main(n, distinct):
    n, distinct = int(n), int(distinct)
    params = ", ".join("p%d: f32[2]" % i for i in range(distinct))
    lines = ["HloModule wide_concat", "", "ENTRY %%e (%s) -> f32[%d] {" % (params, 2 * n)]
    lines += ["  %%p%d = f32[2]{0} parameter(%d)" % (i, i) for i in range(distinct)]
    operands = ", ".join("%%p%d" % (i % distinct) for i in range(n))
    lines += ["  ROOT %%c = f32[%d]{0} concatenate(%s), dimensions={0}" % (2 * n, operands), "}"]
    print("\n".join(lines))


if __name__ == "__main__":
    main(*sys.argv[1:])
