/* Photon transfer (EMVA Standard 1288, release 3.1, sections 6-8): gain from
 * the slope of temporal variance against mean above dark, read noise and
 * dark current from the dark frames against exposure, saturation at the
 * maximal variance, PRNU and DSNU from the spatial variance of pair means
 * with the temporal part removed. See sensim/ptc.h. */
#include "sensim/ptc.h"

#include "sensim/afile.h"
#include "sensim/log.h"
#include "sensim/plot.h"

#include <errno.h>
#include <gsl/gsl_fit.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define Z95 1.959963984540054

static inline double raw(sensim_pixel_type t, const void *buf, size_t i)
{
    switch (t) {
    case SENSIM_PIXEL_U8:
        return ((const uint8_t *)buf)[i];
    case SENSIM_PIXEL_U16:
        return ((const uint16_t *)buf)[i];
    default:
        return ((const float *)buf)[i];
    }
}

/* Mean of the pair, temporal variance var(A - B)/2, spatial variance of the
 * pair mean. Two passes in a fixed order: the result does not depend on
 * threads. */
static sensim_status pair_stats(sensim_pixel_type t, size_t n, const void *a, const void *b, double *mu, double *tvar,
                                double *svar)
{
    double sa = 0, sb = 0;
    for (size_t i = 0; i < n; i++) {
        double x = raw(t, a, i), y = raw(t, b, i);
        if (!isfinite(x) || !isfinite(y))
            return sensim_error(SENSIM_EDATA, "ptc: non-finite sample at pixel %zu", i);
        sa += x;
        sb += y;
    }
    double ma = sa / n, mb = sb / n, m = 0.5 * (ma + mb), dd = 0, ss = 0;
    for (size_t i = 0; i < n; i++) {
        double x = raw(t, a, i), y = raw(t, b, i);
        double d = (x - y) - (ma - mb), s = 0.5 * (x + y) - m;
        dd += d * d;
        ss += s * s;
    }
    *mu = m;
    *tvar = dd / (2.0 * (double)(n - 1));
    *svar = ss / (double)(n - 1);
    return SENSIM_OK;
}

sensim_status sensim_ptc_level_compute(sensim_pixel_type t, size_t npix, const void *a, const void *b,
                                       const void *dark_a, const void *dark_b, double exposure, sensim_ptc_level *out)
{
    if (!a || !b || !out)
        return sensim_error(SENSIM_EINVAL, "ptc: NULL frame");
    if (npix < 2)
        return sensim_error(SENSIM_EINVAL, "ptc: %zu pixels per frame: need at least 2", npix);
    if (t != SENSIM_PIXEL_U8 && t != SENSIM_PIXEL_U16 && t != SENSIM_PIXEL_F32)
        return sensim_error(SENSIM_EUNSUPPORTED, "ptc: unsupported pixel type %d", (int)t);
    if (!(exposure >= 0) || !isfinite(exposure))
        return sensim_error(SENSIM_EINVAL, "ptc: exposure %g s: must be finite and >= 0", exposure);
    if ((dark_a == NULL) != (dark_b == NULL))
        return sensim_error(SENSIM_EINVAL, "ptc: give both dark frames or neither");
    memset(out, 0, sizeof *out);
    out->exposure = exposure;
    out->npix = npix;
    sensim_status st = pair_stats(t, npix, a, b, &out->mu_y, &out->var_y, &out->svar_y);
    if (st == SENSIM_OK && dark_a)
        st = pair_stats(t, npix, dark_a, dark_b, &out->mu_dark, &out->var_dark, &out->svar_dark);
    return st;
}

/* Weighted line fit y = c0 + c1 x; covariance scaled by max(1, chi2/dof). */
static int wfit(const double *x, const double *w, const double *y, size_t n, double *c0, double *c1, double *v00,
                double *v11, double *v01)
{
    double cov00, cov01, cov11, chisq;
    if (n < 2 || gsl_fit_wlinear(x, 1, w, 1, y, 1, n, c0, c1, &cov00, &cov01, &cov11, &chisq) != 0)
        return -1;
    double s = n > 2 ? chisq / (double)(n - 2) : 1.0;
    if (!(s > 1))
        s = 1;
    *v00 = cov00 * s;
    *v11 = cov11 * s;
    if (v01)
        *v01 = cov01 * s;
    return isfinite(*c0) && isfinite(*c1) ? 0 : -1;
}

