/* Lidar noise on replayed scans: range sigma against base + slope * range,
 * angular sigma, dropout rates against binomial tolerances, quantization,
 * detection threshold, thread independence, bad parameters. The lidar fit
 * (calib/lidar_fit.c) tests are in this suite too. */
#include <math.h>
#include <omp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sensim/lidar.h"
#include "testutil.h"

/* n points at range r spread over azimuths, intensity `in`. */
static float *ring(size_t n, double r, double in, float **range, float **az, float **el)
{
    float *p = malloc(n * 4 * sizeof *p);
    *range = malloc(n * sizeof **range);
    *az = malloc(n * sizeof **az);
    *el = malloc(n * sizeof **el);
    for (size_t i = 0; i < n; i++) {
        double a = -3.0 + 6.0 * i / n, e = 0.1 * sin(i * 0.01);
        p[4 * i] = (float)(r * cos(e) * cos(a));
        p[4 * i + 1] = (float)(r * cos(e) * sin(a));
        p[4 * i + 2] = (float)(r * sin(e));
        p[4 * i + 3] = (float)in;
        (*range)[i] = (float)r;
        (*az)[i] = (float)a;
        (*el)[i] = (float)e;
    }
    return p;
}

START_TEST(range_sigma_grows_with_range)
{
    /* sigma = 0.02 + 0.001 r at r = 5, 20, 60, 150 m; n = 20000 points per
     * range: SE of the sample sd is sigma/sqrt(2n) = 0.5 % of sigma, checked
     * at 5 SE. Range is recomputed from the noisy x, y, z too, which checks
     * that the noise is mapped back to the point. */
    const size_t n = 20000;
    const double ranges[4] = {5, 20, 60, 150};
    sensim_lidar_params p = sensim_lidar_default_params();
    p.range_sigma_base = 0.02;
    p.range_sigma_slope = 0.001;
    p.azimuth_sigma = 0.001;
    p.elevation_sigma = 0.001;
    sensim_lidar *l = sensim_lidar_create(&p, 5, 9);
    ck_assert_ptr_nonnull(l);
    for (int k = 0; k < 4; k++) {
        float *rg, *az, *el, *pts = ring(n, ranges[k], 0.5, &rg, &az, &el);
        float *out = malloc(n * 4 * sizeof *out), *ro = malloc(n * sizeof *ro), *ao = malloc(n * sizeof *ao);
        uint8_t *keep = malloc(n);
        sensim_lidar_block b = {n, (uint64_t)k * n, pts, rg, az, el, out, ro, ao, NULL, keep};
        size_t kept;
        ck_assert_int_eq(sensim_lidar_apply(l, &b, &kept), SENSIM_OK);
        ck_assert_uint_eq(kept, n);
        double *dr = malloc(n * sizeof *dr), *dx = malloc(n * sizeof *dx), *da = malloc(n * sizeof *da);
        for (size_t i = 0; i < n; i++) {
            dr[i] = ro[i] - ranges[k];
            dx[i] = sqrt((double)out[4 * i] * out[4 * i] + (double)out[4 * i + 1] * out[4 * i + 1] +
                         (double)out[4 * i + 2] * out[4 * i + 2]) - ranges[k];
            da[i] = (double)ao[i] - az[i];
        }
        double sigma = 0.02 + 0.001 * ranges[k];
        ck_assert_within(sensim_lidar_range_sigma(&p, ranges[k]), sigma, 1e-15);
        ck_assert_within(sqrt(tu_var(dr, n, 1)), sigma, 5 * sigma / sqrt(2.0 * n));
        ck_assert_within(tu_mean(dr, n, 1), 0.0, 5 * sigma / sqrt((double)n));
        /* float32 rounding of x, y, z adds at most ~1e-5 m at 150 m. */
        ck_assert_within(sqrt(tu_var(dx, n, 1)), sigma, 5 * sigma / sqrt(2.0 * n) + 1e-5);
        ck_assert_within(sqrt(tu_var(da, n, 1)), 0.001, 5 * 0.001 / sqrt(2.0 * n) + 1e-6);
        free(dr);
        free(dx);
        free(da);
        free(pts);
        free(rg);
        free(az);
        free(el);
        free(out);
        free(ro);
        free(ao);
        free(keep);
    }
    sensim_lidar_destroy(l);
}
END_TEST

static double drop_rate(const sensim_lidar_params *p, double intensity, size_t n)
{
    sensim_lidar *l = sensim_lidar_create(p, 77, 3);
    ck_assert_ptr_nonnull(l);
    float *rg, *az, *el, *pts = ring(n, 10, intensity, &rg, &az, &el);
    float *out = malloc(n * 4 * sizeof *out);
    uint8_t *keep = malloc(n);
    sensim_lidar_block b = {n, 0, pts, NULL, NULL, NULL, out, NULL, NULL, NULL, keep};
    size_t kept;
    ck_assert_int_eq(sensim_lidar_apply(l, &b, &kept), SENSIM_OK);
    size_t k2 = 0;
    for (size_t i = 0; i < n; i++)
        k2 += keep[i];
    ck_assert_uint_eq(k2, kept);
    free(pts);
    free(rg);
    free(az);
    free(el);
    free(out);
    free(keep);
    sensim_lidar_destroy(l);
    return 1.0 - (double)kept / n;
}

