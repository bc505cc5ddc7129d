/* Ground truth: rows read, checked, written, streamed and interpolated in
 * one place, so that every sensor sees the same state at the same time. */
#include "sensim/gt.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "log_internal.h"
#include "sensim/linalg.h"
#include "sensim/log.h"
#include "base_internal.h"

/* Rows per block of the streamed NaN scan of sensim_gt_check. */
#define CHECK_BLOCK 65536

static const struct {
    const char *name;
    size_t cols;
    const char *units;
} gt_fields[] = {
    {"t", 0, "s"},
    {"position", 3, "m"},
    {"orientation", 4, "1"},
    {"velocity", 3, "m/s"},
    {"angular_velocity", 3, "rad/s"},
    {"acceleration", 3, "m/s^2"},
};
#define GT_NFIELDS 6

static double **gt_array(sensim_gt_block *b, int i)
{
    double **a[GT_NFIELDS] = {&b->t, &b->position, &b->orientation, &b->velocity, &b->angular_velocity,
                              &b->acceleration};
    return a[i];
}

sensim_status sensim_gt_block_init(sensim_gt_block *b, size_t capacity)
{
    memset(b, 0, sizeof *b);
    b->capacity = capacity;
    for (int i = 0; i < GT_NFIELDS; i++) {
        size_t cols = gt_fields[i].cols ? gt_fields[i].cols : 1;
        if (!(*gt_array(b, i) = malloc((capacity ? capacity : 1) * cols * sizeof(double)))) {
            sensim_gt_block_free(b);
            return sensim_error(SENSIM_ENOMEM, "out of memory for a ground-truth block of %zu rows", capacity);
        }
    }
    return SENSIM_OK;
}

void sensim_gt_block_free(sensim_gt_block *b)
{
    for (int i = 0; i < GT_NFIELDS; i++) {
        free(*gt_array(b, i));
        *gt_array(b, i) = NULL;
    }
    b->n = b->capacity = 0;
}

sensim_status sensim_gt_check(const sensim_log *log, size_t *n, double origin_lla[3])
{
    if (!sensim_log_exists(log, "/ground_truth"))
        return sensim_error(SENSIM_ENOTFOUND, "%s: group /ground_truth is missing", sensim_log_path(log));
    size_t rows = 0;
    sensim_status st = sensim_log_check_time(log, "/ground_truth/t", &rows);
    if (st)
        return st;
    char path[64];
    for (int i = 1; i < GT_NFIELDS; i++) {
        size_t m;
        snprintf(path, sizeof path, "/ground_truth/%s", gt_fields[i].name);
        if ((st = sensim_log_check_shape(log, path, 1, &gt_fields[i].cols, &m)))
            return st;
        if (m != rows)
            return sensim_error(SENSIM_EFORMAT, "%s: %s has %zu rows but /ground_truth/t has %zu", sensim_log_path(log), path,
                                m, rows);
    }
    if (rows < 2)
        return sensim_error(SENSIM_EDATA, "%s: /ground_truth/t: %zu samples, need at least 2", sensim_log_path(log), rows);
    /* NaN scan, streamed. */
    double *buf = malloc(CHECK_BLOCK * 4 * sizeof *buf);
    if (!buf)
        return sensim_error(SENSIM_ENOMEM, "out of memory");
    for (int i = 1; i < GT_NFIELDS && !st; i++) {
        snprintf(path, sizeof path, "/ground_truth/%s", gt_fields[i].name);
        size_t cols = gt_fields[i].cols;
        for (size_t r0 = 0; r0 < rows && !st; r0 += CHECK_BLOCK) {
            size_t c = rows - r0 < CHECK_BLOCK ? rows - r0 : CHECK_BLOCK;
            if ((st = sensim_log_read_f64(log, path, r0, c, buf)))
                break;
            for (size_t k = 0; k < c * cols; k++)
                if (!isfinite(buf[k])) {
                    st = sensim_error(SENSIM_EDATA, "%s: %s: value at row %zu, column %zu is not finite",
                                      sensim_log_path(log), path, r0 + k / cols, k % cols);
                    break;
                }
            if (!st && i == 2)
                for (size_t k = 0; k < c; k++) {
                    const double *q = buf + 4 * k;
                    double nq = sqrt(q[0] * q[0] + q[1] * q[1] + q[2] * q[2] + q[3] * q[3]);
                    if (fabs(nq - 1.0) > 1e-3) {
                        st = sensim_error(SENSIM_EDATA, "%s: %s: row %zu is not a unit quaternion (norm %g)",
                                          sensim_log_path(log), path, r0 + k, nq);
                        break;
                    }
                }
        }
    }
    free(buf);
    if (st)
        return st;
    origin_lla[0] = origin_lla[1] = origin_lla[2] = 0.0;
    if (sensim_log_has_attr(log, "/ground_truth", "origin_lla") &&
        (st = sensim_log_get_attr_f64(log, "/ground_truth", "origin_lla", origin_lla, 3)))
        return st;
    *n = rows;
    return SENSIM_OK;
}

