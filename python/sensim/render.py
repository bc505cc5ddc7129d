"""Rendering scans and frames into arrays (sensim/render.h): a scene file,
a lidar or camera from the scene's `sensors:` list (or a lidar preset), and
a pose or a trajectory; this file wraps the per-scan and per-frame calls.
Each sensor takes a ray caster, `backend=`: "embree" (default), "twin"
(sensim's own BVH traversal, the CPU twin of the GPU path), "cuda" (an
NVIDIA GPU through the driver alone; an error naming what is missing
without one) or "auto", as `sensim render --backend`."""
import numpy as np

from ._core import array_in, check, check_ptr, cstr, ffi, lib, ptr, text


class Scene:
    """A committed scene from a scene file (YAML; sensim-render(1))."""

    def __init__(self, path):
        self.path = str(path)
        self._p = ffi.gc(check_ptr(lib.sensim_scene_load(cstr(path))), lib.sensim_scene_destroy)
        self._prepared = set()

    def prepare(self, backend):
        """Builds what `backend` needs on this scene (the twin's BVH, its copy
        on the GPU); done once, and by scan()/render() when needed. Returns
        the backend that runs ("auto" resolved) and a note (the device, or
        why not the GPU)."""
        b = _backend(backend)
        if b not in self._prepared:
            check(lib.sensim_scene_prepare_backend(self._p, b))
            self._prepared.add(b)
        note = ffi.new("const char **")
        used = lib.sensim_scene_backend(self._p, b, note)
        return text(lib.sensim_render_backend_name(used)), text(note[0])

    @property
    def triangles(self):
        return int(lib.sensim_scene_triangle_count(self._p))

    @property
    def objects(self):
        return int(lib.sensim_scene_object_count(self._p))


class _Track:
    """A sensor's pose as a function of time: a fixed pose (position [3],
    quaternion [4] w, x, y, z) or a trajectory (t [n], position [n, 3],
    orientation [n, 4]); the sensor's mount composed on the right."""

    def __init__(self, pose, mount):
        if isinstance(pose, dict):
            t, pos, q = pose["t"], pose["position"], pose["orientation"]
        elif len(pose) == 3:
            t, pos, q = pose
        else:
            pos, q = pose
            t, pos, q = [0.0, 1.0], [pos, pos], [q, q]
        t = array_in(t, "t")
        pos = array_in(pos, "position", tail=(3,), n=t.shape[0])
        q = array_in(q, "orientation", tail=(4,), n=t.shape[0])
        self._p = ffi.gc(check_ptr(lib.sensim_pose_track_create(ptr(t), ptr(pos), ptr(q), t.shape[0], mount)),
                         lib.sensim_pose_track_destroy)
        self.fn = ffi.addressof(lib, "sensim_pose_track_eval")


def _backend(name):
    out = ffi.new("sensim_render_backend *")
    check(lib.sensim_render_backend_parse(cstr(name), out))
    return out[0]


def _sensor(path, name, kind):
    s = ffi.new("sensim_render_sensor *")
    check(lib.sensim_render_sensor_load(cstr(path), cstr(name), s))
    if s.type != kind:
        raise TypeError("sensor %r of %s is not a %s" % (name, path, "lidar" if kind == 1 else "camera"))
    return s


class _RenderSensor:
    """What RenderLidar and RenderCamera share: parameters, mount and
    backend, the C object (sensim_render_<kind>_create), loading from a
    scene and the pose track of a call."""
    _kind = None  # "lidar" or "camera"

    def __init__(self, params, mount=None, name=None, backend="embree"):
        self.name = name or self._kind
        self.backend = backend
        params.backend = _backend(backend)
        self._params = params
        self._mount = mount
        self._p = ffi.gc(check_ptr(getattr(lib, "sensim_render_%s_create" % self._kind)(params)),
                         getattr(lib, "sensim_render_%s_destroy" % self._kind))

    @classmethod
    def from_scene(cls, path, name, *, backend="embree"):
        kind = lib.SENSIM_SENSOR_LIDAR if cls._kind == "lidar" else lib.SENSIM_SENSOR_CAMERA
        s = _sensor(path, name, kind)
        return cls(ffi.new("sensim_render_%s_params *" % cls._kind, getattr(s, cls._kind)),
                   ffi.new("sensim_pose *", s.mount), text(s.name), backend)

    def _track(self, scene, pose):
        scene.prepare(self.backend)
        return _Track(pose, self._mount if self._mount is not None else ffi.NULL)


