/* GNSS noise fit (sensim/gnssfit.h, `sensim fit gnss`): round trips from
 * static logs simulated with the library's own GNSS model (Chrono Ch:Gauss,
 * Ch:RW with seed 004's parameters, Gauss-Markov, AirSim's HDOP low-pass),
 * coverage of the reported intervals over seeds, fixed-seed
 * reproducibility, and bad input through the library and the CLI.
 *
 * Coverage tolerance: each interval is a nominal 95% one; over 20 seeds at
 * least 15 must contain the true value. At true coverage 0.95 the chance of
 * 14 or fewer is 3e-4, so a failure means the estimator or its interval is
 * wrong, not bad luck (and the seeds are fixed, so the outcome is too). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sensim/geodesy.h"
#include "sensim/gnss.h"
#include "sensim/gnssfit.h"
#include "sensim/log.h"
#include "sensim/rig.h"
#include "sensim/rng.h"
#include "testutil.h"

enum { NSEED = 20, MIN_COVER = 15 };

static int covers(const sensim_fit_param *p, double truth)
{
    return p->lo <= truth && truth <= p->hi;
}

/* n epochs of a static antenna at the ENU origin through the GNSS model;
 * jitter adds a deterministic uneven spacing of up to 20 ms. */
static void simulate(const sensim_gnss_params *p, uint64_t seed, size_t n, double rate, int jitter, double *t,
                     double *enu, double *hdop)
{
    sensim_gnss *g = sensim_gnss_create(p, seed, 0);
    ck_assert_msg(g != NULL, "%s", sensim_last_error());
    double *pos = calloc(3 * n, sizeof *pos);
    ck_assert_ptr_nonnull(pos);
    for (size_t i = 0; i < n; i++)
        t[i] = (double)i / rate + (jitter ? 0.01 * (double)(i % 3) : 0.0);
    sensim_gnss_state st;
    sensim_gnss_reset(g, &st, 0.0);
    sensim_gnss_out o;
    memset(&o, 0, sizeof o);
    o.enu = enu;
    o.hdop = hdop;
    ck_assert_uint_eq(sensim_gnss_apply(g, &st, n, t, pos, NULL, &o), n);
    free(pos);
    sensim_gnss_destroy(g);
}

static sensim_gnss_params seed004_rw(void)
{
    sensim_gnss_params p = sensim_gnss_default_params();
    p.rw_on = 1;
    p.rw_sigma = 0.047; /* seed 004, appendix IV-A */
    p.rw_model_rate_hz = 100;
    p.rw_max_velocity = 0.016;
    p.rw_max_acceleration = 0.152;
    p.rw_max_error = 1.0;
    return p;
}

START_TEST(rw_factor_closed_form)
{
    /* Var(d2)/sigma^2 = (2 m^2 + 1) / (3 m^3) for m whole inner steps. */
    for (int m = 1; m <= 20; m += 3) {
        double f = sensim_gnss_rw_d2_factor(0.1, 10.0 * m);
        ck_assert_within(f, (2.0 * m * m + 1) / (3.0 * m * m * m), 1e-12);
    }
    /* A model slower than the output: one step per epoch, as m = 1. */
    ck_assert_within(sensim_gnss_rw_d2_factor(0.1, 5.0), 1.0, 1e-12);
    /* Between whole numbers of steps the factor lies between its
     * neighbours' (the last, shorter step). */
    double f25 = sensim_gnss_rw_d2_factor(0.25, 10.0);
    ck_assert(f25 < sensim_gnss_rw_d2_factor(0.2, 10.0) && f25 > sensim_gnss_rw_d2_factor(0.3, 10.0));
}
END_TEST

START_TEST(rw_seed004_roundtrip)
{
    /* 400 s at 10 Hz of Chrono's Ch:RW with seed 004's parameters (the
     * velocity cap is active about 18% of the time). */
    const size_t n = 4000;
    double *t = malloc(n * sizeof *t), *enu = malloc(3 * n * sizeof *enu);
    sensim_gnss_params p = seed004_rw();
    int cover = 0;
    for (uint64_t s = 1; s <= NSEED; s++) {
        simulate(&p, s, n, 10.0, 0, t, enu, NULL);
        sensim_gnss_rw_fit f;
        ck_assert_msg(sensim_gnss_fit_rw(t, enu, n, 100.0, 0.95, &f) == SENSIM_OK, "%s", sensim_last_error());
        cover += covers(&f.sigma, p.rw_sigma);
        ck_assert_int_eq(f.sigma.flag, SENSIM_FIT_OK);
        ck_assert_within(f.factor, 201.0 / 3000.0, 1e-12);
        /* Seed 004's raw statistic is about sqrt(0.067) = 0.26 of sigma
         * (within 10%: the cap removes part of the variance). */
        ck_assert_within(f.d2_std / p.rw_sigma, sqrt(f.factor), 0.1 * sqrt(f.factor));
        ck_assert_within(f.max_velocity, p.rw_max_velocity, 0.05 * p.rw_max_velocity);
    }
    ck_assert_msg(cover >= MIN_COVER, "Ch:RW sigma covered in %d of %d seeds", cover, NSEED);
    free(t);
    free(enu);
}
END_TEST

START_TEST(rw_uncapped_roundtrip)
{
    /* Without caps, at model rate = output rate (m = 1) and 10x (m = 10). */
    const size_t n = 3000;
    double *t = malloc(n * sizeof *t), *enu = malloc(3 * n * sizeof *enu);
    sensim_gnss_params p = seed004_rw();
    p.rw_max_velocity = 1e9;
    p.rw_max_acceleration = 1e9;
    for (int k = 0; k < 2; k++) {
        p.rw_model_rate_hz = k ? 100 : 10;
        int cover = 0;
        for (uint64_t s = 1; s <= NSEED; s++) {
            simulate(&p, 100 + s, n, 10.0, 0, t, enu, NULL);
            sensim_gnss_rw_fit f;
            ck_assert(sensim_gnss_fit_rw(t, enu, n, p.rw_model_rate_hz, 0.95, &f) == SENSIM_OK);
            cover += covers(&f.sigma, p.rw_sigma);
        }
        ck_assert_msg(cover >= MIN_COVER, "model rate %g: sigma covered in %d of %d", p.rw_model_rate_hz, cover,
                      NSEED);
    }
    free(t);
    free(enu);
}
END_TEST

