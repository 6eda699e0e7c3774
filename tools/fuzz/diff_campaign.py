#!/usr/bin/env python3
"""Differential fuzzing of hloc over random HLO programs (issue 17, part 2; docs/fuzz.md).

Each program comes from tools/fuzz/hlo_gen.py (seeded). It is verified, evaluated on the
reference evaluator (`hloc eval --seed S M --outputs ref.npz`) and then run by every checked
command, each compared with ref.npz by `--expect` (the corpus thresholds):

    cpu            hloc run --backend cpu --seed S M --expect ref.npz          (CPU pipeline + codegen)
    cpu-no-passes  hloc run --backend cpu --no-passes --seed S M --expect ...  (codegen alone)
    opt-cpu        hloc opt --profile cpu M -o O; hloc eval --seed S O --expect ...
    opt-h200       hloc opt --profile h200 M -o O; hloc eval --seed S O --expect ... (GPU pipeline, deviceless)
    gpu            hloc run --backend gpu --seed S M --expect ...               (--gpu, where a GPU exists)

A result is classified as crash (killed by a signal, or an assertion / LLVM ERROR / sanitizer
report), error (exit status other than 0 on a module the evaluator ran), mismatch (`--expect`
says outputs differ) or timeout. Every crash, error and mismatch is minimized (instructions of the
entry replaced by parameters or constants, bypassed, outputs dropped, dead code removed, while
the same command gives the same class) and kept under OUT/findings/.
"""
import argparse
import hashlib
import importlib.util
import json
import os
import re
import resource
import shutil
import signal
import subprocess
import sys
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))

_spec = importlib.util.spec_from_file_location("hlo_gen", os.path.join(HERE, "hlo_gen.py"))
hlo_gen = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(hlo_gen)

CRASH_RE = re.compile(r"Assertion .* failed|LLVM ERROR|terminate called|AddressSanitizer|UndefinedBehaviorSanitizer|"
                      r"runtime error:|Segmentation fault|Aborted|std::bad_alloc|PLEASE submit a bug report|"
                      r"Stack dump:|internal error|UNREACHABLE", re.I)
NO_PASSES_RE = re.compile(r"compiling without passes")
MISMATCH_RE = re.compile(r" MISMATCH|outputs do not match")

COMMANDS = ["cpu", "cpu-no-passes", "opt-cpu", "opt-h200"]


class Result:
    def __init__(self, cls, detail="", out="", err="", secs=0.0):
        self.cls, self.detail, self.out, self.err, self.secs = cls, detail, out, err, secs


class Runner:
    def __init__(self, hloc, timeout, mem_gib):
        self.hloc, self.timeout = hloc, timeout
        self.mem_bytes = int(mem_gib * (1 << 30))
        self.lock = threading.Lock()
        self.counts = {}

    def _limits(self):
        resource.setrlimit(resource.RLIMIT_AS, (self.mem_bytes, self.mem_bytes))
        resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
        resource.setrlimit(resource.RLIMIT_FSIZE, (1 << 30, 1 << 30))
        os.setsid()

    def count(self, label):
        with self.lock:
            self.counts[label] = self.counts.get(label, 0) + 1

    def run(self, label, args, cwd):
        """Runs hloc ARGS; returns (rc or 'timeout', stdout, stderr, seconds)."""
        self.count(label)
        env = dict(os.environ, HLOC_PROGRESS="0")
        t0 = time.time()
        p = subprocess.Popen([self.hloc] + args, cwd=cwd, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                             preexec_fn=self._limits, env=env)
        try:
            out, err = p.communicate(timeout=self.timeout)
            rc = p.returncode
        except subprocess.TimeoutExpired:
            try:
                os.killpg(p.pid, signal.SIGKILL)
            except OSError:
                pass
            out, err = p.communicate()
            rc = "timeout"
        return rc, out.decode("utf-8", "replace"), err.decode("utf-8", "replace"), time.time() - t0


def classify(rc, out, err):
    if rc == "timeout":
        return "timeout", "timeout"
    text = out + "\n" + err
    m = CRASH_RE.search(text)
    if rc < 0 or rc > 2 or m:
        what = ("signal %d" % -rc) if isinstance(rc, int) and rc < 0 else (m.group(0) if m else "exit %d" % rc)
        return "crash", what
    if rc == 0:
        return "ok", ""
    if MISMATCH_RE.search(out):
        bad = [l.split()[0] for l in out.splitlines() if " MISMATCH" in l]
        return "mismatch", ",".join(bad[:4])
    first = next((l for l in err.splitlines() if l.strip()), "") or next((l for l in out.splitlines() if l.strip()), "")
    return "error", first.strip()