START_TEST(dropout_rates_binomial)
{
    /* n = 40000 points; a drop probability q is checked within 5 binomial
     * SE sqrt(q (1-q) / n). */
    const size_t n = 40000;
#define BINOM(q) (5 * sqrt((q) * (1 - (q)) / n) + 1e-12)
    sensim_lidar_params p = sensim_lidar_default_params();
    p.dropoff_general_rate = 0.45;
    ck_assert_within(drop_rate(&p, 0.5, n), 0.45, BINOM(0.45));
    /* CARLA's rule: limit 0.8, zero-intensity drop 0.4: at i, the drop
     * probability is 0.4 (1 - i/0.8) below the limit, 0 above. */
    p.dropoff_general_rate = 0;
    p.dropoff_intensity_limit = 0.8;
    p.dropoff_zero_intensity = 0.4;
    ck_assert_within(drop_rate(&p, 0.0, n), 0.4, BINOM(0.4));
    ck_assert_within(drop_rate(&p, 0.4, n), 0.2, BINOM(0.2));
    ck_assert_within(drop_rate(&p, 0.9, n), 0.0, 0.0);
    /* Both: keep = (1 - 0.45) (1 - 0.2). */
    p.dropoff_general_rate = 0.45;
    ck_assert_within(drop_rate(&p, 0.4, n), 1 - 0.55 * 0.8, BINOM(0.56));
    /* Detection threshold on noisy intensity: sigma 0.1 around 0.3 with a
     * threshold 0.3 drops half. */
    p = sensim_lidar_default_params();
    p.intensity_sigma = 0.1;
    p.min_intensity = 0.3;
    ck_assert_within(drop_rate(&p, 0.3, n), 0.5, BINOM(0.5));
    ck_assert_within(drop_rate(&p, 0.9, n), 0.0, 0.0);
#undef BINOM
}
END_TEST

START_TEST(quantization_and_passthrough)
{
    const size_t n = 1000;
    float *rg, *az, *el, *pts = ring(n, 12.3456, 0.7, &rg, &az, &el);
    float *out = malloc(n * 4 * sizeof *out), *ro = malloc(n * sizeof *ro);
    uint8_t *keep = malloc(n);
    sensim_lidar_params p = sensim_lidar_default_params();
    sensim_lidar *l = sensim_lidar_create(&p, 1, 1);
    sensim_lidar_block b = {n, 0, pts, rg, az, el, out, ro, NULL, NULL, keep};
    size_t kept;
    sensim_lidar_apply(l, &b, &kept);
    /* No noise: points unchanged bit for bit. */
    ck_assert(memcmp(out, pts, n * 4 * sizeof *out) == 0);
    sensim_lidar_destroy(l);
    p.range_sigma_base = 0.01;
    p.range_resolution = 0.004;
    l = sensim_lidar_create(&p, 1, 1);
    sensim_lidar_apply(l, &b, &kept);
    for (size_t i = 0; i < n; i++) {
        double q = ro[i] / 0.004;
        ck_assert_within(q, round(q), 1e-3); /* float32 of a multiple of 4 mm */
    }
    sensim_lidar_destroy(l);
    /* Empty block. */
    sensim_lidar_block e = {0, 0, pts, NULL, NULL, NULL, out, NULL, NULL, NULL, keep};
    l = sensim_lidar_create(&p, 1, 1);
    kept = 99;
    ck_assert_int_eq(sensim_lidar_apply(l, &e, &kept), SENSIM_OK);
    ck_assert_uint_eq(kept, 0);
    /* NaN points are dropped. */
    pts[0] = NAN;
    sensim_lidar_block b1 = {1, 0, pts, NULL, NULL, NULL, out, NULL, NULL, NULL, keep};
    sensim_lidar_apply(l, &b1, &kept);
    ck_assert_uint_eq(kept, 0);
    sensim_lidar_destroy(l);
    free(pts);
    free(rg);
    free(az);
    free(el);
    free(out);
    free(ro);
    free(keep);
}
END_TEST

START_TEST(lidar_same_output_any_thread_count_and_block)
{
    const size_t n = 5003;
    float *rg, *az, *el, *pts = ring(n, 30, 0.3, &rg, &az, &el);
    float *o1 = malloc(n * 16), *o2 = malloc(n * 16);
    uint8_t *k1 = malloc(n), *k2 = malloc(n);
    sensim_lidar_params p = sensim_lidar_default_params();
    p.range_sigma_base = 0.02;
    p.azimuth_sigma = 0.002;
    p.intensity_sigma = 0.05;
    p.dropoff_general_rate = 0.1;
    p.dropoff_intensity_limit = 0.8;
    p.dropoff_zero_intensity = 0.4;
    sensim_lidar *l = sensim_lidar_create(&p, 9, 2);
    sensim_lidar_block b = {n, 100, pts, NULL, NULL, NULL, o1, NULL, NULL, NULL, k1};
    omp_set_num_threads(1);
    sensim_lidar_apply(l, &b, NULL);
    omp_set_num_threads(2);
    /* In two blocks of uneven size. */
    sensim_lidar_block b2 = {1234, 100, pts, NULL, NULL, NULL, o2, NULL, NULL, NULL, k2};
    sensim_lidar_apply(l, &b2, NULL);
    sensim_lidar_block b3 = {n - 1234, 1334, pts + 4 * 1234, NULL, NULL, NULL, o2 + 4 * 1234, NULL, NULL, NULL,
                             k2 + 1234};
    sensim_lidar_apply(l, &b3, NULL);
    ck_assert(memcmp(o1, o2, n * 16) == 0);
    ck_assert(memcmp(k1, k2, n) == 0);
    sensim_lidar_destroy(l);
    free(pts);
    free(rg);
    free(az);
    free(el);
    free(o1);
    free(o2);
    free(k1);
    free(k2);
}
END_TEST

START_TEST(lidar_bad_parameters)
{
    sensim_lidar_params p = sensim_lidar_default_params();
    p.range_sigma_slope = -0.1;
    ck_assert_ptr_null(sensim_lidar_create(&p, 1, 1));
    ck_assert_ptr_nonnull(strstr(sensim_last_error(), "range_sigma_slope"));
    p = sensim_lidar_default_params();
    p.dropoff_general_rate = 1.5;
    ck_assert_ptr_null(sensim_lidar_create(&p, 1, 1));
    ck_assert_ptr_nonnull(strstr(sensim_last_error(), "dropoff_general_rate"));
    p = sensim_lidar_default_params();
    p.dropoff_zero_intensity = 0.4;
    ck_assert_ptr_null(sensim_lidar_create(&p, 1, 1));
    ck_assert_ptr_nonnull(strstr(sensim_last_error(), "dropoff_intensity_limit"));
    p = sensim_lidar_default_params();
    p.azimuth_sigma = NAN;
    ck_assert_ptr_null(sensim_lidar_create(&p, 1, 1));
    ck_assert_ptr_nonnull(strstr(sensim_last_error(), "azimuth_sigma"));
    ck_assert_ptr_null(sensim_lidar_create(NULL, 1, 1));
    sensim_lidar_destroy(NULL);
}
END_TEST



