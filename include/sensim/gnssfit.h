/* sensim/gnssfit.h - GNSS noise parameters from a standstill log.
 *
 * Four estimators and an outlier filter, each on positions in local ENU
 * metres with their times (s, strictly increasing) and, for the last, the
 * logged HDOP:
 *
 * Chrono "Ch:RW" sigma (seed 004, appendix IV-A: "the standard deviation of
 * the second derivative of the real GPS's position using a standstill
 * test"). The second derivative is the three-point difference
 *   d2_k = 2 [ (p_{k+1}-p_k)/dt_k - (p_k-p_{k-1})/dt_{k-1} ] / (dt_k + dt_{k-1}).
 * Its standard deviation is NOT Chrono's sigma: Chrono integrates
 * a ~ N(., sigma^2) per inner step h = 1/model_rate (v += a h, e += v h), so
 * for an epoch spacing dt = m h,
 *   Var(d2) = sigma^2 (2 m^2 + 1) / (3 m^3)          (= sigma^2 when m = 1),
 * e.g. 0.067 sigma^2 for 10 Hz output of a 100 Hz model: seed 004's raw
 * statistic is 0.26 sigma there. The general factor (any dt, h, including a
 * short last step) comes from the linear map of the accelerations to the
 * epoch positions: the coefficient of step i (length s_i, starting at
 * tau_i) in p(t) is s_i (t - tau_i) for tau_i + s_i <= t. Two further
 * corrections fit the estimate to Chrono's process:
 *   - the pull-back mean -0.2 sigma e / D varies slowly and would add
 *     variance: d2 is centred within blocks of W = 20 epochs, and the
 *     expected block sum of squares (W Var(d2) - Var(sum d2) / W) is used;
 *   - at the velocity cap |v| = v_max Chrono rescales v, which removes the
 *     acceleration along v. Only the two components of d2 across the
 *     direction of the previous interval's mean velocity are used (that
 *     direction depends on earlier steps only, so for isotropic noise the
 *     two components hold exactly 2/3 of the variance); they pass the cap
 *     unchanged to first order. The direction turns a little during the
 *     two epochs d2 spans, so with seed 004's cap (active ~18% of the
 *     time) the estimate reads about 0.7% low; without caps it is unbiased.
 * When the acceleration clamp a_max is below ~3 sigma (Chrono's defaults:
 * a_max 0.005), the walk is driven by the clamped acceleration and the
 * estimate is the standard deviation of that (about a_max), not sigma.
 * The interval comes from the spread of the per-block sums of squares
 * (ratio estimator, delta method, normal quantile). The acceleration clamp
 * a_max and the pull-back scale D are not identifiable at the output rate.
 *
 * First-order Gauss-Markov per axis: exact AR(1) maximum likelihood for
 * uneven dt, x_k - mu = phi_k (x_{k-1} - mu) + sigma sqrt(1 - phi_k^2) w_k,
 * phi_k = exp(-dt_k / tau), stationary start, the unknown static position mu
 * profiled out (GLS). tau is profiled over a log grid; intervals are
 * profile-likelihood intervals (2 (Lmax - L) <= chi2_1 quantile) for tau and
 * for sigma. tau is flagged SENSIM_FIT_UNRESOLVED (with a note) when its
 * interval reaches beyond a third of the log's span: with the mean taken
 * from the data, a log of few correlation times gives tau and sigma low.
 * The lag-1 autocorrelation decides whether the axis is white
 * (Chrono "Ch:Gauss": |r1| < z / sqrt(n)); the white sigma is the sample
 * standard deviation with a chi-squared interval.
 *
 * Gauss-Markov plus white noise per axis (the NEO-M8N-like preset's
 * position_noise list): x_k = mu + g_k + v_k, g the first-order
 * Gauss-Markov above, v ~ N(0, sigma_white^2) independent. Exact Gaussian
 * likelihood by the Kalman filter of the scalar state g (prediction
 * P = phi^2 P + sigma_gm^2 (1 - phi^2) at each dt, innovation variance
 * F = P + sigma_white^2), stationary start; mu by GLS (the filter run on the
 * constant 1 beside the data gives the innovations' dependence on mu). The
 * likelihood is the restricted one (REML: plus -log(1' V^-1 1) / 2, n - 1
 * degrees of freedom), which allows for mu being estimated: the plain
 * likelihood reads tau about 9% low on a log of 15 correlation times and its
 * intervals cover less than they say. The overall scale is profiled out, so the maximum is over (log tau,
 * log(sigma_white / sigma_gm)) with GSL's Nelder-Mead simplex from the best
 * point of a coarse grid. tau's interval is the profile-likelihood one
 * (the ratio and the scale maximized at each tau; chi2_1 cut): on 15
 * correlation times it covers 96% at a nominal 95%, where the Wald one on
 * log tau covers 90%. The sigmas' intervals are Wald intervals on the log
 * scale from the observed information (numerical Hessian of the log
 * likelihood in log sigma_gm, log tau, log sigma_white); sigma_gm's
 * covers about 91% there (sigma_white's 96%). The white component's
 * significance is the likelihood ratio against the pure Gauss-Markov
 * maximum (sigma_white = 0, on the boundary: critical value the chi2_1
 * quantile at 1 - 2 alpha, the 50:50 mixture of chi2_0 and chi2_1); when
 * not significant, sigma_white is flagged SENSIM_FIT_UPPER with lo = 0.
 * tau is flagged SENSIM_FIT_UNRESOLVED by the same rule as above.
 *
 * Outliers (single-epoch jumps, as the model's `outliers` draws them) are
 * found before the fits: each epoch's residual from the median of its four
 * neighbours (two each side, fewer at the ends), per axis divided by the
 * robust standard deviation of the first differences (1.4826 MAD), and
 * combined over the three axes; an epoch whose combined residual exceeds
 * the threshold (default 6 robust standard deviations: for Gaussian noise
 * a false alarm per epoch below 1e-7) is rejected. The rate comes with a
 * Clopper-Pearson (exact binomial) interval; the magnitude is the median
 * size of the rejected residuals. The fits then skip the rejected epochs
 * (the Kalman filter and AR(1) take the longer gap as it is).
 *
 * AirSim HDOP low-pass: hdop(t) = final + (initial - final) exp(-(t - t0) / tau)
 * by nonlinear least squares (GSL gsl_multifit_nlinear, trust region with
 * Levenberg-Marquardt steps, tau as log tau so it stays positive); standard
 * errors from the Jacobian's covariance scaled by the residual variance,
 * intervals with the t quantile on n - 3 degrees of freedom (log-symmetric
 * for tau). `initial` is the value at t0 (the power-on time, which a log
 * does not record: callers pass the first time stamp when unknown).
 *
 * Errors (never NaN): too few samples, NaN or infinite values, times not
 * strictly increasing, constant data; the message names the array and the
 * first bad index. Callers prefix the file and dataset.
 *
 * Units: SI. Ownership: inputs are borrowed, results written to caller
 * structs. Thread safety: reentrant (no shared state). */
