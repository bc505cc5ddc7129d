/* sensim import BAG: topics of a recording into the groups of a new log,
 * streamed (see bagcli.h for the stamp order; memory holds one reorder
 * window per topic and a block of rows per dataset). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bagcli.h"
#include "cli.h"
#include "cli_gt.h"
#include "sensim/log.h"


#define ROWS_BYTES (1u << 20)

/* ---- a dataset written in blocks of rows ---- */

typedef struct col {
    sensim_log_dset *d;
    size_t rowbytes, cap, n;
    uint8_t *buf;
} col;

/* A column of about `expect` rows (0: unknown; its chunks follow it, so a
 * long IMU topic is read back in parallel by allan and fit). */
static sensim_status col_open(col *c, sensim_log *log, const char *group, const char *name, sensim_dtype type,
                              int ntail, const size_t *tail, const char *units, size_t expect)
{
    char path[512];
    snprintf(path, sizeof path, "%s/%s", group, name);
    c->rowbytes = sensim_dtype_size(type);
    for (int i = 0; i < ntail; i++)
        c->rowbytes *= tail[i];
    c->cap = ROWS_BYTES / c->rowbytes ? ROWS_BYTES / c->rowbytes : 1;
    c->n = 0;
    if (!(c->buf = malloc(c->cap * c->rowbytes)))
        return sensim_error(SENSIM_ENOMEM, "out of memory");
    if (!(c->d = sensim_log_dset_create_sized(log, path, type, ntail, tail, units, 0, expect)))
        return sensim_last_status();
    return SENSIM_OK;
}

static sensim_status col_flush(col *c)
{
    sensim_status st = SENSIM_OK;
    if (c->d && c->n)
        st = sensim_log_dset_append(c->d, c->buf, c->n);
    c->n = 0;
    return st;
}

static sensim_status col_put(col *c, const void *row)
{
    memcpy(c->buf + c->n * c->rowbytes, row, c->rowbytes);
    return ++c->n == c->cap ? col_flush(c) : SENSIM_OK;
}

static sensim_status col_close(col *c)
{
    sensim_status st = col_flush(c);
    sensim_log_dset_close(c->d);
    free(c->buf);
    memset(c, 0, sizeof *c);
    return st;
}

/* ---- a per-message f64 field kept as a group attribute while it stays
 * constant (covariances drivers publish fixed), a dataset once it varies ---- */

typedef struct cs {
    const char *name, *units;
    size_t w;
    double first[36];
    uint64_t rows;
    int series;
    col c;
} cs;

static sensim_status cs_put(cs *f, sensim_log *log, const char *group, const double *v)
{
    sensim_status st;
    if (f->rows == 0)
        memcpy(f->first, v, f->w * sizeof *v);
    else if (!f->series && memcmp(v, f->first, f->w * sizeof *v)) {
        size_t tail = f->w;
        if ((st = col_open(&f->c, log, group, f->name, SENSIM_F64, 1, &tail, f->units, 0)))
            return st;
        f->series = 1;
        for (uint64_t k = 0; k < f->rows; k++)
            if ((st = col_put(&f->c, f->first)))
                return st;
    }
    f->rows++;
    return f->series ? col_put(&f->c, v) : SENSIM_OK;
}

static sensim_status cs_finish(cs *f, sensim_log *log, const char *group)
{
    if (f->series)
        return col_close(&f->c);
    return f->rows ? sensim_log_set_attr_f64(log, group, f->name, f->first, f->w) : SENSIM_OK;
}

/* ---- ground truth from poses: a quadratic through each pose and its two
 * neighbours gives velocity and acceleration; the rotation between the
 * neighbours gives the body rate ---- */

typedef struct pose {
    double t, p[3], q[4]; /* q: w, x, y, z */
} pose;

typedef struct gt_deriv {
    pose w[3];
    size_t n;         /* poses seen */
    sensim_gt_block b;
    sensim_gt_writer *wr;
} gt_deriv;

static void qmul(const double a[4], const double b[4], double r[4])
{
    r[0] = a[0] * b[0] - a[1] * b[1] - a[2] * b[2] - a[3] * b[3];
    r[1] = a[0] * b[1] + a[1] * b[0] + a[2] * b[3] - a[3] * b[2];
    r[2] = a[0] * b[2] - a[1] * b[3] + a[2] * b[0] + a[3] * b[1];
    r[3] = a[0] * b[3] + a[1] * b[2] - a[2] * b[1] + a[3] * b[0];
}

/* Body rate taking orientation a to b in dt: the rotation vector of
 * conj(a) * b over dt. */
static void body_rate(const double a[4], const double b[4], double dt, double w[3])
{
    double ca[4] = {a[0], -a[1], -a[2], -a[3]}, d[4];
    qmul(ca, b, d);
    if (d[0] < 0)
        for (int i = 0; i < 4; i++)
            d[i] = -d[i];
    double s = sqrt(d[1] * d[1] + d[2] * d[2] + d[3] * d[3]);
    double k = s > 1e-12 ? 2 * atan2(s, d[0]) / s : 2.0;
    for (int i = 0; i < 3; i++)
        w[i] = k * d[i + 1] / dt;
}

/* Row for pose j (0, 1, 2 of the window) from the quadratic through the
 * window (or the line through two poses). */
