/* Camera noise and lens: statistics against closed forms (tolerances from
 * the sample size, stated per test), fixed patterns, rails, thread
 * independence, lens formula and inverse, remap, bad parameters. */
#include <math.h>
#include <omp.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "sensim/camera.h"
#include "sensim/rng.h"
#include "testutil.h"

/* Mean and unbiased variance of a float/u16/u8 buffer region. */
static void stats_f32(const float *x, size_t n, double *m, double *v)
{
    double s = 0, ss = 0;
    for (size_t i = 0; i < n; i++)
        s += x[i];
    *m = s / n;
    for (size_t i = 0; i < n; i++)
        ss += (x[i] - *m) * (x[i] - *m);
    *v = ss / (n - 1);
}

static void stats_u16(const uint16_t *x, size_t n, double *m, double *v)
{
    double s = 0, ss = 0;
    for (size_t i = 0; i < n; i++)
        s += x[i];
    *m = s / n;
    for (size_t i = 0; i < n; i++)
        ss += (x[i] - *m) * (x[i] - *m);
    *v = ss / (n - 1);
}

START_TEST(intensity_variance_line)
{
    /* Five intensity levels, one per row band of 200x100 = 20000 pixels.
     * The sample variance of n normals has SE var*sqrt(2/(n-1)) = 1 % of
     * var: each level is checked within 5 SE. The least-squares line through
     * the five levels recovers slope and intercept; with per-level errors of
     * 1 % its SEs are about 0.9 % of the slope and 2.5e-6 for the intercept
     * here, checked at 5 SE (tolerances 5e-5 and 1.3e-5 below). */
    const size_t W = 200, H = 500, band = 100;
    const double levels[5] = {0.1, 0.3, 0.5, 0.7, 0.9};
    sensim_camera_params p = sensim_camera_default_params();
    p.model = SENSIM_CAMERA_NOISE_INTENSITY;
    p.width = W;
    p.height = H;
    p.variance_slope = 4.0e-4;
    p.variance_intercept = 2.5e-5;
    sensim_camera *c = sensim_camera_create(&p, 5, 77);
    ck_assert_ptr_nonnull(c);
    float *in = malloc(W * H * sizeof *in), *out = malloc(W * H * sizeof *out);
    for (size_t y = 0; y < H; y++)
        for (size_t x = 0; x < W; x++)
            in[y * W + x] = (float)levels[y / band];
    ck_assert_int_eq(sensim_camera_apply(c, 3, SENSIM_PIXEL_F32, in, out), SENSIM_OK);
    double sx = 0, sy = 0, sxx = 0, sxy = 0;
    for (int k = 0; k < 5; k++) {
        double m, v, expect = p.variance_slope * levels[k] + p.variance_intercept;
        size_t n = band * W;
        stats_f32(out + k * n, n, &m, &v);
        ck_assert_within(m, levels[k], 5 * sqrt(expect / n));
        ck_assert_within(v, expect, 5 * expect * sqrt(2.0 / (n - 1)));
        sx += levels[k];
        sy += v;
        sxx += levels[k] * levels[k];
        sxy += levels[k] * v;
    }
    double slope = (5 * sxy - sx * sy) / (5 * sxx - sx * sx), icpt = (sy - slope * sx) / 5;
    ck_assert_within(slope, 4.0e-4, 5e-5);
    ck_assert_within(icpt, 2.5e-5, 1.3e-5);
    free(in);
    free(out);
    sensim_camera_destroy(c);
}
END_TEST

START_TEST(intensity_known_answer)
{
    /* The camera's normals are sensim_rng_normal_icdf on the temporal
     * stream (stream 1) at index frame * npix + pixel: the output is a pure
     * function of (seed, sensor, stream, index). The pixel arithmetic is
     * single precision: within 1e-6 of the double formula (a wrong index
     * would be off by about sigma = 0.024). */
    const size_t W = 100, H = 60, n = W * H;
    sensim_camera_params p = sensim_camera_default_params();
    p.model = SENSIM_CAMERA_NOISE_INTENSITY;
    p.width = W;
    p.height = H;
    p.variance_slope = 1e-3;
    p.variance_intercept = 1e-4;
    sensim_camera *c = sensim_camera_create(&p, 99, 1234);
    float *in = malloc(n * sizeof *in), *out = malloc(n * sizeof *out);
    for (size_t i = 0; i < n; i++)
        in[i] = 0.5f;
    ck_assert_int_eq(sensim_camera_apply(c, 7, SENSIM_PIXEL_F32, in, out), SENSIM_OK);
    sensim_rng r = sensim_rng_make(99, 1234, 1);
    for (size_t i = 0; i < n; i++) {
        double y = 0.5 + sqrt(1e-3 * 0.5 + 1e-4) * sensim_rng_normal_icdf(&r, 7 * n + i);
        ck_assert_double_eq_tol(out[i], y < 0 ? 0 : y > 1 ? 1 : y, 1e-6);
    }
    free(in);
    free(out);
    sensim_camera_destroy(c);
}
END_TEST

