/* sensim export LOG -g GROUP ... --format bag|mcap|db3 -o OUT: sensor groups
 * and the ground truth of a log as messages of a recording, with the topic,
 * frames and stamps 'sensim import' recorded when they came from one. Rows
 * are read in blocks and messages written one at a time. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bagcli.h"
#include "cli.h"
#include "sensim/log.h"


#define BLOCK 4096

/* A per-row f64 field: a dataset, a constant attribute, or a default. */
typedef struct field {
    char path[320];
    int kind; /* 0 default, 1 attribute, 2 dataset */
    size_t w;
    double attr[36];
    double *buf; /* BLOCK * w for a dataset */
} field;

static sensim_status field_open(field *f, const sensim_log *log, const char *group, const char *name, size_t w,
                                size_t nrows)
{
    memset(f, 0, sizeof *f);
    f->w = w;
    snprintf(f->path, sizeof f->path, "%s/%s", group, name);
    if (sensim_log_exists(log, f->path)) {
        size_t rows, tail = w;
        sensim_status st = sensim_log_check_shape(log, f->path, w > 1 ? 1 : 0, &tail, &rows);
        if (st)
            return st;
        if (rows != nrows)
            return sensim_error(SENSIM_EFORMAT, "%s: %s has %zu rows but t has %zu", sensim_log_path(log), f->path,
                                rows, nrows);
        if (!(f->buf = malloc(BLOCK * w * sizeof *f->buf)))
            return sensim_error(SENSIM_ENOMEM, "out of memory");
        f->kind = 2;
    } else if (sensim_log_has_attr(log, group, name)) {
        sensim_status st = sensim_log_get_attr_f64(log, group, name, f->attr, w);
        if (st)
            return st;
        f->kind = 1;
    }
    return SENSIM_OK;
}

static sensim_status field_read(field *f, const sensim_log *log, size_t r0, size_t n)
{
    return f->kind == 2 ? sensim_log_read_f64(log, f->path, r0, n, f->buf) : SENSIM_OK;
}

/* Row j of the block into out (w values), or the default when absent;
 * 1 if the field exists. */
static int field_get(const field *f, size_t j, double *out, const double *dflt)
{
    if (f->kind == 2)
        memcpy(out, f->buf + j * f->w, f->w * sizeof *out);
    else if (f->kind == 1)
        memcpy(out, f->attr, f->w * sizeof *out);
    else if (dflt)
        memcpy(out, dflt, f->w * sizeof *out);
    else
        memset(out, 0, f->w * sizeof *out);
    return f->kind != 0;
}

typedef struct group_out {
    const char *group;
    char name[128];
    char topic[256], type[128], frame[256], child[256], encoding[32];
    int64_t origin_ns;
    int have_origin;
    sensim_msg_kind kind;
    size_t n;
    size_t topic_id;
    /* An imu group with angular_velocity or specific_force and
     * magnetic_field also gives sensor_msgs/MagneticField messages on a
     * topic of their own (as imported, or TOPIC/mag), with the same stamps. */
    int mag;
    char mag_topic[256], mag_frame[256];
    size_t mag_topic_id;
} group_out;

static char *attr_str(const sensim_log *log, const char *obj, const char *name, char *dst, size_t cap)
{
    char *s = NULL;
    if (sensim_log_has_attr(log, obj, name) && !sensim_log_get_attr_string(log, obj, name, &s)) {
        snprintf(dst, cap, "%s", s);
        free(s);
        return dst;
    }
    return NULL;
}

static sensim_status stamp_of(const group_out *g, double t, int64_t *ns)
{
    double v = t * 1e9;
    if (!isfinite(t) || fabs(v) > 9.2e18)
        return sensim_error(SENSIM_EDATA, "%s/t: %g s is not a representable stamp", g->group, t);
    *ns = (g->have_origin ? g->origin_ns : 0) + llround(v);
    return SENSIM_OK;
}

static void set_header(sensim_msg_header *h, const group_out *g, uint64_t k, int64_t ns)
{
    h->seq = (uint32_t)k;
    h->stamp_ns = ns;
    snprintf(h->frame_id, sizeof h->frame_id, "%s", g->frame);
}

typedef struct ex {
    const sensim_log *log;
    sensim_bag_writer *w;
    sensim_msg_encoding enc;
    sensim_msg_buf buf;
    double *t;
} ex;

static sensim_status write_msg(ex *x, const group_out *g, int64_t ns, uint64_t k)
{
    sensim_status st = sensim_bag_writer_write(x->w, g->topic_id, ns, x->buf.data, x->buf.len);
    if (st)
        sensim_error_prefix(st, "%s: row %llu", g->group, (unsigned long long)k);
    return st;
}