static sensim_status gt_emit(gt_deriv *g, int j, int npts)
{
    const pose *P = g->w;
    sensim_gt_block *b = &g->b;
    size_t r = b->n;
    b->t[r] = P[j].t;
    memcpy(b->position + 3 * r, P[j].p, sizeof P[j].p);
    memcpy(b->orientation + 4 * r, P[j].q, sizeof P[j].q);
    if (npts == 2) {
        double h = P[1].t - P[0].t;
        for (int i = 0; i < 3; i++) {
            b->velocity[3 * r + i] = (P[1].p[i] - P[0].p[i]) / h;
            b->acceleration[3 * r + i] = 0;
        }
        body_rate(P[0].q, P[1].q, h, b->angular_velocity + 3 * r);
    } else {
        double h1 = P[1].t - P[0].t, h2 = P[2].t - P[1].t, s = h1 + h2;
        /* Lagrange weights of the derivative at t0, t1, t2. */
        double c[3][3] = {{-(2 * h1 + h2) / (h1 * s), s / (h1 * h2), -h1 / (h2 * s)},
                          {-h2 / (h1 * s), (h2 - h1) / (h1 * h2), h1 / (h2 * s)},
                          {h2 / (h1 * s), -s / (h1 * h2), (h1 + 2 * h2) / (h2 * s)}};
        for (int i = 0; i < 3; i++) {
            b->velocity[3 * r + i] = c[j][0] * P[0].p[i] + c[j][1] * P[1].p[i] + c[j][2] * P[2].p[i];
            b->acceleration[3 * r + i] =
                2 * (P[0].p[i] / (h1 * s) - P[1].p[i] / (h1 * h2) + P[2].p[i] / (h2 * s));
        }
        if (j == 1)
            body_rate(P[0].q, P[2].q, s, b->angular_velocity + 3 * r);
        else if (j == 0)
            body_rate(P[0].q, P[1].q, h1, b->angular_velocity + 3 * r);
        else
            body_rate(P[1].q, P[2].q, h2, b->angular_velocity + 3 * r);
    }
    b->n++;
    if (b->n == b->capacity) {
        sensim_status st = sensim_gt_writer_append(g->wr, b);
        b->n = 0;
        return st;
    }
    return SENSIM_OK;
}

static sensim_status gt_add(gt_deriv *g, const pose *p)
{
    pose q = *p;
    /* Keep the quaternion on the side of the previous one. */
    if (g->n) {
        const pose *prev = &g->w[g->n < 3 ? g->n - 1 : 2];
        double dot = 0;
        for (int i = 0; i < 4; i++)
            dot += prev->q[i] * q.q[i];
        if (dot < 0)
            for (int i = 0; i < 4; i++)
                q.q[i] = -q.q[i];
    }
    sensim_status st = SENSIM_OK;
    if (g->n < 3) {
        g->w[g->n] = q;
        if (g->n == 2 && (st = gt_emit(g, 0, 3)))
            return st;
    } else {
        if ((st = gt_emit(g, 1, 3)))
            return st;
        g->w[0] = g->w[1];
        g->w[1] = g->w[2];
        g->w[2] = q;
    }
    g->n++;
    return SENSIM_OK;
}

static sensim_status gt_finish(gt_deriv *g)
{
    sensim_status st = SENSIM_OK;
    if (g->n == 2) {
        if ((st = gt_emit(g, 0, 2)) || (st = gt_emit(g, 1, 2)))
            return st;
    } else if (g->n >= 3) {
        if ((st = gt_emit(g, 1, 3)) || (st = gt_emit(g, 2, 3)))
            return st;
    }
    if (g->b.n)
        st = sensim_gt_writer_append(g->wr, &g->b);
    g->b.n = 0;
    return st;
}

/* ---- one sink per topic ---- */

enum { C_T, C_A, C_B, C_C, C_D, C_E, NCOL };

typedef struct sink {
    sensim_msg_kind kind;
    const sensim_bag_topic *t;
    char name[128], group[160];
    char child[256]; /* ground truth: the child frame */
    col c[NCOL];
    cs f[4];
    size_t nf;
    gt_deriv gt;
    /* lidar */
    uint64_t points, dropped;
    size_t fidx[6];
    int has[6];
    /* camera */
    uint32_t h, w, ch;
    sensim_dtype pix;
    char encoding[32];
    uint8_t *frame;
    /* An Imu topic and a MagneticField topic given the same NAME share one
     * imu group (docs/DESIGN.md: magnetic_field beside angular_velocity
     * and specific_force on one t): `mate` is the other sink (NULL when
     * alone), and the stamps one side handed out that the other has not
     * yet matched wait in `pend` (a ring; `ahead` says whose they are). */
    struct sink *mate;
    int64_t *pend;
    size_t pend_head, pend_n;
    int ahead;
} sink;

/* Stamps one topic of a shared group may run ahead of the other: the two
 * reorder windows (4096 messages each) and the interleaving of arrival
 * stay far below it; past it the topics do not keep pace. */
#define PEND_MAX 65536

typedef struct imp {
    const char *bag;
    sensim_log *log;
    cli_bag_stream *s;
    sink *k;
    size_t n;
    int64_t origin_ns;
    int have_origin;
    double lla[3];
    const char *tf_parent, *tf_child;
    int time_receive;
} imp;

/* Seconds after the time origin: the whole second of the first stamp read,
 * or 0 when that is under 1e8 s (a clock since boot or a simulation, not
 * 1970), as for text recordings; t = ns / 1e9, one rounding. */
static double rel_t(imp *m, int64_t stamp)
{
    if (!m->have_origin) {
        int64_t f = cli_bag_stream_first_ns(m->s);
        int64_t sec = f / 1000000000 - (f % 1000000000 < 0);
        m->origin_ns = f < (int64_t)100000000 * 1000000000 ? 0 : sec * 1000000000;
        m->have_origin = 1;
    }
    return (double)(stamp - m->origin_ns) / 1e9;
}

/* What a sink of each kind writes from the start, besides t: columns
 * c[C_A], c[C_B], ... in order (width 0: one value a row), and the message
 * fields kept as attributes while constant (cs). */