/* ---- lidar range-noise fit (calib/lidar_fit.c) ---- */

#include "sensim/lidar_fit.h"
#include "sensim/rng.h"

START_TEST(lidar_fit_round_trip)
{
    /* 20 scans of 3000 static returns at 2..120 m on 4 beams, noised by the
     * model with base 0.02 m, slope 0.001, and beam biases; the fit must
     * recover base and slope within two 95 % half-widths (about 4 SE), and
     * each beam's bias within 5 SE of its mean (sigma/sqrt(points * scans)). */
    const size_t S = 20, M = 3000, B = 4;
    const double bias[4] = {0.0, 0.01, -0.02, 0.005};
    float *pts = malloc(M * 16), *ref = malloc(M * 4), *ranges = malloc(S * M * 4), *out = malloc(M * 16);
    float *ro = malloc(M * 4);
    uint16_t *ch = malloc(M * 2);
    uint8_t *keep = malloc(M);
    for (size_t i = 0; i < M; i++) {
        double r = 2 + 118.0 * i / (M - 1), a = i * 0.001, e = 0.05 * (double)(i % B);
        ch[i] = (uint16_t)(i % B);
        ref[i] = (float)r;
        pts[4 * i] = (float)(r * cos(e) * cos(a));
        pts[4 * i + 1] = (float)(r * cos(e) * sin(a));
        pts[4 * i + 2] = (float)(r * sin(e));
        pts[4 * i + 3] = 0.5f;
    }
    sensim_lidar_params p = sensim_lidar_default_params();
    p.range_sigma_base = 0.02;
    p.range_sigma_slope = 0.001;
    sensim_lidar *l = sensim_lidar_create(&p, 3, 3);
    for (size_t s = 0; s < S; s++) {
        sensim_lidar_block b = {M, s * M, pts, NULL, NULL, NULL, out, ro, NULL, NULL, keep};
        sensim_lidar_apply(l, &b, NULL);
        for (size_t i = 0; i < M; i++)
            ranges[s * M + i] = (float)(ro[i] + bias[ch[i]]);
    }
    ranges[5] = NAN; /* a dropped return */
    sensim_lidar_fit_result r;
    double bb[4], bs[4];
    ck_assert_int_eq(sensim_lidar_fit_range(ranges, S, M, ref, ch, B, bb, bs, &r), SENSIM_OK);
    ck_assert_uint_eq(r.points_used, M);
    ck_assert_within(r.sigma_base, 0.02, 2 * r.sigma_base_ci);
    ck_assert_within(r.sigma_slope, 0.001, 2 * r.sigma_slope_ci);
    ck_assert_double_lt(r.sigma_slope_ci, 1e-4);
    ck_assert_within(r.chi2_dof, 1.0, 0.2);
    for (size_t b = 0; b < B; b++)
        ck_assert_within(bb[b], bias[b], 5 * 0.08 / sqrt((double)S * M / B));
    /* Errors: too few scans, empty scans, bad channel. */
    ck_assert_int_eq(sensim_lidar_fit_range(ranges, 2, M, ref, ch, B, NULL, NULL, &r), SENSIM_EDATA);
    ck_assert_ptr_nonnull(strstr(sensim_last_error(), "at least 3"));
    ck_assert_int_eq(sensim_lidar_fit_range(ranges, S, 0, NULL, NULL, 0, NULL, NULL, &r), SENSIM_EDATA);
    ck_assert_ptr_nonnull(strstr(sensim_last_error(), "empty"));
    ch[7] = 9;
    ck_assert_int_eq(sensim_lidar_fit_range(ranges, S, M, ref, ch, B, NULL, NULL, &r), SENSIM_EDATA);
    ck_assert_ptr_nonnull(strstr(sensim_last_error(), "return 7"));
    sensim_lidar_destroy(l);
    free(pts);
    free(ref);
    free(ranges);
    free(out);
    free(ro);
    free(ch);
    free(keep);
}
END_TEST

/* Angular sigma from planar targets: returns on four planes (a wall turned
 * 50 degrees about the vertical, the ground, a wall tilted back 40 degrees,
 * a wall facing the sensor's side) are noised by the model in S scans; the range
 * line is fitted first, then the angular fit must recover azimuth and
 * elevation sigma within two 95 % half-widths (about 4 SE), the intervals
 * informative (below 15 % of the values), and the ground's normal. */
static size_t plane_scene(float *pts, int32_t *tgt, size_t per)
{
    /* Plane k: n.p + d = 0 with the normal pointing away from the sensor. */
    const double deg = M_PI / 180;
    const double nrm[4][3] = {{cos(50 * deg), sin(50 * deg), 0},
                              {0, 0, -1},
                              {cos(40 * deg) * cos(100 * deg), cos(40 * deg) * sin(100 * deg), sin(40 * deg)},
                              {cos(-100 * deg), sin(-100 * deg), 0}};
    const double dist[4] = {15, 2, 25, 30};
    const double az0[4] = {30, -40, 100, -100}, el0[4] = {0, -20, 5, 0}, span[4][2] = {{40, 20}, {60, 12}, {30, 20},
                                                                                        {30, 20}};
    size_t m = 0;
    for (int k = 0; k < 4; k++)
        for (size_t j = 0; j < per; j++) {
            /* A grid of directions over the target. */
            size_t side = (size_t)ceil(sqrt((double)per));
            double fa = (double)(j % side) / (side - 1) - 0.5, fe = (double)(j / side) / (side - 1) - 0.5;
            double az = (az0[k] + span[k][0] * fa) * deg, el = (el0[k] + span[k][1] * fe) * deg;
            double u[3] = {cos(el) * cos(az), cos(el) * sin(az), sin(el)};
            double un = u[0] * nrm[k][0] + u[1] * nrm[k][1] + u[2] * nrm[k][2];
            if (!(un > 0.05))
                continue; /* parallel to the plane or behind: no return */
            double r = dist[k] / un;
            for (int c = 0; c < 3; c++)
                pts[4 * m + c] = (float)(r * u[c]);
            pts[4 * m + 3] = 0.5f;
            tgt[m++] = k;
        }
    return m;
}

