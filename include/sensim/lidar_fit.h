/* sensim/lidar_fit.h - lidar range-noise calibration from repeated scans of a
 * static scene: per-point spread across scans, fitted to the AGX model
 * sigma = sigma_base + sigma_slope * range (seed 002 sec. 2.5) by weighted
 * least squares (GSL) with 95 % confidence intervals; per-beam range bias
 * when reference ranges are given; and the azimuth and elevation sigma from
 * returns on planar targets.
 *
 * Input layout: S scans of the same M returns in the same order (a static
 * sensor and scene: scan s, return i is ranges[s * M + i]); dropped returns
 * are NaN and excluded.
 *
 * Ownership: inputs borrowed for the call; outputs in caller arrays.
 * Thread safety: pure. */
#ifndef SENSIM_LIDAR_FIT_H
#define SENSIM_LIDAR_FIT_H

#include <stddef.h>
#include <stdint.h>

#include "sensim/status.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct sensim_lidar_fit_result {
    double sigma_base, sigma_base_ci;   /* m; ci = 95 % half-width */
    double sigma_slope, sigma_slope_ci; /* m/m */
    double chi2_dof;                    /* reduced chi-square of the fit */
    size_t points_used;                 /* returns with >= 3 finite scans */
    double range_min, range_max;        /* m, span of the fitted ranges */
    int constrained;                    /* 0: free fit; 1: the free slope was < 0, refitted
                                           with slope 0; 2: the free base was < 0,
                                           refitted with base 0 (ci 0 for the held term) */
    double base_free, slope_free;       /* the unconstrained line */
} sensim_lidar_fit_result;

/* ranges: nscans * npoints (NaN = missing). reference: npoints true ranges
 * or NULL. channel: npoints beam numbers < nbeams, or NULL (then one beam).
 * beam_bias, beam_sigma: nbeams outputs or NULL: mean (measured - reference)
 * (NAN without reference) and the pooled sd of each beam. Needs nscans >= 3
 * and at least 3 usable returns at 2 or more distinct ranges; a negative
 * range is refused (SENSIM_EDATA naming the scan and return). */
sensim_status sensim_lidar_fit_range(const float *ranges, size_t nscans, size_t npoints, const float *reference,
                                     const uint16_t *channel, size_t nbeams, double *beam_bias, double *beam_sigma,
                                     sensim_lidar_fit_result *r);

/* ---- angular sigma from planar targets ----
 *
 * An angular error moves a return across its surface; on a plane the
 * point-to-plane distance of return i then varies across scans with
 *   var(d_i) = sigma_r(r)^2 (u.n)^2 + sigma_az^2 (r cos(el) t_az.n)^2
 *            + sigma_el^2 (r t_el.n)^2
 * to first order, where u is the ray, t_az and t_el the unit tangents of
 * azimuth and elevation, n the plane's normal and sigma_r(r) the range
 * model (fitted first, sensim_lidar_fit_range). The same holds when the
 * sensor reports the nominal beam direction and the angular error shows as
 * a range change on the tilted plane. Each target's plane is fitted to the
 * scan-mean points (smallest principal axis); the per-return variances of d
 * over scans are regressed on the two angular terms by weighted least
 * squares (weights from var(s^2) = 2 sigma^4 / (n - 1), reweighted from the
 * fit), 95 % intervals from the covariance scaled by max(1, chi^2/dof) and
 * carried to the sigmas by the delta method. Targets must be tilted both
 * ways (about a vertical and a horizontal axis, as seen from the sensor) to
 * separate azimuth from elevation. */
typedef struct sensim_lidar_angular_result {
    double azimuth_sigma, azimuth_sigma_ci;     /* rad; ci = 95 % half-width */
    double elevation_sigma, elevation_sigma_ci; /* rad */
    double chi2_dof;
    size_t points_used;  /* returns on a target with >= 3 finite scans */
    size_t targets_used; /* targets with >= 3 such returns */
} sensim_lidar_angular_result;

/* points: nscans * npoints rows of (x, y, z, intensity) in the sensor frame
 * (the /sensors/NAME/points layout; NaN x = missing return). target:
 * npoints plane numbers < ntargets, or -1 for returns on no target.
 * planes: ntargets * 4 outputs or NULL: unit normal (pointing away from the
 * sensor) and offset d of n.p + d = 0 (NAN for an unused target). */