sensim_status sensim_ptc_fit(const sensim_ptc_level *lv, size_t n, double full_scale, sensim_ptc_result *r)
{
    if (!lv || !r)
        return sensim_error(SENSIM_EINVAL, "ptc: NULL levels or result");
    if (!(full_scale > 0))
        return sensim_error(SENSIM_EINVAL, "ptc: full_scale = %g: must be > 0", full_scale);
    if (n < 3)
        return sensim_error(SENSIM_EDATA, "ptc: %zu exposure levels: need at least 3", n);
    SENSIM_GSL_QUIET_SCOPE();
    for (size_t i = 0; i < n; i++)
        if (!isfinite(lv[i].mu_y) || !isfinite(lv[i].var_y) || lv[i].npix < 2)
            return sensim_error(SENSIM_EDATA, "ptc: level %zu: non-finite statistics or too few pixels", i);
    memset(r, 0, sizeof *r);
    /* Saturation: the level of maximal temporal variance (EMVA 1288). */
    size_t isat = 0;
    for (size_t i = 1; i < n; i++)
        if (lv[i].var_y > lv[isat].var_y)
            isat = i;
    double sat = lv[isat].mu_y - lv[isat].mu_dark;
    r->saturation_dn = sat;
    /* The variance must turn down after its peak for saturation to have
     * been seen: a peak at the brightest level only bounds it from below. */
    r->saturation_reached = 0;
    for (size_t i = 0; i < n; i++)
        if (lv[i].mu_y - lv[i].mu_dark > sat)
            r->saturation_reached = 1;
    double *x = malloc(n * sizeof *x), *y = malloc(n * sizeof *y), *w = malloc(n * sizeof *w);
    double *xt = malloc(n * sizeof *xt), *yt = malloc(n * sizeof *yt), *wt = malloc(n * sizeof *wt);
    sensim_status st = SENSIM_OK;
    if (!x || !y || !w || !xt || !yt || !wt) {
        st = sensim_error(SENSIM_ENOMEM, "ptc: out of memory");
        goto done;
    }
    /* Gain: (var_y - var_dark) = K (mu_y - mu_dark) + c, below 70 % of
     * saturation. Var of a variance estimate from npix differences is about
     * 2 var^2 / npix, which gives the weights. */
    size_t m = 0;
    for (size_t i = 0; i < n; i++) {
        double dx = lv[i].mu_y - lv[i].mu_dark;
        if (dx > 0.7 * sat || dx <= 0)
            continue;
        double np = (double)lv[i].npix;
        x[m] = dx;
        y[m] = lv[i].var_y - lv[i].var_dark;
        w[m] = 1.0 / (2.0 * (lv[i].var_y * lv[i].var_y + lv[i].var_dark * lv[i].var_dark) / np + 1e-300);
        m++;
    }
    r->levels_used = m;
    if (m < 3) {
        st = sensim_error(SENSIM_EDATA,
                          "ptc: %zu levels below 70 %% of saturation (%.6g DN above dark): need at least 3; add "
                          "shorter exposures",
                          m, sat);
        goto done;
    }
    double c0, K, v00, vK;
    if (wfit(x, w, y, m, &c0, &K, &v00, &vK, NULL) != 0 || !(K > 0)) {
        st = sensim_error(SENSIM_EDATA, "ptc: the photon-transfer fit failed (gain %g): variance does not grow "
                          "with the mean", K);
        goto done;
    }
    r->gain = K;
    r->gain_ci = Z95 * sqrt(vK);
    /* EMVA 1288 validity: temporal variances under 0.24 DN^2 are
     * quantization limited (release 3.1, 6.5). The dark frames where there
     * are any, else the light levels of the gain fit. */
    {
        double vmin = INFINITY;
        int dark = 0;
        for (size_t i = 0; i < n; i++)
            dark |= lv[i].var_dark > 0 || lv[i].mu_dark > 0;
        for (size_t i = 0; i < n; i++) {
            double dx = lv[i].mu_y - lv[i].mu_dark;
            if (dark)
                vmin = fmin(vmin, lv[i].var_dark);
            else if (dx > 0 && dx <= 0.7 * sat)
                vmin = fmin(vmin, lv[i].var_y);
        }
        r->min_temporal_var_dn2 = vmin;
        r->quantization_limited = full_scale > 1 && vmin < 0.24;
    }
    r->saturation_capacity = sat / K;
    /* Dark: mean against exposure (slope K * dark current, intercept the
     * offset) and variance against exposure (intercept K^2 sigma_d^2 plus
     * 1/12 DN^2 of quantization for integer data). */
    const double q = full_scale > 1 ? 1.0 / 12.0 : 0.0;
    int have_dark = 0, distinct = 0;
    for (size_t i = 0; i < n; i++) {
        have_dark |= lv[i].var_dark > 0;
        distinct |= lv[i].exposure != lv[0].exposure;
    }
    r->dark_current = r->dark_current_ci = NAN;
    r->read_noise = r->read_noise_ci = NAN;
    r->dark_offset = lv[0].mu_dark;
    if (have_dark) {
        size_t k = 0;
        for (size_t i = 0; i < n; i++) {
            xt[k] = lv[i].exposure;
            yt[k] = lv[i].mu_dark;
            wt[k] = (double)lv[i].npix / (lv[i].var_dark + 1e-300);
            k++;
        }
        double v0, vv00, vv11, b0, b1, b00, b11;
        if (distinct && wfit(xt, wt, yt, k, &b0, &b1, &b00, &b11, NULL) == 0) {
            r->dark_offset = b0;
            r->dark_current = b1 / K;
            r->dark_current_ci = Z95 * sqrt(b11 / (K * K) + b1 * b1 * vK / (K * K * K * K));
            for (size_t i = 0; i < k; i++) {
                yt[i] = lv[i].var_dark;
                wt[i] = (double)lv[i].npix / (2.0 * lv[i].var_dark * lv[i].var_dark + 1e-300);
            }
            double vslope;
            if (wfit(xt, wt, yt, k, &v0, &vslope, &vv00, &vv11, NULL) != 0)
                v0 = NAN;
        } else {
            /* One exposure: the mean dark variance (dark shot noise folded in). */
            double s = 0, sw = 0;
            for (size_t i = 0; i < n; i++) {
                double wi = (double)lv[i].npix / (2.0 * lv[i].var_dark * lv[i].var_dark + 1e-300);
                s += wi * lv[i].var_dark;
                sw += wi;
            }
            v0 = s / sw;
            vv00 = 1.0 / sw;
        }
        if (isfinite(v0) && v0 > q) {
            double sd = sqrt(v0 - q) / K;
            r->read_noise = sd;
            double d0 = 1.0 / (2.0 * K * sqrt(v0 - q));
            r->read_noise_ci = Z95 * sqrt(d0 * d0 * vv00 + sd * sd / (K * K) * vK);
        } else {
            r->read_noise = 0;
        }
        /* DSNU at the shortest exposure, in electrons. */
        size_t i0 = 0;
        for (size_t i = 1; i < n; i++)
            if (lv[i].exposure < lv[i0].exposure)
                i0 = i;
        double sd2 = lv[i0].svar_dark - 0.5 * lv[i0].var_dark;
        r->dsnu = sd2 > 0 ? sqrt(sd2) / K : 0;
    }
    /* PRNU at the level nearest half saturation. */
    {
        size_t ih = 0;
        for (size_t i = 1; i < n; i++)
            if (fabs(lv[i].mu_y - lv[i].mu_dark - 0.5 * sat) < fabs(lv[ih].mu_y - lv[ih].mu_dark - 0.5 * sat))
                ih = i;
        double s2 = (lv[ih].svar_y - 0.5 * lv[ih].var_y) - (lv[ih].svar_dark - 0.5 * lv[ih].var_dark);
        double sig = lv[ih].mu_y - lv[ih].mu_dark;
        r->prnu = s2 > 0 && sig > 0 ? sqrt(s2) / sig : 0;
    }
    /* Simple model, seed 000 eq. 4, on normalized intensity. */
    {
        size_t k = 0;
        for (size_t i = 0; i < n; i++) {
            double dx = lv[i].mu_y - lv[i].mu_dark;
            if (dx > 0.7 * sat)
                continue;
            xt[k] = lv[i].mu_y / full_scale;
            yt[k] = lv[i].var_y / (full_scale * full_scale);
            wt[k] = (double)lv[i].npix / (2.0 * yt[k] * yt[k] + 1e-300);
            k++;
        }
        double a0, a1, a00, a11;
        if (k >= 2 && wfit(xt, wt, yt, k, &a0, &a1, &a00, &a11, NULL) == 0) {
            r->variance_slope = a1;
            r->variance_slope_ci = Z95 * sqrt(a11);
            r->variance_intercept = a0;
            r->variance_intercept_ci = Z95 * sqrt(a00);
        } else {
            r->variance_slope = r->variance_intercept = NAN;
            r->variance_slope_ci = r->variance_intercept_ci = NAN;
        }
    }
done:
    free(x);
    free(y);
    free(w);
    free(xt);
    free(yt);
    free(wt);
    return st;
}

