"""The judge, Wasserstein, spectral flatness and VEPD from Python against
`sensim judge` and `sensim vepd` on the same data (identical numbers), and
against SciPy and NumPy (independent implementations)."""
import json

import numpy as np
import pytest

import sensim
from conftest import read, run

JUDGE_RIG = """seed: 9
sensors:
  - name: imu
    type: imu
    rate_hz: 100
    gyro: { noise_density: 2.0e-3 }
    accel: { noise_density: 2.0e-2 }
  - name: gps
    type: gnss
    rate_hz: 10
    position_noise: { model: gaussian, sigma: 0.5 }
    covariance: { model: noise }
"""


@pytest.mark.parametrize("mode", ["robot_localization", "corrected"])
def test_judge_matches_cli(tmp_path, mode):
    (tmp_path / "rig.yaml").write_text(JUDGE_RIG)
    run("trajectory", "--shape", "circle", "--duration", 40, "--rate", 100, "-o", tmp_path / "c.h5")
    run("inject", tmp_path / "rig.yaml", tmp_path / "c.h5", "-o", tmp_path / "log.h5")
    run("judge", tmp_path / "log.h5", "-o", tmp_path / "est.h5", "--no-align", "-q", "--mode", mode)
    log = tmp_path / "log.h5"
    w = read(log, "/sensors/imu/angular_velocity")
    f = read(log, "/sensors/imu/specific_force")
    cov = read(log, "/sensors/gps/position_covariance").reshape(-1, 3, 3)
    o = sensim.judge(read(log, "/sensors/imu/t"), w[:, 2], f[:, 0], f[:, 1], read(log, "/sensors/gps/t"),
                     read(log, "/sensors/gps/enu"), cov, mode=mode)
    for k in ("t", "speed"):
        assert np.array_equal(getattr(o, k), read(tmp_path / "est.h5", "/estimates/judge/" + k))
    assert np.array_equal(o.velocity, read(tmp_path / "est.h5", "/estimates/judge/velocity")[:, :2])
    assert o.imu_used + o.imu_rejected == len(w)
    with pytest.raises(sensim.DataError, match="imu sample 5"):
        t = read(log, "/sensors/imu/t").copy()
        t[5] = t[4]
        sensim.judge(t, w[:, 2], f[:, 0], f[:, 1], read(log, "/sensors/gps/t"), read(log, "/sensors/gps/enu"))
    with pytest.raises(ValueError, match="mode"):
        sensim.judge(t, w[:, 2], f[:, 0], f[:, 1], [], np.zeros((0, 3)), mode="kalman")


def test_wasserstein_and_flatness_independent():
    from scipy.stats import wasserstein_distance
    rng = np.random.default_rng(5)
    u, v = rng.normal(0, 1, 300), rng.normal(0.4, 2, 170)
    uw, vw = rng.uniform(0, 1, 300), rng.uniform(0, 1, 170)
    assert sensim.wasserstein(u, v) == pytest.approx(wasserstein_distance(u, v), rel=1e-12)
    assert sensim.wasserstein(u, v, uw, vw) == pytest.approx(wasserstein_distance(u, v, uw, vw), rel=1e-12)
    x = rng.normal(size=1001)
    m = np.abs(np.fft.fft(x))
    assert sensim.spectral_flatness(x) == pytest.approx(np.exp(np.mean(np.log(m + 1e-10))) / m.mean(), rel=1e-12)
    with pytest.raises(sensim.DataError):
        sensim.spectral_flatness(np.zeros(8))
    with pytest.raises(sensim.SensimError, match="finite|NaN|nan"):
        sensim.wasserstein([1.0, np.nan], [2.0])
    with pytest.raises(ValueError, match="u_weights: 2 rows; expected 3"):
        sensim.wasserstein([1.0, 2.0, 3.0], [2.0], [1.0, 1.0])


def _write_tests(d, sigma, rng):
    d.mkdir()
    for k in range(4):
        gt_t = np.arange(0, 30, 0.01)
        gt_v = 2 + np.sin(gt_t * (0.3 + 0.1 * k))
        est_t = np.arange(0, 30, 1 / 35.0)
        est_v = np.interp(est_t, gt_t, gt_v) + rng.normal(0, sigma, len(est_t))
        with open(d / ("path_%d.csv" % k), "w") as f:
            f.write("se_time,gt_time,se_vel,gt_vel\n")
            for i in range(max(len(gt_t), len(est_t))):
                f.write(",".join([("%.17g" % a[i]) if i < len(a) else "" for a in (est_t, gt_t, est_v, gt_v)]) + "\n")


def test_vepd_matches_cli(tmp_path):
    rng = np.random.default_rng(1)
    _write_tests(tmp_path / "real", 0.3, rng)
    _write_tests(tmp_path / "sim", 0.5, rng)
    cli = json.loads(run("vepd", "--real", tmp_path / "real", "--sim", tmp_path / "sim", "--json", "--bootstrap",
                         200, "--permutations", 99, "--seed", 4).stdout)
    real = [sensim.VepdSeries.read_csv(tmp_path / "real" / ("path_%d.csv" % k)) for k in range(4)]
    sim = [sensim.VepdSeries.read_csv(tmp_path / "sim" / ("path_%d.csv" % k)) for k in range(4)]
    scored = {(c["set"], c["name"]): c for c in cli["tests"]}
    for k in range(4):
        t = real[k].score()
        c = scored[("real", "path_%d" % k)]
        assert (t.rmse, t.sf_gt, t.sf_est, t.sf_diff, t.n_grid) == (c["rmse"], c["sf_gt"], c["sf_est"],
                                                                   c["sf_diff"], c["n_grid"])
    r = sensim.vepd(real, sim)
    assert (r.w1, r.w2, r.vepd) == (cli["w1"], cli["w2"], cli["vepd"])
    assert sensim.vepd_bootstrap(real, sim, seed=4, n_boot=200) == (cli["ci"]["lo"], cli["ci"]["hi"])
    v, p = sensim.vepd_permutation(real, sim, seed=4, n_perm=99, real_strata=range(4), sim_strata=range(4))
    assert (v, p) == (cli["vepd"], cli["p"])
    # arrays in: the same as the file read
    s = real[0]
    assert sensim.VepdSeries(s.est_t, s.est_v, s.gt_t, s.gt_v).score() == s.score()
    (tmp_path / "bad.csv").write_text("se_time,gt_time,se_vel\n0,0,1\n")
    with pytest.raises(sensim.SensimError, match=r"bad\.csv.*gt_vel"):
        sensim.VepdSeries.read_csv(tmp_path / "bad.csv")
    with pytest.raises(sensim.DataError, match="est_v: value at row 3"):
        sensim.VepdSeries([0, 1, 2, 3.0], [1, 1, 1, np.nan], [0, 1.0], [1, 1.0])