sensim_status sensim_lidar_fit_angular(const float *points, size_t nscans, size_t npoints, const int32_t *target,
                                       size_t ntargets, double range_sigma_base, double range_sigma_slope,
                                       double *planes, sensim_lidar_angular_result *r);

/* Range and angular noise fitted together on the planar targets, for
 * lidars that report the encoder angles while the beam itself is deflected
 * (beam-pointing jitter): the raw range of such a return then moves by
 * r (n.du) / (u.n) across scans, which a range-only fit takes for range
 * noise (base and slope wrong by factors, the angular sigmas then low).
 * Per return the point-to-plane variance is modelled as
 *   g (b + s r)^2 + sigma_az^2 A + sigma_el^2 B,  g = (u.n)^2,
 * with A, B as above, and b, s, sigma_az^2, sigma_el^2 >= 0 fitted by
 * iteratively reweighted Gauss-Newton (weights dof / (2 E^2)); 95 %
 * intervals from the covariance scaled by max(1, chi^2/dof), the angular
 * ones carried to the sigmas by the delta method. base0, slope0: the
 * starting line (e.g. sensim_lidar_fit_range's; 0 for none). range gets
 * sigma_base, sigma_slope with their ci, chi2_dof, points_used and the range
 * span (constrained 0, base_free/slope_free the same line); angular the
 * sigmas. Needs at least 5 returns on targets at several ranges and
 * incidence angles, tilted both ways. */
sensim_status sensim_lidar_fit_joint(const float *points, size_t nscans, size_t npoints, const int32_t *target,
                                     size_t ntargets, double base0, double slope0, double *planes,
                                     sensim_lidar_fit_result *range, sensim_lidar_angular_result *angular);

/* The plane of each target and how flat it is, to choose planar targets
 * and to give reference ranges. Same inputs as sensim_lidar_fit_angular.
 * planes: ntargets * 4 (as there; NAN for a target with < 3 returns seen in
 * >= 3 scans). flatness: ntargets or NULL: the mean squared distance of the
 * scan-mean points from their plane over its expectation from the scatter
 * across scans, sum(mean_d^2) / sum(var_d / n) times (m / (m - 3)) for m
 * returns: about 1 for a plane, far above for a curved or folded surface;
 * INFINITY when the returns do not scatter and the means are off the plane
 * by more than 1e-6 (1 m + their mean range) RMS (float rounding), 1 when
 * they do not scatter and lie on it; NAN
 * for an unused target or m <= 3. flatness_sd: ntargets or NULL: the
 * flatness's standard deviation for a true plane, sqrt(2 sum v_i^2) / sum
 * v_i with v_i the variance of return i's mean (NAN without scatter).
 * count: ntargets or NULL: returns used.
 * reference: npoints or NULL: where the return's mean ray meets its
 * target's plane (m), NAN off the targets and at incidence angles over
 * 75 deg, where a tilt of the fitted plane moves it most (for sensim_lidar_fit_range's
 * per-beam bias, relative to the planes the same data made). */
sensim_status sensim_lidar_fit_planes(const float *points, size_t nscans, size_t npoints, const int32_t *target,
                                      size_t ntargets, double *planes, double *flatness, double *flatness_sd,
                                      size_t *count, float *reference);

/* ---- a log's repeated scans of a static scene (what sensim fit lidar reads) ---- */

/* The label of a return from the air (sensim render's object for none). */
#define SENSIM_LIDAR_NO_TARGET 4294967295.0

typedef struct sensim_log sensim_log; /* sensim/log.h */

typedef struct sensim_lidar_scans {
    char sensor[256];   /* the group under /sensors */
    size_t nscans;      /* S */
    size_t npoints;     /* P: returns per scan, the same in every scan */
    float *range;       /* [S*P] m: /range, or the norm of /points without it */
    float *points;      /* [S*P*4] x y z intensity, or NULL: read when there
                           is no range or there are labels (NULL if absent) */
    uint16_t *channel;  /* [P] the beam of each return of a scan, or NULL */
    size_t nbeams;      /* 1 + the largest channel; 0 without channels */
    char labels[600];   /* the label dataset (/sensors/NAME/object or
                           target); "" without labels */
    int32_t *target;    /* [P] the target of each return (index into
                           objects), -1 for none; NULL without labels */
    double *objects;    /* [nobjects] the distinct objects scan 0 hit, sorted */
    size_t nobjects;
} sensim_lidar_scans;

