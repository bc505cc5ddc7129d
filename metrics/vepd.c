/* Sim2real scores: 1-D Wasserstein distance, spectral flatness and VEPD
 * (seed 004, section II-E, eqs. 1-4; the per-test procedure follows the
 * authors' scoring code as described in MODELS.md "Sim2real: VEPD"). */
#include "sensim/metrics.h"

#include <gsl/gsl_errno.h>
#include <gsl/gsl_fft_complex.h>
#include <gsl/gsl_sort.h>
#include <gsl/gsl_statistics_double.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "sensim/rng.h"
#include "../lib/base_internal.h"

typedef struct {
    double x, w;
} wpoint;

static int wpoint_cmp(const void *a, const void *b)
{
    double x = ((const wpoint *)a)->x, y = ((const wpoint *)b)->x;
    return (x > y) - (x < y);
}

static sensim_status load_points(const char *which, const double *x, size_t n, const double *w, wpoint *p,
                                 double *total)
{
    double s = 0;
    for (size_t i = 0; i < n; i++) {
        if (!isfinite(x[i]))
            return sensim_error(SENSIM_EDATA, "wasserstein: %s value %zu is not finite", which, i);
        double wi = w ? w[i] : 1.0;
        if (!isfinite(wi) || wi < 0)
            return sensim_error(SENSIM_EINVAL, "wasserstein: %s weight %zu is %g (must be finite and >= 0)", which,
                                i, wi);
        p[i].x = x[i];
        p[i].w = wi;
        s += wi;
    }
    if (!(s > 0))
        return sensim_error(SENSIM_EINVAL, "wasserstein: %s weights sum to zero", which);
    *total = s;
    return SENSIM_OK;
}

sensim_status sensim_wasserstein1(const double *u, size_t n, const double *uw, const double *v, size_t m,
                                  const double *vw, double *out)
{
    if (!u || !v || !out)
        return sensim_error(SENSIM_EINVAL, "wasserstein: NULL argument");
    if (n == 0 || m == 0)
        return sensim_error(SENSIM_EDATA, "wasserstein: empty sample (%zu and %zu values)", n, m);
    wpoint *p = malloc((n + m) * sizeof *p);
    if (!p)
        return sensim_error(SENSIM_ENOMEM, "wasserstein: out of memory for %zu values", n + m);
    double su, sv;
    sensim_status st = load_points("first", u, n, uw, p, &su);
    if (!st)
        st = load_points("second", v, m, vw, p + n, &sv);
    if (st) {
        free(p);
        return st;
    }
    qsort(p, n, sizeof *p, wpoint_cmp);
    qsort(p + n, m, sizeof *p, wpoint_cmp);
    /* Walk the merged support; between consecutive support points both
     * CDFs are constant, so the integral is a sum of |F_u - F_v| * gap. */
    const wpoint *a = p, *b = p + n;
    size_t i = 0, j = 0;
    double cu = 0, cv = 0, prev = a[0].x < b[0].x ? a[0].x : b[0].x, acc = 0;
    while (i < n || j < m) {
        int take_u = j >= m || (i < n && a[i].x <= b[j].x);
        double x = take_u ? a[i].x : b[j].x;
        acc += fabs(cu / su - cv / sv) * (x - prev);
        prev = x;
        if (take_u)
            cu += a[i++].w;
        else
            cv += b[j++].w;
    }
    free(p);
    *out = acc;
    return SENSIM_OK;
}

/* Largest prime factor of n (n >= 1). */
static size_t largest_prime_factor(size_t n)
{
    size_t p = 1;
    for (size_t f = 2; f * f <= n; f++)
        while (n % f == 0) {
            p = f;
            n /= f;
        }
    return n > 1 ? n : p;
}

/* GSL's mixed-radix FFT costs O(n p) for a prime factor p: a 15 Hz grid of a
 * prime number of points (1 048 573 is one) would take hours. Above this
 * factor the DFT goes through Bluestein's chirp-z identity instead, as
 * pocketfft (numpy.fft) does. */
#define FFT_DIRECT_MAX_FACTOR 64

