/* sensim/judge.h - the "judge" of seed 004: a planar extended Kalman filter
 * fusing IMU (yaw rate, planar specific force) and GNSS (ENU position) into
 * velocity estimates at a fixed output rate.
 *
 * Two modes:
 *  - SENSIM_JUDGE_ROBOT_LOCALIZATION reproduces ROS robot_localization's EKF
 *    in 2-D mode as used by seed 004 (MODELS.md "Sim2real: VEPD"): state
 *    [x, y, yaw, vx, vy, vyaw, ax, ay] with body-frame velocity and
 *    acceleration, constant-acceleration kinematics p += R(v dt + a dt^2/2),
 *    v += a dt, P = J P J^T + dt Q, Joseph-form updates, measurement
 *    variances floored at 1e-9, P0 = 1e-9 I, the IMU as a measurement of
 *    [vyaw, ax, ay] behind a Mahalanobis gate of 0.8 sigma, and GNSS as
 *    differential odometry: the position change over time is a measurement of
 *    the body velocity. Its traps are kept on purpose: the gate rejects most
 *    IMU samples, the zero covariance Chrono publishes becomes 1e-9 m^2 and
 *    the GNSS difference noise goes straight into the velocity.
 *  - SENSIM_JUDGE_CORRECTED: a loosely coupled INS/GNSS filter, state
 *    [pE, pN, vE, vN, yaw, gyro bias, accel bias x, y], the IMU as the
 *    input of a strapdown mechanization (its noise is process noise), GNSS as
 *    a position measurement with its own covariance (or a configured sigma
 *    when the covariance is missing or not positive definite), and a
 *    chi-squared gate on the GNSS innovation (2 dof) that gives way after a
 *    few consecutive rejections, so an outage cannot lock the filter out.
 *
 * Outputs are at t0 + k / rate_hz (t0 = the first IMU time) up to the last
 * measurement time; each is the filter state predicted to that time from the
 * measurements at or before it.
 *
 * Ownership: inputs are borrowed for the call; sensim_judge_output owns its
 * arrays (free with sensim_judge_output_free; NULL-safe). The streaming form
 * (sensim_judge_stream) reads through callbacks and owns its block buffers.
 * Thread safety: reentrant; no shared state. */
#ifndef SENSIM_JUDGE_H
#define SENSIM_JUDGE_H

#include <stddef.h>

#include "sensim/status.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum sensim_judge_mode {
    SENSIM_JUDGE_ROBOT_LOCALIZATION = 0,
    SENSIM_JUDGE_CORRECTED = 1
} sensim_judge_mode;

/* "robot_localization" / "corrected"; NULL for an unknown value. */
const char *sensim_judge_mode_name(sensim_judge_mode mode);
/* Parses a mode name (also "rl"); returns -1 if unknown. */
int sensim_judge_mode_parse(const char *name);

#define SENSIM_JUDGE_NSTATE 8

typedef struct sensim_judge_options {
    sensim_judge_mode mode;
    double rate_hz;         /* output rate, Hz (35, seed 004) */
    double gyro_sigma;      /* yaw-rate noise per sample, rad/s */
    double accel_sigma;     /* specific-force noise per sample, m/s^2 */
    double gnss_sigma;      /* m, per axis, used when a GNSS sample has no usable covariance */
    /* robot_localization mode */
    double process_noise[SENSIM_JUDGE_NSTATE]; /* diag Q of x y yaw vx vy vyaw ax ay (per s) */
    double initial_variance; /* P0 = this * I (1e-9) */
    double variance_floor;   /* measurement variances below are raised to it (1e-9) */
    double imu_gate_sigma;   /* Mahalanobis gate on the IMU, sigmas (0.8); <= 0: none */
    /* corrected mode */
    double gyro_bias_rw;    /* gyro bias random walk, rad/s/sqrt(s) */
    double accel_bias_rw;   /* accel bias random walk, m/s^2/sqrt(s) */
    double gnss_gate;       /* chi-squared (2 dof) gate on the GNSS innovation; <= 0: none */
    int gnss_gate_max_rejects; /* accept anyway after this many consecutive rejections */
    double min_gnss_variance;  /* m^2, floor of GNSS variances */
    /* Initial state, corrected mode: [pE, pN, vE, vN, yaw, bg, bax, bay]
     * with standard deviations. When have_initial is 0, the position comes
     * from the first GNSS sample (sd initial_sd[0..1]) and the rest from
     * initial_state. The robot_localization mode starts at zero with P0 as
     * robot_localization does, except for yaw = initial_state[4]. */
    int have_initial;
    double initial_state[SENSIM_JUDGE_NSTATE];
    double initial_sd[SENSIM_JUDGE_NSTATE];
    int want_covariance; /* fill sensim_judge_output.covariance */
} sensim_judge_options;