START_TEST(emva_known_answer)
{
    /* The EMVA chain against its formula evaluated here in double, pixel by
     * pixel, with the normals of sensim_rng_normal_icdf at index frame *
     * npix + pixel and the fixed-pattern maps the model exposes. A row of
     * 97 * 3 elements is not a multiple of the generator's 4-word blocks or
     * of the kernel's chunks, so this pins the indexing at odd offsets. The
     * kernel works in single precision: a DN may differ by 1 where the
     * double value lies within 0.01 DN of a rounding threshold. */
    const size_t W = 97, H = 13, C = 3, n = W * H * C;
    sensim_camera_params p = sensim_camera_default_params();
    p.model = SENSIM_CAMERA_NOISE_EMVA;
    p.width = W;
    p.height = H;
    p.channels = C;
    p.prnu = 0.02;
    p.dsnu = 3;
    p.row_offset_sigma = 1;
    p.column_offset_sigma = 1;
    p.black_level = 50;
    p.poisson_exact_below = 0; /* every pixel through the normal draw */
    sensim_camera *c = sensim_camera_create(&p, 5, 77);
    ck_assert_ptr_nonnull(c);
    uint16_t *in = malloc(2 * n), *out = malloc(2 * n);
    for (size_t i = 0; i < n; i++)
        in[i] = (uint16_t)(1000 + i * 193 % 60000);
    const uint64_t frame = 5;
    ck_assert_int_eq(sensim_camera_apply(c, frame, SENSIM_PIXEL_U16, in, out), SENSIM_OK);
    const float *g = sensim_camera_gain_map(c), *o = sensim_camera_offset_map(c);
    sensim_rng r = sensim_rng_make(5, 77, 1);
    size_t same = 0, near = 0;
    for (size_t i = 0; i < n; i++) {
        double mu = in[i] / 65535.0 * p.photons_full_scale * p.quantum_efficiency * g[i] +
                    p.dark_current * p.exposure_time;
        double e = mu + sqrt(mu + p.read_noise * p.read_noise) * sensim_rng_normal_icdf(&r, frame * n + i);
        double v = p.gain * fmin(e, p.full_well) + p.black_level + o[i] + 0.5;
        double dn = fmin(fmax(floor(v), 0), 65535);
        ck_assert_msg(fabs(out[i] - dn) <= 1, "pixel %zu: %u, expected %g", i, out[i], dn);
        same += out[i] == dn;
        near += fabs(v - floor(v + 0.5)) < 0.01;
    }
    /* Disagreements only at near-threshold values (about 2 % of them). */
    ck_assert_uint_ge(same, n - near);
    free(in);
    free(out);
    sensim_camera_destroy(c);
}
END_TEST

START_TEST(nan_stays_nan)
{
    /* f32 frames: a NaN pixel stays NaN in both models (the header's
     * promise); its neighbours are finite and in [0, 1]. */
    const size_t W = 40, H = 5, n = W * H;
    float *in = malloc(n * sizeof *in), *out = malloc(n * sizeof *out);
    for (size_t i = 0; i < n; i++)
        in[i] = i % 7 == 3 ? NAN : 0.4f;
    for (int model = 1; model <= 2; model++) {
        sensim_camera_params p = sensim_camera_default_params();
        p.model = model;
        p.width = W;
        p.height = H;
        p.variance_slope = 1e-3;
        p.prnu = 0.01;
        sensim_camera *c = sensim_camera_create(&p, 1, 2);
        ck_assert_int_eq(sensim_camera_apply(c, 0, SENSIM_PIXEL_F32, in, out), SENSIM_OK);
        for (size_t i = 0; i < n; i++) {
            if (i % 7 == 3)
                ck_assert(isnan(out[i]));
            else
                ck_assert(out[i] >= 0 && out[i] <= 1);
        }
        sensim_camera_destroy(c);
    }
    free(in);
    free(out);
}
END_TEST

START_TEST(no_wraparound_at_rails)
{
    /* u8 and u16 frames at the rails with sigma 0.1 of full scale. With a
     * clamp, half the pixels stay on the rail (binomial SE 0.5/sqrt(n), n =
     * 20000: 5 SE = 0.018) and none cross to the far side (P(|z| > 5) ~ 6e-7
     * per pixel). A cast without clamp (Chrono) wraps half of them. */
    const size_t W = 200, H = 100, n = W * H;
    sensim_camera_params p = sensim_camera_default_params();
    p.model = SENSIM_CAMERA_NOISE_INTENSITY;
    p.width = W;
    p.height = H;
    p.variance_intercept = 0.01;
    sensim_camera *c = sensim_camera_create(&p, 1, 2);
    uint8_t *a = malloc(n), *b = malloc(n);
    uint16_t *a16 = malloc(2 * n), *b16 = malloc(2 * n);
    for (int rail = 0; rail < 2; rail++) {
        memset(a, rail ? 255 : 0, n);
        for (size_t i = 0; i < n; i++)
            a16[i] = rail ? 65535 : 0;
        ck_assert_int_eq(sensim_camera_apply(c, rail, SENSIM_PIXEL_U8, a, b), SENSIM_OK);
        ck_assert_int_eq(sensim_camera_apply(c, rail, SENSIM_PIXEL_U16, a16, b16), SENSIM_OK);
        size_t on8 = 0, on16 = 0, far8 = 0, far16 = 0;
        for (size_t i = 0; i < n; i++) {
            on8 += b[i] == a[i];
            on16 += b16[i] == a16[i];
            far8 += rail ? b[i] < 128 : b[i] > 127;
            far16 += rail ? b16[i] < 32768 : b16[i] > 32767;
        }
        ck_assert_within((double)on8 / n, 0.5, 0.018);
        ck_assert_within((double)on16 / n, 0.5, 0.018);
        ck_assert_uint_eq(far8, 0);
        ck_assert_uint_eq(far16, 0);
    }
    free(a);
    free(b);
    free(a16);
    free(b16);
    sensim_camera_destroy(c);
}
END_TEST

