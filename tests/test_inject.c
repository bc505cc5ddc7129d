/* sensim inject end to end: the rig of issue 2, reproducibility across
 * threads and blocks, timing, clean-data noising, and bad input (exit 1, a
 * message naming file and line or dataset, output untouched). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "sensim/geodesy.h"
#include "sensim/guard.h"
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

START_TEST(gazebo_and_airsim_rig_keys)
{
    /* The gazebo block takes SDF's <noise> names; precision rounds the output
     * (above gz-sensors' 1e-6 threshold only); the airsim block names its
     * white noise arw (gyro) and vrw (accel) as AirSim does. */
    fixture f = setup("--shape static --duration 1 --rate 100");
    ck_assert_int_eq(tu_write_file(f.rig, "sensors:\n  - name: imu\n    type: imu\n    rate_hz: 100\n"
                                          "    gyro:\n      gazebo: { mean: 0.001, stddev: 0.05, bias_mean: 0.1,\n"
                                          "        bias_stddev: 0.01, dynamic_bias_stddev: 0.001,\n"
                                          "        dynamic_bias_correlation_time: 400, precision: 0.01 }\n"
                                          "    accel:\n      gazebo: { stddev: 0.02, precision: 1.0e-7 }\n"),
                     0);
    tu_run_result r = tu_run("inject", f.rig, f.gt, "-o", f.out, NULL);
    ck_assert_msg(r.status == 0, "%s", r.err);
    tu_run_free(&r);
    size_t n;
    double *w = read_all(f.out, "/sensors/imu/angular_velocity", 3, &n), *a = read_all(f.out, "/sensors/imu/specific_force", 3, &n);
    int coarse = 1, fine = 0;
    for (size_t k = 0; k < 3 * n; k++) {
        coarse &= fabs(w[k] / 0.01 - nearbyint(w[k] / 0.01)) < 1e-9;
        fine |= fabs(a[k] / 1e-7 - nearbyint(a[k] / 1e-7)) > 1e-3;
    }
    ck_assert_msg(coarse, "gazebo.precision 0.01 does not round the gyro");
    ck_assert_msg(fine, "gazebo.precision 1e-7 rounds although gz-sensors ignores it");
    free(w);
    free(a);
    expect_failure(&f, "sensors:\n  - name: imu\n    type: imu\n    rate_hz: 100\n"
                       "    gyro: { quantization: 0.01, gazebo: { precision: 0.01 } }\n",
                   NULL, (const char *[]){"rig.yaml:5", "precision", "quantization", NULL});
    expect_failure(&f, "sensors:\n  - name: imu\n    type: imu\n    rate_hz: 100\n"
                       "    gyro: { gazebo: { dynamic_bias_stddev: 0.01 } }\n",
                   NULL, (const char *[]){"rig.yaml:5", "dynamic_bias_correlation_time", NULL});
    expect_failure(&f, "sensors:\n  - name: imu\n    type: imu\n    rate_hz: 100\n"
                       "    accel: { airsim: { arw: 0.01, bias_stability: 1e-4, tau: 100 } }\n",
                   NULL, (const char *[]){"rig.yaml:5", "arw", NULL});
    /* The bundled rigs that document these keys load. */
    const char *rigs[2] = {"data/rigs/imu-mpu6000-airsim.yaml", "data/rigs/example.yaml"};
    for (int i = 0; i < 2; i++) {
        char *preset = tu_src(rigs[i]);
        sensim_rig *rig = sensim_rig_load(preset);
        ck_assert_msg(rig != NULL, "%s", sensim_last_error());
        ck_assert(i == 0 || (rig->earth_gravity && rig->earth_rotation && rig->nsensors == 5));
        sensim_rig_free(rig);
        free(preset);
    }
    teardown(&f);
}
END_TEST

/* A static ground truth of n rows at times t0 + k * step, written with the
 * library (import would refuse such times). */
