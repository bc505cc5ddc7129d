/* sensim inject end to end: the rig of issue 2, reproducibility across
 * threads and blocks, timing, clean-data noising, and bad input (exit 1, a
 * message naming file and line or dataset, output untouched). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "sensim/imu.h"
#include "sensim/log.h"
#include "sensim/rig.h"
#include "testutil.h"

static const char *RIG =
    "seed: 7\n"
    "sensors:\n"
    "  - name: imu\n"
    "    type: imu\n"
    "    rate_hz: 400\n"
    "    gyro:  { noise_density: 1.0e-3, bias_instability: 2.0e-5, random_walk: 1.0e-5 }\n"
    "    accel: { noise_density: 2.0e-3, random_walk: 3.0e-3 }\n";

typedef struct {
    char *dir, *gt, *rig, *out;
} fixture;

static fixture setup(const char *shape_args)
{
    fixture f;
    f.dir = tu_mkdtemp();
    f.gt = tu_path(f.dir, "gt.h5");
    f.rig = tu_path(f.dir, "rig.yaml");
    f.out = tu_path(f.dir, "out.h5");
    ck_assert_int_eq(tu_write_file(f.rig, RIG), 0);
    char cmd[1024];
    snprintf(cmd, sizeof cmd, "\"%s\" trajectory %s -o \"%s\"", getenv("SENSIM_BIN") ? getenv("SENSIM_BIN") : "build/sensim",
             shape_args, f.gt);
    ck_assert_int_eq(system(cmd), 0);
    return f;
}

static void teardown(fixture *f)
{
    tu_rmtree(f->dir);
    free(f->dir);
    free(f->gt);
    free(f->rig);
    free(f->out);
}

static double *read_all(const char *path, const char *dset, size_t cols, size_t *n)
{
    sensim_log *log = sensim_log_open(path);
    ck_assert_msg(log != NULL, "%s", sensim_last_error());
    int rank;
    size_t dims[4];
    ck_assert_int_eq(sensim_log_shape(log, dset, &rank, dims), SENSIM_OK);
    double *x = malloc(dims[0] * cols * sizeof *x);
    ck_assert_int_eq(sensim_log_read_f64(log, dset, 0, dims[0], x), SENSIM_OK);
    sensim_log_close(log);
    *n = dims[0];
    return x;
}

START_TEST(issue_rig_on_circle)
{
    fixture f = setup("--shape circle --duration 60 --rate 200 --speed 2 --radius 10");
    tu_run_result r = tu_run("inject", f.rig, f.gt, "-o", f.out, NULL);
    ck_assert_msg(r.status == 0, "%s", r.err);
    tu_run_free(&r);
    size_t n;
    double *w = read_all(f.out, "/sensors/imu/angular_velocity", 3, &n);
    double *a = read_all(f.out, "/sensors/imu/specific_force", 3, &n);
    double *t = read_all(f.out, "/sensors/imu/t", 1, &n);
    ck_assert_uint_eq(n, 24001); /* 60 s at 400 Hz, both ends */
    ck_assert_double_eq_tol(t[1] - t[0], 1.0 / 400, 1e-12);
    /* Circle: yaw rate v/r = 0.2 rad/s, centripetal v^2/r = 0.4 m/s^2 to the
     * left (body +y), gravity +g on z. White sigma_d = N sqrt(400): 0.02 and
     * 0.04; the mean over n has SE sigma_d/sqrt(n) plus the bias processes,
     * whose excursions over 60 s stay below 5e-4 (gyro) and 0.03 (accel,
     * K sqrt(60) = 0.023). */
    ck_assert_within(tu_mean(w + 2, n, 3), 0.2, 5 * 0.02 / sqrt(n) + 5e-4);
    ck_assert_within(tu_mean(a + 1, n, 3), 0.4, 5 * 0.04 / sqrt(n) + 0.06);
    ck_assert_within(tu_mean(a + 2, n, 3), SENSIM_G0, 5 * 0.04 / sqrt(n) + 0.06);
    /* The white part dominates the sample-to-sample difference:
     * var(diff)/2 = sigma_d^2 (+ tiny walk steps). n = 24000: 5 SE = 4.6%. */
    double *d = malloc((n - 1) * sizeof *d);
    for (size_t k = 0; k + 1 < n; k++)
        d[k] = w[3 * (k + 1)] - w[3 * k];
    ck_assert_within(tu_var(d, n - 1, 1) / 2 / 4e-4, 1.0, 5 * sqrt(2.0 / n));
    free(d);
    free(w);
    free(a);
    free(t);
    /* Attributes per DESIGN.md. */
    sensim_log *log = sensim_log_open(f.out);
    char *s;
    ck_assert_int_eq(sensim_log_get_attr_string(log, "/sensors/imu", "type", &s), SENSIM_OK);
    ck_assert_str_eq(s, "imu");
    free(s);
    ck_assert_int_eq(sensim_log_get_attr_string(log, "/sensors/imu", "model", &s), SENSIM_OK);
    ck_assert_ptr_nonnull(strstr(s, "noise_density: 1.0e-3"));
    free(s);
    double seed, mount[7];
    ck_assert_int_eq(sensim_log_get_attr_f64(log, "/sensors/imu", "seed", &seed, 1), SENSIM_OK);
    ck_assert_double_eq(seed, 7);
    ck_assert_int_eq(sensim_log_get_attr_f64(log, "/sensors/imu", "mount", mount, 7), SENSIM_OK);
    ck_assert_double_eq(mount[3], 1);
    size_t gn;
    double lla[3];
    ck_assert_int_eq(sensim_gt_check(log, &gn, lla), SENSIM_OK);
    sensim_log_close(log);
    teardown(&f);
}
END_TEST

