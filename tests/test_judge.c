/* The judge EKF on synthetic planar motion with Gaussian noise of known
 * sigma: NEES consistency of the corrected mode against chi-squared bounds,
 * GNSS outages and IMU gaps without NaN, the robot_localization mode's
 * documented behaviour, and bad input. */
#include <gsl/gsl_cdf.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "sensim/judge.h"
#include "sensim/log.h"
#include "sensim/metrics.h"
#include "sensim/rng.h"
#include "testutil.h"

#define IMU_HZ 100.0

/* Synthetic run: the true state follows the corrected filter's own discrete
 * mechanization (zero-order hold of the true IMU input over each step), so
 * the only model mismatch left is the EKF's linearization in yaw. */
typedef struct {
    size_t n, ng;
    double *t, *w, *fx, *fy;          /* IMU measurements [n] */
    double *pE, *pN, *vE, *vN, *yaw;  /* truth at IMU times [n] */
    double *gt, *genu, *gcov;         /* GNSS [ng], [ng*3], [ng*9] */
} run_data;

static void run_free(run_data *r)
{
    free(r->t);
    free(r->w);
    free(r->fx);
    free(r->fy);
    free(r->pE);
    free(r->pN);
    free(r->vE);
    free(r->vN);
    free(r->yaw);
    free(r->gt);
    free(r->genu);
    free(r->gcov);
}

typedef struct {
    double sg, sa, sp;          /* noise sigmas: gyro, accel, GNSS */
    double bg, bax, bay;        /* initial biases */
    double qg, qa;              /* bias random walks (per sqrt s) */
    double yaw0, v0;            /* initial heading and speed */
    double turn, lat, lon;      /* input amplitudes */
    double gap_from, gap_to;    /* GNSS outage [from, to) */
    double imu_gap_from, imu_gap_to;
    int gnss_every;             /* IMU samples per GNSS fix */
} run_spec;

static void make_run(const run_spec *s, double seconds, uint64_t seed, run_data *r)
{
    size_t n = (size_t)(seconds * IMU_HZ) + 1;
    memset(r, 0, sizeof *r);
    r->t = malloc(n * sizeof(double));
    r->w = malloc(n * sizeof(double));
    r->fx = malloc(n * sizeof(double));
    r->fy = malloc(n * sizeof(double));
    r->pE = malloc(n * sizeof(double));
    r->pN = malloc(n * sizeof(double));
    r->vE = malloc(n * sizeof(double));
    r->vN = malloc(n * sizeof(double));
    r->yaw = malloc(n * sizeof(double));
    r->gt = malloc(n * sizeof(double));
    r->genu = malloc(3 * n * sizeof(double));
    r->gcov = calloc(9 * n, sizeof(double));
    sensim_rng ng = sensim_rng_make(seed, 1, 0), na = sensim_rng_make(seed, 1, 1), nb = sensim_rng_make(seed, 1, 2),
               np = sensim_rng_make(seed, 1, 3), nw = sensim_rng_make(seed, 1, 4);
    double ph[3] = {6.28 * sensim_rng_uniform(&nw, 0), 6.28 * sensim_rng_uniform(&nw, 1),
                    6.28 * sensim_rng_uniform(&nw, 2)};
    double pE = 0, pN = 0, yaw = s->yaw0, vE = s->v0 * cos(yaw), vN = s->v0 * sin(yaw);
    double bg = s->bg, bax = s->bax, bay = s->bay, dt = 1.0 / IMU_HZ;
    size_t m = 0, g = 0;
    for (size_t k = 0; k < n; k++) {
        double t = (double)k / IMU_HZ;
        double w = s->turn * sin(0.2 * t + ph[0]), fx = s->lon * sin(0.4 * t + ph[1]),
               fy = s->lat * sin(0.25 * t + ph[2]);
        if (!(t >= s->imu_gap_from && t < s->imu_gap_to)) {
            r->t[m] = t;
            r->w[m] = w + bg + s->sg * sensim_rng_normal(&ng, k);
            r->fx[m] = fx + bax + s->sa * sensim_rng_normal(&na, 2 * k);
            r->fy[m] = fy + bay + s->sa * sensim_rng_normal(&na, 2 * k + 1);
            m++;
        }
        r->pE[k] = pE;
        r->pN[k] = pN;
        r->vE[k] = vE;
        r->vN[k] = vN;
        r->yaw[k] = yaw;
        if (k % (size_t)s->gnss_every == 0 && !(t >= s->gap_from && t < s->gap_to)) {
            r->gt[g] = t;
            r->genu[3 * g] = pE + s->sp * sensim_rng_normal(&np, 3 * k);
            r->genu[3 * g + 1] = pN + s->sp * sensim_rng_normal(&np, 3 * k + 1);
            r->genu[3 * g + 2] = 0;
            r->gcov[9 * g] = r->gcov[9 * g + 4] = r->gcov[9 * g + 8] = s->sp * s->sp;
            g++;
        }
        /* The same zero-order-hold step as the filter's mechanization. */
        double c = cos(yaw), sn = sin(yaw), aE = c * fx - sn * fy, aN = sn * fx + c * fy;
        pE += vE * dt + 0.5 * aE * dt * dt;
        pN += vN * dt + 0.5 * aN * dt * dt;
        vE += aE * dt;
        vN += aN * dt;
        yaw += w * dt;
        bg += s->qg * sqrt(dt) * sensim_rng_normal(&nb, 3 * k);
        bax += s->qa * sqrt(dt) * sensim_rng_normal(&nb, 3 * k + 1);
        bay += s->qa * sqrt(dt) * sensim_rng_normal(&nb, 3 * k + 2);
    }
    r->n = m;
    r->ng = g;
}

