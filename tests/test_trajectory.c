/* Analytic trajectories: every derivative against central finite differences
 * of the analytic position and orientation, closed forms of the circle,
 * figure-8 periodicity, the lane change, validation and block filling. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sensim/log.h"
#include "sensim/trajectory.h"
#include "testutil.h"

/* Central differences with h = 1e-4 s: truncation h^2/6 |f'''| is below
 * 2e-9 times the third derivative (at most a few hundred here), rounding
 * 1e-16 |f| / h below 1e-9 for positions up to 100 m. Both stay far below
 * the 1e-6 relative tolerance (absolute for values under 1). */
#define H 1e-4
#define RTOL 1e-6

static void check_close(const char *what, double t, double got, double want)
{
    ck_assert_msg(fabs(got - want) <= RTOL * fmax(1.0, fabs(want)), "%s at t = %g: analytic %.12g, difference %.12g",
                  what, t, want, got);
}

/* Body angular velocity from the quaternion's rate: w = 2 conj(q) dq/dt. */
static sensim_vec3 body_rate(sensim_quat q, sensim_quat dq)
{
    sensim_quat w = sensim_quat_mul(sensim_quat_conj(q), dq);
    return sensim_vec3_make(2 * w.x, 2 * w.y, 2 * w.z);
}

static void check_derivatives(const sensim_trajectory *tr, double t)
{
    sensim_trajectory_state s, a, b;
    sensim_trajectory_eval(tr, t, &s);
    sensim_trajectory_eval(tr, t - H, &a);
    sensim_trajectory_eval(tr, t + H, &b);
    double pa[3], pb[3], va[3], vb[3], v[3], acc[3];
    sensim_vec3_store(a.position, pa);
    sensim_vec3_store(b.position, pb);
    sensim_vec3_store(a.velocity, va);
    sensim_vec3_store(b.velocity, vb);
    sensim_vec3_store(s.velocity, v);
    sensim_vec3_store(s.acceleration, acc);
    for (int i = 0; i < 3; i++) {
        check_close("velocity", t, (pb[i] - pa[i]) / (2 * H), v[i]);
        check_close("acceleration", t, (vb[i] - va[i]) / (2 * H), acc[i]);
    }
    sensim_quat dq = sensim_quat_make((b.orientation.w - a.orientation.w) / (2 * H),
                                      (b.orientation.x - a.orientation.x) / (2 * H),
                                      (b.orientation.y - a.orientation.y) / (2 * H),
                                      (b.orientation.z - a.orientation.z) / (2 * H));
    sensim_vec3 w = body_rate(s.orientation, dq);
    check_close("angular velocity x", t, w.x, s.angular_velocity.x);
    check_close("angular velocity y", t, w.y, s.angular_velocity.y);
    check_close("angular velocity z", t, w.z, s.angular_velocity.z);
    check_close("angular acceleration", t, (b.angular_velocity.z - a.angular_velocity.z) / (2 * H),
                s.angular_acceleration.z);
    ck_assert_within(sensim_quat_norm(s.orientation), 1.0, 1e-15);
    /* Yaw follows the velocity: no side slip, body x along the velocity. */
    double speed = sensim_vec3_norm(s.velocity);
    if (speed > 1e-9) {
        sensim_vec3 vb_ = sensim_quat_rotate_inv(s.orientation, s.velocity);
        ck_assert_within(vb_.x, speed, 1e-12 * fmax(1, speed));
        ck_assert_within(vb_.y, 0, 1e-12 * fmax(1, speed));
    }
    ck_assert_within(s.velocity.z, 0, 0);
    ck_assert_within(s.acceleration.z, 0, 0);
}

static sensim_trajectory *make(sensim_trajectory_shape shape, void (*tweak)(sensim_trajectory_params *))
{
    sensim_trajectory_params p = sensim_trajectory_default_params();
    p.shape = shape;
    p.t0 = 2.5;
    p.start[0] = 12.0;
    p.start[1] = -7.0;
    p.start[2] = 1.5;
    p.yaw = 0.7;
    if (tweak)
        tweak(&p);
    sensim_trajectory *tr = sensim_trajectory_create(&p);
    ck_assert_msg(tr != NULL, "%s", sensim_last_error());
    return tr;
}

