/* The judge estimator of seed 004 (section II-A): ROS robot_localization's
 * EKF in 2-D mode (Moore & Stouch 2014, as summarized in MODELS.md
 * "Sim2real: VEPD"), and a corrected loosely coupled INS/GNSS EKF. */
#include "sensim/judge.h"
#include "../lib/base_internal.h"
#include "../lib/linalg_internal.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define N SENSIM_JUDGE_NSTATE

/* robot_localization mode state */
enum { RX, RY, RYAW, RVX, RVY, RVYAW, RAX, RAY };
/* corrected mode state */
enum { CPE, CPN, CVE, CVN, CYAW, CBG, CBAX, CBAY };

typedef struct {
    double x[N];
    double P[N][N];
    double t;
    double u[3]; /* held IMU sample (corrected mode): yaw rate, fx, fy */
    int have_u;
    double prev_gnss[2], prev_gnss_var[2][2], prev_gnss_t; /* differential GNSS (rl mode) */
    int have_prev_gnss;
    int gnss_rejects; /* consecutive (corrected mode) */
} filter;

const char *sensim_judge_mode_name(sensim_judge_mode mode)
{
    switch (mode) {
    case SENSIM_JUDGE_ROBOT_LOCALIZATION: return "robot_localization";
    case SENSIM_JUDGE_CORRECTED: return "corrected";
    }
    return NULL;
}

int sensim_judge_mode_parse(const char *name)
{
    if (!name)
        return -1;
    if (!strcmp(name, "robot_localization") || !strcmp(name, "rl"))
        return SENSIM_JUDGE_ROBOT_LOCALIZATION;
    if (!strcmp(name, "corrected"))
        return SENSIM_JUDGE_CORRECTED;
    return -1;
}

sensim_judge_options sensim_judge_default_options(sensim_judge_mode mode)
{
    /* robot_localization's default process noise (ekf.yaml), planar subset:
     * x .05, y .05, yaw .06, vx .025, vy .025, vyaw .02, ax .01, ay .01. */
    sensim_judge_options o = {
        .mode = mode,
        .rate_hz = 35.0,
        .gyro_sigma = 0.003,
        .accel_sigma = 0.05,
        .gnss_sigma = 0.5,
        .process_noise = {0.05, 0.05, 0.06, 0.025, 0.025, 0.02, 0.01, 0.01},
        .initial_variance = 1e-9,
        .variance_floor = 1e-9,
        .imu_gate_sigma = 0.8,
        .gyro_bias_rw = 1e-4,
        .accel_bias_rw = 1e-3,
        .gnss_gate = 13.815510557964274, /* chi2(2) 99.9 % */
        .gnss_gate_max_rejects = 5,
        .min_gnss_variance = 1e-6,
        .have_initial = 0,
        .initial_state = {0},
        .initial_sd = {10.0, 10.0, 1.0, 1.0, 0.1, 0.01, 0.1, 0.1},
        .want_covariance = 0,
    };
    return o;
}

void sensim_judge_output_free(sensim_judge_output *out)
{
    if (!out)
        return;
    SENSIM_FREE_ALL(out->t, out->position, out->velocity, out->speed, out->yaw, out->covariance);
    memset(out, 0, sizeof *out);
}

static double wrap_pi(double a) { return a - 2 * M_PI * floor((a + M_PI) / (2 * M_PI)); }

static void symmetrize(double P[N][N])
{
    for (int i = 0; i < N; i++)
        for (int j = i + 1; j < N; j++)
            P[i][j] = P[j][i] = 0.5 * (P[i][j] + P[j][i]);
}

/* C = A B: A is r x n, B n x c, C r x c, each row-major with row strides
 * lda, ldb, ldc. */
static void matmul(int r, int n, int c, const double *A, int lda, const double *B, int ldb, double *C, int ldc)
{
    for (int i = 0; i < r; i++)
        for (int j = 0; j < c; j++) {
            double s = 0;
            for (int k = 0; k < n; k++)
                s += A[i * lda + k] * B[k * ldb + j];
            C[i * ldc + j] = s;
        }
}

/* P = F P F^T + Qd */
static void propagate_cov(double P[N][N], const double F[N][N], const double Q[N][N])
{
    double FP[N][N];
    matmul(N, N, N, &F[0][0], N, &P[0][0], N, &FP[0][0], N);
    for (int i = 0; i < N; i++)
        for (int j = 0; j < N; j++) {
            double s = Q[i][j];
            for (int k = 0; k < N; k++)
                s += FP[i][k] * F[j][k];
            P[i][j] = s;
        }
    symmetrize(P);
}