/* ---- imu / magnetometer ---- */

static sensim_status export_imu(ex *x, const group_out *g)
{
    const sensim_log *log = x->log;
    field f[8];
    static const char *const names[8] = {"angular_velocity", "specific_force", "orientation", "orientation_covariance",
                                         "angular_velocity_covariance", "specific_force_covariance", "magnetic_field",
                                         "magnetic_field_covariance"};
    static const size_t w[8] = {3, 3, 4, 9, 9, 9, 3, 9};
    char tpath[320];
    snprintf(tpath, sizeof tpath, "%s/t", g->group);
    sensim_status st = SENSIM_OK;
    memset(f, 0, sizeof f);
    for (int i = 0; i < 8 && !st; i++)
        st = field_open(&f[i], log, g->group, names[i], w[i], g->n);
    for (size_t r0 = 0; r0 < g->n && !st; r0 += BLOCK) {
        size_t n = g->n - r0 < BLOCK ? g->n - r0 : BLOCK;
        if ((st = sensim_log_read_f64(log, tpath, r0, n, x->t)))
            break;
        for (int i = 0; i < 8 && !st; i++)
            st = field_read(&f[i], log, r0, n);
        for (size_t j = 0; j < n && !st; j++) {
            uint64_t k = r0 + j;
            int64_t ns;
            if ((st = stamp_of(g, x->t[j], &ns)))
                break;
            x->buf.len = 0;
            if (g->kind == SENSIM_MSG_MAGNETIC_FIELD || g->mag) {
                sensim_msg_magnetic_field m;
                memset(&m, 0, sizeof m);
                set_header(&m.header, g, k, ns);
                if (g->mag)
                    snprintf(m.header.frame_id, sizeof m.header.frame_id, "%s", g->mag_frame);
                field_get(&f[6], j, m.magnetic_field, NULL);
                field_get(&f[7], j, m.magnetic_field_covariance, NULL);
                st = sensim_msg_encode_magnetic_field(x->enc, &m, &x->buf);
                if (g->mag) {
                    if (st || (st = sensim_bag_writer_write(x->w, g->mag_topic_id, ns, x->buf.data, x->buf.len))) {
                        sensim_error_prefix(st, "%s: row %llu", g->group, (unsigned long long)k);
                        break;
                    }
                    x->buf.len = 0;
                }
            }
            if (g->kind != SENSIM_MSG_MAGNETIC_FIELD) {
                sensim_msg_imu m;
                memset(&m, 0, sizeof m);
                set_header(&m.header, g, k, ns);
                /* Absent estimates are flagged as ROS does: covariance[0] = -1. */
                if (!field_get(&f[0], j, m.angular_velocity, NULL))
                    m.angular_velocity_covariance[0] = -1;
                if (!field_get(&f[1], j, m.linear_acceleration, NULL))
                    m.linear_acceleration_covariance[0] = -1;
                double q[4];
                if (field_get(&f[2], j, q, NULL)) {
                    m.orientation[0] = q[1];
                    m.orientation[1] = q[2];
                    m.orientation[2] = q[3];
                    m.orientation[3] = q[0];
                } else
                    m.orientation_covariance[0] = -1;
                double c[9];
                if (field_get(&f[3], j, c, NULL))
                    memcpy(m.orientation_covariance, c, sizeof c);
                if (field_get(&f[4], j, c, NULL))
                    memcpy(m.angular_velocity_covariance, c, sizeof c);
                if (field_get(&f[5], j, c, NULL))
                    memcpy(m.linear_acceleration_covariance, c, sizeof c);
                st = sensim_msg_encode_imu(x->enc, &m, &x->buf);
            }
            if (st)
                sensim_error_prefix(st, "%s: row %llu", g->group, (unsigned long long)k);
            else
                st = write_msg(x, g, ns, k);
        }
    }
    for (int i = 0; i < 8; i++)
        free(f[i].buf);
    return st;
}

/* ---- gnss ---- */

