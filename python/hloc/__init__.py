"""hloc from Python: compile HLO modules with hloc and run them on numpy arrays.

Design: a thin ctypes layer over libhloc.so, hloc's stable C API (src/capi/hloc_c.h), so the
package is pure Python and works with any CPython 3 (no extension module to rebuild per Python
version). The library is looked up in this order: $HLOC_LIBRARY, libhloc.so beside this file
(scripts/build copies it here) and build/ of the checkout this file lives in.

    import hloc, numpy as np
    exe = hloc.compile(open("module.txt").read(), profile="cpu")   # or a path; profile "h200", ...
    out = exe.run(np.ones((2, 3), np.float32))                      # a numpy array (a tuple for several)

Arrays cross into hloc as host memory: `Executable.run` takes numpy arrays or any object numpy
can read (DLPack producers through numpy.from_dlpack, array-likes through numpy.asarray). On the
GPU backend the arguments are copied from host memory to the device and the results back (the C
API takes host pointers only; device-pointer DLPack without a copy is not done yet), so a GPU
call's time includes those two copies.
"""

import ctypes
import os
import threading

import numpy as np

from . import dlpack as _dlpack  # noqa: E402

__all__ = ["Error", "Executable", "compile", "load", "gpu_available", "version", "library_path"]


class Error(Exception):
    """An error from hloc (the C++ message, with FILE:LINE:COL for parse errors)."""


# --- the library ------------------------------------------------------------------------------
_lib = None
_lib_path = None
_lib_lock = threading.Lock()


def _candidates():
    env = os.environ.get("HLOC_LIBRARY")
    if env:
        yield env
    here = os.path.dirname(os.path.abspath(__file__))
    yield os.path.join(here, "libhloc.so")
    root = os.path.dirname(os.path.dirname(here))  # python/hloc -> the checkout
    yield os.path.join(root, "build", "libhloc.so")


def _load():
    global _lib, _lib_path
    with _lib_lock:
        if _lib is not None:
            return _lib
        tried = []
        for path in _candidates():
            if not os.path.isfile(path):
                tried.append(path + " (absent)")
                continue
            try:
                lib = ctypes.CDLL(path)
            except OSError as e:
                tried.append("%s (%s)" % (path, e))
                continue
            _declare(lib)
            _lib, _lib_path = lib, path
            return lib
        raise Error("cannot load libhloc.so; tried: " + "; ".join(tried) +
                    ". Build it with scripts/build or set HLOC_LIBRARY.")


def _declare(lib):
    c = ctypes
    P = c.c_void_p
    sig = {
        "hloc_version": (c.c_char_p, []),
        "hloc_c_api_version": (c.c_int, []),
        "hloc_last_error": (c.c_char_p, []),
        "hloc_gpu_available": (c.c_int, []),
        "hloc_compile": (P, [c.c_char_p, c.c_size_t, c.c_char_p, c.c_char_p]),
        "hloc_deserialize": (P, [c.c_char_p, c.c_size_t, c.c_char_p]),
        "hloc_serialize": (c.c_int, [P, c.POINTER(P), c.POINTER(c.c_size_t)]),
        "hloc_free_buffer": (None, [P]),
        "hloc_executable_free": (None, [P]),
        "hloc_executable_platform": (c.c_char_p, [P]),
        "hloc_executable_profile": (c.c_char_p, [P]),
        "hloc_executable_module_name": (c.c_char_p, [P]),
        "hloc_executable_hlo_text": (c.c_char_p, [P]),
        "hloc_executable_num_parameters": (c.c_int64, [P]),
        "hloc_executable_num_results": (c.c_int64, [P]),
        "hloc_executable_result_is_tuple": (c.c_int, [P]),
        "hloc_executable_parameter": (c.c_int, [P, c.c_int64, c.POINTER(c.c_char_p), c.POINTER(c.c_int64),
                                              c.POINTER(c.POINTER(c.c_int64))]),
        "hloc_executable_result": (c.c_int, [P, c.c_int64, c.POINTER(c.c_char_p), c.POINTER(c.c_int64),
                                           c.POINTER(c.POINTER(c.c_int64))]),
        "hloc_execute": (c.c_int, [P, c.c_int64, c.POINTER(P), c.POINTER(c.c_int64), c.c_int64, c.POINTER(P),
                                   c.POINTER(c.c_int64)]),
        "hloc_execute_device": (c.c_int, [P, c.c_int64, c.POINTER(c.c_uint64), c.c_int64, c.POINTER(c.c_uint64)]),
        "hloc_executable_row_major_io": (c.c_int, [P]),
        "hloc_executable_last_in_place": (c.c_int64, [P]),
        "hloc_gpu_alloc": (c.c_int, [c.c_int64, c.POINTER(c.c_uint64)]),
        "hloc_gpu_free": (c.c_int, [c.c_uint64]),
        "hloc_gpu_copy_to_host": (c.c_int, [c.c_uint64, c.c_int64, P]),
    }
    for name, (res, args) in sig.items():
        f = getattr(lib, name)
        f.restype = res
        f.argtypes = args