typedef struct sink_col {
    const char *name;
    sensim_dtype type;
    size_t width;
    const char *units;
} sink_col;
typedef struct sink_layout {
    sensim_msg_kind kind;
    sink_col c[3];
    struct {
        const char *name, *units;
        size_t w;
    } f[4];
} sink_layout;
static const sink_layout sink_layouts[] = {
    {SENSIM_MSG_IMU,
     {{"angular_velocity", SENSIM_F64, 3, "rad/s"}, {"specific_force", SENSIM_F64, 3, "m/s^2"}},
     {{"orientation", "1", 4},
      {"orientation_covariance", "rad^2", 9},
      {"angular_velocity_covariance", "rad^2/s^2", 9},
      {"specific_force_covariance", "m^2/s^4", 9}}},
    {SENSIM_MSG_MAGNETIC_FIELD, {{"magnetic_field", SENSIM_F64, 3, "T"}}, {{"magnetic_field_covariance", "T^2", 9}}},
    {SENSIM_MSG_NAVSATFIX,
     {{"lla", SENSIM_F64, 3, "deg, deg, m"}, {"position_covariance", SENSIM_F64, 9, "m^2"}, {"fix", SENSIM_I8, 0, ""}},
     {{"service", "", 1}, {"position_covariance_type", "", 1}}},
    /* channel and time_offset are opened at the first cloud that has them. */
    {SENSIM_MSG_POINTCLOUD2, {{"points", SENSIM_F32, 4, "m"}, {"scan_offset", SENSIM_U64, 0, ""}}, {{0}}},
    {SENSIM_MSG_IMAGE, {{0}}, {{0}}},
};

static sensim_status open_sink(imp *m, sink *k)
{
    const sink_layout *l = NULL;
    for (size_t i = 0; i < sizeof sink_layouts / sizeof sink_layouts[0]; i++)
        if (sink_layouts[i].kind == k->kind)
            l = &sink_layouts[i];
    if (!l) {
        if (!(k->gt.wr = sensim_gt_writer_create(m->log, m->lla)))
            return sensim_last_status();
        return sensim_gt_block_init(&k->gt.b, 4096);
    }
    sensim_status st;
    /* A row a message (the topic's count, from the index or summary),
     * but a cloud's points. */
    const size_t rows = k->t && k->t->count < ((uint64_t)1 << 40) ? (size_t)k->t->count : 0;
    /* A MagneticField topic sharing an Imu topic's group uses its t. */
    if (!(k->kind == SENSIM_MSG_MAGNETIC_FIELD && k->mate) &&
        (st = col_open(&k->c[C_T], m->log, k->group, "t", SENSIM_F64, 0, NULL, "s", rows)))
        return st;
    for (size_t i = 0; i < 3 && l->c[i].name; i++) {
        const sink_col *c = &l->c[i];
        const int points = k->kind == SENSIM_MSG_POINTCLOUD2 && i == 0;
        if ((st = col_open(&k->c[C_A + i], m->log, k->group, c->name, c->type, c->width ? 1 : 0,
                           c->width ? &c->width : NULL, c->units, points ? 0 : rows)))
            return st;
    }
    for (k->nf = 0; k->nf < 4 && l->f[k->nf].name; k->nf++)
        k->f[k->nf] = (cs){.name = l->f[k->nf].name, .units = l->f[k->nf].units, .w = l->f[k->nf].w};
    uint64_t zero = 0;
    return k->kind == SENSIM_MSG_POINTCLOUD2 ? col_put(&k->c[C_B], &zero) : SENSIM_OK;
}

static sensim_status put_cloud(imp *m, sink *k, double t, const sensim_msg_pointcloud2 *pc, uint64_t index)
{
    static const char *const names[6] = {"x", "y", "z", "intensity", "ring", "time"};
    sensim_status st;
    for (int i = 0; i < 6; i++) {
        k->has[i] = sensim_msg_pointcloud2_field(pc, names[i], &k->fidx[i]) == SENSIM_OK;
        if (i < 3 && !k->has[i])
            return sensim_error(SENSIM_EFORMAT, "%s: topic '%s': message %llu: %s", m->bag, k->t->name,
                                (unsigned long long)index, sensim_last_error());
    }
    sensim_error_clear();
    if (k->has[4] && !k->c[C_C].d &&
        (st = col_open(&k->c[C_C], m->log, k->group, "channel", SENSIM_U16, 0, NULL, "", 0)))
        return st;
    if (k->has[5] && !k->c[C_D].d &&
        (st = col_open(&k->c[C_D], m->log, k->group, "time_offset", SENSIM_F32, 0, NULL, "s", 0)))
        return st;
    if ((k->c[C_C].d && !k->has[4]) || (k->c[C_D].d && !k->has[5]))
        return sensim_error(SENSIM_EFORMAT, "%s: topic '%s': message %llu: cloud without the %s field the earlier "
                            "ones have", m->bag, k->t->name, (unsigned long long)index,
                            k->c[C_C].d && !k->has[4] ? "ring" : "time");
    size_t np = (size_t)pc->height * pc->width;
    for (size_t j = 0; j < np; j++) {
        float p[4] = {(float)sensim_msg_pointcloud2_get(pc, k->fidx[0], j),
                      (float)sensim_msg_pointcloud2_get(pc, k->fidx[1], j),
                      (float)sensim_msg_pointcloud2_get(pc, k->fidx[2], j),
                      k->has[3] ? (float)sensim_msg_pointcloud2_get(pc, k->fidx[3], j) : 0.0f};
        if (!isfinite(p[0]) || !isfinite(p[1]) || !isfinite(p[2])) {
            k->dropped++; /* no return (unorganized NaN points of a non-dense cloud) */
            continue;
        }
        if ((st = col_put(&k->c[C_A], p)))
            return st;
        if (k->has[4]) {
            uint16_t r = (uint16_t)sensim_msg_pointcloud2_get(pc, k->fidx[4], j);
            if ((st = col_put(&k->c[C_C], &r)))
                return st;
        }
        if (k->has[5]) {
            float to = (float)sensim_msg_pointcloud2_get(pc, k->fidx[5], j);
            if ((st = col_put(&k->c[C_D], &to)))
                return st;
        }
        k->points++;
    }
    if ((st = col_put(&k->c[C_T], &t)))
        return st;
    return col_put(&k->c[C_B], &k->points);
}

