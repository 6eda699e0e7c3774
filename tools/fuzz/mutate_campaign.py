#!/usr/bin/env python3
"""Mutation-based black-box fuzzing of the hloc command line (issue 35's campaign, rerunnable).

Each execution picks a class, builds an input by mutating a seed, runs one hloc command on it in
a fresh temporary folder under a time limit (--timeout) and an address-space limit (--mem-gib,
RLIMIT_AS), and judges the result with the oracle below. Findings are deduplicated by a
signature (class, command, kind and the first error line with paths and numbers normalized);
the first reproducer of each signature is kept under OUT/findings/NNN-KIND/ with a repro.sh.

Classes (weights in CLASS_WEIGHTS):
  hlo     mutated HLO text (tests/corpus/**/*.txt up to --max-seed-bytes, tests/xla-hlo-cases)
          through verify / print / opt / compile (cpu or h200 profile) / run / eval
  diff    a lightly mutated (or unmodified) module that verifies: eval --outputs, then
          run --expect and run --no-passes --expect with the same --seed
  npz     corrupted npz files (corpus inputs and files hloc eval --outputs wrote) as --inputs
          or --expect of run / eval
  yaml    mutated configs/*.yaml and pipelines/*.yaml through --profile FILE / --pipeline FILE
  cli     bad command lines: unknown options, missing or bad values, odd files (/dev/zero, ...)
  hlox    corrupted executables (hloc compile -o) through hloc run
  deep    generated modules: deep nesting, long chains, wide concatenates, huge shapes

Oracle (a finding): a signal or an exit status outside {0, 1, 2} (2 only where the command line
is bad: the cli class; elsewhere exit 2 is a finding), a timeout, 'LLVM ERROR', 'Assertion',
'terminate called', 'bad_alloc', 'Segmentation fault', 'AddressSanitizer', an error without a
FILE:LINE:COL location where HLO text was the input (and a message that is not about the
inputs / the run: see UNLOCATED_OK), a differential mismatch, an output file (-o / --outputs /
--kernel-report target) left after a failed command, or a '.NAME.tmp-XXXXXX' file left behind.

Standard library only (numpy is not needed: npz files are zip archives of .npy files).
"""

import argparse
import hashlib
import json
import os
import random
import re
import resource
import shlex
import shutil
import signal
import struct
import subprocess
import sys
import tempfile
import threading
import time
import warnings
import zipfile
import zlib

warnings.filterwarnings("ignore", module="zipfile")  # duplicate members are made on purpose

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

# --------------------------------------------------------------------------------------------
# Vocabulary
# --------------------------------------------------------------------------------------------

OPCODES = """abs add add-dependency after-all all-gather all-gather-start all-gather-done all-reduce
all-reduce-start all-reduce-done all-to-all atan2 batch-norm-grad batch-norm-inference
batch-norm-training bitcast bitcast-convert broadcast call cbrt ceil cholesky clamp
collective-broadcast collective-permute collective-permute-start collective-permute-done
clz compare complex concatenate conditional constant convert convolution copy copy-start
copy-done cosine custom-call divide domain dot dynamic-reshape dynamic-slice
dynamic-update-slice erf exponential exponential-minus-one fft floor fusion gather
get-dimension-size set-dimension-size get-tuple-element imag infeed iota is-finite log
log-plus-one logistic and not or xor map maximum minimum multiply negate optimization-barrier
outfeed pad parameter partition-id popcnt power real recv recv-done reduce reduce-precision
reduce-scatter reduce-window remainder replica-id reshape reverse rng rng-bit-generator
rng-get-and-update-state round-nearest-afz round-nearest-even rsqrt scatter select
select-and-scatter send send-done shift-left shift-right-arithmetic shift-right-logical sign
sine slice sort sqrt stochastic-convert subtract tan tanh topk transpose triangular-solve
tuple while""".split()

ELEMENT_TYPES = """pred s2 s4 s8 s16 s32 s64 u2 u4 u8 u16 u32 u64 f16 f32 f64 bf16 f8e4m3fn f8e5m2
f8e4m3fnuz f8e5m2fnuz f8e4m3b11fnuz f8e4m3 f8e3m4 f8e8m0fnu f4e2m1fn c64 c128""".split()

# Types that keep most modules verifying when swapped for one another everywhere.
FLOAT_TYPES = "f16 f32 f64 bf16 f8e4m3fn f8e5m2 f4e2m1fn f8e4m3fnuz f8e3m4 c64".split()
INT_TYPES = "s4 s8 s16 s32 s64 u4 u8 u16 u32 u64 pred".split()

EDGE_NUMBERS = ["0", "1", "-1", "2", "3", "7", "255", "256", "65535", "65536", "2147483647",
                "2147483648", "4294967296", "9223372036854775807", "9223372036854775808",
                "18446744073709551616", "100000", "1000000000", "99999999999999999999999"]
EDGE_FLOATS = ["nan", "inf", "-inf", "-0", "1e38", "3.4e39", "1e-45", "65504", "1e308", "0x1p-149"]

COMPARE_DIRS = ["EQ", "NE", "LT", "LE", "GT", "GE", "XX"]

RANDOM_BYTES = [b"\x00", b"\xff", b"\xc3\x28", b"{", b"}", b"(", b")", b"[", b"]", b",", b"%",
                b"\"", b"\\", b"=", b"/*", b"*/", b"//", b"\n", b"ENTRY", b"ROOT", b"\t", b"\xef\xbb\xbf",
                b"HloModule", b"{...}", b"/*index=5*/", b"e", b"-", b"0x", b"\xf0\x9f\x92\xa9"]

HLO_EXTS = (".txt", ".hlo")

# Messages that legitimately carry no FILE:LINE:COL although HLO text was the input: they are
# about the inputs, the machine, the run or an option, not a place in the module.
UNLOCATED_OK = [
    r"cannot allocate", r"\bnpz\b", r"\.npy\b", r"--inputs", r"--expect", r"--outputs",
    r"outputs? match", r"mismatch", r"\bprofile\b", r"\bpipeline\b", r"\.yaml", r"No such file",
    r"cannot open", r"cannot read", r"not a regular file", r"too large", r"input-spec",
    r"CUDA", r"\bGPU\b", r"libcuda", r"no GPU", r"write error", r"cannot write",
]

# --------------------------------------------------------------------------------------------
# Process execution
# --------------------------------------------------------------------------------------------


class Result:
    def __init__(self, argv, rc, out, err, secs, timed_out):
        self.argv, self.rc, self.out, self.err, self.secs, self.timed_out = argv, rc, out, err, secs, timed_out