sensim_status sensim_gt_read(const sensim_log *log, size_t row0, size_t count, sensim_gt_block *b)
{
    if (count > b->capacity)
        return sensim_error(SENSIM_EINVAL, "ground-truth block of %zu rows cannot hold %zu", b->capacity, count);
    char path[64];
    for (int i = 0; i < GT_NFIELDS; i++) {
        snprintf(path, sizeof path, "/ground_truth/%s", gt_fields[i].name);
        sensim_status st = sensim_log_read_f64(log, path, row0, count, *gt_array(b, i));
        if (st)
            return st;
    }
    b->n = count;
    if (count)
        sensim_log_report_gt_read(log, row0 + count);
    return SENSIM_OK;
}

struct sensim_gt_writer {
    sensim_log_dset *d[GT_NFIELDS];
};

void sensim_gt_writer_close(sensim_gt_writer *w)
{
    if (!w)
        return;
    for (int i = 0; i < GT_NFIELDS; i++)
        sensim_log_dset_close(w->d[i]);
    free(w);
}

sensim_gt_writer *sensim_gt_writer_create(sensim_log *log, const double origin_lla[3])
{
    sensim_gt_writer *w = sensim_new_(sizeof *w, NULL);
    if (!w)
        return NULL;
    double zero[3] = {0, 0, 0};
    int ok = !sensim_log_group(log, "/ground_truth") &&
             !sensim_log_set_attr_string(log, "/ground_truth", "frame", "ENU") &&
             !sensim_log_set_attr_f64(log, "/ground_truth", "origin_lla", origin_lla ? origin_lla : zero, 3);
    char path[64];
    for (int i = 0; ok && i < GT_NFIELDS; i++) {
        snprintf(path, sizeof path, "/ground_truth/%s", gt_fields[i].name);
        size_t cols = gt_fields[i].cols;
        w->d[i] = sensim_log_dset_create(log, path, SENSIM_F64, cols ? 1 : 0, &cols, gt_fields[i].units, 0);
        ok = w->d[i] != NULL;
    }
    if (ok)
        return w;
    sensim_gt_writer_close(w);
    return NULL;
}

sensim_status sensim_gt_writer_append(sensim_gt_writer *w, const sensim_gt_block *b)
{
    for (int i = 0; i < GT_NFIELDS; i++) {
        sensim_status st = sensim_log_dset_append(w->d[i], *gt_array((sensim_gt_block *)b, i), b->n);
        if (st)
            return st;
    }
    return SENSIM_OK;
}

/* ---- interpolation ---- */

void sensim_gt_interpolate(const sensim_gt_block *b, size_t i, double t, sensim_gt_state *s)
{
    double t0 = b->t[i], t1 = b->t[i + 1], h = t1 - t0, u = (t - t0) / h;
    s->t = t;
    /* Cubic Hermite position from the positions and velocities at both
     * rows: C1 across rows, exact for constant acceleration's quadratic
     * path up to the velocities' consistency. */
    double h00 = (1 + 2 * u) * (1 - u) * (1 - u), h10 = u * (1 - u) * (1 - u), h01 = u * u * (3 - 2 * u),
           h11 = u * u * (u - 1);
    for (int k = 0; k < 3; k++) {
        const double p0 = b->position[3 * i + k], p1 = b->position[3 * (i + 1) + k];
        const double v0 = b->velocity[3 * i + k], v1 = b->velocity[3 * (i + 1) + k];
        s->position[k] = h00 * p0 + h10 * h * v0 + h01 * p1 + h11 * h * v1;
        s->velocity[k] = v0 + u * (v1 - v0);
        const double a0 = b->acceleration[3 * i + k], a1 = b->acceleration[3 * (i + 1) + k];
        s->acceleration[k] = a0 + u * (a1 - a0);
        const double w0 = b->angular_velocity[3 * i + k], w1 = b->angular_velocity[3 * (i + 1) + k];
        s->angular_velocity[k] = w0 + u * (w1 - w0);
        s->angular_accel[k] = (w1 - w0) / h;
    }
    sensim_quat q = sensim_quat_slerp(sensim_quat_load(b->orientation + 4 * i),
                                      sensim_quat_load(b->orientation + 4 * (i + 1)), u);
    sensim_quat_store(q, s->orientation);
}

