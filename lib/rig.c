/* Rigs: the attributes every sensor group carries, delivery times, and the
 * inject driver that applies every sensor of a rig to a log. Loading a rig
 * and the table of sensor types are in models/registry.c: this file sees a
 * type only through its sensim_sensor_type. */
#include "sensim/rig.h"

#include <stdarg.h>
#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sensim/geodesy.h"
#include "sensim/guard.h"
#include "sensim/rng.h"
#include "base_internal.h"

/* Timing stream for delivery jitter: far from the models' streams. */
#define TIMING_STREAM 0xFFF000u

void sensim_rig_free(sensim_rig *rig)
{
    if (!rig)
        return;
    for (size_t i = 0; i < rig->nsensors; i++)
        if (rig->sensors[i].type && rig->sensors[i].model)
            rig->sensors[i].type->destroy(rig->sensors[i].model);
    free(rig->sensors);
    sensim_yaml_free(rig->doc);
    free(rig);
}

const sensim_sensor *sensim_rig_find(const sensim_rig *rig, const char *name)
{
    for (size_t i = 0; i < rig->nsensors; i++)
        if (!strcmp(rig->sensors[i].name, name))
            return &rig->sensors[i];
    return NULL;
}

/* ---- YAML re-emission of one sensor's node, for the `model` attribute ---- */

typedef struct {
    char *buf;
    size_t len, cap;
    int oom;
} sbuf;

static void sb_put(sbuf *b, const char *s)
{
    size_t n = strlen(s);
    if (sensim_reserve_(&b->buf, &b->cap, b->len + n + 1, 1, 256)) {
        b->oom = 1;
        return;
    }
    memcpy(b->buf + b->len, s, n + 1);
    b->len += n;
}

static void sb_scalar(sbuf *b, const char *s)
{
    /* Quote unless plain-safe. */
    int plain = *s != '\0';
    for (const char *p = s; *p && plain; p++)
        plain = isalnum((unsigned char)*p) || strchr("._-+/() ^*", *p);
    if (plain && (s[0] == ' ' || s[strlen(s) - 1] == ' '))
        plain = 0;
    if (plain) {
        sb_put(b, s);
        return;
    }
    sb_put(b, "\"");
    for (const char *p = s; *p; p++) {
        char c[3] = {*p, 0, 0};
        if (*p == '"' || *p == '\\') {
            c[0] = '\\';
            c[1] = *p;
        }
        sb_put(b, c);
    }
    sb_put(b, "\"");
}

static void emit_flow(sbuf *b, const sensim_ynode *n)
{
    switch (sensim_ynode_kind_of(n)) {
    case SENSIM_YNODE_SCALAR:
        sb_scalar(b, sensim_ynode_scalar(n));
        break;
    case SENSIM_YNODE_SEQUENCE:
    case SENSIM_YNODE_MAPPING: {
        const int map = sensim_ynode_kind_of(n) == SENSIM_YNODE_MAPPING;
        sb_put(b, map ? "{" : "[");
        for (size_t i = 0; i < sensim_ynode_size(n); i++) {
            if (i)
                sb_put(b, ", ");
            if (map) {
                sb_scalar(b, sensim_ynode_key_at(n, i));
                sb_put(b, ": ");
            }
            emit_flow(b, map ? sensim_ynode_value_at(n, i) : sensim_ynode_item(n, i));
        }
        sb_put(b, map ? "}" : "]");
        break;
    }
    }
}

/* One "key: value" line per top-level key of the sensor, values in flow style. */
static char *emit_sensor(const sensim_ynode *n)
{
    sbuf b = {0};
    for (size_t i = 0; i < sensim_ynode_size(n); i++) {
        sb_scalar(&b, sensim_ynode_key_at(n, i));
        sb_put(&b, ": ");
        emit_flow(&b, sensim_ynode_value_at(n, i));
        sb_put(&b, "\n");
    }
    if (b.oom) {
        free(b.buf);
        return NULL;
    }
    return b.buf;
}