static sensim_status export_gnss(ex *x, const group_out *g)
{
    const sensim_log *log = x->log;
    field lla, cov, svc, ctype;
    char tpath[320], fpath[320];
    snprintf(tpath, sizeof tpath, "%s/t", g->group);
    snprintf(fpath, sizeof fpath, "%s/fix", g->group);
    memset(&lla, 0, sizeof lla);
    memset(&cov, 0, sizeof cov);
    memset(&svc, 0, sizeof svc);
    memset(&ctype, 0, sizeof ctype);
    int8_t *fix = NULL;
    sensim_status st;
    if ((st = field_open(&lla, log, g->group, "lla", 3, g->n)) ||
        (st = field_open(&cov, log, g->group, "position_covariance", 9, g->n)) ||
        (st = field_open(&svc, log, g->group, "service", 1, g->n)) ||
        (st = field_open(&ctype, log, g->group, "position_covariance_type", 1, g->n)))
        goto done;
    if (lla.kind != 2) {
        st = sensim_error(SENSIM_ENOTFOUND, "%s: %s/lla: dataset missing (NavSatFix needs latitude, longitude, "
                          "altitude)", sensim_log_path(log), g->group);
        goto done;
    }
    int has_fix = sensim_log_exists(log, fpath);
    if (has_fix && !(fix = malloc(BLOCK))) {
        st = sensim_error(SENSIM_ENOMEM, "out of memory");
        goto done;
    }
    for (size_t r0 = 0; r0 < g->n && !st; r0 += BLOCK) {
        size_t n = g->n - r0 < BLOCK ? g->n - r0 : BLOCK;
        if ((st = sensim_log_read_f64(log, tpath, r0, n, x->t)) || (st = field_read(&lla, log, r0, n)) ||
            (st = field_read(&cov, log, r0, n)) || (st = field_read(&svc, log, r0, n)) ||
            (st = field_read(&ctype, log, r0, n)) ||
            (has_fix && (st = sensim_log_read(log, fpath, SENSIM_I8, r0, n, fix))))
            break;
        for (size_t j = 0; j < n && !st; j++) {
            uint64_t k = r0 + j;
            int64_t ns;
            if ((st = stamp_of(g, x->t[j], &ns)))
                break;
            sensim_msg_navsatfix m;
            memset(&m, 0, sizeof m);
            set_header(&m.header, g, k, ns);
            double v[3], one = 1, zero = 0, known = 3;
            field_get(&lla, j, v, NULL);
            m.latitude = v[0];
            m.longitude = v[1];
            m.altitude = v[2];
            m.status = has_fix ? fix[j] : 0;
            double s;
            field_get(&svc, j, &s, &one);
            m.service = (uint16_t)s;
            int has_cov = field_get(&cov, j, m.position_covariance, NULL);
            field_get(&ctype, j, &s, has_cov ? &known : &zero);
            m.position_covariance_type = (uint8_t)s;
            x->buf.len = 0;
            if ((st = sensim_msg_encode_navsatfix(x->enc, &m, &x->buf)))
                sensim_error_prefix(st, "%s: row %llu", g->group, (unsigned long long)k);
            else
                st = write_msg(x, g, ns, k);
        }
    }
done:
    free(lla.buf);
    free(cov.buf);
    free(svc.buf);
    free(ctype.buf);
    free(fix);
    return st;
}

/* The array at *arrp (arrp is the address of its pointer) resized to n
 * elements of `size` bytes (one at least): 0, or -1 with it kept when out
 * of memory. */
static int resize(void *arrp, size_t n, size_t size)
{
    void *a;
    memcpy(&a, arrp, sizeof a);
    if (!(a = realloc(a, (n ? n : 1) * size)))
        return -1;
    memcpy(arrp, &a, sizeof a);
    return 0;
}

/* ---- lidar: one PointCloud2 per scan ---- */

