#!/usr/bin/env python3
"""Random well-typed HLO modules for hloc's differential fuzzer (issue 17; docs/fuzz.md).

    python3 tools/fuzz/hlo_gen.py SEED [--ops N]        print the module made from SEED
    python3 tools/fuzz/hlo_gen.py --check N [--hloc H]  make N modules, run `hloc verify` on each,
                                                        print the verify rate

The same seed gives the same module (Python's `random.Random(seed)`, standard library only).
Shapes stay small (at most a few thousand elements), values stay bounded (floats pass through
tanh/logistic/clamp when they could grow; exp only sees bounded arguments; log/sqrt/divide only
see positive, bounded-away-from-zero operands), and nothing implementation-defined is made (no
rng, no scatter with overwrite semantics, stable sorts where keys can tie). Integer division and
remainder by zero, out-of-range shifts, wrapping overflow and out-of-bounds gather / scatter /
dynamic-slice indices are defined by HLO and are generated on purpose.
"""
import argparse
import math
import os
import random
import subprocess
import sys
import tempfile

FLOAT = ("f32",)
INTS = ("s32", "s32", "s32", "u32", "s8", "u8", "s64")
MAX_ELEMS = 2048


def nelems(dims):
    n = 1
    for d in dims:
        n *= d
    return n


def shape_str(t, dims):
    return "%s[%s]" % (t, ",".join(str(d) for d in dims))


def is_float(t):
    return t in ("f32", "f64", "f16", "bf16")


def is_int(t):
    return t[0] in "su" and t != "pred"


def int_bits(t):
    return int(t[1:])


class Value:
    __slots__ = ("name", "t", "dims", "bound", "tuple_of")

    def __init__(self, name, t, dims, bound=1.0, tuple_of=None):
        self.name, self.t, self.dims, self.bound = name, t, tuple(dims), bound
        self.tuple_of = tuple_of  # for tuple-shaped values: list of (t, dims)

    @property
    def shape(self):
        if self.tuple_of is not None:
            return "(" + ", ".join(shape_str(t, d) for t, d in self.tuple_of) + ")"
        return shape_str(self.t, self.dims)


class Module:
    """Holds the computations other than the entry (reducers, comparators, loop bodies...)."""

    def __init__(self, rng):
        self.rng = rng
        self.comps = []  # text of non-entry computations, in definition order
        self.names = set()
        self.reducers = {}
        self.counter = 0

    def fresh_comp(self, base):
        i = 0
        while "%s_%d" % (base, i) in self.names:
            i += 1
        n = "%s_%d" % (base, i)
        self.names.add(n)
        return n

    def reducer(self, kind, t):
        key = (kind, t)
        if key not in self.reducers:
            n = self.fresh_comp("%s_%s" % (kind, t))
            s = shape_str(t, ())
            op = {"add": "add", "max": "maximum", "min": "minimum", "mul": "multiply",
                  "and": "and", "or": "or"}[kind]
            self.comps.append("%s {\n  a = %s parameter(0)\n  b = %s parameter(1)\n  ROOT r = %s %s(a, b)\n}\n"
                              % (n, s, s, s, op))
            self.reducers[key] = n
        return self.reducers[key]

    def comparator(self, types, direction, key_index=0):
        n = self.fresh_comp("cmp")
        lines = []
        for i, t in enumerate(types):
            lines.append("  p%d.l = %s parameter(%d)" % (i, shape_str(t, ()), 2 * i))
            lines.append("  p%d.r = %s parameter(%d)" % (i, shape_str(t, ()), 2 * i + 1))
        lines.append("  ROOT c = pred[] compare(p%d.l, p%d.r), direction=%s" % (key_index, key_index, direction))
        self.comps.append("%s {\n%s\n}\n" % (n, "\n".join(lines)))
        return n


def init_value(kind, t):
    if kind in ("add", "or"):
        return "0" if t != "pred" else "false"
    if kind in ("mul", "and"):
        return "1" if t != "pred" else "true"
    if kind == "max":
        if is_float(t):
            return "-inf"
        if t[0] == "u":
            return "0"
        return str(-(1 << (int_bits(t) - 1)))
    if kind == "min":
        if is_float(t):
            return "inf"
        if t[0] == "u":
            return str((1 << int_bits(t)) - 1)
        return str((1 << (int_bits(t) - 1)) - 1)
    raise ValueError(kind)