class RenderLidar(_RenderSensor):
    """A lidar to trace: ``RenderLidar.from_scene(scene_path, name)`` or
    ``RenderLidar.preset("vlp16", seed=1)``."""
    _kind = "lidar"

    @classmethod
    def preset(cls, preset, *, seed=0, sensor=0, backend="embree"):
        p = ffi.new("sensim_render_lidar_params *")
        check(lib.sensim_render_lidar_preset(cstr(preset), p))
        p.seed, p.sensor = int(seed), int(sensor)
        return cls(p, None, preset, backend)

    @property
    def rate_hz(self):
        return float(self._params.rate_hz)

    def scan(self, scene, pose=((0, 0, 0), (1, 0, 0, 0)), t_start=0.0, scan=0, noise=None, seed=None, first=0):
        """Traces scan number `scan` from t_start: a dict of arrays xyzi [n, 4],
        range, azimuth, elevation, channel, return_index, time_offset, object.
        noise: a sensim.Lidar model applied as `sensim inject` would to a log
        of the clean scan whose first point is row `first` (seed required)."""
        tr = self._track(scene, pose)
        pts = ffi.gc(check_ptr(lib.sensim_render_lidar_points_create(self._p)),
                     lib.sensim_render_lidar_points_destroy)
        check(lib.sensim_render_lidar_scan(self._p, scene._p, tr.fn, tr._p, t_start, scan, pts))
        if noise is not None:
            if seed is None:
                raise ValueError("noise needs an explicit seed")
            keep = np.empty(max(1, pts.count), np.uint8)
            check(lib.sensim_render_lidar_points_noise(pts, noise.model(int(seed)), first, ptr(keep, "uint8_t"),
                                                       ffi.NULL))
        n = pts.count

        def take(p, dtype, cols=1):
            if n == 0:
                return np.zeros((0, cols) if cols > 1 else 0, dtype)
            a = np.frombuffer(ffi.buffer(p, n * cols * np.dtype(dtype).itemsize), dtype=dtype).copy()
            return a.reshape(n, cols) if cols > 1 else a
        return {"xyzi": take(pts.xyzi, np.float32, 4), "range": take(pts.range, np.float32),
                "azimuth": take(pts.azimuth, np.float32), "elevation": take(pts.elevation, np.float32),
                "channel": take(pts.channel, np.uint16), "return_index": take(pts.return_index, np.uint8),
                "time_offset": take(pts.time_offset, np.float32), "object": take(pts.object, np.uint32)}


class RenderCamera(_RenderSensor):
    """A camera to render: ``RenderCamera.from_scene(scene_path, name)``."""
    _kind = "camera"

    @classmethod
    def default(cls, width=640, height=480, hfov=np.pi / 2, *, seed=0, backend="embree"):
        p = ffi.new("sensim_render_camera_params *", lib.sensim_render_camera_default_params())
        p.width, p.height, p.hfov, p.seed = width, height, hfov, int(seed)
        return cls(p, backend=backend)

    @property
    def shape(self):
        return (int(self._params.height), int(self._params.width), 3)

    def render(self, scene, pose=((0, 0, 0), (1, 0, 0, 0)), t=0.0, frame=0, out=None):
        """Frame number `frame` at time t: linear RGB float32 [H, W, 3],
        written straight into `out` when given."""
        if out is None:
            out = np.empty(self.shape, np.float32)
        elif out.shape != self.shape or out.dtype != np.float32 or not out.flags.c_contiguous:
            raise ValueError("out: expected a C-contiguous float32 array of shape %s" % (self.shape,))
        tr = self._track(scene, pose)
        check(lib.sensim_render_camera_render(self._p, scene._p, tr.fn, tr._p, t, frame, ptr(out, "float")))
        return out


def to_srgb8(rgb):
    """Linear [0, 1] float32 to 8-bit sRGB (what `sensim render` stores)."""
    rgb = np.ascontiguousarray(rgb, dtype=np.float32)
    out = np.empty(rgb.shape, np.uint8)
    lib.sensim_image_to_u8(ptr(rgb, "float"), rgb.size, ptr(out, "uint8_t"))
    return out