static sensim_status export_lidar(ex *x, const group_out *g)
{
    const sensim_log *log = x->log;
    char p[320], so[320], ch[320], to[320];
    snprintf(p, sizeof p, "%s/points", g->group);
    snprintf(so, sizeof so, "%s/scan_offset", g->group);
    snprintf(ch, sizeof ch, "%s/channel", g->group);
    snprintf(to, sizeof to, "%s/time_offset", g->group);
    size_t four = 4, M, S1;
    sensim_status st;
    if ((st = sensim_log_check_shape(log, p, 1, &four, &M)) || (st = sensim_log_check_shape(log, so, 0, NULL, &S1)))
        return st;
    if (S1 != g->n + 1)
        return sensim_error(SENSIM_EFORMAT, "%s: %s has %zu entries; expected %zu (scans + 1)", sensim_log_path(log),
                            so, S1, g->n + 1);
    int has_ring = sensim_log_exists(log, ch), has_time = sensim_log_exists(log, to);
    uint64_t *off = malloc(S1 * sizeof *off);
    float *pts = NULL, *tim = NULL;
    uint16_t *ring = NULL;
    uint8_t *data = NULL;
    if (!off)
        return sensim_error(SENSIM_ENOMEM, "out of memory");
    if ((st = sensim_log_read(log, so, SENSIM_U64, 0, S1, off)))
        goto done;
    sensim_msg_pointcloud2 pc;
    memset(&pc, 0, sizeof pc);
    static const char *const fn[4] = {"x", "y", "z", "intensity"};
    for (int i = 0; i < 4; i++)
        pc.fields[i] = (sensim_msg_point_field){"", (uint32_t)(4 * i), SENSIM_PF_FLOAT32, 1};
    for (int i = 0; i < 4; i++)
        snprintf(pc.fields[i].name, sizeof pc.fields[i].name, "%s", fn[i]);
    pc.nfields = 4;
    uint32_t step = 16;
    if (has_ring) {
        pc.fields[pc.nfields++] = (sensim_msg_point_field){"ring", step, SENSIM_PF_UINT16, 1};
        step += 4; /* uint16 and two bytes of padding, as Velodyne drivers lay it out */
    }
    if (has_time) {
        pc.fields[pc.nfields++] = (sensim_msg_point_field){"time", step, SENSIM_PF_FLOAT32, 1};
        step += 4;
    }
    pc.point_step = step;
    pc.height = 1;
    pc.is_dense = 1;
    for (size_t s = 0; s < g->n && !st; s++) {
        if (off[s + 1] < off[s] || off[s + 1] > M) {
            st = sensim_error(SENSIM_EFORMAT, "%s: %s: entry %zu out of order or past %zu points",
                              sensim_log_path(log), so, s + 1, M);
            break;
        }
        size_t np = off[s + 1] - off[s];
        double t;
        int64_t ns;
        if ((st = sensim_log_read_f64(log, (snprintf(p, sizeof p, "%s/t", g->group), p), s, 1, &t)) ||
            (st = stamp_of(g, t, &ns)))
            break;
        snprintf(p, sizeof p, "%s/points", g->group);
        if (resize(&pts, np, 16) || resize(&data, np, step)) {
            st = sensim_error(SENSIM_ENOMEM, "out of memory for a scan of %zu points", np);
            break;
        }
        if ((has_ring && resize(&ring, np, 2)) || (has_time && resize(&tim, np, 4))) {
            st = sensim_error(SENSIM_ENOMEM, "out of memory");
            break;
        }
        if (np && ((st = sensim_log_read(log, p, SENSIM_F32, off[s], np, pts)) ||
                   (has_ring && (st = sensim_log_read(log, ch, SENSIM_U16, off[s], np, ring))) ||
                   (has_time && (st = sensim_log_read(log, to, SENSIM_F32, off[s], np, tim)))))
            break;
        memset(data, 0, np * step);
        for (size_t j = 0; j < np; j++) {
            uint8_t *d = data + j * step;
            memcpy(d, pts + 4 * j, 16);
            if (has_ring)
                memcpy(d + 16, ring + j, 2);
            if (has_time)
                memcpy(d + step - 4, tim + j, 4);
        }
        set_header(&pc.header, g, s, ns);
        pc.width = (uint32_t)np;
        pc.row_step = (uint32_t)(np * step);
        pc.data = data;
        pc.data_size = np * step;
        x->buf.len = 0;
        if ((st = sensim_msg_encode_pointcloud2(x->enc, &pc, &x->buf)))
            sensim_error_prefix(st, "%s: scan %zu", g->group, s);
        else
            st = write_msg(x, g, ns, s);
    }
done:
    free(off);
    free(pts);
    free(ring);
    free(tim);
    free(data);
    return st;
}

/* ---- camera: one Image per frame ---- */