static sensim_camera_params poisson_params(size_t W, size_t H, double mean_e, double thr)
{
    sensim_camera_params p = sensim_camera_default_params();
    p.model = SENSIM_CAMERA_NOISE_EMVA;
    p.width = W;
    p.height = H;
    p.photons_full_scale = mean_e; /* I = 1 gives mean_e electrons at QE 1 */
    p.quantum_efficiency = 1.0;
    p.dark_current = 0;
    p.read_noise = 0;
    p.gain = 1.0;
    p.full_well = 60000;
    p.poisson_exact_below = thr;
    return p;
}

START_TEST(poisson_mean_equals_variance)
{
    /* Gain 1, no read noise or dark current: DN = electrons exactly, so the
     * output is Poisson(mu). n = 40000: SE(mean) = sqrt(mu/n); the variance
     * of a Poisson sample variance is mu/n (mu + 2 mu (n/(n-1))) ~ (mu +
     * 2mu^2)/n; checked at 5 SE. mu = 3.7 (inversion), 57.5 (PTRS), and
     * 2500 both exactly and through the documented normal approximation. */
    const size_t W = 200, H = 200, n = W * H;
    const double mus[4] = {3.7, 57.5, 2500, 2500};
    const double thr[4] = {INFINITY, INFINITY, INFINITY, 1000};
    uint16_t *out = malloc(n * sizeof *out);
    for (int k = 0; k < 4; k++) {
        sensim_camera_params p = poisson_params(W, H, mus[k], thr[k]);
        sensim_camera *c = sensim_camera_create(&p, 11, 3);
        ck_assert_ptr_nonnull(c);
        /* A u16 input of 65535 is I = 1. */
        uint16_t *in16 = malloc(n * sizeof *in16);
        for (size_t i = 0; i < n; i++)
            in16[i] = 65535;
        ck_assert_int_eq(sensim_camera_apply(c, 0, SENSIM_PIXEL_U16, in16, out), SENSIM_OK);
        double m, v, mu = mus[k];
        stats_u16(out, n, &m, &v);
        ck_assert_within(m, mu, 5 * sqrt(mu / n));
        ck_assert_within(v, mu, 5 * sqrt((mu + 2 * mu * mu) / n));
        ck_assert_within(v / m, 1.0, 5 * sqrt((mu + 2 * mu * mu) / n) / mu + 5 * sqrt(1.0 / (mu * n)));
        if (k == 0) {
            /* Integer support: a Poisson draw, not a rounded normal. */
            size_t zeros = 0;
            for (size_t i = 0; i < n; i++)
                zeros += out[i] == 0;
            /* P(0) = exp(-3.7) = 0.0247; binomial SE sqrt(p(1-p)/n) = 7.8e-4. */
            ck_assert_within((double)zeros / n, exp(-3.7), 5 * 7.8e-4);
        }
        free(in16);
        sensim_camera_destroy(c);
    }
    free(out);
}
END_TEST

START_TEST(emva_chain_moments)
{
    /* Full chain without fixed patterns: mean DN = K (eta mu_p + mu_d) +
     * black, variance K^2 (eta mu_p + mu_d + sigma_d^2) + 1/12 (ADC). 12-bit
     * ADC in a u16 container (output scaled by 65535/4095). n = 40000: 5 SE. */
    const size_t W = 200, H = 200, n = W * H;
    sensim_camera_params p = sensim_camera_default_params();
    p.model = SENSIM_CAMERA_NOISE_EMVA;
    p.width = W;
    p.height = H;
    p.photons_full_scale = 10000;
    p.quantum_efficiency = 0.5;
    p.exposure_time = 0.02;
    p.dark_current = 500; /* 10 e- */
    p.read_noise = 6;
    p.gain = 0.2;
    p.black_level = 40;
    p.adc_bits = 12;
    p.full_well = 20000;
    uint16_t *in = malloc(n * 2), *out = malloc(n * 2);
    for (size_t i = 0; i < n; i++)
        in[i] = 32768; /* I = 0.5: 2500 e- */
    sensim_camera *c = sensim_camera_create(&p, 3, 4);
    ck_assert_int_eq(sensim_camera_apply(c, 0, SENSIM_PIXEL_U16, in, out), SENSIM_OK);
    double *dn = malloc(n * sizeof *dn);
    for (size_t i = 0; i < n; i++)
        dn[i] = round(out[i] * 4095.0 / 65535.0);
    double m = tu_mean(dn, n, 1), v = tu_var(dn, n, 1);
    double I = 32768.0 / 65535.0, e = I * 10000 * 0.5 + 10;
    double em = 0.2 * e + 40, ev = 0.04 * (e + 36) + 1.0 / 12;
    ck_assert_within(m, em, 5 * sqrt(ev / n));
    ck_assert_within(m, sensim_camera_emva_mean_dn(&p, I), 5 * sqrt(ev / n));
    ck_assert_within(v, ev, 5 * ev * sqrt(2.0 / n));
    /* Saturation: I = 1 gives 5010 e- < full well; shrink the well. */
    sensim_camera_destroy(c);
    p.full_well = 1000;
    c = sensim_camera_create(&p, 3, 4);
    ck_assert_int_eq(sensim_camera_apply(c, 1, SENSIM_PIXEL_U16, in, out), SENSIM_OK);
    for (size_t i = 0; i < n; i++)
        ck_assert_uint_eq((unsigned)round(out[i] * 4095.0 / 65535.0), 240); /* 0.2 * 1000 + 40 */
    free(dn);
    free(in);
    free(out);
    sensim_camera_destroy(c);
}
END_TEST