static sensim_judge_imu imu_of(const run_data *r)
{
    return (sensim_judge_imu){r->n, r->t, r->w, r->fx, r->fy};
}

static sensim_judge_gnss gnss_of(const run_data *r, int with_cov)
{
    return (sensim_judge_gnss){r->ng, r->gt, r->genu, 3, with_cov ? r->gcov : NULL};
}

/* x^T C^-1 x for a 5x5 symmetric positive definite C (Cholesky). */
static double quad_inv5(const double *C, const double *x)
{
    double L[5][5] = {{0}}, y[5];
    for (int i = 0; i < 5; i++)
        for (int j = 0; j <= i; j++) {
            double s = C[5 * i + j];
            for (int k = 0; k < j; k++)
                s -= L[i][k] * L[j][k];
            if (i == j) {
                ck_assert_msg(s > 0, "covariance not positive definite");
                L[i][i] = sqrt(s);
            } else
                L[i][j] = s / L[j][j];
        }
    double q = 0;
    for (int i = 0; i < 5; i++) {
        double s = x[i];
        for (int k = 0; k < i; k++)
            s -= L[i][k] * y[k];
        y[i] = s / L[i][i];
        q += y[i] * y[i];
    }
    return q;
}

static const run_spec base_spec = {.sg = 0.003, .sa = 0.05, .sp = 0.5, .qg = 1e-4, .qa = 1e-3, .yaw0 = 0.4,
                                   .v0 = 3.0, .turn = 0.15, .lat = 0.6, .lon = 0.3, .gap_from = -1, .gap_to = -1,
                                   .imu_gap_from = -1, .imu_gap_to = -1, .gnss_every = 10};

