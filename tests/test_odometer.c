/* Encoder and odometer (seed 002 sections 5-6): wrap and clamp, binning,
 * microcontroller speed, noise and scaling, odometer from angle and from
 * speed with slip, scale error and pulses per revolution, block-size
 * independence, bad parameters. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sensim/log.h"
#include "sensim/odometer.h"
#include "sensim/yaml.h"
#include "testutil.h"

static sensim_encoder *enc_make(const sensim_encoder_params *p, uint64_t seed, uint32_t sensor_id)
{
    sensim_encoder *e = sensim_encoder_create(p, seed, sensor_id);
    ck_assert_msg(e != NULL, "%s", sensim_last_error());
    return e;
}

START_TEST(encoder_wrap_clamp_binning)
{
    const size_t n = 4001;
    double *t = malloc(n * sizeof *t), *u = malloc(n * sizeof *u), *r = malloc(n * sizeof *r);
    for (size_t i = 0; i < n; i++) {
        t[i] = 0.001 * (double)i;
        u[i] = -10.0 + 0.01 * (double)i; /* -10 .. 30 rad: several turns both sides of 0 */
    }
    sensim_encoder_params p = sensim_encoder_default_params();
    const double res = 2 * M_PI / 1024, range = 2 * M_PI;
    p.resolution = res;
    sensim_encoder *e = enc_make(&p, 1, 2);
    sensim_encoder_state st;
    sensim_encoder_reset(e, &st);
    sensim_encoder_apply(e, &st, n, t, u, r, NULL);
    for (size_t i = 0; i < n; i++) {
        double b = res * floor(u[i] / res);
        double w = b - range * floor(b / range);
        ck_assert(r[i] >= 0.0 && r[i] < range);
        ck_assert_within(r[i], w, 1e-9);
        /* A bin edge at or below the truth, within one bin (mod a turn). */
        double d = u[i] - r[i];
        d -= range * floor(d / range);
        ck_assert(d >= -1e-9 && d < res + 1e-9);
    }
    sensim_encoder_destroy(e);

    /* Absolute mode clamps to [lower, upper]. */
    p = sensim_encoder_default_params();
    p.mode = SENSIM_ENCODER_ABSOLUTE;
    p.lower = -1.0, p.upper = 1.0, p.resolution = 0.01;
    e = enc_make(&p, 1, 2);
    sensim_encoder_reset(e, &st);
    for (size_t i = 0; i < n; i++)
        u[i] = -3.0 + 0.0015 * (double)i;
    sensim_encoder_apply(e, &st, n, t, u, r, NULL);
    for (size_t i = 0; i < n; i++) {
        double b = 0.01 * floor(u[i] / 0.01);
        ck_assert_within(r[i], fmax(-1.0, fmin(b, 1.0)), 1e-12);
    }
    ck_assert(r[0] == -1.0 && r[n - 1] == 1.0);
    sensim_encoder_destroy(e);
    free(t), free(u), free(r);
}
END_TEST

START_TEST(encoder_speed_like_microcontroller)
{
    /* Shaft at w = 3 rad/s for 4 s (many wraps), then stopped for 2 s;
     * 500 bins per turn sampled at 1 kHz. The reading changes every
     * Tc = res/w = 4.19 ms, seen on the next sample, so every speed
     * between changes lies in [res/(Tc+dt), res/(Tc-dt)]. After the stop
     * the speed is bounded by res / (time since the last change). */
    const double w = 3.0, res = 2 * M_PI / 500, dt = 1e-3, Tc = res / w;
    const size_t n = 6000;
    double *t = malloc(n * sizeof *t), *u = malloc(n * sizeof *u), *sp = malloc(n * sizeof *sp);
    for (size_t i = 0; i < n; i++) {
        t[i] = dt * (double)i;
        u[i] = w * fmin(t[i], 4.0) + 1e-7;
    }
    for (int dir = 1; dir >= -1; dir -= 2) {
        double *ud = malloc(n * sizeof *ud);
        for (size_t i = 0; i < n; i++)
            ud[i] = dir * u[i];
        sensim_encoder_params p = sensim_encoder_default_params();
        p.resolution = res;
        sensim_encoder *e = enc_make(&p, 1, 2);
        sensim_encoder_state st;
        sensim_encoder_reset(e, &st);
        sensim_encoder_apply(e, &st, n, t, ud, NULL, sp);
        for (size_t i = 20; i < 4000; i++) {
            double s = dir * sp[i];
            ck_assert_msg(s >= res / (Tc + dt) * (1 - 1e-9) && s <= res / (Tc - dt) * (1 + 1e-9),
                          "speed %g at %zu", sp[i], i);
        }
        /* Mean over the run recovers w: the bins crossed over the time. */
        double m = 0;
        for (size_t i = 1000; i < 4000; i++)
            m += dir * sp[i];
        ck_assert_within(m / 3000, w, 0.15 * w);
        for (size_t i = 4100; i < n; i++)
            ck_assert(fabs(sp[i]) <= res / (t[i] - 4.0 - dt) * (1 + 1e-9));
        ck_assert(fabs(sp[n - 1]) < 0.01);
        sensim_encoder_destroy(e);
        free(ud);
    }
    free(t), free(u), free(sp);
}
END_TEST

