/* The "gnss" rig sensor type: ground truth -> sensim_gnss -> HDF5
 * (DESIGN.md /sensors/<name>/ for gnss). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sensim/gnss.h"
#include "sensim/gt.h"
#include "sensim/rig.h"
#include "model_yaml.h"

/* ---- rig YAML (keys documented in sensim-inject(1)) ---- */

static const char *const gnss_sensor_keys[] = {"name", "type", "rate_hz", "mount", "timing", "origin_lla",
                                               "origin_override", "position_noise", "hdop", "vdop", "covariance", "velocity_noise",
                                               "outages", "outliers", "fix_noise", "rtk", "multipath", NULL};
/* covariance: model, as SENSIM_GNSS_COV_* counts */
static const char *const cov_models[] = {"none", "nmea", "scaled", "noise"};

static sensim_status parse_noise_item(const sensim_ynode *m, sensim_gnss_params *p, int *seen)
{
    const char *model = NULL;
    if (sensim_ynode_kind_of(m) != SENSIM_YNODE_MAPPING)
        return sensim_ynode_error(m, SENSIM_EINVAL, "key 'position_noise': expected a mapping with 'model'");
    SENSIM_TRY(sensim_ynode_get_string(m, "model", 1, &model));
    if (!strcmp(model, "gaussian")) {
        static const char *const k[] = {"model", "sigma", NULL};
        SENSIM_TRY(sensim_ynode_check_keys(m, "position_noise (gaussian)", k));
        SENSIM_TRY(my_get_axes(m, "sigma", SENSIM_DIM_LENGTH, 1, 0, p->gauss_sigma));
        p->gauss_on = 1;
        seen[0]++;
    } else if (!strcmp(model, "chrono_random_walk")) {
        static const char *const k[] = {"model", "sigma", "model_rate_hz", "max_velocity", "max_acceleration",
                                        "max_error", NULL};
        SENSIM_TRY(sensim_ynode_check_keys(m, "position_noise (chrono_random_walk)", k));
        SENSIM_TRY(my_get_bounded(m, "sigma", SENSIM_DIM_ACCEL, 1, 0, &p->rw_sigma));
        SENSIM_TRY(my_get_bounded(m, "model_rate_hz", SENSIM_DIM_FREQUENCY, 0, 1, &p->rw_model_rate_hz));
        SENSIM_TRY(my_get_bounded(m, "max_velocity", SENSIM_DIM_VELOCITY, 0, 0, &p->rw_max_velocity));
        SENSIM_TRY(my_get_bounded(m, "max_acceleration", SENSIM_DIM_ACCEL, 0, 0, &p->rw_max_acceleration));
        SENSIM_TRY(my_get_bounded(m, "max_error", SENSIM_DIM_LENGTH, 0, 1, &p->rw_max_error));
        p->rw_on = 1;
        seen[1]++;
    } else if (!strcmp(model, "gauss_markov")) {
        static const char *const k[] = {"model", "sigma", "tau", NULL};
        SENSIM_TRY(sensim_ynode_check_keys(m, "position_noise (gauss_markov)", k));
        SENSIM_TRY(my_get_axes(m, "sigma", SENSIM_DIM_LENGTH, 1, 0, p->gm_sigma));
        SENSIM_TRY(my_get_axes(m, "tau", SENSIM_DIM_TIME, 1, 1, p->gm_tau));
        p->gm_on = 1;
        seen[2]++;
    } else {
        return sensim_ynode_error(sensim_ynode_get(m, "model"), SENSIM_EINVAL,
                                  "key 'model': unknown position noise model '%s' (expected one of: gaussian, "
                                  "chrono_random_walk, gauss_markov)",
                                  model);
    }
    for (int i = 0; i < 3; i++)
        if (seen[i] > 1)
            return sensim_ynode_error(m, SENSIM_EINVAL, "key 'position_noise': model '%s' given twice", model);
    return SENSIM_OK;
}