/* Defaults for a mode: the robot_localization numbers of MODELS.md, and for
 * the corrected mode a consumer-grade IMU (0.003 rad/s, 0.05 m/s^2 per
 * sample at 100 Hz) and 0.5 m GNSS. */
sensim_judge_options sensim_judge_default_options(sensim_judge_mode mode);

/* IMU samples: time (s, increasing), yaw rate (rad/s, body z), planar
 * specific force in the body frame with gravity removed (m/s^2). */
typedef struct sensim_judge_imu {
    size_t n;
    const double *t, *yaw_rate, *fx, *fy;
} sensim_judge_imu;

/* GNSS samples: time (s, increasing); ENU position with row stride
 * enu_stride (2 or 3: east, north[, up]); optional 3x3 row-major covariance
 * (m^2, 9 per sample, NULL when absent) of which the east/north block is
 * used. */
typedef struct sensim_judge_gnss {
    size_t n;
    const double *t;
    const double *enu;
    size_t enu_stride;
    const double *cov;
} sensim_judge_gnss;

typedef struct sensim_judge_output {
    size_t n;
    double *t;          /* [n] s */
    double *position;   /* [n*2] m, ENU east/north */
    double *velocity;   /* [n*2] m/s, world east/north */
    double *speed;      /* [n] m/s, horizontal */
    double *yaw;        /* [n] rad, heading of the body x axis from east, counter-clockwise */
    double *covariance; /* [n*25] of (pE, pN, vE, vN, yaw), row-major; NULL unless asked */
    size_t imu_used, imu_rejected, gnss_used, gnss_rejected;
} sensim_judge_output;

void sensim_judge_output_free(sensim_judge_output *out);

/* Runs the filter over all samples. IMU: n >= 2. GNSS: n >= 0 (an IMU-only
 * run dead-reckons). Errors name the sample: "judge: imu sample 41: time
 * 2.3 not after 2.3". */
sensim_status sensim_judge_run(const sensim_judge_options *opt, const sensim_judge_imu *imu,
                               const sensim_judge_gnss *gnss, sensim_judge_output *out);

/* ---- streaming: bounded memory for logs of any length ----
 *
 * The same filter over samples read in blocks through callbacks, with the
 * outputs handed over in blocks: memory is O(block), not O(log). The
 * results are bit-identical to sensim_judge_run for any block size
 * (sensim_judge_run is this with in-memory callbacks). */

/* Where the samples come from. read_imu fills rows [row0, row0 + n) of the
 * IMU: time, yaw rate, and planar specific force fx, fy (gravity removed);
 * read_gnss fills rows of the GNSS: time, east/north position (2 values per
 * row) and, when gnss_has_cov, the 3x3 covariance (9 per row, else NULL is
 * passed). Errors they return stop the run and are passed on. */
typedef struct sensim_judge_source {
    size_t n_imu, n_gnss;
    int gnss_has_cov;
    void *ctx;
    sensim_status (*read_imu)(void *ctx, size_t row0, size_t n, double *t, double *yaw_rate, double *fx,
                              double *fy);
    sensim_status (*read_gnss)(void *ctx, size_t row0, size_t n, double *t, double *enu2, double *cov9);
} sensim_judge_source;

