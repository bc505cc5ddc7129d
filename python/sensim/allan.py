"""Allan-family deviations with confidence intervals (sensim/allan.h)."""
import numpy as np

from ._core import array_in, check, cstr, ffi, lib, ptr

#: Power-law noise names by alpha (S_y(f) ~ f^alpha) for rate data; in IMU
#: terms white FM is angle/velocity random walk, flicker FM bias instability,
#: random-walk FM rate random walk, white PM quantization.
NOISE_TYPES = {2: "white PM", 1: "flicker PM", 0: "white FM", -1: "flicker FM", -2: "random walk FM",
               -3: "flicker walk FM", -4: "random run FM", int(lib.SENSIM_ALLAN_ALPHA_UNKNOWN): "unknown"}

_PT = ffi.sizeof("sensim_allan_point")
POINT_DTYPE = np.dtype({
    "names": ["tau", "dev", "lo", "hi", "edf", "m", "n", "alpha"],
    "formats": [np.float64] * 5 + [np.uintp, np.uintp, np.intc],
    "offsets": [ffi.offsetof("sensim_allan_point", f) for f in ("tau", "dev", "lo", "hi", "edf", "m", "n", "alpha")],
    "itemsize": _PT,
})


class AllanResult:
    """Deviation curve(s): arrays tau, dev, lo, hi, edf, m, n, alpha (views of
    the library's output, no copies), noise (type names per point). For
    several axes each array is [axes, points]."""

    def __init__(self, points, dev, data, tau0, confidence):
        self.points = points
        self.dev_name, self.data, self.tau0, self.confidence = dev, data, tau0, confidence
        for f in POINT_DTYPE.names:
            setattr(self, f, points[f])

    @property
    def noise(self):
        return np.vectorize(lambda a: NOISE_TYPES.get(int(a), "unknown"), otypes=[object])(self.alpha)

    def __len__(self):
        return self.points.shape[-1]

    def axis(self, a):
        """One axis of a multi-axis result."""
        return AllanResult(self.points[a], self.dev_name, self.data, self.tau0, self.confidence)

    def __repr__(self):
        return "AllanResult(%s, %s points, tau %g..%g s)" % (self.dev_name, self.points.shape, self.tau.min(),
                                                            self.tau.max())


def _dev(dev):
    d = ffi.new("sensim_allan_dev *")
    check(lib.sensim_allan_dev_parse(cstr(dev), d))
    return d[0]


def taus(n, dev="oadev", data="freq", grid="octave"):
    """The averaging factors m of a grid ("octave", "decade", "all", "log:N")
    for n samples."""
    g, pd = ffi.new("sensim_allan_grid *"), ffi.new("int *")
    check(lib.sensim_allan_grid_parse(cstr(grid), g, pd))
    mp, cnt = ffi.new("size_t **"), ffi.new("size_t *")
    check(lib.sensim_allan_taus(g[0], pd[0], _dev(dev), _data(data), n, mp, cnt))
    try:
        return np.frombuffer(ffi.buffer(mp[0], cnt[0] * ffi.sizeof("size_t")), dtype=np.uintp).copy()
    finally:
        lib.free(mp[0])


def _data(data):
    if data not in ("freq", "phase"):
        raise ValueError("data: %r; expected 'freq' or 'phase'" % (data,))
    return lib.SENSIM_ALLAN_FREQ if data == "freq" else lib.SENSIM_ALLAN_PHASE


def allan(x, rate=None, *, tau0=None, dev="oadev", data="freq", grid="octave", m=None, confidence=None,
          alpha=None):
    """Deviations of x [n] or [n, axes] (float64; axes interleaved as rows,
    e.g. an [n, 3] gyro array) sampled at `rate` Hz (or every tau0 s).
    dev: adev, oadev, mdev, hdev, ohdev, tdev, totdev; data: freq (rates) or
    phase; grid of averaging factors, or m explicitly; confidence: the
    two-sided level of the intervals (default one sigma); alpha: a fixed noise
    exponent for the intervals instead of identifying it per tau.
    The same numbers as `sensim allan` on the same samples."""
    if (rate is None) == (tau0 is None):
        raise ValueError("give rate (Hz) or tau0 (s)")
    x = x if isinstance(x, np.ndarray) else np.asarray(x, dtype=np.float64)
    x = array_in(x, "x", tail=x.shape[1:] if x.ndim == 2 else ())
    naxes = 1 if x.ndim == 1 else x.shape[1]
    o = ffi.new("sensim_allan_opts *", lib.sensim_allan_default_opts())
    o.dev, o.data = _dev(dev), _data(data)
    o.tau0 = float(tau0) if tau0 is not None else 1.0 / float(rate)
    if confidence is not None:
        o.confidence = confidence
    if alpha is not None:
        o.fixed_alpha, o.alpha = 1, int(alpha)
    if m is None:
        m = taus(x.shape[0], dev, data, grid)
    else:
        m = array_in(np.asarray(m, dtype=np.uintp), "m", np.uintp)
    pts = np.zeros((naxes, len(m)), dtype=POINT_DTYPE)
    out = ffi.cast("sensim_allan_point *", ffi.from_buffer(pts))
    if x.ndim == 1:
        check(lib.sensim_allan_compute(ptr(x), x.shape[0], 1, o, ptr(m, "size_t"), len(m), out))
        pts = pts[0]
    else:
        check(lib.sensim_allan_compute_axes(ptr(x), x.shape[0], naxes, o, ptr(m, "size_t"), len(m), out))
    return AllanResult(pts, dev, data, o.tau0, o.confidence)
