/* The "odometer" and "encoder" rig sensor types: ground truth sampled at
 * rate_hz -> sensim_odometer / sensim_encoder -> HDF5 (DESIGN.md). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sensim/gt.h"
#include "sensim/odometer.h"
#include "sensim/rig.h"
#include "model_yaml.h"

static const char *const encoder_map_keys[] = {"name", "type", "rate_hz", "mount", "timing", "source", "wheel_radius",
                                           "mode", "range", "resolution", "noise_sigma", "scale", "counter_bits",
                                           NULL};
static const char *const odometer_map_keys[] = {"name", "type", "rate_hz", "mount", "timing", "wheel_radius",
                                            "pulses_per_rev", "scale_error", "slip", "noise_sigma", NULL};

sensim_status sensim_encoder_params_from_yaml(const sensim_ynode *map, sensim_encoder_params *p)
{
    SENSIM_TRY(sensim_ynode_check_keys(map, "encoder sensor", encoder_map_keys));
    /* A linear encoder (source: distance) reads metres, the others radians. */
    const char *source = "wheel";
    SENSIM_TRY(sensim_ynode_get_string(map, "source", 0, &source));
    sensim_dim dim = !strcmp(source, "distance") ? SENSIM_DIM_LENGTH : SENSIM_DIM_ANGLE;
    /* A shaft angle wraps each turn ([0, 2 pi), the default); a distance
     * has no natural period, so it is unbounded unless a range is given. */
    if (!strcmp(source, "distance"))
        p->lower = -INFINITY, p->upper = INFINITY;
    const char *mode = NULL;
    SENSIM_TRY(sensim_ynode_get_string(map, "mode", 0, &mode));
    if (mode) {
        if (!strcmp(mode, "incremental"))
            p->mode = SENSIM_ENCODER_INCREMENTAL;
        else if (!strcmp(mode, "absolute"))
            p->mode = SENSIM_ENCODER_ABSOLUTE;
        else
            return sensim_ynode_error(sensim_ynode_get(map, "mode"), SENSIM_EINVAL,
                                      "key 'mode': unknown encoder mode '%s' (expected incremental or absolute)",
                                      mode);
    }
    if (sensim_ynode_get(map, "range")) {
        double r[2];
        SENSIM_TRY(sensim_ynode_get_vector(map, "range", dim, 1, 2, r));
        if (!(r[1] > r[0]))
            return sensim_ynode_error(sensim_ynode_get(map, "range"), SENSIM_EINVAL,
                                      "key 'range': must be [lower, upper] with upper > lower (got [%g, %g])", r[0],
                                      r[1]);
        p->lower = r[0], p->upper = r[1];
    }
    SENSIM_TRY(my_get_bounded(map, "resolution", dim, 0, 0, &p->resolution));
    SENSIM_TRY(my_get_bounded(map, "noise_sigma", dim, 0, 0, &p->noise_sigma));
    SENSIM_TRY(sensim_ynode_get_quantity(map, "scale", SENSIM_DIM_NONE, 0, &p->scale));
    if (sensim_ynode_get(map, "counter_bits")) {
        long long b;
        SENSIM_TRY(sensim_ynode_get_int(map, "counter_bits", 1, &b));
        if (b < 1 || b > 62)
            return sensim_ynode_error(sensim_ynode_get(map, "counter_bits"), SENSIM_EINVAL,
                                      "key 'counter_bits': must be 1..62 (got %lld)", b);
        if (!(p->resolution > 0.0) || p->mode != SENSIM_ENCODER_INCREMENTAL)
            return sensim_ynode_error(sensim_ynode_get(map, "counter_bits"), SENSIM_EINVAL,
                                      "key 'counter_bits': counts pulses, so it needs a resolution > 0 and mode "
                                      "incremental");
        p->counter_bits = (int)b;
    }
    return SENSIM_OK;
}

sensim_status sensim_odometer_params_from_yaml(const sensim_ynode *map, sensim_odometer_params *p)
{
    SENSIM_TRY(sensim_ynode_check_keys(map, "odometer sensor", odometer_map_keys));
    SENSIM_TRY(my_get_bounded(map, "wheel_radius", SENSIM_DIM_LENGTH, 0, 1, &p->wheel_radius));
    SENSIM_TRY(my_get_bounded(map, "pulses_per_rev", SENSIM_DIM_NONE, 0, 0, &p->pulses_per_rev));
    SENSIM_TRY(sensim_ynode_get_quantity_range(map, "scale_error", SENSIM_DIM_NONE, 0, -0.5, 0.5, &p->scale_error));
    SENSIM_TRY(sensim_ynode_get_quantity_range(map, "slip", SENSIM_DIM_NONE, 0, -0.99, 10.0, &p->slip));
    SENSIM_TRY(my_get_bounded(map, "noise_sigma", SENSIM_DIM_LENGTH, 0, 0, &p->noise_sigma));
    return SENSIM_OK;
}