/* The noise of the plane tests: sigma_r = 0.02 + 0.001 r, azimuth 2 mrad,
 * elevation 1 mrad. */
static sensim_lidar_params plane_noise(void)
{
    sensim_lidar_params p = sensim_lidar_default_params();
    p.range_sigma_base = 0.02;
    p.range_sigma_slope = 0.001;
    p.azimuth_sigma = 0.002;
    p.elevation_sigma = 0.001;
    return p;
}

/* S noisy scans of the M points (sensor id 8, the given seed) into all
 * (S * M * 4) and, when not NULL, their ranges (S * M); ro, keep: M of
 * scratch. */
static void noise_scans(const sensim_lidar_params *p, uint64_t seed, const float *pts, size_t M, size_t S, float *all,
                        float *ranges, float *ro, uint8_t *keep)
{
    sensim_lidar *l = sensim_lidar_create(p, seed, 8);
    ck_assert_ptr_nonnull(l);
    for (size_t s = 0; s < S; s++) {
        sensim_lidar_block b = {M, s * M, pts, NULL, NULL, NULL, all + 4 * s * M, ro, NULL, NULL, keep};
        ck_assert_int_eq(sensim_lidar_apply(l, &b, NULL), SENSIM_OK);
        if (ranges)
            memcpy(ranges + s * M, ro, M * sizeof *ro);
    }
    sensim_lidar_destroy(l);
}

START_TEST(lidar_fit_constrained_and_negative)
{
    /* Issue 13 item 7. Range noise that decreases with range (sigma = 0.05
     * - 0.0003 r over 2..100 m, drawn directly): the free slope is < 0,
     * which the rig cannot hold; the fit says so and holds the slope at 0,
     * its base then the weighted mean sigma, between the extremes 0.02 and
     * 0.0494. A constant sigma (0.03 m) gives a line with slope >= 0 near
     * 0.03 m at mid-range (5 % of it: SE of a pooled sd over 400 x 29
     * degrees of freedom is 0.7 %). A negative
     * range is refused, naming scan and return. */
    const size_t S = 30, M = 400;
    float *ranges = malloc(S * M * sizeof *ranges), *ref = malloc(M * sizeof *ref);
    for (int kind = 0; kind < 2; kind++) {
        for (size_t i = 0; i < M; i++) {
            double r = 2 + 98.0 * i / (M - 1), sg = kind ? 0.03 : 0.05 - 0.0003 * r;
            ref[i] = (float)r;
            sensim_rng g = sensim_rng_make(21 + (uint64_t)kind, 1, (uint32_t)i);
            for (size_t sc = 0; sc < S; sc++)
                ranges[sc * M + i] = (float)(r + sg * sensim_rng_normal(&g, sc));
        }
        sensim_lidar_fit_result r;
        ck_assert_int_eq(sensim_lidar_fit_range(ranges, S, M, ref, NULL, 0, NULL, NULL, &r), SENSIM_OK);
        if (kind == 0) {
            ck_assert_int_eq(r.constrained, 1);
            ck_assert_double_lt(r.slope_free, 0);
            ck_assert_double_eq(r.sigma_slope, 0);
            ck_assert_msg(r.sigma_base > 0.02 && r.sigma_base < 0.0494, "base %g", r.sigma_base);
        } else {
            /* The free slope of a constant sigma is as often below 0 as
             * above: either way the written line has slope >= 0. */
            ck_assert_double_ge(r.sigma_slope, 0);
            ck_assert_within(r.sigma_base + 50 * r.sigma_slope, 0.03, 0.002);
        }
    }
    ranges[3 * M + 17] = -1.5f;
    sensim_lidar_fit_result r;
    ck_assert_int_eq(sensim_lidar_fit_range(ranges, S, M, ref, NULL, 0, NULL, NULL, &r), SENSIM_EDATA);
    ck_assert_ptr_nonnull(strstr(sensim_last_error(), "scan 3, return 17: range -1.5 m is negative"));
    free(ranges);
    free(ref);
}
END_TEST

/* Beam-pointing jitter, drawn here and not by sensim's lidar model: the
 * lidar reports the encoder direction u0 of each return of plane_scene
 * while the beam goes along u0 turned by daz ~ N(0, saz) in azimuth and
 * del ~ N(0, sel) in elevation; the range is where that beam meets the
 * plane plus N(0, (sb + ss r)^2); the point is range * u0. The planes are
 * plane_scene's (n.p = dist). */
static void jitter_scans(uint64_t seed, const float *pts, const int32_t *tgt, size_t M, size_t S, double sb,
                         double ss, double saz, double sel, float *all, float *ranges)
{
    const double deg = M_PI / 180;
    const double nrm[4][3] = {{cos(50 * deg), sin(50 * deg), 0},
                              {0, 0, -1},
                              {cos(40 * deg) * cos(100 * deg), cos(40 * deg) * sin(100 * deg), sin(40 * deg)},
                              {cos(-100 * deg), sin(-100 * deg), 0}};
    const double dist[4] = {15, 2, 25, 30};
    for (size_t i = 0; i < M; i++) {
        const float *p = pts + 4 * i;
        double r0 = sqrt((double)p[0] * p[0] + (double)p[1] * p[1] + (double)p[2] * p[2]);
        double u0[3] = {p[0] / r0, p[1] / r0, p[2] / r0}, az = atan2(u0[1], u0[0]), el = asin(u0[2]);
        const double *n = nrm[tgt[i]];
        sensim_rng g = sensim_rng_make(seed, 3, (uint32_t)i);
        for (size_t k = 0; k < S; k++) {
            double a = az + saz * sensim_rng_normal(&g, 3 * k), e = el + sel * sensim_rng_normal(&g, 3 * k + 1);
            double u[3] = {cos(e) * cos(a), cos(e) * sin(a), sin(e)};
            double rt = dist[tgt[i]] / (u[0] * n[0] + u[1] * n[1] + u[2] * n[2]);
            double rm = rt + (sb + ss * rt) * sensim_rng_normal(&g, 3 * k + 2);
            float *q = all + 4 * (k * M + i);
            for (int c = 0; c < 3; c++)
                q[c] = (float)(rm * u0[c]);
            q[3] = 0.5f;
            ranges[k * M + i] = (float)rm;
        }
    }
}