static int same_dataset(const char *a, const char *b, const char *dset)
{
    size_t na, nb;
    double *x = read_all(a, dset, 3, &na), *y = read_all(b, dset, 3, &nb);
    int same = na == nb && memcmp(x, y, 3 * na * sizeof *x) == 0;
    free(x);
    free(y);
    return same;
}

START_TEST(same_seed_bit_identical_across_threads)
{
    fixture f = setup("--shape figure8 --duration 20 --rate 500");
    char *o1 = tu_path(f.dir, "o1.h5"), *o2 = tu_path(f.dir, "o2.h5"), *o3 = tu_path(f.dir, "o3.h5");
    tu_run_result r = tu_run("inject", f.rig, f.gt, "-o", o1, "--threads", "1", NULL);
    ck_assert_msg(r.status == 0, "%s", r.err);
    tu_run_free(&r);
    r = tu_run("inject", f.rig, f.gt, "-o", o2, "--threads", "2", "--block", "1000", NULL);
    ck_assert_int_eq(r.status, 0);
    tu_run_free(&r);
    r = tu_run("inject", f.rig, f.gt, "-o", o3, "--threads", "2", "--seed", "8", NULL);
    ck_assert_int_eq(r.status, 0);
    tu_run_free(&r);
    ck_assert(same_dataset(o1, o2, "/sensors/imu/angular_velocity"));
    /* The files themselves are byte-identical (no HDF5 object timestamps). */
    char cmd[2048];
    snprintf(cmd, sizeof cmd, "cmp -s \"%s\" \"%s\"", o1, o2);
    ck_assert_int_eq(system(cmd), 0);
    ck_assert(same_dataset(o1, o2, "/sensors/imu/specific_force"));
    ck_assert(!same_dataset(o1, o3, "/sensors/imu/angular_velocity"));
    ck_assert(!same_dataset(o1, o3, "/sensors/imu/specific_force"));
    free(o1);
    free(o2);
    free(o3);
    teardown(&f);
}
END_TEST

