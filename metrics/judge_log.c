/* A log as the judge's input (sensim judge, sensim sim2real): finding the
 * IMU and GNSS of a log, checking their datasets, the aligned start from the
 * ground truth, and reading the samples in blocks. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sensim/judge.h"
#include "sensim/log.h"
#include "../lib/base_internal.h"

struct sensim_judge_log {
    const sensim_log *log;
    char imu[512], gnss[512]; /* the sensor groups */
    char it[520], iw[560], isf[560], gt[520], genu[560], gcov[580];
    size_t n_imu, n_gnss;
    int has_cov;
    double scratch[SENSIM_JUDGE_LOG_BLOCK * 9]; /* a block of 9 columns */
    void (*progress)(void *ctx, const char *part, double fraction);
    void *progress_ctx;
};

/* The sensor of a type: the named one (checked), or the only one. */
static sensim_status find_sensor(const sensim_log *log, const char *type, const char *want, char *group, size_t size)
{
    const char *path = sensim_log_path(log);
    if (want) {
        snprintf(group, size, "/sensors/%s", want);
        if (!sensim_log_exists(log, group))
            return sensim_error(SENSIM_ENOTFOUND, "%s: no sensor %s", path, group);
        return SENSIM_OK;
    }
    char **names = NULL;
    size_t n = 0, found = 0;
    sensim_status st;
    if (sensim_log_exists(log, "/sensors") && (st = sensim_log_list(log, "/sensors", &names, &n)))
        return st;
    for (size_t i = 0; i < n; i++) {
        char g[512], *t = NULL;
        snprintf(g, sizeof g, "/sensors/%s", names[i]);
        if (sensim_log_has_attr(log, g, "type") && !sensim_log_get_attr_string(log, g, "type", &t) &&
            !strcmp(t, type)) {
            if (!found++)
                snprintf(group, size, "%s", g);
        }
        free(t);
    }
    /* Logs from elsewhere (imported, converted) may lack the type attribute:
     * then a group named after the type (or gps for GNSS) is the sensor. */
    for (size_t i = 0; i < n && found == 0; i++) {
        char g[512];
        snprintf(g, sizeof g, "/sensors/%s", names[i]);
        if ((!strcmp(names[i], type) || (!strcmp(type, "gnss") && !strcmp(names[i], "gps"))) &&
            !sensim_log_has_attr(log, g, "type")) {
            snprintf(group, size, "%s", g);
            found = 1;
        }
    }
    sensim_log_free_names(names, n);
    if (found == 0)
        return sensim_error(SENSIM_ENOTFOUND,
                            "%s: no %s sensor under /sensors (a group with attribute type=\"%s\", or one named %s%s); "
                            "name it with --%s NAME",
                            path, type, type, type, !strcmp(type, "gnss") ? " or gps" : "", type);
    if (found > 1)
        return sensim_error(SENSIM_ENOTFOUND, "%s: %zu %s sensors under /sensors: choose one with --%s NAME", path,
                            found, type, !strcmp(type, "imu") ? "imu" : "gnss");
    return SENSIM_OK;
}

/* Heading and velocity from the ground truth at time t (nearest sample at
 * or after t, else the last): the "aligned start" of a vehicle that knows
 * where it points. The times are searched block by block. */