START_TEST(gm_roundtrip_uneven)
{
    /* Gauss-Markov sigma 2 m, tau 30 s, 400 s at ~10 Hz with uneven dt
     * (13 correlation times). Exact AR(1) likelihood. */
    const size_t n = 4000;
    double *t = malloc(n * sizeof *t), *enu = malloc(3 * n * sizeof *enu);
    sensim_gnss_params p = sensim_gnss_default_params();
    p.gm_on = 1;
    for (int a = 0; a < 3; a++)
        p.gm_sigma[a] = 2.0, p.gm_tau[a] = 30.0;
    int cs = 0, ct = 0, ok = 0;
    for (uint64_t s = 1; s <= NSEED; s++) {
        simulate(&p, s, n, 10.0, 1, t, enu, NULL);
        sensim_gnss_gm_fit f;
        ck_assert_msg(sensim_gnss_fit_gm(t, enu + (s % 3), n, 3, 0.95, &f) == SENSIM_OK, "%s", sensim_last_error());
        ck_assert(!f.white);
        ok += f.tau.flag == SENSIM_FIT_OK;
        ck_assert(f.sigma.lo < f.sigma.value && f.sigma.value < f.sigma.hi);
        cs += covers(&f.sigma, 2.0);
        ct += covers(&f.tau, 30.0);
    }
    ck_assert_msg(cs >= MIN_COVER && ct >= MIN_COVER, "GM sigma covered %d, tau %d of %d", cs, ct, NSEED);
    /* Identified (interval well inside the log's span) in most seeds. */
    ck_assert_msg(ok >= MIN_COVER, "tau identified in %d of %d", ok, NSEED);
    /* A log much shorter than tau cannot bound it: said, not NaN. */
    p.gm_tau[0] = p.gm_tau[1] = p.gm_tau[2] = 3000.0;
    simulate(&p, 7, 600, 10.0, 0, t, enu, NULL);
    sensim_gnss_gm_fit f;
    ck_assert(sensim_gnss_fit_gm(t, enu, 600, 3, 0.95, &f) == SENSIM_OK);
    ck_assert_int_eq(f.tau.flag, SENSIM_FIT_UNRESOLVED);
    ck_assert(isfinite(f.tau.hi) && isfinite(f.sigma.hi));
    ck_assert_ptr_nonnull(strstr(f.note, "not identified"));
    free(t);
    free(enu);
}
END_TEST

START_TEST(gmw_outlier_roundtrip)
{
    /* Gauss-Markov (sigma 1 m, tau 20 s) plus 0.3 m white noise plus 10 m
     * outliers at 0.5% per epoch, 400 s at ~5 Hz with uneven dt (20
     * correlation times): outliers rejected first, then the Kalman-filter
     * likelihood. Each seed fits one axis (seed % 3). Coverage bound as at
     * the top; the outlier rate's Clopper-Pearson interval too (every 10 m
     * jump is ~20 robust standard deviations, so all are found). */
    const size_t n = 2000;
    double *t = malloc(n * sizeof *t), *enu = malloc(3 * n * sizeof *enu);
    unsigned char *out = malloc(n);
    sensim_gnss_params p = sensim_gnss_default_params();
    p.gm_on = p.gauss_on = 1;
    for (int a = 0; a < 3; a++)
        p.gm_sigma[a] = 1.0, p.gm_tau[a] = 20.0, p.gauss_sigma[a] = 0.3;
    p.outlier_probability = 0.005;
    p.outlier_magnitude = 10;
    int cg = 0, ct = 0, cw = 0, cr = 0, sig = 0;
    for (uint64_t s = 1; s <= NSEED; s++) {
        simulate(&p, 200 + s, n, 5.0, 1, t, enu, NULL);
        sensim_gnss_outlier_fit of;
        ck_assert_msg(sensim_gnss_find_outliers(t, enu, n, 0, 0.95, out, &of) == SENSIM_OK, "%s",
                      sensim_last_error());
        cr += covers(&of.rate, p.outlier_probability);
        if (of.rejected)
            ck_assert_within(of.magnitude, 10.0, 1.5); /* plus the noise of the neighbours' median */
        sensim_gnss_gmw_fit f;
        ck_assert_msg(sensim_gnss_fit_gmw(t, enu + (s % 3), n, 3, out, 0.95, &f) == SENSIM_OK, "%s",
                      sensim_last_error());
        ck_assert_uint_eq(f.n, n - of.rejected);
        sig += f.white_significant;
        cg += covers(&f.sigma_gm, 1.0);
        ct += covers(&f.tau, 20.0);
        cw += covers(&f.sigma_white, 0.3);
    }
    ck_assert_msg(cg >= MIN_COVER && ct >= MIN_COVER && cw >= MIN_COVER && cr >= MIN_COVER,
                  "covered: sigma_gm %d, tau %d, sigma_white %d, outlier rate %d of %d", cg, ct, cw, cr, NSEED);
    ck_assert_int_eq(sig, NSEED); /* lr ~ hundreds: never missed */
    free(t);
    free(enu);
    free(out);
}
END_TEST

