/* The permutation test of VEPD (sensim_vepd_permutation): identical sets,
 * exact enumeration of every relabeling for small sets (plain and
 * stratified) against the Monte Carlo p, uniform p-values under the null,
 * reproducibility by seed, bad input; and `sensim vepd --permutations`. */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "sensim/metrics.h"
#include "sensim/rng.h"
#include "testutil.h"

/* ---- exact enumeration, independent of the library's shuffling ---- */

/* Strata given as segments of a pooled array: segment k holds len[k] tests
 * of which nreal[k] go to the real set. Enumerates every choice of real
 * tests within every segment (bit masks), scores each with
 * sensim_vepd_compare and counts those >= the observed VEPD less the same
 * relative 1e-12 the library uses. */
typedef struct {
    const sensim_vepd_test *pool;
    const size_t *start, *len, *nreal;
    size_t nseg, nr, ns;
    double thresh;
    unsigned mask[8];
    size_t count, total;
} enum_ctx;

static void enum_rec(enum_ctx *c, size_t k)
{
    if (k == c->nseg) {
        sensim_vepd_test r[32], s[32];
        size_t a = 0, b = 0;
        for (size_t g = 0; g < c->nseg; g++)
            for (size_t i = 0; i < c->len[g]; i++) {
                if (c->mask[g] >> i & 1u)
                    r[a++] = c->pool[c->start[g] + i];
                else
                    s[b++] = c->pool[c->start[g] + i];
            }
        ck_assert(a == c->nr && b == c->ns);
        sensim_vepd_result v;
        ck_assert_int_eq(sensim_vepd_compare(r, a, s, b, &v), SENSIM_OK);
        c->count += v.vepd >= c->thresh;
        c->total++;
        return;
    }
    for (unsigned m = 0; m < 1u << c->len[k]; m++)
        if ((size_t)__builtin_popcount(m) == c->nreal[k]) {
            c->mask[k] = m;
            enum_rec(c, k + 1);
        }
}

/* Exact p (fraction of all relabelings with VEPD >= observed, the observed
 * one included) for a pooled array whose segments list the real tests first
 * (the first nreal[k] of segment k are the observed real tests). */
static double exact_p(const sensim_vepd_test *pool, const size_t *start, const size_t *len, const size_t *nreal,
                      size_t nseg, size_t *total)
{
    enum_ctx c = {.pool = pool, .start = start, .len = len, .nreal = nreal, .nseg = nseg};
    sensim_vepd_test r[32], s[32];
    for (size_t g = 0; g < nseg; g++)
        for (size_t i = 0; i < len[g]; i++) {
            if (i < nreal[g])
                r[c.nr++] = pool[start[g] + i];
            else
                s[c.ns++] = pool[start[g] + i];
        }
    sensim_vepd_result obs;
    ck_assert_int_eq(sensim_vepd_compare(r, c.nr, s, c.ns, &obs), SENSIM_OK);
    c.thresh = obs.vepd * (1 - 1e-12);
    enum_rec(&c, 0);
    *total = c.total;
    return (double)c.count / (double)c.total;
}

/* n_ge of a Monte Carlo run is Binomial(n_perm, p_exact): within 5 standard
 * errors (plus 1 for the discreteness of tiny p). */
static void check_binomial(size_t n_ge, size_t n_perm, double p_exact)
{
    double mean = (double)n_perm * p_exact, sd = sqrt((double)n_perm * p_exact * (1 - p_exact));
    ck_assert_msg(fabs((double)n_ge - mean) <= 5 * sd + 1, "n_ge %zu, expected %g +- %g", n_ge, mean, sd);
}

static sensim_vepd_test mk(double rmse, double sf) { return (sensim_vepd_test){.rmse = rmse, .sf_diff = sf}; }

