/* sensim/odometer.h - encoder and wheel odometer models (AGX Sensor, seed
 * 002 sections 5-6; MODELS.md "Odometer and encoder").
 *
 * Encoder: u -> scale * u -> + N(0, sigma^2) -> resolution binning
 * res * floor(u / res) -> incremental mode wraps into [lower, upper),
 * absolute mode clamps to [lower, upper]. Speed is what a microcontroller
 * reports: the change between the last two differing readings over the
 * time between them; while the reading does not change, its magnitude is
 * bounded by resolution / (time since the last change), so it decays to
 * zero when the shaft stops. With counter_bits = b > 0 the reading is also
 * counted, as a real incremental encoder's pulses are, in a b-bit counter:
 * speed comes from the counter's change taken modulo 2^b into
 * [-2^(b-1), 2^(b-1)), so it is right while the shaft turns less than
 * 2^(b-1) resolution steps per sample (without a counter, less than half the
 * wrap range: beyond it the speed aliases, a 200 rad/s shaft read at 50 Hz
 * over [0, 2 pi) giving -114 rad/s). Samples past that limit are counted in
 * the state (overruns) so that a caller can warn.
 *
 * Odometer: distance = R_wheel * (1 + scale_error) * binned wheel angle
 * + N(0, sigma^2), the angle binned by 2 pi / pulses_per_rev. The wheel angle
 * is given, or integrated (trapezoid) from a forward ground speed and the
 * wheel radius with a slip ratio: angle rate = (1 + slip) * v / R_wheel.
 *
 * Random draws come from (seed, sensor id, stream) indexed by sample since
 * the start of the run, so output is bit-identical for any block size.
 *
 * Ownership: create copies the parameters; states are caller-owned values.
 * Thread safety: models are immutable after create; a state belongs to one
 * thread at a time. */
#ifndef SENSIM_ODOMETER_H
#define SENSIM_ODOMETER_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "sensim/model.h"
#include "sensim/rng.h"
#include "sensim/status.h"
#include "sensim/yaml.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---- encoder ---- */

typedef enum sensim_encoder_mode {
    SENSIM_ENCODER_INCREMENTAL, /* wraps into [lower, upper): rotary without index */
    SENSIM_ENCODER_ABSOLUTE     /* clamps to [lower, upper] */
} sensim_encoder_mode;

typedef struct sensim_encoder_params {
    sensim_encoder_mode mode;
    double lower, upper; /* measurement range (rad or m), upper > lower; an infinite
                          * bound neither wraps nor clamps (unbounded) */
    double resolution;   /* bin width (rad or m); 0: no binning */
    double noise_sigma;  /* std of the Gaussian noise before binning */
    double scale;        /* multiplies the input (1: none) */
    int counter_bits;    /* width of the pulse counter, 1..62 (needs resolution > 0,
                          * incremental mode); 0: speed from the wrapped reading */
} sensim_encoder_params;

typedef struct sensim_encoder sensim_encoder;

typedef struct sensim_encoder_state {
    sensim_rng rng;
    uint64_t k;          /* samples processed */
    int have_prev;       /* a reading exists */
    int have_change;     /* a change has been seen */
    double r_prev;       /* previous reading */
    double t_change;     /* time of the last change */
    double speed;        /* last speed measured from a change */
    uint64_t c_prev;     /* counter value at the previous sample */
    double u_prev;       /* previous true (scaled) input */
    uint64_t overruns;   /* samples whose true change exceeded what the speed can tell */
    double overrun_max;  /* the largest such change per sample (rad or m) */
    double speed_limit;  /* that limit per sample (rad or m) */
} sensim_encoder_state;

/* sensim_encoder_default_params: incremental over [0, 2 pi), no binning, no
 * noise, scale 1. sensim_encoder_create validates and copies the
 * parameters; the noise comes from the stream of (seed, sensor_id). NULL
 * with a message naming the parameter. sensim_encoder_destroy,
 * sensim_encoder_params_of, sensim_encoder_print: sensim/model.h. */
SENSIM_MODEL_DECLARE(sensim_encoder);
/* Starts a run: no reading yet, sample index 0. */
void sensim_encoder_reset(const sensim_encoder *e, sensim_encoder_state *st);
/* n samples at times t (s, increasing) of the true position u: writes the
 * reading position[n] and speed[n] (either may be NULL). Never allocates. */