static sensim_status put_image(imp *m, sink *k, double t, const sensim_msg_image *im, uint64_t index)
{
    sensim_status st;
    uint32_t ch = 0, bpp = 1;
    sensim_dtype pix = SENSIM_U8;
    if (!strcmp(im->encoding, "mono8"))
        ch = 1;
    else if (!strcmp(im->encoding, "mono16"))
        ch = 1, bpp = 2, pix = SENSIM_U16;
    else if (!strcmp(im->encoding, "rgb8") || !strcmp(im->encoding, "bgr8"))
        ch = 3;
    else
        return sensim_error(SENSIM_EUNSUPPORTED,
                            "%s: topic '%s': message %llu: image encoding '%s' (sensim reads mono8, mono16, rgb8, "
                            "bgr8)", m->bag, k->t->name, (unsigned long long)index, im->encoding);
    if (!k->frame) {
        k->h = im->height;
        k->w = im->width;
        k->ch = ch;
        k->pix = pix;
        snprintf(k->encoding, sizeof k->encoding, "%s", im->encoding);
        if (!k->h || !k->w)
            return sensim_error(SENSIM_EDATA, "%s: topic '%s': message %llu: empty image", m->bag, k->t->name,
                                (unsigned long long)index);
        size_t tail[3] = {k->h, k->w, 3};
        if ((st = col_open(&k->c[C_A], m->log, k->group, "image", pix, ch == 3 ? 3 : 2, tail, "DN", 0)))
            return st;
        if (!(k->frame = malloc((size_t)k->h * k->w * ch * bpp)))
            return sensim_error(SENSIM_ENOMEM, "out of memory");
    } else if (im->height != k->h || im->width != k->w || strcmp(im->encoding, k->encoding))
        return sensim_error(SENSIM_EDATA, "%s: topic '%s': message %llu: %ux%u %s after %ux%u %s frames", m->bag,
                            k->t->name, (unsigned long long)index, im->width, im->height, im->encoding, k->w, k->h,
                            k->encoding);
    size_t rowb = (size_t)k->w * ch * bpp;
    if (im->step < rowb)
        return sensim_error(SENSIM_EFORMAT, "%s: topic '%s': message %llu: Image.step %u is less than %zu bytes of a "
                            "%u-pixel %s row", m->bag, k->t->name, (unsigned long long)index, im->step, rowb, k->w,
                            im->encoding);
    int bgr = !strcmp(im->encoding, "bgr8");
    for (uint32_t y = 0; y < k->h; y++) {
        const uint8_t *src = im->data + (size_t)y * im->step;
        uint8_t *dst = k->frame + y * rowb;
        if (bpp == 2)
            for (uint32_t x = 0; x < k->w; x++) {
                uint16_t v = im->is_bigendian ? (uint16_t)(src[2 * x] << 8 | src[2 * x + 1])
                                              : (uint16_t)(src[2 * x] | src[2 * x + 1] << 8);
                memcpy(dst + 2 * x, &v, 2);
            }
        else if (bgr)
            for (uint32_t x = 0; x < k->w; x++) {
                dst[3 * x] = src[3 * x + 2];
                dst[3 * x + 1] = src[3 * x + 1];
                dst[3 * x + 2] = src[3 * x];
            }
        else
            memcpy(dst, src, rowb);
    }
    if ((st = col_put(&k->c[C_T], &t)))
        return st;
    return col_put(&k->c[C_A], k->frame);
}

static void quat_wxyz(const double xyzw[4], double wxyz[4])
{
    wxyz[0] = xyzw[3];
    wxyz[1] = xyzw[0];
    wxyz[2] = xyzw[1];
    wxyz[3] = xyzw[2];
}

/* One message of a topic sharing its group: its stamp must be the next of
 * the other topic's (same count, same stamps, row for row). */
static sensim_status match_mate(imp *m, sink *k, int64_t stamp, uint64_t index)
{
    sink *o = k->mate, *imu = k->kind == SENSIM_MSG_IMU ? k : o;
    if (imu->pend_n && imu->ahead != (k == imu)) {
        int64_t want = imu->pend[imu->pend_head];
        imu->pend_head = (imu->pend_head + 1) % PEND_MAX;
        imu->pend_n--;
        if (want == stamp)
            return SENSIM_OK;
        return sensim_error(SENSIM_EDATA, "%s: topic '%s': message %llu: stamp %lld ns, where the next message of "
                            "'%s' sharing /sensors/%s has %lld ns; topics share a group only when their stamps are "
                            "the same, message for message (name them apart: --topic %s:NAME)", m->bag, k->t->name,
                            (unsigned long long)index, (long long)stamp, o->t->name, k->name, (long long)want,
                            k->t->name);
    }
    if (imu->pend_n == PEND_MAX)
        return sensim_error(SENSIM_EDATA, "%s: topic '%s': message %llu: %d messages ahead of '%s', which shares "
                            "/sensors/%s; topics share a group only when their stamps are the same, message for "
                            "message (name them apart: --topic %s:NAME)", m->bag, k->t->name,
                            (unsigned long long)index, PEND_MAX, o->t->name, k->name, k->t->name);
    imu->ahead = k == imu;
    imu->pend[(imu->pend_head + imu->pend_n++) % PEND_MAX] = stamp;
    return SENSIM_OK;
}