START_TEST(identical_sets_p_one)
{
    /* real and sim hold the same values: observed VEPD 0, and every
     * relabeling is >= 0, so n_ge = n_perm and p = 1 exactly. */
    sensim_vepd_test a[6], b[6];
    size_t la[6], lb[6];
    for (int i = 0; i < 6; i++) {
        a[i] = b[i] = mk(0.1 + 0.07 * i * i, 0.02 * i);
        la[i] = lb[i] = (size_t)(i % 2);
    }
    sensim_vepd_perm p;
    ck_assert_int_eq(sensim_vepd_permutation(a, 6, NULL, b, 6, NULL, 199, 3, &p), SENSIM_OK);
    ck_assert(p.vepd == 0);
    ck_assert_uint_eq(p.n_ge, 199);
    ck_assert(p.p == 1.0);
    ck_assert_int_eq(sensim_vepd_permutation(a, 6, la, b, 6, lb, 199, 3, &p), SENSIM_OK);
    ck_assert(p.p == 1.0);
}
END_TEST

START_TEST(separated_sets_exact)
{
    /* m = 3 real tests all below n = 4 simulated ones: only the observed
     * labeling reaches the observed VEPD (the mirror needs m == n), so the
     * exact p is 1 / C(7, 3) = 1/35, found by enumeration too. */
    sensim_vepd_test pool[7] = {mk(0.1, 0.01), mk(0.15, 0.02), mk(0.12, 0.015), mk(1.0, 0.3),
                                mk(1.2, 0.35), mk(1.1, 0.4),   mk(1.3, 0.32)};
    size_t start = 0, len = 7, nreal = 3, total;
    double pe = exact_p(pool, &start, &len, &nreal, 1, &total);
    ck_assert_uint_eq(total, 35);
    ck_assert_within(pe, 1.0 / 35, 1e-15);
    sensim_vepd_perm p;
    ck_assert_int_eq(sensim_vepd_permutation(pool, 3, NULL, pool + 3, 4, NULL, 4000, 11, &p), SENSIM_OK);
    check_binomial(p.n_ge, 4000, pe);
    ck_assert_within(p.p, (1.0 + (double)p.n_ge) / 4001.0, 1e-15);
    /* m = n = 3: the observed labeling and its mirror, 2 / C(6, 3) = 0.1. */
    nreal = 3;
    len = 6;
    pe = exact_p(pool + 1, &start, &len, &nreal, 1, &total);
    ck_assert_uint_eq(total, 20);
    ck_assert_within(pe, 0.1, 1e-15);
    ck_assert_int_eq(sensim_vepd_permutation(pool + 1, 3, NULL, pool + 4, 3, NULL, 4000, 12, &p), SENSIM_OK);
    check_binomial(p.n_ge, 4000, pe);
}
END_TEST

START_TEST(overlapping_sets_exact)
{
    /* Interleaved values, the real ones a little lower: the exact p is a
     * middling fraction (5/56 by scipy's wasserstein_distance too); the Monte
     * Carlo count is Binomial(n_perm, p_exact). */
    sensim_vepd_test pool[8] = {mk(0.3, 0.1),  mk(0.5, 0.05), mk(0.6, 0.12),  mk(0.7, 0.2),
                                mk(0.4, 0.15), mk(0.9, 0.25), mk(1.1, 0.22), mk(0.8, 0.3)};
    size_t start = 0, len = 8, nreal = 3, total;
    double pe = exact_p(pool, &start, &len, &nreal, 1, &total);
    ck_assert_uint_eq(total, 56);
    ck_assert_within(pe, 5.0 / 56, 1e-15);
    sensim_vepd_perm p;
    ck_assert_int_eq(sensim_vepd_permutation(pool, 3, NULL, pool + 3, 5, NULL, 3000, 5, &p), SENSIM_OK);
    check_binomial(p.n_ge, 3000, pe);
}
END_TEST