/* The stack's layout: light [L,2,H,W] of u8, u16 or f32 with L >= 3, dark
 * (if any) [L,2,H,W] too, exposure [L] positive and increasing. */
static sensim_status stack_layout(const sensim_log *log, sensim_dtype *dt, size_t dims[4], int *dark)
{
    const char *in = sensim_log_path(log);
    int rank;
    size_t tail[3], nrow, ne;
    if (sensim_log_shape(log, "/stack/light", &rank, dims) || sensim_log_dtype(log, "/stack/light", dt))
        return sensim_last_status();
    if (rank != 4 || dims[1] != 2 || dims[0] < 3)
        return sensim_error(SENSIM_EFORMAT, "%s: /stack/light: expected [L,2,H,W] with L >= 3 levels", in);
    if (*dt != SENSIM_U8 && *dt != SENSIM_U16 && *dt != SENSIM_F32)
        return sensim_error(SENSIM_EFORMAT, "%s: /stack/light: element type must be u8, u16 or f32", in);
    tail[0] = 2, tail[1] = dims[2], tail[2] = dims[3];
    *dark = sensim_log_exists(log, "/stack/dark");
    if (*dark && sensim_log_check_shape(log, "/stack/dark", 3, tail, &nrow))
        return sensim_last_status();
    if (*dark && nrow != dims[0])
        return sensim_error(SENSIM_EFORMAT, "%s: /stack/dark has %zu levels, /stack/light %zu", in, nrow, dims[0]);
    if (sensim_log_check_shape(log, "/stack/exposure", 0, NULL, &ne))
        return sensim_last_status();
    if (ne != dims[0])
        return sensim_error(SENSIM_EFORMAT, "%s: /stack/exposure has %zu values for %zu levels", in, ne, dims[0]);
    return SENSIM_OK;
}

