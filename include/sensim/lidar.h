/* sensim/lidar.h - lidar noise on replayed scans: range, angle and intensity
 * noise in sensor coordinates mapped back to x, y, z; range quantization;
 * dropouts (a general rate, CARLA's intensity rule) and a detection
 * threshold.
 *
 * Sensor coordinates (DESIGN.md lidar datasets): range r (m), azimuth a
 * (rad, from +x towards +y), elevation e (rad, above the xy plane);
 * x = r cos(e) cos(a), y = r cos(e) sin(a), z = r sin(e).
 *
 * Randomness: every draw is keyed by (seed, sensor id, stream) and indexed by
 * the point's global index in the log (its row in points), so the output is
 * the same whatever the thread count or the scan blocks.
 *
 * Ownership: the model copies its parameters; apply borrows the caller's
 * arrays for the call, never allocates, and may run concurrently on one
 * const model. */
#ifndef SENSIM_LIDAR_H
#define SENSIM_LIDAR_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "sensim/model.h"
#include "sensim/status.h"
#include "sensim/yaml.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct sensim_lidar_params {
    /* Range noise, AGX Sensor (seed 002 sec. 2.5): sigma = base + slope r. */
    double range_sigma_base;  /* m, >= 0 */
    double range_sigma_slope; /* m per m, >= 0 */
    double range_bias;        /* m, added to every range */
    double azimuth_sigma;     /* rad, >= 0 */
    double elevation_sigma;   /* rad, >= 0 */
    double intensity_sigma;   /* intensity units, >= 0; result clamped at 0 */
    double range_resolution;  /* m, >= 0; 0 = no quantization: r = round(r/q) q */
    /* Dropouts. General: each point is dropped with this probability
     * (CARLA dropoff_general_rate). */
    double dropoff_general_rate; /* [0, 1] */
    /* CARLA's intensity rule: a point with intensity i below
     * dropoff_intensity_limit is kept with probability
     * alpha i + beta, alpha = dropoff_zero_intensity/limit,
     * beta = 1 - dropoff_zero_intensity; i.e. dropped with probability
     * dropoff_zero_intensity at i = 0 falling linearly to 0 at the limit.
     * Off when dropoff_zero_intensity = 0. Intensity is the clean one. */
    double dropoff_intensity_limit; /* > 0 when the rule is on */
    double dropoff_zero_intensity;  /* [0, 1] */
    /* Detection threshold: points with (noisy) intensity below are dropped. */
    double min_intensity; /* -INFINITY (default) = off */
    double min_range, max_range; /* m; noisy ranges outside are dropped (0, INFINITY default) */
} sensim_lidar_params;

typedef struct sensim_lidar sensim_lidar;

/* sensim_lidar_default_params: all zero (no noise, no dropouts),
 * min_intensity -INFINITY, max_range INFINITY. sensim_lidar_create: NULL
 * with a message naming the bad parameter. sensim_lidar_destroy,
 * sensim_lidar_params_of, sensim_lidar_print: sensim/model.h. */
SENSIM_MODEL_DECLARE(sensim_lidar);

/* One block of points: n points with global indices first .. first+n-1.
 * Inputs: points[n*4] (x, y, z, intensity); range/azimuth/elevation may be
 * NULL (then computed from x, y, z). Outputs (n entries each, may alias the
 * inputs): points_out, range_out/azimuth_out/elevation_out (may be NULL),
 * keep[n] = 1 for a kept point, 0 for a dropped one. The caller compacts.
 * Non-finite inputs are dropped. Never allocates. *kept: count of kept. */
typedef struct sensim_lidar_block {
    size_t n;
    uint64_t first;
    const float *points;
    const float *range, *azimuth, *elevation;
    float *points_out;
    float *range_out, *azimuth_out, *elevation_out;
    uint8_t *keep;
} sensim_lidar_block;

sensim_status sensim_lidar_apply(const sensim_lidar *l, const sensim_lidar_block *b, size_t *kept);

/* The noise parameters of a rig sensor of type lidar (its noise: and
 * dropout: keys), borrowed from the sensor; NULL when s is not a lidar. For
 * callers that make scans themselves (sensim render --rig). */
struct sensim_sensor;
/* The rig sensor type "lidar" (models/lidar_rig.c): noise on recorded
 * scans, and the noise of rendered ones. */
struct sensim_sensor_type;
extern const struct sensim_sensor_type sensim_lidar_type;
const sensim_lidar_params *sensim_lidar_sensor_params(const struct sensim_sensor *s);
/* Range sigma at range r: base + slope r. */
double sensim_lidar_range_sigma(const sensim_lidar_params *p, double range);

/* (models/lidar_rig.c) Parses the noise and dropout keys of a rig sensor
 * mapping into *p, which the caller presets (usually with defaults); other
 * keys are ignored. Errors name file, line and key. */
sensim_status sensim_lidar_params_from_yaml(const sensim_ynode *sensor_map, sensim_lidar_params *p);
/* Writes one lidar sensor of a rig: the common keys of s
 * (sensim_sensor_write_yaml), noise (the range sigmas always, the rest
 * where it differs from the defaults) and dropout where any differs, in SI.
 * sensim_lidar_params_from_yaml reads back what it wrote. */
void sensim_lidar_write_yaml(sensim_ywriter *w, const struct sensim_sensor *s, const sensim_lidar_params *p);

#ifdef __cplusplus
}
#endif
#endif