#ifndef SENSIM_GNSSFIT_H
#define SENSIM_GNSSFIT_H

#include <stddef.h>

#include "sensim/imufit.h"
#include "sensim/status.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Block length of the Ch:RW estimator (epochs). */
#define SENSIM_GNSS_RW_BLOCK 20
/* Fewest epochs the Ch:RW estimator takes: 10 blocks (the first second
 * difference has no earlier velocity and is skipped). */
#define SENSIM_GNSS_RW_MIN_EPOCHS (10 * SENSIM_GNSS_RW_BLOCK + 3)

typedef struct sensim_gnss_rw_fit {
    sensim_fit_param sigma; /* Chrono Ch:RW sigma, m/s^2 (flag OK or UPPER) */
    double d2_std;          /* seed 004's raw statistic: std of d2, m/s^2, pooled over the axes */
    double factor;          /* Var(d2) / sigma^2 for Chrono's model at dt and the model rate */
    double dt;              /* median epoch spacing, s */
    double max_velocity;    /* largest epoch-mean 3-D speed, m/s (the v_max estimate) */
    double saturated;       /* fraction of epochs whose mean speed is within 5% of
                               max_velocity (descriptive: the share at the cap) */
    size_t blocks;          /* blocks of SENSIM_GNSS_RW_BLOCK epochs used */
    char note[256];
} sensim_gnss_rw_fit;

/* Ch:RW sigma from n epochs t[n], enu[n*3] (all three axes pooled, as
 * Chrono uses one sigma). Needs SENSIM_GNSS_RW_MIN_EPOCHS (203) epochs. */
sensim_status sensim_gnss_fit_rw(const double *t, const double *enu, size_t n, double model_rate_hz,
                                 double confidence, sensim_gnss_rw_fit *fit);

/* Var(d2)/sigma^2 for Chrono's random walk with inner rate model_rate_hz
 * sampled every dt (no caps): the factor above. */
double sensim_gnss_rw_d2_factor(double dt, double model_rate_hz);

typedef struct sensim_gnss_gm_fit {
    sensim_fit_param sigma; /* Gauss-Markov stationary std, m */
    sensim_fit_param tau;   /* correlation time, s; UNRESOLVED flag when the
                               interval reaches the grid's ends */
    double mean;            /* the static position (ML), m */
    double loglik;          /* maximized log likelihood */
    double acf1;            /* lag-1 autocorrelation of x - mean */
    double acf1_bound;      /* z / sqrt(n): |acf1| below it reads as white */
    int white;              /* 1 when the axis reads as white noise */
    sensim_fit_param white_sigma; /* sample std with a chi-squared interval */
    char note[256];
} sensim_gnss_gm_fit;

