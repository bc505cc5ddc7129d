/* One VEPD test from a sensim HDF5 log (DESIGN.md layout): the judge's
 * estimate under /estimates/<name>/ and the ground truth. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "sensim/log.h"
#include "sensim/metrics.h"

/* Rows of /ground_truth/velocity read at a time. */
#define VEL_BLOCK 65536

static sensim_status read_vec(const sensim_log *log, const char *d, size_t cols, double **out, size_t *n)
{
    /* Times go through the one validator (sensim_tcheck) first. */
    const char *slash = strrchr(d, '/');
    sensim_status st = slash && !strcmp(slash, "/t") ? sensim_log_check_time(log, d, n)
                                                     : sensim_log_check_shape(log, d, cols ? 1 : 0, cols ? &cols : NULL, n);
    if (st)
        return st;
    *out = malloc((*n ? *n : 1) * (cols ? cols : 1) * sizeof **out);
    if (!*out)
        return sensim_error(SENSIM_ENOMEM, "%s: %s: out of memory", sensim_log_path(log), d);
    if (*n && (st = sensim_log_read_f64(log, d, 0, *n, *out))) {
        free(*out);
        *out = NULL;
    }
    return st;
}

/* The ground truth's times (shifted to start at 0; the shift in *t0) and
 * horizontal speeds; the velocity is read in blocks. */
static sensim_status read_truth(const sensim_log *log, const char *path, sensim_vepd_series *out, double *t0p)
{
    size_t n1, n2;
    double *vel = NULL;
    sensim_status st;
    const size_t three = 3;
    if ((st = read_vec(log, "/ground_truth/t", 0, &out->gt_t, &n1)) ||
        (st = sensim_log_check_shape(log, "/ground_truth/velocity", 1, &three, &n2)))
        goto out;
    if (n1 != n2) {
        st = sensim_error(SENSIM_EFORMAT, "%s: /ground_truth/velocity: %zu rows for %zu times", path, n2, n1);
        goto out;
    }
    if (n1 == 0) {
        st = sensim_error(SENSIM_EDATA, "%s: /ground_truth/t: empty", path);
        goto out;
    }
    out->n_gt = n1;
    /* The velocity is read in blocks: only its horizontal norm is kept. */
    size_t blk = n1 < VEL_BLOCK ? n1 : VEL_BLOCK;
    out->gt_v = malloc(n1 * sizeof *out->gt_v);
    vel = malloc(3 * blk * sizeof *vel);
    if (!out->gt_v || !vel) {
        st = sensim_error(SENSIM_ENOMEM, "%s: out of memory", path);
        goto out;
    }
    for (size_t r0 = 0; r0 < n1; r0 += blk) {
        size_t m = n1 - r0 < blk ? n1 - r0 : blk;
        if ((st = sensim_log_read_f64(log, "/ground_truth/velocity", r0, m, vel)))
            goto out;
        for (size_t i = 0; i < m; i++)
            out->gt_v[r0 + i] = hypot(vel[3 * i], vel[3 * i + 1]);
    }
    double t0 = out->gt_t[0];
    for (size_t i = 0; i < n1; i++)
        out->gt_t[i] -= t0;
    *t0p = t0;
out:
    free(vel);
    return st;
}

sensim_status sensim_vepd_read_truth(const char *path, sensim_vepd_series *out, double *t0)
{
    if (!path || !out || !t0)
        return sensim_error(SENSIM_EINVAL, "vepd log: NULL argument");
    free(out->gt_t);
    free(out->gt_v);
    out->gt_t = out->gt_v = NULL;
    out->n_gt = 0;
    sensim_log *log = sensim_log_open(path);
    if (!log)
        return sensim_last_status();
    sensim_status st = read_truth(log, path, out, t0);
    if (st) {
        free(out->gt_t);
        free(out->gt_v);
        out->gt_t = out->gt_v = NULL;
        out->n_gt = 0;
    }
    sensim_log_close(log);
    return st;
}

sensim_status sensim_vepd_read_log(const char *path, const char *estimate, sensim_vepd_series *out)
{
    if (!path || !out)
        return sensim_error(SENSIM_EINVAL, "vepd log: NULL argument");
    memset(out, 0, sizeof *out);
    sensim_log *log = sensim_log_open(path);
    if (!log)
        return sensim_last_status();
    char **names = NULL, g[600], d[700];
    size_t nn = 0, n1, n2;
    sensim_status st = SENSIM_OK;
    if (estimate) {
        snprintf(g, sizeof g, "/estimates/%.500s", estimate);
        if (!sensim_log_exists(log, g)) {
            st = sensim_error(SENSIM_ENOTFOUND, "%s: no estimate %s", path, g);
            goto done;
        }
    } else {
        if (!sensim_log_exists(log, "/estimates")) {
            st = sensim_error(SENSIM_ENOTFOUND, "%s: no /estimates group (run sensim judge on the log first)", path);
            goto done;
        }
        if ((st = sensim_log_list(log, "/estimates", &names, &nn)))
            goto done;
        if (nn != 1) {
            st = sensim_error(SENSIM_EINVAL, "%s: /estimates holds %zu estimates: name the one to score", path, nn);
            goto done;
        }
        snprintf(g, sizeof g, "/estimates/%.500s", names[0]);
    }
    snprintf(d, sizeof d, "%s/t", g);
    if ((st = read_vec(log, d, 0, &out->est_t, &n1)))
        goto done;
    snprintf(d, sizeof d, "%s/speed", g);
    if ((st = read_vec(log, d, 0, &out->est_v, &n2)))
        goto done;
    if (n1 != n2) {
        st = sensim_error(SENSIM_EFORMAT, "%s: %s: %zu speeds for %zu times", path, d, n2, n1);
        goto done;
    }
    out->n_est = n1;
    double t0;
    if ((st = read_truth(log, path, out, &t0)))
        goto done;
    for (size_t i = 0; i < out->n_est; i++)
        out->est_t[i] -= t0;
done:
    if (st)
        sensim_vepd_series_free(out);
    sensim_log_free_names(names, nn);
    sensim_log_close(log);
    return st;
}