/* Forward DFT of n complex points (interleaved re, im) in place by
 * Bluestein's algorithm: X_k = w_k sum_j (x_j w_j) conj(w_{k-j}) with
 * w_k = exp(-i pi k^2 / n), the convolution done by radix-2 FFTs of
 * length M >= 2n - 1. k^2 is reduced mod 2n in integers so the chirp's
 * angle stays exact for large k. */
static sensim_status bluestein_forward(double *z, size_t n)
{
    size_t m = 1;
    while (m < 2 * n - 1)
        m <<= 1;
    double *w = malloc(2 * n * sizeof *w), *a = calloc(2 * m, sizeof *a), *b = calloc(2 * m, sizeof *b);
    sensim_status st = SENSIM_OK;
    if (!w || !a || !b) {
        st = sensim_error(SENSIM_ENOMEM, "spectral flatness: out of memory for an FFT of %zu points", m);
        goto done;
    }
    for (size_t k = 0; k < n; k++) {
        unsigned long long q = ((unsigned long long)k * k) % (2ull * n);
        double ang = M_PI * (double)q / (double)n;
        w[2 * k] = cos(ang);
        w[2 * k + 1] = -sin(ang);
        /* a = x w */
        a[2 * k] = z[2 * k] * w[2 * k] - z[2 * k + 1] * w[2 * k + 1];
        a[2 * k + 1] = z[2 * k] * w[2 * k + 1] + z[2 * k + 1] * w[2 * k];
        /* b = conj(w), mirrored */
        b[2 * k] = w[2 * k];
        b[2 * k + 1] = -w[2 * k + 1];
        if (k > 0) {
            b[2 * (m - k)] = w[2 * k];
            b[2 * (m - k) + 1] = -w[2 * k + 1];
        }
    }
    if (gsl_fft_complex_radix2_forward(a, 1, m) != GSL_SUCCESS ||
        gsl_fft_complex_radix2_forward(b, 1, m) != GSL_SUCCESS) {
        st = sensim_error(SENSIM_EINTERNAL, "spectral flatness: GSL radix-2 FFT of %zu points failed", m);
        goto done;
    }
    for (size_t k = 0; k < m; k++) {
        double re = a[2 * k] * b[2 * k] - a[2 * k + 1] * b[2 * k + 1];
        double im = a[2 * k] * b[2 * k + 1] + a[2 * k + 1] * b[2 * k];
        a[2 * k] = re;
        a[2 * k + 1] = im;
    }
    if (gsl_fft_complex_radix2_inverse(a, 1, m) != GSL_SUCCESS) {
        st = sensim_error(SENSIM_EINTERNAL, "spectral flatness: GSL radix-2 FFT of %zu points failed", m);
        goto done;
    }
    for (size_t k = 0; k < n; k++) {
        z[2 * k] = a[2 * k] * w[2 * k] - a[2 * k + 1] * w[2 * k + 1];
        z[2 * k + 1] = a[2 * k] * w[2 * k + 1] + a[2 * k + 1] * w[2 * k];
    }
done:
    free(w);
    free(a);
    free(b);
    return st;
}

/* Forward DFT of n complex points in place, O(n log n) for every n. */
static sensim_status fft_forward(double *z, size_t n)
{
    if (n > 1 && largest_prime_factor(n) > FFT_DIRECT_MAX_FACTOR)
        return bluestein_forward(z, n);
    gsl_fft_complex_wavetable *wt = gsl_fft_complex_wavetable_alloc(n);
    gsl_fft_complex_workspace *ws = gsl_fft_complex_workspace_alloc(n);
    sensim_status st = SENSIM_OK;
    if (!wt || !ws)
        st = sensim_error(SENSIM_ENOMEM, "spectral flatness: out of memory for an FFT of %zu points", n);
    else if (gsl_fft_complex_forward(z, 1, n, wt, ws) != GSL_SUCCESS)
        st = sensim_error(SENSIM_EINTERNAL, "spectral flatness: GSL FFT of %zu points failed", n);
    gsl_fft_complex_workspace_free(ws);
    gsl_fft_complex_wavetable_free(wt);
    return st;
}

