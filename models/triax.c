/* Triaxial inertial sensor pipeline (see sensim/imu.h for the model and its
 * sources). Per-axis noise is generated in chunks that stay in L1 cache; the
 * recursive bias processes run sequentially per axis, the axes in parallel. */
#include "sensim/imu.h"

#include <gsl/gsl_multifit.h>
#include <float.h>
#include <math.h>
#include <omp.h>
#include <stdlib.h>
#include <string.h>

enum {
    FX_WHITE = 0,
    FX_TURNON = 1,
    FX_GM = 2,
    FX_RW = 3,
    FX_CHRONO_WHITE = 4,
    FX_CHRONO_DRIFT = 5,
    FX_AIRSIM = 6,
    FX_GAZEBO = 7,
    FX_BI0 = 8, /* 8..15: bias-instability terms */
    FX_QUANT = 16 /* effects from 16 on take the streams above every instrument's 16 */
};

#define CHUNK 256

struct sensim_triax {
    sensim_triax_params p;
    sensim_instrument kind;
    uint64_t seed;          /* the key of every stream, with id */
    uint32_t id;
    double rate, dt_nom;
    double mix[3][3];       /* C diag(1 + s) */
    int has_mix, has_g;
    double white_sigma[3];  /* sqrt((N sqrt(rate))^2 + sigma^2) */
    double chrono_step[3];  /* b0 sqrt(1 / (rate t_b)), 0 when Chrono's walk is off */
    double airsim_scale[3]; /* bias_stability / sqrt(tau) */
    int bi_n;
    double bi_tau[3][SENSIM_BI_MAX_TERMS], bi_sigma[3][SENSIM_BI_MAX_TERMS];
};

sensim_triax_params sensim_triax_default_params(void)
{
    sensim_triax_params p;
    memset(&p, 0, sizeof p);
    for (int i = 0; i < 3; i++)
        p.cross_axis[i][i] = 1.0;
    p.bi_terms = 8;
    p.bi_tau_max = 1000.0;
    return p;
}

/* Allan variance of a first-order Gauss-Markov process with unit stationary
 * variance and correlation time T AS SAMPLED every dt (an AR(1) sequence with
 * phi = e^{-d}, d = dt/T), at a cluster of n samples. The continuous-time form
 * (T/tau)^2 (4 e^{-x} - e^{-2x} + 2x - 3) overstates the short end (by 2x at
 * n = 1 for T = dt: it integrates where the sensor only samples), which made
 * the fitted floor 1.41x high at tau = 1/f. With R(k) = phi^k the Allan
 * variance is (1/n^2) sum_k w_k R(k), w_0 = n, w_k = 2 (n - k) [k < n] -
 * min(k, 2n - k); the weights sum to 0, so R(k) - 1 = expm1(-k d) may be
 * used instead, which keeps every digit when T >> dt. Large n by the closed
 * form (n - 3 phi - n phi^2 + 4 phi^{n+1} - phi^{2n+1}) / (n^2 (1 - phi)^2)
 * (MODELS.md, times the stationary 1 - phi^2), written with expm1. */
static double gm_avar_sampled(double n, double d)
{
    if (n <= 4096) {
        const long nn = lround(n);
        double sum = 0.0;
        for (long k = 1; k < 2 * nn; k++) {
            double w = (k < nn ? 2.0 * (double)(nn - k) : 0.0) - (double)(k < 2 * nn - k ? k : 2 * nn - k);
            sum += w * expm1(-(double)k * d);
        }
        return sum / ((double)nn * (double)nn);
    }
    const double a = -expm1(-n * d), om = -expm1(-d);
    return (n * -expm1(-2.0 * d) - exp(-d) * a * (2.0 + a)) / (n * n * om * om);
}

/* Chooses Gauss-Markov variances v_i >= 0 (taus log-spaced) so that the sum
 * of their Allan variances is flat at (2 ln2 / pi) over [tmin, tmax], by
 * least squares in relative error, dropping terms that come out negative. */
static int fit_bi_terms(double tmin, double tmax, int m, double dt, double *taus, double *var)
{
    enum { NG = 48 };
    const double target = 2.0 * M_LN2 / M_PI;
    int active[SENSIM_BI_MAX_TERMS];
    for (int i = 0; i < m; i++) {
        /* Allan peak of a GM term is near tau = 1.89 T: span the range. */
        double lo = tmin / 1.89, hi = tmax / 1.89;
        taus[i] = m == 1 ? sqrt(lo * hi) : lo * pow(hi / lo, (double)i / (m - 1));
        active[i] = 1;
        var[i] = 0.0;
    }
    /* The sampled Allan variance of each term on the grid of cluster sizes
     * n = tau / dt (whole samples, at least one), computed once. */
    double A[NG][SENSIM_BI_MAX_TERMS];
    for (int j = 0; j < NG; j++) {
        double tau = tmin * pow(tmax / tmin, (double)j / (NG - 1)), n = fmax(1.0, nearbyint(tau / dt));
        for (int i = 0; i < m; i++)
            A[j][i] = gm_avar_sampled(n, dt / taus[i]) / target;
    }
    SENSIM_GSL_QUIET_SCOPE();
    for (int iter = 0; iter < m; iter++) {
        int na = 0, idx[SENSIM_BI_MAX_TERMS];
        for (int i = 0; i < m; i++)
            if (active[i])
                idx[na++] = i;
        if (na == 0)
            return -1;
        gsl_matrix *X = gsl_matrix_alloc(NG, (size_t)na), *cov = gsl_matrix_alloc((size_t)na, (size_t)na);
        gsl_vector *y = gsl_vector_alloc(NG), *c = gsl_vector_alloc((size_t)na);
        gsl_multifit_linear_workspace *w = gsl_multifit_linear_alloc(NG, (size_t)na);
        if (!X || !cov || !y || !c || !w) {
            gsl_matrix_free(X);
            gsl_matrix_free(cov);
            gsl_vector_free(y);
            gsl_vector_free(c);
            gsl_multifit_linear_free(w);
            return -1;
        }
        for (int j = 0; j < NG; j++) {
            for (int a = 0; a < na; a++)
                gsl_matrix_set(X, (size_t)j, (size_t)a, A[j][idx[a]]);
            gsl_vector_set(y, (size_t)j, 1.0);
        }
        double chisq;
        int rc = gsl_multifit_linear(X, y, c, cov, &chisq, w);
        int neg = 0;
        for (int a = 0; a < na; a++) {
            var[idx[a]] = gsl_vector_get(c, (size_t)a);
            if (var[idx[a]] <= 0) {
                active[idx[a]] = 0;
                var[idx[a]] = 0;
                neg = 1;
            }
        }
        gsl_matrix_free(X);
        gsl_matrix_free(cov);
        gsl_vector_free(y);
        gsl_vector_free(c);
        gsl_multifit_linear_free(w);
        if (rc)
            return -1;
        if (!neg)
            return 0;
    }
    return 0;
}

