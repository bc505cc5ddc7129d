/* The `imu` sensor type: gyroscope, accelerometer and magnetometer blocks of
 * a rig, simulated from ground truth or added to recorded clean data.
 *
 * YAML (all keys optional; numbers SI or with a unit string; a per-axis
 * value is one number for all axes or a list of three):
 *   gyro:  { noise_density, noise_sigma, bias, turn_on_bias, random_walk,
 *            bias_instability, bias_instability_taus: [min, max],
 *            bias_instability_terms, rate_ramp, quantization, range, scale,
 *            cross_axis: 3x3, g_sensitivity: 3x3,
 *            gauss_markov: { sigma, tau },
 *            chrono_drift: { mean, stddev, bias_drift, drift_mean, tau_drift },
 *            airsim: { arw (gyro) or vrw (accel), bias_stability, tau },
 *            gazebo: { mean, stddev, bias_mean, bias_stddev, dynamic_bias_stddev,
 *                      dynamic_bias_correlation_time, precision } (SDF <noise>) }
 *   accel: the same without g_sensitivity
 *   mag:   the same, plus field: [E, N, U] (T, world) or { model: dipole },
 *          hard_iron: [3] (T), soft_iron: 3x3
 * Outputs (DESIGN.md): t (delivery), t_sample (true sample time), t_sensor
 * (the sensor clock's stamp), angular_velocity, specific_force,
 * magnetic_field. */
#include <math.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "sensim/geodesy.h"
#include "sensim/gt.h"
#include "sensim/imu.h"
#include "sensim/rig.h"
#include "../lib/base_internal.h"

#define DEFAULT_BLOCK 65536

typedef struct imu_model {
    sensim_triax *tx[3];   /* gyro, accel, mag (NULL when absent) */
    int mag_dipole;
    double mag_field[3];   /* T, world ENU (constant model) */
    double hard_iron[3];
    double soft_iron[3][3];
} imu_model;

static const char *const imu_keys[] = {"gyro", "accel", "mag", NULL};
static const char *const triax_keys[] = {
    "noise_density", "noise_sigma", "bias", "turn_on_bias", "random_walk", "bias_instability",
    "bias_instability_taus", "bias_instability_terms", "rate_ramp", "quantization", "range", "scale",
    "cross_axis", "g_sensitivity", "gauss_markov", "chrono_drift", "airsim", "gazebo", "field", "hard_iron",
    "soft_iron", NULL};

static sensim_dim dim_shift(sensim_dim d, int s2)
{
    d.s2 = (signed char)(d.s2 + s2);
    return d;
}

/* Per-axis keys of a triax block, in the order parse_triax reads them and
 * write_triax writes them: the field, its unit as the instrument's base
 * unit times s^-s2/2 (dim_shift: +1 a density, -1 a walk, -2 a ramp;
 * S2_NONE: dimensionless, S2_TIME: seconds) and the lowest value accepted.
 * In triax_axes, bias_instability_taus and _terms come after the first
 * TRIAX_AXES_HEAD. */
#define S2_NONE 99
#define S2_TIME 98
#define TRIAX_AXES_HEAD 6
typedef struct triax_axis {
    const char *key;
    size_t off;
    int s2;
    double lo;
} triax_axis;
static const triax_axis triax_axes[] = {
    {"noise_density", offsetof(sensim_triax_params, noise_density), 1, 0},
    {"noise_sigma", offsetof(sensim_triax_params, noise_sigma), 0, 0},
    {"bias", offsetof(sensim_triax_params, bias), 0, -INFINITY},
    {"turn_on_bias", offsetof(sensim_triax_params, turn_on_bias), 0, 0},
    {"random_walk", offsetof(sensim_triax_params, random_walk), -1, 0},
    {"bias_instability", offsetof(sensim_triax_params, bias_instability), 0, 0},
    {"rate_ramp", offsetof(sensim_triax_params, rate_ramp), -2, -INFINITY},
    {"quantization", offsetof(sensim_triax_params, quantization), 0, 0},
    {"range", offsetof(sensim_triax_params, range), 0, 0},
    {"scale", offsetof(sensim_triax_params, scale), S2_NONE, -1},
};
#define TRIAX_AXES (sizeof triax_axes / sizeof *triax_axes)
/* The gazebo block's, but its precision (read apart: it is thresholded). */
static const triax_axis gazebo_axes[] = {
    {"mean", offsetof(sensim_triax_params, gz_mean), 0, -INFINITY},
    {"stddev", offsetof(sensim_triax_params, gz_stddev), 0, 0},
    {"bias_mean", offsetof(sensim_triax_params, gz_bias_mean), 0, -INFINITY},
    {"bias_stddev", offsetof(sensim_triax_params, gz_bias_stddev), 0, 0},
    {"dynamic_bias_stddev", offsetof(sensim_triax_params, gz_dyn_stddev), -1, 0},
    {"dynamic_bias_correlation_time", offsetof(sensim_triax_params, gz_dyn_tau), S2_TIME, 0},
};
#define GAZEBO_AXES (sizeof gazebo_axes / sizeof *gazebo_axes)

static double *axis_field(sensim_triax_params *p, const triax_axis *a) { return (double *)((char *)p + a->off); }
static const double *axis_value(const sensim_triax_params *p, const triax_axis *a)
{
    return (const double *)((const char *)p + a->off);
}