static sensim_status export_camera(ex *x, const group_out *g)
{
    const sensim_log *log = x->log;
    char img[320], tpath[320];
    snprintf(img, sizeof img, "%s/image", g->group);
    snprintf(tpath, sizeof tpath, "%s/t", g->group);
    int rank;
    size_t dims[SENSIM_LOG_MAX_RANK];
    sensim_dtype dt;
    sensim_status st;
    if ((st = sensim_log_shape(log, img, &rank, dims)) || (st = sensim_log_dtype(log, img, &dt)))
        return st;
    size_t C = rank == 4 ? dims[3] : 1;
    if ((rank != 3 && rank != 4) || (C != 1 && C != 3) || dims[0] != g->n)
        return sensim_error(SENSIM_EFORMAT, "%s: %s: expected [N,H,W] or [N,H,W,3] with N = %zu frames",
                            sensim_log_path(log), img, g->n);
    sensim_msg_image im;
    memset(&im, 0, sizeof im);
    im.height = (uint32_t)dims[1];
    im.width = (uint32_t)dims[2];
    size_t esz;
    if (dt == SENSIM_U8) {
        esz = 1;
        snprintf(im.encoding, sizeof im.encoding, "%s",
                 C == 3 ? (!strcmp(g->encoding, "bgr8") ? "bgr8" : "rgb8") : "mono8");
    } else if (dt == SENSIM_U16 && C == 1) {
        esz = 2;
        snprintf(im.encoding, sizeof im.encoding, "mono16");
    } else if (dt == SENSIM_F32) {
        dt = SENSIM_F32;
        esz = 4;
        snprintf(im.encoding, sizeof im.encoding, "%s", C == 3 ? "32FC3" : "32FC1");
    } else
        return sensim_error(SENSIM_EUNSUPPORTED, "%s: %s: element type not written as an Image (u8, u16, f32)",
                            sensim_log_path(log), img);
    size_t frame = (size_t)im.height * im.width * C * esz;
    im.step = (uint32_t)(im.width * C * esz);
    uint8_t *buf = malloc(frame ? frame : 1);
    if (!buf)
        return sensim_error(SENSIM_ENOMEM, "out of memory");
    for (size_t k = 0; k < g->n && !st; k++) {
        double t;
        int64_t ns;
        if ((st = sensim_log_read_f64(log, tpath, k, 1, &t)) || (st = stamp_of(g, t, &ns)) ||
            (st = sensim_log_read(log, img, dt, k, 1, buf)))
            break;
        if (!strcmp(im.encoding, "bgr8"))
            for (size_t i = 0; i + 2 < frame; i += 3) {
                uint8_t r = buf[i];
                buf[i] = buf[i + 2];
                buf[i + 2] = r;
            }
        set_header(&im.header, g, k, ns);
        im.data = buf;
        im.data_size = frame;
        x->buf.len = 0;
        if ((st = sensim_msg_encode_image(x->enc, &im, &x->buf)))
            sensim_error_prefix(st, "%s: frame %zu", g->group, k);
        else
            st = write_msg(x, g, ns, k);
    }
    free(buf);
    return st;
}

/* ---- ground truth ---- */

static sensim_status export_gt(ex *x, const group_out *g)
{
    const sensim_log *log = x->log;
    size_t n;
    double lla[3];
    sensim_status st = sensim_gt_check(log, &n, lla);
    if (st)
        return st;
    sensim_gt_block b = {0};
    if ((st = sensim_gt_block_init(&b, BLOCK)))
        return st;
    for (size_t r0 = 0; r0 < n && !st; r0 += BLOCK) {
        size_t m = n - r0 < BLOCK ? n - r0 : BLOCK;
        if ((st = sensim_gt_read(log, r0, m, &b)))
            break;
        for (size_t j = 0; j < m && !st; j++) {
            uint64_t k = r0 + j;
            int64_t ns;
            if ((st = stamp_of(g, b.t[j], &ns)))
                break;
            const double *p = b.position + 3 * j, *q = b.orientation + 4 * j, *v = b.velocity + 3 * j;
            double xyzw[4] = {q[1], q[2], q[3], q[0]};
            x->buf.len = 0;
            if (g->kind == SENSIM_MSG_POSE_STAMPED) {
                sensim_msg_pose_stamped ps;
                memset(&ps, 0, sizeof ps);
                set_header(&ps.header, g, k, ns);
                memcpy(ps.pose.position, p, 3 * sizeof *p);
                memcpy(ps.pose.orientation, xyzw, sizeof xyzw);
                st = sensim_msg_encode_pose_stamped(x->enc, &ps, &x->buf);
            } else if (g->kind == SENSIM_MSG_TRANSFORM_STAMPED || g->kind == SENSIM_MSG_TF) {
                sensim_msg_transform_stamped ts;
                memset(&ts, 0, sizeof ts);
                set_header(&ts.header, g, k, ns);
                snprintf(ts.child_frame_id, sizeof ts.child_frame_id, "%s", g->child);
                memcpy(ts.translation, p, 3 * sizeof *p);
                memcpy(ts.rotation, xyzw, sizeof xyzw);
                st = g->kind == SENSIM_MSG_TF ? sensim_msg_encode_tf(x->enc, &ts, 1, &x->buf)
                                              : sensim_msg_encode_transform_stamped(x->enc, &ts, &x->buf);
            } else {
                /* Odometry's twist is in the child (body) frame: R^T v. */
                sensim_msg_odometry od;
                memset(&od, 0, sizeof od);
                set_header(&od.header, g, k, ns);
                snprintf(od.child_frame_id, sizeof od.child_frame_id, "%s", g->child);
                memcpy(od.pose.position, p, 3 * sizeof *p);
                memcpy(od.pose.orientation, xyzw, sizeof xyzw);
                double w = q[0], qx = q[1], qy = q[2], qz = q[3];
                double R[3][3] = {{1 - 2 * (qy * qy + qz * qz), 2 * (qx * qy - w * qz), 2 * (qx * qz + w * qy)},
                                  {2 * (qx * qy + w * qz), 1 - 2 * (qx * qx + qz * qz), 2 * (qy * qz - w * qx)},
                                  {2 * (qx * qz - w * qy), 2 * (qy * qz + w * qx), 1 - 2 * (qx * qx + qy * qy)}};
                for (int i = 0; i < 3; i++)
                    od.twist_linear[i] = R[0][i] * v[0] + R[1][i] * v[1] + R[2][i] * v[2];
                memcpy(od.twist_angular, b.angular_velocity + 3 * j, 3 * sizeof(double));
                st = sensim_msg_encode_odometry(x->enc, &od, &x->buf);
            }
            if (st)
                sensim_error_prefix(st, "/ground_truth: row %llu", (unsigned long long)k);
            else
                st = write_msg(x, g, ns, k);
        }
    }
    sensim_gt_block_free(&b);
    return st;
}