static void fast_line(sensim_trajectory_params *p)
{
    p->speed = 15;
    p->accel = 2;
}
static void right_circle(sensim_trajectory_params *p)
{
    p->speed = 3;
    p->radius = 4;
    p->direction = -1;
}
static void sine_right(sensim_trajectory_params *p)
{
    p->speed = 5;
    p->width = -3.5;
    p->length = 40;
    p->lead = 10;
}
static void fig8(sensim_trajectory_params *p)
{
    p->size = 30;
    p->period = 40;
}

START_TEST(derivatives_match_finite_differences)
{
    sensim_trajectory *tr[] = {
        make(SENSIM_TRAJ_STATIC, NULL),          make(SENSIM_TRAJ_LINE, NULL),
        make(SENSIM_TRAJ_LINE, fast_line),       make(SENSIM_TRAJ_CIRCLE, NULL),
        make(SENSIM_TRAJ_CIRCLE, right_circle),  make(SENSIM_TRAJ_SINE, NULL),
        make(SENSIM_TRAJ_SINE, sine_right),      make(SENSIM_TRAJ_FIGURE8, fig8),
    };
    /* Times avoid the shapes' joints (end of the line's acceleration at
     * t0 + 7.5 s, the lane change's ends), where the next derivative steps. */
    for (size_t k = 0; k < sizeof tr / sizeof *tr; k++) {
        for (double t = 2.5 + 0.013; t < 60; t += 0.737)
            if (fabs(t - 10.0) > 1e-3 && fabs(t - 4.5) > 1e-3 && fabs(t - 12.5) > 1e-3 && fabs(t - 22.5) > 1e-3 &&
                fabs(t - 52.5) > 1e-3)
                check_derivatives(tr[k], t);
        sensim_trajectory_destroy(tr[k]);
    }
}
END_TEST

START_TEST(circle_closed_forms)
{
    for (int dir = -1; dir <= 1; dir += 2) {
        sensim_trajectory_params p = sensim_trajectory_default_params();
        p.shape = SENSIM_TRAJ_CIRCLE;
        p.speed = 2;
        p.radius = 10;
        p.direction = dir;
        p.yaw = -1.1;
        sensim_trajectory *tr = sensim_trajectory_create(&p);
        ck_assert_ptr_nonnull(tr);
        /* The centre lies one radius to the left (dir +1) of the start heading. */
        double cx = -dir * 10 * sin(p.yaw), cy = dir * 10 * cos(p.yaw);
        for (double t = 0; t < 100; t += 3.3) {
            sensim_trajectory_state s;
            sensim_trajectory_eval(tr, t, &s);
            ck_assert_within(hypot(s.position.x - cx, s.position.y - cy), 10, 1e-12);
            ck_assert_within(sensim_vec3_norm(s.velocity), 2, 1e-13);
            ck_assert_within(sensim_vec3_norm(s.acceleration), 4.0 / 10, 1e-13);
            ck_assert_within(s.angular_velocity.z, dir * 0.2, 1e-14);
            ck_assert_within(s.angular_acceleration.z, 0, 1e-14);
            /* Centripetal: the acceleration points at the centre. */
            double rx = cx - s.position.x, ry = cy - s.position.y;
            ck_assert_within((rx * s.acceleration.x + ry * s.acceleration.y) / 10, 0.4, 1e-12);
            ck_assert_within(s.yaw, p.yaw + dir * 0.2 * t, 1e-12);
        }
        /* After one lap (2 pi r / v) it is back where it started. */
        sensim_trajectory_state a, b;
        sensim_trajectory_eval(tr, 0, &a);
        sensim_trajectory_eval(tr, 2 * M_PI * 10 / 2, &b);
        ck_assert_within(b.position.x, a.position.x, 1e-12);
        ck_assert_within(b.position.y, a.position.y, 1e-12);
        sensim_trajectory_destroy(tr);
    }
}
END_TEST

