"""Fits of noise parameters: IMU (Allan curve), GNSS (standstill log),
camera (photon transfer, EMVA 1288) and lidar (repeated scans). Each returns
a result object whose parameters are Param(value, lo, hi, status), status
"ok" (identified), "upper" (consistent with zero: value and an upper bound)
or "unresolved" (not separable with these data; see .note)."""
from collections import namedtuple

import numpy as np

from ._core import FLAG_NAMES, array_in, check, ffi, lib, ptr, text
from .allan import AllanResult, allan

Param = namedtuple("Param", "value lo hi status")


def _param(p):
    return Param(float(p.value), float(p.lo), float(p.hi), FLAG_NAMES[int(p.flag)])


def _ci(value, half, status="ok"):
    return Param(float(value), float(value - half), float(value + half), status)


class FitResult:
    """Named parameters (attributes and .params), scalars and a note; fits
    whose library result is a value and a 95 % half-width also keep the
    half-widths in .ci."""

    def __init__(self, kind, params, **extra):
        self.kind = kind
        self.params = params
        for k, v in params.items():
            setattr(self, k, v)
        for k, v in extra.items():
            setattr(self, k, v)
        self._extra = list(extra)

    @property
    def values(self):
        return {k: p.value for k, p in self.params.items()}

    @property
    def intervals(self):
        return {k: (p.lo, p.hi) for k, p in self.params.items()}

    @property
    def status(self):
        return {k: p.status for k, p in self.params.items()}

    def __repr__(self):
        body = ", ".join("%s=%.6g [%.6g, %.6g] %s" % (k, *p) for k, p in self.params.items())
        return "%s(%s)" % (self.kind, body)


def _points(curve):
    if not isinstance(curve, AllanResult):
        raise TypeError("expected an AllanResult (sensim.allan(...))")
    if curve.points.ndim != 1:
        raise ValueError("one axis at a time: use curve.axis(a)")
    pts = np.ascontiguousarray(curve.points)
    return pts, ffi.cast("sensim_allan_point *", ffi.from_buffer(pts))


def fit_imu_allan(curve, confidence=0.95, terms=None):
    """The five-term IEEE 952 model (quantization Q, noise_density N,
    bias_instability B, random_walk K, rate_ramp R) fitted to an OADEV curve
    of one axis. terms: the keys to fit (default all)."""
    pts, cp = _points(curve)
    o = ffi.new("sensim_imu_fit_opts *", lib.sensim_imu_fit_default_opts())
    o.confidence = confidence
    keys = [text(lib.sensim_imu_term_key(i)) for i in range(lib.SENSIM_TERM_COUNT)]
    if terms is not None:
        bad = [t for t in terms if t not in keys]
        if bad:
            raise ValueError("terms: unknown %s (known: %s)" % (", ".join(bad), ", ".join(keys)))
        o.terms = sum(1 << keys.index(t) for t in terms)
    f = ffi.new("sensim_imu_fit *")
    check(lib.sensim_imu_fit_allan(cp, len(pts), o, f))
    return FitResult("ImuFit", {keys[i]: _param(f.term[i]) for i in range(len(keys))},
                     classic={keys[i]: float(f.classic[i]) for i in range(len(keys))}, chi2=float(f.chi2),
                     dof=int(f.dof), scale=float(f.scale), note=text(f.note))


def fit_imu(x, rate, confidence=0.95, terms=None, **allan_kw):
    """fit_imu_allan on the OADEV of x [n] or each axis of x [n, k] (rate
    samples at `rate` Hz, octave grid, as `sensim fit imu`); a list for
    several axes."""
    curve = allan(x, rate, dev="oadev", **allan_kw)
    if curve.points.ndim == 1:
        return fit_imu_allan(curve, confidence, terms)
    return [fit_imu_allan(curve.axis(a), confidence, terms) for a in range(curve.points.shape[0])]


def fit_gauss_markov_allan(curve, confidence=0.95):
    """White noise plus one Gauss-Markov process fitted to an Allan curve."""
    pts, cp = _points(curve)
    f = ffi.new("sensim_gm_fit *")
    check(lib.sensim_gm_fit_allan(cp, len(pts), confidence, f))
    return FitResult("GaussMarkovFit", {"sigma": _param(f.sigma), "tau": _param(f.tau), "white": _param(f.white)},
                     chi2=float(f.chi2), dof=int(f.dof), note=text(f.note))


# ---- GNSS ----

def _t_enu(t, enu):
    t = array_in(t, "t")
    return t, array_in(enu, "enu", tail=(3,), n=t.shape[0])