/* The exposures: the dark signal's slope over exposure is the dark
 * current, so exposures out of order (a stack written backwards) would
 * make it negative. */
static sensim_status stack_exposures(const sensim_log *log, size_t L, double *exp_s)
{
    if (sensim_log_read_f64(log, "/stack/exposure", 0, L, exp_s))
        return sensim_last_status();
    for (size_t k = 0; k < L; k++)
        if (!(exp_s[k] > 0) || !isfinite(exp_s[k]) || (k && !(exp_s[k] > exp_s[k - 1])))
            return sensim_error(SENSIM_EDATA,
                                "%s: /stack/exposure[%zu] is %.9g s%s: exposures must be positive and increasing, "
                                "one per level",
                                sensim_log_path(log), k, exp_s[k],
                                k && exp_s[k] <= exp_s[k - 1] ? " after a longer or equal one" : "");
    return SENSIM_OK;
}

sensim_status sensim_ptc_stack_read(const sensim_log *log, sensim_ptc_level **levels, size_t *n, double *full_scale)
{
    *levels = NULL;
    *n = 0;
    sensim_dtype dt;
    size_t dims[SENSIM_LOG_MAX_RANK];
    int dark = 0;
    sensim_status st = stack_layout(log, &dt, dims, &dark);
    if (st)
        return st;
    const size_t L = dims[0], npix = dims[2] * dims[3], esz = sensim_dtype_size(dt);
    const sensim_pixel_type pt =
        dt == SENSIM_U8 ? SENSIM_PIXEL_U8 : dt == SENSIM_U16 ? SENSIM_PIXEL_U16 : SENSIM_PIXEL_F32;
    double *exp_s = malloc(L * sizeof *exp_s);
    sensim_ptc_level *lv = malloc(L * sizeof *lv);
    unsigned char *a = malloc(2 * npix * esz), *d = malloc(2 * npix * esz);
    if (!exp_s || !lv || !a || !d)
        st = sensim_error(SENSIM_ENOMEM, "%s: /stack: out of memory", sensim_log_path(log));
    else
        st = stack_exposures(log, L, exp_s);
    for (size_t k = 0; k < L && !st; k++) {
        if (sensim_log_read(log, "/stack/light", dt, k, 1, a) ||
            (dark && sensim_log_read(log, "/stack/dark", dt, k, 1, d)))
            st = sensim_last_status();
        else if (sensim_ptc_level_compute(pt, npix, a, a + npix * esz, dark ? d : NULL, dark ? d + npix * esz : NULL,
                                          exp_s[k], &lv[k]))
            st = sensim_error_prefix(sensim_last_status(), "%s: level %zu", sensim_log_path(log), k);
    }
    free(exp_s);
    free(a);
    free(d);
    if (st) {
        free(lv);
        return st;
    }
    *levels = lv;
    *n = L;
    *full_scale = dt == SENSIM_U8 ? 255 : dt == SENSIM_U16 ? 65535 : 1;
    return SENSIM_OK;
}

