/* Encoder and wheel odometer (sensim/odometer.h). Equations from AGX
 * Sensor, seed 002: noise (31), binning (32), incremental wrap (33),
 * absolute clamp (34), odometer distance R_wheel * u (section 6). */
#include "sensim/odometer.h"
#include "../lib/base_internal.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { STREAM_NOISE = 0 };

static int finite_nonneg(double v) { return isfinite(v) && v >= 0.0; }

/* The encoder and the odometer are the same object: a copy of the
 * parameters and the key (seed, sensor_id) of the one noise stream that
 * reset starts. MODEL(X, what, check) defines it and the contract's
 * functions that follow from it (sensim_encoder_create, _destroy,
 * _params_of, _reset and the same for sensim_odometer); create refuses
 * NULL and what check refuses. */
#define MODEL(X, what, check) \
    struct X { \
        X##_params p; \
        uint64_t seed; \
        uint32_t sensor_id; \
    }; \
    X *X##_create(const X##_params *p, uint64_t seed, uint32_t sensor_id) \
    { \
        if (!p) { \
            sensim_error(SENSIM_EINVAL, what ": no parameters"); \
            return NULL; \
        } \
        if (check(p) != SENSIM_OK) \
            return NULL; \
        X *m = sensim_new_(sizeof *m, what); \
        if (m) { \
            m->p = *p; \
            m->seed = seed; \
            m->sensor_id = sensor_id; \
        } \
        return m; \
    } \
    void X##_destroy(X *m) { free(m); } \
    const X##_params *X##_params_of(const X *m) { return &m->p; } \
    void X##_reset(const X *m, X##_state *st) \
    { \
        memset(st, 0, sizeof *st); \
        st->rng = sensim_rng_make(m->seed, m->sensor_id, STREAM_NOISE); \
    }

/* ---- encoder ---- */

sensim_encoder_params sensim_encoder_default_params(void)
{
    sensim_encoder_params p;
    memset(&p, 0, sizeof p);
    p.mode = SENSIM_ENCODER_INCREMENTAL;
    p.lower = 0.0;
    p.upper = 2.0 * M_PI;
    p.scale = 1.0;
    return p;
}

static sensim_status encoder_check(const sensim_encoder_params *p)
{
    if (p->mode != SENSIM_ENCODER_INCREMENTAL && p->mode != SENSIM_ENCODER_ABSOLUTE)
        return sensim_error(SENSIM_EINVAL, "encoder: unknown mode %d", (int)p->mode);
    /* Infinite bounds are allowed: an unbounded encoder neither wraps nor
     * clamps on that side (the rig's default for source: distance). */
    if (isnan(p->lower) || isnan(p->upper) || !(p->upper > p->lower))
        return sensim_error(SENSIM_EINVAL, "encoder: range must have upper > lower, got [%g, %g]", p->lower, p->upper);
    if (!finite_nonneg(p->resolution) || !finite_nonneg(p->noise_sigma) || !isfinite(p->scale))
        return sensim_error(SENSIM_EINVAL,
                            "encoder: resolution and noise sigma must be finite and >= 0, scale finite "
                            "(got %g, %g, %g)",
                            p->resolution, p->noise_sigma, p->scale);
    if (p->counter_bits < 0 || p->counter_bits > 62 ||
        (p->counter_bits && !(p->resolution > 0.0 && p->mode == SENSIM_ENCODER_INCREMENTAL)))
        return sensim_error(SENSIM_EINVAL,
                            "encoder: counter_bits must be 0 or 1..62 with a resolution > 0 on an "
                            "incremental encoder (got %d bits, resolution %g)",
                            p->counter_bits, p->resolution);
    return SENSIM_OK;
}

MODEL(sensim_encoder, "encoder", encoder_check)

