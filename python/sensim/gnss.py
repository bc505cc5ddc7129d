"""GNSS receiver noise on arrays (sensim/gnss.h); the only file that calls
sensim_gnss_*, so a change of the model contract is adapted here."""
from collections import namedtuple

import numpy as np

from ._core import array_in, check, check_ptr, ffi, finite_or_raise, lib, ptr
from .rig import Rig

GnssOutput = namedtuple("GnssOutput", "t t_sample epoch lla enu velocity hdop covariance fix")
GnssOutput.__doc__ = """Delivered epochs: t (delivery), t_sample, epoch index, lla [n,3] (deg, deg, m),
enu [n,3] m, velocity [n,3] m/s, hdop [n], covariance [n,3,3] m^2, fix [n] (SENSIM_GNSS_FIX_*)."""


class Gnss:
    """A GNSS model from a rig sensor of type gnss (its YAML keys), or from
    the defaults. ``Gnss.from_yaml(path_or_text, name)``."""

    def __init__(self, rig=None, name=None):
        p = ffi.new("sensim_gnss_params *", lib.sensim_gnss_default_params())
        if rig is not None:
            self._rig = Rig.from_source(rig)
            self.sensor = self._rig.sensor(name, type="gnss")
            check(lib.sensim_gnss_params_from_yaml(self.sensor._c.node, p))
            self.sensor_id = self.sensor.id
        else:
            self.sensor, self.sensor_id = None, 0
        # The seed enters at create (libsensim(3)): this model only validates;
        # each stream makes its own.
        self._params = p
        self._p = ffi.gc(check_ptr(lib.sensim_gnss_create(p, 0, self.sensor_id)), lib.sensim_gnss_destroy)

    @classmethod
    def from_yaml(cls, source, name=None):
        return cls(source, name)

    def stream(self, seed, t_on, sensor_id=None):
        return GnssStream(self, seed, t_on, self.sensor_id if sensor_id is None else sensor_id)

    def apply(self, t, position, velocity=None, *, seed, t_on=None, sensor_id=None):
        """Epochs at t[n] (s) of the true antenna position [n,3] (ENU m at the
        model's origin) and velocity [n,3] (m/s, or None for zero); power-on
        at t_on (default t[0]). Returns a GnssOutput of the delivered epochs."""
        t = array_in(t, "t")
        return self.stream(seed, t[0] if t_on is None and len(t) else (t_on or 0.0), sensor_id).apply(
            t, position, velocity)


class GnssStream:
    """A powered-on receiver: state carried across apply() calls."""

    def __init__(self, gnss, seed, t_on, sensor_id):
        self.gnss = gnss
        self._p = ffi.gc(check_ptr(lib.sensim_gnss_create(gnss._params, int(seed), int(sensor_id))),
                         lib.sensim_gnss_destroy)
        self._st = ffi.new("sensim_gnss_state *")
        lib.sensim_gnss_reset(self._p, self._st, float(t_on))

    def apply(self, t, position, velocity=None):
        t = array_in(t, "t")
        n = t.shape[0]
        finite_or_raise(t, "t")
        pos = array_in(position, "position", tail=(3,), n=n)
        finite_or_raise(pos, "position")
        vel = None if velocity is None else array_in(velocity, "velocity", tail=(3,), n=n)
        o = GnssOutput(np.empty(n), np.empty(n), np.empty(n, np.uint64), np.empty((n, 3)), np.empty((n, 3)),
                       np.empty((n, 3)), np.empty(n), np.empty((n, 3, 3)), np.empty(n, np.int8))
        out = ffi.new("sensim_gnss_out *")
        keep = [ptr(o.t), ptr(o.t_sample), ptr(o.epoch, "uint64_t"), ptr(o.lla), ptr(o.enu), ptr(o.velocity),
                ptr(o.hdop), ptr(o.covariance), ptr(o.fix, "int8_t")]
        (out.t, out.t_sample, out.epoch, out.lla, out.enu, out.velocity, out.hdop, out.covariance,
         out.fix) = keep
        k = lib.sensim_gnss_apply(self._p, self._st, n, ptr(t), ptr(pos), ptr(vel), out)
        return GnssOutput(*(a[:k] for a in o))
