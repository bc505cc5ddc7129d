/* Coverage of the Allan-family confidence intervals by simulation: for each
 * power-law noise (white PM, flicker PM, white FM, flicker FM, random-walk
 * FM), given as phase and as frequency data, the nominal 68.3 % interval of
 * OADEV, MDEV, HDEV and TOTDEV must hold the true deviation in 60-76 % of
 * NREP replicates at each of several averaging factors (N = 512 points;
 * m = 1, 4, 16, 32), among them one (m = 32) where too few averaged points
 * remain for the lag-1 method and B1 / R(m) decide; TOTDEV at m = 32 is
 * printed in the message but not checked (see below). About 10 s of CPU.
 *
 * Noise: Kasdin's discrete fractional-difference filter (N. J. Kasdin,
 * "Discrete simulation of colored noise and stochastic processes and
 * 1/f^a power law noise generation", Proc. IEEE 83(5), 1995, eq. 116):
 * phase x = h * w, w white N(0, 1) from the library's counter-based RNG,
 * h_0 = 1, h_k = h_{k-1} (a/2 + k - 1) / k with a = 2 - alpha the exponent
 * of S_x(f), applied by direct convolution from a zero start.
 *
 * Truth: every estimator is a quadratic form x^T B x, and x = H w with
 * H[n][k] = h_{n-k}, so the expected value of the estimate is
 * E[w^T H^T B H w] = sum_k (H e_k)^T B (H e_k): the sum of the estimator
 * over the N impulse responses h shifted to start at k. That is the
 * deviation (squared) the interval is meant to cover, exactly, for this
 * finite, non-stationary series (no asymptotic formula needed).
 *
 * Tolerance: at a true coverage of 0.683 over NREP = 500 the count has a
 * standard deviation of 2.1 %, so 60-76 % is +-3.8 sigma (a chance of
 * 1.4e-4 per check, about 2 % over the 160 checks); the seeds are fixed. */
#include <math.h>
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sensim/allan.h"
#include "sensim/rng.h"
#include "testutil.h"

enum { N = 512, NREP = 500, NTAU = 4 };
static const size_t taus[NTAU] = {1, 4, 16, 32};

static void kasdin_h(int alpha, double *h)
{
    double a = 2.0 - alpha;
    h[0] = 1;
    for (int k = 1; k < N; k++)
        h[k] = h[k - 1] * (a / 2 + k - 1) / k;
}

/* Phase x[N] of one replicate, or frequency y[N-1] when freq. */
static void realize(const double *h, uint64_t rep, int alpha, int freq, double *out)
{
    double w[N], x[N];
    sensim_rng r = sensim_rng_make(1000 + (uint64_t)(alpha + 10), 7, (uint32_t)rep);
    sensim_rng_normal_fill(&r, 0, N, w);
    for (int n = 0; n < N; n++) {
        double s = 0;
        for (int k = 0; k <= n; k++)
            s += h[n - k] * w[k];
        x[n] = s;
    }
    if (freq)
        for (int n = 0; n + 1 < N; n++)
            out[n] = x[n + 1] - x[n];
    else
        memcpy(out, x, sizeof x);
}

/* The expected variance at each tau: the sum of the estimator over the
 * shifted impulse responses (alpha fixed: only the values are used). */
static void truth(const double *h, sensim_allan_dev dev, int freq, double *var)
{
    double x[N];
    sensim_allan_opts o = sensim_allan_default_opts();
    o.dev = dev;
    o.data = freq ? SENSIM_ALLAN_FREQ : SENSIM_ALLAN_PHASE;
    o.fixed_alpha = 1;
    o.alpha = 0;
    for (int t = 0; t < NTAU; t++)
        var[t] = 0;
    for (int k = 0; k < N - 1; k++) {
        for (int n = 0; n < N; n++)
            x[n] = n >= k ? h[n - k] : 0;
        double y[N];
        for (int n = 0; n + 1 < N; n++)
            y[n] = x[n + 1] - x[n];
        sensim_allan_point p[NTAU];
        sensim_status st = sensim_allan_compute(freq ? y : x, freq ? N - 1 : N, 1, &o, taus, NTAU, p);
        if (st == SENSIM_EDATA)
            continue; /* a straight line (the last columns): no contribution */
        ck_assert_msg(st == SENSIM_OK, "%s", sensim_last_error());
        for (int t = 0; t < NTAU; t++)
            var[t] += p[t].dev * p[t].dev;
    }
}

static void coverage(int alpha, int freq)
{
    static const sensim_allan_dev devs[4] = {SENSIM_OADEV, SENSIM_MDEV, SENSIM_HDEV, SENSIM_TOTDEV};
    static const char *const noise[] = {"RWFM", "FFM", "WFM", "FPM", "WPM"};
    double h[N];
    /* Thousands of short series: one thread each avoids the fork-join cost. */
    omp_set_num_threads(1);
    kasdin_h(alpha, h);
    double(*data)[N] = malloc(NREP * sizeof *data);
    ck_assert_ptr_nonnull(data);
    for (int r = 0; r < NREP; r++)
        realize(h, (uint64_t)r, alpha, freq, data[r]);
    char report[4096] = "";
    int bad = 0;
    for (int d = 0; d < 4; d++) {
        double var[NTAU];
        truth(h, devs[d], freq, var);
        int hit[NTAU] = {0};
        sensim_allan_opts o = sensim_allan_default_opts();
        o.dev = devs[d];
        o.data = freq ? SENSIM_ALLAN_FREQ : SENSIM_ALLAN_PHASE;
        for (int r = 0; r < NREP; r++) {
            sensim_allan_point p[NTAU];
            ck_assert_int_eq(sensim_allan_compute(data[r], freq ? N - 1 : N, 1, &o, taus, NTAU, p), SENSIM_OK);
            for (int t = 0; t < NTAU; t++)
                hit[t] += p[t].lo <= sqrt(var[t]) && sqrt(var[t]) <= p[t].hi;
        }
        for (int t = 0; t < NTAU; t++) {
            double c = (double)hit[t] / NREP;
            /* TOTDEV at m = 32 (N / m = 16) is reported, not checked: for
             * white PM its interval, with OADEV's EDF as SP 1065 and Stable32
             * prescribe, covers 59 % there (65 % at m = 16). */
            int ok = (c >= 0.60 && c <= 0.76) || (devs[d] == SENSIM_TOTDEV && taus[t] == 32);
            bad += !ok;
            size_t len = strlen(report);
            snprintf(report + len, sizeof report - len, " %s m=%zu %.1f%%%s", sensim_allan_dev_name(devs[d]), taus[t],
                     100 * c, ok ? "" : "(!)");
        }
    }
    free(data);
    ck_assert_msg(!bad, "%s %s data, coverage of the 68.3 %% interval:%s", noise[alpha + 2],
                  freq ? "frequency" : "phase", report);
}

START_TEST(coverage_phase)
{
    coverage(_i - 2, 0);
}
END_TEST

START_TEST(coverage_freq)
{
    coverage(_i - 2, 1);
}
END_TEST

Suite *suite_allan_coverage(void)
{
    Suite *s = suite_create("allan_coverage");
    TCase *tc = tcase_create("core");
    tcase_set_timeout(tc, 300);
    tcase_add_loop_test(tc, coverage_phase, 0, 5);
    tcase_add_loop_test(tc, coverage_freq, 0, 5);
    suite_add_tcase(s, tc);
    return s;
}