def normalize(msg):
    msg = re.sub(r"/[^\s:]*/", "", msg)
    msg = re.sub(r"\b[\w-]+\.\d+\b", "X", msg)
    msg = re.sub(r"\d+", "N", msg)
    return msg[:200]


def check_command(runner, cmd, wd, module, seed):
    """Runs one checked command on `module` (in wd, with wd/ref.npz); returns a Result."""
    s = str(seed)
    if cmd in ("cpu", "cpu-no-passes", "gpu"):
        args = ["run", "--backend", "gpu" if cmd == "gpu" else "cpu", "--seed", s, module, "--expect", "ref.npz"]
        if cmd == "cpu-no-passes":
            args.insert(3, "--no-passes")
        if cmd != "gpu":
            args += ["--threads", "1"]
        rc, out, err, secs = runner.run(cmd, args, wd)
        c, d = classify(rc, out, err)
        if c == "error" and cmd == "cpu-no-passes" and NO_PASSES_RE.search(err):
            # A module whose layouts only layout assignment could reconcile (a get-tuple-element
            # with another layout than its tuple element) is refused without passes, by design
            # (the located "layout check (compiling without passes)" error; docs/fuzz.md).
            return Result("skipped", d, out, err, secs)
        return Result(c, d, out, err, secs)
    profile = cmd.split("-", 1)[1]
    opt_out = "opt_%s_%s" % (profile, os.path.basename(module))
    rc, out, err, secs = runner.run(cmd, ["opt", "--profile", profile, module, "-o", opt_out], wd)
    c, d = classify(rc, out, err)
    if c != "ok":
        return Result(c, "opt: " + d, out, err, secs)
    rc, out2, err2, secs2 = runner.run(cmd + "-eval", ["eval", "--seed", s, opt_out, "--expect", "ref.npz"], wd)
    c, d = classify(rc, out2, err2)
    if c == "error" and "unsupported custom-call target" in err2:
        return Result("skipped", d, out2, err2, secs + secs2)
    return Result(c, ("eval: " + d) if c not in ("ok", "mismatch") else d, out2, err2, secs + secs2)


def reference(runner, wd, module, seed, label="eval"):
    rc, out, err, _ = runner.run(label, ["eval", "--seed", str(seed), module, "--outputs", "ref.npz"], wd)
    return classify(rc, out, err), out, err


# --- minimization ----------------------------------------------------------------------------

INSTR_RE = re.compile(r"^(\s*)(ROOT\s+)?([\w.\-]+) = (.*)$")


def split_shape(rest):
    """'SHAPE opcode(...)...' -> (shape, remainder)."""
    if rest.startswith("("):
        depth = 0
        for i, ch in enumerate(rest):
            if ch == "(":
                depth += 1
            elif ch == ")":
                depth -= 1
                if depth == 0:
                    return rest[:i + 1], rest[i + 2:]
    i = rest.index(" ")
    return rest[:i], rest[i + 1:]


class Instr:
    def __init__(self, line):
        m = INSTR_RE.match(line)
        self.indent, self.root, self.name = m.group(1), bool(m.group(2)), m.group(3)
        self.shape, rest = split_shape(m.group(4))
        self.opcode = rest[:rest.index("(")]
        depth, j = 0, rest.index("(")
        for k in range(j, len(rest)):
            if rest[k] == "(":
                depth += 1
            elif rest[k] == ")":
                depth -= 1
                if depth == 0:
                    break
        self.inner = rest[j + 1:k]
        self.attrs = rest[k + 1:]
        if self.opcode in ("constant", "parameter", "iota"):
            self.operands = []
        else:
            self.operands = [o.strip() for o in self.inner.split(",") if o.strip()]

    def text(self):
        inner = self.inner if self.opcode in ("constant", "parameter", "iota") else ", ".join(self.operands)
        return "%s%s%s = %s %s(%s)%s" % (self.indent, "ROOT " if self.root else "", self.name, self.shape,
                                         self.opcode, inner, self.attrs)


