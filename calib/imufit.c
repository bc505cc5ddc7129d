/* IMU noise fit on the Allan variance: see include/sensim/imufit.h.
 * Model: IEEE Std 952-1997 Annex C / IEEE Std 1293 (MODELS.md); variance of
 * an Allan-variance estimate: NIST SP 1065 eq. 44 (chi-squared, edf). */
#include "sensim/imufit.h"
#include "../lib/linalg_internal.h"

#include <gsl/gsl_cdf.h>
#include <gsl/gsl_sf_expint.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#define NT SENSIM_TERM_COUNT
#define MAXPTS 512 /* points per fit: scratch lives on the stack */
#define F0_PER_DECADE 6 /* cutoffs of the bias-instability term tried per decade */
#define F0_MAX 96       /* at most this many (16 decades of tau) */

static const char *const term_keys[NT] = {"quantization", "noise_density", "bias_instability", "random_walk",
                                          "rate_ramp"};
static const char *const term_syms[NT] = {"Q", "N", "B", "K", "R"};

/* AVAR coefficient of each squared parameter, and its power of tau. */
static double term_coef(int k)
{
    static const double c[NT] = {3.0, 1.0, 0.0, 1.0 / 3.0, 0.5};
    return k == SENSIM_TERM_B ? 2.0 * M_LN2 / M_PI : c[k];
}
static double basis(int k, double tau)
{
    return pow(tau, k - 2);
}

const char *sensim_imu_term_key(sensim_imu_term t)
{
    return (unsigned)t < NT ? term_keys[t] : NULL;
}
const char *sensim_imu_term_symbol(sensim_imu_term t)
{
    return (unsigned)t < NT ? term_syms[t] : NULL;
}

sensim_imu_fit_opts sensim_imu_fit_default_opts(void)
{
    sensim_imu_fit_opts o = {0.95, (1u << NT) - 1};
    return o;
}

double sensim_imu_avar(const double p[NT], double tau)
{
    double s = 0;
    for (int k = 0; k < NT; k++)
        s += term_coef(k) * p[k] * p[k] * basis(k, tau);
    return s;
}

double sensim_gm_avar(double sigma, double T, double tau)
{
    double x = tau / T;
    if (x < 1e-3) /* series of the bracket, (2/3) x^3 - (1/2) x^4 ..., to avoid cancellation */
        return sigma * sigma * (2.0 / 3.0 * x - 0.5 * x * x + 7.0 / 30.0 * x * x * x);
    return sigma * sigma / (x * x) * (2 * x - 3 + 4 * exp(-x) - exp(-2 * x));
}

/* Weighted least squares of y on the columns of A (n x nc, row-major),
 * weights w. Columns are scaled to unit weighted norm so that tau^-2 and
 * tau^2 columns over six decades stay well conditioned. Returns 0 and
 * c, cov (nc x nc), chi2; -1 when singular. */
static int wls(const double *A, const double *y, const double *w, size_t n, int nc, double *c, double *cov,
               double *chi2)
{
    double G[NT][2 * NT], s[NT], b[NT];
    if ((size_t)nc > n || nc < 1)
        return -1;
    for (int j = 0; j < nc; j++) {
        double q = 0;
        for (size_t i = 0; i < n; i++)
            q += w[i] * A[i * nc + j] * A[i * nc + j];
        if (!(q > 0))
            return -1;
        s[j] = sqrt(q);
    }
    for (int j = 0; j < nc; j++) {
        b[j] = 0;
        for (size_t i = 0; i < n; i++)
            b[j] += w[i] * A[i * nc + j] / s[j] * y[i];
        for (int k = 0; k < nc; k++) {
            double q = 0;
            for (size_t i = 0; i < n; i++)
                q += w[i] * A[i * nc + j] * A[i * nc + k];
            G[j][k] = q / (s[j] * s[k]);
            G[j][nc + k] = j == k;
        }
    }
    if (sensim_gauss_jordan_(&G[0][0], nc, 2 * NT, 1e-12))
        return -1;
    for (int j = 0; j < nc; j++) {
        c[j] = 0;
        for (int k = 0; k < nc; k++)
            c[j] += G[j][nc + k] * b[k];
        c[j] /= s[j];
    }
    for (int j = 0; j < nc; j++)
        for (int k = 0; k < nc; k++)
            cov[j * nc + k] = G[j][nc + k] / (s[j] * s[k]);
    double x2 = 0;
    for (size_t i = 0; i < n; i++) {
        double f = 0;
        for (int j = 0; j < nc; j++)
            f += A[i * nc + j] * c[j];
        x2 += w[i] * (y[i] - f) * (y[i] - f);
    }
    *chi2 = x2;
    return 0;
}