START_TEST(figure8_periodic)
{
    sensim_trajectory *tr = make(SENSIM_TRAJ_FIGURE8, fig8);
    double T = 40, A = 15, w = 2 * M_PI / T;
    for (double t = 2.5; t < 45; t += 1.9) {
        sensim_trajectory_state a, b, c;
        sensim_trajectory_eval(tr, t, &a);
        sensim_trajectory_eval(tr, t + T, &b);
        sensim_trajectory_eval(tr, t + 3 * T, &c);
        const double *pa = &a.position.x, *pb = &b.position.x, *pc = &c.position.x;
        for (int i = 0; i < 3; i++) {
            ck_assert_within(pb[i], pa[i], 1e-11);
            ck_assert_within(pc[i], pa[i], 1e-10);
        }
        ck_assert_within(b.orientation.w, a.orientation.w, 1e-12);
        ck_assert_within(b.orientation.z, a.orientation.z, 1e-12);
        ck_assert_within(b.angular_velocity.z, a.angular_velocity.z, 1e-12);
        ck_assert_within(b.acceleration.x, a.acceleration.x, 1e-12);
        double v = sensim_vec3_norm(a.velocity);
        ck_assert(v >= A * w * sqrt(7) / 4 - 1e-12 && v <= A * w * sqrt(2) + 1e-12);
    }
    /* It crosses its start half-way, heading 45 deg to the other side. */
    sensim_trajectory_state s0, sh;
    sensim_trajectory_eval(tr, 2.5, &s0);
    sensim_trajectory_eval(tr, 2.5 + T / 2, &sh);
    ck_assert_within(sh.position.x, 12, 1e-12);
    ck_assert_within(sh.position.y, -7, 1e-12);
    ck_assert_within(s0.yaw, 0.7 + M_PI / 4, 1e-12);
    ck_assert_within(sh.yaw, 0.7 - 5 * M_PI / 4, 1e-12);
    sensim_trajectory_destroy(tr);
}
END_TEST

START_TEST(sine_lane_change)
{
    sensim_trajectory_params p = sensim_trajectory_default_params();
    p.shape = SENSIM_TRAJ_SINE;
    p.speed = 4;
    p.width = 3.5;
    p.length = 30;
    p.lead = 20;
    p.yaw = M_PI / 2; /* northwards: lateral (left) is -x */
    sensim_trajectory *tr = sensim_trajectory_create(&p);
    sensim_trajectory_state s;
    sensim_trajectory_eval(tr, 5.0, &s); /* 20 m: just at the start */
    ck_assert_within(s.position.x, 0, 1e-12);
    ck_assert_within(s.position.y, 20, 1e-12);
    ck_assert_within(s.angular_velocity.z, 0, 1e-15);
    sensim_trajectory_eval(tr, 5.0 + 7.5 / 2, &s); /* midpoint: half the offset, steepest */
    ck_assert_within(s.position.x, -1.75, 1e-12);
    ck_assert_within(s.yaw, M_PI / 2 + atan(2 * 3.5 / 30), 1e-12);
    sensim_trajectory_eval(tr, 12.5, &s); /* 50 m: the end */
    ck_assert_within(s.position.x, -3.5, 1e-12);
    ck_assert_within(s.yaw, M_PI / 2, 1e-12);
    ck_assert_within(s.acceleration.x, 0, 1e-12);
    sensim_trajectory_eval(tr, 30, &s); /* straight on afterwards */
    ck_assert_within(s.position.x, -3.5, 1e-12);
    ck_assert_within(s.position.y, 120, 1e-12);
    ck_assert_within(s.velocity.y, 4, 1e-12);
    /* Continuous lateral acceleration: zero at both ends of the manoeuvre. */
    sensim_trajectory_eval(tr, 5.0 + 1e-9, &s);
    ck_assert_within(s.acceleration.x, 0, 1e-6);
    sensim_trajectory_destroy(tr);
}
END_TEST

START_TEST(line_and_static)
{
    sensim_trajectory_params p = sensim_trajectory_default_params();
    p.speed = 10;
    p.accel = 2;
    sensim_trajectory *tr = sensim_trajectory_create(&p);
    sensim_trajectory_state s;
    sensim_trajectory_eval(tr, -1, &s);
    ck_assert_within(s.position.x, 0, 0);
    ck_assert_within(s.velocity.x, 0, 0);
    sensim_trajectory_eval(tr, 2, &s);
    ck_assert_within(s.position.x, 4, 1e-12);
    ck_assert_within(s.acceleration.x, 2, 0);
    sensim_trajectory_eval(tr, 10, &s); /* 25 m accelerating, 5 s cruising */
    ck_assert_within(s.position.x, 75, 1e-12);
    ck_assert_within(s.velocity.x, 10, 0);
    ck_assert_within(s.acceleration.x, 0, 0);
    ck_assert_within(s.orientation.w, 1, 0);
    sensim_trajectory_destroy(tr);

    p.shape = SENSIM_TRAJ_STATIC;
    p.yaw = M_PI;
    p.start[2] = 3;
    tr = sensim_trajectory_create(&p);
    sensim_trajectory_eval(tr, 1e4, &s);
    ck_assert_within(s.position.z, 3, 0);
    ck_assert_within(sensim_vec3_norm(s.velocity) + sensim_vec3_norm(s.acceleration), 0, 0);
    ck_assert_within(fabs(s.orientation.z), 1, 1e-15);
    sensim_trajectory_destroy(tr);
}
END_TEST