static sensim_status parse_dop(const sensim_ynode *map, const char *key, double *ini, double *fin, double *tau,
                               sensim_gnss_params *p)
{
    static const char *const hk[] = {"initial", "final", "tau", "fix_3d_max", "fix_2d_max", NULL};
    static const char *const vk[] = {"initial", "final", "tau", NULL};
    const sensim_ynode *m;
    SENSIM_TRY(my_get_map(map, key, !strcmp(key, "hdop") ? hk : vk, &m));
    if (!m)
        return SENSIM_OK;
    SENSIM_TRY(my_get_bounded(m, "initial", SENSIM_DIM_NONE, 0, 0, ini));
    SENSIM_TRY(my_get_bounded(m, "final", SENSIM_DIM_NONE, 0, 0, fin));
    SENSIM_TRY(my_get_bounded(m, "tau", SENSIM_DIM_TIME, 0, 1, tau));
    if (!strcmp(key, "hdop")) {
        SENSIM_TRY(my_get_bounded(m, "fix_3d_max", SENSIM_DIM_NONE, 0, 0, &p->fix_3d_max));
        SENSIM_TRY(my_get_bounded(m, "fix_2d_max", SENSIM_DIM_NONE, 0, 0, &p->fix_2d_max));
    }
    return SENSIM_OK;
}

