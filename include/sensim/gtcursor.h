/* sensim/gtcursor.h - ground truth as a function of time, streamed.
 *
 * A cursor buffers a window of /ground_truth rows and answers the state at
 * any time within the log by interpolation: cubic Hermite for position (from
 * position and velocity at both ends), linear for velocity, acceleration and
 * angular velocity, slerp for orientation; the angular acceleration is the
 * slope of the angular velocity over the interval. Queries should move
 * forward in time (as sensors sample); a query before the buffered window
 * reloads it, so any order works, only slower. Memory is bounded by the
 * buffer size, whatever the log length.
 *
 * Ownership: the cursor borrows the log (it must outlive the cursor). One
 * thread per cursor. */
#ifndef SENSIM_GTCURSOR_H
#define SENSIM_GTCURSOR_H

#include <stddef.h>

#include "sensim/log.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct sensim_gt_state {
    double t;
    double position[3];         /* m, world ENU */
    double orientation[4];      /* (w,x,y,z) body to world */
    double velocity[3];         /* m/s, world */
    double angular_velocity[3]; /* rad/s, body */
    double acceleration[3];     /* m/s^2, world, kinematic */
    double angular_accel[3];    /* rad/s^2, body */
} sensim_gt_state;

typedef struct sensim_gt_cursor sensim_gt_cursor;

/* Validates the log's ground truth (sensim_gt_check) and buffers its start. */
sensim_gt_cursor *sensim_gt_cursor_create(const sensim_log *log, size_t buffer_rows);
void sensim_gt_cursor_destroy(sensim_gt_cursor *c);
size_t sensim_gt_cursor_rows(const sensim_gt_cursor *c);
double sensim_gt_cursor_t_first(const sensim_gt_cursor *c);
double sensim_gt_cursor_t_last(const sensim_gt_cursor *c);
const double *sensim_gt_cursor_origin(const sensim_gt_cursor *c);
/* State at time t, t_first <= t <= t_last (SENSIM_EINVAL outside). */
sensim_status sensim_gt_cursor_at(sensim_gt_cursor *c, double t, sensim_gt_state *s);

#ifdef __cplusplus
}
#endif
#endif