/* ---- writing: the keys the parsers above read, where they differ from
 * the defaults, in SI ---- */

void sensim_odometer_write_yaml(sensim_ywriter *w, const sensim_sensor *s, const sensim_odometer_params *p)
{
    const sensim_odometer_params d = sensim_odometer_default_params();
    sensim_sensor_write_yaml(w, s, "odometer");
    put_if(w, "wheel_radius", p->wheel_radius, d.wheel_radius);
    put_if(w, "pulses_per_rev", p->pulses_per_rev, d.pulses_per_rev);
    put_if(w, "scale_error", p->scale_error, d.scale_error);
    put_if(w, "slip", p->slip, d.slip);
    put_if(w, "noise_sigma", p->noise_sigma, d.noise_sigma);
    sensim_ywriter_map_end(w);
}

void sensim_encoder_write_yaml(sensim_ywriter *w, const sensim_sensor *s, const sensim_encoder_params *p,
                               const char *source, double wheel_radius)
{
    const int distance = source && !strcmp(source, "distance");
    sensim_encoder_params d = sensim_encoder_default_params();
    if (distance)
        d.lower = -INFINITY, d.upper = INFINITY;
    sensim_sensor_write_yaml(w, s, "encoder");
    if (source) {
        sensim_ywriter_key(w, "source");
        sensim_ywriter_string(w, source);
    }
    if (wheel_radius > 0 && wheel_radius != 0.1) {
        sensim_ywriter_key(w, "wheel_radius");
        sensim_ywriter_number(w, wheel_radius);
    }
    if (p->mode != d.mode) {
        sensim_ywriter_key(w, "mode");
        sensim_ywriter_string(w, p->mode == SENSIM_ENCODER_ABSOLUTE ? "absolute" : "incremental");
    }
    if (p->lower != d.lower || p->upper != d.upper) {
        /* A non-finite bound is an error of the writer: only a distance
         * encoder is unbounded, and only by default. */
        sensim_ywriter_key(w, "range");
        sensim_ywriter_numbers(w, (const double[]){p->lower, p->upper}, 2);
    }
    put_if(w, "resolution", p->resolution, d.resolution);
    put_if(w, "noise_sigma", p->noise_sigma, d.noise_sigma);
    put_if(w, "scale", p->scale, d.scale);
    if (p->counter_bits != d.counter_bits) {
        sensim_ywriter_key(w, "counter_bits");
        sensim_ywriter_int(w, p->counter_bits);
    }
    sensim_ywriter_map_end(w);
}

typedef enum { SRC_WHEEL, SRC_HEADING, SRC_DISTANCE } enc_source;
static const char *const enc_sources[] = {"wheel", "heading", "distance"}; /* by enc_source */

typedef struct odo_rig {
    int is_encoder;
    sensim_odometer_params op;
    sensim_encoder_params ep;
    enc_source source;
    double wheel_radius; /* encoder source wheel */
} odo_rig;

static const char *const odometer_keys[] = {"wheel_radius", "pulses_per_rev", "scale_error", "slip", "noise_sigma",
                                            NULL};
static const char *const encoder_keys[] = {"source", "wheel_radius", "mode", "range", "resolution", "noise_sigma",
                                           "scale", "counter_bits", NULL};

static sensim_status rig_create(sensim_sensor *s, int is_encoder)
{
    odo_rig *m = calloc(1, sizeof *m);
    if (!(s->model = m))
        return sensim_error(SENSIM_ENOMEM, "sensor '%s': out of memory", s->name);
    m->is_encoder = is_encoder;
    sensim_status st;
    if (!(s->rate_hz > 0.0))
        return sensim_ynode_error(s->node, SENSIM_EINVAL, "%s sensor '%s': key 'rate_hz' must be > 0",
                                  is_encoder ? "encoder" : "odometer", s->name);
    if (!is_encoder) {
        m->op = sensim_odometer_default_params();
        if ((st = sensim_odometer_params_from_yaml(s->node, &m->op)))
            return st;
        sensim_odometer *od = sensim_odometer_create(&m->op, 0, s->id);
        if (!od)
            return my_refused(s);
        sensim_odometer_destroy(od);
        return SENSIM_OK;
    }
    m->ep = sensim_encoder_default_params();
    if ((st = sensim_encoder_params_from_yaml(s->node, &m->ep)))
        return st;
    int src = SRC_WHEEL;
    if ((st = my_get_name(s->node, "source", 0, "encoder source", "one of: ", enc_sources, 3, &src)))
        return st;
    m->source = (enc_source)src;
    m->wheel_radius = 0.1;
    if ((st = sensim_ynode_get_quantity(s->node, "wheel_radius", SENSIM_DIM_LENGTH, 0, &m->wheel_radius)))
        return st;
    if (!(m->wheel_radius > 0.0))
        return sensim_ynode_error(sensim_ynode_get(s->node, "wheel_radius"), SENSIM_EINVAL,
                                  "key 'wheel_radius': must be > 0 (got %g)", m->wheel_radius);
    sensim_encoder *e = sensim_encoder_create(&m->ep, 0, s->id);
    if (!e)
        return my_refused(s);
    sensim_encoder_destroy(e);
    return SENSIM_OK;
}