static const char *kind_name(sensim_instrument k)
{
    return k == SENSIM_GYRO ? "gyro" : k == SENSIM_ACCEL ? "accel" : "mag";
}

#define CHECK_NONNEG(field, label)                                                                          \
    for (int a = 0; a < 3; a++)                                                                             \
        if (!(p->field[a] >= 0.0) || !isfinite(p->field[a])) {                                              \
            sensim_error(SENSIM_EINVAL, "%s: %s: %s must be finite and >= 0 (axis %d is %g)", what,          \
                         kind_name(kind), label, a, p->field[a]);                                           \
            goto fail;                                                                                      \
        }
#define CHECK_FINITE(field, label)                                                                          \
    for (int a = 0; a < 3; a++)                                                                             \
        if (!isfinite(p->field[a])) {                                                                       \
            sensim_error(SENSIM_EINVAL, "%s: %s: %s must be finite (axis %d)", what, kind_name(kind), label, \
                         a);                                                                                \
            goto fail;                                                                                      \
        }

sensim_triax *sensim_triax_create(const sensim_triax_params *p, sensim_instrument kind, double rate_hz, uint64_t seed,
                                  uint32_t sensor_id, const char *what)
{
    if (!what)
        what = "triaxial sensor";
    sensim_triax *m = calloc(1, sizeof *m);
    if (!m) {
        sensim_error(SENSIM_ENOMEM, "%s: out of memory", what);
        return NULL;
    }
    m->seed = seed;
    m->id = sensor_id;
    if (!(rate_hz > 0) || !isfinite(rate_hz)) {
        sensim_error(SENSIM_EINVAL, "%s: rate_hz must be > 0 (got %g)", what, rate_hz);
        goto fail;
    }
    CHECK_NONNEG(turn_on_bias, "turn_on_bias")
    CHECK_NONNEG(noise_density, "noise_density")
    CHECK_NONNEG(noise_sigma, "noise_sigma")
    CHECK_NONNEG(random_walk, "random_walk")
    CHECK_NONNEG(bias_instability, "bias_instability")
    CHECK_NONNEG(gm_sigma, "gauss_markov.sigma")
    CHECK_NONNEG(chrono_stddev, "chrono_drift.stddev")
    CHECK_NONNEG(chrono_bias_drift, "chrono_drift.bias_drift")
    CHECK_NONNEG(chrono_tau_drift, "chrono_drift.tau_drift")
    CHECK_NONNEG(airsim_bias_stability, "airsim.bias_stability")
    CHECK_NONNEG(airsim_arw, "airsim.arw")
    CHECK_NONNEG(gz_stddev, "gazebo.stddev")
    CHECK_NONNEG(gz_bias_stddev, "gazebo.bias_stddev")
    CHECK_NONNEG(gz_dyn_stddev, "gazebo.dynamic_bias_stddev")
    CHECK_FINITE(gz_mean, "gazebo.mean")
    CHECK_FINITE(gz_bias_mean, "gazebo.bias_mean")
    CHECK_NONNEG(quantization, "quantization")
    CHECK_NONNEG(gz_precision, "gazebo.precision")
    CHECK_NONNEG(range, "range")
    CHECK_FINITE(scale, "scale")
    CHECK_FINITE(bias, "bias")
    CHECK_FINITE(rate_ramp, "rate_ramp")
    CHECK_FINITE(chrono_mean, "chrono_drift.mean")
    CHECK_FINITE(chrono_drift_mean, "chrono_drift.drift_mean")
    for (int a = 0; a < 3; a++) {
        if (p->gm_sigma[a] > 0 && !(p->gm_tau[a] > 0 && isfinite(p->gm_tau[a]))) {
            sensim_error(SENSIM_EINVAL, "%s: %s: gauss_markov.tau must be > 0 when sigma is set (axis %d is %g)",
                         what, kind_name(kind), a, p->gm_tau[a]);
            goto fail;
        }
        if (p->airsim_bias_stability[a] > 0 && !(p->airsim_tau[a] > 0 && isfinite(p->airsim_tau[a]))) {
            sensim_error(SENSIM_EINVAL, "%s: %s: airsim.tau must be > 0 (axis %d is %g)", what, kind_name(kind),
                         a, p->airsim_tau[a]);
            goto fail;
        }
        if (p->gz_dyn_stddev[a] > 0 && !(p->gz_dyn_tau[a] > 0 && isfinite(p->gz_dyn_tau[a]))) {
            sensim_error(SENSIM_EINVAL,
                         "%s: %s: gazebo.dynamic_bias_correlation_time must be > 0 when dynamic_bias_stddev is set "
                         "(axis %d is %g)",
                         what, kind_name(kind), a, p->gz_dyn_tau[a]);
            goto fail;
        }
        for (int b = 0; b < 3; b++)
            if (!isfinite(p->cross_axis[a][b]) || !isfinite(p->g_sensitivity[a][b])) {
                sensim_error(SENSIM_EINVAL, "%s: %s: matrices must be finite", what, kind_name(kind));
                goto fail;
            }
    }
    m->p = *p;
    m->kind = kind;
    m->rate = rate_hz;
    m->dt_nom = 1.0 / rate_hz;
    for (int a = 0; a < 3; a++) {
        for (int b = 0; b < 3; b++) {
            m->mix[a][b] = p->cross_axis[a][b] * (1.0 + p->scale[b]);
            if (m->mix[a][b] != (a == b ? 1.0 : 0.0))
                m->has_mix = 1;
            if (p->g_sensitivity[a][b] != 0.0)
                m->has_g = 1;
        }
        double sd = p->noise_density[a] * sqrt(rate_hz);
        m->white_sigma[a] =
            sqrt(sd * sd + p->noise_sigma[a] * p->noise_sigma[a] + p->gz_stddev[a] * p->gz_stddev[a]);
        /* Chrono's ChNoiseNormalDrift::AddNoise (chrono/src/chrono_sensor/
         * sensors/ChNoiseModel.cpp): the walk runs only when tau_drift and
         * drift_bias both exceed DBL_EPSILON, with step std
         * drift_bias * sqrt(1 / (updateRate * tau_drift)), written as there. */
        m->chrono_step[a] = p->chrono_tau_drift[a] > DBL_EPSILON && p->chrono_bias_drift[a] > DBL_EPSILON
                                ? p->chrono_bias_drift[a] * sqrt(1 / (rate_hz * p->chrono_tau_drift[a]))
                                : 0.0;
        m->airsim_scale[a] = p->airsim_bias_stability[a] > 0 ? p->airsim_bias_stability[a] / sqrt(p->airsim_tau[a]) : 0.0;
    }
    int any_bi = 0;
    for (int a = 0; a < 3; a++)
        any_bi |= p->bias_instability[a] > 0;
    if (any_bi) {
        double tmin = p->bi_tau_min > 0 ? p->bi_tau_min : 1.0 / rate_hz;
        double tmax = p->bi_tau_max;
        if (!(tmax > tmin) || !isfinite(tmax)) {
            sensim_error(SENSIM_EINVAL, "%s: %s: bias instability span [%g, %g] s is empty", what, kind_name(kind),
                         tmin, tmax);
            goto fail;
        }
        if (p->bi_terms < 1 || p->bi_terms > SENSIM_BI_MAX_TERMS) {
            sensim_error(SENSIM_EINVAL, "%s: %s: bias_instability terms must be 1..%d (got %d)", what,
                         kind_name(kind), SENSIM_BI_MAX_TERMS, p->bi_terms);
            goto fail;
        }
        double taus[SENSIM_BI_MAX_TERMS], var[SENSIM_BI_MAX_TERMS];
        if (fit_bi_terms(tmin, tmax, p->bi_terms, 1.0 / rate_hz, taus, var)) {
            sensim_error(SENSIM_EINTERNAL, "%s: %s: bias instability fit failed", what, kind_name(kind));
            goto fail;
        }
        m->bi_n = p->bi_terms;
        m->p.bi_tau_min = tmin;
        for (int a = 0; a < 3; a++)
            for (int i = 0; i < m->bi_n; i++) {
                m->bi_tau[a][i] = taus[i];
                m->bi_sigma[a][i] = p->bias_instability[a] * sqrt(var[i]);
            }
    }
    return m;
fail:
    free(m);
    return NULL;
}