size_t sensim_gt_block_interval(const sensim_gt_block *b, double t)
{
    size_t lo = 0, hi = b->n - 1; /* t_lo <= t < t_hi, clamped to the ends */
    if (!(t >= b->t[0]))
        return 0;
    if (t >= b->t[hi])
        return hi - 1;
    while (hi - lo > 1) {
        size_t mid = lo + (hi - lo) / 2;
        if (b->t[mid] <= t)
            lo = mid;
        else
            hi = mid;
    }
    return lo;
}

/* ---- window ---- */

struct sensim_gt_window {
    const sensim_log *log;
    size_t rows, cap; /* rows in the log; rows a window holds (grows to one span's) */
    size_t r0;        /* the window is rows [r0, r0 + b.n) */
    sensim_gt_block b;
    double t_first, t_last, origin[3];
};

/* Checks the log's ground truth and notes its rows, origin, first and last
 * t into w (the window and the cursor start so). */
static sensim_status window_open(sensim_gt_window *w, const sensim_log *log)
{
    w->log = log;
    sensim_status st = sensim_gt_check(log, &w->rows, w->origin);
    if (!st)
        st = sensim_log_read_f64(log, "/ground_truth/t", 0, 1, &w->t_first);
    return st ? st : sensim_log_read_f64(log, "/ground_truth/t", w->rows - 1, 1, &w->t_last);
}

sensim_gt_window *sensim_gt_window_create(const sensim_log *log, size_t rows)
{
    sensim_gt_window *w = sensim_new_(sizeof *w, NULL);
    if (!w)
        return NULL;
    if (window_open(w, log)) {
        sensim_gt_window_destroy(w);
        return NULL;
    }
    w->cap = rows < 2 ? 2 : rows < w->rows ? rows : w->rows; /* no more than the log */
    return w;
}

void sensim_gt_window_destroy(sensim_gt_window *w)
{
    if (!w)
        return;
    sensim_gt_block_free(&w->b);
    free(w);
}

size_t sensim_gt_window_rows(const sensim_gt_window *w) { return w->rows; }
double sensim_gt_window_t_first(const sensim_gt_window *w) { return w->t_first; }
double sensim_gt_window_t_last(const sensim_gt_window *w) { return w->t_last; }
const double *sensim_gt_window_origin(const sensim_gt_window *w) { return w->origin; }

/* The first row whose t exceeds x (strict: t > x) or reaches it (t >= x),
 * or rows when none does: a binary search reading single values of t. */
static sensim_status window_search(const sensim_gt_window *w, double x, int strict, size_t *out)
{
    size_t lo = 0, hi = w->rows;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        double v;
        sensim_status st = sensim_log_read_f64(w->log, "/ground_truth/t", mid, 1, &v);
        if (st)
            return st;
        if (strict ? v <= x : v < x)
            lo = mid + 1;
        else
            hi = mid;
    }
    *out = lo;
    return SENSIM_OK;
}

/* ---- cursor ---- */

/* A window that one thread moves forward by itself, a buffer of cap rows
 * from r0, and the last interval used. */
struct sensim_gt_cursor {
    sensim_gt_window w;
    size_t i; /* last interval used, relative to w.r0 */
};

static sensim_status cursor_load(sensim_gt_cursor *c, size_t r0)
{
    sensim_gt_window *w = &c->w;
    if (r0 + 2 > w->rows)
        r0 = w->rows - 2;
    size_t n = w->rows - r0 < w->cap ? w->rows - r0 : w->cap;
    sensim_status st = sensim_gt_read(w->log, r0, n, &w->b);
    if (st)
        return st;
    w->r0 = r0;
    c->i = 0;
    return SENSIM_OK;
}

