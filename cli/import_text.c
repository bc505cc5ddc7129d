/* `sensim import FILE...`: EuRoC, TUM and CSV recordings and KITTI/PLY/PCD
 * point clouds into one new log (see import_text.h). */
#include "import_text.h"
#include "../lib/base_internal.h"

#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include "cli.h"
#include "sensim/log.h"
#include "sensim/pointcloud.h"

#define BLOCK 4096
#define NS_PER_S 1000000000LL

typedef enum { IN_TEXT, IN_KITTI, IN_PLY_PCD } in_kind;

static const char *ext_of(const char *path)
{
    const char *slash = strrchr(path, '/'), *dot = strrchr(path, '.');
    return dot && (!slash || dot > slash) ? dot + 1 : "";
}

static in_kind kind_of(const char *path, const char *format)
{
    if (format) {
        if (!strcmp(format, "kitti"))
            return IN_KITTI;
        if (!strcmp(format, "ply") || !strcmp(format, "pcd"))
            return IN_PLY_PCD;
        return IN_TEXT;
    }
    const char *e = ext_of(path);
    if (!strcasecmp(e, "bin"))
        return IN_KITTI;
    if (!strcasecmp(e, "ply") || !strcasecmp(e, "pcd"))
        return IN_PLY_PCD;
    return IN_TEXT;
}

/* The time origin of the log: stamps from a clock that counts from the
 * epoch (1e8 s on) are stored as seconds after the first whole second, so
 * that `t` keeps sub-nanosecond resolution in a double and exports give the
 * exact integer ns back (t_ns = time_epoch_ns + round(t * 1e9)). */
static int64_t choose_epoch(int64_t first_ns)
{
    if (first_ns < (int64_t)1e8 * NS_PER_S)
        return 0;
    return first_ns / NS_PER_S * NS_PER_S;
}

static sensim_status tag_group(sensim_log *log, const char *g, const char *src, const char *fmt, int64_t epoch,
                               const char *unit)
{
    sensim_status st;
    if ((st = sensim_log_set_attr_string(log, g, "source", src)) ||
        (st = sensim_log_set_attr_string(log, g, "source_format", fmt)) ||
        (st = sensim_log_set_attr_i64(log, g, "time_epoch_ns", &epoch, 1)))
        return st;
    return unit ? sensim_log_set_attr_string(log, g, "source_time_unit", unit) : SENSIM_OK;
}

/* ---- IMU rows to /sensors/NAME ---- */

static sensim_status write_imu(sensim_log *log, sensim_text_reader *r, const char *path, const char *name,
                               int64_t epoch, size_t *rows)
{
    char g[320], p[400];
    snprintf(g, sizeof g, "/sensors/%s", name);
    if (sensim_log_exists(log, g))
        return sensim_error(SENSIM_EINVAL, "%s: group %s is already written by another input (use --name)", path, g);
    unsigned fields = sensim_text_fields(r);
    static const char *const qname[3] = {"angular_velocity", "specific_force", "magnetic_field"};
    static const char *const qunit[3] = {"rad/s", "m/s^2", "T"};
    static const unsigned qbit[3] = {SENSIM_TF_GYRO, SENSIM_TF_ACCEL, SENSIM_TF_MAG};
    sensim_log_dset *dt = NULL, *dq[3] = {NULL, NULL, NULL};
    int64_t *tn = malloc(BLOCK * sizeof *tn);
    double *v = malloc(BLOCK * SENSIM_TF_N * sizeof *v), *t = malloc(BLOCK * sizeof *t), *q = malloc(BLOCK * 3 * sizeof *q);
    sensim_status st = SENSIM_OK;
    if (!tn || !v || !t || !q) {
        st = sensim_error(SENSIM_ENOMEM, "out of memory");
        goto done;
    }
    if ((st = sensim_log_group(log, g)))
        goto done;
    snprintf(p, sizeof p, "%s/t", g);
    if (!(dt = sensim_log_dset_create(log, p, SENSIM_F64, 0, NULL, "s", 0))) {
        st = sensim_last_status();
        goto done;
    }
    size_t three = 3;
    for (int k = 0; k < 3; k++)
        if (fields & qbit[k]) {
            snprintf(p, sizeof p, "%s/%s", g, qname[k]);
            if (!(dq[k] = sensim_log_dset_create(log, p, SENSIM_F64, 1, &three, qunit[k], 0))) {
                st = sensim_last_status();
                goto done;
            }
        }
    int64_t first = 0, last = 0;
    size_t total = 0, n;
    while (!(st = sensim_text_read(r, tn, v, BLOCK, &n)) && n) {
        if (!total)
            first = tn[0];
        last = tn[n - 1];
        for (size_t i = 0; i < n; i++)
            t[i] = (double)(tn[i] - epoch) / 1e9;
        if ((st = sensim_log_dset_append(dt, t, n)))
            goto done;
        for (int k = 0; k < 3; k++) {
            if (!dq[k])
                continue;
            for (size_t i = 0; i < n; i++)
                for (int a = 0; a < 3; a++)
                    q[3 * i + a] = v[i * SENSIM_TF_N + 3 * k + a];
            if ((st = sensim_log_dset_append(dq[k], q, n)))
                goto done;
        }
        total += n;
    }
    if (st)
        goto done;
    if (total < 2) {
        st = sensim_error(SENSIM_EDATA, "%s: %zu data rows, need at least 2", path, total);
        goto done;
    }
    /* The mean rate over the recording: what inject checks rate_hz against. */
    double rate = (double)(total - 1) * 1e9 / (double)(last - first);
    if ((st = sensim_log_set_attr_string(log, g, "type", "imu")) ||
        (st = sensim_log_set_attr_f64(log, g, "rate_hz", &rate, 1)))
        goto done;
    *rows = total;
done:
    sensim_log_dset_close(dt);
    for (int k = 0; k < 3; k++)
        sensim_log_dset_close(dq[k]);
    SENSIM_FREE_ALL(tn, v, t, q);
    return st;
}