static void expect_invalid(sensim_trajectory_params p, const char *needle)
{
    sensim_error_clear();
    sensim_trajectory *tr = sensim_trajectory_create(&p);
    ck_assert_ptr_null(tr);
    ck_assert_int_eq(sensim_last_status(), SENSIM_EINVAL);
    ck_assert_msg(strstr(sensim_last_error(), needle) != NULL, "message '%s' lacks '%s'", sensim_last_error(),
                  needle);
}

START_TEST(validation)
{
    sensim_trajectory_params d = sensim_trajectory_default_params(), p;
    p = d, p.shape = SENSIM_TRAJ_CIRCLE, p.radius = -1;
    expect_invalid(p, "circle trajectory: radius must be a positive");
    p = d, p.shape = SENSIM_TRAJ_CIRCLE, p.speed = 0;
    expect_invalid(p, "speed must be a positive");
    p = d, p.shape = SENSIM_TRAJ_CIRCLE, p.direction = 0;
    expect_invalid(p, "direction");
    p = d, p.shape = SENSIM_TRAJ_LINE, p.accel = -1;
    expect_invalid(p, "accel must be >= 0");
    p = d, p.shape = SENSIM_TRAJ_SINE, p.length = 0;
    expect_invalid(p, "sine trajectory: length");
    p = d, p.shape = SENSIM_TRAJ_SINE, p.lead = -2;
    expect_invalid(p, "lead");
    p = d, p.shape = SENSIM_TRAJ_FIGURE8, p.period = -5;
    expect_invalid(p, "figure8 trajectory: period");
    p = d, p.shape = SENSIM_TRAJ_FIGURE8, p.size = INFINITY;
    expect_invalid(p, "size is not a finite number");
    p = d, p.yaw = NAN;
    expect_invalid(p, "yaw is not a finite number");
    /* A shape does not check what it does not use. */
    p = d, p.shape = SENSIM_TRAJ_STATIC, p.speed = 0, p.radius = -1;
    sensim_trajectory *tr = sensim_trajectory_create(&p);
    ck_assert_ptr_nonnull(tr);
    sensim_trajectory_destroy(tr);
    sensim_trajectory_destroy(NULL);

    sensim_trajectory_shape sh;
    ck_assert_int_eq(sensim_trajectory_shape_parse("figure-eight", &sh), SENSIM_OK);
    ck_assert_int_eq(sh, SENSIM_TRAJ_FIGURE8);
    ck_assert_int_eq(sensim_trajectory_shape_parse("spiral", &sh), SENSIM_EINVAL);
    ck_assert_ptr_nonnull(strstr(sensim_last_error(), "'spiral'"));
}
END_TEST

static void block_alloc(sensim_gt_block *b, size_t cap)
{
    memset(b, 0, sizeof *b);
    b->capacity = cap;
    b->t = calloc(cap, sizeof(double));
    b->position = calloc(3 * cap, sizeof(double));
    b->orientation = calloc(4 * cap, sizeof(double));
    b->velocity = calloc(3 * cap, sizeof(double));
    b->angular_velocity = calloc(3 * cap, sizeof(double));
    b->acceleration = calloc(3 * cap, sizeof(double));
}

static void block_release(sensim_gt_block *b)
{
    free(b->t);
    free(b->position);
    free(b->orientation);
    free(b->velocity);
    free(b->angular_velocity);
    free(b->acceleration);
}