static sensim_status odometer_rig_create(sensim_sensor *s) { return rig_create(s, 0); }
static sensim_status encoder_rig_create(sensim_sensor *s) { return rig_create(s, 1); }

/* Yaw of a body-to-world quaternion (ZYX Euler), rad. */
static double yaw_of(const double q[4])
{
    return atan2(2.0 * (q[0] * q[3] + q[1] * q[2]), 1.0 - 2.0 * (q[2] * q[2] + q[3] * q[3]));
}

/* Forward speed and yaw at time t. The wheel rolls where it is mounted: the
 * speed is the velocity of the mount point, R^T v + w x r in the body frame
 * (w the body rate, r the mount position), along the mount's x axis. A
 * wheel 1 m outside the centre of a 10 m circle covers 1.1 times the
 * centre's distance. */
static sensim_status speed_yaw_at(const sensim_sensor *s, sensim_gt_cursor *cur, double t, double *v, double *yaw)
{
    sensim_gt_state g;
    sensim_status st = sensim_gt_cursor_at(cur, t, &g);
    if (st)
        return st;
    sensim_vec3 vb = sensim_quat_rotate_inv(sensim_quat_load(g.orientation), sensim_vec3_load(g.velocity));
    vb = sensim_vec3_add(vb, sensim_vec3_cross(sensim_vec3_load(g.angular_velocity), s->mount_position));
    *v = sensim_quat_rotate_inv(s->mount_orientation, vb).x;
    *yaw = yaw_of(g.orientation);
    return SENSIM_OK;
}

