/* sensim/gnss.h - GNSS receiver model: position error processes in metres
 * (Chrono "Ch:Gauss", Chrono "Ch:RW", first-order Gauss-Markov), AirSim's
 * EPH/EPV low-pass with fix type, measurement covariance from HDOP
 * (ROS nmea_navsat_driver, or seed 004's (0.02*eph)^2), velocity noise,
 * start-up delay, latency, outages and outliers. Every effect is optional and
 * they combine: the position error is the sum of the enabled processes.
 * Output positions are converted to WGS84 latitude/longitude/height on the
 * ellipsoid (not a sphere) from a local ENU frame at `origin_lla`.
 *
 * Use: params = sensim_gnss_default_params(), set fields (or
 * sensim_gnss_params_from_yaml), g = sensim_gnss_create(&params, seed,
 * sensor_id); sensim_gnss_reset(g, &st, t_power_on); then call
 * sensim_gnss_apply() on consecutive blocks of epochs. Random draws are pure
 * functions of (seed, sensor id, stream, index) where the index counts
 * epochs (or inner random-walk steps, or outages) since power-on, so the
 * output is bit-identical whatever the block sizes.
 *
 * Ownership: create copies the parameters; the model owns nothing else.
 * The state is a plain value owned by the caller.
 * Thread safety: a model is immutable after create and may be shared; a
 * state belongs to one thread at a time (the processes are sequential). */
#ifndef SENSIM_GNSS_H
#define SENSIM_GNSS_H

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

#define SENSIM_GNSS_MAX_OUTAGES 64

/* Fix types written to the `fix` dataset: AirSim GnssFixType values for
 * none, 2D and 3D; RTK fixed and float take NMEA GGA's quality numbers 4
 * and 5 (they refine a 3D fix). */
#define SENSIM_GNSS_FIX_NONE 0
#define SENSIM_GNSS_FIX_2D 2
#define SENSIM_GNSS_FIX_3D 3
#define SENSIM_GNSS_FIX_RTK_FIXED 4
#define SENSIM_GNSS_FIX_RTK_FLOAT 5
#define SENSIM_GNSS_FIX_TYPES 6

typedef enum sensim_gnss_cov_model {
    SENSIM_GNSS_COV_NONE,   /* zeros, as Chrono passes to the estimator */
    SENSIM_GNSS_COV_NMEA,   /* nmea_navsat_driver: diag((h e)^2, (h e)^2, (2 h 2e)^2), e the
                             * driver's epe for each epoch's fix (none 1e6, RTK fixed 0.02,
                             * float 4.0, 2D/3D cov_epe) */
    SENSIM_GNSS_COV_SCALED, /* seed 004: diag((s eph)^2, (s eph)^2, (s epv)^2) */
    SENSIM_GNSS_COV_NOISE   /* the stationary variance of the enabled error processes */
} sensim_gnss_cov_model;