void sensim_triax_destroy(sensim_triax *m) { free(m); }

const sensim_triax_params *sensim_triax_params_of(const sensim_triax *m) { return &m->p; }

int sensim_triax_bi_terms(const sensim_triax *m, int axis, double *taus, double *sigmas)
{
    for (int i = 0; i < m->bi_n; i++) {
        taus[i] = m->bi_tau[axis][i];
        sigmas[i] = m->bi_sigma[axis][i];
    }
    return m->bi_n;
}

void sensim_triax_print(const sensim_triax *m, FILE *f)
{
    const sensim_triax_params *p = &m->p;
    fprintf(f, "%s at %g Hz\n", kind_name(m->kind), m->rate);
    for (int a = 0; a < 3; a++)
        fprintf(f,
                "  axis %d: white sigma %.4g/sample, bias %.4g, turn-on %.4g, K %.4g, B %.4g, GM (%.4g, %.4g s), "
                "ramp %.4g, q %.4g, range %.4g\n",
                a, m->white_sigma[a], p->bias[a], p->turn_on_bias[a], p->random_walk[a], p->bias_instability[a],
                p->gm_sigma[a], p->gm_tau[a], p->rate_ramp[a], p->quantization[a], p->range[a]);
}

/* Stream of (instrument, effect, axis): ((kind * 16 + effect) * 4 + axis)
 * for the first 16 effects; effect 16 + e is effect e of a second page,
 * whose instruments count from 4, past the three of the first. */
static inline uint32_t stream_of(sensim_instrument kind, int effect, int axis)
{
    return (uint32_t)((((effect / 16) * 4 + (int)kind) * 16 + effect % 16) * 4 + axis);
}

