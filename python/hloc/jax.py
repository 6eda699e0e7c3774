"""hloc.jax.jit: run a JAX function through hloc instead of XLA.

    import hloc.jax, jax.numpy as jnp
    f = hloc.jax.jit(lambda x, w: jnp.tanh(x @ w), profile="h200")
    y = f(x, w)          # a jax.Array

The function is lowered by JAX (`jax.jit(f).lower(*args).as_text(dialect="hlo")`, once per
argument shapes and dtypes), compiled by hloc for `profile`, and the executable is cached on disk
under $HLOC_CACHE_DIR (default ~/.cache/hloc) keyed by the sha256 of the HLO text, the profile
and hloc's version, so a second process skips compilation. On the GPU backend, jax arrays on GPU
0 go to hloc through DLPack with no host round trip (read in place where buffer assignment allows,
else copied device to device) and the results come back as jax arrays over device memory hloc
wrote them to directly (jax.dlpack.from_dlpack); otherwise arguments go through host memory (numpy) and results come
back through jax.numpy.asarray. Keyword arguments and static arguments are not supported;
pytrees of arrays are (flattened as JAX flattens them).
"""

import hashlib
import os
import tempfile
import threading

import numpy as np

import hloc

try:
    import jax as _jax
    import jax.numpy as _jnp
    _JAX_ERROR = None
except ImportError as e:  # keep `import hloc.jax` working; jit() says what is missing
    _jax = _jnp = None
    _JAX_ERROR = e


def available():
    """(True, "") when JAX can be imported, else (False, why)."""
    if _jax is None:
        return False, "JAX is not installed (pip install jax): %s" % _JAX_ERROR
    return True, ""


def _require_jax():
    if _jax is None:
        raise hloc.Error("hloc.jax needs JAX, which is not installed here (pip install jax; for GPUs "
                         "pip install 'jax[cuda12]'): %s" % _JAX_ERROR)


def cache_dir():
    d = os.environ.get("HLOC_CACHE_DIR")
    if d:
        return d
    return os.path.join(os.path.expanduser("~"), ".cache", "hloc")


def cache_key(hlo_text, profile):
    h = hashlib.sha256()
    for part in (hlo_text, str(profile), hloc.version()):
        h.update(part.encode("utf-8"))
        h.update(b"\0")
    return h.hexdigest()


def _compile_cached(hlo_text, profile, name):
    key = cache_key(hlo_text, profile)
    d = cache_dir()
    path = os.path.join(d, key + ".hlox")
    if os.path.isfile(path):
        try:
            return hloc.load(path), True
        except (hloc.Error, OSError):
            pass  # a stale or damaged entry: compile again and overwrite it
    exe = hloc.compile(hlo_text, profile=profile, name=name)
    try:
        os.makedirs(d, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=d, suffix=".tmp")
        with os.fdopen(fd, "wb") as f:
            f.write(exe.serialize())
        os.replace(tmp, path)  # atomic: concurrent processes never read half a file
    except OSError:
        pass  # an unwritable cache only costs the next process a compile
    return exe, False


class Jitted:
    """What hloc.jax.jit returns: call it like the function."""

    def __init__(self, fun, profile):
        _require_jax()
        self._fun = fun
        self.profile = profile
        self._jitted = _jax.jit(fun, keep_unused=True)  # the HLO keeps every parameter
        self._cache = {}
        self._lock = threading.Lock()
        self.last_cache_hit = None  # whether the last compile came from the disk cache
        if hasattr(fun, "__name__"):
            self.__name__ = fun.__name__

    def _signature(self, treedef, leaves):
        return (str(treedef),) + tuple((tuple(np.shape(x)), str(getattr(x, "dtype", np.asarray(x).dtype)))
                                       for x in leaves)

    def lower(self, *args):
        """The HLO text JAX hands to its compiler for these arguments."""
        return self._jitted.lower(*args).as_text(dialect="hlo")

    def _entry(self, args, leaves=None):
        flat, treedef = _jax.tree_util.tree_flatten(args)
        leaves = flat if leaves is None else leaves
        sig = self._signature(treedef, leaves)
        with self._lock:
            entry = self._cache.get(sig)
            if entry is None:
                text = self.lower(*args)
                out_tree = _jax.tree_util.tree_structure(_jax.eval_shape(self._fun, *args))
                name = getattr(self._fun, "__name__", "jit")
                exe, hit = _compile_cached(text, self.profile, "%s (jax lowering)" % name)
                self.last_cache_hit = hit
                if exe.platform == "gpu":
                    ok, why = hloc.gpu_available()
                    if not ok:
                        raise hloc.Error("profile %s compiles for the GPU, but no usable GPU is here: %s"
                                         % (self.profile, why))
                entry = (exe, out_tree)
                self._cache[sig] = entry
            return entry

    def __call__(self, *args):
        leaves, _ = _jax.tree_util.tree_flatten(args)
        exe, out_tree = self._entry(args, leaves)
        if exe.platform == "gpu" and leaves and all(_on_gpu0(x) for x in leaves):
            # Device path: jax arrays lend hloc their device memory through DLPack and the
            # results come back as jax arrays over hloc's device memory (no host round trip).
            outs = exe.run(*leaves)
        else:
            outs = exe.run(*[_host(x) for x in leaves])
        if not isinstance(outs, tuple):
            outs = (outs,)
        outs = [_from_hloc(o) for o in outs]
        return _jax.tree_util.tree_unflatten(out_tree, outs)


def _on_gpu0(x):
    if not isinstance(x, _jax.Array):
        return False
    try:
        devs = x.devices()
    except Exception:  # noqa: BLE001 - deleted or abstract arrays go the host way and fail there
        return False
    return len(devs) == 1 and next(iter(devs)).platform == "gpu" and next(iter(devs)).id == 0


def _from_hloc(o):
    if isinstance(o, hloc.dlpack.DeviceArray):
        return _jax.dlpack.from_dlpack(o)
    return _jnp.asarray(o)


def _host(x):
    # numpy over the JAX buffer without a copy where DLPack allows it (CPU arrays); device arrays
    # are copied to the host.
    if isinstance(x, np.ndarray):
        return x
    if hasattr(x, "__dlpack__"):
        try:
            devs = x.devices() if hasattr(x, "devices") else ()
            if all(d.platform == "cpu" for d in devs):
                return np.from_dlpack(x)
        except Exception:
            pass
    return np.asarray(x)


def jit(fun, profile="h200"):
    """Like jax.jit, compiled and run by hloc for `profile` ("h200", "h100", "a100", "cpu", or a
    profile file). Raises hloc.Error when JAX is missing or (at the first call) when a GPU profile
    finds no usable GPU."""
    return Jitted(fun, profile)
