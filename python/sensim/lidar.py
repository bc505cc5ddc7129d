"""Lidar noise on arrays (sensim/lidar.h); the only file that calls
sensim_lidar_* (the seed enters at create today)."""
from collections import namedtuple

import numpy as np

from ._core import array_in, check, check_ptr, ffi, lib, ptr
from .rig import Rig

LidarOutput = namedtuple("LidarOutput", "points range azimuth elevation keep kept")
LidarOutput.__doc__ = """points [n,4] float32 (x, y, z, intensity), range/azimuth/elevation [n] float32,
keep [n] bool (False for a dropped point: use points[keep]), kept (count)."""


class Lidar:
    """The noise model of a rig sensor of type lidar."""

    def __init__(self, rig, name=None):
        self._rig = Rig.from_source(rig)
        self.sensor = self._rig.sensor(name, type="lidar")
        self._params = lib.sensim_lidar_sensor_params(self.sensor._c)
        self._models = {}

    @classmethod
    def from_yaml(cls, source, name=None):
        return cls(source, name)

    def model(self, seed):
        """The C model for a seed (cached; for sensim.render)."""
        m = self._models.get(seed)
        if m is None:
            m = ffi.gc(check_ptr(lib.sensim_lidar_create(self._params, int(seed), self.sensor.id)),
                       lib.sensim_lidar_destroy)
            self._models = {seed: m}
        return m

    def apply(self, points, range=None, azimuth=None, elevation=None, *, seed, first=0):
        """Noise on points [n, 4] float32 (x, y, z, intensity; the sensor frame)
        with global indices first .. first+n-1 (their rows in the log's
        /sensors/NAME/points). Polar inputs optional (computed from x, y, z).
        Returns a LidarOutput; dropped points are kept in place and flagged."""
        pts = array_in(points, "points", np.float32, tail=(4,))
        n = pts.shape[0]
        pol = [None if a is None else array_in(a, nm, np.float32, n=n)
               for a, nm in ((range, "range"), (azimuth, "azimuth"), (elevation, "elevation"))]
        o = LidarOutput(np.empty_like(pts), np.empty(n, np.float32), np.empty(n, np.float32),
                        np.empty(n, np.float32), np.empty(n, np.bool_), 0)
        b = ffi.new("sensim_lidar_block *")
        b.n, b.first = n, int(first)
        b.points = ptr(pts, "float")
        keep = [ptr(a, "float") for a in pol]
        b.range, b.azimuth, b.elevation = keep
        outs = [ptr(o.points, "float"), ptr(o.range, "float"), ptr(o.azimuth, "float"),
                ptr(o.elevation, "float"), ptr(o.keep, "uint8_t")]
        b.points_out, b.range_out, b.azimuth_out, b.elevation_out, b.keep = outs
        kept = ffi.new("size_t *")
        check(lib.sensim_lidar_apply(self.model(int(seed)), b, kept))
        return o._replace(kept=int(kept[0]))