void sensim_triax_reset(const sensim_triax *m, sensim_triax_state *s)
{
    memset(s, 0, sizeof *s);
    (void)m;
    s->t_prev = NAN;
    s->t0 = NAN;
}

/* First sample of a run: turn-on bias and stationary starts, from index 0. */
static void start_axis(const sensim_triax *m, sensim_triax_state *s, int a, uint64_t seed, uint32_t id)
{
    const sensim_triax_params *p = &m->p;
    sensim_rng r;
    if (p->turn_on_bias[a] > 0) {
        r = sensim_rng_make(seed, id, stream_of(m->kind, FX_TURNON, a));
        s->turn_on[a] = p->turn_on_bias[a] * sensim_rng_normal(&r, 0);
    }
    if (p->gm_sigma[a] > 0) {
        r = sensim_rng_make(seed, id, stream_of(m->kind, FX_GM, a));
        s->gm[a] = p->gm_sigma[a] * sensim_rng_normal(&r, 0);
    }
    for (int i = 0; i < m->bi_n; i++) {
        r = sensim_rng_make(seed, id, stream_of(m->kind, FX_BI0 + i, a));
        s->bi[a][i] = m->bi_sigma[a][i] * sensim_rng_normal(&r, 0);
    }
    /* gz-sensors GaussianNoiseModel::Load: bias = DblNormal(bias_mean,
     * bias_stddev) (bias_mean itself when the stddev is 0), negated when
     * DblUniform() < 0.5. The dynamic bias starts from it. */
    if (p->gz_bias_mean[a] != 0.0 || p->gz_bias_stddev[a] > 0) {
        r = sensim_rng_make(seed, id, stream_of(m->kind, FX_GAZEBO, 3));
        double b = p->gz_bias_stddev[a] > 0.0 ? p->gz_bias_mean[a] + p->gz_bias_stddev[a] * sensim_rng_normal(&r, (uint64_t)a)
                                              : p->gz_bias_mean[a];
        s->gz[a] = sensim_rng_uniform(&r, 4 + (uint64_t)a) < 0.5 ? -b : b;
    }
}

/* The coefficients of one step dt of the recursion x = phi x + q n. A
 * Gauss-Markov process, (a, b) = (sigma, tau): the exact discretization
 * phi = exp(-dt / tau), q = sigma sqrt(1 - phi^2). A random walk,
 * (a, b) = (scale, min_dt): phi = 1, q = scale sqrt(max(dt, min_dt)). */
static inline void ar1_coef(int gm, double a, double b, double dt, double *phi, double *q)
{
    if (gm) {
        *phi = exp(-dt / b);
        *q = a * sqrt(-expm1(-2.0 * dt / b));
    } else {
        *phi = 1.0;
        *q = a * sqrt(dt > b ? dt : b);
    }
}

/* That recursion over a chunk, adding the state to acc, for samples from
 * `from` on (earlier ones only add the current state). With a uniform step
 * the coefficients are computed once; otherwise per distinct dt. (A walk's
 * phi of 1 multiplies x exactly: x + q n as a walk writes it.) */
static double ar1_pass(int gm, double a, double b, double *acc, const double *nrm, const double *dts, size_t from,
                       size_t cn, double x, int uniform, double dt_nom)
{
    size_t j = 0;
    for (; j < from && j < cn; j++)
        acc[j] += x;
    double dt_c = -1, phi = 0, q = 0;
    if (uniform) {
        ar1_coef(gm, a, b, dt_nom, &phi, &q);
        for (; j < cn; j++) {
            x = phi * x + q * nrm[j];
            acc[j] += x;
        }
        return x;
    }
    for (; j < cn; j++) {
        if (dts[j] != dt_c) {
            dt_c = dts[j];
            ar1_coef(gm, a, b, dt_c, &phi, &q);
        }
        x = phi * x + q * nrm[j];
        acc[j] += x;
    }
    return x;
}

/* AirSim's ImuSimple::addNoise (AirLib/include/sensors/imu/ImuSimple.hpp)
 * over a chunk: sqrt_dt = sqrt(max(dt, min_sample_time = 1 ms)), the output
 * takes the bias as it stands and only then b += n (beta / sqrt(tau)) sqrt_dt.
 * dt is 0 at the run's first sample (AirSim's resetImplementation calls
 * updateOutput right after setting last_time_), so its step uses the floor. */
static double airsim_pass(double *acc, const double *nrm, const double *dts, size_t from, size_t cn, double norm,
                          double x)
{
    for (size_t j = 0; j < cn; j++) {
        const double sqrt_dt = sqrt(fmax(j < from ? 0.0 : dts[j], 1e-3));
        acc[j] += x;
        x += nrm[j] * (norm * sqrt_dt);
    }
    return x;
}

/* gz-sensors GaussianNoiseModel::ApplyImpl (src/GaussianNoiseModel.cc) over a
 * chunk: for dt > 0, sigma_b_d = sqrt(-sigma_b^2 tau / 2 expm1(-2 dt / tau)),
 * phi = exp(-dt / tau), b = phi b + N(0, sigma_b_d), and the output takes the
 * updated b. ImuSensor::Update passes dt as a float (std::chrono::duration<
 * float>) and 0 at the first update: both are kept. */
static double gazebo_pass(double *acc, const double *nrm, const double *dts, size_t from, size_t cn, double sigma_b,
                          double tau, double x)
{
    double dt_c = -1, sigma_b_d = 0, phi_d = 0; /* for the last distinct dt */
    for (size_t j = 0; j < cn; j++) {
        const double dt = j < from ? 0.0 : (double)(float)dts[j];
        if (sigma_b > 0 && tau > 0 && dt > 0) {
            if (dt != dt_c) {
                dt_c = dt;
                sigma_b_d = sqrt(-sigma_b * sigma_b * tau / 2 * expm1(-2 * dt / tau));
                phi_d = exp(-dt / tau);
            }
            x = phi_d * x + sigma_b_d * nrm[j];
        }
        acc[j] += x;
    }
    return x;
}