/* Inverse of a small symmetric positive definite matrix (m <= 3) by
 * Gauss-Jordan with partial pivoting; -1 when singular. */
static int small_inverse(int m, double A[3][3], double Ai[3][3])
{
    double a[3][6];
    for (int i = 0; i < m; i++)
        for (int j = 0; j < 2 * m; j++)
            a[i][j] = j < m ? A[i][j] : (j - m == i);
    if (sensim_gauss_jordan_(&a[0][0], m, 6, 1e-300))
        return -1;
    for (int i = 0; i < m; i++)
        for (int j = 0; j < m; j++)
            Ai[i][j] = a[i][m + j];
    return 0;
}

/* Kalman update with innovation y (m <= 3) for a measurement that selects
 * state components idx[] (H rows are unit vectors, as in both modes), and
 * measurement covariance R. Joseph form P = (I-KH)P(I-KH)^T + K R K^T.
 * gate > 0 rejects when y^T S^-1 y >= gate. Returns 1 used, 0 gated, -1
 * numerically singular. */
static int kf_update(filter *f, int m, const int idx[3], const double y[3], double R[3][3], double gate)
{
    double PHt[N][3], S[3][3], Si[3][3], K[N][3];
    for (int i = 0; i < N; i++)
        for (int j = 0; j < m; j++)
            PHt[i][j] = f->P[i][idx[j]];
    for (int i = 0; i < m; i++)
        for (int j = 0; j < m; j++)
            S[i][j] = PHt[idx[i]][j] + R[i][j];
    if (small_inverse(m, S, Si))
        return -1;
    double d2 = 0;
    for (int i = 0; i < m; i++)
        for (int j = 0; j < m; j++)
            d2 += y[i] * Si[i][j] * y[j];
    if (!isfinite(d2) || d2 < 0)
        return -1;
    if (gate > 0 && d2 >= gate)
        return 0;
    matmul(N, m, m, &PHt[0][0], 3, &Si[0][0], 3, &K[0][0], 3);
    for (int i = 0; i < N; i++)
        for (int j = 0; j < m; j++)
            f->x[i] += K[i][j] * y[j];
    double A[N][N], KRKt[N][N];
    for (int i = 0; i < N; i++)
        for (int j = 0; j < N; j++) {
            double s = i == j;
            for (int k = 0; k < m; k++)
                if (idx[k] == j)
                    s -= K[i][k];
            A[i][j] = s;
        }
    for (int i = 0; i < N; i++)
        for (int j = 0; j < N; j++) {
            double s = 0;
            for (int a = 0; a < m; a++)
                for (int b = 0; b < m; b++)
                    s += K[i][a] * R[a][b] * K[j][b];
            KRKt[i][j] = s;
        }
    propagate_cov(f->P, (const double(*)[N])A, (const double(*)[N])KRKt);
    return 1;
}

/* robot_localization's 2-D transfer function and its Jacobian (ekf.cpp
 * predict), P = J P J^T + dt Q. */
static void rl_predict(filter *f, const sensim_judge_options *o, double dt)
{
    double *x = f->x, c = cos(x[RYAW]), s = sin(x[RYAW]);
    double dxb = x[RVX] * dt + 0.5 * x[RAX] * dt * dt, dyb = x[RVY] * dt + 0.5 * x[RAY] * dt * dt;
    double J[N][N] = {{0}}, Q[N][N] = {{0}};
    for (int i = 0; i < N; i++) {
        J[i][i] = 1;
        Q[i][i] = dt * o->process_noise[i];
    }
    J[RX][RYAW] = -s * dxb - c * dyb;
    J[RY][RYAW] = c * dxb - s * dyb;
    J[RX][RVX] = c * dt;
    J[RX][RVY] = -s * dt;
    J[RX][RAX] = 0.5 * c * dt * dt;
    J[RX][RAY] = -0.5 * s * dt * dt;
    J[RY][RVX] = s * dt;
    J[RY][RVY] = c * dt;
    J[RY][RAX] = 0.5 * s * dt * dt;
    J[RY][RAY] = 0.5 * c * dt * dt;
    J[RYAW][RVYAW] = dt;
    J[RVX][RAX] = dt;
    J[RVY][RAY] = dt;
    x[RX] += c * dxb - s * dyb;
    x[RY] += s * dxb + c * dyb;
    x[RYAW] = wrap_pi(x[RYAW] + x[RVYAW] * dt);
    x[RVX] += x[RAX] * dt;
    x[RVY] += x[RAY] * dt;
    propagate_cov(f->P, (const double(*)[N])J, (const double(*)[N])Q);
}

