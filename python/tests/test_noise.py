"""Noise on arrays from Python against `sensim inject` on a log holding the
same clean data (recorded-clean path for imu, camera and lidar; simulated
from a static ground truth for gnss, odometer and encoder): identical bits
for the same seed."""
import numpy as np
import pytest

import sensim
from conftest import read, run, write_log

IMU_RIG = """seed: 11
sensors:
  - name: imu0
    type: imu
    rate_hz: 100
    gyro:
      noise_density: 0.002
      bias: [0.001, -0.002, 0.003]
      turn_on_bias: 0.0005
      random_walk: 1.0e-4
      bias_instability: 3.0e-4
      gauss_markov: { sigma: 0.001, tau: 20 }
      quantization: 1.0e-4
      g_sensitivity: [[0, 1e-4, 0], [0, 0, 0], [2e-4, 0, 0]]
      scale: [0.001, 0, -0.002]
    accel:
      noise_density: 0.01
      random_walk: 1.0e-3
      range: "4 g"
"""


def bits(a):
    a = np.ascontiguousarray(a)
    return a.view(np.uint8)


def same_bits(a, b):
    assert a.shape == b.shape and a.dtype == b.dtype, (a.shape, b.shape, a.dtype, b.dtype)
    assert np.array_equal(bits(a), bits(b))


@pytest.fixture
def clean_imu():
    n = 3000
    t = 0.5 + np.arange(n) / 100.0
    rng = np.random.default_rng(4)
    w = np.cumsum(rng.normal(0, 1e-3, (n, 3)), axis=0)
    f = np.array([0.0, 0.0, 9.80665]) + np.cumsum(rng.normal(0, 1e-2, (n, 3)), axis=0)
    return t, w, f


def test_imu_matches_inject(tmp_path, clean_imu):
    t, w, f = clean_imu
    rig = tmp_path / "rig.yaml"
    rig.write_text(IMU_RIG)
    log = write_log(tmp_path / "in.h5", {"imu0": {"t": t, "angular_velocity": w, "specific_force": f}}, 40)
    run("inject", rig, log, "-o", tmp_path / "out.h5", "--seed", 99, "--block", 700)
    imu = sensim.Imu.from_yaml(str(rig))
    assert imu.instruments == ("gyro", "accel")
    g, a = imu.apply(t, gyro=w, accel=f, seed=99)
    same_bits(g, read(tmp_path / "out.h5", "/sensors/imu0/angular_velocity"))
    same_bits(a, read(tmp_path / "out.h5", "/sensors/imu0/specific_force"))
    # in blocks: a stream carries the state
    s = imu.stream(99)
    parts = [s.apply(t[i:i + 1000], gyro=w[i:i + 1000], accel=f[i:i + 1000]) for i in range(0, len(t), 1000)]
    same_bits(np.concatenate([p[0] for p in parts]), g)
    # into given arrays, and in place (the gyro still sees the clean accel)
    yg, ya = np.empty_like(w), np.empty_like(f)
    assert imu.apply(t, gyro=w, accel=f, seed=99, out=(yg, ya))[0] is yg
    same_bits(yg, g)
    wi, fi = w.copy(), f.copy()
    imu.apply(t, gyro=wi, accel=fi, seed=99, out=(wi, fi))
    same_bits(wi, g)
    same_bits(fi, a)
    with pytest.raises(ValueError, match="out: for accel expected"):
        imu.apply(t, gyro=w, accel=f, seed=99, out=(yg, ya[:, :2]))
    # another seed, other bits; the input is not modified
    g2, = imu.apply(t, gyro=w, accel=f, seed=98)[:1]
    assert not np.array_equal(g, g2)
    assert np.array_equal(w, np.cumsum(np.random.default_rng(4).normal(0, 1e-3, (len(t), 3)), axis=0))