static double corr_u16(const uint16_t *a, const uint16_t *b, size_t n)
{
    double ma = 0, mb = 0, sab = 0, saa = 0, sbb = 0;
    for (size_t i = 0; i < n; i++) {
        ma += a[i];
        mb += b[i];
    }
    ma /= n;
    mb /= n;
    for (size_t i = 0; i < n; i++) {
        sab += (a[i] - ma) * (b[i] - mb);
        saa += (a[i] - ma) * (a[i] - ma);
        sbb += (b[i] - mb) * (b[i] - mb);
    }
    return sab / sqrt(saa * sbb);
}

START_TEST(fixed_patterns_frames_and_seeds)
{
    /* PRNU 5 % of 10000 e- (500 e- rms) dominates shot noise (100 e-): two
     * frames of one run correlate with rho = 500^2/(500^2 + 100^2) = 0.96;
     * frames of runs with different seeds are independent (|rho| < 5/sqrt(n),
     * n = 40000). */
    const size_t W = 200, H = 200, n = W * H;
    sensim_camera_params p = poisson_params(W, H, 10000, 1000);
    p.gain = 0.5;
    p.read_noise = 3;
    p.prnu = 0.05;
    p.dsnu = 20;
    p.hot_pixel_fraction = 0.01;
    p.hot_pixel_dark_current = 1e4;
    p.row_offset_sigma = 3;
    p.column_offset_sigma = 2;
    sensim_camera *a = sensim_camera_create(&p, 100, 9), *a2 = sensim_camera_create(&p, 100, 9);
    sensim_camera *b = sensim_camera_create(&p, 101, 9);
    ck_assert_ptr_nonnull(a);
    ck_assert_ptr_nonnull(b);
    ck_assert(memcmp(sensim_camera_gain_map(a), sensim_camera_gain_map(a2), n * sizeof(float)) == 0);
    ck_assert(memcmp(sensim_camera_offset_map(a), sensim_camera_offset_map(a2), n * sizeof(float)) == 0);
    ck_assert(memcmp(sensim_camera_dark_map(a), sensim_camera_dark_map(a2), n * sizeof(float)) == 0);
    ck_assert(memcmp(sensim_camera_gain_map(a), sensim_camera_gain_map(b), n * sizeof(float)) != 0);
    /* PRNU map: sd 0.05 (SE 0.05/sqrt(2n)); hot fraction 0.01 (SE 5e-4). */
    double *g = malloc(n * sizeof *g);
    size_t hot = 0;
    for (size_t i = 0; i < n; i++) {
        g[i] = sensim_camera_gain_map(a)[i];
        hot += sensim_camera_dark_map(a)[i] > 50;
    }
    ck_assert_within(sqrt(tu_var(g, n, 1)), 0.05, 5 * 0.05 / sqrt(2.0 * n));
    ck_assert_within((double)hot / n, 0.01, 5 * sqrt(0.01 * 0.99 / n));
    uint16_t *in = malloc(2 * n), *f0 = malloc(2 * n), *f1 = malloc(2 * n), *g0 = malloc(2 * n);
    for (size_t i = 0; i < n; i++)
        in[i] = 65535;
    sensim_camera_apply(a, 0, SENSIM_PIXEL_U16, in, f0);
    sensim_camera_apply(a, 1, SENSIM_PIXEL_U16, in, f1);
    sensim_camera_apply(b, 0, SENSIM_PIXEL_U16, in, g0);
    ck_assert(memcmp(f0, f1, 2 * n) != 0); /* temporal noise differs per frame */
    ck_assert_double_gt(corr_u16(f0, f1, n), 0.9);
    ck_assert_within(corr_u16(f0, g0, n), 0.0, 5 / sqrt((double)n));
    free(g);
    free(in);
    free(f0);
    free(f1);
    free(g0);
    sensim_camera_destroy(a);
    sensim_camera_destroy(a2);
    sensim_camera_destroy(b);
}
END_TEST

