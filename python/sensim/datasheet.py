"""Datasheet figures to model parameters, through the library
(sensim/datasheet.h: the conversion `sensim datasheet` prints). Units go
through the library's parser (sensim/units.h: "0.66 deg/sqrt(h)",
"25 ug/sqrt(Hz)", "14.5 deg/h")."""
import os

from ._core import check, cstr, ffi, lib, text

_MODEL_KEYS = ("noise_density", "bias_instability", "random_walk", "range", "quantization")


def quantity(value, unit=None):
    """A quantity in SI: ``quantity("0.66 deg/sqrt(h)")`` -> (value, "rad/s^(1/2)"
    style dimension text); with `unit` (an SI or other unit, "rad/s/sqrt(Hz)"),
    the value converted to SI after checking it has that unit's dimension
    (a bare number is taken in `unit`), returned as a float."""
    si = ffi.new("double *")
    if unit is None:
        dim, has = ffi.new("sensim_dim *"), ffi.new("int *")
        check(lib.sensim_units_parse(cstr(value), si, dim, has))
        buf = ffi.new("char[]", 64)
        return si[0], text(lib.sensim_dim_format(dim[0], buf, 64))
    scale, dim = ffi.new("double *"), ffi.new("sensim_dim *")
    check(lib.sensim_units_unit(cstr(unit), scale, dim))
    try:
        float(value)
        return float(value) * scale[0]
    except (TypeError, ValueError):
        pass
    check(lib.sensim_units_convert(cstr(value), dim[0], si))
    return si[0]


def from_si(value, unit):
    """An SI value expressed in `unit` ("deg/h", "ug/sqrt(Hz)", ...)."""
    out = ffi.new("double *")
    check(lib.sensim_units_from_si(value, cstr(unit), out))
    return out[0]


def _figure_index():
    return {text(lib.sensim_datasheet_figures[i].opt): i for i in range(lib.SENSIM_DATASHEET_NFIG)}


def _rig_yaml(d):
    f = lib.tmpfile()
    if f == ffi.NULL:
        raise OSError("datasheet: cannot create a temporary file")
    try:
        check(lib.sensim_datasheet_write_rig(d, f))
        n = lib.ftell(f)
        lib.rewind(f)
        buf = ffi.new("char[]", max(n, 1))
        got = lib.fread(buf, 1, n, f)
        return ffi.unpack(buf, got).decode("utf-8")
    finally:
        lib.fclose(f)


def datasheet(figures=None, *, preset=None, name="imu", seed=1):
    """IMU datasheet figures (keys as `sensim datasheet`'s options with '_':
    arw, gyro_bias_instability, vrw, accel_noise_density, rate, ...; values
    a number with its unit, a bare number being in the datasheet unit the
    option's help shows) to model parameters. Returns the conversion as a
    dict with the keys of `sensim datasheet --json` (figures with each
    factor, "model" in SI, "warnings") and, when the rate is given, the rig
    YAML under "rig_yaml", which Imu.from_yaml takes. Errors name the figure
    (--arw) or the preset's file:line:key."""
    d = ffi.new("sensim_datasheet *", lib.sensim_datasheet_default())
    if preset is not None:
        check(lib.sensim_datasheet_load_preset(d, cstr(os.fspath(preset))))
    index = _figure_index()
    for k, v in (figures or {}).items():
        opt = k.replace("_", "-")
        if opt not in index:
            raise KeyError("datasheet: unknown figure '%s' (known: %s)" % (k, ", ".join(sorted(index))))
        check(lib.sensim_datasheet_set(d, index[opt], cstr(str(v)), cstr("--" + opt)))
    name = str(name)
    if not name or len(name.encode()) >= len(d.name):
        raise ValueError("datasheet: name must be 1 to %d bytes" % (len(d.name) - 1))
    d.name = name.encode()
    d.seed = int(seed)
    warn = ffi.new("char[]", 2048)
    if not lib.sensim_datasheet_resolve(d, warn, 2048):
        raise ValueError("datasheet: no datasheet figures given")
    figs = []
    for i in range(lib.SENSIM_DATASHEET_NFIG):
        f, defn = d.f[i], lib.sensim_datasheet_figures[i]
        if not f.set:
            continue
        mk = text(defn.model_key)
        key = None
        if f.used:
            key = "%s.%s" % (text(defn.block), mk) if defn.block != ffi.NULL else mk
        figs.append({"figure": text(defn.opt), "given": text(f.given), "source": text(f.source),
                     "factor": f.scale, "si": f.si, "unit": text(defn.si_unit),
                     "model_si": lib.sensim_datasheet_model_si(defn.model_key, f.si), "key": key})
    model = {}
    rate = d.f[lib.SENSIM_DATASHEET_RATE]
    if rate.set:
        model["rate_hz"] = rate.si
    for block in ("gyro", "accel"):
        vals = {}
        for mk in _MODEL_KEYS:
            v = lib.sensim_datasheet_model_value(d, cstr(block), cstr(mk))
            if v != ffi.NULL:
                vals[mk] = lib.sensim_datasheet_model_si(cstr(mk), v.si)
        if vals:
            model[block] = vals
    out = {"sensor": text(d.name), "part": text(d.part), "datasheet": text(d.datasheet), "figures": figs,
           "model": model, "warnings": [w for w in text(warn).split("\n") if w]}
    if rate.set:
        out["rig_yaml"] = _rig_yaml(d)
    return out
