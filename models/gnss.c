/* GNSS receiver model (see sensim/gnss.h and MODELS.md "GNSS").
 *
 * Sources: Chrono::Sensor ChNoiseNormal (Ch:Gauss) and
 * ChNoiseRandomWalks::AddNoise (Ch:RW), as described in seed 004's appendix
 * and Caldararu et al., TR-2022-02; AirSim GpsSimple (EPH/EPV first-order
 * low-pass and fix type); ROS nmea_navsat_driver (covariance from HDOP and
 * the estimated position error per fix quality). Positions are converted
 * on the WGS84 ellipsoid by sensim/geodesy.h. */
#include "sensim/gnss.h"

#include "sensim/geodesy.h"
#include "../lib/base_internal.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Random streams, one per effect and axis (sensim/rng.h). */
enum {
    STREAM_GAUSS = 0,          /* +axis, indexed by epoch */
    STREAM_RW = 3,             /* +axis, indexed by inner step */
    STREAM_GM = 6,             /* +axis, indexed by epoch */
    STREAM_VEL = 9,            /* +axis, indexed by epoch */
    STREAM_OUTLIER_HIT = 12,   /* indexed by epoch */
    STREAM_OUTLIER_Z = 13,
    STREAM_OUTLIER_AZ = 14,
    STREAM_OUTAGE_GAP = 15,    /* indexed by outage number */
    STREAM_OUTAGE_LEN = 16,
    STREAM_FIX_NOISE = 17,     /* +axis, indexed by epoch */
    STREAM_RTK_FIXED = 20,     /* indexed by float period */
    STREAM_RTK_FLOAT = 21,
    STREAM_MP_GAP = 22,        /* indexed by burst */
    STREAM_MP_LEN = 23,
    STREAM_MP_BIAS = 24        /* +axis, indexed by burst */
};

struct sensim_gnss {
    sensim_gnss_params p;
    uint64_t seed;        /* with sensor_id, the key of every stream */
    uint32_t sensor_id;
    sensim_geo_enu frame; /* ENU at origin_lla on the WGS84 ellipsoid */
};

sensim_gnss_params sensim_gnss_default_params(void)
{
    sensim_gnss_params p;
    memset(&p, 0, sizeof p);
    p.rw_model_rate_hz = 100.0;
    p.rw_max_velocity = 0.03;      /* ChNoiseRandomWalks default constructor */
    p.rw_max_acceleration = 0.005;
    p.rw_max_error = 1.0;          /* maxD, hard-coded to 1 m in Chrono */
    for (int a = 0; a < 3; a++)
        p.gm_tau[a] = 1.0;
    p.eph_initial = p.epv_initial = 100.0; /* AirSim GpsSimpleParams */
    p.eph_final = p.epv_final = 0.1;
    p.eph_tau = p.epv_tau = 0.9;
    p.fix_3d_max = 3.0;
    p.fix_2d_max = 4.0;
    p.cov_model = SENSIM_GNSS_COV_NONE;
    p.cov_epe = 4.0;    /* nmea_navsat_driver, GPS quality 1 */
    p.cov_scale = 0.02; /* seed 004 */
    return p;
}

static sensim_status check_nonneg(const char *what, double v)
{
    if (!(v >= 0.0) || !isfinite(v))
        return sensim_error(SENSIM_EINVAL, "gnss: %s must be finite and >= 0, got %g", what, v);
    return SENSIM_OK;
}

static sensim_status check_pos(const char *what, double v)
{
    if (!(v > 0.0) || !isfinite(v))
        return sensim_error(SENSIM_EINVAL, "gnss: %s must be finite and > 0, got %g", what, v);
    return SENSIM_OK;
}

static sensim_status check_prob(const char *what, double v)
{
    if (!(v >= 0.0 && v <= 1.0))
        return sensim_error(SENSIM_EINVAL, "gnss: %s must be in [0, 1], got %g", what, v);
    return SENSIM_OK;
}