static sensim_status emit(void *ctx, size_t sel, int64_t stamp, uint64_t index, const uint8_t *data, size_t size)
{
    imp *m = ctx;
    sink *k = &m->k[sel];
    sensim_msg_encoding enc = k->t->encoding;
    double t = rel_t(m, stamp);
    sensim_status st = SENSIM_OK;
    if (k->mate && (st = match_mate(m, k, stamp, index)))
        return st;
    switch (k->kind) {
    case SENSIM_MSG_IMU: {
        sensim_msg_imu x;
        if ((st = sensim_msg_decode_imu(enc, data, size, &x)))
            break;
        double q[4];
        quat_wxyz(x.orientation, q);
        if ((st = col_put(&k->c[C_T], &t)) || (st = col_put(&k->c[C_A], x.angular_velocity)) ||
            (st = col_put(&k->c[C_B], x.linear_acceleration)) || (st = cs_put(&k->f[0], m->log, k->group, q)) ||
            (st = cs_put(&k->f[1], m->log, k->group, x.orientation_covariance)) ||
            (st = cs_put(&k->f[2], m->log, k->group, x.angular_velocity_covariance)))
            break;
        st = cs_put(&k->f[3], m->log, k->group, x.linear_acceleration_covariance);
        break;
    }
    case SENSIM_MSG_MAGNETIC_FIELD: {
        sensim_msg_magnetic_field x;
        if ((st = sensim_msg_decode_magnetic_field(enc, data, size, &x)) ||
            (!k->mate && (st = col_put(&k->c[C_T], &t))) || (st = col_put(&k->c[C_A], x.magnetic_field)))
            break;
        st = cs_put(&k->f[0], m->log, k->group, x.magnetic_field_covariance);
        break;
    }
    case SENSIM_MSG_NAVSATFIX: {
        sensim_msg_navsatfix x;
        if ((st = sensim_msg_decode_navsatfix(enc, data, size, &x)))
            break;
        double lla[3] = {x.latitude, x.longitude, x.altitude}, svc = x.service, ct = x.position_covariance_type;
        int8_t fix = x.status;
        if ((st = col_put(&k->c[C_T], &t)) || (st = col_put(&k->c[C_A], lla)) ||
            (st = col_put(&k->c[C_B], x.position_covariance)) || (st = col_put(&k->c[C_C], &fix)) ||
            (st = cs_put(&k->f[0], m->log, k->group, &svc)))
            break;
        st = cs_put(&k->f[1], m->log, k->group, &ct);
        break;
    }
    case SENSIM_MSG_POINTCLOUD2: {
        sensim_msg_pointcloud2 x;
        if (!(st = sensim_msg_decode_pointcloud2(enc, data, size, &x)))
            st = put_cloud(m, k, t, &x, index);
        break;
    }
    case SENSIM_MSG_IMAGE: {
        sensim_msg_image x;
        if (!(st = sensim_msg_decode_image(enc, data, size, &x)))
            st = put_image(m, k, t, &x, index);
        break;
    }
    default: {
        pose p = {.t = t};
        const double *pos, *rot;
        sensim_msg_odometry od;
        sensim_msg_pose_stamped ps;
        sensim_msg_transform_stamped ts;
        if (k->kind == SENSIM_MSG_ODOMETRY) {
            if ((st = sensim_msg_decode_odometry(enc, data, size, &od)))
                break;
            pos = od.pose.position;
            rot = od.pose.orientation;
            if (!k->child[0])
                snprintf(k->child, sizeof k->child, "%s", od.child_frame_id);
        } else if (k->kind == SENSIM_MSG_POSE_STAMPED) {
            if ((st = sensim_msg_decode_pose_stamped(enc, data, size, &ps)))
                break;
            pos = ps.pose.position;
            rot = ps.pose.orientation;
        } else {
            if (k->kind == SENSIM_MSG_TF) {
                int f = cli_bag_find_tf(enc, data, size, m->tf_parent, m->tf_child, &ts);
                if (f <= 0) {
                    st = f < 0 ? sensim_last_status()
                               : sensim_error(SENSIM_EINTERNAL, "transform %s -> %s vanished", m->tf_parent,
                                              m->tf_child);
                    break;
                }
            } else if ((st = sensim_msg_decode_transform_stamped(enc, data, size, &ts)))
                break;
            pos = ts.translation;
            rot = ts.rotation;
            if (!k->child[0])
                snprintf(k->child, sizeof k->child, "%s", ts.child_frame_id);
        }
        memcpy(p.p, pos, sizeof p.p);
        quat_wxyz(rot, p.q);
        double nq = sqrt(p.q[0] * p.q[0] + p.q[1] * p.q[1] + p.q[2] * p.q[2] + p.q[3] * p.q[3]);
        if (!(nq > 0.5 && nq < 1.5) || !isfinite(p.p[0] + p.p[1] + p.p[2])) {
            st = sensim_error(SENSIM_EDATA, "%s: topic '%s': message %llu: pose not usable (position %g %g %g, "
                              "quaternion norm %g)", m->bag, k->t->name, (unsigned long long)index, p.p[0], p.p[1],
                              p.p[2], nq);
            break;
        }
        for (int i = 0; i < 4; i++)
            p.q[i] /= nq;
        st = gt_add(&k->gt, &p);
        break;
    }
    }
    if (st && !strstr(sensim_last_error(), m->bag))
        sensim_error_prefix(st, "%s: topic '%s': message %llu", m->bag, k->t->name, (unsigned long long)index);
    return st;
}

static sensim_status set_str(sensim_log *log, const char *g, const char *name, const char *v)
{
    return sensim_log_set_attr_string(log, g, name, v);
}