void sensim_encoder_apply(const sensim_encoder *e, sensim_encoder_state *st, size_t n, const double *t, const double *u,
                          double *position, double *speed)
{
    const sensim_encoder_params *p = &e->p;
    const double range = p->upper - p->lower;
    const int wraps = p->mode == SENSIM_ENCODER_INCREMENTAL && isfinite(range);
    const int bits = p->counter_bits;
    const uint64_t mask = bits ? ((uint64_t)1 << bits) - 1 : 0, half = bits ? (uint64_t)1 << (bits - 1) : 0;
    /* The largest change per sample the speed still tells right. */
    st->speed_limit = bits ? (double)half * p->resolution : wraps ? 0.5 * range : INFINITY;
    for (size_t i = 0; i < n; i++) {
        const uint64_t k = st->k++;
        const double us = p->scale * u[i];
        double v = us;
        if (k > 0 && fabs(us - st->u_prev) >= st->speed_limit) {
            st->overruns++;
            st->overrun_max = fmax(st->overrun_max, fabs(us - st->u_prev));
        }
        st->u_prev = us;
        if (p->noise_sigma > 0.0)
            v += p->noise_sigma * sensim_rng_normal(&st->rng, k);
        uint64_t counter = 0;
        if (p->resolution > 0.0) {
            const double pulses = floor(v / p->resolution);
            v = p->resolution * pulses;
            if (bits) /* pulses modulo 2^b, exact below 2^53 pulses */
                counter = (uint64_t)(int64_t)fmod(pulses, 9007199254740992.0) & mask;
        }
        if (wraps)
            v -= range * floor((v - p->lower) / range);
        else
            v = fmax(p->lower, fmin(v, p->upper));
        if (position)
            position[i] = v;

        /* The microcontroller sees readings, not the shaft: speed from the
         * change between differing readings over the time between them. */
        const int changed = bits ? counter != st->c_prev : v != st->r_prev;
        if (!st->have_prev) {
            st->have_prev = 1;
            st->t_change = t[i];
        } else if (changed) {
            double d = v - st->r_prev;
            if (bits) { /* the counter's change as a signed b-bit number */
                uint64_t dc = (counter - st->c_prev) & mask;
                d = (dc >= half ? (double)dc - (double)(mask + 1) : (double)dc) * p->resolution;
            } else if (wraps) /* shortest way across the wrap */
                d -= range * floor(d / range + 0.5);
            double dt = t[i] - st->t_change;
            st->speed = dt > 0.0 ? d / dt : 0.0;
            st->t_change = t[i];
            st->have_change = 1;
        } else {
            /* No edge yet: the shaft cannot be faster than one bin over the
             * time waited, so the reported speed decays to 0 at standstill. */
            double dt = t[i] - st->t_change;
            double bound = dt > 0.0 ? p->resolution / dt : INFINITY;
            if (fabs(st->speed) > bound)
                st->speed = copysign(bound, st->speed);
        }
        st->r_prev = v;
        st->c_prev = counter;
        if (speed)
            speed[i] = st->speed;
    }
}

/* ---- odometer ---- */

sensim_odometer_params sensim_odometer_default_params(void)
{
    sensim_odometer_params p;
    memset(&p, 0, sizeof p);
    p.wheel_radius = 0.1;
    return p;
}

static sensim_status odometer_check(const sensim_odometer_params *p)
{
    if (!(isfinite(p->wheel_radius) && p->wheel_radius > 0.0))
        return sensim_error(SENSIM_EINVAL, "odometer: wheel_radius must be finite and > 0, got %g", p->wheel_radius);
    if (!finite_nonneg(p->pulses_per_rev) || !finite_nonneg(p->noise_sigma))
        return sensim_error(SENSIM_EINVAL,
                            "odometer: pulses_per_rev and noise sigma must be finite and >= 0, got %g, %g",
                            p->pulses_per_rev, p->noise_sigma);
    if (!(isfinite(p->scale_error) && p->scale_error > -1.0) || !(isfinite(p->slip) && p->slip > -1.0))
        return sensim_error(SENSIM_EINVAL, "odometer: scale_error and slip must be finite and > -1, got %g, %g",
                            p->scale_error, p->slip);
    return SENSIM_OK;
}

MODEL(sensim_odometer, "odometer", odometer_check)

static double odo_reading(const sensim_odometer *o, sensim_odometer_state *st, double angle)
{
    const sensim_odometer_params *p = &o->p;
    const uint64_t k = st->k++;
    if (p->pulses_per_rev > 0.0) {
        double res = 2.0 * M_PI / p->pulses_per_rev;
        angle = res * floor(angle / res);
    }
    double d = p->wheel_radius * (1.0 + p->scale_error) * angle;
    if (p->noise_sigma > 0.0)
        d += p->noise_sigma * sensim_rng_normal(&st->rng, k);
    return d;
}

void sensim_odometer_apply_angle(const sensim_odometer *o, sensim_odometer_state *st, size_t n, const double *angle,
                                 double *distance)
{
    for (size_t i = 0; i < n; i++)
        distance[i] = odo_reading(o, st, angle[i]);
}

void sensim_odometer_apply_speed(const sensim_odometer *o, sensim_odometer_state *st, size_t n, const double *t,
                                 const double *speed, double *distance)
{
    const double gain = (1.0 + o->p.slip) / o->p.wheel_radius;
    for (size_t i = 0; i < n; i++) {
        if (st->have_prev)
            st->angle += gain * 0.5 * (speed[i] + st->v_prev) * (t[i] - st->t_prev);
        st->have_prev = 1;
        st->t_prev = t[i];
        st->v_prev = speed[i];
        distance[i] = odo_reading(o, st, st->angle);
    }
}

/* ---- rig YAML (keys documented in sensim-inject(1)) ---- */

void sensim_encoder_print(const sensim_encoder *e, FILE *f)
{
    const sensim_encoder_params *p = &e->p;
    fprintf(f, "encoder (%s) over [%g, %g], resolution %g, noise sigma %g, scale %g, counter %d bits\n",
            p->mode == SENSIM_ENCODER_ABSOLUTE ? "absolute" : "incremental", p->lower, p->upper, p->resolution,
            p->noise_sigma, p->scale, p->counter_bits);
}

void sensim_odometer_print(const sensim_odometer *o, FILE *f)
{
    const sensim_odometer_params *p = &o->p;
    fprintf(f, "odometer: wheel radius %g m, %g pulses/rev, scale error %g, slip %g, noise sigma %g m\n",
            p->wheel_radius, p->pulses_per_rev, p->scale_error, p->slip, p->noise_sigma);
}