START_TEST(lever_arm_mount_and_timing)
{
    /* A static body; the IMU mounted yawed 90 degrees with a lag of 5 ms and
     * a clock running 100 ppm fast, no noise. */
    fixture f = setup("--shape static --duration 2 --rate 100");
    const char *rig = "seed: 1\n"
                      "sensors:\n"
                      "  - name: imu\n"
                      "    type: imu\n"
                      "    rate_hz: 50\n"
                      "    mount: { position: [1, 0, 0], rpy: [0, 0, \"90 deg\"] }\n"
                      "    timing: { lag: 0.005, clock_drift: 1.0e-4, clock_offset: 0.25 }\n"
                      "    gyro: { bias: [0.01, 0, 0] }\n"
                      "    accel: { bias: 0 }\n";
    ck_assert_int_eq(tu_write_file(f.rig, rig), 0);
    tu_run_result r = tu_run("inject", f.rig, f.gt, "-o", f.out, NULL);
    ck_assert_msg(r.status == 0, "%s", r.err);
    tu_run_free(&r);
    size_t n;
    double *t = read_all(f.out, "/sensors/imu/t", 1, &n);
    double *ts = read_all(f.out, "/sensors/imu/t_sample", 1, &n);
    double *tc = read_all(f.out, "/sensors/imu/t_sensor", 1, &n);
    double *a = read_all(f.out, "/sensors/imu/specific_force", 3, &n);
    for (size_t k = 0; k < n; k++) {
        ck_assert_double_eq_tol(t[k] - ts[k], 0.005, 1e-12);
        ck_assert_double_eq_tol(tc[k], ts[k] + 0.25 + 1e-4 * ts[k], 1e-12);
        ck_assert_double_eq_tol(a[3 * k + 2], SENSIM_G0, 1e-12);
    }
    /* The sensor clock ticks at exactly 50 Hz; in true time 50 (1 + 1e-4) Hz. */
    ck_assert_double_eq_tol(tc[1] - tc[0], 0.02, 1e-12);
    ck_assert_double_eq_tol(ts[1] - ts[0], 0.02 / (1 + 1e-4), 1e-12);
    free(t);
    free(ts);
    free(tc);
    free(a);
    teardown(&f);
}
END_TEST

START_TEST(spinning_body_lever_arm_end_to_end)
{
    /* Circle of radius 10 m at 2 m/s: the body yaws at w = 0.2 rad/s. An IMU
     * at r = (0, 0.5, 0) body sees the centripetal v^2/r at the origin plus
     * w x (w x r) = -w^2 r = (0, -0.02, 0): f_y = 0.4 - 0.02. */
    fixture f = setup("--shape circle --duration 5 --rate 200 --speed 2 --radius 10");
    const char *rig = "sensors:\n"
                      "  - name: imu\n"
                      "    type: imu\n"
                      "    rate_hz: 100\n"
                      "    mount: { position: [0, 0.5, 0] }\n"
                      "    accel: { bias: 0 }\n";
    ck_assert_int_eq(tu_write_file(f.rig, rig), 0);
    tu_run_result r = tu_run("inject", f.rig, f.gt, "-o", f.out, NULL);
    ck_assert_msg(r.status == 0, "%s", r.err);
    tu_run_free(&r);
    size_t n;
    double *a = read_all(f.out, "/sensors/imu/specific_force", 3, &n);
    for (size_t k = 0; k < n; k++) {
        ck_assert_double_eq_tol(a[3 * k], 0.0, 1e-9);
        ck_assert_double_eq_tol(a[3 * k + 1], 0.4 - 0.02, 1e-9);
    }
    free(a);
    teardown(&f);
}
END_TEST