/* The bias-instability term of IEEE Std 952-1997 Annex C with its cutoff:
 * rate PSD B^2 / (2 pi f) for f <= f0 and 0 above gives
 *   AVAR = (2 B^2 / pi) [ln 2 - sin^3 x (sin x + 4 x cos x) / (2 x^2)
 *                         + Ci(2x) - Ci(4x)],  x = pi f0 tau,
 * which tends to the flat (2 ln 2 / pi) B^2 for tau >> 1/f0 and falls as
 * tau below it. Returned per unit of the flat coefficient (so 1 at f0 =
 * infinity, the flat model). */
static double flicker_shape(double tau, double f0)
{
    double x = M_PI * f0 * tau;
    if (!(x < 1e6))
        return 1;
    if (x < 1e-3) /* leading term x^2 / 2 of the bracket: no cancellation */
        return x * x / (2 * M_LN2);
    double sx = sin(x);
    SENSIM_GSL_QUIET_SCOPE();
    return (M_LN2 - sx * sx * sx * (sx + 4 * x * cos(x)) / (2 * x * x) + gsl_sf_Ci(2 * x) - gsl_sf_Ci(4 * x)) / M_LN2;
}

/* Column k of the design at point i: the power of tau, or for B the
 * band-limited shape bcol[i] (bcol NULL: flat). */
static double column(int k, const double *tau, size_t i, const double *bcol)
{
    return k == SENSIM_TERM_B && bcol ? bcol[i] : basis(k, tau[i]);
}

/* WLS of the five-term model restricted to the terms in mask: c[k] and
 * var[k] for those terms (others 0); B's column bcol (NULL: flat). */
static int fit_subset(const double *tau, const double *y, const double *w, size_t n, unsigned mask,
                      const double *bcol, double c[NT], double var[NT], double *chi2)
{
    double A[MAXPTS * NT];
    int idx[NT], nc = 0;
    for (int k = 0; k < NT; k++)
        if (mask >> k & 1)
            idx[nc++] = k;
    for (size_t i = 0; i < n; i++)
        for (int j = 0; j < nc; j++)
            A[i * nc + j] = column(idx[j], tau, i, bcol);
    double cc[NT], cov[NT * NT];
    if (wls(A, y, w, n, nc, cc, cov, chi2))
        return -1;
    for (int k = 0; k < NT; k++)
        c[k] = var[k] = 0;
    for (int j = 0; j < nc; j++) {
        c[idx[j]] = cc[j];
        var[idx[j]] = cov[j * nc + j];
    }
    return 0;
}

static int popcount(unsigned m)
{
    int c = 0;
    for (; m; m &= m - 1)
        c++;
    return c;
}

/* Non-negative least squares by enumeration of the (at most 31) subsets. */
static unsigned nnls(const double *tau, const double *y, const double *w, size_t n, unsigned allowed,
                     const double *bcol, double c[NT], double var[NT], double *chi2)
{
    unsigned best = 0;
    double bestx2 = INFINITY;
    for (unsigned s = 1; s < (1u << NT); s++) {
        if ((s & ~allowed) || (size_t)popcount(s) > n)
            continue;
        double cs[NT], vs[NT], x2;
        if (fit_subset(tau, y, w, n, s, bcol, cs, vs, &x2))
            continue;
        int ok = 1;
        for (int k = 0; k < NT; k++)
            if ((s >> k & 1) && !(cs[k] > 0))
                ok = 0;
        if (ok && x2 < bestx2) {
            bestx2 = x2;
            best = s;
            memcpy(c, cs, sizeof cs);
            memcpy(var, vs, sizeof vs);
        }
    }
    *chi2 = bestx2;
    return best;
}

/* The WLS treats the Allan points as independent, but overlapping
 * estimates at neighbouring taus share most of their data. For white noise
 * on an octave grid the edf summed over the grid is about 2.5 times the edf
 * at tau0 (edf ~ 1/m: 1 + 0.69 + 0.39 + 0.21 + ...), while the whole record
 * holds about 1.3 times it (a sample variance has n - 1 degrees of freedom,
 * OADEV at m = 1 about 0.78 n): the information is overcounted about twice,
 * and proportionally more on denser grids. The covariance is multiplied by
 * 2.5 per point per octave (the round-trip tests check the coverage). */
