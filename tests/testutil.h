/* Shared helpers for the check suites: temporary directories, running the
 * sensim program and capturing its output, statistics for tolerances. */
#ifndef SENSIM_TESTUTIL_H
#define SENSIM_TESTUTIL_H

#include <check.h>
#include <stddef.h>

/* Every suite_NAME of tests/ (the list the runner is built from), declared
 * for the files that define them (-Wmissing-prototypes). */
#define SENSIM_SUITE(f) Suite *f(void);
#include "suites.h"
#undef SENSIM_SUITE

/* A fresh directory under $TMPDIR (or /tmp), malloc'd; remove it with
 * tu_rmtree and free the string. */
char *tu_mkdtemp(void);
void tu_rmtree(const char *dir);
/* dir + "/" + name, malloc'd. */
char *tu_path(const char *dir, const char *name);
/* $SENSIM_SRCDIR/rel (or ./rel), malloc'd. */
char *tu_src(const char *rel);
/* Copies the bundled scene file `scene_rel` (relative to the source tree)
 * into a fresh temporary directory as `copy_name`, where the models it finds
 * under ../../../shared are absent, and checks that loading it fails with an
 * error naming the copy's line and `model` (a part of the missing path). */
void tu_scene_model_missing(const char *scene_rel, const char *copy_name, const char *model);

typedef struct {
    int status;   /* exit status, or 128+signal */
    char *out;    /* captured stdout, NUL-terminated, malloc'd */
    char *err;    /* captured stderr */
} tu_run_result;
/* Runs "$SENSIM_BIN args..." (args NULL-terminated) with stdin from /dev/null.
 * When an argument is --json and the command succeeds, its stdout must be
 * strict JSON (tu_assert_strict_json): every --json output of the suites
 * goes through Python's json module. */
tu_run_result tu_run(const char *arg0, ...);
void tu_run_free(tu_run_result *r);
/* Fails the test unless text parses with /usr/bin/python3's json.loads with
 * NaN, Infinity and -Infinity refused (RFC 8259); what names the verb. */
void tu_assert_strict_json(const char *text, const char *what);

/* Writes text to path; returns 0 on success. */
int tu_write_file(const char *path, const char *text);
/* Reads a whole file (malloc'd, NUL-terminated) or NULL. */
char *tu_read_file(const char *path, size_t *len);
int tu_file_exists(const char *path);
/* Entries in dir other than . and .. (-1 if it cannot be read): no
 * temporary file left beside an output. */
int tu_count_entries(const char *dir);

/* The camera of data/rigs/camera-cmos.yaml (EMVA 1288 chain, K 0.25 DN/e-,
 * read noise 8 e-, dark current 300 e-/s) with the given frame size and
 * exposure; fails the test if the preset does not load. */
struct sensim_camera_params tu_camera_cmos(size_t width, size_t height, double exposure);

/* Asserts that rig text (loaded as "bad.yaml") is refused and that the
 * message holds each of the NULL-terminated needles. */
void tu_rig_rejects(const char *yaml, ...);

/* The rows per chunk of HDF5 dataset dset in the file at path, and its
 * extents (sensim_log_extents of ncols columns; asserted to succeed; free()
 * them) with *next of them and the columns' unit factors in fac. */
size_t tu_chunk_rows(const char *path, const char *dset);
struct sensim_log_extent *tu_extents(const char *path, const char *dset, size_t ncols, size_t *next, double *fac);

/* Sample statistics. */
double tu_mean(const double *x, size_t n, size_t stride);
double tu_var(const double *x, size_t n, size_t stride);
/* Lag-1 autocorrelation. */
double tu_acf1(const double *x, size_t n, size_t stride);
/* Non-overlapping Allan variance of rate data at cluster size m. */
double tu_avar(const double *x, size_t n, size_t m);

#define ck_assert_within(val, expect, tol)                                                   \
    ck_assert_msg(fabs((double)(val) - (double)(expect)) <= (double)(tol),                   \
                  "%s = %.9g, expected %.9g +- %.3g", #val, (double)(val), (double)(expect), \
                  (double)(tol))

#endif