START_TEST(corrected_nees_consistent)
{
    /* M runs; at each check time the run-averaged NEES of (pE, pN, vE, vN,
     * yaw) times M is chi-squared with 5M dof for a consistent filter. The
     * initial state is drawn from N(truth, P0) and the biases from their
     * prior, so the filter's assumptions hold exactly. Two-sided 99.9 %
     * bounds at each of 30 check times (1 s apart). */
    enum { M = 40, T = 30 };
    const double sd0[8] = {1.0, 1.0, 0.2, 0.2, 0.05, 0.005, 0.05, 0.05};
    double nees[T + 1] = {0};
    for (int run = 0; run < M; run++) {
        sensim_rng ri = sensim_rng_make(100 + run, 2, 0);
        run_spec s = base_spec;
        s.bg = sd0[5] * sensim_rng_normal(&ri, 5);
        s.bax = sd0[6] * sensim_rng_normal(&ri, 6);
        s.bay = sd0[7] * sensim_rng_normal(&ri, 7);
        run_data r;
        make_run(&s, T, 1000 + run, &r);
        sensim_judge_options o = sensim_judge_default_options(SENSIM_JUDGE_CORRECTED);
        o.rate_hz = 1.0;
        o.want_covariance = 1;
        o.have_initial = 1;
        o.gyro_sigma = s.sg;
        o.accel_sigma = s.sa;
        o.gyro_bias_rw = s.qg;
        o.accel_bias_rw = s.qa;
        const double x0[8] = {r.pE[0], r.pN[0], r.vE[0], r.vN[0], r.yaw[0], 0, 0, 0};
        for (int i = 0; i < 8; i++) {
            o.initial_sd[i] = sd0[i];
            o.initial_state[i] = x0[i] + sd0[i] * sensim_rng_normal(&ri, 10 + i) * (i < 5);
        }
        sensim_judge_imu imu = imu_of(&r);
        sensim_judge_gnss g = gnss_of(&r, 1);
        sensim_judge_output out;
        ck_assert_int_eq(sensim_judge_run(&o, &imu, &g, &out), SENSIM_OK);
        ck_assert_uint_eq(out.n, T + 1);
        for (int k = 0; k <= T; k++) {
            size_t ti = (size_t)k * (size_t)IMU_HZ;
            ck_assert_double_eq(out.t[k], (double)k);
            double e[5] = {out.position[2 * k] - r.pE[ti], out.position[2 * k + 1] - r.pN[ti],
                           out.velocity[2 * k] - r.vE[ti], out.velocity[2 * k + 1] - r.vN[ti],
                           remainder(out.yaw[k] - r.yaw[ti], 2 * M_PI)};
            nees[k] += quad_inv5(out.covariance + 25 * k, e) / M;
        }
        sensim_judge_output_free(&out);
        run_free(&r);
    }
    double lo = gsl_cdf_chisq_Pinv(0.0005, 5 * M) / M, hi = gsl_cdf_chisq_Pinv(0.9995, 5 * M) / M;
    for (int k = 1; k <= T; k++)
        if (getenv("SENSIM_TEST_VERBOSE"))
            fprintf(stderr, "t=%d nees=%.3f [%.3f, %.3f]\n", k, nees[k], lo, hi);
    for (int k = 1; k <= T; k++)
        ck_assert_msg(nees[k] > lo && nees[k] < hi, "average NEES %.3f at t = %d s outside [%.3f, %.3f]", nees[k], k,
                      lo, hi);
}
END_TEST

static int all_finite(const sensim_judge_output *o)
{
    for (size_t k = 0; k < o->n; k++)
        if (!isfinite(o->speed[k]) || !isfinite(o->position[2 * k]) || !isfinite(o->position[2 * k + 1]) ||
            !isfinite(o->yaw[k]))
            return 0;
    return 1;
}

START_TEST(outages_stay_finite)
{
    /* A 20 s GNSS outage and a 5 s IMU gap (and GNSS-only then): no NaN in
     * either mode; the corrected filter's position variance grows during the
     * outage and comes back after it. */
    run_spec s = base_spec;
    s.gap_from = 10;
    s.gap_to = 30;
    s.imu_gap_from = 40;
    s.imu_gap_to = 45;
    run_data r;
    make_run(&s, 60, 7, &r);
    sensim_judge_imu imu = imu_of(&r);
    sensim_judge_gnss g = gnss_of(&r, 1);
    for (int mode = 0; mode < 2; mode++) {
        sensim_judge_options o = sensim_judge_default_options((sensim_judge_mode)mode);
        o.want_covariance = 1;
        o.initial_state[4] = s.yaw0;
        o.initial_state[2] = s.v0 * cos(s.yaw0);
        o.initial_state[3] = s.v0 * sin(s.yaw0);
        sensim_judge_output out;
        ck_assert_int_eq(sensim_judge_run(&o, &imu, &g, &out), SENSIM_OK);
        ck_assert_uint_eq(out.n, (size_t)(60 * 35) + 1);
        ck_assert(all_finite(&out));
        if (mode == SENSIM_JUDGE_CORRECTED) {
            double v_before = out.covariance[25 * 9 * 35], v_during = out.covariance[25 * 29 * 35],
                   v_after = out.covariance[25 * 35 * 35];
            ck_assert_double_gt(v_during, 10 * v_before);
            ck_assert_double_lt(v_after, v_during / 10);
            /* After recovery the position is back within 5 sigma. */
            size_t k = 35 * 35, ti = 35 * (size_t)IMU_HZ;
            ck_assert_double_lt(fabs(out.position[2 * k] - r.pE[ti]), 5 * sqrt(v_after));
        }
        sensim_judge_output_free(&out);
    }
    /* IMU only: dead reckoning still gives finite output. */
    sensim_judge_options o = sensim_judge_default_options(SENSIM_JUDGE_CORRECTED);
    sensim_judge_output out;
    ck_assert_int_eq(sensim_judge_run(&o, &imu, NULL, &out), SENSIM_OK);
    ck_assert(all_finite(&out));
    sensim_judge_output_free(&out);
    run_free(&r);
}
END_TEST