START_TEST(fill_any_block_split)
{
    sensim_trajectory *tr = make(SENSIM_TRAJ_FIGURE8, fig8);
    sensim_gt_block all, part;
    block_alloc(&all, 1000);
    block_alloc(&part, 13);
    ck_assert_int_eq(sensim_trajectory_fill(tr, 1.25, 200, 0, 1000, &all), SENSIM_OK);
    ck_assert_uint_eq(all.n, 1000);
    ck_assert_within(all.t[999], 1.25 + 999 / 200.0, 0);
    for (size_t k0 = 0; k0 < 1000; k0 += 13) {
        size_t n = k0 + 13 <= 1000 ? 13 : 1000 - k0;
        ck_assert_int_eq(sensim_trajectory_fill(tr, 1.25, 200, k0, n, &part), SENSIM_OK);
        ck_assert(memcmp(part.t, all.t + k0, n * sizeof(double)) == 0);
        ck_assert(memcmp(part.position, all.position + 3 * k0, 3 * n * sizeof(double)) == 0);
        ck_assert(memcmp(part.orientation, all.orientation + 4 * k0, 4 * n * sizeof(double)) == 0);
        ck_assert(memcmp(part.angular_velocity, all.angular_velocity + 3 * k0, 3 * n * sizeof(double)) == 0);
        ck_assert(memcmp(part.acceleration, all.acceleration + 3 * k0, 3 * n * sizeof(double)) == 0);
    }
    sensim_trajectory_state s;
    sensim_trajectory_eval(tr, all.t[500], &s);
    ck_assert(all.velocity[3 * 500 + 1] == s.velocity.y);
    ck_assert_int_eq(sensim_trajectory_fill(tr, 0, 200, 0, 14, &part), SENSIM_EINVAL);
    ck_assert_ptr_nonnull(strstr(sensim_last_error(), "14 rows"));
    ck_assert_int_eq(sensim_trajectory_fill(tr, 0, 0, 0, 1, &part), SENSIM_EINVAL);
    block_release(&all);
    block_release(&part);
    sensim_trajectory_destroy(tr);
}
END_TEST

START_TEST(cli_circle_log)
{
    char *dir = tu_mkdtemp(), *out = tu_path(dir, "gt.h5");
    tu_run_result r = tu_run("trajectory", "--shape", "circle", "--duration", "60", "--rate", "200", "--speed", "2",
                             "--radius", "10", "--origin", "45.5,7.25,120", "--heading", "0", "--start-time", "3",
                             "-o", out, NULL);
    ck_assert_msg(r.status == 0, "exit %d: %s", r.status, r.err);
    tu_run_free(&r);
    sensim_log *log = sensim_log_open(out);
    ck_assert_ptr_nonnull(log);
    size_t n;
    double lla[3];
    ck_assert_msg(sensim_gt_check(log, &n, lla) == SENSIM_OK, "%s", sensim_last_error());
    ck_assert_uint_eq(n, 12001);
    ck_assert_within(lla[0], 45.5, 0);
    ck_assert_within(lla[1], 7.25, 0);
    ck_assert_within(lla[2], 120, 0);
    /* Compare rows with the library, heading north turning left. */
    sensim_trajectory_params p = sensim_trajectory_default_params();
    p.shape = SENSIM_TRAJ_CIRCLE;
    p.speed = 2;
    p.radius = 10;
    p.yaw = M_PI / 2;
    p.t0 = 3;
    sensim_trajectory *tr = sensim_trajectory_create(&p);
    sensim_gt_block b;
    ck_assert_int_eq(sensim_gt_block_init(&b, 7), SENSIM_OK);
    ck_assert_int_eq(sensim_gt_read(log, 11994, 7, &b), SENSIM_OK);
    ck_assert_within(b.t[6], 63, 1e-12);
    for (size_t i = 0; i < 7; i++) {
        sensim_trajectory_state s;
        sensim_trajectory_eval(tr, b.t[i], &s);
        ck_assert(b.position[3 * i] == s.position.x && b.position[3 * i + 1] == s.position.y);
        ck_assert(b.orientation[4 * i + 3] == s.orientation.z);
        ck_assert_within(hypot(b.acceleration[3 * i], b.acceleration[3 * i + 1]), 0.4, 1e-14);
        ck_assert_within(b.angular_velocity[3 * i + 2], 0.2, 1e-15);
    }
    ck_assert_int_eq(sensim_gt_read(log, 0, 1, &b), SENSIM_OK);
    ck_assert_within(b.t[0], 3, 0);
    ck_assert_within(b.velocity[0], 0, 1e-15); /* north at the start */
    ck_assert_within(b.velocity[1], 2, 1e-15);
    char *desc = NULL;
    ck_assert_int_eq(sensim_log_get_attr_string(log, "/ground_truth", "trajectory", &desc), SENSIM_OK);
    ck_assert_ptr_nonnull(strstr(desc, "shape=circle"));
    free(desc);
    sensim_gt_block_free(&b);
    sensim_trajectory_destroy(tr);
    sensim_log_close(log);
    ck_assert_int_eq(tu_count_entries(dir), 1);
    tu_rmtree(dir);
    free(out);
    free(dir);
}
END_TEST