sensim_status sensim_sensor_write_attrs(const sensim_sensor *s, const sensim_inject_opts *o, sensim_log *out)
{
    char group[SENSIM_NAME_MAX + 16];
    snprintf(group, sizeof group, "/sensors/%s", s->name);
    sensim_status st = sensim_log_group(out, group);
    if (st)
        return st;
    double mount[7] = {s->mount_position.x,    s->mount_position.y,    s->mount_position.z,   s->mount_orientation.w,
                       s->mount_orientation.x, s->mount_orientation.y, s->mount_orientation.z};
    int64_t seed = (int64_t)o->seed;
    char *model = emit_sensor(s->node);
    if (!model)
        return sensim_error(SENSIM_ENOMEM, "out of memory");
    if (!(st = sensim_log_set_attr_string(out, group, "type", s->type->type)) &&
        !(st = sensim_log_set_attr_f64(out, group, "rate_hz", &s->rate_hz, 1)) &&
        !(st = sensim_log_set_attr_f64(out, group, "mount", mount, 7)) &&
        !(st = sensim_log_set_attr_i64(out, group, "seed", &seed, 1)))
        st = sensim_log_set_attr_string(out, group, "model", model);
    free(model);
    return st;
}

double sensim_sensor_sample_time(const sensim_sensor *s, double t_first, uint64_t k)
{
    /* The sensor samples on its own clock, tau = t + offset + drift t, every
     * 1/rate from tau at t_first + start_delay; convert back to true time. */
    const sensim_timing *tm = &s->timing;
    double t_start = t_first + tm->start_delay;
    double tau_start = t_start + tm->clock_offset + tm->clock_drift * t_start;
    double tau = tau_start + (double)k / s->rate_hz;
    return (tau - tm->clock_offset) / (1.0 + tm->clock_drift);
}

double sensim_sensor_clock(const sensim_sensor *s, double t)
{
    return t + s->timing.clock_offset + s->timing.clock_drift * t;
}

double sensim_sensor_delivery_time(const sensim_sensor *s, uint64_t seed, uint64_t k, double t)
{
    double d = s->timing.lag;
    if (s->timing.jitter > 0) {
        sensim_rng r = sensim_rng_make(seed, s->id, TIMING_STREAM);
        d += s->timing.jitter * sensim_rng_normal(&r, k);
        if (d < 0)
            d = 0;
    }
    return t + d;
}

void sensim_sampler_init(sensim_sampler *sp, const sensim_sensor *s, uint64_t seed, double t_first, double t_last)
{
    sp->s = s;
    sp->seed = seed;
    sp->t_first = t_first;
    sp->t_last = t_last;
    sp->last_delivery = -INFINITY;
    sp->k = 0;
    sp->points = s->timing.collection_window > 0 ? SENSIM_WINDOW_POINTS : 1;
}

int sensim_sampler_next(sensim_sampler *sp, sensim_sample *out)
{
    double t = sensim_sensor_sample_time(sp->s, sp->t_first, sp->k);
    if (!(t <= sp->t_last))
        return 0;
    /* Rounding in the clock conversion may put sample 0 a hair early. */
    if (t < sp->t_first)
        t = sp->t_first;
    double d = sensim_sensor_delivery_time(sp->s, sp->seed, sp->k, t);
    /* Delivery keeps order: a sample never overtakes the previous one. */
    if (!(d > sp->last_delivery))
        d = nextafter(sp->last_delivery, INFINITY);
    out->k = sp->k++;
    out->t = t;
    out->t_sensor = sensim_sensor_clock(sp->s, t);
    out->t_delivery = sp->last_delivery = d;
    return 1;
}

double sensim_sampler_window_time(const sensim_sampler *sp, double t, int j)
{
    if (sp->points == 1)
        return t;
    const double W = sp->s->timing.collection_window;
    double tj = t - W + (j + 0.5) * W / sp->points;
    return tj < sp->t_first ? sp->t_first : tj;
}

/* ---- the inject driver ---- */

