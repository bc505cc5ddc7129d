"""Rigs (sensim/rig.h): a seed and sensors loaded from YAML, and `inject`
on HDF5 logs. Model wrappers (Imu, Gnss, ...) take their parameters from a
rig sensor, so that a rig file means the same in Python as in `sensim inject`."""
import os

from ._core import check, check_ptr, cstr, ffi, lib, text


def _looks_like_yaml(source):
    return isinstance(source, str) and ("\n" in source or source.lstrip().startswith(("{", "seed:", "sensors:")))


class Sensor:
    """One sensor of a rig: name, type, id (the random-stream key), rate_hz."""

    def __init__(self, rig, c):
        self._rig = rig  # keeps the rig (and the borrowed sensor) alive
        self._c = c
        self.name = text(c.name)
        self.type = text(c.type.type)
        self.id = int(c.id)
        self.rate_hz = float(c.rate_hz)

    def __repr__(self):
        return "Sensor(%r, type=%r, id=%d, rate_hz=%g)" % (self.name, self.type, self.id, self.rate_hz)


class Rig:
    """A rig file or YAML text. ``Rig(path)`` or ``Rig.from_string(text)``;
    errors name the file, line and key."""

    def __init__(self, path=None, _ptr=None):
        if _ptr is None:
            _ptr = check_ptr(lib.sensim_rig_load(cstr(path)))
        self._p = ffi.gc(_ptr, lib.sensim_rig_free)
        self.sensors = [Sensor(self, self._p.sensors + i) for i in range(self._p.nsensors)]

    @classmethod
    def from_string(cls, text_, name="<string>"):
        return cls(_ptr=check_ptr(lib.sensim_rig_load_string(text_.encode(), cstr(name))))

    @classmethod
    def from_source(cls, source):
        """A Rig, YAML text or a path."""
        if isinstance(source, Rig):
            return source
        if _looks_like_yaml(source):
            return cls.from_string(source)
        return cls(os.fspath(source))

    @property
    def seed(self):
        """The rig file's seed."""
        return int(self._p.seed)

    def sensor(self, name=None, type=None):
        """The sensor called `name`, or the only one of `type`."""
        if name is not None:
            c = lib.sensim_rig_find(self._p, cstr(name))
            if c == ffi.NULL:
                raise KeyError("rig has no sensor %r (sensors: %s)" % (name, ", ".join(s.name for s in self.sensors)))
            s = next(s for s in self.sensors if s.name == name)
        else:
            cand = [s for s in self.sensors if type is None or s.type == type]
            if len(cand) != 1:
                raise KeyError("rig has %d sensors of type %r; name one (sensors: %s)"
                               % (len(cand), type, ", ".join("%s (%s)" % (s.name, s.type) for s in self.sensors)))
            s = cand[0]
        if type is not None and s.type != type:
            raise TypeError("sensor %r is of type %r, not %r" % (s.name, s.type, type))
        return s

    def inject(self, in_path, out_path, seed=None, threads=0, block=0):
        """Writes out_path: in_path's ground truth and /sensors/<name>/ for every
        sensor (what `sensim inject` writes). seed: the rig's when None.
        Returns the warnings the run reported."""
        warnings = []

        @ffi.callback("void(void *, const char *)")
        def warn(ctx, msg):
            warnings.append(text(msg))

        o = ffi.new("sensim_inject_opts *")
        o.seed = self.seed if seed is None else int(seed)
        o.threads = threads
        o.block = block
        o.warn = warn
        check(lib.sensim_rig_inject(self._p, o, cstr(in_path), cstr(out_path)))
        return warnings


def inject(rig, in_path, out_path, seed=None, threads=0, block=0):
    """Applies every sensor of `rig` (a Rig, a path or YAML text) to a log."""
    return Rig.from_source(rig).inject(in_path, out_path, seed=seed, threads=threads, block=block)
