/* The "gnss" rig sensor type: ground truth -> sensim_gnss -> HDF5
 * (DESIGN.md /sensors/<name>/ for gnss). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gt_stream.h"
#include "sensim/gnss.h"
#include "sensim/rig.h"

typedef struct gnss_rig {
    sensim_gnss_params p;
    int origin_given; /* else the ground truth's origin_lla is used */
} gnss_rig;

static const char *const gnss_keys[] = {"origin_lla", "position_noise", "hdop", "vdop", "covariance",
                                        "velocity_noise", "outages", "outliers", NULL};

static sensim_status gnss_rig_create(sensim_sensor *s)
{
    gnss_rig *m = calloc(1, sizeof *m);
    if (!m)
        return sensim_error(SENSIM_ENOMEM, "gnss sensor '%s': out of memory", s->name);
    m->p = sensim_gnss_default_params();
    sensim_status st = sensim_gnss_params_from_yaml(s->node, &m->p);
    if (st)
        goto fail;
    m->origin_given = sensim_ynode_get(s->node, "origin_lla") != NULL;
    if (!(s->rate_hz > 0.0)) {
        st = sensim_ynode_error(s->node, SENSIM_EINVAL, "gnss sensor '%s': key 'rate_hz' must be > 0", s->name);
        goto fail;
    }
    m->p.start_delay = s->timing.start_delay;
    m->p.latency = 0.0; /* delivery via sensim_sensor_delivery_time */
    sensim_gnss *g = sensim_gnss_create(&m->p);
    if (!g) {
        st = sensim_ynode_error(s->node, sensim_last_status(), "sensor '%s': %s", s->name, sensim_last_error());
        goto fail;
    }
    sensim_gnss_destroy(g);
    s->model = m;
    return SENSIM_OK;
fail:
    free(m);
    return st;
}

static void gnss_rig_destroy(void *model) { free(model); }

typedef struct gnss_bufs {
    double *et, *ep, *ev;
    double *t, *ts, *lla, *enu, *vel, *hdop, *cov;
    uint64_t *epoch;
    int8_t *fix;
} gnss_bufs;

static void bufs_free(gnss_bufs *b)
{
    free(b->et), free(b->ep), free(b->ev), free(b->t), free(b->ts), free(b->lla), free(b->enu), free(b->vel);
    free(b->hdop), free(b->cov), free(b->epoch), free(b->fix);
}

static int bufs_alloc(gnss_bufs *b, size_t n)
{
    memset(b, 0, sizeof *b);
    b->et = malloc(n * sizeof(double)), b->ep = malloc(3 * n * sizeof(double));
    b->ev = malloc(3 * n * sizeof(double)), b->t = malloc(n * sizeof(double));
    b->ts = malloc(n * sizeof(double)), b->lla = malloc(3 * n * sizeof(double));
    b->enu = malloc(3 * n * sizeof(double)), b->vel = malloc(3 * n * sizeof(double));
    b->hdop = malloc(n * sizeof(double)), b->cov = malloc(9 * n * sizeof(double));
    b->epoch = malloc(n * sizeof(uint64_t)), b->fix = malloc(n);
    return b->et && b->ep && b->ev && b->t && b->ts && b->lla && b->enu && b->vel && b->hdop && b->cov &&
           b->epoch && b->fix;
}

enum { D_T, D_LLA, D_ENU, D_VEL, D_HDOP, D_COV, D_FIX, D_N };

