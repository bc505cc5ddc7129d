/* IMU noise fit: exact recovery from model curves, round trips from
 * simulated static signals with coverage of the confidence intervals over
 * seeds, the Gauss-Markov fit, short data, and the classic read-offs. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sensim/allan.h"
#include "sensim/imufit.h"
#include "sensim/rng.h"
#include "testutil.h"

/* A static gyro axis at f Hz (MODELS.md): white N (sigma_d = N sqrt(f)),
 * rate random walk K (step K / sqrt(f)), bias instability B as a sum of 13
 * Gauss-Markov processes with correlation times 10^(j/2) s, j = -2..10:
 * for ratio r between neighbours, variances s^2 = B^2 ln(r) / pi give the
 * one-sided PSD B^2 / (pi f) whose Allan variance is (2 ln 2 / pi) B^2;
 * and an optional Gauss-Markov (gs, gT). Exact discrete recursions. */
static void simulate(uint64_t seed, size_t n, double f, double N, double B, double K, double gs, double gT,
                     double *y, double *tmp)
{
    sensim_rng r = sensim_rng_make(seed, 1, 0);
    sensim_rng_normal_fill(&r, 0, n, tmp);
    for (size_t i = 0; i < n; i++)
        y[i] = N * sqrt(f) * tmp[i];
    if (K > 0) {
        r = sensim_rng_make(seed, 1, 1);
        sensim_rng_normal_fill(&r, 0, n, tmp);
        double b = 0;
        for (size_t i = 0; i < n; i++) {
            b += K / sqrt(f) * tmp[i];
            y[i] += b;
        }
    }
    for (int j = -2; j <= 11; j++) {
        double T, s;
        if (j <= 10) {
            if (!(B > 0))
                continue;
            T = pow(10, j / 2.0);
            s = B * sqrt(log(sqrt(10.0)) / M_PI);
        } else {
            if (!(gs > 0))
                continue;
            T = gT;
            s = gs;
        }
        r = sensim_rng_make(seed, 1, (uint32_t)(4 + j));
        sensim_rng_normal_fill(&r, 0, n, tmp);
        double phi = exp(-1 / (f * T)), q = s * sqrt(-expm1(-2 / (f * T))), b = s * tmp[0];
        for (size_t i = 0; i < n; i++) {
            if (i)
                b = phi * b + q * tmp[i];
            y[i] += b;
        }
    }
}

static size_t oadev_octave(const double *y, size_t n, double f, sensim_allan_point **pt)
{
    sensim_allan_opts o = sensim_allan_default_opts();
    o.tau0 = 1 / f;
    size_t *m, nm;
    ck_assert_int_eq(sensim_allan_taus(SENSIM_TAUS_OCTAVE, 0, o.dev, o.data, n, &m, &nm), SENSIM_OK);
    *pt = malloc(nm * sizeof **pt);
    ck_assert_int_eq(sensim_allan_compute(y, n, 1, &o, m, nm, *pt), SENSIM_OK);
    free(m);
    return nm;
}

static int covers(const sensim_fit_param *p, double truth)
{
    return p->lo <= truth && truth <= p->hi;
}

START_TEST(exact_curve_recovered)
{
    /* Noise-free model curve: the fit must return the parameters. */
    const double truth[SENSIM_TERM_COUNT] = {2e-6, 1e-4, 3e-5, 2e-6, 1e-8};
    sensim_allan_point pt[24];
    for (int i = 0; i < 24; i++) {
        pt[i].tau = 0.005 * pow(2, i);
        pt[i].dev = sqrt(sensim_imu_avar(truth, pt[i].tau));
        pt[i].edf = 1e7 / pow(2, i) + 100;
    }
    sensim_imu_fit fit;
    ck_assert_int_eq(sensim_imu_fit_allan(pt, 24, NULL, &fit), SENSIM_OK);
    for (int k = 0; k < SENSIM_TERM_COUNT; k++) {
        ck_assert_within(fit.term[k].value, truth[k], 1e-6 * truth[k]);
        if (k == SENSIM_TERM_N || k == SENSIM_TERM_B || k == SENSIM_TERM_K)
            ck_assert_int_eq(fit.term[k].flag, SENSIM_FIT_OK);
    }
    ck_assert(!strstr(fit.note, "not fitted"));
    /* Classic read-offs land near the truth where one term dominates. */
    ck_assert_within(fit.classic[SENSIM_TERM_N], 1e-4, 0.1e-4);
    ck_assert_within(fit.classic[SENSIM_TERM_B], 3e-5, 0.3 * 3e-5);
}
END_TEST

START_TEST(roundtrip_coverage)
{
    /* 20 seeds of 2e5 samples at 100 Hz (2000 s) with N = 1e-4 rad/s/sqrt(Hz),
     * B = 5e-5 rad/s, K = 5e-6 rad/s^2/sqrt(Hz). Each 95% interval should
     * hold its true value in at least 16 of 20 runs: at a true coverage of
     * 0.95, P(X <= 15) for X ~ Bin(20, 0.95) is 0.016. */
    const size_t n = 200000, seeds = 20;
    const double f = 100, N = 1e-4, B = 5e-5, K = 5e-6;
    double *y = malloc(n * sizeof *y), *tmp = malloc(n * sizeof *tmp);
    int cov[3] = {0};
    for (size_t s = 0; s < seeds; s++) {
        simulate(100 + s, n, f, N, B, K, 0, 0, y, tmp);
        sensim_allan_point *pt;
        size_t np = oadev_octave(y, n, f, &pt);
        sensim_imu_fit fit;
        ck_assert_int_eq(sensim_imu_fit_allan(pt, np, NULL, &fit), SENSIM_OK);
        cov[0] += covers(&fit.term[SENSIM_TERM_N], N);
        cov[1] += covers(&fit.term[SENSIM_TERM_B], B);
        cov[2] += covers(&fit.term[SENSIM_TERM_K], K);
        for (int k = 0; k < SENSIM_TERM_COUNT; k++)
            ck_assert(isfinite(fit.term[k].value) && isfinite(fit.term[k].lo) && isfinite(fit.term[k].hi));
        free(pt);
    }
    ck_assert_msg(cov[0] >= 16 && cov[1] >= 16 && cov[2] >= 16, "coverage of 20: N %d, B %d, K %d", cov[0], cov[1],
                  cov[2]);
    free(y);
    free(tmp);
}
END_TEST