static double correlation_inflation(const double *tau, size_t m)
{
    double octaves = log2(tau[m - 1] / tau[0]), per = octaves > 0 ? (double)(m - 1) / octaves : 1;
    return 2.5 * (per > 1 ? per : 1);
}

static double z_of(double confidence)
{
    SENSIM_GSL_QUIET_SCOPE();
    return gsl_cdf_ugaussian_Pinv(0.5 + confidence / 2);
}

static sensim_status gather(const sensim_allan_point *pt, size_t n, double *tau, double *y, double *edf, size_t *m)
{
    size_t k = 0;
    if (n > MAXPTS)
        return sensim_error(SENSIM_EINVAL, "fit: %zu Allan points; at most %d", n, MAXPTS);
    for (size_t i = 0; i < n; i++) {
        /* A point whose noise type could not be identified rests on fewer
         * than 4 averaged samples: its chi-squared law (EDF near 1) is too
         * skewed for the least-squares weights, and it is left out. */
        if (!(pt[i].dev > 0) || !isfinite(pt[i].dev) || !(pt[i].tau > 0) || pt[i].alpha == SENSIM_ALLAN_ALPHA_UNKNOWN)
            continue;
        tau[k] = pt[i].tau;
        y[k] = pt[i].dev * pt[i].dev;
        edf[k] = pt[i].edf > 0 ? pt[i].edf : 1;
        k++;
    }
    *m = k;
    if (k < 2)
        return sensim_error(SENSIM_EDATA, "fit: %zu usable Allan points (positive deviation); need at least 2", k);
    return SENSIM_OK;
}

static void classic_readoffs(const double *tau, const double *y, size_t n, double out[NT])
{
    static const double target[NT] = {-1, -0.5, 0, 0.5, 1};
    double dmin = INFINITY;
    for (size_t i = 0; i < n; i++)
        dmin = fmin(dmin, sqrt(y[i]));
    for (int k = 0; k < NT; k++) {
        out[k] = 0;
        double bestd = 0.2;
        for (size_t i = 0; i < n; i++) {
            size_t a = i > 0 ? i - 1 : i, b = i + 1 < n ? i + 1 : i;
            if (a == b)
                continue;
            double sl = 0.5 * (log(y[b]) - log(y[a])) / (log(tau[b]) - log(tau[a]));
            double d = fabs(sl - target[k]), dev = sqrt(y[i]);
            if (d >= bestd)
                continue;
            bestd = d;
            switch (k) {
            case SENSIM_TERM_Q: out[k] = dev * tau[i] / sqrt(3.0); break;
            case SENSIM_TERM_N: out[k] = dev * sqrt(tau[i]); break;
            case SENSIM_TERM_K: out[k] = dev * sqrt(3.0 / tau[i]); break;
            case SENSIM_TERM_R: out[k] = dev * sqrt(2.0) / tau[i]; break;
            default: break;
            }
        }
    }
    /* The flat floor: min ADEV / sqrt(2 ln 2 / pi) = min / 0.664. */
    out[SENSIM_TERM_B] = dmin / sqrt(2 * M_LN2 / M_PI);
}

static void append_note(char *note, size_t cap, const char *fmt, const char *sym, size_t a, size_t b)
{
    size_t len = strlen(note);
    if (len + 2 < cap)
        snprintf(note + len, cap - len, fmt, len ? "; " : "", sym, a, b);
}

