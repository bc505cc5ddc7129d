"""The README's Python example and the two example scripts run as written."""
import os
import re
import subprocess
import sys

import sensim
from conftest import SRCDIR, run


def _env():
    """This process's sensim for the child processes, whatever the cwd."""
    pkg = os.path.dirname(os.path.dirname(os.path.abspath(sensim.__file__)))
    return dict(os.environ, MPLBACKEND="Agg", PYTHONPATH=pkg)


def test_readme_python_block(tmp_path):
    with open(os.path.join(SRCDIR, "README.md")) as f:
        blocks = re.findall(r"^```python\n(.*?)^```", f.read(), re.S | re.M)
    assert blocks
    os.symlink(os.path.join(SRCDIR, "data"), tmp_path / "data")
    for b in blocks:
        p = subprocess.run([sys.executable, "-c", b], cwd=tmp_path, env=_env(), capture_output=True, text=True)
        assert p.returncode == 0, p.stderr
    assert p.stdout.startswith("Param(value=")


def test_example_fit_imu(tmp_path):
    run("trajectory", "--shape", "static", "--duration", 120, "--rate", 200, "-o", tmp_path / "gt.h5")
    run("inject", os.path.join(SRCDIR, "data/rigs/imu-adis16448.yaml"), tmp_path / "gt.h5", "-o", tmp_path / "i.h5")
    p = subprocess.run([sys.executable, os.path.join(SRCDIR, "python/examples/fit_imu.py"), str(tmp_path / "i.h5"),
                        "imu", str(tmp_path / "a.png")], env=_env(), capture_output=True, text=True)
    assert p.returncode == 0, p.stderr
    assert p.stdout.count("noise_density") == 6


def test_example_render_scan(tmp_path):
    p = subprocess.run([sys.executable, os.path.join(SRCDIR, "python/examples/render_scan.py"),
                        os.path.join(SRCDIR, "data/scenes/walls.yaml"), "lidar", str(tmp_path / "s.png")],
                       env=_env(), capture_output=True, text=True)
    assert p.returncode == 0, p.stderr
    assert re.match(r"\d+ returns from \d+ objects", p.stdout)