static sensim_status close_sink(imp *m, sink *k, const cli_bag_stats *bs)
{
    sensim_status st = SENSIM_OK, st2;
    for (int i = 0; i < NCOL; i++)
        if (k->c[i].d && (st2 = col_close(&k->c[i])) && !st)
            st = st2;
    for (size_t i = 0; i < k->nf; i++)
        if ((st2 = cs_finish(&k->f[i], m->log, k->group)) && !st)
            st = st2;
    if (k->gt.wr) {
        if ((st2 = gt_finish(&k->gt)) && !st)
            st = st2;
        sensim_gt_writer_close(k->gt.wr);
        k->gt.wr = NULL;
    }
    if (st)
        return st;
    if (k->mate && k->kind == SENSIM_MSG_MAGNETIC_FIELD)
        /* The Imu topic's sink writes the group's attributes; these say
         * where magnetic_field came from, for export. */
        return set_str(m->log, k->group, "ros_magnetic_field_topic", k->t->name) ||
                       set_str(m->log, k->group, "ros_magnetic_field_type", k->t->type) ||
                       set_str(m->log, k->group, "ros_magnetic_field_frame_id", bs->frame_id)
                   ? sensim_last_status()
                   : SENSIM_OK;
    const char *type = k->kind == SENSIM_MSG_IMU || k->kind == SENSIM_MSG_MAGNETIC_FIELD ? "imu"
                       : k->kind == SENSIM_MSG_NAVSATFIX                                ? "gnss"
                       : k->kind == SENSIM_MSG_POINTCLOUD2                              ? "lidar"
                       : k->kind == SENSIM_MSG_IMAGE                                    ? "camera"
                                                                                         : NULL;
    double rate = bs->median_dt > 0 ? 1 / bs->median_dt : 0;
    sensim_bag_format fmt = sensim_bag_get_format(cli_bag_stream_bag(m->s));
    if ((type && (st = set_str(m->log, k->group, "type", type))) ||
        (rate > 0 && (st = sensim_log_set_attr_f64(m->log, k->group, "rate_hz", &rate, 1))) ||
        (st = set_str(m->log, k->group, "ros_topic", k->t->name)) ||
        (st = set_str(m->log, k->group, "ros_type", k->t->type)) ||
        (st = set_str(m->log, k->group, "ros_frame_id", bs->frame_id)) ||
        (st = set_str(m->log, k->group, "source", m->bag)) ||
        (st = set_str(m->log, k->group, "source_format",
                      fmt == SENSIM_BAG_ROS1 ? "rosbag" : fmt == SENSIM_BAG_MCAP ? "mcap" : "db3")) ||
        (st = set_str(m->log, k->group, "ros_time", m->time_receive ? "receive" : "header")) ||
        (st = sensim_log_set_attr_i64(m->log, k->group, "time_epoch_ns", &m->origin_ns, 1)))
        return st;
    if (k->child[0] && (st = set_str(m->log, k->group, "ros_child_frame_id", k->child)))
        return st;
    if (k->encoding[0] && (st = set_str(m->log, k->group, "ros_encoding", k->encoding)))
        return st;
    return SENSIM_OK;
}

static int valid_name(const char *s)
{
    if (!*s)
        return 0;
    for (; *s; s++)
        if (!((*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') || (*s >= '0' && *s <= '9') || *s == '_' ||
              *s == '-' || *s == '.'))
            return 0;
    return 1;
}

int cli_import_wants_bag(int argc, char **argv)
{
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (!strcmp(a, "--topic") || !strncmp(a, "--topic=", 8) || !strcmp(a, "-t") ||
            (a[0] != '-' && !(i > 1 && (!strcmp(argv[i - 1], "-o") || !strcmp(argv[i - 1], "--output"))) &&
             cli_is_bag(a)))
            return 1;
    }
    return 0;
}

int cli_export_wants_bag(int argc, char **argv)
{
    for (int i = 1; i < argc; i++) {
        const char *v = NULL;
        if ((!strcmp(argv[i], "--format") || !strcmp(argv[i], "-f")) && i + 1 < argc)
            v = argv[i + 1];
        else if (!strncmp(argv[i], "--format=", 9))
            v = argv[i] + 9;
        if (v && (!strcmp(v, "bag") || !strcmp(v, "mcap") || !strcmp(v, "db3")))
            return 1;
    }
    return 0;
}

#define MAX_TOPICS 64
enum { OPT_TIME = CLI_LONG, OPT_TF, OPT_ORIGIN };

static const cli_opt cli_import_bag_opts[] = {
    {'t', "topic", "T[:NAME]", "a topic to import (repeatable)"},
    {'o', "output", "FILE", "the log to write (temporary name, renamed when complete)"},
    {OPT_TIME, "time", "header|receive", "stamps from the message headers (default) or the\n"
                                         "recorder's receive times"},
    {OPT_TF, "tf", "PARENT:CHILD", "the transform a TFMessage topic contributes"},
    {OPT_ORIGIN, "origin", "LAT,LON,ALT", "WGS84 origin of /ground_truth's ENU frame (the poses'\n"
                                          "frame; default 43.0731,-89.4012,260)"},
    CLI_OPTS_END};

const cli_spec cli_import_bag_spec = {
    .verb = "import",
    .head = "usage: sensim import BAG --topic TOPIC[:NAME] [--topic ...] -o OUT.h5\n"
            "                     [--time header|receive] [--tf PARENT:CHILD] [--origin LAT,LON,ALT]\n"
            "\n"
            "Reads topics of a ROS 1 bag, a rosbag2 .db3 or .mcap file or a rosbag2\n"
            "directory and writes them as groups of a new log:\n"
            "  sensor_msgs/Imu            /sensors/NAME (imu): angular_velocity, specific_force\n"
            "  sensor_msgs/MagneticField  /sensors/NAME (imu): magnetic_field; under the NAME of\n"
            "                             an Imu topic with the same stamps, in that topic's group\n"
            "  sensor_msgs/NavSatFix      /sensors/NAME (gnss): lla, fix, position_covariance\n"
            "  sensor_msgs/PointCloud2    /sensors/NAME (lidar): points (x, y, z, intensity),\n"
            "                             scan_offset, channel (ring), time_offset (time)\n"
            "  sensor_msgs/Image          /sensors/NAME (camera): image (mono8, mono16, rgb8, bgr8)\n"
            "  nav_msgs/Odometry, geometry_msgs/PoseStamped, TransformStamped,\n"
            "  tf2_msgs/TFMessage (with --tf)  /ground_truth (velocities from the poses)\n"
            "NAME defaults to the topic without its leading '/' ('/' becoming '_').\n"
            "Messages are sorted by stamp (a window of 4096 messages per topic);\n"
            "reordered messages, dropped duplicate stamps and gaps (intervals over 1.5x\n"
            "the median) are counted on stderr. t is in seconds from time_epoch_ns (an\n"
            "attribute: the whole second of the first stamp, in ns since 1970); each\n"
            "group records ros_topic, ros_type, ros_frame_id and source, so 'sensim\n"
            "export' can write it back with the same topic, frames and stamps.\n"
            "\n",
    .opts = cli_import_bag_opts,
    .column = 27,
    .tail = "\n"
            "Exit status: 0 success, 1 failure, 2 usage error. See sensim-import(1).\n",
};

