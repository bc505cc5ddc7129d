"""Allan deviations and every fit from Python against the CLI's JSON on the
same input: each number equal to the digits the CLI prints (the CLI writes
%.Ng of the same double; a different computation would differ there)."""
import json

import numpy as np
import pytest

import sensim
from conftest import read, run


def same(py, cli, digits):
    """py printed as the CLI prints it (%.<digits>g, non-finite as null) is cli."""
    if cli is None:
        assert not np.isfinite(py), py
        return
    assert float("%.*g" % (digits, py)) == cli, (py, cli, digits)


def same_param(p, c, digits=8):
    same(p.value, c["value"], digits)
    same(p.lo, c["lo"], digits)
    same(p.hi, c["hi"], digits)
    assert p.status == c["status"]


IMU_RIG = """seed: 3
sensors:
  - name: imu
    type: imu
    rate_hz: 100
    gyro: { noise_density: 2.0e-4, bias_instability: 1.2e-4, random_walk: 2.0e-5 }
    accel: { noise_density: 2.0e-3, bias_instability: 4.0e-4, random_walk: 3.0e-3 }
"""


@pytest.fixture(scope="module")
def imu_log(tmp_path_factory):
    d = tmp_path_factory.mktemp("imu")
    (d / "rig.yaml").write_text(IMU_RIG)
    run("trajectory", "--shape", "static", "--duration", 300, "--rate", 100, "-o", d / "gt.h5")
    run("inject", d / "rig.yaml", d / "gt.h5", "-o", d / "imu.h5")
    return d / "imu.h5"


@pytest.mark.parametrize("dev,grid", [("oadev", "octave"), ("mdev", "decade"), ("totdev", "log:5"),
                                      ("hdev", "octave")])
def test_allan_matches_cli(imu_log, dev, grid):
    cli = json.loads(run("allan", "--input", imu_log, "--sensor", "imu", "--dev", dev, "--taus", grid,
                         "--json").stdout)
    w = read(imu_log, "/sensors/imu/angular_velocity")
    r = sensim.allan(w, rate=100, dev=dev, grid=grid)
    assert r.tau.shape == (3, len(cli["axes"][0]["points"]))
    same(r.confidence, cli["confidence"], 6)
    for a, ax in enumerate(cli["axes"]):
        for k, c in enumerate(ax["points"]):
            assert r.m[a, k] == c["m"] and r.n[a, k] == c["n"]
            for f in ("tau", "dev", "lo", "hi"):
                same(r.points[f][a, k], c[f], 10)
            same(r.edf[a, k], c["edf"], 6)
            assert (None if r.alpha[a, k] == -99 else r.alpha[a, k]) == c["alpha"]
    # one axis alone gives the same as its row; the noise type names follow alpha
    one = sensim.allan(np.ascontiguousarray(w[:, 1]), rate=100, dev=dev, grid=grid)
    assert np.array_equal(one.dev, r.dev[1])
    assert set(r.noise.ravel()) <= set(sensim.NOISE_TYPES.values())


def test_allan_errors():
    x = np.random.default_rng(0).normal(size=1000)
    x[417] = np.nan
    with pytest.raises(sensim.DataError, match="417"):
        sensim.allan(x, rate=10)
    with pytest.raises(sensim.InvalidError, match="oadev"):
        sensim.allan(np.ones(100), rate=10, dev="xdev")
    with pytest.raises(TypeError, match="dtype int64"):
        sensim.allan(np.arange(100), rate=10)
    with pytest.raises(ValueError, match="shape"):
        sensim.allan(np.zeros((10, 3, 2)), rate=10)
    with pytest.raises(sensim.SensimError, match="constant|zero"):
        sensim.allan(np.ones(1000), rate=10)


def test_fit_imu_matches_cli(imu_log, tmp_path):
    cli = json.loads(run("fit", "imu", imu_log, "--sensor", "imu", "-o", tmp_path / "f.yaml", "--json").stdout)
    for inst, dset in (("gyro", "angular_velocity"), ("accel", "specific_force")):
        fits = sensim.fit_imu(read(imu_log, "/sensors/imu/" + dset), rate=100, confidence=0.95)
        for f, c in zip(fits, cli["instruments"][inst]["axes"]):
            same(f.chi2, c["chi2"], 6)
            assert f.dof == c["dof"]
            same(f.scale, c["scale"], 6)
            assert f.note == c["note"]
            for key, p in f.params.items():
                same_param(p, c[key])
                same(f.classic[key], c[key]["classic"], 8)
            assert set(f.values) == set(f.intervals) == set(f.status)
    # identified white noise covers the value the rig put in
    g = sensim.fit_imu(read(imu_log, "/sensors/imu/angular_velocity"), rate=100)[0]
    lo, hi = g.intervals["noise_density"]
    assert g.status["noise_density"] == "ok" and lo < 2.0e-4 < hi