START_TEST(encoder_noise_and_scale)
{
    /* sigma 0.02, scale 2, no binning, wide absolute range: the reading
     * minus 2u is N(0, sigma^2); n = 50000, SE(var)/var = sqrt(2/n) =
     * 6.3e-3, tolerance 5 SE. */
    const size_t n = 50000;
    double *t = malloc(n * sizeof *t), *u = malloc(n * sizeof *u), *r = malloc(n * sizeof *r);
    for (size_t i = 0; i < n; i++)
        t[i] = 0.01 * (double)i, u[i] = sin(t[i]);
    sensim_encoder_params p = sensim_encoder_default_params();
    p.mode = SENSIM_ENCODER_ABSOLUTE;
    p.lower = -100, p.upper = 100, p.noise_sigma = 0.02, p.scale = 2.0;
    sensim_encoder *e = enc_make(&p, 8, 2);
    sensim_encoder_state st;
    sensim_encoder_reset(e, &st);
    sensim_encoder_apply(e, &st, n, t, u, r, NULL);
    for (size_t i = 0; i < n; i++)
        r[i] -= 2.0 * u[i];
    ck_assert_within(tu_mean(r, n, 1), 0.0, 5 * 0.02 / sqrt(n));
    ck_assert_within(tu_var(r, n, 1), 4e-4, 5 * 4e-4 * sqrt(2.0 / n));
    sensim_encoder_destroy(e);
    free(t), free(u), free(r);
}
END_TEST

START_TEST(odometer_from_speed_and_angle)
{
    /* 2 m/s for 10 s at 100 Hz, R 0.3 m, slip 0.1, scale error 0.02, 100
     * pulses/rev: distance = R (1+se) res floor(angle/res), angle =
     * (1+slip) v t / R (trapezoid of a constant speed is exact). */
    const size_t n = 1001;
    const double R = 0.3, v = 2.0, slip = 0.1, se = 0.02, res = 2 * M_PI / 100;
    double *t = malloc(n * sizeof *t), *s = malloc(n * sizeof *s), *d = malloc(n * sizeof *d);
    for (size_t i = 0; i < n; i++)
        t[i] = 0.01 * (double)i, s[i] = v;
    sensim_odometer_params p = sensim_odometer_default_params();
    p.wheel_radius = R, p.slip = slip, p.scale_error = se, p.pulses_per_rev = 100;
    sensim_odometer *o = sensim_odometer_create(&p, 1, 5);
    ck_assert_msg(o != NULL, "%s", sensim_last_error());
    sensim_odometer_state st;
    sensim_odometer_reset(o, &st);
    sensim_odometer_apply_speed(o, &st, n, t, s, d);
    for (size_t i = 0; i < n; i++) {
        double ang = (1 + slip) * v * t[i] / R;
        ck_assert_within(d[i], R * (1 + se) * res * floor(ang / res), 1e-9);
    }
    ck_assert_within(d[n - 1], 20.0 * 1.1 * 1.02, R * 1.02 * res);
    sensim_odometer_destroy(o);

    /* From a wheel angle with noise: distance - R angle ~ N(0, 0.005^2);
     * n = 1001 is small, so only the variance is checked at 5 SE
     * (SE/var = sqrt(2/n) = 0.045). */
    p = sensim_odometer_default_params();
    p.wheel_radius = R, p.noise_sigma = 0.005;
    o = sensim_odometer_create(&p, 1, 5);
    sensim_odometer_reset(o, &st);
    for (size_t i = 0; i < n; i++)
        s[i] = 0.37 * (double)i; /* the angle */
    sensim_odometer_apply_angle(o, &st, n, s, d);
    for (size_t i = 0; i < n; i++)
        d[i] -= R * s[i];
    ck_assert_within(tu_var(d, n, 1), 2.5e-5, 5 * 2.5e-5 * sqrt(2.0 / n));
    sensim_odometer_destroy(o);
    free(t), free(s), free(d);
}
END_TEST