int cli_import_bag(int argc, char **argv) { return cli_import_bag_run(argc, argv, stderr); }

/* --topic T[:NAME]: the topic, and NAME (default: the topic without its
 * leading '/', '/' becoming '_'). */
static int parse_topic(const char *arg, char *topic, size_t tsize, char *name, size_t nsize)
{
    const char *colon = strchr(arg, ':');
    size_t tl = colon ? (size_t)(colon - arg) : strlen(arg);
    if (tl == 0 || tl >= tsize)
        return cli_usage_error("import", "--topic '%s': expected TOPIC[:NAME]", arg);
    memcpy(topic, arg, tl);
    topic[tl] = '\0';
    if (colon)
        snprintf(name, nsize, "%s", colon + 1);
    else {
        const char *p = topic + (topic[0] == '/');
        size_t i = 0;
        for (; p[i] && i + 1 < nsize; i++)
            name[i] = p[i] == '/' ? '_' : p[i];
        name[i] = '\0';
    }
    if (!valid_name(name))
        return cli_usage_error("import", "--topic '%s': group name '%s' must be letters, digits, '_', '-', '.'",
                               arg, name);
    return CLI_OK;
}

/* A sink per topic, its group named: one ground truth at most, and two
 * topics share a NAME only as an Imu and a MagneticField topic, which then
 * share the group (their stamps are checked as they come). CLI_USAGE
 * (message printed), CLI_FAIL (the library's error set) or CLI_OK. */
static int plan_sinks(imp *m, char (*topic)[256], char (*name)[128], size_t nt)
{
    if (!(m->k = calloc(nt, sizeof *m->k))) {
        sensim_error(SENSIM_ENOMEM, "out of memory");
        return CLI_FAIL;
    }
    m->n = nt;
    int ngt = 0;
    for (size_t i = 0; i < nt; i++) {
        sink *k = &m->k[i];
        k->kind = cli_bag_stream_kind(m->s, i);
        k->t = cli_bag_stream_topic(m->s, i);
        snprintf(k->name, sizeof k->name, "%s", name[i]);
        int gt = k->kind == SENSIM_MSG_ODOMETRY || k->kind == SENSIM_MSG_POSE_STAMPED ||
                 k->kind == SENSIM_MSG_TRANSFORM_STAMPED || k->kind == SENSIM_MSG_TF;
        if (gt && ngt++)
            return cli_usage_error("import", "only one topic can be the ground truth ('%s' is the second)",
                                   k->t->name);
        snprintf(k->group, sizeof k->group, gt ? "/ground_truth" : "/sensors/%s", k->name);
    }
    for (size_t i = 0; i < nt; i++)
        for (size_t j = 0; j < i; j++) {
            if (strcmp(name[i], name[j]))
                continue;
            sink *a = &m->k[j], *b = &m->k[i];
            int pair = (a->kind == SENSIM_MSG_IMU && b->kind == SENSIM_MSG_MAGNETIC_FIELD) ||
                       (a->kind == SENSIM_MSG_MAGNETIC_FIELD && b->kind == SENSIM_MSG_IMU);
            if (!pair || a->mate || b->mate)
                return cli_usage_error("import",
                                       "topics '%s' and '%s' both go to /sensors/%s; name them (--topic T:NAME; "
                                       "only a sensor_msgs/Imu and a MagneticField topic may share a name)",
                                       topic[j], topic[i], name[i]);
            a->mate = b;
            b->mate = a;
            sink *imu = a->kind == SENSIM_MSG_IMU ? a : b;
            if (!(imu->pend = malloc(PEND_MAX * sizeof *imu->pend))) {
                sensim_error(SENSIM_ENOMEM, "out of memory");
                return CLI_FAIL;
            }
        }
    return CLI_OK;
}

/* After the last message: topics sharing a group came out even, each
 * topic had messages (ground truth at least 2), and every sink's datasets
 * are closed. */
static sensim_status finish_sinks(imp *m)
{
    sensim_status st = SENSIM_OK;
    for (size_t i = 0; i < m->n; i++) {
        sink *k = &m->k[i];
        if (k->pend && k->pend_n) {
            sink *behind = k->ahead ? k->mate : k;
            return sensim_error(SENSIM_EDATA, "%s: topic '%s' has %zu messages fewer than '%s', which shares "
                                "/sensors/%s; topics share a group only when their stamps are the same, message for "
                                "message (name them apart: --topic %s:NAME)", m->bag, behind->t->name, k->pend_n,
                                behind->mate->t->name, k->name, behind->t->name);
        }
    }
    for (size_t i = 0; i < m->n && !st; i++) {
        sink *k = &m->k[i];
        const cli_bag_stats *bs = cli_bag_stream_stats(m->s, i);
        if (bs->messages == 0 || (k->gt.wr && bs->messages < 2)) {
            if (k->kind == SENSIM_MSG_TF)
                return sensim_error(SENSIM_EDATA, "%s: topic '%s': %llu messages, %s transform %s -> %s", m->bag,
                                    k->t->name, (unsigned long long)bs->skipped,
                                    bs->messages ? "one" : "none with the", m->tf_parent, m->tf_child);
            return sensim_error(SENSIM_EDATA, "%s: topic '%s': %llu messages%s", m->bag, k->t->name,
                                (unsigned long long)bs->messages, k->gt.wr ? " (ground truth needs 2)" : "");
        }
        st = close_sink(m, k, bs);
    }
    return st;
}

