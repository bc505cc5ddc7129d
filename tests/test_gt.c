/* Ground truth (lib/gt.c): the one interpolation every sensor sees, checked
 * against closed forms, a cursor against a window, and an injected IMU
 * against a rendered lidar on the same log. */
#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sensim/gt.h"
#include "sensim/log.h"
#include "sensim/render.h"
#include "sensim/rig.h"
#include "testutil.h"

/* The motion of the tests: height z(t) = 2 + A sin(w t) and roll
 * phi(t) = B sin(w t) about x, rows every dt; velocity and acceleration
 * exact derivatives, so the rows are a consistent trajectory. */
#define GT_A 0.5
#define GT_B 0.3
#define GT_W 3.0

static void motion_row(double t, sensim_gt_block *b, size_t i)
{
    const double phi = GT_B * sin(GT_W * t), dphi = GT_B * GT_W * cos(GT_W * t);
    b->t[i] = t;
    double p[3] = {0.2 * t, 0, 2 + GT_A * sin(GT_W * t)}, v[3] = {0.2, 0, GT_A * GT_W * cos(GT_W * t)};
    double a[3] = {0, 0, -GT_A * GT_W * GT_W * sin(GT_W * t)}, q[4] = {cos(phi / 2), sin(phi / 2), 0, 0};
    double w[3] = {dphi, 0, 0};
    memcpy(b->position + 3 * i, p, sizeof p);
    memcpy(b->velocity + 3 * i, v, sizeof v);
    memcpy(b->acceleration + 3 * i, a, sizeof a);
    memcpy(b->angular_velocity + 3 * i, w, sizeof w);
    memcpy(b->orientation + 4 * i, q, sizeof q);
}

/* A log of n rows of the motion every dt from t0. */
static void write_motion(const char *path, size_t n, double t0, double dt)
{
    sensim_log *log = sensim_log_create(path, "test_gt");
    ck_assert_ptr_nonnull(log);
    sensim_gt_writer *w = sensim_gt_writer_create(log, NULL);
    ck_assert_ptr_nonnull(w);
    sensim_gt_block b;
    ck_assert_int_eq(sensim_gt_block_init(&b, n), SENSIM_OK);
    for (size_t i = 0; i < n; i++)
        motion_row(t0 + (double)i * dt, &b, i);
    b.n = n;
    ck_assert_int_eq(sensim_gt_writer_append(w, &b), SENSIM_OK);
    sensim_gt_writer_close(w);
    ck_assert_msg(sensim_log_commit(log) == SENSIM_OK, "%s", sensim_last_error());
    sensim_gt_block_free(&b);
}

/* Hermite interpolation reproduces a cubic exactly (its basis spans the
 * cubics given values and slopes at both ends), while a straight line
 * between the rows misses its middle by (p0 + p1)/2 - p(1/2). */
START_TEST(hermite_reproduces_cubics)
{
    sensim_gt_block b;
    ck_assert_int_eq(sensim_gt_block_init(&b, 2), SENSIM_OK);
    memset(b.orientation, 0, 8 * sizeof *b.orientation);
    b.orientation[0] = b.orientation[4] = 1;
    b.n = 2;
    b.t[0] = 1.0;
    b.t[1] = 1.25;
    /* p(t) = c0 + c1 t + c2 t^2 + c3 t^3 per axis. */
    const double c[3][4] = {{1, -2, 0.5, 3}, {0, 4, -1, -0.25}, {2, 0, 0, 7}};
    for (int r = 0; r < 2; r++)
        for (int k = 0; k < 3; k++) {
            double t = b.t[r];
            b.position[3 * r + k] = c[k][0] + c[k][1] * t + c[k][2] * t * t + c[k][3] * t * t * t;
            b.velocity[3 * r + k] = c[k][1] + 2 * c[k][2] * t + 3 * c[k][3] * t * t;
            b.acceleration[3 * r + k] = 2 * c[k][2] + 6 * c[k][3] * t;
            b.angular_velocity[3 * r + k] = k + r;
        }
    for (int j = 0; j <= 20; j++) {
        double t = 1.0 + 0.25 * j / 20;
        sensim_gt_state s;
        sensim_gt_interpolate(&b, sensim_gt_block_interval(&b, t), t, &s);
        for (int k = 0; k < 3; k++) {
            double p = c[k][0] + c[k][1] * t + c[k][2] * t * t + c[k][3] * t * t * t;
            ck_assert_within(s.position[k], p, 1e-12);
            /* Acceleration is linear in t for a cubic: exact too. */
            ck_assert_within(s.acceleration[k], 2 * c[k][2] + 6 * c[k][3] * t, 1e-12);
            ck_assert_within(s.angular_velocity[k], k + (t - 1.0) / 0.25, 1e-12);
            ck_assert_within(s.angular_accel[k], 1 / 0.25, 1e-12);
        }
    }
    /* At a row's time the row's position exactly. */
    sensim_gt_state s;
    sensim_gt_interpolate(&b, 0, 1.0, &s);
    ck_assert(s.position[0] == b.position[0] && s.position[1] == b.position[1] && s.position[2] == b.position[2]);
    sensim_gt_block_free(&b);
}
END_TEST

