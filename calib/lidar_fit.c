/* Lidar range-noise fit: sigma = base + slope * range (AGX Sensor, seed 002
 * sec. 2.5) by iteratively reweighted least squares. See sensim/lidar_fit.h. */
#include "sensim/lidar_fit.h"

#include <gsl/gsl_fit.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#define Z95 1.959963984540054

/* c4(n): E[s] = c4 sigma for the sample sd of n normal values. */
static double c4(size_t n)
{
    double k = (double)n;
    return sqrt(2.0 / (k - 1.0)) * exp(lgamma(k / 2.0) - lgamma((k - 1.0) / 2.0));
}

sensim_status sensim_lidar_fit_range(const float *ranges, size_t S, size_t M, const float *ref, const uint16_t *channel,
                                     size_t nbeams, double *beam_bias, double *beam_sigma, sensim_lidar_fit_result *r)
{
    if (!ranges || !r)
        return sensim_error(SENSIM_EINVAL, "lidar fit: NULL ranges or result");
    if (S < 3)
        return sensim_error(SENSIM_EDATA, "lidar fit: %zu scans: need at least 3 repeated scans", S);
    if (M == 0)
        return sensim_error(SENSIM_EDATA, "lidar fit: empty scans (0 returns)");
    if (channel && nbeams == 0)
        return sensim_error(SENSIM_EINVAL, "lidar fit: nbeams must be > 0 with channels");
    if (!channel)
        nbeams = 1;
    sensim_gsl_quiet();
    memset(r, 0, sizeof *r);
    double *x = malloc(M * sizeof *x), *y = malloc(M * sizeof *y), *w = malloc(M * sizeof *w);
    double *rel = malloc(M * sizeof *rel); /* relative variance of s/c4: (1 - c4^2)/c4^2 */
    double *bsum = calloc(nbeams, sizeof *bsum), *bvar = calloc(nbeams, sizeof *bvar);
    size_t *bn = calloc(nbeams, sizeof *bn), *bnr = calloc(nbeams, sizeof *bnr);
    sensim_status st = SENSIM_OK;
    if (!x || !y || !w || !rel || !bsum || !bvar || !bn || !bnr) {
        st = sensim_error(SENSIM_ENOMEM, "lidar fit: out of memory");
        goto done;
    }
    size_t m = 0;
    double rmin = INFINITY, rmax = -INFINITY;
    for (size_t i = 0; i < M; i++) {
        size_t b = channel ? channel[i] : 0;
        if (b >= nbeams) {
            st = sensim_error(SENSIM_EDATA, "lidar fit: return %zu: channel %zu >= nbeams %zu", i, b, nbeams);
            goto done;
        }
        double s1 = 0, s2 = 0;
        size_t n = 0;
        for (size_t s = 0; s < S; s++) {
            double v = ranges[s * M + i];
            if (isfinite(v)) {
                s1 += v;
                n++;
            }
        }
        if (n < 3)
            continue;
        double mean = s1 / n;
        for (size_t s = 0; s < S; s++) {
            double v = ranges[s * M + i];
            if (isfinite(v))
                s2 += (v - mean) * (v - mean);
        }
        double var = s2 / (double)(n - 1), cc = c4(n);
        double range = ref && isfinite(ref[i]) ? ref[i] : mean;
        x[m] = range;
        y[m] = sqrt(var) / cc;
        rel[m] = (1.0 - cc * cc) / (cc * cc);
        m++;
        rmin = fmin(rmin, range);
        rmax = fmax(rmax, range);
        bvar[b] += var;
        bn[b]++;
        if (ref && isfinite(ref[i])) {
            bsum[b] += mean - ref[i];
            bnr[b]++;
        }
    }
    r->points_used = m;
    r->range_min = rmin;
    r->range_max = rmax;
    if (m < 3 || !(rmax > rmin)) {
        st = sensim_error(SENSIM_EDATA,
                          "lidar fit: %zu returns seen in >= 3 scans over ranges [%g, %g] m: need 3 or more at "
                          "distinct ranges",
                          m, rmin, rmax);
        goto done;
    }
    /* Iteratively reweighted: Var(s/c4) = sigma(r)^2 (1 - c4^2)/c4^2 with
     * sigma(r) from the previous fit (the first uses the point's own s,
     * floored to avoid infinite weights). */
    double c0 = 0, c1 = 0, cov00 = 0, cov01 = 0, cov11 = 0, chisq = 0;
    double floor_s = 0;
    for (size_t i = 0; i < m; i++)
        floor_s += y[i];
    floor_s = 1e-3 * floor_s / m + 1e-12;
    for (int it = 0; it < 4; it++) {
        for (size_t i = 0; i < m; i++) {
            double sg = it == 0 ? y[i] : c0 + c1 * x[i];
            if (!(sg > floor_s))
                sg = floor_s;
            w[i] = 1.0 / (sg * sg * rel[i]);
        }
        if (gsl_fit_wlinear(x, 1, w, 1, y, 1, m, &c0, &c1, &cov00, &cov01, &cov11, &chisq) != 0) {
            st = sensim_error(SENSIM_EINTERNAL, "lidar fit: weighted least squares failed");
            goto done;
        }
    }
    double dof = (double)(m - 2), scale = chisq / dof;
    r->chi2_dof = scale;
    if (!(scale > 1))
        scale = 1;
    r->sigma_base = c0;
    r->sigma_slope = c1;
    r->sigma_base_ci = Z95 * sqrt(cov00 * scale);
    r->sigma_slope_ci = Z95 * sqrt(cov11 * scale);
    for (size_t b = 0; b < nbeams; b++) {
        if (beam_bias)
            beam_bias[b] = bnr[b] ? bsum[b] / bnr[b] : NAN;
        if (beam_sigma)
            beam_sigma[b] = bn[b] ? sqrt(bvar[b] / bn[b]) : NAN;
    }
done:
    free(x);
    free(y);
    free(w);
    free(rel);
    free(bsum);
    free(bvar);
    free(bn);
    free(bnr);
    return st;
}