/* Strapdown mechanization over dt with the held IMU sample (zero-order hold
 * forward) and its noise as process noise. */
static void c_predict(filter *f, const sensim_judge_options *o, double dt)
{
    double *x = f->x, c = cos(x[CYAW]), s = sin(x[CYAW]);
    double w = f->u[0] - x[CBG], fx = f->u[1] - x[CBAX], fy = f->u[2] - x[CBAY];
    double aE = c * fx - s * fy, aN = s * fx + c * fy;
    double daE = -s * fx - c * fy, daN = c * fx - s * fy; /* d a / d yaw */
    double h2 = 0.5 * dt * dt;
    double F[N][N] = {{0}}, Q[N][N] = {{0}};
    for (int i = 0; i < N; i++)
        F[i][i] = 1;
    F[CPE][CVE] = F[CPN][CVN] = dt;
    F[CPE][CYAW] = h2 * daE;
    F[CPN][CYAW] = h2 * daN;
    F[CVE][CYAW] = dt * daE;
    F[CVN][CYAW] = dt * daN;
    F[CPE][CBAX] = -h2 * c;
    F[CPN][CBAX] = -h2 * s;
    F[CPE][CBAY] = h2 * s;
    F[CPN][CBAY] = -h2 * c;
    F[CVE][CBAX] = -dt * c;
    F[CVN][CBAX] = -dt * s;
    F[CVE][CBAY] = dt * s;
    F[CVN][CBAY] = -dt * c;
    F[CYAW][CBG] = -dt;
    /* Accelerometer noise enters through G = [h2 R; dt R], isotropic, so
     * G diag(sa^2) G^T needs no rotation. */
    double sa2 = o->accel_sigma * o->accel_sigma;
    for (int k = 0; k < 2; k++) {
        Q[CPE + k][CPE + k] = sa2 * h2 * h2;
        Q[CPE + k][CVE + k] = Q[CVE + k][CPE + k] = sa2 * h2 * dt;
        Q[CVE + k][CVE + k] = sa2 * dt * dt;
    }
    Q[CYAW][CYAW] = o->gyro_sigma * o->gyro_sigma * dt * dt;
    Q[CBG][CBG] = o->gyro_bias_rw * o->gyro_bias_rw * dt;
    Q[CBAX][CBAX] = Q[CBAY][CBAY] = o->accel_bias_rw * o->accel_bias_rw * dt;
    x[CPE] += x[CVE] * dt + h2 * aE;
    x[CPN] += x[CVN] * dt + h2 * aN;
    x[CVE] += aE * dt;
    x[CVN] += aN * dt;
    x[CYAW] = wrap_pi(x[CYAW] + w * dt);
    propagate_cov(f->P, (const double(*)[N])F, (const double(*)[N])Q);
}

static void predict_to(filter *f, const sensim_judge_options *o, double t)
{
    double dt = t - f->t;
    if (dt > 0) {
        if (o->mode == SENSIM_JUDGE_CORRECTED)
            c_predict(f, o, dt);
        else
            rl_predict(f, o, dt);
    }
    f->t = t > f->t ? t : f->t;
}

static void on_imu(filter *f, const sensim_judge_options *o, double w, double fx, double fy, sensim_judge_output *out)
{
    if (o->mode == SENSIM_JUDGE_CORRECTED) {
        f->u[0] = w;
        f->u[1] = fx;
        f->u[2] = fy;
        f->have_u = 1;
        out->imu_used++;
        return;
    }
    const int idx[3] = {RVYAW, RAX, RAY};
    double y[3] = {w - f->x[RVYAW], fx - f->x[RAX], fy - f->x[RAY]};
    double vg = fmax(o->gyro_sigma * o->gyro_sigma, o->variance_floor);
    double va = fmax(o->accel_sigma * o->accel_sigma, o->variance_floor);
    double R[3][3] = {{vg, 0, 0}, {0, va, 0}, {0, 0, va}};
    double gate = o->imu_gate_sigma > 0 ? o->imu_gate_sigma * o->imu_gate_sigma : 0;
    if (kf_update(f, 3, idx, y, R, gate) == 1)
        out->imu_used++;
    else
        out->imu_rejected++;
}