static double speed_rmse(const sensim_judge_output *o, const run_data *r, double from)
{
    double s = 0;
    size_t n = 0;
    for (size_t k = 0; k < o->n; k++) {
        if (o->t[k] < from)
            continue;
        size_t ti = (size_t)llround(o->t[k] * IMU_HZ);
        if (ti >= r->n)
            break;
        double d = o->speed[k] - hypot(r->vE[ti], r->vN[ti]);
        s += d * d;
        n++;
    }
    return sqrt(s / (double)n);
}

START_TEST(robot_localization_traps)
{
    /* Straight line at 3 m/s. With exact GNSS positions and the zero
     * covariance Chrono publishes, the differential GNSS velocity is exact
     * and becomes a 1e-9 m^2/s^2 measurement: the speed is right. The 0.8
     * sigma gate rejects most IMU samples: for a 3-dof innovation with the
     * covariance the filter expects, P(d^2 < 0.64) = 0.11; the process
     * noise inflates S, so in practice about two thirds are rejected. */
    run_spec s = base_spec;
    s.turn = s.lat = s.lon = 0;
    s.sp = 0;
    run_data r;
    make_run(&s, 20, 3, &r);
    for (size_t j = 0; j < r.ng; j++)
        r.gcov[9 * j] = r.gcov[9 * j + 4] = r.gcov[9 * j + 8] = 0;
    sensim_judge_imu imu = imu_of(&r);
    sensim_judge_gnss g = gnss_of(&r, 1);
    sensim_judge_options o = sensim_judge_default_options(SENSIM_JUDGE_ROBOT_LOCALIZATION);
    sensim_judge_output out;
    ck_assert_int_eq(sensim_judge_run(&o, &imu, &g, &out), SENSIM_OK);
    ck_assert_double_lt(speed_rmse(&out, &r, 1.0), 0.02);
    ck_assert_uint_gt(out.imu_rejected, out.imu_used);
    sensim_judge_output_free(&out);
    run_free(&r);
    /* 2 cm GNSS noise with zero published covariance: robot_localization
     * takes the differenced noise (sqrt(2) 0.02 / 0.1 s = 0.28 m/s) at face
     * value; the corrected mode, told the real sigma, is several times
     * better. */
    s = base_spec;
    s.sp = 0.02;
    make_run(&s, 30, 4, &r);
    for (size_t j = 0; j < r.ng; j++)
        r.gcov[9 * j] = r.gcov[9 * j + 4] = r.gcov[9 * j + 8] = 0;
    imu = imu_of(&r);
    g = gnss_of(&r, 1);
    sensim_judge_output oc;
    ck_assert_int_eq(sensim_judge_run(&o, &imu, &g, &out), SENSIM_OK);
    sensim_judge_options c = sensim_judge_default_options(SENSIM_JUDGE_CORRECTED);
    c.gnss_sigma = 0.02;
    c.initial_state[4] = s.yaw0;
    c.initial_state[2] = s.v0 * cos(s.yaw0);
    c.initial_state[3] = s.v0 * sin(s.yaw0);
    ck_assert_int_eq(sensim_judge_run(&c, &imu, &g, &oc), SENSIM_OK);
    double e_rl = speed_rmse(&out, &r, 2.0), e_c = speed_rmse(&oc, &r, 2.0);
    ck_assert_msg(e_rl > 3 * e_c, "rl %.4f vs corrected %.4f", e_rl, e_c);
    ck_assert_double_gt(e_rl, 0.1);
    sensim_judge_output_free(&out);
    sensim_judge_output_free(&oc);
    run_free(&r);
}
END_TEST


/* Writes a run as a sensim log: ground truth at the IMU rate, sensors
 * "imu" (type imu) and "gps" (type gnss); either sensor may be left out. */