START_TEST(gmw_pure_gm_and_white)
{
    /* Without white noise the likelihood ratio reads not significant in
     * most seeds (nominal 5% false alarm; bound as at the top), sigma_white
     * is an upper bound from 0 and tau lies in the AR(1) fit's interval. */
    const size_t n = 2000;
    double *t = malloc(n * sizeof *t), *enu = malloc(3 * n * sizeof *enu);
    sensim_gnss_params p = sensim_gnss_default_params();
    p.gm_on = 1;
    for (int a = 0; a < 3; a++)
        p.gm_sigma[a] = 1.0, p.gm_tau[a] = 10.0;
    int quiet = 0;
    for (uint64_t s = 1; s <= NSEED; s++) {
        simulate(&p, 300 + s, n, 5.0, 0, t, enu, NULL);
        sensim_gnss_gmw_fit f;
        sensim_gnss_gm_fit g;
        ck_assert(sensim_gnss_fit_gmw(t, enu, n, 3, NULL, 0.95, &f) == SENSIM_OK);
        ck_assert(sensim_gnss_fit_gm(t, enu, n, 3, 0.95, &g) == SENSIM_OK);
        ck_assert(f.loglik >= f.loglik_gm - 1e-9);
        if (!f.white_significant) {
            quiet++;
            ck_assert_int_eq(f.sigma_white.flag, SENSIM_FIT_UPPER);
            ck_assert(f.sigma_white.lo == 0 && f.sigma_white.hi >= f.sigma_white.value);
            ck_assert(covers(&g.tau, f.tau.value)); /* a small white part moves tau a little */
            ck_assert_ptr_nonnull(strstr(f.note, "not significant"));
        }
    }
    ck_assert_msg(quiet >= MIN_COVER, "white noise read as absent in %d of %d", quiet, NSEED);
    /* White noise alone: tau runs to the short end and sigma_white carries
     * the variance (the Gauss-Markov part is indistinguishable from it). */
    p.gm_on = 0;
    p.gauss_on = 1;
    p.gauss_sigma[0] = 0.5;
    simulate(&p, 9, n, 5.0, 0, t, enu, NULL);
    sensim_gnss_gmw_fit f;
    ck_assert(sensim_gnss_fit_gmw(t, enu, n, 3, NULL, 0.95, &f) == SENSIM_OK);
    double tot = sqrt(f.sigma_gm.value * f.sigma_gm.value + f.sigma_white.value * f.sigma_white.value);
    ck_assert_within(tot, 0.5, 0.05); /* 5 standard errors of a std over 2000 samples: 5 * 0.5 / sqrt(4000) */
    free(t);
    free(enu);
}
END_TEST

START_TEST(outliers_closed_form)
{
    /* No false alarms on white noise (threshold 6: chance per epoch
     * < 1e-7); planted jumps all found, with their size. */
    const size_t n = 3000;
    double *t = malloc(n * sizeof *t), *enu = malloc(3 * n * sizeof *enu);
    unsigned char *out = malloc(n);
    sensim_rng r = sensim_rng_make(17, 0, 0);
    sensim_rng_normal_fill(&r, 0, 3 * n, enu);
    for (size_t k = 0; k < n; k++)
        t[k] = 0.2 * (double)k;
    sensim_gnss_outlier_fit of;
    ck_assert(sensim_gnss_find_outliers(t, enu, n, 0, 0.95, out, &of) == SENSIM_OK);
    ck_assert_uint_eq(of.rejected, 0);
    ck_assert_int_eq(of.rate.flag, SENSIM_FIT_UPPER);
    /* Zero of n: the upper bound is 1 - (alpha/2)^(1/n). */
    ck_assert_within(of.rate.hi, 1 - pow(0.025, 1.0 / (double)n), 1e-9);
    /* Robust scale of white differences: sqrt(2), within 5 standard errors
     * of a MAD (about 1.1 sigma / sqrt(n)). */
    ck_assert_within(of.scale[1], sqrt(2.0), 5 * 1.1 * sqrt(2.0) / sqrt((double)n));
    const size_t at[] = {0, 1, 500, 501, 1700, n - 1};
    for (size_t i = 0; i < 6; i++)
        enu[3 * at[i] + i % 3] += (i % 2 ? -1 : 1) * 40.0;
    ck_assert(sensim_gnss_find_outliers(t, enu, n, 0, 0.95, out, &of) == SENSIM_OK);
    ck_assert_uint_eq(of.rejected, 6);
    for (size_t i = 0; i < 6; i++)
        ck_assert_int_eq(out[at[i]], 1);
    ck_assert_within(of.magnitude, 40, 3);
    ck_assert(covers(&of.rate, 6.0 / (double)n) && of.rate.lo > 0);
    /* An axis moving at constant velocity (its ends are off the
     * neighbours' median) flags nothing. */
    for (size_t k = 0; k < n; k++)
        enu[3 * k] = 0.5 * t[k], enu[3 * k + 1] = 0, enu[3 * k + 2] = 2.0;
    ck_assert(sensim_gnss_find_outliers(t, enu, n, 0, 0.95, out, &of) == SENSIM_OK);
    ck_assert_uint_eq(of.rejected, 0);
    ck_assert_int_eq(sensim_gnss_find_outliers(t, enu, 4, 0, 0.95, out, &of), SENSIM_EDATA);
    ck_assert_ptr_nonnull(strstr(sensim_last_error(), "too few"));
    enu[3 * 9 + 2] = NAN;
    ck_assert_int_eq(sensim_gnss_find_outliers(t, enu, n, 0, 0.95, out, &of), SENSIM_EDATA);
    ck_assert_msg(strstr(sensim_last_error(), "enu row 9 column 2"), "%s", sensim_last_error());
    free(t);
    free(enu);
    free(out);
}
END_TEST

START_TEST(gauss_white_roundtrip)
{
    /* Chrono Ch:Gauss, ZED-F9P-like sigmas: white on every axis, the white
     * sigma's chi-squared interval covers the truth. */
    const size_t n = 2000;
    const double sig[3] = {0.0085, 0.0085, 0.0148};
    double *t = malloc(n * sizeof *t), *enu = malloc(3 * n * sizeof *enu);
    sensim_gnss_params p = sensim_gnss_default_params();
    p.gauss_on = 1;
    memcpy(p.gauss_sigma, sig, sizeof sig);
    int cover = 0, white = 0;
    for (uint64_t s = 1; s <= NSEED; s++) {
        simulate(&p, s, n, 10.0, 0, t, enu, NULL);
        int a = (int)(s % 3);
        sensim_gnss_gm_fit f;
        ck_assert(sensim_gnss_fit_gm(t, enu + a, n, 3, 0.95, &f) == SENSIM_OK);
        cover += covers(&f.white_sigma, sig[a]);
        white += f.white;
        ck_assert(f.tau.value < 0.1); /* the AR(1) fit agrees: no correlation */
    }
    ck_assert_msg(cover >= MIN_COVER && white >= MIN_COVER, "white sigma covered %d, read as white %d of %d", cover,
                  white, NSEED);
    free(t);
    free(enu);
}
END_TEST

