"""Shared fixtures: the sensim program (SENSIM_BIN), the checkout
(SENSIM_SRCDIR), and helpers that run the CLI and write logs with h5py (data
made independently of the library under test)."""
import json
import os
import subprocess

import pytest

SRCDIR = os.environ.get("SENSIM_SRCDIR") or os.path.dirname(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__))))
BIN = os.environ.get("SENSIM_BIN") or os.path.join(SRCDIR, "build", "sensim")


def run(*args, ok=True):
    """Runs `sensim args...`; returns stdout (checks the exit status)."""
    p = subprocess.run([BIN] + [str(a) for a in args], capture_output=True, text=True)
    if ok and p.returncode != 0:
        raise AssertionError("sensim %s: exit %d\n%s" % (" ".join(map(str, args)), p.returncode, p.stderr))
    return p


def run_json(*args):
    return json.loads(run(*args).stdout)


@pytest.fixture
def cli():
    return run


@pytest.fixture
def srcdir():
    return SRCDIR


UNITS = {"t": "s", "angular_velocity": "rad/s", "specific_force": "m/s^2", "magnetic_field": "T",
         "points": "1", "range": "m", "azimuth": "rad", "elevation": "rad", "scan_offset": "1", "image": "1"}


def write_log(path, sensors=None, seconds=2.0, rate=100.0):
    """A log: a static ground truth from `sensim trajectory`, then
    /sensors/<name>/<dset> arrays added with h5py (the DESIGN.md layout)."""
    import h5py
    run("trajectory", "--shape", "static", "--duration", seconds, "--rate", rate, "-o", path)
    with h5py.File(path, "a") as f:
        for name, dsets in (sensors or {}).items():
            g = f.create_group("sensors/" + name)
            for k, v in dsets.items():
                g[k] = v
                g[k].attrs["units"] = UNITS.get(k, "1")
    return path


def read(path, dset):
    import h5py
    with h5py.File(path, "r") as f:
        return f[dset][()]
