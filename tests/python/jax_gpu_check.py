#!/usr/bin/env python3
"""hloc.jax.jit beside jax.jit on five small programs (an MLP, softmax, a convolution, a scan,
layernorm): checks that the outputs agree and prints each one's time per call, for the GPU
machine (JAX with CUDA, libhloc.so built by scripts/build, numpy).

    PYTHONPATH=python python3 tests/python/jax_gpu_check.py [--profile h200] [--batches 7] [--calls 20]
    PYTHONPATH=python python3 tests/python/jax_gpu_check.py --profile cpu     # a local dry run

Times: `calls` back-to-back calls per batch, each batch's time divided by `calls`, the median
over `batches` batches (after one warm-up call, which compiles). jax.jit's calls end with
block_until_ready; hloc's calls are synchronous. The `path` column says how hloc.jax.jit's calls
went: `device` (jax arrays lent through DLPack, results handed back as jax arrays over hloc's
device memory, no host round trip) or `host` (copied through host memory); `in_place` how many of
the arguments and results the device path used without a copy, of how many there are. The `hloc run` column
is the executable alone on numpy arrays (the host path: upload, run, download). Exit status 1 when
an output disagrees beyond the tolerance, or when the device path used nothing in place.
"""
import argparse
import os
import statistics
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(ROOT, "python"))

import numpy as np  # noqa: E402

import hloc  # noqa: E402
import hloc.jax as hj  # noqa: E402


def programs(jax, jnp):
    k = jax.random.split(jax.random.PRNGKey(0), 8)

    def mlp(x, w1, b1, w2, b2):
        h = jax.nn.gelu(x @ w1 + b1)
        return h @ w2 + b2

    def softmax(x):
        return jax.nn.softmax(x, axis=-1)

    def conv(x, w):
        y = jax.lax.conv_general_dilated(x, w, window_strides=(1, 1), padding="SAME",
                                         dimension_numbers=("NHWC", "HWIO", "NHWC"))
        return jax.nn.relu(y)

    def scan(h0, xs, w):
        def step(h, x):
            h = jnp.tanh(h @ w + x)
            return h, h.sum()
        return jax.lax.scan(step, h0, xs)

    def layernorm(x, g, b):
        m = x.mean(-1, keepdims=True)
        v = ((x - m) ** 2).mean(-1, keepdims=True)
        return (x - m) * jax.lax.rsqrt(v + 1e-5) * g + b

    f32 = jnp.float32
    n = jax.random.normal
    return [
        ("mlp", mlp, (n(k[0], (256, 512), f32), n(k[1], (512, 1024), f32) * 0.05, jnp.zeros(1024, f32),
                      n(k[2], (1024, 256), f32) * 0.05, jnp.zeros(256, f32)), 2e-3),
        ("softmax", softmax, (n(k[3], (512, 1000), f32),), 1e-4),
        ("conv", conv, (n(k[4], (8, 32, 32, 64), f32), n(k[5], (3, 3, 64, 64), f32) * 0.05), 2e-3),
        ("scan", scan, (jnp.zeros((16, 128), f32), n(k[6], (64, 16, 128), f32),
                        n(k[7], (128, 128), f32) * 0.05), 2e-3),
        ("layernorm", layernorm, (n(k[0], (1024, 768), f32), jnp.ones(768, f32), jnp.zeros(768, f32)), 1e-4),
    ]


def rel_err(a, b):
    a = np.asarray(a, np.float64)
    b = np.asarray(b, np.float64)
    d = np.linalg.norm(b)
    return np.linalg.norm(a - b) / d if d > 0 else np.linalg.norm(a - b)