/* What a recorded group holds beyond the data a sensor noises passes
 * through: its attributes (where it came from: ros_topic, ros_frame_id,
 * time_origin_s, ...; the rig's own are written after) and the datasets the
 * sensor did not write (an IMU's orientation, covariances), so 'sensim
 * export' can give the recording back with noised values. */
static sensim_status carry_recorded(const sensim_log *in, sensim_log *out, const char *g)
{
    char **names;
    size_t n;
    sensim_status st = sensim_log_list(in, g, &names, &n);
    if (st)
        return st;
    for (size_t i = 0; i < n && !st; i++) {
        char p[SENSIM_NAME_MAX + 300];
        snprintf(p, sizeof p, "%s/%s", g, names[i]);
        if (!sensim_log_exists(out, p))
            st = sensim_log_copy(out, in, p);
    }
    sensim_log_free_names(names, n);
    return st ? st : sensim_log_copy_attrs(out, in, g);
}

/* Ground truth is a local tangent plane at its origin (a straight 20 km line
 * at z = 0 rises 31 m above the ellipsoid), and gravity stays along the
 * origin's up: warns when the trajectory reaches where the ellipsoid's
 * normal is more than 0.1 deg from that up (about 11 km out). */
static sensim_status check_tangent_plane(const sensim_log *in, const char *in_path, size_t rows,
                                         const double lla0[3], const sensim_inject_opts *o)
{
    enum { B = 65536 };
    sensim_geo_enu frame;
    sensim_status st = sensim_geo_enu_init(&frame, lla0);
    if (st)
        return st;
    double *p = malloc(3 * B * sizeof *p), worst = 0.0, far[3] = {0, 0, 0};
    if (!p)
        return sensim_error(SENSIM_ENOMEM, "out of memory");
    for (size_t r0 = 0; r0 < rows && !st; r0 += B) {
        size_t c = rows - r0 < B ? rows - r0 : B;
        if ((st = sensim_log_read_f64(in, "/ground_truth/position", r0, c, p)))
            break;
        for (size_t i = 0; i < c; i++) {
            double d = p[3 * i] * p[3 * i] + p[3 * i + 1] * p[3 * i + 1];
            if (d > worst)
                worst = d, memcpy(far, p + 3 * i, sizeof far);
        }
    }
    free(p);
    if (st || worst == 0.0)
        return st;
    /* The ellipsoid normal at the farthest point, in the origin's ENU. */
    double lla[3];
    sensim_geo_enu_to_lla(&frame, far, lla);
    const double la = lla[0] * M_PI / 180.0, lo = lla[1] * M_PI / 180.0;
    const sensim_vec3 ne = sensim_vec3_make(cos(la) * cos(lo), cos(la) * sin(lo), sin(la));
    const double up = sensim_mat3_apply(&frame.r, ne).z;
    const double angle = acos(fmin(1.0, up)) * 180.0 / M_PI;
    if (angle > 0.1)
        sensim_inject_warn(o,
                           "%s: the trajectory reaches %.3g km from the origin, where the vertical is %.3g deg from "
                           "the origin's: ground truth is a local tangent plane and gravity stays along its up "
                           "(errors of g sin(angle) = %.3g m/s^2); split the log or move the origin",
                           in_path, sqrt(worst) / 1000.0, angle, 9.80665 * sin(angle * M_PI / 180.0));
    return SENSIM_OK;
}

/* Bytes written per sample by a type that simulates from ground truth (its
 * sensim_sensor_type says); 256 for one that does not say. */
static double sample_bytes(const sensim_sensor *s)
{
    return s->type->sample_bytes > 0 ? s->type->sample_bytes : 256.0;
}

/* Refuses a run whose ground-truth times cannot be seconds or whose output
 * estimate (the input copied through plus rate x span samples per simulated
 * sensor) exceeds the free space or SENSIM_GUARD_MAX_BYTES, before anything
 * is written. */