START_TEST(gauss_markov_coverage)
{
    /* White N = 1e-4 plus a Gauss-Markov bias sigma = 2e-4, T = 20 s, 1e5
     * samples at 50 Hz, 15 seeds; each 95% interval must hold the truth in
     * at least 12 runs (P(X <= 11) = 0.005 for Bin(15, 0.95)). */
    const size_t n = 100000, seeds = 15;
    const double f = 50, N = 1e-4, gs = 2e-4, gT = 20;
    double *y = malloc(n * sizeof *y), *tmp = malloc(n * sizeof *tmp);
    int cs = 0, ct = 0, cn = 0;
    for (size_t s = 0; s < seeds; s++) {
        simulate(300 + s, n, f, N, 0, 0, gs, gT, y, tmp);
        sensim_allan_point *pt;
        size_t np = oadev_octave(y, n, f, &pt);
        sensim_gm_fit fit;
        ck_assert_int_eq(sensim_gm_fit_allan(pt, np, 0.95, &fit), SENSIM_OK);
        cs += covers(&fit.sigma, gs);
        ct += covers(&fit.tau, gT);
        cn += covers(&fit.white, N);
        free(pt);
    }
    ck_assert_msg(cs >= 12 && ct >= 12 && cn >= 12, "coverage of 15: sigma %d, tau %d, N %d", cs, ct, cn);
    free(y);
    free(tmp);
}
END_TEST

START_TEST(short_data_says_what_is_missing)
{
    /* 40 samples of white noise: only N can be told; the others come back
     * as finite upper bounds with a note, never NaN. */
    double y[40], tmp[40];
    simulate(9, 40, 100, 1e-4, 0, 0, 0, 0, y, tmp);
    sensim_allan_point *pt;
    size_t np = oadev_octave(y, 40, 100, &pt);
    sensim_imu_fit fit;
    ck_assert_int_eq(sensim_imu_fit_allan(pt, np, NULL, &fit), SENSIM_OK);
    ck_assert_int_eq(fit.term[SENSIM_TERM_N].flag, SENSIM_FIT_OK);
    ck_assert_within(fit.term[SENSIM_TERM_N].value, 1e-4, 0.5e-4);
    for (int k = 0; k < SENSIM_TERM_COUNT; k++) {
        ck_assert(isfinite(fit.term[k].value) && isfinite(fit.term[k].lo) && isfinite(fit.term[k].hi));
        if (k != SENSIM_TERM_N)
            ck_assert_int_ne(fit.term[k].flag, SENSIM_FIT_OK);
    }
    ck_assert_ptr_nonnull(strstr(fit.note, "not identifiable"));
    ck_assert_ptr_nonnull(strstr(fit.note, "K"));
    free(pt);
    /* Two points cannot carry five terms: the unresolved ones say so. */
    sensim_allan_point two[2] = {{.tau = 1, .dev = 1e-3, .edf = 10}, {.tau = 2, .dev = 0.7e-3, .edf = 5}};
    ck_assert_int_eq(sensim_imu_fit_allan(two, 2, NULL, &fit), SENSIM_OK);
    for (int k = 0; k < SENSIM_TERM_COUNT; k++)
        ck_assert(isfinite(fit.term[k].value) && isfinite(fit.term[k].hi));
    sensim_allan_point one[1] = {{.tau = 1, .dev = 1e-3, .edf = 10}};
    ck_assert_int_eq(sensim_imu_fit_allan(one, 1, NULL, &fit), SENSIM_EDATA);
    ck_assert_ptr_nonnull(strstr(sensim_last_error(), "need at least 2"));
    sensim_imu_fit_opts o = sensim_imu_fit_default_opts();
    o.confidence = 0;
    ck_assert_int_eq(sensim_imu_fit_allan(two, 2, &o, &fit), SENSIM_EINVAL);
    ck_assert_ptr_nonnull(strstr(sensim_last_error(), "confidence"));
}
END_TEST

START_TEST(gm_avar_limits)
{
    /* tau << T: random walk K^2 tau / 3 with K^2 = 2 sigma^2 / T; tau >> T:
     * white 2 sigma^2 T / tau (the continuous-time GM Allan variance). */
    ck_assert_within(sensim_gm_avar(1, 100, 1e-3), 2.0 / 3 * 1e-5, 1e-9);
    ck_assert_within(sensim_gm_avar(1, 100, 0.5), 2.0 / 3 * 0.005, 2e-5);
    ck_assert_within(sensim_gm_avar(1, 1, 1e4) * 1e4, 2.0, 1e-3);
}
END_TEST

Suite *suite_imufit(void)
{
    Suite *s = suite_create("imufit");
    TCase *tc = tcase_create("fit");
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, exact_curve_recovered);
    tcase_add_test(tc, roundtrip_coverage);
    tcase_add_test(tc, gauss_markov_coverage);
    tcase_add_test(tc, short_data_says_what_is_missing);
    tcase_add_test(tc, gm_avar_limits);
    suite_add_tcase(s, tc);
    return s;
}