/* Whether Gazebo's bias (turn-on and dynamic, one state) is on for axis a. */
static int has_gazebo_bias(const sensim_triax_params *p, int a)
{
    return p->gz_bias_mean[a] != 0.0 || p->gz_bias_stddev[a] > 0 || p->gz_dyn_stddev[a] > 0;
}

/* Whether the fused pass below serves axis a: among the additive effects
 * only white noise, Gauss-Markov bias and random walk (quantization and
 * range are applied after). */
static int fused_ok(const sensim_triax *m, int a)
{
    const sensim_triax_params *p = &m->p;
    return m->bi_n == 0 && p->chrono_stddev[a] == 0 && m->airsim_scale[a] == 0 && m->chrono_step[a] == 0 &&
           p->rate_ramp[a] == 0.0 && p->airsim_arw[a] == 0.0 && p->gz_mean[a] == 0.0 && !has_gazebo_bias(p, a) &&
           p->gz_precision[a] == 0.0;
}

/* One (instrument, axis) task of the fused pass. An absent effect has zero
 * coefficients and reads zeros, so it adds exactly +0.0 (acc is never -0.0
 * once the constant bias, itself never -0.0, is added): the result equals
 * noise_axis's per-effect passes bit for bit. */
/* IEEE Std 952 angle (velocity) quantization: the sensor reads its
 * integrated output (angle, velocity) to within one step S = q dt, and a
 * rate sample is the difference of two readings over dt. The readout error
 * is uniform on +-S/2 and independent from reading to reading (IEEE 952
 * annex C; the dither of a ring-laser gyro makes it so, where plain
 * rounding of a slowly moving integral would correlate it), so sample k
 * gains q (e_k - e_{k-1}), e uniform on +-1/2 drawn at index k of its own
 * stream (e_{-1} = 0: the first reading has no predecessor). Allan
 * variance 3 Q^2 / tau^2 with Q = q dt / sqrt(12), the curve `fit imu`
 * reads; the integral of the output stays within S/2 of the true one.
 * The values are a pure function of (stream, k), as for every effect. */
static void quantize_pass(double *y, size_t stride, size_t n, double q, const sensim_rng *r, uint64_t k0)
{
    double e[CHUNK + 1];
    for (size_t c0 = 0; c0 < n; c0 += CHUNK) {
        const size_t cn = n - c0 < CHUNK ? n - c0 : CHUNK;
        const uint64_t k = k0 + c0;
        /* e[j] is the reading error at sample k - 1 + j. */
        if (k == 0) {
            e[0] = 0.5;
            sensim_rng_uniform_fill(r, 0, cn, e + 1);
        } else
            sensim_rng_uniform_fill(r, k - 1, cn + 1, e);
        for (size_t j = 0; j < cn; j++)
            y[(c0 + j) * stride] += q * (e[j + 1] - e[j]);
    }
}

typedef struct fused_lane {
    double *y; /* axis a of the block, stride 3 */
    const double *nw, *ng, *nr;
    double cb, ws, phi, qg, step, gm, rw, q, range;
    sensim_rng r_w, r_g, r_r, r_q;
    int has_w, has_g, has_r;
    uint64_t k;
} fused_lane;

#define FCHUNK 128
#define FLANES 3

static void fused_lane_init(fused_lane *l, const sensim_triax *m, const sensim_triax_state *s, int a, uint64_t seed,
                            uint32_t id, double *y)
{
    const sensim_triax_params *p = &m->p;
    const double dt_nom = m->dt_nom;
    l->y = y + a;
    l->has_w = m->white_sigma[a] > 0;
    l->has_g = p->gm_sigma[a] > 0;
    l->has_r = p->random_walk[a] > 0;
    l->r_w = sensim_rng_make(seed, id, stream_of(m->kind, FX_WHITE, a));
    l->r_g = sensim_rng_make(seed, id, stream_of(m->kind, FX_GM, a));
    l->r_r = sensim_rng_make(seed, id, stream_of(m->kind, FX_RW, a));
    l->cb = p->bias[a] + s->turn_on[a] + p->chrono_mean[a];
    l->ws = l->has_w ? m->white_sigma[a] : 0.0;
    /* As ar1_pass computes them for a uniform step. */
    double walk_phi;
    l->phi = l->qg = l->step = 0.0;
    if (l->has_g)
        ar1_coef(1, p->gm_sigma[a], p->gm_tau[a], dt_nom, &l->phi, &l->qg);
    if (l->has_r)
        ar1_coef(0, p->random_walk[a], 0.0, dt_nom, &walk_phi, &l->step);
    l->gm = l->has_g ? s->gm[a] : 0.0;
    l->rw = l->has_r ? s->rw[a] : 0.0;
    l->q = p->quantization[a];
    l->r_q = sensim_rng_make(seed, id, stream_of(m->kind, FX_QUANT, a));
    l->range = p->range[a];
    l->k = s->k;
}

/* Up to FLANES tasks, every step nominal, interleaved sample by sample so
 * that their Gauss-Markov and random-walk recursions (serial, latency
 * bound) overlap. Missing lanes are dummies writing to scratch. */