/* A window (any size, queried in any order) and a cursor (any buffer)
 * give the same state at the same time, to the last bit away from rows;
 * the window holds the rows around the span it was asked to cover. */
START_TEST(window_equals_cursor)
{
    char *dir = tu_mkdtemp(), *gt = tu_path(dir, "gt.h5");
    write_motion(gt, 200, 10.0, 0.05);
    sensim_log *log = sensim_log_open(gt);
    ck_assert_ptr_nonnull(log);
    const size_t sizes[] = {2, 3, 17, 1000};
    for (size_t z = 0; z < 4; z++) {
        sensim_gt_cursor *c = sensim_gt_cursor_create(log, sizes[z]);
        sensim_gt_window *w = sensim_gt_window_create(log, sizes[z]);
        ck_assert_ptr_nonnull(c);
        ck_assert_ptr_nonnull(w);
        ck_assert_uint_eq(sensim_gt_window_rows(w), 200);
        ck_assert_double_eq(sensim_gt_window_t_first(w), 10.0);
        ck_assert_double_eq(sensim_gt_window_t_last(w), sensim_gt_cursor_t_last(c));
        for (int j = 0; j < 500; j++) {
            /* Forward, with a jump back now and then; never on a row. */
            double t = 10.0 + fmod(j * 0.0197 + (j % 50 == 49 ? -3 : 0) + 3, 9.94) + 0.0013;
            sensim_gt_state a, b;
            ck_assert_int_eq(sensim_gt_cursor_at(c, t, &a), SENSIM_OK);
            ck_assert_int_eq(sensim_gt_window_cover(w, t, t + 0.01 * (j % 4)), SENSIM_OK);
            sensim_gt_window_at(w, t, &b);
            ck_assert_msg(memcmp(&a, &b, sizeof a) == 0, "window %zu, t %.9f: states differ", sizes[z], t);
        }
        sensim_gt_cursor_destroy(c);
        sensim_gt_window_destroy(w);
    }
    /* Outside the log: the cursor refuses, the window holds the ends. */
    sensim_gt_cursor *c = sensim_gt_cursor_create(log, 16);
    sensim_gt_state s;
    ck_assert_int_eq(sensim_gt_cursor_at(c, 9.0, &s), SENSIM_EINVAL);
    ck_assert_ptr_nonnull(strstr(sensim_last_error(), "outside the ground truth"));
    sensim_gt_window *w = sensim_gt_window_create(log, 16);
    ck_assert_int_eq(sensim_gt_window_cover(w, 9.0, 9.5), SENSIM_OK);
    sensim_gt_window_at(w, 9.0, &s);
    ck_assert_double_eq(s.position[2], 2 + GT_A * sin(GT_W * 10.0));
    /* A span past the end holds the last row (its last interval loaded). */
    const double t_end = 10.0 + 199 * 0.05;
    ck_assert_int_eq(sensim_gt_window_cover(w, t_end + 1, t_end + 2), SENSIM_OK);
    sensim_gt_window_at(w, t_end + 1.5, &s);
    ck_assert_double_eq(s.position[2], 2 + GT_A * sin(GT_W * t_end));
    ck_assert_double_eq(s.t, t_end);
    sensim_gt_cursor_destroy(c);
    sensim_gt_window_destroy(w);
    sensim_log_close(log);
    tu_rmtree(dir);
    free(gt), free(dir);
}
END_TEST

