"""Camera pixel noise on arrays (sensim/camera.h), with the rig's lens
remap (a camera with `lens: fov` takes pinhole frames of the same hfov
through Chrono's FOV lens first, one with a radtan or kannala_brandt lens
the undistorted pinhole frames of its fx, fy, cx, cy through the
distortion, as `sensim inject` does); the only file that calls
sensim_camera_* and sensim_remap_*."""
import numpy as np

from ._core import check, check_ptr, ffi, lib, ptr
from .rig import Rig

_PIXEL = {np.dtype(np.uint8): lib.SENSIM_PIXEL_U8, np.dtype(np.uint16): lib.SENSIM_PIXEL_U16,
          np.dtype(np.float32): lib.SENSIM_PIXEL_F32}


class Camera:
    """The noise model of a rig sensor of type camera.
    ``Camera.from_yaml(rig, name).apply(frames, seed=7)``."""

    def __init__(self, rig, name=None):
        self._rig = Rig.from_source(rig)
        self.sensor = self._rig.sensor(name, type="camera")
        fov = ffi.new("int *")
        self._params = lib.sensim_camera_sensor_params(self.sensor._c, fov)
        self.fov_lens = bool(fov[0])
        self.hfov = None
        self._lens = None
        if self.fov_lens:
            self._lens = ffi.new("sensim_lens *")
            scratch = ffi.new("sensim_camera_params *", self._params[0])
            check(lib.sensim_camera_params_from_yaml(self.sensor._c.node, scratch, self._lens))
            self.hfov = self._lens.hfov or None
        self._cache = {}
        self._remaps = {}

    @classmethod
    def from_yaml(cls, source, name=None):
        return cls(source, name)

    def _model(self, h, w, c, seed):
        key = (h, w, c, seed)
        m = self._cache.get(key)
        if m is None:
            p = ffi.new("sensim_camera_params *", self._params[0])
            p.width, p.height, p.channels = w, h, c
            m = ffi.gc(check_ptr(lib.sensim_camera_create(p, seed, self.sensor.id)), lib.sensim_camera_destroy)
            self._cache = {key: m}  # the fixed-pattern maps are frame-sized: keep one
        return m

    def _remap(self, h, w):
        """The pinhole -> lens remap for h x w frames (kept per size)."""
        key = (h, w)
        rm = self._remaps.get(key)
        if rm is None:
            rm = ffi.gc(check_ptr(lib.sensim_lens_remap_from_pinhole(self._lens, w, h)), lib.sensim_remap_destroy)
            self._remaps = {key: rm}
        return rm

    def apply(self, frames, *, seed, first_frame=0, out=None):
        """Noisy copies of frames [N, H, W] or [N, H, W, C] (C 1 or 3; uint8,
        uint16 or float32), frame k taking noise index first_frame + k, as
        `sensim inject` numbers the frames of a log. out may be frames itself.
        With `lens: fov` each frame is first remapped from a pinhole of the
        lens's hfov to the FOV lens (bilinear, 0 outside), as inject does;
        with a radtan or kannala_brandt lens, from the pinhole of its fx, fy,
        cx, cy through the distortion.
        float32 frames must be finite (ValueError naming the pixel)."""
        if not isinstance(frames, np.ndarray):
            raise TypeError("frames: expected a NumPy array of uint8, uint16 or float32")
        if frames.dtype not in _PIXEL:
            raise TypeError("frames: dtype %s; expected uint8, uint16 or float32" % frames.dtype)
        if frames.ndim not in (3, 4) or (frames.ndim == 4 and frames.shape[3] not in (1, 3)):
            raise ValueError("frames: shape %s; expected [N, H, W] or [N, H, W, C] with C 1 or 3"
                             % (frames.shape,))
        frames = np.ascontiguousarray(frames)
        if frames.dtype == np.float32 and not np.isfinite(frames).all():
            bad = np.argwhere(~np.isfinite(frames))[0]
            raise ValueError("frames: frame %d, row %d, column %d is %s" % (
                bad[0], bad[1], bad[2], "NaN" if np.isnan(frames[tuple(bad)]) else "infinite"))
        n, h, w = frames.shape[:3]
        c = frames.shape[3] if frames.ndim == 4 else 1
        if out is None:
            out = np.empty_like(frames)
        elif out.shape != frames.shape or out.dtype != frames.dtype or not out.flags.c_contiguous:
            raise ValueError("out: must be a C-contiguous array of the frames' shape and dtype")
        m = self._model(h, w, c, int(seed))
        kind = _PIXEL[frames.dtype]
        fsz = h * w * c
        fi = frames.reshape(n, fsz)
        fo = out.reshape(n, fsz)
        if self.fov_lens:
            rm = self._remap(h, w)
            tmp = np.empty(fsz, dtype=frames.dtype)
            for k in range(n):
                check(lib.sensim_remap_apply(rm, kind, c, 0.0, ptr(fi[k], "char"), ptr(tmp, "char")))
                check(lib.sensim_camera_apply(m, first_frame + k, kind, ptr(tmp, "char"), ptr(fo[k], "char")))
            return out
        for k in range(n):
            check(lib.sensim_camera_apply(m, first_frame + k, kind, ptr(fi[k], "char"), ptr(fo[k], "char")))
        return out