sensim_gt_cursor *sensim_gt_cursor_create(const sensim_log *log, size_t buffer_rows)
{
    sensim_gt_cursor *c = sensim_new_(sizeof *c, NULL);
    if (!c)
        return NULL;
    c->w.cap = buffer_rows < 16 ? 16 : buffer_rows;
    if (window_open(&c->w, log) || sensim_gt_block_init(&c->w.b, c->w.cap) || cursor_load(c, 0)) {
        sensim_gt_cursor_destroy(c);
        return NULL;
    }
    return c;
}

void sensim_gt_cursor_destroy(sensim_gt_cursor *c)
{
    if (c)
        sensim_gt_block_free(&c->w.b);
    free(c);
}

size_t sensim_gt_cursor_rows(const sensim_gt_cursor *c) { return sensim_gt_window_rows(&c->w); }
double sensim_gt_cursor_t_first(const sensim_gt_cursor *c) { return sensim_gt_window_t_first(&c->w); }
double sensim_gt_cursor_t_last(const sensim_gt_cursor *c) { return sensim_gt_window_t_last(&c->w); }
const double *sensim_gt_cursor_origin(const sensim_gt_cursor *c) { return sensim_gt_window_origin(&c->w); }

sensim_status sensim_gt_cursor_at(sensim_gt_cursor *c, double t, sensim_gt_state *s)
{
    const sensim_gt_window *w = &c->w;
    if (!(t >= w->t_first && t <= w->t_last))
        return sensim_error(SENSIM_EINVAL, "%s: time %.9g is outside the ground truth [%.9g, %.9g]",
                            sensim_log_path(w->log), t, w->t_first, w->t_last);
    const sensim_gt_block *b = &w->b;
    if (t < b->t[0] || t > b->t[b->n - 1]) {
        /* Reload from the interval holding t: the last row at or before it. */
        size_t z;
        sensim_status st = window_search(w, t, 1, &z);
        if (st || (st = cursor_load(c, z - 1)))
            return st;
    }
    /* Walk forward (usual case), or back within the buffer. */
    size_t i = c->i;
    while (i + 2 < b->n && b->t[i + 1] <= t)
        i++;
    while (i > 0 && b->t[i] > t)
        i--;
    if (i + 1 >= b->n)
        i = b->n - 2;
    c->i = i;
    sensim_gt_interpolate(b, i, t, s);
    return SENSIM_OK;
}

sensim_status sensim_gt_window_cover(sensim_gt_window *w, double tmin, double tmax)
{
    const sensim_gt_block *b = &w->b;
    if (b->n && (w->r0 == 0 || b->t[0] < tmin) && (w->r0 + b->n == w->rows || b->t[b->n - 1] > tmax))
        return SENSIM_OK;
    size_t a, z;
    sensim_status st;
    if ((st = window_search(w, tmin, 0, &a)) || (st = window_search(w, tmax, 1, &z)))
        return st;
    a = a > 0 ? a - 1 : 0;             /* the last row before tmin */
    if (a + 2 > w->rows)               /* a span past the log: its last interval */
        a = w->rows - 2;
    z = z < w->rows ? z : w->rows - 1; /* the first row after tmax */
    if (z < a + w->cap - 1)
        z = a + w->cap - 1 < w->rows - 1 ? a + w->cap - 1 : w->rows - 1;
    size_t n = z - a + 1;
    if (n > w->b.capacity) {
        /* A span longer than the window: hold that span's rows. */
        sensim_gt_block_free(&w->b);
        if ((st = sensim_gt_block_init(&w->b, n > w->cap ? n : w->cap)))
            return st;
    }
    w->b.n = 0;
    if ((st = sensim_gt_read(w->log, a, n, &w->b))) {
        w->b.n = 0;
        return st;
    }
    w->r0 = a;
    return SENSIM_OK;
}

void sensim_gt_window_at(const sensim_gt_window *w, double t, sensim_gt_state *s)
{
    /* Held at the log's ends (a query a rounding outside a span's edge). */
    if (t < w->t_first)
        t = w->t_first;
    if (t > w->t_last)
        t = w->t_last;
    sensim_gt_interpolate(&w->b, sensim_gt_block_interval(&w->b, t), t, s);
}