def fit_gnss_rw(t, enu, model_rate_hz=100.0, confidence=0.95):
    """Chrono Ch:RW sigma from a standstill log: t [n] s, enu [n, 3] m."""
    t, enu = _t_enu(t, enu)
    f = ffi.new("sensim_gnss_rw_fit *")
    check(lib.sensim_gnss_fit_rw(ptr(t), ptr(enu), t.shape[0], model_rate_hz, confidence, f))
    return FitResult("GnssRwFit", {"sigma": _param(f.sigma)}, d2_std=f.d2_std, factor=f.factor, dt=f.dt,
                     max_velocity=f.max_velocity, saturated=f.saturated, blocks=int(f.blocks), note=text(f.note))


def fit_gnss_gm(t, x, confidence=0.95):
    """First-order Gauss-Markov (and white) fit of one axis x [n] at t [n]."""
    t = array_in(t, "t")
    x = array_in(x, "x", n=t.shape[0])
    f = ffi.new("sensim_gnss_gm_fit *")
    check(lib.sensim_gnss_fit_gm(ptr(t), ptr(x), t.shape[0], 1, confidence, f))
    return FitResult("GnssGmFit", {"sigma": _param(f.sigma), "tau": _param(f.tau),
                                   "white_sigma": _param(f.white_sigma)},
                     mean=f.mean, loglik=f.loglik, acf1=f.acf1, acf1_bound=f.acf1_bound, white=bool(f.white),
                     note=text(f.note))


def fit_gnss_gmw(t, x, skip=None, confidence=0.95):
    """Gauss-Markov plus white noise fit of one axis (skip [n]: epochs left out)."""
    t = array_in(t, "t")
    x = array_in(x, "x", n=t.shape[0])
    sk = None if skip is None else array_in(np.asarray(skip, dtype=np.uint8), "skip", np.uint8, n=t.shape[0])
    f = ffi.new("sensim_gnss_gmw_fit *")
    check(lib.sensim_gnss_fit_gmw(ptr(t), ptr(x), t.shape[0], 1, ptr(sk, "unsigned char"), confidence, f))
    return FitResult("GnssGmwFit", {"sigma_gm": _param(f.sigma_gm), "tau": _param(f.tau),
                                    "sigma_white": _param(f.sigma_white)},
                     mean=f.mean, loglik=f.loglik, loglik_gm=f.loglik_gm, lr=f.lr, lr_crit=f.lr_crit,
                     white_significant=bool(f.white_significant), n=int(f.n), iterations=int(f.iterations),
                     note=text(f.note))


def find_gnss_outliers(t, enu, threshold=0.0, confidence=0.95):
    """Single-epoch outliers: (mask [n] bool, FitResult with the rate)."""
    t, enu = _t_enu(t, enu)
    mask = np.zeros(t.shape[0], dtype=np.uint8)
    f = ffi.new("sensim_gnss_outlier_fit *")
    check(lib.sensim_gnss_find_outliers(ptr(t), ptr(enu), t.shape[0], threshold, confidence,
                                        ptr(mask, "unsigned char"), f))
    return mask.astype(bool), FitResult("GnssOutlierFit", {"rate": _param(f.rate)}, n=int(f.n),
                                        rejected=int(f.rejected), magnitude=f.magnitude,
                                        scale=tuple(f.scale), threshold=f.threshold)


def fit_gnss_hdop(t, hdop, t0=None, confidence=0.95):
    """AirSim's HDOP low-pass: initial, final, tau."""
    t = array_in(t, "t")
    h = array_in(hdop, "hdop", n=t.shape[0])
    f = ffi.new("sensim_gnss_hdop_fit *")
    check(lib.sensim_gnss_fit_hdop(ptr(t), ptr(h), t.shape[0], t[0] if t0 is None else t0, confidence, f))
    return FitResult("GnssHdopFit", {"initial": _param(f.initial), "final": _param(f.final), "tau": _param(f.tau)},
                     t0=f.t0, rms=f.rms, n=int(f.n), iterations=int(f.iterations), note=text(f.note))


# ---- camera: photon transfer ----

_PIXEL = {np.dtype(np.uint8): lib.SENSIM_PIXEL_U8, np.dtype(np.uint16): lib.SENSIM_PIXEL_U16,
          np.dtype(np.float32): lib.SENSIM_PIXEL_F32}


def ptc_level(a, b, dark_a=None, dark_b=None, exposure=0.0):
    """Statistics of one exposure level from two light frames and two dark
    frames (any shape, same dtype: uint8, uint16 or float32); a dict."""
    a = np.ascontiguousarray(a)
    if a.dtype not in _PIXEL:
        raise TypeError("a: dtype %s; expected uint8, uint16 or float32" % a.dtype)
    fr = []
    for nm, f in (("b", b), ("dark_a", dark_a), ("dark_b", dark_b)):
        if f is None:
            fr.append(None)
            continue
        f = np.ascontiguousarray(f)
        if f.dtype != a.dtype or f.size != a.size:
            raise ValueError("%s: %s %s; expected %s like a" % (nm, f.dtype, f.shape, a.shape))
        fr.append(f)
    lv = ffi.new("sensim_ptc_level *")
    check(lib.sensim_ptc_level_compute(_PIXEL[a.dtype], a.size, ptr(a, "char"), ptr(fr[0], "char"),
                                       ptr(fr[1], "char"), ptr(fr[2], "char"), exposure, lv))
    return lv[0]