/* The body's height and roll at t as the IMU's cursor gives them. */
static void cursor_pose(sensim_gt_cursor *c, double t, double *z, double q[4])
{
    sensim_gt_state s;
    ck_assert_int_eq(sensim_gt_cursor_at(c, t, &s), SENSIM_OK);
    *z = s.position[2];
    memcpy(q, s.orientation, 4 * sizeof *q);
}

/* Range to the ground plane z = 0 of a beam at (azimuth, elevation) in the
 * sensor frame, the sensor mounted at height hm on a body at height z with
 * orientation q (roll only). */
static double plane_range(double z, const double q[4], double hm, double az, double el)
{
    const double phi = 2 * atan2(q[1], q[0]), c = cos(phi), s = sin(phi);
    const double dy = cos(el) * sin(az), dz = sin(el);
    const double oz = z + c * hm;    /* the mount (0, 0, hm) rotated by roll */
    const double wz = s * dy + c * dz; /* the beam's world z */
    return -oz / wz;
}

/* One log, an IMU injected on it and a lidar rendered on it: at every time
 * the lidar fires, the pose it was cast from is the pose the IMU's ground
 * truth gives (Hermite position, slerp orientation), far inside the 5 mm
 * by which linear interpolation between the 0.1 s rows would miss; and
 * where a beam fires at an IMU sample's time the roll the IMU measured
 * (from the direction of its specific force) predicts the lidar's range. */