/* A per-axis quantity: one value or a list of three. */
static sensim_status get_axes(const sensim_ynode *map, const char *key, sensim_dim dim, double lo, double out[3])
{
    const sensim_ynode *v = sensim_ynode_get(map, key);
    if (!v)
        return SENSIM_OK;
    sensim_status st;
    if (sensim_ynode_kind_of(v) == SENSIM_YNODE_SEQUENCE) {
        if ((st = sensim_ynode_get_vector(map, key, dim, 1, 3, out)))
            return st;
    } else {
        double x;
        char what[96];
        snprintf(what, sizeof what, "key '%s'", key);
        if ((st = sensim_ynode_as_quantity(v, what, dim, &x)))
            return st;
        out[0] = out[1] = out[2] = x;
    }
    for (int a = 0; a < 3; a++)
        if (!(out[a] >= lo))
            return sensim_ynode_error(v, SENSIM_EINVAL, "key '%s': must be >= %g (axis %d is %g)", key, lo, a,
                                      out[a]);
    return SENSIM_OK;
}

/* The keys a[0..n-1] of block b, in order, for an instrument of base unit base. */
static sensim_status get_axes_table(const sensim_ynode *b, const triax_axis *a, size_t n, sensim_dim base,
                                    sensim_triax_params *p)
{
    for (size_t i = 0; i < n; i++) {
        const sensim_dim dim = a[i].s2 == S2_NONE   ? SENSIM_DIM_NONE
                               : a[i].s2 == S2_TIME ? SENSIM_DIM_TIME
                                                    : dim_shift(base, a[i].s2);
        sensim_status st = get_axes(b, a[i].key, dim, a[i].lo, axis_field(p, &a[i]));
        if (st)
            return st;
    }
    return SENSIM_OK;
}

/* A correlation time given once for all three axes: required or 0 when
 * absent; > 0 when strict, else >= 0. */
static sensim_status get_tau(const sensim_ynode *map, const char *key, int required, int strict, double out[3])
{
    double tau = 0;
    sensim_status st = sensim_ynode_get_quantity_range(map, key, SENSIM_DIM_TIME, required, 0, INFINITY, &tau);
    if (st)
        return st;
    if (strict && !(tau > 0))
        return sensim_ynode_error(sensim_ynode_get(map, key), SENSIM_EINVAL, "key '%s': must be > 0", key);
    out[0] = out[1] = out[2] = tau;
    return SENSIM_OK;
}

