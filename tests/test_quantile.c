/* Chi-squared and beta quantiles (sensim/quantile.h) against scipy.stats
 * (/usr/bin/python3, Debian's scipy; chi2.ppf and beta.ppf are computed by
 * the Boost/Cephes inverses of the incomplete gamma and beta functions,
 * accurate to a few ulp), at degrees of freedom from 0.5 to 2e7 and at the
 * confidence levels the estimators use, including the cases where GSL
 * 2.7's gsl_cdf_chisq_Pinv and gsl_cdf_beta_Pinv return inf or NaN; then
 * the two users of the quantiles (Allan intervals at large edf, the GNSS
 * outlier-rate interval) through the library and the CLI. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sensim/allan.h"
#include "sensim/gnssfit.h"
#include "sensim/quantile.h"
#include "sensim/rng.h"
#include "testutil.h"

/* Runs a Python program that prints rows of numbers; returns them flat
 * (malloc'd) and the count in *n. */
static double *python_numbers(const char *program, size_t *n)
{
    char *dir = tu_mkdtemp(), *py = tu_path(dir, "ref.py");
    ck_assert_int_eq(tu_write_file(py, program), 0);
    char cmd[1024];
    snprintf(cmd, sizeof cmd, "/usr/bin/python3 '%s'", py);
    FILE *p = popen(cmd, "r");
    ck_assert_ptr_nonnull(p);
    size_t cap = 1024, k = 0;
    double *v = malloc(cap * sizeof *v);
    while (fscanf(p, "%lf", &v[k]) == 1)
        if (++k == cap)
            v = realloc(v, (cap *= 2) * sizeof *v);
    ck_assert_int_eq(pclose(p), 0);
    tu_rmtree(dir);
    free(py);
    free(dir);
    *n = k;
    return v;
}

START_TEST(chisq_against_scipy)
{
    /* scipy's own inverse loses accuracy in the far tails above about 1e6
     * degrees of freedom (p = 1e-6 is off by 1.5e-9 relative at nu = 2e6,
     * p = 1e-12 by 4e-7 at 1e7, growing with nu; mpmath at 40 digits sides
     * with sensim there), so beyond 1e6 the comparison keeps to p in
     * [0.005, 0.995], which covers every confidence level of 99 % or less. */
    size_t n;
    double *v = python_numbers("from scipy.stats import chi2\n"
                               "nus = [0.5, 1, 1.7, 3, 10, 37.5, 100, 1e3, 3e3, 5e3, 2e4, 5e4, 1e5, 3e5, 7e5, 1e6,\n"
                               "       1.2e6, 2e6, 3e6, 5e6, 1e7, 2e7]\n"
                               "ps = [1e-12, 0.005, 0.025, 0.05, 0.15865525393145707, 0.5, 0.8413447460685429,\n"
                               "      0.95, 0.975, 0.995, 1 - 1e-10]\n"
                               "for nu in nus:\n"
                               "    for p in ps:\n"
                               "        if nu > 1e6 and not 0.005 <= p <= 0.995: continue\n"
                               "        print('%.17g %.17g %.17g' % (p, nu, chi2.ppf(p, nu)))\n",
                               &n);
    ck_assert_uint_ge(n, 3 * 200);
    for (size_t i = 0; i < n; i += 3) {
        double p = v[i], nu = v[i + 1], ref = v[i + 2], got = sensim_chisq_quantile(p, nu);
        ck_assert_msg(fabs(got / ref - 1) < 1e-10, "chi2 quantile p=%.17g nu=%g: %.17g, scipy %.17g", p, nu, got,
                      ref);
    }
    free(v);
    /* Edges. */
    ck_assert(sensim_chisq_quantile(0, 5) == 0);
    ck_assert(isinf(sensim_chisq_quantile(1, 5)));
    ck_assert(isnan(sensim_chisq_quantile(0.5, 0)));
    ck_assert(isnan(sensim_chisq_quantile(-0.1, 5)));
}
END_TEST