START_TEST(lidar_joint_fit_beam_jitter)
{
    /* Issue 13 item 6. Range sigma 0.02 m + 0.001 r, azimuth 2 mrad,
     * elevation 1 mrad of beam-pointing jitter, 12 scans of plane_scene.
     * The range-only fit on the raw ranges takes the jitter's range change
     * r (n.du)/(u.n) for range noise (base several times too large); the
     * joint fit must recover all four. 10 replicates: each 95 % interval
     * holds the truth in at least binom(10, 0.95)'s 1 % point, 7 of 10,
     * and chi2/dof stays near 1 (within 5 sd of sqrt(2/dof)). */
    const size_t S = 12, per = 1200;
    const double sb = 0.02, ss = 0.001, saz = 0.002, sel = 0.001;
    float *pts = malloc(4 * per * 16), *all = malloc(S * 4 * per * 16), *ranges = malloc(S * 4 * per * 4);
    int32_t *tgt = malloc(4 * per * sizeof *tgt);
    size_t M = plane_scene(pts, tgt, per);
    int cov[4] = {0}, reps = 10;
    for (int rep = 0; rep < reps; rep++) {
        jitter_scans(40 + (uint64_t)rep, pts, tgt, M, S, sb, ss, saz, sel, all, ranges);
        sensim_lidar_fit_result rf, rj;
        ck_assert_int_eq(sensim_lidar_fit_range(ranges, S, M, NULL, NULL, 0, NULL, NULL, &rf), SENSIM_OK);
        if (getenv("SENSIM_TEST_VERBOSE"))
            fprintf(stderr, "range-only: base %g slope %g\n", rf.sigma_base, rf.sigma_slope);
        sensim_lidar_angular_result ra;
        ck_assert_msg(sensim_lidar_fit_joint(all, S, M, tgt, 4, rf.sigma_base, rf.sigma_slope, NULL, &rj, &ra) ==
                          SENSIM_OK,
                      "%s", sensim_last_error());
        cov[0] += fabs(rj.sigma_base - sb) <= rj.sigma_base_ci;
        cov[1] += fabs(rj.sigma_slope - ss) <= rj.sigma_slope_ci;
        cov[2] += fabs(ra.azimuth_sigma - saz) <= ra.azimuth_sigma_ci;
        cov[3] += fabs(ra.elevation_sigma - sel) <= ra.elevation_sigma_ci;
        double dof = (double)ra.points_used - 4;
        ck_assert_msg(fabs(rj.chi2_dof - 1) < 5 * sqrt(2 / dof), "chi2/dof %g", rj.chi2_dof);
        if (getenv("SENSIM_TEST_VERBOSE"))
            fprintf(stderr, "jitter rep %d: base %.5g +- %.2g slope %.5g +- %.2g az %.5g +- %.2g el %.5g +- %.2g chi2 %.3g\n",
                    rep, rj.sigma_base, rj.sigma_base_ci, rj.sigma_slope, rj.sigma_slope_ci, ra.azimuth_sigma,
                    ra.azimuth_sigma_ci, ra.elevation_sigma, ra.elevation_sigma_ci, rj.chi2_dof);
    }
    for (int k = 0; k < 4; k++)
        ck_assert_msg(cov[k] >= 7, "coverage of 10: base %d, slope %d, az %d, el %d", cov[0], cov[1], cov[2], cov[3]);
    free(pts);
    free(all);
    free(ranges);
    free(tgt);
}
END_TEST