static void noise_fused(fused_lane *lanes, int cnt, size_t n)
{
    static const double zero[FCHUNK];
    double nb[FLANES][3][FCHUNK], scratch[3 * FCHUNK];
    fused_lane L[FLANES];
    memset(scratch, 0, sizeof scratch);
    for (int l = 0; l < FLANES; l++) {
        if (l < cnt)
            L[l] = lanes[l];
        else {
            memset(&L[l], 0, sizeof L[l]);
            L[l].k = 1;
        }
        L[l].nw = L[l].has_w ? nb[l][0] : zero;
        L[l].ng = L[l].has_g ? nb[l][1] : zero;
        L[l].nr = L[l].has_r ? nb[l][2] : zero;
    }
    for (size_t c0 = 0; c0 < n; c0 += FCHUNK) {
        const size_t cn = n - c0 < FCHUNK ? n - c0 : FCHUNK;
        double *y[FLANES], *outs[3 * FLANES];
        const sensim_rng *rs[3 * FLANES];
        uint64_t firsts[3 * FLANES];
        int ns = 0;
        for (int l = 0; l < FLANES; l++) {
            const uint64_t k0 = L[l].k + c0;
            const int has[3] = {L[l].has_w, L[l].has_g, L[l].has_r};
            const sensim_rng *r[3] = {&L[l].r_w, &L[l].r_g, &L[l].r_r};
            for (int e = 0; e < 3; e++)
                if (has[e]) {
                    rs[ns] = r[e];
                    firsts[ns] = k0;
                    outs[ns++] = nb[l][e];
                }
            y[l] = l < cnt ? L[l].y + 3 * c0 : scratch;
        }
        sensim_rng_normal_fill_many(ns, rs, firsts, cn, outs);
        size_t j = 0;
        /* The first sample of a run has no step: the states only add. */
        for (int l = 0; l < FLANES; l++)
            if (L[l].k + c0 == 0) {
                double acc = y[l][0] + L[l].cb;
                acc += L[l].gm;
                acc += L[l].rw;
                acc += L[l].ws * L[l].nw[0];
                y[l][0] = acc;
                j = 1;
            }
        if (j)
            for (int l = 0; l < FLANES; l++)
                if (L[l].k + c0 != 0) {
                    double acc = y[l][0] + L[l].cb;
                    L[l].gm = L[l].phi * L[l].gm + L[l].qg * L[l].ng[0];
                    L[l].rw += L[l].step * L[l].nr[0];
                    acc += L[l].gm;
                    acc += L[l].rw;
                    acc += L[l].ws * L[l].nw[0];
                    y[l][0] = acc;
                }
        double g0 = L[0].gm, g1 = L[1].gm, g2 = L[2].gm, r0 = L[0].rw, r1 = L[1].rw, r2 = L[2].rw;
        double *y0 = y[0], *y1 = y[1], *y2 = y[2];
        /* Locals, so that the stores to y cannot alias the coefficients. */
#define FUSED_LOCALS(l)                                                                                     \
    const double cb##l = L[l].cb, ph##l = L[l].phi, qg##l = L[l].qg, st##l = L[l].step, ws##l = L[l].ws; \
    const double *nw##l = L[l].nw, *ng##l = L[l].ng, *nr##l = L[l].nr;
        FUSED_LOCALS(0)
        FUSED_LOCALS(1)
        FUSED_LOCALS(2)
#undef FUSED_LOCALS
#define FUSED_STEP(l)                            \
    {                                            \
        double acc = y##l[3 * j] + cb##l;        \
        g##l = ph##l * g##l + qg##l * ng##l[j];  \
        r##l += st##l * nr##l[j];                \
        acc += g##l;                             \
        acc += r##l;                             \
        acc += ws##l * nw##l[j];                 \
        y##l[3 * j] = acc;                       \
    }
        for (; j < cn; j++) {
            FUSED_STEP(0)
            FUSED_STEP(1)
            FUSED_STEP(2)
        }
#undef FUSED_STEP
        L[0].gm = g0, L[1].gm = g1, L[2].gm = g2;
        L[0].rw = r0, L[1].rw = r1, L[2].rw = r2;
        for (int l = 0; l < cnt; l++) {
            const double q = L[l].q, range = L[l].range;
            double *yc = y[l];
            if (q > 0)
                quantize_pass(yc, 3, cn, q, &L[l].r_q, L[l].k + c0);
            if (range > 0)
                for (size_t i = 0; i < cn; i++)
                    yc[3 * i] = yc[3 * i] > range ? range : yc[3 * i] < -range ? -range : yc[3 * i];
        }
    }
    for (int l = 0; l < cnt; l++) {
        lanes[l].gm = L[l].gm;
        lanes[l].rw = L[l].rw;
    }
}

/* Noise for one axis over n samples, in place on y (stride 3), one effect
 * at a time over chunks that stay in L1. Reads the shared fields of s,
 * writes only axis a's. */
/* Whether a step between two timestamps is the nominal 1/rate up to the
 * rounding of the stamps themselves: a difference of two doubles near t
 * carries up to about one ulp(t) = 2.2e-16 |t| of error, which after a few
 * hours at 1 kHz exceeds any fixed relative tolerance on dt. Nominal steps
 * make the noise independent of the absolute start time and of where a
 * block starts. */
static inline int step_is_nominal(double dt, double dt_nom, double t)
{
    return fabs(dt - dt_nom) <= fmax(1e-9 * dt_nom, 8 * DBL_EPSILON * fabs(t));
}