static void write_log(const char *path, const run_data *r, size_t ntruth, int with_imu, int with_gnss)
{
    sensim_log *w = sensim_log_create(path, "test_judge");
    ck_assert_msg(w != NULL, "%s", sensim_last_error());
    size_t n = ntruth, three = 3, four = 4, nine = 9;
    double *t = malloc(n * sizeof *t), *p = malloc(3 * n * sizeof *p), *q = malloc(4 * n * sizeof *q),
           *v = malloc(3 * n * sizeof *v), *z3 = calloc(3 * n, sizeof *z3);
    for (size_t k = 0; k < n; k++) {
        t[k] = (double)k / IMU_HZ;
        p[3 * k] = r->pE[k];
        p[3 * k + 1] = r->pN[k];
        p[3 * k + 2] = 0;
        q[4 * k] = cos(r->yaw[k] / 2);
        q[4 * k + 1] = q[4 * k + 2] = 0;
        q[4 * k + 3] = sin(r->yaw[k] / 2);
        v[3 * k] = r->vE[k];
        v[3 * k + 1] = r->vN[k];
        v[3 * k + 2] = 0;
    }
    ck_assert_int_eq(sensim_log_write(w, "/ground_truth/t", SENSIM_F64, n, 0, NULL, t, "s"), SENSIM_OK);
    ck_assert_int_eq(sensim_log_write(w, "/ground_truth/position", SENSIM_F64, n, 1, &three, p, "m"), SENSIM_OK);
    ck_assert_int_eq(sensim_log_write(w, "/ground_truth/orientation", SENSIM_F64, n, 1, &four, q, "1"), SENSIM_OK);
    ck_assert_int_eq(sensim_log_write(w, "/ground_truth/velocity", SENSIM_F64, n, 1, &three, v, "m/s"), SENSIM_OK);
    ck_assert_int_eq(sensim_log_write(w, "/ground_truth/angular_velocity", SENSIM_F64, n, 1, &three, z3, "rad/s"),
                     SENSIM_OK);
    ck_assert_int_eq(sensim_log_write(w, "/ground_truth/acceleration", SENSIM_F64, n, 1, &three, z3, "m/s^2"),
                     SENSIM_OK);
    if (with_imu) {
        double *av = calloc(3 * r->n, sizeof *av), *sf = calloc(3 * r->n, sizeof *sf);
        for (size_t k = 0; k < r->n; k++) {
            av[3 * k + 2] = r->w[k];
            sf[3 * k] = r->fx[k];
            sf[3 * k + 1] = r->fy[k];
            sf[3 * k + 2] = 9.80665;
        }
        ck_assert_int_eq(sensim_log_write(w, "/sensors/imu/t", SENSIM_F64, r->n, 0, NULL, r->t, "s"), SENSIM_OK);
        ck_assert_int_eq(sensim_log_write(w, "/sensors/imu/angular_velocity", SENSIM_F64, r->n, 1, &three, av, "rad/s"),
                         SENSIM_OK);
        ck_assert_int_eq(sensim_log_write(w, "/sensors/imu/specific_force", SENSIM_F64, r->n, 1, &three, sf, "m/s^2"),
                         SENSIM_OK);
        ck_assert_int_eq(sensim_log_set_attr_string(w, "/sensors/imu", "type", "imu"), SENSIM_OK);
        free(av);
        free(sf);
    }
    if (with_gnss) {
        ck_assert_int_eq(sensim_log_write(w, "/sensors/gps/t", SENSIM_F64, r->ng, 0, NULL, r->gt, "s"), SENSIM_OK);
        ck_assert_int_eq(sensim_log_write(w, "/sensors/gps/enu", SENSIM_F64, r->ng, 1, &three, r->genu, "m"), SENSIM_OK);
        ck_assert_int_eq(
            sensim_log_write(w, "/sensors/gps/position_covariance", SENSIM_F64, r->ng, 1, &nine, r->gcov, "m^2"),
            SENSIM_OK);
        ck_assert_int_eq(sensim_log_set_attr_string(w, "/sensors/gps", "type", "gnss"), SENSIM_OK);
    }
    ck_assert_msg(sensim_log_commit(w) == SENSIM_OK, "%s", sensim_last_error());
    free(t);
    free(p);
    free(q);
    free(v);
    free(z3);
}

