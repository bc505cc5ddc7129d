/* sensim/trajectory.h - analytic ground-truth trajectories.
 *
 * A planar vehicle in the ENU world (z up): body x forward, y left, z up.
 * Position is a closed-form function of time, and every other quantity is
 * its exact analytic derivative (no finite differences): world velocity and
 * kinematic acceleration, yaw = heading of the velocity (roll = pitch = 0),
 * body angular velocity (0, 0, yaw rate) and body angular acceleration. So a
 * noise model fed from these states sees kinematics that agree with each
 * other to rounding.
 *
 * Shapes (each starts at `start` with yaw `yaw` at time t0):
 *   static   at rest, facing `yaw`.
 *   line     straight along `yaw` at `speed`; with accel > 0 it starts from
 *            rest and accelerates at `accel` up to `speed`.
 *   circle   radius `radius` at constant `speed`, turning left (direction
 *            +1, counter-clockwise seen from above) or right (-1).
 *   sine     straight for `lead` metres, then a lane change of `width`
 *            metres to the left (negative: right) over `length` metres
 *            along track, then straight. The lateral offset is the cycloid
 *            y = W (s/L - sin(2 pi s/L) / (2 pi)): its curvature and so the
 *            lateral acceleration are continuous (a full sine period), unlike
 *            y = W/2 (1 - cos(pi s/L)), whose acceleration steps at both ends.
 *            `speed` is the along-track speed.
 *   figure8  lemniscate of Gerono x = A sin(th), y = (A/2) sin(2 th),
 *            th = 2 pi (t - t0)/period, A = size/2, long axis along `yaw`;
 *            the vehicle starts at the crossing heading 45 deg left of `yaw`,
 *            runs the right lobe clockwise, then the left lobe. Speed varies
 *            between A w sqrt(7)/4 and A w sqrt(2) (w = 2 pi/period) and is
 *            never zero. Periodic: every quantity repeats after `period`.
 *
 * Yaw is unwrapped analytically (it grows without bound on a circle), so the
 * quaternion (cos(yaw/2), 0, 0, sin(yaw/2)) is continuous in time.
 *
 * Ownership: sensim_trajectory_create copies the parameters; the object owns
 * nothing else. Thread safety: a created trajectory is immutable; eval and
 * fill are pure functions of their arguments and may run concurrently. */
#ifndef SENSIM_TRAJECTORY_H
#define SENSIM_TRAJECTORY_H

#include <stddef.h>
#include <stdint.h>

#include "sensim/linalg.h"
#include "sensim/log.h"
#include "sensim/status.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum sensim_trajectory_shape {
    SENSIM_TRAJ_STATIC,
    SENSIM_TRAJ_LINE,
    SENSIM_TRAJ_CIRCLE,
    SENSIM_TRAJ_SINE,
    SENSIM_TRAJ_FIGURE8
} sensim_trajectory_shape;

typedef struct sensim_trajectory_params {
    sensim_trajectory_shape shape;
    double t0;        /* s, time at which the motion starts */
    double start[3];  /* m, ENU position at t0 */
    double yaw;       /* rad, initial heading (figure8: long axis), counter-clockwise from east */
    double speed;     /* m/s: line cruise, circle, sine along-track (static/figure8: unused) */
    double accel;     /* m/s^2, line only: 0 = at speed from t0, > 0 = from rest */
    double radius;    /* m, circle */
    int direction;    /* circle: +1 left (counter-clockwise), -1 right */
    double width;     /* m, sine: lateral offset at the end (negative = to the right) */
    double length;    /* m, sine: along-track length of the lane change */
    double lead;      /* m, sine: straight distance before the lane change */
    double size;      /* m, figure8: extent along the long axis */
    double period;    /* s, figure8: time of one full figure */
} sensim_trajectory_params;

/* Defaults: line at 1 m/s east from the origin at t0 = 0; circle radius 10 m
 * to the left; sine 3.5 m wide, 30 m long after 20 m; figure8 size 20 m,
 * period 60 s. Change the shape and what it uses. */
sensim_trajectory_params sensim_trajectory_default_params(void);

/* "static", "line", "circle", "sine", "figure8" (also "figure-eight") to a
 * shape; SENSIM_EINVAL naming the word otherwise. */
sensim_status sensim_trajectory_shape_parse(const char *name, sensim_trajectory_shape *shape);
const char *sensim_trajectory_shape_name(sensim_trajectory_shape shape);

typedef struct sensim_trajectory sensim_trajectory;

/* Validates (finite values; positive speed for line, circle and sine;
 * positive radius, length, size and period; accel >= 0; direction +-1) and
 * returns a new trajectory, or NULL with a message naming the parameter. */
sensim_trajectory *sensim_trajectory_create(const sensim_trajectory_params *params);
void sensim_trajectory_destroy(sensim_trajectory *traj);
const sensim_trajectory_params *sensim_trajectory_params_of(const sensim_trajectory *traj);

typedef struct sensim_trajectory_state {
    double t;                          /* s */
    sensim_vec3 position;              /* m, world ENU */
    sensim_quat orientation;           /* body to world */
    sensim_vec3 velocity;              /* m/s, world */
    sensim_vec3 angular_velocity;      /* rad/s, body */
    sensim_vec3 acceleration;          /* m/s^2, world, kinematic (no gravity) */
    sensim_vec3 angular_acceleration;  /* rad/s^2, body */
    double yaw;                        /* rad, unwrapped */
} sensim_trajectory_state;

/* The state at time t (any real t; before t0 the line with accel > 0 rests
 * at start, the other shapes extend their formulas). Never fails or
 * allocates. */
void sensim_trajectory_eval(const sensim_trajectory *traj, double t, sensim_trajectory_state *state);

/* Fills n rows of a ground-truth block at t_k = t_start + k / rate_hz for
 * k = k0 .. k0+n-1 (computed from k, so any split into blocks gives the same
 * numbers); sets b->n = n. Needs n <= b->capacity (SENSIM_EINVAL otherwise)
 * and rate_hz > 0. Never allocates. */
sensim_status sensim_trajectory_fill(const sensim_trajectory *traj, double t_start, double rate_hz, uint64_t k0,
                                     size_t n, sensim_gt_block *b);

/* What sensim trajectory records in /ground_truth's `trajectory` attribute:
 * "shape=circle rate_hz=100 start_time=0 start=0,0,0 heading_deg=90" and the
 * parameters the shape uses (speed=..., radius=..., ...), %.17g each.
 * heading_deg is the compass heading as given (p->yaw holds it as ENU
 * yaw). Truncated to size (NUL-terminated). */
void sensim_trajectory_describe(const sensim_trajectory_params *p, double rate_hz, double heading_deg, char *buf,
                                size_t size);
/* Writes `rows` rows at t0 + k / rate_hz (t0 the trajectory's start time)
 * into /ground_truth of `log` (a writer; origin_lla NULL: 0,0,0) in blocks of
 * bounded size, with the attribute `trajectory` = desc unless desc is NULL.
 * progress (may be NULL) gets the rows written so far after each block. */
sensim_status sensim_trajectory_write(const sensim_trajectory *traj, double rate_hz, uint64_t rows,
                                      const double origin_lla[3], const char *desc, sensim_log *log,
                                      void (*progress)(void *ctx, uint64_t done, uint64_t rows), void *ctx);

#ifdef __cplusplus
}
#endif
#endif
