/* Ground truth as a function of time, from a buffered window of rows. */
#include "sensim/gtcursor.h"

#include <math.h>
#include <stdlib.h>

#include "sensim/linalg.h"

struct sensim_gt_cursor {
    const sensim_log *log;
    size_t rows, cap;
    size_t r0;   /* first buffered row */
    size_t i;    /* last interval used, relative to r0 */
    sensim_gt_block b;
    double t_first, t_last, origin[3];
};

static sensim_status load(sensim_gt_cursor *c, size_t r0)
{
    if (r0 + 2 > c->rows)
        r0 = c->rows - 2;
    size_t n = c->rows - r0 < c->cap ? c->rows - r0 : c->cap;
    sensim_status st = sensim_gt_read(c->log, r0, n, &c->b);
    if (st)
        return st;
    c->r0 = r0;
    c->i = 0;
    return SENSIM_OK;
}

sensim_gt_cursor *sensim_gt_cursor_create(const sensim_log *log, size_t buffer_rows)
{
    sensim_gt_cursor *c = calloc(1, sizeof *c);
    if (!c) {
        sensim_error(SENSIM_ENOMEM, "out of memory");
        return NULL;
    }
    c->log = log;
    c->cap = buffer_rows < 16 ? 16 : buffer_rows;
    if (sensim_gt_check(log, &c->rows, c->origin) || sensim_gt_block_init(&c->b, c->cap))
        goto fail;
    double t[1];
    if (sensim_log_read_f64(log, "/ground_truth/t", 0, 1, t))
        goto fail;
    c->t_first = t[0];
    if (sensim_log_read_f64(log, "/ground_truth/t", c->rows - 1, 1, t))
        goto fail;
    c->t_last = t[0];
    if (load(c, 0))
        goto fail;
    return c;
fail:
    sensim_gt_cursor_destroy(c);
    return NULL;
}

void sensim_gt_cursor_destroy(sensim_gt_cursor *c)
{
    if (!c)
        return;
    sensim_gt_block_free(&c->b);
    free(c);
}

size_t sensim_gt_cursor_rows(const sensim_gt_cursor *c) { return c->rows; }
double sensim_gt_cursor_t_first(const sensim_gt_cursor *c) { return c->t_first; }
double sensim_gt_cursor_t_last(const sensim_gt_cursor *c) { return c->t_last; }
const double *sensim_gt_cursor_origin(const sensim_gt_cursor *c) { return c->origin; }

/* Row index (absolute) of the interval [t_j, t_{j+1}] holding t, by binary
 * search over the file in blocks: only used when t leaves the buffer. */
static sensim_status seek(sensim_gt_cursor *c, double t)
{
    size_t lo = 0, hi = c->rows - 1; /* t_lo <= t <= t_hi */
    double v;
    while (hi - lo > 1) {
        size_t mid = lo + (hi - lo) / 2;
        sensim_status st = sensim_log_read_f64(c->log, "/ground_truth/t", mid, 1, &v);
        if (st)
            return st;
        if (v <= t)
            lo = mid;
        else
            hi = mid;
    }
    return load(c, lo);
}

sensim_status sensim_gt_cursor_at(sensim_gt_cursor *c, double t, sensim_gt_state *s)
{
    if (!(t >= c->t_first && t <= c->t_last))
        return sensim_error(SENSIM_EINVAL, "%s: time %.9g is outside the ground truth [%.9g, %.9g]",
                            sensim_log_path(c->log), t, c->t_first, c->t_last);
    const sensim_gt_block *b = &c->b;
    if (t < b->t[0] || t > b->t[b->n - 1]) {
        sensim_status st = seek(c, t);
        if (st)
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
    double t0 = b->t[i], t1 = b->t[i + 1], h = t1 - t0, u = (t - t0) / h;
    s->t = t;
    /* Cubic Hermite position. */
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
    return SENSIM_OK;
}