sensim_status sensim_gnss_params_from_yaml(const sensim_ynode *map, sensim_gnss_params *p)
{
    SENSIM_TRY(sensim_ynode_check_keys(map, "gnss sensor", gnss_sensor_keys));
    if (sensim_ynode_get(map, "origin_lla")) {
        double o[3];
        SENSIM_TRY(sensim_ynode_get_vector(map, "origin_lla", SENSIM_DIM_NONE, 1, 3, o));
        if (!(fabs(o[0]) <= 90.0) || !isfinite(o[1]) || !isfinite(o[2]))
            return sensim_ynode_error(sensim_ynode_get(map, "origin_lla"), SENSIM_EINVAL,
                                      "key 'origin_lla': expected [lat deg in -90..90, lon deg, alt m], got [%g, %g, %g]",
                                      o[0], o[1], o[2]);
        memcpy(p->origin_lla, o, sizeof o);
    }

    const sensim_ynode *pn = sensim_ynode_get(map, "position_noise");
    if (pn) {
        int seen[3] = {0, 0, 0};
        if (sensim_ynode_kind_of(pn) == SENSIM_YNODE_SEQUENCE) {
            for (size_t i = 0; i < sensim_ynode_size(pn); i++)
                SENSIM_TRY(parse_noise_item(sensim_ynode_item(pn, i), p, seen));
        } else {
            SENSIM_TRY(parse_noise_item(pn, p, seen));
        }
    }

    /* The vertical filter follows the horizontal one unless given. */
    if (sensim_ynode_get(map, "hdop")) {
        p->hdop_on = 1;
        SENSIM_TRY(parse_dop(map, "hdop", &p->eph_initial, &p->eph_final, &p->eph_tau, p));
        p->epv_initial = p->eph_initial, p->epv_final = p->eph_final, p->epv_tau = p->eph_tau;
    }
    if (sensim_ynode_get(map, "vdop")) {
        if (!p->hdop_on)
            return sensim_ynode_error(sensim_ynode_get(map, "vdop"), SENSIM_EINVAL,
                                      "key 'vdop': needs an 'hdop' block");
        SENSIM_TRY(parse_dop(map, "vdop", &p->epv_initial, &p->epv_final, &p->epv_tau, p));
    }

    static const char *const ck[] = {"model", "quality", "epe", "scale", NULL};
    const sensim_ynode *cv;
    SENSIM_TRY(my_get_map(map, "covariance", ck, &cv));
    if (cv) {
        int model = 0;
        SENSIM_TRY(my_get_name(cv, "model", 1, "covariance model", "one of: ", cov_models, 4, &model));
        p->cov_model = (sensim_gnss_cov_model)model;
        if ((p->cov_model == SENSIM_GNSS_COV_NMEA || p->cov_model == SENSIM_GNSS_COV_SCALED) && !p->hdop_on)
            return sensim_ynode_error(cv, SENSIM_EINVAL, "key 'covariance': model '%s' needs an 'hdop' block",
                                      cov_models[model]);
        const char *q = NULL;
        SENSIM_TRY(sensim_ynode_get_string(cv, "quality", 0, &q));
        if (q) {
            /* nmea_navsat_driver's default epe per GGA fix quality. */
            static const struct { const char *name; double epe; } table[] = {
                {"gps", 4.0}, {"dgps", 0.1}, {"rtk_fixed", 0.02}, {"rtk_float", 4.0}, {"waas", 3.0}};
            size_t i = 0;
            while (i < sizeof table / sizeof table[0] && strcmp(q, table[i].name))
                i++;
            if (i == sizeof table / sizeof table[0])
                return sensim_ynode_error(sensim_ynode_get(cv, "quality"), SENSIM_EINVAL,
                                          "key 'quality': unknown fix quality '%s' (expected one of: gps, dgps, "
                                          "rtk_fixed, rtk_float, waas)",
                                          q);
            p->cov_epe = table[i].epe;
        }
        SENSIM_TRY(my_get_bounded(cv, "epe", SENSIM_DIM_LENGTH, 0, 0, &p->cov_epe));
        SENSIM_TRY(my_get_bounded(cv, "scale", SENSIM_DIM_NONE, 0, 0, &p->cov_scale));
    }

    static const char *const vk[] = {"sigma", NULL};
    const sensim_ynode *vn;
    SENSIM_TRY(my_get_map(map, "velocity_noise", vk, &vn));
    if (vn)
        SENSIM_TRY(my_get_axes(vn, "sigma", SENSIM_DIM_VELOCITY, 1, 0, p->vel_sigma));

    static const char *const ok[] = {"windows", "rate", "mean_duration", NULL};
    const sensim_ynode *on;
    SENSIM_TRY(my_get_map(map, "outages", ok, &on));
    if (on) {
        const sensim_ynode *w = sensim_ynode_get(on, "windows");
        if (w) {
            if (sensim_ynode_kind_of(w) != SENSIM_YNODE_SEQUENCE)
                return sensim_ynode_error(w, SENSIM_EINVAL, "key 'windows': expected a list of [start, end] pairs");
            size_t nw = sensim_ynode_size(w);
            if (nw > SENSIM_GNSS_MAX_OUTAGES)
                return sensim_ynode_error(w, SENSIM_EINVAL, "key 'windows': at most %d windows, got %zu",
                                          SENSIM_GNSS_MAX_OUTAGES, nw);
            for (size_t i = 0; i < nw; i++) {
                const sensim_ynode *it = sensim_ynode_item(w, i);
                double se[2];
                if (sensim_ynode_kind_of(it) != SENSIM_YNODE_SEQUENCE || sensim_ynode_size(it) != 2)
                    return sensim_ynode_error(it, SENSIM_EINVAL, "key 'windows': item %zu must be [start, end]", i);
                for (int j = 0; j < 2; j++)
                    SENSIM_TRY(sensim_ynode_as_quantity(sensim_ynode_item(it, (size_t)j), "key 'windows'",
                                                        SENSIM_DIM_TIME, &se[j]));
                if (!(se[1] > se[0]))
                    return sensim_ynode_error(it, SENSIM_EINVAL,
                                              "key 'windows': item %zu must have end > start (got [%g, %g])", i,
                                              se[0], se[1]);
                p->outage_windows[i][0] = se[0], p->outage_windows[i][1] = se[1];
            }
            p->n_outage_windows = nw;
        }
        SENSIM_TRY(my_get_bounded(on, "rate", SENSIM_DIM_FREQUENCY, 0, 0, &p->outage_rate));
        SENSIM_TRY(my_get_bounded(on, "mean_duration", SENSIM_DIM_TIME, 0, 0, &p->outage_mean_duration));
        if ((p->outage_rate > 0.0) != (p->outage_mean_duration > 0.0))
            return sensim_ynode_error(on, SENSIM_EINVAL,
                                      "key 'outages': random outages need both 'rate' and 'mean_duration' > 0");
    }

    static const char *const lk[] = {"probability", "magnitude", NULL};
    const sensim_ynode *ln;
    SENSIM_TRY(my_get_map(map, "outliers", lk, &ln));
    if (ln) {
        SENSIM_TRY(sensim_ynode_get_quantity_range(ln, "probability", SENSIM_DIM_NONE, 1, 0.0, 1.0,
                                            &p->outlier_probability));
        SENSIM_TRY(my_get_bounded(ln, "magnitude", SENSIM_DIM_LENGTH, 1, 0, &p->outlier_magnitude));
    }

    /* Sigma per fix type; a type not listed gets none. */
    static const char *const fk[] = {"none", "2d", "3d", "rtk_fixed", "rtk_float", NULL};
    static const int fcode[] = {SENSIM_GNSS_FIX_NONE, SENSIM_GNSS_FIX_2D, SENSIM_GNSS_FIX_3D,
                                SENSIM_GNSS_FIX_RTK_FIXED, SENSIM_GNSS_FIX_RTK_FLOAT};
    const sensim_ynode *fn;
    SENSIM_TRY(my_get_map(map, "fix_noise", fk, &fn));
    if (fn) {
        p->fix_noise_on = 1;
        for (size_t i = 0; fk[i]; i++)
            SENSIM_TRY(my_get_axes(fn, fk[i], SENSIM_DIM_LENGTH, 0, 0, p->fix_sigma[fcode[i]]));
    }
    static const char *const rk[] = {"mean_fixed", "mean_float", NULL};
    const sensim_ynode *rn;
    SENSIM_TRY(my_get_map(map, "rtk", rk, &rn));
    if (rn) {
        p->rtk_on = 1;
        SENSIM_TRY(my_get_bounded(rn, "mean_fixed", SENSIM_DIM_TIME, 1, 1, &p->rtk_mean_fixed));
        SENSIM_TRY(my_get_bounded(rn, "mean_float", SENSIM_DIM_TIME, 1, 1, &p->rtk_mean_float));
    }
    static const char *const mk[] = {"rate", "mean_duration", "sigma", NULL};
    const sensim_ynode *mn;
    SENSIM_TRY(my_get_map(map, "multipath", mk, &mn));
    if (mn) {
        SENSIM_TRY(my_get_bounded(mn, "rate", SENSIM_DIM_FREQUENCY, 1, 1, &p->multipath_rate));
        SENSIM_TRY(my_get_bounded(mn, "mean_duration", SENSIM_DIM_TIME, 1, 1, &p->multipath_mean_duration));
        SENSIM_TRY(my_get_axes(mn, "sigma", SENSIM_DIM_LENGTH, 1, 0, p->multipath_sigma));
    }
    return SENSIM_OK;
}