typedef struct sensim_gnss_params {
    double origin_lla[3]; /* deg, deg, m on WGS84; the ENU frame's origin */
    double start_delay;   /* s after power-on before the first delivered epoch (>= 0) */
    double latency;       /* s added to each epoch's time for delivery (>= 0) */

    /* Chrono Ch:Gauss: white N(0, sigma^2) per ENU axis, metres. */
    int gauss_on;
    double gauss_sigma[3];

    /* Chrono Ch:RW (ChNoiseRandomWalks::AddNoise; seed 004 appendix): inner
     * steps h = min(1/model_rate, remaining), a ~ N(-0.2 sigma e / max_error,
     * sigma^2) per axis, clamped to +-max_acceleration, v += a h with |v|
     * capped at max_velocity, e += v h. */
    int rw_on;
    double rw_sigma;            /* m/s^2, std of the error's acceleration */
    double rw_model_rate_hz;    /* inner model rate (> 0) */
    double rw_max_velocity;     /* m/s (Chrono default 0.03) */
    double rw_max_acceleration; /* m/s^2 (Chrono default 0.005) */
    double rw_max_error;        /* m, the pull-back scale D (Chrono: 1) */

    /* First-order Gauss-Markov per axis: stationary std sigma, correlation
     * time tau; exact discretization e' = phi e + sigma sqrt(1-phi^2) w,
     * phi = exp(-dt/tau) at the actual dt; starts from its stationary law. */
    int gm_on;
    double gm_sigma[3]; /* m */
    double gm_tau[3];   /* s (> 0) */

    /* AirSim GpsSimple: eph <- alpha eph + (1-alpha) eph_final, alpha =
     * exp(-dt/tau), from power-on; same for epv. Written as `hdop`. */
    int hdop_on;
    double eph_initial, eph_final, eph_tau; /* AirSim: 100, 0.1, 0.9 s */
    double epv_initial, epv_final, epv_tau;
    double fix_3d_max; /* eph <= this: 3D fix (AirSim eph_min_3d = 3) */
    double fix_2d_max; /* eph <= this: 2D fix (AirSim eph_min_2d = 4), else none */

    sensim_gnss_cov_model cov_model;
    double cov_epe;   /* m, NMEA: epe of the quality reported for 2D/3D fixes (GPS 4.0, DGPS 0.1,
                       * RTK fixed 0.02, ...) */
    double cov_scale; /* SCALED: 0.02 in seed 004 */

    double vel_sigma[3]; /* m/s, white noise on the velocity output per ENU axis */

    /* Outages: no epoch is delivered inside [start, end) of a listed window
     * (times on the input's clock) nor inside a random outage. Random
     * outages start at rate `outage_rate` (1/s, Poisson in the time between
     * outages) and last Exp(mean `outage_mean_duration`) seconds. */
    size_t n_outage_windows;
    double outage_windows[SENSIM_GNSS_MAX_OUTAGES][2];
    double outage_rate;
    double outage_mean_duration;

    /* Outliers (multipath-like jumps): with probability `outlier_probability`
     * per epoch, the position is off by `outlier_magnitude` metres in a
     * uniformly random direction. */
    double outlier_probability;
    double outlier_magnitude;

    /* Fix-quality-dependent noise: white N(0, fix_sigma[f][axis]^2) added
     * at each epoch whose fix type is f (SENSIM_GNSS_FIX_*), metres. */
    int fix_noise_on;
    double fix_sigma[SENSIM_GNSS_FIX_TYPES][3];

    /* RTK: a 3D fix is RTK fixed or RTK float by a two-state Markov chain
     * in continuous time (exponential holding times of means
     * rtk_mean_fixed and rtk_mean_float, s); the receiver starts in float
     * at power-on, as it does until the ambiguities resolve. */
    int rtk_on;
    double rtk_mean_fixed, rtk_mean_float;

    /* Multipath bursts: a random telegraph; bursts start at rate
     * `multipath_rate` (1/s, Poisson while none is on) and last
     * Exp(mean `multipath_mean_duration`) s; during burst j the position is
     * off by a constant bias b_j ~ N(0, diag(multipath_sigma^2)).
     * The fraction of time in bursts is r d / (1 + r d) for rate r and mean
     * duration d. */
    double multipath_rate;
    double multipath_mean_duration;
    double multipath_sigma[3];
} sensim_gnss_params;

typedef struct sensim_gnss sensim_gnss;

/* Everything a run carries from one block to the next. */
typedef struct sensim_gnss_state {
    sensim_rng rng;     /* key (seed, sensor); streams are per effect and axis */
    double t_on;        /* power-on time */
    double t_prev;      /* time of the previous epoch (t_on before the first) */
    uint64_t k;         /* epochs processed */
    double rw_t;        /* time the random walk was integrated to */
    uint64_t rw_steps;  /* inner random-walk steps taken */
    double rw_v[3], rw_e[3];
    double gm_e[3];
    uint64_t outage_j;  /* random outages drawn */
    double outage_start, outage_end;
    uint64_t rtk_j;     /* RTK float periods drawn */
    double rtk_start, rtk_end; /* the current or next float period */
    uint64_t mp_j;      /* multipath bursts drawn */
    double mp_start, mp_end;
} sensim_gnss_state;