static void write_gt(const char *path, size_t n, double t0, double step)
{
    sensim_log *log = sensim_log_create(path, "test");
    ck_assert_msg(log != NULL, "%s", sensim_last_error());
    const double origin[3] = {43.0, -89.0, 260.0};
    sensim_gt_writer *w = sensim_gt_writer_create(log, origin);
    sensim_gt_block b;
    ck_assert_int_eq(sensim_gt_block_init(&b, n), SENSIM_OK);
    for (size_t k = 0; k < n; k++) {
        b.t[k] = t0 + (double)k * step;
        for (int a = 0; a < 3; a++)
            b.position[3 * k + a] = b.velocity[3 * k + a] = b.angular_velocity[3 * k + a] = b.acceleration[3 * k + a] = 0;
        b.orientation[4 * k] = 1;
        b.orientation[4 * k + 1] = b.orientation[4 * k + 2] = b.orientation[4 * k + 3] = 0;
    }
    b.n = n;
    ck_assert_int_eq(sensim_gt_writer_append(w, &b), SENSIM_OK);
    sensim_gt_writer_close(w);
    ck_assert_int_eq(sensim_log_commit(log), SENSIM_OK);
    sensim_gt_block_free(&b);
}

START_TEST(runaway_output_refused)
{
    /* Nanosecond times read as seconds: 600 rows 1e7 "s" apart (100 Hz in
     * ns). inject would write 6e11 IMU samples; it refuses before writing,
     * naming the step and the units it would mean. */
    fixture f = setup("--shape static --duration 1 --rate 10");
    char *ns = tu_path(f.dir, "ns.h5"), *epoch = tu_path(f.dir, "epoch.h5");
    write_gt(ns, 600, 0.0, 1e7);
    expect_failure(&f, "sensors:\n  - { name: imu, type: imu, rate_hz: 100, gyro: { noise_sigma: 0.1 } }\n", ns,
                   (const char *[]){"ns.h5", "/ground_truth/t", "mean step of 1e+07 s", "nanoseconds", NULL});
    /* Epoch microseconds (1.7e15): said by magnitude. */
    write_gt(epoch, 100, 1.7e15, 1e4);
    expect_failure(&f, NULL, epoch, (const char *[]){"epoch microseconds", "divide by 1e+06", NULL});
    /* Plausible times but a rate that cannot fit: 1e8 Hz for 20 000 s is
     * 2e12 samples, 1.9e14 bytes, above the 1 TiB limit. */
    write_gt(ns, 2001, 0.0, 10.0);
    expect_failure(&f, "sensors:\n  - { name: imu, type: imu, rate_hz: 1.0e8, gyro: { noise_sigma: 0.1 } }\n", ns,
                   (const char *[]){"sensor 'imu': 1e+08 Hz x 20000 s", "2e+12 samples", "nothing written", NULL});
    /* trajectory estimates its rows the same way. */
    char *big = tu_path(f.dir, "big.h5");
    tu_run_result r = tu_run("trajectory", "--shape", "static", "--duration", "1e8", "--rate", "1000", "-o", big, NULL);
    ck_assert_int_eq(r.status, 1);
    ck_assert_msg(strstr(r.err, "--rate 1000 Hz x --duration 1e+08 s") && strstr(r.err, "bytes"), "%s", r.err);
    ck_assert(!tu_file_exists(big));
    tu_run_free(&r);
    /* The free-space test itself: twice what is free is refused, naming it. */
    double avail = sensim_guard_free_bytes(f.out);
    ck_assert(avail > 0 && isfinite(avail));
    ck_assert_int_eq(sensim_guard_output(f.out, 2 * avail + 1e6, "test"), SENSIM_EIO);
    ck_assert_ptr_nonnull(strstr(sensim_last_error(), "free there"));
    ck_assert_int_eq(sensim_guard_output(f.out, 1e3, "test"), SENSIM_OK);
    /* import reports times that cannot be seconds as such. */
    char *csv = tu_path(f.dir, "gt.csv");
    ck_assert_int_eq(tu_write_file(csv, "t,x,y,z\n1700000000000000000,0,0,0\n1700000000010000000,1,0,0\n"
                                        "1700000000020000000,2,0,0\n"),
                     0);
    r = tu_run("import", "--ground-truth", csv, "-o", big, NULL);
    ck_assert_int_eq(r.status, 1);
    ck_assert_msg(strstr(r.err, "gt.csv: column t") && strstr(r.err, "epoch nanoseconds"), "%s", r.err);
    ck_assert(!tu_file_exists(big));
    tu_run_free(&r);
    ck_assert_int_eq(tu_write_file(csv, "t,x,y,z\n0,0,0,0\n10000,1,0,0\n20000,2,0,0\n30000,3,0,0\n"), 0);
    r = tu_run("import", "--ground-truth", csv, "-o", big, NULL);
    ck_assert_int_eq(r.status, 1);
    ck_assert_msg(strstr(r.err, "mean step of 10000 s") && strstr(r.err, "milliseconds"), "%s", r.err);
    tu_run_free(&r);
    free(csv), free(big), free(ns), free(epoch);
    teardown(&f);
}
END_TEST

