#!/usr/bin/env python3
"""Tests of the hloc Python package (python/hloc) on the CPU backend: plain python3, no pytest.

    python3 tests/python/test_hloc.py        # exits non-zero when a check fails

It finds the package in python/ of this checkout and libhloc.so as hloc does (HLOC_LIBRARY,
python/hloc/, build/); build it with scripts/build. Needs numpy.
"""
import os
import re
import shutil
import sys
import tempfile
import traceback

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(ROOT, "python"))
CORPUS = os.path.join(ROOT, "tests", "corpus")

import numpy as np  # noqa: E402

import hloc  # noqa: E402

SMALL = """HloModule small, entry_computation_layout={(f32[2,3]{1,0}, f32[2,3]{1,0})->(f32[2,3]{1,0}, f32[])}

add {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}

ENTRY main {
  x = f32[2,3]{1,0} parameter(0)
  y = f32[2,3]{1,0} parameter(1)
  m = f32[2,3]{1,0} multiply(x, y)
  e = f32[2,3]{1,0} exponential(m)
  zero = f32[] constant(0)
  r = f32[] reduce(m, zero), dimensions={0,1}, to_apply=add
  ROOT t = (f32[2,3]{1,0}, f32[]) tuple(e, r)
}
"""

ONE = """HloModule one
ENTRY main {
  x = s32[4] parameter(0)
  ROOT n = s32[4] negate(x)
}
"""


def rel_err(out, ref):
    out = np.asarray(out, np.float64)
    ref = np.asarray(ref, np.float64)
    denom = np.linalg.norm(ref)
    diff = np.linalg.norm(out - ref)
    return diff / denom if denom > 0 else diff


def check_close(out, ref, what, tol=2e-3, atol=1e-6):
    assert out.shape == ref.shape, "%s: shape %s, expected %s" % (what, out.shape, ref.shape)
    if ref.dtype.kind in "biu":
        assert np.array_equal(out, ref), "%s: integers differ" % what
        return
    # NaN equals NaN and an infinity the same infinity; the rest by relative-norm error.
    out = out.astype(np.float64)
    ref = ref.astype(np.float64)
    special = ~np.isfinite(ref)
    same = (np.isnan(out) & np.isnan(ref)) | (out == ref)
    assert np.array_equal(special & same, special), "%s: NaN/inf positions differ" % what
    assert np.all(np.isfinite(out[~special])), "%s: non-finite values where the reference is finite" % what
    out, ref = out[~special], ref[~special]
    rms = np.sqrt(np.mean((out - ref) ** 2)) if ref.size else 0.0
    e = rel_err(out, ref)
    assert e <= tol or rms <= atol, "%s: relative error %.3g (rms %.3g) above %g" % (what, e, rms, tol)


def test_small_text():
    exe = hloc.compile(SMALL, profile="cpu")
    assert exe.platform == "cpu", exe.platform
    x = np.arange(6, dtype=np.float32).reshape(2, 3) / 10
    y = np.linspace(-1, 1, 6, dtype=np.float32).reshape(2, 3)
    e, r = exe.run(x, y)  # a tuple result comes back as a tuple
    check_close(e, np.exp(x * y), "exp(x*y)", tol=1e-6)
    check_close(np.asarray(r), np.asarray(np.sum(x * y), np.float32), "sum(x*y)", tol=1e-5)
    # A single array result is an array, not a tuple; a list is converted to the parameter's dtype.
    one = hloc.compile(ONE, profile="cpu")
    out = one.run([1, -2, 3, 0])
    assert isinstance(out, np.ndarray) and out.dtype == np.int32, (type(out), getattr(out, "dtype", None))
    assert out.tolist() == [-1, 2, -3, 0], out


def test_dlpack_producer():
    exe = hloc.compile(ONE, profile="cpu")

    class Producer:  # only the DLPack protocol, as torch/jax CPU tensors offer it
        def __init__(self, a):
            self._a = a

        def __dlpack__(self, stream=None):
            return self._a.__dlpack__()

        def __dlpack_device__(self):
            return self._a.__dlpack_device__()

    if not hasattr(np, "from_dlpack"):
        print("  (numpy %s has no from_dlpack: DLPack input not checked)" % np.__version__)
        return
    out = exe.run(Producer(np.array([5, 6, 7, 8], np.int32)))
    assert out.tolist() == [-5, -6, -7, -8], out
    # The result is a numpy array, which is itself a DLPack producer.
    assert hasattr(out, "__dlpack__")


def corpus_case(name, tol):
    path = os.path.join(CORPUS, name + ".small.before_optimizations.txt")
    exe = hloc.compile(path, profile="cpu")
    inputs = np.load(os.path.join(CORPUS, name + ".small.inputs.npz"))
    expected = np.load(os.path.join(CORPUS, name + ".small.outputs.npz"))
    args = [inputs["arg%d" % i] for i in range(len(inputs.files))]
    outs = exe.run(*args)
    if not isinstance(outs, tuple):
        outs = (outs,)
    assert len(outs) == len(expected.files), "%s: %d outputs, expected %d" % (name, len(outs), len(expected.files))
    for i, out in enumerate(outs):
        check_close(out, expected["out%d" % i], "%s out%d" % (name, i), tol=tol)