static sensim_status parse_triax(const sensim_ynode *b, sensim_instrument kind, sensim_triax_params *p)
{
    static const char *const names[] = {"gyro", "accel", "mag"};
    const sensim_dim base = kind == SENSIM_GYRO ? SENSIM_DIM_ANGULAR_RATE
                            : kind == SENSIM_ACCEL ? SENSIM_DIM_ACCEL
                                                   : SENSIM_DIM_MAGNETIC;
    const sensim_dim density = dim_shift(base, 1);
    *p = sensim_triax_default_params();
    sensim_status st = sensim_ynode_check_keys(b, names[kind], triax_keys);
    if (st)
        return st;
    if (kind != SENSIM_GYRO && sensim_ynode_get(b, "g_sensitivity"))
        return sensim_ynode_error(sensim_ynode_get(b, "g_sensitivity"), SENSIM_EINVAL,
                                  "key 'g_sensitivity': only a gyro has g-sensitivity");
    if (kind != SENSIM_MAG)
        for (const char *const *k = (const char *const[]){"field", "hard_iron", "soft_iron", NULL}; *k; k++)
            if (sensim_ynode_get(b, *k))
                return sensim_ynode_error(sensim_ynode_get(b, *k), SENSIM_EINVAL,
                                          "key '%s': only a magnetometer has it", *k);
    const double NEG = -INFINITY;
    if ((st = get_axes_table(b, triax_axes, TRIAX_AXES, base, p)))
        return st;
    if (sensim_ynode_get(b, "bias_instability_taus")) {
        double span[2];
        if ((st = sensim_ynode_get_vector(b, "bias_instability_taus", SENSIM_DIM_TIME, 1, 2, span)))
            return st;
        if (!(span[0] > 0 && span[1] > span[0]))
            return sensim_ynode_error(sensim_ynode_get(b, "bias_instability_taus"), SENSIM_EINVAL,
                                      "key 'bias_instability_taus': need 0 < min < max (got [%g, %g])", span[0],
                                      span[1]);
        p->bi_tau_min = span[0];
        p->bi_tau_max = span[1];
    }
    if (sensim_ynode_get(b, "bias_instability_terms")) {
        long long n;
        if ((st = sensim_ynode_get_int(b, "bias_instability_terms", 1, &n)))
            return st;
        if (n < 1 || n > SENSIM_BI_MAX_TERMS)
            return sensim_ynode_error(sensim_ynode_get(b, "bias_instability_terms"), SENSIM_EINVAL,
                                      "key 'bias_instability_terms': must be 1..%d", SENSIM_BI_MAX_TERMS);
        p->bi_terms = (int)n;
    }
    if ((st = sensim_ynode_get_vector(b, "cross_axis", SENSIM_DIM_NONE, 0, 9, &p->cross_axis[0][0])))
        return st;
    if (kind == SENSIM_GYRO) {
        sensim_dim gs = {-2, 2, 2, 0}; /* rad/s per m/s^2 = rad s / m */
        if ((st = sensim_ynode_get_vector(b, "g_sensitivity", gs, 0, 9, &p->g_sensitivity[0][0])))
            return st;
    }
    const sensim_ynode *gm = sensim_ynode_get(b, "gauss_markov");
    if (gm) {
        static const char *const k[] = {"sigma", "tau", NULL};
        if ((st = sensim_ynode_check_keys(gm, "gauss_markov", k)) || (st = get_axes(gm, "sigma", base, 0, p->gm_sigma)) ||
            (st = get_tau(gm, "tau", 1, 1, p->gm_tau)))
            return st;
    }
    const sensim_ynode *cd = sensim_ynode_get(b, "chrono_drift");
    if (cd) {
        static const char *const k[] = {"mean", "stddev", "bias_drift", "drift_mean", "tau_drift", NULL};
        if ((st = sensim_ynode_check_keys(cd, "chrono_drift", k)) ||
            (st = get_axes(cd, "mean", base, NEG, p->chrono_mean)) ||
            (st = get_axes(cd, "stddev", base, 0, p->chrono_stddev)) ||
            (st = get_axes(cd, "bias_drift", base, 0, p->chrono_bias_drift)) ||
            (st = get_axes(cd, "drift_mean", base, NEG, p->chrono_drift_mean)) ||
            (st = get_tau(cd, "tau_drift", 0, 0, p->chrono_tau_drift)))
            return st;
    }
    const sensim_ynode *as = sensim_ynode_get(b, "airsim");
    if (as) {
        /* AirSim's ImuSimpleParams name the white noise arw (gyro) and vrw
         * (accelerometer); it has no magnetometer noise of this form. */
        static const char *const kg[] = {"arw", "bias_stability", "tau", NULL};
        static const char *const ka[] = {"vrw", "bias_stability", "tau", NULL};
        static const char *const km[] = {"bias_stability", "tau", NULL};
        if ((st = sensim_ynode_check_keys(as, "airsim", kind == SENSIM_GYRO ? kg : kind == SENSIM_ACCEL ? ka : km)) ||
            (st = get_axes(as, kind == SENSIM_GYRO ? "arw" : "vrw", density, 0, p->airsim_arw)) ||
            (st = get_axes(as, "bias_stability", base, 0, p->airsim_bias_stability)) ||
            (st = get_tau(as, "tau", 1, 1, p->airsim_tau)))
            return st;
    }
    const sensim_ynode *gz = sensim_ynode_get(b, "gazebo");
    if (gz) {
        /* The SDF <noise type="gaussian"> elements, as gz-sensors reads them. */
        static const char *const k[] = {"mean", "stddev", "bias_mean", "bias_stddev", "dynamic_bias_stddev",
                                        "dynamic_bias_correlation_time", "precision", NULL};
        double prec[3] = {0, 0, 0};
        if ((st = sensim_ynode_check_keys(gz, "gazebo", k)) ||
            (st = get_axes_table(gz, gazebo_axes, GAZEBO_AXES, base, p)) ||
            (st = get_axes(gz, "precision", base, 0, prec)))
            return st;
        for (int a = 0; a < 3; a++)
            if (p->gz_dyn_stddev[a] > 0 && !(p->gz_dyn_tau[a] > 0))
                return sensim_ynode_error(gz, SENSIM_EINVAL,
                                          "key 'dynamic_bias_correlation_time': must be > 0 when "
                                          "dynamic_bias_stddev is set (axis %d)",
                                          a);
        /* gz-sensors rounds each output sample only where
         * !math::equal(precision, 0, 1e-6): a precision of 1e-6 or less (in
         * SI units) does nothing there, nor here. That per-sample rounding is
         * not IEEE 952 quantization (of the integrated output), so it is its
         * own step. */
        if (sensim_ynode_get(gz, "precision")) {
            if (sensim_ynode_get(b, "quantization"))
                return sensim_ynode_error(sensim_ynode_get(gz, "precision"), SENSIM_EINVAL,
                                          "key 'precision': give either gazebo.precision or quantization, not both");
            for (int a = 0; a < 3; a++)
                p->gz_precision[a] = prec[a] > 1e-6 ? prec[a] : 0.0;
        }
    }
    return SENSIM_OK;
}

static void imu_destroy(void *model)
{
    imu_model *m = model;
    if (!m)
        return;
    for (int i = 0; i < 3; i++)
        sensim_triax_destroy(m->tx[i]);
    free(m);
}

sensim_imu_params sensim_imu_default_params(void)
{
    sensim_imu_params p;
    memset(&p, 0, sizeof p);
    for (int i = 0; i < 3; i++) {
        p.triax[i] = sensim_triax_default_params();
        p.soft_iron[i][i] = 1.0;
    }
    p.mag_dipole = 1;
    return p;
}

sensim_status sensim_imu_params_from_yaml(const sensim_ynode *map, sensim_imu_params *p)
{
    static const char *const names[] = {"gyro", "accel", "mag"};
    sensim_status st = SENSIM_OK;
    for (int i = 0; i < 3 && !st; i++) {
        const sensim_ynode *b = sensim_ynode_get(map, names[i]);
        if (!b)
            continue;
        p->present[i] = 1;
        if ((st = parse_triax(b, (sensim_instrument)i, &p->triax[i])))
            break;
        if (i == SENSIM_MAG) {
            /* Default: the Earth's dipole at the log's origin. */
            p->mag_dipole = 1;
            const sensim_ynode *f = sensim_ynode_get(b, "field");
            if (f && sensim_ynode_kind_of(f) == SENSIM_YNODE_MAPPING) {
                static const char *const fk[] = {"model", NULL};
                const char *model = NULL;
                if ((st = sensim_ynode_check_keys(f, "field", fk)) ||
                    (st = sensim_ynode_get_string(f, "model", 1, &model)))
                    break;
                if (strcmp(model, "dipole"))
                    st = sensim_ynode_error(f, SENSIM_EINVAL, "key 'field.model': unknown '%s' (known: dipole)",
                                            model);
            } else if (f) {
                p->mag_dipole = 0;
                st = sensim_ynode_get_vector(b, "field", SENSIM_DIM_MAGNETIC, 1, 3, p->mag_field);
            }
            if (!st)
                st = sensim_ynode_get_vector(b, "hard_iron", SENSIM_DIM_MAGNETIC, 0, 3, p->hard_iron);
            if (!st)
                st = sensim_ynode_get_vector(b, "soft_iron", SENSIM_DIM_NONE, 0, 9, &p->soft_iron[0][0]);
        }
    }
    return st;
}

