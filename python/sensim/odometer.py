"""Odometer and encoder noise on arrays (sensim/odometer.h); the only file that
calls sensim_odometer_* and sensim_encoder_*."""
import numpy as np

from ._core import array_in, check, check_ptr, ffi, finite_or_raise, lib, ptr
from .rig import Rig


class _WheelModel:
    """What Odometer and Encoder share: the parameters of a rig sensor of
    their type (or the defaults), checked by creating the model once."""

    _KIND = None  # "odometer" or "encoder": the sensim_<kind>_* functions used

    def _fn(self, verb):
        return getattr(lib, "sensim_%s_%s" % (self._KIND, verb))

    def __init__(self, rig=None, name=None):
        p = ffi.new("sensim_%s_params *" % self._KIND, self._fn("default_params")())
        self.sensor_id = 0
        if rig is not None:
            self._rig = Rig.from_source(rig)
            self.sensor = self._rig.sensor(name, type=self._KIND)
            check(self._fn("params_from_yaml")(self.sensor._c.node, p))
            self.sensor_id = self.sensor.id
        # The seed enters at create (libsensim(3)): this model only validates.
        self._params = p
        self._p = self._create(0, self.sensor_id)

    @classmethod
    def from_yaml(cls, source, name=None):
        return cls(source, name)

    def _create(self, seed, sensor_id):
        return ffi.gc(check_ptr(self._fn("create")(self._params, int(seed), int(sensor_id))), self._fn("destroy"))

    @staticmethod
    def _series(t, x, name):
        """t[n] (s) and x[n] (name) as float64 arrays of the same length,
        both finite (the errors name the array and row)."""
        t = array_in(t, "t")
        x = array_in(x, name, n=t.shape[0])
        finite_or_raise(t, "t")
        finite_or_raise(x, name)
        return t, x

    def _run(self, seed, sensor_id):
        """A model of this seed and sensor (default: this one's), reset."""
        m = self._create(seed, self.sensor_id if sensor_id is None else sensor_id)
        st = ffi.new("sensim_%s_state *" % self._KIND)
        self._fn("reset")(m, st)
        return m, st


class Odometer(_WheelModel):
    """A wheel odometer from a rig sensor of type odometer (or the defaults)."""

    _KIND = "odometer"

    def apply_speed(self, t, speed, *, seed, sensor_id=None):
        """Distance [n] (m) from the forward ground speed [n] (m/s) at t[n]."""
        t, v = self._series(t, speed, "speed")
        out = np.empty_like(v)
        m, st = self._run(seed, sensor_id)
        lib.sensim_odometer_apply_speed(m, st, t.shape[0], ptr(t), ptr(v), ptr(out))
        return out

    def apply_angle(self, angle, *, seed, sensor_id=None):
        """Distance [n] (m) from the unwrapped wheel angle [n] (rad)."""
        a = array_in(angle, "angle")
        finite_or_raise(a, "angle")
        out = np.empty_like(a)
        m, st = self._run(seed, sensor_id)
        lib.sensim_odometer_apply_angle(m, st, a.shape[0], ptr(a), ptr(out))
        return out


class Encoder(_WheelModel):
    """A rotary or linear encoder from a rig sensor of type encoder (or the defaults)."""

    _KIND = "encoder"

    def apply(self, t, position, *, seed, sensor_id=None):
        """(reading [n], speed [n]) for the true position [n] (rad or m) at t[n]."""
        t, u = self._series(t, position, "position")
        m, st = self._run(seed, sensor_id)
        pos, spd = np.empty_like(u), np.empty_like(u)
        lib.sensim_encoder_apply(m, st, u.shape[0], ptr(t), ptr(u), ptr(pos), ptr(spd))
        self.overruns = int(st.overruns)
        return pos, spd