/* ---- the verb ---- */

#define MAX_GROUPS 32
enum { OPT_TOPIC = CLI_LONG };

static const cli_opt cli_export_bag_opts[] = {
    {'g', "group", "GROUP", "/sensors/NAME, NAME or /ground_truth (repeatable)"},
    {'f', "format", "FORMAT", "bag (ROS 1, uncompressed), mcap or db3 (ROS 2, CDR)"},
    {OPT_TOPIC, "topic", "TOPIC", "topic for a single group (default: as imported, or /NAME)"},
    {'o', "output", "FILE", "the recording to write (temporary name, renamed when complete)"},
    CLI_OPTS_END};

const cli_spec cli_export_bag_spec = {
    .verb = "export",
    .head = "usage: sensim export LOG.h5 -g GROUP [-g GROUP ...] --format bag|mcap|db3 -o OUT\n"
            "\n"
            "Writes sensor groups (/sensors/NAME) and /ground_truth of a log as a ROS 1 bag\n"
            "(bag) or a ROS 2 recording in CDR (mcap, db3), one message per row:\n"
            "  imu      sensor_msgs/Imu (sensor_msgs/MagneticField for a magnetometer-only group;\n"
            "           both, on two topics, for a group with both)\n"
            "  gnss     sensor_msgs/NavSatFix      lidar   sensor_msgs/PointCloud2 (one per scan)\n"
            "  camera   sensor_msgs/Image          /ground_truth  nav_msgs/Odometry\n"
            "A group imported from a recording keeps its topic, message type, frame ids\n"
            "and header stamps (ros_* and time_epoch_ns attributes), and the fields sensim\n"
            "does not model (orientation, covariances) come back as recorded; other groups\n"
            "get topic /NAME, frame NAME and stamps t seconds.\n"
            "\n",
    .opts = cli_export_bag_opts,
    .column = 24,
    .tail = "\n"
            "Exit status: 0 success, 1 failure, 2 usage error. See sensim-export(1).\n",
};