sensim_status sensim_spectral_flatness(const double *x, size_t n, double *sf)
{
    if (!x || !sf)
        return sensim_error(SENSIM_EINVAL, "spectral flatness: NULL argument");
    if (n == 0)
        return sensim_error(SENSIM_EDATA, "spectral flatness: empty series");
    for (size_t i = 0; i < n; i++)
        if (!isfinite(x[i]))
            return sensim_error(SENSIM_EDATA, "spectral flatness: sample %zu is not finite", i);
    SENSIM_GSL_QUIET_SCOPE();
    double *z = calloc(2 * n, sizeof *z);
    if (!z)
        return sensim_error(SENSIM_ENOMEM, "spectral flatness: out of memory for an FFT of %zu points", n);
    /* Full complex FFT of the real series, as numpy.fft.fft does: all n
     * bins enter the means, the mirrored half included. */
    for (size_t i = 0; i < n; i++)
        z[2 * i] = x[i];
    sensim_status st = fft_forward(z, n);
    if (st)
        goto done;
    double slog = 0, sabs = 0;
    for (size_t k = 0; k < n; k++) {
        double a = hypot(z[2 * k], z[2 * k + 1]);
        slog += log(a + SENSIM_FLATNESS_EPS);
        sabs += a;
    }
    if (!(sabs > 0)) {
        st = sensim_error(SENSIM_EDATA, "spectral flatness: all-zero series of %zu samples has no spectrum", n);
        goto done;
    }
    *sf = exp(slog / (double)n) / (sabs / (double)n);
done:
    free(z);
    return st;
}

void sensim_vepd_series_free(sensim_vepd_series *s)
{
    if (!s)
        return;
    SENSIM_FREE_ALL(s->est_t, s->est_v, s->gt_t, s->gt_v);
    memset(s, 0, sizeof *s);
}

static sensim_status check_times(const char *what, const double *t, const double *v, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        if (!isfinite(t[i]) || !isfinite(v[i]))
            return sensim_error(SENSIM_EDATA, "vepd: %s sample %zu is not finite", what, i);
        if (i > 0 && t[i] < t[i - 1])
            return sensim_error(SENSIM_EDATA, "vepd: %s time decreases at sample %zu (%.9g after %.9g)", what, i,
                                t[i], t[i - 1]);
    }
    return SENSIM_OK;
}

/* Linear interpolation of (xp, fp) at increasing points x[0..nx), clamped
 * at the ends; the arithmetic is numpy.interp's (slope from the bracketing
 * pair, xp[j] <= x < xp[j+1]) so results agree with the authors' code to
 * rounding. */
static void interp_sorted(const double *x, size_t nx, const double *xp, const double *fp, size_t np, double *out)
{
    size_t j = 0;
    for (size_t i = 0; i < nx; i++) {
        double xi = x[i];
        if (xi < xp[0]) {
            out[i] = fp[0];
            continue;
        }
        if (xi >= xp[np - 1]) {
            out[i] = fp[np - 1];
            continue;
        }
        while (j + 1 < np && xp[j + 1] <= xi)
            j++;
        double slope = (fp[j + 1] - fp[j]) / (xp[j + 1] - xp[j]);
        out[i] = slope * (xi - xp[j]) + fp[j];
    }
}