static sensim_status gnss_rig_simulate(const sensim_sensor *s, const sensim_inject_opts *o, const sensim_log *in,
                                       sensim_log *out)
{
    const gnss_rig *m = s->model;
    sensim_gnss_params p = m->p;
    gt_stream gs;
    gnss_bufs b;
    sensim_gnss *g = NULL;
    sensim_log_dset *d[D_N] = {NULL};
    double origin[3];
    size_t cap = o->block ? o->block : 65536;
    int have_stream = 0;
    sensim_status st = gt_stream_open(&gs, in, cap, s->rate_hz, origin);
    if (st)
        return st;
    have_stream = 1;
    if (!bufs_alloc(&b, cap)) {
        st = sensim_error(SENSIM_ENOMEM, "gnss sensor '%s': out of memory", s->name);
        goto done;
    }
    if (!m->origin_given)
        memcpy(p.origin_lla, origin, sizeof origin);
    if (!(g = sensim_gnss_create(&p))) {
        st = sensim_error_prefix(sensim_last_status(), "gnss sensor '%s'", s->name);
        goto done;
    }
    char grp[SENSIM_NAME_MAX + 16], path[SENSIM_NAME_MAX + 48];
    snprintf(grp, sizeof grp, "/sensors/%s", s->name);
    if ((st = sensim_log_group(out, grp)) || (st = sensim_sensor_write_attrs(s, o, out)) ||
        (st = sensim_log_set_attr_f64(out, grp, "origin_lla", p.origin_lla, 3)))
        goto done;
    static const char *names[D_N] = {"t", "lla", "enu", "velocity", "hdop", "position_covariance", "fix"};
    static const char *units[D_N] = {"s", "deg, deg, m", "m", "m/s", "1", "m^2", ""};
    static const size_t tails[D_N] = {0, 3, 3, 3, 0, 9, 0};
    for (int j = 0; j < D_N; j++) {
        snprintf(path, sizeof path, "%s/%s", grp, names[j]);
        d[j] = sensim_log_dset_create(out, path, j == D_FIX ? SENSIM_I8 : SENSIM_F64, tails[j] ? 1 : 0, &tails[j],
                                      units[j], 0);
        if (!d[j]) {
            st = sensim_last_status();
            goto done;
        }
    }

    sensim_gnss_state gst;
    sensim_gnss_state_init(g, &gst, o->seed, s->id, gs.t_first);
    const sensim_vec3 lever = s->mount_position;
    const sensim_gnss_out go = {b.t, b.ts, b.epoch, b.lla, b.enu, b.vel, b.hdop, b.cov, b.fix};
    for (int more = 1; more;) {
        size_t ne = 0;
        while (ne < cap) {
            gt_row r;
            uint64_t k;
            int got = gt_stream_next(&gs, &r, &k, &st);
            if (got < 0)
                goto done;
            if (got == 0) {
                more = 0;
                break;
            }
            /* The antenna sits at the lever arm: p + R l, v + R (w x l). */
            sensim_quat q = sensim_quat_load(r.q);
            sensim_vec3 rl = sensim_quat_rotate(q, lever);
            sensim_vec3 vl = sensim_quat_rotate(q, sensim_vec3_cross(sensim_vec3_load(r.w), lever));
            b.et[ne] = r.t;
            sensim_vec3_store(sensim_vec3_add(sensim_vec3_load(r.p), rl), b.ep + 3 * ne);
            sensim_vec3_store(sensim_vec3_add(sensim_vec3_load(r.v), vl), b.ev + 3 * ne);
            ne++;
        }
        size_t nd = sensim_gnss_apply(g, &gst, ne, b.et, b.ep, b.ev, &go);
        for (size_t i = 0; i < nd; i++)
            b.t[i] = sensim_sensor_delivery_time(s, o->seed, b.epoch[i], b.ts[i]);
        void *src[D_N] = {b.t, b.lla, b.enu, b.vel, b.hdop, b.cov, b.fix};
        for (int j = 0; j < D_N && nd; j++)
            if ((st = sensim_log_dset_append(d[j], src[j], nd)))
                goto done;
    }
done:
    for (int j = 0; j < D_N; j++)
        sensim_log_dset_close(d[j]);
    sensim_gnss_destroy(g);
    bufs_free(&b);
    if (have_stream)
        gt_stream_close(&gs);
    return st;
}

const sensim_sensor_type sensim_gnss_type = {
    "gnss", gnss_keys, gnss_rig_create, gnss_rig_destroy, gnss_rig_simulate, NULL,
};