static sensim_status describe(const sensim_log *log, const char *path, group_out *g, int ros2)
{
    const char *file = sensim_log_path(log);
    char type[64] = "";
    int gt = !strcmp(path, "/ground_truth");
    if (!sensim_log_exists(log, path))
        return sensim_error(SENSIM_ENOTFOUND, "%s: no group %s", file, path);
    const char *base = strrchr(path, '/');
    snprintf(g->name, sizeof g->name, "%s", base ? base + 1 : path);
    if (!g->topic[0] && !attr_str(log, path, "ros_topic", g->topic, sizeof g->topic))
        snprintf(g->topic, sizeof g->topic, "/%s", g->name);
    if (!attr_str(log, path, "ros_frame_id", g->frame, sizeof g->frame))
        snprintf(g->frame, sizeof g->frame, "%s", gt ? "world" : g->name);
    if (!attr_str(log, path, "ros_child_frame_id", g->child, sizeof g->child))
        snprintf(g->child, sizeof g->child, "body");
    attr_str(log, path, "ros_encoding", g->encoding, sizeof g->encoding);
    char rt[128] = "";
    sensim_msg_kind was = attr_str(log, path, "ros_type", rt, sizeof rt) ? sensim_msg_kind_of(rt) : SENSIM_MSG_UNKNOWN;
    /* The time origin: the group's time_epoch_ns, else the root's (as
     * 'sensim import' writes them for any recording), else 0. */
    const char *objs[2] = {path, "/"};
    for (int i = 0; i < 2 && !g->have_origin; i++)
        if (sensim_log_has_attr(log, objs[i], "time_epoch_ns")) {
            double e;
            sensim_status st = sensim_log_get_attr_f64(log, objs[i], "time_epoch_ns", &e, 1);
            if (st)
                return st;
            g->origin_ns = (int64_t)llround(e);
            g->have_origin = 1;
        }
    if (gt) {
        g->kind = was == SENSIM_MSG_POSE_STAMPED || was == SENSIM_MSG_TRANSFORM_STAMPED || was == SENSIM_MSG_TF
                      ? was
                      : SENSIM_MSG_ODOMETRY;
    } else {
        attr_str(log, path, "type", type, sizeof type);
        char m[400];
        if (!strcmp(type, "imu")) {
            snprintf(m, sizeof m, "%s/angular_velocity", path);
            int imu = sensim_log_exists(log, m);
            snprintf(m, sizeof m, "%s/specific_force", path);
            imu |= sensim_log_exists(log, m);
            g->kind = imu && was != SENSIM_MSG_MAGNETIC_FIELD ? SENSIM_MSG_IMU : SENSIM_MSG_MAGNETIC_FIELD;
            snprintf(m, sizeof m, "%s/magnetic_field", path);
            if (g->kind == SENSIM_MSG_IMU && sensim_log_exists(log, m)) {
                g->mag = 1;
                if (!attr_str(log, path, "ros_magnetic_field_topic", g->mag_topic, sizeof g->mag_topic))
                    snprintf(g->mag_topic, sizeof g->mag_topic, "%.250s/mag", g->topic);
                if (!attr_str(log, path, "ros_magnetic_field_frame_id", g->mag_frame, sizeof g->mag_frame))
                    snprintf(g->mag_frame, sizeof g->mag_frame, "%s", g->frame);
            }
        } else {
            /* The other sensor types with one message each. */
            static const struct {
                const char *type;
                sensim_msg_kind kind;
            } kinds[] = {{"gnss", SENSIM_MSG_NAVSATFIX}, {"lidar", SENSIM_MSG_POINTCLOUD2}, {"camera", SENSIM_MSG_IMAGE}};
            size_t i = 0;
            while (i < sizeof kinds / sizeof kinds[0] && strcmp(type, kinds[i].type))
                i++;
            if (i == sizeof kinds / sizeof kinds[0])
                return sensim_error(SENSIM_EUNSUPPORTED, "%s: %s: sensors of type '%s' have no ROS message sensim "
                                    "writes (imu, gnss, lidar, camera and /ground_truth do)", file, path,
                                    type[0] ? type : "?");
            g->kind = kinds[i].kind;
        }
    }
    snprintf(g->type, sizeof g->type, "%s", ros2 ? sensim_msg_ros2_type(g->kind) : sensim_msg_ros1_type(g->kind));
    char t[400];
    snprintf(t, sizeof t, "%s/t", path);
    /* The stamps of every message: through the one validator first. */
    sensim_status st = sensim_log_check_time(log, t, &g->n);
    if (st)
        return st;
    g->group = path;
    return SENSIM_OK;
}

/* A topic of group i (its own or its magnetic field's) that group j <= i
 * also writes (a group's magnetic field on its own topic included), or NULL. */
static const char *topic_clash(const group_out *g, size_t i, size_t *j)
{
    for (*j = 0; *j <= i; ++*j) {
        const group_out *a = &g[i], *b = &g[*j];
        const int before = *j < i;
        if (before && !strcmp(a->topic, b->topic))
            return a->topic;
        if (a->mag && (!strcmp(a->mag_topic, b->topic) || (before && b->mag && !strcmp(a->mag_topic, b->mag_topic))))
            return a->mag_topic;
        if (before && b->mag && !strcmp(a->topic, b->mag_topic))
            return a->topic;
    }
    return NULL;
}

