/* sensim/imufit.h - IMU noise parameters from an Allan-deviation curve.
 *
 * The five-term model of IEEE Std 952 / 1293 (MODELS.md):
 *   AVAR(tau) = 3 Q^2 / tau^2 + N^2 / tau + (2 ln 2 / pi) B^2 + K^2 tau / 3 + R^2 tau^2 / 2
 * is linear in the squares c = (3Q^2, N^2, 0.4413 B^2, K^2/3, R^2/2). The fit
 * is weighted least squares on the Allan variance with Var(AVAR_i) =
 * 2 AVAR_model(tau_i)^2 / edf_i (chi-squared with edf_i degrees of freedom,
 * SP 1065 eq. 44), reweighted from the model twice, under c >= 0 (exact
 * non-negative least squares by trying every subset of the five terms).
 * Intervals: c_k +- z sd_k from the unconstrained fit of every selected
 * term (an interval from the non-negative subset alone would assume the
 * terms it dropped are exactly 0, which biased N low), with the covariance
 * scaled by the reduced chi-squared when it exceeds 1 (the Birge ratio) and
 * by the overlap correlation of neighbouring taus, widened to hold the
 * point estimate, mapped through the square root, lower end clipped at 0.
 * The B term is IEEE 952 Annex C's with a cutoff f0 (rate PSD B^2/(2 pi f)
 * up to f0): the fit is profiled over f0 (flat, and 6 per decade from
 * 30/tau0 down to 1/tau_max); the point estimate takes the f0 of least
 * chi-squared and each interval is the union over every f0 within z^2
 * (scaled) of it, so a flicker floor that stops short of tau0 no longer
 * pulls N low.
 *
 * A term is reported as
 *   SENSIM_FIT_OK          identified: interval excludes 0;
 *   SENSIM_FIT_UPPER       consistent with 0: value (maybe 0) and an upper bound;
 *   SENSIM_FIT_UNRESOLVED  the tau range cannot separate it (too few points):
 *                          value, lo and hi are 0 and `note` says why.
 * No output is ever NaN.
 *
 * The classic graphical read-offs are available for comparison: N = the
 * slope -1/2 line at tau = 1 s, K = the slope +1/2 line at tau = 3 s,
 * B = min ADEV / 0.664, Q = slope -1 line at tau = sqrt(3) s, R = slope +1
 * line at tau = sqrt(2) s, each through the point whose local slope is
 * closest to the term's.
 *
 * Gauss-Markov fit: AVAR = N^2/tau + GM(sigma, T) with the continuous-time
 * first-order Gauss-Markov Allan variance
 *   (sigma^2 T^2 / tau^2) (2 tau/T - 3 + 4 e^{-tau/T} - e^{-2 tau/T}),
 * T by a profile of the weighted chi-squared over a log grid, intervals from
 * the profile (chi2 <= min + z^2 s) and, for sigma, the union of conditional
 * intervals over T's interval.
 *
 * Units: as the data (rad/s for a gyro: N rad/s/sqrt(Hz), B rad/s, K
 * rad/s^2/sqrt(Hz), Q rad, R rad/s^2). Ownership: inputs borrowed, outputs
 * written to caller structs. Thread safety: reentrant. */
#ifndef SENSIM_IMUFIT_H
#define SENSIM_IMUFIT_H

#include <stddef.h>

#include "sensim/allan.h"
#include "sensim/status.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum sensim_imu_term {
    SENSIM_TERM_Q = 0, /* quantization */
    SENSIM_TERM_N,     /* white noise (angle/velocity random walk) */
    SENSIM_TERM_B,     /* bias instability */
    SENSIM_TERM_K,     /* rate random walk */
    SENSIM_TERM_R,     /* rate ramp */
    SENSIM_TERM_COUNT
} sensim_imu_term;

typedef enum sensim_fit_flag {
    SENSIM_FIT_OK = 0,
    SENSIM_FIT_UPPER,
    SENSIM_FIT_UNRESOLVED
} sensim_fit_flag;

typedef struct sensim_fit_param {
    double value, lo, hi;
    sensim_fit_flag flag;
} sensim_fit_param;

typedef struct sensim_imu_fit {
    sensim_fit_param term[SENSIM_TERM_COUNT];
    double classic[SENSIM_TERM_COUNT]; /* graphical read-offs; 0 where no point has the slope */
    double chi2;                        /* weighted chi-squared at the solution */
    int dof;                            /* points minus fitted terms */
    double scale;                       /* variance inflation applied (>= 1) */
    char note[256];                     /* which terms are unidentifiable and why; "" if none */
} sensim_imu_fit;

typedef struct sensim_imu_fit_opts {
    double confidence;  /* two-sided level of the intervals; default 0.95 */
    unsigned terms;     /* bit mask of sensim_imu_term to fit; default all five */
} sensim_imu_fit_opts;

sensim_imu_fit_opts sensim_imu_fit_default_opts(void);

/* "quantization", "noise_density", ... (the sensim YAML keys), "Q", "N", ... */
const char *sensim_imu_term_key(sensim_imu_term t);
const char *sensim_imu_term_symbol(sensim_imu_term t);

/* The model's Allan variance at tau for parameters p[Q, N, B, K, R]. */
double sensim_imu_avar(const double p[SENSIM_TERM_COUNT], double tau);

/* Fits the five-term model to Allan points (use OADEV; tau, dev, edf read).
 * Needs at least 2 points with dev > 0. */
sensim_status sensim_imu_fit_allan(const sensim_allan_point *pt, size_t n, const sensim_imu_fit_opts *o,
                                   sensim_imu_fit *fit);

typedef struct sensim_gm_fit {
    sensim_fit_param sigma; /* stationary std of the Gauss-Markov bias */
    sensim_fit_param tau;   /* correlation time, s */
    sensim_fit_param white; /* white noise density N */
    double chi2;
    int dof;
    char note[256];
} sensim_gm_fit;

/* Continuous-time Gauss-Markov Allan variance (formula above). */
double sensim_gm_avar(double sigma, double T, double tau);

/* Fits white noise plus one Gauss-Markov process; confidence as above. */
sensim_status sensim_gm_fit_allan(const sensim_allan_point *pt, size_t n, double confidence, sensim_gm_fit *fit);

#ifdef __cplusplus
}
#endif
#endif