def parse_module(text):
    """-> (header, [(name, header_line, [lines...])], entry index)."""
    lines = text.splitlines()
    header = []
    comps = []
    cur = None
    for l in lines:
        if cur is None:
            if l.endswith("{"):
                cur = [l.rstrip(" {").replace("ENTRY ", "").strip(), l, []]
            elif not comps:
                header.append(l)
        else:
            if l.strip() == "}":
                comps.append(cur)
                cur = None
            else:
                cur[2].append(l)
    entry = next(i for i, c in enumerate(comps) if c[1].startswith("ENTRY"))
    return header, comps, entry


def render(header, comps):
    out = [h for h in header if h.strip()] + [""]
    for name, hl, body in comps:
        out.append(hl)
        out += body
        out.append("}")
        out.append("")
    return "\n".join(out)


def cleanup(header, comps, entry, dce=True):
    """Dead code of the entry removed, parameters renumbered, unreferenced computations dropped."""
    instrs = [Instr(l) for l in comps[entry][2]]
    by = {i.name: i for i in instrs}
    root = next(i for i in instrs if i.root)
    # without dce: only what the replaced instruction alone fed (dead code the bug may need stays)
    live, stack = set(), [root.name] + ([] if dce else [i.name for i in instrs if not i.root])
    while stack:
        n = stack.pop()
        if n in live or n not in by:
            continue
        live.add(n)
        stack += by[n].operands
    instrs = [i for i in instrs if i.name in live]
    k = 0
    for i in instrs:
        if i.opcode == "parameter":
            i.inner = str(k)
            k += 1
    comps = [list(c) for c in comps]
    comps[entry][2] = [i.text() for i in instrs]
    # unreferenced computations (iterate: a body may reference a reducer)
    while True:
        text_of = {c[0]: "\n".join(c[2]) for c in comps}
        keep = []
        for idx, c in enumerate(comps):
            if idx == entry or c is comps[entry]:
                keep.append(c)
                continue
            pat = re.compile(r"(?<![\w.\-])%s(?![\w.\-])" % re.escape(c[0]))
            if any(pat.search(t) for n, t in text_of.items() if n != c[0]):
                keep.append(c)
        if len(keep) == len(comps):
            break
        ename = comps[entry][0]
        comps = keep
        entry = next(i for i, c in enumerate(comps) if c[0] == ename)
    return render(header, comps)


def candidates(text, dce=True):
    """Smaller variants of the module, the biggest cuts first."""
    header, comps, entry = parse_module(text)
    instrs = [Instr(l) for l in comps[entry][2]]
    by = {i.name: i for i in instrs}
    root = next(i for i in instrs if i.root)
    nparams = sum(1 for i in instrs if i.opcode == "parameter")

    def with_instrs(new_instrs):
        c2 = [list(c) for c in comps]
        c2[entry][2] = [i.text() for i in new_instrs]
        try:
            return cleanup(header, c2, entry, dce)
        except Exception:
            return None

    # 1. one output of a root tuple alone
    if root.opcode == "tuple" and len(root.operands) > 1:
        for k, o in enumerate(root.operands):
            if o not in by or by[o].shape.startswith("("):
                continue
            new = [Instr(i.text()) for i in instrs]
            r = next(i for i in new if i.root)
            r.shape, r.opcode, r.operands, r.attrs = by[o].shape, "copy", [o], ""
            yield with_instrs(new)
        # or drop one output
        for k in range(len(root.operands)):
            new = [Instr(i.text()) for i in instrs]
            r = next(i for i in new if i.root)
            ops = r.operands[:k] + r.operands[k + 1:]
            shapes = [by[o].shape if o in by else None for o in ops]
            if None in shapes:
                continue
            r.operands = ops
            r.shape = "(" + ", ".join(shapes) + ")"
            yield with_instrs(new)
    # 2. instructions replaced (nearest the root first: the biggest cuts)
    order = [i for i in reversed(instrs) if not i.root and i.opcode not in ("parameter",)]
    for target in order:
        if target.shape.startswith("("):
            continue
        t = target.shape.split("[")[0]
        # bypass: uses of target take one of its operands of the same shape
        for o in target.operands:
            if o in by and by[o].shape == target.shape:
                new = [Instr(i.text()) for i in instrs if i.name != target.name]
                for i in new:
                    i.operands = [o if x == target.name else x for x in i.operands]
                yield with_instrs(new)
        # a parameter
        new = [Instr(i.text()) for i in instrs]
        for i in new:
            if i.name == target.name:
                i.opcode, i.inner, i.attrs, i.operands = "parameter", str(nparams), "", []
        yield with_instrs(new)
        # a constant (scalar, broadcast)
        if target.opcode != "constant":
            val = {"pred": "true"}.get(t, "1")
            new = []
            for i in instrs:
                i2 = Instr(i.text())
                if i.name == target.name:
                    dims = target.shape.split("[", 1)[1].split("]")[0]
                    if dims:
                        c = Instr("  %s.c = %s[] constant(%s)" % (target.name, t, val))
                        new.append(c)
                        i2.opcode, i2.operands, i2.attrs = "broadcast", [c.name], ", dimensions={}"
                    else:
                        i2.opcode, i2.inner, i2.operands, i2.attrs = "constant", val, [], ""
                new.append(i2)
            yield with_instrs(new)