START_TEST(noise_on_recorded_clean_data)
{
    /* Input with /sensors/imu/{t, angular_velocity} and no ground truth. */
    char *dir = tu_mkdtemp(), *in = tu_path(dir, "clean.h5"), *out = tu_path(dir, "noisy.h5"),
         *rig = tu_path(dir, "rig.yaml");
    const size_t n = 50000;
    double *t = malloc(n * sizeof *t), *w = malloc(3 * n * sizeof *w);
    for (size_t k = 0; k < n; k++) {
        t[k] = k * 0.005;
        w[3 * k] = 0.1;
        w[3 * k + 1] = -0.2;
        w[3 * k + 2] = 0.3;
    }
    sensim_log *log = sensim_log_create(in, "test");
    size_t three = 3;
    ck_assert_int_eq(sensim_log_write(log, "/sensors/imu/t", SENSIM_F64, n, 0, NULL, t, "s"), SENSIM_OK);
    ck_assert_int_eq(sensim_log_write(log, "/sensors/imu/angular_velocity", SENSIM_F64, n, 1, &three, w, "rad/s"),
                     SENSIM_OK);
    ck_assert_int_eq(sensim_log_commit(log), SENSIM_OK);
    ck_assert_int_eq(tu_write_file(rig, "seed: 3\nsensors:\n  - name: imu\n    type: imu\n    rate_hz: 200\n"
                                        "    gyro: { noise_sigma: 0.01 }\n"),
                     0);
    tu_run_result r = tu_run("inject", rig, in, "-o", out, NULL);
    ck_assert_msg(r.status == 0, "%s", r.err);
    tu_run_free(&r);
    size_t m;
    double *y = read_all(out, "/sensors/imu/angular_velocity", 3, &m);
    ck_assert_uint_eq(m, n);
    /* sigma 0.01 on n = 5e4: 5 SE of the variance = 3.2%. */
    ck_assert_within(tu_mean(y + 1, n, 3), -0.2, 5 * 0.01 / sqrt(n));
    ck_assert_within(tu_var(y + 1, n, 3) / 1e-4, 1.0, 5 * sqrt(2.0 / n));
    free(y);
    /* Clean data the rig asks for but the file lacks: a clear error. */
    ck_assert_int_eq(tu_write_file(rig, "sensors:\n  - name: imu\n    type: imu\n    rate_hz: 200\n"
                                        "    accel: { noise_sigma: 0.01 }\n"),
                     0);
    r = tu_run("inject", rig, in, "-o", out, NULL);
    ck_assert_int_eq(r.status, 1);
    ck_assert_ptr_nonnull(strstr(r.err, "/sensors/imu/specific_force is missing"));
    tu_run_free(&r);
    free(t);
    free(w);
    tu_rmtree(dir);
    free(dir);
    free(in);
    free(out);
    free(rig);
}
END_TEST

/* Runs inject expecting failure: exit 1, stderr contains each of `needles`
 * (NULL-terminated), and the pre-existing output file is untouched. */
static void expect_failure(fixture *f, const char *rig_text, const char *gt, const char **needles)
{
    if (rig_text)
        ck_assert_int_eq(tu_write_file(f->rig, rig_text), 0);
    ck_assert_int_eq(tu_write_file(f->out, "previous output"), 0);
    tu_run_result r = tu_run("inject", f->rig, gt ? gt : f->gt, "-o", f->out, NULL);
    ck_assert_msg(r.status == 1, "status %d, stderr: %s", r.status, r.err);
    for (const char **p = needles; *p; p++)
        ck_assert_msg(strstr(r.err, *p) != NULL, "'%s' not in: %s", *p, r.err);
    tu_run_free(&r);
    char *text = tu_read_file(f->out, NULL);
    ck_assert_str_eq(text, "previous output");
    free(text);
    /* No temporary files left beside it. */
    char cmd[1024];
    snprintf(cmd, sizeof cmd, "! ls \"%s\" | grep -q tmp-", f->dir);
    ck_assert_int_eq(system(cmd), 0);
}