/* Reads the scans of lidar `sensor` (NULL: the only /sensors group with a
 * scan_offset) of `log`: scan_offset (from 0, every scan the same number of
 * returns: missing ones are NaN ranges), ranges, channels and per-return
 * labels (one per return, each an object number, -1 or
 * SENSIM_LIDAR_NO_TARGET for none, alike in every scan). `want` (sorted, nwant
 * object numbers; NULL: all) picks the objects kept as targets: each must be
 * hit. Errors name the file, dataset and row. Free with
 * sensim_lidar_scans_free (also after a failure). */
sensim_status sensim_lidar_scans_read(const sensim_log *log, const char *sensor, const double *want, size_t nwant,
                                      sensim_lidar_scans *out);
void sensim_lidar_scans_free(sensim_lidar_scans *s);

/* The automatic choice of planar targets: at least SENSIM_LIDAR_MIN_TARGET_RETURNS
 * returns, flatness at most SENSIM_LIDAR_MAX_FLATNESS and within
 * SENSIM_LIDAR_FLATNESS_SDS of its standard deviations above 1 (from
 * sensim_lidar_fit_planes: flatness, flatness_sd, count per object). Returns
 * of the other objects get target -1. */
#define SENSIM_LIDAR_MIN_TARGET_RETURNS 10
#define SENSIM_LIDAR_MAX_FLATNESS 3.0
#define SENSIM_LIDAR_FLATNESS_SDS 4.0
void sensim_lidar_scans_keep_flat(sensim_lidar_scans *s, const double *flatness, const double *flatness_sd,
                                  const size_t *count);
/* The objects some return still has as its target. */
size_t sensim_lidar_scans_targets_used(const sensim_lidar_scans *s);

/* ---- the whole fit of sensim fit lidar ---- */

typedef struct sensim_lidar_scans_fit_result {
    sensim_lidar_fit_result range;     /* the range line: fitted jointly with the angular
                                          noise on the targets when joint, else from all returns */
    sensim_lidar_fit_result range_all; /* the range-only line of all returns */
    int joint;                         /* range and angular noise fitted together */
    int angular;                       /* ang holds fitted azimuth and elevation sigmas */
    sensim_lidar_angular_result ang;
    double *beam_sigma;                /* [nbeams] each beam's range sd; NULL without channels */
    double *beam_bias;                 /* [nbeams] against the target planes (NAN without them);
                                          NULL without channels */
    double *planes;                    /* [4 * nobjects] the targets' planes (NAN rows: not used);
                                          NULL without labelled points */
    double *flatness;                  /* [nobjects] as sensim_lidar_fit_planes; NULL as planes */
    char angular_note[1024];           /* without angular: why not */
    char joint_note[1024];             /* with angular but not joint: why not */
    char fit_note[512];                /* "" or a warning: chi2/dof far above 1 */
} sensim_lidar_scans_fit_result;

/* The fit sensim fit lidar makes of scans read by sensim_lidar_scans_read:
 * with labelled points, the planes of the objects (named = NULL: keeping
 * the flat ones, sensim_lidar_scans_keep_flat, which changes sc->target);
 * the range line (sensim_lidar_fit_range, against the planes when there
 * are targets); then range and angular noise jointly on the targets
 * (sensim_lidar_fit_joint) or, failing that, the angular sigmas alone
 * (sensim_lidar_fit_angular). The automatic choice falls back to the range
 * line and says why in angular_note; named targets (named: how the caller
 * names them, for the error, e.g. "--targets 1,2") must give the angular
 * fit. Errors name sc->labels or /sensors/NAME, not the file. Free r with
 * sensim_lidar_scans_fit_free (also after a failure). */
sensim_status sensim_lidar_scans_fit(sensim_lidar_scans *sc, const char *named, sensim_lidar_scans_fit_result *r);
void sensim_lidar_scans_fit_free(sensim_lidar_scans_fit_result *r);

#ifdef __cplusplus
}
#endif
#endif