static sensim_status align_from_gt(const sensim_log *log, double t, double *scratch,
                                   double state[SENSIM_JUDGE_NSTATE])
{
    const size_t three = 3, four = 4;
    size_t n, n2, n3, n4, k = 0;
    sensim_status st = sensim_log_check_shape(log, "/ground_truth/t", 0, NULL, &n);
    if (!st)
        st = sensim_log_check_shape(log, "/ground_truth/orientation", 1, &four, &n2);
    if (!st)
        st = sensim_log_check_shape(log, "/ground_truth/velocity", 1, &three, &n3);
    if (!st)
        st = sensim_log_check_shape(log, "/ground_truth/position", 1, &three, &n4);
    if (!st && (n == 0 || n2 != n || n3 != n || n4 != n))
        st = sensim_error(SENSIM_EFORMAT, "%s: /ground_truth: datasets of different lengths",
                          sensim_log_path(log));
    for (size_t r0 = 0, found = 0; !st && !found && r0 < n; r0 += SENSIM_JUDGE_LOG_BLOCK) {
        size_t m = n - r0 < SENSIM_JUDGE_LOG_BLOCK ? n - r0 : SENSIM_JUDGE_LOG_BLOCK;
        if ((st = sensim_log_read_f64(log, "/ground_truth/t", r0, m, scratch)))
            break;
        for (size_t i = 0; i < m && !found; i++) {
            k = r0 + i;
            found = !(k + 1 < n && scratch[i] < t);
        }
    }
    double q[4], v[3], p[3];
    if (!st)
        st = sensim_log_read_f64(log, "/ground_truth/orientation", k, 1, q);
    if (!st)
        st = sensim_log_read_f64(log, "/ground_truth/velocity", k, 1, v);
    if (!st)
        st = sensim_log_read_f64(log, "/ground_truth/position", k, 1, p);
    if (!st) {
        /* yaw of (w, x, y, z) rotating body into ENU */
        state[4] = atan2(2 * (q[0] * q[3] + q[1] * q[2]), 1 - 2 * (q[2] * q[2] + q[3] * q[3]));
        state[0] = p[0];
        state[1] = p[1];
        state[2] = v[0];
        state[3] = v[1];
    }
    return st;
}

static sensim_status io_read_imu(void *ctx, size_t row0, size_t n, double *t, double *w, double *fx, double *fy)
{
    sensim_judge_log *io = ctx;
    double *v = io->scratch;
    sensim_status st = sensim_log_read_f64(io->log, io->it, row0, n, t);
    if (!st && !(st = sensim_log_read_f64(io->log, io->iw, row0, n, v)))
        for (size_t k = 0; k < n; k++)
            w[k] = v[3 * k + 2];
    if (!st && !(st = sensim_log_read_f64(io->log, io->isf, row0, n, v)))
        for (size_t k = 0; k < n; k++) {
            fx[k] = v[3 * k];
            fy[k] = v[3 * k + 1];
        }
    if (!st && io->progress)
        io->progress(io->progress_ctx, "IMU and GNSS", io->n_imu ? (double)(row0 + n) / (double)io->n_imu : 1.0);
    return st;
}

static sensim_status io_read_gnss(void *ctx, size_t row0, size_t n, double *t, double *enu2, double *cov9)
{
    sensim_judge_log *io = ctx;
    double *v = io->scratch;
    sensim_status st = sensim_log_read_f64(io->log, io->gt, row0, n, t);
    if (!st && !(st = sensim_log_read_f64(io->log, io->genu, row0, n, v)))
        for (size_t k = 0; k < n; k++) {
            enu2[2 * k] = v[3 * k];
            enu2[2 * k + 1] = v[3 * k + 1];
        }
    if (!st && cov9)
        st = sensim_log_read_f64(io->log, io->gcov, row0, n, cov9);
    return st;
}

/* The datasets of both sensors, their shapes and lengths. */
static sensim_status check_sensors(sensim_judge_log *io)
{
    const sensim_log *log = io->log;
    const char *in = sensim_log_path(log);
    char *ig = io->imu, *gg = io->gnss;
    const size_t three = 3, nine = 9;
    size_t ni, n2, n3, ng = 0, ng2, ng3;
    sensim_status st;
    snprintf(io->it, sizeof io->it, "%s/t", ig);
    snprintf(io->iw, sizeof io->iw, "%s/angular_velocity", ig);
    snprintf(io->isf, sizeof io->isf, "%s/specific_force", ig);
    snprintf(io->gt, sizeof io->gt, "%s/t", gg);
    snprintf(io->genu, sizeof io->genu, "%s/enu", gg);
    snprintf(io->gcov, sizeof io->gcov, "%s/position_covariance", gg);
    /* Every t the output carries is checked (sensim_tcheck), the ground
     * truth copied beside the estimates included. */
    double lla[3];
    size_t ngt;
    if (sensim_log_exists(log, "/ground_truth") && (st = sensim_gt_check(log, &ngt, lla)))
        return st;
    if ((st = sensim_log_check_time(log, io->it, &ni)) ||
        (st = sensim_log_check_shape(log, io->iw, 1, &three, &n2)) ||
        (st = sensim_log_check_shape(log, io->isf, 1, &three, &n3)))
        return st;
    if (n2 != ni || n3 != ni)
        return sensim_error(SENSIM_EFORMAT, "%s: %s: t, angular_velocity and specific_force differ in length (%zu, %zu, %zu)",
                            in, ig, ni, n2, n3);
    if ((st = sensim_log_check_time(log, io->gt, &ng)) ||
        (st = sensim_log_check_shape(log, io->genu, 1, &three, &ng2)))
        return st;
    if (ng2 != ng)
        return sensim_error(SENSIM_EFORMAT, "%s: %s/enu has %zu rows, t has %zu", in, gg, ng2, ng);
    io->has_cov = sensim_log_exists(log, io->gcov);
    if (io->has_cov) {
        if ((st = sensim_log_check_shape(log, io->gcov, 1, &nine, &ng3)))
            return st;
        if (ng3 != ng)
            return sensim_error(SENSIM_EFORMAT, "%s: %s has %zu rows, t has %zu", in, io->gcov, ng3, ng);
    }
    io->n_imu = ni;
    io->n_gnss = ng;
    return SENSIM_OK;
}

