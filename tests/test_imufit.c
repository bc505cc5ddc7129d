/* IMU noise fit: exact recovery from model curves, round trips from
 * simulated static signals with coverage of the confidence intervals over
 * seeds, the Gauss-Markov fit, short data, and the classic read-offs. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sensim/allan.h"
#include "sensim/imu.h"
#include "sensim/imufit.h"
#include "sensim/log.h"
#include "sensim/rig.h"
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

/* Largest count k with P(X < k) <= 0.01 for X ~ Bin(n, p): a replicate
 * count below k rejects "the coverage is at least p" at the 1 % level. */
static int binom_floor(int n, double p)
{
    double cdf = 0;
    for (int k = 0; k <= n; k++) {
        double pk = exp(lgamma(n + 1.0) - lgamma(k + 1.0) - lgamma(n - k + 1.0) + k * log(p) + (n - k) * log1p(-p));
        if (cdf + pk > 0.01)
            return k;
        cdf += pk;
    }
    return n;
}

/* Coverage of the 95 % intervals of N, B, K, R (issue 13 item 4). Per seed
 * 2e5 samples at 100 Hz (2000 s), N = 1e-4 rad/s/sqrt(Hz), B = B0 (a sum of
 * Gauss-Markov processes, flicker from 0.1 s up), K = 5e-6 rad/s^2/sqrt(Hz)
 * and a rate ramp R = 1e-7 rad/s^2. Counts: truth inside [lo, hi]
 * (two-sided, nominal 0.95) and truth <= hi (one-sided, nominal 0.975).
 * The seeds are fixed, so the counts are too. */
static void coverage_run(int seeds, double B0, int two[4], int up[4])
{
    const size_t n = 200000;
    const double f = 100, N = 1e-4, K = 5e-6, R = 1e-7, truth[4] = {N, B0, K, R};
    const int term[4] = {SENSIM_TERM_N, SENSIM_TERM_B, SENSIM_TERM_K, SENSIM_TERM_R};
    double *y = malloc(n * sizeof *y), *tmp = malloc(n * sizeof *tmp);
    for (int k = 0; k < 4; k++)
        two[k] = up[k] = 0;
    for (int s = 0; s < seeds; s++) {
        simulate(100 + (uint64_t)s, n, f, N, B0, K, 0, 0, y, tmp);
        for (size_t i = 0; i < n; i++)
            y[i] += R * (double)i / f;
        sensim_allan_point *pt;
        size_t np = oadev_octave(y, n, f, &pt);
        sensim_imu_fit fit;
        ck_assert_int_eq(sensim_imu_fit_allan(pt, np, NULL, &fit), SENSIM_OK);
        for (int k = 0; k < 4; k++) {
            two[k] += covers(&fit.term[term[k]], truth[k]);
            up[k] += truth[k] <= fit.term[term[k]].hi;
        }
        for (int k = 0; k < SENSIM_TERM_COUNT; k++)
            ck_assert(isfinite(fit.term[k].value) && isfinite(fit.term[k].lo) && isfinite(fit.term[k].hi));
        free(pt);
    }
    free(y);
    free(tmp);
}

START_TEST(roundtrip_coverage)
{
    /* make check runs 20 seeds and asks for counts a true coverage of 0.95
     * (two-sided, 16 of 20) and 0.975 (upper bound, 17) reaches with
     * probability 0.99;
     * SENSIM_COVERAGE_SEEDS=100 runs the 100 and asks for its
     * figures, two-sided >= 90 % and upper bounds >= 95 %. Before the fix
     * N held the truth in 89 of these 100 (its estimate 1.4 standard errors
     * low) and K's upper bound in 77. */
    const char *env = getenv("SENSIM_COVERAGE_SEEDS");
    int seeds = env ? atoi(env) : 20;
    if (seeds < 10)
        seeds = 10;
    int two[4], up[4];
    coverage_run(seeds, 5e-5, two, up);
    int need2 = binom_floor(seeds, 0.95), needu = binom_floor(seeds, 0.975);
    if (seeds >= 100) {
        need2 = (int)ceil(0.90 * seeds);
        needu = (int)ceil(0.95 * seeds);
    }
    const char *sym = "NBKR";
    for (int k = 0; k < 4; k++) {
        ck_assert_msg(two[k] >= need2, "%c: two-sided coverage %d of %d (need %d)", sym[k], two[k], seeds, need2);
        ck_assert_msg(up[k] >= needu, "%c: upper bound holds in %d of %d (need %d)", sym[k], up[k], seeds, needu);
    }
}
END_TEST