static sensim_status validate(const sensim_gnss_params *p)
{
    if (!p)
        return sensim_error(SENSIM_EINVAL, "gnss: no parameters");
    if (!(fabs(p->origin_lla[0]) <= 90.0) || !isfinite(p->origin_lla[1]) || !isfinite(p->origin_lla[2]))
        return sensim_error(SENSIM_EINVAL, "gnss: origin_lla must be [lat in -90..90 deg, lon deg, alt m], got [%g, %g, %g]",
                            p->origin_lla[0], p->origin_lla[1], p->origin_lla[2]);
    if ((int)p->cov_model < SENSIM_GNSS_COV_NONE || (int)p->cov_model > SENSIM_GNSS_COV_NOISE)
        return sensim_error(SENSIM_EINVAL, "gnss: unknown covariance model %d", (int)p->cov_model);
    if (p->n_outage_windows > SENSIM_GNSS_MAX_OUTAGES)
        return sensim_error(SENSIM_EINVAL, "gnss: at most %d outage windows, got %zu", SENSIM_GNSS_MAX_OUTAGES,
                            p->n_outage_windows);
    for (size_t i = 0; i < p->n_outage_windows; i++)
        if (!isfinite(p->outage_windows[i][0]) || !isfinite(p->outage_windows[i][1]) ||
            !(p->outage_windows[i][1] > p->outage_windows[i][0]))
            return sensim_error(SENSIM_EINVAL,
                                "gnss: outage window %zu must be [start, end] with end > start, got [%g, %g]", i,
                                p->outage_windows[i][0], p->outage_windows[i][1]);
    /* The numbers in the order checked: n from v, each passed to check;
     * those of a model (ANY: of none) only while the model is on. */
    enum { ANY = 0, GM = 1, RW = 2, DOP = 4, RTK = 8 };
    const unsigned on = (p->gm_on ? GM : 0) | (p->rw_on ? RW : 0) | (p->hdop_on ? DOP : 0) | (p->rtk_on ? RTK : 0);
    const struct {
        const char *what;
        const double *v;
        size_t n;
        sensim_status (*check)(const char *what, double v);
        unsigned model;
    } all[] = {{"start_delay", &p->start_delay, 1, check_nonneg, ANY},
               {"latency", &p->latency, 1, check_nonneg, ANY},
               {"gaussian sigma", p->gauss_sigma, 3, check_nonneg, ANY},
               {"gauss_markov sigma", p->gm_sigma, 3, check_nonneg, ANY},
               {"gauss_markov tau", p->gm_tau, 3, check_pos, GM},
               {"velocity sigma", p->vel_sigma, 3, check_nonneg, ANY},
               {"chrono_random_walk sigma", &p->rw_sigma, 1, check_nonneg, RW},
               {"chrono_random_walk model_rate_hz", &p->rw_model_rate_hz, 1, check_pos, RW},
               {"chrono_random_walk max_velocity", &p->rw_max_velocity, 1, check_nonneg, RW},
               {"chrono_random_walk max_acceleration", &p->rw_max_acceleration, 1, check_nonneg, RW},
               {"chrono_random_walk max_error", &p->rw_max_error, 1, check_pos, RW},
               {"hdop initial", &p->eph_initial, 1, check_nonneg, DOP},
               {"hdop final", &p->eph_final, 1, check_nonneg, DOP},
               {"hdop tau", &p->eph_tau, 1, check_pos, DOP},
               {"vdop initial", &p->epv_initial, 1, check_nonneg, DOP},
               {"vdop final", &p->epv_final, 1, check_nonneg, DOP},
               {"vdop tau", &p->epv_tau, 1, check_pos, DOP},
               {"hdop fix_3d_max", &p->fix_3d_max, 1, check_nonneg, DOP},
               {"hdop fix_2d_max", &p->fix_2d_max, 1, check_nonneg, DOP},
               {"covariance epe", &p->cov_epe, 1, check_nonneg, ANY},
               {"covariance scale", &p->cov_scale, 1, check_nonneg, ANY},
               {"outage rate", &p->outage_rate, 1, check_nonneg, ANY},
               {"outage mean_duration", &p->outage_mean_duration, 1, check_nonneg, ANY},
               {"outlier probability", &p->outlier_probability, 1, check_prob, ANY},
               {"outlier magnitude", &p->outlier_magnitude, 1, check_nonneg, ANY},
               {"fix_noise sigma", &p->fix_sigma[0][0], 3 * SENSIM_GNSS_FIX_TYPES, check_nonneg, ANY},
               {"rtk mean_fixed", &p->rtk_mean_fixed, 1, check_pos, RTK},
               {"rtk mean_float", &p->rtk_mean_float, 1, check_pos, RTK},
               {"multipath rate", &p->multipath_rate, 1, check_nonneg, ANY},
               {"multipath mean_duration", &p->multipath_mean_duration, 1, check_nonneg, ANY},
               {"multipath sigma", p->multipath_sigma, 3, check_nonneg, ANY}};
    for (size_t i = 0; i < sizeof all / sizeof *all; i++) {
        if (all[i].model & ~on)
            continue;
        for (size_t k = 0; k < all[i].n; k++)
            SENSIM_TRY(all[i].check(all[i].what, all[i].v[k]));
    }
    if ((p->multipath_rate > 0.0) != (p->multipath_mean_duration > 0.0))
        return sensim_error(SENSIM_EINVAL, "gnss: multipath needs both rate and mean_duration > 0 (got %g, %g)",
                            p->multipath_rate, p->multipath_mean_duration);
    return SENSIM_OK;
}