START_TEST(same_seed_any_block_size)
{
    const size_t n = 5000;
    double *t = malloc(n * sizeof *t), *u = malloc(n * sizeof *u);
    double *a = malloc(n * sizeof *a), *b = malloc(n * sizeof *b);
    double *sa = malloc(n * sizeof *sa), *sb = malloc(n * sizeof *sb);
    for (size_t i = 0; i < n; i++)
        t[i] = 0.002 * (double)i, u[i] = 5 * sin(t[i]) + t[i];
    sensim_encoder_params p = sensim_encoder_default_params();
    p.resolution = 0.01, p.noise_sigma = 0.003;
    sensim_encoder *e = enc_make(&p, 42, 9);
    sensim_encoder_state st;
    sensim_encoder_reset(e, &st);
    sensim_encoder_apply(e, &st, n, t, u, a, sa);
    sensim_encoder_reset(e, &st);
    const size_t sizes[] = {1, 3, 250, 17, 999};
    for (size_t done = 0, c = 0; done < n; c++) {
        size_t len = sizes[c % 5] < n - done ? sizes[c % 5] : n - done;
        sensim_encoder_apply(e, &st, len, t + done, u + done, b + done, sb + done);
        done += len;
    }
    ck_assert(memcmp(a, b, n * sizeof *a) == 0);
    ck_assert(memcmp(sa, sb, n * sizeof *sa) == 0);
    sensim_encoder_destroy(e);

    sensim_odometer_params q = sensim_odometer_default_params();
    q.pulses_per_rev = 64, q.noise_sigma = 0.01, q.slip = 0.05;
    sensim_odometer *o = sensim_odometer_create(&q, 42, 9);
    sensim_odometer_state os;
    sensim_odometer_reset(o, &os);
    sensim_odometer_apply_speed(o, &os, n, t, u, a);
    sensim_odometer_reset(o, &os);
    for (size_t done = 0, c = 0; done < n; c++) {
        size_t len = sizes[c % 5] < n - done ? sizes[c % 5] : n - done;
        sensim_odometer_apply_speed(o, &os, len, t + done, u + done, b + done);
        done += len;
    }
    ck_assert(memcmp(a, b, n * sizeof *a) == 0);
    sensim_odometer *o43 = sensim_odometer_create(&q, 43, 9);
    sensim_odometer_reset(o43, &os);
    sensim_odometer_apply_speed(o43, &os, n, t, u, b);
    ck_assert(memcmp(a, b, n * sizeof *a) != 0);
    sensim_odometer_destroy(o43);
    sensim_odometer_destroy(o);
    free(t), free(u), free(a), free(b), free(sa), free(sb);
}
END_TEST

START_TEST(bad_params_named)
{
    sensim_encoder_params p = sensim_encoder_default_params();
    p.upper = p.lower;
    ck_assert_ptr_null(sensim_encoder_create(&p, 1, 2));
    ck_assert_ptr_nonnull(strstr(sensim_last_error(), "upper > lower"));
    p = sensim_encoder_default_params();
    p.resolution = -0.1;
    ck_assert_ptr_null(sensim_encoder_create(&p, 1, 2));
    ck_assert_ptr_nonnull(strstr(sensim_last_error(), "resolution"));
    sensim_odometer_params q = sensim_odometer_default_params();
    q.wheel_radius = 0;
    ck_assert_ptr_null(sensim_odometer_create(&q, 1, 2));
    ck_assert_ptr_nonnull(strstr(sensim_last_error(), "wheel_radius"));
    q = sensim_odometer_default_params();
    q.slip = -1;
    ck_assert_ptr_null(sensim_odometer_create(&q, 1, 2));
    ck_assert_ptr_nonnull(strstr(sensim_last_error(), "slip"));
    sensim_encoder_destroy(NULL);
    sensim_odometer_destroy(NULL);
}
END_TEST