START_TEST(stratified_exact)
{
    /* Two strata, (2 real, 2 sim) and (3 real, 3 sim): C(4,2) x C(6,3) = 120
     * relabelings. Stratum 1 sits far above stratum 0; within each the real
     * tests are a little lower. The library is given the tests unsorted, with
     * arbitrary labels 7 and 3, and must keep each stratum's sizes: exact p
     * 0.2 (24/120, also by scipy). */
    sensim_vepd_test pool[10] = {mk(0.2, 0.1), mk(0.3, 0.12),  mk(0.25, 0.08), mk(0.35, 0.2), mk(2.0, 0.5),
                                 mk(2.1, 0.45), mk(2.3, 0.6), mk(2.2, 0.55), mk(2.5, 0.6),  mk(2.6, 0.7)};
    size_t start[2] = {0, 4}, len[2] = {4, 6}, nreal[2] = {2, 3}, total;
    double pe = exact_p(pool, start, len, nreal, 2, &total);
    ck_assert_uint_eq(total, 120);
    ck_assert_within(pe, 0.2, 1e-15);
    sensim_vepd_test real[5] = {pool[4], pool[0], pool[5], pool[1], pool[6]};
    sensim_vepd_test sim[5] = {pool[2], pool[7], pool[3], pool[8], pool[9]};
    size_t lr[5] = {3, 7, 3, 7, 3}, ls[5] = {7, 3, 7, 3, 3};
    sensim_vepd_perm p;
    ck_assert_int_eq(sensim_vepd_permutation(real, 5, lr, sim, 5, ls, 4000, 8, &p), SENSIM_OK);
    check_binomial(p.n_ge, 4000, pe);
    /* Unstratified, a relabeling may move the far stratum's tests between
     * the sets: the pooled exact p is 156/252 (scipy: 0.619), and the
     * unstratified count follows it instead. */
    size_t s1 = 0, l1 = 10, n1 = 5;
    sensim_vepd_test flat[10] = {pool[0], pool[1], pool[4], pool[5], pool[6],
                                 pool[2], pool[3], pool[7], pool[8], pool[9]};
    double pf = exact_p(flat, &s1, &l1, &n1, 1, &total);
    ck_assert_uint_eq(total, 252);
    ck_assert_within(pf, 156.0 / 252, 1e-15);
    ck_assert_int_eq(sensim_vepd_permutation(real, 5, NULL, sim, 5, NULL, 4000, 8, &p), SENSIM_OK);
    check_binomial(p.n_ge, 4000, pf);
}
END_TEST

START_TEST(null_uniform)
{
    /* Under the null the test is exact: with 99 permutations and continuous
     * data P(p <= 0.05) = 5/100. Each of R = 1000 replicates draws 8 real and
     * 10 simulated tests from the same normal laws, in two strata with
     * different means and different real/sim proportions (5 + 3 real, 3 + 7
     * sim), which the stratified test must absorb. The fraction of p <= 0.05
     * is within 5 binomial SE (5 sqrt(0.05 * 0.95 / R) = 0.034) of 0.05, and
     * the mean p within 5 SE (SD of a uniform p 0.289: 0.046) of 0.505. */
    const size_t R = 1000, NP = 99;
    sensim_rng g = sensim_rng_make(2024, 1, 0);
    size_t below = 0, half = 0;
    double sum = 0;
    uint64_t k = 0;
    for (size_t rep = 0; rep < R; rep++) {
        sensim_vepd_test t[18];
        size_t lab[18];
        for (size_t i = 0; i < 18; i++) {
            /* real: 0..4 stratum 0, 5..7 stratum 1; sim: 8..10 stratum 0, 11..17 stratum 1. */
            lab[i] = (i < 5 || (i >= 8 && i < 11)) ? 0 : 1;
            double mu = lab[i] ? 2.0 : 1.0;
            t[i] = mk(mu + 0.2 * sensim_rng_normal(&g, k), 0.3 * mu + 0.05 * sensim_rng_normal(&g, k + 1));
            k += 2;
        }
        sensim_vepd_perm p;
        ck_assert_int_eq(sensim_vepd_permutation(t, 8, lab, t + 8, 10, lab + 8, NP, rep, &p), SENSIM_OK);
        below += p.p <= 0.05;
        half += p.p <= 0.5;
        sum += p.p;
    }
    double f = (double)below / (double)R;
    ck_assert_msg(fabs(f - 0.05) <= 5 * sqrt(0.05 * 0.95 / (double)R), "P(p <= 0.05) = %g", f);
    ck_assert_msg(fabs(sum / (double)R - 0.505) <= 5 * 0.289 / sqrt((double)R), "mean p %g", sum / (double)R);
    ck_assert_msg(fabs((double)half / (double)R - 0.5) <= 5 * sqrt(0.25 / (double)R), "P(p <= 0.5) = %g",
                  (double)half / (double)R);
}
END_TEST