/* ---- writing: the keys parse_triax reads, where they differ from the
 * defaults, in SI ---- */

static int axes_set(const double v[3], double dflt)
{
    return v[0] != dflt || v[1] != dflt || v[2] != dflt;
}

/* One number when the axes agree, else a list of three. */
static void put_axes(sensim_ywriter *w, const char *key, const double v[3])
{
    if (!axes_set(v, 0.0))
        return;
    sensim_ywriter_key(w, key);
    if (v[0] == v[1] && v[1] == v[2])
        sensim_ywriter_number(w, v[0]);
    else
        sensim_ywriter_numbers(w, v, 3);
}

static void put_axes_table(sensim_ywriter *w, const triax_axis *a, size_t n, const sensim_triax_params *p)
{
    for (size_t i = 0; i < n; i++)
        put_axes(w, a[i].key, axis_value(p, &a[i]));
}

static int any_axes_set(const triax_axis *a, size_t n, const sensim_triax_params *p)
{
    for (size_t i = 0; i < n; i++)
        if (axes_set(axis_value(p, &a[i]), 0.0))
            return 1;
    return 0;
}

static void write_triax(sensim_ywriter *w, sensim_instrument kind, const sensim_triax_params *p)
{
    const sensim_triax_params d = sensim_triax_default_params();
    put_axes_table(w, triax_axes, TRIAX_AXES_HEAD, p);
    /* The parser takes a span with 0 < min < max only: the default (min 0,
     * resolved to 1/rate at create) is left out. */
    if (p->bi_tau_min > 0 || p->bi_tau_max != d.bi_tau_max) {
        sensim_ywriter_key(w, "bias_instability_taus");
        sensim_ywriter_numbers(w, (const double[]){p->bi_tau_min, p->bi_tau_max}, 2);
    }
    if (p->bi_terms != d.bi_terms) {
        sensim_ywriter_key(w, "bias_instability_terms");
        sensim_ywriter_int(w, p->bi_terms);
    }
    put_axes_table(w, triax_axes + TRIAX_AXES_HEAD, TRIAX_AXES - TRIAX_AXES_HEAD, p);
    if (memcmp(p->cross_axis, d.cross_axis, sizeof d.cross_axis)) {
        sensim_ywriter_key(w, "cross_axis");
        sensim_ywriter_numbers(w, &p->cross_axis[0][0], 9);
    }
    if (kind == SENSIM_GYRO && memcmp(p->g_sensitivity, d.g_sensitivity, sizeof d.g_sensitivity)) {
        sensim_ywriter_key(w, "g_sensitivity");
        sensim_ywriter_numbers(w, &p->g_sensitivity[0][0], 9);
    }
    /* One correlation time per block (the first axis's). */
    if (axes_set(p->gm_sigma, 0.0) || axes_set(p->gm_tau, 0.0)) {
        sensim_ywriter_key(w, "gauss_markov");
        sensim_ywriter_map_begin(w, 0);
        put_axes(w, "sigma", p->gm_sigma);
        sensim_ywriter_key(w, "tau");
        sensim_ywriter_number(w, p->gm_tau[0]);
        sensim_ywriter_map_end(w);
    }
    if (axes_set(p->chrono_mean, 0.0) || axes_set(p->chrono_stddev, 0.0) || axes_set(p->chrono_bias_drift, 0.0) ||
        axes_set(p->chrono_drift_mean, 0.0) || axes_set(p->chrono_tau_drift, 0.0)) {
        sensim_ywriter_key(w, "chrono_drift");
        sensim_ywriter_map_begin(w, 0);
        put_axes(w, "mean", p->chrono_mean);
        put_axes(w, "stddev", p->chrono_stddev);
        put_axes(w, "bias_drift", p->chrono_bias_drift);
        put_axes(w, "drift_mean", p->chrono_drift_mean);
        if (p->chrono_tau_drift[0] != 0.0) {
            sensim_ywriter_key(w, "tau_drift");
            sensim_ywriter_number(w, p->chrono_tau_drift[0]);
        }
        sensim_ywriter_map_end(w);
    }
    if (axes_set(p->airsim_arw, 0.0) || axes_set(p->airsim_bias_stability, 0.0) || axes_set(p->airsim_tau, 0.0)) {
        sensim_ywriter_key(w, "airsim");
        sensim_ywriter_map_begin(w, 0);
        if (kind != SENSIM_MAG)
            put_axes(w, kind == SENSIM_GYRO ? "arw" : "vrw", p->airsim_arw);
        put_axes(w, "bias_stability", p->airsim_bias_stability);
        sensim_ywriter_key(w, "tau");
        sensim_ywriter_number(w, p->airsim_tau[0]);
        sensim_ywriter_map_end(w);
    }
    if (any_axes_set(gazebo_axes, GAZEBO_AXES, p) || axes_set(p->gz_precision, 0.0)) {
        sensim_ywriter_key(w, "gazebo");
        sensim_ywriter_map_begin(w, 0);
        put_axes_table(w, gazebo_axes, GAZEBO_AXES, p);
        put_axes(w, "precision", p->gz_precision);
        sensim_ywriter_map_end(w);
    }
}