/* East/north covariance of one GNSS sample; sigma^2 I when absent, not
 * finite or not positive definite (Chrono publishes zeros). The floor
 * applies to the diagonal. */
static void gnss_var(const sensim_judge_gnss *g, size_t j, double floor_var, double sigma, double V[2][2])
{
    const double *c = g->cov ? g->cov + 9 * j : NULL;
    double a = c ? c[0] : 0, b = c ? 0.5 * (c[1] + c[3]) : 0, d = c ? c[4] : 0;
    if (!c || !isfinite(a) || !isfinite(b) || !isfinite(d) || !(a > 0) || !(d > 0) || !(a * d - b * b > 0)) {
        a = d = sigma * sigma;
        b = 0;
    }
    V[0][0] = fmax(a, floor_var);
    V[1][1] = fmax(d, floor_var);
    V[0][1] = V[1][0] = b;
}

static void on_gnss(filter *f, const sensim_judge_options *o, const sensim_judge_gnss *g, size_t j,
                    sensim_judge_output *out)
{
    const double *p = g->enu + g->enu_stride * j;
    if (o->mode == SENSIM_JUDGE_CORRECTED) {
        double V[2][2];
        gnss_var(g, j, o->min_gnss_variance, o->gnss_sigma, V);
        const int idx[3] = {CPE, CPN, 0};
        double y[3] = {p[0] - f->x[CPE], p[1] - f->x[CPN], 0};
        double R[3][3] = {{V[0][0], V[0][1], 0}, {V[1][0], V[1][1], 0}, {0, 0, 0}};
        /* The gate gives way after a run of rejections: after an outage or a
         * jump the filter must follow the receiver rather than coast forever. */
        double gate = f->gnss_rejects >= o->gnss_gate_max_rejects ? 0 : o->gnss_gate;
        if (kf_update(f, 2, idx, y, R, gate) == 1) {
            out->gnss_used++;
            f->gnss_rejects = 0;
        } else {
            out->gnss_rejected++;
            f->gnss_rejects++;
        }
        return;
    }
    /* Differential mode of robot_localization: the change of position since
     * the previous fix over the elapsed time is a velocity measurement,
     * rotated into the body frame; its covariance is the sum of the two
     * fixes' covariances over dt^2, each variance floored at 1e-9. */
    double V[2][2] = {{o->gnss_sigma * o->gnss_sigma, 0}, {0, o->gnss_sigma * o->gnss_sigma}};
    if (g->cov) { /* robot_localization uses the covariance as published, zeros included */
        const double *c = g->cov + 9 * j;
        V[0][0] = isfinite(c[0]) ? c[0] : 0;
        V[1][1] = isfinite(c[4]) ? c[4] : 0;
        V[0][1] = V[1][0] = isfinite(c[1]) ? c[1] : 0;
    }
    if (f->have_prev_gnss && g->t[j] > f->prev_gnss_t) {
        double dt = g->t[j] - f->prev_gnss_t;
        double vE = (p[0] - f->prev_gnss[0]) / dt, vN = (p[1] - f->prev_gnss[1]) / dt;
        double c = cos(f->x[RYAW]), s = sin(f->x[RYAW]);
        double vx = c * vE + s * vN, vy = -s * vE + c * vN;
        double W[2][2], Rm[3][3] = {{0}};
        for (int a = 0; a < 2; a++)
            for (int b = 0; b < 2; b++)
                W[a][b] = (V[a][b] + f->prev_gnss_var[a][b]) / (dt * dt);
        /* R^T W R with R = [[c, -s], [s, c]] */
        double rt[2][2] = {{c, s}, {-s, c}};
        for (int a = 0; a < 2; a++)
            for (int b = 0; b < 2; b++) {
                double sum = 0;
                for (int k = 0; k < 2; k++)
                    for (int l = 0; l < 2; l++)
                        sum += rt[a][k] * W[k][l] * rt[b][l];
                Rm[a][b] = sum;
            }
        Rm[0][0] = fmax(Rm[0][0], o->variance_floor);
        Rm[1][1] = fmax(Rm[1][1], o->variance_floor);
        const int idx[3] = {RVX, RVY, 0};
        double y[3] = {vx - f->x[RVX], vy - f->x[RVY], 0};
        if (kf_update(f, 2, idx, y, Rm, 0) == 1)
            out->gnss_used++;
        else
            out->gnss_rejected++;
    }
    f->prev_gnss[0] = p[0];
    f->prev_gnss[1] = p[1];
    memcpy(f->prev_gnss_var, V, sizeof V);
    f->prev_gnss_t = g->t[j];
    f->have_prev_gnss = 1;
}

