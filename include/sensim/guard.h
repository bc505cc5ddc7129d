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

#ifdef __cplusplus
}
#endif
#endif