START_TEST(lidar_angular_fit_round_trip)
{
    const size_t S = 12, per = 1200;
    float *pts = malloc(4 * per * 16), *all = malloc(S * 4 * per * 16), *ranges = malloc(S * 4 * per * 4);
    float *ro = malloc(4 * per * 4);
    int32_t *tgt = malloc(4 * per * sizeof *tgt);
    uint8_t *keep = malloc(4 * per);
    size_t M = plane_scene(pts, tgt, per);
    ck_assert_uint_gt(M, 3 * per);
    sensim_lidar_params p = plane_noise();
    noise_scans(&p, 8, pts, M, S, all, ranges, ro, keep);
    all[4 * 9] = NAN; /* a dropped return */
    sensim_lidar_fit_result rf;
    ck_assert_int_eq(sensim_lidar_fit_range(ranges, S, M, NULL, NULL, 0, NULL, NULL, &rf), SENSIM_OK);
    sensim_lidar_angular_result r;
    double planes[16];
    ck_assert_int_eq(sensim_lidar_fit_angular(all, S, M, tgt, 4, rf.sigma_base, rf.sigma_slope, planes, &r),
                     SENSIM_OK);
    ck_assert_uint_eq(r.targets_used, 4);
    ck_assert_uint_eq(r.points_used, M);
    ck_assert_within(r.azimuth_sigma, p.azimuth_sigma, 2 * r.azimuth_sigma_ci);
    ck_assert_within(r.elevation_sigma, p.elevation_sigma, 2 * r.elevation_sigma_ci);
    ck_assert_double_lt(r.azimuth_sigma_ci, 0.15 * p.azimuth_sigma);
    ck_assert_double_lt(r.elevation_sigma_ci, 0.15 * p.elevation_sigma);
    ck_assert_within(r.chi2_dof, 1.0, 0.3);
    ck_assert_within(planes[4 + 2], -1.0, 1e-3); /* the ground, normal -z */
    ck_assert_within(planes[4 + 3], -2.0, 0.01);
    /* Errors: too few scans, empty scans, a target out of range, and
     * targets that cannot separate azimuth from elevation. */
    ck_assert_int_eq(sensim_lidar_fit_angular(all, 2, M, tgt, 4, 0.02, 0.001, NULL, &r), SENSIM_EDATA);
    ck_assert_ptr_nonnull(strstr(sensim_last_error(), "at least 3"));
    ck_assert_int_eq(sensim_lidar_fit_angular(all, S, 0, tgt, 4, 0.02, 0.001, NULL, &r), SENSIM_EDATA);
    ck_assert_ptr_nonnull(strstr(sensim_last_error(), "empty"));
    ck_assert_int_eq(sensim_lidar_fit_angular(all, S, M, tgt, 4, -1, 0.001, NULL, &r), SENSIM_EINVAL);
    ck_assert_ptr_nonnull(strstr(sensim_last_error(), "base"));
    tgt[7] = 4;
    ck_assert_int_eq(sensim_lidar_fit_angular(all, S, M, tgt, 4, 0.02, 0.001, NULL, &r), SENSIM_EDATA);
    ck_assert_ptr_nonnull(strstr(sensim_last_error(), "return 7"));
    for (size_t i = 0; i < M; i++)
        tgt[i] = tgt[i] == 1 ? 0 : -1; /* only the ground: blind to azimuth */
    ck_assert_int_eq(sensim_lidar_fit_angular(all, S, M, tgt, 4, 0.02, 0.001, NULL, &r), SENSIM_EDATA);
    ck_assert_ptr_nonnull(strstr(sensim_last_error(), "separate"));
    free(pts);
    free(all);
    free(ranges);
    free(ro);
    free(tgt);
    free(keep);
}
END_TEST

/* Planes, flatness and reference ranges (sensim_lidar_fit_planes) on the
 * four planes of plane_scene, noised as above in 12 scans. For a plane the
 * flatness statistic is a ratio of pooled sums over ~1000 returns, mean 1
 * and sd about sqrt(2/1000 + 2/(1000*11)) < 0.05: 1 +- 0.3 is > 6 sd. A
 * target bent by a 0.3 m sagitta (10 times the noise of a mean point) must
 * read far above 3, the threshold sensim fit lidar uses. Without noise a
 * plane reads 1 and the bent target INFINITY. References: where the mean
 * ray meets the fitted plane, within 5 cm of the true range (a mean point's
 * noise is below 2 cm and the plane is fitted to ~1000 of them). */
START_TEST(lidar_plane_flatness)
{
    const size_t S = 12, per = 1000;
    float *pts = malloc(4 * per * 16), *all = malloc(S * 4 * per * 16), *ro = malloc(4 * per * 4);
    float *ref = malloc(4 * per * sizeof *ref);
    int32_t *tgt = malloc(4 * per * sizeof *tgt);
    uint8_t *keep = malloc(4 * per);
    size_t M = plane_scene(pts, tgt, per), cnt[5];
    double planes[20], flat[5], fsd[5], truth[4 * 1000];
    for (size_t i = 0; i < M; i++)
        truth[i] = sqrt(pts[4 * i] * pts[4 * i] + pts[4 * i + 1] * pts[4 * i + 1] + pts[4 * i + 2] * pts[4 * i + 2]);
    /* Noise-free scans first. */
    for (size_t s = 0; s < S; s++)
        memcpy(all + 4 * s * M, pts, M * 16);
    ck_assert_int_eq(sensim_lidar_fit_planes(all, S, M, tgt, 5, planes, flat, NULL, cnt, ref), SENSIM_OK);
    for (int k = 0; k < 4; k++)
        ck_assert_double_eq(flat[k], 1.0);
    ck_assert_uint_eq(cnt[4], 0); /* target 4 has no returns */
    ck_assert(isnan(flat[4]) && isnan(planes[16]));
    sensim_lidar_params p = plane_noise();
    noise_scans(&p, 9, pts, M, S, all, NULL, ro, keep);
    ck_assert_int_eq(sensim_lidar_fit_planes(all, S, M, tgt, 4, planes, flat, fsd, cnt, ref), SENSIM_OK);
    size_t nref = 0;
    for (int k = 0; k < 4; k++) {
        ck_assert_msg(fabs(flat[k] - 1) < 0.3, "target %d: flatness %g", k, flat[k]);
        /* sd at least sqrt(2 / n), n ~ 1000 returns; below 0.1 */
        ck_assert_msg(fsd[k] >= sqrt(2.0 / cnt[k]) && fsd[k] < 0.1, "target %d: flatness sd %g", k, fsd[k]);
    }
    for (size_t i = 0; i < M; i++)
        if (isfinite(ref[i])) {
            ck_assert_msg(fabs(ref[i] - truth[i]) < 0.05, "return %zu: reference %g, range %g", i, ref[i], truth[i]);
            nref++;
        }
    ck_assert_uint_gt(nref, M / 2);
    /* Bend target 0 (the wall turned 50 deg): push each return along its
     * ray by a parabola across the wall, 0.3 m at the edges. */
    double zmin = INFINITY, zmax = -INFINITY;
    for (size_t i = 0; i < M; i++)
        if (tgt[i] == 0) {
            zmin = fmin(zmin, pts[4 * i + 2]);
            zmax = fmax(zmax, pts[4 * i + 2]);
        }
    for (size_t s = 0; s < S; s++)
        for (size_t i = 0; i < M; i++)
            if (tgt[i] == 0) {
                float *q = all + 4 * (s * M + i);
                double f = (pts[4 * i + 2] - 0.5 * (zmin + zmax)) / (0.5 * (zmax - zmin));
                double g = 1 + 0.3 * f * f / truth[i];
                for (int c = 0; c < 3; c++)
                    q[c] = (float)(q[c] * g);
            }
    ck_assert_int_eq(sensim_lidar_fit_planes(all, S, M, tgt, 4, planes, flat, NULL, NULL, NULL), SENSIM_OK);
    ck_assert_msg(flat[0] > 30, "bent target: flatness %g", flat[0]);
    ck_assert_msg(fabs(flat[1] - 1) < 0.3, "ground: flatness %g", flat[1]);
    /* The bent target without noise reads INFINITY. */
    for (size_t s = 1; s < S; s++)
        memcpy(all + 4 * s * M, all, M * 16);
    ck_assert_int_eq(sensim_lidar_fit_planes(all, S, M, tgt, 4, planes, flat, NULL, NULL, NULL), SENSIM_OK);
    ck_assert(isinf(flat[0]));
    /* Errors name what was wrong. */
    ck_assert_int_eq(sensim_lidar_fit_planes(all, 2, M, tgt, 4, planes, NULL, NULL, NULL, NULL), SENSIM_EDATA);
    ck_assert_ptr_nonnull(strstr(sensim_last_error(), "at least 3"));
    tgt[5] = 9;
    ck_assert_int_eq(sensim_lidar_fit_planes(all, S, M, tgt, 4, planes, NULL, NULL, NULL, NULL), SENSIM_EDATA);
    ck_assert_ptr_nonnull(strstr(sensim_last_error(), "return 5"));
    ck_assert_int_eq(sensim_lidar_fit_planes(all, S, M, tgt, 4, NULL, NULL, NULL, NULL, NULL), SENSIM_EINVAL);
    free(pts);
    free(all);
    free(ro);
    free(ref);
    free(tgt);
    free(keep);
}
END_TEST