/* Writes output k from a copy of the filter predicted to time t. */
static void emit(const filter *f0, const sensim_judge_options *o, double t, sensim_judge_output *out, size_t k)
{
    filter f = *f0;
    predict_to(&f, o, t);
    const double *x = f.x;
    double J[5][N] = {{0}};
    if (o->mode == SENSIM_JUDGE_CORRECTED) {
        for (int i = 0; i < 5; i++)
            J[i][i] = 1;
        out->position[2 * k] = x[CPE];
        out->position[2 * k + 1] = x[CPN];
        out->velocity[2 * k] = x[CVE];
        out->velocity[2 * k + 1] = x[CVN];
        out->yaw[k] = x[CYAW];
    } else {
        double c = cos(x[RYAW]), s = sin(x[RYAW]);
        double vE = c * x[RVX] - s * x[RVY], vN = s * x[RVX] + c * x[RVY];
        out->position[2 * k] = x[RX];
        out->position[2 * k + 1] = x[RY];
        out->velocity[2 * k] = vE;
        out->velocity[2 * k + 1] = vN;
        out->yaw[k] = x[RYAW];
        J[0][RX] = J[1][RY] = J[4][RYAW] = 1;
        J[2][RVX] = c;
        J[2][RVY] = -s;
        J[3][RVX] = s;
        J[3][RVY] = c;
        J[2][RYAW] = -vN;
        J[3][RYAW] = vE;
    }
    out->t[k] = t;
    out->speed[k] = hypot(out->velocity[2 * k], out->velocity[2 * k + 1]);
    if (out->covariance) {
        double *C = out->covariance + 25 * k;
        for (int a = 0; a < 5; a++)
            for (int b = 0; b < 5; b++) {
                double s = 0;
                for (int i = 0; i < N; i++)
                    for (int j = 0; j < N; j++)
                        s += J[a][i] * f.P[i][j] * J[b][j];
                C[5 * a + b] = s;
            }
    }
}

static sensim_status check_series(const char *what, const double *t, size_t n, const double *const *cols, int ncol,
                                  size_t stride, size_t row0, double *prev_t)
{
    for (size_t i = 0; i < n; i++) {
        if (!isfinite(t[i]))
            return sensim_error(SENSIM_EDATA, "judge: %s sample %zu: time is not finite", what, row0 + i);
        if (row0 + i > 0 && !(t[i] > *prev_t))
            return sensim_error(SENSIM_EDATA, "judge: %s sample %zu: time %.9g not after %.9g", what, row0 + i, t[i],
                                *prev_t);
        *prev_t = t[i];
        for (int c = 0; c < ncol; c++)
            if (!isfinite(cols[c][i * stride]))
                return sensim_error(SENSIM_EDATA, "judge: %s sample %zu: value %d is not finite", what, row0 + i, c);
    }
    return SENSIM_OK;
}

static sensim_status check_options(const sensim_judge_options *o)
{
    if (!sensim_judge_mode_name(o->mode))
        return sensim_error(SENSIM_EINVAL, "judge: unknown mode %d", (int)o->mode);
    if (!(o->rate_hz > 0 && isfinite(o->rate_hz)))
        return sensim_error(SENSIM_EINVAL, "judge: output rate %g Hz must be > 0", o->rate_hz);
    if (!(o->gyro_sigma >= 0 && o->accel_sigma >= 0 && o->gnss_sigma > 0 && o->gyro_bias_rw >= 0 &&
          o->accel_bias_rw >= 0 && o->initial_variance >= 0 && o->variance_floor >= 0 && o->min_gnss_variance >= 0))
        return sensim_error(SENSIM_EINVAL, "judge: noise parameters must be >= 0 (gnss_sigma > 0)");
    for (int i = 0; i < N; i++)
        if (!(o->process_noise[i] >= 0) || !(o->initial_sd[i] >= 0) || !isfinite(o->initial_state[i]))
            return sensim_error(SENSIM_EINVAL, "judge: process noise, initial state and sd %d must be finite, >= 0",
                                i);
    return SENSIM_OK;
}