/* ---- writing: the keys sensim_gnss_params_from_yaml reads, where they
 * differ from the defaults, in SI ---- */

static void put_num(sensim_ywriter *w, const char *key, double v)
{
    sensim_ywriter_key(w, key);
    sensim_ywriter_number(w, v);
}

static void put_vec(sensim_ywriter *w, const char *key, const double *v, size_t n)
{
    sensim_ywriter_key(w, key);
    sensim_ywriter_numbers(w, v, n);
}

/* Opens the hdop or vdop block with its filter, as parse_dop reads it; the
 * caller adds what else it holds and closes it. */
static void put_dop(sensim_ywriter *w, const char *key, double initial, double final, double tau)
{
    my_block_begin(w, key);
    put_num(w, "initial", initial);
    put_num(w, "final", final);
    put_num(w, "tau", tau);
}

static int vec_zero(const double v[3])
{
    return v[0] == 0 && v[1] == 0 && v[2] == 0;
}

void sensim_gnss_write_yaml(sensim_ywriter *w, const sensim_sensor *s, const sensim_gnss_params *p)
{
    const sensim_gnss_params d = sensim_gnss_default_params();
    sensim_sensor_write_yaml(w, s, "gnss");
    if (!vec_zero(p->origin_lla))
        put_vec(w, "origin_lla", p->origin_lla, 3);
    const int nmodels = p->gauss_on + p->rw_on + p->gm_on;
    if (nmodels) {
        sensim_ywriter_key(w, "position_noise");
        if (nmodels > 1)
            sensim_ywriter_seq_begin(w, 0);
        if (p->gm_on) {
            my_model_begin(w, "gauss_markov");
            put_vec(w, "sigma", p->gm_sigma, 3);
            put_vec(w, "tau", p->gm_tau, 3);
            sensim_ywriter_map_end(w);
        }
        if (p->gauss_on) {
            my_model_begin(w, "gaussian");
            put_vec(w, "sigma", p->gauss_sigma, 3);
            sensim_ywriter_map_end(w);
        }
        if (p->rw_on) {
            my_model_begin(w, "chrono_random_walk");
            put_num(w, "sigma", p->rw_sigma);
            put_num(w, "model_rate_hz", p->rw_model_rate_hz);
            put_num(w, "max_velocity", p->rw_max_velocity);
            put_num(w, "max_acceleration", p->rw_max_acceleration);
            put_num(w, "max_error", p->rw_max_error);
            sensim_ywriter_map_end(w);
        }
        if (nmodels > 1)
            sensim_ywriter_seq_end(w);
    }
    if (p->hdop_on) {
        put_dop(w, "hdop", p->eph_initial, p->eph_final, p->eph_tau);
        put_if(w, "fix_3d_max", p->fix_3d_max, d.fix_3d_max);
        put_if(w, "fix_2d_max", p->fix_2d_max, d.fix_2d_max);
        sensim_ywriter_map_end(w);
        /* The vertical filter follows the horizontal one unless given. */
        if (p->epv_initial != p->eph_initial || p->epv_final != p->eph_final || p->epv_tau != p->eph_tau) {
            put_dop(w, "vdop", p->epv_initial, p->epv_final, p->epv_tau);
            sensim_ywriter_map_end(w);
        }
    }
    if (p->cov_model != d.cov_model || p->cov_epe != d.cov_epe || p->cov_scale != d.cov_scale) {
        sensim_ywriter_key(w, "covariance");
        my_model_begin(w, cov_models[p->cov_model]);
        put_if(w, "epe", p->cov_epe, d.cov_epe);
        put_if(w, "scale", p->cov_scale, d.cov_scale);
        sensim_ywriter_map_end(w);
    }
    if (!vec_zero(p->vel_sigma)) {
        my_block_begin(w, "velocity_noise");
        put_vec(w, "sigma", p->vel_sigma, 3);
        sensim_ywriter_map_end(w);
    }
    if (p->n_outage_windows || p->outage_rate > 0 || p->outage_mean_duration > 0) {
        my_block_begin(w, "outages");
        if (p->n_outage_windows) {
            sensim_ywriter_key(w, "windows");
            sensim_ywriter_seq_begin(w, 0);
            for (size_t i = 0; i < p->n_outage_windows; i++)
                sensim_ywriter_numbers(w, p->outage_windows[i], 2);
            sensim_ywriter_seq_end(w);
        }
        put_if(w, "rate", p->outage_rate, 0.0);
        put_if(w, "mean_duration", p->outage_mean_duration, 0.0);
        sensim_ywriter_map_end(w);
    }
    if (p->outlier_probability > 0 || p->outlier_magnitude > 0) {
        my_block_begin(w, "outliers");
        put_num(w, "probability", p->outlier_probability);
        put_num(w, "magnitude", p->outlier_magnitude);
        sensim_ywriter_map_end(w);
    }
    if (p->fix_noise_on) {
        static const char *const fk[] = {"none", "2d", "3d", "rtk_fixed", "rtk_float"};
        static const int fcode[] = {SENSIM_GNSS_FIX_NONE, SENSIM_GNSS_FIX_2D, SENSIM_GNSS_FIX_3D,
                                    SENSIM_GNSS_FIX_RTK_FIXED, SENSIM_GNSS_FIX_RTK_FLOAT};
        my_block_begin(w, "fix_noise");
        for (size_t i = 0; i < sizeof fcode / sizeof fcode[0]; i++)
            if (!vec_zero(p->fix_sigma[fcode[i]]))
                put_vec(w, fk[i], p->fix_sigma[fcode[i]], 3);
        sensim_ywriter_map_end(w);
    }
    if (p->rtk_on) {
        my_block_begin(w, "rtk");
        put_num(w, "mean_fixed", p->rtk_mean_fixed);
        put_num(w, "mean_float", p->rtk_mean_float);
        sensim_ywriter_map_end(w);
    }
    if (p->multipath_rate > 0 || p->multipath_mean_duration > 0 || !vec_zero(p->multipath_sigma)) {
        my_block_begin(w, "multipath");
        put_num(w, "rate", p->multipath_rate);
        put_num(w, "mean_duration", p->multipath_mean_duration);
        put_vec(w, "sigma", p->multipath_sigma, 3);
        sensim_ywriter_map_end(w);
    }
    sensim_ywriter_map_end(w);
}