def test_dlpack_borrow_reads_the_tensor():
    # The ctypes mirror of DLPack's structs reads numpy's own capsules right: address, type,
    # shape and strides, and gives the tensor back (the GPU path borrows CUDA arrays this way).
    from hloc import dlpack
    a = np.arange(12, dtype=np.float32).reshape(3, 4)
    b = dlpack.Borrowed(a)
    assert b.device == (dlpack.kDLCPU, 0), b.device
    assert b.dtype == (2, 32, 1) and b.shape == (3, 4), (b.dtype, b.shape)
    assert b.address == a.ctypes.data and b.row_major()
    b.release()
    b.release()  # once only
    t = dlpack.Borrowed(np.arange(12, dtype=np.int64).reshape(3, 4).T)
    assert t.dtype == (0, 64, 1) and t.shape == (4, 3) and not t.row_major(), (t.dtype, t.strides)
    t.release()
    # borrow() checks the device first: a CPU array is not lent to the GPU path
    try:
        dlpack.borrow(a, "f32", [3, 4], 0)
        raise AssertionError("a CPU array was borrowed for the GPU")
    except ValueError as e:
        assert "hloc runs on CUDA device 0" in str(e), e
    assert dlpack.cuda_device(a) is None and dlpack.cuda_device(object()) is None


def test_corpus():
    corpus_case("mlp_fwd_f32", 2e-3)       # a dot feeds the output (TF32 on XLA's side)
    corpus_case("softmax", 1e-4)
    corpus_case("mlp_train_step_f32", 2e-3)  # five outputs
    corpus_case("int_ops", 1e-4)           # integers exactly


def test_serialize_roundtrip():
    exe = hloc.compile(SMALL, profile="cpu")
    data = exe.serialize()
    assert data[:4] == b"HLOX", data[:4]
    again = hloc.load(data)
    x = np.ones((2, 3), np.float32)
    a, _ = exe.run(x, x)
    b, _ = again.run(x, x)
    assert np.array_equal(a, b)
    with tempfile.NamedTemporaryFile(suffix=".hlox") as f:
        f.write(data)
        f.flush()
        assert hloc.load(f.name).module_name == exe.module_name


def test_errors():
    bad = "HloModule bad\nENTRY main {\n  x = f32[2] parameter(0)\n  ROOT y = f32[2] frobnicate(x)\n}\n"
    try:
        hloc.compile(bad, profile="cpu")
    except hloc.Error as e:
        assert re.search(r"<text>:\d+:\d+: ", str(e)), "no FILE:LINE:COL in %r" % str(e)
    else:
        raise AssertionError("bad HLO compiled")
    try:
        hloc.compile(ONE, profile="no-such-profile")
    except hloc.Error as e:
        assert "no-such-profile" in str(e), str(e)
    else:
        raise AssertionError("an unknown profile was accepted")
    exe = hloc.compile(ONE, profile="cpu")
    for args in ((), (np.zeros(3, np.int32),)):
        try:
            exe.run(*args)
        except hloc.Error:
            pass
        else:
            raise AssertionError("run%r was accepted" % (args,))
    try:
        hloc.compile(os.path.join(CORPUS, "no-such-file.txt"), profile="cpu")
    except hloc.Error as e:
        assert "no-such-file" in str(e), str(e)
    else:
        raise AssertionError("a missing file was accepted")


def test_gpu_profile_without_gpu():
    ok, why = hloc.gpu_available()
    if ok:
        print("  (a GPU is here: the no-GPU message is not checked)")
        return
    assert why, "no reason given for the missing GPU"
    exe = hloc.compile(ONE, profile="h200")  # deviceless
    assert exe.platform == "gpu", exe.platform
    try:
        exe.run(np.zeros(4, np.int32))
    except hloc.Error as e:
        assert "no usable GPU" in str(e), str(e)
    else:
        raise AssertionError("a GPU executable ran without a GPU")


def test_jax():
    import hloc.jax as hj
    ok, why = hj.available()
    if not ok:
        try:
            hj.jit(lambda x: x, profile="cpu")
        except hloc.Error as e:
            assert "JAX is not installed" in str(e) or "needs JAX" in str(e), str(e)
        else:
            raise AssertionError("hloc.jax.jit worked without JAX")
        print("  SKIP hloc.jax: %s" % why)
        return
    import jax.numpy as jnp
    cache = tempfile.mkdtemp(prefix="hloc-cache-")
    os.environ["HLOC_CACHE_DIR"] = cache
    try:
        f = hj.jit(lambda x, w: jnp.tanh(x @ w).sum(axis=0), profile="cpu")
        x = np.linspace(-1, 1, 12, dtype=np.float32).reshape(3, 4)
        w = np.linspace(0, 1, 8, dtype=np.float32).reshape(4, 2)
        y = f(x, w)
        check_close(np.asarray(y), np.tanh(x @ w).sum(axis=0), "hloc.jax mlp", tol=1e-5)
        assert f.last_cache_hit is False
        g = hj.jit(lambda x, w: jnp.tanh(x @ w).sum(axis=0), profile="cpu")
        g(x, w)
        assert g.last_cache_hit is True, "the second compile did not come from the disk cache"
        assert any(n.endswith(".hlox") for n in os.listdir(cache)), os.listdir(cache)
    finally:
        shutil.rmtree(cache, ignore_errors=True)
        del os.environ["HLOC_CACHE_DIR"]


def main():
    print("hloc %s from %s" % (hloc.version(), hloc.library_path()))
    tests = [(n, f) for n, f in sorted(globals().items()) if n.startswith("test_") and callable(f)]
    failed = 0
    for name, fn in tests:
        try:
            fn()
            print("PASS %s" % name)
        except Exception:  # noqa: BLE001 - report every failure and go on
            failed += 1
            print("FAIL %s" % name)
            traceback.print_exc()
    print("%d passed, %d failed" % (len(tests) - failed, failed))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