/* The block buffers of a streaming run: one block of each sensor, read
 * when the event loop reaches its end, and one block of outputs. */
typedef struct {
    const sensim_judge_source *src;
    size_t cap;
    double *it, *iw, *ifx, *ify, i_prev_t;
    size_t i_row0, i_n;
    double *gt, *genu, *gcov, g_prev_t;
    size_t g_row0, g_n;
    sensim_judge_output ob;
} stream_buf;

static sensim_status load_imu(stream_buf *b, size_t row0)
{
    size_t n = b->src->n_imu - row0 < b->cap ? b->src->n_imu - row0 : b->cap;
    sensim_status st = b->src->read_imu(b->src->ctx, row0, n, b->it, b->iw, b->ifx, b->ify);
    if (st)
        return st;
    b->i_row0 = row0;
    b->i_n = n;
    const double *c[3] = {b->iw, b->ifx, b->ify};
    return check_series("imu", b->it, n, c, 3, 1, row0, &b->i_prev_t);
}

static sensim_status load_gnss(stream_buf *b, size_t row0)
{
    size_t n = b->src->n_gnss - row0 < b->cap ? b->src->n_gnss - row0 : b->cap;
    sensim_status st = b->src->read_gnss(b->src->ctx, row0, n, b->gt, b->genu, b->gcov);
    if (st)
        return st;
    b->g_row0 = row0;
    b->g_n = n;
    const double *c[2] = {b->genu, b->genu + 1};
    return check_series("gnss", b->gt, n, c, 2, 2, row0, &b->g_prev_t);
}