START_TEST(cli_judge_and_vepd_on_logs)
{
    char *dir = tu_mkdtemp(), *in = tu_path(dir, "in.h5"), *real = tu_path(dir, "real"), *sim = tu_path(dir, "sim");
    mkdir(real, 0777);
    mkdir(sim, 0777);
    char *out_c = tu_path(real, "line_1.h5"), *out_r = tu_path(sim, "line_1.h5");
    run_data r;
    make_run(&base_spec, 20, 21, &r);
    write_log(in, &r, r.n, 1, 1);
    tu_run_result x = tu_run("judge", in, "-o", out_c, "--mode", "corrected", NULL);
    ck_assert_msg(x.status == 0, "status %d: %s", x.status, x.err);
    tu_run_free(&x);
    x = tu_run("judge", in, "-o", out_r, NULL);
    ck_assert_msg(x.status == 0, "status %d: %s", x.status, x.err);
    tu_run_free(&x);
    /* The corrected estimate follows the true speed (0.5 m GNSS, 100 Hz IMU). */
    sensim_vepd_series s;
    ck_assert_int_eq(sensim_vepd_read_log(out_c, NULL, &s), SENSIM_OK);
    ck_assert_uint_eq(s.n_est, 20 * 35 + 1);
    double e = 0;
    for (size_t k = 0; k < s.n_est; k++) {
        size_t ti = (size_t)llround(s.est_t[k] * IMU_HZ);
        double d = s.est_v[k] - hypot(r.vE[ti], r.vN[ti]);
        e += d * d / s.n_est;
    }
    ck_assert_double_lt(sqrt(e), 0.15);
    sensim_vepd_test tc, tr;
    ck_assert_int_eq(sensim_vepd_score(&s, &tc), SENSIM_OK);
    sensim_vepd_series_free(&s);
    ck_assert_int_eq(sensim_vepd_read_log(out_r, "judge", &s), SENSIM_OK);
    ck_assert_int_eq(sensim_vepd_score(&s, &tr), SENSIM_OK);
    sensim_vepd_series_free(&s);
    /* vepd over the two one-test sets of logs: W1 = |RMSE difference|. */
    x = tu_run("vepd", "--real", real, "--sim", sim, "--json", NULL);
    ck_assert_msg(x.status == 0, "status %d: %s", x.status, x.err);
    const char *w1 = strstr(x.out, "\"w1\": ");
    ck_assert_ptr_nonnull(w1);
    ck_assert_within(strtod(w1 + 6, NULL), fabs(tc.rmse - tr.rmse), 1e-12);
    tu_run_free(&x);
    /* Errors: no GNSS sensor, no IMU sensor, the output left untouched;
     * usage errors. */
    char *bad = tu_path(dir, "nognss.h5"), *o2 = tu_path(dir, "o2.h5");
    write_log(bad, &r, r.n, 1, 0);
    x = tu_run("judge", bad, "-o", o2, NULL);
    ck_assert_int_eq(x.status, 1);
    ck_assert_msg(strstr(x.err, "nognss.h5: no gnss sensor") != NULL, "%s", x.err);
    ck_assert(!tu_file_exists(o2));
    tu_run_free(&x);
    write_log(bad, &r, r.n, 0, 1);
    x = tu_run("judge", bad, "-o", o2, NULL);
    ck_assert_int_eq(x.status, 1);
    ck_assert_msg(strstr(x.err, "no imu sensor") != NULL, "%s", x.err);
    ck_assert(!tu_file_exists(o2));
    tu_run_free(&x);
    x = tu_run("judge", in, NULL);
    ck_assert_int_eq(x.status, 2);
    tu_run_free(&x);
    x = tu_run("judge", in, "-o", o2, "--mode", "ukf", NULL);
    ck_assert_int_eq(x.status, 2);
    tu_run_free(&x);
    /* A log without estimates in a vepd set. */
    ck_assert_int_eq(rename(bad, out_r), 0);
    x = tu_run("vepd", "--real", real, "--sim", sim, NULL);
    ck_assert_int_eq(x.status, 1);
    ck_assert_msg(strstr(x.err, "line_1.h5: no /estimates group") != NULL, "%s", x.err);
    tu_run_free(&x);
    run_free(&r);
    free(bad);
    free(o2);
    free(out_c);
    free(out_r);
    free(in);
    free(real);
    free(sim);
    tu_rmtree(dir);
    free(dir);
}
END_TEST

START_TEST(bad_input)
{
    double t[3] = {0, 0.01, 0.01}, z[3] = {0}, nan3[3] = {0, NAN, 0};
    sensim_judge_options o = sensim_judge_default_options(SENSIM_JUDGE_CORRECTED);
    sensim_judge_imu imu = {3, t, z, z, z};
    sensim_judge_output out;
    ck_assert_int_eq(sensim_judge_run(&o, &imu, NULL, &out), SENSIM_EDATA);
    ck_assert_ptr_nonnull(strstr(sensim_last_error(), "imu sample 2: time 0.01 not after 0.01"));
    t[2] = 0.02;
    imu.fy = nan3;
    ck_assert_int_eq(sensim_judge_run(&o, &imu, NULL, &out), SENSIM_EDATA);
    ck_assert_ptr_nonnull(strstr(sensim_last_error(), "imu sample 1: value 2 is not finite"));
    imu.fy = z;
    imu.n = 1;
    ck_assert_int_eq(sensim_judge_run(&o, &imu, NULL, &out), SENSIM_EDATA);
    ck_assert_ptr_nonnull(strstr(sensim_last_error(), "1 IMU samples"));
    imu.n = 3;
    double gt[2] = {0, 0.005}, genu[4] = {0, 0, NAN, 1};
    sensim_judge_gnss g = {2, gt, genu, 2, NULL};
    ck_assert_int_eq(sensim_judge_run(&o, &imu, &g, &out), SENSIM_EDATA);
    ck_assert_ptr_nonnull(strstr(sensim_last_error(), "gnss sample 1"));
    o.rate_hz = 0;
    ck_assert_int_eq(sensim_judge_run(&o, &imu, NULL, &out), SENSIM_EINVAL);
    ck_assert_ptr_nonnull(strstr(sensim_last_error(), "rate"));
    ck_assert_int_eq(sensim_judge_mode_parse("rl"), SENSIM_JUDGE_ROBOT_LOCALIZATION);
    ck_assert_int_eq(sensim_judge_mode_parse("corrected"), SENSIM_JUDGE_CORRECTED);
    ck_assert_int_eq(sensim_judge_mode_parse("kalman"), -1);
    sensim_judge_output_free(NULL);
}
END_TEST

