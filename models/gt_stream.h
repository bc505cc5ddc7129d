/* Internal (not installed): ground truth read in blocks and sampled at a
 * sensor's own rate, t_k = t_first + k / rate, by cubic Hermite
 * interpolation of position with the velocities at both ends (exact for
 * constant acceleration), linear velocity and angular velocity, and
 * normalized-lerp orientation. Memory is one block of ground truth. */
#ifndef SENSIM_GT_STREAM_H
#define SENSIM_GT_STREAM_H

#include <string.h>

#include "sensim/linalg.h"
#include "sensim/log.h"

typedef struct gt_row {
    double t, p[3], v[3], q[4], w[3];
} gt_row;

typedef struct gt_stream {
    const sensim_log *log;
    size_t n, row0, cnt, i;
    sensim_gt_block blk;
    gt_row prev, cur;
    int have_cur, have_prev;
    double rate, t_first;
    uint64_t k;
} gt_stream;

static inline sensim_status gt_stream_open(gt_stream *s, const sensim_log *log, size_t block, double rate,
                                           double origin_lla[3])
{
    memset(s, 0, sizeof *s);
    s->log = log;
    s->rate = rate;
    sensim_status st = sensim_gt_check(log, &s->n, origin_lla);
    if (st)
        return st;
    if (s->n == 0)
        return sensim_error(SENSIM_EDATA, "%s: /ground_truth is empty", sensim_log_path(log));
    if ((st = sensim_gt_block_init(&s->blk, block ? block : 65536)))
        return st;
    double t0;
    if ((st = sensim_log_read_f64(log, "/ground_truth/t", 0, 1, &t0)))
        return st;
    s->t_first = t0;
    return SENSIM_OK;
}

static inline void gt_stream_close(gt_stream *s) { sensim_gt_block_free(&s->blk); }

/* Loads the next ground-truth row into s->cur; 0 at the end, <0 on error. */
static inline int gt_stream_advance(gt_stream *s, sensim_status *st)
{
    if (s->i == s->cnt) {
        s->row0 += s->cnt;
        if (s->row0 >= s->n)
            return 0;
        s->cnt = s->n - s->row0 < s->blk.capacity ? s->n - s->row0 : s->blk.capacity;
        if ((*st = sensim_gt_read(s->log, s->row0, s->cnt, &s->blk)))
            return -1;
        s->i = 0;
    }
    if (s->have_cur) {
        s->prev = s->cur;
        s->have_prev = 1;
    }
    size_t i = s->i++;
    gt_row *c = &s->cur;
    c->t = s->blk.t[i];
    memcpy(c->p, s->blk.position + 3 * i, sizeof c->p);
    memcpy(c->v, s->blk.velocity + 3 * i, sizeof c->v);
    memcpy(c->q, s->blk.orientation + 4 * i, sizeof c->q);
    memcpy(c->w, s->blk.angular_velocity + 3 * i, sizeof c->w);
    s->have_cur = 1;
    return 1;
}

/* The ground truth at the next sample time: 1 and *out (with *k the sample
 * index), 0 past the end, -1 on error (*st set). */
static inline int gt_stream_next(gt_stream *s, gt_row *out, uint64_t *k, sensim_status *st)
{
    const double tk = s->t_first + (double)s->k / s->rate;
    while (!s->have_cur || s->cur.t < tk) {
        int r = gt_stream_advance(s, st);
        if (r <= 0)
            return r;
    }
    if (!s->have_prev || s->cur.t == tk) {
        *out = s->cur;
        out->t = tk;
    } else {
        const gt_row *a = &s->prev, *b = &s->cur;
        double h = b->t - a->t, u = (tk - a->t) / h, u2 = u * u, u3 = u2 * u;
        double h00 = 2 * u3 - 3 * u2 + 1, h10 = u3 - 2 * u2 + u, h01 = -2 * u3 + 3 * u2, h11 = u3 - u2;
        out->t = tk;
        for (int j = 0; j < 3; j++) {
            out->p[j] = h00 * a->p[j] + h10 * h * a->v[j] + h01 * b->p[j] + h11 * h * b->v[j];
            out->v[j] = a->v[j] + u * (b->v[j] - a->v[j]);
            out->w[j] = a->w[j] + u * (b->w[j] - a->w[j]);
        }
        sensim_quat q = sensim_quat_nlerp(sensim_quat_load(a->q), sensim_quat_load(b->q), u);
        sensim_quat_store(q, out->q);
    }
    *k = s->k++;
    return 1;
}

#endif