/* One block of outputs; any pointer may be NULL to skip that output.
 * Row i of each array belongs to the i-th delivered epoch. */
typedef struct sensim_gnss_out {
    double *t;          /* [n] s, delivery time = epoch time + latency */
    double *t_sample;   /* [n] s, epoch (measurement) time */
    uint64_t *epoch;    /* [n] epoch index since power-on */
    double *lla;        /* [n*3] deg, deg, m (WGS84 ellipsoidal height) */
    double *enu;        /* [n*3] m, local ENU at origin_lla */
    double *velocity;   /* [n*3] m/s, ENU */
    double *hdop;       /* [n] the filtered EPH (0 without the hdop model, as Chrono) */
    double *covariance; /* [n*9] m^2, row-major ENU */
    int8_t *fix;        /* [n] SENSIM_GNSS_FIX_* */
} sensim_gnss_out;

/* sensim_gnss_default_params: every effect off, origin (0, 0, 0), no delay;
 * when an effect is switched on, its other fields hold the published
 * defaults (Chrono's RW v_max 0.03, a_max 0.005, D = 1 m, model rate 100 Hz;
 * AirSim's HDOP 100 -> 0.1, tau 0.9 s, fix thresholds 3 and 4; nmea epe
 * 4.0; scale 0.02).
 * sensim_gnss_create validates and copies the parameters; every draw comes
 * from the streams of (seed, sensor_id). NULL on error ("gnss: rw_sigma
 * must be >= 0, got -1"). sensim_gnss_params_of: the parameters the model
 * was created with (borrowed). sensim_gnss_print describes the model (its
 * effects and their parameters) on f. sensim_gnss_destroy: sensim/model.h. */
SENSIM_MODEL_DECLARE(sensim_gnss);

/* Starts a run: processes at their initial values, power-on at t_on. */
void sensim_gnss_reset(const sensim_gnss *g, sensim_gnss_state *st, double t_on);

/* Processes n epochs at times t[i] (s, increasing, >= t_on) with the
 * antenna's true ENU position and velocity (position [n*3] m, velocity [n*3]
 * m/s or NULL for zero). Epochs before t_on + start_delay or inside an
 * outage advance the processes but are not delivered. Returns the number of
 * delivered rows written to `out` (<= n). Never allocates. */
size_t sensim_gnss_apply(const sensim_gnss *g, sensim_gnss_state *st, size_t n, const double *t,
                         const double *position, const double *velocity, const sensim_gnss_out *out);

/* (models/gnss_rig.c) Parses the GNSS keys of a rig sensor mapping (see sensim-inject(1), OTHER SENSOR TYPES)
 * into *p, which the caller presets (usually with defaults). Errors name
 * file, line and key. */
sensim_status sensim_gnss_params_from_yaml(const sensim_ynode *sensor_map, sensim_gnss_params *p);

/* (models/gnss_rig.c) Writes one gnss sensor of a rig: the common keys of
 * s (sensim_sensor_write_yaml) and each GNSS key where it differs from the
 * defaults, in SI: origin_lla when not (0, 0, 0); the position noise
 * models switched on (a list when more than one); hdop, and vdop when it
 * differs from hdop; covariance by epe (not quality). start_delay and
 * latency are the rig's timing, not keys. sensim_gnss_params_from_yaml
 * reads back what it wrote. */
struct sensim_sensor;
void sensim_gnss_write_yaml(sensim_ywriter *w, const struct sensim_sensor *s, const sensim_gnss_params *p);

/* The rig sensor type "gnss" (models/gnss_rig.c): samples the ground truth
 * with the rig's timing (sensim_sampler: clock offset and drift, start
 * delay, collection window, ordered delivery with lag and jitter), moves it
 * to the antenna (mount.position is the lever arm), applies the model
 * (powered on at the first ground-truth time; its own start_delay and
 * latency unused) and writes /sensors/<name>/{t, t_sample, t_sensor, lla,
 * enu, velocity, hdop, position_covariance, fix}. */
struct sensim_sensor_type;
extern const struct sensim_sensor_type sensim_gnss_type;

#ifdef __cplusplus
}
#endif
#endif