START_TEST(earth_gravity_rotation_and_tangent_plane)
{
    /* A noise-free IMU at rest at 43.0731 N, 260 m, body = ENU (static,
     * heading 90). Default: f = (0, 0, g0), w = 0. With earth: true, f_z is
     * WGS84 normal gravity there (9.803653, 0.306 mg below g0; by the
     * closed form computed independently with NumPy) and the gyro
     * reads Omega (0, cos phi, sin phi), 15.04 deg/h in all. */
    const double lat = 43.0731, Om = 7.292115e-5, phi = lat * M_PI / 180;
    fixture f = setup("--shape static --duration 1 --rate 100 --heading 90 --origin 43.0731,-89.4012,260");
    const char *imu = "  - { name: imu, type: imu, rate_hz: 50, gyro: { bias: 0 }, accel: { bias: 0 } }\n";
    char rig[512];
    for (int c = 0; c < 2; c++) {
        snprintf(rig, sizeof rig, "%ssensors:\n%s", c ? "earth: true\n" : "", imu);
        ck_assert_int_eq(tu_write_file(f.rig, rig), 0);
        tu_run_result r = tu_run("inject", f.rig, f.gt, "-o", f.out, NULL);
        ck_assert_msg(r.status == 0, "%s", r.err);
        tu_run_free(&r);
        size_t n;
        double *w = read_all(f.out, "/sensors/imu/angular_velocity", 3, &n);
        double *a = read_all(f.out, "/sensors/imu/specific_force", 3, &n);
        const double g = c ? sensim_geo_normal_gravity(lat, 260.0) : 9.80665;
        ck_assert_within(a[2], g, 1e-9);
        ck_assert_within(a[0], 0.0, 1e-12);
        ck_assert_within(a[1], 0.0, 1e-12);
        ck_assert_within(w[0], 0.0, 1e-15);
        ck_assert_within(w[1], c ? Om * cos(phi) : 0.0, 1e-15);
        ck_assert_within(w[2], c ? Om * sin(phi) : 0.0, 1e-15);
        if (c) {
            ck_assert_within(a[2], 9.803653045021967, 1e-9);
            ck_assert_within(sqrt(w[1] * w[1] + w[2] * w[2]) * 180 / M_PI * 3600, 15.04, 0.01);
        }
        free(w);
        free(a);
    }
    /* Moving east at 10 m/s: the Coriolis term 2 Omega x v adds
     * (0, 20 Omega sin phi, -20 Omega cos phi) to the specific force; the
     * 1 km line stays in the tangent-plane region (no warning). */
    teardown(&f);
    f = setup("--shape line --duration 100 --speed 10 --heading 90 --rate 100 --origin 43.0731,-89.4012,260");
    snprintf(rig, sizeof rig, "earth: { gravity: standard }\nsensors:\n%s", imu);
    ck_assert_int_eq(tu_write_file(f.rig, rig), 0);
    tu_run_result r = tu_run("inject", f.rig, f.gt, "-o", f.out, NULL);
    ck_assert_msg(r.status == 0 && !strstr(r.err, "warning"), "%s", r.err);
    tu_run_free(&r);
    size_t n;
    double *a = read_all(f.out, "/sensors/imu/specific_force", 3, &n);
    ck_assert_within(a[3 * 10 + 1], 20 * Om * sin(phi), 1e-9);
    ck_assert_within(a[3 * 10 + 2], 9.80665 - 20 * Om * cos(phi), 1e-9);
    free(a);
    expect_failure(&f, "earth: { gravity: moon }\nsensors:\n  - { name: imu, type: imu, rate_hz: 50, gyro: {} }\n",
                   NULL, (const char *[]){"rig.yaml:1", "gravity", "moon", NULL});
    teardown(&f);
    /* 20 km east: the vertical there is 0.18 deg from the origin's. */
    f = setup("--shape line --duration 1000 --speed 20 --heading 90 --rate 10");
    snprintf(rig, sizeof rig, "sensors:\n%s", imu);
    ck_assert_int_eq(tu_write_file(f.rig, rig), 0);
    r = tu_run("inject", f.rig, f.gt, "-o", f.out, NULL);
    ck_assert_msg(r.status == 0, "%s", r.err);
    ck_assert_msg(strstr(r.err, "warning") && strstr(r.err, "20 km") && strstr(r.err, "tangent plane"), "%s", r.err);
    tu_run_free(&r);
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

/* Writes the rig (when given) and runs inject on the fixture's ground
 * truth into its output, which must succeed. */
static void inject_ok(fixture *f, const char *rig_text)
{
    if (rig_text)
        ck_assert_int_eq(tu_write_file(f->rig, rig_text), 0);
    tu_run_result r = tu_run("inject", f->rig, f->gt, "-o", f->out, NULL);
    ck_assert_msg(r.status == 0, "%s", r.err);
    tu_run_free(&r);
}

/* Clock offset c, drift d, start delay s0 and a collection window W on an
 * imu, a gnss, an odometer and an encoder at the same rate, on a line
 * accelerating from rest at a = 0.5 m/s^2 (east = a t^2 / 2, speed a t).
 * Closed forms (sensim-inject(1) TIMING): t_k = s0 + k / (f (1 + d)),
 * t_sensor = t_k + c + d t_k; the gnss east is the 32-point midpoint mean of
 * a t^2 / 2 over [t_k - W, t_k], i.e. a/2 ((t_k - W/2)^2 + W^2/12 -
 * (W/32)^2/12) (the midpoint rule's error on t^2 is h^2/12 per point);
 * the window-mean speed a (t - W/2) is linear, so the odometer distance
 * (its trapezoid integral) is a/2 ((t_k - W/2)^2 - (t_0 - W/2)^2) exactly;
 * the encoder of that distance, unbounded by default, reads the same and
 * its speed is the change over the sensor clock's interval, a (tm - W/2) /
 * (1 + d) with tm the interval's midpoint. s0 > W so no window is clamped. */
START_TEST(timing_for_every_sensor_closed_form)
{
    fixture f = setup("--shape line --duration 20 --rate 100 --accel 0.5 --speed 100");
    const char *rig = "seed: 5\n"
                      "sensors:\n"
                      "  - name: imu\n"
                      "    type: imu\n"
                      "    rate_hz: 10\n"
                      "    timing: &tm { clock_offset: 0.3, clock_drift: \"200 ppm\", start_delay: 0.5,\n"
                      "                  collection_window: 0.4 }\n"
                      "    accel: { bias: 0 }\n"
                      "  - { name: gps, type: gnss, rate_hz: 10, timing: *tm }\n"
                      "  - { name: odo, type: odometer, rate_hz: 10, timing: *tm }\n"
                      "  - { name: enc, type: encoder, source: distance, rate_hz: 10, timing: *tm }\n";
    inject_ok(&f, rig);
    const double c = 0.3, d = 200e-6, s0 = 0.5, W = 0.4, a = 0.5, fr = 10;
    const size_t expect_n = (size_t)floor((20.0 - s0) * fr * (1 + d)) + 1;
    size_t n, m;
    double *its = read_all(f.out, "/sensors/imu/t_sample", 1, &n);
    double *itc = read_all(f.out, "/sensors/imu/t_sensor", 1, &m);
    ck_assert_uint_eq(n, expect_n);
    static const char *const names[] = {"gps", "odo", "enc"};
    for (int i = 0; i < 3; i++) {
        char p1[64], p2[64], p3[64];
        snprintf(p1, sizeof p1, "/sensors/%s/t_sample", names[i]);
        snprintf(p2, sizeof p2, "/sensors/%s/t_sensor", names[i]);
        snprintf(p3, sizeof p3, "/sensors/%s/t", names[i]);
        double *ts = read_all(f.out, p1, 1, &m), *tc = read_all(f.out, p2, 1, &m), *t = read_all(f.out, p3, 1, &m);
        ck_assert_uint_eq(m, expect_n);
        for (size_t k = 0; k < m; k++) {
            double tk = s0 + (double)k / (fr * (1 + d));
            ck_assert_double_eq_tol(ts[k], tk, 1e-12);
            ck_assert_double_eq_tol(tc[k], tk + c + d * tk, 1e-12);
            ck_assert(t[k] == ts[k]); /* no lag */
            /* The same stamps as the IMU's, bit for bit. */
            ck_assert(ts[k] == its[k] && tc[k] == itc[k]);
        }
        free(ts), free(tc), free(t);
    }
    double *ts = read_all(f.out, "/sensors/gps/t_sample", 1, &m);
    double *enu = read_all(f.out, "/sensors/gps/enu", 3, &m);
    double *dist = read_all(f.out, "/sensors/odo/distance", 1, &m);
    double *pos = read_all(f.out, "/sensors/enc/position", 1, &m);
    double *sp = read_all(f.out, "/sensors/enc/speed", 1, &m);
    const double h = W / SENSIM_WINDOW_POINTS, u0 = ts[0] - W / 2;
    for (size_t k = 0; k < m; k++) {
        double u = ts[k] - W / 2;
        ck_assert_double_eq_tol(enu[3 * k], a / 2 * (u * u + W * W / 12 - h * h / 12), 1e-9);
        ck_assert_double_eq_tol(enu[3 * k + 1], 0.0, 1e-9);
        ck_assert_double_eq_tol(dist[k], a / 2 * (u * u - u0 * u0), 1e-9);
        ck_assert_double_eq_tol(pos[k], dist[k], 1e-12);
        if (k > 0) {
            double tm = 0.5 * (ts[k] + ts[k - 1]);
            ck_assert_double_eq_tol(sp[k], a * (tm - W / 2) / (1 + d), 1e-9);
        }
    }
    /* The distance encoder did not wrap at 2 pi m: it reads ~ 95 m. */
    ck_assert(pos[m - 1] > 90.0);
    free(its), free(itc), free(ts), free(enu), free(dist), free(pos), free(sp);
    teardown(&f);
}
END_TEST

/* A heading encoder on a circle (yaw = w t, w = v / R = 0.2 rad/s) with a
 * 1 s collection window reads the window mean of the yaw, w (t_k - 1/2)
 * (the midpoint rule is exact for a linear yaw; slerp about z keeps it
 * linear between rows), wrapped into [0, 2 pi). */
START_TEST(encoder_heading_window_mean)
{
    fixture f = setup("--shape circle --duration 40 --rate 100 --speed 2 --radius 10");
    inject_ok(&f, "sensors:\n"
                  "  - { name: enc, type: encoder, source: heading, rate_hz: 20,\n"
                  "      timing: { start_delay: 1, collection_window: 1 } }\n");
    size_t n;
    double *ts = read_all(f.out, "/sensors/enc/t_sample", 1, &n);
    double *pos = read_all(f.out, "/sensors/enc/position", 1, &n);
    ck_assert_uint_eq(n, 781);
    for (size_t k = 0; k < n; k++) {
        ck_assert(pos[k] >= 0 && pos[k] < 2 * M_PI);
        ck_assert_double_eq_tol(remainder(pos[k] - 0.2 * (ts[k] - 0.5), 2 * M_PI), 0.0, 1e-9);
    }
    free(ts), free(pos);
    teardown(&f);
}
END_TEST

/* Jitter of 0.3 s at 10 Hz makes deliveries overtake: each sensor keeps
 * them in order (strictly increasing, none before its sample), and the
 * output is bit-identical at 1 and 2 threads and any block size. */
START_TEST(ordered_delivery_and_threads)
{
    fixture f = setup("--shape circle --duration 30 --rate 100 --speed 2 --radius 10");
    const char *rig = "seed: 11\n"
                      "sensors:\n"
                      "  - name: gps\n"
                      "    type: gnss\n"
                      "    rate_hz: 10\n"
                      "    timing: &tm { lag: 0.01, jitter: 0.3, clock_drift: 1.0e-3, collection_window: 0.05 }\n"
                      "    position_noise: { model: gaussian, sigma: 0.5 }\n"
                      "    outages: { windows: [[10, 12]] }\n"
                      "  - { name: odo, type: odometer, rate_hz: 10, pulses_per_rev: 512, noise_sigma: 0.01,\n"
                      "      timing: *tm }\n"
                      "  - { name: enc, type: encoder, source: heading, rate_hz: 10, noise_sigma: 0.001,\n"
                      "      timing: *tm }\n";
    ck_assert_int_eq(tu_write_file(f.rig, rig), 0);
    char *o2 = tu_path(f.dir, "o2.h5");
    tu_run_result r = tu_run("inject", f.rig, f.gt, "-o", f.out, "--threads", "1", NULL);
    ck_assert_msg(r.status == 0, "%s", r.err);
    tu_run_free(&r);
    r = tu_run("inject", f.rig, f.gt, "-o", o2, "--threads", "2", "--block", "7", NULL);
    ck_assert_msg(r.status == 0, "%s", r.err);
    tu_run_free(&r);
    char cmd[2048];
    snprintf(cmd, sizeof cmd, "cmp -s \"%s\" \"%s\"", f.out, o2);
    ck_assert_int_eq(system(cmd), 0);
    static const char *const names[] = {"gps", "odo", "enc"};
    for (int i = 0; i < 3; i++) {
        char p1[64], p2[64];
        snprintf(p1, sizeof p1, "/sensors/%s/t", names[i]);
        snprintf(p2, sizeof p2, "/sensors/%s/t_sample", names[i]);
        size_t n;
        double *t = read_all(f.out, p1, 1, &n), *ts = read_all(f.out, p2, 1, &n);
        size_t held = 0;
        for (size_t k = 0; k < n; k++) {
            ck_assert(t[k] >= ts[k]);
            if (k) {
                ck_assert_msg(t[k] > t[k - 1], "%s: t[%zu] = %.17g <= t[%zu] = %.17g", names[i], k, t[k], k - 1,
                              t[k - 1]);
                held += t[k] == nextafter(t[k - 1], INFINITY);
            }
        }
        /* With jitter 0.3 s against 0.1 s spacing, P(overtake) per sample is
         * well over 1/3: hundreds of held deliveries out of ~280. */
        ck_assert_msg(held > 20, "%s: only %zu deliveries were held back", names[i], held);
        free(t), free(ts);
    }
    free(o2);
    teardown(&f);
}
END_TEST

START_TEST(bad_timing_values)
{
    fixture f = setup("--shape line --duration 2 --rate 100");
    expect_failure(&f, "sensors:\n  - name: gps\n    type: gnss\n    rate_hz: 10\n"
                       "    timing: { collection_window: -0.1 }\n",
                   NULL, (const char *[]){"rig.yaml:5", "collection_window", NULL});
    expect_failure(&f, "sensors:\n  - name: odo\n    type: odometer\n    rate_hz: 10\n"
                       "    timing:\n      clock_drift: .nan\n",
                   NULL, (const char *[]){"rig.yaml:6", "clock_drift", NULL});
    expect_failure(&f, "sensors:\n  - name: enc\n    type: encoder\n    rate_hz: 10\n"
                       "    timing: { clock_offset: .nan }\n",
                   NULL, (const char *[]){"rig.yaml:5", "clock_offset", NULL});
    expect_failure(&f, "sensors:\n  - name: gps\n    type: gnss\n    rate_hz: 10\n"
                       "    timing: { jitter: -1 }\n",
                   NULL, (const char *[]){"rig.yaml:5", "jitter", NULL});
    /* A start delay past the end of the ground truth leaves no sample:
     * the message says so, naming the key's line, the delay and the span. */
    expect_failure(&f, "sensors:\n  - name: gps\n    type: gnss\n    rate_hz: 10\n"
                       "    timing: { start_delay: 5 }\n",
                   NULL, (const char *[]){"rig.yaml:5", "start_delay 5 s is longer than the ground truth", "gt.h5", NULL});
    expect_failure(&f, "sensors:\n  - name: imu\n    type: imu\n    rate_hz: 10\n"
                       "    timing:\n      start_delay: 500\n    gyro: { noise_sigma: 0.1 }\n",
                   NULL, (const char *[]){"rig.yaml:6", "start_delay 500 s", NULL});
    teardown(&f);
}
END_TEST

/* Clean data recorded at 200 Hz noised by a rig that says 100 Hz: an error
 * naming the dataset, the recorded rate and the rig's key and line. */
START_TEST(clean_data_rate_checked)
{
    fixture f = setup("--shape line --duration 1 --rate 100");
    char *in = tu_path(f.dir, "clean.h5");
    const size_t n = 400;
    double *t = malloc(n * sizeof *t), *w = calloc(3 * n, sizeof *w);
    for (size_t k = 0; k < n; k++)
        t[k] = 1.0 + k * 0.005 + ((k % 2) ? 2e-4 : -2e-4); /* jittered stamps, mean rate 200 Hz */
    sensim_log *log = sensim_log_create(in, "test");
    size_t three = 3;
    ck_assert_int_eq(sensim_log_write(log, "/sensors/imu/t", SENSIM_F64, n, 0, NULL, t, "s"), SENSIM_OK);
    ck_assert_int_eq(sensim_log_write(log, "/sensors/imu/angular_velocity", SENSIM_F64, n, 1, &three, w, "rad/s"),
                     SENSIM_OK);
    ck_assert_int_eq(sensim_log_commit(log), SENSIM_OK);
    expect_failure(&f, "sensors:\n  - name: imu\n    type: imu\n    rate_hz: 100\n    gyro: { noise_sigma: 0.01 }\n",
                   in, (const char *[]){"clean.h5", "/sensors/imu/t", "recorded at 199.9", "rig.yaml:4",
                                        "'rate_hz' is 100", NULL});
    /* Within 1% of the recorded rate is accepted. */
    ck_assert_int_eq(tu_write_file(f.rig, "sensors:\n  - name: imu\n    type: imu\n    rate_hz: 201\n"
                                          "    gyro: { noise_sigma: 0.01 }\n"),
                     0);
    tu_run_result r = tu_run("inject", f.rig, in, "-o", f.out, NULL);
    ck_assert_msg(r.status == 0, "%s", r.err);
    tu_run_free(&r);
    free(t), free(w), free(in);
    teardown(&f);
}
END_TEST

/* The dipole field is evaluated where the magnetometer is: a sensor 5 km
 * ahead of a body facing north reads what a sensor at the body origin reads
 * on a body 5 km further north (to rounding), and not what it reads at the
 * body origin (the dipole changes by ~3 dr / r = 2e-3 relative, ~1e-7 T). */
START_TEST(magnetometer_at_lever_arm)
{
    fixture f = setup("--shape static --duration 1 --rate 10 --heading 0");
    fixture g = setup("--shape static --duration 1 --rate 10 --heading 0 --start 0,5000,0");
    const char *rig = "sensors:\n"
                      "  - { name: arm, type: imu, rate_hz: 10, mag: { bias: 0 },\n"
                      "      mount: { position: [5000, 0, 0] } }\n"
                      "  - { name: origin, type: imu, rate_hz: 10, mag: { bias: 0 } }\n";
    inject_ok(&f, rig);
    inject_ok(&g, rig);
    size_t n;
    double *arm = read_all(f.out, "/sensors/arm/magnetic_field", 3, &n);
    double *here = read_all(f.out, "/sensors/origin/magnetic_field", 3, &n);
    double *there = read_all(g.out, "/sensors/origin/magnetic_field", 3, &n);
    for (int a = 0; a < 3; a++)
        ck_assert_double_eq_tol(arm[a], there[a], 1e-14);
    double diff = 0;
    for (int a = 0; a < 3; a++)
        diff += fabs(arm[a] - here[a]);
    ck_assert_msg(diff > 2e-8, "lever arm ignored: diff %g T", diff);
    free(arm), free(here), free(there);
    teardown(&f);
    teardown(&g);
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
    tcase_add_test(tc, gazebo_and_airsim_rig_keys);
    tcase_add_test(tc, runaway_output_refused);
    tcase_add_test(tc, earth_gravity_rotation_and_tangent_plane);
    tcase_add_test(tc, bad_logs);
    tcase_add_test(tc, rig_api_and_magnetometer);
    tcase_add_test(tc, timing_for_every_sensor_closed_form);
    tcase_add_test(tc, encoder_heading_window_mean);
    tcase_add_test(tc, ordered_delivery_and_threads);
    tcase_add_test(tc, bad_timing_values);
    tcase_add_test(tc, clean_data_rate_checked);
    tcase_add_test(tc, magnetometer_at_lever_arm);
    suite_add_tcase(s, tc);
    return s;
}
