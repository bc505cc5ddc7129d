/* The exact Poisson sampler of lib/rng_poisson.c: moments, P(X = 0) and a
 * chi-squared goodness-of-fit against the exact pmf around both method
 * boundaries (inversion below 10, PTRS from 10), the bulk fill against the
 * scalar draws at many offsets and on every kernel, edge means, pinned
 * values, and a bad kernel request. */
#include <gsl/gsl_errno.h>
#include <Random123/philox.h>
#include <gsl/gsl_cdf.h>
#include <gsl/gsl_randist.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "sensim/rng.h"
#include "sensim/status.h"
#include "testutil.h"

#define NDRAW 200000

static const double MEANS[] = {0.1, 1, 4.5, 9.9, 10, 10.1, 50, 999};

/* Pearson's statistic over bins k in [lo, hi] (each expecting >= 5
 * draws), the two tails folded into the edge bins; returns its upper tail
 * probability. */
static double chi2_p(const uint32_t *x, size_t n, double mu)
{
    size_t kmax = 0;
    for (size_t i = 0; i < n; i++)
        if (x[i] > kmax)
            kmax = x[i];
    size_t *cnt = calloc(kmax + 2, sizeof *cnt);
    ck_assert_ptr_nonnull(cnt);
    for (size_t i = 0; i < n; i++)
        cnt[x[i]]++;
    /* The expected-count-5 window around the mode. */
    size_t mode = (size_t)floor(mu), lo = mode, hi = mode;
    while (lo > 0 && n * gsl_ran_poisson_pdf((unsigned)(lo - 1), mu) >= 5)
        lo--;
    while (n * gsl_ran_poisson_pdf((unsigned)(hi + 1), mu) >= 5)
        hi++;
    double chi = 0;
    int bins = 0;
    for (size_t k = lo; k <= hi; k++) {
        double e = n * gsl_ran_poisson_pdf((unsigned)k, mu), o = k <= kmax ? (double)cnt[k] : 0;
        /* Tails: below lo into lo's bin, above hi into hi's. */
        if (k == lo && lo > 0) {
            e += n * gsl_cdf_poisson_P((unsigned)(lo - 1), mu);
            for (size_t j = 0; j < lo && j <= kmax; j++)
                o += (double)cnt[j];
        }
        if (k == hi) {
            e += n * gsl_cdf_poisson_Q((unsigned)hi, mu);
            for (size_t j = hi + 1; j <= kmax; j++)
                o += (double)cnt[j];
        }
        chi += (o - e) * (o - e) / e;
        bins++;
    }
    free(cnt);
    ck_assert_int_ge(bins, 2);
    return gsl_cdf_chisq_Q(chi, bins - 1);
}

START_TEST(distribution_matches_pmf)
{
    /* NDRAW draws per mean through the fill. Mean within 5 SE (SE =
     * sqrt(mu / n)); sample variance within 5 SE (Var s^2 = (2 mu^2 + mu) /
     * n for a Poisson, to O(1/n^2)); the fraction of zeros within 5
     * binomial SE of e^-mu (plus one draw); chi-squared p-value above 1e-4. */
    gsl_set_error_handler_off();
    float *m = malloc(NDRAW * sizeof *m);
    uint32_t *x = malloc(NDRAW * sizeof *x);
    ck_assert(m && x);
    for (size_t t = 0; t < sizeof MEANS / sizeof *MEANS; t++) {
        double mu = MEANS[t];
        /* The draws use the float mean, as the camera does. */
        float mf = (float)mu;
        mu = mf;
        for (size_t i = 0; i < NDRAW; i++)
            m[i] = mf;
        sensim_rng r = sensim_rng_make(2026 + t, 5, 9);
        sensim_rng_poisson_exact_fill(&r, 12345, NDRAW, m, x);
        double s = 0, s2 = 0;
        size_t zeros = 0;
        for (size_t i = 0; i < NDRAW; i++) {
            s += x[i];
            zeros += x[i] == 0;
        }
        double mean = s / NDRAW;
        for (size_t i = 0; i < NDRAW; i++)
            s2 += (x[i] - mean) * (x[i] - mean);
        double var = s2 / (NDRAW - 1);
        ck_assert_msg(fabs(mean - mu) < 5 * sqrt(mu / NDRAW), "mu %g: mean %g", mu, mean);
        ck_assert_msg(fabs(var - mu) < 5 * sqrt((2 * mu * mu + mu) / NDRAW), "mu %g: variance %g", mu, var);
        double p0 = exp(-mu);
        ck_assert_msg(fabs((double)zeros / NDRAW - p0) <= 5 * sqrt(p0 * (1 - p0) / NDRAW) + 1.0 / NDRAW,
                      "mu %g: P(0) %g, expected %g", mu, (double)zeros / NDRAW, p0);
        double p = chi2_p(x, NDRAW, mu);
        ck_assert_msg(p > 1e-4, "mu %g: chi-squared p = %g", mu, p);
    }
    free(m);
    free(x);
}
END_TEST

