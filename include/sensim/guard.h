/* sensim/guard.h - guards against runaway output.
 *
 * A ground truth whose nanosecond timestamps were read as seconds once made
 * `inject` write a 44.7 GB temporary file for ten minutes without a word.
 * Commands that write rate x duration samples estimate the output first and
 * refuse, naming the figure and the likely cause, when it exceeds the free
 * space or an implausible size; times that cannot be seconds are refused
 * where they are read.
 *
 * Thread safety: pure functions (the free space is read with statvfs). */
#ifndef SENSIM_GUARD_H
#define SENSIM_GUARD_H

#include <stddef.h>

#include "sensim/status.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Outputs above this many bytes are refused whatever the free space. */
#define SENSIM_GUARD_MAX_BYTES 1099511627776.0 /* 1 TiB */
/* Steps longer than this between ground-truth rows are not a trajectory. */
#define SENSIM_GUARD_MAX_STEP 60.0 /* s */

/* Refuses (SENSIM_EDATA) times that cannot be seconds: a magnitude of 1e11
 * or more (no time in seconds since 1970 is that large: epoch milliseconds,
 * microseconds or nanoseconds, said by magnitude) or a mean step over
 * SENSIM_GUARD_MAX_STEP between `rows` rows (relative times in ms, us or
 * ns). Messages start with `what` (e.g. "gt.csv: column t"). */
sensim_status sensim_guard_times(double t_first, double t_last, size_t rows, const char *what);

/* Refuses (SENSIM_EIO) writing about `bytes` bytes to `path` when that exceeds
 * the free space of the file system holding path's directory or
 * SENSIM_GUARD_MAX_BYTES. `figure` says where the estimate comes from (e.g.
 * "sensor 'imu': 100 Hz x 3.6e+06 s"); it starts the message. */
sensim_status sensim_guard_output(const char *path, double bytes, const char *figure);

/* Free bytes for an unprivileged writer on the file system holding path's
 * directory; INFINITY when it cannot be told. */
double sensim_guard_free_bytes(const char *path);

/* ---- timestamps ----
 *
 * One validator for every reader of a `t` (ground truth and every sensor),
 * fed block by block so that streaming readers check as they go: times
 * finite, strictly increasing (or, for readers that allow it, never
 * decreasing with the repeats counted), magnitudes that can be seconds
 * (|t| < 1e11, not before SENSIM_TCHECK_MIN_TIME), no step longer than
 * SENSIM_TCHECK_MAX_GAP, and, when the sensor's rate is known, a mean step
 * within a factor SENSIM_TCHECK_RATE_FACTOR of 1 / rate_hz. Messages name
 * `what` (e.g. "imu.h5: /sensors/imu/t") and the first bad index.
 *
 * Usage: sensim_tcheck_init, then sensim_tcheck_block for consecutive
 * blocks, then sensim_tcheck_finish for the whole-span checks. The struct is
 * plain state (no allocation; `what` is copied, truncated to its buffer). */

/* Seconds before time zero that no recording starts at (one day): times are
 * seconds since the start of a run or since 1970. */
#define SENSIM_TCHECK_MIN_TIME (-86400.0)
/* A longer step between two rows is not one recording (one hour). */
#define SENSIM_TCHECK_MAX_GAP 3600.0
/* The mean step may differ from 1 / rate_hz by at most this factor. */
#define SENSIM_TCHECK_RATE_FACTOR 100.0
/* Flag: equal consecutive times are allowed (and counted in `repeats`). */
#define SENSIM_TCHECK_ALLOW_REPEATS 1u

typedef struct sensim_tcheck {
    char what[320];  /* start of every message */
    double rate_hz;  /* nominal rate, or 0 when unknown */
    unsigned flags;  /* SENSIM_TCHECK_* */
    size_t count;    /* times seen so far */
    size_t repeats;  /* equal consecutive times (with ALLOW_REPEATS) */
    double first;    /* first time (valid when count > 0) */
    double last;     /* latest time, the previous sample of the next block */
    double max_step; /* longest step so far, s */
    size_t max_step_at; /* index of the sample after it */
} sensim_tcheck;

/* Starts a check; rate_hz <= 0 or non-finite means unknown. */
void sensim_tcheck_init(sensim_tcheck *c, const char *what, double rate_hz, unsigned flags);
/* Checks the next n times (t borrowed for the call). SENSIM_EDATA names
 * `what`, the index and the values on the first bad one; the state is then
 * unusable. */
sensim_status sensim_tcheck_block(sensim_tcheck *c, const double *t, size_t n);
/* The whole-span checks: at least one time, steps (one gap longer than
 * SENSIM_TCHECK_MAX_GAP named by index; long steps throughout refused as
 * sensim_guard_times does, as times in another unit) and the mean step
 * against rate_hz. */
sensim_status sensim_tcheck_finish(const sensim_tcheck *c);

#ifdef __cplusplus
}
#endif
#endif