void sensim_imu_write_yaml(sensim_ywriter *w, const sensim_sensor *s, const sensim_imu_params *p)
{
    static const char *const names[] = {"gyro", "accel", "mag"};
    sensim_sensor_write_yaml(w, s, "imu");
    for (int i = 0; i < 3; i++) {
        if (!p->present[i])
            continue;
        sensim_ywriter_key(w, names[i]);
        sensim_ywriter_map_begin(w, 0);
        write_triax(w, (sensim_instrument)i, &p->triax[i]);
        if (i == SENSIM_MAG) {
            const sensim_imu_params d = sensim_imu_default_params();
            if (!p->mag_dipole) {
                sensim_ywriter_key(w, "field");
                sensim_ywriter_numbers(w, p->mag_field, 3);
            }
            put_axes(w, "hard_iron", p->hard_iron);
            if (memcmp(p->soft_iron, d.soft_iron, sizeof d.soft_iron)) {
                sensim_ywriter_key(w, "soft_iron");
                sensim_ywriter_numbers(w, &p->soft_iron[0][0], 9);
            }
        }
        sensim_ywriter_map_end(w);
    }
    sensim_ywriter_map_end(w);
}

void sensim_imu_write_kalibr(sensim_ywriter *w, const sensim_kalibr_imu *k)
{
    if (k->has_accel) {
        sensim_ywriter_key(w, "accelerometer_noise_density");
        sensim_ywriter_number(w, k->accelerometer_noise_density);
        sensim_ywriter_key(w, "accelerometer_random_walk");
        sensim_ywriter_number(w, k->accelerometer_random_walk);
    }
    if (k->has_gyro) {
        sensim_ywriter_key(w, "gyroscope_noise_density");
        sensim_ywriter_number(w, k->gyroscope_noise_density);
        sensim_ywriter_key(w, "gyroscope_random_walk");
        sensim_ywriter_number(w, k->gyroscope_random_walk);
    }
    sensim_ywriter_key(w, "rostopic");
    sensim_ywriter_string(w, k->rostopic ? k->rostopic : "/imu0");
    sensim_ywriter_key(w, "update_rate");
    sensim_ywriter_number(w, k->update_rate);
}

static sensim_status imu_create(sensim_sensor *s)
{
    static const char *const names[] = {"gyro", "accel", "mag"};
    if (!(s->rate_hz > 0))
        return sensim_ynode_error(s->node, SENSIM_EINVAL, "sensor '%s': missing key 'rate_hz'", s->name);
    sensim_imu_params p = sensim_imu_default_params();
    sensim_status st = sensim_imu_params_from_yaml(s->node, &p);
    if (st)
        return st;
    if (!p.present[0] && !p.present[1] && !p.present[2])
        return sensim_ynode_error(s->node, SENSIM_EINVAL, "sensor '%s': an imu needs at least one of gyro, accel, mag",
                                  s->name);
    imu_model *m = calloc(1, sizeof *m);
    if (!m)
        return sensim_error(SENSIM_ENOMEM, "out of memory");
    for (int i = 0; i < 3 && !st; i++) {
        if (!p.present[i])
            continue;
        const sensim_ynode *b = sensim_ynode_get(s->node, names[i]);
        char what[256];
        snprintf(what, sizeof what, "%s:%d: sensor '%s'", sensim_ynode_file(b), sensim_ynode_line(b), s->name);
        if (!(m->tx[i] = sensim_triax_create(&p.triax[i], (sensim_instrument)i, s->rate_hz, 0, s->id, what)))
            st = sensim_last_status();
    }
    if (st) {
        imu_destroy(m);
        return st;
    }
    m->mag_dipole = p.mag_dipole;
    memcpy(m->mag_field, p.mag_field, sizeof m->mag_field);
    memcpy(m->hard_iron, p.hard_iron, sizeof m->hard_iron);
    memcpy(m->soft_iron, p.soft_iron, sizeof m->soft_iron);
    s->model = m;
    return SENSIM_OK;
}

/* The Earth's field as a centred dipole, IGRF-13 epoch 2020 (g10, g11, h11
 * in nT, reference radius 6371.2 km): B = (a/r)^3 (3 (m.r^) r^ - m),
 * m = (g11, h11, g10), in ECEF. */
static void dipole_ecef(const double ecef[3], double b[3])
{
    const double a = 6371200.0, m[3] = {-1450.9e-9, 4652.5e-9, -29404.8e-9};
    double r = sqrt(ecef[0] * ecef[0] + ecef[1] * ecef[1] + ecef[2] * ecef[2]);
    double u[3] = {ecef[0] / r, ecef[1] / r, ecef[2] / r};
    double k = pow(a / r, 3), mu = m[0] * u[0] + m[1] * u[1] + m[2] * u[2];
    for (int i = 0; i < 3; i++)
        b[i] = k * (3 * mu * u[i] - m[i]);
}

static void mag_world(const imu_model *m, const sensim_geo_enu *frame, const double pos[3], double b[3])
{
    if (!m->mag_dipole) {
        memcpy(b, m->mag_field, 3 * sizeof *b);
        return;
    }
    double ecef[3], be[3];
    sensim_geo_enu_to_ecef(frame, pos, ecef);
    dipole_ecef(ecef, be);
    sensim_vec3 v = sensim_mat3_apply(&frame->r, sensim_vec3_load(be));
    sensim_vec3_store(v, b);
}