START_TEST(reproducible_and_bad_input)
{
    sensim_vepd_test a[6], b[5];
    for (int i = 0; i < 6; i++)
        a[i] = mk(0.1 * i, 0.01 * i);
    for (int i = 0; i < 5; i++)
        b[i] = mk(0.05 + 0.12 * i, 0.03 * i);
    sensim_vepd_perm x, y, z;
    ck_assert_int_eq(sensim_vepd_permutation(a, 6, NULL, b, 5, NULL, 500, 42, &x), SENSIM_OK);
    ck_assert_int_eq(sensim_vepd_permutation(a, 6, NULL, b, 5, NULL, 500, 42, &y), SENSIM_OK);
    ck_assert_int_eq(sensim_vepd_permutation(a, 6, NULL, b, 5, NULL, 500, 43, &z), SENSIM_OK);
    ck_assert_uint_eq(x.n_ge, y.n_ge);
    ck_assert(x.p == y.p && x.seed == 42 && x.n_perm == 500);
    /* Exact p 0.90 (scipy, all 462 relabelings): n_ge has SD 6.7, so two
     * seeds agree with probability about 0.06; four other seeds all agreeing
     * with seed 42 would mean the seed is ignored. */
    ck_assert(x.p > 0.8 && x.p < 0.97);
    int differ = 0;
    for (uint64_t sd = 43; sd < 47; sd++) {
        ck_assert_int_eq(sensim_vepd_permutation(a, 6, NULL, b, 5, NULL, 500, sd, &z), SENSIM_OK);
        differ += z.n_ge != x.n_ge;
    }
    ck_assert_int_gt(differ, 0);
    sensim_vepd_result r;
    ck_assert_int_eq(sensim_vepd_compare(a, 6, b, 5, &r), SENSIM_OK);
    ck_assert(x.vepd == r.vepd);
    /* Bad input. */
    size_t lab[6] = {0};
    ck_assert_int_eq(sensim_vepd_permutation(a, 6, lab, b, 5, NULL, 10, 1, &x), SENSIM_EINVAL);
    ck_assert_ptr_nonnull(strstr(sensim_last_error(), "strata given for one set only"));
    ck_assert_int_eq(sensim_vepd_permutation(a, 6, NULL, b, 5, NULL, 0, 1, &x), SENSIM_EINVAL);
    ck_assert_ptr_nonnull(strstr(sensim_last_error(), "0 permutations"));
    ck_assert_int_eq(sensim_vepd_permutation(a, 0, NULL, b, 5, NULL, 10, 1, &x), SENSIM_EDATA);
    ck_assert_ptr_nonnull(strstr(sensim_last_error(), "empty set (0 real tests, 5 simulated)"));
    ck_assert_int_eq(sensim_vepd_permutation(NULL, 6, NULL, b, 5, NULL, 10, 1, &x), SENSIM_EINVAL);
    ck_assert_ptr_nonnull(strstr(sensim_last_error(), "NULL argument"));
}
END_TEST

/* The number after "key": in text, or NAN. */
static double json_num(const char *text, const char *key)
{
    char pat[64];
    snprintf(pat, sizeof pat, "\"%s\": ", key);
    const char *p = text ? strstr(text, pat) : NULL;
    return p ? strtod(p + strlen(pat), NULL) : NAN;
}

/* `sensim vepd --permutations` on judged logs that `sensim sim2real --keep`
 * writes (Ch:RW generator, 2 tests of 15 s per scenario, as in
 * test_sim2real.c): the generator's own simulated set has a large p,
 * AirSim's a small one. The test is paired (the real and simulated test of
 * a name swap labels): 6 pairs give 64 relabelings, and the smallest exact
 * p is 2/64 = 0.031 (the observed labeling and its mirror), which 9999
 * Monte Carlo relabelings estimate below 0.031 + 5 SE = 0.040. The JSON has
 * p for the combined score and for each scenario; without the option there
 * is no p; the same seed prints the same bytes. */
