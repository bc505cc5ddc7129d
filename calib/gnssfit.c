/* GNSS noise parameters from a standstill log (see sensim/gnssfit.h).
 *
 * Sources: seed 004 (VEPD, appendix IV-A) for the Ch:RW sigma as the std of
 * the second derivative of a standstill position log; Chrono::Sensor
 * ChNoiseRandomWalks::AddNoise for the process that sigma parametrizes
 * (MODELS.md "GNSS"); AirSim GpsSimple for the EPH low-pass; the exact
 * discretization of a first-order Gauss-Markov process for the AR(1)
 * likelihood (as models/gnss.c simulates it); the Kalman filter's
 * prediction-error decomposition of the Gaussian likelihood (Harvey,
 * "Forecasting, structural time series models and the Kalman filter",
 * 1989, section 3.4) for Gauss-Markov plus white noise; Clopper and
 * Pearson (1934) for the outlier rate's interval. */
#include "sensim/gnssfit.h"
#include "sensim/quantile.h"

#include <gsl/gsl_blas.h>
#include <gsl/gsl_cdf.h>
#include <gsl/gsl_multifit_nlinear.h>
#include <gsl/gsl_multimin.h>
#include <gsl/gsl_vector.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

static double zq(double confidence)
{
    SENSIM_GSL_QUIET_SCOPE();
    return gsl_cdf_ugaussian_Pinv(0.5 + confidence / 2);
}

static double chisq_q(double p, double k)
{
    return sensim_chisq_quantile(p, k);
}

static sensim_status check_conf(double confidence)
{
    if (!(confidence > 0.0 && confidence < 1.0))
        return sensim_error(SENSIM_EINVAL, "confidence must be in (0, 1), got %g", confidence);
    return SENSIM_OK;
}

/* Times finite and strictly increasing. */
static sensim_status check_times(const double *t, size_t n)
{
    for (size_t k = 0; k < n; k++) {
        if (!isfinite(t[k]))
            return sensim_error(SENSIM_EDATA, "t[%zu] is %g (not finite)", k, t[k]);
        if (k && !(t[k] > t[k - 1]))
            return sensim_error(SENSIM_EDATA, "t is not strictly increasing: t[%zu] = %.9g after t[%zu] = %.9g", k,
                                t[k], k - 1, t[k - 1]);
    }
    return SENSIM_OK;
}

static sensim_status check_values(const char *what, const double *x, size_t n, size_t stride, size_t ncol)
{
    for (size_t k = 0; k < n; k++)
        for (size_t a = 0; a < ncol; a++)
            if (!isfinite(x[k * stride + a])) {
                if (ncol > 1)
                    return sensim_error(SENSIM_EDATA, "%s row %zu column %zu is %g (not finite)", what, k, a,
                                        x[k * stride + a]);
                return sensim_error(SENSIM_EDATA, "%s[%zu] is %g (not finite)", what, k, x[k * stride + a]);
            }
    return SENSIM_OK;
}

/* The checks every estimator starts with: interval level, enough samples,
 * times and values usable. */