START_TEST(hdop_airsim_roundtrip)
{
    /* AirSim's low-pass as calibrated in seed 004 (100 -> 0.85, tau 12.4 s),
     * 120 s at 10 Hz. */
    const size_t n = 1200;
    double *t = malloc(n * sizeof *t), *enu = malloc(3 * n * sizeof *enu), *h = malloc(n * sizeof *h);
    double *hn = malloc(n * sizeof *hn), *z = malloc(n * sizeof *z);
    sensim_gnss_params p = sensim_gnss_default_params();
    p.hdop_on = 1;
    p.eph_initial = 100, p.eph_final = 0.85, p.eph_tau = 12.4;
    simulate(&p, 1, n, 10.0, 0, t, enu, h);
    sensim_gnss_hdop_fit f;
    /* The exact curve: recovered to 1e-6 relative. */
    ck_assert_msg(sensim_gnss_fit_hdop(t, h, n, 0.0, 0.95, &f) == SENSIM_OK, "%s", sensim_last_error());
    ck_assert_within(f.initial.value, 100, 1e-4);
    ck_assert_within(f.final.value, 0.85, 1e-6);
    ck_assert_within(f.tau.value, 12.4, 1e-5);
    /* NMEA gives HDOP to 0.01: the truth stays inside the intervals. */
    for (size_t k = 0; k < n; k++)
        hn[k] = round(h[k] * 100) / 100;
    ck_assert(sensim_gnss_fit_hdop(t, hn, n, 0.0, 0.95, &f) == SENSIM_OK);
    ck_assert(covers(&f.initial, 100) && covers(&f.final, 0.85) && covers(&f.tau, 12.4));
    ck_assert(f.rms > 0.001 && f.rms < 0.005); /* quantization: 0.01 / sqrt(12) */
    /* Gaussian noise of 0.2 on the HDOP: coverage over seeds. */
    int ci = 0, cf = 0, ct = 0;
    for (uint64_t s = 1; s <= NSEED; s++) {
        sensim_rng r = sensim_rng_make(s, 9, 0);
        sensim_rng_normal_fill(&r, 0, n, z);
        for (size_t k = 0; k < n; k++)
            hn[k] = h[k] + 0.2 * z[k];
        ck_assert(sensim_gnss_fit_hdop(t, hn, n, 0.0, 0.95, &f) == SENSIM_OK);
        ci += covers(&f.initial, 100);
        cf += covers(&f.final, 0.85);
        ct += covers(&f.tau, 12.4);
    }
    ck_assert_msg(ci >= MIN_COVER && cf >= MIN_COVER && ct >= MIN_COVER, "covered: initial %d final %d tau %d of %d",
                  ci, cf, ct, NSEED);
    free(t);
    free(enu);
    free(h);
    free(hn);
    free(z);
}
END_TEST

START_TEST(fixed_seed_reproducible)
{
    const size_t n = 1000;
    double *t = malloc(n * sizeof *t), *a = malloc(3 * n * sizeof *a), *b = malloc(3 * n * sizeof *b);
    sensim_gnss_params p = seed004_rw();
    p.gm_on = 1;
    for (int k = 0; k < 3; k++)
        p.gm_sigma[k] = 0.5, p.gm_tau[k] = 10;
    sensim_gnss_rw_fit r1, r2;
    sensim_gnss_gm_fit g1, g2;
    simulate(&p, 42, n, 10.0, 0, t, a, NULL);
    simulate(&p, 42, n, 10.0, 0, t, b, NULL);
    ck_assert(memcmp(a, b, 3 * n * sizeof *a) == 0);
    ck_assert(sensim_gnss_fit_rw(t, a, n, 100, 0.95, &r1) == SENSIM_OK);
    ck_assert(sensim_gnss_fit_rw(t, b, n, 100, 0.95, &r2) == SENSIM_OK);
    ck_assert(memcmp(&r1, &r2, sizeof r1) == 0);
    ck_assert(sensim_gnss_fit_gm(t, a, n, 3, 0.95, &g1) == SENSIM_OK);
    ck_assert(sensim_gnss_fit_gm(t, b, n, 3, 0.95, &g2) == SENSIM_OK);
    ck_assert(memcmp(&g1, &g2, sizeof g1) == 0);
    simulate(&p, 43, n, 10.0, 0, t, b, NULL);
    ck_assert(sensim_gnss_fit_gm(t, b, n, 3, 0.95, &g2) == SENSIM_OK);
    ck_assert(g1.sigma.value != g2.sigma.value);
    free(t);
    free(a);
    free(b);
}
END_TEST

START_TEST(library_bad_input)
{
    const size_t n = 400;
    double *t = malloc(n * sizeof *t), *x = malloc(3 * n * sizeof *x);
    for (size_t k = 0; k < n; k++) {
        t[k] = 0.1 * (double)k;
        for (int a = 0; a < 3; a++)
            x[3 * k + a] = sin(0.37 * (double)k + a) * cos(0.011 * (double)(k * k));
    }
    sensim_gnss_rw_fit r;
    sensim_gnss_gm_fit g;
    sensim_gnss_hdop_fit h;
    ck_assert_int_eq(sensim_gnss_fit_rw(t, x, SENSIM_GNSS_RW_MIN_EPOCHS - 1, 100, 0.95, &r), SENSIM_EDATA);
    ck_assert_ptr_nonnull(strstr(sensim_last_error(), "too few"));
    ck_assert_int_eq(sensim_gnss_fit_rw(t, x, SENSIM_GNSS_RW_MIN_EPOCHS, 100, 0.95, &r), SENSIM_OK);
    ck_assert_uint_eq(r.blocks, 10);
    ck_assert(isfinite(r.sigma.lo) && isfinite(r.sigma.hi));
    ck_assert_int_eq(sensim_gnss_fit_gm(t, x, 10, 3, 0.95, &g), SENSIM_EDATA);
    ck_assert_ptr_nonnull(strstr(sensim_last_error(), "too few"));
    ck_assert_int_eq(sensim_gnss_fit_hdop(t, x, 3, 0, 0.95, &h), SENSIM_EDATA);
    ck_assert_ptr_nonnull(strstr(sensim_last_error(), "too few"));
    x[3 * 7 + 1] = NAN;
    ck_assert_int_eq(sensim_gnss_fit_rw(t, x, n, 100, 0.95, &r), SENSIM_EDATA);
    ck_assert_msg(strstr(sensim_last_error(), "enu row 7 column 1"), "%s", sensim_last_error());
    ck_assert_int_eq(sensim_gnss_fit_gm(t, x + 1, n, 3, 0.95, &g), SENSIM_EDATA);
    ck_assert_msg(strstr(sensim_last_error(), "position[7]"), "%s", sensim_last_error());
    x[3 * 7 + 1] = 0;
    t[5] = t[4];
    ck_assert_int_eq(sensim_gnss_fit_gm(t, x, n, 3, 0.95, &g), SENSIM_EDATA);
    ck_assert_msg(strstr(sensim_last_error(), "t[5]") && strstr(sensim_last_error(), "strictly increasing"), "%s",
                  sensim_last_error());
    t[5] = 0.5;
    for (size_t k = 0; k < n; k++)
        x[3 * k] = 1.25;
    ck_assert_int_eq(sensim_gnss_fit_gm(t, x, n, 3, 0.95, &g), SENSIM_EDATA);
    ck_assert_ptr_nonnull(strstr(sensim_last_error(), "constant"));
    for (size_t k = 0; k < n; k++)
        x[k] = 1.25;
    ck_assert_int_eq(sensim_gnss_fit_hdop(t, x, n, 0, 0.95, &h), SENSIM_EDATA);
    ck_assert_ptr_nonnull(strstr(sensim_last_error(), "hdop is constant"));
    for (size_t k = 0; k < 3 * n; k++)
        x[k] = 0.5 * (double)(k / 3); /* constant velocity */
    ck_assert_int_eq(sensim_gnss_fit_rw(t, x, n, 100, 0.95, &r), SENSIM_EDATA);
    ck_assert_ptr_nonnull(strstr(sensim_last_error(), "constant"));
    ck_assert_int_eq(sensim_gnss_fit_gm(t, x, n, 3, 1.5, &g), SENSIM_EINVAL);
    ck_assert_ptr_nonnull(strstr(sensim_last_error(), "confidence"));
    free(t);
    free(x);
}
END_TEST