sensim_gnss *sensim_gnss_create(const sensim_gnss_params *p, uint64_t seed, uint32_t sensor_id)
{
    sensim_geo_enu frame;
    if (validate(p) != SENSIM_OK)
        return NULL;
    if (sensim_geo_enu_init(&frame, p->origin_lla) != SENSIM_OK) {
        sensim_error_prefix(SENSIM_EINVAL, "gnss: origin_lla");
        return NULL;
    }
    sensim_gnss *g = sensim_new_(sizeof *g, "gnss");
    if (g)
        *g = (sensim_gnss){*p, seed, sensor_id, frame};
    return g;
}

void sensim_gnss_destroy(sensim_gnss *g) { free(g); }

const sensim_gnss_params *sensim_gnss_params_of(const sensim_gnss *g) { return &g->p; }

/* Exponential with the given mean from a uniform on (0, 1). */
static double draw_exp(const sensim_rng *r, uint32_t stream, uint64_t j, double mean)
{
    sensim_rng s = *r;
    s.stream = stream;
    return -mean * log(sensim_rng_uniform(&s, j));
}

/* A random telegraph (outages, RTK float periods, multipath bursts): the
 * next "on" period after `from` starts an Exp(mean_gap) time later and
 * lasts Exp(mean_len); period j's draws are index j of the two streams. */
static void telegraph_next(const sensim_rng *r, uint32_t gap_stream, uint32_t len_stream, uint64_t *j, double from,
                           double mean_gap, double mean_len, double *start, double *end)
{
    *start = from + draw_exp(r, gap_stream, *j, mean_gap);
    *end = *start + draw_exp(r, len_stream, *j, mean_len);
    (*j)++;
}

/* Whether t (non-decreasing over calls) is inside an "on" period,
 * advancing past the periods that ended. */
static int telegraph_on(const sensim_rng *r, uint32_t gap_stream, uint32_t len_stream, uint64_t *j, double mean_gap,
                        double mean_len, double *start, double *end, double t)
{
    while (t >= *end)
        telegraph_next(r, gap_stream, len_stream, j, *end, mean_gap, mean_len, start, end);
    return t >= *start;
}

static void next_outage(const sensim_gnss_params *p, sensim_gnss_state *st, double from)
{
    telegraph_next(&st->rng, STREAM_OUTAGE_GAP, STREAM_OUTAGE_LEN, &st->outage_j, from, 1.0 / p->outage_rate,
                   p->outage_mean_duration, &st->outage_start, &st->outage_end);
}

void sensim_gnss_reset(const sensim_gnss *g, sensim_gnss_state *st, double t_on)
{
    memset(st, 0, sizeof *st);
    st->rng = sensim_rng_make(g->seed, g->sensor_id, 0);
    st->t_on = t_on;
    st->t_prev = t_on;
    st->rw_t = t_on;
    st->outage_start = st->outage_end = INFINITY;
    if (g->p.outage_rate > 0.0 && g->p.outage_mean_duration > 0.0)
        next_outage(&g->p, st, t_on);
    st->rtk_start = st->rtk_end = st->mp_start = st->mp_end = INFINITY;
    if (g->p.rtk_on) {
        /* Float from power-on for Exp(mean_float), then the chain. */
        st->rtk_start = t_on;
        st->rtk_end = t_on + draw_exp(&st->rng, STREAM_RTK_FLOAT, 0, g->p.rtk_mean_float);
        st->rtk_j = 1;
    }
    if (g->p.multipath_rate > 0.0 && g->p.multipath_mean_duration > 0.0)
        telegraph_next(&st->rng, STREAM_MP_GAP, STREAM_MP_LEN, &st->mp_j, t_on, 1.0 / g->p.multipath_rate,
                       g->p.multipath_mean_duration, &st->mp_start, &st->mp_end);
}