START_TEST(same_output_any_thread_count)
{
    const size_t W = 97, H = 61, C = 3, n = W * H * C;
    for (int model = 1; model <= 2; model++) {
        sensim_camera_params p = sensim_camera_default_params();
        p.model = model;
        p.width = W;
        p.height = H;
        p.channels = C;
        p.variance_slope = 1e-3;
        p.variance_intercept = 1e-4;
        p.prnu = 0.01;
        p.poisson_exact_below = 2000; /* both paths */
        sensim_camera *c = sensim_camera_create(&p, 42, 1);
        uint16_t *in = malloc(2 * n), *o1 = malloc(2 * n), *o2 = malloc(2 * n);
        for (size_t i = 0; i < n; i++)
            in[i] = (uint16_t)(i * 37 % 65536);
        omp_set_num_threads(1);
        sensim_camera_apply(c, 7, SENSIM_PIXEL_U16, in, o1);
        omp_set_num_threads(2);
        sensim_camera_apply(c, 7, SENSIM_PIXEL_U16, in, o2);
        ck_assert(memcmp(o1, o2, 2 * n) == 0);
        /* In place equals out of place. */
        sensim_camera_apply(c, 7, SENSIM_PIXEL_U16, in, in);
        ck_assert(memcmp(o1, in, 2 * n) == 0);
        free(in);
        free(o1);
        free(o2);
        sensim_camera_destroy(c);
    }
}
END_TEST

START_TEST(exact_poisson_draws_are_the_samplers)
{
    /* No read noise, K = 1 DN/e-, no offsets: a pixel below the threshold
     * reads exactly its Poisson draw, sensim_rng_poisson_exact on the shot
     * stream (2) at index frame * npix + pixel with the float mean the
     * chain computes. Even rows are all below the threshold (the vector
     * fill), odd rows only every 50th pixel (the one-by-one path); both at
     * 1 and 2 threads. */
    const size_t W = 300, H = 40, n = W * H;
    sensim_camera_params p = sensim_camera_default_params();
    p.model = SENSIM_CAMERA_NOISE_EMVA;
    p.width = W;
    p.height = H;
    p.photons_full_scale = 1000;
    p.quantum_efficiency = 0.6;
    p.dark_current = 0;
    p.read_noise = 0;
    p.gain = 1;
    p.full_well = 1e6;
    p.poisson_exact_below = 20;
    sensim_camera *c = sensim_camera_create(&p, 77, 5);
    ck_assert_ptr_nonnull(c);
    uint16_t *in = malloc(2 * n), *o1 = malloc(2 * n), *o2 = malloc(2 * n);
    ck_assert(in && o1 && o2);
    for (size_t y = 0; y < H; y++)
        for (size_t x = 0; x < W; x++)
            in[y * W + x] = (uint16_t)(y % 2 == 0 || x % 50 == 0 ? (x * 7 + y) % 2100 : 30000 + x);
    omp_set_num_threads(1);
    ck_assert_int_eq(sensim_camera_apply(c, 3, SENSIM_PIXEL_U16, in, o1), SENSIM_OK);
    omp_set_num_threads(2);
    ck_assert_int_eq(sensim_camera_apply(c, 3, SENSIM_PIXEL_U16, in, o2), SENSIM_OK);
    ck_assert(memcmp(o1, o2, 2 * n) == 0);
    sensim_rng shot = sensim_rng_make(77, 5, 2);
    const float S = (float)(1000 * 0.6 / 65535.0);
    size_t checked = 0;
    for (size_t i = 0; i < n; i++) {
        float mu = (float)in[i] * S;
        if (!(mu < 20))
            continue;
        ck_assert_uint_eq(o1[i], sensim_rng_poisson_exact(&shot, 3 * n + i, mu));
        checked++;
    }
    ck_assert_uint_gt(checked, n / 2);
    free(in);
    free(o1);
    free(o2);
    sensim_camera_destroy(c);
}
END_TEST

START_TEST(fov_formula_known_pixels)
{
    /* seed 000 eqs. 1-2, w = 0.704 (the paper's Fig. 10). */
    const double w = 0.704, T = tan(w), s = tan(T) / T;
    sensim_lens fov = {.model = SENSIM_LENS_FOV, .width = 640, .height = 480, .hfov = 2 * w},
                pin = {.model = SENSIM_LENS_PINHOLE, .width = 640, .height = 480, .hfov = 2 * w};
    ck_assert_int_eq(sensim_lens_check(&fov), SENSIM_OK);
    double d[3];
    /* Right edge on the horizontal axis: FOV kept (angle w) for both. */
    sensim_lens_pixel_to_dir(&fov, 640, 240, d);
    ck_assert_within(atan2(d[0], d[2]), w, 1e-12);
    sensim_lens_pixel_to_dir(&pin, 640, 240, d);
    ck_assert_within(atan2(d[0], d[2]), w, 1e-12);
    /* u = 480: x1 = 0.5, x2 = 0.5 r2/(0.5 s), tan(angle) = x2 tan w. */
    sensim_lens_pixel_to_dir(&fov, 480, 240, d);
    double r2 = tan(0.5 * T) / T;
    ck_assert_within(d[0] / d[2], r2 / s * T, 1e-12);
    ck_assert_within(d[1], 0.0, 1e-15);
    sensim_lens_pixel_to_dir(&pin, 480, 240, d);
    ck_assert_within(d[0] / d[2], 0.5 * T, 1e-12);
    /* Off axis: (u, v) = (560, 420): x1 = 0.75, y1 = 0.75 * 0.75. */
    double x1 = 0.75, y1 = 0.5625, r1 = hypot(x1, y1), f = tan(r1 * T) / T / (r1 * s);
    sensim_lens_pixel_to_dir(&fov, 560, 420, d);
    ck_assert_within(d[0] / d[2], x1 * f * T, 1e-12);
    ck_assert_within(d[1] / d[2], y1 * f * T, 1e-12);
    /* The centre looks along the axis. */
    sensim_lens_pixel_to_dir(&fov, 320, 240, d);
    ck_assert_within(d[2], 1.0, 1e-15);
}
END_TEST