/* ---- CLI ---- */

/* The "value" after "key": { in a JSON string (first occurrence after from). */
static double json_num(const char *json, const char *from, const char *key)
{
    const char *p = strstr(json, from);
    ck_assert_msg(p != NULL, "no %s in %s", from, json);
    p = strstr(p, key);
    ck_assert_msg(p != NULL, "no %s after %s", key, from);
    return strtod(p + strlen(key), NULL);
}

static char *inject_preset(const char *dir, const char *gt, const char *preset, const char *name)
{
    char *rig = tu_src(preset), *out = tu_path(dir, name);
    tu_run_result r = tu_run("inject", rig, gt, "-o", out, "-j", "1", NULL);
    ck_assert_msg(r.status == 0, "%s", r.err);
    tu_run_free(&r);
    free(rig);
    return out;
}

static void check_yaml_loads(const char *yaml, const char *want)
{
    char *text = tu_read_file(yaml, NULL);
    ck_assert_ptr_nonnull(text);
    ck_assert_msg(strstr(text, want), "YAML lacks '%s':\n%s", want, text);
    ck_assert_ptr_nonnull(strstr(text, "type: gnss"));
    sensim_rig *rig = sensim_rig_load(yaml);
    ck_assert_msg(rig != NULL, "%s: %s", yaml, sensim_last_error());
    sensim_rig_free(rig);
    free(text);
}

/* The GNSS parameters of the fitted rig's only sensor, as inject reads them. */
static sensim_gnss_params fitted_params(const char *yaml)
{
    sensim_rig *rig = sensim_rig_load(yaml);
    ck_assert_msg(rig != NULL, "%s: %s", yaml, sensim_last_error());
    sensim_gnss_params p = sensim_gnss_default_params();
    ck_assert_msg(sensim_gnss_params_from_yaml(rig->sensors[0].node, &p) == SENSIM_OK, "%s", sensim_last_error());
    sensim_rig_free(rig);
    return p;
}

START_TEST(cli_fit_gnss_roundtrip)
{
    char *dir = tu_mkdtemp(), *gt = tu_path(dir, "gt.h5"), *yaml = tu_path(dir, "fitted.yaml");
    tu_run_result r = tu_run("trajectory", "--shape", "static", "--duration", "400", "--rate", "10", "-o", gt, NULL);
    ck_assert_msg(r.status == 0, "%s", r.err);
    tu_run_free(&r);

    /* Ch:RW with seed 004's parameters: auto picks the random walk. */
    char *rw = inject_preset(dir, gt, "data/gnss-chrono-rw.yaml", "rw.h5");
    r = tu_run("fit", "gnss", rw, "--sensor", "gps", "-o", yaml, "--json", NULL);
    ck_assert_msg(r.status == 0, "%s", r.err);
    ck_assert_ptr_nonnull(strstr(r.out, "\"model\": \"chrono_random_walk\""));
    double lo = json_num(r.out, "\"chrono_random_walk\": {", "\"lo\": "),
           hi = json_num(r.out, "\"chrono_random_walk\": {", "\"hi\": ");
    ck_assert_msg(lo <= 0.047 && 0.047 <= hi, "sigma interval [%g, %g]", lo, hi);
    char *json1 = strdup(r.out);
    tu_run_free(&r);
    check_yaml_loads(yaml, "model: chrono_random_walk");
    /* Same log, same numbers. */
    r = tu_run("fit", "gnss", rw, "--sensor", "gps", "-o", yaml, "--json", NULL);
    ck_assert_str_eq(r.out, json1);
    tu_run_free(&r);
    free(json1);
    /* The fitted YAML goes back through inject. */
    char *back = tu_path(dir, "back.h5");
    r = tu_run("inject", yaml, gt, "-o", back, "-j", "1", NULL);
    ck_assert_msg(r.status == 0, "%s", r.err);
    tu_run_free(&r);

    /* Ch:Gauss 0.03 m: auto picks gaussian; table output. */
    char *ga = inject_preset(dir, gt, "data/gnss-chrono-gauss.yaml", "gauss.h5");
    r = tu_run("fit", "gnss", ga, "--sensor", "gps", "-o", yaml, "--json", NULL);
    ck_assert_msg(r.status == 0, "%s", r.err);
    ck_assert_ptr_nonnull(strstr(r.out, "\"model\": \"gaussian\""));
    lo = json_num(r.out, "\"white_sigma\"", "\"lo\": ");
    hi = json_num(r.out, "\"white_sigma\"", "\"hi\": ");
    ck_assert_msg(lo <= 0.03 && 0.03 <= hi, "east sigma interval [%g, %g]", lo, hi);
    tu_run_free(&r);
    check_yaml_loads(yaml, "model: gaussian");
    r = tu_run("fit", "gnss", ga, "--sensor", "gps", "-o", yaml, NULL);
    ck_assert_msg(r.status == 0 && strstr(r.out, "white sigma") && strstr(r.out, "position noise model: gaussian"),
                  "%s", r.out);
    tu_run_free(&r);

    /* AirSim: no position noise, the HDOP curve; power-on = start_delay
     * 1 s before the first epoch, plus the 0.2 s latency of the time stamps. */
    char *as = inject_preset(dir, gt, "data/gnss-airsim.yaml", "airsim.h5");
    r = tu_run("fit", "gnss", as, "--sensor", "gps", "-o", yaml, "--power-on", "0.2", "--json", NULL);
    ck_assert_msg(r.status == 0, "%s", r.err);
    ck_assert_ptr_nonnull(strstr(r.out, "\"model\": \"none\""));
    ck_assert_within(json_num(r.out, "\"hdop\"", "\"initial\": {\"value\": "), 100, 1e-4);
    ck_assert_within(json_num(r.out, "\"hdop\"", "\"final\": {\"value\": "), 0.85, 1e-6);
    ck_assert_within(json_num(r.out, "\"hdop\"", "\"tau\": {\"value\": "), 12.4, 1e-5);
    tu_run_free(&r);
    check_yaml_loads(yaml, "hdop:");
    sensim_gnss_params fp = fitted_params(yaml);
    ck_assert(fp.hdop_on && !fp.gauss_on && !fp.gm_on && !fp.rw_on);
    ck_assert_within(fp.eph_initial, 100, 1e-4);
    ck_assert_within(fp.eph_final, 0.85, 1e-6);
    ck_assert_within(fp.eph_tau, 12.4, 1e-5);
    ck_assert(fp.epv_initial == fp.eph_initial && fp.epv_final == fp.eph_final && fp.epv_tau == fp.eph_tau);
    ck_assert_int_eq(fp.cov_model, SENSIM_GNSS_COV_SCALED);
    ck_assert_within(fp.cov_scale, 0.02, 1e-7);

    /* Forced Gauss-Markov on the Gaussian log, and a named sensor. */
    r = tu_run("fit", "gnss", ga, "--sensor", "gps", "-o", yaml, "--model", "gauss_markov", "--name", "rx", NULL);
    ck_assert_msg(r.status == 0, "%s", r.err);
    tu_run_free(&r);
    check_yaml_loads(yaml, "model: gauss_markov");
    check_yaml_loads(yaml, "name: rx");

    tu_rmtree(dir);
    free(rw);
    free(ga);
    free(as);
    free(back);
    free(gt);
    free(yaml);
    free(dir);
}
END_TEST