static void noise_axis(const sensim_triax *m, sensim_triax_state *s, int a, uint64_t seed, uint32_t id,
                       const double *t, size_t n, double *y)
{
    const sensim_triax_params *p = &m->p;
    double nb[7 + SENSIM_BI_MAX_TERMS][CHUNK];
    double acc[CHUNK], dts[CHUNK];
    sensim_rng r_q = sensim_rng_make(seed, id, stream_of(m->kind, FX_QUANT, a));
    const double arw = p->airsim_arw[a];
    const int has_white = m->white_sigma[a] > 0 || arw > 0, has_gm = p->gm_sigma[a] > 0, has_rw = p->random_walk[a] > 0;
    const int has_cw = p->chrono_stddev[a] > 0, has_as = m->airsim_scale[a] > 0;
    const int has_gz = has_gazebo_bias(p, a), has_gzd = has_gz && p->gz_dyn_stddev[a] > 0;
    /* Chrono has no drift mean: mu_b rides on the walk, off with it. */
    const int has_cd = m->chrono_step[a] > 0;
    /* The Gaussian draws of the effects that are on: nb[i] from stream fx[i]. */
    static const int fx[7] = {FX_WHITE, FX_GM, FX_RW, FX_CHRONO_WHITE, FX_CHRONO_DRIFT, FX_AIRSIM, FX_GAZEBO};
    const int on[7] = {has_white, has_gm, has_rw, has_cw, has_cd, has_as, has_gzd};
    sensim_rng rn[7];
    for (int i = 0; i < 7; i++)
        rn[i] = sensim_rng_make(seed, id, stream_of(m->kind, fx[i], a));
    const double const_bias = p->bias[a] + s->turn_on[a] + p->chrono_mean[a] + p->gz_mean[a];
    const double ramp = p->rate_ramp[a], q = p->quantization[a], range = p->range[a], dt_nom = m->dt_nom;
    const double gzp = p->gz_precision[a];
    double gm = s->gm[a], rw = s->rw[a], cd = s->chrono[a], as = s->airsim[a], gz = s->gz[a];
    double bi[SENSIM_BI_MAX_TERMS];
    memcpy(bi, s->bi[a], sizeof bi);
    double tprev = s->t_prev, t0 = isnan(s->t0) ? t[0] : s->t0;

    for (size_t c0 = 0; c0 < n; c0 += CHUNK) {
        const size_t cn = n - c0 < CHUNK ? n - c0 : CHUNK;
        const uint64_t k0 = s->k + c0;
        const double *tc = t + c0;
        for (int i = 0; i < 7; i++)
            if (on[i])
                sensim_rng_normal_fill(&rn[i], k0, cn, nb[i]);
        for (int i = 0; i < m->bi_n; i++) {
            sensim_rng rb = sensim_rng_make(seed, id, stream_of(m->kind, FX_BI0 + i, a));
            sensim_rng_normal_fill(&rb, k0, cn, nb[7 + i]);
        }
        /* Time steps: the first sample of a run has none. Timestamps k/rate
         * differ from 1/rate only by rounding: use the nominal step then (so
         * the result cannot depend on where a block starts), the actual one
         * otherwise. */
        const size_t from = k0 == 0 ? 1 : 0;
        int uniform = 1;
        for (size_t j = from; j < cn; j++) {
            double dt = tc[j] - (j ? tc[j - 1] : tprev);
            if (step_is_nominal(dt, dt_nom, tc[j]))
                dt = dt_nom;
            else
                uniform = 0;
            dts[j] = dt;
        }
        for (size_t j = 0; j < cn; j++)
            acc[j] = y[3 * (c0 + j) + a] + const_bias;
        if (has_gm)
            gm = ar1_pass(1, p->gm_sigma[a], p->gm_tau[a], acc, nb[1], dts, from, cn, gm, uniform, dt_nom);
        if (has_rw)
            rw = ar1_pass(0, p->random_walk[a], 0.0, acc, nb[2], dts, from, cn, rw, uniform, dt_nom);
        if (has_as)
            as = airsim_pass(acc, nb[5], dts, from, cn, m->airsim_scale[a], as);
        if (has_gz)
            gz = gazebo_pass(acc, nb[6], dts, from, cn, p->gz_dyn_stddev[a], p->gz_dyn_tau[a], gz);
        for (int i = 0; i < m->bi_n; i++)
            bi[i] = ar1_pass(1, m->bi_sigma[a][i], m->bi_tau[a][i], acc, nb[7 + i], dts, from, cn, bi[i], uniform,
                             dt_nom);
        if (has_cd) {
            /* Chrono updates its random-walk bias on every call, the first too. */
            const double mu = p->chrono_drift_mean[a], st = m->chrono_step[a];
            for (size_t j = 0; j < cn; j++) {
                cd += mu + st * nb[4][j];
                acc[j] += cd;
            }
        }
        if (ramp != 0.0)
            for (size_t j = 0; j < cn; j++)
                acc[j] += ramp * (tc[j] - t0);
        if (has_white && arw > 0) {
            /* AirSim's white noise: arw / sqrt(max(dt, 1 ms)) at the actual
             * interval, the floor at the first sample (as airsim_pass), in
             * quadrature with any other white noise on the same draw. */
            const double ws = m->white_sigma[a];
            for (size_t j = 0; j < cn; j++) {
                const double sa = arw / sqrt(fmax(j < from ? 0.0 : dts[j], 1e-3));
                acc[j] += (ws > 0 ? sqrt(ws * ws + sa * sa) : sa) * nb[0][j];
            }
        } else if (has_white) {
            const double ws = m->white_sigma[a];
            for (size_t j = 0; j < cn; j++)
                acc[j] += ws * nb[0][j];
        }
        if (has_cw) {
            const double cs = p->chrono_stddev[a];
            for (size_t j = 0; j < cn; j++)
                acc[j] += cs * nb[3][j];
        }
        if (q > 0)
            quantize_pass(acc, 1, cn, q, &r_q, k0);
        if (gzp > 0) /* gz-sensors: output = round(output / precision) * precision */
            for (size_t j = 0; j < cn; j++)
                acc[j] = gzp * nearbyint(acc[j] / gzp);
        if (range > 0)
            for (size_t j = 0; j < cn; j++)
                acc[j] = acc[j] > range ? range : acc[j] < -range ? -range : acc[j];
        for (size_t j = 0; j < cn; j++)
            y[3 * (c0 + j) + a] = acc[j];
        tprev = tc[cn - 1];
    }
    s->gm[a] = gm;
    s->rw[a] = rw;
    s->chrono[a] = cd;
    s->airsim[a] = as;
    s->gz[a] = gz;
    memcpy(s->bi[a], bi, sizeof bi);
}

