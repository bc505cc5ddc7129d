/* Counter-based RNG: moments against closed forms with tolerances from the
 * sample size, and independence from chunking. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "sensim/rng.h"
#include "testutil.h"

#define N 2000000

START_TEST(normal_moments)
{
    /* n = 2e6: SE(mean) = 1/sqrt(n) = 7.1e-4, SE(var) = sqrt(2/n) = 1e-3,
     * SE(kurtosis) = sqrt(24/n) = 3.5e-3; tolerances are 5 SE. */
    sensim_rng r = sensim_rng_make(42, 7, 3);
    double *x = malloc(N * sizeof *x);
    sensim_rng_normal_fill(&r, 0, N, x);
    double m = tu_mean(x, N, 1), v = tu_var(x, N, 1), m4 = 0, tail = 0;
    for (size_t i = 0; i < N; i++) {
        m4 += pow(x[i] - m, 4);
        tail += fabs(x[i]) > 3.0;
    }
    m4 /= N;
    ck_assert_within(m, 0.0, 5 * 7.1e-4);
    ck_assert_within(v, 1.0, 5e-3);
    ck_assert_within(m4 / (v * v), 3.0, 5 * 3.5e-3 * 2);
    /* P(|Z| > 3) = 2.6998e-3; binomial SE = sqrt(p/n) = 3.7e-5. */
    ck_assert_within(tail / N, 2.6998e-3, 5 * 3.7e-5);
    ck_assert_within(tu_acf1(x, N, 1), 0.0, 5 / sqrt(N));
    free(x);
}
END_TEST

START_TEST(fill_matches_single_and_chunking)
{
    sensim_rng r = sensim_rng_make(1, 2, 3);
    double a[1003], b[1003];
    sensim_rng_normal_fill(&r, 17, 1003, a);
    /* Chunks of odd sizes starting at odd offsets must agree bit for bit. */
    size_t done = 0, sizes[] = {1, 2, 3, 5, 7, 11, 13, 17};
    for (int k = 0; done < 1003; k = (k + 1) % 8) {
        size_t c = sizes[k] < 1003 - done ? sizes[k] : 1003 - done;
        sensim_rng_normal_fill(&r, 17 + done, c, b + done);
        done += c;
    }
    ck_assert(memcmp(a, b, sizeof a) == 0);
    for (size_t i = 0; i < 1003; i += 97)
        ck_assert(a[i] == sensim_rng_normal(&r, 17 + i));
}
END_TEST

/* The vectorized group path of the fill (Philox lanes, the ziggurat test
 * over 64 lanes, the rejection fix-up) against the scalar draw for every
 * index, including counters that carry into the high word and a key,
 * stream and sensor with high bits set. */
START_TEST(fill_matches_scalar_every_index)
{
    sensim_rng r = sensim_rng_make(0xFEDCBA9876543210ull, 0xABCDEF, 0xDEADBEEF);
    const uint64_t starts[] = {0, 64, ((uint64_t)1 << 34) - 640, ((uint64_t)1 << 40) + 3};
    enum { M = 4096 };
    double *a = malloc(M * sizeof *a);
    ck_assert_ptr_nonnull(a);
    for (int s = 0; s < 4; s++) {
        sensim_rng_normal_fill(&r, starts[s], M, a);
        for (size_t i = 0; i < M; i++)
            ck_assert_msg(a[i] == sensim_rng_normal(&r, starts[s] + i), "start %d index %zu", s, i);
    }
    free(a);
}
END_TEST

START_TEST(normal_fill_kernels_bit_identical)
{
    /* The portable, AVX2 and AVX-512 kernels must give the same bits (CI
     * machines may lack AVX-512): each is called explicitly and compared
     * with the portable one and with the one-at-a-time sensim_rng_normal,
     * from an unaligned start, across the 2^32 block-counter carry, and over
     * enough samples (2e5) that ~5500 lanes take the slow path. */
    const size_t n = 200000;
    const uint64_t starts[] = {3, 4 * ((uint64_t)1 << 32) - 1001};
    double *ref = malloc(n * sizeof *ref), *x = malloc(n * sizeof *x);
    sensim_rng r = sensim_rng_make(0x0123456789abcdefull, 0xABCDEF, 21);
    ck_assert(sensim_rng_impl_available(SENSIM_RNG_IMPL_SCALAR));
    ck_assert(sensim_rng_impl_available(SENSIM_RNG_IMPL_AUTO));
    for (int st = 0; st < 2; st++) {
        ck_assert_int_eq(sensim_rng_normal_fill_impl(&r, starts[st], n, ref, SENSIM_RNG_IMPL_SCALAR), SENSIM_OK);
        for (size_t i = 0; i < n; i += 37)
            ck_assert(ref[i] == sensim_rng_normal(&r, starts[st] + i));
        for (int impl = SENSIM_RNG_IMPL_AUTO; impl <= SENSIM_RNG_IMPL_AVX512; impl++) {
            memset(x, 0, n * sizeof *x);
            sensim_status rc = sensim_rng_normal_fill_impl(&r, starts[st], n, x, (sensim_rng_impl)impl);
            if (!sensim_rng_impl_available((sensim_rng_impl)impl)) {
                ck_assert_int_eq(rc, SENSIM_EUNSUPPORTED);
                ck_assert(strstr(sensim_last_error(), "not available") != NULL);
                continue;
            }
            ck_assert_int_eq(rc, SENSIM_OK);
            ck_assert_msg(memcmp(x, ref, n * sizeof *x) == 0, "kernel %d differs from the portable one", impl);
        }
    }
    free(ref);
    free(x);
}
END_TEST