/* The default range depends on the source: a shaft angle (wheel, heading)
 * wraps into [0, 2 pi); a distance is unbounded unless a range is given, so
 * 10 m of travel reads 10 m, not 10 - 2 pi. */
static sensim_encoder_params enc_from_yaml(const char *text)
{
    sensim_yaml *doc = sensim_yaml_load_string(text, strlen(text), "enc.yaml");
    ck_assert_msg(doc != NULL, "%s", sensim_last_error());
    sensim_encoder_params p = sensim_encoder_default_params();
    ck_assert_msg(sensim_encoder_params_from_yaml(sensim_yaml_root(doc), &p) == SENSIM_OK, "%s",
                  sensim_last_error());
    sensim_yaml_free(doc);
    return p;
}

START_TEST(encoder_default_range_by_source)
{
    sensim_encoder_params p = enc_from_yaml("{name: e, type: encoder, source: wheel}");
    ck_assert_double_eq(p.lower, 0.0);
    ck_assert_double_eq_tol(p.upper, 2 * M_PI, 1e-15);
    p = enc_from_yaml("{name: e, type: encoder, source: heading}");
    ck_assert_double_eq_tol(p.upper, 2 * M_PI, 1e-15);
    p = enc_from_yaml("{name: e, type: encoder, source: distance, resolution: 0.001}");
    ck_assert(isinf(p.lower) && p.lower < 0 && isinf(p.upper) && p.upper > 0);
    const double t[4] = {0, 1, 2, 3}, u[4] = {0, 4.0, 10.0, 9.0};
    double pos[4], sp[4];
    sensim_encoder_state st;
    for (int mode = 0; mode < 2; mode++) {
        p.mode = mode ? SENSIM_ENCODER_ABSOLUTE : SENSIM_ENCODER_INCREMENTAL;
        sensim_encoder *e = enc_make(&p, 1, 2);
        sensim_encoder_reset(e, &st);
        sensim_encoder_apply(e, &st, 4, t, u, pos, sp);
        for (int i = 0; i < 4; i++)
            ck_assert_double_eq_tol(pos[i], u[i], 1e-3 + 1e-12);
        ck_assert_double_eq_tol(sp[2], 6.0, 1e-3 + 1e-9);
        ck_assert_double_eq_tol(sp[3], -1.0, 2e-3 + 1e-9);
        sensim_encoder_destroy(e);
    }
    /* A range given for a distance encoder wraps there. */
    p = enc_from_yaml("{name: e, type: encoder, source: distance, range: [0, \"5 m\"]}");
    ck_assert_double_eq(p.lower, 0.0);
    ck_assert_double_eq(p.upper, 5.0);
    sensim_encoder *e = enc_make(&p, 1, 2);
    sensim_encoder_reset(e, &st);
    sensim_encoder_apply(e, &st, 4, t, u, pos, sp);
    ck_assert_double_eq_tol(pos[2], 0.0, 1e-12);
    ck_assert_double_eq_tol(pos[3], 4.0, 1e-12);
    sensim_encoder_destroy(e);
    /* NaN bounds are still refused. */
    p.upper = NAN;
    ck_assert_ptr_null(sensim_encoder_create(&p, 1, 2));
    ck_assert_ptr_nonnull(strstr(sensim_last_error(), "upper > lower"));
}
END_TEST