START_TEST(imu_and_lidar_see_the_same_pose)
{
    char *dir = tu_mkdtemp(), *gt = tu_path(dir, "gt.h5"), *imu = tu_path(dir, "imu.h5"),
         *lid = tu_path(dir, "lidar.h5");
    write_motion(gt, 21, 0.0, 0.1);
    sensim_rig *rig = sensim_rig_load_string("seed: 3\nsensors:\n"
                                             "  - {name: imu, type: imu, rate_hz: 200, accel: {noise_density: 0}}\n",
                                             "rig.yaml");
    ck_assert_msg(rig != NULL, "%s", sensim_last_error());
    sensim_inject_opts io = {.seed = 3};
    ck_assert_msg(sensim_rig_inject(rig, &io, gt, imu) == SENSIM_OK, "%s", sensim_last_error());

    /* A lidar 0.4 m above the body over a plane: 4 channels, 20 columns at
     * 10 Hz, so column k fires k / 200 s into a scan, on the IMU's grid. */
    const double hm = 0.4;
    sensim_scene *scene = sensim_scene_create();
    int mesh = sensim_scene_add_plane(scene, "ground", 400, 400, 2, 2);
    ck_assert_int_ge(sensim_scene_add_object(scene, mesh, 0, sensim_pose_identity()), 0);
    ck_assert_int_eq(sensim_scene_commit(scene), SENSIM_OK);
    sensim_render_sensor rs;
    memset(&rs, 0, sizeof rs);
    snprintf(rs.name, sizeof rs.name, "lidar");
    rs.type = SENSIM_SENSOR_LIDAR;
    rs.rate_hz = 10;
    rs.mount = sensim_pose_identity();
    rs.mount.p.z = hm;
    rs.lidar = sensim_render_lidar_default_params();
    rs.lidar.channels = 4;
    rs.lidar.vfov_min = -80 * M_PI / 180;
    rs.lidar.vfov_max = -40 * M_PI / 180;
    rs.lidar.columns = 20;
    rs.lidar.rate_hz = 10;
    rs.lidar.max_range = 300;
    rs.lidar.falloff = SENSIM_FALLOFF_NONE;
    sensim_render_log_opts ro = sensim_render_log_default_opts();
    ck_assert_msg(sensim_render_log(&rs, scene, NULL, &ro, gt, lid) == SENSIM_OK, "%s", sensim_last_error());
    sensim_render_lidar *rl = sensim_render_lidar_create(&rs.lidar);
    ck_assert_ptr_nonnull(rl);
    ck_assert_within(sensim_render_lidar_fire_time(rl, 7, 2), 7 / 200.0, 1e-12);
    sensim_render_lidar_destroy(rl);

    sensim_log *li = sensim_log_open(lid), *lm = sensim_log_open(imu), *lg = sensim_log_open(gt);
    ck_assert_ptr_nonnull(li);
    ck_assert_ptr_nonnull(lm);
    sensim_gt_cursor *cur = sensim_gt_cursor_create(lg, 16);
    size_t ns, np, nm;
    ck_assert_int_eq(sensim_log_check_time(li, "/sensors/lidar/t", &ns), SENSIM_OK);
    ck_assert_int_eq(sensim_log_check_time(lm, "/sensors/imu/t", &nm), SENSIM_OK);
    ck_assert_uint_eq(ns, 20);
    uint64_t *off = malloc((ns + 1) * sizeof *off);
    double *ts = malloc(ns * sizeof *ts), *tm = malloc(nm * sizeof *tm), *f = malloc(3 * nm * sizeof *f);
    ck_assert_int_eq(sensim_log_read(li, "/sensors/lidar/scan_offset", SENSIM_U64, 0, ns + 1, off), SENSIM_OK);
    ck_assert_int_eq(sensim_log_read_f64(li, "/sensors/lidar/t_sample", 0, ns, ts), SENSIM_OK);
    ck_assert_int_eq(sensim_log_read_f64(lm, "/sensors/imu/t_sample", 0, nm, tm), SENSIM_OK);
    ck_assert_int_eq(sensim_log_read_f64(lm, "/sensors/imu/specific_force", 0, nm, f), SENSIM_OK);
    np = off[ns];
    ck_assert_uint_eq(np, 20 * 20 * 4);
    double *rg = malloc(np * sizeof *rg), *az = malloc(np * sizeof *az), *el = malloc(np * sizeof *el),
           *to = malloc(np * sizeof *to);
    ck_assert_int_eq(sensim_log_read_f64(li, "/sensors/lidar/range", 0, np, rg), SENSIM_OK);
    ck_assert_int_eq(sensim_log_read_f64(li, "/sensors/lidar/azimuth", 0, np, az), SENSIM_OK);
    ck_assert_int_eq(sensim_log_read_f64(li, "/sensors/lidar/elevation", 0, np, el), SENSIM_OK);
    ck_assert_int_eq(sensim_log_read_f64(li, "/sensors/lidar/time_offset", 0, np, to), SENSIM_OK);
    size_t paired = 0;
    double worst_linear = 0;
    for (size_t s = 0; s < ns; s++)
        for (uint64_t i = off[s]; i < off[s + 1]; i++) {
            /* float32 range, angles and time offset: 2e-6 m covers them. */
            double tf = ts[s] + to[i], z, q[4];
            cursor_pose(cur, tf, &z, q);
            ck_assert_within(rg[i], plane_range(z, q, hm, az[i], el[i]), 2e-6 * (1 + rg[i]));
            /* What a straight line between the rows would have given. */
            double u = tf / 0.1 - floor(tf / 0.1), t0 = tf - u * 0.1, zl = (1 - u) * (2 + GT_A * sin(GT_W * t0)) +
                                                                          u * (2 + GT_A * sin(GT_W * (t0 + 0.1)));
            double dl = fabs(plane_range(zl, q, hm, az[i], el[i]) - rg[i]);
            worst_linear = dl > worst_linear ? dl : worst_linear;
            /* The IMU sample fired at the same instant. */
            size_t k = (size_t)llround(tf * 200);
            if (k < nm && fabs(tm[k] - tf) < 1e-7) {
                const double phi = atan2(f[3 * k + 1], f[3 * k + 2]), qi[4] = {cos(phi / 2), sin(phi / 2), 0, 0};
                ck_assert_within(rg[i], plane_range(z, qi, hm, az[i], el[i]), 2e-6 * (1 + rg[i]));
                paired++;
            }
        }
    ck_assert_uint_eq(paired, np);
    ck_assert_msg(worst_linear > 1e-3, "linear interpolation would differ by only %g m", worst_linear);
    free(off), free(ts), free(tm), free(f), free(rg), free(az), free(el), free(to);
    sensim_gt_cursor_destroy(cur);
    sensim_log_close(li);
    sensim_log_close(lm);
    sensim_log_close(lg);
    sensim_scene_destroy(scene);
    sensim_rig_free(rig);
    tu_rmtree(dir);
    free(gt), free(imu), free(lid), free(dir);
}
END_TEST

Suite *suite_gt(void)
{
    Suite *su = suite_create("gt");
    TCase *tc = tcase_create("core");
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, hermite_reproduces_cubics);
    tcase_add_test(tc, window_equals_cursor);
    tcase_add_test(tc, imu_and_lidar_see_the_same_pose);
    suite_add_tcase(su, tc);
    return su;
}
