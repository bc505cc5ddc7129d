/* The judge's input side shared by `sensim judge` and `sensim sim2real`:
 * finding the IMU and GNSS of a log, checking their datasets, the aligned
 * start from the ground truth, and reading the samples in blocks. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "judge_log.h"
#include "progress.h"

/* The sensor of a type: the named one (checked), or the only one. */
static int find_sensor(const char *verb, const sensim_log *log, const char *type, const char *want, char *group,
                       size_t size)
{
    const char *path = sensim_log_path(log);
    if (want) {
        snprintf(group, size, "/sensors/%s", want);
        if (!sensim_log_exists(log, group))
            return cli_fail(verb, "%s: no sensor %s", path, group);
        return CLI_OK;
    }
    char **names = NULL;
    size_t n = 0, found = 0;
    if (sensim_log_exists(log, "/sensors") && sensim_log_list(log, "/sensors", &names, &n))
        return cli_fail_lib(verb);
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
        return cli_fail(verb,
                        "%s: no %s sensor under /sensors (a group with attribute type=\"%s\", or one named %s%s); "
                        "name it with --%s NAME",
                        path, type, type, type, !strcmp(type, "gnss") ? " or gps" : "", type);
    if (found > 1)
        return cli_fail(verb, "%s: %zu %s sensors under /sensors: choose one with --%s NAME", path, found, type,
                        !strcmp(type, "imu") ? "imu" : "gnss");
    return CLI_OK;
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
    for (size_t r0 = 0, found = 0; !st && !found && r0 < n; r0 += CLI_JUDGE_BLOCK) {
        size_t m = n - r0 < CLI_JUDGE_BLOCK ? n - r0 : CLI_JUDGE_BLOCK;
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
    cli_judge_input *io = ctx;
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
        cli_progress_update(io->progress, "IMU and GNSS", io->n_imu ? (double)(row0 + n) / (double)io->n_imu : 1.0);
    return st;
}

static sensim_status io_read_gnss(void *ctx, size_t row0, size_t n, double *t, double *enu2, double *cov9)
{
    cli_judge_input *io = ctx;
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

int cli_judge_prepare(const char *verb, const sensim_log *log, const char *imu_name, const char *gnss_name, int align,
                      sensim_judge_options *o, cli_judge_input *io)
{
    memset(io, 0, sizeof *io);
    io->log = log;
    const char *in = sensim_log_path(log);
    char *ig = io->imu, *gg = io->gnss;
    const size_t three = 3, nine = 9;
    size_t ni, n2, n3, ng = 0, ng2, ng3;
    sensim_status st;
    int rc;
    if ((rc = find_sensor(verb, log, "imu", imu_name, ig, sizeof io->imu)) ||
        (rc = find_sensor(verb, log, "gnss", gnss_name, gg, sizeof io->gnss)))
        return rc;
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
        goto fail;
    if ((st = sensim_log_check_time(log, io->it, &ni)) ||
        (st = sensim_log_check_shape(log, io->iw, 1, &three, &n2)) ||
        (st = sensim_log_check_shape(log, io->isf, 1, &three, &n3)))
        goto fail;
    if (n2 != ni || n3 != ni) {
        st = sensim_error(SENSIM_EFORMAT, "%s: %s: t, angular_velocity and specific_force differ in length (%zu, %zu, %zu)",
                          in, ig, ni, n2, n3);
        goto fail;
    }
    if ((st = sensim_log_check_time(log, io->gt, &ng)) ||
        (st = sensim_log_check_shape(log, io->genu, 1, &three, &ng2)))
        goto fail;
    if (ng2 != ng) {
        st = sensim_error(SENSIM_EFORMAT, "%s: %s/enu has %zu rows, t has %zu", in, gg, ng2, ng);
        goto fail;
    }
    io->has_cov = sensim_log_exists(log, io->gcov);
    if (io->has_cov) {
        if ((st = sensim_log_check_shape(log, io->gcov, 1, &nine, &ng3)))
            goto fail;
        if (ng3 != ng) {
            st = sensim_error(SENSIM_EFORMAT, "%s: %s has %zu rows, t has %zu", in, io->gcov, ng3, ng);
            goto fail;
        }
    }
    if (!(io->scratch = malloc(CLI_JUDGE_BLOCK * 9 * sizeof *io->scratch))) {
        st = sensim_error(SENSIM_ENOMEM, "out of memory");
        goto fail;
    }
    if (align && ni && sensim_log_exists(log, "/ground_truth")) {
        double t0;
        if ((st = sensim_log_read_f64(log, io->it, 0, 1, &t0)) ||
            (st = align_from_gt(log, t0, io->scratch, o->initial_state)))
            goto fail;
        o->have_initial = 1;
        /* Known heading and velocity, position from the receiver's accuracy. */
        o->initial_sd[0] = o->initial_sd[1] = 1.0;
    }
    io->n_imu = ni;
    io->n_gnss = ng;
    return CLI_OK;
fail:
    free(io->scratch);
    io->scratch = NULL;
    return cli_fail_lib(verb);
}

void cli_judge_input_free(cli_judge_input *io)
{
    if (io) {
        free(io->scratch);
        io->scratch = NULL;
    }
}

sensim_status cli_judge_stream(cli_judge_input *io, const sensim_judge_options *o, sensim_judge_sink sink, void *ctx,
                               sensim_judge_output *counts)
{
    sensim_judge_source src = {io->n_imu, io->n_gnss, io->has_cov, io, io_read_imu, io_read_gnss};
    sensim_status st = sensim_judge_stream(o, &src, CLI_JUDGE_BLOCK, sink, ctx, counts);
    if (st)
        sensim_error_prefix(st, "%s", sensim_log_path(io->log));
    return st;
}
