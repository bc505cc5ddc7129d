/* sensim/allan.h - Allan-family deviations with confidence intervals.
 *
 * Estimators (NIST SP 1065, Riley 2008, section 5.2): ADEV (non-overlapping),
 * OADEV, MDEV, HDEV (non-overlapping), OHDEV, TDEV and TOTDEV, on rate
 * ("frequency", y) or angle ("phase", x) data sampled every tau0 seconds.
 * Frequency data are integrated once to phase, x[k] = tau0 * sum_{j<k} y[j]
 * (N samples give N+1 phase points), after removing the mean rate, which
 * none of the estimators sees (all are second or third differences of x, and
 * the TOTDEV reflection keeps a linear ramp).
 *
 * Cost: O(N) per tau for every estimator (running window sums for MDEV and
 * TDEV). OADEV and OHDEV sum all taus in one blocked pass over the phase,
 * in parallel over fixed chunks of it; the other estimators run in parallel
 * over taus (OpenMP). Results are bit-identical at any thread count.
 * Memory: N+1 doubles of phase per axis, all axes at once up to 1 GiB
 * (sensim_allan_compute_axes then reads the interleaved input in two
 * passes), in groups of axes beyond; the TOTDEV reflection is indexed on
 * the fly, never stored. sensim_allan_compute_stream reads the series from
 * a block reader instead, in memory that does not grow with it.
 *
 * Confidence intervals: noise type per tau by the lag-1 autocorrelation
 * method (Riley & Greenhall 2004) where at least 30 averaged points remain,
 * Barnes' B1 ratio below that (SP 1065 section 5.6), white versus flicker
 * PM by the MVAR/AVAR ratio R(m); a tau with fewer than 4 points gets the
 * smallest EDF of any type and alpha SENSIM_ALLAN_ALPHA_UNKNOWN (no type is
 * carried over from another tau). Equivalent degrees of freedom by Greenhall
 * & Riley (2003) for ADEV/OADEV/MDEV/TDEV/HDEV/OHDEV and SP 1065 Table 11 for
 * TOTDEV (OADEV's at m = 1, where the two are the same estimator), then
 * chi-squared bounds (SP 1065 eq. 45, sensim/quantile.h).
 *
 * Ownership: input arrays are borrowed for the call; outputs are written
 * into caller buffers, except sensim_allan_taus which mallocs its grid.
 * Thread safety: all functions are reentrant; they may use OpenMP inside. */
#ifndef SENSIM_ALLAN_H
#define SENSIM_ALLAN_H

#include <stddef.h>

#include "sensim/status.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum sensim_allan_dev {
    SENSIM_ADEV = 0,
    SENSIM_OADEV,
    SENSIM_MDEV,
    SENSIM_HDEV,
    SENSIM_OHDEV,
    SENSIM_TDEV,
    SENSIM_TOTDEV,
    SENSIM_ALLAN_NDEV
} sensim_allan_dev;

typedef enum sensim_allan_data {
    SENSIM_ALLAN_FREQ = 0, /* rate samples: rad/s, m/s^2, fractional frequency */
    SENSIM_ALLAN_PHASE     /* integrated samples: rad, m/s, seconds of time error */
} sensim_allan_data;

typedef enum sensim_allan_grid {
    SENSIM_TAUS_OCTAVE = 0, /* m = 1, 2, 4, ... */
    SENSIM_TAUS_DECADE,     /* m = 1, 2, 4, 10, 20, 40, 100, ... (Stable32's decade) */
    SENSIM_TAUS_ALL,        /* every m */
    SENSIM_TAUS_LOG         /* log-spaced, per_decade points per decade, unique integers */
} sensim_allan_grid;

/* "adev", "oadev", ... ; NULL for an unknown value. */
const char *sensim_allan_dev_name(sensim_allan_dev dev);
/* Parses a name; SENSIM_EINVAL lists the accepted names. */
sensim_status sensim_allan_dev_parse(const char *name, sensim_allan_dev *dev);
/* Parses "octave", "decade", "all" or "log:N" (N points per decade, 1..1000). */
sensim_status sensim_allan_grid_parse(const char *text, sensim_allan_grid *grid, int *per_decade);

/* The largest averaging factor the estimator accepts for n input samples. */
size_t sensim_allan_max_m(sensim_allan_dev dev, sensim_allan_data data, size_t n);

/* Averaging factors of a grid for n samples, ascending, each <=
 * sensim_allan_max_m. *m is malloc'd (caller frees); SENSIM_EDATA when n is
 * too short for even m = 1. */
sensim_status sensim_allan_taus(sensim_allan_grid grid, int per_decade, sensim_allan_dev dev, sensim_allan_data data,
                                size_t n, size_t **m, size_t *count);

/* The alpha of a point whose noise type could not be identified (fewer
 * than 4 averaged points): its EDF is the smallest over all types. */
#define SENSIM_ALLAN_ALPHA_UNKNOWN (-99)

/* One point of a deviation curve. */
typedef struct sensim_allan_point {
    double tau;   /* s, m * tau0 */
    double dev;   /* the deviation (units of the data; TDEV in s of phase units) */
    double lo;    /* lower confidence bound */
    double hi;    /* upper confidence bound */
    double edf;   /* equivalent degrees of freedom */
    size_t m;     /* averaging factor */
    size_t n;     /* number of terms in the estimator sum */
    int alpha;    /* identified power-law noise exponent of S_y(f) ~ f^alpha (+2..-2),
                     or SENSIM_ALLAN_ALPHA_UNKNOWN */
} sensim_allan_point;

