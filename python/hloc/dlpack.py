"""DLPack through ctypes: GPU arrays into and out of hloc without a trip through host memory.

Arguments: any object with `__dlpack__` / `__dlpack_device__` on CUDA device 0 (jax.Array,
torch.Tensor, cupy arrays) lends hloc its device address (`borrow`); hloc copies it device to
device into the executable's own buffers, and gives the tensor back (the DLPack consumer's duty:
the capsule is renamed "used_dltensor" and its deleter called).

Results: `DeviceArray`, device memory hloc allocated, exported once through `__dlpack__`; the
consumer (jax.dlpack.from_dlpack, torch.from_dlpack, ...) takes ownership and frees it through
the deleter. Legacy (unversioned) "dltensor" capsules, which every consumer reads.
"""

import ctypes
import threading

import numpy as np

kDLCPU, kDLCUDA = 1, 2
_INT, _UINT, _FLOAT, _BFLOAT, _COMPLEX, _BOOL = 0, 1, 2, 4, 5, 6

# HLO element type -> (DLPack type code, bits)
DTYPES = {
    "pred": (_BOOL, 8),
    "s8": (_INT, 8), "s16": (_INT, 16), "s32": (_INT, 32), "s64": (_INT, 64),
    "u8": (_UINT, 8), "u16": (_UINT, 16), "u32": (_UINT, 32), "u64": (_UINT, 64),
    "f16": (_FLOAT, 16), "f32": (_FLOAT, 32), "f64": (_FLOAT, 64), "bf16": (_BFLOAT, 16),
    "c64": (_COMPLEX, 64), "c128": (_COMPLEX, 128),
}


class DLDevice(ctypes.Structure):
    _fields_ = [("device_type", ctypes.c_int), ("device_id", ctypes.c_int)]


class DLDataType(ctypes.Structure):
    _fields_ = [("code", ctypes.c_uint8), ("bits", ctypes.c_uint8), ("lanes", ctypes.c_uint16)]


class DLTensor(ctypes.Structure):
    _fields_ = [("data", ctypes.c_void_p), ("device", DLDevice), ("ndim", ctypes.c_int), ("dtype", DLDataType),
                ("shape", ctypes.POINTER(ctypes.c_int64)), ("strides", ctypes.POINTER(ctypes.c_int64)),
                ("byte_offset", ctypes.c_uint64)]


class DLManagedTensor(ctypes.Structure):
    pass


_DELETER = ctypes.CFUNCTYPE(None, ctypes.POINTER(DLManagedTensor))
DLManagedTensor._fields_ = [("dl_tensor", DLTensor), ("manager_ctx", ctypes.c_void_p), ("deleter", _DELETER)]

_api = ctypes.pythonapi
_api.PyCapsule_New.restype = ctypes.py_object
_api.PyCapsule_New.argtypes = [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_void_p]
_api.PyCapsule_GetPointer.restype = ctypes.c_void_p
_api.PyCapsule_GetPointer.argtypes = [ctypes.py_object, ctypes.c_char_p]
_api.PyCapsule_SetName.restype = ctypes.c_int
_api.PyCapsule_SetName.argtypes = [ctypes.py_object, ctypes.c_char_p]
_api.PyCapsule_IsValid.restype = ctypes.c_int
_api.PyCapsule_IsValid.argtypes = [ctypes.py_object, ctypes.c_char_p]


def cuda_device(x):
    """The CUDA device id x lives on, or None (no __dlpack_device__, or not a CUDA array)."""
    f = getattr(x, "__dlpack_device__", None)
    if f is None:
        return None
    try:
        kind, dev = f()
    except Exception:  # noqa: BLE001 - a producer that cannot say is not a CUDA array to us
        return None
    return int(dev) if int(kind) == kDLCUDA else None


class Borrowed:
    """A CUDA DLPack tensor lent to hloc for one call: `address` and its facts; `release()` gives
    it back (renames the capsule and calls the producer's deleter)."""

    def __init__(self, x):
        try:
            self._capsule = x.__dlpack__(stream=None)
        except TypeError:  # producers from before the stream keyword
            self._capsule = x.__dlpack__()
        if not _api.PyCapsule_IsValid(self._capsule, b"dltensor"):
            raise ValueError("__dlpack__ did not return a 'dltensor' capsule (versioned capsules are not read)")
        self._ptr = _api.PyCapsule_GetPointer(self._capsule, b"dltensor")
        t = DLManagedTensor.from_address(self._ptr).dl_tensor
        self.device = (t.device.device_type, t.device.device_id)
        self.dtype = (t.dtype.code, t.dtype.bits, t.dtype.lanes)
        self.shape = tuple(t.shape[k] for k in range(t.ndim))
        self.strides = None if not t.strides else tuple(t.strides[k] for k in range(t.ndim))
        self.address = (t.data or 0) + t.byte_offset

    def row_major(self):
        if self.strides is None:
            return True
        want = 1
        for d, s in zip(reversed(self.shape), reversed(self.strides)):
            if d != 1 and s != want:
                return False
            want *= d
        return True

    def release(self):
        if self._capsule is None:
            return
        m = DLManagedTensor.from_address(self._ptr)
        _api.PyCapsule_SetName(self._capsule, b"used_dltensor")
        if m.deleter:
            m.deleter(ctypes.cast(self._ptr, ctypes.POINTER(DLManagedTensor)))
        self._capsule = None


