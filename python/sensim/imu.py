"""IMU noise on arrays (sensim/imu.h); the only file that calls sensim_triax_*.
The model contract (libsensim(3)): the seed enters at create, so each run's
models are made from the rig's parameters with its seed."""
import numpy as np

from ._core import array_in, check_ptr, ffi, finite_or_raise, lib, ptr
from .rig import Rig

_INSTRUMENTS = (("gyro", lib.SENSIM_GYRO), ("accel", lib.SENSIM_ACCEL), ("mag", lib.SENSIM_MAG))


class Imu:
    """The gyroscope, accelerometer and magnetometer models of a rig sensor of
    type imu. ``Imu.from_yaml("rig.yaml", name="imu")``; then
    ``gyro, accel = imu.apply(t, gyro=w, accel=f, seed=7)``."""

    def __init__(self, rig, name=None):
        self._rig = Rig.from_source(rig)
        self.sensor = self._rig.sensor(name, type="imu")
        self._tx, self._kind = {}, dict(_INSTRUMENTS)
        for key, kind in _INSTRUMENTS:
            p = lib.sensim_imu_sensor_triax(self.sensor._c, kind)
            if p != ffi.NULL:
                self._tx[key] = p  # the rig's model, for its parameters

    @classmethod
    def from_yaml(cls, source, name=None):
        """From a rig file path or YAML text; `name` picks the sensor when the
        rig has more than one imu."""
        return cls(source, name)

    @property
    def instruments(self):
        return tuple(self._tx)

    @property
    def rate_hz(self):
        return self.sensor.rate_hz

    def stream(self, seed):
        """A run that continues across calls (consecutive blocks of samples)."""
        return ImuStream(self, seed)

    def apply(self, t, gyro=None, accel=None, mag=None, *, seed, specific_force=None, out=None):
        """Noisy readings for true values sampled at times t[n] (s, increasing):
        gyro, accel, mag are [n, 3] float64 arrays in the sensor frame (each
        optional; the rig must define the instrument). specific_force [n, 3]
        drives the gyro's g-sensitivity (default: accel, else zero), as
        `sensim inject` does for recorded data. Returns a tuple of arrays in
        the order gyro, accel, mag of those given: new ones, or those of `out`
        (a tuple of C-contiguous float64 [n, 3] arrays, one per instrument
        given; they may be the inputs themselves, for noise in place without
        new memory). The same bits as `sensim inject` with this seed on a log
        holding these clean values."""
        return ImuStream(self, seed).apply(t, gyro=gyro, accel=accel, mag=mag, specific_force=specific_force,
                                           out=out)


class ImuStream:
    """A run of an Imu: sample index and process states carried from one
    apply() to the next, so blocks give the same output as one call."""

    def __init__(self, imu, seed):
        self.imu = imu
        self.seed = int(seed)
        self._st, self._m = {}, {}
        name = imu.sensor.name.encode()
        for key, tx in imu._tx.items():
            m = lib.sensim_triax_create(lib.sensim_triax_params_of(tx), imu._kind[key], imu.rate_hz, self.seed,
                                        imu.sensor.id, name)
            self._m[key] = ffi.gc(check_ptr(m), lib.sensim_triax_destroy)
            s = ffi.new("sensim_triax_state *")
            lib.sensim_triax_reset(self._m[key], s)
            self._st[key] = s

    def apply(self, t, gyro=None, accel=None, mag=None, *, specific_force=None, out=None):
        """As Imu.apply, continuing this run."""
        t = array_in(t, "t")
        n = t.shape[0]
        finite_or_raise(t, "t")
        given = {"gyro": gyro, "accel": accel, "mag": mag}
        ins = []
        for key, _ in _INSTRUMENTS:
            u = given[key]
            if u is None:
                continue
            if key not in self.imu._tx:
                raise ValueError("sensor '%s' has no %s (instruments: %s)"
                                 % (self.imu.sensor.name, key, ", ".join(self.imu.instruments)))
            u = array_in(u, key, tail=(3,), n=n)
            finite_or_raise(u, key)
            ins.append((key, u))
        if specific_force is None:
            f = given["accel"] if given["accel"] is not None else np.zeros((n, 3))
            f = array_in(f, "accel", tail=(3,), n=n)
        else:
            f = array_in(specific_force, "specific_force", tail=(3,), n=n)
        if out is not None:
            out = tuple(out)
            if len(out) != len(ins):
                raise ValueError("out: %d arrays for %d instruments" % (len(out), len(ins)))
            for o, (key, _) in zip(out, ins):
                if not (isinstance(o, np.ndarray) and o.dtype == np.float64 and o.shape == (n, 3)
                        and o.flags.c_contiguous and o.flags.writeable):
                    raise ValueError("out: for %s expected a writable C-contiguous float64 array of shape (%d, 3)"
                                     % (key, n))
        if out is not None and any(np.may_share_memory(o, f) for o in out):
            f = f.copy()  # the gyro reads the clean specific force while accel is noised in place
        fptr = ptr(f)
        results = []
        # apply_set takes up to SENSIM_TRIAX_SET_MAX instruments; there are 3.
        c = len(ins)
        m = ffi.new("const sensim_triax *[3]")
        s = ffi.new("sensim_triax_state *[3]")
        u = ffi.new("const double *[3]")
        fp = ffi.new("const double *[3]")
        y = ffi.new("double *[3]")
        keep = []
        for i, (key, arr) in enumerate(ins):
            y_i = np.empty_like(arr) if out is None else out[i]
            m[i] = self._m[key]
            s[i] = self._st[key]
            pu, py = ptr(arr), ptr(y_i)
            keep += [pu, py]
            u[i] = pu
            y[i] = py
            fp[i] = fptr if key == "gyro" else ffi.NULL
            results.append(y_i)
        if c:
            lib.sensim_triax_apply_set(c, m, s, n, ptr(t), u, fp, y)
        return tuple(results)