static double normal(const sensim_rng *r, uint32_t stream, uint64_t index)
{
    sensim_rng s = *r;
    s.stream = stream;
    return sensim_rng_normal(&s, index);
}

static double uniform(const sensim_rng *r, uint32_t stream, uint64_t index)
{
    sensim_rng s = *r;
    s.stream = stream;
    return sensim_rng_uniform(&s, index);
}

/* Chrono ChNoiseRandomWalks::AddNoise: integrate the error from st->rw_t to
 * t in inner steps of 1/model_rate (the last one shorter). A remainder below
 * 1e-9 of a step is floating-point residue of t and is not a step. */
static void rw_advance(const sensim_gnss_params *p, sensim_gnss_state *st, double t)
{
    const double h = 1.0 / p->rw_model_rate_hz;
    double remaining = t - st->rw_t;
    while (remaining > 1e-9 * h) {
        double step = remaining < h ? remaining : h;
        double a[3];
        for (int ax = 0; ax < 3; ax++) {
            /* Mean -0.2 sigma e / D pulls the error back to the truth. */
            double mean = -0.2 * p->rw_sigma * st->rw_e[ax] / p->rw_max_error;
            a[ax] = mean + p->rw_sigma * normal(&st->rng, STREAM_RW + ax, st->rw_steps);
            if (a[ax] > p->rw_max_acceleration)
                a[ax] = p->rw_max_acceleration;
            if (a[ax] < -p->rw_max_acceleration)
                a[ax] = -p->rw_max_acceleration;
            st->rw_v[ax] += a[ax] * step;
        }
        double vn = sqrt(st->rw_v[0] * st->rw_v[0] + st->rw_v[1] * st->rw_v[1] + st->rw_v[2] * st->rw_v[2]);
        if (vn > p->rw_max_velocity)
            for (int ax = 0; ax < 3; ax++)
                st->rw_v[ax] *= p->rw_max_velocity / vn;
        for (int ax = 0; ax < 3; ax++)
            st->rw_e[ax] += st->rw_v[ax] * step;
        st->rw_steps++;
        remaining -= step;
    }
    st->rw_t = t;
}

static int in_outage(const sensim_gnss_params *p, sensim_gnss_state *st, double t)
{
    for (size_t i = 0; i < p->n_outage_windows; i++)
        if (t >= p->outage_windows[i][0] && t < p->outage_windows[i][1])
            return 1;
    if (p->outage_rate > 0.0 && p->outage_mean_duration > 0.0 &&
        telegraph_on(&st->rng, STREAM_OUTAGE_GAP, STREAM_OUTAGE_LEN, &st->outage_j, 1.0 / p->outage_rate,
                     p->outage_mean_duration, &st->outage_start, &st->outage_end, t))
        return 1;
    return 0;
}