typedef struct sensim_allan_opts {
    sensim_allan_dev dev;
    sensim_allan_data data;
    double tau0;       /* s, > 0 */
    double confidence; /* two-sided level of the interval, in (0, 1); default 0.683 */
    int fixed_alpha;   /* 0: identify the noise per tau; 1: use `alpha` for all */
    int alpha;         /* used when fixed_alpha */
} sensim_allan_opts;

/* OADEV on frequency data, tau0 = 1 s, 68.3% (one-sigma) intervals. */
sensim_allan_opts sensim_allan_default_opts(void);

/* Deviations of one series x[i * stride], i < n, at the averaging factors
 * m[0..nm) into out[0..nm). Errors: n or an m too large for the estimator
 * (names the m and the limit), NaN/Inf (names the index), constant data
 * (all deviations zero), bad tau0 or confidence. */
sensim_status sensim_allan_compute(const double *x, size_t n, size_t stride, const sensim_allan_opts *o,
                                   const size_t *m, size_t nm, sensim_allan_point *out);

/* The same for naxes interleaved axes (x[i * naxes + a]); out is
 * [naxes][nm]. Error messages name the axis. */
sensim_status sensim_allan_compute_axes(const double *x, size_t n, size_t naxes, const sensim_allan_opts *o,
                                        const size_t *m, size_t nm, sensim_allan_point *out);

/* A series read from storage in blocks, for sensim_allan_compute_stream:
 * read(ctx, start, count, a0, a1, buf) fills buf[(i - start) * (a1 - a0) +
 * (a - a0)] with sample i of axis a for start <= i < start + count and a0 <=
 * a < a1 (count > 0). It is called with increasing or arbitrary starts, the
 * same block possibly more than once, and must return the same values each
 * time; an error it returns (with its message) ends the computation. It
 * is called from one thread at a time, possibly not the caller's (its
 * message is then taken from a repeat of the failing call on the caller's
 * thread), unless concurrent is set: then from several threads at once. */
typedef sensim_status (*sensim_allan_read_fn)(void *ctx, size_t start, size_t count, size_t a0, size_t a1,
                                              double *buf);

typedef struct sensim_allan_source {
    sensim_allan_read_fn read;
    void *ctx;
    size_t n;     /* samples per axis */
    size_t naxes; /* axes, >= 1 */
    int concurrent; /* nonzero: read may run on several threads at once */
} sensim_allan_source;

/* The default memory budget of sensim_allan_compute_stream (bytes). */
#define SENSIM_ALLAN_STREAM_BYTES ((size_t)112 << 20)

/* The same results as sensim_allan_compute_axes on the series src->read
 * returns (out is [naxes][nm]; the same numbers, bit for bit, at any
 * thread count), in memory that does not grow with the series: about
 * max_bytes (0: SENSIM_ALLAN_STREAM_BYTES) at most for the phases, beside
 * some 20-40 MB of windows. While the phases of a group of axes fit in
 * max_bytes (whole 3-axis quantities where possible), each group is read
 * once and computed in memory; beyond, all axes are streamed together: two
 * passes over the source for the mean and the phase, which the second
 * writes once to an unlinked temporary file in $TMPDIR (or /tmp; 8 bytes
 * per phase point and axis, skipped when the file system lacks the room,
 * and then the phase is rebuilt from checkpoints by re-reading the source),
 * then windows over that phase (OADEV/OHDEV: all taus in one pass, the
 * lags that fit in half of max_bytes from one ring of rows and a forward
 * cursor for each longer lag; MDEV/TDEV/TOTDEV: four cursors per tau, the
 * TOTDEV reflections read backwards; ADEV/HDEV: one pass for all taus), and
 * the noise identification from decimated phase (a pass per batch of taus,
 * R(m) a pass per tau where B1 decides).
 * Error messages name the axis when naxes > 1; the source's own errors pass
 * through unchanged. */
sensim_status sensim_allan_compute_stream(const sensim_allan_source *src, const sensim_allan_opts *o, const size_t *m,
                                          size_t nm, size_t max_bytes, sensim_allan_point *out);

/* Equivalent degrees of freedom for a deviation at averaging factor m with
 * nphase phase points and noise exponent alpha (+2..-2). */
double sensim_allan_edf(sensim_allan_dev dev, int alpha, size_t m, size_t nphase);

/* Chi-squared interval for a deviation with edf degrees of freedom at two-sided
 * level `confidence` (SP 1065 eq. 45): lo = dev sqrt(edf / chi2(1-p/2)). */
void sensim_allan_ci(double dev, double edf, double confidence, double *lo, double *hi);

/* Lag-1 autocorrelation noise identification (Riley & Greenhall 2004) at
 * averaging factor m; dmax 2 for Allan, 3 for Hadamard. Returns alpha in
 * +2..-2 (-4 with dmax 3), or SENSIM_EDATA when fewer than 30 averaged
 * points remain. No allocation. */
sensim_status sensim_allan_noise_id(const double *x, size_t n, size_t stride, sensim_allan_data data, size_t m,
                                    int dmax, int *alpha);

#ifdef __cplusplus
}
#endif
#endif