/* Whether every step of the block (after the run's first sample) is the
 * nominal one, by the test noise_axis applies. */
static int block_uniform(const sensim_triax *m, const sensim_triax_state *s, const double *t, size_t n)
{
    const double dt_nom = m->dt_nom;
    double prev = s->t_prev;
    size_t j = s->k == 0 ? 1 : 0;
    if (j)
        prev = t[0];
    int ok = 1;
    for (; j < n; j++) {
        double dt = t[j] - prev;
        ok &= step_is_nominal(dt, dt_nom, t[j]);
        prev = t[j];
    }
    return ok;
}

/* Deterministic mixing first: y = C diag(1+s) u + G f. */
static void mix(const sensim_triax *m, const double *u, const double *f, size_t n, double *y)
{
    if (m->has_mix || (m->has_g && f)) {
        for (size_t k = 0; k < n; k++) {
            double in[3] = {u[3 * k], u[3 * k + 1], u[3 * k + 2]}, out[3];
            for (int a = 0; a < 3; a++) {
                out[a] = m->mix[a][0] * in[0] + m->mix[a][1] * in[1] + m->mix[a][2] * in[2];
                if (m->has_g && f)
                    out[a] += m->p.g_sensitivity[a][0] * f[3 * k] + m->p.g_sensitivity[a][1] * f[3 * k + 1] +
                              m->p.g_sensitivity[a][2] * f[3 * k + 2];
            }
            y[3 * k] = out[0];
            y[3 * k + 1] = out[1];
            y[3 * k + 2] = out[2];
        }
    } else if (y != u)
        memcpy(y, u, 3 * n * sizeof *y);
}

void sensim_triax_apply_set(int count, const sensim_triax *const m[], sensim_triax_state *const s[], size_t n,
                            const double *t, const double *const u[], const double *const f[], double *const y[])
{
    if (n == 0 || count <= 0)
        return;
    if (count > SENSIM_TRIAX_SET_MAX) {
        for (int i = 0; i < count; i += SENSIM_TRIAX_SET_MAX)
            sensim_triax_apply_set(count - i < SENSIM_TRIAX_SET_MAX ? count - i : SENSIM_TRIAX_SET_MAX, m + i, s + i, n,
                                   t, u + i, f ? f + i : NULL, y + i);
        return;
    }
    int fused[SENSIM_TRIAX_SET_MAX];
    for (int i = 0; i < count; i++) {
        mix(m[i], u[i], f ? f[i] : NULL, n, y[i]);
        if (s[i]->k == 0)
            for (int a = 0; a < 3; a++)
                start_axis(m[i], s[i], a, m[i]->seed, m[i]->id);
        fused[i] = -1;
        /* Instruments at one rate at the same point of the run share the answer. */
        for (int j = 0; j < i && fused[i] < 0; j++)
            if (m[j]->dt_nom == m[i]->dt_nom && s[j]->k == s[i]->k &&
                (s[j]->t_prev == s[i]->t_prev || (isnan(s[j]->t_prev) && isnan(s[i]->t_prev))))
                fused[i] = fused[j];
        if (fused[i] < 0)
            fused[i] = block_uniform(m[i], s[i], t, n);
    }
    /* One task per (instrument, axis), split into equal contiguous ranges
     * over the threads (e.g. a gyro and an accelerometer: 3 and 3 on 2
     * threads); a thread runs consecutive fused tasks FLANES at a time. */
#pragma omp parallel if (n * (size_t)count >= 4096)
    {
        const int nt = 3 * count, nth = omp_get_num_threads(), me = omp_get_thread_num();
        const int lo = nt * me / nth, hi = nt * (me + 1) / nth;
        fused_lane lanes[FLANES];
        int owner[FLANES], cnt = 0;
        for (int task = lo; task <= hi; task++) {
            const int i = task / 3, a = task % 3;
            const int fuse = task < hi && fused[i] && fused_ok(m[i], a);
            if (cnt && (!fuse || cnt == FLANES || task == hi)) {
                noise_fused(lanes, cnt, n);
                for (int l = 0; l < cnt; l++) {
                    s[owner[l] / 3]->gm[owner[l] % 3] = lanes[l].gm;
                    s[owner[l] / 3]->rw[owner[l] % 3] = lanes[l].rw;
                }
                cnt = 0;
            }
            if (task == hi)
                break;
            if (fuse) {
                fused_lane_init(&lanes[cnt], m[i], s[i], a, m[i]->seed, m[i]->id, y[i]);
                owner[cnt++] = task;
            } else
                noise_axis(m[i], s[i], a, m[i]->seed, m[i]->id, t, n, y[i]);
        }
    }
    for (int i = 0; i < count; i++) {
        if (isnan(s[i]->t0))
            s[i]->t0 = t[0];
        s[i]->t_prev = t[n - 1];
        s[i]->k += n;
    }
}

void sensim_triax_apply(const sensim_triax *m, sensim_triax_state *s, size_t n, const double *t, const double *u,
                        const double *f, double *y)
{
    sensim_triax_apply_set(1, &m, &s, n, t, &u, &f, &y);
}
