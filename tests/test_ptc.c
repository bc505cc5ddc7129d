/* Photon transfer: a flat-field stack simulated with the EMVA camera model
 * (known K, read noise, dark current, PRNU, DSNU, full well) is fitted back;
 * each estimate must fall within two 95 % half-widths of the truth (about 4
 * standard errors). Plus bad-input errors and the SVG plot. */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "sensim/camera.h"
#include "sensim/ptc.h"
#include "sensim/rng.h"
#include "testutil.h"

#define NLEV 16

/* Default exposure 10 ms; sensim_ptc_simulate sets it per level. */
static sensim_camera_params truth(size_t W, size_t H)
{
    return tu_camera_cmos(W, H, 0.01);
}

/* Simulates the stack: level k has exposure k+1 ms and I proportional to
 * it (sensim_ptc_simulate), then the level statistics. */
static void simulate(size_t W, size_t H, sensim_ptc_level *lv)
{
    const size_t n = W * H;
    uint16_t *light = malloc(2 * NLEV * n * 2), *dark = malloc(2 * NLEV * n * 2);
    double exposure[NLEV], level[NLEV];
    for (int k = 0; k < NLEV; k++) {
        exposure[k] = 1e-3 * (k + 1);
        level[k] = 0.95 * (k + 1) / NLEV;
    }
    sensim_camera_params p = truth(W, H);
    ck_assert_int_eq(sensim_ptc_simulate(&p, 2024, 5, NLEV, exposure, level, light, dark), SENSIM_OK);
    for (int k = 0; k < NLEV; k++)
        ck_assert_int_eq(sensim_ptc_level_compute(SENSIM_PIXEL_U16, n, light + 2 * k * n, light + (2 * k + 1) * n,
                                                  dark + 2 * k * n, dark + (2 * k + 1) * n, exposure[k], &lv[k]),
                         SENSIM_OK);
    free(light);
    free(dark);
}

START_TEST(ptc_round_trip)
{
    const size_t W = 200, H = 200;
    sensim_ptc_level lv[NLEV];
    simulate(W, H, lv);
    sensim_ptc_result r;
    ck_assert_int_eq(sensim_ptc_fit(lv, NLEV, 65535, &r), SENSIM_OK);
    sensim_camera_params p = truth(W, H);
    ck_assert_uint_ge(r.levels_used, 5);
    ck_assert_within(r.gain, p.gain, 2 * r.gain_ci);
    ck_assert_double_lt(r.gain_ci, 0.01 * p.gain); /* the fit is informative */
    ck_assert_within(r.read_noise, p.read_noise, 2 * r.read_noise_ci);
    ck_assert_within(r.dark_current, p.dark_current, 2 * r.dark_current_ci);
    ck_assert_within(r.dark_offset, p.black_level, 0.05);
    ck_assert_int_eq(r.saturation_reached, 1);
    /* Saturation: the well (30000 e-) is reached between levels; the
     * variance peaks at the highest level whose pixels stay below it (PRNU
     * 1 % spreads the saturation point by about 300 e-), and the method
     * returns that level's charge: it resolves the well to one level step
     * below (0.95/16 of 40000 e- = 2375 e- here), the charge divided by the
     * estimated K (hence twice K's relative 95 % half-width on either side). */
    double step = 0.95 / NLEV * p.photons_full_scale * p.quantum_efficiency;
    double slack = 2 * r.gain_ci / r.gain * p.full_well;
    ck_assert_double_ge(r.saturation_capacity, p.full_well - step - slack);
    ck_assert_double_le(r.saturation_capacity, p.full_well + slack);
    /* PRNU from 40000 pixels: relative SE about 1/sqrt(2n) plus the
     * temporal subtraction; within 10 %. DSNU (5 e- = 1.25 DN against 2 DN
     * of temporal noise in the pair mean): within 15 %. */
    ck_assert_within(r.prnu, p.prnu, 0.1 * p.prnu);
    ck_assert_within(r.dsnu, p.dsnu, 0.15 * p.dsnu);
    /* Simple model (seed 000 eq. 4) on I = DN/65535: var = K (mu - black) +
     * K^2 sigma_d^2 + 1/12 gives slope K/fs and intercept (K^2 sigma_d^2 +
     * 1/12 - K black)/fs^2. */
    double fs = 65535;
    ck_assert_within(r.variance_slope, p.gain / fs, 2 * r.variance_slope_ci);
    ck_assert_within(r.variance_intercept, (p.gain * p.gain * 64 + 1.0 / 12 - p.gain * p.black_level) / (fs * fs),
                     2 * r.variance_intercept_ci);
    char *dir = tu_mkdtemp(), *svg = tu_path(dir, "ptc.svg");
    ck_assert_int_eq(sensim_ptc_plot_svg(svg, lv, NLEV, &r), SENSIM_OK);
    size_t len;
    char *txt = tu_read_file(svg, &len);
    ck_assert_ptr_nonnull(strstr(txt, "<svg"));
    ck_assert_ptr_nonnull(strstr(txt, "</svg>"));
    ck_assert_ptr_nonnull(strstr(txt, "<circle"));
    free(txt);
    tu_rmtree(dir);
    free(dir);
    free(svg);
}
END_TEST