START_TEST(cli_fit_gnss_standalone)
{
    /* data/gnss-standalone.yaml (Gauss-Markov 2.12/2.12/4.24 m, tau 60 s,
     * plus 0.3 m white, 10 m outliers at 0.1%) on a 900 s static log at its
     * 5 Hz (15 correlation times), the preset's seed 3 and two more: auto
     * picks gauss_markov_white, tau's interval holds 60 s on at least 7 of
     * the 9 axes (nominal 95% each; P(6 or fewer) = 8e-4), sigma_white's
     * holds 0.3 m, the outlier rate's holds 0.001, and the YAML goes back
     * through inject with its keys. */
    char *dir = tu_mkdtemp(), *gt = tu_path(dir, "gt.h5"), *yaml = tu_path(dir, "fitted.yaml");
    char *log = tu_path(dir, "sa.h5"), *back = tu_path(dir, "back.h5"), *rig = tu_src("data/gnss-standalone.yaml");
    tu_run_result r = tu_run("trajectory", "--shape", "static", "--duration", "900", "--rate", "5", "-o", gt, NULL);
    ck_assert_msg(r.status == 0, "%s", r.err);
    tu_run_free(&r);
    static const char *const seeds[] = {"3", "4", "5"};
    static const char *const ax[] = {"\"east\"", "\"north\"", "\"up\""};
    int ct = 0, cw = 0, cr = 0;
    for (int s = 0; s < 3; s++) {
        r = tu_run("inject", rig, gt, "-o", log, "-j", "1", "--seed", seeds[s], NULL);
        ck_assert_msg(r.status == 0, "%s", r.err);
        tu_run_free(&r);
        r = tu_run("fit", "gnss", log, "--sensor", "gps", "-o", yaml, "--json", NULL);
        ck_assert_msg(r.status == 0, "%s", r.err);
        ck_assert_msg(strstr(r.out, "\"model\": \"gauss_markov_white\""), "%s", r.out);
        for (int a = 0; a < 3; a++) {
            const char *w = strstr(strstr(r.out, ax[a]), "\"gauss_markov_white\"");
            ck_assert_ptr_nonnull(w);
            double lo = json_num(w, "\"tau\"", "\"lo\": "), hi = json_num(w, "\"tau\"", "\"hi\": ");
            ct += lo <= 60 && 60 <= hi;
            lo = json_num(w, "\"sigma_white\"", "\"lo\": ");
            hi = json_num(w, "\"sigma_white\"", "\"hi\": ");
            cw += lo <= 0.3 && 0.3 <= hi;
        }
        double lo = json_num(r.out, "\"outliers\"", "\"lo\": "), hi = json_num(r.out, "\"outliers\"", "\"hi\": ");
        cr += lo <= 0.001 && 0.001 <= hi;
        ck_assert(json_num(r.out, "\"outliers\"", "\"rejected\": ") >= 1);
        tu_run_free(&r);
    }
    ck_assert_msg(ct >= 7 && cw >= 7 && cr >= 2, "covered: tau %d, sigma_white %d of 9; outlier rate %d of 3", ct, cw,
                  cr);
    check_yaml_loads(yaml, "- model: gauss_markov");
    check_yaml_loads(yaml, "- model: gaussian");
    sensim_gnss_params fp = fitted_params(yaml);
    ck_assert(fp.gm_on && fp.gauss_on && !fp.rw_on);
    ck_assert(fp.outlier_probability > 0 && fp.outlier_magnitude > 0);
    r = tu_run("inject", yaml, gt, "-o", back, "-j", "1", NULL);
    ck_assert_msg(r.status == 0, "%s", r.err);
    tu_run_free(&r);
    /* --keep-outliers: none rejected, nothing written for them. */
    r = tu_run("fit", "gnss", log, "--sensor", "gps", "-o", yaml, "--keep-outliers", "--model", "gauss_markov_white",
               "--json", NULL);
    ck_assert_msg(r.status == 0, "%s", r.err);
    ck_assert_ptr_nonnull(strstr(r.out, "\"outliers\": null"));
    tu_run_free(&r);
    char *text = tu_read_file(yaml, NULL);
    ck_assert_ptr_null(strstr(text, "outliers:"));
    free(text);
    r = tu_run("fit", "gnss", log, "--sensor", "gps", "-o", yaml, "--outlier-threshold", "-1", NULL);
    ck_assert_int_eq(r.status, 2);
    ck_assert_ptr_nonnull(strstr(r.err, "--outlier-threshold '-1'"));
    tu_run_free(&r);
    tu_rmtree(dir);
    free(gt);
    free(yaml);
    free(log);
    free(back);
    free(rig);
    free(dir);
}
END_TEST