sensim_status sensim_judge_stream(const sensim_judge_options *o, const sensim_judge_source *src, size_t block,
                                  sensim_judge_sink sink, void *sink_ctx, sensim_judge_output *counts)
{
    if (!o || !src || !sink || !counts)
        return sensim_error(SENSIM_EINVAL, "judge: NULL argument");
    memset(counts, 0, sizeof *counts);
    sensim_status st = check_options(o);
    if (st)
        return st;
    if (block < 1)
        return sensim_error(SENSIM_EINVAL, "judge: block size must be >= 1");
    size_t ni = src->n_imu, ng = src->n_gnss;
    if (ni < 2 || !src->read_imu)
        return sensim_error(SENSIM_EDATA, "judge: %zu IMU samples (need at least 2)", ni);
    if (ng && !src->read_gnss)
        return sensim_error(SENSIM_EINVAL, "judge: GNSS reader missing");

    /* The output times run from the first IMU time to the last measurement:
     * read the last rows first. */
    double last[13], tend;
    if ((st = src->read_imu(src->ctx, ni - 1, 1, &last[0], &last[1], &last[2], &last[3])))
        return st;
    if (!isfinite(last[0]))
        return sensim_error(SENSIM_EDATA, "judge: imu sample %zu: time is not finite", ni - 1);
    tend = last[0];
    if (ng) {
        if ((st = src->read_gnss(src->ctx, ng - 1, 1, &last[0], &last[1], src->gnss_has_cov ? &last[3] : NULL)))
            return st;
        if (!isfinite(last[0]))
            return sensim_error(SENSIM_EDATA, "judge: gnss sample %zu: time is not finite", ng - 1);
        tend = fmax(tend, last[0]);
    }

    stream_buf b = {.src = src, .cap = block};
    size_t per = 4 + 3 + (src->gnss_has_cov ? 9 : 0) + 7 + (o->want_covariance ? 25 : 0);
    if (block > ((size_t)-1) / sizeof(double) / per)
        return sensim_error(SENSIM_EINVAL, "judge: block size %zu too large", block);
    double *mem = malloc(block * per * sizeof *mem);
    if (!mem)
        return sensim_error(SENSIM_ENOMEM, "judge: out of memory for blocks of %zu samples", block);
    double *m = mem;
    b.it = m, m += block;
    b.iw = m, m += block;
    b.ifx = m, m += block;
    b.ify = m, m += block;
    b.gt = m, m += block;
    b.genu = m, m += 2 * block;
    if (src->gnss_has_cov)
        b.gcov = m, m += 9 * block;
    b.ob.t = m, m += block;
    b.ob.position = m, m += 2 * block;
    b.ob.velocity = m, m += 2 * block;
    b.ob.speed = m, m += block;
    b.ob.yaw = m, m += block;
    if (o->want_covariance)
        b.ob.covariance = m;

    if ((st = load_imu(&b, 0)) || (ng && (st = load_gnss(&b, 0))))
        goto done;
    double t0 = b.it[0];
    double span = (tend - t0) * o->rate_hz;
    if (!(span >= 0) || span > 1e9) {
        st = span > 1e9 ? sensim_error(SENSIM_EINVAL, "judge: %.3g outputs requested (rate %g Hz over %g s)", span,
                                       o->rate_hz, tend - t0)
                        : sensim_error(SENSIM_EDATA, "judge: imu sample %zu: time %.9g not after %.9g", ni - 1,
                                       tend, t0);
        goto done;
    }
    size_t nout = (size_t)floor(span) + 1;

    filter f;
    memset(&f, 0, sizeof f);
    f.t = ng ? fmin(t0, b.gt[0]) : t0;
    if (o->mode == SENSIM_JUDGE_CORRECTED) {
        memcpy(f.x, o->initial_state, sizeof f.x);
        if (!o->have_initial && ng) {
            f.x[CPE] = b.genu[0];
            f.x[CPN] = b.genu[1];
        }
        for (int i = 0; i < N; i++)
            f.P[i][i] = o->initial_sd[i] * o->initial_sd[i];
    } else {
        f.x[RYAW] = o->initial_state[CYAW];
        for (int i = 0; i < N; i++)
            f.P[i][i] = o->initial_variance;
    }

    /* Events in time order; at equal times IMU, then GNSS, then output. */
    size_t i = 0, j = 0, k = 0, k_row0 = 0;
    while (k < nout) {
        if (i < ni && i - b.i_row0 == b.i_n && (st = load_imu(&b, i)))
            goto done;
        if (j < ng && j - b.g_row0 == b.g_n && (st = load_gnss(&b, j)))
            goto done;
        double tk = t0 + (double)k / o->rate_hz;
        double ti = i < ni ? b.it[i - b.i_row0] : INFINITY, tg = j < ng ? b.gt[j - b.g_row0] : INFINITY;
        if (ti <= tg && ti <= tk) {
            size_t l = i - b.i_row0;
            predict_to(&f, o, ti);
            on_imu(&f, o, b.iw[l], b.ifx[l], b.ify[l], counts);
            i++;
        } else if (tg <= tk) {
            sensim_judge_gnss g = {b.g_n, b.gt, b.genu, 2, b.gcov};
            predict_to(&f, o, tg);
            on_gnss(&f, o, &g, j - b.g_row0, counts);
            j++;
        } else {
            emit(&f, o, tk, &b.ob, k - k_row0);
            k++;
            if (k - k_row0 == block || k == nout) {
                b.ob.n = k - k_row0;
                b.ob.imu_used = counts->imu_used;
                b.ob.imu_rejected = counts->imu_rejected;
                b.ob.gnss_used = counts->gnss_used;
                b.ob.gnss_rejected = counts->gnss_rejected;
                if ((st = sink(sink_ctx, &b.ob)))
                    goto done;
                k_row0 = k;
            }
        }
        for (int a = 0; a < N; a++)
            if (!isfinite(f.x[a]) || !isfinite(f.P[a][a])) {
                st = sensim_error(SENSIM_EDATA, "judge: the filter diverged (state %d not finite) at t = %.9g s", a,
                                  f.t);
                goto done;
            }
    }
    counts->n = nout;
done:
    free(mem);
    return st;
}

/* In-memory source and sink of sensim_judge_run. */
typedef struct {
    const sensim_judge_imu *imu;
    const sensim_judge_gnss *gnss;
    sensim_judge_output *out;
    size_t k;
} mem_io;

static sensim_status mem_read_imu(void *ctx, size_t row0, size_t n, double *t, double *w, double *fx, double *fy)
{
    const sensim_judge_imu *m = ((mem_io *)ctx)->imu;
    memcpy(t, m->t + row0, n * sizeof *t);
    memcpy(w, m->yaw_rate + row0, n * sizeof *w);
    memcpy(fx, m->fx + row0, n * sizeof *fx);
    memcpy(fy, m->fy + row0, n * sizeof *fy);
    return SENSIM_OK;
}