def fit_camera(light, dark, exposure, full_scale=None):
    """EMVA 1288 photon-transfer fit. light and dark: [levels, 2, H, W] frame
    pairs (the /stack/light and /stack/dark layouts of sensim-fit(1), reshaped)
    or dark None; exposure [levels] s. full_scale: the DN of intensity 1
    (default by dtype: 255, 65535 or 1)."""
    light = np.ascontiguousarray(light)
    exposure = array_in(exposure, "exposure")
    L = exposure.shape[0]
    if light.ndim < 3 or light.shape[0] != L or light.shape[1] != 2:
        raise ValueError("light: shape %s; expected [%d, 2, H, W]" % (light.shape, L))
    if dark is not None:
        dark = np.ascontiguousarray(dark)
        if dark.shape != light.shape:
            raise ValueError("dark: shape %s; expected %s like light" % (dark.shape, light.shape))
    levels = ffi.new("sensim_ptc_level[]", L)
    for k in range(L):
        levels[k] = ptc_level(light[k, 0], light[k, 1], None if dark is None else dark[k, 0],
                              None if dark is None else dark[k, 1], exposure[k])
    if full_scale is None:
        full_scale = {np.dtype(np.uint8): 255.0, np.dtype(np.uint16): 65535.0}.get(light.dtype, 1.0)
    r = ffi.new("sensim_ptc_result *")
    check(lib.sensim_ptc_fit(levels, L, full_scale, r))
    nan = float("nan")
    return FitResult("CameraFit", {
        "gain": _ci(r.gain, r.gain_ci), "read_noise": _ci(r.read_noise, r.read_noise_ci),
        "dark_current": _ci(r.dark_current, r.dark_current_ci),
        "variance_slope": _ci(r.variance_slope, r.variance_slope_ci),
        "variance_intercept": _ci(r.variance_intercept, r.variance_intercept_ci),
        "prnu": Param(r.prnu, nan, nan, "ok"), "dsnu": Param(r.dsnu, nan, nan, "ok")},
        dark_offset=r.dark_offset, saturation_dn=r.saturation_dn, saturation_capacity=r.saturation_capacity,
        saturation_reached=bool(r.saturation_reached), levels_used=int(r.levels_used),
        quantization_limited=bool(r.quantization_limited), min_temporal_var_dn2=r.min_temporal_var_dn2,
        ci={"gain": r.gain_ci, "read_noise": r.read_noise_ci, "dark_current": r.dark_current_ci,
            "variance_slope": r.variance_slope_ci, "variance_intercept": r.variance_intercept_ci})


# ---- lidar ----

def fit_lidar_range(ranges, reference=None, channel=None, nbeams=None):
    """Range-noise sigma = base + slope * range from ranges [scans, points]
    float32 (NaN = missing); per-beam bias and sigma with reference ranges
    [points] and channel [points] (uint16)."""
    r = np.ascontiguousarray(ranges)
    if r.dtype != np.float32:
        raise TypeError("ranges: dtype %s; expected float32" % r.dtype)
    if r.ndim != 2:
        raise ValueError("ranges: shape %s; expected [scans, points]" % (r.shape,))
    S, M = r.shape
    ref = None if reference is None else array_in(reference, "reference", np.float32, n=M)
    ch = None if channel is None else array_in(channel, "channel", np.uint16, n=M)
    nb = (int(ch.max()) + 1 if ch is not None and M else 1) if nbeams is None else int(nbeams)
    bias, sig = np.full(nb, np.nan), np.full(nb, np.nan)
    res = ffi.new("sensim_lidar_fit_result *")
    check(lib.sensim_lidar_fit_range(ptr(r, "float"), S, M, ptr(ref, "float"), ptr(ch, "uint16_t"), nb,
                                     ptr(bias), ptr(sig), res))
    return FitResult("LidarRangeFit", {"sigma_base": _ci(res.sigma_base, res.sigma_base_ci),
                                       "sigma_slope": _ci(res.sigma_slope, res.sigma_slope_ci)},
                     chi2_dof=res.chi2_dof, points_used=int(res.points_used), range_min=res.range_min,
                     range_max=res.range_max, constrained=int(res.constrained), beam_bias=bias, beam_sigma=sig,
                     ci={"sigma_base": res.sigma_base_ci, "sigma_slope": res.sigma_slope_ci})