sensim_status sensim_vepd_score(const sensim_vepd_series *s, sensim_vepd_test *out)
{
    if (!s || !out)
        return sensim_error(SENSIM_EINVAL, "vepd: NULL argument");
    if (s->n_est < 2)
        return sensim_error(SENSIM_EDATA, "vepd: %zu estimate samples (need at least 2 for the moving average)",
                            s->n_est);
    if (s->n_gt < 1)
        return sensim_error(SENSIM_EDATA, "vepd: no ground-truth samples");
    sensim_status st = check_times("estimate", s->est_t, s->est_v, s->n_est);
    if (!st)
        st = check_times("ground truth", s->gt_t, s->gt_v, s->n_gt);
    if (st)
        return st;
    double stop = fmin(s->gt_t[s->n_gt - 1], s->est_t[s->n_est - 1]);
    const double step = 1.0 / SENSIM_VEPD_GRID_HZ;
    if (!(stop > 0))
        return sensim_error(SENSIM_EDATA,
                            "vepd: no 15 Hz grid: the series end at %.9g s (times count from the start of the test)",
                            stop);
    /* numpy.arange(0, stop, 1/15): ceil(stop / step) points i * step. A
     * grid of more than 2^20 points (19.4 hours of a test) means times that are
     * not seconds from the start of the test: refused before it is sized
     * (a stop of 3e23 s overflowed the count and asked for the impossible). */
    if (!(stop / step <= (double)SENSIM_VEPD_MAX_GRID))
        return sensim_error(SENSIM_EDATA,
                            "vepd: the series end at %.9g s: a 15 Hz grid of more than %d points (times must count "
                            "seconds from the start of the test)",
                            stop, SENSIM_VEPD_MAX_GRID);
    size_t ng = (size_t)ceil(stop / step), ne = s->n_est - 1;
    double *buf = malloc((3 * ng + 2 * ne) * sizeof *buf);
    if (!buf)
        return sensim_error(SENSIM_ENOMEM, "vepd: out of memory for a grid of %zu points", ng);
    double *grid = buf, *g = buf + ng, *e = buf + 2 * ng, *mt = buf + 3 * ng, *mv = mt + ne;
    for (size_t i = 0; i < ng; i++)
        grid[i] = (double)i * step;
    /* Moving average of window 2, valid part (numpy.convolve(x, [.5, .5],
     * 'valid')), on the estimate and on its time stamps. */
    for (size_t i = 0; i < ne; i++) {
        mt[i] = 0.5 * s->est_t[i] + 0.5 * s->est_t[i + 1];
        mv[i] = 0.5 * s->est_v[i] + 0.5 * s->est_v[i + 1];
    }
    interp_sorted(grid, ng, s->gt_t, s->gt_v, s->n_gt, g);
    interp_sorted(grid, ng, mt, mv, ne, e);
    double ss = 0;
    for (size_t i = 0; i < ng; i++)
        ss += (e[i] - g[i]) * (e[i] - g[i]);
    sensim_vepd_test r = {.rmse = sqrt(ss / (double)ng), .n_grid = ng};
    /* Finite speeds can still overflow the squares (1e300 m/s): said here,
     * where the test is known, not by the Wasserstein distance later. */
    if (!isfinite(r.rmse)) {
        double big = 0;
        for (size_t i = 0; i < ng; i++)
            big = fmax(big, fmax(fabs(e[i]), fabs(g[i])));
        st = sensim_error(SENSIM_EDATA, "vepd: the RMSE of the test overflows: speeds reach %.6g m/s", big);
    } else if ((st = sensim_spectral_flatness(g, ng, &r.sf_gt)))
        st = sensim_error_prefix(st, "vepd: ground truth on the grid");
    else if ((st = sensim_spectral_flatness(e, ng, &r.sf_est)))
        st = sensim_error_prefix(st, "vepd: estimate on the grid");
    free(buf);
    if (st)
        return st;
    r.sf_diff = fabs(r.sf_gt - r.sf_est);
    *out = r;
    return SENSIM_OK;
}

static sensim_status compare_buf(const sensim_vepd_test *real, size_t nr, const sensim_vepd_test *sim, size_t ns,
                                 const size_t *ir, const size_t *is, double *work, sensim_vepd_result *out)
{
    double *a = work, *b = work + nr, *c = work + nr + ns, *d = c + nr;
    for (size_t i = 0; i < nr; i++) {
        const sensim_vepd_test *t = &real[ir ? ir[i] : i];
        a[i] = t->rmse;
        c[i] = t->sf_diff;
    }
    for (size_t i = 0; i < ns; i++) {
        const sensim_vepd_test *t = &sim[is ? is[i] : i];
        b[i] = t->rmse;
        d[i] = t->sf_diff;
    }
    sensim_vepd_result r;
    sensim_status st = sensim_wasserstein1(a, nr, NULL, b, ns, NULL, &r.w1);
    if (!st)
        st = sensim_wasserstein1(c, nr, NULL, d, ns, NULL, &r.w2);
    if (st)
        return st;
    r.vepd = 0.5 * (r.w1 + r.w2); /* seed 004 eq. 4 */
    *out = r;
    return SENSIM_OK;
}