sensim_judge_log *sensim_judge_log_open(const sensim_log *log, const char *imu_name, const char *gnss_name, int align,
                                        sensim_judge_options *o)
{
    sensim_judge_log *io = sensim_new_(sizeof *io, NULL);
    if (!io)
        return NULL;
    io->log = log;
    sensim_status st;
    if ((st = find_sensor(log, "imu", imu_name, io->imu, sizeof io->imu)) ||
        (st = find_sensor(log, "gnss", gnss_name, io->gnss, sizeof io->gnss)) || (st = check_sensors(io)))
        goto fail;
    if (align && io->n_imu && sensim_log_exists(log, "/ground_truth")) {
        double t0;
        if ((st = sensim_log_read_f64(log, io->it, 0, 1, &t0)) ||
            (st = align_from_gt(log, t0, io->scratch, o->initial_state)))
            goto fail;
        o->have_initial = 1;
        /* Known heading and velocity, position from the receiver's accuracy. */
        o->initial_sd[0] = o->initial_sd[1] = 1.0;
    }
    return io;
fail:
    sensim_judge_log_close(io);
    return NULL;
}

void sensim_judge_log_close(sensim_judge_log *j) { free(j); }

const char *sensim_judge_log_imu(const sensim_judge_log *j) { return j->imu; }
const char *sensim_judge_log_gnss(const sensim_judge_log *j) { return j->gnss; }
size_t sensim_judge_log_imu_rows(const sensim_judge_log *j) { return j->n_imu; }

sensim_status sensim_judge_log_stream(sensim_judge_log *j, const sensim_judge_options *o, sensim_judge_sink sink,
                                      void *sink_ctx, sensim_judge_output *counts,
                                      void (*progress)(void *ctx, const char *part, double fraction),
                                      void *progress_ctx)
{
    j->progress = progress;
    j->progress_ctx = progress_ctx;
    sensim_judge_source src = {j->n_imu, j->n_gnss, j->has_cov, j, io_read_imu, io_read_gnss};
    sensim_status st = sensim_judge_stream(o, &src, SENSIM_JUDGE_LOG_BLOCK, sink, sink_ctx, counts);
    j->progress = NULL;
    if (st)
        sensim_error_prefix(st, "%s", sensim_log_path(j->log));
    return st;
}

/* ---- a judged log written ---- */

/* The estimate datasets the blocks are appended to. */
typedef struct judge_out {
    double *v;               /* a block's velocities as [n,3] */
    sensim_log_dset *out[5]; /* t, velocity, speed, position, yaw */
} judge_out;

static sensim_status judge_write_block(void *ctx, const sensim_judge_output *b)
{
    judge_out *io = ctx;
    double *v = io->v;
    for (size_t k = 0; k < b->n; k++) {
        v[3 * k] = b->velocity[2 * k];
        v[3 * k + 1] = b->velocity[2 * k + 1];
        v[3 * k + 2] = 0; /* planar filter */
    }
    sensim_status st = sensim_log_dset_append(io->out[0], b->t, b->n);
    if (!st)
        st = sensim_log_dset_append(io->out[1], v, b->n);
    if (!st)
        st = sensim_log_dset_append(io->out[2], b->speed, b->n);
    if (!st)
        st = sensim_log_dset_append(io->out[3], b->position, b->n);
    if (!st)
        st = sensim_log_dset_append(io->out[4], b->yaw, b->n);
    return st;
}

