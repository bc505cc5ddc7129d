"""Sim2real scores (sensim/metrics.h, sensim/judge.h): Wasserstein distance,
spectral flatness, the judge filter and VEPD."""
from collections import namedtuple

import numpy as np

from ._core import array_in, check, cstr, ffi, finite_or_raise, lib, ptr


def wasserstein(u, v, u_weights=None, v_weights=None):
    """W1 between two (weighted) 1-D samples (scipy.stats.wasserstein_distance)."""
    u = array_in(u, "u")
    v = array_in(v, "v")
    uw = None if u_weights is None else array_in(u_weights, "u_weights", n=u.shape[0])
    vw = None if v_weights is None else array_in(v_weights, "v_weights", n=v.shape[0])
    out = ffi.new("double *")
    check(lib.sensim_wasserstein1(ptr(u), u.shape[0], ptr(uw), ptr(v), v.shape[0], ptr(vw), out))
    return out[0]


def spectral_flatness(x):
    """Wiener entropy of |FFT(x)| as the VEPD authors compute it."""
    x = array_in(x, "x")
    out = ffi.new("double *")
    check(lib.sensim_spectral_flatness(ptr(x), x.shape[0], out))
    return out[0]


JudgeOutput = namedtuple("JudgeOutput", "t position velocity speed yaw imu_used imu_rejected gnss_used gnss_rejected")


def judge(imu_t, yaw_rate, fx, fy, gnss_t, gnss_enu, gnss_cov=None, mode="robot_localization", rate_hz=None,
          **options):
    """The seed-004 judge (planar EKF): IMU time [n], yaw rate, planar specific
    force fx, fy; GNSS time [m], ENU position [m, 2 or 3], covariance [m, 3, 3]
    or None. mode: "robot_localization" or "corrected"; options: fields of
    sensim_judge_options (gyro_sigma, gnss_sigma, ...)."""
    md = lib.sensim_judge_mode_parse(cstr(mode))
    if md < 0:
        raise ValueError("mode: %r; expected robot_localization or corrected" % (mode,))
    o = ffi.new("sensim_judge_options *", lib.sensim_judge_default_options(md))
    if rate_hz is not None:
        o.rate_hz = rate_hz
    for k, val in options.items():
        setattr(o, k, val)
    t = array_in(imu_t, "imu_t")
    n = t.shape[0]
    a = [array_in(x, nm, n=n) for x, nm in ((yaw_rate, "yaw_rate"), (fx, "fx"), (fy, "fy"))]
    gt = array_in(gnss_t, "gnss_t")
    ge = np.asarray(gnss_enu)
    ge = array_in(ge, "gnss_enu", tail=(ge.shape[1] if ge.ndim == 2 and ge.shape[1] in (2, 3) else 3,),
                  n=gt.shape[0])
    gc = None if gnss_cov is None else array_in(gnss_cov, "gnss_cov", tail=(3, 3), n=gt.shape[0])
    imu = ffi.new("sensim_judge_imu *")
    imu.n = n
    keep = [ptr(t)] + [ptr(x) for x in a]
    imu.t, imu.yaw_rate, imu.fx, imu.fy = keep
    g = ffi.new("sensim_judge_gnss *")
    g.n, g.enu_stride = gt.shape[0], ge.shape[1]
    keep += [ptr(gt), ptr(ge), ptr(gc)]
    g.t, g.enu, g.cov = keep[4:]
    out = ffi.new("sensim_judge_output *")
    check(lib.sensim_judge_run(o, imu, g, out))
    try:
        k = out.n

        def arr(p, cols=1):
            if k == 0:
                return np.zeros((0, cols) if cols > 1 else 0)
            a_ = np.frombuffer(ffi.buffer(p, k * cols * 8), dtype=np.float64).copy()
            return a_.reshape(k, cols) if cols > 1 else a_
        return JudgeOutput(arr(out.t), arr(out.position, 2), arr(out.velocity, 2), arr(out.speed), arr(out.yaw),
                           int(out.imu_used), int(out.imu_rejected), int(out.gnss_used), int(out.gnss_rejected))
    finally:
        lib.sensim_judge_output_free(out)


VepdTest = namedtuple("VepdTest", "rmse sf_gt sf_est sf_diff n_grid")
VepdResult = namedtuple("VepdResult", "w1 w2 vepd")