static sensim_status rig_simulate(const sensim_sensor *s, const sensim_inject_opts *o, const sensim_log *in,
                                  sensim_log *out)
{
    const odo_rig *m = s->model;
    size_t cap = o->block ? o->block : 65536;
    sensim_gt_cursor *cur = sensim_gt_cursor_create(in, cap);
    if (!cur)
        return sensim_last_status();
    sensim_status st = SENSIM_OK;
    sensim_encoder *enc = NULL;
    sensim_odometer *odo = NULL;
    sensim_log_dset *d[5] = {NULL, NULL, NULL, NULL, NULL};
    double *t = malloc(cap * sizeof *t), *x = malloc(cap * sizeof *x), *y = malloc(cap * sizeof *y);
    double *tc = malloc(cap * sizeof *tc), *td = malloc(cap * sizeof *td);
    if (!t || !x || !y || !tc || !td) {
        st = sensim_error(SENSIM_ENOMEM, "sensor '%s': out of memory", s->name);
        goto done;
    }
    if (m->is_encoder ? !(enc = sensim_encoder_create(&m->ep, o->seed, s->id))
                      : !(odo = sensim_odometer_create(&m->op, o->seed, s->id))) {
        st = sensim_error_prefix(sensim_last_status(), "sensor '%s'", s->name);
        goto done;
    }
    char grp[SENSIM_NAME_MAX + 16], path[SENSIM_NAME_MAX + 48];
    snprintf(grp, sizeof grp, "/sensors/%s", s->name);
    if ((st = sensim_log_group(out, grp)) || (st = sensim_sensor_write_attrs(s, o, out)))
        goto done;
    const char *unit = m->is_encoder && m->source != SRC_DISTANCE ? "rad" : "m";
    const char *sunit = m->is_encoder && m->source != SRC_DISTANCE ? "rad/s" : "m/s";
    const char *names[5] = {"t", "t_sample", "t_sensor", m->is_encoder ? "position" : "distance", "speed"};
    const char *units[5] = {"s", "s", "s", unit, sunit};
    for (int j = 0; j < (m->is_encoder ? 5 : 4); j++) {
        snprintf(path, sizeof path, "%s/%s", grp, names[j]);
        if (!(d[j] = sensim_log_dset_create(out, path, SENSIM_F64, 0, NULL, units[j], 0))) {
            st = sensim_last_status();
            goto done;
        }
    }

    sensim_encoder_state est;
    sensim_odometer_state ost;
    if (enc)
        sensim_encoder_reset(enc, &est);
    else
        sensim_odometer_reset(odo, &ost);
    sensim_sampler sp;
    sensim_sampler_init(&sp, s, o->seed, sensim_gt_cursor_t_first(cur), sensim_gt_cursor_t_last(cur));
    /* Inputs integrated here: along-track distance (trapezoid over the
     * sample times of the window-mean speed, which is the window mean of
     * the distance), unwrapped yaw. */
    double dist = 0.0, v_prev = 0.0, t_prev = 0.0, yaw_unwrapped = 0.0, yaw_prev = 0.0;
    for (int more = 1; more;) {
        size_t n = 0;
        sensim_sample smp;
        for (; n < cap; n++) {
            if (!sensim_sampler_next(&sp, &smp)) {
                more = 0;
                break;
            }
            double v, yaw, vbar = 0.0, dyaw = 0.0;
            if ((st = speed_yaw_at(s, cur, smp.t, &v, &yaw)))
                goto done;
            /* Collection window: mean speed, and mean yaw as an offset from
             * the yaw at t (the window spans less than half a turn). */
            for (int j = 0; j < sp.points; j++) {
                double vj = v, yj = yaw;
                if (sp.points > 1 && (st = speed_yaw_at(s, cur, sensim_sampler_window_time(&sp, smp.t, j), &vj, &yj)))
                    goto done;
                vbar += vj / sp.points;
                dyaw += remainder(yj - yaw, 2.0 * M_PI) / sp.points;
            }
            if (smp.k == 0) {
                yaw_unwrapped = yaw;
            } else {
                dist += 0.5 * (vbar + v_prev) * (smp.t - t_prev);
                yaw_unwrapped += remainder(yaw - yaw_prev, 2.0 * M_PI);
            }
            v_prev = vbar, t_prev = smp.t, yaw_prev = yaw;
            t[n] = smp.t;
            tc[n] = smp.t_sensor;
            td[n] = smp.t_delivery;
            x[n] = !enc ? vbar
                 : m->source == SRC_WHEEL ? dist / m->wheel_radius
                 : m->source == SRC_HEADING ? yaw_unwrapped + dyaw
                                            : dist;
        }
        /* The wheel turns in true time; a microcontroller times the change
         * of an encoder reading with its own clock. The encoder's speed
         * overwrites its input element by element, after reading it. */
        if (enc)
            sensim_encoder_apply(enc, &est, n, tc, x, y, x);
        else
            sensim_odometer_apply_speed(odo, &ost, n, t, x, y);
        if (n && ((st = sensim_log_dset_append(d[0], td, n)) || (st = sensim_log_dset_append(d[1], t, n)) ||
                  (st = sensim_log_dset_append(d[2], tc, n)) || (st = sensim_log_dset_append(d[3], y, n)) ||
                  (enc && (st = sensim_log_dset_append(d[4], x, n)))))
            goto done;
    }
    if (sp.k == 0)
        st = sensim_sampler_no_sample_error(&sp, in);
    if (enc && est.overruns)
        sensim_inject_warn(o,
                           "encoder '%s': at %llu of %llu samples the true change exceeded the %.6g %s per sample "
                           "that its speed can tell (up to %.6g %s/s at %g Hz); the speed aliases there%s",
                           s->name, (unsigned long long)est.overruns, (unsigned long long)est.k, est.speed_limit,
                           unit, est.overrun_max * s->rate_hz, unit, s->rate_hz,
                           m->ep.counter_bits ? ": widen counter_bits or raise rate_hz"
                                              : ": set counter_bits (the pulse counter's width) or raise rate_hz");
done:
    for (int j = 0; j < 5; j++)
        sensim_log_dset_close(d[j]);
    sensim_encoder_destroy(enc);
    sensim_odometer_destroy(odo);
    free(t), free(x), free(y), free(tc), free(td);
    sensim_gt_cursor_destroy(cur);
    return st;
}

const sensim_sensor_type sensim_odometer_type = {
    "odometer", odometer_keys, odometer_rig_create, free, rig_simulate, NULL, 8.0 * 4,
};

const sensim_sensor_type sensim_encoder_type = {
    "encoder", encoder_keys, encoder_rig_create, free, rig_simulate, NULL, 8.0 * 5,
};