static sensim_status check_output_size(const sensim_rig *rig, const sensim_log *in, const char *in_path,
                                       size_t gt_rows, const char *out_path)
{
    double bytes = 0.0, t[2] = {0, 0};
    FILE *f = fopen(in_path, "rb");
    if (f) {
        if (!fseek(f, 0, SEEK_END))
            bytes = (double)ftell(f);
        fclose(f);
    }
    if (!gt_rows)
        return sensim_guard_output(out_path, bytes, in_path);
    sensim_status st;
    if ((st = sensim_log_read_f64(in, "/ground_truth/t", 0, 1, &t[0])) ||
        (st = sensim_log_read_f64(in, "/ground_truth/t", gt_rows - 1, 1, &t[1])))
        return st;
    char what[600];
    snprintf(what, sizeof what, "%s: /ground_truth/t", in_path);
    if ((st = sensim_guard_times(t[0], t[1], gt_rows, what)))
        return st;
    const double span = t[1] - t[0];
    double worst = 0.0;
    const sensim_sensor *ws = NULL;
    for (size_t i = 0; i < rig->nsensors; i++) {
        const sensim_sensor *s = &rig->sensors[i];
        char g[SENSIM_NAME_MAX + 16];
        snprintf(g, sizeof g, "/sensors/%s", s->name);
        if (sensim_log_exists(in, g))
            continue;
        double b = (floor(s->rate_hz * span) + 1.0) * sample_bytes(s);
        bytes += b;
        if (b > worst)
            worst = b, ws = s;
    }
    if (!ws)
        return sensim_guard_output(out_path, bytes, in_path);
    snprintf(what, sizeof what, "sensor '%s': %g Hz x %.6g s of ground truth (%s) = %.3g samples", ws->name,
             ws->rate_hz, span, in_path, floor(ws->rate_hz * span) + 1.0);
    return sensim_guard_output(out_path, bytes, what);
}

typedef struct {
    sensim_progress_fn fn;
    void *ctx;
    const char *sensor;
} inject_progress;

static void on_gt_read(void *ctx, size_t done, size_t rows)
{
    inject_progress *p = ctx;
    p->fn(p->ctx, p->sensor, rows ? (double)done / (double)rows : 1.0);
}

sensim_status sensim_rig_inject(const sensim_rig *rig, const sensim_inject_opts *o, const char *in_path,
                                const char *out_path)
{
    return sensim_rig_inject_progress(rig, o, in_path, out_path, NULL, NULL);
}