/* WGS84 rotation rate (TR8350.2), rad/s. */
#define EARTH_RATE 7.292115e-5

/* True signals in the sensor frame at one ground-truth state. With the rig's
 * earth: the gyro adds the Earth's rate R^T Omega (Omega = Omega_ie (0,
 * cos phi0, sin phi0) in the ENU frame of the origin's latitude phi0); the
 * specific force takes WGS84 normal gravity at the vehicle's latitude and
 * ellipsoidal height (Somigliana with the free-air term,
 * sensim_geo_normal_gravity) along the frame's up, and the Coriolis term:
 * f = R^T (a + 2 Omega x v + gamma up) (the centrifugal part is inside
 * normal gravity). */
static void truth(const sensim_sensor *s, const imu_model *m, const sensim_geo_enu *frame, const sensim_gt_state *g,
                  double w[3], double f[3], double mag[3])
{
    sensim_quat qm = s->mount_orientation;
    sensim_vec3 wb = sensim_vec3_load(g->angular_velocity);
    double acc[3] = {g->acceleration[0], g->acceleration[1], g->acceleration[2]}, grav = SENSIM_G0;
    if (s->earth_rotation) {
        const double phi = frame->origin_lla[0] * M_PI / 180.0;
        const sensim_vec3 om = sensim_vec3_make(0.0, EARTH_RATE * cos(phi), EARTH_RATE * sin(phi));
        wb = sensim_vec3_add(wb, sensim_quat_rotate_inv(sensim_quat_load(g->orientation), om));
        sensim_vec3 cor = sensim_vec3_scale(sensim_vec3_cross(om, sensim_vec3_load(g->velocity)), 2.0);
        acc[0] += cor.x, acc[1] += cor.y, acc[2] += cor.z;
    }
    if (s->earth_gravity) {
        double lla[3];
        sensim_geo_enu_to_lla(frame, g->position, lla);
        grav = sensim_geo_normal_gravity(lla[0], lla[2]);
    }
    sensim_vec3_store(sensim_quat_rotate_inv(qm, wb), w);
    double r[3] = {s->mount_position.x, s->mount_position.y, s->mount_position.z}, fb[3];
    sensim_imu_specific_force(g->orientation, acc, g->angular_velocity, g->angular_accel, r, grav, fb);
    sensim_vec3_store(sensim_quat_rotate_inv(qm, sensim_vec3_load(fb)), f);
    if (m->tx[SENSIM_MAG]) {
        /* The field where the magnetometer is: the body origin plus the
         * lever arm turned into the world, p + R r. */
        double bw[3], pm[3];
        sensim_vec3 rw = sensim_quat_rotate(sensim_quat_load(g->orientation), sensim_vec3_load(r));
        sensim_vec3_store(sensim_vec3_add(sensim_vec3_load(g->position), rw), pm);
        mag_world(m, frame, pm, bw);
        sensim_vec3 bs = sensim_quat_rotate_inv(qm, sensim_quat_rotate_inv(sensim_quat_load(g->orientation),
                                                                           sensim_vec3_load(bw)));
        double in[3] = {bs.x, bs.y, bs.z};
        for (int a = 0; a < 3; a++)
            mag[a] = m->soft_iron[a][0] * in[0] + m->soft_iron[a][1] * in[1] + m->soft_iron[a][2] * in[2] +
                     m->hard_iron[a];
    }
}

typedef struct outsets {
    sensim_log_dset *t, *t_sample, *t_sensor, *d[3];
} outsets;

static void outsets_close(outsets *o)
{
    sensim_log_dset_close(o->t);
    sensim_log_dset_close(o->t_sample);
    sensim_log_dset_close(o->t_sensor);
    for (int i = 0; i < 3; i++)
        sensim_log_dset_close(o->d[i]);
}

static const char *const quantity[3] = {"angular_velocity", "specific_force", "magnetic_field"};
static const char *const qunits[3] = {"rad/s", "m/s^2", "T"};

/* The output datasets of about `expect` rows (sized chunks: a long log is
 * then read in parallel by allan and fit). */
static sensim_status outsets_open(outsets *o, const sensim_sensor *s, const imu_model *m, sensim_log *out, int times,
                                  size_t expect)
{
    char path[SENSIM_NAME_MAX + 64];
    size_t three = 3;
    memset(o, 0, sizeof *o);
#define MK(field, dname, units)                                                                         \
    snprintf(path, sizeof path, "/sensors/%s/%s", s->name, dname);                                     \
    if (!(o->field = sensim_log_dset_create_sized(out, path, SENSIM_F64, 0, NULL, units, 0, expect)))  \
        return sensim_last_status();
    MK(t, "t", "s")
    if (times) {
        MK(t_sample, "t_sample", "s")
        MK(t_sensor, "t_sensor", "s")
    }
#undef MK
    for (int i = 0; i < 3; i++)
        if (m->tx[i]) {
            snprintf(path, sizeof path, "/sensors/%s/%s", s->name, quantity[i]);
            if (!(o->d[i] = sensim_log_dset_create_sized(out, path, SENSIM_F64, 1, &three, qunits[i], 0, expect)))
                return sensim_last_status();
        }
    return SENSIM_OK;
}

typedef struct bufs {
    double *t, *tdel, *tsens, *u[3], *f;
} bufs;

