"""Datasheet figures to model parameters. Units go through the library's
parser (sensim/units.h: "0.66 deg/sqrt(h)", "25 ug/sqrt(Hz)", "14.5 deg/h").
The IMU datasheet conversion itself is the `sensim datasheet` verb's today
(issue 12 moves it into the library); until then `datasheet()` runs the
program and returns its JSON, and this file is the one place to switch to
the library call."""
import json
import os
import shutil
import subprocess
import tempfile

from ._core import InvalidError, check, cstr, ffi, lib, text


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


def _program():
    p = os.environ.get("SENSIM_BIN")
    if p:
        return p
    here = os.path.dirname(os.path.abspath(__file__))
    for cand in (os.path.join(here, "..", "..", "sensim"), shutil.which("sensim")):
        if cand and os.access(cand, os.X_OK) and os.path.isfile(cand):
            return cand
    raise FileNotFoundError("the sensim program is needed for datasheet(): set SENSIM_BIN or put sensim on PATH")


def datasheet(figures=None, *, preset=None, name="imu", seed=1):
    """IMU datasheet figures (keys as `sensim datasheet`'s options with '_':
    arw, gyro_bias_instability, vrw, accel_noise_density, rate, ...; values
    with their units) to model parameters. Returns the conversion as a dict
    (figures with each factor, "model" in SI, "warnings") and the rig YAML
    under "rig_yaml", which Imu.from_yaml takes. Errors name the figure."""
    args = [_program(), "datasheet", "--json", "--name", name, "--seed", str(int(seed))]
    if preset is not None:
        args += ["--preset", str(preset)]
    for k, v in (figures or {}).items():
        args += ["--" + k.replace("_", "-"), str(v)]
    with tempfile.TemporaryDirectory() as d:
        rig = os.path.join(d, "rig.yaml")
        p = subprocess.run(args + ["-o", rig], capture_output=True, text=True)
        if p.returncode != 0:
            msg = [line for line in p.stderr.strip().splitlines() if line.startswith("sensim datasheet: ")]
            raise InvalidError("SENSIM_EINVAL", msg[0][len("sensim datasheet: "):] if msg else p.stderr.strip())
        out = json.loads(p.stdout)
        with open(rig) as f:
            out["rig_yaml"] = f.read()
    return out