def test_imu_errors(clean_imu):
    t, w, f = clean_imu
    imu = sensim.Imu.from_yaml(IMU_RIG)
    with pytest.raises(TypeError, match=r"gyro: dtype float32; expected float64"):
        imu.apply(t, gyro=w.astype(np.float32), seed=1)
    with pytest.raises(ValueError, match=r"gyro: shape \(3000, 2\); expected \[n, 3\]"):
        imu.apply(t, gyro=w[:, :2], seed=1)
    with pytest.raises(ValueError, match=r"gyro: 2999 rows; expected 3000"):
        imu.apply(t, gyro=w[1:], seed=1)
    bad = w.copy()
    bad[1234, 1] = np.nan
    with pytest.raises(sensim.DataError, match=r"gyro: value at row 1234 is not finite"):
        imu.apply(t, gyro=bad, seed=1)
    with pytest.raises(ValueError, match=r"has no mag"):
        imu.apply(t, mag=w, seed=1)
    with pytest.raises(TypeError):
        imu.apply(t, gyro=w)  # the seed is explicit


def test_bad_yaml_key_message(tmp_path):
    rig = tmp_path / "bad.yaml"
    rig.write_text(IMU_RIG.replace("quantization: 1.0e-4", "quantisation: 1.0e-4"))
    with pytest.raises(sensim.InvalidError) as e:
        sensim.Imu.from_yaml(str(rig))
    p = run("inject", rig, "x.h5", "-o", tmp_path / "o.h5", ok=False)
    assert p.returncode == 1
    msg = str(e.value)
    assert msg.startswith(str(rig) + ":13: unknown key 'quantisation'"), msg
    assert msg in p.stderr  # the CLI prints the same library message
    assert e.value.status == "SENSIM_EINVAL"
    with pytest.raises(sensim.FormatError, match=r"bad\.yaml"):
        rig.write_text("seed: [1\n")
        sensim.Rig(str(rig))
    with pytest.raises(sensim.NotFoundError, match=r"nonexistent\.yaml"):
        sensim.Rig(str(tmp_path / "nonexistent.yaml"))


CAMERA_RIG = """seed: 5
sensors:
  - name: cam
    type: camera
    rate_hz: 10
    noise:
      model: emva
      photons_full_scale: 8000
      read_noise: 3
      prnu: 0.01
      dsnu: 2
      row_offset_sigma: 1
      adc_bits: 12
"""


@pytest.mark.parametrize("dtype", [np.uint8, np.uint16, np.float32])
def test_camera_matches_inject(tmp_path, dtype):
    rng = np.random.default_rng(1)
    frames = rng.uniform(0, 1, (3, 20, 24, 3))
    frames = (frames * np.iinfo(dtype).max).astype(dtype) if dtype != np.float32 else frames.astype(np.float32)
    rig = tmp_path / "rig.yaml"
    rig.write_text(CAMERA_RIG)
    log = write_log(tmp_path / "in.h5", {"cam": {"t": np.array([0.1, 0.2, 0.3]), "image": frames}})
    run("inject", rig, log, "-o", tmp_path / "out.h5", "--seed", 3)
    got = sensim.Camera.from_yaml(str(rig)).apply(frames, seed=3)
    same_bits(got, read(tmp_path / "out.h5", "/sensors/cam/image"))
    with pytest.raises(TypeError, match="dtype int32"):
        sensim.Camera.from_yaml(str(rig)).apply(frames.astype(np.int32), seed=3)
    with pytest.raises(ValueError, match=r"expected \[N, H, W\]"):
        sensim.Camera.from_yaml(str(rig)).apply(frames[0, 0], seed=3)


@pytest.mark.parametrize("dtype", [np.uint8, np.float32])
def test_camera_fov_lens_matches_inject(tmp_path, dtype):
    """A camera with lens: fov: pinhole frames through the FOV remap, then
    noise, bit for bit as `sensim inject` writes them; NaN refused."""
    rng = np.random.default_rng(2)
    frames = rng.uniform(0, 1, (2, 30, 40, 3))
    frames = (frames * 255).astype(dtype) if dtype != np.float32 else frames.astype(np.float32)
    rig = tmp_path / "rig.yaml"
    rig.write_text(CAMERA_RIG + "    lens: { model: fov, hfov: 1.6 }\n")
    log = write_log(tmp_path / "in.h5", {"cam": {"t": np.array([0.1, 0.2]), "image": frames}})
    run("inject", rig, log, "-o", tmp_path / "out.h5", "--seed", 4)
    cam = sensim.Camera.from_yaml(str(rig))
    assert cam.fov_lens and cam.hfov == 1.6
    got = cam.apply(frames, seed=4)
    same_bits(got, read(tmp_path / "out.h5", "/sensors/cam/image"))
    plain = sensim.Camera.from_yaml(CAMERA_RIG).apply(frames, seed=4)
    assert not np.array_equal(got, plain)  # the remap did something
    if dtype == np.float32:
        bad = frames.copy()
        bad[1, 3, 5, 0] = np.nan
        with pytest.raises(ValueError, match="frame 1, row 3, column 5 is NaN"):
            cam.apply(bad, seed=4)