START_TEST(bad_rigs)
{
    fixture f = setup("--shape line --duration 2 --rate 100");
    expect_failure(&f, "seed: 1\nsensors:\n  - name: imu\n    type: imu\n    rate_hz: [400\n", NULL,
                   (const char *[]){"rig.yaml:", NULL});
    expect_failure(&f, "sensors:\n  - name: imu\n    type: imu\n    rate_hz: 400\n    gyro: { noise_densty: 1e-3 }\n",
                   NULL, (const char *[]){"rig.yaml:5", "noise_densty", NULL});
    expect_failure(&f, "sensors:\n  - name: imu\n    type: imu\n    rate_hz: 400\n    gyro:\n      noise_density: -1e-3\n",
                   NULL, (const char *[]){"rig.yaml:6", "noise_density", NULL});
    expect_failure(&f, "sensors:\n  - name: imu\n    type: imu\n    rate_hz: 400\n    accel: { random_walk: \"0.66 deg/sqrt(h)\" }\n",
                   NULL, (const char *[]){"rig.yaml:5", "random_walk", NULL});
    expect_failure(&f, "sensors:\n  - name: imu\n    type: lidarr\n", NULL,
                   (const char *[]){"rig.yaml:3", "unknown sensor type 'lidarr'", NULL});
    expect_failure(&f, "sensors:\n  - name: imu\n    type: imu\n    gyro: {}\n", NULL,
                   (const char *[]){"rig.yaml:", "rate_hz", NULL});
    expect_failure(&f, "sensors:\n  - {name: a, type: imu, rate_hz: 10, gyro: {}}\n  - {name: a, type: imu, rate_hz: 10, gyro: {}}\n",
                   NULL, (const char *[]){"rig.yaml:3", "defined twice", NULL});
    expect_failure(&f, "sensors:\n  - name: imu\n    type: imu\n    rate_hz: 400\n    gyro: { gauss_markov: { sigma: 1e-3, tau: 0 } }\n",
                   NULL, (const char *[]){"rig.yaml:5", "tau", NULL});
    char *missing = tu_path(f.dir, "nope.yaml");
    tu_run_result r = tu_run("inject", missing, f.gt, "-o", f.out, NULL);
    ck_assert_int_eq(r.status, 1);
    ck_assert_ptr_nonnull(strstr(r.err, "nope.yaml"));
    tu_run_free(&r);
    free(missing);
    teardown(&f);
}
END_TEST

/* Writes a ground-truth file with one defect. */
static char *bad_gt(const char *dir, const char *name, int defect)
{
    char *p = tu_path(dir, name);
    const size_t n = 100;
    double *t = malloc(n * sizeof *t), *v3 = calloc(3 * n, sizeof *v3), *q = calloc(4 * n, sizeof *q);
    for (size_t k = 0; k < n; k++) {
        t[k] = k * 0.01;
        q[4 * k] = 1;
    }
    if (defect == 1)
        t[40] = t[39];
    if (defect == 2)
        t[10] = NAN;
    if (defect == 4)
        v3[3 * 7 + 1] = NAN;
    sensim_log *log = sensim_log_create(p, "test");
    size_t three = 3, four = 4, two = 2;
    sensim_log_write(log, "/ground_truth/t", SENSIM_F64, n, 0, NULL, t, "s");
    sensim_log_write(log, "/ground_truth/position", SENSIM_F64, n, 1, &three, v3, "m");
    if (defect == 3)
        sensim_log_write(log, "/ground_truth/orientation", SENSIM_F64, n, 1, &two, q, "1");
    else
        sensim_log_write(log, "/ground_truth/orientation", SENSIM_F64, n, 1, &four, q, "1");
    sensim_log_write(log, "/ground_truth/velocity", SENSIM_F64, n, 1, &three, v3, "m/s");
    if (defect != 5)
        sensim_log_write(log, "/ground_truth/angular_velocity", SENSIM_F64, n, 1, &three, v3, "rad/s");
    sensim_log_write(log, "/ground_truth/acceleration", SENSIM_F64, n, 1, &three, v3, "m/s^2");
    ck_assert_int_eq(sensim_log_commit(log), SENSIM_OK);
    free(t);
    free(v3);
    free(q);
    return p;
}