void sensim_encoder_apply(const sensim_encoder *e, sensim_encoder_state *st, size_t n, const double *t,
                          const double *u, double *position, double *speed);

/* ---- odometer ---- */

typedef struct sensim_odometer_params {
    double wheel_radius;   /* m, > 0 */
    double pulses_per_rev; /* encoder pulses per wheel revolution; 0: no binning */
    double scale_error;    /* relative error of the radius the odometer assumes */
    double slip;           /* wheel over-rotation ratio (speed input only) */
    double noise_sigma;    /* m, Gaussian noise on the distance */
} sensim_odometer_params;

typedef struct sensim_odometer sensim_odometer;

typedef struct sensim_odometer_state {
    sensim_rng rng;
    uint64_t k;
    int have_prev;
    double t_prev, v_prev; /* for integrating a speed input */
    double angle;          /* integrated true wheel angle, rad */
} sensim_odometer_state;

/* sensim_odometer_default_params: radius 0.1 m, no binning, no errors.
 * sensim_odometer_create validates and copies the parameters; the noise
 * comes from the stream of (seed, sensor_id). NULL with a message naming
 * the parameter. sensim_odometer_destroy, sensim_odometer_params_of,
 * sensim_odometer_print: sensim/model.h. */
SENSIM_MODEL_DECLARE(sensim_odometer);
/* Starts a run: wheel angle 0, sample index 0. */
void sensim_odometer_reset(const sensim_odometer *o, sensim_odometer_state *st);
/* From the wheel angle (rad, unwrapped) per sample. */
void sensim_odometer_apply_angle(const sensim_odometer *o, sensim_odometer_state *st, size_t n, const double *angle,
                                 double *distance);
/* From the forward ground speed (m/s, signed) at times t: the wheel angle is
 * integrated from zero at the first sample. */
void sensim_odometer_apply_speed(const sensim_odometer *o, sensim_odometer_state *st, size_t n, const double *t,
                                 const double *speed, double *distance);

/* Parse the type-specific keys of a rig sensor mapping (see man
 * sensim-inject(1), OTHER SENSOR TYPES) into *p (preset by the
 * caller). An encoder with source: distance and no range is unbounded
 * (range [-inf, inf]). Errors name file, line and key. */
sensim_status sensim_encoder_params_from_yaml(const sensim_ynode *sensor_map, sensim_encoder_params *p);
sensim_status sensim_odometer_params_from_yaml(const sensim_ynode *sensor_map, sensim_odometer_params *p);

/* (models/odometer_rig.c) Write one odometer or encoder sensor of a rig:
 * the common keys of s (sensim_sensor_write_yaml) and each key where it
 * differs from the defaults, in SI. The encoder's source ("wheel",
 * "heading" or "distance"; NULL: not written, the default wheel) and the
 * radius of its wheel (written when > 0 and not the default 0.1 m) are
 * keys of the rig, not of sensim_encoder_params; a range is written when it
 * differs from the source's default and must then be finite. The parsers
 * read back what they wrote. */
struct sensim_sensor;
void sensim_odometer_write_yaml(sensim_ywriter *w, const struct sensim_sensor *s, const sensim_odometer_params *p);
void sensim_encoder_write_yaml(sensim_ywriter *w, const struct sensim_sensor *s, const sensim_encoder_params *p,
                               const char *source, double wheel_radius);

/* Rig sensor types (models/odometer_rig.c), sampled with the rig's timing
 * (sensim_sampler; the encoder's speed timed on the sensor clock), writing
 * /sensors/<name>/{t, t_sample, t_sensor} and: "odometer": forward speed
 * (body x axis of the ground-truth velocity, window mean) integrated into
 * /sensors/<name>/distance. "encoder": source wheel (angle of a wheel of
 * `wheel_radius` rolling with the forward speed), heading (unwrapped yaw)
 * or distance (along-track, m), into /sensors/<name>/{position, speed}. */
struct sensim_sensor_type;
extern const struct sensim_sensor_type sensim_odometer_type;
extern const struct sensim_sensor_type sensim_encoder_type;

#ifdef __cplusplus
}
#endif
#endif