sensim_status sensim_imu_fit_allan(const sensim_allan_point *pt, size_t n, const sensim_imu_fit_opts *o,
                                   sensim_imu_fit *fit)
{
    double tau[MAXPTS], y[MAXPTS], edf[MAXPTS], w[MAXPTS];
    sensim_imu_fit_opts def = sensim_imu_fit_default_opts();
    if (!o)
        o = &def;
    memset(fit, 0, sizeof *fit);
    if (!(o->confidence > 0 && o->confidence < 1))
        return sensim_error(SENSIM_EINVAL, "fit: confidence %g must lie strictly between 0 and 1", o->confidence);
    unsigned allowed = o->terms & ((1u << NT) - 1);
    if (!allowed)
        return sensim_error(SENSIM_EINVAL, "fit: no terms selected");
    size_t m;
    sensim_status st = gather(pt, n, tau, y, edf, &m);
    if (st)
        return st;
    classic_readoffs(tau, y, m, fit->classic);

    double c[NT] = {0}, var[NT] = {0}, chi2 = INFINITY;
    unsigned S = 0;
    /* Weights from the data first, then twice from the fitted model, so
     * that a low estimate does not get an undeservedly large weight. */
    for (size_t i = 0; i < m; i++)
        w[i] = edf[i] / (2 * y[i] * y[i]);
    for (int it = 0; it < 3; it++) {
        S = nnls(tau, y, w, m, allowed, NULL, c, var, &chi2);
        if (!S)
            return sensim_error(SENSIM_EDATA, "fit: no non-negative combination of the noise terms fits %zu points", m);
        for (size_t i = 0; i < m; i++) {
            double f = 0;
            for (int k = 0; k < NT; k++)
                f += c[k] * basis(k, tau[i]);
            w[i] = edf[i] / (2 * f * f);
        }
    }
    /* The cutoff f0 of the bias-instability term (IEEE 952 Annex C) is
     * not known: a real flicker floor need not reach down to tau0 (a sum of
     * Gauss-Markov processes, the usual simulation and the usual physics,
     * stops at its shortest correlation time). The flat model then puts
     * (2 ln 2 / pi) B^2 into short taus that do not hold it and N, fitted
     * there at edf ~ 1e5, comes out low by more than its standard error.
     * So the fit is profiled over f0 (flat, then F0_PER_DECADE values a
     * decade from 30 / tau0 down to 1 / tau_max): the point estimate is the
     * f0 of least chi-squared, and each interval is the union of the
     * intervals at every f0 whose chi-squared lies within z^2 (scaled) of
     * the least, as for the Gauss-Markov correlation time below. */
    const int profile = (allowed >> SENSIM_TERM_B & 1) != 0;
    int ng = 1;
    double f0s[F0_MAX];
    f0s[0] = INFINITY;
    if (profile)
        for (double f0 = 30 / tau[0]; f0 >= 1 / tau[m - 1] && ng < F0_MAX; f0 *= pow(10, -1.0 / F0_PER_DECADE))
            f0s[ng++] = f0;
    double gx2[F0_MAX], gc[F0_MAX][NT], gv[F0_MAX][NT], fc[F0_MAX][NT], fv[F0_MAX][NT], bcol[MAXPTS];
    unsigned gS[F0_MAX];
    int gfull[F0_MAX], best = -1;
    /* Twice: the second pass weights the points by the best model of the
     * first, cutoff included (the flat model overstates short taus). */
    for (int pass = 0; pass < 2; pass++) {
        if (pass) {
            for (size_t i = 0; i < m; i++) {
                double f = 0;
                for (int k = 0; k < NT; k++)
                    f += gc[best][k] * (k == SENSIM_TERM_B ? flicker_shape(tau[i], f0s[best]) : basis(k, tau[i]));
                w[i] = edf[i] / (2 * f * f);
            }
            best = -1;
        }
        for (int g = 0; g < ng; g++) {
            for (size_t i = 0; i < m; i++)
                bcol[i] = flicker_shape(tau[i], f0s[g]);
            gS[g] = nnls(tau, y, w, m, allowed, bcol, gc[g], gv[g], &gx2[g]);
            if (!gS[g])
                gx2[g] = INFINITY;
            double x2f;
            /* Intervals from the unconstrained fit of every allowed term. The
             * non-negative solution is the point estimate, but an interval from
             * its subset alone is conditional on the terms the constraint
             * removed being exactly 0: when the data put a term such as Q just
             * below zero it is dropped and N is fitted as if Q were known to be
             * 0; when they put it just above, Q takes part of N's short-tau
             * variance. That truncation biases N low and the conditional
             * interval is too narrow. The unconstrained weighted least squares
             * is unbiased under the model, so its z-interval covers at the
             * nominal rate; intersecting it with the feasible set (>= 0) and
             * widening it to hold the point estimate keeps that coverage.
             * Without the points for it, the subset is used. */
            gfull[g] = popcount(allowed) < (int)m && !fit_subset(tau, y, w, m, allowed, bcol, fc[g], fv[g], &x2f);
            if (gx2[g] < INFINITY && (best < 0 || gx2[g] < gx2[best]))
                best = g;
        }
        if (best < 0)
            return sensim_error(SENSIM_EDATA, "fit: no non-negative combination of the noise terms fits %zu points", m);
    }
    for (size_t i = 0; i < m; i++)
        bcol[i] = flicker_shape(tau[i], f0s[best]);
    S = gS[best];
    chi2 = gx2[best];
    memcpy(c, gc[best], sizeof c);
    memcpy(var, gv[best], sizeof var);
    int dof = (int)m - popcount(S) - (ng > 1);
    double scale = (dof > 0 && chi2 / dof > 1 ? chi2 / dof : 1) * correlation_inflation(tau, m);
    double z = z_of(o->confidence), lim = chi2 + z * z * scale;
    fit->chi2 = chi2;
    fit->dof = dof;
    fit->scale = scale;
    for (int k = 0; k < NT; k++) {
        sensim_fit_param *p = &fit->term[k];
        double cf = term_coef(k);
        if (!(allowed >> k & 1)) {
            p->flag = SENSIM_FIT_UNRESOLVED;
            append_note(fit->note, sizeof fit->note, "%s%s not fitted (excluded)", term_syms[k], 0, 0);
            continue;
        }
        /* Union over the cutoffs that fit as well as the best, within z^2. */
        double lo = INFINITY, hi = -INFINITY;
        int have = 0;
        for (int g = 0; g < ng; g++) {
            if (!(gx2[g] <= lim))
                continue;
            double v, sd;
            if (gfull[g] && fv[g][k] > 0) {
                v = fc[g][k];
                sd = sqrt(fv[g][k] * scale);
            } else if (gS[g] >> k & 1) {
                v = gc[g][k];
                sd = sqrt(gv[g][k] * scale);
            } else {
                continue;
            }
            lo = fmin(lo, v - z * sd);
            hi = fmax(hi, v + z * sd);
            have = 1;
        }
        if (S >> k & 1) {
            if (!have)
                lo = hi = c[k];
            lo = fmin(lo, c[k]);
            hi = fmax(hi, c[k]);
            p->value = sqrt(c[k] / cf);
            p->lo = lo > 0 ? sqrt(lo / cf) : 0;
            p->hi = sqrt(hi / cf);
            p->flag = lo > 0 ? SENSIM_FIT_OK : SENSIM_FIT_UPPER;
            continue;
        }
        /* Excluded by the constraint: its upper bound from the fits with it
         * (and every other allowed term) free. */
        if (!have) {
            double c2[NT], v2[NT], x2;
            if ((size_t)popcount(S | 1u << k) > m ||
                fit_subset(tau, y, w, m, S | 1u << k, bcol, c2, v2, &x2)) {
                p->flag = SENSIM_FIT_UNRESOLVED;
                append_note(fit->note, sizeof fit->note, "%s%s not identifiable: %zu tau points for %zu terms",
                            term_syms[k], m, (size_t)popcount(S | 1u << k));
                continue;
            }
            hi = fmax(c2[k], 0) + z * sqrt(v2[k] * scale);
        }
        p->value = 0;
        p->lo = 0;
        p->hi = hi > 0 ? sqrt(hi / cf) : 0;
        p->flag = SENSIM_FIT_UPPER;
    }
    /* Say which terms the data cannot pin down (consistent with zero). */
    char up[32] = "";
    for (int k = 0; k < NT; k++)
        if ((allowed >> k & 1) && fit->term[k].flag == SENSIM_FIT_UPPER)
            snprintf(up + strlen(up), sizeof up - strlen(up), "%s%s", *up ? ", " : "", term_syms[k]);
    if (*up) {
        size_t len = strlen(fit->note);
        snprintf(fit->note + len, sizeof fit->note - len,
                 "%s%s not identifiable from tau %g..%g s (consistent with zero): upper bounds only", len ? "; " : "",
                 up, tau[0], tau[m - 1]);
    }
    return SENSIM_OK;
}