START_TEST(beta_against_scipy)
{
    /* The Clopper-Pearson bounds of k outliers in n = 9000 epochs, k = 6,
     * 19, 20 (GSL: NaN; scipy: 0.00145, 0.00329, 0.00343 at the 97.5 %
     * point), and a spread of other shapes. */
    size_t n;
    double *v = python_numbers("from scipy.stats import beta\n"
                               "ab = [(7, 8994), (20, 8981), (21, 8980), (6, 8995), (19, 8982), (20, 8981),\n"
                               "      (1, 100), (0.5, 0.5), (3, 7), (1000, 2000), (1, 1e6), (50, 5), (2, 3e5),\n"
                               "      (4e4, 2e4)]\n"
                               "for a, b in ab:\n"
                               "    for p in [1e-9, 0.005, 0.025, 0.05, 0.5, 0.95, 0.975, 0.995]:\n"
                               "        print('%.17g %.17g %.17g %.17g' % (p, a, b, beta.ppf(p, a, b)))\n",
                               &n);
    ck_assert_uint_ge(n, 4 * 100);
    for (size_t i = 0; i < n; i += 4) {
        double p = v[i], a = v[i + 1], b = v[i + 2], ref = v[i + 3], got = sensim_beta_quantile(p, a, b);
        ck_assert_msg(fabs(got / ref - 1) < 1e-10, "beta quantile p=%g a=%g b=%g: %.17g, scipy %.17g", p, a, b, got,
                      ref);
    }
    free(v);
    ck_assert(sensim_beta_quantile(0, 2, 3) == 0);
    ck_assert(sensim_beta_quantile(1, 2, 3) == 1);
    ck_assert(isnan(sensim_beta_quantile(0.5, -1, 3)));
}
END_TEST

START_TEST(allan_ci_large_edf)
{
    /* SP 1065 eq. 45 at edf from 5e4 to 1e7 (a 2-hour IMU log's short
     * taus) and levels 68.3, 90, 95, 99 %: finite, ordered, and equal to
     * dev sqrt(edf / chi2) with scipy's quantiles. */
    size_t n;
    double *v = python_numbers("from scipy.stats import chi2\n"
                               "for e in [5e4, 1.3e5, 4e5, 1e6, 2e6, 1e7]:\n"
                               "    for c in [0.682689492137086, 0.9, 0.95, 0.99]:\n"
                               "        q = (1 - c) / 2\n"
                               "        print('%.17g %.17g %.17g %.17g' % (e, c, (e / chi2.ppf(1 - q, e)) ** 0.5,\n"
                               "              (e / chi2.ppf(q, e)) ** 0.5))\n",
                               &n);
    ck_assert_uint_eq(n, 4 * 24);
    for (size_t i = 0; i < n; i += 4) {
        double lo, hi;
        sensim_allan_ci(2.0, v[i], v[i + 1], &lo, &hi);
        ck_assert_msg(isfinite(lo) && isfinite(hi) && lo < 2 && hi > 2, "edf %g level %g: [%g, %g]", v[i], v[i + 1],
                      lo, hi);
        ck_assert_msg(fabs(lo / (2 * v[i + 2]) - 1) < 1e-12 && fabs(hi / (2 * v[i + 3]) - 1) < 1e-12,
                      "edf %g level %g: [%.17g, %.17g], scipy [%.17g, %.17g]", v[i], v[i + 1], lo, hi, 2 * v[i + 2],
                      2 * v[i + 3]);
    }
    free(v);
}
END_TEST

START_TEST(gnss_outlier_rate_interval)
{
    /* 9000 epochs of white position noise (1 m) with k single-epoch jumps of
     * 200 m planted far apart: the filter finds exactly k, and the
     * Clopper-Pearson interval at 95 % is scipy's. */
    const size_t n = 9000;
    const int ks[3] = {6, 19, 20};
    double *t = malloc(n * sizeof *t), *enu = malloc(3 * n * sizeof *enu);
    size_t nref;
    double *ref = python_numbers("from scipy.stats import beta\n"
                                 "for k in [6, 19, 20]:\n"
                                 "    print('%.17g %.17g' % (beta.ppf(0.025, k, 9000 - k + 1),\n"
                                 "                           beta.ppf(0.975, k + 1, 9000 - k)))\n",
                                 &nref);
    ck_assert_uint_eq(nref, 6);
    for (int c = 0; c < 3; c++) {
        sensim_rng r = sensim_rng_make(77, 3, (uint32_t)c);
        sensim_rng_normal_fill(&r, 0, 3 * n, enu);
        for (size_t i = 0; i < n; i++)
            t[i] = (double)i;
        for (int j = 0; j < ks[c]; j++)
            enu[3 * (100 + (size_t)j * 400)] += 200;
        sensim_gnss_outlier_fit f;
        ck_assert_int_eq(sensim_gnss_find_outliers(t, enu, n, 0, 0.95, NULL, &f), SENSIM_OK);
        ck_assert_uint_eq(f.rejected, (size_t)ks[c]);
        ck_assert_msg(fabs(f.rate.lo / ref[2 * c] - 1) < 1e-9 && fabs(f.rate.hi / ref[2 * c + 1] - 1) < 1e-9,
                      "k = %d: [%.17g, %.17g], scipy [%.17g, %.17g]", ks[c], f.rate.lo, f.rate.hi, ref[2 * c],
                      ref[2 * c + 1]);
    }
    free(ref);
    free(t);
    free(enu);
}
END_TEST