/* A GNSS group with n epochs of t, enu (optional) and hdop (optional). */
static char *write_log(const char *dir, const char *name, size_t n, const double *t, const double *enu,
                       const double *hdop)
{
    char *path = tu_path(dir, name);
    sensim_log *log = sensim_log_create(path, "test_gnssfit");
    ck_assert_msg(log != NULL, "%s", sensim_last_error());
    size_t three = 3;
    ck_assert(sensim_log_group(log, "/sensors/gps") == SENSIM_OK);
    ck_assert(sensim_log_write(log, "/sensors/gps/t", SENSIM_F64, n, 0, NULL, t, "s") == SENSIM_OK);
    if (enu)
        ck_assert(sensim_log_write(log, "/sensors/gps/enu", SENSIM_F64, n, 1, &three, enu, "m") == SENSIM_OK);
    if (hdop)
        ck_assert(sensim_log_write(log, "/sensors/gps/hdop", SENSIM_F64, n, 0, NULL, hdop, "") == SENSIM_OK);
    ck_assert_msg(sensim_log_commit(log) == SENSIM_OK, "%s", sensim_last_error());
    return path;
}

static void expect_fail(const char *log, const char *yaml, const char *want1, const char *want2)
{
    tu_run_result r = tu_run("fit", "gnss", log, "--sensor", "gps", "-o", yaml, NULL);
    ck_assert_msg(r.status == 1, "status %d for %s: %s", r.status, log, r.err);
    ck_assert_msg(strstr(r.err, log) && strstr(r.err, want1) && (!want2 || strstr(r.err, want2)), "%s", r.err);
    tu_run_free(&r);
    char *old = tu_read_file(yaml, NULL);
    ck_assert_str_eq(old, "old");
    free(old);
}

START_TEST(cli_fit_gnss_bad_input)
{
    char *dir = tu_mkdtemp(), *yaml = tu_path(dir, "fitted.yaml");
    ck_assert_int_eq(tu_write_file(yaml, "old"), 0);
    const size_t n = 300;
    double *t = malloc(n * sizeof *t), *enu = malloc(3 * n * sizeof *enu), *h = malloc(n * sizeof *h);
    sensim_rng rng = sensim_rng_make(5, 0, 0);
    sensim_rng_normal_fill(&rng, 0, 3 * n, enu);
    for (size_t k = 0; k < n; k++) {
        t[k] = 0.1 * (double)k;
        h[k] = 1.0;
    }
    char *good = write_log(dir, "good.h5", n, t, enu, NULL);

    /* Missing sensor and missing datasets. */
    tu_run_result r = tu_run("fit", "gnss", good, "--sensor", "rx", "-o", yaml, NULL);
    ck_assert_int_eq(r.status, 1);
    ck_assert_msg(strstr(r.err, good) && strstr(r.err, "/sensors/rx"), "%s", r.err);
    tu_run_free(&r);
    char *noenu = write_log(dir, "noenu.h5", n, t, NULL, NULL);
    expect_fail(noenu, yaml, "/sensors/gps", "neither enu nor lla");
    /* NaN position. */
    enu[3 * 17 + 2] = NAN;
    char *nan = write_log(dir, "nan.h5", n, t, enu, NULL);
    expect_fail(nan, yaml, "/sensors/gps/enu", "row 17");
    enu[3 * 17 + 2] = 0.1;
    /* Times going back. */
    t[40] = t[39];
    char *back = write_log(dir, "back.h5", n, t, enu, NULL);
    expect_fail(back, yaml, "/sensors/gps/t", NULL);
    t[40] = 4.0;
    /* Too few epochs. */
    char *few = write_log(dir, "few.h5", 10, t, enu, NULL);
    expect_fail(few, yaml, "/sensors/gps/t", "too few");
    /* Constant positions and a constant HDOP: nothing to fit. */
    for (size_t k = 0; k < 3 * n; k++)
        enu[k] = 2.5;
    char *cst = write_log(dir, "const.h5", n, t, enu, h);
    expect_fail(cst, yaml, "/sensors/gps/enu", "constant");
    /* Random walk forced on too short a log (203 epochs are needed). */
    r = tu_run("fit", "gnss", good, "--sensor", "gps", "-o", yaml, "--model", "chrono_random_walk", "--json", NULL);
    ck_assert_msg(r.status == 0, "%s", r.err); /* 300 are enough */
    ck_assert_ptr_nonnull(strstr(r.out, "\"model\": \"chrono_random_walk\""));
    tu_run_free(&r);
    ck_assert_int_eq(tu_write_file(yaml, "old"), 0);
    sensim_rng_normal_fill(&rng, 0, 3 * n, enu);
    char *short_log = write_log(dir, "short.h5", 100, t, enu, NULL);
    r = tu_run("fit", "gnss", short_log, "--sensor", "gps", "-o", yaml, "--model", "chrono_random_walk", NULL);
    ck_assert_int_eq(r.status, 1);
    ck_assert_msg(strstr(r.err, short_log) && strstr(r.err, "/sensors/gps/enu") && strstr(r.err, "too few"), "%s",
                  r.err);
    tu_run_free(&r);
    /* A missing file. */
    r = tu_run("fit", "gnss", "/nonexistent/static.h5", "--sensor", "gps", "-o", yaml, NULL);
    ck_assert_int_eq(r.status, 1);
    ck_assert_msg(strstr(r.err, "/nonexistent/static.h5"), "%s", r.err);
    tu_run_free(&r);

    /* Usage errors: exit 2, output untouched. */
    const char *bad[][8] = {
        {"fit", "gnss", good, "--sensor", "gps", NULL},                         /* no -o */
        {"fit", "gnss", good, "-o", yaml, NULL},                                /* no --sensor */
        {"fit", "gnss", good, "--sensor", "gps", "-o", yaml},                   /* (filled below) */
        {"fit", "gnss", "--sensor", "gps", "-o", yaml, NULL},                   /* no log */
    };
    for (size_t i = 0; i < 4; i++) {
        if (i == 2)
            r = tu_run("fit", "gnss", good, "--sensor", "gps", "-o", yaml, "--model", "kalman", NULL);
        else
            r = tu_run(bad[i][0], bad[i][1], bad[i][2], bad[i][3], bad[i][4], bad[i][5], bad[i][6], NULL);
        ck_assert_msg(r.status == 2, "case %zu: status %d: %s", i, r.status, r.err);
        ck_assert_ptr_nonnull(strstr(r.err, "fit gnss"));
        tu_run_free(&r);
    }
    r = tu_run("fit", "gnss", good, "--sensor", "gps", "-o", yaml, "--confidence", "2", NULL);
    ck_assert_int_eq(r.status, 2);
    ck_assert_ptr_nonnull(strstr(r.err, "--confidence '2'"));
    tu_run_free(&r);
    char *old = tu_read_file(yaml, NULL);
    ck_assert_str_eq(old, "old");
    free(old);
    r = tu_run("fit", "gnss", "--help", NULL);
    ck_assert_int_eq(r.status, 0);
    ck_assert_ptr_nonnull(strstr(r.out, "usage: sensim fit gnss"));
    tu_run_free(&r);

    tu_rmtree(dir);
    free(good);
    free(noenu);
    free(nan);
    free(back);
    free(few);
    free(cst);
    free(short_log);
    free(t);
    free(enu);
    free(h);
    free(yaml);
    free(dir);
}
END_TEST