/* ---- pose rows to /ground_truth ---- */

static sensim_status write_gt(sensim_log *log, sensim_text_reader *r, const char *path, const double origin[3],
                              int64_t epoch, size_t *rows)
{
    if (sensim_log_exists(log, "/ground_truth"))
        return sensim_error(SENSIM_EINVAL, "%s: /ground_truth is already written by another input", path);
    unsigned fields = sensim_text_fields(r);
    int have_v = (fields & SENSIM_TF_VEL) == SENSIM_TF_VEL;
    sensim_gt_writer *w = NULL;
    sensim_pose_gt *pg = NULL;
    sensim_gt_block b = {0};
    int64_t *tn = malloc(BLOCK * sizeof *tn);
    double *v = malloc(BLOCK * SENSIM_TF_N * sizeof *v), *t = malloc(BLOCK * sizeof *t);
    double *p = malloc(BLOCK * 3 * sizeof *p), *q = malloc(BLOCK * 4 * sizeof *q), *vel = malloc(BLOCK * 3 * sizeof *vel);
    sensim_status st = SENSIM_OK;
    if (!tn || !v || !t || !p || !q || !vel) {
        st = sensim_error(SENSIM_ENOMEM, "out of memory");
        goto done;
    }
    if ((st = sensim_gt_block_init(&b, BLOCK + 2)) || !(pg = sensim_pose_gt_create(have_v)) ||
        !(w = sensim_gt_writer_create(log, origin))) {
        st = st ? st : sensim_last_status();
        goto done;
    }
    size_t n;
    while (!(st = sensim_text_read(r, tn, v, BLOCK, &n)) && n) {
        for (size_t i = 0; i < n; i++) {
            const double *row = v + i * SENSIM_TF_N;
            t[i] = (double)(tn[i] - epoch) / 1e9;
            memcpy(p + 3 * i, row + SENSIM_TF_PX, 3 * sizeof *p);
            memcpy(q + 4 * i, row + SENSIM_TF_QW, 4 * sizeof *q);
            memcpy(vel + 3 * i, row + SENSIM_TF_VX, 3 * sizeof *vel);
        }
        b.n = 0;
        if ((st = sensim_pose_gt_push(pg, n, t, p, q, have_v ? vel : NULL, &b)) || (st = sensim_gt_writer_append(w, &b)))
            goto done;
    }
    if (st)
        goto done;
    b.n = 0;
    if ((st = sensim_pose_gt_finish(pg, &b))) {
        st = sensim_error_prefix(st, "%s", path);
        goto done;
    }
    if ((st = sensim_gt_writer_append(w, &b)))
        goto done;
    *rows = sensim_text_rows(r);
done:
    sensim_gt_writer_close(w);
    sensim_pose_gt_destroy(pg);
    sensim_gt_block_free(&b);
    free(tn);
    free(v);
    free(t);
    free(p);
    free(q);
    free(vel);
    return st;
}

