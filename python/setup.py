"""Builds the sensim Python package: the pure-Python layer in sensim/ and the
cffi extension sensim._sensim (API mode, sensim_build.py), linked against the
libsensim of this checkout's build tree (or SENSIM_BUILD, or pkg-config).

    make python                      # in the checkout: build/python/sensim
    pip install --no-build-isolation ./python   # after make, offline
"""
import os
import sys

from setuptools import setup

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from sensim_build import VERSION  # noqa: E402

setup(
    name="sensim",
    version=VERSION or "0",
    description="sensor-noise simulation, calibration and sim2real metrics (libsensim) from Python",
    packages=["sensim"],
    python_requires=">=3.9",
    install_requires=["numpy", "cffi"],
    setup_requires=["cffi>=1.0"],
    cffi_modules=["sensim_build.py:ffibuilder"],
    zip_safe=False,
)