class Runner:
    def __init__(self, hloc, timeout, mem_gib):
        self.hloc = hloc
        self.timeout = timeout
        self.mem_bytes = int(mem_gib * (1 << 30))
        self.env = {k: v for k, v in os.environ.items() if k not in ("HLOC_PIPELINE_DIR", "HLOC_CONFIG_DIR")}
        self.env["LC_ALL"] = "C"

    def _limits(self):
        resource.setrlimit(resource.RLIMIT_AS, (self.mem_bytes, self.mem_bytes))
        resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
        # No single output may fill the disk.
        resource.setrlimit(resource.RLIMIT_FSIZE, (2 << 30, 2 << 30))
        os.setsid()

    def run(self, args, cwd, stdin_path=None, timeout=None):
        argv = [self.hloc] + args
        timeout = timeout or self.timeout
        start = time.monotonic()
        stdin = open(stdin_path, "rb") if stdin_path else subprocess.DEVNULL
        for attempt in range(3):
            try:
                p = subprocess.Popen(argv, cwd=cwd, stdin=stdin, stdout=subprocess.PIPE,
                                     stderr=subprocess.PIPE, preexec_fn=self._limits,
                                     env=self.env)
                break
            except OSError:  # ETXTBSY / ENOENT while someone relinks build/hloc
                time.sleep(2 + attempt * 3)
        else:
            raise RuntimeError("cannot start " + self.hloc)
        timed_out = False
        try:
            out, err = p.communicate(timeout=timeout)
        except subprocess.TimeoutExpired:
            timed_out = True
            try:
                os.killpg(p.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
            out, err = p.communicate()
        if stdin_path:
            stdin.close()
        # Limit what we hold on to.
        return Result(argv, p.returncode, out[-20000:], err[-20000:], time.monotonic() - start, timed_out)


# --------------------------------------------------------------------------------------------
# Seeds
# --------------------------------------------------------------------------------------------


def collect_seeds(max_bytes):
    seeds = []
    corpus = os.path.join(REPO, "tests", "corpus")
    for root, _, files in os.walk(corpus):
        for f in sorted(files):
            if not f.endswith(".txt") or f == "README.txt":
                continue
            p = os.path.join(root, f)
            size = os.path.getsize(p)
            if size <= max_bytes:
                seeds.append(p)
    cases = os.path.join(REPO, "tests", "xla-hlo-cases")
    for sub in ("valid", "valid_other", "invalid"):
        d = os.path.join(cases, sub)
        if os.path.isdir(d):
            for f in sorted(os.listdir(d)):
                if f.endswith(".hlo") and not f.endswith("_shape.hlo"):
                    seeds.append(os.path.join(d, f))
    return sorted(set(seeds))


def runnable(seed_path):
    """run / eval only on modules with small shapes (the corpus's .large. modules take minutes in eval)."""
    return ".large." not in os.path.basename(seed_path)


def module_inputs(seed_path):
    """The corpus inputs npz that belongs to a module, if any."""
    base = os.path.basename(seed_path)
    m = re.match(r"(.*?\.(small|large))\.", base)
    if not m:
        return None
    p = os.path.join(os.path.dirname(seed_path), m.group(1) + ".inputs.npz")
    return p if os.path.exists(p) else None


SHAPE_RE = re.compile(r"\b(?:pred|[suf]\d+|bf16|f8e\w+|f4e2m1fn|c64|c128)\[([0-9,?<=]*)\]")


def max_elements(text):
    best = 0
    for m in SHAPE_RE.finditer(text):
        n = 1
        for d in m.group(1).split(","):
            d = d.strip().lstrip("<=?")
            if d.isdigit():
                n *= int(d)
        best = max(best, n)
    return best


# --------------------------------------------------------------------------------------------
# HLO text mutations
# --------------------------------------------------------------------------------------------


def _replace_span(text, m, new, group=0):
    return text[:m.start(group)] + new + text[m.end(group):]


def _pick(rng, it):
    items = list(it)
    return rng.choice(items) if items else None


def mut_number(rng, t):
    m = _pick(rng, re.finditer(r"(?<![\w.])-?\d+(?:\.\d+)?(?:e[+-]?\d+)?(?![\w.])", t))
    if not m:
        return t, None
    new = rng.choice(EDGE_NUMBERS + EDGE_FLOATS) if "." in m.group(0) else rng.choice(EDGE_NUMBERS)
    return _replace_span(t, m, new), "number"


def mut_dim(rng, t):
    m = _pick(rng, SHAPE_RE.finditer(t))
    if not m or not m.group(1):
        return t, None
    dims = m.group(1).split(",")
    i = rng.randrange(len(dims))
    dims[i] = rng.choice(["0", "1", "2", "3", "65536", "2147483648", "9223372036854775807", "1000000",
                          "?", "<=4", "-1", str(rng.randint(1, 9))])
    if rng.random() < 0.2:
        dims.append(rng.choice(["1", "2", "0"]))
    elif rng.random() < 0.2 and len(dims) > 1:
        dims.pop(i)
    return _replace_span(t, m, ",".join(dims), 1), "dim"


def mut_opcode(rng, t):
    m = _pick(rng, re.finditer(r"\s([a-z][a-z0-9-]*)\(", t))
    if not m or m.group(1) not in OPCODES:
        return t, None
    return _replace_span(t, m, rng.choice(OPCODES), 1), "opcode"


TYPE_RE = re.compile(r"\b(pred|[suf]\d+|bf16|f8e\w+?|f4e2m1fn|c64|c128|token)(?=\[|\b)")


def mut_type_one(rng, t):
    ms = [m for m in re.finditer(r"\b(pred|[suf]\d+|bf16|f8e[0-9a-z]+|f4e2m1fn|c64|c128)\[", t)]
    m = _pick(rng, ms)
    if not m:
        return t, None
    return _replace_span(t, m, rng.choice(ELEMENT_TYPES), 1), "type1"


def mut_type_all(rng, t):
    """Swap one element type for another everywhere (often still a valid module)."""
    present = sorted(set(re.findall(r"\b(pred|[suf]\d+|bf16|f8e[0-9a-z]+|f4e2m1fn|c64|c128)\[", t)))
    if not present:
        return t, None
    old = rng.choice(present)
    pool = FLOAT_TYPES if old in FLOAT_TYPES or old.startswith("f") else INT_TYPES
    if rng.random() < 0.2:
        pool = ELEMENT_TYPES
    new = rng.choice(pool)
    return re.sub(r"\b" + re.escape(old) + r"\[", new + "[", t), "typeall:%s->%s" % (old, new)


def mut_layout(rng, t):
    m = _pick(rng, re.finditer(r"\]\{([0-9,]+)(?=[:}])", t))
    if not m:
        return t, None
    dims = m.group(1).split(",")
    r = rng.random()
    if r < 0.6:
        rng.shuffle(dims)
    elif r < 0.8:
        dims = list(reversed(dims))
    else:
        dims[rng.randrange(len(dims))] = rng.choice(["0", "5", "99", "-1"])
    return _replace_span(t, m, ",".join(dims), 1), "layout"


def mut_dimensions_attr(rng, t):
    m = _pick(rng, re.finditer(r"(dimensions|lhs_contracting_dims|rhs_contracting_dims|lhs_batch_dims|"
                               r"rhs_batch_dims|slice_sizes|offset_dims|collapsed_slice_dims|start_index_map|"
                               r"update_window_dims|inserted_window_dims|scatter_dims_to_operand_dims|"
                               r"operand_layout_constraints|index_vector_dim|permutation)=\{([^{}]*)\}", t))
    if not m:
        return t, None
    vals = [v for v in m.group(2).split(",") if v.strip()]
    r = rng.random()
    if r < 0.3 and vals:
        vals = list(reversed(vals))
    elif r < 0.5 and vals:
        rng.shuffle(vals)
    elif r < 0.7:
        vals.append(rng.choice(["0", "1", "2", "7", "-1"]))
    elif r < 0.85 and vals:
        vals.pop(rng.randrange(len(vals)))
    else:
        vals = [rng.choice(["0", "1", "2", "-1", "4294967296"]) for _ in vals or [0]]
    return _replace_span(t, m, ",".join(vals), 2), "dimensions"


def mut_attr(rng, t):
    r = rng.random()
    if r < 0.3:
        m = _pick(rng, re.finditer(r"direction=([A-Z]+)", t))
        if m:
            return _replace_span(t, m, rng.choice(COMPARE_DIRS), 1), "direction"
    if r < 0.6:
        m = _pick(rng, re.finditer(r"(to_apply|calls|body|condition|true_computation|false_computation)=(%?[\w.-]+)", t))
        comps = re.findall(r"^\s*(?:ENTRY\s+)?(%?[\w.-]+)\s", t, re.M)
        if m and comps:
            return _replace_span(t, m, rng.choice(comps), 2), "callee"
    m = _pick(rng, re.finditer(r",\s*[a-z_]+=(\{[^{}]*\}|[^,\s)]+)", t))
    if m:
        return _replace_span(t, m, ""), "dropattr"
    return t, None


def mut_lines(rng, t):
    lines = t.split("\n")
    if len(lines) < 2:
        return t, None
    i = rng.randrange(len(lines))
    r = rng.random()
    if r < 0.35:
        del lines[i]
        kind = "dropline"
    elif r < 0.6:
        lines.insert(i, lines[i])
        kind = "dupline"
    elif r < 0.8:
        j = rng.randrange(len(lines))
        lines[i], lines[j] = lines[j], lines[i]
        kind = "swaplines"
    else:
        # Rename an operand reference to another instruction's name.
        names = re.findall(r"^\s*(?:ROOT\s+)?(%?[\w.-]+)\s*=", t, re.M)
        m = _pick(rng, re.finditer(r"\((%?[\w.-]+)", lines[i]))
        if not names or not m:
            return t, None
        lines[i] = lines[i][:m.start(1)] + rng.choice(names) + lines[i][m.end(1):]
        kind = "operand"
    return "\n".join(lines), kind


def mut_truncate(rng, t):
    if not t:
        return t, None
    return t[:rng.randrange(len(t))], "truncate"


def mut_bytes(rng, t):
    b = t.encode("utf-8", "surrogateescape")
    pos = rng.randrange(len(b) + 1)
    ins = rng.choice(RANDOM_BYTES) * rng.choice([1, 1, 1, 2, 50])
    if rng.random() < 0.3 and b:
        b = b[:pos] + ins + b[pos + 1:]
    else:
        b = b[:pos] + ins + b[pos:]
    return b.decode("utf-8", "surrogateescape"), "bytes"


def mut_root(rng, t):
    """Move ROOT to another instruction of the same computation, or drop it."""
    lines = t.split("\n")
    roots = [i for i, l in enumerate(lines) if l.lstrip().startswith("ROOT ")]
    if not roots:
        return t, None
    i = rng.choice(roots)
    lines[i] = lines[i].replace("ROOT ", "", 1)
    if rng.random() < 0.7 and i > 0 and "=" in lines[i - 1] and "{" not in lines[i - 1]:
        lines[i - 1] = re.sub(r"^(\s*)", r"\1ROOT ", lines[i - 1], count=1)
    return "\n".join(lines), "root"


HLO_MUTATORS = [
    (mut_number, 10), (mut_dim, 8), (mut_opcode, 8), (mut_type_one, 8), (mut_type_all, 6),
    (mut_layout, 6), (mut_dimensions_attr, 8), (mut_attr, 6), (mut_lines, 8), (mut_truncate, 3),
    (mut_bytes, 4), (mut_root, 3),
]
# Mutations that often leave a valid module (for the differential class).
SOFT_MUTATORS = [(mut_type_all, 6), (mut_layout, 5), (mut_dimensions_attr, 2), (mut_attr, 2),
                 (mut_number, 2), (mut_opcode, 3), (mut_dim, 1), (mut_root, 2)]


def weighted(rng, pairs):
    total = sum(w for _, w in pairs)
    x = rng.uniform(0, total)
    for item, w in pairs:
        x -= w
        if x <= 0:
            return item
    return pairs[-1][0]


def mutate_hlo(rng, text, mutators, n):
    kinds = []
    for _ in range(n):
        for _try in range(5):
            new, kind = weighted(rng, mutators)(rng, text)
            if kind:
                text = new
                kinds.append(kind)
                break
    return text, kinds


# --------------------------------------------------------------------------------------------
# Oracle and findings
# --------------------------------------------------------------------------------------------

BAD_PATTERNS = [
    ("llvm-error", re.compile(r"LLVM ERROR")),
    ("assertion", re.compile(r"Assertion .* failed|assertion failed", re.I)),
    ("terminate", re.compile(r"terminate called")),
    ("bad_alloc", re.compile(r"bad_alloc")),
    ("sanitizer", re.compile(r"AddressSanitizer|UndefinedBehaviorSanitizer|runtime error:")),
    ("segv-msg", re.compile(r"Segmentation fault|Stack dump:|PLEASE submit a bug report")),
    ("check-failed", re.compile(r"Check failed|CHECK failed|F\d{4} \d\d:\d\d")),
    ("internal", re.compile(r"internal error|unreachable|UNREACHABLE", re.I)),
    # A pass that turns a verified module into one the verifier rejects is a pass bug, not a bad input.
    ("pass-broke-module", re.compile(r"verification failed after pass")),
]

LOC_RE = re.compile(r":\d+:\d+")


def first_error_line(err):
    lines = [l for l in err.decode("utf-8", "replace").splitlines() if l.strip()]
    for l in lines:
        if re.search(r"error|fatal|abort|LLVM|Assertion|terminate|failed|mismatch", l, re.I):
            return l
    return lines[0] if lines else ""


def normalize(line):
    line = re.sub(r"(/[^\s:'\"]+)+", "PATH", line)
    line = re.sub(r"[\w.-]+\.(hlo|txt|npz|npy|hlox|yaml|json)\b", "FILE", line)
    line = re.sub(r"'[^']*'", "'_'", line)
    line = re.sub(r"\"[^\"]*\"", "\"_\"", line)
    # Shapes and tuple shapes: one message about different shapes is one signature.
    line = re.sub(r"\b(pred|[suf]\d+|bf16|f8e\w+?|f4e2m1fn|c64|c128)\[[^\]]*\](\{[^}]*\})?", "T[]", line)
    line = re.sub(r"\((T\[\],? ?|\(|\),? ?)+\)", "(T[])", line)
    line = re.sub(r"%[\w.-]+", "%_", line)
    line = re.sub(r"\b(computation|module|instruction|thunk \w+) [\w.-]+", r"\1 _", line)
    line = re.sub(r"0x[0-9a-fA-F]+", "N", line)
    line = re.sub(r"\d+(\.\d+)?(e[+-]?\d+)?", "N", line)
    return line.strip()[:160]


def judge(res, cls, hlo_input, cli_bad=False, outputs=(), workdir=None):
    """Returns a list of (kind, detail) findings for one execution."""
    found = []
    if res.timed_out:
        return [("timeout", "no exit after %.0f s" % res.secs)]
    rc = res.rc
    err_text = res.err.decode("utf-8", "replace")
    if rc < 0:
        found.append(("signal-%s" % signal.Signals(-rc).name if -rc in signal.Signals._value2member_map_ else
                      "signal-%d" % -rc, first_error_line(res.err)))
    elif rc not in (0, 1, 2) or (rc == 2 and not cli_bad):
        found.append(("exit-%d" % rc, first_error_line(res.err)))
    for kind, pat in BAD_PATTERNS:
        if pat.search(err_text):
            line = next((l for l in err_text.splitlines() if pat.search(l)), "")
            found.append((kind, line))
    out_text = res.out.decode("utf-8", "replace")
    if rc == 1 and hlo_input and not found and not re.search(r"MISMATCH|outputs do not match", out_text):
        if not LOC_RE.search(err_text) and not any(re.search(p, err_text) for p in UNLOCATED_OK):
            found.append(("unlocated", first_error_line(res.err)))
    if rc not in (0,) and workdir:
        for o in outputs:
            if o and os.path.exists(os.path.join(workdir, o)):
                found.append(("partial-output", "%s exists after exit %d" % (o, rc)))
    if workdir:
        for root, _, files in os.walk(workdir):
            for f in files:
                if re.match(r"\..*\.tmp-", f):
                    found.append(("leftover-temp", f))
    return found


class Findings:
    def __init__(self, out_dir):
        self.dir = os.path.join(out_dir, "findings")
        os.makedirs(self.dir, exist_ok=True)
        self.sigs = {}  # signature -> dict
        self.lock = threading.Lock()

    def known(self, cls, cmd, kind, detail):
        with self.lock:
            return "%s | %s | %s | %s" % (cls, cmd, kind, normalize(detail)) in self.sigs

    def add(self, cls, cmd, kind, detail, workdir, argv, files, extra=None):
        sig = "%s | %s | %s | %s" % (cls, cmd, kind, normalize(detail))
        with self.lock:
            if sig in self.sigs:
                self.sigs[sig]["count"] += 1
                return False
            n = len(self.sigs) + 1
            d = os.path.join(self.dir, "%03d-%s-%s-%s" % (n, cls, cmd, re.sub(r"[^\w-]", "_", kind)))
            os.makedirs(d, exist_ok=True)
            self.sigs[sig] = {"count": 1, "dir": d, "kind": kind, "cls": cls, "cmd": cmd, "detail": detail}
        # Keep the inputs under their names and a script that reruns the command.
        for f in files:
            src = os.path.join(workdir, f) if not os.path.isabs(f) else f
            if os.path.isfile(src):
                shutil.copy(src, os.path.join(d, os.path.basename(f)))
        rel = []
        for a in argv[1:]:
            if isinstance(a, str) and a.startswith(workdir + os.sep):
                a = os.path.relpath(a, workdir)
            rel.append(a)
        with open(os.path.join(d, "repro.sh"), "w") as fh:
            fh.write("#!/bin/bash\n# %s\n# kind: %s\n# %s\ncd \"$(dirname \"$0\")\"\n" % (sig, kind, detail))
            fh.write("H=${H:-hloc}\n")
            fh.write("$H " + " ".join(shlex.quote(a) for a in rel) + "\n")
        with open(os.path.join(d, "meta.json"), "w") as fh:
            json.dump(dict(signature=sig, kind=kind, cls=cls, cmd=cmd, detail=detail,
                           argv=[str(a) for a in argv], extra=extra or {}), fh, indent=1)
        return True


# --------------------------------------------------------------------------------------------
# The campaign
# --------------------------------------------------------------------------------------------


class Campaign:
    CLASS_WEIGHTS = [("hlo", 50), ("diff", 16), ("npz", 9), ("yaml", 9), ("cli", 5), ("hlox", 7), ("deep", 4)]

    def __init__(self, args):
        self.args = args
        self.runner = Runner(args.hloc, args.timeout, args.mem_gib)
        self.seeds = collect_seeds(args.max_seed_bytes)
        self.seed_text = {}
        self.findings = Findings(args.out)
        self.work = os.path.join(args.out, "work")
        os.makedirs(self.work, exist_ok=True)
        self.stats = {}  # class -> {"exec": n, "cmds": {cmd: n}}
        self.lock = threading.Lock()
        self.deadline = time.monotonic() + args.time
        self.hlox_pool = []  # (path, backend) valid executables
        self.recheck = {}    # timeout signature -> "timeout" (a hang at twice the limit) or "slow"
        self.npz_pool = []   # (module, npz) valid pairs
        self.log = open(os.path.join(args.out, "log.tsv"), "a", buffering=1)
        if args.classes:
            want = set(args.classes.split(","))
            self.CLASS_WEIGHTS = [(c, w) for c, w in self.CLASS_WEIGHTS if c in want]

    def text(self, p):
        if p not in self.seed_text:
            with open(p, "rb") as f:
                self.seed_text[p] = f.read().decode("utf-8", "surrogateescape")
        return self.seed_text[p]

    def count(self, cls, cmd, n=1):
        with self.lock:
            s = self.stats.setdefault(cls, {"exec": 0, "cmds": {}, "inputs": 0})
            s["exec"] += n
            s["cmds"][cmd] = s["cmds"].get(cmd, 0) + n

    def count_input(self, cls):
        with self.lock:
            self.stats.setdefault(cls, {"exec": 0, "cmds": {}, "inputs": 0})["inputs"] += 1

    def execute(self, cls, cmd, args, wd, files, hlo_input=False, cli_bad=False, outputs=(), stdin=None,
                timeout=None, extra=None):
        res = self.runner.run(args, wd, stdin_path=stdin, timeout=timeout)
        self.count(cls, cmd)
        found = judge(res, cls, hlo_input, cli_bad, outputs, wd)
        # A binary being relinked under us: retry once.
        if res.rc == 126 or (res.rc == 127 and not os.path.exists(self.args.hloc)):
            time.sleep(5)
            res = self.runner.run(args, wd, stdin_path=stdin, timeout=timeout)
            found = judge(res, cls, hlo_input, cli_bad, outputs, wd)
        if any(k == "timeout" for k, _ in found) and extra and extra.get("seed"):
            # Timeouts of different seeds are different signatures (one hang must not hide another).
            found = [(k, d + " (seed %s)" % os.path.basename(extra["seed"]) if k == "timeout" else d)
                     for k, d in found]
        if found and any(k == "timeout" for k, _ in found) and not self.args.no_timeout_recheck:
            # Confirm a timeout with twice the time before calling it a hang (once per signature:
            # reruns cost campaign time).
            key = "%s | %s | %s" % (cls, cmd, normalize(next(d for k, d in found if k == "timeout")))
            with self.lock:
                verdict = self.recheck.get(key)
            if verdict is None:
                res2 = self.runner.run(args, wd, stdin_path=stdin, timeout=2 * (timeout or self.args.timeout))
                verdict = "timeout" if res2.timed_out else "slow"
                with self.lock:
                    self.recheck[key] = verdict
            if verdict == "slow":
                found = [(k if k != "timeout" else "slow",
                          d if k != "timeout" else d.replace("no exit after", "over the limit of"))
                         for k, d in found]
        for kind, detail in found:
            new = self.findings.add(cls, cmd, kind, detail, wd, res.argv, files,
                                    dict(extra or {}, rc=res.rc, secs=round(res.secs, 2),
                                         stderr=res.err.decode("utf-8", "replace")[-3000:]))
            if new and not self.args.quiet:
                print("  new finding [%s %s %s] %s" % (cls, cmd, kind, detail[:150]), flush=True)
        self.log.write("%s\t%s\t%s\t%.2f\t%s\n" % (cls, cmd, res.rc, res.secs,
                                                  ",".join(k for k, _ in found)))
        return res, found

    # ---- helpers -------------------------------------------------------------------------------

    def write(self, wd, name, data):
        p = os.path.join(wd, name)
        with open(p, "wb") as f:
            f.write(data if isinstance(data, bytes) else data.encode("utf-8", "surrogateescape"))
        return p

    def hlo_command(self, rng, path, wd, allow_run):
        """A random command line on HLO file `path`: (cmd, args, outputs)."""
        choices = ["verify", "print", "opt", "opt", "compile", "compile"]
        if allow_run:
            choices += ["run", "run", "eval", "eval"]
        cmd = rng.choice(choices)
        seed = str(rng.randrange(1000))
        if cmd == "verify":
            return cmd, ["verify", path], ()
        if cmd == "print":
            a = ["print", path] + rng.choice([[], ["--long"], ["--short"]])
            if rng.random() < 0.3:
                return cmd, a + ["-o", "printed.txt"], ("printed.txt",)
            return cmd, a, ()
        if cmd == "opt":
            a = ["opt", path] + rng.choice([["--profile", "cpu"], ["--profile", "h200"], ["--pipeline", "cpu"],
                                            ["--pipeline", "gpu"], [], ["--profile", "a100"]])
            outs = ()
            if rng.random() < 0.5:
                a += ["-o", "opt.txt"]
                outs = ("opt.txt",)
            if rng.random() < 0.15:
                a += ["--kernel-report", "kr.json"]
                outs = outs + ("kr.json",)
            return cmd, a, outs
        if cmd == "compile":
            prof = rng.choice(["cpu", "cpu", "h200", "h100", "a100"])
            a = ["compile", path, "--profile", prof, "-o", "out.hlox"]
            if rng.random() < 0.15 and prof == "cpu":
                a = ["compile", path, "--no-passes", "-o", "out.hlox"]  # --no-passes takes no --profile
            if rng.random() < 0.1:
                a += ["--dump-to", "dumps"]
            return "compile-" + ("cpu" if prof == "cpu" else "gpu"), a, ("out.hlox",)
        if cmd == "run":
            a = ["run", path, "--backend", "cpu", "--seed", seed]
            if rng.random() < 0.3:
                a += ["--no-passes"]
            if rng.random() < 0.3:
                a += ["--outputs", "run_out.npz"]
                return cmd, a, ("run_out.npz",)
            return cmd, a, ()
        a = ["eval", path, "--seed", seed]
        if rng.random() < 0.4:
            a += ["--outputs", "eval_out.npz"]
            return cmd, a, ("eval_out.npz",)
        return cmd, a, ()

    # ---- classes -------------------------------------------------------------------------------

    def do_hlo(self, rng, wd):
        seed = rng.choice(self.seeds)
        text, kinds = mutate_hlo(rng, self.text(seed), HLO_MUTATORS, rng.choice([1, 1, 1, 2, 2, 3]))
        if rng.random() < 0.05:
            p = "-"  # through standard input
            self.write(wd, "m.hlo", text)
        else:
            p = self.write(wd, "m.hlo", text)
        self.count_input("hlo")
        allow_run = runnable(seed) and max_elements(text) <= self.args.max_run_elements
        cmd, a, outs = self.hlo_command(rng, p, wd, allow_run)
        self.execute("hlo", cmd, a, wd, ["m.hlo"], hlo_input=True, outputs=outs,
                     stdin=os.path.join(wd, "m.hlo") if p == "-" else None,
                     extra=dict(seed=os.path.relpath(seed, REPO), mutations=kinds))

    def do_diff(self, rng, wd):
        pool = [s for s in self.seeds if runnable(s) and "/invalid/" not in s]
        corpus = [s for s in pool if "/tests/corpus/" in s and "before_optimizations" in s]
        # Half from the corpus's modules as JAX wrote them (a type swapped everywhere in those found
        # the float-normalization bug P3), half from everything else.
        seed = rng.choice(corpus if corpus and rng.random() < 0.5 else pool)
        text = self.text(seed)
        kinds = []
        if rng.random() > 0.15:
            text, kinds = mutate_hlo(rng, text, SOFT_MUTATORS, rng.choice([1, 1, 2]))
        if max_elements(text) > self.args.max_run_elements or " rng(" in text:
            return
        p = self.write(wd, "m.hlo", text)
        self.count_input("diff")
        res, found = self.execute("diff", "verify", ["verify", p], wd, ["m.hlo"], hlo_input=True)
        if res.rc != 0 or found:
            return
        s = str(rng.randrange(100))
        res, found = self.execute("diff", "eval", ["eval", p, "--seed", s, "--outputs", "ref.npz"], wd,
                                  ["m.hlo"], hlo_input=True, outputs=("ref.npz",))
        if res.rc != 0 or found:
            return
        variants = [["--backend", "cpu"], ["--backend", "cpu", "--no-passes"]]
        if rng.random() < 0.3:
            # Through a serialized executable: compile -o, then run the .hlox.
            res, found = self.execute("diff", "compile", ["compile", p, "-o", "m.hlox"], wd, ["m.hlo"],
                                      hlo_input=True, outputs=("m.hlox",))
            if res.rc == 0 and not found:
                variants.append(["--backend", "cpu", "HLOX"])
        for v in variants:
            a = ["run", p, "--seed", s, "--expect", "ref.npz"] + v
            cmd = "run" + ("-no-passes" if "--no-passes" in v else "")
            if "HLOX" in v:
                a = ["run", "m.hlox", "--seed", s, "--expect", "ref.npz", "--backend", "cpu"]
                cmd = "run-hlox"
            res, found = self.execute("diff", cmd, a, wd, ["m.hlo", "ref.npz"], hlo_input=True,
                                      extra=dict(seed=os.path.relpath(seed, REPO), mutations=kinds))
            if res.rc == 1 and not found:
                out = (res.out + res.err).decode("utf-8", "replace")
                if re.search(r"MISMATCH|outputs do not match", out) and not re.search(r"code generation|error:", out):
                    bad = [l for l in out.splitlines() if "MISMATCH" in l]
                    detail = "%s: %s" % (os.path.basename(seed), bad[0] if bad else out.splitlines()[-1])
                    # Signature: the seed and the mutation kinds, not the numbers.
                    self.findings.add("diff", cmd, "mismatch", "%s %s" % (os.path.basename(seed), " ".join(
                        k.split(":")[0] if not k.startswith("typeall") else k for k in kinds)),
                        wd, res.argv, ["m.hlo", "ref.npz"],
                        dict(seed=os.path.relpath(seed, REPO), mutations=kinds, detail=detail,
                             stdout=out[-3000:]))
                    if not self.args.quiet:
                        print("  differential mismatch [%s] %s" % (cmd, detail[:150]), flush=True)

    def _npz_pair(self, rng, wd):
        """A (module, valid npz) pair: corpus inputs, or inputs made by eval --outputs of a module
        whose entry takes what another module outputs (a one-parameter identity-like module)."""
        pairs = []
        for s in self.seeds:
            n = module_inputs(s)
            if n and runnable(s) and "before_optimizations" in s:
                pairs.append((s, n))
        return rng.choice(pairs) if pairs else None

    def do_npz(self, rng, wd):
        pair = self._npz_pair(rng, wd)
        if not pair:
            return
        mod, npz = pair
        with open(npz, "rb") as f:
            data = f.read()
        if rng.random() < 0.3:
            # An npz hloc wrote itself.
            r = self.runner.run(["eval", mod, "--inputs", npz, "--outputs", "w.npz"], wd)
            if r.rc == 0 and os.path.exists(os.path.join(wd, "w.npz")):
                with open(os.path.join(wd, "w.npz"), "rb") as f:
                    data = f.read()
        bad, kind = corrupt_npz(rng, data)
        self.write(wd, "bad.npz", bad)
        shutil.copy(mod, os.path.join(wd, "m.hlo"))
        self.count_input("npz")
        cmd = rng.choice(["eval-inputs", "run-inputs", "eval-expect", "run-expect"])
        if cmd == "eval-inputs":
            a = ["eval", "m.hlo", "--inputs", "bad.npz"]
        elif cmd == "run-inputs":
            a = ["run", "m.hlo", "--backend", "cpu", "--inputs", "bad.npz"]
        elif cmd == "eval-expect":
            a = ["eval", "m.hlo", "--inputs", npz, "--expect", "bad.npz"]
        else:
            a = ["run", "m.hlo", "--backend", "cpu", "--seed", "0", "--expect", "bad.npz"]
        self.execute("npz", cmd, a, wd, ["m.hlo", "bad.npz"], hlo_input=False,
                     extra=dict(module=os.path.relpath(mod, REPO), npz=os.path.relpath(npz, REPO),
                                corruption=kind))

    def do_yaml(self, rng, wd):
        files = [os.path.join(REPO, "configs", f) for f in sorted(os.listdir(os.path.join(REPO, "configs")))
                 if f.endswith(".yaml")] + \
                [os.path.join(REPO, "pipelines", f) for f in sorted(os.listdir(os.path.join(REPO, "pipelines")))
                 if f.endswith(".yaml")]
        files += self.builtin_pipelines()
        src = rng.choice(files)
        with open(src) as f:
            text = f.read()
        text, kinds = mutate_yaml(rng, text, rng.choice([1, 1, 2, 3]))
        self.write(wd, "m.yaml", text)
        self.count_input("yaml")
        small = [s for s in self.seeds if runnable(s) and "/tests/corpus/" in s and "before_optimizations" in s]
        mod = rng.choice(small)
        shutil.copy(mod, os.path.join(wd, "m.hlo"))
        is_profile = "/configs/" in src
        src_label = os.path.relpath(src, REPO) if src.startswith(REPO) else os.path.basename(src)
        if is_profile:
            gpu = "kind: cpu" not in text
            choices = ["opt", "print-profile", "compile"] + ([] if gpu else ["run"])
            cmd = rng.choice(choices)
            if cmd == "opt":
                a, outs = ["opt", "m.hlo", "--profile", "m.yaml", "-o", "o.txt"], ("o.txt",)
            elif cmd == "print-profile":
                a, outs = ["opt", "--print-profile", "--profile", "m.yaml"], ()
            elif cmd == "compile":
                a, outs = ["compile", "m.hlo", "--profile", "m.yaml", "-o", "o.hlox"], ("o.hlox",)
            else:
                a, outs = ["run", "m.hlo", "--profile", "m.yaml", "--seed", "0"], ()
            cmd = "profile-" + cmd
        else:
            cmd = rng.choice(["opt", "print-pipeline"])
            if cmd == "opt":
                a, outs = ["opt", "m.hlo", "--pipeline", "m.yaml", "-o", "o.txt"], ("o.txt",)
            else:
                a, outs = ["opt", "--print-pipeline", "--pipeline", "m.yaml"], ()
            cmd = "pipeline-" + cmd
        res, found = self.execute("yaml", cmd, a, wd, ["m.yaml", "m.hlo"], outputs=outs,
                                  extra=dict(source=src_label, mutations=kinds))
        # A bad manifest or profile must be located.
        if res.rc == 1 and not found:
            err = res.err.decode("utf-8", "replace")
            if not LOC_RE.search(err) and re.search(r"yaml|profile|pipeline|manifest", err, re.I):
                self.findings.add("yaml", cmd, "unlocated", first_error_line(res.err), wd, res.argv,
                                  ["m.yaml", "m.hlo"], dict(source=src_label, mutations=kinds))

    def builtin_pipelines(self):
        """The pipelines built into the binary, as --print-pipeline writes them (they match the
        binary's passes even while the checkout's pipelines/ is being edited)."""
        if not hasattr(self, "_builtin"):
            self._builtin = []
            d = os.path.join(self.args.out, "pipelines")
            os.makedirs(d, exist_ok=True)
            for name in ("cpu", "gpu"):
                r = self.runner.run(["opt", "--print-pipeline", "--pipeline", name], d)
                if r.rc == 0:
                    p = os.path.join(d, "builtin-%s.yaml" % name)
                    with open(p, "wb") as f:
                        f.write(r.out)
                    self._builtin.append(p)
        return self._builtin

    def do_cli(self, rng, wd):
        self.count_input("cli")
        # Everything the command line names lives in the work folder (or is a device / a missing
        # path): an -o or --dump-to among random arguments must not write anywhere else.
        shutil.copy(os.path.join(REPO, "tests", "corpus", "seed_example.small.before_optimizations.txt"),
                    os.path.join(wd, "m.txt"))
        shutil.copy(os.path.join(REPO, "tests", "corpus", "seed_example.small.inputs.npz"),
                    os.path.join(wd, "in.npz"))
        mod, npz = "m.txt", "in.npz"
        cmds = ["verify", "print", "opt", "compile", "run", "eval", "frob", "", "help", "--help", "--version"]
        cmd = rng.choice(cmds)
        opts = ["--inputs", "--outputs", "--expect", "--tol", "--atol", "--seed", "--bench", "--threads",
                "--backend", "--profile", "--pipeline", "--passes", "--disable-passes", "-o", "--output", "-O",
                "--dump-to", "--dump-pass-re", "--kernel-report", "--explain-fusion", "--input-spec",
                "--target-cpu", "--command-buffers", "--min-graph-size", "--small-gemm-kernels", "--batches",
                "--no-passes", "--long", "--short", "--no-verify", "-v", "--frob", "-x", "--", "-",
                "--config-dir", "--pipeline-dir", "--print-pipeline", "--print-profile", "--list-passes",
                "--graph-lanes", "--autotune-cache", "--per-thunk", "--allow-mixed-precision", "--help"]
        vals = ["", "-1", "0", "abc", "1e999", "nan", "99999999999999999999", "-", "/dev/null", "/dev/zero",
                "/nonexistent/x", "cpu", "gpu", "tpu", "h200", "x" * 5000, "\udcff", "1,2,", ",", "[(", ".*(",
                "3", "0.5", "inf", "=", "--seed", mod, npz, ".", "sm_90", "skylake-avx512", "1x2x3",
                "max=-5", "out.npz", "o.hlox", "dumps"]
        args = [cmd] if cmd else []
        for _ in range(rng.randint(0, 5)):
            r = rng.random()
            o = rng.choice(opts)
            if r < 0.4:
                args += [o, rng.choice(vals)]
            elif r < 0.6:
                args += [o + "=" + rng.choice(vals)]
            elif r < 0.8:
                args += [o]
            else:
                args += [rng.choice(vals + [mod, mod])]
        stdin = None
        if rng.random() < 0.5:
            args.insert(1 if cmd else 0, rng.choice([mod, mod, "/dev/zero", "/dev/urandom", "-", ".", "/dev/null",
                                                     "/proc/self/status", "/nonexistent"]))
        if "-" in args and rng.random() < 0.5:
            stdin = rng.choice(["/dev/zero", "/dev/urandom", os.path.join(wd, mod)])
        outs = tuple(args[i + 1] for i, a in enumerate(args[:-1]) if a in ("-o", "--output", "--outputs")
                     and args[i + 1] in ("out.npz", "o.hlox"))
        self.execute("cli", cmd or "none", args, wd, ["m.txt", "in.npz"], cli_bad=True, outputs=outs,
                     stdin=stdin, timeout=min(self.args.timeout, 20))

    def _make_hlox(self, rng):
        if len(self.hlox_pool) < 8:
            small = [s for s in self.seeds if runnable(s) and "/tests/corpus/" in s and "before_optimizations" in s]
            mod = rng.choice(small)
            prof = "h200" if len(self.hlox_pool) % 3 == 2 else "cpu"  # GPU executables too, always
            d = tempfile.mkdtemp(dir=self.work, prefix="hlox-")
            out = os.path.join(d, os.path.basename(mod).split(".")[0] + "." + prof + ".hlox")
            r = self.runner.run(["compile", mod, "--profile", prof, "-o", out], d, timeout=120)
            if r.rc == 0 and os.path.exists(out):
                self.hlox_pool.append((out, prof))
        return rng.choice(self.hlox_pool) if self.hlox_pool else None

    def do_hlox(self, rng, wd):
        e = self._make_hlox(rng)
        if not e:
            return
        path, prof = e
        with open(path, "rb") as f:
            data = bytearray(f.read())
        r = rng.random()
        if r < 0.45:
            for _ in range(rng.choice([1, 1, 2, 8])):
                i = rng.randrange(len(data))
                data[i] ^= 1 << rng.randrange(8)
            kind = "bitflip"
        elif r < 0.6:
            data = data[:rng.randrange(len(data))]
            kind = "truncate"
        elif r < 0.75:
            # A plausible length field (a little-endian u32/u64) set to an edge value.
            i = rng.randrange(max(1, len(data) - 8))
            v = rng.choice([0, 1, 0xffffffff, 0x7fffffff, 1 << 40, 0xffffffffffffffff, len(data), len(data) + 1])
            n = rng.choice([4, 8])
            data[i:i + n] = struct.pack("<Q", v & 0xffffffffffffffff)[:n]
            kind = "field"
        elif r < 0.85:
            i = rng.randrange(len(data))
            data[i:i + rng.randint(1, 64)] = b"\x00" * rng.randint(1, 64)
            kind = "zeros"
        elif r < 0.95:
            i = rng.randrange(len(data))
            j = rng.randrange(len(data))
            data = data[:i] + data[j:j + rng.randint(1, 200)] + data[i:]
            kind = "splice"
        else:
            data = data[:8] + bytes(rng.randrange(256) for _ in range(rng.randint(0, 300)))
            kind = "header-only"
        self.write(wd, "bad.hlox", bytes(data))
        self.count_input("hlox")
        backend = "gpu" if prof != "cpu" and rng.random() < 0.3 else "cpu"
        a = ["run", "bad.hlox", "--backend", backend, "--seed", "0"]
        if rng.random() < 0.2:
            a += ["--outputs", "o.npz"]
        self.execute("hlox", "run-" + prof, a, wd, ["bad.hlox"],
                     outputs=("o.npz",) if "--outputs" in a else (),
                     extra=dict(source=os.path.basename(path), corruption=kind))

    def do_deep(self, rng, wd):
        text, kind = generate_deep(rng)
        p = self.write(wd, "m.hlo", text)
        self.count_input("deep")
        cmd, a, outs = self.hlo_command(rng, p, wd, allow_run=kind not in ("huge-shape",) or rng.random() < 0.5)
        self.execute("deep", cmd + ":" + kind, a, wd, ["m.hlo"], hlo_input=True, outputs=outs,
                     extra=dict(generator=kind))

    # ---- driver --------------------------------------------------------------------------------

    def worker(self, wid):
        rng = random.Random(self.args.seed * 1000003 + wid)
        i = 0
        while time.monotonic() < self.deadline:
            cls = weighted(rng, self.CLASS_WEIGHTS)
            wd = tempfile.mkdtemp(dir=self.work, prefix="%s-" % cls)
            try:
                getattr(self, "do_" + cls)(rng, wd)
            except Exception as e:  # a bug of the fuzzer, not of hloc
                print("fuzzer error in %s: %r" % (cls, e), file=sys.stderr, flush=True)
            finally:
                shutil.rmtree(wd, ignore_errors=True)
            i += 1
            if not self.args.quiet and i % 50 == 0:
                print("[w%d] %d inputs, %d executions, %d signatures, %.0f s left" % (
                    wid, i, sum(s["exec"] for s in self.stats.values()), len(self.findings.sigs),
                    self.deadline - time.monotonic()), flush=True)

    def run(self):
        start = time.time()
        threads = [threading.Thread(target=self.worker, args=(w,)) for w in range(self.args.jobs)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        self.log.close()
        return self.summary(time.time() - start)

    def summary(self, secs):
        lines = ["", "== hloc mutation campaign: %.0f s, seed %d, %d job(s), hloc %s" % (
            secs, self.args.seed, self.args.jobs, self.args.hloc), "executions per class:"]
        total = 0
        for cls, _ in Campaign.CLASS_WEIGHTS:
            s = self.stats.get(cls)
            if not s:
                continue
            total += s["exec"]
            cmds = ", ".join("%s %d" % kv for kv in sorted(s["cmds"].items()))
            lines.append("  %-5s %6d executions on %5d inputs (%s)" % (cls, s["exec"], s["inputs"], cmds))
        lines.append("findings per signature:")
        for sig, d in sorted(self.findings.sigs.items(), key=lambda kv: kv[1]["dir"]):
            lines.append("  %4d x %s\n         -> %s" % (d["count"], sig, d["dir"]))
        kinds = {}
        for d in self.findings.sigs.values():
            kinds[d["kind"]] = kinds.get(d["kind"], 0) + 1
        crash_kinds = [k for k in kinds if k.startswith("signal") or k.startswith("exit-") or k in
                       ("llvm-error", "assertion", "terminate", "bad_alloc", "sanitizer", "segv-msg",
                        "check-failed")]
        crashes = sum(kinds[k] for k in crash_kinds)
        lines.append("fuzz summary: executions=%d signatures=%d crashes=%d timeouts=%d mismatches=%d "
                     "unlocated=%d partial=%d other=%d" % (
                         total, len(self.findings.sigs), crashes, kinds.get("timeout", 0),
                         kinds.get("mismatch", 0), kinds.get("unlocated", 0),
                         kinds.get("partial-output", 0) + kinds.get("leftover-temp", 0),
                         len(self.findings.sigs) - crashes - kinds.get("timeout", 0) - kinds.get("mismatch", 0)
                         - kinds.get("unlocated", 0) - kinds.get("partial-output", 0)
                         - kinds.get("leftover-temp", 0)))
        text = "\n".join(lines)
        with open(os.path.join(self.args.out, "summary.txt"), "w") as f:
            f.write(text + "\n")
        with open(os.path.join(self.args.out, "stats.json"), "w") as f:
            json.dump(dict(stats=self.stats, findings=self.findings.sigs, seconds=secs), f, indent=1)
        return text, crashes


# --------------------------------------------------------------------------------------------
# npz, yaml and generated modules
# --------------------------------------------------------------------------------------------


def npy_bytes(header_dict_text, payload):
    h = header_dict_text.encode("latin1")
    pad = 64 - (10 + len(h) + 1) % 64
    h = h + b" " * pad + b"\n"
    return b"\x93NUMPY\x01\x00" + struct.pack("<H", len(h)) + h + payload


def corrupt_npz(rng, data):
    r = rng.random()
    b = bytearray(data)
    if r < 0.15:
        return bytes(b[:rng.randrange(len(b))]), "truncate"
    if r < 0.3:
        for _ in range(rng.choice([1, 2, 4, 16])):
            i = rng.randrange(len(b))
            b[i] ^= 1 << rng.randrange(8)
        return bytes(b), "bitflip"
    if r < 0.45:
        # Zip header size fields: local header compressed/uncompressed sizes at +18/+22, central at +20/+24.
        sigs = [m.start() for m in re.finditer(b"PK\x03\x04", b)] + [m.start() for m in re.finditer(b"PK\x01\x02", b)]
        if sigs:
            i = rng.choice(sigs)
            off = i + rng.choice([18, 22]) if b[i + 2] == 3 else i + rng.choice([20, 24])
            v = rng.choice([0, 1, 0xffffffff, 0x7fffffff, 0xfffffffe, len(b) * 1000])
            b[off:off + 4] = struct.pack("<I", v)
            return bytes(b), "zip-size"
    # Rebuild the archive with one member's .npy header or payload changed.
    try:
        import io
        zin = zipfile.ZipFile(io.BytesIO(data))
        members = [(n, zin.read(n)) for n in zin.namelist()]
    except Exception:
        return bytes(b[:len(b) // 2]), "truncate"
    if not members:
        return b"", "empty"
    k = rng.randrange(len(members))
    name, npy = members[k]
    m = re.search(rb"\{.*\}", npy[:4096])
    kind = "npy"
    if m and npy.startswith(b"\x93NUMPY"):
        hdr = m.group(0).decode("latin1")
        hl = struct.unpack("<H", npy[8:10])[0]
        payload = npy[10 + hl:]
        r2 = rng.random()
        if r2 < 0.25:
            hdr = re.sub(r"'descr': '[^']*'", "'descr': '%s'" % rng.choice(
                ["<f8", "<f2", ">f4", "|b1", "<c16", "|O", "<U3", "|V4", "<i8", "|u1", "xx", "<f4", "<M8[s]", "",
                 "<c8", "|S0"]), hdr)
            kind = "dtype"
        elif r2 < 0.5:
            hdr = re.sub(r"'shape': \([^)]*\)", "'shape': (%s)" % rng.choice(
                ["4294967296, 4294967296", "-1,", "", "0,", "1099511627776,", "3, 5, 7, 11, 13, 17, 19",
                 "9223372036854775807, 2", "2,2,2,2,2,2,2,2,2,2,2,2,2,2,2,2,2,2,2,2,2,2,2,2,2,2,2,2,2,2,2,2,2,2",
                 "'a',", "1.5,"]), hdr)
            kind = "shape"
        elif r2 < 0.6:
            hdr = hdr.replace("False", "True")
            kind = "fortran"
        elif r2 < 0.7:
            hdr = rng.choice(["{", "{}", "{'descr': '<f4'}", hdr + hdr, "{'descr': '<f4', 'fortran_order': False, "
                              "'shape': (2,), 'x': 1}", "[" * 5000])
            kind = "header"
        elif r2 < 0.8:
            payload = payload[:rng.randrange(len(payload) + 1)]
            kind = "short-payload"
        elif r2 < 0.9:
            payload = payload + b"\x00" * rng.choice([1, 4, 1000])
            kind = "long-payload"
        else:
            npy = npy[:6] + rng.choice([b"\x03\x00", b"\x02\x00", b"\x00\x00", b"\x01\x00"]) + \
                (struct.pack("<I", 0xffffffff) if rng.random() < 0.5 else npy[8:10]) + npy[10:]
            kind = "version"
            members[k] = (name, npy)
            hdr = None
        if hdr is not None:
            members[k] = (name, npy_bytes(hdr, payload))
    r3 = rng.random()
    if r3 < 0.1:
        members.append(members[k])
        kind += "+dup-member"
    elif r3 < 0.2:
        members[k] = (rng.choice(["", "../x.npy", "arg0", "out0.npy.npy", "a" * 300 + ".npy", "arg99.npy"]), members[k][1])
        kind += "+rename"
    elif r3 < 0.25:
        del members[k]
        kind += "+drop-member"
    import io
    bio = io.BytesIO()
    comp = zipfile.ZIP_DEFLATED if rng.random() < 0.5 else zipfile.ZIP_STORED
    with zipfile.ZipFile(bio, "w", comp) as z:
        for n, d in members:
            z.writestr(n, d)
    return bio.getvalue(), kind


YAML_SNIPPETS = ["&a", "*a", "!!python/object:os.system", "---", "...", "{", "}", "[", "]", "\t", "- ",
                 ": ", "'", "\"", "#", "? ", "|", ">", "%YAML 1.2", "<<: *a", "~", "null", "\x00", "\xff",
                 "[" * 200, "{a: " * 100, "x" * 10000]
YAML_VALUES = ["0", "-1", "1e308", "-1e308", "nan", ".nan", ".inf", "abc", "true", "null", "~", "''",
               "[]", "{}", "99999999999999999999", "0x10", "1.5", "3 XB/s", "-5 GB/s", "0 GB/s", "1e400 TFLOP/s",
               "10.0", "12.0", "9.9", "1.0", "sm_90", "\"9.0\"", "[1, 2]", "{x: 1}", "*a", "GiB", "1 GiB/s"]


def mutate_yaml(rng, text, n):
    kinds = []
    for _ in range(n):
        lines = text.split("\n")
        r = rng.random()
        i = rng.randrange(len(lines))
        if r < 0.35:
            # Replace a scalar value.
            m = re.match(r"^(\s*-?\s*[\w.-]+:\s*)(.+?)(\s*#.*)?$", lines[i])
            if m:
                lines[i] = m.group(1) + rng.choice(YAML_VALUES)
                kinds.append("value")
            else:
                continue
        elif r < 0.5:
            del lines[i]
            kinds.append("dropline")
        elif r < 0.6:
            lines.insert(i, lines[i])
            kinds.append("dupline")
        elif r < 0.7:
            lines[i] = rng.choice(["  ", "    ", "", "\t"]) + lines[i].lstrip()
            kinds.append("indent")
        elif r < 0.8:
            pos = rng.randrange(len(lines[i]) + 1)
            lines[i] = lines[i][:pos] + rng.choice(YAML_SNIPPETS) + lines[i][pos:]
            kinds.append("snippet")
        elif r < 0.9:
            m = re.match(r"^(\s*-?\s*)([\w.-]+)(:.*)$", lines[i])
            if m:
                lines[i] = m.group(1) + rng.choice(["pass", "group", "passes", "hardware", "tuning", "patches",
                                                     "name", "kind", "pipeline", "frob", "compute_capability",
                                                     "fixed_point", "rules", "disable", "enabled", "options"]) + m.group(3)
                kinds.append("key")
            else:
                continue
        else:
            text = text[:rng.randrange(len(text) + 1)]
            kinds.append("truncate")
            continue
        text = "\n".join(lines)
    return text, kinds


def generate_deep(rng):
    kind = rng.choice(["nested-tuple", "call-chain", "long-chain", "wide-concat", "huge-shape", "while-nest",
                       "nested-constant", "long-name", "many-operands-tuple", "deep-parens"])
    if kind == "nested-tuple":
        d = rng.choice([50, 500, 5000, 50000])
        shape = "(" * d + "f32[]" + ")" * d
        return ("HloModule m\nENTRY e {\n  p = %s parameter(0)\n  ROOT c = f32[] constant(1)\n}\n" % shape), kind
    if kind == "call-chain":
        d = rng.choice([100, 1000, 10000])
        parts = ["HloModule m\n"]
        parts.append("c0 {\n  p = f32[4] parameter(0)\n  ROOT n = f32[4] negate(p)\n}\n")
        for i in range(1, d):
            parts.append("c%d {\n  p = f32[4] parameter(0)\n  ROOT c = f32[4] call(p), to_apply=c%d\n}\n" % (i, i - 1))
        parts.append("ENTRY e {\n  p = f32[4] parameter(0)\n  ROOT c = f32[4] call(p), to_apply=c%d\n}\n" % (d - 1))
        return "".join(parts), kind
    if kind == "long-chain":
        n = rng.choice([300, 1000, 3000, 10000])
        parts = ["HloModule m\nENTRY e {\n  x0 = f32[8] parameter(0)\n"]
        for i in range(1, n):
            parts.append("  x%d = f32[8] %s(x%d, x0)\n" % (i, rng.choice(["add", "multiply", "maximum"]), i - 1))
        parts.append("  ROOT r = f32[8] negate(x%d)\n}\n" % (n - 1))
        return "".join(parts), kind
    if kind == "wide-concat":
        n = rng.choice([100, 1000, 5000, 12000])
        ops = ", ".join("p" for _ in range(n))
        return ("HloModule m\nENTRY e {\n  p = f32[1] parameter(0)\n  ROOT c = f32[%d] concatenate(%s), "
                "dimensions={0}\n}\n" % (n, ops)), kind
    if kind == "huge-shape":
        dims = rng.choice(["1099511627776", "4294967296,4294967296", "9223372036854775807", "2147483648",
                           "65536,65536,65536", "100000000", "1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1"])
        op = rng.choice(["parameter(0)", "broadcast(c), dimensions={}", "iota(), iota_dimension=0"])
        body = "  c = f32[] constant(1)\n  ROOT r = f32[%s] %s\n" % (dims, op) if "parameter" not in op else \
            "  ROOT r = f32[%s] %s\n" % (dims, op)
        return "HloModule m\nENTRY e {\n%s}\n" % body, kind
    if kind == "while-nest":
        d = rng.choice([10, 100, 500])
        parts = ["HloModule m\n"]
        for i in range(d):
            inner = ("  ROOT r = (s32[]) tuple(n)\n" if i == 0 else
                     "  w = (s32[]) while(t), condition=cond, body=body%d\n  ROOT r = (s32[]) tuple(n)\n" % (i - 1))
            parts.append("body%d {\n  p = (s32[]) parameter(0)\n  v = s32[] get-tuple-element(p), index=0\n"
                         "  one = s32[] constant(1)\n  n = s32[] add(v, one)\n  t = (s32[]) tuple(v)\n%s}\n" % (i, inner))
        parts.append("cond {\n  p = (s32[]) parameter(0)\n  v = s32[] get-tuple-element(p), index=0\n"
                     "  k = s32[] constant(2)\n  ROOT c = pred[] compare(v, k), direction=LT\n}\n")
        parts.append("ENTRY e {\n  z = s32[] constant(0)\n  t = (s32[]) tuple(z)\n"
                     "  ROOT w = (s32[]) while(t), condition=cond, body=body%d\n}\n" % (d - 1))
        return "".join(parts), kind
    if kind == "nested-constant":
        d = rng.choice([100, 10000, 100000])
        return ("HloModule m\nENTRY e {\n  ROOT c = f32[1] constant(%s1%s)\n}\n" % ("{" * d, "}" * d)), kind
    if kind == "long-name":
        name = "n" * rng.choice([1000, 100000, 1000000])
        return ("HloModule %s\nENTRY e {\n  %s = f32[2] parameter(0)\n  ROOT r = f32[2] negate(%s)\n}\n" %
                (name, name, name)), kind
    if kind == "many-operands-tuple":
        n = rng.choice([1000, 10000, 60000])
        shapes = ", ".join("f32[]" for _ in range(n))
        ops = ", ".join("p" for _ in range(n))
        return ("HloModule m\nENTRY e {\n  p = f32[] parameter(0)\n  ROOT t = (%s) tuple(%s)\n}\n" % (shapes, ops)), kind
    d = rng.choice([1000, 100000])
    return ("HloModule m\nENTRY e {\n  p = f32[2] parameter(0)\n  ROOT r = f32[2] negate(%sp%s)\n}\n" %
            ("(" * d, ")" * d)), kind


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--time", type=float, default=60, help="campaign length in seconds (default 60)")
    ap.add_argument("--seed", type=int, default=0, help="random seed (default 0)")
    ap.add_argument("--jobs", type=int, default=1, help="parallel workers (default 1)")
    ap.add_argument("--hloc", default=os.path.join(REPO, "build", "hloc"), help="the hloc binary")
    ap.add_argument("--out", default=None, help="results folder (default /tmp/hloc-fuzz/mutate-SEED-TIME)")
    ap.add_argument("--timeout", type=float, default=20, help="seconds per execution (default 20)")
    ap.add_argument("--mem-gib", type=float, default=4, help="address-space limit per execution in GiB (default 4)")
    ap.add_argument("--max-seed-bytes", type=int, default=32768, help="largest corpus file used as a seed")
    ap.add_argument("--max-run-elements", type=int, default=1 << 20,
                    help="run/eval only modules whose largest shape has at most this many elements")
    ap.add_argument("--classes", default="", help="comma-separated subset of hlo,diff,npz,yaml,cli,hlox,deep")
    ap.add_argument("--no-timeout-recheck", action="store_true", help="do not rerun timeouts with twice the limit")
    ap.add_argument("--quiet", action="store_true", help="only the summary")
    ap.add_argument("--no-copy", action="store_true",
                    help="run --hloc in place (default: a private copy under OUT/bin, built-in pipelines and profiles)")
    args = ap.parse_args()
    args.hloc = os.path.abspath(args.hloc)
    if not os.access(args.hloc, os.X_OK):
        sys.exit("mutate_campaign: no hloc binary at %s" % args.hloc)
    if args.out is None:
        args.out = "/tmp/hloc-fuzz/mutate-%d-%s" % (args.seed, time.strftime("%Y%m%d-%H%M%S"))
    os.makedirs(args.out, exist_ok=True)
    if not args.no_copy:
        # A private copy of the binary: immune to relinks of build/hloc during the campaign, and
        # away from the checkout's configs/ and pipelines/ (which may be edited while it runs), so
        # profile and pipeline names resolve to the copies built into the binary.
        os.makedirs(os.path.join(args.out, "bin"), exist_ok=True)
        copy = os.path.join(args.out, "bin", "hloc")
        for attempt in range(10):
            try:
                shutil.copy2(args.hloc, copy + ".part")
                os.replace(copy + ".part", copy)
                break
            except OSError:
                time.sleep(3)
        args.hloc = copy
    # The campaign means nothing if the unmodified seed does not compile.
    base = os.path.join(REPO, "tests", "corpus", "seed_example.small.before_optimizations.txt")
    for prof in ("cpu", "h200"):
        with tempfile.TemporaryDirectory() as d:
            r = Runner(args.hloc, 120, args.mem_gib).run(["compile", base, "--profile", prof, "-o", "x.hlox"], d)
            if r.rc != 0:
                sys.exit("mutate_campaign: the unmodified seed does not compile (--profile %s): %s" % (
                    prof, r.err.decode("utf-8", "replace").strip()[:500]))
    c = Campaign(args)
    # SIGTERM / SIGINT end the campaign early, with the summary.
    def stop(signum, frame):
        c.deadline = 0
    signal.signal(signal.SIGTERM, stop)
    signal.signal(signal.SIGINT, stop)
    print("hloc mutation campaign: %d seeds, %.0f s, seed %d, results in %s" % (
        len(c.seeds), args.time, args.seed, args.out), flush=True)
    text, crashes = c.run()
    print(text, flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
