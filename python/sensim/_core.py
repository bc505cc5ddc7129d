"""The cffi handle, the exceptions and the array checks every wrapper shares."""
import numpy as np

from ._sensim import ffi, lib

__all__ = ["ffi", "lib", "SensimError", "check", "check_ptr", "array_in", "ptr", "cstr", "text"]


class SensimError(Exception):
    """A libsensim call failed. ``str(e)`` is sensim_last_error()'s message
    (file, line, key, dataset or index where the library knows them);
    ``e.status`` the sensim_status name ("SENSIM_EINVAL", ...)."""

    def __init__(self, status, message):
        super().__init__(message)
        self.status = status
        self.message = message


class InvalidError(SensimError, ValueError):
    """SENSIM_EINVAL: a bad argument or parameter."""


class FormatError(SensimError, ValueError):
    """SENSIM_EFORMAT: malformed input (YAML syntax, HDF5 type or shape)."""


class DataError(SensimError, ValueError):
    """SENSIM_EDATA: unusable values (NaN, times not increasing, too few samples)."""


class NotFoundError(SensimError, LookupError):
    """SENSIM_ENOTFOUND: a dataset, key, sensor, topic or file is missing."""


class IOFailure(SensimError, OSError):
    """SENSIM_EIO: a file cannot be opened, read, written or renamed."""


class UnsupportedError(SensimError, NotImplementedError):
    """SENSIM_EUNSUPPORTED: valid input this build cannot handle."""


class InternalError(SensimError, RuntimeError):
    """SENSIM_EINTERNAL (a dependency failed) or SENSIM_ENOMEM."""


_BY_STATUS = {
    lib.SENSIM_EINVAL: ("SENSIM_EINVAL", InvalidError),
    lib.SENSIM_ENOMEM: ("SENSIM_ENOMEM", InternalError),
    lib.SENSIM_EIO: ("SENSIM_EIO", IOFailure),
    lib.SENSIM_EFORMAT: ("SENSIM_EFORMAT", FormatError),
    lib.SENSIM_ENOTFOUND: ("SENSIM_ENOTFOUND", NotFoundError),
    lib.SENSIM_EDATA: ("SENSIM_EDATA", DataError),
    lib.SENSIM_EUNSUPPORTED: ("SENSIM_EUNSUPPORTED", UnsupportedError),
    lib.SENSIM_EINTERNAL: ("SENSIM_EINTERNAL", InternalError),
}


def text(p):
    """A C string (borrowed) as str; '' for NULL."""
    return "" if p == ffi.NULL else ffi.string(p).decode("utf-8", "replace")


def error(status=None):
    """The exception for a failed call, carrying the thread's last message."""
    if status is None:
        status = lib.sensim_last_status()
    name, cls = _BY_STATUS.get(int(status), ("SENSIM_EINTERNAL", InternalError))
    msg = text(lib.sensim_last_error()) or text(lib.sensim_strerror(status))
    return cls(name, msg)


def check(status):
    """Raises the library's error for a non-zero sensim_status."""
    if status != lib.SENSIM_OK:
        raise error(status)


def check_ptr(p):
    """Raises the library's error when a constructor returned NULL."""
    if p == ffi.NULL:
        raise error()
    return p


def cstr(s):
    """A str or path for a const char * argument."""
    import os
    return os.fsencode(s)


def array_in(x, name, dtype=np.float64, tail=(), n=None, ndim_min=None):
    """x as a C-contiguous array of `dtype` with trailing shape `tail`
    (and n rows when given), without copying when it already is one.
    An ndarray of another dtype is refused (TypeError: no silent
    conversions); sequences are converted."""
    dtype = np.dtype(dtype)
    if isinstance(x, np.ndarray):
        if x.dtype != dtype:
            raise TypeError("%s: dtype %s; expected %s" % (name, x.dtype, dtype))
    else:
        x = np.asarray(x, dtype=dtype)
    tail = tuple(tail)
    if x.ndim != 1 + len(tail) or tuple(x.shape[1:]) != tail:
        want = "[n%s]" % "".join(", %d" % d for d in tail)
        raise ValueError("%s: shape %s; expected %s" % (name, tuple(x.shape), want))
    if n is not None and x.shape[0] != n:
        raise ValueError("%s: %d rows; expected %d (as the other arrays)" % (name, x.shape[0], n))
    return np.ascontiguousarray(x)


def ptr(x, ctype="double"):
    """A C pointer into a NumPy array's own memory (no copy); NULL for None."""
    if x is None:
        return ffi.NULL
    return ffi.from_buffer(ctype + "[]", x, require_writable=False)


def finite_or_raise(x, name):
    """Raises DataError naming the first non-finite row of x (one vectorized
    sum on the fast path: a NaN or infinity makes the sum non-finite)."""
    if np.isfinite(np.add.reduce(x, axis=None)):
        return
    bad = ~np.isfinite(x)
    if not bad.any():
        return  # the sum overflowed; every value is finite
    row = int(np.argmax(bad.reshape(x.shape[0], -1).any(axis=1)))
    raise DataError("SENSIM_EDATA", "%s: value at row %d is not finite" % (name, row))


FLAG_NAMES = {lib.SENSIM_FIT_OK: "ok", lib.SENSIM_FIT_UPPER: "upper_bound", lib.SENSIM_FIT_UNRESOLVED: "unresolved"}