START_TEST(encoder_counter_bits_no_alias)
{
    /* A 200 rad/s shaft read at 50 Hz turns 4 rad per sample, more than
     * half a turn: from the wrapped reading the speed aliases to
     * (4 - 2 pi) * 50 = -114 rad/s. Counting 1024 pulses per turn in a
     * 16-bit counter (half range 2^15 pulses = 201 rad per sample) the speed
     * is 200 rad/s within one pulse per sample (0.31 rad/s); an 8-bit
     * counter (0.785 rad per sample) cannot tell, and says so in overruns. */
    const double w = 200.0, dt = 0.02, res = 2 * M_PI / 1024;
    const size_t n = 200;
    double t[200], u[200], sp[200];
    for (size_t i = 0; i < n; i++) {
        t[i] = dt * (double)i;
        u[i] = w * t[i] + 1e-6;
    }
    const int bits[3] = {0, 16, 8};
    for (int c = 0; c < 3; c++) {
        sensim_encoder_params p = sensim_encoder_default_params();
        p.resolution = res;
        p.counter_bits = bits[c];
        sensim_encoder *e = enc_make(&p, 1, 2);
        sensim_encoder_state st;
        sensim_encoder_reset(e, &st);
        sensim_encoder_apply(e, &st, 70, t, u, NULL, sp);
        sensim_encoder_apply(e, &st, n - 70, t + 70, u + 70, NULL, sp + 70);
        for (size_t i = 2; i < n; i++) {
            if (c == 1)
                ck_assert_msg(fabs(sp[i] - w) <= res / dt, "16 bits: speed %g at %zu", sp[i], i);
            else if (c == 0)
                ck_assert_msg(fabs(sp[i] - (4.0 - 2 * M_PI) / dt) <= res / dt, "no counter: speed %g at %zu", sp[i],
                              i);
        }
        ck_assert_uint_eq(st.overruns, c == 1 ? 0 : n - 1);
        ck_assert_within(st.speed_limit, c == 0 ? M_PI : c == 1 ? 32768 * res : 128 * res, 1e-12);
        sensim_encoder_destroy(e);
    }
    /* Backwards through the counter's own wrap: still right. */
    for (size_t i = 0; i < n; i++)
        u[i] = -w * t[i] + 1e-6;
    sensim_encoder_params p = sensim_encoder_default_params();
    p.resolution = res;
    p.counter_bits = 12; /* half range 2048 pulses = 12.6 rad > 4 rad */
    sensim_encoder *e = enc_make(&p, 1, 2);
    sensim_encoder_state st;
    sensim_encoder_reset(e, &st);
    sensim_encoder_apply(e, &st, n, t, u, NULL, sp);
    for (size_t i = 2; i < n; i++)
        ck_assert_msg(fabs(sp[i] + w) <= res / dt, "12 bits backwards: speed %g at %zu", sp[i], i);
    sensim_encoder_destroy(e);
    /* A counter needs pulses to count. */
    p.resolution = 0;
    ck_assert_ptr_null(sensim_encoder_create(&p, 1, 2));
}
END_TEST

/* Runs `sensim inject` of rig text onto gt; returns the result. */
static tu_run_result inject_text(const char *dir, const char *gt, const char *rig_text, const char *out)
{
    char *rig = tu_path(dir, "rig.yaml");
    ck_assert_int_eq(tu_write_file(rig, rig_text), 0);
    tu_run_result r = tu_run("inject", rig, gt, "-o", out, NULL);
    free(rig);
    return r;
}

static double last_value(const char *path, const char *dset)
{
    sensim_log *log = sensim_log_open(path);
    ck_assert_msg(log != NULL, "%s", sensim_last_error());
    int rank;
    size_t dims[4];
    ck_assert_int_eq(sensim_log_shape(log, dset, &rank, dims), SENSIM_OK);
    double v;
    ck_assert_int_eq(sensim_log_read_f64(log, dset, dims[0] - 1, 1, &v), SENSIM_OK);
    sensim_log_close(log);
    return v;
}

