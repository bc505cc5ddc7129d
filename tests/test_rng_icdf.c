/* The inverse-CDF normal generator (lib/rng_icdf.c): accuracy against GSL's
 * inverse normal CDF over the whole range of a 32-bit word, symmetry, the
 * bulk fill against the scalar draws at any offset and length, pinned
 * values for a seed, and the distribution of 2^22 draws (moments, tail
 * frequencies, Kolmogorov-Smirnov) with tolerances from the sample size. */
#include <gsl/gsl_errno.h>
#include <gsl/gsl_cdf.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>

#include "sensim/rng.h"
#include "sensim/status.h"
#include "testutil.h"

START_TEST(icdf_accuracy)
{
    /* The word's low 31 bits m give p = (m + 1/2) 2^-32 and z = Phi^-1(1 -
     * p) for the positive sign. Every m below 2^16 (|z| from 4.3 to 6.34,
     * where the tail polynomial and the log work hardest), then a stride
     * over the rest. The documented bound: |z - Phi^-1| < 2e-6 (1 + |z|). */
    gsl_set_error_handler_off();
    double worst = 0;
    for (uint64_t m = 0; m < 0x80000000u; m += m < 65536 ? 1 : 9973) {
        double p = ((double)m + 0.5) * 0x1p-32;
        double zt = gsl_cdf_ugaussian_Qinv(p);
        float z = sensim_rng_normal_icdf_u32((uint32_t)m);
        double e = fabs(z - zt) / (1 + fabs(zt));
        if (e > worst)
            worst = e;
        /* The sign bit negates exactly. */
        ck_assert(sensim_rng_normal_icdf_u32((uint32_t)m | 0x80000000u) == -z);
    }
    ck_assert_double_lt(worst, 2e-6);
    /* The extremes: p = 2^-33 gives the largest |z| (6.33796); the central
     * word gives 0. */
    ck_assert_within(sensim_rng_normal_icdf_u32(0), 6.3379577545537895, 2e-5);
    ck_assert_within(sensim_rng_normal_icdf_u32(0x80000000u), -6.3379577545537895, 2e-5);
    ck_assert_within(sensim_rng_normal_icdf_u32(0x7FFFFFFFu), 0.0, 1e-6);
}
END_TEST

START_TEST(icdf_fill_matches_scalar)
{
    /* The fill computes groups of 32 Philox blocks and drops the words
     * before `first`: any offset and length must give the scalar values,
     * and the scalar value is the word sensim_rng_u32 at the same index. */
    sensim_rng r = sensim_rng_make(77, 0xABCDEF, 9);
    float *out = malloc(700 * sizeof *out);
    const uint64_t firsts[] = {0, 1, 2, 3, 5, 127, 128, 129, 1000003, ((uint64_t)1 << 40) + 6};
    const size_t ns[] = {0, 1, 3, 4, 7, 64, 127, 128, 129, 300, 700};
    for (size_t a = 0; a < sizeof firsts / sizeof *firsts; a++)
        for (size_t b = 0; b < sizeof ns / sizeof *ns; b++) {
            sensim_rng_normal_icdf_fill(&r, firsts[a], ns[b], out);
            for (size_t i = 0; i < ns[b]; i++) {
                float s = sensim_rng_normal_icdf(&r, firsts[a] + i);
                ck_assert_msg(out[i] == s, "first %llu n %zu i %zu: fill %a, scalar %a",
                              (unsigned long long)firsts[a], ns[b], i, out[i], s);
                ck_assert(s == sensim_rng_normal_icdf_u32(sensim_rng_u32(&r, firsts[a] + i)));
            }
        }
    free(out);
}
END_TEST