size_t sensim_gnss_apply(const sensim_gnss *g, sensim_gnss_state *st, size_t n, const double *t,
                         const double *position, const double *velocity, const sensim_gnss_out *out)
{
    const sensim_gnss_params *p = &g->p;
    size_t m = 0;
    for (size_t i = 0; i < n; i++) {
        const double ti = t[i];
        const uint64_t k = st->k++;
        const double dt = ti - st->t_prev;
        st->t_prev = ti;
        /* Processes with memory advance at every epoch, delivered or not. */
        if (p->gm_on) {
            for (int ax = 0; ax < 3; ax++) {
                double w = normal(&st->rng, STREAM_GM + ax, k);
                if (k == 0) {
                    st->gm_e[ax] = p->gm_sigma[ax] * w; /* stationary start */
                } else {
                    double phi = exp(-dt / p->gm_tau[ax]);
                    st->gm_e[ax] = phi * st->gm_e[ax] + p->gm_sigma[ax] * sqrt(-expm1(-2.0 * dt / p->gm_tau[ax])) * w;
                }
            }
        }
        if (p->rw_on)
            rw_advance(p, st, ti);
        const int rtk_float = p->rtk_on && telegraph_on(&st->rng, STREAM_RTK_FIXED, STREAM_RTK_FLOAT, &st->rtk_j,
                                                        p->rtk_mean_fixed, p->rtk_mean_float, &st->rtk_start,
                                                        &st->rtk_end, ti);
        const int burst = p->multipath_rate > 0.0 && p->multipath_mean_duration > 0.0 &&
                          telegraph_on(&st->rng, STREAM_MP_GAP, STREAM_MP_LEN, &st->mp_j, 1.0 / p->multipath_rate,
                                       p->multipath_mean_duration, &st->mp_start, &st->mp_end, ti);
        int dark = in_outage(p, st, ti);
        if (ti < st->t_on + p->start_delay || dark)
            continue;

        /* AirSim's low-pass started at power-on: the product of the
         * alpha = exp(-dt/tau) factors telescopes to exp(-(t - t_on)/tau),
         * written in closed form so it does not depend on epoch spacing. */
        double eph = 0.0, epv = 0.0;
        int8_t fix = SENSIM_GNSS_FIX_3D;
        if (p->hdop_on) {
            eph = p->eph_final + (p->eph_initial - p->eph_final) * exp(-(ti - st->t_on) / p->eph_tau);
            epv = p->epv_final + (p->epv_initial - p->epv_final) * exp(-(ti - st->t_on) / p->epv_tau);
            fix = eph <= p->fix_3d_max ? SENSIM_GNSS_FIX_3D
                : eph <= p->fix_2d_max ? SENSIM_GNSS_FIX_2D
                                       : SENSIM_GNSS_FIX_NONE;
        }
        if (p->rtk_on && fix == SENSIM_GNSS_FIX_3D)
            fix = rtk_float ? SENSIM_GNSS_FIX_RTK_FLOAT : SENSIM_GNSS_FIX_RTK_FIXED;

        double e[3] = {0, 0, 0};
        for (int ax = 0; ax < 3; ax++) {
            if (p->gauss_on)
                e[ax] += p->gauss_sigma[ax] * normal(&st->rng, STREAM_GAUSS + ax, k);
            if (p->fix_noise_on && p->fix_sigma[fix][ax] > 0.0)
                e[ax] += p->fix_sigma[fix][ax] * normal(&st->rng, STREAM_FIX_NOISE + ax, k);
            /* Burst j (drawn as j = mp_j - 1) keeps one bias throughout. */
            if (burst)
                e[ax] += p->multipath_sigma[ax] * normal(&st->rng, STREAM_MP_BIAS + ax, st->mp_j - 1);
            if (p->gm_on)
                e[ax] += st->gm_e[ax];
            if (p->rw_on)
                e[ax] += st->rw_e[ax];
        }
        if (p->outlier_probability > 0.0 && uniform(&st->rng, STREAM_OUTLIER_HIT, k) < p->outlier_probability) {
            /* A jump of fixed length in a direction uniform on the sphere. */
            double z = 2.0 * uniform(&st->rng, STREAM_OUTLIER_Z, k) - 1.0;
            double az = 2.0 * M_PI * uniform(&st->rng, STREAM_OUTLIER_AZ, k);
            double r = sqrt(fmax(0.0, 1.0 - z * z));
            e[0] += p->outlier_magnitude * r * cos(az);
            e[1] += p->outlier_magnitude * r * sin(az);
            e[2] += p->outlier_magnitude * z;
        }
        double enu[3];
        for (int ax = 0; ax < 3; ax++)
            enu[ax] = position[3 * i + ax] + e[ax];

        if (out->t)
            out->t[m] = ti + p->latency;
        if (out->t_sample)
            out->t_sample[m] = ti;
        if (out->epoch)
            out->epoch[m] = k;
        if (out->enu)
            memcpy(out->enu + 3 * m, enu, sizeof enu);
        if (out->lla)
            sensim_geo_enu_to_lla(&g->frame, enu, out->lla + 3 * m);
        if (out->velocity)
            for (int ax = 0; ax < 3; ax++)
                out->velocity[3 * m + ax] = (velocity ? velocity[3 * i + ax] : 0.0) +
                                            (p->vel_sigma[ax] > 0.0
                                                 ? p->vel_sigma[ax] * normal(&st->rng, STREAM_VEL + ax, k)
                                                 : 0.0);
        if (out->hdop)
            out->hdop[m] = eph;
        if (out->fix)
            out->fix[m] = fix;
        if (out->covariance) {
            double *c = out->covariance + 9 * m, d[3] = {0, 0, 0};
            switch (p->cov_model) {
            case SENSIM_GNSS_COV_NMEA: {
                /* nmea_navsat_driver (ros-drivers/nmea_navsat_driver,
                 * src/libnmea_navsat_driver/driver.py, add_sentence): the
                 * default epe of each GGA sentence's own fix quality, lon/lat
                 * std = hdop * epe, alt std = 2 * hdop * (2 * epe). An epoch
                 * without a fix is quality 0 (epe_quality0 = 1e6), RTK fixed
                 * 4 (0.02) and float 5 (4.0); a 2D or 3D fix takes the
                 * quality the receiver reports for its ordinary fixes (the
                 * rig's `quality` or `epe`, GPS 1 = 4.0 by default). */
                const double epe = fix == SENSIM_GNSS_FIX_NONE        ? 1000000.0
                                   : fix == SENSIM_GNSS_FIX_RTK_FIXED ? 0.02
                                   : fix == SENSIM_GNSS_FIX_RTK_FLOAT ? 4.0
                                                                      : p->cov_epe;
                d[0] = d[1] = (eph * epe) * (eph * epe);
                d[2] = (2.0 * eph * (epe * 2.0)) * (2.0 * eph * (epe * 2.0));
                break;
            }
            case SENSIM_GNSS_COV_SCALED:
                d[0] = d[1] = (p->cov_scale * eph) * (p->cov_scale * eph);
                d[2] = (p->cov_scale * epv) * (p->cov_scale * epv);
                break;
            case SENSIM_GNSS_COV_NOISE:
                for (int ax = 0; ax < 3; ax++)
                    d[ax] = (p->gauss_on ? p->gauss_sigma[ax] * p->gauss_sigma[ax] : 0.0) +
                            (p->gm_on ? p->gm_sigma[ax] * p->gm_sigma[ax] : 0.0) +
                            (p->fix_noise_on ? p->fix_sigma[fix][ax] * p->fix_sigma[fix][ax] : 0.0);
                break;
            case SENSIM_GNSS_COV_NONE:
                break;
            }
            memset(c, 0, 9 * sizeof *c);
            c[0] = d[0];
            c[4] = d[1];
            c[8] = d[2];
        }
        m++;
    }
    return m;
}