START_TEST(cli_bad_input)
{
    char *dir = tu_mkdtemp(), *out = tu_path(dir, "gt.h5");
    ck_assert_int_eq(tu_write_file(out, "precious"), 0);
    /* An invalid parameter: exit 1, the option named, the old file untouched
     * and no temporary left behind. */
    tu_run_result r = tu_run("trajectory", "--shape", "circle", "--duration", "10", "--radius", "-3", "-o", out, NULL);
    ck_assert_int_eq(r.status, 1);
    ck_assert_msg(strstr(r.err, "--radius") && strstr(r.err, "-3"), "stderr: %s", r.err);
    tu_run_free(&r);
    r = tu_run("trajectory", "--shape", "circle", "--duration", "10", "--speed", "0", "-o", out, NULL);
    ck_assert_int_eq(r.status, 1);
    ck_assert_msg(strstr(r.err, "--speed"), "stderr: %s", r.err);
    tu_run_free(&r);
    r = tu_run("trajectory", "--shape", "line", "--duration", "10", "--origin", "95,0,0", "-o", out, NULL);
    ck_assert_int_eq(r.status, 1);
    ck_assert_msg(strstr(r.err, "--origin") && strstr(r.err, "latitude 95"), "stderr: %s", r.err);
    tu_run_free(&r);
    /* Usage errors: exit 2. */
    r = tu_run("trajectory", "--shape", "circle", "--duration", "10", NULL);
    ck_assert_int_eq(r.status, 2);
    ck_assert_ptr_nonnull(strstr(r.err, "--output is required"));
    tu_run_free(&r);
    r = tu_run("trajectory", "--shape", "circle", "--duration", "ten", "-o", out, NULL);
    ck_assert_int_eq(r.status, 2);
    ck_assert_ptr_nonnull(strstr(r.err, "--duration: 'ten' is not a duration"));
    tu_run_free(&r);
    /* A duration may carry its unit. */
    char *two = tu_path(dir, "two-minutes.h5");
    r = tu_run("trajectory", "--shape", "circle", "--duration", "2 min", "--rate", "1", "-o", two, NULL);
    ck_assert_msg(r.status == 0, "%s", r.err);
    tu_run_free(&r);
    r = tu_run("info", two, "--json", NULL);
    ck_assert_msg(strstr(r.out, "\"samples\": 121, \"t_first\": 0, \"t_last\": 120"), "%s", r.out);
    tu_run_free(&r);
    remove(two);
    free(two);
    r = tu_run("trajectory", "--shape", "spiral", "--duration", "10", "-o", out, NULL);
    ck_assert_int_eq(r.status, 2);
    ck_assert_ptr_nonnull(strstr(r.err, "'spiral'"));
    tu_run_free(&r);
    r = tu_run("trajectory", "--shape", "line", "--duration", "10", "--origin", "1,2", "-o", out, NULL);
    ck_assert_int_eq(r.status, 2);
    tu_run_free(&r);
    r = tu_run("trajectory", "--shape", "line", "--duration", "10", "--bogus", "-o", out, NULL);
    ck_assert_int_eq(r.status, 2);
    ck_assert_ptr_nonnull(strstr(r.err, "--bogus"));
    tu_run_free(&r);
    char *text = tu_read_file(out, NULL);
    ck_assert_str_eq(text, "precious");
    free(text);
    ck_assert_int_eq(tu_count_entries(dir), 1);
    /* --help exits 0 and prints the usage. */
    r = tu_run("trajectory", "--help", NULL);
    ck_assert_int_eq(r.status, 0);
    ck_assert_ptr_nonnull(strstr(r.out, "--shape"));
    tu_run_free(&r);
    tu_rmtree(dir);
    free(out);
    free(dir);
}
END_TEST

Suite *suite_trajectory(void)
{
    Suite *s = suite_create("trajectory");
    TCase *tc = tcase_create("core");
    tcase_add_test(tc, derivatives_match_finite_differences);
    tcase_add_test(tc, circle_closed_forms);
    tcase_add_test(tc, figure8_periodic);
    tcase_add_test(tc, sine_lane_change);
    tcase_add_test(tc, line_and_static);
    tcase_add_test(tc, validation);
    tcase_add_test(tc, fill_any_block_split);
    suite_add_tcase(s, tc);
    TCase *cli = tcase_create("cli");
    tcase_add_test(cli, cli_circle_log);
    tcase_add_test(cli, cli_bad_input);
    suite_add_tcase(s, cli);
    return s;
}