/* Gauss-Markov and white fits of one axis: x[k * stride], k < n, at t[k].
 * Needs at least 20 samples. */
sensim_status sensim_gnss_fit_gm(const double *t, const double *x, size_t n, size_t stride, double confidence,
                                 sensim_gnss_gm_fit *fit);

/* Default outlier threshold, in robust standard deviations. */
#define SENSIM_GNSS_OUTLIER_THRESHOLD 6.0

typedef struct sensim_gnss_outlier_fit {
    size_t n;                 /* epochs examined */
    size_t rejected;          /* epochs flagged */
    sensim_fit_param rate;    /* rejected / n, Clopper-Pearson interval (flag UPPER when 0) */
    double magnitude;         /* median 3-D size of the rejected residuals, m (0 if none) */
    double scale[3];          /* robust std of the first differences per axis, m */
    double threshold;         /* in robust standard deviations */
} sensim_gnss_outlier_fit;

/* Flags single-epoch outliers in t[n], enu[n*3] (n >= 5): outlier[k] = 1
 * for a rejected epoch, else 0 (outlier may be NULL). threshold <= 0
 * means SENSIM_GNSS_OUTLIER_THRESHOLD. */
sensim_status sensim_gnss_find_outliers(const double *t, const double *enu, size_t n, double threshold,
                                        double confidence, unsigned char *outlier, sensim_gnss_outlier_fit *fit);

typedef struct sensim_gnss_gmw_fit {
    sensim_fit_param sigma_gm;    /* Gauss-Markov stationary std, m */
    sensim_fit_param tau;         /* its correlation time, s */
    sensim_fit_param sigma_white; /* white measurement noise std, m */
    double mean;                  /* the static position, m */
    double loglik;                /* joint maximum (restricted likelihood) */
    double loglik_gm;             /* its maximum with sigma_white = 0 */
    double lr, lr_crit;           /* 2 (loglik - loglik_gm) and its critical value */
    int white_significant;        /* lr > lr_crit */
    size_t n;                     /* epochs used (not skipped) */
    int iterations;               /* simplex iterations */
    char note[256];
} sensim_gnss_gmw_fit;

/* Gauss-Markov plus white fit of one axis x[k * stride] at t[k], k < n,
 * leaving out the epochs with skip[k] != 0 (skip may be NULL). Needs at
 * least 20 epochs left. */
sensim_status sensim_gnss_fit_gmw(const double *t, const double *x, size_t n, size_t stride,
                                  const unsigned char *skip, double confidence, sensim_gnss_gmw_fit *fit);

typedef struct sensim_gnss_hdop_fit {
    sensim_fit_param initial, final, tau; /* HDOP at t0, at convergence; time constant s */
    double t0;                            /* the reference (power-on) time used */
    double rms;                           /* residual rms */
    size_t n;
    int iterations;
    char note[256];
} sensim_gnss_hdop_fit;

/* Fits the low-pass to hdop[k] at t[k], k < n (at least 5 samples, t >= t0). */
sensim_status sensim_gnss_fit_hdop(const double *t, const double *hdop, size_t n, double t0, double confidence,
                                   sensim_gnss_hdop_fit *fit);

/* ---- a GNSS log's series (what sensim fit gnss reads) ---- */

typedef struct sensim_gnss_series {
    size_t n;
    double *t;            /* [n] s, finite and increasing */
    double *enu;          /* [n*3] m: /enu, or /lla converted about origin */
    double *hdop;         /* [n] or NULL without /hdop */
    double *cov;          /* [n*9] /position_covariance (m^2), or NULL */
    double rate;          /* the group's rate_hz attribute, 0 without one */
    double origin[3];     /* deg, deg, m: the group's origin_lla, else the
                             first /lla fix */
    int have_origin;      /* 0 only for /enu without origin_lla */
} sensim_gnss_series;

/* Reads /sensors/SENSOR of the log at path: t, enu [n,3] (or lla [n,3] deg,
 * deg, m, converted), hdop [n] and position_covariance [n,9] when present,
 * each checked against t's length. Errors name the file and dataset (and
 * row). Free with sensim_gnss_series_free (also after a failure). */
sensim_status sensim_gnss_series_read(const char *path, const char *sensor, sensim_gnss_series *out);
void sensim_gnss_series_free(sensim_gnss_series *s);

#ifdef __cplusplus
}
#endif
#endif