static void bufs_free(bufs *b)
{
    SENSIM_FREE_ALL(b->t, b->tdel, b->tsens);
    for (int i = 0; i < 3; i++)
        free(b->u[i]);
    free(b->f);
}

static sensim_status bufs_alloc(bufs *b, size_t n)
{
    memset(b, 0, sizeof *b);
    b->t = malloc(n * sizeof(double));
    b->tdel = malloc(n * sizeof(double));
    b->tsens = malloc(n * sizeof(double));
    b->f = malloc(3 * n * sizeof(double));
    int ok = b->t && b->tdel && b->tsens && b->f;
    for (int i = 0; i < 3; i++)
        ok = ok && (b->u[i] = malloc(3 * n * sizeof(double)));
    if (!ok) {
        bufs_free(b);
        return sensim_error(SENSIM_ENOMEM, "out of memory for blocks of %zu samples", n);
    }
    return SENSIM_OK;
}

/* The run's pipelines: the rig's blocks keyed by the run's seed (the
 * rig's or inject's --seed) and the sensor's id (sensim_triax_create). The
 * models made at load only validate. */
typedef struct run_models {
    sensim_triax *tx[3];
    sensim_triax_state st[3];
} run_models;

static void run_free(run_models *r)
{
    for (int i = 0; i < 3; i++)
        sensim_triax_destroy(r->tx[i]);
}

static sensim_status run_start(run_models *r, const sensim_sensor *s, const imu_model *m, uint64_t seed)
{
    memset(r, 0, sizeof *r);
    for (int i = 0; i < 3; i++) {
        if (!m->tx[i])
            continue;
        if (!(r->tx[i] = sensim_triax_create(sensim_triax_params_of(m->tx[i]), (sensim_instrument)i, s->rate_hz, seed,
                                             s->id, s->name))) {
            run_free(r);
            return sensim_last_status();
        }
        sensim_triax_reset(r->tx[i], &r->st[i]);
    }
    return SENSIM_OK;
}

/* Runs the triaxial pipelines over a block, all (instrument, axis) pairs in
 * one parallel loop (an axis's draws depend only on its sample index, so the
 * thread count cannot change the result). */
static void apply_block(run_models *r, bufs *b, size_t n)
{
    const sensim_triax *tx[3];
    sensim_triax_state *sp[3];
    const double *u[3], *f[3];
    double *y[3];
    int c = 0;
    for (int i = 0; i < 3; i++)
        if (r->tx[i]) {
            tx[c] = r->tx[i];
            sp[c] = &r->st[i];
            u[c] = b->u[i];
            f[c] = i == SENSIM_GYRO ? b->f : NULL;
            y[c++] = b->u[i];
        }
    sensim_triax_apply_set(c, tx, sp, n, b->t, u, f, y);
}

static sensim_status imu_simulate(const sensim_sensor *s, const sensim_inject_opts *o, const sensim_log *in,
                                  sensim_log *out)
{
    const imu_model *m = s->model;
    size_t B = o->block ? o->block : DEFAULT_BLOCK;
    sensim_gt_cursor *cur = sensim_gt_cursor_create(in, DEFAULT_BLOCK);
    if (!cur)
        return sensim_last_status();
    sensim_geo_enu frame;
    outsets os;
    bufs b;
    run_models run = {{NULL, NULL, NULL}, {{0}}};
    sensim_status st = sensim_geo_enu_init(&frame, sensim_gt_cursor_origin(cur));
    if (st) {
        sensim_gt_cursor_destroy(cur);
        return st;
    }
    if ((st = bufs_alloc(&b, B))) {
        sensim_gt_cursor_destroy(cur);
        return st;
    }
    const double span = sensim_gt_cursor_t_last(cur) - sensim_gt_cursor_t_first(cur);
    if ((st = outsets_open(&os, s, m, out, 1, span > 0 && span * s->rate_hz < 1e12 ? (size_t)(span * s->rate_hz) : 0)))
        goto done;
    if ((st = run_start(&run, s, m, o->seed)))
        goto done;
    sensim_sampler sp;
    sensim_sampler_init(&sp, s, o->seed, sensim_gt_cursor_t_first(cur), sensim_gt_cursor_t_last(cur));
    const int M = sp.points;
    for (;;) {
        size_t n = 0;
        sensim_sample smp;
        for (; n < B && sensim_sampler_next(&sp, &smp); n++) {
            double w[3] = {0, 0, 0}, f[3] = {0, 0, 0}, mg[3] = {0, 0, 0};
            /* Collection window: the mean over [t - W, t]. */
            for (int j = 0; j < M; j++) {
                sensim_gt_state g;
                double wj[3], fj[3], mj[3];
                if ((st = sensim_gt_cursor_at(cur, sensim_sampler_window_time(&sp, smp.t, j), &g)))
                    goto done;
                truth(s, m, &frame, &g, wj, fj, mj);
                for (int a = 0; a < 3; a++) {
                    w[a] += wj[a] / M;
                    f[a] += fj[a] / M;
                    mg[a] += m->tx[SENSIM_MAG] ? mj[a] / M : 0;
                }
            }
            b.t[n] = smp.t;
            memcpy(b.u[0] + 3 * n, w, sizeof w);
            memcpy(b.u[1] + 3 * n, f, sizeof f);
            memcpy(b.f + 3 * n, f, sizeof f);
            memcpy(b.u[2] + 3 * n, mg, sizeof mg);
            b.tsens[n] = smp.t_sensor;
            b.tdel[n] = smp.t_delivery;
        }
        if (n == 0)
            break;
        apply_block(&run, &b, n);
        if ((st = sensim_log_dset_append(os.t, b.tdel, n)) || (st = sensim_log_dset_append(os.t_sample, b.t, n)) ||
            (st = sensim_log_dset_append(os.t_sensor, b.tsens, n)))
            goto done;
        for (int i = 0; i < 3; i++)
            if (m->tx[i] && (st = sensim_log_dset_append(os.d[i], b.u[i], n)))
                goto done;
        if (n < B)
            break;
    }
    if (sp.k == 0)
        st = sensim_sampler_no_sample_error(&sp, in);
done:
    run_free(&run);
    outsets_close(&os);
    bufs_free(&b);
    sensim_gt_cursor_destroy(cur);
    return st;
}