/* The photon-transfer curve through the plotting module (sensim/plot.h):
 * the fitted line variance = K mean across the plot's decades up to the
 * saturation, and over it the levels below 70 % of saturation (the fitted
 * ones) and above. */
sensim_status sensim_ptc_plot_svg(const char *path, const sensim_ptc_level *lv, size_t n, const sensim_ptc_result *r)
{
    if (!path || !lv || !r || n == 0)
        return sensim_error(SENSIM_EINVAL, "ptc plot: nothing to plot");
    double xmin = INFINITY, xmax = -INFINITY, ymin = INFINITY;
    double *x = malloc(4 * n * sizeof *x), *y = x ? x + 2 * n : NULL;
    if (!x)
        return sensim_error(SENSIM_ENOMEM, "ptc plot %s: out of memory", path);
    /* x, y: the fitted range's levels; x + n, y + n: those near saturation
     * (NAN marks a point of the other set: it is skipped). */
    for (size_t i = 0; i < n; i++) {
        double xi = lv[i].mu_y - lv[i].mu_dark, yi = lv[i].var_y - lv[i].var_dark;
        int high = xi > 0.7 * r->saturation_dn;
        x[i] = x[n + i] = xi;
        y[i] = high ? NAN : yi;
        y[n + i] = high ? yi : NAN;
        if (xi > 0 && yi > 0) {
            xmin = fmin(xmin, xi);
            xmax = fmax(xmax, xi);
            ymin = fmin(ymin, yi);
        }
    }
    sensim_status st = SENSIM_OK;
    if (!(xmax > 0))
        st = sensim_error(SENSIM_EDATA, "ptc plot: no level above dark");
    char title[256], fit[64];
    snprintf(title, sizeof title, "Photon transfer: K = %.4g DN/e-, read noise %.3g e-, saturation %.5g e-", r->gain,
             r->read_noise, r->saturation_capacity);
    snprintf(fit, sizeof fit, "fit, K = %.4g", r->gain);
    sensim_plot *pl =
        st ? NULL : sensim_plot_create(title, "mean - dark (DN)", "temporal variance - dark variance (DN^2)");
    if (!st && !pl)
        st = sensim_last_status();
    if (!st && r->gain > 0) {
        /* From the left decade (or where the line enters the lowest
         * decade of variance) to the right one or the saturation. */
        double x0 = pow(10, floor(log10(xmin))), y0 = pow(10, floor(log10(ymin)));
        double lx[2] = {fmax(x0, y0 / r->gain), fmin(pow(10, ceil(log10(xmax))), r->saturation_dn)};
        double ly[2] = {r->gain * lx[0], r->gain * lx[1]};
        if (lx[1] > lx[0])
            st = sensim_plot_add(pl, fit, lx, ly, NULL, NULL, 2, SENSIM_PLOT_LINE, 0xCC3333);
    }
    if (!st)
        st = sensim_plot_add(pl, "levels", x, y, NULL, NULL, n, SENSIM_PLOT_POINTS, 0x223366);
    if (!st)
        st = sensim_plot_add(pl, "> 70 % of saturation", x + n, y + n, NULL, NULL, n, SENSIM_PLOT_POINTS,
                             0x999999);
    if (!st)
        st = sensim_plot_write_svg(pl, path, 720, 480);
    sensim_plot_destroy(pl);
    free(x);
    return st;
}