def _error(lib, prefix=""):
    msg = lib.hloc_last_error().decode("utf-8", "replace")
    return Error(prefix + msg if msg else prefix + "unknown hloc error")


def version():
    """hloc's version ("0.1.0")."""
    return _load().hloc_version().decode()


def library_path():
    """The path of the libhloc.so in use."""
    _load()
    return _lib_path


def gpu_available():
    """(True, "") when a GPU can run executables here, else (False, the reason)."""
    lib = _load()
    if lib.hloc_gpu_available() == 0:
        return True, ""
    return False, lib.hloc_last_error().decode("utf-8", "replace")


# --- element types ----------------------------------------------------------------------------
def _bf16():
    try:
        import ml_dtypes  # shipped with jax
        return np.dtype(ml_dtypes.bfloat16)
    except ImportError:
        return None


_NUMPY_TYPES = {
    "pred": np.dtype(np.bool_), "s8": np.dtype(np.int8), "s16": np.dtype(np.int16), "s32": np.dtype(np.int32),
    "s64": np.dtype(np.int64), "u8": np.dtype(np.uint8), "u16": np.dtype(np.uint16), "u32": np.dtype(np.uint32),
    "u64": np.dtype(np.uint64), "f16": np.dtype(np.float16), "f32": np.dtype(np.float32),
    "f64": np.dtype(np.float64), "c64": np.dtype(np.complex64), "c128": np.dtype(np.complex128),
}
# Types numpy lacks travel as bit patterns of the same width (bf16 as uint16 unless ml_dtypes is
# installed; f8 kinds as uint8), as in hloc's .npz files.
_BITS = {"bf16": np.dtype(np.uint16), "f8e4m3fn": np.dtype(np.uint8), "f8e5m2": np.dtype(np.uint8),
         "f8e4m3fnuz": np.dtype(np.uint8), "f8e5m2fnuz": np.dtype(np.uint8), "f8e4m3b11fnuz": np.dtype(np.uint8),
         "f8e4m3": np.dtype(np.uint8), "f8e3m4": np.dtype(np.uint8)}


def numpy_dtype(element_type):
    """The numpy dtype hloc uses for an HLO element type ("f32" -> float32, "bf16" -> ml_dtypes'
    bfloat16 when installed, else uint16 bit patterns)."""
    if element_type in _NUMPY_TYPES:
        return _NUMPY_TYPES[element_type]
    if element_type == "bf16" and _bf16() is not None:
        return _bf16()
    if element_type in _BITS:
        return _BITS[element_type]
    raise Error("element type %s has no numpy form" % element_type)


def _f32_to_bf16_bits(a):
    bits = np.ascontiguousarray(a, np.float32).view(np.uint32)
    rounded = (bits + np.uint32(0x7FFF) + ((bits >> np.uint32(16)) & np.uint32(1))) >> np.uint32(16)
    nan = np.isnan(np.asarray(a, np.float32))
    return np.where(nan, np.uint32(0x7FC0), rounded).astype(np.uint16)


def _to_numpy(x):
    if isinstance(x, np.ndarray):
        return x
    if hasattr(x, "__dlpack__") and hasattr(np, "from_dlpack"):
        try:
            return np.from_dlpack(x)
        except (TypeError, RuntimeError, BufferError, ValueError):
            pass  # e.g. a device array: numpy.asarray copies it through the host
    return np.asarray(x)


class Shape:
    """An entry parameter or result leaf: its HLO element type, dimensions and numpy dtype."""

    def __init__(self, element_type, dims):
        self.element_type = element_type
        self.shape = tuple(dims)
        self.dtype = numpy_dtype(element_type)

    @property
    def nbytes(self):
        n = self.dtype.itemsize
        for d in self.shape:
            n *= d
        return n

    def __repr__(self):
        return "%s[%s]" % (self.element_type, ",".join(str(d) for d in self.shape))