START_TEST(chi2_detects_a_wrong_mean)
{
    /* The goodness-of-fit can fail: draws at mean 10.1 against the pmf at
     * 10.3 (a 2 % shift, about 6 SE of the mean at this sample size). */
    gsl_set_error_handler_off();
    float *m = malloc(NDRAW * sizeof *m);
    uint32_t *x = malloc(NDRAW * sizeof *x);
    ck_assert(m && x);
    for (size_t i = 0; i < NDRAW; i++)
        m[i] = 10.1f;
    sensim_rng r = sensim_rng_make(7, 5, 9);
    sensim_rng_poisson_exact_fill(&r, 0, NDRAW, m, x);
    ck_assert_double_lt(chi2_p(x, NDRAW, 10.3), 1e-4);
    free(m);
    free(x);
}
END_TEST

/* A mix of means: every method and edge, varying from index to index. */
static float mixed_mean(size_t i)
{
    static const float edge[] = {0.0f, -1.0f, NAN, INFINITY, 5e9f, 2e9f, 1e-30f, 9.999999f, 10.0f};
    if (i % 13 == 0)
        return edge[(i / 13) % (sizeof edge / sizeof *edge)];
    return (float)(0.05 * pow(1.021, (double)(i % 397)));
}

START_TEST(fill_equals_scalar)
{
    /* Every kernel this CPU has, offsets across block and group edges,
     * lengths from 0 to past a group of 256. */
    enum { N = 1200 };
    float m[N];
    uint32_t out[N];
    for (size_t i = 0; i < N; i++)
        m[i] = mixed_mean(i);
    sensim_rng r = sensim_rng_make(99, 3, 4);
    static const uint64_t firsts[] = {0, 1, 3, 255, 256, 257, 1000003, 0xFFFFFFFFull, 0x123456789ull};
    static const size_t lens[] = {0, 1, 7, 255, 256, 257, 1200};
    int kernels = 0;
    for (int impl = SENSIM_RNG_IMPL_AUTO; impl <= SENSIM_RNG_IMPL_AVX512; impl++) {
        if (impl != SENSIM_RNG_IMPL_AUTO && impl != SENSIM_RNG_IMPL_SCALAR &&
            sensim_rng_poisson_exact_fill_impl(&r, 0, 1, m, out, (sensim_rng_impl)impl) != SENSIM_OK)
            continue;
        kernels++;
        for (size_t a = 0; a < sizeof firsts / sizeof *firsts; a++)
            for (size_t b = 0; b < sizeof lens / sizeof *lens; b++) {
                size_t n = lens[b];
                memset(out, 0xA5, sizeof out);
                ck_assert_int_eq(
                    sensim_rng_poisson_exact_fill_impl(&r, firsts[a], n, m, out, (sensim_rng_impl)impl), SENSIM_OK);
                for (size_t i = 0; i < n; i++)
                    ck_assert_msg(out[i] == sensim_rng_poisson_exact(&r, firsts[a] + i, m[i]),
                                  "kernel %d first %llu i %zu mean %g", impl, (unsigned long long)firsts[a], i,
                                  (double)m[i]);
                /* Nothing written past n. */
                if (n < N)
                    ck_assert_uint_eq(out[n], 0xA5A5A5A5u);
            }
    }
    ck_assert_int_ge(kernels, 2);
    /* Means near the fill's list boundary at 64 and near 10, where PTRS
     * proposals with k < 32 take other paths: 20000 draws each way. */
    enum { M = 20000 };
    float *mm = malloc(M * sizeof *mm);
    uint32_t *o = malloc(M * sizeof *o);
    ck_assert(mm && o);
    for (size_t i = 0; i < M; i++)
        mm[i] = i % 2 ? 60.0f + (float)(i % 17) : 10.0f + (float)(i % 23) * 0.25f;
    for (int impl = SENSIM_RNG_IMPL_SCALAR; impl <= SENSIM_RNG_IMPL_AVX512; impl++) {
        if (sensim_rng_poisson_exact_fill_impl(&r, 77, M, mm, o, (sensim_rng_impl)impl) != SENSIM_OK)
            continue;
        for (size_t i = 0; i < M; i++)
            ck_assert_msg(o[i] == sensim_rng_poisson_exact(&r, 77 + i, mm[i]), "kernel %d i %zu", impl, i);
    }
    free(mm);
    free(o);
}
END_TEST