int cli_export_bag(int argc, char **argv)
{
    const char *verb = "export", *out = NULL, *in = NULL, *format = NULL, *topic = NULL;
    char groups[MAX_GROUPS][256];
    size_t ng = 0;
    const cli_to to[] = {CLI_STR("format", &format), CLI_STR("output", &out), CLI_STR("topic", &topic), {0}};
    int c;
    cli_parser op;
    cli_parse_begin_to(&op, &cli_export_bag_spec, to, argc, argv);
    while ((c = cli_parse_next(&op)) > 0) { /* -g, the one option not in `to` */
        if (ng == MAX_GROUPS)
            return cli_usage_error(verb, "more than %d groups", MAX_GROUPS);
        snprintf(groups[ng++], sizeof groups[0], "%s%s", optarg[0] == '/' ? "" : "/sensors/", optarg);
    }
    if (c)
        return cli_parse_exit(c);
    if ((c = cli_parse_operand(verb, argc, argv, &in)))
        return c;
    sensim_bag_format fmt;
    if (!format || !strcmp(format, "bag"))
        fmt = SENSIM_BAG_ROS1;
    else if (!strcmp(format, "mcap"))
        fmt = SENSIM_BAG_MCAP;
    else if (!strcmp(format, "db3"))
        fmt = SENSIM_BAG_DB3;
    else
        return cli_usage_error(verb, "--format '%s': expected bag, mcap or db3 here", format);
    if (!in)
        return cli_usage_error(verb, "which log? (sensim export LOG.h5 -g GROUP --format %s -o OUT)",
                               format ? format : "bag");
    if (!ng)
        return cli_usage_error(verb, "-g GROUP is required (/sensors/NAME or /ground_truth)");
    if (topic && ng != 1)
        return cli_usage_error(verb, "--topic names the topic of a single group");
    if (!out)
        return cli_usage_error(verb, "-o/--output is required");

    int rc = CLI_FAIL;
    sensim_status st = SENSIM_OK;
    group_out g[MAX_GROUPS];
    memset(g, 0, sizeof g);
    ex x = {.enc = fmt == SENSIM_BAG_ROS1 ? SENSIM_ENC_ROS1 : SENSIM_ENC_CDR};
    sensim_log *log = sensim_log_open(in);
    if (!log)
        goto done;
    x.log = log;
    for (size_t i = 0; i < ng; i++) {
        if (topic)
            snprintf(g[i].topic, sizeof g[i].topic, "%s", topic);
        if ((st = describe(log, groups[i], &g[i], fmt != SENSIM_BAG_ROS1)))
            goto done;
        size_t j;
        const char *clash = topic_clash(g, i, &j);
        if (clash) {
            rc = cli_usage_error(verb, "%s and %s would both be topic '%s'", g[j].group, g[i].group, clash);
            goto done;
        }
    }
    if (!(x.t = malloc(BLOCK * sizeof *x.t))) {
        sensim_error(SENSIM_ENOMEM, "out of memory");
        goto done;
    }
    if (!(x.w = sensim_bag_writer_create(out, fmt, SENSIM_BAG_COMPRESS_NONE)))
        goto done;
    for (size_t i = 0; i < ng; i++)
        if ((st = sensim_bag_writer_add_topic(x.w, g[i].topic, g[i].type, "", &g[i].topic_id)) ||
            (g[i].mag && (st = sensim_bag_writer_add_topic(x.w, g[i].mag_topic,
                                                           fmt != SENSIM_BAG_ROS1
                                                               ? sensim_msg_ros2_type(SENSIM_MSG_MAGNETIC_FIELD)
                                                               : sensim_msg_ros1_type(SENSIM_MSG_MAGNETIC_FIELD),
                                                           "", &g[i].mag_topic_id))))
            goto done;
    for (size_t i = 0; i < ng && !st; i++) {
        switch (g[i].kind) {
        case SENSIM_MSG_IMU:
        case SENSIM_MSG_MAGNETIC_FIELD: st = export_imu(&x, &g[i]); break;
        case SENSIM_MSG_NAVSATFIX: st = export_gnss(&x, &g[i]); break;
        case SENSIM_MSG_POINTCLOUD2: st = export_lidar(&x, &g[i]); break;
        case SENSIM_MSG_IMAGE: st = export_camera(&x, &g[i]); break;
        default: st = export_gt(&x, &g[i]); break;
        }
        if (st && !strstr(sensim_last_error(), in))
            sensim_error_prefix(st, "%s", in);
    }
    if (st || (st = sensim_bag_writer_commit(x.w)))
        goto done;
    for (size_t i = 0; i < ng; i++) {
        fprintf(stderr, "sensim export: %s -> %s (%s): %zu messages\n", g[i].group, g[i].topic, g[i].type, g[i].n);
        if (g[i].mag)
            fprintf(stderr, "sensim export: %s -> %s (%s): %zu messages\n", g[i].group, g[i].mag_topic,
                    fmt != SENSIM_BAG_ROS1 ? sensim_msg_ros2_type(SENSIM_MSG_MAGNETIC_FIELD)
                                           : sensim_msg_ros1_type(SENSIM_MSG_MAGNETIC_FIELD),
                    g[i].n);
    }
    rc = CLI_OK;
done:
    if (rc == CLI_FAIL)
        cli_fail_lib(verb);
    sensim_bag_writer_close(x.w);
    sensim_msg_buf_free(&x.buf);
    free(x.t);
    sensim_log_close(log);
    return rc;
}