GNSS_RIG = """seed: 4
sensors:
  - name: gps
    type: gnss
    rate_hz: 5
    position_noise: [{ model: gauss_markov, sigma: [0.5, 0.5, 1.0], tau: 30 }, { model: gaussian, sigma: 0.3 }]
    hdop: { initial: 100, final: 0.85, tau: 12.4, fix_3d_max: 3, fix_2d_max: 4 }
    outliers: { probability: 0.01, magnitude: 20 }
"""


def test_fit_gnss_matches_cli(tmp_path):
    (tmp_path / "rig.yaml").write_text(GNSS_RIG)
    run("trajectory", "--shape", "static", "--duration", 300, "--rate", 50, "-o", tmp_path / "gt.h5")
    run("inject", tmp_path / "rig.yaml", tmp_path / "gt.h5", "-o", tmp_path / "g.h5")
    cli = json.loads(run("fit", "gnss", tmp_path / "g.h5", "--sensor", "gps", "-o", tmp_path / "f.yaml",
                         "--json").stdout)
    t = read(tmp_path / "g.h5", "/sensors/gps/t")
    enu = read(tmp_path / "g.h5", "/sensors/gps/enu")
    mask, out = sensim.find_gnss_outliers(t, enu)
    assert out.rejected == cli["outliers"]["rejected"] > 0
    same_param(out.rate, cli["outliers"]["rate"], 10)
    same(out.magnitude, cli["outliers"]["magnitude"], 10)
    for a, c in enumerate(cli["axes"]):
        gm = sensim.fit_gnss_gm(t[~mask], enu[~mask, a])
        same(gm.acf1, c["acf1"], 6)
        same_param(gm.white_sigma, c["white_sigma"], 10)
        same_param(gm.sigma, c["gauss_markov"]["sigma"], 10)
        same_param(gm.tau, c["gauss_markov"]["tau"], 10)
        gmw = sensim.fit_gnss_gmw(t, enu[:, a], skip=mask)
        for k in ("sigma_gm", "tau", "sigma_white"):
            same_param(gmw.params[k], c["gauss_markov_white"][k], 10)
        same(gmw.lr, c["gauss_markov_white"]["lr"], 10)
        assert gmw.note == c["gauss_markov_white"]["note"]
    rw = sensim.fit_gnss_rw(t[~mask], enu[~mask])
    same_param(rw.sigma, cli["chrono_random_walk"]["sigma"], 10)
    same(rw.d2_std, cli["chrono_random_walk"]["d2_std"], 10)
    h = sensim.fit_gnss_hdop(t, read(tmp_path / "g.h5", "/sensors/gps/hdop"), t0=0.0)
    for k in ("initial", "final", "tau"):
        same_param(h.params[k], cli["hdop"][k], 10)
    with pytest.raises(ValueError, match=r"enu: shape \(1501, 2\)"):
        sensim.fit_gnss_rw(t, enu[:, :2])
    bad = t.copy()
    bad[40] = bad[39]
    with pytest.raises(sensim.DataError, match="40"):
        sensim.fit_gnss_gm(bad, enu[:, 0])


def test_fit_camera_matches_cli(tmp_path):
    import h5py
    rng = np.random.default_rng(3)
    L, H, W = 8, 32, 32
    exp = np.geomspace(1e-3, 0.2, L)

    def frames(mu):
        e = rng.poisson(mu, (2, H, W))
        return np.clip(np.round(0.5 * e + 100 + rng.normal(0, 2, (2, H, W))), 0, 65535).astype(np.uint16)
    light = np.stack([frames(2e5 * x + 50 * x) for x in exp])
    dark = np.stack([frames(50 * x) for x in exp])
    with h5py.File(tmp_path / "stack.h5", "w") as f:
        f["stack/exposure"] = exp
        f["stack/light"] = light
        f["stack/dark"] = dark
    cli = json.loads(run("fit", "camera", tmp_path / "stack.h5", "-o", tmp_path / "c.yaml", "--json").stdout)
    r = sensim.fit_camera(light, dark, exp)
    for k in ("gain", "read_noise", "dark_current", "variance_slope", "variance_intercept"):
        same(r.params[k].value, cli[k], 9)
        same(r.ci[k], cli[k + "_ci"], 9)
    for k in ("dark_offset", "saturation_dn", "saturation_capacity"):
        same(getattr(r, k), cli[k], 9)
    same(r.dsnu.value, cli["dsnu"], 9)
    assert r.levels_used == cli["levels_used"]
    assert abs(r.gain.value - 0.5) < 3 * (r.gain.hi - r.gain.value)
    with pytest.raises(ValueError, match="light: shape"):
        sensim.fit_camera(light[:, 0], dark, exp)