/* ---- the lidar sensor type through a rig (models/lidar_rig.c) ---- */

#include "sensim/log.h"
#include "sensim/rig.h"

static const char lidar_rig[] =
    "seed: 5\n"
    "sensors:\n"
    "  - name: lidar\n"
    "    type: lidar\n"
    "    noise: { range_sigma_base: 0.02, range_sigma_slope: 0.001, azimuth_sigma: 0.001, elevation_sigma: 0.001 }\n"
    "    dropout: { dropoff_general_rate: 0.25 }\n";

/* S scans of P points at 25 m, with range/azimuth/elevation and channel. */
static void write_lidar_log(const char *path, size_t S, size_t P)
{
    size_t M = S * P, four = 4;
    sensim_log *l = sensim_log_create(path, "test");
    float *pts = malloc((M ? M : 1) * 16), *rg = malloc((M ? M : 1) * 4), *az = malloc((M ? M : 1) * 4),
          *el = malloc((M ? M : 1) * 4);
    uint16_t *ch = malloc((M ? M : 1) * 2);
    uint64_t *off = malloc((S + 1) * 8);
    double *t = malloc((S ? S : 1) * 8);
    for (size_t i = 0; i < M; i++) {
        double a = (i % P) * 0.001, e = ((double)(i % 16) - 8) * 0.05;
        rg[i] = 25.0f;
        az[i] = (float)a;
        el[i] = (float)e;
        pts[4 * i] = (float)(25 * cos(e) * cos(a));
        pts[4 * i + 1] = (float)(25 * cos(e) * sin(a));
        pts[4 * i + 2] = (float)(25 * sin(e));
        pts[4 * i + 3] = 0.5f;
        ch[i] = (uint16_t)(i % 16);
    }
    for (size_t k = 0; k <= S; k++)
        off[k] = k * P;
    for (size_t k = 0; k < S; k++)
        t[k] = 0.1 * k;
    ck_assert_int_eq(sensim_log_write(l, "/sensors/lidar/points", SENSIM_F32, M, 1, &four, pts, "m"), SENSIM_OK);
    ck_assert_int_eq(sensim_log_write(l, "/sensors/lidar/range", SENSIM_F32, M, 0, NULL, rg, "m"), SENSIM_OK);
    ck_assert_int_eq(sensim_log_write(l, "/sensors/lidar/azimuth", SENSIM_F32, M, 0, NULL, az, "rad"), SENSIM_OK);
    ck_assert_int_eq(sensim_log_write(l, "/sensors/lidar/elevation", SENSIM_F32, M, 0, NULL, el, "rad"), SENSIM_OK);
    ck_assert_int_eq(sensim_log_write(l, "/sensors/lidar/channel", SENSIM_U16, M, 0, NULL, ch, ""), SENSIM_OK);
    ck_assert_int_eq(sensim_log_write(l, "/sensors/lidar/scan_offset", SENSIM_U64, S + 1, 0, NULL, off, ""), SENSIM_OK);
    ck_assert_int_eq(sensim_log_write(l, "/sensors/lidar/t", SENSIM_F64, S, 0, NULL, t, "s"), SENSIM_OK);
    ck_assert_int_eq(sensim_log_commit(l), SENSIM_OK);
    free(pts);
    free(rg);
    free(az);
    free(el);
    free(ch);
    free(off);
    free(t);
}

