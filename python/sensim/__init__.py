"""sensim: sensor-noise simulation, calibration, rendering and sim2real
metrics (libsensim) from Python, with NumPy arrays in and out.

Every function that can fail raises a sensim.SensimError (a subclass per
status: InvalidError, DataError, FormatError, NotFoundError, ...) carrying
libsensim's message, which names the file, line, key or index. Models free
themselves. Random draws are pure functions of an explicit seed: the same
seed gives the same bits as the `sensim` program.

    import sensim
    imu = sensim.Imu.from_yaml("rig.yaml")
    gyro_noisy, accel_noisy = imu.apply(t, gyro=w, accel=f, seed=7)
    curve = sensim.allan(gyro_noisy[:, 0], rate=imu.rate_hz)
    fit = sensim.fit_imu_allan(curve)
"""
from ._core import (DataError, FormatError, InternalError, InvalidError, IOFailure, NotFoundError, SensimError,
                    UnsupportedError, lib as _lib)
from .allan import NOISE_TYPES, AllanResult, allan, taus
from .bag import Bag
from .camera import Camera
from .datasheet import datasheet, from_si, quantity
from .fit import (FitResult, Param, find_gnss_outliers, fit_camera, fit_gauss_markov_allan, fit_gnss_gm,
                  fit_gnss_gmw, fit_gnss_hdop, fit_gnss_rw, fit_imu, fit_imu_allan, fit_lidar_angular, fit_lidar_joint,
                  fit_lidar_planes, fit_lidar_range, ptc_level)
from .gnss import Gnss
from .imu import Imu
from .lidar import Lidar
from .log import Log
from .metrics import (VepdSeries, VepdTest, judge, spectral_flatness, vepd, vepd_bootstrap, vepd_permutation,
                      wasserstein)
from .odometer import Encoder, Odometer
from .render import RenderCamera, RenderLidar, Scene, to_srgb8
from .rig import Rig, inject
from .rng import Rng, sensor_id

from ._core import ffi as _ffi

__version__ = _ffi.string(_lib.sensim_py_version()).decode()