def _scan_points(points, target):
    p = np.ascontiguousarray(points)
    if p.dtype != np.float32:
        raise TypeError("points: dtype %s; expected float32" % p.dtype)
    if p.ndim != 3 or p.shape[2] != 4:
        raise ValueError("points: shape %s; expected [scans, points, 4]" % (p.shape,))
    return p, array_in(target, "target", np.int32, n=p.shape[1])


def fit_lidar_joint(points, target, ntargets, base0=0.0, slope0=0.0):
    """Range and angular noise fitted together on planar targets, as
    `sensim fit lidar` does when targets are given: right under
    beam-pointing jitter, where a range-only line takes the beam's motion for
    range noise. points [scans, npoints, 4] float32, target [npoints] int32
    (-1: none); base0, slope0 the starting line (fit_lidar_range's). Returns
    (range, angular): range with sigma_base, sigma_slope and chi2_dof, angular
    with azimuth_sigma, elevation_sigma and chi2_dof, each value with its 95 %
    interval."""
    p, tg = _scan_points(points, target)
    S, M = p.shape[:2]
    planes = np.full((ntargets, 4), np.nan)
    rr = ffi.new("sensim_lidar_fit_result *")
    ar = ffi.new("sensim_lidar_angular_result *")
    check(lib.sensim_lidar_fit_joint(ptr(p, "float"), S, M, ptr(tg, "int32_t"), ntargets, base0, slope0,
                                     ptr(planes), rr, ar))
    rng = FitResult("LidarRangeFit", {"sigma_base": _ci(rr.sigma_base, rr.sigma_base_ci),
                                      "sigma_slope": _ci(rr.sigma_slope, rr.sigma_slope_ci)},
                    chi2_dof=rr.chi2_dof, points_used=int(rr.points_used),
                    ci={"sigma_base": rr.sigma_base_ci, "sigma_slope": rr.sigma_slope_ci})
    ang = FitResult("LidarAngularFit", {"azimuth_sigma": _ci(ar.azimuth_sigma, ar.azimuth_sigma_ci),
                                        "elevation_sigma": _ci(ar.elevation_sigma, ar.elevation_sigma_ci)},
                    chi2_dof=ar.chi2_dof, points_used=int(ar.points_used), targets_used=int(ar.targets_used),
                    planes=planes, ci={"azimuth_sigma": ar.azimuth_sigma_ci,
                                       "elevation_sigma": ar.elevation_sigma_ci})
    return rng, ang


def fit_lidar_planes(points, target, ntargets):
    """The plane of each target and how flat it is (to choose planar
    targets): points [scans, npoints, 4] float32, target [npoints] int32
    (-1: none). Returns a dict: planes [ntargets, 4] (unit normal, offset),
    flatness and flatness_sd [ntargets] (about 1 and its sd for a plane),
    count [ntargets], reference [npoints] (float32: where each return's mean
    ray meets its plane, the reference ranges of fit_lidar_range)."""
    p, tg = _scan_points(points, target)
    S, M = p.shape[:2]
    out = {"planes": np.full((ntargets, 4), np.nan), "flatness": np.full(ntargets, np.nan),
           "flatness_sd": np.full(ntargets, np.nan), "count": np.zeros(ntargets, np.uintp),
           "reference": np.full(M, np.nan, np.float32)}
    check(lib.sensim_lidar_fit_planes(ptr(p, "float"), S, M, ptr(tg, "int32_t"), ntargets, ptr(out["planes"]),
                                      ptr(out["flatness"]), ptr(out["flatness_sd"]), ptr(out["count"], "size_t"),
                                      ptr(out["reference"], "float")))
    return out


def fit_lidar_angular(points, target, ntargets, range_sigma_base, range_sigma_slope):
    """Azimuth and elevation sigma from returns on planar targets: points
    [scans, npoints, 4] float32, target [npoints] int32 (-1: none), and the
    range model's sigma_base and sigma_slope (fit_lidar_range)."""
    p, tg = _scan_points(points, target)
    S, M = p.shape[:2]
    planes = np.full((ntargets, 4), np.nan)
    res = ffi.new("sensim_lidar_angular_result *")
    check(lib.sensim_lidar_fit_angular(ptr(p, "float"), S, M, ptr(tg, "int32_t"), ntargets, range_sigma_base,
                                       range_sigma_slope, ptr(planes), res))
    return FitResult("LidarAngularFit", {"azimuth_sigma": _ci(res.azimuth_sigma, res.azimuth_sigma_ci),
                                         "elevation_sigma": _ci(res.elevation_sigma, res.elevation_sigma_ci)},
                     chi2_dof=res.chi2_dof, points_used=int(res.points_used), targets_used=int(res.targets_used),
                     planes=planes, ci={"azimuth_sigma": res.azimuth_sigma_ci,
                                        "elevation_sigma": res.elevation_sigma_ci})