class Executable:
    """A compiled module. `run(*arrays)` calls it; `serialize()` gives its .hlox bytes."""

    def __init__(self, handle):
        self._lib = _load()
        self._h = ctypes.c_void_p(handle)
        lib, h = self._lib, self._h
        self.platform = lib.hloc_executable_platform(h).decode()
        self.profile = lib.hloc_executable_profile(h).decode()
        self.module_name = lib.hloc_executable_module_name(h).decode()
        self.parameters = [self._shape(lib.hloc_executable_parameter, i)
                           for i in range(lib.hloc_executable_num_parameters(h))]
        self.results = [self._shape(lib.hloc_executable_result, i)
                        for i in range(lib.hloc_executable_num_results(h))]
        self.result_is_tuple = bool(lib.hloc_executable_result_is_tuple(h))

    def _shape(self, fn, i):
        et = ctypes.c_char_p()
        rank = ctypes.c_int64()
        dims = ctypes.POINTER(ctypes.c_int64)()
        if fn(self._h, i, ctypes.byref(et), ctypes.byref(rank), ctypes.byref(dims)) != 0:
            raise _error(self._lib)
        return Shape(et.value.decode(), [dims[k] for k in range(rank.value)])

    def __del__(self):
        h = getattr(self, "_h", None)
        if h is not None and h.value:
            self._lib.hloc_executable_free(h)
            self._h = None

    @property
    def hlo_text(self):
        """The optimized, scheduled module."""
        return self._lib.hloc_executable_hlo_text(self._h).decode()

    def serialize(self):
        """The executable as .hlox bytes (hloc.load reads them back; `hloc run` runs them)."""
        buf, n = ctypes.c_void_p(), ctypes.c_size_t()
        if self._lib.hloc_serialize(self._h, ctypes.byref(buf), ctypes.byref(n)) != 0:
            raise _error(self._lib)
        try:
            return ctypes.string_at(buf, n.value)
        finally:
            self._lib.hloc_free_buffer(buf)

    @property
    def last_in_place(self):
        """How many arguments and results the last device-path run used in place, without a copy
        (buffer assignment decides which can be: a parameter the program never writes, a result
        alone in its buffer); the others were copied on the device. -1 on the CPU backend."""
        return int(self._lib.hloc_executable_last_in_place(self._h))

    def run(self, *args):
        """Runs once on the arguments (numpy arrays, DLPack producers or array-likes), converted to
        each parameter's dtype and shape (a size or shape mismatch is an Error). Returns a numpy
        array, or a tuple of them when the module's result is a tuple.

        On the GPU backend, when every argument is a CUDA array (DLPack on device 0: jax.Array,
        torch.Tensor, ...) of the parameter's exact type and shape, nothing goes through host
        memory: hloc reads the arguments on the device (in place where it can, see last_in_place),
        and the results are hloc.dlpack.DeviceArray
        objects (hand them to jax.dlpack.from_dlpack, torch.from_dlpack, ...). Otherwise the
        arguments are copied through host memory and the results come back as numpy arrays."""
        if len(args) != len(self.parameters):
            raise Error("%s takes %d arguments (%s), got %d" % (
                self.module_name, len(self.parameters), ", ".join(map(repr, self.parameters)), len(args)))
        if self.platform == "gpu" and args and all(_dlpack.cuda_device(a) is not None for a in args):
            if self._lib.hloc_executable_row_major_io(self._h):
                return self._run_device(args)
        return self._run_host(args)

    def _run_device(self, args):
        borrowed = []
        try:
            for i, (a, p) in enumerate(zip(args, self.parameters)):
                try:
                    borrowed.append(_dlpack.borrow(a, p.element_type, p.shape, i))
                except ValueError as e:
                    raise Error("%s: %s" % (self.module_name, e)) from None
            outs = []
            for r in self.results:
                addr = ctypes.c_uint64()
                if self._lib.hloc_gpu_alloc(r.nbytes, ctypes.byref(addr)) != 0:
                    raise _error(self._lib, "%s: " % self.module_name)
                outs.append(_dlpack.DeviceArray(self._lib, addr.value, r.element_type, r.shape))
            n_in, n_out = len(borrowed), len(outs)
            in_ptrs = (ctypes.c_uint64 * max(n_in, 1))(*[b.address for b in borrowed])
            out_ptrs = (ctypes.c_uint64 * max(n_out, 1))(*[o.address for o in outs])
            if self._lib.hloc_execute_device(self._h, n_in, in_ptrs, n_out, out_ptrs) != 0:
                raise _error(self._lib, "%s: " % self.module_name)
        finally:
            for b in borrowed:
                b.release()
        if self.result_is_tuple:
            return tuple(outs)
        return outs[0] if outs else ()

    def _run_host(self, args):
        keep = []
        for i, (a, p) in enumerate(zip(args, self.parameters)):
            a = _to_numpy(a)
            if a.dtype != p.dtype:
                if p.element_type in _BITS and p.dtype.kind == "u":
                    # no numpy type for it: bit patterns pass as they are (any dtype of the same
                    # width), floating-point values are rounded (bf16: to nearest even)
                    if a.dtype.itemsize == p.dtype.itemsize:
                        a = a.view(p.dtype)
                    elif p.element_type == "bf16" and a.dtype.kind == "f":
                        a = _f32_to_bf16_bits(a)
                    else:
                        raise Error("argument %d: %s values for a %s parameter: pass %s bit patterns" % (
                            i, a.dtype, p.element_type, p.dtype))
                else:
                    a = a.astype(p.dtype)
            if tuple(a.shape) != p.shape:
                raise Error("argument %d: shape %s, the parameter is %r" % (i, tuple(a.shape), p))
            keep.append(np.ascontiguousarray(a))
        outs = [np.empty(r.shape, r.dtype) for r in self.results]
        n_in, n_out = len(keep), len(outs)
        in_ptrs = (ctypes.c_void_p * max(n_in, 1))(*[a.ctypes.data for a in keep])
        in_sizes = (ctypes.c_int64 * max(n_in, 1))(*[a.nbytes for a in keep])
        out_ptrs = (ctypes.c_void_p * max(n_out, 1))(*[o.ctypes.data for o in outs])
        out_sizes = (ctypes.c_int64 * max(n_out, 1))(*[o.nbytes for o in outs])
        if self._lib.hloc_execute(self._h, n_in, in_ptrs, in_sizes, n_out, out_ptrs, out_sizes) != 0:
            raise _error(self._lib, "%s: " % self.module_name)
        if self.result_is_tuple:
            return tuple(outs)
        return outs[0] if outs else ()

    __call__ = run

    def __repr__(self):
        return "<hloc.Executable %s (%s, profile %s): (%s) -> %s>" % (
            self.module_name, self.platform, self.profile, ", ".join(map(repr, self.parameters)),
            ", ".join(map(repr, self.results)))