def minimize(text, still_fails, budget_s=120.0, max_tests=400):
    """Greedy reduction of `text` while still_fails(text) holds. Returns (text, tests)."""
    t0 = time.time()
    tests = 0
    improved = True
    seen = set()
    dce = True
    while time.time() - t0 < budget_s and tests < max_tests:
        if not improved and not dce:
            break
        if not improved:
            dce = False  # nothing left with dead code removed: try keeping the dead code
        improved = False
        for cand in candidates(text, dce):
            if cand is None or len(cand) >= len(text):
                continue
            h = hashlib.sha1(cand.encode()).hexdigest()
            if h in seen:
                continue
            seen.add(h)
            tests += 1
            if still_fails(cand):
                text = cand
                improved = True
                break
            if time.time() - t0 > budget_s or tests >= max_tests:
                break
    return text, tests


# --- the campaign ----------------------------------------------------------------------------

class Campaign:
    def __init__(self, args):
        self.args = args
        self.runner = Runner(args.hloc, args.timeout, args.mem_gib)
        self.lock = threading.Lock()
        self.generated = 0
        self.verified = 0
        self.not_verified = []
        self.findings = {}  # signature -> list of finding dirs
        self.classes = {"crash": 0, "error": 0, "mismatch": 0, "timeout": 0}
        self.skipped = {}
        self.next_index = 0
        self.stop = False
        self.commands = list(COMMANDS) + (["gpu"] if args.gpu_ok else [])
        if args.commands:
            self.commands = [c for c in args.commands.split(",") if c]
        self.min_tests = 0
        self.pre_signatures = {}
        self.t0 = time.time()

    def log(self, msg):
        if not self.args.quiet:
            with self.lock:
                print(msg, flush=True)

    def take(self):
        with self.lock:
            if self.stop:
                return None
            if self.args.count and self.next_index >= self.args.count:
                return None
            if not self.args.count and time.time() - self.t0 >= self.args.time:
                return None
            i = self.next_index
            self.next_index += 1
            return i

    def worker(self, wid):
        wd = os.path.join(self.args.out, "work%d" % wid)
        while True:
            i = self.take()
            if i is None:
                return
            shutil.rmtree(wd, ignore_errors=True)
            os.makedirs(wd)
            try:
                self.one(i, wd)
            except Exception as e:  # a campaign bug must not end the campaign
                self.log("program %d: campaign error %r" % (i, e))

    def one(self, i, wd):
        pseed = self.args.seed * 1000003 + i
        iseed = i % 1000
        text = hlo_gen.generate(pseed)
        with self.lock:
            self.generated += 1
        m = os.path.join(wd, "m.hlo")
        with open(m, "w") as f:
            f.write(text)
        # eval verifies first (no separate `hloc verify`: one process less per program)
        (c, d), out, err = reference(self.runner, wd, "m.hlo", iseed)
        if c == "error" and re.search(r"verification failed|m\.hlo:\d+:\d+: ", d):
            with self.lock:
                self.not_verified.append((pseed, d))
            self.log("program %d (gen seed %d): does not verify: %s" % (i, pseed, d))
            return
        if c != "crash":
            with self.lock:
                self.verified += 1
        if c != "ok":
            self.finding("eval", c, d, text, pseed, iseed, out + err)
            return
        for cmd in self.commands:
            r = check_command(self.runner, cmd, wd, "m.hlo", iseed)
            if r.cls == "skipped":
                with self.lock:
                    self.skipped[cmd] = self.skipped.get(cmd, 0) + 1
                continue
            if r.cls != "ok":
                self.finding(cmd, r.cls, r.detail, text, pseed, iseed, r.out + r.err)

    def still_fails(self, cmd, cls, sig, iseed):
        def pred(text):
            wd = os.path.join(self.args.out, "min%d" % threading.get_ident())
            shutil.rmtree(wd, ignore_errors=True)
            os.makedirs(wd)
            with open(os.path.join(wd, "m.hlo"), "w") as f:
                f.write(text)
            with self.lock:
                self.min_tests += 1
            rc, out, err, _ = self.runner.run("minimize", ["verify", "m.hlo"], wd)
            if rc != 0:
                return False
            (c, d), out, err = reference(self.runner, wd, "m.hlo", iseed, "minimize")
            if cmd in ("eval", "verify"):
                return c == cls and normalize(d) == sig
            if c != "ok":
                return False
            r = check_command(self.runner_min, cmd, wd, "m.hlo", iseed)
            if r.cls != cls:
                return False
            return cls == "mismatch" or normalize(r.detail) == sig
        return pred

    def finding(self, cmd, cls, detail, text, pseed, iseed, log):
        with self.lock:
            self.classes[cls] = self.classes.get(cls, 0) + 1
        sig0 = normalize(detail)
        self.log("FINDING %s %s (gen seed %d, input seed %d): %s" % (cmd, cls, pseed, iseed, detail[:200]))
        mtext, tests = text, 0
        pre = "%s|%s|%s" % (cmd, cls, sig0)
        with self.lock:
            seen_before = self.pre_signatures.get(pre, 0)
            self.pre_signatures[pre] = seen_before + 1
        if cls in ("crash", "error") and seen_before >= 3:
            # the same message a fourth time: counted, not minimized again
            with self.lock:
                self.findings.setdefault(pre + " (not minimized)", []).append(pseed)
            return
        if cls != "timeout" and not self.args.no_minimize:
            mtext, tests = minimize(text, self.still_fails(cmd, cls, sig0, iseed), self.args.min_time)
        # signature after minimization: command, class, message, and for mismatches the opcodes left
        ops = sorted(set(re.findall(r"= (?:\([^=]*\)|\S+) ([a-z][\w-]*)\(", mtext)) - {"parameter", "constant", "tuple",
                                                                                       "get-tuple-element", "copy"})
        sig = "%s|%s|%s" % (cmd, cls, sig0 if cls != "mismatch" else ",".join(ops))
        with self.lock:
            lst = self.findings.setdefault(sig, [])
            n = len(lst)
            lst.append(pseed)
            idx = sum(len(v) for v in self.findings.values())
        if n >= 3:
            return
        d = os.path.join(self.args.out, "findings", "%s-%s-%04d" % (cls, cmd, idx))
        os.makedirs(d, exist_ok=True)
        with open(os.path.join(d, "orig.hlo"), "w") as f:
            f.write(text)
        with open(os.path.join(d, "min.hlo"), "w") as f:
            f.write(mtext)
        with open(os.path.join(d, "info.json"), "w") as f:
            json.dump({"command": cmd, "class": cls, "detail": detail, "gen_seed": pseed, "input_seed": iseed,
                       "signature": sig, "minimize_tests": tests}, f, indent=1)
        with open(os.path.join(d, "log.txt"), "w") as f:
            f.write(log[-20000:])
        self.log("  minimized in %d tests to %d lines: %s" % (tests, mtext.count("\n"), d))

    def run(self):
        self.runner_min = Runner(self.args.hloc, self.args.timeout, self.args.mem_gib)
        threads = [threading.Thread(target=self.worker, args=(w,)) for w in range(self.args.jobs)]
        for t in threads:
            t.start()
        last = time.time()
        while any(t.is_alive() for t in threads):
            for t in threads:
                t.join(1.0)
            if not self.args.quiet and time.time() - last >= 60:
                last = time.time()
                self.log("progress: %.0f s, programs %d, verified %d, executions %d, findings %d"
                         % (last - self.t0, self.generated, self.verified, sum(self.runner.counts.values()),
                            sum(self.classes.values())))

    def summary(self):
        secs = time.time() - self.t0
        ex = dict(self.runner.counts)
        total = sum(ex.values())
        lines = ["hloc differential fuzzer: seed %d, %.0f s, commands %s" % (self.args.seed, secs, ",".join(self.commands)),
                 "programs: generated=%d verified=%d" % (self.generated, self.verified),
                 "executions per command:"]
        for k in sorted(ex):
            lines.append("  %s %d executions" % (k, ex[k]))
        if self.skipped:
            lines.append("skipped (no-passes refusals by design; optimized modules the evaluator cannot run): %s"
                         % ", ".join("%s %d" % kv for kv in sorted(self.skipped.items())))
        lines.append("minimization: %d executions" % sum(self.runner_min.counts.values()))
        lines.append("findings: " + " ".join("%s=%d" % (k, v) for k, v in sorted(self.classes.items())))
        for sig, seeds in sorted(self.findings.items()):
            lines.append("  %s: %d (gen seeds %s)" % (sig, len(seeds), ",".join(map(str, seeds[:5]))))
        for s, d in self.not_verified[:10]:
            lines.append("  does not verify: gen seed %d: %s" % (s, d[:160]))
        lines.append("fuzz summary: programs=%d verified=%d executions=%d findings=%d crashes=%d mismatches=%d "
                     "errors=%d timeouts=%d" % (self.generated, self.verified, total, sum(self.classes.values()),
                                                self.classes["crash"], self.classes["mismatch"],
                                                self.classes["error"], self.classes["timeout"]))
        text = "\n".join(lines)
        print(text, flush=True)
        with open(os.path.join(self.args.out, "summary.txt"), "w") as f:
            f.write(text + "\n")