START_TEST(cli_large_edf_and_unresolved_json)
{
    /* 1.5 million white rate samples (a 4-hour log at 100 Hz): edf near
     * 1.2e6 at m = 1, where GSL 2.7's inverse returns NaN at the 95 and
     * 99 % levels and the --json output held "hi": nan. At each level the
     * output is strict JSON (tu_run checks) and every bound is a finite
     * number around the deviation. */
    char *dir = tu_mkdtemp(), *csv = tu_path(dir, "white.csv");
    const size_t n = 1500000;
    double *y = malloc(n * sizeof *y);
    sensim_rng r = sensim_rng_make(5, 0, 0);
    sensim_rng_normal_fill(&r, 0, n, y);
    FILE *f = fopen(csv, "w");
    ck_assert_ptr_nonnull(f);
    for (size_t i = 0; i < n; i++)
        fprintf(f, "%.6g\n", y[i]);
    fclose(f);
    free(y);
    static const char *const levels[] = {"0.683", "0.9", "0.95", "0.99"};
    for (int l = 0; l < 4; l++) {
        tu_run_result o = tu_run("allan", "-i", csv, "-r", "100", "--taus", "octave", "--confidence", levels[l],
                                 "--json", NULL);
        ck_assert_msg(o.status == 0, "%s", o.err);
        ck_assert_msg(!strstr(o.out, "inf") && !strstr(o.out, "nan") && !strstr(o.out, "\"lo\": null") &&
                          !strstr(o.out, "\"hi\": null"),
                      "%s", o.out);
        const char *q = strstr(o.out, "\"m\": 1,");
        ck_assert_ptr_nonnull(q);
        double dev = strtod(strstr(q, "\"dev\": ") + 7, NULL), lo = strtod(strstr(q, "\"lo\": ") + 6, NULL),
               hi = strtod(strstr(q, "\"hi\": ") + 6, NULL), edf = strtod(strstr(q, "\"edf\": ") + 7, NULL);
        ck_assert_msg(edf > 1e6 && lo < dev && dev < hi && hi < 1.01 * dev, "level %s: edf %g [%g, %g, %g]",
                      levels[l], edf, lo, dev, hi);
        tu_run_free(&o);
    }
    /* fit gnss on 9000 epochs (900 s at 10 Hz) of the standalone preset,
     * whose outliers are rare (0.1 %): the outlier-rate interval is a number
     * in the JSON and in the YAML comment, never nan. */
    char *gt = tu_path(dir, "gt.h5"), *log = tu_path(dir, "sa.h5"), *yaml = tu_path(dir, "fit.yaml");
    char *rig = tu_src("data/gnss-standalone.yaml");
    tu_run_result o = tu_run("trajectory", "--shape", "static", "--duration", "900", "--rate", "10", "-o", gt, NULL);
    ck_assert_msg(o.status == 0, "%s", o.err);
    tu_run_free(&o);
    o = tu_run("inject", rig, gt, "-o", log, "-j", "1", "--seed", "3", NULL);
    ck_assert_msg(o.status == 0, "%s", o.err);
    tu_run_free(&o);
    o = tu_run("fit", "gnss", log, "--sensor", "gps", "-o", yaml, "--json", NULL);
    ck_assert_msg(o.status == 0, "%s", o.err);
    const char *rate = strstr(strstr(o.out, "\"outliers\": {"), "\"rate\": {");
    ck_assert_ptr_nonnull(rate);
    double hi = strtod(strstr(rate, "\"hi\": ") + 6, NULL);
    ck_assert_msg(hi > 0 && hi < 0.01, "%s", rate);
    tu_run_free(&o);
    char *text = tu_read_file(yaml, NULL);
    ck_assert_ptr_nonnull(text);
    ck_assert_msg(!strstr(text, "nan") && !strstr(text, "inf]"), "%s", text);
    free(text);
    tu_rmtree(dir);
    free(rig);
    free(gt);
    free(log);
    free(yaml);
    free(csv);
    free(dir);
}
END_TEST

Suite *suite_quantile(void)
{
    Suite *s = suite_create("quantile");
    TCase *tc = tcase_create("core");
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, chisq_against_scipy);
    tcase_add_test(tc, beta_against_scipy);
    tcase_add_test(tc, allan_ci_large_edf);
    tcase_add_test(tc, gnss_outlier_rate_interval);
    suite_add_tcase(s, tc);
    TCase *tcc = tcase_create("cli");
    tcase_set_timeout(tcc, 300);
    tcase_add_test(tcc, cli_large_edf_and_unresolved_json);
    suite_add_tcase(s, tcc);
    return s;
}