/* Receives consecutive blocks of outputs (block->n rows, arrays owned by
 * the judge and valid during the call; the counters are running totals). A
 * non-zero return stops the run and is passed on. */
typedef sensim_status (*sensim_judge_sink)(void *ctx, const sensim_judge_output *block);

/* Runs the filter reading `block` rows at a time (>= 1) from each sensor.
 * On success *counts holds the number of outputs in n, the used/rejected
 * counters, and NULL arrays. Checks as sensim_judge_run, block by block
 * (errors name the sample's index in the whole series), so a bad sample
 * may be found after earlier blocks were delivered. */
sensim_status sensim_judge_stream(const sensim_judge_options *opt, const sensim_judge_source *src, size_t block,
                                  sensim_judge_sink sink, void *sink_ctx, sensim_judge_output *counts);

/* ---- a log as the judge's input (sensim judge, sensim sim2real) ---- */

/* Rows read per block: memory stays bounded for logs of any length; results
 * do not depend on it. */
#define SENSIM_JUDGE_LOG_BLOCK 65536

typedef struct sensim_log sensim_log; /* sensim/log.h */
typedef struct sensim_judge_log sensim_judge_log;

/* Opens the judge's input in `log` (borrowed; it must outlive the reader):
 * the IMU and the GNSS named imu_name / gnss_name (groups under /sensors),
 * or when NULL the only one of each type (a group with attribute
 * type="imu" / "gnss", else, for logs from elsewhere, one named imu, gnss
 * or gps). Checks their datasets: IMU t, angular_velocity [n,3] and
 * specific_force [n,3]; GNSS t, enu [n,3] and, if present,
 * position_covariance [n,9]. With align set and a /ground_truth in the log,
 * starts o from the truth's heading, velocity and position at the first
 * IMU sample (o->have_initial, initial_state, initial_sd). NULL on error:
 * ENOTFOUND (no such sensor, or several to choose from), EFORMAT (shapes),
 * naming the file and group. */
sensim_judge_log *sensim_judge_log_open(const sensim_log *log, const char *imu_name, const char *gnss_name, int align,
                                        sensim_judge_options *o);
void sensim_judge_log_close(sensim_judge_log *j);
/* The groups chosen ("/sensors/NAME"; borrowed) and their rows. */
const char *sensim_judge_log_imu(const sensim_judge_log *j);
const char *sensim_judge_log_gnss(const sensim_judge_log *j);
size_t sensim_judge_log_imu_rows(const sensim_judge_log *j);
/* Runs sensim_judge_stream over the log in blocks of SENSIM_JUDGE_LOG_BLOCK
 * rows; errors are prefixed with the log's path. progress (may be NULL) is
 * told ("IMU and GNSS", fraction of the IMU rows read) after each block. */
sensim_status sensim_judge_log_stream(sensim_judge_log *j, const sensim_judge_options *o, sensim_judge_sink sink,
                                      void *sink_ctx, sensim_judge_output *counts,
                                      void (*progress)(void *ctx, const char *part, double fraction),
                                      void *progress_ctx);
/* Judges the log at in_path (sensim_judge_log_open with imu_name,
 * gnss_name, align and o) into a new log at out_path, written atomically:
 * its /ground_truth, /sensors and /estimates copied, and the estimate as
 * /estimates/NAME (t s, velocity [n,3] m/s with z 0, speed m/s, position
 * [n,2] m, yaw rad; attributes judge, imu, gnss, rate_hz, gyro_sigma,
 * accel_sigma, gnss_sigma). EINVAL when /estimates/NAME exists. counts
 * (may be NULL) gets the totals; progress as sensim_judge_log_stream. */
sensim_status sensim_judge_log_write(const char *in_path, const char *out_path, const char *imu_name,
                                     const char *gnss_name, int align, sensim_judge_options *o, const char *name,
                                     sensim_judge_output *counts,
                                     void (*progress)(void *ctx, const char *part, double fraction),
                                     void *progress_ctx);

#ifdef __cplusplus
}
#endif
#endif