@pytest.mark.parametrize("lens", ["{ model: radtan, fx: 30, fy: 31, cx: 19.2, cy: 14.6, "
                                  "distortion: [-0.28, 0.09, 0.001, -0.0007, -0.01] }",
                                  "{ model: kannala_brandt, fx: 15, fy: 15, cx: 19.5, cy: 14.5, "
                                  "k1: -0.007, k2: 0.04, k3: -0.04, k4: 0.0075 }"])
def test_camera_calibrated_lens_matches_inject(tmp_path, lens):
    """A camera with a calibrated lens (OpenCV radtan or Kannala-Brandt):
    frames remapped from the undistorted pinhole, then noise, bit for bit
    as `sensim inject` writes them."""
    rng = np.random.default_rng(5)
    frames = rng.uniform(0, 1, (2, 30, 40, 3)).astype(np.float32)
    rig = tmp_path / "rig.yaml"
    rig.write_text(CAMERA_RIG + "    lens: " + lens + "\n")
    log = write_log(tmp_path / "in.h5", {"cam": {"t": np.array([0.1, 0.2]), "image": frames}})
    run("inject", rig, log, "-o", tmp_path / "out.h5", "--seed", 4)
    cam = sensim.Camera.from_yaml(str(rig))
    assert cam.fov_lens and cam.hfov is None
    got = cam.apply(frames, seed=4)
    same_bits(got, read(tmp_path / "out.h5", "/sensors/cam/image"))
    assert not np.array_equal(got, sensim.Camera.from_yaml(CAMERA_RIG).apply(frames, seed=4))


LIDAR_RIG = """seed: 8
sensors:
  - name: lidar
    type: lidar
    noise: { range_sigma_base: 0.02, range_sigma_slope: 0.001, azimuth_sigma: 0.001, elevation_sigma: 0.001,
             intensity_sigma: 0.05, range_resolution: 0.004 }
    dropout: { dropoff_general_rate: 0.1 }
"""


def test_lidar_matches_inject(tmp_path):
    rng = np.random.default_rng(2)
    M = 5000
    r = rng.uniform(1, 50, M)
    az = rng.uniform(-np.pi, np.pi, M)
    el = rng.uniform(-0.3, 0.3, M)
    pts = np.stack([r * np.cos(el) * np.cos(az), r * np.cos(el) * np.sin(az), r * np.sin(el),
                    rng.uniform(0, 1, M)], axis=1).astype(np.float32)
    so = np.array([0, 1200, 3000, M], dtype=np.uint64)
    rig = tmp_path / "rig.yaml"
    rig.write_text(LIDAR_RIG)
    log = write_log(tmp_path / "in.h5", {"lidar": {"t": np.array([0.1, 0.2, 0.3]), "points": pts,
                                                   "scan_offset": so}})
    run("inject", rig, log, "-o", tmp_path / "out.h5", "--seed", 21)
    out = sensim.Lidar.from_yaml(str(rig)).apply(pts, seed=21)
    assert 0.85 * M < out.kept < 0.95 * M
    same_bits(out.points[out.keep], read(tmp_path / "out.h5", "/sensors/lidar/points"))
    # blocks by global index give the same points
    b = sensim.Lidar.from_yaml(str(rig)).apply(pts[3000:], seed=21, first=3000)
    same_bits(b.points[b.keep], out.points[3000:][out.keep[3000:]])
    with pytest.raises(TypeError, match="points: dtype float64; expected float32"):
        sensim.Lidar.from_yaml(str(rig)).apply(pts.astype(np.float64), seed=21)