def gpu_available(hloc):
    if not shutil.which("nvidia-smi"):
        return False
    try:
        r = subprocess.run(["nvidia-smi", "-L"], capture_output=True, timeout=30)
        return r.returncode == 0 and b"GPU" in r.stdout
    except Exception:
        return False


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--time", type=float, default=60, help="campaign length in seconds (default 60)")
    ap.add_argument("--count", type=int, default=0, help="a fixed number of programs instead of --time")
    ap.add_argument("--seed", type=int, default=0, help="campaign seed: program i is hlo_gen seed SEED*1000003+i")
    ap.add_argument("--jobs", type=int, default=1)
    ap.add_argument("--out", default=None)
    ap.add_argument("--hloc", default=os.path.join(REPO, "build", "hloc"))
    ap.add_argument("--gpu", action="store_true", help="also hloc run --backend gpu (skipped without a GPU)")
    ap.add_argument("--commands", default="", help="only these checked commands (comma-separated: %s,gpu)"
                    % ",".join(COMMANDS))
    ap.add_argument("--timeout", type=float, default=60, help="per execution (default 60 s)")
    ap.add_argument("--mem-gib", type=float, default=8)
    ap.add_argument("--min-time", type=float, default=120, help="minimization budget per finding (s)")
    ap.add_argument("--no-minimize", action="store_true")
    ap.add_argument("--no-copy", action="store_true", help="run --hloc in place (default: a private copy)")
    ap.add_argument("--quiet", action="store_true")
    args = ap.parse_args()
    if args.out is None:
        args.out = "/tmp/hloc-fuzz/diff-%d-%s" % (args.seed, time.strftime("%Y%m%d-%H%M%S"))
    os.makedirs(args.out, exist_ok=True)
    args.hloc = os.path.abspath(args.hloc) if os.path.exists(args.hloc) else (shutil.which(args.hloc) or args.hloc)
    if not args.no_copy:
        # A private copy: immune to relinks of build/hloc while the campaign runs (built-in pipelines).
        os.makedirs(os.path.join(args.out, "bin"), exist_ok=True)
        copy = os.path.join(args.out, "bin", "hloc")
        shutil.copy2(args.hloc, copy + ".part")
        os.replace(copy + ".part", copy)
        args.hloc = copy
    args.gpu_ok = False
    if args.gpu:
        args.gpu_ok = gpu_available(args.hloc)
        if not args.gpu_ok:
            print("diff: --gpu: no GPU on this machine (nvidia-smi -L found none); hloc run --backend gpu skipped",
                  flush=True)
    c = Campaign(args)

    def stop(signum, frame):
        c.stop = True
    signal.signal(signal.SIGTERM, stop)
    signal.signal(signal.SIGINT, stop)
    if not args.quiet:
        print("hloc differential fuzzer: %s, out %s" % (args.hloc, args.out), flush=True)
    c.run()
    c.summary()
    return 0


if __name__ == "__main__":
    sys.exit(main())