def _looks_like_text(s):
    return "\n" in s or "HloModule" in s or "ENTRY" in s


def compile(text_or_path, profile="h200", name=None):
    """Compiles an HLO module (its text, or the path of a file holding it) for a hardware profile:
    a name in configs/ ("h200", "h100", "a100", "cpu") or a profile file's path. The profile's
    kind picks the backend: GPU profiles compile without a GPU (running needs one), "cpu" runs on
    this machine. Errors raise hloc.Error with hloc's message (parse errors as FILE:LINE:COL)."""
    lib = _load()
    if isinstance(text_or_path, bytes):
        text_or_path = text_or_path.decode("utf-8")
    if isinstance(text_or_path, os.PathLike) or not _looks_like_text(text_or_path):
        path = os.fspath(text_or_path)
        try:
            with open(path, "rb") as f:
                data = f.read()
        except OSError as e:
            raise Error("cannot read %s: %s" % (path, e.strerror)) from None
        name = name or path
    else:
        data = text_or_path.encode("utf-8")
        name = name or "<text>"
    h = lib.hloc_compile(data, len(data), name.encode(), str(profile).encode())
    if not h:
        raise _error(lib)
    return Executable(h)


def load(data, origin="<bytes>"):
    """An Executable from .hlox bytes (Executable.serialize, `hloc compile -o`) or a .hlox path."""
    lib = _load()
    if not isinstance(data, (bytes, bytearray)):
        origin = os.fspath(data)
        with open(origin, "rb") as f:
            data = f.read()
    data = bytes(data)
    h = lib.hloc_deserialize(data, len(data), origin.encode())
    if not h:
        raise _error(lib)
    return Executable(h)