def test_fit_lidar_matches_cli(tmp_path):
    import h5py
    rng = np.random.default_rng(3)
    S, M = 6, 2000
    r0 = rng.uniform(1, 60, M)
    ch = (np.arange(M) % 16).astype(np.uint16)
    r = (r0 + rng.normal(0, 1, (S, M)) * (0.01 + 0.002 * r0)).astype(np.float32)
    r[2, 5] = np.nan
    with h5py.File(tmp_path / "scans.h5", "w") as f:
        g = f.create_group("sensors/lid")
        g["range"] = r.reshape(-1)
        g["channel"] = np.tile(ch, S)
        g["scan_offset"] = np.arange(S + 1, dtype=np.uint64) * M
        g["t"] = np.arange(S) * 0.1
    cli = json.loads(run("fit", "lidar", tmp_path / "scans.h5", "-o", tmp_path / "l.yaml", "--json").stdout)
    f = sensim.fit_lidar_range(r, channel=ch)
    same(f.sigma_base.value, cli["range_sigma_base"], 9)
    same(f.sigma_slope.value, cli["range_sigma_slope"], 9)
    same(f.ci["sigma_base"], cli["range_sigma_base_ci"], 3)
    same(f.ci["sigma_slope"], cli["range_sigma_slope_ci"], 3)
    same(f.chi2_dof, cli["chi2_dof"], 4)
    for a, b in zip(f.beam_sigma, cli["beam_sigma"]):
        same(a, b, 6)
    with pytest.raises(TypeError, match="ranges: dtype float64; expected float32"):
        sensim.fit_lidar_range(r.astype(np.float64))
    with pytest.raises(sensim.DataError, match="negative|scan"):
        bad = r.copy()
        bad[1, 3] = -1
        sensim.fit_lidar_range(bad)


def test_fit_lidar_angular_matches_cli(tmp_path):
    """Noisy scans of data/scenes/walls.yaml (three walls and the ground,
    sensim render --rig), the angular fit on named targets as `sensim fit
    lidar --targets` does it: planes, reference ranges, range line, angles."""
    from conftest import SRCDIR
    (tmp_path / "rig.yaml").write_text("""seed: 2
sensors:
  - name: lidar
    type: lidar
    noise: { range_sigma_base: 0.01, range_sigma_slope: 0.001, azimuth_sigma: 0.002, elevation_sigma: 0.003 }
""")
    run("trajectory", "--shape", "static", "--duration", 2, "--rate", 100, "-o", tmp_path / "gt.h5")
    run("render", SRCDIR + "/data/scenes/walls.yaml", "--trajectory", tmp_path / "gt.h5", "--sensor", "lidar",
        "-o", tmp_path / "s.h5", "--count", 6, "--rig", tmp_path / "rig.yaml")
    cli = json.loads(run("fit", "lidar", tmp_path / "s.h5", "-o", tmp_path / "l.yaml", "--json", "--targets",
                         "0,1,2,3").stdout)
    so = read(tmp_path / "s.h5", "/sensors/lidar/scan_offset")
    S, M = len(so) - 1, int(so[1])
    pts = read(tmp_path / "s.h5", "/sensors/lidar/points").reshape(S, M, 4)
    rng_ = read(tmp_path / "s.h5", "/sensors/lidar/range").reshape(S, M)
    ch = read(tmp_path / "s.h5", "/sensors/lidar/channel")[:M]
    obj = read(tmp_path / "s.h5", "/sensors/lidar/object")[:M]
    objects = np.unique(obj)  # 0..4, sorted: target t is objects[t]
    tgt = np.where(obj <= 3, np.searchsorted(objects, obj), -1).astype(np.int32)
    planes = sensim.fit_lidar_planes(pts, tgt, len(objects))
    r = sensim.fit_lidar_range(rng_, reference=planes["reference"], channel=ch, nbeams=16)
    # With targets the CLI fits range and angles together (beam jitter);
    # the range-only line is reported beside it.
    assert cli["joint"]
    same(r.sigma_base.value, cli["range_only_sigma_base"], 9)
    same(r.sigma_slope.value, cli["range_only_sigma_slope"], 9)
    rj, a = sensim.fit_lidar_joint(pts, tgt, len(objects), r.sigma_base.value, r.sigma_slope.value)
    same(rj.sigma_base.value, cli["range_sigma_base"], 9)
    same(rj.sigma_slope.value, cli["range_sigma_slope"], 9)
    same(a.azimuth_sigma.value, cli["azimuth_sigma"], 9)
    same(a.elevation_sigma.value, cli["elevation_sigma"], 9)
    same(a.ci["azimuth_sigma"], cli["azimuth_sigma_ci"], 3)
    same(a.chi2_dof, cli["angular_chi2_dof"], 4)
    for b, c in zip(r.beam_bias, cli["beam_bias"]):
        same(b, c, 6)
    # the recovered angles are the rig's, within their intervals
    assert abs(a.azimuth_sigma.value - 0.002) < 3 * a.ci["azimuth_sigma"]
    assert abs(a.elevation_sigma.value - 0.003) < 3 * a.ci["elevation_sigma"]
