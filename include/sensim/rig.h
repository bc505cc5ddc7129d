/* sensim/rig.h - a rig: a seed and a list of sensors loaded from YAML, and
 * the registry of sensor types that `sensim inject` dispatches on.
 *
 * Rig YAML (see man sensim-inject and data/rigs/example.yaml):
 *   seed: 7
 *   sensors:
 *     - name: imu            # unique; also keys the sensor's random streams
 *       type: imu            # a registered type: imu, gnss, odometer, ...
 *       rate_hz: 400
 *       mount: { position: [0, 0, 0], orientation: [1, 0, 0, 0] }  # body frame
 *       timing: { lag: 0.002, clock_offset: 0, clock_drift: 0,
 *                 jitter: 0, collection_window: 0 }
 *       ...type-specific keys...
 *
 * Ownership: the rig owns its YAML document; each sensor's `node` is
 * borrowed from it. Models are created by the type's create() and destroyed
 * with the rig. */
#ifndef SENSIM_RIG_H
#define SENSIM_RIG_H

#include <stddef.h>
#include <stdint.h>

#include "sensim/linalg.h"
#include "sensim/log.h"
#include "sensim/status.h"
#include "sensim/yaml.h"

#ifdef __cplusplus
extern "C" {
#endif

#define SENSIM_NAME_MAX 64

/* Per-sensor timing (DESIGN.md "Time is explicit"). The sensor's own clock
 * reads t_s = t + clock_offset + clock_drift * t and samples every 1/rate on
 * it; a sample taken at true time t is delivered at true time
 * t + max(0, lag + jitter * N(0,1)), kept in order. collection_window: samples
 * average the signal over [t - window, t]. */
typedef struct sensim_timing {
    double lag;               /* s, >= 0 */
    double clock_offset;      /* s */
    double clock_drift;       /* s/s (e.g. 20e-6 for 20 ppm) */
    double jitter;            /* s, std of the delivery delay, >= 0 */
    double collection_window; /* s, >= 0 */
    double start_delay;       /* s, first sample no earlier than t0 + start_delay */
} sensim_timing;

typedef struct sensim_sensor_type sensim_sensor_type;

typedef struct sensim_sensor {
    char name[SENSIM_NAME_MAX];
    const sensim_sensor_type *type;
    uint32_t id;                 /* sensim_rng_sensor_id(name) */
    double rate_hz;              /* > 0; 0 when the type has no rate */
    sensim_vec3 mount_position;  /* m, body frame (lever arm) */
    sensim_quat mount_orientation; /* sensor to body */
    sensim_timing timing;
    /* The rig's `earth:` (default both 0): an IMU sees WGS84 normal gravity
     * at the vehicle's latitude and height instead of g0, and the Earth's
     * rotation (gyro: R^T Omega_ie; accelerometer: the Coriolis term
     * 2 Omega_ie x v), Omega_ie taken in the ground truth's ENU frame. */
    int earth_gravity, earth_rotation;
    const sensim_ynode *node;    /* the sensor's YAML mapping (borrowed) */
    void *model;                 /* created by type->create */
} sensim_sensor;

/* Options for one inject run. */
typedef struct sensim_inject_opts {
    uint64_t seed;   /* the rig's seed or the --seed override */
    int threads;     /* 0: OpenMP default */
    size_t block;    /* rows per streamed block (0: default 65536) */
    /* Called with a one-line message (no newline) for each condition that
     * does not stop a run but makes its output questionable (an encoder
     * counter wrapping more than half per sample, a trajectory leaving the
     * tangent-plane region); NULL: none reported. The library never prints. */
    void (*warn)(void *ctx, const char *msg);
    void *warn_ctx;
} sensim_inject_opts;

/* Formats a warning and passes it to o->warn (nothing when it is NULL). */
void sensim_inject_warn(const sensim_inject_opts *o, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;
/* A job's progress: called on the calling thread with the part being made
 * (a sensor's name) and the fraction of it done, 0 to 1. It must not call
 * sensim. */
typedef void (*sensim_progress_fn)(void *ctx, const char *part, double fraction);

struct sensim_sensor_type {
    const char *type;
    /* Type-specific keys accepted in the sensor mapping (NULL-terminated);
     * the common keys (name, type, rate_hz, mount, timing) are always allowed. */
    const char *const *keys;
    /* Parses the type-specific keys of s->node and sets s->model. Errors name
     * file, line and key. A model once set is the sensor's even when create
     * then fails: the loader's cleanup (sensim_rig_free) destroys it. */
    sensim_status (*create)(sensim_sensor *s);
    void (*destroy)(void *model);
    /* Simulates the sensor from the ground truth of `in`, writing
     * /sensors/<name>/ of `out` (datasets per DESIGN.md, units, attrs). */
    sensim_status (*simulate)(const sensim_sensor *s, const sensim_inject_opts *o, const sensim_log *in,
                              sensim_log *out);
    /* Adds noise to recorded clean data in /sensors/<name>/ of `in`, writing
     * the same group of `out`. NULL when the type cannot do it. */
    sensim_status (*noise_clean)(const sensim_sensor *s, const sensim_inject_opts *o, const sensim_log *in,
                                 sensim_log *out);
    /* Bytes a simulated sample writes (its datasets, DESIGN.md), for the
     * output estimate made before inject writes anything; 0: 256. */
    double sample_bytes;
};

/* The registered types: imu (sensim/imu.h), gnss (sensim/gnss.h), odometer
 * and encoder (sensim/odometer.h), camera (sensim/camera.h), lidar
 * (sensim/lidar.h). The table and the loader are in models/registry.c. */
const sensim_sensor_type *sensim_sensor_type_find(const char *type);

typedef struct sensim_rig {
    sensim_yaml *doc;
    uint64_t seed;
    int earth_gravity, earth_rotation; /* the rig's `earth:`, copied to each sensor */
    size_t nsensors;
    sensim_sensor *sensors;
} sensim_rig;

/* Loads and validates a rig file (all sensors created). NULL on error with
 * "file:line: ..." */
sensim_rig *sensim_rig_load(const char *path);
sensim_rig *sensim_rig_load_string(const char *text, const char *name);
void sensim_rig_free(sensim_rig *rig);
const sensim_sensor *sensim_rig_find(const sensim_rig *rig, const char *name);

/* ---- writing rigs (models/registry.c) ----
 * A rig is written with a sensim_ywriter (sensim/yaml.h): begin, then one
 * sensim_<type>_write_yaml per sensor, then sensim_ywriter_close. Names and
 * strings are quoted as YAML needs, numbers written to read back exactly. */

/* Fills s for writing: the name (copied; at most SENSIM_NAME_MAX - 1
 * bytes), the rate (0: none), no mount offset or rotation, zero timing. */
void sensim_sensor_init(sensim_sensor *s, const char *name, double rate_hz);
/* Writes "seed" (and "description" when not NULL) and opens "sensors". */
void sensim_rig_write_yaml_begin(sensim_ywriter *w, uint64_t seed, const char *description);
/* Opens a sensor's mapping and writes its common keys: name, type, rate_hz
 * (when > 0), mount (when not the identity at the origin: position, and
 * orientation as a quaternion), timing (its non-zero fields). The type's
 * writer adds its keys and closes the mapping. */
void sensim_sensor_write_yaml(sensim_ywriter *w, const sensim_sensor *s, const char *type);

/* Applies every sensor of the rig: writes a new log at out_path with the
 * input's ground truth copied through and /sensors/<name>/ for each sensor
 * (noised from the recorded clean data when the input has /sensors/<name>/,
 * simulated from /ground_truth otherwise). Attributes per DESIGN.md: type,
 * rate_hz, mount, seed, model. Written to a temporary name and renamed. */
sensim_status sensim_rig_inject(const sensim_rig *rig, const sensim_inject_opts *o, const char *in_path,
                                const char *out_path);
/* The same, reporting progress (NULL: none): each sensor at 0 when it
 * starts, then as it reads the ground truth forward (the fraction of
 * /ground_truth read; a sensor noised from recorded data reports only 0
 * and 1), and 1 when done. */
sensim_status sensim_rig_inject_progress(const sensim_rig *rig, const sensim_inject_opts *o, const char *in_path,
                                         const char *out_path, sensim_progress_fn progress, void *ctx);

/* Writes the common /sensors/<name> attributes (type, rate_hz, mount, seed,
 * model = the sensor's YAML as text). For types' simulate functions. */
sensim_status sensim_sensor_write_attrs(const sensim_sensor *s, const sensim_inject_opts *o, sensim_log *out);

/* True time of sample k: the sensor samples every 1/rate on its own clock
 * (tau = t + clock_offset + clock_drift t), starting at t_first + start_delay. */
double sensim_sensor_sample_time(const sensim_sensor *s, double t_first, uint64_t k);
/* The sensor clock's reading at true time t (its timestamp on a sample). */
double sensim_sensor_clock(const sensim_sensor *s, double t);
/* True time at which sample k taken at true time t reaches a consumer:
 * t + max(0, lag + jitter N(0,1)), N from the sensor's timing stream at k.
 * Callers keep delivery in order (a later sample never overtakes). */
double sensim_sensor_delivery_time(const sensim_sensor *s, uint64_t seed, uint64_t k, double t);

/* The sampling every type's simulate shares (imu, gnss, odometer, encoder):
 * sample k at sensim_sensor_sample_time, stamped with sensim_sensor_clock,
 * delivered at sensim_sensor_delivery_time but never before (or with) the
 * previous sample, and its collection window [t - W, t] read at
 * SENSIM_WINDOW_POINTS midpoints (one point, t itself, without a window).
 * A plain value; one per sensor run. */
#define SENSIM_WINDOW_POINTS 32

typedef struct sensim_sampler {
    const sensim_sensor *s;
    uint64_t seed;
    double t_first, t_last; /* the ground truth's span */
    double last_delivery;
    uint64_t k;             /* index of the next sample */
    int points;             /* collection-window points: 1 or SENSIM_WINDOW_POINTS */
} sensim_sampler;

typedef struct sensim_sample {
    uint64_t k;        /* sample index since the first */
    double t;          /* true sample time, in [t_first, t_last] */
    double t_sensor;   /* the sensor clock's stamp */
    double t_delivery; /* true time a consumer receives it, increasing */
} sensim_sample;

void sensim_sampler_init(sensim_sampler *sp, const sensim_sensor *s, uint64_t seed, double t_first, double t_last);
/* 1 and the next sample, or 0 once its time is past t_last. */
int sensim_sampler_next(sensim_sampler *sp, sensim_sample *out);
/* Time of window point j (0 <= j < sp->points) of a sample at t: the
 * midpoint rule over [t - W, t], times before t_first held at t_first. The
 * mean of a signal over these points is the sample's value. */
double sensim_sampler_window_time(const sensim_sampler *sp, double t, int j);
/* The error for a run that produced no sample (sp->k == 0), saying why: a
 * timing.start_delay reaching past the ground truth (naming the rig line),
 * or a clock offset putting every sample outside it. `in` names the log. */
sensim_status sensim_sampler_no_sample_error(const sensim_sampler *sp, const sensim_log *in);

#ifdef __cplusplus
}
#endif
#endif
