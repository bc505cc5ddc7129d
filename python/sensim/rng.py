"""Counter-based random streams (sensim/rng.h): a value is a pure function of
(seed, sensor, stream, index), so any slice of a stream can be drawn alone."""
import numpy as np

from ._core import array_in, cstr, ffi, lib, ptr


def sensor_id(name):
    """The 24-bit sensor id libsensim derives from a sensor's name (FNV-1a)."""
    return int(lib.sensim_rng_sensor_id(cstr(name)))


class Rng:
    """One random stream keyed by (seed, sensor, stream); `sensor` is an id or
    a sensor name. Draw methods take the first index and a count."""

    def __init__(self, seed, sensor=0, stream=0):
        if isinstance(sensor, str):
            sensor = sensor_id(sensor)
        self.seed, self.sensor, self.stream = int(seed), int(sensor), int(stream)
        self._r = ffi.new("sensim_rng *", lib.sensim_rng_make(self.seed, self.sensor, self.stream))

    def __repr__(self):
        return "Rng(seed=%d, sensor=%d, stream=%d)" % (self.seed, self.sensor, self.stream)

    def normal(self, n, first=0):
        """n standard normals (ziggurat) at indices first .. first+n-1."""
        out = np.empty(int(n), dtype=np.float64)
        lib.sensim_rng_normal_fill(self._r, first, out.size, ptr(out))
        return out

    def uniform(self, n, first=0):
        """n uniforms on (0, 1)."""
        out = np.empty(int(n), dtype=np.float64)
        lib.sensim_rng_uniform_fill(self._r, first, out.size, ptr(out))
        return out

    def normal_icdf(self, n, first=0):
        """n single-precision normals by inversion (the camera's temporal noise)."""
        out = np.empty(int(n), dtype=np.float32)
        lib.sensim_rng_normal_icdf_fill(self._r, first, out.size, ptr(out, "float"))
        return out

    def u32(self, n, first=0):
        """n raw 32-bit words."""
        return np.array([lib.sensim_rng_u32(self._r, first + i) for i in range(int(n))], dtype=np.uint32)

    def poisson(self, mean, first=0):
        """Exact Poisson draws, one per entry of `mean` (float32 array)."""
        mean = array_in(mean, "mean", np.float32)
        out = np.empty(mean.shape[0], dtype=np.uint32)
        lib.sensim_rng_poisson_exact_fill(self._r, first, out.size, ptr(mean, "float"), ptr(out, "uint32_t"))
        return out