/* ---- point clouds to /sensors/NAME (lidar) ---- */

/* KITTI raw's timestamps.txt writes "2011-09-26 13:02:25.964389445" (UTC). */
static int parse_datetime(const char *s, int64_t *ns)
{
    int Y, M, D, h, m, n = 0;
    if (sscanf(s, "%d-%d-%d %d:%d:%n", &Y, &M, &D, &h, &m, &n) != 5 || !n)
        return -1;
    const char *sec = s + n;
    int64_t sns;
    if (sensim_text_parse_stamp(sec, SENSIM_TIME_S, &sns) || sns < 0 || sns >= 61 * NS_PER_S)
        return -1;
    struct tm tm = {0};
    tm.tm_year = Y - 1900;
    tm.tm_mon = M - 1;
    tm.tm_mday = D;
    tm.tm_hour = h;
    tm.tm_min = m;
    time_t tt = timegm(&tm);
    if (tt == (time_t)-1)
        return -1;
    *ns = (int64_t)tt * NS_PER_S + sns;
    return 0;
}

/* Reads one stamp per line (numbers in `unit`, seconds by default, or KITTI
 * raw date-times); exactly `want` of them. */
static sensim_status read_times(const char *path, sensim_time_unit unit, size_t want, int64_t *ns)
{
    FILE *f = fopen(path, "r");
    if (!f)
        return sensim_error(SENSIM_EIO, "%s: cannot open the scan times", path);
    char *line = NULL;
    size_t cap = 0, lineno = 0, k = 0;
    sensim_status st = SENSIM_OK;
    while (getline(&line, &cap, f) >= 0) {
        lineno++;
        char *s = line;
        while (isspace((unsigned char)*s))
            s++;
        size_t len = strlen(s);
        while (len && isspace((unsigned char)s[len - 1]))
            s[--len] = '\0';
        if (!*s || *s == '#')
            continue;
        if (k == want) {
            st = sensim_error(SENSIM_EDATA, "%s:%zu: more stamps than the %zu scans", path, lineno, want);
            break;
        }
        if (parse_datetime(s, &ns[k]) && sensim_text_parse_stamp(s, unit == SENSIM_TIME_AUTO ? SENSIM_TIME_S : unit, &ns[k])) {
            st = sensim_error(SENSIM_EFORMAT, "%s:%zu: '%s' is neither a number nor a date-time (YYYY-MM-DD hh:mm:ss.s)",
                              path, lineno, s);
            break;
        }
        if (k && ns[k] <= ns[k - 1]) {
            st = sensim_error(SENSIM_EDATA, "%s:%zu: stamp does not increase", path, lineno);
            break;
        }
        k++;
    }
    if (!st && k != want)
        st = sensim_error(SENSIM_EDATA, "%s: %zu stamps for %zu scans", path, k, want);
    free(line);
    fclose(f);
    return st;
}