typedef struct gnss_rig {
    sensim_gnss_params p;
    int origin_given; /* else the ground truth's origin_lla is used */
    int origin_override; /* origin_override: true, the rig's origin moves the trajectory */
    const char *origin_file;
    int origin_line;
} gnss_rig;

static const char *const gnss_keys[] = {"origin_lla", "origin_override", "position_noise", "hdop", "vdop", "covariance",
                                        "velocity_noise", "outages", "outliers", "fix_noise", "rtk", "multipath",
                                        NULL};

static sensim_status gnss_rig_create(sensim_sensor *s)
{
    gnss_rig *m = calloc(1, sizeof *m);
    if (!(s->model = m))
        return sensim_error(SENSIM_ENOMEM, "gnss sensor '%s': out of memory", s->name);
    m->p = sensim_gnss_default_params();
    sensim_status st = sensim_gnss_params_from_yaml(s->node, &m->p);
    if (st)
        return st;
    /* A receiver's description carries no place: the ENU frame is the
     * ground truth's. A rig may still put the trajectory elsewhere, but
     * only by saying so (origin_override: true); a different origin_lla
     * alone is refused at inject, where the ground truth's is known. */
    const sensim_ynode *on = sensim_ynode_get(s->node, "origin_lla");
    m->origin_given = on != NULL;
    if (on) {
        m->origin_file = sensim_ynode_file(on);
        m->origin_line = sensim_ynode_line(on);
    }
    if ((st = sensim_ynode_get_bool(s->node, "origin_override", 0, &m->origin_override)))
        return st;
    if (m->origin_override && !m->origin_given)
        return sensim_ynode_error(sensim_ynode_get(s->node, "origin_override"), SENSIM_EINVAL,
                                  "gnss sensor '%s': origin_override needs an origin_lla to override with", s->name);
    if (!(s->rate_hz > 0.0))
        return sensim_ynode_error(s->node, SENSIM_EINVAL, "gnss sensor '%s': key 'rate_hz' must be > 0", s->name);
    /* Start-up delay, clock and latency are the rig's timing, applied by
     * the sampler (sensim_sampler_next) as for every sensor. */
    m->p.start_delay = 0.0;
    m->p.latency = 0.0;
    sensim_gnss *g = sensim_gnss_create(&m->p, 0, s->id);
    if (!g)
        return my_refused(s);
    sensim_gnss_destroy(g);
    return SENSIM_OK;
}