def time_per_call(fn, batches, calls, sync):
    times = []
    for _ in range(batches):
        start = time.perf_counter()
        r = None
        for _ in range(calls):
            r = fn()
        sync(r)
        times.append((time.perf_counter() - start) / calls)
    return statistics.median(times)


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--profile", default="h200")
    p.add_argument("--batches", type=int, default=7)
    p.add_argument("--calls", type=int, default=20)
    a = p.parse_args()
    ok, why = hj.available()
    if not ok:
        print("jax_gpu_check: %s" % why)
        return 2
    import jax
    import jax.numpy as jnp

    print("hloc %s (%s), jax %s on %s, profile %s" % (hloc.version(), hloc.library_path(), jax.__version__,
                                                       jax.devices()[0], a.profile))
    if a.profile != "cpu":
        gpu, reason = hloc.gpu_available()
        if not gpu:
            print("jax_gpu_check: no usable GPU for hloc: %s" % reason)
            return 2
    print("%-10s %10s %12s %12s %7s %8s %12s %8s" % ("program", "rel_err", "jax_ms", "hloc_ms", "path", "in_place",
                                                       "hloc_run_ms", "compile_s"))
    bad = 0
    for name, fn, args, tol in programs(jax, jnp):
        ref_fn = jax.jit(fn)
        t0 = time.perf_counter()
        ours = hj.jit(fn, profile=a.profile)
        out = ours(*args)  # lowers, compiles (or reads the disk cache)
        compile_s = time.perf_counter() - t0
        ref = ref_fn(*args)
        ref_leaves = jax.tree_util.tree_leaves(ref)
        out_leaves = jax.tree_util.tree_leaves(out)
        err = max(rel_err(o, r) for o, r in zip(out_leaves, ref_leaves))
        if len(out_leaves) != len(ref_leaves) or not err <= tol:
            bad += 1
        block = lambda r: jax.tree_util.tree_map(lambda x: x.block_until_ready(), r)  # noqa: E731
        t_jax = time_per_call(lambda: ref_fn(*args), a.batches, a.calls, block)
        t_ours = time_per_call(lambda: ours(*args), a.batches, a.calls, block)
        exe = ours._entry(args, jax.tree_util.tree_leaves(args))[0]
        probe = exe.run(*jax.tree_util.tree_leaves(args))
        probe = probe[0] if isinstance(probe, tuple) and probe else probe
        path = "device" if isinstance(probe, hloc.dlpack.DeviceArray) else "host"
        in_place = "%d/%d" % (exe.last_in_place, len(exe.parameters) + len(exe.results))
        host = [np.asarray(x) for x in jax.tree_util.tree_leaves(args)]
        t_run = time_per_call(lambda: exe.run(*host), a.batches, a.calls, lambda r: None)
        if path == "device" and exe.last_in_place <= 0:
            bad += 1  # the device path copied every argument and result: zero-copy is broken
            err = float("inf")
        print("%-10s %10.2e %12.4f %12.4f %7s %8s %12.4f %8.2f%s" % (name, err, t_jax * 1e3, t_ours * 1e3, path,
                                                                       in_place, t_run * 1e3, compile_s,
                                                                  "" if err <= tol else "  MISMATCH"))
    print("%d of 5 programs agree" % (5 - bad))
    bad += chains(jax, jnp, a.profile)
    return 1 if bad else 0


def chains(jax, jnp, profile):
    """x = f(x) through hloc.jax.jit beside jax.jit: results fed back as arguments, once letting
    each go (hloc's result buffers take turns, so each binding's CUDA graphs are reused) and once
    keeping every one alive (a new binding each call, more than the executable keeps graphs
    for). Returns the number of chains that disagree."""
    def step(x, w):
        return jnp.tanh(x @ w) + 0.5 * x

    x0 = jax.random.normal(jax.random.PRNGKey(1), (256, 256), jnp.float32)
    w = jax.random.normal(jax.random.PRNGKey(2), (256, 256), jnp.float32) * 0.05
    ref_fn, ours = jax.jit(step), hj.jit(step, profile=profile)
    ref = x0
    for _ in range(12):
        ref = ref_fn(ref, w)
    bad = 0
    for keep in (False, True):
        x, kept = x0, []
        for _ in range(12):
            x = ours(x, w)
            if keep:
                kept.append(x)
        err = rel_err(x, ref)
        ok = err <= 2e-3
        bad += not ok
        print("chain (%s): 12 steps, rel_err %.2e %s" % ("every result kept" if keep else "results let go", err,
                                                        "ok" if ok else "MISMATCH"))
    return bad


if __name__ == "__main__":
    sys.exit(main())