static sensim_status write_clouds(sensim_log *log, char **files, int nfiles, const import_text_opts *o,
                                  const char *name, const int64_t *scan_ns, int64_t epoch)
{
    char g[320], p[400];
    snprintf(g, sizeof g, "/sensors/%s", name);
    if (sensim_log_exists(log, g))
        return sensim_error(SENSIM_EINVAL, "%s: group %s is already written by another input (use --name)", files[0], g);
    sensim_log_dset *dp = NULL, *dpol[3] = {NULL, NULL, NULL};
    uint64_t *off = calloc((size_t)nfiles + 1, sizeof *off);
    double *t = malloc((size_t)nfiles * sizeof *t);
    float *pol = NULL;
    sensim_status st = SENSIM_OK;
    int any_intensity = 0;
    if (!off || !t) {
        st = sensim_error(SENSIM_ENOMEM, "out of memory");
        goto done;
    }
    size_t four = 4;
    static const char *const polar[3] = {"range", "azimuth", "elevation"};
    static const char *const punit[3] = {"m", "rad", "rad"};
    if ((st = sensim_log_group(log, g)))
        goto done;
    snprintf(p, sizeof p, "%s/points", g);
    if (!(dp = sensim_log_dset_create(log, p, SENSIM_F32, 1, &four, "m", 0))) {
        st = sensim_last_status();
        goto done;
    }
    for (int c = 0; c < 3; c++) {
        snprintf(p, sizeof p, "%s/%s", g, polar[c]);
        if (!(dpol[c] = sensim_log_dset_create(log, p, SENSIM_F32, 0, NULL, punit[c], 0))) {
            st = sensim_last_status();
            goto done;
        }
    }
    for (int k = 0; k < nfiles; k++) {
        float *xyzi = NULL;
        size_t n = 0;
        int has_i = 1;
        sensim_cloud_format cf;
        if (kind_of(files[k], o->format) == IN_KITTI)
            st = sensim_kitti_read(files[k], &xyzi, &n);
        else
            st = sensim_cloud_read(files[k], &xyzi, &n, &has_i, &cf);
        if (st)
            goto done;
        any_intensity |= has_i;
        float *np = realloc(pol, (n ? n : 1) * 3 * sizeof *pol);
        if (!np) {
            free(xyzi);
            st = sensim_error(SENSIM_ENOMEM, "%s: out of memory", files[k]);
            goto done;
        }
        pol = np;
        /* The polar fields of a rendered scan, from the Cartesian point (the
         * same convention as models/lidar.c: azimuth atan2(y, x), elevation
         * asin(z / r)). */
        for (size_t i = 0; i < n; i++) {
            double x = xyzi[4 * i], y = xyzi[4 * i + 1], z = xyzi[4 * i + 2], r = sqrt(x * x + y * y + z * z);
            pol[i] = (float)r;
            pol[n + i] = (float)atan2(y, x);
            pol[2 * n + i] = (float)(r > 0 ? asin(z / r) : 0.0);
        }
        if (n && ((st = sensim_log_dset_append(dp, xyzi, n)) || (st = sensim_log_dset_append(dpol[0], pol, n)) ||
                  (st = sensim_log_dset_append(dpol[1], pol + n, n)) ||
                  (st = sensim_log_dset_append(dpol[2], pol + 2 * n, n)))) {
            free(xyzi);
            goto done;
        }
        free(xyzi);
        off[k + 1] = off[k] + n;
        t[k] = (double)(scan_ns[k] - epoch) / 1e9;
    }
    snprintf(p, sizeof p, "%s/scan_offset", g);
    if ((st = sensim_log_write(log, p, SENSIM_U64, (size_t)nfiles + 1, 0, NULL, off, "")))
        goto done;
    snprintf(p, sizeof p, "%s/t", g);
    if ((st = sensim_log_write(log, p, SENSIM_F64, (size_t)nfiles, 0, NULL, t, "s")))
        goto done;
    double rate = o->rate > 0 ? o->rate
                  : nfiles > 1 ? (double)(nfiles - 1) * 1e9 / (double)(scan_ns[nfiles - 1] - scan_ns[0])
                               : 0;
    if ((st = sensim_log_set_attr_string(log, g, "type", "lidar")) ||
        (rate > 0 && (st = sensim_log_set_attr_f64(log, g, "rate_hz", &rate, 1))))
        goto done;
    if (!any_intensity)
        st = sensim_log_set_attr_string(log, g, "note", "the clouds carry no intensity: points[:, 3] is 0");
done:
    sensim_log_dset_close(dp);
    for (int c = 0; c < 3; c++)
        sensim_log_dset_close(dpol[c]);
    SENSIM_FREE_ALL(off, t, pol);
    return st;
}

