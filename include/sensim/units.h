/* sensim/units.h - datasheet unit strings to SI, with dimension checking.
 *
 * Units are SI inside sensim; datasheet units are converted at the boundary
 * (YAML loading, `sensim datasheet`). A quantity string is a number followed
 * by an optional unit expression: "0.66 deg/sqrt(h)", "36 ug", "4.6 deg/h",
 * "0.23 mg/sqrt(Hz)", "0.11 m/s/sqrt(h)", "1.5e-3 rad/s^2/sqrt(Hz)",
 * "50 uT", "200 ppm", "0.5 %". Expressions combine known units with '*',
 * '/', integer powers ("s^2", or "s2" straight after the unit), and sqrt(...)
 * or the root sign ("√Hz"). Known units: m km cm mm um nm; s sec ms us ns min
 * h hr; Hz kHz; rad mrad urad deg degree degrees arcmin arcsec; g mg ug
 * (standard gravity 9.80665 m/s^2); T mT uT nT G mG (gauss, also spelt out); ppm %; and the
 * datasheet shorthands dps (deg/s), dph (deg/h), rtHz (sqrt(Hz)), rth and
 * rthr (sqrt(h)). The micro sign (U+00B5) and the Greek mu (U+03BC) may
 * stand for u, and the degree sign (U+00B0) for deg. Powers "^-1" and half
 * powers in parentheses ("s^(3/2)", as sensim_dim_format writes them) are
 * also read.
 *
 * Dimensions are tracked as half-integer exponents of (m, s, rad, T), with
 * rad kept as a dimension so that an angular figure cannot be given where a
 * linear one is expected. A number with no unit is taken as SI and matches any
 * expected dimension.
 *
 * Thread safety: all functions are pure. */
#ifndef SENSIM_UNITS_H
#define SENSIM_UNITS_H

#include <stddef.h>

#include "sensim/status.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Exponents times two: {m, s, rad, T}. deg/sqrt(h) is {0, -1, 2, 0}. */
typedef struct sensim_dim {
    signed char m2, s2, rad2, t2;
} sensim_dim;

/* Common dimensions, named by what they measure. */
extern const sensim_dim SENSIM_DIM_NONE;                 /* scale factors, ppm, % */
extern const sensim_dim SENSIM_DIM_LENGTH;               /* m */
extern const sensim_dim SENSIM_DIM_TIME;                 /* s */
extern const sensim_dim SENSIM_DIM_FREQUENCY;            /* Hz = 1/s */
extern const sensim_dim SENSIM_DIM_ANGLE;                /* rad */
extern const sensim_dim SENSIM_DIM_ANGULAR_RATE;         /* rad/s (gyro bias, bias instability) */
extern const sensim_dim SENSIM_DIM_ANGULAR_RATE_DENSITY; /* rad/s/sqrt(Hz) = rad/sqrt(s) (ARW) */
extern const sensim_dim SENSIM_DIM_ANGULAR_RATE_RW;      /* rad/s^2/sqrt(Hz) = rad/s^(3/2) (K) */
extern const sensim_dim SENSIM_DIM_ANGULAR_RATE_RAMP;    /* rad/s^2 (R) */
extern const sensim_dim SENSIM_DIM_ACCEL;                /* m/s^2 */
extern const sensim_dim SENSIM_DIM_ACCEL_DENSITY;        /* m/s^2/sqrt(Hz) = m/s^(3/2) (VRW) */
extern const sensim_dim SENSIM_DIM_ACCEL_RW;             /* m/s^3/sqrt(Hz) = m/s^(5/2) */
extern const sensim_dim SENSIM_DIM_ACCEL_RAMP;           /* m/s^3 */
extern const sensim_dim SENSIM_DIM_VELOCITY;             /* m/s */
extern const sensim_dim SENSIM_DIM_MAGNETIC;             /* T */
extern const sensim_dim SENSIM_DIM_MAGNETIC_DENSITY;     /* T/sqrt(Hz) = T s^(1/2) */

int sensim_dim_equal(sensim_dim a, sensim_dim b);
/* Writes a readable SI form ("rad/s^(1/2)") into buf; returns buf. */
char *sensim_dim_format(sensim_dim d, char *buf, size_t size);

/* Parses "VALUE [UNIT]" into an SI value and its dimension. *has_unit is set
 * to 0 when no unit was written. Errors (SENSIM_EFORMAT) say what was not
 * understood ("unknown unit 'dph'"). */
sensim_status sensim_units_parse(const char *text, double *si, sensim_dim *dim, int *has_unit);

/* Parses and checks against the expected dimension; a plain number passes.
 * A mismatch is SENSIM_EINVAL: "'36 ug' is m/s^2, expected rad/s". */
sensim_status sensim_units_convert(const char *text, sensim_dim expected, double *si);

/* Converts an SI value to the unit expression `unit` (e.g. "deg/sqrt(h)"):
 * the inverse direction, for printing. The unit expression is checked; the
 * value carries no dimension, so use sensim_units_from_si_dim to check that
 * the unit measures what the value is. */
sensim_status sensim_units_from_si(double si, const char *unit, double *value);
/* Same, failing (SENSIM_EINVAL) when `unit` is not of dimension `dim`. */
sensim_status sensim_units_from_si_dim(double si, sensim_dim dim, const char *unit, double *value);

/* Parses a unit expression alone ("deg/sqrt(h)"; "" is 1) into the SI value
 * of one such unit and its dimension. */
sensim_status sensim_units_unit(const char *unit, double *scale, sensim_dim *dim);
/* Same, and writes into buf (may be NULL) the definitions of the units used,
 * for showing a conversion step by step: "deg = pi/180 rad; h = 3600 s". */
sensim_status sensim_units_explain(const char *unit, double *scale, sensim_dim *dim, char *buf, size_t size);

#ifdef __cplusplus
}
#endif
#endif