START_TEST(bad_logs)
{
    fixture f = setup("--shape line --duration 2 --rate 100");
    char *g;
    g = bad_gt(f.dir, "nonmono.h5", 1);
    expect_failure(&f, NULL, g, (const char *[]){"nonmono.h5", "/ground_truth/t", "not increasing at index 40", NULL});
    free(g);
    g = bad_gt(f.dir, "nan.h5", 2);
    expect_failure(&f, NULL, g, (const char *[]){"nan.h5", "/ground_truth/t", "timestamp 10 is not finite", NULL});
    free(g);
    g = bad_gt(f.dir, "shape.h5", 3);
    expect_failure(&f, NULL, g, (const char *[]){"shape.h5", "/ground_truth/orientation", "expected [N,4]", NULL});
    free(g);
    g = bad_gt(f.dir, "nanpos.h5", 4);
    expect_failure(&f, NULL, g, (const char *[]){"nanpos.h5", "/ground_truth/position", "row 7", NULL});
    free(g);
    g = bad_gt(f.dir, "missing.h5", 5);
    expect_failure(&f, NULL, g, (const char *[]){"missing.h5", "/ground_truth/angular_velocity is missing", NULL});
    free(g);
    char *txt = tu_path(f.dir, "notes.txt");
    tu_write_file(txt, "not hdf5");
    expect_failure(&f, NULL, txt, (const char *[]){"notes.txt", "not an HDF5 file", NULL});
    free(txt);
    /* Usage errors exit 2. */
    tu_run_result r = tu_run("inject", f.rig, f.gt, NULL);
    ck_assert_int_eq(r.status, 2);
    tu_run_free(&r);
    r = tu_run("inject", f.rig, f.gt, "-o", f.out, "--seed", "-3", NULL);
    ck_assert_int_eq(r.status, 2);
    tu_run_free(&r);
    r = tu_run("inject", "--bogus", NULL);
    ck_assert_int_eq(r.status, 2);
    tu_run_free(&r);
    teardown(&f);
}
END_TEST

START_TEST(rig_api_and_magnetometer)
{
    /* The Earth's dipole at Madison, WI: |B| ~ 55 uT, pointing down (U < 0)
     * and north; a constant field and hard iron add as given. */
    sensim_rig *rig = sensim_rig_load_string("sensors:\n"
                                             "  - name: mag\n"
                                             "    type: imu\n"
                                             "    rate_hz: 10\n"
                                             "    mag: { hard_iron: [\"1 uT\", 0, 0] }\n",
                                             "mem.yaml");
    ck_assert_msg(rig != NULL, "%s", sensim_last_error());
    ck_assert_uint_eq(rig->nsensors, 1);
    ck_assert_ptr_nonnull(sensim_rig_find(rig, "mag"));
    sensim_rig_free(rig);
    fixture f = setup("--shape static --duration 1 --rate 10 --origin 43.0731,-89.4012,260");
    ck_assert_int_eq(tu_write_file(f.rig, "sensors:\n  - name: mag\n    type: imu\n    rate_hz: 10\n"
                                          "    mag: { hard_iron: [\"1 uT\", 0, 0] }\n"),
                     0);
    tu_run_result r = tu_run("inject", f.rig, f.gt, "-o", f.out, NULL);
    ck_assert_msg(r.status == 0, "%s", r.err);
    tu_run_free(&r);
    size_t n;
    double *b = read_all(f.out, "/sensors/mag/magnetic_field", 3, &n);
    /* Static trajectory: body axes = ENU (identity attitude). A centred
     * dipole at 43 N gives |B| = B0 sqrt(1 + 3 sin^2(maglat)) ~ 50-60 uT. */
    double mag = sqrt(pow(b[0] - 1e-6, 2) + b[1] * b[1] + b[2] * b[2]);
    ck_assert(mag > 45e-6 && mag < 62e-6);
    ck_assert(b[2] < -30e-6);
    ck_assert(b[1] > 10e-6);
    free(b);
    teardown(&f);
}
END_TEST

Suite *suite_inject(void)
{
    Suite *s = suite_create("inject");
    TCase *tc = tcase_create("cli");
    tcase_add_test(tc, issue_rig_on_circle);
    tcase_add_test(tc, same_seed_bit_identical_across_threads);
    tcase_add_test(tc, lever_arm_mount_and_timing);
    tcase_add_test(tc, spinning_body_lever_arm_end_to_end);
    tcase_add_test(tc, noise_on_recorded_clean_data);
    tcase_add_test(tc, bad_rigs);
    tcase_add_test(tc, bad_logs);
    tcase_add_test(tc, rig_api_and_magnetometer);
    suite_add_tcase(s, tc);
    return s;
}
