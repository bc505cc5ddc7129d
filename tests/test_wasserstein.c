/* 1-D Wasserstein distance: closed forms, hand-computed cases (unequal
 * sizes, weights, ties) and bad input. Hand values were checked against
 * scipy.stats.wasserstein_distance (scipy 1.x, /usr/bin/python3):
 *   w([0,1,3],[5,6,8]) = 5
 *   w([0,1,1,3],[1,2,2,2,7]) = 1.65
 *   w([3.4,3.9,7.5,7.8],[4.5,1.4],[1.4,0.9,3.1,7.2],[3.2,3.5]) = 4.0781331438047861
 *   w([1,1,1],[1,1]) = 0 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "sensim/metrics.h"
#include "sensim/rng.h"
#include "testutil.h"

static double w1(const double *u, size_t n, const double *uw, const double *v, size_t m, const double *vw)
{
    double d = NAN;
    ck_assert_int_eq(sensim_wasserstein1(u, n, uw, v, m, vw, &d), SENSIM_OK);
    return d;
}

START_TEST(hand_cases)
{
    const double a[] = {0, 1, 3}, b[] = {5, 6, 8};
    ck_assert_within(w1(a, 3, NULL, b, 3, NULL), 5.0, 1e-15);
    /* Unequal sizes with ties: F_u - F_v over [0,1): 1/4; [1,2): 3/4 - 1/5;
     * [2,3): 3/4 - 4/5; [3,7): 1 - 4/5. Sum = 0.25 + 0.55 + 0.05 + 0.8 = 1.65. */
    const double c[] = {0, 1, 1, 3}, d[] = {2, 1, 7, 2, 2};
    ck_assert_within(w1(c, 4, NULL, d, 5, NULL), 1.65, 1e-14);
    /* Weighted (the scipy documentation's example). */
    const double u[] = {3.4, 3.9, 7.5, 7.8}, uw[] = {1.4, 0.9, 3.1, 7.2};
    const double v[] = {4.5, 1.4}, vw[] = {3.2, 3.5};
    ck_assert_within(w1(u, 4, uw, v, 2, vw), 4.0781331438047861, 1e-13);
    ck_assert_within(w1(v, 2, vw, u, 4, uw), 4.0781331438047861, 1e-13);
    const double e[] = {1, 1, 1}, f[] = {1, 1};
    ck_assert(w1(e, 3, NULL, f, 2, NULL) == 0.0);
    /* Single points: |x - y|. */
    const double x = -2.5, y = 4.0;
    ck_assert_within(w1(&x, 1, NULL, &y, 1, NULL), 6.5, 1e-15);
}
END_TEST

START_TEST(weights_equal_replication)
{
    /* Integer weights are the same as repeating the values; scaling all
     * weights changes nothing. */
    const double u[] = {0.3, -1.2, 2.0, 0.7}, uw[] = {2, 1, 3, 1};
    const double ur[] = {0.3, 0.3, -1.2, 2.0, 2.0, 2.0, 0.7};
    const double v[] = {1.1, 0.0, -0.4}, vw[] = {0.5, 0.25, 0.25}, vw2[] = {20, 10, 10};
    const double vr[] = {1.1, 1.1, 0.0, -0.4};
    double a = w1(u, 4, uw, v, 3, vw), b = w1(ur, 7, NULL, vr, 4, NULL), c = w1(u, 4, uw, v, 3, vw2);
    ck_assert_within(a, b, 1e-14);
    ck_assert_within(a, c, 1e-14);
}
END_TEST