START_TEST(lens_inverse_round_trips)
{
    sensim_lens lenses[2] = {{.model = SENSIM_LENS_FOV, .width = 1280, .height = 720, .hfov = 1.6},
                             {.model = SENSIM_LENS_PINHOLE, .width = 1280, .height = 720, .hfov = 1.6}};
    for (int k = 0; k < 2; k++)
        for (double v = 0; v <= 720; v += 37.5)
            for (double u = 0; u <= 1280; u += 41.25) {
                double d[3], uu, vv;
                sensim_lens_pixel_to_dir(&lenses[k], u, v, d);
                ck_assert_within(d[0] * d[0] + d[1] * d[1] + d[2] * d[2], 1.0, 1e-12);
                ck_assert_int_eq(sensim_lens_dir_to_pixel(&lenses[k], d, &uu, &vv), 1);
                ck_assert_within(uu, u, 1e-8);
                ck_assert_within(vv, v, 1e-8);
            }
    double back[3] = {0, 0, -1}, uu, vv;
    ck_assert_int_eq(sensim_lens_dir_to_pixel(&lenses[0], back, &uu, &vv), 0);
}
END_TEST

START_TEST(remap_linear_ramp_and_inverse)
{
    /* A source image linear in u is reproduced exactly by bilinear sampling,
     * so each remapped pixel must equal the ramp at the source coordinate the
     * lens functions predict (f32: 1e-6). Then FOV -> pinhole -> compare to
     * the original in the interior: the FOV image is no longer linear in
     * pixels, so the second bilinear step errs by up to h^2/8 times its
     * second derivative (about 1e-5 here); tolerance 1e-4. */
    const size_t W = 160, H = 120;
    sensim_lens pin = {.model = SENSIM_LENS_PINHOLE, .width = W, .height = H, .hfov = 1.4},
                fov = {.model = SENSIM_LENS_FOV, .width = W, .height = H, .hfov = 1.4};
    float *src = malloc(W * H * sizeof *src), *dst = malloc(W * H * sizeof *dst), *back = malloc(W * H * sizeof *back);
    for (size_t j = 0; j < H; j++)
        for (size_t i = 0; i < W; i++)
            src[j * W + i] = (float)((i + 0.5) / W * 0.8 + 0.1);
    sensim_remap *m = sensim_remap_create(&pin, &fov), *mi = sensim_remap_create(&fov, &pin);
    ck_assert_ptr_nonnull(m);
    ck_assert_int_eq(sensim_remap_apply(m, SENSIM_PIXEL_F32, 1, 0.0, src, dst), SENSIM_OK);
    ck_assert_int_eq(sensim_remap_apply(mi, SENSIM_PIXEL_F32, 1, 0.0, dst, back), SENSIM_OK);
    for (size_t j = 2; j < H - 2; j += 3)
        for (size_t i = 2; i < W - 2; i += 3) {
            double d[3], u, v;
            sensim_lens_pixel_to_dir(&fov, i + 0.5, j + 0.5, d);
            ck_assert(sensim_lens_dir_to_pixel(&pin, d, &u, &v));
            /* The FOV corners see beyond the pinhole frame: filled. */
            if (u < 0 || u > W || v < 0 || v > H)
                ck_assert_float_eq(dst[j * W + i], 0.0f);
            else if (u > 1 && u < W - 1 && v > 1 && v < H - 1)
                ck_assert_within(dst[j * W + i], u / W * 0.8 + 0.1, 1e-6);
            if (i > W / 5 && i < W - W / 5 && j > H / 5 && j < H - H / 5)
                ck_assert_within(back[j * W + i], src[j * W + i], 1e-4);
        }
    ck_assert_int_ne(sensim_remap_apply(m, SENSIM_PIXEL_F32, 1, 0.0, src, src), SENSIM_OK);
    sensim_remap_destroy(m);
    sensim_remap_destroy(mi);
    sensim_remap_destroy(NULL);
    free(src);
    free(dst);
    free(back);
}
END_TEST