void sensim_gnss_print(const sensim_gnss *g, FILE *f)
{
    const sensim_gnss_params *p = &g->p;
    fprintf(f, "gnss: origin %.9g deg, %.9g deg, %.6g m\n", p->origin_lla[0], p->origin_lla[1], p->origin_lla[2]);
    if (p->gauss_on)
        fprintf(f, "  gaussian sigma %g, %g, %g m\n", p->gauss_sigma[0], p->gauss_sigma[1], p->gauss_sigma[2]);
    if (p->rw_on)
        fprintf(f, "  chrono random walk sigma %g m/s^2 at %g Hz, v_max %g m/s, a_max %g m/s^2, D %g m\n", p->rw_sigma,
                p->rw_model_rate_hz, p->rw_max_velocity, p->rw_max_acceleration, p->rw_max_error);
    if (p->gm_on)
        fprintf(f, "  gauss-markov sigma %g, %g, %g m, tau %g, %g, %g s\n", p->gm_sigma[0], p->gm_sigma[1],
                p->gm_sigma[2], p->gm_tau[0], p->gm_tau[1], p->gm_tau[2]);
    if (p->hdop_on)
        fprintf(f, "  eph %g -> %g (tau %g s), epv %g -> %g (tau %g s), 3D fix <= %g, 2D fix <= %g\n", p->eph_initial,
                p->eph_final, p->eph_tau, p->epv_initial, p->epv_final, p->epv_tau, p->fix_3d_max, p->fix_2d_max);
    static const char *const cov[] = {"none", "nmea", "scaled", "noise"};
    fprintf(f, "  covariance %s (epe %g m, scale %g)\n", cov[p->cov_model], p->cov_epe, p->cov_scale);
    fprintf(f, "  velocity sigma %g, %g, %g m/s\n", p->vel_sigma[0], p->vel_sigma[1], p->vel_sigma[2]);
    if (p->n_outage_windows || p->outage_rate > 0)
        fprintf(f, "  outages: %zu windows, rate %g /s of mean %g s\n", p->n_outage_windows, p->outage_rate,
                p->outage_mean_duration);
    if (p->outlier_probability > 0)
        fprintf(f, "  outliers: probability %g, magnitude %g m\n", p->outlier_probability, p->outlier_magnitude);
    if (p->rtk_on)
        fprintf(f, "  rtk: mean fixed %g s, mean float %g s\n", p->rtk_mean_fixed, p->rtk_mean_float);
    if (p->multipath_rate > 0)
        fprintf(f, "  multipath: rate %g /s, mean %g s, sigma %g, %g, %g m\n", p->multipath_rate,
                p->multipath_mean_duration, p->multipath_sigma[0], p->multipath_sigma[1], p->multipath_sigma[2]);
}