typedef struct gnss_bufs {
    double *et, *ep, *ev, *del, *sens;
    double *t, *ts, *tc, *lla, *enu, *vel, *hdop, *cov;
    uint64_t *epoch;
    int8_t *fix;
} gnss_bufs;

static void bufs_free(gnss_bufs *b)
{
    free(b->et), free(b->ep), free(b->ev), free(b->del), free(b->sens), free(b->t), free(b->ts), free(b->tc);
    free(b->lla), free(b->enu), free(b->vel), free(b->hdop), free(b->cov), free(b->epoch), free(b->fix);
}

static int bufs_alloc(gnss_bufs *b, size_t n)
{
    memset(b, 0, sizeof *b);
    b->et = malloc(n * sizeof(double)), b->ep = malloc(3 * n * sizeof(double));
    b->ev = malloc(3 * n * sizeof(double)), b->del = malloc(n * sizeof(double));
    b->sens = malloc(n * sizeof(double)), b->t = malloc(n * sizeof(double));
    b->ts = malloc(n * sizeof(double)), b->tc = malloc(n * sizeof(double));
    b->lla = malloc(3 * n * sizeof(double));
    b->enu = malloc(3 * n * sizeof(double)), b->vel = malloc(3 * n * sizeof(double));
    b->hdop = malloc(n * sizeof(double)), b->cov = malloc(9 * n * sizeof(double));
    b->epoch = malloc(n * sizeof(uint64_t)), b->fix = malloc(n);
    return b->et && b->ep && b->ev && b->del && b->sens && b->t && b->ts && b->tc && b->lla && b->enu && b->vel &&
           b->hdop && b->cov && b->epoch && b->fix;
}