START_TEST(bad_parameters)
{
    sensim_camera_params p = sensim_camera_default_params();
    p.model = SENSIM_CAMERA_NOISE_INTENSITY;
    p.width = 10;
    p.height = 10;
    p.variance_slope = -1;
    ck_assert_ptr_null(sensim_camera_create(&p, 1, 1));
    ck_assert_ptr_nonnull(strstr(sensim_last_error(), "variance_slope"));
    p.variance_slope = 0;
    p.channels = 2;
    ck_assert_ptr_null(sensim_camera_create(&p, 1, 1));
    ck_assert_ptr_nonnull(strstr(sensim_last_error(), "channels"));
    p.channels = 1;
    p.width = 0;
    ck_assert_ptr_null(sensim_camera_create(&p, 1, 1));
    ck_assert_ptr_nonnull(strstr(sensim_last_error(), "width"));
    p.width = 10;
    p.model = SENSIM_CAMERA_NOISE_EMVA;
    p.gain = 0;
    ck_assert_ptr_null(sensim_camera_create(&p, 1, 1));
    ck_assert_ptr_nonnull(strstr(sensim_last_error(), "gain"));
    p.gain = 1;
    p.adc_bits = 17;
    ck_assert_ptr_null(sensim_camera_create(&p, 1, 1));
    ck_assert_ptr_nonnull(strstr(sensim_last_error(), "adc_bits"));
    p.adc_bits = 12;
    p.quantum_efficiency = 1.5;
    ck_assert_ptr_null(sensim_camera_create(&p, 1, 1));
    ck_assert_ptr_nonnull(strstr(sensim_last_error(), "quantum_efficiency"));
    p.quantum_efficiency = 0.5;
    sensim_camera *c = sensim_camera_create(&p, 1, 1);
    ck_assert_ptr_nonnull(c);
    ck_assert_int_eq(sensim_camera_apply(c, 0, SENSIM_PIXEL_U8, NULL, NULL), SENSIM_EINVAL);
    sensim_camera_destroy(c);
    sensim_camera_destroy(NULL);
    sensim_lens l = {.model = SENSIM_LENS_FOV, .width = 640, .height = 480, .hfov = 2.5};
    ck_assert_int_eq(sensim_lens_check(&l), SENSIM_EINVAL);
    ck_assert_ptr_nonnull(strstr(sensim_last_error(), "pi/2"));
    l.hfov = 0;
    ck_assert_int_eq(sensim_lens_check(&l), SENSIM_EINVAL);
    ck_assert_ptr_nonnull(strstr(sensim_last_error(), "hfov"));
}
END_TEST


/* ---- the camera sensor type through a rig (models/camera_rig.c) ---- */

#include "sensim/log.h"
#include "sensim/rig.h"

static const char rig_text[] =
    "seed: 5\n"
    "sensors:\n"
    "  - name: cam\n"
    "    type: camera\n"
    "    noise: { model: intensity, variance_slope: 4.0e-4, variance_intercept: 2.5e-5 }\n"
    "  - name: lidar\n"
    "    type: lidar\n"
    "    noise: { range_sigma_base: 0.02, range_sigma_slope: 0.001, azimuth_sigma: 0.001, elevation_sigma: 0.001 }\n";

/* A log with /sensors/cam/image u16 [N,H,W] at one grey level and a tiny
 * lidar scan; the image dataset's shape and type can be varied. */
static void write_cam_log(const char *path, int rank, sensim_dtype type, size_t N, size_t H, size_t W)
{
    sensim_log *l = sensim_log_create(path, "test");
    ck_assert_ptr_nonnull(l);
    double *t = malloc(N * sizeof *t);
    for (size_t k = 0; k < N; k++)
        t[k] = 0.1 * k;
    ck_assert_int_eq(sensim_log_write(l, "/sensors/cam/t", SENSIM_F64, N, 0, NULL, t, "s"), SENSIM_OK);
    size_t tail[2] = {H, W}, n = N * H * W;
    unsigned char *img = calloc(n, 8);
    for (size_t i = 0; i < n; i++)
        if (type == SENSIM_U16)
            ((uint16_t *)img)[i] = 32768;
    ck_assert_int_eq(sensim_log_write(l, "/sensors/cam/image", type, N, rank - 1, tail, img, "1"), SENSIM_OK);
    float pts[8] = {10, 0, 0, 0.5f, 0, 20, 0, 0.5f};
    uint64_t off[3] = {0, 1, 2};
    double ts[2] = {0, 0.1};
    size_t four = 4;
    ck_assert_int_eq(sensim_log_write(l, "/sensors/lidar/points", SENSIM_F32, 2, 1, &four, pts, "m"), SENSIM_OK);
    ck_assert_int_eq(sensim_log_write(l, "/sensors/lidar/scan_offset", SENSIM_U64, 3, 0, NULL, off, ""), SENSIM_OK);
    ck_assert_int_eq(sensim_log_write(l, "/sensors/lidar/t", SENSIM_F64, 2, 0, NULL, ts, "s"), SENSIM_OK);
    ck_assert_int_eq(sensim_log_commit(l), SENSIM_OK);
    free(t);
    free(img);
}