START_TEST(counter_layout_and_inversion)
{
    /* The documented contract, from Random123 directly: below a mean of 10
     * the draw is the least k with u <= F(k), u = (hi >> 6, lo >> 6 as 52
     * bits + 1/2) 2^-52 from words 0 and 1 of the Philox block with counter
     * (index, stream, sensor | 64 << 24) and key = seed; F from GSL. (A u
     * within 1e-13 of a step of F would be a rounding tie: none occurs in
     * these 4000 draws.) */
    gsl_set_error_handler_off();
    const uint64_t seed = 0x0123456789ABCDEFull;
    sensim_rng r = sensim_rng_make(seed, 0xABCDEF, 17);
    philox4x32_key_t key = {{(uint32_t)seed, (uint32_t)(seed >> 32)}};
    for (uint64_t i = 0; i < 4000; i++) {
        uint64_t index = i * 0x9E3779B97F4A7C15ull;
        double mu = 0.05 + 9.9 * (double)(i % 100) / 100.0;
        philox4x32_ctr_t c = {{(uint32_t)index, (uint32_t)(index >> 32), 17, 0xABCDEFu | 64u << 24}};
        philox4x32_ctr_t v = philox4x32(c, key);
        double u = ((double)(v.v[0] >> 6) * 0x1p26 + (double)(v.v[1] >> 6) + 0.5) * 0x1p-52;
        unsigned k = 0;
        while (u > gsl_cdf_poisson_P(k, mu))
            k++;
        ck_assert_double_gt(fabs(u - gsl_cdf_poisson_P(k, mu)), 1e-13);
        ck_assert_uint_eq(sensim_rng_poisson_exact(&r, index, mu), k);
    }
}
END_TEST

START_TEST(edge_means)
{
    sensim_rng r = sensim_rng_make(1, 2, 3);
    ck_assert_uint_eq(sensim_rng_poisson_exact(&r, 5, 0.0), 0);
    ck_assert_uint_eq(sensim_rng_poisson_exact(&r, 5, -3.0), 0);
    ck_assert_uint_eq(sensim_rng_poisson_exact(&r, 5, NAN), 0);
    ck_assert_uint_eq(sensim_rng_poisson_exact(&r, 5, INFINITY), UINT32_MAX);
    ck_assert_uint_eq(sensim_rng_poisson_exact(&r, 5, 5e9), UINT32_MAX);
    /* A large mean stays within 10 SD. */
    for (uint64_t i = 0; i < 100; i++) {
        double x = sensim_rng_poisson_exact(&r, i, 2e9);
        ck_assert_double_lt(fabs(x - 2e9), 10 * sqrt(2e9));
    }
    /* A tiny mean gives 0 unless u > e^-mu: practically always 0. */
    for (uint64_t i = 0; i < 1000; i++)
        ck_assert_uint_eq(sensim_rng_poisson_exact(&r, i, 1e-12), 0);
}
END_TEST

START_TEST(pinned_values)
{
    /* Fixed seed, sensor, stream: these values must not change between
     * releases (a change would alter every camera output below the
     * exact-Poisson threshold). */
    sensim_rng r = sensim_rng_make(42, 7, 2);
    static const double mu[8] = {0.1, 1, 4.5, 9.9, 10, 10.1, 50, 999};
    static const uint32_t want[8] = {0, 0, 6, 5, 11, 11, 45, 1073};
    for (int i = 0; i < 8; i++)
        ck_assert_msg(sensim_rng_poisson_exact(&r, 1000 + (uint64_t)i, mu[i]) == want[i], "i %d: %u", i,
                      sensim_rng_poisson_exact(&r, 1000 + (uint64_t)i, mu[i]));
    /* Seeds, sensors and streams differ. */
    sensim_rng r2 = sensim_rng_make(43, 7, 2), r3 = sensim_rng_make(42, 8, 2), r4 = sensim_rng_make(42, 7, 3);
    int d2 = 0, d3 = 0, d4 = 0;
    for (uint64_t i = 0; i < 64; i++) {
        uint32_t a = sensim_rng_poisson_exact(&r, i, 500);
        d2 += a != sensim_rng_poisson_exact(&r2, i, 500);
        d3 += a != sensim_rng_poisson_exact(&r3, i, 500);
        d4 += a != sensim_rng_poisson_exact(&r4, i, 500);
    }
    ck_assert_int_gt(d2, 48);
    ck_assert_int_gt(d3, 48);
    ck_assert_int_gt(d4, 48);
}
END_TEST

START_TEST(bad_kernel)
{
    float m[1] = {5};
    uint32_t out[1] = {77};
    sensim_rng r = sensim_rng_make(1, 1, 1);
    ck_assert_int_eq(sensim_rng_poisson_exact_fill_impl(&r, 0, 1, m, out, (sensim_rng_impl)99), SENSIM_EUNSUPPORTED);
    ck_assert_ptr_nonnull(strstr(sensim_last_error(), "Poisson fill: kernel 99 not available"));
    ck_assert_uint_eq(out[0], 77);
}
END_TEST

Suite *suite_rng_poisson(void)
{
    Suite *s = suite_create("rng_poisson");
    TCase *tc = tcase_create("core");
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, distribution_matches_pmf);
    tcase_add_test(tc, chi2_detects_a_wrong_mean);
    tcase_add_test(tc, fill_equals_scalar);
    tcase_add_test(tc, counter_layout_and_inversion);
    tcase_add_test(tc, edge_means);
    tcase_add_test(tc, pinned_values);
    tcase_add_test(tc, bad_kernel);
    suite_add_tcase(s, tc);
    return s;
}