class Builder:
    """One computation: a pool of values and instructions appended to `lines`."""

    def __init__(self, mod, rng, allow_params=True, depth=0, max_params=5):
        self.mod, self.rng = mod, rng
        self.lines = []
        self.pool = []
        self.params = []
        self.allow_params = allow_params
        self.max_params = max_params
        self.depth = depth
        self.counter = 0
        self.used = set()

    # --- basics -------------------------------------------------------------------------
    def name(self, base):
        self.mod.counter += 1
        return "%s.%d" % (base, self.mod.counter)

    def emit(self, base, t, dims, rhs, bound=1.0, add_to_pool=True, tuple_of=None, operands=()):
        v = Value(self.name(base), t, dims, min(float(bound), 1e30), tuple_of)
        shape = v.shape
        self.lines.append("  %s = %s %s" % (v.name, shape, rhs))
        for o in operands:
            self.used.add(o.name)
        if add_to_pool and tuple_of is None:
            self.pool.append(v)
        return v

    def op(self, opcode, t, dims, operands, attrs="", bound=1.0, add_to_pool=True, tuple_of=None):
        rhs = "%s(%s)" % (opcode, ", ".join(o.name for o in operands))
        if attrs:
            rhs += ", " + attrs
        return self.emit(opcode.replace("-", "_"), t, dims, rhs, bound, add_to_pool, tuple_of, operands)

    def param(self, t, dims):
        v = Value("p%d" % len(self.params), t, dims, 1.0 if is_float(t) else 10.0)
        layout = ""
        if len(dims) >= 2 and self.rng.random() < 0.25:
            # a non-default layout (minor-to-major order): the same logical array, stored otherwise
            mtm = list(range(len(dims)))
            self.rng.shuffle(mtm)
            layout = "{%s}" % ",".join(map(str, mtm))
        self.lines.append("  %s = %s%s parameter(%d)" % (v.name, v.shape, layout, len(self.params)))
        self.params.append(v)
        self.pool.append(v)
        return v

    def scalar_const(self, t, val=None):
        r = self.rng
        if val is None:
            if is_float(t):
                val = round(r.uniform(-2, 2), 3)
            elif t == "pred":
                val = r.choice(["true", "false"])
            elif t[0] == "u":
                val = r.randint(0, 12)
            else:
                val = r.randint(-6, 12)
        txt = str(val)
        if is_float(t) and isinstance(val, float) and not txt.lstrip("-")[0].isdigit():
            txt = repr(val)
        b = abs(float(val)) if t != "pred" and isinstance(val, (int, float)) else 1.0
        return self.emit("c", t, (), "constant(%s)" % txt, b)

    def rand_elem_text(self, t):
        r = self.rng
        if is_float(t):
            return repr(round(r.uniform(-1, 1), 3))
        if t == "pred":
            return r.choice(["true", "false"])
        if t[0] == "u":
            return str(r.randint(0, 9))
        return str(r.randint(-5, 9))

    def array_const(self, t, dims):
        def lit(level):
            if level == len(dims):
                return self.rand_elem_text(t)
            return "{" + ", ".join(lit(level + 1) for _ in range(dims[level])) + "}"
        return self.emit("c", t, dims, "constant(%s)" % lit(0), 1.0 if is_float(t) else 10.0)

    # --- shapes -------------------------------------------------------------------------
    def rand_dims(self, rank=None, max_elems=256):
        r = self.rng
        if rank is None:
            rank = r.choice([0, 1, 1, 2, 2, 2, 3, 3, 4])
        while True:
            dims = tuple(r.choice([1, 2, 2, 3, 3, 4, 5, 6, 7, 8, 16]) for _ in range(rank))
            if nelems(dims) <= max_elems:
                return dims

    def rand_type(self):
        r = self.rng.random()
        if r < 0.05:
            return "f64"
        if r < 0.55:
            return "f32"
        if r < 0.9:
            return self.rng.choice(INTS)
        return "pred"

    # --- getting a value of a wanted shape ----------------------------------------------
    def candidates(self, t=None, dims=None, pred=None):
        out = []
        for v in self.pool:
            if t is not None and v.t != t:
                continue
            if dims is not None and v.dims != tuple(dims):
                continue
            if pred is not None and not pred(v):
                continue
            out.append(v)
        return out

    def pick(self, t=None, dims=None, pred=None):
        c = self.candidates(t, dims, pred)
        if not c:
            return None
        # prefer recent values and values not used yet, so that chains form
        unused = [v for v in c if v.name not in self.used]
        if unused and self.rng.random() < 0.6:
            c = unused
        if self.rng.random() < 0.5:
            return c[-1 - int(self.rng.random() * min(3, len(c)))]
        return self.rng.choice(c)

    def get(self, t, dims, depth=0):
        """A value of type t and shape dims: an existing one or one derived from the pool."""
        dims = tuple(dims)
        r = self.rng
        v = self.pick(t, dims)
        if v is not None and r.random() < 0.8:
            return v
        choices = ["param", "const", "bcast", "reshape", "convert", "iota"]
        weights = [3 if self.allow_params and len(self.params) < self.max_params else 0,
                   1, 3, 3, 2, 0.5]
        for _ in range(6):
            c = r.choices(choices, weights)[0]
            if c == "param":
                return self.param(t, dims)
            if c == "const":
                if nelems(dims) <= 16 and dims:
                    return self.array_const(t, dims)
                s = self.scalar_const(t)
                return self.op("broadcast", t, dims, [s], "dimensions={}", s.bound) if dims else s
            if c == "bcast":
                # broadcast a lower-rank value whose dims are a subsequence of dims
                cands = [u for u in self.candidates(t) if len(u.dims) < len(dims) or (not dims and not u.dims)]
                r.shuffle(cands)
                for u in cands[:8]:
                    m = self.subseq(u.dims, dims)
                    if m is not None:
                        return self.op("broadcast", t, dims, [u], "dimensions={%s}" % ",".join(map(str, m)), u.bound)
            if c == "reshape":
                cands = self.candidates(t, pred=lambda u: nelems(u.dims) == nelems(dims) and u.dims != dims)
                if cands:
                    u = r.choice(cands)
                    return self.op("reshape", t, dims, [u], bound=u.bound)
            if c == "convert" and depth < 2:
                cands = [u for u in self.candidates(dims=dims) if u.t != t]
                if cands:
                    return self.convert(r.choice(cands), t)
            if c == "iota" and dims and t != "pred":
                d = r.randrange(len(dims))
                return self.op("iota", t, dims, [], "iota_dimension=%d" % d, bound=max(dims))
        if self.allow_params and len(self.params) < self.max_params + 3:
            return self.param(t, dims)
        s = self.scalar_const(t)
        return self.op("broadcast", t, dims, [s], "dimensions={}", s.bound) if dims else s

    def subseq(self, small, big):
        """Positions of `small` as a subsequence of `big` (greedy, randomized), or None."""
        if not small:
            return []
        pos, j = [], 0
        for d in small:
            cands = [k for k in range(j, len(big)) if big[k] == d]
            if not cands:
                return None
            k = cands[0] if self.rng.random() < 0.7 else self.rng.choice(cands)
            # keep room for the rest
            pos.append(k)
            j = k + 1
        return pos if len(pos) == len(small) else None

    # --- float hygiene ------------------------------------------------------------------
    def bounded(self, v, limit=8.0):
        if not is_float(v.t) or v.bound <= limit:
            return v
        c = self.rng.random()
        if c < 0.5:
            return self.op("tanh", v.t, v.dims, [v], bound=1.0)
        if c < 0.7:
            return self.op("logistic", v.t, v.dims, [v], bound=1.0)
        lo = self.scalar_const(v.t, -2.0)
        hi = self.scalar_const(v.t, 2.0)
        return self.op("clamp", v.t, v.dims, [lo, v, hi], bound=2.0)

    def convert(self, v, t):
        if v.t == t:
            return v
        if is_float(v.t) and not is_float(t) and t != "pred":
            # float -> int: keep in range of the target (bounded values, scaled up a little)
            v = self.bounded(v, 4.0)
            if self.rng.random() < 0.7:
                k = self.scalar_const(v.t, 3.0)
                kb = self.op("broadcast", v.t, v.dims, [k], "dimensions={}", 3.0) if v.dims else k
                v = self.op("multiply", v.t, v.dims, [v, kb], bound=v.bound * 3)
            if t[0] == "u":
                v = self.op("abs", v.t, v.dims, [v], bound=v.bound)
        if is_float(t):
            b = v.bound if is_int(v.t) or v.t == "pred" else v.bound
            if is_int(v.t):
                b = float(1 << int_bits(v.t))
            out = self.op("convert", t, v.dims, [v], bound=b)
            return self.bounded(out, 1e6)
        return self.op("convert", t, v.dims, [v], bound=v.bound)

    # --- the ops ------------------------------------------------------------------------
    def any_value(self, pred=None):
        v = self.pick(pred=lambda u: u.tuple_of is None and (pred is None or pred(u)))
        if v is None:
            for _ in range(20):
                t, dims = self.rand_type(), self.rand_dims()
                if pred is None or pred(Value("x", t, dims)):
                    break
            else:
                t, dims = "f32", (3, 4)
            v = self.get(t, dims)
        return v

    def gen_unary(self):
        v = self.any_value()
        t, dims, r = v.t, v.dims, self.rng
        if is_float(t):
            k = r.choice(["negate", "abs", "tanh", "logistic", "sine", "cosine", "exponential", "log",
                          "sqrt", "cbrt", "floor", "ceil", "round-nearest-even", "round-nearest-afz",
                          "sign", "exponential-minus-one", "log-plus-one", "rsqrt", "is-finite", "copy"])
            if k in ("exponential", "exponential-minus-one"):
                v = self.bounded(v, 4.0)
                return self.op(k, t, dims, [v], bound=math.exp(v.bound) + 1)
            if k in ("log", "sqrt", "rsqrt", "log-plus-one"):
                # positive operand, away from zero: abs(x) + 1 (or + 0.5)
                v = self.bounded(v, 1e4)
                a = self.op("abs", t, dims, [v], bound=v.bound)
                one = self.splat(t, dims, 1.0 if k != "sqrt" else 0.5)
                a = self.op("add", t, dims, [a, one], bound=v.bound + 1)
                b = {"log": math.log(a.bound + 1), "sqrt": math.sqrt(a.bound), "rsqrt": 2.0,
                     "log-plus-one": math.log(a.bound + 2)}[k]
                return self.op(k, t, dims, [a], bound=b)
            if k in ("sine", "cosine"):
                v = self.bounded(v, 8.0)
                return self.op(k, t, dims, [v], bound=1.0)
            if k in ("floor", "ceil", "round-nearest-even", "round-nearest-afz"):
                # discontinuous: only on values straight from parameters/constants, scaled
                return self.op(k, t, dims, [v], bound=v.bound + 1)
            if k == "is-finite":
                return self.op(k, "pred", dims, [v], bound=1.0)
            bd = {"tanh": 1.0, "logistic": 1.0, "sign": 1.0, "cbrt": max(1.0, v.bound ** (1 / 3))}.get(k, v.bound)
            return self.op(k, t, dims, [v], bound=bd)
        if t == "pred":
            return self.op("not", t, dims, [v])
        k = r.choice(["negate", "abs", "not", "popcnt", "count-leading-zeros", "sign", "copy"])
        if t[0] == "u" and k in ("negate", "abs", "sign"):
            k = "not"
        return self.op(k, t, dims, [v], bound=float(1 << int_bits(t)))

    def splat(self, t, dims, val):
        c = self.scalar_const(t, val)
        if not dims:
            return c
        return self.op("broadcast", t, dims, [c], "dimensions={}", c.bound)

    def gen_binary(self):
        v = self.any_value()
        t, dims, r = v.t, v.dims, self.rng
        w = self.get(t, dims)
        if is_float(t):
            k = r.choice(["add", "subtract", "multiply", "maximum", "minimum", "divide", "power", "atan2",
                          "add", "multiply"])
            if k == "divide":
                # divisor abs(w) + 1
                w = self.bounded(w, 1e4)
                a = self.op("abs", t, dims, [w], bound=w.bound)
                w = self.op("add", t, dims, [a, self.splat(t, dims, 1.0)], bound=w.bound + 1)
                return self.bounded(self.op("divide", t, dims, [v, w], bound=v.bound))
            if k == "power":
                # base in [0.5, 1.5], exponent bounded
                b = self.op("logistic", t, dims, [v], bound=1.0)
                b = self.op("add", t, dims, [b, self.splat(t, dims, 0.5)], bound=1.5)
                e = self.bounded(w, 3.0)
                return self.op("power", t, dims, [b, e], bound=1.5 ** 3 * 2 + 1)
            if k == "atan2":
                # atan2 jumps on the negative x axis; keep x > 0
                x = self.op("abs", t, dims, [w], bound=w.bound)
                x = self.op("add", t, dims, [x, self.splat(t, dims, 0.25)], bound=w.bound + 1)
                return self.op("atan2", t, dims, [v, x], bound=2.0)
            bd = {"add": v.bound + w.bound, "subtract": v.bound + w.bound,
                  "multiply": v.bound * w.bound}.get(k, max(v.bound, w.bound))
            return self.bounded(self.op(k, t, dims, [v, w], bound=bd))
        if t == "pred":
            k = r.choice(["and", "or", "xor", "compare"])
            if k == "compare":
                return self.op("compare", t, dims, [v, w], "direction=%s" % r.choice(["EQ", "NE"]))
            return self.op(k, t, dims, [v, w])
        k = r.choice(["add", "subtract", "multiply", "divide", "remainder", "maximum", "minimum", "and",
                      "or", "xor", "shift-left", "shift-right-arithmetic", "shift-right-logical", "add"])
        return self.op(k, t, dims, [v, w], bound=float(1 << int_bits(t)))

    def gen_compare_select(self):
        v = self.any_value(lambda u: u.t != "pred")
        t, dims, r = v.t, v.dims, self.rng
        w = self.get(t, dims)
        d = r.choice(["EQ", "NE", "LT", "LE", "GT", "GE"])
        extra = ""
        if is_float(t) and r.random() < 0.2:
            extra = ", type=TOTALORDER"
        c = self.op("compare", "pred", dims, [v, w], "direction=%s%s" % (d, extra))
        if r.random() < 0.3:
            return c
        t2 = r.choice([t, self.rand_type()])
        a = self.get(t2, dims)
        b = self.get(t2, dims)
        if r.random() < 0.2 and dims:
            # scalar predicate
            c = self.get("pred", ())
        return self.op("select", t2, dims, [c, a, b], bound=max(a.bound, b.bound))

    def gen_clamp(self):
        v = self.any_value(lambda u: u.t != "pred")
        t, dims = v.t, v.dims
        lo = self.scalar_const(t, -1.0 if is_float(t) else (0 if t[0] == "u" else -3))
        hi = self.scalar_const(t, 1.0 if is_float(t) else 7)
        if self.rng.random() < 0.5 and dims:
            lo = self.op("broadcast", t, dims, [lo], "dimensions={}", lo.bound)
        return self.op("clamp", t, dims, [lo, v, hi], bound=max(lo.bound, hi.bound))

    def gen_convert(self):
        v = self.any_value()
        t = self.rand_type()
        if t == v.t:
            t = "f32" if v.t != "f32" else "s32"
        return self.convert(v, t)

    def gen_broadcast(self):
        v = self.any_value(lambda u: len(u.dims) <= 3)
        r = self.rng
        extra = r.randint(1, 2)
        rank = len(v.dims) + extra
        positions = sorted(r.sample(range(rank), len(v.dims)))
        dims = [0] * rank
        for p, d in zip(positions, v.dims):
            dims[p] = d
        for i in range(rank):
            if i not in positions:
                dims[i] = r.choice([1, 2, 3, 4])
        if nelems(dims) > MAX_ELEMS:
            return None
        return self.op("broadcast", v.t, dims, [v], "dimensions={%s}" % ",".join(map(str, positions)), v.bound)

    def factorizations(self, n, rank):
        if rank == 0:
            return [()] if n == 1 else []
        if rank == 1:
            return [(n,)]
        out = []
        for d in range(1, n + 1):
            if n % d == 0:
                for rest in self.factorizations(n // d, rank - 1):
                    out.append((d,) + rest)
                    if len(out) > 40:
                        return out
        return out

    def gen_reshape(self):
        v = self.any_value()
        n = nelems(v.dims)
        rank = self.rng.choice([0, 1, 2, 3, 4]) if n == 1 else self.rng.choice([1, 2, 3, 4])
        f = self.factorizations(n, rank)
        if not f:
            return None
        return self.op("reshape", v.t, self.rng.choice(f), [v], bound=v.bound)

    def gen_reverse(self):
        v = self.any_value(lambda u: len(u.dims) >= 1)
        if not v.dims:
            return None
        ds = sorted(self.rng.sample(range(len(v.dims)), self.rng.randint(1, len(v.dims))))
        return self.op("reverse", v.t, v.dims, [v], "dimensions={%s}" % ",".join(map(str, ds)), v.bound)

    def gen_reduce_precision(self):
        v = self.any_value(lambda u: is_float(u.t))
        if not is_float(v.t):
            return None
        e, m = self.rng.choice([(8, 7), (5, 10), (8, 23), (4, 3)])
        v = self.bounded(v, 4.0)
        return self.op("reduce-precision", v.t, v.dims, [v], "exponent_bits=%d, mantissa_bits=%d" % (e, m), v.bound * 1.1)

    def gen_transpose(self):
        v = self.any_value(lambda u: len(u.dims) >= 2)
        if len(v.dims) < 2:
            return None
        perm = list(range(len(v.dims)))
        self.rng.shuffle(perm)
        dims = [v.dims[p] for p in perm]
        return self.op("transpose", v.t, dims, [v], "dimensions={%s}" % ",".join(map(str, perm)), v.bound)

    def reducer_kind(self, t):
        if t == "pred":
            return self.rng.choice(["and", "or"])
        return self.rng.choice(["add", "add", "max", "min", "mul"])

    def gen_reduce(self):
        v = self.any_value(lambda u: len(u.dims) >= 1)
        if not v.dims:
            return None
        r = self.rng
        t = v.t
        k = self.reducer_kind(t)
        if k == "mul" and is_float(t):
            v = self.bounded(v, 1.0)
        rdims = sorted(r.sample(range(len(v.dims)), r.randint(1, len(v.dims))))
        out = [d for i, d in enumerate(v.dims) if i not in rdims]
        n = nelems([v.dims[i] for i in rdims])
        if r.random() < 0.2 and t != "pred" and len(self.mod.comps) < 30:
            return self.gen_variadic_reduce(v, rdims, out)
        init = self.scalar_const(t, init_value(k, t))
        if k in ("max", "min"):
            init.bound = v.bound
        bd = v.bound * n if k == "add" else (v.bound if k != "mul" else max(1.0, min(v.bound, 1e3)) ** min(n, 8))
        res = self.op("reduce", t, out, [v, init], "dimensions={%s}, to_apply=%s"
                      % (",".join(map(str, rdims)), self.mod.reducer(k, t)), bound=bd)
        return self.bounded(res)

    def gen_variadic_reduce(self, v, rdims, out):
        """argmax-style reduce over (value, index) with a tie-breaking comparator."""
        t = v.t
        it = "s32"
        d = rdims[0]
        idx = self.op("iota", it, v.dims, [], "iota_dimension=%d" % d, bound=max(v.dims))
        n = self.mod.fresh_comp("argmax")
        s, si = shape_str(t, ()), shape_str(it, ())
        direction = self.rng.choice(["GT", "LT"])
        body = ("%s {\n  a = %s parameter(0)\n  ai = %s parameter(1)\n  b = %s parameter(2)\n  bi = %s parameter(3)\n"
                "  cmp = pred[] compare(a, b), direction=%s\n  eq = pred[] compare(a, b), direction=EQ\n"
                "  lti = pred[] compare(ai, bi), direction=LT\n  tie = pred[] and(eq, lti)\n"
                "  take = pred[] or(cmp, tie)\n  v = %s select(take, a, b)\n  i = %s select(take, ai, bi)\n"
                "  ROOT r = (%s, %s) tuple(v, i)\n}\n") % (n, s, si, s, si, direction, s, si, s, si)
        self.mod.comps.append(body)
        init = self.scalar_const(t, init_value("max" if direction == "GT" else "min", t))
        iinit = self.scalar_const(it, 0)
        tup = self.op("reduce", None, (), [v, idx, init, iinit],
                      "dimensions={%s}, to_apply=%s" % (",".join(map(str, rdims)), n),
                      tuple_of=[(t, tuple(out)), (it, tuple(out))])
        a = self.op("get-tuple-element", t, out, [tup], "index=0", bound=v.bound)
        b = self.op("get-tuple-element", it, out, [tup], "index=1", bound=1000)
        return b if self.rng.random() < 0.5 else a

    def gen_dot(self):
        r = self.rng
        t = "f32" if r.random() < 0.85 else r.choice(["s32", "f32"])
        nb = r.choice([0, 0, 1, 1, 2])
        nc = r.choice([1, 1, 1, 2])
        batch = [r.choice([1, 2, 3, 4]) for _ in range(nb)]
        contr = [r.choice([1, 2, 3, 4, 8, 16]) for _ in range(nc)]
        m = [r.choice([1, 2, 3, 5, 8]) for _ in range(r.choice([0, 1, 1, 2]))]
        n = [r.choice([1, 2, 3, 4, 7]) for _ in range(r.choice([0, 1, 1]))]
        # lhs dims: batch + m + contr in a random order; rhs: batch + contr + n in a random order
        def layout(groups):
            items = []
            for g, ds in groups:
                items += [(g, i, d) for i, d in enumerate(ds)]
            r.shuffle(items)
            if r.random() < 0.6:  # often the canonical order
                items.sort(key=lambda x: {"b": 0, "m": 1, "n": 2, "c": 3}[x[0]] if x[0] != "c" else (3 if groups[1][0] == "m" else 1.5))
            return items
        L = layout([("b", batch), ("m", m), ("c", contr)])
        R = layout([("b", batch), ("c", contr), ("n", n)])
        ldims = [d for _, _, d in L]
        rdims = [d for _, _, d in R]
        if nelems(ldims) > MAX_ELEMS or nelems(rdims) > MAX_ELEMS:
            return None
        def pos(items, g):
            return [next(k for k, (gg, ii, _) in enumerate(items) if gg == g and ii == i)
                    for i in range(len({"b": batch, "c": contr}[g]))]
        a = self.bounded(self.get(t, ldims), 2.0)
        b = self.bounded(self.get(t, rdims), 2.0)
        out = batch + [d for g, _, d in L if g == "m"] + [d for g, _, d in R if g == "n"]
        attrs = []
        if nb:
            attrs.append("lhs_batch_dims={%s}" % ",".join(map(str, pos(L, "b"))))
        attrs.append("lhs_contracting_dims={%s}" % ",".join(map(str, pos(L, "c"))))
        if nb:
            attrs.append("rhs_batch_dims={%s}" % ",".join(map(str, pos(R, "b"))))
        attrs.append("rhs_contracting_dims={%s}" % ",".join(map(str, pos(R, "c"))))
        k = nelems(contr)
        res = self.op("dot", t, out, [a, b], ", ".join(attrs), bound=a.bound * b.bound * k)
        return self.bounded(res)

    def gen_slice(self):
        v = self.any_value(lambda u: len(u.dims) >= 1)
        if not v.dims:
            return None
        r = self.rng
        parts, out = [], []
        for d in v.dims:
            s = r.randint(0, d - 1)
            e = r.randint(s + 1, d)
            st = r.choice([1, 1, 1, 2, 3])
            parts.append("[%d:%d:%d]" % (s, e, st))
            out.append((e - s + st - 1) // st)
        return self.op("slice", v.t, out, [v], "slice={%s}" % ", ".join(parts), v.bound)

    def gen_concatenate(self):
        v = self.any_value(lambda u: len(u.dims) >= 1)
        if not v.dims:
            return None
        r = self.rng
        d = r.randrange(len(v.dims))
        ops = [v]
        for _ in range(r.randint(1, 3)):
            dims = list(v.dims)
            dims[d] = r.choice([1, 2, 3, v.dims[d]])
            ops.append(self.get(v.t, dims))
        r.shuffle(ops)
        out = list(v.dims)
        out[d] = sum(o.dims[d] for o in ops)
        if nelems(out) > MAX_ELEMS:
            return None
        return self.op("concatenate", v.t, out, ops, "dimensions={%d}" % d, max(o.bound for o in ops))

    def gen_pad(self):
        v = self.any_value(lambda u: len(u.dims) >= 1)
        if not v.dims:
            return None
        r = self.rng
        cfg, out = [], []
        for d in v.dims:
            for _ in range(10):
                lo, hi, it = r.randint(-1, 2), r.randint(-1, 2), r.choice([0, 0, 0, 1, 2])
                n = lo + hi + d + max(0, d - 1) * it
                if n >= 1:
                    break
            else:
                lo, hi, it, n = 0, 0, 0, d
            cfg.append("%d_%d" % (lo, hi) + ("_%d" % it if it else ""))
            out.append(n)
        if nelems(out) > MAX_ELEMS:
            return None
        pv = self.scalar_const(v.t)
        return self.op("pad", v.t, out, [v, pv], "padding=%s" % "x".join(cfg), max(v.bound, pv.bound))

    def index_type(self):
        return self.rng.choice(["s32", "s32", "s64", "u32"])

    def gen_gather(self):
        v = self.any_value(lambda u: len(u.dims) >= 1 and u.tuple_of is None)
        if not v.dims:
            return None
        r = self.rng
        rank = len(v.dims)
        k = r.randint(1, rank)
        start_map = sorted(r.sample(range(rank), k))
        if r.random() < 0.3:
            r.shuffle(start_map)
        sizes = [r.randint(1, d) for d in v.dims]
        collapsed = sorted(i for i in start_map if r.random() < 0.5)
        for i in collapsed:
            sizes[i] = 1
        nidx = r.choice([1, 2, 3, 5])
        it = self.index_type()
        idx = self.get(it, (nidx, k))
        offset = [sizes[i] for i in range(rank) if i not in collapsed]
        out = [nidx] + offset
        if nelems(out) > MAX_ELEMS:
            return None
        attrs = ("offset_dims={%s}, collapsed_slice_dims={%s}, start_index_map={%s}, index_vector_dim=1, "
                 "slice_sizes={%s}") % (",".join(str(i + 1) for i in range(len(offset))),
                                         ",".join(map(str, collapsed)), ",".join(map(str, start_map)),
                                         ",".join(map(str, sizes)))
        return self.op("gather", v.t, out, [v, idx], attrs, v.bound)

    def gen_scatter(self):
        v = self.any_value(lambda u: len(u.dims) >= 1 and u.t != "pred")
        if not v.dims:
            return None
        r = self.rng
        rank = len(v.dims)
        k = r.randint(1, rank)
        smap = sorted(r.sample(range(rank), k))
        inserted = sorted(i for i in smap if r.random() < 0.5)
        win = [r.randint(1, d) if i not in inserted else 1 for i, d in enumerate(v.dims)]
        nidx = r.choice([1, 2, 3])
        it = self.index_type()
        idx = self.get(it, (nidx, k))
        upd_dims = [nidx] + [win[i] for i in range(rank) if i not in inserted]
        kind = r.choice(["add", "max", "min"] + (["mul"] if not is_float(v.t) else []))
        upd = self.get(v.t, upd_dims)
        if is_float(v.t):
            upd = self.bounded(upd, 2.0)
        attrs = ("update_window_dims={%s}, inserted_window_dims={%s}, scatter_dims_to_operand_dims={%s}, "
                 "index_vector_dim=1, to_apply=%s") % (
            ",".join(str(i + 1) for i in range(len(upd_dims) - 1)), ",".join(map(str, inserted)),
            ",".join(map(str, smap)), self.mod.reducer(kind, v.t))
        res = self.op("scatter", v.t, v.dims, [v, idx, upd], attrs, v.bound + upd.bound * nidx)
        return self.bounded(res)

    def gen_sort(self):
        v = self.any_value(lambda u: len(u.dims) >= 1 and u.t != "pred")
        if not v.dims:
            return None
        r = self.rng
        d = r.randrange(len(v.dims))
        ops = [v]
        for _ in range(r.choice([0, 0, 1, 2])):
            ops.append(self.get(r.choice(["f32", "s32", v.t]), v.dims))
        key = 0
        types = [o.t for o in ops]
        cmp = self.mod.comparator(types, r.choice(["LT", "GT"]), key)
        stable = len(ops) > 1 or r.random() < 0.5
        attrs = "dimensions={%d}%s, to_apply=%s" % (d, ", is_stable=true" if stable else "", cmp)
        if len(ops) == 1:
            return self.op("sort", v.t, v.dims, ops, attrs, v.bound)
        tup = self.op("sort", None, (), ops, attrs, tuple_of=[(o.t, o.dims) for o in ops])
        outs = [self.op("get-tuple-element", o.t, o.dims, [tup], "index=%d" % i, o.bound) for i, o in enumerate(ops)]
        return r.choice(outs)

    def gen_reduce_window(self):
        v = self.any_value(lambda u: len(u.dims) >= 1 and u.t != "pred")
        if not v.dims:
            return None
        r = self.rng
        t = v.t
        k = r.choice(["add", "max", "min"])
        sizes, strides, pads, out, bdil, wdil = [], [], [], [], [], []
        use_dil = r.random() < 0.2
        for d in v.dims:
            for _ in range(10):
                w = r.randint(1, min(d, 3) + 1)
                s = r.choice([1, 1, 2])
                lo, hi = r.choice([0, 0, 1]), r.choice([0, 0, 1])
                bd = r.choice([1, 1, 2]) if use_dil else 1
                wd = r.choice([1, 1, 2]) if use_dil else 1
                ed = (d - 1) * bd + 1 + lo + hi
                ew = (w - 1) * wd + 1
                if ed >= ew:
                    break
            else:
                w, s, lo, hi, bd, wd, ed, ew = 1, 1, 0, 0, 1, 1, d, 1
            sizes.append(w)
            strides.append(s)
            pads.append("%d_%d" % (lo, hi))
            bdil.append(bd)
            wdil.append(wd)
            out.append((ed - ew) // s + 1)
        win = "size=%s stride=%s pad=%s" % ("x".join(map(str, sizes)), "x".join(map(str, strides)), "x".join(pads))
        if use_dil:
            win += " lhs_dilate=%s rhs_dilate=%s" % ("x".join(map(str, bdil)), "x".join(map(str, wdil)))
        init = self.scalar_const(t, init_value(k, t) if r.random() < 0.7 or k != "add" else None)
        if is_float(t) and k in ("max", "min") and r.random() < 0.5:
            init = self.scalar_const(t, 0.0)
        n = nelems(sizes)
        res = self.op("reduce-window", t, out, [v, init], "window={%s}, to_apply=%s" % (win, self.mod.reducer(k, t)),
                      bound=(v.bound + init.bound) * (n + 1))
        return self.bounded(res)

    def gen_iota(self):
        dims = self.rand_dims(self.rng.choice([1, 1, 2, 3]))
        t = self.rng.choice(["f32", "s32", "u32", "s8"])
        if t == "s8":
            dims = tuple(min(d, 8) for d in dims)
        return self.op("iota", t, dims, [], "iota_dimension=%d" % self.rng.randrange(len(dims)), bound=max(dims))

    def gen_constant(self):
        t = self.rand_type()
        dims = self.rand_dims(self.rng.choice([0, 1, 2]), 16)
        return self.array_const(t, dims) if dims else self.scalar_const(t)

    def index_scalar(self):
        r = self.rng
        it = r.choice(["s32", "s32", "s64", "u32"])
        c = r.random()
        if c < 0.4:
            return self.scalar_const(it, r.randint(0, 9) if it[0] == "u" else r.randint(-2, 9))
        if c < 0.8:
            return self.get(it, ())
        # a computed index: reduce of something
        return self.get(it, ())

    def gen_dynamic_slice(self):
        v = self.any_value(lambda u: len(u.dims) >= 1)
        if not v.dims:
            return None
        sizes = [self.rng.randint(1, d) for d in v.dims]
        it = None
        idxs = []
        for _ in v.dims:
            i = self.index_scalar()
            if it is None:
                it = i.t
            elif i.t != it:
                i = self.convert(i, it)
            idxs.append(i)
        return self.op("dynamic-slice", v.t, sizes, [v] + idxs, "dynamic_slice_sizes={%s}" % ",".join(map(str, sizes)),
                       v.bound)

    def gen_dynamic_update_slice(self):
        v = self.any_value(lambda u: len(u.dims) >= 1)
        if not v.dims:
            return None
        sizes = [self.rng.randint(1, d) for d in v.dims]
        upd = self.get(v.t, sizes)
        it = None
        idxs = []
        for _ in v.dims:
            i = self.index_scalar()
            if it is None:
                it = i.t
            elif i.t != it:
                i = self.convert(i, it)
            idxs.append(i)
        return self.op("dynamic-update-slice", v.t, v.dims, [v, upd] + idxs, bound=max(v.bound, upd.bound))

    def sub_builder(self):
        return Builder(self.mod, self.rng, allow_params=False, depth=self.depth + 1)

    def gen_while(self):
        if self.depth >= 2:
            return None
        r = self.rng
        x = self.any_value(lambda u: nelems(u.dims) <= 256)
        extra = self.pick(pred=lambda u: u.tuple_of is None and u is not x and nelems(u.dims) <= 64) \
            if r.random() < 0.4 else None
        carried = [x] + ([extra] if extra is not None else [])
        x = self.bounded(x, 2.0)
        carried[0] = x
        if extra is not None:
            carried[1] = self.bounded(extra, 2.0)
        trip = r.randint(0, 4)
        ct = r.choice(["s32", "s32", "u32", "s64"])
        shapes = [(ct, ())] + [(v.t, v.dims) for v in carried]
        tshape = "(" + ", ".join(shape_str(t, d) for t, d in shapes) + ")"
        # condition
        cname = self.mod.fresh_comp("cond")
        self.mod.comps.append("%s {\n  p = %s parameter(0)\n  i = %s get-tuple-element(p), index=0\n"
                              "  n = %s constant(%d)\n  ROOT lt = pred[] compare(i, n), direction=LT\n}\n"
                              % (cname, tshape, shape_str(ct, ()), shape_str(ct, ()), trip))
        # body: random ops on the carried values, each result bounded
        b = self.sub_builder()
        bname = self.mod.fresh_comp("body")
        b.lines.append("  p = %s parameter(0)" % tshape)
        b.lines.append("  i = %s get-tuple-element(p), index=0" % shape_str(ct, ()))
        b.lines.append("  one = %s constant(1)" % shape_str(ct, ()))
        b.lines.append("  i1 = %s add(i, one)" % shape_str(ct, ()))
        ins = []
        for k, v in enumerate(carried):
            g = Value("g%d" % k, v.t, v.dims, v.bound)
            b.lines.append("  g%d = %s get-tuple-element(p), index=%d" % (k, g.shape, k + 1))
            b.pool.append(g)
            ins.append(g)
        if r.random() < 0.5:
            # the counter as a value too
            iv = Value("i", ct, (), 4.0)
            b.pool.append(iv)
        b.random_ops(r.randint(1, 5))
        outs = []
        for v in carried:
            o = b.get(v.t, v.dims)
            if is_float(v.t):
                o = b.bounded(o, 2.0) if o.bound > 2.0 else o
            outs.append(o)
        b.lines.append("  ROOT t = %s tuple(i1, %s)" % (tshape, ", ".join(o.name for o in outs)))
        self.mod.comps.append("%s {\n%s\n}\n" % (bname, "\n".join(b.lines)))
        zero = self.scalar_const(ct, 0)
        init = self.op("tuple", None, (), [zero] + carried, tuple_of=shapes)
        w = self.op("while", None, (), [init], "condition=%s, body=%s" % (cname, bname), tuple_of=shapes)
        res = [self.op("get-tuple-element", v.t, v.dims, [w], "index=%d" % (k + 1), bound=2.0 if is_float(v.t) else 1e9)
               for k, v in enumerate(carried)]
        if r.random() < 0.3:
            return self.op("get-tuple-element", ct, (), [w], "index=0", bound=8)
        return r.choice(res)

    def gen_conditional(self):
        if self.depth >= 2:
            return None
        r = self.rng
        x = self.any_value(lambda u: nelems(u.dims) <= 512)
        out_t = r.choice([x.t, x.t, "f32", "s32"])
        out_dims = x.dims if r.random() < 0.7 else self.rand_dims(r.choice([0, 1, 2]), 64)
        nbranch = r.choice([2, 2, 3])
        use_pred = nbranch == 2 and r.random() < 0.6
        branches = []
        operands = []
        for k in range(nbranch):
            # each branch takes its own operand (x or another value)
            op = x if r.random() < 0.6 else self.any_value(lambda u: nelems(u.dims) <= 512)
            op = self.bounded(op, 4.0)
            b = self.sub_builder()
            name = self.mod.fresh_comp("branch")
            g = Value("a", op.t, op.dims, op.bound)
            b.lines.append("  a = %s parameter(0)" % g.shape)
            b.pool.append(g)
            b.random_ops(r.randint(0, 4))
            o = b.get(out_t, out_dims)
            if is_float(out_t):
                o = b.bounded(o, 4.0)
            b.lines.append("  ROOT r = %s copy(%s)" % (shape_str(out_t, out_dims), o.name))
            self.mod.comps.append("%s {\n%s\n}\n" % (name, "\n".join(b.lines)))
            branches.append(name)
            operands.append(op)
        if use_pred:
            p = self.get("pred", ())
            return self.op("conditional", out_t, out_dims, [p] + operands,
                           "true_computation=%s, false_computation=%s" % (branches[0], branches[1]),
                           bound=4.0 if is_float(out_t) else 1e9)
        idx = self.get("s32", ())
        if r.random() < 0.5:
            # index in range most of the time; out of range runs the last branch
            lo = self.scalar_const("s32", 0)
            hi = self.scalar_const("s32", nbranch)
            idx = self.op("clamp", "s32", (), [lo, idx, hi])
        return self.op("conditional", out_t, out_dims, [idx] + operands,
                       "branch_computations={%s}" % ", ".join(branches), bound=4.0 if is_float(out_t) else 1e9)

    GENERATORS = [
        ("unary", 10), ("binary", 14), ("compare_select", 5), ("clamp", 2), ("convert", 4),
        ("broadcast", 4), ("reshape", 4), ("transpose", 4), ("reverse", 2), ("reduce_precision", 1), ("reduce", 7), ("dot", 6), ("slice", 4),
        ("concatenate", 3), ("pad", 3), ("gather", 3), ("scatter", 3), ("sort", 3),
        ("reduce_window", 3), ("iota", 1), ("constant", 1), ("dynamic_slice", 3),
        ("dynamic_update_slice", 3), ("while", 2), ("conditional", 2),
    ]

    def random_ops(self, n, weights=None):
        names = [g for g, _ in self.GENERATORS]
        ws = [w for _, w in self.GENERATORS] if weights is None else weights
        if self.depth > 0:
            ws = [0 if g in ("while", "conditional") and self.depth >= 2 else w for g, w in zip(names, ws)]
        made = 0
        tries = 0
        while made < n and tries < n * 4:
            tries += 1
            g = self.rng.choices(names, ws)[0]
            v = getattr(self, "gen_" + g)()
            if v is not None:
                made += 1

    def live_outputs(self, limit=5):
        """Values nobody uses (the ends of the chains), most recent first."""
        params = set(id(p) for p in self.params)
        out = [v for v in self.pool if v.name not in self.used and v.tuple_of is None and id(v) not in params]
        out.reverse()
        return out[:limit]


def generate(seed, n_ops=None, focus=None):
    rng = random.Random(seed)
    mod = Module(rng)
    b = Builder(mod, rng)
    if n_ops is None:
        n_ops = rng.randint(3, 24) if rng.random() < 0.7 else rng.randint(24, 48)
    weights = None
    if focus is not None:
        weights = [(w * 20 if g == focus else w) for g, w in Builder.GENERATORS]
    for _ in range(rng.randint(1, 3)):
        b.param(b.rand_type(), b.rand_dims())
    b.random_ops(n_ops, weights)
    outs = b.live_outputs(rng.randint(1, 5))
    if not outs:
        outs = [b.pool[-1]]
    if len(outs) == 1 and rng.random() < 0.5:
        root = "  ROOT root = %s copy(%s)" % (outs[0].shape, outs[0].name)
    else:
        root = "  ROOT root = (%s) tuple(%s)" % (", ".join(o.shape for o in outs), ", ".join(o.name for o in outs))
    text = "HloModule fuzz_%d\n\n" % seed
    text += "\n".join(mod.comps)
    if mod.comps:
        text += "\n"
    text += "ENTRY main {\n%s\n%s\n}\n" % ("\n".join(b.lines), root)
    return text


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("seed", nargs="?", type=int, default=0)
    ap.add_argument("--ops", type=int, default=None, help="random instructions in the entry (default 3-24)")
    ap.add_argument("--focus", default=None, help="weight one generator (e.g. gather) 20x")
    ap.add_argument("--check", type=int, default=0, metavar="N", help="verify N modules from SEED on and report")
    ap.add_argument("--hloc", default=os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "build", "hloc"))
    args = ap.parse_args()
    if not args.check:
        sys.stdout.write(generate(args.seed, args.ops, args.focus))
        return 0
    bad = 0
    with tempfile.TemporaryDirectory() as d:
        for s in range(args.seed, args.seed + args.check):
            p = os.path.join(d, "m.hlo")
            with open(p, "w") as f:
                f.write(generate(s, args.ops, args.focus))
            res = subprocess.run([args.hloc, "verify", p], capture_output=True, text=True)
            if res.returncode != 0:
                bad += 1
                print("seed %d: %s" % (s, (res.stderr or res.stdout).strip().splitlines()[0][:300]))
    print("verified %d of %d (%.1f%%)" % (args.check - bad, args.check, 100.0 * (args.check - bad) / args.check))
    return 0 if bad == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