OTHER_RIG = """seed: 4
sensors:
  - name: gps
    type: gnss
    rate_hz: 5
    origin_lla: [43.0731, -89.4012, 260]
    position_noise: [{ model: gauss_markov, sigma: [0.5, 0.5, 1.0], tau: 30 }, { model: gaussian, sigma: 0.3 }]
    hdop: { initial: 100, final: 0.85, tau: 12.4, fix_3d_max: 3, fix_2d_max: 4 }
    velocity_noise: { sigma: 0.05 }
  - name: odo
    type: odometer
    rate_hz: 20
    wheel_radius: 0.3
    noise_sigma: 0.01
  - name: enc
    type: encoder
    rate_hz: 50
    source: heading
    noise_sigma: 0.002
    resolution: 0.001
"""


def test_gnss_odometer_encoder_match_inject(tmp_path):
    rig = tmp_path / "rig.yaml"
    rig.write_text(OTHER_RIG)
    log = write_log(tmp_path / "in.h5", None, seconds=60)
    run("inject", rig, log, "-o", tmp_path / "out.h5", "--seed", 6)
    out = str(tmp_path / "out.h5")
    ts = read(out, "/sensors/gps/t_sample")
    z = np.zeros((len(ts), 3))
    g = sensim.Gnss.from_yaml(str(rig), "gps").apply(ts, z, z, seed=6, t_on=0.0)
    for k in ("enu", "lla", "velocity", "hdop", "fix"):
        same_bits(getattr(g, k), read(out, "/sensors/gps/" + k))
    same_bits(g.covariance.reshape(-1, 9), read(out, "/sensors/gps/position_covariance"))
    to = read(out, "/sensors/odo/t_sample")
    d = sensim.Odometer.from_yaml(str(rig), "odo").apply_speed(to, np.zeros_like(to), seed=6)
    same_bits(d, read(out, "/sensors/odo/distance"))
    te = read(out, "/sensors/enc/t_sensor")
    pos, spd = sensim.Encoder.from_yaml(str(rig), "enc").apply(te, np.zeros_like(te), seed=6)
    same_bits(pos, read(out, "/sensors/enc/position"))
    same_bits(spd, read(out, "/sensors/enc/speed"))


def test_rng_streams():
    a = sensim.Rng(7, "imu", 3)
    assert a.sensor == sensim.sensor_id("imu") < 2 ** 24
    x = a.normal(1000)
    same_bits(a.normal(10, first=500), x[500:510])  # a pure function of the index
    assert abs(x.mean()) < 4 / np.sqrt(1000) and abs(x.std() - 1) < 0.1
    u = a.uniform(20000)
    assert 0 < u.min() and u.max() < 1 and abs(u.mean() - 0.5) < 4 * np.sqrt(1 / 12 / 20000)
    assert not np.array_equal(x, sensim.Rng(8, "imu", 3).normal(1000))
    p = a.poisson(np.full(20000, 3.5, np.float32))
    assert abs(p.mean() - 3.5) < 4 * np.sqrt(3.5 / 20000)


def test_inject_from_python(tmp_path, clean_imu):
    t, w, f = clean_imu
    log = write_log(tmp_path / "in.h5", {"imu0": {"t": t, "angular_velocity": w, "specific_force": f}}, 40)
    sensim.inject(IMU_RIG, str(log), str(tmp_path / "py.h5"), seed=5)
    (tmp_path / "rig.yaml").write_text(IMU_RIG)
    run("inject", tmp_path / "rig.yaml", log, "-o", tmp_path / "cli.h5", "--seed", 5)
    same_bits(read(tmp_path / "py.h5", "/sensors/imu0/angular_velocity"),
              read(tmp_path / "cli.h5", "/sensors/imu0/angular_velocity"))
    with pytest.raises(sensim.SensimError, match=r"missing\.h5"):
        sensim.inject(IMU_RIG, str(tmp_path / "missing.h5"), str(tmp_path / "x.h5"))
    assert not (tmp_path / "x.h5").exists()
