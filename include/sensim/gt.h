/* sensim/gt.h - ground truth (DESIGN.md /ground_truth): the one module that
 * reads, checks, streams, writes and interpolates it.
 *
 * Every sensor sees the truth through sensim_gt_interpolate, so an injected
 * IMU, GNSS or odometer and a rendered lidar or camera on the same log see
 * the same body state at the same instant: cubic Hermite position (from the
 * positions and velocities at both rows), linear velocity, acceleration and
 * angular velocity, slerp orientation, and the angular acceleration as the
 * slope of the angular velocity over the interval.
 *
 * Two ways to stream it, both with memory bounded by a row count whatever the
 * log's length:
 *   - a cursor (sensim_gt_cursor) for one thread querying forward in time
 *     (the models of sensim inject);
 *   - a window (sensim_gt_window) holding the rows around a span, queried
 *     from many threads at once between covers (the renderers, which cast
 *     every beam and sample at its own time in parallel loops).
 * Both evaluate sensim_gt_interpolate on the interval holding t, so for
 * the same t they agree to the last bit (at a row's exact time, where two
 * intervals meet, to the rounding of slerp and the linear terms; the
 * position is that row's either way).
 *
 * Ownership: a block owns its arrays; a cursor or window borrows its log
 * (the log must outlive it). Errors go to the per-thread message of
 * sensim/status.h and name the file, dataset and row. */
#ifndef SENSIM_GT_H
#define SENSIM_GT_H

#include <stddef.h>

#include "sensim/status.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct sensim_log sensim_log; /* sensim/log.h */

/* ---- rows ---- */

/* One block of ground-truth rows; arrays are owned by the block. */
typedef struct sensim_gt_block {
    size_t n, capacity;
    double *t;                /* [n] s */
    double *position;         /* [n*3] m, world ENU */
    double *orientation;      /* [n*4] (w,x,y,z) body to world */
    double *velocity;         /* [n*3] m/s, world */
    double *angular_velocity; /* [n*3] rad/s, body */
    double *acceleration;     /* [n*3] m/s^2, world, kinematic */
} sensim_gt_block;

sensim_status sensim_gt_block_init(sensim_gt_block *b, size_t capacity);
/* Frees the arrays; the block may be initialized again. */
void sensim_gt_block_free(sensim_gt_block *b);

/* Validates /ground_truth: every dataset present with the right shape and the
 * same length, at least 2 rows, t finite and strictly increasing, no NaN
 * anywhere, unit quaternions (|q| within 1e-3 of 1), streamed in blocks.
 * Sets *n and origin_lla (0,0,0 when the attribute is absent). */
sensim_status sensim_gt_check(const sensim_log *log, size_t *n, double origin_lla[3]);
/* Reads rows [row0, row0+count) into b (count <= b->capacity); reports
 * progress to the log's sensim_log_on_gt_read function. */
sensim_status sensim_gt_read(const sensim_log *log, size_t row0, size_t count, sensim_gt_block *b);

/* Streaming writer of /ground_truth (frame ENU, origin_lla; NULL origin is
 * 0,0,0). The log is borrowed. */
typedef struct sensim_gt_writer sensim_gt_writer;
sensim_gt_writer *sensim_gt_writer_create(sensim_log *log, const double origin_lla[3]);
sensim_status sensim_gt_writer_append(sensim_gt_writer *w, const sensim_gt_block *b);
/* Closes the datasets (call before sensim_log_commit). NULL is a no-op. */
void sensim_gt_writer_close(sensim_gt_writer *w);

/* ---- interpolation ---- */

typedef struct sensim_gt_state {
    double t;                   /* s */
    double position[3];         /* m, world ENU */
    double orientation[4];      /* (w,x,y,z) body to world (slerp: unit to rounding) */
    double velocity[3];         /* m/s, world */
    double angular_velocity[3]; /* rad/s, body */
    double acceleration[3];     /* m/s^2, world, kinematic */
    double angular_accel[3];    /* rad/s^2, body */
} sensim_gt_state;

/* The state at t over the interval between rows i and i + 1 of b
 * (i + 1 < b->n; t normally in [t_i, t_{i+1}], extrapolated otherwise).
 * Pure. At t = t_i the position is row i's exactly. */
void sensim_gt_interpolate(const sensim_gt_block *b, size_t i, double t, sensim_gt_state *s);
/* The interval of b holding t (b->n >= 2): the i with t_i <= t < t_{i+1},
 * the last interval for t >= t_{n-1}, the first for t < t_0. Pure. */
size_t sensim_gt_block_interval(const sensim_gt_block *b, double t);

/* ---- a cursor: one thread, queries moving forward ---- */

typedef struct sensim_gt_cursor sensim_gt_cursor;

/* Validates the log's ground truth (sensim_gt_check) and buffers its start;
 * buffer_rows (at least 16 used) bounds the memory. Queries before the
 * buffered rows reload them (any order works, only slower). */
sensim_gt_cursor *sensim_gt_cursor_create(const sensim_log *log, size_t buffer_rows);
void sensim_gt_cursor_destroy(sensim_gt_cursor *c);
size_t sensim_gt_cursor_rows(const sensim_gt_cursor *c);
double sensim_gt_cursor_t_first(const sensim_gt_cursor *c);
double sensim_gt_cursor_t_last(const sensim_gt_cursor *c);
const double *sensim_gt_cursor_origin(const sensim_gt_cursor *c);
/* State at time t, t_first <= t <= t_last (SENSIM_EINVAL outside). */
sensim_status sensim_gt_cursor_at(sensim_gt_cursor *c, double t, sensim_gt_state *s);

/* ---- a window: many threads, one span at a time ---- */

typedef struct sensim_gt_window sensim_gt_window;

/* Validates the log's ground truth (sensim_gt_check, streamed) and prepares
 * a window of `rows` rows (at least 2; at most the log's). Holds nothing
 * until the first cover. */
sensim_gt_window *sensim_gt_window_create(const sensim_log *log, size_t rows);
void sensim_gt_window_destroy(sensim_gt_window *w);
size_t sensim_gt_window_rows(const sensim_gt_window *w); /* rows in the log */
double sensim_gt_window_t_first(const sensim_gt_window *w);
double sensim_gt_window_t_last(const sensim_gt_window *w);
const double *sensim_gt_window_origin(const sensim_gt_window *w);
/* Makes the window answer every time in [tmin, tmax] (tmin <= tmax) as the
 * whole log would: it then holds a row strictly before tmin (or the log's
 * first) and one strictly after tmax (or the log's last). Loads rows only
 * when the current ones do not; grows past `rows` when the span needs more.
 * Not thread-safe: call between parallel loops. */
sensim_status sensim_gt_window_cover(sensim_gt_window *w, double tmin, double tmax);
/* State at t within the last cover's span; times outside the log are held
 * at its first or last row. Pure between covers: callable from many threads
 * at once. */
void sensim_gt_window_at(const sensim_gt_window *w, double t, sensim_gt_state *s);

#ifdef __cplusplus
}
#endif
#endif