/* Source and sink of the streaming tests: the run's arrays, and the blocks
 * collected into one output. */
typedef struct {
    const run_data *r;
    int with_cov;
    sensim_judge_output *o;
    size_t k, blocks, max_block, fail_after;
} stream_ctx;

static sensim_status st_read_imu(void *ctx, size_t row0, size_t n, double *t, double *w, double *fx, double *fy)
{
    const run_data *r = ((stream_ctx *)ctx)->r;
    memcpy(t, r->t + row0, n * sizeof *t);
    memcpy(w, r->w + row0, n * sizeof *w);
    memcpy(fx, r->fx + row0, n * sizeof *fx);
    memcpy(fy, r->fy + row0, n * sizeof *fy);
    return SENSIM_OK;
}

static sensim_status st_read_gnss(void *ctx, size_t row0, size_t n, double *t, double *enu2, double *cov9)
{
    const run_data *r = ((stream_ctx *)ctx)->r;
    memcpy(t, r->gt + row0, n * sizeof *t);
    for (size_t i = 0; i < n; i++) {
        enu2[2 * i] = r->genu[3 * (row0 + i)];
        enu2[2 * i + 1] = r->genu[3 * (row0 + i) + 1];
    }
    if (cov9)
        memcpy(cov9, r->gcov + 9 * row0, 9 * n * sizeof *cov9);
    return SENSIM_OK;
}

static sensim_status st_sink(void *ctx, const sensim_judge_output *b)
{
    stream_ctx *c = ctx;
    if (c->fail_after && c->blocks == c->fail_after)
        return sensim_error(SENSIM_EIO, "test sink: full after %zu blocks", c->blocks);
    sensim_judge_output *o = c->o;
    memcpy(o->t + c->k, b->t, b->n * sizeof *b->t);
    memcpy(o->position + 2 * c->k, b->position, 2 * b->n * sizeof *b->position);
    memcpy(o->velocity + 2 * c->k, b->velocity, 2 * b->n * sizeof *b->velocity);
    memcpy(o->speed + c->k, b->speed, b->n * sizeof *b->speed);
    memcpy(o->yaw + c->k, b->yaw, b->n * sizeof *b->yaw);
    if (b->covariance)
        memcpy(o->covariance + 25 * c->k, b->covariance, 25 * b->n * sizeof *b->covariance);
    c->k += b->n;
    c->blocks++;
    c->max_block = b->n > c->max_block ? b->n : c->max_block;
    return SENSIM_OK;
}

/* The streaming form gives the same bits as the whole-array run for any
 * block size, across GNSS and IMU gaps that straddle block boundaries, in
 * both modes, with and without the GNSS covariance; errors name the sample
 * by its index in the whole series; a sink error stops the run. */