START_TEST(ptc_bad_input)
{
    sensim_ptc_level lv[3];
    sensim_ptc_result r;
    memset(lv, 0, sizeof lv);
    ck_assert_int_eq(sensim_ptc_fit(lv, 2, 65535, &r), SENSIM_EDATA);
    ck_assert_ptr_nonnull(strstr(sensim_last_error(), "at least 3"));
    ck_assert_int_eq(sensim_ptc_fit(lv, 3, 0, &r), SENSIM_EINVAL);
    ck_assert_ptr_nonnull(strstr(sensim_last_error(), "full_scale"));
    /* Three levels, all saturated beyond 70 %: too few usable. */
    for (int i = 0; i < 3; i++) {
        lv[i].npix = 100;
        lv[i].exposure = 1e-3 * (i + 1);
        lv[i].mu_y = 1000 * (i + 1);
        lv[i].var_y = 10 * (3 - i);
    }
    ck_assert_int_eq(sensim_ptc_fit(lv, 3, 65535, &r), SENSIM_EDATA);
    ck_assert_ptr_nonnull(strstr(sensim_last_error(), "70 %"));
    uint16_t a[4] = {1, 2, 3, 4};
    sensim_ptc_level one;
    ck_assert_int_eq(sensim_ptc_level_compute(SENSIM_PIXEL_U16, 1, a, a, NULL, NULL, 0.01, &one), SENSIM_EINVAL);
    ck_assert_int_eq(sensim_ptc_level_compute(SENSIM_PIXEL_U16, 4, a, a, a, NULL, 0.01, &one), SENSIM_EINVAL);
    ck_assert_ptr_nonnull(strstr(sensim_last_error(), "dark"));
    /* The simulator: an EMVA camera and intensities in [0, 1] only. */
    sensim_camera_params cp = truth(2, 2);
    double e1[1] = {1e-3}, i1[1] = {1.5};
    uint16_t l8[8], d8[8];
    ck_assert_int_eq(sensim_ptc_simulate(&cp, 1, 1, 1, e1, i1, l8, d8), SENSIM_EINVAL);
    ck_assert_ptr_nonnull(strstr(sensim_last_error(), "level 0: intensity 1.5"));
    cp.model = SENSIM_CAMERA_NOISE_INTENSITY;
    i1[0] = 0.5;
    ck_assert_int_eq(sensim_ptc_simulate(&cp, 1, 1, 1, e1, i1, l8, d8), SENSIM_EINVAL);
    ck_assert_ptr_nonnull(strstr(sensim_last_error(), "emva"));
    float nan4[4] = {1, NAN, 2, 3};
    ck_assert_int_eq(sensim_ptc_level_compute(SENSIM_PIXEL_F32, 4, nan4, nan4, NULL, NULL, 0.01, &one),
                     SENSIM_EDATA);
    ck_assert_ptr_nonnull(strstr(sensim_last_error(), "pixel 1"));
}
END_TEST

START_TEST(ptc_saturation_not_reached)
{
    /* Issue 13 item 7: a stack whose variance still grows at its brightest
     * level never saturated; its top level is only a lower bound of the
     * saturation, and the result says so. Levels: shot-noise-limited,
     * var = K mu with K = 0.25, mu up to 8000 DN of 65535. */
    sensim_ptc_level lv[8];
    for (int k = 0; k < 8; k++) {
        double mu = 1000.0 * (k + 1);
        lv[k] = (sensim_ptc_level){1e-3 * (k + 1), 10000, mu + 100, 0.25 * mu + 4, 100, 4, 10, 1};
    }
    sensim_ptc_result r;
    ck_assert_int_eq(sensim_ptc_fit(lv, 8, 65535, &r), SENSIM_OK);
    ck_assert_int_eq(r.saturation_reached, 0);
    ck_assert_double_eq(r.saturation_dn, 8000);
    /* The same with a ninth level past the well, whose variance collapses. */
    sensim_ptc_level lv9[9];
    memcpy(lv9, lv, sizeof lv);
    lv9[8] = (sensim_ptc_level){9e-3, 10000, 9500 + 100, 50, 100, 4, 10, 1};
    ck_assert_int_eq(sensim_ptc_fit(lv9, 9, 65535, &r), SENSIM_OK);
    ck_assert_int_eq(r.saturation_reached, 1);
    ck_assert_double_eq(r.saturation_dn, 8000);
}
END_TEST