static sensim_status check_input(double confidence, const char *model, size_t n, size_t nmin, const double *t,
                                 const char *what, const double *x, size_t stride, size_t ncol)
{
    sensim_status st;
    if ((st = check_conf(confidence)))
        return st;
    if (n < nmin)
        return sensim_error(SENSIM_EDATA, "%s: %zu samples are too few (need at least %zu)", model, n, nmin);
    if ((st = check_times(t, n)) || (st = check_values(what, x, n, stride, ncol)))
        return st;
    return SENSIM_OK;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* Median spacing of t (n >= 2). */
static sensim_status median_dt(const double *t, size_t n, double *out)
{
    double *d = malloc((n - 1) * sizeof *d);
    if (!d)
        return sensim_error(SENSIM_ENOMEM, "out of memory");
    for (size_t k = 1; k < n; k++)
        d[k - 1] = t[k] - t[k - 1];
    qsort(d, n - 1, sizeof *d, cmp_double);
    *out = d[(n - 1) / 2];
    free(d);
    return SENSIM_OK;
}

/* ---- Chrono Ch:RW ---- */

/* An epoch whose mean speed is at least this fraction of the largest one
 * is reported as at the velocity cap (descriptive only). */
#define SAT_FRAC 0.95

/* Variance (per unit sigma^2) of sum_K c[K] p(K dt), K < nk, for Chrono's
 * inner stepping from time 0: each epoch is q steps of h and a last one of
 * the remainder (ChNoiseRandomWalks: step = min(h, remaining)). Step i
 * starting at tau_i with length s_i adds a_i s_i to v and v s_i to e on every
 * later step, so its coefficient in p(t) is s_i (t - tau_i) once it has
 * ended. Initial v and e cancel when sum c = sum c K = 0. */
static double rw_comb_var(const double *c, size_t nk, double dt, double h)
{
    double q = floor(dt / h + 1e-9), r = dt - q * h;
    if (r < 1e-9 * h)
        r = 0;
    size_t ns = (size_t)q + (r > 0);
    double v = 0;
    for (size_t e = 0; e + 1 < nk; e++) {
        double tau = (double)e * dt;
        for (size_t s = 0; s < ns; s++) {
            double si = s < (size_t)q ? h : r, co = 0;
            for (size_t K = e + 1; K < nk; K++)
                co += c[K] * ((double)K * dt - tau);
            co *= si;
            v += co * co;
            tau += si;
        }
    }
    return v;
}

double sensim_gnss_rw_d2_factor(double dt, double model_rate_hz)
{
    const double c[3] = {1, -2, 1};
    return rw_comb_var(c, 3, dt, 1.0 / model_rate_hz) / (dt * dt * dt * dt);
}

sensim_status sensim_gnss_fit_rw(const double *t, const double *enu, size_t n, double model_rate_hz,
                                 double confidence, sensim_gnss_rw_fit *fit)
{
    enum { W = SENSIM_GNSS_RW_BLOCK };
    memset(fit, 0, sizeof *fit);
    sensim_status st;
    if ((st = check_conf(confidence)))
        return st;
    if (!(model_rate_hz > 0) || !isfinite(model_rate_hz))
        return sensim_error(SENSIM_EINVAL, "chrono random walk: model rate must be > 0 Hz, got %g", model_rate_hz);
    if (n < SENSIM_GNSS_RW_MIN_EPOCHS)
        return sensim_error(SENSIM_EDATA,
                            "chrono random walk: %zu epochs are too few (need at least %d: 10 blocks of %d second "
                            "differences)",
                            n, SENSIM_GNSS_RW_MIN_EPOCHS, W);
    if ((st = check_times(t, n)) || (st = check_values("enu", enu, n, 3, 3)))
        return st;
    double dt = 0;
    if ((st = median_dt(t, n, &dt)))
        return st;
    if (dt * model_rate_hz > 1e5)
        return sensim_error(SENSIM_EINVAL, "chrono random walk: %g inner steps per epoch are too many",
                            dt * model_rate_hz);
    const double h = 1.0 / model_rate_hz;
    double f = sensim_gnss_rw_d2_factor(dt, model_rate_hz);
    double cw[W + 2];
    memset(cw, 0, sizeof cw);
    cw[0] = 1, cw[1] = -1, cw[W] = -1, cw[W + 1] = 1; /* sum of W second differences */
    double g = rw_comb_var(cw, W + 2, dt, h) / (dt * dt * dt * dt);
    /* Expected centred sum of squares of one block and axis per sigma^2. */
    double cblk = W * f - g / W;

    size_t nd = n - 2, nb = (nd - 1) / W;
    double *d2 = malloc(3 * nd * sizeof *d2);
    double *speed = malloc(n * sizeof *speed);
    if (!d2 || !speed) {
        free(d2);
        free(speed);
        return sensim_error(SENSIM_ENOMEM, "out of memory");
    }
    /* Epoch-mean speeds; the largest is the v_max estimate. */
    double vmax = 0;
    for (size_t k = 1; k < n; k++) {
        double s2 = 0, dtk = t[k] - t[k - 1];
        for (int a = 0; a < 3; a++) {
            double v = (enu[3 * k + a] - enu[3 * (k - 1) + a]) / dtk;
            s2 += v * v;
        }
        speed[k] = sqrt(s2);
        vmax = fmax(vmax, speed[k]);
    }
    size_t nsat = 0;
    for (size_t k = 1; k < n; k++)
        nsat += vmax > 0 && speed[k] >= SAT_FRAC * vmax;
    free(speed);
    double d2max = 0;
    for (size_t k = 1; k + 1 < n; k++) {
        double d0 = t[k] - t[k - 1], d1 = t[k + 1] - t[k];
        for (int a = 0; a < 3; a++) {
            double v0 = (enu[3 * k + a] - enu[3 * (k - 1) + a]) / d0;
            double v1 = (enu[3 * (k + 1) + a] - enu[3 * k + a]) / d1;
            d2[3 * (k - 1) + a] = 2 * (v1 - v0) / (d0 + d1);
            d2max = fmax(d2max, fabs(d2[3 * (k - 1) + a]));
        }
    }
    /* Rounding of t and p leaves second differences of order 1e-16 of the
     * velocity scale when the antenna moves at constant velocity. */
    if (!(d2max > 1e-9 * vmax / dt)) {
        free(d2);
        return sensim_error(SENSIM_EDATA, "enu: positions move at constant velocity (all second differences 0): "
                                           "constant data, nothing to fit");
    }
    double sy = 0, sx = 0;
    double *yb = malloc(2 * nb * sizeof *yb);
    if (!yb) {
        free(d2);
        return sensim_error(SENSIM_ENOMEM, "out of memory");
    }
    double *xb = yb + nb;
    /* d2 index j spans the steps of (t_j, t_{j+2}]; the velocity of the
     * interval before, (p_j - p_{j-1}) / dt, depends only on earlier steps,
     * so its direction u is independent of d2_j's noise. Only the part of
     * d2 across u is used: Chrono's velocity cap rescales v and so removes
     * the acceleration along v whenever it is active, while the two
     * components across v pass unchanged (to first order) whether the cap is
     * active or not. For isotropic noise they hold 2/3 of the variance. */
    for (size_t b = 0; b < nb; b++) {
        double m[3] = {0, 0, 0}, y = 0;
        for (size_t k = 0; k < W; k++)
            for (int a = 0; a < 3; a++)
                m[a] += d2[3 * (1 + b * W + k) + a] / W;
        for (size_t k = 0; k < W; k++) {
            size_t j = 1 + b * W + k;
            double c[3], u[3], uu = 0, cc = 0, uc = 0;
            for (int a = 0; a < 3; a++) {
                c[a] = d2[3 * j + a] - m[a];
                u[a] = enu[3 * j + a] - enu[3 * (j - 1) + a];
                uu += u[a] * u[a];
                cc += c[a] * c[a];
                uc += u[a] * c[a];
            }
            /* A standing antenna (u = 0) has no direction: keep 2/3 of it. */
            y += uu > 0 ? cc - uc * uc / uu : cc * (2.0 / 3.0);
        }
        yb[b] = y;
        xb[b] = 2.0 * cblk;
        sy += y;
        sx += xb[b];
    }
    double r = sy / sx, vr = 0;
    for (size_t b = 0; b < nb; b++)
        vr += (yb[b] - r * xb[b]) * (yb[b] - r * xb[b]);
    vr = vr / (sx * sx) * (double)nb / (double)(nb - 1);
    double z = zq(confidence), lo = r - z * sqrt(vr), hi = r + z * sqrt(vr);

    double m[3] = {0, 0, 0}, ss = 0;
    for (size_t j = 0; j < nd; j++)
        for (int a = 0; a < 3; a++)
            m[a] += d2[3 * j + a] / (double)nd;
    for (size_t j = 0; j < nd; j++)
        for (int a = 0; a < 3; a++)
            ss += (d2[3 * j + a] - m[a]) * (d2[3 * j + a] - m[a]);

    fit->d2_std = sqrt(ss / (3.0 * (double)nd - 3.0));
    fit->sigma.value = sqrt(r);
    fit->sigma.lo = lo > 0 ? sqrt(lo) : 0;
    fit->sigma.hi = sqrt(hi);
    fit->sigma.flag = lo > 0 ? SENSIM_FIT_OK : SENSIM_FIT_UPPER;
    fit->factor = f;
    fit->dt = dt;
    fit->max_velocity = vmax;
    fit->saturated = (double)nsat / (double)(n - 1);
    fit->blocks = nb;
    if (fabs(dt * model_rate_hz - floor(dt * model_rate_hz + 0.5)) > 1e-6)
        snprintf(fit->note, sizeof fit->note,
                 "epoch spacing %g s is not a whole number of inner steps (1/%g Hz): the factor assumes Chrono's "
                 "shorter last step",
                 dt, model_rate_hz);
    free(yb);
    free(d2);
    return SENSIM_OK;
}

/* ---- Gauss-Markov (AR(1) with uneven dt) ---- */

enum { GM_COARSE = 100, GM_FINE = 160 };

typedef struct gm_eval {
    double S;  /* sum of squared standardized innovations (times sigma^2) */
    double Lq; /* sum of log(1 - phi_k^2) */
    double mu;
} gm_eval;

/* The exact AR(1) terms at correlation time tau, with mu by GLS. */
static gm_eval gm_at(const double *t, const double *x, size_t n, size_t stride, int uniform, double tau)
{
    gm_eval e = {0, 0, 0};
    double num = x[0], den = 1;
    double phi = 0, q = 1;
    if (uniform) {
        double dt = t[1] - t[0];
        phi = exp(-dt / tau);
        q = -expm1(-2 * dt / tau);
    }
    for (size_t k = 1; k < n; k++) {
        if (!uniform) {
            double dt = t[k] - t[k - 1];
            phi = exp(-dt / tau);
            q = -expm1(-2 * dt / tau);
        }
        double y = x[k * stride] - phi * x[(k - 1) * stride], u = 1 - phi;
        num += y * u / q;
        den += u * u / q;
        e.Lq += log(q);
    }
    e.mu = num / den;
    double r0 = x[0] - e.mu;
    e.S = r0 * r0;
    for (size_t k = 1; k < n; k++) {
        if (!uniform) {
            double dt = t[k] - t[k - 1];
            phi = exp(-dt / tau);
            q = -expm1(-2 * dt / tau);
        }
        double r = (x[k * stride] - e.mu) - phi * (x[(k - 1) * stride] - e.mu);
        e.S += r * r / q;
    }
    return e;
}

/* Profile log likelihood (sigma maximized), constants dropped. */
static double gm_prof(const gm_eval *e, size_t n)
{
    return -0.5 * (double)n * log(e->S / (double)n) - 0.5 * (double)n - 0.5 * e->Lq;
}

/* Full log likelihood at sigma for a tau's terms. */
static double gm_full(const gm_eval *e, size_t n, double sigma)
{
    return -(double)n * log(sigma) - e->S / (2 * sigma * sigma) - 0.5 * e->Lq;
}

/* Profile over sigma: the full likelihood maximized over tau. At fixed tau
 * the likelihood is very narrow in sigma (relative width 1/sqrt(2n)) while
 * sigma's ML value moves with tau along a ridge, so a plain maximum over
 * grid points would dip between them: S and Lq are interpolated linearly in
 * log tau at SUB points per grid interval (both are smooth in log tau). */
enum { SUB = 16 };
static double gm_prof_sigma(const gm_eval *grid, size_t ng, const gm_eval *best, size_t n, double sigma)
{
    double m = gm_full(best, n, sigma);
    for (size_t j = 0; j + 1 < ng; j++)
        for (int k = 0; k < SUB; k++) {
            double w = (double)k / SUB;
            gm_eval e = {(1 - w) * grid[j].S + w * grid[j + 1].S, (1 - w) * grid[j].Lq + w * grid[j + 1].Lq, 0};
            m = fmax(m, gm_full(&e, n, sigma));
        }
    return fmax(m, gm_full(&grid[ng - 1], n, sigma));
}

/* The end of the sigma profile interval between a sigma inside it (profile
 * >= cut) and one outside, by geometric bisection; the last inside point. */
static double gm_sigma_bound(const gm_eval *grid, const gm_eval *best, size_t n, double cut, double inside,
                             double outside)
{
    for (int k = 0; k < 50; k++) {
        double mid = sqrt(inside * outside);
        if (gm_prof_sigma(grid, GM_FINE, best, n, mid) >= cut)
            inside = mid;
        else
            outside = mid;
    }
    return inside;
}

/* Profile over log tau on [u0, u1] at ng points; returns the best index. */
static size_t gm_grid(const double *t, const double *x, size_t n, size_t stride, int uniform, double u0, double u1,
                      size_t ng, gm_eval *grid, double *L)
{
    size_t jb = 0;
    for (size_t j = 0; j < ng; j++) {
        grid[j] = gm_at(t, x, n, stride, uniform, exp(u0 + (u1 - u0) * (double)j / (double)(ng - 1)));
        L[j] = gm_prof(&grid[j], n);
        if (L[j] > L[jb])
            jb = j;
    }
    return jb;
}

sensim_status sensim_gnss_fit_gm(const double *t, const double *x, size_t n, size_t stride, double confidence,
                                 sensim_gnss_gm_fit *fit)
{
    memset(fit, 0, sizeof *fit);
    sensim_status st = check_input(confidence, "gauss-markov", n, 20, t, "position", x, stride, 1);
    if (st)
        return st;
    double mean = 0, var = 0;
    for (size_t k = 0; k < n; k++)
        mean += x[k * stride] / (double)n;
    for (size_t k = 0; k < n; k++)
        var += (x[k * stride] - mean) * (x[k * stride] - mean);
    int constant = 1;
    for (size_t k = 1; k < n && constant; k++)
        constant = x[k * stride] == x[0];
    if (constant || !(var > 0))
        return sensim_error(SENSIM_EDATA, "position is constant (%.9g): nothing to fit", x[0]);
    double c1 = 0;
    for (size_t k = 1; k < n; k++)
        c1 += (x[k * stride] - mean) * (x[(k - 1) * stride] - mean);
    double z = zq(confidence);
    fit->acf1 = c1 / var;
    fit->acf1_bound = z / sqrt((double)n);
    fit->white = fabs(fit->acf1) < fit->acf1_bound;
    double s2 = var / (double)(n - 1), a = 1 - confidence;
    fit->white_sigma.value = sqrt(s2);
    fit->white_sigma.lo = sqrt(s2 * (double)(n - 1) / chisq_q(1 - a / 2, (double)(n - 1)));
    fit->white_sigma.hi = sqrt(s2 * (double)(n - 1) / chisq_q(a / 2, (double)(n - 1)));
    fit->white_sigma.flag = SENSIM_FIT_OK;

    double dtmin = INFINITY, T = t[n - 1] - t[0];
    int uniform = 1;
    for (size_t k = 1; k < n; k++) {
        double d = t[k] - t[k - 1];
        dtmin = fmin(dtmin, d);
        if (fabs(d - (t[1] - t[0])) > 1e-9 * (t[1] - t[0]))
            uniform = 0;
    }
    const double ulo = log(0.02 * dtmin), uhi = log(20 * T);
    SENSIM_GSL_QUIET_SCOPE();
    const double half = 0.5 * sensim_chisq_quantile(confidence, 1.0);
    gm_eval *grid = malloc(GM_FINE * sizeof *grid);
    double *L = malloc(GM_FINE * sizeof *L);
    if (!grid || !L) {
        free(grid);
        free(L);
        return sensim_error(SENSIM_ENOMEM, "out of memory");
    }
    /* Coarse pass over the whole range to find the region of the interval
     * (widened by a margin so the fine pass holds both crossings). */
    size_t jb = gm_grid(t, x, n, stride, uniform, ulo, uhi, GM_COARSE, grid, L);
    const double dc = (uhi - ulo) / (GM_COARSE - 1);
    size_t ja = jb, jz = jb;
    while (ja > 0 && L[ja] >= L[jb] - 2 * half)
        ja--;
    while (jz + 1 < GM_COARSE && L[jz] >= L[jb] - 2 * half)
        jz++;
    const int open_lo = ja == 0 && L[0] >= L[jb] - half, open_hi = jz + 1 == GM_COARSE && L[jz] >= L[jb] - half;
    double fa = ulo + dc * (double)(ja > 0 ? ja - 1 : 0), fz = ulo + dc * (double)(jz + 1 < GM_COARSE ? jz + 1 : jz);
    jb = gm_grid(t, x, n, stride, uniform, fa, fz, GM_FINE, grid, L);
    const double du = (fz - fa) / (GM_FINE - 1), gr = 0.5 * (sqrt(5.0) - 1);

    /* Golden-section refinement between the neighbours of the best point. */
    double ua = fa + du * (double)(jb ? jb - 1 : 0), ub = fa + du * (double)(jb + 1 < GM_FINE ? jb + 1 : jb);
    double u1 = ub - gr * (ub - ua), u2 = ua + gr * (ub - ua);
    gm_eval e1 = gm_at(t, x, n, stride, uniform, exp(u1)), e2 = gm_at(t, x, n, stride, uniform, exp(u2));
    for (int it = 0; it < 40; it++) {
        if (gm_prof(&e1, n) > gm_prof(&e2, n)) {
            ub = u2, u2 = u1, e2 = e1;
            u1 = ub - gr * (ub - ua);
            e1 = gm_at(t, x, n, stride, uniform, exp(u1));
        } else {
            ua = u1, u1 = u2, e1 = e2;
            u2 = ua + gr * (ub - ua);
            e2 = gm_at(t, x, n, stride, uniform, exp(u2));
        }
    }
    double ubest = 0.5 * (u1 + u2);
    gm_eval best = gm_at(t, x, n, stride, uniform, exp(ubest));
    if (L[jb] > gm_prof(&best, n)) {
        best = grid[jb];
        ubest = fa + du * (double)jb;
    }
    const double Lmax = gm_prof(&best, n), cut = Lmax - half;

    /* tau interval: where the profile crosses the cut on each side. */
    double tlo = 0, thi = INFINITY;
    size_t j = jb;
    while (j > 0 && L[j - 1] >= cut)
        j--;
    if (j > 0 && !open_lo) {
        double w = (cut - L[j - 1]) / (L[j] - L[j - 1]);
        tlo = exp(fa + du * ((double)j - 1 + w));
    }
    j = jb;
    while (j + 1 < GM_FINE && L[j + 1] >= cut)
        j++;
    if (j + 1 < GM_FINE && !open_hi) {
        double w = (L[j] - cut) / (L[j] - L[j + 1]);
        thi = exp(fa + du * ((double)j + w));
    }
    fit->mean = best.mu;
    fit->loglik = Lmax - 0.5 * (double)n * log(2 * M_PI);
    fit->tau.value = exp(ubest);
    fit->tau.lo = fmin(tlo, fit->tau.value);
    fit->tau.hi = isfinite(thi) ? fmax(thi, fit->tau.value) : exp(uhi);
    /* A log shorter than a few correlation times cannot pin tau down: with
     * the mean estimated from the data, tau and sigma come out low. */
    fit->tau.flag = isfinite(thi) && fit->tau.hi < T / 3 ? SENSIM_FIT_OK : SENSIM_FIT_UNRESOLVED;

    /* sigma interval from its own profile. */
    double sh = sqrt(best.S / (double)n), slo = sh, shi = sh;
    double lo_b = sh, hi_b = sh;
    for (int k = 0; k < 60 && gm_prof_sigma(grid, GM_FINE, &best, n, lo_b) >= cut; k++)
        lo_b *= 0.7;
    for (int k = 0; k < 60 && gm_prof_sigma(grid, GM_FINE, &best, n, hi_b) >= cut; k++)
        hi_b *= 1.4;
    slo = gm_sigma_bound(grid, &best, n, cut, sh, lo_b);
    shi = gm_sigma_bound(grid, &best, n, cut, sh, hi_b);
    free(grid);
    free(L);
    fit->sigma.value = sh;
    fit->sigma.lo = slo;
    fit->sigma.hi = shi;
    fit->sigma.flag = fit->tau.flag == SENSIM_FIT_OK ? SENSIM_FIT_OK : SENSIM_FIT_UNRESOLVED;
    if (!isfinite(thi))
        snprintf(fit->note, sizeof fit->note,
                 "correlation time not bounded above by a %.4g s log: tau and sigma are lower bounds", T);
    else if (fit->tau.flag != SENSIM_FIT_OK)
        snprintf(fit->note, sizeof fit->note,
                 "the %.4g s log spans fewer than 3 correlation times at the interval's upper end (%.4g s): tau "
                 "and sigma are not identified and read low",
                 T, fit->tau.hi);
    else if (tlo == 0)
        snprintf(fit->note, sizeof fit->note, "tau is consistent with 0: the axis reads as white noise");
    return SENSIM_OK;
}

/* ---- Outliers ---- */

/* Median of m values (sorts them in place). */
static double median_small(double *v, size_t m)
{
    qsort(v, m, sizeof *v, cmp_double);
    return m % 2 ? v[m / 2] : 0.5 * (v[m / 2 - 1] + v[m / 2]);
}

/* Epoch k's residual on axis a from the median of up to two neighbours on
 * each side. */
static double neighbour_residual(const double *enu, size_t n, size_t k, int a)
{
    double v[4];
    size_t m = 0;
    for (size_t j = k >= 2 ? k - 2 : 0; j <= k + 2 && j < n; j++)
        if (j != k)
            v[m++] = enu[3 * j + a];
    return enu[3 * k + a] - median_small(v, m);
}

sensim_status sensim_gnss_find_outliers(const double *t, const double *enu, size_t n, double threshold,
                                        double confidence, unsigned char *outlier, sensim_gnss_outlier_fit *fit)
{
    memset(fit, 0, sizeof *fit);
    sensim_status st = check_input(confidence, "outliers", n, 5, t, "enu", enu, 3, 3);
    if (st)
        return st;
    if (!(threshold > 0))
        threshold = SENSIM_GNSS_OUTLIER_THRESHOLD;
    if (!isfinite(threshold))
        return sensim_error(SENSIM_EINVAL, "outliers: threshold must be finite, got %g", threshold);
    double *d = malloc(n * sizeof *d), *r2 = malloc(n * sizeof *r2);
    if (!d || !r2) {
        free(d);
        free(r2);
        return sensim_error(SENSIM_ENOMEM, "out of memory");
    }
    /* Robust scale of the first differences per axis: 1.4826 MAD. An
     * isolated outlier spoils two differences, which the median ignores. */
    for (int a = 0; a < 3; a++) {
        for (size_t k = 1; k < n; k++)
            d[k - 1] = enu[3 * k + a] - enu[3 * (k - 1) + a];
        qsort(d, n - 1, sizeof *d, cmp_double);
        double med = d[(n - 1) / 2];
        for (size_t k = 0; k + 1 < n; k++)
            d[k] = fabs(d[k] - med);
        qsort(d, n - 1, sizeof *d, cmp_double);
        fit->scale[a] = 1.4826 * d[(n - 1) / 2];
        /* Quantized positions (most differences 0) have a zero MAD: the
         * mean absolute deviation (sqrt(pi/2) of it for a normal) instead.
         * A spread at rounding level (constant or constant-velocity axes)
         * counts as none. */
        const double tiny = 1e-9 * (fabs(med) + d[n - 2]);
        if (!(fit->scale[a] > tiny)) {
            double s = 0;
            for (size_t k = 0; k + 1 < n; k++)
                s += d[k];
            fit->scale[a] = sqrt(M_PI / 2) * s / (double)(n - 1);
            if (!(fit->scale[a] > tiny))
                fit->scale[a] = 0;
        }
    }
    /* Residual from the median of up to two neighbours on each side, in
     * robust standard deviations, summed in quadrature over the axes (the
     * model's outliers point in a uniformly random 3-D direction). */
    size_t rej = 0;
    for (size_t k = 0; k < n; k++) {
        double s2 = 0;
        for (int a = 0; a < 3; a++) {
            double e = neighbour_residual(enu, n, k, a);
            /* An axis without spread (constant, or constant velocity) has
             * nothing to judge a jump against. */
            if (fit->scale[a] > 0)
                s2 += (e / fit->scale[a]) * (e / fit->scale[a]);
        }
        int bad = s2 > threshold * threshold;
        if (outlier)
            outlier[k] = (unsigned char)bad;
        if (bad) {
            /* The 3-D size of the jump: residual in metres. */
            double m2 = 0;
            for (int a = 0; a < 3; a++) {
                double e = neighbour_residual(enu, n, k, a);
                m2 += e * e;
            }
            r2[rej++] = sqrt(m2);
        }
    }
    fit->n = n;
    fit->rejected = rej;
    fit->threshold = threshold;
    fit->magnitude = rej ? median_small(r2, rej) : 0;
    /* Clopper-Pearson: Beta quantiles at alpha/2 and 1 - alpha/2. */
    double a = 1 - confidence;
    SENSIM_GSL_QUIET_SCOPE();
    fit->rate.value = (double)rej / (double)n;
    fit->rate.lo = rej ? sensim_beta_quantile(a / 2, (double)rej, (double)(n - rej + 1)) : 0;
    fit->rate.hi = rej < n ? sensim_beta_quantile(1 - a / 2, (double)(rej + 1), (double)(n - rej)) : 1;
    fit->rate.flag = rej ? SENSIM_FIT_OK : SENSIM_FIT_UPPER;
    free(d);
    free(r2);
    return SENSIM_OK;
}

/* ---- Gauss-Markov plus white noise (Kalman filter likelihood) ---- */

typedef struct gmw_data {
    double *t, *x; /* the epochs kept, contiguous */
    size_t n;
    int uniform;
    double ulo, uhi; /* log tau range */
} gmw_data;

enum { GMW_LAM_LO = -12, GMW_LAM_HI = 6 };

/* Kalman filter of the scalar Gauss-Markov state g under x = mu + g + v at
 * variances vg (stationary, of g) and vw (of v): S = sum of e^2 / F at the
 * GLS mu, LF = sum of log F plus log(1' V^-1 1). The filter also runs on
 * the constant series 1 (innovations e1): the innovations of x - mu are
 * ex - mu e1, and 1' V^-1 1 = sum e1^2 / F. That last term makes the
 * likelihood the restricted (REML) one, which accounts for mu being
 * estimated: the plain profile over mu reads tau and sigma_gm low on logs
 * of a few correlation times (tau -9% at 15 of them, with intervals that
 * cover less than they say). */
static void gmw_kf(const gmw_data *d, double tau, double vg, double vw, double *S, double *LF, double *mu)
{
    double P = vg, gx = 0, g1 = 0, sxx = 0, sx1 = 0, s11 = 0, lf = 0, phi = 0, q = 0;
    /* The filter's variance reaches its fixed point within a few epochs and
     * most spacings repeat: log F is recomputed only when F moves by more
     * than 1e-13 of itself, phi and q when dt moves by more than 1e-9 of
     * itself (the rounding of time stamps of ~1000 s moves it by ~1e-12). */
    double dtp = -1, Fp = -1, logF = 0;
    for (size_t k = 0; k < d->n; k++) {
        if (k) {
            double dt = d->uniform ? d->t[1] - d->t[0] : d->t[k] - d->t[k - 1];
            if (fabs(dt - dtp) > 1e-9 * dt) {
                phi = exp(-dt / tau);
                q = -expm1(-2 * dt / tau);
                dtp = dt;
            }
            gx *= phi;
            g1 *= phi;
            P = phi * phi * P + vg * q;
        }
        double F = P + vw, iF = 1 / F, ex = d->x[k] - gx, e1 = 1 - g1;
        sxx += ex * ex * iF;
        sx1 += ex * e1 * iF;
        s11 += e1 * e1 * iF;
        if (fabs(F - Fp) > 1e-13 * F)
            logF = log(F), Fp = F;
        lf += logF;
        double K = P * iF;
        gx += K * ex;
        g1 += K * e1;
        P = P * vw * iF; /* (1 - K) P, exact 0 when vw = 0 */
    }
    *mu = sx1 / s11;
    *S = fmax(sxx - sx1 * sx1 / s11, 0.0);
    *LF = lf + log(s11);
}

/* Restricted log likelihood with the scale profiled out, at log tau u and
 * lam = log(sigma_white / sigma_gm) (lam = -inf: no white noise); *vg gets
 * the REML sigma_gm^2. n - 1 degrees of freedom (one for mu). */
static double gmw_prof(const gmw_data *d, double u, double lam, double *vg)
{
    double S, LF, mu, n = (double)d->n - 1;
    gmw_kf(d, exp(u), 1.0, isfinite(lam) ? exp(2 * lam) : 0.0, &S, &LF, &mu);
    if (vg)
        *vg = S / n;
    if (!(S > 0))
        return -INFINITY;
    return -0.5 * n * log(S / n) - 0.5 * n - 0.5 * LF - 0.5 * n * log(2 * M_PI);
}

/* Full log likelihood at th = (log sigma_gm, log tau, log sigma_white). */
static double gmw_full(const gmw_data *d, const double th[3], double *mu)
{
    double S, LF, m;
    gmw_kf(d, exp(th[1]), exp(2 * th[0]), exp(2 * th[2]), &S, &LF, &m);
    if (mu)
        *mu = m;
    return -0.5 * (LF + S) - 0.5 * ((double)d->n - 1) * log(2 * M_PI);
}

/* Simplex objective: the negative profile likelihood, the arguments
 * clamped to their ranges with a quadratic wall outside. */
static double gmw_nm_f(const gsl_vector *v, void *p)
{
    const gmw_data *d = p;
    double u = gsl_vector_get(v, 0), lam = gsl_vector_get(v, 1);
    double uc = fmin(fmax(u, d->ulo), d->uhi), lc = fmin(fmax(lam, GMW_LAM_LO), GMW_LAM_HI);
    double L = gmw_prof(d, uc, lc, NULL);
    if (!isfinite(L))
        return 1e300;
    return -L + 1e3 * ((u - uc) * (u - uc) + (lam - lc) * (lam - lc));
}

/* Golden-section maximum of the profile over x in [a, b], x being log tau
 * (over_lam = 0, lam = fixed) or lam (over_lam = 1, log tau = fixed), in
 * iters steps; *xb gets the argument. */
static double gmw_golden(const gmw_data *d, int over_lam, double fixed, double a, double b, int iters, double *xb)
{
#define GMW_AT(x) (over_lam ? gmw_prof(d, fixed, (x), NULL) : gmw_prof(d, (x), fixed, NULL))
    const double gr = 0.5 * (sqrt(5.0) - 1);
    double x1 = b - gr * (b - a), x2 = a + gr * (b - a);
    double L1 = GMW_AT(x1), L2 = GMW_AT(x2);
    for (int it = 0; it < iters; it++) {
        if (L1 > L2) {
            b = x2, x2 = x1, L2 = L1;
            x1 = b - gr * (b - a);
            L1 = GMW_AT(x1);
        } else {
            a = x1, x1 = x2, L1 = L2;
            x2 = a + gr * (b - a);
            L2 = GMW_AT(x2);
        }
    }
    *xb = 0.5 * (x1 + x2);
    return GMW_AT(*xb);
#undef GMW_AT
}

/* Maximum of the profile over log tau at fixed lam: grid then golden
 * section. Returns the best u in *ub. */
static double gmw_max_u(const gmw_data *d, double lam, double *ub)
{
    enum { NG = 40 };
    double best = -INFINITY, du = (d->uhi - d->ulo) / (NG - 1);
    size_t jb = 0;
    for (size_t j = 0; j < NG; j++) {
        double L = gmw_prof(d, d->ulo + du * (double)j, lam, NULL);
        if (L > best)
            best = L, jb = j;
    }
    double a = d->ulo + du * (double)(jb ? jb - 1 : 0), b = d->ulo + du * (double)(jb + 1 < NG ? jb + 1 : jb);
    double L = gmw_golden(d, 0, lam, a, b, 40, ub);
    if (best > L) {
        *ub = d->ulo + du * (double)jb;
        L = best;
    }
    return L;
}

/* Maximum of the profile over lam at fixed log tau u, by golden section
 * within 1.5 of lam0 (the neighbouring point's optimum); *lb gets it. */
static double gmw_max_lam(const gmw_data *d, double u, double lam0, double *lb)
{
    return gmw_golden(d, 1, u, fmax(lam0 - 1.5, GMW_LAM_LO), fmin(lam0 + 1.5, GMW_LAM_HI), 20, lb);
}

/* Where the profile over log tau (lam and the scale maximized) falls to
 * cut, going from (u0, lam0) in direction dir (+1 or -1): steps of 0.5
 * then bisection to 0.5 / 4096. Returns the range's end when it never falls. */
static double gmw_tau_cross(const gmw_data *d, double u0, double lam0, double cut, int dir)
{
    double a = u0, la = lam0, b = u0, lb = lam0, end = dir > 0 ? d->uhi : d->ulo;
    for (;;) {
        b = a + dir * 0.5;
        if (dir * (b - end) >= 0) {
            b = end;
            if (gmw_max_lam(d, b, la, &lb) >= cut)
                return end;
            break;
        }
        if (gmw_max_lam(d, b, la, &lb) < cut)
            break;
        a = b, la = lb;
    }
    for (int it = 0; it < 12; it++) {
        double m = 0.5 * (a + b), lm;
        if (gmw_max_lam(d, m, la, &lm) >= cut)
            a = m, la = lm;
        else
            b = m;
    }
    return 0.5 * (a + b);
}

/* Inverse of the 2x2 or 3x3 symmetric matrix a (k x k, row-major) into
 * inv; 0 when it is not positive definite. */
static int spd_inverse(const double *a, size_t k, double *inv)
{
    if (k == 2) {
        double det = a[0] * a[3] - a[1] * a[2];
        if (!(a[0] > 0 && det > 0))
            return 0;
        inv[0] = a[3] / det, inv[3] = a[0] / det, inv[1] = inv[2] = -a[1] / det;
        return 1;
    }
    double c00 = a[4] * a[8] - a[5] * a[7], c01 = a[5] * a[6] - a[3] * a[8], c02 = a[3] * a[7] - a[4] * a[6];
    double det = a[0] * c00 + a[1] * c01 + a[2] * c02;
    double m2 = a[0] * a[4] - a[1] * a[3];
    if (!(a[0] > 0 && m2 > 0 && det > 0))
        return 0;
    inv[0] = c00 / det, inv[1] = (a[2] * a[7] - a[1] * a[8]) / det, inv[2] = (a[1] * a[5] - a[2] * a[4]) / det;
    inv[3] = c01 / det, inv[4] = (a[0] * a[8] - a[2] * a[6]) / det, inv[5] = (a[2] * a[3] - a[0] * a[5]) / det;
    inv[6] = c02 / det, inv[7] = (a[1] * a[6] - a[0] * a[7]) / det, inv[8] = m2 / det;
    return 1;
}

/* Observed information (negative Hessian) of the full log likelihood in the
 * first k of (log sigma_gm, log tau, log sigma_white) at th, by central
 * differences with step h. */
static void gmw_info(const gmw_data *d, const double th[3], size_t k, double *I)
{
    const double h = 2e-3;
    double f0 = gmw_full(d, th, NULL);
    for (size_t i = 0; i < k; i++)
        for (size_t j = i; j < k; j++) {
            double p[3], v;
            memcpy(p, th, sizeof p);
            if (i == j) {
                p[i] = th[i] + h;
                double fp = gmw_full(d, p, NULL);
                p[i] = th[i] - h;
                double fm = gmw_full(d, p, NULL);
                v = -(fp - 2 * f0 + fm) / (h * h);
            } else {
                double s = 0;
                for (int a = -1; a <= 1; a += 2)
                    for (int b = -1; b <= 1; b += 2) {
                        p[i] = th[i] + a * h;
                        p[j] = th[j] + b * h;
                        s += a * b * gmw_full(d, p, NULL);
                    }
                v = -s / (4 * h * h);
            }
            I[i * k + j] = I[j * k + i] = v;
        }
}

sensim_status sensim_gnss_fit_gmw(const double *t, const double *x, size_t n, size_t stride,
                                  const unsigned char *skip, double confidence, sensim_gnss_gmw_fit *fit)
{
    memset(fit, 0, sizeof *fit);
    sensim_status st = check_input(confidence, "gauss-markov + white", n, 20, t, "position", x, stride, 1);
    if (st)
        return st;
    gmw_data d = {malloc(n * sizeof(double)), malloc(n * sizeof(double)), 0, 1, 0, 0};
    if (!d.t || !d.x) {
        free(d.t);
        free(d.x);
        return sensim_error(SENSIM_ENOMEM, "out of memory");
    }
    for (size_t k = 0; k < n; k++)
        if (!skip || !skip[k]) {
            d.t[d.n] = t[k];
            d.x[d.n++] = x[k * stride];
        }
    int constant = 1;
    for (size_t k = 1; k < d.n && constant; k++)
        constant = d.x[k] == d.x[0];
    if (d.n < 20 || constant) {
        st = d.n < 20 ? sensim_error(SENSIM_EDATA,
                                     "gauss-markov + white: %zu epochs left after %zu skipped are too few (need at "
                                     "least 20)",
                                     d.n, n - d.n)
                      : sensim_error(SENSIM_EDATA, "position is constant (%.9g): nothing to fit", d.x[0]);
        free(d.t);
        free(d.x);
        return st;
    }
    double dtmin = INFINITY, T = d.t[d.n - 1] - d.t[0], dt0 = d.t[1] - d.t[0];
    for (size_t k = 1; k < d.n; k++) {
        double s = d.t[k] - d.t[k - 1];
        dtmin = fmin(dtmin, s);
        if (fabs(s - dt0) > 1e-9 * dt0)
            d.uniform = 0;
    }
    d.ulo = log(0.02 * dtmin);
    d.uhi = log(20 * T);

    /* Coarse grid over (log tau, lam), then the simplex from its best. */
    enum { NU = 16, NL = 8 };
    double bu = 0, bl = 0, bL = -INFINITY;
    const double gu = (d.uhi - d.ulo) / (NU - 1), gl = (double)(4 - (-8)) / (NL - 1);
    for (int i = 0; i < NU; i++)
        for (int j = 0; j < NL; j++) {
            double u = d.ulo + gu * i, lam = -8 + gl * j, L = gmw_prof(&d, u, lam, NULL);
            if (L > bL)
                bL = L, bu = u, bl = lam;
        }
    SENSIM_GSL_QUIET_SCOPE();
    gsl_multimin_fminimizer *mm = gsl_multimin_fminimizer_alloc(gsl_multimin_fminimizer_nmsimplex2, 2);
    gsl_vector *x0 = gsl_vector_alloc(2), *ss = gsl_vector_alloc(2);
    if (!mm || !x0 || !ss) {
        gsl_multimin_fminimizer_free(mm);
        gsl_vector_free(x0);
        gsl_vector_free(ss);
        free(d.t);
        free(d.x);
        return sensim_error(SENSIM_ENOMEM, "out of memory");
    }
    gsl_vector_set(x0, 0, bu);
    gsl_vector_set(x0, 1, bl);
    gsl_vector_set(ss, 0, gu);
    gsl_vector_set(ss, 1, gl);
    gsl_multimin_function fn = {gmw_nm_f, 2, &d};
    gsl_multimin_fminimizer_set(mm, &fn, x0, ss);
    int it = 0, rc = GSL_CONTINUE;
    while (rc == GSL_CONTINUE && it < 500) {
        it++;
        if (gsl_multimin_fminimizer_iterate(mm))
            break;
        rc = gsl_multimin_test_size(gsl_multimin_fminimizer_size(mm), 1e-7);
    }
    double u = fmin(fmax(gsl_vector_get(mm->x, 0), d.ulo), d.uhi);
    double lam = fmin(fmax(gsl_vector_get(mm->x, 1), GMW_LAM_LO), GMW_LAM_HI);
    gsl_multimin_fminimizer_free(mm);
    gsl_vector_free(x0);
    gsl_vector_free(ss);
    double vg, L = gmw_prof(&d, u, lam, &vg);
    if (!(L >= bL)) {
        u = bu, lam = bl;
        L = gmw_prof(&d, u, lam, &vg);
    }
    /* The pure Gauss-Markov maximum (sigma_white = 0). */
    double u_gm, L_gm = gmw_max_u(&d, -INFINITY, &u_gm);
    if (L_gm > L) { /* the boundary beats the interior: no white noise */
        L = L_gm, u = u_gm, lam = GMW_LAM_LO;
        gmw_prof(&d, u, -INFINITY, &vg);
    }
    const double alpha = 1 - confidence, z = zq(confidence);
    fit->n = d.n;
    fit->iterations = it;
    fit->loglik = L;
    fit->loglik_gm = L_gm;
    fit->lr = fmax(2 * (L - L_gm), 0.0);
    fit->lr_crit = chisq_q(1 - 2 * alpha, 1.0);
    fit->white_significant = fit->lr > fit->lr_crit;
    const double sg = sqrt(vg), sw = sg * exp(lam);
    double th[3] = {log(sg), u, log(sw)}, I[9], C[9];
    gmw_full(&d, th, &fit->mean);
    size_t k = fit->white_significant ? 3 : 2;
    if (!fit->white_significant)
        th[2] = log(sg) + GMW_LAM_LO; /* the information in (sigma_gm, tau) without white noise */
    gmw_info(&d, th, k, I);
    int ok = spd_inverse(I, k, C);
    double se[3];
    for (size_t i = 0; i < k; i++)
        se[i] = ok ? sqrt(C[i * k + i]) : INFINITY;
    fit->sigma_gm = (sensim_fit_param){sg, sg * exp(-z * se[0]), sg * exp(z * se[0]), SENSIM_FIT_OK};
    /* tau's likelihood is skewed on logs of a few correlation times: its
     * interval is the profile-likelihood one (lam and the scale maximized,
     * chi2_1 cut). The Wald interval on log tau covers about 90% at a
     * nominal 95% on 15 correlation times; the profile one 96%. */
    const double tcut = L - 0.5 * chisq_q(confidence, 1.0);
    const double ulo_ci = gmw_tau_cross(&d, u, lam, tcut, -1), uhi_ci = gmw_tau_cross(&d, u, lam, tcut, +1);
    fit->tau = (sensim_fit_param){exp(u), fmin(exp(ulo_ci), exp(u)), fmax(exp(uhi_ci), exp(u)), SENSIM_FIT_OK};
    if (!ok)
        fit->sigma_gm.hi = INFINITY;
    if (!ok || !(uhi_ci < d.uhi) || !(fit->tau.hi < T / 3))
        fit->tau.flag = fit->sigma_gm.flag = SENSIM_FIT_UNRESOLVED;
    if (fit->white_significant) {
        fit->sigma_white = (sensim_fit_param){sw, sw * exp(-z * se[2]), sw * exp(z * se[2]), SENSIM_FIT_OK};
        if (!ok)
            fit->sigma_white.lo = 0, fit->sigma_white.hi = INFINITY, fit->sigma_white.flag = SENSIM_FIT_UNRESOLVED;
    } else {
        /* Upper bound: the largest ratio sigma_white / sigma_gm whose
         * profile (over tau and the scale) stays within the one-sided cut. */
        const double cut = L - 0.5 * fit->lr_crit;
        double a = fmax(lam, -6.0), b = a, ub = u;
        while (b < GMW_LAM_HI && gmw_max_u(&d, b, &ub) >= cut)
            b += 1.0;
        for (int j = 0; j < 30; j++) {
            double m = 0.5 * (a + b);
            if (gmw_max_u(&d, m, &ub) >= cut)
                a = m;
            else
                b = m;
        }
        double vga;
        gmw_max_u(&d, a, &ub);
        gmw_prof(&d, ub, a, &vga);
        fit->sigma_white = (sensim_fit_param){lam <= GMW_LAM_LO ? 0 : sw, 0, sqrt(vga) * exp(a), SENSIM_FIT_UPPER};
        snprintf(fit->note, sizeof fit->note,
                 "white noise not significant (likelihood ratio %.3g <= %.3g): sigma_white is an upper bound", fit->lr,
                 fit->lr_crit);
    }
    if (fit->tau.flag != SENSIM_FIT_OK && !*fit->note)
        snprintf(fit->note, sizeof fit->note,
                 "the %.4g s log spans fewer than 3 correlation times at tau's upper bound (%.4g s): tau and "
                 "sigma_gm are not identified",
                 T, fit->tau.hi);
    free(d.t);
    free(d.x);
    return SENSIM_OK;
}

/* ---- AirSim HDOP low-pass ---- */

typedef struct hdop_data {
    const double *t, *h;
    size_t n;
    double t0;
} hdop_data;

static int hdop_f(const gsl_vector *p, void *vd, gsl_vector *f)
{
    const hdop_data *d = vd;
    double A = gsl_vector_get(p, 0), F = gsl_vector_get(p, 1), tau = exp(gsl_vector_get(p, 2));
    for (size_t k = 0; k < d->n; k++)
        gsl_vector_set(f, k, F + (A - F) * exp(-(d->t[k] - d->t0) / tau) - d->h[k]);
    return GSL_SUCCESS;
}

static int hdop_df(const gsl_vector *p, void *vd, gsl_matrix *J)
{
    const hdop_data *d = vd;
    double A = gsl_vector_get(p, 0), F = gsl_vector_get(p, 1), tau = exp(gsl_vector_get(p, 2));
    for (size_t k = 0; k < d->n; k++) {
        double s = (d->t[k] - d->t0) / tau, E = exp(-s);
        gsl_matrix_set(J, k, 0, E);
        gsl_matrix_set(J, k, 1, 1 - E);
        gsl_matrix_set(J, k, 2, (A - F) * E * s); /* d/d(log tau) */
    }
    return GSL_SUCCESS;
}

sensim_status sensim_gnss_fit_hdop(const double *t, const double *hdop, size_t n, double t0, double confidence,
                                   sensim_gnss_hdop_fit *fit)
{
    memset(fit, 0, sizeof *fit);
    sensim_status st = check_input(confidence, "hdop", n, 5, t, "hdop", hdop, 1, 1);
    if (st)
        return st;
    if (!isfinite(t0) || t0 > t[0])
        return sensim_error(SENSIM_EINVAL, "hdop: reference time %g must be finite and <= t[0] = %g", t0, t[0]);
    double hmin = hdop[0], hmax = hdop[0];
    for (size_t k = 1; k < n; k++)
        hmin = fmin(hmin, hdop[k]), hmax = fmax(hmax, hdop[k]);
    if (!(hmax > hmin))
        return sensim_error(SENSIM_EDATA, "hdop is constant (%g): no low-pass to fit", hdop[0]);

    /* Start: final from the last tenth, initial from the first sample
     * extrapolated to t0 later by the fit, tau where the excess falls by e. */
    size_t tail = n / 10 > 0 ? n / 10 : 1;
    double F0 = 0;
    for (size_t k = n - tail; k < n; k++)
        F0 += hdop[k] / (double)tail;
    double A0 = hdop[0], tau0 = 0.5 * (t[n - 1] - t0);
    for (size_t k = 1; k < n; k++)
        if (fabs(hdop[k] - F0) < fabs(A0 - F0) / M_E) {
            tau0 = fmax(t[k] - t0, 1e-3 * (t[n - 1] - t0));
            break;
        }

    hdop_data d = {t, hdop, n, t0};
    SENSIM_GSL_QUIET_SCOPE();
    gsl_multifit_nlinear_parameters par = gsl_multifit_nlinear_default_parameters();
    gsl_multifit_nlinear_workspace *w = gsl_multifit_nlinear_alloc(gsl_multifit_nlinear_trust, &par, n, 3);
    gsl_matrix *cov = gsl_matrix_alloc(3, 3);
    gsl_vector *p0 = gsl_vector_alloc(3);
    if (!w || !cov || !p0) {
        gsl_multifit_nlinear_free(w);
        gsl_matrix_free(cov);
        gsl_vector_free(p0);
        return sensim_error(SENSIM_ENOMEM, "hdop: out of memory");
    }
    gsl_vector_set(p0, 0, A0);
    gsl_vector_set(p0, 1, F0);
    gsl_vector_set(p0, 2, log(tau0));
    gsl_multifit_nlinear_fdf fdf = {hdop_f, hdop_df, NULL, n, 3, &d, 0, 0, 0};
    int info = 0, rc = gsl_multifit_nlinear_init(p0, &fdf, w);
    if (rc == GSL_SUCCESS)
        rc = gsl_multifit_nlinear_driver(200, 1e-12, 1e-12, 1e-12, NULL, NULL, &info, w);
    const gsl_vector *p = gsl_multifit_nlinear_position(w);
    double chi2 = 0;
    gsl_blas_ddot(gsl_multifit_nlinear_residual(w), gsl_multifit_nlinear_residual(w), &chi2);
    int gc = gsl_multifit_nlinear_covar(gsl_multifit_nlinear_jac(w), 0.0, cov);
    double A = gsl_vector_get(p, 0), F = gsl_vector_get(p, 1), u = gsl_vector_get(p, 2);
    if ((rc != GSL_SUCCESS && rc != GSL_EMAXITER) || gc != GSL_SUCCESS || !isfinite(A) || !isfinite(F) ||
        !isfinite(u)) {
        gsl_multifit_nlinear_free(w);
        gsl_matrix_free(cov);
        gsl_vector_free(p0);
        return sensim_error(SENSIM_EDATA, "hdop: the low-pass fit did not converge (%s)",
                            rc != GSL_SUCCESS ? "solver failed" : "singular Jacobian");
    }
    double s2 = chi2 / (double)(n - 3);
    double tq = gsl_cdf_tdist_Pinv(0.5 + confidence / 2, (double)(n - 3));
    double se[3];
    for (int i = 0; i < 3; i++)
        se[i] = sqrt(fmax(0.0, gsl_matrix_get(cov, (size_t)i, (size_t)i) * s2));
    fit->initial = (sensim_fit_param){A, A - tq * se[0], A + tq * se[0], SENSIM_FIT_OK};
    fit->final = (sensim_fit_param){F, F - tq * se[1], F + tq * se[1], SENSIM_FIT_OK};
    fit->tau = (sensim_fit_param){exp(u), exp(u - tq * se[2]), exp(u + tq * se[2]), SENSIM_FIT_OK};
    fit->t0 = t0;
    fit->rms = sqrt(chi2 / (double)n);
    fit->n = n;
    fit->iterations = (int)gsl_multifit_nlinear_niter(w);
    if (rc == GSL_EMAXITER)
        snprintf(fit->note, sizeof fit->note, "stopped after the iteration limit");
    else if (exp(u) > t[n - 1] - t0)
        snprintf(fit->note, sizeof fit->note, "tau exceeds the log's span: final is an extrapolation");
    gsl_multifit_nlinear_free(w);
    gsl_matrix_free(cov);
    gsl_vector_free(p0);
    return SENSIM_OK;
}