sensim_status sensim_vepd_compare(const sensim_vepd_test *real, size_t nr, const sensim_vepd_test *sim, size_t ns,
                                  sensim_vepd_result *out)
{
    if (!real || !sim || !out)
        return sensim_error(SENSIM_EINVAL, "vepd: NULL argument");
    if (nr == 0 || ns == 0)
        return sensim_error(SENSIM_EDATA, "vepd: empty set (%zu real tests, %zu simulated)", nr, ns);
    double *work = malloc(2 * (nr + ns) * sizeof *work);
    if (!work)
        return sensim_error(SENSIM_ENOMEM, "vepd: out of memory");
    sensim_status st = compare_buf(real, nr, sim, ns, NULL, NULL, work, out);
    free(work);
    return st;
}

sensim_status sensim_vepd_bootstrap(const sensim_vepd_test *real, size_t nr, const sensim_vepd_test *sim, size_t ns,
                                    size_t n_boot, uint64_t seed, double level, sensim_vepd_ci *out)
{
    if (!real || !sim || !out)
        return sensim_error(SENSIM_EINVAL, "vepd bootstrap: NULL argument");
    if (nr == 0 || ns == 0)
        return sensim_error(SENSIM_EDATA, "vepd bootstrap: empty set (%zu real tests, %zu simulated)", nr, ns);
    if (n_boot < 10)
        return sensim_error(SENSIM_EINVAL, "vepd bootstrap: %zu replicates (need at least 10)", n_boot);
    if (!(level > 0 && level < 1))
        return sensim_error(SENSIM_EINVAL, "vepd bootstrap: level %g not in (0, 1)", level);
    double *work = malloc((2 * (nr + ns) + n_boot) * sizeof *work);
    size_t *idx = malloc((nr + ns) * sizeof *idx);
    if (!work || !idx) {
        free(work);
        free(idx);
        return sensim_error(SENSIM_ENOMEM, "vepd bootstrap: out of memory for %zu replicates", n_boot);
    }
    double *rep = work + 2 * (nr + ns);
    uint32_t sensor = sensim_rng_sensor_id("vepd-bootstrap");
    sensim_rng rr = sensim_rng_make(seed, sensor, 0), rs = sensim_rng_make(seed, sensor, 1);
    sensim_status st = SENSIM_OK;
    for (size_t b = 0; b < n_boot && !st; b++) {
        /* uniform is in (0, 1), so floor(u * n) is in [0, n - 1]. */
        for (size_t i = 0; i < nr; i++)
            idx[i] = (size_t)(sensim_rng_uniform(&rr, (uint64_t)b * nr + i) * (double)nr);
        for (size_t i = 0; i < ns; i++)
            idx[nr + i] = (size_t)(sensim_rng_uniform(&rs, (uint64_t)b * ns + i) * (double)ns);
        sensim_vepd_result r;
        st = compare_buf(real, nr, sim, ns, idx, idx + nr, work, &r);
        rep[b] = r.vepd;
    }
    if (!st) {
        gsl_sort(rep, 1, n_boot);
        /* Linear interpolation between order statistics (numpy.percentile's default). */
        out->lo = gsl_stats_quantile_from_sorted_data(rep, 1, n_boot, 0.5 * (1 - level));
        out->hi = gsl_stats_quantile_from_sorted_data(rep, 1, n_boot, 0.5 * (1 + level));
        out->level = level;
        out->n_boot = n_boot;
        out->seed = seed;
    }
    free(work);
    free(idx);
    return st;
}

/* A pooled test's stratum label and position (real tests first). */
typedef struct {
    size_t label, pos;
} strat_pos;

static int strat_pos_cmp(const void *a, const void *b)
{
    const strat_pos *x = a, *y = b;
    if (x->label != y->label)
        return x->label < y->label ? -1 : 1;
    return (x->pos > y->pos) - (x->pos < y->pos);
}

/* The relative slack under which a relabeling's VEPD still counts as >= the
 * observed one: rounding in the Wasserstein sums must not turn a tie (such
 * as the mirror relabeling of equal-sized sets) into a miss. */
#define PERM_TIE_REL 1e-12