/* An 8-bit stack drawn here (not with sensim's camera): per pixel Poisson
 * electrons at mean mu_e, Gaussian read noise sd_e electrons, DN = round(K
 * e + black) clipped to 0..255; 64 x 64 pixels, 12 levels of exposure
 * (k+1) ms with mu_e = 20 (k+1) / K e- (20 DN steps up to 240 DN above
 * black), dark frames at 10 e-/s. */
static void stack8(double K, double sd_e, double black, uint64_t seed, sensim_ptc_level *lv, int nlev)
{
    const size_t n = 64 * 64;
    uint8_t *f[4];
    for (int j = 0; j < 4; j++)
        f[j] = malloc(n);
    for (int k = 0; k < nlev; k++) {
        double t = 1e-3 * (k + 1), mu_e = 20.0 * (k + 1) / K;
        for (int j = 0; j < 4; j++) {
            sensim_rng r = sensim_rng_make(seed, (uint32_t)k, (uint32_t)j);
            for (size_t i = 0; i < n; i++) {
                double e = (double)sensim_rng_poisson(&r, 2 * i, j < 2 ? mu_e : 10 * t) +
                           sd_e * sensim_rng_normal(&r, 2 * i + 1);
                double dn = floor(K * e + black + 0.5);
                f[j][i] = (uint8_t)(dn < 0 ? 0 : dn > 255 ? 255 : dn);
            }
        }
        ck_assert_int_eq(sensim_ptc_level_compute(SENSIM_PIXEL_U8, n, f[0], f[1], f[2], f[3], t, &lv[k]), SENSIM_OK);
    }
    for (int j = 0; j < 4; j++)
        free(f[j]);
}

START_TEST(ptc_8bit_outside_validity)
{
    /* Issue 13 item 7. EMVA 1288 (release 3.1, 6.5; release 4 Linear the
     * same) models quantization as 1/12 DN^2, which holds only while the
     * temporal noise is not far below 1 DN: a dark variance under 0.24 DN^2
     * (sigma_y.dark < 0.49 DN) makes the dark noise an upper limit only.
     * Here K = 0.01 DN/e- and 10 e- of read noise: sigma_y.dark = 0.1 DN,
     * the dark frames sit on one DN, and the read-noise interval lies
     * nowhere near the truth. The fit must say so (quantization_limited,
     * the smallest temporal variance it saw). The same stack at K = 0.05
     * DN/e- and 20 e- (sigma_y.dark = 1 DN) is inside the range: no flag,
     * and the gain and read noise within two 95 % half-widths of the truth
     * (4 standard errors). */
    sensim_ptc_level lv[12];
    sensim_ptc_result r;
    stack8(0.01, 10, 10.2, 7, lv, 12);
    ck_assert_msg(sensim_ptc_fit(lv, 12, 255, &r) == SENSIM_OK, "%s", sensim_last_error());
    ck_assert_int_eq(r.quantization_limited, 1);
    ck_assert_double_lt(r.min_temporal_var_dn2, 0.24);
    /* What the flag warns of: the read noise comes out as 0 (no interval),
     * while 10 e- lies below EMVA's upper limit sqrt(0.24 - 1/12) / K. */
    ck_assert(!(fabs(r.read_noise - 10) <= r.read_noise_ci));
    ck_assert_double_ge(sqrt(0.24 - 1.0 / 12) / r.gain, 10);
    stack8(0.05, 20, 10.2, 7, lv, 12);
    ck_assert_msg(sensim_ptc_fit(lv, 12, 255, &r) == SENSIM_OK, "%s", sensim_last_error());
    ck_assert_int_eq(r.quantization_limited, 0);
    ck_assert_double_ge(r.min_temporal_var_dn2, 0.24);
    ck_assert_within(r.gain, 0.05, 2 * r.gain_ci);
    ck_assert_within(r.read_noise, 20, 2 * r.read_noise_ci);
}
END_TEST

Suite *suite_ptc(void)
{
    Suite *s = suite_create("ptc");
    TCase *tc = tcase_create("ptc");
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, ptc_round_trip);
    tcase_add_test(tc, ptc_bad_input);
    tcase_add_test(tc, ptc_saturation_not_reached);
    tcase_add_test(tc, ptc_8bit_outside_validity);
    suite_add_tcase(s, tc);
    return s;
}