START_TEST(streams_differ)
{
    sensim_rng a = sensim_rng_make(1, 2, 3), b = sensim_rng_make(2, 2, 3);
    sensim_rng c = sensim_rng_make(1, 3, 3), d = sensim_rng_make(1, 2, 4);
    ck_assert(sensim_rng_u32(&a, 5) != sensim_rng_u32(&b, 5));
    ck_assert(sensim_rng_u32(&a, 5) != sensim_rng_u32(&c, 5));
    ck_assert(sensim_rng_u32(&a, 5) != sensim_rng_u32(&d, 5));
    ck_assert_uint_eq(sensim_rng_sensor_id("imu"), sensim_rng_sensor_id("imu"));
    ck_assert_uint_ne(sensim_rng_sensor_id("imu"), sensim_rng_sensor_id("gps"));
    /* Known answer: pins the generator so outputs stay stable across versions. */
    sensim_rng k = sensim_rng_make(0, 0, 0);
    uint32_t blk[4];
    sensim_rng_block(&k, 0, blk);
    /* Philox4x32-10 of counter 0, key 0 (Random123 kat_vectors). */
    ck_assert_uint_eq(blk[0], 0x6627e8d5u);
    ck_assert_uint_eq(blk[1], 0xe169c58du);
    ck_assert_uint_eq(blk[2], 0xbc57ac4cu);
    ck_assert_uint_eq(blk[3], 0x9b00dbd8u);
}
END_TEST

START_TEST(uniform_moments)
{
    sensim_rng r = sensim_rng_make(9, 1, 1);
    double *x = malloc(N * sizeof *x);
    sensim_rng_uniform_fill(&r, 0, N, x);
    double lo = 1, hi = 0;
    for (size_t i = 0; i < N; i++) {
        lo = fmin(lo, x[i]);
        hi = fmax(hi, x[i]);
    }
    ck_assert(lo > 0 && hi < 1);
    /* var(U) = 1/12; SE(mean) = sqrt(1/12/n) = 2.0e-4. */
    ck_assert_within(tu_mean(x, N, 1), 0.5, 5 * 2.0e-4);
    ck_assert_within(tu_var(x, N, 1), 1.0 / 12, 5 * sqrt(1.0 / 180 / N));
    free(x);
}
END_TEST

START_TEST(gamma_moments)
{
    /* Gamma(a,1): mean a, variance a. n = 2e5, tolerance 5 SE. */
    const size_t n = 200000;
    double shapes[] = {0.5, 1.0, 2.5, 9.0};
    double *x = malloc(n * sizeof *x);
    for (int s = 0; s < 4; s++) {
        sensim_rng r = sensim_rng_make(11, 1, (uint32_t)s);
        for (size_t i = 0; i < n; i++)
            x[i] = sensim_rng_gamma(&r, i, shapes[s]);
        double a = shapes[s];
        ck_assert_within(tu_mean(x, n, 1), a, 5 * sqrt(a / n));
        /* var of sample variance for gamma: (mu4 - s^4)/n, mu4 = 3a^2 + 6a. */
        ck_assert_within(tu_var(x, n, 1), a, 5 * sqrt((3 * a * a + 6 * a - a * a) / n));
    }
    ck_assert(isnan(sensim_rng_gamma(&(sensim_rng){{0, 0}, 0, 0}, 0, -1.0)));
    free(x);
}
END_TEST

START_TEST(poisson_mean_equals_variance)
{
    const size_t n = 200000;
    double means[] = {0.3, 4.0, 25.0, 1000.0};
    double *x = malloc(n * sizeof *x);
    for (int s = 0; s < 4; s++) {
        sensim_rng r = sensim_rng_make(5, 9, (uint32_t)s);
        for (size_t i = 0; i < n; i++)
            x[i] = sensim_rng_poisson(&r, i, means[s]);
        double lam = means[s];
        ck_assert_within(tu_mean(x, n, 1), lam, 5 * sqrt(lam / n));
        /* var of sample variance for Poisson: (lam + 2 lam^2)/n. */
        ck_assert_within(tu_var(x, n, 1), lam, 5 * sqrt((lam + 2 * lam * lam) / n));
    }
    free(x);
}
END_TEST

Suite *suite_rng(void)
{
    Suite *s = suite_create("rng");
    TCase *tc = tcase_create("core");
    tcase_add_test(tc, normal_moments);
    tcase_add_test(tc, fill_matches_single_and_chunking);
    tcase_add_test(tc, fill_matches_scalar_every_index);
    tcase_add_test(tc, normal_fill_kernels_bit_identical);
    tcase_add_test(tc, streams_differ);
    tcase_add_test(tc, uniform_moments);
    tcase_add_test(tc, gamma_moments);
    tcase_add_test(tc, poisson_mean_equals_variance);
    suite_add_tcase(s, tc);
    return s;
}