START_TEST(icdf_pinned_values)
{
    /* Same seed, same values, on every instruction set (the arithmetic is
     * IEEE +, *, fma and sqrt only): these bits must never change. */
    sensim_rng r = sensim_rng_make(2024, 7, 1);
    ck_assert(sensim_rng_normal_icdf(&r, 0) == -0x1.c9b92ep+0f);
    ck_assert(sensim_rng_normal_icdf(&r, 1) == 0x1.7ab48ep-1f);
    ck_assert(sensim_rng_normal_icdf(&r, 2) == -0x1.140512p+0f);
    ck_assert(sensim_rng_normal_icdf(&r, 3) == -0x1.71f8dap+0f);
    ck_assert(sensim_rng_normal_icdf(&r, 1000003) == 0x1.bd0222p-2f);
    ck_assert(sensim_rng_normal_icdf(&r, ((uint64_t)1 << 40) + 5) == 0x1.b4084p+0f);
    ck_assert(sensim_rng_normal_icdf_u32(12345) == 0x1.22445cp+2f);
    /* Another seed gives other values. */
    sensim_rng q = sensim_rng_make(2025, 7, 1);
    ck_assert(sensim_rng_normal_icdf(&q, 0) != sensim_rng_normal_icdf(&r, 0));
}
END_TEST

static int cmp_float(const void *a, const void *b)
{
    float x = *(const float *)a, y = *(const float *)b;
    return (x > y) - (x < y);
}

START_TEST(icdf_distribution)
{
    /* n = 2^22 draws from the bulk path. Standard errors: mean 1/sqrt(n);
     * variance sqrt(2/n); fourth moment sqrt((105 - 9)/n) (E z^8 = 105);
     * a tail count with probability q, sqrt(n q (1 - q)); all at 5 SE. The
     * third moment is 0 with SE sqrt(15/n). Kolmogorov-Smirnov: P(sqrt(n)
     * D > 1.95) = 0.001. */
    const size_t n = (size_t)1 << 22;
    float *z = malloc(n * sizeof *z);
    sensim_rng r = sensim_rng_make(31337, 42, 1);
    sensim_rng_normal_icdf_fill(&r, 12345, n, z);
    double s1 = 0, s2 = 0, s3 = 0, s4 = 0;
    size_t t3 = 0, t4 = 0;
    for (size_t i = 0; i < n; i++) {
        double x = z[i], x2 = x * x;
        s1 += x;
        s2 += x2;
        s3 += x2 * x;
        s4 += x2 * x2;
        t3 += fabs(x) > 3;
        t4 += fabs(x) > 4;
    }
    double dn = (double)n;
    ck_assert_within(s1 / dn, 0.0, 5 / sqrt(dn));
    ck_assert_within(s2 / dn, 1.0, 5 * sqrt(2 / dn));
    ck_assert_within(s3 / dn, 0.0, 5 * sqrt(15 / dn));
    ck_assert_within(s4 / dn, 3.0, 5 * sqrt(96 / dn));
    const double q3 = 2 * gsl_cdf_ugaussian_Q(3), q4 = 2 * gsl_cdf_ugaussian_Q(4);
    ck_assert_within((double)t3, dn * q3, 5 * sqrt(dn * q3 * (1 - q3)));
    ck_assert_within((double)t4, dn * q4, 5 * sqrt(dn * q4 * (1 - q4)));
    qsort(z, n, sizeof *z, cmp_float);
    double d = 0;
    for (size_t i = 0; i < n; i++) {
        double F = gsl_cdf_ugaussian_P(z[i]);
        double a = fabs(F - (double)i / dn), b = fabs((double)(i + 1) / dn - F);
        d = fmax(d, fmax(a, b));
    }
    ck_assert_double_lt(sqrt(dn) * d, 1.95);
    free(z);
}
END_TEST

Suite *suite_rng_icdf(void)
{
    Suite *s = suite_create("rng_icdf");
    TCase *tc = tcase_create("core");
    tcase_add_test(tc, icdf_accuracy);
    tcase_add_test(tc, icdf_fill_matches_scalar);
    tcase_add_test(tc, icdf_pinned_values);
    tcase_add_test(tc, icdf_distribution);
    suite_add_tcase(s, tc);
    return s;
}