START_TEST(lidar_rig_inject)
{
    /* 10 scans of 4000 points at 25 m: range sd 0.045 m (5 SE: 5 sd /
     * sqrt(2n)), kept fraction 0.75 (binomial 5 SE), scan offsets consistent
     * and channels carried with their points; identical at 1 and 2 threads. */
    char *dir = tu_mkdtemp(), *in = tu_path(dir, "in.h5"), *o1 = tu_path(dir, "o1.h5"), *o2 = tu_path(dir, "o2.h5");
    const size_t S = 10, P = 4000, M = S * P;
    write_lidar_log(in, S, P);
    sensim_rig *rig = sensim_rig_load_string(lidar_rig, "rig.yaml");
    ck_assert_msg(rig != NULL, "%s", sensim_last_error());
    sensim_inject_opts o = {rig->seed, 0, 0, NULL, NULL};
    omp_set_num_threads(1);
    ck_assert_msg(sensim_rig_inject(rig, &o, in, o1) == SENSIM_OK, "%s", sensim_last_error());
    omp_set_num_threads(2);
    ck_assert_msg(sensim_rig_inject(rig, &o, in, o2) == SENSIM_OK, "%s", sensim_last_error());
    sensim_log *a = sensim_log_open(o1), *b = sensim_log_open(o2);
    size_t four = 4, n, nb;
    ck_assert_int_eq(sensim_log_check_shape(a, "/sensors/lidar/points", 1, &four, &n), SENSIM_OK);
    ck_assert_int_eq(sensim_log_check_shape(b, "/sensors/lidar/points", 1, &four, &nb), SENSIM_OK);
    ck_assert_uint_eq(n, nb);
    ck_assert_within((double)n / M, 0.75, 5 * sqrt(0.75 * 0.25 / M));
    float *pa = malloc(n * 16), *pb = malloc(n * 16), *rg = malloc(n * 4);
    uint16_t *ch = malloc(n * 2);
    uint64_t off[11];
    sensim_log_read(a, "/sensors/lidar/points", SENSIM_F32, 0, n, pa);
    sensim_log_read(b, "/sensors/lidar/points", SENSIM_F32, 0, n, pb);
    ck_assert(memcmp(pa, pb, n * 16) == 0);
    ck_assert_int_eq(sensim_log_read(a, "/sensors/lidar/range", SENSIM_F32, 0, n, rg), SENSIM_OK);
    ck_assert_int_eq(sensim_log_read(a, "/sensors/lidar/channel", SENSIM_U16, 0, n, ch), SENSIM_OK);
    ck_assert_int_eq(sensim_log_read(a, "/sensors/lidar/scan_offset", SENSIM_U64, 0, S + 1, off), SENSIM_OK);
    ck_assert_uint_eq(off[0], 0);
    ck_assert_uint_eq(off[S], n);
    double *d = malloc(n * sizeof *d);
    for (size_t i = 0; i < n; i++) {
        d[i] = rg[i] - 25.0;
        /* Channel c was written at elevation (c - 8) 0.05 rad: the channel
         * must travel with its point (elevation noise 0.001 << 0.025). */
        double elv = asin(pa[4 * i + 2] / sqrt(pa[4 * i] * pa[4 * i] + pa[4 * i + 1] * pa[4 * i + 1] +
                                               pa[4 * i + 2] * pa[4 * i + 2]));
        ck_assert_int_eq((int)ch[i], (int)lround(elv / 0.05) + 8);
    }
    double sd = 0.02 + 0.001 * 25;
    ck_assert_within(sqrt(tu_var(d, n, 1)), sd, 5 * sd / sqrt(2.0 * n));
    for (size_t k = 0; k < S; k++)
        ck_assert_uint_le(off[k], off[k + 1]);
    sensim_log_close(a);
    sensim_log_close(b);
    free(pa);
    free(pb);
    free(rg);
    free(ch);
    free(d);
    sensim_rig_free(rig);
    tu_rmtree(dir);
    free(dir);
    free(in);
    free(o1);
    free(o2);
}
END_TEST

START_TEST(lidar_rig_bad_input)
{
    char *dir = tu_mkdtemp(), *in = tu_path(dir, "in.h5"), *out = tu_path(dir, "out.h5");
    sensim_rig *rig = sensim_rig_load_string(lidar_rig, "rig.yaml");
    sensim_inject_opts o = {5, 0, 0, NULL, NULL};
    write_lidar_log(in, 0, 0);
    ck_assert_int_ne(sensim_rig_inject(rig, &o, in, out), SENSIM_OK);
    ck_assert_ptr_nonnull(strstr(sensim_last_error(), "empty scans"));
    ck_assert(!tu_file_exists(out));
    sensim_rig_free(rig);
    tu_rig_rejects("sensors:\n  - name: l\n    type: lidar\n"
                   "    noise: { range_sigma_base: -0.02 }\n",
                   "bad.yaml:4", "range_sigma_base", NULL);
    tu_rig_rejects("sensors:\n  - name: l\n    type: lidar\n"
                   "    dropout: { dropoff_zero_intensity: 0.4 }\n",
                   "dropoff_intensity_limit", NULL);
    tu_rig_rejects("sensors:\n  - name: l\n    type: lidar\n"
                   "    noise: { range_sigma: 0.02 }\n",
                   "range_sigma", NULL);
    /* Angles take units. */
    sensim_rig *r2 = sensim_rig_load_string("sensors:\n  - name: l\n    type: lidar\n"
                                            "    noise: { azimuth_sigma: \"0.1 deg\" }\n",
                                            "ok.yaml");
    ck_assert_ptr_nonnull(r2);
    const sensim_lidar_params *lp = r2->sensors[0].model;
    ck_assert_within(lp->azimuth_sigma, 0.1 * M_PI / 180, 1e-15);
    sensim_rig_free(r2);
    tu_rmtree(dir);
    free(dir);
    free(in);
    free(out);
}
END_TEST

Suite *suite_lidarnoise(void)
{
    Suite *s = suite_create("lidarnoise");
    TCase *tc = tcase_create("lidar");
    tcase_add_test(tc, range_sigma_grows_with_range);
    tcase_add_test(tc, dropout_rates_binomial);
    tcase_add_test(tc, quantization_and_passthrough);
    tcase_add_test(tc, lidar_same_output_any_thread_count_and_block);
    tcase_add_test(tc, lidar_bad_parameters);
    tcase_add_test(tc, lidar_fit_round_trip);
    tcase_add_test(tc, lidar_fit_constrained_and_negative);
    tcase_add_test(tc, lidar_joint_fit_beam_jitter);
    tcase_add_test(tc, lidar_angular_fit_round_trip);
    tcase_add_test(tc, lidar_plane_flatness);
    tcase_add_test(tc, lidar_rig_inject);
    tcase_add_test(tc, lidar_rig_bad_input);
    suite_add_tcase(s, tc);
    return s;
}