static sensim_status mem_read_gnss(void *ctx, size_t row0, size_t n, double *t, double *enu2, double *cov9)
{
    const sensim_judge_gnss *g = ((mem_io *)ctx)->gnss;
    memcpy(t, g->t + row0, n * sizeof *t);
    for (size_t r = 0; r < n; r++) {
        enu2[2 * r] = g->enu[g->enu_stride * (row0 + r)];
        enu2[2 * r + 1] = g->enu[g->enu_stride * (row0 + r) + 1];
    }
    if (cov9)
        memcpy(cov9, g->cov + 9 * row0, 9 * n * sizeof *cov9);
    return SENSIM_OK;
}

static sensim_status mem_sink(void *ctx, const sensim_judge_output *b)
{
    mem_io *m = ctx;
    sensim_judge_output *o = m->out;
    size_t k = m->k, n = b->n;
    memcpy(o->t + k, b->t, n * sizeof *b->t);
    memcpy(o->position + 2 * k, b->position, 2 * n * sizeof *b->position);
    memcpy(o->velocity + 2 * k, b->velocity, 2 * n * sizeof *b->velocity);
    memcpy(o->speed + k, b->speed, n * sizeof *b->speed);
    memcpy(o->yaw + k, b->yaw, n * sizeof *b->yaw);
    if (o->covariance)
        memcpy(o->covariance + 25 * k, b->covariance, 25 * n * sizeof *b->covariance);
    m->k += n;
    return SENSIM_OK;
}

sensim_status sensim_judge_run(const sensim_judge_options *o, const sensim_judge_imu *imu,
                               const sensim_judge_gnss *gnss, sensim_judge_output *out)
{
    if (!o || !imu || !out)
        return sensim_error(SENSIM_EINVAL, "judge: NULL argument");
    memset(out, 0, sizeof *out);
    sensim_status st = check_options(o);
    if (st)
        return st;
    if (imu->n < 2 || !imu->t || !imu->yaw_rate || !imu->fx || !imu->fy)
        return sensim_error(SENSIM_EDATA, "judge: %zu IMU samples (need at least 2)", imu->n);
    size_t ng = gnss ? gnss->n : 0;
    if (ng && (!gnss->t || !gnss->enu || gnss->enu_stride < 2))
        return sensim_error(SENSIM_EINVAL, "judge: GNSS arrays missing or stride %zu < 2", gnss->enu_stride);
    /* Every sample is checked before any work, the IMU first. */
    const double *ic[3] = {imu->yaw_rate, imu->fx, imu->fy};
    double prev = 0;
    if ((st = check_series("imu", imu->t, imu->n, ic, 3, 1, 0, &prev)))
        return st;
    if (ng) {
        const double *gc[2] = {gnss->enu, gnss->enu + 1};
        if ((st = check_series("gnss", gnss->t, ng, gc, 2, gnss->enu_stride, 0, &prev)))
            return st;
    }
    double t0 = imu->t[0], tend = imu->t[imu->n - 1];
    if (ng)
        tend = fmax(tend, gnss->t[ng - 1]);
    double span = (tend - t0) * o->rate_hz;
    if (span > 1e9)
        return sensim_error(SENSIM_EINVAL, "judge: %.3g outputs requested (rate %g Hz over %g s)", span, o->rate_hz,
                            tend - t0);
    size_t nout = (size_t)floor(span) + 1;
    out->t = malloc(nout * sizeof *out->t);
    out->position = malloc(2 * nout * sizeof *out->position);
    out->velocity = malloc(2 * nout * sizeof *out->velocity);
    out->speed = malloc(nout * sizeof *out->speed);
    out->yaw = malloc(nout * sizeof *out->yaw);
    out->covariance = o->want_covariance ? malloc(25 * nout * sizeof *out->covariance) : NULL;
    if (!out->t || !out->position || !out->velocity || !out->speed || !out->yaw ||
        (o->want_covariance && !out->covariance)) {
        sensim_judge_output_free(out);
        return sensim_error(SENSIM_ENOMEM, "judge: out of memory for %zu outputs", nout);
    }
    mem_io io = {imu, gnss, out, 0};
    sensim_judge_source src = {imu->n, ng, ng && gnss->cov != NULL, &io, mem_read_imu, mem_read_gnss};
    sensim_judge_output counts;
    if ((st = sensim_judge_stream(o, &src, 4096, mem_sink, &io, &counts))) {
        sensim_judge_output_free(out);
        return st;
    }
    out->n = counts.n;
    out->imu_used = counts.imu_used;
    out->imu_rejected = counts.imu_rejected;
    out->gnss_used = counts.gnss_used;
    out->gnss_rejected = counts.gnss_rejected;
    return SENSIM_OK;
}