START_TEST(cli_vepd_permutations)
{
    char *dir = tu_mkdtemp(), *run = tu_path(dir, "run"), *data = tu_src("data");
    tu_run_result r = tu_run("sim2real", "-g", "ch-rw", "-n", "2", "-t", "15", "--bootstrap", "0",
                             "--permutations", "0", "--data", data, "--dir", run, "--keep", NULL);
    ck_assert_msg(r.status == 0, "status %d: %s", r.status, r.err);
    tu_run_free(&r);
    char *real = tu_path(run, "real-ch-rw"), *same = tu_path(run, "sim/ch-rw"), *other = tu_path(run, "sim/airsim");
    r = tu_run("vepd", "--real", real, "--sim", same, "--permutations", "9999", "--json", NULL);
    ck_assert_msg(r.status == 0, "status %d: %s", r.status, r.err);
    double p_same = json_num(r.out, "p");
    ck_assert_msg(p_same > 0.05 && p_same <= 1, "p %g", p_same);
    ck_assert_within(json_num(r.out, "n_perm"), 9999, 0);
    const char *sc = strstr(r.out, "\"scenarios\": {");
    ck_assert_ptr_nonnull(sc);
    int with_p = 0;
    for (const char *q = sc; (q = strstr(q, "\"p\": ")) && q < strstr(sc, "\"tests\""); q++)
        with_p++;
    ck_assert_int_eq(with_p, 3);
    tu_run_free(&r);
    r = tu_run("vepd", "--real", real, "--sim", other, "--permutations", "9999", "--json", NULL);
    ck_assert_msg(r.status == 0, "status %d: %s", r.status, r.err);
    double p_other = json_num(r.out, "p");
    ck_assert_msg(p_other < 0.05 && p_other >= 1.0 / 10000, "p %g", p_other);
    tu_run_free(&r);
    r = tu_run("vepd", "--real", real, "--sim", other, "--json", NULL);
    ck_assert_ptr_null(strstr(r.out, "\"p\": "));
    tu_run_free(&r);
    /* Text: a p column and its note; the same seed prints the same bytes,
     * another seed another p. */
    r = tu_run("vepd", "--real", real, "--sim", same, "--permutations", "199", "--seed", "5", "--bootstrap", "20",
               NULL);
    tu_run_result r2 = tu_run("vepd", "--real", real, "--sim", same, "--permutations", "199", "--seed", "5",
                              "--bootstrap", "20", NULL);
    ck_assert_msg(r.status == 0, "status %d: %s", r.status, r.err);
    ck_assert_str_eq(r.out, r2.out);
    ck_assert_ptr_nonnull(strstr(r.out, "VEPD        p  bootstrap percentile interval"));
    ck_assert_ptr_nonnull(strstr(r.out, "(p: paired permutation test of one distribution, 199 relabelings"));
    tu_run_free(&r);
    tu_run_free(&r2);
    /* Usage errors: exit 2 naming the option. */
    const char *bad[] = {"-1", "x", "12abc", "100000001"};
    for (int i = 0; i < 4; i++) {
        r = tu_run("vepd", "--real", real, "--sim", same, "--permutations", bad[i], NULL);
        ck_assert_int_eq(r.status, 2);
        ck_assert_msg(strstr(r.err, "--permutations: '") && strstr(r.err, "is not a count from 0 to 1e8"), "%s",
                      r.err);
        ck_assert_str_eq(r.out, "");
        tu_run_free(&r);
    }
    free(real);
    free(same);
    free(other);
    tu_rmtree(dir);
    free(dir);
    free(run);
    free(data);
}
END_TEST

Suite *suite_vepd_perm(void)
{
    Suite *s = suite_create("vepd_perm");
    TCase *tc = tcase_create("core");
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, identical_sets_p_one);
    tcase_add_test(tc, separated_sets_exact);
    tcase_add_test(tc, overlapping_sets_exact);
    tcase_add_test(tc, stratified_exact);
    tcase_add_test(tc, null_uniform);
    tcase_add_test(tc, reproducible_and_bad_input);
    tcase_add_test(tc, cli_vepd_permutations);
    suite_add_tcase(s, tc);
    return s;
}