START_TEST(camera_rig_inject)
{
    /* The rig on 4 frames of 64x64 at I = 0.5: 16384 pixels, so the
     * variance is checked within 5 SE (5 sqrt(2/n) relative); the output is
     * identical at 1 and 2 threads. */
    char *dir = tu_mkdtemp(), *in = tu_path(dir, "in.h5"), *o1 = tu_path(dir, "o1.h5"), *o2 = tu_path(dir, "o2.h5");
    const size_t N = 4, H = 64, W = 64, n = N * H * W;
    write_cam_log(in, 3, SENSIM_U16, N, H, W);
    sensim_rig *rig = sensim_rig_load_string(rig_text, "rig.yaml");
    ck_assert_msg(rig != NULL, "%s", sensim_last_error());
    sensim_inject_opts o = {rig->seed, 1, 0, NULL, NULL};
    omp_set_num_threads(1);
    ck_assert_msg(sensim_rig_inject(rig, &o, in, o1) == SENSIM_OK, "%s", sensim_last_error());
    omp_set_num_threads(2);
    o.threads = 2;
    ck_assert_msg(sensim_rig_inject(rig, &o, in, o2) == SENSIM_OK, "%s", sensim_last_error());
    sensim_log *a = sensim_log_open(o1), *b = sensim_log_open(o2);
    uint16_t *ia = malloc(2 * n), *ib = malloc(2 * n);
    ck_assert_int_eq(sensim_log_read(a, "/sensors/cam/image", SENSIM_U16, 0, N, ia), SENSIM_OK);
    ck_assert_int_eq(sensim_log_read(b, "/sensors/cam/image", SENSIM_U16, 0, N, ib), SENSIM_OK);
    ck_assert(memcmp(ia, ib, 2 * n) == 0);
    double *x = malloc(n * sizeof *x), I = 32768.0 / 65535;
    for (size_t i = 0; i < n; i++)
        x[i] = ia[i] / 65535.0;
    double v = 4.0e-4 * I + 2.5e-5;
    ck_assert_within(tu_var(x, n, 1), v, 5 * v * sqrt(2.0 / n));
    ck_assert_within(tu_mean(x, n, 1), I, 5 * sqrt(v / n));
    ck_assert(sensim_log_exists(a, "/sensors/cam/t"));
    ck_assert(sensim_log_exists(a, "/sensors/lidar/points"));
    char *type = NULL;
    ck_assert_int_eq(sensim_log_get_attr_string(a, "/sensors/cam", "type", &type), SENSIM_OK);
    ck_assert_str_eq(type, "camera");
    free(type);
    sensim_log_close(a);
    sensim_log_close(b);
    free(ia);
    free(ib);
    free(x);
    sensim_rig_free(rig);
    tu_rmtree(dir);
    free(dir);
    free(in);
    free(o1);
    free(o2);
}
END_TEST

START_TEST(camera_rig_bad_input)
{
    char *dir = tu_mkdtemp(), *in = tu_path(dir, "in.h5"), *out = tu_path(dir, "out.h5");
    sensim_rig *rig = sensim_rig_load_string(rig_text, "rig.yaml");
    sensim_inject_opts o = {5, 0, 0, NULL, NULL};
    /* Wrong shape: [N, H] frames. */
    write_cam_log(in, 2, SENSIM_U16, 3, 8, 1);
    ck_assert_int_ne(sensim_rig_inject(rig, &o, in, out), SENSIM_OK);
    ck_assert_ptr_nonnull(strstr(sensim_last_error(), "/sensors/cam/image"));
    ck_assert_ptr_nonnull(strstr(sensim_last_error(), "rank 2"));
    ck_assert(!tu_file_exists(out));
    /* Wrong bit depth: f64 frames. */
    write_cam_log(in, 3, SENSIM_F64, 2, 4, 4);
    ck_assert_int_ne(sensim_rig_inject(rig, &o, in, out), SENSIM_OK);
    ck_assert_ptr_nonnull(strstr(sensim_last_error(), "bit depth"));
    ck_assert(!tu_file_exists(out));
    sensim_rig_free(rig);
    /* Bad parameters name the file, line and key. */
    tu_rig_rejects("sensors:\n  - name: c\n    type: camera\n"
                   "    noise: { model: intensity, variance_slope: -1 }\n",
                   "bad.yaml:4", "variance_slope", NULL);
    tu_rig_rejects("sensors:\n  - name: c\n    type: camera\n"
                   "    noise: { model: emva, adc_bits: 20 }\n",
                   "adc_bits", NULL);
    tu_rig_rejects("sensors:\n  - name: c\n    type: camera\n"
                   "    noise: { model: fancy }\n",
                   "fancy", NULL);
    tu_rig_rejects("sensors:\n  - name: c\n    type: camera\n"
                   "    lens: { model: fov, hfov: \"170 deg\" }\n",
                   "hfov", NULL);
    tu_rmtree(dir);
    free(dir);
    free(in);
    free(out);
}
END_TEST

Suite *suite_camera(void)
{
    Suite *s = suite_create("camera");
    TCase *tc = tcase_create("camera");
    tcase_add_test(tc, intensity_variance_line);
    tcase_add_test(tc, intensity_known_answer);
    tcase_add_test(tc, emva_known_answer);
    tcase_add_test(tc, nan_stays_nan);
    tcase_add_test(tc, no_wraparound_at_rails);
    tcase_add_test(tc, poisson_mean_equals_variance);
    tcase_add_test(tc, exact_poisson_draws_are_the_samplers);
    tcase_add_test(tc, emva_chain_moments);
    tcase_add_test(tc, fixed_patterns_frames_and_seeds);
    tcase_add_test(tc, same_output_any_thread_count);
    tcase_add_test(tc, fov_formula_known_pixels);
    tcase_add_test(tc, lens_inverse_round_trips);
    tcase_add_test(tc, remap_linear_ramp_and_inverse);
    tcase_add_test(tc, bad_parameters);
    tcase_add_test(tc, camera_rig_inject);
    tcase_add_test(tc, camera_rig_bad_input);
    suite_add_tcase(s, tc);
    return s;
}