/* Recorded clean data: /sensors/<name>/t and the instruments' datasets, in
 * the sensor frame already; noise uses the recorded sample times. */
static sensim_status imu_noise_clean(const sensim_sensor *s, const sensim_inject_opts *o, const sensim_log *in,
                                     sensim_log *out)
{
    const imu_model *m = s->model;
    char path[SENSIM_NAME_MAX + 64];
    size_t n_t, three = 3;
    snprintf(path, sizeof path, "/sensors/%s/t", s->name);
    sensim_status st = sensim_log_check_time(in, path, &n_t);
    if (st)
        return st;
    /* rate_hz sets the white-noise deviation and the processes' steps, so
     * it must be the recorded rate: the mean over the log within 1%
     * (recorded stamps may jitter; the mean of a steady rate is exact). */
    if (n_t >= 2) {
        double t0, t1;
        if ((st = sensim_log_read_f64(in, path, 0, 1, &t0)) || (st = sensim_log_read_f64(in, path, n_t - 1, 1, &t1)))
            return st;
        double rate = (double)(n_t - 1) / (t1 - t0);
        if (!(fabs(rate - s->rate_hz) <= 0.01 * s->rate_hz)) {
            const sensim_ynode *rn = sensim_ynode_get(s->node, "rate_hz");
            return sensim_error(SENSIM_EDATA,
                                "%s: %s: recorded at %.6g Hz (mean over %zu samples) but %s:%d: key 'rate_hz' is "
                                "%g Hz; set rate_hz to the recorded rate",
                                sensim_log_path(in), path, rate, n_t, sensim_ynode_file(rn ? rn : s->node),
                                sensim_ynode_line(rn ? rn : s->node), s->rate_hz);
        }
    }
    for (int i = 0; i < 3; i++) {
        if (!m->tx[i])
            continue;
        size_t rows;
        snprintf(path, sizeof path, "/sensors/%s/%s", s->name, quantity[i]);
        if ((st = sensim_log_check_shape(in, path, 1, &three, &rows)))
            return st;
        if (rows != n_t)
            return sensim_error(SENSIM_EFORMAT, "%s: %s has %zu rows but its t has %zu", sensim_log_path(in), path,
                                rows, n_t);
    }
    size_t B = o->block ? o->block : DEFAULT_BLOCK;
    bufs b;
    outsets os;
    run_models run = {{NULL, NULL, NULL}, {{0}}};
    if ((st = bufs_alloc(&b, B)))
        return st;
    if ((st = outsets_open(&os, s, m, out, 0, n_t)))
        goto done;
    if ((st = run_start(&run, s, m, o->seed)))
        goto done;
    for (size_t r0 = 0; r0 < n_t; r0 += B) {
        size_t n = n_t - r0 < B ? n_t - r0 : B;
        snprintf(path, sizeof path, "/sensors/%s/t", s->name);
        if ((st = sensim_log_read_f64(in, path, r0, n, b.t)))
            goto done;
        for (int i = 0; i < 3; i++) {
            if (!m->tx[i])
                continue;
            snprintf(path, sizeof path, "/sensors/%s/%s", s->name, quantity[i]);
            if ((st = sensim_log_read_f64(in, path, r0, n, b.u[i])))
                goto done;
            for (size_t j = 0; j < 3 * n; j++)
                if (!isfinite(b.u[i][j])) {
                    st = sensim_error(SENSIM_EDATA, "%s: %s: value at row %zu is not finite", sensim_log_path(in),
                                      path, r0 + j / 3);
                    goto done;
                }
        }
        if (m->tx[SENSIM_ACCEL])
            memcpy(b.f, b.u[SENSIM_ACCEL], 3 * n * sizeof(double));
        else
            memset(b.f, 0, 3 * n * sizeof(double));
        apply_block(&run, &b, n);
        if ((st = sensim_log_dset_append(os.t, b.t, n)))
            goto done;
        for (int i = 0; i < 3; i++)
            if (m->tx[i] && (st = sensim_log_dset_append(os.d[i], b.u[i], n)))
                goto done;
    }
done:
    run_free(&run);
    outsets_close(&os);
    bufs_free(&b);
    return st;
}

const sensim_sensor_type sensim_imu_type = {
    "imu", imu_keys, imu_create, imu_destroy, imu_simulate, imu_noise_clean,
    8.0 * (3 + 9), /* t, t_sample, t_sensor, up to 3 vectors */
};

const sensim_triax *sensim_imu_sensor_triax(const struct sensim_sensor *s, sensim_instrument kind)
{
    if (!s || s->type != &sensim_imu_type || !s->model || (int)kind < 0 || (int)kind > 2)
        return NULL;
    const imu_model *m = s->model;
    return m->tx[kind];
}