/* The output log up to the estimate's datasets: what the input holds
 * copied, /estimates/NAME created (not there already). */
static sensim_status judge_open_output(const sensim_log *log, sensim_log *w, const char *eg, judge_out *io)
{
    static const char *const what[5] = {"t", "velocity", "speed", "position", "yaw"};
    static const char *const units[5] = {"s", "m/s", "m/s", "m", "rad"};
    const size_t three = 3, two = 2;
    sensim_status st;
    if ((sensim_log_exists(log, "/ground_truth") && (st = sensim_log_copy(w, log, "/ground_truth"))) ||
        (st = sensim_log_copy(w, log, "/sensors")) ||
        (sensim_log_exists(log, "/estimates") && (st = sensim_log_copy(w, log, "/estimates"))))
        return st;
    if (sensim_log_exists(w, eg))
        return sensim_error(SENSIM_EINVAL, "%s: %s exists already: choose another --name", sensim_log_path(log), eg);
    char d[640];
    for (int k = 0; k < 5; k++) {
        snprintf(d, sizeof d, "%s/%s", eg, what[k]);
        const size_t *tail = k == 1 ? &three : k == 3 ? &two : NULL;
        if (!(io->out[k] = sensim_log_dset_create(w, d, SENSIM_F64, tail ? 1 : 0, tail, units[k], 0)))
            return sensim_last_status();
    }
    return SENSIM_OK;
}

/* The estimate's attributes: how it was made. */
static sensim_status judge_attrs(sensim_log *w, const char *eg, const sensim_judge_log *j, const sensim_judge_options *o)
{
    const double rates[4] = {o->rate_hz, o->gyro_sigma, o->accel_sigma, o->gnss_sigma};
    sensim_status st;
    if ((st = sensim_log_set_attr_string(w, eg, "judge", sensim_judge_mode_name(o->mode))) ||
        (st = sensim_log_set_attr_string(w, eg, "imu", j->imu)) ||
        (st = sensim_log_set_attr_string(w, eg, "gnss", j->gnss)) ||
        (st = sensim_log_set_attr_f64(w, eg, "rate_hz", &rates[0], 1)) ||
        (st = sensim_log_set_attr_f64(w, eg, "gyro_sigma", &rates[1], 1)) ||
        (st = sensim_log_set_attr_f64(w, eg, "accel_sigma", &rates[2], 1)))
        return st;
    return sensim_log_set_attr_f64(w, eg, "gnss_sigma", &rates[3], 1);
}

sensim_status sensim_judge_log_write(const char *in_path, const char *out_path, const char *imu_name,
                                     const char *gnss_name, int align, sensim_judge_options *o, const char *name,
                                     sensim_judge_output *counts,
                                     void (*progress)(void *ctx, const char *part, double fraction),
                                     void *progress_ctx)
{
    sensim_log *log = sensim_log_open(in_path), *w = NULL;
    sensim_judge_log *j = NULL;
    judge_out io = {0};
    sensim_judge_output res = {0};
    char eg[520];
    snprintf(eg, sizeof eg, "/estimates/%.500s", name);
    sensim_status st = SENSIM_OK;
    if (!log || !(j = sensim_judge_log_open(log, imu_name, gnss_name, align, o)))
        st = sensim_last_status();
    else if (!(io.v = malloc(SENSIM_JUDGE_LOG_BLOCK * 3 * sizeof *io.v)))
        st = sensim_error(SENSIM_ENOMEM, "out of memory");
    else if (!(w = sensim_log_create(out_path, "sensim judge")))
        st = sensim_last_status();
    if (!st && !(st = judge_open_output(log, w, eg, &io)))
        st = sensim_judge_log_stream(j, o, judge_write_block, &io, &res, progress, progress_ctx);
    for (int k = 0; k < 5; k++)
        sensim_log_dset_close(io.out[k]);
    if (!st && !(st = judge_attrs(w, eg, j, o))) {
        st = sensim_log_commit(w);
        w = NULL;
    }
    if (!st && counts)
        *counts = res;
    sensim_log_close(w);
    sensim_judge_log_close(j);
    sensim_log_close(log);
    free(io.v);
    return st;
}