START_TEST(cli_lla_only)
{
    /* A log with lla and no enu (as an imported receiver log): converted to
     * ENU at the first fix, the estimates match those from enu. */
    char *dir = tu_mkdtemp(), *yaml = tu_path(dir, "fitted.yaml");
    const size_t n = 500;
    double *t = malloc(n * sizeof *t), *enu = malloc(3 * n * sizeof *enu), *lla = malloc(3 * n * sizeof *lla);
    sensim_rng rng = sensim_rng_make(11, 0, 0);
    sensim_rng_normal_fill(&rng, 0, 3 * n, enu);
    const double origin[3] = {43.0731, -89.4012, 260.0};
    sensim_geo_enu frame;
    ck_assert(sensim_geo_enu_init(&frame, origin) == SENSIM_OK);
    for (size_t k = 0; k < n; k++) {
        t[k] = 0.2 * (double)k;
        for (int a = 0; a < 3; a++)
            enu[3 * k + a] *= 0.5;
        sensim_geo_enu_to_lla(&frame, enu + 3 * k, lla + 3 * k);
    }
    char *a = write_log(dir, "enu.h5", n, t, enu, NULL);
    char *path = tu_path(dir, "lla.h5");
    sensim_log *log = sensim_log_create(path, "test_gnssfit");
    size_t three = 3;
    ck_assert(sensim_log_write(log, "/sensors/gps/t", SENSIM_F64, n, 0, NULL, t, "s") == SENSIM_OK);
    ck_assert(sensim_log_write(log, "/sensors/gps/lla", SENSIM_F64, n, 1, &three, lla, "") == SENSIM_OK);
    ck_assert(sensim_log_commit(log) == SENSIM_OK);
    tu_run_result r1 = tu_run("fit", "gnss", a, "--sensor", "gps", "-o", yaml, "--json", NULL);
    tu_run_result r2 = tu_run("fit", "gnss", path, "--sensor", "gps", "-o", yaml, "--json", NULL);
    ck_assert_msg(r1.status == 0 && r2.status == 0, "%s%s", r1.err, r2.err);
    for (int i = 0; i < 3; i++) {
        const char *ax[] = {"\"east\"", "\"north\"", "\"up\""};
        double s1 = json_num(r1.out, ax[i], "\"white_sigma\": {\"value\": ");
        double s2 = json_num(r2.out, ax[i], "\"white_sigma\": {\"value\": ");
        ck_assert_within(s2, s1, 1e-6 * s1); /* the conversion round trip is ~1e-9 m */
    }
    ck_assert_ptr_nonnull(strstr(r2.out, "\"model\": \"gaussian\""));
    tu_run_free(&r1);
    tu_run_free(&r2);
    /* The first fix is the origin, written to the YAML as a comment. */
    char *text = tu_read_file(yaml, NULL);
    char want[160];
    snprintf(want, sizeof want, "# origin of the fitted log: origin_lla: [%.10g, %.10g, %.6g]", lla[0], lla[1], lla[2]);
    ck_assert_msg(strstr(text, want), "no '%s' in\n%s", want, text);
    free(text);
    tu_rmtree(dir);
    free(a);
    free(path);
    free(t);
    free(enu);
    free(lla);
    free(yaml);
    free(dir);
}
END_TEST

Suite *suite_gnssfit(void)
{
    Suite *s = suite_create("gnssfit");
    TCase *tc = tcase_create("estimators");
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, rw_factor_closed_form);
    tcase_add_test(tc, rw_seed004_roundtrip);
    tcase_add_test(tc, rw_uncapped_roundtrip);
    tcase_add_test(tc, gm_roundtrip_uneven);
    tcase_add_test(tc, gmw_outlier_roundtrip);
    tcase_add_test(tc, gmw_pure_gm_and_white);
    tcase_add_test(tc, outliers_closed_form);
    tcase_add_test(tc, gauss_white_roundtrip);
    tcase_add_test(tc, hdop_airsim_roundtrip);
    tcase_add_test(tc, fixed_seed_reproducible);
    tcase_add_test(tc, library_bad_input);
    suite_add_tcase(s, tc);
    TCase *tcc = tcase_create("cli");
    tcase_set_timeout(tcc, 120);
    tcase_add_test(tcc, cli_fit_gnss_roundtrip);
    tcase_add_test(tcc, cli_fit_gnss_standalone);
    tcase_add_test(tcc, cli_fit_gnss_bad_input);
    tcase_add_test(tcc, cli_lla_only);
    suite_add_tcase(s, tcc);
    return s;
}