enum { D_T, D_TS, D_TC, D_LLA, D_ENU, D_VEL, D_HDOP, D_COV, D_FIX, D_N };

/* The antenna's mean ENU position and velocity over the sample's collection
 * window. The antenna sits at the lever arm: p + R l, v + R (w x l). */
static sensim_status antenna(const sensim_sensor *s, const sensim_sampler *sp, sensim_gt_cursor *cur, double t,
                             double p[3], double v[3])
{
    const sensim_vec3 lever = s->mount_position;
    sensim_vec3 ps = sensim_vec3_make(0, 0, 0), vs = sensim_vec3_make(0, 0, 0);
    for (int j = 0; j < sp->points; j++) {
        sensim_gt_state g;
        sensim_status st = sensim_gt_cursor_at(cur, sensim_sampler_window_time(sp, t, j), &g);
        if (st)
            return st;
        sensim_quat q = sensim_quat_load(g.orientation);
        sensim_vec3 rl = sensim_quat_rotate(q, lever);
        sensim_vec3 vl = sensim_quat_rotate(q, sensim_vec3_cross(sensim_vec3_load(g.angular_velocity), lever));
        ps = sensim_vec3_add(ps, sensim_vec3_add(sensim_vec3_load(g.position), rl));
        vs = sensim_vec3_add(vs, sensim_vec3_add(sensim_vec3_load(g.velocity), vl));
    }
    sensim_vec3_store(sensim_vec3_scale(ps, 1.0 / sp->points), p);
    sensim_vec3_store(sensim_vec3_scale(vs, 1.0 / sp->points), v);
    return SENSIM_OK;
}

