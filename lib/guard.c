/* Guards against runaway output (sensim/guard.h). */
#include "sensim/guard.h"
#include "base_internal.h"

#include <math.h>
#if defined(__SSE2__)
#include <emmintrin.h>
#endif
#include <stdio.h>
#include <string.h>
#include <sys/statvfs.h>

/* The unit that times of this magnitude look like, as seconds since 1970
 * span 1e9..1e10 for the years 2001..2286. */
static const char *epoch_unit(double t)
{
    t = fabs(t);
    return t >= 1e17 ? "epoch nanoseconds" : t >= 1e14 ? "epoch microseconds" : "epoch milliseconds";
}

sensim_status sensim_guard_times(double t_first, double t_last, size_t rows, const char *what)
{
    const double big = fmax(fabs(t_first), fabs(t_last));
    if (big >= 1e11) {
        const char *u = epoch_unit(big);
        const double div = big >= 1e17 ? 1e9 : big >= 1e14 ? 1e6 : 1e3;
        return sensim_error(SENSIM_EDATA,
                            "%s: times reach %.6g, which as seconds is %.3g years: they look like %s; convert them "
                            "to seconds (divide by %.0e)",
                            what, big, big / 3.15576e7, u, div);
    }
    if (rows >= 2) {
        const double step = (t_last - t_first) / (double)(rows - 1);
        if (step > SENSIM_GUARD_MAX_STEP) {
            const double rate = 1.0 / step;
            return sensim_error(SENSIM_EDATA,
                                "%s: %zu rows over %.6g s, a mean step of %.6g s (%.3g Hz): not a trajectory in "
                                "seconds; if the times are in milliseconds, microseconds or nanoseconds (rate "
                                "%.3g, %.3g or %.3g Hz), convert them to seconds",
                                what, rows, t_last - t_first, step, rate, rate * 1e3, rate * 1e6, rate * 1e9);
        }
    }
    return SENSIM_OK;
}

double sensim_guard_free_bytes(const char *path)
{
    char dir[4096];
    sensim_path_dir_(path, dir, sizeof dir);
    struct statvfs v;
    if (statvfs(dir, &v))
        return INFINITY;
    return (double)v.f_bavail * (double)v.f_frsize;
}

sensim_status sensim_guard_output(const char *path, double bytes, const char *figure)
{
    const double avail = sensim_guard_free_bytes(path);
    if (bytes > SENSIM_GUARD_MAX_BYTES)
        return sensim_error(SENSIM_EIO, "%s: the output %s would be about %.3g bytes (%.3g GB), above the %.3g GB sensim "
                                        "writes at most; nothing written",
                            figure, path, bytes, bytes / 1e9, SENSIM_GUARD_MAX_BYTES / 1e9);
    if (bytes > avail)
        return sensim_error(SENSIM_EIO, "%s: the output %s would be about %.3g bytes (%.3g GB), more than the %.3g GB "
                                        "free there; nothing written",
                            figure, path, bytes, bytes / 1e9, avail / 1e9);
    return SENSIM_OK;
}

void sensim_tcheck_init(sensim_tcheck *c, const char *what, double rate_hz, unsigned flags)
{
    memset(c, 0, sizeof *c);
    snprintf(c->what, sizeof c->what, "%s", what ? what : "t");
    c->rate_hz = rate_hz > 0 && isfinite(rate_hz) ? rate_hz : 0;
    c->flags = flags;
}

/* Whether every time of t[0..n) is plausible (finite, |t| < 1e11, not
 * before SENSIM_TCHECK_MIN_TIME) and above the one before it (prev before
 * t[0]), with *longest the longest step: the checks of tcheck_scalar
 * without a branch per time. Every step above 0 (which a NaN step is
 * not; of two distinct finite doubles the difference is never 0) makes the
 * times increase, so they are plausible when the first and the last are. */
static int tcheck_fast(const double *t, size_t n, double prev, double *longest)
{
    double top = t[0] - prev;
    int ok = top > 0;
    size_t i = 1;
#if defined(__SSE2__)
    /* minpd and maxpd: C's a > b ? a : b on doubles is not vectorized
     * without -ffinite-math-only. !(step > 0) is true of a NaN step too. */
    const __m128d zero = _mm_setzero_pd();
    __m128d hi0 = _mm_set1_pd(top), hi1 = hi0, hi2 = hi0, hi3 = hi0, bad0 = zero, bad1 = zero, bad2 = zero,
            bad3 = zero;
#define TC_STEP(j, hi, bad)                                                                                            \
    do {                                                                                                               \
        const __m128d step_ = _mm_sub_pd(_mm_loadu_pd(t + i + 2 * j), _mm_loadu_pd(t + i + 2 * j - 1));                \
        bad = _mm_or_pd(bad, _mm_cmpngt_pd(step_, zero));                                                              \
        hi = _mm_max_pd(hi, step_);                                                                                    \
    } while (0)
    for (; i + 8 <= n; i += 8) {
        TC_STEP(0, hi0, bad0);
        TC_STEP(1, hi1, bad1);
        TC_STEP(2, hi2, bad2);
        TC_STEP(3, hi3, bad3);
    }
#undef TC_STEP
    __m128d h = _mm_max_pd(_mm_max_pd(hi0, hi1), _mm_max_pd(hi2, hi3));
    ok &= !_mm_movemask_pd(_mm_or_pd(_mm_or_pd(bad0, bad1), _mm_or_pd(bad2, bad3)));
    double hv[2];
    _mm_storeu_pd(hv, h);
    top = hv[0] > hv[1] ? hv[0] : hv[1];
#endif
    for (; i < n; i++) {
        const double step = t[i] - t[i - 1];
        ok &= step > 0;
        top = step > top ? step : top;
    }
    *longest = top;
    return ok && t[0] >= SENSIM_TCHECK_MIN_TIME && t[n - 1] < 1e11;
}

