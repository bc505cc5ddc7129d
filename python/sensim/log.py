"""Reading sensim HDF5 logs through libsensim (sensim/log.h), without h5py."""
import numpy as np

from ._core import check, check_ptr, cstr, ffi, lib


class Log:
    """A sensim log opened for reading: ``Log(path).read("/sensors/imu/t")``."""

    def __init__(self, path):
        self.path = str(path)
        self._p = ffi.gc(check_ptr(lib.sensim_log_open(cstr(path))), lib.sensim_log_close)

    def __contains__(self, obj):
        return bool(lib.sensim_log_exists(self._p, cstr(obj)))

    def shape(self, dset):
        rank = ffi.new("int *")
        dims = ffi.new("size_t[]", lib.SENSIM_LOG_MAX_RANK)
        check(lib.sensim_log_shape(self._p, cstr(dset), rank, dims))
        return tuple(int(dims[i]) for i in range(rank[0]))

    def read(self, dset):
        """A numeric dataset as float64, in SI units (as the library reads it)."""
        shape = self.shape(dset)
        out = np.empty(shape, np.float64)
        if out.size:
            check(lib.sensim_log_read_f64(self._p, cstr(dset), 0, shape[0], ffi.from_buffer("double[]", out)))
        return out