START_TEST(rig_encoder_warns_and_odometer_lever_arm)
{
    char *dir = tu_mkdtemp(), *gt = tu_path(dir, "gt.h5"), *out = tu_path(dir, "out.h5");
    /* A 20 m/s line: a 0.1 m wheel turns at 200 rad/s, read at 50 Hz. */
    tu_run_result r = tu_run("trajectory", "--shape", "line", "--duration", "2", "--rate", "200", "--speed", "20",
                             "-o", gt, NULL);
    ck_assert_msg(r.status == 0, "%s", r.err);
    tu_run_free(&r);
    r = inject_text(dir, gt,
                    "sensors:\n  - { name: enc, type: encoder, rate_hz: 50, wheel_radius: 0.1,"
                    " resolution: 0.00613592315 }\n",
                    out);
    ck_assert_msg(r.status == 0, "%s", r.err);
    ck_assert_msg(strstr(r.err, "warning") && strstr(r.err, "enc") && strstr(r.err, "counter_bits"), "%s", r.err);
    tu_run_free(&r);
    ck_assert_within(last_value(out, "/sensors/enc/speed"), (4.0 - 2 * M_PI) * 50, 1.0);
    r = inject_text(dir, gt,
                    "sensors:\n  - { name: enc, type: encoder, rate_hz: 50, wheel_radius: 0.1,"
                    " resolution: 0.00613592315, counter_bits: 16 }\n",
                    out);
    ck_assert_msg(r.status == 0 && !strstr(r.err, "warning"), "%s", r.err);
    tu_run_free(&r);
    ck_assert_within(last_value(out, "/sensors/enc/speed"), 200.0, 0.00613592315 * 50 + 1e-6);
    r = inject_text(dir, gt, "sensors:\n  - { name: enc, type: encoder, rate_hz: 50, counter_bits: 16 }\n", out);
    ck_assert_int_eq(r.status, 1);
    ck_assert_msg(strstr(r.err, "rig.yaml:2") && strstr(r.err, "counter_bits") && strstr(r.err, "resolution"), "%s",
                  r.err);
    tu_run_free(&r);

    /* The odometer rolls where it is mounted: on a circle of radius 10 m at
     * 2 m/s (yaw rate w_z = +-0.2 rad/s), a wheel at y = +-1 m covers
     * (10 -+ w_z y / |w_z|) / 10 of the centre's distance: 0.9 and 1.1. */
    r = tu_run("trajectory", "--shape", "circle", "--duration", "20", "--rate", "200", "--speed", "2", "--radius",
               "10", "-o", gt, NULL);
    ck_assert_msg(r.status == 0, "%s", r.err);
    tu_run_free(&r);
    sensim_log *log = sensim_log_open(gt);
    ck_assert(log);
    double w[3];
    ck_assert_int_eq(sensim_log_read_f64(log, "/ground_truth/angular_velocity", 10, 1, w), SENSIM_OK);
    sensim_log_close(log);
    ck_assert_within(fabs(w[2]), 0.2, 1e-9);
    const double ys[3] = {0.0, 1.0, -1.0};
    double d0 = 0;
    for (int i = 0; i < 3; i++) {
        char rig[256];
        snprintf(rig, sizeof rig,
                 "sensors:\n  - { name: odo, type: odometer, rate_hz: 100, wheel_radius: 0.3,"
                 " mount: { position: [0, %g, 0] } }\n",
                 ys[i]);
        r = inject_text(dir, gt, rig, out);
        ck_assert_msg(r.status == 0, "%s", r.err);
        tu_run_free(&r);
        double d = last_value(out, "/sensors/odo/distance");
        if (i == 0) {
            ck_assert_within(d, 2.0 * 20, 0.01);
            d0 = d;
        } else
            ck_assert_within(d / d0, 1.0 - w[2] * ys[i] / 2.0, 1e-6);
    }
    tu_rmtree(dir);
    free(dir), free(gt), free(out);
}
END_TEST

Suite *suite_odometer(void)
{
    Suite *s = suite_create("odometer");
    TCase *tc = tcase_create("model");
    tcase_add_test(tc, encoder_wrap_clamp_binning);
    tcase_add_test(tc, encoder_speed_like_microcontroller);
    tcase_add_test(tc, encoder_noise_and_scale);
    tcase_add_test(tc, odometer_from_speed_and_angle);
    tcase_add_test(tc, same_seed_any_block_size);
    tcase_add_test(tc, bad_params_named);
    tcase_add_test(tc, encoder_default_range_by_source);
    tcase_add_test(tc, encoder_counter_bits_no_alias);
    tcase_add_test(tc, rig_encoder_warns_and_odometer_lever_arm);
    suite_add_tcase(s, tc);
    return s;
}