/* The time checks one time after another, for the message of the first
 * failure and for repeated times. */
static sensim_status tcheck_scalar(sensim_tcheck *c, const double *t, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        const double v = t[i];
        const size_t k = c->count + i;
        if (!isfinite(v))
            return sensim_error(SENSIM_EDATA, "%s: timestamp %zu is not finite (%g)", c->what, k, v);
        if (fabs(v) >= 1e11) {
            const double big = fabs(v), div = big >= 1e17 ? 1e9 : big >= 1e14 ? 1e6 : 1e3;
            return sensim_error(SENSIM_EDATA,
                                "%s: timestamp %zu is %.6g, which as seconds is %.3g years: it looks like %s; "
                                "convert the times to seconds (divide by %.0e)",
                                c->what, k, v, big / 3.15576e7, epoch_unit(big), div);
        }
        if (v < SENSIM_TCHECK_MIN_TIME)
            return sensim_error(SENSIM_EDATA,
                                "%s: timestamp %zu is %.9g s, %.3g years before time zero: times are seconds since "
                                "the start of a run or since 1970",
                                c->what, k, v, -v / 3.15576e7);
        if (k == 0) {
            c->first = v;
        } else {
            const double prev = i ? t[i - 1] : c->last;
            if (v == prev && (c->flags & SENSIM_TCHECK_ALLOW_REPEATS))
                c->repeats++;
            else if (!(v > prev))
                return sensim_error(SENSIM_EDATA,
                                    "%s: timestamps not increasing at index %zu (%.9g after %.9g)%s", c->what, k, v,
                                    prev, v == prev ? ": a repeated time" : "");
            const double step = v - prev;
            if (step > c->max_step) {
                c->max_step = step;
                c->max_step_at = k;
            }
        }
    }
    if (n) {
        c->last = t[n - 1];
        c->count += n;
    }
    return SENSIM_OK;
}

#define TC_PIECE 4096
sensim_status sensim_tcheck_block(sensim_tcheck *c, const double *t, size_t n)
{
    /* The first time of all has no step before it. */
    size_t i = 0;
    if (c->count == 0 && n) {
        sensim_status st = tcheck_scalar(c, t, 1);
        if (st)
            return st;
        i = 1;
    }
    /* Pieces that pass every check at once update the state as one time
     * after another would (the longest step where it first occurs); a
     * piece that does not is checked again one time after another. */
    for (; i < n; i += TC_PIECE) {
        const size_t k = n - i < TC_PIECE ? n - i : TC_PIECE;
        double longest;
        if (!tcheck_fast(t + i, k, c->last, &longest)) {
            sensim_status st = tcheck_scalar(c, t + i, k);
            if (st)
                return st;
            continue;
        }
        if (longest > c->max_step) {
            size_t j = 0;
            while ((j ? t[i + j] - t[i + j - 1] : t[i] - c->last) != longest)
                j++;
            c->max_step = longest;
            c->max_step_at = c->count + j;
        }
        c->last = t[i + k - 1];
        c->count += k;
    }
    return SENSIM_OK;
}

sensim_status sensim_tcheck_finish(const sensim_tcheck *c)
{
    if (c->count == 0)
        return sensim_error(SENSIM_EDATA, "%s: no timestamps", c->what);
    /* Long steps, told apart once the whole span is known: one gap in an
     * otherwise plausible series is named where it is; steps long
     * throughout are times in another unit (sensim_guard_times). */
    const size_t n = c->count;
    const int gap = c->max_step > SENSIM_TCHECK_MAX_GAP;
    if (!(gap && n >= 3 && (c->last - c->first - c->max_step) / (double)(n - 2) <= SENSIM_GUARD_MAX_STEP)) {
        sensim_status st = sensim_guard_times(c->first, c->last, n, c->what);
        if (st)
            return st;
    }
    if (gap) {
        const size_t k = c->max_step_at;
        return sensim_error(SENSIM_EDATA,
                            "%s: a gap of %.6g s between index %zu and %zu: more than %g s, not one recording",
                            c->what, c->max_step, k - 1, k, SENSIM_TCHECK_MAX_GAP);
    }
    if (c->rate_hz > 0 && c->count >= 2) {
        const double mean = (c->last - c->first) / (double)(c->count - 1), nominal = 1.0 / c->rate_hz;
        if (mean > SENSIM_TCHECK_RATE_FACTOR * nominal || mean < nominal / SENSIM_TCHECK_RATE_FACTOR)
            return sensim_error(SENSIM_EDATA,
                                "%s: %zu times over %.6g s, a mean step of %.6g s, but rate_hz %g says %.6g s (a "
                                "factor %.4g): times or rate in the wrong unit?",
                                c->what, c->count, c->last - c->first, mean, c->rate_hz, nominal, mean / nominal);
    }
    return SENSIM_OK;
}