START_TEST(coverage_band_limited_flicker)
{
    /* A flicker floor three times higher (B = 1.5e-4 rad/s) that, as any
     * sum of Gauss-Markov processes, stops at its shortest correlation time
     * (0.1 s): the flat (2 ln 2 / pi) B^2 of the model then overstates the
     * short taus where N is fitted. Before the fit profiled the cutoff of
     * the IEEE 952 bias-instability term, N came out 1.9 % low with
     * intervals of +-0.9 % and covered the truth in 0 of 10 seeds; a
     * coverage of 0.95 gives at least binom_floor(10, 0.95) = 7 with
     * probability 0.99. */
    int two[4], up[4];
    coverage_run(10, 1.5e-4, two, up);
    int need = binom_floor(10, 0.95);
    ck_assert_int_eq(need, 7);
    ck_assert_msg(two[0] >= need, "N covered in %d of 10", two[0]);
    ck_assert_msg(up[0] >= need, "N upper bound in %d of 10", up[0]);
}
END_TEST

START_TEST(quantization_roundtrip)
{
    /* fit -> simulate -> fit for quantization (issue 13 item 3): the rig
     * written by `fit imu` gives the model a rate step q = sqrt(12) Q f;
     * the model (sensim_triax, what inject runs) must then show the IEEE
     * 952 angle-quantization curve 3 Q^2 / tau^2 again. Q = 2e-5 rad with
     * N = 1e-4 rad/s/sqrt(Hz) at 100 Hz, 2e5 samples, 10 seeds: the 95 %
     * interval of Q must hold 2e-5 in at least 8 (P(X <= 7) = 0.012 for
     * Bin(10, 0.95)) and N's must too (rounding each sample on its own
     * instead gave Q near 0 and N 1.85e-4). */
    const size_t n = 200000, seeds = 10;
    const double f = 100, Q = 2e-5, N = 1e-4;
    sensim_triax_params p = sensim_triax_default_params();
    p.noise_density[0] = N;
    p.quantization[0] = sqrt(12.0) * Q * f;
    double *t = malloc(n * sizeof *t), *u = calloc(3 * n, sizeof *u), *y = malloc(n * sizeof *y);
    for (size_t k = 0; k < n; k++)
        t[k] = (double)k / f;
    int cq = 0, cn = 0;
    char seen[512] = "";
    for (size_t s = 0; s < seeds; s++) {
        sensim_triax *m = sensim_triax_create(&p, SENSIM_GYRO, f, 40 + s, 3, "q");
        ck_assert_msg(m != NULL, "%s", sensim_last_error());
        sensim_triax_state st;
        sensim_triax_reset(m, &st);
        memset(u, 0, 3 * n * sizeof *u);
        sensim_triax_apply(m, &st, n, t, u, NULL, u);
        sensim_triax_destroy(m);
        for (size_t k = 0; k < n; k++)
            y[k] = u[3 * k];
        sensim_allan_point *pt;
        size_t np = oadev_octave(y, n, f, &pt);
        sensim_imu_fit fit;
        ck_assert_int_eq(sensim_imu_fit_allan(pt, np, NULL, &fit), SENSIM_OK);
        cq += covers(&fit.term[SENSIM_TERM_Q], Q);
        cn += covers(&fit.term[SENSIM_TERM_N], N);
        size_t len = strlen(seen);
        snprintf(seen + len, sizeof seen - len, " Q %.3g N %.3g;", fit.term[SENSIM_TERM_Q].value,
                 fit.term[SENSIM_TERM_N].value);
        free(pt);
    }
    ck_assert_msg(cq >= 8 && cn >= 8, "coverage of 10: Q %d, N %d;%s", cq, cn, seen);
    free(t);
    free(u);
    free(y);
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

/* ---- the fit verb ---- */

/* A static IMU log: gyro with N = 1e-4, B = 5e-5, K = 5e-6 on every axis
 * (seeds differ per axis), accel with N = 2e-3, K = 3e-4; 100 Hz. */
static char *make_static_log(const char *dir, size_t n, int with_t_rate)
{
    char *path = tu_path(dir, "static.h5");
    double *g = malloc(3 * n * sizeof *g), *a = malloc(3 * n * sizeof *a), *y = malloc(n * sizeof *y),
           *tmp = malloc(n * sizeof *tmp), *t = malloc(n * sizeof *t);
    for (int ax = 0; ax < 3; ax++) {
        simulate(700 + ax, n, 100, 1e-4, 5e-5, 5e-6, 0, 0, y, tmp);
        for (size_t i = 0; i < n; i++)
            g[3 * i + ax] = y[i];
        simulate(800 + ax, n, 100, 2e-3, 0, 3e-4, 0, 0, y, tmp);
        for (size_t i = 0; i < n; i++)
            a[3 * i + ax] = y[i] + (ax == 2 ? 9.80665 : 0);
    }
    for (size_t i = 0; i < n; i++)
        t[i] = i / (double)with_t_rate;
    sensim_log *log = sensim_log_create(path, "test_imufit");
    ck_assert_ptr_nonnull(log);
    const size_t tail[1] = {3};
    double rate = 100;
    ck_assert_int_eq(sensim_log_write(log, "/sensors/imu/t", SENSIM_F64, n, 0, NULL, t, "s"), 0);
    ck_assert_int_eq(sensim_log_write(log, "/sensors/imu/angular_velocity", SENSIM_F64, n, 1, tail, g, "rad/s"), 0);
    ck_assert_int_eq(sensim_log_write(log, "/sensors/imu/specific_force", SENSIM_F64, n, 1, tail, a, "m/s^2"), 0);
    ck_assert_int_eq(sensim_log_set_attr_f64(log, "/sensors/imu", "rate_hz", &rate, 1), 0);
    ck_assert_int_eq(sensim_log_set_attr_string(log, "/sensors/imu", "type", "imu"), 0);
    ck_assert_int_eq(sensim_log_commit(log), 0);
    free(g);
    free(a);
    free(y);
    free(tmp);
    free(t);
    return path;
}

static double json_value(const char *json, const char *instr, int axis, const char *key)
{
    const char *p = strstr(json, instr);
    ck_assert_ptr_nonnull(p);
    for (int i = 0; i <= axis; i++) {
        p = strstr(p + 1, "{\"axis\"");
        ck_assert_ptr_nonnull(p);
    }
    char pat[64];
    snprintf(pat, sizeof pat, "\"%s\": {\"value\": ", key);
    p = strstr(p, pat);
    ck_assert_ptr_nonnull(p);
    return strtod(p + strlen(pat), NULL);
}

START_TEST(cli_fit_imu)
{
    char *dir = tu_mkdtemp(), *h5 = make_static_log(dir, 200000, 100);
    char *yaml = tu_path(dir, "fitted.yaml"), *kal = tu_path(dir, "imu.yaml"), *svg = tu_path(dir, "adev.svg");
    tu_run_result r = tu_run("fit", "imu", h5, "--sensor", "imu", "-o", yaml, "--kalibr", kal, "--plot", svg,
                             "--json", NULL);
    ck_assert_msg(r.status == 0, "%s", r.err);
    /* 95% intervals; loose checks here (the coverage is tested above). */
    for (int ax = 0; ax < 3; ax++) {
        ck_assert_within(json_value(r.out, "\"gyro\"", ax, "noise_density"), 1e-4, 0.1e-4);
        ck_assert_within(json_value(r.out, "\"gyro\"", ax, "bias_instability"), 5e-5, 2e-5);
        ck_assert_within(json_value(r.out, "\"accel\"", ax, "noise_density"), 2e-3, 0.2e-3);
    }
    tu_run_free(&r);
    char *ytext = tu_read_file(yaml, NULL), *ktext = tu_read_file(kal, NULL);
    ck_assert_ptr_nonnull(ytext);
    ck_assert_ptr_nonnull(ktext);
    /* Identified terms only (a zero is left out): these the hour shows. */
    const char *keys[] = {"type: imu", "rate_hz: 100", "\n  gyro:", "\n  accel:", "noise_density: [",
                          "bias_instability: ["};
    for (size_t i = 0; i < sizeof keys / sizeof keys[0]; i++)
        ck_assert_msg(strstr(ytext, keys[i]), "YAML lacks '%s'", keys[i]);
    const char *kk[] = {"gyroscope_noise_density: ", "gyroscope_random_walk: ", "accelerometer_noise_density: ",
                        "accelerometer_random_walk: ", "update_rate: 100"};
    for (size_t i = 0; i < sizeof kk / sizeof kk[0]; i++)
        ck_assert_msg(strstr(ktext, kk[i]), "kalibr yaml lacks '%s'", kk[i]);
    /* The rig YAML is one sensim itself accepts. */
    sensim_rig *rig = sensim_rig_load(yaml);
    ck_assert_msg(rig != NULL, "%s", sensim_last_error());
    sensim_rig_free(rig);
    double gnd = strtod(strstr(ktext, "\ngyroscope_noise_density: ") + strlen(kk[0]) + 1, NULL);
    ck_assert_within(gnd, 1e-4, 0.1e-4);
    free(ytext);
    free(ktext);
    char *g = tu_path(dir, "adev-gyro.svg"), *a = tu_path(dir, "adev-accel.svg");
    ck_assert(tu_file_exists(g) && tu_file_exists(a));
    char *svgtext = tu_read_file(g, NULL);
    ck_assert_ptr_nonnull(strstr(svgtext, "x N = "));
    free(svgtext);
    free(g);
    free(a);
    /* Gauss-Markov form. */
    r = tu_run("fit", "imu", h5, "--sensor", "imu", "-o", yaml, "--gauss-markov", NULL);
    ck_assert_msg(r.status == 0, "%s", r.err);
    ytext = tu_read_file(yaml, NULL);
    ck_assert_ptr_nonnull(strstr(ytext, "gauss_markov:"));
    rig = sensim_rig_load(yaml);
    ck_assert_msg(rig != NULL, "%s", sensim_last_error());
    sensim_rig_free(rig);
    free(ytext);
    tu_run_free(&r);
    /* The allan verb on the same log, 3 axes. */
    r = tu_run("allan", "-i", h5, "--sensor", "imu", "--quantity", "specific_force", "--csv", NULL);
    ck_assert_msg(r.status == 0, "%s", r.err);
    ck_assert_ptr_nonnull(strstr(r.out, "axis,tau,dev,lo,hi,n\nx,0.01,"));
    ck_assert_ptr_nonnull(strstr(r.out, "\nz,0.01,"));
    tu_run_free(&r);
    tu_rmtree(dir);
    free(h5);
    free(yaml);
    free(kal);
    free(svg);
    free(dir);
}
END_TEST

START_TEST(cli_kalibr_unidentified)
{
    /* A 10-minute log (6e4 samples at 100 Hz): the gyro's rate random walk
     * K = 5e-6 is not identified on every axis. The rig YAML writes 0 for
     * such a term; the kalibr file must not write the point estimate as if
     * it were known: each such axis contributes its upper bound, and a
     * comment says which. --rostopic sets the topic. */
    char *dir = tu_mkdtemp(), *h5 = make_static_log(dir, 60000, 100);
    char *yaml = tu_path(dir, "fitted.yaml"), *kal = tu_path(dir, "imu.yaml");
    tu_run_result r = tu_run("fit", "imu", h5, "--sensor", "imu", "-o", yaml, "--kalibr", kal, "--rostopic",
                             "/vehicle/imu", "--json", NULL);
    ck_assert_msg(r.status == 0, "%s", r.err);
    char *ktext = tu_read_file(kal, NULL);
    ck_assert_ptr_nonnull(ktext);
    ck_assert_ptr_nonnull(strstr(ktext, "rostopic: /vehicle/imu\n"));
    static const char *const instr[2] = {"\"gyro\"", "\"accel\""};
    static const char *const keys[2][2] = {{"gyroscope_noise_density: ", "gyroscope_random_walk: "},
                                           {"accelerometer_noise_density: ", "accelerometer_random_walk: "}};
    static const char *const terms[2] = {"noise_density", "random_walk"};
    int unidentified = 0;
    for (int i = 0; i < 2; i++)
        for (int k = 0; k < 2; k++) {
            double want = 0;
            int flagged = 0;
            for (int ax = 0; ax < 3; ax++) {
                const char *p = strstr(r.out, instr[i]);
                for (int j = 0; j <= ax; j++)
                    p = strstr(p + 1, "{\"axis\"");
                char pat[64];
                snprintf(pat, sizeof pat, "\"%s\": {\"value\": ", terms[k]);
                p = strstr(p, pat);
                ck_assert_ptr_nonnull(p);
                double value = strtod(p + strlen(pat), NULL), hi = strtod(strstr(p, "\"hi\": ") + 6, NULL);
                int ok = strncmp(strstr(p, "\"status\": ") + 10, "\"ok\"", 4) == 0;
                want += (ok ? value : hi) / 3;
                flagged |= !ok;
            }
            unidentified += flagged;
            /* The value is a key of the document; the comment above it
             * names the key and, when an axis was not identified, says so. */
            char pat[96];
            snprintf(pat, sizeof pat, "\n%s", keys[i][k]);
            const char *line = strstr(ktext, pat);
            ck_assert_ptr_nonnull(line);
            double got = strtod(line + strlen(pat), NULL);
            ck_assert_msg(fabs(got - want) <= 1e-5 * want, "%s%.6g, expected %.6g", keys[i][k], got, want);
            snprintf(pat, sizeof pat, "#   %s", keys[i][k]);
            const char *cm = strstr(ktext, pat);
            ck_assert_ptr_nonnull(cm);
            const char *eol = strchr(cm, '\n'), *note = strstr(cm, "not identified on axis");
            ck_assert_msg(flagged == (note && note < eol), "%s: flag %d but the comment is '%.*s'", keys[i][k],
                          flagged, (int)(eol - cm), cm);
        }
    ck_assert_msg(unidentified >= 1, "the 10-minute log should leave a term unidentified:\n%s", ktext);
    tu_run_free(&r);
    r = tu_run("fit", "imu", h5, "--sensor", "imu", "-o", yaml, "--kalibr", kal, "--rostopic", "a b", NULL);
    ck_assert_int_eq(r.status, 2);
    ck_assert_ptr_nonnull(strstr(r.err, "--rostopic"));
    tu_run_free(&r);
    free(ktext);
    tu_rmtree(dir);
    free(h5);
    free(yaml);
    free(kal);
    free(dir);
}
END_TEST

START_TEST(cli_fit_bad_input)
{
    char *dir = tu_mkdtemp(), *h5 = make_static_log(dir, 2000, 100), *yaml = tu_path(dir, "fitted.yaml");
    ck_assert_int_eq(tu_write_file(yaml, "old"), 0);
    tu_run_result r = tu_run("fit", "imu", h5, "--sensor", "gps", "-o", yaml, NULL);
    ck_assert_int_eq(r.status, 1);
    ck_assert_msg(strstr(r.err, "static.h5") && strstr(r.err, "'gps'") && strstr(r.err, "imu"), "%s", r.err);
    tu_run_free(&r);
    r = tu_run("fit", "imu", h5, "--sensor", "imu", "--rate", "200", "-o", yaml, NULL);
    ck_assert_int_eq(r.status, 1);
    ck_assert_msg(strstr(r.err, "--rate 200") && strstr(r.err, "/sensors/imu/t"), "%s", r.err);
    tu_run_free(&r);
    r = tu_run("allan", "-i", h5, "--sensor", "imu", "--rate", "50", NULL);
    ck_assert_int_eq(r.status, 1);
    ck_assert_msg(strstr(r.err, "does not match"), "%s", r.err);
    tu_run_free(&r);
    char *old = tu_read_file(yaml, NULL);
    ck_assert_str_eq(old, "old");
    free(old);
    r = tu_run("fit", "gnss2", h5, NULL);
    ck_assert_int_eq(r.status, 2);
    ck_assert_msg(strstr(r.err, "unknown kind 'gnss2'"), "%s", r.err);
    tu_run_free(&r);
    r = tu_run("fit", "lidar", h5, NULL);
    ck_assert_int_eq(r.status, 2);
    ck_assert_msg(strstr(r.err, "missing -o"), "%s", r.err);
    tu_run_free(&r);
    r = tu_run("fit", "imu", h5, NULL);
    ck_assert_int_eq(r.status, 2);
    ck_assert_msg(strstr(r.err, "--sensor"), "%s", r.err);
    tu_run_free(&r);
    r = tu_run("fit", "imu", "/nonexistent.h5", "--sensor", "imu", NULL);
    ck_assert_int_eq(r.status, 1);
    ck_assert_msg(strstr(r.err, "/nonexistent.h5"), "%s", r.err);
    tu_run_free(&r);
    tu_rmtree(dir);
    free(h5);
    free(yaml);
    free(dir);
}
END_TEST

Suite *suite_imufit(void)
{
    Suite *s = suite_create("imufit");
    TCase *tc = tcase_create("fit");
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, exact_curve_recovered);
    tcase_add_test(tc, roundtrip_coverage);
    tcase_add_test(tc, coverage_band_limited_flicker);
    tcase_add_test(tc, gauss_markov_coverage);
    tcase_add_test(tc, quantization_roundtrip);
    tcase_add_test(tc, short_data_says_what_is_missing);
    tcase_add_test(tc, gm_avar_limits);
    suite_add_tcase(s, tc);
    TCase *tcc = tcase_create("cli");
    tcase_set_timeout(tcc, 120);
    tcase_add_test(tcc, cli_fit_imu);
    tcase_add_test(tcc, cli_fit_bad_input);
    tcase_add_test(tcc, cli_kalibr_unidentified);
    suite_add_tcase(s, tcc);
    return s;
}