static sensim_status gnss_rig_simulate(const sensim_sensor *s, const sensim_inject_opts *o, const sensim_log *in,
                                       sensim_log *out)
{
    const gnss_rig *m = s->model;
    sensim_gnss_params p = m->p;
    gnss_bufs b;
    sensim_gnss *g = NULL;
    sensim_log_dset *d[D_N] = {NULL};
    size_t cap = o->block ? o->block : 65536;
    sensim_status st = SENSIM_OK;
    sensim_gt_cursor *cur = sensim_gt_cursor_create(in, cap);
    if (!cur)
        return sensim_last_status();
    if (!bufs_alloc(&b, cap)) {
        st = sensim_error(SENSIM_ENOMEM, "gnss sensor '%s': out of memory", s->name);
        goto done;
    }
    const double *go_lla = sensim_gt_cursor_origin(cur);
    if (!m->origin_given)
        memcpy(p.origin_lla, go_lla, sizeof p.origin_lla);
    else if (!m->origin_override &&
             (fabs(p.origin_lla[0] - go_lla[0]) > 1e-7 || fabs(remainder(p.origin_lla[1] - go_lla[1], 360.0)) > 1e-7 ||
              fabs(p.origin_lla[2] - go_lla[2]) > 0.01)) {
        /* 1e-7 deg is 1 cm: a rig written from this log's origin passes. */
        st = sensim_error(SENSIM_EINVAL,
                          "%s:%d: gnss sensor '%s': origin_lla [%.7f, %.7f, %.3f] differs from the ground truth's "
                          "origin [%.7f, %.7f, %.3f] (%s), which would move the trajectory there; remove origin_lla "
                          "to use the ground truth's, or add origin_override: true to move it on purpose",
                          m->origin_file, m->origin_line, s->name, p.origin_lla[0], p.origin_lla[1], p.origin_lla[2],
                          go_lla[0], go_lla[1], go_lla[2], sensim_log_path(in));
        goto done;
    }
    if (!(g = sensim_gnss_create(&p, o->seed, s->id))) {
        st = sensim_error_prefix(sensim_last_status(), "gnss sensor '%s'", s->name);
        goto done;
    }
    char grp[SENSIM_NAME_MAX + 16], path[SENSIM_NAME_MAX + 48];
    snprintf(grp, sizeof grp, "/sensors/%s", s->name);
    if ((st = sensim_log_group(out, grp)) || (st = sensim_sensor_write_attrs(s, o, out)) ||
        (st = sensim_log_set_attr_f64(out, grp, "origin_lla", p.origin_lla, 3)))
        goto done;
    static const char *names[D_N] = {"t",   "t_sample", "t_sensor", "lla", "enu", "velocity", "hdop",
                                     "position_covariance", "fix"};
    static const char *units[D_N] = {"s", "s", "s", "deg, deg, m", "m", "m/s", "1", "m^2", ""};
    static const size_t tails[D_N] = {0, 0, 0, 3, 3, 3, 0, 9, 0};
    for (int j = 0; j < D_N; j++) {
        snprintf(path, sizeof path, "%s/%s", grp, names[j]);
        d[j] = sensim_log_dset_create(out, path, j == D_FIX ? SENSIM_I8 : SENSIM_F64, tails[j] ? 1 : 0, &tails[j],
                                      units[j], 0);
        if (!d[j]) {
            st = sensim_last_status();
            goto done;
        }
    }

    /* Every sample (from t_first + start_delay on the sensor's clock) goes
     * through the model, whose epoch index is then the sample index; the
     * model's power-on is the log's first time, so its processes (HDOP
     * curve, random walk) run from there. */
    sensim_sampler sp;
    sensim_sampler_init(&sp, s, o->seed, sensim_gt_cursor_t_first(cur), sensim_gt_cursor_t_last(cur));
    sensim_gnss_state gst;
    sensim_gnss_reset(g, &gst, sp.t_first);
    const sensim_gnss_out go = {b.t, b.ts, b.epoch, b.lla, b.enu, b.vel, b.hdop, b.cov, b.fix};
    for (int more = 1; more;) {
        size_t ne = 0;
        const uint64_t k0 = sp.k;
        sensim_sample smp;
        for (; ne < cap; ne++) {
            if (!sensim_sampler_next(&sp, &smp)) {
                more = 0;
                break;
            }
            if ((st = antenna(s, &sp, cur, smp.t, b.ep + 3 * ne, b.ev + 3 * ne)))
                goto done;
            b.et[ne] = smp.t;
            b.sens[ne] = smp.t_sensor;
            b.del[ne] = smp.t_delivery;
        }
        size_t nd = sensim_gnss_apply(g, &gst, ne, b.et, b.ep, b.ev, &go);
        for (size_t i = 0; i < nd; i++) {
            size_t j = (size_t)(b.epoch[i] - k0);
            b.t[i] = b.del[j];
            b.tc[i] = b.sens[j];
        }
        void *src[D_N] = {b.t, b.ts, b.tc, b.lla, b.enu, b.vel, b.hdop, b.cov, b.fix};
        for (int j = 0; j < D_N && nd; j++)
            if ((st = sensim_log_dset_append(d[j], src[j], nd)))
                goto done;
    }
    if (sp.k == 0)
        st = sensim_sampler_no_sample_error(&sp, in);
done:
    for (int j = 0; j < D_N; j++)
        sensim_log_dset_close(d[j]);
    sensim_gnss_destroy(g);
    bufs_free(&b);
    sensim_gt_cursor_destroy(cur);
    return st;
}

const sensim_sensor_type sensim_gnss_type = {
    "gnss", gnss_keys, gnss_rig_create, free, gnss_rig_simulate, NULL,
    8.0 * (3 + 3 + 3 + 3 + 1 + 9) + 1, /* times, lla, enu, velocity, hdop, covariance, fix */
};