sensim_status sensim_rig_inject_progress(const sensim_rig *rig, const sensim_inject_opts *o, const char *in_path,
                                         const char *out_path, sensim_progress_fn progress, void *ctx)
{
    sensim_log *in = sensim_log_open(in_path);
    if (!in)
        return sensim_last_status();
    sensim_log *out = NULL;
    sensim_status st = SENSIM_OK;
    inject_progress prog = {progress, ctx, ""};
    if (progress)
        sensim_log_on_gt_read(in, on_gt_read, &prog);
    int has_gt = sensim_log_exists(in, "/ground_truth");
    size_t gt_rows = 0;
    double gt_lla[3] = {0, 0, 0};
    if (has_gt && (st = sensim_gt_check(in, &gt_rows, gt_lla)))
        goto done;
    /* Every sensor must have either clean data or ground truth to work from. */
    for (size_t i = 0; i < rig->nsensors; i++) {
        const sensim_sensor *s = &rig->sensors[i];
        char g[SENSIM_NAME_MAX + 16];
        snprintf(g, sizeof g, "/sensors/%s", s->name);
        int clean = sensim_log_exists(in, g);
        if (clean && !s->type->noise_clean) {
            st = sensim_error(SENSIM_EUNSUPPORTED, "%s: %s: sensors of type %s cannot be noised from recorded data",
                              in_path, g, s->type->type);
            goto done;
        }
        if (!clean && !has_gt) {
            st = sensim_error(SENSIM_ENOTFOUND, "%s: neither /ground_truth nor %s: nothing to make sensor '%s' from",
                              in_path, g, s->name);
            goto done;
        }
    }
    if ((st = check_output_size(rig, in, in_path, gt_rows, out_path)))
        goto done;
    if (gt_rows && (st = check_tangent_plane(in, in_path, gt_rows, gt_lla, o)))
        goto done;
    if (!(out = sensim_log_create(out_path, "sensim inject"))) {
        st = sensim_last_status();
        goto done;
    }
    int64_t seed = (int64_t)o->seed;
    if ((st = sensim_log_set_attr_i64(out, "/", "seed", &seed, 1)))
        goto done;
    if (has_gt && (st = sensim_log_copy(out, in, "/ground_truth")))
        goto done;
    /* Recorded sensors that the rig does not touch pass through unchanged. */
    if (sensim_log_exists(in, "/sensors")) {
        char **names;
        size_t n;
        if ((st = sensim_log_list(in, "/sensors", &names, &n)))
            goto done;
        for (size_t i = 0; i < n && !st; i++)
            if (!sensim_rig_find(rig, names[i])) {
                char g[512];
                snprintf(g, sizeof g, "/sensors/%s", names[i]);
                st = sensim_log_copy(out, in, g);
            }
        sensim_log_free_names(names, n);
        if (st)
            goto done;
    }
    for (size_t i = 0; i < rig->nsensors && !st; i++) {
        const sensim_sensor *s = &rig->sensors[i];
        char g[SENSIM_NAME_MAX + 16];
        snprintf(g, sizeof g, "/sensors/%s", s->name);
        /* Noised recordings keep what their group says of where they came
         * from (source file, topic, frame, time epoch) and the datasets the
         * model does not touch; the rig's own attributes are written over. */
        prog.sensor = s->name;
        if (progress)
            progress(ctx, s->name, 0.0);
        int clean = sensim_log_exists(in, g);
        st = clean ? s->type->noise_clean(s, o, in, out) : s->type->simulate(s, o, in, out);
        if (!st && clean)
            st = carry_recorded(in, out, g);
        if (!st && progress)
            progress(ctx, s->name, 1.0);
        if (!st)
            st = sensim_sensor_write_attrs(s, o, out);
        if (st)
            sensim_error_prefix(st, "sensor '%s'", s->name);
    }
    if (!st) {
        st = sensim_log_commit(out);
        out = NULL;
    }
done:
    sensim_log_close(out);
    sensim_log_close(in);
    return st;
}

void sensim_inject_warn(const sensim_inject_opts *o, const char *fmt, ...)
{
    if (!o || !o->warn)
        return;
    char msg[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    o->warn(o->warn_ctx, msg);
}

sensim_status sensim_sampler_no_sample_error(const sensim_sampler *sp, const sensim_log *in)
{
    const sensim_sensor *s = sp->s;
    const double span = sp->t_last - sp->t_first;
    const sensim_ynode *tn = sensim_ynode_get(s->node, "timing");
    const sensim_ynode *dn = tn ? sensim_ynode_get(tn, "start_delay") : NULL;
    if (s->timing.start_delay > span)
        return sensim_error(SENSIM_EDATA,
                            "%s:%d: sensor '%s': timing.start_delay %.6g s is longer than the ground truth of %s "
                            "(%.6g s, t %.6g..%.6g), so the sensor never produces a sample; shorten start_delay or "
                            "use a longer log",
                            sensim_ynode_file(dn ? dn : s->node), sensim_ynode_line(dn ? dn : s->node), s->name,
                            s->timing.start_delay, sensim_log_path(in), span, sp->t_first, sp->t_last);
    return sensim_error(SENSIM_EDATA,
                        "%s: sensor '%s': no sample falls within the ground truth (t %.6g..%.6g): the first would be "
                        "at %.9g s (start_delay %.6g s, clock_offset %.6g s, rate %g Hz)",
                        sensim_log_path(in), s->name, sp->t_first, sp->t_last,
                        sensim_sensor_sample_time(s, sp->t_first, 0), s->timing.start_delay, s->timing.clock_offset,
                        s->rate_hz);
}