def borrow(x, element_type, dims, index):
    """Borrows CUDA array x for parameter `index` of HLO type element_type[dims]; a ValueError
    says what does not match (the device, the type, the shape, strides that are not row-major)."""
    b = Borrowed(x)
    try:
        if b.device != (kDLCUDA, 0):
            raise ValueError("argument %d is on device %r; hloc runs on CUDA device 0" % (index, b.device))
        code, bits = DTYPES.get(element_type, (None, None))
        if (code, bits, 1) != b.dtype:
            raise ValueError("argument %d has DLPack type %r; parameter %d is %s" % (index, b.dtype, index, element_type))
        if b.shape != tuple(dims):
            raise ValueError("argument %d has shape %r; parameter %d is %s%r" % (index, b.shape, index, element_type,
                                                                                  list(dims)))
        if not b.row_major():
            raise ValueError("argument %d has strides %r, not row-major" % (index, b.strides))
    except ValueError:
        b.release()
        raise
    return b


# Exported results: the managed tensor's address -> (the ctypes objects it points into, the
# device address the deleter frees). Kept here because the consumer holds only raw pointers.
_exported = {}
_exported_lock = threading.Lock()
_lib_for_free = [None]


def _delete(managed):
    key = ctypes.addressof(managed.contents)
    with _exported_lock:
        entry = _exported.pop(key, None)
    if entry is not None and _lib_for_free[0] is not None:
        _lib_for_free[0].hloc_gpu_free(entry[-1])


_DELETE = _DELETER(_delete)


class DeviceArray:
    """A result in GPU memory (CUDA device 0). Hand it to jax.dlpack.from_dlpack,
    torch.from_dlpack, cupy.from_dlpack, ... (no copy; once), or `numpy()` copies it to the host."""

    def __init__(self, lib, address, element_type, dims):
        self._lib = lib
        _lib_for_free[0] = lib
        self.address = address
        self.element_type = element_type
        self.shape = tuple(dims)
        self._owned = True

    @property
    def nbytes(self):
        n = DTYPES[self.element_type][1] // 8
        for d in self.shape:
            n *= d
        return n

    def __dlpack_device__(self):
        return (kDLCUDA, 0)

    def __dlpack__(self, stream=None, max_version=None, dl_device=None, copy=None):  # noqa: ARG002
        # `stream`: the results are written when run() returns (it waits), so any stream may read them.
        if not self._owned:
            raise BufferError("this hloc DeviceArray was already exported through DLPack")
        code, bits = DTYPES[self.element_type]
        ndim = len(self.shape)
        shape = (ctypes.c_int64 * max(ndim, 1))(*self.shape)
        m = DLManagedTensor()
        m.dl_tensor.data = self.address
        m.dl_tensor.device = DLDevice(kDLCUDA, 0)
        m.dl_tensor.ndim = ndim
        m.dl_tensor.dtype = DLDataType(code, bits, 1)
        m.dl_tensor.shape = ctypes.cast(shape, ctypes.POINTER(ctypes.c_int64))
        m.dl_tensor.strides = None  # row-major
        m.dl_tensor.byte_offset = 0
        m.deleter = _DELETE
        with _exported_lock:
            _exported[ctypes.addressof(m)] = (m, shape, self.address)
        self._owned = False
        return _api.PyCapsule_New(ctypes.addressof(m), b"dltensor", None)

    def numpy(self, dtype):
        """A host copy as numpy `dtype` (the executable's result dtype)."""
        if not self._owned:
            raise BufferError("this hloc DeviceArray was exported through DLPack; read it from its consumer")
        out = np.empty(self.shape, dtype)
        if self._lib.hloc_gpu_copy_to_host(self.address, out.nbytes, out.ctypes.data) != 0:
            raise RuntimeError(self._lib.hloc_last_error().decode("utf-8", "replace"))
        return out

    def __del__(self):
        if getattr(self, "_owned", False):
            self._lib.hloc_gpu_free(self.address)
            self._owned = False

    def __repr__(self):
        return "<hloc.DeviceArray %s%r on cuda:0>" % (self.element_type, list(self.shape))