/* One line a topic: messages, rate, reordered, duplicates, gaps. */
static void report_sinks(const imp *m, FILE *report)
{
    for (size_t i = 0; i < m->n && report; i++) {
        const cli_bag_stats *bs = cli_bag_stream_stats(m->s, i);
        const sink *k = &m->k[i];
        fprintf(report,
                "sensim import: %s -> %s: %llu messages, %.6g Hz, %llu reordered, %llu duplicate stamps dropped, "
                "%llu gaps",
                k->t->name, k->group,
                (unsigned long long)bs->messages, bs->median_dt > 0 ? 1 / bs->median_dt : 0.0,
                (unsigned long long)bs->reordered, (unsigned long long)bs->duplicates, (unsigned long long)bs->gaps);
        if (bs->frame_changes)
            fprintf(report, ", frame_id changed %llu times (kept '%s')", (unsigned long long)bs->frame_changes,
                    bs->frame_id);
        if (k->dropped)
            fprintf(report, ", %llu points without a return dropped", (unsigned long long)k->dropped);
        fputc('\n', report);
    }
}

static void imp_free(imp *m)
{
    if (m->k) {
        for (size_t i = 0; i < m->n; i++) {
            sink *k = &m->k[i];
            for (int j = 0; j < NCOL; j++)
                if (k->c[j].buf) {
                    sensim_log_dset_close(k->c[j].d);
                    free(k->c[j].buf);
                }
            for (size_t j = 0; j < k->nf; j++)
                if (k->f[j].c.buf) {
                    sensim_log_dset_close(k->f[j].c.d);
                    free(k->f[j].c.buf);
                }
            sensim_gt_writer_close(k->gt.wr);
            sensim_gt_block_free(&k->gt.b);
            free(k->frame);
            free(k->pend);
        }
        free(m->k);
    }
    sensim_log_close(m->log);
    cli_bag_stream_free(m->s);
}

int cli_import_bag_run(int argc, char **argv, FILE *report)
{
    const char *verb = "import", *out = NULL, *bag = NULL;
    char topic[MAX_TOPICS][256], name[MAX_TOPICS][128], tfbuf[512];
    const char *topics[MAX_TOPICS];
    size_t nt = 0;
    imp m;
    memset(&m, 0, sizeof m);
    double origin[3] = {CLI_DEFAULT_ORIGIN};
    int c;
    cli_parser op;
    cli_parse_begin(&op, &cli_import_bag_spec, argc, argv);
    while ((c = cli_parse_next(&op)) > 0) {
        switch (c) {
        case 't':
            if (nt == MAX_TOPICS)
                return cli_usage_error(verb, "more than %d topics", MAX_TOPICS);
            if ((c = parse_topic(optarg, topic[nt], sizeof topic[nt], name[nt], sizeof name[nt])) != CLI_OK)
                return c;
            topics[nt] = topic[nt];
            nt++;
            break;
        case 'o': out = optarg; break;
        case OPT_TIME:
            if (!strcmp(optarg, "header"))
                m.time_receive = 0;
            else if (!strcmp(optarg, "receive"))
                m.time_receive = 1;
            else
                return cli_usage_error(verb, "--time '%s': expected header or receive", optarg);
            break;
        case OPT_TF: {
            snprintf(tfbuf, sizeof tfbuf, "%s", optarg);
            char *colon = strchr(tfbuf, ':');
            if (!colon || colon == tfbuf || !colon[1])
                return cli_usage_error(verb, "--tf '%s': expected PARENT:CHILD", optarg);
            *colon = '\0';
            m.tf_parent = tfbuf;
            m.tf_child = colon + 1;
            break;
        }
        case OPT_ORIGIN:
            if (cli_parse_triple(optarg, origin))
                return cli_usage_error(verb, "--origin: expected LAT,LON,ALT, got '%s'", optarg);
            break;
        }
    }
    if (c)
        return cli_parse_exit(c);
    if ((c = cli_parse_operand(verb, argc, argv, &bag)))
        return c;
    if (!bag)
        return cli_usage_error(verb, "which recording? (sensim import BAG --topic T -o OUT.h5)");
    if (!nt)
        return cli_usage_error(verb, "--topic is required for a recording (see 'sensim info %s')", bag);
    if (!out)
        return cli_usage_error(verb, "-o/--output is required");
    memcpy(m.lla, origin, sizeof origin);
    m.bag = bag;

    int rc = CLI_FAIL;
    char *cmdline = NULL;
    sensim_status st = SENSIM_OK;
    if (!(m.s = cli_bag_stream_open(bag, topics, nt, m.time_receive, m.tf_parent, m.tf_child)))
        goto done;
    if ((rc = plan_sinks(&m, topic, name, nt)) != CLI_OK)
        goto done;
    rc = CLI_FAIL;
    cmdline = cli_join_args("sensim", argc, argv);
    if (!(m.log = sensim_log_create(out, cmdline ? cmdline : "sensim import")))
        goto done;
    for (size_t i = 0; i < nt; i++)
        if ((st = open_sink(&m, &m.k[i])))
            goto done;
    if ((st = cli_bag_stream_run(m.s, emit, &m)) || (st = finish_sinks(&m)) ||
        (st = sensim_log_set_attr_i64(m.log, "/", "time_epoch_ns", &m.origin_ns, 1)))
        goto done;
    st = sensim_log_commit(m.log);
    m.log = NULL;
    if (st)
        goto done;
    report_sinks(&m, report);
    rc = CLI_OK;
done:
    if (rc == CLI_FAIL && report)
        cli_fail_lib(verb);
    imp_free(&m);
    free(cmdline);
    return rc;
}