class VepdSeries:
    """One test: the judge's speed estimate (est_t, est_v) and the
    ground-truth speed (gt_t, gt_v). From arrays, read_csv or read_log."""

    def __init__(self, est_t, est_v, gt_t, gt_v):
        self.est_t = array_in(est_t, "est_t")
        self.est_v = array_in(est_v, "est_v", n=self.est_t.shape[0])
        self.gt_t = array_in(gt_t, "gt_t")
        self.gt_v = array_in(gt_v, "gt_v", n=self.gt_t.shape[0])
        for a, nm in ((self.est_t, "est_t"), (self.est_v, "est_v"), (self.gt_t, "gt_t"), (self.gt_v, "gt_v")):
            finite_or_raise(a, nm)

    @classmethod
    def _from_c(cls, s):
        try:
            def cp(p, n):
                return np.frombuffer(ffi.buffer(p, n * 8), dtype=np.float64).copy() if n else np.zeros(0)
            return cls(cp(s.est_t, s.n_est), cp(s.est_v, s.n_est), cp(s.gt_t, s.n_gt), cp(s.gt_v, s.n_gt))
        finally:
            lib.sensim_vepd_series_free(s)

    @classmethod
    def read_csv(cls, path):
        """The VEPD authors' CSV layout (se_time, gt_time, se_vel, gt_vel)."""
        s = ffi.new("sensim_vepd_series *")
        check(lib.sensim_vepd_read_csv(cstr(path), s))
        return cls._from_c(s)

    @classmethod
    def read_log(cls, path, estimate=None):
        """A sensim log's /estimates/<estimate> and ground-truth speed."""
        s = ffi.new("sensim_vepd_series *")
        check(lib.sensim_vepd_read_log(cstr(path), ffi.NULL if estimate is None else cstr(estimate), s))
        return cls._from_c(s)

    def score(self):
        """RMSE and spectral flatness of this test (VepdTest)."""
        s = ffi.new("sensim_vepd_series *")
        s.n_est, s.n_gt = self.est_t.shape[0], self.gt_t.shape[0]
        keep = [ffi.cast("double *", ptr(a)) for a in (self.est_t, self.est_v, self.gt_t, self.gt_v)]
        s.est_t, s.est_v, s.gt_t, s.gt_v = keep
        out = ffi.new("sensim_vepd_test *")
        check(lib.sensim_vepd_score(s, out))
        return VepdTest(out.rmse, out.sf_gt, out.sf_est, out.sf_diff, int(out.n_grid))


def _tests(tests, name):
    tests = [t.score() if isinstance(t, VepdSeries) else t for t in tests]
    arr = ffi.new("sensim_vepd_test[]", max(1, len(tests)))
    for i, t in enumerate(tests):
        if not isinstance(t, VepdTest):
            raise TypeError("%s[%d]: expected a VepdSeries or VepdTest" % (name, i))
        arr[i].rmse, arr[i].sf_gt, arr[i].sf_est, arr[i].sf_diff, arr[i].n_grid = t
    return arr, len(tests)


def vepd(real, sim):
    """VEPD of a set of real tests against simulated ones (VepdSeries or
    VepdTest each): VepdResult(w1, w2, vepd)."""
    r, nr = _tests(real, "real")
    s, ns = _tests(sim, "sim")
    out = ffi.new("sensim_vepd_result *")
    check(lib.sensim_vepd_compare(r, nr, s, ns, out))
    return VepdResult(out.w1, out.w2, out.vepd)


def vepd_bootstrap(real, sim, *, seed, n_boot=1000, level=0.95):
    """Percentile bootstrap interval (lo, hi) of VEPD."""
    r, nr = _tests(real, "real")
    s, ns = _tests(sim, "sim")
    out = ffi.new("sensim_vepd_ci *")
    check(lib.sensim_vepd_bootstrap(r, nr, s, ns, n_boot, int(seed), level, out))
    return out.lo, out.hi


def vepd_permutation(real, sim, *, seed, n_perm=1000, real_strata=None, sim_strata=None):
    """Permutation test of real vs sim: (observed vepd, p-value)."""
    r, nr = _tests(real, "real")
    s, ns = _tests(sim, "sim")
    rs = None if real_strata is None else array_in(np.asarray(real_strata, np.uintp), "real_strata", np.uintp, n=nr)
    ss = None if sim_strata is None else array_in(np.asarray(sim_strata, np.uintp), "sim_strata", np.uintp, n=ns)
    out = ffi.new("sensim_vepd_perm *")
    check(lib.sensim_vepd_permutation(r, nr, ptr(rs, "size_t"), s, ns, ptr(ss, "size_t"), n_perm, int(seed), out))
    return out.vepd, out.p