/* ---- Gauss-Markov ---- */

/* White + GM at correlation time T: NNLS over {GM} and {N, GM}. */
static int gm_at(const double *tau, const double *y, const double *w, size_t n, double T, double c[2], double v[2],
                 double *chi2)
{
    double A[MAXPTS * 2];
    double best = INFINITY;
    int found = -1;
    for (int withN = 1; withN >= 0; withN--) {
        int nc = withN ? 2 : 1;
        for (size_t i = 0; i < n; i++) {
            A[i * nc] = sensim_gm_avar(1, T, tau[i]);
            if (withN)
                A[i * nc + 1] = 1 / tau[i];
        }
        double cc[2], cov[4], x2;
        if (wls(A, y, w, n, nc, cc, cov, &x2) || !(cc[0] > 0) || (withN && !(cc[1] > 0)))
            continue;
        if (x2 < best) {
            best = x2;
            c[0] = cc[0];
            v[0] = cov[0];
            c[1] = withN ? cc[1] : 0;
            v[1] = withN ? cov[3] : 0;
            found = 0;
        }
    }
    *chi2 = best;
    return found;
}

#define GM_GRID 400

sensim_status sensim_gm_fit_allan(const sensim_allan_point *pt, size_t n, double confidence, sensim_gm_fit *fit)
{
    double tau[MAXPTS], y[MAXPTS], edf[MAXPTS], w[MAXPTS];
    memset(fit, 0, sizeof *fit);
    if (!(confidence > 0 && confidence < 1))
        return sensim_error(SENSIM_EINVAL, "fit: confidence %g must lie strictly between 0 and 1", confidence);
    size_t m;
    sensim_status st = gather(pt, n, tau, y, edf, &m);
    if (st)
        return st;
    if (m < 3)
        return sensim_error(SENSIM_EDATA, "Gauss-Markov fit: %zu Allan points; need at least 3", m);
    double t0 = log(tau[0] / 10), t1 = log(tau[m - 1] * 10), x2[GM_GRID], cs[GM_GRID][2], vs[GM_GRID][2];
    for (size_t i = 0; i < m; i++)
        w[i] = edf[i] / (2 * y[i] * y[i]);
    int best = -1;
    for (int it = 0; it < 3; it++) {
        best = -1;
        for (int g = 0; g < GM_GRID; g++) {
            double T = exp(t0 + (t1 - t0) * g / (GM_GRID - 1));
            if (gm_at(tau, y, w, m, T, cs[g], vs[g], &x2[g]))
                x2[g] = INFINITY;
            if (x2[g] < INFINITY && (best < 0 || x2[g] < x2[best]))
                best = g;
        }
        if (best < 0)
            return sensim_error(SENSIM_EDATA, "Gauss-Markov fit: no positive Gauss-Markov variance fits the curve");
        if (it == 2)
            break;
        double T = exp(t0 + (t1 - t0) * best / (GM_GRID - 1));
        for (size_t i = 0; i < m; i++) {
            double f = cs[best][0] * sensim_gm_avar(1, T, tau[i]) + cs[best][1] / tau[i];
            w[i] = edf[i] / (2 * f * f);
        }
    }
    int npar = cs[best][1] > 0 ? 3 : 2;
    fit->dof = (int)m - npar;
    fit->chi2 = x2[best];
    double scale = fit->dof > 0 && fit->chi2 / fit->dof > 1 ? fit->chi2 / fit->dof : 1, z = z_of(confidence);
    double lim = x2[best] + z * z * scale;
    int glo = best, ghi = best;
    while (glo > 0 && x2[glo - 1] <= lim)
        glo--;
    while (ghi < GM_GRID - 1 && x2[ghi + 1] <= lim)
        ghi++;
    fit->tau.value = exp(t0 + (t1 - t0) * best / (GM_GRID - 1));
    fit->tau.lo = exp(t0 + (t1 - t0) * glo / (GM_GRID - 1));
    fit->tau.hi = exp(t0 + (t1 - t0) * ghi / (GM_GRID - 1));
    fit->tau.flag = SENSIM_FIT_OK;
    if (glo == 0 || ghi == GM_GRID - 1) {
        fit->tau.flag = SENSIM_FIT_UNRESOLVED;
        snprintf(fit->note, sizeof fit->note,
                 "correlation time not bounded %s by the tau range %g..%g s", glo == 0 ? "below" : "above", tau[0],
                 tau[m - 1]);
    }
    double slo = INFINITY, shi = 0;
    for (int g = glo; g <= ghi; g++) {
        if (!(x2[g] <= lim))
            continue;
        double sd = sqrt(vs[g][0] * scale);
        slo = fmin(slo, cs[g][0] - z * sd);
        shi = fmax(shi, cs[g][0] + z * sd);
    }
    fit->sigma.value = sqrt(cs[best][0]);
    fit->sigma.lo = slo > 0 ? sqrt(slo) : 0;
    fit->sigma.hi = sqrt(shi);
    fit->sigma.flag = slo > 0 ? SENSIM_FIT_OK : SENSIM_FIT_UPPER;
    double nsd = sqrt(vs[best][1] * scale);
    fit->white.value = sqrt(cs[best][1]);
    fit->white.lo = cs[best][1] - z * nsd > 0 ? sqrt(cs[best][1] - z * nsd) : 0;
    fit->white.hi = sqrt(cs[best][1] + z * nsd);
    fit->white.flag = cs[best][1] - z * nsd > 0 ? SENSIM_FIT_OK : SENSIM_FIT_UPPER;
    return SENSIM_OK;
}
