"""`pip install` of python/ into a fresh virtual environment, offline (Debian's
setuptools and cffi from the system site packages, no build isolation), then
`import sensim` there."""
import os
import shutil
import subprocess
import sys

from conftest import SRCDIR


def test_pip_install_in_fresh_venv(tmp_path):
    build = os.environ.get("SENSIM_BUILD") or os.path.join(SRCDIR, "build")
    src = tmp_path / "src"
    shutil.copytree(os.path.join(SRCDIR, "python"), src,
                    ignore=shutil.ignore_patterns("build", "*.egg-info", "__pycache__", "tests"))
    subprocess.run([sys.executable, "-m", "venv", "--system-site-packages", str(tmp_path / "venv")], check=True)
    py = str(tmp_path / "venv" / "bin" / "python")
    env = dict(os.environ, SENSIM_BUILD=build, PIP_NO_INDEX="1", PIP_DISABLE_PIP_VERSION_CHECK="1")
    env.pop("PYTHONPATH", None)
    p = subprocess.run([py, "-m", "pip", "install", "-q", "--no-build-isolation", str(src)], env=env,
                       capture_output=True, text=True)
    assert p.returncode == 0, p.stdout + p.stderr
    p = subprocess.run([py, "-c", "import sensim, numpy; print(sensim.__version__); print(sensim.__file__); "
                        "print(sensim.Rng(1).normal(3).shape)"], env=env, capture_output=True, text=True,
                       cwd=str(tmp_path))
    assert p.returncode == 0, p.stderr
    version, where, shape = p.stdout.split("\n")[:3]
    with open(os.path.join(build, "sensim.pc")) as f:
        assert "Version: %s\n" % version in f.read()
    assert where.startswith(str(tmp_path / "venv")) and shape == "(3,)"