START_TEST(equal_sizes_sorted_mean)
{
    /* For equal-size unweighted sets W1 = mean |sort(u) - sort(v)| (MODELS.md). */
    enum { n = 257 };
    double u[n], v[n];
    sensim_rng r1 = sensim_rng_make(5, 1, 0), r2 = sensim_rng_make(5, 1, 1);
    sensim_rng_normal_fill(&r1, 0, n, u);
    for (size_t i = 0; i < n; i++)
        v[i] = 0.3 + 2.0 * sensim_rng_uniform(&r2, i);
    double d = w1(u, n, NULL, v, n, NULL);
    double su[n], sv[n];
    memcpy(su, u, sizeof u);
    memcpy(sv, v, sizeof v);
    for (size_t i = 1; i < n; i++) /* insertion sort, independent of the library's */
        for (size_t j = i; j > 0 && su[j] < su[j - 1]; j--) {
            double t = su[j];
            su[j] = su[j - 1];
            su[j - 1] = t;
        }
    for (size_t i = 1; i < n; i++)
        for (size_t j = i; j > 0 && sv[j] < sv[j - 1]; j--) {
            double t = sv[j];
            sv[j] = sv[j - 1];
            sv[j - 1] = t;
        }
    double m = 0;
    for (size_t i = 0; i < n; i++)
        m += fabs(su[i] - sv[i]) / n;
    ck_assert_within(d, m, 1e-12);
    /* Shifted set: exactly the shift. */
    for (size_t i = 0; i < n; i++)
        v[i] = u[(i * 7) % n] + 1.75;
    ck_assert_within(w1(u, n, NULL, v, n, NULL), 1.75, 1e-12);
}
END_TEST

START_TEST(normals_closed_form)
{
    /* Between N(m1, s1^2) and N(m2, s2^2) the optimal coupling is the
     * quantile one: W1 = |m1 - m2| for equal sigma, |s1 - s2| sqrt(2/pi)
     * for equal means. The empirical W1 deviates by O(sqrt(1/n + 1/m));
     * with n = 20000, m = 30000 that is 0.0091 per unit sigma: tolerance
     * 5 of those (times the larger sigma). */
    enum { n = 20000, m = 30000 };
    double *u = malloc(n * sizeof *u), *v = malloc(m * sizeof *v);
    sensim_rng r1 = sensim_rng_make(11, 2, 0), r2 = sensim_rng_make(11, 2, 1);
    sensim_rng_normal_fill(&r1, 0, n, u);
    sensim_rng_normal_fill(&r2, 0, m, v);
    double tol = 5 * sqrt(1.0 / n + 1.0 / m);
    for (size_t i = 0; i < m; i++)
        v[i] += 0.7;
    ck_assert_within(w1(u, n, NULL, v, m, NULL), 0.7, tol);
    for (size_t i = 0; i < m; i++)
        v[i] = 2.0 * (v[i] - 0.7);
    ck_assert_within(w1(u, n, NULL, v, m, NULL), sqrt(2 / M_PI), 2 * tol);
    free(u);
    free(v);
}
END_TEST

START_TEST(bad_input)
{
    const double a[] = {1, 2}, b[] = {3}, neg[] = {1, -1}, zero[] = {0, 0}, bad[] = {1, NAN};
    double d;
    ck_assert_int_eq(sensim_wasserstein1(a, 0, NULL, b, 1, NULL, &d), SENSIM_EDATA);
    ck_assert_ptr_nonnull(strstr(sensim_last_error(), "empty"));
    ck_assert_int_eq(sensim_wasserstein1(a, 2, neg, b, 1, NULL, &d), SENSIM_EINVAL);
    ck_assert_ptr_nonnull(strstr(sensim_last_error(), "first weight 1"));
    ck_assert_int_eq(sensim_wasserstein1(a, 2, NULL, a, 2, zero, &d), SENSIM_EINVAL);
    ck_assert_ptr_nonnull(strstr(sensim_last_error(), "second weights sum to zero"));
    ck_assert_int_eq(sensim_wasserstein1(bad, 2, NULL, b, 1, NULL, &d), SENSIM_EDATA);
    ck_assert_ptr_nonnull(strstr(sensim_last_error(), "first value 1 is not finite"));
}
END_TEST

Suite *suite_wasserstein(void)
{
    Suite *s = suite_create("wasserstein");
    TCase *tc = tcase_create("core");
    tcase_add_test(tc, hand_cases);
    tcase_add_test(tc, weights_equal_replication);
    tcase_add_test(tc, equal_sizes_sorted_mean);
    tcase_add_test(tc, normals_closed_form);
    tcase_add_test(tc, bad_input);
    suite_add_tcase(s, tc);
    return s;
}