int import_files(const char *verb, char **files, int nfiles, const char *out, const import_text_opts *o)
{
    int rc = CLI_FAIL;
    sensim_text_reader **tr = calloc((size_t)nfiles, sizeof *tr);
    char **clouds = calloc((size_t)nfiles, sizeof *clouds);
    int64_t *scan_ns = NULL;
    sensim_log *log = NULL;
    int nclouds = 0, nimu = 0;
    if (!tr || !clouds) {
        cli_fail(verb, "out of memory");
        goto done;
    }
    /* Open every text input first: header, columns and time unit problems
     * are found before anything is written. */
    int64_t first = INT64_MAX;
    for (int i = 0; i < nfiles; i++) {
        in_kind k = kind_of(files[i], o->format);
        if (k != IN_TEXT) {
            clouds[nclouds++] = files[i];
            continue;
        }
        if (!(tr[i] = sensim_text_open(files[i], &o->text))) {
            cli_fail_lib(verb);
            goto done;
        }
        if (sensim_text_get_kind(tr[i]) == SENSIM_TEXT_IMU)
            nimu++;
        if (sensim_text_first_ns(tr[i]) < first)
            first = sensim_text_first_ns(tr[i]);
    }
    if (nclouds) {
        if (!(scan_ns = malloc((size_t)nclouds * sizeof *scan_ns))) {
            cli_fail(verb, "out of memory");
            goto done;
        }
        if (o->times) {
            if (read_times(o->times, o->text.time_unit, (size_t)nclouds, scan_ns)) {
                cli_fail_lib(verb);
                goto done;
            }
        } else if (o->rate > 0) {
            for (int k = 0; k < nclouds; k++)
                scan_ns[k] = (int64_t)llround(k * 1e9 / o->rate);
        } else if (nclouds == 1) {
            scan_ns[0] = 0;
        } else {
            cli_fail(verb, "%d point clouds: give their times with --rate HZ or --times FILE", nclouds);
            goto done;
        }
        /* Text recordings set the time origin; clouds alone set their own. */
        if (nclouds == nfiles)
            first = scan_ns[0];
    }
    int64_t epoch = choose_epoch(first);
    if (!(log = sensim_log_create(out, o->created_by ? o->created_by : "sensim import")) ||
        sensim_log_set_attr_i64(log, "/", "time_epoch_ns", &epoch, 1)) {
        cli_fail_lib(verb);
        goto done;
    }
    for (int i = 0; i < nfiles; i++) {
        if (!tr[i])
            continue;
        size_t rows = 0;
        sensim_status st;
        const char *g;
        char gname[320];
        if (sensim_text_get_kind(tr[i]) == SENSIM_TEXT_IMU) {
            const char *name = o->name && nimu == 1 ? o->name : "imu";
            snprintf(gname, sizeof gname, "/sensors/%s", name);
            g = gname;
            st = write_imu(log, tr[i], files[i], name, epoch, &rows);
        } else {
            g = "/ground_truth";
            st = write_gt(log, tr[i], files[i], o->origin, epoch, &rows);
        }
        if (!st)
            st = tag_group(log, g, files[i], sensim_text_format_name(sensim_text_get_format(tr[i])), epoch,
                           sensim_time_unit_name(sensim_text_time_unit(tr[i])));
        if (st) {
            cli_fail_lib(verb);
            goto done;
        }
        const char *note = sensim_text_time_note(tr[i]);
        fprintf(stderr, "sensim %s: %s: %s %s, %zu rows -> %s%s%s\n", verb, files[i],
                sensim_text_format_name(sensim_text_get_format(tr[i])),
                sensim_text_get_kind(tr[i]) == SENSIM_TEXT_IMU ? "IMU" : "poses", rows, g, *note ? "; " : "", note);
    }
    if (nclouds) {
        const char *name = o->name ? o->name : "lidar";
        char g[320];
        snprintf(g, sizeof g, "/sensors/%s", name);
        if (write_clouds(log, clouds, nclouds, o, name, scan_ns, epoch) ||
            tag_group(log, g, clouds[0], o->format ? o->format : ext_of(clouds[0]), epoch, NULL)) {
            cli_fail_lib(verb);
            goto done;
        }
        fprintf(stderr, "sensim %s: %d point cloud%s -> %s\n", verb, nclouds, nclouds == 1 ? "" : "s", g);
    }
    sensim_status st = sensim_log_commit(log);
    log = NULL;
    if (st) {
        cli_fail_lib(verb);
        goto done;
    }
    rc = CLI_OK;
done:
    sensim_log_close(log);
    for (int i = 0; tr && i < nfiles; i++)
        sensim_text_close(tr[i]);
    free(tr);
    free(clouds);
    free(scan_ns);
    return rc;
}