sensim_status sensim_vepd_permutation(const sensim_vepd_test *real, size_t nr, const size_t *real_stratum,
                                      const sensim_vepd_test *sim, size_t ns, const size_t *sim_stratum,
                                      size_t n_perm, uint64_t seed, sensim_vepd_perm *out)
{
    if (!real || !sim || !out)
        return sensim_error(SENSIM_EINVAL, "vepd permutation: NULL argument");
    if (!real_stratum != !sim_stratum)
        return sensim_error(SENSIM_EINVAL, "vepd permutation: strata given for one set only (give both or neither)");
    if (nr == 0 || ns == 0)
        return sensim_error(SENSIM_EDATA, "vepd permutation: empty set (%zu real tests, %zu simulated)", nr, ns);
    if (n_perm < 1)
        return sensim_error(SENSIM_EINVAL, "vepd permutation: 0 permutations (need at least 1)");
    size_t n = nr + ns;
    sensim_vepd_test *pool = malloc(n * sizeof *pool);
    strat_pos *sp = malloc(n * sizeof *sp);
    /* seg: per stratum start, size and real count (at most n strata). */
    size_t *seg = malloc(3 * n * sizeof *seg), *perm = malloc(2 * n * sizeof *perm);
    double *work = malloc(2 * n * sizeof *work);
    sensim_status st = SENSIM_OK;
    if (!pool || !sp || !seg || !perm || !work) {
        st = sensim_error(SENSIM_ENOMEM, "vepd permutation: out of memory for %zu tests", n);
        goto done;
    }
    size_t *ir = perm + n, *is = ir + nr; /* the relabeled sets, positions in pool */
    memcpy(pool, real, nr * sizeof *pool);
    memcpy(pool + nr, sim, ns * sizeof *pool);
    for (size_t i = 0; i < n; i++) {
        sp[i].pos = i;
        sp[i].label = !real_stratum ? 0 : i < nr ? real_stratum[i] : sim_stratum[i - nr];
    }
    qsort(sp, n, sizeof *sp, strat_pos_cmp);
    size_t nseg = 0;
    for (size_t i = 0; i < n; i++) {
        if (i == 0 || sp[i].label != sp[i - 1].label) {
            seg[3 * nseg] = i;
            seg[3 * nseg + 1] = 0;
            seg[3 * nseg + 2] = 0;
            nseg++;
        }
        seg[3 * (nseg - 1) + 1]++;
        seg[3 * (nseg - 1) + 2] += sp[i].pos < nr;
    }
    sensim_vepd_result obs;
    if ((st = compare_buf(pool, nr, pool + nr, ns, NULL, NULL, work, &obs)))
        goto done;
    double thresh = obs.vepd - PERM_TIE_REL * obs.vepd;
    sensim_rng rng = sensim_rng_make(seed, sensim_rng_sensor_id("vepd-permutation"), 0);
    size_t n_ge = 0;
    for (size_t b = 0; b < n_perm && !st; b++) {
        for (size_t i = 0; i < n; i++)
            perm[i] = sp[i].pos;
        size_t kr = 0, ks = 0;
        for (size_t g = 0; g < nseg; g++) {
            size_t s0 = seg[3 * g], len = seg[3 * g + 1], nreal = seg[3 * g + 2];
            size_t *x = perm + s0;
            /* Fisher-Yates; uniform is in (0, 1), so j is in [0, i]. The
             * bias of 32-bit uniforms (< len * 2^-32) is far below what any
             * number of permutations resolves. */
            for (size_t i = len; i-- > 1;) {
                size_t j = (size_t)(sensim_rng_uniform(&rng, (uint64_t)b * n + s0 + i) * (double)(i + 1));
                size_t t = x[i];
                x[i] = x[j];
                x[j] = t;
            }
            for (size_t i = 0; i < len; i++) {
                if (i < nreal)
                    ir[kr++] = x[i];
                else
                    is[ks++] = x[i];
            }
        }
        sensim_vepd_result r;
        if (!(st = compare_buf(pool, nr, pool, ns, ir, is, work, &r)))
            n_ge += r.vepd >= thresh;
    }
    if (!st) {
        out->vepd = obs.vepd;
        out->n_ge = n_ge;
        out->n_perm = n_perm;
        out->p = (1.0 + (double)n_ge) / (1.0 + (double)n_perm);
        out->seed = seed;
    }
done:
    free(pool);
    free(sp);
    free(seg);
    free(perm);
    free(work);
    return st;
}