START_TEST(stream_any_block_size)
{
    run_spec s = base_spec;
    s.gap_from = 4;
    s.gap_to = 9;
    s.imu_gap_from = 12;
    s.imu_gap_to = 13.5;
    run_data r;
    make_run(&s, 20, 11, &r);
    sensim_judge_imu imu = imu_of(&r);
    const size_t blocks[] = {1, 3, 64, 1000, 100000};
    for (int mode = 0; mode < 2; mode++)
        for (int with_cov = 0; with_cov < 2; with_cov++) {
            sensim_judge_gnss g = gnss_of(&r, with_cov);
            sensim_judge_options o = sensim_judge_default_options((sensim_judge_mode)mode);
            o.want_covariance = 1;
            o.initial_state[4] = s.yaw0;
            sensim_judge_output ref;
            ck_assert_int_eq(sensim_judge_run(&o, &imu, &g, &ref), SENSIM_OK);
            for (size_t b = 0; b < sizeof blocks / sizeof blocks[0]; b++) {
                sensim_judge_output got = {0}, counts;
                got.t = malloc(ref.n * sizeof(double));
                got.speed = malloc(ref.n * sizeof(double));
                got.yaw = malloc(ref.n * sizeof(double));
                got.position = malloc(2 * ref.n * sizeof(double));
                got.velocity = malloc(2 * ref.n * sizeof(double));
                got.covariance = malloc(25 * ref.n * sizeof(double));
                stream_ctx c = {&r, with_cov, &got, 0, 0, 0, 0};
                sensim_judge_source src = {r.n, r.ng, with_cov, &c, st_read_imu, st_read_gnss};
                ck_assert_int_eq(sensim_judge_stream(&o, &src, blocks[b], st_sink, &c, &counts), SENSIM_OK);
                ck_assert_uint_eq(counts.n, ref.n);
                ck_assert_uint_eq(c.k, ref.n);
                ck_assert_uint_le(c.max_block, blocks[b]);
                ck_assert_uint_eq(counts.imu_used, ref.imu_used);
                ck_assert_uint_eq(counts.imu_rejected, ref.imu_rejected);
                ck_assert_uint_eq(counts.gnss_used, ref.gnss_used);
                ck_assert_uint_eq(counts.gnss_rejected, ref.gnss_rejected);
                ck_assert_ptr_null(counts.t);
                ck_assert(!memcmp(got.t, ref.t, ref.n * sizeof(double)));
                ck_assert(!memcmp(got.speed, ref.speed, ref.n * sizeof(double)));
                ck_assert(!memcmp(got.yaw, ref.yaw, ref.n * sizeof(double)));
                ck_assert(!memcmp(got.position, ref.position, 2 * ref.n * sizeof(double)));
                ck_assert(!memcmp(got.velocity, ref.velocity, 2 * ref.n * sizeof(double)));
                ck_assert_msg(!memcmp(got.covariance, ref.covariance, 25 * ref.n * sizeof(double)),
                              "mode %d cov %d block %zu", mode, with_cov, blocks[b]);
                sensim_judge_output_free(&got);
            }
            sensim_judge_output_free(&ref);
        }
    /* A repeated time deep in the IMU, found in a later block. */
    sensim_judge_options o = sensim_judge_default_options(SENSIM_JUDGE_ROBOT_LOCALIZATION);
    sensim_judge_output got = {0}, counts;
    got.t = malloc(r.n * sizeof(double) * 2);
    got.speed = malloc(r.n * sizeof(double) * 2);
    got.yaw = malloc(r.n * sizeof(double) * 2);
    got.position = malloc(4 * r.n * sizeof(double));
    got.velocity = malloc(4 * r.n * sizeof(double));
    got.covariance = malloc(50 * r.n * sizeof(double));
    double keep = r.t[500];
    r.t[500] = r.t[499];
    stream_ctx c = {&r, 1, &got, 0, 0, 0, 0};
    sensim_judge_source src = {r.n, r.ng, 1, &c, st_read_imu, st_read_gnss};
    ck_assert_int_eq(sensim_judge_stream(&o, &src, 64, st_sink, &c, &counts), SENSIM_EDATA);
    ck_assert_msg(strstr(sensim_last_error(), "imu sample 500: time") != NULL, "%s", sensim_last_error());
    r.t[500] = keep;
    /* The sink's error is passed on. */
    memset(&c, 0, sizeof c);
    c.r = &r;
    c.o = &got;
    c.fail_after = 2;
    ck_assert_int_eq(sensim_judge_stream(&o, &src, 64, st_sink, &c, &counts), SENSIM_EIO);
    ck_assert_ptr_nonnull(strstr(sensim_last_error(), "test sink: full after 2 blocks"));
    ck_assert_int_eq(sensim_judge_stream(&o, &src, 0, st_sink, &c, &counts), SENSIM_EINVAL);
    sensim_judge_output_free(&got);
    run_free(&r);
}
END_TEST

Suite *suite_judge(void)
{
    Suite *s = suite_create("judge");
    TCase *tc = tcase_create("core");
    tcase_add_test(tc, corrected_nees_consistent);
    tcase_add_test(tc, outages_stay_finite);
    tcase_add_test(tc, robot_localization_traps);
    tcase_add_test(tc, bad_input);
    tcase_add_test(tc, cli_judge_and_vepd_on_logs);
    tcase_add_test(tc, stream_any_block_size);
    suite_add_tcase(s, tc);
    return s;
}
